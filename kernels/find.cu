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
// last block to finish (a ticket) copies it out and resets both words to 0
// for the next launch: no memset before the launch. Threads stop as soon as
// every index they have left is above the best match found so far, so a
// match near the front ends the search after about one wave of loads.
// CUPRIM_MIN_BLOCKS resident blocks per SM: the grid is sized for exactly that.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_find_first(const T* __restrict__ in, u64 n, T param, u64* best_inv, u32* ticket, u64* result) {
    const u64 tid = cuprim_thread_id();
    const u64 stride = cuprim_thread_count();
    volatile u64* vbest_inv = best_inv;
    if (cuprim_aligned_to<FindVec>(in)) {
        const u64 nv = n / FIND_ITEMS;
        const FindVec* vin = (const FindVec*)in;
        auto check = [&](const FindVec& x, u64 v) {
#pragma unroll
            for (int k = 0; k < FIND_ITEMS; k++) {
                if (PredFn::apply(x.v[k], param)) {
                    atomicMax(best_inv, ~(v * FIND_ITEMS + k));
                    return;
                }
            }
        };
        u64 v = tid;
        // First round: one vector per thread, so a match near the front is
        // seen after a quarter of a full round's loads.
        if (v < nv) {
            check(vin[v], v);
            v += stride;
        }
        for (; v < nv; v += FIND_UNROLL * stride) {
            if (v * FIND_ITEMS >= ~*vbest_inv) break;
            FindVec x[FIND_UNROLL];
#pragma unroll
            for (int u = 0; u < FIND_UNROLL; u++)
                if (v + u * stride < nv) x[u] = vin[v + u * stride];
#pragma unroll
            for (int u = 0; u < FIND_UNROLL; u++) {
                if (v + u * stride >= nv) break;
                check(x[u], v + u * stride);
            }
        }
        const u64 t = nv * FIND_ITEMS + tid;
        if (t < n && PredFn::apply(in[t], param)) atomicMax(best_inv, ~t);
    } else {
        for (u64 i = tid; i < n; i += stride) {
            if (i >= ~*vbest_inv) break;
            if (PredFn::apply(in[i], param)) {
                atomicMax(best_inv, ~i);
                break;
            }
        }
    }

    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(ticket, 1u) == gridDim.x - 1) {
            __threadfence();
            *result = ~*vbest_inv;
            *vbest_inv = 0;
            *ticket = 0;
        }
    }
}
