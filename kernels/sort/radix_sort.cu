// Onesweep LSD radix sort (after Adinets & Merrill, 2022), 8-bit digits.
//
// 1. cuprim_radix_histogram: one read of the keys counts every digit of
//    every pass (per-block shared-memory histograms, then 64-bit atomics
//    into hist[pass][256]); the last block to finish turns each pass's
//    counts into exclusive digit starts.
// 2. cuprim_radix_onesweep, once per pass (and per portion of at most
//    2^30 - 1 keys): a block takes the next tile index from an atomic
//    counter, counts its keys' digits and publishes the counts at once
//    (so successors wait less), ranks its keys by the digit (stable),
//    learns from its predecessors' counts (decoupled look-back, one
//    thread per digit) how many keys of each digit come before the tile,
//    and scatters keys (then values) to
//    digit start + keys of that digit in earlier tiles + rank in the tile,
//    through shared memory so runs of one digit are written together.
// (Inputs of one small tile are sorted by kernels/sort/radix_sort_small.cu
// instead, in one launch.)
//
// Shortcuts (CUPRIM_SORT_SHORTCUT 1), for keys with constant or locally
// constant bytes:
// - A pass whose digit is the same for every key leaves the order as it
//   is. The histogram's last block finds such passes and writes a plan word
//   per pass: skip it (every block returns at once) or run it. The host
//   alternates the buffers every pass, so only two trivial passes in a row
//   are skipped, which leaves every later pass reading the buffer the host
//   gave it; a trivial pass on its own runs, every tile of it taking the
//   single-digit path below. (Both kernels take the plan pointer either
//   way, so the host launches them alike; without the shortcuts they
//   ignore it.)
// - A tile whose keys all have one digit (as in CUB's "short circuit")
//   skips ranking: its keys keep their input order and go to one range.
//
// Look-back words: one u32 per (tile, digit): 0 = nothing yet; bit 30 =
// the tile's own count of the digit in bits 0..29 ("aggregate"); bit 31 =
// the count of the digit in this tile and all before it in the portion
// ("inclusive prefix"). A word is written whole, so a reader sees the flag
// and count together. Counts stay below 2^30 because a portion has fewer
// than 2^30 keys; portions are chained through carry arrays (the number of
// keys of each digit in earlier portions).
//
// Forward progress: a tile index is taken only by a running block, and a
// tile waits only for smaller indices, so every wait ends.
//
// Specialised on: K, V, CUPRIM_PAIRS, CUPRIM_SORT_X with SortIn (0 or
// undefined: a buffer sort; 1: keys from the expression SortIn; 2: keys and
// values from SortIn, a zip), CUPRIM_BLOCK, CUPRIM_ITEMS,
// CUPRIM_MIN_BLOCKS, CUPRIM_MATCH_ANY, CUPRIM_LB_BATCH, CUPRIM_LB_SLEEP_MAX,
// CUPRIM_HIST_BLOCK, CUPRIM_HIST_UNROLL, CUPRIM_WIDE_OFFSETS (1: more than
// 2^32 keys), CUPRIM_SORT_SHORTCUT (1: the shortcuts above),
// CUPRIM_SORT_SHARE (1: the onesweep pass keeps its ranking counters and
// its exchange buffer in the same shared memory, as CUB does, which admits
// larger tiles for one more barrier per tile; defined only when 1),
// CUPRIM_SORT_DYN (1: with CUPRIM_SORT_SHARE, that buffer is the launch's
// dynamic shared memory, SORT_SHARED_BUF bytes, for tiles past the 48 KiB
// of static shared memory; defined only when 1).

#ifndef CUPRIM_SORT_SHARE
#define CUPRIM_SORT_SHARE 0
#endif
#ifndef CUPRIM_SORT_DYN
#define CUPRIM_SORT_DYN 0
#endif
static_assert(!CUPRIM_SORT_DYN || CUPRIM_SORT_SHARE, "a dynamic exchange buffer holds the counters too");

constexpr int RADIX_BITS = 8;
constexpr int RADIX = 1 << RADIX_BITS;
constexpr int SORT_WARPS = CUPRIM_BLOCK / 32;
constexpr int SORT_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
constexpr int SORT_BUF = SORT_TILE * (sizeof(K) > sizeof(V) ? sizeof(K) : sizeof(V));
static_assert(CUPRIM_BLOCK % 32 == 0 && CUPRIM_BLOCK >= RADIX, "a block needs a thread per digit");
static_assert(SORT_TILE < (1 << 16), "tile positions must fit 16 bits");
// With CUPRIM_SORT_SHARE the per-warp ranking counters overlay the exchange
// buffer, which is then this large.
constexpr int SORT_COUNTER_BYTES = SORT_WARPS * RADIX * 4;
constexpr int SORT_SHARED_BUF = SORT_BUF > SORT_COUNTER_BYTES ? SORT_BUF : SORT_COUNTER_BYTES;

// Output positions: u32 when the sort has at most 2^32 keys (cheaper
// address arithmetic in the scatter), else u64. A digit's base may be
// "negative" (its keys' output start less than their tile position); the
// sum with the tile position wraps back into range in either width.
#if CUPRIM_WIDE_OFFSETS
typedef u64 SortOffset;
#else
typedef u32 SortOffset;
#endif

constexpr u32 LB_AGGREGATE = 1u << 30;
constexpr u32 LB_PREFIX = 2u << 30;
constexpr u32 LB_COUNT = LB_AGGREGATE - 1;
constexpr int LB_BATCH = CUPRIM_LB_BATCH;

// Plan word of a pass (CUPRIM_SORT_SHORTCUT).
constexpr u32 PLAN_RUN = 0, PLAN_SKIP = 1;
#if CUPRIM_SORT_SHORTCUT
// The tile index a block of a skipped pass takes (no pass has this many tiles).
constexpr u32 SKIP_TILE = ~0u;
#endif

// Plans the `passes` passes, bit p of `trivial` set when every key has
// the same digit in pass p: two trivial passes in a row are skipped, the
// others run. Skipped passes come in adjacent pairs, so every pass that
// runs finds the data where the host expects it.
__device__ __forceinline__ void radix_plan_passes(u32 trivial, u32 passes, u32* plan) {
    for (u32 p = 0; p < passes; p++) {
        if (((trivial >> p) & 3u) == 3u && p + 1 < passes) {
            plan[p] = plan[p + 1] = PLAN_SKIP;
            p++;
        } else {
            plan[p] = PLAN_RUN;
        }
    }
}

// ---------------------------------------------------------------------------
// Histogram of every pass's digit.

constexpr int HIST_PASSES = sizeof(K);
// Copies of the histogram per block (warp w uses copy w % HIST_PARTS), to
// spread atomics on popular digits; about 16 KiB of shared memory.
constexpr int HIST_PARTS_RAW = 16384 / (HIST_PASSES * RADIX * 4);
constexpr int HIST_PARTS = HIST_PARTS_RAW > 8 ? 8 : (HIST_PARTS_RAW < 1 ? 1 : HIST_PARTS_RAW);
static_assert(CUPRIM_HIST_BLOCK % 32 == 0 && CUPRIM_HIST_BLOCK >= RADIX, "a block needs a thread per digit");

// The histogram over the keys `visit` hands to the counting function it
// is given (visit(count) calls count(key) once for every key, as KU).
template <typename Visit>
__device__ __forceinline__ void radix_histogram_of(u64 n, u32 begin_bit, u32 end_bit, u64 flip, u64* hist, u32* ticket, u32* plan,
                                                   Visit visit) {
    __shared__ u32 s_hist[HIST_PARTS * HIST_PASSES * RADIX];
    __shared__ u64 s_warp[CUPRIM_HIST_BLOCK / 32];

    for (int i = threadIdx.x; i < HIST_PARTS * HIST_PASSES * RADIX; i += CUPRIM_HIST_BLOCK) s_hist[i] = 0;
    const u32 passes = (end_bit - begin_bit + RADIX_BITS - 1) / RADIX_BITS;
    u32 shift[HIST_PASSES], mask[HIST_PASSES];
#pragma unroll
    for (int p = 0; p < HIST_PASSES; p++) {
        shift[p] = begin_bit + p * RADIX_BITS;
        const u32 bits = (u32)p < passes ? min((u32)RADIX_BITS, end_bit - shift[p]) : 0u;
        mask[p] = (1u << bits) - 1u;
    }
    __syncthreads();

    u32* part = s_hist + ((threadIdx.x >> 5) % HIST_PARTS) * (HIST_PASSES * RADIX);
    const KR f = (KR)flip;
    auto count = [&](KR k) {
        const KR o = radix_ordered(k) ^ f;
#pragma unroll
        for (int p = 0; p < HIST_PASSES; p++) {
            if ((u32)p < passes) atomicAdd(part + p * RADIX + ((u32)(o >> shift[p]) & mask[p]), 1u);
        }
    };

    visit(count);
    __syncthreads();

    for (u32 j = threadIdx.x; j < passes * RADIX; j += CUPRIM_HIST_BLOCK) {
        u32 c = 0;
#pragma unroll
        for (int q = 0; q < HIST_PARTS; q++) c += s_hist[q * HIST_PASSES * RADIX + j];
        if (c) atomicAdd(hist + j, (u64)c);
    }

    // The last block to finish scans (block/ticket.cuh): it sees every
    // block's atomics.
    if (!cuprim_last_block(ticket)) return;
#if CUPRIM_SORT_SHORTCUT
    u32 trivial = 0;  // bit p: one digit holds every key in pass p
#endif
    for (u32 p = 0; p < passes; p++) {
        const u64 c = threadIdx.x < RADIX ? __ldcg(hist + p * RADIX + threadIdx.x) : 0ull;
        const u64 before = radix_block_exclusive_u64<CUPRIM_HIST_BLOCK>(c, s_warp);
        if (threadIdx.x < RADIX) hist[p * RADIX + threadIdx.x] = before;
#if CUPRIM_SORT_SHORTCUT
        if (__syncthreads_or(c == n)) trivial |= 1u << p;
#endif
    }
#if CUPRIM_SORT_SHORTCUT
    if (threadIdx.x == 0) radix_plan_passes(trivial, passes, plan);
#endif
}

extern "C" __global__ void __launch_bounds__(CUPRIM_HIST_BLOCK)
    cuprim_radix_histogram(const KU* keys, u64 n, u32 begin_bit, u32 end_bit, u64 flip, u64* hist, u32* ticket, u32* plan) {
    radix_histogram_of(n, begin_bit, end_bit, flip, hist, ticket, plan, [&](auto& count) {
        // Keys before the first 16-byte boundary and after the last whole
        // vector are counted one by one; the rest with 16-byte loads
        // (block/load.cuh: cuprim_consume).
        cuprim_consume<CUPRIM_HIST_UNROLL>(keys, n, [&](const KU& k, u64) { count(k); });
    });
}

// Sorts of input expressions (src/expr/): SortIn is the keys' expression,
// or (CUPRIM_SORT_X 2) the zip of the keys' and the values'; a buffer sort
// has none (this entry is then never launched).
#ifndef CUPRIM_SORT_X
#define CUPRIM_SORT_X 0
typedef cuprim_x_buf<KU> SortIn;
#endif

// The histogram of an input expression's keys, which it writes to keys_out
// (and the values to vals_out) as it reads them: the first pass reads the
// expression, so no collected copy is read again.
extern "C" __global__ void __launch_bounds__(CUPRIM_HIST_BLOCK)
    cuprim_radix_histogram_x(CUPRIM_INPUT SortIn in, u64 n, u32 begin_bit, u32 end_bit, u64 flip, u64* hist, u32* ticket, u32* plan,
                             KU* __restrict__ keys_out, VU* __restrict__ vals_out) {
    radix_histogram_of(n, begin_bit, end_bit, flip, hist, ticket, plan, [&](auto& count) {
        cuprim_consume_x<CUPRIM_HIST_UNROLL>(in, n, [&](const typename SortIn::item& x, u64 i) {
#if CUPRIM_SORT_X == 2
            const KU k = radix_as_uint<KU>(x.a0);
            vals_out[i] = radix_as_uint<VU>(x.a1);
#else
            const KU k = radix_as_uint<KU>(x);
            (void)vals_out;
#endif
            keys_out[i] = k;
            count(k);
        });
    });
}

// ---------------------------------------------------------------------------
// One pass over one portion.

// Look-back, one thread per digit (tid < RADIX, holding the tile's `count`
// of its digit): add predecessors' counts until one with an inclusive
// prefix, publish this tile's, and set s_base[d] so that s_base[d] + (tile
// position) is the output position of a key with digit d. The words of
// LB_BATCH predecessors are read at once (one round trip to L2 instead of
// LB_BATCH dependent ones); a word not yet published is read again.
__device__ __forceinline__ void onesweep_lookback(u32 tile, u32 count, u32* lookback, const u64* digit_starts, const u64* carry_in,
                                                  u64* carry_out, u32 num_tiles, const u32* s_start, SortOffset* s_base) {
    const u32 tid = threadIdx.x;
    u32 before = 0;
    if (tile > 0) {
        long long k = (long long)tile - 1;  // the next word to use
        bool found = false;
        cuprim_backoff<CUPRIM_LB_SLEEP_MAX> backoff;  // while a predecessor has not published
        while (!found) {
            u32 w[LB_BATCH];
#pragma unroll
            for (int j = 0; j < LB_BATCH; j++) {
                // Tile 0 always holds a prefix, so the sentinel is never used.
                w[j] = k - j >= 0 ? ((volatile u32*)lookback)[(u64)(k - j) * RADIX + tid] : LB_PREFIX;
            }
            bool stalled = false;
#pragma unroll
            for (int j = 0; j < LB_BATCH; j++) {
                if (!found && !stalled) {
                    if (w[j] == 0) {
                        stalled = true;  // not published yet: read it again
                    } else {
                        before += w[j] & LB_COUNT;
                        found = (w[j] & LB_PREFIX) != 0;
                        k -= !found;
                    }
                }
            }
            // Spinning threads take issue slots the other resident
            // block needs for its ranking: back off while waiting.
            if (!found && stalled) backoff.pause();
        }
        ((volatile u32*)lookback)[(u64)tile * RADIX + tid] = LB_PREFIX | (before + count);
    }
    const u64 carried = carry_in[tid];
    s_base[tid] = (SortOffset)(digit_starts[tid] + carried + before - s_start[tid]);
    if (tile == num_tiles - 1) carry_out[tid] = carried + before + count;
}

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_radix_onesweep(const KU* __restrict__ keys_in, KU* __restrict__ keys_out, const VU* __restrict__ vals_in,
                          VU* __restrict__ vals_out, u64 n, u32 shift, u32 mask, u64 flip, const u64* digit_starts,
                          const u64* carry_in, u64* carry_out, u32* lookback, u32* tile_counter, u32 num_tiles,
                          const u32* plan) {
#if CUPRIM_SORT_DYN
    // Counters until every warp has ranked, then keys, then values.
    extern __shared__ __align__(16) unsigned char s_buf[];
    u32* s_wc = (u32*)s_buf;
#elif CUPRIM_SORT_SHARE
    // Counters until every warp has ranked, then keys, then values.
    __shared__ __align__(16) unsigned char s_buf[SORT_SHARED_BUF];
    u32* s_wc = (u32*)s_buf;
#else
    __shared__ u32 s_wc[SORT_WARPS * RADIX];
#endif
    __shared__ u32 s_start[RADIX];
    __shared__ SortOffset s_base[RADIX];
    __shared__ u32 s_warp[RADIX / 32];
    __shared__ u32 s_tile;
#if !CUPRIM_SORT_SHARE
    __shared__ __align__(16) unsigned char s_buf[SORT_BUF];
#endif
    KU* s_keys = (KU*)s_buf;

    const u32 tid = threadIdx.x, warp = tid >> 5;
    if (tid == 0) {
        const u32 taken = atomicAdd(tile_counter, 1u);
#if CUPRIM_SORT_SHORTCUT
        // The plan is read while the tile index is on its way (read before
        // it, its latency delayed every block; the counter of a skipped pass
        // is never used).
        s_tile = __ldg(plan) == PLAN_SKIP ? SKIP_TILE : taken;
#else
        s_tile = taken;
#endif
    }
    for (int j = tid; j < SORT_WARPS * RADIX; j += CUPRIM_BLOCK) s_wc[j] = 0;
    __syncthreads();

    const u32 tile = s_tile;
#if CUPRIM_SORT_SHORTCUT
    // A skipped pass: every block ends at once, all its threads together.
    // (A `return` here makes ptxas spill a register for 20-item tiles;
    // `exit` does not.)
    if (tile == SKIP_TILE) asm volatile("exit;");
#endif
    const u64 tile_base = (u64)tile * SORT_TILE;
    const u32 valid = n - tile_base < (u64)SORT_TILE ? (u32)(n - tile_base) : (u32)SORT_TILE;
    const KR f = (KR)flip;

    // Load and rank. Slots past the end get a key whose ordered form is all
    // ones: the pass's largest digit (`mask`), so they rank after every
    // real key (they come last in input order too) and occupy tile
    // positions [valid, SORT_TILE), which are never stored. (A padding key
    // rather than a digit chosen per slot: full tiles then test nothing.)
    KR key[CUPRIM_ITEMS];
    u32 pos[CUPRIM_ITEMS];  // digit, then tile position (| digit << 16 with values)
    radix_load_striped<KU, KR, CUPRIM_ITEMS>(keys_in + tile_base, valid, key, radix_unordered(KEY_ALL ^ f));
#pragma unroll
    for (int i = 0; i < CUPRIM_ITEMS; i++) {
        key[i] = radix_tile_key(key[i], f);
        pos[i] = radix_tile_digit(key[i], shift, mask, f);
    }
    // Count first (cheap), publish, then rank: successors waiting on this
    // tile's counts see them before its keys are ranked.
    radix_count_warp<CUPRIM_ITEMS>(pos, s_wc + warp * RADIX);
    __syncthreads();

    // Thread d < RADIX owns digit d: publish the tile's count at once (an
    // inclusive prefix for tile 0), then scan the counts over digits.
    u32 count = radix_warp_offsets<RADIX, SORT_WARPS>(s_wc);
    if (tid < RADIX) {
        if (tid == mask) count -= SORT_TILE - valid;  // the padding slots
        volatile u32* mine = lookback + (u64)tile * RADIX + tid;
        *mine = (tile == 0 ? LB_PREFIX : LB_AGGREGATE) | count;
    }
#if CUPRIM_SORT_SHORTCUT
    const bool single = radix_scan_counts<RADIX, true>(count, s_warp, s_start, tid < RADIX && count == valid);
#else
    radix_scan_counts<RADIX>(count, s_warp, s_start);
    constexpr bool single = false;
#endif
    if (single) {
        // Every key of the tile has the same digit: sorted, the tile is in
        // input order, so ranking is skipped. (Keeping the keys in
        // registers through the look-back, to store them straight to
        // global memory, spills for float keys.)
        const u32 first = warp * 32 * CUPRIM_ITEMS + (tid & 31);
#pragma unroll
        for (int i = 0; i < CUPRIM_ITEMS; i++) {
            pos[i] = first + i * 32;
            s_keys[pos[i]] = (KU)key[i];
        }
    } else {
        // Each warp's counter of digit d becomes the tile position of its
        // first key of d, minus one (see radix_rank_warp; it wraps for
        // position 0); ranking then gives tile positions, and keys go to
        // shared memory in sorted order.
        if (tid < RADIX) {
#pragma unroll
            for (int w = 0; w < SORT_WARPS; w++) s_wc[w * RADIX + tid] += s_start[tid] - 1;
        }
        __syncthreads();
#if CUPRIM_SORT_SHARE
        radix_rank_warp<RADIX_BITS, CUPRIM_ITEMS, false>(pos, s_wc + warp * RADIX);
        __syncthreads();  // every warp is done with its counters
#pragma unroll
        for (int i = 0; i < CUPRIM_ITEMS; i++) s_keys[pos[i]] = (KU)key[i];
#else
        // The exchange buffer is apart from the counters: each key goes to
        // it as soon as it is ranked, which frees its registers early.
        radix_rank_warp<RADIX_BITS, CUPRIM_ITEMS, false>(pos, s_wc + warp * RADIX,
                                                         [&](int i, u32 at) { s_keys[at] = (KU)key[i]; });
#endif
    }

    if (tid < RADIX) onesweep_lookback(tile, count, lookback, digit_starts, carry_in, carry_out, num_tiles, s_start, s_base);
    __syncthreads();

    // Scatter keys: consecutive threads take consecutive tile positions, so
    // a run of one digit is written by consecutive threads. With values,
    // the digit of tile position i * BLOCK + tid is kept in the high half of
    // pos[i] (tile positions fit 16 bits). (A copy of this loop without the
    // bound test for full tiles, which ptxas compiles to half the
    // instructions per key, was slower on H100: keys u32 at 2^28 5.68 ms
    // against 5.35.)
#pragma unroll
    for (int i = 0; i < CUPRIM_ITEMS; i++) {
        const u32 p = i * CUPRIM_BLOCK + tid;
        if (p < valid) {
            const KR k = s_keys[p];
            const u32 d = radix_tile_digit(k, shift, mask, f);
            keys_out[(SortOffset)(s_base[d] + p)] = (KU)radix_tile_out(k, f);
#if CUPRIM_PAIRS
            pos[i] |= d << 16;
#endif
        }
    }

#if CUPRIM_PAIRS
    // Values are loaded only now: loaded earlier they would hold ITEMS
    // registers through the look-back and the key scatter (measured slower
    // on H100 in every shape tried, BENCHMARKS.md; u32/u32 at 2^28 and 384
    // x 24: 8.98 ms loaded here, 9.01 before the key scatter, 9.29 before
    // the look-back). The other resident block hides their latency.
    // (Whole tiles are told apart by a test of the block's tile, not by the
    // per-warp test of the key loads, which ptxas would keep, and spill,
    // across the kernel for float keys.)
    VR val[CUPRIM_ITEMS];
    radix_load_striped<VU, VR, CUPRIM_ITEMS>(vals_in + tile_base, valid, val, (VR)0, tile_base + SORT_TILE <= n);
    VU* s_vals = (VU*)s_buf;
    __syncthreads();  // every key has been read from s_buf
#pragma unroll
    for (int i = 0; i < CUPRIM_ITEMS; i++) s_vals[pos[i] & 0xffffu] = (VU)val[i];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < CUPRIM_ITEMS; i++) {
        const u32 p = i * CUPRIM_BLOCK + tid;
        if (p < valid) vals_out[(SortOffset)(s_base[pos[i] >> 16] + p)] = s_vals[p];
    }
#endif
}
