//! Merge of two sorted halves beside CUB's `DeviceMerge::MergeKeys`: u32
//! keys, a = 0, 2, 4, ... and b = 1, 3, 5, ..., n / 2 each (exactly
//! `shared/anchors/cub_next.cu`'s `merge_keys_u32`: `evens(uc, n / 2, 0)`,
//! `evens(ud, n / 2, 1)`), so the merged output interleaves the two
//! element by element. Bytes counted: the keys read and written once (8n);
//! for the key-value variant (u32 values: each element's position in its
//! input) the values too (16n).
//!
//! Groups: `merge_u32` (keys alone) and `merge_pairs_u32_u32`, function
//! `halves`, parameter n.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::prelude::*;
use rayon::prelude::*;

/// cub_next.cu's `evens`: `2 * i + off` for `i < n`.
fn evens(n: usize, off: u32) -> Vec<u32> {
    (0..n as u32).into_par_iter().map(|i| 2 * i + off).collect()
}

fn merges(c: &mut Criterion) {
    let dev = common::device();
    for n in common::sizes(&dev) {
        let half = n / 2;
        let a = DeviceVec::from_slice(&dev, &evens(half, 0)).expect("allocating");
        let b = DeviceVec::from_slice(&dev, &evens(half, 1)).expect("allocating");
        let positions: Vec<u32> = (0..half as u32).collect();
        let va = DeviceVec::from_slice(&dev, &positions).expect("allocating");
        let vb = DeviceVec::from_slice(&dev, &positions).expect("allocating");

        let mut group = c.benchmark_group("merge_u32");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("halves", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || a.merge(&b)))
        });
        group.finish();

        let mut group = c.benchmark_group("merge_pairs_u32_u32");
        group.throughput(Throughput::Bytes(16 * n as u64));
        group.bench_function(BenchmarkId::new("halves", n), |bench| {
            bench.iter_custom(|iters| common::time_calls(&dev, iters, || a.merge_by_key(&va, &b, &vb)))
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = merges
}
criterion_main!(benches);
