// Set operations on sorted inputs (the multiset semantics of std::set_* and
// Thrust) in one pass over tiles of both inputs, keys alone or with values.
//
// The sequential set operation is a two-pointer walk: with heads x = a[i]
// and y = b[j], a step takes x alone (x before y), y alone (y before x) or
// both (equivalent: the r-th copy of a key in a meets the r-th in b), and
// emits by the operation: a pair emits x for the union and the
// intersection, x alone is emitted by all but the intersection, y alone by
// the union and the symmetric difference. The walk's states (i, j) are the
// valid cuts: for the one key class that straddles the cut, with ra of its
// ca copies in a before the cut and rb of its cb in b, ra == rb, or
// ra > rb == cb, or rb > ra == ca. The walk started at a valid cut goes
// exactly as the whole walk does from there, so the work splits at such
// cuts.
//
// set_balanced_cut finds one on each diagonal (i + j = diag, or diag - 1
// where a pair would be split): the merge-path cut (a first among ties),
// then, for the class of b[j], the copies before the cut on both sides
// (t in all) redistributed as t / 2 each where both sides hold that many,
// else all of the side that holds fewer and the rest from the other. Runs
// of one key across many tiles cost one gallop back (2 log2 of the run's
// part before the cut) and one probe per side.
//
// Two launches. cuprim_set_partition finds the cut of every tile boundary
// (diagonals SET_STRIDE = MERGE_TILE - 1 apart, so a tile holds at most
// MERGE_TILE inputs). cuprim_set then takes tiles in order from a counter:
// the tile's two ranges reach shared memory (merge_tile.cuh's merge_load
// for plain buffers, else through the expressions' load), each thread finds
// its own cut on the diagonal thread * ITEMS of the tile and walks to the
// next thread's cut, at most ITEMS + 1 steps, keeping what it emits in
// registers; a block scan of the threads' counts and the decoupled
// look-back over tiles (block/lookback.cuh) place the tile's output; the
// block writes it through shared memory, coalesced, and, with values, stages
// the tile's values the same way and moves each kept key's value by its
// position. The last tile's published prefix is the output's length, read
// back once by the caller.
//
// Inputs that are not sorted give some output drawn from the inputs: every
// cut is clamped into its inputs, a tile's ranges into MERGE_TILE inputs,
// a thread's walk into ITEMS + 1 steps (so a tile emits at most SET_SMEM
// elements into shared memory), and no element is written at or past
// `capacity` (the output's length).
//
// Specialised on: In0, In1 (input expressions, block/expr.cuh, of items K;
// plain buffers are cuprim_x_buf<K>), Cmp, CUPRIM_SET_OP (0 union,
// 1 intersection, 2 difference, 3 symmetric difference), CUPRIM_PAIRS and V
// (values from buffers va, vb move with their keys; K and unused without),
// CUPRIM_VALUES_X (defined: the values are input expressions Vx0, Vx1 of
// items V instead of buffers, staged through their load), C (the output
// count: u32 below 2^31 inputs, else u64), CUPRIM_BLOCK, CUPRIM_ITEMS,
// CUPRIM_MIN_BLOCKS.

constexpr int SET_UNION = 0, SET_INTERSECTION = 1, SET_DIFFERENCE = 2, SET_SYMMETRIC = 3;
constexpr int SET_OP = CUPRIM_SET_OP;
// What each step of the walk emits (see above).
constexpr bool SET_EMIT_PAIR = SET_OP == SET_UNION || SET_OP == SET_INTERSECTION;
constexpr bool SET_EMIT_A = SET_OP != SET_INTERSECTION;
constexpr bool SET_EMIT_B = SET_OP == SET_UNION || SET_OP == SET_SYMMETRIC;
// Diagonals between tile cuts: a cut lies on its diagonal or one before,
// so a tile holds at most MERGE_TILE inputs.
constexpr int SET_STRIDE = MERGE_TILE - 1;
// Steps of a thread's walk: its stretch holds at most ITEMS + 1 inputs.
constexpr int SET_STEPS = CUPRIM_ITEMS + 1;
// Shared-memory slots: the staged tile (MERGE_SLOTS) or the outputs of
// every thread's walk (at most SET_STEPS each, whatever the inputs).
constexpr int SET_SMEM = MERGE_TILE + CUPRIM_BLOCK;
static_assert(SET_SMEM >= MERGE_SLOTS, "the staged tile fits");
static_assert(SET_STEPS <= 32, "a thread's emitted steps are bits of a u32");
static_assert(MERGE_TILE < 65536 && MERGE_TILE >= 2, "a thread's cut packs into 16 + 16 bits");

struct SetCountOp {
    __device__ __forceinline__ static C apply(C a, C b) {
        return a + b;
    }
    __device__ __forceinline__ static C identity() {
        return 0;
    }
};

// The first p in [lo, lo + len) of s with !before(s[p]) (lo + len if none),
// for a `before` that holds on a prefix of that range.
template <typename S, typename Index, typename Before>
__device__ __forceinline__ Index set_partition(S s, Index lo, Index len, Before before) {
    while (len > 0) {
        const Index half = len >> 1;
        if (before(s[lo + half])) {
            lo += half + 1;
            len -= half + 1;
        } else {
            len = half;
        }
    }
    return lo;
}

// The lower bound of x in s[0..hi), all of whose elements are not after x:
// probes hi - 1, hi - 2, hi - 4, ... back to an element before x, then
// bisects that gap (about 2 log2 of the distance).
template <typename S, typename Index> __device__ __forceinline__ Index set_run_start(S s, Index hi, K x) {
    const auto before = [&](K e) { return Cmp::less(e, x); };
    Index known = hi;  // !before(s[p]) for p in [known, hi)
    for (Index step = 1; known > 0; step *= 2) {
        const Index probe = known > step ? known - step : (Index)0;
        if (before(s[probe])) return set_partition(s, (Index)(probe + 1), (Index)(known - probe - 1), before);
        known = probe;
    }
    return 0;
}

// A valid cut (a state of the set walk) of a[0..na) and b[0..nb) with
// i + j = diag or diag - 1, for sorted inputs; for any inputs some
// 0 <= i <= na, 0 <= j <= nb, every read in range. diag == na + nb gives
// (na, nb); diag == 0 gives (0, 0).
template <typename A, typename B, typename Index>
__device__ __forceinline__ void set_balanced_cut(A a, Index na, B b, Index nb, Index diag, Index& ci, Index& cj) {
    const Index i = cuprim_merge_path<Cmp>(a, na, b, nb, diag);
    const Index j = diag - i;
    ci = i;
    cj = j;
    // With b done, the merge path's cut is valid: b's copies of a class
    // come after all of a's.
    if (j >= nb) return;
    // Only the class of b[j] may straddle the cut: its copies just before
    // the cut, a[sa..i) and b[sb..j), t in all.
    const K x = b[j];
    const Index sa = set_run_start(a, i, x), sb = set_run_start(b, j, x);
    const Index t = (i - sa) + (j - sb);
    const Index h = t / 2;
    // Whether each side holds h copies of the class from its start.
    const bool a_has = h == 0 || (h <= na - sa && !Cmp::less(x, a[sa + h - 1]));
    const bool b_has = h == 0 || (h <= nb - sb && !Cmp::less(x, b[sb + h - 1]));
    const auto same = [&](K e) { return !Cmp::less(x, e); };
    Index ra, rb;
    if (a_has && b_has) {
        ra = h;
        rb = h;
    } else if (!a_has) {
        // a holds fewer than h copies: all of them, the rest of t from b.
        ra = set_partition(a, sa, h <= na - sa ? h : na - sa, same) - sa;
        rb = t - ra;
    } else {
        rb = set_partition(b, sb, h <= nb - sb ? h : nb - sb, same) - sb;
        ra = t - rb;
    }
    ci = ra <= na - sa ? sa + ra : na;
    cj = rb <= nb - sb ? sb + rb : nb;
}

// Each tile boundary's cut: splits[2 t], splits[2 t + 1] = the valid cut of
// diagonal min(t * SET_STRIDE, na + nb), for t = 0..=tiles.
extern "C" __global__ void cuprim_set_partition(CUPRIM_INPUT In0 a, u64 na, CUPRIM_INPUT In1 b, u64 nb,
                                                u64* __restrict__ splits, u64 tiles) {
    const u64 t = cuprim_thread_id();
    if (t > tiles) return;
    const u64 n = na + nb;
    const u64 diag = t * (u64)SET_STRIDE < n ? t * (u64)SET_STRIDE : n;
    u64 ci, cj;
    set_balanced_cut(merge_x_at<In0>{a, 0}, na, merge_x_at<In1>{b, 0}, nb, diag, ci, cj);
    splits[2 * t] = ci;
    splits[2 * t + 1] = cj;
}

// The tile's ranges a[a0..a0 + la) and b[b0..b0 + lb) into s (keys, or
// values with CUPRIM_VALUES_X): plain buffers by merge_tile.cuh's
// merge_load (cp.async or the bulk copy engine for 4-byte keys alone),
// other expressions through their load, all of a thread's loads out before
// its first store. Waits for the copies (a __syncthreads must still
// follow).
template <typename E, typename A, typename B>
__device__ __forceinline__ merge_layout<E> set_stage(E* s, const A& a, const B& b, u64 a0, u64 b0, int la, int lb) {
    if constexpr (A::IS_BUF && B::IS_BUF) {
        return merge_load(s, a.p + a0, b.p + b0, la, lb);
    } else {
        const int count = la + lb;
        E x[CUPRIM_ITEMS];
#pragma unroll
        for (int k = 0; k < CUPRIM_ITEMS; k++) {
            const int i = k * CUPRIM_BLOCK + (int)threadIdx.x;
            if (i < count) x[k] = i < la ? a.load(a0 + i) : b.load(b0 + (i - la));
        }
#pragma unroll
        for (int k = 0; k < CUPRIM_ITEMS; k++) {
            const int i = k * CUPRIM_BLOCK + (int)threadIdx.x;
            if (i < count) s[i] = x[k];
        }
        return {0, la};
    }
}

// The values' parameters: buffers, or input expressions (CUPRIM_VALUES_X).
#ifdef CUPRIM_VALUES_X
#define SET_VALUES CUPRIM_INPUT Vx0 va, CUPRIM_INPUT Vx1 vb
#else
#define SET_VALUES const V* __restrict__ va, const V* __restrict__ vb
#endif

// out_k[...] (and out_v with CUPRIM_PAIRS): the set operation of a[0..na)
// and b[0..nb), elements at or past `capacity` dropped. splits: the tile
// cuts of cuprim_set_partition. va and vb (CUPRIM_PAIRS) hold the values of
// a and b (buffers, or expressions with CUPRIM_VALUES_X); vb is read only
// by the union and the symmetric difference (may be null, or a null
// buffer, for the others). Look-back state of num_tiles tiles (status words
// zeroed); tile_counter zero, left zero.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_set(CUPRIM_INPUT In0 a, u64 na, CUPRIM_INPUT In1 b, u64 nb, SET_VALUES, const u64* __restrict__ splits,
               K* __restrict__ out_k, V* __restrict__ out_v, u64 capacity, u32* status, C* aggregates, C* prefixes,
               u32* tile_counter, u32 num_tiles) {
    __shared__ __align__(16) unsigned char smem[SET_SMEM * MERGE_SLOT];
    __shared__ u32 cuts[CUPRIM_BLOCK + 1];
    __shared__ C warp_totals[CUPRIM_BLOCK / 32];
    __shared__ C s_prefix;
    __shared__ u32 s_tile;
    K* sk = (K*)smem;
    const int t = (int)threadIdx.x;

    const u32 tile = scan_take_tile(tile_counter, num_tiles, &s_tile);
    // The tile's ranges, clamped into MERGE_TILE inputs (sorted inputs need
    // no clamp; the partition keeps every cut inside its input).
    const u64 a0 = splits[2 * (u64)tile], b0 = splits[2 * (u64)tile + 1];
    u64 a1 = splits[2 * (u64)tile + 2], b1 = splits[2 * (u64)tile + 3];
    a1 = a1 < a0 ? a0 : (a1 - a0 > (u64)MERGE_TILE ? a0 + MERGE_TILE : a1);
    const int la = (int)(a1 - a0);
    b1 = b1 < b0 ? b0 : (b1 - b0 > (u64)(MERGE_TILE - la) ? b0 + (MERGE_TILE - la) : b1);
    const int lb = (int)(b1 - b0);
    const int count = la + lb;
    const merge_layout<K> at = set_stage(sk, a, b, a0, b0, la, lb);
    __syncthreads();

    // This thread's cut on diagonal t * ITEMS of the tile; the last thread
    // walks to the tile's end.
    const K* sa = sk + at.oa;
    const K* sb = sk + at.ob;
    {
        const int diag = min(t * CUPRIM_ITEMS, count);
        int ci, cj;
        set_balanced_cut(sa, la, sb, lb, diag, ci, cj);
        cuts[t] = ((u32)ci << 16) | (u32)cj;
        if (t == 0) cuts[CUPRIM_BLOCK] = ((u32)la << 16) | (u32)lb;
    }
    __syncthreads();
    int i = (int)(cuts[t] >> 16), j = (int)(cuts[t] & 0xffffu);
    const int ie = max((int)(cuts[t + 1] >> 16), i), je = max((int)(cuts[t + 1] & 0xffffu), j);

    // The walk: step k emits sk[src[k]] where bit k of emitted is set,
    // kept in keys[k] for keys alone (with values, read back by src after
    // the look-back: fewer registers held across it).
    K keys[SET_STEPS];
    int src[SET_STEPS];
    u32 emitted = 0;
    K x = sa[i < ie ? i : 0], y = sb[j < je ? j : 0];
#pragma unroll
    for (int k = 0; k < SET_STEPS; k++) {
        const bool ha = i < ie, hb = j < je;
        bool take_a = ha, take_b = hb;
        if (ha && hb) {
            take_a = !Cmp::less(y, x);
            take_b = !Cmp::less(x, y);
        }
        const bool emit = take_a && take_b ? SET_EMIT_PAIR : (take_a ? SET_EMIT_A : take_b && SET_EMIT_B);
        if constexpr (!CUPRIM_PAIRS) keys[k] = take_a ? x : y;
        src[k] = take_a ? at.oa + i : at.ob + j;
        if (emit) emitted |= 1u << k;
        i += take_a;
        j += take_b;
        if (take_a && i < ie) x = sa[i];
        if (take_b && j < je) y = sb[j];
    }

    // Places: within the tile by a block scan of the counts, the tile's by
    // the look-back (its barriers also end every thread's reads of sk).
    C before = 0, prefix = 0;
    bool has_before = false;
    block_scan_lookback<C, SetCountOp, CUPRIM_BLOCK, false>((C)__popc(emitted), tile, status, aggregates, prefixes,
                                                            warp_totals, nullptr, &s_prefix, before, has_before,
                                                            prefix);
    if (!has_before) before = 0;
    if (tile == 0) prefix = 0;
    const int total = (int)warp_totals[CUPRIM_BLOCK / 32 - 1];
    const u64 room = capacity > (u64)prefix ? capacity - (u64)prefix : 0;
    const int stored = room < (u64)total ? (int)room : total;

    if constexpr (CUPRIM_PAIRS) {
#pragma unroll
        for (int k = 0; k < SET_STEPS; k++) {
            if (emitted & (1u << k)) keys[k] = sk[src[k]];
        }
        __syncthreads();  // every thread has its keys before any is overwritten
    }
    int p = (int)before;
#pragma unroll
    for (int k = 0; k < SET_STEPS; k++) {
        if (emitted & (1u << k)) sk[p++] = keys[k];
    }
    __syncthreads();
    for (int q = t; q < stored; q += CUPRIM_BLOCK) out_k[(u64)prefix + q] = sk[q];

    if constexpr (CUPRIM_PAIRS) {
        V* sv = (V*)smem;
        __syncthreads();  // the keys are out of shared memory
        // b's values only where b's keys can be kept.
        const int lbv = SET_EMIT_B ? lb : 0;
#ifdef CUPRIM_VALUES_X
        const merge_layout<V> vat = set_stage(sv, va, vb, a0, b0, la, lbv);
#else
        const merge_layout<V> vat = merge_load(sv, va + a0, SET_EMIT_B ? vb + b0 : va + a0 + la, la, lbv);
#endif
        __syncthreads();
        V vals[SET_STEPS];
#pragma unroll
        for (int k = 0; k < SET_STEPS; k++) {
            // src counts in the keys' layout: the same element in the values'.
            const int e = src[k] < at.ob ? src[k] - at.oa : la + (src[k] - at.ob);
            if (emitted & (1u << k)) vals[k] = sv[e < la ? vat.oa + e : vat.ob + (e - la)];
        }
        __syncthreads();
        p = (int)before;
#pragma unroll
        for (int k = 0; k < SET_STEPS; k++) {
            if (emitted & (1u << k)) sv[p++] = vals[k];
        }
        __syncthreads();
        for (int q = t; q < stored; q += CUPRIM_BLOCK) out_v[(u64)prefix + q] = sv[q];
    }
}
