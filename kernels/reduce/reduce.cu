// Single-pass reduction.
//
// cuprim_reduce: every block folds a grid-stride share of the input with
// 16-byte loads, CUPRIM_UNROLL in flight per thread (block/load.cuh:
// cuprim_consume; a misaligned slice's head and tail one element at a time),
// and writes its partial; the last block to finish (block/ticket.cuh) folds
// the partials in block order and writes the result. One launch, and for a
// given input length, alignment and device the combine order is fixed: float
// results are bit-identical run to run.
//
// A grid of one block (short inputs) writes its result directly: no ticket,
// no second fold.
//
// Specialised on: In (the input expression, block/expr.cuh; a plain buffer
// is cuprim_x_buf<T>, the same bytes as a pointer), T (its element), P (the
// parameter), A (accumulator), MapFn (A apply(T x, u64 i, P p)), ReduceOp
// (A apply(A, A), A identity()), and optionally CUPRIM_REDUCE_STORE (void store(A* out, A total, P p): how
// the result is written; by default *out = total) and CUPRIM_VECTOR_FOLD
// (a VectorFold type that folds a thread's elements itself: one(x, i, p),
// vec(x, i, p) and its result in acc).

constexpr bool RD_STREAM = CUPRIM_STREAM_LOADS != 0;

__device__ __forceinline__ void rd_store(A* out, const A& total, P param) {
#ifdef CUPRIM_REDUCE_STORE
    CUPRIM_REDUCE_STORE(out, total, param);
#else
    (void)param;
    *out = total;
#endif
}

// CUPRIM_MIN_BLOCKS resident blocks per SM: the grid is sized for exactly that.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_reduce(CUPRIM_INPUT In in, u64 n, P param, A* __restrict__ partials, u32* ticket, A* __restrict__ out) {
#ifdef CUPRIM_VECTOR_FOLD
    // The specialisation folds whole vectors itself (min/max_element:
    // block/collective.cuh, cuprim_arg_fold).
    VectorFold fold;
    cuprim_consume_vecs_x<CUPRIM_UNROLL, RD_STREAM>(
        in, n, [&](const T& x, u64 i) { fold.one(x, i, param); }, [&](const auto& x, u64 i) { fold.vec(x, i, param); });
    A acc = fold.acc;
#else
    A acc = ReduceOp::identity();
    cuprim_consume_x<CUPRIM_UNROLL, RD_STREAM>(
        in, n, [&](const T& x, u64 i) { acc = ReduceOp::apply(acc, MapFn::apply(x, i, param)); });
#endif

    acc = cuprim_block_reduce<A, ReduceOp, CUPRIM_BLOCK>(acc);
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) rd_store(out, acc, param);
        return;
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
    if (!cuprim_last_block(ticket)) return;

    // The last block: every other block's partial is visible. Fold them in
    // block order.
    A total = ReduceOp::identity();
    for (u32 b = threadIdx.x; b < gridDim.x; b += CUPRIM_BLOCK) total = ReduceOp::apply(total, cuprim_load_cg(partials + b));
    total = cuprim_block_reduce<A, ReduceOp, CUPRIM_BLOCK>(total);
    if (threadIdx.x == 0) rd_store(out, total, param);
}
