// Segmented inclusive scan over runs of equal consecutive keys, in one pass.
//
// Each element becomes a pair (head, value), head = "a run starts here"
// (i == 0 or keys[i] != keys[i-1]), and the pairs are scanned with
//   (ha, a) . (hb, b) = (ha | hb, hb ? b : a op b),
// an associative (not commutative) operator, through the same tile scan and
// look-back as kernels/scan.cu. The value part is the segmented scan.
//
// Specialised on: In0 / In1 (the keys and the values: input expressions,
// block/expr.cuh; a buffer is cuprim_x_buf), K / T (their items), ScanOp
// (apply, identity on T), CUPRIM_BLOCK, CUPRIM_ITEMS.

constexpr int SBK_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
constexpr int sbk_pad_every(int bytes) { return 128 / bytes < 16 ? 16 : 128 / bytes; }
template <typename V> __device__ __forceinline__ int sbk_pad(int i) { return i + i / sbk_pad_every(sizeof(V)); }

// A tile of `valid` elements from global memory into padded shared memory:
// 16-byte loads when the tile is whole and aligned, else one element per load.
template <typename V> __device__ __forceinline__ void sbk_stage(const V* src, V* smem, int valid, bool whole) {
    constexpr int VEC = 16 / sizeof(V);
    if (whole && cuprim_aligned_to<cuprim_vec<V, VEC>>(src)) {
        // Every load of the thread is issued before its first store.
        constexpr int VECS = SBK_TILE / VEC, PER = (VECS + CUPRIM_BLOCK - 1) / CUPRIM_BLOCK;
        const cuprim_vec<V, VEC>* vsrc = (const cuprim_vec<V, VEC>*)src;
        cuprim_vec<V, VEC> x[PER];
#pragma unroll
        for (int j = 0; j < PER; j++) {
            const int v = j * CUPRIM_BLOCK + threadIdx.x;
            if (VECS % CUPRIM_BLOCK == 0 || v < VECS) x[j] = vsrc[v];
        }
#pragma unroll
        for (int j = 0; j < PER; j++) {
            const int v = j * CUPRIM_BLOCK + threadIdx.x;
            if (VECS % CUPRIM_BLOCK == 0 || v < VECS) {
#pragma unroll
                for (int k = 0; k < VEC; k++) smem[sbk_pad<V>(v * VEC + k)] = x[j].v[k];
            }
        }
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

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_scan_by_key(CUPRIM_INPUT In0 keys, CUPRIM_INPUT In1 values, T* out, u64 n, u32* status,
                       SegPair* aggregates, SegPair* prefixes, u32* tile_counter, u32 num_tiles) {
    __shared__ K skeys[SBK_TILE + SBK_TILE / sbk_pad_every(sizeof(K))];
    __shared__ T svals[SBK_TILE + SBK_TILE / sbk_pad_every(sizeof(T))];
    __shared__ SegPair warp_totals[CUPRIM_BLOCK / 32];
    __shared__ SegPair staged[CUPRIM_DETERMINISTIC ? 32 * LOOKBACK_WINDOWS : 1];
    __shared__ SegPair s_prefix;
    __shared__ u32 s_tile;

    const u32 tile = scan_take_tile(tile_counter, num_tiles, &s_tile);
    const u64 base = (u64)tile * SBK_TILE;
    const u64 remaining = n - base;
    const int valid = remaining < (u64)SBK_TILE ? (int)remaining : SBK_TILE;
    const int tid = threadIdx.x;

    const bool whole = valid == SBK_TILE;
    sbk_stage_x(keys, base, skeys, valid, whole);
    sbk_stage_x(values, base, svals, valid, whole);
    __syncthreads();

    SegPair items[CUPRIM_ITEMS];
    const int first = tid * CUPRIM_ITEMS;
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
    SegPair thread_total = items[0];
#pragma unroll
    for (int k = 1; k < CUPRIM_ITEMS; k++) thread_total = SegOp::apply(thread_total, items[k]);

    SegPair before;
    bool has_before;
    SegPair tile_prefix;
    const bool has_tile_prefix = block_scan_lookback<SegPair, SegOp, CUPRIM_BLOCK, CUPRIM_DETERMINISTIC>(
        thread_total, tile, status, aggregates, prefixes, warp_totals, staged, &s_prefix, before, has_before, tile_prefix);

    bool have = has_tile_prefix;
    SegPair run = has_tile_prefix ? tile_prefix : SegOp::identity();
    if (has_before) {
        run = have ? SegOp::apply(run, before) : before;
        have = true;
    }
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
        run = have ? SegOp::apply(run, items[k]) : items[k];
        have = true;
        if (first + k < valid) svals[sbk_pad<T>(first + k)] = run.v;
    }
    __syncthreads();
    if (whole && cuprim_aligned_to<cuprim_vec<T, 16 / sizeof(T)>>(out + base)) {
        constexpr int VEC = 16 / sizeof(T);
        cuprim_vec<T, VEC>* vout = (cuprim_vec<T, VEC>*)(out + base);
        for (int v = tid; v < SBK_TILE / VEC; v += CUPRIM_BLOCK) {
            cuprim_vec<T, VEC> x;
#pragma unroll
            for (int k = 0; k < VEC; k++) x.v[k] = svals[sbk_pad<T>(v * VEC + k)];
            vout[v] = x;
        }
    } else {
        for (int i = tid; i < valid; i += CUPRIM_BLOCK) out[base + i] = svals[sbk_pad<T>(i)];
    }
}
