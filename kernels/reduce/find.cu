// First match: the lowest index whose element satisfies a predicate, with
// early exit. Also the basis of any / all.
// Specialised on: T (element), PredFn (bool apply(T x, T p)).

constexpr int FIND_ITEMS = 16 / sizeof(T);
typedef cuprim_vec<T, FIND_ITEMS> FindVec;
// 1-byte elements: 16 predicate evaluations per vector; more than two
// vectors in flight overflow the launch bounds' registers and ptxas spills.
constexpr int FIND_UNROLL = (sizeof(T) == 1 && CUPRIM_UNROLL > 2) ? 2 : CUPRIM_UNROLL;

// The lowest i < n with PredFn(in[i], param), or ~0 if none, is written to
// *result. The running best is kept inverted (~i) in *best_inv, so its
// resting value 0 means "none yet" and atomicMax finds the lowest index; the
// last block to finish (block/ticket.cuh) copies it out and resets it to 0
// for the next launch: no memset before the launch. Threads stop as soon as
// every index they have left is above the best match found so far, so a
// match near the front ends the search after about one wave of loads. The
// input is split as cuprim_consume splits it (block/load.cuh: a misaligned
// slice's head one element per thread, 16-byte vectors, the tail), with
// rounds of its own for the early exit.
// CUPRIM_MIN_BLOCKS resident blocks per SM: the grid is sized for exactly that.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_find_first(const T* __restrict__ in, u64 n, T param, u64* best_inv, u32* ticket, u64* result) {
    const u64 tid = cuprim_thread_id();
    const u64 stride = cuprim_thread_count();
    volatile u64* vbest_inv = best_inv;
    const cuprim_split<FIND_ITEMS> s(n, cuprim_misalign<FIND_ITEMS>(in));
    auto one = [&](u64 i) {
        if (PredFn::apply(cuprim_load_ro(in + i), param)) atomicMax(best_inv, ~i);
    };
    if (tid < s.head) one(tid);

    const u64 nv = s.vectors;
    const FindVec* vin = s.body(in);
    asm("" : "+l"(vin));  // kept in a register: else in + head is recomputed for every load
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
        check(cuprim_load_ro(vin + v), v);
        v += stride;
    }
    for (; v < nv; v += FIND_UNROLL * stride) {
        if (s.index(v, 0) >= ~*vbest_inv) break;
        FindVec x[FIND_UNROLL];
#pragma unroll
        for (int u = 0; u < FIND_UNROLL; u++)
            if (v + u * stride < nv) x[u] = cuprim_load_ro(vin + v + u * stride);
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
