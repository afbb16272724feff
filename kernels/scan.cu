// Single-pass scan: each tile is loaded with coalesced 16-byte loads,
// transposed through shared memory so each thread scans CUPRIM_ITEMS
// consecutive elements, scanned per warp and per block, chained to earlier
// tiles by the look-back of kernels/lookback.cuh, and stored the same way.
// About 2n bytes of traffic: a copy's worth.
//
// Specialised on: T, ScanOp (apply, identity), CUPRIM_BLOCK, CUPRIM_ITEMS.

constexpr int SCAN_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
constexpr int SCAN_WARPS = CUPRIM_BLOCK / 32;
// One padding element per 128 bytes keeps the blocked (per-thread) reads of
// the transposed tile free of bank conflicts.
constexpr int SCAN_PAD_EVERY = 128 / sizeof(T) < 16 ? 16 : 128 / sizeof(T);
constexpr int SCAN_SMEM = SCAN_TILE + SCAN_TILE / SCAN_PAD_EVERY;
constexpr int SCAN_VEC = 16 / sizeof(T);
typedef cuprim_vec<T, SCAN_VEC> ScanVec;

__device__ __forceinline__ int scan_pad(int i) { return i + i / SCAN_PAD_EVERY; }

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK)
    cuprim_scan(const T* in, T* out, u64 n, int exclusive, u32* status, T* aggregates, T* prefixes,
                u32* tile_counter, u32 num_tiles) {
    __shared__ T smem[SCAN_SMEM];
    __shared__ T warp_totals[SCAN_WARPS];
    __shared__ T window[CUPRIM_DETERMINISTIC ? 32 * LOOKBACK_WINDOWS : 1];
    __shared__ T s_prefix;
    __shared__ u32 s_tile;

    const u32 tile = scan_take_tile(tile_counter, num_tiles, &s_tile);
    const u64 base = (u64)tile * SCAN_TILE;
    const u64 remaining = n - base;
    const int valid = remaining < (u64)SCAN_TILE ? (int)remaining : SCAN_TILE;
    const int tid = threadIdx.x;

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

    // Block scan of thread totals, then the tile's prefix from the look-back.
    T before;
    bool has_before;
    const T tile_total = block_scan<T, ScanOp, CUPRIM_BLOCK>(thread_total, warp_totals, before, has_before);
    T tile_prefix;
    const bool has_tile_prefix =
        lookback_tile_prefix<T, ScanOp, CUPRIM_DETERMINISTIC>(tile, tile_total, status, aggregates, prefixes, window, &s_prefix, tile_prefix);

    // This thread's first element's exclusive prefix: tile prefix, then
    // earlier threads -- each only where it exists.
    bool have = has_tile_prefix;
    T run = has_tile_prefix ? tile_prefix : ScanOp::identity();
    if (has_before) {
        run = have ? ScanOp::apply(run, before) : before;
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
