//! Segmented sort (segmented_sort, segmented_sort_pairs: ascending,
//! descending, bit ranges; u32 and u64 offsets) against a plain per-segment
//! stable sort, on every device: segments of every size class (0, 1, 2,
//! 31, 33, ..., 4097, longer than a block's tile, one past the device-wide
//! threshold), mixtures with many empty segments, several key types with
//! NaN and -0.0, duplicates (stability of the values), and bad arguments;
//! the lengths and key types of the bitonic kernel (keys alone of at most
//! 4 bytes, segments of up to 1024).

mod common;

use common::{devices, random_vec, rng, size_cap, small_vec, stable_order, Key, TestRng};
use cuprim::algo::sort::SortOptions;
use cuprim::expr::IntoExpr;
use cuprim::prelude::*;
use cuprim::IndexElement;
use rand::Rng;

fn bytes<T: Element>(v: &[T]) -> &[u8] {
    bytemuck::cast_slice(v)
}

/// Offsets of consecutive segments of `lens`, starting at `start`.
fn layout(start: u64, lens: &[u64]) -> Vec<u64> {
    let mut offs = vec![start];
    for &l in lens {
        offs.push(offs.last().unwrap() + l);
    }
    offs
}

/// The reference: each segment stably sorted (by the full key order, or by
/// bits `begin..end` of the ordered key); values are input indices.
fn reference<K: Key>(data: &[K], offs: &[u64], descending: bool, range: Option<(u32, u32)>) -> (Vec<K>, Vec<u32>) {
    let mut order: Vec<usize> = (0..data.len()).collect();
    for w in offs.windows(2) {
        let (a, b) = (w[0] as usize, w[1] as usize);
        let seg = stable_order(&data[a..b], descending, range);
        for (slot, i) in order[a..b].iter_mut().zip(seg) {
            *slot = a + i;
        }
    }
    (order.iter().map(|&i| data[i]).collect(), order.iter().map(|&i| i as u32).collect())
}

fn first_diff<T: Element>(got: &[T], want: &[T]) -> String {
    match got
        .iter()
        .zip(want)
        .position(|(a, b)| bytemuck::bytes_of(a) != bytemuck::bytes_of(b))
    {
        Some(i) => format!("first difference at {i}: got {:?}, want {:?}", got[i], want[i]),
        None => format!("lengths {} and {}", got.len(), want.len()),
    }
}

/// Sorts `data` by the segments `offs` as keys alone and as pairs (values
/// = index, u32), with offsets of type `I`, and compares both with the
/// reference.
fn check_as<K: Key, I: IndexElement>(
    dev: &Device,
    data: &[K],
    offs: &[u64],
    descending: bool,
    range: Option<(u32, u32)>,
    ctx: &str,
    to_i: fn(u64) -> I,
) {
    let (want_keys, want_vals) = reference(data, offs, descending, range);
    let mut opts = SortOptions::new();
    if descending {
        opts = opts.descending();
    }
    if let Some((b, e)) = range {
        opts = opts.bits(b, e);
    }
    let ctx = format!(
        "{dev:?} {} offsets {} n={} segments={} desc={descending} bits={range:?} {ctx}",
        K::NAME,
        I::NAME,
        data.len(),
        offs.len() - 1
    );
    let offs_i: Vec<I> = offs.iter().map(|&o| to_i(o)).collect();
    let offsets = DeviceVec::from_slice(dev, &offs_i).unwrap();

    let mut keys = DeviceVec::from_slice(dev, data).unwrap();
    keys.segmented_sort_with(&offsets, opts).unwrap();
    let got = keys.to_vec().unwrap();
    assert!(bytes(&got) == bytes(&want_keys), "keys {ctx}: {}", first_diff(&got, &want_keys));

    let mut keys = DeviceVec::from_slice(dev, data).unwrap();
    let mut vals = DeviceVec::sequence(dev, data.len(), 0u32, 1).unwrap();
    keys.segmented_sort_pairs_with(&offsets, &mut vals, opts).unwrap();
    let got_keys = keys.to_vec().unwrap();
    let got_vals = vals.to_vec().unwrap();
    assert!(
        bytes(&got_keys) == bytes(&want_keys),
        "pair keys {ctx}: {}",
        first_diff(&got_keys, &want_keys)
    );
    assert!(got_vals == want_vals, "pair values {ctx}: {}", first_diff(&got_vals, &want_vals));
}

/// [`check_as`] with u32 offsets (when they fit) and with u64 offsets.
fn check<K: Key>(dev: &Device, data: &[K], offs: &[u64], descending: bool, range: Option<(u32, u32)>, ctx: &str) {
    if offs.iter().all(|&o| o <= u32::MAX as u64) {
        check_as::<K, u32>(dev, data, offs, descending, range, ctx, |o| o as u32);
    }
    check_as::<K, u64>(dev, data, offs, descending, range, ctx, |o| o);
}

/// Lengths log-uniform in 1..=max, a fraction `empty` of them 0.
fn mixture(r: &mut TestRng, count: usize, max: u64, empty: f64) -> Vec<u64> {
    (0..count)
        .map(|_| {
            if r.gen::<f64>() < empty {
                0
            } else {
                (r.gen::<f64>() * (max as f64).ln()).exp().floor().max(1.0) as u64
            }
        })
        .collect()
}

/// Segments of every class boundary, in both orders, both offset types,
/// with elements before the first and after the last offset left alone.
#[test]
fn every_size_class() {
    let lens = [
        0u64, 1, 2, 31, 33, 0, 127, 128, 129, 1023, 1024, 1025, 2048, 4095, 4096, 4097, 9000, 0, 2, 1,
    ];
    let (mut r, seed) = rng("segsort classes");
    for dev in devices() {
        for &(start, tail) in &[(0u64, 0usize), (5, 3)] {
            let offs = layout(start, &lens);
            let n = *offs.last().unwrap() as usize + tail;
            let data: Vec<f32> = random_vec(&mut r, n);
            for desc in [false, true] {
                check(&dev, &data, &offs, desc, None, &format!("seed={seed} start={start} tail={tail}"));
            }
        }
    }
}

/// One segment past the device-wide threshold (beside short ones), and
/// many segments longer than a tile (the global-memory kernel).
#[test]
fn long_segments() {
    let (mut r, seed) = rng("segsort long");
    let cap = size_cap();
    for dev in devices() {
        let huge = 300_000u64.min(cap as u64);
        let offs = layout(0, &[3, huge, 0, 1000, 7]);
        let data: Vec<f32> = random_vec(&mut r, *offs.last().unwrap() as usize);
        check(&dev, &data, &offs, false, None, &format!("one huge, seed={seed}"));
        check(&dev, &data, &offs, true, None, &format!("one huge, seed={seed}"));

        let lens: Vec<u64> = (0..40).map(|_| r.gen_range(4097..20_000u64)).collect();
        let offs = layout(0, &lens);
        if *offs.last().unwrap() as usize <= cap {
            let data: Vec<u32> = small_vec(&mut r, *offs.last().unwrap() as usize);
            check(&dev, &data, &offs, false, None, &format!("many long, duplicates, seed={seed}"));
            let data: Vec<f64> = random_vec(&mut r, *offs.last().unwrap() as usize);
            check(&dev, &data, &offs, true, None, &format!("many long, seed={seed}"));
        }
    }
}

/// Log-uniform segment lengths with many empty segments.
#[test]
fn mixtures_with_empty_segments() {
    let (mut r, seed) = rng("segsort mixture");
    for dev in devices() {
        for &(count, max, empty) in &[(2000usize, 300u64, 0.5), (300, 30_000, 0.3), (50, 3, 0.6)] {
            let offs = layout(0, &mixture(&mut r, count, max, empty));
            let n = *offs.last().unwrap() as usize;
            if n > size_cap() {
                continue;
            }
            let data: Vec<f32> = random_vec(&mut r, n);
            check(&dev, &data, &offs, false, None, &format!("mixture max={max}, seed={seed}"));
            let data: Vec<i32> = small_vec(&mut r, n);
            check(
                &dev,
                &data,
                &offs,
                true,
                None,
                &format!("mixture max={max} duplicates, seed={seed}"),
            );
        }
    }
}

/// Key types of every width (NaN, -0.0, extremes among the random values),
/// random and with many duplicates, over a mixture that reaches every path.
#[test]
fn key_types() {
    let (mut r, seed) = rng("segsort types");
    let mut lens = mixture(&mut r, 60, 6000, 0.2);
    lens.push(20_000.min(size_cap() as u64));
    let offs = layout(0, &lens);
    let n = *offs.last().unwrap() as usize;
    macro_rules! each {
        ($dev:expr, $($t:ty),*) => {$(
            for desc in [false, true] {
                let data: Vec<$t> = random_vec(&mut r, n);
                check($dev, &data, &offs, desc, None, &format!("seed={seed}"));
                let data: Vec<$t> = small_vec(&mut r, n);
                check($dev, &data, &offs, desc, None, &format!("duplicates, seed={seed}"));
            }
        )*};
    }
    for dev in devices() {
        each!(&dev, u8, i32, u64, f16, f32, f64);
    }
}

/// NaNs of both signs and zeros of both signs land where `sort` puts them.
#[test]
fn nan_and_signed_zero() {
    let specials = [f32::NAN, -f32::NAN, 0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, 1.0, -1.0];
    let (mut r, seed) = rng("segsort specials");
    for dev in devices() {
        let lens = [8u64, 100, 1000, 5000];
        let offs = layout(0, &lens);
        let n = *offs.last().unwrap() as usize;
        let data: Vec<f32> = (0..n).map(|_| specials[r.gen_range(0..specials.len())]).collect();
        for desc in [false, true] {
            check(&dev, &data, &offs, desc, None, &format!("seed={seed}"));
        }
        // The same as `sort` on one segment covering everything.
        let mut whole = DeviceVec::from_slice(&dev, &data).unwrap();
        whole.sort().unwrap();
        let mut seg = DeviceVec::from_slice(&dev, &data).unwrap();
        seg.segmented_sort(&DeviceVec::from_slice(&dev, &[0u32, n as u32]).unwrap())
            .unwrap();
        assert!(
            bytes(&seg.to_vec().unwrap()) == bytes(&whole.to_vec().unwrap()),
            "{dev:?} segmented vs sort, seed={seed}"
        );
    }
}

/// The lengths around each keys-per-lane step of the bitonic kernel (keys
/// alone of at most 4 bytes, segments of up to 1024: 32, 64, ..., 1024
/// keys a warp), shuffled, with empty and one-key segments.
const BITONIC_LENS: [u64; 27] = [
    0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512, 513, 700, 1000, 1023, 1024, 1024, 0, 2, 1,
];

/// Segments of up to 1024 keys (the bitonic kernel's on CUDA: keys alone
/// of every type of at most 4 bytes, every bit), mixed in one call (one
/// size class: the surveyed launch) and beside a longer segment (the
/// classes read back, with a list of segment ids), with elements before
/// the first and after the last offset; random keys (NaN, -0.0, extremes)
/// and many duplicates, both orders.
#[test]
fn bitonic_lengths_and_types() {
    let (mut r, seed) = rng("segsort bitonic");
    let mut lens = BITONIC_LENS.to_vec();
    for i in (1..lens.len()).rev() {
        lens.swap(i, r.gen_range(0..=i));
    }
    let mut with_long = lens.clone();
    with_long.insert(lens.len() / 2, 3000);
    let cases = [(layout(0, &lens), 0usize), (layout(9, &lens), 4), (layout(3, &with_long), 2)];
    macro_rules! each {
        ($dev:expr, $($t:ty),*) => {$(
            for (offs, tail) in &cases {
                let n = *offs.last().unwrap() as usize + tail;
                for desc in [false, true] {
                    let data: Vec<$t> = random_vec(&mut r, n);
                    check($dev, &data, offs, desc, None, &format!("seed={seed}"));
                    let data: Vec<$t> = small_vec(&mut r, n);
                    check($dev, &data, offs, desc, None, &format!("duplicates, seed={seed}"));
                }
            }
        )*};
    }
    for dev in devices() {
        each!(&dev, u8, i8, u32, i32, f16, bf16, f32);
        // All bits named explicitly: the same sort.
        let offs = layout(0, &lens);
        let data: Vec<u32> = random_vec(&mut r, *offs.last().unwrap() as usize);
        check(&dev, &data, &offs, true, Some((0, 32)), &format!("bits 0..32, seed={seed}"));
    }
}

/// Every segment 1024 keys (the benchmark's shape), and f32 keys drawn
/// from NaNs of both signs, zeros of both signs, infinities and a few
/// values (many duplicates), in segments of up to 1024.
#[test]
fn bitonic_full_segments_and_specials() {
    let (mut r, seed) = rng("segsort bitonic specials");
    let specials = [
        f32::NAN,
        -f32::NAN,
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.0,
        -1.0,
        f32::MIN_POSITIVE,
    ];
    for dev in devices() {
        let offs = layout(0, &[1024; 40]);
        let data: Vec<f32> = random_vec(&mut r, 40 * 1024);
        for desc in [false, true] {
            check(&dev, &data, &offs, desc, None, &format!("all 1024, seed={seed}"));
        }
        let offs = layout(0, &BITONIC_LENS);
        let n = *offs.last().unwrap() as usize;
        let data: Vec<f32> = (0..n).map(|_| specials[r.gen_range(0..specials.len())]).collect();
        for desc in [false, true] {
            check(&dev, &data, &offs, desc, None, &format!("specials, seed={seed}"));
        }
    }
}

/// About 2^20 keys in segments of 1 to 1024 keys (log-uniform, some
/// empty), keys alone, against sorting each segment with `total_cmp`.
#[test]
fn bitonic_many_segments() {
    let (mut r, seed) = rng("segsort bitonic many");
    for dev in devices() {
        let mut lens = Vec::new();
        let mut n = 0u64;
        while n < 1 << 20 {
            let len = if r.gen::<f64>() < 0.05 { 0 } else { r.gen_range(1..=1024u64) };
            lens.push(len);
            n += len;
        }
        let offs = layout(0, &lens);
        let data: Vec<f32> = random_vec(&mut r, n as usize);
        for desc in [false, true] {
            let mut want = data.clone();
            for w in offs.windows(2) {
                let seg = &mut want[w[0] as usize..w[1] as usize];
                if desc {
                    seg.sort_by(|a, b| b.total_cmp(a));
                } else {
                    seg.sort_by(|a, b| a.total_cmp(b));
                }
            }
            let offsets = DeviceVec::from_slice(&dev, &offs).unwrap();
            let mut keys = DeviceVec::from_slice(&dev, &data).unwrap();
            if desc {
                keys.segmented_sort_descending(&offsets).unwrap();
            } else {
                keys.segmented_sort(&offsets).unwrap();
            }
            let got = keys.to_vec().unwrap();
            assert!(
                bytes(&got) == bytes(&want),
                "{dev:?} n={n} segments={} desc={desc} seed={seed}: {}",
                lens.len(),
                first_diff(&got, &want)
            );
        }
    }
}

/// Bit ranges: one pass (odd: the global-memory kernel copies back), two,
/// and five passes of 64-bit keys.
#[test]
fn bit_ranges() {
    let (mut r, seed) = rng("segsort bits");
    let offs = layout(0, &[0, 3, 40, 700, 3000, 4097, 12_000, 1]);
    let n = *offs.last().unwrap() as usize;
    for dev in devices() {
        let data: Vec<u32> = random_vec(&mut r, n);
        for range in [(0, 8), (4, 12), (20, 32)] {
            check(&dev, &data, &offs, false, Some(range), &format!("seed={seed}"));
            check(&dev, &data, &offs, true, Some(range), &format!("seed={seed}"));
        }
        let data: Vec<u64> = random_vec(&mut r, n);
        check(&dev, &data, &offs, false, Some((3, 43)), &format!("seed={seed}"));
    }
}

/// Values of other widths follow their keys.
#[test]
fn value_types() {
    let (mut r, seed) = rng("segsort values");
    let offs = layout(0, &[5, 0, 200, 1024, 4100, 9999]);
    let n = *offs.last().unwrap() as usize;
    for dev in devices() {
        let data: Vec<u8> = small_vec(&mut r, n);
        let (want_keys, order) = reference(&data, &offs, false, None);
        let vals: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
        let want_vals: Vec<f64> = order.iter().map(|&i| vals[i as usize]).collect();
        let mut k = DeviceVec::from_slice(&dev, &data).unwrap();
        let mut v = DeviceVec::from_slice(&dev, &vals).unwrap();
        k.segmented_sort_pairs(&DeviceVec::from_slice(&dev, &offs).unwrap(), &mut v)
            .unwrap();
        assert_eq!(k.to_vec().unwrap(), want_keys, "{dev:?} u8 keys, seed={seed}");
        assert_eq!(v.to_vec().unwrap(), want_vals, "{dev:?} f64 values, seed={seed}");

        let data: Vec<f64> = random_vec(&mut r, n);
        let (want_keys, order) = reference(&data, &offs, true, None);
        let mut k = DeviceVec::from_slice(&dev, &data).unwrap();
        let vals: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        let mut v = DeviceVec::from_slice(&dev, &vals).unwrap();
        k.segmented_sort_pairs_descending(&DeviceVec::from_slice(&dev, &offs).unwrap(), &mut v)
            .unwrap();
        let want_vals: Vec<u8> = order.iter().map(|&i| vals[i as usize]).collect();
        assert!(bytes(&k.to_vec().unwrap()) == bytes(&want_keys), "{dev:?} f64 keys, seed={seed}");
        assert_eq!(v.to_vec().unwrap(), want_vals, "{dev:?} u8 values, seed={seed}");
    }
}

/// No keys, no segments, only empty segments.
#[test]
fn empty_inputs() {
    for dev in devices() {
        let mut k = DeviceVec::<f32>::from_slice(&dev, &[]).unwrap();
        k.segmented_sort(&DeviceVec::from_slice(&dev, &[0u32]).unwrap()).unwrap();
        k.segmented_sort(&DeviceVec::from_slice(&dev, &[0u32, 0, 0]).unwrap()).unwrap();
        assert!(k.to_vec().unwrap().is_empty());
        let mut k = DeviceVec::from_slice(&dev, &[3u32, 2, 1]).unwrap();
        k.segmented_sort(&DeviceVec::from_slice(&dev, &[1u64, 1]).unwrap()).unwrap();
        k.segmented_sort(&DeviceVec::from_slice(&dev, &[3u64]).unwrap()).unwrap();
        assert_eq!(k.to_vec().unwrap(), vec![3, 2, 1], "{dev:?}");
    }
}

/// Bad offsets and mismatched values fail with a clear error and leave
/// the data as it was.
#[test]
fn bad_arguments() {
    for dev in devices() {
        let data = [5u32, 4, 3, 2, 1, 0];
        let mut k = DeviceVec::from_slice(&dev, &data).unwrap();
        let mut v = DeviceVec::sequence(&dev, 6, 0u32, 1).unwrap();
        let cases: [&[u32]; 4] = [&[], &[0, 4, 2, 6], &[0, 3, 7], &[9]];
        for offs in cases {
            let o = DeviceVec::from_slice(&dev, offs).unwrap();
            let e = k.segmented_sort(&o).unwrap_err();
            assert!(matches!(e, cuprim::Error::InvalidArgument(_)), "{dev:?} {offs:?}: {e}");
            assert!(e.to_string().contains("segmented_sort"), "{e}");
            let e = k.segmented_sort_pairs(&o, &mut v).unwrap_err();
            assert!(matches!(e, cuprim::Error::InvalidArgument(_)), "{dev:?} {offs:?}: {e}");
        }
        let o = DeviceVec::from_slice(&dev, &[0u64, 6]).unwrap();
        let mut short = DeviceVec::sequence(&dev, 5, 0u32, 1).unwrap();
        let e = k.segmented_sort_pairs(&o, &mut short).unwrap_err();
        assert!(matches!(e, cuprim::Error::LengthMismatch { .. }), "{dev:?}: {e}");
        let e = k.segmented_sort_with(&o, SortOptions::new().bits(8, 40)).unwrap_err();
        assert!(matches!(e, cuprim::Error::InvalidArgument(_)), "{dev:?}: {e}");
        assert_eq!(k.to_vec().unwrap(), data.to_vec(), "{dev:?} keys changed");
        assert_eq!(v.to_vec().unwrap(), (0..6).collect::<Vec<u32>>(), "{dev:?} values changed");
        assert_eq!(short.to_vec().unwrap(), (0..5).collect::<Vec<u32>>(), "{dev:?} values changed");
    }
    // Offsets on another device.
    if let Some(gpu) = common::cuda() {
        let mut k = DeviceVec::from_slice(&gpu, &[2u32, 1]).unwrap();
        let o = DeviceVec::from_slice(&Device::host(), &[0u32, 2]).unwrap();
        let e = k.segmented_sort(&o).unwrap_err();
        assert!(matches!(e, cuprim::Error::DeviceMismatch { .. }), "{e}");
        assert_eq!(k.to_vec().unwrap(), vec![2, 1]);
    }
}

/// The fused sorts of an expression (`x.map(Negate)` of `data`), keys
/// alone and with values (a counting expression and a buffer), against
/// collecting first and sorting in place, bit for bit, and against the
/// sequential reference of the collected keys; offsets of type `I`.
fn check_expr_as<I: IndexElement>(dev: &Device, data: &[f32], offs: &[u64], descending: bool, ctx: &str, to_i: fn(u64) -> I) {
    use cuprim::ops::Negate;
    let n = data.len();
    let ctx = format!(
        "{dev:?} offsets {} n={n} segments={} desc={descending} {ctx}",
        I::NAME,
        offs.len().saturating_sub(1)
    );
    let opts = if descending {
        SortOptions::new().descending()
    } else {
        SortOptions::new()
    };
    let offsets = DeviceVec::from_slice(dev, &offs.iter().map(|&o| to_i(o)).collect::<Vec<I>>()).unwrap();
    let x = DeviceVec::from_slice(dev, data).unwrap();
    let mapped: Vec<f32> = data.iter().map(|v| -v).collect();
    let (want_keys, want_order) = reference(&mapped, offs, descending, None);

    let fused = x.map(Negate).segmented_sorted_with(&offsets, opts).unwrap().to_vec().unwrap();
    let mut collected = x.map(Negate).collect().unwrap();
    collected.segmented_sort_with(&offsets, opts).unwrap();
    let collected = collected.to_vec().unwrap();
    assert!(
        bytes(&fused) == bytes(&collected),
        "fused vs collected keys {ctx}: {}",
        first_diff(&fused, &collected)
    );
    assert!(
        bytes(&fused) == bytes(&want_keys),
        "fused keys {ctx}: {}",
        first_diff(&fused, &want_keys)
    );

    let (k, v) = x
        .map(Negate)
        .segmented_sorted_pairs_with(&offsets, counting(dev, 0u32, 1, n), opts)
        .unwrap();
    let (k, v) = (k.to_vec().unwrap(), v.to_vec().unwrap());
    let mut ck = x.map(Negate).collect().unwrap();
    let mut cv = DeviceVec::sequence(dev, n, 0u32, 1).unwrap();
    ck.segmented_sort_pairs_with(&offsets, &mut cv, opts).unwrap();
    assert!(bytes(&k) == bytes(&ck.to_vec().unwrap()), "fused vs collected pair keys {ctx}");
    assert!(v == cv.to_vec().unwrap(), "fused vs collected pair values {ctx}");
    assert!(v == want_order, "pair values {ctx}: {}", first_diff(&v, &want_order));

    // Values from a buffer (read in place), keys the buffer itself.
    let vals: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
    let vbuf = DeviceVec::from_slice(dev, &vals).unwrap();
    let (k, v) = x.lazy().segmented_sorted_pairs_with(&offsets, &vbuf, opts).unwrap();
    let (want_k, order) = reference(data, offs, descending, None);
    let want_v: Vec<f64> = order.iter().map(|&i| vals[i as usize]).collect();
    assert!(bytes(&k.to_vec().unwrap()) == bytes(&want_k), "buffer pair keys {ctx}");
    assert!(v.to_vec().unwrap() == want_v, "buffer pair values {ctx}");
}

fn check_expr(dev: &Device, data: &[f32], offs: &[u64], descending: bool, ctx: &str) {
    if offs.iter().all(|&o| o <= u32::MAX as u64) {
        check_expr_as::<u32>(dev, data, offs, descending, ctx, |o| o as u32);
    }
    check_expr_as::<u64>(dev, data, offs, descending, ctx, |o| o);
}

/// Sorts of expressions over every size class (one class alone: the
/// surveyed launch; mixtures; one segment past the device-wide threshold),
/// empty and one-element segments, elements before the first and after the
/// last offset, NaN and signed zeros (random floats hold them).
#[test]
fn expression_sorts_equal_collected_sorts() {
    let (mut r, seed) = rng("segsort expressions");
    for dev in devices() {
        let lens = [
            0u64, 1, 2, 31, 33, 0, 127, 128, 129, 1023, 1024, 1025, 2048, 4095, 4096, 4097, 9000, 0, 2, 1,
        ];
        for &(start, tail) in &[(0u64, 0usize), (5, 3)] {
            let offs = layout(start, &lens);
            let n = *offs.last().unwrap() as usize + tail;
            let data: Vec<f32> = random_vec(&mut r, n);
            for desc in [false, true] {
                check_expr(&dev, &data, &offs, desc, &format!("classes seed={seed} start={start} tail={tail}"));
            }
        }
        // One tile class for every segment (surveyed), with a head and a tail.
        for &(max, count) in &[(1u64, 300usize), (128, 500), (1024, 70), (4096, 9)] {
            let lens = mixture(&mut r, count, max, 0.3);
            let offs = layout(7, &lens);
            let n = *offs.last().unwrap() as usize + 11;
            let data: Vec<f32> = small_vec(&mut r, n);
            check_expr(&dev, &data, &offs, false, &format!("one class max={max} seed={seed}"));
        }
        // Uniform keys in a segment (no bit varies), no segments, one offset.
        let data = vec![2.5f32; 5000];
        check_expr(&dev, &data, &layout(1, &[3, 100, 1000, 3000]), true, "uniform");
        check_expr(&dev, &data[..10], &[4], false, "one offset");
        check_expr(&dev, &[], &[0, 0, 0], false, "empty");
        // Past the device-wide threshold, beside long and short segments.
        let huge = 300_000u64.min(size_cap() as u64);
        let offs = layout(2, &[3, huge, 0, 5000, 20_000, 1]);
        let data: Vec<f32> = random_vec(&mut r, *offs.last().unwrap() as usize + 5);
        check_expr(&dev, &data, &offs, false, &format!("huge seed={seed}"));
    }
}

/// Other key and value types through maps, casts and a checked gather,
/// against the collected forms.
#[test]
fn expression_sorts_of_other_types() {
    use cuprim::ops::{Abs, Cast};
    let (mut r, seed) = rng("segsort expression types");
    let mut lens = mixture(&mut r, 80, 6000, 0.2);
    lens.push(20_000.min(size_cap() as u64));
    let offs = layout(3, &lens);
    let n = *offs.last().unwrap() as usize + 2;
    for dev in devices() {
        let offsets = DeviceVec::from_slice(&dev, &offs).unwrap();
        let ctx = format!("{dev:?} n={n} seed={seed}");
        let k = DeviceVec::from_slice(&dev, &small_vec::<i32>(&mut r, n)).unwrap();
        let idx: Vec<u32> = (0..n).map(|_| r.gen_range(0..n as u32)).collect();
        let idx = DeviceVec::from_slice(&dev, &idx).unwrap();
        let f = DeviceVec::from_slice(&dev, &random_vec::<f32>(&mut r, n)).unwrap();

        // u8 keys from a checked gather of i32, f64 values from a cast.
        let keys = k.permute(&idx).map(Cast::<u8>::new());
        let (sk, sv) = keys.segmented_sorted_pairs(&offsets, f.map(Cast::<f64>::new())).unwrap();
        let (mut ck, mut cv) = (keys.collect().unwrap(), f.map(Cast::<f64>::new()).collect().unwrap());
        ck.segmented_sort_pairs(&offsets, &mut cv).unwrap();
        assert_eq!(sk.to_vec().unwrap(), ck.to_vec().unwrap(), "{ctx} u8 keys");
        assert!(bytes(&sv.to_vec().unwrap()) == bytes(&cv.to_vec().unwrap()), "{ctx} f64 values");

        // i32 keys (|x|), descending, u8 values from a counting expression.
        let opts = SortOptions::new().descending();
        let (sk, sv) = k
            .map(Abs)
            .segmented_sorted_pairs_with(&offsets, counting(&dev, 0u8, 1, n), opts)
            .unwrap();
        let (mut ck, mut cv) = (k.map(Abs).collect().unwrap(), counting(&dev, 0u8, 1, n).collect().unwrap());
        ck.segmented_sort_pairs_with(&offsets, &mut cv, opts).unwrap();
        assert_eq!(sk.to_vec().unwrap(), ck.to_vec().unwrap(), "{ctx} i32 keys");
        assert_eq!(sv.to_vec().unwrap(), cv.to_vec().unwrap(), "{ctx} u8 values");

        // f64 and u64 keys alone, a bit range.
        let wide = f.map(Cast::<f64>::new()).segmented_sorted(&offsets).unwrap();
        let mut cw = f.map(Cast::<f64>::new()).collect().unwrap();
        cw.segmented_sort(&offsets).unwrap();
        assert!(bytes(&wide.to_vec().unwrap()) == bytes(&cw.to_vec().unwrap()), "{ctx} f64 keys");
        let c = counting(&dev, u64::MAX - 5, 0x9E37_79B9_7F4A_7C15, n);
        let opts = SortOptions::new().bits(7, 41);
        let s = c.segmented_sorted_with(&offsets, opts).unwrap();
        let mut cc = c.collect().unwrap();
        cc.segmented_sort_with(&offsets, opts).unwrap();
        assert_eq!(s.to_vec().unwrap(), cc.to_vec().unwrap(), "{ctx} u64 keys, bits 7..41");
    }
}

/// A gather with an index out of range fails with IndexOutOfBounds (keys
/// or values; surveyed and read-back paths); bad offsets, lengths and
/// bit ranges fail as the in-place sort's do.
#[test]
fn expression_sorts_report_bad_arguments() {
    use cuprim::ops::Negate;
    for dev in devices() {
        let n = 6000usize;
        let x = DeviceVec::from_slice(&dev, &(0..n).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
        let mut idx: Vec<u32> = (0..n as u32).rev().collect();
        idx[n / 2] = n as u32; // one past the end
        let bad = DeviceVec::from_slice(&dev, &idx).unwrap();
        let one_class = DeviceVec::from_slice(&dev, &[0u32, 100, 3000, 6000]).unwrap();
        let mixed = DeviceVec::from_slice(&dev, &[0u64, 100, 1100, 6000]).unwrap();
        let oob = |e: cuprim::Error, what: &str| {
            assert!(
                matches!(e, cuprim::Error::IndexOutOfBounds { len, .. } if len == n),
                "{dev:?} {what}: {e}"
            );
        };
        oob(x.permute(&bad).segmented_sorted(&one_class).unwrap_err(), "keys, one class");
        oob(x.permute(&bad).segmented_sorted(&mixed).unwrap_err(), "keys, mixed");
        oob(
            x.lazy().segmented_sorted_pairs(&one_class, x.permute(&bad)).unwrap_err(),
            "values, one class",
        );
        oob(
            x.map(Negate).segmented_sorted_pairs(&mixed, x.permute(&bad)).unwrap_err(),
            "values, mixed",
        );
        // The index outside every segment is read too (written as it is).
        let tail = DeviceVec::from_slice(&dev, &[0u32, 10]).unwrap();
        oob(x.permute(&bad).segmented_sorted(&tail).unwrap_err(), "outside the segments");

        for offs in [&[][..], &[0u32, 4, 2, 6][..], &[0, 3, 6001][..], &[n as u32 + 1][..]] {
            let o = DeviceVec::from_slice(&dev, offs).unwrap();
            let e = x.map(Negate).segmented_sorted(&o).unwrap_err();
            assert!(matches!(e, cuprim::Error::InvalidArgument(_)), "{dev:?} {offs:?}: {e}");
            assert!(e.to_string().contains("segmented_sorted"), "{e}");
            let e = x.map(Negate).segmented_sorted_pairs(&o, &x).unwrap_err();
            assert!(matches!(e, cuprim::Error::InvalidArgument(_)), "{dev:?} {offs:?}: {e}");
        }
        let e = x
            .lazy()
            .segmented_sorted_pairs(&one_class, counting(&dev, 0u32, 1, n - 1))
            .unwrap_err();
        assert!(matches!(e, cuprim::Error::LengthMismatch { .. }), "{dev:?}: {e}");
        let e = x
            .lazy()
            .segmented_sorted_with(&one_class, SortOptions::new().bits(4, 40))
            .unwrap_err();
        assert!(matches!(e, cuprim::Error::InvalidArgument(_)), "{dev:?}: {e}");
        assert_eq!(x.to_vec().unwrap()[n - 1], (n - 1) as f32, "{dev:?} input changed");
    }
    if let Some(gpu) = common::cuda() {
        let x = DeviceVec::from_slice(&gpu, &[2u32, 1]).unwrap();
        let o = DeviceVec::from_slice(&Device::host(), &[0u32, 2]).unwrap();
        let e = x.lazy().segmented_sorted(&o).unwrap_err();
        assert!(matches!(e, cuprim::Error::DeviceMismatch { .. }), "{e}");
    }
}

/// `min(x, n)`: fixed-length offsets whose last one is cut at the keys'
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

/// Every segmented sort of `data` with offsets `expr` and with `collected`
/// (the same offsets in a buffer): the same bits, or the same error with
/// the keys (and values) untouched.
fn sorts_as_collected<X: IntoExpr + Copy>(dev: &Device, data: &[f32], expr: X, collected: &DeviceVec<u64>, ctx: &str)
where
    X::Expr: Expr<Item = u64>,
{
    use cuprim::ops::Negate;
    let n = data.len();
    type Sort<'a> = &'a dyn Fn(&mut DeviceVec<f32>, &mut DeviceVec<u32>) -> cuprim::Result<()>;
    let in_place = |o: Sort| {
        let mut k = DeviceVec::from_slice(dev, data).unwrap();
        let mut v = DeviceVec::sequence(dev, n, 0u32, 1).unwrap();
        let r = o(&mut k, &mut v).map_err(|e| e.to_string());
        let (k, v) = (k.to_vec().unwrap(), v.to_vec().unwrap());
        if r.is_err() {
            assert!(bytes(&k) == bytes(data), "{ctx}: keys changed by a failed sort");
            assert!(
                v.iter().enumerate().all(|(i, &x)| x == i as u32),
                "{ctx}: values changed by a failed sort"
            );
        }
        r.map(|()| (bytes(&k).to_vec(), v))
    };
    let desc = SortOptions::new().descending();
    assert_eq!(
        in_place(&|k, _| k.segmented_sort(expr)),
        in_place(&|k, _| k.segmented_sort(collected)),
        "{ctx}: segmented_sort"
    );
    assert_eq!(
        in_place(&|k, _| k.segmented_sort_with(expr, desc)),
        in_place(&|k, _| k.segmented_sort_with(collected, desc)),
        "{ctx}: segmented_sort_with"
    );
    assert_eq!(
        in_place(&|k, v| k.segmented_sort_pairs(expr, v)),
        in_place(&|k, v| k.segmented_sort_pairs(collected, v)),
        "{ctx}: segmented_sort_pairs"
    );
    assert_eq!(
        in_place(&|k, v| k.segmented_sort_pairs_descending(expr, v)),
        in_place(&|k, v| k.segmented_sort_pairs_descending(collected, v)),
        "{ctx}: segmented_sort_pairs_descending"
    );
    let x = DeviceVec::from_slice(dev, data).unwrap();
    let sorted = |o: cuprim::Result<DeviceVec<f32>>| o.map(|s| bytes(&s.to_vec().unwrap()).to_vec()).map_err(|e| e.to_string());
    assert_eq!(
        sorted(x.map(Negate).segmented_sorted(expr)),
        sorted(x.map(Negate).segmented_sorted(collected)),
        "{ctx}: segmented_sorted"
    );
    let pairs = |o: cuprim::Result<(DeviceVec<f32>, DeviceVec<u32>)>| {
        o.map(|(k, v)| (bytes(&k.to_vec().unwrap()).to_vec(), v.to_vec().unwrap()))
            .map_err(|e| e.to_string())
    };
    assert_eq!(
        pairs(x.map(Negate).segmented_sorted_pairs_with(expr, counting(dev, 0u32, 1, n), desc)),
        pairs(
            x.map(Negate)
                .segmented_sorted_pairs_with(collected, counting(dev, 0u32, 1, n), desc)
        ),
        "{ctx}: segmented_sorted_pairs_with"
    );
}

/// Offsets given as expressions (counting, a map of counting, a map of a
/// buffer, a slice, a permutation) sort as the collected offsets do, bit
/// for bit, fail as they do when bad, and fail with IndexOutOfBounds for a
/// permutation out of range, nothing moved.
#[test]
fn expression_offsets() {
    use cuprim::ops::Identity;
    for dev in devices() {
        for n in common::capped(&[0, 1, 33, 4097, 70_001]) {
            let (mut r, seed) = rng("segsort-expression-offsets");
            let data: Vec<f32> = random_vec(&mut r, n);
            let n64 = n as u64;
            for len in [1u64, 33, 1024, 5000] {
                let ctx = common::ctx(&dev, &format!("segments of {len}"), n, seed);
                // Whole segments; the ragged tail lies outside every segment.
                let whole = n64 / len;
                let o: Vec<u64> = (0..=whole).map(|i| i * len).collect();
                let collected = DeviceVec::from_slice(&dev, &o).unwrap();
                sorts_as_collected(
                    &dev,
                    &data,
                    counting(&dev, 0u64, len, o.len()),
                    &collected,
                    &format!("{ctx}, counting"),
                );
                let mut k = DeviceVec::from_slice(&dev, &data).unwrap();
                k.segmented_sort(counting(&dev, 0u32, len as u32, o.len())).unwrap();
                let (want, _) = reference(&data, &o, false, None);
                let got = k.to_vec().unwrap();
                assert!(bytes(&got) == bytes(&want), "{ctx}: u32 counting: {}", first_diff(&got, &want));
                // The last segment ragged: min(i * len, n).
                let segs = n64.div_ceil(len) as usize;
                let o: Vec<u64> = (0..=segs as u64).map(|i| (i * len).min(n64)).collect();
                let collected = DeviceVec::from_slice(&dev, &o).unwrap();
                let ragged = counting(&dev, 0u64, len, segs + 1).map(AtMost(n64));
                sorts_as_collected(&dev, &data, ragged, &collected, &format!("{ctx}, ragged"));
                // A map of a buffer, and a slice of a padded buffer.
                sorts_as_collected(&dev, &data, collected.map(Identity), &collected, &format!("{ctx}, map"));
                let mut padded = vec![n64 + 1];
                padded.extend(&o);
                padded.push(0);
                let pv = DeviceVec::from_slice(&dev, &padded).unwrap();
                let s = pv.slice(1..padded.len() - 1).unwrap();
                sorts_as_collected(&dev, &data, &s, &collected, &format!("{ctx}, slice"));
                // One past the end, and decreasing: the buffer form's errors.
                let past = counting(&dev, 0u64, len, whole as usize + 2);
                sorts_as_collected(&dev, &data, past, &past.collect().unwrap(), &format!("{ctx}, past the end"));
                let mut k = DeviceVec::from_slice(&dev, &data).unwrap();
                assert!(matches!(k.segmented_sort(past), Err(Error::InvalidArgument(_))), "{ctx}");
                if n > 1 {
                    let down = counting(&dev, n64, u64::MAX, 3);
                    sorts_as_collected(&dev, &data, down, &down.collect().unwrap(), &format!("{ctx}, decreasing"));
                    assert!(matches!(k.segmented_sort(down), Err(Error::InvalidArgument(_))), "{ctx}");
                }
            }
            // No offsets at all, as an expression.
            let mut k = DeviceVec::from_slice(&dev, &data).unwrap();
            assert!(
                matches!(k.segmented_sort(counting(&dev, 0u64, 1, 0)), Err(Error::InvalidArgument(_))),
                "{dev:?}"
            );
            // A permutation of the offsets: in range, and one index past the end.
            let o = DeviceVec::from_slice(&dev, &[0u64, n64 / 3, n64]).unwrap();
            let idx = DeviceVec::from_slice(&dev, &[0u32, 0, 1, 2, 2]).unwrap();
            let want = DeviceVec::from_slice(&dev, &[0u64, 0, n64 / 3, n64, n64]).unwrap();
            sorts_as_collected(&dev, &data, o.permute(&idx), &want, &format!("{dev:?} n={n}: permutation"));
            let bad = DeviceVec::from_slice(&dev, &[0u32, 1, 3]).unwrap();
            let oob = |e: Error, what: &str| {
                assert!(matches!(e, Error::IndexOutOfBounds { len: 3, .. }), "{dev:?} n={n} {what}: {e}");
            };
            let mut vals = DeviceVec::sequence(&dev, n, 0u32, 1).unwrap();
            oob(k.segmented_sort(o.permute(&bad)).unwrap_err(), "segmented_sort");
            oob(
                k.segmented_sort_pairs(o.permute(&bad), &mut vals).unwrap_err(),
                "segmented_sort_pairs",
            );
            assert!(bytes(&k.to_vec().unwrap()) == bytes(&data), "{dev:?} n={n}: keys moved");
            oob(k.lazy().segmented_sorted(o.permute(&bad)).unwrap_err(), "segmented_sorted");
            oob(
                k.lazy().segmented_sorted_pairs(o.permute(&bad), &vals).unwrap_err(),
                "segmented_sorted_pairs",
            );
        }
    }
}
