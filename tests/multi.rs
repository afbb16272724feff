//! Sharded vectors (`cuprim::multi`) against plain references, on every
//! device: several shards on one device through the in-process exchange
//! (the same splitting, exchange and merge code NCCL runs under), a
//! one-device communicator against the single-device primitives, and NCCL
//! over every GPU this process sees when NCCL is installed.

mod common;

use common::{Compose, Key};
use cuprim::multi::{Communicator, ShardedVec};
use cuprim::ops::{BinaryOp, Monoid};
use cuprim::prelude::*;
use cuprim::Error;
use rand::Rng;

const SIZES: &[usize] = &[0, 1, 7, 1000, 4097, 100_003];

/// Shard layouts of `n` elements over `ranks`: even, everything on the
/// last rank (the others empty), and a skewed split.
fn layouts(n: usize, ranks: usize) -> Vec<Vec<usize>> {
    let even: Vec<usize> = (0..ranks).map(|r| n / ranks + usize::from(r < n % ranks)).collect();
    let mut last = vec![0; ranks];
    last[ranks - 1] = n;
    let mut skewed = vec![0; ranks];
    let mut left = n;
    for (r, s) in skewed.iter_mut().enumerate() {
        *s = if r + 1 == ranks { left } else { left / 3 };
        left -= *s;
    }
    vec![even, last, skewed]
}

/// The wrapping inclusive prefix sums of `x`.
fn prefix_sums(x: &[u32]) -> Vec<u32> {
    x.iter()
        .scan(0u32, |a, &v| {
            *a = a.wrapping_add(v);
            Some(*a)
        })
        .collect()
}

/// In-process communicators of 1 to 4 ranks on `dev`.
fn comms(dev: &Device) -> Vec<Communicator> {
    (1..=4).map(|p| Communicator::in_process(&vec![dev.clone(); p]).unwrap()).collect()
}

#[test]
fn reduce_and_sum_match_references() {
    for dev in common::devices() {
        for comm in comms(&dev) {
            for &n in SIZES {
                let (mut r, seed) = common::rng(&format!("multi-reduce-{n}"));
                let ints: Vec<u32> = (0..n).map(|_| r.gen()).collect();
                let signed: Vec<i64> = (0..n).map(|_| r.gen_range(-1000..1000)).collect();
                for lens in layouts(n, comm.size()) {
                    let ctx = format!("{dev:?} ranks={} lens={lens:?} seed={seed}", comm.size());
                    let v = ShardedVec::from_slice_with_lens(&comm, &ints, &lens).unwrap();
                    let want = ints.iter().fold(0u32, |a, &b| a.wrapping_add(b));
                    assert_eq!(v.sum().unwrap(), want, "sum {ctx}");
                    assert_eq!(v.reduce(Max).unwrap(), ints.iter().copied().max().unwrap_or(0), "max {ctx}");
                    assert_eq!(v.reduce(Min).unwrap(), ints.iter().copied().min().unwrap_or(u32::MAX), "min {ctx}");
                    let each = v.reduce_on_each(Add).unwrap();
                    assert_eq!(each.len(), comm.size(), "{ctx}");
                    for e in &each {
                        assert_eq!(e.to_vec().unwrap(), vec![want], "reduce_on_each {ctx}");
                    }
                    let s = ShardedVec::from_slice_with_lens(&comm, &signed, &lens).unwrap();
                    assert_eq!(s.sum().unwrap(), signed.iter().sum::<i64>(), "i64 sum {ctx}");
                }
            }
        }
    }
}

#[test]
fn float_sums_are_close_and_repeatable() {
    for dev in common::devices() {
        for comm in comms(&dev) {
            let (mut r, seed) = common::rng("multi-float");
            let n = 100_003;
            let data: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
            let v = ShardedVec::from_slice(&comm, &data).unwrap();
            let want: f64 = data.iter().map(|&x| x as f64).sum();
            let got = v.sum().unwrap();
            // f32 accumulation over 1e5 terms of magnitude <= 1.
            assert!(
                (got as f64 - want).abs() <= 1e-2,
                "{dev:?} ranks={} got {got} want {want} seed={seed}",
                comm.size()
            );
            for _ in 0..3 {
                assert_eq!(v.sum().unwrap().to_bits(), got.to_bits(), "{dev:?} repeat");
            }
            let whole = DeviceVec::from_slice(&dev, &data).unwrap();
            if comm.size() == 1 {
                // One rank: exactly the single-device result.
                assert_eq!(got.to_bits(), whole.sum().unwrap().to_bits(), "{dev:?} one rank");
                let scan = v.scan(Add).unwrap().to_vec().unwrap();
                let single = whole.scan(Add).unwrap().to_vec().unwrap();
                assert!(
                    scan.iter().zip(&single).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{dev:?} one-rank scan"
                );
            }
        }
    }
}

#[test]
fn scans_match_references() {
    for dev in common::devices() {
        for comm in comms(&dev) {
            for &n in SIZES {
                let (mut r, seed) = common::rng(&format!("multi-scan-{n}"));
                let ints: Vec<u32> = (0..n).map(|_| r.gen()).collect();
                // Affine maps: associative, not commutative.
                let maps: Vec<u64> = (0..n).map(|_| r.gen::<u64>() | (1 << 32)).collect();
                for lens in layouts(n, comm.size()) {
                    let ctx = format!("{dev:?} ranks={} lens={lens:?} seed={seed}", comm.size());
                    let v = ShardedVec::from_slice_with_lens(&comm, &ints, &lens).unwrap();
                    let incl = prefix_sums(&ints);
                    let s = v.scan(Add).unwrap();
                    assert_eq!(s.shard_lens(), lens, "scan keeps the sharding {ctx}");
                    assert_eq!(s.to_vec().unwrap(), incl, "inclusive {ctx}");
                    let excl: Vec<u32> = std::iter::once(0).chain(incl.iter().copied()).take(n).collect();
                    assert_eq!(v.scan_exclusive(Add).unwrap().to_vec().unwrap(), excl, "exclusive {ctx}");

                    let m = ShardedVec::from_slice_with_lens(&comm, &maps, &lens).unwrap();
                    let mut acc = Compose.identity();
                    let mut want_incl = Vec::with_capacity(n);
                    let mut want_excl = Vec::with_capacity(n);
                    for &f in &maps {
                        want_excl.push(acc);
                        acc = Compose.apply(acc, f);
                        want_incl.push(acc);
                    }
                    assert_eq!(m.scan(Compose).unwrap().to_vec().unwrap(), want_incl, "compose inclusive {ctx}");
                    assert_eq!(
                        m.scan_exclusive(Compose).unwrap().to_vec().unwrap(),
                        want_excl,
                        "compose exclusive {ctx}"
                    );
                }
            }
        }
    }
}

#[test]
fn histograms_match_the_single_device_histogram() {
    for dev in common::devices() {
        for comm in comms(&dev) {
            for &n in SIZES {
                let (mut r, seed) = common::rng(&format!("multi-hist-{n}"));
                let mut data: Vec<f32> = (0..n).map(|_| r.gen_range(-0.5..10.5)).collect();
                if n > 3 {
                    data[1] = f32::NAN;
                    data[2] = -0.0;
                }
                let whole = DeviceVec::from_slice(&dev, &data).unwrap();
                let bins = Bins::even(10, 0.0, 10.0);
                let want = whole.histogram(&bins).unwrap();
                let (want_counts, want_dropped) = (want.to_vec().unwrap(), want.dropped().unwrap());
                for lens in layouts(n, comm.size()) {
                    let ctx = format!("{dev:?} ranks={} lens={lens:?} seed={seed}", comm.size());
                    let v = ShardedVec::from_slice_with_lens(&comm, &data, &lens).unwrap();
                    let h = v.histogram(&bins).unwrap();
                    assert_eq!(h.to_vec().unwrap(), want_counts, "u32 counts {ctx}");
                    assert_eq!(h.dropped().unwrap(), want_dropped, "dropped {ctx}");
                    let h = v.histogram_u64(&bins).unwrap();
                    let wide: Vec<u64> = want_counts.iter().map(|&c| c as u64).collect();
                    assert_eq!(h.to_vec().unwrap(), wide, "u64 counts {ctx}");
                    assert_eq!(h.dropped().unwrap(), want_dropped, "u64 dropped {ctx}");
                }
            }
        }
    }
}

/// Checks `keys` (and values = input positions) sorted across shards
/// against the stable reference order.
fn check_sort<K: Key + Element>(comm: &Communicator, data: &[K], lens: &[usize], ctx: &str) {
    let order = common::stable_order(data, false, None);
    let want: Vec<K> = order.iter().map(|&i| data[i]).collect();
    let v = ShardedVec::from_slice_with_lens(comm, data, lens).unwrap();
    let sorted = v.sort().unwrap();
    assert_eq!(sorted.len(), data.len(), "length {ctx}");
    common::assert_same(&sorted.to_vec().unwrap(), &want, &format!("sort {ctx}"));
    let positions: Vec<u32> = (0..data.len() as u32).collect();
    let p = ShardedVec::from_slice_with_lens(comm, &positions, lens).unwrap();
    let (k, vals) = v.sort_pairs(&p).unwrap();
    assert_eq!(k.shard_lens(), vals.shard_lens(), "pairs sharded alike {ctx}");
    common::assert_same(&k.to_vec().unwrap(), &want, &format!("sort_pairs keys {ctx}"));
    let want_pos: Vec<u32> = order.iter().map(|&i| i as u32).collect();
    assert_eq!(vals.to_vec().unwrap(), want_pos, "sort_pairs values: stable {ctx}");
    // The input is untouched.
    common::assert_same(&v.to_vec().unwrap(), data, &format!("input intact {ctx}"));
}

#[test]
fn sorts_are_stable_across_shards() {
    for dev in common::devices() {
        for comm in comms(&dev) {
            for &n in SIZES {
                let (mut r, seed) = common::rng(&format!("multi-sort-{n}"));
                let few: Vec<u32> = (0..n).map(|_| r.gen_range(0..7)).collect();
                let wide: Vec<u64> = (0..n).map(|_| r.gen()).collect();
                let mut floats: Vec<f32> = (0..n).map(|_| r.gen_range(-3.0..3.0)).collect();
                for (i, x) in [f32::NAN, -0.0, 0.0, f32::INFINITY, -f32::NAN, -0.0].into_iter().enumerate() {
                    if i < n {
                        floats[i * 7 % n] = x;
                    }
                }
                let signed: Vec<i32> = (0..n).map(|_| r.gen_range(-50..50)).collect();
                let ascending: Vec<u32> = (0..n as u32).collect();
                let descending: Vec<u32> = (0..n as u32).rev().collect();
                let equal = vec![42u32; n];
                for lens in layouts(n, comm.size()) {
                    let ctx = format!("{dev:?} ranks={} n={n} lens={lens:?} seed={seed}", comm.size());
                    check_sort(&comm, &few, &lens, &format!("few distinct {ctx}"));
                    check_sort(&comm, &wide, &lens, &format!("u64 {ctx}"));
                    check_sort(&comm, &floats, &lens, &format!("f32 {ctx}"));
                    check_sort(&comm, &signed, &lens, &format!("i32 {ctx}"));
                    check_sort(&comm, &ascending, &lens, &format!("ascending {ctx}"));
                    check_sort(&comm, &descending, &lens, &format!("descending {ctx}"));
                    check_sort(&comm, &equal, &lens, &format!("all equal {ctx}"));
                }
            }
        }
    }
}

#[test]
fn sorted_shards_are_balanced_even_for_equal_keys() {
    for dev in common::devices() {
        let comm = Communicator::in_process(&vec![dev.clone(); 4]).unwrap();
        let n = 100_003;
        let (mut r, _) = common::rng("multi-balance");
        let random: Vec<u32> = (0..n).map(|_| r.gen()).collect();
        for (what, data) in [("equal", vec![9u32; n]), ("random", random)] {
            // Everything starts on one rank.
            let v = ShardedVec::from_slice_with_lens(&comm, &data, &[0, 0, 0, n]).unwrap();
            let lens = v.sort().unwrap().shard_lens();
            let even = n / 4;
            // Within the sampling's resolution (n / 1024 per sample) of even.
            assert!(lens.iter().all(|&l| l.abs_diff(even) <= n / 1024 + 2), "{dev:?} {what}: {lens:?}");
        }
    }
}

#[test]
fn all_to_all_moves_blocks_in_source_order() {
    for dev in common::devices() {
        for comm in comms(&dev) {
            let ranks = comm.size();
            for &n in SIZES {
                let (mut r, seed) = common::rng(&format!("multi-a2a-{n}"));
                let data: Vec<u64> = (0..n as u64).collect();
                for lens in layouts(n, ranks) {
                    // Random counts per row that add up to each shard.
                    let counts: Vec<Vec<usize>> = lens
                        .iter()
                        .map(|&len| {
                            let mut cut: Vec<usize> = (0..ranks - 1).map(|_| r.gen_range(0..=len)).collect();
                            cut.sort_unstable();
                            let mut row = Vec::with_capacity(ranks);
                            let mut prev = 0;
                            for c in cut.into_iter().chain(std::iter::once(len)) {
                                row.push(c - prev);
                                prev = c;
                            }
                            row
                        })
                        .collect();
                    let mut starts = vec![0; ranks];
                    for s in 1..ranks {
                        starts[s] = starts[s - 1] + lens[s - 1];
                    }
                    let mut want = Vec::new();
                    let mut want_lens = Vec::new();
                    for d in 0..ranks {
                        let before = want.len();
                        for s in 0..ranks {
                            let from = starts[s] + counts[s][..d].iter().sum::<usize>();
                            want.extend(&data[from..from + counts[s][d]]);
                        }
                        want_lens.push(want.len() - before);
                    }
                    let ctx = format!("{dev:?} ranks={ranks} lens={lens:?} counts={counts:?} seed={seed}");
                    let v = ShardedVec::from_slice_with_lens(&comm, &data, &lens).unwrap();
                    let w = v.all_to_all(&counts).unwrap();
                    assert_eq!(w.shard_lens(), want_lens, "{ctx}");
                    assert_eq!(w.to_vec().unwrap(), want, "{ctx}");
                    if n > 0 {
                        let mut bad = counts.clone();
                        bad[0][0] += 1;
                        assert!(matches!(v.all_to_all(&bad), Err(Error::InvalidArgument(_))), "{ctx}");
                        assert!(matches!(v.all_to_all(&counts[1..]), Err(Error::InvalidArgument(_))), "{ctx}");
                        let huge = vec![vec![usize::MAX; ranks]; ranks];
                        assert!(matches!(v.all_to_all(&huge), Err(Error::InvalidArgument(_))), "{ctx}");
                    }
                }
            }
        }
    }
}

#[test]
fn bad_arguments_are_errors() {
    let host = Device::host();
    let comm = Communicator::in_process(&[host.clone(), host.clone()]).unwrap();
    assert!(matches!(Communicator::in_process(&[]), Err(Error::InvalidArgument(_))));
    assert!(matches!(Communicator::new(&[]), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        Communicator::new(std::slice::from_ref(&host)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        ShardedVec::from_slice_with_lens(&comm, &[1u32, 2], &[1]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        ShardedVec::from_slice_with_lens(&comm, &[1u32, 2], &[1, 2]),
        Err(Error::InvalidArgument(_))
    ));
    let one = DeviceVec::from_slice(&host, &[1u32]).unwrap();
    assert!(matches!(ShardedVec::from_shards(&comm, vec![one]), Err(Error::InvalidArgument(_))));
    let k = ShardedVec::from_slice_with_lens(&comm, &[3u32, 1, 2], &[1, 2]).unwrap();
    let v = ShardedVec::from_slice_with_lens(&comm, &[0u32, 1, 2], &[2, 1]).unwrap();
    assert!(matches!(k.sort_pairs(&v), Err(Error::InvalidArgument(_))));
    let other = Communicator::in_process(&[host.clone(), host]).unwrap();
    let w = ShardedVec::from_slice_with_lens(&other, &[0u32, 1, 2], &[1, 2]).unwrap();
    assert!(matches!(k.sort_pairs(&w), Err(Error::InvalidArgument(_))));
    // The inputs are intact after the errors.
    assert_eq!(k.to_vec().unwrap(), vec![3, 1, 2]);
    if let Some(gpu) = common::cuda() {
        let mixed = Communicator::in_process(&[gpu.clone(), Device::host()]);
        assert!(matches!(mixed, Err(Error::InvalidArgument(_))));
        assert!(matches!(
            Communicator::new(&[gpu.clone(), gpu.clone()]),
            Err(Error::InvalidArgument(_))
        ));
        let comm = Communicator::in_process(&[gpu.clone(), gpu]).unwrap();
        let wrong = DeviceVec::from_slice(&Device::host(), &[1u32]).unwrap();
        let right = DeviceVec::from_slice(&comm.devices()[1], &[1u32]).unwrap();
        assert!(matches!(
            ShardedVec::from_shards(&comm, vec![wrong, right]),
            Err(Error::InvalidArgument(_))
        ));
    }
}

#[test]
fn nccl_is_found_or_reported() {
    match cuprim::multi::nccl_version() {
        Ok((version, at)) => assert!(version >= 20000, "NCCL {version} from {at}"),
        Err(e) => {
            let msg = e.to_string();
            assert!(matches!(e, Error::NcclUnavailable { .. }), "{msg}");
            assert!(msg.contains("nvidia-nccl-cu13") && msg.contains("CUPRIM_NCCL_DIR"), "{msg}");
        }
    }
}

/// NCCL over every GPU this process sees (one GPU: a communicator of one;
/// two or more: the sharded algorithms across them), checked like the
/// in-process exchange.
#[test]
fn nccl_communicators_match_references() {
    let Some(gpu) = common::cuda() else { return };
    if let Err(e) = cuprim::multi::nccl_version() {
        if common::required(common::Needs::Cuda) && std::env::var_os("CUPRIM_REQUIRE_NCCL").is_some() {
            panic!("CUPRIM_REQUIRE_NCCL is set but NCCL cannot be used: {e}");
        }
        common::skip("nccl_communicators_match_references", &e.to_string());
        return;
    }
    let mut gpus = vec![gpu];
    while let Ok(d) = Device::cuda(gpus.len()) {
        gpus.push(d);
    }
    for count in 1..=gpus.len() {
        let comm = Communicator::new(&gpus[..count]).unwrap();
        assert_eq!(comm.kind(), "NCCL");
        for &n in SIZES {
            let (mut r, seed) = common::rng(&format!("multi-nccl-{n}"));
            let ints: Vec<u32> = (0..n).map(|_| r.gen_range(0..1000)).collect();
            for lens in layouts(n, count) {
                let ctx = format!("NCCL ranks={count} lens={lens:?} seed={seed}");
                let v = ShardedVec::from_slice_with_lens(&comm, &ints, &lens).unwrap();
                assert_eq!(v.sum().unwrap(), ints.iter().sum::<u32>(), "sum {ctx}");
                let incl = prefix_sums(&ints);
                assert_eq!(v.scan(Add).unwrap().to_vec().unwrap(), incl, "scan {ctx}");
                let whole = DeviceVec::from_slice(&comm.devices()[0], &ints).unwrap();
                let bins = Bins::even(16, 0, 1000);
                let want = whole.histogram(&bins).unwrap().to_vec().unwrap();
                assert_eq!(v.histogram(&bins).unwrap().to_vec().unwrap(), want, "histogram {ctx}");
                check_sort(&comm, &ints, &lens, &ctx);
                // Every rank keeps its own elements: each sends to itself.
                let own: Vec<Vec<usize>> = (0..count)
                    .map(|s| (0..count).map(|d| if d == s { lens[s] } else { 0 }).collect())
                    .collect();
                assert_eq!(v.all_to_all(&own).unwrap().to_vec().unwrap(), ints, "all_to_all {ctx}");
            }
        }
    }
}
