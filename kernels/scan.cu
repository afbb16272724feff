// Single-pass scan with decoupled look-back (after Merrill & Garland, 2016).
//
// Each block takes the next tile index from an atomic counter (so every
// earlier tile is already running: waiting on one always ends), loads its
// tile with coalesced 16-byte loads, scans it, publishes the tile aggregate,
// looks back over at most one warp-width of predecessors for an inclusive
// prefix, and publishes its own inclusive prefix. About 2n bytes of traffic.
//
// Determinism: a tile's exclusive prefix is always the LEFT FOLD of the tile
// aggregates before it, whichever predecessor's published prefix the
// look-back lands on (that prefix is itself the left fold up to there). If
// no prefix is published within the window, the block waits for the oldest
// tile in the window to publish one. So float scans give the same bits on
// every run, and non-commutative operators keep their order.
//
// Specialised on: T, ScanOp (apply, identity), CUPRIM_BLOCK, CUPRIM_ITEMS.
// Also used by copy_if (kernels/select.cu) through cuprim_tile_prefix.

constexpr int SCAN_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
constexpr int SCAN_WARPS = CUPRIM_BLOCK / 32;
// One padding element per 128 bytes keeps the blocked (per-thread) reads of
// the transposed tile free of bank conflicts.
constexpr int SCAN_PAD_EVERY = 128 / sizeof(T) < 16 ? 16 : 128 / sizeof(T);
constexpr int SCAN_SMEM = SCAN_TILE + SCAN_TILE / SCAN_PAD_EVERY;
constexpr int SCAN_VEC = 16 / sizeof(T);
typedef cuprim_vec<T, SCAN_VEC> ScanVec;

__device__ __forceinline__ int scan_pad(int i) { return i + i / SCAN_PAD_EVERY; }

// Look-back status words.
constexpr u32 SCAN_EMPTY = 0, SCAN_AGGREGATE = 1, SCAN_PREFIX = 2;

// Publishes `value` for `tile` with status `flag` (value first, then fence,
// then flag: a reader that sees the flag sees the value).
template <typename V>
__device__ __forceinline__ void lookback_publish(u32* status, V* slot, u32 tile, V value, u32 flag) {
    slot[tile] = value;
    __threadfence();
    ((volatile u32*)status)[tile] = flag;
}

// Called by all 32 lanes of one warp of the block working on `tile` > 0,
// after the tile's aggregate is published. Returns (in lane 0) the left fold
// of all tile aggregates before `tile`, and publishes tile's inclusive prefix.
template <typename V, typename Op>
__device__ __forceinline__ V lookback_exclusive_prefix(u32* status, V* aggregates, V* prefixes, u32 tile,
                                                       V tile_aggregate, V* window /* 32 in smem */) {
    const int lane = threadIdx.x & 31;
    const long long t = (long long)tile - 1 - lane;
    volatile u32* vstatus = status;
    u32 st = SCAN_PREFIX;  // lanes before tile 0 never matter (tile 0 publishes a prefix)
    if (t >= 0) {
        do {
            st = vstatus[t];
        } while (st == SCAN_EMPTY);
    }
    const unsigned with_prefix = __ballot_sync(0xffffffffu, t >= 0 && st == SCAN_PREFIX);
    int stop;
    if (with_prefix) {
        stop = __ffs(with_prefix) - 1;
    } else {
        // No prefix within the window: wait for the oldest tile in it.
        stop = 31;
        if (lane == 31) {
            while (vstatus[t] != SCAN_PREFIX) {
            }
        }
        __syncwarp();
    }
    __threadfence();
    if (lane < stop) window[lane] = cuprim_load_cg(aggregates + t);
    if (lane == stop) window[lane] = cuprim_load_cg(prefixes + t);
    __syncwarp();
    V acc = window[stop];
    if (lane == 0) {
        for (int j = stop - 1; j >= 0; j--) acc = Op::apply(acc, window[j]);
        lookback_publish(status, prefixes, tile, Op::apply(acc, tile_aggregate), SCAN_PREFIX);
    }
    return acc;
}

// Takes the next tile index; the block that takes the last one resets the
// counter for the next launch on this stream.
__device__ __forceinline__ u32 scan_take_tile(u32* tile_counter, u32 num_tiles, u32* s_tile) {
    if (threadIdx.x == 0) {
        const u32 t = atomicAdd(tile_counter, 1u);
        if (t == num_tiles - 1) *tile_counter = 0;
        *s_tile = t;
    }
    __syncthreads();
    return *s_tile;
}

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK)
    cuprim_scan(const T* in, T* out, u64 n, int exclusive, u32* status, T* aggregates, T* prefixes,
                u32* tile_counter, u32 num_tiles) {
    __shared__ T smem[SCAN_SMEM];
    __shared__ T warp_totals[SCAN_WARPS];
    __shared__ T window[32];
    __shared__ T s_prefix;
    __shared__ u32 s_tile;

    const u32 tile = scan_take_tile(tile_counter, num_tiles, &s_tile);
    const u64 base = (u64)tile * SCAN_TILE;
    const u64 remaining = n - base;
    const int valid = remaining < (u64)SCAN_TILE ? (int)remaining : SCAN_TILE;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

    // Load: coalesced (striped) into shared memory.
    if (valid == SCAN_TILE && cuprim_aligned_to<ScanVec>(in + base)) {
        const ScanVec* vin = (const ScanVec*)(in + base);
#pragma unroll
        for (int j = 0; j < SCAN_TILE / SCAN_VEC / CUPRIM_BLOCK; j++) {
            const int v = j * CUPRIM_BLOCK + tid;
            const ScanVec x = vin[v];
#pragma unroll
            for (int k = 0; k < SCAN_VEC; k++) smem[scan_pad(v * SCAN_VEC + k)] = x.v[k];
        }
    } else {
        for (int i = tid; i < SCAN_TILE; i += CUPRIM_BLOCK) smem[scan_pad(i)] = i < valid ? in[base + i] : ScanOp::identity();
    }
    __syncthreads();

    // Each thread scans its CUPRIM_ITEMS consecutive elements.
    T items[CUPRIM_ITEMS];
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) items[k] = smem[scan_pad(tid * CUPRIM_ITEMS + k)];
    T thread_total = items[0];
#pragma unroll
    for (int k = 1; k < CUPRIM_ITEMS; k++) thread_total = ScanOp::apply(thread_total, items[k]);

    // Warp-inclusive scan of thread totals, in lane order.
    T x = thread_total;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const T y = cuprim_shfl_up(x, off);
        if (lane >= off) x = ScanOp::apply(y, x);
    }
    if (lane == 31) warp_totals[warp] = x;
    T before_in_warp = cuprim_shfl_up(x, 1);  // valid for lane > 0
    __syncthreads();
    if (warp == 0) {
        T w = lane < SCAN_WARPS ? warp_totals[lane] : ScanOp::identity();
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const T y = cuprim_shfl_up(w, off);
            if (lane >= off) w = ScanOp::apply(y, w);
        }
        if (lane < SCAN_WARPS) warp_totals[lane] = w;  // now inclusive
    }
    __syncthreads();
    const T tile_total = warp_totals[SCAN_WARPS - 1];

    // Publish and look back (warp 0).
    if (warp == 0) {
        if (tile == 0) {
            if (lane == 0) lookback_publish(status, prefixes, 0u, tile_total, SCAN_PREFIX);
        } else {
            if (lane == 0) lookback_publish(status, aggregates, tile, tile_total, SCAN_AGGREGATE);
            __syncwarp();
            const T p = lookback_exclusive_prefix<T, ScanOp>(status, aggregates, prefixes, tile, tile_total, window);
            if (lane == 0) s_prefix = p;
        }
    }
    __syncthreads();

    // The exclusive prefix of this thread's first element: tile prefix, then
    // earlier warps, then earlier lanes -- each only where it exists.
    bool have = false;
    T run = ScanOp::identity();
    if (tile > 0) {
        run = s_prefix;
        have = true;
    }
    if (warp > 0) {
        run = have ? ScanOp::apply(run, warp_totals[warp - 1]) : warp_totals[warp - 1];
        have = true;
    }
    if (lane > 0) {
        run = have ? ScanOp::apply(run, before_in_warp) : before_in_warp;
        have = true;
    }
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
        const T incl = have ? ScanOp::apply(run, items[k]) : items[k];
        items[k] = exclusive ? (have ? run : ScanOp::identity()) : incl;
        run = incl;
        have = true;
    }
    __syncthreads();  // everyone has read smem
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) smem[scan_pad(tid * CUPRIM_ITEMS + k)] = items[k];
    __syncthreads();

    // Store: coalesced.
    if (valid == SCAN_TILE && cuprim_aligned_to<ScanVec>(out + base)) {
        ScanVec* vout = (ScanVec*)(out + base);
#pragma unroll
        for (int j = 0; j < SCAN_TILE / SCAN_VEC / CUPRIM_BLOCK; j++) {
            const int v = j * CUPRIM_BLOCK + tid;
            ScanVec y;
#pragma unroll
            for (int k = 0; k < SCAN_VEC; k++) y.v[k] = smem[scan_pad(v * SCAN_VEC + k)];
            vout[v] = y;
        }
    } else {
        for (int i = tid; i < valid; i += CUPRIM_BLOCK) out[base + i] = smem[scan_pad(i)];
    }
}
