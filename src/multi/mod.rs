//! More than one GPU: a [`ShardedVec`] split over the devices of a
//! [`Communicator`], with reduce, scan, histogram and sort across them.
//!
//! Each primitive runs the single-device primitive on every shard and joins
//! the shards through the communicator: a reduction gathers one value per
//! shard and folds them in rank order; a scan adds to each shard the fold of
//! the shard totals before it; a histogram adds the shards' bins; a sort
//! sorts each shard, picks splitters from regular samples, moves every
//! element to its rank in one all-to-all and merges the runs it receives.
//! Results are deterministic wherever the single-device primitive is, and a
//! communicator of one device gives the single-device result.
//!
//! Two exchanges implement the communicator: NCCL over distinct GPUs of this
//! process ([`Communicator::new`]; NCCL is opened at run time, see
//! [`nccl_places`]), and an in-process exchange ([`Communicator::in_process`])
//! whose ranks may share a GPU or be the host backend: it runs the very same
//! splitting, exchange and merge code, so a sharded program can be developed
//! and tested on one GPU or none.
//!
//! ```
//! use cuprim::prelude::*;
//! use cuprim::multi::{Communicator, ShardedVec};
//! let dev = Device::default()?;
//! // Three shards on one device, exchanged in process.
//! let comm = Communicator::in_process(&[dev.clone(), dev.clone(), dev])?;
//! let v = ShardedVec::from_slice(&comm, &[5u32, 3, 9, 1, 7, 2, 8])?;
//! assert_eq!(v.sum()?, 35);
//! assert_eq!(v.scan(Add)?.to_vec()?, vec![5, 8, 17, 18, 25, 27, 35]);
//! assert_eq!(v.sort()?.to_vec()?, vec![1, 2, 3, 5, 7, 8, 9]);
//! # Ok::<(), cuprim::Error>(())
//! ```

mod collective;
mod nccl;
pub(crate) mod plan;
mod sharded;
mod sort;
mod transport;

pub use nccl::{nccl_places, nccl_version};
pub use sharded::ShardedVec;

use crate::device::Device;
use crate::error::{Error, Result};
use std::fmt;
use std::sync::Arc;
use transport::Transport;

/// A group of devices that exchange data: rank r is `devices()[r]`. Cheap to
/// clone (the clones share the exchange).
#[derive(Clone)]
pub struct Communicator {
    transport: Arc<dyn Transport>,
}

impl Communicator {
    /// An NCCL communicator over distinct GPUs of this process, in the order
    /// given (one `ncclCommInitAll`). NCCL runs on each device's own stream,
    /// in order with cuprim's other work there. `NCCL_NVLS_ENABLE` is set to
    /// `0` unless the environment already sets it (no multicast objects).
    ///
    /// Errors: no devices, a host device, a GPU listed twice (use
    /// [`in_process`](Self::in_process) for several shards on one GPU), or
    /// [`Error::NcclUnavailable`] when NCCL is not installed.
    ///
    /// ```no_run
    /// use cuprim::{multi::Communicator, Device};
    /// let comm = Communicator::new(&[Device::cuda(0)?, Device::cuda(1)?])?;
    /// assert_eq!(comm.size(), 2);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn new(devices: &[Device]) -> Result<Communicator> {
        check_not_empty(devices)?;
        Ok(Communicator {
            transport: Arc::new(nccl::Nccl::new(devices)?),
        })
    }

    /// A communicator that exchanges in process: ranks may share a device
    /// (copies on its stream) or be on different GPUs (copies through the
    /// host), or all be the host backend. For development and tests of
    /// sharded code on one GPU or none; NCCL is faster between GPUs.
    ///
    /// ```
    /// use cuprim::{multi::Communicator, Device};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// assert_eq!((comm.size(), comm.kind()), (2, "in-process"));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn in_process(devices: &[Device]) -> Result<Communicator> {
        check_not_empty(devices)?;
        Ok(Communicator {
            transport: Arc::new(transport::Local::new(devices)?),
        })
    }

    /// The ranks' devices, in rank order.
    ///
    /// ```
    /// use cuprim::{multi::Communicator, Device};
    /// let comm = Communicator::in_process(&[Device::host()])?;
    /// assert!(comm.devices()[0].is_host());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn devices(&self) -> &[Device] {
        self.transport.devices()
    }

    /// The number of ranks.
    ///
    /// ```
    /// use cuprim::{multi::Communicator, Device};
    /// assert_eq!(Communicator::in_process(&vec![Device::host(); 3])?.size(), 3);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.devices().len()
    }

    /// `"NCCL"` or `"in-process"`.
    ///
    /// ```
    /// use cuprim::{multi::Communicator, Device};
    /// assert_eq!(Communicator::in_process(&[Device::host()])?.kind(), "in-process");
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn kind(&self) -> &'static str {
        self.transport.kind()
    }

    /// `f(r, items[r])` for every rank, in rank order of the results: each
    /// on its own thread when the ranks are distinct GPUs (a call that waits
    /// for one GPU then holds up no other), else one after another (ranks
    /// sharing a stream, or the host backend, which has its own threads).
    pub(crate) fn map_ranks<A: Send, X: Send>(&self, items: Vec<A>, f: impl Fn(usize, A) -> Result<X> + Sync) -> Result<Vec<X>> {
        let devices = self.devices();
        let distinct_gpus = devices.len() > 1
            && devices.iter().all(|d| d.is_cuda())
            && (1..devices.len()).all(|i| (0..i).all(|j| !devices[i].same(&devices[j])));
        if !distinct_gpus {
            return items.into_iter().enumerate().map(|(r, a)| f(r, a)).collect();
        }
        std::thread::scope(|s| {
            let f = &f;
            let handles: Vec<_> = items.into_iter().enumerate().map(|(r, a)| s.spawn(move || f(r, a))).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                .collect()
        })
    }

    /// [`map_ranks`](Self::map_ranks) with nothing but the rank.
    pub(crate) fn per_rank<X: Send>(&self, f: impl Fn(usize) -> Result<X> + Sync) -> Result<Vec<X>> {
        self.map_ranks(vec![(); self.size()], |r, ()| f(r))
    }

    pub(crate) fn transport(&self) -> &dyn Transport {
        &*self.transport
    }

    pub(crate) fn same(&self, other: &Communicator) -> bool {
        Arc::ptr_eq(&self.transport, &other.transport)
    }
}

impl fmt::Debug for Communicator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Communicator")
            .field("kind", &self.kind())
            .field("devices", &self.devices())
            .finish()
    }
}

fn check_not_empty(devices: &[Device]) -> Result<()> {
    if devices.is_empty() {
        return Err(Error::InvalidArgument("a communicator needs at least one device".into()));
    }
    Ok(())
}
