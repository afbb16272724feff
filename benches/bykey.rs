//! The by-key family beside CUB's rows in `shared/anchors/cub_next.cu`:
//! sorted u32 keys in runs of 64 (`i / 64`), uniform f32 values;
//! reduce_by_key, unique and run-length encoding, plus `copy_if_into`
//! keeping half of scrambled u32, u8 and u64 (the count left on the device;
//! CUB's rows: `benchmarks/anchors/cub_keyed.cu` for u32, `cub_select.cu`).
//!
//! Bytes counted: what is read and written once (keys and values in, one
//! output per run out; copy_if_into reads the input and writes half).
//!
//! With `--features bykey-tuning`, the `_into` rows of reduce_by_key and
//! run-length encoding again at several chunk lengths (`max<elements>`) and
//! on the tile kernel (`tiles`), in runs of 64 and of 1 (every chunk
//! overflowing its records), and `unique_into` of keys all distinct.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::pred::Gt;
use cuprim::prelude::*;

fn by_key_rows(c: &mut Criterion) {
    let dev = common::device();
    for n in common::sizes(&dev) {
        let keys: Vec<u32> = (0..n as u32).map(|i| i / 64).collect();
        let keys = DeviceVec::from_slice(&dev, &keys).expect("allocating");
        let vals = DeviceVec::from_slice(&dev, &common::uniform_f32(n)).expect("allocating");
        let runs = n.div_ceil(64) as u64;
        let nn = n as u64;

        let mut group = c.benchmark_group("reduce_by_key_u32_f32");
        group.throughput(Throughput::Bytes(8 * nn + 8 * runs));
        group.bench_function(BenchmarkId::new("run64", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || keys.reduce_by_key(&vals, Add)))
        });
        group.finish();

        let mut group = c.benchmark_group("unique_u32");
        group.throughput(Throughput::Bytes(4 * nn + 4 * runs));
        group.bench_function(BenchmarkId::new("run64", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || keys.unique()))
        });
        group.finish();

        let mut group = c.benchmark_group("rle_encode_u32");
        group.throughput(Throughput::Bytes(4 * nn + 8 * runs));
        group.bench_function(BenchmarkId::new("run64", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || keys.run_length_encode()))
        });
        group.finish();

        // The _into forms: no host round trip for the count.
        let mut ko = DeviceVec::<u32>::zeros(&dev, n).expect("allocating");
        let mut vo = DeviceVec::<f32>::zeros(&dev, n).expect("allocating");
        let mut count = DeviceVec::<u64>::zeros(&dev, 1).expect("allocating");
        let mut group = c.benchmark_group("reduce_by_key_into_u32_f32");
        group.throughput(Throughput::Bytes(8 * nn + 8 * runs));
        group.bench_function(BenchmarkId::new("run64", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || keys.reduce_by_key_into(&vals, Add, &mut ko, &mut vo, &mut count)))
        });
        group.finish();
        let mut group = c.benchmark_group("unique_into_u32");
        group.throughput(Throughput::Bytes(4 * nn + 4 * runs));
        group.bench_function(BenchmarkId::new("run64", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || keys.unique_into(&mut ko, &mut count)))
        });
        group.finish();
        let mut lo = DeviceVec::<u32>::zeros(&dev, n).expect("allocating");
        let mut group = c.benchmark_group("rle_encode_into_u32");
        group.throughput(Throughput::Bytes(4 * nn + 8 * runs));
        group.bench_function(BenchmarkId::new("run64", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || keys.run_length_encode_into(&mut ko, &mut lo, &mut count)))
        });
        group.finish();
        #[cfg(feature = "bykey-tuning")]
        chunk_rows(c, &dev, &keys, &vals, (&mut ko, &mut vo, &mut lo, &mut count));

        let u = DeviceVec::sequence(&dev, n, 7u32, 2_654_435_761).expect("allocating");
        let mut group = c.benchmark_group("copy_if_into_half");
        group.throughput(Throughput::Bytes(6 * nn));
        group.bench_function(BenchmarkId::new("u32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || u.copy_if_into(Gt(u32::MAX / 2), &mut ko, &mut count)))
        });
        drop(u);
        // The same sequence in u8 (7 + 177 i, wrapping: a permutation of 0..=255 every 256)
        // and in u64 (7 + 0x9E3779B97F4A7C15 i, wrapping), half kept; cub_select.cu's rows.
        let u8s = DeviceVec::sequence(&dev, n, 7u8, 177).expect("allocating");
        let mut o8 = DeviceVec::<u8>::zeros(&dev, n).expect("allocating");
        group.throughput(Throughput::Bytes(3 * nn / 2));
        group.bench_function(BenchmarkId::new("u8", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || u8s.copy_if_into(Gt(127u8), &mut o8, &mut count)))
        });
        drop((u8s, o8));
        let u64s = DeviceVec::sequence(&dev, n, 7u64, 0x9E37_79B9_7F4A_7C15).expect("allocating");
        let mut o64 = DeviceVec::<u64>::zeros(&dev, n).expect("allocating");
        group.throughput(Throughput::Bytes(12 * nn));
        group.bench_function(BenchmarkId::new("u64", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || u64s.copy_if_into(Gt(u64::MAX / 2), &mut o64, &mut count)))
        });
        group.finish();
    }
}

/// The tuning sweep of reduce_by_key and run lengths by chunks (feature
/// `bykey-tuning`): most elements per chunk, or the tile kernel.
#[cfg(feature = "bykey-tuning")]
fn chunk_rows(
    c: &mut Criterion,
    dev: &Device,
    keys: &DeviceVec<u32>,
    vals: &DeviceVec<f32>,
    (ko, vo, lo, count): (&mut DeviceVec<u32>, &mut DeviceVec<f32>, &mut DeviceVec<u32>, &mut DeviceVec<u64>),
) {
    use cuprim::algo::bykey::tuning::{self, Overrides as Chunks};
    let n = keys.len();
    let nn = n as u64;
    let ones = DeviceVec::sequence(dev, n, 0u32, 1).expect("allocating");
    let shapes: [(&str, Chunks); 6] = [
        (
            "tiles",
            Chunks {
                max_chunk: None,
                from: Some(usize::MAX),
                two_pass: Some(false),
                ..Chunks::default()
            },
        ),
        (
            "max65536",
            Chunks {
                max_chunk: Some(1 << 16),
                from: Some(0),
                two_pass: Some(false),
                ..Chunks::default()
            },
        ),
        (
            "max131072",
            Chunks {
                max_chunk: Some(1 << 17),
                from: Some(0),
                two_pass: Some(false),
                ..Chunks::default()
            },
        ),
        (
            "max262144",
            Chunks {
                max_chunk: Some(1 << 18),
                from: Some(0),
                two_pass: Some(false),
                ..Chunks::default()
            },
        ),
        (
            "max524288",
            Chunks {
                max_chunk: Some(1 << 19),
                from: Some(0),
                two_pass: Some(false),
                ..Chunks::default()
            },
        ),
        (
            "default",
            Chunks {
                max_chunk: None,
                from: Some(0),
                two_pass: Some(false),
                ..Chunks::default()
            },
        ),
    ];
    for (run, k, runs) in [("run64", keys, nn.div_ceil(64)), ("run1", &ones, nn)] {
        for (name, shape) in shapes {
            let id = format!("{run}-{name}");
            tuning::set(shape);
            let mut group = c.benchmark_group("reduce_by_key_into_chunks_u32_f32");
            group.throughput(Throughput::Bytes(8 * nn + 8 * runs));
            group.bench_function(BenchmarkId::new(&id, n), |b| {
                b.iter_custom(|iters| common::time_calls(dev, iters, || k.reduce_by_key_into(vals, Add, &mut *ko, &mut *vo, &mut *count)))
            });
            group.finish();
            let mut group = c.benchmark_group("rle_encode_into_chunks_u32");
            group.throughput(Throughput::Bytes(4 * nn + 8 * runs));
            group.bench_function(BenchmarkId::new(&id, n), |b| {
                b.iter_custom(|iters| common::time_calls(dev, iters, || k.run_length_encode_into(&mut *ko, &mut *lo, &mut *count)))
            });
            group.finish();
            tuning::set(Chunks::default());
        }
    }
    // unique_into of keys all distinct: every chunk overflows its heads.
    let mut group = c.benchmark_group("unique_into_chunks_u32");
    group.throughput(Throughput::Bytes(8 * nn));
    group.bench_function(BenchmarkId::new("run1", n), |b| {
        b.iter_custom(|iters| common::time_calls(dev, iters, || ones.unique_into(&mut *ko, &mut *count)))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = by_key_rows
}
criterion_main!(benches);
