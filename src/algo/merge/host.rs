//! Host merge: the output cut into chunks by merge path (the device's tile
//! cuts, same tie rule and same clamping), each chunk merged sequentially,
//! the chunks in parallel.

use crate::algo::HOST_MIN_SPLIT;
use rayon::prelude::*;
use std::ops::Range;

/// Outputs per parallel chunk.
const CHUNK: usize = 1 << 16;

/// How many of the first `diag` elements of the stable merge of `a` and
/// `b` come from `a` (the binary search of `kernels/block/merge_path.cuh`).
fn cut<T: Copy>(a: &[T], b: &[T], diag: usize, less: &impl Fn(T, T) -> bool) -> usize {
    let (mut lo, mut hi) = (diag.saturating_sub(b.len()), diag.min(a.len()));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if less(b[diag - 1 - mid], a[mid]) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The ranges of `a` and `b` that make outputs `d0..d1`. For sorted inputs
/// these are the merge-path cuts; otherwise the cut at `d1` is clamped so
/// that the ranges are in bounds and hold `d1 - d0` elements together.
fn ranges<T: Copy>(a: &[T], b: &[T], d0: usize, d1: usize, less: &impl Fn(T, T) -> bool) -> (Range<usize>, Range<usize>) {
    // a0 lies in [d0 - b.len(), min(d0, a.len())], so lo <= hi.
    let a0 = cut(a, b, d0, less);
    let lo = a0.max(d1.saturating_sub(b.len()));
    let hi = (a0 + (d1 - d0)).min(a.len());
    let a1 = cut(a, b, d1, less).max(lo).min(hi);
    (a0..a1, d0 - a0..d1 - a1)
}

/// Sequential stable merge; `out.len() == a.len() + b.len()`.
fn merge_seq<T: Copy>(a: &[T], b: &[T], out: &mut [T], less: &impl Fn(T, T) -> bool) {
    let (mut i, mut j) = (0, 0);
    for o in out.iter_mut() {
        if j >= b.len() || (i < a.len() && !less(b[j], a[i])) {
            *o = a[i];
            i += 1;
        } else {
            *o = b[j];
            j += 1;
        }
    }
}

/// Sequential stable merge of keys with their values; every slice of a
/// side as long as its keys, the outputs as long as both inputs.
fn merge_pairs_seq<K: Copy, V: Copy>(a: (&[K], &[V]), b: (&[K], &[V]), out: (&mut [K], &mut [V]), less: &impl Fn(K, K) -> bool) {
    let (mut i, mut j) = (0, 0);
    for (ok, ov) in out.0.iter_mut().zip(out.1.iter_mut()) {
        if j >= b.0.len() || (i < a.0.len() && !less(b.0[j], a.0[i])) {
            (*ok, *ov) = (a.0[i], a.1[i]);
            i += 1;
        } else {
            (*ok, *ov) = (b.0[j], b.1[j]);
            j += 1;
        }
    }
}

/// The stable merge of `a` and `b` into `out` (`a.len() + b.len()`
/// elements): on ties, `a`'s elements first.
pub fn merge<T: Copy + Send + Sync>(a: &[T], b: &[T], out: &mut [T], less: impl Fn(T, T) -> bool + Sync) {
    debug_assert_eq!(out.len(), a.len() + b.len());
    if out.len() < HOST_MIN_SPLIT {
        return merge_seq(a, b, out, &less);
    }
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let d0 = c * CHUNK;
        let (ra, rb) = ranges(a, b, d0, d0 + chunk.len(), &less);
        merge_seq(&a[ra], &b[rb], chunk, &less);
    });
}

/// [`merge`] of keys, with each key's value following it.
pub fn merge_pairs<K: Copy + Send + Sync, V: Copy + Send + Sync>(
    a: (&[K], &[V]),
    b: (&[K], &[V]),
    out: (&mut [K], &mut [V]),
    less: impl Fn(K, K) -> bool + Sync,
) {
    debug_assert_eq!(out.0.len(), a.0.len() + b.0.len());
    if out.0.len() < HOST_MIN_SPLIT {
        return merge_pairs_seq(a, b, out, &less);
    }
    let chunks = out.0.par_chunks_mut(CHUNK).zip(out.1.par_chunks_mut(CHUNK));
    chunks.enumerate().for_each(|(c, (ok, ov))| {
        let d0 = c * CHUNK;
        let (ra, rb) = ranges(a.0, b.0, d0, d0 + ok.len(), &less);
        let side_a = (&a.0[ra.clone()], &a.1[ra]);
        let side_b = (&b.0[rb.clone()], &b.1[rb]);
        merge_pairs_seq(side_a, side_b, (ok, ov), &less);
    });
}

/// `less` as a total [`Ordering`](std::cmp::Ordering): equivalent
/// elements are `Equal`.
fn ordering<T: Copy>(a: T, b: T, less: &impl Fn(T, T) -> bool) -> std::cmp::Ordering {
    if less(a, b) {
        std::cmp::Ordering::Less
    } else if less(b, a) {
        std::cmp::Ordering::Greater
    } else {
        std::cmp::Ordering::Equal
    }
}

/// Stable sort of `keys` by `less`.
pub fn sort<T: Copy + Send + Sync>(keys: &mut [T], less: impl Fn(T, T) -> bool + Sync) {
    if keys.len() < HOST_MIN_SPLIT {
        keys.sort_by(|&a, &b| ordering(a, b, &less));
    } else {
        keys.par_sort_by(|&a, &b| ordering(a, b, &less));
    }
}

/// Stable sort of `keys` by `less`, each value (`values` as long as
/// `keys`) following its key: an index permutation sorted stably, then
/// applied to both.
pub fn sort_pairs<K: Copy + Send + Sync, V: Copy + Send + Sync>(keys: &mut [K], values: &mut [V], less: impl Fn(K, K) -> bool + Sync) {
    debug_assert_eq!(keys.len(), values.len());
    let mut order: Vec<usize> = (0..keys.len()).collect();
    if keys.len() < HOST_MIN_SPLIT {
        order.sort_by(|&i, &j| ordering(keys[i], keys[j], &less));
    } else {
        order.par_sort_by(|&i, &j| ordering(keys[i], keys[j], &less));
    }
    let sorted_keys: Vec<K> = order.par_iter().with_min_len(HOST_MIN_SPLIT).map(|&i| keys[i]).collect();
    let sorted_values: Vec<V> = order.par_iter().with_min_len(HOST_MIN_SPLIT).map(|&i| values[i]).collect();
    keys.copy_from_slice(&sorted_keys);
    values.copy_from_slice(&sorted_values);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(a: &[(u32, u32)], b: &[(u32, u32)]) -> Vec<(u32, u32)> {
        let mut all: Vec<(u32, u32)> = a.iter().chain(b).copied().collect();
        all.sort_by_key(|x| x.0); // stable: a's before b's among equal keys
        all
    }

    #[test]
    fn chunked_merge_matches_a_stable_sort() {
        let mut x = 7u64;
        let mut next = move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as u32
        };
        for (na, nb) in [(0, 0), (0, 5), (5, 0), (3, 200_000), (150_001, 70_000), (CHUNK, CHUNK + 1)] {
            let mut a: Vec<(u32, u32)> = (0..na).map(|i| (next() % 50, i as u32)).collect();
            let mut b: Vec<(u32, u32)> = (0..nb).map(|i| (next() % 50, (na + i) as u32)).collect();
            a.sort_by_key(|x| x.0);
            b.sort_by_key(|x| x.0);
            let (ka, va): (Vec<u32>, Vec<u32>) = a.iter().copied().unzip();
            let (kb, vb): (Vec<u32>, Vec<u32>) = b.iter().copied().unzip();
            let (mut ok, mut ov) = (vec![0; na + nb], vec![0; na + nb]);
            merge_pairs((&ka, &va), (&kb, &vb), (&mut ok, &mut ov), |x, y| x < y);
            let got: Vec<(u32, u32)> = ok.iter().copied().zip(ov.iter().copied()).collect();
            assert_eq!(got, reference(&a, &b), "na={na} nb={nb}");
            let mut keys = vec![0; na + nb];
            merge(&ka, &kb, &mut keys, |x, y| x < y);
            assert_eq!(keys, ok, "keys alone, na={na} nb={nb}");
        }
    }

    #[test]
    fn unsorted_inputs_neither_panic_nor_lose_length() {
        let a: Vec<u32> = (0..100_000u64).map(|i| (i * 7919 % 1000) as u32).collect();
        let b: Vec<u32> = (0..70_000u64).map(|i| (i * 104_729 % 997) as u32).collect();
        let mut out = vec![0; a.len() + b.len()];
        merge(&a, &b, &mut out, |x, y| x < y);
        // A comparator that is no order at all.
        merge(&a, &b, &mut out, |x, y| (x ^ y) & 1 == 1);
        let (va, vb) = (vec![1u8; a.len()], vec![2u8; b.len()]);
        let mut ov = vec![0u8; out.len()];
        merge_pairs((&a, &va), (&b, &vb), (&mut out, &mut ov), |x, y| (x ^ y) & 1 == 1);
        assert!(ov.iter().all(|&v| v == 1 || v == 2));
    }
}
