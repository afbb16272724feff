//! Reduce family against plain Rust references, on every device.

mod common;

use cuprim::ops::{Abs, BitAnd, BitOr, BitXor, Square};
use cuprim::pred::{Eq, Ge, Gt, IsNan, Lt};
use cuprim::prelude::*;
use rand::Rng;

const SIZES: &[usize] = &[0, 1, 31, 33, 4097, (1 << 20) + 3];

/// The test's generator for `tag`: seeded from `CUPRIM_TEST_SEED` when set
/// (replay), else the clock; messages print the base seed.
fn rng(tag: u64) -> (common::TestRng, u64) {
    common::rng(&format!("reduce-{tag}"))
}

/// Same value: both NaN, or the same bits (so -0.0 != +0.0).
fn same_float(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

/// What min_element (max_element) returns, as (index, value): the first NaN,
/// else the first least (greatest) element, -0.0 before +0.0 for the least
/// and after it for the greatest.
fn arg_extreme<T: Element + Copy>(data: &[T], greatest: bool) -> Option<(usize, T)> {
    if let Some(i) = data.iter().position(|x| x.is_nan()) {
        return Some((i, data[i]));
    }
    let negative_zero = |x: T| x == T::default() && bytemuck::bytes_of(&x) != bytemuck::bytes_of(&T::default());
    let mut best: Option<usize> = None;
    for (i, &x) in data.iter().enumerate() {
        let better = best.is_none_or(|b| {
            let y = data[b];
            if greatest {
                x > y || (x == y && negative_zero(y) && !negative_zero(x))
            } else {
                x < y || (x == y && negative_zero(x) && !negative_zero(y))
            }
        });
        if better {
            best = Some(i);
        }
    }
    best.map(|i| (i, data[i]))
}

macro_rules! int_reductions {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            for dev in common::devices() {
                for &n in SIZES {
                    let (mut r, seed) = rng(n as u64);
                    let data: Vec<$t> = (0..n).map(|_| r.gen()).collect();
                    let v = DeviceVec::from_slice(&dev, &data).unwrap();
                    let ctx = format!("{dev:?} n={n} seed={seed}");
                    let sum = data.iter().fold(0 as $t, |a, &b| a.wrapping_add(b));
                    let prod = data.iter().fold(1 as $t, |a, &b| a.wrapping_mul(b));
                    assert_eq!(v.sum().unwrap(), sum, "sum {ctx}");
                    assert_eq!(v.product().unwrap(), prod, "product {ctx}");
                    assert_eq!(v.min().unwrap(), data.iter().copied().min().unwrap_or(<$t>::MAX), "min {ctx}");
                    assert_eq!(v.max().unwrap(), data.iter().copied().max().unwrap_or(<$t>::MIN), "max {ctx}");
                    assert_eq!(v.reduce(BitAnd).unwrap(), data.iter().fold(!0, |a, &b| a & b), "and {ctx}");
                    assert_eq!(v.reduce(BitOr).unwrap(), data.iter().fold(0, |a, &b| a | b), "or {ctx}");
                    assert_eq!(v.reduce(BitXor).unwrap(), data.iter().fold(0, |a, &b| a ^ b), "xor {ctx}");
                    let sq = data.iter().fold(0 as $t, |a, &b| a.wrapping_add(b.wrapping_mul(b)));
                    assert_eq!(v.transform_reduce(Square, Add).unwrap(), sq, "sum of squares {ctx}");
                    let dv = v.reduce_into(Add).unwrap();
                    assert_eq!(dv.to_vec().unwrap(), vec![sum], "reduce_into {ctx}");

                    // Ties: a small value range makes repeats certain.
                    let small: Vec<$t> = (0..n).map(|_| r.gen_range(0..5) as $t).collect();
                    let s = DeviceVec::from_slice(&dev, &small).unwrap();
                    assert_eq!(s.min_element().unwrap(), arg_extreme(&small, false), "min_element {ctx}");
                    assert_eq!(s.max_element().unwrap(), arg_extreme(&small, true), "max_element {ctx}");
                    assert_eq!(s.count(Eq(3 as $t)).unwrap(), small.iter().filter(|&&x| x == 3 as $t).count(), "count {ctx}");
                    assert_eq!(s.find_first(Eq(4 as $t)).unwrap(), small.iter().position(|&x| x == 4 as $t), "find_first {ctx}");
                    assert_eq!(s.any(Gt(3 as $t)).unwrap(), small.iter().any(|&x| x > 3 as $t), "any {ctx}");
                    assert_eq!(s.all(Lt(4 as $t)).unwrap(), small.iter().all(|&x| x < 4 as $t), "all {ctx}");
                }
            }
        }
    )*};
}

int_reductions!(reduce_u8: u8, reduce_i8: i8, reduce_u32: u32, reduce_i32: i32, reduce_u64: u64, reduce_i64: i64);

/// Worst-case style bound for a regrouped float sum: (sqrt(n) + 16) ulps of
/// the sum of magnitudes. Real errors are far smaller; a wrong grouping or a
/// lost element is far larger.
fn sum_tolerance(eps: f64, n: usize, abs_sum: f64) -> f64 {
    ((n as f64).sqrt() + 16.0) * eps * abs_sum
}

macro_rules! float_reductions {
    ($($name:ident: $t:ty, $eps:expr),* $(,)?) => {$(
        #[test]
        fn $name() {
            for dev in common::devices() {
                for &n in SIZES {
                    let (mut r, seed) = rng(n as u64 + 7);
                    let data: Vec<$t> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
                    let ctx = format!("{dev:?} n={n} seed={seed}");
                    let v = DeviceVec::from_slice(&dev, &data).unwrap();
                    let exact: f64 = data.iter().map(|&x| x as f64).sum();
                    let abs: f64 = data.iter().map(|&x| (x as f64).abs()).sum();
                    let got = v.sum().unwrap();
                    assert!((got as f64 - exact).abs() <= sum_tolerance($eps, n, abs), "sum {got} vs {exact} {ctx}");
                    // Same input, same device: the same bits.
                    assert_eq!(v.sum().unwrap().to_bits(), got.to_bits(), "sum not deterministic {ctx}");
                    let sq: f64 = data.iter().map(|&x| (x as f64) * (x as f64)).sum();
                    let got_sq = v.transform_reduce(Square, Add).unwrap();
                    assert!((got_sq as f64 - sq).abs() <= sum_tolerance($eps, n, sq) + $eps, "sum of squares {ctx}");
                    let abs_got = v.transform_reduce(Abs, Max).unwrap();
                    assert_eq!(abs_got, data.iter().fold(<$t>::NEG_INFINITY, |a, &b| a.max(b.abs())), "max |x| {ctx}");
                    assert_eq!(v.min().unwrap(), data.iter().fold(<$t>::INFINITY, |a, &b| a.min(b)), "min {ctx}");
                    assert_eq!(v.max().unwrap(), data.iter().fold(<$t>::NEG_INFINITY, |a, &b| a.max(b)), "max {ctx}");

                    // NaN: contagious for min and min_element, counted by IsNan.
                    let mut with_nan = data.clone();
                    for _ in 0..n / 100 + usize::from(n > 2) {
                        let i = r.gen_range(0..n);
                        with_nan[i] = <$t>::NAN;
                    }
                    let w = DeviceVec::from_slice(&dev, &with_nan).unwrap();
                    let want_min = with_nan.iter().copied().fold(<$t>::INFINITY, common::ieee_min);
                    assert!(same_float(w.min().unwrap() as f64, want_min as f64), "min with NaN {ctx}");
                    assert_eq!(w.count(IsNan).unwrap(), with_nan.iter().filter(|x| x.is_nan()).count(), "count NaN {ctx}");
                    assert_eq!(w.find_first(IsNan).unwrap(), with_nan.iter().position(|x| x.is_nan()), "find NaN {ctx}");
                    // The first NaN, else the least value (-0.0 before +0.0), lowest index.
                    let min_ref = arg_extreme(&with_nan, false);
                    let got_me = w.min_element().unwrap();
                    assert_eq!(got_me.map(|p| p.0), min_ref.map(|p| p.0), "min_element index {ctx}");
                    assert!(got_me.zip(min_ref).map_or(got_me.is_none() && min_ref.is_none(), |(g, m)| same_float(g.1 as f64, m.1 as f64)), "min_element value {ctx}");
                    assert_eq!(w.all(Ge(-1.0 as $t)).unwrap(), with_nan.iter().all(|&x| x >= -1.0), "all {ctx}");
                }
            }
        }
    )*};
}

float_reductions!(reduce_f32: f32, f32::EPSILON as f64, reduce_f64: f64, f64::EPSILON);

#[test]
fn half_reductions_exact_on_small_integers() {
    for dev in common::devices() {
        let (mut r, seed) = rng(99);
        // Integers whose partial sums stay exactly representable.
        let ints: Vec<i32> = (0..200).map(|_| r.gen_range(-1..=1)).collect();
        let f16s: Vec<f16> = ints.iter().map(|&x| f16::from_f32(x as f32)).collect();
        let bf16s: Vec<bf16> = ints.iter().map(|&x| bf16::from_f32(x as f32)).collect();
        let total: i32 = ints.iter().sum();
        let a = DeviceVec::from_slice(&dev, &f16s).unwrap();
        let b = DeviceVec::from_slice(&dev, &bf16s).unwrap();
        assert_eq!(a.sum().unwrap().to_f32(), total as f32, "{dev:?} seed={seed}");
        assert_eq!(b.sum().unwrap().to_f32(), total as f32, "{dev:?} seed={seed}");
        assert_eq!(a.max().unwrap().to_f32(), *ints.iter().max().unwrap() as f32);
        assert_eq!(
            b.min_element().unwrap().map(|p| p.0),
            ints.iter().enumerate().min_by_key(|&(i, &x)| (x, i)).map(|p| p.0)
        );
        assert_eq!(a.count(Eq(f16::ONE)).unwrap(), ints.iter().filter(|&&x| x == 1).count());
    }
}

#[test]
fn empty_inputs_give_identities() {
    for dev in common::devices() {
        let e = DeviceVec::<f32>::zeros(&dev, 0).unwrap();
        assert_eq!(e.sum().unwrap().to_bits(), (-0.0f32).to_bits(), "{dev:?}");
        assert_eq!(e.product().unwrap(), 1.0);
        assert_eq!(e.min().unwrap(), f32::INFINITY);
        assert_eq!(e.max().unwrap(), f32::NEG_INFINITY);
        assert_eq!(e.min_element().unwrap(), None);
        assert_eq!(e.count(IsNan).unwrap(), 0);
        assert_eq!(e.find_first(IsNan).unwrap(), None);
        assert!(!e.any(IsNan).unwrap());
        assert!(e.all(IsNan).unwrap());
        assert_eq!(e.reduce_into(Max).unwrap().to_vec().unwrap(), vec![f32::NEG_INFINITY]);
    }
}

#[test]
fn negative_zero_and_all_nan() {
    for dev in common::devices() {
        let v = DeviceVec::from_slice(&dev, &[-0.0f64, -0.0]).unwrap();
        assert_eq!(v.sum().unwrap().to_bits(), (-0.0f64).to_bits(), "{dev:?}");
        let z = DeviceVec::from_slice(&dev, &[0.0f32, -0.0, 0.0, -0.0]).unwrap();
        assert_eq!(
            z.min_element().unwrap().map(|p| p.0),
            Some(1),
            "-0.0 before +0.0, then lowest index"
        );
        assert_eq!(z.max_element().unwrap().map(|p| p.0), Some(0), "+0.0 after -0.0, then lowest index");
        assert_eq!(z.min().unwrap().to_bits(), (-0.0f32).to_bits(), "{dev:?}");
        assert_eq!(z.max().unwrap().to_bits(), 0.0f32.to_bits(), "{dev:?}");
        let nan = DeviceVec::from_slice(&dev, &[f32::NAN; 5]).unwrap();
        let me = nan.max_element().unwrap().unwrap();
        assert_eq!(me.0, 0);
        assert!(me.1.is_nan());
        assert!(nan.max().unwrap().is_nan(), "all NaN: NaN");
        let one = DeviceVec::from_slice(&dev, &[1.0f32, f32::NAN, -3.0]).unwrap();
        assert!(one.min().unwrap().is_nan() && one.max().unwrap().is_nan(), "one NaN is contagious");
        assert_eq!(one.min_element().unwrap().map(|p| p.0), Some(1), "the NaN");
        let scanned = one.scan_inclusive(Min).unwrap().to_vec().unwrap();
        assert!(scanned[2].is_nan(), "the scan's last element is the reduction");
    }
}

#[test]
fn views_at_odd_offsets() {
    for dev in common::devices() {
        let data: Vec<u32> = (0..10_001).collect();
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        for (a, b) in [(1usize, 10_001usize), (3, 9_998), (5, 6), (7, 7)] {
            let s = v.slice(a..b).unwrap();
            let want: u32 = data[a..b].iter().sum();
            assert_eq!(s.sum().unwrap(), want, "{dev:?} {a}..{b}");
            assert_eq!(s.find_first(Eq(5000u32)).unwrap(), data[a..b].iter().position(|&x| x == 5000));
        }
    }
}

/// Every start offset 0..=17 and lengths around the vector and tile
/// edges, for the element sizes 1, 2, 4 and 8: the kernels take a slice's
/// misaligned head and tail one element at a time and the rest as 16-byte
/// vectors.
#[test]
fn views_at_every_offset() {
    fn check<T: Element + Copy>(dev: &Device, data: &[T], of: impl Fn(usize) -> T) {
        let v = DeviceVec::from_slice(dev, data).unwrap();
        for a in 0..=17usize {
            for len in [0usize, 1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 100, 4093, 65_539] {
                let b = (a + len).min(data.len());
                let s = v.slice(a..b).unwrap();
                let part = &data[a..b];
                let ctx = format!("{dev:?} {} {a}..{b}", T::NAME);
                assert_eq!(
                    s.count(Gt(of(60))).unwrap(),
                    part.iter().filter(|&&x| x > of(60)).count(),
                    "count {ctx}"
                );
                let want = part.iter().position(|&x| x == of(77));
                assert_eq!(s.find_first(Eq(of(77))).unwrap(), want, "find_first {ctx}");
                assert_eq!(s.min_element().unwrap(), arg_extreme(part, false), "min_element {ctx}");
                if let Some(&first) = part.first() {
                    let want = part.iter().copied().fold(first, |m, x| if x > m { x } else { m });
                    assert_eq!(s.max().unwrap(), want, "max {ctx}");
                }
            }
        }
    }
    for dev in common::devices() {
        // Values 0..100 (exact in every type) in a fixed scramble.
        let n = 70_000;
        let val = |i: usize| (i * 37 + i / 101) % 100;
        check(&dev, &(0..n).map(|i| val(i) as u8).collect::<Vec<_>>(), |k| k as u8);
        check(&dev, &(0..n).map(|i| f16::from_f32(val(i) as f32)).collect::<Vec<_>>(), |k| {
            f16::from_f32(k as f32)
        });
        check(&dev, &(0..n).map(|i| val(i) as i32).collect::<Vec<_>>(), |k| k as i32);
        check(&dev, &(0..n).map(|i| val(i) as f64).collect::<Vec<_>>(), |k| k as f64);
    }
}

#[test]
fn find_first_at_both_ends() {
    for dev in common::devices() {
        let n = (1 << 20) + 3;
        let mut data = vec![0u32; n];
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        assert_eq!(v.find_first(Eq(1u32)).unwrap(), None, "{dev:?}");
        data[n - 1] = 1;
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        assert_eq!(v.find_first(Eq(1u32)).unwrap(), Some(n - 1), "{dev:?}");
        data[0] = 1;
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        assert_eq!(v.find_first(Eq(1u32)).unwrap(), Some(0), "{dev:?}");
        assert!(v.any(Eq(1u32)).unwrap());
        assert!(!v.all(Eq(1u32)).unwrap());
    }
}

/// `min_element_to` / `max_element_to` write what `min_element` /
/// `max_element` return (into poisoned outputs), for every element type,
/// on random values with specials (NaN, -0.0, extremes) and on small
/// values (ties), at sizes around one block's share and across many.
#[test]
fn element_to_matches_element() {
    fn check<T: common::Sample>(dev: &Device, tag: &str) {
        for &n in &[0usize, 1, 2, 31, 4095, 4096, 4097, 70_001, (1 << 20) + 5] {
            let (mut r, seed) = common::rng(&format!("element-to-{tag}-{n}"));
            for data in [common::random_vec::<T>(&mut r, n), common::small_vec::<T>(&mut r, n)] {
                let v = DeviceVec::from_slice(dev, &data).unwrap();
                let ctx = common::ctx(dev, &format!("element_to {tag}"), n, seed);
                let mut index = DeviceVec::from_slice(dev, &[0x5a5a_5a5a_5a5a_5a5au64]).unwrap();
                let mut value = DeviceVec::from_slice(dev, &[T::small(&mut r)]).unwrap();
                for greatest in [false, true] {
                    let (want, identity) = if greatest {
                        (v.max_element().unwrap(), T::lowest())
                    } else {
                        (v.min_element().unwrap(), T::highest())
                    };
                    if greatest {
                        v.max_element_to(&mut index, &mut value).unwrap();
                    } else {
                        v.min_element_to(&mut index, &mut value).unwrap();
                    }
                    let (i, x) = want.map_or((u64::MAX, identity), |(i, x)| (i as u64, x));
                    assert_eq!(index.to_vec().unwrap(), vec![i], "index, greatest={greatest} {ctx}");
                    common::assert_same(&value.to_vec().unwrap(), &[x], &format!("value, greatest={greatest} {ctx}"));
                    if let Some((wi, wx)) = want {
                        assert!(common::same(data[wi], wx), "min/max_element's value is the element {ctx}");
                    }
                }
            }
        }
    }
    for dev in common::devices() {
        check::<u8>(&dev, "u8");
        check::<i8>(&dev, "i8");
        check::<u32>(&dev, "u32");
        check::<i32>(&dev, "i32");
        check::<u64>(&dev, "u64");
        check::<i64>(&dev, "i64");
        check::<f32>(&dev, "f32");
        check::<f64>(&dev, "f64");
        check::<half::f16>(&dev, "f16");
        check::<half::bf16>(&dev, "bf16");
        let v = DeviceVec::from_slice(&dev, &[1.0f32]).unwrap();
        let mut empty = DeviceVec::<u64>::zeros(&dev, 0).unwrap();
        let mut value = DeviceVec::<f32>::zeros(&dev, 1).unwrap();
        assert!(matches!(
            v.min_element_to(&mut empty, &mut value),
            Err(cuprim::Error::InvalidArgument(_))
        ));
    }
}

/// min_element / max_element (and the `_to` forms) of inputs made of one
/// value, at sizes of one block to many: index 0 whatever the value, the
/// extremes of each type included (+-inf, NaN, an integer type's bounds:
/// the values the kernels' fold starts from), and the first of several
/// equal least / greatest elements among others.
#[test]
fn arg_extremes_of_equal_elements() {
    fn constant<T: Element + Copy + std::fmt::Debug>(dev: &Device, x: T, n: usize) {
        let v = DeviceVec::filled(dev, n, x).unwrap();
        let ctx = format!("{n} x {x:?} on {dev:?}");
        for (got, what) in [(v.min_element().unwrap(), "min"), (v.max_element().unwrap(), "max")] {
            let (i, y) = got.unwrap_or_else(|| panic!("{what} of {ctx}: none"));
            assert!(i == 0 && common::same(x, y), "{what}_element of {ctx}: ({i}, {y:?})");
        }
        let mut index = DeviceVec::from_slice(dev, &[7u64]).unwrap();
        let mut value = DeviceVec::from_slice(dev, &[x]).unwrap();
        v.min_element_to(&mut index, &mut value).unwrap();
        assert_eq!(index.to_vec().unwrap(), vec![0], "min_element_to of {ctx}");
        v.max_element_to(&mut index, &mut value).unwrap();
        assert_eq!(index.to_vec().unwrap(), vec![0], "max_element_to of {ctx}");
    }
    for dev in common::devices() {
        for n in [1usize, 5, 4097, 70_001, (1 << 20) + 5] {
            for x in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -0.0] {
                constant(&dev, x, n);
            }
            for x in [f64::INFINITY, f64::NEG_INFINITY] {
                constant(&dev, x, n);
            }
            for x in [half::f16::INFINITY, half::f16::NEG_INFINITY] {
                constant(&dev, x, n);
            }
            for x in [i8::MAX, i8::MIN] {
                constant(&dev, x, n);
            }
            for x in [u8::MAX, 0] {
                constant(&dev, x, n);
            }
            for x in [i32::MAX, i32::MIN] {
                constant(&dev, x, n);
            }
            constant(&dev, u64::MAX, n);
            // The least and the greatest each at three places among others.
            let (mut r, _) = common::rng(&format!("arg-equal-{n}"));
            let mut data: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0f32..1.0)).collect();
            let mut small: Vec<i8> = (0..n).map(|_| r.gen_range(-100i8..100)).collect();
            let at: Vec<usize> = (0..6).map(|_| r.gen_range(0..n)).collect();
            if n > 6 {
                for (k, &p) in at.iter().enumerate() {
                    data[p] = if k % 2 == 0 { -5.0 } else { 5.0 };
                    small[p] = if k % 2 == 0 { -128 } else { 127 };
                }
                let first = |w: f32| data.iter().position(|&x| x == w);
                let v = DeviceVec::from_slice(&dev, &data).unwrap();
                assert_eq!(v.min_element().unwrap().map(|p| p.0), first(-5.0), "first least f32, n = {n}");
                assert_eq!(v.max_element().unwrap().map(|p| p.0), first(5.0), "first greatest f32, n = {n}");
                let s = DeviceVec::from_slice(&dev, &small).unwrap();
                assert_eq!(
                    s.min_element().unwrap().map(|p| p.0),
                    small.iter().position(|&x| x == -128),
                    "first least i8, n = {n}"
                );
                assert_eq!(
                    s.max_element().unwrap().map(|p| p.0),
                    small.iter().position(|&x| x == 127),
                    "first greatest i8, n = {n}"
                );
            }
        }
    }
}

/// min_element / max_element (and `min_element_to`) of floats mixing every
/// kind of value: NaNs of both signs and many payloads, zeros of both signs,
/// infinities, the finite extremes and many repeated values, at several
/// densities, on aligned and misaligned views, against a plain reference:
/// the first NaN, else the first least (greatest) value, -0.0 before +0.0
/// for the least and +0.0 before -0.0 for the greatest.
#[test]
fn arg_extremes_of_special_floats() {
    macro_rules! check {
        ($t:ty, $u:ty, $dev:expr, $r:expr, $seed:expr) => {{
            let (dev, r, seed) = ($dev, $r, $seed);
            let quiet: $u = 1 << (<$t>::MANTISSA_DIGITS - 2);
            let sign: $u = 1 << (<$u>::BITS - 1);
            let nan = |r: &mut common::TestRng| {
                let payload: $u = r.gen::<$u>() & (quiet - 1);
                let s = if r.gen_bool(0.5) { sign } else { 0 };
                <$t>::from_bits(<$t>::INFINITY.to_bits() | quiet | payload | s)
            };
            let specials = [
                0.0,
                -0.0,
                <$t>::INFINITY,
                <$t>::NEG_INFINITY,
                <$t>::MAX,
                <$t>::MIN,
                <$t>::from_bits(1),
            ];
            for n in common::capped(&[1usize, 7, 4097, 70_001, (1 << 20) + 5]) {
                for (nan_rate, special_rate) in [(0.0, 0.0), (0.0, 0.3), (1.0 / n as f64, 0.1), (0.01, 0.3), (0.5, 0.5)] {
                    let data: Vec<$t> = (0..n + 3)
                        .map(|_| {
                            if r.gen_bool(nan_rate) {
                                nan(r)
                            } else if r.gen_bool(special_rate) {
                                specials[r.gen_range(0..specials.len())]
                            } else {
                                r.gen_range(-50i32..50) as $t
                            }
                        })
                        .collect();
                    let v = DeviceVec::from_slice(&dev, &data).unwrap();
                    for offset in [0usize, 1, 3] {
                        let part = &data[offset..offset + n];
                        let s = v.slice(offset..offset + n).unwrap();
                        let ctx = format!(
                            "{} n={n} offset={offset} NaN rate {nan_rate} seed={seed} on {dev:?}",
                            stringify!($t)
                        );
                        let (min_i, max_i) = (arg_extreme(part, false).map(|p| p.0), arg_extreme(part, true).map(|p| p.0));
                        assert_eq!(s.min_element().unwrap().map(|p| p.0), min_i, "min_element {ctx}");
                        assert_eq!(s.max_element().unwrap().map(|p| p.0), max_i, "max_element {ctx}");
                        let mut index = DeviceVec::from_slice(&dev, &[u64::MAX - 1]).unwrap();
                        let mut value = DeviceVec::from_slice(&dev, &[1.5 as $t]).unwrap();
                        s.min_element_to(&mut index, &mut value).unwrap();
                        let i = index.to_vec().unwrap()[0] as usize;
                        assert_eq!(Some(i), min_i, "min_element_to {ctx}");
                        assert!(common::same(value.to_vec().unwrap()[0], part[i]), "min_element_to's value {ctx}");
                    }
                }
            }
        }};
    }
    for dev in common::devices() {
        let (mut r, seed) = common::rng("arg-special-floats");
        check!(f32, u32, &dev, &mut r, seed);
        check!(f64, u64, &dev, &mut r, seed);
    }
}
