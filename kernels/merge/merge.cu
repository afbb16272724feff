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

constexpr int MERGE_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
// Bytes per shared-memory slot: keys and values take turns in one buffer.
constexpr int MERGE_SLOT = sizeof(K) > sizeof(V) ? (int)sizeof(K) : (int)sizeof(V);

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
// loads at 256 x 11 and 4, the most those registers allow; H100, i19-merge).
// Pairs measured 127.3 / 1691.6 us with cp.async against 120.6 / 1639 (in
// another call) with register loads, so they keep those, as do 8-byte keys.
template <typename E> constexpr int MERGE_LOAD = sizeof(E) == 4 && !CUPRIM_PAIRS ? CUPRIM_MERGE_LOAD : 0;

// Elements of E in 16 bytes.
template <typename E> constexpr int MERGE_VEC = 16 / (int)sizeof(E);
// Shared-memory slots a tile takes: the tile and the padding of
// merge_layout.
constexpr int MERGE_SLOTS = MERGE_TILE + (MERGE_SLOT < 16 ? 3 * (16 / MERGE_SLOT) : 0);

__device__ __forceinline__ u32 merge_smem_addr(const void* s) {
    return (u32)__cvta_generic_to_shared(s);
}
// One element (4, 8 or 16 bytes) or one 16-byte piece, global to shared,
// asynchronously (waited for by merge_cp_async_wait).
template <int BYTES> __device__ __forceinline__ void merge_cp_async(void* s, const void* g) {
#if CUPRIM_MERGE_LOAD >= 1
    if constexpr (BYTES == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(merge_smem_addr(s)), "l"(g) : "memory");
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(merge_smem_addr(s)), "l"(g), "n"(BYTES)
                     : "memory");
    }
#endif
}
__device__ __forceinline__ void merge_cp_async_wait() {
#if CUPRIM_MERGE_LOAD >= 1
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
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
            if (i < count) merge_cp_async<sizeof(E)>(s + i, src(i));
        }
        merge_cp_async_wait();
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
        for (int j = t; j < pieces; j += CUPRIM_BLOCK) merge_cp_async<16>(s + head + j * VEC, g + head + j * VEC);
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
        merge_cp_async_wait();
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
    // The cuts satisfy a0 <= a1 <= a0 + count, a1 <= na and d1 - a1 <= nb
    // when the inputs are sorted; clamped into that range (never empty,
    // since d0 - nb <= a0 <= na) they keep every access in bounds whatever
    // the inputs are.
    const u64 lo = d1 > nb && d1 - nb > a0 ? d1 - nb : a0;
    const u64 hi = a0 + count < na ? a0 + count : na;
    const u64 a1 = a1_cut < lo ? lo : (a1_cut > hi ? hi : a1_cut);
    const int la = (int)(a1 - a0);
    const u64 b0 = d0 - a0;

    const int lb = count - la;
    const merge_layout<K> at = merge_load(sk, ka + a0, kb + b0, la, lb);
    __syncthreads();

    const int diag = min((int)threadIdx.x * CUPRIM_ITEMS, count);
    const int cut = cuprim_merge_path<Cmp>(sk + at.oa, la, sk + at.ob, lb, diag);
    K keys[CUPRIM_ITEMS];
    int src[CUPRIM_ITEMS];
    cuprim_merge_serial<Cmp>(sk, at.oa + cut, at.oa + la, at.ob + diag - cut, at.ob + lb, keys, src);
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
// block: every thread sorts its ITEMS consecutive elements in registers
// (odd-even transposition, which is stable when it swaps only strictly
// smaller successors), then the block merges runs of ITEMS, 2 ITEMS, ... in
// shared memory, each thread merging ITEMS outputs from its own merge-path
// cut. Keys carry their position in the tile (u16), so values move once, at
// the end. Then passes over the whole input with runs of MERGE_TILE,
// 2 MERGE_TILE, ...: cuprim_merge_sort_partition finds each tile's cut
// within its pair of runs and cuprim_merge_sort_pass merges one output tile
// per block with merge_tile, from one buffer into the other.

// Positions in a tile fit a u16.
static_assert(MERGE_TILE <= 65536, "tile positions are u16");
typedef unsigned short cuprim_tile_pos;

// A thread's ITEMS keys (with their positions for pairs) sorted in
// registers by odd-even transposition, stable since it swaps only strictly
// smaller successors; only the first `valid` take part unless FULL.
template <bool FULL>
__device__ __forceinline__ void tile_sort_own(K (&keys)[CUPRIM_ITEMS], int (&pos)[CUPRIM_ITEMS], int valid) {
#pragma unroll
    for (int round = 0; round < CUPRIM_ITEMS; round++) {
#pragma unroll
        for (int k = round & 1; k + 1 < CUPRIM_ITEMS; k += 2) {
            if ((FULL || k + 1 < valid) && Cmp::less(keys[k + 1], keys[k])) {
                const K t = keys[k];
                keys[k] = keys[k + 1];
                keys[k + 1] = t;
                if constexpr (CUPRIM_PAIRS) {
                    const int p = pos[k];
                    pos[k] = pos[k + 1];
                    pos[k + 1] = p;
                }
            }
        }
    }
}

// A compile-time bool as a value (for generic lambdas).
template <bool B> struct merge_bool {
    static constexpr bool value = B;
};

// Sorts each tile of in_k[0..n) (with in_v) into out_k (out_v). in and out
// may be the same buffers: a block reads all of its tile before it writes.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_merge_sort_tile(const K* in_k, const V* in_v, K* out_k, V* out_v, u64 n) {
    __shared__ __align__(16) unsigned char smem[MERGE_SLOTS * MERGE_SLOT];
    __shared__ cuprim_tile_pos spos[CUPRIM_PAIRS ? MERGE_TILE : 1];
    K* sk = (K*)smem;
    const u64 d0 = (u64)blockIdx.x * MERGE_TILE;
    const int count = n - d0 < (u64)MERGE_TILE ? (int)(n - d0) : MERGE_TILE;
    const int tid = (int)threadIdx.x;
    const int first = tid * CUPRIM_ITEMS;

    // Loaded from `at`; sorted in sk (16-byte aligned, for merge_store).
    const K* at = sk + tile_load(sk, in_k + d0, count);
    __syncthreads();

    // The tile sorted in sk; FULL (a whole tile: all but the last) drops
    // every bound on the thread's elements.
    auto sort = [&](auto full) {
        constexpr bool FULL = decltype(full)::value;
        const int valid = FULL ? CUPRIM_ITEMS : min(max(count - first, 0), CUPRIM_ITEMS);
        // The thread's own elements, sorted in registers.
        K keys[CUPRIM_ITEMS];
        int pos[CUPRIM_ITEMS];
#pragma unroll
        for (int k = 0; k < CUPRIM_ITEMS; k++) {
            keys[k] = at[FULL ? first + k : min(first + k, count - 1)];
            pos[k] = first + k;
        }
        tile_sort_own<FULL>(keys, pos, valid);
        __syncthreads();
        // The thread's elements (and their tile positions) back to its slots.
        auto put = [&]() {
#pragma unroll
            for (int k = 0; k < CUPRIM_ITEMS; k++) {
                if (FULL || k < valid) {
                    sk[first + k] = keys[k];
                    if constexpr (CUPRIM_PAIRS) spos[first + k] = (cuprim_tile_pos)pos[k];
                }
            }
        };
        // Merge rounds: runs of ITEMS << j sorted elements become runs of
        // twice that; the thread's pair of runs starts at the thread
        // (tid >> (j + 1)) << (j + 1). While a pair lies within one warp's
        // 32 ITEMS slots, each warp reads and writes only its own slots, so
        // the warp alone syncs.
        auto round = [&](int j) {
            const int run = CUPRIM_ITEMS << j;
            const int ps = (tid >> (j + 1) << (j + 1)) * CUPRIM_ITEMS;
            if (FULL || first < count) {
                // Whole runs, except past the end of a tile (or of a block of
                // a size other than a power of two).
                constexpr bool WHOLE = FULL && (CUPRIM_BLOCK & (CUPRIM_BLOCK - 1)) == 0;
                const int la = WHOLE ? run : min(run, count - ps);
                const int lb = WHOLE ? run : min(run, count - ps - la);
                const int diag = first - ps;
                const int cut = cuprim_merge_path<Cmp>(sk + ps, la, sk + ps + la, lb, diag);
                int src[CUPRIM_ITEMS];
                cuprim_merge_serial<Cmp>(sk, ps + cut, ps + la, ps + la + diag - cut, ps + la + lb, keys, src);
                if constexpr (CUPRIM_PAIRS) {
#pragma unroll
                    for (int k = 0; k < CUPRIM_ITEMS; k++) pos[k] = spos[min(src[k], MERGE_TILE - 1)];
                }
            }
        };
        put();
        __syncwarp();
        int j = 0;
        for (; (2 << j) <= 32 && (CUPRIM_ITEMS << j) < count; j++) {
            round(j);
            __syncwarp();
            if (FULL || first < count) put();
            __syncwarp();
        }
        __syncthreads();
        for (; (CUPRIM_ITEMS << j) < count; j++) {
            round(j);
            __syncthreads();
            if (FULL || first < count) put();
            __syncthreads();
        }
    };
    if (count == MERGE_TILE) {
        sort(merge_bool<true>());
    } else {
        sort(merge_bool<false>());
    }

    merge_store(out_k + d0, sk, count);
    if constexpr (CUPRIM_PAIRS) {
        V* sv = (V*)smem;
        __syncthreads();  // the keys are out of shared memory
        const V* vat = sv + tile_load(sv, in_v + d0, count);
        __syncthreads();
        for (int i = tid; i < count; i += CUPRIM_BLOCK) out_v[d0 + i] = vat[spos[i]];
    }
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
    const u64 t = cuprim_thread_id();
    if (t >= tiles) return;
    const u64 d0 = t * (u64)MERGE_TILE;
    u64 ps, la, lb;
    merge_sort_pair(d0, n, run, ps, la, lb);
    splits[t] = cuprim_merge_path<Cmp>(keys + ps, la, keys + ps + la, lb, d0 - ps);
}

// One output tile (blockIdx.x) of a pass with runs of `run` (a multiple of
// MERGE_TILE, so a tile never straddles two pairs): in_k (in_v) to out_k
// (out_v), which must not overlap.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_merge_sort_pass(const K* __restrict__ in_k, const V* __restrict__ in_v, u64 n, u64 run,
                           const u64* __restrict__ splits, K* __restrict__ out_k, V* __restrict__ out_v) {
    __shared__ __align__(16) unsigned char smem[MERGE_SLOTS * MERGE_SLOT];
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
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_merge_sort_pass_fused(const K* __restrict__ in_k, const V* __restrict__ in_v, u64 n, u64 run,
                                 K* __restrict__ out_k, V* __restrict__ out_v) {
    __shared__ __align__(16) unsigned char smem[MERGE_SLOTS * MERGE_SLOT];
    __shared__ u64 cuts[2];
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
