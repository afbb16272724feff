//! Fused inputs: a dot product `zip(&a, &b).map(Mul)` reduced into a device
//! scalar, the one-pass Welford (count, mean, m2) of f32 in f64 and in f32
//! (with a u32 count), and
//! `map(Square).scan(Add)`, each beside the unfused call it replaces or the
//! plain primitive over the same input (`reduce_to(Add)`, `scan(Add)`); and
//! the warm host time of a fused call on 1024 elements against the plain sum;
//! and partition_copy, lower_bound_in and scan_by_key of a map against the
//! transform and the buffer call; and the sorts of tuples: random u32
//! pairs as keys (`zip(&a, &b).sorted_lex()`) beside one u64/u32 radix sort
//! of the same 2n words packed (the floor a single wide key would give) and
//! a u32/u32 `sort_pairs`, and random f32 keys with (u32, f32) values
//! (`sorted_pairs_unzip`) beside `sorted_pairs` with u32 values; and the
//! running (min, max) of two f32 vectors in one unzipped tuple scan
//! (`zip(&a, &b).scan_unzip(MinMax)`) beside the two scans it replaces
//! (`a.scan(Min)`, `b.scan(Max)`; 16n bytes either way: 8n read, 8n written).
//!
//! Bytes counted: every input read once (8n for the dot product, 4n for
//! Welford, 8n for the scan: 4n in, 4n out). The first call's time (a fresh
//! compile when the disk cache is empty) is printed once per shape.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::ops::{Associative, BinaryOp, Commutative, Monoid, Square, UnaryOp};
use cuprim::prelude::*;
use std::time::Instant;

/// Welford's (count, mean, m2), merged as Chan et al.
#[derive(Clone, Copy)]
struct Welford;
type Moments = (f64, f64, f64);
impl BinaryOp<Moments> for Welford {
    fn apply(&self, a: Moments, b: Moments) -> Moments {
        let n = a.0 + b.0;
        if n == 0.0 {
            return a;
        }
        let d = b.1 - a.1;
        (n, a.1 + d * (b.0 / n), a.2 + b.2 + d * d * (a.0 * b.0 / n))
    }
    fn cuda_expr(&self) -> String {
        "([&] { const double n = a.a0 + b.a0; if (n == 0.0) return a; const double d = b.a1 - a.a1; \
         return cuprim_t3<double, double, double>{n, a.a1 + d * (b.a0 / n), a.a2 + b.a2 + d * d * (a.a0 * b.a0 / n)}; }())"
            .into()
    }
}
impl Associative for Welford {}
impl Commutative for Welford {}
impl Monoid<Moments> for Welford {
    fn identity(&self) -> Moments {
        (0.0, 0.0, 0.0)
    }
}

#[derive(Clone, Copy)]
struct Observe;
impl UnaryOp<f32> for Observe {
    type Output = Moments;
    fn apply(&self, x: f32) -> Moments {
        (1.0, x as f64, 0.0)
    }
    fn cuda_expr(&self) -> String {
        "cuprim_t3<double, double, double>{1.0, (double)x, 0.0}".into()
    }
}

/// Welford in f32 with an exact u32 count: (n, mean, m2).
#[derive(Clone, Copy)]
struct Welford32;
type Moments32 = (u32, f32, f32);
impl BinaryOp<Moments32> for Welford32 {
    fn apply(&self, a: Moments32, b: Moments32) -> Moments32 {
        let n = a.0.wrapping_add(b.0);
        if n == 0 {
            return a;
        }
        let d = b.1 - a.1;
        let w = b.0 as f32 / n as f32;
        (n, a.1 + d * w, a.2 + b.2 + d * d * (a.0 as f32 * w))
    }
    fn cuda_expr(&self) -> String {
        "([&] { const unsigned n = a.a0 + b.a0; if (n == 0u) return a; const float d = b.a1 - a.a1; \
         const float w = (float)b.a0 / (float)n; \
         return cuprim_t3<unsigned, float, float>{n, a.a1 + d * w, a.a2 + b.a2 + d * d * ((float)a.a0 * w)}; }())"
            .into()
    }
}
impl Associative for Welford32 {}
impl Commutative for Welford32 {}
impl Monoid<Moments32> for Welford32 {
    fn identity(&self) -> Moments32 {
        (0, 0.0, 0.0)
    }
}

#[derive(Clone, Copy)]
struct Observe32;
impl UnaryOp<f32> for Observe32 {
    type Output = Moments32;
    fn apply(&self, x: f32) -> Moments32 {
        (1, x, 0.0)
    }
    fn cuda_expr(&self) -> String {
        "cuprim_t3<unsigned, float, float>{1u, x, 0.0f}".into()
    }
}

fn first_call<R>(what: &str, call: impl FnOnce() -> cuprim::Result<R>) {
    let start = Instant::now();
    call().expect("first call");
    eprintln!(
        "first call (compile or cache load): {what} {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
}

fn fused_rows(c: &mut Criterion) {
    let dev = common::device();
    let mut first = true;
    for n in common::sizes(&dev) {
        let a = DeviceVec::sequence(&dev, n, 0.0f32, 1.0 / 4096.0).expect("allocating");
        let b = DeviceVec::sequence(&dev, n, 1.0f32, -1.0 / 8192.0).expect("allocating");
        let mut out = DeviceVec::<f32>::zeros(&dev, 1).expect("allocating");
        if first {
            first_call("dot", || zip(&a, &b).map(Mul).reduce_to(Add, &mut out));
            first_call("welford", || a.map(Observe).reduce(Welford));
            first_call("map.scan", || a.map(Square).scan(Add));
            first = false;
        }
        let mut group = c.benchmark_group("fused_dot");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("f32", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || zip(&a, &b).map(Mul).reduce_to(Add, &mut out)))
        });
        group.bench_function(BenchmarkId::new("f32_unfused", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || a.transform2(&b, Mul)?.reduce_to(Add, &mut out)))
        });
        group.finish();
        let mut group = c.benchmark_group("fused_welford");
        group.throughput(Throughput::Bytes(4 * n as u64));
        group.bench_function(BenchmarkId::new("f32", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || a.map(Observe).reduce(Welford)))
        });
        group.bench_function(BenchmarkId::new("f32_in_f32", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || a.map(Observe32).reduce(Welford32)))
        });
        group.bench_function(BenchmarkId::new("f32_sum", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || a.sum()))
        });
        group.finish();
        let mut group = c.benchmark_group("fused_map_scan");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("f32", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || a.map(Square).scan(Add)))
        });
        group.bench_function(BenchmarkId::new("f32_plain", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || a.scan(Add)))
        });
        group.finish();
    }
}

/// The consumers added after the first part, fused against the unfused
/// call (a transform first): `map(Negate).partition_copy(Lt(0))` (4n read,
/// 4n written), `map(Negate).lower_bound_in(&sorted)` with n queries into n
/// sorted keys (4n queries read, 4n answers written; the index build reads
/// the keys), and `map(Square).scan_by_key(&keys, Add)` (8n read, 4n
/// written).
fn fused_more_rows(c: &mut Criterion) {
    use cuprim::ops::Negate;
    use cuprim::pred::Lt;
    let dev = common::device();
    for n in common::sizes(&dev) {
        let x = DeviceVec::from_slice(&dev, &common::hash_u32(n, 7).iter().map(|&h| h as i32).collect::<Vec<_>>()).expect("allocating");
        let mut sorted =
            DeviceVec::from_slice(&dev, &common::hash_u32(n, 11).iter().map(|&h| h as i32).collect::<Vec<_>>()).expect("allocating");
        sorted.sort().expect("sorting");
        let keys = DeviceVec::from_slice(&dev, &(0..n as u32).map(|i| i / 100).collect::<Vec<_>>()).expect("allocating");
        let mut group = c.benchmark_group("fused_partition_copy");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("i32", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || x.map(Negate).partition_copy(Lt(0))))
        });
        group.bench_function(BenchmarkId::new("i32_unfused", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || x.transform(Negate)?.partition_copy(Lt(0))))
        });
        group.finish();
        let mut group = c.benchmark_group("fused_lower_bound");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("i32", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || x.map(Negate).lower_bound_in(&sorted)))
        });
        group.bench_function(BenchmarkId::new("i32_unfused", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || sorted.lower_bound(&x.transform(Negate)?)))
        });
        group.finish();
        let mut group = c.benchmark_group("fused_scan_by_key");
        group.throughput(Throughput::Bytes(12 * n as u64));
        group.bench_function(BenchmarkId::new("i32", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || x.map(Square).scan_by_key(&keys, Add)))
        });
        group.bench_function(BenchmarkId::new("i32_unfused", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || x.transform(Square)?.scan_by_key(&keys, Add)))
        });
        group.finish();
    }
}

/// The keyed and sort consumers, fused against the unfused call (a
/// transform first) and the plain buffer call: `keys.lazy().reduce_by_key(x.map(Square), Add)`
/// (u32 keys in runs of 64, f32 values: CUB's `reduce_by_key_u32_f32_run64`
/// input) and `x.map(Negate).sorted()` of random f32 keys.
fn fused_keyed_rows(c: &mut Criterion) {
    use cuprim::ops::Negate;
    let dev = common::device();
    for n in common::sizes(&dev) {
        let x = DeviceVec::from_slice(
            &dev,
            &common::hash_u32(n, 5)
                .iter()
                .map(|&h| (h >> 8) as f32 / 16777216.0)
                .collect::<Vec<_>>(),
        )
        .expect("allocating");
        let keys = DeviceVec::from_slice(&dev, &(0..n as u32).map(|i| i / 64).collect::<Vec<_>>()).expect("allocating");
        let mut group = c.benchmark_group("fused_reduce_by_key");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("f32", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || keys.lazy().reduce_by_key(x.map(Square), Add)))
        });
        group.bench_function(BenchmarkId::new("f32_unfused", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || keys.reduce_by_key(&x.transform(Square)?, Add)))
        });
        group.bench_function(BenchmarkId::new("f32_plain", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || keys.reduce_by_key(&x, Add)))
        });
        group.finish();
        let mut group = c.benchmark_group("fused_sort");
        group.throughput(Throughput::Bytes(4 * n as u64));
        group.bench_function(BenchmarkId::new("f32", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || x.map(Negate).sorted()))
        });
        group.bench_function(BenchmarkId::new("f32_unfused", n), |bch| {
            bch.iter_custom(|iters| {
                common::time_calls(&dev, iters, || {
                    let mut v = x.transform(Negate)?;
                    v.sort()?;
                    Ok(v)
                })
            })
        });
        group.finish();
    }
}

/// The sorts of tuples: `lex_sort` (u32 pairs as keys, against a u64 key
/// sort of the packed pairs with u32 values, and a u32/u32 pair sort) and
/// `tuple_values` (f32 keys with (u32, f32) values unzipped, against u32
/// values). Bytes counted: keys and values read and written once.
fn tuple_sort_rows(c: &mut Criterion) {
    let dev = common::device();
    for n in common::sizes(&dev) {
        let a = DeviceVec::from_slice(&dev, &common::hash_u32(n, 11)).expect("allocating");
        let b = DeviceVec::from_slice(&dev, &common::hash_u32(n, 12)).expect("allocating");
        let packed: Vec<u64> = common::hash_u32(n, 11)
            .iter()
            .zip(common::hash_u32(n, 12))
            .map(|(&x, y)| (x as u64) << 32 | y as u64)
            .collect();
        let packed = DeviceVec::from_slice(&dev, &packed).expect("allocating");
        let positions = DeviceVec::from_slice(&dev, &(0..n as u32).collect::<Vec<_>>()).expect("allocating");
        let mut group = c.benchmark_group("lex_sort");
        group.throughput(Throughput::Bytes(16 * n as u64));
        group.bench_function(BenchmarkId::new("u32_u32", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || zip(&a, &b).sorted_lex()))
        });
        group.bench_function(BenchmarkId::new("packed_u64_pairs_u32", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || packed.lazy().sorted_pairs(&positions)))
        });
        group.bench_function(BenchmarkId::new("u32_pairs_u32", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || a.lazy().sorted_pairs(&b)))
        });
        group.finish();
        let x =
            DeviceVec::from_slice(&dev, &common::hash_u32(n, 13).iter().map(|&h| (h >> 8) as f32).collect::<Vec<_>>()).expect("allocating");
        let mut group = c.benchmark_group("tuple_values");
        group.throughput(Throughput::Bytes(24 * n as u64));
        group.bench_function(BenchmarkId::new("f32_by_u32_f32", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || x.lazy().sorted_pairs_unzip(zip(&a, &x))))
        });
        group.bench_function(BenchmarkId::new("f32_by_u32", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || x.lazy().sorted_pairs(&a)))
        });
        group.finish();
    }
}

/// (min, max) of f32 pairs: the running extremes of two vectors in one scan.
#[derive(Clone, Copy)]
struct MinMax;
impl BinaryOp<(f32, f32)> for MinMax {
    fn apply(&self, a: (f32, f32), b: (f32, f32)) -> (f32, f32) {
        (a.0.min(b.0), a.1.max(b.1))
    }
    fn cuda_expr(&self) -> String {
        "cuprim_t2<float, float>{fminf(a.a0, b.a0), fmaxf(a.a1, b.a1)}".into()
    }
}
impl Associative for MinMax {}
impl Monoid<(f32, f32)> for MinMax {
    fn identity(&self) -> (f32, f32) {
        (f32::INFINITY, f32::NEG_INFINITY)
    }
}

/// `scan_unzip`: the running min of one f32 vector and the running max of
/// another in one tuple scan, each field written to its own vector, against
/// the two plain scans. Bytes counted: both inputs read and both outputs
/// written once (16n).
fn tuple_scan_rows(c: &mut Criterion) {
    use cuprim::ops::{Max, Min};
    let dev = common::device();
    let mut first = true;
    for n in common::sizes(&dev) {
        let a = DeviceVec::from_slice(&dev, &common::uniform_f32(n)).expect("allocating");
        let b = DeviceVec::sequence(&dev, n, 1.0f32, -1.0 / 8192.0).expect("allocating");
        if first {
            first_call("zip.scan_unzip", || zip(&a, &b).scan_unzip(MinMax));
            first = false;
        }
        let mut group = c.benchmark_group("scan_unzip");
        group.throughput(Throughput::Bytes(16 * n as u64));
        group.bench_function(BenchmarkId::new("f32_min_max", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || zip(&a, &b).scan_unzip(MinMax)))
        });
        group.bench_function(BenchmarkId::new("f32_min_max_separate", n), |bch| {
            bch.iter_custom(|iters| common::time_calls(&dev, iters, || Ok((a.scan(Min)?, b.scan(Max)?))))
        });
        group.finish();
    }
}

/// Host time of a warm fused call (1024 elements, to the host) against the
/// plain sum of the same size: the difference is the expression's cost.
fn fused_host_overhead(c: &mut Criterion) {
    let dev = common::device();
    let n = 1024;
    let a = DeviceVec::sequence(&dev, n, 0.0f32, 1.0).expect("allocating");
    let b = DeviceVec::sequence(&dev, n, 1.0f32, 1.0).expect("allocating");
    let mut group = c.benchmark_group("fused_small");
    group.bench_function(BenchmarkId::new("dot_to_host", n), |bch| {
        bch.iter_custom(|iters| common::host_time(&dev, iters, || zip(&a, &b).map(Mul).sum()))
    });
    group.bench_function(BenchmarkId::new("sum_to_host", n), |bch| {
        bch.iter_custom(|iters| common::host_time(&dev, iters, || a.sum()))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = fused_rows, fused_more_rows, fused_keyed_rows, tuple_sort_rows, tuple_scan_rows, fused_host_overhead
}
criterion_main!(benches);
