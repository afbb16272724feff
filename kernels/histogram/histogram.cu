// Histogram: counts of samples per bin, one pass over the input.
//
// cuprim_histogram: a persistent grid; each warp reads a grid-stride share
// of the input in groups of 16-byte loads (CUPRIM_UNROLL in flight; its own loop, not
// block/load.cuh's cuprim_consume, which measured 3-5% slower here at 2^28 on
// H100, run e1bd71a: a misaligned slice is read one element at a time), maps every
// sample to a bin (or to `nb`, "dropped"), and run-length aggregates: a
// thread keeps (bin, run) and only adds to a counter when the bin changes.
// Skewed input (long runs in one bin) therefore costs fewer atomics, not
// more. Runs go to:
//   CUPRIM_HIST_SHARED 1: block-private counters in shared memory, one copy
//     per group of warps (`replicas`, a power of two) so warps rarely
//     contend; at the end the block adds its non-zero counts to `counts`
//     with one global atomic per bin.
//     With more bins than fit, a launch counts a window of them
//     [bin_base, bin_base + window) and the host launches once per window
//     (a few passes over the input beat global atomics on scattered bins).
//   CUPRIM_HIST_SHARED 0 (more bins still): global atomics directly.
// One-byte samples have 256 values whatever the bins: their runs go to one
// counter per value (shared, one launch for any number of bins), and the
// bin arithmetic is done once per value and block at the end instead of
// once per sample (as CUB does for byte samples).
// With shared counters the dropped samples are a run like any other, in a
// spare counter per copy (see the runs in the kernel); with global atomics
// they are counted in a register and reduced per block. Either way they are
// added to `*dropped` once per block. Integer atomics only: the result does not
// depend on timing. A new histogram (one launch of one pass) is counted
// into accumulators the device keeps zeroed and written by the last block
// (block/ticket.cuh), so it needs no memset before the launch.
//
// Specialised on: In (the input expression, block/expr.cuh; a plain buffer is
// cuprim_x_buf<T>), T (samples), C (counts: u32 or u64), F (float or double:
// arithmetic of even float bins), CUPRIM_HIST_MODE:
//   0 even bins over floats: b = (u32)((x - lo) * scale), clamped to nb - 1
//   1 even bins over integers, exact: b = floor((x - lo) * nb / range)
//   2 explicit edges (sorted): e[b] <= x < e[b + 1], binary search; for
//     float samples with finite outer edges, a table of `lut_cells` equal
//     cells over [e[0], e[last]) first narrows the search to the bins of
//     the sample's cell and its neighbours (the computed cell may be off by
//     one after rounding; the neighbours cover that), so evenly spread
//     edges take one or two steps instead of log2(bins)
//   3 bincount: b = x for 0 <= x < nb
// and CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS, CUPRIM_UNROLL, CUPRIM_EDGES_SHARED
// (at most this many edges are staged in shared memory).

// A half sample compares and subtracts as float; other types as themselves.
template <typename V> __device__ __forceinline__ auto hist_num(V v) {
    if constexpr (cuprim_traits<V>::is_half) {
        return (float)v;
    } else {
        return v;
    }
}

// The unsigned type of T's width (integer modes): x - lo is exact in it.
template <typename V> struct hist_unsigned { typedef V type; };
template <> struct hist_unsigned<i8> { typedef u8 type; };
template <> struct hist_unsigned<i32> { typedef u32 type; };
template <> struct hist_unsigned<i64> { typedef u64 type; };

// 128-bit unsigned product and comparison, for exact 64-bit even bins.
struct hist_u128 {
    u64 hi, lo;
};
__device__ __forceinline__ hist_u128 hist_mul(u64 a, u64 b) {
    return hist_u128{__umul64hi(a, b), a * b};
}
__device__ __forceinline__ bool hist_lt(hist_u128 a, hist_u128 b) {
    return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

static_assert(CUPRIM_BLOCK % 32 == 0, "histogram: whole warps");
// One-byte samples are counted per value (see the top); the plan gives them shared counters.
constexpr bool HIST_BYTES = sizeof(T) == 1;
static_assert(!HIST_BYTES || CUPRIM_HIST_SHARED, "histogram: one-byte samples take shared counters");
constexpr int HI_ITEMS = 16 / sizeof(T);
typedef cuprim_vec<T, HI_ITEMS> HiVec;

struct HistParams {
    T lo, hi;
    F scale;        // mode 0: nb / (hi - lo), rounded to F once, on the host
    u64 range;      // mode 1: hi - lo, exact
    const T* edges; // mode 2
    const u32* lut; // mode 2: lut[c] = the bin holding the start of cell c
    F lut_scale;    // mode 2: lut_cells / (e[last] - e[0]), rounded to F
    u32 num_edges;  // mode 2
    u32 lut_cells;  // mode 2: 0 when there is no table
    u32 nb;         // number of bins; a sample mapped to nb is dropped
    u32 bin_base;   // shared counters: this launch counts bins
    u32 window;     //   [bin_base, bin_base + window) only
    u32 count_dropped;  // whether this launch counts dropped samples
};

// The bin of one sample, or p.nb when it is outside every bin or NaN.
__device__ __forceinline__ u32 hist_bin(T v, const HistParams& p, const T* edges, const u32* lut) {
#if CUPRIM_HIST_MODE == 0
    const F x = (F)hist_num(v), lo = (F)hist_num(p.lo), hi = (F)hist_num(p.hi);
    // Computed for every sample, then discarded when x is outside [lo, hi)
    // or NaN (NaN fails both tests): no branch, and the conversion
    // saturates, so any x converts without undefined behaviour.
    u32 b;
    if constexpr (sizeof(F) == 4) {
        b = __float2uint_rz((x - lo) * p.scale);
    } else {
        b = __double2uint_rz((x - lo) * p.scale);
    }
    b = b < p.nb ? b : p.nb - 1;
    return x >= lo && x < hi ? b : p.nb;
#elif CUPRIM_HIST_MODE == 1
    typedef typename hist_unsigned<T>::type U;
    if (!(v >= p.lo && v < p.hi)) return p.nb;
    const u64 d = (u64)(U)((U)v - (U)p.lo);  // exact: lo <= v
    // Estimate in double (relative error ~2^-52, so off by at most one),
    // then correct exactly: the bin b with b * range <= d * nb < (b + 1) * range.
    u32 b = (u32)((double)d * p.scale);  // scale = nb / range
    if (b >= p.nb) b = p.nb - 1;
    if constexpr (sizeof(T) <= 4) {
        const u64 t = d * (u64)p.nb;  // < 2^32 * 2^24: no overflow
        u64 lower = (u64)b * p.range;
        while (t < lower) {
            b--;
            lower -= p.range;
        }
        while (b + 1 < p.nb && t >= lower + p.range) {
            b++;
            lower += p.range;
        }
    } else {
        const hist_u128 t = hist_mul(d, (u64)p.nb);
        while (b > 0 && hist_lt(t, hist_mul((u64)b, p.range))) b--;
        while (b + 1 < p.nb && !hist_lt(t, hist_mul((u64)b + 1, p.range))) b++;
    }
    return b;
#elif CUPRIM_HIST_MODE == 2
    const auto x = hist_num(v);
    const u32 last = p.num_edges - 1;
    if (!(x >= hist_num(edges[0]) && x < hist_num(edges[last]))) return p.nb;
    // Invariant: edges[lo] <= x < edges[hi].
    u32 lo = 0, hi = last;
    if constexpr (cuprim_traits<T>::is_float) {
        if (p.lut_cells) {
            u32 c = (u32)((F)(x - hist_num(edges[0])) * p.lut_scale);
            if (c >= p.lut_cells) c = p.lut_cells - 1;
            lo = lut[c > 0 ? c - 1 : 0];
            if (c + 2 < p.lut_cells) hi = lut[c + 2] + 1;
        }
    } else {
        (void)lut;
    }
    while (hi - lo > 1) {
        const u32 mid = (lo + hi) >> 1;
        if (hist_num(edges[mid]) <= x) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
#else
    if constexpr ((T)-1 < (T)0) {
        if (v < (T)0) return p.nb;
    }
    return (u64)v < (u64)p.nb ? (u32)v : p.nb;
#endif
}

struct HistAddU64 {
    __device__ __forceinline__ static u64 apply(u64 a, u64 b) {
        return a + b;
    }
    __device__ __forceinline__ static u64 identity() {
        return 0;
    }
};

// Every sample of the input, in each thread's order, to add(v): a buffer
// with this kernel's own vector loop (see the top), an input expression
// with the shared consume loop.
template <typename X, typename AddFn> __device__ __forceinline__ void hist_read(const X& in_expr, u64 n, AddFn& add) {
    const u64 tid = cuprim_thread_id();
    const u64 stride = cuprim_thread_count();
    if constexpr (!X::IS_BUF) {
        cuprim_consume_x<CUPRIM_UNROLL>(in_expr, n, [&](const T& v, u64) { add(v); });
        return;
    } else {
        const T* __restrict__ in = in_expr.p;
        if (cuprim_aligned_to<HiVec>(in)) {
            const u64 nv = n / HI_ITEMS;
            const HiVec* vin = (const HiVec*)in;
            // Groups of 32 x CUPRIM_UNROLL consecutive vectors, one warp's
            // each (grid-stride over the warps): every load is coalesced and
            // a thread's samples lie within the group, so sorted input keeps
            // its runs (a grid-stride per vector put a thread's consecutive
            // vectors a whole grid apart, nearly always in another bin).
            constexpr u64 GROUP = 32 * CUPRIM_UNROLL;
            const u64 groups = nv / GROUP;
            const u32 lane = threadIdx.x & 31;
            for (u64 g = tid >> 5; g < groups; g += stride >> 5) {
                const HiVec* at = vin + g * GROUP + lane;
                HiVec x[CUPRIM_UNROLL];
#pragma unroll
                for (int u = 0; u < CUPRIM_UNROLL; u++) x[u] = at[u * 32];
#pragma unroll
                for (int u = 0; u < CUPRIM_UNROLL; u++) {
#pragma unroll
                    for (int k = 0; k < HI_ITEMS; k++) add(x[u].v[k]);
                }
            }
            for (u64 v = groups * GROUP + tid; v < nv; v += stride) {
                const HiVec x = vin[v];
#pragma unroll
                for (int k = 0; k < HI_ITEMS; k++) add(x.v[k]);
            }
            const u64 t = nv * HI_ITEMS + tid;
            if (t < n) add(in[t]);
        } else {
            for (u64 i = tid; i < n; i += stride) add(in[i]);
        }
    }
}

// Adds x to the shared-memory word at byte address `at` when `when` holds:
// a predicated reduction that returns nothing (ptxas may still branch
// around it), at an address the caller computes once per thread, not per
// add (the generic-to-shared conversion of a pointer was redone each time).
__device__ __forceinline__ void hist_shared_add(bool when, u32 at, u32 x) {
    asm volatile(
        "{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %0, 0;\n\t@p red.shared.add.u32 [%1], %2;\n\t}" ::"r"((u32)when), "r"(at),
        "r"(x)
        : "memory");
}

// A thread's current run: `run` samples of bin (or, with shared counters,
// slot) `at` not yet counted.
struct HistRun {
    u32 at, run;
};

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_histogram(CUPRIM_INPUT In in_expr, u64 n, HistParams p, u32 replicas, C* __restrict__ counts,
                     u64* __restrict__ dropped, C* fresh, u64* fresh_dropped, u32* ticket) {
    // A fresh histogram (`fresh` not null): the blocks add into `fresh` and
    // `fresh_dropped`, zero-filled accumulators the device keeps, and the
    // last block writes (not adds) the totals to `counts` and `dropped`,
    // then zeroes the accumulators again: one launch, no memset.
    C* const sums = fresh ? fresh : counts;
    u64* const sum_dropped = fresh ? fresh_dropped : dropped;
    // Shared memory: [replicas x (window + 2) u32 counters, if shared][staged
    // edges and cell table, if any]. Per replica, the window's counters and
    // two spare slots (see the runs below).
    extern __shared__ __align__(16) unsigned char hist_smem[];
#if CUPRIM_HIST_SHARED
    u32* const bins = (u32*)hist_smem;
    const u32 stride = HIST_BYTES ? 256 : p.window + 2;
    const u32 slots = replicas * stride;
    for (u32 i = threadIdx.x; i < slots; i += CUPRIM_BLOCK) bins[i] = 0;
    u32* const mine = bins + ((threadIdx.x >> 5) & (replicas - 1)) * stride;
    const u32 edges_at = (slots * 4 + 15) & ~15u;
#else
    const u32 edges_at = 0;
#endif
    const T* edges = p.edges;
    const u32* lut = p.lut;
#if CUPRIM_HIST_MODE == 2
    if (p.num_edges <= CUPRIM_EDGES_SHARED) {
        T* staged = (T*)(hist_smem + edges_at);
        for (u32 i = threadIdx.x; i < p.num_edges; i += CUPRIM_BLOCK) staged[i] = p.edges[i];
        edges = staged;
        if (p.lut_cells) {
            u32* staged_lut = (u32*)(hist_smem + ((edges_at + p.num_edges * sizeof(T) + 15) & ~15u));
            for (u32 i = threadIdx.x; i < p.lut_cells; i += CUPRIM_BLOCK) staged_lut[i] = p.lut[i];
            lut = staged_lut;
        }
    }
#else
    (void)edges_at;
#endif
    __syncthreads();

#if CUPRIM_HIST_SHARED
    // Runs of slots: bin b goes to slot min(b - bin_base, window + 1)
    // (wrapping below the window), so a run of dropped samples, or of bins
    // outside this launch's window, is counted like any other and a run
    // ends with one shared atomic, with no branch on what it held. Slot
    // `window` holds the dropped samples (bin nb) in the last window, which
    // ends at nb and is the launch that counts them; in an earlier window
    // it holds the next window's first bin and is not read. The first run
    // (of no samples, in the never-read slot) adds 0.
    // One-byte samples: the slot is the sample's value (its bin comes at the end).
    HistRun r{HIST_BYTES ? 0 : p.window + 1, 0};
    const u32 mine_at = (u32)__cvta_generic_to_shared(mine);
    auto add = [&](T v) {
        u32 s;
        if constexpr (HIST_BYTES) {
            s = (u32)(u8)v;
        } else {
            const u32 w = hist_bin(v, p, edges, lut) - p.bin_base;  // wraps when below the window
            s = w < p.window + 1 ? w : p.window + 1;
        }
        const bool ends = s != r.at;
        hist_shared_add(ends, mine_at + 4 * r.at, r.run);
        r.run = ends ? 1 : r.run + 1;
        r.at = s;
    };
    hist_read(in_expr, n, add);
    hist_shared_add(r.run != 0, mine_at + 4 * r.at, r.run);
    __syncthreads();
    if constexpr (HIST_BYTES) {
        // Each value's count to its bin, or to the dropped samples. Values of
        // one bin within a warp are added up first (by the lowest lane of
        // them), so wide bins cost one global atomic each, not one per value.
        static_assert(256 % 32 == 0, "whole warps over the values");
        u64 dropped_here = 0;
        for (u32 v = threadIdx.x; v < 256; v += CUPRIM_BLOCK) {
            u32 s = 0;
            for (u32 k = 0; k < replicas; k++) s += bins[k * stride + v];
            const u32 b = s ? hist_bin((T)(u8)v, p, edges, lut) : 0xffffffffu;  // the sample whose byte is v (u8 or i8)
            bins[v] = s;  // column v of copy 0: read by this thread alone above
            const unsigned same = __match_any_sync(0xffffffffu, b);
            __syncwarp();
            if (b != 0xffffffffu && (threadIdx.x & 31) == (u32)__ffs(same) - 1) {
                const u32 first = v - (threadIdx.x & 31);
                u32 total = 0;
                for (unsigned m = same; m; m &= m - 1) total += bins[first + __ffs(m) - 1];
                if (b < p.nb) {
                    atomicAdd(sums + b, (C)total);
                } else {
                    dropped_here += total;
                }
            }
        }
        const u64 block_dropped = cuprim_block_reduce<u64, HistAddU64, CUPRIM_BLOCK>(dropped_here);
        if (threadIdx.x == 0 && block_dropped) atomicAdd((unsigned long long*)sum_dropped, (unsigned long long)block_dropped);
    }
    for (u32 b = threadIdx.x; !HIST_BYTES && b < p.window; b += CUPRIM_BLOCK) {
        u32 s = 0;
        for (u32 k = 0; k < replicas; k++) s += bins[k * stride + b];
        if (s) atomicAdd(sums + p.bin_base + b, (C)s);
    }
    if (!HIST_BYTES && threadIdx.x == 0 && p.count_dropped) {
        u64 d = 0;
        for (u32 k = 0; k < replicas; k++) d += bins[k * stride + p.window];
        if (d) atomicAdd((unsigned long long*)sum_dropped, (unsigned long long)d);
    }
#else
    // A new bin ends the run before it (the first call's empty run adds 0).
    HistRun r{p.nb, 0};
    u64 dropped_here = 0;
    auto count_run = [&]() {
        if (r.at == p.nb) {
            dropped_here += r.run;
        } else {
            atomicAdd(sums + r.at, (C)r.run);
        }
    };
    auto add = [&](T v) {
        const u32 b = hist_bin(v, p, edges, lut);
        if (b != r.at) {
            count_run();
            r.at = b;
            r.run = 0;
        }
        r.run++;
    };
    hist_read(in_expr, n, add);
    if (r.run) count_run();
    const u64 block_dropped = cuprim_block_reduce<u64, HistAddU64, CUPRIM_BLOCK>(dropped_here);
    if (threadIdx.x == 0 && block_dropped && p.count_dropped) atomicAdd((unsigned long long*)sum_dropped, (unsigned long long)block_dropped);
#endif
    if (!fresh || !cuprim_last_block(ticket)) return;
    for (u32 b = threadIdx.x; b < p.nb; b += CUPRIM_BLOCK) {
        counts[b] = cuprim_load_cg(fresh + b);
        fresh[b] = 0;
    }
    if (threadIdx.x == 0) {
        *dropped = cuprim_load_cg(fresh_dropped);
        *fresh_dropped = 0;
    }
}
