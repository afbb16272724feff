//! Segmented sort beside CUB's `DeviceSegmentedSort::SortKeys` and torch's
//! `sort(dim=1)`: f32 keys uniform in [0, 1) (benches/common's
//! `uniform_f32`, cub_next.cu's `gen_f32`), segments of 1024 (offsets `i *
//! 1024`, u32), as `shared/anchors/cub_next.cu`'s
//! `segmented_sort_f32_seg1024`. Every timed sort starts from the unsorted
//! input, copied into the work buffer before the start event (not timed),
//! as benches/sort.rs does. Bytes counted: the keys read and written once
//! (8n; 16n with the u32 values).
//!
//! Rows (group, function `uniform`, parameter n):
//! - `segmented_sort_f32_seg1024`: keys alone (`uniform`: the bitonic
//!   kernel; with the `segsort-tuning` feature also `uniform_radix`, the
//!   radix tile kernel it replaced, `CUPRIM_SEGSORT_BITONIC=0`, and
//!   `uniform_bitonic_shfl`, the bitonic kernel crossing lanes by shuffles
//!   rather than transposes, `CUPRIM_SEGSORT_BITONIC=shfl`; the mixture's
//!   `uniform_radix` likewise);
//! - `segmented_sort_pairs_f32_u32_seg1024`: with u32 values (each key's
//!   index);
//! - `segmented_sort_f32_mixture`: the same keys, segment lengths
//!   log-uniform in 1..=10^6, `floor(10^(6 u))` with `u = mix(s, 7) /
//!   2^32` for segment s (benches/common's `mix`), the last cut at n (a CUB
//!   anchor must build the same offsets).
//! - `fused_segmented_sort_f32_seg1024` (2^24 on a GPU; the host's one
//!   size): the keys of an expression, `x.map(Negate).segmented_sorted`
//!   (`fused`: each segment's first read is of the map, into a new vector)
//!   beside `x.transform(Negate)` then `segmented_sort` in place
//!   (`unfused`); nothing to restore, both allocate their output.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::prelude::*;

/// Offsets of segments of 1024 covering `n` (the last may be shorter).
fn uniform_offsets(n: usize) -> Vec<u32> {
    let mut offs: Vec<u32> = (0..n.div_ceil(1024)).map(|i| (i * 1024) as u32).collect();
    offs.push(n as u32);
    offs
}

/// Offsets of log-uniform segment lengths in 1..=10^6 covering `n`.
fn mixture_offsets(n: usize) -> Vec<u32> {
    let mut offs = vec![0u32];
    let mut at = 0usize;
    let mut s = 0u64;
    while at < n {
        let u = common::mix(s, 7) as f64 / 4_294_967_296.0;
        let len = (10f64.powf(6.0 * u).floor() as usize).max(1);
        at = (at + len).min(n);
        offs.push(at as u32);
        s += 1;
    }
    offs
}

/// Keys (and values) with their unsorted copies.
struct Work {
    keys_in: DeviceVec<f32>,
    keys: DeviceVec<f32>,
    values_in: DeviceVec<u32>,
    values: DeviceVec<u32>,
}

impl Work {
    fn restore_keys(&mut self) -> cuprim::Result<()> {
        self.keys.copy_from(&self.keys_in)
    }

    fn restore(&mut self) -> cuprim::Result<()> {
        self.keys.copy_from(&self.keys_in)?;
        self.values.copy_from(&self.values_in)
    }
}

fn segmented_sorts(c: &mut Criterion) {
    let dev = common::device();
    for n in common::sizes(&dev) {
        let keys = common::uniform_f32(n);
        let keys_in = DeviceVec::from_slice(&dev, &keys).expect("allocating keys");
        drop(keys);
        let values_in = DeviceVec::sequence(&dev, n, 0u32, 1).expect("allocating values");
        let mut w = Work {
            keys: keys_in.to_device_vec().expect("allocating keys"),
            values: values_in.to_device_vec().expect("allocating values"),
            keys_in,
            values_in,
        };
        let seg1024 = DeviceVec::from_slice(&dev, &uniform_offsets(n)).expect("allocating offsets");
        let mixture = DeviceVec::from_slice(&dev, &mixture_offsets(n)).expect("allocating offsets");

        let mut group = c.benchmark_group("segmented_sort_f32_seg1024");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("uniform", n), |b| {
            b.iter_custom(|iters| common::time_with_setup(&dev, iters, &mut w, Work::restore_keys, |w| w.keys.segmented_sort(&seg1024)))
        });
        // The radix tile kernel in place of the bitonic one, and the
        // bitonic one with shuffles, not transposes (feature
        // `segsort-tuning`: CUPRIM_SEGSORT_BITONIC=0 / shfl for that row only).
        #[cfg(feature = "segsort-tuning")]
        for (row, var) in [("uniform_radix", "0"), ("uniform_bitonic_shfl", "shfl")] {
            group.bench_function(BenchmarkId::new(row, n), |b| {
                std::env::set_var("CUPRIM_SEGSORT_BITONIC", var);
                b.iter_custom(|iters| {
                    common::time_with_setup(&dev, iters, &mut w, Work::restore_keys, |w| w.keys.segmented_sort(&seg1024))
                });
                std::env::remove_var("CUPRIM_SEGSORT_BITONIC");
            });
        }
        group.finish();

        let mut group = c.benchmark_group("segmented_sort_pairs_f32_u32_seg1024");
        group.throughput(Throughput::Bytes(16 * n as u64));
        group.bench_function(BenchmarkId::new("uniform", n), |b| {
            b.iter_custom(|iters| {
                common::time_with_setup(&dev, iters, &mut w, Work::restore, |w| {
                    w.keys.segmented_sort_pairs(&seg1024, &mut w.values)
                })
            })
        });
        group.finish();

        if n == 1 << 24 || !dev.is_cuda() {
            use cuprim::ops::Negate;
            let x = &w.keys_in;
            let mut group = c.benchmark_group("fused_segmented_sort_f32_seg1024");
            group.throughput(Throughput::Bytes(8 * n as u64));
            group.bench_function(BenchmarkId::new("fused", n), |b| {
                b.iter_custom(|iters| common::time_calls(&dev, iters, || x.map(Negate).segmented_sorted(&seg1024)))
            });
            group.bench_function(BenchmarkId::new("unfused", n), |b| {
                b.iter_custom(|iters| {
                    common::time_calls(&dev, iters, || {
                        let mut v = x.transform(Negate)?;
                        v.segmented_sort(&seg1024)?;
                        Ok(v)
                    })
                })
            });
            group.finish();
        }

        let mut group = c.benchmark_group("segmented_sort_f32_mixture");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("uniform", n), |b| {
            b.iter_custom(|iters| common::time_with_setup(&dev, iters, &mut w, Work::restore_keys, |w| w.keys.segmented_sort(&mixture)))
        });
        #[cfg(feature = "segsort-tuning")]
        group.bench_function(BenchmarkId::new("uniform_radix", n), |b| {
            std::env::set_var("CUPRIM_SEGSORT_BITONIC", "0");
            b.iter_custom(|iters| common::time_with_setup(&dev, iters, &mut w, Work::restore_keys, |w| w.keys.segmented_sort(&mixture)));
            std::env::remove_var("CUPRIM_SEGSORT_BITONIC");
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = segmented_sorts
}
criterion_main!(benches);
