// Stream compaction in one pass: copy_if and stable partition.
//
// Like kernels/scan.cu, but what is scanned is the number of selected
// elements: each tile counts its selections, the look-back gives the count
// before the tile, and the tile's selected elements are compacted in shared
// memory and written as one contiguous, coalesced run. Reads n elements and
// writes only what is kept. With a second output, the rejected elements go
// to it the same way (a stable partition).
//
// Specialised on: In (the input expression, block/expr.cuh; a plain buffer is
// cuprim_x_buf<T>), T (its element), PredFn (bool apply(T x, T p)), CUPRIM_BLOCK,
// CUPRIM_ITEMS.

constexpr int SEL_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
constexpr int SEL_PAD_EVERY = 128 / sizeof(T) < 16 ? 16 : 128 / sizeof(T);
constexpr int SEL_SMEM = SEL_TILE + SEL_TILE / SEL_PAD_EVERY;
constexpr int SEL_VEC = 16 / sizeof(T);
typedef cuprim_vec<T, SEL_VEC> SelVec;

__device__ __forceinline__ int sel_pad(int i) { return i + i / SEL_PAD_EVERY; }

// Counts are C: u32 below 2^32 elements (packed look-back state), else u64.
struct CountOp {
    __device__ __forceinline__ static C apply(C a, C b) { return a + b; }
    __device__ __forceinline__ static C identity() { return 0; }
};

// selected[...]: the elements with PredFn(x, param), in order.
// rejected (may be null): the others, in order.
// The last tile's published prefix is the total number selected; the last
// tile also writes it to count_out[0] unless count_out is null.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_select(CUPRIM_INPUT In in, u64 n, T param, T* __restrict__ selected, T* __restrict__ rejected,
                  u64* count_out, u32* status, C* aggregates, C* prefixes, u32* tile_counter, u32 num_tiles) {
    __shared__ T smem[SEL_SMEM];
    __shared__ C warp_totals[CUPRIM_BLOCK / 32];
    __shared__ C staged[1];  // unused: counts are exact, the fast look-back is deterministic
    __shared__ C s_prefix;
    __shared__ u32 s_tile;

    const u32 tile = scan_take_tile(tile_counter, num_tiles, &s_tile);
    const u64 base = (u64)tile * SEL_TILE;
    const u64 remaining = n - base;
    const int valid = remaining < (u64)SEL_TILE ? (int)remaining : SEL_TILE;
    const int tid = threadIdx.x;

    const u32 in_misalign = in.template misalign<SEL_VEC>();
    if (valid == SEL_TILE && (in_misalign == 0 || in_misalign == CUPRIM_X_ANY)) {
#pragma unroll
        for (int j = 0; j < SEL_TILE / SEL_VEC / CUPRIM_BLOCK; j++) {
            const int v = j * CUPRIM_BLOCK + tid;
            const cuprim_arr<T, SEL_VEC> x = in.template load_n<SEL_VEC>(base + (u64)v * SEL_VEC);
#pragma unroll
            for (int k = 0; k < SEL_VEC; k++) smem[sel_pad(v * SEL_VEC + k)] = x.v[k];
        }
    } else {
        for (int i = tid; i < valid; i += CUPRIM_BLOCK) smem[sel_pad(i)] = in.load(base + i);
    }
    __syncthreads();

    T items[CUPRIM_ITEMS];
    u32 keep = 0;  // bit k: items[k] is selected
    u32 count = 0;
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
        const int i = tid * CUPRIM_ITEMS + k;
        items[k] = smem[sel_pad(i < valid ? i : 0)];
        if (i < valid && PredFn::apply(items[k], param)) {
            keep |= 1u << k;
            count++;
        }
    }

    // The tile's count and each thread's rank in it need one barrier; the
    // aggregate is published at once, and warp 0 looks back while the other
    // warps compact (only the final writes wait for the tile's prefix).
    C tile_selected;
    const C before = block_exclusive_scan<C, CountOp, CUPRIM_BLOCK>((C)count, warp_totals, tile_selected);
    if (tid < 32) warp_publish_lookback<C, CountOp, false>(tile, tile_selected, status, aggregates, prefixes, staged, &s_prefix);

    // Compact: selected to the front of the tile's shared memory, rejected
    // after them, each group in input order.
    u32 sel_rank = (u32)before;
    u32 rej_rank = (u32)tile_selected + (u32)(tid * CUPRIM_ITEMS) - (u32)before;
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
        const int i = tid * CUPRIM_ITEMS + k;
        if (i < valid) {
            if (keep & (1u << k)) {
                smem[sel_pad(sel_rank++)] = items[k];
            } else if (rejected != nullptr) {
                smem[sel_pad(rej_rank++)] = items[k];
            }
        }
    }
    __syncthreads();

    const C tile_prefix = tile == 0 ? (C)0 : s_prefix;
    if (count_out != nullptr && tile == num_tiles - 1 && tid == 0) *count_out = (u64)(tile_prefix + tile_selected);
    const int n_sel = (int)tile_selected;
    for (int j = tid; j < n_sel; j += CUPRIM_BLOCK) selected[tile_prefix + j] = smem[sel_pad(j)];
    if (rejected != nullptr) {
        const u64 rejected_before = base - tile_prefix;
        for (int j = n_sel + tid; j < valid; j += CUPRIM_BLOCK) rejected[rejected_before + (j - n_sel)] = smem[sel_pad(j)];
    }
}
