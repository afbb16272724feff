//! The stable comparison sorts (`sort_by`, `sort_pairs_by`) against Rust's
//! stable `sort_by`, on every device, for every element type: `Less` and
//! `Greater` (floats in `total_cmp` order: NaNs, signed zeros), a user
//! comparator with many ties, sizes around the device's tile (and several
//! tiles: the merge passes), sorted, reversed, all-equal and few-distinct
//! inputs. Values are the keys' input positions, so the pairs check
//! stability exactly. Argument errors leave the data unchanged.

mod common;

use common::{assert_same, ctx, devices, random_vec, rng, small_vec, Key, Sample, TestRng};
use cuprim::algo::merge::{
    sort_tile_elements, FUSED_SORT_TILES_BELOW, SMALL_TILES_BELOW, SORT_TILES_4352_BELOW, WARP_CUTS_SORT_TILES_BELOW,
};
use cuprim::cmp::{Comparator, Greater, Less};
use cuprim::prelude::*;
use cuprim::Error;
use rand::RngCore;
use std::cmp::Ordering;

/// The input positions of `keys` in the stable order of `order`.
fn reference<K: Copy>(keys: &[K], order: impl Fn(&K, &K) -> Ordering) -> Vec<usize> {
    let mut p: Vec<usize> = (0..keys.len()).collect();
    p.sort_by(|&i, &j| order(&keys[i], &keys[j]));
    p
}

/// Sorts `keys` on `dev` by `cmp` (keys alone, then with their positions
/// as `u32` values, and as `u64` values when `wide`) and compares with
/// the stable reference order `order`.
fn check<K: Element, C: Comparator<K>>(
    dev: &Device,
    keys: &[K],
    cmp: C,
    order: impl Fn(&K, &K) -> Ordering,
    wide: bool,
    what: &str,
    seed: u64,
) {
    let c = ctx(dev, what, keys.len(), seed);
    let perm = reference(keys, order);
    let want_k: Vec<K> = perm.iter().map(|&i| keys[i]).collect();
    let mut d = DeviceVec::from_slice(dev, keys).unwrap();
    d.sort_by(cmp).unwrap_or_else(|e| panic!("sort_by: {c}: {e}"));
    assert_same(&d.to_vec().unwrap(), &want_k, &format!("sort_by keys: {c}"));

    let mut d = DeviceVec::from_slice(dev, keys).unwrap();
    let pos: Vec<u32> = (0..keys.len() as u32).collect();
    let mut v = DeviceVec::from_slice(dev, &pos).unwrap();
    d.sort_pairs_by(cmp, &mut v).unwrap_or_else(|e| panic!("sort_pairs_by: {c}: {e}"));
    assert_same(&d.to_vec().unwrap(), &want_k, &format!("sort_pairs_by keys: {c}"));
    let want_v: Vec<u32> = perm.iter().map(|&i| i as u32).collect();
    assert_eq!(v.to_vec().unwrap(), want_v, "sort_pairs_by values (stability): {c}");

    if wide {
        let mut d = DeviceVec::from_slice(dev, keys).unwrap();
        let pos: Vec<u64> = (0..keys.len() as u64).collect();
        let mut v = DeviceVec::from_slice(dev, &pos).unwrap();
        d.sort_pairs_by(cmp, &mut v)
            .unwrap_or_else(|e| panic!("sort_pairs_by u64: {c}: {e}"));
        assert_same(&d.to_vec().unwrap(), &want_k, &format!("sort_pairs_by keys, u64 values: {c}"));
        let want_v: Vec<u64> = perm.iter().map(|&i| i as u64).collect();
        assert_eq!(v.to_vec().unwrap(), want_v, "sort_pairs_by u64 values (stability): {c}");
    }
}

/// Sizes: tiny, at the edges of the device tiles (keys alone, with u32
/// and with u64 values), several tiles, and larger in release builds.
fn sizes<K: Element>() -> Vec<usize> {
    let mut s = vec![0, 1, 2, 31];
    for t in [
        sort_tile_elements::<K, K>(false, 0),
        sort_tile_elements::<K, u32>(true, 0),
        sort_tile_elements::<K, u64>(true, 0),
    ] {
        s.extend([t - 1, t, t + 1, 2 * t + 1]);
    }
    s.extend([100_003, 250_000]);
    if !cfg!(debug_assertions) {
        s.push((1 << 20) + 3);
    }
    s.sort();
    s.dedup();
    common::capped(&s)
}

/// Inputs of `n` keys: random and few distinct, and for sizes up to a few
/// tiles also sorted, reversed and all equal.
fn shapes<K: Key>(r: &mut TestRng, n: usize, all: bool) -> Vec<(&'static str, Vec<K>)> {
    let mut out = vec![("random", random_vec(r, n)), ("few distinct", small_vec(r, n))];
    if all {
        let mut s: Vec<K> = random_vec(r, n);
        s.sort_by(K::total);
        let mut rev = s.clone();
        rev.reverse();
        out.push(("sorted", s));
        out.push(("reversed", rev));
        out.push(("all equal", vec![K::small(r); n]));
    }
    out
}

/// [`Less`] and [`Greater`] in a comparator that is not the built-in one:
/// `sort_by` takes the radix sort for the built-in orders and the merge
/// sort for this one, so the tests run both.
#[derive(Clone, Copy)]
struct NotBuiltin(bool);

impl<T: Element> Comparator<T> for NotBuiltin {
    fn less(&self, a: T, b: T) -> bool {
        if self.0 {
            Greater.less(a, b)
        } else {
            Less.less(a, b)
        }
    }
    fn cuda_expr(&self) -> String {
        if self.0 {
            "cuprim_total_less(b, a)"
        } else {
            "cuprim_total_less(a, b)"
        }
        .into()
    }
    fn cuda_expr_is_fixed(&self) -> bool {
        false
    }
}

/// Every size and shape of `K`, ascending (`Less`) or descending
/// (`Greater`): the built-in comparator (the radix sort) and the same
/// order through [`NotBuiltin`] (the merge sort).
fn check_type<K: Key>(tag: &str, descending: bool) {
    let (mut r, seed) = rng(tag);
    let devs = devices();
    for n in sizes::<K>() {
        for (shape, keys) in shapes::<K>(&mut r, n, n < 100_000) {
            for dev in &devs {
                let what = format!("{tag} {} {shape}", K::NAME);
                let wide = shape == "random";
                if descending {
                    check(dev, &keys, Greater, |a, b| K::total(b, a), wide, &what, seed);
                    check(
                        dev,
                        &keys,
                        NotBuiltin(true),
                        |a, b| K::total(b, a),
                        wide,
                        &format!("{what}, merge sort"),
                        seed,
                    );
                } else {
                    check(dev, &keys, Less, K::total, wide, &what, seed);
                    check(dev, &keys, NotBuiltin(false), K::total, wide, &format!("{what}, merge sort"), seed);
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
            fn sort_by_less() {
                check_type::<$t>(concat!("sort_by_", stringify!($name)), false);
            }
            #[test]
            fn sort_by_greater() {
                check_type::<$t>(concat!("sort_by_greater_", stringify!($name)), true);
            }
        }
    )*};
}

every_type!(u8_: u8, i8_: i8, u32_: u32, i32_: i32, u64_: u64, i64_: i64, f16_: f16, bf16_: bf16, f32_: f32, f64_: f64);

cuprim::comparator! {
    /// Closer to 0.5 first.
    struct NearHalf for f32 {
        rust: |a, b| (a - 0.5).abs() < (b - 0.5).abs(),
        cuda: "fabsf(a - 0.5f) < fabsf(b - 0.5f)",
    }
}

/// A user comparator with many ties (inputs on a grid of 1/64, and x and
/// 1 - x tie): the positions show the stability exactly.
#[test]
fn user_comparator_is_stable() {
    let (mut r, seed) = rng("sort_by_near_half");
    let devs = devices();
    let order = |a: &f32, b: &f32| (a - 0.5).abs().partial_cmp(&(b - 0.5).abs()).unwrap();
    for n in sizes::<f32>() {
        let keys: Vec<f32> = (0..n).map(|_| (r.next_u64() % 65) as f32 / 64.0).collect();
        for dev in &devs {
            check(dev, &keys, NearHalf, order, true, "near half, ties", seed);
        }
    }
}

/// 4-byte keys alone change tile shape at `SMALL_TILES_BELOW` and
/// `SORT_TILES_4352_BELOW` elements: sizes at both sides of each, and at
/// the edges of the larger tiles above the first (release builds only: up
/// to about 18 million keys).
#[test]
fn tile_shapes_by_size() {
    if cfg!(debug_assertions) {
        return;
    }
    let (mut r, seed) = rng("sort_by_tile_shapes");
    let s = SMALL_TILES_BELOW as usize;
    let t = sort_tile_elements::<f32, f32>(false, s);
    let edge = s.div_ceil(t) * t;
    let big = SORT_TILES_4352_BELOW as usize;
    let devs = devices();
    for n in common::capped(&[s - 1, s, edge, edge + 1, big - 1, big + 7]) {
        let keys: Vec<f32> = (0..n).map(|_| (r.next_u64() % 65) as f32 / 64.0).collect();
        let order = |a: &f32, b: &f32| (a - 0.5).abs().partial_cmp(&(b - 0.5).abs()).unwrap();
        for dev in &devs {
            check(dev, &keys, NearHalf, order, false, "near half, tile shapes", seed);
        }
    }
}

/// The merge passes find their cuts in the pass kernel (two warps, 32
/// probes a step): run counts just past a power of two and just short of
/// one (the last pair partial or missing its second run), with sorted,
/// reversed, all-equal and two-valued keys (every cut among ties), n = 1
/// and two elements. Release builds: up to 9 tiles of the large shape.
#[test]
fn pass_cuts_at_run_edges() {
    let (mut r, seed) = rng("sort_by_pass_cuts");
    let devs = devices();
    let t = sort_tile_elements::<f32, f32>(false, 0);
    let mut ns = vec![1, 2, 3 * t, 4 * t - 1, 4 * t + 1];
    if !cfg!(debug_assertions) {
        let big = sort_tile_elements::<f32, f32>(false, SMALL_TILES_BELOW as usize);
        ns.extend([8 * big + 3, 9 * big - 5]);
    }
    let order = |a: &f32, b: &f32| (a - 0.5).abs().partial_cmp(&(b - 0.5).abs()).unwrap();
    for n in common::capped(&ns) {
        let mut sorted: Vec<f32> = (0..n).map(|_| (r.next_u64() % 4097) as f32 / 4096.0).collect();
        sorted.sort_by(order);
        let reversed: Vec<f32> = sorted.iter().rev().copied().collect();
        let two: Vec<f32> = (0..n).map(|i| if (i * 7919) % 3 == 0 { 0.25 } else { 0.75 }).collect();
        for (shape, keys) in [
            ("sorted", sorted),
            ("reversed", reversed),
            ("all equal", vec![0.5; n]),
            ("two values", two),
        ] {
            for dev in &devs {
                check(dev, &keys, NearHalf, order, false, &format!("near half, {shape}, pass cuts"), seed);
            }
        }
    }
}

/// Sorts of several waves of tiles (a few million keys, past one wave of
/// the small and of the large tiles), keys alone and with values, with ties
/// (release builds only).
#[test]
fn several_waves_of_tiles() {
    if cfg!(debug_assertions) {
        return;
    }
    let (mut r, seed) = rng("sort_by_waves_of_tiles");
    let devs = devices();
    let order = |a: &f32, b: &f32| (a - 0.5).abs().partial_cmp(&(b - 0.5).abs()).unwrap();
    for n in common::capped(&[3_000_017, 5_000_011]) {
        let keys: Vec<f32> = (0..n).map(|_| (r.next_u64() % 4097) as f32 / 4096.0).collect();
        for dev in &devs {
            check(dev, &keys, NearHalf, order, false, "near half, several waves of tiles", seed);
        }
    }
}

/// Sorts of `FUSED_SORT_TILES_BELOW` tiles or more launch a partition
/// before each pass, a warp per cut, and from `WARP_CUTS_SORT_TILES_BELOW`
/// tiles a thread per cut: f32 keys (alone and with u32 values) just past
/// each bound in the tiles of the pairs, with ties (release builds only:
/// about 5.8 and 23 million keys).
#[test]
fn partition_launch_above_the_fused_bound() {
    if cfg!(debug_assertions) {
        return;
    }
    let (mut r, seed) = rng("sort_by_partition_launch");
    let t = sort_tile_elements::<f32, u32>(true, 0);
    let devs = devices();
    let sizes = [FUSED_SORT_TILES_BELOW as usize * t + 5, WARP_CUTS_SORT_TILES_BELOW as usize * t + 5];
    for n in common::capped(&sizes) {
        let keys: Vec<f32> = (0..n).map(|_| (r.next_u64() % 65) as f32 / 64.0).collect();
        let order = |a: &f32, b: &f32| (a - 0.5).abs().partial_cmp(&(b - 0.5).abs()).unwrap();
        for dev in &devs {
            check(dev, &keys, NearHalf, order, false, "near half, partition launches", seed);
        }
    }
}

/// Narrow keys with values of every width (and the 8-byte tile shape of
/// wide values behind narrow keys).
#[test]
fn values_of_every_type() {
    fn with_values<K: Key, V: Sample>(r: &mut TestRng, seed: u64) {
        let t = sort_tile_elements::<K, V>(true, 0);
        for n in [t + 1, 3 * t - 7] {
            let keys: Vec<K> = small_vec(r, n);
            let values: Vec<V> = random_vec(r, n);
            let perm = reference(&keys, |a, b| K::total(a, b));
            for dev in devices() {
                let c = ctx(&dev, &format!("{} keys, {} values", K::NAME, V::NAME), n, seed);
                let mut dk = DeviceVec::from_slice(&dev, &keys).unwrap();
                let mut dv = DeviceVec::from_slice(&dev, &values).unwrap();
                dk.sort_pairs_by(Less, &mut dv).unwrap();
                let want_k: Vec<K> = perm.iter().map(|&i| keys[i]).collect();
                let want_v: Vec<V> = perm.iter().map(|&i| values[i]).collect();
                assert_same(&dk.to_vec().unwrap(), &want_k, &c);
                assert_same(&dv.to_vec().unwrap(), &want_v, &c);
            }
        }
    }
    let (mut r, seed) = rng("sort_by_values");
    with_values::<u8, f64>(&mut r, seed);
    with_values::<u8, u8>(&mut r, seed);
    with_values::<u32, i8>(&mut r, seed);
    with_values::<u32, bf16>(&mut r, seed);
    with_values::<f16, i64>(&mut r, seed);
    with_values::<f64, u8>(&mut r, seed);
    with_values::<i32, f32>(&mut r, seed);
}

/// NaNs of both signs, infinities and signed zeros in `total_cmp` order.
#[test]
fn float_specials_are_ordered() {
    let keys = [
        f32::NAN,
        -0.0,
        0.0,
        -f32::NAN,
        f32::INFINITY,
        -0.0,
        1.0,
        f32::NEG_INFINITY,
        0.0,
        f32::NAN,
    ];
    for dev in devices() {
        let mut d = DeviceVec::from_slice(&dev, &keys).unwrap();
        d.sort_by(Less).unwrap();
        let mut want = keys.to_vec();
        want.sort_by(f32::total_cmp);
        assert_same(&d.to_vec().unwrap(), &want, &format!("{dev:?}"));
        d.sort_by(Greater).unwrap();
        want.reverse();
        assert_same(&d.to_vec().unwrap(), &want, &format!("{dev:?}"));
    }
}

/// The built-in orders (the radix sort) give the merge sort's result bit
/// for bit: signed zeros of both signs interleaved (each keeps its place
/// among the equal ones), NaNs of both signs with payloads, many
/// duplicates; one small-sort tile and several onesweep tiles; keys alone
/// and with their positions (stability).
#[test]
fn builtin_orders_match_the_merge_sort() {
    let (mut r, seed) = rng("sort_by_builtin");
    let pool = [
        0.0f32,
        -0.0,
        1.5,
        -1.5,
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7fc0_0001),
        f32::from_bits(0xffc0_0002),
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE / 2.0,
    ];
    for n in [5usize, 20_000, 100_003] {
        let keys: Vec<f32> = (0..n).map(|_| pool[(r.next_u64() % pool.len() as u64) as usize]).collect();
        let pos: Vec<u32> = (0..n as u32).collect();
        for dev in devices() {
            for descending in [false, true] {
                let c = format!("{} descending {descending}", ctx(&dev, "builtin", n, seed));
                let run = |builtin: bool| {
                    let mut k = DeviceVec::from_slice(&dev, &keys).unwrap();
                    let mut v = DeviceVec::from_slice(&dev, &pos).unwrap();
                    let mut k1 = DeviceVec::from_slice(&dev, &keys).unwrap();
                    match (builtin, descending) {
                        (true, false) => {
                            k.sort_pairs_by(Less, &mut v).unwrap();
                            k1.sort_by(Less).unwrap();
                        }
                        (true, true) => {
                            k.sort_pairs_by(Greater, &mut v).unwrap();
                            k1.sort_by(Greater).unwrap();
                        }
                        (false, d) => {
                            k.sort_pairs_by(NotBuiltin(d), &mut v).unwrap();
                            k1.sort_by(NotBuiltin(d)).unwrap();
                        }
                    }
                    let bits = |x: Vec<f32>| x.into_iter().map(f32::to_bits).collect::<Vec<u32>>();
                    (bits(k.to_vec().unwrap()), v.to_vec().unwrap(), bits(k1.to_vec().unwrap()))
                };
                let (radix_k, radix_v, radix_alone) = run(true);
                let (merge_k, merge_v, merge_alone) = run(false);
                assert_eq!(radix_k, merge_k, "keys with values: {c}");
                assert_eq!(radix_v, merge_v, "values (stability): {c}");
                assert_eq!(radix_alone, merge_alone, "keys alone: {c}");
                assert_eq!(radix_k, radix_alone, "keys alone and with values: {c}");
                // Signed zeros: -0.0 and +0.0 are different keys (-0.0 first ascending).
                let zeros: Vec<u32> = radix_alone.iter().copied().filter(|&b| b & 0x7fff_ffff == 0).collect();
                let first = if descending { 0 } else { 0x8000_0000 };
                let split = zeros.iter().take_while(|&&b| b == first).count();
                assert!(zeros[split..].iter().all(|&b| b != first), "signed zeros grouped: {c}");
            }
        }
    }
}

/// Views sort in place, leaving the rest of the buffer alone.
#[test]
fn views() {
    for dev in devices() {
        let mut v = DeviceVec::from_slice(&dev, &[9u32, 8, 7, 6, 5, 4]).unwrap();
        v.slice_mut(1..5).unwrap().sort_by(Less).unwrap();
        assert_eq!(v.to_vec().unwrap(), vec![9, 5, 6, 7, 8, 4], "{dev:?}");
    }
}

/// Argument errors come back as errors before any work: both buffers stay
/// as they were.
#[test]
fn errors() {
    for dev in devices() {
        let mut k = DeviceVec::from_slice(&dev, &[3u32, 1, 2]).unwrap();
        let mut v = DeviceVec::from_slice(&dev, &[10i8, 20]).unwrap();
        let r = k.sort_pairs_by(Less, &mut v);
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
        assert_eq!(k.to_vec().unwrap(), vec![3, 1, 2]);
        assert_eq!(v.to_vec().unwrap(), vec![10, 20]);
        // Empty and single inputs are fine.
        let mut e = DeviceVec::<u32>::from_slice(&dev, &[]).unwrap();
        let mut ev = DeviceVec::<i8>::from_slice(&dev, &[]).unwrap();
        e.sort_by(Greater).unwrap();
        e.sort_pairs_by(Less, &mut ev).unwrap();
        assert!(e.to_vec().unwrap().is_empty());
    }
    let Some(gpu) = common::cuda() else {
        common::skip("sort_by errors", "no GPU for the device-mismatch checks");
        return;
    };
    let mut h = DeviceVec::from_slice(&Device::host(), &[2.0f32, 1.0]).unwrap();
    let mut g = DeviceVec::from_slice(&gpu, &[5u8, 6]).unwrap();
    assert!(matches!(h.sort_pairs_by(Less, &mut g), Err(Error::DeviceMismatch { .. })));
    assert_eq!(h.to_vec().unwrap(), vec![2.0, 1.0]);
    assert_eq!(g.to_vec().unwrap(), vec![5, 6]);
}

// ---------------------------------------------------------------------------
// Sorts of input expressions (`ExprOps::sorted_by`, `sorted_pairs_by`): on
// CUDA the tile sort reads the expression. Each against collecting the
// inputs and then `sort_by` / `sort_pairs_by`, bit for bit, and against
// the stable reference order.

cuprim::comparator! {
    /// By the last decimal digit only (many ties).
    struct LastDigit for i32, u32 {
        rust: |a, b| a % 10 < b % 10,
        cuda: "a % 10 < b % 10",
    }
}

/// `a` and `b` hold the same bytes (NaN payloads included).
#[track_caller]
fn assert_bits<T: Element>(got: &[T], want: &[T], context: &str) {
    assert_eq!(got.len(), want.len(), "length differs: {context}");
    let (g, w) = (bytemuck::cast_slice::<T, u8>(got), bytemuck::cast_slice::<T, u8>(want));
    if g != w {
        let first = (0..got.len())
            .find(|&i| bytemuck::bytes_of(&got[i]) != bytemuck::bytes_of(&want[i]))
            .unwrap_or(0);
        panic!("differs first at {first}: got {:?}, want {:?}: {context}", got[first], want[first]);
    }
}

/// `keys.sorted_by(cmp)` and `keys.sorted_pairs_by(cmp, values)` (and with
/// the positions as values: stability) against collecting them and then
/// `sort_by` / `sort_pairs_by`, bit for bit, and against `order`'s stable
/// order of the collected keys.
fn check_expr<K: Key, V: Element, E: Expr<Item = K>, VE: Expr<Item = V>, C: Comparator<K>>(
    dev: &Device,
    keys: &E,
    values: &VE,
    cmp: C,
    order: impl Fn(&K, &K) -> Ordering,
    c: &str,
) {
    let n = keys.len();
    let host_keys = keys.collect().unwrap().to_vec().unwrap();
    let perm = reference(&host_keys, order);
    let want_k: Vec<K> = perm.iter().map(|&i| host_keys[i]).collect();

    let fused = keys.sorted_by(cmp).unwrap_or_else(|e| panic!("sorted_by: {c}: {e}"));
    let mut plain = keys.collect().unwrap();
    plain.sort_by(cmp).unwrap();
    let fused = fused.to_vec().unwrap();
    assert_bits(&fused, &plain.to_vec().unwrap(), &format!("sorted_by against sort_by: {c}"));
    assert_bits(&fused, &want_k, &format!("sorted_by against the stable order: {c}"));

    let (fk, fv) = keys
        .sorted_pairs_by(cmp, values.clone())
        .unwrap_or_else(|e| panic!("sorted_pairs_by: {c}: {e}"));
    let (mut pk, mut pv) = (keys.collect().unwrap(), values.collect().unwrap());
    pk.sort_pairs_by(cmp, &mut pv).unwrap();
    assert_bits(&fk.to_vec().unwrap(), &pk.to_vec().unwrap(), &format!("sorted_pairs_by keys: {c}"));
    assert_bits(
        &fv.to_vec().unwrap(),
        &pv.to_vec().unwrap(),
        &format!("sorted_pairs_by values: {c}"),
    );
    let host_values = values.collect().unwrap().to_vec().unwrap();
    let want_v: Vec<V> = perm.iter().map(|&i| host_values[i]).collect();
    assert_bits(
        &fv.to_vec().unwrap(),
        &want_v,
        &format!("sorted_pairs_by values, stable order: {c}"),
    );

    let (sk, pos) = keys
        .sorted_pairs_by(cmp, counting(dev, 0u32, 1, n))
        .unwrap_or_else(|e| panic!("sorted_pairs_by positions: {c}: {e}"));
    assert_bits(&sk.to_vec().unwrap(), &want_k, &format!("sorted_pairs_by keys with positions: {c}"));
    let want_pos: Vec<u32> = perm.iter().map(|&i| i as u32).collect();
    assert_eq!(pos.to_vec().unwrap(), want_pos, "sorted_pairs_by positions (stability): {c}");
}

/// Sizes for the expression sorts: tiny, odd, at the edges of one tile of
/// keys alone and of pairs, several tiles (the merge passes); in release
/// builds also past `SMALL_TILES_BELOW` (4-byte keys alone in larger tiles).
fn expr_sizes() -> Vec<usize> {
    let t = sort_tile_elements::<f32, f32>(false, 0);
    let p = sort_tile_elements::<f32, u32>(true, 0);
    let mut s = vec![0, 1, 2, 31, t - 1, t, t + 1, 2 * t + 1, 5 * t + 3, p - 1, p + 1, 3 * p + 7];
    if !cfg!(debug_assertions) {
        s.push(SMALL_TILES_BELOW as usize + 3);
    }
    s.sort();
    s.dedup();
    common::capped(&s)
}

/// Counting, map, zip of two keys mapped, permutation and plain buffer
/// keys, with buffer and expression values of other types; user orders
/// with many ties, total orders over NaNs and signed zeros (`NotBuiltin`),
/// and the built-in `Less` / `Greater` (the radix sort of the expression).
#[test]
fn expressions_sort_as_their_collected_elements() {
    use cuprim::ops::{Abs, Cast, Mul, Negate};
    let (mut r, seed) = rng("sort_by_expressions");
    let devs = devices();
    let near = |a: &f32, b: &f32| (a - 0.5).abs().partial_cmp(&(b - 0.5).abs()).unwrap();
    let digit_u = |a: &u32, b: &u32| (a % 10).cmp(&(b % 10));
    let digit_i = |a: &i32, b: &i32| (a % 10).cmp(&(b % 10));
    for n in expr_sizes() {
        let x: Vec<f32> = random_vec(&mut r, n);
        let y: Vec<f32> = random_vec(&mut r, n);
        let grid: Vec<f32> = (0..n).map(|_| (r.next_u64() % 65) as f32 / 64.0).collect();
        let k: Vec<i32> = (0..n).map(|_| (r.next_u64() % 2001) as i32 - 1000).collect();
        let idx: Vec<u32> = (0..n).map(|_| (r.next_u64() % n as u64) as u32).collect();
        for dev in &devs {
            let c = |what: &str| ctx(dev, what, n, seed);
            let (dx, dy) = (DeviceVec::from_slice(dev, &x).unwrap(), DeviceVec::from_slice(dev, &y).unwrap());
            let dg = DeviceVec::from_slice(dev, &grid).unwrap();
            let dk = DeviceVec::from_slice(dev, &k).unwrap();
            let di = DeviceVec::from_slice(dev, &idx).unwrap();
            check_expr(
                dev,
                &counting(dev, 3u32, 7, n),
                &dk.lazy(),
                LastDigit,
                digit_u,
                &c("counting by last digit"),
            );
            check_expr(dev, &dg.map(Negate), &dx.lazy(), NearHalf, near, &c("map by NearHalf"));
            check_expr(
                dev,
                &zip(&dx, &dy).map(Mul),
                &dk.map(Cast::<u8>::new()),
                NotBuiltin(true),
                |a: &f32, b: &f32| b.total_cmp(a),
                &c("zip of two keys mapped, total order descending"),
            );
            check_expr(
                dev,
                &dk.permute(&di),
                &dx.map(Cast::<f64>::new()),
                LastDigit,
                digit_i,
                &c("permutation by last digit"),
            );
            check_expr(
                dev,
                &dx.lazy(),
                &dk.map(Abs),
                NotBuiltin(false),
                f32::total_cmp,
                &c("buffer, total order"),
            );
            check_expr(
                dev,
                &dx.lazy(),
                &dk.lazy(),
                NotBuiltin(false),
                f32::total_cmp,
                &c("buffers, total order"),
            );
            // The built-in orders: the radix sort of the expression, bit for
            // bit the merge sort's (NaN payloads, signed zeros).
            check_expr(dev, &dx.map(Negate), &dk.lazy(), Less, f32::total_cmp, &c("map, Less"));
            check_expr(
                dev,
                &dx.map(Negate),
                &dk.lazy(),
                Greater,
                |a: &f32, b: &f32| b.total_cmp(a),
                &c("map, Greater"),
            );
            let radix = dx.map(Negate).sorted_by(Greater).unwrap().to_vec().unwrap();
            let merge = dx.map(Negate).sorted_by(NotBuiltin(true)).unwrap().to_vec().unwrap();
            assert_bits(&radix, &merge, &c("Greater (radix) against the merge sort"));
        }
    }
}

/// Few distinct keys (every tile full of ties) from a map: the positions
/// show the fused tile sort and the passes stable.
#[test]
fn expression_sorts_are_stable() {
    use cuprim::ops::Abs;
    let (mut r, seed) = rng("sort_by_expression_ties");
    let devs = devices();
    for n in expr_sizes() {
        let k: Vec<i32> = (0..n).map(|_| (r.next_u64() % 7) as i32 - 3).collect();
        let values: Vec<u64> = (0..n).map(|_| r.next_u64()).collect();
        for dev in &devs {
            let dk = DeviceVec::from_slice(dev, &k).unwrap();
            let dv = DeviceVec::from_slice(dev, &values).unwrap();
            let c = ctx(dev, "few distinct |k| by last digit", n, seed);
            check_expr(
                dev,
                &dk.map(Abs),
                &dv.lazy(),
                LastDigit,
                |a: &i32, b: &i32| (a % 10).cmp(&(b % 10)),
                &c,
            );
        }
    }
}

/// NaNs of both signs (with payloads), infinities and signed zeros from a
/// map, under a user comparator that orders them (`total_cmp`): the same
/// bits as the collected sort, in Rust's `total_cmp` order.
#[test]
fn expression_sorts_order_nan_by_a_total_comparator() {
    use cuprim::ops::Negate;
    let pool = [
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7fc0_0001),
        f32::from_bits(0xffc0_0002),
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.5,
        -1.5,
    ];
    let (mut r, seed) = rng("sort_by_expression_nan");
    let t = sort_tile_elements::<f32, f32>(false, 0);
    for n in common::capped(&[10, t + 5, 3 * t]) {
        let x: Vec<f32> = (0..n).map(|_| pool[(r.next_u64() % pool.len() as u64) as usize]).collect();
        for dev in devices() {
            let dx = DeviceVec::from_slice(&dev, &x).unwrap();
            let c = ctx(&dev, "NaNs by a total order", n, seed);
            check_expr(
                &dev,
                &dx.map(Negate),
                &counting(&dev, 0i64, -1, n),
                NotBuiltin(false),
                f32::total_cmp,
                &c,
            );
            let mut want: Vec<f32> = x.iter().map(|v| -v).collect();
            want.sort_by(f32::total_cmp);
            let got = dx.map(Negate).sorted_by(NotBuiltin(false)).unwrap().to_vec().unwrap();
            assert_bits(&got, &want, &format!("{c}: Rust's total_cmp order"));
        }
    }
}

/// Errors, never panics: an index out of range in a permuted key or value
/// expression (one tile and several: the passes are not run), lengths that
/// differ (keys and values, or inside a zip); the inputs stay intact; empty
/// inputs give empty outputs.
#[test]
fn expression_sort_errors() {
    use cuprim::ops::Mul;
    let t = sort_tile_elements::<f32, u32>(true, 0);
    for n in common::capped(&[1, 33, 3 * t + 1]) {
        for dev in devices() {
            let c = ctx(&dev, "expression sort errors", n, 0);
            let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
            let bad: Vec<u32> = (0..n as u32).map(|i| if i == n as u32 / 2 { n as u32 } else { i }).collect();
            let dx = DeviceVec::from_slice(&dev, &x).unwrap();
            let db = DeviceVec::from_slice(&dev, &bad).unwrap();
            let oob = |r: cuprim::Result<()>, what: &str| match r {
                Err(Error::IndexOutOfBounds { len, .. }) => assert_eq!(len, n, "{c}: {what}"),
                other => panic!("{c}: {what}: expected IndexOutOfBounds, got {other:?}"),
            };
            oob(dx.permute(&db).sorted_by(NearHalf).map(|_| ()), "sorted_by");
            oob(
                dx.permute(&db).sorted_pairs_by(NearHalf, counting(&dev, 0u32, 1, n)).map(|_| ()),
                "sorted_pairs_by, permuted keys",
            );
            oob(
                dx.lazy().sorted_pairs_by(NearHalf, dx.permute(&db)).map(|_| ()),
                "sorted_pairs_by, permuted values",
            );
            oob(dx.permute(&db).sorted_by(Less).map(|_| ()), "sorted_by Less");
            let short = dx.lazy().sorted_pairs_by(NearHalf, counting(&dev, 0u32, 1, n + 1));
            assert!(
                matches!(short, Err(Error::LengthMismatch { expected, actual, .. }) if expected == n && actual == n + 1),
                "{c}: {short:?}"
            );
            let short = dx.lazy().sorted_pairs_by(Greater, counting(&dev, 0u8, 1, n - 1));
            assert!(matches!(short, Err(Error::LengthMismatch { .. })), "{c}: {short:?}");
            let uneven = zip(&dx, counting(&dev, 0.0f32, 1.0, n + 1)).map(Mul).sorted_by(NearHalf);
            assert!(matches!(uneven, Err(Error::LengthMismatch { .. })), "{c}: {uneven:?}");
            assert_bits(&dx.to_vec().unwrap(), &x, &format!("{c}: keys intact"));
            assert_eq!(db.to_vec().unwrap(), bad, "{c}: indices intact");
        }
    }
    for dev in devices() {
        let e = DeviceVec::<f32>::from_slice(&dev, &[]).unwrap();
        assert!(e.lazy().sorted_by(NearHalf).unwrap().to_vec().unwrap().is_empty());
        let (k, v) = e.lazy().sorted_pairs_by(NearHalf, counting(&dev, 0i8, 1, 0)).unwrap();
        assert!(k.to_vec().unwrap().is_empty() && v.to_vec().unwrap().is_empty());
    }
    let Some(gpu) = common::cuda() else {
        common::skip("expression sort errors", "no GPU for the device-mismatch check");
        return;
    };
    let h = DeviceVec::from_slice(&Device::host(), &[2.0f32, 1.0]).unwrap();
    let g = DeviceVec::from_slice(&gpu, &[5u8, 6]).unwrap();
    assert!(matches!(h.lazy().sorted_pairs_by(NearHalf, &g), Err(Error::DeviceMismatch { .. })));
}
