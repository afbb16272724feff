// The seed's radix sort (Brown 2015, chapter 9), for comparison with the
// onesweep kernels of radix_sort.cu: LSD with 4-bit digits and three
// kernels per pass, reduce-then-scan.
//
// 1. cuprim_radix_classic_upsweep: block b counts the 16 digits of its
//    contiguous run of tiles into counts[digit * blocks + b].
// 2. cuprim_radix_classic_scan: one block turns counts (digit-major) into
//    exclusive offsets: where block b's first key of digit d goes.
// 3. cuprim_radix_classic_downsweep: block b walks its tiles in order,
//    ranks each tile stably (as the onesweep kernel does) and scatters it
//    after the keys it has already placed.
//
// Every pass reads the keys twice; onesweep reads them once, with half as
// many passes. Offsets are u32: n < 2^32.
//
// Specialised on: K, V, CUPRIM_PAIRS, CUPRIM_BLOCK, CUPRIM_ITEMS,
// CUPRIM_MATCH_ANY.

constexpr int C_BITS = 4;
constexpr int C_RADIX = 1 << C_BITS;
constexpr int C_WARPS = CUPRIM_BLOCK / 32;
constexpr int C_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
constexpr int C_BUF = C_TILE * (sizeof(K) > sizeof(V) ? sizeof(K) : sizeof(V));
constexpr int C_SCAN_BLOCK = 1024;

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK)
    cuprim_radix_classic_upsweep(const KU* keys, u64 n, u32 shift, u32 mask, u64 flip, u32 tiles_per_block, u32* counts) {
    __shared__ u32 s_count[C_WARPS * C_RADIX];
    for (int j = threadIdx.x; j < C_WARPS * C_RADIX; j += CUPRIM_BLOCK) s_count[j] = 0;
    __syncthreads();
    const u64 first = (u64)blockIdx.x * tiles_per_block * C_TILE;
    const u64 end = min(n, first + (u64)tiles_per_block * C_TILE);
    u32* mine = s_count + (threadIdx.x >> 5) * C_RADIX;
    const KR f = (KR)flip;
    for (u64 i = first + threadIdx.x; i < end; i += CUPRIM_BLOCK) atomicAdd(mine + radix_digit(keys[i], shift, mask, f), 1u);
    __syncthreads();
    if (threadIdx.x < C_RADIX) {
        u32 c = 0;
        for (int w = 0; w < C_WARPS; w++) c += s_count[w * C_RADIX + threadIdx.x];
        counts[threadIdx.x * gridDim.x + blockIdx.x] = c;
    }
}

extern "C" __global__ void __launch_bounds__(C_SCAN_BLOCK) cuprim_radix_classic_scan(u32* counts, u32 total) {
    __shared__ u64 s_warp[C_SCAN_BLOCK / 32];
    u64 carry = 0;
    for (u32 base = 0; base < total; base += C_SCAN_BLOCK) {
        const u32 j = base + threadIdx.x;
        const u64 c = j < total ? counts[j] : 0ull;
        const u64 before = radix_block_exclusive_u64<C_SCAN_BLOCK>(c, s_warp);
        if (j < total) counts[j] = (u32)(carry + before);
        __shared__ u64 s_total;
        if (threadIdx.x == C_SCAN_BLOCK - 1) s_total = before + c;
        __syncthreads();
        carry += s_total;
        __syncthreads();
    }
}

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_radix_classic_downsweep(const KU* __restrict__ keys_in, KU* __restrict__ keys_out,
                                   const VU* __restrict__ vals_in, VU* __restrict__ vals_out, u64 n, u32 shift, u32 mask, u64 flip, u32 tiles_per_block,
                                   const u32* offsets) {
    __shared__ u32 s_wc[C_WARPS * C_RADIX];
    __shared__ u32 s_start[C_RADIX];
    __shared__ u32 s_warp[1];
    __shared__ u64 s_run[C_RADIX];
    __shared__ u64 s_base[C_RADIX];
    __shared__ __align__(16) unsigned char s_buf[C_BUF];
    KU* s_keys = (KU*)s_buf;

    const u32 tid = threadIdx.x, warp = tid >> 5;
    const u32 first = warp * 32 * CUPRIM_ITEMS + (tid & 31);
    const KR f = (KR)flip;
    if (tid < C_RADIX) s_run[tid] = offsets[tid * gridDim.x + blockIdx.x];

    for (u32 t = 0; t < tiles_per_block; t++) {
        const u64 tile_base = ((u64)blockIdx.x * tiles_per_block + t) * C_TILE;
        if (tile_base >= n) break;  // the same for the whole block
        const u32 valid = n - tile_base < (u64)C_TILE ? (u32)(n - tile_base) : (u32)C_TILE;
        for (int j = tid; j < C_WARPS * C_RADIX; j += CUPRIM_BLOCK) s_wc[j] = 0;
        __syncthreads();  // also: the previous tile has finished with shared memory

        KR key[CUPRIM_ITEMS];
        u32 pos[CUPRIM_ITEMS];  // as in cuprim_radix_onesweep
        radix_load_striped<KU, KR, CUPRIM_ITEMS>(keys_in + tile_base, valid, key);
#pragma unroll
        for (int i = 0; i < CUPRIM_ITEMS; i++) pos[i] = first + i * 32 < valid ? radix_digit(key[i], shift, mask, f) : C_RADIX - 1;
        radix_rank_warp<C_BITS, CUPRIM_ITEMS, true>(pos, s_wc + warp * C_RADIX);
        __syncthreads();
        u32 count = radix_warp_offsets<C_RADIX, C_WARPS>(s_wc);
        if (tid == C_RADIX - 1) count -= C_TILE - valid;
        radix_scan_counts<C_RADIX>(count, s_warp, s_start);
        radix_positions<C_RADIX, CUPRIM_ITEMS>(pos, s_start, s_wc + warp * C_RADIX);
#pragma unroll
        for (int i = 0; i < CUPRIM_ITEMS; i++) s_keys[pos[i]] = (KU)key[i];
        if (tid < C_RADIX) {
            s_base[tid] = s_run[tid] - s_start[tid];
            s_run[tid] += count;
        }
        __syncthreads();
        u32 out_dig[CUPRIM_ITEMS];
#pragma unroll
        for (int i = 0; i < CUPRIM_ITEMS; i++) {
            const u32 p = i * CUPRIM_BLOCK + tid;
            if (p < valid) {
                const KR k = s_keys[p];
                out_dig[i] = radix_digit(k, shift, mask, f);
                keys_out[s_base[out_dig[i]] + p] = (KU)k;
            }
        }
#if CUPRIM_PAIRS
        VR val[CUPRIM_ITEMS];
        radix_load_striped<VU, VR, CUPRIM_ITEMS>(vals_in + tile_base, valid, val);
        VU* s_vals = (VU*)s_buf;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < CUPRIM_ITEMS; i++) s_vals[pos[i]] = (VU)val[i];
        __syncthreads();
#pragma unroll
        for (int i = 0; i < CUPRIM_ITEMS; i++) {
            const u32 p = i * CUPRIM_BLOCK + tid;
            if (p < valid) vals_out[s_base[out_dig[i]] + p] = s_vals[p];
        }
#endif
        __syncthreads();
    }
}
