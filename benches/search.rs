//! lower_bound beside CUB's `DeviceFind::LowerBound` and
//! `torch.searchsorted`: n random u32 queries into n sorted u32 (the even
//! numbers 0, 2, 4, ...), u32 positions out, at 2^20, 2^24 and 2^28; and
//! is_sorted on the sorted array (no anchor: one read); and the same
//! lower_bound with the sorted side the expression `counting(0, 2, n)`
//! (no array: the index is built from it and each query's last group is
//! computed), against the buffer row.
//!
//! Inputs are CUB's (`shared/anchors/cub_next.cu`: `evens`, `gen_u32` with
//! seed 5). Bytes counted: the queries, the sorted array and the answers
//! once each (12n).

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::prelude::*;
use rayon::prelude::*;

fn search(c: &mut Criterion) {
    let dev = common::device();
    for n in common::sizes(&dev) {
        let evens: Vec<u32> = (0..n as u64).into_par_iter().map(|i| (2 * i) as u32).collect();
        let queries: Vec<u32> = (0..n as u64).into_par_iter().map(|i| common::mix(i, 5)).collect();
        let sorted = DeviceVec::from_slice(&dev, &evens).expect("allocating");
        let q = DeviceVec::from_slice(&dev, &queries).expect("allocating");
        let mut group = c.benchmark_group("lower_bound_u32");
        group.throughput(Throughput::Bytes(12 * n as u64));
        group.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || sorted.lower_bound(&q)))
        });
        group.finish();
        let mut group = c.benchmark_group("lower_bound_of_counting_u32");
        group.throughput(Throughput::Bytes(8 * n as u64));
        let evens_expr = counting(&dev, 0u32, 2, n);
        group.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || evens_expr.lower_bound_of(&q)))
        });
        group.finish();
        let mut group = c.benchmark_group("is_sorted_u32");
        group.throughput(Throughput::Bytes(4 * n as u64));
        group.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || sorted.is_sorted()))
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = search
}
criterion_main!(benches);
