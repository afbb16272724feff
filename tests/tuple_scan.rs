//! Scans of tuple expressions written unzipped (`scan_unzip`,
//! `exclusive_scan_unzip`, `scan_unzip3`, `exclusive_scan_unzip3`) on every
//! device, against separate scans of the fields and plain Rust:
//! - integer fields, min / max and sums that are exact in their type
//!   (integer-valued f32, f32 values summed in f64) bit for bit;
//! - sums of real-valued f32 bit for bit on the host backend (both fold
//!   sequentially) and on CUDA within (log2(n) + 40 + sqrt(i)) ulps of the
//!   prefix's sum of magnitudes (tests/scan.rs's bound: a tuple of 8 bytes
//!   takes 3072-element tiles where an f32 scan takes 7168, so the grouping
//!   differs), the same bits run to run in deterministic mode.

mod common;

use common::{MinMax, Sum3};

use cuprim::ops::{Associative, BinaryOp, Cast, Max, Min, Monoid};
use cuprim::prelude::*;
use rand::Rng;

fn rng(tag: &str) -> (common::TestRng, u64) {
    common::rng(&format!("tuple-scan-{tag}"))
}

/// Empty, one, small, a few tiles plus one (24-byte tuples: 1024-element
/// tiles; 8-byte: 3072), past 2^16 and past 2^20 elements.
fn sizes() -> Vec<usize> {
    common::capped(&[0, 1, 1000, 3 * 1024 + 1, 3 * 3072 + 1, 100_003, (1 << 20) + 3])
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn bits64(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// (count, sum): a running count beside a running f32 sum (identity -0.0,
/// as `Add`'s, so exclusive scans start with the same bits).
#[derive(Clone, Copy, Debug)]
struct CountSum;
impl BinaryOp<(u32, f32)> for CountSum {
    fn apply(&self, a: (u32, f32), b: (u32, f32)) -> (u32, f32) {
        (a.0.wrapping_add(b.0), a.1 + b.1)
    }
    fn cuda_expr(&self) -> String {
        "cuprim_t2<unsigned int, float>{a.a0 + b.a0, a.a1 + b.a1}".into()
    }
}
impl Associative for CountSum {}
impl Monoid<(u32, f32)> for CountSum {
    fn identity(&self) -> (u32, f32) {
        (0, -0.0)
    }
}

/// Sequential inclusive (or exclusive, `identity` first) scan.
fn reference<T: Copy>(x: &[T], identity: T, exclusive: bool, op: impl Fn(T, T) -> T) -> Vec<T> {
    let mut run = identity;
    x.iter()
        .map(|&v| {
            let next = op(run, v);
            let out = if exclusive { run } else { next };
            run = next;
            out
        })
        .collect()
}

/// Each element of `got` within (log2(n) + 40 + sqrt(i)) f32 ulps of the
/// prefix's sum of magnitudes from the exact (f64) running sum of `x`
/// (exclusive: of the elements before it).
fn assert_near_sums(got: &[f32], x: &[f32], exclusive: bool, ctx: &str) {
    let log_n = (x.len().max(2) as f64).log2();
    let (mut exact, mut abs) = (0f64, 0f64);
    for (i, (&g, &v)) in got.iter().zip(x).enumerate() {
        if !exclusive {
            exact += v as f64;
            abs += (v as f64).abs();
        }
        let tol = (log_n + 40.0 + (i as f64).sqrt()) * f32::EPSILON as f64 * abs;
        assert!(
            (g as f64 - exact).abs() <= tol,
            "{ctx}: element {i}: {g} vs {exact} (tolerance {tol})"
        );
        if exclusive {
            exact += v as f64;
            abs += (v as f64).abs();
        }
    }
}

#[test]
fn count_sum_pairs_equal_separate_scans_of_the_fields() {
    for dev in common::devices() {
        for n in sizes() {
            let (mut r, seed) = rng("count-sum");
            let x: Vec<f32> = (0..n).map(|_| r.gen_range(-2.0..2.0)).collect();
            // Integer-valued: every partial sum is exact in f32 (|sum| < 2^24).
            let xi: Vec<f32> = (0..n).map(|_| r.gen_range(-8..=8) as f32).collect();
            let (dx, di) = (DeviceVec::from_slice(&dev, &x).unwrap(), DeviceVec::from_slice(&dev, &xi).unwrap());
            let ctx = common::ctx(&dev, "count-sum", n, seed);
            let counts: Vec<u32> = (1..=n as u32).collect();
            let counts_ex: Vec<u32> = (0..n as u32).collect();
            for deterministic in [false, true] {
                dev.set_deterministic(deterministic);
                let ctx = format!("{ctx} det={deterministic}");
                for exclusive in [false, true] {
                    let ctx = format!("{ctx} exclusive={exclusive}");
                    let scan = |e: &DeviceVec<f32>| {
                        let t = zip(constant(&dev, 1u32, n), e);
                        if exclusive {
                            t.exclusive_scan_unzip(CountSum).unwrap()
                        } else {
                            t.scan_unzip(CountSum).unwrap()
                        }
                    };
                    let separate = |e: &DeviceVec<f32>| {
                        if exclusive {
                            e.scan_exclusive(Add).unwrap().to_vec().unwrap()
                        } else {
                            e.scan(Add).unwrap().to_vec().unwrap()
                        }
                    };
                    let want_counts = if exclusive { &counts_ex } else { &counts };

                    let (c, s) = scan(&di);
                    assert_eq!((c.len(), s.len()), (n, n), "{ctx}: lengths");
                    assert_eq!(&c.to_vec().unwrap(), want_counts, "{ctx}: counts");
                    let s = s.to_vec().unwrap();
                    assert_eq!(bits(&s), bits(&separate(&di)), "{ctx}: integer-valued sums");
                    let want = reference(&xi, -0.0f32, exclusive, |a, b| a + b);
                    assert_eq!(bits(&s), bits(&want), "{ctx}: integer-valued sums, sequential");

                    let (c, s) = scan(&dx);
                    assert_eq!(&c.to_vec().unwrap(), want_counts, "{ctx}: counts");
                    let s = s.to_vec().unwrap();
                    if dev.is_cuda() {
                        assert_near_sums(&s, &x, exclusive, &ctx);
                    } else {
                        assert_eq!(bits(&s), bits(&separate(&dx)), "{ctx}: sums as the separate scan");
                    }
                    if deterministic {
                        let again = scan(&dx).1.to_vec().unwrap();
                        assert_eq!(bits(&again), bits(&s), "{ctx}: run to run");
                    }
                }
            }
            dev.set_deterministic(true);
            assert_eq!(bits(&dx.to_vec().unwrap()), bits(&x), "{ctx}: input intact");
        }
    }
}

#[test]
fn running_min_max_equals_min_and_max_scans() {
    for dev in common::devices() {
        for n in sizes() {
            let (mut r, seed) = rng("min-max");
            let x: Vec<f32> = (0..n).map(|_| r.gen_range(-1000.0..1000.0)).collect();
            let y: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
            let (dx, dy) = (DeviceVec::from_slice(&dev, &x).unwrap(), DeviceVec::from_slice(&dev, &y).unwrap());
            let ctx = common::ctx(&dev, "min-max", n, seed);
            // min of x beside max of y: the fields come from different buffers.
            let (lo, hi) = zip(&dx, &dy).scan_unzip(MinMax).unwrap();
            let (lo, hi) = (lo.to_vec().unwrap(), hi.to_vec().unwrap());
            assert_eq!(bits(&lo), bits(&dx.scan(Min).unwrap().to_vec().unwrap()), "{ctx}: min");
            assert_eq!(bits(&hi), bits(&dy.scan(Max).unwrap().to_vec().unwrap()), "{ctx}: max");
            assert_eq!(
                bits(&lo),
                bits(&reference(&x, f32::INFINITY, false, f32::min)),
                "{ctx}: min, sequential"
            );
            assert_eq!(
                bits(&hi),
                bits(&reference(&y, f32::NEG_INFINITY, false, f32::max)),
                "{ctx}: max, sequential"
            );

            let (lo, hi) = zip(&dx, &dy).exclusive_scan_unzip(MinMax).unwrap();
            let (lo, hi) = (lo.to_vec().unwrap(), hi.to_vec().unwrap());
            assert_eq!(
                bits(&lo),
                bits(&dx.scan_exclusive(Min).unwrap().to_vec().unwrap()),
                "{ctx}: exclusive min"
            );
            assert_eq!(
                bits(&hi),
                bits(&dy.scan_exclusive(Max).unwrap().to_vec().unwrap()),
                "{ctx}: exclusive max"
            );
            if n > 0 {
                assert_eq!((lo[0], hi[0]), (f32::INFINITY, f32::NEG_INFINITY), "{ctx}: identity first");
            }

            // Slices: both misaligned alike, and one misaligned against an
            // aligned buffer (element-at-a-time loads either way).
            if n > 3 {
                let (sx, sy) = (dx.slice(3..).unwrap(), dy.slice(3..).unwrap());
                let (lo, hi) = zip(&sx, &sy).scan_unzip(MinMax).unwrap();
                assert_eq!(
                    bits(&lo.to_vec().unwrap()),
                    bits(&reference(&x[3..], f32::INFINITY, false, f32::min)),
                    "{ctx}: slice min"
                );
                assert_eq!(
                    bits(&hi.to_vec().unwrap()),
                    bits(&reference(&y[3..], f32::NEG_INFINITY, false, f32::max)),
                    "{ctx}: slice max"
                );
                let (tail, head) = (dx.slice(1..).unwrap(), dy.slice(..n - 1).unwrap());
                let (lo, hi) = zip(&tail, &head).exclusive_scan_unzip(MinMax).unwrap();
                assert_eq!(
                    bits(&lo.to_vec().unwrap()),
                    bits(&reference(&x[1..], f32::INFINITY, true, f32::min)),
                    "{ctx}: mixed min"
                );
                assert_eq!(
                    bits(&hi.to_vec().unwrap()),
                    bits(&reference(&y[..n - 1], f32::NEG_INFINITY, true, f32::max)),
                    "{ctx}: mixed max"
                );
            }
            assert_eq!(bits(&dx.to_vec().unwrap()), bits(&x), "{ctx}: x intact");
            assert_eq!(bits(&dy.to_vec().unwrap()), bits(&y), "{ctx}: y intact");
        }
    }
}

#[test]
fn triple_sums_are_exact() {
    for dev in common::devices() {
        for n in sizes() {
            let (mut r, seed) = rng("triple");
            // Multiples of 2^-20 below 2 in magnitude: summed in f64 they need at most
            // 22 + 20 bits, so every grouping gives the same, exact, bits.
            let x: Vec<f32> = (0..n).map(|_| r.gen_range(-2_000_000i32..2_000_000) as f32 / 1_048_576.0).collect();
            let k: Vec<i64> = (0..n).map(|_| r.gen_range(-1_000_000_000_000i64..1_000_000_000_000)).collect();
            let (dx, dk) = (DeviceVec::from_slice(&dev, &x).unwrap(), DeviceVec::from_slice(&dev, &k).unwrap());
            let ctx = common::ctx(&dev, "triple", n, seed);
            let xd: Vec<f64> = x.iter().map(|&v| v as f64).collect();
            for deterministic in [false, true] {
                dev.set_deterministic(deterministic);
                for exclusive in [false, true] {
                    let ctx = format!("{ctx} det={deterministic} exclusive={exclusive}");
                    let t = zip3(constant(&dev, 1u32, n), dx.map(Cast::<f64>::new()), &dk);
                    let (a, b, c) = if exclusive {
                        t.exclusive_scan_unzip3(Sum3).unwrap()
                    } else {
                        t.scan_unzip3(Sum3).unwrap()
                    };
                    let ones = vec![1u32; n];
                    assert_eq!(a.to_vec().unwrap(), reference(&ones, 0, exclusive, |p, q| p + q), "{ctx}: counts");
                    let want = reference(&xd, 0.0, exclusive, |p, q| p + q);
                    assert_eq!(bits64(&b.to_vec().unwrap()), bits64(&want), "{ctx}: f64 sums");
                    let want = reference(&k, 0, exclusive, i64::wrapping_add);
                    assert_eq!(c.to_vec().unwrap(), want, "{ctx}: i64 sums");
                    let separate = if exclusive { dk.scan_exclusive(Add) } else { dk.scan(Add) };
                    assert_eq!(c.to_vec().unwrap(), separate.unwrap().to_vec().unwrap(), "{ctx}: as the i64 scan");
                }
            }
            dev.set_deterministic(true);
            // A misaligned slice of a buffer field.
            if n > 5 {
                let (sx, sk) = (dx.slice(5..).unwrap(), dk.slice(..n - 5).unwrap());
                let t = zip3(constant(&dev, 1u32, n - 5), sx.map(Cast::<f64>::new()), &sk);
                let (_, b, c) = t.scan_unzip3(Sum3).unwrap();
                assert_eq!(
                    bits64(&b.to_vec().unwrap()),
                    bits64(&reference(&xd[5..], 0.0, false, |p, q| p + q)),
                    "{ctx}: slice f64"
                );
                assert_eq!(
                    c.to_vec().unwrap(),
                    reference(&k[..n - 5], 0, false, i64::wrapping_add),
                    "{ctx}: slice i64"
                );
            }
        }
    }
}

#[test]
fn bad_tuple_inputs_fail_without_writing() {
    for dev in common::devices() {
        let ctx = format!("{dev:?}");
        let (a, b) = (
            DeviceVec::from_slice(&dev, &[1.0f32, 2.0, 3.0]).unwrap(),
            DeviceVec::from_slice(&dev, &[1.0f32, 2.0]).unwrap(),
        );
        assert!(
            matches!(zip(&a, &b).scan_unzip(MinMax), Err(Error::LengthMismatch { .. })),
            "{ctx}: zip of unequal lengths"
        );
        let idx = DeviceVec::from_slice(&dev, &[0u32, 7, 1]).unwrap();
        match zip(a.permute(&idx), &a).exclusive_scan_unzip(MinMax) {
            Err(Error::IndexOutOfBounds { len, .. }) => assert_eq!(len, 3, "{ctx}"),
            other => panic!("{ctx}: expected IndexOutOfBounds, got {other:?}"),
        }
        let t = zip3(constant(&dev, 1u32, 3), counting(&dev, 0.0f64, 1.0, 3), counting(&dev, 0i64, 1, 4));
        assert!(
            matches!(t.scan_unzip3(Sum3), Err(Error::LengthMismatch { .. })),
            "{ctx}: zip3 of unequal lengths"
        );
        assert_eq!(a.to_vec().unwrap(), vec![1.0, 2.0, 3.0], "{ctx}: input intact");
    }
}
