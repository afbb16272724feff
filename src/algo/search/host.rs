//! The host twins of the search kernels: the same answers by
//! `partition_point`, queries in parallel.

use super::plan::Mode;
use crate::algo::HOST_MIN_SPLIT;
use crate::cmp::Comparator;
use crate::element::Element;
use rayon::prelude::*;

/// The answer for one query `x` in `sorted` (all ones: not found).
pub fn answer<T: Element, C: Comparator<T>>(sorted: &[T], x: T, cmp: &C, mode: Mode) -> u64 {
    match mode {
        Mode::Lower => sorted.partition_point(|&e| cmp.less(e, x)) as u64,
        Mode::Upper => sorted.partition_point(|&e| !cmp.less(x, e)) as u64,
        Mode::Exact => {
            let at = sorted.partition_point(|&e| cmp.less(e, x));
            if at < sorted.len() && !cmp.less(x, sorted[at]) {
                at as u64
            } else {
                u64::MAX
            }
        }
    }
}

/// Every query's answer.
pub fn search<T: Element, C: Comparator<T>>(sorted: &[T], queries: &[T], cmp: &C, mode: Mode) -> Vec<u64> {
    queries
        .par_iter()
        .with_min_len(HOST_MIN_SPLIT)
        .map(|&x| answer(sorted, x, cmp, mode))
        .collect()
}

/// The least i >= 1 with `x[i]` before `x[i - 1]`, or the length.
pub fn sorted_until<T: Element, C: Comparator<T>>(x: &[T], cmp: &C) -> usize {
    if x.len() < 2 {
        return x.len();
    }
    (1..x.len())
        .into_par_iter()
        .with_min_len(HOST_MIN_SPLIT)
        .find_first(|&i| cmp.less(x[i], x[i - 1]))
        .unwrap_or(x.len())
}
