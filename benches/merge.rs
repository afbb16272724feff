//! Merge of two sorted halves beside CUB's `DeviceMerge::MergeKeys`: u32
//! keys, a = 0, 2, 4, ... and b = 1, 3, 5, ..., n / 2 each (exactly
//! `shared/anchors/cub_next.cu`'s `merge_keys_u32`: `evens(uc, n / 2, 0)`,
//! `evens(ud, n / 2, 1)`), so the merged output interleaves the two
//! element by element. Bytes counted: the keys read and written once (8n);
//! for the key-value variant (u32 values: each element's position in its
//! input) the values too (16n).
//!
//! Groups: `merge_u32` (keys alone) and `merge_pairs_u32_u32`, function
//! `halves`, parameter n; `merge_with_u32_maps`: the same halves through
//! `map(Identity)`, merged where they are read (`fused`) or collected into
//! two buffers first (`collected`).
//!
//! The stable merge sort (`sort_by`) beside CUB's
//! `DeviceMergeSort::StableSortKeysCopy`: f32 keys `(mix(i, 1) >> 8) /
//! 2^24` (benches/topk.rs's input, uniform in [0, 1)), sorted by a user
//! comparator, "closer to 0.5 first" (`merge_sort_f32_custom_cmp`), by
//! `Less` written as a user comparator (`merge_sort_f32_total_less`: the
//! merge sort), by the built-in `Less` (`sort_by_f32_less`, which takes the
//! radix sort), and the radix sort of the same keys
//! (`radix_sort_f32`), function `uniform`, parameter n; and the key-value
//! sort by "closer to 0.5 first" with u32 values, each key's input position
//! (`merge_sort_pairs_f32_u32_custom_cmp`, 16n bytes counted). Every timed
//! sort starts from the unsorted input, copied into the work buffer before
//! the start event (not timed), as benches/sort.rs does. Bytes counted:
//! the keys read and written once (8n).
//!
//! The set operations beside Thrust's (`benchmarks/anchors/thrust_set.cu`,
//! the same inputs): a = 0, 2, 4, ... and b = 0, 3, 6, ..., n / 2 u32 keys
//! each (a sixth of the keys in both), groups `set_union_u32`,
//! `set_intersection_u32`, `set_difference_u32` and
//! `set_symmetric_difference_u32`, function `halves`, parameter n. Each
//! call allocates its output and reads its length back, as Thrust's returns
//! its end. Bytes counted: both inputs read once and the output written
//! once. `set_union_by_key_u32_u32` and `set_intersection_by_key_u32_u32`:
//! the same keys with u32 values (each key's position in its side).
//! `merge_by_key_with_u32_counting`: `merge_pairs_u32_u32`'s merge with both
//! sides' values from counting sequences (no value buffers).
//! `set_union_with_u32_maps`: the union of the same halves through
//! `map(Identity)`, read in place (`fused`) or collected into two buffers
//! first (`collected`).

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::cmp::Less;
use cuprim::ops::Identity;
use cuprim::prelude::*;
use rayon::prelude::*;

/// cub_next.cu's `evens`: `2 * i + off` for `i < n`.
fn evens(n: usize, off: u32) -> Vec<u32> {
    (0..n as u32).into_par_iter().map(|i| 2 * i + off).collect()
}

/// thrust_set.cu's `multiples`: `step * i` (wrapping) for `i < n`.
fn multiples(n: usize, step: u32) -> Vec<u32> {
    (0..n as u32).into_par_iter().map(|i| i.wrapping_mul(step)).collect()
}

/// Output lengths of the four set operations of `multiples(half, 2)` and
/// `multiples(half, 3)` (both ascending below 2^32): counted on the host.
fn set_lengths(half: usize) -> [usize; 4] {
    let (max_a, max_b) = (2 * (half as u64 - 1), 3 * (half as u64 - 1));
    let both = (max_a.min(max_b) / 6 + 1) as usize;
    [2 * half - both, both, half - both, 2 * (half - both)]
}

fn set_ops(c: &mut Criterion) {
    let dev = common::device();
    for n in common::sizes(&dev) {
        let half = n / 2;
        let a = DeviceVec::from_slice(&dev, &multiples(half, 2)).expect("allocating");
        let b = DeviceVec::from_slice(&dev, &multiples(half, 3)).expect("allocating");
        let lens = set_lengths(half);
        macro_rules! op {
            ($group:expr, $len:expr, $call:ident) => {{
                let mut group = c.benchmark_group($group);
                group.throughput(Throughput::Bytes(4 * (n + $len) as u64));
                group.bench_function(BenchmarkId::new("halves", n), |bench| {
                    bench.iter_custom(|iters| common::time_calls(&dev, iters, || a.$call(&b)))
                });
                group.finish();
            }};
        }
        op!("set_union_u32", lens[0], set_union);
        op!("set_intersection_u32", lens[1], set_intersection);
        op!("set_difference_u32", lens[2], set_difference);
        op!("set_symmetric_difference_u32", lens[3], set_symmetric_difference);

        // Expression inputs: both sides through a map (Identity, so still
        // sorted), read where the set kernel reads them, against
        // collecting both maps first and taking the union of the buffers.
        let mut group = c.benchmark_group("set_union_with_u32_maps");
        group.throughput(Throughput::Bytes(4 * (n + lens[0]) as u64));
        group.bench_function(BenchmarkId::new("fused", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || a.map(Identity).set_union_with(b.map(Identity))))
        });
        group.bench_function(BenchmarkId::new("collected", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || a.map(Identity).collect()?.set_union(&b.map(Identity).collect()?)))
        });
        group.finish();

        // By key: u32 values (each key's position) beside each side's keys.
        let positions: Vec<u32> = (0..half as u32).collect();
        let va = DeviceVec::from_slice(&dev, &positions).expect("allocating");
        let vb = DeviceVec::from_slice(&dev, &positions).expect("allocating");
        let mut group = c.benchmark_group("set_union_by_key_u32_u32");
        group.throughput(Throughput::Bytes(8 * (n + lens[0]) as u64));
        group.bench_function(BenchmarkId::new("halves", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || a.set_union_by_key(&va, &b, &vb)))
        });
        group.finish();
        let mut group = c.benchmark_group("set_intersection_by_key_u32_u32");
        group.throughput(Throughput::Bytes((4 * n + 8 * lens[1]) as u64));
        group.bench_function(BenchmarkId::new("halves", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || a.set_intersection_by_key(&va, &b)))
        });
        group.finish();
    }
}

fn merges(c: &mut Criterion) {
    let dev = common::device();
    for n in common::sizes(&dev) {
        let half = n / 2;
        let a = DeviceVec::from_slice(&dev, &evens(half, 0)).expect("allocating");
        let b = DeviceVec::from_slice(&dev, &evens(half, 1)).expect("allocating");
        let positions: Vec<u32> = (0..half as u32).collect();
        let va = DeviceVec::from_slice(&dev, &positions).expect("allocating");
        let vb = DeviceVec::from_slice(&dev, &positions).expect("allocating");

        let mut group = c.benchmark_group("merge_u32");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("halves", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || a.merge(&b)))
        });
        group.finish();

        // Expression inputs: the halves through a map (Identity, so still
        // sorted), merged where they are read, against collecting both maps
        // first and merging the buffers.
        let mut group = c.benchmark_group("merge_with_u32_maps");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("fused", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || a.map(Identity).merge_with(b.map(Identity))))
        });
        group.bench_function(BenchmarkId::new("collected", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || a.map(Identity).collect()?.merge(&b.map(Identity).collect()?)))
        });
        group.finish();

        let mut group = c.benchmark_group("merge_pairs_u32_u32");
        group.throughput(Throughput::Bytes(16 * n as u64));
        group.bench_function(BenchmarkId::new("halves", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || a.merge_by_key(&va, &b, &vb)))
        });
        group.finish();

        // The same pairs with the values computed (each key's position as a
        // counting sequence), read where the merge reads them.
        let mut group = c.benchmark_group("merge_by_key_with_u32_counting");
        group.throughput(Throughput::Bytes(16 * n as u64));
        group.bench_function(BenchmarkId::new("fused", n), |bench| {
            bench.iter_custom(|iters| {
                common::time_calls(&dev, iters, || {
                    a.lazy()
                        .merge_by_key_with(counting(&dev, 0u32, 1, half), &b, counting(&dev, 0u32, 1, half))
                })
            })
        });
        group.finish();
    }
}

cuprim::comparator! {
    /// Closer to 0.5 first.
    struct NearHalf for f32 {
        rust: |a, b| (a - 0.5).abs() < (b - 0.5).abs(),
        cuda: "fabsf(a - 0.5f) < fabsf(b - 0.5f)",
    }
}

cuprim::comparator! {
    /// `Less` (total_cmp) written as a user comparator: the merge sort.
    struct TotalLess for f32 {
        rust: |a, b| a.total_cmp(&b).is_lt(),
        cuda: "cuprim_total_less(a, b)",
    }
}

fn merge_sorts(c: &mut Criterion) {
    let dev = common::device();
    for n in common::sizes(&dev) {
        let input = DeviceVec::from_slice(&dev, &common::uniform_f32(n)).expect("allocating");
        let mut work = input.to_device_vec().expect("allocating");

        let mut group = c.benchmark_group("merge_sort_f32_custom_cmp");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("uniform", n), |bench| {
            bench.iter_custom(|iters| common::time_with_setup(&dev, iters, &mut work, |w| w.copy_from(&input), |w| w.sort_by(NearHalf)))
        });
        group.finish();

        // The same sort of an expression (the keys through a map): the tile
        // sort reads it, no collected copy.
        let mut group = c.benchmark_group("sorted_by_f32_map_custom_cmp");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("fused", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || input.map(Identity).sorted_by(NearHalf)))
        });
        group.bench_function(BenchmarkId::new("collected", n), |bench| {
            bench.iter_custom(|iters| {
                common::time_calls(&dev, iters, || {
                    let mut v = input.map(Identity).collect()?;
                    v.sort_by(NearHalf)?;
                    Ok::<_, cuprim::Error>(v)
                })
            })
        });
        group.finish();

        // The same sort with u32 values (each key's input position) following.
        let positions = DeviceVec::from_slice(&dev, &(0..n as u32).collect::<Vec<u32>>()).expect("allocating");
        let mut pairs = (
            input.to_device_vec().expect("allocating"),
            positions.to_device_vec().expect("allocating"),
        );
        let mut group = c.benchmark_group("merge_sort_pairs_f32_u32_custom_cmp");
        group.throughput(Throughput::Bytes(16 * n as u64));
        group.bench_function(BenchmarkId::new("uniform", n), |bench| {
            bench.iter_custom(|iters| {
                common::time_with_setup(
                    &dev,
                    iters,
                    &mut pairs,
                    |(k, v)| {
                        k.copy_from(&input)?;
                        v.copy_from(&positions)
                    },
                    |(k, v)| k.sort_pairs_by(NearHalf, v),
                )
            })
        });
        group.finish();
        drop(pairs);

        // Less through a comparator that is not the built-in one: the merge
        // sort (sort_by(Less) takes the radix sort).
        let mut group = c.benchmark_group("merge_sort_f32_total_less");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("uniform", n), |bench| {
            bench.iter_custom(|iters| common::time_with_setup(&dev, iters, &mut work, |w| w.copy_from(&input), |w| w.sort_by(TotalLess)))
        });
        group.finish();

        let mut group = c.benchmark_group("sort_by_f32_less");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("uniform", n), |bench| {
            bench.iter_custom(|iters| common::time_with_setup(&dev, iters, &mut work, |w| w.copy_from(&input), |w| w.sort_by(Less)))
        });
        group.finish();

        // The radix sort of the same keys (same order as Less), for the 2x bound.
        let mut group = c.benchmark_group("radix_sort_f32");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("uniform", n), |bench| {
            bench.iter_custom(|iters| common::time_with_setup(&dev, iters, &mut work, |w| w.copy_from(&input), |w| w.sort()))
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = merges, merge_sorts, set_ops
}
criterion_main!(benches);
