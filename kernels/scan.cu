// Single-pass scan: each tile is loaded with coalesced 16-byte loads,
// transposed through shared memory (16-byte accesses both ways) so each
// thread scans CUPRIM_ITEMS consecutive elements, scanned per warp and per
// block, chained to earlier tiles by the look-back of kernels/lookback.cuh,
// and stored the same way. About 2n bytes of traffic: a copy's worth.
//
// Specialised on: T, ScanOp (apply, identity), CUPRIM_BLOCK, CUPRIM_ITEMS.

constexpr int SCAN_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
constexpr int SCAN_WARPS = CUPRIM_BLOCK / 32;
constexpr int SCAN_VEC = 16 / sizeof(T);
constexpr int SCAN_THREAD_VECS = CUPRIM_ITEMS / SCAN_VEC;  // 16-byte vectors per thread
static_assert(CUPRIM_ITEMS % SCAN_VEC == 0, "a thread's items must be whole 16-byte vectors");
typedef cuprim_vec<T, SCAN_VEC> ScanVec;

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, 1)
    cuprim_scan(const T* in, T* out, u64 n, int exclusive, u32* status, T* aggregates, T* prefixes,
                u32* tile_counter, u32 num_tiles) {
    __shared__ ScanVec smem[SCAN_TILE / SCAN_VEC];
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
        ScanVec x[SCAN_THREAD_VECS];
#pragma unroll
        for (int j = 0; j < SCAN_THREAD_VECS; j++) x[j] = vin[j * CUPRIM_BLOCK + tid];
#pragma unroll
        for (int j = 0; j < SCAN_THREAD_VECS; j++) smem[j * CUPRIM_BLOCK + tid] = x[j];
    } else {
        T* flat = (T*)smem;
        for (int i = tid; i < SCAN_TILE; i += CUPRIM_BLOCK) flat[i] = i < valid ? in[base + i] : ScanOp::identity();
    }
    __syncthreads();

    // Each thread scans its CUPRIM_ITEMS consecutive elements.
    T items[CUPRIM_ITEMS];
#pragma unroll
    for (int q = 0; q < SCAN_THREAD_VECS; q++) {
        const ScanVec x = smem[tid * SCAN_THREAD_VECS + q];
#pragma unroll
        for (int k = 0; k < SCAN_VEC; k++) items[q * SCAN_VEC + k] = x.v[k];
    }
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
    for (int q = 0; q < SCAN_THREAD_VECS; q++) {
        ScanVec y;
#pragma unroll
        for (int k = 0; k < SCAN_VEC; k++) y.v[k] = items[q * SCAN_VEC + k];
        smem[tid * SCAN_THREAD_VECS + q] = y;
    }
    __syncthreads();

    // Store: coalesced.
    if (valid == SCAN_TILE && cuprim_aligned_to<ScanVec>(out + base)) {
        ScanVec* vout = (ScanVec*)(out + base);
#pragma unroll
        for (int j = 0; j < SCAN_THREAD_VECS; j++) vout[j * CUPRIM_BLOCK + tid] = smem[j * CUPRIM_BLOCK + tid];
    } else {
        const T* flat = (const T*)smem;
        for (int i = tid; i < valid; i += CUPRIM_BLOCK) out[base + i] = flat[i];
    }
}
