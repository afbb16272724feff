//! Tuning rows of reduce_by_key (feature `bykey-tuning`): one pass, two
//! passes in several tile shapes, and the chunks, A/B in one process, on
//! `dists.rs`'s inputs (u32 keys `i / run` in runs of 1, 4, 64 and 1024 with
//! f32 values; u64 keys in runs of 4 with f64 values) at 2^19 to 2^24
//! elements (or the comma-separated `CUPRIM_TUNE_SIZES`). Each row is the
//! median of 31 event-timed calls of `reduce_by_key_into` after 5 warm-ups.
//! Output: `tune,op,n,mode,us`, the mode `one`, `chunks` or `two`, with the
//! tile shape (threads x items @ blocks per SM) where it is forced.

mod common;

use cuprim::algo::bykey::tuning::{self, Overrides};
use cuprim::prelude::*;
use rayon::prelude::*;

/// (label, overrides) of every mode at `shapes`.
fn modes(shapes: &[(u32, u32, u32)]) -> Vec<(String, Overrides)> {
    let mut m = vec![
        (
            "one".to_string(),
            Overrides {
                two_pass: Some(false),
                from: Some(usize::MAX),
                ..Overrides::default()
            },
        ),
        (
            "chunks".to_string(),
            Overrides {
                two_pass: Some(false),
                from: Some(0),
                ..Overrides::default()
            },
        ),
        (
            "two".to_string(),
            Overrides {
                two_pass: Some(true),
                ..Overrides::default()
            },
        ),
    ];
    for &(b, i, k) in shapes {
        m.push((
            format!("two-{b}x{i}@{k}"),
            Overrides {
                two_pass: Some(true),
                shape: Some((b, i, k)),
                ..Overrides::default()
            },
        ));
        m.push((
            format!("one-{b}x{i}@{k}"),
            Overrides {
                two_pass: Some(false),
                from: Some(usize::MAX),
                shape: Some((b, i, k)),
                ..Overrides::default()
            },
        ));
    }
    m
}

fn main() {
    let dev = common::device();
    if !dev.is_cuda() {
        return;
    }
    let sizes = common::tune_sizes((19..=24).map(|log| 1usize << log).collect());
    let narrow = modes(&[(128, 16, 6), (256, 16, 3), (128, 24, 5), (256, 8, 6)]);
    let wide = modes(&[(128, 8, 4), (128, 16, 2), (256, 8, 2), (128, 12, 3)]);
    for n in sizes {
        let (f32s, f64s) = common::dist_values(n);
        let mut count = DeviceVec::<u64>::zeros(&dev, 1).expect("allocating");
        {
            let vals = DeviceVec::from_slice(&dev, &f32s).expect("allocating");
            let mut ko = DeviceVec::<u32>::zeros(&dev, n).expect("allocating");
            let mut vo = DeviceVec::<f32>::zeros(&dev, n).expect("allocating");
            for run in [1usize, 4, 64, 1024] {
                let keys: Vec<u32> = (0..n).into_par_iter().map(|i| (i / run) as u32).collect();
                let keys = DeviceVec::from_slice(&dev, &keys).expect("allocating");
                for (label, o) in &narrow {
                    tuning::set(*o);
                    let us = common::median_call_us(&dev, &mut || keys.reduce_by_key_into(&vals, Add, &mut ko, &mut vo, &mut count));
                    println!("tune,reduce_by_key_u32_f32_run{run},{n},{label},{us:.2}");
                }
            }
        }
        {
            let vals = DeviceVec::from_slice(&dev, &f64s).expect("allocating");
            let keys: Vec<u64> = (0..n as u64).into_par_iter().map(|i| i / 4).collect();
            let keys = DeviceVec::from_slice(&dev, &keys).expect("allocating");
            let mut ko = DeviceVec::<u64>::zeros(&dev, n).expect("allocating");
            let mut vo = DeviceVec::<f64>::zeros(&dev, n).expect("allocating");
            for (label, o) in &wide {
                tuning::set(*o);
                let us = common::median_call_us(&dev, &mut || keys.reduce_by_key_into(&vals, Add, &mut ko, &mut vo, &mut count));
                println!("tune,reduce_by_key_u64_f64_run4,{n},{label},{us:.2}");
            }
        }
        tuning::set(Overrides::default());
    }
}
