//! `cargo run --release --example latency_percentiles [samples]`:
//! percentiles of simulated request latencies (default ten million), from a
//! histogram on the device.
//!
//! Latencies are log-normal (most requests fast, a long tail), generated on
//! the host. The device bins them into logarithmically spaced edges (1 us to
//! 10 s, 20 bins per decade: `Bins::edges`), scans the counts into a
//! cumulative distribution (`scan`), and the percentiles are read off it to
//! bin resolution. The exact percentiles from sorting a host copy are
//! printed beside them, and each must fall in its bin (else an error).

use cuprim::algo::histogram::Bins;
use cuprim::prelude::*;
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let n = match std::env::args().nth(1) {
        None => 10_000_000usize,
        Some(a) => match a.parse() {
            // Counts are u32: at most u32::MAX samples.
            Ok(n) if n > 0 && n <= u32::MAX as usize => n,
            _ => return Err(format!("samples must be a whole number in 1..=4294967295, got {a:?}").into()),
        },
    };
    let dev = Device::default()?;
    println!("device: {dev:?}");

    // Log-normal latencies in microseconds: exp(N(ln 800, 1.1)), by a small
    // deterministic generator (SplitMix64 + Box-Muller).
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut uniform = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let latencies: Vec<f32> = (0..n)
        .map(|_| {
            let (u1, u2) = (uniform().max(1e-300), uniform());
            let normal = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            (800f64.ln() + 1.1 * normal).exp() as f32
        })
        .collect();
    let samples = DeviceVec::from_slice(&dev, &latencies)?;

    // 1 us .. 10 s, 20 edges per decade.
    let edges: Vec<f32> = (0..=140).map(|i| 10f32.powf(i as f32 / 20.0)).collect();
    let bins = Bins::edges(&edges);
    let start = Instant::now();
    let hist = samples.histogram(&bins)?;
    let cumulative = hist.counts().scan(Add)?.to_vec()?;
    let elapsed = start.elapsed();
    let dropped = hist.dropped()?;

    let mut sorted = latencies.clone();
    sorted.sort_by(f32::total_cmp);
    println!(
        "{n} latencies, {} bins, {dropped} outside [1 us, 10 s); histogram + scan + copy back: {elapsed:?}",
        bins.len()
    );
    println!("{:>6} {:>22} {:>12}", "pct", "histogram bin (us)", "exact (us)");
    for p in [50.0, 90.0, 99.0, 99.9, 99.99] {
        let rank = ((p / 100.0) * n as f64).ceil() as u32;
        // The first bin whose cumulative count reaches the rank.
        let b = cumulative.partition_point(|&c| c < rank);
        let exact = sorted[(rank as usize).saturating_sub(1).min(n - 1)];
        match (edges.get(b), edges.get(b + 1)) {
            (Some(lo), Some(hi)) => println!("{p:>6} {:>10.0} .. {:<9.0} {exact:>12.0}", lo, hi),
            _ => println!("{p:>6} {:>22} {exact:>12.0}", "(outside the bins)"),
        }
        if let (Some(lo), Some(hi)) = (edges.get(b), edges.get(b + 1)) {
            if !(*lo <= exact && exact < *hi) {
                return Err(format!("p{p}: the exact value {exact} is outside its histogram bin [{lo}, {hi})").into());
            }
        }
    }
    Ok(())
}
