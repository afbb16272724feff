// The stable merge sort's tile kernel over an input expression
// (block/expr.cuh): SortIn, the keys' expression, or with CUPRIM_PAIRS the
// zip of the keys' and the values'. Each tile is read from the expression
// where cuprim_merge_sort_tile (merge/merge.cu) reads a buffer, sorted by
// merge/sort_tile.cuh's merge_sort_tile and written to the output (or to
// the scratch the first merge pass reads): no collected copy. The merge
// passes then run on buffers, in merge.cu's module of the same K, V, Cmp
// and tile shape.
//
// Specialised on: SortIn, K, V (K again for keys alone), Cmp, CUPRIM_PAIRS,
// CUPRIM_BLOCK, CUPRIM_ITEMS, CUPRIM_MIN_BLOCKS, CUPRIM_SORT_X_BATCH.

// x's elements d0 .. d0 + count into s[0..count), each thread staging
// every CUPRIM_BLOCK-th one: CUPRIM_SORT_X_BATCH of a thread's loads out
// before their stores (as merge_stage, in batches where registers are few).
template <typename E, typename X> __device__ __forceinline__ void sort_x_stage(E* s, const X& x, u64 d0, int count) {
    constexpr int BATCH = CUPRIM_SORT_X_BATCH;
#pragma unroll
    for (int b = 0; b < CUPRIM_ITEMS; b += BATCH) {
        E r[BATCH];
#pragma unroll
        for (int k = 0; k < BATCH; k++) {
            const int i = (b + k) * CUPRIM_BLOCK + (int)threadIdx.x;
            if (b + k < CUPRIM_ITEMS && i < count) r[k] = x.load(d0 + i);
        }
#pragma unroll
        for (int k = 0; k < BATCH; k++) {
            const int i = (b + k) * CUPRIM_BLOCK + (int)threadIdx.x;
            if (b + k < CUPRIM_ITEMS && i < count) s[i] = r[k];
        }
    }
}

// Sorts each tile of the n elements of `in` into out_k (out_v), which must
// not overlap what `in` reads.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_merge_sort_tile_x(CUPRIM_INPUT SortIn in, u64 n, K* __restrict__ out_k, V* __restrict__ out_v) {
    __shared__ __align__(16) unsigned char smem[MERGE_SLOTS * MERGE_SLOT];
    __shared__ cuprim_tile_pos spos[CUPRIM_PAIRS ? MERGE_TILE : 1];
    cuprim_grid_launch_dependents();  // as cuprim_merge_sort_tile's
    merge_sort_tile(
        smem, spos, n, out_k, out_v,
        [&](K* sk, u64 d0, int count) -> const K* {
#if CUPRIM_PAIRS
            sort_x_stage(sk, in.a, d0, count);
#else
            sort_x_stage(sk, in, d0, count);
#endif
            return sk;
        },
        [&](V* sv, u64 d0, int count) -> const V* {
#if CUPRIM_PAIRS
            sort_x_stage(sv, in.b, d0, count);
#else
            (void)d0, (void)count;
#endif
            return sv;
        });
}
