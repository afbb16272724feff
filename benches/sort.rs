//! Radix sorts beside CUB's rows: sort keys u32, sort pairs u32/u32,
//! f32/u32 and f64/u32 at 2^20, 2^24 and 2^28 (2^20 alone on the host
//! backend), and with the `classic-sort` feature the seed's 4-bit,
//! three-kernels-per-pass design on pairs u32/u32 at 2^24
//! (`sort_pairs_classic4`), to show what onesweep buys.
//!
//! The size sweep (`sort_sweep_keys`, `sort_sweep_pairs`; GPU only) times
//! keys u32, pairs u32/u32, keys u64 and pairs u64/u32 at 2^12, 2^14, ...,
//! 2^24 and 2^27 keys beside `benchmarks/anchors/cub_sort_sweep.cu` (same
//! inputs: u64 keys are hash(seed 1) << 32 | hash(seed 3)), or at the sizes
//! in `CUPRIM_SWEEP_SIZES`.
//!
//! Inputs are CUB's own (`shared/anchors/cub_bench.cu`): a hash of the
//! index for u32 keys and values, `(a >> 8) / 2^24` for f32 keys and
//! `a / 2^32` for f64 keys. Every timed sort starts from the unsorted
//! input, copied back into the sorted buffers before the start event (not
//! timed). Throughput is keys per second.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
#[cfg(feature = "classic-sort")]
use cuprim::algo::sort::SortOptions;
use cuprim::prelude::*;
use rayon::prelude::*;
use std::time::Duration;

fn bench_pairs<K: Element>(c: &mut Criterion, dev: &Device, n: usize, elem: &str, keys: &[K], values: &[u32]) {
    let mut p = common::Pairs::new(dev, keys, values);
    let mut group = c.benchmark_group("sort_pairs");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function(BenchmarkId::new(elem, n), |b| {
        b.iter_custom(|iters| common::time_with_setup(dev, iters, &mut p, common::Pairs::restore, |p| p.keys.sort_pairs(&mut p.values)))
    });
    group.finish();
}

fn sort_rows(c: &mut Criterion) {
    let dev = common::device();
    for n in common::sizes(&dev) {
        let a = common::hash_u32(n, 1);
        let values = common::hash_u32(n, 2);

        let mut p = common::Pairs::new(&dev, &a, &values[..0]);
        let mut group = c.benchmark_group("sort_keys");
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("u32", n), |b| {
            b.iter_custom(|iters| common::time_with_setup(&dev, iters, &mut p, common::Pairs::restore_keys, |p| p.keys.sort()))
        });
        group.finish();
        drop(p);

        bench_pairs(c, &dev, n, "u32_u32", &a, &values);
        let f: Vec<f32> = a.par_iter().map(|&x| (x >> 8) as f32 * (1.0 / 16_777_216.0)).collect();
        bench_pairs(c, &dev, n, "f32_u32", &f, &values);
        drop(f);
        let d: Vec<f64> = a.par_iter().map(|&x| x as f64 * (1.0 / 4_294_967_296.0)).collect();
        bench_pairs(c, &dev, n, "f64_u32", &d, &values);
        drop(d);

        // The seed's design, beside onesweep at the same size (built with
        // `--features classic-sort`, as scripts/gpu-bench does).
        #[cfg(feature = "classic-sort")]
        if n == 1 << 24 || (dev.is_host() && n == 1 << 20) {
            let mut p = common::Pairs::new(&dev, &a, &values);
            let mut group = c.benchmark_group("sort_pairs_classic4");
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new("u32_u32", n), |b| {
                b.iter_custom(|iters| {
                    common::time_with_setup(&dev, iters, &mut p, common::Pairs::restore, |p| {
                        p.keys.sort_pairs_classic_with(&mut p.values, SortOptions::new())
                    })
                })
            });
            group.finish();
        }
    }
}

/// The sweep's sizes: 2^12, 2^14, ..., 2^24 and 2^27, or the list in
/// `CUPRIM_SWEEP_SIZES` (comma-separated; `cub_sort_sweep` takes the same
/// list as arguments).
fn sweep_sizes() -> Vec<usize> {
    if let Some(sizes) = common::sweep_sizes_from_env() {
        return sizes;
    }
    [12, 14, 16, 18, 20, 22, 24, 27].iter().map(|log2| 1usize << log2).collect()
}

/// Keys u32, pairs u32/u32, keys u64, pairs u64/u32 at every size of the
/// CUB sort sweep.
fn sweep_rows(c: &mut Criterion) {
    let dev = common::device();
    if !dev.is_cuda() {
        return;
    }
    for n in sweep_sizes() {
        let a = common::hash_u32(n, 1);
        let values = common::hash_u32(n, 2);
        let low = common::hash_u32(n, 3);
        let wide: Vec<u64> = a
            .par_iter()
            .zip(low.par_iter())
            .map(|(&h, &l)| (h as u64) << 32 | l as u64)
            .collect();
        drop(low);
        sweep_keys(c, &dev, n, "u32", &a);
        sweep_keys(c, &dev, n, "u64", &wide);
        sweep_pairs(c, &dev, n, "u32_u32", &a, &values);
        sweep_pairs(c, &dev, n, "u64_u32", &wide, &values);
    }
}

fn sweep_keys<K: Element>(c: &mut Criterion, dev: &Device, n: usize, elem: &str, keys: &[K]) {
    let mut p = common::Pairs::new(dev, keys, &[0u32; 0]);
    let mut group = c.benchmark_group("sort_sweep_keys");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function(BenchmarkId::new(elem, n), |b| {
        b.iter_custom(|iters| common::time_with_setup(dev, iters, &mut p, common::Pairs::restore_keys, |p| p.keys.sort()))
    });
    group.finish();
}

fn sweep_pairs<K: Element>(c: &mut Criterion, dev: &Device, n: usize, elem: &str, keys: &[K], values: &[u32]) {
    let mut p = common::Pairs::new(dev, keys, values);
    let mut group = c.benchmark_group("sort_sweep_pairs");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function(BenchmarkId::new(elem, n), |b| {
        b.iter_custom(|iters| common::time_with_setup(dev, iters, &mut p, common::Pairs::restore, |p| p.keys.sort_pairs(&mut p.values)))
    });
    group.finish();
}

/// Shorter than [`config`]: the sweep has 32 rows.
fn sweep_config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(600))
}

fn config() -> Criterion {
    common::config()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = sort_rows
}
criterion_group! {
    name = sweep;
    config = sweep_config();
    targets = sweep_rows
}
criterion_main!(benches, sweep);
