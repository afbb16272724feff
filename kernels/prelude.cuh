// cuprim prelude: element semantics shared by every kernel (integer
// typedefs, half types, traits, limits, arithmetic and casts with the host's
// meaning).
//
// Compiled by NVRTC alone: no toolkit headers. The block building blocks
// follow it in the same prelude (src/jit/source.rs: PRELUDE): block/load.cuh
// (vectors, thread indices, loads, the consume loop), block/collective.cuh
// (shuffles, block reduce), block/ticket.cuh (last-block ticket),
// block/backoff.cuh (look-back back-off). The generated part of each source
// (element typedefs, operator functors, tuning constants) comes after the
// prelude and before the kernel template.

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
    static constexpr unsigned short INF_BITS = 0x7c00;
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
    static constexpr unsigned short INF_BITS = 0x7f80;
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
    } else if constexpr (sizeof(T) == 4 && cuprim_traits<T>::is_float) {
        // The sign bit flipped, as Rust's `-x`: PTX's neg.f32 may return any
        // NaN for a NaN.
        return __int_as_float(__float_as_int(a) ^ (int)0x80000000);
    } else if constexpr (cuprim_traits<T>::is_float) {
        return __longlong_as_double(__double_as_longlong(a) ^ (long long)0x8000000000000000ull);
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
template <typename T> __device__ __forceinline__ bool cuprim_is_nan(T a) {
    if constexpr (cuprim_traits<T>::is_float) {
        return a != a;
    } else {
        return false;
    }
}
// Every NaN of a float type as one NaN (positive, quiet, no payload); other
// values as they are. Which NaN an IEEE operation returns for two NaN
// operands is unspecified, and the compiler may swap a commutative
// operation's operands, so two code paths computing the same fold can differ
// in a NaN's sign: values that must be the same bits every run pass here.
template <typename T> __device__ __forceinline__ T cuprim_canonical_nan(T a) {
    if constexpr (cuprim_traits<T>::is_half) {
        const unsigned short quiet = (unsigned short)((~T::INF_BITS & 0x7fff) + 1) >> 1;
        return (a.bits & 0x7fff) > T::INF_BITS ? T::from_bits(T::INF_BITS | quiet) : a;
    } else if constexpr (sizeof(T) == 4 && cuprim_traits<T>::is_float) {
        return a != a ? __int_as_float(0x7fc00000) : a;
    } else if constexpr (cuprim_traits<T>::is_float) {
        return a != a ? __longlong_as_double(0x7ff8000000000000ll) : a;
    } else {
        return a;
    }
}
template <typename T> __device__ __forceinline__ bool cuprim_sign_bit(T a) {
    if constexpr (cuprim_traits<T>::is_half) {
        return (a.bits & 0x8000) != 0;
    } else if constexpr (sizeof(T) == 4 && cuprim_traits<T>::is_float) {
        return __float_as_int(a) < 0;
    } else if constexpr (cuprim_traits<T>::is_float) {
        return __double_as_longlong(a) < 0;
    } else {
        return false;
    }
}
// The order of cuprim::ops::Min / Max (IEEE 754-2019 minimum / maximum):
// true when x comes strictly before y. NaN first, then the least (greatest)
// value, -0.0 before (after) +0.0; two NaNs are tied.
// A half value's place in the order below as one integer (smaller comes
// first): 0 for NaN, then the order-preserving key of its sign-magnitude
// bits (-0.0 below +0.0), reversed for the greatest-first order. Integer
// registers only (comparing as float made min_element spill).
template <bool Greatest, typename T> __device__ __forceinline__ u32 cuprim_half_rank(T x) {
    if ((x.bits & 0x7fff) > T::INF_BITS) return 0;
    const u32 key = (x.bits & 0x8000) ? (~x.bits & 0xffffu) : (x.bits | 0x8000u);
    return Greatest ? 0x10000u - key : key + 1;
}
template <bool Greatest, typename T> __device__ __forceinline__ bool cuprim_ranks_before(T x, T y) {
    if constexpr (cuprim_traits<T>::is_half) {
        return cuprim_half_rank<Greatest>(x) < cuprim_half_rank<Greatest>(y);
    } else if constexpr (cuprim_traits<T>::is_float) {
        const bool xn = cuprim_is_nan(x), yn = cuprim_is_nan(y);
        if (xn || yn) return xn && !yn;
        if (x == y) return Greatest ? (cuprim_sign_bit(y) && !cuprim_sign_bit(x)) : (cuprim_sign_bit(x) && !cuprim_sign_bit(y));
    }
    return Greatest ? (y < x) : (x < y);
}
// Min / Max: NaN is contagious and -0.0 < +0.0, so the result does not
// depend on the order operands are combined in (matches cuprim::ops::Min/Max).
// min_element / max_element: an element's place in the order of Min (Max)
// as one unsigned integer, smaller first, equal exactly when tied: 0 for
// NaN, then the order-preserving key of the value (-0.0 before +0.0 for
// the least), reversed for the greatest. One integer compare per element.
template <bool Greatest, typename T> __device__ __forceinline__ auto cuprim_arg_rank(T x) {
    if constexpr (cuprim_traits<T>::is_half) {
        return cuprim_half_rank<Greatest>(x);
    } else if constexpr (cuprim_traits<T>::is_float && sizeof(T) == 4) {
        const u32 b = __float_as_uint(x);
        if ((b & 0x7fffffffu) > 0x7f800000u) return 0u;
        const u32 key = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
        return Greatest ? 0xffffffffu - key : key + 1u;
    } else if constexpr (cuprim_traits<T>::is_float) {
        const u64 b = (u64)__double_as_longlong(x);
        if ((b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) return (u64)0;
        const u64 key = (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
        return Greatest ? 0xffffffffffffffffull - key : key + 1ull;
    } else if constexpr (sizeof(T) == 8) {
        const u64 key = (u64)x ^ (((T)-1 < (T)0) ? 0x8000000000000000ull : 0ull);
        return Greatest ? ~key : key;
    } else {
        // 8- and 32-bit integers, widened to u32 with their order kept.
        constexpr u32 sign = ((T)-1 < (T)0) ? (1u << (8 * sizeof(T) - 1)) : 0u;
        constexpr u32 mask = 0xffffffffu >> (32 - 8 * sizeof(T));
        const u32 key = ((u32)x & mask) ^ sign;
        return Greatest ? ~key : key;
    }
}
// A cheaper rank for min_element / max_element's first look at an element
// (block/collective.cuh: cuprim_arg_fold): strictly increasing wherever
// cuprim_arg_rank is, with the NaNs (all tied there) over the lowest values
// in some order. A float's is its order-preserving key, reversed for the
// greatest and moved so that the NaNs of both signs wrap to the bottom: three
// instructions and no branch. Other types' is their rank.
template <bool Greatest, typename T> __device__ __forceinline__ auto cuprim_arg_coarse(T x) {
    if constexpr (cuprim_traits<T>::is_float && !cuprim_traits<T>::is_half && sizeof(T) == 4) {
        const u32 b = __float_as_uint(x);
        const u32 key = b ^ ((u32)((i32)b >> 31) | 0x80000000u);
        return (Greatest ? ~key : key) + 0x007fffffu;
    } else if constexpr (cuprim_traits<T>::is_float && !cuprim_traits<T>::is_half) {
        const u64 b = (u64)__double_as_longlong(x);
        const u64 key = b ^ ((u64)((i64)b >> 63) | 0x8000000000000000ull);
        return (Greatest ? ~key : key) + 0x000fffffffffffffull;
    } else {
        return cuprim_arg_rank<Greatest>(x);
    }
}
// The least coarse rank from which equal coarse ranks mean tied elements:
// an infinity's for a float (below it, NaNs), every rank for other types.
template <typename T> __device__ __forceinline__ constexpr auto cuprim_arg_coarse_exact_from() {
    if constexpr (cuprim_traits<T>::is_float && !cuprim_traits<T>::is_half && sizeof(T) == 4) {
        return 0x00fffffeu;
    } else if constexpr (cuprim_traits<T>::is_float && !cuprim_traits<T>::is_half) {
        return 0x001ffffffffffffeull;
    } else {
        return (decltype(cuprim_arg_rank<false>(T{})))0;
    }
}
// min_element / max_element: true when (bv, bi) replaces (av, ai): b comes
// first in the order, or ties with a at a lower index.
template <bool Greatest, typename T> __device__ __forceinline__ bool cuprim_arg_wins(T av, u64 ai, T bv, u64 bi) {
    const auto ra = cuprim_arg_rank<Greatest>(av), rb = cuprim_arg_rank<Greatest>(bv);
    return rb < ra || (rb == ra && bi < ai);
}
template <typename T> __device__ __forceinline__ T cuprim_min(T a, T b) {
    return cuprim_ranks_before<false>(b, a) ? b : a;
}
template <typename T> __device__ __forceinline__ T cuprim_max(T a, T b) {
    return cuprim_ranks_before<true>(b, a) ? b : a;
}

// The order of the radix sort and of cuprim::cmp::Less: integers by value,
// floats in total_cmp order (-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf <
// +NaN), through their order-preserving unsigned keys.
template <typename T> __device__ __forceinline__ bool cuprim_total_less(T a, T b) {
    if constexpr (cuprim_traits<T>::is_half) {
        const u32 x = a.bits, y = b.bits;
        return ((x & 0x8000u) ? (~x & 0xffffu) : (x | 0x8000u)) < ((y & 0x8000u) ? (~y & 0xffffu) : (y | 0x8000u));
    } else if constexpr (sizeof(T) == 4 && cuprim_traits<T>::is_float) {
        const i32 x = __float_as_int(a), y = __float_as_int(b);
        // Signed compare of the bits with the magnitude bits flipped when negative.
        return (x ^ (i32)((u32)(x >> 31) >> 1)) < (y ^ (i32)((u32)(y >> 31) >> 1));
    } else if constexpr (cuprim_traits<T>::is_float) {
        const i64 x = __double_as_longlong(a), y = __double_as_longlong(b);
        return (x ^ (i64)((u64)(x >> 63) >> 1)) < (y ^ (i64)((u64)(y >> 63) >> 1));
    } else {
        return a < b;
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
