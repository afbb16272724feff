// One-launch radix sort of a small input (at most one tile, CUPRIM_BLOCK *
// CUPRIM_ITEMS keys): one block reads the keys (and values) once, sorts
// them by every 8-bit digit in registers and shared memory, and writes
// them once, in place. No scratch, no memset, nothing read back; the host
// launches it alone.
//
// A pass (stable, LSD): each warp counts its keys' digits in its own
// counters (atomics that return nothing, issued back to back); thread d <
// RADIX turns the per-warp counts of digit d into the tile position of
// each warp's first key of d; the warps then rank their keys in (item,
// lane) order with the onesweep sort's ballot ranking (radix_rank_warp,
// sort/radix_sort.cuh), which gives each key its tile position at once,
// and store it there in shared memory. The keys are read back in the
// warp-striped order, which is the order of the pass just done. Values
// follow through the same buffer.
//
// Between passes the keys are kept in their ordered form XOR `flip`, so a
// digit is a shift and a mask; slots past n hold the ordered key of all
// ones: the largest digit in every pass and last in input order, so they
// rank after every real key and are never stored.
//
// Shared memory (dynamic): the per-warp digit counters, then the exchange
// buffer of CUPRIM_BLOCK * CUPRIM_ITEMS keys or values (the wider).
//
// Specialised on: K, V (K for keys alone), CUPRIM_PAIRS, CUPRIM_BLOCK
// (threads: a multiple of 32, at least RADIX), CUPRIM_ITEMS (keys per
// thread), CUPRIM_MATCH_ANY (see sort/radix_sort.cuh).

constexpr int SMALL_BITS = 8;
constexpr int SMALL_RADIX = 1 << SMALL_BITS;
constexpr int SMALL_WARPS = CUPRIM_BLOCK / 32;
constexpr int SMALL_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
static_assert(CUPRIM_BLOCK % 32 == 0 && CUPRIM_BLOCK >= SMALL_RADIX && CUPRIM_BLOCK <= 1024, "a thread per digit");
static_assert(SMALL_TILE < (1 << 16), "tile positions must fit 16 bits");

// One block. `keys` and `vals` (only with CUPRIM_PAIRS) hold n <= SMALL_TILE
// elements; every global read happens before the first global write.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, 1)
    cuprim_radix_small_sort(KU* keys, VU* vals, u32 n, u32 begin_bit, u32 end_bit, u64 flip) {
    extern __shared__ __align__(16) unsigned char s_dyn[];
    __shared__ u32 s_start[SMALL_RADIX];
    __shared__ u32 s_warp[SMALL_RADIX / 32];
    u32* s_wc = (u32*)s_dyn;  // [SMALL_WARPS][SMALL_RADIX]
    KU* s_keys = (KU*)(s_dyn + SMALL_WARPS * SMALL_RADIX * 4);

    const u32 tid = threadIdx.x, warp = tid >> 5;
    const u32 first = warp * 32 * CUPRIM_ITEMS + (tid & 31);
    const KR f = (KR)flip;
    KR key[CUPRIM_ITEMS];
    u32 pos[CUPRIM_ITEMS];  // digit, then tile position
    radix_tile_load_ordered<CUPRIM_ITEMS>(keys, n, key, f);
#if CUPRIM_PAIRS
    VR val[CUPRIM_ITEMS];
    VU* s_vals = (VU*)s_keys;
    radix_load_striped<VU, VR, CUPRIM_ITEMS>(vals, n, val);
#endif

    for (u32 shift = begin_bit; shift < end_bit; shift += SMALL_BITS) {
        const u32 mask = (1u << min((u32)SMALL_BITS, end_bit - shift)) - 1u;
        const bool last = end_bit - shift <= (u32)SMALL_BITS;
        for (int j = tid; j < SMALL_WARPS * SMALL_RADIX; j += CUPRIM_BLOCK) s_wc[j] = 0;
        __syncthreads();  // also: every thread has read the previous pass's buffer

#pragma unroll
        for (int i = 0; i < CUPRIM_ITEMS; i++) pos[i] = (u32)(key[i] >> shift) & mask;
        radix_count_warp<CUPRIM_ITEMS>(pos, s_wc + warp * SMALL_RADIX);
        __syncthreads();
        // Padding slots count as the largest digit (`mask`); they are never
        // stored, so the totals may keep them. Each warp's counter of digit d
        // becomes the tile position of the warp's first key of d, minus one
        // (radix_rank_warp counts from one past).
        if constexpr (SMALL_WARPS <= 16) {
            // Thread d < RADIX keeps the per-warp counts of digit d in
            // registers: one read and one write per counter.
            u32 wc[SMALL_WARPS];
            u32 count = 0;
            if (tid < SMALL_RADIX) {
#pragma unroll
                for (int w = 0; w < SMALL_WARPS; w++) {
                    wc[w] = s_wc[w * SMALL_RADIX + tid];
                    count += wc[w];
                }
            }
            radix_scan_counts<SMALL_RADIX>(count, s_warp, s_start);
            if (tid < SMALL_RADIX) {
                u32 at = s_start[tid] - 1;
#pragma unroll
                for (int w = 0; w < SMALL_WARPS; w++) {
                    s_wc[w * SMALL_RADIX + tid] = at;
                    at += wc[w];
                }
            }
        } else {
            // 32 warps: so many registers would spill 8-byte pairs.
            const u32 count = radix_warp_offsets<SMALL_RADIX, SMALL_WARPS>(s_wc);
            radix_scan_counts<SMALL_RADIX>(count, s_warp, s_start);
            if (tid < SMALL_RADIX) {
#pragma unroll
                for (int w = 0; w < SMALL_WARPS; w++) s_wc[w * SMALL_RADIX + tid] += s_start[tid] - 1;
            }
        }
        __syncthreads();
        radix_rank_warp<SMALL_BITS, CUPRIM_ITEMS, false>(pos, s_wc + warp * SMALL_RADIX,
                                                         [&](int i, u32 at) { s_keys[at] = (KU)key[i]; });
        __syncthreads();
        radix_tile_settle<KU, KR, CUPRIM_ITEMS, CUPRIM_BLOCK>(last, n, first, s_keys, keys, key,
                                                              [&](KU k) { return (KU)radix_unordered((KR)k ^ f); });
#if CUPRIM_PAIRS
        radix_tile_values<VU, VR, CUPRIM_ITEMS, CUPRIM_BLOCK>(last, n, first, pos, val, s_vals, vals);
#endif
    }
}
