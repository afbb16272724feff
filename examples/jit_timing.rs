//! How long a first call takes: `cargo run --release --example jit_timing [elements]`.
//!
//! Times, in one process, the device's start and the first call of a few
//! kernels on `elements` values (default 2^20; each call waited for), and
//! says where each kernel came from: compiled by NVRTC, read from the disk
//! cache, or already in memory. On the host backend there is no device to
//! time: it times NVRTC compiles for sm_90 instead (NVRTC needs no GPU),
//! and fails, saying why, when NVRTC cannot be found.
//! Run it twice with the same fresh `CUPRIM_CACHE_DIR` to see both a cold
//! compile and a warm disk cache in a fresh process (`scripts/gpu-bench`
//! does). Targets: a cold compile under 300 ms, a disk hit under 20 ms.

use cuprim::jit::{self, CacheStats};
use cuprim::precompile::{self as pre, Target};
use cuprim::prelude::*;
use std::time::Instant;

const COLD_TARGET_MS: f64 = 300.0;
const DISK_TARGET_MS: f64 = 20.0;

/// Where the kernel of a call came from, by what the cache counters did.
fn source(before: CacheStats, after: CacheStats) -> &'static str {
    if after.compiles > before.compiles {
        "compile"
    } else if after.disk_hits > before.disk_hits {
        "disk"
    } else if after.memory_hits > before.memory_hits {
        "memory"
    } else {
        "none"
    }
}

/// Runs `call`, waits for the device, and prints one line.
fn step<R>(dev: &Device, name: &str, call: impl FnOnce() -> cuprim::Result<R>) -> cuprim::Result<()> {
    let before = jit::stats();
    let start = Instant::now();
    let out = call()?;
    dev.synchronize()?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    drop(out);
    let from = source(before, jit::stats());
    let verdict = match from {
        "compile" if ms < COLD_TARGET_MS => "ok (< 300 ms)",
        "compile" => "OVER (target 300 ms)",
        "disk" if ms < DISK_TARGET_MS => "ok (< 20 ms)",
        "disk" => "OVER (target 20 ms)",
        _ => "",
    };
    println!("jit_timing step={name} ms={ms:.3} source={from} {verdict}");
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let n = match std::env::args().nth(1) {
        None => 1 << 20,
        Some(a) => match a.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => return Err(format!("elements must be a positive whole number, got {a:?}").into()),
        },
    };
    let start = Instant::now();
    let dev = Device::default()?;
    let init_ms = start.elapsed().as_secs_f64() * 1e3;
    if dev.is_host() {
        return Ok(compile_only(90)?);
    }
    println!(
        "jit_timing device=\"{}\" sm_{} cache={:?} dir={}",
        dev.name(),
        dev.arch().unwrap_or(0),
        jit::CacheMode::from_env()?,
        jit::cache::default_dir().map_or("(none)".into(), |d| d.display().to_string()),
    );
    println!("jit_timing step=device_init ms={init_ms:.3} (driver, context, NVRTC load)");

    // Buffers come from host copies so that no kernel runs before the timed calls.
    let mut v = DeviceVec::from_slice(&dev, &vec![1.0f32; n])?;
    step(&dev, "fill_f32_first", || v.fill(2.0))?;
    step(&dev, "fill_f32_second", || v.fill(3.0))?;

    let a = DeviceVec::from_slice(&dev, &(0..n as i64).collect::<Vec<_>>())?;
    let b = DeviceVec::from_slice(&dev, &(0..n as i64).rev().collect::<Vec<_>>())?;
    step(&dev, "transform2_max_i64_first", || a.transform2(&b, Max))?;
    step(&dev, "transform2_max_i64_second", || a.transform2(&b, Max))?;

    step(&dev, "sum_f32_first", || v.sum())?;
    step(&dev, "sum_f32_second", || v.sum())?;

    let s = jit::stats();
    println!(
        "jit_timing totals compiles={} disk_hits={} disk_corrupt={} memory_hits={}",
        s.compiles, s.disk_hits, s.disk_corrupt, s.memory_hits
    );
    Ok(())
}

/// With no GPU, NVRTC alone: how long each kernel takes to compile for
/// `arch` (no cache, no module load, plus ptxas' resource report).
fn compile_only(arch: u32) -> cuprim::Result<()> {
    println!("jit_timing: host backend, no device to time; timing NVRTC compiles for sm_{arch} instead (no cache, no load)");
    let timed = |name: &str, run: &dyn Fn() -> cuprim::Result<Vec<pre::KernelReport>>| -> cuprim::Result<()> {
        let start = Instant::now();
        let kernels = run()?.len();
        let ms = start.elapsed().as_secs_f64() * 1e3;
        println!("jit_timing step={name} ms={ms:.3} source=compile kernels={kernels}");
        Ok(())
    };
    timed("transform_identity_f32_with_nvrtc_load", &|| {
        pre::precompile_unary::<f32, _>(Target::Arch(arch), cuprim::ops::Identity)
    })?;
    timed("compile_fill_gather_argminmax_f32", &|| pre::precompile::<f32>(Target::Arch(arch)))?;
    timed("compile_transform2_max_i64", &|| {
        pre::precompile_binary::<i64, _>(Target::Arch(arch), Max)
    })?;
    timed("compile_reduce_sum_f32", &|| {
        pre::precompile_reduce::<f32, _>(Target::Arch(arch), Add)
    })?;
    Ok(())
}
