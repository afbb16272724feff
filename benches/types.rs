//! The type sweep beside `benchmarks/anchors/cub_types.cu`: the element
//! types and key distributions the other benches leave out, at 2^20, 2^24
//! and 2^27 elements on a GPU (2^16 on the host). Reduce (i64 sum, f64 max,
//! i8 min) and arg-min (f64, i32) into device scalars, inclusive sums (u8,
//! u64, f64) into a second buffer, the u8 256-bin count (`bincount`, which
//! allocates its histogram) and 64 even bins of u8 over [0, 255), radix sorts of u8, i32, f32, f64 and i64 keys,
//! pairs with u64 values, u32 keys with 16 distinct values and already
//! sorted, f32 keys (u32 values) in descending order, u32 keys in segments of
//! 32 (`segmented_sort`), `copy_if_into` of u32 keeping 1% and 99%, and 256
//! even bins of f64 samples (`histogram_into`).
//!
//! Inputs are the anchor's: a = hash(i, seed 1), b = hash(i, seed 3); u8 /
//! i8 the low byte of a, i32 a, u64 / i64 a << 32 | b, f32 (a >> 8) / 2^24,
//! f64 (a << 32 | b) >> 11 over 2^53; values hash(i, seed 2) << 32 | b.
//! Every sort starts from the unsorted keys, restored before the start
//! event (not timed).

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::algo::histogram::{Bins, Histogram};
use cuprim::pred::Lt;
use cuprim::prelude::*;
use rayon::prelude::*;

fn type_sizes(dev: &Device) -> Vec<usize> {
    let logs: &[u32] = if dev.is_cuda() { &[20, 24, 27] } else { &[16] };
    logs.iter().map(|&l| 1usize << l).collect()
}

/// A sort of `keys` (with `values` unless empty) from the unsorted input each time.
fn sort_row<K: Element, V: Element>(c: &mut Criterion, dev: &Device, op: &str, keys: &[K], values: &[V]) {
    let n = keys.len();
    let mut s = common::Pairs::new(dev, keys, values);
    let mut group = c.benchmark_group(op);
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function(BenchmarkId::new("keys", n), |b| {
        b.iter_custom(|iters| {
            if values.is_empty() {
                common::time_with_setup(dev, iters, &mut s, common::Pairs::restore_keys, |s| s.keys.sort())
            } else {
                common::time_with_setup(dev, iters, &mut s, common::Pairs::restore, |s| s.keys.sort_pairs(&mut s.values))
            }
        })
    });
    group.finish();
}

fn type_rows(c: &mut Criterion) {
    let dev = common::device();
    for n in type_sizes(&dev) {
        let a = common::hash_u32(n, 1);
        let b = common::hash_u32(n, 3);
        let wide: Vec<u64> = a.par_iter().zip(&b).map(|(&a, &b)| (a as u64) << 32 | b as u64).collect();
        let u8s: Vec<u8> = a.par_iter().map(|&a| a as u8).collect();
        let i8s: Vec<i8> = a.par_iter().map(|&a| a as u8 as i8).collect();
        let i32s: Vec<i32> = a.par_iter().map(|&a| a as i32).collect();
        let i64s: Vec<i64> = wide.par_iter().map(|&w| w as i64).collect();
        let f32s: Vec<f32> = a.par_iter().map(|&a| (a >> 8) as f32 * (1.0 / 16_777_216.0)).collect();
        let f64s: Vec<f64> = wide
            .par_iter()
            .map(|&w| (w >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0))
            .collect();
        let v64: Vec<u64> = common::hash_u32(n, 2)
            .par_iter()
            .zip(&b)
            .map(|(&v, &b)| (v as u64) << 32 | b as u64)
            .collect();

        let row = |c: &mut Criterion, op: &str, elem: &str, bytes: u64, call: &mut dyn FnMut() -> cuprim::Result<()>| {
            common::device_row(c, &dev, op, BenchmarkId::new(elem, n), bytes, call)
        };
        let nb = n as u64;
        let mut count = DeviceVec::<u64>::zeros(&dev, 1).expect("allocating");
        {
            let x = DeviceVec::from_slice(&dev, &i64s).expect("allocating");
            let mut out = DeviceVec::<i64>::zeros(&dev, 1).expect("allocating");
            row(c, "types_reduce_sum", "i64", 8 * nb, &mut || x.reduce_to(Add, &mut out));
        }
        {
            let x = DeviceVec::from_slice(&dev, &f64s).expect("allocating");
            let mut out = DeviceVec::<f64>::zeros(&dev, 1).expect("allocating");
            row(c, "types_reduce_max", "f64", 8 * nb, &mut || x.reduce_to(Max, &mut out));
            let mut index = DeviceVec::<u64>::zeros(&dev, 1).expect("allocating");
            row(c, "types_argmin", "f64", 8 * nb, &mut || x.min_element_to(&mut index, &mut out));
            let mut scanned = DeviceVec::<f64>::zeros(&dev, n).expect("allocating");
            row(c, "types_scan_incl_sum", "f64", 16 * nb, &mut || {
                x.scan_inclusive_into(Add, &mut scanned)
            });
        }
        {
            let x = DeviceVec::from_slice(&dev, &i8s).expect("allocating");
            let mut out = DeviceVec::<i8>::zeros(&dev, 1).expect("allocating");
            row(c, "types_reduce_min", "i8", nb, &mut || x.reduce_to(Min, &mut out));
        }
        {
            let x = DeviceVec::from_slice(&dev, &i32s).expect("allocating");
            let mut out = DeviceVec::<i32>::zeros(&dev, 1).expect("allocating");
            let mut index = DeviceVec::<u64>::zeros(&dev, 1).expect("allocating");
            row(c, "types_argmin", "i32", 4 * nb, &mut || x.min_element_to(&mut index, &mut out));
        }
        {
            let x = DeviceVec::from_slice(&dev, &u8s).expect("allocating");
            let mut scanned = DeviceVec::<u8>::zeros(&dev, n).expect("allocating");
            row(c, "types_scan_incl_sum", "u8", 2 * nb, &mut || {
                x.scan_inclusive_into(Add, &mut scanned)
            });
            row(c, "types_bincount256_alloc", "u8", nb, &mut || x.bincount(256).map(drop));
            let even = Bins::even(64, 0u8, 255);
            let mut hist = Histogram::<u32>::zeros(&dev, 64).expect("allocating");
            row(c, "types_histogram_even64", "u8", nb, &mut || x.histogram_into(&even, &mut hist));
        }
        {
            let x = DeviceVec::from_slice(&dev, &wide).expect("allocating");
            let mut scanned = DeviceVec::<u64>::zeros(&dev, n).expect("allocating");
            row(c, "types_scan_incl_sum", "u64", 16 * nb, &mut || {
                x.scan_inclusive_into(Add, &mut scanned)
            });
        }
        let none: [u32; 0] = [];
        sort_row(c, &dev, "types_sort_keys_u8", &u8s, &none);
        sort_row(c, &dev, "types_sort_keys_i32", &i32s, &none);
        sort_row(c, &dev, "types_sort_keys_f32", &f32s, &none);
        sort_row(c, &dev, "types_sort_keys_f64", &f64s, &none);
        sort_row(c, &dev, "types_sort_keys_i64", &i64s, &none);
        let few16: Vec<u32> = a.par_iter().map(|&a| a & 15).collect();
        sort_row(c, &dev, "types_sort_keys_u32_few16", &few16, &none);
        let sorted: Vec<u32> = (0..n as u32).collect();
        sort_row(c, &dev, "types_sort_keys_u32_sorted", &sorted, &none);
        let descending: Vec<f32> = (0..n).into_par_iter().map(|i| (n - 1 - i) as f32).collect();
        let v32 = common::hash_u32(n, 2);
        sort_row(c, &dev, "types_sort_pairs_f32_u32_descending", &descending, &v32);
        {
            let offsets: Vec<u64> = (0..=n as u64 / 32).map(|i| 32 * i).collect();
            let offsets = DeviceVec::from_slice(&dev, &offsets).expect("allocating");
            let mut s = common::Pairs::new(&dev, &a, &none);
            let mut group = c.benchmark_group("types_segmented_sort_u32_seg32");
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new("keys", n), |bn| {
                bn.iter_custom(|iters| {
                    common::time_with_setup(&dev, iters, &mut s, common::Pairs::restore_keys, |s| {
                        s.keys.segmented_sort(&offsets)
                    })
                })
            });
            group.finish();
        }
        {
            let x = DeviceVec::from_slice(&dev, &a).expect("allocating");
            let mut out = DeviceVec::<u32>::zeros(&dev, n).expect("allocating");
            for pct in [1u64, 99] {
                let below = ((1u64 << 32) * pct / 100) as u32;
                row(c, &format!("types_copy_if_sel{pct}"), "u32", 4 * nb, &mut || {
                    x.copy_if_into(Lt(below), &mut out, &mut count)
                });
            }
        }
        {
            let x = DeviceVec::from_slice(&dev, &f64s).expect("allocating");
            let even = Bins::even(256, 0.0f64, 1.0);
            let mut hist = Histogram::<u32>::zeros(&dev, 256).expect("allocating");
            row(c, "types_histogram_even256", "f64", 8 * nb, &mut || {
                x.histogram_into(&even, &mut hist)
            });
        }
        sort_row(c, &dev, "types_sort_pairs_u32_u64", &a, &v64);
        sort_row(c, &dev, "types_sort_pairs_u64_u64", &wide, &v64);
    }
}

criterion_group! {
    name = benches;
    config = common::sweep_config();
    targets = type_rows
}
criterion_main!(benches);
