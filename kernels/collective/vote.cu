// Vote: a packed bitmask of a predicate. Word w of the output holds
// elements 32 w .. 32 w + 31: bit b is set iff PredFn(in[32 w + b], p); the
// bits of the last word past n are zero.
// Specialised on: In (the input expression, block/expr.cuh; a plain buffer
// is cuprim_x_buf<T>), T (its element), PredFn (bool apply(T x, T p)),
// CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS, CUPRIM_UNROLL.
//
// An input on a 16-byte boundary (an expression: its buffers on the boundary
// of its vectors, block/expr.cuh's cuprim_x_reader; no buffer, or buffers
// that disagree and are read element by element, count as on it) is read in
// warp tiles of 32 * CUPRIM_UNROLL 16-byte vectors (lane l takes vectors
// tile + 32 u + l): a word is VT_GROUP = 32 / VT_ITEMS consecutive vectors,
// i.e. as many neighbouring lanes; each lane places its VT_ITEMS bits at their offset in the word and
// the group ORs them together with log2(VT_GROUP) xor-shuffles; the group's
// first lane writes the word. The words past the last full one (and every
// word of an input off the boundary, such as v.slice(1..)) take one warp
// ballot each: lane l tests element 32 w + l.

typedef cuprim_x_reader<In, true> VtReader;
constexpr int VT_ITEMS = VtReader::ITEMS;
constexpr int VT_GROUP = 32 / VT_ITEMS;
constexpr u64 VT_TILE = 32 * CUPRIM_UNROLL;

// CUPRIM_MIN_BLOCKS resident blocks per SM: the grid is sized for exactly that.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_vote(CUPRIM_INPUT In in, u64 n, T param, u32* __restrict__ words) {
    const int lane = threadIdx.x & 31;
    const u64 warp = cuprim_thread_id() >> 5;
    const u64 warps = cuprim_thread_count() >> 5;
    const u64 full = n / 32;  // words whose 32 elements are all in range
    u64 scalar_from = 0;      // the first word left to the ballot loop
    if (cuprim_x_on_boundary(in)) {
        const VtReader r(in, n);
        const u64 nv = full * VT_GROUP;  // the vectors of the full words
        for (u64 tile = warp * VT_TILE; tile < nv; tile += warps * VT_TILE) {
            decltype(r.vec(0)) x[CUPRIM_UNROLL];
#pragma unroll
            for (int u = 0; u < CUPRIM_UNROLL; u++) {
                const u64 v = tile + u * 32 + lane;
                if (v < nv) x[u] = r.vec(v);
            }
#pragma unroll
            for (int u = 0; u < CUPRIM_UNROLL; u++) {
                const u64 v = tile + u * 32 + lane;
                u32 bits = 0;
                if (v < nv) {
#pragma unroll
                    for (int k = 0; k < VT_ITEMS; k++) bits |= (u32)PredFn::apply(x[u].v[k], param) << k;
                }
                bits <<= (lane % VT_GROUP) * VT_ITEMS;
                // Every lane shuffles (tile is warp-uniform); groups are
                // aligned, so v < nv holds for a whole group or none of it.
#pragma unroll
                for (int o = 1; o < VT_GROUP; o <<= 1) bits |= __shfl_xor_sync(0xffffffffu, bits, o);
                if (v < nv && lane % VT_GROUP == 0) words[v / VT_GROUP] = bits;
            }
        }
        scalar_from = full;
    }
    const u64 nwords = (n + 31) / 32;
    for (u64 w = scalar_from + warp; w < nwords; w += warps) {
        const u64 i = w * 32 + lane;
        const bool hit = i < n && PredFn::apply(in.load(i), param);
        const u32 bits = __ballot_sync(0xffffffffu, hit);
        if (lane == 0) words[w] = bits;
    }
}
