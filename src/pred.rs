//! Predicates for `any`, `all`, `count` and `find_first`.
//!
//! Like operators, a predicate carries the same test in Rust
//! ([`Predicate::test`]) and in CUDA C++ ([`Predicate::cuda_expr`], over the
//! element `x` and one parameter `p` of the element type). The parameter is
//! passed at launch, so `Eq(3)` and `Eq(4)` share one compiled kernel.
//!
//! ```
//! use cuprim::pred::{Predicate, Gt, IsNan};
//! assert!(Gt(2.0f32).test(3.0));
//! assert!(IsNan.test(f64::NAN));
//! ```
//!
//! A user-defined predicate (here: "is even", no parameter):
//!
//! ```
//! use cuprim::pred::Predicate;
//! #[derive(Clone, Copy)]
//! struct IsEven;
//! impl Predicate<u32> for IsEven {
//!     fn test(&self, x: u32) -> bool { x % 2 == 0 }
//!     fn cuda_expr(&self) -> String { "(x % 2u) == 0u".into() }
//! }
//! assert!(IsEven.test(4));
//! ```

use crate::element::Element;

/// A test on one element, in Rust and in CUDA C++.
pub trait Predicate<T: Element>: Copy + Send + Sync + 'static {
    /// The test, in Rust.
    fn test(&self, x: T) -> bool;
    /// The same test as a CUDA C++ boolean expression over `x` and `p`.
    fn cuda_expr(&self) -> String;
    /// The value passed to the kernel as `p` (default: zero).
    fn param(&self) -> T {
        T::zero()
    }
    /// True when [`cuda_expr`](Predicate::cuda_expr) is the same text for
    /// every value of this type (values reach the kernel through
    /// [`param`](Predicate::param)). Then a warm call finds its kernel by
    /// type alone, formatting nothing. Default: true for types with no data.
    fn cuda_expr_is_fixed(&self) -> bool {
        std::mem::size_of::<Self>() == 0
    }
}

macro_rules! compare_pred {
    ($(#[$m:meta])* $name:ident, $op:tt, $cuda:literal) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name<T>(pub T);
        impl<T: Element> Predicate<T> for $name<T> {
            fn test(&self, x: T) -> bool {
                x $op self.0
            }
            fn cuda_expr(&self) -> String {
                $cuda.into()
            }
            fn param(&self) -> T {
                self.0
            }
            fn cuda_expr_is_fixed(&self) -> bool {
                true
            }
        }
    };
}

compare_pred!(
    /// `x == v` (NaN equals nothing; `-0.0 == 0.0`).
    Eq, ==, "x == p");
compare_pred!(
    /// `x != v` (true for NaN).
    Ne, !=, "x != p");
compare_pred!(
    /// `x < v` (false for NaN).
    Lt, <, "x < p");
compare_pred!(
    /// `x <= v` (false for NaN).
    Le, <=, "x <= p");
compare_pred!(
    /// `x > v` (false for NaN).
    Gt, >, "x > p");
compare_pred!(
    /// `x >= v` (false for NaN).
    Ge, >=, "x >= p");

/// True for NaN (never for integers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IsNan;
impl<T: Element> Predicate<T> for IsNan {
    fn test(&self, x: T) -> bool {
        x.is_nan()
    }
    fn cuda_expr(&self) -> String {
        "cuprim_is_nan(x)".into()
    }
}

/// The negation of a predicate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Not<P>(pub P);
impl<T: Element, P: Predicate<T>> Predicate<T> for Not<P> {
    fn test(&self, x: T) -> bool {
        !self.0.test(x)
    }
    fn cuda_expr(&self) -> String {
        format!("!({})", self.0.cuda_expr())
    }
    fn param(&self) -> T {
        self.0.param()
    }
    fn cuda_expr_is_fixed(&self) -> bool {
        self.0.cuda_expr_is_fixed()
    }
}
