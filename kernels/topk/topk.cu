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
// candidates and winners).

constexpr u32 RADIX = 1u << CUPRIM_RADIX_BITS;
constexpr u32 IDX_BITS = 8 * sizeof(I);

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
// sum(hist[>= b]). Every thread gets b and sum(hist[> b]). `scratch` holds
// CUPRIM_BLOCK + 1 u64s of shared memory.
template <typename C>
__device__ __forceinline__ void topk_choose(const C* hist, u64 need, u64* scratch, u32& bucket, u64& above) {
    constexpr u32 PER = (RADIX + CUPRIM_BLOCK - 1) / CUPRIM_BLOCK;
    // Thread t owns buckets from the top: RADIX-1-t*PER down.
    u64 mine = 0;
#pragma unroll
    for (u32 j = 0; j < PER; j++) {
        const int b = (int)RADIX - 1 - (int)(threadIdx.x * PER + j);
        if (b >= 0) mine += hist[b];
    }
    scratch[threadIdx.x] = mine;
    __syncthreads();
    // Inclusive scan over threads (Hillis-Steele in shared memory: 8 rounds).
    for (u32 off = 1; off < CUPRIM_BLOCK; off <<= 1) {
        const u64 add = threadIdx.x >= off ? scratch[threadIdx.x - off] : 0;
        __syncthreads();
        scratch[threadIdx.x] += add;
        __syncthreads();
    }
    const u64 incl = scratch[threadIdx.x], excl = incl - mine;
    __syncthreads();
    if (excl < need && need <= incl) {
        u64 run = excl;
        for (u32 j = 0; j < PER; j++) {
            const int b = (int)RADIX - 1 - (int)(threadIdx.x * PER + j);
            if (b < 0) break;
            const u64 c = hist[b];
            if (run + c >= need) {
                scratch[CUPRIM_BLOCK] = (u64)b;  // the bucket
                scratch[0] = run;                // the count above it
                break;
            }
            run += c;
        }
    }
    __syncthreads();
    bucket = (u32)scratch[CUPRIM_BLOCK];
    above = scratch[0];
    __syncthreads();
}

// Appends one value per flagged thread of the warp at `*counter`: one
// atomic per warp. Returns this thread's slot (undefined when not flagged).
template <typename C> __device__ __forceinline__ C topk_append(bool flag, C* counter) {
    const u32 lanes = __ballot_sync(0xffffffffu, flag);
    if (!lanes) return 0;
    const u32 lane = threadIdx.x & 31, leader = __ffs(lanes) - 1;
    C base = 0;
    if (lane == leader) base = atomicAdd((unsigned long long*)counter, (unsigned long long)__popc(lanes));
    base = __shfl_sync(0xffffffffu, base, leader);
    return base + __popc(lanes & ((1u << lane) - 1));
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
    u64 hist[RADIX];    // the histogram of this pass, cleared for the next
};

struct TopkPass {
    TopkDigit cur;   // the digit whose bucket was chosen (unused in the first pass)
    TopkDigit next;  // the digit to histogram (unused when done)
    u32 first;       // the first pass: no filter, histogram only
    u32 last;        // `next` is the last digit selected on
    u64 flip;        // KR's all ones for the smallest, else 0
    u32 value_only;  // select_nth: no winners, every key digit fixed
    u64 k;           // picks in all
    u64 cap;         // candidate buffer capacity, elements
};

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK)
    cuprim_topk_pass(const T* __restrict__ in, u64 n, KR* __restrict__ ckeys, I* __restrict__ cidx,
                     T* __restrict__ out_vals, I* __restrict__ out_idx, TopkState* st, u32* ticket, TopkPass ps) {
    __shared__ u32 hist[RADIX];
    __shared__ u64 totals[RADIX];
    __shared__ u64 scratch[CUPRIM_BLOCK + 1];
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

    const u64 stride = (u64)gridDim.x * CUPRIM_BLOCK;
    // Whole warps run the loop together (topk_append is warp-wide).
    const u64 rounds = (count + stride - 1) / stride;
    for (u64 r = 0; r < rounds; r++) {
        const u64 i = r * stride + (u64)blockIdx.x * CUPRIM_BLOCK + threadIdx.x;
        const bool valid = i < count;
        KR okey = 0;
        I idx = 0;
        if (valid) {
            if (src == 0) {
                okey = topk_okey(in[i], (KR)ps.flip);
                idx = (I)i;
            } else {
                okey = skeys[i];
                idx = sidx[i];
            }
        }
        bool win = false, stay = false;
        if (valid) {
            if (ps.first) {
                stay = true;
            } else if (topk_alive(okey, idx, pre)) {
                const u32 d = topk_digit(okey, idx, ps.cur);
                win = d > bucket || (done && d == bucket);
                stay = !done && d == bucket;
            }
        }
        if (stay) atomicAdd(&hist[topk_digit(okey, idx, ps.next)], 1u);
        if (!ps.value_only) {
            const u64 w = topk_append(win, &st->winners);
            if (win) {
                out_vals[w] = topk_value(okey, (KR)ps.flip);
                out_idx[w] = idx;
            }
        }
        if (store) {
            const u64 s = topk_append(stay, &st->cand[dst]);
            if (stay) {
                dkeys[s] = okey;
                didx[s] = idx;
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
    const u64 need = ps.first ? ps.k : st->need;
    u32 b;
    u64 above;
    topk_choose<u64>(totals, need, scratch, b, above);
    if (threadIdx.x == 0) {
        TopkPrefix p = pre;
        if (!ps.first) topk_fix(p, ps.cur, bucket);
        st->prefix = p;
        st->need = need - above;
        st->alive = totals[b];
        st->bucket = b;
        st->done = (!ps.value_only && totals[b] == need - above) || ps.last;
        st->key = p.kpre | (ps.next.part == 0 ? (u64)b << ps.next.shift : 0);
        // The alive set is where this pass stored it, or else the input;
        // the buffer not holding it is empty for the next pass to fill.
        st->src = store ? dst + 1 : 0;
        st->cand[dst ^ 1] = 0;
        if (!store) st->cand[dst] = 0;
    }
}

// ---------------------------------------------------------------------------
// Sorting the k winners in one block: composites in shared memory, bitonic.

template <typename IX> __device__ __forceinline__ bool topk_before(KR ka, IX ia, KR kb, IX ib) {
    return ka > kb || (ka == kb && ia < ib);
}

// Sorts `m` (okey, idx) pairs of shared memory, largest composite first;
// `p2` is a power of two >= m; slots m..p2 must hold the smallest pair.
template <typename IX> __device__ __forceinline__ void topk_bitonic(KR* keys, IX* idx, u32 p2) {
    for (u32 size = 2; size <= p2; size <<= 1) {
        for (u32 stride = size >> 1; stride > 0; stride >>= 1) {
            for (u32 t = threadIdx.x; t < p2 / 2; t += CUPRIM_BLOCK) {
                const u32 lo = 2 * t - (t & (stride - 1)), hi = lo + stride;
                const bool up = (lo & size) == 0;  // this run sorts largest first
                const KR ka = keys[lo], kb = keys[hi];
                const IX ia = idx[lo], ib = idx[hi];
                if (topk_before(kb, ib, ka, ia) == up) {
                    keys[lo] = kb;
                    keys[hi] = ka;
                    idx[lo] = ib;
                    idx[hi] = ia;
                }
            }
            __syncthreads();
        }
    }
}

// Sorts the k winners of the device-wide selection in place (k <= the
// dynamic shared memory's pairs).
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK)
    cuprim_topk_sort_small(T* __restrict__ vals, I* __restrict__ idx, u32 k, u32 p2, u64 flip64) {
    const KR flip = (KR)flip64;
    extern __shared__ __align__(16) unsigned char topk_smem[];
    KR* const skeys = (KR*)topk_smem;
    I* const sidx = (I*)(topk_smem + ((p2 * sizeof(KR) + 15) & ~15u));  // 16-byte aligned
    for (u32 i = threadIdx.x; i < p2; i += CUPRIM_BLOCK) {
        skeys[i] = i < k ? topk_okey(vals[i], flip) : (KR)0;
        sidx[i] = i < k ? idx[i] : (I)~(I)0;
    }
    __syncthreads();
    topk_bitonic(skeys, sidx, p2);
    for (u32 i = threadIdx.x; i < k; i += CUPRIM_BLOCK) {
        vals[i] = topk_value(skeys[i], flip);
        idx[i] = sidx[i];
    }
}

// ---------------------------------------------------------------------------
// One block per segment: segment s is in[offsets[s] .. offsets[s + 1])
// (`offsets` null: rows of `cols`), k <= CUPRIM_SEG_KMAX and k <= its
// length; outputs s * k .. s * k + k, indices within the segment.
// The segment is read from global memory in the first pass (and from L2
// after); candidates that fit in shared memory are kept there.

typedef u32 SI;  // index within a segment

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK)
    cuprim_topk_segments(const T* __restrict__ in, const u64* __restrict__ offsets, u64 cols, u32 k,
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
    const T* const row = in + start;

    // The running set: the elements whose digits so far equal the chosen
    // buckets. In shared memory (ckeys / cidx, `held` of them) once it fits,
    // else re-read from the segment and filtered by `pre`.
    bool in_smem = len <= CUPRIM_SEG_CAND;
    u32 held = len;
    if (in_smem) {
        for (u32 i = threadIdx.x; i < len; i += CUPRIM_BLOCK) {
            ckeys[i] = topk_okey(row[i], flip);
            cidx[i] = i;
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
                    okey = topk_okey(row[i], flip);
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
        u64 above;
        topk_choose<u32>(hist, need, scratch, bucket, above);
        need -= above;
        expected = hist[bucket];
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
    for (u32 i = k + threadIdx.x; i < p2; i += CUPRIM_BLOCK) {
        wkeys[i] = 0;
        widx[i] = ~(SI)0;
    }
    __syncthreads();
    topk_bitonic(wkeys, widx, p2);
    for (u32 i = threadIdx.x; i < k; i += CUPRIM_BLOCK) {
        out_vals[seg * k + i] = topk_value(wkeys[i], flip);
        out_idx[seg * k + i] = widx[i];
    }
}

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
