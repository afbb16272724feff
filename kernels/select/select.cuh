// What both stream-compaction kernels share (select.cu, select_bulk.cu): a
// block is CUPRIM_BLOCK compute threads plus one look-back warp, and they
// meet at three named barriers:
//   1: the compute warps alone, once each has counted what it keeps;
//   2: the compute warps arrive (warp 0 has published the tile's aggregate),
//      the look-back warp waits, so it may read their counts;
//   3: the look-back warp arrives with the tile's exclusive prefix, the
//      compute warps wait for it before they write.
// Barrier 0 is the tile ticket's __syncthreads.
//
// Specialised on: C (the count type: u32 below 2^32 elements, whose
// look-back state packs into one word per tile, else u64), CUPRIM_BLOCK.

// 1: the second of two passes (select.cu): tiles by blockIdx.x, prefixes
// from the first pass's per-tile counts, nothing published.
#ifndef SEL_TWO_PASS
#define SEL_TWO_PASS 0
#endif

constexpr int SEL_WARPS = CUPRIM_BLOCK / 32;
constexpr int SEL_THREADS = CUPRIM_BLOCK + 32;
static_assert(CUPRIM_BLOCK % 32 == 0, "select: whole warps");

struct CountOp {
    __device__ __forceinline__ static C apply(C a, C b) { return a + b; }
    __device__ __forceinline__ static C identity() { return 0; }
};

__device__ __forceinline__ void sel_bar_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void sel_bar_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// unique's run heads (SEL_HEADS): the key before a lane's first key of a
// warp step whose lanes' last keys are `last`: the lane before's last, or
// for lane 0 `carry` (the step before's last key, or the key before the
// warp's first step). `carry` becomes this step's last key. Every lane calls it.
template <typename V> __device__ __forceinline__ V sel_key_before(const V& last, V& carry) {
    const V up = cuprim_shfl_up(last, 1);
    const V before = (threadIdx.x & 31) == 0 ? carry : up;
    carry = cuprim_shfl(last, 31);
    return before;
}

// The sum of x over the warp.
__device__ __forceinline__ u32 sel_warp_sum(u32 x) {
#if __CUDA_ARCH__ >= 800
    return __reduce_add_sync(0xffffffffu, x);
#else
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
    return x;
#endif
}

// The look-back warp's whole part: the predecessors first (no need of this
// tile's count, so it starts while the compute warps load), then, once the
// count is known (barrier 2), the inclusive prefix, and the exclusive one
// to *s_prefix for the compute warps (barrier 3).
__device__ __forceinline__ void sel_lookback_warp(TileState<C>& state, u32 tile, const u32* warp_counts, C* s_prefix) {
    C before = 0;
    if (tile > 0) before = lookback_before<C, CountOp, false>(state, tile, (C)0, nullptr);
    sel_bar_sync(2, SEL_THREADS);
    if (tile > 0 && (threadIdx.x & 31) == 0) {
        C total = 0;
#pragma unroll
        for (int w = 0; w < SEL_WARPS; w++) total += (C)warp_counts[w];
        // Published after warp 0's aggregate (ordered by barrier 2), so the
        // prefix is the tile's last word.
        state.publish(tile, before + total, SCAN_PREFIX);
        *s_prefix = before;
    }
    __syncwarp();
    sel_bar_arrive(3, SEL_THREADS);
}

// The look-back warp of the two passes' second (SEL_TWO_PASS): the tile's
// exclusive prefix is the sum of the counts of the tiles before it (the
// first pass's, once it has ended), each lane adding a run of them 16 bytes
// at a time, then barriers 2 and 3 as sel_lookback_warp.
__device__ __forceinline__ void sel_counts_warp(const u32* counts, u32 tile, C* s_prefix) {
    const u32 lane = threadIdx.x & 31;
    cuprim_grid_wait();
    const u32 per = ((tile + 31) / 32 + 3) & ~3u;  // whole 16-byte groups a lane
    const u32 from = min(lane * per, tile), to = min(from + per, tile);
    C before = 0;
    u32 i = from;
#pragma unroll 4
    for (; i + 4 <= to; i += 4) {
        const uint4 q = *(const uint4*)(counts + i);
        before += (C)q.x + (C)q.y + (C)q.z + (C)q.w;
    }
    for (; i < to; i++) before += (C)counts[i];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) before += __shfl_xor_sync(0xffffffffu, before, off);
    sel_bar_sync(2, SEL_THREADS);
    if (lane == 0) *s_prefix = before;
    __syncwarp();
    sel_bar_arrive(3, SEL_THREADS);
}

// A compute warp's count meets the others': after barrier 1 every compute
// warp knows how many the warps before it keep (returned) and the tile's
// total (tile_count); warp 0 publishes the total as the tile's aggregate.
__device__ __forceinline__ u32 sel_share_counts(TileState<C>& state, u32 tile, u32 wcount, u32* warp_counts,
                                                u32& tile_count) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_counts[warp] = wcount;
    sel_bar_sync(1, CUPRIM_BLOCK);
    u32 before = 0;
    tile_count = 0;
#pragma unroll
    for (int w = 0; w < SEL_WARPS; w++) {
        const u32 c = warp_counts[w];
        if (w < warp) before += c;
        tile_count += c;
    }
#if !SEL_TWO_PASS
    if (warp == 0 && lane == 0) state.publish(tile, (C)tile_count, tile == 0 ? SCAN_PREFIX : SCAN_AGGREGATE);
#endif
    sel_bar_arrive(2, SEL_THREADS);
    return before;
}

// Waits for the tile's exclusive prefix (barrier 3); the last tile writes
// the total selected to count_out[0] unless it is null.
__device__ __forceinline__ C sel_wait_prefix(u32 tile, u32 num_tiles, u32 tile_count, const C* s_prefix,
                                             u64* count_out) {
    __syncwarp();
    sel_bar_sync(3, SEL_THREADS);
    const C prefix = tile == 0 ? (C)0 : *s_prefix;
    if (count_out != nullptr && tile == num_tiles - 1 && threadIdx.x == 0) *count_out = (u64)(prefix + tile_count);
    return prefix;
}
