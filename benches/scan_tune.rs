//! Tuning rows of the scan (feature `scan-tuning`): the single pass against
//! the two passes (`tuning::set_two_pass`), A/B in one process, on f32, u32, u64 and f64 sums from 2^20 to 3 x 2^22 elements
//! (or the comma-separated `CUPRIM_TUNE_SIZES`). Each row is the median of
//! 31 event-timed calls after 5 warm-ups; the modes of one size run one
//! after another. Output: `tune,op,n,mode,us`.
//!
//! `CUPRIM_TUNE_ONLY=select`: unique and copy_if of u32 and u64 from 2^20
//! to 2^23 elements, in one pass (register tiles, bulk-copied tiles) and in
//! two.
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

fn main() {
    let dev = common::device();
    if !dev.is_cuda() {
        return;
    }
    if std::env::var("CUPRIM_TUNE_ONLY").is_ok_and(|v| v == "by_key") {
        by_key_chunks(&dev);
        return;
    }
    if std::env::var("CUPRIM_TUNE_ONLY").is_ok_and(|v| v == "select") {
        select_tiles(&dev);
        return;
    }
    let sizes = common::tune_sizes((20..=23).flat_map(|log| [1usize << log, 3 << (log - 1)]).collect());
    for n in sizes {
        scan_rows(&dev, n);
    }
}

/// The single pass (the policy's shape) against the two passes in several shapes, at n elements:
/// f32 inclusive sums in place and into a buffer, u32 exclusive sums in place, u64 and f64
/// inclusive sums into a buffer.
fn scan_rows(dev: &Device, n: usize) {
    let unit: Vec<f32> = common::hash_u32(n, 1)
        .iter()
        .map(|&h| (h >> 8) as f32 / (1u32 << 24) as f32)
        .collect();
    let keys = common::hash_u32(n, 2);
    let wide: Vec<u64> = keys.iter().map(|&k| k as u64 * 3).collect();
    let wide_f: Vec<f64> = unit.iter().map(|&x| x as f64).collect();
    let mut f = DeviceVec::from_slice(dev, &unit).expect("allocating");
    let mut fo = DeviceVec::<f32>::zeros(dev, n).expect("allocating");
    let mut u = DeviceVec::from_slice(dev, &keys).expect("allocating");
    let w = DeviceVec::from_slice(dev, &wide).expect("allocating");
    let mut wo = DeviceVec::<u64>::zeros(dev, n).expect("allocating");
    let d = DeviceVec::from_slice(dev, &wide_f).expect("allocating");
    let mut dout = DeviceVec::<f64>::zeros(dev, n).expect("allocating");
    // (label, the two passes forced or not)
    let modes = [
        ("single", Some(false)),
        ("default", None),
        ("two", Some(true)),
        ("single_again", Some(false)),
        ("two_again", Some(true)),
    ];
    for (label, two) in modes {
        tuning::set_two_pass(two);
        let us = common::median_call_us(dev, &mut || f.scan_inclusive_in_place(Add));
        println!("tune,scan_incl_f32_in_place,{n},{label},{us:.2}");
        let us = common::median_call_us(dev, &mut || f.scan_inclusive_into(Add, &mut fo));
        println!("tune,scan_incl_f32_into,{n},{label},{us:.2}");
        let us = common::median_call_us(dev, &mut || u.scan_exclusive_in_place(Add));
        println!("tune,scan_excl_u32_in_place,{n},{label},{us:.2}");
        let us = common::median_call_us(dev, &mut || w.scan_inclusive_into(Add, &mut wo));
        println!("tune,scan_incl_u64_into,{n},{label},{us:.2}");
        let us = common::median_call_us(dev, &mut || d.scan_inclusive_into(Add, &mut dout));
        println!("tune,scan_incl_f64_into,{n},{label},{us:.2}");
    }
    tuning::set_two_pass(None);
}

/// unique_into and copy_if_into (half kept) of u32 and u64 from 2^20 to 2^23 elements: the
/// default, the single pass in register tiles (`select.cu`) and in bulk-copied tiles
/// (`select_bulk.cu`, sm_90), and the two passes.
fn select_tiles(dev: &Device) {
    // (label, bulk-copy threshold forced, two passes forced)
    let modes = [
        ("default", None, None),
        ("single_registers", Some(usize::MAX), Some(false)),
        ("single_bulk", Some(0), Some(false)),
        ("two", None, Some(true)),
        ("default_again", None, None),
    ];
    for n in [1usize << 20, 1 << 21, 3 << 20, 1 << 22, 3 << 21, 1 << 23] {
        let distinct: Vec<u32> = (0..n as u32).collect();
        let runs: Vec<u32> = (0..n as u32).map(|i| i / 4).collect();
        let d32 = DeviceVec::from_slice(dev, &distinct).expect("keys");
        let r32 = DeviceVec::from_slice(dev, &runs).expect("keys");
        let d64 = DeviceVec::from_slice(dev, &distinct.iter().map(|&x| x as u64).collect::<Vec<_>>()).expect("keys");
        let mut o32 = DeviceVec::<u32>::zeros(dev, n).expect("allocating");
        let mut o64 = DeviceVec::<u64>::zeros(dev, n).expect("allocating");
        let mut count = DeviceVec::<u64>::zeros(dev, 1).expect("allocating");
        let half = cuprim::pred::Lt(n as u32 / 2);
        let half64 = cuprim::pred::Lt(n as u64 / 2);
        for (label, bulk, two) in modes {
            tuning::set_select_bulk_over(bulk);
            tuning::set_select_two_pass(two);
            let us = common::median_call_us(dev, &mut || d32.unique_into(&mut o32, &mut count));
            println!("tune,unique_u32_distinct,{n},{label},{us:.2}");
            let us = common::median_call_us(dev, &mut || r32.unique_into(&mut o32, &mut count));
            println!("tune,unique_u32_runs4,{n},{label},{us:.2}");
            let us = common::median_call_us(dev, &mut || d32.copy_if_into(half, &mut o32, &mut count));
            println!("tune,copy_if_u32_half,{n},{label},{us:.2}");
            let us = common::median_call_us(dev, &mut || d64.unique_into(&mut o64, &mut count));
            println!("tune,unique_u64_distinct,{n},{label},{us:.2}");
            let us = common::median_call_us(dev, &mut || d64.copy_if_into(half64, &mut o64, &mut count));
            println!("tune,copy_if_u64_half,{n},{label},{us:.2}");
        }
        tuning::set_select_bulk_over(None);
        tuning::set_select_two_pass(None);
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
            let us = common::median_call_us(dev, &mut || u.scan_by_key(&keys, Add).map(drop));
            println!("tune,sbk_u8_u32,{n},{name},{us:.2}");
            let us = common::median_call_us(dev, &mut || values.scan_by_key(&run_keys, Add).map(drop));
            println!("tune,sbk_u32_f32_run64,{n},{name},{us:.2}");
            let us = common::median_call_us(dev, &mut || values.scan_by_key(&one_run, Add).map(drop));
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
