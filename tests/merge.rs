//! The merge family (merge, merge_by, merge_by_key, merge_by_key_by)
//! against a plain sequential stable merge, on every device, for every
//! element type: awkward sizes of each side on their own (around the
//! device's tile too), ties within and across the inputs (values that
//! record each element's source position check the stability), floats'
//! NaNs and signed zeros under `Less`, `Greater`, user comparators, views,
//! and argument errors.

mod common;

use common::{assert_same, capped, ctx, devices, random_vec, rng, small_vec, Key, Sample, TestRng};
use cuprim::algo::merge::{tile_elements, SMALL_TILES_BELOW, WARP_PARTITION_TILES};
use cuprim::cmp::{Comparator, Greater, Less};
use cuprim::prelude::*;
use cuprim::Result;
use rand::RngCore;
use std::cmp::Ordering;

/// The reference: the stable merge of `a` and `b` by `less` (a's element
/// first among equivalent ones), as source positions: `i` for `a[i]`,
/// `a.len() + j` for `b[j]`.
fn reference<T: Copy>(a: &[T], b: &[T], less: impl Fn(T, T) -> bool) -> Vec<usize> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(a.len() + b.len());
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && !less(b[j], a[i])) {
            out.push(i);
            i += 1;
        } else {
            out.push(a.len() + j);
            j += 1;
        }
    }
    out
}

/// `a` then `b`, read at `positions`.
fn pick<T: Copy>(a: &[T], b: &[T], positions: &[usize]) -> Vec<T> {
    positions.iter().map(|&p| if p < a.len() { a[p] } else { b[p - a.len()] }).collect()
}

/// `v` sorted (stably) by `cmp`.
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

/// `v` sorted ascending in the total order (by ordered bits: fast in debug builds).
fn ascending<K: Key>(mut v: Vec<K>) -> Vec<K> {
    v.sort_unstable_by_key(|x| x.ordered());
    v
}

/// How a check calls the family: through `merge` / `merge_by_key` (the
/// comparator must then be `Less`) or through the `_by` forms.
#[derive(Clone, Copy, PartialEq)]
enum Call {
    Plain,
    By,
}

/// Merges `a` and `b` (keys alone, then with values `va`, `vb`) on `dev`
/// and compares both with the reference.
fn check<K: Element, V: Element, C: Comparator<K>>(
    dev: &Device,
    (a, va): (&[K], &[V]),
    (b, vb): (&[K], &[V]),
    cmp: C,
    call: Call,
    what: &str,
    seed: u64,
) {
    let positions = reference(a, b, |x, y| cmp.less(x, y));
    let want_k = pick(a, b, &positions);
    let want_v = pick(va, vb, &positions);
    let c = ctx(dev, &format!("{what} ({} + {})", a.len(), b.len()), a.len() + b.len(), seed);
    let up = |x: &[K]| DeviceVec::from_slice(dev, x).unwrap();
    let (da, db) = (up(a), up(b));
    let (dva, dvb) = (DeviceVec::from_slice(dev, va).unwrap(), DeviceVec::from_slice(dev, vb).unwrap());
    let keys = match call {
        Call::Plain => da.merge(&db),
        Call::By => da.merge_by(&db, cmp),
    }
    .unwrap_or_else(|e| panic!("merge: {c}: {e}"));
    assert_same(&keys.to_vec().unwrap(), &want_k, &format!("merge keys: {c}"));
    let (k, v) = match call {
        Call::Plain => da.merge_by_key(&dva, &db, &dvb),
        Call::By => da.merge_by_key_by(&dva, &db, &dvb, cmp),
    }
    .unwrap_or_else(|e| panic!("merge_by_key: {c}: {e}"));
    assert_same(&k.to_vec().unwrap(), &want_k, &format!("merge_by_key keys: {c}"));
    assert_same(&v.to_vec().unwrap(), &want_v, &format!("merge_by_key values: {c}"));
}

/// Positions as values: `a`'s `0..na`, `b`'s `na..na + nb`.
fn positions<V: TryFrom<usize>>(from: usize, len: usize) -> Vec<V>
where
    V::Error: std::fmt::Debug,
{
    (from..from + len).map(|i| V::try_from(i).unwrap()).collect()
}

/// Side lengths: tiny, and at the device tile's edges (keys alone and
/// with `V` values tile differently).
fn small_sides<K: Element, V: Element>() -> Vec<usize> {
    let mut s = vec![0, 1, 2, 31, 1000];
    for pairs in [false, true] {
        let t = tile_elements::<K, V>(pairs, 0);
        s.extend([t - 1, t, t + 1]);
    }
    s.sort();
    s.dedup();
    s
}

/// Unequal and larger pairs of sides, among them several tiles (and
/// several chunks of the host merge) and one side empty or a single
/// element; larger in release builds, where the reference is fast.
fn large_pairs<K: Element>() -> Vec<(usize, usize)> {
    let t = tile_elements::<K, K>(false, 0);
    let mut p = vec![(3 * t + 5, 5 * t - 3)];
    if cfg!(debug_assertions) {
        p.extend([(100_003, 150_000), (1, 100_001), (100_001, 1), (0, 50_000), (50_000, 0)]);
    } else {
        p.extend([(100_003, 250_000), (1, 300_001), (300_001, 1), (0, 200_000), (200_000, 0)]);
        p.push(((1 << 20) + 3, 1 << 19));
    }
    let cap = common::size_cap();
    p.retain(|&(x, y)| x + y <= cap);
    p
}

/// Sorted inputs of `na` and `nb` elements: random values, few distinct
/// ones (ties within and across), all one value, and all of one side
/// before (or after) the other. Sorted ascending (or descending) in the
/// total order, by each element's ordered bits (equal bits: equal
/// elements), which is much faster than through a comparator in debug builds.
fn shapes<K: Key>(r: &mut TestRng, na: usize, nb: usize, descending: bool, all: bool) -> Vec<(&'static str, Vec<K>, Vec<K>)> {
    let sorted = |mut v: Vec<K>| {
        v.sort_unstable_by_key(|x| x.ordered());
        if descending {
            v.reverse();
        }
        v
    };
    let mut out = vec![
        ("random", sorted(random_vec(r, na)), sorted(random_vec(r, nb))),
        ("few distinct", sorted(small_vec(r, na)), sorted(small_vec(r, nb))),
    ];
    if all {
        let one = K::small(r);
        out.push(("all equal", vec![one; na], vec![one; nb]));
        let both = sorted(random_vec(r, na + nb));
        out.push(("a before b", both[..na].to_vec(), both[na..].to_vec()));
        out.push(("b before a", both[nb..].to_vec(), both[..nb].to_vec()));
    }
    out
}

/// Every side-length pair and shape for keys `K`, ascending through
/// `merge` / `merge_by_key` or descending through the `_by` forms with
/// `Greater`, with the source positions as `u32` values (and, for the
/// random shape of the larger pairs, `u64`).
fn check_type<K: Key>(tag: &str, descending: bool) {
    let (mut r, seed) = rng(tag);
    let sides = small_sides::<K, u32>();
    let mut pairs: Vec<(usize, usize)> = sides.iter().flat_map(|&x| sides.iter().map(move |&y| (x, y))).collect();
    let small = pairs.len();
    pairs.extend(large_pairs::<K>());
    let devs = devices();
    for (i, &(na, nb)) in pairs.iter().enumerate() {
        for (shape, a, b) in shapes::<K>(&mut r, na, nb, descending, i >= small || na.min(nb) <= 2) {
            let (pa, pb) = (positions::<u32>(0, na), positions::<u32>(na, nb));
            for dev in &devs {
                let what = format!("{tag} {} {shape}", K::NAME);
                let wide = shape == "random" && i >= small;
                let (pa64, pb64) = (positions::<u64>(0, na), positions::<u64>(na, nb));
                if descending {
                    check(dev, (&a, &pa), (&b, &pb), Greater, Call::By, &what, seed);
                    if wide {
                        check(
                            dev,
                            (&a, &pa64),
                            (&b, &pb64),
                            Greater,
                            Call::By,
                            &format!("{what}, u64 values"),
                            seed,
                        );
                    }
                } else {
                    check(dev, (&a, &pa), (&b, &pb), Less, Call::Plain, &what, seed);
                    if wide {
                        check(
                            dev,
                            (&a, &pa64),
                            (&b, &pb64),
                            Less,
                            Call::Plain,
                            &format!("{what}, u64 values"),
                            seed,
                        );
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
            fn merge_less() {
                check_type::<$t>(concat!("merge_", stringify!($name)), false);
            }
            #[test]
            fn merge_greater() {
                check_type::<$t>(concat!("merge_greater_", stringify!($name)), true);
            }
        }
    )*};
}

every_type!(u8_: u8, i8_: i8, u32_: u32, i32_: i32, u64_: u64, i64_: i64, f16_: f16, bf16_: bf16, f32_: f32, f64_: f64);

/// Values of every element type behind `u32` keys with many ties, and
/// wide values behind narrow keys (another tile shape).
/// 4-byte keys alone change tile shape at `SMALL_TILES_BELOW` outputs,
/// and merges of `WARP_PARTITION_TILES` tiles or more take the warp
/// partition: sizes at both sides, at the larger tiles' edges and across a
/// partial warp of cuts (release builds only: up to 2^26 keys).
#[test]
fn tile_shapes_by_size() {
    if cfg!(debug_assertions) {
        return;
    }
    let (mut r, seed) = rng("merge_tile_shapes");
    let s = SMALL_TILES_BELOW as usize;
    let t = tile_elements::<u32, u32>(false, s);
    let edge = s.div_ceil(t) * t;
    let warp = WARP_PARTITION_TILES as usize * t;
    for n in capped(&[s - 1, s, edge, edge + 1, warp - 1, warp + 37 * t + 5]) {
        let na = n / 3 + 11;
        let a = ascending(random_vec::<u32>(&mut r, na));
        let b = ascending(random_vec::<u32>(&mut r, n - na));
        for dev in devices() {
            check(&dev, (&a, &a), (&b, &b), Less, Call::Plain, "u32 tile shapes", seed);
        }
    }
}

/// Merges of several waves of tiles (a few million outputs), keys alone
/// and with values, uneven sides, many ties (release builds only). At
/// `b8a92dc` these sizes took tiles shortened to fill whole waves; that was
/// slower and is gone (BENCHMARKS.md), the test stays.
#[test]
fn several_waves_of_tiles() {
    if cfg!(debug_assertions) {
        return;
    }
    let (mut r, seed) = rng("merge_waves_of_tiles");
    for n in capped(&[3_000_017, 5_000_011, 9_999_991]) {
        let na = n / 3 + 11;
        let mut draw = |len: usize| ascending((0..len).map(|_| (r.next_u64() % 100_003) as u32).collect());
        let (a, b) = (draw(na), draw(n - na));
        let (va, vb) = (positions::<u32>(0, na), positions::<u32>(na, n - na));
        for dev in devices() {
            check(&dev, (&a, &va), (&b, &vb), Less, Call::Plain, "u32, several waves of tiles", seed);
        }
    }
}

/// Each tile of a merge of fewer than `FUSED_MERGE_TILES_BELOW` tiles finds
/// its cuts in the merge kernel (two warps, 32 probes a step): one side
/// all ties with the other (every cut decided by stability), one side
/// short and the other long (cuts at an end of a range of millions),
/// interleaved sides, at tile edges and a few tiles.
#[test]
fn fused_cuts_at_the_edges() {
    let (_, seed) = rng("merge_fused_cuts");
    let t = tile_elements::<u32, u32>(false, 0);
    let long = if cfg!(debug_assertions) { 3 * t + 7 } else { (1 << 21) + 7 };
    for (na, nb) in capped_pairs(&[(1, long), (long, 1), (t, t), (t - 1, 2 * t + 1), (2 * t + 3, long), (5, 3 * t)]) {
        let ties_a = vec![7u32; na];
        let ties_b = vec![7u32; nb];
        let evens: Vec<u32> = (0..na as u32).map(|i| 2 * i).collect();
        let odds: Vec<u32> = (0..nb as u32).map(|i| 2 * i + 1).collect();
        let low: Vec<u32> = vec![3; na];
        let high: Vec<u32> = (0..nb as u32).map(|i| 10 + i / 3).collect();
        for dev in devices() {
            for (what, a, b) in [
                ("all ties", &ties_a, &ties_b),
                ("interleaved", &evens, &odds),
                ("a below b", &low, &high),
                ("b below a", &high, &low),
            ] {
                let (va, vb) = (positions::<u32>(0, a.len()), positions::<u32>(a.len(), b.len()));
                check(
                    &dev,
                    (a, &va),
                    (b, &vb),
                    Less,
                    Call::Plain,
                    &format!("u32 {what}, fused cuts"),
                    seed,
                );
            }
        }
    }
}

/// `pairs` without those whose sum is past the size cap.
fn capped_pairs(pairs: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let cap = common::size_cap();
    pairs.iter().copied().filter(|&(a, b)| a + b <= cap).collect()
}

#[test]
fn values_of_every_type() {
    fn with_values<K: Key, V: Sample>(r: &mut TestRng, seed: u64) {
        let t = tile_elements::<K, V>(true, 0);
        for (na, nb) in capped(&[0, 1, 777, t + 1, 3 * t - 1, 40_000])
            .into_iter()
            .zip(capped(&[5, 0, t - 1, 2 * t, 1, 90_001]))
        {
            let a = ascending(small_vec::<K>(r, na));
            let b = ascending(small_vec::<K>(r, nb));
            let (va, vb) = (random_vec::<V>(r, na), random_vec::<V>(r, nb));
            for dev in devices() {
                let what = format!("{} keys, {} values", K::NAME, V::NAME);
                check(&dev, (&a, &va), (&b, &vb), Less, Call::Plain, &what, seed);
            }
        }
    }
    let (mut r, seed) = rng("merge_values");
    with_values::<u32, u8>(&mut r, seed);
    with_values::<u32, i8>(&mut r, seed);
    with_values::<u32, i32>(&mut r, seed);
    with_values::<u32, i64>(&mut r, seed);
    with_values::<u32, f16>(&mut r, seed);
    with_values::<u32, bf16>(&mut r, seed);
    with_values::<u32, f32>(&mut r, seed);
    with_values::<u32, f64>(&mut r, seed);
    with_values::<u8, f64>(&mut r, seed);
    with_values::<f16, u64>(&mut r, seed);
    with_values::<f64, u8>(&mut r, seed);
}

/// Floats under `Less`: NaNs of both signs and both zeros are ordered
/// (total_cmp), so they merge like any other value.
#[test]
fn float_specials_are_ordered() {
    fn specials<K: Key>(seed: u64) {
        let s = K::specials();
        let a = ascending([s.clone(), s.clone()].concat());
        let b = ascending(s.iter().copied().step_by(2).chain(s.iter().copied().skip(1).step_by(3)).collect());
        // Descending: the same lists reversed (equal elements are equal bits).
        let (ra, rb): (Vec<K>, Vec<K>) = (a.iter().rev().copied().collect(), b.iter().rev().copied().collect());
        for dev in devices() {
            let (pa, pb) = (positions::<u32>(0, a.len()), positions::<u32>(a.len(), b.len()));
            check(
                &dev,
                (&a, &pa),
                (&b, &pb),
                Less,
                Call::Plain,
                &format!("{} specials", K::NAME),
                seed,
            );
            check(
                &dev,
                (&rb, &pb),
                (&ra, &pa),
                Greater,
                Call::By,
                &format!("{} specials", K::NAME),
                seed,
            );
            // -0.0 before +0.0, NaN last under Less.
            let m = DeviceVec::from_slice(&dev, &a)
                .unwrap()
                .merge(&DeviceVec::from_slice(&dev, &b).unwrap())
                .unwrap()
                .to_vec()
                .unwrap();
            assert!(m.last().unwrap().is_nan(), "{} on {dev:?}: a positive NaN ends the merge", K::NAME);
            assert!(m[0].is_nan(), "{} on {dev:?}: a negative NaN starts it", K::NAME);
        }
    }
    let (_, seed) = rng("merge_specials");
    specials::<f32>(seed);
    specials::<f64>(seed);
    specials::<f16>(seed);
    specials::<bf16>(seed);
}

cuprim::comparator! {
    /// Closer to one half first (0.25 and 0.75 are equivalent).
    struct NearHalf for f32 {
        rust: |a, b| (a - 0.5).abs() < (b - 0.5).abs(),
        cuda: "fabsf(a - 0.5f) < fabsf(b - 0.5f)",
    }
}

cuprim::comparator! {
    /// By the low four bits alone: 16 classes of many distinct values.
    struct LowNibble for u32, i64 {
        rust: |a, b| (a & 15) < (b & 15),
        cuda: "(a & 15) < (b & 15)",
    }
}

cuprim::comparator! {
    /// Descending, written by hand.
    struct Descending for u64 {
        rust: |a, b| a > b,
        cuda: "a > b",
    }
}

/// User comparators: equivalence classes of distinct values make the
/// stability visible in the keys themselves.
#[test]
fn user_comparators() {
    let (mut r, seed) = rng("merge_user_cmp");
    let t = tile_elements::<f32, u32>(true, 0);
    let sizes = capped(&[0, 3, 1000, t + 1, 50_001]);
    // No NaN for NearHalf (a NaN would be equivalent to everything: no order).
    let near = |r: &mut TestRng, n: usize| -> Vec<f32> {
        let grid = [0.0f32, 0.25, 0.5, 0.75, 1.0, 0.1, 0.9, -3.5, 4.5];
        let v = (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    grid[(r.next_u32() % 9) as usize]
                } else {
                    (r.next_u32() % 2000) as f32 / 1000.0 - 0.5
                }
            })
            .collect();
        sorted_by(v, &NearHalf)
    };
    for &na in &sizes {
        for &nb in &sizes {
            let (pa, pb) = (positions::<u32>(0, na), positions::<u32>(na, nb));
            let (a, b) = (near(&mut r, na), near(&mut r, nb));
            let (ua, ub) = (
                sorted_by(random_vec::<u32>(&mut r, na), &LowNibble),
                sorted_by(random_vec::<u32>(&mut r, nb), &LowNibble),
            );
            let (ia, ib) = (
                sorted_by(random_vec::<i64>(&mut r, na), &LowNibble),
                sorted_by(random_vec::<i64>(&mut r, nb), &LowNibble),
            );
            let (da, db) = (
                sorted_by(random_vec::<u64>(&mut r, na), &Descending),
                sorted_by(random_vec::<u64>(&mut r, nb), &Descending),
            );
            for dev in devices() {
                check(&dev, (&a, &pa), (&b, &pb), NearHalf, Call::By, "NearHalf f32", seed);
                check(&dev, (&ua, &pa), (&ub, &pb), LowNibble, Call::By, "LowNibble u32", seed);
                check(&dev, (&ia, &pa), (&ib, &pb), LowNibble, Call::By, "LowNibble i64", seed);
                check(&dev, (&da, &pa), (&db, &pb), Descending, Call::By, "Descending u64", seed);
            }
        }
    }
}

/// Views as inputs and values: slices that start off a vector boundary.
#[test]
fn views() {
    let (mut r, seed) = rng("merge_views");
    let t = tile_elements::<u8, u8>(false, 0);
    for (na, nb) in [(5usize, 7usize), (t + 3, 2 * t), (40_000, 3)] {
        let a = ascending(random_vec::<u8>(&mut r, na + 3));
        let b = ascending(random_vec::<u8>(&mut r, nb + 1));
        let (va, vb) = (random_vec::<f64>(&mut r, na + 3), random_vec::<f64>(&mut r, nb + 1));
        for dev in devices() {
            let c = ctx(&dev, "merge of views", na + nb, seed);
            let up_k = |x: &[u8]| DeviceVec::from_slice(&dev, x).unwrap();
            let up_v = |x: &[f64]| DeviceVec::from_slice(&dev, x).unwrap();
            let (da, db, dva, dvb) = (up_k(&a), up_k(&b), up_v(&va), up_v(&vb));
            let (sa, sb) = (da.slice(1..na + 1).unwrap(), db.slice(1..).unwrap());
            let (sva, svb) = (dva.slice(2..na + 2).unwrap(), dvb.slice(..nb).unwrap());
            let (a, b) = (&a[1..na + 1], &b[1..]);
            let (va, vb) = (&va[2..na + 2], &vb[..nb]);
            let pos = reference(a, b, |x, y| Less.less(x, y));
            assert_same(&sa.merge(&sb).unwrap().to_vec().unwrap(), &pick(a, b, &pos), &c);
            let (k, v) = sa.merge_by_key(&sva, &sb, &svb).unwrap();
            assert_same(&k.to_vec().unwrap(), &pick(a, b, &pos), &c);
            assert_same(&v.to_vec().unwrap(), &pick(va, vb, &pos), &c);
            // A vector merged with a view of itself.
            let (k, _) = da.merge_by_key(&dva, &sa, &sva).unwrap();
            let whole = da.to_vec().unwrap();
            let pos = reference(&whole, a, |x, y| Less.less(x, y));
            assert_same(&k.to_vec().unwrap(), &pick(&whole, a, &pos), &c);
        }
    }
}

/// Merges of input expressions (`merge_with`, `merge_with_by`): each side a
/// map, a permutation, a counting sequence, a slice or a buffer, against
/// the merge of the collected vectors (the same elements in the same order)
/// and the sequential reference, on sizes around the tile and past the
/// fused-cut bound; a permutation with an index out of range is an
/// error, and the inputs are intact.
#[test]
fn expression_inputs() {
    use cuprim::ops::Negate;
    let (mut r, seed) = rng("merge_expressions");
    let t = tile_elements::<i32, i32>(true, 0);
    let mut sizes = vec![
        (0usize, 5usize),
        (1, 0),
        (3, 4),
        (t - 1, t + 2),
        (3 * t + 5, 2 * t - 7),
        (50_000, 20_011),
    ];
    if !cfg!(debug_assertions) {
        sizes.push((
            WARP_PARTITION_TILES as usize * t / 2 + 17,
            WARP_PARTITION_TILES as usize * t / 2 + 3,
        ));
    }
    for (na, nb) in capped_pairs(&sizes) {
        // a: descending values, read negated (ascending); b: ascending
        // values read through a permutation that reverses them.
        let mut a: Vec<i32> = (0..na).map(|_| (r.next_u64() % 1000) as i32).collect();
        a.sort_by(|x, y| y.cmp(x));
        let mut b: Vec<i32> = (0..nb).map(|_| -((r.next_u64() % 1000) as i32)).collect();
        b.sort();
        let rev: Vec<u32> = (0..nb as u32).rev().collect();
        let b_stored: Vec<i32> = b.iter().rev().copied().collect();
        let want_a: Vec<i32> = a.iter().map(|x| -x).collect();
        let pos = reference(&want_a, &b, |x, y| x < y);
        let want = pick(&want_a, &b, &pos);
        for dev in devices() {
            let c = ctx(&dev, "merge_with of expressions", na + nb, seed);
            let da = DeviceVec::from_slice(&dev, &a).unwrap();
            let db = DeviceVec::from_slice(&dev, &b_stored).unwrap();
            let idx = DeviceVec::from_slice(&dev, &rev).unwrap();
            let fused = da.map(Negate).merge_with(db.permute(&idx)).unwrap().to_vec().unwrap();
            assert_same(&fused, &want, &c);
            let collected = da
                .map(Negate)
                .collect()
                .unwrap()
                .merge(&db.permute(&idx).collect().unwrap())
                .unwrap();
            assert_same(&fused, &collected.to_vec().unwrap(), &c);
            // Descending by Greater: both sides as stored descending.
            let by = da
                .lazy()
                .merge_with_by(db.permute(&idx).map(Negate), Greater)
                .unwrap()
                .to_vec()
                .unwrap();
            let neg_b: Vec<i32> = b.iter().map(|x| -x).collect();
            let pos = reference(&a, &neg_b, |x, y| x > y);
            assert_same(&by, &pick(&a, &neg_b, &pos), &c);
            // Counting sequences against a slice of a buffer.
            if na > 2 {
                let s = da.slice(1..na - 1).unwrap();
                let m = s.map(Negate).merge_with(counting(&dev, -1000i32, 7, nb)).unwrap().to_vec().unwrap();
                let left: Vec<i32> = a[1..na - 1].iter().map(|x| -x).collect();
                let right: Vec<i32> = (0..nb as i32).map(|i| -1000 + 7 * i).collect();
                let pos = reference(&left, &right, |x, y| x < y);
                assert_same(&m, &pick(&left, &right, &pos), &c);
            }
            assert_eq!(da.to_vec().unwrap(), a, "{c}: the input changed");
        }
    }
    // A permutation out of range: an error, not a fault.
    for dev in devices() {
        let a = DeviceVec::from_slice(&dev, &[1i32, 2, 3]).unwrap();
        let bad = DeviceVec::from_slice(&dev, &[0u32, 7]).unwrap();
        let err = a.lazy().merge_with(a.permute(&bad)).unwrap_err();
        assert!(matches!(err, cuprim::Error::IndexOutOfBounds { .. }), "{err:?}");
        assert_eq!(a.to_vec().unwrap(), vec![1, 2, 3]);
    }
}

/// Merges by key of input expressions (`merge_by_key_with`,
/// `merge_by_key_with_by`): keys a map and a permutation, values a counting
/// sequence, a map and a permuted buffer (and four plain buffers, which
/// take the buffers' kernels), against `merge_by_key` of the collected
/// vectors, bit for bit, and the sequential reference; sizes from empty
/// sides to several tiles, few distinct keys (ties within and across the
/// sides, values recording the stability), `u32` and `f64` values (the two
/// tile shapes).
#[test]
fn expression_inputs_by_key() {
    use cuprim::ops::{Negate, Square};
    let (mut r, seed) = rng("merge_expressions_by_key");
    let t = tile_elements::<i32, u32>(true, 0);
    let t8 = tile_elements::<i32, f64>(true, 0);
    let mut sizes = vec![
        (0usize, 0usize),
        (0, 5),
        (1, 0),
        (1, 1),
        (3, 4),
        (t - 1, t + 2),
        (t8 + 1, 2 * t8 - 1),
        (3 * t + 5, 2 * t - 7),
        (50_000, 20_011),
    ];
    if !cfg!(debug_assertions) {
        sizes.push((
            WARP_PARTITION_TILES as usize * t / 2 + 17,
            WARP_PARTITION_TILES as usize * t / 2 + 3,
        ));
    }
    for (na, nb) in capped_pairs(&sizes) {
        for range in [7u64, 1 << 20] {
            // a: descending keys read negated (ascending); b: ascending keys
            // stored reversed, read through a permutation that reverses them
            // (its values the same way).
            let mut a: Vec<i32> = (0..na).map(|_| (r.next_u64() % range) as i32).collect();
            a.sort_by(|x, y| y.cmp(x));
            let mut b: Vec<i32> = (0..nb).map(|_| -((r.next_u64() % range) as i32)).collect();
            b.sort();
            let rev: Vec<u32> = (0..nb as u32).rev().collect();
            let b_stored: Vec<i32> = b.iter().rev().copied().collect();
            let vb: Vec<u32> = positions(na, nb);
            let vb_stored: Vec<u32> = vb.iter().rev().copied().collect();
            let fb: Vec<f64> = random_vec(&mut r, nb);
            let fb_stored: Vec<f64> = fb.iter().rev().copied().collect();
            let want_a: Vec<i32> = a.iter().map(|x| -x).collect();
            let pos = reference(&want_a, &b, |x, y| x < y);
            for dev in devices() {
                let c = ctx(
                    &dev,
                    &format!("merge_by_key_with of expressions (keys below {range})"),
                    na + nb,
                    seed,
                );
                let up = |x: &[i32]| DeviceVec::from_slice(&dev, x).unwrap();
                let (da, db) = (up(&a), up(&b_stored));
                let idx = DeviceVec::from_slice(&dev, &rev).unwrap();
                let dvb = DeviceVec::from_slice(&dev, &vb_stored).unwrap();
                let dfb = DeviceVec::from_slice(&dev, &fb_stored).unwrap();
                // u32 values: positions (a's counted, b's permuted).
                let (k, v) = da
                    .map(Negate)
                    .merge_by_key_with(counting(&dev, 0u32, 1, na), db.permute(&idx), dvb.permute(&idx))
                    .unwrap_or_else(|e| panic!("{c}: {e}"));
                let (k, v) = (k.to_vec().unwrap(), v.to_vec().unwrap());
                assert_same(&k, &pick(&want_a, &b, &pos), &c);
                assert_same(&v, &pos.iter().map(|&p| p as u32).collect::<Vec<_>>(), &c);
                let ca = da.map(Negate).collect().unwrap();
                let cb = db.permute(&idx).collect().unwrap();
                let (ck, cv) = ca
                    .merge_by_key(
                        &counting(&dev, 0u32, 1, na).collect().unwrap(),
                        &cb,
                        &dvb.permute(&idx).collect().unwrap(),
                    )
                    .unwrap();
                assert_same(&k, &ck.to_vec().unwrap(), &c);
                assert_same(&v, &cv.to_vec().unwrap(), &c);
                // f64 values: a map of a counting sequence and a permuted
                // buffer (8-byte tiles), against the buffer form.
                let fa = counting(&dev, 0.5f64, 1.0, na).map(Square);
                let (k, v) = da
                    .map(Negate)
                    .merge_by_key_with(fa, db.permute(&idx), dfb.permute(&idx))
                    .unwrap_or_else(|e| panic!("{c}: {e}"));
                let (ck, cv) = ca
                    .merge_by_key(&fa.collect().unwrap(), &cb, &dfb.permute(&idx).collect().unwrap())
                    .unwrap();
                assert_same(&k.to_vec().unwrap(), &ck.to_vec().unwrap(), &c);
                assert_same(&v.to_vec().unwrap(), &cv.to_vec().unwrap(), &c);
                // Descending by Greater: a's keys as stored, b's negated.
                let (k, v) = da
                    .lazy()
                    .merge_by_key_with_by(
                        counting(&dev, 0u32, 1, na),
                        db.permute(&idx).map(Negate),
                        &dvb.permute(&idx).collect().unwrap(),
                        Greater,
                    )
                    .unwrap();
                let neg_b: Vec<i32> = b.iter().map(|x| -x).collect();
                let gpos = reference(&a, &neg_b, |x, y| x > y);
                assert_same(&k.to_vec().unwrap(), &pick(&a, &neg_b, &gpos), &c);
                assert_same(&v.to_vec().unwrap(), &gpos.iter().map(|&p| p as u32).collect::<Vec<_>>(), &c);
                // Four plain buffers: the buffers' kernels, the same result.
                let va = counting(&dev, 0u32, 1, na).collect().unwrap();
                let cvb = dvb.permute(&idx).collect().unwrap();
                let (k, v) = ca.lazy().merge_by_key_with(&va, &cb, &cvb).unwrap();
                let (ck, cv) = ca.merge_by_key(&va, &cb, &cvb).unwrap();
                assert_same(&k.to_vec().unwrap(), &ck.to_vec().unwrap(), &c);
                assert_same(&v.to_vec().unwrap(), &cv.to_vec().unwrap(), &c);
                assert_eq!(da.to_vec().unwrap(), a, "{c}: the input changed");
            }
        }
    }
}

/// The by-key expression forms' errors: values not as many as their keys
/// (`LengthMismatch`, either side, both comparator forms) and a permuted
/// buffer of values with an index out of range (`IndexOutOfBounds`,
/// either side): errors, not faults, and the inputs are intact.
#[test]
fn expression_inputs_by_key_errors() {
    for dev in devices() {
        let ka = DeviceVec::from_slice(&dev, &[1u32, 2, 3]).unwrap();
        let va = DeviceVec::from_slice(&dev, &[10i8, 20, 30]).unwrap();
        let kb = counting(&dev, 0u32, 2, 4);
        let mismatch = |r: Result<(DeviceVec<u32>, DeviceVec<i8>)>| matches!(r, Err(Error::LengthMismatch { .. }));
        let short = va.slice(..2).unwrap();
        assert!(mismatch(ka.lazy().merge_by_key_with(&short, kb, constant(&dev, 1i8, 4))));
        assert!(mismatch(ka.lazy().merge_by_key_with(&va, kb, constant(&dev, 1i8, 3))));
        assert!(mismatch(ka.lazy().merge_by_key_with_by(&va, kb, constant(&dev, 1i8, 5), Greater)));
        assert!(mismatch(ka.map(cuprim::ops::Identity).merge_by_key_with_by(
            counting(&dev, 0i8, 1, 4),
            kb,
            constant(&dev, 1i8, 4),
            Less
        )));
        let bad = DeviceVec::from_slice(&dev, &[0u32, 3, 1]).unwrap();
        let oob = |r: Result<(DeviceVec<u32>, DeviceVec<i8>)>| matches!(r, Err(Error::IndexOutOfBounds { .. }));
        assert!(oob(ka.lazy().merge_by_key_with(va.permute(&bad), kb, constant(&dev, 1i8, 4))));
        let bad4 = DeviceVec::from_slice(&dev, &[0u32, 1, 2, 3]).unwrap();
        assert!(oob(ka.lazy().merge_by_key_with(&va, kb, va.permute(&bad4))));
        assert!(oob(ka.lazy().merge_by_key_with_by(&va, kb, va.permute(&bad4), Greater)));
        // Empty sides are fine.
        let (k, v) = ka
            .lazy()
            .merge_by_key_with(&va, counting(&dev, 0u32, 1, 0), constant(&dev, 0i8, 0))
            .unwrap();
        assert_eq!((k.to_vec().unwrap(), v.to_vec().unwrap()), (vec![1, 2, 3], vec![10, 20, 30]));
        assert_eq!(ka.to_vec().unwrap(), vec![1, 2, 3]);
        assert_eq!(va.to_vec().unwrap(), vec![10, 20, 30]);
    }
    let Some(gpu) = common::cuda() else {
        common::skip("merge_by_key_with errors", "no GPU for the device-mismatch checks");
        return;
    };
    let host = Device::host();
    let hk = DeviceVec::from_slice(&host, &[1u32, 2]).unwrap();
    let gv = DeviceVec::from_slice(&gpu, &[1u8, 2]).unwrap();
    let r = hk
        .lazy()
        .merge_by_key_with(&gv, counting(&host, 0u32, 1, 2), constant(&host, 0u8, 2));
    assert!(matches!(r, Err(Error::DeviceMismatch { .. })), "{r:?}");
    let r = hk
        .lazy()
        .merge_by_key_with(counting(&host, 0u8, 1, 2), counting(&gpu, 0u32, 1, 2), constant(&host, 0u8, 2));
    assert!(matches!(r, Err(Error::DeviceMismatch { .. })), "{r:?}");
}

/// Unsorted inputs and a comparator that is no order: no panic, no error,
/// an output of the right length whose elements come from the inputs, and
/// every value still beside its own key.
#[test]
fn unsorted_inputs_are_safe() {
    cuprim::comparator! {
        /// Not an order: "less" when the low bits differ.
        struct Chaos for u32 {
            rust: |a, b| (a ^ b) & 1 == 1,
            cuda: "((a ^ b) & 1) == 1",
        }
    }
    let (mut r, seed) = rng("merge_unsorted");
    let t = tile_elements::<u32, u32>(true, 0);
    for (na, nb) in [(3 * t + 7, 2 * t - 5), (1, t + 1), (t, 1)] {
        let (a, b) = (random_vec::<u32>(&mut r, na), random_vec::<u32>(&mut r, nb));
        let (pa, pb) = (positions::<u64>(0, na), positions::<u64>(na, nb));
        let inputs: std::collections::HashSet<u32> = a.iter().chain(&b).copied().collect();
        for dev in devices() {
            let c = ctx(&dev, "unsorted merge", na + nb, seed);
            let up = |x: &[u32]| DeviceVec::from_slice(&dev, x).unwrap();
            let (da, db) = (up(&a), up(&b));
            let (dpa, dpb) = (DeviceVec::from_slice(&dev, &pa).unwrap(), DeviceVec::from_slice(&dev, &pb).unwrap());
            for m in [da.merge(&db).unwrap(), da.merge_by(&db, Chaos).unwrap()] {
                let m = m.to_vec().unwrap();
                assert_eq!(m.len(), na + nb, "{c}");
                assert!(m.iter().all(|x| inputs.contains(x)), "an element from nowhere: {c}");
            }
            for (k, v) in [
                da.merge_by_key(&dpa, &db, &dpb).unwrap(),
                da.merge_by_key_by(&dpa, &db, &dpb, Chaos).unwrap(),
            ] {
                let (k, v) = (k.to_vec().unwrap(), v.to_vec().unwrap());
                assert_eq!((k.len(), v.len()), (na + nb, na + nb), "{c}");
                for (key, &p) in k.iter().zip(&v) {
                    let p = p as usize;
                    assert!(p < na + nb, "a value from nowhere: {c}");
                    assert_eq!(*key, if p < na { a[p] } else { b[p - na] }, "a key apart from its value: {c}");
                }
            }
        }
    }
}

/// Argument errors come back as errors, before any work: the callers'
/// data stays as it was.
#[test]
fn errors() {
    for dev in devices() {
        let ka = DeviceVec::from_slice(&dev, &[1u32, 2, 3]).unwrap();
        let va = DeviceVec::from_slice(&dev, &[10i8, 20]).unwrap();
        let kb = DeviceVec::from_slice(&dev, &[2u32]).unwrap();
        let vb = DeviceVec::from_slice(&dev, &[30i8]).unwrap();
        let r: Result<_> = ka.merge_by_key(&va, &kb, &vb);
        assert!(
            matches!(
                r,
                Err(Error::LengthMismatch {
                    expected: 3,
                    actual: 2,
                    ..
                })
            ),
            "{dev:?}: {r:?}"
        );
        let vb2 = DeviceVec::from_slice(&dev, &[30i8, 40]).unwrap();
        let va3 = DeviceVec::from_slice(&dev, &[10i8, 20, 30]).unwrap();
        let r = ka.merge_by_key_by(&va3, &kb, &vb2, Greater);
        assert!(
            matches!(
                r,
                Err(Error::LengthMismatch {
                    expected: 1,
                    actual: 2,
                    ..
                })
            ),
            "{dev:?}: {r:?}"
        );
        assert_eq!(ka.to_vec().unwrap(), vec![1, 2, 3]);
        assert_eq!(va.to_vec().unwrap(), vec![10, 20]);
        assert_eq!(kb.to_vec().unwrap(), vec![2]);
        assert_eq!(vb2.to_vec().unwrap(), vec![30, 40]);
        // Empty inputs are fine.
        let e = DeviceVec::<u32>::from_slice(&dev, &[]).unwrap();
        let ev = DeviceVec::<i8>::from_slice(&dev, &[]).unwrap();
        assert!(e.merge(&e).unwrap().is_empty());
        let (k, v) = e.merge_by_key(&ev, &ka, &va3).unwrap();
        assert_eq!((k.to_vec().unwrap(), v.to_vec().unwrap()), (vec![1, 2, 3], vec![10, 20, 30]));
    }
    // Different devices.
    let Some(gpu) = common::cuda() else {
        common::skip("merge errors", "no GPU for the device-mismatch checks");
        return;
    };
    let host = Device::host();
    let h = DeviceVec::from_slice(&host, &[1.0f32, 2.0]).unwrap();
    let g = DeviceVec::from_slice(&gpu, &[1.5f32]).unwrap();
    assert!(matches!(h.merge(&g), Err(Error::DeviceMismatch { .. })));
    assert!(matches!(g.merge_by(&h, Greater), Err(Error::DeviceMismatch { .. })));
    let gv = DeviceVec::from_slice(&gpu, &[1u8]).unwrap();
    let hv = DeviceVec::from_slice(&host, &[1u8, 2]).unwrap();
    assert!(matches!(h.merge_by_key(&hv, &g, &gv), Err(Error::DeviceMismatch { .. })));
    assert!(matches!(
        g.merge_by_key(&gv, &g, &hv.slice(..1).unwrap()),
        Err(Error::DeviceMismatch { .. })
    ));
    assert_eq!(h.to_vec().unwrap(), vec![1.0, 2.0]);
}
