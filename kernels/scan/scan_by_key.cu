// Segmented inclusive scan over runs of equal consecutive keys, in one pass.
//
// Each element becomes a pair (head, value), head = "a run starts here"
// (i == 0 or keys[i] != keys[i-1]), and the pairs are scanned with
//   (ha, a) . (hb, b) = (ha | hb, hb ? b : a op b),
// an associative (not commutative) operator, through the same tile scan and
// look-back as kernels/scan.cu. The value part is the segmented scan.
//
// Long inputs take scan_by_key_chunks.cu instead (one look-back per chunk
// of many tiles); the tile's staging, pairs and store are shared with it
// (scan_by_key.cuh).
//
// Specialised on: In0 / In1 (the keys and the values: input expressions,
// block/expr.cuh; a buffer is cuprim_x_buf), K / T (their items), ScanOp
// (apply, identity on T), CUPRIM_BLOCK, CUPRIM_ITEMS.

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_scan_by_key(CUPRIM_INPUT In0 keys, CUPRIM_INPUT In1 values, T* out, u64 n, u32* status,
                       SegPair* aggregates, SegPair* prefixes, u32* tile_counter, u32 num_tiles) {
    __shared__ K skeys[SBK_TILE + SBK_TILE / sbk_pad_every(sizeof(K))];
    __shared__ T svals[SBK_TILE + SBK_TILE / sbk_pad_every(sizeof(T))];
    __shared__ SegPair warp_totals[CUPRIM_BLOCK / 32];
    __shared__ SegPair staged[CUPRIM_DETERMINISTIC ? 32 * LOOKBACK_WINDOWS : 1];
    __shared__ SegPair s_prefix;
    __shared__ u32 s_tile;

    const u32 tile = scan_take_tile(tile_counter, num_tiles, &s_tile);
    const u64 base = (u64)tile * SBK_TILE;
    const u64 remaining = n - base;
    const int valid = remaining < (u64)SBK_TILE ? (int)remaining : SBK_TILE;
    const int tid = threadIdx.x;

    const bool whole = valid == SBK_TILE;
    sbk_stage_x(keys, base, skeys, valid, whole);
    sbk_stage_x(values, base, svals, valid, whole);
    __syncthreads();

    SegPair items[CUPRIM_ITEMS];
    const int first = tid * CUPRIM_ITEMS;
    sbk_pairs(keys, skeys, svals, base, valid, items);
    SegPair thread_total = items[0];
#pragma unroll
    for (int k = 1; k < CUPRIM_ITEMS; k++) thread_total = SegOp::apply(thread_total, items[k]);

    SegPair before;
    bool has_before;
    SegPair tile_prefix;
    const bool has_tile_prefix = block_scan_lookback<SegPair, SegOp, CUPRIM_BLOCK, CUPRIM_DETERMINISTIC>(
        thread_total, tile, status, aggregates, prefixes, warp_totals, staged, &s_prefix, before, has_before, tile_prefix);

    bool have = has_tile_prefix;
    SegPair run = has_tile_prefix ? tile_prefix : SegOp::identity();
    if (has_before) {
        run = have ? SegOp::apply(run, before) : before;
        have = true;
    }
#pragma unroll
    for (int k = 0; k < CUPRIM_ITEMS; k++) {
        run = have ? SegOp::apply(run, items[k]) : items[k];
        have = true;
        if (first + k < valid) svals[sbk_pad<T>(first + k)] = run.v;
    }
    __syncthreads();
    sbk_store(svals, out, base, valid);
}
