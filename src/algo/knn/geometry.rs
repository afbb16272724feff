//! What both kNN backends share, below both of them: the point and
//! coordinate types, the limits, the distance and candidate order, the
//! layout of the left-balanced kd-tree (implicit array, index math of the
//! level-by-level build) and the device's node record. Imports no other
//! kNN module.

use crate::element::{Element, Storable};

/// Largest `k` (and radius-search `max_count`).
pub const MAX_K: usize = 1024;
/// Largest dimension of the brute-force path.
pub const MAX_DIM: usize = 128;
/// Largest dimension of the kd-tree.
pub const MAX_TREE_DIM: usize = 16;
/// Largest point count of the kd-tree.
pub const MAX_TREE_POINTS: usize = (1 << 31) - 1;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A coordinate type: `f32` or `f64`. Sealed.
pub trait Coord:
    Element + std::ops::Add<Output = Self> + std::ops::Sub<Output = Self> + std::ops::Mul<Output = Self> + sealed::Sealed
{
    /// `self * a + b` with one rounding.
    #[doc(hidden)]
    fn fma(self, a: Self, b: Self) -> Self;
    /// The correctly rounded square root.
    #[doc(hidden)]
    fn root(self) -> Self;
    /// Neither infinite nor NaN.
    #[doc(hidden)]
    fn finite(self) -> bool;
    /// The largest finite value.
    #[doc(hidden)]
    fn largest() -> Self;
    /// The order-preserving bits (the radix sort's key order).
    #[doc(hidden)]
    fn ordered_bits(self) -> u64;
    /// The next representable value up (`up`) or down; NaN and infinities
    /// are returned as they are.
    #[doc(hidden)]
    fn step(self, up: bool) -> Self;
}

macro_rules! coord {
    ($t:ty, $u:ty, $bits:expr) => {
        impl Coord for $t {
            fn fma(self, a: Self, b: Self) -> Self {
                self.mul_add(a, b)
            }
            fn root(self) -> Self {
                self.sqrt()
            }
            fn finite(self) -> bool {
                self.is_finite()
            }
            fn largest() -> Self {
                <$t>::MAX
            }
            fn ordered_bits(self) -> u64 {
                let u = self.to_bits();
                let sign: $u = 1 << ($bits - 1);
                (if u & sign != 0 { !u } else { u | sign }) as u64
            }
            fn step(self, up: bool) -> Self {
                if !self.is_finite() {
                    return self;
                }
                if self == 0.0 {
                    let tiny = <$t>::from_bits(1);
                    return if up { tiny } else { -tiny };
                }
                let b = self.to_bits();
                // Away from zero when the step goes that way.
                if (self > 0.0) == up {
                    <$t>::from_bits(b + 1)
                } else {
                    <$t>::from_bits(b - 1)
                }
            }
        }
    };
}
coord!(f32, u32, 32);
coord!(f64, u64, 64);

/// A point: `[F; D]` with `F` a [`Coord`]. Implemented for every array of
/// `f32` or `f64`; the algorithms check `D` (1 to 128, 16 for the kd-tree).
///
/// ```
/// use cuprim::algo::knn::Point;
/// assert_eq!(<[f64; 3] as Point>::DIM, 3);
/// assert_eq!([1.0f32, 2.0].coords(), &[1.0, 2.0]);
/// ```
pub trait Point: Storable {
    /// The coordinate type.
    type Coord: Coord;
    /// The number of coordinates.
    const DIM: usize;
    /// The coordinates.
    fn coords(&self) -> &[Self::Coord];
}

impl<F: Coord, const D: usize> Point for [F; D] {
    type Coord = F;
    const DIM: usize = D;
    fn coords(&self) -> &[F] {
        self
    }
}

/// An input expression's element that is a point: a point `[F; D]` (a
/// buffer of points, a slice or a gather of one), or a coordinate (`[F;
/// 1]`), a pair (`[F; 2]`) or a triple (`[F; 3]`) of one coordinate type
/// (columns of coordinates zipped), laid out on the device as the array
/// is. What [`KdTree::build_from`](super::KdTree::build_from) and
/// [`KdTree::query_from`](super::KdTree::query_from) take. Sealed.
///
/// ```
/// use cuprim::algo::knn::PointValue;
/// assert_eq!((1.0f32, 2.0f32).point(), [1.0, 2.0]);
/// assert_eq!(0.5f64.point(), [0.5]);
/// assert_eq!([1.0f32, 2.0, 3.0, 4.0, 5.0].point(), [1.0, 2.0, 3.0, 4.0, 5.0]);
/// ```
pub trait PointValue: crate::value::Value + point_value::Sealed {
    /// The point type.
    type Point: Point;
    /// The point.
    fn point(self) -> Self::Point;
}

mod point_value {
    pub trait Sealed {}
    impl<F: super::Coord> Sealed for F {}
    impl<F: super::Coord> Sealed for (F, F) {}
    impl<F: super::Coord> Sealed for (F, F, F) {}
    impl<F: super::Coord, const D: usize> Sealed for [F; D] {}
}

impl<F: Coord, const D: usize> PointValue for [F; D] {
    type Point = [F; D];
    fn point(self) -> [F; D] {
        self
    }
}

impl<F: Coord> PointValue for F {
    type Point = [F; 1];
    fn point(self) -> [F; 1] {
        [self]
    }
}

impl<F: Coord> PointValue for (F, F) {
    type Point = [F; 2];
    fn point(self) -> [F; 2] {
        [self.0, self.1]
    }
}

impl<F: Coord> PointValue for (F, F, F) {
    type Point = [F; 3];
    fn point(self) -> [F; 3] {
        [self.0, self.1, self.2]
    }
}

/// Squared distance: an fma chain over the dimensions in order, from `+0`
/// (`kernels/knn/knn.cuh` computes the same).
#[inline]
pub(crate) fn dist2<F: Coord>(q: &[F], p: &[F]) -> F {
    let mut acc = F::zero();
    for (a, b) in q.iter().zip(p) {
        let d = *a - *b;
        acc = d.fma(d, acc);
    }
    acc
}

/// The candidate order: `(da, ia) < (db, ib)`; false whenever `da` is NaN
/// (`knn_less` in `kernels/knn/knn.cuh`).
#[inline]
pub(crate) fn less<F: Coord>(da: F, ia: u32, db: F, ib: u32) -> bool {
    da < db || (da == db && ia < ib)
}

/// The largest squared distance `t` with `sqrt(t) <= radius`: a point is
/// within the radius exactly when its squared distance is at most this, so
/// the search compares squared distances and agrees with the reported ones.
pub(crate) fn squared_bound<F: Coord>(radius: F) -> F {
    let mut t = radius * radius;
    if !t.finite() {
        // sqrt(MAX) < radius for any radius whose square overflows, so every
        // finite squared distance qualifies; +inf does only for radius +inf.
        return if radius.finite() { F::largest() } else { t };
    }
    while t.root() > radius {
        t = t.step(false);
    }
    loop {
        let up = t.step(true);
        if up.finite() && up.root() <= radius {
            t = up;
        } else {
            return t;
        }
    }
}

/// Bytes of one device tree node (`KnnNode` in `kernels/knn/knn.cuh`): the
/// coordinates, the u32 index, padded to 16.
pub(crate) fn node_bytes<P: Point>() -> usize {
    (std::mem::size_of::<P>() + 4).next_multiple_of(16)
}

/// Bytes of one device subtree box (`KnnBox` in `kernels/knn/knn.cuh`):
/// the low corner, then the high corner, padded to 16.
pub(crate) fn box_bytes<P: Point>() -> usize {
    (2 * std::mem::size_of::<P>()).next_multiple_of(16)
}

/// Full levels at the bottom of the tree whose nodes keep no box: their
/// subtrees (at most `2^BOX_FREE_LEVELS - 1` nodes, plus any nodes of the
/// partial last level) are pruned by splitting planes.
// 1: 1.496 / 8.15 / 16.2 ms against 1.555 / 9.40 / 20.3 ms with 2 and 1.564 / 11.4 / 27.4 ms with 3 free levels on uniform, clustered-away and torus-away 3-D k = 8 (1M x 1M; no boxes at all: 1.43 / 200 / 251 ms) (H100, run of ae63d3d).
pub(crate) const BOX_FREE_LEVELS: u32 = 1;

/// Nodes with a stored box when the last `free` full levels keep none:
/// node ids `0..boxed_nodes(n, free)`, the levels above them (`2^L - 1`
/// nodes, `L = floor(log2(n + 1)) - free`, 0 for small trees). Those levels
/// are full in a left-balanced tree, so every boxed node exists, and both
/// children of a boxed node exist.
pub(crate) fn boxed_nodes(n: usize, free: u32) -> usize {
    let full = usize::BITS - 1 - (n + 1).leading_zeros();
    (1usize << full.saturating_sub(free)) - 1
}

/// The lower bound the traversal prunes by: the squared distance from `q`
/// to the box `lo..=hi`, as an fma chain in dimension order of the per-axis
/// gaps (0 inside the slab). For every point `p` in the box with no NaN
/// coordinate, `box_dist2(q, lo, hi) <= dist2(q, p)`: each gap is at most
/// `|q[j] - p[j]|` (rounding is monotone) and the fma chain is monotone in
/// its terms. Never NaN for a query without NaN (a NaN gap, from an infinite
/// query coordinate on an infinite bound, counts as 0), `+inf` for an empty
/// box (`lo = +inf`, `hi = -inf`) and a finite query.
#[inline]
pub(crate) fn box_dist2<F: Coord>(q: &[F], lo: &[F], hi: &[F]) -> F {
    let zero = F::zero();
    // max(x, 0), and 0 for NaN (`knn_max0`).
    let max0 = |x: F| if x > zero { x } else { zero };
    let mut acc = zero;
    for j in 0..q.len() {
        let e = max0(lo[j] - q[j]) + max0(q[j] - hi[j]);
        acc = e.fma(e, acc);
    }
    acc
}

/// Bits of `n - 1` (0 for n <= 1): the width of a coordinate rank.
pub(crate) fn rank_bits(n: usize) -> u32 {
    if n <= 1 {
        0
    } else {
        64 - ((n - 1) as u64).leading_zeros()
    }
}

/// Levels of a left-balanced tree of n nodes.
pub(crate) fn depth(n: usize) -> u32 {
    usize::BITS - n.leading_zeros()
}

/// Bits of the largest tag at `level`: node ids there are below 2^(level+1) - 1.
pub(crate) fn tag_bits(level: u32, n: usize) -> u32 {
    let max_tag = ((1u64 << (level + 1)) - 2).min(n as u64 - 1);
    64 - max_tag.leading_zeros()
}

/// Nodes in the subtree of node `m` of a left-balanced tree of `n` nodes
/// (`knn_subtree_size` in `kernels/knn/build.cu`).
fn subtree_size(mut m: u64, n: u64) -> u64 {
    let (mut size, mut width) = (0u64, 1u64);
    while m < n {
        size += (n - m).min(width);
        m = 2 * m + 1;
        width *= 2;
    }
    size
}

/// The new tag of the point at sorted position `i` whose tag is `tag`, at `level`
/// (see `cuprim_knn_level` in `kernels/knn/build.cu`).
pub(crate) fn next_tag(tag: u64, i: u64, level: u32, n: u64) -> u64 {
    let first = (1u64 << level) - 1;
    if tag < first {
        return tag;
    }
    let (mut start, mut m, mut width) = (first, first, tag - first);
    while m < n {
        start += (n - m).min(width);
        m = 2 * m + 1;
        width *= 2;
    }
    let local = i - start;
    let left = subtree_size(2 * tag + 1, n);
    match local.cmp(&left) {
        std::cmp::Ordering::Less => 2 * tag + 1,
        std::cmp::Ordering::Equal => tag,
        std::cmp::Ordering::Greater => 2 * tag + 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squared_bound_matches_sqrt() {
        for &r in &[0.0f32, 1e-30, 0.1, 1.0, 2.0, 3.3, 1e19, 1e30, f32::MAX] {
            let b = squared_bound(r);
            assert!(b.sqrt() <= r, "r={r} b={b}");
            let up = b.step(true);
            assert!(up.sqrt() > r || up.is_infinite(), "r={r} b={b}");
        }
        assert_eq!(squared_bound(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn tree_shape_helpers() {
        assert_eq!(depth(0), 0);
        assert_eq!(depth(1), 1);
        assert_eq!(depth(1 << 20), 21);
        assert_eq!(rank_bits(1 << 20), 20);
        assert_eq!(rank_bits((1 << 20) + 1), 21);
        assert_eq!(tag_bits(0, 100), 0);
        assert_eq!(tag_bits(3, 100), 4);
        assert_eq!(node_bytes::<[f32; 3]>(), 16);
        assert_eq!(node_bytes::<[f64; 3]>(), 32);
        assert_eq!(box_bytes::<[f32; 3]>(), 32);
        assert_eq!(box_bytes::<[f32; 2]>(), 16);
        assert_eq!(boxed_nodes(0, 2), 0);
        assert_eq!(boxed_nodes(6, 2), 0);
        assert_eq!(boxed_nodes(7, 2), 1);
        assert_eq!(boxed_nodes(7, 1), 3);
        assert_eq!(boxed_nodes(1 << 20, 2), (1 << 18) - 1);
        assert_eq!(boxed_nodes((1 << 20) - 1, 2), (1 << 18) - 1);
    }
}
