//! The CUDA side of kNN: specialisations and launches of
//! `kernels/knn_build.cu`, `kernels/knn_query.cu` and `kernels/knn_brute.cu`.

use super::{Coord, Point};
use crate::algo::sort::{SortMutOps, SortOptions};
use crate::device::{kernel_args, CudaDevice, FastKey, Module};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::host::knn::{depth, rank_bits, tag_bits};
use crate::jit::source::{KNN_BRUTE, KNN_BUILD, KNN_QUERY};
use crate::jit::KernelSpec;
use crate::tuning;
use crate::vec::raw::{Mem, MemMut, Sealed as _, SealedMut as _};
use crate::vec::DeviceVec;
use crate::Device;
use std::mem::size_of;
use std::sync::Arc;

/// Bytes of one tree node: the coordinates, the u32 index, padded to 16.
pub(crate) fn node_bytes<P: Point>() -> usize {
    (size_of::<P>() + 4).next_multiple_of(16)
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

fn common<F: Coord>(template: &'static crate::jit::Template, dim: usize, k_bucket: u32, node: usize) -> KernelSpec {
    KernelSpec::new(template)
        .elem::<F>("F")
        .constant("CUPRIM_DIM", dim as i64)
        .constant("CUPRIM_K", k_bucket as i64)
        .constant("CUPRIM_NODE_BYTES", node as i64)
}

/// The build kernels for points `P`.
pub(crate) fn build_spec<P: Point>(arch: u32) -> KernelSpec {
    let _ = arch;
    common::<P::Coord>(&KNN_BUILD, P::DIM, 1, node_bytes::<P>())
}

/// The query kernels for points `P` and candidate list `k_bucket`.
pub(crate) fn query_spec<P: Point>(arch: u32, k_bucket: u32) -> KernelSpec {
    let _ = arch;
    common::<P::Coord>(&KNN_QUERY, P::DIM, k_bucket, node_bytes::<P>())
}

/// The brute-force kernels for points `P` and candidate list `k_bucket`.
pub(crate) fn brute_spec<P: Point>(arch: u32, k_bucket: u32) -> KernelSpec {
    let (bq, tile) = tuning::knn_brute(arch, size_of::<P>());
    common::<P::Coord>(&KNN_BRUTE, P::DIM, k_bucket, node_bytes::<P>())
        .constant("CUPRIM_BQ", bq as i64)
        .constant("CUPRIM_TILE", tile as i64)
        .constant("CUPRIM_REG_QUERY", (size_of::<P>() <= 128) as i64)
}

fn module_for<P: Point>(dev: &CudaDevice, template: &'static str, k_bucket: u32, spec: impl FnOnce() -> KernelSpec) -> Result<Arc<Module>> {
    // The point type (coordinate type and D) is part of the key.
    dev.module_for(FastKey::new::<P, (), ()>(template, k_bucket.to_string()), spec)
}

fn ptr_of<T: crate::Storable>(v: &mut DeviceVec<T>) -> Result<u64> {
    match v.mem_mut() {
        MemMut::Cuda { ptr, .. } => Ok(ptr),
        MemMut::Host(_) => Err(Error::DeviceMismatch { op: "kNN" }),
    }
}

fn const_ptr<T: crate::Storable>(v: &DeviceVec<T>) -> Result<u64> {
    match v.mem() {
        Mem::Cuda { ptr, .. } => Ok(ptr),
        Mem::Host(_) => Err(Error::DeviceMismatch { op: "kNN" }),
    }
}

/// Builds the tree over `n` points at `points`; returns the node records
/// (as u32 words) and the bounding box (lo, hi per dimension).
pub(crate) fn build<P: Point>(dev: &CudaDevice, device: &Device, points: u64, n: usize) -> Result<(DeviceVec<u32>, DeviceVec<P::Coord>)> {
    let dims = P::DIM;
    let stride = node_bytes::<P>();
    let mut words = DeviceVec::<u32>::alloc_uninit(device, n * stride / 4)?;
    let mut bounds = DeviceVec::<P::Coord>::alloc_uninit(device, 2 * dims)?;
    if n == 0 {
        return Ok((words, bounds));
    }
    let m = module_for::<P>(dev, "knn_build", 1, || build_spec::<P>(dev.arch))?;
    let policy = tuning::elementwise(dev.arch);
    let grid = policy.grid(n as u64, dev.sm_count);
    let n64 = n as u64;

    // Ranks along every dimension.
    let mut ranks = DeviceVec::<u32>::alloc_uninit(device, dims * n)?;
    {
        let mut coord = DeviceVec::<P::Coord>::alloc_uninit(device, n)?;
        let mut ids = DeviceVec::<u32>::alloc_uninit(device, n)?;
        let (extract, rank) = (m.function("cuprim_knn_extract")?, m.function("cuprim_knn_rank")?);
        let (rank_base, bounds_base) = (ptr_of(&mut ranks)?, ptr_of(&mut bounds)?);
        for d in 0..dims {
            let (cp, ip) = (ptr_of(&mut coord)?, ptr_of(&mut ids)?);
            let d32 = d as u32;
            // SAFETY: cuprim_knn_extract(const F* points, u64 n, u32 dim, F*
            // keys, u32* vals) reads n points of D coordinates (dim < D) and
            // writes n keys and n values into buffers of n elements.
            unsafe { dev.launch(extract, grid, policy.block, 0, &mut kernel_args![&points, &n64, &d32, &cp, &ip])? };
            coord.sort_pairs(&mut ids)?;
            let (rp, bp) = (rank_base + (d * n * 4) as u64, bounds_base + (2 * d * size_of::<P::Coord>()) as u64);
            // SAFETY: cuprim_knn_rank(const u32* sorted_ids, const F*
            // sorted_keys, u64 n, u32* rank, F* bounds): ids are a permutation
            // of 0..n, so it writes each of the n ranks of dimension d once,
            // and two bounds of that dimension.
            unsafe { dev.launch(rank, grid, policy.block, 0, &mut kernel_args![&ip, &cp, &n64, &rp, &bp])? };
        }
    }

    let rb = rank_bits(n);
    let mut keys = DeviceVec::<u64>::alloc_uninit(device, n)?;
    let mut perm = DeviceVec::<u32>::alloc_uninit(device, n)?;
    let rank_base = const_ptr(&ranks)?;
    {
        let (kp, pp) = (ptr_of(&mut keys)?, ptr_of(&mut perm)?);
        // SAFETY: cuprim_knn_init(const u32* rank0, u64 n, u64* keys, u32*
        // perm) reads n ranks and writes n keys and n ids.
        unsafe {
            dev.launch(
                m.function("cuprim_knn_init")?,
                grid,
                policy.block,
                0,
                &mut kernel_args![&rank_base, &n64, &kp, &pp],
            )?
        };
    }
    let level_fn = m.function("cuprim_knn_level")?;
    for level in 0..depth(n).saturating_sub(1) {
        keys.sort_pairs_with(&mut perm, SortOptions::new().bits(0, rb + tag_bits(level, n)))?;
        let (kp, pp) = (ptr_of(&mut keys)?, const_ptr(&perm)?);
        let next = rank_base + (((level as usize + 1) % dims) * n * 4) as u64;
        // SAFETY: cuprim_knn_level(u64* keys, const u32* perm, u64 n, u32
        // level, u32 rank_bits, const u32* rank_next): n keys updated in
        // place, perm holds ids below n, rank_next has n ranks.
        unsafe {
            dev.launch(
                level_fn,
                grid,
                policy.block,
                0,
                &mut kernel_args![&kp, &pp, &n64, &level, &rb, &next],
            )?
        };
    }
    let (kp, pp, wp) = (const_ptr(&keys)?, const_ptr(&perm)?, ptr_of(&mut words)?);
    // SAFETY: cuprim_knn_scatter(const u64* keys, const u32* perm, u64 n,
    // u32 rank_bits, const F* points, KnnNode* nodes): the final tags are a
    // permutation of 0..n, so each of the n node records (n * stride bytes)
    // is written once; perm holds point ids below n.
    unsafe {
        dev.launch(
            m.function("cuprim_knn_scatter")?,
            grid,
            policy.block,
            0,
            &mut kernel_args![&kp, &pp, &n64, &rb, &points, &wp],
        )?
    };
    Ok((words, bounds))
}

/// A built tree's device buffers.
pub(crate) struct Tree<'a, F: Element> {
    pub words: &'a DeviceVec<u32>,
    pub bounds: &'a DeviceVec<F>,
    pub n: usize,
}

/// kd-tree queries: `q` queries at `queries`, `k` slots per row into
/// `out_i` / `out_d`; `radius` = (squared bound, counts pointer) for a
/// radius search; `spatial` processes the queries in Morton order.
#[allow(clippy::too_many_arguments)]
pub(crate) fn query<P: Point>(
    dev: &CudaDevice,
    device: &Device,
    tree: &Tree<'_, P::Coord>,
    queries: u64,
    q: usize,
    k: usize,
    spatial: bool,
    radius: Option<(P::Coord, u64)>,
    out_i: u64,
    out_d: u64,
) -> Result<()> {
    let kb = bucket(k);
    let m = module_for::<P>(dev, "knn_query", kb, || query_spec::<P>(dev.arch, kb))?;
    let q64 = q as u64;
    let k32 = k as u32;
    let n32 = tree.n as u32;
    let depth = depth(tree.n).max(1);
    let nodes = const_ptr(tree.words)?;
    let mut order_vec = None;
    if spatial && tree.n > 0 {
        let policy = tuning::elementwise(dev.arch);
        let mut codes = DeviceVec::<u32>::alloc_uninit(device, q)?;
        let mut order = DeviceVec::<u32>::alloc_uninit(device, q)?;
        let (cp, op, bp) = (ptr_of(&mut codes)?, ptr_of(&mut order)?, const_ptr(tree.bounds)?);
        // SAFETY: cuprim_knn_morton(const F* queries, u64 q, const F* bounds,
        // u32* codes, u32* order): q queries of D coordinates, 2 * D bounds,
        // q codes and q ids written.
        unsafe {
            dev.launch(
                m.function("cuprim_knn_morton")?,
                policy.grid(q64, dev.sm_count),
                policy.block,
                0,
                &mut kernel_args![&queries, &q64, &bp, &cp, &op],
            )?
        };
        codes.sort_pairs_with(&mut order, SortOptions::new().bits(0, 30))?;
        order_vec = Some(order);
    }
    let order_ptr = match &order_vec {
        Some(o) => const_ptr(o)?,
        None => 0u64,
    };
    let block = tuning::knn_query(dev.arch).block;
    let grid = u32::try_from(q64.div_ceil(block as u64)).map_err(|_| Error::InvalidArgument(format!("{q} queries are too many")))?;
    let shared = depth * block * (size_of::<P::Coord>() as u32 + 4);
    match radius {
        None => {
            // SAFETY: cuprim_knn_query(const KnnNode* nodes, u32 n, u32
            // depth, const F* queries, const u32* order, u64 q, u32 k, F*
            // out_d, u32* out_i): n node records, q queries, order null or a
            // permutation of 0..q, q * k output slots each; the traversal
            // stack (depth entries per thread, never more: see the kernel)
            // is the dynamic shared memory sized here.
            unsafe {
                dev.launch(
                    m.function("cuprim_knn_query")?,
                    grid,
                    block,
                    shared,
                    &mut kernel_args![&nodes, &n32, &depth, &queries, &order_ptr, &q64, &k32, &out_d, &out_i],
                )?
            };
        }
        Some((bound, counts)) => {
            // SAFETY: as above for cuprim_knn_radius(..., u32 k, F bound, F*
            // out_d, u32* out_i, u32* counts), plus q counts.
            unsafe {
                dev.launch(
                    m.function("cuprim_knn_radius")?,
                    grid,
                    block,
                    shared,
                    &mut kernel_args![&nodes, &n32, &depth, &queries, &order_ptr, &q64, &k32, &bound, &out_d, &out_i, &counts],
                )?
            };
        }
    }
    drop(order_vec);
    Ok(())
}

/// Brute force: `q` queries against `n` points.
#[allow(clippy::too_many_arguments)]
pub(crate) fn brute<P: Point>(
    dev: &CudaDevice,
    device: &Device,
    points: u64,
    n: usize,
    queries: u64,
    q: usize,
    k: usize,
    out_i: u64,
    out_d: u64,
) -> Result<()> {
    let kb = bucket(k);
    let m = module_for::<P>(dev, "knn_brute", kb, || brute_spec::<P>(dev.arch, kb))?;
    let (bq, tile) = tuning::knn_brute(dev.arch, size_of::<P>());
    let (chunks, chunk_len) = chunking(q, n, k, bq, tile, size_of::<P::Coord>(), dev.sm_count);
    let qblocks = q.div_ceil(bq as usize);
    let blocks = qblocks
        .checked_mul(chunks)
        .and_then(|b| u32::try_from(b).ok())
        .ok_or_else(|| Error::InvalidArgument(format!("{q} queries are too many")))?;
    let (n32, cl32, q64, k32, c32, qb32) = (n as u32, chunk_len as u32, q as u64, k as u32, chunks as u32, qblocks as u32);
    let brute_fn = m.function("cuprim_knn_brute")?;
    if chunks == 1 {
        // SAFETY: cuprim_knn_brute(const F* points, u32 n, u32 chunk_len,
        // const F* queries, u64 q, u32 k, u32 chunks, u32 qblocks, F* out_d,
        // u32* out_i): n points, q queries, q * chunks * k output slots
        // (chunks = 1 here), qblocks * chunks blocks of CUPRIM_BQ threads.
        return unsafe {
            dev.launch(
                brute_fn,
                blocks,
                bq,
                0,
                &mut kernel_args![&points, &n32, &cl32, &queries, &q64, &k32, &c32, &qb32, &out_d, &out_i],
            )
        };
    }
    let slots = q * chunks * k;
    let mut part_d = DeviceVec::<P::Coord>::alloc_uninit(device, slots)?;
    let mut part_i = DeviceVec::<u32>::alloc_uninit(device, slots)?;
    let (pd, pi) = (ptr_of(&mut part_d)?, ptr_of(&mut part_i)?);
    // SAFETY: as above, into the q * chunks * k scratch slots; then
    // cuprim_knn_merge(const F* part_d, const u32* part_i, u64 q, u32 k, u32
    // chunks, F* out_d, u32* out_i) reads them and writes the q * k outputs.
    unsafe {
        dev.launch(
            brute_fn,
            blocks,
            bq,
            0,
            &mut kernel_args![&points, &n32, &cl32, &queries, &q64, &k32, &c32, &qb32, &pd, &pi],
        )?;
        let policy = tuning::knn_query(dev.arch);
        dev.launch(
            m.function("cuprim_knn_merge")?,
            policy.grid(q64, dev.sm_count),
            policy.block,
            0,
            &mut kernel_args![&pd, &pi, &q64, &k32, &c32, &out_d, &out_i],
        )?;
    }
    Ok(())
}

/// How to split `n` points among blocks for `q` queries: (chunks, points
/// per chunk, a whole number of tiles). Aims at eight blocks per SM and
/// keeps the per-chunk candidates under 512 MiB.
pub(crate) fn chunking(q: usize, n: usize, k: usize, bq: u32, tile: u32, coord_bytes: usize, sm_count: u32) -> (usize, usize) {
    let qblocks = q.div_ceil(bq as usize).max(1);
    let slot = (coord_bytes + 4) * k;
    let want = (8 * sm_count.max(1) as usize).div_ceil(qblocks);
    let by_memory = ((512usize << 20) / (q * slot).max(1)).max(1);
    let tiles = n.div_ceil(tile as usize).max(1);
    let chunks = want.min(by_memory).min(tiles).max(1);
    let chunk_len = tiles.div_ceil(chunks) * tile as usize;
    (n.div_ceil(chunk_len).max(1), chunk_len)
}
