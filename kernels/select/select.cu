// Stream compaction in one pass: copy_if and stable partition.
//
// Like kernels/scan.cu, but what is scanned is the number of selected
// elements, and the look-back has a warp of its own. A block is
// CUPRIM_BLOCK compute threads plus one look-back warp (select.cuh, shared
// with select_bulk.cu, which copy_if of a large plain buffer takes on sm_90):
//
// - each compute warp loads its 32 * CUPRIM_ITEMS consecutive elements of
//   the tile into registers (16-byte loads where the input allows), ranks
//   them with ballots (no block scan of the flags) and compacts them into
//   its own run of shared memory: selected first, rejected after them, each
//   in input order;
// - the compute warps meet once (named barrier 1) to learn the tile's count
//   and their offsets in it; warp 0 publishes the tile's aggregate at once;
// - the look-back warp starts on the predecessors as soon as the tile is
//   taken, while the compute warps load, so the tile's exclusive prefix is
//   usually known by the time they have compacted; it publishes the
//   inclusive prefix once the tile's count is known (barrier 2) and hands
//   the prefix to the compute warps (barrier 3), which then write their runs
//   as contiguous, coalesced stores.
//
// Reads n elements and writes only what is kept. With a second output, the
// rejected elements go to it the same way (a stable partition).
//
// Two passes (SEL_TWO_PASS, for inputs L2 holds between them):
// cuprim_select_counts counts each tile's kept elements, then cuprim_select
// takes tile blockIdx.x and its look-back warp adds the counts before it
// instead of looking back (sel_counts_warp); no tile waits for another.
// `status` is then the counts, and aggregates, prefixes and tile_counter go
// unused. On sm_90 the second launch is a dependent one: the look-back warp
// waits for the counts (cuprim_grid_wait), and the compute warps, whose
// loads go before, store only after it (barrier 3).
//
// Specialised on: In (the input expression, block/expr.cuh; a plain buffer is
// cuprim_x_buf<T>), T (its element), PredFn (bool apply(T x, T p)), SEL_HEADS
// (1: unique, which keeps the run heads, KeyEq::differ(the element before,
// it), instead; K = T), SEL_TWO_PASS (select.cuh), CUPRIM_BLOCK (compute
// threads, a multiple of 32), CUPRIM_ITEMS (at most 32).

constexpr int SEL_WARP_TILE = 32 * CUPRIM_ITEMS;
constexpr int SEL_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
static_assert(CUPRIM_ITEMS <= 32, "select: at most 32 items a thread");

// Elements per load: the widest power of two of at most 16 bytes dividing CUPRIM_ITEMS.
constexpr int sel_vec() {
    int v = 16 / (int)sizeof(T);
    if (v < 1) v = 1;
    while (CUPRIM_ITEMS % v != 0) v /= 2;
    return v;
}
constexpr int SEL_VEC = sel_vec();
constexpr int SEL_ROUNDS = CUPRIM_ITEMS / SEL_VEC;
// Bits of a lane's count in one round (0 ..= SEL_VEC).
constexpr int sel_count_bits() {
    int b = 1;
    while ((1 << b) <= SEL_VEC) b++;
    return b;
}
constexpr int SEL_COUNT_BITS = sel_count_bits();

// This warp's elements of the tile at `base` into items, and which of them
// are kept (returned: bit j for items[j]; PredFn, or with SEL_HEADS the run
// heads). The warp's elements are tile positions wbase .. wbase +
// SEL_WARP_TILE - 1, of which wvalid (may be <= 0 or past SEL_WARP_TILE)
// exist; round r of lane l holds warp positions r * 32 * SEL_VEC + l *
// SEL_VEC + k.
template <typename X>
__device__ __forceinline__ u32 sel_load_keep(const X& in, u64 base, int wbase, int wvalid, T param, T (&items)[CUPRIM_ITEMS]) {
    const int lane = threadIdx.x & 31;
    u32 keep = 0;  // bit r * SEL_VEC + k: items[r * SEL_VEC + k] is selected
    const u32 in_misalign = in.template misalign<SEL_VEC>();
    if (wvalid >= SEL_WARP_TILE && (in_misalign == 0 || in_misalign == CUPRIM_X_ANY)) {
#pragma unroll
        for (int r = 0; r < SEL_ROUNDS; r++) {
            const cuprim_arr<T, SEL_VEC> x =
                in.template load_n<SEL_VEC>(base + (u64)(wbase + r * 32 * SEL_VEC + lane * SEL_VEC));
#pragma unroll
            for (int k = 0; k < SEL_VEC; k++) items[r * SEL_VEC + k] = x.v[k];
        }
#if !SEL_HEADS
#pragma unroll
        for (int j = 0; j < CUPRIM_ITEMS; j++)
            if (PredFn::apply(items[j], param)) keep |= 1u << j;
#endif
    } else {
#pragma unroll
        for (int r = 0; r < SEL_ROUNDS; r++) {
#pragma unroll
            for (int k = 0; k < SEL_VEC; k++) {
                const int q = r * 32 * SEL_VEC + lane * SEL_VEC + k;
                if (q < wvalid) {
                    items[r * SEL_VEC + k] = in.load(base + (u64)(wbase + q));
#if !SEL_HEADS
                    if (PredFn::apply(items[r * SEL_VEC + k], param)) keep |= 1u << (r * SEL_VEC + k);
#endif
                }
            }
        }
    }
#if SEL_HEADS
    {
        // unique: the run heads. The key before a lane's first comes from
        // the lane before (or, lane 0, the round before), and before the
        // warp's first from the input (none before the input's first).
        const u64 wstart = base + (u64)wbase;
        T carry = T();
        if (wstart > 0 && wvalid > 0) carry = in.load(wstart - 1);
#pragma unroll
        for (int r = 0; r < SEL_ROUNDS; r++) {
            const T prev0 = sel_key_before(items[r * SEL_VEC + SEL_VEC - 1], carry);
#pragma unroll
            for (int k = 0; k < SEL_VEC; k++) {
                const int q = r * 32 * SEL_VEC + lane * SEL_VEC + k;
                const int j = r * SEL_VEC + k;
                if (q < wvalid && (wstart + (u64)q == 0 || KeyEq::differ(k == 0 ? prev0 : items[j - 1], items[j])))
                    keep |= 1u << j;
            }
        }
    }
#endif
    return keep;
}

// selected[...]: the elements with PredFn(x, param), in order.
// rejected (may be null): the others, in order.
// The last tile's published prefix is the total number selected; the last
// tile also writes it to count_out[0] unless count_out is null.
extern "C" __global__ void __launch_bounds__(SEL_THREADS, CUPRIM_MIN_BLOCKS)
    cuprim_select(CUPRIM_INPUT In in, u64 n, T param, T* __restrict__ selected, T* __restrict__ rejected,
                  u64* count_out, u32* status, C* aggregates, C* prefixes, u32* tile_counter, u32 num_tiles) {
    __shared__ T smem[SEL_TILE];
    __shared__ u32 warp_counts[SEL_WARPS];
    __shared__ C s_prefix;
    __shared__ u32 s_tile;

#if SEL_TWO_PASS
    const u32 tile = blockIdx.x;
#else
    scan_prefetch_input(in, SEL_TILE, n);
    const u32 tile = scan_take_tile(tile_counter, num_tiles, &s_tile);
#endif
    const u64 base = (u64)tile * SEL_TILE;
    const u64 remaining = n - base;
    const int valid = remaining < (u64)SEL_TILE ? (int)remaining : SEL_TILE;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    TileState<C> state(status, aggregates, prefixes);

    if (warp == SEL_WARPS) {
#if SEL_TWO_PASS
        sel_counts_warp(status, tile, &s_prefix);
#else
        sel_lookback_warp(state, tile, warp_counts, &s_prefix);
#endif
        return;
    }

    // This warp's elements: tile positions wbase .. wbase + SEL_WARP_TILE - 1.
    const int wbase = warp * SEL_WARP_TILE;
    const int wvalid = valid - wbase;  // may be <= 0 or past SEL_WARP_TILE
    T items[CUPRIM_ITEMS];
    const u32 keep = sel_load_keep(in, base, wbase, wvalid, param, items);
    const u32 wcount = sel_warp_sum(__popc(keep));
    u32 tile_count;
    const u32 wsel_before = sel_share_counts(state, tile, wcount, warp_counts, tile_count);

    // Compact into this warp's run: a selected element at its rank among
    // the warp's selected, a rejected one after all of those, at its rank
    // among the rejected (positions before it less selected before it).
    T* run = smem + wbase;
    const unsigned lanes_before = (1u << lane) - 1u;
    u32 sel = 0;  // selected in earlier rounds
#pragma unroll
    for (int r = 0; r < SEL_ROUNDS; r++) {
        const u32 mine = (keep >> (r * SEL_VEC)) & ((1u << SEL_VEC) - 1u);
        const u32 c = __popc(mine);
        u32 lane_before = 0, round = 0;
#pragma unroll
        for (int b = 0; b < SEL_COUNT_BITS; b++) {
            const unsigned bits = __ballot_sync(0xffffffffu, (c >> b) & 1u);
            lane_before += (u32)__popc(bits & lanes_before) << b;
            round += (u32)__popc(bits) << b;
        }
        u32 s = sel + lane_before;
#pragma unroll
        for (int k = 0; k < SEL_VEC; k++) {
            const int q = r * 32 * SEL_VEC + lane * SEL_VEC + k;
            if (mine & (1u << k)) {
                run[s++] = items[r * SEL_VEC + k];
            } else if (rejected != nullptr && q < wvalid) {
                run[wcount + (u32)q - s] = items[r * SEL_VEC + k];
            }
        }
        sel += round;
    }
    const C tile_prefix = sel_wait_prefix(tile, num_tiles, tile_count, &s_prefix, count_out);
    T* out = selected + (tile_prefix + wsel_before);
    for (int j = lane; j < (int)wcount; j += 32) out[j] = run[j];
    if (rejected != nullptr && wvalid > 0) {
        const int wtotal = wvalid < SEL_WARP_TILE ? wvalid : SEL_WARP_TILE;
        // Rejected before this warp: the tile's earlier positions (all valid) less those selected.
        T* rout = rejected + ((base - tile_prefix) + (u64)(wbase - (int)wsel_before));
        for (int j = lane; j < wtotal - (int)wcount; j += 32) rout[j] = run[wcount + j];
    }
}

// counts[t]: how many of tile t's elements are kept (the first of the two
// passes; the compute warps alone).
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_select_counts(CUPRIM_INPUT In in, u64 n, T param, u32* __restrict__ counts) {
    __shared__ u32 warp_counts[SEL_WARPS];
    // cuprim_select (a dependent launch) may be scheduled into the room this
    // grid leaves; its look-back warp waits for this grid's end.
    cuprim_grid_launch_dependents();
    const u32 tile = blockIdx.x;
    const u64 base = (u64)tile * SEL_TILE;
    const u64 remaining = n - base;
    const int valid = remaining < (u64)SEL_TILE ? (int)remaining : SEL_TILE;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int wbase = warp * SEL_WARP_TILE;
    T items[CUPRIM_ITEMS];
    const u32 keep = sel_load_keep(in, base, wbase, valid - wbase, param, items);
    const u32 wcount = sel_warp_sum(__popc(keep));
    if (lane == 0) warp_counts[warp] = wcount;
    __syncthreads();
    if (threadIdx.x == 0) {
        u32 total = 0;
#pragma unroll
        for (int w = 0; w < SEL_WARPS; w++) total += warp_counts[w];
        counts[tile] = total;
    }
}
