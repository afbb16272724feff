//! kd-tree queries on the device (`kernels/knn/query.cu`): k nearest and
//! radius search, one thread per query, optionally in Morton order.

use super::geometry::{depth, Coord, Point};
use super::plan::{bucket, ptr, ptr_mut, query_policy, write_common, Rows};
use crate::algo::policy::{elementwise, Policy};
use crate::algo::sort::{SortMutOps, SortOptions};
use crate::device::{CudaDevice, Device, Entry, Grid, Ptr};
use crate::error::{Error, Result};
use crate::jit::{header, template, SpecWriter, Specialise, Template};
use crate::vec::DeviceVec;
use std::marker::PhantomData;

template!(
    KNN_QUERY,
    "knn/query.cu",
    ["cuprim_knn_query", "cuprim_knn_radius", "cuprim_knn_morton"],
    headers: [header!("knn/knn.cuh")]
);

/// The query kernels for points `P` with the candidate list compiled for `k`.
pub(crate) struct QueryPlan<P> {
    k_bucket: u32,
    policy: Policy,
    _p: PhantomData<P>,
}

impl<P: Point> QueryPlan<P> {
    pub fn new(arch: u32, k: usize) -> Self {
        QueryPlan {
            k_bucket: bucket(k),
            policy: query_policy(arch),
            _p: PhantomData,
        }
    }
}

impl<P: Point> Specialise for QueryPlan<P> {
    fn template(&self) -> &'static Template {
        &KNN_QUERY
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_common::<P, W>(w, self.k_bucket);
    }
}

/// `cuprim_knn_query(nodes, n, depth, queries, order, q, k, out_d, out_i)`.
fn nearest<F: Coord>() -> Entry<(Ptr<u32>, u32, u32, Ptr<F>, Ptr<u32>, u64, u32, Ptr<F>, Ptr<u32>)> {
    // SAFETY: cuprim_knn_query(const KnnNode* nodes, u32 n, u32 depth, const
    // F* queries, const u32* order, u64 q, u32 k, F* out_d, u32* out_i) in
    // kernels/knn/query.cu reads n node records, q queries and, when order
    // is not null, a permutation of 0..q; writes q rows of k; its traversal
    // stack (depth entries per thread, never more) is the dynamic shared
    // memory, depth * blockDim * (sizeof(F) + 4) bytes.
    unsafe { Entry::declare("cuprim_knn_query") }
}

/// `cuprim_knn_radius(nodes, n, depth, queries, order, q, k, bound, out_d, out_i, counts)`.
fn radius<F: Coord>() -> Entry<(Ptr<u32>, u32, u32, Ptr<F>, Ptr<u32>, u64, u32, F, Ptr<F>, Ptr<u32>, Ptr<u32>)> {
    // SAFETY: as cuprim_knn_query, with F bound after k and u32* counts
    // last, of which it writes q.
    unsafe { Entry::declare("cuprim_knn_radius") }
}

/// Morton codes of the queries in the tree's bounding box, and `order = 0..q`.
fn morton<F: Coord>() -> Entry<(Ptr<F>, u64, Ptr<F>, Ptr<u32>, Ptr<u32>)> {
    // SAFETY: cuprim_knn_morton(const F* queries, u64 q, const F* bounds,
    // u32* codes, u32* order) reads q queries of CUPRIM_DIM coordinates and
    // 2 * CUPRIM_DIM bounds, writes q codes and q ids.
    unsafe { Entry::declare("cuprim_knn_morton") }
}

/// A built tree's device buffers.
pub(crate) struct Tree<'a, F: Coord> {
    pub words: &'a DeviceVec<u32>,
    pub bounds: &'a DeviceVec<F>,
    pub n: usize,
}

/// kd-tree queries: `q` queries at `queries`, `rows.k` slots per row;
/// `radius` = (squared bound, counts) for a radius search; `spatial`
/// processes the queries in Morton order.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<P: Point>(
    dev: &CudaDevice,
    device: &Device,
    tree: &Tree<'_, P::Coord>,
    queries: Ptr<P>,
    q: usize,
    spatial: bool,
    radius_bound: Option<(P::Coord, Ptr<u32>)>,
    rows: Rows<P::Coord>,
) -> Result<()> {
    let plan = QueryPlan::<P>::new(dev.arch(), rows.k);
    let module = dev.module(&plan)?;
    let (q64, queries) = (q as u64, queries.cast::<P::Coord>());
    let mut order = None;
    if spatial && tree.n > 0 {
        let policy = elementwise(dev.arch());
        let mut codes = DeviceVec::<u32>::alloc_uninit(device, q)?;
        let mut ids = DeviceVec::<u32>::alloc_uninit(device, q)?;
        let args = (queries, q64, ptr(tree.bounds)?, ptr_mut(&mut codes)?, ptr_mut(&mut ids)?);
        dev.launch(
            &module,
            morton::<P::Coord>(),
            Grid::new(policy.grid(q64, dev.sm_count()), policy.block),
            args,
        )?;
        codes.sort_pairs_with(&mut ids, SortOptions::new().bits(0, 30))?;
        order = Some(ids);
    }
    let order_ptr = match &order {
        Some(o) => ptr(o)?,
        None => Ptr::null(),
    };
    let (nodes, n32, k32, depth) = (ptr(tree.words)?, tree.n as u32, rows.k as u32, depth(tree.n).max(1));
    let block = plan.policy.block;
    let grid = Grid {
        blocks: u32::try_from(q64.div_ceil(block as u64)).map_err(|_| Error::InvalidArgument(format!("{q} queries are too many")))?,
        threads: block,
        shared: depth * block * (std::mem::size_of::<P::Coord>() as u32 + 4),
    };
    match radius_bound {
        None => {
            let args = (nodes, n32, depth, queries, order_ptr, q64, k32, rows.distances, rows.indices);
            dev.launch(&module, nearest::<P::Coord>(), grid, args)?;
        }
        Some((bound, counts)) => {
            let args = (
                nodes,
                n32,
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
