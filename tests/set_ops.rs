//! The set operations (set_union, set_intersection, set_difference,
//! set_symmetric_difference and their `_by` forms) against a reference
//! that counts runs of equivalent keys, on every device, for every element
//! type: random inputs, few distinct values (long runs of duplicates),
//! disjoint, identical, one side empty, `Less` and `Greater`, a user
//! comparator with classes of distinct values, floats' NaNs and signed
//! zeros under `Less`, views, and argument errors.

mod common;

use common::{assert_same, ctx, devices, random_vec, rng, small_vec, Key, TestRng};
use cuprim::cmp::{Comparator, Greater, Less};
use cuprim::prelude::*;
use std::cmp::Ordering;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Union,
    Intersection,
    Difference,
    Symmetric,
}

const OPS: [Op; 4] = [Op::Union, Op::Intersection, Op::Difference, Op::Symmetric];

/// The reference: walk the classes of equivalent keys in order; for each,
/// a's run (ca elements) and b's run (cb) give the output by the counting
/// rules of std::set_* on multisets.
fn reference<T: Copy>(a: &[T], b: &[T], op: Op, less: impl Fn(T, T) -> bool) -> Vec<T> {
    let run_end = |s: &[T], i: usize| {
        let mut k = i;
        while k < s.len() && !less(s[i], s[k]) {
            k += 1;
        }
        k
    };
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() || j < b.len() {
        let (ea, eb) = if j == b.len() || (i < a.len() && less(a[i], b[j])) {
            (run_end(a, i), j)
        } else if i == a.len() || less(b[j], a[i]) {
            (i, run_end(b, j))
        } else {
            (run_end(a, i), run_end(b, j))
        };
        let (ra, rb) = (&a[i..ea], &b[j..eb]);
        let (ca, cb) = (ra.len(), rb.len());
        match op {
            Op::Union => {
                out.extend_from_slice(ra);
                out.extend_from_slice(&rb[ca.min(cb)..]);
            }
            Op::Intersection => out.extend_from_slice(&ra[..ca.min(cb)]),
            Op::Difference => out.extend_from_slice(&ra[ca.min(cb)..]),
            Op::Symmetric => {
                if ca > cb {
                    out.extend_from_slice(&ra[cb..]);
                } else {
                    out.extend_from_slice(&rb[ca..]);
                }
            }
        }
        (i, j) = (ea, eb);
    }
    out
}

/// Runs `op` on the device vectors, through the plain form (`Less` only) or the `_by` form.
fn call<K: Element, C: Comparator<K>>(
    a: &impl DeviceData<K>,
    b: &impl DeviceData<K>,
    op: Op,
    cmp: C,
    by: bool,
) -> cuprim::Result<DeviceVec<K>> {
    match (op, by) {
        (Op::Union, false) => a.set_union(b),
        (Op::Intersection, false) => a.set_intersection(b),
        (Op::Difference, false) => a.set_difference(b),
        (Op::Symmetric, false) => a.set_symmetric_difference(b),
        (Op::Union, true) => a.set_union_by(b, cmp),
        (Op::Intersection, true) => a.set_intersection_by(b, cmp),
        (Op::Difference, true) => a.set_difference_by(b, cmp),
        (Op::Symmetric, true) => a.set_symmetric_difference_by(b, cmp),
    }
}

/// Every operation on `a` and `b` on `dev` against the reference.
fn check<K: Element, C: Comparator<K>>(dev: &Device, a: &[K], b: &[K], cmp: C, by: bool, what: &str, seed: u64) {
    let (da, db) = (DeviceVec::from_slice(dev, a).unwrap(), DeviceVec::from_slice(dev, b).unwrap());
    for op in OPS {
        let want = reference(a, b, op, |x, y| cmp.less(x, y));
        let c = ctx(dev, &format!("{op:?} {what} ({} + {})", a.len(), b.len()), a.len() + b.len(), seed);
        let got = call(&da, &db, op, cmp, by).unwrap_or_else(|e| panic!("{c}: {e}"));
        assert_same(&got.to_vec().unwrap(), &want, &c);
    }
}

fn sorted_by<T: Element, C: Comparator<T>>(mut v: Vec<T>, cmp: &C) -> Vec<T> {
    v.sort_by(|&x, &y| {
        if cmp.less(x, y) {
            Ordering::Less
        } else if cmp.less(y, x) {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    });
    v
}

fn sizes() -> Vec<usize> {
    vec![0, 1, 2, 33, 1000]
}

fn large_pairs() -> Vec<(usize, usize)> {
    let mut p = vec![(70_001, 70_001), (70_001, 1000), (1, 70_001), (0, 70_001), (70_001, 0)];
    if !cfg!(debug_assertions) {
        p.extend([((1 << 20) + 3, 1 << 19), (1 << 19, (1 << 20) + 3)]);
    }
    let cap = common::size_cap();
    p.retain(|&(x, y)| x + y <= cap);
    p
}

/// Sorted inputs of `na` and `nb` elements in several shapes.
fn shapes<K: Key>(r: &mut TestRng, na: usize, nb: usize, descending: bool) -> Vec<(&'static str, Vec<K>, Vec<K>)> {
    let sorted = |mut v: Vec<K>| {
        v.sort_unstable_by_key(|x| x.ordered());
        if descending {
            v.reverse();
        }
        v
    };
    let both = sorted(random_vec(r, na + nb));
    let few_a = sorted(small_vec(r, na));
    vec![
        ("random", sorted(random_vec(r, na)), sorted(random_vec(r, nb))),
        ("few distinct", few_a.clone(), sorted(small_vec(r, nb))),
        ("disjoint", both[..na].to_vec(), both[na..].to_vec()),
        ("identical", few_a.clone(), few_a),
    ]
}

fn check_type<K: Key>(tag: &str, descending: bool) {
    let (mut r, seed) = rng(tag);
    let s = sizes();
    let mut pairs: Vec<(usize, usize)> = s.iter().flat_map(|&x| s.iter().map(move |&y| (x, y))).collect();
    pairs.extend(large_pairs());
    let devs = devices();
    for &(na, nb) in &pairs {
        for (shape, a, b) in shapes::<K>(&mut r, na, nb, descending) {
            for dev in &devs {
                let what = format!("{tag} {} {shape}", K::NAME);
                if descending {
                    check(dev, &a, &b, Greater, true, &what, seed);
                } else {
                    check(dev, &a, &b, Less, false, &what, seed);
                    if na + nb < 100 {
                        check(dev, &a, &b, Less, true, &what, seed);
                    }
                }
            }
        }
    }
}

macro_rules! every_type {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        mod $name {
            use super::*;
            #[test]
            fn set_ops_less() {
                check_type::<$t>(concat!("set_", stringify!($name)), false);
            }
            #[test]
            fn set_ops_greater() {
                check_type::<$t>(concat!("set_greater_", stringify!($name)), true);
            }
        }
    )*};
}

every_type!(u8_: u8, i8_: i8, u32_: u32, i32_: i32, u64_: u64, i64_: i64, f16_: f16, bf16_: bf16, f32_: f32, f64_: f64);

/// The reference against hand-worked multiset answers.
#[test]
fn reference_by_hand() {
    let a = [1u32, 2, 2, 2, 4, 5, 5];
    let b = [2u32, 2, 3, 5, 5, 5, 6];
    let lt = |x: u32, y: u32| x < y;
    assert_eq!(reference(&a, &b, Op::Union, lt), vec![1, 2, 2, 2, 3, 4, 5, 5, 5, 6]);
    assert_eq!(reference(&a, &b, Op::Intersection, lt), vec![2, 2, 5, 5]);
    assert_eq!(reference(&a, &b, Op::Difference, lt), vec![1, 2, 4]);
    assert_eq!(reference(&a, &b, Op::Symmetric, lt), vec![1, 2, 3, 4, 5, 6]);
}

/// Floats under `Less`: NaNs and both zeros are distinct keys of the total order.
#[test]
fn float_specials_are_keys() {
    let (_, seed) = rng("set_specials");
    let a = [f32::NEG_INFINITY, -0.0, -0.0, 0.0, 1.0, f32::INFINITY, f32::NAN, f32::NAN];
    let b = [-f32::NAN, -0.0, 0.0, 0.0, 0.0, f32::NAN];
    let (a64, b64): (Vec<f64>, Vec<f64>) = (a.iter().map(|&x| x as f64).collect(), b.iter().map(|&x| x as f64).collect());
    for dev in devices() {
        check(&dev, &a, &b, Less, false, "f32 specials", seed);
        check(&dev, &b, &a, Less, true, "f32 specials", seed);
        check(&dev, &a64, &b64, Less, false, "f64 specials", seed);
        let da = DeviceVec::from_slice(&dev, &a).unwrap();
        let db = DeviceVec::from_slice(&dev, &b).unwrap();
        let i = da.set_intersection(&db).unwrap().to_vec().unwrap();
        assert_eq!(i.len(), 3, "-0.0, 0.0 and NaN are shared once each on {dev:?}");
        assert!(i[0].is_sign_negative() && i[1] == 0.0 && !i[1].is_sign_negative() && i[2].is_nan());
    }
}

cuprim::comparator! {
    /// By the low four bits alone: 16 classes of many distinct values.
    struct LowNibble for u32, i64 {
        rust: |a, b| (a & 15) < (b & 15),
        cuda: "(a & 15) < (b & 15)",
    }
}

/// A user comparator: equivalent keys are distinct values, so which of
/// each run is kept shows in the output.
#[test]
fn user_comparator() {
    let (mut r, seed) = rng("set_user_cmp");
    for &(na, nb) in &[(0usize, 5usize), (7, 0), (33, 40), (1000, 333), (20_001, 30_000)] {
        let (ua, ub) = (
            sorted_by(random_vec::<u32>(&mut r, na), &LowNibble),
            sorted_by(random_vec::<u32>(&mut r, nb), &LowNibble),
        );
        let (ia, ib) = (
            sorted_by(random_vec::<i64>(&mut r, na), &LowNibble),
            sorted_by(random_vec::<i64>(&mut r, nb), &LowNibble),
        );
        for dev in devices() {
            check(&dev, &ua, &ub, LowNibble, true, "LowNibble u32", seed);
            check(&dev, &ia, &ib, LowNibble, true, "LowNibble i64", seed);
        }
    }
}

/// Views as inputs, and a vector against a view of itself.
#[test]
fn views() {
    let (mut r, seed) = rng("set_views");
    let mut a = small_vec::<u32>(&mut r, 5000);
    a.sort_unstable();
    for dev in devices() {
        let da = DeviceVec::from_slice(&dev, &a).unwrap();
        let (sa, sb) = (da.slice(3..4000).unwrap(), da.slice(1000..).unwrap());
        for op in OPS {
            let c = ctx(&dev, &format!("{op:?} of views"), 5000, seed);
            let want = reference(&a[3..4000], &a[1000..], op, |x, y| x < y);
            assert_same(&call(&sa, &sb, op, Less, false).unwrap().to_vec().unwrap(), &want, &c);
            let want = reference(&a, &a[3..4000], op, |x, y| x < y);
            assert_same(&call(&da, &sa, op, Less, true).unwrap().to_vec().unwrap(), &want, &c);
        }
    }
}

/// Unsorted inputs: some output, no panic, no error.
#[test]
fn unsorted_inputs_do_not_fail() {
    let (mut r, _) = rng("set_unsorted");
    let (a, b) = (random_vec::<u64>(&mut r, 3000), random_vec::<u64>(&mut r, 1777));
    for dev in devices() {
        let (da, db) = (DeviceVec::from_slice(&dev, &a).unwrap(), DeviceVec::from_slice(&dev, &b).unwrap());
        for op in OPS {
            let out = call(&da, &db, op, Less, false).unwrap().to_vec().unwrap();
            assert!(out.len() <= a.len() + b.len());
        }
    }
}

/// Inputs on different devices.
#[test]
fn errors() {
    let Some(gpu) = common::cuda() else {
        common::skip("set errors", "no GPU for the device-mismatch checks");
        return;
    };
    let h = DeviceVec::from_slice(&Device::host(), &[1.0f32, 2.0]).unwrap();
    let g = DeviceVec::from_slice(&gpu, &[1.5f32]).unwrap();
    for op in OPS {
        assert!(matches!(call(&h, &g, op, Less, false), Err(Error::DeviceMismatch { .. })));
        assert!(matches!(call(&g, &h, op, Greater, true), Err(Error::DeviceMismatch { .. })));
    }
}
