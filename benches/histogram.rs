//! Histograms beside CUB's rows: 256 even bins over f32 in [0, 1) and over
//! the full u32 range (CUB's `histogram_even256_*`), at 2^20, 2^24, 2^28;
//! and, at the same sizes, the shapes CUB's bench does not time: every
//! sample in one bin, normal samples (mean 0.5, sd 0.1), 256 explicit
//! edges (binary search), and 65536 even bins (global atomics).
//!
//! Inputs are CUB's own (`shared/anchors/cub_bench.cu`): a hash of the
//! index for u32, `(a >> 8) / 2^24` for f32. Bytes counted: the input once.
//! Each call accumulates into one preallocated histogram (as CUB writes
//! into its `d_histogram`), so nothing is allocated in the timed call.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::algo::histogram::{Bins, Histogram};
use cuprim::prelude::*;
use rayon::prelude::*;

fn histogram_rows(c: &mut Criterion) {
    let dev = common::device();
    for n in common::sizes(&dev) {
        let a = common::hash_u32(n, 1);
        let uniform: Vec<f32> = a.par_iter().map(|&x| (x >> 8) as f32 * (1.0 / 16_777_216.0)).collect();
        // Normal(0.5, 0.1) from the same bits, by the sum of 12 uniforms (Irwin-Hall).
        let normal: Vec<f32> = (0..n)
            .into_par_iter()
            .map(|i| {
                let mut x = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5eed;
                let mut s = 0.0f64;
                for _ in 0..12 {
                    x ^= x >> 31;
                    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
                    x ^= x >> 29;
                    s += (x >> 11) as f64 / (1u64 << 53) as f64;
                }
                (0.5 + 0.1 * (s - 6.0)) as f32
            })
            .collect();
        let u = DeviceVec::from_slice(&dev, &a).expect("allocating");
        let f = DeviceVec::from_slice(&dev, &uniform).expect("allocating");
        let g = DeviceVec::from_slice(&dev, &normal).expect("allocating");
        let one = DeviceVec::filled(&dev, n, 0.5f32).expect("allocating");
        drop((a, uniform, normal));

        let even_f = Bins::even(256, 0.0f32, 1.0);
        let even_u = Bins::even(256, 0u32, u32::MAX);
        let edges: Vec<f32> = (0..=256).map(|i| i as f32 / 256.0).collect();
        let edges = Bins::edges(&edges);
        let wide = Bins::even(65536, 0.0f32, 1.0);
        let mut h256 = Histogram::<u32>::zeros(&dev, 256).expect("allocating");
        let mut h64k = Histogram::<u32>::zeros(&dev, 65536).expect("allocating");

        let mut row = |op: &str, elem: &str, call: &mut dyn FnMut() -> cuprim::Result<()>| {
            let mut group = c.benchmark_group(op);
            group.throughput(Throughput::Bytes(4 * n as u64));
            group.bench_function(BenchmarkId::new(elem, n), |b| {
                b.iter_custom(|iters| common::time_calls(&dev, iters, &mut *call))
            });
            group.finish();
        };
        row("histogram_even256", "f32", &mut || f.histogram_into(&even_f, &mut h256));
        row("histogram_even256", "u32", &mut || u.histogram_into(&even_u, &mut h256));
        row("histogram_even256_onebin", "f32", &mut || one.histogram_into(&even_f, &mut h256));
        row("histogram_even256_normal", "f32", &mut || g.histogram_into(&even_f, &mut h256));
        row("histogram_edges256", "f32", &mut || f.histogram_into(&edges, &mut h256));
        row("histogram_even65536", "f32", &mut || f.histogram_into(&wide, &mut h64k));
    }
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = histogram_rows
}
criterion_main!(benches);
