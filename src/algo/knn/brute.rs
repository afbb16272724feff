//! Brute force on the device (`kernels/knn/brute.cu`): blocks of queries
//! stream tiles of points through shared memory; with many points per
//! query the points are split into chunks whose candidates a second kernel
//! merges.

use super::geometry::{Coord, Point};
use super::plan::{brute_shape, bucket, ptr_mut, query_policy, write_common, Rows};
use crate::device::{CudaDevice, Device, Entry, Grid, Ptr};
use crate::error::{Error, Result};
use crate::jit::{header, template, SpecWriter, Specialise, Template};
use crate::vec::DeviceVec;
use std::marker::PhantomData;
use std::mem::size_of;

template!(KNN_BRUTE, "knn/brute.cu", ["cuprim_knn_brute", "cuprim_knn_merge"], headers: [header!("knn/knn.cuh")]);

/// The brute-force kernels for points `P` with the candidate list compiled
/// for `k`, and their shape.
pub(crate) struct BrutePlan<P> {
    k_bucket: u32,
    /// Queries (threads) per block.
    bq: u32,
    /// Points per shared-memory tile.
    tile: u32,
    _p: PhantomData<P>,
}

impl<P: Point> BrutePlan<P> {
    pub fn new(arch: u32, k: usize) -> Self {
        let (bq, tile) = brute_shape(arch, size_of::<P>());
        BrutePlan {
            k_bucket: bucket(k),
            bq,
            tile,
            _p: PhantomData,
        }
    }
}

impl<P: Point> Specialise for BrutePlan<P> {
    fn template(&self) -> &'static Template {
        &KNN_BRUTE
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_common::<P, W>(w, self.k_bucket);
        w.constant("CUPRIM_BQ", self.bq as i64);
        w.constant("CUPRIM_TILE", self.tile as i64);
        w.constant("CUPRIM_REG_QUERY", (size_of::<P>() <= 128) as i64);
    }
}

/// `cuprim_knn_brute(points, n, chunk_len, queries, q, k, chunks, qblocks, out_d, out_i)`.
fn brute<F: Coord>() -> Entry<(Ptr<F>, u32, u32, Ptr<F>, u64, u32, u32, u32, Ptr<F>, Ptr<u32>)> {
    // SAFETY: cuprim_knn_brute(const F* points, u32 n, u32 chunk_len, const
    // F* queries, u64 q, u32 k, u32 chunks, u32 qblocks, F* out_d, u32*
    // out_i) in kernels/knn/brute.cu reads n points and q queries and, run
    // as qblocks * chunks blocks of CUPRIM_BQ threads, writes q * chunks * k
    // slots of out_d and out_i.
    unsafe { Entry::declare("cuprim_knn_brute") }
}

/// `cuprim_knn_merge(part_d, part_i, q, k, chunks, out_d, out_i)`.
fn merge<F: Coord>() -> Entry<(Ptr<F>, Ptr<u32>, u64, u32, u32, Ptr<F>, Ptr<u32>)> {
    // SAFETY: cuprim_knn_merge(const F* part_d, const u32* part_i, u64 q,
    // u32 k, u32 chunks, F* out_d, u32* out_i) reads q * chunks * k
    // candidates and writes q rows of k.
    unsafe { Entry::declare("cuprim_knn_merge") }
}

/// Brute force: `q` queries against `n` points, into `rows`.
pub(crate) fn run<P: Point>(
    dev: &CudaDevice,
    device: &Device,
    points: Ptr<P>,
    n: usize,
    queries: Ptr<P>,
    q: usize,
    rows: Rows<P::Coord>,
) -> Result<()> {
    let plan = BrutePlan::<P>::new(dev.arch(), rows.k);
    let module = dev.module(&plan)?;
    let k = rows.k;
    let (chunks, chunk_len) = chunking(q, n, k, plan.bq, plan.tile, size_of::<P::Coord>(), dev.sm_count());
    let qblocks = q.div_ceil(plan.bq as usize);
    let blocks = qblocks
        .checked_mul(chunks)
        .and_then(|b| u32::try_from(b).ok())
        .ok_or_else(|| Error::InvalidArgument(format!("{q} queries are too many")))?;
    let grid = Grid::new(blocks, plan.bq);
    let (points, queries) = (points.cast::<P::Coord>(), queries.cast::<P::Coord>());
    let (n32, cl32, q64, k32, c32, qb32) = (n as u32, chunk_len as u32, q as u64, k as u32, chunks as u32, qblocks as u32);
    if chunks == 1 {
        let args = (points, n32, cl32, queries, q64, k32, c32, qb32, rows.distances, rows.indices);
        return dev.launch(&module, brute::<P::Coord>(), grid, args);
    }
    let slots = q * chunks * k;
    let mut part_d = DeviceVec::<P::Coord>::alloc_uninit(device, slots)?;
    let mut part_i = DeviceVec::<u32>::alloc_uninit(device, slots)?;
    let (pd, pi) = (ptr_mut(&mut part_d)?, ptr_mut(&mut part_i)?);
    dev.launch(
        &module,
        brute::<P::Coord>(),
        grid,
        (points, n32, cl32, queries, q64, k32, c32, qb32, pd, pi),
    )?;
    let policy = query_policy(dev.arch());
    let merge_grid = Grid::new(policy.grid(q64, dev.sm_count()), policy.block);
    dev.launch(
        &module,
        merge::<P::Coord>(),
        merge_grid,
        (pd, pi, q64, k32, c32, rows.distances, rows.indices),
    )
}

/// How to split `n` points among blocks for `q` queries: (chunks, points
/// per chunk, a whole number of tiles). Aims at eight blocks per SM and
/// keeps the per-chunk candidates under 512 MiB.
fn chunking(q: usize, n: usize, k: usize, bq: u32, tile: u32, coord_bytes: usize, sm_count: u32) -> (usize, usize) {
    let qblocks = q.div_ceil(bq as usize).max(1);
    let slot = (coord_bytes + 4) * k;
    let want = (8 * sm_count.max(1) as usize).div_ceil(qblocks);
    let by_memory = ((512usize << 20) / (q * slot).max(1)).max(1);
    let tiles = n.div_ceil(tile as usize).max(1);
    let chunks = want.min(by_memory).min(tiles).max(1);
    let chunk_len = tiles.div_ceil(chunks) * tile as usize;
    (n.div_ceil(chunk_len).max(1), chunk_len)
}
