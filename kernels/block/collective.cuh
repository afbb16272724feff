// Block building blocks, part 2: warp shuffles of any type and the block
// reduction. Part of the prelude, after block/load.cuh (cuprim_words).
// (The block scan lives with the look-back, block/lookback.cuh, which fuses
// the two.)

// Moves a value of any size between lanes as 32-bit words, each word with
// `shfl` (one of the __shfl_*_sync intrinsics, bound to its lane argument).
template <typename V, typename Shfl> __device__ __forceinline__ V cuprim_shfl_words(const V& v, Shfl shfl) {
    cuprim_words<V> p;
    p.w[cuprim_words<V>::W - 1] = 0;
    p.v = v;
#pragma unroll
    for (int k = 0; k < cuprim_words<V>::W; k++) p.w[k] = shfl(p.w[k]);
    return p.v;
}

// __shfl_down_sync and __shfl_up_sync for a value of any size.
template <typename V> __device__ __forceinline__ V cuprim_shfl_down(const V& v, unsigned delta) {
    return cuprim_shfl_words(v, [delta](unsigned w) { return __shfl_down_sync(0xffffffffu, w, delta); });
}
template <typename V> __device__ __forceinline__ V cuprim_shfl_up(const V& v, unsigned delta) {
    return cuprim_shfl_words(v, [delta](unsigned w) { return __shfl_up_sync(0xffffffffu, w, delta); });
}

// Inclusive prefix sum of an integer over the warp's lanes (every lane calls it).
template <typename V> __device__ __forceinline__ V cuprim_warp_inclusive_sum(V x) {
    const unsigned lane = threadIdx.x & 31;
#pragma unroll
    for (unsigned o = 1; o < 32; o <<= 1) {
        const V y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    return x;
}

// Reduces one value per thread of a BLOCK-thread block with Op (apply,
// identity) in a fixed tree order; the result is valid in thread 0. Ends
// with a barrier, so it can be called again at once.
template <typename A, typename Op, int BLOCK> __device__ __forceinline__ A cuprim_block_reduce(A v) {
    constexpr int WARPS = BLOCK / 32;
    __shared__ A warp_parts[WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v = Op::apply(v, cuprim_shfl_down(v, offset));
    if (lane == 0) warp_parts[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < WARPS ? warp_parts[lane] : Op::identity();
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) v = Op::apply(v, cuprim_shfl_down(v, offset));
    }
    __syncthreads();
    return v;
}

// The fold of one value per lane in lane order, in lane 0: v[0] op v[1] op
// ... op v[31], for monoids that need not commute (offsets grow, so each
// lane folds only neighbours after it).
template <typename A, typename Op> __device__ __forceinline__ A cuprim_warp_reduce_ordered(A v) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        const A next = cuprim_shfl_down(v, offset);
        if ((lane & (2 * offset - 1)) == 0) v = Op::apply(v, next);
    }
    return v;
}

// Like cuprim_block_reduce, in thread order: thread 0 gets v[0] op v[1] op
// ... op v[BLOCK - 1] (cuprim_warp_reduce_ordered per warp, then over the
// warps). Ends with a barrier.
template <typename A, typename Op, int BLOCK> __device__ __forceinline__ A cuprim_block_reduce_ordered(A v) {
    constexpr int WARPS = BLOCK / 32;
    __shared__ A warp_parts[WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = cuprim_warp_reduce_ordered<A, Op>(v);
    if (lane == 0) warp_parts[warp] = v;
    __syncthreads();
    if (warp == 0) v = cuprim_warp_reduce_ordered<A, Op>(lane < WARPS ? warp_parts[lane] : Op::identity());
    __syncthreads();
    return v;
}

// A value and its index, for min_element / max_element.
template <typename T> struct cuprim_kv {
    T v;
    u64 i;
};

// The same with the value's rank in the order (prelude.cuh:
// cuprim_arg_rank), carried so that a fold ranks each element once.
template <typename T, typename R> struct cuprim_arg_acc {
    T v;
    u64 i;
    R r;
};

// min_element / max_element's fold of one thread's elements, which come in
// index order (cuprim_consume_vecs_x): one(x, i) folds an element, vec(x, i)
// a vector of them (x.v[k] is element i + k). A vector's elements go in
// groups of at most four; a group is first ranked coarsely (the least
// cuprim_arg_coarse of its elements, about four instructions an element)
// and looked at again only when that beats the best so far: its first
// element of that rank is the new best, or, for a NaN's rank (NaNs tie, the
// first wins), each element is folded exactly. Later elements never win a
// tie, except against the identity (index ~0).
template <bool Greatest, typename A, typename MapFn, typename Op> struct cuprim_arg_fold {
    typedef decltype(A::v) T;
    typedef decltype(cuprim_arg_coarse<Greatest>(T{})) C;
    A acc;
    C best;  // cuprim_arg_coarse of acc.v
    __device__ __forceinline__ cuprim_arg_fold() : acc(Op::identity()) {
        best = cuprim_arg_coarse<Greatest>(acc.v);
    }
    template <typename P> __device__ __forceinline__ void one(const T& x, u64 i, P p) {
        acc = Op::apply(acc, MapFn::apply(x, i, p));
        best = cuprim_arg_coarse<Greatest>(acc.v);
    }
    template <typename V, typename P> __device__ __forceinline__ void vec(const V& x, u64 i, P p) {
        // In groups of at most four: a byte vector's sixteen coarse ranks
        // at once spilled.
        constexpr int N = sizeof(x.v) / sizeof(x.v[0]);
        constexpr int G = N < 4 ? N : 4;
#pragma unroll
        for (int g = 0; g < N; g += G) group<G>(x.v + g, i + g, p);
    }
    template <int N, typename P> __device__ __forceinline__ void group(const T* x, u64 i, P p) {
        C c[N];
        C least;
#pragma unroll
        for (int k = 0; k < N; k++) {
            c[k] = cuprim_arg_coarse<Greatest>(x[k]);
            least = k == 0 ? c[k] : min(least, c[k]);
        }
        if (least < best || (least == best && acc.i == ~0ull)) {
            if (least >= cuprim_arg_coarse_exact_from<T>()) {
                T v = x[N - 1];
                u32 at = N - 1;
#pragma unroll
                for (int k = N - 2; k >= 0; k--) {
                    if (c[k] == least) {
                        v = x[k];
                        at = k;
                    }
                }
                acc = MapFn::apply(v, i + at, p);
                best = least;
            } else {
#pragma unroll
                for (int k = 0; k < N; k++) acc = Op::apply(acc, MapFn::apply(x[k], i + k, p));
                best = cuprim_arg_coarse<Greatest>(acc.v);
            }
        }
    }
};

// __shfl_sync for a value of any size: every lane gets lane `src`'s value.
template <typename V> __device__ __forceinline__ V cuprim_shfl(const V& v, int src) {
    return cuprim_shfl_words(v, [src](unsigned w) { return __shfl_sync(0xffffffffu, w, src); });
}
