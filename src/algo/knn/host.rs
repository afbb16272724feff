//! kNN on the host backend: the same left-balanced kd-tree as the device
//! builds (node for node), the same traversal rules, and brute force.
//! Distances and the (squared distance, index) order are the ones of
//! [`geometry`](super::geometry), as in `kernels/knn/knn.cuh`, so both
//! backends return the same bits.

use super::geometry::{depth, dist2, less, next_tag, rank_bits, Coord, Point};
use crate::element::Element;
use rayon::prelude::*;

/// The k best (squared distance, index) pairs seen, ascending; empty slots
/// are (+inf, u32::MAX).
struct List<F> {
    d: Vec<F>,
    i: Vec<u32>,
}

impl<F: Coord> List<F> {
    fn new(k: usize) -> Self {
        List {
            d: vec![F::highest(); k],
            i: vec![u32::MAX; k],
        }
    }

    #[inline]
    fn worst(&self) -> F {
        self.d[self.d.len() - 1]
    }

    #[inline]
    fn offer(&mut self, d2: F, idx: u32) {
        let k = self.d.len();
        if !less(d2, idx, self.d[k - 1], self.i[k - 1]) {
            return;
        }
        let mut at = k - 1;
        while at > 0 && less(d2, idx, self.d[at - 1], self.i[at - 1]) {
            self.d[at] = self.d[at - 1];
            self.i[at] = self.i[at - 1];
            at -= 1;
        }
        self.d[at] = d2;
        self.i[at] = idx;
    }

    fn write(&self, out_d: &mut [F], out_i: &mut [u32]) {
        for j in 0..self.d.len() {
            out_d[j] = self.d[j].root();
            out_i[j] = self.i[j];
        }
    }
}

fn missing<F: Coord>(out_d: &mut [F], out_i: &mut [u32]) {
    out_d.fill(F::highest());
    out_i.fill(u32::MAX);
}

/// Builds the tree: node `j` is `(point, original index)`. Same algorithm
/// and the same result as `kernels/knn/build.cu` with the radix sort.
pub(crate) fn build<P: Point>(points: &[P]) -> Vec<(P, u32)> {
    let n = points.len();
    if n == 0 {
        return Vec::new();
    }
    let dims = P::DIM;
    // Rank of every point along every dimension: the position in the stable
    // sort by the coordinate's order-preserving bits.
    let ranks: Vec<Vec<u32>> = (0..dims)
        .map(|d| {
            let mut order: Vec<(u64, u32)> = points
                .par_iter()
                .enumerate()
                .map(|(i, p)| (p.coords()[d].ordered_bits(), i as u32))
                .collect();
            order.par_sort_unstable();
            let mut rank = vec![0u32; n];
            for (j, &(_, i)) in order.iter().enumerate() {
                rank[i as usize] = j as u32;
            }
            rank
        })
        .collect();
    let rb = rank_bits(n);
    let mut pairs: Vec<(u64, u32)> = (0..n).map(|i| (ranks[0][i] as u64, i as u32)).collect();
    let n64 = n as u64;
    for level in 0..depth(n).saturating_sub(1) {
        // Keys are unique (ranks are), so an unstable sort is the stable one.
        pairs.par_sort_unstable_by_key(|&(k, _)| k);
        let next = &ranks[(level as usize + 1) % dims];
        pairs.par_iter_mut().enumerate().for_each(|(i, (key, pid))| {
            let tag = next_tag(*key >> rb, i as u64, level, n64);
            *key = (tag << rb) | next[*pid as usize] as u64;
        });
    }
    let mut nodes = vec![(points[0], 0u32); n];
    for &(key, pid) in &pairs {
        nodes[(key >> rb) as usize] = (points[pid as usize], pid);
    }
    nodes
}

/// The traversal of `kernels/knn/query.cu` for one query. With `bound`
/// (radius search), only points with squared distance `<= bound` count and
/// pruning is by the bound; returns how many points are within it.
fn search<P: Point>(nodes: &[(P, u32)], q: &[P::Coord], list: &mut List<P::Coord>, bound: Option<P::Coord>) -> u32 {
    let n = nodes.len();
    let dims = P::DIM;
    let mut stack: Vec<(P::Coord, usize)> = Vec::with_capacity(depth(n) as usize);
    let mut count = 0u32;
    let mut node = 0usize;
    let mut dim = 0usize;
    loop {
        while node < n {
            let (p, idx) = &nodes[node];
            let c = p.coords();
            let d2 = dist2(q, c);
            match bound {
                Some(b) => {
                    if d2 <= b {
                        count += 1;
                        list.offer(d2, *idx);
                    }
                }
                None => list.offer(d2, *idx),
            }
            let diff = q[dim] - c[dim];
            let diff2 = diff * diff;
            let near = 2 * node + if diff > P::Coord::zero() { 2 } else { 1 };
            let far = if near & 1 == 1 { near + 1 } else { near - 1 };
            let limit = bound.unwrap_or_else(|| list.worst());
            if far < n && not_beyond(diff2, limit) {
                stack.push((diff2, far));
            }
            node = near;
            dim = if dim + 1 == dims { 0 } else { dim + 1 };
        }
        let mut found = false;
        while let Some((d2m, m)) = stack.pop() {
            let limit = bound.unwrap_or_else(|| list.worst());
            if not_beyond(d2m, limit) {
                node = m;
                found = true;
                break;
            }
        }
        if !found {
            return count;
        }
        let level = (usize::BITS - 1 - (node + 1).leading_zeros()) as usize;
        dim = level % dims;
    }
}

/// `!(plane > limit)`: true unless the plane is strictly farther; a NaN
/// plane (a NaN split coordinate) is never pruned.
#[inline]
fn not_beyond<F: Coord>(plane: F, limit: F) -> bool {
    plane.partial_cmp(&limit) != Some(std::cmp::Ordering::Greater)
}

fn has_nan<F: Coord>(q: &[F]) -> bool {
    q.iter().any(|x| x.is_nan())
}

/// k nearest tree points of each query: rows of `k` in `out_d` / `out_i`.
pub(crate) fn query<P: Point>(nodes: &[(P, u32)], queries: &[P], k: usize, out_d: &mut [P::Coord], out_i: &mut [u32]) {
    out_d
        .par_chunks_mut(k)
        .zip(out_i.par_chunks_mut(k))
        .zip(queries.par_iter())
        .for_each(|((rd, ri), q)| {
            let q = q.coords();
            if nodes.is_empty() || has_nan(q) {
                return missing(rd, ri);
            }
            let mut list = List::new(k);
            search(nodes, q, &mut list, None);
            list.write(rd, ri);
        });
}

/// Radius search: the (at most `k`) nearest points with squared distance
/// `<= bound`, and how many there are.
pub(crate) fn radius<P: Point>(
    nodes: &[(P, u32)],
    queries: &[P],
    k: usize,
    bound: P::Coord,
    out_d: &mut [P::Coord],
    out_i: &mut [u32],
    counts: &mut [u32],
) {
    out_d
        .par_chunks_mut(k)
        .zip(out_i.par_chunks_mut(k))
        .zip(counts.par_iter_mut())
        .zip(queries.par_iter())
        .for_each(|(((rd, ri), count), q)| {
            let q = q.coords();
            if nodes.is_empty() || has_nan(q) {
                *count = 0;
                return missing(rd, ri);
            }
            let mut list = List::new(k);
            *count = search(nodes, q, &mut list, Some(bound));
            list.write(rd, ri);
        });
}

/// Brute force: every query against every point.
pub(crate) fn brute<P: Point>(points: &[P], queries: &[P], k: usize, out_d: &mut [P::Coord], out_i: &mut [u32]) {
    out_d
        .par_chunks_mut(k)
        .zip(out_i.par_chunks_mut(k))
        .zip(queries.par_iter())
        .for_each(|((rd, ri), q)| {
            let q = q.coords();
            if has_nan(q) {
                return missing(rd, ri);
            }
            let mut list = List::new(k);
            for (i, p) in points.iter().enumerate() {
                list.offer(dist2(q, p.coords()), i as u32);
            }
            list.write(rd, ri);
        });
}
