// Top-k by radix select (after AIR Top-K, Zhang et al., SC'23): the k
// largest elements of `in` (the smallest: the keys' order flipped) with
// their indices, ties to the lower index.
//
// An element is ranked by its composite key: its order-preserving key bits
// (radix_ordered ^ flip, sort/radix_sort.cuh) above its inverted index, so
// composites are distinct and the largest k composites are the answer. The
// selection fixes the composite's digits from the top, one pass each: a
// pass histograms the next digit of the elements still in the running (the
// "alive" set, whose digits so far equal the chosen buckets), and the
// bucket holding the k-th largest is chosen. Elements in a higher bucket
// are winners; elements in the chosen bucket stay alive. When the chosen
// bucket holds exactly the picks still needed, it is taken whole.
//
// Digits run from the key's top bits down to its last, then through the
// index's bits; the host gives each pass its digits (TopkDigit).
//
// Specialised on: T (element), I (index: u32 or u64), K = T and V = I for
// the sort header, CUPRIM_BLOCK (threads), CUPRIM_RADIX_BITS (the widest
// digit), CUPRIM_SEG_CAND and CUPRIM_SEG_KMAX (the segment kernel's shared
// candidates and winners), CUPRIM_SAMPLE_THREADS and CUPRIM_SAMPLE_ITEMS
// (the window's block and its samples per thread), CUPRIM_FINISH_ITEMS (window candidates per thread of
// cuprim_topk_finish), CUPRIM_TOPK_X (1: the input is an expression, below).

constexpr u32 RADIX = 1u << CUPRIM_RADIX_BITS;

// The input: `const T* in`, or with CUPRIM_TOPK_X an input expression
// (src/expr/) `TopkIn in` of items T, passed by value, whose element i is
// in.load(i) and which every kernel reads wherever it reads the input (each
// pass evaluates it again: no collected copy). TOPK_AT(i) is element i,
// TOPK_VEC the elements of one vector step.
// The expression modules have no cuprim_topk_rest (partial_sort sorts a
// buffer in place).
#ifndef CUPRIM_TOPK_X
#define CUPRIM_TOPK_X 0
#endif
#if CUPRIM_TOPK_X
// A vector step of an expression: 16 bytes of its widest buffer (as
// cuprim_consume_x takes), and at least 16 bytes of items (as the buffer
// form takes).
constexpr int topk_x_items() {
    return cuprim_x_items<TopkIn>() > (int)(16 / sizeof(T)) ? cuprim_x_items<TopkIn>() : (int)(16 / sizeof(T));
}
// N elements from `first` (an N-element boundary of every buffer unless
// `mixed`: then one at a time).
template <int N> __device__ __forceinline__ cuprim_arr<T, N> topk_load_n(const TopkIn& in, u64 first, bool mixed) {
    if (!mixed) return in.template load_n<N>(first);
    cuprim_arr<T, N> r;
#pragma unroll
    for (int j = 0; j < N; j++) r.v[j] = in.load(first + j);
    return r;
}
#define TOPK_IN CUPRIM_INPUT TopkIn in
#define TOPK_AT(i) in.load(i)
#define TOPK_VEC topk_x_items()
// With no occupancy asked, ptxas kept the filter of some expressions at 32
// registers and spilled 8 bytes around its reservation's atomics (a zip of
// f32 and f64 buffers on sm_80, f32 items of an f64 buffer with u64
// indices); 4 blocks per SM (64 registers) spill none of the compile
// check's expressions.
#define TOPK_FILTER_BOUNDS CUPRIM_BLOCK, 4
#else
#define TOPK_IN const T* __restrict__ in
#define TOPK_AT(i) in[i]
#define TOPK_VEC 16 / sizeof(T)
#define TOPK_FILTER_BOUNDS CUPRIM_BLOCK
#endif

// One digit of the composite: `bits` bits at `shift` of the key (part 0)
// or of the inverted index (part 1).
struct TopkDigit {
    u32 part, shift, bits;
};

template <typename IX> __device__ __forceinline__ u32 topk_digit(KR okey, IX idx, TopkDigit d) {
    const u64 word = d.part == 0 ? (u64)okey : (u64)(IX)~idx;
    return (u32)(word >> d.shift) & ((1u << d.bits) - 1);
}

// The digits fixed so far: an element is alive when its masked bits equal
// the prefix.
struct TopkPrefix {
    u64 kpre, kmask, ipre, imask;
};

template <typename IX> __device__ __forceinline__ bool topk_alive(KR okey, IX idx, const TopkPrefix& p) {
    return ((u64)okey & p.kmask) == p.kpre && ((u64)(IX)~idx & p.imask) == p.ipre;
}

__device__ __forceinline__ void topk_fix(TopkPrefix& p, TopkDigit d, u32 bucket) {
    const u64 m = (u64)((1u << d.bits) - 1) << d.shift, v = (u64)bucket << d.shift;
    if (d.part == 0) {
        p.kmask |= m;
        p.kpre |= v;
    } else {
        p.imask |= m;
        p.ipre |= v;
    }
}

// The key's ordered form and back (radix_sort.cuh works on the key's bits).
__device__ __forceinline__ KR topk_okey(T x, KR flip) {
    cuprim_words<T> c;
    c.v = x;
    u64 u = 0;
    if (sizeof(T) == 1) u = c.b;
    else if (sizeof(T) == 2) u = c.h;
    else
#pragma unroll
        for (int w = 0; w < cuprim_words<T>::W; w++) u |= (u64)c.w[w] << (32 * w);
    return radix_ordered((KR)u) ^ flip;
}
__device__ __forceinline__ T topk_value(KR okey, KR flip) {
    const u64 u = (u64)radix_unordered(okey ^ flip);
    cuprim_words<T> c;
    if (sizeof(T) == 1) c.b = (u8)u;
    else if (sizeof(T) == 2) c.h = (unsigned short)u;
    else
#pragma unroll
        for (int w = 0; w < cuprim_words<T>::W; w++) c.w[w] = (u32)(u >> (32 * w));
    return c.v;
}

// Finds, among `RADIX` counts in `hist` (shared, any count type C), the
// bucket b holding the `need`-th largest: sum(hist[> b]) < need <=
// sum(hist[>= b]). Every thread gets b, sum(hist[> b]) and hist[b].
// `scratch` holds THREADS + 1 u64s of shared memory (THREADS: the block's).
template <typename C, u32 THREADS = CUPRIM_BLOCK>
__device__ __forceinline__ void topk_choose(const C* hist, u64 need, u64* scratch, u32& bucket, u64& above,
                                            u64& inside) {
    constexpr u32 PER = (RADIX + THREADS - 1) / THREADS, WARPS = THREADS / 32;
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    // Thread t owns buckets from the top: RADIX-1-t*PER down.
    u64 mine = 0;
#pragma unroll
    for (u32 j = 0; j < PER; j++) {
        const int b = (int)RADIX - 1 - (int)(threadIdx.x * PER + j);
        if (b >= 0) mine += hist[b];
    }
    // Inclusive scan over the block's threads: within each warp by
    // shuffles, then over the warps' totals by the first warp.
    u64 incl = cuprim_warp_inclusive_sum(mine);
    if (lane == 31) scratch[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        const u64 t = lane < WARPS ? scratch[lane] : 0;
        const u64 run = cuprim_warp_inclusive_sum(t);
        if (lane < WARPS) scratch[lane] = run - t;  // the warps before
    }
    __syncthreads();
    incl += scratch[warp];
    const u64 excl = incl - mine;
    __syncthreads();
    if (excl < need && need <= incl) {
        u64 run = excl;
        for (u32 j = 0; j < PER; j++) {
            const int b = (int)RADIX - 1 - (int)(threadIdx.x * PER + j);
            if (b < 0) break;
            const u64 c = hist[b];
            if (run + c >= need) {
                scratch[THREADS] = (u64)b;  // the bucket
                scratch[0] = run;           // the count above it
                scratch[1] = c;             // and in it
                break;
            }
            run += c;
        }
    }
    __syncthreads();
    bucket = (u32)scratch[THREADS];
    above = scratch[0];
    inside = scratch[1];
    __syncthreads();
}

// Appends one value per flagged thread of the warp at `*counter`: one
// atomic per warp. Returns this thread's slot (undefined when not flagged).
template <typename C> __device__ __forceinline__ C topk_append(bool flag, C* counter) {
    const u32 lanes = __ballot_sync(0xffffffffu, flag);
    if (!lanes) return 0;
    const u32 lane = threadIdx.x & 31, leader = __ffs(lanes) - 1;
    C base = 0;
    if (lane == leader) base = atomicAdd(counter, (C)__popc(lanes));  // C: u32 or u64, global or shared
    base = __shfl_sync(0xffffffffu, base, leader);
    return base + __popc(lanes & ((1u << lane) - 1));
}

// Counts one element per flagged thread of the warp in `hist` (shared) at
// its digit `d`: the lanes with the same digit are found together
// (__match_any_sync) and the first adds them all, so the warp never
// serialises on one counter (skewed digits: uniform floats' top bits, a
// narrow band of candidates, runs of equal values).
__device__ __forceinline__ void topk_count(u32* hist, bool flag, u32 d) {
    const u32 lanes = __ballot_sync(0xffffffffu, flag);
    if (!lanes) return;
    // Unflagged lanes take a digit no bucket has.
    const u32 peers = __match_any_sync(0xffffffffu, flag ? d : 0xffffffffu);
    if (flag && (threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&hist[d], (u32)__popc(peers));
}

// Counts one element per flagged thread of the warp in `hist` (shared) at
// its digit `d`, with one atomic for the warp when its flagged lanes share
// one digit (runs of equal keys), else one per lane: cheaper than
// topk_count where digits are mostly spread (below a common prefix).
__device__ __forceinline__ void topk_count_runs(u32* hist, bool flag, u32 d) {
    const u32 lanes = __ballot_sync(0xffffffffu, flag);
    if (!lanes) return;
    const u32 leader = __ffs(lanes) - 1;
    const u32 first = __shfl_sync(0xffffffffu, d, leader);
    if (__ballot_sync(0xffffffffu, flag && d == first) == lanes) {
        if ((threadIdx.x & 31) == leader) atomicAdd(&hist[d], (u32)__popc(lanes));
    } else if (flag) {
        atomicAdd(&hist[d], 1u);
    }
}

// Reserves `c` consecutive slots at `*counter` (global) for each thread of
// the block, two counters at once (c and the counts packed as lo | hi << 16,
// each at most 4096 per block): one atomic per counter and block. Every
// thread of the block calls it; returns this thread's first slots.
// `smem` holds CUPRIM_BLOCK / 32 + 2 u64s of shared memory.
__device__ __forceinline__ void topk_reserve2(u32 c, u64* counter0, u64* counter1, u64* smem, u64& slot0,
                                              u64& slot1) {
    constexpr u32 WARPS = CUPRIM_BLOCK / 32;
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    const u32 incl = cuprim_warp_inclusive_sum(c);
    if (lane == 31) smem[warp] = incl;
    __syncthreads();
    if (threadIdx.x == 0) {
        u32 run = 0;
        for (u32 w = 0; w < WARPS; w++) {
            const u32 t = (u32)smem[w];
            smem[w] = run;
            run += t;
        }
        const u32 n0 = run & 0xffffu, n1 = run >> 16;
        smem[WARPS] = n0 ? atomicAdd((unsigned long long*)counter0, (unsigned long long)n0) : 0;
        smem[WARPS + 1] = n1 ? atomicAdd((unsigned long long*)counter1, (unsigned long long)n1) : 0;
    }
    __syncthreads();
    const u32 before = (u32)smem[warp] + incl - c;
    slot0 = smem[WARPS] + (before & 0xffffu);
    slot1 = smem[WARPS + 1] + (before >> 16);
    __syncthreads();  // smem is reused by the next call
}

// ---------------------------------------------------------------------------
// Device-wide selection: one launch per digit, state in global memory.

struct TopkState {
    u64 key;            // the key digits fixed so far, the chosen bucket's included
    TopkPrefix prefix;  // the digits fixed before the current one
    u64 need;           // picks still needed in the chosen bucket
    u64 alive;          // elements in the chosen bucket
    u64 winners;        // outputs written so far
    u64 cand[2];        // fill of the two candidate buffers
    u32 bucket;         // the current digit's chosen bucket
    u32 done;           // the chosen bucket is taken whole by the next pass
    u32 finished;       // nothing left to do: later passes return at once
    u32 src;            // the alive set: 0 the input, 1 + b candidate buffer b
    u64 lo, hi;         // the sampled window (cuprim_topk_sample): ordered keys
    u64 hist[RADIX];    // the histogram of this pass, cleared for the next
};

struct TopkPass {
    TopkDigit cur;   // the digit whose bucket was chosen (unused in the first pass)
    TopkDigit next;  // the digit to histogram (unused when done)
    u32 first;       // the first pass: no filter, histogram only
    u32 last;        // `next` is the last digit selected on
    u64 flip;        // KR's all ones for the smallest, else 0
    u32 value_only;  // select_nth: no winners, every key digit fixed
    u32 filtered;    // cuprim_topk_filter ran: the first pass reads `need` from the state
    u64 k;           // picks in all
    u64 cap;         // candidate buffer capacity, elements
};

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK)
    cuprim_topk_pass(TOPK_IN, u64 n, KR* __restrict__ ckeys, I* __restrict__ cidx,
                     T* __restrict__ out_vals, I* __restrict__ out_idx, TopkState* st, u32* ticket, TopkPass ps) {
    __shared__ u32 hist[RADIX];
    __shared__ u64 totals[RADIX];
    __shared__ u64 scratch[CUPRIM_BLOCK + 1];
    __shared__ u64 smem[CUPRIM_BLOCK / 32 + 2];
    if (st->finished) return;  // the same for every block of the launch
    const TopkPrefix pre = st->prefix;
    const u32 bucket = st->bucket, done = st->done, src = st->src;
    // Elements alive now (in the chosen bucket) are stored for the next
    // pass when they fit, in the buffer the source is not.
    const bool store = !ps.first && !done && st->alive <= ps.cap;
    const u32 dst = src == 1 ? 1 : 0;  // buffer index to write: the other one
    KR* const dkeys = ckeys + dst * ps.cap;
    I* const didx = cidx + dst * ps.cap;
    const KR* const skeys = ckeys + (src == 2 ? ps.cap : 0);
    const I* const sidx = cidx + (src == 2 ? ps.cap : 0);
    const u64 count = src == 0 ? n : st->cand[src - 1];
    for (u32 i = threadIdx.x; i < RADIX; i += CUPRIM_BLOCK) hist[i] = 0;
    __syncthreads();

    const u64 stride = (u64)gridDim.x * CUPRIM_BLOCK, tid = (u64)blockIdx.x * CUPRIM_BLOCK + threadIdx.x;
    // Whole blocks run every round together (the slot reservation is
    // block-wide); a round takes P elements per thread, P loads in flight.
    constexpr u32 P = 4;
    const u64 rounds = (count + stride * P - 1) / (stride * P);
    for (u64 r = 0; r < rounds; r++) {
        KR okey[P];
        I idx[P];
        u32 win = 0, stay = 0;
#pragma unroll
        for (u32 p = 0; p < P; p++) {
            const u64 i = (r * P + p) * stride + tid;
            okey[p] = 0;
            idx[p] = 0;
            if (i < count) {
                if (src == 0) {
                    okey[p] = topk_okey(TOPK_AT(i), (KR)ps.flip);
                    idx[p] = (I)i;
                } else {
                    okey[p] = skeys[i];
                    if (!ps.value_only) idx[p] = sidx[i];  // a value's digits are the key's only
                }
                if (ps.first) {
                    stay |= 1u << p;
                } else if (topk_alive(okey[p], idx[p], pre)) {
                    const u32 d = topk_digit(okey[p], idx[p], ps.cur);
                    win |= (u32)(d > bucket || (done && d == bucket)) << p;
                    stay |= (u32)(!done && d == bucket) << p;
                }
            }
        }
#pragma unroll
        for (u32 p = 0; p < P; p++) {
            const bool f = stay >> p & 1;
            topk_count(hist, f, f ? topk_digit(okey[p], idx[p], ps.next) : 0);
        }
        if (ps.value_only) win = 0;
        const u32 kept = store ? stay : 0;
        if (!__syncthreads_or(win | kept)) continue;
        u64 w, c;
        topk_reserve2(__popc(win) | (u32)__popc(kept) << 16, &st->winners, &st->cand[dst], smem, w, c);
#pragma unroll
        for (u32 p = 0; p < P; p++) {
            if (win >> p & 1) {
                out_vals[w] = topk_value(okey[p], (KR)ps.flip);
                out_idx[w] = idx[p];
                w++;
            }
            if (kept >> p & 1) {
                dkeys[c] = okey[p];
                if (!ps.value_only) didx[c] = idx[p];
                c++;
            }
        }
    }
    __syncthreads();
    if (!done) {
        for (u32 b = threadIdx.x; b < RADIX; b += CUPRIM_BLOCK)
            if (hist[b]) atomicAdd((unsigned long long*)&st->hist[b], (unsigned long long)hist[b]);
    }
    if (!cuprim_last_block(ticket)) return;

    // The last block: every other block's counts and outputs are in.
    if (done) {
        if (threadIdx.x == 0) st->finished = 1;
        return;
    }
    // The counts (read past L1, then cleared for the next pass), the choice.
    for (u32 i = threadIdx.x; i < RADIX; i += CUPRIM_BLOCK) {
        totals[i] = __ldcg((const unsigned long long*)&st->hist[i]);
        st->hist[i] = 0;
    }
    __syncthreads();
    const u64 need = ps.first && !ps.filtered ? ps.k : st->need;
    u32 b;
    u64 above, inside;
    topk_choose<u64>(totals, need, scratch, b, above, inside);
    if (threadIdx.x == 0) {
        TopkPrefix p = pre;
        if (!ps.first) topk_fix(p, ps.cur, bucket);
        st->prefix = p;
        st->need = need - above;
        st->alive = inside;
        st->bucket = b;
        st->done = (!ps.value_only && inside == need - above) || ps.last;
        st->key = p.kpre | (ps.next.part == 0 ? (u64)b << ps.next.shift : 0);
        // The alive set is where this pass stored it, or else where this
        // pass read it; the other buffer is emptied for the next pass to
        // fill.
        st->src = store ? dst + 1 : src;
        if (store) st->cand[dst ^ 1] = 0;
        else st->cand[dst] = 0;
    }
}

// ---------------------------------------------------------------------------
// The sampled window (SampleSelect): before the passes, one block reads
// up to TOPK_SAMPLE_ITEMS elements per thread, spread evenly over the
// input, and picks two of them, `lo` and `hi`, that bracket the k-th of the order with high probability
// (the host chooses their ranks in the sample from k / n). One read of the
// input (cuprim_topk_filter) then takes every element above `hi` as a
// winner and keeps those in [lo, hi] as candidates; when the k-th is among
// them (checked exactly, by counting), the passes select on the few
// candidates instead of the input. Otherwise they start over on the input:
// the sample only ever costs time, never correctness.

constexpr u32 TOPK_SAMPLE_ITEMS = CUPRIM_SAMPLE_ITEMS;  // samples per thread, in registers
constexpr u32 TOPK_SAMPLE_THREADS = CUPRIM_SAMPLE_THREADS;  // the sampling block's threads

// ORs every thread's `x` into *slot (shared; cleared before a barrier all
// callers have passed): one shared atomic per warp.
__device__ __forceinline__ void topk_block_or(KR x, u64* slot) {
#pragma unroll
    for (u32 o = 16; o > 0; o >>= 1) x |= __shfl_xor_sync(0xffffffffu, x, o);
    if ((threadIdx.x & 31) == 0 && x) atomicOr((unsigned long long*)slot, (unsigned long long)x);
}

// Keys with the low `bits` bits set (all ones past the key's width).
__device__ __forceinline__ KR topk_low(u32 bits) {
    return bits >= 8 * sizeof(KR) ? ~(KR)0 : (KR)(((KR)1 << bits) - 1);
}

// The r-th largest (1-based) of `count` keys held by the block, N per
// thread in registers (key j of thread t is number j * THREADS + t; those
// from `count` on are not counted): by radix select over the key's digits.
// The bits above the keys' common prefix are skipped (one block-wide OR of
// each key against the first), so keys sharing their top bits, such
// as a window's candidates, take fewer passes. At most `digits` digits are
// resolved: `rest` gets the low bits left unresolved (0 when exact), which
// the returned key has clear; the r-th largest is then somewhere in [key,
// key | topk_low(rest)]. Digits also stop once at most `enough` keys are
// at or above the returned key (0: no such stop), for a caller that
// gathers those and sorts them anyway. r = 0 gives the largest possible
// key, r > count gives 0. RUNS: the keys may hold long runs of equal values (a window's
// candidates, where a few distinct values can fill the window), so a warp
// whose counted digits are all equal adds them with one atomic
// (topk_count_runs); samples count with one shared atomic each.
template <u32 THREADS, bool RUNS, int N>
__device__ __forceinline__ KR topk_rank(const KR (&keys)[N], u32 count, u64 r, u32 digits, u64 enough, u32* hist,
                                        u64* scratch, u32& rest) {
    rest = 0;
    if (r == 0) return ~(KR)0;
    if (r > count) return 0;
    // The common prefix: the bits where no counted key differs from key 0.
    if (threadIdx.x == 0) {
        scratch[0] = 0;
        scratch[1] = (u64)keys[0];
    }
    __syncthreads();
    const KR ref = (KR)scratch[1];
    KR diff = 0;
#pragma unroll
    for (int m = 0; m < N; m++) {
        if (m * THREADS >= count) break;  // the same for the whole block
        if (m * THREADS + threadIdx.x < count) diff |= keys[m] ^ ref;
    }
    topk_block_or(diff, scratch);
    __syncthreads();
    const u64 spread = scratch[0];
    u32 top = spread ? 64 - __clzll((long long)spread) : 0;
    KR mask = ~topk_low(top), pre = ref & mask;
    u64 need = r;
    // Every thread reads scratch before the block's next barrier: the first
    // pass's, or this one when there is none (topk_choose and the caller
    // write scratch after it).
    if (top == 0 || digits == 0) __syncthreads();
    for (u32 d = 0; top > 0 && d < digits; d++) {
        const u32 bits = top < CUPRIM_RADIX_BITS ? top : CUPRIM_RADIX_BITS, shift = top - bits;
        const u32 dmask = (1u << bits) - 1;
        for (u32 i = threadIdx.x; i < RADIX; i += THREADS) hist[i] = 0;
        __syncthreads();
#pragma unroll
        for (int m = 0; m < N; m++) {
            if (m * THREADS >= count) break;  // the same for the whole block
            const bool alive = m * THREADS + threadIdx.x < count && (keys[m] & mask) == pre;
            const u32 d = (u32)(keys[m] >> shift) & dmask;
            if constexpr (RUNS) topk_count_runs(hist, alive, d);
            else if (alive) atomicAdd(&hist[d], 1u);
        }
        __syncthreads();
        u32 b;
        u64 above, inside;
        topk_choose<u32, THREADS>(hist, need, scratch, b, above, inside);
        need -= above;
        pre |= (KR)b << shift;
        mask |= (KR)dmask << shift;
        top = shift;
        if (r - need + inside <= enough) break;  // the keys at or above pre
    }
    rest = top;
    return pre;
}

// The window's lower rank for the k-th of n from S evenly spaced samples:
// about lambda = k S / n samples lie above the k-th (binomially, variance
// lambda (1 - k / n)); the rank sits four standard deviations and two above
// that. (The host's plan::window_ranks is the same formula for the
// device-wide window.)
__device__ __forceinline__ u64 topk_window_lo(u64 k, u64 n, u64 samples) {
    const double p = (double)k / (double)n, lambda = p * (double)samples;
    return (u64)ceil(lambda + 4.0 * sqrt(lambda * (1.0 - p))) + 2;
}

// One block: samples element j * (n / S) + (n / S) / 2 for j < S (S =
// `samples`, a multiple of the block's threads, at most TOPK_SAMPLE_ITEMS of them; n >= 2S),
// and writes the window: lo = the r_lo-th largest sample, hi = the r_hi-th
// (each rounded outwards, see topk_rank). The first kernel of a window's
// selection, it also clears the state (the host queues no memset).
extern "C" __global__ void __launch_bounds__(TOPK_SAMPLE_THREADS)
    cuprim_topk_sample(TOPK_IN, u64 n, u64 samples, TopkState* st, u64 r_lo, u64 r_hi, u64 flip) {
    __shared__ u32 hist[RADIX];
    __shared__ u64 scratch[TOPK_SAMPLE_THREADS + 1];
    for (u32 i = threadIdx.x; i < sizeof(TopkState) / 8; i += TOPK_SAMPLE_THREADS) ((u64*)st)[i] = 0;
    const u64 stride = n / samples;
    KR keys[TOPK_SAMPLE_ITEMS];
#pragma unroll
    for (u32 m = 0; m < TOPK_SAMPLE_ITEMS; m++) {
        const u64 j = (u64)m * TOPK_SAMPLE_THREADS + threadIdx.x;
        keys[m] = j < samples ? topk_okey(TOPK_AT(j * stride + stride / 2), (KR)flip) : (KR)0;
    }
    // Two digits below the samples' common prefix place each end closely
    // enough (a third would only narrow the window by less than a 2^-22nd
    // of the samples' range); lo is rounded down and hi up, so the window
    // only widens.
    u32 rest;
    const KR lo = topk_rank<TOPK_SAMPLE_THREADS, false>(keys, (u32)samples, r_lo, 2, 0, hist, scratch, rest);
    const KR hi = topk_rank<TOPK_SAMPLE_THREADS, false>(keys, (u32)samples, r_hi, 2, 0, hist, scratch, rest) |
                  topk_low(rest);
    if (threadIdx.x == 0) {
        st->lo = lo;
        st->hi = hi;
    }
}

// One read of the input against the window: elements above `hi` are
// winners (written to the outputs unless value_only, counted in
// st->winners), elements in [lo, hi] candidates (to candidate buffer 0, at
// most ps.cap, counted in st->cand[0]). Whether the k-th is among them is
// for cuprim_topk_finish, queued behind it, to judge (a last-block ticket
// here cost a fence and a wait in every block).
extern "C" __global__ void __launch_bounds__(TOPK_FILTER_BOUNDS)
    cuprim_topk_filter(TOPK_IN, u64 n, KR* __restrict__ ckeys, I* __restrict__ cidx,
                       T* __restrict__ out_vals, I* __restrict__ out_idx, TopkState* st, TopkPass ps) {
    __shared__ u64 smem[CUPRIM_BLOCK / 32 + 2];
    constexpr int ITEMS = TOPK_VEC;  // at least 2: x[1] holds the tail element
    const KR lo = (KR)st->lo, hi = (KR)st->hi, flip = (KR)ps.flip;
#if CUPRIM_TOPK_X
    // Buffers at different offsets from a vector boundary: one element at a time.
    const u32 m = in.template misalign<ITEMS>();
    const bool mixed = m == CUPRIM_X_MIXED;
    const cuprim_split<ITEMS> s(n, mixed || m == CUPRIM_X_ANY ? 0u : m);
#else
    typedef cuprim_vec<T, 16 / sizeof(T)> V;
    const cuprim_split<16 / sizeof(T)> s(n, cuprim_misalign<16 / sizeof(T)>(in));
    const V* __restrict__ vin = s.body(in);
#endif
    const u64 stride = cuprim_thread_count(), tid = cuprim_thread_id();
    // Whole blocks run every round together (the reservation is block-wide);
    // the last round takes the head and tail elements (fewer than a vector each).
    const u64 rounds = (s.vectors + stride - 1) / stride;
    u64 above = 0;  // value_only: winners seen by this thread
    for (u64 r = 0; r <= rounds; r++) {
        T x[ITEMS];
        u64 first = 0;  // the index of x[0]; x[1] is the tail element in the last round
        u32 have = 0;   // bit j: x[j] is an element
        if (r < rounds) {
            const u64 v = r * stride + tid;
            if (v < s.vectors) {
#if CUPRIM_TOPK_X
                const cuprim_arr<T, ITEMS> y = topk_load_n<ITEMS>(in, s.index(v, 0), mixed);
#pragma unroll
                for (int j = 0; j < ITEMS; j++) x[j] = y.v[j];
                first = s.index(v, 0);
                have = (1u << ITEMS) - 1;
#else
                const V y = cuprim_load_stream<false>(vin + v);
#pragma unroll
                for (int j = 0; j < 16 / (int)sizeof(T); j++) x[j] = y.v[j];
                first = s.index(v, 0);
                have = (1u << (16 / sizeof(T))) - 1;
#endif
            }
        } else {
            if (tid < s.head) {
                x[0] = TOPK_AT(tid);
                first = tid;
                have |= 1;
            }
            if (s.tail + tid < n) {
                x[1] = TOPK_AT(s.tail + tid);
                have |= 2;
            }
        }
        u32 win = 0, cand = 0;
        KR o[ITEMS];
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            if (have >> j & 1) {
                o[j] = topk_okey(x[j], flip);
                win |= (u32)(o[j] > hi) << j;
                cand |= (u32)(o[j] >= lo && o[j] <= hi) << j;
            }
        }
        // A value's winners are only counted (once per thread, below).
        if (ps.value_only) {
            above += __popc(win);
            win = 0;
        }
        if (!__syncthreads_or(win | cand)) continue;
        u64 w, c;
        topk_reserve2(__popc(win) | (u32)__popc(cand) << 16, &st->winners, &st->cand[0], smem, w, c);
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            const u64 at = r < rounds ? first + j : (j == 0 ? first : s.tail + tid);
            if (win >> j & 1) {
                if (!ps.value_only && w < ps.k) {
                    out_vals[w] = x[j];
                    out_idx[w] = (I)at;
                }
                w++;
            } else if (cand >> j & 1) {
                if (c < ps.cap) {
                    ckeys[c] = o[j];
                    if (!ps.value_only) cidx[c] = (I)at;
                }
                c++;
            }
        }
    }
    if (ps.value_only) {
        // Summed over the warp, then one atomic per warp.
#pragma unroll
        for (u32 o = 16; o > 0; o >>= 1) above += __shfl_down_sync(0xffffffffu, above, o);
        if ((threadIdx.x & 31) == 0 && above) atomicAdd((unsigned long long*)&st->winners, (unsigned long long)above);
    }
}

// ---------------------------------------------------------------------------
// Sorting the k winners in one block: composites in shared memory, bitonic.

template <typename IX> __device__ __forceinline__ bool topk_before(KR ka, IX ia, KR kb, IX ib) {
    return ka > kb || (ka == kb && ia < ib);
}

// Puts the pair that sorts first at (ka, ia) when `first`, last otherwise.
template <typename IX> __device__ __forceinline__ void topk_order(KR& ka, IX& ia, KR& kb, IX& ib, bool first) {
    if (topk_before(kb, ib, ka, ia) == first) {
        const KR k = ka;
        const IX i = ia;
        ka = kb;
        ia = ib;
        kb = k;
        ib = i;
    }
}

// One stage (run `size`, `stride`) of a bitonic sort of `total` pairs of
// shared memory, by the block's THREADS threads: each pair lo, lo + stride
// goes in the order of its run (largest first where lo & size is 0).
template <u32 THREADS, typename IX>
__device__ __forceinline__ void topk_bitonic_stage(KR* keys, IX* idx, u32 total, u32 size, u32 stride) {
    for (u32 t = threadIdx.x; t < total / 2; t += THREADS) {
        const u32 lo = 2 * t - (t & (stride - 1)), hi = lo + stride;
        KR ka = keys[lo], kb = keys[hi];
        IX ia = idx[lo], ib = idx[hi];
        const KR ka0 = ka;
        const IX ia0 = ia;
        topk_order(ka, ia, kb, ib, (lo & size) == 0);
        if (ka != ka0 || ia != ia0) {  // swapped: only then stored (bf16 keys spilled with unconditional stores)
            keys[lo] = ka;
            idx[lo] = ia;
            keys[hi] = kb;
            idx[hi] = ib;
        }
    }
}

// Sorts `m` (okey, idx) pairs of shared memory, largest composite first;
// `p2` is a power of two >= m; slots m..p2 must hold the smallest pair.
// A stage of stride 32 or less keeps each warp within its own 64 slots
// (pairs t = 32w..32w+31, plus multiples of the block, span slots 64w..
// 64w+63 then), so two such stages in a row need only the warp's barrier:
// a sort of p2 pairs has log2(p2 / 64) (log2(p2 / 64) + 1) / 2 block-wide
// barriers, not log2(p2) (log2(p2) + 1) / 2.
template <u32 THREADS, typename IX> __device__ __forceinline__ void topk_bitonic(KR* keys, IX* idx, u32 p2) {
    for (u32 size = 2; size <= p2; size <<= 1) {
        for (u32 stride = size >> 1; stride > 0; stride >>= 1) {
            topk_bitonic_stage<THREADS>(keys, idx, p2, size, stride);
            // The next stage's stride: half this one, or the next size's
            // first (size itself); none after the last stage.
            const u32 next = stride > 1 ? stride >> 1 : (size < p2 ? size : ~0u);
            if (stride <= 32 && next <= 32) __syncwarp();
            else __syncthreads();
        }
    }
}

// Sorts the `m` pairs at keys / idx (shared), largest composite first, as
// topk_bitonic does, but in registers: lane l of warp w holds positions
// w * 32R + 32r + l (r < R), so stages of stride under 32 are shuffles,
// strides 32 to 16R swap a thread's registers, and only the larger strides
// go through shared memory (block barriers). Warps past the
// max(q, 32R) positions sorted (q: a power of two >= m) only take the
// barriers. THREADS: the block's threads, R * THREADS >= q. Slots from m
// on are taken as the smallest pair; the first q sorted end in keys / idx.
template <u32 THREADS, int R, typename IX>
__device__ __forceinline__ void topk_bitonic_regs(KR* keys, IX* idx, u32 m, u32 q) {
    constexpr u32 SPAN = 32 * R;  // the positions one warp holds
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    const u32 total = q > SPAN ? q : SPAN;  // positions sorted: a power of two
    const bool active = warp * SPAN < total;
    const u32 base = warp * SPAN + lane;  // register r holds position base + 32 r
    KR k[R];
    IX x[R];
#pragma unroll
    for (int r = 0; r < R; r++) {
        const u32 p = base + 32 * r;
        const bool real = active && p < m;
        k[r] = real ? keys[p] : (KR)0;
        x[r] = real ? idx[p] : (IX)~(IX)0;
    }
    for (u32 size = 2; size <= total; size <<= 1) {
        u32 stride = size >> 1;
        if (stride >= SPAN) {
            // Across warps: through shared memory, then back.
            if (active) {
#pragma unroll
                for (int r = 0; r < R; r++) {
                    keys[base + 32 * r] = k[r];
                    idx[base + 32 * r] = x[r];
                }
            }
            __syncthreads();
            for (; stride >= SPAN; stride >>= 1) {
                topk_bitonic_stage<THREADS>(keys, idx, total, size, stride);
                __syncthreads();
            }
            if (active) {
#pragma unroll
                for (int r = 0; r < R; r++) {
                    k[r] = keys[base + 32 * r];
                    x[r] = idx[base + 32 * r];
                }
            }
        }
        if (!active) continue;
        // Within a thread: registers r and r + stride / 32.
#pragma unroll
        for (int b = R / 2; b >= 1; b >>= 1) {
            if (stride == 32u * b) {
#pragma unroll
                for (int r = 0; r < R; r++)
                    if (!(r & b)) topk_order(k[r], x[r], k[r + b], x[r + b], ((base + 32 * r) & size) == 0);
                stride >>= 1;
            }
        }
        // Within a warp: lanes l and l ^ stride.
        for (; stride > 0; stride >>= 1) {
            const bool low = (lane & stride) == 0;
#pragma unroll
            for (int r = 0; r < R; r++) {
                const KR ok = __shfl_xor_sync(0xffffffffu, k[r], stride);
                const IX ox = __shfl_xor_sync(0xffffffffu, x[r], stride);
                const bool up = ((base + 32 * r) & size) == 0;
                const bool mine = topk_before(k[r], x[r], ok, ox);
                if (mine != (low == up)) {
                    k[r] = ok;
                    x[r] = ox;
                }
            }
        }
    }
    if (active) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            if (base + 32 * r < q) {
                keys[base + 32 * r] = k[r];
                idx[base + 32 * r] = x[r];
            }
        }
    }
    __syncthreads();
}

// Sorts the `m` pairs at keys / idx (shared, room for q, a power of two >=
// m), largest composite first: in registers up to 4 pairs per thread
// (topk_bitonic_regs), else in shared memory (topk_bitonic, slots m..q
// filled with the smallest pair first). Every thread of the block calls it.
template <u32 THREADS, typename IX>
__device__ __forceinline__ void topk_sort_pairs(KR* keys, IX* idx, u32 m, u32 q) {
    if (q <= 2 * THREADS) {
        topk_bitonic_regs<THREADS, 2>(keys, idx, m, q);
    } else if (q <= 4 * THREADS) {
        topk_bitonic_regs<THREADS, 4>(keys, idx, m, q);
    } else {
        for (u32 i = m + threadIdx.x; i < q; i += THREADS) {
            keys[i] = 0;
            idx[i] = (IX)~(IX)0;
        }
        __syncthreads();
        topk_bitonic<THREADS>(keys, idx, q);
    }
}

// The threads of cuprim_topk_sort_small (k <= 2048: two pairs each in
// registers; warps past the pairs only take the barriers).
constexpr u32 TOPK_SORT_THREADS = 1024;

// Sorts the k winners of the device-wide selection in place (k <= the
// dynamic shared memory's pairs).
extern "C" __global__ void __launch_bounds__(TOPK_SORT_THREADS)
    cuprim_topk_sort_small(T* __restrict__ vals, I* __restrict__ idx, u32 k, u32 p2, u64 flip64) {
    const KR flip = (KR)flip64;
    extern __shared__ __align__(16) unsigned char topk_smem[];
    KR* const skeys = (KR*)topk_smem;
    I* const sidx = (I*)(topk_smem + ((p2 * sizeof(KR) + 15) & ~15u));  // 16-byte aligned
    for (u32 i = threadIdx.x; i < k; i += TOPK_SORT_THREADS) {
        skeys[i] = topk_okey(vals[i], flip);
        sidx[i] = idx[i];
    }
    __syncthreads();
    topk_sort_pairs<TOPK_SORT_THREADS>(skeys, sidx, k, p2);
    for (u32 i = threadIdx.x; i < k; i += TOPK_SORT_THREADS) {
        vals[i] = topk_value(skeys[i], flip);
        idx[i] = sidx[i];
    }
}

// Writes the `need` first of the `m` pairs at keys / idx (shared) in order
// to out_vals / out_idx, as topk_sort_pairs then a copy would, by placing
// them instead of sorting: the pairs are counted by the RADIX_BITS bits
// below their common prefix (buckets, largest digit first), scanned into
// bucket offsets, copied bucket by bucket to tkeys / tidx (shared, room
// for m), and each pair's place is its bucket's offset plus the number of
// its bucket's pairs that sort before it. Returns false, having written
// nothing, when a bucket holds more than `most` pairs (many equal keys):
// the caller sorts then. `hist` holds RADIX u32s, `scratch` THREADS + 1
// u64s. Every thread of the block calls it.
template <u32 THREADS, typename IX>
__device__ __forceinline__ bool topk_place(const KR* keys, const IX* idx, u32 m, u32 need, u32 most, KR* tkeys,
                                           IX* tidx, T* out_vals, IX* out_idx, KR flip, u32* hist, u64* scratch) {
    constexpr u32 PER = RADIX / THREADS;
    // The pairs' common prefix (one OR of each key against the first).
    if (threadIdx.x == 0) scratch[THREADS] = 0;
    for (u32 i = threadIdx.x; i < RADIX; i += THREADS) hist[i] = 0;
    __syncthreads();
    const KR ref = keys[0];
    KR diff = 0;
    for (u32 g = threadIdx.x; g < m; g += THREADS) diff |= keys[g] ^ ref;
    topk_block_or(diff, &scratch[THREADS]);
    __syncthreads();
    const u64 spread = scratch[THREADS];
    const u32 top = spread ? 64 - __clzll((long long)spread) : 0;
    const u32 shift = top > CUPRIM_RADIX_BITS ? top - CUPRIM_RADIX_BITS : 0;
    // Bucket RADIX - 1 - digit: the largest digits first.
    for (u32 g = threadIdx.x; g < m; g += THREADS) atomicAdd(&hist[RADIX - 1 - ((u32)(keys[g] >> shift) & (RADIX - 1))], 1u);
    __syncthreads();
    // Thread t owns buckets t * PER ..: their counts, then their offsets
    // (an exclusive sum over the block).
    u32 c[PER], mine = 0;
    bool big = false;
#pragma unroll
    for (u32 j = 0; j < PER; j++) {
        c[j] = hist[threadIdx.x * PER + j];
        mine += c[j];
        big |= c[j] > most;
    }
    if (__syncthreads_or(big)) return false;
    u32 off = (u32)radix_block_exclusive_u64<THREADS>(mine, scratch);
#pragma unroll
    for (u32 j = 0; j < PER; j++) {
        hist[threadIdx.x * PER + j] = off;  // the bucket's first slot
        off += c[j];
    }
    __syncthreads();
    // Bucket by bucket (any order within one): hist[b] ends as the next
    // bucket's first slot.
    for (u32 g = threadIdx.x; g < m; g += THREADS) {
        const u32 at = atomicAdd(&hist[RADIX - 1 - ((u32)(keys[g] >> shift) & (RADIX - 1))], 1u);
        tkeys[at] = keys[g];
        tidx[at] = idx[g];
    }
    __syncthreads();
    for (u32 g = threadIdx.x; g < m; g += THREADS) {
        const KR key = tkeys[g];
        const IX ix = tidx[g];
        const u32 b = RADIX - 1 - ((u32)(key >> shift) & (RADIX - 1));
        const u32 first = b ? hist[b - 1] : 0, end = hist[b];
        u32 place = first;
        for (u32 u = first; u < end; u++) place += topk_before(tkeys[u], tidx[u], key, ix);
        if (place < need) {
            out_vals[place] = topk_value(key, flip);
            out_idx[place] = ix;
        }
    }
    return true;
}

// The window's verdict, and its candidates when few: launched right after
// the filter, thread 0 checks that the k-th is among the candidates
// (winners < k <= winners + candidates, and every candidate stored: at
// most `cap`), sets the state for the first pass over them (k - winners
// still needed) if so, and writes the verdict for the host: winners,
// candidates, 1 if the window holds the k-th (else 0: the host starts over
// on the input); with a nonzero `tag` (CudaDevice::signal_to_host) all
// that is one word instead, stored as the block starts, so the host goes
// on while it selects. The block returns then unless the window holds the k-th
// among at most `max_count` candidates (at most
// CUPRIM_FINISH_ITEMS per thread, in registers: 512 threads leave room for
// 32 8-byte keys). One block of TOPK_FINISH_THREADS picks the `need` (k -
// the window's winners) first of the candidates at ckeys / cidx: the rank
// (topk_rank) finds the need-th key K; for a value (value_only) that is the
// answer, written to verdict[3] for the host. Otherwise the rank stops
// once at most max(32, the need rounded up to a power of two) candidates
// are at or above its key K; they (the need, and any more at or above K)
// are gathered to dynamic shared memory (`p2` pairs, a power of two >=
// max_count), sorted there, and the need first written, in order, to the
// outputs after the window's winners.
constexpr u32 TOPK_FINISH_THREADS = 512;

extern "C" __global__ void __launch_bounds__(TOPK_FINISH_THREADS, 1)
    cuprim_topk_finish(const KR* __restrict__ ckeys, const I* __restrict__ cidx, u32 max_count, u32 p2, u64 k,
                       T* __restrict__ out_vals, I* __restrict__ out_idx, TopkState* st, u64 cap, u64 flip64,
                       u32 value_only, u64* verdict, u64 tag) {
    __shared__ u32 hist[RADIX];
    __shared__ u64 scratch[TOPK_FINISH_THREADS + 1];
    __shared__ u64 seen[2];
    __shared__ u32 gathered;
    const KR flip = (KR)flip64;
    if (threadIdx.x == 0) {
        // The filter's counts (its writes are complete: it ran before).
        const u64 above = st->winners, count = st->cand[0];
        const bool fast = above < k && above + count >= k && count <= cap;
        if (fast) {
            st->need = k - above;
            st->src = 1;
        }
        if (tag) {
            // One aligned store (the host polls it): the tag, the count
            // (saturated; at most `cap` when it matters), fast, no winners.
            const u64 kept = count < (1ull << 40) ? count : (1ull << 40) - 1;
            *(volatile u64*)verdict = tag | kept | (u64)fast << 40 | (u64)(above == 0) << 41;
        } else {
            verdict[0] = above;
            verdict[1] = count;
            verdict[2] = fast;
        }
        seen[0] = fast && count <= max_count ? count : ~0ull;
        seen[1] = above;
    }
    __syncthreads();
    if (seen[0] == ~0ull) return;
    const u32 count = (u32)seen[0];
    const u64 above = seen[1];
    const u32 need = (u32)(k - above);
    // The keys in registers (count <= CUPRIM_FINISH_ITEMS * TOPK_FINISH_THREADS).
    KR keys[CUPRIM_FINISH_ITEMS];
#pragma unroll
    for (u32 j = 0; j < CUPRIM_FINISH_ITEMS; j++) {
        const u32 i = j * TOPK_FINISH_THREADS + threadIdx.x;
        keys[j] = i < count ? ckeys[i] : 0;
    }
    u32 rest;  // 0: every digit is resolved
    u32 enough = 32;  // a value needs every digit (0)
    while (enough < need) enough <<= 1;
    if (value_only) enough = 0;
    const KR pre = topk_rank<TOPK_FINISH_THREADS, true>(keys, count, need, 8, enough, hist, scratch, rest);
    if (value_only) {
        if (threadIdx.x == 0) verdict[3] = (u64)pre;
        return;
    }
    extern __shared__ __align__(16) unsigned char topk_smem[];
    KR* const skeys = (KR*)topk_smem;
    I* const sidx = (I*)(topk_smem + ((p2 * sizeof(KR) + 15) & ~15u));  // 16-byte aligned
    if (threadIdx.x == 0) gathered = 0;
    __syncthreads();
#pragma unroll
    for (u32 j = 0; j < CUPRIM_FINISH_ITEMS; j++) {
        if (j * TOPK_FINISH_THREADS >= count) break;  // the same for the whole block
        const u32 i = j * TOPK_FINISH_THREADS + threadIdx.x;
        const bool take = i < count && keys[j] >= pre;
        const u32 at = topk_append(take, &gathered);  // one shared atomic per warp
        if (take) {
            skeys[at] = keys[j];
            sidx[at] = (I)(j * TOPK_FINISH_THREADS) + (I)threadIdx.x;  // the candidate, for now: its index is read below
        }
    }
    __syncthreads();
    const u32 m = gathered;
    // The indices, all loads in flight at once (not one row's after another's).
#pragma unroll 1
    for (u32 g = threadIdx.x; g < m; g += TOPK_FINISH_THREADS) sidx[g] = cidx[(u32)sidx[g]];
    __syncthreads();
    u32 q = 2;
    while (q < m) q <<= 1;
    // Many pairs are placed by buckets (when the dynamic shared memory holds
    // a second copy of them), few sorted in registers.
    if (m > 256 && 2 * q <= p2 &&
        topk_place<TOPK_FINISH_THREADS>(skeys, sidx, m, need, 32, skeys + q, sidx + q, out_vals + above,
                                        out_idx + above, flip, hist, scratch))
        return;
    topk_sort_pairs<TOPK_FINISH_THREADS>(skeys, sidx, m, q);
    for (u32 i = threadIdx.x; i < need; i += blockDim.x) {
        out_vals[above + i] = topk_value(skeys[i], flip);
        out_idx[above + i] = sidx[i];
    }
}

// ---------------------------------------------------------------------------
// One block per segment: segment s is in[offsets[s] .. offsets[s + 1])
// (`offsets` null: rows of `cols`), k <= CUPRIM_SEG_KMAX and k <= its
// length; outputs s * k .. s * k + k, indices within the segment.
// The segment is read from global memory in the first pass (and from L2
// after); candidates that fit in shared memory are kept there.

typedef u32 SI;  // index within a segment

// Appends (o, i) for each flagged thread of the warp to the shared
// candidates, at `*counter` (one shared atomic per warp; past
// CUPRIM_SEG_CAND only counted).
__device__ __forceinline__ void topk_put(bool flag, KR o, SI i, KR* ckeys, SI* cidx, u32* counter) {
    const u32 at = topk_append(flag, counter);
    if (flag && at < CUPRIM_SEG_CAND) {
        ckeys[at] = o;
        cidx[at] = i;
    }
}

// One read of a segment (by the whole block, 16-byte vectors, four in
// flight per thread): its elements at or above `lo` to the shared
// candidates (counted in *counter, which starts at 0).
#if CUPRIM_TOPK_X
// The same over the expression's elements start .. start + len.
__device__ __forceinline__ void topk_segment_filter(const TopkIn& in, u64 start, u32 len, KR lo, KR flip, KR* ckeys, SI* cidx,
                                                    u32* counter) {
    constexpr int ITEMS = TOPK_VEC;
    constexpr u32 U = 4;
    const u32 m = in.template misalign<ITEMS>();
    const bool mixed = m == CUPRIM_X_MIXED;
    const cuprim_split<ITEMS> s(len, mixed || m == CUPRIM_X_ANY ? 0u : (u32)((m + start) % ITEMS));
    const u32 rounds = (u32)((s.vectors + U * CUPRIM_BLOCK - 1) / (U * CUPRIM_BLOCK));
    for (u32 r = 0; r < rounds; r++) {
        cuprim_arr<T, ITEMS> y[U];
#pragma unroll
        for (u32 u = 0; u < U; u++) {
            const u32 v = (r * U + u) * CUPRIM_BLOCK + threadIdx.x;
            if (v < s.vectors) y[u] = topk_load_n<ITEMS>(in, start + s.index(v, 0), mixed);
        }
#pragma unroll
        for (u32 u = 0; u < U; u++) {
            const u32 v = (r * U + u) * CUPRIM_BLOCK + threadIdx.x;
            const bool valid = v < s.vectors;
#pragma unroll
            for (int j = 0; j < ITEMS; j++) {
                const KR o = valid ? topk_okey(y[u].v[j], flip) : 0;
                topk_put(valid && o >= lo, o, (SI)s.index(v, j), ckeys, cidx, counter);
            }
        }
    }
    // The head and the tail: fewer than a vector each.
    const bool h = threadIdx.x < s.head;
    const KR oh = h ? topk_okey(in.load(start + threadIdx.x), flip) : 0;
    topk_put(h && oh >= lo, oh, threadIdx.x, ckeys, cidx, counter);
    const u32 t = (u32)s.tail + threadIdx.x;
    const KR ot = t < len ? topk_okey(in.load(start + t), flip) : 0;
    topk_put(t < len && ot >= lo, ot, t, ckeys, cidx, counter);
}
#else
__device__ __forceinline__ void topk_segment_filter(const T* row, u32 len, KR lo, KR flip, KR* ckeys, SI* cidx,
                                                    u32* counter) {
    constexpr int ITEMS = 16 / sizeof(T);
    constexpr u32 U = 4;
    typedef cuprim_vec<T, ITEMS> V;
    const cuprim_split<ITEMS> s(len, cuprim_misalign<ITEMS>(row));
    const V* vrow = s.body(row);
    const u32 rounds = (u32)((s.vectors + U * CUPRIM_BLOCK - 1) / (U * CUPRIM_BLOCK));
    for (u32 r = 0; r < rounds; r++) {
        V y[U];
#pragma unroll
        for (u32 u = 0; u < U; u++) {
            const u32 v = (r * U + u) * CUPRIM_BLOCK + threadIdx.x;
            if (v < s.vectors) y[u] = cuprim_load_ro(vrow + v);
        }
#pragma unroll
        for (u32 u = 0; u < U; u++) {
            const u32 v = (r * U + u) * CUPRIM_BLOCK + threadIdx.x;
            const bool valid = v < s.vectors;
#pragma unroll
            for (int j = 0; j < ITEMS; j++) {
                const KR o = valid ? topk_okey(y[u].v[j], flip) : 0;
                topk_put(valid && o >= lo, o, (SI)s.index(v, j), ckeys, cidx, counter);
            }
        }
    }
    // The head and the tail: fewer than a vector each.
    const bool h = threadIdx.x < s.head;
    const KR oh = h ? topk_okey(row[threadIdx.x], flip) : 0;
    topk_put(h && oh >= lo, oh, threadIdx.x, ckeys, cidx, counter);
    const u32 t = (u32)s.tail + threadIdx.x;
    const KR ot = t < len ? topk_okey(row[t], flip) : 0;
    topk_put(t < len && ot >= lo, ot, t, ckeys, cidx, counter);
}
#endif

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK)
    cuprim_topk_segments(TOPK_IN, const u64* __restrict__ offsets, u64 cols, u32 k,
                         T* __restrict__ out_vals, SI* __restrict__ out_idx, u64 flip64) {
    const KR flip = (KR)flip64;
    __shared__ u32 hist[RADIX];
    __shared__ u64 scratch[CUPRIM_BLOCK + 1];
    __shared__ KR ckeys[CUPRIM_SEG_CAND];
    __shared__ SI cidx[CUPRIM_SEG_CAND];
    __shared__ KR wkeys[CUPRIM_SEG_KMAX];
    __shared__ SI widx[CUPRIM_SEG_KMAX];
    __shared__ u32 counters[2];  // stored candidates, winners

    const u64 seg = blockIdx.x;
    const u64 start = offsets ? offsets[seg] : seg * cols;
    const u32 len = (u32)((offsets ? offsets[seg + 1] : start + cols) - start);
#if CUPRIM_TOPK_X
#define TOPK_ROW(i) in.load(start + (i))
#else
    const T* const row = in + start;
#define TOPK_ROW(i) row[i]
#endif

    // The running set: the elements whose digits so far equal the chosen
    // buckets. In shared memory (ckeys / cidx, `held` of them) once it fits,
    // else re-read from the segment and filtered by `pre`.
    bool in_smem = len <= CUPRIM_SEG_CAND;
    u32 held = len;
    if (in_smem) {
        for (u32 i = threadIdx.x; i < len; i += CUPRIM_BLOCK) {
            ckeys[i] = topk_okey(TOPK_ROW(i), flip);
            cidx[i] = i;
        }
    }
    // A long segment: a sampled window first, as the device-wide selection
    // does (cuprim_topk_sample, in this block, lo only): when the k-th is
    // among the elements at or above `lo` and they fit, the passes run on
    // them in shared memory, after one read of the segment.
    constexpr int SEG_SAMPLE_ITEMS = 4;
    constexpr u32 SEG_SAMPLES = SEG_SAMPLE_ITEMS * CUPRIM_BLOCK;
    if (!in_smem && len >= 2 * SEG_SAMPLES) {
        const u64 r_lo = topk_window_lo(k, len, SEG_SAMPLES);
        if (r_lo <= SEG_SAMPLES && r_lo * (len / SEG_SAMPLES) <= CUPRIM_SEG_CAND / 2) {
            const u32 stride = len / SEG_SAMPLES;
            KR keys[SEG_SAMPLE_ITEMS];
#pragma unroll
            for (int m = 0; m < SEG_SAMPLE_ITEMS; m++)
                keys[m] = topk_okey(TOPK_ROW((m * CUPRIM_BLOCK + threadIdx.x) * stride + stride / 2), flip);
            u32 rest;  // lo rounded down: the window only widens
            const KR lo = topk_rank<CUPRIM_BLOCK, true>(keys, SEG_SAMPLES, r_lo, 2, 0, hist, scratch, rest);
            if (threadIdx.x == 0) counters[0] = 0;
            __syncthreads();
#if CUPRIM_TOPK_X
            topk_segment_filter(in, start, len, lo, flip, ckeys, cidx, &counters[0]);
#else
            topk_segment_filter(row, len, lo, flip, ckeys, cidx, &counters[0]);
#endif
            __syncthreads();
            const u32 got = counters[0];
            if (got >= k && got <= CUPRIM_SEG_CAND) {
                in_smem = true;
                held = got;
            }
            __syncthreads();  // every thread has read the count before it is reset
        }
    }
    if (threadIdx.x == 0) counters[1] = 0;
    TopkPrefix pre{0, 0, 0, 0};
    TopkDigit cur{0, 0, 0};
    u32 part = 0, top = 8 * sizeof(T);  // the next digit ends below bit `top` of `part`
    u32 bucket = 0, expected = len;
    u64 need = k;
    bool whole = false;
    for (u32 pass = 0;; pass++) {
        TopkDigit next{part, 0, 0};
        if (!whole) {
            const u32 bits = top < CUPRIM_RADIX_BITS ? top : CUPRIM_RADIX_BITS;
            next = TopkDigit{part, top - bits, bits};
        }
        const bool last = !whole && part == 1 && next.shift == 0;
        const bool store = !in_smem && !whole && pass > 0 && expected <= CUPRIM_SEG_CAND;
        const bool keep = in_smem || store;  // write the staying elements to ckeys
        for (u32 i = threadIdx.x; i < RADIX; i += CUPRIM_BLOCK) hist[i] = 0;
        if (threadIdx.x == 0) counters[0] = 0;
        __syncthreads();
        const u32 count = in_smem ? held : len;
        const u32 rounds = (count + CUPRIM_BLOCK - 1) / CUPRIM_BLOCK;
        for (u32 r = 0; r < rounds; r++) {
            const u32 i = r * CUPRIM_BLOCK + threadIdx.x;
            KR okey = 0;
            SI idx = 0;
            bool win = false, stay = false;
            if (i < count) {
                if (in_smem) {
                    okey = ckeys[i];
                    idx = cidx[i];
                } else {
                    okey = topk_okey(TOPK_ROW(i), flip);
                    idx = i;
                }
                if (pass == 0) {
                    stay = true;
                } else if (in_smem || topk_alive(okey, idx, pre)) {
                    const u32 d = topk_digit(okey, idx, cur);
                    win = d > bucket || (whole && d == bucket);
                    stay = !whole && d == bucket;
                }
            }
            if (stay) atomicAdd(&hist[topk_digit(okey, idx, next)], 1u);
            if (win) {
                const u32 w = atomicAdd(&counters[1], 1u);
                wkeys[w] = okey;
                widx[w] = idx;
            }
            // Compaction in place: this round's reads are all done before
            // its writes, which land below the next round's reads.
            __syncthreads();
            if (keep && stay) {
                const u32 s = atomicAdd(&counters[0], 1u);
                ckeys[s] = okey;
                cidx[s] = idx;
            }
        }
        __syncthreads();
        if (whole) break;
        if (keep) {
            in_smem = true;
            held = counters[0];
        }
        if (pass > 0) topk_fix(pre, cur, bucket);
        u64 above, inside;
        topk_choose<u32>(hist, need, scratch, bucket, above, inside);
        need -= above;
        expected = (u32)inside;
        whole = expected == need || last;
        cur = next;
        if (next.shift == 0) {
            part = 1;
            top = 32;
        } else {
            top = next.shift;
        }
        __syncthreads();
    }
    // The k winners, largest composite first.
    u32 p2 = 1;
    while (p2 < k) p2 <<= 1;
    topk_sort_pairs<CUPRIM_BLOCK>(wkeys, widx, k, p2);
    for (u32 i = threadIdx.x; i < k; i += CUPRIM_BLOCK) {
        out_vals[seg * k + i] = topk_value(wkeys[i], flip);
        out_idx[seg * k + i] = widx[i];
    }
}

#undef TOPK_ROW

#if !CUPRIM_TOPK_X
// ---------------------------------------------------------------------------
// partial_sort's other elements: every element after the threshold (the
// k-th of the order, at tval / tidx) goes to out[pos], pos from `counter`
// (any order).
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK)
    cuprim_topk_rest(const T* __restrict__ in, u64 n, const T* __restrict__ tval, const I* __restrict__ tidx,
                     T* __restrict__ out, u64* counter, u64 flip) {
    const KR t = topk_okey(*tval, (KR)flip);
    const I ti = *tidx;
    const u64 stride = (u64)gridDim.x * CUPRIM_BLOCK;
    const u64 rounds = (n + stride - 1) / stride;
    for (u64 r = 0; r < rounds; r++) {
        const u64 i = r * stride + (u64)blockIdx.x * CUPRIM_BLOCK + threadIdx.x;
        bool after = false;
        T x{};
        if (i < n) {
            x = in[i];
            const KR o = topk_okey(x, (KR)flip);
            after = o < t || (o == t && (I)i > ti);
        }
        const u64 at = topk_append(after, counter);
        if (after) out[at] = x;
    }
}
#endif  // !CUPRIM_TOPK_X
