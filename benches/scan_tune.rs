//! Tuning rows of the single-pass scan (feature `scan-tuning`): tile shapes
//! forced through `cuprim::algo::scan::tuning`, A/B in one process, on the
//! in-place f32 inclusive and u32 exclusive sums of `benches/sweep.rs`
//! (whose sizes 2^22 and 2^24 were at or over CUB). Each row is the median
//! of 31 event-timed calls after 5 warm-ups; the shapes of one size run
//! one after another. Output: `tune,op,n,block x items @ min_blocks,us`.

mod common;

use cuprim::algo::scan::tuning;
use cuprim::prelude::*;

const SHAPES: [Option<(u32, u32, u32)>; 7] = [
    None,
    Some((256, 28, 7)),
    Some((256, 32, 7)),
    Some((256, 24, 8)),
    Some((256, 28, 6)),
    Some((256, 32, 6)),
    None,
];

fn label(s: Option<(u32, u32, u32)>) -> String {
    match s {
        None => "default".into(),
        Some((b, i, m)) => format!("{b}x{i}@{m}"),
    }
}

fn median_us(dev: &Device, call: &mut dyn FnMut() -> cuprim::Result<()>) -> f64 {
    for _ in 0..5 {
        common::time_calls(dev, 1, &mut *call);
    }
    let mut t: Vec<f64> = (0..31)
        .map(|_| common::time_calls(dev, 1, &mut *call).as_secs_f64() * 1e6)
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn main() {
    let dev = common::device();
    if !dev.is_cuda() {
        return;
    }
    for log in [16u32, 18, 19, 20, 21, 22, 23, 24, 25, 26] {
        let n = 1usize << log;
        let unit: Vec<f32> = common::hash_u32(n, 1)
            .iter()
            .map(|&h| (h >> 8) as f32 / (1u32 << 24) as f32)
            .collect();
        let keys = common::hash_u32(n, 2);
        let mut f = DeviceVec::from_slice(&dev, &unit).expect("allocating");
        let mut u = DeviceVec::from_slice(&dev, &keys).expect("allocating");
        for s in SHAPES {
            tuning::set(s);
            let us = median_us(&dev, &mut || f.scan_inclusive_in_place(Add));
            println!("tune,scan_incl_f32,{n},{},{us:.2}", label(s));
            let us = median_us(&dev, &mut || u.scan_exclusive_in_place(Add));
            println!("tune,scan_excl_u32,{n},{},{us:.2}", label(s));
        }
        tuning::set(None);
    }
}
