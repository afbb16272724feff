// Stable merge of two input expressions (block/expr.cuh: In0 and In1, both
// of items K), keys alone or, with CUPRIM_PAIRS, with values from two more
// expressions (Vx0 and Vx1, of items V): the merge of kernels/merge/merge.cu
// with every read of an input through its load(i), so a computed, permuted
// or counting input is merged where it is read, never stored first. The
// tile's cuts come from cuprim_merge_x_partition (many tiles) or from two
// warps of the tile's own block (splits null); the tile's keys are staged
// in shared memory from the expressions and merged by merge_staged
// (merge/merge_tile.cuh); values follow by each output's position in the
// staged tile, their tile staged the same way in the same shared memory.
//
// Specialised on: In0, In1, K (their item), Cmp, CUPRIM_PAIRS (and Vx0, Vx1,
// V; else V = K, unused), CUPRIM_BLOCK, CUPRIM_ITEMS, CUPRIM_MIN_BLOCKS.
// merge_x_at (an expression read as a sequence): merge/merge_tile.cuh.

// splits[t] = how many of the first min(t * MERGE_TILE, na + nb) merged
// elements come from a, for t = 0..=tiles.
extern "C" __global__ void cuprim_merge_x_partition(CUPRIM_INPUT In0 a, u64 na, CUPRIM_INPUT In1 b, u64 nb,
                                                    u64* __restrict__ splits, u64 tiles) {
    const u64 t = cuprim_thread_id();
    if (t > tiles) return;
    const u64 n = na + nb;
    const u64 diag = t * (u64)MERGE_TILE < n ? t * (u64)MERGE_TILE : n;
    splits[t] = cuprim_merge_path<Cmp>(merge_x_at<In0>{a, 0}, na, merge_x_at<In1>{b, 0}, nb, diag);
}

// The tile's values x[x0..x0 + la) and y[y0..y0 + (count - la)) into s,
// x's first, as the keys are staged: all of a thread's loads out before its
// first store.
template <typename E, typename X, typename Y>
__device__ __forceinline__ void merge_x_stage(E* s, const X& x, u64 x0, const Y& y, u64 y0, int la, int count) {
    E r[CUPRIM_ITEMS];
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
        const int i = k * CUPRIM_BLOCK + (int)threadIdx.x;
        if (i < count) r[k] = i < la ? x.load(x0 + i) : y.load(y0 + (i - la));
    }
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
        const int i = k * CUPRIM_BLOCK + (int)threadIdx.x;
        if (i < count) s[i] = r[k];
    }
}

// Output tile blockIdx.x: out[d0..d1) (and out_v[d0..d1) with CUPRIM_PAIRS:
// va's and vb's elements beside their keys) with d0 = blockIdx.x *
// MERGE_TILE, d1 = min(d0 + MERGE_TILE, na + nb); its cuts from splits, or
// with splits null searched by the block's first two warps (needs 64
// threads or more).
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_merge_x(CUPRIM_INPUT In0 a, u64 na, CUPRIM_INPUT In1 b, u64 nb, const u64* __restrict__ splits,
                   K* __restrict__ out
#if CUPRIM_PAIRS
                   ,
                   CUPRIM_INPUT Vx0 va, CUPRIM_INPUT Vx1 vb, V* __restrict__ out_v
#endif
    ) {
    static_assert(CUPRIM_BLOCK >= 64, "two warps search the cuts");
#if CUPRIM_PAIRS
    // Keys, then values, take turns in one buffer.
    __shared__ __align__(16) unsigned char smem[MERGE_TILE * MERGE_SLOT];
    K* sk = (K*)smem;
#else
    __shared__ __align__(16) K sk[MERGE_TILE];
#endif
    __shared__ u64 cuts[2];
    const u64 n = na + nb;
    const u64 d0 = (u64)blockIdx.x * MERGE_TILE;
    const u64 d1 = n - d0 < (u64)MERGE_TILE ? n : d0 + MERGE_TILE;
    const int count = (int)(d1 - d0);
    u64 a0, a1_cut;
    if (splits != nullptr) {
        a0 = splits[blockIdx.x];
        a1_cut = splits[blockIdx.x + 1];
    } else {
        const int warp = (int)(threadIdx.x >> 5);
        if (warp < 2) {
            const u64 c =
                cuprim_merge_path_warp<Cmp>(merge_x_at<In0>{a, 0}, na, merge_x_at<In1>{b, 0}, nb, warp == 0 ? d0 : d1);
            if ((threadIdx.x & 31) == 0) cuts[warp] = c;
        }
        __syncthreads();
        a0 = cuts[0];
        a1_cut = cuts[1];
    }
    const u64 a1 = merge_end_cut(a0, a1_cut, d1, na, nb, count);
    const int la = (int)(a1 - a0);
    const int lb = count - la;
    const u64 b0 = d0 - a0;
    // Staged: all of a thread's loads out before its first store.
    K x[CUPRIM_ITEMS];
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
        const int i = k * CUPRIM_BLOCK + (int)threadIdx.x;
        if (i < count) x[k] = i < la ? a.load(a0 + i) : b.load(b0 + (i - la));
    }
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
        const int i = k * CUPRIM_BLOCK + (int)threadIdx.x;
        if (i < count) sk[i] = x[k];
    }
    __syncthreads();
    int src[CUPRIM_ITEMS];
    merge_staged(sk, merge_layout<K>{0, la}, la, lb, out + d0, src);
#if CUPRIM_PAIRS
    // The values in the keys' layout (a's la, then b's): each output's
    // value at its key's position src (a partial tile's idle items read
    // some staged slot, never stored).
    V* sv = (V*)smem;
    __syncthreads();  // the keys are out of shared memory
    merge_x_stage(sv, va, a0, vb, b0, la, count);
    __syncthreads();
    V vals[CUPRIM_ITEMS];
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) vals[k] = sv[min(src[k], MERGE_TILE - 1)];
    __syncthreads();
    merge_place(sv, vals, count);
    __syncthreads();
    merge_store(out_v + d0, sv, count);
#endif
}
