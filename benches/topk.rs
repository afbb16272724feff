//! Top-k beside CUB's `DeviceTopK::MaxPairs` (unsorted output) and
//! `torch.topk`: the k largest f32 of n with their u32 indices, sorted, for
//! k = 8, 64, 1024 at 2^20, 2^24 and 2^28; every row of 32768 columns at
//! k = 50 (n / 32768 rows, as peers_next.py); select_nth of the median;
//! and `fused_topk_f32` (2^24 on a GPU; the host's one size): the top 64 of
//! an expression, `v.map(Negate).top_k(64)` (`fused`: every selection
//! kernel reads the map where the buffer form reads the input), beside
//! `v.transform(Negate)` then `top_k(64)` (`unfused`).
//!
//! Inputs are CUB's (`shared/anchors/cub_next.cu`: `gen_f32`, seed 1):
//! `(mix(i, 1) >> 8) / 2^24`, uniform in [0, 1). Bytes counted: the input
//! once (4n).

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::algo::topk::TopKOptions;
use cuprim::prelude::*;

fn topk_rows(c: &mut Criterion) {
    let dev = common::device();
    for n in common::sizes(&dev) {
        let v = DeviceVec::from_slice(&dev, &common::uniform_f32(n)).expect("allocating");
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
        if n == 1 << 24 || !dev.is_cuda() {
            use cuprim::ops::Negate;
            let mut group = c.benchmark_group("fused_topk_f32");
            group.throughput(Throughput::Bytes(4 * n as u64));
            group.bench_function(BenchmarkId::new("fused", n), |b| {
                b.iter_custom(|iters| common::time_calls(&dev, iters, || v.map(Negate).top_k(64)))
            });
            group.bench_function(BenchmarkId::new("unfused", n), |b| {
                b.iter_custom(|iters| common::time_calls(&dev, iters, || v.transform(Negate)?.top_k(64)))
            });
            group.finish();
        }
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
