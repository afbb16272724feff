//! Segmented reductions beside CUB's `DeviceSegmentedReduce::Sum` and
//! torch's `view(-1, 1024).sum(1)`: f32 values `benches/common::uniform_f32`
//! (cub_next.cu's `gen_f32(fa, n, 1)`), u64 offsets `i * 1024` for
//! `i <= n / 1024` (cub_next.cu's `seg_offsets`, int64), so n / 1024
//! segments of 1024. Bytes counted: the values read once (4n); the offsets
//! and results are 1/256 of that.
//!
//! Groups: `segmented_sum_f32_seg1024` and `segmented_argmin_f32_seg1024`
//! (segmented_min_element, u64 indices), function `uniform`; and
//! `segmented_sum_f32_mixture`, function `log_uniform`: segment sizes
//! `exp(u * ln(10^6))` for u uniform in [0, 1) (1 to 10^6, log-uniform,
//! seeded by `common::mix`), one in eight followed by a run of up to 1000
//! empty segments, cut at n. Parameter n. And the predicate collectives per
//! segment of 1024 (`segmented_count_f32_seg1024`: `segmented_count(Gt(0.5))`
//! and `segmented_all(Gt(0.5))`, functions `count` and `all`), against the
//! sum of the same segments (same bytes read).

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::pred::Gt;
use cuprim::prelude::*;

/// Offsets of a log-uniform mixture of segment sizes (1 to 10^6) over n
/// elements, with runs of empty segments.
fn mixture(n: usize) -> Vec<u64> {
    let mut o = vec![0u64];
    let mut i = 0u64;
    while *o.last().unwrap() < n as u64 {
        let u = common::mix(i, 7) as f64 / 4_294_967_296.0;
        let size = (u * 1e6f64.ln()).exp() as u64;
        o.push((o.last().unwrap() + size).min(n as u64));
        if common::mix(i, 8).is_multiple_of(8) {
            let empties = common::mix(i, 9) % 1000;
            let last = *o.last().unwrap();
            o.extend(std::iter::repeat_n(last, empties as usize));
        }
        i += 1;
    }
    o
}

fn segmented(c: &mut Criterion) {
    let dev = common::device();
    for n in common::sizes(&dev) {
        let values = DeviceVec::from_slice(&dev, &common::uniform_f32(n)).expect("allocating");
        let offsets: Vec<u64> = (0..=(n / 1024) as u64).map(|i| i * 1024).collect();
        let offsets = DeviceVec::from_slice(&dev, &offsets).expect("allocating");

        let mut group = c.benchmark_group("segmented_sum_f32_seg1024");
        group.throughput(Throughput::Bytes(4 * n as u64));
        group.bench_function(BenchmarkId::new("uniform", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || values.segmented_sum(&offsets)))
        });
        group.finish();

        let mut group = c.benchmark_group("segmented_argmin_f32_seg1024");
        group.throughput(Throughput::Bytes(4 * n as u64));
        group.bench_function(BenchmarkId::new("uniform", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || values.segmented_min_element(&offsets)))
        });
        group.finish();

        let mut group = c.benchmark_group("segmented_count_f32_seg1024");
        group.throughput(Throughput::Bytes(4 * n as u64));
        group.bench_function(BenchmarkId::new("count", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || values.segmented_count(&offsets, Gt(0.5f32))))
        });
        group.bench_function(BenchmarkId::new("all", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || values.segmented_all(&offsets, Gt(0.5f32))))
        });
        group.finish();

        let mix = DeviceVec::from_slice(&dev, &mixture(n)).expect("allocating");
        let mut group = c.benchmark_group("segmented_sum_f32_mixture");
        group.throughput(Throughput::Bytes(4 * n as u64));
        group.bench_function(BenchmarkId::new("log_uniform", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || values.segmented_sum(&mix)))
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = segmented
}
criterion_main!(benches);
