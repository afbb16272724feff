// LSD radix sort building blocks shared by kernels/radix_sort.cu (onesweep,
// 8-bit digits) and kernels/radix_sort_classic.cu (4-bit digits, three
// kernels per pass): the order-preserving key transform, digit extraction,
// warp-striped tile loads and the stable block-wide ranking of a tile.
//
// Keys and values are moved as unsigned integers of their width (KU, VU)
// and held in registers as unsigned integers of at least 32 bits (KR, VR):
// only the digit computation looks at what a key's bits mean.
//
// Specialised on: K (key type), V (value type; K when sorting keys only),
// CUPRIM_PAIRS (0: keys only), CUPRIM_BLOCK (threads per block),
// CUPRIM_ITEMS (keys per thread), CUPRIM_MATCH_ANY (1: find equal digits in
// a warp with __match_any_sync instead of one ballot per digit bit).
//
// Tile layout ("warp-striped"): warp w of the block owns the 32 * ITEMS
// consecutive keys starting at w * 32 * ITEMS; its item i of lane l is key
// w * 32 * ITEMS + i * 32 + l. So each load instruction of a warp reads 32
// consecutive keys, and the order (warp, item, lane) is the input order,
// which is what makes the ranking below stable.

template <int BYTES> struct radix_uint;
template <> struct radix_uint<1> { typedef u8 type; };
template <> struct radix_uint<2> { typedef unsigned short type; };
template <> struct radix_uint<4> { typedef u32 type; };
template <> struct radix_uint<8> { typedef u64 type; };

// The unsigned integers as wide as a key and as a value, and their
// register forms.
typedef typename radix_uint<sizeof(K)>::type KU;
typedef typename radix_uint<sizeof(V)>::type VU;
typedef typename radix_uint<(sizeof(K) < 4 ? 4 : sizeof(K))>::type KR;
typedef typename radix_uint<(sizeof(V) < 4 ? 4 : sizeof(V))>::type VR;
// The key's bits: all ones.
constexpr KR KEY_ALL = (KR)(KU)~(KU)0;

// x's bits as the unsigned integer of its width (an input expression's
// element, sort/radix_sort.cu and segsort/segsort.cu).
template <typename U, typename X> __device__ __forceinline__ U radix_as_uint(const X& x) {
    static_assert(sizeof(U) == sizeof(X), "an unsigned integer of the same width");
    return *reinterpret_cast<const U*>(&x);
}

template <typename T> struct radix_signed { static constexpr bool value = false; };
template <> struct radix_signed<i8> { static constexpr bool value = true; };
template <> struct radix_signed<i32> { static constexpr bool value = true; };
template <> struct radix_signed<i64> { static constexpr bool value = true; };

// A key's bits `u` mapped so that unsigned comparison is the key order:
// unsigned integers as they are; signed integers with the sign bit flipped;
// floats (total_cmp order: -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf <
// +NaN) with every bit flipped when the sign bit is set, else the sign bit
// set. Descending order XORs the result with all ones (see radix_digit).
__device__ __forceinline__ KR radix_ordered(KR u) {
    constexpr KR sign = (KR)1 << (8 * sizeof(K) - 1);
    if constexpr (cuprim_traits<K>::is_float) {
        // Branch-free: XOR with all ones when the sign bit is set, else with
        // the sign bit alone (the key's bits above its width stay zero).
        const KR neg = (KR)0 - ((u >> (8 * sizeof(K) - 1)) & 1);
        return u ^ ((neg & KEY_ALL) | sign);
    } else if constexpr (radix_signed<K>::value) {
        return u ^ sign;
    } else {
        return u;
    }
}

// The inverse of radix_ordered: the key's bits from its ordered form.
__device__ __forceinline__ KR radix_unordered(KR o) {
    constexpr KR sign = (KR)1 << (8 * sizeof(K) - 1);
    if constexpr (cuprim_traits<K>::is_float) {
        const KR neg = (KR)0 - (((o >> (8 * sizeof(K) - 1)) & 1) ^ 1);
        return o ^ ((neg & KEY_ALL) | sign);
    } else if constexpr (radix_signed<K>::value) {
        return o ^ sign;
    } else {
        return o;
    }
}

// Digit of the key with bits `k` for a pass: bits [shift, shift +
// popcount(mask)) of the ordered key XOR `flip` (all ones for descending,
// else 0).
__device__ __forceinline__ u32 radix_digit(KR k, u32 shift, u32 mask, KR flip) {
    return (u32)((radix_ordered(k) ^ flip) >> shift) & mask;
}

// A onesweep tile keeps float keys in their ordered form (radix_ordered ^
// flip) from load to store, so a digit is a shift and a mask and the
// order transform is not live across the ranking: 4-byte float pairs then
// fit 384 x 23 at 80 registers without spills (120 bytes spilled
// otherwise). Integer keys stay as they are (their transform is at most
// one XOR; keeping them ordered spills 12 bytes for u32 pairs at 384 x 23).
constexpr bool TILE_ORDERED = cuprim_traits<K>::is_float;
__device__ __forceinline__ KR radix_tile_key(KR raw, KR flip) {
    if constexpr (TILE_ORDERED) return radix_ordered(raw) ^ flip;
    else return raw;
}
__device__ __forceinline__ u32 radix_tile_digit(KR k, u32 shift, u32 mask, KR flip) {
    if constexpr (TILE_ORDERED) return (u32)(k >> shift) & mask;
    else return radix_digit(k, shift, mask, flip);
}
__device__ __forceinline__ KR radix_tile_out(KR k, KR flip) {
    if constexpr (TILE_ORDERED) return radix_unordered(k ^ flip);
    else return k;
}

// This lane and the lanes below it.
__device__ __forceinline__ u32 radix_lanemask_le() { return (2u << (threadIdx.x & 31)) - 1u; }

// Loads a warp's share of a tile (warp-striped) into registers of type R.
// `in` is the tile's first key, `valid` how many keys the tile has; slots
// past it get `fill`. `whole`: the caller knows that every slot is valid.
template <typename T, typename R, int ITEMS>
__device__ __forceinline__ void radix_load_striped(const T* in, u32 valid, R (&x)[ITEMS], R fill = 0, bool whole = false) {
    const u32 lane = threadIdx.x & 31, first = (threadIdx.x >> 5) * 32 * ITEMS;
    if (whole || first + 32 * ITEMS <= valid) {
#pragma unroll
        for (int i = 0; i < ITEMS; i++) x[i] = in[first + i * 32 + lane];
    } else {
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const u32 j = first + i * 32 + lane;
            x[i] = j < valid ? (R)in[j] : fill;
        }
    }
}

// The lanes of this warp whose `d` equals this lane's (all 32 lanes call).
template <int BITS> __device__ __forceinline__ u32 radix_peers(u32 d) {
#if CUPRIM_MATCH_ANY
    return __match_any_sync(0xffffffffu, d);
#else
    // Per digit bit, one predicate feeds both the vote and the choice of
    // the vote or its complement, and ptxas sets seven of the predicates
    // with one R2P. (Written in C++, ptxas extracted each bit twice and
    // turned the choice into a select: 7 instructions per bit, not 3.)
    u32 peers = 0xffffffffu;
#pragma unroll
    for (int b = 0; b < BITS; b++) {
        u32 same;
        asm("{\n\t"
            ".reg .pred on;\n\t"
            ".reg .b32 bit;\n\t"
            "and.b32 bit, %1, %2;\n\t"
            "setp.ne.u32 on, bit, 0;\n\t"
            "vote.sync.ballot.b32 %0, on, 0xffffffff;\n\t"
            "@!on not.b32 %0, %0;\n\t"
            "}"
            : "=r"(same)
            : "r"(d), "r"(1u << b));
        peers &= same;
    }
    return peers;
#endif
}

// Ranks this warp's ITEMS digits per lane in the order (item, lane), in
// place: on entry dr[i] is item i's digit, on return it is `digit | rank <<
// 16` (KEEP_DIGIT) or `rank`, where rank is counters[digit] on entry plus
// the warp's keys up to and including item i of this lane (in that order)
// with the same digit -- one past a 0-based rank, so that the leader adds
// the very count it ranks with (one popcount per item, not two) and the
// `- 1` is folded into where the counters start; counters[d] (this warp's own) is
// bumped past the warp's keys of digit d. One shared-memory atomic per
// distinct digit per item, by the highest lane holding it. (Digit and rank
// share a register: ranking runs at the peak of register pressure.)
//
// With counters zeroed before, rank - 1 is the key's rank among the warp's
// keys of its digit (radix_positions later adds where those start in the
// tile); with counters already holding the tile position of the warp's
// first key of each digit minus one (early counts), rank is the key's tile
// position.
//
// Ordering: item i + 1's atomics are issued after every lane has passed
// item i's __shfl_sync, which the leader of item i joins only once its
// atomic has returned; so a counter is read and bumped in item order.
//
// `ranked(i, rank)` is called as soon as item i is ranked.
struct radix_ignore_rank {
    __device__ __forceinline__ void operator()(int, u32) const {}
};
template <int BITS, int ITEMS, bool KEEP_DIGIT, typename Ranked = radix_ignore_rank>
__device__ __forceinline__ void radix_rank_warp(u32 (&dr)[ITEMS], u32* counters, Ranked ranked = Ranked()) {
    const u32 lane = threadIdx.x & 31, le = radix_lanemask_le();
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const u32 peers = radix_peers<BITS>(dr[i]);
        const int leader = 31 - __clz(peers);
        // Peers up to this lane: at the leader (the highest), all of them.
        const u32 upto = __popc(peers & le);
        u32 before = 0;
        if ((int)lane == leader) before = atomicAdd(counters + dr[i], upto);
        before = __shfl_sync(0xffffffffu, before, leader);
        const u32 rank = before + upto;
        dr[i] = KEEP_DIGIT ? dr[i] | rank << 16 : rank;
        ranked(i, rank);
    }
}

// Early counts: adds this warp's ITEMS digits per lane `d` to its own
// counters (zeroed before). The atomics return nothing, so they are issued
// back to back; the tile's digit counts are then known before any key is
// ranked, and can be published to the look-back at once.
template <int ITEMS> __device__ __forceinline__ void radix_count_warp(const u32 (&d)[ITEMS], u32* counters) {
#pragma unroll
    for (int i = 0; i < ITEMS; i++) atomicAdd(counters + d[i], 1u);
}

// After radix_rank_warp, radix_warp_offsets and radix_scan_counts: turns
// each dr[i] into item i's position in the tile sorted by digit (digits
// before it, the same digit in earlier warps, then earlier in this warp).
template <int RADIX, int ITEMS>
__device__ __forceinline__ void radix_positions(u32 (&dr)[ITEMS], const u32* s_start, const u32* warp_offsets) {
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const u32 d = dr[i] & 0xffffu;
        dr[i] = (dr[i] >> 16) - 1 + s_start[d] + warp_offsets[d];
    }
}

// After every warp has ranked and a barrier: turns each digit's per-warp
// counts `wc[warp * RADIX + d]` into per-warp exclusive offsets and returns
// the digit's tile total to thread d (< RADIX); other threads get 0.
template <int RADIX, int WARPS> __device__ __forceinline__ u32 radix_warp_offsets(u32* wc) {
    u32 total = 0;
    if (threadIdx.x < RADIX) {
#pragma unroll
        for (int w = 0; w < WARPS; w++) {
            const u32 c = wc[w * RADIX + threadIdx.x];
            wc[w * RADIX + threadIdx.x] = total;
            total += c;
        }
    }
    return total;
}

// Exclusive scan over digits of the tile totals held by threads d < RADIX
// (`count`; 0 in every other thread): s_start[d] = keys of the tile with a
// smaller digit. All threads call; two barriers, the last one at the end.
// `s_warp` holds (RADIX + 31) / 32 words. With VOTE, the first barrier
// also ORs `vote` over the block, and the result is returned (else 0).
template <int RADIX, bool VOTE = false>
__device__ __forceinline__ int radix_scan_counts(u32 count, u32* s_warp, u32* s_start, bool vote = false) {
    constexpr u32 RW = (RADIX + 31) / 32;
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    u32 incl = count;
    if (warp < RW) {
        incl = cuprim_warp_inclusive_sum(count);
        if (lane == 31) s_warp[warp] = incl;
    }
    int voted = 0;
    if constexpr (VOTE) {
        voted = __syncthreads_or(vote);
    } else {
        __syncthreads();
    }
    if (threadIdx.x < RADIX) {
        u32 before = incl - count;
        for (u32 w = 0; w < warp; w++) before += s_warp[w];
        s_start[threadIdx.x] = before;
    }
    __syncthreads();
    return voted;
}

// Block-wide exclusive sum of one u64 per thread (BLOCK threads); `s_warp`
// holds BLOCK / 32 values. Two barriers, the last one at the end.
template <int BLOCK> __device__ __forceinline__ u64 radix_block_exclusive_u64(u64 x, u64* s_warp) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u64 incl = cuprim_warp_inclusive_sum(x);
    if (lane == 31) s_warp[warp] = incl;
    __syncthreads();
    u64 before = incl - x;
    for (u32 w = 0; w < warp; w++) before += s_warp[w];
    __syncthreads();
    return before;
}

// The keys of a one-block tile sort (sort/radix_sort_small.cu, segsort's
// tile kernel): n keys from `keys` in the warp-striped order, each in its
// ordered form XOR `flip` (a digit is then a shift and a mask); slots past n
// hold the ordered key of all ones, the largest digit of every pass and last
// in input order, so they rank after every real key and are never stored.
template <int ITEMS> __device__ __forceinline__ void radix_tile_load_ordered(const KU* keys, u32 n, KR (&key)[ITEMS], KR flip) {
    radix_load_striped<KU, KR, ITEMS>(keys, n, key, radix_unordered(KEY_ALL ^ flip));
#pragma unroll
    for (int i = 0; i < ITEMS; i++) key[i] = radix_ordered(key[i]) ^ flip;
}

// The bits in which the real keys of a one-block tile differ (ordered
// forms, as radix_tile_load_ordered leaves them): the OR over the block of
// (AND of the keys) XOR (OR of the keys), each thread's slots first + 32 * i
// below n counted (padding slots are not keys). Passes over bits that no
// key varies in leave the tile as it is (the sort is stable), so a sort
// need only run over the span of this mask. `s_red` holds 2 * WARPS words
// of KR; all threads call; one barrier when WARPS > 1. The same value in
// every thread.
template <int ITEMS, int WARPS>
__device__ __forceinline__ KR radix_tile_varying(const KR (&key)[ITEMS], u32 n, u32 first, KR* s_red) {
    KR all = KEY_ALL, any = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        if (first + i * 32 < n) {
            all &= key[i];
            any |= key[i];
        }
    }
    bool reduced = false;
#if __CUDA_ARCH__ >= 800
    if constexpr (sizeof(KR) == 4) {  // one instruction per warp-wide AND / OR
        all = __reduce_and_sync(0xffffffffu, all);
        any = __reduce_or_sync(0xffffffffu, any);
        reduced = true;
    }
#endif
    if (!reduced) {
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            all &= __shfl_xor_sync(0xffffffffu, all, off);
            any |= __shfl_xor_sync(0xffffffffu, any, off);
        }
    }
    if constexpr (WARPS > 1) {
        const u32 warp = threadIdx.x >> 5;
        if ((threadIdx.x & 31) == 0) {
            s_red[warp] = all;
            s_red[WARPS + warp] = any;
        }
        __syncthreads();
#pragma unroll
        for (int w = 0; w < WARPS; w++) {
            all &= s_red[w];
            any |= s_red[WARPS + w];
        }
    }
    return all ^ any;
}

// The passes of a one-block tile sort over the bits [begin_bit, end_bit)
// that vary (`varying`, from radix_tile_varying): the span from the
// lowest to the highest such bit, cut into the fewest passes of at most
// MAX_BITS bits, all of one width (returned; 0 passes when no bit varies).
struct radix_tile_passes {
    u32 shift, width, passes;
};
template <int MAX_BITS>
__device__ __forceinline__ radix_tile_passes radix_tile_plan(KR varying, u32 begin_bit, u32 end_bit) {
    constexpr u32 KBITS = 8 * sizeof(KR);
    const KR hi_mask = end_bit >= KBITS ? ~(KR)0 : (((KR)1 << end_bit) - 1);
    const KR lo_mask = begin_bit >= KBITS ? 0 : ~(((KR)1 << begin_bit) - 1);
    const KR v = varying & hi_mask & lo_mask;
    if (v == 0) return {0, 0, 0};
    u32 lo, hi;
    if constexpr (sizeof(KR) == 4) {
        lo = __ffs(v) - 1;
        hi = 32 - __clz(v);
    } else {
        lo = __ffsll((long long)v) - 1;
        hi = 64 - __clzll((long long)v);
    }
    const u32 span = hi - lo, passes = (span + MAX_BITS - 1) / MAX_BITS;
    return {lo, (span + passes - 1) / passes, passes};
}

// The end of a pass of the one-block tile sorts (sort/radix_sort_small.cu,
// segsort/segsort.cu), once every element of the pass sits at its tile
// position in `s_buf` (and a barrier has passed): the last pass writes the
// n elements out in order (`out_of` maps a buffered element to its output
// form), any other reads this thread's elements back from `slot` in the
// warp-striped order of the next pass.
template <typename U, typename R, int ITEMS, int BLOCK, typename Out>
__device__ __forceinline__ void radix_tile_settle(bool last, u32 n, u32 slot, const U* s_buf, U* out, R (&x)[ITEMS],
                                                  Out out_of) {
    if (last) {
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const u32 p = i * BLOCK + threadIdx.x;
            if (p < n) out[p] = out_of(s_buf[p]);
        }
    } else {
#pragma unroll
        for (int i = 0; i < ITEMS; i++) x[i] = s_buf[slot + i * 32];
    }
}

// The values' share of such a pass, after the keys' radix_tile_settle: each
// value goes to its key's tile position `pos` through the same buffer (the
// first barrier ends the keys' reads of it), then settles like the keys.
template <typename U, typename R, int ITEMS, int BLOCK>
__device__ __forceinline__ void radix_tile_values(bool last, u32 n, u32 slot, const u32 (&pos)[ITEMS], R (&val)[ITEMS],
                                                  U* s_vals, U* vals) {
    __syncthreads();
#pragma unroll
    for (int i = 0; i < ITEMS; i++) s_vals[pos[i]] = (U)val[i];
    __syncthreads();
    radix_tile_settle<U, R, ITEMS, BLOCK>(last, n, slot, s_vals, vals, val, [](U v) { return v; });
}
