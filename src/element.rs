//! Element types: what a [`DeviceVec`](crate::DeviceVec) can hold.
//!
//! [`Element`] is sealed and implemented for `u8 i8 u32 i32 u64 i64`,
//! `f16` and `bf16` (from the [`half`] crate), `f32` and `f64`. Each element knows
//! its CUDA type name, how to write one of its values as a CUDA literal (bit-exact),
//! and how to convert to every other element type ([`Element::cast`]).
//!
//! On the device, `f16` and `bf16` are small structs (`cuprim_f16`, `cuprim_bf16`)
//! that convert to `float` for arithmetic and round back to nearest-even, exactly
//! as the [`half`] crate does on the host; so both backends give the same bits.

use bytemuck::Pod;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use half::{bf16, f16};
use std::fmt::Debug;

mod sealed {
    pub trait Sealed {}
}

/// The broad class of an element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Unsigned integer.
    Unsigned,
    /// Signed (two's complement) integer.
    Signed,
    /// IEEE-754 binary floating point (`f16`, `bf16`, `f32`, `f64`).
    Float,
}

/// One value of any element type, used to convert between types.
#[derive(Clone, Copy, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Scalar {
    U8(u8),
    I8(i8),
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    F16(f16),
    Bf16(bf16),
    F32(f32),
    F64(f64),
}

/// What a [`DeviceVec`](crate::DeviceVec) can store: plain bytes that are
/// valid on the device and the host alike. Sealed. Implemented for every
/// [`Element`] and for arrays `[T; N]` of them (e.g. `[f32; 3]`, a point for
/// [`nearest_neighbors`](crate::algo::knn::nearest_neighbors)). Only the
/// storage operations (copies, views, slicing) need this; the numeric
/// families need [`Element`].
///
/// ```
/// use cuprim::prelude::*;
/// use cuprim::Storable;
/// assert_eq!(<[f32; 3] as Storable>::type_name(), "[f32; 3]");
/// let pts = DeviceVec::from_slice(&Device::default()?, &[[0.0f32, 1.0], [2.0, 3.0]])?;
/// assert_eq!(pts.len(), 2);
/// assert_eq!(pts.slice(1..)?.to_vec()?, vec![[2.0, 3.0]]);
/// # Ok::<(), cuprim::Error>(())
/// ```
pub trait Storable: sealed::Sealed + Pod + Copy + Debug + PartialEq + Send + Sync + DeviceRepr + ValidAsZeroBits + 'static {
    /// Rust name of the type (`"f32"`, `"[f32; 3]"`), for messages.
    fn type_name() -> String;
}

impl<T: Element, const N: usize> sealed::Sealed for [T; N] {}
impl<T: Element, const N: usize> Storable for [T; N] {
    fn type_name() -> String {
        format!("[{}; {N}]", T::NAME)
    }
}

/// A scalar element type: what the numeric families work on. Sealed.
///
/// ```
/// use cuprim::Element;
/// assert_eq!(<f32 as Element>::NAME, "f32");
/// assert_eq!(<u64 as Element>::CUDA_TYPE, "unsigned long long");
/// let x: u8 = 300.5f32.cast(); // saturating, like Rust's `as`
/// assert_eq!(x, 255);
/// ```
pub trait Element: Storable + Default + PartialOrd {
    /// Rust name (`"f32"`), used in kernel names and messages.
    const NAME: &'static str;
    /// The CUDA C++ type that holds this element on the device.
    const CUDA_TYPE: &'static str;
    /// Integer or float, signed or not.
    const KIND: Kind;

    /// Additive identity.
    fn zero() -> Self;
    /// Multiplicative identity.
    fn one() -> Self;
    /// The least value: `MIN` for integers, `-inf` for floats.
    fn lowest() -> Self;
    /// The greatest value: `MAX` for integers, `+inf` for floats.
    fn highest() -> Self;
    /// True for a floating-point NaN; always false for integers.
    fn is_nan(self) -> bool;
    /// Writes this value as a CUDA C++ expression of type `CUDA_TYPE`,
    /// bit-exact (floats are written from their bits).
    fn cuda_literal(self) -> String;
    /// This value as a [`Scalar`].
    fn to_scalar(self) -> Scalar;
    /// Converts from any element type with Rust's `as` semantics (integers
    /// wrap, float to integer saturates and NaN becomes 0). Conversions to or
    /// from `f16`/`bf16` go through `f32`, as they do on the device.
    fn from_scalar(s: Scalar) -> Self;
    /// The value as `f64` (exact for every type but 64-bit integers past 2^53).
    fn to_f64(self) -> f64;

    /// Converts to another element type; see [`Element::from_scalar`].
    fn cast<U: Element>(self) -> U {
        U::from_scalar(self.to_scalar())
    }
}

/// Integer element types: the bitwise operators are defined for these only.
pub trait IntElement: Element {}

/// Index types accepted by `gather` and `scatter`: `u32` and `u64`.
pub trait IndexElement: Element {
    /// The index as `u64`.
    fn as_u64(self) -> u64;
}

impl IndexElement for u32 {
    fn as_u64(self) -> u64 {
        self as u64
    }
}
impl IndexElement for u64 {
    fn as_u64(self) -> u64 {
        self
    }
}

macro_rules! from_scalar_as {
    ($t:ty, $s:expr) => {
        match $s {
            Scalar::U8(v) => v as $t,
            Scalar::I8(v) => v as $t,
            Scalar::U32(v) => v as $t,
            Scalar::I32(v) => v as $t,
            Scalar::U64(v) => v as $t,
            Scalar::I64(v) => v as $t,
            Scalar::F16(v) => v.to_f32() as $t,
            Scalar::Bf16(v) => v.to_f32() as $t,
            Scalar::F32(v) => v as $t,
            Scalar::F64(v) => v as $t,
        }
    };
}

macro_rules! int_element {
    ($t:ty, $var:ident, $name:literal, $cuda:literal, $kind:ident) => {
        impl sealed::Sealed for $t {}
        impl Storable for $t {
            fn type_name() -> String {
                $name.into()
            }
        }
        impl IntElement for $t {}
        impl Element for $t {
            const NAME: &'static str = $name;
            const CUDA_TYPE: &'static str = $cuda;
            const KIND: Kind = Kind::$kind;
            fn zero() -> Self {
                0
            }
            fn one() -> Self {
                1
            }
            fn lowest() -> Self {
                <$t>::MIN
            }
            fn highest() -> Self {
                <$t>::MAX
            }
            fn is_nan(self) -> bool {
                false
            }
            fn cuda_literal(self) -> String {
                // Written through the unsigned bit pattern, so MIN needs no
                // special spelling.
                format!("(({}){}ull)", $cuda, self as u64)
            }
            fn to_scalar(self) -> Scalar {
                Scalar::$var(self)
            }
            fn from_scalar(s: Scalar) -> Self {
                from_scalar_as!($t, s)
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    };
}

int_element!(u8, U8, "u8", "unsigned char", Unsigned);
int_element!(i8, I8, "i8", "signed char", Signed);
int_element!(u32, U32, "u32", "unsigned int", Unsigned);
int_element!(i32, I32, "i32", "int", Signed);
int_element!(u64, U64, "u64", "unsigned long long", Unsigned);
int_element!(i64, I64, "i64", "long long", Signed);

impl sealed::Sealed for f32 {}
impl Storable for f32 {
    fn type_name() -> String {
        "f32".into()
    }
}
impl Element for f32 {
    const NAME: &'static str = "f32";
    const CUDA_TYPE: &'static str = "float";
    const KIND: Kind = Kind::Float;
    fn zero() -> Self {
        0.0
    }
    fn one() -> Self {
        1.0
    }
    fn lowest() -> Self {
        f32::NEG_INFINITY
    }
    fn highest() -> Self {
        f32::INFINITY
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn cuda_literal(self) -> String {
        format!("__uint_as_float({:#010x}u)", self.to_bits())
    }
    fn to_scalar(self) -> Scalar {
        Scalar::F32(self)
    }
    fn from_scalar(s: Scalar) -> Self {
        from_scalar_as!(f32, s)
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl sealed::Sealed for f64 {}
impl Storable for f64 {
    fn type_name() -> String {
        "f64".into()
    }
}
impl Element for f64 {
    const NAME: &'static str = "f64";
    const CUDA_TYPE: &'static str = "double";
    const KIND: Kind = Kind::Float;
    fn zero() -> Self {
        0.0
    }
    fn one() -> Self {
        1.0
    }
    fn lowest() -> Self {
        f64::NEG_INFINITY
    }
    fn highest() -> Self {
        f64::INFINITY
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn cuda_literal(self) -> String {
        format!("__longlong_as_double({:#018x}ll)", self.to_bits())
    }
    fn to_scalar(self) -> Scalar {
        Scalar::F64(self)
    }
    fn from_scalar(s: Scalar) -> Self {
        from_scalar_as!(f64, s)
    }
    fn to_f64(self) -> f64 {
        self
    }
}

macro_rules! half_element {
    ($t:ty, $var:ident, $name:literal, $cuda:literal) => {
        impl sealed::Sealed for $t {}
        impl Storable for $t {
            fn type_name() -> String {
                $name.into()
            }
        }
        impl Element for $t {
            const NAME: &'static str = $name;
            const CUDA_TYPE: &'static str = $cuda;
            const KIND: Kind = Kind::Float;
            fn zero() -> Self {
                <$t>::ZERO
            }
            fn one() -> Self {
                <$t>::ONE
            }
            fn lowest() -> Self {
                <$t>::NEG_INFINITY
            }
            fn highest() -> Self {
                <$t>::INFINITY
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn cuda_literal(self) -> String {
                format!("{}::from_bits({:#06x})", $cuda, self.to_bits())
            }
            fn to_scalar(self) -> Scalar {
                Scalar::$var(self)
            }
            fn from_scalar(s: Scalar) -> Self {
                match s {
                    Scalar::$var(v) => v,
                    other => <$t>::from_f32(from_scalar_as!(f32, other)),
                }
            }
            fn to_f64(self) -> f64 {
                self.to_f64()
            }
        }
    };
}

half_element!(f16, F16, "f16", "cuprim_f16");
half_element!(bf16, Bf16, "bf16", "cuprim_bf16");

/// Calls `$m!(T)` once for every element type, for tests and compile checks.
#[macro_export]
#[doc(hidden)]
macro_rules! for_each_element {
    ($m:ident) => {
        $m!(u8);
        $m!(i8);
        $m!(u32);
        $m!(i32);
        $m!(u64);
        $m!(i64);
        $m!($crate::f16);
        $m!($crate::bf16);
        $m!(f32);
        $m!(f64);
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_follow_rust_as() {
        assert_eq!((-1i32).cast::<u8>(), 255u8);
        assert_eq!(f32::NAN.cast::<i32>(), 0);
        assert_eq!(1e20f32.cast::<i64>(), i64::MAX);
        assert_eq!((-1e20f64).cast::<u32>(), 0);
        assert_eq!(u64::MAX.cast::<f32>(), u64::MAX as f32);
        assert_eq!(3u32.cast::<f16>(), f16::from_f32(3.0));
        assert_eq!(f16::from_f32(2.5).cast::<i32>(), 2);
        assert_eq!(1.5f64.cast::<bf16>(), bf16::from_f32(1.5));
    }

    #[test]
    fn literals_are_bit_exact() {
        assert_eq!((-0.0f32).cuda_literal(), "__uint_as_float(0x80000000u)");
        assert_eq!(i32::MIN.cuda_literal(), "((int)18446744071562067968ull)");
        assert_eq!(f16::ONE.cuda_literal(), "cuprim_f16::from_bits(0x3c00)");
    }
}
