// Pieces shared by the two scan_by_key kernels (scan_by_key.cu, one
// look-back per tile; scan_by_key_chunks.cu, one per chunk of many tiles):
// the tile's staging in padded shared memory, the (head, value) pair and its
// segmented operator, the pairs of a thread's items and the tile's store.
//
// Needs: In0 / In1, K / T, ScanOp, CUPRIM_BLOCK, CUPRIM_ITEMS.

constexpr int SBK_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
constexpr int sbk_pad_every(int bytes) { return 128 / bytes < 16 ? 16 : 128 / bytes; }
template <typename V> __device__ __forceinline__ int sbk_pad(int i) { return i + i / sbk_pad_every(sizeof(V)); }

// A thread's share of a whole tile of V as 16-byte vectors, held in
// registers between their loads and their stores to padded shared memory,
// so the loads of two arrays' tiles (keys and values) can all be in flight
// before the first store waits.
template <typename V> struct SbkVecs {
    static constexpr int VEC = 16 / sizeof(V), VECS = SBK_TILE / VEC, PER = (VECS + CUPRIM_BLOCK - 1) / CUPRIM_BLOCK;
    cuprim_vec<V, VEC> x[PER];

    // Whether the tile at src can be read so (the tile whole, src aligned).
    static __device__ __forceinline__ bool fits(const V* src, bool whole) {
        return whole && cuprim_aligned_to<cuprim_vec<V, VEC>>(src);
    }
    __device__ __forceinline__ void load(const V* src) {
        const cuprim_vec<V, VEC>* vsrc = (const cuprim_vec<V, VEC>*)src;
#pragma unroll
        for (int j = 0; j < PER; j++) {
            const int v = j * CUPRIM_BLOCK + threadIdx.x;
            if (VECS % CUPRIM_BLOCK == 0 || v < VECS) x[j] = vsrc[v];
        }
    }
    __device__ __forceinline__ void store(V* smem) const {
#pragma unroll
        for (int j = 0; j < PER; j++) {
            const int v = j * CUPRIM_BLOCK + threadIdx.x;
            if (VECS % CUPRIM_BLOCK == 0 || v < VECS) {
#pragma unroll
                for (int k = 0; k < VEC; k++) smem[sbk_pad<V>(v * VEC + k)] = x[j].v[k];
            }
        }
    }
};

// A tile of `valid` elements from global memory into padded shared memory:
// 16-byte loads when the tile is whole and aligned, else one element per load.
template <typename V> __device__ __forceinline__ void sbk_stage(const V* src, V* smem, int valid, bool whole) {
    if (SbkVecs<V>::fits(src, whole)) {
        SbkVecs<V> r;
        r.load(src);
        r.store(smem);
    } else {
        for (int i = threadIdx.x; i < valid; i += CUPRIM_BLOCK) smem[sbk_pad<V>(i)] = src[i];
    }
}

// A tile of an input expression, element `base` on: a buffer as above; any
// other node with its vector loads when the tile is whole and its buffers
// are at a vector boundary there (base is a multiple of the tile), else one
// element per load.
template <typename X> __device__ __forceinline__ void sbk_stage_x(const X& src, u64 base, typename X::item* smem, int valid,
                                                                  bool whole) {
    typedef typename X::item V;
    if constexpr (X::IS_BUF) {
        sbk_stage<V>(src.p + base, smem, valid, whole);
    } else {
        constexpr int VEC = cuprim_x_items<X>();
        const u32 m = src.template misalign<VEC>();
        if (whole && SBK_TILE % VEC == 0 && (m == 0 || m == CUPRIM_X_ANY)) {
            constexpr int VECS = SBK_TILE / VEC, PER = (VECS + CUPRIM_BLOCK - 1) / CUPRIM_BLOCK;
#pragma unroll
            for (int j = 0; j < PER; j++) {
                const int v = j * CUPRIM_BLOCK + threadIdx.x;
                if (VECS % CUPRIM_BLOCK == 0 || v < VECS) {
                    const cuprim_arr<V, VEC> x = src.template load_n<VEC>(base + (u64)v * VEC);
#pragma unroll
                    for (int k = 0; k < VEC; k++) smem[sbk_pad<V>(v * VEC + k)] = x.v[k];
                }
            }
        } else {
            for (int i = threadIdx.x; i < valid; i += CUPRIM_BLOCK) smem[sbk_pad<V>(i)] = src.load(base + i);
        }
    }
}

// The tiles of keys and of values at `base`. Two plain buffers whose tiles
// fit SbkVecs have every load of both issued before the first store (one
// memory latency, not two: scan_by_key's chunks 946 -> 841 us at 2^28, u8
// keys / u32 values, H200); anything else is staged one after the other.
// (A template, so the buffers' branch is not compiled for expressions.)
template <typename X0, typename X1>
__device__ __forceinline__ void sbk_stage_both(const X0& keys, const X1& values, u64 base, typename X0::item* skeys,
                                               typename X1::item* svals, int valid, bool whole) {
    typedef typename X0::item K0;
    typedef typename X1::item T1;
    if constexpr (X0::IS_BUF && X1::IS_BUF) {
        if (SbkVecs<K0>::fits(keys.p + base, whole) && SbkVecs<T1>::fits(values.p + base, whole)) {
            SbkVecs<K0> k;
            SbkVecs<T1> v;
            k.load(keys.p + base);
            v.load(values.p + base);
            k.store(skeys);
            v.store(svals);
            return;
        }
    }
    sbk_stage_x(keys, base, skeys, valid, whole);
    sbk_stage_x(values, base, svals, valid, whole);
}

struct SegPair {
    T v;
    u32 head;
};

// The deterministic look-back's canonical form of a pair (kernels/block/lookback.cuh).
__device__ __forceinline__ SegPair lookback_settle(const SegPair& p) {
    SegPair r = p;
    r.v = cuprim_canonical_nan(p.v);
    return r;
}

struct SegOp {
    __device__ __forceinline__ static SegPair apply(const SegPair& a, const SegPair& b) {
        SegPair r;
        r.head = a.head | b.head;
        r.v = b.head ? b.v : ScanOp::apply(a.v, b.v);
        return r;
    }
    __device__ __forceinline__ static SegPair identity() {
        SegPair r;
        r.v = ScanOp::identity();
        r.head = 0;
        return r;
    }
};

// A thread's CUPRIM_ITEMS consecutive pairs of the staged tile at `base`
// (`valid` elements): head = "a run starts here" (element 0, or a key
// unlike the one before it); the items past `valid` are the identity.
__device__ __forceinline__ void sbk_pairs(const In0& keys, const K* skeys, const T* svals, u64 base, int valid,
                                          SegPair (&items)[CUPRIM_ITEMS]) {
    const int first = threadIdx.x * CUPRIM_ITEMS;
    K prev = first == 0 ? (base > 0 ? keys.load(base - 1) : K()) : skeys[sbk_pad<K>(first - 1)];
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
        const int i = first + k;
        if (i < valid) {
            const K key = skeys[sbk_pad<K>(i)];
            items[k].v = svals[sbk_pad<T>(i)];
            items[k].head = (base + i == 0 || key != prev) ? 1u : 0u;
            prev = key;
        } else {
            items[k] = SegOp::identity();
        }
    }
}

// The staged tile of outputs (`valid` of them) to out[base...]: 16-byte
// stores when the tile is whole and aligned.
__device__ __forceinline__ void sbk_store(const T* svals, T* out, u64 base, int valid) {
    if (valid == SBK_TILE && cuprim_aligned_to<cuprim_vec<T, 16 / sizeof(T)>>(out + base)) {
        constexpr int VEC = 16 / sizeof(T);
        cuprim_vec<T, VEC>* vout = (cuprim_vec<T, VEC>*)(out + base);
        for (int v = threadIdx.x; v < SBK_TILE / VEC; v += CUPRIM_BLOCK) {
            cuprim_vec<T, VEC> x;
#pragma unroll
            for (int k = 0; k < VEC; k++) x.v[k] = svals[sbk_pad<T>(v * VEC + k)];
            vout[v] = x;
        }
    } else {
        for (int i = threadIdx.x; i < valid; i += CUPRIM_BLOCK) out[base + i] = svals[sbk_pad<T>(i)];
    }
}
