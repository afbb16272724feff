//! Top-k family (top_k, top_k_rows, top_k_segments, select_nth,
//! partial_sort) against a plain reference: a full sort of (key, index)
//! pairs in the `total_cmp` order, on every device, for every element
//! type, over awkward sizes and adversarial inputs.

mod common;

use common::{capped, ctx, devices, random_vec, rng, small_vec, Key, TestRng};
use cuprim::algo::topk::TopKOptions;
use cuprim::prelude::*;
use rand::Rng;

/// The reference: input positions in the top-k order (largest first, or
/// smallest first), ties to the lower position.
fn reference<K: Key>(data: &[K], smallest: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..data.len()).collect();
    order.sort_by(|&a, &b| {
        let by_key = if smallest {
            K::total(&data[a], &data[b])
        } else {
            K::total(&data[b], &data[a])
        };
        by_key.then(a.cmp(&b))
    });
    order
}

fn bits<K: Key>(v: &[K]) -> Vec<u64> {
    v.iter().map(|&x| x.ordered()).collect()
}

/// Inputs that stress a radix select: random, a comb (defeats an evenly
/// spaced sample), few distinct values, all equal, sorted, reversed, values
/// sharing their top bits.
fn inputs<K: Key>(r: &mut TestRng, n: usize) -> Vec<(&'static str, Vec<K>)> {
    let random: Vec<K> = random_vec(r, n);
    let mut sorted = random.clone();
    sorted.sort_by(K::total);
    let mut reversed = sorted.clone();
    reversed.reverse();
    let few: Vec<K> = small_vec(r, n);
    let equal = vec![few.first().copied().unwrap_or_else(|| K::small(r)); n];
    // Near-equal: one value with a random low byte (keys sharing every digit but the last).
    let base = random.first().copied().unwrap_or_else(|| K::small(r));
    let near: Vec<K> = (0..n)
        .map(|_| {
            let mut b = bytemuck::bytes_of(&base).to_vec();
            b[0] = r.gen();
            bytemuck::pod_read_unaligned(&b)
        })
        .collect();
    // A comb: the larger half of the values at odd positions, the smaller
    // at even ones, so an evenly spaced sample sees only one half (the
    // device's sampled window then misses and must fall back).
    let comb: Vec<K> = (0..n)
        .map(|i| if i % 2 == 0 { sorted[i / 2] } else { sorted[n / 2 + i / 2] })
        .collect();
    vec![
        ("random", random),
        ("comb", comb),
        ("sorted", sorted),
        ("reversed", reversed),
        ("few distinct", few),
        ("all equal", equal),
        ("near equal", near),
    ]
}

fn ks(n: usize) -> Vec<usize> {
    let mut k = vec![0, 1, 2, 7, 50, 1000, 1025, 2049, 5000, n / 2, n.saturating_sub(1), n];
    k.retain(|&k| k <= n);
    k.sort();
    k.dedup();
    k
}

fn sizes() -> Vec<usize> {
    capped(if cfg!(debug_assertions) {
        &[0, 1, 2, 33, 1000, 16_384, 16_385, 70_001]
    } else {
        &[0, 1, 2, 33, 1000, 16_384, 16_385, 70_001, 1 << 20, (1 << 22) + 3]
    })
}

/// The host backend's code is the same at every size; past this it is
/// checked no further (its 2^22-element runs were most of this suite's time).
const HOST_MAX_N: usize = 1 << 17;

/// The devices checked at size `n`.
fn devices_at(n: usize) -> Vec<Device> {
    devices().into_iter().filter(|d| !d.is_host() || n <= HOST_MAX_N).collect()
}

/// [`sizes`] for keys `K`: the 2^22 + 3 run (where the window's
/// candidates outgrow the finish) for f32 only.
fn sizes_for<K: Key>() -> Vec<usize> {
    let mut s = sizes();
    if K::NAME != "f32" {
        s.retain(|&n| n <= 1 << 20);
    }
    s
}

fn check_top_k<K: Key>(tag: &str) {
    let (mut r, seed) = rng(tag);
    for n in sizes_for::<K>() {
        for (what, data) in inputs::<K>(&mut r, n) {
            let orders = [reference(&data, false), reference(&data, true)];
            for dev in devices_at(n) {
                let v = DeviceVec::from_slice(&dev, &data).unwrap();
                for smallest in [false, true] {
                    let order = &orders[smallest as usize];
                    let opts = if smallest {
                        TopKOptions::smallest()
                    } else {
                        TopKOptions::largest()
                    };
                    for k in ks(n) {
                        let c = ctx(&dev, &format!("top_k {} {what} k={k} smallest={smallest}", K::NAME), n, seed);
                        let got = v.top_k_with::<u32>(k, opts).unwrap_or_else(|e| panic!("{c}: {e}"));
                        let idx = got.indices.to_vec().unwrap();
                        let want: Vec<u32> = order[..k].iter().map(|&i| i as u32).collect();
                        assert_eq!(idx, want, "indices: {c}");
                        let vals = got.values.to_vec().unwrap();
                        let want_vals: Vec<K> = order[..k].iter().map(|&i| data[i]).collect();
                        assert_eq!(bits(&vals), bits(&want_vals), "values: {c}");
                        if k == n.min(50) && n > 0 {
                            let wide = v.top_k_with::<u64>(k, opts).unwrap();
                            let w: Vec<u64> = wide.indices.to_vec().unwrap();
                            assert_eq!(w, want.iter().map(|&i| i as u64).collect::<Vec<_>>(), "u64 indices: {c}");
                            let again = v.top_k_with::<u32>(k, opts).unwrap();
                            assert_eq!(again.indices.to_vec().unwrap(), idx, "second run: {c}");
                        }
                    }
                    assert!(v.top_k_with::<u32>(n + 1, opts).is_err(), "k > n must be an error");
                }
            }
        }
    }
}

#[test]
fn top_k_f32() {
    check_top_k::<f32>("topk_f32");
}
#[test]
fn top_k_f64() {
    check_top_k::<f64>("topk_f64");
}
#[test]
fn top_k_half() {
    check_top_k::<f16>("topk_f16");
    check_top_k::<bf16>("topk_bf16");
}
#[test]
fn top_k_integers() {
    check_top_k::<u8>("topk_u8");
    check_top_k::<i8>("topk_i8");
    check_top_k::<u32>("topk_u32");
    check_top_k::<i32>("topk_i32");
    check_top_k::<u64>("topk_u64");
    check_top_k::<i64>("topk_i64");
}

fn check_rows<K: Key>(tag: &str) {
    let (mut r, seed) = rng(tag);
    for dev in devices() {
        for &(rows, cols) in &[(1usize, 1usize), (3, 5), (7, 2048), (5, 2049), (4, 32768), (2, 100_003)] {
            for (what, data) in inputs::<K>(&mut r, rows * cols) {
                if !["random", "comb", "few distinct", "all equal"].contains(&what) {
                    continue;
                }
                let v = DeviceVec::from_slice(&dev, &data).unwrap();
                for k in [1usize, 2, 50, 256, 1024, 1500] {
                    if k > cols {
                        assert!(v.top_k_rows(cols, k, TopKOptions::largest()).is_err());
                        continue;
                    }
                    for smallest in [false, true] {
                        let opts = if smallest {
                            TopKOptions::smallest()
                        } else {
                            TopKOptions::largest()
                        };
                        let c = ctx(
                            &dev,
                            &format!("top_k_rows {} {what} {rows}x{cols} k={k} smallest={smallest}", K::NAME),
                            rows * cols,
                            seed,
                        );
                        let got = v.top_k_rows(cols, k, opts).unwrap_or_else(|e| panic!("{c}: {e}"));
                        let (vals, idx) = (got.values.to_vec().unwrap(), got.indices.to_vec().unwrap());
                        assert_eq!(idx.len(), rows * k, "{c}");
                        for row in 0..rows {
                            let seg = &data[row * cols..(row + 1) * cols];
                            let order = reference(seg, smallest);
                            let want: Vec<u32> = order[..k].iter().map(|&i| i as u32).collect();
                            assert_eq!(idx[row * k..(row + 1) * k], want[..], "row {row}: {c}");
                            let wv: Vec<K> = order[..k].iter().map(|&i| seg[i]).collect();
                            assert_eq!(bits(&vals[row * k..(row + 1) * k]), bits(&wv), "row {row} values: {c}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn top_k_rows_every_type() {
    check_rows::<f32>("rows_f32");
    check_rows::<f16>("rows_f16");
    check_rows::<f64>("rows_f64");
    check_rows::<i32>("rows_i32");
    check_rows::<u8>("rows_u8");
}

#[test]
fn top_k_segments_and_errors() {
    let (mut r, seed) = rng("segments");
    for dev in devices() {
        let data: Vec<f32> = random_vec(&mut r, 50_000);
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        let offsets = [0usize, 3, 3 + 4096, 3 + 4096 + 40_000, 50_000];
        let k = 3;
        let c = ctx(&dev, "top_k_segments", data.len(), seed);
        let got = v
            .top_k_segments(&offsets, k, TopKOptions::largest())
            .unwrap_or_else(|e| panic!("{c}: {e}"));
        let idx = got.indices.to_vec().unwrap();
        for (s, w) in offsets.windows(2).enumerate() {
            let order = reference(&data[w[0]..w[1]], false);
            let want: Vec<u32> = order[..k].iter().map(|&i| i as u32).collect();
            assert_eq!(idx[s * k..(s + 1) * k], want[..], "segment {s}: {c}");
        }
        // Bad segments: decreasing, past the end, shorter than k; none changes the data.
        assert!(v.top_k_segments(&[0, 5, 4], 1, TopKOptions::largest()).is_err());
        assert!(v.top_k_segments(&[0, 50_001], 1, TopKOptions::largest()).is_err());
        assert!(v.top_k_segments(&[0, 2, 10], 3, TopKOptions::largest()).is_err());
        assert!(v.top_k_rows(0, 1, TopKOptions::largest()).is_err());
        assert!(v.top_k_rows(7, 1, TopKOptions::largest()).is_err());
        let none = v.top_k_segments(&[], 5, TopKOptions::largest()).unwrap();
        assert_eq!(none.values.len(), 0);
        assert_eq!(v.to_vec().unwrap().len(), data.len());
    }
}

fn check_select_nth<K: Key>(tag: &str) {
    let (mut r, seed) = rng(tag);
    for n in sizes_for::<K>() {
        for (what, data) in inputs::<K>(&mut r, n) {
            let order = reference(&data, true);
            for dev in devices_at(n) {
                let v = DeviceVec::from_slice(&dev, &data).unwrap();
                for nth in [0, 1, n / 3, n / 2, n.saturating_sub(2), n.saturating_sub(1)] {
                    if nth >= n {
                        continue;
                    }
                    let c = ctx(&dev, &format!("select_nth {} {what} nth={nth}", K::NAME), n, seed);
                    let got = v.select_nth(nth).unwrap_or_else(|e| panic!("{c}: {e}"));
                    assert_eq!(got.ordered(), data[order[nth]].ordered(), "{c}");
                }
                assert!(v.select_nth(n).is_err());
            }
        }
    }
}

#[test]
fn select_nth_every_type() {
    check_select_nth::<f32>("nth_f32");
    check_select_nth::<f64>("nth_f64");
    check_select_nth::<bf16>("nth_bf16");
    check_select_nth::<i64>("nth_i64");
    check_select_nth::<u8>("nth_u8");
}

#[test]
fn partial_sort_keeps_every_element() {
    let (mut r, seed) = rng("partial_sort");
    for n in sizes() {
        for (what, data) in inputs::<f32>(&mut r, n) {
            let order = reference(&data, true);
            let mut orig = bits(&data);
            orig.sort_unstable();
            for dev in devices_at(n) {
                for k in ks(n) {
                    let c = ctx(&dev, &format!("partial_sort {what} k={k}"), n, seed);
                    let mut v = DeviceVec::from_slice(&dev, &data).unwrap();
                    v.partial_sort(k).unwrap_or_else(|e| panic!("{c}: {e}"));
                    let out = v.to_vec().unwrap();
                    let want: Vec<f32> = order[..k].iter().map(|&i| data[i]).collect();
                    assert_eq!(bits(&out[..k]), bits(&want), "first k: {c}");
                    let mut all = bits(&out);
                    all.sort_unstable();
                    assert_eq!(all, orig, "the elements are a permutation: {c}");
                }
                let mut v = DeviceVec::from_slice(&dev, &data).unwrap();
                assert!(v.partial_sort(n + 1).is_err());
                assert_eq!(bits(&v.to_vec().unwrap()), bits(&data), "data intact after an error");
            }
        }
    }
}

/// Top-k and select_nth of an expression (`x.map(Negate)`) against the same
/// calls on the collected vector, bit for bit (values and indices, both
/// orders, `u32` and `u64` indices), and against the reference of the
/// collected values: every input shape of [`inputs`] (the comb makes the
/// device's sampled window miss), every size and `k` of the buffer tests.
#[test]
fn top_k_of_expressions_equals_top_k_of_collected_vectors() {
    use cuprim::ops::Negate;
    let (mut r, seed) = rng("topk expressions");
    for n in sizes_for::<f32>() {
        for (what, data) in inputs::<f32>(&mut r, n) {
            let mapped: Vec<f32> = data.iter().map(|&x| -x).collect();
            let orders = [reference(&mapped, false), reference(&mapped, true)];
            for dev in devices_at(n) {
                let x = DeviceVec::from_slice(&dev, &data).unwrap();
                let collected = x.map(Negate).collect().unwrap();
                for smallest in [false, true] {
                    let opts = if smallest {
                        TopKOptions::smallest()
                    } else {
                        TopKOptions::largest()
                    };
                    for k in ks(n) {
                        let c = ctx(&dev, &format!("top_k of map {what} k={k} smallest={smallest}"), n, seed);
                        let fused = x.map(Negate).top_k_with::<u32>(k, opts).unwrap_or_else(|e| panic!("{c}: {e}"));
                        let plain = collected.top_k_with::<u32>(k, opts).unwrap();
                        let (fi, fv) = (fused.indices.to_vec().unwrap(), fused.values.to_vec().unwrap());
                        assert_eq!(fi, plain.indices.to_vec().unwrap(), "indices vs collected: {c}");
                        assert_eq!(bits(&fv), bits(&plain.values.to_vec().unwrap()), "values vs collected: {c}");
                        let want: Vec<u32> = orders[smallest as usize][..k].iter().map(|&i| i as u32).collect();
                        assert_eq!(fi, want, "indices vs reference: {c}");
                        if k == n.min(50) {
                            let wide = x.map(Negate).top_k_with::<u64>(k, opts).unwrap();
                            let want64: Vec<u64> = want.iter().map(|&i| i as u64).collect();
                            assert_eq!(wide.indices.to_vec().unwrap(), want64, "u64 indices: {c}");
                        }
                    }
                    assert!(x.map(Negate).top_k_with::<u32>(n + 1, opts).is_err());
                }
                for nth in [0, n / 3, n / 2, n.saturating_sub(1)] {
                    if nth < n {
                        let c = ctx(&dev, &format!("select_nth of map {what} nth={nth}"), n, seed);
                        let got = x.map(Negate).select_nth(nth).unwrap_or_else(|e| panic!("{c}: {e}"));
                        assert_eq!(got.to_bits(), collected.select_nth(nth).unwrap().to_bits(), "{c}");
                    }
                }
                assert!(x.map(Negate).select_nth(n).is_err());
            }
        }
    }
}

/// Expressions of other shapes: no buffer at all (counting), buffers at
/// different offsets from a vector boundary (read one element at a time),
/// narrow buffers widened (u8 gathered, cast to f32), a checked gather
/// with an index out of range, and k = 0 (reads nothing).
#[test]
fn top_k_of_other_expressions() {
    use cuprim::ops::{Cast, Mul, Square};
    let (mut r, seed) = rng("topk other expressions");
    for n in capped(&[1, 100, 16_385, 70_001, 1 << 20]) {
        let a: Vec<f32> = random_vec(&mut r, n + 1);
        let b: Vec<u8> = small_vec(&mut r, n);
        let idx: Vec<u32> = (0..n).map(|_| r.gen_range(0..n as u32)).collect();
        for dev in devices_at(n) {
            let da = DeviceVec::from_slice(&dev, &a).unwrap();
            let db = DeviceVec::from_slice(&dev, &b).unwrap();
            let di = DeviceVec::from_slice(&dev, &idx).unwrap();
            let k = 37.min(n);
            macro_rules! same {
                ($e:expr, $what:expr) => {{
                    let c = ctx(&dev, $what, n, seed);
                    for opts in [TopKOptions::largest(), TopKOptions::smallest()] {
                        let fused = $e.top_k_with::<u32>(k, opts).unwrap_or_else(|e| panic!("{c}: {e}"));
                        let plain = $e.collect().unwrap().top_k_with::<u32>(k, opts).unwrap();
                        assert_eq!(fused.indices.to_vec().unwrap(), plain.indices.to_vec().unwrap(), "{c}");
                        assert_eq!(
                            bits(&fused.values.to_vec().unwrap()),
                            bits(&plain.values.to_vec().unwrap()),
                            "{c}"
                        );
                    }
                    let nth = n / 2;
                    assert_eq!(
                        $e.select_nth(nth).unwrap().ordered(),
                        $e.collect().unwrap().select_nth(nth).unwrap().ordered(),
                        "select_nth {c}"
                    );
                }};
            }
            same!(counting(&dev, 1i64 - n as i64 / 2, 3, n).map(Square), "counting, no buffer");
            let (hi, lo) = (da.slice(1..).unwrap(), da.slice(..n).unwrap());
            same!(zip(&hi, &lo).map(Mul), "buffers one element apart");
            same!(db.permute(&di).map(Cast::<f32>::new()), "u8 gathered, as f32");
            same!(lo.lazy(), "a buffer");

            let mut bad = idx.clone();
            bad[n / 2] = n as u32;
            let bad = DeviceVec::from_slice(&dev, &bad).unwrap();
            let oob = |e: cuprim::Error| matches!(e, cuprim::Error::IndexOutOfBounds { len, .. } if len == n);
            assert!(oob(db.permute(&bad).top_k(k).unwrap_err()), "{dev:?} n={n}");
            assert!(
                oob(db.permute(&bad).top_k_with::<u64>(k, TopKOptions::smallest()).unwrap_err()),
                "{dev:?} n={n}"
            );
            assert!(oob(db.permute(&bad).select_nth(0).unwrap_err()), "{dev:?} n={n}");
            let none = db.permute(&bad).top_k(0).unwrap();
            assert_eq!((none.values.len(), none.indices.len()), (0, 0));
        }
    }
}
