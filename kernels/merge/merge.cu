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

// The tile's elements into s[0..count): a's range first (la elements from
// a), then b's, each thread loading every CUPRIM_BLOCK-th element.
template <typename E>
__device__ __forceinline__ void merge_load(E* s, const E* __restrict__ a, const E* __restrict__ b, int la, int count) {
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
        const int i = k * CUPRIM_BLOCK + (int)threadIdx.x;
        if (i < count) s[i] = cuprim_load_ro(i < la ? a + i : b + (i - la));
    }
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

// Tile blockIdx.x of the merge: out_k[d0..d1) (and out_v) with
// d0 = blockIdx.x * MERGE_TILE, d1 = min(d0 + MERGE_TILE, na + nb).
// va, vb, out_v are unused unless CUPRIM_PAIRS.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_merge(const K* __restrict__ ka, u64 na, const K* __restrict__ kb, u64 nb, const V* __restrict__ va,
                 const V* __restrict__ vb, const u64* __restrict__ splits, K* __restrict__ out_k, V* __restrict__ out_v) {
    // One slot more than a tile: the serial merge reads one past its last element.
    __shared__ __align__(16) unsigned char smem[(MERGE_TILE + 1) * MERGE_SLOT];
    K* sk = (K*)smem;

    const u64 n = na + nb;
    const u64 d0 = (u64)blockIdx.x * MERGE_TILE;
    const u64 d1 = n - d0 < (u64)MERGE_TILE ? n : d0 + MERGE_TILE;
    const int count = (int)(d1 - d0);
    // The cuts satisfy a0 <= a1 <= a0 + count, a1 <= na and d1 - a1 <= nb
    // when the inputs are sorted; clamped into that range (never empty,
    // since d0 - nb <= a0 <= na) they keep every access in bounds whatever
    // the inputs are.
    const u64 a0 = splits[blockIdx.x];
    const u64 lo = d1 > nb && d1 - nb > a0 ? d1 - nb : a0;
    const u64 hi = a0 + count < na ? a0 + count : na;
    const u64 a1_cut = splits[blockIdx.x + 1];
    const u64 a1 = a1_cut < lo ? lo : (a1_cut > hi ? hi : a1_cut);
    const int la = (int)(a1 - a0);
    const u64 b0 = d0 - a0;

    merge_load(sk, ka + a0, kb + b0, la, count);
    __syncthreads();

    const int diag = min((int)threadIdx.x * CUPRIM_ITEMS, count);
    const int cut = cuprim_merge_path<Cmp>(sk, la, sk + la, count - la, diag);
    K keys[CUPRIM_ITEMS];
    int src[CUPRIM_ITEMS];
    cuprim_merge_serial<Cmp>(sk, cut, la, la + diag - cut, count, keys, src);
    __syncthreads();
    merge_place(sk, keys, count);
    __syncthreads();
    merge_store(out_k + d0, sk, count);

    if constexpr (CUPRIM_PAIRS) {
        V* sv = (V*)smem;
        __syncthreads();  // the keys are out of shared memory
        merge_load(sv, va + a0, vb + b0, la, count);
        __syncthreads();
        V vals[CUPRIM_ITEMS];
#pragma unroll
        for (int k = 0; k < CUPRIM_ITEMS; k++) vals[k] = sv[src[k]];
        __syncthreads();
        merge_place(sv, vals, count);
        __syncthreads();
        merge_store(out_v + d0, sv, count);
    }
}
