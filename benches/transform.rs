//! Data movement and element-wise maps on f32: `fill`, `copy_from`,
//! `gather` (identity and random-permutation indices) and
//! `transform(Square)`, `adjacent_difference(Sub)` (uniform f32, beside
//! CUB's `SubtractLeftCopy` row `adjacent_difference_f32` and the copy), at 2^20, 2^24 and 2^28 elements on a GPU (2^20 on
//! the host backend), plus the host cost of one cached `fill` call.
//!
//! `cargo bench --bench transform` here; on the GPU machine through
//! `scripts/gpu-bench`. Each bench's throughput counts the bytes the
//! primitive must move: fill 4n, copy 8n, gather 12n (value read, u32 index
//! read, value written), transform 8n, adjacent_difference 8n.
//!
//! What a sample includes is what the call does: `gather` and `transform`
//! allocate their output, and `gather` reads the device's bounds flag back
//! after its launch, so its time includes that round trip.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::ops::{Square, Sub};
use cuprim::prelude::*;

const F32: u64 = std::mem::size_of::<f32>() as u64;

fn fill(c: &mut Criterion) {
    let dev = common::device();
    let mut group = c.benchmark_group("fill");
    for n in common::sizes(&dev) {
        let mut v = DeviceVec::<f32>::zeros(&dev, n).expect("allocating");
        group.throughput(Throughput::Bytes(F32 * n as u64));
        group.bench_function(BenchmarkId::new("f32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || v.fill(1.5)))
        });
    }
    group.finish();
}

fn copy_from(c: &mut Criterion) {
    let dev = common::device();
    let mut group = c.benchmark_group("copy_from");
    for n in common::sizes(&dev) {
        let src = DeviceVec::sequence(&dev, n, 1.0f32, 0.25).expect("allocating");
        let mut dst = DeviceVec::<f32>::zeros(&dev, n).expect("allocating");
        group.throughput(Throughput::Bytes(2 * F32 * n as u64));
        group.bench_function(BenchmarkId::new("f32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || dst.copy_from(&src)))
        });
    }
    group.finish();
}

fn gather(c: &mut Criterion) {
    let dev = common::device();
    for (name, random) in [("gather_identity", false), ("gather_random", true)] {
        let mut group = c.benchmark_group(name);
        for n in common::sizes(&dev) {
            let src = DeviceVec::sequence(&dev, n, 1.0f32, 0.25).expect("allocating");
            let idx = if random {
                DeviceVec::from_slice(&dev, &common::random_permutation(n, 0x5eed)).expect("uploading indices")
            } else {
                DeviceVec::sequence(&dev, n, 0u32, 1).expect("allocating")
            };
            group.throughput(Throughput::Bytes(3 * F32 * n as u64));
            group.bench_function(BenchmarkId::new("f32", n), |b| {
                b.iter_custom(|iters| common::time_calls(&dev, iters, || src.gather(&idx)))
            });
        }
        group.finish();
    }
}

fn transform_square(c: &mut Criterion) {
    let dev = common::device();
    let mut group = c.benchmark_group("transform_square");
    for n in common::sizes(&dev) {
        let src = DeviceVec::sequence(&dev, n, -1.0f32, 1.0 / 1024.0).expect("allocating");
        group.throughput(Throughput::Bytes(2 * F32 * n as u64));
        group.bench_function(BenchmarkId::new("f32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || src.transform(Square)))
        });
    }
    group.finish();
}

/// `adjacent_difference(Sub)` of uniform f32 into a new vector (as CUB's
/// `SubtractLeftCopy`, whose output is preallocated: the allocation is
/// stream-ordered from the pool). Target: <= 1.02x `copy_from` at 2^28.
fn adjacent_difference(c: &mut Criterion) {
    let dev = common::device();
    let mut group = c.benchmark_group("adjacent_difference");
    for n in common::sizes(&dev) {
        let src = DeviceVec::from_slice(&dev, &common::uniform_f32(n)).expect("uploading");
        group.throughput(Throughput::Bytes(2 * F32 * n as u64));
        group.bench_function(BenchmarkId::new("f32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || src.adjacent_difference(Sub)))
        });
    }
    group.finish();
}

/// Host time of one `fill` of 1024 f32 whose kernel is already loaded: the
/// fixed cost every small call pays. Target: under 10 us.
fn fill_1024_host_overhead(c: &mut Criterion) {
    let dev = common::device();
    let mut v = DeviceVec::<f32>::zeros(&dev, 1024).expect("allocating");
    v.fill(0.5).expect("warming the kernel cache");
    c.bench_function("fill_1024_host_overhead", |b| {
        b.iter_custom(|iters| common::host_time(&dev, iters, || v.fill(1.0)))
    });
    let micros = common::host_call_micros(&dev, 20_000, || v.fill(2.0));
    common::report_host_micros("fill_f32_1024", &micros, 10.0);
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = fill, copy_from, gather, transform_square, adjacent_difference, fill_1024_host_overhead
}
criterion_main!(benches);
