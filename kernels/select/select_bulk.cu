// copy_if of a plain buffer on sm_90: the block of select.cu (CUPRIM_BLOCK
// compute threads and a look-back warp, select.cuh), but the tile reaches
// shared memory by one bulk copy (cp.async.bulk) instead of through
// registers.
//
// Why: a tile waits for its exclusive prefix until every earlier tile has
// loaded and counted, so a block lives several times as long as its loads
// take (H200, half of 2^28 u32 kept: about 2 us loading, 5 us waiting), and
// what an SM streams is about the bytes its resident tiles hold divided by
// that life. Tiles in registers are capped by the register file (select.cu:
// 12 KiB a block, about 110 KiB an SM); in shared memory they can take
// nearly all of its 228 KiB, and the bulk copy needs no thread to stage them.
//
// - Thread 0 asks for the tile's 16-byte pieces as soon as the tile is
//   taken; the head and tail (fewer than 16 bytes each, where the tile does
//   not start or end on a 16-byte boundary) are loaded one element a
//   thread. The tile lands at its global address modulo 16 bytes.
// - Each compute warp walks its 32 * CUPRIM_ITEMS elements, 16 bytes a lane
//   a step (32 elements a step where the input is not 16-byte aligned),
//   ranks the selected ones with ballots and moves each to its rank within
//   the warp's run, in place: an element's rank is never past its own
//   position, and a batch of steps is read before any of it is written.
// - The counts, the look-back and the stores are select.cu's.
// - With SEL_HEADS (unique) an element is kept where it starts a run: it is
//   the input's first, or KeyEq::differ(the element before, it). The key
//   before a lane's first comes by shuffle, and before a warp's first from
//   global memory, never from a run another warp is compacting.
//
// Specialised on: In (cuprim_x_buf<T>: a plain buffer), T (1, 2, 4, 8 or 16
// bytes), PredFn, SEL_HEADS (as select.cu), C, CUPRIM_BLOCK, CUPRIM_ITEMS
// (elements a compute thread, a multiple of SB_BATCH and of 16-byte
// batches).

#if __CUDA_ARCH__ < 900
#error "select_bulk.cu needs sm_90 (the bulk copy engine); select.cu serves older devices"
#endif
static_assert(In::IS_BUF, "select_bulk.cu reads a plain buffer");
static_assert(sizeof(T) <= 16 && 16 % sizeof(T) == 0, "select_bulk.cu: elements of 1, 2, 4, 8 or 16 bytes");

constexpr int SB_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
constexpr int SB_WARP_TILE = 32 * CUPRIM_ITEMS;
constexpr int SB_VEC = 16 / (int)sizeof(T);  // elements in 16 bytes
// Steps of 32 elements a warp reads before it ranks and moves them (unaligned input).
constexpr int SB_BATCH = 8;
static_assert(CUPRIM_ITEMS % SB_BATCH == 0, "select_bulk.cu: CUPRIM_ITEMS a multiple of SB_BATCH");
// 16-byte steps a warp makes over its elements, and how many are read at once.
constexpr int SB_STEPS = CUPRIM_ITEMS / SB_VEC;
constexpr int SB_VBATCH = sizeof(T) >= 4 ? 4 : (int)sizeof(T);
static_assert(CUPRIM_ITEMS % (SB_VEC * SB_VBATCH) == 0, "select_bulk.cu: CUPRIM_ITEMS a multiple of 16-byte batches");
// Bits of a lane's count in one 16-byte step (0 ..= SB_VEC).
constexpr int sb_count_bits() {
    int b = 1;
    while ((1 << b) <= SB_VEC) b++;
    return b;
}
constexpr int SB_COUNT_BITS = sb_count_bits();

__device__ __forceinline__ u32 sb_smem_addr(const void* p) {
    return (u32)__cvta_generic_to_shared(p);
}

// selected[...]: the elements with PredFn(x, param), in order. rejected is
// never written (partition launches select.cu). The last tile's published
// prefix is the total number selected; the last tile also writes it to
// count_out[0] unless count_out is null.
extern "C" __global__ void __launch_bounds__(SEL_THREADS, CUPRIM_MIN_BLOCKS)
    cuprim_select(CUPRIM_INPUT In in, u64 n, T param, T* __restrict__ selected, T* __restrict__ rejected,
                  u64* count_out, u32* status, C* aggregates, C* prefixes, u32* tile_counter, u32 num_tiles) {
    (void)rejected;
    __shared__ __align__(16) T smem[SB_TILE + SB_VEC];
    __shared__ __align__(8) u64 bar_mem;
    __shared__ u32 warp_counts[SEL_WARPS];
    __shared__ C s_prefix;
    __shared__ u32 s_tile;

    scan_prefetch_input(in, SB_TILE, n);
    const u32 bar = sb_smem_addr(&bar_mem);
    if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
    // The ticket's barrier also makes the initialised mbarrier visible.
    const u32 tile = scan_take_tile(tile_counter, num_tiles, &s_tile);
    const u64 base = (u64)tile * SB_TILE;
    const u64 remaining = n - base;
    const int valid = remaining < (u64)SB_TILE ? (int)remaining : SB_TILE;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    TileState<C> state(status, aggregates, prefixes);

    if (warp == SEL_WARPS) {
        sel_lookback_warp(state, tile, warp_counts, &s_prefix);
        return;
    }

    // The tile at tile_s[0 .. valid): tile_s + head is 16-byte aligned.
    const T* g = in.p + base;
    const int mis = (int)(((unsigned long long)g / sizeof(T)) % SB_VEC);
    const int head = min((SB_VEC - mis) % SB_VEC, valid);
    const int pieces = (valid - head) / SB_VEC;
    const int body_end = head + pieces * SB_VEC;
    T* tile_s = smem + mis;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"((u32)(pieces * 16))
                     : "memory");
        if (pieces > 0)
            asm volatile(
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                    sb_smem_addr(tile_s + head)),
                "l"(g + head), "r"((u32)(pieces * 16)), "r"(bar)
                : "memory");
    }
#if SEL_HEADS
    // unique: the key before this warp's elements, from global memory (the
    // warp before may be compacting its run in place), none before the first.
    const int wbase = warp * SB_WARP_TILE;
    const bool at_start = base + (u64)wbase == 0;
    T carry = T();
    if (!at_start && wbase < valid) carry = cuprim_load_ro(in.p + (base + (u64)wbase - 1));
#endif
    const int r = CUPRIM_BLOCK - 1 - (int)threadIdx.x;
    if (r < SB_VEC) {
        if (r < head) tile_s[r] = cuprim_load_ro(g + r);
        if (body_end + r < valid) tile_s[body_end + r] = cuprim_load_ro(g + body_end + r);
    }
    u32 done = 0;
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(bar)
                     : "memory");
    } while (!done);
    sel_bar_sync(1, CUPRIM_BLOCK);  // the head and tail, stored by other threads

#if !SEL_HEADS
    const int wbase = warp * SB_WARP_TILE;
#endif
    const int wvalid = max(0, min(valid - wbase, SB_WARP_TILE));
    T* run = tile_s + wbase;
    const unsigned lanes_before = (1u << lane) - 1u;
    u32 sel = 0;  // kept by this warp so far
    if (mis == 0) {
        // 16 bytes a lane a step: step i holds warp positions
        // SB_VEC * (32 * i + lane) + k; SB_VBATCH steps are read before any
        // is written.
        for (int i0 = 0; i0 < SB_STEPS; i0 += SB_VBATCH) {
            if (SB_VEC * 32 * i0 >= wvalid) break;
            cuprim_arr<T, SB_VEC> x[SB_VBATCH];
#pragma unroll
            for (int k = 0; k < SB_VBATCH; k++)
                x[k] = *reinterpret_cast<const cuprim_arr<T, SB_VEC>*>(run + SB_VEC * (32 * (i0 + k) + lane));
            __syncwarp();
#pragma unroll
            for (int k = 0; k < SB_VBATCH; k++) {
                const int q0 = SB_VEC * (32 * (i0 + k) + lane);
                u32 mine = 0;
#if SEL_HEADS
                // The key before each: the lane's own, the lane before's
                // last, or (lane 0) the step before's last.
                const T prev0 = sel_key_before(x[k].v[SB_VEC - 1], carry);
#pragma unroll
                for (int e = 0; e < SB_VEC; e++)
                    if (q0 + e < wvalid &&
                        ((at_start && q0 + e == 0) || KeyEq::differ(e == 0 ? prev0 : x[k].v[e - 1], x[k].v[e])))
                        mine |= 1u << e;
#else
#pragma unroll
                for (int e = 0; e < SB_VEC; e++)
                    if (q0 + e < wvalid && PredFn::apply(x[k].v[e], param)) mine |= 1u << e;
#endif
                const u32 c = (u32)__popc(mine);
                u32 before = 0, step = 0;
#pragma unroll
                for (int b = 0; b < SB_COUNT_BITS; b++) {
                    const unsigned bits = __ballot_sync(0xffffffffu, (c >> b) & 1u);
                    before += (u32)__popc(bits & lanes_before) << b;
                    step += (u32)__popc(bits) << b;
                }
                u32 at = sel + before;
#pragma unroll
                for (int e = 0; e < SB_VEC; e++)
                    if (mine & (1u << e)) run[at++] = x[k].v[e];
                sel += step;
            }
        }
    } else {
        // 32 elements a warp a step: step i holds warp positions 32 * i + lane.
        for (int i0 = 0; i0 < CUPRIM_ITEMS; i0 += SB_BATCH) {
            if (32 * i0 >= wvalid) break;
            T x[SB_BATCH];
#pragma unroll
            for (int k = 0; k < SB_BATCH; k++)
                if (32 * (i0 + k) + lane < wvalid) x[k] = run[32 * (i0 + k) + lane];
            __syncwarp();
#pragma unroll
            for (int k = 0; k < SB_BATCH; k++) {
#if SEL_HEADS
                const int q = 32 * (i0 + k) + lane;
                const T prev = sel_key_before(x[k], carry);
                const bool kept = q < wvalid && ((at_start && q == 0) || KeyEq::differ(prev, x[k]));
#else
                const bool kept = 32 * (i0 + k) + lane < wvalid && PredFn::apply(x[k], param);
#endif
                const unsigned bits = __ballot_sync(0xffffffffu, kept);
                if (kept) run[sel + (u32)__popc(bits & lanes_before)] = x[k];
                sel += (u32)__popc(bits);
            }
        }
    }
    u32 tile_count;
    const u32 wsel_before = sel_share_counts(state, tile, sel, warp_counts, tile_count);
    const C tile_prefix = sel_wait_prefix(tile, num_tiles, tile_count, &s_prefix, count_out);
    T* out = selected + (tile_prefix + wsel_before);
    for (int j = lane; j < (int)sel; j += 32) out[j] = run[j];
}
