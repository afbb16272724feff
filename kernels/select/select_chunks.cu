// copy_if and stable partition of long inputs by chunks, two passes over
// each chunk: the first counts what is kept, the second (after one
// look-back per chunk) reads the chunk again, from L2, and writes it out.
//
// select.cu holds a tile in registers while its look-back waits on the
// tiles before, so the wait holds the registers and the warps. Here a
// block takes a chunk of SC_CHUNK elements from a ticket and
//
// - pass 1: each warp counts the selected elements of its own stretch of
//   the chunk (32 consecutive items a lane, as whole vectors, every load in
//   flight at once); no barrier until the chunk's count;
// - warp 0 publishes the chunk's count and looks back once
//   (block/chunk_lookback.cuh): the chunks before have published their
//   counts after their own first pass, which waits on nothing;
// - pass 2: each warp reads its stretch again (the chunks in flight are a
//   few MiB, so the reads hit L2), ranks the selected elements with one warp
//   scan per round, compacts them (and the rejected ones after them) into
//   its own shared memory and writes them as contiguous runs at the offset
//   the look-back gave plus the counts of the warps before it.
//
// DRAM traffic is what select.cu moves: the input once, the outputs once.
//
// Specialised on: In (the input expression, block/expr.cuh), T (its
// element), PredFn (bool apply(T x, T p)), CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS.

constexpr int SC_WARPS = CUPRIM_BLOCK / 32;
// A lane's elements of a chunk: 32 (one bit each in a mask), as vectors
// of 16 bytes of the input's widest buffer.
constexpr int SC_ITEMS = 32;
constexpr int SC_VEC = cuprim_x_items<In>() < SC_ITEMS ? cuprim_x_items<In>() : SC_ITEMS;
constexpr int SC_ROUNDS = SC_ITEMS / SC_VEC;
constexpr int SC_WARP_CHUNK = 32 * SC_ITEMS;
constexpr int SC_CHUNK = CUPRIM_BLOCK * SC_ITEMS;
static_assert(SC_ITEMS % SC_VEC == 0, "whole vectors per lane");

// selected / rejected (may be null): as select.cu. state[0 .. chunks):
// zeroed look-back words; ticket: zero, left zero. The last chunk writes
// the number selected to count_out[0] unless it is null.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_select_chunks(CUPRIM_INPUT In in, u64 n, T param, T* __restrict__ selected, T* __restrict__ rejected,
                         u64* count_out, u64* state, u32* ticket, u32 chunks) {
    __shared__ T runs[SC_WARPS][SC_WARP_CHUNK];
    __shared__ u32 s_counts[SC_WARPS];
    __shared__ u64 s_prefix;
    __shared__ u32 s_chunk;

    const u32 me = scan_take_tile(ticket, chunks, &s_chunk);
    const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
    // This warp's stretch [w0, w0 + wvalid); round r of lane l holds
    // stretch positions r * 32 * SC_VEC + l * SC_VEC + k, k < SC_VEC.
    const u64 w0 = (u64)me * SC_CHUNK + (u64)warp * SC_WARP_CHUNK;
    const int wvalid = w0 >= n ? 0 : (n - w0 < (u64)SC_WARP_CHUNK ? (int)(n - w0) : SC_WARP_CHUNK);
    const u32 m = in.template misalign<SC_VEC>();
    const bool whole = wvalid == SC_WARP_CHUNK && (m == 0 || m == CUPRIM_X_ANY);

    // The lane's items and which of them are selected (bit r * SC_VEC + k).
    auto load = [&](T (&x)[SC_ITEMS]) -> u32 {
        u32 keep = 0;
        if (whole) {
#pragma unroll
            for (int r = 0; r < SC_ROUNDS; r++) {
                const cuprim_arr<T, SC_VEC> v = in.template load_n<SC_VEC>(w0 + (u64)(r * 32 * SC_VEC + lane * SC_VEC));
#pragma unroll
                for (int k = 0; k < SC_VEC; k++) x[r * SC_VEC + k] = v.v[k];
            }
#pragma unroll
            for (int j = 0; j < SC_ITEMS; j++)
                if (PredFn::apply(x[j], param)) keep |= 1u << j;
        } else {
#pragma unroll
            for (int r = 0; r < SC_ROUNDS; r++) {
#pragma unroll
                for (int k = 0; k < SC_VEC; k++) {
                    const int q = r * 32 * SC_VEC + lane * SC_VEC + k;
                    if (q < wvalid) {
                        x[r * SC_VEC + k] = in.load(w0 + (u64)q);
                        if (PredFn::apply(x[r * SC_VEC + k], param)) keep |= 1u << (r * SC_VEC + k);
                    }
                }
            }
        }
        return keep;
    };

    // Pass 1: the stretch's count.
    u32 wcount;
    {
        T x[SC_ITEMS];
        wcount = cuprim_warp_inclusive_sum((u32)__popc(load(x)));
        wcount = __shfl_sync(0xffffffffu, wcount, 31);
    }
    if (lane == 0) s_counts[warp] = wcount;
    __syncthreads();
    u32 before = 0, total = 0;
#pragma unroll
    for (int w = 0; w < SC_WARPS; w++) {
        const u32 c = s_counts[w];
        before += w < warp ? c : 0;
        total += c;
    }
    if (warp == 0) {
        const u64 prefix = cuprim_chunk_lookback(state, me, total);
        if (lane == 0) {
            s_prefix = prefix;
            if (me == chunks - 1 && count_out != nullptr) *count_out = prefix + total;
        }
    }
    __syncthreads();
    if (wvalid == 0) return;
    const u64 out_at = s_prefix + before;

    // Pass 2: read again, compact into the warp's run (selected first, then
    // rejected, each in input order), write both out.
    T x[SC_ITEMS];
    const u32 keep = load(x);
    T* run = runs[warp];
    u32 sel = 0;  // selected in earlier rounds
#pragma unroll
    for (int r = 0; r < SC_ROUNDS; r++) {
        const u32 mine = (keep >> (r * SC_VEC)) & ((1u << SC_VEC) - 1u);
        const u32 c = (u32)__popc(mine);
        const u32 incl = cuprim_warp_inclusive_sum(c);
        u32 s = sel + incl - c;
#pragma unroll
        for (int k = 0; k < SC_VEC; k++) {
            const int q = r * 32 * SC_VEC + lane * SC_VEC + k;
            if (mine & (1u << k)) {
                run[s++] = x[r * SC_VEC + k];
            } else if (rejected != nullptr && q < wvalid) {
                run[wcount + (u32)q - s] = x[r * SC_VEC + k];
            }
        }
        sel += __shfl_sync(0xffffffffu, incl, 31);
    }
    __syncwarp();
    T* out = selected + out_at;
    for (int j = lane; j < (int)wcount; j += 32) out[j] = run[j];
    if (rejected != nullptr) {
        // Rejected before this warp: the positions before w0 less those selected.
        T* rout = rejected + (w0 - out_at);
        for (int j = lane; j < wvalid - (int)wcount; j += 32) rout[j] = run[wcount + j];
    }
}
