// Segmented reduction over offsets, in one pass: segmented_reduce and
// segmented_min_element / segmented_max_element. Two kernels: the block-tile
// kernel with a look-back (cuprim_segmented_reduce, described first) and the
// warp-tile kernel (cuprim_segmented_reduce_warp, at the end); the host
// takes the warp-tile one unless the segments average 2^27 elements or more.
//
// Segment s is in[offsets[s] .. offsets[s+1]). The work is split evenly over
// the ELEMENTS, whatever the segments look like: tile t is elements
// [t * TILE, (t+1) * TILE), each thread CUPRIM_ITEMS consecutive elements
// read with 16-byte loads. Every offset value is a "boundary": the running
// fold restarts there, and the segment that ends there (the first index j
// with offsets[j] == p, j >= 1, is the one non-empty segment j - 1 ending at
// p) is written by the thread that holds its last element, p - 1.
//
//   1. Warps 0 and 1 find the tile's range of offsets ([lo, hi): the
//      offsets in [tile start, tile end]) with a 32-way warp search whose
//      first probe is the 32 offsets around where evenly growing offsets
//      would put the key (equal segments: one round of loads); each
//      thread binary-searches its own first boundary in that range. A
//      thread with boundaries at most before its first element and after
//      its last (every thread, with segments longer than its items) folds
//      its elements in one plain loop; the others walk them, skipping runs
//      of equal offsets (empty segments) by galloping. A segment that
//      starts and ends inside the thread is written at once; the first one
//      to end in the thread, if it started before the thread (the "head"),
//      waits for the carry.
//   2. The threads' (restarted?, fold since the last restart) pairs are
//      scanned across the block with (ha, a) . (hb, b) = (ha | hb, hb ? b :
//      a op b) (as scan_by_key), and across tiles by the decoupled look-back
//      (block/lookback.cuh). A tile holding a boundary already knows its
//      inclusive value, so it publishes it as a PREFIX at once: look-backs
//      cross only the tiles inside one long segment. A tile looks back only
//      if it holds no boundary (its successors may need it) or its first
//      head needs what came before it.
//   3. The heads are written: carry op head.
//   4. Each block takes an even share of the SEGMENTS too (`per` of them,
//      while its element loads are in flight): it writes the identity to
//      its empty segments and checks its offsets (each pair non-decreasing,
//      each <= n), storing 1 to *error_flag on a bad one. So a
//      million empty segments beside a huge one cost a million writes spread
//      over the grid, and bad offsets are reported, never followed: every
//      read stays below n (elements) and segments + 1 (offsets), every write
//      below segments.
//
// Order is kept throughout (non-commutative monoids work), and the combine
// order depends only on n, the offsets and the tile shape: float results are
// the same bits every run (the look-back runs in its deterministic mode).
// Bytes: the elements read once, each offset about twice, each result
// written once.
//
// Specialised on: In (the input expression, block/expr.cuh; a buffer is
// cuprim_x_buf and keeps its 16-byte loads), T (its element), I (offset index: u32 or u64), A (accumulator),
// O (the result's element: A, or T for the arg-extremes),
// MapFn (A apply(T x, u64 i), i the element's position in the input),
// ReduceOp (A apply(A, A), A identity()),
// CUPRIM_ARG (0: out[s] = fold; 1: A is cuprim_kv<T>, out[s] its value and
// out_idx[s] its index within the segment, I's maximum when empty),
// CUPRIM_FROM_START (1: A is a position in the input, I; out[s] is made
// relative to the segment's start, the identity kept),
// CUPRIM_BLOCK, CUPRIM_ITEMS, CUPRIM_MIN_BLOCKS, CUPRIM_DETERMINISTIC,
// CUPRIM_LOOKBACK_WINDOWS.

constexpr int SR_WARPS = CUPRIM_BLOCK / 32;
constexpr int SR_VEC = sizeof(T) >= 16 ? 1 : 16 / sizeof(T);
constexpr u64 SR_TILE = (u64)CUPRIM_BLOCK * CUPRIM_ITEMS;
static_assert(CUPRIM_ITEMS % SR_VEC == 0, "a thread's items must be whole 16-byte vectors");
static_assert(SR_WARPS >= 2, "two warps search the tile's offsets");
typedef cuprim_vec<T, SR_VEC> SrVec;

struct SegPair {
    A v;
    u32 head;
};

// The deterministic look-back's canonical form of a pair: one NaN for every
// NaN an arithmetic operator may produce. The arg-extremes only select, so
// their values are input bits already.
template <typename Acc> __device__ __forceinline__ Acc sr_settle(const Acc& v) {
    if constexpr (CUPRIM_ARG) {
        return v;
    } else {
        return cuprim_canonical_nan(v);
    }
}
__device__ __forceinline__ SegPair lookback_settle(const SegPair& p) {
    SegPair r = p;
    r.v = sr_settle(p.v);
    return r;
}

struct SegOp {
    __device__ __forceinline__ static SegPair apply(const SegPair& a, const SegPair& b) {
        SegPair r;
        r.head = a.head | b.head;
        r.v = b.head ? b.v : ReduceOp::apply(a.v, b.v);
        return r;
    }
    __device__ __forceinline__ static SegPair identity() {
        SegPair r;
        r.v = ReduceOp::identity();
        r.head = 0;
        return r;
    }
};

// Offsets as u64, through the read-only path (no thread writes them).
__device__ __forceinline__ u64 sr_offset(const I* offsets, u64 j) {
    return (u64)cuprim_load_ro(offsets + j);
}

// Called by all 32 lanes of a warp: the first j in [lo, hi) with
// offsets[j] >= key (UPPER: > key), or hi. Each round probes 32 evenly
// spaced offsets and keeps the 1/32 of the range between the last probe
// below the key and the first one not below. On unsorted (bad) offsets the
// answer is still in [lo, hi].
template <bool UPPER> __device__ __forceinline__ u64 sr_warp_search(const I* offsets, u64 lo, u64 hi, u64 key) {
    const u32 lane = threadIdx.x & 31;
    while (hi - lo > 32) {
        const u64 span = hi - lo;
        const u64 q = lo + (lane + 1) * span / 32 - 1;
        const u64 v = sr_offset(offsets, q);
        const u32 c = __popc(__ballot_sync(0xffffffffu, UPPER ? v <= key : v < key));
        const u64 new_lo = lo + c * span / 32;
        hi = c == 32 ? hi : lo + (c + 1) * span / 32 - 1;
        lo = new_lo;
    }
    const u64 j = lo + lane;
    const bool before = j < hi && (UPPER ? sr_offset(offsets, j) <= key : sr_offset(offsets, j) < key);
    return lo + __popc(__ballot_sync(0xffffffffu, before));
}

// Called by all 32 lanes of a warp: as sr_warp_search over all the
// offsets ([0, segments + 1)), starting with one probe of the 32 offsets
// around `guess`: where the offsets grow about evenly (equal segments) the
// answer is there and the search is one round of loads, else the probe
// narrows the range for sr_warp_search.
template <bool UPPER> __device__ __forceinline__ u64 sr_warp_find(const I* offsets, u64 segments, u64 key, u64 guess) {
    const u32 lane = threadIdx.x & 31;
    const u64 end = segments + 1;
    u64 w0 = guess >= 16 ? guess - 16 : 0;
    if (end >= 32 && w0 > end - 32) w0 = end - 32;
    if (end < 32) w0 = 0;
    const u64 w1 = w0 + 32 < end ? w0 + 32 : end;
    const u64 j = w0 + lane;
    const bool below = j < w1 && (UPPER ? sr_offset(offsets, j) <= key : sr_offset(offsets, j) < key);
    const u32 c = __popc(__ballot_sync(0xffffffffu, below));
    if (c == 0 && w0 > 0) return sr_warp_search<UPPER>(offsets, 0, w0, key);
    if (c == w1 - w0 && w1 < end) return sr_warp_search<UPPER>(offsets, w1, end, key);
    return w0 + c;
}

// Where `key` (at most n) falls among the offsets if they grow evenly
// (scale = segments / n, from the host: no division here).
__device__ __forceinline__ u64 sr_guess(u64 key, double scale, u64 segments) {
    const u64 g = (u64)((double)key * scale);
    return g < segments ? g : segments;
}

// offsets[j] == p: the first index after j whose offset is not p (the end
// of a run of empty segments), by galloping then bisection; at most
// `last` + 1 (= segments + 1). Out of line: it runs once per run of two or
// more equal offsets, and the walk below would otherwise repeat it per item.
__device__ __noinline__ u64 sr_skip_run(const I* offsets, u64 j, u64 last, u64 p) {
    u64 step = 1;
    while (j + step <= last && sr_offset(offsets, j + step) == p) {
        j += step;
        step *= 2;
    }
    u64 hi = j + step <= last ? j + step : last + 1;  // offsets[hi] != p (or past the end)
    while (hi - j > 1) {
        const u64 m = j + (hi - j) / 2;
        if (sr_offset(offsets, m) == p)
            j = m;
        else
            hi = m;
    }
    return hi;
}

// Writes segment s's result: acc (whose index, for the arg-extremes, is
// made relative to the segment's start; with CUPRIM_FROM_START acc is a
// position, made relative the same way unless it is the identity: none).
// (Templates, so that the branch not taken is not compiled.)
template <typename Acc>
__device__ __forceinline__ void sr_emit(O* out, I* out_idx, const I* offsets, u64 s, const Acc& acc) {
    if constexpr (CUPRIM_ARG) {
        out[s] = acc.v;
        out_idx[s] = (I)(acc.i - sr_offset(offsets, s));
    } else if constexpr (CUPRIM_FROM_START) {
        out[s] = acc == ReduceOp::identity() ? acc : (O)(acc - sr_offset(offsets, s));
    } else {
        out[s] = acc;
    }
}

template <typename Acc> __device__ __forceinline__ void sr_emit_empty(O* out, I* out_idx, u64 s) {
    const Acc id = ReduceOp::identity();
    if constexpr (CUPRIM_ARG) {
        out[s] = id.v;
        out_idx[s] = (I)~0ull;
    } else {
        out[s] = id;
    }
}

// 4. Tile `tile`'s even share of the segments: empty ones get the
// identity; every pair is checked (a bad one sets *error_flag with a plain
// store: the flag may be page-locked host memory, and every writer stores
// the same value).
template <int BLOCK = CUPRIM_BLOCK>
__device__ __forceinline__ void sr_share(const I* offsets, u64 n, u64 segments, O* out, I* out_idx, u32* error_flag,
                                         u32 tile, u64 per) {
    const u64 s_begin = (u64)tile * per < segments ? (u64)tile * per : segments;
    const u64 s_end = segments - s_begin < per ? segments : s_begin + per;
    bool bad = false;
    for (u64 s = s_begin + threadIdx.x; s < s_end; s += BLOCK) {
        const u64 lo = sr_offset(offsets, s), hi = sr_offset(offsets, s + 1);
        bad |= hi < lo || hi > n;
        if (hi <= lo) sr_emit_empty<A>(out, out_idx, s);
    }
    if (bad) *(volatile u32*)error_flag = 2u;  // 1u: a permuted input's bad index (block/expr.cuh)
}

// A thread's ITEMS elements from a (the count that exist; T() past
// them): a buffer with 16-byte loads where aligned, an expression with its
// vector loads where its buffers are at a vector boundary at element a,
// else one element per load.
template <int ITEMS, typename X> __device__ __forceinline__ void sr_load(const X& in, u64 a, int count, T (&x)[ITEMS]) {
    if constexpr (X::IS_BUF) {
        if (count == ITEMS && cuprim_aligned_to<SrVec>(in.p + a)) {
            const SrVec* vin = (const SrVec*)(in.p + a);
#pragma unroll
            for (int q = 0; q < ITEMS / SR_VEC; q++) {
                const SrVec v = cuprim_load_ro(vin + q);
#pragma unroll
                for (int k = 0; k < SR_VEC; k++) x[q * SR_VEC + k] = v.v[k];
            }
        } else {
#pragma unroll
            for (int k = 0; k < ITEMS; k++) x[k] = k < count ? cuprim_load_ro(in.p + a + k) : T();
        }
    } else {
        // An expression: its vector loads where its buffers are at a
        // vector boundary at element a, else one element per load.
        constexpr int XV = cuprim_x_items<X>();
        const u32 m = in.template misalign<XV>();
        if (ITEMS % XV == 0 && count == ITEMS && (m == CUPRIM_X_ANY || (m != CUPRIM_X_MIXED && (a + m) % XV == 0))) {
#pragma unroll
            for (int q = 0; q < ITEMS / XV; q++) {
                const cuprim_arr<T, XV> v = in.template load_n<XV>(a + (u64)q * XV);
#pragma unroll
                for (int k = 0; k < XV; k++) x[q * XV + k] = v.v[k];
            }
        } else {
#pragma unroll
            for (int k = 0; k < ITEMS; k++) x[k] = k < count ? in.load(a + k) : T();
        }
    }
}

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_segmented_reduce(CUPRIM_INPUT In in, u64 n, const I* __restrict__ offsets, u64 segments,
                            O* __restrict__ out, I* __restrict__ out_idx, u32* error_flag, u32* status,
                            SegPair* aggregates, SegPair* prefixes, u32* tile_counter, u32 num_tiles, u64 per,
                            double scale) {
    __shared__ SegPair warp_totals[SR_WARPS];
    __shared__ SegPair staged[CUPRIM_DETERMINISTIC ? 32 * LOOKBACK_WINDOWS : 1];
    __shared__ SegPair s_prefix;
    __shared__ u64 s_range[2];
    __shared__ u32 s_tile;

    const u32 tile = scan_take_tile(tile_counter, num_tiles, &s_tile);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u64 base = (u64)tile * SR_TILE;

    // Tiles past the elements exist only for the segment share (step 4);
    // they come last, so no tile with elements looks back at them.
    if (base < n || tile == 0) {
        const u64 a = base + (u64)threadIdx.x * CUPRIM_ITEMS;
        const int count = a < n ? (n - a < (u64)CUPRIM_ITEMS ? (int)(n - a) : CUPRIM_ITEMS) : 0;

        // The thread's elements, issued before the searches so the loads are in flight meanwhile.
        T x[CUPRIM_ITEMS];
        sr_load<CUPRIM_ITEMS>(in, a, count, x);

        // 1. The tile's offsets: [lo, hi) hold every offset in [base, tile end].
        const u64 tile_end = n - base < SR_TILE ? n : base + SR_TILE;
        if (warp == 0) {
            const u64 lo = sr_warp_find<false>(offsets, segments, base, sr_guess(base, scale, segments));
            if (lane == 0) s_range[0] = lo;
        } else if (warp == 1) {
            const u64 hi = sr_warp_find<true>(offsets, segments, tile_end, sr_guess(tile_end, scale, segments));
            if (lane == 0) s_range[1] = hi;
        }
        __syncthreads();
        // Its loads overlap the element loads' wait.
        sr_share(offsets, n, segments, out, out_idx, error_flag, tile, per);

        // The walk: positions p = a .. a + count. A boundary at p < a + count
        // restarts the fold at element p; one at p > a ends segment j - 1 at
        // element p - 1.
        bool restarted = false, has_head = false;
        u64 head_seg = 0;
        A run = ReduceOp::identity(), head_val = ReduceOp::identity();
        if (count > 0) {
            u64 lo = s_range[0], hi = s_range[1] > s_range[0] ? s_range[1] : s_range[0];
            while (lo < hi) {  // first j with offsets[j] >= a
                const u64 m = lo + (hi - lo) / 2;
                if (sr_offset(offsets, m) < a)
                    lo = m + 1;
                else
                    hi = m;
            }
            u64 j = lo;
            u64 next = j <= segments ? sr_offset(offsets, j) : ~0ull;
            // The common case: boundaries at most at the thread's first
            // element and after its last. Then the elements are one plain
            // fold (the same order as the walk below).
            u64 j1 = j, next1 = next;
            const bool at_start = next == a;
            if (at_start) {
                j1++;
                next1 = j1 <= segments ? sr_offset(offsets, j1) : ~0ull;
                if (next1 == a) {
                    j1 = sr_skip_run(offsets, j1, segments, a);
                    next1 = j1 <= segments ? sr_offset(offsets, j1) : ~0ull;
                }
            }
            if (next1 >= a + count) {
                restarted = at_start;
                run = MapFn::apply(x[0], a);
#pragma unroll
                for (int k = 1; k < CUPRIM_ITEMS; k++)
                    if (k < count) run = ReduceOp::apply(run, MapFn::apply(x[k], a + k));
                // A segment that ends at the thread's last element (j1 is the
                // first offset equal to a + count: that segment is j1 - 1).
                if (next1 == a + count && j1 >= 1) {
                    if (restarted) {
                        sr_emit(out, out_idx, offsets, j1 - 1, run);
                    } else {
                        has_head = true;
                        head_seg = j1 - 1;
                        head_val = run;
                    }
                }
            } else {
                bool fresh = true;
#pragma unroll
                for (int k = 0; k <= CUPRIM_ITEMS; k++) {
                    if (k > count) break;
                    const u64 p = a + k;
                    if (next == p) {
                        if (k > 0 && j >= 1) {
                            if (restarted) {
                                sr_emit(out, out_idx, offsets, j - 1, run);
                            } else {
                                has_head = true;
                                head_seg = j - 1;
                                head_val = run;
                            }
                        }
                        if (k < count) {
                            restarted = true;
                            fresh = true;
                        }
                        j++;
                        next = j <= segments ? sr_offset(offsets, j) : ~0ull;
                        if (next == p) {
                            j = sr_skip_run(offsets, j, segments, p);
                            next = j <= segments ? sr_offset(offsets, j) : ~0ull;
                        }
                    }
                    if (k < count) {
                        const A y = MapFn::apply(x[k], p);
                        run = fresh ? y : ReduceOp::apply(run, y);
                        fresh = false;
                    }
                }
            }
        }

        // 2. Block scan of the threads' pairs (exclusive: `before`), the tile's total.
        SegPair mine;
        mine.v = run;
        mine.head = restarted ? 1u : 0u;
        const SegPair incl = warp_inclusive_scan<SegPair, SegOp>(mine);
        if (lane == 31) warp_totals[warp] = incl;
        const SegPair before_in_warp = cuprim_shfl_up(incl, 1);
        __syncthreads();
        if (warp == 0) {
            const SegPair w = warp_inclusive_scan<SegPair, SegOp>(lane < SR_WARPS ? warp_totals[lane] : SegOp::identity());
            if (lane < SR_WARPS) warp_totals[lane] = w;  // now inclusive
        }
        __syncthreads();
        bool has_before = false;
        SegPair before;
        if (warp > 0) {
            before = warp_totals[warp - 1];
            has_before = true;
        }
        if (lane > 0) {
            before = has_before ? SegOp::apply(before, before_in_warp) : before_in_warp;
            has_before = true;
        }
        // A head whose carry reaches back past the tile's start.
        const bool needs_prefix = has_head && !(has_before && before.head);
        const bool tile_needs = __syncthreads_or(needs_prefix) != 0;

        // The tile's look-back (warp 0).
        const SegPair total = warp_totals[SR_WARPS - 1];
        const bool looks_back = tile > 0 && (tile_needs || !total.head);
        if (warp == 0) {
            TileState<SegPair> state(status, aggregates, prefixes);
            if (tile == 0 || total.head) {
                if (lane == 0) state.publish(tile, CUPRIM_DETERMINISTIC ? lookback_settle(total) : total, SCAN_PREFIX);
            } else if (lane == 0) {
                state.publish(tile, total, SCAN_AGGREGATE);
            }
            if (looks_back) {
                __syncwarp();
                const SegPair p = lookback_exclusive_prefix<SegPair, SegOp, CUPRIM_DETERMINISTIC>(state, tile, total, staged);
                if (lane == 0) s_prefix = p;
            }
        }
        if (looks_back) __syncthreads();

        // 3. The heads: what came before them, then their own part.
        if (has_head) {
            bool have = false;
            A carry = ReduceOp::identity();
            if (has_before && before.head) {
                carry = before.v;
                have = true;
            } else {
                if (looks_back) {
                    carry = s_prefix.v;
                    have = true;
                }
                if (has_before) {
                    carry = have ? ReduceOp::apply(carry, before.v) : before.v;
                    have = true;
                }
            }
            sr_emit(out, out_idx, offsets, head_seg, have ? ReduceOp::apply(carry, head_val) : head_val);
        }
    } else {
        sr_share(offsets, n, segments, out, out_idx, error_flag, tile, per);
    }
}

// ---------------------------------------------------------------------------
// The warp-tile kernel (cuprim_segmented_reduce_warp): the same walk over
// warp-sized tiles with no block barrier, no tile ticket and no look-back.
//
// Warp tile w is elements [w * SR_WTILE, (w+1) * SR_WTILE) (32 lanes of
// CUPRIM_WARP_ITEMS; a whole, aligned tile of a buffer is read coalesced and
// handed to the lanes through shared memory, see sr_wstage),
// w = blockIdx.x * SR_WARP_WARPS + warp. One warp search (a probe
// around the guess, both keys from the same 32 offsets when they fall in it)
// gives the tile's offsets [lo, hi); the lanes walk their items as above; a
// warp scan of the (restarted?, fold) pairs closes every segment that starts
// and ends in the tile. A segment crossing tiles, from tile t0 (its start)
// to tile t1 (its last element), has PARTS: t0's tail (the fold from its
// start to t0's end), each tile between (its whole fold) and t1's head (the
// fold from t1's start to the segment's end). Each of those tiles stores its
// part (tails in `parts_tail`, heads in `parts_head`, by tile), fences and
// adds one to counters[t1]; the tile whose add completes the count
// t1 - t0 + 1 folds the parts in tile order (lane l folds a fixed chunk, then
// an ordered tree over the lanes: the grouping depends only on t1 - t0) and
// writes the segment. Nobody waits on anybody, so no ticket is needed; every
// tile knows t0 and t1 from the offsets around it. The counters are words
// the device keeps zeroed between launches: the arrival that completes a
// count clears it (the host clears them all after bad offsets, which may
// leave a count short). Each block also does its even share of the segments
// (sr_share).
//
// A fold over m parts costs about m / (32 * SR_FOLD_UNROLL) rounds of loads
// for the one warp that does it: the host sends inputs whose segments are
// few and huge (a long chain of parts) to the look-back kernel above.

constexpr int SR_WITEMS = CUPRIM_WARP_ITEMS;
static_assert(SR_WITEMS % SR_VEC == 0, "a lane's items must be whole 16-byte vectors");
constexpr u64 SR_WTILE = 32ull * SR_WITEMS;
constexpr int SR_WARP_WARPS = CUPRIM_WARP_BLOCK / 32;
constexpr int SR_FOLD_UNROLL = sizeof(SegPair) <= 8 ? 16 : (sizeof(SegPair) <= 16 ? 8 : 4);

// Called by all 32 lanes: lo = the first j in [l, h) with offsets[j] >= kb
// and hi = the first j with offsets[j] > kt (kt >= kb; either one h if
// none), with the same probes while both keys fall in the same 32nd of the
// range (a warp tile's two keys are close: usually to the last round).
__device__ __forceinline__ void sr_warp_search2(const I* offsets, u64 l, u64 h, u64 kb, u64 kt, u64& lo, u64& hi) {
    const u32 lane = threadIdx.x & 31;
    while (h - l > 32) {
        const u64 span = h - l;
        const u64 v = sr_offset(offsets, l + (lane + 1) * span / 32 - 1);
        const u32 cb = __popc(__ballot_sync(0xffffffffu, v < kb));
        const u32 ct = __popc(__ballot_sync(0xffffffffu, v <= kt));
        if (cb != ct) {
            lo = sr_warp_search<false>(offsets, l + cb * span / 32, cb == 32 ? h : l + (cb + 1) * span / 32 - 1, kb);
            hi = sr_warp_search<true>(offsets, l + ct * span / 32, ct == 32 ? h : l + (ct + 1) * span / 32 - 1, kt);
            return;
        }
        const u64 nl = l + cb * span / 32;
        h = cb == 32 ? h : l + (cb + 1) * span / 32 - 1;
        l = nl;
    }
    const u64 j = l + lane;
    const u64 v = j < h ? sr_offset(offsets, j) : 0;
    lo = l + __popc(__ballot_sync(0xffffffffu, j < h && v < kb));
    hi = l + __popc(__ballot_sync(0xffffffffu, j < h && v <= kt));
}

// Called by all 32 lanes: lo = the first j with offsets[j] >= base, hi = the
// first j with offsets[j] > te (te >= base), from one probe of the 32
// offsets around `guess` when both fall in it, else warp searches (one
// search for both when both fall on the same side of it).
// The probed offsets stay in the lanes (lane i: offsets[w0 + i], for
// w0 + i < w1) for the lanes' own look-ups.
__device__ __forceinline__ void sr_warp_range(const I* offsets, u64 segments, u64 base, u64 te, u64 guess, u64& lo,
                                              u64& hi, u64& w0, u64& w1, u64& v) {
    const u32 lane = threadIdx.x & 31;
    const u64 end = segments + 1;
    w0 = guess >= 16 ? guess - 16 : 0;
    if (end >= 32 && w0 > end - 32) w0 = end - 32;
    if (end < 32) w0 = 0;
    w1 = w0 + 32 < end ? w0 + 32 : end;
    const u64 j = w0 + lane;
    v = j < w1 ? sr_offset(offsets, j) : 0;
    const u32 c_lo = __popc(__ballot_sync(0xffffffffu, j < w1 && v < base));
    const u32 c_hi = __popc(__ballot_sync(0xffffffffu, j < w1 && v <= te));
    const u64 width = w1 - w0;
    const bool lo_left = c_lo == 0 && w0 > 0, lo_right = c_lo == width && w1 < end;
    const bool hi_left = c_hi == 0 && w0 > 0, hi_right = c_hi == width && w1 < end;
    if (lo_left && hi_left) {
        sr_warp_search2(offsets, 0, w0, base, te, lo, hi);
    } else if (lo_right && hi_right) {
        sr_warp_search2(offsets, w1, end, base, te, lo, hi);
    } else {
        if (lo_left)
            lo = sr_warp_search<false>(offsets, 0, w0, base);
        else if (lo_right)
            lo = sr_warp_search<false>(offsets, w1, end, base);
        else
            lo = w0 + c_lo;
        if (hi_left)
            hi = sr_warp_search<true>(offsets, lo < w0 ? lo : w0, w0, te);
        else if (hi_right)
            hi = sr_warp_search<true>(offsets, lo > w1 ? lo : w1, end, te);
        else
            hi = w0 + c_hi;
    }
    if (hi < lo) hi = lo;  // bad offsets only
}

// One arrival at counters[t1] after storing `part` at *slot; true for the
// arrival that completes `expected`, which clears the counter again (every
// arrival has come: the counters stay zero between launches).
// (Parts are stored as SegPairs: whole 4-byte words for any A.)
__device__ __forceinline__ bool sr_arrive(SegPair* slot, const A& part, u32* counters, u64 t1, u64 expected) {
    SegPair w;
    w.v = part;
    w.head = 0;
    cuprim_store_words(slot, w);
    __threadfence();
    const u32 old = atomicAdd(counters + t1, 1u);
    const bool last = (u64)old + 1 == expected;
    if (last) counters[t1] = 0;
    return last;
}

// Called by all 32 lanes of the tile that completed segment `seg`'s count:
// folds parts_tail[t0 .. t1) and parts_head[t1] in tile order and writes it.
__device__ __forceinline__ void sr_finish(const SegPair* parts_tail, const SegPair* parts_head, u64 t0, u64 t1, u64 seg, O* out,
                                          I* out_idx, const I* offsets) {
    const int lane = threadIdx.x & 31;
    __threadfence();
    const u64 m = t1 - t0;
    const u64 chunk = (m + 31) / 32;
    const u64 b = t0 + (u64)lane * chunk < t1 ? t0 + (u64)lane * chunk : t1;
    const u64 e = t1 - b < chunk ? t1 : b + chunk;
    A v = ReduceOp::identity();
    for (u64 t = b; t < e; t += SR_FOLD_UNROLL) {
        A p[SR_FOLD_UNROLL];
#pragma unroll
        for (int k = 0; k < SR_FOLD_UNROLL; k++)
            if (t + k < e) p[k] = cuprim_load_cg(parts_tail + t + k).v;
#pragma unroll
        for (int k = 0; k < SR_FOLD_UNROLL; k++)
            if (t + k < e) v = ReduceOp::apply(v, p[k]);
    }
    v = cuprim_warp_reduce_ordered<A, ReduceOp>(v);
    if (lane == 0) sr_emit(out, out_idx, offsets, seg, ReduceOp::apply(v, cuprim_load_cg(parts_head + t1).v));
}

// Every warp tile goes through the warp's stage in shared memory. Lane l
// walks the consecutive items l * SR_WITEMS .., but reading them so would
// make each 16-byte load of the warp touch 32 lines (the L1 wavefront rate,
// not DRAM, then bounds the kernel: ncu 93% L1 at 2^28), so the tile is read
// coalesced, vector q * 32 + l by lane l, into the stage, where lane l's
// items are its vectors l * SR_WVECS ... A whole, aligned tile of a buffer
// goes there by cp.async: no register holds the tile, so the kernel fits in
// few registers and more warps keep loads in flight. The stage's vector
// index is XOR-swizzled so that both the coalesced stores and the lanes' own
// reads are free of bank conflicts. (H100, f32 at 2^28, one call: the
// coalesced stage took segments of 1024 to 364 / 360 us against 397, the
// mixture 488 / 484 against 563; ncu L1 41%.)
constexpr int SR_WVECS = SR_WITEMS / SR_VEC;
constexpr bool SR_WPOW2 = (SR_WVECS & (SR_WVECS - 1)) == 0;
__device__ __forceinline__ u32 sr_swizzle(u32 v) {
    if constexpr (!SR_WPOW2) {
        return v;
    } else if constexpr (SR_WVECS >= 8) {
        return v ^ ((v / SR_WVECS) & 7u);
    } else {
        return v ^ ((v / 8u) & (u32)(SR_WVECS - 1));
    }
}

// Where item k of lane `lane` lives in the stage, counted in elements.
__device__ __forceinline__ u32 sr_wslot(u32 lane, u32 k) {
    return sr_swizzle(lane * SR_WVECS + k / SR_VEC) * SR_VEC + k % SR_VEC;
}

// Inputs read by vectors: a buffer, or an expression whose widest buffer is
// T's width (a vector of T is then one 16-byte load of each such buffer, e.g.
// the 4-byte flags of an f32 predicate; their count of segments of 1024
// at 2^28, with the f32 tiles as well: 306 us against 1060, the buffer's
// sum 270, H200, one call).
template <typename X> constexpr bool sr_wvectors() {
    return X::WIDEST == (int)sizeof(T);
}

// Warp tile `base`'s elements (those below n; T() past them) into the
// warp's stage. A buffer's whole, aligned tile is copied asynchronously:
// the caller waits (cuprim_cp_async_wait, then __syncwarp) before reading.
template <typename X> __device__ __forceinline__ void sr_wstage(const X& in, u64 base, u64 n, SrVec* stage) {
    const u32 lane = threadIdx.x & 31;
    const bool whole = n - base >= SR_WTILE;
    if constexpr (X::IS_BUF && sizeof(SrVec) == 16) {
        if (whole && cuprim_aligned_to<SrVec>(in.p + base)) {
            const SrVec* vin = (const SrVec*)(in.p + base);
#pragma unroll
            for (int q = 0; q < SR_WVECS; q++) cuprim_cp_async<16>(stage + sr_swizzle(q * 32 + lane), vin + q * 32 + lane);
            return;
        }
    } else if constexpr (!X::IS_BUF && sr_wvectors<X>()) {
        if (whole && in.template misalign<SR_VEC>() == 0) {  // (base is a multiple of SR_VEC)
            // Eight vectors a buffer in flight at a time: all sixteen of an
            // f32 tile spilled the arg-extremes of a zip of two buffers.
#pragma unroll 8
            for (int q = 0; q < SR_WVECS; q++) {
                const cuprim_arr<T, SR_VEC> v = in.template load_n<SR_VEC>(base + (u64)(q * 32 + lane) * SR_VEC);
                SrVec w;
#pragma unroll
                for (int k = 0; k < SR_VEC; k++) w.v[k] = v.v[k];
                stage[sr_swizzle(q * 32 + lane)] = w;
            }
            return;
        }
    }
    // Anything else (a partial or unaligned tile, an expression of other
    // widths): one element per load, coalesced; item i of the tile is item
    // i % SR_WITEMS of lane i / SR_WITEMS.
    const u64 count = whole ? SR_WTILE : n - base;
    T* flat = (T*)stage;
#pragma unroll 8
    for (u32 i = lane; i < (u32)SR_WTILE; i += 32) {
        const u32 owner = i / SR_WITEMS, k = i % SR_WITEMS;
        flat[sr_wslot(owner, k)] = i < count ? in.load(base + i) : T();
    }
}

extern "C" __global__ void __launch_bounds__(CUPRIM_WARP_BLOCK, CUPRIM_WARP_MIN_BLOCKS)
    cuprim_segmented_reduce_warp(CUPRIM_INPUT In in, u64 n, const I* __restrict__ offsets, u64 segments,
                                 O* __restrict__ out, I* __restrict__ out_idx, u32* error_flag, SegPair* parts_tail,
                                 SegPair* parts_head, u32* counters, u64 num_wtiles, u64 per, double scale) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u64 wt = (u64)blockIdx.x * SR_WARP_WARPS + warp;
    const u64 base = wt * SR_WTILE;
    const bool live = base < n;  // warp-uniform

    const u64 a = base + (u64)lane * SR_WITEMS;
    const int count = a < n ? (n - a < (u64)SR_WITEMS ? (int)(n - a) : SR_WITEMS) : 0;
    __shared__ SrVec sr_wstages[SR_WARP_WARPS * 32 * SR_WVECS];
    SrVec* const stage = sr_wstages + warp * 32 * SR_WVECS;
    if (live) sr_wstage(in, base, n, stage);

    const u64 te = live ? (n - base < SR_WTILE ? n : base + SR_WTILE) : n;
    u64 lo = 0, hi = 0, w0 = 0, w1 = 0, wv = 0;
    if (live) sr_warp_range(offsets, segments, base, te, sr_guess(base, scale, segments), lo, hi, w0, w1, wv);
    // Lane 31: the offsets around te (the tile's tail), loaded now so they
    // arrive with the elements.
    u64 tail_s = 0, tail_e = 0;
    const bool tail_seg = live && lane == 31 && hi >= 1 && hi <= segments;
    if (tail_seg) {
        tail_s = sr_offset(offsets, hi - 1);
        tail_e = sr_offset(offsets, hi);
    }
    // Its loads overlap the element loads' wait.
    sr_share<CUPRIM_WARP_BLOCK>(offsets, n, segments, out, out_idx, error_flag, blockIdx.x, per);
    if (!live) return;

    // Each lane's first boundary at or after a (j0) and the two offsets from
    // there, from the probed offsets where the tile's range lies in them (the
    // usual case for evenly growing offsets: no loads), else searched.
    const bool in_window = lo >= w0 && hi <= w1;  // warp-uniform
    u64 j0 = lo;
    if (in_window) {
        for (u64 k = lo; k < hi; k++) j0 += __shfl_sync(0xffffffffu, wv, (int)(k - w0)) < a ? 1 : 0;
    } else {
        u64 h = hi;
        while (j0 < h) {  // first j with offsets[j] >= a
            const u64 m = j0 + (h - j0) / 2;
            if (sr_offset(offsets, m) < a)
                j0 = m + 1;
            else
                h = m;
        }
    }
    const u64 at0 = __shfl_sync(0xffffffffu, wv, (int)((j0 - w0) & 31));
    const u64 at1 = __shfl_sync(0xffffffffu, wv, (int)((j0 + 1 - w0) & 31));
    cuprim_cp_async_wait();
    __syncwarp();

    // The walk, as in cuprim_segmented_reduce.
    bool restarted = false, has_head = false;
    u64 head_seg = 0;
    A run = ReduceOp::identity(), head_val = ReduceOp::identity();
    if (count > 0) {
        u64 j = j0;
        u64 next = j >= w0 && j < w1 ? at0 : (j <= segments ? sr_offset(offsets, j) : ~0ull);
        u64 j1 = j, next1 = next;
        const bool at_start = next == a;
        if (at_start) {
            j1++;
            next1 = j1 >= w0 && j1 < w1 ? at1 : (j1 <= segments ? sr_offset(offsets, j1) : ~0ull);
            if (next1 == a) {
                j1 = sr_skip_run(offsets, j1, segments, a);
                next1 = j1 <= segments ? sr_offset(offsets, j1) : ~0ull;
            }
        }
        if (next1 >= a + count) {
            restarted = at_start;
#pragma unroll
            for (int q = 0; q < SR_WVECS; q++) {
                const SrVec v = stage[sr_swizzle(lane * SR_WVECS + q)];
#pragma unroll
                for (int k = 0; k < SR_VEC; k++) {
                    const int i = q * SR_VEC + k;
                    if (i == 0)
                        run = MapFn::apply(v.v[0], a);
                    else if (i < count)
                        run = ReduceOp::apply(run, MapFn::apply(v.v[k], a + i));
                }
            }
            if (next1 == a + count && j1 >= 1) {
                if (restarted) {
                    sr_emit(out, out_idx, offsets, j1 - 1, run);
                } else {
                    has_head = true;
                    head_seg = j1 - 1;
                    head_val = run;
                }
            }
        } else {
            // (Rare: a boundary inside the lane's items.)
            bool fresh = true;
#pragma unroll 1
            for (int k = 0; k <= SR_WITEMS; k++) {
                if (k > count) break;
                const u64 p = a + k;
                if (next == p) {
                    if (k > 0 && j >= 1) {
                        if (restarted) {
                            sr_emit(out, out_idx, offsets, j - 1, run);
                        } else {
                            has_head = true;
                            head_seg = j - 1;
                            head_val = run;
                        }
                    }
                    if (k < count) {
                        restarted = true;
                        fresh = true;
                    }
                    j++;
                    next = j <= segments ? sr_offset(offsets, j) : ~0ull;
                    if (next == p) {
                        j = sr_skip_run(offsets, j, segments, p);
                        next = j <= segments ? sr_offset(offsets, j) : ~0ull;
                    }
                }
                if (k < count) {
                    const A y = MapFn::apply(((const T*)stage)[sr_wslot(lane, k)], p);
                    run = fresh ? y : ReduceOp::apply(run, y);
                    fresh = false;
                }
            }
        }
    }

    // The warp's scan of the pairs: `before` (lanes > 0) is the fold of the lanes before.
    SegPair mine;
    mine.v = run;
    mine.head = restarted ? 1u : 0u;
    const SegPair incl = warp_inclusive_scan<SegPair, SegOp>(mine);
    const SegPair before = cuprim_shfl_up(incl, 1);
    const bool has_before = lane > 0;

    // A head closes here if a restart came before it in the tile; else it
    // is the tile's head: the last part of a segment that began in an
    // earlier tile.
    bool last_head = false;
    u64 head_t0 = 0;
    if (has_head) {
        if (has_before && before.head) {
            sr_emit(out, out_idx, offsets, head_seg, ReduceOp::apply(before.v, head_val));
        } else {
            const A part = has_before ? ReduceOp::apply(before.v, head_val) : head_val;
            const u64 s = sr_offset(offsets, head_seg);
            head_t0 = s / SR_WTILE;
            if (s < base) {
                last_head = sr_arrive(parts_head + wt, part, counters, wt, wt - head_t0 + 1);
            } else {
                sr_emit(out, out_idx, offsets, head_seg, part);  // bad offsets only (the result is dropped)
            }
        }
    }
    // The tile's tail: the segment open at te (segment hi - 1, when its
    // start is before te and its end after), from the last restart (or the
    // whole tile); lane 31 holds the warp's total.
    bool last_tail = false;
    u64 tail_t0 = 0, tail_t1 = 0;
    if (tail_seg) {
        const u64 s = tail_s, e = tail_e;
        if (s < te && e > te) {
            tail_t0 = s / SR_WTILE;
            tail_t1 = (e - 1) / SR_WTILE;
            // (Valid offsets: t0 <= wt < t1 < num_wtiles, and the last restart is at s.)
            if (tail_t0 <= wt && tail_t1 < num_wtiles && (incl.head != 0) == (s >= base))
                last_tail = sr_arrive(parts_tail + wt, incl.v, counters, tail_t1, tail_t1 - tail_t0 + 1);
        }
    }
    const u32 lh = __ballot_sync(0xffffffffu, last_head);
    if (lh) {
        const int src = __ffs(lh) - 1;
        const u64 seg = __shfl_sync(0xffffffffu, head_seg, src);
        const u64 t0 = __shfl_sync(0xffffffffu, head_t0, src);
        sr_finish(parts_tail, parts_head, t0, wt, seg, out, out_idx, offsets);
    }
    if (__ballot_sync(0xffffffffu, last_tail)) {
        const u64 t0 = __shfl_sync(0xffffffffu, tail_t0, 31);
        const u64 t1 = __shfl_sync(0xffffffffu, tail_t1, 31);
        sr_finish(parts_tail, parts_head, t0, t1, hi - 1, out, out_idx, offsets);
    }
}
