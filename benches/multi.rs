//! Sharded vectors against one device: sort_pairs u32/u32, sum and
//! inclusive scan of f32, and the all-to-all exchange alone, for the same
//! total size.
//!
//! Rows: `one_device` (the single-device primitive on a `DeviceVec`),
//! `in_process_2` (two shards on the same device through the in-process
//! exchange: the sharded machinery's own cost, no speed-up possible) and,
//! when this process sees two or more GPUs and NCCL is installed, `nccl_N`
//! over all N of them. Times are wall clock from all devices idle to all
//! devices idle (several devices have no common event clock), so they
//! include the host's share. `CUPRIM_MULTI_LOG2` sets the total size
//! (default 2^28 on CUDA, 2^18 on the host).
//!
//! Bytes counted: the input once for sum, read + write for scan, the
//! exchanged bytes for all_to_all (every rank sends (N-1)/N of its shard:
//! the NCCL bus bandwidth convention), and the one-device sort's key and
//! value bytes (8 per pair) for the sorts.

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::multi::{Communicator, ShardedVec};
use cuprim::prelude::*;
use std::time::{Duration, Instant};

fn total_log2(dev: &Device) -> u32 {
    let default = if dev.is_cuda() { 28 } else { 18 };
    std::env::var("CUPRIM_MULTI_LOG2")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Wall time of `iters` calls, each from every device idle to every device idle.
fn time_all<R>(devices: &[Device], iters: u64, mut call: impl FnMut() -> cuprim::Result<R>) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        for d in devices {
            d.synchronize().expect("synchronize");
        }
        let start = Instant::now();
        let out = call().expect("bench call failed");
        for d in devices {
            d.synchronize().expect("synchronize");
        }
        total += start.elapsed();
        drop(out);
    }
    total
}

/// The communicators to bench: two shards on `dev` in process, and NCCL
/// over every GPU when there are two or more and NCCL loads.
fn communicators(dev: &Device) -> Vec<(String, Communicator)> {
    let mut out = vec![(
        "in_process_2".to_string(),
        Communicator::in_process(&[dev.clone(), dev.clone()]).expect("in-process communicator"),
    )];
    if dev.is_cuda() {
        let mut gpus = vec![dev.clone()];
        while let Ok(d) = Device::cuda(gpus.len()) {
            gpus.push(d);
        }
        match (gpus.len(), cuprim::multi::nccl_version()) {
            (1, _) => eprintln!("multi bench: one GPU, no NCCL rows"),
            (_, Err(e)) => eprintln!("multi bench: no NCCL rows: {e}"),
            (n, Ok((version, at))) => {
                eprintln!("multi bench: NCCL {version} from {at} over {n} GPUs");
                let comm = Communicator::new(&gpus).expect("NCCL communicator");
                out.push((format!("nccl_{n}"), comm));
            }
        }
    }
    out
}

fn multi(c: &mut Criterion) {
    let dev = common::device();
    let n = 1usize << total_log2(&dev);
    let keys = common::hash_u32(n, 7);
    let values: Vec<u32> = (0..n as u32).collect();
    let floats = common::uniform_f32(n);
    let comms = communicators(&dev);

    let one_keys = DeviceVec::from_slice(&dev, &keys).expect("keys");
    let one_values = DeviceVec::from_slice(&dev, &values).expect("values");
    let one_floats = DeviceVec::from_slice(&dev, &floats).expect("floats");
    let mut sharded = Vec::new();
    for (name, comm) in &comms {
        sharded.push((
            name.clone(),
            comm.clone(),
            ShardedVec::from_slice(comm, &keys).expect("sharded keys"),
            ShardedVec::from_slice(comm, &values).expect("sharded values"),
            ShardedVec::from_slice(comm, &floats).expect("sharded floats"),
        ));
    }
    let one = std::slice::from_ref(&dev);

    let mut group = c.benchmark_group("multi_sort_pairs_u32");
    group.throughput(Throughput::Bytes(8 * n as u64));
    group.bench_function(BenchmarkId::new("one_device", n), |b| {
        b.iter_custom(|iters| {
            time_all(one, iters, || {
                let mut k = DeviceVec::zeros(&dev, n)?;
                let mut v = DeviceVec::zeros(&dev, n)?;
                k.copy_from(&one_keys)?;
                v.copy_from(&one_values)?;
                k.sort_pairs(&mut v)?;
                Ok((k, v))
            })
        })
    });
    for (name, comm, k, v, _) in &sharded {
        group.bench_function(BenchmarkId::new(name.as_str(), n), |b| {
            b.iter_custom(|iters| time_all(comm.devices(), iters, || k.sort_pairs(v)))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("multi_sum_f32");
    group.throughput(Throughput::Bytes(4 * n as u64));
    group.bench_function(BenchmarkId::new("one_device", n), |b| {
        b.iter_custom(|iters| time_all(one, iters, || one_floats.sum()))
    });
    for (name, comm, _, _, f) in &sharded {
        group.bench_function(BenchmarkId::new(name.as_str(), n), |b| {
            b.iter_custom(|iters| time_all(comm.devices(), iters, || f.sum()))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("multi_scan_f32");
    group.throughput(Throughput::Bytes(8 * n as u64));
    group.bench_function(BenchmarkId::new("one_device", n), |b| {
        b.iter_custom(|iters| time_all(one, iters, || one_floats.scan(Add)))
    });
    for (name, comm, _, _, f) in &sharded {
        group.bench_function(BenchmarkId::new(name.as_str(), n), |b| {
            b.iter_custom(|iters| time_all(comm.devices(), iters, || f.scan(Add)))
        });
    }
    group.finish();

    // The exchange alone: every rank sends an even share of its shard to
    // every rank (the sort's exchange of uniform keys).
    let mut group = c.benchmark_group("multi_all_to_all_u32");
    for (name, comm, k, _, _) in &sharded {
        let ranks = comm.size();
        let counts: Vec<Vec<usize>> = k
            .shard_lens()
            .iter()
            .map(|&len| (0..ranks).map(|d| len / ranks + usize::from(d < len % ranks)).collect())
            .collect();
        let moved: usize = counts.iter().enumerate().map(|(s, row)| row.iter().sum::<usize>() - row[s]).sum();
        group.throughput(Throughput::Bytes(4 * moved as u64));
        group.bench_function(BenchmarkId::new(name.as_str(), n), |b| {
            b.iter_custom(|iters| time_all(comm.devices(), iters, || k.all_to_all(&counts)))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = multi
}
criterion_main!(benches);
