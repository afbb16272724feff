// Block building blocks, part 5: input expressions (src/expr/) and tuples.
//
// An input expression is a tree of the nodes below, one C++ type per tree
// (the generated specialisation spells it as nested typedefs), passed to the
// kernel by value. Every node has
//   item                      the element type it yields,
//   load(i)                   element i,
//   load_n<N>(first)          elements first .. first+N-1, with one vector
//                             load per buffer: first must be at an N-element
//                             boundary of every buffer (see misalign),
//   misalign<N>()             how far past such a boundary element 0 of the
//                             buffers is (CUPRIM_X_ANY: no buffer;
//                             CUPRIM_X_MIXED: buffers disagree, use load),
//   WIDEST                    bytes of the widest buffer element (0: none).
// Every data member is 8-byte aligned, so the host writes a node's bytes
// field by field without knowing the node's type (src/expr/args.rs).

// How a kernel takes an expression: in place in parameter memory, never
// copied to a thread's stack when a node's member function takes its
// address (the by-value copy made sm_80's f32 scan spill 8 bytes).
#if __CUDA_ARCH__ >= 700
#define CUPRIM_INPUT const __grid_constant__
#else
#define CUPRIM_INPUT const
#endif

template <typename A, typename B> struct cuprim_t2 {
    A a0;
    B a1;
};
template <typename A, typename B, typename C> struct cuprim_t3 {
    A a0;
    B a1;
    C a2;
};

// A tuple's canonical form (prelude.cuh's cuprim_canonical_nan), field by
// field: the deterministic look-back over tuple values.
template <typename A, typename B> __device__ __forceinline__ cuprim_t2<A, B> cuprim_canonical_nan(cuprim_t2<A, B> x) {
    return cuprim_t2<A, B>{cuprim_canonical_nan(x.a0), cuprim_canonical_nan(x.a1)};
}
template <typename A, typename B, typename C>
__device__ __forceinline__ cuprim_t3<A, B, C> cuprim_canonical_nan(cuprim_t3<A, B, C> x) {
    return cuprim_t3<A, B, C>{cuprim_canonical_nan(x.a0), cuprim_canonical_nan(x.a1), cuprim_canonical_nan(x.a2)};
}

template <typename T, int N> struct cuprim_arr {
    T v[N];
};

constexpr u32 CUPRIM_X_ANY = 0xffffffffu;
constexpr u32 CUPRIM_X_MIXED = 0xfffffffeu;

__device__ __forceinline__ u32 cuprim_x_meet(u32 a, u32 b) {
    return a == CUPRIM_X_ANY ? b : b == CUPRIM_X_ANY ? a : a == b ? a : CUPRIM_X_MIXED;
}

constexpr int cuprim_x_widest(int a, int b) {
    return a > b ? a : b;
}

// N elements at p, an N-element boundary: one load of N * sizeof(T) bytes,
// or 16-byte loads where that is more than 16.
template <int N, typename T> __device__ __forceinline__ cuprim_arr<T, N> cuprim_load_n(const T* p) {
    cuprim_arr<T, N> r;
    if constexpr (N * sizeof(T) <= 16) {
        const cuprim_vec<T, N> x = cuprim_load_ro((const cuprim_vec<T, N>*)p);
#pragma unroll
        for (int k = 0; k < N; k++) r.v[k] = x.v[k];
    } else {
        constexpr int PER = 16 / sizeof(T);
#pragma unroll
        for (int c = 0; c < N / PER; c++) {
            const cuprim_vec<T, PER> x = cuprim_load_ro((const cuprim_vec<T, PER>*)p + c);
#pragma unroll
            for (int k = 0; k < PER; k++) r.v[c * PER + k] = x.v[k];
        }
    }
    return r;
}

// A buffer: the elements of a DeviceVec or slice.
template <typename T> struct cuprim_x_buf {
    const T* p;
    typedef T item;
    static constexpr int WIDEST = sizeof(T);
    static constexpr bool IS_BUF = true;
    __device__ __forceinline__ T load(u64 i) const {
        return cuprim_load_ro(p + i);
    }
    template <int N> __device__ __forceinline__ cuprim_arr<T, N> load_n(u64 first) const {
        return cuprim_load_n<N>(p + first);
    }
    template <int N> __device__ __forceinline__ u32 misalign() const {
        return cuprim_misalign<N>(p);
    }
};

// Generic parts of a node with no buffer of its own below it.
#define CUPRIM_X_SCALAR_ONLY                                                                \
    static constexpr int WIDEST = 0;                                                        \
    static constexpr bool IS_BUF = false;                                                   \
    template <int N> __device__ __forceinline__ cuprim_arr<item, N> load_n(u64 first) const { \
        cuprim_arr<item, N> r;                                                              \
        _Pragma("unroll") for (int k = 0; k < N; k++) r.v[k] = load(first + k);             \
        return r;                                                                           \
    }                                                                                       \
    template <int N> __device__ __forceinline__ u32 misalign() const {                      \
        return CUPRIM_X_ANY;                                                                \
    }

// start + step * (first + i), in T's arithmetic (the index cast to T).
template <typename T> struct cuprim_x_count {
    alignas(8) T start;
    alignas(8) T step;
    alignas(8) u64 first;
    typedef T item;
    __device__ __forceinline__ T load(u64 i) const {
        return cuprim_add(start, cuprim_mul(step, cuprim_cast<T>(first + i)));
    }
    CUPRIM_X_SCALAR_ONLY
};

// The same value everywhere.
template <typename V> struct cuprim_x_const {
    alignas(8) V value;
    typedef V item;
    __device__ __forceinline__ V load(u64) const {
        return value;
    }
    CUPRIM_X_SCALAR_ONLY
};

// A buffer of points (src/algo/knn): element i is the N values at p + i * N,
// each read on its own (a point is aligned only as T), never in vectors: to
// the consume loops it is like a computed node (WIDEST 0, IS_BUF false).
template <typename T, int N> struct cuprim_x_arr {
    const T* p;
    typedef cuprim_arr<T, N> item;
    __device__ __forceinline__ item load(u64 i) const {
        item r;
#pragma unroll
        for (int k = 0; k < N; k++) r.v[k] = cuprim_load_ro(p + i * N + k);
        return r;
    }
    CUPRIM_X_SCALAR_ONLY
};

// F::apply(e[i]); F is a generated functor with `typedef ... out`.
template <typename E, typename F> struct cuprim_x_map {
    E e;
    typedef typename F::out item;
    static constexpr int WIDEST = E::WIDEST;
    static constexpr bool IS_BUF = false;
    __device__ __forceinline__ item load(u64 i) const {
        return F::apply(e.load(i));
    }
    template <int N> __device__ __forceinline__ cuprim_arr<item, N> load_n(u64 first) const {
        const auto x = e.template load_n<N>(first);
        cuprim_arr<item, N> r;
#pragma unroll
        for (int k = 0; k < N; k++) r.v[k] = F::apply(x.v[k]);
        return r;
    }
    template <int N> __device__ __forceinline__ u32 misalign() const {
        return e.template misalign<N>();
    }
};

// (a[i], b[i]).
template <typename A, typename B> struct cuprim_x_zip {
    A a;
    B b;
    typedef cuprim_t2<typename A::item, typename B::item> item;
    static constexpr int WIDEST = cuprim_x_widest(A::WIDEST, B::WIDEST);
    static constexpr bool IS_BUF = false;
    __device__ __forceinline__ item load(u64 i) const {
        return item{a.load(i), b.load(i)};
    }
    template <int N> __device__ __forceinline__ cuprim_arr<item, N> load_n(u64 first) const {
        const auto x = a.template load_n<N>(first);
        const auto y = b.template load_n<N>(first);
        cuprim_arr<item, N> r;
#pragma unroll
        for (int k = 0; k < N; k++) r.v[k] = item{x.v[k], y.v[k]};
        return r;
    }
    template <int N> __device__ __forceinline__ u32 misalign() const {
        return cuprim_x_meet(a.template misalign<N>(), b.template misalign<N>());
    }
};

// (a[i], b[i], c[i]).
template <typename A, typename B, typename C> struct cuprim_x_zip3 {
    A a;
    B b;
    C c;
    typedef cuprim_t3<typename A::item, typename B::item, typename C::item> item;
    static constexpr int WIDEST = cuprim_x_widest(cuprim_x_widest(A::WIDEST, B::WIDEST), C::WIDEST);
    static constexpr bool IS_BUF = false;
    __device__ __forceinline__ item load(u64 i) const {
        return item{a.load(i), b.load(i), c.load(i)};
    }
    template <int N> __device__ __forceinline__ cuprim_arr<item, N> load_n(u64 first) const {
        const auto x = a.template load_n<N>(first);
        const auto y = b.template load_n<N>(first);
        const auto z = c.template load_n<N>(first);
        cuprim_arr<item, N> r;
#pragma unroll
        for (int k = 0; k < N; k++) r.v[k] = item{x.v[k], y.v[k], z.v[k]};
        return r;
    }
    template <int N> __device__ __forceinline__ u32 misalign() const {
        return cuprim_x_meet(cuprim_x_meet(a.template misalign<N>(), b.template misalign<N>()), c.template misalign<N>());
    }
};

// e[idx[i]]: a gathered view; idx is an expression of indices (a buffer, or
// any node whose item is an integer). An index at or past `bound` (e's
// length) sets *error and reads element 0 of e instead (bound > 0) or a zero
// value.
template <typename E, typename J> struct cuprim_x_perm {
    E e;
    J idx;
    alignas(8) u64 bound;
    u32* error;
    typedef typename E::item item;
    typedef typename J::item index;
    static constexpr int WIDEST = J::WIDEST;
    static constexpr bool IS_BUF = false;
    __device__ __forceinline__ item at(u64 j) const {
        if (j >= bound) {
            *(volatile u32*)error = 1u;
            if (bound == 0) return item{};
            j = 0;
        }
        return e.load(j);
    }
    __device__ __forceinline__ item load(u64 i) const {
        return at((u64)idx.load(i));
    }
    template <int N> __device__ __forceinline__ cuprim_arr<item, N> load_n(u64 first) const {
        const cuprim_arr<index, N> j = idx.template load_n<N>(first);
        cuprim_arr<item, N> r;
#pragma unroll
        for (int k = 0; k < N; k++) r.v[k] = at((u64)j.v[k]);
        return r;
    }
    template <int N> __device__ __forceinline__ u32 misalign() const {
        return idx.template misalign<N>();
    }
};

// Elements per vector step of an expression: 16 bytes of its widest buffer.
template <typename In> constexpr int cuprim_x_items() {
    return In::WIDEST ? 16 / In::WIDEST : 4;
}

// cuprim_consume over an expression: visit(x, i) with x = in.load(i) for
// every i < n, once in the grid, in cuprim_consume's order (a buffer takes
// cuprim_consume itself). Buffers at different offsets from a vector
// boundary take a scalar grid-stride loop. cuprim_consume_vecs_x visits the
// body's vectors whole, as cuprim_consume_vecs does (x.v[k] is element
// i + k of vec(x, i)).
template <int UNROLL, bool STREAM = false, typename In, typename One, typename Vec>
__device__ __forceinline__ void cuprim_consume_vecs_x(const In& in, u64 n, One one, Vec vec) {
    if constexpr (In::IS_BUF) {
        cuprim_consume_vecs<UNROLL, STREAM>(in.p, n, one, vec);
    } else {
        constexpr int ITEMS = cuprim_x_items<In>();
        typedef typename In::item T;
        const u32 m = in.template misalign<ITEMS>();
        if (m == CUPRIM_X_MIXED) {
            for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) one(in.load(i), i);
            return;
        }
        const cuprim_split<ITEMS> s(n, m == CUPRIM_X_ANY ? 0u : m);
        cuprim_split_stride<UNROLL>(
            s, [&](u64 i) { one(in.load(i), i); }, [&](u64 v) { return in.template load_n<ITEMS>(s.index(v, 0)); },
            [&](u64 v, const cuprim_arr<T, ITEMS>& x) { vec(x, s.index(v, 0)); });
    }
}

template <int UNROLL, bool STREAM = false, typename In, typename Visit>
__device__ __forceinline__ void cuprim_consume_x(const In& in, u64 n, Visit visit) {
    cuprim_consume_vecs_x<UNROLL, STREAM>(in, n, visit, cuprim_each_element(visit));
}

// An input split at vector boundaries (cuprim_split) and read in vectors of
// ITEMS = cuprim_x_items<In>() elements, for kernels that walk the split
// themselves (the searches, vote): a buffer with plain ITEMS-element vector
// loads from its body (the loads of cuprim_consume), any other expression
// with load_n, or element by element (load) when its buffers disagree on
// alignment (their split then has no head). one(i): element i; vec(v):
// body vector v, whose element k is element s.index(v, k). ALIGNED: the
// caller knows the split has no head (cuprim_x_on_boundary).
template <typename In, bool ALIGNED = false, bool BUF = In::IS_BUF> struct cuprim_x_reader;

template <typename In, bool ALIGNED> struct cuprim_x_reader<In, ALIGNED, true> {
    typedef typename In::item T;
    static constexpr int ITEMS = cuprim_x_items<In>();
    const T* p;
    cuprim_split<ITEMS, ALIGNED> s;
    const cuprim_vec<T, ITEMS>* vin;
    __device__ __forceinline__ cuprim_x_reader(const In& in, u64 n) : p(in.p), s(n, cuprim_misalign<ITEMS>(in.p)) {
        vin = s.body(p);
        asm("" : "+l"(vin));  // kept in a register: else p + head is recomputed for every load
    }
    __device__ __forceinline__ T one(u64 i) const {
        return cuprim_load_ro(p + i);
    }
    __device__ __forceinline__ cuprim_vec<T, ITEMS> vec(u64 v) const {
        return cuprim_load_ro(vin + v);
    }
};

template <typename In, bool ALIGNED> struct cuprim_x_reader<In, ALIGNED, false> {
    typedef typename In::item T;
    static constexpr int ITEMS = cuprim_x_items<In>();
    const In& in;
    const bool mixed;
    cuprim_split<ITEMS, ALIGNED> s;
    __device__ __forceinline__ cuprim_x_reader(const In& x, u64 n, u32 m)
        : in(x), mixed(m == CUPRIM_X_MIXED), s(n, (m == CUPRIM_X_ANY || m == CUPRIM_X_MIXED) ? 0u : m) {}
    __device__ __forceinline__ cuprim_x_reader(const In& x, u64 n) : cuprim_x_reader(x, n, x.template misalign<ITEMS>()) {}
    __device__ __forceinline__ T one(u64 i) const {
        return in.load(i);
    }
    __device__ __forceinline__ cuprim_arr<T, ITEMS> vec(u64 v) const {
        const u64 first = s.index(v, 0);
        if (mixed) {
            cuprim_arr<T, ITEMS> r;
#pragma unroll
            for (int k = 0; k < ITEMS; k++) r.v[k] = in.load(first + k);
            return r;
        }
        return in.template load_n<ITEMS>(first);
    }
};

// Whether cuprim_x_reader's split of `in` has no head: a buffer on a vector
// boundary; an expression whose buffers are on one, or that has none, or
// whose buffers disagree (read element by element).
template <typename In> __device__ __forceinline__ bool cuprim_x_on_boundary(const In& in) {
    if constexpr (In::IS_BUF) {
        return cuprim_misalign<cuprim_x_items<In>()>(in.p) == 0;
    } else {
        const u32 m = in.template misalign<cuprim_x_items<In>()>();
        return m == 0 || m == CUPRIM_X_ANY || m == CUPRIM_X_MIXED;
    }
}
