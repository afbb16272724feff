//! Search family (lower_bound, upper_bound, binary_search, search_with,
//! is_sorted_until) against `partition_point` on the same data, on every
//! device, for every element type: awkward sizes on both paths (a plain
//! bisection for few queries, the index for many), misaligned slices,
//! duplicates, NaN and -0.0 in the total order, `Greater` and a user
//! comparator.

mod common;

use common::{capped, ctx, devices, random_vec, rng, small_vec, Key, TestRng};
use cuprim::algo::search::{Mode, NOT_FOUND};
use cuprim::cmp::{Comparator, Greater, Less};
use cuprim::prelude::*;
use rand::Rng;

/// The answer `partition_point` gives (u64::MAX: not found).
fn reference<K: Key, C: Comparator<K>>(sorted: &[K], x: K, cmp: &C, mode: Mode) -> u64 {
    let lower = sorted.partition_point(|&e| cmp.less(e, x));
    match mode {
        Mode::Lower => lower as u64,
        Mode::Upper => sorted.partition_point(|&e| !cmp.less(x, e)) as u64,
        Mode::Exact if lower < sorted.len() && !cmp.less(x, sorted[lower]) => lower as u64,
        Mode::Exact => u64::MAX,
    }
}

fn sizes() -> Vec<usize> {
    capped(if cfg!(debug_assertions) {
        &[0, 1, 2, 7, 33, 1000, 8193, 70_001]
    } else {
        &[0, 1, 2, 7, 33, 1000, 2048, 4096, 4097, 8191, 8192, 8193, 70_001, (1 << 20) + 3]
    })
}

/// Query counts for an array of n: few (a bisection) and many (the index).
fn query_counts(n: usize) -> Vec<usize> {
    let many = if cfg!(debug_assertions) { 3000 } else { 20_000 };
    let mut m = vec![0, 1, 5, 1000, (n / 2).max(3), many];
    m.sort();
    m.dedup();
    m
}

/// Queries: random values, elements of the data, and small values (duplicates).
fn queries<K: Key>(r: &mut TestRng, data: &[K], m: usize) -> Vec<K> {
    let random: Vec<K> = random_vec(r, m);
    let small: Vec<K> = small_vec(r, m);
    (0..m)
        .map(|i| match (r.gen::<u32>() % 3, data.is_empty()) {
            (0, false) => data[r.gen_range(0..data.len())],
            (1, _) => small[i],
            _ => random[i],
        })
        .collect()
}

fn check_search<K: Key>(tag: &str) {
    let (mut r, seed) = rng(tag);
    for n in sizes() {
        let mut random: Vec<K> = random_vec(&mut r, n + 3);
        random.sort_by(K::total);
        let mut few: Vec<K> = small_vec(&mut r, n + 3);
        few.sort_by(K::total);
        for (what, data) in [("random", random), ("few distinct", few)] {
            for dev in devices() {
                let v = DeviceVec::from_slice(&dev, &data).unwrap();
                // Offsets 0..3 move the array off the 32-byte sector boundary.
                for off in [0usize, 1, 3] {
                    let s = v.slice(off..off + n).unwrap();
                    let sorted = &data[off..off + n];
                    for m in query_counts(n) {
                        let q = queries::<K>(&mut r, sorted, m);
                        let qv = DeviceVec::from_slice(&dev, &q).unwrap();
                        for mode in [Mode::Lower, Mode::Upper, Mode::Exact] {
                            let c = ctx(&dev, &format!("{:?} {} {what} off={off} m={m}", mode, K::NAME), n, seed);
                            let want: Vec<u64> = q.iter().map(|&x| reference(sorted, x, &Less, mode)).collect();
                            let got = s.search_with::<u64, _, _>(&qv, Less, mode).unwrap_or_else(|e| panic!("{c}: {e}"));
                            assert_eq!(got.to_vec().unwrap(), want, "u64: {c}");
                            let narrow = match mode {
                                Mode::Lower => s.lower_bound(&qv),
                                Mode::Upper => s.upper_bound(&qv),
                                Mode::Exact => s.binary_search(&qv),
                            }
                            .unwrap_or_else(|e| panic!("{c}: {e}"));
                            let want32: Vec<u32> = want.iter().map(|&p| if p == u64::MAX { NOT_FOUND } else { p as u32 }).collect();
                            assert_eq!(narrow.to_vec().unwrap(), want32, "u32: {c}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn search_f32() {
    check_search::<f32>("search_f32");
}
#[test]
fn search_f64() {
    check_search::<f64>("search_f64");
}
#[test]
fn search_half() {
    check_search::<f16>("search_f16");
    check_search::<bf16>("search_bf16");
}
#[test]
fn search_integers() {
    check_search::<u8>("search_u8");
    check_search::<i8>("search_i8");
    check_search::<u32>("search_u32");
    check_search::<i32>("search_i32");
    check_search::<u64>("search_u64");
    check_search::<i64>("search_i64");
}

cuprim::comparator! {
    /// Closer to one half first (finite inputs only: NaN is no strict weak order here).
    struct NearHalf for f32 {
        rust: |a, b| (a - 0.5).abs() < (b - 0.5).abs(),
        cuda: "fabsf(a - 0.5f) < fabsf(b - 0.5f)",
    }
}

/// `Greater` on descending data and a user comparator, both paths.
#[test]
fn search_other_orders() {
    let (mut r, seed) = rng("search_orders");
    for n in [1usize, 100, 9000, 200_003] {
        let mut desc: Vec<i64> = small_vec(&mut r, n);
        desc.extend(random_vec::<i64>(&mut r, n));
        desc.sort_by(|a, b| b.cmp(a));
        let mut near: Vec<f32> = (0..n).map(|_| r.gen_range(-4.0f32..4.0)).collect();
        near.sort_by(|a, b| (a - 0.5).abs().total_cmp(&(b - 0.5).abs()));
        for dev in devices() {
            let dv = DeviceVec::from_slice(&dev, &desc).unwrap();
            let nv = DeviceVec::from_slice(&dev, &near).unwrap();
            for m in [3usize, 50_000] {
                let qd = queries::<i64>(&mut r, &desc, m);
                let qn: Vec<f32> = (0..m)
                    .map(|i| {
                        if i % 2 == 0 {
                            near[i % near.len()]
                        } else {
                            r.gen_range(-5.0f32..5.0)
                        }
                    })
                    .collect();
                let (qdv, qnv) = (DeviceVec::from_slice(&dev, &qd).unwrap(), DeviceVec::from_slice(&dev, &qn).unwrap());
                for mode in [Mode::Lower, Mode::Upper, Mode::Exact] {
                    let c = ctx(&dev, &format!("{mode:?} Greater m={m}"), desc.len(), seed);
                    let want: Vec<u64> = qd.iter().map(|&x| reference(&desc, x, &Greater, mode)).collect();
                    assert_eq!(
                        dv.search_with::<u64, _, _>(&qdv, Greater, mode).unwrap().to_vec().unwrap(),
                        want,
                        "{c}"
                    );
                    let c = ctx(&dev, &format!("{mode:?} NearHalf m={m}"), near.len(), seed);
                    let want: Vec<u64> = qn.iter().map(|&x| reference(&near, x, &NearHalf, mode)).collect();
                    assert_eq!(
                        nv.search_with::<u64, _, _>(&qnv, NearHalf, mode).unwrap().to_vec().unwrap(),
                        want,
                        "{c}"
                    );
                }
            }
        }
    }
}

/// An empty array, no queries, and the errors: mixed devices.
#[test]
fn search_edges_and_errors() {
    for dev in devices() {
        let empty = DeviceVec::<u32>::from_slice(&dev, &[]).unwrap();
        let q = DeviceVec::from_slice(&dev, &[0u32, 7, u32::MAX]).unwrap();
        assert_eq!(empty.lower_bound(&q).unwrap().to_vec().unwrap(), vec![0, 0, 0]);
        assert_eq!(empty.upper_bound(&q).unwrap().to_vec().unwrap(), vec![0, 0, 0]);
        assert_eq!(empty.binary_search(&q).unwrap().to_vec().unwrap(), vec![NOT_FOUND; 3]);
        let none = DeviceVec::<u32>::from_slice(&dev, &[]).unwrap();
        assert!(q.lower_bound(&none).unwrap().is_empty());
        if !dev.is_host() {
            let host_q = DeviceVec::from_slice(&Device::host(), &[1u32]).unwrap();
            let err = q.lower_bound(&host_q).unwrap_err();
            assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
        }
    }
}

fn check_sorted_until<K: Key>(tag: &str) {
    let (mut r, seed) = rng(tag);
    for n in sizes() {
        let mut data: Vec<K> = random_vec(&mut r, n);
        data.sort_by(K::total);
        for dev in devices() {
            // Sorted; then one descent at a random place (and near each end).
            let mut cases = vec![data.clone()];
            if n >= 2 {
                for at in [1, r.gen_range(1..n), n - 1] {
                    let mut d = data.clone();
                    d.swap(at - 1, at);
                    cases.push(d);
                }
            }
            cases.push(small_vec(&mut r, n));
            for d in cases {
                let want = (1..n).find(|&i| K::total(&d[i], &d[i - 1]).is_lt()).unwrap_or(n);
                let v = DeviceVec::from_slice(&dev, &d).unwrap();
                let c = ctx(&dev, &format!("is_sorted_until {}", K::NAME), n, seed);
                assert_eq!(v.is_sorted_until().unwrap(), want, "{c}");
                assert_eq!(v.is_sorted().unwrap(), want == n, "{c}");
                let want_desc = (1..n).find(|&i| K::total(&d[i - 1], &d[i]).is_lt()).unwrap_or(n);
                assert_eq!(v.is_sorted_until_by(Greater).unwrap(), want_desc, "Greater: {c}");
            }
        }
    }
}

#[test]
fn sorted_until_every_type() {
    check_sorted_until::<u8>("sorted_u8");
    check_sorted_until::<i32>("sorted_i32");
    check_sorted_until::<u64>("sorted_u64");
    check_sorted_until::<f16>("sorted_f16");
    check_sorted_until::<bf16>("sorted_bf16");
    check_sorted_until::<f32>("sorted_f32");
    check_sorted_until::<f64>("sorted_f64");
}

/// The sorted side as an input expression (`lower_bound_of`,
/// `upper_bound_of`, `binary_search_of`, `search_of_with`,
/// `is_sorted_until`): a map of the buffer, a permutation that sorts a
/// shuffled copy, a counting sequence, a view of the buffer itself; queries
/// from a buffer and from an expression; both paths (few queries bisect,
/// many run down the index); against the buffer forms and the reference.
#[test]
fn sorted_side_expressions() {
    use cuprim::ops::Identity;
    let (mut r, seed) = rng("search sorted expressions");
    for n in sizes() {
        let mut data: Vec<u32> = small_vec(&mut r, n);
        data.sort();
        // A shuffle and the permutation that reads it back in order.
        let mut order: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            order.swap(i, r.gen_range(0..=i));
        }
        let mut shuffled = vec![0u32; n];
        let mut back = vec![0u32; n];
        for (i, &o) in order.iter().enumerate() {
            shuffled[o as usize] = data[i];
            back[i] = o;
        }
        for dev in devices() {
            let v = DeviceVec::from_slice(&dev, &data).unwrap();
            let sh = DeviceVec::from_slice(&dev, &shuffled).unwrap();
            let bk = DeviceVec::from_slice(&dev, &back).unwrap();
            for m in query_counts(n) {
                let q = queries::<u32>(&mut r, &data, m);
                let qv = DeviceVec::from_slice(&dev, &q).unwrap();
                for mode in [Mode::Lower, Mode::Upper, Mode::Exact] {
                    let c = ctx(&dev, &format!("{mode:?} sorted side expr m={m}"), n, seed);
                    let want: Vec<u64> = q.iter().map(|&x| reference(&data, x, &Less, mode)).collect();
                    let got = [
                        v.map(Identity).search_of_with::<u64, _, _>(&qv, Less, mode),
                        sh.permute(&bk).search_of_with::<u64, _, _>(&qv, Less, mode),
                        v.lazy().search_of_with::<u64, _, _>(qv.map(Identity), Less, mode),
                    ];
                    for (k, g) in got.into_iter().enumerate() {
                        assert_eq!(g.unwrap_or_else(|e| panic!("{c} #{k}: {e}")).to_vec().unwrap(), want, "#{k}: {c}");
                    }
                    let want32: Vec<u32> = want.iter().map(|&p| if p == u64::MAX { NOT_FOUND } else { p as u32 }).collect();
                    let e = v.map(Identity);
                    let narrow = match mode {
                        Mode::Lower => e.lower_bound_of(&qv),
                        Mode::Upper => e.upper_bound_of(&qv),
                        Mode::Exact => e.binary_search_of(&qv),
                    };
                    assert_eq!(narrow.unwrap_or_else(|e| panic!("{c}: {e}")).to_vec().unwrap(), want32, "u32: {c}");
                }
                // Off the sector boundary: a slice read as a one-leaf expression.
                if n >= 3 {
                    let s = &data[3..];
                    let want: Vec<u32> = q.iter().map(|&x| reference(s, x, &Less, Mode::Lower) as u32).collect();
                    let got = v.slice(3..).unwrap().lazy().lower_bound_of(&qv).unwrap();
                    assert_eq!(got.to_vec().unwrap(), want, "slice at 3: {}", ctx(&dev, "lower_bound_of", n, seed));
                }
            }
            // Sorted prefixes of expressions.
            let c = ctx(&dev, "is_sorted_until of expressions", n, seed);
            assert_eq!(sh.permute(&bk).is_sorted_until().unwrap(), n, "{c}");
            assert!(v.map(Identity).is_sorted().unwrap(), "{c}");
            let want = (1..n).find(|&i| shuffled[i] < shuffled[i - 1]).unwrap_or(n);
            assert_eq!(sh.map(Identity).is_sorted_until().unwrap(), want, "{c}");
            let want_desc = (1..n).find(|&i| shuffled[i - 1] < shuffled[i]).unwrap_or(n);
            assert_eq!(sh.map(Identity).is_sorted_until_by(Greater).unwrap(), want_desc, "{c}");
            // A permutation out of range is an error, the data intact.
            if n > 0 {
                let mut bad = back.clone();
                bad[n / 2] = n as u32 + 5;
                let bad = DeviceVec::from_slice(&dev, &bad).unwrap();
                let qv = DeviceVec::from_slice(&dev, &queries::<u32>(&mut r, &data, 20_000)).unwrap();
                let err = sh.permute(&bad).lower_bound_of(&qv).unwrap_err();
                assert!(matches!(err, Error::IndexOutOfBounds { .. }), "{c}: {err}");
                let err = sh.permute(&bad).is_sorted_until().unwrap_err();
                assert!(matches!(err, Error::IndexOutOfBounds { .. }), "{c}: {err}");
                assert_eq!(sh.to_vec().unwrap(), shuffled, "{c}: data changed");
            }
        }
    }
    // Counting sequences, every type's comparator path, no buffer at all.
    for dev in devices() {
        let q = DeviceVec::from_slice(&dev, &[-5i64, 0, 3, 4, 299, 300, 1 << 40]).unwrap();
        let steps = counting(&dev, 0i64, 3, 100); // 0, 3, ..., 297
        assert_eq!(steps.lower_bound_of(&q).unwrap().to_vec().unwrap(), vec![0, 0, 1, 2, 100, 100, 100]);
        assert_eq!(steps.upper_bound_of(&q).unwrap().to_vec().unwrap(), vec![0, 1, 2, 2, 100, 100, 100]);
        assert_eq!(
            steps.binary_search_of(&q).unwrap().to_vec().unwrap(),
            vec![NOT_FOUND, 0, 1, NOT_FOUND, NOT_FOUND, NOT_FOUND, NOT_FOUND]
        );
        let empty = counting(&dev, 0i64, 1, 0);
        assert_eq!(empty.lower_bound_of(&q).unwrap().to_vec().unwrap(), vec![0; 7]);
        assert_eq!(empty.is_sorted_until().unwrap(), 0);
        assert!(steps.lower_bound_of(counting(&dev, 0i64, 1, 0)).unwrap().is_empty());
    }
}
