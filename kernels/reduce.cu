// Single-pass reduction.
//
// cuprim_reduce: every block folds a grid-stride share of the input with
// 16-byte loads, CUPRIM_UNROLL in flight per thread, and writes its partial;
// the last block to finish (an atomic ticket after __threadfence) folds the
// partials in block order and writes the result. One launch, and for a given
// input length and device the combine order is fixed: float results are
// bit-identical run to run.
//
// Specialised on: T (input), A (accumulator), MapFn (A apply(T x, u64 i, T p)),
// ReduceOp (A apply(A, A), A identity()).

constexpr int RD_ITEMS = 16 / sizeof(T);
typedef cuprim_vec<T, RD_ITEMS> RdVec;

// CUPRIM_MIN_BLOCKS resident blocks per SM: the grid is sized for exactly that.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_reduce(const T* __restrict__ in, u64 n, T param, A* __restrict__ partials, u32* ticket,
                  A* __restrict__ out) {
    A acc = ReduceOp::identity();
    const u64 tid = cuprim_thread_id();
    const u64 stride = cuprim_thread_count();
    if (cuprim_aligned_to<RdVec>(in)) {
        const u64 nv = n / RD_ITEMS;
        const RdVec* vin = (const RdVec*)in;
        u64 v = tid;
        for (; v + (CUPRIM_UNROLL - 1) * stride < nv; v += CUPRIM_UNROLL * stride) {
            RdVec x[CUPRIM_UNROLL];
#pragma unroll
            for (int u = 0; u < CUPRIM_UNROLL; u++) x[u] = cuprim_load_stream(vin + v + u * stride);
#pragma unroll
            for (int u = 0; u < CUPRIM_UNROLL; u++) {
#pragma unroll
                for (int k = 0; k < RD_ITEMS; k++)
                    acc = ReduceOp::apply(acc, MapFn::apply(x[u].v[k], (v + u * stride) * RD_ITEMS + k, param));
            }
        }
        for (; v < nv; v += stride) {
            const RdVec x = cuprim_load_stream(vin + v);
#pragma unroll
            for (int k = 0; k < RD_ITEMS; k++) acc = ReduceOp::apply(acc, MapFn::apply(x.v[k], v * RD_ITEMS + k, param));
        }
        const u64 t = nv * RD_ITEMS + tid;
        if (t < n) acc = ReduceOp::apply(acc, MapFn::apply(in[t], t, param));
    } else {
        for (u64 i = tid; i < n; i += stride) acc = ReduceOp::apply(acc, MapFn::apply(in[i], i, param));
    }

    acc = cuprim_block_reduce<A, ReduceOp, CUPRIM_BLOCK>(acc);
    __shared__ bool is_last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc;
        __threadfence();
        is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!is_last) return;

    // The last block: every other block's partial is visible (each fenced
    // before taking its ticket). Fold them in block order.
    __threadfence();
    A total = ReduceOp::identity();
    for (u32 b = threadIdx.x; b < gridDim.x; b += CUPRIM_BLOCK) total = ReduceOp::apply(total, cuprim_load_cg(partials + b));
    total = cuprim_block_reduce<A, ReduceOp, CUPRIM_BLOCK>(total);
    if (threadIdx.x == 0) {
        *out = total;
        *ticket = 0;  // ready for the next launch on this stream
    }
}
