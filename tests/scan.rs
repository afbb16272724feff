//! Scan family (scan, scan_by_key, copy_if, partition) against plain Rust
//! references, on every device.

mod common;

use cuprim::ops::{BinaryOp, Commutative, Monoid};
use cuprim::pred::{Gt, IsNan, Lt};
use cuprim::prelude::*;
use rand::Rng;

// Tile edges: 4-byte elements scan 7168 per tile, 1- and 2-byte 8192, 8-byte 3072.
const SIZES: &[usize] = &[0, 1, 31, 33, 3073, 4097, 7168, 8193, 14337, (1 << 20) + 3];

/// The test's generator for `tag`: seeded from `CUPRIM_TEST_SEED` when set
/// (replay), else the clock; messages print the base seed.
fn rng(tag: u64) -> (common::TestRng, u64) {
    common::rng(&format!("scan-{tag}"))
}

fn reference_scan<T: Copy>(data: &[T], identity: T, exclusive: bool, op: impl Fn(T, T) -> T) -> Vec<T> {
    let mut out = Vec::with_capacity(data.len());
    let mut run: Option<T> = None;
    for &x in data {
        let incl = run.map_or(x, |r| op(r, x));
        out.push(if exclusive { run.unwrap_or(identity) } else { incl });
        run = Some(incl);
    }
    out
}

/// Inclusive scan restarting where the key changes.
fn reference_scan_by_key<K: PartialEq, T: Copy>(keys: &[K], data: &[T], op: impl Fn(T, T) -> T) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(data.len());
    for (i, &x) in data.iter().enumerate() {
        let head = i == 0 || keys[i] != keys[i - 1];
        out.push(if head { x } else { op(out[i - 1], x) });
    }
    out
}

macro_rules! int_scans {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            for dev in common::devices() {
                for &n in SIZES {
                    let (mut r, seed) = rng(n as u64);
                    let data: Vec<$t> = (0..n).map(|_| r.gen()).collect();
                    let ctx = format!("{dev:?} n={n} seed={seed}");
                    let v = DeviceVec::from_slice(&dev, &data).unwrap();
                    let add = |a: $t, b: $t| a.wrapping_add(b);
                    assert_eq!(v.scan(Add).unwrap().to_vec().unwrap(), reference_scan(&data, 0, false, add), "inclusive {ctx}");
                    assert_eq!(v.scan_exclusive(Add).unwrap().to_vec().unwrap(), reference_scan(&data, 0, true, add), "exclusive {ctx}");
                    assert_eq!(v.scan_inclusive(Max).unwrap().to_vec().unwrap(), reference_scan(&data, <$t>::MIN, false, |a, b| a.max(b)), "max {ctx}");
                    assert_eq!(v.scan_exclusive(Min).unwrap().to_vec().unwrap(), reference_scan(&data, <$t>::MAX, true, |a, b| a.min(b)), "min {ctx}");
                    assert_eq!(v.scan(Mul).unwrap().to_vec().unwrap(), reference_scan(&data, 1, false, |a: $t, b: $t| a.wrapping_mul(b)), "mul {ctx}");
                    let mut w = v.to_device_vec().unwrap();
                    w.scan_inclusive_in_place(BitXor).unwrap();
                    assert_eq!(w.to_vec().unwrap(), reference_scan(&data, 0, false, |a, b| a ^ b), "xor in place {ctx}");
                    let mut w = v.to_device_vec().unwrap();
                    w.scan_exclusive_in_place(Add).unwrap();
                    assert_eq!(w.to_vec().unwrap(), reference_scan(&data, 0, true, add), "exclusive in place {ctx}");
                    // Into a caller's buffer, poisoned first (all of it is written).
                    let mut out = DeviceVec::filled(&dev, n, <$t>::MAX / 3).unwrap();
                    v.scan_inclusive_into(Add, &mut out).unwrap();
                    assert_eq!(out.to_vec().unwrap(), reference_scan(&data, 0, false, add), "inclusive into {ctx}");
                    v.scan_exclusive_into(Max, &mut out).unwrap();
                    assert_eq!(out.to_vec().unwrap(), reference_scan(&data, <$t>::MIN, true, |a, b| a.max(b)), "exclusive into {ctx}");

                    // copy_if / partition with a predicate that keeps about half.
                    let mid = <$t>::MAX / 2 + <$t>::MIN / 2;
                    let kept: Vec<$t> = data.iter().copied().filter(|&x| x > mid).collect();
                    assert_eq!(v.copy_if(Gt(mid)).unwrap().to_vec().unwrap(), kept, "copy_if {ctx}");
                    let mut p = v.to_device_vec().unwrap();
                    let split = p.partition(Gt(mid)).unwrap();
                    let mut want = kept.clone();
                    want.extend(data.iter().copied().filter(|&x| !(x > mid)));
                    assert_eq!(split, kept.len(), "partition split {ctx}");
                    assert_eq!(p.to_vec().unwrap(), want, "partition order {ctx}");

                    // scan_by_key over runs of a few keys.
                    let keys: Vec<u32> = (0..n).map(|i| (i as u32 / r.gen_range(1..9)) % 3).collect();
                    let k = DeviceVec::from_slice(&dev, &keys).unwrap();
                    let want = reference_scan_by_key(&keys, &data, add);
                    assert_eq!(v.scan_by_key(&k, Add).unwrap().to_vec().unwrap(), want, "scan_by_key {ctx}");
                }
            }
        }
    )*};
}

int_scans!(scan_u8: u8, scan_i8: i8, scan_u32: u32, scan_i32: i32, scan_u64: u64, scan_i64: i64);

/// A float inclusive sum scan against an f64 running sum: each element within
/// (log2(n) + 40 + sqrt(i)) ulps (`eps`) of the prefix's sum of magnitudes
/// (tree within a tile, chain across tiles).
/// The f32 sums of `floats` within check_sum_scan's tolerance, and the same
/// bits scanned again through an expression of the buffer.
fn check_f32_sums_repeat(dev: &Device, floats: &[f32], ctx: &str) {
    let f = DeviceVec::from_slice(dev, floats).unwrap();
    let got = f.scan(Add).unwrap().to_vec().unwrap();
    check_sum_scan(floats, &got, f32::EPSILON as f64, &format!("f32 {ctx}"));
    let again = f.map(cuprim::ops::Identity).scan(Add).unwrap().to_vec().unwrap();
    assert!(
        got.iter().zip(&again).all(|(a, b)| a.to_bits() == b.to_bits()),
        "f32 scan bits differ between runs / the expression {ctx}"
    );
}

/// The f64 sums of `doubles` within check_sum_scan's tolerance, the same
/// bits run to run.
fn check_f64_sums_repeat(dev: &Device, doubles: &[f64], ctx: &str) {
    let d = DeviceVec::from_slice(dev, doubles).unwrap();
    let got = d.scan(Add).unwrap().to_vec().unwrap();
    check_sum_scan(doubles, &got, f64::EPSILON, &format!("f64 {ctx}"));
    let again = d.scan(Add).unwrap().to_vec().unwrap();
    assert!(
        got.iter().zip(&again).all(|(a, b)| a.to_bits() == b.to_bits()),
        "f64 scan bits differ run to run {ctx}"
    );
}

fn check_sum_scan<T: Copy + Into<f64>>(data: &[T], got: &[T], eps: f64, ctx: &str) {
    assert_eq!(got.len(), data.len(), "scan length {ctx}");
    let (mut exact, mut abs) = (0f64, 0f64);
    let log_n = (data.len().max(2) as f64).log2();
    for (i, (&x, &g)) in data.iter().zip(got).enumerate() {
        exact += x.into();
        abs += x.into().abs();
        let tol = (log_n + 40.0 + (i as f64).sqrt()) * eps * abs;
        let g: f64 = g.into();
        assert!((g - exact).abs() <= tol, "element {i}: {g} vs {exact} {ctx}");
    }
}

macro_rules! float_scans {
    ($($name:ident: $t:ty, $eps:expr),* $(,)?) => {$(
        #[test]
        fn $name() {
            for dev in common::devices() {
                for &n in SIZES {
                    let (mut r, seed) = rng(n as u64 + 3);
                    let data: Vec<$t> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
                    let ctx = format!("{dev:?} n={n} seed={seed}");
                    let v = DeviceVec::from_slice(&dev, &data).unwrap();
                    for deterministic in [false, true] {
                        dev.set_deterministic(deterministic);
                        let got = v.scan(Add).unwrap().to_vec().unwrap();
                        check_sum_scan(&data, &got, $eps, &format!("{ctx} det={deterministic}"));
                        if deterministic {
                            for _ in 0..3 {
                                let again = v.scan(Add).unwrap().to_vec().unwrap();
                                assert!(got.iter().zip(&again).all(|(a, b)| a.to_bits() == b.to_bits()), "not bit-identical run to run {ctx}");
                            }
                        }
                    }
                    dev.set_deterministic(true);
                    // Min / Max are exact whatever the grouping.
                    let want = reference_scan(&data, <$t>::INFINITY, false, common::ieee_min);
                    let got_min = v.scan(Min).unwrap().to_vec().unwrap();
                    assert!(got_min.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "min scan {ctx}");
                    let got_ex = v.scan_exclusive(Max).unwrap().to_vec().unwrap();
                    if n > 0 {
                        assert_eq!(got_ex[0], <$t>::NEG_INFINITY, "exclusive starts with the identity {ctx}");
                    }
                    // NaN pass-through for copy_if.
                    let mut with_nan = data.clone();
                    if n > 2 {
                        with_nan[n / 2] = <$t>::NAN;
                        with_nan[0] = -0.0;
                    }
                    let w = DeviceVec::from_slice(&dev, &with_nan).unwrap();
                    let kept = w.copy_if(IsNan).unwrap().to_vec().unwrap();
                    assert_eq!(kept.len(), with_nan.iter().filter(|x| x.is_nan()).count(), "copy_if NaN {ctx}");
                    let neg: Vec<u64> = with_nan.iter().filter(|&&x| x < 0.0).map(|x| x.to_bits() as u64).collect();
                    let got_neg: Vec<u64> = w.copy_if(Lt(0.0)).unwrap().to_vec().unwrap().iter().map(|x| x.to_bits() as u64).collect();
                    assert_eq!(got_neg, neg, "copy_if keeps bits and order; -0.0 is not < 0 {ctx}");
                }
            }
        }
    )*};
}

float_scans!(scan_f32: f32, f32::EPSILON as f64, scan_f64: f64, f64::EPSILON);

#[test]
fn half_scans_exact_on_small_integers() {
    for dev in common::devices() {
        let (mut r, seed) = rng(5);
        let ints: Vec<i32> = (0..5000).map(|_| r.gen_range(-1..=1)).collect();
        let h: Vec<f16> = ints.iter().map(|&x| f16::from_f32(x as f32)).collect();
        let b: Vec<bf16> = ints.iter().map(|&x| bf16::from_f32(x as f32)).collect();
        let mut acc = 0i32;
        let want: Vec<f32> = ints
            .iter()
            .map(|&x| {
                acc += x;
                acc as f32
            })
            .collect();
        // f16 holds every integer up to 2048 exactly; stay there.
        let got: Vec<f32> = DeviceVec::from_slice(&dev, &h)
            .unwrap()
            .scan(Add)
            .unwrap()
            .to_vec()
            .unwrap()
            .iter()
            .map(|x| x.to_f32())
            .collect();
        let in_range = want.iter().all(|x| x.abs() <= 256.0);
        if in_range {
            assert_eq!(got, want, "{dev:?} seed={seed}");
            let got_b: Vec<f32> = DeviceVec::from_slice(&dev, &b)
                .unwrap()
                .scan(Add)
                .unwrap()
                .to_vec()
                .unwrap()
                .iter()
                .map(|x| x.to_f32())
                .collect();
            assert_eq!(got_b, want, "{dev:?} seed={seed}");
        } else {
            assert_eq!(&got[..100], &want[..100], "{dev:?} seed={seed}");
        }
        let kept = DeviceVec::from_slice(&dev, &h)
            .unwrap()
            .copy_if(Gt(f16::ZERO))
            .unwrap()
            .to_vec()
            .unwrap();
        assert_eq!(kept.len(), ints.iter().filter(|&&x| x > 0).count());
    }
}

#[test]
fn non_commutative_operator_keeps_order() {
    for dev in common::devices() {
        for &n in SIZES {
            let (mut r, seed) = rng(n as u64 + 11);
            let data: Vec<u64> = (0..n).map(|_| r.gen()).collect();
            assert_ne!(
                common::Compose.apply(3 << 32 | 1, 5 << 32 | 7),
                common::Compose.apply(5 << 32 | 7, 3 << 32 | 1)
            );
            let v = DeviceVec::from_slice(&dev, &data).unwrap();
            let want = reference_scan(&data, 1 << 32, false, |a, b| common::Compose.apply(a, b));
            assert_eq!(
                v.scan(common::Compose).unwrap().to_vec().unwrap(),
                want,
                "{dev:?} n={n} seed={seed}"
            );
            let want = reference_scan(&data, 1 << 32, true, |a, b| common::Compose.apply(a, b));
            assert_eq!(
                v.scan_exclusive(common::Compose).unwrap().to_vec().unwrap(),
                want,
                "{dev:?} n={n} seed={seed}"
            );
        }
    }
}

#[test]
fn scan_views_and_bad_input() {
    for dev in common::devices() {
        let data: Vec<u32> = (1..=9001).collect();
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        let s = v.slice(3..8000).unwrap();
        assert_eq!(
            s.scan(Add).unwrap().to_vec().unwrap(),
            reference_scan(&data[3..8000], 0, false, |a, b| a + b),
            "{dev:?}"
        );
        let mut w = v.to_device_vec().unwrap();
        w.slice_mut(5..4000).unwrap().scan_inclusive_in_place(Add).unwrap();
        let mut want = data.clone();
        want[5..4000].copy_from_slice(&reference_scan(&data[5..4000], 0, false, |a, b| a + b));
        assert_eq!(w.to_vec().unwrap(), want, "{dev:?}");
        let short = DeviceVec::<u32>::zeros(&dev, 3).unwrap();
        assert!(matches!(v.scan_by_key(&short, Add), Err(cuprim::Error::LengthMismatch { .. })));
        let mut short_out = DeviceVec::from_slice(&dev, &[5u32, 6, 7]).unwrap();
        assert!(matches!(
            v.scan_inclusive_into(Add, &mut short_out),
            Err(cuprim::Error::LengthMismatch { .. })
        ));
        assert!(matches!(
            v.scan_exclusive_into(Add, &mut short_out),
            Err(cuprim::Error::LengthMismatch { .. })
        ));
        assert_eq!(
            short_out.to_vec().unwrap(),
            vec![5, 6, 7],
            "a refused call leaves the output as it was"
        );
        let mut into_view = DeviceVec::<u32>::zeros(&dev, 7997).unwrap();
        s.scan_inclusive_into(Add, &mut into_view.slice_mut(..).unwrap()).unwrap();
        assert_eq!(
            into_view.to_vec().unwrap(),
            reference_scan(&data[3..8000], 0, false, |a, b| a + b),
            "{dev:?}"
        );
        let nan_keys = DeviceVec::from_slice(&dev, &[f32::NAN, f32::NAN, 1.0, 1.0, -0.0, 0.0]).unwrap();
        let vals = DeviceVec::from_slice(&dev, &[1u32, 1, 1, 1, 1, 1]).unwrap();
        assert_eq!(
            vals.scan_by_key(&nan_keys, Add).unwrap().to_vec().unwrap(),
            vec![1, 1, 1, 2, 1, 2],
            "NaN keys each start a run; -0.0 == 0.0"
        );
        let all = v.copy_if(Gt(0u32)).unwrap();
        assert_eq!(all.len(), data.len());
        let none = v.copy_if(Gt(u32::MAX)).unwrap();
        assert!(none.is_empty());
    }
}

/// Same value: both NaN, or the same bits (so -0.0 != +0.0).
fn same<T: Element>(a: T, b: T) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_f64().to_bits() == b.to_f64().to_bits()
}

/// One operator, one input: reduce, transform_reduce, the last element of the
/// inclusive scan and of scan_by_key over one run, and the in-place scan all
/// give the same value (NaN, -0.0 and empty included).
fn agree<T: Element, Op: Monoid<T> + Commutative + std::fmt::Debug>(dev: &Device, data: &[T], op: Op, what: &str) {
    let v = DeviceVec::from_slice(dev, data).unwrap();
    let ctx = format!("{what} {op:?} n={} on {dev:?}", data.len());
    let r = v.reduce(op).unwrap();
    let tr = v.transform_reduce(cuprim::ops::Identity, op).unwrap();
    assert!(same(r, tr), "transform_reduce {tr:?} vs reduce {r:?}: {ctx}");
    let scan = v.scan_inclusive(op).unwrap().to_vec().unwrap();
    let keys = DeviceVec::<u32>::zeros(dev, data.len()).unwrap();
    let by_key = v.scan_by_key(&keys, op).unwrap().to_vec().unwrap();
    let mut in_place = v.to_device_vec().unwrap();
    in_place.scan_inclusive_in_place(op).unwrap();
    let in_place = in_place.to_vec().unwrap();
    match scan.last() {
        None => assert!(same(r, op.identity()), "empty: the identity: {ctx}"),
        Some(&last) => {
            assert!(same(last, r), "scan last {last:?} vs reduce {r:?}: {ctx}");
            assert!(same(*by_key.last().unwrap(), r), "scan_by_key last vs reduce {r:?}: {ctx}");
            assert!(same(*in_place.last().unwrap(), r), "in-place scan last vs reduce {r:?}: {ctx}");
        }
    }
}

/// Issue 17: one semantics per operator. Min / Max: NaN contagious and
/// -0.0 < +0.0; Add: -0.0 identity; on every primitive and backend.
#[test]
fn nan_signed_zero_and_empty_agree_across_primitives() {
    fn cases<T: Element>(h: impl Fn(f64) -> T) -> Vec<Vec<T>> {
        let (nan, inf) = (f64::NAN, f64::INFINITY);
        let mut out: Vec<Vec<T>> = [
            &[][..],
            &[nan],
            &[nan, nan],
            &[0.0, -0.0],
            &[-0.0, 0.0],
            &[-0.0],
            &[-0.0, -0.0, -0.0],
            &[1.0, nan, -1.0],
            &[inf, -inf],
            &[-inf, 2.0, inf, -0.0],
            &[3.0, 0.0, -0.0, 3.0, -2.0],
        ]
        .iter()
        .map(|c| c.iter().map(|&x| h(x)).collect())
        .collect();
        // Multi-tile inputs of small integers (exact sums), signed zeros,
        // infinities, and a NaN late, early or nowhere.
        let (mut r, _) = common::rng("agree");
        for &n in &[4097usize, 70_001] {
            for nan_at in [None, Some(n - 1), Some(n / 3)] {
                let mut c: Vec<T> = (0..n)
                    .map(|_| match r.gen_range(0..8) {
                        0 => h(0.0),
                        1 => h(-0.0),
                        _ => h(r.gen_range(-2i32..=2) as f64),
                    })
                    .collect();
                if let Some(i) = nan_at {
                    c[i] = h(nan);
                }
                out.push(c);
            }
        }
        out
    }
    for dev in common::devices() {
        for c in cases(|x| x as f32) {
            for_ops(&dev, &c, "f32", true);
        }
        for c in cases(|x| x) {
            for_ops(&dev, &c, "f64", true);
        }
        for c in cases(cuprim::f16::from_f64) {
            // f16 sums of 70k small integers round: Min / Max only there.
            for_ops(&dev, &c, "f16", c.len() < 5000);
        }
    }
    fn for_ops<T: Element + cuprim::ops::Arith>(dev: &Device, c: &[T], what: &str, sums: bool) {
        agree(dev, c, Min, what);
        agree(dev, c, Max, what);
        if sums {
            agree(dev, c, Add, what);
        }
        if c.len() < 64 {
            agree(dev, c, Mul, what);
        }
    }
}

/// Issue 17: a deterministic float scan gives the same bits on every run
/// even where NaNs of both signs meet. Which NaN an addition of two NaNs
/// returns is up to the hardware and the operand order the compiler picks,
/// so a tile's prefix met in a predecessor and the same prefix folded by
/// the look-back used to differ in the NaN's sign (call 15157 of the
/// differential test, f64). Infinities of both signs make NaNs too.
#[test]
fn scans_meeting_signed_nans_are_bit_identical() {
    fn run<T: Element + cuprim::ops::Arith>(dev: &Device, nans: [T; 2], h: impl Fn(f64) -> T, exact: bool, what: &str) {
        let (mut r, seed) = common::rng(&format!("nan-signs-{what}"));
        let n = 300_007;
        let data: Vec<T> = (0..n)
            .map(|_| match r.gen_range(0..5000) {
                0 => nans[0],
                1 => nans[1],
                2 => h(f64::INFINITY),
                3 => h(f64::NEG_INFINITY),
                _ => h(r.gen_range(-2i32..=2) as f64),
            })
            .collect();
        let keys: Vec<u32> = (0..n as u32).map(|i| i / 40_000).collect();
        let ctx = format!("{what} n={n} seed={seed} on {dev:?}");
        let v = DeviceVec::from_slice(dev, &data).unwrap();
        let k = DeviceVec::from_slice(dev, &keys).unwrap();
        let results = || -> [Vec<T>; 3] {
            let mut excl = v.to_device_vec().unwrap();
            excl.scan_exclusive_in_place(Add).unwrap();
            [
                v.scan_inclusive(Add).unwrap().to_vec().unwrap(),
                excl.to_vec().unwrap(),
                v.scan_by_key(&k, Add).unwrap().to_vec().unwrap(),
            ]
        };
        let first = results();
        let bits = |xs: &[T]| xs.iter().map(|x| bytemuck::bytes_of(x).to_vec()).collect::<Vec<Vec<u8>>>();
        let names = ["scan_inclusive", "scan_exclusive_in_place", "scan_by_key"];
        if exact {
            // Sums of small integers are exact: the values (NaN as NaN) are the reference's.
            let add = |a: T, b: T| h(a.to_f64() + b.to_f64());
            let want = [
                reference_scan(&data, h(-0.0), false, add),
                reference_scan(&data, h(-0.0), true, add),
                reference_scan_by_key(&keys, &data, add),
            ];
            for ((got, want), name) in first.iter().zip(&want).zip(names) {
                common::assert_same(got, want, &format!("{name} {ctx}"));
            }
        }
        for run in 1..8 {
            for ((again, first), name) in results().iter().zip(&first).zip(names) {
                let (a, b) = (bits(again), bits(first));
                if let Some(i) = (0..n).find(|&i| a[i] != b[i]) {
                    panic!(
                        "{name} run {run} differs from the first at element {i}: {:?} then {:?}: {ctx}",
                        b[i], a[i]
                    );
                }
            }
        }
    }
    for dev in common::devices() {
        let f32_nans = [f32::from_bits(0xffc0_0000), f32::from_bits(0x7fc0_0000)];
        run(&dev, f32_nans, |x| x as f32, true, "f32");
        let f64_nans = [f64::from_bits(0xfff8_0000_0000_0000), f64::from_bits(0x7ff8_0000_0000_0000)];
        run(&dev, f64_nans, |x| x, true, "f64");
        let f16_nans = [cuprim::f16::from_bits(0xfe00), cuprim::f16::from_bits(0x7e00)];
        run(&dev, f16_nans, cuprim::f16::from_f64, false, "f16");
    }
}

/// scan_by_key picks its tile shape by size (256 x 16 up to 2^22 elements,
/// 128 x 24 above): both shapes, at the boundary and past it, against the
/// reference (u32 keys in random runs with exact f32 sums; u8 keys with u32).
#[test]
fn scan_by_key_both_tile_shapes() {
    for n in common::capped(&[1 << 22, (1 << 22) + 4099]) {
        for dev in common::devices() {
            let (mut r, seed) = rng(n as u64);
            let mut key = 0u32;
            let keys: Vec<u32> = (0..n)
                .map(|_| {
                    if r.gen_range(0..50) == 0 {
                        key += 1;
                    }
                    key
                })
                .collect();
            let data: Vec<f32> = (0..n).map(|_| r.gen_range(-4i32..=4) as f32).collect();
            let ctx = common::ctx(&dev, "scan_by_key both shapes", n, seed);
            let (k, v) = (
                DeviceVec::from_slice(&dev, &keys).unwrap(),
                DeviceVec::from_slice(&dev, &data).unwrap(),
            );
            let want = reference_scan_by_key(&keys, &data, |a: f32, b: f32| a + b);
            common::assert_same(&v.scan_by_key(&k, Add).unwrap().to_vec().unwrap(), &want, &ctx);
            let small: Vec<u8> = keys.iter().map(|&x| (x % 4) as u8).collect();
            let values: Vec<u32> = (0..n).map(|_| r.gen_range(0..1000)).collect();
            let (k, v) = (
                DeviceVec::from_slice(&dev, &small).unwrap(),
                DeviceVec::from_slice(&dev, &values).unwrap(),
            );
            let want = reference_scan_by_key(&small, &values, |a: u32, b: u32| a.wrapping_add(b));
            assert_eq!(v.scan_by_key(&k, Add).unwrap().to_vec().unwrap(), want, "u8 keys {ctx}");
        }
    }
}

/// scan_by_key of 2^23 elements and more runs by chunks (one look-back per
/// chunk of about 2^15 elements; src/algo/scan/chunks.rs): runs of random
/// length up to 2 x 10^5 (many crossing chunk boundaries, some chunks with
/// no head), one run of everything (every chunk fixed up), runs of 1 and of
/// 64, a run boundary on every chunk start, u8 / u32 / u64 keys, exact f32
/// sums and u32 / u64 values, and the non-commutative `Compose` (the carry
/// into a chunk is applied on the left), against the sequential reference.
#[test]
fn scan_by_key_by_chunks() {
    // The chunk length (16 tiles of 128 x 16 for 4-byte pairs, of 256 x 8 for 8-byte).
    const CHUNK: usize = 32_768;
    for n in common::capped(&[1 << 23, (1 << 23) + 4099]) {
        for dev in common::devices() {
            let (mut r, seed) = rng(n as u64 + 23);
            let ctx = common::ctx(&dev, "scan_by_key by chunks", n, seed);
            // u32 keys in random runs of 1 to 2 x 10^5, f32 values (small integers: exact sums).
            let (mut key, mut left) = (0u32, 0usize);
            let keys: Vec<u32> = (0..n)
                .map(|_| {
                    if left == 0 {
                        key += 1;
                        left = r.gen_range(1..200_000);
                    }
                    left -= 1;
                    key
                })
                .collect();
            let data: Vec<f32> = (0..n).map(|_| r.gen_range(-4i32..=4) as f32).collect();
            let (k, v) = (
                DeviceVec::from_slice(&dev, &keys).unwrap(),
                DeviceVec::from_slice(&dev, &data).unwrap(),
            );
            let want = reference_scan_by_key(&keys, &data, |a: f32, b: f32| a + b);
            common::assert_same(
                &v.scan_by_key(&k, Add).unwrap().to_vec().unwrap(),
                &want,
                &format!("{ctx}: long runs"),
            );

            // One run of everything (u8 keys), u32 values: every chunk's outputs fixed up.
            let ones = DeviceVec::from_slice(&dev, &vec![7u8; n]).unwrap();
            let values: Vec<u32> = (0..n).map(|_| r.gen()).collect();
            let dv = DeviceVec::from_slice(&dev, &values).unwrap();
            let want = reference_scan(&values, 0, false, |a: u32, b: u32| a.wrapping_add(b));
            assert_eq!(dv.scan_by_key(&ones, Add).unwrap().to_vec().unwrap(), want, "{ctx}: one run");

            // Runs of 1 (u64 keys, all distinct): the values themselves.
            let distinct = DeviceVec::from_slice(&dev, &(0..n as u64).collect::<Vec<_>>()).unwrap();
            assert_eq!(
                dv.scan_by_key(&distinct, Add).unwrap().to_vec().unwrap(),
                values,
                "{ctx}: runs of 1"
            );

            // Runs of 64 (u64 keys), u64 values: 8-byte pairs, their own chunk length.
            let runs64: Vec<u64> = (0..n as u64).map(|i| i / 64).collect();
            let wide: Vec<u64> = (0..n).map(|_| r.gen()).collect();
            let (k, v) = (
                DeviceVec::from_slice(&dev, &runs64).unwrap(),
                DeviceVec::from_slice(&dev, &wide).unwrap(),
            );
            let want = reference_scan_by_key(&runs64, &wide, |a: u64, b: u64| a.wrapping_add(b));
            assert_eq!(v.scan_by_key(&k, Add).unwrap().to_vec().unwrap(), want, "{ctx}: runs of 64");

            // A run boundary on every chunk start, one just after, one just before; u32 values.
            for (chunk, shift) in [(CHUNK, 0), (CHUNK, 1), (CHUNK, CHUNK - 1)] {
                let aligned: Vec<u32> = (0..n).map(|i| ((i + chunk - shift) / chunk) as u32).collect();
                let k = DeviceVec::from_slice(&dev, &aligned).unwrap();
                let want = reference_scan_by_key(&aligned, &values, |a: u32, b: u32| a.wrapping_add(b));
                assert_eq!(
                    dv.scan_by_key(&k, Add).unwrap().to_vec().unwrap(),
                    want,
                    "{ctx}: heads at chunk starts ({chunk}, {shift})"
                );
            }

            // Non-commutative: affine maps composed in order, runs of 10^5 (u8 keys) crossing chunks.
            let long: Vec<u8> = (0..n).map(|i| (i / 100_000) as u8).collect();
            let maps: Vec<u64> = (0..n)
                .map(|_| r.gen_range(0..8u64) << 33 | 1 << 32 | r.gen_range(0..1000u64))
                .collect();
            let (k, v) = (
                DeviceVec::from_slice(&dev, &long).unwrap(),
                DeviceVec::from_slice(&dev, &maps).unwrap(),
            );
            let want = reference_scan_by_key(&long, &maps, |a, b| common::Compose.apply(a, b));
            assert_eq!(
                v.scan_by_key(&k, common::Compose).unwrap().to_vec().unwrap(),
                want,
                "{ctx}: Compose"
            );
        }
    }
}

/// copy_if, copy_if_into and partition around the select kernel's tile and
/// warp boundaries (4-byte tiles of 3072 = 4 warps x 768, 8-byte 3072 = 8 x
/// 384, 1-byte 4096 = 8 x 512), with every element kept, none, alternate
/// ones, long kept and rejected runs, and random ones; a misaligned view
/// (scalar loads for every tile) and a size of many tiles (deep look-backs).
#[test]
fn copy_if_tile_and_warp_boundaries() {
    fn check<T: Element + Ord + std::fmt::Debug>(dev: &Device, data: &[T], mid: T, bits: impl Fn(T) -> u64, ctx: &str) {
        // copy_if and copy_if_into of the whole input and of a view one element in
        // (misaligned for 16-byte loads).
        check_copy_if_views(dev, data, mid, &[0, 1], bits, ctx);
        let kept: Vec<T> = data.iter().copied().filter(|&x| x > mid).collect();
        let v = DeviceVec::from_slice(dev, data).unwrap();
        let mut p = v.to_device_vec().unwrap();
        let split = p.partition(Gt(mid)).unwrap();
        let mut want = kept.clone();
        want.extend(data.iter().copied().filter(|&x| x <= mid));
        assert_eq!(split, kept.len(), "partition split {ctx}");
        assert_eq!(p.to_vec().unwrap(), want, "partition order {ctx}");
    }
    let (mut r, seed) = rng(7);
    let sizes = [
        2usize,
        383,
        384,
        385,
        511,
        512,
        513,
        767,
        768,
        769,
        3071,
        3072,
        3073,
        4095,
        4096,
        4097,
        5 * 3072 + 2 * 768 + 17,
        (1 << 22) + 7,
        (1 << 22) + 3 * 8192 + 1029,
    ];
    for dev in common::devices() {
        for &n in &sizes {
            for pattern in 0..5 {
                // 0 all kept, 1 none, 2 alternate, 3 runs of 1000, 4 random (kept when > mid).
                let keep = |i: usize, x: bool| match pattern {
                    0 => true,
                    1 => false,
                    2 => i.is_multiple_of(2),
                    3 => (i / 1000).is_multiple_of(2),
                    _ => x,
                };
                if n > 1 << 20 && pattern == 3 && n % 2 == 1 {
                    continue;
                }
                let ctx = format!("{dev:?} n={n} pattern={pattern} seed={seed}");
                let d32: Vec<u32> = (0..n)
                    .map(|i| {
                        let x: u32 = r.gen();
                        if keep(i, x > u32::MAX / 2) {
                            x | 0x8000_0000
                        } else {
                            x & 0x7fff_ffff
                        }
                    })
                    .collect();
                check(&dev, &d32, u32::MAX / 2, |x| x as u64, &format!("u32 {ctx}"));
                if n > 1 << 20 {
                    // An expression input (read twice by the chunks) and its partition into two outputs.
                    let v = DeviceVec::from_slice(&dev, &d32).unwrap();
                    let x = v.map(cuprim::ops::Identity);
                    let xs = d32.clone();
                    let kept: Vec<u32> = xs.iter().copied().filter(|&e| e > u32::MAX / 2).collect();
                    let rest: Vec<u32> = xs.iter().copied().filter(|&e| e <= u32::MAX / 2).collect();
                    assert_eq!(
                        x.copy_if(Gt(u32::MAX / 2)).unwrap().to_vec().unwrap(),
                        kept,
                        "copy_if of a map u32 {ctx}"
                    );
                    let (a, b) = x.partition_copy(Gt(u32::MAX / 2)).unwrap();
                    assert_eq!(
                        (a.to_vec().unwrap(), b.to_vec().unwrap()),
                        (kept, rest),
                        "partition_copy of a map u32 {ctx}"
                    );
                    continue;
                }
                let d64: Vec<i64> = d32
                    .iter()
                    .map(|&x| if x > u32::MAX / 2 { x as i64 } else { -(x as i64) - 1 })
                    .collect();
                check(&dev, &d64, -1, |x| x as u64, &format!("i64 {ctx}"));
                let d8: Vec<u8> = d32.iter().map(|&x| (x >> 24) as u8).collect();
                check(&dev, &d8, u8::MAX / 2, |x| x as u64, &format!("u8 {ctx}"));
            }
        }
    }
}

/// copy_if and copy_if_into of views of `data` starting at each offset, against the reference
/// (compared by `bits`); the outputs poisoned with `mid` first.
fn check_copy_if_views<T: Element + PartialOrd>(dev: &Device, data: &[T], mid: T, offsets: &[usize], bits: impl Fn(T) -> u64, ctx: &str) {
    let v = DeviceVec::from_slice(dev, data).unwrap();
    for &off in offsets.iter().filter(|&&o| o <= data.len()) {
        let ctx = format!("{ctx} n={} offset={off}", data.len());
        let kept: Vec<u64> = data[off..].iter().copied().filter(|&x| x > mid).map(&bits).collect();
        let s = v.slice(off..).unwrap();
        let got: Vec<u64> = s.copy_if(Gt(mid)).unwrap().to_vec().unwrap().into_iter().map(&bits).collect();
        assert!(got == kept, "copy_if {ctx}: {} kept, want {}", got.len(), kept.len());
        let mut out = DeviceVec::from_slice(dev, &vec![mid; data.len() + 1]).unwrap();
        let mut count = DeviceVec::from_slice(dev, &[u64::MAX]).unwrap();
        s.copy_if_into(Gt(mid), &mut out, &mut count).unwrap();
        assert_eq!(count.to_vec().unwrap(), vec![kept.len() as u64], "copy_if_into count {ctx}");
        let out: Vec<u64> = out.to_vec().unwrap().into_iter().map(&bits).collect();
        assert!(out[..kept.len()] == kept[..], "copy_if_into {ctx}");
        assert!(
            out[kept.len()..].iter().all(|&x| x == bits(mid)),
            "copy_if_into wrote past the count {ctx}"
        );
    }
}

/// check_copy_if_views in u8, f16, u32, i64 and f32 of the given lengths, kept by `pattern`
/// (0 all, 1 none, 2 random), from views at offsets that leave every kind of 16-byte
/// misalignment; f32 NaN never kept, -0.0 and 0.0 always (bits compared).
fn copy_if_views_of_each_type(dev: &Device, r: &mut common::TestRng, pattern: u32, lens: [usize; 5], ctx: &str) {
    let mut flags = |n: usize| -> Vec<(bool, u32)> {
        (0..n)
            .map(|_| {
                let x: u32 = r.gen();
                (pattern == 0 || (pattern == 2 && x & 1 == 1), x)
            })
            .collect()
    };
    let f = flags(lens[0]);
    let d8: Vec<u8> = f.iter().map(|&(k, x)| if k { 128 | x as u8 } else { 127 & x as u8 }).collect();
    check_copy_if_views(dev, &d8, 127u8, &[0, 1, 7, 15], |x| x as u64, &format!("u8 {ctx}"));
    // f16 in [1, 2) kept, in (-2, -1] not.
    let f = flags(lens[1]);
    let d16: Vec<f16> = f
        .iter()
        .map(|&(k, x)| f16::from_bits(if k { 0x3c00 } else { 0xbc00 } | (x as u16 & 0x3ff)))
        .collect();
    check_copy_if_views(dev, &d16, f16::ZERO, &[0, 3], |x| x.to_bits() as u64, &format!("f16 {ctx}"));
    let f = flags(lens[2]);
    let d32: Vec<u32> = f.iter().map(|&(k, x)| if k { x | 1 << 31 } else { x >> 1 }).collect();
    check_copy_if_views(dev, &d32, u32::MAX / 2, &[0, 2], |x| x as u64, &format!("u32 {ctx}"));
    let f = flags(lens[3]);
    let d64: Vec<i64> = f.iter().map(|&(k, x)| if k { x as i64 + 1 } else { -(x as i64) }).collect();
    check_copy_if_views(dev, &d64, 0i64, &[0, 1], |x| x as u64, &format!("i64 {ctx}"));
    // f32 kept when > -1.
    let f = flags(lens[4]);
    let specials = [f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY];
    let df: Vec<f32> = f
        .iter()
        .enumerate()
        .map(|(i, &(k, x))| match (i % 97, k) {
            (0, _) => specials[i / 97 % specials.len()],
            (_, true) => (x % 1000) as f32,
            (_, false) => -2.0 - (x % 1000) as f32,
        })
        .collect();
    check_copy_if_views(dev, &df, -1.0f32, &[0, 1], |x| x.to_bits() as u64, &format!("f32 {ctx}"));
}

/// Around the two-pass selections' least input (8 MiB of 4- or 8-byte
/// elements: each tile's count, then each tile compacted from the counts
/// before it; one element less takes the single pass) and inside their band:
/// copy_if_into with its count on the device (outputs poisoned first),
/// partition_copy, copy_if of a view at an odd offset, and unique of keys in
/// short runs and of keys mostly distinct, for u32 and u64, against
/// sequential references.
#[test]
fn selections_around_the_two_pass_threshold() {
    fn check<T: Element + Ord + std::fmt::Debug>(dev: &Device, data: &[T], cut: T, poison: T, ctx: &str) {
        let n = data.len();
        let v = DeviceVec::from_slice(dev, data).unwrap();
        let want: Vec<T> = data.iter().copied().filter(|&x| x < cut).collect();
        let rest: Vec<T> = data.iter().copied().filter(|&x| x >= cut).collect();
        let mut out = DeviceVec::filled(dev, n, poison).unwrap();
        let mut count = DeviceVec::filled(dev, 1, u64::MAX).unwrap();
        v.copy_if_into(Lt(cut), &mut out, &mut count).unwrap();
        let k = count.to_vec().unwrap()[0] as usize;
        assert_eq!(k, want.len(), "copy_if_into count {ctx}");
        assert_eq!(&out.to_vec().unwrap()[..k], &want[..], "copy_if_into {ctx}");
        let (yes, no) = v.partition_copy(Lt(cut)).unwrap();
        assert_eq!(yes.to_vec().unwrap(), want, "partition_copy, kept {ctx}");
        assert_eq!(no.to_vec().unwrap(), rest, "partition_copy, rejected {ctx}");
        let tail: Vec<T> = data[3..].iter().copied().filter(|&x| x < cut).collect();
        assert_eq!(
            v.slice(3..n).unwrap().copy_if(Lt(cut)).unwrap().to_vec().unwrap(),
            tail,
            "copy_if at offset 3 {ctx}"
        );
        let mut heads = data.to_vec();
        heads.dedup();
        assert_eq!(v.unique().unwrap().to_vec().unwrap(), heads, "unique {ctx}");
    }
    for dev in common::devices() {
        for n in common::capped(&[(1 << 21) - 1, 1 << 21, (1 << 22) + 3 * 3072 + 5]) {
            let (mut r, seed) = rng(n as u64 + 307);
            let ctx = format!("{dev:?} n={n} seed={seed}");
            let runs: Vec<u32> = (0..n).map(|i| (i as u32 / 3).wrapping_mul(2_654_435_761) % 1000).collect();
            check(&dev, &runs, 500u32, u32::MAX, &format!("u32 in runs of 3 {ctx}"));
            let words: Vec<u32> = (0..n).map(|_| r.gen()).collect();
            check(&dev, &words, u32::MAX / 3, 0xdead_beef, &format!("u32 {ctx}"));
            let longs: Vec<u64> = (0..n / 2).map(|i| if i % 5 == 0 { 7 } else { r.gen::<u64>() }).collect();
            check(&dev, &longs, u64::MAX / 2, u64::MAX, &format!("u64 {ctx}"));
        }
    }
}

/// copy_if and copy_if_into of plain buffers over 16 MiB (on sm_90 the
/// bulk-copy tiles, 24 KiB each) in 1, 2, 4 and 8-byte elements, from views
/// at offsets that leave every kind of 16-byte misalignment (a head and a
/// tail loaded apart, 32-element steps), with every element kept, none,
/// and random ones; outputs poisoned first.
#[test]
fn copy_if_large_plain_buffers() {
    let (mut r, seed) = rng(23);
    for dev in common::devices() {
        for pattern in 0..3 {
            let lens = [
                (1 << 24) + 4099,
                (1 << 23) + 6001,
                (1 << 22) + 5 * 6144 + 1,
                (1 << 21) + 777,
                (1 << 22) + 1000,
            ];
            copy_if_views_of_each_type(&dev, &mut r, pattern, lens, &format!("{dev:?} pattern={pattern} seed={seed}"));
        }
    }
}

/// The bulk-copy tiles of copy_if forced from one byte (feature
/// `scan-tuning`; small inputs, so the GPU's sanitizers can run it): one
/// element, a partial tile, one tile (6144 4-byte elements), one more, and
/// many tiles, in every element size and misalignment.
#[cfg(feature = "scan-tuning")]
#[test]
fn copy_if_bulk_forced() {
    cuprim::algo::scan::tuning::set_select_bulk_over(Some(0));
    let (mut r, seed) = rng(29);
    for dev in common::devices() {
        for pattern in 0..3 {
            for n in [1usize, 20, 6143, 6144, 6145, 3 * 6144 + 17, 100_003] {
                // One tile holds 24 KiB: 24576 u8, 12288 f16, 6144 u32 / f32, 3072 i64.
                let m = |bytes: usize| if n > 6145 { n } else { n * 4 / bytes };
                let lens = [m(1), m(2), n, m(8), n];
                copy_if_views_of_each_type(&dev, &mut r, pattern, lens, &format!("{dev:?} pattern={pattern} seed={seed}"));
            }
        }
    }
    cuprim::algo::scan::tuning::set_select_bulk_over(None);
}

/// scan_by_key's chunk kernel forced from one element with chunks of one or
/// two tiles (feature `scan-tuning`; small inputs, so the GPU's sanitizers
/// can run it): random runs, one run, runs of 1, against the reference.
#[cfg(feature = "scan-tuning")]
#[test]
fn scan_by_key_chunks_forced() {
    use cuprim::algo::scan::tuning::{self, Chunks};
    for chunk in [1u64, 4096] {
        tuning::set_chunks(Some(Chunks {
            chunk: Some(chunk),
            from: Some(0),
            ..Chunks::default()
        }));
        for n in common::capped(&[1, 33, 2049, 9000, 20_000, 70_001]) {
            for dev in common::devices() {
                let (mut r, seed) = rng(n as u64 + chunk);
                let ctx = common::ctx(&dev, &format!("scan_by_key chunks of {chunk}, forced"), n, seed);
                for max_run in [1usize, 5, 3000, n + 1] {
                    let (mut key, mut left) = (0u32, 0usize);
                    let keys: Vec<u32> = (0..n)
                        .map(|_| {
                            if left == 0 {
                                key += 1;
                                left = r.gen_range(1..=max_run);
                            }
                            left -= 1;
                            key
                        })
                        .collect();
                    let data: Vec<i32> = (0..n).map(|_| r.gen_range(-9..=9)).collect();
                    let (k, v) = (
                        DeviceVec::from_slice(&dev, &keys).unwrap(),
                        DeviceVec::from_slice(&dev, &data).unwrap(),
                    );
                    let want = reference_scan_by_key(&keys, &data, |a: i32, b: i32| a.wrapping_add(b));
                    assert_eq!(
                        v.scan_by_key(&k, Add).unwrap().to_vec().unwrap(),
                        want,
                        "{ctx}: runs up to {max_run}"
                    );
                    // Views a few elements in: keys and values staged together only
                    // where both sit at 16-byte boundaries.
                    for (ok, ov) in [(0usize, 1usize), (1, 1), (3, 7), (4, 8)] {
                        if n <= ov.max(ok) {
                            continue;
                        }
                        let m = n - ov.max(ok);
                        let want = reference_scan_by_key(&keys[ok..ok + m], &data[ov..ov + m], |a: i32, b: i32| a.wrapping_add(b));
                        let (ks, vs) = (k.slice(ok..ok + m).unwrap(), v.slice(ov..ov + m).unwrap());
                        assert_eq!(
                            vs.scan_by_key(&ks, Add).unwrap().to_vec().unwrap(),
                            want,
                            "{ctx}: runs up to {max_run}, keys from {ok}, values from {ov}"
                        );
                    }
                }
            }
        }
    }
    tuning::set_chunks(None);
}

/// Scans of 4-byte elements over more tiles than the device holds at once
/// (several waves of blocks, each tile's prefix met at every depth of the
/// look-back): a non-commutative operator (order kept across tiles), sums of
/// u32 (exact) and f32 (within a tolerance of an f64 reference, the same bits
/// run to run), inclusive, exclusive and in place, on whole buffers and on
/// views at odd offsets (tiles not 16-byte aligned).
#[test]
fn long_scans_of_four_byte_elements() {
    for dev in common::devices() {
        for n in common::capped(&[(1 << 23) + 777, (1 << 22) + 5120 * 3 + 1]) {
            let (mut r, seed) = rng(n as u64 + 101);
            let ctx = format!("{dev:?} n={n} seed={seed}");
            let data: Vec<u32> = (0..n).map(|_| r.gen()).collect();
            let v = DeviceVec::from_slice(&dev, &data).unwrap();
            let want = reference_scan(&data, 1 << 16, false, |a, b| common::Compose16.apply(a, b));
            assert_eq!(v.scan(common::Compose16).unwrap().to_vec().unwrap(), want, "compose {ctx}");
            let want = reference_scan(&data, 1 << 16, true, |a, b| common::Compose16.apply(a, b));
            assert_eq!(
                v.scan_exclusive(common::Compose16).unwrap().to_vec().unwrap(),
                want,
                "compose exclusive {ctx}"
            );

            let small: Vec<u32> = data.iter().map(|&x| x & 0xff).collect();
            let mut w = DeviceVec::from_slice(&dev, &small).unwrap();
            for offset in [1usize, 3] {
                let part = &small[offset..n - 2];
                let want = reference_scan(part, 0, false, |a: u32, b| a.wrapping_add(b));
                let got = w.slice(offset..n - 2).unwrap().scan(Add).unwrap().to_vec().unwrap();
                assert_eq!(got, want, "u32 sum at offset {offset} {ctx}");
            }
            w.scan_exclusive_in_place(Add).unwrap();
            assert_eq!(
                w.to_vec().unwrap(),
                reference_scan(&small, 0, true, |a: u32, b| a.wrapping_add(b)),
                "u32 exclusive in place {ctx}"
            );

            let floats: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0f32..1.0)).collect();
            check_f32_sums_repeat(&dev, &floats, &ctx);
        }
    }
}

/// Around the two-pass scan's least input (8 MiB of 4- or 8-byte elements:
/// each tile's fold, then each tile scanned from the fold of the partials
/// before it; one element less takes the single pass) and inside its band:
/// u32 sums and a non-commutative operator exact, in place and through a view
/// at an odd offset, f32 and f64 sums within a tolerance and the same bits
/// run to run and through an expression of the buffer, -0.0 kept through
/// sums of -0.0.
#[test]
fn scans_around_the_two_pass_threshold() {
    for dev in common::devices() {
        for n in common::capped(&[(1 << 21) - 1, 1 << 21, (1 << 22) + 7 * 7168 + 3]) {
            let (mut r, seed) = rng(n as u64 + 211);
            let ctx = format!("{dev:?} n={n} seed={seed}");
            let words: Vec<u32> = (0..n).map(|_| r.gen()).collect();
            let w = DeviceVec::from_slice(&dev, &words).unwrap();
            let want = reference_scan(&words, 1 << 16, false, |a, b| common::Compose16.apply(a, b));
            assert_eq!(w.scan(common::Compose16).unwrap().to_vec().unwrap(), want, "compose {ctx}");
            let part = &words[3..n - 1];
            let want = reference_scan(part, 1 << 16, true, |a, b| common::Compose16.apply(a, b));
            let got = w
                .slice(3..n - 1)
                .unwrap()
                .scan_exclusive(common::Compose16)
                .unwrap()
                .to_vec()
                .unwrap();
            assert_eq!(got, want, "compose exclusive at offset 3 {ctx}");
            let mut sums = DeviceVec::from_slice(&dev, &words).unwrap();
            sums.scan_exclusive_in_place(Add).unwrap();
            assert_eq!(
                sums.to_vec().unwrap(),
                reference_scan(&words, 0, true, |a: u32, b| a.wrapping_add(b)),
                "u32 exclusive in place {ctx}"
            );

            let floats: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0f32..1.0)).collect();
            check_f32_sums_repeat(&dev, &floats, &ctx);

            let half = n / 2;
            let doubles: Vec<f64> = (0..half).map(|_| r.gen_range(-1.0f64..1.0)).collect();
            check_f64_sums_repeat(&dev, &doubles, &ctx);

            let zeros = DeviceVec::from_slice(&dev, &vec![-0.0f32; n]).unwrap();
            let got = zeros.scan(Add).unwrap().to_vec().unwrap();
            assert!(got.iter().all(|x| x.to_bits() == (-0.0f32).to_bits()), "sums of -0.0 {ctx}");
        }
    }
}

/// Scans of about a thousand tiles (256 x 28 four-byte, 256 x 12 eight-byte
/// elements: more than one wave of blocks, look-backs many windows deep),
/// exactly 1024 tiles, one element more, and a partial last tile: f32 and
/// f64 sums within a tolerance, the same bits run to run and through an
/// expression of the buffer; a non-commutative operator (order kept) and u64
/// sums of a view at an odd offset, exact.
#[test]
fn scans_of_about_a_thousand_tiles() {
    for dev in common::devices() {
        for (four, eight) in [
            (1024 * 7168, 1024 * 3072),
            (1024 * 7168 + 1, 1024 * 3072 + 1),
            (1025 * 7168 - 3, 1025 * 3072 - 3),
        ] {
            let (mut r, seed) = rng(four as u64 + 7);
            let ctx = format!("{dev:?} n={four}/{eight} seed={seed}");
            let floats: Vec<f32> = (0..four).map(|_| r.gen_range(-1.0f32..1.0)).collect();
            check_f32_sums_repeat(&dev, &floats, &ctx);
            let words: Vec<u32> = (0..four).map(|_| r.gen()).collect();
            let w = DeviceVec::from_slice(&dev, &words).unwrap();
            let want = reference_scan(&words, 1 << 16, true, |a, b| common::Compose16.apply(a, b));
            assert_eq!(
                w.scan_exclusive(common::Compose16).unwrap().to_vec().unwrap(),
                want,
                "compose {ctx}"
            );

            let doubles: Vec<f64> = (0..eight).map(|_| r.gen_range(-1.0f64..1.0)).collect();
            check_f64_sums_repeat(&dev, &doubles, &ctx);
            let longs: Vec<u64> = (0..eight).map(|_| r.gen::<u64>() >> 8).collect();
            let l = DeviceVec::from_slice(&dev, &longs).unwrap();
            let part = &longs[5..];
            let want = reference_scan(part, 0, false, |a: u64, b| a.wrapping_add(b));
            assert_eq!(
                l.slice(5..eight).unwrap().scan(Add).unwrap().to_vec().unwrap(),
                want,
                "u64 at offset 5 {ctx}"
            );
        }
    }
}
