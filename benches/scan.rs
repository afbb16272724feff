//! Scans beside CUB's rows (inclusive sum f32 and f64, exclusive sum u32),
//! `copy_if` keeping half of random u32 (against the scan alone), and
//! `scan_by_key` (u8 keys in short random runs, and u32 keys in runs of 64
//! with f32 values, the input of `benchmarks/anchors/cub_keyed.cu`).
//!
//! Bytes counted: scan 2 x input (read + write); copy_if the input plus the
//! half it writes (1.5 x); scan_by_key keys + values + output.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::pred::Gt;
use cuprim::prelude::*;

fn scan_rows(c: &mut Criterion) {
    let dev = common::device();
    for n in common::sizes(&dev) {
        let f = DeviceVec::sequence(&dev, n, 0.0f32, 1.0 / 4096.0).expect("allocating");
        let d = DeviceVec::sequence(&dev, n, 0.0f64, 1.0 / 4096.0).expect("allocating");
        let u = DeviceVec::sequence(&dev, n, 7u32, 2_654_435_761).expect("allocating");
        let mut group = c.benchmark_group("scan_incl_sum");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("f32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || f.scan(Add)))
        });
        group.throughput(Throughput::Bytes(16 * n as u64));
        group.bench_function(BenchmarkId::new("f64", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || d.scan(Add)))
        });
        group.finish();
        // Fast (non-deterministic) mode: what determinism costs.
        dev.set_deterministic(false);
        let mut group = c.benchmark_group("scan_incl_sum_fast_mode");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("f32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || f.scan(Add)))
        });
        group.finish();
        dev.set_deterministic(true);
        let mut group = c.benchmark_group("scan_excl_sum");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("u32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || u.scan_exclusive(Add)))
        });
        group.finish();
        let mut group = c.benchmark_group("copy_if_half");
        group.throughput(Throughput::Bytes(6 * n as u64));
        group.bench_function(BenchmarkId::new("u32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || u.copy_if(Gt(u32::MAX / 2))))
        });
        group.finish();
        let keys = u.transform(cuprim::ops::Cast::<u8>::new()).expect("keys");
        let keys = keys.transform(QuarterKey).expect("keys");
        let mut group = c.benchmark_group("scan_by_key");
        group.throughput(Throughput::Bytes(9 * n as u64));
        group.bench_function(BenchmarkId::new("u8_u32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || u.scan_by_key(&keys, Add)))
        });
        let run_keys = DeviceVec::from_slice(&dev, &(0..n).map(|i| (i / 64) as u32).collect::<Vec<_>>()).expect("keys");
        let values = DeviceVec::from_slice(&dev, &common::uniform_f32(n)).expect("values");
        group.throughput(Throughput::Bytes(12 * n as u64));
        group.bench_function(BenchmarkId::new("u32_f32_run64", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || values.scan_by_key(&run_keys, Add)))
        });
        group.finish();
    }
}

/// Keys for scan_by_key: a byte divided by 64 (four key values, runs of
/// random length).
#[derive(Clone, Copy)]
struct QuarterKey;
impl cuprim::ops::UnaryOp<u8> for QuarterKey {
    type Output = u8;
    fn apply(&self, x: u8) -> u8 {
        x / 64
    }
    fn cuda_expr(&self) -> String {
        "(u8)(x / 64)".into()
    }
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = scan_rows
}
criterion_main!(benches);
