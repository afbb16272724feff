//! k-nearest-neighbour search: [`nearest_neighbors`] for one-off queries,
//! [`KdTree`] to build once and query many times ([`KdTree::query`],
//! [`KdTree::nearest`], [`KdTree::radius_search`], and every point's own
//! neighbours with [`KdTree::all_nearest`]).
//!
//! Points and queries are `DeviceVec<[F; D]>` (or views of one) with `F`
//! `f32` or `f64`: D from 1 to 128 through brute force, 1 to 16 through the
//! kd-tree.
//!
//! ```
//! use cuprim::prelude::*;
//! let dev = Device::default()?;
//! let points = DeviceVec::from_slice(&dev, &[[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [5.0, 5.0, 5.0]])?;
//! let queries = DeviceVec::from_slice(&dev, &[[0.9f32, 0.1, 0.0]])?;
//! let nn = nearest_neighbors(&points, &queries, 2)?;
//! assert_eq!(nn.indices.to_vec()?, vec![1, 0]);
//! let d = nn.distances.to_vec()?;
//! assert!((d[0] - 0.02f32.sqrt()).abs() < 1e-6 && (d[1] - 0.82f32.sqrt()).abs() < 1e-6);
//! # Ok::<(), cuprim::Error>(())
//! ```
//!
//! # Results
//! A query gets a row of `k` (index, distance) pairs in
//! [`Neighbors::indices`] and [`Neighbors::distances`] (`q x k`,
//! row-major, rows in the caller's query order). Distances are Euclidean
//! (not squared), in the coordinate type. A row is sorted by distance, ties
//! to the lower point index. With fewer than `k` eligible points the rest of
//! the row is `u32::MAX` / `+inf`.
//!
//! The squared distance is computed as an fma chain over the dimensions in
//! order (`acc = fma(q[j] - p[j], q[j] - p[j], acc)` from `+0`), the order
//! is by (squared distance, index), and the reported distance is the
//! correctly rounded square root. Every path (kd-tree or brute force, host
//! or GPU) computes exactly that, so all of them return the same bits.
//!
//! # NaN and infinities
//! A candidate whose squared distance is NaN is never a neighbour: a point
//! with a NaN coordinate is never returned, and a query with a NaN
//! coordinate gets an all-missing row. A point at an infinite distance (but
//! not NaN) is a neighbour at distance `+inf`, and sorts before the missing
//! slots (its index is below `u32::MAX`).
//!
//! # Algorithms
//! **kd-tree.** A left-balanced kd-tree with one point per node, stored as
//! an implicit array (children of node `i` at `2i+1` and `2i+2`, Brown 2015
//! ch. 7); the split dimension of level `L` is `L % D`. It is built on the
//! device level by level (Wald 2022): every point carries the id of the
//! subtree it is in; each coordinate is first replaced by its rank along
//! its dimension (one radix sort per dimension), then per level one radix
//! sort of `(subtree, rank)` keys packed into `log2(n) + level + 1` bits
//! orders each subtree along the level's dimension, and one kernel moves
//! every point to its left or right child subtree or makes it the node.
//! `log2(n)` sorts of a few passes each; no atomics, deterministic. Last,
//! the nodes of the upper levels (all but the last full level) get the
//! tight bounding box of their subtree's points, one kernel per level from
//! the bottom up (a box costs twice a point's coordinates; about half the
//! nodes have one).
//!
//! Queries run one thread each, depth first, with a lower bound of the
//! squared distance for every subtree: the distance to its box where it has
//! one (the gaps per axis, fma-chained in dimension order like the
//! distance, so the bound never exceeds a rounded point distance), else
//! the larger of the parent's bound and, on the far side, the squared
//! distance to the splitting plane. Where the children have boxes, both
//! are loaded beside the node and the nearer is visited first (elsewhere
//! the child on the query's side of the plane; the 3-D heap, the heap in
//! the output row and radius search order by the plane throughout, with a
//! box check on entry); the other waits on a stack in shared memory with
//! its bound. A subtree is skipped only when its bound is strictly greater
//! than the current k-th candidate, so ties (equal distance, lower index)
//! are never lost. Boxes make queries far from dense data cheap: a plane
//! through empty space prunes nothing, the box of a distant cluster prunes
//! all of it. The candidate list is a
//! sorted array in registers for `k <= 16`, a max-heap in the thread's
//! columns of shared memory up to 64 (sizes 1, 4, 8, 16, 32, 64 compiled on
//! demand) and a max-heap in the output row beyond that.
//! With a register list, a walk that passes a budget of visits (a query
//! near the centre of a sphere of points is about equally far from all of
//! them) is given up and queued; a second kernel then takes the queued
//! queries a block each, its threads walking the subtrees below one level
//! in turn, pruning by the least k-th candidate any of them holds, and
//! merging their lists. So a few long walks do not hold the whole launch,
//! and the rows are the same.
//! Large query sets are first put in Morton order along the tree's
//! bounding box ([`QueryOrder`]), so neighbouring threads walk similar paths.
//! [`KdTree::all_nearest`] (all-k-nearest, Brown 2015 ch. 7) runs the same
//! traversal from every node's point in tree order (in-order: thread `t`
//! finds the node at in-order position `t` in `log2(n)` steps of closed-form
//! subtree sizes, so no sort is needed), the point itself excluded by index.
//!
//! **Brute force.** Blocks of queries (one per thread) stream tiles of
//! points through shared memory; for many points per query the points are
//! split into chunks whose candidate lists are merged by a second kernel.
//!
//! [`KnnMethod::Auto`] estimates both costs: brute force, `q x n x (D + 2)`;
//! the tree, its build (`n x (D + depth)` sorting passes) plus `q x` the
//! nodes a query visits. Without building anything it takes brute force
//! for `D > 16`, at most 4096 points, `points x queries <= 2^26`, or when
//! brute force costs no more than the build and `depth` visits per query.
//! Otherwise it builds the tree, runs 1024 evenly spaced queries through
//! it counting the nodes they visit, and finishes with whichever of the
//! tree and brute force the measured mean predicts faster (so inputs a tree
//! cannot prune go to brute force). Either way the result is the same.
//!
//! # Expressions
//! [`KdTree::build_from`] and [`KdTree::query_from`] take the points or
//! queries as an input expression ([`crate::expr`]) whose elements are
//! points ([`PointValue`]): a buffer of points `[F; D]` of any dimension the
//! tree takes, a slice of one, a gather `points.permute(&idx)` (indices
//! checked on the device), a `constant`, or one to three coordinate
//! columns zipped (`zip3(&xs, &ys, &zs)`). The kernels read the expression
//! where they read a buffer (the build: once per dimension to rank the
//! coordinates, reading that coordinate alone from a buffer or a gather of
//! points, and once to write each point into its node; a query: once, by
//! its thread), so nothing is collected, and the results are those of the
//! collected points. A buffer of points or a slice of one is the buffer
//! itself: the same kernels as [`KdTree::build`] and [`KdTree::query`]. The
//! build writes points into its own storage only in its last step, in tree
//! order, so there is no early copy an expression could be collected into
//! instead. Brute force ([`nearest_neighbors`]), radius search and
//! all-k-nearest take buffers.
//!
//! # Limits
//! `k` is 1 to 1024 (`radius_search`'s `max_count` too). Point indices are
//! `u32`: at most `2^32 - 2` points for brute force, `2^31 - 1` for the
//! kd-tree.

// The family, bottom up: `geometry` (points, limits, distance and order,
// the tree's layout; imports no other kNN module) <- `host` (rayon) and
// `plan` (shared device tuning and specialisation) <- `build`, `query`,
// `brute` (device plans and launches) <- this file (the public API).
mod brute;
mod build;
mod geometry;
mod host;
mod plan;
mod query;

pub use geometry::{Coord, Point, PointValue, MAX_DIM, MAX_K, MAX_TREE_DIM, MAX_TREE_POINTS};

use crate::algo::same_device;
use crate::device::{Device, Ptr};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::expr::consume::launch_checked;
use crate::expr::node::{cuda_of, Node};
use crate::expr::{host_values, IntoExpr};
use crate::jit::KernelSpec;
use crate::vec::raw::{Mem, MemMut, SealedMut as _};
use crate::vec::{DeviceData, DeviceVec};
use geometry::{depth, node_bytes, squared_bound, BOX_FREE_LEVELS};
use plan::Rows;
use std::marker::PhantomData;

/// How to search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KnnMethod {
    /// Whichever of the kd-tree and brute force a cost estimate predicts
    /// faster, measured on a sample of the queries when it is close (see
    /// the [module docs](self)).
    #[default]
    Auto,
    /// Build a [`KdTree`] and query it (`D <= 16`).
    KdTree,
    /// Every query against every point.
    BruteForce,
}

/// The order the device processes kd-tree queries in. Results are always
/// returned in the caller's order; this only changes speed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum QueryOrder {
    /// [`Spatial`](QueryOrder::Spatial) for 16384 queries or more on a GPU,
    /// else [`AsGiven`](QueryOrder::AsGiven).
    #[default]
    Auto,
    /// Sort the queries by Morton code in the tree's bounding box first
    /// (one extra radix sort of `u32` keys): neighbouring threads then
    /// take similar paths through the tree.
    Spatial,
    /// One thread per query in the caller's order.
    AsGiven,
}

/// Options of [`nearest_neighbors_with`].
///
/// ```
/// use cuprim::algo::knn::{KnnMethod, KnnOptions, QueryOrder};
/// let opts = KnnOptions::new().method(KnnMethod::BruteForce).query_order(QueryOrder::AsGiven);
/// assert_eq!(opts.get_method(), KnnMethod::BruteForce);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct KnnOptions {
    method: KnnMethod,
    order: QueryOrder,
}

impl KnnOptions {
    /// [`KnnMethod::Auto`], [`QueryOrder::Auto`].
    pub fn new() -> Self {
        Self::default()
    }
    /// Chooses the algorithm.
    pub fn method(mut self, method: KnnMethod) -> Self {
        self.method = method;
        self
    }
    /// Chooses the kd-tree query order.
    pub fn query_order(mut self, order: QueryOrder) -> Self {
        self.order = order;
        self
    }
    /// The algorithm asked for.
    pub fn get_method(&self) -> KnnMethod {
        self.method
    }
    /// The query order asked for.
    pub fn get_query_order(&self) -> QueryOrder {
        self.order
    }
}

/// The result of a k-nearest-neighbour search: `queries x k` pairs,
/// row-major, each row ascending by distance (ties to the lower index),
/// missing neighbours as `u32::MAX` / `+inf`.
///
/// ```
/// use cuprim::prelude::*;
/// let dev = Device::default()?;
/// let pts = DeviceVec::from_slice(&dev, &[[0.0f64, 0.0], [3.0, 4.0]])?;
/// let nn = nearest_neighbors(&pts, &pts.slice(1..)?, 3)?;
/// assert_eq!((nn.queries, nn.k), (1, 3));
/// assert_eq!(nn.indices.to_vec()?, vec![1, 0, u32::MAX]);
/// assert_eq!(nn.distances.to_vec()?, vec![0.0, 5.0, f64::INFINITY]);
/// # Ok::<(), cuprim::Error>(())
/// ```
#[derive(Debug)]
pub struct Neighbors<F: Coord> {
    /// Point indices, `queries x k`.
    pub indices: DeviceVec<u32>,
    /// Euclidean distances, `queries x k`.
    pub distances: DeviceVec<F>,
    /// Neighbours per query.
    pub k: usize,
    /// Number of queries.
    pub queries: usize,
}

/// The result of [`KdTree::radius_search`]: like [`Neighbors`] with
/// `k = max_count`, plus how many points lie within the radius of each
/// query (which may exceed `max_count`: then the row holds the nearest
/// `max_count` of them).
#[derive(Debug)]
pub struct RadiusNeighbors<F: Coord> {
    /// Point indices, `queries x max_count`.
    pub indices: DeviceVec<u32>,
    /// Euclidean distances, `queries x max_count`.
    pub distances: DeviceVec<F>,
    /// Points within the radius, per query (not capped).
    pub counts: DeviceVec<u32>,
    /// Slots per query.
    pub max_count: usize,
    /// Number of queries.
    pub queries: usize,
}

/// The kernels `k` neighbours of points `P` use on architecture `arch`
/// (what `precompile_knn` compiles): the kd-tree build and query for
/// `D <= 16`, and brute force.
pub(crate) fn cuda_specs<P: Point>(arch: u32, k: usize) -> Vec<KernelSpec> {
    let mut specs = Vec::with_capacity(3);
    if P::DIM <= MAX_TREE_DIM {
        specs.push(KernelSpec::of(&build::BuildPlan::<P>::new(arch)));
        specs.push(KernelSpec::of(&query::QueryPlan::<P>::new(arch, k)));
    }
    specs.push(KernelSpec::of(&brute::BrutePlan::<P>::new(arch, k)));
    specs
}

/// The kernels [`KdTree::build_from`] and [`KdTree::query_from`] (with `k`
/// neighbours) use for the expression `x` of points on architecture
/// `arch` (what `precompile_expr_knn` compiles): a buffer's are those of
/// [`KdTree::build`] and [`KdTree::query`].
pub(crate) fn cuda_specs_of<X: Node>(arch: u32, x: &X, k: usize) -> Vec<KernelSpec>
where
    X::Item: PointValue,
{
    type P<X> = <<X as Node>::Item as PointValue>::Point;
    if x.buffer_addr().is_some() {
        return vec![
            KernelSpec::of(&build::BuildPlan::<P<X>>::new(arch)),
            KernelSpec::of(&query::QueryPlan::<P<X>>::new(arch, k)),
        ];
    }
    vec![
        KernelSpec::of(&build::BuildPlan::<P<X>>::of_input(arch, x)),
        KernelSpec::of(&query::QueryPlan::<P<X>>::new(arch, k).of_input(x)),
    ]
}

fn check_k(k: usize, what: &str) -> Result<()> {
    if k == 0 || k > MAX_K {
        return Err(Error::InvalidArgument(format!("{what} must be 1 to {MAX_K}, got {k}")));
    }
    Ok(())
}

fn check_dim<P: Point>(max: usize, path: &str) -> Result<()> {
    if P::DIM == 0 {
        return Err(Error::InvalidArgument("points must have at least one coordinate".into()));
    }
    if P::DIM > max {
        return Err(Error::Unsupported(format!(
            "{path} takes points of at most {max} coordinates, not {}",
            P::DIM
        )));
    }
    Ok(())
}

fn out_len(queries: usize, k: usize) -> Result<usize> {
    queries
        .checked_mul(k)
        .ok_or_else(|| Error::InvalidArgument(format!("{queries} queries x {k} neighbours overflows")))
}

fn alloc_rows<F: Coord>(dev: &Device, queries: usize, k: usize) -> Result<(DeviceVec<u32>, DeviceVec<F>)> {
    let len = out_len(queries, k)?;
    Ok((DeviceVec::alloc_uninit(dev, len)?, DeviceVec::alloc_uninit(dev, len)?))
}

/// The output rows at device addresses `indices` and `distances`.
fn rows<F: Coord>(indices: u64, distances: u64, k: usize) -> Rows<F> {
    Rows {
        indices: Ptr::from_raw(indices),
        distances: Ptr::from_raw(distances),
        k,
    }
}

/// [`KnnMethod::Auto`] before building anything: brute force when the tree
/// cannot hold the points, for small inputs, or when brute force costs no
/// more than building the tree and visiting `depth` nodes per query.
fn brute_first<P: Point>(n: usize, q: usize, k: usize) -> bool {
    P::DIM > MAX_TREE_DIM
        || n <= 4096
        || (n as u128) * (q as u128) <= 1 << 26
        || plan::brute_cost(n, q, P::DIM) <= plan::build_cost(n, P::DIM) + plan::tree_query_cost::<P>(q, depth(n) as f64, k)
}

/// The `k` nearest `points` of every query ([`KnnMethod::Auto`]); see the
/// [module docs](self) for the result's layout and semantics.
///
/// Errors: `k` not in `1..=1024`, points of more than 128 coordinates,
/// points and queries on different devices. No queries gives an empty
/// result; no points gives all-missing rows.
///
/// ```
/// use cuprim::prelude::*;
/// let dev = Device::default()?;
/// let points: Vec<[f32; 2]> = (0..100).map(|i| [(i % 10) as f32, (i / 10) as f32]).collect();
/// let points = DeviceVec::from_slice(&dev, &points)?;
/// let queries = DeviceVec::from_slice(&dev, &[[4.2f32, 7.1]])?;
/// let nn = nearest_neighbors(&points, &queries, 1)?;
/// assert_eq!(nn.indices.to_vec()?, vec![74]);   // the point (4, 7)
/// assert!(nearest_neighbors(&points, &queries, 0).is_err());
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn nearest_neighbors<P: Point>(points: &impl DeviceData<P>, queries: &impl DeviceData<P>, k: usize) -> Result<Neighbors<P::Coord>> {
    nearest_neighbors_with(points, queries, k, KnnOptions::new())
}

/// [`nearest_neighbors`] with a chosen [`KnnMethod`] and [`QueryOrder`].
/// Every method returns the same result.
///
/// ```
/// use cuprim::prelude::*;
/// use cuprim::algo::knn::{KnnMethod, KnnOptions};
/// let dev = Device::default()?;
/// let points: Vec<[f32; 3]> = (0..5000).map(|i| [(i % 17) as f32, (i % 23) as f32, (i % 29) as f32 * 0.5]).collect();
/// let points = DeviceVec::from_slice(&dev, &points)?;
/// let queries = points.slice(0..64)?;
/// let tree = nearest_neighbors_with(&points, &queries, 5, KnnOptions::new().method(KnnMethod::KdTree))?;
/// let brute = nearest_neighbors_with(&points, &queries, 5, KnnOptions::new().method(KnnMethod::BruteForce))?;
/// assert_eq!(tree.indices.to_vec()?, brute.indices.to_vec()?);
/// assert_eq!(tree.distances.to_vec()?, brute.distances.to_vec()?);
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn nearest_neighbors_with<P: Point>(
    points: &impl DeviceData<P>,
    queries: &impl DeviceData<P>,
    k: usize,
    opts: KnnOptions,
) -> Result<Neighbors<P::Coord>> {
    check_k(k, "k")?;
    check_dim::<P>(MAX_DIM, "nearest_neighbors")?;
    same_device("nearest_neighbors", points.device(), queries.device())?;
    let (n, q) = (points.len(), queries.len());
    match opts.method {
        KnnMethod::KdTree => KdTree::build(points)?.query_with(queries, k, opts.order),
        KnnMethod::BruteForce => brute_force(points, queries, k),
        KnnMethod::Auto if brute_first::<P>(n, q, k) => brute_force(points, queries, k),
        KnnMethod::Auto => {
            // Build, then measure the traversal on a sample of the queries.
            let tree = KdTree::build(points)?;
            let (mut indices, mut distances) = alloc_rows::<P::Coord>(points.device(), q, k)?;
            let visits = tree.sampled_visits(queries, k, &mut indices, &mut distances)?;
            if plan::tree_query_cost::<P>(q, visits, k) <= plan::brute_cost(n, q, P::DIM) {
                tree.query_into(queries, k, opts.order, &mut indices, &mut distances)?;
            } else {
                brute_into(points, queries, k, &mut indices, &mut distances)?;
            }
            Ok(Neighbors {
                indices,
                distances,
                k,
                queries: q,
            })
        }
    }
}

fn check_brute_points(n: usize) -> Result<()> {
    if n > u32::MAX as usize - 1 {
        return Err(Error::InvalidArgument(format!(
            "brute-force kNN takes at most 2^32 - 2 points, not {n}"
        )));
    }
    Ok(())
}

fn brute_force<P: Point>(points: &impl DeviceData<P>, queries: &impl DeviceData<P>, k: usize) -> Result<Neighbors<P::Coord>> {
    check_brute_points(points.len())?;
    let q = queries.len();
    let (mut indices, mut distances) = alloc_rows::<P::Coord>(points.device(), q, k)?;
    brute_into(points, queries, k, &mut indices, &mut distances)?;
    Ok(Neighbors {
        indices,
        distances,
        k,
        queries: q,
    })
}

/// Brute force into rows allocated for `queries.len()` x `k`.
fn brute_into<P: Point>(
    points: &impl DeviceData<P>,
    queries: &impl DeviceData<P>,
    k: usize,
    indices: &mut DeviceVec<u32>,
    distances: &mut DeviceVec<P::Coord>,
) -> Result<()> {
    let (n, q) = (points.len(), queries.len());
    check_brute_points(n)?;
    let dev = points.device();
    if q > 0 {
        match (points.mem(), queries.mem(), indices.mem_mut(), distances.mem_mut()) {
            (Mem::Host(p), Mem::Host(qs), MemMut::Host(oi), MemMut::Host(od)) => host::brute(p, qs, k, od, oi),
            (Mem::Cuda { dev: c, ptr: pp, .. }, Mem::Cuda { ptr: qp, .. }, MemMut::Cuda { ptr: ip, .. }, MemMut::Cuda { ptr: dp, .. }) => {
                brute::run::<P>(c, dev, Ptr::from_raw(pp), n, Ptr::from_raw(qp), q, rows(ip, dp, k))?
            }
            _ => return Err(Error::DeviceMismatch { op: "nearest_neighbors" }),
        }
    }
    Ok(())
}

enum Nodes<P: Point> {
    /// Host backend: the nodes as (point, original index) and the boxes.
    Host(host::HostTree<P>),
    /// CUDA: node records of `geometry::node_bytes::<P>()` bytes (coordinates,
    /// then the u32 index, padded to 16 bytes), the points' bounding box
    /// (lo, hi per dimension) and the upper nodes' subtree boxes.
    Cuda(Box<build::Built<P::Coord>>),
}

/// A left-balanced kd-tree over a point set, built on the device (see the
/// [module docs](self)); query it as often as you like. It owns a copy of
/// the points (in node order, with their original indices) and does not
/// borrow the input.
///
/// ```
/// use cuprim::prelude::*;
/// let dev = Device::default()?;
/// let pts: Vec<[f32; 3]> = (0..1000).map(|i| {
///     let t = i as f32 * 0.01;
///     [t.cos(), t.sin(), t]
/// }).collect();
/// let tree = KdTree::build(&DeviceVec::from_slice(&dev, &pts)?)?;
/// assert_eq!((tree.len(), tree.depth()), (1000, 10));
/// let queries = DeviceVec::from_slice(&dev, &[pts[500], [1.0, 0.0, 0.0]])?;
/// let nn = tree.query(&queries, 3)?;
/// let mut row = nn.indices.to_vec()?[..3].to_vec();
/// assert_eq!(row[0], 500);          // itself, at distance 0
/// row.sort();
/// assert_eq!(row, [499, 500, 501]); // then its neighbours along the curve
/// assert_eq!(tree.nearest(&queries)?.indices.to_vec()?, vec![500, 0]);
/// # Ok::<(), cuprim::Error>(())
/// ```
pub struct KdTree<P: Point> {
    device: Device,
    nodes: Nodes<P>,
    len: usize,
    /// A tuned tree's child order for the device traversal (visits after
    /// which it orders children by their boxes); `None`: the plan's
    /// (`plan::box_order_after`).
    box_after: Option<u32>,
    _p: PhantomData<P>,
}

impl<P: Point> std::fmt::Debug for KdTree<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KdTree<{}>(len {}, {:?})", P::type_name(), self.len, self.device)
    }
}

impl<P: Point> KdTree<P> {
    /// Builds the tree over `points` (any number, up to `2^31 - 1`; points
    /// with NaN coordinates are kept but never returned). Errors for points
    /// of 0 or more than 16 coordinates.
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let empty = DeviceVec::<[f64; 2]>::from_slice(&dev, &[])?;
    /// let tree = KdTree::build(&empty)?;
    /// assert!(tree.is_empty());
    /// let q = DeviceVec::from_slice(&dev, &[[0.0f64, 0.0]])?;
    /// assert_eq!(tree.query(&q, 2)?.indices.to_vec()?, vec![u32::MAX; 2]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn build(points: &impl DeviceData<P>) -> Result<Self> {
        Self::build_boxed(points, BOX_FREE_LEVELS)
    }

    /// [`build`](KdTree::build) with boxes above the last `free` full
    /// levels (1 or more) and the traversal's use of them (`child_boxes`:
    /// order children by their boxes throughout, else by the plane with a
    /// box check on entry throughout): the tuning sweep of `benches/knn.rs`.
    #[cfg(feature = "knn-tuning")]
    #[doc(hidden)]
    pub fn build_tuned(points: &impl DeviceData<P>, free: u32, child_boxes: bool) -> Result<Self> {
        if free == 0 {
            return Err(Error::InvalidArgument("free levels must be 1 or more".into()));
        }
        let mut tree = Self::build_boxed(points, free)?;
        tree.box_after = Some(if child_boxes { 0 } else { u32::MAX });
        Ok(tree)
    }

    fn build_boxed(points: &impl DeviceData<P>, free: u32) -> Result<Self> {
        check_dim::<P>(MAX_TREE_DIM, "KdTree")?;
        let n = points.len();
        if n > MAX_TREE_POINTS {
            return Err(Error::InvalidArgument(format!("a KdTree takes at most 2^31 - 1 points, not {n}")));
        }
        let nodes = match points.mem() {
            Mem::Host(p) => Nodes::Host(host::build(p, free)),
            Mem::Cuda { dev, ptr, .. } => Nodes::Cuda(Box::new(build::run::<P>(dev, points.device(), Ptr::from_raw(ptr), n, free)?)),
        };
        Ok(KdTree {
            device: points.device().clone(),
            nodes,
            len: n,
            box_after: None,
            _p: PhantomData,
        })
    }

    /// Builds the tree over the points an input expression yields
    /// ([`PointValue`]: a point `[F; D]`, or a coordinate, a pair or a
    /// triple of coordinate columns zipped), as [`build`](KdTree::build)
    /// builds it over the collected points (the same tree, the same query
    /// results), with nothing collected: on CUDA the build's kernels read
    /// the expression where they read the points (once per dimension, to
    /// rank the coordinates, and once to write each point into its node),
    /// so a gather of points (`points.permute(&idx)`) needs no gathered
    /// copy and columns of coordinates (`zip3(&xs, &ys, &zs)`) no
    /// interleaved one. A buffer of points or a slice of one is built as
    /// [`build`](KdTree::build) builds it. A gather with an index out of
    /// range fails with [`Error::IndexOutOfBounds`]; errors as `build`'s
    /// otherwise.
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let xs = DeviceVec::from_slice(&dev, &[0.0f32, 1.0, 2.0, 3.0])?;
    /// let ys = DeviceVec::from_slice(&dev, &[0.0f32, 1.0, 0.0, 1.0])?;
    /// let tree = KdTree::<[f32; 2]>::build_from(zip(&xs, &ys))?;
    /// let nn = tree.query(&DeviceVec::from_slice(&dev, &[[2.1f32, 0.2]])?, 2)?;
    /// assert_eq!(nn.indices.to_vec()?, vec![2, 3]);
    ///
    /// // 5-D points: a tree over every other one, gathered where it is read.
    /// let pts: Vec<[f64; 5]> = (0..10).map(|i| [i as f64, 0.0, 0.0, 0.0, 1.0]).collect();
    /// let pts = DeviceVec::from_slice(&dev, &pts)?;
    /// let even = DeviceVec::from_slice(&dev, &[0u32, 2, 4, 6, 8])?;
    /// let tree = KdTree::build_from(pts.permute(&even))?;
    /// let nn = tree.query(&DeviceVec::from_slice(&dev, &[[3.9f64, 0.0, 0.0, 0.0, 1.0]])?, 1)?;
    /// assert_eq!(nn.indices.to_vec()?, vec![2]); // the gathered point 2: pts[4]
    /// let bad = DeviceVec::from_slice(&dev, &[0u32, 10])?;
    /// assert!(matches!(KdTree::build_from(pts.permute(&bad)), Err(Error::IndexOutOfBounds { .. })));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn build_from<Q: IntoExpr>(points: Q) -> Result<Self>
    where
        <Q::Expr as Node>::Item: PointValue<Point = P>,
    {
        check_dim::<P>(MAX_TREE_DIM, "KdTree")?;
        let x = points.into_expr();
        x.validate()?;
        let n = x.length();
        if n > MAX_TREE_POINTS {
            return Err(Error::InvalidArgument(format!("a KdTree takes at most 2^31 - 1 points, not {n}")));
        }
        let device = x.device_ref().clone();
        let nodes = match (cuda_of(&x), x.buffer_addr()) {
            (None, _) => {
                let points: Vec<P> = host_values(&x)?.into_iter().map(PointValue::point).collect();
                Nodes::Host(host::build(&points, BOX_FREE_LEVELS))
            }
            // A buffer (of points, or of one coordinate: `P`'s layout either
            // way): the buffer's kernels, as `build`.
            (Some(dev), Some(addr)) => Nodes::Cuda(Box::new(build::run::<P>(dev, &device, Ptr::from_raw(addr), n, BOX_FREE_LEVELS)?)),
            (Some(dev), None) => {
                let mut built = None;
                launch_checked(dev, &x, |a| {
                    let points = build::Points::<P, _>::Expr(&x, a);
                    built = Some(build::run_of(dev, &device, points, n, BOX_FREE_LEVELS)?);
                    Ok(())
                })?;
                Nodes::Cuda(Box::new(
                    built.ok_or_else(|| Error::InvalidArgument("KdTree::build_from: no tree".into()))?,
                ))
            }
        };
        Ok(KdTree {
            device,
            nodes,
            len: n,
            box_after: None,
            _p: PhantomData,
        })
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when built over no points.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Levels of the tree: `floor(log2(len)) + 1` (0 when empty).
    pub fn depth(&self) -> u32 {
        depth(self.len)
    }

    /// The device the tree lives on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The nodes in tree order as (point, original index), copied to the
    /// host: for tests and inspection.
    #[doc(hidden)]
    pub fn nodes(&self) -> Result<Vec<(P, u32)>> {
        match &self.nodes {
            Nodes::Host(t) => Ok(t.nodes.clone()),
            Nodes::Cuda(built) => {
                let words = built.words.to_vec()?;
                let bytes: &[u8] = bytemuck::cast_slice(&words);
                let stride = node_bytes::<P>();
                let size = std::mem::size_of::<P>();
                Ok(bytes
                    .chunks_exact(stride)
                    .map(|r| {
                        let p: P = bytemuck::pod_read_unaligned(&r[..size]);
                        let i: u32 = bytemuck::pod_read_unaligned(&r[size..size + 4]);
                        (p, i)
                    })
                    .collect())
            }
        }
    }

    /// The `k` nearest points of every query ([`QueryOrder::Auto`]); see
    /// [`nearest_neighbors`] for the result and the errors.
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let pts = DeviceVec::from_slice(&dev, &[[0.0f32, 0.0], [1.0, 1.0], [2.0, 2.0], [1.0, 1.0]])?;
    /// let tree = KdTree::build(&pts)?;
    /// // Two points at the same distance: the lower index first.
    /// let nn = tree.query(&DeviceVec::from_slice(&dev, &[[1.0f32, 1.0]])?, 3)?;
    /// assert_eq!(nn.indices.to_vec()?, vec![1, 3, 0]);
    /// assert!(tree.query(&pts, 1025).is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn query(&self, queries: &impl DeviceData<P>, k: usize) -> Result<Neighbors<P::Coord>> {
        self.query_with(queries, k, QueryOrder::Auto)
    }

    /// [`query`](KdTree::query) with a chosen [`QueryOrder`] (same result).
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// use cuprim::algo::knn::QueryOrder;
    /// let dev = Device::default()?;
    /// let pts: Vec<[f64; 2]> = (0..300).map(|i| [(i * 7 % 300) as f64, (i * 13 % 300) as f64]).collect();
    /// let pts = DeviceVec::from_slice(&dev, &pts)?;
    /// let tree = KdTree::build(&pts)?;
    /// let a = tree.query_with(&pts, 4, QueryOrder::Spatial)?;
    /// let b = tree.query_with(&pts, 4, QueryOrder::AsGiven)?;
    /// assert_eq!(a.indices.to_vec()?, b.indices.to_vec()?);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn query_with(&self, queries: &impl DeviceData<P>, k: usize, order: QueryOrder) -> Result<Neighbors<P::Coord>> {
        check_k(k, "k")?;
        same_device("KdTree::query", &self.device, queries.device())?;
        let q = queries.len();
        let (mut indices, mut distances) = alloc_rows::<P::Coord>(&self.device, q, k)?;
        self.query_into(queries, k, order, &mut indices, &mut distances)?;
        Ok(Neighbors {
            indices,
            distances,
            k,
            queries: q,
        })
    }

    /// [`query`](KdTree::query) of the queries an input expression yields
    /// ([`PointValue`]: a point `[F; D]`, or a coordinate, a pair or a
    /// triple of coordinate columns zipped), with the same result as
    /// querying the collected points, nothing collected: on CUDA each
    /// query's thread reads its query from the expression (and, for 16384
    /// queries or more, the Morton pass once before). A buffer of points or
    /// a slice of one is queried as [`query`](KdTree::query) queries it.
    /// Errors as [`query`](KdTree::query)'s, and [`Error::IndexOutOfBounds`]
    /// for a gather with an index out of range.
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let pts: Vec<[f64; 2]> = (0..10).map(|i| [i as f64, 0.0]).collect();
    /// let tree = KdTree::build(&DeviceVec::from_slice(&dev, &pts)?)?;
    /// // Queries at x = 0.4, 2.4, 4.4 on the axis: computed, not stored.
    /// let queries = zip(counting(&dev, 0.4f64, 2.0, 3), constant(&dev, 0.0f64, 3));
    /// let nn = tree.query_from(queries, 1)?;
    /// assert_eq!(nn.indices.to_vec()?, vec![0, 2, 4]);
    ///
    /// // 8-D queries: a gather of stored ones, and one point twice.
    /// let pts: Vec<[f32; 8]> = (0..20).map(|i| [i as f32; 8]).collect();
    /// let pts = DeviceVec::from_slice(&dev, &pts)?;
    /// let tree = KdTree::build(&pts)?;
    /// let idx = DeviceVec::from_slice(&dev, &[19u32, 3])?;
    /// assert_eq!(tree.query_from(pts.permute(&idx), 1)?.indices.to_vec()?, vec![19, 3]);
    /// let nn = tree.query_from(constant(&dev, [7.4f32; 8], 2), 2)?;
    /// assert_eq!(nn.indices.to_vec()?, vec![7, 8, 7, 8]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn query_from<Q: IntoExpr>(&self, queries: Q, k: usize) -> Result<Neighbors<P::Coord>>
    where
        <Q::Expr as Node>::Item: PointValue<Point = P>,
    {
        const OP: &str = "KdTree::query_from";
        check_k(k, "k")?;
        let x = queries.into_expr();
        x.validate()?;
        same_device(OP, &self.device, x.device_ref())?;
        let q = x.length();
        let (mut indices, mut distances) = alloc_rows::<P::Coord>(&self.device, q, k)?;
        if q > 0 {
            match (&self.nodes, cuda_of(&x), indices.mem_mut(), distances.mem_mut()) {
                (Nodes::Host(tree), None, MemMut::Host(oi), MemMut::Host(od)) => {
                    let qs: Vec<P> = host_values(&x)?.into_iter().map(PointValue::point).collect();
                    host::query(tree, &qs, k, od, oi)
                }
                (Nodes::Cuda(built), Some(dev), MemMut::Cuda { ptr: ip, .. }, MemMut::Cuda { ptr: dp, .. }) => {
                    let tree = self.cuda_tree(built);
                    let (mode, spatial, rows) = (query::Mode::Nearest(None), q >= 16384, rows(ip, dp, k));
                    match x.buffer_addr() {
                        // A buffer: the buffer's kernels, as `query`.
                        Some(addr) => query::run::<P>(dev, &self.device, &tree, Ptr::from_raw(addr), q, spatial, None, mode, rows)?,
                        None => launch_checked(dev, &x, |a| {
                            let queries = query::Queries::<P, _>::Expr(&x, a);
                            query::run_of(dev, &self.device, &tree, queries, q, spatial, None, mode, rows)
                        })?,
                    }
                }
                _ => return Err(Error::DeviceMismatch { op: OP }),
            }
        }
        Ok(Neighbors {
            indices,
            distances,
            k,
            queries: q,
        })
    }

    /// The device buffers of a CUDA tree.
    fn cuda_tree<'a>(&self, built: &'a build::Built<P::Coord>) -> query::Tree<'a, P::Coord> {
        query::Tree {
            words: &built.words,
            bounds: &built.bounds,
            boxes: &built.boxes,
            nb: built.nb,
            n: self.len,
            box_after: self.box_after,
        }
    }

    /// [`query_with`](KdTree::query_with) into rows allocated for
    /// `queries.len()` x `k` (arguments checked).
    fn query_into(
        &self,
        queries: &impl DeviceData<P>,
        k: usize,
        order: QueryOrder,
        indices: &mut DeviceVec<u32>,
        distances: &mut DeviceVec<P::Coord>,
    ) -> Result<()> {
        let q = queries.len();
        if q == 0 {
            return Ok(());
        }
        match (&self.nodes, queries.mem(), indices.mem_mut(), distances.mem_mut()) {
            (Nodes::Host(tree), Mem::Host(qs), MemMut::Host(oi), MemMut::Host(od)) => host::query(tree, qs, k, od, oi),
            (Nodes::Cuda(built), Mem::Cuda { dev, ptr, .. }, MemMut::Cuda { ptr: ip, .. }, MemMut::Cuda { ptr: dp, .. }) => {
                let spatial = match order {
                    QueryOrder::Auto => q >= 16384,
                    QueryOrder::Spatial => true,
                    QueryOrder::AsGiven => false,
                };
                let tree = self.cuda_tree(built);
                let mode = query::Mode::Nearest(None);
                query::run::<P>(
                    dev,
                    &self.device,
                    &tree,
                    Ptr::from_raw(ptr),
                    q,
                    spatial,
                    None,
                    mode,
                    rows(ip, dp, k),
                )?
            }
            _ => return Err(Error::DeviceMismatch { op: "KdTree::query" }),
        }
        Ok(())
    }

    /// The mean number of nodes the traversal visits for a sample of the
    /// queries (evenly spaced, at most [`plan::COST_SAMPLE`]): the cost
    /// estimate of [`KnnMethod::Auto`]. On CUDA the sample's rows of
    /// `indices` / `distances` (allocated for every query) are written.
    fn sampled_visits(
        &self,
        queries: &impl DeviceData<P>,
        k: usize,
        indices: &mut DeviceVec<u32>,
        distances: &mut DeviceVec<P::Coord>,
    ) -> Result<f64> {
        let q = queries.len();
        let s = q.min(plan::COST_SAMPLE);
        if s == 0 || self.len == 0 {
            return Ok(0.0);
        }
        let sample: Vec<u32> = (0..s).map(|i| (i * q / s) as u32).collect();
        let counts = match (&self.nodes, queries.mem(), indices.mem_mut(), distances.mem_mut()) {
            (Nodes::Host(tree), Mem::Host(qs), _, _) => {
                let picked: Vec<P> = sample.iter().map(|&i| qs[i as usize]).collect();
                host::visits(tree, &picked, k)
            }
            (Nodes::Cuda(built), Mem::Cuda { dev, ptr, .. }, MemMut::Cuda { ptr: ip, .. }, MemMut::Cuda { ptr: dp, .. }) => {
                let order = DeviceVec::from_slice(&self.device, &sample)?;
                let mut visits = DeviceVec::<u32>::alloc_uninit(&self.device, s)?;
                let tree = self.cuda_tree(built);
                let mode = query::Mode::Nearest(Some(plan::ptr_mut(&mut visits)?));
                let given = Some(plan::ptr(&order)?);
                query::run::<P>(dev, &self.device, &tree, Ptr::from_raw(ptr), s, false, given, mode, rows(ip, dp, k))?;
                visits.to_vec()?
            }
            _ => return Err(Error::DeviceMismatch { op: "KdTree::query" }),
        };
        Ok(counts.iter().map(|&v| v as f64).sum::<f64>() / s as f64)
    }

    /// The mean number of nodes a k-nearest query visits, over a sample
    /// of `queries` (what [`KnnMethod::Auto`] estimates the tree's cost
    /// with); for benchmarks and tuning.
    #[doc(hidden)]
    pub fn mean_visits(&self, queries: &impl DeviceData<P>, k: usize) -> Result<f64> {
        check_k(k, "k")?;
        same_device("KdTree::mean_visits", &self.device, queries.device())?;
        // The sample alone, so that the rows are only the sample's.
        let (q, all) = (queries.len(), queries.to_vec()?);
        let s = q.min(plan::COST_SAMPLE);
        let picked: Vec<P> = (0..s).map(|i| all[i * q / s]).collect();
        let picked = DeviceVec::from_slice(&self.device, &picked)?;
        let (mut indices, mut distances) = alloc_rows::<P::Coord>(&self.device, s, k)?;
        self.sampled_visits(&picked, k, &mut indices, &mut distances)
    }

    /// All-k-nearest: for every point of the tree, its `k` nearest *other*
    /// points. Row `i` (of `k`, in [`Neighbors`]' layout with `queries =
    /// len()`) belongs to the point of original index `i`; the point itself
    /// is excluded by index, so a duplicate of it (another point at
    /// distance 0) is a neighbour. Rows are sorted like
    /// [`query`](KdTree::query)'s; with `k` above `len() - 1` the rest of a
    /// row is missing (`u32::MAX` / `+inf`), and a point with a NaN
    /// coordinate gets an all-missing row (and is no one's neighbour). The
    /// points are processed in the tree's in-order (its own space-filling
    /// order), so neighbouring threads walk similar paths without sorting
    /// queries. `k` must be 1 to 1024 (0 is
    /// an error, as for [`query`](KdTree::query)); an empty tree gives an
    /// empty result.
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let pts = DeviceVec::from_slice(&dev, &[[0.0f32, 0.0], [1.0, 0.0], [3.0, 0.0], [1.0, 0.0]])?;
    /// let tree = KdTree::build(&pts)?;
    /// let nn = tree.all_nearest(2)?;
    /// assert_eq!(nn.queries, 4);
    /// // Point 1's duplicate (3) is its nearest, at distance 0; then point 0.
    /// assert_eq!(nn.indices.to_vec()?, vec![1, 3, 3, 0, 1, 3, 1, 0]);
    /// assert_eq!(&nn.distances.to_vec()?[2..4], &[0.0, 1.0]);
    /// // More neighbours than other points: the rest of each row is missing.
    /// assert_eq!(&tree.all_nearest(4)?.indices.to_vec()?[..4], &[1, 3, 2, u32::MAX]);
    /// assert!(tree.all_nearest(0).is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn all_nearest(&self, k: usize) -> Result<Neighbors<P::Coord>> {
        check_k(k, "k")?;
        let n = self.len;
        let (mut indices, mut distances) = alloc_rows::<P::Coord>(&self.device, n, k)?;
        if n > 0 {
            match (&self.nodes, indices.mem_mut(), distances.mem_mut()) {
                (Nodes::Host(tree), MemMut::Host(oi), MemMut::Host(od)) => host::all(tree, k, od, oi),
                (Nodes::Cuda(built), MemMut::Cuda { dev, ptr: ip, .. }, MemMut::Cuda { ptr: dp, .. }) => {
                    query::run_all::<P>(dev, &self.cuda_tree(built), rows(ip, dp, k))?
                }
                _ => return Err(Error::DeviceMismatch { op: "KdTree::all_nearest" }),
            }
        }
        Ok(Neighbors {
            indices,
            distances,
            k,
            queries: n,
        })
    }

    /// The nearest point of every query (`k = 1`, the fastest case).
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let tree = KdTree::build(&DeviceVec::from_slice(&dev, &[[0.0f32], [10.0], [20.0]])?)?;
    /// let nn = tree.nearest(&DeviceVec::from_slice(&dev, &[[12.0f32], [-3.0], [f32::NAN]])?)?;
    /// assert_eq!(nn.indices.to_vec()?, vec![1, 0, u32::MAX]);
    /// assert_eq!(nn.distances.to_vec()?, vec![2.0, 3.0, f32::INFINITY]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn nearest(&self, queries: &impl DeviceData<P>) -> Result<Neighbors<P::Coord>> {
        self.query(queries, 1)
    }

    /// Every point within distance `radius` of each query (distance `<=
    /// radius`, as reported), counted in [`RadiusNeighbors::counts`]; the
    /// nearest `max_count` of them (1 to 1024) are returned, sorted like
    /// [`query`](KdTree::query)'s rows, the rest of a row missing. A
    /// negative or NaN radius is an error.
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let pts: Vec<[f32; 2]> = (0..10).map(|i| [i as f32, 0.0]).collect();
    /// let tree = KdTree::build(&DeviceVec::from_slice(&dev, &pts)?)?;
    /// let r = tree.radius_search(&DeviceVec::from_slice(&dev, &[[4.0f32, 0.0]])?, 2.0, 3)?;
    /// assert_eq!(r.counts.to_vec()?, vec![5]);             // 2, 3, 4, 5, 6
    /// assert_eq!(r.indices.to_vec()?, vec![4, 3, 5]);      // the nearest 3
    /// assert!(tree.radius_search(&DeviceVec::from_slice(&dev, &[[0.0f32, 0.0]])?, -1.0, 3).is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn radius_search(&self, queries: &impl DeviceData<P>, radius: P::Coord, max_count: usize) -> Result<RadiusNeighbors<P::Coord>> {
        check_k(max_count, "max_count")?;
        same_device("KdTree::radius_search", &self.device, queries.device())?;
        if radius.is_nan() || radius < P::Coord::zero() {
            return Err(Error::InvalidArgument(format!("radius must be >= 0, got {radius:?}")));
        }
        let bound = squared_bound(radius);
        let q = queries.len();
        let k = max_count;
        let (mut indices, mut distances) = alloc_rows::<P::Coord>(&self.device, q, k)?;
        let mut counts = DeviceVec::<u32>::alloc_uninit(&self.device, q)?;
        if q > 0 {
            match (&self.nodes, queries.mem(), indices.mem_mut(), distances.mem_mut(), counts.mem_mut()) {
                (Nodes::Host(tree), Mem::Host(qs), MemMut::Host(oi), MemMut::Host(od), MemMut::Host(oc)) => {
                    host::radius(tree, qs, k, bound, od, oi, oc)
                }
                (
                    Nodes::Cuda(built),
                    Mem::Cuda { dev, ptr, .. },
                    MemMut::Cuda { ptr: ip, .. },
                    MemMut::Cuda { ptr: dp, .. },
                    MemMut::Cuda { ptr: cp, .. },
                ) => {
                    let tree = self.cuda_tree(built);
                    let mode = query::Mode::Radius(bound, Ptr::from_raw(cp));
                    query::run::<P>(
                        dev,
                        &self.device,
                        &tree,
                        Ptr::from_raw(ptr),
                        q,
                        q >= 16384,
                        None,
                        mode,
                        rows(ip, dp, k),
                    )?
                }
                _ => {
                    return Err(Error::DeviceMismatch {
                        op: "KdTree::radius_search",
                    })
                }
            }
        }
        Ok(RadiusNeighbors {
            indices,
            distances,
            counts,
            max_count,
            queries: q,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generated declarations are the ones the kernels were tuned with
    /// (before the launch seam the same text, but for the template line).
    #[test]
    fn specialisations_unchanged() {
        let specs = cuda_specs::<[f32; 3]>(90, 8);
        let keys: Vec<&str> = specs.iter().map(|s| s.key()).collect();
        let common = "typedef float F;\n#define CUPRIM_DIM 3\n";
        assert_eq!(
            keys,
            [
                format!("// template: knn/build.cu\n{common}#define CUPRIM_K 1\n#define CUPRIM_NODE_BYTES 16\n"),
                format!(
                    "// template: knn/query.cu\n{common}#define CUPRIM_K 8\n#define CUPRIM_NODE_BYTES 16\n\
                     #define CUPRIM_KNN_BOX_ORDER_AFTER {}\n",
                    plan::box_order_after(3, 8, false)
                ),
                format!(
                    "// template: knn/brute.cu\n{common}#define CUPRIM_K 8\n#define CUPRIM_NODE_BYTES 16\n\
                     #define CUPRIM_BQ 128\n#define CUPRIM_TILE 256\n#define CUPRIM_REG_QUERY 1\n"
                ),
            ]
        );
        // 64-D f64: no tree; the query lives in shared columns.
        let specs = cuda_specs::<[f64; 64]>(90, 100);
        assert_eq!(
            specs.iter().map(|s| s.key()).collect::<Vec<_>>(),
            [
                "// template: knn/brute.cu\ntypedef double F;\n#define CUPRIM_DIM 64\n#define CUPRIM_K 0\n\
              #define CUPRIM_NODE_BYTES 528\n#define CUPRIM_BQ 64\n#define CUPRIM_TILE 24\n#define CUPRIM_REG_QUERY 0\n"
            ]
        );
    }
}
