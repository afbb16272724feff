//! The by-key family (reduce_by_key, unique, unique_by_key, unique_count,
//! run_length_encode and the `_into` forms, plus copy_if_into) against
//! plain sequential references, on every device.

mod common;

use common::{assert_same, Sample, TestRng};
use cuprim::cmp::{Comparator, Less};
use cuprim::ops::Max;
use cuprim::pred::Gt;
use cuprim::prelude::*;
use cuprim::{Element, Scalar};
use rand::Rng;

cuprim::binary_op! {
    /// Keep the right operand unless it is zero: associative, not commutative.
    pub struct KeepRightNonZero for i32, u32 {
        rust: |a, b| if b != 0 { b } else { a },
        cuda: "(b != 0 ? b : a)",
        identity: 0,
    }
}

/// Sizes: awkward ones around the tile shapes, plus one past a million.
fn sizes() -> Vec<usize> {
    common::capped(&[0, 1, 2, 31, 33, 4095, 4097, 6145, 65_537, (1 << 20) + 3])
}

/// How run lengths are drawn.
#[derive(Clone, Copy, Debug)]
enum Runs {
    /// Every run of length 1.
    Ones,
    /// One run over the whole input.
    Whole,
    /// Runs of 64 (the bench's input).
    Run64,
    /// Lengths 1 to 8 mostly, sometimes up to 10 000 (runs across tiles).
    Random,
    /// Runs of 4096 over the first 60% of the input, then of one element:
    /// the chunked kernels' pieces grow long on the sparse heads, then
    /// overflow where they turn dense.
    Thinning,
}

const RUNS: [Runs; 5] = [Runs::Ones, Runs::Whole, Runs::Run64, Runs::Random, Runs::Thinning];

/// Run ids 0, 1, 2, ... per element, each as a key of type `K` (neighbouring
/// ids can become equal keys in narrow float types: the references use the
/// same keys, so that only merges runs).
fn keys_of<K: Element>(r: &mut TestRng, n: usize, runs: Runs) -> Vec<K> {
    let mut out = Vec::with_capacity(n);
    let mut id = r.gen_range(0u32..1000);
    while out.len() < n {
        let len = match runs {
            Runs::Ones => 1,
            Runs::Whole => n,
            Runs::Run64 => 64,
            Runs::Thinning if out.len() < n / 10 * 6 => 4096,
            Runs::Thinning => 1,
            Runs::Random => {
                if r.gen_range(0..16) == 0 {
                    r.gen_range(1..10_000)
                } else {
                    r.gen_range(1..9)
                }
            }
        };
        let k = K::from_scalar(Scalar::U32(id));
        out.extend(std::iter::repeat_n(k, len.min(n - out.len())));
        id = id.wrapping_add(1);
    }
    out
}

/// The index of the first element of each run (`keys[i] != keys[i - 1]`).
fn ref_heads<K: PartialEq>(keys: &[K]) -> Vec<usize> {
    (0..keys.len()).filter(|&i| i == 0 || keys[i] != keys[i - 1]).collect()
}

fn ref_reduce<K: Copy + PartialEq, V: Copy>(keys: &[K], vals: &[V], op: impl Fn(V, V) -> V) -> (Vec<K>, Vec<V>) {
    let (mut ks, mut vs) = (Vec::new(), Vec::<V>::new());
    for i in 0..keys.len() {
        if i == 0 || keys[i] != keys[i - 1] {
            ks.push(keys[i]);
            vs.push(vals[i]);
        } else {
            let last = vs.len() - 1;
            vs[last] = op(vs[last], vals[i]);
        }
    }
    (ks, vs)
}

fn ref_rle<K: Copy + PartialEq>(keys: &[K]) -> (Vec<K>, Vec<u64>) {
    let heads = ref_heads(keys);
    let lengths = heads
        .iter()
        .enumerate()
        .map(|(r, &h)| (heads.get(r + 1).copied().unwrap_or(keys.len()) - h) as u64);
    (heads.iter().map(|&h| keys[h]).collect(), lengths.collect())
}

/// unique, unique_count, unique_by_key, run_length_encode (both widths) and
/// unique_into of keys `K` with values `V`.
fn check_unique<K: Sample, V: Sample>(tag: &str) {
    for dev in common::devices() {
        for n in sizes() {
            for runs in RUNS {
                let (mut r, seed) = common::rng(&format!("{tag}-{n}-{runs:?}"));
                let ctx = common::ctx(&dev, &format!("{tag} {runs:?}"), n, seed);
                let keys: Vec<K> = keys_of(&mut r, n, runs);
                let vals: Vec<V> = common::random_vec(&mut r, n);
                let heads = ref_heads(&keys);
                let want_keys: Vec<K> = heads.iter().map(|&h| keys[h]).collect();
                let dk = DeviceVec::from_slice(&dev, &keys).unwrap();
                let dv = DeviceVec::from_slice(&dev, &vals).unwrap();

                assert_same(&dk.unique().unwrap().to_vec().unwrap(), &want_keys, &format!("unique {ctx}"));
                assert_eq!(dk.unique_count().unwrap(), heads.len(), "unique_count {ctx}");

                let (uk, uv) = dk.unique_by_key(&dv).unwrap();
                assert_same(&uk.to_vec().unwrap(), &want_keys, &format!("unique_by_key keys {ctx}"));
                let want_vals: Vec<V> = heads.iter().map(|&h| vals[h]).collect();
                assert_same(&uv.to_vec().unwrap(), &want_vals, &format!("unique_by_key values {ctx}"));

                let (want_rk, want_len) = ref_rle(&keys);
                let (rk, rl) = dk.run_length_encode().unwrap();
                assert_same(&rk.to_vec().unwrap(), &want_rk, &format!("rle keys {ctx}"));
                let want32: Vec<u32> = want_len.iter().map(|&l| l as u32).collect();
                assert_eq!(rl.to_vec().unwrap(), want32, "rle lengths {ctx}");
                let (rk, rl) = dk.run_length_encode_with::<u64>().unwrap();
                assert_same(&rk.to_vec().unwrap(), &want_rk, &format!("rle u64 keys {ctx}"));
                assert_eq!(rl.to_vec().unwrap(), want_len, "rle u64 lengths {ctx}");

                // The _into form: a longer output, its tail untouched, the count on the device.
                let fill = K::from_scalar(Scalar::U32(7));
                let mut out = DeviceVec::from_slice(&dev, &vec![fill; n + 3]).unwrap();
                let mut count = DeviceVec::from_slice(&dev, &[u64::MAX, 5]).unwrap();
                dk.unique_into(&mut out, &mut count).unwrap();
                let c = count.to_vec().unwrap();
                assert_eq!(c, vec![heads.len() as u64, 5], "unique_into count {ctx}");
                let got = out.to_vec().unwrap();
                assert_same(&got[..heads.len()], &want_keys, &format!("unique_into {ctx}"));
                assert_same(&got[n..], &[fill; 3], &format!("unique_into tail {ctx}"));

                // Run lengths into caller buffers (u32 lengths), tails untouched.
                let mut rko = DeviceVec::from_slice(&dev, &vec![fill; n + 2]).unwrap();
                let mut rlo = DeviceVec::from_slice(&dev, &vec![u32::MAX; n + 2]).unwrap();
                let mut count = DeviceVec::from_slice(&dev, &[u64::MAX]).unwrap();
                dk.run_length_encode_into(&mut rko, &mut rlo, &mut count).unwrap();
                assert_eq!(count.to_vec().unwrap(), vec![want_rk.len() as u64], "rle_into count {ctx}");
                let (gk, gl) = (rko.to_vec().unwrap(), rlo.to_vec().unwrap());
                assert_same(&gk[..want_rk.len()], &want_rk, &format!("rle_into keys {ctx}"));
                assert_eq!(gl[..want_rk.len()], want32[..], "rle_into lengths {ctx}");
                assert_same(&gk[n..], &[fill; 2], &format!("rle_into key tail {ctx}"));
                assert_eq!(gl[n..], [u32::MAX; 2], "rle_into length tail {ctx}");
            }
        }
    }
}

#[test]
fn unique_u8_keys_i32_values() {
    check_unique::<u8, i32>("u8-i32");
}
#[test]
fn unique_i32_keys_f64_values() {
    check_unique::<i32, f64>("i32-f64");
}
#[test]
fn unique_u64_keys_u8_values() {
    check_unique::<u64, u8>("u64-u8");
}
#[test]
fn unique_f32_keys_f16_values() {
    check_unique::<f32, f16>("f32-f16");
}
#[test]
fn unique_f16_keys_u32_values() {
    check_unique::<f16, u32>("f16-u32");
}

/// reduce_by_key and reduce_by_key_into of keys `K`, values `V` built from
/// small integers (so float sums are exact and the device's grouping gives
/// the reference's bits), under `op`.
fn check_reduce<K: Sample, V: Sample, Op: cuprim::ops::Monoid<V>>(tag: &str, op: Op) {
    for dev in common::devices() {
        for n in sizes() {
            for runs in RUNS {
                let (mut r, seed) = common::rng(&format!("{tag}-{n}-{runs:?}"));
                let ctx = common::ctx(&dev, &format!("{tag} {runs:?}"), n, seed);
                let keys: Vec<K> = keys_of(&mut r, n, runs);
                let vals: Vec<V> = (0..n).map(|_| V::from_scalar(Scalar::I32(r.gen_range(-3..4)))).collect();
                let (want_k, want_v) = ref_reduce(&keys, &vals, |a, b| op.apply(a, b));
                let dk = DeviceVec::from_slice(&dev, &keys).unwrap();
                let dv = DeviceVec::from_slice(&dev, &vals).unwrap();
                let (gk, gv) = dk.reduce_by_key(&dv, op).unwrap();
                assert_same(&gk.to_vec().unwrap(), &want_k, &format!("reduce_by_key keys {ctx}"));
                assert_same(&gv.to_vec().unwrap(), &want_v, &format!("reduce_by_key values {ctx}"));

                let mut ko = DeviceVec::<K>::zeros(&dev, n + 1).unwrap();
                let mut vo = DeviceVec::<V>::zeros(&dev, n).unwrap();
                let mut count = DeviceVec::<u64>::zeros(&dev, 1).unwrap();
                dk.reduce_by_key_into(&dv, op, &mut ko, &mut vo, &mut count).unwrap();
                let runs_found = count.to_vec().unwrap()[0] as usize;
                assert_eq!(runs_found, want_k.len(), "reduce_by_key_into count {ctx}");
                assert_same(
                    &ko.to_vec().unwrap()[..runs_found],
                    &want_k,
                    &format!("reduce_by_key_into keys {ctx}"),
                );
                assert_same(
                    &vo.to_vec().unwrap()[..runs_found],
                    &want_v,
                    &format!("reduce_by_key_into values {ctx}"),
                );
            }
        }
    }
}

#[test]
fn reduce_by_key_u32_keys_f32_add() {
    check_reduce::<u32, f32, _>("u32-f32-add", Add);
}
#[test]
fn reduce_by_key_u8_keys_i64_add() {
    check_reduce::<u8, i64, _>("u8-i64-add", Add);
}
#[test]
fn reduce_by_key_f16_keys_f64_max() {
    check_reduce::<f16, f64, _>("f16-f64-max", Max);
}
#[test]
fn reduce_by_key_u64_keys_i32_non_commutative() {
    check_reduce::<u64, i32, _>("u64-i32-keepright", KeepRightNonZero);
}
/// f16 with Max: f16 sums of long runs would round (integers are exact to 2048 only).
#[test]
fn reduce_by_key_i32_keys_f16_max() {
    check_reduce::<i32, f16, _>("i32-f16-max", Max);
}

/// NaN keys are runs of their own; -0.0 continues a run of 0.0 and the
/// run's first key is the one written.
#[test]
fn nan_and_signed_zero_keys() {
    let nan = f32::NAN;
    let keys = [nan, nan, 0.0, -0.0, 0.0, -0.0, -0.0, 1.0, nan, 1.0, 1.0];
    let vals: Vec<u32> = (1..=keys.len() as u32).collect();
    let want_keys = [nan, nan, 0.0, 1.0, nan, 1.0];
    for dev in common::devices() {
        let dk = DeviceVec::from_slice(&dev, &keys).unwrap();
        let dv = DeviceVec::from_slice(&dev, &vals).unwrap();
        let (k, v) = dk.reduce_by_key(&dv, Add).unwrap();
        assert_same(&k.to_vec().unwrap(), &want_keys, &format!("{dev:?}"));
        assert_eq!(v.to_vec().unwrap(), vec![1, 2, 3 + 4 + 5 + 6 + 7, 8, 9, 10 + 11], "{dev:?}");
        assert_eq!(dk.unique_count().unwrap(), 6, "{dev:?}");
        let (_, lengths) = dk.run_length_encode().unwrap();
        assert_eq!(lengths.to_vec().unwrap(), vec![1, 1, 5, 1, 1, 2], "{dev:?}");
        // The first key of the run of zeros is -0.0 when it comes first.
        let dk = DeviceVec::from_slice(&dev, &[-0.0f32, 0.0, 2.0]).unwrap();
        let u = dk.unique().unwrap().to_vec().unwrap();
        assert_eq!(
            u.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            vec![(-0.0f32).to_bits(), 2.0f32.to_bits()]
        );
        // f16 keys follow the same rule.
        let h = |x: f32| f16::from_f32(x);
        let dk = DeviceVec::from_slice(&dev, &[h(f32::NAN), h(f32::NAN), h(-0.0), h(0.0), h(3.0)]).unwrap();
        assert_eq!(dk.unique_count().unwrap(), 4, "f16 {dev:?}");
        // Under Less (total order): NaNs with the same bits are equal, -0.0 and 0.0 are not.
        let dk = DeviceVec::from_slice(&dev, &keys).unwrap();
        let (k, v) = dk.reduce_by_key_by(&dv, Add, Less).unwrap();
        assert_eq!(k.len(), 8, "by Less {dev:?}");
        assert_eq!(v.to_vec().unwrap(), vec![1 + 2, 3, 4, 5, 6 + 7, 8, 9, 10 + 11], "by Less {dev:?}");
    }
}

/// reduce_by_key_by with a comparator against the reference with its equivalence.
#[test]
fn reduce_by_key_by_comparator() {
    for dev in common::devices() {
        for n in sizes() {
            let (mut r, seed) = common::rng(&format!("by-{n}"));
            let ctx = common::ctx(&dev, "reduce_by_key_by", n, seed);
            let keys: Vec<f64> = keys_of(&mut r, n, Runs::Random);
            let vals: Vec<u32> = (0..n).map(|_| r.gen()).collect();
            let equal = |a: f64, b: f64| !(Less.less(a, b) || Less.less(b, a));
            let (mut wk, mut wv) = (Vec::new(), Vec::<u32>::new());
            for i in 0..n {
                if i == 0 || !equal(keys[i - 1], keys[i]) {
                    wk.push(keys[i]);
                    wv.push(vals[i]);
                } else {
                    let l = wv.len() - 1;
                    wv[l] = wv[l].wrapping_add(vals[i]);
                }
            }
            let dk = DeviceVec::from_slice(&dev, &keys).unwrap();
            let dv = DeviceVec::from_slice(&dev, &vals).unwrap();
            let (k, v) = dk.reduce_by_key_by(&dv, Add, Less).unwrap();
            assert_same(&k.to_vec().unwrap(), &wk, &ctx);
            assert_eq!(v.to_vec().unwrap(), wv, "{ctx}");
        }
    }
}

/// Random f32 values: the same bits on every call (deterministic mode),
/// within rounding of the sequential fold.
#[test]
fn reduce_by_key_floats_deterministic() {
    for dev in common::devices() {
        for n in sizes() {
            let (mut r, seed) = common::rng(&format!("det-{n}"));
            let ctx = common::ctx(&dev, "deterministic", n, seed);
            let keys: Vec<u32> = keys_of(&mut r, n, Runs::Random);
            let vals: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0f32..1.0)).collect();
            let dk = DeviceVec::from_slice(&dev, &keys).unwrap();
            let dv = DeviceVec::from_slice(&dev, &vals).unwrap();
            let first = dk.reduce_by_key(&dv, Add).unwrap().1.to_vec().unwrap();
            for _ in 0..3 {
                let again = dk.reduce_by_key(&dv, Add).unwrap().1.to_vec().unwrap();
                assert_same(&again, &first, &ctx);
            }
            let heads = ref_heads(&keys);
            let (_, want) = ref_reduce(&keys, &vals.iter().map(|&x| x as f64).collect::<Vec<_>>(), |a, b| a + b);
            assert_eq!(first.len(), want.len(), "{ctx}");
            for (i, (&g, &w)) in first.iter().zip(&want).enumerate() {
                let end = heads.get(i + 1).copied().unwrap_or(n);
                let bound = 1e-6 * ((end - heads[i]) as f64 + 8.0);
                assert!((g as f64 - w).abs() <= bound, "run {i}: {g} vs {w} {ctx}");
            }
        }
    }
}

/// copy_if_into: the kept elements at the front, the count on the device.
#[test]
fn copy_if_into_matches_copy_if() {
    for dev in common::devices() {
        for n in sizes() {
            let (mut r, seed) = common::rng(&format!("copy-if-into-{n}"));
            let ctx = common::ctx(&dev, "copy_if_into", n, seed);
            let data: Vec<u32> = (0..n).map(|_| r.gen()).collect();
            let want: Vec<u32> = data.iter().copied().filter(|&x| x > u32::MAX / 2).collect();
            let v = DeviceVec::from_slice(&dev, &data).unwrap();
            let mut out = DeviceVec::from_slice(&dev, &vec![3u32; n + 2]).unwrap();
            let mut count = DeviceVec::from_slice(&dev, &[u64::MAX]).unwrap();
            v.copy_if_into(Gt(u32::MAX / 2), &mut out, &mut count).unwrap();
            assert_eq!(count.to_vec().unwrap(), vec![want.len() as u64], "{ctx}");
            let got = out.to_vec().unwrap();
            assert_eq!(&got[..want.len()], &want[..], "{ctx}");
            assert_eq!(&got[n..], &[3, 3], "tail {ctx}");
            assert_eq!(v.copy_if(Gt(u32::MAX / 2)).unwrap().to_vec().unwrap(), want, "copy_if {ctx}");
        }
    }
}

/// Short outputs, an empty count and mismatched lengths are errors, and
/// the caller's buffers are left as they were.
#[test]
fn errors_leave_buffers_intact() {
    for dev in common::devices() {
        let keys = DeviceVec::from_slice(&dev, &[1u32, 1, 2, 3]).unwrap();
        let vals = DeviceVec::from_slice(&dev, &[1i32, 2, 3, 4]).unwrap();
        let short_vals = DeviceVec::from_slice(&dev, &[1i32, 2, 3]).unwrap();
        let mut ko = DeviceVec::from_slice(&dev, &[9u32; 4]).unwrap();
        let mut ko_short = DeviceVec::from_slice(&dev, &[9u32; 3]).unwrap();
        let mut vo = DeviceVec::from_slice(&dev, &[9i32; 4]).unwrap();
        let mut vo_short = DeviceVec::from_slice(&dev, &[9i32; 3]).unwrap();
        let mut count = DeviceVec::from_slice(&dev, &[77u64]).unwrap();
        let mut no_count = DeviceVec::<u64>::zeros(&dev, 0).unwrap();

        let e = keys.reduce_by_key(&short_vals, Add).unwrap_err();
        assert!(matches!(e, Error::LengthMismatch { .. }), "{e}");
        let e = keys.unique_by_key(&short_vals).unwrap_err();
        assert!(matches!(e, Error::LengthMismatch { .. }), "{e}");
        let e = keys.reduce_by_key_into(&vals, Add, &mut ko_short, &mut vo, &mut count).unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument(ref m) if m.contains("reduce_by_key_into")),
            "{e}"
        );
        let e = keys.reduce_by_key_into(&vals, Add, &mut ko, &mut vo_short, &mut count).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
        let e = keys.reduce_by_key_into(&vals, Add, &mut ko, &mut vo, &mut no_count).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
        let e = keys.reduce_by_key_into(&short_vals, Add, &mut ko, &mut vo, &mut count).unwrap_err();
        assert!(matches!(e, Error::LengthMismatch { .. }), "{e}");
        let e = keys.unique_into(&mut ko_short, &mut count).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(ref m) if m.contains("unique_into")), "{e}");
        let e = keys.unique_into(&mut ko, &mut no_count).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
        let mut lo = DeviceVec::from_slice(&dev, &[9u64; 4]).unwrap();
        let e = keys.run_length_encode_into(&mut ko_short, &mut lo, &mut count).unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument(ref m) if m.contains("run_length_encode_into")),
            "{e}"
        );
        let e = keys.run_length_encode_into(&mut ko, &mut lo, &mut no_count).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
        assert_eq!(lo.to_vec().unwrap(), vec![9; 4], "{dev:?}");
        let e = keys.copy_if_into(Gt(1), &mut ko_short, &mut count).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(ref m) if m.contains("copy_if_into")), "{e}");
        let e = keys.copy_if_into(Gt(1), &mut ko, &mut no_count).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");

        assert_eq!(ko.to_vec().unwrap(), vec![9; 4], "{dev:?}");
        assert_eq!(ko_short.to_vec().unwrap(), vec![9; 3], "{dev:?}");
        assert_eq!(vo.to_vec().unwrap(), vec![9; 4], "{dev:?}");
        assert_eq!(vo_short.to_vec().unwrap(), vec![9; 3], "{dev:?}");
        assert_eq!(count.to_vec().unwrap(), vec![77], "{dev:?}");

        // Empty inputs: no runs, and the _into forms write a zero count.
        let empty = DeviceVec::<u32>::zeros(&dev, 0).unwrap();
        assert_eq!(empty.unique_count().unwrap(), 0);
        assert!(empty.unique().unwrap().is_empty());
        let (k, l) = empty.run_length_encode().unwrap();
        assert!(k.is_empty() && l.is_empty());
        let mut eo = DeviceVec::<u32>::zeros(&dev, 0).unwrap();
        empty.unique_into(&mut eo, &mut count).unwrap();
        assert_eq!(count.to_vec().unwrap(), vec![0], "{dev:?}");
        let mut count = DeviceVec::from_slice(&dev, &[77u64]).unwrap();
        let mut el = DeviceVec::<u32>::zeros(&dev, 0).unwrap();
        empty.run_length_encode_into(&mut eo, &mut el, &mut count).unwrap();
        assert_eq!(count.to_vec().unwrap(), vec![0], "{dev:?}");
    }
    // Devices must match (host and CUDA), when both exist.
    let devs = common::devices();
    if devs.len() > 1 {
        let keys = DeviceVec::from_slice(&devs[0], &[1u32, 2]).unwrap();
        let vals = DeviceVec::from_slice(&devs[1], &[1u32, 2]).unwrap();
        let e = keys.reduce_by_key(&vals, Add).unwrap_err();
        assert!(matches!(e, Error::DeviceMismatch { .. }), "{e}");
    }
}

/// Inputs of many tiles per resident block (the persistent kernel cycles its
/// shared-memory stages several times), misaligned by one element as well:
/// unique, run lengths and f32 sums against the references.
#[test]
fn many_tiles_per_block() {
    for dev in common::devices() {
        for n in common::capped(&[(3 << 22) + 7]) {
            for runs in [Runs::Random, Runs::Ones, Runs::Run64] {
                let (mut r, seed) = common::rng(&format!("many-tiles-{n}-{runs:?}"));
                let ctx = common::ctx(&dev, &format!("many tiles {runs:?}"), n, seed);
                let keys: Vec<u32> = keys_of(&mut r, n + 1, runs);
                let vals: Vec<i32> = (0..=n).map(|_| r.gen_range(-3..4)).collect();
                let dk_all = DeviceVec::from_slice(&dev, &keys).unwrap();
                let dv_all = DeviceVec::from_slice(&dev, &vals).unwrap();
                for skip in [0usize, 1] {
                    let (k, v) = (&keys[skip..skip + n], &vals[skip..skip + n]);
                    let dk = dk_all.slice(skip..skip + n).unwrap();
                    let dv = dv_all.slice(skip..skip + n).unwrap();
                    let heads = ref_heads(k);
                    let want_keys: Vec<u32> = heads.iter().map(|&h| k[h]).collect();
                    assert_eq!(dk.unique().unwrap().to_vec().unwrap(), want_keys, "unique skip {skip} {ctx}");
                    let (want_rk, want_len) = ref_rle(k);
                    let (rk, rl) = dk.run_length_encode().unwrap();
                    assert_eq!(rk.to_vec().unwrap(), want_rk, "rle keys skip {skip} {ctx}");
                    let want32: Vec<u32> = want_len.iter().map(|&l| l as u32).collect();
                    assert_eq!(rl.to_vec().unwrap(), want32, "rle lengths skip {skip} {ctx}");
                    let (want_k, want_v) = ref_reduce(k, v, |a, b| a + b);
                    let (gk, gv) = dk.reduce_by_key(&dv, Add).unwrap();
                    assert_eq!(gk.to_vec().unwrap(), want_k, "reduce keys skip {skip} {ctx}");
                    assert_eq!(gv.to_vec().unwrap(), want_v, "reduce values skip {skip} {ctx}");
                }
            }
        }
    }
}

/// unique, unique_count and unique_into of a million keys or more: unique
/// compacts the run heads (from 2^21 keys and 4 MiB, the bulk-copy tiles
/// on sm_90), unique_count counts them by pieces. Every key its own run
/// (8-, 4- and 1-byte keys), runs of 4096 turning into runs of one, random
/// lengths, 64 and the whole input; a slice off the vector boundary (the
/// tiles' unaligned path), a permuted view, and a permutation out of range
/// (an error, the keys intact). Release builds only (up to 30 million keys).
#[test]
fn unique_of_long_inputs() {
    fn check<K: Sample>(dev: &Device, n: usize, runs: Runs, tag: &str) {
        let (mut r, seed) = common::rng(&format!("chunks-{tag}-{n}-{runs:?}"));
        let ctx = common::ctx(dev, &format!("long unique {tag} {runs:?}"), n, seed);
        let keys: Vec<K> = keys_of(&mut r, n, runs);
        let heads = ref_heads(&keys);
        let want: Vec<K> = heads.iter().map(|&h| keys[h]).collect();
        let dk = DeviceVec::from_slice(dev, &keys).unwrap();
        assert_same(&dk.unique().unwrap().to_vec().unwrap(), &want, &format!("unique {ctx}"));
        assert_eq!(dk.unique_count().unwrap(), heads.len(), "unique_count {ctx}");
        let fill = K::from_scalar(Scalar::U32(3));
        let mut out = DeviceVec::from_slice(dev, &vec![fill; n + 1]).unwrap();
        let mut count = DeviceVec::from_slice(dev, &[u64::MAX]).unwrap();
        dk.unique_into(&mut out, &mut count).unwrap();
        assert_eq!(count.to_vec().unwrap(), vec![heads.len() as u64], "unique_into count {ctx}");
        let got = out.to_vec().unwrap();
        assert_same(&got[..heads.len()], &want, &format!("unique_into {ctx}"));
        assert_same(&got[n..], &[fill], &format!("unique_into tail {ctx}"));
        // A slice off the 16-byte boundary: element loads.
        let tail = &keys[1..];
        let th: Vec<K> = ref_heads(tail).iter().map(|&h| tail[h]).collect();
        assert_same(
            &dk.slice(1..).unwrap().unique().unwrap().to_vec().unwrap(),
            &th,
            &format!("unique of a slice {ctx}"),
        );
    }
    if cfg!(debug_assertions) {
        return;
    }
    // Under a sanitizer (CUPRIM_TEST_MAX_N set) the sizes stay just past
    // the run count's pieces' threshold (2^20), in unique's register tiles.
    let sanitizer = common::size_cap() < (1 << 21);
    for dev in common::devices() {
        for runs in RUNS {
            check::<u32>(&dev, if sanitizer { (1 << 20) + 7 } else { 6_000_011 }, runs, "u32");
        }
        if !sanitizer {
            check::<u8>(&dev, 30_000_001, Runs::Ones, "u8");
            check::<u8>(&dev, 30_000_001, Runs::Thinning, "u8");
            // Long enough that the pieces outgrow the heads a block keeps
            // (a wave's share), so the dense part overflows them.
            check::<u32>(&dev, 20_000_003, Runs::Thinning, "u32");
        }
        for runs in [Runs::Ones, Runs::Thinning] {
            check::<f64>(&dev, if sanitizer { (1 << 20) + 1 } else { 3_000_001 }, runs, "f64");
        }
        check::<f32>(&dev, (1 << 20) + 5, Runs::Random, "f32");
        // Through a permutation: the reversed keys, then an index out of range.
        let n = if sanitizer { (1 << 20) + 3 } else { 2_000_003 };
        let keys: Vec<u32> = (0..n as u32).map(|i| i / 5).collect();
        let dk = DeviceVec::from_slice(&dev, &keys).unwrap();
        let rev: Vec<u32> = (0..n as u32).rev().collect();
        let idx = DeviceVec::from_slice(&dev, &rev).unwrap();
        let want: Vec<u32> = (0..=((n as u32 - 1) / 5)).rev().collect();
        assert_eq!(
            dk.permute(&idx).unique().unwrap().to_vec().unwrap(),
            want,
            "unique of a permutation"
        );
        assert_eq!(
            dk.permute(&idx).unique_count().unwrap(),
            want.len(),
            "unique_count of a permutation"
        );
        let mut bad = rev.clone();
        bad[n / 2] = n as u32;
        let bad = DeviceVec::from_slice(&dev, &bad).unwrap();
        let err = dk.permute(&bad).unique().unwrap_err();
        assert!(matches!(err, cuprim::Error::IndexOutOfBounds { .. }), "{err:?}");
        assert_eq!(dk.to_vec().unwrap(), keys, "the keys changed");
    }
}

/// reduce_by_key (and _into, _by, of expressions) and run_length_encode
/// (both widths, _into) of 2^22 and 2^20 elements or more take the chunked
/// kernel (`kernels/bykey/reduce_chunks.cu`): sizes about the thresholds
/// (one less takes the tile kernel) and well past them; runs of one element
/// (every chunk's records overflow and the rest is read again), random
/// lengths, 64, runs of a million (each across several chunks) and the
/// whole input; f32 / f64 / i64 / f16 values, u8 / u32 / u64 / f32 keys, a
/// non-commutative operator; a slice off the vector boundary and a mapped
/// and a permuted expression; poisoned `_into` outputs past the runs kept.
/// Float values are small integers, so every grouping gives the
/// reference's bits. Release builds only (up to 6 million elements).
/// reduce_by_key and reduce_by_key_into of `n` elements against the
/// reference: poisoned outputs (their tails kept), the count on the
/// device, and a slice off the 16-byte boundary (element loads).
fn check_long_reduce<K: Sample, V: Sample, Op: cuprim::ops::Monoid<V>>(dev: &Device, n: usize, runs: Runs, op: Op, tag: &str) {
    let (mut r, seed) = common::rng(&format!("rlong-{tag}-{n}-{runs:?}"));
    let ctx = common::ctx(dev, &format!("long reduce_by_key {tag} {runs:?}"), n, seed);
    let keys: Vec<K> = match runs {
        // Runs of a million: each spans several chunks.
        Runs::Whole if n > 3_000_000 => (0..n).map(|i| K::from_scalar(Scalar::U32((i / 1_000_003) as u32))).collect(),
        _ => keys_of(&mut r, n, runs),
    };
    let vals: Vec<V> = (0..n).map(|_| V::from_scalar(Scalar::I32(r.gen_range(-3..4)))).collect();
    let (want_k, want_v) = ref_reduce(&keys, &vals, |a, b| op.apply(a, b));
    let dk = DeviceVec::from_slice(dev, &keys).unwrap();
    let dv = DeviceVec::from_slice(dev, &vals).unwrap();
    let (gk, gv) = dk.reduce_by_key(&dv, op).unwrap();
    assert_same(&gk.to_vec().unwrap(), &want_k, &format!("reduce_by_key keys {ctx}"));
    assert_same(&gv.to_vec().unwrap(), &want_v, &format!("reduce_by_key values {ctx}"));
    let kfill = K::from_scalar(Scalar::U32(3));
    let vfill = V::from_scalar(Scalar::I32(5));
    let mut ko = DeviceVec::from_slice(dev, &vec![kfill; n + 1]).unwrap();
    let mut vo = DeviceVec::from_slice(dev, &vec![vfill; n + 1]).unwrap();
    let mut count = DeviceVec::from_slice(dev, &[u64::MAX]).unwrap();
    dk.reduce_by_key_into(&dv, op, &mut ko, &mut vo, &mut count).unwrap();
    let runs_found = want_k.len();
    assert_eq!(count.to_vec().unwrap(), vec![runs_found as u64], "reduce_by_key_into count {ctx}");
    let (gk, gv) = (ko.to_vec().unwrap(), vo.to_vec().unwrap());
    assert_same(&gk[..runs_found], &want_k, &format!("reduce_by_key_into keys {ctx}"));
    assert_same(&gv[..runs_found], &want_v, &format!("reduce_by_key_into values {ctx}"));
    assert_same(&gk[n..], &[kfill], &format!("reduce_by_key_into keys tail {ctx}"));
    assert_same(&gv[n..], &[vfill], &format!("reduce_by_key_into values tail {ctx}"));
    // A slice off the 16-byte boundary: element loads.
    let (tk, tv) = ref_reduce(&keys[1..], &vals[1..], |a, b| op.apply(a, b));
    let (sk, sv) = dk.slice(1..).unwrap().reduce_by_key(&dv.slice(1..).unwrap(), op).unwrap();
    assert_same(&sk.to_vec().unwrap(), &tk, &format!("reduce_by_key of slices keys {ctx}"));
    assert_same(&sv.to_vec().unwrap(), &tv, &format!("reduce_by_key of slices values {ctx}"));
}

#[test]
fn reduce_and_run_lengths_by_chunks() {
    fn lengths<K: Sample>(dev: &Device, n: usize, runs: Runs, tag: &str) {
        let (mut r, seed) = common::rng(&format!("lchunks-{tag}-{n}-{runs:?}"));
        let ctx = common::ctx(dev, &format!("run lengths by chunks {tag} {runs:?}"), n, seed);
        let keys: Vec<K> = match runs {
            Runs::Whole if n > 3_000_000 => (0..n).map(|i| K::from_scalar(Scalar::U32((i / 1_000_003) as u32))).collect(),
            _ => keys_of(&mut r, n, runs),
        };
        let (want_k, want_len) = ref_rle(&keys);
        let dk = DeviceVec::from_slice(dev, &keys).unwrap();
        let (gk, gl) = dk.run_length_encode().unwrap();
        assert_same(&gk.to_vec().unwrap(), &want_k, &format!("rle keys {ctx}"));
        let want32: Vec<u32> = want_len.iter().map(|&l| l as u32).collect();
        assert_eq!(gl.to_vec().unwrap(), want32, "rle lengths {ctx}");
        let (gk, gl) = dk.run_length_encode_with::<u64>().unwrap();
        assert_same(&gk.to_vec().unwrap(), &want_k, &format!("rle u64 keys {ctx}"));
        assert_eq!(gl.to_vec().unwrap(), want_len, "rle u64 lengths {ctx}");
        let kfill = K::from_scalar(Scalar::U32(3));
        let mut ko = DeviceVec::from_slice(dev, &vec![kfill; n + 1]).unwrap();
        let mut lo = DeviceVec::from_slice(dev, &vec![7u32; n + 1]).unwrap();
        let mut count = DeviceVec::from_slice(dev, &[u64::MAX]).unwrap();
        dk.run_length_encode_into(&mut ko, &mut lo, &mut count).unwrap();
        let runs_found = want_k.len();
        assert_eq!(count.to_vec().unwrap(), vec![runs_found as u64], "rle_into count {ctx}");
        let (gk, gl) = (ko.to_vec().unwrap(), lo.to_vec().unwrap());
        assert_same(&gk[..runs_found], &want_k, &format!("rle_into keys {ctx}"));
        assert_eq!(gl[..runs_found], want32[..], "rle_into lengths {ctx}");
        assert_eq!(gl[n..], [7], "rle_into lengths tail {ctx}");
    }
    if cfg!(debug_assertions) {
        return;
    }
    for dev in common::devices() {
        // Thresholds: run lengths from 2^20, reduce_by_key from 2^22 (and past the two-pass band,
        // two thirds of L2: 2^22 u32 / f32 takes the two passes on an H100 or H200).
        for n in [(1 << 20) - 1, 1 << 20, (1 << 20) + 5, (1 << 22) - 1, 1 << 22, 6_000_011] {
            for runs in RUNS {
                if n >= (1 << 22) - 1 {
                    check_long_reduce::<u32, f32, _>(&dev, n, runs, Add, "u32-f32");
                }
                if n != (1 << 22) - 1 && n != 1 << 22 {
                    lengths::<u32>(&dev, n, runs, "u32");
                }
            }
        }
        for runs in [Runs::Ones, Runs::Random, Runs::Whole] {
            check_long_reduce::<u64, f64, _>(&dev, 4_200_017, runs, Add, "u64-f64");
            check_long_reduce::<u8, i64, _>(&dev, 6_000_003, runs, Add, "u8-i64");
            check_long_reduce::<f32, f16, _>(&dev, 8_000_001, runs, Max, "f32-f16-max");
            check_long_reduce::<u32, i32, _>(&dev, 6_000_011, runs, KeepRightNonZero, "u32-i32-keepright");
            lengths::<u8>(&dev, 6_000_011, runs, "u8");
            lengths::<u64>(&dev, 3_000_017, runs, "u64");
        }
        // reduce_by_key_by under Less (-0.0 and 0.0 differ), and expressions: |keys| mapped, values permuted.
        let n = 6_000_007usize;
        let vals: Vec<u32> = (0..n as u32).map(|i| i % 5).collect();
        check_signed_zero_runs(&dev, &vals, "by chunks");
        let (di, _, akeys, _) = check_mapped_and_permuted(&dev, n, "by chunks");
        let (want_k, want_len) = ref_rle(&akeys);
        let (gk, gl) = di.map(cuprim::ops::Abs).run_length_encode().unwrap();
        assert_eq!(gk.to_vec().unwrap(), want_k, "run lengths of an expression keys");
        assert_eq!(
            gl.to_vec().unwrap(),
            want_len.iter().map(|&l| l as u32).collect::<Vec<_>>(),
            "run lengths of an expression"
        );
    }
}

/// reduce_by_key_by under `Less` (Add) of f32 keys alternating between 0.0
/// and -0.0 every 7 elements, so each stretch is a run, and `vals`, against
/// a sequential fold; returns the device keys.
fn check_signed_zero_runs<V: Sample>(dev: &Device, vals: &[V], what: &str) -> DeviceVec<f32>
where
    Add: cuprim::ops::Monoid<V>,
{
    use cuprim::ops::BinaryOp;
    let n = vals.len();
    let keys: Vec<f32> = (0..n).map(|i| if (i / 7) % 2 == 0 { 0.0 } else { -0.0 }).collect();
    let dk = DeviceVec::from_slice(dev, &keys).unwrap();
    let dv = DeviceVec::from_slice(dev, vals).unwrap();
    let (_, gv) = dk.reduce_by_key_by(&dv, Add, Less).unwrap();
    let heads: Vec<usize> = (0..n)
        .filter(|&i| i == 0 || Less.less(keys[i - 1], keys[i]) || Less.less(keys[i], keys[i - 1]))
        .collect();
    let want: Vec<V> = heads
        .iter()
        .enumerate()
        .map(|(r, &h)| {
            vals[h + 1..heads.get(r + 1).copied().unwrap_or(n)]
                .iter()
                .fold(vals[h], |a, &b| Add.apply(a, b))
        })
        .collect();
    assert_same(&gv.to_vec().unwrap(), &want, &format!("reduce_by_key_by Less {what}"));
    dk
}

/// reduce_by_key of `n` i32 keys mapped through `Abs` and u32 values read
/// through a reversing permutation, against the reference; returns the
/// device keys and values, the mapped keys and the permutation.
fn check_mapped_and_permuted(dev: &Device, n: usize, what: &str) -> (DeviceVec<i32>, DeviceVec<u32>, Vec<i32>, Vec<u32>) {
    let ikeys: Vec<i32> = (0..n as i32).map(|i| if i % 3 == 0 { -(i / 64) } else { i / 64 }).collect();
    let vals: Vec<u32> = (0..n as u32).map(|i| i % 5).collect();
    let di = DeviceVec::from_slice(dev, &ikeys).unwrap();
    let dv = DeviceVec::from_slice(dev, &vals).unwrap();
    let rev: Vec<u32> = (0..n as u32).rev().collect();
    let idx = DeviceVec::from_slice(dev, &rev).unwrap();
    let akeys: Vec<i32> = ikeys.iter().map(|k| k.abs()).collect();
    let pvals: Vec<u32> = rev.iter().map(|&i| vals[i as usize]).collect();
    let (want_k, want_v) = ref_reduce(&akeys, &pvals, |a, b| a + b);
    let (gk, gv) = di.map(cuprim::ops::Abs).reduce_by_key(dv.permute(&idx), Add).unwrap();
    assert_eq!(gk.to_vec().unwrap(), want_k, "reduce_by_key of expressions keys {what}");
    assert_eq!(gv.to_vec().unwrap(), want_v, "reduce_by_key of expressions values {what}");
    (di, dv, akeys, rev)
}

/// reduce_by_key around and inside the two-pass band (keys and values of
/// 8 MiB up to two thirds of L2, on a GPU): one element under 8 MiB and
/// past it, every run shape, u64 / f64, 1-byte keys, a non-commutative
/// operator, float sums the same bits run to run, -0.0 keys apart under
/// `Less`, and expressions (|keys| mapped, values permuted).
#[test]
fn reduce_by_key_in_two_passes() {
    if cfg!(debug_assertions) {
        return;
    }
    for dev in common::devices() {
        for n in [(1 << 20) - 1, 1 << 20, (1 << 20) + 5, 3_000_017] {
            for runs in RUNS {
                check_long_reduce::<u32, f32, _>(&dev, n, runs, Add, "u32-f32");
            }
        }
        for runs in [Runs::Ones, Runs::Random, Runs::Whole, Runs::Thinning] {
            check_long_reduce::<u64, f64, _>(&dev, (1 << 19) + 3, runs, Add, "u64-f64");
            check_long_reduce::<u64, f64, _>(&dev, 1_500_007, runs, Add, "u64-f64");
            check_long_reduce::<u8, i64, _>(&dev, 1_000_003, runs, Add, "u8-i64");
            check_long_reduce::<u32, i32, _>(&dev, 2_000_003, runs, KeepRightNonZero, "u32-i32-keepright");
        }
        // Float sums: the same bits on every run, close to the f64 sums.
        let n = 2_500_009usize;
        let (mut r, seed) = common::rng("two-pass-det");
        let ctx = common::ctx(&dev, "two-pass f32 sums", n, seed);
        let keys: Vec<u32> = keys_of(&mut r, n, Runs::Random);
        let vals: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0f32..1.0)).collect();
        let dk = DeviceVec::from_slice(&dev, &keys).unwrap();
        let dv = DeviceVec::from_slice(&dev, &vals).unwrap();
        let first = dk.reduce_by_key(&dv, Add).unwrap().1.to_vec().unwrap();
        for _ in 0..3 {
            assert_same(&dk.reduce_by_key(&dv, Add).unwrap().1.to_vec().unwrap(), &first, &ctx);
        }
        let heads = ref_heads(&keys);
        let (_, want) = ref_reduce(&keys, &vals.iter().map(|&x| x as f64).collect::<Vec<_>>(), |a, b| a + b);
        assert_eq!(first.len(), want.len(), "{ctx}");
        for (i, (&g, &w)) in first.iter().zip(&want).enumerate() {
            let end = heads.get(i + 1).copied().unwrap_or(n);
            let bound = 1e-6 * ((end - heads[i]) as f64 + 8.0);
            assert!((g as f64 - w).abs() <= bound, "run {i}: {g} vs {w} {ctx}");
        }
        // -0.0 and 0.0 apart under Less; a run of -0.0 values sums to -0.0.
        let n = (1 << 20) + 7;
        let vals: Vec<f32> = (0..n).map(|i| if i % 3 == 0 { -0.0 } else { (i % 5) as f32 }).collect();
        let dk = check_signed_zero_runs(&dev, &vals, "in two passes");
        let zeros = DeviceVec::from_slice(&dev, &vec![-0.0f32; n]).unwrap();
        let (_, gz) = dk.reduce_by_key_by(&zeros, Add, Less).unwrap();
        assert!(
            gz.to_vec().unwrap().iter().all(|z| z.to_bits() == (-0.0f32).to_bits()),
            "runs of -0.0 sum to -0.0"
        );
        // Expressions: |keys| mapped, values permuted (each index checked).
        let n = 1_500_007usize;
        let (di, dv, _, rev) = check_mapped_and_permuted(&dev, n, "in two passes");
        let mut bad = rev.clone();
        bad[n / 2] = n as u32;
        let bad = DeviceVec::from_slice(&dev, &bad).unwrap();
        assert!(
            di.map(cuprim::ops::Abs).reduce_by_key(dv.permute(&bad), Add).is_err(),
            "an index out of range in two passes"
        );
    }
}

/// reduce_by_key in two passes forced at every size and tile shape
/// (feature `bykey-tuning`, GPU runs): tiles of 32 elements to 4096, runs
/// across many tiles, inputs of one element.
#[cfg(feature = "bykey-tuning")]
#[test]
fn reduce_by_key_two_passes_forced() {
    use cuprim::algo::bykey::tuning::{self, Overrides};
    for dev in common::devices() {
        for shape in [None, Some((32, 1, 1)), Some((64, 3, 2)), Some((128, 16, 4))] {
            tuning::set(Overrides {
                two_pass: Some(true),
                shape,
                ..Overrides::default()
            });
            for n in common::capped(&[1, 2, 33, 2049, 65_537, 1_000_003]) {
                for runs in RUNS {
                    let (ctx, keys, vals, dk, want_k) = check_keep_right(&dev, &format!("forced two passes {shape:?}"), n, runs);
                    let fv: Vec<f64> = vals.iter().map(|&v| v as f64 * 0.5).collect();
                    let df = DeviceVec::from_slice(&dev, &fv).unwrap();
                    let (_, want_f) = ref_reduce(&keys, &fv, |a, b| a + b);
                    let mut ko = DeviceVec::from_slice(&dev, &vec![7u32; n + 1]).unwrap();
                    let mut vo = DeviceVec::from_slice(&dev, &vec![9.0f64; n + 1]).unwrap();
                    let mut count = DeviceVec::from_slice(&dev, &[u64::MAX]).unwrap();
                    dk.reduce_by_key_into(&df, Add, &mut ko, &mut vo, &mut count).unwrap();
                    let found = want_k.len();
                    assert_eq!(count.to_vec().unwrap(), vec![found as u64], "count {ctx}");
                    let (gk, gv) = (ko.to_vec().unwrap(), vo.to_vec().unwrap());
                    assert_eq!(gk[..found], want_k[..], "into keys {ctx}");
                    assert_eq!(gv[..found], want_f[..], "into values (halves: exact) {ctx}");
                    assert_eq!((gk[n], gv[n]), (7, 9.0), "into tails {ctx}");
                }
            }
            tuning::set(Overrides::default());
        }
    }
}

/// reduce_by_key under `KeepRightNonZero` of `n` u32 keys in `runs` and i32
/// values in -3..=3 against the reference (the forced tests' first check);
/// returns the context, the keys, the values, the device keys and the run keys.
#[cfg(feature = "bykey-tuning")]
fn check_keep_right(dev: &Device, what: &str, n: usize, runs: Runs) -> (String, Vec<u32>, Vec<i32>, DeviceVec<u32>, Vec<u32>) {
    let (mut r, seed) = common::rng(&format!("{what}-{n}-{runs:?}"));
    let ctx = common::ctx(dev, &format!("{what} {runs:?}"), n, seed);
    let keys: Vec<u32> = keys_of(&mut r, n, runs);
    let vals: Vec<i32> = (0..n).map(|_| r.gen_range(-3..4)).collect();
    let dk = DeviceVec::from_slice(dev, &keys).unwrap();
    let dv = DeviceVec::from_slice(dev, &vals).unwrap();
    let (want_k, want_v) = ref_reduce(&keys, &vals, |a, b| if b != 0 { b } else { a });
    let (gk, gv) = dk.reduce_by_key(&dv, KeepRightNonZero).unwrap();
    assert_eq!(gk.to_vec().unwrap(), want_k, "keys {ctx}");
    assert_eq!(gv.to_vec().unwrap(), want_v, "values {ctx}");
    (ctx, keys, vals, dk, want_k)
}

/// The chunked reduce_by_key and run lengths at every size and at chunks of
/// one tile to a few (feature `bykey-tuning`, GPU runs): runs crossing many
/// chunks, chunks overflowing early, inputs of one element.
#[cfg(feature = "bykey-tuning")]
#[test]
fn reduce_by_chunks_forced() {
    use cuprim::algo::bykey::tuning::{self, Overrides};
    for dev in common::devices() {
        for max_chunk in [1u64, 4096, 3 * 8192, 1 << 18] {
            tuning::set(Overrides {
                max_chunk: Some(max_chunk),
                from: Some(1),
                two_pass: Some(false),
                ..Overrides::default()
            });
            for n in common::capped(&[1, 2, 33, 2049, 65_537, 1_000_003]) {
                for runs in RUNS {
                    let (ctx, keys, _, dk, _) = check_keep_right(&dev, &format!("forced chunks of {max_chunk}"), n, runs);
                    let (want_k, want_len) = ref_rle(&keys);
                    let (gk, gl) = dk.run_length_encode_with::<u64>().unwrap();
                    assert_eq!(gk.to_vec().unwrap(), want_k, "rle keys {ctx}");
                    assert_eq!(gl.to_vec().unwrap(), want_len, "rle lengths {ctx}");
                }
            }
            tuning::set(Overrides::default());
        }
    }
}
