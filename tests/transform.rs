//! Element-wise maps (`transform`, `transform2`, `transform_in_place`,
//! casts, `sequence`) against plain Rust references, bit for bit, on every
//! device and every element type, over whole vectors and misaligned views.

mod common;

use common::TestRng;
use common::{assert_same, ctx, devices, random_vec, rng, wide_sizes, Sample, SIZES};
use cuprim::ops::{Abs, Arith, BinaryOp, Cast, Identity, Negate, Square, UnaryOp};
use cuprim::prelude::*;
use rand::Rng;

// ---------------------------------------------------------------------------
// The references: the semantics the library promises, written out directly.

/// Wrapping integers; IEEE floats; f16 / bf16 computed in f32 and rounded
/// to nearest-even.
trait Reference: Sample + Arith {
    fn r_add(self, b: Self) -> Self;
    fn r_mul(self, b: Self) -> Self;
    fn r_neg(self) -> Self;
    fn r_abs(self) -> Self;
    /// The index `i` as this type (Rust `as`; through f32 for the halves).
    fn r_index(i: u64) -> Self;
}

macro_rules! reference_int {
    ($($t:ty, $abs:expr);* $(;)?) => {$(
        impl Reference for $t {
            fn r_add(self, b: Self) -> Self { self.wrapping_add(b) }
            fn r_mul(self, b: Self) -> Self { self.wrapping_mul(b) }
            fn r_neg(self) -> Self { self.wrapping_neg() }
            fn r_abs(self) -> Self { let f: fn($t) -> $t = $abs; f(self) }
            fn r_index(i: u64) -> Self { i as $t }
        }
    )*};
}
reference_int!(
    u8, |x| x;
    i8, |x| x.wrapping_abs();
    u32, |x| x;
    i32, |x| x.wrapping_abs();
    u64, |x| x;
    i64, |x| x.wrapping_abs();
);

macro_rules! reference_float {
    ($($t:ty),*) => {$(
        impl Reference for $t {
            fn r_add(self, b: Self) -> Self { self + b }
            fn r_mul(self, b: Self) -> Self { self * b }
            fn r_neg(self) -> Self { -self }
            fn r_abs(self) -> Self { self.abs() }
            fn r_index(i: u64) -> Self { i as $t }
        }
    )*};
}
reference_float!(f32, f64);

macro_rules! reference_half {
    ($($t:ty),*) => {$(
        impl Reference for $t {
            fn r_add(self, b: Self) -> Self { <$t>::from_f32(self.to_f32() + b.to_f32()) }
            fn r_mul(self, b: Self) -> Self { <$t>::from_f32(self.to_f32() * b.to_f32()) }
            fn r_neg(self) -> Self { <$t>::from_bits(self.to_bits() ^ 0x8000) }
            fn r_abs(self) -> Self { <$t>::from_bits(self.to_bits() & 0x7fff) }
            fn r_index(i: u64) -> Self { <$t>::from_f32(i as f32) }
        }
    )*};
}
reference_half!(f16, bf16);

/// Conversion with Rust `as` semantics; to and from f16 / bf16 through f32.
trait RefCast<D> {
    fn r_cast(self) -> D;
}

macro_rules! cast_as {
    ($($s:ty),*) => { $( cast_as!(@to $s: u8, i8, u32, i32, u64, i64, f32, f64); )* };
    (@to $s:ty: $($d:ty),*) => { $( impl RefCast<$d> for $s { fn r_cast(self) -> $d { self as $d } } )* };
}
cast_as!(u8, i8, u32, i32, u64, i64, f32, f64);

macro_rules! cast_half {
    ($($h:ty),*) => {$(
        cast_half!(@prim $h: u8, i8, u32, i32, u64, i64, f32, f64);
        impl RefCast<f16> for $h { fn r_cast(self) -> f16 { f16::from_f32(self.to_f32()) } }
        impl RefCast<bf16> for $h { fn r_cast(self) -> bf16 { bf16::from_f32(self.to_f32()) } }
    )*};
    (@prim $h:ty: $($p:ty),*) => {$(
        impl RefCast<$h> for $p { fn r_cast(self) -> $h { <$h>::from_f32(self as f32) } }
        impl RefCast<$p> for $h { fn r_cast(self) -> $p { self.to_f32() as $p } }
    )*};
}
cast_half!(f16, bf16);

/// Convertible to every element type.
trait CastAll:
    RefCast<u8>
    + RefCast<i8>
    + RefCast<u32>
    + RefCast<i32>
    + RefCast<u64>
    + RefCast<i64>
    + RefCast<f16>
    + RefCast<bf16>
    + RefCast<f32>
    + RefCast<f64>
{
}
impl<T> CastAll for T where
    T: RefCast<u8>
        + RefCast<i8>
        + RefCast<u32>
        + RefCast<i32>
        + RefCast<u64>
        + RefCast<i64>
        + RefCast<f16>
        + RefCast<bf16>
        + RefCast<f32>
        + RefCast<f64>
{
}

// ---------------------------------------------------------------------------
// Helpers.

/// `data` with `before` random elements in front and 5 behind, so that
/// `slice(before..before + data.len())` is `data` at an offset.
fn padded<T: Sample>(r: &mut TestRng, data: &[T], before: usize) -> Vec<T> {
    let mut v = random_vec(r, before);
    v.extend_from_slice(data);
    v.extend(random_vec::<T>(r, 5));
    v
}

/// Offsets that misalign a view for every element size (odd counts), keep
/// it aligned (16 elements), or mix the two across operands.
const OFFSETS: &[(usize, usize)] = &[(1, 1), (3, 0), (0, 5), (16, 16), (7, 16), (2, 2)];

fn check_binary<T: Element, Op: BinaryOp<T>>(
    a: &impl DeviceData<T>,
    b: &impl DeviceData<T>,
    (ha, hb): (&[T], &[T]),
    op: Op,
    want: fn(T, T) -> T,
    what: &str,
) {
    let expect: Vec<T> = ha.iter().zip(hb).map(|(&x, &y)| want(x, y)).collect();
    let out = a.transform2(b, op).unwrap();
    assert_eq!(out.device(), a.device(), "{what}");
    assert_same(&out.to_vec().unwrap(), &expect, what);
}

fn check_unary<T: Element, Op: UnaryOp<T>>(v: &impl DeviceData<T>, host: &[T], op: Op, want: impl Fn(T) -> Op::Output, what: &str)
where
    Op::Output: Element,
{
    let expect: Vec<Op::Output> = host.iter().map(|&x| want(x)).collect();
    let out = v.transform(op).unwrap();
    assert_eq!(out.len(), host.len(), "{what}");
    assert_same(&out.to_vec().unwrap(), &expect, what);
}

/// `transform_in_place` on `data` placed at `offset` inside a larger
/// vector: the view becomes `want(x)`, everything around it stays.
fn check_in_place<T: Element + Sample, Op: UnaryOp<T, Output = T>>(
    dev: &Device,
    r: &mut TestRng,
    data: &[T],
    offset: usize,
    op: Op,
    want: fn(T) -> T,
    what: &str,
) {
    let n = data.len();
    let full = padded(r, data, offset);
    let mut v = DeviceVec::from_slice(dev, &full).unwrap();
    v.slice_mut(offset..offset + n).unwrap().transform_in_place(op).unwrap();
    let mut expect = full.clone();
    for x in &mut expect[offset..offset + n] {
        *x = want(*x);
    }
    assert_same(&v.to_vec().unwrap(), &expect, &format!("in place at offset {offset}: {what}"));
}

// ---------------------------------------------------------------------------
// The checks, generic over the element type.

fn transform2_all<T: Reference>() {
    for dev in devices() {
        for &n in SIZES {
            let (mut r, seed) = rng(&format!("transform2 {} {n}", T::NAME));
            let (a, b) = (random_vec::<T>(&mut r, n), random_vec::<T>(&mut r, n));
            let (da, db) = (DeviceVec::from_slice(&dev, &a).unwrap(), DeviceVec::from_slice(&dev, &b).unwrap());
            let c = |op: &str| ctx(&dev, &format!("transform2 {op} <{}>", T::NAME), n, seed);
            check_binary(&da, &db, (&a, &b), Add, T::r_add, &c("Add"));
            check_binary(&da, &db, (&a, &b), Mul, T::r_mul, &c("Mul"));
            check_binary(&da, &db, (&a, &b), Min, common::ieee_min, &c("Min"));
            check_binary(&da, &db, (&a, &b), Max, common::ieee_max, &c("Max"));
            // Both operands the same buffer.
            check_binary(&da, &da, (&a, &a), Add, T::r_add, &c("Add, a with itself"));
            check_binary(&db, &db, (&b, &b), Min, common::ieee_min, &c("Min, b with itself"));
        }
    }
}

fn transform2_views<T: Reference>() {
    for dev in devices() {
        for &n in wide_sizes() {
            for &(oa, ob) in OFFSETS {
                let (mut r, seed) = rng(&format!("transform2 views {} {n} {oa} {ob}", T::NAME));
                let (a, b) = (random_vec::<T>(&mut r, n), random_vec::<T>(&mut r, n));
                let va = DeviceVec::from_slice(&dev, &padded(&mut r, &a, oa)).unwrap();
                let vb = DeviceVec::from_slice(&dev, &padded(&mut r, &b, ob)).unwrap();
                let (sa, sb) = (va.slice(oa..oa + n).unwrap(), vb.slice(ob..ob + n).unwrap());
                let c = |op: &str| ctx(&dev, &format!("transform2 {op} <{}> on views at {oa}, {ob}", T::NAME), n, seed);
                check_binary(&sa, &sb, (&a, &b), Add, T::r_add, &c("Add"));
                check_binary(&sa, &sb, (&a, &b), Mul, T::r_mul, &c("Mul"));
                check_binary(&sa, &sb, (&a, &b), Min, common::ieee_min, &c("Min"));
                check_binary(&sa, &sb, (&a, &b), Max, common::ieee_max, &c("Max"));
                // A view against a whole vector.
                let db = DeviceVec::from_slice(&dev, &b).unwrap();
                check_binary(&sa, &db, (&a, &b), Max, common::ieee_max, &c("Max, view with vector"));
                // A mutable view reads as well as a shared one.
                let mut wa = DeviceVec::from_slice(&dev, &padded(&mut r, &a, oa)).unwrap();
                let ma = wa.slice_mut(oa..oa + n).unwrap();
                check_binary(&ma, &sb, (&a, &b), Add, T::r_add, &c("Add, mutable view"));
            }
        }
    }
}

fn transform2_bitwise<T>()
where
    T: Reference + std::ops::BitAnd<Output = T> + std::ops::BitOr<Output = T> + std::ops::BitXor<Output = T>,
    BitAnd: BinaryOp<T>,
    BitOr: BinaryOp<T>,
    BitXor: BinaryOp<T>,
{
    for dev in devices() {
        for &n in SIZES {
            let (mut r, seed) = rng(&format!("bitwise {} {n}", T::NAME));
            let (a, b) = (random_vec::<T>(&mut r, n), random_vec::<T>(&mut r, n));
            let (da, db) = (DeviceVec::from_slice(&dev, &a).unwrap(), DeviceVec::from_slice(&dev, &b).unwrap());
            let c = |op: &str| ctx(&dev, &format!("transform2 {op} <{}>", T::NAME), n, seed);
            check_binary(&da, &db, (&a, &b), BitAnd, |x, y| x & y, &c("BitAnd"));
            check_binary(&da, &db, (&a, &b), BitOr, |x, y| x | y, &c("BitOr"));
            check_binary(&da, &db, (&a, &b), BitXor, |x, y| x ^ y, &c("BitXor"));
        }
        // Views, misaligned.
        for &n in wide_sizes() {
            let (mut r, seed) = rng(&format!("bitwise views {} {n}", T::NAME));
            let (a, b) = (random_vec::<T>(&mut r, n), random_vec::<T>(&mut r, n));
            let va = DeviceVec::from_slice(&dev, &padded(&mut r, &a, 1)).unwrap();
            let vb = DeviceVec::from_slice(&dev, &padded(&mut r, &b, 3)).unwrap();
            let (sa, sb) = (va.slice(1..1 + n).unwrap(), vb.slice(3..3 + n).unwrap());
            let c = ctx(&dev, &format!("transform2 BitXor <{}> on views", T::NAME), n, seed);
            check_binary(&sa, &sb, (&a, &b), BitXor, |x, y| x ^ y, &c);
        }
    }
}

fn transform_all<T: Reference>() {
    for dev in devices() {
        for &n in SIZES {
            let (mut r, seed) = rng(&format!("transform {} {n}", T::NAME));
            let data = random_vec::<T>(&mut r, n);
            let v = DeviceVec::from_slice(&dev, &data).unwrap();
            let c = |op: &str| ctx(&dev, &format!("transform {op} <{}>", T::NAME), n, seed);
            check_unary(&v, &data, Negate, T::r_neg, &c("Negate"));
            check_unary(&v, &data, Abs, T::r_abs, &c("Abs"));
            check_unary(&v, &data, Square, |x| x.r_mul(x), &c("Square"));
            check_unary(&v, &data, Identity, |x| x, &c("Identity"));

            // In place on the whole vector.
            let mut w = v.to_device_vec().unwrap();
            w.transform_in_place(Square).unwrap();
            let expect: Vec<T> = data.iter().map(|&x| x.r_mul(x)).collect();
            assert_same(&w.to_vec().unwrap(), &expect, &c("Square in place"));
            w.transform_in_place(Negate).unwrap();
            let expect: Vec<T> = expect.iter().map(|&x| x.r_neg()).collect();
            assert_same(&w.to_vec().unwrap(), &expect, &c("Negate in place, after Square"));
            // The source of the copy is untouched.
            assert_same(&v.to_vec().unwrap(), &data, &c("source after in-place work on a copy"));
        }
    }
}

fn transform_views<T: Reference>() {
    for dev in devices() {
        for &n in wide_sizes() {
            for &(offset, _) in OFFSETS {
                let (mut r, seed) = rng(&format!("transform views {} {n} {offset}", T::NAME));
                let data = random_vec::<T>(&mut r, n);
                let v = DeviceVec::from_slice(&dev, &padded(&mut r, &data, offset)).unwrap();
                let s = v.slice(offset..offset + n).unwrap();
                let c = |op: &str| ctx(&dev, &format!("transform {op} <{}> on a view at {offset}", T::NAME), n, seed);
                check_unary(&s, &data, Negate, T::r_neg, &c("Negate"));
                check_unary(&s, &data, Abs, T::r_abs, &c("Abs"));
                check_unary(&s, &data, Square, |x| x.r_mul(x), &c("Square"));
                check_unary(&s, &data, Identity, |x| x, &c("Identity"));
                check_in_place(&dev, &mut r, &data, offset, Abs, T::r_abs, &c("Abs"));
                check_in_place(&dev, &mut r, &data, offset, Square, |x| x.r_mul(x), &c("Square"));
                check_in_place(&dev, &mut r, &data, offset, Negate, T::r_neg, &c("Negate"));
                check_in_place(&dev, &mut r, &data, offset, Identity, |x| x, &c("Identity"));
            }
        }
    }
}

fn check_cast<S, D>(dev: &Device, r: &mut TestRng, data: &[S], seed: u64)
where
    S: Sample + RefCast<D>,
    D: Element,
{
    let n = data.len();
    let what = ctx(dev, &format!("Cast {} -> {}", S::NAME, D::NAME), n, seed);
    let v = DeviceVec::from_slice(dev, data).unwrap();
    check_unary(&v, data, Cast::<D>::new(), |x| x.r_cast(), &what);
    // From a misaligned view too.
    let p = DeviceVec::from_slice(dev, &padded(r, data, 3)).unwrap();
    let s = p.slice(3..3 + n).unwrap();
    check_unary(&s, data, Cast::<D>::new(), |x| x.r_cast(), &format!("view at 3: {what}"));
}

fn casts_from<S: Reference + CastAll>() {
    for dev in devices() {
        for &n in wide_sizes() {
            let (mut r, seed) = rng(&format!("cast {} {n}", S::NAME));
            let mut data = random_vec::<S>(&mut r, n);
            // Every special value at least once when there is room.
            for (slot, x) in data.iter_mut().zip(S::specials()) {
                *slot = x;
            }
            check_cast::<S, u8>(&dev, &mut r, &data, seed);
            check_cast::<S, i8>(&dev, &mut r, &data, seed);
            check_cast::<S, u32>(&dev, &mut r, &data, seed);
            check_cast::<S, i32>(&dev, &mut r, &data, seed);
            check_cast::<S, u64>(&dev, &mut r, &data, seed);
            check_cast::<S, i64>(&dev, &mut r, &data, seed);
            check_cast::<S, f16>(&dev, &mut r, &data, seed);
            check_cast::<S, bf16>(&dev, &mut r, &data, seed);
            check_cast::<S, f32>(&dev, &mut r, &data, seed);
            check_cast::<S, f64>(&dev, &mut r, &data, seed);
        }
    }
}

fn sequence_all<T: Reference>() {
    for dev in devices() {
        for &n in SIZES {
            let (mut r, seed) = rng(&format!("sequence {} {n}", T::NAME));
            let specials = T::specials();
            let starts = [T::zero(), T::small(&mut r), T::random(&mut r, &specials)];
            let steps = [T::one(), T::small(&mut r).r_neg(), T::random(&mut r, &specials)];
            for (&start, &step) in starts.iter().zip(&steps) {
                let v = DeviceVec::sequence(&dev, n, start, step).unwrap();
                let expect: Vec<T> = (0..n as u64).map(|i| start.r_add(T::r_index(i).r_mul(step))).collect();
                let what = ctx(&dev, &format!("sequence <{}> start {start:?} step {step:?}", T::NAME), n, seed);
                assert_same(&v.to_vec().unwrap(), &expect, &what);
            }
        }
    }
}

macro_rules! tests_for {
    ($($m:ident: $t:ty $(, $int:ident)?);* $(;)?) => {$(
        mod $m {
            use super::*;
            #[test]
            fn transform2() {
                transform2_all::<$t>();
            }
            #[test]
            fn transform2_on_views() {
                transform2_views::<$t>();
            }
            #[test]
            fn transform_and_in_place() {
                transform_all::<$t>();
            }
            #[test]
            fn transform_on_views() {
                transform_views::<$t>();
            }
            #[test]
            fn casts_to_every_type() {
                casts_from::<$t>();
            }
            #[test]
            fn sequence() {
                sequence_all::<$t>();
            }
            $(
                #[test]
                fn transform2_bitwise() {
                    let _ = stringify!($int);
                    super::transform2_bitwise::<$t>();
                }
            )?
        }
    )*};
}

tests_for!(
    u8_: u8, int;
    i8_: i8, int;
    u32_: u32, int;
    i32_: i32, int;
    u64_: u64, int;
    i64_: i64, int;
    f16_: f16;
    bf16_: bf16;
    f32_: f32;
    f64_: f64;
);

/// Spot checks of the promised semantics with hand-picked values, so a
/// reference and the library cannot agree on a wrong answer.
#[test]
fn semantics_spot_checks() {
    for dev in devices() {
        let v = DeviceVec::from_slice(&dev, &[f32::NAN, 1.0, -0.0, 0.0, f32::NEG_INFINITY]).unwrap();
        let w = DeviceVec::from_slice(&dev, &[2.0f32, f32::NAN, 0.0, -0.0, f32::NAN]).unwrap();
        let min = v.transform2(&w, Min).unwrap().to_vec().unwrap();
        assert!(min[0].is_nan(), "{dev:?}: min(NaN, 2) is NaN");
        assert!(min[1].is_nan(), "{dev:?}: min(1, NaN) is NaN");
        assert_eq!(min[2].to_bits(), (-0.0f32).to_bits(), "{dev:?}: min(-0, +0) is -0");
        assert_eq!(min[3].to_bits(), (-0.0f32).to_bits(), "{dev:?}: min(+0, -0) is -0");
        assert!(min[4].is_nan(), "{dev:?}: min(-inf, NaN) is NaN");
        let max = v.transform2(&w, Max).unwrap().to_vec().unwrap();
        assert!(
            max[0].is_nan() && max[1].is_nan() && max[4].is_nan(),
            "{dev:?}: max with NaN is NaN"
        );
        assert_eq!(max[2].to_bits(), 0.0f32.to_bits(), "{dev:?}: max(-0, +0) is +0");
        assert_eq!(max[3].to_bits(), 0.0f32.to_bits(), "{dev:?}: max(+0, -0) is +0");

        let i = DeviceVec::from_slice(&dev, &[i8::MIN, -1, 127]).unwrap();
        assert_eq!(
            i.transform(Abs).unwrap().to_vec().unwrap(),
            vec![i8::MIN, 1, 127],
            "{dev:?}: wrapping abs"
        );
        assert_eq!(
            i.transform(Negate).unwrap().to_vec().unwrap(),
            vec![i8::MIN, 1, -127],
            "{dev:?}: wrapping neg"
        );
        assert_eq!(
            i.transform2(&i, Add).unwrap().to_vec().unwrap(),
            vec![0, -2, -2],
            "{dev:?}: wrapping add"
        );
        assert_eq!(
            i.transform(Square).unwrap().to_vec().unwrap(),
            vec![0, 1, 1],
            "{dev:?}: wrapping square"
        );

        let u = DeviceVec::from_slice(&dev, &[1u32, 0, u32::MAX]).unwrap();
        assert_eq!(
            u.transform(Negate).unwrap().to_vec().unwrap(),
            vec![u32::MAX, 0, 1],
            "{dev:?}: unsigned neg wraps"
        );

        let f = DeviceVec::from_slice(&dev, &[f32::NAN, -1.5, 300.7, -1e20, 1e20, 255.99]).unwrap();
        assert_eq!(
            f.transform(Cast::<u8>::new()).unwrap().to_vec().unwrap(),
            vec![0, 0, 255, 0, 255, 255],
            "{dev:?}: saturating f32 -> u8"
        );
        assert_eq!(
            f.transform(Cast::<i64>::new()).unwrap().to_vec().unwrap(),
            vec![0, -1, 300, i64::MIN, i64::MAX, 255],
            "{dev:?}: saturating f32 -> i64"
        );
        let big = DeviceVec::from_slice(&dev, &[u64::MAX, 1 << 63, 300]).unwrap();
        assert_eq!(
            big.transform(Cast::<i8>::new()).unwrap().to_vec().unwrap(),
            vec![-1, 0, 44],
            "{dev:?}: wrapping u64 -> i8"
        );

        // f16 arithmetic rounds to nearest-even once per operation.
        let h = DeviceVec::from_slice(&dev, &[f16::from_f32(2048.0), f16::MAX]).unwrap();
        let one = DeviceVec::from_slice(&dev, &[f16::from_f32(1.0), f16::MAX]).unwrap();
        let sum = h.transform2(&one, Add).unwrap().to_vec().unwrap();
        assert_eq!(sum[0], f16::from_f32(2048.0), "{dev:?}: 2048 + 1 rounds to even in f16");
        assert_eq!(sum[1], f16::INFINITY, "{dev:?}: f16 overflow");
        let b = DeviceVec::from_slice(&dev, &[bf16::from_f32(256.0)]).unwrap();
        let bsum = b
            .transform2(&b.transform(Cast::<bf16>::new()).unwrap(), Add)
            .unwrap()
            .to_vec()
            .unwrap();
        assert_eq!(bsum, vec![bf16::from_f32(512.0)], "{dev:?}: bf16 add");
    }
}

/// Empty inputs and views give empty outputs and touch nothing.
#[test]
fn empty_inputs() {
    for dev in devices() {
        let v = DeviceVec::<f64>::from_slice(&dev, &[]).unwrap();
        assert!(v.is_empty());
        assert!(v.transform(Negate).unwrap().is_empty(), "{dev:?}");
        assert!(v.transform(Cast::<u8>::new()).unwrap().is_empty(), "{dev:?}");
        assert!(v.transform2(&v, Add).unwrap().is_empty(), "{dev:?}");
        let mut w = DeviceVec::from_slice(&dev, &[1i32, 2, 3]).unwrap();
        w.slice_mut(1..1).unwrap().transform_in_place(Negate).unwrap();
        assert_eq!(w.to_vec().unwrap(), vec![1, 2, 3], "{dev:?}");
        let s = w.slice(3..).unwrap();
        assert!(s.transform2(&s, Mul).unwrap().to_vec().unwrap().is_empty(), "{dev:?}");
        assert!(DeviceVec::sequence(&dev, 0, 1u8, 1).unwrap().is_empty(), "{dev:?}");
    }
}

/// `transform2` with operands of different lengths is an error and
/// allocates nothing visible.
#[test]
fn transform2_length_mismatch() {
    for dev in devices() {
        let a = DeviceVec::<u32>::zeros(&dev, 10).unwrap();
        let b = DeviceVec::<u32>::zeros(&dev, 11).unwrap();
        match a.transform2(&b, Add) {
            Err(Error::LengthMismatch {
                expected: 10, actual: 11, ..
            }) => {}
            other => panic!("{dev:?}: want LengthMismatch 10 vs 11, got {other:?}"),
        }
        let s = b.slice(1..).unwrap();
        assert!(a.transform2(&s, Add).is_ok(), "{dev:?}: same length via a view");
        let e = DeviceVec::<u32>::zeros(&dev, 0).unwrap();
        assert!(
            matches!(
                e.transform2(&a, Min),
                Err(Error::LengthMismatch {
                    expected: 0,
                    actual: 10,
                    ..
                })
            ),
            "{dev:?}"
        );
    }
}

/// Operands on the host backend and on the GPU cannot be mixed.
#[test]
fn transform2_device_mismatch() {
    let Some(gpu) = common::cuda() else {
        common::skip("transform2_device_mismatch", "needs CUDA to mix devices");
        return;
    };
    let h = DeviceVec::from_slice(&Device::host(), &[1.0f32, 2.0]).unwrap();
    let g = DeviceVec::from_slice(&gpu, &[1.0f32, 2.0]).unwrap();
    assert!(matches!(h.transform2(&g, Add), Err(Error::DeviceMismatch { .. })));
    assert!(matches!(g.transform2(&h, Add), Err(Error::DeviceMismatch { .. })));
    assert!(matches!(
        g.slice(..).unwrap().transform2(&h.slice(..).unwrap(), Max),
        Err(Error::DeviceMismatch { .. })
    ));
    assert_eq!(g.transform2(&g, Add).unwrap().to_vec().unwrap(), vec![2.0, 4.0]);
}

/// A user-defined operator runs the same on every device.
#[test]
fn custom_operators() {
    cuprim::binary_op! {
        /// `a - b`, wrapping.
        struct WrappingSub for u32, i64 {
            rust: |a, b| a.wrapping_sub(b),
            cuda: "cuprim_sub(a, b)",
        }
    }
    #[derive(Clone, Copy)]
    struct Halve;
    impl UnaryOp<f32> for Halve {
        type Output = f64;
        fn apply(&self, x: f32) -> f64 {
            x as f64 * 0.5
        }
        fn cuda_expr(&self) -> String {
            "(double)x * 0.5".into()
        }
    }
    for dev in devices() {
        let (mut r, seed) = rng("custom");
        for &n in &[1usize, 33, 4097] {
            let a: Vec<u32> = (0..n).map(|_| r.gen()).collect();
            let b: Vec<u32> = (0..n).map(|_| r.gen()).collect();
            let (da, db) = (DeviceVec::from_slice(&dev, &a).unwrap(), DeviceVec::from_slice(&dev, &b).unwrap());
            let c = ctx(&dev, "custom WrappingSub", n, seed);
            check_binary(&da, &db, (&a, &b), WrappingSub, u32::wrapping_sub, &c);
            let x: Vec<i64> = (0..n).map(|_| r.gen()).collect();
            let dx = DeviceVec::from_slice(&dev, &x).unwrap();
            check_binary(
                &dx,
                &dx.transform(Negate).unwrap(),
                (&x, &x.iter().map(|v| v.wrapping_neg()).collect::<Vec<_>>()),
                WrappingSub,
                i64::wrapping_sub,
                &c,
            );
            let f = random_vec::<f32>(&mut r, n);
            let df = DeviceVec::from_slice(&dev, &f).unwrap();
            check_unary(&df, &f, Halve, |v| v as f64 * 0.5, &ctx(&dev, "custom Halve", n, seed));
        }
    }
}
