//! Host stream compaction.

use rayon::prelude::*;

/// The elements with `pred(x)`, in order.
pub fn copy_if<T: Copy + Send + Sync, P: Fn(T) -> bool + Sync>(src: &[T], pred: P) -> Vec<T> {
    src.par_iter().copied().filter(|&x| pred(x)).collect()
}

/// Stable partition in place; returns the number of elements with `pred(x)`.
pub fn partition<T: Copy + Send + Sync, P: Fn(T) -> bool + Sync>(data: &mut [T], pred: P) -> usize {
    let (yes, no): (Vec<T>, Vec<T>) = data.par_iter().copied().partition(|&x| pred(x));
    data[..yes.len()].copy_from_slice(&yes);
    data[yes.len()..].copy_from_slice(&no);
    yes.len()
}
