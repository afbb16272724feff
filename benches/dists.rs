//! The distribution sweep beside `benchmarks/anchors/cub_dists.cu`: keyed,
//! segmented, search and merge inputs the other benches leave out, at 2^20,
//! 2^24 and 2^27 elements on a GPU (2^16 on the host). `reduce_by_key_into`
//! over runs of 1, 4 and 1024 equal u32 keys (f32 values) and of 4 u64 keys
//! (f64 values); `unique_into` over runs of 1, 4 and 1024; `segmented_sum` of
//! f32 in segments of 4, 64, 65536 and 2^20 and in one segment (it
//! allocates its sums); `lower_bound` of n random u64 queries in n sorted
//! u64 (it allocates the positions); the `merge` of two sorted u64 halves
//! (it allocates the merged keys).
//!
//! Inputs are the anchor's: keys i / run; f32 values hash(i, 1) >> 8 over
//! 2^24, f64 (hash(i, 1) << 32 | hash(i, 3)) >> 11 over 2^53; sorted u64
//! 2 * i, queries (hash(i, 5) << 32 | hash(i, 6)) modulo 2n; merge halves
//! 2 * i and 2 * i + 1.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use cuprim::prelude::*;
use rayon::prelude::*;

/// 2^20, 2^24 and 2^27 on a GPU, or the list in `CUPRIM_SWEEP_SIZES`
/// (comma-separated; `cub_dists` takes the same list as arguments).
fn dist_sizes(dev: &Device) -> Vec<usize> {
    if let Some(sizes) = common::sweep_sizes_from_env() {
        return sizes;
    }
    let logs: &[u32] = if dev.is_cuda() { &[20, 24, 27] } else { &[16] };
    logs.iter().map(|&l| 1usize << l).collect()
}

fn dist_rows(c: &mut Criterion) {
    let dev = common::device();
    for n in dist_sizes(&dev) {
        let (f32s, f64s) = common::dist_values(n);
        let row = |c: &mut Criterion, op: &str, bytes: u64, call: &mut dyn FnMut() -> cuprim::Result<()>| {
            common::device_row(c, &dev, op, BenchmarkId::from_parameter(n), bytes, call)
        };
        let nb = n as u64;
        let mut count = DeviceVec::<u64>::zeros(&dev, 1).expect("allocating");
        {
            let vals = DeviceVec::from_slice(&dev, &f32s).expect("allocating");
            let mut ko = DeviceVec::<u32>::zeros(&dev, n).expect("allocating");
            let mut vo = DeviceVec::<f32>::zeros(&dev, n).expect("allocating");
            for run in [1usize, 4, 1024] {
                let keys: Vec<u32> = (0..n).into_par_iter().map(|i| (i / run) as u32).collect();
                let keys = DeviceVec::from_slice(&dev, &keys).expect("allocating");
                row(c, &format!("dists_reduce_by_key_u32_f32_run{run}"), 8 * nb, &mut || {
                    keys.reduce_by_key_into(&vals, Add, &mut ko, &mut vo, &mut count)
                });
                row(c, &format!("dists_unique_u32_run{run}"), 4 * nb, &mut || {
                    keys.unique_into(&mut ko, &mut count)
                });
            }
        }
        {
            let vals = DeviceVec::from_slice(&dev, &f64s).expect("allocating");
            let keys: Vec<u64> = (0..n as u64).into_par_iter().map(|i| i / 4).collect();
            let keys = DeviceVec::from_slice(&dev, &keys).expect("allocating");
            let mut ko = DeviceVec::<u64>::zeros(&dev, n).expect("allocating");
            let mut vo = DeviceVec::<f64>::zeros(&dev, n).expect("allocating");
            row(c, "dists_reduce_by_key_u64_f64_run4", 16 * nb, &mut || {
                keys.reduce_by_key_into(&vals, Add, &mut ko, &mut vo, &mut count)
            });
        }
        {
            let vals = DeviceVec::from_slice(&dev, &f32s).expect("allocating");
            for seg in [4u64, 64, 65536, 1 << 20, nb] {
                let offsets: Vec<u64> = (0..=nb / seg).map(|i| i * seg).collect();
                let offsets = DeviceVec::from_slice(&dev, &offsets).expect("allocating");
                let name = if seg == nb { "one".to_string() } else { format!("seg{seg}") };
                row(c, &format!("dists_segmented_sum_f32_{name}"), 4 * nb, &mut || {
                    vals.segmented_sum(&offsets).map(drop)
                });
            }
        }
        {
            let sorted: Vec<u64> = (0..nb).into_par_iter().map(|i| 2 * i).collect();
            let q: Vec<u64> = common::hash_u32(n, 5)
                .par_iter()
                .zip(&common::hash_u32(n, 6))
                .map(|(&h, &l)| ((h as u64) << 32 | l as u64) % (2 * nb))
                .collect();
            let sorted = DeviceVec::from_slice(&dev, &sorted).expect("allocating");
            let q = DeviceVec::from_slice(&dev, &q).expect("allocating");
            row(c, "dists_lower_bound_u64", 12 * nb, &mut || sorted.lower_bound(&q).map(drop));
            let evens: Vec<u64> = (0..nb / 2).into_par_iter().map(|i| 2 * i).collect();
            let odds: Vec<u64> = (0..nb / 2).into_par_iter().map(|i| 2 * i + 1).collect();
            let evens = DeviceVec::from_slice(&dev, &evens).expect("allocating");
            let odds = DeviceVec::from_slice(&dev, &odds).expect("allocating");
            row(c, "dists_merge_keys_u64", 16 * nb, &mut || evens.merge(&odds).map(drop));
        }
    }
}

criterion_group! {
    name = benches;
    config = common::sweep_config();
    targets = dist_rows
}
criterion_main!(benches);
