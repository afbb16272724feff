// Block building blocks, part 1: vectors, thread indices, loads, and the one
// grid-stride consume loop of every streaming kernel.
//
// Part of the prelude (src/jit/source.rs: PRELUDE), after kernels/prelude.cuh,
// so every kernel has it; like the rest of the prelude it precedes the
// generated specialisation and may not use its constants (CUPRIM_*): those
// come in as template arguments.

// A vector of N elements moved with one N * sizeof(T)-byte access.
template <typename T, int N> struct alignas(sizeof(T) * N) cuprim_vec {
    T v[N];
};

// Elements per 16-byte vector of the widest of Ts: arrays of Ts walked
// together move this many elements of each per access.
template <typename... Ts> constexpr int cuprim_items() {
    u64 widest = 1;
    ((widest = sizeof(Ts) > widest ? sizeof(Ts) : widest), ...);
    return (int)(16 / widest);
}

__device__ __forceinline__ u64 cuprim_thread_id() {
    return (u64)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ u64 cuprim_thread_count() {
    return (u64)gridDim.x * blockDim.x;
}

// Programmatic dependent launch (sm_90; src/device/launch.rs:
// launch_dependent). A kernel launched that way may start while the kernel
// queued before it still runs: every block calls cuprim_grid_wait() before
// it touches global memory that earlier work reads or writes (it returns at
// once for a plain launch). cuprim_grid_launch_dependents() lets the next
// such kernel be scheduled once every block of this one has called it (or
// exited), instead of at this kernel's end; it orders nothing in memory.
// Both do nothing before sm_90.
__device__ __forceinline__ void cuprim_grid_wait() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void cuprim_grid_launch_dependents() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

template <typename T> __device__ __forceinline__ bool cuprim_aligned_to(const void* p) {
    return (((unsigned long long)p) % sizeof(T)) == 0;
}

// A value viewed as 32-bit words (the tail word zero-padded).
template <typename V> union cuprim_words {
    static constexpr int W = (sizeof(V) + 3) / 4;
    V v;
    unsigned int w[W];
    unsigned short h;
    unsigned char b;
    __device__ __forceinline__ cuprim_words() {}
};

// A store of every byte of *p, padding included (as zeros), word by word:
// the matching writer of cuprim_load_cg, which reads whole words, so no
// reader sees bytes nobody wrote (initcheck counts those).
template <typename V> __device__ __forceinline__ void cuprim_store_words(V* p, const V& value) {
    static_assert(sizeof(V) % 4 == 0, "unsupported size");
    cuprim_words<V> r;
#pragma unroll
    for (int k = 0; k < cuprim_words<V>::W; k++) r.w[k] = 0;
    r.v = value;
#pragma unroll
    for (int k = 0; k < cuprim_words<V>::W; k++) ((unsigned int*)p)[k] = r.w[k];
}

// A load that bypasses L1 (reads what other blocks wrote in this launch).
template <typename V> __device__ __forceinline__ V cuprim_load_cg(const V* p) {
    static_assert(sizeof(V) % 4 == 0 || sizeof(V) <= 2, "unsupported size");
    cuprim_words<V> r;
    if constexpr (sizeof(V) == 1) {
        r.b = __ldcg((const unsigned char*)p);
    } else if constexpr (sizeof(V) == 2) {
        r.h = __ldcg((const unsigned short*)p);
    } else {
#pragma unroll
        for (int k = 0; k < cuprim_words<V>::W; k++) r.w[k] = __ldcg((const unsigned int*)p + k);
    }
    return r.v;
}

// A load of data that no thread writes during the kernel, through the
// read-only path (ld.global.nc), of 1, 2, 4, 8 or 16 bytes. Said explicitly
// because the compiler infers it for `const T* __restrict__` kernel
// parameters only while the address does not depend on its own integer
// value, and the consume loop's body (p + elements to the next boundary)
// does: reduce and find lost it. Plain asm without a memory clobber, not
// __ldg, which made the histogram's other loads (the bin edges) lose it.
template <typename V> __device__ __forceinline__ V cuprim_load_ro(const V* p) {
    static_assert(sizeof(V) == 1 || sizeof(V) == 2 || sizeof(V) == 4 || sizeof(V) == 8 || sizeof(V) == 16,
                  "unsupported size");
    cuprim_words<V> r;
    if constexpr (sizeof(V) == 1) {
        unsigned short h;
        asm("ld.global.nc.u8 %0, [%1];" : "=h"(h) : "l"(p));
        r.b = (unsigned char)h;
    } else if constexpr (sizeof(V) == 2) {
        asm("ld.global.nc.u16 %0, [%1];" : "=h"(r.h) : "l"(p));
    } else if constexpr (sizeof(V) == 4) {
        asm("ld.global.nc.u32 %0, [%1];" : "=r"(r.w[0]) : "l"(p));
    } else if constexpr (sizeof(V) == 8) {
        asm("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(r.w[0]), "=r"(r.w[1]) : "l"(p));
    } else {
        asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
            : "=r"(r.w[0]), "=r"(r.w[1]), "=r"(r.w[2]), "=r"(r.w[3])
            : "l"(p));
    }
    return r.v;
}

// An asynchronous copy of BYTES (4, 8 or 16) from global to shared memory,
// both addresses aligned to BYTES: cp.async on sm_80 and later (the copy in
// flight holds no register; 16 bytes bypass L1), elsewhere a plain load and
// store, complete at once. cuprim_cp_async_wait() waits for every copy the
// thread issued; a barrier after it makes all the block's copies visible.
template <int BYTES> __device__ __forceinline__ void cuprim_cp_async(void* s, const void* g) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async moves 4, 8 or 16 bytes");
#if __CUDA_ARCH__ >= 800
    const u32 at = (u32)__cvta_generic_to_shared(s);
    if constexpr (BYTES == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(at), "l"(g) : "memory");
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(at), "l"(g), "n"(BYTES) : "memory");
    }
#else
    typedef cuprim_vec<u32, BYTES / 4> Piece;
    *(Piece*)s = *(const Piece*)g;
#endif
}
__device__ __forceinline__ void cuprim_cp_async_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

// A hint to L2 to fetch the line holding p (no register waits on it; an
// address of the caller's own buffer).
__device__ __forceinline__ void cuprim_prefetch_l2(const void* p) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

// A 16-byte load of read-only data. STREAM: one that streams past L1 and
// asks L2 for the whole 256-byte neighbourhood; otherwise cuprim_load_ro.
template <bool STREAM = false, typename V> __device__ __forceinline__ V cuprim_load_stream(const V* p) {
    if constexpr (STREAM) {
        static_assert(sizeof(V) == 16, "16-byte vectors only");
        cuprim_words<V> r;
        asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r.w[0]), "=r"(r.w[1]), "=r"(r.w[2]), "=r"(r.w[3])
                     : "l"(p));
        return r.v;
    } else {
        return cuprim_load_ro(p);
    }
}

// ---------------------------------------------------------------------------
// The consume loop.
//
// Arrays are walked in vectors of ITEMS elements. An array that starts
// `misalign` elements past a vector boundary (a slice such as v.slice(1..))
// is split into a head (the elements before the first boundary, one per
// thread), whole vectors, and a tail (the elements after the last whole
// vector, one per thread); head and tail each have fewer than ITEMS elements,
// so any grid of at least 16 threads covers them. An aligned array has no head.

// How many elements p is past a boundary of ITEMS-element vectors (p is
// aligned to its element, as every typed device address is).
template <int ITEMS, typename T> __device__ __forceinline__ u32 cuprim_misalign(const T* p) {
    return (u32)(((u64)p / sizeof(T)) % ITEMS);
}

// [0, n) split at the vector boundaries of an array `misalign` elements past
// one. ALIGNED: the caller knows misalign is 0 (no head, and the vector loop
// compiles as it did before misaligned arrays had one).
template <int ITEMS, bool ALIGNED = false> struct cuprim_split {
    u64 n;
    u64 head;     // elements [0, head) are taken one at a time,
    u64 vectors;  // then this many vectors: elements [head, tail),
    u64 tail;     // then elements [tail, n) one at a time.
    __device__ __forceinline__ cuprim_split(u64 count, u32 misalign) : n(count) {
        if constexpr (ALIGNED) {
            (void)misalign;
            head = 0;
            vectors = n / ITEMS;
        } else {
            head = misalign ? ITEMS - misalign : 0;
            if (head > n) head = n;
            // Opaque from here on: otherwise the compiler recomputes head and
            // the vector count from the address inside the vector loop (about
            // ten more instructions per round there).
            asm("" : "+l"(head));
            vectors = (n - head) / ITEMS;
            asm("" : "+l"(vectors));
        }
        tail = head + vectors * ITEMS;
    }
    // The vectors of an array split this way: element head is vector 0.
    template <typename T> __device__ __forceinline__ cuprim_vec<T, ITEMS>* body(T* p) const {
        return (cuprim_vec<T, ITEMS>*)(p + head);
    }
    template <typename T> __device__ __forceinline__ const cuprim_vec<T, ITEMS>* body(const T* p) const {
        return (const cuprim_vec<T, ITEMS>*)(p + head);
    }
    // The index of element k of body vector v.
    __device__ __forceinline__ u64 index(u64 v, int k) const {
        return head + v * ITEMS + k;
    }
};

// Grid-stride loop over `count` items with UNROLL independent loads in flight
// per thread: `load(i)` for UNROLL items first, then `store(i, value)` for each.
// Items are usually 16-byte vectors, so a warp moves 512 contiguous bytes per
// access.
template <int UNROLL, typename Load, typename Store>
__device__ __forceinline__ void cuprim_grid_stride(u64 count, Load load, Store store) {
    const u64 stride = cuprim_thread_count();
    u64 i = cuprim_thread_id();
    for (; i + (UNROLL - 1) * stride < count; i += UNROLL * stride) {
        decltype(load(i)) x[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) x[u] = load(i + u * stride);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) store(i + u * stride, x[u]);
    }
    if constexpr (UNROLL > 1) {
        for (; i < count; i += stride) store(i, load(i));
    }
}

// THE consume loop, over a split s: each thread of the grid takes its
// element of the head (`one(i)`), then its body vectors in grid-stride
// order, UNROLL loads in flight (`load(v)` then `store(v, x)`, v counting
// vectors from s.body), then its element of the tail (`one(i)`). Which
// thread takes which element, and in what order, depends only on n,
// misalignment and the grid.
template <int UNROLL, int ITEMS, bool ALIGNED, typename One, typename Load, typename Store>
__device__ __forceinline__ void cuprim_split_stride(const cuprim_split<ITEMS, ALIGNED>& s, One one, Load load,
                                                    Store store) {
    const u64 tid = cuprim_thread_id();
    if (tid < s.head) one(tid);
    cuprim_grid_stride<UNROLL>(s.vectors, load, store);
    const u64 t = s.tail + tid;
    if (t < s.n) one(t);
}

// Read-only form: visit(x, i) with x = in[i], for every i < n, once in the
// grid, 16-byte vectors in the body (STREAM: cuprim_load_stream's streaming
// load). A thread visits its head element, its vectors' elements in order,
// then its tail element, so a fold in visit has a fixed order for a given
// length, alignment and grid. `in` is not written during the kernel.
// cuprim_consume_vecs is the same walk with the body's vectors visited whole:
// one(x, i) for a head or tail element, vec(x, i) for a vector x (x.v[k] is
// element i + k); cuprim_consume visits each element of a vector in turn.
template <int UNROLL, bool STREAM = false, typename T, typename One, typename Vec>
__device__ __forceinline__ void cuprim_consume_vecs(const T* __restrict__ in, u64 n, One one, Vec vec) {
    constexpr int ITEMS = 16 / sizeof(T);
    typedef cuprim_vec<T, ITEMS> V;
    const cuprim_split<ITEMS> s(n, cuprim_misalign<ITEMS>(in));
    const V* __restrict__ vin = s.body(in);
    cuprim_split_stride<UNROLL>(
        s, [&](u64 i) { one(cuprim_load_ro(in + i), i); }, [&](u64 v) { return cuprim_load_stream<STREAM>(vin + v); },
        [&](u64 v, const V& x) { vec(x, s.index(v, 0)); });
}

// The vector visit of the consume loops for an element visit:
// visit(x.v[k], i + k) for each element of the vector x at element i.
template <typename Visit> __device__ __forceinline__ auto cuprim_each_element(Visit& visit) {
    return [&](const auto& x, u64 i) {
        constexpr int ITEMS = sizeof(x.v) / sizeof(x.v[0]);
#pragma unroll
        for (int k = 0; k < ITEMS; k++) visit(x.v[k], i + k);
    };
}

template <int UNROLL, bool STREAM = false, typename T, typename Visit>
__device__ __forceinline__ void cuprim_consume(const T* __restrict__ in, u64 n, Visit visit) {
    cuprim_consume_vecs<UNROLL, STREAM>(in, n, visit, cuprim_each_element(visit));
}

// One vector of each of Ts (a tuple), for cuprim_map.
template <int ITEMS, typename... Ts> struct cuprim_vecs {
    __device__ __forceinline__ static cuprim_vecs load(u64) {
        return {};
    }
    // f(elements k of the vectors before this one...).
    template <typename F, typename... Xs> __device__ __forceinline__ auto apply(int, F f, const Xs&... xs) const {
        return f(xs...);
    }
};
template <int ITEMS, typename T, typename... Ts> struct cuprim_vecs<ITEMS, T, Ts...> {
    cuprim_vec<T, ITEMS> first;
    cuprim_vecs<ITEMS, Ts...> rest;
    // Vector v of each array (p, ps...: vector pointers).
    __device__ __forceinline__ static cuprim_vecs load(u64 v, const cuprim_vec<T, ITEMS>* p,
                                                       const cuprim_vec<Ts, ITEMS>*... ps) {
        return {p[v], cuprim_vecs<ITEMS, Ts...>::load(v, ps...)};
    }
    template <typename F, typename... Xs> __device__ __forceinline__ auto apply(int k, F f, const Xs&... xs) const {
        return rest.apply(k, f, xs..., first.v[k]);
    }
};

template <int UNROLL, bool ALIGNED, typename F, typename U, typename... Ts>
__device__ __forceinline__ void cuprim_map_split(u32 misalign, F f, U* out, u64 n, const Ts*... in) {
    constexpr int ITEMS = cuprim_items<U, Ts...>();
    typedef cuprim_vec<U, ITEMS> V;
    const cuprim_split<ITEMS, ALIGNED> s(n, misalign);
    V* vout = s.body(out);
    cuprim_split_stride<UNROLL>(
        s, [&](u64 i) { out[i] = f(in[i]...); },
        [&](u64 v) { return cuprim_vecs<ITEMS, Ts...>::load(v, s.body(in)...); },
        [&](u64 v, const cuprim_vecs<ITEMS, Ts...>& x) {
            V y;
#pragma unroll
            for (int k = 0; k < ITEMS; k++) y.v[k] = x.apply(k, f);
            vout[v] = y;
        });
}

// Read+write form: out[i] = f(in[i]...) for every i < n, with any number of
// inputs (none: fill). Vectors of cuprim_items<U, Ts...>() elements (16 bytes
// of the widest type) when every input is as far past a vector boundary as
// `out`, the head and tail one at a time; inputs misaligned differently from
// `out` take a scalar grid-stride loop. Aligned arrays take a copy of the
// loop compiled for no head (these loops are short). Inputs are not written
// during the kernel, except that an input may be `out` itself
// (transform_in_place): each element is read before it is written, by the
// thread that writes it. So no pointer here is __restrict__ (one that
// aliases another would make that undefined); the unrolled loop issues its
// loads before its stores explicitly, so the promise is not needed.
template <int UNROLL, typename F, typename U, typename... Ts>
__device__ __forceinline__ void cuprim_map(F f, U* out, u64 n, const Ts*... in) {
    constexpr int ITEMS = cuprim_items<U, Ts...>();
    const u32 misalign = cuprim_misalign<ITEMS>(out);
    if (!(true && ... && (cuprim_misalign<ITEMS>(in) == misalign))) {
        for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) out[i] = f(in[i]...);
    } else if (misalign == 0) {
        cuprim_map_split<UNROLL, true>(misalign, f, out, n, in...);
    } else {
        cuprim_map_split<UNROLL, false>(misalign, f, out, n, in...);
    }
}
