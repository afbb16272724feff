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
// the result is written; by default *out = total) and CUPRIM_REDUCE_FOLD
// (the per-thread fold, below; by default rd_map_fold, which needs MapFn).
//
// The per-thread fold is a type with
//   void one(T x, u64 i, P p)            element i,
//   void vec(X x, u64 first, P p)        a body vector, x.v[k] element first + k,
//   A result(const In& in, u64 n, P p)   the thread's accumulator,
// called in the order of block/expr.cuh's cuprim_consume_vx (a thread's
// indices only grow); the block and the last block fold the results with
// ReduceOp.

constexpr bool RD_STREAM = CUPRIM_STREAM_LOADS != 0;

__device__ __forceinline__ void rd_store(A* out, const A& total, P param) {
#ifdef CUPRIM_REDUCE_STORE
    CUPRIM_REDUCE_STORE(out, total, param);
#else
    (void)param;
    *out = total;
#endif
}

#ifndef CUPRIM_REDUCE_FOLD
// Every element mapped and folded in, in visiting order.
struct rd_map_fold {
    A acc = ReduceOp::identity();
    __device__ __forceinline__ void one(const T& x, u64 i, P p) {
        acc = ReduceOp::apply(acc, MapFn::apply(x, i, p));
    }
    template <typename X> __device__ __forceinline__ void vec(const X& x, u64 first, P p) {
#pragma unroll
        for (int k = 0; k < cuprim_x_items<In>(); k++) one(x.v[k], first + k, p);
    }
    __device__ __forceinline__ A result(const In&, u64, P) const {
        return acc;
    }
};
#define CUPRIM_REDUCE_FOLD rd_map_fold
#endif

// min_element / max_element (CUPRIM_REDUCE_FOLD rd_arg_fold<GREATEST>, A
// cuprim_arg_acc<T, R>, ReduceOp: lower rank, then lower index). A thread
// keeps the least rank it has seen (prelude.cuh: cuprim_arg_rank) and
// where: which of its vectors first had it (counted, so a vector costs no
// index arithmetic: cuprim_x_vector_first gives its index), or ONE and the
// index of a single element (head, tail, or every element of an input read
// element by element). Its indices only grow, so a strict compare keeps
// the first: per vector the least of its ranks (cuprim_arg_rank_n) and one
// compare, no index compare and no value. result() reads the winning
// vector again for the first element of that rank. Elements of the worst
// rank ~0 (the extreme of a full-width integer type) are never kept: a
// thread all of whose elements have it keeps none, and thread 0 then
// answers element 0, its first, so that the grid finds the least index
// when every element has that rank.
template <bool Greatest> struct rd_arg_fold {
    typedef decltype(cuprim_arg_rank<Greatest>(T{})) R;
    static constexpr u32 NONE = ~0u, ONE = ~0u - 1;
    R best = ~(R)0;
    u32 at = NONE;
    u32 vectors = 0;
    u64 at_one = 0;
    __device__ __forceinline__ void one(const T& x, u64 i, P) {
        const R r = cuprim_arg_rank<Greatest>(x);
        if (r < best) {
            best = r;
            at = ONE;
            at_one = i;
        }
    }
    template <typename X> __device__ __forceinline__ void vec(const X& x, u64, P) {
        const R r = cuprim_arg_rank_n<Greatest>(x.v);
        if (r < best) {
            best = r;
            at = vectors;
        }
        vectors++;
    }
    __device__ __forceinline__ A result(const In& in, u64 n, P) const {
        if (at == ONE) return A{in.load(at_one), at_one, best};
        if (at == NONE) {
            if (n == 0 || cuprim_thread_id() != 0) return ReduceOp::identity();
            const T x = in.load(0);
            return A{x, 0, cuprim_arg_rank<Greatest>(x)};
        }
        u64 i = cuprim_x_vector_first(in, n, at);
        T x = in.load(i);
        for (int k = 1; k < cuprim_x_items<In>() && cuprim_arg_rank<Greatest>(x) != best; k++) x = in.load(++i);
        return A{x, i, best};
    }
};

// CUPRIM_MIN_BLOCKS resident blocks per SM: the grid is sized for exactly that.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_reduce(CUPRIM_INPUT In in, u64 n, P param, A* __restrict__ partials, u32* ticket, A* __restrict__ out) {
    CUPRIM_REDUCE_FOLD fold;
    cuprim_consume_vx<CUPRIM_UNROLL, RD_STREAM>(
        in, n, [&](const T& x, u64 i) { fold.one(x, i, param); },
        [&](const auto& x, u64 first) { fold.vec(x, first, param); });
    A acc = fold.result(in, n, param);

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
