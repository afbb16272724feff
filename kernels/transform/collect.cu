// Materialising an input expression (block/expr.cuh): out[i] = in.load(i),
// or each field of a tuple to its own array (unzip).
//
// Outputs are written in vectors of cuprim_x_items<In>() elements when they
// and the expression's buffers are equally far past a vector boundary (a
// fresh output always starts on one), else one element at a time.
//
// Specialised on: In, T (its element), CUPRIM_UNROLL. Every module has all
// three entries; the unzip ones act only on tuples of 2 or 3 fields.

// N consecutive elements to p (at an N-element boundary): 16-byte stores,
// or one narrower store, where T's size divides 16; else element by element.
template <int N, typename V> __device__ __forceinline__ void cuprim_store_n(V* p, const cuprim_arr<V, N>& x) {
    if constexpr (16 % sizeof(V) == 0 && (N * sizeof(V)) % 16 == 0) {
        constexpr int PER = 16 / sizeof(V);
#pragma unroll
        for (int c = 0; c < N / PER; c++) {
            cuprim_vec<V, PER> y;
#pragma unroll
            for (int k = 0; k < PER; k++) y.v[k] = x.v[c * PER + k];
            ((cuprim_vec<V, PER>*)p)[c] = y;
        }
    } else if constexpr (16 % sizeof(V) == 0 && (N * sizeof(V) & (N * sizeof(V) - 1)) == 0) {
        cuprim_vec<V, N> y;
#pragma unroll
        for (int k = 0; k < N; k++) y.v[k] = x.v[k];
        *(cuprim_vec<V, N>*)p = y;
    } else {
#pragma unroll
        for (int k = 0; k < N; k++) p[k] = x.v[k];
    }
}

// Where an output array goes: one array, or one per tuple field.
template <typename V> struct collect_sink1 {
    V* p;
    // A value whose size is not a power of two is stored element by element
    // (cuprim_store_n), at any address.
    template <int N> __device__ __forceinline__ u32 misalign() const {
        return (sizeof(V) & (sizeof(V) - 1)) ? CUPRIM_X_ANY : cuprim_misalign<N>(p);
    }
    __device__ __forceinline__ void store(u64 i, const V& x) const {
        p[i] = x;
    }
    template <int N> __device__ __forceinline__ void store_n(u64 first, const cuprim_arr<V, N>& x) const {
        cuprim_store_n<N>(p + first, x);
    }
};

template <typename A, typename B> struct collect_sink2 {
    A* a;
    B* b;
    template <int N> __device__ __forceinline__ u32 misalign() const {
        return cuprim_x_meet(cuprim_misalign<N>(a), cuprim_misalign<N>(b));
    }
    __device__ __forceinline__ void store(u64 i, const cuprim_t2<A, B>& x) const {
        a[i] = x.a0;
        b[i] = x.a1;
    }
    template <int N> __device__ __forceinline__ void store_n(u64 first, const cuprim_arr<cuprim_t2<A, B>, N>& x) const {
        cuprim_arr<A, N> xa;
        cuprim_arr<B, N> xb;
#pragma unroll
        for (int k = 0; k < N; k++) xa.v[k] = x.v[k].a0, xb.v[k] = x.v[k].a1;
        cuprim_store_n<N>(a + first, xa);
        cuprim_store_n<N>(b + first, xb);
    }
};

template <typename A, typename B, typename C> struct collect_sink3 {
    A* a;
    B* b;
    C* c;
    template <int N> __device__ __forceinline__ u32 misalign() const {
        return cuprim_x_meet(cuprim_x_meet(cuprim_misalign<N>(a), cuprim_misalign<N>(b)), cuprim_misalign<N>(c));
    }
    __device__ __forceinline__ void store(u64 i, const cuprim_t3<A, B, C>& x) const {
        a[i] = x.a0;
        b[i] = x.a1;
        c[i] = x.a2;
    }
    template <int N>
    __device__ __forceinline__ void store_n(u64 first, const cuprim_arr<cuprim_t3<A, B, C>, N>& x) const {
        cuprim_arr<A, N> xa;
        cuprim_arr<B, N> xb;
        cuprim_arr<C, N> xc;
#pragma unroll
        for (int k = 0; k < N; k++) xa.v[k] = x.v[k].a0, xb.v[k] = x.v[k].a1, xc.v[k] = x.v[k].a2;
        cuprim_store_n<N>(a + first, xa);
        cuprim_store_n<N>(b + first, xb);
        cuprim_store_n<N>(c + first, xc);
    }
};

template <typename Sink> __device__ __forceinline__ void collect(const In& in, u64 n, const Sink& out) {
    constexpr int ITEMS = cuprim_x_items<In>();
    const u32 m = in.template misalign<ITEMS>();
    const u32 mo = out.template misalign<ITEMS>();
    if (mo == CUPRIM_X_MIXED || m == CUPRIM_X_MIXED || (m != CUPRIM_X_ANY && m != mo)) {
        for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) out.store(i, in.load(i));
        return;
    }
    const cuprim_split<ITEMS> s(n, mo == CUPRIM_X_ANY ? (m == CUPRIM_X_ANY ? 0u : m) : mo);
    cuprim_split_stride<CUPRIM_UNROLL>(
        s, [&](u64 i) { out.store(i, in.load(i)); },
        [&](u64 v) { return in.template load_n<ITEMS>(s.index(v, 0)); },
        [&](u64 v, const cuprim_arr<T, ITEMS>& x) { out.template store_n<ITEMS>(s.index(v, 0), x); });
}

// A value's fields: the tuple's, or the value itself (then the unzip
// entries, which every module has, do nothing).
template <typename V> struct collect_fields {
    static constexpr int N = 1;
    typedef V f0;
    typedef V f1;
    typedef V f2;
};
template <typename A, typename B> struct collect_fields<cuprim_t2<A, B>> {
    static constexpr int N = 2;
    typedef A f0;
    typedef B f1;
    typedef B f2;
};
template <typename A, typename B, typename C> struct collect_fields<cuprim_t3<A, B, C>> {
    static constexpr int N = 3;
    typedef A f0;
    typedef B f1;
    typedef C f2;
};
typedef collect_fields<T>::f0 F0;
typedef collect_fields<T>::f1 F1;
typedef collect_fields<T>::f2 F2;

extern "C" __global__ void cuprim_collect(CUPRIM_INPUT In in, u64 n, T* out) {
    collect(in, n, collect_sink1<T>{out});
}

extern "C" __global__ void cuprim_unzip2(CUPRIM_INPUT In in, u64 n, F0* a, F1* b) {
    if constexpr (collect_fields<T>::N == 2) collect(in, n, collect_sink2<F0, F1>{a, b});
}

extern "C" __global__ void cuprim_unzip3(CUPRIM_INPUT In in, u64 n, F0* a, F1* b, F2* c) {
    if constexpr (collect_fields<T>::N == 3) collect(in, n, collect_sink3<F0, F1, F2>{a, b, c});
}
