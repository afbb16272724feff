//! The set operations (set_union, set_intersection, set_difference,
//! set_symmetric_difference and their `_by` forms) against a reference
//! that counts runs of equivalent keys, on every device, for every element
//! type: random inputs, few distinct values (long runs of duplicates),
//! disjoint, identical, one side empty, `Less` and `Greater`, a user
//! comparator with classes of distinct values, floats' NaNs and signed
//! zeros under `Less`, views, and argument errors. The by-key forms
//! (`set_*_by_key`, `_by_key_by`) against the same reference run on
//! (key, value) pairs ordered by their keys: keys and values exact.

mod common;

use common::{assert_same, ctx, devices, random_vec, rng, small_vec, Key, Sample, TestRng};
use cuprim::cmp::{Comparator, Greater, Less};
use cuprim::expr::IntoExpr;
use cuprim::prelude::*;
use rand::RngCore;
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

/// The by-key reference: [`reference`] on (key, value) pairs ordered by
/// key, so each kept key brings the value beside it; unzipped.
fn reference_by_key<K: Copy, V: Copy>(a: (&[K], &[V]), b: (&[K], &[V]), op: Op, less: impl Fn(K, K) -> bool) -> (Vec<K>, Vec<V>) {
    let zip = |(k, v): (&[K], &[V])| -> Vec<(K, V)> { k.iter().copied().zip(v.iter().copied()).collect() };
    reference(&zip(a), &zip(b), op, |x, y| less(x.0, y.0)).into_iter().unzip()
}

/// Runs the by-key form of `op`: plain (`Less` only) or `_by_key_by`.
/// The intersection and the difference take `self`'s values alone (`vb`
/// unused there).
#[allow(clippy::type_complexity)]
fn call_by_key<K: Element, V: Element, C: Comparator<K>>(
    (a, va): (&impl DeviceData<K>, &impl DeviceData<V>),
    (b, vb): (&impl DeviceData<K>, &impl DeviceData<V>),
    op: Op,
    cmp: C,
    by: bool,
) -> cuprim::Result<(DeviceVec<K>, DeviceVec<V>)> {
    match (op, by) {
        (Op::Union, false) => a.set_union_by_key(va, b, vb),
        (Op::Intersection, false) => a.set_intersection_by_key(va, b),
        (Op::Difference, false) => a.set_difference_by_key(va, b),
        (Op::Symmetric, false) => a.set_symmetric_difference_by_key(va, b, vb),
        (Op::Union, true) => a.set_union_by_key_by(va, b, vb, cmp),
        (Op::Intersection, true) => a.set_intersection_by_key_by(va, b, cmp),
        (Op::Difference, true) => a.set_difference_by_key_by(va, b, cmp),
        (Op::Symmetric, true) => a.set_symmetric_difference_by_key_by(va, b, vb, cmp),
    }
}

/// Every by-key operation on `(a, va)` and `(b, vb)` on `dev` against the
/// reference, keys and values.
#[allow(clippy::too_many_arguments)]
fn check_by_key<K: Element, V: Element, C: Comparator<K>>(
    dev: &Device,
    (a, va): (&[K], &[V]),
    (b, vb): (&[K], &[V]),
    cmp: C,
    by: bool,
    what: &str,
    seed: u64,
) {
    let up = |x: &[K], y: &[V]| (DeviceVec::from_slice(dev, x).unwrap(), DeviceVec::from_slice(dev, y).unwrap());
    let ((da, dva), (db, dvb)) = (up(a, va), up(b, vb));
    for op in OPS {
        let (want_k, want_v) = reference_by_key((a, va), (b, vb), op, |x, y| cmp.less(x, y));
        let c = ctx(
            dev,
            &format!("{op:?} by key {what} ({} + {}, values {})", a.len(), b.len(), V::NAME),
            a.len() + b.len(),
            seed,
        );
        let (k, v) = call_by_key((&da, &dva), (&db, &dvb), op, cmp, by).unwrap_or_else(|e| panic!("{c}: {e}"));
        assert_same(&k.to_vec().unwrap(), &want_k, &format!("keys: {c}"));
        assert_same(&v.to_vec().unwrap(), &want_v, &format!("values: {c}"));
    }
}

/// Sizes of the by-key checks: every pair of `sizes()` and larger ones up
/// to about 100k (one side empty or tiny among them).
fn by_key_pairs() -> Vec<(usize, usize)> {
    let s = [0usize, 1, 2, 33, 1000, 4097];
    let mut p: Vec<(usize, usize)> = s.iter().flat_map(|&x| s.iter().map(move |&y| (x, y))).collect();
    p.extend([
        (99_991, 99_991),
        (65_537, 3),
        (1, 65_537),
        (0, 100_003),
        (100_003, 0),
        (50_001, 99_989),
    ]);
    let cap = common::size_cap();
    p.retain(|&(x, y)| x + y <= cap);
    p
}

/// Keys `K` in every shape with random values `V` of each side, through
/// `cmp` (`Less`: the plain forms, and the `_by_key_by` forms on small
/// inputs; anything else: `_by_key_by`).
fn check_by_key_type<K: Key, V: Sample, C: Comparator<K>>(tag: &str, cmp: C, descending: bool) {
    let (mut r, seed) = rng(tag);
    let plain = std::any::TypeId::of::<C>() == std::any::TypeId::of::<Less>();
    let devs = devices();
    for (na, nb) in by_key_pairs() {
        for (shape, a, b) in shapes::<K>(&mut r, na, nb, descending) {
            let (va, vb) = (random_vec::<V>(&mut r, a.len()), random_vec::<V>(&mut r, b.len()));
            for dev in &devs {
                let what = format!("{tag} {} {shape}", K::NAME);
                check_by_key(dev, (&a, &va), (&b, &vb), cmp, !plain, &what, seed);
                if plain && na + nb < 100 {
                    check_by_key(dev, (&a, &va), (&b, &vb), cmp, true, &what, seed);
                }
            }
        }
    }
}

cuprim::comparator! {
    /// `Less` (total_cmp: NaNs by sign and payload, -0.0 before 0.0)
    /// written as a user comparator.
    struct TotalLess for f32 {
        rust: |a, b| a.total_cmp(&b).is_lt(),
        cuda: "cuprim_total_less(a, b)",
    }
}

#[test]
fn by_key_u32_keys() {
    check_by_key_type::<u32, u32, _>("set_by_key_u32_u32", Less, false);
    check_by_key_type::<u32, f64, _>("set_by_key_u32_f64", Less, false);
}

#[test]
fn by_key_u64_keys() {
    check_by_key_type::<u64, u32, _>("set_by_key_u64_u32", Less, false);
    check_by_key_type::<u64, f64, _>("set_by_key_u64_f64_greater", Greater, true);
}

/// f32 keys with NaNs (both signs), infinities and signed zeros: the
/// built-in `Less` and the same total order as a user comparator.
#[test]
fn by_key_f32_keys_total_order() {
    check_by_key_type::<f32, u32, _>("set_by_key_f32_u32", Less, false);
    check_by_key_type::<f32, f64, _>("set_by_key_f32_f64_total", TotalLess, false);
}

/// By key with a user comparator whose classes hold distinct keys: which
/// pairs are kept shows in both outputs.
#[test]
fn by_key_user_comparator() {
    let (mut r, seed) = rng("set_by_key_user_cmp");
    for &(na, nb) in &[(0usize, 5usize), (7, 0), (33, 40), (1000, 333), (20_001, 30_000)] {
        let a = sorted_by(random_vec::<u32>(&mut r, na), &LowNibble);
        let b = sorted_by(random_vec::<u32>(&mut r, nb), &LowNibble);
        let (va, vb) = (random_vec::<f64>(&mut r, na), random_vec::<f64>(&mut r, nb));
        for dev in devices() {
            check_by_key(&dev, (&a, &va), (&b, &vb), LowNibble, true, "LowNibble u32", seed);
        }
    }
}

/// The by-key reference against hand-worked answers.
#[test]
fn by_key_reference_by_hand() {
    let (a, va) = ([1u32, 2, 2, 2, 5], [10u32, 20, 21, 22, 50]);
    let (b, vb) = ([2u32, 3, 5, 5], [200u32, 300, 500, 501]);
    let lt = |x: u32, y: u32| x < y;
    let r = |op| reference_by_key((&a, &va), (&b, &vb), op, lt);
    assert_eq!(r(Op::Union), (vec![1, 2, 2, 2, 3, 5, 5], vec![10, 20, 21, 22, 300, 50, 501]));
    assert_eq!(r(Op::Intersection), (vec![2, 5], vec![20, 50]));
    assert_eq!(r(Op::Difference), (vec![1, 2, 2], vec![10, 21, 22]));
    assert_eq!(r(Op::Symmetric), (vec![1, 2, 2, 3, 5], vec![10, 21, 22, 300, 501]));
}

/// Views as keys and values.
#[test]
fn by_key_views() {
    let (mut r, seed) = rng("set_by_key_views");
    let mut a = small_vec::<u32>(&mut r, 5000);
    a.sort_unstable();
    let v = random_vec::<u64>(&mut r, 5000);
    for dev in devices() {
        let (da, dv) = (DeviceVec::from_slice(&dev, &a).unwrap(), DeviceVec::from_slice(&dev, &v).unwrap());
        let x = (da.slice(3..4000).unwrap(), dv.slice(3..4000).unwrap());
        let y = (da.slice(1000..).unwrap(), dv.slice(1000..).unwrap());
        for op in OPS {
            let c = ctx(&dev, &format!("{op:?} by key of views"), 5000, seed);
            let (want_k, want_v) = reference_by_key((&a[3..4000], &v[3..4000]), (&a[1000..], &v[1000..]), op, |p, q| p < q);
            let (k, got_v) = call_by_key((&x.0, &x.1), (&y.0, &y.1), op, Less, false).unwrap();
            assert_same(&k.to_vec().unwrap(), &want_k, &c);
            assert_same(&got_v.to_vec().unwrap(), &want_v, &c);
        }
    }
}

/// Values not as many as their keys: `LengthMismatch` on every device,
/// for `self`'s values in every operation and the other's in the union
/// and the symmetric difference (the intersection and the difference take
/// no other values); and inputs on different devices.
#[test]
fn by_key_errors() {
    for dev in devices() {
        let k = DeviceVec::from_slice(&dev, &[1u32, 2, 3]).unwrap();
        let v3 = DeviceVec::from_slice(&dev, &[1.0f64, 2.0, 3.0]).unwrap();
        let v2 = DeviceVec::from_slice(&dev, &[1.0f64, 2.0]).unwrap();
        let mismatch = |r: cuprim::Result<(DeviceVec<u32>, DeviceVec<f64>)>| matches!(r, Err(Error::LengthMismatch { .. }));
        for op in OPS {
            for by in [false, true] {
                assert!(
                    mismatch(call_by_key((&k, &v2), (&k, &v3), op, Less, by)),
                    "{op:?} self's values on {dev:?}"
                );
                let other = call_by_key((&k, &v3), (&k, &v2), op, Less, by);
                if matches!(op, Op::Union | Op::Symmetric) {
                    assert!(mismatch(other), "{op:?} other's values on {dev:?}");
                } else {
                    let (keys, values) = other.unwrap();
                    assert_eq!(keys.len(), values.len());
                }
            }
        }
        // The inputs are intact.
        assert_eq!(k.to_vec().unwrap(), vec![1, 2, 3]);
        assert_eq!(v2.to_vec().unwrap(), vec![1.0, 2.0]);
    }
    let Some(gpu) = common::cuda() else {
        common::skip("set by-key errors", "no GPU for the device-mismatch checks");
        return;
    };
    let hk = DeviceVec::from_slice(&Device::host(), &[1u32, 2]).unwrap();
    let hv = DeviceVec::from_slice(&Device::host(), &[0u8, 1]).unwrap();
    let gk = DeviceVec::from_slice(&gpu, &[1u32, 2]).unwrap();
    let gv = DeviceVec::from_slice(&gpu, &[0u8, 1]).unwrap();
    for op in OPS {
        let dm = |r: cuprim::Result<(DeviceVec<u32>, DeviceVec<u8>)>| matches!(r, Err(Error::DeviceMismatch { .. }));
        assert!(dm(call_by_key((&gk, &hv), (&gk, &gv), op, Less, false)), "{op:?} values elsewhere");
        assert!(
            dm(call_by_key((&gk, &gv), (&hk, &gv), op, Greater, true)),
            "{op:?} other keys elsewhere"
        );
        if matches!(op, Op::Union | Op::Symmetric) {
            assert!(
                dm(call_by_key((&gk, &gv), (&gk, &hv), op, Less, false)),
                "{op:?} other values elsewhere"
            );
        }
    }
}

/// Runs the expression form of `op` (`set_*_with`, or `_with_by` when
/// `by`) on expressions `a` and `b`.
fn call_with<K: Element, A: Expr<Item = K>, B: IntoExpr, C: Comparator<K>>(
    a: &A,
    b: B,
    op: Op,
    cmp: C,
    by: bool,
) -> cuprim::Result<DeviceVec<K>>
where
    B::Expr: Expr<Item = K>,
{
    match (op, by) {
        (Op::Union, false) => a.set_union_with(b),
        (Op::Intersection, false) => a.set_intersection_with(b),
        (Op::Difference, false) => a.set_difference_with(b),
        (Op::Symmetric, false) => a.set_symmetric_difference_with(b),
        (Op::Union, true) => a.set_union_with_by(b, cmp),
        (Op::Intersection, true) => a.set_intersection_with_by(b, cmp),
        (Op::Difference, true) => a.set_difference_with_by(b, cmp),
        (Op::Symmetric, true) => a.set_symmetric_difference_with_by(b, cmp),
    }
}

/// Set operations of input expressions (`set_*_with`, `set_*_with_by`):
/// a map, a permutation, a counting sequence, a slice or a buffer on each
/// side, against the operation on the collected vectors and the
/// sequential reference, every operation, sizes around a tile (the set
/// kernel's 2816 and 1792: one input short of a tile, one past, several),
/// few distinct keys (runs across many tiles) and all-equal inputs; a
/// permutation with an index out of range is an error and the inputs are
/// intact.
#[test]
fn expression_inputs() {
    use cuprim::ops::Negate;
    let (mut r, seed) = rng("set_expressions");
    let mut sizes = vec![
        (0usize, 0usize),
        (0, 5),
        (1, 0),
        (1, 1),
        (3, 4),
        (2815, 2818),
        (2816 * 3 + 5, 2816 * 2 - 7),
        (1791, 1),
        (50_000, 20_011),
    ];
    if !cfg!(debug_assertions) {
        sizes.push((300_001, 299_999));
    }
    let cap = common::size_cap();
    sizes.retain(|&(x, y)| x + y <= cap);
    for &(na, nb) in &sizes {
        for range in [1u64, 7, 1 << 20] {
            // a: descending values, read negated (ascending); b: ascending
            // values read through a permutation that reverses them.
            let mut a: Vec<i32> = (0..na).map(|_| (r.next_u64() % range) as i32).collect();
            a.sort_by(|x, y| y.cmp(x));
            let mut b: Vec<i32> = (0..nb).map(|_| -((r.next_u64() % range) as i32)).collect();
            b.sort();
            let rev: Vec<u32> = (0..nb as u32).rev().collect();
            let b_stored: Vec<i32> = b.iter().rev().copied().collect();
            let want_a: Vec<i32> = a.iter().map(|x| -x).collect();
            let neg_b: Vec<i32> = b.iter().map(|x| -x).collect();
            for dev in devices() {
                let da = DeviceVec::from_slice(&dev, &a).unwrap();
                let db = DeviceVec::from_slice(&dev, &b_stored).unwrap();
                let idx = DeviceVec::from_slice(&dev, &rev).unwrap();
                for op in OPS {
                    let c = ctx(&dev, &format!("{op:?} with expressions (keys below {range})"), na + nb, seed);
                    let want = reference(&want_a, &b, op, |x, y| x < y);
                    let fused = call_with(&da.map(Negate), db.permute(&idx), op, Less, false)
                        .unwrap()
                        .to_vec()
                        .unwrap();
                    assert_same(&fused, &want, &c);
                    let (ca, cb) = (da.map(Negate).collect().unwrap(), db.permute(&idx).collect().unwrap());
                    assert_same(&fused, &call(&ca, &cb, op, Less, false).unwrap().to_vec().unwrap(), &c);
                    // Descending by Greater: both sides as stored descending.
                    let by = call_with(&da.lazy(), db.permute(&idx).map(Negate), op, Greater, true).unwrap();
                    assert_same(&by.to_vec().unwrap(), &reference(&a, &neg_b, op, |x, y| x > y), &c);
                    // A slice against a counting sequence.
                    if na > 2 {
                        let s = da.slice(1..na - 1).unwrap();
                        let step = if range == 1 { 0 } else { 7 };
                        let got = call_with(&s.map(Negate), counting(&dev, -1000i32, step, nb), op, Less, true).unwrap();
                        let left: Vec<i32> = a[1..na - 1].iter().map(|x| -x).collect();
                        let right: Vec<i32> = (0..nb as i32).map(|i| -1000 + step * i).collect();
                        assert_same(&got.to_vec().unwrap(), &reference(&left, &right, op, |x, y| x < y), &c);
                    }
                }
                assert_eq!(da.to_vec().unwrap(), a, "the input changed on {dev:?}");
            }
        }
    }
    // A permutation out of range: an error, not a fault.
    for dev in devices() {
        let a = DeviceVec::from_slice(&dev, &[1i32, 2, 3]).unwrap();
        let bad = DeviceVec::from_slice(&dev, &[0u32, 7]).unwrap();
        for op in OPS {
            let err = call_with(&a.lazy(), a.permute(&bad), op, Less, false).unwrap_err();
            assert!(matches!(err, Error::IndexOutOfBounds { .. }), "{op:?}: {err:?}");
        }
        assert_eq!(a.to_vec().unwrap(), vec![1, 2, 3]);
    }
    // The same where the output must be empty (an intersection with an
    // empty side, a difference from an empty side): nothing is read, the
    // indices are still checked, as on the host.
    for dev in devices() {
        let a = DeviceVec::from_slice(&dev, &[1i32, 2, 3]).unwrap();
        let none = DeviceVec::<i32>::zeros(&dev, 0).unwrap();
        let bad = DeviceVec::from_slice(&dev, &[0u32, 7]).unwrap();
        let err = call_with(&a.permute(&bad), &none, Op::Intersection, Less, false).unwrap_err();
        assert!(matches!(err, Error::IndexOutOfBounds { .. }), "intersection on {dev:?}: {err:?}");
        let err = call_with(&none.lazy(), a.permute(&bad), Op::Difference, Less, false).unwrap_err();
        assert!(matches!(err, Error::IndexOutOfBounds { .. }), "difference on {dev:?}: {err:?}");
        assert_eq!(a.to_vec().unwrap(), vec![1, 2, 3]);
    }
}

/// Expression forms with a user comparator whose classes hold distinct
/// keys (which copies are kept shows), f32 NaNs and signed zeros under the
/// total order, and unsorted expressions (some output, no error).
#[test]
fn expression_inputs_user_comparator_and_specials() {
    use cuprim::ops::Identity;
    let (mut r, seed) = rng("set_expressions_cmp");
    for &(na, nb) in &[(0usize, 5usize), (7, 0), (33, 40), (2817, 2815), (20_001, 30_000)] {
        let ua = sorted_by(random_vec::<u32>(&mut r, na), &LowNibble);
        let ub = sorted_by(random_vec::<u32>(&mut r, nb), &LowNibble);
        for dev in devices() {
            let (da, db) = (DeviceVec::from_slice(&dev, &ua).unwrap(), DeviceVec::from_slice(&dev, &ub).unwrap());
            for op in OPS {
                let c = ctx(&dev, &format!("{op:?} with LowNibble"), na + nb, seed);
                let got = call_with(&da.map(Identity), &db, op, LowNibble, true).unwrap();
                assert_same(&got.to_vec().unwrap(), &reference(&ua, &ub, op, |x, y| LowNibble.less(x, y)), &c);
            }
        }
    }
    let a = [f32::NEG_INFINITY, -0.0, -0.0, 0.0, 1.0, f32::INFINITY, f32::NAN, f32::NAN];
    let b = [-f32::NAN, -0.0, 0.0, 0.0, 0.0, f32::NAN];
    let (x, y) = (random_vec::<u64>(&mut r, 3000), random_vec::<u64>(&mut r, 1777));
    for dev in devices() {
        let (da, db) = (DeviceVec::from_slice(&dev, &a).unwrap(), DeviceVec::from_slice(&dev, &b).unwrap());
        let (dx, dy) = (DeviceVec::from_slice(&dev, &x).unwrap(), DeviceVec::from_slice(&dev, &y).unwrap());
        for op in OPS {
            let c = ctx(&dev, &format!("{op:?} with f32 specials"), a.len() + b.len(), seed);
            let got = call_with(&da.map(Identity), db.lazy(), op, Less, false).unwrap();
            assert_same(&got.to_vec().unwrap(), &reference(&a, &b, op, |p, q| Less.less(p, q)), &c);
            let got = call_with(&db.lazy(), da.map(Identity), op, TotalLess, true).unwrap();
            assert_same(&got.to_vec().unwrap(), &reference(&b, &a, op, |p, q| Less.less(p, q)), &c);
            let out = call_with(&dx.map(Identity), dy.lazy(), op, Less, false).unwrap().to_vec().unwrap();
            assert!(out.len() <= x.len() + y.len(), "{op:?} of unsorted expressions");
        }
    }
}

/// Runs the by-key expression form of `op` (`set_*_by_key_with`, or
/// `_with_by` when `by`) on keys `a` with values `va` and keys `b` with
/// values `vb` (taken by the union and the symmetric difference only).
#[allow(clippy::type_complexity)]
fn call_by_key_with<K: Element, V: Element, A: Expr<Item = K>, VA: IntoExpr, B: IntoExpr, VB: IntoExpr, C: Comparator<K>>(
    (a, va): (&A, VA),
    (b, vb): (B, VB),
    op: Op,
    cmp: C,
    by: bool,
) -> cuprim::Result<(DeviceVec<K>, DeviceVec<V>)>
where
    VA::Expr: Expr<Item = V>,
    B::Expr: Expr<Item = K>,
    VB::Expr: Expr<Item = V>,
{
    match (op, by) {
        (Op::Union, false) => a.set_union_by_key_with(va, b, vb),
        (Op::Intersection, false) => a.set_intersection_by_key_with(va, b),
        (Op::Difference, false) => a.set_difference_by_key_with(va, b),
        (Op::Symmetric, false) => a.set_symmetric_difference_by_key_with(va, b, vb),
        (Op::Union, true) => a.set_union_by_key_with_by(va, b, vb, cmp),
        (Op::Intersection, true) => a.set_intersection_by_key_with_by(va, b, cmp),
        (Op::Difference, true) => a.set_difference_by_key_with_by(va, b, cmp),
        (Op::Symmetric, true) => a.set_symmetric_difference_by_key_with_by(va, b, vb, cmp),
    }
}

/// By-key set operations of input expressions (`set_*_by_key_with`,
/// `_with_by`): keys a map and a permutation (or a slice and a counting
/// sequence), values a counting sequence, a map, a permuted buffer or a
/// buffer on either side, against the buffer form on the collected
/// vectors, bit for bit, and the by-key reference; every operation, sizes
/// from empty sides to several tiles of both value widths (4 bytes: 2816
/// per tile, 8: 1792), all-equal and few distinct keys (runs across
/// tiles), `Less` and `Greater`.
#[test]
fn expression_inputs_by_key() {
    use cuprim::ops::{Negate, Square};
    let (mut r, seed) = rng("set_expressions_by_key");
    let mut sizes = vec![
        (0usize, 0usize),
        (0, 5),
        (1, 0),
        (1, 1),
        (3, 4),
        (2815, 2818),
        (1793, 3583),
        (2816 * 3 + 5, 2816 * 2 - 7),
        (1791, 1),
        (50_000, 20_011),
    ];
    if !cfg!(debug_assertions) {
        sizes.push((300_001, 299_999));
    }
    let cap = common::size_cap();
    sizes.retain(|&(x, y)| x + y <= cap);
    for &(na, nb) in &sizes {
        for range in [1u64, 7, 1 << 20] {
            // a: descending keys read negated (ascending); b: ascending keys
            // stored reversed, read through a permutation that reverses them
            // (their values the same way).
            let mut a: Vec<i32> = (0..na).map(|_| (r.next_u64() % range) as i32).collect();
            a.sort_by(|x, y| y.cmp(x));
            let mut b: Vec<i32> = (0..nb).map(|_| -((r.next_u64() % range) as i32)).collect();
            b.sort();
            let rev: Vec<u32> = (0..nb as u32).rev().collect();
            let b_stored: Vec<i32> = b.iter().rev().copied().collect();
            let want_a: Vec<i32> = a.iter().map(|x| -x).collect();
            let neg_b: Vec<i32> = b.iter().map(|x| -x).collect();
            let pa: Vec<u32> = (0..na as u32).collect();
            let pb: Vec<u32> = (na as u32..(na + nb) as u32).collect();
            let pb_stored: Vec<u32> = pb.iter().rev().copied().collect();
            let fa: Vec<f64> = random_vec(&mut r, na);
            let fb: Vec<f64> = random_vec(&mut r, nb);
            let fb_stored: Vec<f64> = fb.iter().rev().copied().collect();
            for dev in devices() {
                let da = DeviceVec::from_slice(&dev, &a).unwrap();
                let db = DeviceVec::from_slice(&dev, &b_stored).unwrap();
                let idx = DeviceVec::from_slice(&dev, &rev).unwrap();
                let dpb = DeviceVec::from_slice(&dev, &pb_stored).unwrap();
                let (dfa, dfb) = (
                    DeviceVec::from_slice(&dev, &fa).unwrap(),
                    DeviceVec::from_slice(&dev, &fb_stored).unwrap(),
                );
                let (ca, cb) = (da.map(Negate).collect().unwrap(), db.permute(&idx).collect().unwrap());
                let (cpa, cpb) = (counting(&dev, 0u32, 1, na).collect().unwrap(), dpb.permute(&idx).collect().unwrap());
                let (cfa, cfb) = (dfa.map(Negate).collect().unwrap(), dfb.permute(&idx).collect().unwrap());
                for op in OPS {
                    let c = ctx(&dev, &format!("{op:?} by key with expressions (keys below {range})"), na + nb, seed);
                    // u32 values: positions, a's counted, b's a permuted buffer.
                    let (k, v) = call_by_key_with(
                        (&da.map(Negate), counting(&dev, 0u32, 1, na)),
                        (db.permute(&idx), dpb.permute(&idx)),
                        op,
                        Less,
                        false,
                    )
                    .unwrap_or_else(|e| panic!("{c}: {e}"));
                    let (k, v) = (k.to_vec().unwrap(), v.to_vec().unwrap());
                    let (want_k, want_v) = reference_by_key((&want_a, &pa), (&b, &pb), op, |x, y| x < y);
                    assert_same(&k, &want_k, &c);
                    assert_same(&v, &want_v, &c);
                    let (bk, bv) = call_by_key((&ca, &cpa), (&cb, &cpb), op, Less, false).unwrap();
                    assert_same(&k, &bk.to_vec().unwrap(), &c);
                    assert_same(&v, &bv.to_vec().unwrap(), &c);
                    // f64 values (8-byte tiles): a map and a permuted buffer.
                    let (k, v) = call_by_key_with(
                        (&da.map(Negate), dfa.map(Negate)),
                        (db.permute(&idx), dfb.permute(&idx)),
                        op,
                        Less,
                        true,
                    )
                    .unwrap_or_else(|e| panic!("{c}: {e}"));
                    let (bk, bv) = call_by_key((&ca, &cfa), (&cb, &cfb), op, Less, true).unwrap();
                    assert_same(&k.to_vec().unwrap(), &bk.to_vec().unwrap(), &c);
                    assert_same(&v.to_vec().unwrap(), &bv.to_vec().unwrap(), &c);
                    // Descending by Greater: a's keys as stored with a map of
                    // a counting sequence, b's negated with a buffer.
                    let (k, v) = call_by_key_with(
                        (&da.lazy(), counting(&dev, 0u32, 1, na).map(Square)),
                        (db.permute(&idx).map(Negate), &cpb),
                        op,
                        Greater,
                        true,
                    )
                    .unwrap_or_else(|e| panic!("{c}: {e}"));
                    let sq: Vec<u32> = pa.iter().map(|x| x.wrapping_mul(*x)).collect();
                    let (want_k, want_v) = reference_by_key((&a, &sq), (&neg_b, &pb), op, |x, y| x > y);
                    assert_same(&k.to_vec().unwrap(), &want_k, &c);
                    assert_same(&v.to_vec().unwrap(), &want_v, &c);
                    // A slice of a map with buffer values against a counting
                    // sequence with counted values.
                    if na > 2 {
                        let s = da.slice(1..na - 1).unwrap();
                        let step = if range == 1 { 0 } else { 7 };
                        let sv = cpa.slice(1..na - 1).unwrap();
                        let (k, v) = call_by_key_with(
                            (&s.map(Negate), &sv),
                            (counting(&dev, -1000i32, step, nb), counting(&dev, 7u32, 3, nb)),
                            op,
                            Less,
                            false,
                        )
                        .unwrap_or_else(|e| panic!("{c}: {e}"));
                        let left: Vec<i32> = want_a[1..na - 1].to_vec();
                        let right: Vec<i32> = (0..nb as i32).map(|i| -1000 + step * i).collect();
                        let rv: Vec<u32> = (0..nb as u32).map(|i| 7 + 3 * i).collect();
                        let (want_k, want_v) = reference_by_key((&left, &pa[1..na - 1]), (&right, &rv), op, |x, y| x < y);
                        assert_same(&k.to_vec().unwrap(), &want_k, &c);
                        assert_same(&v.to_vec().unwrap(), &want_v, &c);
                    }
                }
                assert_eq!(da.to_vec().unwrap(), a, "the input changed on {dev:?}");
                assert_same(&dfa.to_vec().unwrap(), &fa, "the values changed");
            }
        }
    }
    // A user comparator whose classes hold distinct keys: which pairs are
    // kept shows in both outputs.
    for &(na, nb) in &[(0usize, 5usize), (7, 0), (33, 40), (2817, 2815), (20_001, 30_000)] {
        let ua = sorted_by(random_vec::<u32>(&mut r, na), &LowNibble);
        let ub = sorted_by(random_vec::<u32>(&mut r, nb), &LowNibble);
        let (fa, fb) = (random_vec::<f64>(&mut r, na), random_vec::<f64>(&mut r, nb));
        for dev in devices() {
            let up = |k: &[u32], v: &[f64]| (DeviceVec::from_slice(&dev, k).unwrap(), DeviceVec::from_slice(&dev, v).unwrap());
            let ((da, dfa), (db, dfb)) = (up(&ua, &fa), up(&ub, &fb));
            let (cfa, cfb) = (dfa.map(Negate).collect().unwrap(), dfb.map(Negate).collect().unwrap());
            for op in OPS {
                let c = ctx(&dev, &format!("{op:?} by key with LowNibble"), na + nb, seed);
                let (k, v) = call_by_key_with(
                    (&da.map(cuprim::ops::Identity), dfa.map(Negate)),
                    (&db, dfb.map(Negate)),
                    op,
                    LowNibble,
                    true,
                )
                .unwrap_or_else(|e| panic!("{c}: {e}"));
                let (bk, bv) = call_by_key((&da, &cfa), (&db, &cfb), op, LowNibble, true).unwrap();
                assert_same(&k.to_vec().unwrap(), &bk.to_vec().unwrap(), &c);
                assert_same(&v.to_vec().unwrap(), &bv.to_vec().unwrap(), &c);
            }
        }
    }
}

/// The by-key expression forms' errors: `self`'s values not as many as
/// its keys in every operation, the other's in the union and the
/// symmetric difference (`LengthMismatch`), and values through a
/// permutation with an index out of range (`IndexOutOfBounds`): errors,
/// not faults, the inputs intact.
#[test]
fn expression_inputs_by_key_errors() {
    for dev in devices() {
        let k = DeviceVec::from_slice(&dev, &[1u32, 2, 3]).unwrap();
        let v = DeviceVec::from_slice(&dev, &[1.0f64, 2.0, 3.0]).unwrap();
        let kb = counting(&dev, 0u32, 2, 4);
        let bad = DeviceVec::from_slice(&dev, &[0u32, 3, 1]).unwrap();
        let bad4 = DeviceVec::from_slice(&dev, &[2u32, 0, 1, 7]).unwrap();
        let mismatch = |r: cuprim::Result<(DeviceVec<u32>, DeviceVec<f64>)>| matches!(r, Err(Error::LengthMismatch { .. }));
        let oob = |r: cuprim::Result<(DeviceVec<u32>, DeviceVec<f64>)>| matches!(r, Err(Error::IndexOutOfBounds { .. }));
        for op in OPS {
            for by in [false, true] {
                let short = v.slice(1..).unwrap();
                let r = call_by_key_with((&k.lazy(), &short), (kb, constant(&dev, 0.5f64, 4)), op, Less, by);
                assert!(mismatch(r), "{op:?} self's values on {dev:?}");
                let r = call_by_key_with((&k.lazy(), &v), (kb, constant(&dev, 0.5f64, 3)), op, Less, by);
                if op == Op::Union || op == Op::Symmetric {
                    assert!(mismatch(r), "{op:?} the other's values on {dev:?}");
                } else {
                    let (keys, values) = r.unwrap();
                    assert_eq!(keys.len(), values.len());
                }
                let r = call_by_key_with((&k.lazy(), v.permute(&bad)), (kb, constant(&dev, 0.5f64, 4)), op, Less, by);
                assert!(oob(r), "{op:?} self's values out of range on {dev:?}");
                if op == Op::Union || op == Op::Symmetric {
                    let r = call_by_key_with((&k.map(cuprim::ops::Identity), &v), (kb, v.permute(&bad4)), op, Less, by);
                    assert!(oob(r), "{op:?} the other's values out of range on {dev:?}");
                }
            }
        }
        assert_eq!(k.to_vec().unwrap(), vec![1, 2, 3]);
        assert_eq!(v.to_vec().unwrap(), vec![1.0, 2.0, 3.0]);
    }
    let Some(gpu) = common::cuda() else {
        common::skip("set by-key expression errors", "no GPU for the device-mismatch checks");
        return;
    };
    let hk = DeviceVec::from_slice(&Device::host(), &[1u32, 2]).unwrap();
    let gv = DeviceVec::from_slice(&gpu, &[0u8, 1]).unwrap();
    for op in OPS {
        let r = call_by_key_with((&hk.lazy(), &gv), (counting(&Device::host(), 0u32, 1, 2), &gv), op, Less, false);
        assert!(matches!(r, Err(Error::DeviceMismatch { .. })), "{op:?} values elsewhere");
        let r = call_by_key_with(
            (&hk.lazy(), constant(&Device::host(), 1u8, 2)),
            (counting(&gpu, 0u32, 1, 2), &gv),
            op,
            Less,
            false,
        );
        assert!(matches!(r, Err(Error::DeviceMismatch { .. })), "{op:?} other keys elsewhere");
    }
}
