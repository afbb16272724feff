//! adjacent_difference and adjacent_difference_in_place against plain
//! sequential references, on every device: awkward sizes, views at odd
//! offsets (in and out misaligned alike and differently), NaN, unsigned
//! wrap-around, and operators that show the operand order.

mod common;

use common::{assert_same, capped, ctx, devices, random_vec, Sample, TestRng};
use cuprim::ops::{BinaryOp, Sub};
use cuprim::prelude::*;

/// The task's sizes: every tile edge the kernels have (a warp tile of f32 is
/// 512 elements, of u8 512 too, of f64 256) is crossed by the larger ones.
fn sizes() -> Vec<usize> {
    capped(&[0, 1, 2, 31, 32, 33, 4097, (1 << 20) + 3])
}

fn rng(tag: &str) -> (TestRng, u64) {
    common::rng(&format!("adjacent {tag}"))
}

cuprim::binary_op! {
    /// The right operand: `adjacent_difference` of it is the input shifted right by one.
    struct Previous for u8, i32, u64, f16, f32, f64 {
        rust: |a, b| { let _ = a; b },
        cuda: "b",
    }
}

/// Element subtraction written here, independently of the crate:
/// wrapping integers, IEEE floats, halves through f32.
trait RefSub: Sample {
    fn r_sub(self, b: Self) -> Self;
}
macro_rules! ref_sub_int {
    ($($t:ty),*) => {$( impl RefSub for $t { fn r_sub(self, b: Self) -> Self { self.wrapping_sub(b) } } )*};
}
ref_sub_int!(u8, i32, u64);
impl RefSub for f32 {
    fn r_sub(self, b: Self) -> Self {
        self - b
    }
}
impl RefSub for f64 {
    fn r_sub(self, b: Self) -> Self {
        self - b
    }
}
impl RefSub for f16 {
    fn r_sub(self, b: Self) -> Self {
        f16::from_f32(self.to_f32() - b.to_f32())
    }
}

/// The sequential reference: `out[0] = x[0]`, `out[i] = f(x[i], x[i - 1])`.
fn reference<T: Copy>(x: &[T], f: impl Fn(T, T) -> T) -> Vec<T> {
    (0..x.len()).map(|i| if i == 0 { x[0] } else { f(x[i], x[i - 1]) }).collect()
}

/// Both forms of `op` on `data` placed at `offset` inside a padded vector:
/// the copy from the view, and the view in place (the padding around it
/// untouched).
fn check<T: RefSub, Op: BinaryOp<T>>(dev: &Device, r: &mut TestRng, data: &[T], offset: usize, op: Op, f: fn(T, T) -> T, what: &str) {
    let n = data.len();
    let want = reference(data, f);
    let mut full = random_vec::<T>(r, offset);
    full.extend_from_slice(data);
    full.extend(random_vec::<T>(r, 5));
    let mut v = DeviceVec::from_slice(dev, &full).unwrap();
    let out = v.slice(offset..offset + n).unwrap().adjacent_difference(op).unwrap();
    assert_eq!(out.device(), dev, "{what}");
    assert_same(&out.to_vec().unwrap(), &want, &format!("copy at offset {offset}: {what}"));
    // In place, and the same from a copy that starts at a fresh allocation.
    v.slice_mut(offset..offset + n).unwrap().adjacent_difference_in_place(op).unwrap();
    let mut expect = full.clone();
    expect[offset..offset + n].copy_from_slice(&want);
    assert_same(&v.to_vec().unwrap(), &expect, &format!("in place at offset {offset}: {what}"));
    let mut w = DeviceVec::from_slice(dev, data).unwrap();
    w.adjacent_difference_in_place(op).unwrap();
    assert_same(&w.to_vec().unwrap(), &want, &format!("in place, whole vector: {what}"));
}

fn every_size<T: RefSub>()
where
    Sub: BinaryOp<T>,
    Previous: BinaryOp<T>,
{
    for dev in devices() {
        for n in sizes() {
            let (mut r, seed) = rng(&format!("{} {n}", T::NAME));
            let data = random_vec::<T>(&mut r, n);
            // Offset 0 keeps the view on a vector boundary; 1 and 3 put it
            // off one (the copy's output is on one: in and out differ); 16
            // is on one again for every width.
            let offsets: &[usize] = if n > 100_000 { &[0, 3] } else { &[0, 1, 3, 16] };
            for &offset in offsets {
                let c = |op: &str| ctx(&dev, &format!("adjacent_difference {op} <{}>", T::NAME), n, seed);
                check(&dev, &mut r, &data, offset, Sub, T::r_sub, &c("Sub"));
                check(&dev, &mut r, &data, offset, Previous, |_, b| b, &c("Previous"));
            }
        }
    }
}

#[test]
fn adjacent_u8() {
    every_size::<u8>();
}
#[test]
fn adjacent_i32() {
    every_size::<i32>();
}
#[test]
fn adjacent_u64() {
    every_size::<u64>();
}
#[test]
fn adjacent_f16() {
    every_size::<f16>();
}
#[test]
fn adjacent_f32() {
    every_size::<f32>();
}
#[test]
fn adjacent_f64() {
    every_size::<f64>();
}

/// Spot values: Thrust's rule, unsigned wrap-around, NaN, -0.0, and a
/// non-commutative operator whose operand order shows.
#[test]
fn semantics() {
    cuprim::binary_op! {
        /// `2a - b`, wrapping: neither commutative nor symmetric in its operands.
        struct TwiceMinus for i32 {
            rust: |a, b| a.wrapping_mul(2).wrapping_sub(b),
            cuda: "cuprim_sub(cuprim_mul(a, 2), b)",
        }
    }
    for dev in devices() {
        let u = DeviceVec::from_slice(&dev, &[0u8, 1, 0, 255, 3]).unwrap();
        assert_eq!(
            u.adjacent_difference(Sub).unwrap().to_vec().unwrap(),
            vec![0, 1, 255, 255, 4],
            "{dev:?}"
        );
        let w = DeviceVec::from_slice(&dev, &[0u64, u64::MAX, 0]).unwrap();
        assert_eq!(
            w.adjacent_difference(Sub).unwrap().to_vec().unwrap(),
            vec![0, u64::MAX, 1],
            "{dev:?}"
        );
        let i = DeviceVec::from_slice(&dev, &[5i32, 7, 1, i32::MIN]).unwrap();
        assert_eq!(
            i.adjacent_difference(TwiceMinus).unwrap().to_vec().unwrap(),
            vec![5, 9, -5, 1i32.wrapping_neg().wrapping_add(i32::MIN.wrapping_mul(2))],
            "op(current, previous) on {dev:?}"
        );
        let f = DeviceVec::from_slice(&dev, &[1.0f32, f32::NAN, 2.0, -0.0, 0.0, f32::INFINITY, f32::INFINITY]).unwrap();
        let got = f.adjacent_difference(Sub).unwrap().to_vec().unwrap();
        assert_eq!(got[0], 1.0);
        assert!(got[1].is_nan() && got[2].is_nan(), "NaN in, NaN out: {got:?}");
        assert_eq!(got[3], -2.0);
        assert_eq!(got[4].to_bits(), 0.0f32.to_bits(), "0.0 - -0.0 is +0.0");
        assert_eq!(got[5], f32::INFINITY);
        assert!(got[6].is_nan(), "inf - inf");
        let mut m = DeviceVec::from_slice(&dev, &[3.0f64, -1.0]).unwrap();
        m.adjacent_difference_in_place(Max).unwrap();
        assert_eq!(m.to_vec().unwrap(), vec![3.0, 3.0]);
        let e = DeviceVec::<f32>::zeros(&dev, 0).unwrap();
        assert!(e.adjacent_difference(Sub).unwrap().is_empty());
        let mut e = DeviceVec::<u8>::zeros(&dev, 0).unwrap();
        e.adjacent_difference_in_place(Sub).unwrap();
        assert!(e.is_empty());
        let one = DeviceVec::from_slice(&dev, &[f16::NAN]).unwrap();
        assert!(one.adjacent_difference(Sub).unwrap().to_vec().unwrap()[0].is_nan());
    }
}

/// The copy is the same bits whatever the device: the CUDA result equals
/// the host's for a long random f32 input with NaN and infinities.
#[test]
fn cuda_matches_host_bit_for_bit() {
    let Some(gpu) = common::cuda() else { return };
    let n = capped(&[(1 << 20) + 3]).first().copied().unwrap_or(4097);
    let (mut r, seed) = rng("host vs cuda");
    let data = random_vec::<f32>(&mut r, n);
    let host = DeviceVec::from_slice(&Device::host(), &data)
        .unwrap()
        .adjacent_difference(Sub)
        .unwrap();
    let cuda = DeviceVec::from_slice(&gpu, &data).unwrap().adjacent_difference(Sub).unwrap();
    assert_same(&cuda.to_vec().unwrap(), &host.to_vec().unwrap(), &format!("seed={seed}"));
}
