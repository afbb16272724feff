// The merge's tile: its constants, how a tile's ranges reach shared memory
// and leave it, and merge_tile, one output tile of the merge of two sorted
// sequences by one block (see kernels/merge/merge.cu, which uses it for the
// merge and the merge sort's passes, merge/merge_expr.cu, for input
// expressions, and merge/set.cu, the set operations' tiles). Specialised as
// merge.cu is: K, V, Cmp, CUPRIM_PAIRS, CUPRIM_BLOCK, CUPRIM_ITEMS.

constexpr int MERGE_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;

// An input expression (block/expr.cuh) read as a sequence from element
// `base` on: merge path's operator[] over an expression (merge_expr.cu,
// set.cu).
template <typename X> struct merge_x_at {
    X x;
    u64 base;
    __device__ __forceinline__ typename X::item operator[](u64 i) const {
        return x.load(base + i);
    }
};
// Bytes per shared-memory slot: keys and values take turns in one buffer.
constexpr int MERGE_SLOT = sizeof(K) > sizeof(V) ? (int)sizeof(K) : (int)sizeof(V);

// How the keys of a tile reach shared memory (4-byte keys alone; every
// other shape stages through registers):
//   1: cp.async of each element (sm_80+): the loads in flight hold no
//      registers, so a tile can be larger at more blocks per SM;
//   2: cp.async of 16 bytes (sm_80+) for each range's 16-byte aligned
//      middle, each element of its head and tail on its own;
//   3: the bulk copy engine (sm_90+): one thread asks for each range's
//      aligned middle, the block waits on an mbarrier.
// For 2 and 3 each range lands in shared memory at the same address
// modulo 16 bytes as in global memory (merge_layout).
// H200, u32 halves at 2^24 / 2^28: 57.1 / 559.9 us with 3, 58.2 / 584.1
// with 2, 62.3 / 708.9 with 1 (CUB 59.6 / 575.8); the f32 merge sort at
// 2^24 0.851 / 0.872 / 0.884 ms (CUB 0.818), one call (i19-load). sm_80
// takes 2, measured on sm_90 only.
#ifndef CUPRIM_MERGE_LOAD
#if __CUDA_ARCH__ >= 900
#define CUPRIM_MERGE_LOAD 3
#elif __CUDA_ARCH__ >= 800
#define CUPRIM_MERGE_LOAD 2
#else
#define CUPRIM_MERGE_LOAD 0
#endif
#endif
#if CUPRIM_MERGE_LOAD >= 3 && __CUDA_ARCH__ < 900
#error "CUPRIM_MERGE_LOAD 3 (the bulk copy engine) needs sm_90"
#endif
#if CUPRIM_MERGE_LOAD >= 1 && __CUDA_ARCH__ < 800
#error "CUPRIM_MERGE_LOAD 1 and 2 (cp.async) need sm_80"
#endif

// Only where measured: 4-byte keys alone (u32 halves at 2^24 / 2^28: 73.1 /
// 805.5 us in 512 x 15 tiles at 4 blocks per SM, 80.4 / 986 with register
// loads at 256 x 11 and 4, the most those registers allow; H100, i19-merge),
// and 8-byte keys alone in the merge (CUPRIM_MERGE_WIDE, set by the plan;
// u64 halves at 2^24 / 2^27: 96 / 560 us in 256 x 13 tiles at 4 blocks per
// SM, 122.6 / 758 with register loads at 512 x 7 and 2; H200,
// h200-sweeps-a5a4265). Pairs measured 127.3 / 1691.6 us with cp.async
// against 120.6 / 1639 (in another call) with register loads, so they keep
// those, as do the merge sort's passes of 8-byte keys.
#ifndef CUPRIM_MERGE_WIDE
#define CUPRIM_MERGE_WIDE 0
#endif
template <typename E> constexpr int MERGE_LOAD = (sizeof(E) == 4 || (CUPRIM_MERGE_WIDE && sizeof(E) == 8)) && !CUPRIM_PAIRS ? CUPRIM_MERGE_LOAD : 0;

// Elements of E in 16 bytes.
template <typename E> constexpr int MERGE_VEC = 16 / (int)sizeof(E);
// Shared-memory slots a tile takes: the tile and the padding of
// merge_layout.
constexpr int MERGE_SLOTS = MERGE_TILE + (MERGE_SLOT < 16 ? 3 * (16 / MERGE_SLOT) : 0);

__device__ __forceinline__ u32 merge_smem_addr(const void* s) {
    return (u32)__cvta_generic_to_shared(s);
}
// s[0..count) from the elements at src(i), each thread staging every
// CUPRIM_BLOCK-th one: by cp.async where MERGE_LOAD, else all of a
// thread's loads out before its first store (stored one by one, each store
// waited for its load before the next load went out; ncu: the stores held
// most of the tile kernel's stall samples). READ_ONLY loads through the
// read-only path, which the merge sort's in-place tile sort must not use.
template <bool READ_ONLY, typename E, typename Src>
__device__ __forceinline__ void merge_stage(E* s, int count, Src src) {
    if constexpr (MERGE_LOAD<E> >= 1) {
#pragma unroll
        for (int k = 0; k < CUPRIM_ITEMS; k++) {
            const int i = k * CUPRIM_BLOCK + (int)threadIdx.x;
            if (i < count) cuprim_cp_async<sizeof(E)>(s + i, src(i));
        }
        cuprim_cp_async_wait();
    } else {
        E x[CUPRIM_ITEMS];
#pragma unroll
        for (int k = 0; k < CUPRIM_ITEMS; k++) {
            const int i = k * CUPRIM_BLOCK + (int)threadIdx.x;
            if constexpr (READ_ONLY) {
                if (i < count) x[k] = cuprim_load_ro(src(i));
            } else {
                if (i < count) x[k] = *src(i);
            }
        }
#pragma unroll
        for (int k = 0; k < CUPRIM_ITEMS; k++) {
            const int i = k * CUPRIM_BLOCK + (int)threadIdx.x;
            if (i < count) s[i] = x[k];
        }
    }
}

// Where g's element lies within its 16-byte line (0 .. MERGE_VEC - 1).
template <typename E> __device__ __forceinline__ int merge_misalign(const E* g) {
    return (int)(((unsigned long long)g / sizeof(E)) % MERGE_VEC<E>);
}

// A range of len elements at g, copied to s (s and g the same modulo 16
// bytes): [0, head) and [body_end, len) element by element, the 16-byte
// pieces of [head, body_end) by cp.async (MERGE_LOAD 2) or, where bulk is
// given, by the bulk copy engine (its bytes added to *bulk_bytes).
template <bool READ_ONLY, typename E>
__device__ __forceinline__ void merge_copy_range(E* s, const E* __restrict__ g, int len, bool bulk, u32 bar,
                                                 u32* bulk_bytes) {
    constexpr int VEC = MERGE_VEC<E>;
    const int mis = merge_misalign(g);
    const int head = min((VEC - mis) % VEC, len);
    const int pieces = (len - head) / VEC;
    const int body_end = head + pieces * VEC;
    const int t = (int)threadIdx.x;
    if (bulk) {
#if CUPRIM_MERGE_LOAD >= 3
        if (t == 0 && pieces > 0) {
            asm volatile(
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                    merge_smem_addr(s + head)),
                "l"(g + head), "r"((u32)(pieces * 16)), "r"(bar)
                : "memory");
        }
        *bulk_bytes += (u32)(pieces * 16);
#endif
    } else {
        for (int j = t; j < pieces; j += CUPRIM_BLOCK) cuprim_cp_async<16>(s + head + j * VEC, g + head + j * VEC);
    }
    // The head and tail (fewer than VEC elements each) by the block's last threads.
    const int r = CUPRIM_BLOCK - 1 - t;
    if (r < VEC) {
        auto load = [&](int i) {
            if constexpr (READ_ONLY) {
                return cuprim_load_ro(g + i);
            } else {
                return g[i];
            }
        };
        if (r < head) s[r] = load(r);
        if (body_end + r < len) s[body_end + r] = load(body_end + r);
    }
}

// Where the tile's two ranges (la elements at a, lb at b) start in shared
// memory: a at oa, b at ob, each at its global address modulo 16 bytes
// (MERGE_LOAD 2 and 3), or a at 0 and b right after it.
template <typename E> struct merge_layout {
    int oa, ob;
};

// The tile's two ranges into s (a's la elements, then b's lb), laid out by
// the returned merge_layout; waits for them (a __syncthreads must still
// follow). READ_ONLY as merge_stage's.
template <bool READ_ONLY = true, typename E>
__device__ __forceinline__ merge_layout<E> merge_load(E* s, const E* __restrict__ a, const E* __restrict__ b, int la,
                                                      int lb) {
    if constexpr (MERGE_LOAD<E> >= 2) {
        constexpr int VEC = MERGE_VEC<E>;
        const int oa = merge_misalign(a);
        const int ob = (oa + la + VEC - 1) / VEC * VEC + merge_misalign(b);
#if CUPRIM_MERGE_LOAD >= 3
        __shared__ __align__(8) u64 bar_mem;
        const u32 bar = merge_smem_addr(&bar_mem);
        if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
        __syncthreads();
        u32 bytes = 0;
        merge_copy_range<READ_ONLY>(s + oa, a, la, true, bar, &bytes);
        merge_copy_range<READ_ONLY>(s + ob, b, lb, true, bar, &bytes);
        if (threadIdx.x == 0)
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
        u32 done = 0;
        do {
            asm volatile(
                "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                : "=r"(done)
                : "r"(bar)
                : "memory");
        } while (!done);
#else
        merge_copy_range<READ_ONLY>(s + oa, a, la, false, 0, nullptr);
        merge_copy_range<READ_ONLY>(s + ob, b, lb, false, 0, nullptr);
        cuprim_cp_async_wait();
#endif
        return {oa, ob};
    } else {
        merge_stage<READ_ONLY>(s, la + lb, [&](int i) { return i < la ? a + i : b + (i - la); });
        return {0, la};
    }
}

// in[0..count) into shared memory from s with plain loads (the merge
// sort's tile kernel may sort in place): the elements start at the
// returned offset (merge_layout's oa).
template <typename E> __device__ __forceinline__ int tile_load(E* s, const E* in, int count) {
    return merge_load<false>(s, in, in + count, count, 0).oa;
}

// s[0..count) to out[0..count), coalesced: 16-byte vectors for a whole,
// aligned tile (tiles start at multiples of MERGE_TILE elements).
template <typename E> __device__ __forceinline__ void merge_store(E* __restrict__ out, const E* s, int count) {
    constexpr int VEC = 16 / sizeof(E);
    typedef cuprim_vec<E, VEC> Vec;
    if (MERGE_TILE % VEC == 0 && count == MERGE_TILE && cuprim_aligned_to<Vec>(out)) {
        for (int j = threadIdx.x; j < MERGE_TILE / VEC; j += CUPRIM_BLOCK) ((Vec*)out)[j] = ((const Vec*)s)[j];
    } else {
        for (int i = threadIdx.x; i < count; i += CUPRIM_BLOCK) out[i] = s[i];
    }
}

// Each thread's ITEMS elements (blocked) into s at their places in the tile.
template <typename E>
__device__ __forceinline__ void merge_place(E* s, const E (&items)[CUPRIM_ITEMS], int count) {
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
        const int i = (int)threadIdx.x * CUPRIM_ITEMS + k;
        if (i < count) s[i] = items[k];
    }
}

// The end cut of an output tile [d0, d1) (count elements) whose start cut
// is a0: a1_cut clamped into the range a0 <= a1 <= a0 + count, a1 <= na,
// d1 - a1 <= nb, which the cuts of sorted inputs satisfy. Never empty
// (d0 - nb <= a0 <= na), it keeps every access in bounds whatever the
// inputs are.
__device__ __forceinline__ u64 merge_end_cut(u64 a0, u64 a1_cut, u64 d1, u64 na, u64 nb, int count) {
    const u64 lo = d1 > nb && d1 - nb > a0 ? d1 - nb : a0;
    const u64 hi = a0 + count < na ? a0 + count : na;
    return a1_cut < lo ? lo : (a1_cut > hi ? hi : a1_cut);
}

// The stable merge of a tile's two key ranges staged in sk (la keys at
// at.oa, lb at at.ob; count = la + lb >= 1) into out[0..count), through sk
// (the block waits for the staging first). src: each of the thread's
// outputs' positions in sk (merge_tile moves the values by them).
__device__ __forceinline__ void merge_staged(K* sk, merge_layout<K> at, int la, int lb, K* __restrict__ out,
                                             int (&src)[CUPRIM_ITEMS]) {
    const int count = la + lb;
    const int diag = min((int)threadIdx.x * CUPRIM_ITEMS, count);
    const int cut = cuprim_merge_path<Cmp>(sk + at.oa, la, sk + at.ob, lb, diag);
    K keys[CUPRIM_ITEMS];
    cuprim_merge_serial<Cmp, CUPRIM_ITEMS, K, !CUPRIM_PAIRS>(sk, at.oa + cut, at.oa + la, at.ob + diag - cut, at.ob + lb, keys, src);
    __syncthreads();
    merge_place(sk, keys, count);
    __syncthreads();
    merge_store(out, sk, count);
}

// One tile of the merge of a[0..na) and b[0..nb) (keys ka, kb; values va,
// vb with CUPRIM_PAIRS, else unused): outputs out_k[d0..d1) (and out_v) with
// d1 = min(d0 + MERGE_TILE, na + nb), taking a[a0..a1) and b[d0 - a0..d1 - a1)
// where a0 and a1_cut are the merge-path cuts of d0 and d1. smem:
// MERGE_SLOTS slots of MERGE_SLOT bytes.
__device__ __forceinline__ void merge_tile(unsigned char* smem, const K* __restrict__ ka, u64 na,
                                           const K* __restrict__ kb, u64 nb, const V* __restrict__ va,
                                           const V* __restrict__ vb, u64 d0, u64 a0, u64 a1_cut, K* __restrict__ out_k,
                                           V* __restrict__ out_v) {
    K* sk = (K*)smem;
    const u64 n = na + nb;
    const u64 d1 = n - d0 < (u64)MERGE_TILE ? n : d0 + MERGE_TILE;
    const int count = (int)(d1 - d0);
    const u64 a1 = merge_end_cut(a0, a1_cut, d1, na, nb, count);
    const int la = (int)(a1 - a0);
    const u64 b0 = d0 - a0;

    const int lb = count - la;
    const merge_layout<K> at = merge_load(sk, ka + a0, kb + b0, la, lb);
    __syncthreads();

    // merge_staged's steps, written out here: through the function, ptxas
    // (NVRTC 13, sm_80) spilled 16 bytes in the u32 / u32 sort passes.
    const int diag = min((int)threadIdx.x * CUPRIM_ITEMS, count);
    const int cut = cuprim_merge_path<Cmp>(sk + at.oa, la, sk + at.ob, lb, diag);
    K keys[CUPRIM_ITEMS];
    int src[CUPRIM_ITEMS];
    cuprim_merge_serial<Cmp, CUPRIM_ITEMS, K, !CUPRIM_PAIRS>(sk, at.oa + cut, at.oa + la, at.ob + diag - cut, at.ob + lb, keys, src);
    __syncthreads();
    merge_place(sk, keys, count);
    __syncthreads();
    merge_store(out_k + d0, sk, count);

    if constexpr (CUPRIM_PAIRS) {
        V* sv = (V*)smem;
        __syncthreads();  // the keys are out of shared memory
        const merge_layout<V> vat = merge_load(sv, va + a0, vb + b0, la, lb);
        __syncthreads();
        V vals[CUPRIM_ITEMS];
#pragma unroll
        for (int k = 0; k < CUPRIM_ITEMS; k++) {
            // src counts in the keys' layout: the same element in the values'.
            const int i = src[k] < at.ob ? src[k] - at.oa : la + (src[k] - at.ob);
            vals[k] = sv[i < la ? vat.oa + i : vat.ob + (i - la)];
        }
        __syncthreads();
        merge_place(sv, vals, count);
        __syncthreads();
        merge_store(out_v + d0, sv, count);
    }
}
