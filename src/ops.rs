//! Operators: the functions primitives are generic over.
//!
//! An operator is a type that carries the same function twice: as Rust
//! ([`BinaryOp::apply`], what the host backend runs and what tests compare
//! against) and as a CUDA C++ expression ([`BinaryOp::cuda_expr`], pasted into
//! the generated kernel). Marker traits state the algebra an algorithm needs:
//! [`Associative`], [`Commutative`], and [`Monoid`] (associative with an
//! identity). `reduce` needs `Monoid + Commutative`; `scan` needs only `Monoid`.
//!
//! # Defining your own operator
//!
//! Implement [`BinaryOp`] (and the marker traits that hold) for a unit struct.
//! The CUDA expression sees the operands as `a` and `b` of type `T` (the
//! element's CUDA type) and may call the prelude helpers `cuprim_add`,
//! `cuprim_sub`, `cuprim_mul` (wrapping for integers), `cuprim_min`, `cuprim_max`.
//! Here is a non-commutative one, "keep the right operand unless it is zero":
//!
//! ```
//! use cuprim::ops::{Associative, BinaryOp, Monoid};
//!
//! #[derive(Clone, Copy, Debug, Default)]
//! struct KeepRightNonZero;
//!
//! impl BinaryOp<u32> for KeepRightNonZero {
//!     fn apply(&self, a: u32, b: u32) -> u32 {
//!         if b != 0 { b } else { a }
//!     }
//!     fn cuda_expr(&self) -> String {
//!         "(b != 0u ? b : a)".into()
//!     }
//! }
//! impl Associative for KeepRightNonZero {}
//! impl Monoid<u32> for KeepRightNonZero {
//!     fn identity(&self) -> u32 { 0 }
//! }
//!
//! assert_eq!(KeepRightNonZero.apply(7, 0), 7);
//! assert_eq!(KeepRightNonZero.apply(7, 9), 9);
//! ```
//!
//! The [`binary_op!`](crate::binary_op) macro writes the same impls in one go.

use crate::element::{Element, IntElement};
use crate::value::Value;
use half::{bf16, f16};

/// A binary function `T x T -> T`, in Rust and in CUDA C++.
///
/// The two forms must compute the same bits for the same inputs: the test
/// suite compares the device against the host with this promise.
pub trait BinaryOp<T: Value>: Copy + Send + Sync + 'static {
    /// The function, in Rust.
    fn apply(&self, a: T, b: T) -> T;
    /// The same function as a CUDA C++ expression over `a` and `b` (type `T`).
    fn cuda_expr(&self) -> String;
    /// True when [`cuda_expr`](BinaryOp::cuda_expr) (and a monoid's
    /// identity) is the same for every value of this type. Then a warm call
    /// finds its kernel by type alone, formatting nothing; otherwise the
    /// text is part of the cache key. Default: true for types with no data
    /// (unit structs), which is what the built-in operators are.
    fn cuda_expr_is_fixed(&self) -> bool {
        std::mem::size_of::<Self>() == 0
    }
}

/// Marker: `op(op(a, b), c) == op(a, op(b, c))`. Floating-point addition and
/// multiplication count as associative (they are up to rounding); algorithms
/// that regroup them document their tolerance.
pub trait Associative {}

/// Marker: `op(a, b) == op(b, a)`.
pub trait Commutative {}

/// An associative operator with an identity: `op(identity, x) == x == op(x, identity)`.
pub trait Monoid<T: Value>: BinaryOp<T> + Associative {
    /// The identity element.
    fn identity(&self) -> T;
}

/// A unary function `T -> Output`, in Rust and in CUDA C++ (over `x`).
pub trait UnaryOp<T: Value>: Copy + Send + Sync + 'static {
    /// The result type.
    type Output: Value;
    /// The function, in Rust.
    fn apply(&self, x: T) -> Self::Output;
    /// The same function as a CUDA C++ expression over `x` (type `T`); its
    /// value is converted to `Output`'s CUDA type.
    fn cuda_expr(&self) -> String;
    /// As [`BinaryOp::cuda_expr_is_fixed`]: true (the default for types
    /// with no data) when the text depends on the type alone.
    fn cuda_expr_is_fixed(&self) -> bool {
        std::mem::size_of::<Self>() == 0
    }
}

/// Defines a binary operator type in one go: the struct, [`BinaryOp`] for each
/// listed element type, and optionally [`Monoid`] (with `identity:`, which
/// also declares [`Associative`]) and [`Commutative`] (`commutative: true,`).
///
/// ```
/// cuprim::binary_op! {
///     /// `max(|a|, |b|)` on i32 (wrapping `abs`).
///     pub struct MaxAbs for i32 {
///         rust: |a, b| a.wrapping_abs().max(b.wrapping_abs()),
///         cuda: "cuprim_max(a < 0 ? -a : a, b < 0 ? -b : b)",
///         identity: 0,
///         commutative: true,
///     }
/// }
/// use cuprim::ops::{BinaryOp, Monoid};
/// assert_eq!(MaxAbs.apply(-5, 3), 5);
/// assert_eq!(MaxAbs.identity(), 0);
/// ```
#[macro_export]
macro_rules! binary_op {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident for $($t:ty),+ {
            rust: |$a:ident, $b:ident| $body:expr,
            cuda: $cuda:expr,
            $(identity: $id:expr,)?
            $(commutative: $commutative:tt,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        $vis struct $name;
        $(
            impl $crate::ops::BinaryOp<$t> for $name {
                fn apply(&self, $a: $t, $b: $t) -> $t { $body }
                fn cuda_expr(&self) -> String { String::from($cuda) }
            }
        )+
        $crate::binary_op!(@monoid $name [$($t),+] $(($id))?);
        $( $crate::binary_op!(@commutative $commutative $name); )?
    };
    (@monoid $name:ident [$($t:ty),+]) => {};
    (@monoid $name:ident [$($t:ty),+] ($id:expr)) => {
        impl $crate::ops::Associative for $name {}
        $(
            impl $crate::ops::Monoid<$t> for $name {
                fn identity(&self) -> $t { $id }
            }
        )+
    };
    (@commutative true $name:ident) => { impl $crate::ops::Commutative for $name {} };
    (@commutative false $name:ident) => {};
}

/// `a + b` (wrapping for integers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Add;
/// `a * b` (wrapping for integers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mul;
/// `a - b` (wrapping for integers: `0u8 - 1 == 255`; IEEE for floats, `f16`
/// / `bf16` computed in `f32` and rounded back). Neither associative nor
/// commutative, so not a [`Monoid`]: it is for element-wise maps
/// (`transform2`) and `adjacent_difference`.
///
/// ```
/// use cuprim::ops::{BinaryOp, Sub};
/// assert_eq!(BinaryOp::<u8>::apply(&Sub, 0, 1), 255);
/// assert_eq!(BinaryOp::<f32>::apply(&Sub, 1.5, 2.0), -0.5);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sub;
/// The smaller operand; identity `MAX` (integers) or `+inf` (floats).
///
/// Floats follow IEEE 754-2019 `minimum`: NaN is contagious (if either
/// operand is NaN the result is a NaN; which NaN's payload is unspecified)
/// and `-0.0 < +0.0`. The result of a reduction, the last element of an
/// inclusive scan, `scan_by_key`, `transform_reduce` and [`min_element`]'s
/// value therefore agree on every input, on every backend, whatever order the
/// elements are combined in: any NaN gives NaN, and `[0.0, -0.0]` gives `-0.0`.
/// This is NumPy's `minimum` and PyTorch's `min`, not Rust's `f32::min`
/// (which ignores NaN).
///
/// ```
/// use cuprim::ops::{BinaryOp, Min};
/// assert!(Min.apply(f32::NAN, 1.0).is_nan());
/// assert_eq!(Min.apply(0.0f32, -0.0).to_bits(), (-0.0f32).to_bits());
/// assert_eq!(Min.apply(3u8, 2), 2);
/// ```
///
/// [`min_element`]: crate::algo::reduce::ReduceOps::min_element
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Min;
/// The larger operand; identity `MIN` (integers) or `-inf` (floats). Floats
/// follow IEEE 754-2019 `maximum`: NaN is contagious and `+0.0 > -0.0`, as
/// for [`Min`].
///
/// ```
/// use cuprim::ops::{BinaryOp, Max};
/// assert!(Max.apply(1.0f64, f64::NAN).is_nan());
/// assert_eq!(Max.apply(-0.0f32, 0.0).to_bits(), 0.0f32.to_bits());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Max;
/// Bitwise and (integers only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BitAnd;
/// Bitwise or (integers only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BitOr;
/// Bitwise exclusive or (integers only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BitXor;

impl Associative for Add {}
impl Commutative for Add {}
impl Associative for Mul {}
impl Commutative for Mul {}
impl Associative for Min {}
impl Commutative for Min {}
impl Associative for Max {}
impl Commutative for Max {}
impl Associative for BitAnd {}
impl Commutative for BitAnd {}
impl Associative for BitOr {}
impl Commutative for BitOr {}
impl Associative for BitXor {}
impl Commutative for BitXor {}

/// Host-side arithmetic with the device's semantics: wrapping integers, and
/// `f16`/`bf16` computed in `f32` and rounded back.
pub trait Arith: Element {
    /// Wrapping (integers) or IEEE (floats) addition.
    fn add(self, b: Self) -> Self;
    /// Wrapping (integers) or IEEE (floats) subtraction.
    fn sub(self, b: Self) -> Self;
    /// Wrapping (integers) or IEEE (floats) multiplication.
    fn mul(self, b: Self) -> Self;
    /// Wrapping negation for integers, sign flip for floats.
    fn neg(self) -> Self;
    /// Wrapping absolute value for integers, sign bit cleared for floats.
    fn abs(self) -> Self;
}

macro_rules! arith_int {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn add(self, b: Self) -> Self { self.wrapping_add(b) }
            fn sub(self, b: Self) -> Self { self.wrapping_sub(b) }
            fn mul(self, b: Self) -> Self { self.wrapping_mul(b) }
            fn neg(self) -> Self { self.wrapping_neg() }
            #[allow(unused_comparisons)]
            fn abs(self) -> Self { if self < 0 as $t { self.wrapping_neg() } else { self } }
        }
    )*};
}
arith_int!(u8, i8, u32, i32, u64, i64);

macro_rules! arith_float {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn add(self, b: Self) -> Self { self + b }
            fn sub(self, b: Self) -> Self { self - b }
            fn mul(self, b: Self) -> Self { self * b }
            fn neg(self) -> Self { -self }
            fn abs(self) -> Self { <$t>::abs(self) }
        }
    )*};
}
arith_float!(f32, f64);

macro_rules! arith_half {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn add(self, b: Self) -> Self { <$t>::from_f32(self.to_f32() + b.to_f32()) }
            fn sub(self, b: Self) -> Self { <$t>::from_f32(self.to_f32() - b.to_f32()) }
            fn mul(self, b: Self) -> Self { <$t>::from_f32(self.to_f32() * b.to_f32()) }
            fn neg(self) -> Self { -self }
            fn abs(self) -> Self { <$t>::from_bits(self.to_bits() & 0x7fff) }
        }
    )*};
}
arith_half!(f16, bf16);

impl<T: Arith> BinaryOp<T> for Add {
    fn apply(&self, a: T, b: T) -> T {
        a.add(b)
    }
    fn cuda_expr(&self) -> String {
        "cuprim_add(a, b)".into()
    }
}
impl<T: Arith> Monoid<T> for Add {
    /// `0` for integers, `-0.0` for floats: the float identity of addition
    /// (`-0.0 + x == x` for every `x`, including `-0.0`).
    fn identity(&self) -> T {
        T::zero().neg()
    }
}

impl<T: Arith> BinaryOp<T> for Sub {
    fn apply(&self, a: T, b: T) -> T {
        a.sub(b)
    }
    fn cuda_expr(&self) -> String {
        "cuprim_sub(a, b)".into()
    }
}

impl<T: Arith> BinaryOp<T> for Mul {
    fn apply(&self, a: T, b: T) -> T {
        a.mul(b)
    }
    fn cuda_expr(&self) -> String {
        "cuprim_mul(a, b)".into()
    }
}
impl<T: Arith> Monoid<T> for Mul {
    fn identity(&self) -> T {
        T::one()
    }
}

/// True when `x` comes strictly before `y` in the order of [`Min`] (or of
/// [`Max`] when `greatest`): NaN first, then the least (greatest) value,
/// `-0.0` before (after) `+0.0`. Two NaNs are tied.
pub(crate) fn ranks_before<T: Element>(x: T, y: T, greatest: bool) -> bool {
    match (x.is_nan(), y.is_nan()) {
        (true, true) | (false, true) => false,
        (true, false) => true,
        (false, false) if x != y => {
            if greatest {
                x > y
            } else {
                x < y
            }
        }
        // Equal: only zeros of opposite signs differ.
        (false, false) => {
            let (sx, sy) = (x.to_f64().is_sign_negative(), y.to_f64().is_sign_negative());
            if greatest {
                sy && !sx
            } else {
                sx && !sy
            }
        }
    }
}

impl<T: Element> BinaryOp<T> for Min {
    fn apply(&self, a: T, b: T) -> T {
        if ranks_before(b, a, false) {
            b
        } else {
            a
        }
    }
    fn cuda_expr(&self) -> String {
        "cuprim_min(a, b)".into()
    }
}
impl<T: Element> Monoid<T> for Min {
    fn identity(&self) -> T {
        T::highest()
    }
}

impl<T: Element> BinaryOp<T> for Max {
    fn apply(&self, a: T, b: T) -> T {
        if ranks_before(b, a, true) {
            b
        } else {
            a
        }
    }
    fn cuda_expr(&self) -> String {
        "cuprim_max(a, b)".into()
    }
}
impl<T: Element> Monoid<T> for Max {
    fn identity(&self) -> T {
        T::lowest()
    }
}

macro_rules! bit_op {
    ($name:ident, $op:tt, $cuda:literal, $id:expr) => {
        impl<T: IntElement + std::ops::$name<Output = T> + num_traits::Zero + std::ops::Not<Output = T>> BinaryOp<T> for $name {
            fn apply(&self, a: T, b: T) -> T {
                a $op b
            }
            fn cuda_expr(&self) -> String {
                $cuda.into()
            }
        }
        impl<T: IntElement + std::ops::$name<Output = T> + num_traits::Zero + std::ops::Not<Output = T>> Monoid<T> for $name {
            fn identity(&self) -> T {
                let zero: T = num_traits::Zero::zero();
                $id(zero)
            }
        }
    };
}
bit_op!(BitAnd, &, "((T)(a & b))", |z: T| !z);
bit_op!(BitOr, |, "((T)(a | b))", |z: T| z);
bit_op!(BitXor, ^, "((T)(a ^ b))", |z: T| z);

/// `-x` (wrapping for integers; unsigned values wrap to `2^bits - x`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Negate;
/// `|x|` (wrapping for integers: `abs(MIN) == MIN`; floats clear the sign bit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Abs;
/// `x * x` (wrapping for integers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Square;
/// Converts each element to `U` with [`Element::cast`] semantics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cast<U>(std::marker::PhantomData<U>);

impl<U> Cast<U> {
    /// The cast to `U`.
    pub const fn new() -> Self {
        Cast(std::marker::PhantomData)
    }
}

/// The identity function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Identity;

impl<T: Value> UnaryOp<T> for Identity {
    type Output = T;
    fn apply(&self, x: T) -> T {
        x
    }
    fn cuda_expr(&self) -> String {
        "x".into()
    }
}

impl<T: Arith> UnaryOp<T> for Negate {
    type Output = T;
    fn apply(&self, x: T) -> T {
        x.neg()
    }
    fn cuda_expr(&self) -> String {
        "cuprim_neg(x)".into()
    }
}
impl<T: Arith> UnaryOp<T> for Abs {
    type Output = T;
    fn apply(&self, x: T) -> T {
        x.abs()
    }
    fn cuda_expr(&self) -> String {
        "cuprim_abs(x)".into()
    }
}
impl<T: Arith> UnaryOp<T> for Square {
    type Output = T;
    fn apply(&self, x: T) -> T {
        x.mul(x)
    }
    fn cuda_expr(&self) -> String {
        "cuprim_mul(x, x)".into()
    }
}
impl<T: Element, U: Element + Send + Sync> UnaryOp<T> for Cast<U> {
    type Output = U;
    fn apply(&self, x: T) -> U {
        x.cast()
    }
    fn cuda_expr(&self) -> String {
        format!("cuprim_cast<{}>(x)", U::CUDA_TYPE)
    }
}

/// The built-in binary operators also apply to a pair `(a, b)` as a
/// [`UnaryOp`]: `op(a, b)`. That is what maps a [`zip`](crate::expr::zip)
/// to one value per element, e.g. `zip(&a, &b).map(Mul)` for a dot product.
macro_rules! pair_op {
    ($($name:ident: $bound:ident, $fun:literal);* $(;)?) => {$(
        impl<T: $bound> UnaryOp<(T, T)> for $name {
            type Output = T;
            fn apply(&self, x: (T, T)) -> T {
                BinaryOp::<T>::apply(self, x.0, x.1)
            }
            fn cuda_expr(&self) -> String {
                concat!($fun, "(x.a0, x.a1)").into()
            }
        }
    )*};
}
pair_op!(Add: Arith, "cuprim_add"; Sub: Arith, "cuprim_sub"; Mul: Arith, "cuprim_mul"; Min: Element, "cuprim_min"; Max: Element, "cuprim_max");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_follow_their_docs() {
        assert_eq!(BinaryOp::<i32>::apply(&Add, i32::MAX, 1), i32::MIN);
        assert!(BinaryOp::<f32>::apply(&Min, f32::NAN, 1.0).is_nan());
        assert!(BinaryOp::<f32>::apply(&Min, 1.0, f32::NAN).is_nan());
        assert!(BinaryOp::<f32>::apply(&Max, f32::NAN, -1.0).is_nan());
        assert!(BinaryOp::<f32>::apply(&Max, -1.0, f32::NAN).is_nan());
        for (a, b) in [(0.0f32, -0.0f32), (-0.0, 0.0)] {
            assert_eq!(BinaryOp::<f32>::apply(&Min, a, b).to_bits(), (-0.0f32).to_bits());
            assert_eq!(BinaryOp::<f32>::apply(&Max, a, b).to_bits(), 0.0f32.to_bits());
        }
        let h = |x: f32| f16::from_f32(x);
        assert_eq!(BinaryOp::<f16>::apply(&Min, h(0.0), h(-0.0)).to_bits(), h(-0.0).to_bits());
        assert_eq!(BinaryOp::<i8>::apply(&Max, -3, -3), -3);
        assert_eq!(Monoid::<u32>::identity(&BitAnd), u32::MAX);
        assert_eq!(Monoid::<f32>::identity(&Min), f32::INFINITY);
        assert_eq!(UnaryOp::<i8>::apply(&Abs, i8::MIN), i8::MIN);
        assert_eq!(UnaryOp::<u32>::apply(&Negate, 1), u32::MAX);
        assert_eq!(UnaryOp::<f32>::apply(&Cast::<u8>::new(), -3.0), 0);
        assert_eq!(UnaryOp::<(u8, u8)>::apply(&Mul, (16, 17)), 16);
        assert_eq!(UnaryOp::<(f32, f32)>::apply(&Sub, (1.0, 3.0)), -2.0);
    }
}
