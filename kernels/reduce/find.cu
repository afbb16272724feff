// First match: the lowest index whose element satisfies a predicate, with
// early exit. Also the basis of any / all.
// Specialised on: In (the input expression, block/expr.cuh; a plain buffer
// is cuprim_x_buf<T>), T (its element), PredFn (bool apply(T x, T p)),
// CUPRIM_READ_ALL (1: no early exit, every element is read: an expression
// that permutes, whose every index is checked).

typedef cuprim_x_reader<In> FindReader;
constexpr int FIND_ITEMS = FindReader::ITEMS;
// 16 predicate evaluations per vector (1-byte elements): more than two
// vectors in flight overflow the launch bounds' registers and ptxas spills.
constexpr int FIND_UNROLL = (FIND_ITEMS >= 16 && CUPRIM_UNROLL > 2) ? 2 : CUPRIM_UNROLL;

// The lowest i < n with PredFn(in[i], param), or ~0 if none, is written to
// *result. The running best is kept inverted (~i) in *best_inv, so its
// resting value 0 means "none yet" and atomicMax finds the lowest index; the
// last block to finish (block/ticket.cuh) copies it out and resets it to 0
// for the next launch: no memset before the launch. Threads stop as soon as
// every index they have left is above the best match found so far, so a
// match near the front ends the search after about one wave of loads. The
// input is split as cuprim_consume splits it (block/load.cuh: a misaligned
// slice's head one element per thread, 16-byte vectors, the tail; an
// expression in vectors of its widest buffer, block/expr.cuh's
// cuprim_x_reader), with rounds of its own for the early exit.
// CUPRIM_MIN_BLOCKS resident blocks per SM: the grid is sized for exactly that.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_find_first(CUPRIM_INPUT In in, u64 n, T param, u64* best_inv, u32* ticket, u64* result) {
    const u64 tid = cuprim_thread_id();
    const u64 stride = cuprim_thread_count();
    volatile u64* vbest_inv = best_inv;
    const FindReader r(in, n);
    const cuprim_split<FIND_ITEMS>& s = r.s;
    auto one = [&](u64 i) {
        if (PredFn::apply(r.one(i), param)) atomicMax(best_inv, ~i);
    };
    if (tid < s.head) one(tid);

    const u64 nv = s.vectors;
    typedef decltype(r.vec(0)) FindVec;
    auto check = [&](const FindVec& x, u64 v) {
#pragma unroll
        for (int k = 0; k < FIND_ITEMS; k++) {
            if (PredFn::apply(x.v[k], param)) {
                atomicMax(best_inv, ~s.index(v, k));
                return;
            }
        }
    };
    u64 v = tid;
    // First round: one vector per thread, so a match near the front is
    // seen after a quarter of a full round's loads.
    if (v < nv) {
        check(r.vec(v), v);
        v += stride;
    }
    for (; v < nv; v += FIND_UNROLL * stride) {
        if (!CUPRIM_READ_ALL && s.index(v, 0) >= ~*vbest_inv) break;
        FindVec x[FIND_UNROLL];
#pragma unroll
        for (int u = 0; u < FIND_UNROLL; u++)
            if (v + u * stride < nv) x[u] = r.vec(v + u * stride);
#pragma unroll
        for (int u = 0; u < FIND_UNROLL; u++) {
            if (v + u * stride >= nv) break;
            check(x[u], v + u * stride);
        }
    }
    const u64 t = s.tail + tid;
    if (t < n) one(t);

    if (cuprim_last_block(ticket) && threadIdx.x == 0) {
        *result = ~*vbest_inv;
        *vbest_inv = 0;
    }
}
