// Segmented radix sort: every segment [offsets[s], offsets[s + 1]) of the
// keys (and values) sorted on its own, stably, in place, LSD radix passes
// over the keys' order-preserving form (sort/radix_sort.cuh:
// radix_ordered, the same `total_cmp` order as the device-wide sort).
//
// cuprim_segsort_survey (segsort_survey.cu, its own module) finds the
// longest segment and checks the offsets on the device; when one tile class
// holds every segment, its kernel sorts them all (below) with nothing read
// back but the survey. Otherwise the host reads the offsets back, checks
// them and splits the segments into size classes (src/algo/segsort/plan.rs):
// 1. cuprim_segsort_tile: one block per segment of at most SEG_TILE keys.
//    The keys are read from global memory once, sorted by every pass in
//    registers and shared memory, and written once. Only the bits in
//    which the segment's keys differ are sorted (radix_tile_varying): the
//    span from the lowest to the highest such bit in the fewest passes of
//    one width, at most CUPRIM_TILE_BITS (uniform floats in [0, 1) differ
//    in 27 bits: three 9-bit passes, not four 8-bit ones). Each pass ranks the
//    keys by the pass's digit with the onesweep sort's warp ranking
//    (radix_rank_warp: stable in the order warp, item, lane) and exchanges
//    them through shared memory; values follow their keys through the same
//    exchange. Several modules of this kernel, one per tile shape, make the
//    size classes (a warp for short segments, larger blocks for longer).
// 2. cuprim_segsort_large: one block per segment longer than a tile (up to
//    2^32 - 1 keys), every pass through global memory: a histogram read of
//    the segment, then the segment's tiles in order, each ranked in the
//    block and scattered to where its digits go, ping-ponging with scratch
//    (8-bit digits over every bit of [begin_bit, end_bit)).
//    Tiles taken in order plus a stable tile ranking make the pass stable.
// (The longest segments go through the device-wide onesweep sort, one call
// each, from the host.)
//
// Between passes the keys are kept in their ordered form XOR `flip` (all
// ones for a descending sort), so a digit is a shift and a mask; the last
// pass writes the keys back as they were. Slots of a tile past the segment's
// end hold the ordered key of all ones: the largest digit in every pass,
// and last in input order, so they rank after every real key and are
// never stored.
//
// Specialised on: K, V (K when sorting keys alone), I (offset type: u32 or
// u64), CUPRIM_PAIRS, CUPRIM_BLOCK (threads: 32, 64, 128 or 256),
// CUPRIM_ITEMS (keys per thread), CUPRIM_MIN_BLOCKS (resident blocks per
// SM asked of ptxas), CUPRIM_TILE_BITS (the tile kernel's widest digit: 8
// or 9), CUPRIM_MATCH_ANY (see sort/radix_sort.cuh), CUPRIM_SEGSORT_X (1:
// the sort of an input expression SegIn, whose kernels are the `_x` ones;
// the buffer kernels are compiled only without it).

#ifndef CUPRIM_SEGSORT_X
#define CUPRIM_SEGSORT_X 0
#endif

// The global-memory kernel's digits (8 bits); the tile kernel's are at most
// CUPRIM_TILE_BITS (8 or 9) bits wide.
constexpr int SEG_BITS = 8;
constexpr int SEG_RADIX = 1 << SEG_BITS;
constexpr int SEG_MAX_BITS = CUPRIM_TILE_BITS;
constexpr int SEG_MAX_RADIX = 1 << SEG_MAX_BITS;
// Digits of 7 bits where a block of at most 128 threads has a digit each
// (and keys and values are at most 4 bytes: 8-byte pairs spill): a tile
// whose keys vary in 25 to 28 bits (uniform floats in [0, 1): 27) sorts in
// four 7-bit passes.
constexpr int SEG_LOW_BITS = CUPRIM_BLOCK <= 128 && sizeof(K) <= 4 && sizeof(V) <= 4 ? 7 : SEG_BITS;
constexpr int SEG_WARPS = CUPRIM_BLOCK / 32;
constexpr int SEG_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
constexpr int SEG_BUF = SEG_TILE * (sizeof(K) > sizeof(V) ? sizeof(K) : sizeof(V));
static_assert(CUPRIM_BLOCK % 32 == 0 && CUPRIM_BLOCK <= SEG_RADIX && SEG_RADIX % CUPRIM_BLOCK == 0,
              "a block of 32, 64, 128 or 256 threads");
static_assert(SEG_MAX_BITS == 8 || SEG_MAX_BITS == 9, "tile digits of 8 or 9 bits");
static_assert(SEG_TILE < (1 << 16), "tile positions and ranks must fit 16 bits");

// The slot's position in the tile of its item 0 (warp-striped layout, see
// sort/radix_sort.cuh); item i is 32 * i further.
__device__ __forceinline__ u32 seg_first_slot() { return (threadIdx.x >> 5) * 32 * CUPRIM_ITEMS + (threadIdx.x & 31); }

// A thread's DPT consecutive digit words at p (DPT * 4-byte aligned), read
// and written with the widest accesses: a warp's consecutive threads then
// touch consecutive words, one wavefront per 128 bytes (word by word, DPT
// words apart, each access was a DPT-way bank conflict).
template <int DPT> __device__ __forceinline__ void seg_digits_load(const u32* p, u32 (&c)[DPT]) {
    if constexpr (DPT % 4 == 0) {
#pragma unroll
        for (int q = 0; q < DPT / 4; q++) {
            const uint4 v = ((const uint4*)p)[q];
            c[4 * q] = v.x, c[4 * q + 1] = v.y, c[4 * q + 2] = v.z, c[4 * q + 3] = v.w;
        }
    } else if constexpr (DPT == 2) {
        const uint2 v = *(const uint2*)p;
        c[0] = v.x, c[1] = v.y;
    } else {
#pragma unroll
        for (int j = 0; j < DPT; j++) c[j] = p[j];
    }
}
template <int DPT> __device__ __forceinline__ void seg_digits_store(u32* p, const u32 (&c)[DPT]) {
    if constexpr (DPT % 4 == 0) {
#pragma unroll
        for (int q = 0; q < DPT / 4; q++) ((uint4*)p)[q] = make_uint4(c[4 * q], c[4 * q + 1], c[4 * q + 2], c[4 * q + 3]);
    } else if constexpr (DPT == 2) {
        *(uint2*)p = make_uint2(c[0], c[1]);
    } else {
#pragma unroll
        for (int j = 0; j < DPT; j++) p[j] = c[j];
    }
}

// Exclusive scan over the block's digits, DPT consecutive ones per thread
// with counts c[]: out[d] (16-byte aligned) becomes the sum of the counts
// of smaller digits. Each thread writes only its own digits. Ends with a
// barrier.
template <int DPT> __device__ __forceinline__ void seg_digit_prefix(const u32 (&c)[DPT], u32* out, u32* s_warp) {
    const u32 tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    u32 sum = 0;
#pragma unroll
    for (int j = 0; j < DPT; j++) sum += c[j];
    const u32 incl = cuprim_warp_inclusive_sum(sum);
    if (SEG_WARPS > 1) {
        if (lane == 31) s_warp[warp] = incl;
        __syncthreads();
    }
    u32 before = incl - sum;
    for (u32 w = 0; w < warp; w++) before += s_warp[w];
    u32 o[DPT];
#pragma unroll
    for (int j = 0; j < DPT; j++) {
        o[j] = before;
        before += c[j];
    }
    seg_digits_store<DPT>(out + tid * DPT, o);
    __syncthreads();
}

// After every warp has ranked its keys with radix_rank_warp into its own
// counters wc[warp * RADIX + d] (zeroed before, 16-byte aligned) and a
// barrier: turns each digit's per-warp counts into per-warp exclusive
// offsets, sets s_start[d] to the number of the tile's keys with a
// smaller digit, and leaves in tot[j] the tile's count of digit tid * DPT
// + j (DPT = RADIX / BLOCK consecutive digits per thread). Ends with a
// barrier.
template <int RADIX, int DPT> __device__ __forceinline__ void seg_digit_starts(u32* wc, u32* s_start, u32* s_warp, u32 (&tot)[DPT]) {
    u32* const own = wc + threadIdx.x * DPT;
#pragma unroll
    for (int j = 0; j < DPT; j++) tot[j] = 0;
    // (Warp by warp for more than two digits a thread: all SEG_WARPS * DPT
    // counters loaded at once spilled with 9-bit digits at 40 registers.)
#pragma unroll(DPT <= 2 ? SEG_WARPS : 1)
    for (int w = 0; w < SEG_WARPS; w++) {
        u32 c[DPT];
        seg_digits_load<DPT>(own + w * RADIX, c);
        seg_digits_store<DPT>(own + w * RADIX, tot);
#pragma unroll
        for (int j = 0; j < DPT; j++) tot[j] += c[j];
    }
    seg_digit_prefix<DPT>(tot, s_start, s_warp);
}

// Block-wide exclusive scan over digits, in place: s_count[d] (DPT *
// CUPRIM_BLOCK words, DPT consecutive per thread, 16-byte aligned) becomes
// the sum of the counts of smaller digits. Every thread calls; ends with a
// barrier.
template <int DPT> __device__ __forceinline__ void seg_scan_digits(u32* s_count, u32* s_warp) {
    u32 c[DPT];
    seg_digits_load<DPT>(s_count + threadIdx.x * DPT, c);
    seg_digit_prefix<DPT>(c, s_count, s_warp);
}

// Ranks a tile held warp-striped in key[] (ordered form) by the digit
// (key >> shift) & mask of at most BITS bits: on return pos[i] is item i's
// position in the tile sorted stably by that digit, s_start[d] the
// position of the tile's first key of digit d, and tot[j] the count of
// digit tid * DPT + j. s_wc (SEG_WARPS << BITS words) and s_start must be
// 16-byte aligned, and s_wc free (no thread still reading it) when this is
// called.
template <int BITS, int DPT = (1 << BITS) / CUPRIM_BLOCK>
__device__ __forceinline__ void seg_rank_tile(const KR (&key)[CUPRIM_ITEMS], u32 (&pos)[CUPRIM_ITEMS], u32 shift, u32 mask, u32* s_wc,
                                              u32* s_start, u32* s_warp, u32 (&tot)[DPT]) {
    constexpr int RADIX = 1 << BITS;
    const u32 warp = threadIdx.x >> 5;
#pragma unroll
    for (int j = threadIdx.x; j < SEG_WARPS * RADIX / 4; j += CUPRIM_BLOCK) ((uint4*)s_wc)[j] = make_uint4(0, 0, 0, 0);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < CUPRIM_ITEMS; i++) pos[i] = (u32)(key[i] >> shift) & mask;
    radix_rank_warp<BITS, CUPRIM_ITEMS, true>(pos, s_wc + warp * RADIX);
    __syncthreads();
    seg_digit_starts<RADIX, DPT>(s_wc, s_start, s_warp, tot);
    radix_positions<RADIX, CUPRIM_ITEMS>(pos, s_start, s_wc + warp * RADIX);
}

// ---------------------------------------------------------------------------
// Segments of at most one tile: one block each, every pass in shared memory.
//
// Block b sorts segment ids[first + b] (first + b when ids is null). All
// global reads of a segment happen before its first global write, and
// segments do not overlap, so sorting in place is safe.

// A tile kernel block's segment and passes, in shared memory: read
// again after each barrier rather than held in registers through the
// ranking (the 1024-key shape runs at 40 registers, and these spilled).
struct seg_tile_job {
    u64 begin;            // the segment's first element
    u32 n;                // its length
    radix_tile_passes p;  // its passes (radix_tile_plan)
};

// The passes of the tile kernel with digits of BITS bits (`job` written
// and a barrier passed; its width at most BITS).
template <int BITS>
__device__ __forceinline__ void seg_tile_passes(KR (&key)[CUPRIM_ITEMS], VR (&val)[CUPRIM_ITEMS], const seg_tile_job* job, KU* keys,
                                                VU* vals, u32* s_wc, u32* s_start, u32* s_warp, unsigned char* s_buf, KR f) {
    KU* s_keys = (KU*)s_buf;
    u32 pos[CUPRIM_ITEMS];
    u32 tot[(1 << BITS) / CUPRIM_BLOCK];  // (not needed here)
    for (u32 p = 0; p < job->p.passes; p++) {
        const u32 shift = job->p.shift + p * job->p.width, mask = (1u << job->p.width) - 1u;
        // (The barrier inside also ends the previous pass's reads of s_buf.)
        seg_rank_tile<BITS>(key, pos, shift, mask, s_wc, s_start, s_warp, tot);
#pragma unroll
        for (int i = 0; i < CUPRIM_ITEMS; i++) s_keys[pos[i]] = (KU)key[i];
        __syncthreads();
        const bool last = p + 1 == job->p.passes;
        const u32 n = job->n, slot = seg_first_slot();
        radix_tile_settle<KU, KR, CUPRIM_ITEMS, CUPRIM_BLOCK>(last, n, slot, s_keys, keys + job->begin, key,
                                                              [&](KU k) { return (KU)radix_unordered((KR)k ^ f); });
#if CUPRIM_PAIRS
        radix_tile_values<VU, VR, CUPRIM_ITEMS, CUPRIM_BLOCK>(last, n, slot, pos, val, (VU*)s_buf, vals + job->begin);
#endif
    }
}

// ---------------------------------------------------------------------------
// Sorts of input expressions (src/expr/): with CUPRIM_SEGSORT_X the module's
// kernels are cuprim_segsort_tile_x and cuprim_segsort_large_x, whose first
// read of a segment is its elements of `SegIn in` (the keys' expression,
// or with CUPRIM_PAIRS the zip of the keys' and the values'), written to
// the output (keys, vals) by the sort itself: no collected copy. Later
// passes work on the output and scratch as the buffer kernels do.

// What the buffer kernels pass for the expression they do not read.
struct seg_no_input {};
__device__ __forceinline__ KU seg_in_key(const seg_no_input&, u64) { return 0; }
__device__ __forceinline__ VU seg_in_value(const seg_no_input&, u64) { return 0; }

// radix_load_striped from a function of the position j (below `valid`).
template <typename R, int ITEMS, typename Load>
__device__ __forceinline__ void seg_in_striped(u32 valid, R (&x)[ITEMS], R fill, Load load) {
    const u32 lane = threadIdx.x & 31, first = (threadIdx.x >> 5) * 32 * ITEMS;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const u32 j = first + i * 32 + lane;
        x[i] = j < valid ? (R)load(j) : fill;
    }
}

#if CUPRIM_SEGSORT_X
// Element i's key (value) as the unsigned integer of its width.
__device__ __forceinline__ KU seg_in_key(const SegIn& in, u64 i) {
#if CUPRIM_PAIRS
    return radix_as_uint<KU>(in.a.load(i));
#else
    return radix_as_uint<KU>(in.load(i));
#endif
}
__device__ __forceinline__ VU seg_in_value(const SegIn& in, u64 i) {
#if CUPRIM_PAIRS
    return radix_as_uint<VU>(in.b.load(i));
#else
    (void)in, (void)i;
    return 0;
#endif
}

// cuprim_segsort_tile over the expression. A segment of one element is
// written as it is; one whose keys vary in no sorted bit takes one pass
// (the buffer kernel leaves both in place).
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_segsort_tile_x(CUPRIM_INPUT SegIn in, KU* keys, VU* vals, const I* offsets, const u32* ids, u32 first, u32 begin_bit,
                          u32 end_bit, u64 flip) {
    __shared__ __align__(16) u32 s_wc[SEG_WARPS * SEG_MAX_RADIX];
    __shared__ __align__(16) u32 s_start[SEG_MAX_RADIX];
    __shared__ u32 s_warp[SEG_WARPS];
    __shared__ KR s_red[2 * SEG_WARPS];
    __shared__ seg_tile_job s_job;
    __shared__ __align__(16) unsigned char s_buf[SEG_BUF];

    const u32 index = first + blockIdx.x;
    const u32 seg = ids ? ids[index] : index;
    const u64 begin = (u64)offsets[seg];
    const u32 n = (u32)((u64)offsets[seg + 1] - begin);  // <= SEG_TILE (host)
    if (n <= 1) {  // (the whole block: n is the block's)
        if (n == 1 && threadIdx.x == 0) {
            keys[begin] = seg_in_key(in, begin);
#if CUPRIM_PAIRS
            vals[begin] = seg_in_value(in, begin);
#endif
        }
        return;
    }
    const KR f = (KR)flip;

    // Keys and values in the warp-striped order of radix_tile_load_ordered
    // (slots past n: the ordered key of all ones), each element's read once.
    KR key[CUPRIM_ITEMS];
    VR val[CUPRIM_ITEMS];
    const u32 slot = seg_first_slot();
#pragma unroll
    for (int i = 0; i < CUPRIM_ITEMS; i++) {
        const u32 j = slot + i * 32;
        key[i] = KEY_ALL;
        val[i] = 0;
        if (j < n) {
            key[i] = radix_ordered(seg_in_key(in, begin + j)) ^ f;
#if CUPRIM_PAIRS
            val[i] = seg_in_value(in, begin + j);
#endif
        }
    }
    const radix_tile_passes plan = radix_tile_plan<SEG_MAX_BITS>(
        radix_tile_varying<CUPRIM_ITEMS, SEG_WARPS>(key, n, slot, s_red), begin_bit, end_bit);
    // No sorted bit varies: one pass over any one bit (the same in every
    // key) writes the segment out in input order.
    const radix_tile_passes passes = plan.passes ? plan : radix_tile_passes{begin_bit, 1, 1};
    if (threadIdx.x == 0) s_job = seg_tile_job{begin, n, passes};
    __syncthreads();
    if (SEG_MAX_BITS > SEG_BITS && passes.width > SEG_BITS) {
        seg_tile_passes<SEG_MAX_BITS>(key, val, &s_job, keys, vals, s_wc, s_start, s_warp, s_buf, f);
    } else if (SEG_LOW_BITS < SEG_BITS && passes.width <= SEG_LOW_BITS) {
        seg_tile_passes<SEG_LOW_BITS>(key, val, &s_job, keys, vals, s_wc, s_start, s_warp, s_buf, f);
    } else {
        seg_tile_passes<SEG_BITS>(key, val, &s_job, keys, vals, s_wc, s_start, s_warp, s_buf, f);
    }
}
#endif  // CUPRIM_SEGSORT_X

#if !CUPRIM_SEGSORT_X
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_segsort_tile(KU* keys, VU* vals, const I* offsets, const u32* ids, u32 first, u32 begin_bit, u32 end_bit, u64 flip) {
    __shared__ __align__(16) u32 s_wc[SEG_WARPS * SEG_MAX_RADIX];
    __shared__ __align__(16) u32 s_start[SEG_MAX_RADIX];
    __shared__ u32 s_warp[SEG_WARPS];
    __shared__ KR s_red[2 * SEG_WARPS];
    __shared__ seg_tile_job s_job;
    __shared__ __align__(16) unsigned char s_buf[SEG_BUF];

    const u32 index = first + blockIdx.x;
    const u32 seg = ids ? ids[index] : index;
    const u64 begin = (u64)offsets[seg];
    const u32 n = (u32)((u64)offsets[seg + 1] - begin);  // <= SEG_TILE (host)
    if (n <= 1) return;  // (the whole block: n is the block's)
    const KR f = (KR)flip;

    KR key[CUPRIM_ITEMS];
    radix_tile_load_ordered<CUPRIM_ITEMS>(keys + begin, n, key, f);
    VR val[CUPRIM_ITEMS];
#if CUPRIM_PAIRS
    radix_load_striped<VU, VR, CUPRIM_ITEMS>(vals + begin, n, val);
#endif
    // Only the bits in which the segment's keys differ are sorted: the
    // fewest passes over their span, of one width (a pass over bits every
    // key shares would leave the tile as it is).
    const radix_tile_passes plan = radix_tile_plan<SEG_MAX_BITS>(
        radix_tile_varying<CUPRIM_ITEMS, SEG_WARPS>(key, n, seg_first_slot(), s_red), begin_bit, end_bit);
    if (threadIdx.x == 0) s_job = seg_tile_job{begin, n, plan};
    __syncthreads();
    if (SEG_MAX_BITS > SEG_BITS && plan.width > SEG_BITS) {
        seg_tile_passes<SEG_MAX_BITS>(key, val, &s_job, keys, vals, s_wc, s_start, s_warp, s_buf, f);
    } else if (SEG_LOW_BITS < SEG_BITS && plan.width <= SEG_LOW_BITS) {
        // (One ballot and half the counters fewer per pass.)
        seg_tile_passes<SEG_LOW_BITS>(key, val, &s_job, keys, vals, s_wc, s_start, s_warp, s_buf, f);
    } else {
        seg_tile_passes<SEG_BITS>(key, val, &s_job, keys, vals, s_wc, s_start, s_warp, s_buf, f);
    }
}
#endif  // !CUPRIM_SEGSORT_X

// ---------------------------------------------------------------------------
// Segments longer than a tile: one block each, every pass through global
// memory, ping-ponging between the segment and its scratch (alt_keys +
// alt_at[first + b], alt_vals likewise), which must not overlap anything
// else. Block b sorts segment ids[first + b] (fewer than 2^32 keys).
//
// Per pass: count the segment's digits (one read), scan the counts into
// each digit's first output position (s_base), then for each tile in
// order: load, rank by digit in the block, stage in shared memory in
// sorted order, write each key to s_base[d] + its rank among the tile's
// keys of digit d, and advance s_base by the tile's counts. The block's
// own global writes are visible to it after a barrier, so a pass reads
// what the previous one wrote (plain loads: no read-only cache path).
// Keys are stored in their ordered form between passes; with an odd number
// of passes, the result is copied back from scratch at the end.

// Only the last size class's module (256 threads) launches this kernel
// (src/algo/segsort/plan.rs); the smaller shapes' modules compile it with
// no occupancy asked (f64 / u32 pairs spilled 4 bytes at 128 x 8, 8 blocks).
constexpr int SEG_LARGE_MIN_BLOCKS = CUPRIM_BLOCK >= 256 ? CUPRIM_MIN_BLOCKS : 1;

// The kernel's body: FROM_X (cuprim_segsort_large_x) reads the first pass
// from the expression `in` (elements begin .. begin + n) instead of the
// keys (values) at the segment, and writes it to scratch as the buffer
// form's first pass does; `in` is unused otherwise.
template <bool FROM_X, typename In>
__device__ __forceinline__ void seg_large_sort(KU* keys, VU* vals, KU* alt_keys, VU* alt_vals, const I* offsets, const u32* ids,
                                               const u64* alt_at, u32 first, u32 begin_bit, u32 end_bit, u64 flip, const In& in) {
    __shared__ __align__(16) u32 s_wc[SEG_WARPS * SEG_RADIX];
    __shared__ __align__(16) u32 s_start[SEG_RADIX];
    __shared__ __align__(16) u32 s_base[SEG_RADIX];
    __shared__ u32 s_warp[SEG_WARPS];
    __shared__ __align__(16) unsigned char s_buf[SEG_BUF];
    KU* s_keys = (KU*)s_buf;

    const u32 index = first + blockIdx.x;
    const u32 seg = ids[index];
    const u64 begin = (u64)offsets[seg];
    const u32 n = (u32)((u64)offsets[seg + 1] - begin);  // < 2^32 (host)
    const u64 at = alt_at[index];
    KU* const a_keys = keys + begin;
    KU* const b_keys = alt_keys + at;
#if CUPRIM_PAIRS
    VU* const a_vals = vals + begin;
    VU* const b_vals = alt_vals + at;
    VU* s_vals = (VU*)s_buf;
#endif
    const u32 tid = threadIdx.x;
    const KR f = (KR)flip;
    const u32 passes = (end_bit - begin_bit + SEG_BITS - 1) / SEG_BITS;
    constexpr int SEG_DPT = SEG_RADIX / CUPRIM_BLOCK;  // digits per thread

    for (u32 p = 0; p < passes; p++) {
        const u32 shift = begin_bit + p * SEG_BITS;
        const u32 mask = (1u << min((u32)SEG_BITS, end_bit - shift)) - 1u;
        const bool first_pass = p == 0, last = p + 1 == passes;
        KU* const src_k = p % 2 == 0 ? a_keys : b_keys;
        KU* const dst_k = p % 2 == 0 ? b_keys : a_keys;
#if CUPRIM_PAIRS
        VU* const src_v = p % 2 == 0 ? a_vals : b_vals;
        VU* const dst_v = p % 2 == 0 ? b_vals : a_vals;
#endif
        // The first pass reads the caller's keys; later passes ordered ones.
        auto ordered = [&](KR raw) -> KR { return first_pass ? radix_ordered(raw) ^ f : raw; };

        // Digit counts of the whole segment, then their exclusive scan.
        // (Zeroed by the threads that advanced them at the end of the
        // previous pass, so no barrier is needed before.)
#pragma unroll
        for (int j = 0; j < SEG_DPT; j++) s_base[tid * SEG_DPT + j] = 0;
        __syncthreads();  // (also: the previous pass's writes are visible)
        if (FROM_X && first_pass) {
            for (u32 j = tid; j < n; j += CUPRIM_BLOCK) atomicAdd(s_base + ((u32)(ordered(seg_in_key(in, begin + j)) >> shift) & mask), 1u);
        } else {
            for (u32 j = tid; j < n; j += CUPRIM_BLOCK) atomicAdd(s_base + ((u32)(ordered(src_k[j]) >> shift) & mask), 1u);
        }
        __syncthreads();
        seg_scan_digits<SEG_DPT>(s_base, s_warp);

        for (u32 t0 = 0; t0 < n; t0 += SEG_TILE) {
            const u32 valid = n - t0 < (u32)SEG_TILE ? n - t0 : (u32)SEG_TILE;
            KR key[CUPRIM_ITEMS];
            u32 pos[CUPRIM_ITEMS];
            u32 tot[SEG_DPT];
            const KR fill = first_pass ? radix_unordered(KEY_ALL ^ f) : KEY_ALL;
            if (FROM_X && first_pass) {
                seg_in_striped<KR, CUPRIM_ITEMS>(valid, key, fill, [&](u32 j) { return seg_in_key(in, begin + t0 + j); });
            } else {
                radix_load_striped<KU, KR, CUPRIM_ITEMS>(src_k + t0, valid, key, fill);
            }
#pragma unroll
            for (int i = 0; i < CUPRIM_ITEMS; i++) key[i] = ordered(key[i]);
            // (The barrier inside also ends the previous tile's use of
            // s_buf, s_start and s_base.)
            seg_rank_tile<SEG_BITS>(key, pos, shift, mask, s_wc, s_start, s_warp, tot);
#pragma unroll
            for (int i = 0; i < CUPRIM_ITEMS; i++) s_keys[pos[i]] = (KU)key[i];
            __syncthreads();
#pragma unroll
            for (int i = 0; i < CUPRIM_ITEMS; i++) {
                const u32 q = i * CUPRIM_BLOCK + tid;
                if (q < valid) {
                    const KR k = s_keys[q];
                    const u32 d = (u32)(k >> shift) & mask;
                    dst_k[s_base[d] + (q - s_start[d])] = (KU)(last ? radix_unordered(k ^ f) : k);
                    pos[i] |= d << 16;  // the digit of tile position q, for the values
                }
            }
#if CUPRIM_PAIRS
            VR val[CUPRIM_ITEMS];
            if (FROM_X && first_pass) {
                seg_in_striped<VR, CUPRIM_ITEMS>(valid, val, (VR)0, [&](u32 j) { return seg_in_value(in, begin + t0 + j); });
            } else {
                radix_load_striped<VU, VR, CUPRIM_ITEMS>(src_v + t0, valid, val);
            }
            __syncthreads();  // every key has been read from s_buf
#pragma unroll
            for (int i = 0; i < CUPRIM_ITEMS; i++) s_vals[pos[i] & 0xffffu] = (VU)val[i];
            __syncthreads();
#pragma unroll
            for (int i = 0; i < CUPRIM_ITEMS; i++) {
                const u32 q = i * CUPRIM_BLOCK + tid;
                if (q < valid) {
                    const u32 d = pos[i] >> 16;
                    dst_v[s_base[d] + (q - s_start[d])] = s_vals[q];
                }
            }
#endif
            __syncthreads();  // every thread is done with s_base and s_start
#pragma unroll
            for (int j = 0; j < SEG_DPT; j++) s_base[tid * SEG_DPT + j] += tot[j];
        }
    }
    if (passes % 2 == 1) {
        __syncthreads();  // the last pass's writes are visible
        for (u32 j = tid; j < n; j += CUPRIM_BLOCK) a_keys[j] = b_keys[j];
#if CUPRIM_PAIRS
        for (u32 j = tid; j < n; j += CUPRIM_BLOCK) a_vals[j] = b_vals[j];
#endif
    }
}

#if !CUPRIM_SEGSORT_X
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, SEG_LARGE_MIN_BLOCKS)
    cuprim_segsort_large(KU* keys, VU* vals, KU* alt_keys, VU* alt_vals, const I* offsets, const u32* ids, const u64* alt_at,
                         u32 first, u32 begin_bit, u32 end_bit, u64 flip) {
    seg_large_sort<false>(keys, vals, alt_keys, alt_vals, offsets, ids, alt_at, first, begin_bit, end_bit, flip, seg_no_input{});
}
#endif

#if CUPRIM_SEGSORT_X
// cuprim_segsort_large over the expression: the first pass reads it.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, SEG_LARGE_MIN_BLOCKS)
    cuprim_segsort_large_x(CUPRIM_INPUT SegIn in, KU* keys, VU* vals, KU* alt_keys, VU* alt_vals, const I* offsets, const u32* ids,
                           const u64* alt_at, u32 first, u32 begin_bit, u32 end_bit, u64 flip) {
    seg_large_sort<true>(keys, vals, alt_keys, alt_vals, offsets, ids, alt_at, first, begin_bit, end_bit, flip, in);
}
#endif
