//! Values: what operators and expressions compute with. Every [`Element`]
//! is one, and so are the tuples `(A, B)` and `(A, B, C)` of elements and
//! the points `[F; D]` of `f32` or `f64` coordinates.
//!
//! A tuple is a generated struct on the device (`cuprim_t2<A, B>` with
//! fields `a0`, `a1`; `cuprim_t3` adds `a2`), laid out as C lays out a
//! struct of those fields. Rust does not promise a layout for its tuples,
//! so values cross between host and device through [`Value::write_c`] and
//! [`Value::read_c`], never as a cast. An operator over tuples writes its
//! CUDA expression with the fields:
//!
//! ```
//! use cuprim::ops::{Associative, BinaryOp, Commutative, Monoid};
//!
//! /// (min, max) of f32 in one pass.
//! #[derive(Clone, Copy, Debug)]
//! struct MinMax;
//! impl BinaryOp<(f32, f32)> for MinMax {
//!     fn apply(&self, a: (f32, f32), b: (f32, f32)) -> (f32, f32) {
//!         (a.0.min(b.0), a.1.max(b.1))
//!     }
//!     fn cuda_expr(&self) -> String {
//!         "cuprim_t2<float, float>{fminf(a.a0, b.a0), fmaxf(a.a1, b.a1)}".into()
//!     }
//! }
//! impl Associative for MinMax {}
//! impl Commutative for MinMax {}
//! impl Monoid<(f32, f32)> for MinMax {
//!     fn identity(&self) -> (f32, f32) {
//!         (f32::INFINITY, f32::NEG_INFINITY)
//!     }
//! }
//! assert_eq!(MinMax.apply((1.0, 1.0), (0.5, 0.5)), (0.5, 1.0));
//! ```
//!
//! A point `[F; D]` (`F` a [`Coord`]: `f32` or
//! `f64`, any `D` from 1) is `cuprim_arr<F, D>` on the device, one field
//! `v[D]`, laid out as the Rust array is. What a buffer of points
//! (`DeviceVec<[F; D]>`) yields as an input expression, and what the
//! kd-tree's [`build_from`](crate::algo::knn::KdTree::build_from) and
//! [`query_from`](crate::algo::knn::KdTree::query_from) read; an operator
//! over points writes its CUDA expression with `v`:
//!
//! ```
//! use cuprim::ops::UnaryOp;
//!
//! /// The first two coordinates of a 4-D point.
//! #[derive(Clone, Copy, Debug)]
//! struct Project;
//! impl UnaryOp<[f32; 4]> for Project {
//!     type Output = (f32, f32);
//!     fn apply(&self, p: [f32; 4]) -> (f32, f32) {
//!         (p[0], p[1])
//!     }
//!     fn cuda_expr(&self) -> String {
//!         "cuprim_t2<float, float>{x.v[0], x.v[1]}".into()
//!     }
//! }
//! assert_eq!(Project.apply([1.0, 2.0, 3.0, 4.0]), (1.0, 2.0));
//! ```
//!
//! Points are for the kd-tree and for moving points: `collect`,
//! `collect_into` and `to_vec` take expressions of them (a gather of
//! points, say), and so does `reduce` by an operator of your own (on CUDA
//! its accumulator is at most 32 bytes); the primitives that need an
//! [`Element`] (sorts, scans, selections, ...) do not. A buffer of points
//! is read one point at a time, never in 16-byte vectors.

use crate::algo::knn::Coord;
use crate::element::Element;
use std::fmt::Debug;

/// A value of an element type, a tuple of them or a point, with its CUDA
/// spelling and its C layout.
///
/// ```
/// use cuprim::Value;
/// assert_eq!(<(f32, u32)>::cuda_type(), "cuprim_t2<float, unsigned int>");
/// assert_eq!(<[f64; 5]>::cuda_type(), "cuprim_arr<double, 5>");
/// assert_eq!(<[f32; 8]>::C_SIZE, 32);
/// assert_eq!(<(u8, f64)>::C_SIZE, 16);
/// let mut bytes = [0u8; 16];
/// (7u8, 2.5f64).write_c(&mut bytes);
/// assert_eq!(<(u8, f64)>::read_c(&bytes), (7, 2.5));
/// ```
pub trait Value: Copy + Debug + PartialEq + Send + Sync + 'static {
    /// Bytes of the value on the device (C `sizeof`).
    const C_SIZE: usize;
    /// Alignment on the device (C `alignof`).
    const C_ALIGN: usize;
    /// Fields: 1 for an element or a point, 2 or 3 for a tuple.
    const FIELDS: u8;
    /// True when a field is a float (its folds are rounded, so the
    /// deterministic kernels apply).
    #[doc(hidden)]
    const HAS_FLOAT: bool = true;
    /// The CUDA C++ type.
    fn cuda_type() -> String;
    /// The value as a CUDA C++ expression of that type, bit-exact.
    fn cuda_literal(&self) -> String;
    /// Writes the value's device bytes into `out[..C_SIZE]` (padding zero).
    fn write_c(&self, out: &mut [u8]);
    /// Reads a value from device bytes `b[..C_SIZE]`.
    fn read_c(b: &[u8]) -> Self;
}

impl<T: Element> Value for T {
    const C_SIZE: usize = std::mem::size_of::<T>();
    const C_ALIGN: usize = std::mem::size_of::<T>();
    const FIELDS: u8 = 1;
    const HAS_FLOAT: bool = matches!(T::KIND, crate::Kind::Float);
    fn cuda_type() -> String {
        T::CUDA_TYPE.to_string()
    }
    fn cuda_literal(&self) -> String {
        Element::cuda_literal(*self)
    }
    fn write_c(&self, out: &mut [u8]) {
        out[..Self::C_SIZE].copy_from_slice(bytemuck::bytes_of(self));
    }
    fn read_c(b: &[u8]) -> Self {
        bytemuck::pod_read_unaligned(&b[..Self::C_SIZE])
    }
}

/// Where each field of a C struct of fields with these sizes (each its
/// own alignment) starts, and the struct's size.
const fn c_layout<const N: usize>(sizes: [usize; N]) -> ([usize; N], usize) {
    let mut offsets = [0; N];
    let (mut at, mut align, mut k): (usize, usize, usize) = (0, 1, 0);
    while k < N {
        at = at.next_multiple_of(sizes[k]);
        offsets[k] = at;
        at += sizes[k];
        if sizes[k] > align {
            align = sizes[k];
        }
        k += 1;
    }
    (offsets, at.next_multiple_of(align))
}

const fn max_of<const N: usize>(sizes: [usize; N]) -> usize {
    let (mut m, mut k) = (1, 0);
    while k < N {
        if sizes[k] > m {
            m = sizes[k];
        }
        k += 1;
    }
    m
}

macro_rules! tuple_value {
    ($n:literal, $cuda:literal, $($t:ident $i:tt),+) => {
        impl<$($t: Element),+> Value for ($($t,)+) {
            const C_SIZE: usize = c_layout([$(std::mem::size_of::<$t>()),+]).1;
            const C_ALIGN: usize = max_of([$(std::mem::size_of::<$t>()),+]);
            const FIELDS: u8 = $n;
            const HAS_FLOAT: bool = false $(|| matches!($t::KIND, crate::Kind::Float))+;
            fn cuda_type() -> String {
                let names: [&str; $n] = [$($t::CUDA_TYPE),+];
                format!("{}<{}>", $cuda, names.join(", "))
            }
            fn cuda_literal(&self) -> String {
                let fields: [String; $n] = [$(Element::cuda_literal(self.$i)),+];
                format!("{}{{{}}}", Self::cuda_type(), fields.join(", "))
            }
            fn write_c(&self, out: &mut [u8]) {
                let (at, size) = c_layout([$(std::mem::size_of::<$t>()),+]);
                out[..size].fill(0);
                $( self.$i.write_c(&mut out[at[$i]..]); )+
            }
            fn read_c(b: &[u8]) -> Self {
                let (at, _) = c_layout([$(std::mem::size_of::<$t>()),+]);
                ($(<$t as Value>::read_c(&b[at[$i]..]),)+)
            }
        }
    };
}

tuple_value!(2, "cuprim_t2", A 0, B 1);
tuple_value!(3, "cuprim_t3", A 0, B 1, C 2);

/// A point: `cuprim_arr<F, D>` (`kernels/block/expr.cuh`), the coordinates
/// in order with no padding, as the Rust array.
impl<F: Coord, const D: usize> Value for [F; D] {
    const C_SIZE: usize = D * std::mem::size_of::<F>();
    const C_ALIGN: usize = std::mem::size_of::<F>();
    const FIELDS: u8 = 1;
    fn cuda_type() -> String {
        format!("cuprim_arr<{}, {D}>", F::CUDA_TYPE)
    }
    fn cuda_literal(&self) -> String {
        let coords: Vec<String> = self.iter().map(|&c| Element::cuda_literal(c)).collect();
        format!("{}{{{{{}}}}}", Self::cuda_type(), coords.join(", "))
    }
    fn write_c(&self, out: &mut [u8]) {
        out[..Self::C_SIZE].copy_from_slice(bytemuck::bytes_of(self));
    }
    fn read_c(b: &[u8]) -> Self {
        bytemuck::pod_read_unaligned(&b[..Self::C_SIZE])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    #[test]
    fn tuples_are_laid_out_as_c_structs() {
        assert_eq!(<(u8, f64)>::C_SIZE, 16);
        assert_eq!(<(f32, u8)>::C_SIZE, 8);
        assert_eq!(<(u8, f16, u8)>::C_SIZE, 6);
        assert_eq!(<(u32, f64, u8)>::C_SIZE, 24);
        assert_eq!(<(u32, f64, u8)>::C_ALIGN, 8);
        let v = (3u32, -0.0f64, 9u8);
        let mut b = [0xffu8; 24];
        v.write_c(&mut b);
        assert_eq!(&b[4..8], &[0; 4], "padding is zero");
        assert_eq!(b[16], 9);
        let back = <(u32, f64, u8)>::read_c(&b);
        assert_eq!(back.1.to_bits(), (-0.0f64).to_bits());
        assert_eq!(back, v);
    }

    #[test]
    fn points_are_laid_out_as_arrays() {
        assert_eq!(<[f64; 3]>::C_SIZE, 24);
        assert_eq!(<[f64; 3]>::C_ALIGN, 8);
        let p = [1.5f32, -0.0, f32::NAN];
        let mut b = [0u8; 12];
        p.write_c(&mut b);
        assert_eq!(&b[..], bytemuck::bytes_of(&p));
        let back = <[f32; 3]>::read_c(&b);
        assert_eq!(back.map(f32::to_bits), p.map(f32::to_bits));
        assert_eq!(
            [1.0f32, 2.0].cuda_literal(),
            "cuprim_arr<float, 2>{{__uint_as_float(0x3f800000u), __uint_as_float(0x40000000u)}}"
        );
    }

    #[test]
    fn tuple_literals_name_their_fields_in_order() {
        assert_eq!(
            (1u32, 2u8).cuda_literal(),
            "cuprim_t2<unsigned int, unsigned char>{((unsigned int)1ull), ((unsigned char)2ull)}"
        );
    }
}
