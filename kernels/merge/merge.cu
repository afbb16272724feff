// Merge of two sorted sequences (keys, or keys with values), stable: among
// equivalent keys those of a come first, each input in its own order.
//
// Two launches. cuprim_merge_partition cuts the output into tiles of
// MERGE_TILE elements: for each tile boundary it finds, by the merge-path
// search of kernels/block/merge_path.cuh, how many of the outputs before it
// come from a. cuprim_merge then merges one tile per block: the tile's
// a-range and b-range (together exactly its outputs) are loaded coalesced
// into shared memory, each thread finds its own cut there (the diagonal of
// its ITEMS outputs) and merges ITEMS elements into registers, and the block
// writes them back through shared memory, coalesced. Values follow their
// keys: each merged key carries its position in the tile, the tile's values
// are staged in the same shared memory, and each thread picks its values
// from the positions. Global traffic: the inputs read once, the output
// written once, and the cuts (8 bytes per tile).
//
// Inputs that are not sorted, or a comparator that is no order, give some
// output drawn from the inputs: the cuts are clamped to ranges that keep
// every read and write in bounds (see cuprim_merge).
//
// The same module holds the stable merge sort (see the second half).
//
// For merges and sort passes of few tiles, cuprim_merge_fused and
// cuprim_merge_sort_pass_fused find each tile's cuts in the tile's own
// block instead (one launch instead of two).
//
// Specialised on: K, V (the value type; K again for keys alone), Cmp
// (bool less(K a, K b)), CUPRIM_PAIRS (values or not), CUPRIM_BLOCK,
// CUPRIM_ITEMS, CUPRIM_MIN_BLOCKS.

// The tile's constants, loads, stores and merge_tile: merge/merge_tile.cuh.

// Resident blocks per SM the merge sort's pass kernels are built for (their
// registers): the tile's own unless the plan gives more.
#ifndef CUPRIM_PASS_MIN_BLOCKS
#define CUPRIM_PASS_MIN_BLOCKS CUPRIM_MIN_BLOCKS
#endif

// Each tile boundary's cut: splits[t] = how many of the first
// min(t * MERGE_TILE, na + nb) merged elements come from a, for t = 0..=tiles.
extern "C" __global__ void cuprim_merge_partition(const K* __restrict__ a, u64 na, const K* __restrict__ b, u64 nb,
                                                  u64* __restrict__ splits, u64 tiles) {
    const u64 t = cuprim_thread_id();
    if (t > tiles) return;
    const u64 n = na + nb;
    const u64 diag = t * (u64)MERGE_TILE < n ? t * (u64)MERGE_TILE : n;
    splits[t] = cuprim_merge_path<Cmp>(a, na, b, nb, diag);
}

// The same splits for many tiles (the plan picks it by tile count): each
// warp's 32 consecutive boundaries. Its first and last cut are searched over
// all of a and b; each one between lies between those two (c0 <= c <= c1 and
// d0 - c0 <= d - c <= d1 - c1 for sorted inputs), a range of about
// 32 MERGE_TILE, searched in fewer steps over nearby lines. The range is
// clamped into the diagonal's own, so every read is in bounds whatever the
// inputs are. Needs a block of whole warps.
extern "C" __global__ void cuprim_merge_partition_warp(const K* __restrict__ a, u64 na, const K* __restrict__ b, u64 nb,
                                                       u64* __restrict__ splits, u64 tiles) {
    const u64 t = cuprim_thread_id();
    const int lane = (int)(threadIdx.x & 31);
    const u64 first = t - lane;
    if (first > tiles) return;  // the whole warp
    const u64 n = na + nb;
    const u64 last = first + 31 < tiles ? first + 31 : tiles;
    const int last_lane = (int)(last - first);
    auto diag_of = [&](u64 x) { return x * (u64)MERGE_TILE < n ? x * (u64)MERGE_TILE : n; };
    const u64 d = diag_of(t);
    u64 c = 0;
    if (lane == 0 || lane == last_lane) c = cuprim_merge_path<Cmp>(a, na, b, nb, d);
    const u64 c0 = __shfl_sync(0xffffffffu, c, 0);
    const u64 c1 = __shfl_sync(0xffffffffu, c, last_lane);
    if (t > tiles) return;
    if (lane != 0 && lane != last_lane) {
        const u64 d0 = diag_of(first);
        const u64 d1 = diag_of(last);
        const u64 lo_d = d > nb ? d - nb : 0;
        const u64 hi_d = d < na ? d : na;
        u64 lo = d >= d1 - c1 && d - (d1 - c1) > c0 ? d - (d1 - c1) : c0;
        u64 hi = c1 < c0 + (d - d0) ? c1 : c0 + (d - d0);
        lo = lo < lo_d ? lo_d : (lo > hi_d ? hi_d : lo);
        hi = hi > hi_d ? hi_d : (hi < lo ? lo : hi);
        c = cuprim_merge_path_in<Cmp>(a, b, d, lo, hi);
    }
    splits[t] = c;
}

// Tile blockIdx.x of the merge: out_k[d0..d1) (and out_v) with
// d0 = blockIdx.x * MERGE_TILE, d1 = min(d0 + MERGE_TILE, na + nb).
// va, vb, out_v are unused unless CUPRIM_PAIRS.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_merge(const K* __restrict__ ka, u64 na, const K* __restrict__ kb, u64 nb, const V* __restrict__ va,
                 const V* __restrict__ vb, const u64* __restrict__ splits, K* __restrict__ out_k, V* __restrict__ out_v) {
    __shared__ __align__(16) unsigned char smem[MERGE_SLOTS * MERGE_SLOT];
    merge_tile(smem, ka, na, kb, nb, va, vb, (u64)blockIdx.x * MERGE_TILE, splits[blockIdx.x], splits[blockIdx.x + 1],
               out_k, out_v);
}

// The same tile without a partition launch: the block's first two warps
// find its two cuts (cuprim_merge_path_warp: about log32 of the range in
// parallel probes, against the bisection's log2 in dependent loads), for
// merges of few tiles, where the partition's own launch and its chain of
// dependent loads are a visible part of the time. Needs 64 threads or more.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_merge_fused(const K* __restrict__ ka, u64 na, const K* __restrict__ kb, u64 nb, const V* __restrict__ va,
                       const V* __restrict__ vb, K* __restrict__ out_k, V* __restrict__ out_v) {
    static_assert(CUPRIM_BLOCK >= 64, "two warps search the cuts");
    __shared__ __align__(16) unsigned char smem[MERGE_SLOTS * MERGE_SLOT];
    __shared__ u64 cuts[2];
    const u64 n = na + nb;
    const u64 d0 = (u64)blockIdx.x * MERGE_TILE;
    const u64 d1 = n - d0 < (u64)MERGE_TILE ? n : d0 + MERGE_TILE;
    const int warp = (int)(threadIdx.x >> 5);
    if (warp < 2) {
        const u64 c = cuprim_merge_path_warp<Cmp>(ka, na, kb, nb, warp == 0 ? d0 : d1);
        if ((threadIdx.x & 31) == 0) cuts[warp] = c;
    }
    __syncthreads();
    merge_tile(smem, ka, na, kb, nb, va, vb, d0, cuts[0], cuts[1], out_k, out_v);
}

// ---------------------------------------------------------------------------
// Stable merge sort (sort_by, sort_pairs_by).
//
// cuprim_merge_sort_tile sorts each tile of MERGE_TILE elements in one
// block (merge_sort_tile, merge/sort_tile.cuh: registers, then merges in
// shared memory; keys carry their tile positions, so values move once, at
// the end). Then passes over the whole input with runs of MERGE_TILE,
// 2 MERGE_TILE, ...: cuprim_merge_sort_partition finds each tile's cut
// within its pair of runs and cuprim_merge_sort_pass merges one output tile
// per block with merge_tile, from one buffer into the other. The partition
// and pass kernels are dependent launches (src/device/launch.rs) on sm_90:
// each waits for its predecessor (cuprim_grid_wait) before it reads, so the
// next pass's blocks are scheduled while the last wave of the previous one
// still runs.

// Sorts each tile of in_k[0..n) (with in_v) into out_k (out_v). in and out
// may be the same buffers: a block reads all of its tile before it writes.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_merge_sort_tile(const K* in_k, const V* in_v, K* out_k, V* out_v, u64 n) {
    __shared__ __align__(16) unsigned char smem[MERGE_SLOTS * MERGE_SLOT];
    __shared__ cuprim_tile_pos spos[CUPRIM_PAIRS ? MERGE_TILE : 1];
    // The first pass (a dependent launch) may be scheduled into the last
    // wave's room; it waits for this kernel's end before it reads.
    cuprim_grid_launch_dependents();
    merge_sort_tile(
        smem, spos, n, out_k, out_v, [&](K* sk, u64 d0, int count) { return sk + tile_load(sk, in_k + d0, count); },
        [&](V* sv, u64 d0, int count) { return sv + tile_load(sv, in_v + d0, count); });
}

// The pair of runs that output position d belongs to, in a pass with runs
// of `run`: its start ps and the lengths la, lb of its two runs.
__device__ __forceinline__ void merge_sort_pair(u64 d, u64 n, u64 run, u64& ps, u64& la, u64& lb) {
    ps = d / (2 * run) * (2 * run);
    la = n - ps < run ? n - ps : run;
    lb = n - ps - la < run ? n - ps - la : run;
}

// splits[t] = the pair-local merge-path cut of tile t's start (how many of
// its pair's first d0 - ps outputs come from the pair's first run), for
// t < tiles.
extern "C" __global__ void cuprim_merge_sort_partition(const K* __restrict__ keys, u64 n, u64 run,
                                                       u64* __restrict__ splits, u64 tiles) {
    cuprim_grid_wait();
    cuprim_grid_launch_dependents();
    const u64 t = cuprim_thread_id();
    if (t >= tiles) return;
    const u64 d0 = t * (u64)MERGE_TILE;
    u64 ps, la, lb;
    merge_sort_pair(d0, n, run, ps, la, lb);
    splits[t] = cuprim_merge_path<Cmp>(keys + ps, la, keys + ps + la, lb, d0 - ps);
}

// The same cuts, one warp each (cuprim_merge_path_warp: 32 probes a step,
// about log32 of the pair's length in dependent loads against log2 for a
// thread's bisection). Needs a block of whole warps.
extern "C" __global__ void cuprim_merge_sort_partition_warp(const K* __restrict__ keys, u64 n, u64 run,
                                                            u64* __restrict__ splits, u64 tiles) {
    cuprim_grid_wait();
    cuprim_grid_launch_dependents();
    const u64 t = cuprim_thread_id() >> 5;
    if (t >= tiles) return;  // the whole warp
    const u64 d0 = t * (u64)MERGE_TILE;
    u64 ps, la, lb;
    merge_sort_pair(d0, n, run, ps, la, lb);
    const u64 c = cuprim_merge_path_warp<Cmp>(keys + ps, la, keys + ps + la, lb, d0 - ps);
    if ((threadIdx.x & 31) == 0) splits[t] = c;
}

// One output tile (blockIdx.x) of a pass with runs of `run` (a multiple of
// MERGE_TILE, so a tile never straddles two pairs): in_k (in_v) to out_k
// (out_v), which must not overlap.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_PASS_MIN_BLOCKS)
    cuprim_merge_sort_pass(const K* __restrict__ in_k, const V* __restrict__ in_v, u64 n, u64 run,
                           const u64* __restrict__ splits, K* __restrict__ out_k, V* __restrict__ out_v) {
    __shared__ __align__(16) unsigned char smem[MERGE_SLOTS * MERGE_SLOT];
    cuprim_grid_wait();
    cuprim_grid_launch_dependents();
    const u64 d0 = (u64)blockIdx.x * MERGE_TILE;
    u64 ps, la, lb;
    merge_sort_pair(d0, n, run, ps, la, lb);
    const u64 dl = d0 - ps;
    // The tile that ends its pair ends at the pair's last element: all of a.
    const u64 a1 = dl + MERGE_TILE >= la + lb ? la : splits[blockIdx.x + 1];
    merge_tile(smem, in_k + ps, la, in_k + ps + la, lb, in_v + ps, in_v + ps + la, dl, splits[blockIdx.x], a1,
               out_k + ps, out_v + ps);
}

// The same pass without a partition launch: the block's first two warps
// find its cuts within its pair of runs (as cuprim_merge_fused).
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_PASS_MIN_BLOCKS)
    cuprim_merge_sort_pass_fused(const K* __restrict__ in_k, const V* __restrict__ in_v, u64 n, u64 run,
                                 K* __restrict__ out_k, V* __restrict__ out_v) {
    __shared__ __align__(16) unsigned char smem[MERGE_SLOTS * MERGE_SLOT];
    __shared__ u64 cuts[2];
    cuprim_grid_wait();
    cuprim_grid_launch_dependents();
    const u64 d0 = (u64)blockIdx.x * MERGE_TILE;
    u64 ps, la, lb;
    merge_sort_pair(d0, n, run, ps, la, lb);
    const u64 dl = d0 - ps;
    const u64 dr = la + lb - dl < (u64)MERGE_TILE ? la + lb : dl + MERGE_TILE;
    const int warp = (int)(threadIdx.x >> 5);
    if (warp < 2) {
        const u64 c = cuprim_merge_path_warp<Cmp>(in_k + ps, la, in_k + ps + la, lb, warp == 0 ? dl : dr);
        if ((threadIdx.x & 31) == 0) cuts[warp] = c;
    }
    __syncthreads();
    merge_tile(smem, in_k + ps, la, in_k + ps + la, lb, in_v + ps, in_v + ps + la, dl, cuts[0], cuts[1], out_k + ps,
               out_v + ps);
}
