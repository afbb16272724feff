//! The host backend's top-k, selection and partial sort: the same order as
//! the device (ordered key bits, flipped for the smallest; ties to the
//! lower index), by a partial selection then a sort of the k chosen.

use crate::algo::sort::ordered_bits;
use crate::element::Element;
use rayon::prelude::*;

/// The composite an element ranks by: larger comes first.
fn rank<T: Element>(x: T, i: usize, smallest: bool) -> (u64, std::cmp::Reverse<usize>) {
    let o = ordered_bits(x);
    (if smallest { !o } else { o }, std::cmp::Reverse(i))
}

/// The positions of the `k` first elements of `data` in the top-k order,
/// in that order.
pub fn top_k_positions<T: Element>(data: &[T], k: usize, smallest: bool) -> Vec<usize> {
    let mut all: Vec<(u64, std::cmp::Reverse<usize>)> = data
        .par_iter()
        .with_min_len(1 << 14)
        .enumerate()
        .map(|(i, &x)| rank(x, i, smallest))
        .collect();
    if k < all.len() {
        all.select_nth_unstable_by(k, |a, b| b.cmp(a));
        all.truncate(k);
    }
    all.par_sort_unstable_by(|a, b| b.cmp(a));
    all.into_iter().map(|(_, i)| i.0).collect()
}

/// The top `k` of each segment `data[offsets[s]..offsets[s + 1]]`: values
/// and indices within the segment, `k` per segment.
pub fn top_k_segments<T: Element>(data: &[T], offsets: &[usize], k: usize, smallest: bool) -> (Vec<T>, Vec<u32>) {
    let per: Vec<(Vec<T>, Vec<u32>)> = offsets
        .par_windows(2)
        .map(|w| {
            let seg = &data[w[0]..w[1]];
            let pos = top_k_positions(seg, k, smallest);
            (pos.iter().map(|&i| seg[i]).collect(), pos.iter().map(|&i| i as u32).collect())
        })
        .collect();
    per.into_iter().fold((Vec::new(), Vec::new()), |(mut v, mut i), (sv, si)| {
        v.extend(sv);
        i.extend(si);
        (v, i)
    })
}

/// Puts the `k` smallest elements first, in order (ties by position), the
/// others after them in their original order.
pub fn partial_sort<T: Element>(data: &mut [T], k: usize) {
    let first = top_k_positions(data, k, true);
    let mut taken = vec![false; data.len()];
    for &i in &first {
        taken[i] = true;
    }
    let mut out: Vec<T> = first.iter().map(|&i| data[i]).collect();
    out.extend(data.iter().zip(&taken).filter(|(_, &t)| !t).map(|(&x, _)| x));
    data.copy_from_slice(&out);
}
