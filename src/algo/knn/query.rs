//! kd-tree queries on the device (`kernels/knn/query.cu`): k nearest,
//! radius search and all-k-nearest, one thread per query, optionally in
//! Morton order.

use super::geometry::{depth, Coord, Point};
use super::plan::{
    box_order_after, bucket, column_block, column_heap, ptr, ptr_mut, query_policy, split_budget, split_fanout, splits, write_common,
    write_input, Rows,
};
use crate::algo::policy::{elementwise, Policy};
use crate::algo::sort::{SortMutOps, SortOptions};
use crate::device::launch::KernelArg;
use crate::device::{Counter, CudaDevice, Device, Entry, Grid, Module, Ptr};
use crate::error::{Error, Result};
use crate::expr::args::ExprArgs;
use crate::expr::node::Node;
use crate::expr::Leaf;
use crate::jit::{header, template, SpecWriter, Specialise, Template};
use crate::vec::DeviceVec;
use std::marker::PhantomData;

template!(
    KNN_QUERY,
    "knn/query.cu",
    [
        "cuprim_knn_query",
        "cuprim_knn_query_capped",
        "cuprim_knn_split",
        "cuprim_knn_visits",
        "cuprim_knn_radius",
        "cuprim_knn_all",
        "cuprim_knn_morton"
    ],
    headers: [header!("knn/knn.cuh")]
);

// The same file with the queries an input expression (CUPRIM_KNN_X): the
// k-nearest query (with its split) and the Morton codes only.
template!(
    KNN_QUERY_X,
    "knn/query.cu",
    ["cuprim_knn_query", "cuprim_knn_query_capped", "cuprim_knn_split", "cuprim_knn_morton"],
    headers: [header!("knn/knn.cuh")]
);

/// The query kernels for points `P` with the candidate list compiled for
/// `k`, and how the traversal uses the boxes; with an `input`, the module
/// whose k-nearest query and Morton codes read that expression of queries.
pub(crate) struct QueryPlan<'a, P, X = Leaf<'static, f32>> {
    k_bucket: u32,
    /// The candidates in a heap in shared memory (`plan::column_heap`).
    column: bool,
    policy: Policy,
    box_after: u32,
    input: Option<&'a X>,
    _p: PhantomData<P>,
}

impl<'a, P: Point> QueryPlan<'a, P> {
    /// The module reading the queries from the expression `input` (whose
    /// items are `P`'s `PointValue`).
    pub fn of_input<X: Node>(&self, input: &'a X) -> QueryPlan<'a, P, X> {
        QueryPlan {
            k_bucket: self.k_bucket,
            column: self.column,
            policy: self.policy,
            box_after: self.box_after,
            input: Some(input),
            _p: PhantomData,
        }
    }
}

impl<P: Point> QueryPlan<'static, P> {
    pub fn new(arch: u32, k: usize) -> Self {
        Self::with_box_order(arch, k, None)
    }

    /// `box_after`: the visits after which a walk orders children by their
    /// boxes (before: by the plane, with each box checked on entry; see
    /// `kernels/knn/query.cu`), or `None` for [`box_order_after`]'s.
    pub fn with_box_order(arch: u32, k: usize, box_after: Option<u32>) -> Self {
        let k_bucket = bucket(k);
        let column = column_heap(k_bucket);
        let mut policy = query_policy(arch);
        if column {
            policy.block = column_block();
        }
        QueryPlan {
            k_bucket,
            column,
            policy,
            box_after: box_after.unwrap_or_else(|| box_order_after(P::DIM, k_bucket, column)),
            input: None,
            _p: PhantomData,
        }
    }
}

impl<P: Point, X: Node> Specialise for QueryPlan<'_, P, X> {
    fn template(&self) -> &'static Template {
        if self.input.is_some() {
            &KNN_QUERY_X
        } else {
            &KNN_QUERY
        }
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_common::<P, W>(w, self.k_bucket);
        w.constant("CUPRIM_KNN_BOX_ORDER_AFTER", self.box_after as i64);
        if self.column {
            w.constant("CUPRIM_KNN_COLUMN", 1);
        }
        if let Some(x) = self.input {
            write_input(x, w);
        }
    }
}

/// `cuprim_knn_query(nodes, boxes, n, nb, depth, queries, order, q, k, out_d, out_i)`.
#[allow(clippy::type_complexity)]
fn nearest<F: Coord, A: KernelArg>() -> Entry<(Ptr<u32>, Ptr<u32>, u32, u32, u32, A, Ptr<u32>, u64, u32, Ptr<F>, Ptr<u32>)> {
    // SAFETY: cuprim_knn_query(const KnnNode* nodes, const KnnBox* boxes, u32
    // n, u32 nb, u32 depth, queries, const u32* order, u64 q, u32 k,
    // F* out_d, u32* out_i) in kernels/knn/query.cu reads n node records, nb
    // boxes, q queries and, when order is not null, q row ids below the rows
    // of out_*; writes those rows of k; its traversal stack (depth entries
    // per thread, never more) is the dynamic shared memory, depth * blockDim
    // * (sizeof(F) + 4) bytes. `queries` is `const F*` (A = Ptr<F>) in the
    // buffer module, the expression KnnIn (A = ExprArgs, q elements) in the
    // module of one (see `Queries`).
    unsafe { Entry::declare("cuprim_knn_query") }
}

/// `cuprim_knn_query_capped(nodes, boxes, n, nb, depth, queries, order, q, k, out_d, out_i, budget, hard, hard_rows)`.
#[allow(clippy::type_complexity)]
fn nearest_capped<F: Coord, A: KernelArg>() -> Entry<(
    Ptr<u32>,
    Ptr<u32>,
    u32,
    u32,
    u32,
    A,
    Ptr<u32>,
    u64,
    u32,
    Ptr<F>,
    Ptr<u32>,
    u32,
    Ptr<u32>,
    Ptr<u32>,
)> {
    // SAFETY: as cuprim_knn_query, with u32 budget, u32* hard and u32*
    // hard_rows last: it leaves the rows of the queries it counts in
    // hard[0] (atomically) and lists in hard_rows (at most q) unwritten.
    unsafe { Entry::declare("cuprim_knn_query_capped") }
}

/// `cuprim_knn_split(nodes, boxes, n, nb, depth, queries, hard, hard_rows, q, level, k, out_d, out_i)`.
#[allow(clippy::type_complexity)]
fn split<F: Coord, A: KernelArg>() -> Entry<(
    Ptr<u32>,
    Ptr<u32>,
    u32,
    u32,
    u32,
    A,
    Ptr<u32>,
    Ptr<u32>,
    u32,
    u32,
    u32,
    Ptr<F>,
    Ptr<u32>,
)> {
    // SAFETY: cuprim_knn_split(const KnnNode* nodes, const KnnBox* boxes,
    // u32 n, u32 nb, u32 depth, queries, u32* hard, const u32* hard_rows,
    // u32 q, u32 level, u32 k, F* out_d, u32* out_i) reads the tree as
    // cuprim_knn_query does, hard[0] and the first min(hard[0], q) rows of
    // hard_rows (each below q), takes tickets in hard[1], counts its blocks
    // in hard[2] (its last block zeroes all three), and writes those rows
    // of out_*; its dynamic shared memory is cuprim_knn_query's with
    // `depth` at least max(tree depth, CUPRIM_K).
    unsafe { Entry::declare("cuprim_knn_split") }
}

/// `cuprim_knn_visits(nodes, boxes, n, nb, depth, queries, order, q, k, out_d, out_i, visits)`.
#[allow(clippy::type_complexity)]
fn nearest_counted<F: Coord>() -> Entry<(
    Ptr<u32>,
    Ptr<u32>,
    u32,
    u32,
    u32,
    Ptr<F>,
    Ptr<u32>,
    u64,
    u32,
    Ptr<F>,
    Ptr<u32>,
    Ptr<u32>,
)> {
    // SAFETY: as cuprim_knn_query, with u32* visits last, of which it
    // writes q.
    unsafe { Entry::declare("cuprim_knn_visits") }
}

/// `cuprim_knn_radius(nodes, boxes, n, nb, depth, queries, order, q, k, bound, out_d, out_i, counts)`.
#[allow(clippy::type_complexity)]
fn radius<F: Coord>() -> Entry<(
    Ptr<u32>,
    Ptr<u32>,
    u32,
    u32,
    u32,
    Ptr<F>,
    Ptr<u32>,
    u64,
    u32,
    F,
    Ptr<F>,
    Ptr<u32>,
    Ptr<u32>,
)> {
    // SAFETY: as cuprim_knn_query, with F bound after k and u32* counts
    // last, one per row written.
    unsafe { Entry::declare("cuprim_knn_radius") }
}

/// `cuprim_knn_all(nodes, boxes, n, nb, depth, k, out_d, out_i)`.
#[allow(clippy::type_complexity)]
fn all<F: Coord>() -> Entry<(Ptr<u32>, Ptr<u32>, u32, u32, u32, u32, Ptr<F>, Ptr<u32>)> {
    // SAFETY: cuprim_knn_all(const KnnNode* nodes, const KnnBox* boxes, u32
    // n, u32 nb, u32 depth, u32 k, F* out_d, u32* out_i) reads n node records
    // (whose indices are a permutation of 0..n) and nb boxes, writes n rows
    // of k; the same shared-memory stack as cuprim_knn_query.
    unsafe { Entry::declare("cuprim_knn_all") }
}

/// Morton codes of the queries in the tree's bounding box, and `order = 0..q`.
fn morton<F: Coord, A: KernelArg>() -> Entry<(A, u64, Ptr<F>, Ptr<u32>, Ptr<u32>)> {
    // SAFETY: cuprim_knn_morton(queries, u64 q, const F* bounds, u32* codes,
    // u32* order) reads q queries of CUPRIM_DIM coordinates and 2 *
    // CUPRIM_DIM bounds, writes q codes and q ids; `queries` as for
    // cuprim_knn_query.
    unsafe { Entry::declare("cuprim_knn_morton") }
}

/// Where the queries come from: a buffer, or an input expression with its
/// kernel parameter (the caller's bounds check wrote its flag; only the
/// k-nearest mode). The module and the parameter come from one place.
// (Built once per call and matched in place: the kernel parameter's 512
// bytes need no box.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Queries<'a, P: Point, X> {
    Buffer(Ptr<P>),
    Expr(&'a X, ExprArgs),
}

/// A built tree's device buffers.
pub(crate) struct Tree<'a, F: Coord> {
    pub words: &'a DeviceVec<u32>,
    pub bounds: &'a DeviceVec<F>,
    pub boxes: &'a DeviceVec<u32>,
    pub nb: usize,
    pub n: usize,
    /// The traversal's use of the boxes (`QueryPlan::with_box_order`).
    pub box_after: Option<u32>,
}

impl<F: Coord> Tree<'_, F> {
    /// The parameters every tree kernel starts with: (nodes, boxes, n, nb,
    /// depth), the depth being the stack's entries a thread needs.
    fn args(&self) -> Result<(Ptr<u32>, Ptr<u32>, u32, u32, u32)> {
        Ok((
            ptr(self.words)?,
            ptr(self.boxes)?,
            self.n as u32,
            self.nb as u32,
            depth(self.n).max(1),
        ))
    }
}

/// What a query launch computes.
pub(crate) enum Mode<F> {
    /// k nearest; with `Some(visits)`, the nodes each query visited.
    Nearest(Option<Ptr<u32>>),
    /// Radius search: (squared bound, counts).
    Radius(F, Ptr<u32>),
}

/// The block shape of the tree kernels of `plan`: `items` threads with the
/// stack of a tree of `n` nodes (and the candidate heap's columns).
fn tree_grid<P: Point, X>(plan: &QueryPlan<'_, P, X>, items: u64, n: usize) -> Result<Grid> {
    let block = plan.policy.block;
    let columns = depth(n).max(1) + if plan.column { plan.k_bucket } else { 0 };
    Ok(Grid {
        blocks: u32::try_from(items.div_ceil(block as u64)).map_err(|_| Error::InvalidArgument(format!("{items} queries are too many")))?,
        threads: block,
        shared: columns * block * (std::mem::size_of::<P::Coord>() as u32 + 4),
    })
}

/// kd-tree queries: `q` queries at `queries`, `rows.k` slots per row;
/// `order`, when given, the row of each of the q threads (otherwise
/// `spatial` processes the queries in Morton order, or in theirs).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<P: Point>(
    dev: &CudaDevice,
    device: &Device,
    tree: &Tree<'_, P::Coord>,
    queries: Ptr<P>,
    q: usize,
    spatial: bool,
    given_order: Option<Ptr<u32>>,
    mode: Mode<P::Coord>,
    rows: Rows<P::Coord>,
) -> Result<()> {
    let queries = Queries::<P, Leaf<'static, f32>>::Buffer(queries);
    run_of(dev, device, tree, queries, q, spatial, given_order, mode, rows)
}

/// [`run`] with the queries a buffer or an expression of `q` points (of
/// `P`'s `PointValue`: the callers' bound), read where the buffer is read.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_of<P: Point, X: Node>(
    dev: &CudaDevice,
    device: &Device,
    tree: &Tree<'_, P::Coord>,
    queries: Queries<'_, P, X>,
    q: usize,
    spatial: bool,
    given_order: Option<Ptr<u32>>,
    mode: Mode<P::Coord>,
    rows: Rows<P::Coord>,
) -> Result<()> {
    let plan = QueryPlan::<P>::with_box_order(dev.arch(), rows.k, tree.box_after);
    let grid = tree_grid(&plan, q as u64, tree.n)?;
    let module = match &queries {
        Queries::Buffer(_) => dev.module(&plan)?,
        Queries::Expr(x, _) => {
            if !matches!(mode, Mode::Nearest(None)) {
                return Err(Error::Unsupported("kNN queries from an expression: k nearest only".into()));
            }
            dev.module(&plan.of_input(*x))?
        }
    };
    let q64 = q as u64;
    let mut order = None;
    if given_order.is_none() && spatial && tree.n > 0 {
        let policy = elementwise(dev.arch());
        let mut codes = DeviceVec::<u32>::alloc_uninit(device, q)?;
        let mut ids = DeviceVec::<u32>::alloc_uninit(device, q)?;
        let (bounds, c, i) = (ptr(tree.bounds)?, ptr_mut(&mut codes)?, ptr_mut(&mut ids)?);
        let grid = Grid::new(policy.grid(q64, dev.sm_count()), policy.block);
        match queries {
            Queries::Buffer(p) => dev.launch(&module, morton::<P::Coord, _>(), grid, (p.cast::<P::Coord>(), q64, bounds, c, i))?,
            Queries::Expr(_, a) => dev.launch(&module, morton::<P::Coord, _>(), grid, (a, q64, bounds, c, i))?,
        }
        codes.sort_pairs_with(&mut ids, SortOptions::new().bits(0, 30))?;
        order = Some(ids);
    }
    let order_ptr = match (&order, given_order) {
        (_, Some(p)) => p,
        (Some(o), None) => ptr(o)?,
        (None, None) => Ptr::null(),
    };
    let ((nodes, boxes, n32, nb32, depth), k32) = (tree.args()?, rows.k as u32);
    let queries = match queries {
        Queries::Expr(_, a) => {
            nearest_split(dev, device, &module, &plan, tree, grid, a, order_ptr, q64, rows)?;
            drop(order);
            return Ok(());
        }
        Queries::Buffer(p) => p.cast::<P::Coord>(),
    };
    match mode {
        Mode::Nearest(None) => nearest_split(dev, device, &module, &plan, tree, grid, queries, order_ptr, q64, rows)?,
        Mode::Nearest(Some(visits)) => {
            let args = (
                nodes,
                boxes,
                n32,
                nb32,
                depth,
                queries,
                order_ptr,
                q64,
                k32,
                rows.distances,
                rows.indices,
                visits,
            );
            dev.launch(&module, nearest_counted::<P::Coord>(), grid, args)?;
        }
        Mode::Radius(bound, counts) => {
            let args = (
                nodes,
                boxes,
                n32,
                nb32,
                depth,
                queries,
                order_ptr,
                q64,
                k32,
                bound,
                rows.distances,
                rows.indices,
                counts,
            );
            dev.launch(&module, radius::<P::Coord>(), grid, args)?;
        }
    }
    // Freed in stream order, after the launch that reads it.
    drop(order);
    Ok(())
}

/// The k-nearest launch, one thread per query (`grid`), with (where
/// [`splits`]) the queries whose walk runs past [`split_budget`] nodes done again by
/// `cuprim_knn_split`, a block each, its threads sharing the walk (so that
/// a few long walks do not hold the kernel's tail); the rows are the same.
#[allow(clippy::too_many_arguments)]
fn nearest_split<P: Point, X, A: KernelArg>(
    dev: &CudaDevice,
    device: &Device,
    module: &Module,
    plan: &QueryPlan<'_, P, X>,
    tree: &Tree<'_, P::Coord>,
    grid: Grid,
    queries: A,
    order: Ptr<u32>,
    q: u64,
    rows: Rows<P::Coord>,
) -> Result<()> {
    let ((nodes, boxes, n32, nb32, depth), k32) = (tree.args()?, rows.k as u32);
    let budget = split_budget();
    // The split's rows are u32 (and its tickets, at most q plus a ticket a
    // block, too), and it takes the register lists only (the heaps' walks
    // gain nothing from it).
    if !splits(plan.k_bucket, plan.column) || q >= 1 << 31 || tree.n <= budget as usize {
        let args = (nodes, boxes, n32, nb32, depth, queries, order, q, k32, rows.distances, rows.indices);
        return dev.launch(module, nearest::<P::Coord, A>(), grid, args);
    }
    let block = plan.policy.block;
    // The split's stack also holds a register list's k slots for the merge.
    let stack = depth.max(plan.k_bucket);
    let columns = stack + if plan.column { plan.k_bucket } else { 0 };
    let mut shape = Grid {
        blocks: 1,
        threads: block,
        shared: columns * block * (std::mem::size_of::<P::Coord>() as u32 + 4),
    };
    shape.blocks = (dev.sm_count() * dev.occupancy(module, split::<P::Coord, A>(), shape)?).min(q as u32);
    let level = (split_fanout() * block).ilog2().min(depth - 1);
    // The list of rows is the call's own (freed in stream order, as the
    // Morton order is), not the device's scratch arena, which would keep
    // 4 bytes a query after a large call. The counters are the device's
    // (zero between calls; the split's last block clears them): no memset.
    let mut rows_left = DeviceVec::<u32>::alloc_uninit(device, q as usize)?;
    let listed = ptr_mut(&mut rows_left)?;
    let hard = dev.counter(Counter::KnnHard);
    let args = (
        nodes,
        boxes,
        n32,
        nb32,
        depth,
        queries,
        order,
        q,
        k32,
        rows.distances,
        rows.indices,
        budget,
        hard,
        listed,
    );
    dev.launch(module, nearest_capped::<P::Coord, A>(), grid, args)?;
    let args = (
        nodes,
        boxes,
        n32,
        nb32,
        stack,
        queries,
        hard,
        listed,
        q as u32,
        level,
        k32,
        rows.distances,
        rows.indices,
    );
    dev.launch(module, split::<P::Coord, A>(), shape, args)
}

/// All-k-nearest over the tree's own points: one row per point (`tree.n`
/// rows of `rows.k`), in the points' original order.
pub(crate) fn run_all<P: Point>(dev: &CudaDevice, tree: &Tree<'_, P::Coord>, rows: Rows<P::Coord>) -> Result<()> {
    if tree.n == 0 {
        return Ok(());
    }
    let plan = QueryPlan::<P>::with_box_order(dev.arch(), rows.k, tree.box_after);
    let module = dev.module(&plan)?;
    let grid = tree_grid(&plan, tree.n as u64, tree.n)?;
    let (nodes, boxes, n32, nb32, depth) = tree.args()?;
    let args = (nodes, boxes, n32, nb32, depth, rows.k as u32, rows.distances, rows.indices);
    dev.launch(&module, all::<P::Coord>(), grid, args)
}
