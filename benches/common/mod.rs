//! Support shared by every bench file: which device, which sizes, how to
//! time a call, and a criterion configuration short enough for a lent GPU.
//!
//! Naming: a device bench is `<op>/<elem>/<n>` (criterion group `<op>`,
//! function `<elem>`, parameter `n`), e.g. `fill/f32/1048576` or
//! `reduce_sum/f32/16777216`. `scripts/bench_table.py` relies on it to pair
//! each bench with its CUB row and to count the bytes it moves.
//!
//! Timing on CUDA copies `shared/anchors/cub_bench.cu`: every call sits
//! between two CUDA events on the device's stream and the end event is
//! waited for, so a sample is the device time of single calls, launch
//! latency included; criterion reports the median over samples. Set
//! `CUPRIM_BENCH_TIMING=batch` to time back-to-back calls between one pair
//! of events instead (throughput with launches overlapped). On the host
//! backend a sample is wall time.
//!
//! Environment: `CUPRIM_DEVICE` picks the device as everywhere;
//! `CUPRIM_BENCH_MAX_LOG2=N` drops sizes above 2^N (for smaller GPUs),
//! `CUPRIM_BENCH_MIN_LOG2=N` those below 2^N; `CUPRIM_SWEEP_SIZES` lists
//! the sizes of the sweeps (`sweep.rs`, `sort.rs`' sweep, `dists.rs`).

#![allow(dead_code)]

use criterion::{BenchmarkId, Criterion, Throughput};
use cudarc::driver::sys::CUevent_flags;
use cuprim::prelude::*;
use rayon::prelude::*;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The device every bench of this process runs on, announced once on stderr.
pub fn device() -> Device {
    static DEVICE: OnceLock<Device> = OnceLock::new();
    DEVICE
        .get_or_init(|| {
            let dev = Device::default().expect("CUPRIM_DEVICE names a device that cannot be used");
            match dev.arch() {
                Some(arch) => eprintln!("bench device: {} (sm_{arch}, {} SMs)", dev.name(), dev.sm_count()),
                None => {
                    let why = match Device::cuda(0) {
                        Ok(_) => "CUPRIM_DEVICE asks for it".to_string(),
                        Err(e) => e.to_string(),
                    };
                    eprintln!("bench device: host backend ({why})");
                }
            }
            dev
        })
        .clone()
}

/// The sizes listed in `CUPRIM_SWEEP_SIZES` (comma-separated element
/// counts; the sweep anchors take the same list as arguments), if set.
pub fn sweep_sizes_from_env() -> Option<Vec<usize>> {
    let list = std::env::var("CUPRIM_SWEEP_SIZES").ok()?;
    Some(
        list.split(',')
            .map(|x| x.trim().parse().expect("CUPRIM_SWEEP_SIZES: sizes"))
            .collect(),
    )
}

/// Problem sizes: 2^20, 2^24 and 2^28 on a GPU, 2^20 alone on the host.
pub fn sizes(dev: &Device) -> Vec<usize> {
    // CUPRIM_BENCH_LOG2S=22,26 measures other sizes (comma-separated log2s).
    let listed: Option<Vec<u32>> = std::env::var("CUPRIM_BENCH_LOG2S")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect());
    let all: &[u32] = match &listed {
        Some(l) => l,
        None if dev.is_cuda() => &[20, 24, 28],
        None => &[20],
    };
    let bound = |name: &str, default: u32| std::env::var(name).ok().and_then(|v| v.parse::<u32>().ok()).unwrap_or(default);
    let (floor, cap) = (bound("CUPRIM_BENCH_MIN_LOG2", 0), bound("CUPRIM_BENCH_MAX_LOG2", u32::MAX));
    all.iter()
        .filter(|&&log2| (floor..=cap).contains(&log2))
        .map(|&log2| 1usize << log2)
        .collect()
}

/// 20 samples, 0.5 s of warm-up, 1.5 s of measurement: one bench costs a
/// few seconds, a whole family file about a minute on the GPU.
pub fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
}

/// 10 samples, 0.2 s of warm-up, 0.5 s of measurement: for the sweeps,
/// which have about a hundred rows each (`sweep.rs`, `types.rs`, `dists.rs`).
pub fn sweep_config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(500))
}

/// One row of device calls: group `op`, function `id`, `bytes` of
/// throughput, each sample [`time_calls`] of `call`.
pub fn device_row(c: &mut Criterion, dev: &Device, op: &str, id: BenchmarkId, bytes: u64, call: &mut dyn FnMut() -> cuprim::Result<()>) {
    let mut group = c.benchmark_group(op);
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function(id, |b| b.iter_custom(|iters| time_calls(dev, iters, &mut *call)));
    group.finish();
}

/// Keys (and values) to sort, with the unsorted input kept beside them:
/// each timed sort starts from `restore` / `restore_keys` (untimed, in
/// [`time_with_setup`]).
pub struct Pairs<K: Element, V: Element> {
    pub keys_in: DeviceVec<K>,
    pub values_in: DeviceVec<V>,
    pub keys: DeviceVec<K>,
    pub values: DeviceVec<V>,
}

impl<K: Element, V: Element> Pairs<K, V> {
    pub fn new(dev: &Device, keys: &[K], values: &[V]) -> Self {
        let keys_in = DeviceVec::from_slice(dev, keys).expect("allocating keys");
        let values_in = DeviceVec::from_slice(dev, values).expect("allocating values");
        Pairs {
            keys: keys_in.to_device_vec().expect("allocating keys"),
            values: values_in.to_device_vec().expect("allocating values"),
            keys_in,
            values_in,
        }
    }

    pub fn restore_keys(&mut self) -> cuprim::Result<()> {
        self.keys.copy_from(&self.keys_in)
    }

    pub fn restore(&mut self) -> cuprim::Result<()> {
        self.keys.copy_from(&self.keys_in)?;
        self.values.copy_from(&self.values_in)
    }
}

fn batch_timing() -> bool {
    static BATCH: OnceLock<bool> = OnceLock::new();
    *BATCH.get_or_init(|| std::env::var("CUPRIM_BENCH_TIMING").is_ok_and(|v| v == "batch"))
}

/// Time of `iters` calls of `call` on `dev`, for criterion's `iter_custom`:
/// the sum of per-call device times between CUDA events on CUDA, wall time
/// on the host backend. Panics if a call fails (a bench has no other way out).
pub fn time_calls<R>(dev: &Device, iters: u64, mut call: impl FnMut() -> cuprim::Result<R>) -> Duration {
    let Some(stream) = dev.cuda_stream() else {
        let start = Instant::now();
        for _ in 0..iters {
            std::hint::black_box(call().expect("bench call failed"));
        }
        return start.elapsed();
    };
    dev.synchronize().expect("synchronize before timing");
    let event = || {
        stream
            .context()
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .expect("creating a timing event")
    };
    let (start, end) = (event(), event());
    let mut ms = 0.0f64;
    if batch_timing() {
        start.record(stream).expect("recording an event");
        for _ in 0..iters {
            std::hint::black_box(call().expect("bench call failed"));
        }
        end.record(stream).expect("recording an event");
        ms = start.elapsed_ms(&end).expect("reading an event pair") as f64;
    } else {
        for _ in 0..iters {
            start.record(stream).expect("recording an event");
            let out = call().expect("bench call failed");
            end.record(stream).expect("recording an event");
            // elapsed_ms waits for both events.
            ms += start.elapsed_ms(&end).expect("reading an event pair") as f64;
            drop(out);
        }
    }
    Duration::from_secs_f64(ms / 1e3)
}

/// Device time of `iters` calls of `call`, each after an untimed `setup`
/// (CUDA events around the call alone), or wall time of the calls on the
/// host backend.
pub fn time_with_setup<S>(
    dev: &Device,
    iters: u64,
    state: &mut S,
    mut setup: impl FnMut(&mut S) -> cuprim::Result<()>,
    mut call: impl FnMut(&mut S) -> cuprim::Result<()>,
) -> Duration {
    let Some(stream) = dev.cuda_stream() else {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            setup(state).expect("restoring the input");
            let start = Instant::now();
            call(state).expect("bench call failed");
            total += start.elapsed();
        }
        return total;
    };
    let event = || {
        stream
            .context()
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .expect("creating a timing event")
    };
    let (start, end) = (event(), event());
    let mut ms = 0.0f64;
    for _ in 0..iters {
        setup(state).expect("restoring the input");
        start.record(stream).expect("recording an event");
        call(state).expect("bench call failed");
        end.record(stream).expect("recording an event");
        // elapsed_ms waits for both events.
        ms += start.elapsed_ms(&end).expect("reading an event pair") as f64;
    }
    Duration::from_secs_f64(ms / 1e3)
}

/// Calls made between two waits for the device in the host-overhead
/// benches: enough to amortise nothing, few enough never to fill the
/// launch queue (a full queue would make the launch itself block).
pub const SYNC_EVERY: u64 = 256;

/// Host time of each of `calls` calls of `call`, timed alone, with the
/// device waited for (outside the timed spans) every [`SYNC_EVERY`] calls.
pub fn host_call_times<R>(dev: &Device, calls: u64, mut call: impl FnMut() -> cuprim::Result<R>) -> Vec<Duration> {
    dev.synchronize().expect("synchronize before timing");
    let mut times = Vec::with_capacity(calls as usize);
    for i in 0..calls {
        let start = Instant::now();
        let out = call().expect("bench call failed");
        times.push(start.elapsed());
        drop(out);
        if (i + 1) % SYNC_EVERY == 0 {
            dev.synchronize().expect("synchronize between calls");
        }
    }
    dev.synchronize().expect("synchronize after timing");
    times
}

/// The sum of [`host_call_times`], for criterion's `iter_custom`.
pub fn host_time<R>(dev: &Device, iters: u64, call: impl FnMut() -> cuprim::Result<R>) -> Duration {
    host_call_times(dev, iters, call).into_iter().sum()
}

/// [`host_call_times`] in microseconds.
pub fn host_call_micros<R>(dev: &Device, calls: u64, call: impl FnMut() -> cuprim::Result<R>) -> Vec<f64> {
    host_call_times(dev, calls, call).iter().map(|t| t.as_secs_f64() * 1e6).collect()
}

/// The `q`-quantile (0.5 = median) of `xs`, by nearest rank.
pub fn quantile(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((sorted.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize;
    sorted[rank]
}

/// Prints one machine-readable summary line of host call times (stdout, so
/// it lands beside criterion's own lines in `cuprim-bench.txt`).
pub fn report_host_micros(name: &str, micros: &[f64], target_us: f64) {
    let median = quantile(micros, 0.5);
    println!(
        "host_overhead {name} median_us={median:.2} p10_us={:.2} p90_us={:.2} calls={} target_us={target_us} {}",
        quantile(micros, 0.1),
        quantile(micros, 0.9),
        micros.len(),
        if median < target_us { "ok" } else { "over-target" },
    );
}

/// A pseudo-random permutation of `0..n` (no two indices equal), the same
/// for the same `seed`: a keyed bijective mix on the next power of two,
/// walked until it lands below `n`. Computed in parallel; 2^28 entries take
/// well under a second on the GPU machine's 16 cores.
pub fn random_permutation(n: usize, seed: u64) -> Vec<u32> {
    assert!(n <= 1usize << 32, "u32 indices address at most 2^32 elements");
    let bits = usize::BITS - n.saturating_sub(1).leading_zeros();
    let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let keys: Vec<u64> = (0..4u64)
        .map(|r| seed.wrapping_add(r).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17))
        .collect();
    let shift = (bits / 2).max(1);
    // Each step is a bijection on `bits`-bit values: adding a key, multiplying
    // by an odd constant, and x ^ (x >> s) (the top s bits stay as they are,
    // and they determine the rest).
    let mix = |mut x: u64| {
        for &k in &keys {
            x = (x.wrapping_add(k)) & mask;
            x = (x.wrapping_mul(0xbf58_476d_1ce4_e5b9 | 1)) & mask;
            x ^= x >> shift;
        }
        x
    };
    (0..n as u64)
        .into_par_iter()
        .map(|i| {
            let mut x = mix(i);
            while x >= n as u64 {
                x = mix(x);
            }
            x as u32
        })
        .collect()
}

/// cub_bench.cu's `fill_rand_u32`.
pub fn hash_u32(n: usize, seed: u32) -> Vec<u32> {
    (0..n)
        .into_par_iter()
        .map(|i| {
            let mut x = (i as u32).wrapping_mul(2_654_435_761) ^ seed;
            x ^= x >> 16;
            x = x.wrapping_mul(0x7feb_352d);
            x ^= x >> 15;
            x = x.wrapping_mul(0x846c_a68b);
            x ^ (x >> 16)
        })
        .collect()
}

/// `shared/anchors/cub_next.cu`'s `mix`: the anchors' pseudo-random u32 of
/// index `i` under `seed`.
pub fn mix(i: u64, seed: u32) -> u32 {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((seed as u64) << 32 | seed as u64);
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    (x >> 32) as u32
}

/// cub_next.cu's `gen_f32` with seed 1: `(mix(i, 1) >> 8) / 2^24`, uniform
/// in [0, 1).
pub fn uniform_f32(n: usize) -> Vec<f32> {
    (0..n as u64)
        .into_par_iter()
        .map(|i| (mix(i, 1) >> 8) as f32 * (1.0 / 16_777_216.0))
        .collect()
}

/// `cub_dists.cu`'s values: f32 `hash(i, 1) >> 8` over 2^24 in [0, 1), f64
/// the 53 high bits of `hash(i, 1) : hash(i, 3)` over 2^53.
pub fn dist_values(n: usize) -> (Vec<f32>, Vec<f64>) {
    let a = hash_u32(n, 1);
    let b = hash_u32(n, 3);
    let f32s: Vec<f32> = a.par_iter().map(|&a| (a >> 8) as f32 * (1.0 / 16_777_216.0)).collect();
    let f64s: Vec<f64> = a
        .par_iter()
        .zip(&b)
        .map(|(&a, &b)| ((a as u64) << 32 | b as u64) >> 11)
        .map(|w| w as f64 * (1.0 / 9_007_199_254_740_992.0))
        .collect();
    (f32s, f64s)
}

/// The tuning benches' row: the median device time (µs) of 31 single
/// calls after 5 warm-ups.
pub fn median_call_us(dev: &Device, call: &mut dyn FnMut() -> cuprim::Result<()>) -> f64 {
    for _ in 0..5 {
        time_calls(dev, 1, &mut *call);
    }
    let mut t: Vec<f64> = (0..31).map(|_| time_calls(dev, 1, &mut *call).as_secs_f64() * 1e6).collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// The tuning benches' sizes: the comma-separated `CUPRIM_TUNE_SIZES`, else `default`.
pub fn tune_sizes(default: Vec<usize>) -> Vec<usize> {
    match std::env::var("CUPRIM_TUNE_SIZES") {
        Ok(list) => list
            .split(',')
            .map(|s| s.trim().parse().expect("CUPRIM_TUNE_SIZES: integers"))
            .collect(),
        Err(_) => default,
    }
}
