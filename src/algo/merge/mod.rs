//! Merging two sorted sequences: [`merge`](MergeOps::merge),
//! [`merge_by`](MergeOps::merge_by) (any [`Comparator`]), and the key-value
//! forms [`merge_by_key`](MergeOps::merge_by_key) and
//! [`merge_by_key_by`](MergeOps::merge_by_key_by).
//!
//! # Semantics
//! Both inputs must be sorted by the comparator ([`Less`] for `merge` and
//! `merge_by_key`: the radix sort's order, `total_cmp` for floats). The
//! output holds every element of both, sorted, and the merge is **stable**:
//! among equivalent elements those of `self` come before those of the
//! other input, and each input keeps its own order, as in Thrust's `merge`
//! or a stable sort of the two concatenated. Values follow their keys.
//!
//! ```
//! # use cuprim::prelude::*;
//! let dev = Device::default()?;
//! let a = DeviceVec::from_slice(&dev, &[-0.0f32, 1.0, 1.0, f32::NAN])?;
//! let b = DeviceVec::from_slice(&dev, &[f32::NEG_INFINITY, 0.0, 1.0])?;
//! let m = a.merge(&b)?.to_vec()?;
//! assert_eq!(m[..6], [f32::NEG_INFINITY, -0.0, 0.0, 1.0, 1.0, 1.0]);
//! assert!(m[1].is_sign_negative() && m[6].is_nan());
//! # Ok::<(), cuprim::Error>(())
//! ```
//!
//! Inputs that are not sorted by the comparator (or a comparator that is
//! not a strict weak order) give an unspecified result: the output has the
//! right length and holds elements of the inputs, in no promised order
//! (on CUDA, not necessarily each element once). Nothing outside the
//! inputs and the output is read or written, and nothing panics.
//!
//! # Algorithm
//! On CUDA, merge path (Odeh, Green, Mwassi, Shmueli & Birk, 2012; Green,
//! McColl & Bader, 2012): a first kernel cuts the output into tiles of a
//! few thousand elements by a binary search along each tile boundary's
//! diagonal; a second merges each tile in one block through shared memory
//! (`kernels/merge/merge.cu`). Both inputs are read once and the output is
//! written once, with 8 bytes of scratch per tile. An empty input makes the
//! merge a copy. The host backend cuts the output the same way into
//! chunks that rayon merges in parallel.
//!
//! The expression forms ([`ExprOps::merge_with`](crate::expr::ExprOps::merge_with),
//! [`ExprOps::merge_by_key_with`](crate::expr::ExprOps::merge_by_key_with)
//! and their `_by` forms) read their inputs, keys and values, in place
//! (`kernels/merge/merge_expr.cu`: the same tiles staged from the
//! expressions' loads); four plain buffers by key take the kernels above.
//!
//! The same kernels' module holds the stable merge sort behind
//! [`sort_by`](crate::algo::sort::SortMutOps::sort_by) and
//! [`sort_pairs_by`](crate::algo::sort::SortMutOps::sort_pairs_by): one
//! block sorts each tile (registers, then merges in shared memory), then
//! `ceil(log2(tiles))` passes merge pairs of sorted runs of one tile, two
//! tiles, ..., each one partition launch (the tiles' merge-path cuts
//! within their pairs) and one merge launch, ping-ponging between the
//! caller's buffers and device scratch of `n` keys (and values). The
//! built-in [`Less`] and [`Greater`] take the radix sort instead (the same
//! order and the same result, bit for bit). The host backend runs Rust's
//! stable sort. The sort of an input expression,
//! [`ExprOps::sorted_by`](crate::expr::ExprOps::sorted_by) and
//! [`sorted_pairs_by`](crate::expr::ExprOps::sorted_pairs_by), runs the
//! same passes after a tile kernel of its own that reads each tile from
//! the expression (`kernels/merge/sort_expr.cu`): no collected copy.
//!
//! On sm_80 and later the tile kernels copy 4-byte keys alone from global
//! to shared memory with `cp.async` (no registers held while the loads are
//! in flight), which lets them run tiles of 7680 (512 x 15) at 4 blocks per
//! SM, CUB's `DeviceMerge` shape.

pub(crate) mod expr;
pub(crate) mod host;
pub(crate) mod plan;
mod set;
mod sort;
pub(crate) mod sort_expr;

pub(crate) use set::SetOp;
pub use set::SetOps;

use super::{same_device, same_len};
use crate::algo::sort::SortOptions;
use crate::cmp::{Comparator, Greater, Less};
use crate::device::{CudaDevice, Ptr};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::vec::raw::{Mem, MemMut, SealedMut as _};
use crate::vec::DeviceDataMut;
use crate::vec::{DeviceData, DeviceVec};
use plan::{Merge, Side};
use std::any::TypeId;

/// Merges of sorted sequences. In [`prelude`](crate::prelude).
pub trait MergeOps<K: Element>: DeviceData<K> {
    /// The stable merge of `self` and `other`, both sorted ascending
    /// ([`Less`]): `self.len() + other.len()` elements, those of `self`
    /// first among equal ones.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[1u32, 3, 5, 7])?;
    /// let b = DeviceVec::from_slice(&dev, &[2u32, 3, 8])?;
    /// assert_eq!(a.merge(&b)?.to_vec()?, vec![1, 2, 3, 3, 5, 7, 8]);
    /// // Views work too.
    /// assert_eq!(a.slice(2..)?.merge(&b.slice(..1)?)?.to_vec()?, vec![2, 5, 7]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn merge(&self, other: &impl DeviceData<K>) -> Result<DeviceVec<K>> {
        self.merge_by(other, Less)
    }

    /// The stable merge of `self` and `other`, both sorted by `cmp`:
    /// among equivalent elements, those of `self` come first.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// cuprim::comparator! {
    ///     /// By the last decimal digit only.
    ///     pub struct LastDigit for u32 {
    ///         rust: |a, b| a % 10 < b % 10,
    ///         cuda: "a % 10 < b % 10",
    ///     }
    /// }
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[9i64, 4, -2])?;
    /// let b = DeviceVec::from_slice(&dev, &[5i64, 4, 4])?;
    /// assert_eq!(a.merge_by(&b, Greater)?.to_vec()?, vec![9, 5, 4, 4, 4, -2]);
    /// let a = DeviceVec::from_slice(&dev, &[10u32, 21, 31])?;
    /// let b = DeviceVec::from_slice(&dev, &[40u32, 1, 7])?;
    /// // Equivalent keys (same last digit): a's first.
    /// assert_eq!(a.merge_by(&b, LastDigit)?.to_vec()?, vec![10, 40, 21, 31, 1, 7]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn merge_by<C: Comparator<K>>(&self, other: &impl DeviceData<K>, cmp: C) -> Result<DeviceVec<K>> {
        same_device("merge", self.device(), other.device())?;
        let n = out_len("merge", self.len(), other.len())?;
        let mut out = DeviceVec::alloc_uninit(self.device(), n)?;
        merge_keys_into(self.mem(), other.mem(), out.mem_mut(), &cmp)?;
        Ok(out)
    }

    /// The stable merge of keys `self` (with `values`) and `other_keys`
    /// (with `other_values`), both sorted ascending ([`Less`]); each value
    /// follows its key. Returns the merged keys and values. Each input's
    /// values must be as many as its keys, else
    /// [`Error::LengthMismatch`].
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let ka = DeviceVec::from_slice(&dev, &[1u32, 2, 2])?;
    /// let va = DeviceVec::from_slice(&dev, &[b'a', b'b', b'c'])?;
    /// let kb = DeviceVec::from_slice(&dev, &[2u32, 3])?;
    /// let vb = DeviceVec::from_slice(&dev, &[b'x', b'y'])?;
    /// let (k, v) = ka.merge_by_key(&va, &kb, &vb)?;
    /// assert_eq!(k.to_vec()?, vec![1, 2, 2, 2, 3]);
    /// assert_eq!(v.to_vec()?, b"abcxy".to_vec());
    /// assert!(matches!(ka.merge_by_key(&vb, &kb, &vb), Err(cuprim::Error::LengthMismatch { .. })));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn merge_by_key<V: Element>(
        &self,
        values: &impl DeviceData<V>,
        other_keys: &impl DeviceData<K>,
        other_values: &impl DeviceData<V>,
    ) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        self.merge_by_key_by(values, other_keys, other_values, Less)
    }

    /// [`merge_by_key`](MergeOps::merge_by_key) with keys sorted by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let ka = DeviceVec::from_slice(&dev, &[0.5f64, -1.0])?;
    /// let va = DeviceVec::from_slice(&dev, &[0u64, 1])?;
    /// let kb = DeviceVec::from_slice(&dev, &[2.0f64, 0.5, 0.5])?;
    /// let vb = DeviceVec::from_slice(&dev, &[2u64, 3, 4])?;
    /// let (k, v) = ka.merge_by_key_by(&va, &kb, &vb, Greater)?;
    /// assert_eq!(k.to_vec()?, vec![2.0, 0.5, 0.5, 0.5, -1.0]);
    /// assert_eq!(v.to_vec()?, vec![2, 0, 3, 4, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn merge_by_key_by<V: Element, C: Comparator<K>>(
        &self,
        values: &impl DeviceData<V>,
        other_keys: &impl DeviceData<K>,
        other_values: &impl DeviceData<V>,
        cmp: C,
    ) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        const OP: &str = "merge_by_key";
        let device = self.device();
        same_device(OP, device, values.device())?;
        same_device(OP, device, other_keys.device())?;
        same_device(OP, device, other_values.device())?;
        same_len(OP, self.len(), values.len())?;
        same_len(OP, other_keys.len(), other_values.len())?;
        let n = out_len(OP, self.len(), other_keys.len())?;
        let mut out_keys = DeviceVec::alloc_uninit(device, n)?;
        let mut out_values = DeviceVec::alloc_uninit(device, n)?;
        merge_pairs_into(
            (self.mem(), values.mem()),
            (other_keys.mem(), other_values.mem()),
            (out_keys.mem_mut(), out_values.mem_mut()),
            &cmp,
        )?;
        Ok((out_keys, out_values))
    }
}

impl<K: Element, D: DeviceData<K> + ?Sized> MergeOps<K> for D {}

/// The output length `a + b`, or an error where it does not fit a `usize`.
fn out_len(op: &'static str, a: usize, b: usize) -> Result<usize> {
    a.checked_add(b)
        .ok_or_else(|| Error::InvalidArgument(format!("{op}: {a} + {b} elements do not fit in memory")))
}

/// Elements per tile of the device merge of `len` keys `K` (output
/// length; with values `V` when `pairs`) on sm_80 and later, so that tests
/// can probe the tile edges. Not a stable API.
///
/// ```
/// let tile = cuprim::algo::merge::tile_elements::<u32, u8>(false, 1000);
/// assert!(tile >= 1);
/// ```
#[doc(hidden)]
pub fn tile_elements<K: Element, V: Element>(pairs: bool, len: usize) -> usize {
    plan::tile_elements::<K, V>(0, pairs, len as u64)
}

#[doc(hidden)]
pub use plan::{
    FUSED_MERGE_TILES_BELOW, FUSED_SORT_TILES_BELOW, SMALL_TILES_BELOW, SORT_TILES_4352_BELOW, WARP_CUTS_SORT_TILES_BELOW,
    WARP_PARTITION_TILES,
};

fn merge_keys_into<K: Element, C: Comparator<K>>(a: Mem<'_, K>, b: Mem<'_, K>, out: MemMut<'_, K>, cmp: &C) -> Result<()> {
    match (a, b, out) {
        (Mem::Host(a), Mem::Host(b), MemMut::Host(out)) => {
            host::merge(a, b, out, |x, y| cmp.less(x, y));
            Ok(())
        }
        (Mem::Cuda { ptr: a, len: na, .. }, Mem::Cuda { ptr: b, len: nb, .. }, MemMut::Cuda { dev, ptr: out, len, .. }) => {
            let (a, b, out) = (Ptr::<K>::from_raw(a), Ptr::<K>::from_raw(b), Ptr::<K>::from_raw(out));
            // One side empty: the other is the merge.
            if nb == 0 {
                return dev.copy(out, a, na as u64, "merge");
            }
            if na == 0 {
                return dev.copy(out, b, nb as u64, "merge");
            }
            let side = |keys, len: usize| Side {
                keys,
                values: Ptr::<K>::null(),
                len: len as u64,
            };
            Merge::<K, K, C>::keys(dev.arch(), cmp, len as u64).run(dev, side(a, na), side(b, nb), side(out, len))
        }
        _ => Err(Error::DeviceMismatch { op: "merge" }),
    }
}

fn merge_pairs_into<K: Element, V: Element, C: Comparator<K>>(
    a: (Mem<'_, K>, Mem<'_, V>),
    b: (Mem<'_, K>, Mem<'_, V>),
    out: (MemMut<'_, K>, MemMut<'_, V>),
    cmp: &C,
) -> Result<()> {
    match (a, b, out) {
        ((Mem::Host(ka), Mem::Host(va)), (Mem::Host(kb), Mem::Host(vb)), (MemMut::Host(ok), MemMut::Host(ov))) => {
            host::merge_pairs((ka, va), (kb, vb), (ok, ov), |x, y| cmp.less(x, y));
            Ok(())
        }
        (
            (Mem::Cuda { ptr: ka, len: na, .. }, Mem::Cuda { ptr: va, .. }),
            (Mem::Cuda { ptr: kb, len: nb, .. }, Mem::Cuda { ptr: vb, .. }),
            (MemMut::Cuda { dev, ptr: ok, len, .. }, MemMut::Cuda { ptr: ov, .. }),
        ) => {
            let side = |keys, values, len: usize| Side {
                keys: Ptr::<K>::from_raw(keys),
                values: Ptr::<V>::from_raw(values),
                len: len as u64,
            };
            cuda_merge_pairs(dev, side(ka, va, na), side(kb, vb, nb), side(ok, ov, len), cmp)
        }
        _ => Err(Error::DeviceMismatch { op: "merge_by_key" }),
    }
}

/// The key-value merge of buffers `a` and `b` into `out` on `dev`
/// (`merge_by_key`'s kernels; also what `merge_by_key_with` of four plain
/// buffers runs): queues the launches, or a copy of one side where the
/// other is empty.
pub(crate) fn cuda_merge_pairs<K: Element, V: Element, C: Comparator<K>>(
    dev: &CudaDevice,
    a: Side<K, V>,
    b: Side<K, V>,
    out: Side<K, V>,
    cmp: &C,
) -> Result<()> {
    // One side empty: the other is the merge.
    for (only, empty) in [(a, b), (b, a)] {
        if empty.len == 0 {
            dev.copy(out.keys, only.keys, only.len, "merge_by_key")?;
            return dev.copy(out.values, only.values, only.len, "merge_by_key");
        }
    }
    Merge::<K, V, C>::pairs(dev.arch(), cmp, out.len).run(dev, a, b, out)
}

/// The device stable merge sort's tile for `len` keys (`pairs`: with
/// values `V`) on sm_80 and later, for tests that probe the tile edges.
/// Not a stable API.
///
/// ```
/// assert!(cuprim::algo::merge::sort_tile_elements::<f32, u32>(true, 1000) >= 1);
/// ```
#[doc(hidden)]
pub fn sort_tile_elements<K: Element, V: Element>(pairs: bool, len: usize) -> usize {
    plan::sort_tile_elements::<K, V>(0, pairs, len as u64)
}

/// The radix sort's options when `C` is the built-in [`Less`] (ascending)
/// or [`Greater`] (descending), else `None`. Their orders are the radix
/// sort's key order exactly (`total_cmp` for floats: `-0.0` before `+0.0`,
/// NaNs by sign and payload; [`Greater`] its exact reverse), both sorts are
/// stable and neither changes a key's bits, so the stable radix sort gives
/// the merge sort's result bit for bit, NaNs and signed zeros included,
/// values too (what Thrust does for its built-in orders).
pub(crate) fn radix_order<K: Element, C: Comparator<K>>() -> Option<SortOptions> {
    let c = TypeId::of::<C>();
    if c == TypeId::of::<Less>() {
        Some(SortOptions::new())
    } else if c == TypeId::of::<Greater>() {
        Some(SortOptions::new().descending())
    } else {
        None
    }
}

/// `sort_by`: the stable sort of `keys` by `cmp`, on either backend.
pub(crate) fn sort_by<K: Element, C: Comparator<K>, D: DeviceDataMut<K> + ?Sized>(keys: &mut D, cmp: &C) -> Result<()> {
    match keys.mem_mut() {
        MemMut::Host(k) => {
            host::sort(k, |x, y| cmp.less(x, y));
            Ok(())
        }
        MemMut::Cuda { dev, ptr, len, .. } => {
            if len < 2 {
                return Ok(());
            }
            if let Some(opts) = radix_order::<K, C>() {
                return crate::algo::sort::sort_device_with::<K, K>(dev, Ptr::from_raw(ptr), None, len, &opts);
            }
            #[allow(unused_mut)]
            let mut plan = Merge::<K, K, C>::sort_keys(dev.arch(), cmp, len as u64);
            #[cfg(feature = "merge-tuning")]
            plan::tune_sort_tile(&mut plan.policy);
            plan.sort(dev, Ptr::from_raw(ptr), Ptr::null(), len as u64)
        }
    }
}

/// `sort_pairs_by`: the stable sort of `keys` by `cmp` with `values`
/// following, on either backend; nothing changes on an argument error.
pub(crate) fn sort_pairs_by<K: Element, V: Element, C: Comparator<K>, D: DeviceDataMut<K> + ?Sized>(
    keys: &mut D,
    values: &mut (impl DeviceDataMut<V> + ?Sized),
    cmp: &C,
) -> Result<()> {
    const OP: &str = "sort_pairs_by";
    same_device(OP, keys.device(), values.device())?;
    same_len(OP, keys.len(), values.len())?;
    match (keys.mem_mut(), values.mem_mut()) {
        (MemMut::Host(k), MemMut::Host(v)) => {
            host::sort_pairs(k, v, |x, y| cmp.less(x, y));
            Ok(())
        }
        (MemMut::Cuda { dev, ptr, len, .. }, MemMut::Cuda { ptr: vptr, .. }) => {
            if len < 2 {
                return Ok(());
            }
            if let Some(opts) = radix_order::<K, C>() {
                return crate::algo::sort::sort_device_with::<K, V>(dev, Ptr::from_raw(ptr), Some(Ptr::from_raw(vptr)), len, &opts);
            }
            Merge::<K, V, C>::sort_pairs(dev.arch(), cmp, len as u64).sort(dev, Ptr::from_raw(ptr), Ptr::from_raw(vptr), len as u64)
        }
        _ => Err(Error::DeviceMismatch { op: OP }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_length_overflow_is_an_error() {
        assert_eq!(out_len("merge", 3, 4).ok(), Some(7));
        assert!(matches!(out_len("merge", usize::MAX, 1), Err(Error::InvalidArgument(_))));
    }
}
