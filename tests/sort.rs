//! Radix sort family (sort, sort_pairs, descending, bit ranges, argsort)
//! against plain Rust stable sorts, on every device; and compile checks of
//! every sort kernel for sm_80 and sm_90.

mod common;

use common::{devices, random_vec, rng, small_vec, stable_order, Key};
use cuprim::algo::sort::{tile_len, SortOptions};
use cuprim::prelude::*;
use rand::Rng;

fn bytes<T: Element>(v: &[T]) -> &[u8] {
    bytemuck::cast_slice(v)
}

fn options(base: SortOptions, descending: bool, range: Option<(u32, u32)>) -> SortOptions {
    let mut opts = base;
    if descending {
        opts = opts.descending();
    }
    if let Some((b, e)) = range {
        opts = opts.bits(b, e);
    }
    opts
}

/// Sorts `data` as keys alone and as pairs with values = index (u32), on
/// `dev`, and compares both with the reference.
fn check<K: Key>(dev: &Device, data: &[K], descending: bool, range: Option<(u32, u32)>, ctx: &str) {
    check_with(dev, data, SortOptions::new(), descending, range, ctx)
}

/// [`check`] with options beyond the order and bit range (`base`).
fn check_with<K: Key>(dev: &Device, data: &[K], base: SortOptions, descending: bool, range: Option<(u32, u32)>, ctx: &str) {
    let order = stable_order(data, descending, range);
    let want_keys: Vec<K> = order.iter().map(|&i| data[i]).collect();
    let want_vals: Vec<u32> = order.iter().map(|&i| i as u32).collect();
    let opts = options(base, descending, range);
    let ctx = format!(
        "{dev:?} {} n={} desc={descending} bits={range:?} {base:?} {ctx}",
        K::NAME,
        data.len()
    );

    let mut keys = DeviceVec::from_slice(dev, data).unwrap();
    keys.sort_with(opts).unwrap();
    let got = keys.to_vec().unwrap();
    // With a bit range too: the stable order by the range is one permutation.
    assert!(bytes(&got) == bytes(&want_keys), "keys {ctx}: {}", first_diff(&got, &want_keys));

    let mut keys = DeviceVec::from_slice(dev, data).unwrap();
    let mut vals = DeviceVec::sequence(dev, data.len(), 0u32, 1).unwrap();
    keys.sort_pairs_with(&mut vals, opts).unwrap();
    let got_keys = keys.to_vec().unwrap();
    let got_vals = vals.to_vec().unwrap();
    assert!(
        bytes(&got_keys) == bytes(&want_keys),
        "pair keys {ctx}: {}",
        first_diff(&got_keys, &want_keys)
    );
    assert!(got_vals == want_vals, "pair values {ctx}: {}", first_diff(&got_vals, &want_vals));
}

fn first_diff<T: Element>(got: &[T], want: &[T]) -> String {
    if got.len() != want.len() {
        return format!("length {} != {}", got.len(), want.len());
    }
    let size = std::mem::size_of::<T>();
    let (g, w) = (bytes(got), bytes(want));
    match (0..got.len()).find(|&i| g[i * size..(i + 1) * size] != w[i * size..(i + 1) * size]) {
        Some(i) => {
            let lo = i.saturating_sub(2);
            let hi = (i + 3).min(got.len());
            format!("first difference at {i}: got {:?}, want {:?}", &got[lo..hi], &want[lo..hi])
        }
        None => "equal".into(),
    }
}

/// Sizes around the one-block limit and the tile, for keys `K` with u32
/// values on `dev` (the keys-only tile is never smaller).
fn sizes<K: Element>(dev: &Device, large: bool) -> Vec<usize> {
    let arch = dev.arch().unwrap_or(90);
    let tile = tile_len::<K, u32>(arch, true);
    let keys_tile = tile_len::<K, K>(arch, false);
    let mut s = vec![
        0,
        1,
        2,
        31,
        33,
        // The small sort's shape edges (1024, 1536, 2048, 3072, 4096 keys).
        1025,
        1537,
        2048,
        3000,
        3073,
        4097,
        tile - 1,
        tile,
        tile + 1,
        keys_tile - 1,
        keys_tile + 1,
        3 * tile + 17,
    ];
    if large {
        s.push((1 << 20) + 3);
    }
    s.sort_unstable();
    s.dedup();
    common::capped(&s)
}

fn every_order_and_size<K: Key>(large: bool) {
    for dev in devices() {
        for n in sizes::<K>(&dev, large) {
            let (mut r, seed) = rng(&format!("sort {} {n}", K::NAME));
            let data: Vec<K> = random_vec(&mut r, n);
            let ctx = format!("seed={seed}");
            check(&dev, &data, false, None, &ctx);
            check(&dev, &data, true, None, &ctx);
        }
    }
}

#[test]
fn keys_u8() {
    every_order_and_size::<u8>(false);
}
#[test]
fn keys_i8() {
    every_order_and_size::<i8>(false);
}
#[test]
fn keys_u32() {
    every_order_and_size::<u32>(true);
}
#[test]
fn keys_i32() {
    every_order_and_size::<i32>(false);
}
#[test]
fn keys_u64() {
    every_order_and_size::<u64>(false);
}
#[test]
fn keys_i64() {
    every_order_and_size::<i64>(true);
}
#[test]
fn keys_f16() {
    every_order_and_size::<f16>(false);
}
#[test]
fn keys_bf16() {
    every_order_and_size::<bf16>(false);
}
#[test]
fn keys_f32() {
    every_order_and_size::<f32>(true);
}
#[test]
fn keys_f64() {
    every_order_and_size::<f64>(true);
}

/// Keys drawn from four values: stability is what decides the values' order.
fn duplicates<K: Key>(large: bool) {
    for dev in devices() {
        for n in sizes::<K>(&dev, large) {
            let (mut r, seed) = rng(&format!("duplicates {} {n}", K::NAME));
            let data: Vec<K> = small_vec(&mut r, n);
            check(&dev, &data, false, None, &format!("eight distinct keys, seed={seed}"));
            check(&dev, &data, true, None, &format!("eight distinct keys, seed={seed}"));
        }
    }
}

#[test]
fn stable_with_duplicate_keys() {
    duplicates::<u32>(true);
    duplicates::<i64>(false);
    duplicates::<f32>(true);
    duplicates::<u8>(false);
}

#[test]
fn all_keys_equal_sorted_and_reversed() {
    for dev in devices() {
        let tile = tile_len::<u32, u32>(dev.arch().unwrap_or(90), true);
        for n in [tile + 1, 5 * tile + 3, 300_001] {
            check(&dev, &vec![7u32; n], false, None, "all equal");
            check(&dev, &vec![-0.0f32; n], true, None, "all equal");
            let ascending: Vec<u32> = (0..n as u32).collect();
            check(&dev, &ascending, false, None, "already sorted");
            check(&dev, &ascending, true, None, "reversed");
        }
    }
}

/// NaN of both signs and payloads, infinities, zeros of both signs,
/// subnormals: the device must agree with total_cmp bit for bit.
fn float_specials<K: Key>() {
    for dev in devices() {
        let (mut r, seed) = rng(&format!("specials {}", K::NAME));
        for n in [10, 200, 20_000] {
            // Every special value, then random ones (which include specials
            // and raw bit patterns: NaNs with payloads, subnormals).
            let mut data = K::specials();
            data.extend(random_vec::<K>(&mut r, n));
            check(&dev, &data, false, None, &format!("seed={seed}"));
            check(&dev, &data, true, None, &format!("seed={seed}"));
        }
    }
}

#[test]
fn floats_follow_total_cmp() {
    float_specials::<f32>();
    float_specials::<f64>();
    float_specials::<f16>();
    float_specials::<bf16>();
    // The documented order, spelled out.
    let order = [
        f32::from_bits(0xffc0_0000),
        f32::NEG_INFINITY,
        -1.0,
        -0.0,
        0.0,
        1.0,
        f32::INFINITY,
        f32::NAN,
    ];
    for dev in devices() {
        let mut v = DeviceVec::from_slice(
            &dev,
            &[
                1.0f32,
                f32::NAN,
                -0.0,
                f32::INFINITY,
                f32::from_bits(0xffc0_0000),
                0.0,
                -1.0,
                f32::NEG_INFINITY,
            ],
        )
        .unwrap();
        v.sort().unwrap();
        assert!(bytes(&v.to_vec().unwrap()) == bytes(&order), "{dev:?}");
    }
}

#[test]
fn bit_ranges() {
    for dev in devices() {
        let tile = tile_len::<u64, u32>(dev.arch().unwrap_or(90), true);
        for n in [0, 1, 100, tile + 1, 4 * tile + 9, 200_003] {
            let (mut r, seed) = rng(&format!("bit ranges {n}"));
            let ctx = format!("seed={seed}");
            // Keys that fit 12 bits: sorting on bits 0..12 is a full sort.
            let small: Vec<u32> = (0..n).map(|_| r.gen_range(0..4096)).collect();
            check(&dev, &small, false, Some((0, 12)), &ctx);
            check(&dev, &small, false, None, &ctx);
            let data: Vec<u32> = (0..n).map(|_| r.gen()).collect();
            // One pass with a partial digit, three passes (odd: copied back),
            // a range that starts mid-key.
            for range in [(0, 5), (0, 24), (4, 20), (31, 32), (9, 32)] {
                check(&dev, &data, false, Some(range), &ctx);
                check(&dev, &data, true, Some(range), &ctx);
            }
            let data: Vec<i32> = (0..n).map(|_| r.gen()).collect();
            check(&dev, &data, false, Some((16, 32)), &ctx);
            let data: Vec<f32> = random_vec(&mut r, n);
            check(&dev, &data, true, Some((20, 32)), &ctx);
            let data: Vec<u64> = (0..n).map(|_| r.gen()).collect();
            check(&dev, &data, false, Some((0, 40)), &ctx);
            check(&dev, &data, false, Some((13, 64)), &ctx);
        }
    }
}

#[test]
fn bad_bit_ranges_are_errors() {
    for dev in devices() {
        let mut v = DeviceVec::from_slice(&dev, &[3u32, 1, 2]).unwrap();
        for (b, e) in [(0, 0), (8, 8), (9, 8), (0, 33), (32, 33)] {
            let err = v.sort_with(SortOptions::new().bits(b, e));
            assert!(matches!(err, Err(Error::InvalidArgument(_))), "{dev:?} bits {b}..{e}: {err:?}");
            let mut vals = DeviceVec::from_slice(&dev, &[1u8, 2, 3]).unwrap();
            assert!(matches!(
                v.sort_pairs_with(&mut vals, SortOptions::new().bits(b, e)),
                Err(Error::InvalidArgument(_))
            ));
            assert!(matches!(
                v.argsort_with::<u32>(SortOptions::new().bits(b, e)),
                Err(Error::InvalidArgument(_))
            ));
        }
        let mut h = DeviceVec::from_slice(&dev, &[f16::ONE]).unwrap();
        assert!(h.sort_with(SortOptions::new().bits(0, 17)).is_err());
        assert!(h.sort_with(SortOptions::new().bits(0, 16)).is_ok());
        assert_eq!(v.to_vec().unwrap(), vec![3, 1, 2], "a failed sort leaves the keys alone");
    }
}

#[test]
fn pairs_length_mismatch_is_an_error() {
    for dev in devices() {
        let mut keys = DeviceVec::from_slice(&dev, &[3u32, 1, 2]).unwrap();
        let mut short = DeviceVec::from_slice(&dev, &[1.0f64, 2.0]).unwrap();
        match keys.sort_pairs(&mut short) {
            Err(Error::LengthMismatch {
                expected: 3, actual: 2, ..
            }) => {}
            other => panic!("{dev:?}: {other:?}"),
        }
        let mut long = DeviceVec::from_slice(&dev, &[0u8; 4]).unwrap();
        assert!(matches!(keys.sort_pairs_descending(&mut long), Err(Error::LengthMismatch { .. })));
        assert_eq!(keys.to_vec().unwrap(), vec![3, 1, 2]);
    }
}

#[test]
fn mixed_devices_are_an_error() {
    let devices = devices();
    if devices.len() < 2 {
        common::skip("mixed_devices_are_an_error", "needs CUDA beside the host");
        return;
    }
    let mut keys = DeviceVec::from_slice(&devices[0], &[3u32, 1, 2]).unwrap();
    let mut vals = DeviceVec::from_slice(&devices[1], &[1u32, 2, 3]).unwrap();
    assert!(matches!(keys.sort_pairs(&mut vals), Err(Error::DeviceMismatch { .. })));
}

/// Values of every width travel with their keys.
fn values_of<V: Element>(dev: &Device, n: usize, make: impl Fn(usize) -> V) {
    let (mut r, seed) = rng(&format!("values {} {n}", V::NAME));
    let keys: Vec<u32> = (0..n).map(|_| r.gen_range(0..1000)).collect();
    let vals: Vec<V> = (0..n).map(&make).collect();
    let order = stable_order(&keys, false, None);
    let want_keys: Vec<u32> = order.iter().map(|&i| keys[i]).collect();
    let want_vals: Vec<V> = order.iter().map(|&i| vals[i]).collect();
    let mut k = DeviceVec::from_slice(dev, &keys).unwrap();
    let mut v = DeviceVec::from_slice(dev, &vals).unwrap();
    k.sort_pairs(&mut v).unwrap();
    let ctx = format!("{dev:?} {} values n={n} seed={seed}", V::NAME);
    assert_eq!(k.to_vec().unwrap(), want_keys, "{ctx}");
    let got = v.to_vec().unwrap();
    assert!(bytes(&got) == bytes(&want_vals), "{ctx}: {}", first_diff(&got, &want_vals));

    // Descending with 8-byte keys too.
    let keys64: Vec<f64> = keys.iter().map(|&k| k as f64 - 500.0).collect();
    let order = stable_order(&keys64, true, None);
    let want_vals: Vec<V> = order.iter().map(|&i| vals[i]).collect();
    let mut k = DeviceVec::from_slice(dev, &keys64).unwrap();
    let mut v = DeviceVec::from_slice(dev, &vals).unwrap();
    k.sort_pairs_descending(&mut v).unwrap();
    let got = v.to_vec().unwrap();
    assert!(bytes(&got) == bytes(&want_vals), "f64 keys {ctx}: {}", first_diff(&got, &want_vals));
}

#[test]
fn values_of_every_width() {
    for dev in devices() {
        let tile = tile_len::<u32, u64>(dev.arch().unwrap_or(90), true);
        // Past 2^18 keys the onesweep's large tiles (u32 keys with 8-byte values: 6912 a tile).
        for n in [1, 33, tile, tile + 1, 3 * tile + 1, 100_003, (1 << 18) + 20_741] {
            values_of::<u8>(&dev, n, |i| (i * 7) as u8);
            values_of::<i8>(&dev, n, |i| (i * 3) as i8);
            values_of::<f16>(&dev, n, |i| f16::from_f32(i as f32));
            values_of::<f64>(&dev, n, |i| i as f64 * 0.5);
            values_of::<u64>(&dev, n, |i| (i as u64) << 33 | 5);
            values_of::<i32>(&dev, n, |i| -(i as i32));
        }
    }
}

#[test]
fn argsort_u32_and_u64() {
    for dev in devices() {
        let tile = tile_len::<f32, u32>(dev.arch().unwrap_or(90), true);
        for n in [0, 1, 5, tile + 3, 150_001] {
            let (mut r, seed) = rng(&format!("argsort {n}"));
            let data: Vec<f32> = random_vec(&mut r, n);
            let v = DeviceVec::from_slice(&dev, &data).unwrap();
            let want: Vec<u32> = stable_order(&data, false, None).iter().map(|&i| i as u32).collect();
            assert_eq!(v.argsort::<u32>().unwrap().to_vec().unwrap(), want, "{dev:?} n={n} seed={seed}");
            let want: Vec<u64> = stable_order(&data, true, None).iter().map(|&i| i as u64).collect();
            let got = v.argsort_with::<u64>(SortOptions::new().descending()).unwrap().to_vec().unwrap();
            assert_eq!(got, want, "{dev:?} descending n={n} seed={seed}");
            assert!(bytes(&v.to_vec().unwrap()) == bytes(&data), "argsort leaves the keys alone");
        }
    }
}

#[test]
fn views_at_odd_offsets() {
    for dev in devices() {
        let tile = tile_len::<u32, u32>(dev.arch().unwrap_or(90), true);
        for n in [40, tile + 50, 50_000] {
            let (mut r, seed) = rng(&format!("views {n}"));
            let data: Vec<i32> = (0..n).map(|_| r.gen()).collect();
            let mut v = DeviceVec::from_slice(&dev, &data).unwrap();
            let mut w = DeviceVec::from_slice(&dev, &data).unwrap();
            {
                let mut keys = v.slice_mut(3..n - 2).unwrap();
                let mut vals = w.slice_mut(3..n - 2).unwrap();
                keys.sort_pairs(&mut vals).unwrap();
            }
            let mut want = data.clone();
            want[3..n - 2].sort();
            assert_eq!(v.to_vec().unwrap(), want, "{dev:?} n={n} seed={seed}");
            let mut middle: Vec<(i32, usize)> = data[3..n - 2].iter().copied().enumerate().map(|(i, k)| (k, i)).collect();
            middle.sort();
            let got = w.to_vec().unwrap();
            assert_eq!(&got[..3], &data[..3]);
            assert_eq!(&got[n - 2..], &data[n - 2..]);
            let want_vals: Vec<i32> = middle.iter().map(|&(_, i)| data[3 + i]).collect();
            assert_eq!(&got[3..n - 2], &want_vals[..], "{dev:?} n={n} seed={seed}");
        }
    }
}

/// Inputs split into several portions (normally only past 2^30 keys).
#[test]
fn portions_chain_their_digit_counts() {
    for dev in devices() {
        let tile = tile_len::<u32, u32>(dev.arch().unwrap_or(90), true);
        let (mut r, seed) = rng("portions");
        for (n, portion) in [(7 * tile + 5, 2), (9 * tile, 3), (4 * tile + 1, 1)] {
            let data: Vec<u32> = (0..n).map(|_| r.gen_range(0..50_000)).collect();
            for descending in [false, true] {
                let order = stable_order(&data, descending, None);
                let want_keys: Vec<u32> = order.iter().map(|&i| data[i]).collect();
                let want_vals: Vec<u32> = order.iter().map(|&i| i as u32).collect();
                let mut opts = SortOptions::new().portion_tiles(portion);
                if descending {
                    opts = opts.descending();
                }
                let mut k = DeviceVec::from_slice(&dev, &data).unwrap();
                let mut v = DeviceVec::sequence(&dev, n, 0u32, 1).unwrap();
                k.sort_pairs_with(&mut v, opts).unwrap();
                let ctx = format!("{dev:?} n={n} portion={portion} desc={descending} seed={seed}");
                assert_eq!(k.to_vec().unwrap(), want_keys, "{ctx}");
                assert_eq!(v.to_vec().unwrap(), want_vals, "{ctx}");
                let mut k = DeviceVec::from_slice(&dev, &data).unwrap();
                k.sort_with(opts.bits(0, 16)).unwrap();
                let mut w = data.clone();
                if descending {
                    w.sort_by_key(|&x| std::cmp::Reverse(x & 0xffff));
                } else {
                    w.sort_by_key(|&x| x & 0xffff);
                }
                assert_eq!(k.to_vec().unwrap(), w, "keys {ctx}");
            }
        }
    }
}

/// Keys with constant bytes (passes in which every key has one digit: an
/// even or an odd number of them, or all) and with bytes constant over long
/// runs (tiles whose keys all share one digit, beside tiles that straddle
/// two runs and a partial last tile), sorted with the onesweep shortcuts off
/// and on: the same stable order either way, in both orders, across
/// portions and with bit ranges. (The host backend ignores the switch.)
#[test]
fn constant_digits_with_and_without_shortcuts() {
    for dev in devices() {
        let arch = dev.arch().unwrap_or(90);
        let (mut r, seed) = rng("constant digits");
        let n = 5 * tile_len::<u32, u32>(arch, true) + 123;
        let run = tile_len::<u32, u32>(arch, false) + 1321;
        // u64 keys below 2^16: six trivial passes, skipped two at a time.
        let below16: Vec<u64> = (0..n).map(|_| r.gen_range(0..1u64 << 16)).collect();
        // Below 2^24: five, four skipped and one copied.
        let below24: Vec<u64> = (0..n).map(|_| r.gen_range(0..1u64 << 24)).collect();
        // The low byte zero: one trivial pass, copied.
        let low_zero: Vec<u32> = (0..n).map(|_| r.gen::<u32>() << 8).collect();
        // 32 significant bits, as in the bench: the two lowest passes.
        let f64_32: Vec<f64> = (0..n).map(|_| r.gen::<u32>() as f64 / 4_294_967_296.0).collect();
        // The top byte constant over runs longer than a tile, in no order.
        let runs: Vec<u32> = (0..n)
            .map(|i| ((((i / run) * 37 + 11) % 256) as u32) << 24 | r.gen::<u32>() >> 8)
            .collect();
        // Nearly sorted stamps: the top byte constant, the next one over
        // runs of about 21800 keys.
        let stamps: Vec<u32> = (0..n as u32).map(|i| 1_000_000 + 3 * i + r.gen_range(0..64)).collect();
        let equal_u32 = vec![0x00ab_cdefu32; n];
        let equal_u8 = vec![5u8; n];
        let ctx = format!("seed={seed}");
        for shortcut in [false, true] {
            let base = SortOptions::new().shortcuts(shortcut);
            for desc in [false, true] {
                check_with(&dev, &below16, base, desc, None, &ctx);
                check_with(&dev, &below24, base.portion_tiles(3), desc, None, &ctx);
                check_with(&dev, &low_zero, base, desc, None, &ctx);
                check_with(&dev, &f64_32, base, desc, None, &ctx);
                check_with(&dev, &runs, base, desc, None, &ctx);
                check_with(&dev, &runs, base.portion_tiles(2), desc, None, &ctx);
                check_with(&dev, &stamps, base, desc, None, &ctx);
                check_with(&dev, &equal_u8, base, desc, None, &ctx);
            }
            // Three passes, all trivial: two skipped, one copied, and the
            // result copied back (an odd number of passes).
            check_with(&dev, &equal_u32, base, false, Some((0, 24)), &ctx);
            // Two passes, the first trivial (copied), the second not.
            check_with(&dev, &low_zero, base, false, Some((0, 16)), &ctx);
            check_with(&dev, &runs, base, true, Some((8, 32)), &ctx);
        }
        // Many tiles per SM.
        let big = (1 << 20) + 3;
        let f64_big: Vec<f64> = (0..big).map(|_| r.gen::<u32>() as f64 / 4_294_967_296.0).collect();
        let runs_big: Vec<u32> = (0..big)
            .map(|i| ((((i / run) * 37 + 11) % 256) as u32) << 24 | r.gen::<u32>() >> 8)
            .collect();
        for shortcut in [false, true] {
            let base = SortOptions::new().shortcuts(shortcut);
            check_with(&dev, &f64_big, base, false, None, &ctx);
            check_with(&dev, &runs_big, base, false, None, &ctx);
        }
    }
}

/// Calls of different sizes and types in a row share the device's scratch.
#[test]
fn repeated_sorts_reuse_scratch() {
    for dev in devices() {
        let (mut r, seed) = rng("scratch reuse");
        for round in 0..3 {
            for n in [300_000usize, 20_000, 7_000, 123_457] {
                let data: Vec<u32> = (0..n).map(|_| r.gen()).collect();
                let mut v = DeviceVec::from_slice(&dev, &data).unwrap();
                v.sort().unwrap();
                let mut want = data.clone();
                want.sort();
                assert_eq!(v.to_vec().unwrap(), want, "{dev:?} round {round} n={n} seed={seed}");
                let d64: Vec<f64> = data.iter().map(|&x| x as f64).collect();
                let mut v = DeviceVec::from_slice(&dev, &d64).unwrap();
                v.sort_descending().unwrap();
                let mut want = d64.clone();
                want.sort_by(|a, b| b.total_cmp(a));
                assert_eq!(v.to_vec().unwrap(), want, "{dev:?} f64 round {round} n={n} seed={seed}");
            }
        }
    }
}

/// The seed's 4-bit, three-kernels-per-pass path (feature `classic-sort`,
/// for the comparison bench) gives the same results.
#[cfg(feature = "classic-sort")]
#[test]
fn classic_variant_matches() {
    for dev in devices() {
        let tile = tile_len::<u32, u32>(dev.arch().unwrap_or(90), true);
        for n in [0, 1, 33, 4097, tile + 1, 300_007] {
            let (mut r, seed) = rng(&format!("classic {n}"));
            let data: Vec<u32> = (0..n).map(|_| r.gen()).collect();
            let ctx = format!("{dev:?} n={n} seed={seed}");
            let mut want = data.clone();
            want.sort();
            let mut v = DeviceVec::from_slice(&dev, &data).unwrap();
            v.sort_classic_with(SortOptions::new()).unwrap();
            assert_eq!(v.to_vec().unwrap(), want, "keys {ctx}");

            let keys: Vec<f32> = data.iter().map(|&x| f32::from_bits(x)).collect();
            let order = stable_order(&keys, true, None);
            let mut k = DeviceVec::from_slice(&dev, &keys).unwrap();
            let mut v = DeviceVec::sequence(&dev, n, 0u32, 1).unwrap();
            k.sort_pairs_classic_with(&mut v, SortOptions::new().descending()).unwrap();
            let want: Vec<u32> = order.iter().map(|&i| i as u32).collect();
            assert_eq!(v.to_vec().unwrap(), want, "pairs {ctx}");

            // Five 4-bit passes (odd: copied back).
            let mut v = DeviceVec::from_slice(&dev, &data).unwrap();
            v.sort_classic_with(SortOptions::new().bits(0, 20)).unwrap();
            let mut want = data.clone();
            want.sort_by_key(|&x| x & 0xf_ffff);
            assert_eq!(v.to_vec().unwrap(), want, "bits 0..20 {ctx}");
        }
    }
}
