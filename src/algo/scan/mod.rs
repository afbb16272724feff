//! Scans: `scan` (inclusive), `scan_inclusive`, `scan_exclusive`, their
//! forms into a caller's buffer and in place, for any [`Monoid`] —
//! commutativity is not needed, the order of the elements is kept. Tuple
//! expressions scan with [`ExprOps::scan_unzip`](crate::expr::ExprOps::scan_unzip)
//! and its relatives, each field into its own vector.
//!
//! # Floating point
//! The device scans each tile as a tree (per thread, per warp, per block)
//! and chains tiles through a look-back, so a float scan differs from a
//! sequential one by rounding: the error of element `i` is bounded by about
//! `(log2(tile) + i / tile) * eps * sum(|x[..=i]|)`. Tiles chain in a fixed
//! left-to-right order, so float results are bit-identical run to run; see
//! [`Device::set_deterministic`](crate::Device::set_deterministic) for the
//! mode that gives that up (no faster on an H100 at the sizes measured). Integer, min / max and bitwise
//! scans are exact either way. The host backend scans sequentially.

mod chunks;
pub(crate) mod host;
pub(crate) mod plan;
#[cfg(feature = "scan-tuning")]
#[doc(hidden)]
pub use plan::tuning;

use crate::device::Ptr;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::expr::node::Node;
use crate::ops::Monoid;
use crate::vec::raw::{Mem, MemMut, Sealed as _, SealedMut as _};
use crate::vec::{DeviceData, DeviceDataMut, DeviceVec};
use chunks::ScanByKeyChunks;
use plan::{Scan, ScanByKey};

/// Scans into a new vector. In [`prelude`](crate::prelude).
pub trait ScanOps<T: Element>: DeviceData<T> {
    /// Inclusive scan: `out[i] = x[0] op x[1] op ... op x[i]`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1u32, 2, 3, 4])?;
    /// assert_eq!(v.scan(Add)?.to_vec()?, vec![1, 3, 6, 10]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn scan<Op: Monoid<T>>(&self, op: Op) -> Result<DeviceVec<T>> {
        self.scan_inclusive(op)
    }

    /// Inclusive scan (same as [`scan`](ScanOps::scan)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[3i32, 1, 4, 1, 5])?;
    /// assert_eq!(v.scan_inclusive(Max)?.to_vec()?, vec![3, 3, 4, 4, 5]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn scan_inclusive<Op: Monoid<T>>(&self, op: Op) -> Result<DeviceVec<T>> {
        let mut out = DeviceVec::alloc_uninit(self.device(), self.len())?;
        scan_into(self.mem(), out.mem_mut(), &op, false)?;
        Ok(out)
    }

    /// Exclusive scan: `out[0]` is the identity, `out[i] = x[0] op ... op x[i-1]`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1u64, 2, 3, 4])?;
    /// assert_eq!(v.scan_exclusive(Add)?.to_vec()?, vec![0, 1, 3, 6]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn scan_exclusive<Op: Monoid<T>>(&self, op: Op) -> Result<DeviceVec<T>> {
        let mut out = DeviceVec::alloc_uninit(self.device(), self.len())?;
        scan_into(self.mem(), out.mem_mut(), &op, true)?;
        Ok(out)
    }

    /// Inclusive scan into a buffer the caller already has (CUB's `d_out`):
    /// no allocation. `out` must be as long as `self`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[1u32, 2, 3, 4])?;
    /// let mut out = DeviceVec::<u32>::zeros(&dev, 4)?;
    /// v.scan_inclusive_into(Add, &mut out)?;
    /// assert_eq!(out.to_vec()?, vec![1, 3, 6, 10]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn scan_inclusive_into<Op: Monoid<T>>(&self, op: Op, out: &mut impl DeviceDataMut<T>) -> Result<()> {
        scan_to("scan_inclusive_into", self, out, &op, false)
    }

    /// Exclusive scan into a buffer the caller already has: no allocation.
    /// `out` must be as long as `self`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[3i64, 1, 4])?;
    /// let mut out = DeviceVec::<i64>::zeros(&dev, 3)?;
    /// v.scan_exclusive_into(Max, &mut out)?;
    /// assert_eq!(out.to_vec()?, vec![i64::MIN, 3, 3]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn scan_exclusive_into<Op: Monoid<T>>(&self, op: Op, out: &mut impl DeviceDataMut<T>) -> Result<()> {
        scan_to("scan_exclusive_into", self, out, &op, true)
    }

    /// Segmented inclusive scan: the scan restarts wherever `keys` changes
    /// (`keys[i] != keys[i - 1]`, so every NaN key starts its own run and
    /// `-0.0` continues a run of `0.0`). `keys` must be as long as `self`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let keys = DeviceVec::from_slice(&dev, &[1u32, 1, 2, 2, 2, 1])?;
    /// let vals = DeviceVec::from_slice(&dev, &[1i64, 2, 3, 4, 5, 6])?;
    /// assert_eq!(vals.scan_by_key(&keys, Add)?.to_vec()?, vec![1, 3, 3, 7, 12, 6]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn scan_by_key<K: Element, Op: Monoid<T>>(&self, keys: &impl DeviceData<K>, op: Op) -> Result<DeviceVec<T>> {
        use crate::expr::LazyOps;
        scan_by_key_of(&keys.lazy(), &self.lazy(), op)
    }
}

impl<T: Element, D: DeviceData<T> + ?Sized> ScanOps<T> for D {}

/// scan_by_key of the values `values` keyed by `keys`, two input
/// expressions (buffers being the simplest) read in place by one kernel.
pub(crate) fn scan_by_key_of<KE: Node, VE: Node, Op: Monoid<VE::Item>>(keys: &KE, values: &VE, op: Op) -> Result<DeviceVec<VE::Item>>
where
    KE::Item: Element,
    VE::Item: Element,
{
    keys.validate()?;
    values.validate()?;
    crate::algo::same_device("scan_by_key", values.device_ref(), keys.device_ref())?;
    crate::algo::same_len("scan_by_key", values.length(), keys.length())?;
    let mut out = DeviceVec::alloc_uninit(values.device_ref(), values.length())?;
    match (values.device_ref().cuda_ref(), out.mem_mut()) {
        (None, MemMut::Host(o)) => {
            let (k, v) = (crate::expr::host_items(keys)?, crate::expr::host_items(values)?);
            host::scan_by_key(&k, &v, o, |a, b| op.apply(a, b))
        }
        (Some(dev), MemMut::Cuda { ptr: o, .. }) => {
            let (len, det) = (values.length(), dev.deterministic_for::<VE::Item>());
            if ScanByKeyChunks::<KE, VE, Op>::applies(len) {
                ScanByKeyChunks::new(keys, values, &op, det).run(dev, Ptr::from_raw(o))?
            } else {
                ScanByKey::new(dev.arch(), keys, values, &op, det, len).run(dev, Ptr::from_raw(o))?
            }
        }
        _ => return Err(Error::DeviceMismatch { op: "scan_by_key" }),
    }
    Ok(out)
}

/// Scans in place. In [`prelude`](crate::prelude).
pub trait ScanMutOps<T: Element>: DeviceDataMut<T> {
    /// Inclusive scan in place.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let mut v = DeviceVec::from_slice(&Device::default()?, &[1.0f32, 2.0, 3.0])?;
    /// v.scan_inclusive_in_place(Add)?;
    /// assert_eq!(v.to_vec()?, vec![1.0, 3.0, 6.0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn scan_inclusive_in_place<Op: Monoid<T>>(&mut self, op: Op) -> Result<()> {
        scan_in_place(self.mem_mut(), &op, false)
    }

    /// Exclusive scan in place.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let mut v = DeviceVec::from_slice(&Device::default()?, &[5u8, 1, 2])?;
    /// v.scan_exclusive_in_place(Add)?;
    /// assert_eq!(v.to_vec()?, vec![0, 5, 6]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn scan_exclusive_in_place<Op: Monoid<T>>(&mut self, op: Op) -> Result<()> {
        scan_in_place(self.mem_mut(), &op, true)
    }
}

impl<T: Element, D: DeviceDataMut<T> + ?Sized> ScanMutOps<T> for D {}

fn scan_into<T: Element, Op: Monoid<T>>(src: Mem<'_, T>, dst: MemMut<'_, T>, op: &Op, exclusive: bool) -> Result<()> {
    match (src, dst) {
        (Mem::Host(s), MemMut::Host(d)) => {
            host::scan(s, d, op.identity(), exclusive, |a, b| op.apply(a, b));
            Ok(())
        }
        (Mem::Cuda { dev, ptr, len, .. }, MemMut::Cuda { ptr: out, .. }) => {
            let input = crate::expr::Leaf::<T>::raw(ptr, len);
            Scan::new(dev.arch(), &input, op, dev.deterministic_for::<T>()).run(dev, Ptr::from_raw(out), exclusive, Ptr::null())
        }
        _ => Err(Error::DeviceMismatch { op: "scan" }),
    }
}

/// The checks of the `_into` scans, then [`scan_into`].
fn scan_to<T: Element, Op: Monoid<T>>(
    op_name: &'static str,
    src: &(impl DeviceData<T> + ?Sized),
    out: &mut impl DeviceDataMut<T>,
    op: &Op,
    exclusive: bool,
) -> Result<()> {
    crate::algo::same_device(op_name, src.device(), out.device())?;
    crate::algo::same_len(op_name, src.len(), out.len())?;
    scan_into(src.mem(), out.mem_mut(), op, exclusive)
}

fn scan_in_place<T: Element, Op: Monoid<T>>(data: MemMut<'_, T>, op: &Op, exclusive: bool) -> Result<()> {
    match data {
        MemMut::Host(d) => {
            host::scan_in_place(d, op.identity(), exclusive, |a, b| op.apply(a, b));
            Ok(())
        }
        MemMut::Cuda { dev, ptr, len, .. } => {
            let input = crate::expr::Leaf::<T>::raw(ptr, len);
            Scan::new(dev.arch(), &input, op, dev.deterministic_for::<T>()).run(dev, Ptr::from_raw(ptr), exclusive, Ptr::null())
        }
    }
}

/// `src` scanned from `seed` (one element on `src`'s device): element i is
/// `seed op x[0] op ... op x[i]` (inclusive) or `seed op x[0] op ... op
/// x[i - 1]` (exclusive, `seed` first). The sharded scan's later ranks,
/// whose seed is the fold of the shards before them.
pub(crate) fn scan_seeded<T: Element, Op: Monoid<T>>(
    src: &DeviceVec<T>,
    op: &Op,
    exclusive: bool,
    seed: &DeviceVec<T>,
) -> Result<DeviceVec<T>> {
    let mut out = DeviceVec::alloc_uninit(src.device(), src.len())?;
    match (src.mem(), seed.mem(), out.mem_mut()) {
        (Mem::Host(s), Mem::Host(seed), MemMut::Host(d)) => {
            let seed = seed[0];
            let mut run = seed;
            for (o, &x) in d.iter_mut().zip(s) {
                let next = op.apply(run, x);
                *o = if exclusive { run } else { next };
                run = next;
            }
        }
        (Mem::Cuda { dev, ptr, len, .. }, Mem::Cuda { ptr: seed, .. }, MemMut::Cuda { ptr: o, .. }) => {
            let input = crate::expr::Leaf::<T>::raw(ptr, len);
            Scan::new(dev.arch(), &input, op, dev.deterministic_for::<T>()).run(dev, Ptr::from_raw(o), exclusive, Ptr::from_raw(seed))?
        }
        _ => return Err(Error::DeviceMismatch { op: "scan" }),
    }
    Ok(out)
}
