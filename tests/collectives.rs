//! vote, quantify, select_one and broadcast against plain references, on
//! every device: awkward sizes (n not a multiple of 32 for vote), views off
//! a vector boundary, predicates matching none / one / two / all, NaN, and
//! broadcast's bounds error.

mod common;

use common::{assert_same, capped, ctx, devices, random_vec, Sample, TestRng};
use cuprim::pred::{Eq, Ge, Gt, IsNan, Le, Lt, Ne, Not, Predicate};
use cuprim::prelude::*;
use rand::Rng;

fn sizes() -> Vec<usize> {
    capped(&[0, 1, 31, 32, 33, 4097, (1 << 20) + 3])
}

fn rng(tag: &str) -> (TestRng, u64) {
    common::rng(&format!("collectives {tag}"))
}

/// The reference bitmask: bit i % 32 of word i / 32 iff pred(x[i]).
fn vote_ref<T: Element>(x: &[T], pred: impl Predicate<T>) -> Vec<u32> {
    let mut words = vec![0u32; x.len().div_ceil(32)];
    for (i, &v) in x.iter().enumerate() {
        if pred.test(v) {
            words[i / 32] |= 1 << (i % 32);
        }
    }
    words
}

fn quantity(count: usize) -> Quantity {
    match count {
        0 => Quantity::None,
        1 => Quantity::One,
        _ => Quantity::Many,
    }
}

/// Every collective on `x` (a view at `offset` of a padded vector) with
/// `pred`, against the references.
fn check<T: Sample, P: Predicate<T>>(dev: &Device, r: &mut TestRng, x: &[T], offset: usize, pred: P, what: &str) {
    let n = x.len();
    let mut full = random_vec::<T>(r, offset);
    full.extend_from_slice(x);
    full.extend(random_vec::<T>(r, 3));
    let v = DeviceVec::from_slice(dev, &full).unwrap();
    let s = v.slice(offset..offset + n).unwrap();
    let what = format!("{what}, offset {offset}");
    assert_eq!(s.vote(pred).unwrap().to_vec().unwrap(), vote_ref(x, pred), "vote: {what}");
    let count = x.iter().filter(|&&e| pred.test(e)).count();
    assert_eq!(s.quantify(pred).unwrap(), quantity(count), "quantify ({count} matches): {what}");
    match s.select_one(pred).unwrap() {
        None => assert_eq!(count, 0, "select_one found nothing: {what}"),
        Some(i) => assert!(i < n && pred.test(x[i]), "select_one gave {i} ({count} matches): {what}"),
    }
}

/// Inputs of zeros with ones at `hits` positions (none, one, two, a few,
/// every element), tested with Eq(1), Ne(0) and Gt(0).
fn placed<T: Sample>()
where
    Eq<T>: Predicate<T>,
{
    for dev in devices() {
        for n in sizes() {
            let (mut r, seed) = rng(&format!("placed {} {n}", T::NAME));
            let mut cases: Vec<Vec<usize>> = vec![vec![]];
            if n > 0 {
                cases.push(vec![n - 1]);
                cases.push(vec![r.gen_range(0..n)]);
                cases.push((0..n).collect());
            }
            if n > 1 {
                cases.push(vec![0, n - 1]);
                let a = r.gen_range(0..n);
                cases.push(vec![a, (a + 1 + r.gen_range(0..n - 1)) % n]);
            }
            if n > 100 {
                cases.push((0..5).map(|_| r.gen_range(0..n)).collect());
            }
            for hits in cases {
                let mut x = vec![T::zero(); n];
                for &i in &hits {
                    x[i] = T::one();
                }
                let offsets: &[usize] = if n > 100_000 { &[0, 1] } else { &[0, 1, 3] };
                for &offset in offsets {
                    let c = ctx(&dev, &format!("<{}> with {} placed matches", T::NAME, hits.len()), n, seed);
                    check(&dev, &mut r, &x, offset, Eq(T::one()), &c);
                    // The large size with one predicate only: the host references dominate the run time.
                    if n < 100_000 {
                        check(&dev, &mut r, &x, offset, Ne(T::zero()), &c);
                        check(&dev, &mut r, &x, offset, Gt(T::zero()), &c);
                    }
                }
            }
        }
    }
}

/// Random inputs (specials included: NaN, infinities, extremes) with a
/// predicate that matches about half.
fn random<T: Sample>() {
    for dev in devices() {
        for n in sizes() {
            let (mut r, seed) = rng(&format!("random {} {n}", T::NAME));
            let x = random_vec::<T>(&mut r, n);
            let c = ctx(&dev, &format!("<{}> random, Gt(0)", T::NAME), n, seed);
            check(&dev, &mut r, &x, 0, Gt(T::zero()), &c);
            check(&dev, &mut r, &x, 5, Gt(T::zero()), &c);
            check(
                &dev,
                &mut r,
                &x,
                0,
                IsNan,
                &ctx(&dev, &format!("<{}> random, IsNan", T::NAME), n, seed),
            );
        }
    }
}

/// broadcast from the first, a middle and the last element of a view, the
/// padding around it untouched; an index past the end is an error that
/// changes nothing.
fn broadcasts<T: Sample>() {
    for dev in devices() {
        for n in sizes() {
            let (mut r, seed) = rng(&format!("broadcast {} {n}", T::NAME));
            let x = random_vec::<T>(&mut r, n);
            let offsets: &[usize] = if n > 100_000 { &[0, 1] } else { &[0, 1, 3, 16] };
            for &offset in offsets {
                let mut full = random_vec::<T>(&mut r, offset);
                full.extend_from_slice(&x);
                full.extend(random_vec::<T>(&mut r, 3));
                let c = ctx(&dev, &format!("broadcast <{}> at offset {offset}", T::NAME), n, seed);
                let mut v = DeviceVec::from_slice(&dev, &full).unwrap();
                let e = v.slice_mut(offset..offset + n).unwrap().broadcast(n);
                assert!(
                    matches!(e, Err(Error::IndexOutOfBounds { op: "broadcast", len }) if len == n),
                    "{c}: {e:?}"
                );
                assert_same(&v.to_vec().unwrap(), &full, &format!("an error leaves the data: {c}"));
                if n == 0 {
                    continue;
                }
                for i in [0, n / 2, n - 1, r.gen_range(0..n)] {
                    let mut v = DeviceVec::from_slice(&dev, &full).unwrap();
                    v.slice_mut(offset..offset + n).unwrap().broadcast(i).unwrap();
                    let mut want = full.clone();
                    want[offset..offset + n].fill(x[i]);
                    assert_same(&v.to_vec().unwrap(), &want, &format!("from {i}: {c}"));
                }
            }
        }
    }
}

macro_rules! for_types {
    ($($m:ident: $t:ty),*) => {$(
        mod $m {
            use super::*;
            #[test]
            fn placed_matches() {
                placed::<$t>();
            }
            #[test]
            fn random_inputs() {
                random::<$t>();
            }
            #[test]
            fn broadcast() {
                broadcasts::<$t>();
            }
        }
    )*};
}
for_types!(u8_: u8, i32_: i32, u64_: u64, f16_: f16, f32_: f32, f64_: f64);

/// Spot values: vote's word layout and zero padding, NaN matching nothing
/// under Eq, quantify at the second match, and the empty input.
#[test]
fn semantics() {
    for dev in devices() {
        let v = DeviceVec::from_slice(&dev, &[5u32, 1, 7, 0, 9]).unwrap();
        assert_eq!(v.vote(Gt(4)).unwrap().to_vec().unwrap(), vec![0b10101], "{dev:?}");
        let all = DeviceVec::filled(&dev, 33, 1i32).unwrap();
        assert_eq!(all.vote(Eq(1)).unwrap().to_vec().unwrap(), vec![u32::MAX, 1], "{dev:?}");
        assert_eq!(all.quantify(Eq(1)).unwrap(), Quantity::Many);
        assert_eq!(all.quantify(Eq(2)).unwrap(), Quantity::None);
        let f = DeviceVec::from_slice(&dev, &[f32::NAN, 1.0, f32::NAN]).unwrap();
        assert_eq!(f.vote(Eq(f32::NAN)).unwrap().to_vec().unwrap(), vec![0], "NaN equals nothing");
        assert_eq!(f.vote(IsNan).unwrap().to_vec().unwrap(), vec![0b101]);
        assert_eq!(f.quantify(IsNan).unwrap(), Quantity::Many);
        assert_eq!(f.quantify(Eq(1.0)).unwrap(), Quantity::One);
        assert_eq!(f.select_one(Eq(1.0)).unwrap(), Some(1));
        assert_eq!(f.select_one(Eq(f32::NAN)).unwrap(), None);
        let z = DeviceVec::from_slice(&dev, &[-0.0f64, 0.0]).unwrap();
        assert_eq!(z.quantify(Eq(0.0)).unwrap(), Quantity::Many, "-0.0 == 0.0");
        let e = DeviceVec::<u8>::zeros(&dev, 0).unwrap();
        assert!(e.vote(Eq(0)).unwrap().is_empty());
        assert_eq!(e.quantify(Eq(0)).unwrap(), Quantity::None);
        assert_eq!(e.select_one(Eq(0)).unwrap(), None);
        let mut e = DeviceVec::<u8>::zeros(&dev, 0).unwrap();
        assert!(matches!(e.broadcast(0), Err(Error::IndexOutOfBounds { .. })));
        let mut h = DeviceVec::from_slice(&dev, &[f16::ONE, f16::NAN]).unwrap();
        h.broadcast(1).unwrap();
        assert!(h.to_vec().unwrap().iter().all(|x| x.is_nan()));
        assert!(Quantity::None < Quantity::One && Quantity::One < Quantity::Many);
    }
}

/// The counters the early-exit kernels share with find_first are left at
/// rest: calls of every kind in a row, answers unchanged.
#[test]
fn calls_in_a_row() {
    for dev in devices() {
        let mut x = vec![0u32; 100_003];
        x[77_777] = 1;
        x[99_999] = 1;
        let v = DeviceVec::from_slice(&dev, &x).unwrap();
        for _ in 0..3 {
            assert_eq!(v.quantify(Eq(1)).unwrap(), Quantity::Many, "{dev:?}");
            assert_eq!(v.find_first(Eq(1)).unwrap(), Some(77_777));
            let one = v.select_one(Eq(1)).unwrap();
            assert!(one == Some(77_777) || one == Some(99_999), "{one:?}");
            assert_eq!(v.quantify(Gt(1)).unwrap(), Quantity::None);
            assert_eq!(v.select_one(Gt(1)).unwrap(), None);
            assert_eq!(v.count(Eq(1)).unwrap(), 2);
            assert_eq!(v.slice(0..99_999).unwrap().quantify(Eq(1)).unwrap(), Quantity::One);
        }
    }
}

/// Every predicate collective of an expression against the buffer form of
/// its collected values: find_first, any, all, vote and quantify equal;
/// select_one some matching index, `None` iff there is none.
fn check_expr<E: Expr, P: Predicate<E::Item>>(e: &E, pred: P, what: &str)
where
    E::Item: Element,
{
    let x = e.collect().unwrap();
    let host = x.to_vec().unwrap();
    assert_eq!(e.find_first(pred).unwrap(), x.find_first(pred).unwrap(), "find_first: {what}");
    assert_eq!(e.any(pred).unwrap(), x.any(pred).unwrap(), "any: {what}");
    assert_eq!(e.all(pred).unwrap(), x.all(pred).unwrap(), "all: {what}");
    assert_eq!(e.all(Not(pred)).unwrap(), x.all(Not(pred)).unwrap(), "all of not: {what}");
    assert_eq!(e.vote(pred).unwrap().to_vec().unwrap(), vote_ref(&host, pred), "vote: {what}");
    let count = host.iter().filter(|&&v| pred.test(v)).count();
    assert_eq!(e.quantify(pred).unwrap(), quantity(count), "quantify ({count} matches): {what}");
    assert_eq!(
        x.quantify(pred).unwrap(),
        quantity(count),
        "buffer quantify ({count} matches): {what}"
    );
    match e.select_one(pred).unwrap() {
        None => assert_eq!(count, 0, "select_one found nothing: {what}"),
        Some(i) => assert!(
            i < host.len() && pred.test(host[i]),
            "select_one gave {i} ({count} matches): {what}"
        ),
    }
}

/// The collectives of maps, permutations, counting, zip-maps and slices of
/// them (on and off a vector boundary, buffers that disagree on it), with
/// no, one and many matches.
#[test]
fn expressions() {
    use cuprim::ops::{Mul, Negate};
    for dev in devices() {
        for n in capped(&[0, 1, 31, 32, 33, 1000, 100_003]) {
            let (mut r, seed) = rng(&format!("expressions {n}"));
            let mut cases: Vec<Vec<usize>> = vec![vec![]];
            if n > 0 {
                cases.push(vec![n - 1]);
                cases.push(vec![r.gen_range(0..n)]);
                cases.push((0..n).filter(|_| r.gen_bool(0.3)).collect());
            }
            for hits in cases {
                let c = ctx(&dev, &format!("{} placed matches", hits.len()), n, seed);
                let mut x = vec![0i32; n + 5];
                for &i in &hits {
                    x[i + 1] = 1;
                }
                let pad = DeviceVec::from_slice(&dev, &x).unwrap();
                let v = pad.slice(1..n + 1).unwrap();
                let ones = DeviceVec::filled(&dev, n + 5, 1i32).unwrap();
                let mut order: Vec<u32> = (0..n as u32).collect();
                for i in (1..n).rev() {
                    order.swap(i, r.gen_range(0..=i));
                }
                let idx = DeviceVec::from_slice(&dev, &order).unwrap();
                check_expr(&v.map(Negate), Eq(-1), &format!("map, off the boundary: {c}"));
                check_expr(&pad.slice(4..n + 4).unwrap().map(Negate), Eq(-1), &format!("map of a slice: {c}"));
                check_expr(&v.permute(&idx), Eq(1), &format!("permute: {c}"));
                check_expr(&v.permute(&idx).map(Negate), Ne(0), &format!("map of a permute: {c}"));
                check_expr(
                    &zip(&v, &ones.slice(0..n).unwrap()).map(Mul),
                    Eq(1),
                    &format!("zip of buffers off each other's boundary: {c}"),
                );
                check_expr(
                    &zip(&v, &ones.slice(1..n + 1).unwrap()).map(Mul),
                    Gt(0),
                    &format!("zip(..).map(Mul): {c}"),
                );
                if n > 2 {
                    let m = v.map(Negate);
                    check_expr(&m.slice(1..n - 1).unwrap(), Eq(-1), &format!("slice of a map: {c}"));
                }
            }
            let c = ctx(&dev, "counting", n, seed);
            let k = counting(&dev, 0i64, 1, n);
            check_expr(&k, Ge(n as i64), &format!("none: {c}"));
            check_expr(&k, Eq(n as i64 / 2), &format!("one: {c}"));
            check_expr(&k, Ge(n as i64 / 3), &format!("many: {c}"));
            check_expr(&k.map(cuprim::ops::Square), Lt(9), &format!("map of counting: {c}"));
            if n > 3 {
                check_expr(&k.slice(3..).unwrap(), Lt(5), &format!("slice of counting: {c}"));
            }
        }
    }
}

/// A permutation with an index out of range fails every collective with
/// IndexOutOfBounds (even where a match comes before it), inputs intact.
#[test]
fn expression_bounds() {
    use cuprim::ops::Negate;
    for dev in devices() {
        for n in capped(&[1, 33, 100_003]) {
            let (mut r, seed) = rng(&format!("expression bounds {n}"));
            let x: Vec<i32> = (0..n).map(|_| r.gen_range(0..3)).collect();
            let mut order: Vec<u32> = (0..n as u32).map(|_| r.gen_range(0..n as u32)).collect();
            order[n - 1] = n as u32;
            let v = DeviceVec::from_slice(&dev, &x).unwrap();
            let idx = DeviceVec::from_slice(&dev, &order).unwrap();
            let c = ctx(&dev, "index out of range", n, seed);
            let e = v.permute(&idx).map(Negate);
            let oob = |got: Result<(), Error>, op: &str| {
                assert!(
                    matches!(got, Err(Error::IndexOutOfBounds { op: "permute", len }) if len == n),
                    "{op}: {c}: {got:?}"
                );
            };
            oob(e.find_first(Le(0)).map(|_| ()), "find_first");
            oob(e.any(Le(0)).map(|_| ()), "any");
            oob(e.all(Gt(0)).map(|_| ()), "all");
            oob(e.vote(Le(0)).map(|_| ()), "vote");
            oob(e.quantify(Le(0)).map(|_| ()), "quantify");
            oob(e.select_one(Le(0)).map(|_| ()), "select_one");
            assert_eq!(v.to_vec().unwrap(), x, "the input is intact: {c}");
            assert_eq!(idx.to_vec().unwrap(), order, "the indices are intact: {c}");
            // The device's state is clean: a good call after the errors.
            assert_eq!(v.lazy().find_first(Ge(0)).unwrap(), Some(0), "{c}");
        }
    }
}
