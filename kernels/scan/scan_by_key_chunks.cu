// scan_by_key of long inputs by chunks: each block takes the next chunk
// (SBK_CHUNK consecutive elements, a whole number of tiles; the index from
// an atomic ticket, so every earlier chunk is running or done and waiting
// on one always ends) and streams it tile by tile, carrying the chunk's
// running (head, value) pair from tile to tile, writing every output as it
// goes. The chunks chain through ONE decoupled look-back each
// (block/lookback.cuh) instead of one per tile.
//
// An output at or after the chunk's first run head depends on nothing
// before the chunk, so it is final when written. Those of the chunk's
// leading partial run (from its start to its first head; the whole chunk
// when it has none) are written as the chunk's own scan and fixed up once
// the look-back gives the prefix p before the chunk: out[i] = p op out[i]
// (p on the LEFT: the operator need not commute). That stretch is read and
// written again: nothing for a chunk that starts with a head, a few
// elements for short runs, the whole chunk for one run longer than it (the
// adversarial input: every output written twice and read once more).
//
// A chunk with a head publishes its trailing run's aggregate at once as
// its inclusive prefix ((ha, a) . (1, b) = (1, b) exactly), before looking
// back, and looks back only if its first element is not a head; the
// look-back of the next chunk then stops at it. Only a chunk without a head
// publishes an aggregate and waits for its inclusive prefix.
//
// Chunk boundaries depend on n and the tile shape alone, never on the GPU,
// and the deterministic look-back folds in a fixed order, so float results
// are the same bits on any GPU and any run (in deterministic mode).
//
// Specialised on: as scan_by_key.cu, plus SBK_CHUNK (elements per chunk).

static_assert(SBK_CHUNK % SBK_TILE == 0, "a chunk is whole tiles");

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_scan_by_key_chunks(CUPRIM_INPUT In0 keys, CUPRIM_INPUT In1 values, T* out, u64 n, u32* status,
                              SegPair* aggregates, SegPair* prefixes, u32* chunk_counter, u32 num_chunks) {
    constexpr int WARPS = CUPRIM_BLOCK / 32;
    __shared__ K skeys[SBK_TILE + SBK_TILE / sbk_pad_every(sizeof(K))];
    __shared__ T svals[SBK_TILE + SBK_TILE / sbk_pad_every(sizeof(T))];
    __shared__ SegPair warp_totals[WARPS];
    __shared__ SegPair staged[CUPRIM_DETERMINISTIC ? 32 * LOOKBACK_WINDOWS : 1];
    __shared__ SegPair s_prefix;
    __shared__ u32 s_chunk;
    __shared__ u32 s_first_head;  // chunk-relative index of the chunk's first head (SBK_CHUNK: none yet)

    if (threadIdx.x == 0) s_first_head = SBK_CHUNK;
    const u32 chunk = scan_take_tile(chunk_counter, num_chunks, &s_chunk);  // its barrier covers s_first_head
    const u64 c0 = (u64)chunk * SBK_CHUNK;
    const u64 c1 = n - c0 < (u64)SBK_CHUNK ? n : c0 + SBK_CHUNK;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int first = threadIdx.x * CUPRIM_ITEMS;

    // The chunk's scan so far (every tile before this one), the same in
    // every thread; `have` false before the first tile.
    SegPair carry = SegOp::identity();
    bool have = false;
    for (u64 base = c0; base < c1; base += SBK_TILE) {
        const int valid = c1 - base < (u64)SBK_TILE ? (int)(c1 - base) : SBK_TILE;
        if (base != c0) __syncthreads();  // the previous tile's store is done with svals
        const bool whole = valid == SBK_TILE;
        sbk_stage_both(keys, values, base, skeys, svals, valid, whole);
        __syncthreads();

        SegPair items[CUPRIM_ITEMS];
        sbk_pairs(keys, skeys, svals, base, valid, items);
        SegPair thread_total = items[0];
#pragma unroll
        for (int k = 1; k < CUPRIM_ITEMS; k++) thread_total = SegOp::apply(thread_total, items[k]);
        // Until the chunk has met a head: where its first one is.
        if (!(have && carry.head)) {
            int head = -1;
#pragma unroll
            for (int k = CUPRIM_ITEMS - 1; k >= 0; k--)
                if (items[k].head) head = k;
            if (head >= 0) atomicMin(&s_first_head, (u32)(base - c0) + first + head);
        }

        // Block scan of the thread totals, no look-back: two barriers.
        const SegPair x = warp_inclusive_scan<SegPair, SegOp>(thread_total);
        if (lane == 31) warp_totals[warp] = x;
        const SegPair before_in_warp = cuprim_shfl_up(x, 1);
        __syncthreads();
        if (warp == 0) {
            const SegPair w = warp_inclusive_scan<SegPair, SegOp>(lane < WARPS ? warp_totals[lane] : SegOp::identity());
            if (lane < WARPS) warp_totals[lane] = w;  // now inclusive
        }
        __syncthreads();

        // carry . (the threads before) . the thread's items.
        bool h = have;
        SegPair run = carry;
        if (warp > 0) {
            run = h ? SegOp::apply(run, warp_totals[warp - 1]) : warp_totals[warp - 1];
            h = true;
        }
        if (lane > 0) {
            run = h ? SegOp::apply(run, before_in_warp) : before_in_warp;
            h = true;
        }
#pragma unroll
        for (int k = 0; k < CUPRIM_ITEMS; k++) {
            run = h ? SegOp::apply(run, items[k]) : items[k];
            h = true;
            if (first + k < valid) svals[sbk_pad<T>(first + k)] = run.v;
        }
        // Past the last tile of the last chunk the total folds identities
        // in; nothing reads that chunk's total's value.
        const SegPair tile_total = warp_totals[WARPS - 1];
        carry = have ? SegOp::apply(carry, tile_total) : tile_total;
        have = true;
        __syncthreads();
        sbk_store(svals, out, base, valid);
    }

    // The chunk's pair: carry (a head in it, the value of its open trailing run).
    __syncthreads();  // s_first_head is final; the block's outputs are written
    const u64 lead_end = c0 + (s_first_head < c1 - c0 ? s_first_head : c1 - c0);
    const bool lead = chunk > 0 && lead_end > c0;
    if (warp == 0) {
        TileState<SegPair> state(status, aggregates, prefixes);
        const bool headed = carry.head != 0;  // chunk 0 always is (element 0)
        if (lane == 0)
            state.publish(chunk, headed && CUPRIM_DETERMINISTIC ? lookback_settle(carry) : carry,
                          headed ? SCAN_PREFIX : SCAN_AGGREGATE);
        if (lead) {
            __syncwarp();
            const SegPair p = lookback_before<SegPair, SegOp, CUPRIM_DETERMINISTIC>(state, chunk, carry, staged);
            if (lane == 0) {
                if (!headed) {
                    const SegPair inclusive = SegOp::apply(p, carry);
                    state.publish(chunk, CUPRIM_DETERMINISTIC ? lookback_settle(inclusive) : inclusive, SCAN_PREFIX);
                }
                s_prefix = p;
            }
        }
    }
    if (lead) {
        __syncthreads();
        const T p = s_prefix.v;
        for (u64 i = c0 + threadIdx.x; i < lead_end; i += CUPRIM_BLOCK) out[i] = ScanOp::apply(p, out[i]);
    }
}
