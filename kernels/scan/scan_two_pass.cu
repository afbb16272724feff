// Two-pass scan (reduce, then scan) for inputs that stay in L2 between the
// passes: cuprim_scan_partials folds each tile to one value, and
// cuprim_scan_apply scans each tile again from the fold of the partials
// before it. No tile waits for another, so a launch of one wave neither
// queues its stores behind every load of the wave (the single-pass scan's
// look-back at these sizes) nor takes its tiles by ticket; the second read
// of the input comes from L2. Tiles, loads, the transpose through shared
// memory and the stores are scan.cu's (scan_tile.cuh); the result is the
// same bits on every run (one fixed order of folding for a given length).
//
// Specialised on: In (the input expression, block/expr.cuh), T (its
// element), ScanOp (apply, identity), CUPRIM_BLOCK, CUPRIM_ITEMS,
// CUPRIM_MIN_BLOCKS. Elements only (no CUPRIM_SCAN_UNZIP).

// partials[t]: the fold of tile t's elements, in order.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_scan_partials(CUPRIM_INPUT In in, u64 n, T* __restrict__ partials) {
    __shared__ ScanVec smem[SCAN_TILE / SCAN_VEC];
    // cuprim_scan_apply (a dependent launch) may be scheduled into the room
    // this grid leaves; it waits for this grid's end before it reads a partial.
    cuprim_grid_launch_dependents();
    const u32 tile = blockIdx.x;
    const ScanTileAt at(tile, n);
    const bool full = at.valid == SCAN_TILE && scan_vectors_at(in, at.base);
    scan_load_tile(in, at, full, smem, [] {});
    const T total = cuprim_block_reduce_ordered<T, ScanOp, CUPRIM_BLOCK>(scan_thread_total(at.wsmem(smem)));
    if (threadIdx.x == 0) partials[tile] = total;
}

// out: the scan of tile blockIdx.x, from seed (if not null) and the fold of
// partials[0 .. tile). A dependent launch (src/device/launch.rs): the tile's
// loads are issued before cuprim_grid_wait(), since cuprim_scan_partials only
// reads the input and everything queued before it has ended; the partials,
// the seed and every store come after it.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_scan_apply(CUPRIM_INPUT In in, T* out, u64 n, int exclusive, const T* __restrict__ partials,
                      const T* __restrict__ seed) {
    __shared__ ScanVec smem[SCAN_TILE / SCAN_VEC];
    __shared__ T warp_totals[SCAN_WARPS];
    __shared__ T warp_prefixes[SCAN_WARPS];
    __shared__ T s_prefix;
    const u32 tile = blockIdx.x;
    const ScanTileAt at(tile, n);
    const bool full = at.valid == SCAN_TILE && scan_vectors_at(in, at.base) && cuprim_aligned_to<ScanVec>(out + at.base);

    // The partials before the tile, folded while the tile's loads are in
    // flight (between the loads and their stores to shared memory).
    T pre;
    scan_load_tile(in, at, full, smem, [&] { pre = fold_partials_share<T, ScanOp, CUPRIM_BLOCK>(partials, tile); });
    fold_by_warp<T, ScanOp>(pre, warp_prefixes);

    T before;
    bool has_before;
    block_scan_then<T, ScanOp, CUPRIM_BLOCK>(scan_thread_total(at.wsmem(smem)), warp_totals, before, has_before, [&](T) {
        const T p = fold_warp_prefixes<T, ScanOp, CUPRIM_BLOCK>(warp_prefixes);
        if (at.lane == 0) s_prefix = seed != nullptr ? ScanOp::apply(*seed, p) : p;
    });
    scan_thread_elements(at.wsmem(smem), tile > 0 || seed != nullptr, s_prefix, has_before, before, exclusive);
    scan_store_tile(out, at, full, smem);
}
