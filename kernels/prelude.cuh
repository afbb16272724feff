// cuprim prelude: types and helpers shared by every kernel.
//
// Compiled by NVRTC alone: no toolkit headers. The generated part of each
// source (element typedefs, operator functors, tuning constants) follows this
// file and precedes the kernel template.

typedef unsigned char u8;
typedef signed char i8;
typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;
typedef long long i64;

// ---------------------------------------------------------------------------
// Half-precision types. Stored as 16 raw bits; arithmetic converts to float
// and the result rounds back to nearest-even (what the Rust `half` crate does),
// so the host and the device agree bit for bit.
struct cuprim_f16 {
    unsigned short bits;
    cuprim_f16() = default;
    __device__ __forceinline__ cuprim_f16(float f) {
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f));
    }
    __device__ __forceinline__ operator float() const {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
        return f;
    }
    __device__ __forceinline__ static cuprim_f16 from_bits(unsigned short b) {
        cuprim_f16 h;
        h.bits = b;
        return h;
    }
};

struct cuprim_bf16 {
    unsigned short bits;
    cuprim_bf16() = default;
    __device__ __forceinline__ cuprim_bf16(float f) {
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(f));
    }
    __device__ __forceinline__ operator float() const {
        return __uint_as_float(((unsigned int)bits) << 16);
    }
    __device__ __forceinline__ static cuprim_bf16 from_bits(unsigned short b) {
        cuprim_bf16 h;
        h.bits = b;
        return h;
    }
};

// ---------------------------------------------------------------------------
// Type traits.
template <typename T> struct cuprim_traits {
    static constexpr bool is_float = false;
    static constexpr bool is_half = false;
};
template <> struct cuprim_traits<float> {
    static constexpr bool is_float = true;
    static constexpr bool is_half = false;
};
template <> struct cuprim_traits<double> {
    static constexpr bool is_float = true;
    static constexpr bool is_half = false;
};
template <> struct cuprim_traits<cuprim_f16> {
    static constexpr bool is_float = true;
    static constexpr bool is_half = true;
};
template <> struct cuprim_traits<cuprim_bf16> {
    static constexpr bool is_float = true;
    static constexpr bool is_half = true;
};

// Integer limits, for saturating float -> integer casts.
template <typename T> struct cuprim_limits;
template <> struct cuprim_limits<u8> { static constexpr u8 lo = 0, hi = 255; };
template <> struct cuprim_limits<i8> { static constexpr i8 lo = -128, hi = 127; };
template <> struct cuprim_limits<u32> { static constexpr u32 lo = 0, hi = 0xffffffffu; };
template <> struct cuprim_limits<i32> { static constexpr i32 lo = (-2147483647 - 1), hi = 2147483647; };
template <> struct cuprim_limits<u64> { static constexpr u64 lo = 0, hi = 0xffffffffffffffffull; };
template <> struct cuprim_limits<i64> {
    static constexpr i64 lo = (-9223372036854775807ll - 1), hi = 9223372036854775807ll;
};

// Unsigned twin of each integer type: integer arithmetic wraps through it
// (signed overflow is undefined in C++; Rust's wrapping ops are what we mean).
template <typename T> struct cuprim_wrap { typedef T type; };
template <> struct cuprim_wrap<i8> { typedef u8 type; };
template <> struct cuprim_wrap<i32> { typedef u32 type; };
template <> struct cuprim_wrap<i64> { typedef u64 type; };

// ---------------------------------------------------------------------------
// Arithmetic with the host's semantics.
template <typename T> __device__ __forceinline__ T cuprim_add(T a, T b) {
    typedef typename cuprim_wrap<T>::type W;
    return (T)(W)((W)a + (W)b);
}
template <typename T> __device__ __forceinline__ T cuprim_sub(T a, T b) {
    typedef typename cuprim_wrap<T>::type W;
    return (T)(W)((W)a - (W)b);
}
template <typename T> __device__ __forceinline__ T cuprim_mul(T a, T b) {
    typedef typename cuprim_wrap<T>::type W;
    return (T)(W)((W)a * (W)b);
}
template <typename T> __device__ __forceinline__ T cuprim_neg(T a) {
    if constexpr (cuprim_traits<T>::is_half) {
        return T::from_bits(a.bits ^ 0x8000);
    } else if constexpr (cuprim_traits<T>::is_float) {
        return -a;
    } else {
        typedef typename cuprim_wrap<T>::type W;
        return (T)(W)((W)0 - (W)a);
    }
}
template <typename T> __device__ __forceinline__ T cuprim_abs(T a) {
    if constexpr (cuprim_traits<T>::is_half) {
        return T::from_bits(a.bits & 0x7fff);
    } else if constexpr (sizeof(T) == 4 && cuprim_traits<T>::is_float) {
        return __int_as_float(__float_as_int(a) & 0x7fffffff);
    } else if constexpr (cuprim_traits<T>::is_float) {
        return __longlong_as_double(__double_as_longlong(a) & 0x7fffffffffffffffll);
    } else {
        return a < (T)0 ? cuprim_neg(a) : a;
    }
}
// NaN-ignoring min / max: a NaN operand loses (matches cuprim::ops::Min/Max).
template <typename T> __device__ __forceinline__ T cuprim_min(T a, T b) {
    return (b < a || a != a) ? b : a;
}
template <typename T> __device__ __forceinline__ T cuprim_max(T a, T b) {
    return (a < b || a != a) ? b : a;
}
template <typename T> __device__ __forceinline__ bool cuprim_is_nan(T a) {
    if constexpr (cuprim_traits<T>::is_float) {
        return a != a;
    } else {
        return false;
    }
}

// Conversions with Rust `as` semantics: integers wrap, float -> integer
// saturates and NaN becomes 0, anything to or from a half type goes via float.
template <typename To, typename From> __device__ __forceinline__ To cuprim_cast(From x) {
    if constexpr (!cuprim_traits<To>::is_float && cuprim_traits<From>::is_float) {
        double d;
        if constexpr (cuprim_traits<From>::is_half) {
            d = (double)(float)x;
        } else {
            d = (double)x;
        }
        if (d != d) return (To)0;
        if (d <= (double)cuprim_limits<To>::lo) return cuprim_limits<To>::lo;
        if (d >= (double)cuprim_limits<To>::hi) return cuprim_limits<To>::hi;
        return (To)d;
    } else if constexpr (cuprim_traits<To>::is_half) {
        return To((float)x);
    } else if constexpr (cuprim_traits<From>::is_half) {
        return (To)(float)x;
    } else {
        return (To)x;
    }
}

// A vector of N elements moved with one N * sizeof(T)-byte access.
template <typename T, int N> struct alignas(sizeof(T) * N) cuprim_vec {
    T v[N];
};

__device__ __forceinline__ u64 cuprim_thread_id() {
    return (u64)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ u64 cuprim_thread_count() {
    return (u64)gridDim.x * blockDim.x;
}

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
    for (; i < count; i += stride) store(i, load(i));
}

template <typename T> __device__ __forceinline__ bool cuprim_aligned_to(const void* p) {
    return (((unsigned long long)p) % sizeof(T)) == 0;
}

// ---------------------------------------------------------------------------
// Warp and block collectives over any trivially copyable type.

// A value viewed as 32-bit words (the tail word zero-padded).
template <typename V> union cuprim_words {
    static constexpr int W = (sizeof(V) + 3) / 4;
    V v;
    unsigned int w[W];
    unsigned short h;
    unsigned char b;
    __device__ __forceinline__ cuprim_words() {}
};

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

// A value and its index, for min_element / max_element.
template <typename T> struct cuprim_kv {
    T v;
    u64 i;
};

// A 16-byte load of read-only data that streams past L1 and asks L2 for the
// whole 256-byte neighbourhood (CUPRIM_STREAM_LOADS 1), or a plain load (0).
template <typename V> __device__ __forceinline__ V cuprim_load_stream(const V* p) {
#if CUPRIM_STREAM_LOADS
    static_assert(sizeof(V) == 16, "16-byte vectors only");
    cuprim_words<V> r;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r.w[0]), "=r"(r.w[1]), "=r"(r.w[2]), "=r"(r.w[3])
                 : "l"(p));
    return r.v;
#else
    return *p;
#endif
}

// Backs off between polls of a word another block has not written yet
// (a look-back predecessor), so spinning warps leave issue slots and
// memory bandwidth to the blocks doing work: no pause at the first poll,
// then 32 ns doubling up to MAX_NS; MAX_NS 0 never pauses.
template <u32 MAX_NS> struct cuprim_backoff {
    u32 ns = 0;
    __device__ __forceinline__ void pause() {
        if constexpr (MAX_NS == 0) return;
        if (ns) __nanosleep(ns);
        ns = ns ? (ns < MAX_NS ? ns * 2 : MAX_NS) : 32;
    }
};
