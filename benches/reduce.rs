//! Reductions and collectives: `reduce_to` (into a preallocated one-element
//! buffer, as CUB's `d_out`) with Add (f32, f64) and Max (u32) beside CUB's
//! rows, `reduce_into` (which also allocates its output) at the same sizes, the host-returning `sum` at 2^20, and the early
//! exit of `any`: a match at element 0 against a full `count`; the
//! collectives `vote` (a full pass writing n/32 words) and `quantify` with
//! no match (a full pass) and with every element matching (stops at once).
//!
//! Bytes counted: the input once (4n or 8n).

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::pred::{Eq, Gt};
use cuprim::prelude::*;

fn reduce_rows(c: &mut Criterion) {
    let dev = common::device();
    for n in common::sizes(&dev) {
        let f = DeviceVec::sequence(&dev, n, 0.0f32, 1.0 / 4096.0).expect("allocating");
        let d = DeviceVec::sequence(&dev, n, 0.0f64, 1.0 / 4096.0).expect("allocating");
        let u = DeviceVec::sequence(&dev, n, 7u32, 2_654_435_761).expect("allocating");
        let mut out_f = DeviceVec::<f32>::zeros(&dev, 1).expect("allocating");
        let mut out_d = DeviceVec::<f64>::zeros(&dev, 1).expect("allocating");
        let mut out_u = DeviceVec::<u32>::zeros(&dev, 1).expect("allocating");
        let mut group = c.benchmark_group("reduce_sum");
        group.throughput(Throughput::Bytes(4 * n as u64));
        group.bench_function(BenchmarkId::new("f32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || f.reduce_to(Add, &mut out_f)))
        });
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("f64", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || d.reduce_to(Add, &mut out_d)))
        });
        group.finish();
        let mut group = c.benchmark_group("reduce_max");
        group.throughput(Throughput::Bytes(4 * n as u64));
        group.bench_function(BenchmarkId::new("u32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || u.reduce_to(Max, &mut out_u)))
        });
        group.finish();
        let mut group = c.benchmark_group("reduce_into_alloc");
        group.throughput(Throughput::Bytes(4 * n as u64));
        group.bench_function(BenchmarkId::new("f32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || f.reduce_into(Add)))
        });
        group.finish();
    }
}

/// `sum()` returns the value to the host: launch + copy + wait.
fn sum_to_host(c: &mut Criterion) {
    let dev = common::device();
    let n = 1 << 20;
    let f = DeviceVec::sequence(&dev, n, 0.0f32, 1.0 / 4096.0).expect("allocating");
    let mut group = c.benchmark_group("sum_to_host");
    group.throughput(Throughput::Bytes(4 * n as u64));
    group.bench_function(BenchmarkId::new("f32", n), |b| {
        b.iter_custom(|iters| common::time_calls(&dev, iters, || f.sum()))
    });
    group.finish();
}

/// `any` with a match at element 0 must stop early: compare with `count`,
/// which reads everything.
fn early_exit(c: &mut Criterion) {
    let dev = common::device();
    let n = *common::sizes(&dev).last().expect("a size");
    let mut v = DeviceVec::<u32>::zeros(&dev, n).expect("allocating");
    v.slice_mut(0..1).expect("slice").fill(1).expect("fill");
    let mut group = c.benchmark_group("collective");
    group.throughput(Throughput::Bytes(4 * n as u64));
    group.bench_function(BenchmarkId::new("any_first_u32", n), |b| {
        b.iter_custom(|iters| common::time_calls(&dev, iters, || v.any(Eq(1u32))))
    });
    group.bench_function(BenchmarkId::new("count_u32", n), |b| {
        b.iter_custom(|iters| common::time_calls(&dev, iters, || v.count(Gt(0u32))))
    });
    let hashed = DeviceVec::sequence(&dev, n, 7u32, 2_654_435_761).expect("allocating");
    group.bench_function(BenchmarkId::new("vote_u32", n), |b| {
        b.iter_custom(|iters| common::time_calls(&dev, iters, || hashed.vote(Gt(u32::MAX / 2))))
    });
    group.bench_function(BenchmarkId::new("quantify_none_u32", n), |b| {
        b.iter_custom(|iters| common::time_calls(&dev, iters, || v.quantify(Gt(1u32))))
    });
    group.bench_function(BenchmarkId::new("quantify_many_u32", n), |b| {
        b.iter_custom(|iters| common::time_calls(&dev, iters, || hashed.quantify(Gt(0u32))))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = reduce_rows, sum_to_host, early_exit
}
criterion_main!(benches);
