//! Host versions of vote, quantify and select_one.

use crate::algo::HOST_MIN_SPLIT;
use rayon::prelude::*;

/// Word `w` holds `pred(src[32 w + b])` in bit `b`; bits past the end are zero.
pub fn vote<T: Copy + Sync, P: Fn(T) -> bool + Sync>(src: &[T], words: &mut [u32], pred: P) {
    words
        .par_iter_mut()
        .with_min_len(HOST_MIN_SPLIT / 32)
        .zip(src.par_chunks(32))
        .for_each(|(word, chunk)| {
            *word = chunk.iter().enumerate().fold(0u32, |acc, (b, &x)| acc | (u32::from(pred(x)) << b));
        });
}

/// min(matches, 2), stopping at the second match: the first match, then
/// any match after it.
pub fn quantify<T: Copy + Sync, P: Fn(T) -> bool + Sync>(src: &[T], pred: P) -> u8 {
    match src.par_iter().position_first(|&x| pred(x)) {
        None => 0,
        Some(i) if src[i + 1..].par_iter().any(|&x| pred(x)) => 2,
        Some(_) => 1,
    }
}
