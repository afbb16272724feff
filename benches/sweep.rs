//! The size sweep beside `benchmarks/anchors/cub_sweep.cu`: reduce, scan,
//! histogram and arg-min at every even power of two from 2^12 to 2^28 on a
//! GPU (2^12 and 2^16 on the host), where the other benches time 2^20, 2^24
//! and 2^28 only. Small inputs are latency-bound: these rows are where a
//! launch too many or a host round trip shows.
//!
//! Inputs are the anchor's: a hash of the index for u32 (cub_bench.cu's
//! `fill_rand_u32`), `(u >> 8) / 2^24` for f32; the histogram also runs on
//! those samples sorted (every warp in one bin) and on one constant. Every
//! output is preallocated except where the call's own API allocates
//! (`scan`, `histogram`, `reduce_into`): those rows say `_alloc`
//! (`scan_into` writes a buffer the caller has, as CUB does).
//! Host overhead of a warm call, per family, is printed as
//! `host_overhead` lines at 2^12 (target: under 5 us).

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use cuprim::algo::histogram::{Bins, Histogram};
use cuprim::prelude::*;
use rayon::prelude::*;

/// Every even power of two from 2^12 to 2^28 on a GPU, or the sizes in
/// `CUPRIM_SWEEP_SIZES` (comma-separated; `cub_sweep` takes the same list
/// as arguments).
fn sweep_sizes(dev: &Device) -> Vec<usize> {
    if let Some(sizes) = common::sweep_sizes_from_env() {
        return sizes;
    }
    let all: Vec<u32> = if dev.is_cuda() {
        (12..=28).step_by(2).collect()
    } else {
        vec![12, 16]
    };
    all.into_iter().map(|log2| 1usize << log2).collect()
}

fn sweep_rows(c: &mut Criterion) {
    let dev = common::device();
    for n in sweep_sizes(&dev) {
        let keys = common::hash_u32(n, 1);
        let unit: Vec<f32> = keys.par_iter().map(|&x| (x >> 8) as f32 * (1.0 / 16_777_216.0)).collect();
        let mut sorted = unit.clone();
        sorted.par_sort_unstable_by(f32::total_cmp);
        let u = DeviceVec::from_slice(&dev, &keys).expect("allocating");
        let f = DeviceVec::from_slice(&dev, &unit).expect("allocating");
        let fs = DeviceVec::from_slice(&dev, &sorted).expect("allocating");
        let one = DeviceVec::filled(&dev, n, 0.5f32).expect("allocating");
        let mut scratch_u = DeviceVec::from_slice(&dev, &keys).expect("allocating");
        let mut scratch_f = DeviceVec::from_slice(&dev, &unit).expect("allocating");
        drop((keys, unit, sorted));
        let mut out_f = DeviceVec::<f32>::zeros(&dev, 1).expect("allocating");
        let mut scan_out = DeviceVec::<f32>::zeros(&dev, n).expect("allocating");
        let mut arg_value = DeviceVec::<f32>::zeros(&dev, 1).expect("allocating");
        let mut arg_index = DeviceVec::<u64>::zeros(&dev, 1).expect("allocating");
        let even = Bins::even(256, 0.0f32, 1.0);
        let even_u = Bins::even(256, 0u32, u32::MAX);
        let mut hist = Histogram::<u32>::zeros(&dev, 256).expect("allocating");

        let mut row = |op: &str, elem: &str, bytes: u64, call: &mut dyn FnMut() -> cuprim::Result<()>| {
            common::device_row(c, &dev, op, BenchmarkId::new(elem, n), bytes, call)
        };
        let n4 = 4 * n as u64;
        row("sweep_reduce_sum", "f32", n4, &mut || f.reduce_to(Add, &mut out_f));
        row("sweep_reduce_sum_alloc", "f32", n4, &mut || f.reduce_into(Add).map(drop));
        row("sweep_min_element", "f32", n4, &mut || f.min_element().map(drop));
        row("sweep_min_element_to", "f32", n4, &mut || {
            f.min_element_to(&mut arg_index, &mut arg_value)
        });
        row("sweep_scan_incl_sum_alloc", "f32", 2 * n4, &mut || f.scan(Add).map(drop));
        row("sweep_scan_incl_sum_into", "f32", 2 * n4, &mut || {
            f.scan_inclusive_into(Add, &mut scan_out)
        });
        row("sweep_scan_excl_sum_in_place", "u32", 2 * n4, &mut || {
            scratch_u.scan_exclusive_in_place(Add)
        });
        row("sweep_scan_incl_sum_in_place", "f32", 2 * n4, &mut || {
            scratch_f.scan_inclusive_in_place(Add)
        });
        row("sweep_histogram_even256", "f32", n4, &mut || f.histogram_into(&even, &mut hist));
        row("sweep_histogram_even256_alloc", "f32", n4, &mut || f.histogram(&even).map(drop));
        row("sweep_histogram_even256_sorted", "f32", n4, &mut || {
            fs.histogram_into(&even, &mut hist)
        });
        row("sweep_histogram_even256_onebin", "f32", n4, &mut || {
            one.histogram_into(&even, &mut hist)
        });
        row("sweep_histogram_even256", "u32", n4, &mut || u.histogram_into(&even_u, &mut hist));

        if n == 1 << 12 && dev.is_cuda() {
            let calls = 5000;
            let report = |name: &str, micros: Vec<f64>| common::report_host_micros(name, &micros, 5.0);
            report(
                "reduce_to_f32_4096",
                common::host_call_micros(&dev, calls, || f.reduce_to(Add, &mut out_f)),
            );
            report("reduce_into_f32_4096", common::host_call_micros(&dev, calls, || f.reduce_into(Add)));
            report("scan_f32_4096", common::host_call_micros(&dev, calls, || f.scan(Add)));
            report(
                "scan_into_f32_4096",
                common::host_call_micros(&dev, calls, || f.scan_inclusive_into(Add, &mut scan_out)),
            );
            report(
                "histogram_into_f32_4096",
                common::host_call_micros(&dev, calls, || f.histogram_into(&even, &mut hist)),
            );
            report("histogram_f32_4096", common::host_call_micros(&dev, calls, || f.histogram(&even)));
            report(
                "min_element_to_f32_4096",
                common::host_call_micros(&dev, calls, || f.min_element_to(&mut arg_index, &mut arg_value)),
            );
            report("sort_u32_4096", common::host_call_micros(&dev, calls, || scratch_u.sort()));
        }
    }
}

criterion_group! {
    name = benches;
    config = common::sweep_config();
    targets = sweep_rows
}
criterion_main!(benches);
