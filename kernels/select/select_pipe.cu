// Stream compaction in one pass with the next tile's loads in flight:
// copy_if and stable partition of long buffers (src/algo/select/plan.rs
// chooses it over select.cu from SELECT_PIPE_FROM_TILES tiles).
//
// select.cu's tile, ranking and look-back warp (select_tile.cuh), but a
// block takes tile after tile from the tile counter (the grid is one wave
// of resident blocks), so that while it waits for tile t's exclusive prefix
// and writes t out, the loads of its next tile t' are already in flight:
//
// - a tile's input is staged in shared memory by cp.async (sm_80+), in two
//   stages: t in one while t' lands in the other. 16-byte cp.async.cg where
//   the buffer is 16-byte aligned and the warp's part of the tile is whole,
//   else one element per copy. The loads in flight hold no registers.
// - each lane copies exactly the elements it later reads (select.cu's load
//   pattern), so its own cp.async.wait_all is all its reads wait for, and a
//   warp compacts into its own part of the stage it read: the stages are
//   warp-private, never behind a block barrier of their own. A warp's part
//   of the other stage is refilled with t' only after barrier 1 of t, by
//   when all its lanes have written out the tile it held before.
// - the look-back warp takes the tiles: per tile t it hands the compute
//   warps t' (shared, barrier 1, which it arrives at), looks back over t's
//   predecessors, waits for t's count (barrier 2), publishes t's inclusive
//   prefix, takes the ticket after t' (its latency hidden until the next
//   round) and hands over t's prefix (barrier 3);
// - the compute warps, per tile t: wait for t's stage, rank it, meet at
//   barrier 1 (the counts; t'), publish t's aggregate (warp 0), arrive at
//   barrier 2, compact t, issue t''s copies into the other stage (after the
//   compaction, whose items then hold no registers), take t's prefix at
//   barrier 3 and write t out.
//
// Forward progress: tiles are taken in order and only by running blocks,
// which hold at most their current tile, the next and one ticket after. The
// lowest tile without a published aggregate is some block's current tile
// (it publishes after its own loads alone) or its next one, whose current
// tile's look-back then meets only published tiles and ends. So residency
// is never relied on: a block that does not fit takes tiles when it runs.
// Each block takes exactly one ticket past the last tile (it stops there);
// the taker of the last of those, num_tiles + gridDim.x - 1, resets the
// counter for the next launch.
//
// Reads n elements and writes only what is kept; with a second output, the
// rejected elements go to it (a stable partition); the last tile writes the
// count to count_out[0] unless it is null, as select.cu does.
//
// Specialised on: In (a plain buffer, cuprim_x_buf<T>), T (4 or 8 bytes),
// C, PredFn, CUPRIM_BLOCK, CUPRIM_ITEMS (a multiple of 16 / sizeof(T)),
// CUPRIM_MIN_BLOCKS.

#if __CUDA_ARCH__ < 800
#error "select_pipe.cu needs cp.async (sm_80)"
#endif
static_assert(In::IS_BUF, "select_pipe: a plain buffer input");
static_assert(sizeof(T) == 4 || sizeof(T) == 8, "select_pipe: elements of 4 or 8 bytes (one cp.async each)");
static_assert(SEL_VEC * (int)sizeof(T) == 16, "select_pipe: whole 16-byte vectors per lane and round");

__device__ __forceinline__ u32 selp_smem(const void* s) {
    return (u32)__cvta_generic_to_shared(s);
}

// This lane's elements of a warp's part of a tile (wvalid of them valid,
// maybe <= 0) from g into s, both the part's first element, as one cp.async
// group: 16 bytes a copy when ALIGNED (g 16-byte aligned) and the part is
// whole, else one element a copy.
__device__ __forceinline__ void selp_stage(T* s, const T* g, int wvalid, bool aligned) {
    const int lane = threadIdx.x & 31;
    if (aligned && wvalid >= SEL_WARP_TILE) {
#pragma unroll
        for (int r = 0; r < SEL_ROUNDS; r++) {
            const int q = r * 32 * SEL_VEC + lane * SEL_VEC;
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(selp_smem(s + q)), "l"(g + q) : "memory");
        }
    } else {
#pragma unroll
        for (int r = 0; r < SEL_ROUNDS; r++) {
#pragma unroll
            for (int k = 0; k < SEL_VEC; k++) {
                const int q = r * 32 * SEL_VEC + lane * SEL_VEC + k;
                if (q < wvalid)
                    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(selp_smem(s + q)), "l"(g + q),
                                 "n"((int)sizeof(T))
                                 : "memory");
            }
        }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

// Valid elements of tile `tile` (SEL_TILE but for the last).
__device__ __forceinline__ int selp_valid(u64 n, u32 tile) {
    const u64 remaining = n - (u64)tile * SEL_TILE;
    return remaining < (u64)SEL_TILE ? (int)remaining : SEL_TILE;
}

// As select.cu's cuprim_select; launched with any grid (one wave of
// resident blocks is the intent), each block taking tiles until none is left.
extern "C" __global__ void __launch_bounds__(SEL_THREADS, CUPRIM_MIN_BLOCKS)
    cuprim_select_pipe(CUPRIM_INPUT In in, u64 n, T param, T* __restrict__ selected, T* __restrict__ rejected,
                       u64* count_out, u32* status, C* aggregates, C* prefixes, u32* tile_counter, u32 num_tiles) {
    __shared__ __align__(16) T stage[2][SEL_TILE];
    __shared__ u32 warp_counts[SEL_WARPS];
    __shared__ C s_prefix;
    __shared__ u32 s_first, s_next;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u32 last_ticket = num_tiles + gridDim.x - 1;

    if (threadIdx.x == CUPRIM_BLOCK) {
        const u32 k = atomicAdd(tile_counter, 1u);
        if (k == last_ticket) *tile_counter = 0;
        s_first = k;
    }
    __syncthreads();
    u32 t = s_first;
    if (t >= num_tiles) return;

    if (warp == SEL_WARPS) {
        // The look-back warp. `ticket` (lane 0): the tile after t, taken a
        // round ahead.
        TileState<C> state(status, aggregates, prefixes);
        u32 ticket = 0;
        if (lane == 0) ticket = atomicAdd(tile_counter, 1u);
        while (true) {
            if (lane == 0) {
                if (ticket == last_ticket) *tile_counter = 0;
                s_next = ticket;
            }
            const u32 next = __shfl_sync(0xffffffffu, ticket, 0);
            __syncwarp();
            sel_bar_arrive(1, SEL_THREADS);
            C before = 0;
            if (t > 0) before = lookback_before<C, CountOp, false>(state, t, (C)0, nullptr);
            sel_bar_sync(2, SEL_THREADS);
            if (lane == 0) {
                if (t > 0) {
                    C total = 0;
#pragma unroll
                    for (int w = 0; w < SEL_WARPS; w++) total += (C)warp_counts[w];
                    // After warp 0's aggregate (ordered by barrier 2): the tile's last word.
                    state.publish(t, before + total, SCAN_PREFIX);
                    s_prefix = before;
                }
                // The tile after next, while the compute warps finish t and rank next.
                if (next < num_tiles) ticket = atomicAdd(tile_counter, 1u);
            }
            __syncwarp();
            sel_bar_arrive(3, SEL_THREADS);
            if (next >= num_tiles) return;
            t = next;
        }
    }

    // The compute warps: this warp's part of each tile is positions wbase ..
    // wbase + SEL_WARP_TILE - 1 (as select.cu's).
    const int wbase = warp * SEL_WARP_TILE;
    const bool aligned = in.template misalign<SEL_VEC>() == 0;
    TileState<C> state(status, aggregates, prefixes);
    int cur = 0;
    selp_stage(stage[0] + wbase, in.p + ((u64)t * SEL_TILE + wbase), selp_valid(n, t) - wbase, aligned);
    while (true) {
        const u64 base = (u64)t * SEL_TILE;
        const int wvalid = selp_valid(n, t) - wbase;  // may be <= 0 or past SEL_WARP_TILE
        T* run = stage[cur] + wbase;
        T items[CUPRIM_ITEMS];
        u32 keep = 0;  // bit r * SEL_VEC + k: items[r * SEL_VEC + k] is selected
        // Only this lane's own copies are read: its wait is enough.
        asm volatile("cp.async.wait_all;" ::: "memory");
        // Every item is read, valid or not (a stale or unwritten slot of
        // this warp's part of the stage past a tail): an item left unset
        // would keep its register live from the round before.
#pragma unroll
        for (int r = 0; r < SEL_ROUNDS; r++) {
            const cuprim_vec<T, SEL_VEC> x = *(const cuprim_vec<T, SEL_VEC>*)(run + r * 32 * SEL_VEC + lane * SEL_VEC);
#pragma unroll
            for (int k = 0; k < SEL_VEC; k++) items[r * SEL_VEC + k] = x.v[k];
        }
        if (wvalid >= SEL_WARP_TILE) {
#pragma unroll
            for (int j = 0; j < CUPRIM_ITEMS; j++)
                if (PredFn::apply(items[j], param)) keep |= 1u << j;
        } else {
#pragma unroll
            for (int r = 0; r < SEL_ROUNDS; r++) {
#pragma unroll
                for (int k = 0; k < SEL_VEC; k++) {
                    const int q = r * 32 * SEL_VEC + lane * SEL_VEC + k;
                    if (q < wvalid && PredFn::apply(items[r * SEL_VEC + k], param)) keep |= 1u << (r * SEL_VEC + k);
                }
            }
        }
        const u32 wcount = sel_warp_sum(__popc(keep));
        if (lane == 0) warp_counts[warp] = wcount;
        // The counts, and the next tile from the look-back warp.
        sel_bar_sync(1, SEL_THREADS);
        const u32 next = s_next;
        u32 wsel_before = 0, tile_count = 0;
#pragma unroll
        for (int w = 0; w < SEL_WARPS; w++) {
            const u32 c = warp_counts[w];
            if (w < warp) wsel_before += c;
            tile_count += c;
        }
        if (warp == 0 && lane == 0) state.publish(t, (C)tile_count, t == 0 ? SCAN_PREFIX : SCAN_AGGREGATE);
        sel_bar_arrive(2, SEL_THREADS);

        // t's compaction, then the next tile's loads into the other stage
        // (this warp wrote its part of it out last round, before barrier 1).
        sel_compact(run, items, keep, wcount, wvalid, rejected != nullptr, lane);
        if (next < num_tiles)
            selp_stage(stage[cur ^ 1] + wbase, in.p + ((u64)next * SEL_TILE + wbase), selp_valid(n, next) - wbase,
                       aligned);
        __syncwarp();
        sel_bar_sync(3, SEL_THREADS);

        const C tile_prefix = t == 0 ? (C)0 : s_prefix;
        if (count_out != nullptr && t == num_tiles - 1 && threadIdx.x == 0) *count_out = (u64)(tile_prefix + tile_count);
        sel_write_run(run, selected, rejected, tile_prefix, base, wbase, wsel_before, wcount, wvalid, lane);
        if (next >= num_tiles) return;
        t = next;
        cur ^= 1;
    }
}
