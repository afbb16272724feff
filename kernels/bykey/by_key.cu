// Runs of equal consecutive keys in one pass: reduce_by_key, unique,
// unique_by_key, unique_count and run-length encoding.
//
// Element i is a run head when i == 0 or KeyEq::differ(keys[i - 1], keys[i]),
// and a run tail when it is the last element or keys[i + 1] starts a run.
// The number of heads up to and including i, minus one, is the output slot
// of i's run. Tiles chain through the decoupled look-back
// (kernels/block/lookback.cuh):
//   - unique / unique_by_key / unique_count scan the head count alone (as
//     kernels/select/select.cu scans its selection count); each head writes
//     its key (and its value) to its run's slot;
//   - reduce_by_key and run-length encoding scan (head count, segmented
//     value) pairs with
//       (ca, a) . (cb, b) = (ca + cb, cb > 0 ? b : a op b),
//     associative and not commutative, so the order is kept; at a run's tail
//     the segmented value is the run's aggregate (its length when every
//     value is 1), and the head writes the run's first key.
// A tile's outputs form contiguous ranges of slots: they are staged in
// shared memory and written as coalesced runs. Keys (and reduce's values)
// are read once, with 16-byte vector loads when the tile is whole and
// aligned; a tile reads one key before it and, to find its last tail, one
// key after it. The last tile writes the number of runs to count_out[0].
//
// Two passes (CUPRIM_BYKEY_TWO_PASS, for inputs L2 holds between them):
// cuprim_by_key_partials folds each tile to its Scanned value, then
// cuprim_by_key takes tile blockIdx.x and folds the partials before it (in
// `aggregates`) in place of the look-back (block/lookback.cuh's
// fold_partials_share); no tile waits for another, and the fold's order is
// fixed, so float values give the same bits on every run. status, prefixes
// and tile_counter go unused. On sm_90 the second launch is a dependent one.
//
// The keys and values are input expressions (In0, In1; block/expr.cuh): a
// buffer is cuprim_x_buf and keeps the vector loads, any other expression is
// read through its load / load_n where it is staged. Value outputs go to one
// array, or (CUPRIM_BYKEY_UNZIP 2 or 3) each field of a tuple to its own.
//
// Specialised on: In0 / K (the key expression and its item), In1 / V (the
// values, or for run-length encoding an unread buffer of C), O (value
// output), C (count: u32 below 2^32 elements, else u64), KeyEq (static bool
// differ(K a, K b)), ReduceOp (reduce_by_key's monoid on V),
// CUPRIM_BYKEY_KEYS (write the run keys), CUPRIM_BYKEY_VALUES (0: none,
// 1: the first value of each run, 2: reduce, 3: run lengths),
// CUPRIM_BYKEY_UNZIP (0: one output array; 2 or 3: one per tuple field),
// CUPRIM_BYKEY_CHECK_ALL (unique_by_key of values that permute: read every
// value, so every index is checked; defined only when 1),
// CUPRIM_BYKEY_TWO_PASS (defined only when 1), CUPRIM_DETERMINISTIC,
// CUPRIM_LOOKBACK_WINDOWS, CUPRIM_BLOCK, CUPRIM_ITEMS.

#define BK_SEGMENTED (CUPRIM_BYKEY_VALUES >= 2)
#ifndef CUPRIM_BYKEY_CHECK_ALL
#define CUPRIM_BYKEY_CHECK_ALL 0
#endif

constexpr int BK_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
static_assert(CUPRIM_ITEMS <= 32, "head and tail flags live in one 32-bit mask per thread");
constexpr int bk_pad_every(int bytes) { return 128 / bytes < 16 ? 16 : 128 / bytes; }
// Padded shared-memory index: thread-strided reads of CUPRIM_ITEMS
// consecutive elements fall in different banks.
template <typename X> __device__ __forceinline__ int bk_pad(int i) { return i + i / bk_pad_every(sizeof(X)); }
template <typename X> constexpr int bk_smem() { return BK_TILE + BK_TILE / bk_pad_every(sizeof(X)); }

// Loads the tile's `valid` elements at src into smem (padded).
template <typename X> __device__ __forceinline__ void bk_load_tile(const X* __restrict__ src, X* smem, int valid) {
    constexpr int VEC = 16 / sizeof(X);
    typedef cuprim_vec<X, VEC> Vec;
    if constexpr (CUPRIM_ITEMS % VEC == 0) {
        if (valid == BK_TILE && cuprim_aligned_to<Vec>(src)) {
            const Vec* vsrc = (const Vec*)src;
#pragma unroll
            for (int j = 0; j < BK_TILE / VEC / CUPRIM_BLOCK; j++) {
                const int v = j * CUPRIM_BLOCK + threadIdx.x;
                const Vec x = vsrc[v];
#pragma unroll
                for (int k = 0; k < VEC; k++) smem[bk_pad<X>(v * VEC + k)] = x.v[k];
            }
            return;
        }
    }
    for (int i = threadIdx.x; i < valid; i += CUPRIM_BLOCK) smem[bk_pad<X>(i)] = src[i];
}

// A tile of an input expression, element `base` on: a buffer as above; any
// other node with its vector loads when the tile is whole and its buffers
// are at a vector boundary there, else one element per load.
template <typename X> __device__ __forceinline__ void bk_load_tile_x(const X& src, u64 base, typename X::item* smem, int valid) {
    typedef typename X::item T;
    if constexpr (X::IS_BUF) {
        bk_load_tile<T>(src.p + base, smem, valid);
    } else {
        constexpr int VEC = cuprim_x_items<X>();
        const u32 m = src.template misalign<VEC>();
        if (valid == BK_TILE && BK_TILE % VEC == 0 && (m == 0 || m == CUPRIM_X_ANY)) {
            constexpr int VECS = BK_TILE / VEC, PER = (VECS + CUPRIM_BLOCK - 1) / CUPRIM_BLOCK;
#pragma unroll
            for (int j = 0; j < PER; j++) {
                const int v = j * CUPRIM_BLOCK + threadIdx.x;
                if (VECS % CUPRIM_BLOCK == 0 || v < VECS) {
                    const cuprim_arr<T, VEC> x = src.template load_n<VEC>(base + (u64)v * VEC);
#pragma unroll
                    for (int k = 0; k < VEC; k++) smem[bk_pad<T>(v * VEC + k)] = x.v[k];
                }
            }
        } else {
            for (int i = threadIdx.x; i < valid; i += CUPRIM_BLOCK) smem[bk_pad<T>(i)] = src.load(base + i);
        }
    }
}

// Value output slot i: one array, or each tuple field to its own.
__device__ __forceinline__ void bk_store(void* o0, void* o1, void* o2, u64 i, const O& v) {
#if CUPRIM_BYKEY_UNZIP == 0
    ((O*)o0)[i] = v;
#else
    ((decltype(O::a0)*)o0)[i] = v.a0;
    ((decltype(O::a1)*)o1)[i] = v.a1;
#if CUPRIM_BYKEY_UNZIP == 3
    ((decltype(O::a2)*)o2)[i] = v.a2;
#endif
#endif
}

struct BkCountOp {
    __device__ __forceinline__ static C apply(C a, C b) { return a + b; }
    __device__ __forceinline__ static C identity() { return 0; }
};

#if BK_SEGMENTED
#if CUPRIM_BYKEY_VALUES == 3
// Run lengths: every element's value is 1, summed per run.
typedef BkCountOp ValueOp;
#else
typedef ReduceOp ValueOp;
#endif

// (heads in the range, fold of the values after its last head).
struct BkPair {
    V v;
    C count;
};

// The deterministic look-back's canonical form of a pair (kernels/block/lookback.cuh).
__device__ __forceinline__ BkPair lookback_settle(const BkPair& p) {
    BkPair r = p;
    r.v = cuprim_canonical_nan(p.v);
    return r;
}

struct BkPairOp {
    __device__ __forceinline__ static BkPair apply(const BkPair& a, const BkPair& b) {
        BkPair r;
        r.count = a.count + b.count;
        r.v = b.count > 0 ? b.v : ValueOp::apply(a.v, b.v);
        return r;
    }
    __device__ __forceinline__ static BkPair identity() {
        BkPair r;
        r.v = ValueOp::identity();
        r.count = 0;
        return r;
    }
};
typedef BkPair Scanned;
typedef BkPairOp ScannedOp;
__device__ __forceinline__ C bk_count(const BkPair& p) { return p.count; }
#else
typedef C Scanned;
typedef BkCountOp ScannedOp;
__device__ __forceinline__ C bk_count(C c) { return c; }
#endif

#ifndef CUPRIM_BYKEY_TWO_PASS
#define CUPRIM_BYKEY_TWO_PASS 0
#endif

// One thread's part of a tile: its keys, which of them start a run (bit k:
// element first + k), its values (reduce, unique_by_key; run lengths: ones)
// and its Scanned; for reduce and run lengths also which of them end a run.
struct BkLane {
    K kk[CUPRIM_ITEMS];
    V vv[BK_SEGMENTED || CUPRIM_BYKEY_VALUES == 1 ? CUPRIM_ITEMS : 1];
    u32 heads;
    u32 tails;
    Scanned mine;
};

// Loads tile `base` (`valid` elements) into shared memory (keys, and
// reduce's values) and fills this thread's BkLane, but for unique_by_key's
// values (the kernel reads them where runs start). s_head_first: whether the
// tile's first element starts a run; s_tail_last (reduce, run lengths):
// whether its last ends one.
__device__ __forceinline__ void bk_lane(const In0& keys, const In1& values, u64 n, u64 base, int valid, K* skeys,
                                        O* svals, u32* s_head_first, u32* s_tail_last, BkLane& t) {
    const int tid = threadIdx.x;
    const int first = tid * CUPRIM_ITEMS;
    bk_load_tile_x(keys, base, skeys, valid);
#if CUPRIM_BYKEY_VALUES == 2
    bk_load_tile_x(values, base, svals, valid);
#endif
    __syncthreads();

    t.heads = 0;
    K prev = first == 0 ? (base > 0 ? keys.load(base - 1) : K()) : skeys[bk_pad<K>(first <= valid ? first - 1 : 0)];
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
        const int i = first + k;
        t.kk[k] = skeys[bk_pad<K>(i < valid ? i : 0)];
        if (i < valid && (base + i == 0 || KeyEq::differ(prev, t.kk[k]))) t.heads |= 1u << k;
        prev = t.kk[k];
    }
    if (tid == 0) *s_head_first = t.heads & 1u;

#if BK_SEGMENTED
    // Which of them end a run: the next element starts one, or the input ends.
    t.tails = t.heads >> 1;
    const int after = first + CUPRIM_ITEMS;
    if (after < valid) {
        if (KeyEq::differ(t.kk[CUPRIM_ITEMS - 1], skeys[bk_pad<K>(after)])) t.tails |= 1u << (CUPRIM_ITEMS - 1);
    } else if (after == valid && base + valid < n) {
        if (KeyEq::differ(t.kk[CUPRIM_ITEMS - 1], keys.load(base + valid))) t.tails |= 1u << (CUPRIM_ITEMS - 1);
    }
    if (first < valid && valid <= after) {
        if (base + valid == n) t.tails |= 1u << (valid - 1 - first);
        *s_tail_last = (t.tails >> (valid - 1 - first)) & 1u;
    }

#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
#if CUPRIM_BYKEY_VALUES == 2
        t.vv[k] = svals[bk_pad<V>(first + k < valid ? first + k : 0)];
#else
        t.vv[k] = (V)1;
#endif
    }
    t.mine = ScannedOp::identity();
    if (first < valid) {
        t.mine.count = (C)__popc(t.heads);
        t.mine.v = t.vv[0];
#pragma unroll
        for (int k = 1; k < CUPRIM_ITEMS; k++) {
            if (first + k < valid) t.mine.v = (t.heads >> k) & 1u ? t.vv[k] : ValueOp::apply(t.mine.v, t.vv[k]);
        }
    }
#else
    t.mine = (C)__popc(t.heads);
#endif
}

#if CUPRIM_BYKEY_TWO_PASS
// The first of two passes (for inputs L2 holds between them): partials[t],
// tile t's Scanned, folded in order. Reads the keys (and reduce's values)
// alone.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_by_key_partials(CUPRIM_INPUT In0 keys, CUPRIM_INPUT In1 values, u64 n, Scanned* __restrict__ partials) {
    __shared__ K skeys[bk_smem<K>()];
    __shared__ O svals[CUPRIM_BYKEY_VALUES == 2 ? bk_smem<O>() : 1];
    __shared__ u32 s_head_first, s_tail_last;
    // cuprim_by_key (a dependent launch) may be scheduled into the room this
    // grid leaves; it waits for this grid's end before it reads a partial.
    cuprim_grid_launch_dependents();
    const u32 tile = blockIdx.x;
    const u64 base = (u64)tile * BK_TILE;
    const u64 remaining = n - base;
    const int valid = remaining < (u64)BK_TILE ? (int)remaining : BK_TILE;
    BkLane t;
    bk_lane(keys, values, n, base, valid, skeys, svals, &s_head_first, &s_tail_last, t);
    const Scanned total = cuprim_block_reduce_ordered<Scanned, ScannedOp, CUPRIM_BLOCK>(t.mine);
    if (threadIdx.x == 0) partials[tile] = total;
}
#endif

// keys: n keys. values: n values (reduce, unique_by_key) or null.
// keys_out / values_out: at least as many slots as runs (null when not written).
// count_out: receives the number of runs (u64), written by the last tile.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_by_key(CUPRIM_INPUT In0 keys, CUPRIM_INPUT In1 values, u64 n, K* __restrict__ keys_out, void* vout0,
                  void* vout1, void* vout2, u64* __restrict__ count_out, u32* status, Scanned* aggregates,
                  Scanned* prefixes, u32* tile_counter, u32 num_tiles) {
    __shared__ K skeys[bk_smem<K>()];
    __shared__ O svals[CUPRIM_BYKEY_VALUES > 0 ? bk_smem<O>() : 1];
    __shared__ Scanned warp_totals[CUPRIM_BLOCK / 32];
    __shared__ Scanned staged[CUPRIM_DETERMINISTIC ? 32 * LOOKBACK_WINDOWS : 1];
    __shared__ Scanned s_prefix;
    __shared__ u32 s_tile, s_head_first, s_tail_last;

#if CUPRIM_BYKEY_TWO_PASS
    __shared__ Scanned warp_prefixes[CUPRIM_BLOCK / 32];
    const u32 tile = blockIdx.x;
#else
    const u32 tile = scan_take_tile(tile_counter, num_tiles, &s_tile);
#endif
    const u64 base = (u64)tile * BK_TILE;
    const u64 remaining = n - base;
    const int valid = remaining < (u64)BK_TILE ? (int)remaining : BK_TILE;
    const int tid = threadIdx.x;
    const int first = tid * CUPRIM_ITEMS;

    BkLane t;
    bk_lane(keys, values, n, base, valid, skeys, svals, &s_head_first, &s_tail_last, t);
    const u32 heads = t.heads;
#if BK_SEGMENTED
    const u32 tails = t.tails;
    constexpr bool DETERMINISTIC = CUPRIM_DETERMINISTIC;
#else
#if CUPRIM_BYKEY_VALUES == 1
    // The first value of each run, read where a run starts (before the
    // look-back, so the loads overlap it). Values that permute are read
    // everywhere, so every index is checked, as on the host.
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
        if (((heads >> k) & 1u) || (CUPRIM_BYKEY_CHECK_ALL && first + k < valid)) t.vv[k] = values.load(base + first + k);
    }
#endif
    constexpr bool DETERMINISTIC = false;  // counts are exact
#endif

    Scanned before, tile_prefix;
    bool has_before;
#if CUPRIM_BYKEY_TWO_PASS
    // Two passes: the partials before the tile (in `aggregates`), folded,
    // in place of the look-back. A dependent launch: everything above reads
    // the input alone; the partials are read and the outputs written after
    // cuprim_grid_wait().
    fold_by_warp<Scanned, ScannedOp>(fold_partials_share<Scanned, ScannedOp, CUPRIM_BLOCK>(aggregates, tile), warp_prefixes);
    block_scan_then<Scanned, ScannedOp, CUPRIM_BLOCK>(t.mine, warp_totals, before, has_before, [&](Scanned) {
        const Scanned p = fold_warp_prefixes<Scanned, ScannedOp, CUPRIM_BLOCK>(warp_prefixes);
        if (tid == 0) s_prefix = p;
    });
    const bool has_tile_prefix = tile > 0;
    tile_prefix = s_prefix;
#else
    const bool has_tile_prefix = block_scan_lookback<Scanned, ScannedOp, CUPRIM_BLOCK, DETERMINISTIC>(
        t.mine, tile, status, aggregates, prefixes, warp_totals, staged, &s_prefix, before, has_before, tile_prefix);
#endif
    const C prefix_count = has_tile_prefix ? bk_count(tile_prefix) : (C)0;
    const C tile_heads = bk_count(warp_totals[CUPRIM_BLOCK / 32 - 1]);
    const u32 head_first = s_head_first;

    // Everything before this thread: the tile's prefix, then the threads before it in the tile.
    C count = prefix_count + (has_before ? bk_count(before) : (C)0);
#if BK_SEGMENTED
    V run = t.vv[0];  // element 0 of the input is a head, so run is set before it is read
    if (has_tile_prefix) run = tile_prefix.v;
    // The threads before restart the run when they hold a head of their own.
    if (has_before) run = has_tile_prefix && before.count == 0 ? ValueOp::apply(run, before.v) : before.v;
    // A tail's slot, counted from the first run this tile ends.
    const C tail_base = prefix_count + head_first;
#endif

    // Stage the tile's outputs (everyone has read the shared tile: the look-back had two barriers).
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
        if (first + k < valid) {
            const bool head = (heads >> k) & 1u;
            count += head ? 1 : 0;
            const int slot = (int)(count - 1 - prefix_count);
#if CUPRIM_BYKEY_KEYS
            if (head) skeys[bk_pad<K>(slot)] = t.kk[k];
#endif
#if CUPRIM_BYKEY_VALUES == 1
            if (head) svals[bk_pad<O>(slot)] = t.vv[k];
#endif
#if BK_SEGMENTED
            run = head ? t.vv[k] : ValueOp::apply(run, t.vv[k]);
            if ((tails >> k) & 1u) svals[bk_pad<O>((int)(count - tail_base))] = (O)run;
#endif
        }
    }
    __syncthreads();

    const int n_heads = (int)tile_heads;
#if CUPRIM_BYKEY_KEYS
    for (int j = tid; j < n_heads; j += CUPRIM_BLOCK) keys_out[prefix_count + j] = skeys[bk_pad<K>(j)];
#endif
#if CUPRIM_BYKEY_VALUES == 1
    for (int j = tid; j < n_heads; j += CUPRIM_BLOCK) bk_store(vout0, vout1, vout2, prefix_count + j, svals[bk_pad<O>(j)]);
#endif
#if BK_SEGMENTED
    // Runs this tile ends: those it starts, plus the one continuing into it,
    // less the one continuing past it.
    const int n_tails = n_heads + (1 - (int)head_first) - (1 - (int)s_tail_last);
    for (int j = tid; j < n_tails; j += CUPRIM_BLOCK) bk_store(vout0, vout1, vout2, tail_base - 1 + j, svals[bk_pad<O>(j)]);
#endif
    if (tile == num_tiles - 1 && tid == 0) *count_out = (u64)(prefix_count + tile_heads);
}
