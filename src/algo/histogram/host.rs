//! Host histogram: per-worker counters over fixed chunks, merged at the end.
//! The bin of a sample comes from the same rule object the device uses
//! (`BinRule::bin` in `bins.rs`), so both backends agree bit for bit.

use crate::algo::HOST_MIN_SPLIT;
use rayon::prelude::*;

const CHUNK: usize = 1 << 16;

/// Counts `bin(x)` for every `x` in `src` into `nb + 1` slots (the last
/// one counts samples whose bin is `nb`: dropped).
pub(crate) fn count<T, B>(src: &[T], nb: usize, bin: B) -> Vec<u64>
where
    T: Copy + Sync,
    B: Fn(T) -> u32 + Sync,
{
    let tally = |mut acc: Vec<u64>, chunk: &[T]| {
        for &x in chunk {
            acc[bin(x) as usize] += 1;
        }
        acc
    };
    if src.len() <= HOST_MIN_SPLIT {
        return tally(vec![0; nb + 1], src);
    }
    src.par_chunks(CHUNK).fold(|| vec![0u64; nb + 1], tally).reduce(
        || vec![0u64; nb + 1],
        |mut a, b| {
            a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
            a
        },
    )
}
