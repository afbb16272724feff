//! Host runs of equal consecutive keys: the same rule as the device
//! (`differ(keys[i - 1], keys[i])` starts a run), each run's aggregate a
//! sequential left fold of its values.

use rayon::prelude::*;

/// The index of the first element of every run, in order.
pub fn heads<K: Copy + Send + Sync, D: Fn(K, K) -> bool + Sync>(keys: &[K], differ: D) -> Vec<usize> {
    (0..keys.len())
        .into_par_iter()
        .filter(|&i| i == 0 || differ(keys[i - 1], keys[i]))
        .collect()
}

/// Each run's `[start, end)`.
fn runs(heads: &[usize], len: usize) -> impl IndexedParallelIterator<Item = (usize, usize)> + '_ {
    heads
        .par_iter()
        .enumerate()
        .map(move |(r, &h)| (h, heads.get(r + 1).copied().unwrap_or(len)))
}

/// `src[i]` for every head `i`.
pub fn at_heads<T: Copy + Send + Sync>(src: &[T], heads: &[usize]) -> Vec<T> {
    heads.par_iter().map(|&i| src[i]).collect()
}

/// The left fold of each run's values.
pub fn reduce_runs<V: Copy + Send + Sync, F: Fn(V, V) -> V + Sync>(values: &[V], heads: &[usize], op: F) -> Vec<V> {
    runs(heads, values.len())
        .map(|(s, e)| values[s + 1..e].iter().fold(values[s], |a, &b| op(a, b)))
        .collect()
}

/// Each run's length.
pub fn lengths(heads: &[usize], len: usize) -> Vec<u64> {
    runs(heads, len).map(|(s, e)| (e - s) as u64).collect()
}
