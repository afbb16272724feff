//! Host radix-order sorts: stable sorts by the very key bits the device
//! sorts on, so both backends give the same permutation.

use crate::algo::HOST_MIN_SPLIT;
use crate::element::{Element, Kind};
use rayon::prelude::*;

/// The key's bits mapped so that unsigned comparison is the key order:
/// unsigned integers as they are, signed integers with the sign bit
/// flipped, floats (`total_cmp` order) with every bit flipped when the sign
/// bit is set, else the sign bit set.
pub fn ordered_bits<K: Element>(k: K) -> u64 {
    let b = bytemuck::bytes_of(&k);
    let (u, width) = match b.len() {
        1 => (b[0] as u64, 8),
        2 => (u16::from_ne_bytes([b[0], b[1]]) as u64, 16),
        4 => (u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as u64, 32),
        _ => (u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]), 64),
    };
    let sign = 1u64 << (width - 1);
    let all = u64::MAX >> (64 - width);
    match K::KIND {
        Kind::Unsigned => u,
        Kind::Signed => u ^ sign,
        Kind::Float if u & sign != 0 => !u & all,
        Kind::Float => u | sign,
    }
}

/// What a key sorts by: bits `begin..end` of [`ordered_bits`], inverted
/// for a descending sort.
pub fn radix<K: Element>(k: K, begin: u32, end: u32, descending: bool) -> u64 {
    let o = if descending { !ordered_bits(k) } else { ordered_bits(k) };
    let width = end - begin;
    let mask = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
    (o >> begin) & mask
}

/// Stable sort of `keys` by [`radix`].
pub fn sort_keys<K: Element>(keys: &mut [K], begin: u32, end: u32, descending: bool) {
    if keys.len() < HOST_MIN_SPLIT {
        keys.sort_by_key(|&k| radix(k, begin, end, descending));
    } else {
        keys.par_sort_by_key(|&k| radix(k, begin, end, descending));
    }
}

/// Stable sort of `keys` by [`radix`], moving `values` (as long as `keys`)
/// along.
pub fn sort_pairs<K: Element, V: Element>(keys: &mut [K], values: &mut [V], begin: u32, end: u32, descending: bool) {
    let mut order: Vec<(u64, usize)> = keys
        .par_iter()
        .with_min_len(HOST_MIN_SPLIT)
        .enumerate()
        .map(|(i, &k)| (radix(k, begin, end, descending), i))
        .collect();
    // (radix, index) pairs are distinct, so any sort of them is the stable
    // order by radix.
    order.par_sort_unstable();
    let sorted_keys: Vec<K> = order.par_iter().with_min_len(HOST_MIN_SPLIT).map(|&(_, i)| keys[i]).collect();
    let sorted_values: Vec<V> = order.par_iter().with_min_len(HOST_MIN_SPLIT).map(|&(_, i)| values[i]).collect();
    keys.copy_from_slice(&sorted_keys);
    values.copy_from_slice(&sorted_values);
}

/// The key whose [`ordered_bits`] are `o` (the inverse).
pub fn from_ordered_bits<K: Element>(o: u64) -> K {
    let width = 8 * std::mem::size_of::<K>() as u32;
    let sign = 1u64 << (width - 1);
    let all = u64::MAX >> (64 - width);
    let u = match K::KIND {
        Kind::Unsigned => o,
        Kind::Signed => o ^ sign,
        Kind::Float if o & sign != 0 => o ^ sign,
        Kind::Float => !o & all,
    };
    let bytes = u.to_le_bytes();
    bytemuck::pod_read_unaligned(&bytes[..width as usize / 8])
}
