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

/// The kd-tree traversal orders children by their boxes (loading both with
/// the node) rather than by the splitting plane with a box check on entry.
// TBD (H100 sweep, run TBD).
pub(crate) const CHILD_BOXES: bool = true;

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
// 1024: the mean visits of 1024 evenly spaced queries were within TBD of the 1M-query mean on every bench distribution (H100, run TBD).
pub(crate) const COST_SAMPLE: usize = 1024;

// The cost model of `KnnMethod::Auto`, in nanoseconds of the GPU; only
// ratios matter (the host backend uses the same decision).
// Per (query, point, dimension + 2) of brute force: TBD (H100, run TBD).
const BRUTE_NS: f64 = 1.1e-4;
// Per (point, pass) of the build, D + depth sorting passes: TBD (H100, run TBD).
const BUILD_NS: f64 = 0.35;
// Per node a tree query visits, per (dimension + 2): TBD (H100, run TBD).
const VISIT_NS: f64 = 6.5e-3;

/// Estimated time of brute force: `q` queries against `n` points of `dim` coordinates.
pub(crate) fn brute_cost(n: usize, q: usize, dim: usize) -> f64 {
    n as f64 * q as f64 * (dim + 2) as f64 * BRUTE_NS
}

/// Estimated time of building a tree over `n` points of `dim` coordinates.
pub(crate) fn build_cost(n: usize, dim: usize) -> f64 {
    n as f64 * (dim + super::geometry::depth(n) as usize) as f64 * BUILD_NS
}

/// Estimated time of `q` tree queries visiting `visits` nodes each.
pub(crate) fn tree_query_cost(q: usize, visits: f64, dim: usize) -> f64 {
    q as f64 * visits * (dim + 2) as f64 * VISIT_NS
}
