//! kNN beside the anchors: kd-tree build of 1M and 10M uniform 3-D
//! f32 points (cudaKDTree: 9.44 ms, 75.8 ms on H100), k = 8 queries of 1M
//! uniform queries against them (2.49 ms, 5.11 ms), 100K queries against 1M
//! points (torch cdist + topk: 1830 ms), and brute force of 10K 16-D
//! queries against 1M points (torch row measured by peers.py).
//!
//! Names follow `<op>/<elem>/<n>` with n the number of points:
//! `knn_build/3d_f32/1000000`, `knn_build/3d_f32/10000000`,
//! `knn_query_k8_q1000000/3d_f32/1000000`,
//! `knn_query_k8_q1000000/3d_f32/10000000`,
//! `knn_query_k8_q100000/3d_f32/1000000`,
//! `knn_query_asgiven_k8_q1000000/3d_f32/1000000` (no Morton ordering of
//! the queries, for comparison) and `knn_brute_k8_q10000/16d_f32/1000000`.
//! Query times include everything a call does (the Morton sort of the
//! queries, the output allocation), not the build. On the host backend the
//! sizes are 100K points and 10K queries. `CUPRIM_BENCH_MAX_LOG2` below 24
//! drops the 10M rows.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::algo::knn::{KnnMethod, KnnOptions, QueryOrder};
use cuprim::prelude::*;
use rayon::prelude::*;
use std::time::Duration;

/// `n` points uniform in the unit cube, from a hash of the index.
fn uniform<const D: usize>(n: usize, seed: u64) -> Vec<[f32; D]> {
    (0..n)
        .into_par_iter()
        .map(|i| {
            std::array::from_fn(|j| {
                let mut x = (i as u64 * D as u64 + j as u64).wrapping_add(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                x ^= x >> 31;
                (x >> 40) as f32 * (1.0 / 16_777_216.0)
            })
        })
        .collect()
}

fn max_log2() -> u32 {
    std::env::var("CUPRIM_BENCH_MAX_LOG2")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(u32::MAX)
}

fn knn_rows(c: &mut Criterion) {
    let dev = common::device();
    let gpu = dev.is_cuda();
    let (m1, q1, q100k) = if gpu {
        (1_000_000, 1_000_000, 100_000)
    } else {
        (100_000, 10_000, 10_000)
    };
    let mut point_counts = vec![m1];
    if gpu && max_log2() >= 24 {
        point_counts.push(10_000_000);
    }
    let queries = DeviceVec::from_slice(&dev, &uniform::<3>(q1, 2)).expect("queries");
    for &n in &point_counts {
        let points = DeviceVec::from_slice(&dev, &uniform::<3>(n, 1)).expect("points");
        let mut group = c.benchmark_group("knn_build");
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("3d_f32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || KdTree::build(&points)))
        });
        group.finish();

        let tree = KdTree::build(&points).expect("build");
        let mut group = c.benchmark_group(format!("knn_query_k8_q{q1}"));
        group.throughput(Throughput::Elements(q1 as u64));
        group.bench_function(BenchmarkId::new("3d_f32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || tree.query(&queries, 8)))
        });
        group.finish();

        if n == m1 {
            let few = queries.slice(..q100k).expect("slice");
            let mut group = c.benchmark_group(format!("knn_query_k8_q{q100k}"));
            group.throughput(Throughput::Elements(q100k as u64));
            group.bench_function(BenchmarkId::new("3d_f32", n), |b| {
                b.iter_custom(|iters| common::time_calls(&dev, iters, || tree.query(&few, 8)))
            });
            group.finish();

            let mut group = c.benchmark_group(format!("knn_query_asgiven_k8_q{q1}"));
            group.throughput(Throughput::Elements(q1 as u64));
            group.bench_function(BenchmarkId::new("3d_f32", n), |b| {
                b.iter_custom(|iters| common::time_calls(&dev, iters, || tree.query_with(&queries, 8, QueryOrder::AsGiven)))
            });
            group.finish();
        }
    }
    drop(queries);

    let (bm, bq) = if gpu { (1_000_000, 10_000) } else { (100_000, 200) };
    let points = DeviceVec::from_slice(&dev, &uniform::<16>(bm, 3)).expect("points");
    let queries = DeviceVec::from_slice(&dev, &uniform::<16>(bq, 4)).expect("queries");
    let opts = KnnOptions::new().method(KnnMethod::BruteForce);
    let mut group = c.benchmark_group(format!("knn_brute_k8_q{bq}"));
    group.throughput(Throughput::Elements(bq as u64));
    group.bench_function(BenchmarkId::new("16d_f32", bm), |b| {
        b.iter_custom(|iters| common::time_calls(&dev, iters, || nearest_neighbors_with(&points, &queries, 8, opts)))
    });
    group.finish();
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
    targets = knn_rows
}
criterion_main!(benches);
