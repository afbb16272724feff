// Single-pass scan: each tile is loaded with coalesced 16-byte loads,
// transposed through shared memory (16-byte accesses both ways) so each
// thread scans CUPRIM_ITEMS consecutive elements, scanned per warp and per
// block, chained to earlier tiles by the look-back of kernels/block/lookback.cuh,
// and stored the same way (the tile: scan_tile.cuh). About 2n bytes of
// traffic: a copy's worth. Inputs that L2 holds between two passes take
// scan_two_pass.cu instead.
//
// T may be a tuple (cuprim_t2 / cuprim_t3 of an expression such as a zip):
// a size that divides 16 moves in 16-byte vectors as an element does; any
// other (3, 6, 12 or 24 bytes) one value at a time (SCAN_VEC 1). With
// CUPRIM_SCAN_UNZIP (2 or 3) each field of the scan goes to its own array,
// in vectors of SCAN_VEC values per field where the tile is whole.
//
// `seed` (nullptr for a plain scan) starts the scan from a value in device
// memory: out[i] = seed op x[0] op ... (the sharded scan's carry from the
// shards before); always nullptr when unzipping.
//
// Specialised on: In (the input expression, block/expr.cuh; a plain buffer is
// cuprim_x_buf<T>), T (its element or tuple), ScanOp (apply, identity),
// CUPRIM_BLOCK, CUPRIM_ITEMS, CUPRIM_SCAN_UNZIP (defined only when unzipping).

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_scan(CUPRIM_INPUT In in, CUPRIM_SCAN_OUT, u64 n, int exclusive, u32* status, T* aggregates, T* prefixes,
                u32* tile_counter, u32 num_tiles, const T* __restrict__ seed) {
    __shared__ ScanVec smem[SCAN_TILE / SCAN_VEC];
    __shared__ T warp_totals[SCAN_WARPS];
    __shared__ T staged[CUPRIM_DETERMINISTIC ? 32 * LOOKBACK_WINDOWS : 1];
    __shared__ T s_prefix;
    __shared__ u32 s_tile;

#if CUPRIM_SCAN_UNZIP
    const scan_out_fields<T> out(out0, out1, out2);
#endif
    scan_prefetch_input(in, SCAN_TILE, n);
    const u32 tile = scan_take_tile(tile_counter, num_tiles, &s_tile);
    const ScanTileAt at(tile, n);
#if CUPRIM_SCAN_UNZIP == 0
    const bool full = at.valid == SCAN_TILE && scan_vectors_at(in, at.base) && cuprim_aligned_to<ScanVec>(out + at.base);
#else
    const bool full = at.valid == SCAN_TILE && scan_vectors_at(in, at.base) && out.vectors_at(at.base);
#endif
    scan_load_tile(in, at, full, smem, [] {});
    ScanVec* wsmem = at.wsmem(smem);
    const T thread_total = scan_thread_total(wsmem);

    // Block scan of the thread totals and the tile's prefix from the look-back.
    T before, tile_prefix;
    bool has_before;
    const bool has_tile_prefix = block_scan_lookback<T, ScanOp, CUPRIM_BLOCK, CUPRIM_DETERMINISTIC>(
        thread_total, tile, status, aggregates, prefixes, warp_totals, staged, &s_prefix, before, has_before, tile_prefix,
        seed);
    scan_thread_elements(wsmem, has_tile_prefix, tile_prefix, has_before, before, exclusive);
    scan_store_tile(out, at, full, smem);
}
