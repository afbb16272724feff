//! `cargo run --release --example sharded [GIB]`: sort and scan a vector of
//! GIB gibibytes of u32 (default 0.25) split over every GPU this process
//! sees, through NCCL when there are two or more (and NCCL is installed),
//! else over two shards on one device through the in-process exchange.
//!
//! The data is made on each device (no host copy), so the total can exceed
//! one GPU's memory when enough GPUs share it: a sort needs about five times
//! a shard's bytes on its GPU (the shard, its sorted copy, the radix sort's
//! buffer, what it receives and the merged result). The example checks its
//! own results on the devices: every shard sorted, the shards in order, the
//! scan's last element equal to the sum.

use cuprim::multi::{Communicator, ShardedVec};
use cuprim::prelude::*;
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn communicator() -> Result<Communicator, Error> {
    let dev = Device::default()?;
    if dev.is_cuda() {
        let mut gpus = vec![dev.clone()];
        while let Ok(d) = Device::cuda(gpus.len()) {
            gpus.push(d);
        }
        if gpus.len() > 1 {
            match Communicator::new(&gpus) {
                Ok(comm) => return Ok(comm),
                Err(e) => println!("NCCL over {} GPUs is not available ({e}); exchanging in process", gpus.len()),
            }
        }
    }
    Communicator::in_process(&[dev.clone(), dev])
}

fn run() -> Result<(), Error> {
    let gib: f64 = match std::env::args().nth(1) {
        Some(a) => a
            .parse()
            .map_err(|_| Error::InvalidArgument(format!("{a:?} is not a size in GiB")))?,
        None => 0.25,
    };
    let comm = communicator()?;
    let n = (gib * (1u64 << 30) as f64 / 4.0) as usize;
    let ranks = comm.size();
    println!("{} ranks ({}): {:?}", ranks, comm.kind(), comm.devices());
    println!("{n} u32 keys, {gib} GiB in all, {:.2} GiB per shard", gib / ranks as f64);

    // Each shard is a Weyl sequence made on its own device: distinct,
    // unsorted keys, no host copy.
    let mut shards = Vec::with_capacity(ranks);
    let mut start = 0usize;
    for (r, dev) in comm.devices().iter().enumerate() {
        let len = n / ranks + usize::from(r < n % ranks);
        let first = (start as u32).wrapping_mul(2_654_435_761).wrapping_add(7);
        shards.push(DeviceVec::sequence(dev, len, first, 2_654_435_761u32)?);
        start += len;
    }
    let keys = ShardedVec::from_shards(&comm, shards)?;

    let t = Instant::now();
    let sorted = keys.sort()?;
    for d in comm.devices() {
        d.synchronize()?;
    }
    println!(
        "sort: {:.1} ms, shards of {:?}",
        t.elapsed().as_secs_f64() * 1e3,
        sorted.shard_lens()
    );

    let mut previous_last: Option<u32> = None;
    for s in sorted.shards() {
        assert!(s.is_sorted()?, "a shard is not sorted");
        if let (Some(last), false) = (previous_last, s.is_empty()) {
            let first = s.slice(0..1)?.to_vec()?[0];
            assert!(last <= first, "shards out of order: {last} > {first}");
        }
        if !s.is_empty() {
            previous_last = Some(s.slice(s.len() - 1..)?.to_vec()?[0]);
        }
    }

    let wide = ShardedVec::from_shards(
        &comm,
        keys.shards()
            .iter()
            .map(|s| s.transform(cuprim::ops::Cast::<u64>::new()))
            .collect::<Result<_, _>>()?,
    )?;
    let t = Instant::now();
    let prefix = wide.scan(Add)?;
    for d in comm.devices() {
        d.synchronize()?;
    }
    println!("scan of u64: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    let total = wide.sum()?;
    let last_shard = prefix.shards().iter().rev().find(|s| !s.is_empty());
    if let Some(s) = last_shard {
        let last = s.slice(s.len() - 1..)?.to_vec()?[0];
        assert_eq!(last, total, "the scan's last element is the sum");
    }
    println!("sum {total}: matches the scan's last element; every shard sorted and in order");
    Ok(())
}
