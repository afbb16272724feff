// Decoupled look-back (after Merrill & Garland, 2016): the cross-tile part
// of every single-pass kernel (scan, copy_if / partition, scan_by_key).
//
// Each block takes the next tile index from an atomic counter, so every
// earlier tile is already running and waiting on one always ends. A tile
// publishes its aggregate, looks back over its predecessors a warp-width at
// a time until it meets a published prefix, and publishes its own.
//
// Order is always kept, so non-commutative operators work. Float results
// are bit-identical run to run in deterministic mode (see below); exact
// operators (integers, min / max, bitwise) are deterministic in both modes.

// Look-back status of a tile.
constexpr u32 SCAN_EMPTY = 0, SCAN_AGGREGATE = 1, SCAN_PREFIX = 2;

// Polls of a predecessor back off up to 256 ns, so spinning warps do not
// crowd the memory system the streaming loads need (block/backoff.cuh).
typedef cuprim_backoff<256> LookbackBackoff;

// Where tiles publish. Values of at most 4 bytes share one 64-bit word with
// their status (status in the high half); values of 5 to 8 bytes share an
// aligned 16-byte word (status, value), read and written with one vector
// access, which the hardware keeps whole, as CUB's tile state assumes (a
// stress test of 7.2e9 reads racing writes saw no torn word on the H100;
// a layout carrying the status in both halves cost 4% at 2^28 f64). Either
// way a reader needs one load and no fence. Larger values live in their own
// arrays beside a status array, written before the status with release
// semantics and read after it with acquire semantics. Each layout
// has publish and peek (one read, no waiting); lookback_wait spins on peek.
constexpr int LOOKBACK_SEPARATE = 0, LOOKBACK_PACKED64 = 1, LOOKBACK_PACKED128 = 2;
template <typename V>
constexpr int lookback_layout() {
    return sizeof(V) <= 4 ? LOOKBACK_PACKED64 : (sizeof(V) <= 8 ? LOOKBACK_PACKED128 : LOOKBACK_SEPARATE);
}
template <typename V, int LAYOUT = lookback_layout<V>()> struct TileState;

template <typename V> struct TileState<V, LOOKBACK_PACKED64> {
    u64* words;
    __device__ __forceinline__ TileState(u32* status, V*, V*) : words((u64*)status) {}

    __device__ __forceinline__ void publish(u32 tile, V value, u32 flag) {
        cuprim_words<V> w;
        w.w[0] = 0;
        w.v = value;
        const u64 word = ((u64)flag << 32) | w.w[0];
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(words + tile), "l"(word) : "memory");
    }
    // One read of `tile`'s status and value (status SCAN_EMPTY: not yet).
    __device__ __forceinline__ u32 peek(u32 tile, V& value) {
        u64 word;
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(words + tile) : "memory");
        cuprim_words<V> w;
        w.w[0] = (u32)word;
        value = w.v;
        return (u32)(word >> 32);
    }
};

template <typename V> struct TileState<V, LOOKBACK_PACKED128> {
    u64* words;  // two per tile: status, value
    __device__ __forceinline__ TileState(u32* status, V*, V*) : words((u64*)status) {}

    __device__ __forceinline__ void publish(u32 tile, V value, u32 flag) {
        cuprim_words<V> w;
        w.w[cuprim_words<V>::W - 1] = 0;
        w.v = value;
        u64 payload = w.w[0];
        if constexpr (cuprim_words<V>::W > 1) payload |= (u64)w.w[1] << 32;
        asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(words + 2 * tile), "l"((u64)flag), "l"(payload)
                     : "memory");
    }
    __device__ __forceinline__ u32 peek(u32 tile, V& value) {
        u64 st, payload;
        asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(st), "=l"(payload) : "l"(words + 2 * tile) : "memory");
        cuprim_words<V> w;
        w.w[0] = (u32)payload;
        if constexpr (cuprim_words<V>::W > 1) w.w[1] = (u32)(payload >> 32);
        value = w.v;
        return (u32)st;
    }
};

template <typename V> struct TileState<V, LOOKBACK_SEPARATE> {
    u32* status;
    V* aggregates;
    V* prefixes;
    __device__ __forceinline__ TileState(u32* s, V* a, V* p) : status(s), aggregates(a), prefixes(p) {}

    __device__ __forceinline__ void publish(u32 tile, V value, u32 flag) {
        cuprim_store_words((flag == SCAN_PREFIX ? prefixes : aggregates) + tile, value);
        asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(status + tile), "r"(flag) : "memory");
    }
    __device__ __forceinline__ u32 peek(u32 tile, V& value) {
        u32 st;
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(st) : "l"(status + tile) : "memory");
        if (st != SCAN_EMPTY) value = cuprim_load_cg((st == SCAN_PREFIX ? prefixes : aggregates) + tile);
        return st;
    }
};

// Spins until `tile` has published (an aggregate or a prefix); returns its
// status and value.
template <typename V> __device__ __forceinline__ u32 lookback_wait(TileState<V>& state, u32 tile, V& value) {
    LookbackBackoff backoff;
    while (true) {
        const u32 st = state.peek(tile, value);
        if (st != SCAN_EMPTY) return st;
        backoff.pause();
    }
}

// Deterministic look-back: windows of 32 predecessors staged in shared
// memory at a time for the fold (32 * LOOKBACK_WINDOWS values per block).
// The kernel's spec sets it (tuning::scan_lookback_windows).
#ifndef CUPRIM_LOOKBACK_WINDOWS
#define CUPRIM_LOOKBACK_WINDOWS 1
#endif
constexpr int LOOKBACK_WINDOWS = CUPRIM_LOOKBACK_WINDOWS;

// Lane 0 folds staged[from], staged[from - 1], ..., staged[0] onto acc.
template <typename V, typename Op>
__device__ __forceinline__ V lookback_fold_staged(V acc, const V* staged, int from) {
#pragma unroll 8
    for (int p = from; p >= 0; p--) acc = Op::apply(acc, staged[p]);
    return acc;
}

// What the deterministic look-back publishes and returns: float NaNs made
// one NaN (cuprim_canonical_nan), so a prefix met in a predecessor and the
// same prefix folded here are the same bits even where a NaN arose. A value
// type holding floats inside a struct declares its own overload (found by
// argument-dependent lookup; scan_by_key's SegPair does).
template <typename V> __device__ __forceinline__ V lookback_settle(const V& v) {
    return cuprim_canonical_nan(v);
}

// Called by all 32 lanes of one warp of the block working on `tile` > 0,
// after the tile's aggregate is published. Reads predecessors a window of 32
// at a time, newest first, until a window holds a published prefix, and
// publishes tile's inclusive prefix. Returns (in lane 0) the exclusive
// prefix.
//
// Fast mode (DETERMINISTIC false): each window is folded as an ordered tree
// (order kept, so any associative operator works) and windows are combined
// as they are read. Which predecessor's prefix the look-back meets depends
// on timing, so float sums may differ in the last bits from run to run.
//
// Deterministic mode: lane 0 folds the values LEFT TO RIGHT, one at a time,
// starting from the newest prefix met. A published prefix is itself the left
// fold of all aggregates before it, so the result is the same whichever
// prefix was met: the same bits on every run. The first LOOKBACK_WINDOWS
// windows are staged in `staged` as they are read; a look-back that goes
// deeper (as deep as the fast mode's) reads its windows again, a group of
// LOOKBACK_WINDOWS at a time, oldest group first, each window with one load
// per lane, since all of them have published. A prefix published since is
// the fold up to there, so the fold restarts from the newest one seen.
template <typename V, typename Op, bool DETERMINISTIC>
__device__ __forceinline__ V lookback_before(TileState<V>& state, u32 tile, V filler, V* staged);

template <typename V, typename Op, bool DETERMINISTIC>
__device__ __forceinline__ V lookback_exclusive_prefix(TileState<V>& state, u32 tile, V tile_aggregate, V* staged) {
    V acc = lookback_before<V, Op, DETERMINISTIC>(state, tile, tile_aggregate, staged);
    if ((threadIdx.x & 31) == 0) {
        const V inclusive = Op::apply(acc, tile_aggregate);
        state.publish(tile, DETERMINISTIC ? lookback_settle(inclusive) : inclusive, SCAN_PREFIX);
    }
    return acc;
}

// The look-back itself, publishing nothing: the exclusive prefix of `tile`
// (in lane 0; settled in deterministic mode), from its predecessors alone.
// `filler` (any value) fills the slots before tile 0, which are never
// folded. A warp may call it before its tile's aggregate is known, as long
// as something else publishes that aggregate (copy_if's and scan_by_key's
// look-back warps), and then publish the inclusive prefix itself.
template <typename V, typename Op, bool DETERMINISTIC>
__device__ __forceinline__ V lookback_before(TileState<V>& state, u32 tile, V filler, V* staged) {
    const int lane = threadIdx.x & 31;
    const V tile_aggregate = filler;
    V acc = tile_aggregate;  // meaningful only once have_acc (fast mode) or in lane 0 (deterministic)
    bool have_acc = false;
    int w = 0, stop = 31;
    for (;; w++) {
        const long long t = (long long)tile - 1 - 32 * w - lane;
        // Slots before tile 0 never matter: tile 0 publishes a prefix.
        V v = tile_aggregate;
        const u32 st = t >= 0 ? lookback_wait(state, (u32)t, v) : SCAN_PREFIX;
        const unsigned with_prefix = __ballot_sync(0xffffffffu, t >= 0 && st == SCAN_PREFIX);
        stop = with_prefix ? __ffs(with_prefix) - 1 : 31;
        if constexpr (DETERMINISTIC) {
            if (w < LOOKBACK_WINDOWS) staged[32 * w + lane] = v;
            if (with_prefix) break;
        } else {
            // Ordered tree over lanes stop..0 (older lanes on the left).
#pragma unroll
            for (int off = 1; off < 32; off <<= 1) {
                const V y = cuprim_shfl_down(v, off);
                if (lane + off <= stop) v = Op::apply(y, v);
            }
            acc = have_acc ? Op::apply(v, acc) : v;
            have_acc = true;
            if (with_prefix) break;
        }
    }
    if constexpr (DETERMINISTIC) {
        if (w < LOOKBACK_WINDOWS) {
            __syncwarp();
            if (lane == 0) {
                const int first = 32 * w + stop;
                acc = lookback_fold_staged<V, Op>(staged[first], staged, first - 1);
            }
        } else {
            for (int group = w / LOOKBACK_WINDOWS * LOOKBACK_WINDOWS; group >= 0; group -= LOOKBACK_WINDOWS) {
                __syncwarp();  // lane 0 is done with the previous group
                int newest_prefix = -1;  // staged slot of the newest prefix in this group
#pragma unroll
                for (int k = 0; k < LOOKBACK_WINDOWS; k++) {
                    if (group + k > w) break;
                    const long long t = (long long)tile - 1 - 32 * (group + k) - lane;
                    V v = tile_aggregate;
                    const u32 st = t >= 0 ? state.peek((u32)t, v) : SCAN_PREFIX;
                    staged[32 * k + lane] = v;
                    const unsigned with_prefix = __ballot_sync(0xffffffffu, t >= 0 && st == SCAN_PREFIX);
                    if (with_prefix && newest_prefix < 0) newest_prefix = 32 * k + __ffs(with_prefix) - 1;
                }
                __syncwarp();
                // The oldest group holds the prefix met above, so acc is set
                // before any group without one is folded onto it.
                if (lane == 0) {
                    if (newest_prefix >= 0)
                        acc = lookback_fold_staged<V, Op>(staged[newest_prefix], staged, newest_prefix - 1);
                    else
                        acc = lookback_fold_staged<V, Op>(acc, staged, 32 * LOOKBACK_WINDOWS - 1);
                }
            }
        }
    }
    if constexpr (DETERMINISTIC) {
        if (lane == 0) acc = lookback_settle(acc);
    }
    return acc;
}

// For a kernel whose tiles go by ticket (scan_take_tile) over a buffer of
// `bytes` bytes in tiles of `tile_bytes`: the block asks L2 for tile
// blockIdx.x while thread 0 waits for its ticket. Tickets come near launch
// order and every tile is some block's, so the ticket's loads mostly find
// their lines on the way. Only for inputs larger than what L2 keeps from
// call to call: there the hints are wasted.
// 32 MiB: f32 / u32 in-place sums 2^24 54.5-57.5 / 54.2-55.9 us against 59.9-62.6 / 58.2-61.1 without, 2^26 164 / 165 against 183 / 184; at 2^20-2^22 (in L2) 0.5-2 us slower (H200, benchmarks/runs/h200-scan-prefetch).
constexpr u64 PREFETCH_FROM_BYTES = 32ull << 20;
__device__ __forceinline__ void scan_prefetch_tile(const void* data, u64 tile_bytes, u64 bytes) {
    const u64 first = (u64)blockIdx.x * tile_bytes;
    if (bytes < PREFETCH_FROM_BYTES || first >= bytes) return;
    const u64 end = min(first + tile_bytes, bytes);
    for (u64 b = first + (u64)threadIdx.x * 128; b < end; b += (u64)blockDim.x * 128) cuprim_prefetch_l2((const char*)data + b);
}
// The same for an input expression of n items in tiles of `tile` items:
// only a plain buffer's lines are asked for.
template <typename X> __device__ __forceinline__ void scan_prefetch_input(const X& in, u64 tile, u64 n) {
    if constexpr (X::IS_BUF) scan_prefetch_tile(in.p, tile * sizeof(typename X::item), n * sizeof(typename X::item));
}

// Takes the next tile index; the block that takes the last one resets the
// counter for the next launch on this stream.
__device__ __forceinline__ u32 scan_take_tile(u32* tile_counter, u32 num_tiles, u32* s_tile) {
    if (threadIdx.x == 0) {
        const u32 t = atomicAdd(tile_counter, 1u);
        if (t == num_tiles - 1) *tile_counter = 0;
        *s_tile = t;
    }
    __syncthreads();
    return *s_tile;
}


// One warp's part of a tile's look-back: publishes the tile's total (as its
// prefix for tile 0, else as its aggregate), looks back, publishes the
// inclusive prefix and leaves the tile's exclusive prefix in *s_prefix
// (not written for tile 0). Called by a whole warp; lane 0 publishes.
template <typename V, typename Op, bool DETERMINISTIC>
__device__ __forceinline__ void warp_publish_lookback(u32 tile, V total, u32* status, V* aggregates, V* prefixes,
                                                      V* staged, V* s_prefix) {
    TileState<V> state(status, aggregates, prefixes);
    const int lane = threadIdx.x & 31;
    if (tile == 0) {
        if (lane == 0) state.publish(0u, DETERMINISTIC ? lookback_settle(total) : total, SCAN_PREFIX);
    } else {
        if (lane == 0) state.publish(tile, total, SCAN_AGGREGATE);
        __syncwarp();
        const V p = lookback_exclusive_prefix<V, Op, DETERMINISTIC>(state, tile, total, staged);
        if (lane == 0) *s_prefix = p;
    }
}

// Inclusive scan of one value per lane across a whole warp, in lane order.
template <typename V, typename Op> __device__ __forceinline__ V warp_inclusive_scan(V x) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const V y = cuprim_shfl_up(x, off);
        if (lane >= off) x = Op::apply(y, x);
    }
    return x;
}

// Block-wide scan of one value per thread (in thread order), with two
// block barriers: between them warp 0 scans the warp totals and calls
// warp0(total) (the block's total in lane 0), the place for work on the
// tile's prefix that the whole block then reads. Every thread gets the fold
// of the threads before it (`before`, if any: has_before). Afterwards
// warp_totals (BLOCK / 32 values of shared memory) holds the inclusive scan
// of the warp totals, so warp_totals[BLOCK / 32 - 1] is the block's total.
template <typename V, typename Op, int BLOCK, typename Warp0>
__device__ __forceinline__ void block_scan_then(V value, V* warp_totals, V& before, bool& has_before, Warp0 warp0) {
    constexpr int WARPS = BLOCK / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const V x = warp_inclusive_scan<V, Op>(value);
    if (lane == 31) warp_totals[warp] = x;
    const V before_in_warp = cuprim_shfl_up(x, 1);
    __syncthreads();
    if (warp == 0) {
        const V w = warp_inclusive_scan<V, Op>(lane < WARPS ? warp_totals[lane] : Op::identity());
        if (lane < WARPS) warp_totals[lane] = w;  // now inclusive
        // The total is lane WARPS-1's; lane 0 takes it.
        warp0(cuprim_shfl_down(w, WARPS - 1));
    }
    __syncthreads();
    has_before = false;
    if (warp > 0) {
        before = warp_totals[warp - 1];
        has_before = true;
    }
    if (lane > 0) {
        before = has_before ? Op::apply(before, before_in_warp) : before_in_warp;
        has_before = true;
    }
}

// block_scan_then with the tile's look-back: warp 0 publishes the tile's
// total and looks back before the second barrier. Every thread also gets
// the tile's exclusive prefix (`prefix`, returned true unless tile 0). With
// `seed` (one value in global memory), the scan starts from it: tile 0's
// prefix is *seed and every later tile's includes it.
// Shared memory: warp_totals (BLOCK / 32 values), staged (32 *
// LOOKBACK_WINDOWS values in deterministic mode, else unused), s_prefix.
template <typename V, typename Op, int BLOCK, bool DETERMINISTIC>
__device__ __forceinline__ bool block_scan_lookback(V value, u32 tile, u32* status, V* aggregates, V* prefixes,
                                                    V* warp_totals, V* staged, V* s_prefix, V& before,
                                                    bool& has_before, V& prefix, const V* seed = nullptr) {
    block_scan_then<V, Op, BLOCK>(value, warp_totals, before, has_before, [&](V total) {
        // A seeded scan: tile 0 publishes seed op total, so every later
        // tile's prefix starts with the seed.
        if (seed != nullptr && tile == 0) total = Op::apply(*seed, total);
        warp_publish_lookback<V, Op, DETERMINISTIC>(tile, total, status, aggregates, prefixes, staged, s_prefix);
    });
    if (tile == 0) {
        if (seed == nullptr) return false;
        prefix = *seed;
        return true;
    }
    prefix = *s_prefix;
    return true;
}

// The second pass of a two-pass kernel (scan_two_pass.cu, by_key.cu), which
// folds partials[0 .. tile), the first pass's one value per tile, in place
// of a look-back, in one fixed order for a given tile (the same bits on
// every run):
//   fold_partials_share (every thread): waits for the first pass
//     (cuprim_grid_wait: a dependent launch) and folds a contiguous share
//     of the partials, in order;
//   fold_by_warp (every thread): each warp's shares in lane order, left by
//     lane 0 in warp_prefixes[warp] (BLOCK / 32 values of shared memory);
//   fold_warp_prefixes (warp 0, after a barrier: block_scan_then's warp0):
//     their fold in warp order, in lane 0: the tile's exclusive prefix.
template <typename V, typename Op, int BLOCK>
__device__ __forceinline__ V fold_partials_share(const V* __restrict__ partials, u32 tile) {
    cuprim_grid_wait();
    const u32 per = (tile + BLOCK - 1) / BLOCK;
    const u32 from = per * threadIdx.x, to = min(from + per, tile);
    V pre = Op::identity();
#pragma unroll 4
    for (u32 i = from; i < to; i++) pre = Op::apply(pre, partials[i]);
    return pre;
}

template <typename V, typename Op> __device__ __forceinline__ void fold_by_warp(V share, V* warp_prefixes) {
    const V w = cuprim_warp_reduce_ordered<V, Op>(share);
    if ((threadIdx.x & 31) == 0) warp_prefixes[threadIdx.x >> 5] = w;
}

template <typename V, typename Op, int BLOCK> __device__ __forceinline__ V fold_warp_prefixes(const V* warp_prefixes) {
    const int lane = threadIdx.x & 31;
    return cuprim_warp_reduce_ordered<V, Op>(lane < BLOCK / 32 ? warp_prefixes[lane] : Op::identity());
}
