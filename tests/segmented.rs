//! Segmented family (segmented_reduce, segmented_sum,
//! segmented_min_element / segmented_max_element) against plain Rust
//! references, on every device.

mod common;

use cuprim::expr::IntoExpr;
use cuprim::ops::{BinaryOp, Monoid};
use cuprim::prelude::*;
use cuprim::IndexElement;
use rand::Rng;

fn rng(tag: &str) -> (common::TestRng, u64) {
    common::rng(&format!("segmented-{tag}"))
}

/// Offset layouts over n elements, each non-decreasing with the last <= n.
fn layouts(r: &mut common::TestRng, n: usize) -> Vec<(String, Vec<u64>)> {
    let n64 = n as u64;
    let mut out = Vec::new();
    for size in [1u64, 31, 33, 1024, 4097] {
        // Fixed sizes from 0, the last segment cut at n.
        let mut o: Vec<u64> = (0..).map(|i| i * size).take_while(|&x| x < n64).collect();
        o.push(n64);
        out.push((format!("size {size}"), o));
    }
    out.push(("one huge".into(), vec![0, n64]));
    // Uncovered elements before the first and after the last offset.
    out.push(("inner".into(), vec![n64 / 7, n64 / 3, n64 / 3, n64 - n64 / 5]));
    out.push(("all empty".into(), vec![n64 / 2; 1000]));
    // Huge segments among enough short and empty ones that the average is
    // short (CUDA: the warp-tile kernel, whose huge segments cross many warp
    // tiles and are closed by one fold of their parts).
    let mut o = vec![0u64, 3u64.min(n64)];
    o.extend(std::iter::repeat_n(3u64.min(n64), 50));
    for x in [n64 / 2 + 5, n64 / 2 + 6, n64 / 2 + 1506, n64.saturating_sub(7)] {
        o.push(x.clamp(*o.last().unwrap(), n64));
    }
    o.extend(std::iter::repeat_n(*o.last().unwrap(), 20));
    o.push(n64);
    out.push(("huge among many".into(), o));
    // A mixture: log-uniform sizes from 1 to about n, many empty segments.
    let mut o = vec![0u64];
    let top = (n.max(2) as f64).ln();
    while *o.last().unwrap() < n64 {
        let last = *o.last().unwrap();
        let next = match r.gen_range(0..4) {
            0 => last,
            1 => {
                for _ in 0..r.gen_range(1..300) {
                    o.push(last);
                }
                last
            }
            _ => (last + (r.gen::<f64>() * top).exp() as u64).min(n64),
        };
        o.push(next);
    }
    out.push(("mixture".into(), o));
    out
}

fn reference<T: Copy>(data: &[T], offsets: &[u64], identity: T, op: impl Fn(T, T) -> T) -> Vec<T> {
    offsets
        .windows(2)
        .map(|w| data[w[0] as usize..w[1] as usize].iter().fold(identity, |a, &x| op(a, x)))
        .collect()
}

/// x comes strictly before y in Min's order (Max's when greatest).
fn before<T: Element>(x: T, y: T, greatest: bool) -> bool {
    match (x.is_nan(), y.is_nan()) {
        (true, _) => !y.is_nan(),
        (false, true) => false,
        _ if x != y => (x < y) != greatest,
        _ => {
            let (sx, sy) = (x.to_f64().is_sign_negative(), y.to_f64().is_sign_negative());
            if greatest {
                sy && !sx
            } else {
                sx && !sy
            }
        }
    }
}

/// (value, index within the segment) per segment; (identity, MAX) when empty.
fn reference_arg<T: Element>(data: &[T], offsets: &[u64], greatest: bool) -> Vec<(T, u64)> {
    let worst = if greatest { T::lowest() } else { T::highest() };
    offsets
        .windows(2)
        .map(|w| {
            let seg = &data[w[0] as usize..w[1] as usize];
            let mut best: Option<(T, u64)> = None;
            for (i, &x) in seg.iter().enumerate() {
                if best.is_none_or(|(b, _)| before(x, b, greatest)) {
                    best = Some((x, i as u64));
                }
            }
            best.unwrap_or((worst, u64::MAX))
        })
        .collect()
}

fn offsets_as<I: IndexElement>(o: &[u64]) -> Vec<I> {
    o.iter().map(|&x| x.cast::<I>()).collect()
}

/// segmented_reduce(op) of `data` over every layout, both offset types,
/// compared with the reference by `same` (exact).
fn check_exact<T: Element, Op: Monoid<T>>(dev: &Device, data: &[T], op: Op, what: &str, seed: u64, r: &mut common::TestRng) {
    let n = data.len();
    let v = DeviceVec::from_slice(dev, data).unwrap();
    for (name, o) in layouts(r, n) {
        let want = reference(data, &o, op.identity(), |a, b| op.apply(a, b));
        let context = common::ctx(dev, &format!("{what} {} {name}", T::NAME), n, seed);
        let got = v
            .segmented_reduce(&DeviceVec::from_slice(dev, &offsets_as::<u32>(&o)).unwrap(), op)
            .unwrap();
        common::assert_same(&got.to_vec().unwrap(), &want, &format!("{context}, u32 offsets"));
        let got = v.segmented_reduce(&DeviceVec::from_slice(dev, &o).unwrap(), op).unwrap();
        common::assert_same(&got.to_vec().unwrap(), &want, &format!("{context}, u64 offsets"));
    }
}

/// Integers (wrapping sums, min, max) are exact whatever the grouping.
#[test]
fn integer_reductions() {
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng(&format!("int-{n}"));
            let a: Vec<i32> = common::random_vec(&mut r, n);
            check_exact(&dev, &a, Add, "sum", seed, &mut r);
            check_exact(&dev, &a, Min, "min", seed, &mut r);
            let b: Vec<u64> = common::random_vec(&mut r, n);
            check_exact(&dev, &b, Add, "sum", seed, &mut r);
            check_exact(&dev, &b, Max, "max", seed, &mut r);
        }
    }
}

/// Float sums of small integers are exact in any order (up to 2^24 in f32),
/// so they are compared bit for bit; min / max with NaN, infinities and
/// signed zeros are exact too.
#[test]
fn float_reductions() {
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng(&format!("float-{n}"));
            let small: Vec<f32> = common::small_vec(&mut r, n);
            check_exact(&dev, &small, Add, "sum", seed, &mut r);
            let small: Vec<f64> = common::small_vec(&mut r, n);
            check_exact(&dev, &small, Add, "sum", seed, &mut r);
            let a: Vec<f32> = common::random_vec(&mut r, n);
            check_exact(&dev, &a, Min, "min", seed, &mut r);
            check_exact(&dev, &a, Max, "max", seed, &mut r);
            let h: Vec<f16> = common::random_vec(&mut r, n);
            check_exact(&dev, &h, Min, "min", seed, &mut r);
            check_exact(&dev, &h, Max, "max", seed, &mut r);
        }
    }
}

/// f16 and f32 sums of general values: within a regrouping tolerance of the
/// sequential sum, and the same bits on every run.
#[test]
fn float_sums_tolerance_and_determinism() {
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng(&format!("tol-{n}"));
            let data: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0f32..1.0)).collect();
            let v = DeviceVec::from_slice(&dev, &data).unwrap();
            for (name, o) in layouts(&mut r, n) {
                let offsets = DeviceVec::from_slice(&dev, &o).unwrap();
                let got = v.segmented_sum(&offsets).unwrap().to_vec().unwrap();
                let again = v.segmented_sum(&offsets).unwrap().to_vec().unwrap();
                let context = common::ctx(&dev, &format!("f32 sum {name}"), n, seed);
                common::assert_same(&again, &got, &format!("run to run: {context}"));
                for (s, w) in o.windows(2).enumerate() {
                    let seg = &data[w[0] as usize..w[1] as usize];
                    let exact: f64 = seg.iter().map(|&x| x as f64).sum();
                    let bound = 1e-6 * (seg.len() as f64).log2().max(1.0) * seg.iter().map(|x| x.abs() as f64).sum::<f64>() + 1e-30;
                    assert!(
                        (got[s] as f64 - exact).abs() <= bound,
                        "segment {s}: {} vs {exact}: {context}",
                        got[s]
                    );
                }
            }
            let half: Vec<f16> = (0..n.min(50_000)).map(|_| f16::from_f32(r.gen_range(-1.0f32..1.0))).collect();
            let v = DeviceVec::from_slice(&dev, &half).unwrap();
            let o: Vec<u32> = (0..=half.len() as u32).step_by(33).chain([half.len() as u32]).collect();
            let got = v
                .segmented_sum(&DeviceVec::from_slice(&dev, &o).unwrap())
                .unwrap()
                .to_vec()
                .unwrap();
            for (s, w) in o.windows(2).enumerate() {
                let seg = &half[w[0] as usize..w[1] as usize];
                let exact: f32 = seg.iter().map(|x| x.to_f32()).sum();
                let bound = 4e-3 * seg.iter().map(|x| x.to_f32().abs()).sum::<f32>() + 1e-3;
                assert!(
                    (got[s].to_f32() - exact).abs() <= bound,
                    "f16 segment {s}: {} vs {exact}: {dev:?} seed={seed}",
                    got[s]
                );
            }
        }
    }
}

#[test]
fn non_commutative_monoid_keeps_order() {
    assert_ne!(
        common::Compose.apply(3 << 32 | 1, 5 << 32 | 7),
        common::Compose.apply(5 << 32 | 7, 3 << 32 | 1)
    );
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng(&format!("compose-{n}"));
            let data: Vec<u64> = (0..n).map(|_| r.gen()).collect();
            check_exact(&dev, &data, common::Compose, "compose", seed, &mut r);
        }
    }
}

/// Segments averaging 2^27 elements or more take the look-back kernel (on
/// CUDA; shorter ones the warp-tile kernel): one segment of 2^27 + 5 u8
/// values, summed (wrapping) and folded by Max, against the reference.
#[test]
fn one_segment_of_the_look_back_kernel() {
    let (mut r, seed) = rng("look-back");
    let n = (1usize << 27) + 5;
    let data: Vec<u8> = (0..n).map(|_| r.gen()).collect();
    let o = vec![0u64, n as u64];
    for dev in common::devices() {
        let context = common::ctx(&dev, "one segment of 2^27 + 5", n, seed);
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        let offsets = DeviceVec::from_slice(&dev, &o).unwrap();
        for (name, op) in [("sum", 0), ("max", 1)] {
            let got = match op {
                0 => v.segmented_sum(&offsets).unwrap().to_vec().unwrap(),
                _ => v.segmented_reduce(&offsets, Max).unwrap().to_vec().unwrap(),
            };
            let want = match op {
                0 => reference(&data, &o, 0u8, |a, b| a.wrapping_add(b)),
                _ => reference(&data, &o, 0u8, |a, b| a.max(b)),
            };
            assert_eq!(got, want, "{name}: {context}");
        }
    }
}

fn check_arg<T: Element, I: IndexElement>(dev: &Device, data: &[T], o: &[u64], context: &str) {
    let v = DeviceVec::from_slice(dev, data).unwrap();
    let offsets = DeviceVec::from_slice(dev, &offsets_as::<I>(o)).unwrap();
    for greatest in [false, true] {
        let got = if greatest {
            v.segmented_max_element(&offsets).unwrap()
        } else {
            v.segmented_min_element(&offsets).unwrap()
        };
        let want = reference_arg(data, o, greatest);
        let values: Vec<T> = want.iter().map(|w| w.0).collect();
        let indices: Vec<I> = want.iter().map(|w| w.1.cast::<I>()).collect();
        let context = format!("{context}, greatest={greatest}, {} offsets", I::NAME);
        common::assert_same(&got.values.to_vec().unwrap(), &values, &context);
        assert_eq!(got.indices.to_vec().unwrap(), indices, "indices: {context}");
        // The values are the Min / Max reduction's.
        let red = if greatest {
            v.segmented_reduce(&offsets, Max).unwrap()
        } else {
            v.segmented_reduce(&offsets, Min).unwrap()
        };
        common::assert_same(&red.to_vec().unwrap(), &values, &format!("as reduce: {context}"));
    }
}

/// Arg-extremes with NaN, infinities, -0.0 and many ties (small values).
#[test]
fn arg_extremes() {
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng(&format!("arg-{n}"));
            let f: Vec<f32> = common::random_vec(&mut r, n);
            let ties: Vec<i32> = common::small_vec(&mut r, n);
            let h: Vec<f16> = common::random_vec(&mut r, n);
            let big: Vec<u64> = common::random_vec(&mut r, n);
            for (name, o) in layouts(&mut r, n) {
                let context = common::ctx(&dev, &format!("arg {name}"), n, seed);
                check_arg::<f32, u32>(&dev, &f, &o, &format!("f32 {context}"));
                check_arg::<f32, u64>(&dev, &f, &o, &format!("f32 {context}"));
                check_arg::<i32, u32>(&dev, &ties, &o, &format!("i32 {context}"));
                check_arg::<f16, u64>(&dev, &h, &o, &format!("f16 {context}"));
                check_arg::<u64, u32>(&dev, &big, &o, &format!("u64 {context}"));
            }
        }
    }
}

#[test]
fn nan_and_signed_zeros() {
    for dev in common::devices() {
        let data = [0.0f32, -0.0, 1.0, f32::NAN, -0.0, 0.0, 2.0, f32::NAN, -1.0];
        let o = [0u64, 2, 4, 6, 9];
        check_arg::<f32, u64>(&dev, &data, &o, &format!("{dev:?}"));
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        let m = v.segmented_min_element(&DeviceVec::from_slice(&dev, &o).unwrap()).unwrap();
        assert_eq!(m.indices.to_vec().unwrap(), vec![1, 1, 0, 1], "{dev:?}");
        let m = v.segmented_max_element(&DeviceVec::from_slice(&dev, &o).unwrap()).unwrap();
        assert_eq!(m.indices.to_vec().unwrap(), vec![0, 1, 1, 1], "{dev:?}");
    }
}

/// A million empty segments beside huge ones (scaled down under
/// CUPRIM_TEST_MAX_N), and more segments than elements.
#[test]
fn many_empty_segments() {
    let n = common::capped(&[(1 << 20) + 3]).first().copied().unwrap_or(4097);
    let empties = if n > 4097 { 1_000_000 } else { 20_000 };
    for dev in common::devices() {
        let (mut r, seed) = rng("empties");
        let data: Vec<u32> = common::random_vec(&mut r, n);
        let half = (n / 2) as u64;
        let mut o = vec![0u64, 5];
        o.extend(std::iter::repeat_n(5u64, empties));
        o.extend([half, half + 1]);
        o.extend(std::iter::repeat_n(half + 1, empties / 3));
        o.push(n as u64);
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        let want = reference(&data, &o, 0u32, |a, b| a.wrapping_add(b));
        let got = v.segmented_sum(&DeviceVec::from_slice(&dev, &o).unwrap()).unwrap();
        let context = common::ctx(&dev, "empties", n, seed);
        assert_eq!(got.to_vec().unwrap(), want, "{context}");
        let m = v
            .segmented_min_element(&DeviceVec::from_slice(&dev, &offsets_as::<u32>(&o)).unwrap())
            .unwrap();
        let idx = m.indices.to_vec().unwrap();
        assert_eq!(idx[2], u32::MAX, "{context}");
        assert_eq!(m.values.to_vec().unwrap()[2], u32::MAX, "{context}");
        // Tiny input, many segments.
        let small = DeviceVec::from_slice(&dev, &[7u32, 8, 9]).unwrap();
        let mut o = vec![0u32; 30_000];
        o.extend([1, 3]);
        let got = small
            .segmented_sum(&DeviceVec::from_slice(&dev, &o).unwrap())
            .unwrap()
            .to_vec()
            .unwrap();
        assert_eq!(got.len(), 30_001);
        assert!(got[..29_999].iter().all(|&x| x == 0), "{dev:?}");
        assert_eq!(got[29_999..], [7, 17], "{dev:?}");
    }
}

#[test]
fn views_and_empty_input() {
    for dev in common::devices() {
        let data: Vec<i64> = (1..=9001).collect();
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        // A slice one element past a vector boundary.
        let s = v.slice(1..8000).unwrap();
        let o: Vec<u64> = vec![0, 1, 1, 2048, 7999];
        let want = reference(&data[1..8000], &o, 0, |a, b| a + b);
        assert_eq!(
            s.segmented_sum(&DeviceVec::from_slice(&dev, &o).unwrap())
                .unwrap()
                .to_vec()
                .unwrap(),
            want,
            "{dev:?}"
        );
        // Offsets through a view too.
        let ov = DeviceVec::from_slice(&dev, &[9u32, 0, 3, 3, 5]).unwrap();
        let got = v.segmented_sum(&ov.slice(1..5).unwrap()).unwrap().to_vec().unwrap();
        assert_eq!(got, vec![6, 0, 9], "{dev:?}");
        // Empty input: every segment empty.
        let e = DeviceVec::<f32>::zeros(&dev, 0).unwrap();
        let got = e
            .segmented_reduce(&DeviceVec::from_slice(&dev, &[0u32, 0, 0]).unwrap(), Min)
            .unwrap();
        assert_eq!(got.to_vec().unwrap(), vec![f32::INFINITY; 2], "{dev:?}");
        let got = e
            .segmented_sum(&DeviceVec::from_slice(&dev, &[0u64; 4]).unwrap())
            .unwrap()
            .to_vec()
            .unwrap();
        assert!(got.iter().all(|x| x.to_bits() == (-0.0f32).to_bits()), "{dev:?}: {got:?}");
        // One offset: zero segments.
        let got = v.segmented_sum(&DeviceVec::from_slice(&dev, &[4u32]).unwrap()).unwrap();
        assert_eq!(got.len(), 0, "{dev:?}");
        let got = v.segmented_max_element(&DeviceVec::from_slice(&dev, &[4u64]).unwrap()).unwrap();
        assert_eq!((got.values.len(), got.indices.len()), (0, 0), "{dev:?}");
    }
}

#[test]
fn bad_offsets_are_errors() {
    for dev in common::devices() {
        let data: Vec<u32> = (0..10_000).collect();
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        let bad: Vec<Vec<u64>> = vec![
            vec![0, 5, 3, 10_000],          // decreasing
            vec![0, 5000, 10_001],          // past n
            vec![0, u64::MAX],              // far past n
            vec![20_000, 30_000],           // all past n
            vec![9000, 100],                // decreasing, one segment
            vec![0, 4000, 4000, 2, 10_000], // decreasing after empties
        ];
        for o in &bad {
            let offsets = DeviceVec::from_slice(&dev, o).unwrap();
            let err = v.segmented_reduce(&offsets, Add).unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{dev:?} {o:?}: {err}");
            assert!(err.to_string().contains("segmented_reduce"), "{err}");
            let err = v.segmented_min_element(&offsets).unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{dev:?} {o:?}: {err}");
            if o.iter().all(|&x| x <= u32::MAX as u64) {
                let o32 = DeviceVec::from_slice(&dev, &offsets_as::<u32>(o)).unwrap();
                assert!(v.segmented_max_element(&o32).is_err(), "{dev:?} {o:?}");
            }
        }
        let none = DeviceVec::<u32>::zeros(&dev, 0).unwrap();
        let err = v.segmented_sum(&none).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{dev:?}: {err}");
        // The input is untouched, and the device still works.
        assert_eq!(v.to_vec().unwrap(), data, "{dev:?}");
        let ok = DeviceVec::from_slice(&dev, &[0u32, 3, 10_000]).unwrap();
        assert_eq!(
            v.segmented_sum(&ok).unwrap().to_vec().unwrap(),
            vec![3, (3..10_000u32).sum::<u32>()],
            "{dev:?}"
        );
        // Bad offsets over segments crossing many warp tiles may leave the warp-tile kernel's
        // counts short (its counters persist between calls): the calls after are still right,
        // the first one checking its offsets and the second not waiting on them.
        let long: Vec<u32> = (0..100_000u32).map(|i| i % 7).collect();
        let lv = DeviceVec::from_slice(&dev, &long).unwrap();
        let bad: [&[u64]; 3] = [
            &[0, 30_000, 20_000, 100_000],
            &[0, 50_000, 100_001],
            &[0, 70_000, 40_000, 90_000, 100_000],
        ];
        for o in bad {
            let offsets = DeviceVec::from_slice(&dev, o).unwrap();
            assert!(lv.segmented_sum(&offsets).is_err(), "{dev:?} {o:?}");
            let good = [0u64, 30_000, 70_001, 100_000];
            let want: Vec<u32> = good.windows(2).map(|w| long[w[0] as usize..w[1] as usize].iter().sum()).collect();
            let g = DeviceVec::from_slice(&dev, &good).unwrap();
            for round in 0..2 {
                assert_eq!(
                    lv.segmented_sum(&g).unwrap().to_vec().unwrap(),
                    want,
                    "{dev:?} after {o:?}, call {round}"
                );
            }
        }
    }
}

/// Offsets a call found valid are not waited on again until their memory is
/// written: every way of writing them (a host upload, a cuprim kernel, a
/// mutable slice, the vector dropped and its memory reused) makes the next
/// call check them again, on every kernel (warp tiles, and the look-back
/// kernel of one huge segment), and through a view too.
#[test]
fn offsets_checked_again_after_any_write() {
    for dev in common::devices() {
        let n = 10_000usize;
        let data: Vec<u32> = (0..n as u32).collect();
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        let good = vec![0u64, 3, 5000, 10_000];
        let bad = vec![0u64, 5000, 3, 10_000];
        let expect = reference(&data, &good, 0, |a, b| a.wrapping_add(b));
        let sum = |o: &DeviceVec<u64>| v.segmented_sum(o).and_then(|r| r.to_vec());
        let is_bad = |r: cuprim::Result<Vec<u32>>, what: &str| {
            assert!(matches!(r, Err(Error::InvalidArgument(_))), "{dev:?} {what}: {r:?}");
        };
        let mut offsets = DeviceVec::from_slice(&dev, &good).unwrap();
        for _ in 0..3 {
            assert_eq!(sum(&offsets).unwrap(), expect, "{dev:?}");
        }
        // Valid for 10 000 elements, not for 9000.
        let short = v.slice(..9000).unwrap();
        assert!(short.segmented_sum(&offsets).is_err(), "{dev:?} a shorter input");
        offsets.copy_from_host(&bad).unwrap();
        is_bad(sum(&offsets), "after an upload");
        offsets.copy_from_host(&good).unwrap();
        assert_eq!(sum(&offsets).unwrap(), expect, "{dev:?}");
        offsets.slice_mut(1..3).unwrap().copy_from_host(&[5000, 3]).unwrap();
        is_bad(sum(&offsets), "after a write to a mutable slice");
        offsets.copy_from_host(&good).unwrap();
        assert_eq!(sum(&offsets).unwrap(), expect, "{dev:?}");
        offsets.fill(20_000).unwrap();
        is_bad(sum(&offsets), "after a fill");
        // A view of the offsets, then the vector written.
        offsets.copy_from_host(&good).unwrap();
        let tail = reference(&data, &good[1..], 0, |a, b| a.wrapping_add(b));
        for _ in 0..2 {
            assert_eq!(
                v.segmented_sum(&offsets.slice(1..).unwrap()).unwrap().to_vec().unwrap(),
                tail,
                "{dev:?}"
            );
        }
        offsets.slice_mut(..).unwrap().copy_from_host(&bad).unwrap();
        let r = v.segmented_sum(&offsets.slice(1..).unwrap()).and_then(|r| r.to_vec());
        is_bad(r, "a view after a write to its vector");
        // The memory dropped and reused (the buffer pool hands it back).
        offsets.copy_from_host(&good).unwrap();
        assert_eq!(sum(&offsets).unwrap(), expect, "{dev:?}");
        drop(offsets);
        let again = DeviceVec::from_slice(&dev, &bad).unwrap();
        is_bad(sum(&again), "a new vector in reused memory");
        // One huge segment takes the look-back kernel: the same there.
        let big: Vec<u8> = vec![1; (1 << 27) + 5];
        let big = DeviceVec::from_slice(&dev, &big).unwrap();
        let mut one = DeviceVec::from_slice(&dev, &[0u64, big.len() as u64]).unwrap();
        for _ in 0..2 {
            let r = big.segmented_reduce(&one, Max).unwrap().to_vec().unwrap();
            assert_eq!(r, vec![1u8], "{dev:?}");
        }
        one.copy_from_host(&[1, 0]).unwrap();
        let r = big.segmented_reduce(&one, Max);
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "{dev:?} the look-back kernel: {r:?}");
    }
}

#[test]
fn mismatched_devices() {
    let Some(gpu) = common::cuda() else {
        common::skip("mismatched_devices", "no CUDA device");
        return;
    };
    let v = DeviceVec::from_slice(&gpu, &[1u32, 2]).unwrap();
    let o = DeviceVec::from_slice(&Device::host(), &[0u32, 2]).unwrap();
    assert!(matches!(v.segmented_sum(&o), Err(Error::DeviceMismatch { .. })));
}

/// `segmented_count` / `segmented_any` / `segmented_all` /
/// `segmented_quantify` / `segmented_find_first` against plain Rust
/// over every layout (segments up to the whole input) and both offset
/// types (u32 flags counted into u64 totals); 1-, 4- and 8-byte data;
/// predicates with parameters of several values (one module, the value
/// passed as data), NaN under `IsNan` and comparisons, empty segments
/// (count 0, any 0, all 1), bad offsets.
#[test]
fn predicate_collectives_per_segment() {
    use cuprim::pred::{Eq, Gt, IsNan, Lt, Predicate};
    fn check<T: Element, P: Predicate<T>>(dev: &Device, data: &[T], pred: P, what: &str, seed: u64, r: &mut common::TestRng) {
        let n = data.len();
        let v = DeviceVec::from_slice(dev, data).unwrap();
        for (name, o) in layouts(r, n) {
            let context = common::ctx(dev, &format!("{what} {} {name}", T::NAME), n, seed);
            let counts: Vec<u64> = o
                .windows(2)
                .map(|w| data[w[0] as usize..w[1] as usize].iter().filter(|&&x| pred.test(x)).count() as u64)
                .collect();
            let any: Vec<u8> = counts.iter().map(|&c| (c > 0) as u8).collect();
            let all: Vec<u8> = o.windows(2).zip(&counts).map(|(w, &c)| (c == w[1] - w[0]) as u8).collect();
            let quantity: Vec<u8> = counts.iter().map(|&c| c.min(2) as u8).collect();
            let first: Vec<u64> = o
                .windows(2)
                .map(|w| {
                    let seg = &data[w[0] as usize..w[1] as usize];
                    seg.iter().position(|&x| pred.test(x)).map_or(u64::MAX, |i| i as u64)
                })
                .collect();
            let o64 = DeviceVec::from_slice(dev, &o).unwrap();
            assert_eq!(
                v.segmented_count(&o64, pred).unwrap().to_vec().unwrap(),
                counts,
                "{context}: count, u64 offsets"
            );
            assert_eq!(v.segmented_any(&o64, pred).unwrap().to_vec().unwrap(), any, "{context}: any");
            assert_eq!(v.segmented_all(&o64, pred).unwrap().to_vec().unwrap(), all, "{context}: all");
            assert_eq!(
                v.segmented_quantify(&o64, pred).unwrap().to_vec().unwrap(),
                quantity,
                "{context}: quantify"
            );
            assert_eq!(
                v.segmented_find_first(&o64, pred).unwrap().to_vec().unwrap(),
                first,
                "{context}: find_first"
            );
            let o32 = DeviceVec::from_slice(dev, &offsets_as::<u32>(&o)).unwrap();
            let got: Vec<u64> = v
                .segmented_count(&o32, pred)
                .unwrap()
                .to_vec()
                .unwrap()
                .into_iter()
                .map(u64::from)
                .collect();
            assert_eq!(got, counts, "{context}: count, u32 offsets");
            assert_eq!(
                v.segmented_all(&o32, pred).unwrap().to_vec().unwrap(),
                all,
                "{context}: all, u32 offsets"
            );
            let first32: Vec<u32> = first.iter().map(|&f| if f == u64::MAX { u32::MAX } else { f as u32 }).collect();
            assert_eq!(
                v.segmented_find_first(&o32, pred).unwrap().to_vec().unwrap(),
                first32,
                "{context}: find_first, u32 offsets"
            );
        }
    }
    let mut sizes = common::capped(&[0, 1, 33, 4097, 100_003]);
    if !cfg!(debug_assertions) {
        sizes.extend(common::capped(&[(1 << 21) + 5]));
    }
    for dev in common::devices() {
        for &n in &sizes {
            let (mut r, seed) = rng("collectives");
            let ints: Vec<i32> = (0..n).map(|_| r.gen_range(-4..4)).collect();
            for threshold in [-5, 0, 2] {
                check(&dev, &ints, Gt(threshold), &format!("Gt({threshold})"), seed, &mut r);
            }
            check(&dev, &ints, Eq(1), "Eq(1)", seed, &mut r);
            let floats: Vec<f32> = (0..n)
                .map(|_| match r.gen_range(0..8) {
                    0 => f32::NAN,
                    1 => -0.0,
                    _ => r.gen_range(-1.0..1.0),
                })
                .collect();
            check(&dev, &floats, IsNan, "IsNan", seed, &mut r);
            check(&dev, &floats, Lt(0.0f32), "Lt(0.0)", seed, &mut r);
            check(&dev, &floats, Lt(0.5f32), "Lt(0.5)", seed, &mut r);
            // 8-byte data under the 4-byte flags (CUDA: the f64 tile shape).
            let doubles: Vec<f64> = floats.iter().map(|&x| x as f64).collect();
            check(&dev, &doubles, Gt(0.25f64), "Gt(0.25)", seed, &mut r);
            let bytes: Vec<u8> = (0..n).map(|_| r.gen_range(0..3)).collect();
            check(&dev, &bytes, Eq(0u8), "Eq(0)", seed, &mut r);
        }
        // Bad offsets: the segmented reduction's error, the input intact.
        let data: Vec<u32> = (0..1000).collect();
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        let bad = DeviceVec::from_slice(&dev, &[0u64, 500, 1001]).unwrap();
        assert!(
            matches!(v.segmented_count(&bad, Gt(3u32)), Err(Error::InvalidArgument(_))),
            "{dev:?}"
        );
        assert!(matches!(v.segmented_all(&bad, Gt(3u32)), Err(Error::InvalidArgument(_))), "{dev:?}");
        assert!(
            matches!(v.segmented_find_first(&bad, Gt(3u32)), Err(Error::InvalidArgument(_))),
            "{dev:?}"
        );
        let none = DeviceVec::<u32>::zeros(&dev, 0).unwrap();
        assert!(
            matches!(v.segmented_any(&none, Gt(3u32)), Err(Error::InvalidArgument(_))),
            "{dev:?}"
        );
        assert_eq!(v.to_vec().unwrap(), data, "{dev:?}");
    }
}

/// `min(x, n)`: fixed-length offsets whose last one is cut at the data's
/// end (a ragged last segment), as a map of a counting expression.
#[derive(Clone, Copy)]
struct AtMost(u64);

impl cuprim::ops::UnaryOp<u64> for AtMost {
    type Output = u64;
    fn apply(&self, x: u64) -> u64 {
        x.min(self.0)
    }
    fn cuda_expr(&self) -> String {
        format!("(x < {0}ull ? x : {0}ull)", self.0)
    }
    fn cuda_expr_is_fixed(&self) -> bool {
        false
    }
}

/// Every segmented call with offsets `expr` and with `collected` (the same
/// offsets in a buffer): the same bits, or the same error.
fn same_as_collected<X: IntoExpr + Copy>(v: &DeviceVec<f32>, expr: X, collected: &DeviceVec<u64>, ctx: &str)
where
    X::Expr: Expr<Item = u64>,
{
    use cuprim::ops::Negate;
    use cuprim::pred::Gt;
    fn bits(r: cuprim::Result<DeviceVec<f32>>) -> Result<Vec<u32>, String> {
        r.map(|v| v.to_vec().unwrap().iter().map(|x| x.to_bits()).collect())
            .map_err(|e| e.to_string())
    }
    fn plain<T: Element>(r: cuprim::Result<DeviceVec<T>>) -> Result<Vec<T>, String> {
        r.map(|v| v.to_vec().unwrap()).map_err(|e| e.to_string())
    }
    fn arg(r: cuprim::Result<cuprim::algo::segmented::SegmentedExtremes<f32, u64>>) -> Result<(Vec<u32>, Vec<u64>), String> {
        r.map(|m| (bits(Ok(m.values)).unwrap(), m.indices.to_vec().unwrap()))
            .map_err(|e| e.to_string())
    }
    let c = collected;
    assert_eq!(bits(v.segmented_sum(expr)), bits(v.segmented_sum(c)), "{ctx}: sum");
    assert_eq!(bits(v.segmented_reduce(expr, Max)), bits(v.segmented_reduce(c, Max)), "{ctx}: max");
    assert_eq!(
        arg(v.segmented_min_element(expr)),
        arg(v.segmented_min_element(c)),
        "{ctx}: min_element"
    );
    assert_eq!(
        arg(v.segmented_max_element(expr)),
        arg(v.segmented_max_element(c)),
        "{ctx}: max_element"
    );
    let p = Gt(0.25f32);
    assert_eq!(plain(v.segmented_count(expr, p)), plain(v.segmented_count(c, p)), "{ctx}: count");
    assert_eq!(plain(v.segmented_any(expr, p)), plain(v.segmented_any(c, p)), "{ctx}: any");
    assert_eq!(plain(v.segmented_all(expr, p)), plain(v.segmented_all(c, p)), "{ctx}: all");
    assert_eq!(
        plain(v.segmented_quantify(expr, p)),
        plain(v.segmented_quantify(c, p)),
        "{ctx}: quantify"
    );
    assert_eq!(
        plain(v.segmented_find_first(expr, p)),
        plain(v.segmented_find_first(c, p)),
        "{ctx}: find_first"
    );
    let x = v.map(Negate);
    assert_eq!(bits(x.segmented_sum(expr)), bits(x.segmented_sum(c)), "{ctx}: expression sum");
    assert_eq!(
        bits(x.segmented_reduce(expr, Min)),
        bits(x.segmented_reduce(c, Min)),
        "{ctx}: expression min"
    );
    assert_eq!(
        arg(x.segmented_max_element(expr)),
        arg(x.segmented_max_element(c)),
        "{ctx}: expression max_element"
    );
}

/// Offsets given as expressions (counting, a map of counting, a map of a
/// buffer, a slice, a permutation) give the same bits as the collected
/// offsets, the same errors for bad offsets, and IndexOutOfBounds for a
/// permutation out of range.
#[test]
fn expression_offsets() {
    use cuprim::ops::Identity;
    for dev in common::devices() {
        for n in common::capped(&[0, 1, 33, 4097, 100_003]) {
            let (mut r, seed) = rng("expression-offsets");
            let data: Vec<f32> = (0..n)
                .map(|_| match r.gen_range(0..16) {
                    0 => f32::NAN,
                    1 => -0.0,
                    _ => r.gen_range(-1.0..1.0),
                })
                .collect();
            let v = DeviceVec::from_slice(&dev, &data).unwrap();
            let n64 = n as u64;
            for len in [1u64, 31, 1024, 4097] {
                let ctx = common::ctx(&dev, &format!("segments of {len}"), n, seed);
                // Whole segments; the ragged tail lies outside every segment.
                let whole = n64 / len;
                let o: Vec<u64> = (0..=whole).map(|i| i * len).collect();
                let collected = DeviceVec::from_slice(&dev, &o).unwrap();
                same_as_collected(&v, counting(&dev, 0u64, len, o.len()), &collected, &format!("{ctx}, counting"));
                let ints: Vec<i64> = data.iter().map(|&x| (x * 1000.0) as i64).collect();
                let vi = DeviceVec::from_slice(&dev, &ints).unwrap();
                assert_eq!(
                    vi.segmented_sum(counting(&dev, 0u32, len as u32, o.len()))
                        .unwrap()
                        .to_vec()
                        .unwrap(),
                    reference(&ints, &o, 0, |a, b| a + b),
                    "{ctx}: u32 counting against the reference"
                );
                // The last segment ragged: min(i * len, n).
                let segs = n64.div_ceil(len) as usize;
                let o: Vec<u64> = (0..=segs as u64).map(|i| (i * len).min(n64)).collect();
                let collected = DeviceVec::from_slice(&dev, &o).unwrap();
                let ragged = counting(&dev, 0u64, len, segs + 1).map(AtMost(n64));
                same_as_collected(&v, ragged, &collected, &format!("{ctx}, ragged"));
                // A map of a buffer, and a slice of a padded buffer.
                same_as_collected(&v, collected.map(Identity), &collected, &format!("{ctx}, map"));
                let mut padded = vec![n64 + 1];
                padded.extend(&o);
                padded.push(0);
                let pv = DeviceVec::from_slice(&dev, &padded).unwrap();
                let s = pv.slice(1..padded.len() - 1).unwrap();
                same_as_collected(&v, &s, &collected, &format!("{ctx}, slice"));
                // One past the end, and decreasing: the buffer form's errors.
                let past = counting(&dev, 0u64, len, whole as usize + 2);
                let past_buf = past.collect().unwrap();
                same_as_collected(&v, past, &past_buf, &format!("{ctx}, past the end"));
                assert!(matches!(v.segmented_sum(past), Err(Error::InvalidArgument(_))), "{ctx}");
                if n > 1 {
                    let down = counting(&dev, n64, u64::MAX, 3);
                    let down_buf = down.collect().unwrap();
                    same_as_collected(&v, down, &down_buf, &format!("{ctx}, decreasing"));
                    assert!(matches!(v.segmented_sum(down), Err(Error::InvalidArgument(_))), "{ctx}");
                }
            }
            // No offsets at all, as an expression.
            let none = counting(&dev, 0u64, 1, 0);
            assert!(matches!(v.segmented_sum(none), Err(Error::InvalidArgument(_))), "{dev:?}");
            // A permutation of the offsets: in range, and one index past the end.
            let o = DeviceVec::from_slice(&dev, &[0u64, n64 / 3, n64]).unwrap();
            let idx = DeviceVec::from_slice(&dev, &[0u32, 0, 1, 2, 2]).unwrap();
            let want = DeviceVec::from_slice(&dev, &[0u64, 0, n64 / 3, n64, n64]).unwrap();
            same_as_collected(&v, o.permute(&idx), &want, &format!("{dev:?} n={n}: permutation"));
            let bad = DeviceVec::from_slice(&dev, &[0u32, 1, 3]).unwrap();
            let oob = |e: Error, what: &str| {
                assert!(matches!(e, Error::IndexOutOfBounds { len: 3, .. }), "{dev:?} n={n} {what}: {e}");
            };
            oob(v.segmented_sum(o.permute(&bad)).unwrap_err(), "sum");
            oob(v.segmented_min_element(o.permute(&bad)).unwrap_err(), "min_element");
            oob(v.segmented_count(o.permute(&bad), cuprim::pred::IsNan).unwrap_err(), "count");
            oob(
                v.segmented_find_first(o.permute(&bad), cuprim::pred::IsNan).unwrap_err(),
                "find_first",
            );
            oob(v.lazy().segmented_sum(o.permute(&bad)).unwrap_err(), "expression sum");
            assert_eq!(v.to_vec().unwrap().len(), n);
        }
    }
}
