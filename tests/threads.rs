//! One `Device` used from 8 threads at once (issue 17), including threads
//! that have run nothing on it before: every result is checked against a
//! plain reference.

mod common;

use cuprim::pred::Lt;
use cuprim::prelude::*;
use rand::Rng;

/// One thread's work: uploads, downloads, copy_from_host, scan, reduce,
/// partition, copy_if, sort and a histogram, all on `dev`, all checked.
fn workload(dev: &Device, thread: usize, seed: u64) {
    let (mut r, _) = common::rng(&format!("threads-{thread}-{seed}"));
    for round in 0..6 {
        let n = r.gen_range(0..200_000usize) | (round & 1);
        let ctx = format!("{dev:?} thread {thread} round {round} n={n} seed={seed} (replay: CUPRIM_TEST_SEED={seed})");
        let data: Vec<u32> = (0..n).map(|_| r.gen_range(0..1_000_000)).collect();
        // A fresh buffer filled from the host.
        let mut v = DeviceVec::<u32>::zeros(dev, n).unwrap();
        v.copy_from_host(&data).unwrap();
        assert_eq!(v.to_vec().unwrap(), data, "copy_from_host / to_vec {ctx}");
        let sum = data.iter().fold(0u32, |a, &b| a.wrapping_add(b));
        assert_eq!(v.sum().unwrap(), sum, "sum {ctx}");
        let mut acc = 0u32;
        let want: Vec<u32> = data
            .iter()
            .map(|&x| {
                acc = acc.wrapping_add(x);
                acc
            })
            .collect();
        assert_eq!(v.scan(Add).unwrap().to_vec().unwrap(), want, "scan {ctx}");
        let (lo, hi): (Vec<u32>, Vec<u32>) = data.iter().partition(|&&x| x < 500_000);
        assert_eq!(v.copy_if(Lt(500_000)).unwrap().to_vec().unwrap(), lo, "copy_if {ctx}");
        let mut p = v.to_device_vec().unwrap();
        assert_eq!(p.partition(Lt(500_000)).unwrap(), lo.len(), "partition split {ctx}");
        assert_eq!(p.to_vec().unwrap(), [lo.clone(), hi].concat(), "partition: stable {ctx}");
        let mut s = v.to_device_vec().unwrap();
        s.sort().unwrap();
        let mut sorted = data.clone();
        sorted.sort_unstable();
        assert_eq!(s.to_vec().unwrap(), sorted, "sort {ctx}");
        let h = v.bincount(16).unwrap();
        let mut counts = vec![0u32; 16];
        for &x in &data {
            if x < 16 {
                counts[x as usize] += 1;
            }
        }
        assert_eq!(h.to_vec().unwrap(), counts, "bincount {ctx}");
    }
}

#[test]
fn one_device_from_eight_threads() {
    let (_, seed) = common::rng("threads");
    for dev in common::devices() {
        std::thread::scope(|s| {
            for t in 0..8 {
                let dev = &dev;
                // Fresh OS threads: none has touched the device before.
                s.spawn(move || workload(dev, t, seed));
            }
        });
        // And the device is still fine on this thread afterwards.
        let v = DeviceVec::from_slice(&dev, &[3u32, 1, 2]).unwrap();
        assert_eq!(v.sum().unwrap(), 6, "{dev:?}");
    }
}
