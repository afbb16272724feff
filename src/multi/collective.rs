//! Reduce, scan and histogram of a [`ShardedVec`]: the single-device
//! primitive on every shard, then one collective of the communicator.

use super::plan::ShardPlan;
use super::sharded::{addr, addr_mut};
use super::transport::Word;
use super::ShardedVec;
use crate::algo::histogram::{Bins, Count, Histogram, HistogramOps};
use crate::algo::reduce::ReduceOps;
use crate::algo::scan::{scan_seeded, ScanOps};
use crate::device::Ptr;
use crate::element::Element;
use crate::error::Result;
use crate::ops::{Add, Arith, Commutative, Monoid};
use crate::vec::raw::{Mem, MemMut, Sealed, SealedMut};
use crate::vec::{DeviceData, DeviceVec};

impl<T: Element> ShardedVec<T> {
    /// Reduces every element with `op`: each shard reduces on its device,
    /// the shard values are gathered to every rank and folded there in rank
    /// order (so all ranks hold the same bits). An empty vector gives the
    /// identity. Floats: deterministic when the device is.
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// use cuprim::multi::{Communicator, ShardedVec};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// let v = ShardedVec::from_slice(&comm, &[3i32, -7, 5])?;
    /// assert_eq!(v.reduce(Max)?, 5);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn reduce<Op: Monoid<T> + Commutative>(&self, op: Op) -> Result<T> {
        let mut on_each = self.reduce_on_each(op)?;
        let first = on_each.swap_remove(0);
        Ok(first.to_vec()?[0])
    }

    /// Like [`reduce`](Self::reduce), leaving the result on every rank's
    /// device (one element each, rank order) with no host synchronisation.
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// use cuprim::multi::{Communicator, ShardedVec};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// let v = ShardedVec::from_slice(&comm, &[1u32, 2, 3, 4])?;
    /// let each = v.reduce_on_each(Add)?;
    /// assert_eq!((each[0].to_vec()?, each[1].to_vec()?), (vec![10], vec![10]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn reduce_on_each<Op: Monoid<T> + Commutative>(&self, op: Op) -> Result<Vec<DeviceVec<T>>> {
        // One rank goes through the gather and fold too (the fold of one
        // value is that value, bit for bit): the exchange's calls run on
        // any communicator, NCCL's of one GPU included.
        let partials = self.communicator().per_rank(|r| self.shards()[r].reduce_into(op))?;
        let gathered = self.gather_values(&partials)?;
        let devices = self.communicator().devices();
        let mut out = Vec::with_capacity(devices.len());
        for (dev, parts) in devices.iter().zip(&gathered) {
            let mut one = DeviceVec::alloc_uninit(dev, 1)?;
            fold_into(&op, parts, parts.len(), &mut one)?;
            out.push(one);
        }
        Ok(out)
    }

    /// The sum of every element ([`reduce`](Self::reduce) with `Add`).
    ///
    /// ```
    /// use cuprim::{multi::{Communicator, ShardedVec}, Device};
    /// let comm = Communicator::in_process(&vec![Device::host(); 3])?;
    /// assert_eq!(ShardedVec::from_slice(&comm, &[1.5f64, 2.0, 4.0, 0.5])?.sum()?, 8.0);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn sum(&self) -> Result<T>
    where
        T: Arith,
    {
        self.reduce(Add)
    }

    /// Inclusive scan with `op` (a monoid; need not commute): element i of
    /// the result is `x[0] op ... op x[i]` over the whole vector, sharded as
    /// `self`. Each shard scans on its device; the shard totals are gathered
    /// to every rank, and each rank after the first applies the fold of the
    /// totals before it to its elements.
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// use cuprim::multi::{Communicator, ShardedVec};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// let v = ShardedVec::from_slice(&comm, &[1u32, 2, 3, 4, 5])?;
    /// assert_eq!(v.scan(Add)?.to_vec()?, vec![1, 3, 6, 10, 15]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn scan<Op: Monoid<T>>(&self, op: Op) -> Result<ShardedVec<T>> {
        self.scan_with(op, false)
    }

    /// Exclusive scan with `op`: element i is the fold of the elements
    /// before it (the identity for element 0).
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// use cuprim::multi::{Communicator, ShardedVec};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// let v = ShardedVec::from_slice(&comm, &[1u32, 2, 3, 4, 5])?;
    /// assert_eq!(v.scan_exclusive(Add)?.to_vec()?, vec![0, 1, 3, 6, 10]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn scan_exclusive<Op: Monoid<T>>(&self, op: Op) -> Result<ShardedVec<T>> {
        self.scan_with(op, true)
    }

    fn scan_with<Op: Monoid<T>>(&self, op: Op, exclusive: bool) -> Result<ShardedVec<T>> {
        let comm = self.communicator();
        let plain = |s: &DeviceVec<T>| if exclusive { s.scan_exclusive(op) } else { s.scan_inclusive(op) };
        if comm.size() == 1 {
            return Ok(ShardedVec::from_parts(comm, vec![plain(&self.shards()[0])?]));
        }
        // Each shard's total, folded in order (any monoid, commutative or not).
        let totals = comm.per_rank(|r| ordered_total(&self.shards()[r], &op))?;
        let gathered = self.gather_values(&totals)?;
        // Rank r scans from the fold of the totals before it.
        let scanned = comm.map_ranks(gathered, |r, parts| {
            let s = &self.shards()[r];
            if r == 0 {
                return plain(s);
            }
            let mut seed = DeviceVec::alloc_uninit(s.device(), 1)?;
            fold_into(&op, &parts, r, &mut seed)?;
            scan_seeded(s, &op, exclusive, &seed)
        })?;
        Ok(ShardedVec::from_parts(comm, scanned))
    }

    /// A histogram of every element, with `u32` counts: each shard counts on
    /// its device, then the bins (and the dropped count) are added across
    /// the ranks (an all-reduce). The result lives on rank 0's device.
    /// Counts wrap past `u32::MAX` as the single-device histogram's do; see
    /// [`histogram_u64`](Self::histogram_u64).
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// use cuprim::multi::{Communicator, ShardedVec};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// let v = ShardedVec::from_slice(&comm, &[0.5f32, 1.5, 1.7, 9.0, f32::NAN])?;
    /// let h = v.histogram(Bins::even(2, 0.0, 2.0))?;
    /// assert_eq!((h.to_vec()?, h.dropped()?), (vec![1, 2], 2));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn histogram(&self, bins: impl AsRef<Bins<T>>) -> Result<Histogram<u32>> {
        let bins = bins.as_ref();
        self.histogram_with(|s| s.histogram(bins), Word::U32)
    }

    /// Like [`histogram`](Self::histogram), with `u64` counts.
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// use cuprim::multi::{Communicator, ShardedVec};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// let v = ShardedVec::from_slice(&comm, &[1u8, 1, 2, 3])?;
    /// assert_eq!(v.histogram_u64(Bins::even(4, 0, 4))?.to_vec()?, vec![0, 2, 1, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn histogram_u64(&self, bins: impl AsRef<Bins<T>>) -> Result<Histogram<u64>> {
        let bins = bins.as_ref();
        self.histogram_with(|s| s.histogram_u64(bins), Word::U64)
    }

    fn histogram_with<C: Count>(&self, count: impl Fn(&DeviceVec<T>) -> Result<Histogram<C>> + Sync, word: Word) -> Result<Histogram<C>> {
        let comm = self.communicator();
        let mut hists = comm.per_rank(|r| count(&self.shards()[r]))?;
        let num_bins = hists[0].num_bins();
        {
            let (mut counts, mut dropped) = (Vec::new(), Vec::new());
            for h in &mut hists {
                let (c, d) = h.parts_mut();
                counts.push(addr_mut(c));
                dropped.push(addr_mut(d));
            }
            // SAFETY: each rank's counts hold num_bins words of `word`'s width
            // and its dropped count one u64, all on that rank's device and
            // borrowed from `hists` until the calls return (their work is
            // queued on the ranks' streams, where `hists` is used next).
            unsafe {
                comm.transport().all_reduce_sum(&counts, num_bins, word)?;
                comm.transport().all_reduce_sum(&dropped, 1, Word::U64)?;
            }
        }
        Ok(hists.swap_remove(0))
    }

    /// Every rank's copy of the shards' one-element `values`, in rank order
    /// (`ranks` elements on each rank's device).
    fn gather_values(&self, values: &[DeviceVec<T>]) -> Result<Vec<DeviceVec<T>>> {
        let comm = self.communicator();
        let mut gathered = comm
            .devices()
            .iter()
            .map(|d| DeviceVec::alloc_uninit(d, comm.size()))
            .collect::<Result<Vec<_>>>()?;
        let send: Vec<u64> = values.iter().map(addr).collect();
        let recv: Vec<u64> = gathered.iter_mut().map(addr_mut).collect();
        // SAFETY: send[r] is one live element on rank r's device and recv[r]
        // `ranks` elements there, a new buffer; both are borrowed until the
        // gather is queued, and used next on the same streams.
        unsafe { comm.transport().all_gather(&send, &recv, std::mem::size_of::<T>())? };
        Ok(gathered)
    }
}

/// `out[0]` = the left-to-right fold of the first `count` (>= 1) of `parts`.
fn fold_into<T: Element, Op: Monoid<T>>(op: &Op, parts: &DeviceVec<T>, count: usize, out: &mut DeviceVec<T>) -> Result<()> {
    match (parts.mem(), out.mem_mut()) {
        (Mem::Host(p), MemMut::Host(o)) => o[0] = host_fold(op, &p[..count]),
        (Mem::Cuda { ptr: p, .. }, MemMut::Cuda { dev: c, ptr: o, .. }) => {
            ShardPlan::new(c.arch(), op).fold(c, Ptr::from_raw(p), count as u32, Ptr::from_raw(o))?
        }
        _ => unreachable!("one device's buffers share its backend"),
    }
    Ok(())
}

/// The in-order fold of `v`, as one element on its device.
fn ordered_total<T: Element, Op: Monoid<T>>(v: &DeviceVec<T>, op: &Op) -> Result<DeviceVec<T>> {
    let mut out = DeviceVec::alloc_uninit(v.device(), 1)?;
    match v.mem() {
        Mem::Host(s) => {
            use rayon::prelude::*;
            let parts: Vec<T> = s
                .par_chunks(1 << 16)
                .map(|c| c.iter().fold(op.identity(), |a, &x| op.apply(a, x)))
                .collect();
            let total = parts.iter().fold(op.identity(), |a, &x| op.apply(a, x));
            if let MemMut::Host(o) = out.mem_mut() {
                o[0] = total;
            }
        }
        Mem::Cuda { dev, ptr, len, .. } => {
            let at = addr_mut(&mut out);
            ShardPlan::new(dev.arch(), op).total(dev, Ptr::from_raw(ptr), len as u64, Ptr::from_raw(at))?
        }
    }
    Ok(out)
}

fn host_fold<T: Element, Op: Monoid<T>>(op: &Op, parts: &[T]) -> T {
    parts[1..].iter().fold(parts[0], |acc, &x| op.apply(acc, x))
}
