//! [`ShardedVec`]: one logical vector, split in rank order over a
//! communicator's devices. Its primitives are in `collective.rs` and
//! `sort.rs`.

use super::Communicator;
use crate::algo::transform::TransformMutOps;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::vec::raw::{Mem, MemMut, SealedMut};
use crate::vec::{DeviceData, DeviceVec};

/// A vector split over the devices of a [`Communicator`]: shard r, on rank
/// r's device, holds the elements after those of shards 0..r. Shards may
/// have any lengths, empty ones included.
///
/// ```
/// use cuprim::prelude::*;
/// use cuprim::multi::{Communicator, ShardedVec};
/// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
/// let v = ShardedVec::from_slice(&comm, &[1.0f32, 2.0, 3.0])?;
/// assert_eq!(v.shard_lens(), vec![2, 1]);
/// assert_eq!(v.to_vec()?, vec![1.0, 2.0, 3.0]);
/// # Ok::<(), cuprim::Error>(())
/// ```
pub struct ShardedVec<T: Element> {
    comm: Communicator,
    shards: Vec<DeviceVec<T>>,
}

impl<T: Element> ShardedVec<T> {
    /// Copies `data` to the communicator's devices, split evenly: every shard
    /// gets `len / ranks` elements and the first `len % ranks` one more.
    ///
    /// ```
    /// use cuprim::{multi::{Communicator, ShardedVec}, Device};
    /// let comm = Communicator::in_process(&vec![Device::host(); 3])?;
    /// let v = ShardedVec::from_slice(&comm, &[0u8; 10])?;
    /// assert_eq!(v.shard_lens(), vec![4, 3, 3]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn from_slice(comm: &Communicator, data: &[T]) -> Result<Self> {
        Self::from_slice_with_lens(comm, data, &even_split(data.len(), comm.size()))
    }

    /// Copies `data` to the communicator's devices in shards of the given
    /// lengths, which must add up to `data.len()` (one per rank).
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// use cuprim::multi::{Communicator, ShardedVec};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// let v = ShardedVec::from_slice_with_lens(&comm, &[1i32, 2, 3], &[0, 3])?;
    /// assert_eq!(v.shards()[1].to_vec()?, vec![1, 2, 3]);
    /// assert!(ShardedVec::from_slice_with_lens(&comm, &[1i32, 2, 3], &[1, 1]).is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn from_slice_with_lens(comm: &Communicator, data: &[T], lens: &[usize]) -> Result<Self> {
        if lens.len() != comm.size() {
            return Err(Error::InvalidArgument(format!(
                "ShardedVec: {} shard lengths for a communicator of {} ranks",
                lens.len(),
                comm.size()
            )));
        }
        let total = lens.iter().try_fold(0usize, |a, &b| a.checked_add(b));
        if total != Some(data.len()) {
            return Err(Error::InvalidArgument(format!(
                "ShardedVec: shard lengths {lens:?} do not add up to the {} elements given",
                data.len()
            )));
        }
        let mut shards = Vec::with_capacity(lens.len());
        let mut start = 0;
        for (dev, &len) in comm.devices().iter().zip(lens) {
            shards.push(DeviceVec::from_slice(dev, &data[start..start + len])?);
            start += len;
        }
        Ok(ShardedVec {
            comm: comm.clone(),
            shards,
        })
    }

    /// Takes per-rank vectors as the shards: `shards[r]` must live on rank
    /// r's device.
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// use cuprim::multi::{Communicator, ShardedVec};
    /// let dev = Device::host();
    /// let comm = Communicator::in_process(&[dev.clone(), dev.clone()])?;
    /// let parts = vec![DeviceVec::from_slice(&dev, &[1u64, 2])?, DeviceVec::from_slice(&dev, &[3u64])?];
    /// assert_eq!(ShardedVec::from_shards(&comm, parts)?.sum()?, 6);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn from_shards(comm: &Communicator, shards: Vec<DeviceVec<T>>) -> Result<Self> {
        if shards.len() != comm.size() {
            return Err(Error::InvalidArgument(format!(
                "ShardedVec::from_shards: {} shards for a communicator of {} ranks",
                shards.len(),
                comm.size()
            )));
        }
        if let Some(r) = (0..shards.len()).find(|&r| !shards[r].device().same(&comm.devices()[r])) {
            return Err(Error::InvalidArgument(format!(
                "ShardedVec::from_shards: shard {r} lives on {:?}, rank {r}'s device is {:?}",
                shards[r].device(),
                comm.devices()[r]
            )));
        }
        Ok(ShardedVec {
            comm: comm.clone(),
            shards,
        })
    }

    /// The communicator the shards live on.
    ///
    /// ```
    /// use cuprim::{multi::{Communicator, ShardedVec}, Device};
    /// let comm = Communicator::in_process(&[Device::host()])?;
    /// assert_eq!(ShardedVec::from_slice(&comm, &[1u8])?.communicator().size(), 1);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn communicator(&self) -> &Communicator {
        &self.comm
    }

    /// The total number of elements.
    ///
    /// ```
    /// use cuprim::{multi::{Communicator, ShardedVec}, Device};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// assert_eq!(ShardedVec::from_slice(&comm, &[1u8, 2, 3])?.len(), 3);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.len()).sum()
    }

    /// True when every shard is empty.
    ///
    /// ```
    /// use cuprim::{multi::{Communicator, ShardedVec}, Device};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// assert!(ShardedVec::<f32>::from_slice(&comm, &[])?.is_empty());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each shard's length, in rank order.
    ///
    /// ```
    /// use cuprim::{multi::{Communicator, ShardedVec}, Device};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// assert_eq!(ShardedVec::from_slice(&comm, &[1u8, 2, 3])?.shard_lens(), vec![2, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn shard_lens(&self) -> Vec<usize> {
        self.shards.iter().map(|s| s.len()).collect()
    }

    /// Rank r's shard (`None` past the last rank).
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// use cuprim::multi::{Communicator, ShardedVec};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// let v = ShardedVec::from_slice(&comm, &[1u8, 2, 3])?;
    /// assert_eq!(v.shard(1).unwrap().to_vec()?, vec![3]);
    /// assert!(v.shard(2).is_none());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn shard(&self, r: usize) -> Option<&DeviceVec<T>> {
        self.shards.get(r)
    }

    /// All shards, in rank order.
    ///
    /// ```
    /// use cuprim::{multi::{Communicator, ShardedVec}, Device};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// assert_eq!(ShardedVec::from_slice(&comm, &[1u8, 2, 3])?.shards().len(), 2);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn shards(&self) -> &[DeviceVec<T>] {
        &self.shards
    }

    /// The shards, to use on their own.
    ///
    /// ```
    /// use cuprim::{multi::{Communicator, ShardedVec}, Device};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// let parts = ShardedVec::from_slice(&comm, &[1u8, 2, 3])?.into_shards();
    /// assert_eq!(parts[0].len(), 2);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn into_shards(self) -> Vec<DeviceVec<T>> {
        self.shards
    }

    /// Gathers every shard, in rank order, into one host vector.
    ///
    /// ```
    /// use cuprim::{multi::{Communicator, ShardedVec}, Device};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// assert_eq!(ShardedVec::from_slice(&comm, &[4i8, 5, 6])?.to_vec()?, vec![4, 5, 6]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = Vec::new();
        out.try_reserve_exact(self.len()).map_err(|_| Error::OutOfMemory {
            bytes: self.len().saturating_mul(std::mem::size_of::<T>()),
        })?;
        for s in &self.shards {
            out.extend(s.to_vec()?);
        }
        Ok(out)
    }

    /// Copies every shard on its own device.
    ///
    /// ```
    /// use cuprim::{multi::{Communicator, ShardedVec}, Device};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// let v = ShardedVec::from_slice(&comm, &[1u8, 2, 3])?;
    /// assert_eq!(v.try_clone()?.to_vec()?, v.to_vec()?);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn try_clone(&self) -> Result<Self> {
        let shards = self.shards.iter().map(copy_of).collect::<Result<_>>()?;
        Ok(ShardedVec {
            comm: self.comm.clone(),
            shards,
        })
    }

    pub(crate) fn from_parts(comm: &Communicator, shards: Vec<DeviceVec<T>>) -> Self {
        ShardedVec {
            comm: comm.clone(),
            shards,
        }
    }
}

impl<T: Element> std::fmt::Debug for ShardedVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedVec")
            .field("comm", &self.comm)
            .field("shard_lens", &self.shard_lens())
            .finish()
    }
}

/// `len` elements over `ranks` shards: `len / ranks` each, the first
/// `len % ranks` one more.
pub(crate) fn even_split(len: usize, ranks: usize) -> Vec<usize> {
    (0..ranks).map(|r| len / ranks + usize::from(r < len % ranks)).collect()
}

/// A copy of `v` on its device.
pub(crate) fn copy_of<T: Element>(v: &DeviceVec<T>) -> Result<DeviceVec<T>> {
    let mut out = DeviceVec::alloc_uninit(v.device(), v.len())?;
    out.copy_from(v)?;
    Ok(out)
}

/// The address of element 0 of `v` (a device address, or a host address on
/// the host backend), for the transport.
pub(crate) fn addr<T: Element>(v: &impl DeviceData<T>) -> u64 {
    match v.mem() {
        Mem::Host(s) => s.as_ptr() as u64,
        Mem::Cuda { ptr, .. } => ptr,
    }
}

/// Like [`addr`], of memory the transport will write.
pub(crate) fn addr_mut<T: Element>(v: &mut DeviceVec<T>) -> u64 {
    match v.mem_mut() {
        MemMut::Host(s) => s.as_mut_ptr() as u64,
        MemMut::Cuda { ptr, .. } => ptr,
    }
}
