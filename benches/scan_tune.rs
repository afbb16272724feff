//! Tuning rows of the single-pass scan (feature `scan-tuning`): tile shapes
//! forced through `cuprim::algo::scan::tuning`, A/B in one process, on the
//! in-place f32 inclusive and u32 exclusive sums of `benches/sweep.rs`
//! (whose sizes 2^22 and 2^24 were at or over CUB). Each row is the median
//! of 31 event-timed calls after 5 warm-ups; the shapes of one size run
//! one after another. Output: `tune,op,n,block x items @ min_blocks,us`.
//!
//! Then scan_by_key's chunks (`tuning::set_chunks`) on the inputs of
//! `benches/scan.rs` (u8 keys in short runs with u32 values; u32 keys in
//! runs of 64 with f32 values) and one run of everything (the chunks'
//! adversarial input), at 2^22 to 2^28: the tile kernel (`tiles`) against
//! chunk lengths 2^14 to 2^18 and two tile shapes. Output:
//! `tune,op,n,chunk length or tiles / shape,us`. `CUPRIM_TUNE_ONLY=by_key`
//! skips the scan rows.

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
    if std::env::var("CUPRIM_TUNE_ONLY").is_ok_and(|v| v == "by_key") {
        by_key_chunks(&dev);
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

/// Chunk lengths and shapes of scan_by_key's chunk kernel against the tile kernel.
fn by_key_chunks(dev: &Device) {
    use tuning::Chunks;
    let mut rows: Vec<(String, Chunks)> = vec![(
        "tiles".into(),
        Chunks {
            from: Some(usize::MAX),
            ..Chunks::default()
        },
    )];
    for log in [15] {
        for shape in [None, Some((128, 8, 8)), Some((256, 8, 4)), Some((128, 12, 5)), Some((64, 16, 8))] {
            let name = format!("chunk 2^{log}{}", shape.map_or(String::new(), |(b, i, m)| format!(" {b}x{i}@{m}")));
            rows.push((
                name,
                Chunks {
                    shape,
                    chunk: Some(1 << log),
                    from: Some(0),
                },
            ));
        }
    }
    for log in [22u32, 24, 28] {
        let n = 1usize << log;
        let u = DeviceVec::sequence(dev, n, 7u32, 2_654_435_761).expect("allocating");
        let keys = u.transform(cuprim::ops::Cast::<u8>::new()).expect("keys");
        let keys = keys.transform(Quarter).expect("keys");
        let run_keys = DeviceVec::from_slice(dev, &(0..n).map(|i| (i / 64) as u32).collect::<Vec<_>>()).expect("keys");
        let one_run = DeviceVec::from_slice(dev, &vec![0u32; n]).expect("keys");
        let values = DeviceVec::from_slice(dev, &common::uniform_f32(n)).expect("values");
        for (name, row) in &rows {
            tuning::set_chunks(Some(*row));
            let us = median_us(dev, &mut || u.scan_by_key(&keys, Add).map(drop));
            println!("tune,sbk_u8_u32,{n},{name},{us:.2}");
            let us = median_us(dev, &mut || values.scan_by_key(&run_keys, Add).map(drop));
            println!("tune,sbk_u32_f32_run64,{n},{name},{us:.2}");
            let us = median_us(dev, &mut || values.scan_by_key(&one_run, Add).map(drop));
            println!("tune,sbk_u32_f32_one_run,{n},{name},{us:.2}");
        }
        tuning::set_chunks(None);
    }
}

/// benches/scan.rs's u8 keys: a byte divided by 64.
#[derive(Clone, Copy)]
struct Quarter;
impl cuprim::ops::UnaryOp<u8> for Quarter {
    type Output = u8;
    fn apply(&self, x: u8) -> u8 {
        x / 64
    }
    fn cuda_expr(&self) -> String {
        "(u8)(x / 64)".into()
    }
}
