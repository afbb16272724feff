// Segmented sort of keys alone (no values), keys of at most 4 bytes,
// segments of at most 1024 keys: one warp per segment, a bitonic sorting
// network in registers. Each warp has 4.1 KiB of shared memory for
// transposes; no block barriers (src/algo/segsort/plan.rs launches it in
// place of the radix tile kernels of segsort.cu for those segments).
//
// Why a network that is not stable may replace the stable radix sort:
// keys alone, compared by their ordered form over all their bits
// (sort/radix_sort.cuh: radix_ordered, floats in `total_cmp` order), are
// equal only when their bits are, so the order of equal keys cannot be
// seen. (Sorts by a part of the bits, and sorts of pairs, keep the radix
// kernels.) Descending order sorts the ordered keys XOR all ones (`flip`).
//
// Layout: a segment of n keys takes R = 1, 2, 4, 8, 16 or 32 keys per
// lane, the fewest with 32 * R >= n (chosen per warp at run time, so a
// short segment does not pay for 1024). Lane l's register x[r] is position
// l * R + r of the network. The keys are loaded lane-strided (x[r] of lane
// l is element r * 32 + l: coalesced); a sorting network sorts any
// arrangement of its input, so the load needs no transpose. Slots past n
// hold KEY_ALL, which sorts last (a real key equal to it has the same
// bits, so which of them lands in the first n positions cannot be seen).
//
// Network: phase k = 2, 4, ..., 32 * R sorts blocks of k positions (each
// made of two sorted halves, one ascending, one descending), in stages j
// = k / 2, ..., 1 that compare-exchange positions i and i ^ j, ascending
// where bit k of i is clear, else descending. A stage with j < R pairs
// registers r and r ^ j of one lane (a min and a max, no shuffle); one
// with j >= R pairs register r of lanes l and l ^ (j / R) (a shuffle; the
// lower lane keeps the min, the upper the max). Phases with k < R stay
// inside a lane, their directions known at compile time. In a phase with
// k >= R a block is k / R whole lanes, all sorting one way: the lanes
// whose blocks sort descending hold their keys complemented during the
// phase (sorting the complements ascending sorts the keys descending), so
// every comparison is ascending, and one XOR per key turns one phase's
// complement into the next's. 1024 keys: 55 stages, 40 of them inside
// registers, 15 across lanes. With CUPRIM_BITONIC_TRANSPOSE, segments of
// more than 512 keys (32 a lane) take no shuffles: each phase across
// lanes does its stages on position bits 9 ... 5 with the 32 x 32 keys
// transposed through shared memory, where those bits index the registers
// (bitonic_sort_transposed).
//
// Store: through the warp's shared memory (position e at word e + e / 32:
// no bank conflicts for the lane-major writes nor the lane-strided reads,
// and every address a lane's base plus a constant), then lane-strided and
// coalesced, only the segment's n keys, in their original bits.
//
// Warp w of block b sorts segment ids[first + b * CUPRIM_WARPS + w]
// (first + b * CUPRIM_WARPS + w when ids is null), if that index is below
// first + count. Segments do not overlap and a warp reads all of its
// segment before writing, so sorting in place is safe.
//
// Specialised on: K (at most 4 bytes), I (offset type: u32 or u64),
// CUPRIM_WARPS (segments per block), CUPRIM_MIN_BLOCKS (resident blocks
// per SM asked of ptxas), CUPRIM_BITONIC_TRANSPOSE (1: segments of more
// than 512 keys cross lanes by transposes through shared memory, not
// shuffles: bitonic_sort_transposed).

static_assert(sizeof(K) <= 4, "keys of at most 4 bytes (their ordered form widened to 32 bits)");
static_assert(sizeof(KR) == 4, "32-bit register form");

// The longest segment: 32 lanes of 32 keys.
constexpr int BITONIC_MAX = 1024;

// x[a], x[b] ordered ascending (a < b).
__device__ __forceinline__ void bitonic_exchange(u32& a, u32& b) {
    const u32 lo = min(a, b), hi = max(a, b);
    a = lo, b = hi;
}

// The complement (all ones or zero) this lane applies in the phase that
// sorts blocks of k positions of 32 * R: descending blocks are those with
// bit k of the position set, which for k >= R is bit k / R of the lane
// (none when k is the whole segment).
template <int R> __device__ __forceinline__ u32 bitonic_phase_mask(u32 lane, int k) {
    return (lane & (u32)(k / R)) ? ~0u : 0u;
}

// The first phase across lanes: blocks of max(2, R) positions.
template <int R> constexpr int bitonic_first_lane_phase() { return R < 2 ? 2 : R; }

// The log2 of R (a power of two up to 32).
template <int R> constexpr int bitonic_log() { return R == 1 ? 0 : R == 2 ? 1 : R == 4 ? 2 : R == 8 ? 3 : R == 16 ? 4 : 5; }

// The phases inside a lane: blocks of k = 2^p < R positions, the direction
// of register r's block from bit k of r.
template <int R> __device__ __forceinline__ void bitonic_lane_phases(u32 (&x)[R]) {
#pragma unroll
    for (int p = 1; p < bitonic_log<R>(); p++) {
#pragma unroll
        for (int q = p - 1; q >= 0; q--) {
            const int k = 1 << p, j = 1 << q;
#pragma unroll
            for (int r = 0; r < R; r++) {
                if ((r & j) == 0) {
                    if (r & k) bitonic_exchange(x[r | j], x[r]);
                    else bitonic_exchange(x[r], x[r | j]);
                }
            }
        }
    }
}

// Ascending stages on the low `bits` bits of the register index: x[r]
// against x[r | j] for j = 2^(bits - 1), ..., 1 (`bits` a constant once
// unrolled).
template <int R> __device__ __forceinline__ void bitonic_register_merge(u32 (&x)[R], int bits) {
#pragma unroll
    for (int q = bits - 1; q >= 0; q--) {
        const int j = 1 << q;
#pragma unroll
        for (int r = 0; r < R; r++) {
            if ((r & j) == 0) bitonic_exchange(x[r], x[r | j]);
        }
    }
}

// Sorts the warp's 32 * R keys (lane l's x[r] at position l * R + r), held
// complemented where bitonic_phase_mask<R>(lane, bitonic_first_lane_phase)
// says (the load applies it): on return ascending, none complemented.
// Every stage across lanes through a shuffle.
template <int R> __device__ __forceinline__ void bitonic_sort(u32 (&x)[R], u32 lane) {
    constexpr int LOG_R = bitonic_log<R>();
    static_assert(1 << LOG_R == R, "R a power of two up to 32");
    bitonic_lane_phases<R>(x);
    // Phases across lanes: blocks of k = 2^p >= R positions, ascending in
    // this lane's complemented form.
    u32 m = bitonic_phase_mask<R>(lane, bitonic_first_lane_phase<R>());
#pragma unroll
    for (int p = LOG_R < 1 ? 1 : LOG_R; p <= LOG_R + 5; p++) {
#pragma unroll
        for (u32 d = (1u << (p - LOG_R)) >> 1; d > 0; d >>= 1) {  // the partner lane's distance
            const bool upper = lane & d;
#pragma unroll
            for (int r = 0; r < R; r++) {
                const u32 y = __shfl_xor_sync(0xffffffffu, x[r], d);
                x[r] = upper ? max(x[r], y) : min(x[r], y);
            }
        }
        bitonic_register_merge<R>(x, LOG_R);
        // From this phase's complement to the next one's (none after the
        // last: lane & 32 is 0).
        const u32 next = (lane & (u32)((2 << p) / R)) ? ~0u : 0u;
#pragma unroll
        for (int r = 0; r < R; r++) x[r] ^= m ^ next;
        m = next;
    }
}

// The 32 x 32 keys between the two layouts of bitonic_sort_transposed,
// through the warp's shared memory s (33 words a row: no bank conflicts,
// every address a lane's base plus a constant): to_rows, lane l's x[r]
// from position r * 32 + l to position l * 32 + r; else back.
__device__ __forceinline__ void bitonic_transpose(u32 (&x)[32], u32 lane, u32* s, bool to_rows) {
    __syncwarp();  // (every lane done reading s)
#pragma unroll
    for (int r = 0; r < 32; r++) s[to_rows ? r * 33 + lane : lane * 33 + r] = x[r];
    __syncwarp();
#pragma unroll
    for (int r = 0; r < 32; r++) x[r] = s[to_rows ? lane * 33 + r : r * 33 + lane];
}

// bitonic_sort<32> with the warp's shared memory s (33 * 32 words): each
// phase across lanes (blocks of 2^p = 64 ... 1024 positions) first does its
// stages on position bits p - 1 ... 5 transposed (lane l's x[r] at position
// r * 32 + l: those bits index the registers), then its stages on bits 4
// ... 0 back in rows. No shuffles: a transpose is a store and a load a key,
// on the memory pipe, and each stage across lanes one min or max a key,
// not two plus a shuffle (the integer pipe runs at half the rate of the
// others, and it carried the whole sort). Transposed, the complement of
// the blocks sorted descending (bit p of the position, a register bit)
// turns from one phase's to the next with a NOT of half the registers.
__device__ __forceinline__ void bitonic_sort_transposed(u32 (&x)[32], u32 lane, u32* s) {
    bitonic_lane_phases<32>(x);
    bitonic_register_merge<32>(x, 5);  // blocks of 32: lanes, complemented (the load)
#pragma unroll
    for (int p = 6; p <= 10; p++) {
        bitonic_transpose(x, lane, s, false);
        // From blocks complemented by bit p - 1 of the position (register
        // bit p - 6) to those by bit p (register bit p - 5; none for the
        // whole segment).
#pragma unroll
        for (int r = 0; r < 32; r++) {
            if (((r >> (p - 6)) & 1) != (p < 10 ? (r >> (p - 5)) & 1 : 0)) x[r] = ~x[r];
        }
        bitonic_register_merge<32>(x, p - 5);
        bitonic_transpose(x, lane, s, true);
        bitonic_register_merge<32>(x, 5);
    }
}

// Loads, sorts and stores the warp's segment of n keys (1 < n <= 32 * R)
// at keys: see the top of the file.
template <int R> __device__ __forceinline__ void bitonic_segment(KU* keys, u32 n, KR f, u32 lane, u32* s) {
    // Lane-strided, complemented as the first phase across lanes wants;
    // slots past n read as the key whose ordered form is KEY_ALL.
    const u32 fm = (u32)f ^ bitonic_phase_mask<R>(lane, bitonic_first_lane_phase<R>());
    const KU fill = (KU)radix_unordered(KEY_ALL ^ f);
    u32 x[R];
#pragma unroll
    for (int r = 0; r < R; r++) {
        // (A test of another form than the store's: ptxas kept the same
        // one's 32 results in a register's bits between the two, three
        // instructions a key.)
        const KU k = (int)lane < (int)n - r * 32 ? keys[r * 32 + lane] : fill;
        x[r] = (u32)radix_ordered((KR)k) ^ fm;
    }
#if CUPRIM_BITONIC_TRANSPOSE
    if constexpr (R == 32) bitonic_sort_transposed(x, lane, s);
    else bitonic_sort<R>(x, lane);
#else
    bitonic_sort<R>(x, lane);
#endif
    // Position e of the sorted segment, x[e % R] of lane e / R, through
    // word e + e / 32 of the warp's shared memory.
    const u32 row = lane * R + (lane * R >> 5);
    __syncwarp();  // (every lane done reading s)
#pragma unroll
    for (int r = 0; r < R; r++) s[row + r] = x[r];
    __syncwarp();
#pragma unroll
    for (int r = 0; r < R; r++) x[r] = s[r * 33 + lane];
#pragma unroll
    for (int r = 0; r < R; r++) {
        const KU out = (KU)radix_unordered((KR)x[r] ^ f);
        if (r * 32 + lane < n) keys[r * 32 + lane] = out;
    }
}

extern "C" __global__ void __launch_bounds__(CUPRIM_WARPS * 32, CUPRIM_MIN_BLOCKS)
    cuprim_segsort_bitonic(KU* keys, const I* offsets, const u32* ids, u32 first, u32 count, u64 flip) {
    __shared__ u32 s_keys[CUPRIM_WARPS][BITONIC_MAX + BITONIC_MAX / 32];
    const u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const u64 w = (u64)blockIdx.x * CUPRIM_WARPS + warp;
    if (w >= count) return;  // (the whole warp)
    const u32 index = first + (u32)w;
    const u32 seg = ids ? ids[index] : index;
    const u64 begin = (u64)offsets[seg];
    u32 n = (u32)((u64)offsets[seg + 1] - begin);  // <= BITONIC_MAX (host)
#if __CUDA_ARCH__ >= 800
    // (The same in every lane; through a warp reduction, whose result
    // ptxas keeps in a uniform register, so it knows the branches on n
    // below are the whole warp's: otherwise it compiled every shuffle and
    // __syncwarp with a second, divergent, copy of the sort.)
    n = __reduce_max_sync(0xffffffffu, n);
#endif
    if (n <= 1) return;
    KU* const at = keys + begin;
    const KR f = (KR)flip;
    u32* const s = s_keys[warp];
    if (n <= 32) {
        bitonic_segment<1>(at, n, f, lane, s);
    } else if (n <= 64) {
        bitonic_segment<2>(at, n, f, lane, s);
    } else if (n <= 128) {
        bitonic_segment<4>(at, n, f, lane, s);
    } else if (n <= 256) {
        bitonic_segment<8>(at, n, f, lane, s);
    } else if (n <= 512) {
        bitonic_segment<16>(at, n, f, lane, s);
    } else {
        bitonic_segment<32>(at, n, f, lane, s);
    }
}
