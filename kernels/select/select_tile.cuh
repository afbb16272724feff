// The select kernels' tile (kernels/select/select.cu and select_pipe.cu):
// its constants, the barriers between the compute warps and the look-back
// warp, and a warp's part of a tile: its ranking into a run of shared
// memory (selected first, rejected after them, each in input order) and
// the run's write-out.
//
// A block is CUPRIM_BLOCK compute threads plus one look-back warp; each
// compute warp owns SEL_WARP_TILE consecutive elements of the tile, lane l
// holding, in round r, warp positions r * 32 * SEL_VEC + l * SEL_VEC + k.
//
// Specialised on: T, C (the count type), PredFn, CUPRIM_BLOCK (a multiple
// of 32), CUPRIM_ITEMS (at most 32).

constexpr int SEL_WARPS = CUPRIM_BLOCK / 32;
constexpr int SEL_THREADS = CUPRIM_BLOCK + 32;
constexpr int SEL_WARP_TILE = 32 * CUPRIM_ITEMS;
constexpr int SEL_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
static_assert(CUPRIM_BLOCK % 32 == 0 && CUPRIM_ITEMS <= 32, "select: whole warps, at most 32 items a thread");

// Elements per load: the widest power of two of at most 16 bytes dividing CUPRIM_ITEMS.
constexpr int sel_vec() {
    int v = 16 / (int)sizeof(T);
    if (v < 1) v = 1;
    while (CUPRIM_ITEMS % v != 0) v /= 2;
    return v;
}
constexpr int SEL_VEC = sel_vec();
constexpr int SEL_ROUNDS = CUPRIM_ITEMS / SEL_VEC;
// Bits of a lane's count in one round (0 ..= SEL_VEC).
constexpr int sel_count_bits() {
    int b = 1;
    while ((1 << b) <= SEL_VEC) b++;
    return b;
}
constexpr int SEL_COUNT_BITS = sel_count_bits();

// Counts are C: u32 below 2^32 elements (packed look-back state), else u64.
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

__device__ __forceinline__ u32 sel_warp_sum(u32 x) {
#if __CUDA_ARCH__ >= 800
    return __reduce_add_sync(0xffffffffu, x);
#else
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
    return x;
#endif
}

// Compacts a warp's items into its run (the warp's part of a shared tile):
// a selected element at its rank among the warp's selected, a rejected one
// (WITH_REJECTED) after all of those, at its rank among the rejected
// (positions before it less selected before it). keep: bit r * SEL_VEC + k
// for items[r * SEL_VEC + k] selected; wcount: the warp's selected; wvalid:
// its valid positions (may be <= 0 or past SEL_WARP_TILE).
__device__ __forceinline__ void sel_compact(T* run, const T (&items)[CUPRIM_ITEMS], u32 keep, u32 wcount, int wvalid,
                                            bool with_rejected, int lane) {
    const unsigned lanes_before = (1u << lane) - 1u;
    u32 sel = 0;  // selected in earlier rounds
#pragma unroll
    for (int r = 0; r < SEL_ROUNDS; r++) {
        const u32 mine = (keep >> (r * SEL_VEC)) & ((1u << SEL_VEC) - 1u);
        const u32 c = __popc(mine);
        u32 lane_before = 0, round = 0;
#pragma unroll
        for (int b = 0; b < SEL_COUNT_BITS; b++) {
            const unsigned bits = __ballot_sync(0xffffffffu, (c >> b) & 1u);
            lane_before += (u32)__popc(bits & lanes_before) << b;
            round += (u32)__popc(bits) << b;
        }
        u32 s = sel + lane_before;
#pragma unroll
        for (int k = 0; k < SEL_VEC; k++) {
            const int q = r * 32 * SEL_VEC + lane * SEL_VEC + k;
            if (mine & (1u << k)) {
                run[s++] = items[r * SEL_VEC + k];
            } else if (with_rejected && q < wvalid) {
                run[wcount + (u32)q - s] = items[r * SEL_VEC + k];
            }
        }
        sel += round;
    }
}

// Writes a warp's run out once the tile's exclusive prefix is known: its
// selected to selected[tile_prefix + wsel_before ..], its rejected (unless
// rejected is null) after the rejected before it (the tile's earlier
// positions, all valid, less those selected). base: the tile's first
// element; wbase: the warp's first position in the tile.
__device__ __forceinline__ void sel_write_run(const T* run, T* __restrict__ selected, T* __restrict__ rejected,
                                              C tile_prefix, u64 base, int wbase, u32 wsel_before, u32 wcount,
                                              int wvalid, int lane) {
    T* out = selected + (tile_prefix + wsel_before);
    for (int j = lane; j < (int)wcount; j += 32) out[j] = run[j];
    if (rejected != nullptr && wvalid > 0) {
        const int wtotal = wvalid < SEL_WARP_TILE ? wvalid : SEL_WARP_TILE;
        T* rout = rejected + ((base - tile_prefix) + (u64)(wbase - (int)wsel_before));
        for (int j = lane; j < wtotal - (int)wcount; j += 32) rout[j] = run[wcount + j];
    }
}
