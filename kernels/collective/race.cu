// quantify and select_one: searches that stop early, like find_first
// (kernels/reduce/find.cu), but whose answer any match can settle.
// Specialised on: In (the input expression, block/expr.cuh; a plain buffer
// is cuprim_x_buf<T>), T (its element), PredFn (bool apply(T x, T p)),
// CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS, CUPRIM_UNROLL, CUPRIM_READ_ALL (1: no
// early exit, every element is read: an expression that permutes, whose
// every index is checked).
//
// Both walk the input in warp tiles of 32 * RC_UNROLL 16-byte vectors (an
// expression: vectors of its widest buffer, block/expr.cuh's cuprim_x_reader)
// (lane l takes vectors tile + 32 u + l; a misaligned slice's head and tail,
// fewer than RC_ITEMS elements each, go to the grid's first warp), report
// each tile's matches once per warp (one atomic per warp, not per thread),
// and check before each tile, one load per warp, whether the answer is
// already known. A counter that starts at zero holds the state; the last
// block to finish (block/ticket.cuh) copies the answer out and returns the
// counter to zero for the next launch.

typedef cuprim_x_reader<In> RcReader;
constexpr int RC_ITEMS = RcReader::ITEMS;
// 16 tests per vector (1-byte elements): more than two vectors per lane
// overflow the launch bounds' registers and ptxas spills (as in find.cu).
constexpr int RC_UNROLL = (RC_ITEMS >= 16 && CUPRIM_UNROLL > 2) ? 2 : CUPRIM_UNROLL;
constexpr u64 RC_TILE = 32 * RC_UNROLL;

// Calls report(count, first) once per warp step with every lane of the warp:
// how many elements the lane just tested matched and the lowest index among
// them (~0 if none). done() is asked before each tile and must give the
// same answer in every lane.
template <typename Report, typename Done>
__device__ __forceinline__ void rc_walk(const In& in, u64 n, T param, Report report, Done done) {
    const u32 lane = threadIdx.x & 31;
    const u64 warp = cuprim_thread_id() >> 5;
    const u64 warps = cuprim_thread_count() >> 5;
    const RcReader r(in, n);
    const cuprim_split<RC_ITEMS>& s = r.s;
    if (warp == 0) {
        u32 count = 0;
        u64 first = ~0ull;
        if (lane < s.head && PredFn::apply(r.one(lane), param)) {
            count = 1;
            first = lane;
        }
        const u64 t = s.tail + lane;
        if (t < n && PredFn::apply(r.one(t), param)) {
            if (count == 0) first = t;
            count++;
        }
        report(count, first);
    }
    const u64 tiles = (s.vectors + RC_TILE - 1) / RC_TILE;
    for (u64 t = warp; t < tiles; t += warps) {
        if (!CUPRIM_READ_ALL && done()) break;
        const u64 base = t * RC_TILE + lane;
        decltype(r.vec(0)) x[RC_UNROLL];
#pragma unroll
        for (int u = 0; u < RC_UNROLL; u++)
            if (base + u * 32 < s.vectors) x[u] = r.vec(base + u * 32);
        u32 count = 0;
        u64 first = ~0ull;
#pragma unroll
        for (int u = 0; u < RC_UNROLL; u++) {
            const u64 v = base + u * 32;
            if (v >= s.vectors) break;
#pragma unroll
            for (int k = 0; k < RC_ITEMS; k++) {
                if (PredFn::apply(x[u].v[k], param)) {
                    if (count == 0) first = s.index(v, k);
                    count++;
                }
            }
        }
        report(count, first);
    }
}

// Lane 0's reading of *p, in every lane of the warp.
template <typename V> __device__ __forceinline__ V rc_warp_read(volatile V* p) {
    V x = 0;
    if ((threadIdx.x & 31) == 0) x = *p;
    return __shfl_sync(0xffffffffu, x, 0);
}

// *result = min(matches, 2): 0 none, 1 one, 2 two or more. Stops once two
// are known. *count (resting at 0) gathers the matches, each warp adding at
// most 2 per step: it reaches 2 iff there are two matches, and stays far
// below 2^32 (at most 2 more per warp after it reaches 2; when every element
// is read, a warp adds only while it last saw fewer than 2).
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_quantify(CUPRIM_INPUT In in, u64 n, T param, u32* count, u32* ticket, u64* result) {
    volatile u32* vcount = count;
    rc_walk(
        in, n, param,
        [&](u32 c, u64) {
            const u32 total = __reduce_add_sync(0xffffffffu, c < 2 ? c : 2);
            if ((threadIdx.x & 31) == 0 && total != 0 && (!CUPRIM_READ_ALL || *vcount < 2))
                atomicAdd(count, total < 2 ? total : 2);
        },
        [&]() { return rc_warp_read(vcount) >= 2; });
    if (cuprim_last_block(ticket) && threadIdx.x == 0) {
        const u32 c = *vcount;
        *result = c < 2 ? c : 2;
        *vcount = 0;
    }
}

// *result = the index of some match (~0 if none): the first one a warp
// reports, which is a matter of timing. *found (resting at 0) holds index + 1;
// the lowest lane of the first warp to see a match sets it.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_select_one(CUPRIM_INPUT In in, u64 n, T param, u64* found, u32* ticket, u64* result) {
    volatile u64* vfound = found;
    rc_walk(
        in, n, param,
        [&](u32 c, u64 first) {
            const u32 lanes = __ballot_sync(0xffffffffu, c != 0);
            if (lanes != 0 && (threadIdx.x & 31) == (u32)(__ffs(lanes) - 1)) atomicCAS(found, 0ull, first + 1);
        },
        [&]() { return rc_warp_read(vfound) != 0; });
    if (cuprim_last_block(ticket) && threadIdx.x == 0) {
        *result = *vfound - 1;
        *vfound = 0;
    }
}
