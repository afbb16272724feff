//! Host segmented sorts: each segment sorted stably by the very key bits
//! the device sorts on (`sort::radix`), segments in parallel.

use crate::algo::sort::radix;
use crate::algo::HOST_MIN_SPLIT;
use crate::element::Element;
use rayon::prelude::*;

/// The disjoint segment slices `offs` (checked: non-decreasing, last within
/// `data`) cuts from `data`.
fn split<'a, T>(data: &'a mut [T], offs: &[u64]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(offs.len().saturating_sub(1));
    let (Some(&first), Some(&last)) = (offs.first(), offs.last()) else {
        return out;
    };
    let mut rest = &mut data[first as usize..last as usize];
    for w in offs.windows(2) {
        let (seg, tail) = rest.split_at_mut((w[1] - w[0]) as usize);
        out.push(seg);
        rest = tail;
    }
    out
}

/// Stable sort of each segment of `keys` by `radix(key, begin, end, descending)`.
pub fn sort_segments<K: Element>(keys: &mut [K], offs: &[u64], begin: u32, end: u32, descending: bool) {
    split(keys, offs).into_par_iter().for_each(|seg| {
        if seg.len() < HOST_MIN_SPLIT {
            seg.sort_by_key(|&k| radix(k, begin, end, descending));
        } else {
            seg.par_sort_by_key(|&k| radix(k, begin, end, descending));
        }
    });
}

/// [`sort_segments`] moving `values` (as long as `keys`) along.
pub fn sort_segments_pairs<K: Element, V: Element>(keys: &mut [K], values: &mut [V], offs: &[u64], begin: u32, end: u32, descending: bool) {
    let ks = split(keys, offs);
    let vs = split(values, offs);
    ks.into_par_iter().zip(vs).for_each(|(k, v)| {
        if k.len() <= 1 {
            return;
        }
        let mut order: Vec<(u64, usize)> = k.iter().enumerate().map(|(i, &x)| (radix(x, begin, end, descending), i)).collect();
        // (radix, index) pairs are distinct, so any sort of them is the
        // stable order by radix.
        if order.len() < HOST_MIN_SPLIT {
            order.sort_unstable();
        } else {
            order.par_sort_unstable();
        }
        let sk: Vec<K> = order.iter().map(|&(_, i)| k[i]).collect();
        let sv: Vec<V> = order.iter().map(|&(_, i)| v[i]).collect();
        k.copy_from_slice(&sk);
        v.copy_from_slice(&sv);
    });
}
