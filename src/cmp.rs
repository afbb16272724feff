//! Comparators: the strict weak orders that search, merge and comparison
//! sort are generic over.
//!
//! A comparator carries one order twice, like an operator: as Rust
//! ([`Comparator::less`], what the host backend runs and the tests compare
//! against) and as a CUDA C++ boolean expression over `a` and `b`
//! ([`Comparator::cuda_expr`], pasted into the generated kernel). `less(a, b)`
//! must be a strict weak order: irreflexive, transitive, and with
//! "neither is less" an equivalence. Elements that are equivalent count as
//! equal: merges and sorts keep their input order, searches find them alike.
//!
//! The built-ins order every element type in the order of the radix sort
//! ([`f32::total_cmp`] for floats: `-NaN < -inf < ... < -0.0 < +0.0 < ... <
//! +inf < +NaN`), so `-0.0` and `+0.0` are different and every NaN has its
//! place:
//!
//! ```
//! use cuprim::cmp::{Comparator, Greater, Less};
//! assert!(Less.less(-0.0f32, 0.0));
//! assert!(Less.less(1.0f32, f32::NAN));
//! assert!(Greater.less(3u32, 2));
//! ```
//!
//! A user-defined order, "by distance from one half", with the
//! [`comparator!`](crate::comparator) macro:
//!
//! ```
//! cuprim::comparator! {
//!     /// Closer to 0.5 first.
//!     pub struct NearHalf for f32 {
//!         rust: |a, b| (a - 0.5).abs() < (b - 0.5).abs(),
//!         cuda: "fabsf(a - 0.5f) < fabsf(b - 0.5f)",
//!     }
//! }
//! use cuprim::cmp::Comparator;
//! assert!(NearHalf.less(0.6, 0.1));
//! ```
//!
//! The two forms must agree on every pair of inputs: the test suite
//! compares the device against the host with this promise. A comparator
//! that is not a strict weak order gives unspecified (but memory-safe)
//! results.

use crate::algo::sort::ordered_bits;
use crate::element::Element;

/// A strict weak order on `T`, in Rust and in CUDA C++.
pub trait Comparator<T: Element>: Copy + Send + Sync + 'static {
    /// True when `a` comes strictly before `b`.
    fn less(&self, a: T, b: T) -> bool;
    /// The same test as a CUDA C++ boolean expression over `a` and `b`
    /// (type `T`, the element's CUDA type).
    fn cuda_expr(&self) -> String;
    /// True when [`cuda_expr`](Comparator::cuda_expr) is the same text for
    /// every value of this type: a warm call then finds its kernel by type
    /// alone. Default: true for types with no data.
    fn cuda_expr_is_fixed(&self) -> bool {
        std::mem::size_of::<Self>() == 0
    }
}

/// Ascending, in the radix sort's order (`total_cmp` for floats).
///
/// ```
/// use cuprim::cmp::{Comparator, Less};
/// assert!(Less.less(-1i32, 0));
/// assert!(!Less.less(f64::NAN, f64::INFINITY));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Less;

/// Descending: the exact reverse of [`Less`].
///
/// ```
/// use cuprim::cmp::{Comparator, Greater};
/// assert!(Greater.less(0.0f32, -0.0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Greater;

impl<T: Element> Comparator<T> for Less {
    fn less(&self, a: T, b: T) -> bool {
        ordered_bits(a) < ordered_bits(b)
    }
    fn cuda_expr(&self) -> String {
        "cuprim_total_less(a, b)".into()
    }
}

impl<T: Element> Comparator<T> for Greater {
    fn less(&self, a: T, b: T) -> bool {
        ordered_bits(b) < ordered_bits(a)
    }
    fn cuda_expr(&self) -> String {
        "cuprim_total_less(b, a)".into()
    }
}

/// Defines a comparator type in one go: a unit struct and [`Comparator`]
/// for each listed element type.
///
/// ```
/// cuprim::comparator! {
///     /// Even numbers first, then odd ones; by value within each.
///     pub struct EvensFirst for u32, u64 {
///         rust: |a, b| (a % 2, a) < (b % 2, b),
///         cuda: "(a % 2 != b % 2) ? (a % 2 < b % 2) : (a < b)",
///     }
/// }
/// use cuprim::cmp::Comparator;
/// assert!(EvensFirst.less(8u32, 3));
/// ```
#[macro_export]
macro_rules! comparator {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident for $($t:ty),+ {
            rust: |$a:ident, $b:ident| $body:expr,
            cuda: $cuda:expr,
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        $vis struct $name;
        $(
            impl $crate::cmp::Comparator<$t> for $name {
                fn less(&self, $a: $t, $b: $t) -> bool { $body }
                fn cuda_expr(&self) -> String { String::from($cuda) }
            }
        )+
    };
}
