//! kNN on the host backend: the same left-balanced kd-tree as the device
//! builds (node for node, with the same subtree boxes), the same traversal,
//! all-k-nearest, and brute force.
//! Distances and the (squared distance, index) order are the ones of
//! [`geometry`](super::geometry), as in `kernels/knn/knn.cuh`, so both
//! backends return the same bits.

use super::geometry::{box_dist2, boxed_nodes, depth, dist2, less, next_tag, rank_bits, Coord, Point};
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

/// A tree on the host: node `j` is `(point, original index)`; node `j <
/// boxes.len()` has the box (lo, hi) of its subtree's points.
#[derive(Clone, Debug)]
pub(crate) struct HostTree<P> {
    pub nodes: Vec<(P, u32)>,
    pub boxes: Vec<(P, P)>,
}

/// Builds the tree with boxes above the last `box_free` full levels. Same
/// algorithm and the same result as `kernels/knn/build.cu` with the radix
/// sort.
pub(crate) fn build<P: Point>(points: &[P], box_free: u32) -> HostTree<P> {
    let nodes = build_nodes(points);
    let boxes = build_boxes(&nodes, boxed_nodes(nodes.len(), box_free));
    HostTree { nodes, boxes }
}

fn build_nodes<P: Point>(points: &[P]) -> Vec<(P, u32)> {
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

/// The empty box: lo = +inf, hi = -inf.
fn empty_box<P: Point>(any: P) -> (P, P) {
    let (mut lo, mut hi) = (any, any);
    let (l, h): (&mut [P::Coord], &mut [P::Coord]) = (
        bytemuck::cast_slice_mut(std::slice::from_mut(&mut lo)),
        bytemuck::cast_slice_mut(std::slice::from_mut(&mut hi)),
    );
    l.fill(P::Coord::highest());
    h.fill(P::Coord::lowest());
    (lo, hi)
}

/// Widens `b` by `p` unless `p` has a NaN coordinate (`knn_box_add`).
fn box_add<P: Point>(b: &mut (P, P), p: &P) {
    let c = p.coords();
    if has_nan(c) {
        return;
    }
    let lo: &mut [P::Coord] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut b.0));
    for (x, &v) in lo.iter_mut().zip(c) {
        if v < *x {
            *x = v;
        }
    }
    let hi: &mut [P::Coord] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut b.1));
    for (x, &v) in hi.iter_mut().zip(c) {
        if v > *x {
            *x = v;
        }
    }
}

/// The boxes of nodes `0..nb`, bottom-up a level at a time (`cuprim_knn_boxes`).
fn build_boxes<P: Point>(nodes: &[(P, u32)], nb: usize) -> Vec<(P, P)> {
    if nb == 0 {
        return Vec::new();
    }
    let n = nodes.len();
    let mut boxes = vec![empty_box(nodes[0].0); nb];
    let levels = usize::BITS - nb.leading_zeros();
    for lvl in (0..levels).rev() {
        let first = (1usize << lvl) - 1;
        let (upper, lower) = boxes.split_at_mut(2 * first + 1);
        upper[first..].par_iter_mut().enumerate().for_each(|(t, b)| {
            let m = first + t;
            box_add(b, &nodes[m].0);
            for c in [2 * m + 1, 2 * m + 2] {
                if c < nb {
                    let cb = lower[c - (2 * first + 1)];
                    box_add_box(b, &cb);
                } else {
                    let (mut lo, mut w) = (c, 1usize);
                    while lo < n {
                        for node in &nodes[lo..(lo + w).min(n)] {
                            box_add(b, &node.0);
                        }
                        lo = 2 * lo + 1;
                        w *= 2;
                    }
                }
            }
        });
    }
    boxes
}

/// Widens `b` by the box `c` (empty boxes widen nothing).
fn box_add_box<P: Point>(b: &mut (P, P), c: &(P, P)) {
    let (clo, chi) = (c.0.coords(), c.1.coords());
    let lo: &mut [P::Coord] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut b.0));
    for (x, &v) in lo.iter_mut().zip(clo) {
        if v < *x {
            *x = v;
        }
    }
    let hi: &mut [P::Coord] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut b.1));
    for (x, &v) in hi.iter_mut().zip(chi) {
        if v > *x {
            *x = v;
        }
    }
}

/// The traversal of `kernels/knn/query.cu` (`knn_walk`, box-ordered: the
/// child with the nearer box first; the device's default orders by plane,
/// which visits in another order but returns the same rows) for one query
/// without NaN over a non-empty tree: offers every visited node but the
/// one of index `skip`. With `bound` (radius search), only points with
/// squared distance `<= bound` count and pruning is by the bound. Returns
/// (points within the bound, nodes visited).
fn search<P: Point>(tree: &HostTree<P>, q: &[P::Coord], skip: u32, list: &mut List<P::Coord>, bound: Option<P::Coord>) -> (u32, u32) {
    let (nodes, boxes) = (&tree.nodes, &tree.boxes);
    let (n, nb) = (nodes.len(), boxes.len());
    let dims = P::DIM;
    let zero = P::Coord::zero();
    let mut stack: Vec<(P::Coord, usize)> = Vec::with_capacity(depth(n) as usize);
    let (mut count, mut visits) = (0u32, 0u32);
    let (mut node, mut dim, mut lb) = (0usize, 0usize, zero);
    loop {
        loop {
            visits += 1;
            let (p, idx) = &nodes[node];
            let c = p.coords();
            let d2 = dist2(q, c);
            if *idx != skip {
                match bound {
                    Some(b) => {
                        if d2 <= b {
                            count += 1;
                            list.offer(d2, *idx);
                        }
                    }
                    None => list.offer(d2, *idx),
                }
            }
            let left = 2 * node + 1;
            if left >= n {
                break;
            }
            let limit = bound.unwrap_or_else(|| list.worst());
            let (bl, br, right_first) = if left < nb {
                let (l, r) = (&boxes[left], &boxes[left + 1]);
                let bl = box_dist2(q, l.0.coords(), l.1.coords());
                let br = box_dist2(q, r.0.coords(), r.1.coords());
                (bl, br, br < bl)
            } else {
                let diff = q[dim] - c[dim];
                let d2 = diff * diff;
                // A NaN plane bounds nothing: the parent's bound.
                let plane = if d2 > lb { d2 } else { lb };
                let right_first = diff > zero;
                if right_first {
                    (plane, lb, true)
                } else {
                    (lb, plane, false)
                }
            };
            let (near, far, b_near, b_far) = if right_first {
                (left + 1, left, br, bl)
            } else {
                (left, left + 1, bl, br)
            };
            if far < n && not_beyond(b_far, limit) {
                stack.push((b_far, far));
            }
            if near >= n || b_near > limit {
                break;
            }
            node = near;
            lb = b_near;
            dim = if dim + 1 == dims { 0 } else { dim + 1 };
        }
        let mut found = false;
        while let Some((b, m)) = stack.pop() {
            let limit = bound.unwrap_or_else(|| list.worst());
            if not_beyond(b, limit) {
                node = m;
                lb = b;
                found = true;
                break;
            }
        }
        if !found {
            return (count, visits);
        }
        let level = (usize::BITS - 1 - (node + 1).leading_zeros()) as usize;
        dim = level % dims;
    }
}

/// `!(bound > limit)`: true unless the bound is strictly farther.
#[inline]
fn not_beyond<F: Coord>(plane: F, limit: F) -> bool {
    plane.partial_cmp(&limit) != Some(std::cmp::Ordering::Greater)
}

fn has_nan<F: Coord>(q: &[F]) -> bool {
    q.iter().any(|x| x.is_nan())
}

/// k nearest tree points of each query: rows of `k` in `out_d` / `out_i`.
pub(crate) fn query<P: Point>(tree: &HostTree<P>, queries: &[P], k: usize, out_d: &mut [P::Coord], out_i: &mut [u32]) {
    out_d
        .par_chunks_mut(k)
        .zip(out_i.par_chunks_mut(k))
        .zip(queries.par_iter())
        .for_each(|((rd, ri), q)| {
            let q = q.coords();
            if tree.nodes.is_empty() || has_nan(q) {
                return missing(rd, ri);
            }
            let mut list = List::new(k);
            search(tree, q, u32::MAX, &mut list, None);
            list.write(rd, ri);
        });
}

/// Nodes the k-nearest traversal visits for each of `queries` (0 for a
/// query with a NaN coordinate), the cost estimate of `KnnMethod::Auto`.
pub(crate) fn visits<P: Point>(tree: &HostTree<P>, queries: &[P], k: usize) -> Vec<u32> {
    queries
        .par_iter()
        .map(|q| {
            let q = q.coords();
            if tree.nodes.is_empty() || has_nan(q) {
                return 0;
            }
            search(tree, q, u32::MAX, &mut List::new(k), None).1
        })
        .collect()
}

/// All-k-nearest: row `i` (of `k`) gets the k nearest points to point `i`
/// other than itself; a point with a NaN coordinate gets a missing row.
/// Works through the nodes in tree order, like `cuprim_knn_all`.
pub(crate) fn all<P: Point>(tree: &HostTree<P>, k: usize, out_d: &mut [P::Coord], out_i: &mut [u32]) {
    let rows: Vec<(u32, Vec<P::Coord>, Vec<u32>)> = tree
        .nodes
        .par_iter()
        .map(|(p, idx)| {
            let (mut rd, mut ri) = (vec![P::Coord::zero(); k], vec![0u32; k]);
            let q = p.coords();
            if has_nan(q) {
                missing(&mut rd, &mut ri);
            } else {
                let mut list = List::new(k);
                search(tree, q, *idx, &mut list, None);
                list.write(&mut rd, &mut ri);
            }
            (*idx, rd, ri)
        })
        .collect();
    for (idx, rd, ri) in rows {
        let at = idx as usize * k;
        out_d[at..at + k].copy_from_slice(&rd);
        out_i[at..at + k].copy_from_slice(&ri);
    }
}

/// Radius search: the (at most `k`) nearest points with squared distance
/// `<= bound`, and how many there are.
pub(crate) fn radius<P: Point>(
    tree: &HostTree<P>,
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
            if tree.nodes.is_empty() || has_nan(q) {
                *count = 0;
                return missing(rd, ri);
            }
            let mut list = List::new(k);
            *count = search(tree, q, u32::MAX, &mut list, Some(bound)).0;
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
