//! What the kNN device files share: the tuning of the query and brute-force
//! kernels, the candidate-list sizes compiled, the specialisation every kNN
//! kernel starts with, and device addresses of the family's temporaries.

use super::geometry::{node_bytes, Point};
use crate::algo::policy::Policy;
use crate::device::Ptr;
use crate::element::Storable;
use crate::error::{Error, Result};
use crate::jit::SpecWriter;
use crate::vec::raw::{Mem, Sealed as _};
use crate::vec::DeviceVec;

/// kd-tree queries (one thread per query) and the brute-force merge.
pub(crate) fn query_policy(_arch: u32) -> Policy {
    // 128 threads: the stack (depth x 128 x (sizeof(F) + 4) B) fits 48 KiB below 2^31 points; 1.31 ms for 1M k=8 queries of 1M 3-D points (H100, run 759512f).
    Policy {
        block: 128,
        unroll: 1,
        blocks_per_sm: 16,
    }
}

/// The candidate list of the tree kernels for a k bucket (registers, or 0:
/// a heap in global memory): from `COLUMN_HEAP_FROM` slots up, a heap in
/// the thread's columns of shared memory instead of the register list
/// (`kernels/knn/query.cu`). Experiment override (feature `knn-tuning`):
/// `CUPRIM_KNN_COLUMN_FROM` = the smallest bucket (0: never).
pub(crate) fn column_heap(bucket: u32) -> bool {
    let from = tuned("CUPRIM_KNN_COLUMN_FROM", COLUMN_HEAP_FROM);
    from > 0 && bucket >= from
}

// 32: uniform 3-D 1M x 1M, registers against the heap of two arrays (blocks of 32): k = 16 2.90 / 3.38 ms, k = 32 8.14 / 7.58, k = 64 25.75 / 20.21 (packed f32 slots since: 7.06 and 18.57); clustered-away k = 64 97.6 / 73.3 (H200, runs of 48febcf+heap).
const COLUMN_HEAP_FROM: u32 = 32;

/// Nodes a k-nearest query's walk may visit in the one-thread-per-query
/// kernel before it is left to the split kernel, where a block shares it.
/// Experiment override (feature `knn-tuning`): `CUPRIM_KNN_SPLIT_BUDGET`.
pub(crate) fn split_budget() -> u32 {
    tuned("CUPRIM_KNN_SPLIT_BUDGET", SPLIT_BUDGET)
}

// 4096: shell-away 3-D k = 8 (1M x 1M) 64.1 ms without the split, 54.1 / 30.4 / 20.0 / 24.5 with budgets 2048 / 4096 / 8192 / 16384, torus-away 11.9 against 16.7 / 11.0 / 12.1 / 12.0 (plane order, fanout 4-8); in box order fanout 16: 12.34 / 6.72 ms at 4096 (H200, h200-knn-split-d567acd calls 1-2).
const SPLIT_BUDGET: u32 = 4096;

/// Whether the queries of a candidate list of `bucket` slots (`column`:
/// the heap in shared memory) leave their long walks to the split kernel:
/// the register lists only.
// Heaps: 3-D k = 64 surface-away 47.2 ms split against 45.4 not, clustered-away 49.6 / 48.7, 8-D uniform 212 / 40.9 (H200, h200-knn-split-d567acd call 5): each of a block's lists fills k slots before it prunes.
pub(crate) fn splits(bucket: u32, column: bool) -> bool {
    bucket > 0 && !column
}

/// Subtrees per thread the split kernel shares a walk into (rounded down
/// to a power of two of subtrees, at most the tree's last full level).
/// Experiment override (feature `knn-tuning`): `CUPRIM_KNN_SPLIT_FANOUT`.
pub(crate) fn split_fanout() -> u32 {
    tuned("CUPRIM_KNN_SPLIT_FANOUT", SPLIT_FANOUT).max(1)
}

// 16: shell-away 3-D k = 8 at budget 4096 29.9 / 25.3 / 22.7 ms with fanouts 4 / 8 / 16, torus-away 10.99 / 10.88 / 10.71 (plane order; box order 14.8 / 13.2 / 12.3 and 6.92 / 6.84 / 6.72) (H200, h200-knn-split-d567acd call 2).
const SPLIT_FANOUT: u32 = 16;

/// Threads per block of the tree kernels with the column heap.
/// Experiment override (feature `knn-tuning`): `CUPRIM_KNN_COLUMN_BLOCK`.
pub(crate) fn column_block() -> u32 {
    tuned("CUPRIM_KNN_COLUMN_BLOCK", COLUMN_BLOCK)
}

// 32: uniform k = 64 20.21 / 21.31 / 25.70 ms in blocks of 32 / 64 / 128, k = 32 7.58 / 7.89 / 8.21 (H200, run of 48febcf+heap): the columns, 680 B a thread at k = 64, allow about 10 warps an SM, in finer steps with smaller blocks.
const COLUMN_BLOCK: u32 = 32;

/// `value`, or with the feature `knn-tuning` the number in the environment
/// variable `var` where it holds one. A default build reads nothing.
fn tuned(var: &str, value: u32) -> u32 {
    #[cfg(feature = "knn-tuning")]
    if let Some(v) = std::env::var(var).ok().and_then(|v| v.parse().ok()) {
        return v;
    }
    let _ = var;
    value
}

/// The visits after which a kd-tree walk over points of `dim` coordinates
/// with a candidate list of `bucket` slots (`column`: the heap in shared
/// memory) orders children by their boxes (loading both with the node)
/// rather than by the splitting plane with a box check on entry: 0 (box
/// order throughout), but u32::MAX (plane order) for the heap in 3-D and
/// for the heap in the output row (k > 64, not measured in box order).
/// Experiment override (feature `knn-tuning`): `CUPRIM_KNN_BOX_ORDER_AFTER`.
pub(crate) fn box_order_after(dim: usize, bucket: u32, column: bool) -> u32 {
    let after = if bucket == 0 || (column && dim == 3) {
        u32::MAX
    } else {
        BOX_ORDER_AFTER
    };
    tuned("CUPRIM_KNN_BOX_ORDER_AFTER", after)
}

// 0: 3-D k = 8, 1M x 1M, uniform / clustered-away / torus-away / shell-away 1.097 / 4.83 / 6.87 / 12.99 ms, against 1.213 / 5.69 / 10.77 / 22.61 in plane order and 1.33 / 5.06 / 7.92 / 14.77 switching after 128 visits (H200, h200-knn-split-d567acd call 3, with the split); box order also wins at k = 1 in 2-D, 3-D and 8-D and at k = 64 in 2-D and 8-D, the heap in 3-D keeps plane order (uniform / clustered-away k = 64 16.6 / 61.2 ms against 17.7 / 76.1 in box order; H200, call 6).
const BOX_ORDER_AFTER: u32 = 0;

/// Brute force for points of `point_bytes` bytes: (queries per block,
/// points per shared tile).
pub(crate) fn brute_shape(_arch: u32, point_bytes: usize) -> (u32, u32) {
    let pb = point_bytes.max(1) as u32;
    // 128 queries per block (shared query columns under 32 KiB past 128 B), tiles under 12 KiB: 19.6 ms for 10K k=8 queries of 1M 16-D points (H100, run 759512f).
    let bq = if pb <= 128 { 128 } else { ((32768 / pb) / 32 * 32).clamp(32, 128) };
    let tile = (12288 / pb).clamp(8, 256);
    (bq, tile)
}

/// The candidate-list size compiled for `k`: registers up to 64, else 0
/// (a heap in global memory).
pub(crate) fn bucket(k: usize) -> u32 {
    match k {
        1 => 1,
        2..=4 => 4,
        5..=8 => 8,
        9..=16 => 16,
        17..=32 => 32,
        33..=64 => 64,
        _ => 0,
    }
}

/// The declarations every kNN kernel is specialised on (`kernels/knn/knn.cuh`).
pub(crate) fn write_common<P: Point, W: SpecWriter>(w: &mut W, k_bucket: u32) {
    w.elem::<P::Coord>("F");
    w.constant("CUPRIM_DIM", P::DIM as i64);
    w.constant("CUPRIM_K", k_bucket as i64);
    w.constant("CUPRIM_NODE_BYTES", node_bytes::<P>() as i64);
}

/// The declarations of a module whose points (build) or queries (query)
/// come from an input expression (`kernels/knn/knn.cuh`): written only for
/// one, so the buffer modules keep their text.
pub(crate) fn write_input<X: crate::expr::node::Node, W: SpecWriter>(x: &X, w: &mut W) {
    w.constant("CUPRIM_KNN_X", 1);
    let root = x.write_type(w, &mut 0);
    w.piece(root, |root| format!("typedef cuprim_e{root} KnnIn;"));
}

/// The device address of a vector the caller holds for the call.
pub(crate) fn ptr<T: Storable>(v: &DeviceVec<T>) -> Result<Ptr<T>> {
    match v.mem() {
        Mem::Cuda { ptr, .. } => Ok(Ptr::from_raw(ptr)),
        Mem::Host(_) => Err(Error::DeviceMismatch { op: "kNN" }),
    }
}

/// [`ptr`] of a vector the call writes.
pub(crate) fn ptr_mut<T: Storable>(v: &mut DeviceVec<T>) -> Result<Ptr<T>> {
    crate::algo::cuda_ptr_mut(v, "kNN")
}

/// The output rows of a search: `k` slots per query.
#[derive(Clone, Copy)]
pub(crate) struct Rows<F> {
    /// Point indices.
    pub indices: Ptr<u32>,
    /// Distances.
    pub distances: Ptr<F>,
    /// Slots per row.
    pub k: usize,
}

/// Queries [`KnnMethod::Auto`](super::KnnMethod::Auto) runs through a
/// built tree to estimate the cost of the rest.
// 1024: one thread per query, so the sample is a few blocks (under 0.2% of a 1M-query call's work), and large enough that one slow region does not decide alone.
pub(crate) const COST_SAMPLE: usize = 1024;

// The cost model of `KnnMethod::Auto`, in nanoseconds of the GPU; only
// ratios matter (the host backend uses the same decision).
// Brute force per (query, point) is BRUTE_NS x (D + 7): 8.48 ms for 10K x 1M 3-D, 19.8 ms for 10K x 1M 16-D, k = 8 (H100, run of ae63d3d).
const BRUTE_NS: f64 = 8.7e-5;
// Build per (point, pass), D + depth passes: 2.49 / 2.61 / 3.32 ms for 1M points of D = 2 / 3 / 8 (H100, run of ae63d3d).
const BUILD_NS: f64 = 0.11;
// Tree query per visited node is VISIT_NS x (D + 2 + k / 3) x node bytes / 16: 3-D k = 8 1M queries, 82 visits each, 1.50 ms; 8-D 100K, 1964 visits, 17.1 ms; 3-D k = 64 26.4 ms at 330 visits (H100, run of ae63d3d).
const VISIT_NS: f64 = 2.3e-3;

/// Estimated time of brute force: `q` queries against `n` points of `dim` coordinates.
pub(crate) fn brute_cost(n: usize, q: usize, dim: usize) -> f64 {
    n as f64 * q as f64 * (dim + 7) as f64 * BRUTE_NS
}

/// Estimated time of building a tree over `n` points of `dim` coordinates.
pub(crate) fn build_cost(n: usize, dim: usize) -> f64 {
    n as f64 * (dim + super::geometry::depth(n) as usize) as f64 * BUILD_NS
}

/// Estimated time of `q` tree queries for `k` neighbours visiting `visits`
/// nodes each, for points `P`.
pub(crate) fn tree_query_cost<P: Point>(q: usize, visits: f64, k: usize) -> f64 {
    let per_visit = (P::DIM + 2) as f64 + k as f64 / 3.0;
    q as f64 * visits * per_visit * (node_bytes::<P>() / 16) as f64 * VISIT_NS
}
