//! The algorithm families, one folder each. Every family is an extension
//! trait over [`DeviceData`](crate::DeviceData) /
//! [`DeviceDataMut`](crate::DeviceDataMut) whose methods check their
//! arguments, then run the family's host backend (`host.rs`, rayon) or its
//! plan (`plan.rs`: policy, scratch layout, specialisation and launches).

pub mod bykey;
pub mod collective;
pub mod histogram;
pub mod knn;
pub(crate) mod lookback;
pub mod merge;
pub(crate) mod policy;
pub mod reduce;
pub mod scan;
pub mod search;
pub mod segmented;
pub mod segsort;
pub mod select;
pub mod sort;
pub mod topk;
pub mod transform;

/// Below this many elements a rayon split costs more than it saves.
pub(crate) const HOST_MIN_SPLIT: usize = 1 << 14;

use crate::device::{Device, Ptr};
use crate::element::Storable;
use crate::error::{Error, Result};
use crate::vec::raw::{MemMut, SealedMut as _};
use crate::vec::DeviceVec;

/// Fails with [`Error::DeviceMismatch`] unless `a` and `b` are one device.
pub(crate) fn same_device(op: &'static str, a: &Device, b: &Device) -> Result<()> {
    if a.same(b) {
        Ok(())
    } else {
        Err(Error::DeviceMismatch { op })
    }
}

/// Fails with [`Error::LengthMismatch`] unless `actual == expected`.
pub(crate) fn same_len(op: &'static str, expected: usize, actual: usize) -> Result<()> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::LengthMismatch { op, expected, actual })
    }
}

/// The device address of a vector a CUDA call writes ([`Error::DeviceMismatch`]
/// naming `op` when it lives on the host).
pub(crate) fn cuda_ptr_mut<T: Storable>(v: &mut DeviceVec<T>, op: &'static str) -> Result<Ptr<T>> {
    match v.mem_mut() {
        MemMut::Cuda { ptr, .. } => Ok(Ptr::from_raw(ptr)),
        MemMut::Host(_) => Err(Error::DeviceMismatch { op }),
    }
}
