//! Top-k beside CUB's `DeviceTopK::MaxPairs` (unsorted output) and
//! `torch.topk`: the k largest f32 of n with their u32 indices, sorted, for
//! k = 8, 64, 1024 at 2^20, 2^24 and 2^28; every row of 32768 columns at
//! k = 50 (n / 32768 rows, as peers_next.py); select_nth of the median.
//!
//! Inputs are CUB's (`shared/anchors/cub_next.cu`: `gen_f32`, seed 1):
//! `(mix(i, 1) >> 8) / 2^24`, uniform in [0, 1). Bytes counted: the input
//! once (4n).

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::algo::topk::TopKOptions;
use cuprim::prelude::*;
use rayon::prelude::*;

/// cub_next.cu's `mix`.
fn mix(i: u64, seed: u32) -> u32 {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((seed as u64) << 32 | seed as u64);
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    (x >> 32) as u32
}

fn input(n: usize) -> Vec<f32> {
    (0..n as u64)
        .into_par_iter()
        .map(|i| (mix(i, 1) >> 8) as f32 * (1.0 / 16_777_216.0))
        .collect()
}

fn topk_rows(c: &mut Criterion) {
    let dev = common::device();
    for n in common::sizes(&dev) {
        let v = DeviceVec::from_slice(&dev, &input(n)).expect("allocating");
        let mut group = c.benchmark_group("topk_f32");
        group.throughput(Throughput::Bytes(4 * n as u64));
        for k in [8usize, 64, 1024] {
            group.bench_function(BenchmarkId::new(format!("k{k}"), n), |b| {
                b.iter_custom(|iters| common::time_calls(&dev, iters, || v.top_k(k)))
            });
        }
        group.finish();
        let mut group = c.benchmark_group("topk_rows32768_f32");
        group.throughput(Throughput::Bytes(4 * n as u64));
        group.bench_function(BenchmarkId::new("k50", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || v.top_k_rows(1 << 15, 50, TopKOptions::largest())))
        });
        group.finish();
        let mut group = c.benchmark_group("select_nth_f32");
        group.throughput(Throughput::Bytes(4 * n as u64));
        group.bench_function(BenchmarkId::new("median", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || v.select_nth(n / 2)))
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = topk_rows
}
criterion_main!(benches);
