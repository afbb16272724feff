// reduce_by_key and run-length encoding by chunks: each block takes one
// contiguous chunk of the input (its index from a ticket, so every chunk
// before it is running or done and waiting on one always ends), streams it
// once in tiles and keeps one record per run head it finds in shared
// memory: the head's key and the aggregate of the run that head closes
// (the run before it). Only once the chunk is done does it look back, once
// (kernels/block/lookback.cuh, over the chunks before it), for the pair
// (heads before the chunk, aggregate of the run still open where the chunk
// starts), then copies its records out. The look-back's wait is paid once
// per chunk instead of once per tile.
//
// The chunk's pair and the look-back combine with the segmented operator
// of by_key.cu:
//   (ca, a) . (cb, b) = (ca + cb, cb > 0 ? b : a op b),
// where a pair's value is the fold of the values after its last head (all
// of them without one). So a run's aggregate is written by the chunk that
// holds the run's END: the next head closes it (head j of a chunk writes
// run slot base + j - 1), the end of the input closes the last run (the
// last chunk writes it). Every run closed in the chunk is folded there,
// except the one open where the chunk starts: its head lies in an earlier
// chunk, so the value its closing head writes is the look-back's value
// folded with the chunk's lead (the values before its first head). A run
// crossing any number of chunks gets its aggregate from the look-back
// carry; the chunk holding its head writes its key.
//
// Order and determinism: each run's aggregate is folded in order (any
// monoid, commutative or not): within a lane left to right, within a tile
// as a tree over lanes and warps, tiles left to right, chunks left to
// right. The grouping depends only on n, the chunk length and the tile
// shape, never on timing, when the look-back is deterministic
// (CUPRIM_DETERMINISTIC, the plan's choice for float values).
//
// A chunk whose runs overflow RC_CAP records keeps those of the tiles
// before the overflow; past it, the first pass only counts heads (keys
// read, values not: the chunk's pair needs the values after its last head
// alone, folded at the end from the last tile holding a head). Once its
// offset is known the chunk copies its kept records out, then reads the
// rest of the chunk again from the overflowing tile (its running pair
// there kept), each tile's records staged in the (now free) record arrays
// and written as contiguous runs of slots, as by_key.cu writes its tiles.
// Dense heads cost, per element, a key read, a second read of key and
// value and the coalesced record write: 20 bytes for u32 keys and f32
// values against the tile kernel's 16; never extra memory.
//
// Run-length encoding (RC_LENGTHS) reads no values: a pair's value is the
// position of its last head (the input's, in V: u32 below 2^32 elements),
// carried as (ca + cb, cb > 0 ? pb : pa) (the same pair operator with op
// "keep the left"), so the lane's pair is its head count and last head,
// with no per-element fold. A head at p closes the run before it with
// length p less the previous head's position: within the chunk the
// previous record's, for the chunk's first head the look-back carry's
// (the last head before the chunk); the last run's length is n less the
// last head's position.
//
// Specialised on: In0 / K (the key expression and its item), In1 / V (the
// values; for run lengths an unread buffer of C), O (the value output), C
// (count: u32 below 2^32 elements, else u64), KeyEq, ReduceOp (the monoid
// on V; reduce only), RC_LENGTHS, RC_ITEMS (consecutive elements a lane
// reads), RC_CAP (records a block keeps), CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS,
// CUPRIM_DETERMINISTIC, CUPRIM_LOOKBACK_WINDOWS.

constexpr int RC_WARPS = CUPRIM_BLOCK / 32;
constexpr int RC_TILE = CUPRIM_BLOCK * RC_ITEMS;
// Vector widths of the key and value expressions: 16 bytes of their widest
// buffers, at most a lane's elements (both powers of two).
constexpr int rc_vec(int x) { return x < RC_ITEMS ? x : RC_ITEMS; }
constexpr int RC_KVEC = rc_vec(cuprim_x_items<In0>());
constexpr int RC_VVEC = rc_vec(cuprim_x_items<In1>());
static_assert(RC_ITEMS % RC_KVEC == 0 && RC_ITEMS % RC_VVEC == 0, "whole vectors per lane");
static_assert(RC_ITEMS <= 32, "a lane's head flags live in one 32-bit mask");
static_assert(RC_CAP >= RC_TILE, "a tile's runs always fit: the first tile of a chunk is always kept");

#if RC_LENGTHS
// Head positions: a stretch without heads keeps the last one before it.
struct RcOp {
    __device__ __forceinline__ static V apply(V a, V) { return a; }
};
#else
typedef ReduceOp RcOp;
#endif

// (heads in a stretch, fold of the values after its last head).
struct RcPair {
    V v;
    C count;
};

// The deterministic look-back's canonical form of a pair (kernels/block/lookback.cuh).
__device__ __forceinline__ RcPair lookback_settle(const RcPair& p) {
    RcPair r = p;
    r.v = cuprim_canonical_nan(p.v);
    return r;
}

// A compile-time flag for the tile lambda: whether it reads values.
template <bool B> struct RcWith {
    static constexpr bool value = B;
};

struct RcPairOp {
    __device__ __forceinline__ static RcPair apply(const RcPair& a, const RcPair& b) {
        RcPair r;
        r.count = a.count + b.count;
        r.v = b.count > 0 ? b.v : RcOp::apply(a.v, b.v);
        return r;
    }
};

// keys, values: n each (values unread for run lengths). chunk: elements per
// chunk, a whole number of tiles. keys_out / values_out: at least as many
// slots as runs. count_out: the number of runs, written by the last chunk.
// status / aggregates / prefixes: the look-back state of `chunks` chunks
// (status zeroed). ticket: zero, left zero.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_reduce_chunks(CUPRIM_INPUT In0 keys, CUPRIM_INPUT In1 values, u64 n, u64 chunk, K* __restrict__ keys_out,
                         O* __restrict__ values_out, u64* __restrict__ count_out, u32* status, RcPair* aggregates,
                         RcPair* prefixes, u32* ticket, u32 chunks) {
    __shared__ K s_keys[RC_CAP];
    __shared__ V s_vals[RC_CAP];
    __shared__ RcPair s_totals[2][RC_WARPS];
    __shared__ RcPair staged[CUPRIM_DETERMINISTIC ? 32 * LOOKBACK_WINDOWS : 1];
    __shared__ RcPair s_prefix, s_at_overflow;
    __shared__ u32 s_chunk;
    __shared__ bool s_lead_empty;

    const u32 me = scan_take_tile(ticket, chunks, &s_chunk);
    const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
    const u64 c0 = (u64)me * chunk;
    const u64 c1 = n - c0 < chunk ? n : c0 + chunk;
    const u32 km = keys.template misalign<RC_KVEC>();
    const bool kvec = km == 0 || km == CUPRIM_X_ANY;
#if !RC_LENGTHS
    const u32 vm = values.template misalign<RC_VVEC>();
    const bool vvec = vm == 0 || vm == CUPRIM_X_ANY;
#endif
    int buf = 0;

    // A lane's keys of tile [tb, tb + RC_TILE) and (lane 0) the key before
    // its first. Split from `tile_of` so that run lengths can issue a
    // tile's key loads before the tile before is ranked.
    auto load_keys = [&](u64 tb, K (&x)[RC_ITEMS], K& before) {
        const u32 rem = (u32)(c1 - tb), mine_at = threadIdx.x * RC_ITEMS;
        const u64 e = tb + mine_at;
        const int valid = mine_at < rem ? (rem - mine_at < (u32)RC_ITEMS ? (int)(rem - mine_at) : RC_ITEMS) : 0;
        if (kvec && valid == RC_ITEMS) {
#pragma unroll
            for (int c = 0; c < RC_ITEMS / RC_KVEC; c++) {
                const cuprim_arr<K, RC_KVEC> a = keys.template load_n<RC_KVEC>(e + c * RC_KVEC);
#pragma unroll
                for (int k = 0; k < RC_KVEC; k++) x[c * RC_KVEC + k] = a.v[k];
            }
        } else {
#pragma unroll
            for (int k = 0; k < RC_ITEMS; k++) x[k] = k < valid ? keys.load(e + k) : K();
        }
        if (lane == 0 && e > 0 && valid > 0) before = keys.load(e - 1);
    };

    // The tile's ranking and records, its keys loaded (x, before_warp).
    auto tile_of = [&](u64 tb, const K (&x)[RC_ITEMS], K before_warp, RcPair& run, bool& has, auto put,
                       auto with_values) {
        constexpr bool WITH_VALUES = decltype(with_values)::value;
        // Offsets within the tile in 32 bits (a chunk is far shorter than 2^32).
        const u32 rem = (u32)(c1 - tb), mine_at = threadIdx.x * RC_ITEMS;
        const u64 e = tb + mine_at;
        const int valid = mine_at < rem ? (rem - mine_at < (u32)RC_ITEMS ? (int)(rem - mine_at) : RC_ITEMS) : 0;
#if !RC_LENGTHS
        V v[RC_ITEMS];
        if constexpr (!WITH_VALUES) {
#pragma unroll
            for (int k = 0; k < RC_ITEMS; k++) v[k] = V();
        } else if (vvec && valid == RC_ITEMS) {
#pragma unroll
            for (int c = 0; c < RC_ITEMS / RC_VVEC; c++) {
                const cuprim_arr<V, RC_VVEC> a = values.template load_n<RC_VVEC>(e + c * RC_VVEC);
#pragma unroll
                for (int k = 0; k < RC_VVEC; k++) v[c * RC_VVEC + k] = a.v[k];
            }
        } else {
#pragma unroll
            for (int k = 0; k < RC_ITEMS; k++) v[k] = k < valid ? values.load(e + k) : V();
        }
#endif
        // The key before the lane's first: the lane before's last, or for a
        // warp's first lane the key before the warp's stretch (the chunk
        // before's last, at the chunk's start).
        K prev = cuprim_shfl_up(x[RC_ITEMS - 1], 1);
        if (lane == 0) prev = before_warp;
        u32 flags = 0;
#pragma unroll
        for (int k = 0; k < RC_ITEMS; k++) {
            if (k < valid && (e + k == 0 || KeyEq::differ(k == 0 ? prev : x[k - 1], x[k]))) flags |= 1u << k;
        }

        // The lane's pair; lanes past the end hold garbage that no valid lane reads
        // (the valid lanes of a tile are its first ones, and a scan reads only lanes before).
        RcPair mine;
        mine.count = (C)__popc(flags);
#if RC_LENGTHS
        mine.v = flags ? (V)(e + (u32)(31 - __clz(flags))) : (V)0;
#else
        mine.v = v[0];
#pragma unroll
        for (int k = 1; k < RC_ITEMS; k++) {
            if (k < valid) mine.v = (flags >> k) & 1u ? v[k] : RcOp::apply(mine.v, v[k]);
        }
#endif
#if RC_LENGTHS
        // The warp's scan as unique's: a sum of head counts, and the last head
        // before the lane from the nearest lane before holding one (a ballot
        // and one shuffle; lanes with none before keep garbage, count 0).
        RcPair incl, lane_before;
        incl.count = cuprim_warp_inclusive_sum(mine.count);
        lane_before.count = incl.count - mine.count;
        const u32 with_heads = __ballot_sync(0xffffffffu, flags != 0) & ((1u << lane) - 1);
        lane_before.v = cuprim_shfl(mine.v, with_heads ? 31 - __clz(with_heads) : lane);
        incl.v = flags ? mine.v : lane_before.v;
#else
        RcPair incl = mine;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const RcPair y = cuprim_shfl_up(incl, o);
            if (lane >= o) incl = RcPairOp::apply(y, incl);
        }
        const RcPair lane_before = cuprim_shfl_up(incl, 1);
#endif
        // The warp's last valid lane leaves the warp's total.
        if (valid > 0 && (lane == 31 || mine_at + RC_ITEMS >= rem)) s_totals[buf][warp] = incl;
        __syncthreads();
        // The warps before this one, and the tile's total: warps holding elements, left to right.
        RcPair warps_before = s_totals[buf][0], total = warps_before;
#pragma unroll
        for (int w = 1; w < RC_WARPS; w++) {
            if (w == warp) warps_before = total;
            if ((u32)w * (32 * RC_ITEMS) < rem) total = RcPairOp::apply(total, s_totals[buf][w]);
        }
        buf ^= 1;  // the next tile's totals go to the other buffer: no second barrier

        // Everything in the chunk before this lane's first element.
        RcPair r = run;
        bool has_r = has;
        if (warp > 0) {
            r = has_r ? RcPairOp::apply(r, warps_before) : warps_before;
            has_r = true;
        }
        if (lane > 0) {
            r = has_r ? RcPairOp::apply(r, lane_before) : lane_before;
            has_r = true;
        }
#pragma unroll
        for (int k = 0; k < RC_ITEMS; k++) {
            if (k < valid) {
                if ((flags >> k) & 1u) {
#if RC_LENGTHS
                    // The run closed: its length from the chunk's previous head, or (the chunk's first) this position.
                    const V p = (V)(e + k);
                    put((u64)r.count, x[k], r.count > 0 ? (V)(p - r.v) : p, !has_r);
                    r.v = p;
#else
                    put((u64)r.count, x[k], r.v, !has_r);
                    r.v = v[k];
#endif
                    r.count += 1;
                } else {
#if !RC_LENGTHS
                    r.v = has_r ? RcOp::apply(r.v, v[k]) : v[k];
#endif
                }
                has_r = true;
            }
        }
        run = has ? RcPairOp::apply(run, total) : total;
        has = true;
    };

    // Tile [tb, tb + RC_TILE) of the chunk. `run` is the chunk's pair before
    // the tile (`has` false before the chunk's first element), the tile's
    // folded onto it on return. put(j, key, closed, empty) for each head, j
    // its index in the chunk, closed the fold of the chunk's values of the
    // run it closes (empty: none, the chunk starts with this head; run
    // lengths: its length, or for the chunk's first head its position). Every
    // thread calls it. with_values: RcWith<false> reads no values (reduce:
    // only the head count of `run` is then meaningful; run lengths read none
    // either way).
    auto tile = [&](u64 tb, RcPair& run, bool& has, auto put, auto with_values) {
        K x[RC_ITEMS], b = K();
        load_keys(tb, x, b);
        tile_of(tb, x, b, run, has, put, with_values);
    };

    // Stream the chunk, keeping records while they fit; past an overflow, count heads only.
    auto skip = [](u64, const K&, const V&, bool) {};
    RcPair run;
    run.count = 0;  // the head count before the chunk's first element (its value is unset until `has`)
    bool has = false;
    u64 kept = 0, overflow_from = c1, last_heads = c1;
    // Run lengths of keys of 4 bytes or more issue each tile's key loads
    // before the tile before is ranked (two tiles in flight per block); the
    // other modes have no registers to spare for a second tile.
    constexpr bool PREFETCH = RC_LENGTHS && sizeof(K) >= 4;
    K x[RC_ITEMS], xb = K();
    if (PREFETCH) load_keys(c0, x, xb);
    for (u64 tb = c0; tb < c1; tb += RC_TILE) {
        K nx[RC_ITEMS], nb = K();
        if (PREFETCH && tb + RC_TILE < c1) load_keys(tb + RC_TILE, nx, nb);
        // This tile: prefetched, or loaded now.
        auto pass = [&](auto put, auto with_values) {
            if (PREFETCH) {
                tile_of(tb, x, xb, run, has, put, with_values);
            } else {
                tile(tb, run, has, put, with_values);
            }
        };
        if (overflow_from == c1) {
            // Where a pass over the rest starts, should this tile overflow (read after the look-back's barriers).
            if (threadIdx.x == 0) s_at_overflow = run;
            pass(
                [&](u64 j, const K& key, const V& closed, bool empty) {
                    if (j < (u64)RC_CAP) {
                        s_keys[j] = key;
                        s_vals[j] = closed;
                        if (j == 0) s_lead_empty = empty;
                    }
                },
                RcWith<true>());
            if ((u64)run.count <= (u64)RC_CAP) {
                kept = run.count;
            } else {
                overflow_from = last_heads = tb;  // this tile on is read again below, from s_at_overflow
            }
        } else {
            const C before = run.count;
            pass(skip, RcWith<false>());
            if (run.count != before) last_heads = tb;
        }
        if (PREFETCH) {
#pragma unroll
            for (int k = 0; k < RC_ITEMS; k++) x[k] = nx[k];
            xb = nb;
        }
    }
#if !RC_LENGTHS
    // Past an overflow the chunk's pair lacks its value (when any tile was
    // only counted): the fold of the values after its last head, from the
    // last tile holding a head on (whose total restarts the fold there).
    if (overflow_from + RC_TILE < c1) {
        RcPair tail;
        tail.count = 0;
        bool has_tail = false;
        for (u64 tb = last_heads; tb < c1; tb += RC_TILE) tile(tb, tail, has_tail, skip, RcWith<true>());
        run.v = tail.v;
    }
#endif

    // The chunks before: one look-back by warp 0 (chunk 0 publishes its prefix).
    constexpr bool DETERMINISTIC = CUPRIM_DETERMINISTIC;
    if (warp == 0) warp_publish_lookback<RcPair, RcPairOp, DETERMINISTIC>(me, run, status, aggregates, prefixes, staged, &s_prefix);
    __syncthreads();
    const bool first = me == 0;
    RcPair pre;
    pre.count = 0;
    if (!first) pre = s_prefix;
    const u64 base = pre.count;  // the output slot of the chunk's first head
    // The value head 0 writes for the run it closes (slot base - 1; none in
    // chunk 0): run lengths its position less the last head's before the chunk.
    auto lead = [&](const V& closed, bool empty) -> O {
#if RC_LENGTHS
        (void)empty;
        return (O)(closed - pre.v);
#else
        return (O)(empty ? pre.v : RcOp::apply(pre.v, closed));
#endif
    };

    for (u64 j = threadIdx.x; j < kept; j += CUPRIM_BLOCK) {
        keys_out[base + j] = s_keys[j];
        if (j > 0) {
            values_out[base + j - 1] = (O)s_vals[j];
        } else if (!first) {
            values_out[base - 1] = lead(s_vals[0], s_lead_empty);
        }
    }
    // Past an overflow: the rest of the chunk again, each tile's records
    // staged in s_keys / s_vals (free once the kept ones are out: the
    // tile's own barrier orders the copy above, and each write-out below,
    // before its stores) and written as contiguous slots.
    if (overflow_from < c1) {
        RcPair again = s_at_overflow;
        bool has_again = true;  // not the chunk's first tile (RC_CAP >= RC_TILE): no record is `empty`
        for (u64 tb = overflow_from; tb < c1; tb += RC_TILE) {
            const u64 from = again.count;
            tile(
                tb, again, has_again,
                [&](u64 j, const K& key, const V& closed, bool) {
                    s_keys[j - from] = key;
                    s_vals[j - from] = closed;
                },
                RcWith<true>());
            __syncthreads();
            const int records = (int)((u64)again.count - from);
            for (int i = threadIdx.x; i < records; i += CUPRIM_BLOCK) {
                const u64 j = from + i;
                keys_out[base + j] = s_keys[i];
                if (j > 0) {
                    values_out[base + j - 1] = (O)s_vals[i];
                } else if (!first) {
                    values_out[base - 1] = lead(s_vals[i], false);
                }
            }
        }
    }
    // The last chunk closes the last run and writes the count.
    if (c1 == n && threadIdx.x == 0) {
        const RcPair all = first ? run : RcPairOp::apply(pre, run);
#if RC_LENGTHS
        values_out[(u64)all.count - 1] = (O)(n - (u64)all.v);
#else
        values_out[(u64)all.count - 1] = (O)all.v;
#endif
        *count_out = (u64)all.count;
    }
}
