//! The sharded sort: sort every shard, choose splitters from regular
//! samples, move every element to its rank in one all-to-all, merge the
//! runs each rank receives.
//!
//! Stability across shards comes from the splitters: a splitter is a sample
//! `(key, rank s, sorted position p in shard s)`, and an element `(k, r, q)`
//! goes below it iff `(k, r, q) < (key, s, p)` lexicographically. Within a
//! stably sorted shard equal keys keep their input order, so this is the
//! order of `(key, input position)`: a shard's cut is `upper_bound(key)` when
//! `r < s`, `lower_bound(key)` when `r > s` and `p` itself when `r == s`.
//! Equal keys therefore spread over ranks (all-equal input balances like any
//! other), and a rank's runs, merged with ties to the lower source rank,
//! come out in input order.

use super::sharded::{addr, addr_mut, copy_of};
use super::transport::Move;
use super::{Communicator, ShardedVec};
use crate::algo::merge::MergeOps;
use crate::algo::search::{Mode, SearchOps};
use crate::algo::sort::{ordered_bits, SortMutOps};
use crate::algo::transform::{TransformMutOps, TransformOps};
use crate::cmp::Less;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::vec::{DeviceData, DeviceVec};

/// Samples taken from each shard: the splitters then cut within about
/// total / (ranks * SAMPLES) elements of an even split.
const SAMPLES: usize = 1024;

impl<K: Element> ShardedVec<K> {
    /// Sorts every element ascending (the radix sort's order: floats by
    /// `total_cmp`), stably across shards. The result is sharded over the
    /// same communicator with lengths close to even (within about
    /// `len / (ranks * 1024)` of it; equal keys spread over ranks too).
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// use cuprim::multi::{Communicator, ShardedVec};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// let v = ShardedVec::from_slice(&comm, &[3.0f32, -1.0, 2.5, -0.0, 0.0])?;
    /// assert_eq!(v.sort()?.to_vec()?, vec![-1.0, -0.0, 0.0, 2.5, 3.0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn sort(&self) -> Result<ShardedVec<K>> {
        let (keys, _) = self.sort_impl::<u8>(None)?;
        Ok(keys)
    }

    /// Sorts by key, moving `values` along (stable: equal keys keep their
    /// input order). `values` must be sharded like `self` (same
    /// communicator, same shard lengths).
    ///
    /// ```
    /// use cuprim::prelude::*;
    /// use cuprim::multi::{Communicator, ShardedVec};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// let k = ShardedVec::from_slice(&comm, &[2u32, 1, 2, 1])?;
    /// let v = ShardedVec::from_slice(&comm, &[b'a', b'b', b'c', b'd'])?;
    /// let (k, v) = k.sort_pairs(&v)?;
    /// assert_eq!((k.to_vec()?, v.to_vec()?), (vec![1, 1, 2, 2], b"bdac".to_vec()));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn sort_pairs<V: Element>(&self, values: &ShardedVec<V>) -> Result<(ShardedVec<K>, ShardedVec<V>)> {
        if !values.communicator().same(self.communicator()) {
            return Err(Error::InvalidArgument(
                "sort_pairs: the keys and values are sharded over different communicators".into(),
            ));
        }
        if values.shard_lens() != self.shard_lens() {
            return Err(Error::InvalidArgument(format!(
                "sort_pairs: keys in shards of {:?} but values in shards of {:?}",
                self.shard_lens(),
                values.shard_lens()
            )));
        }
        let (keys, values) = self.sort_impl(Some(values))?;
        Ok((keys, values.expect("values were given")))
    }

    fn sort_impl<V: Element>(&self, values: Option<&ShardedVec<V>>) -> Result<(ShardedVec<K>, Option<ShardedVec<V>>)> {
        let comm = self.communicator();
        let locals = comm.per_rank(|r| {
            let mut k = copy_of(&self.shards()[r])?;
            match values {
                Some(values) => {
                    let mut v = copy_of(&values.shards()[r])?;
                    k.sort_pairs(&mut v)?;
                    Ok((k, Some(v)))
                }
                None => {
                    k.sort()?;
                    Ok((k, None))
                }
            }
        })?;
        let (keys, vals): (Vec<_>, Vec<_>) = locals.into_iter().unzip();
        let vals: Option<Vec<DeviceVec<V>>> = vals.into_iter().collect();
        if comm.size() == 1 {
            return Ok((ShardedVec::from_parts(comm, keys), vals.map(|v| ShardedVec::from_parts(comm, v))));
        }
        let cuts = cuts(comm, &keys)?;
        // The sorted shards go as soon as their parts are sent (in stream
        // order: the frees queue after the exchange).
        let (received, runs) = exchange(comm, &keys, &cuts)?;
        drop(keys);
        let received_vals = match vals {
            Some(v) => exchange(comm, &v, &cuts)?.0.into_iter().map(Some).collect(),
            None => (0..comm.size()).map(|_| None).collect::<Vec<_>>(),
        };
        let items: Vec<_> = received.into_iter().zip(received_vals).collect();
        let merged = comm.map_ranks(items, |d, (k, v)| merge_runs(k, v.as_ref(), &runs[d]))?;
        let (out_keys, out_vals): (Vec<_>, Vec<_>) = merged.into_iter().unzip();
        let out_vals: Option<Vec<DeviceVec<V>>> = out_vals.into_iter().collect();
        Ok((
            ShardedVec::from_parts(comm, out_keys),
            out_vals.map(|v| ShardedVec::from_parts(comm, v)),
        ))
    }
}

/// `cuts[s]`: shard s's positions where each rank's part begins, plus its
/// length: `ranks + 1` non-decreasing positions from 0 to the shard's length.
fn cuts<K: Element>(comm: &Communicator, sorted: &[DeviceVec<K>]) -> Result<Vec<Vec<usize>>> {
    let ranks = comm.size();
    let total: usize = sorted.iter().map(|s| s.len()).sum();
    // Regular samples of every sorted shard, each weighted by the elements
    // it stands for: (order bits, rank, position, weight, key).
    let per_rank = comm.per_rank(|r| {
        let s = &sorted[r];
        let n = s.len();
        let count = n.min(SAMPLES);
        if count == 0 {
            return Ok(Vec::new());
        }
        let positions: Vec<u64> = (0..count).map(|j| (j * n / count) as u64).collect();
        let at = DeviceVec::from_slice(s.device(), &positions)?;
        let keys = s.gather(&at)?.to_vec()?;
        let weight = n as f64 / count as f64;
        Ok(keys
            .iter()
            .zip(&positions)
            .map(|(&k, &p)| (ordered_bits(k), r, p as usize, weight, k))
            .collect::<Vec<_>>())
    })?;
    let mut samples: Vec<(u64, usize, usize, f64, K)> = per_rank.into_iter().flatten().collect();
    samples.sort_unstable_by_key(|s| (s.0, s.1, s.2));
    // Splitter i (1..ranks) is the first sample with at least i / ranks of
    // the elements' weight before it: (key, rank, position).
    let mut splitters: Vec<(K, usize, usize)> = Vec::with_capacity(ranks - 1);
    let mut before = 0.0;
    for sample in &samples {
        while splitters.len() + 1 < ranks && before >= ((splitters.len() + 1) * total) as f64 / ranks as f64 {
            splitters.push((sample.4, sample.1, sample.2));
        }
        before += sample.3;
    }
    // Cuts past the last splitter take the rest of the shard.
    let mut cuts: Vec<Vec<usize>> = sorted.iter().map(|s| vec![s.len(); ranks + 1]).collect();
    if splitters.is_empty() {
        for c in &mut cuts {
            c[0] = 0;
        }
        return Ok(cuts);
    }
    let split_keys: Vec<K> = splitters.iter().map(|s| s.0).collect();
    let bounds = comm.per_rank(|r| {
        let s = &sorted[r];
        let queries = DeviceVec::from_slice(s.device(), &split_keys)?;
        let lower = s.search_with::<u64, _, _>(&queries, Less, Mode::Lower)?.to_vec()?;
        let upper = s.search_with::<u64, _, _>(&queries, Less, Mode::Upper)?.to_vec()?;
        Ok((lower, upper))
    })?;
    for (r, (lower, upper)) in bounds.into_iter().enumerate() {
        cuts[r][0] = 0;
        for (i, &(_, owner, pos)) in splitters.iter().enumerate() {
            cuts[r][i + 1] = match r.cmp(&owner) {
                std::cmp::Ordering::Less => upper[i] as usize,
                std::cmp::Ordering::Greater => lower[i] as usize,
                std::cmp::Ordering::Equal => pos,
            };
        }
    }
    Ok(cuts)
}

/// Moves part d of every shard s (`cuts[s][d]..cuts[s][d + 1]`) to rank d,
/// the parts in source-rank order. Returns each rank's buffer and the
/// lengths of the runs in it.
pub(crate) fn exchange<T: Element>(
    comm: &Communicator,
    shards: &[DeviceVec<T>],
    cuts: &[Vec<usize>],
) -> Result<(Vec<DeviceVec<T>>, Vec<Vec<usize>>)> {
    let ranks = comm.size();
    let size = std::mem::size_of::<T>();
    let runs: Vec<Vec<usize>> = (0..ranks)
        .map(|d| (0..ranks).map(|s| cuts[s][d + 1] - cuts[s][d]).collect())
        .collect();
    let mut recv = Vec::with_capacity(ranks);
    for (d, dev) in comm.devices().iter().enumerate() {
        recv.push(DeviceVec::alloc_uninit(dev, runs[d].iter().sum())?);
    }
    let moves: Vec<Vec<Move>> = (0..ranks)
        .map(|s| {
            (0..ranks)
                .map(|d| Move {
                    from: cuts[s][d] * size,
                    to: runs[d][..s].iter().sum::<usize>() * size,
                    bytes: runs[d][s] * size,
                })
                .collect()
        })
        .collect();
    let send: Vec<u64> = shards.iter().map(addr).collect();
    let recv_at: Vec<u64> = recv.iter_mut().map(addr_mut).collect();
    // SAFETY: each move reads cuts[s][d]..cuts[s][d + 1] of shard s (inside
    // it: the cuts run from 0 to its length) and writes run s of rank d's
    // new buffer, sized as the sum of its runs; runs do not overlap. Both
    // buffers outlive the queued exchange's use (next used on the same streams).
    unsafe { comm.transport().all_to_all(&send, &recv_at, &moves)? };
    Ok((recv, runs))
}

/// Merges the sorted runs of `keys` (lengths `runs`, in source-rank order;
/// ties to the earlier run), with `values` along.
fn merge_runs<K: Element, V: Element>(
    keys: DeviceVec<K>,
    values: Option<&DeviceVec<V>>,
    runs: &[usize],
) -> Result<(DeviceVec<K>, Option<DeviceVec<V>>)> {
    // First level: adjacent runs of the received buffer, merged pairwise.
    let mut level: Vec<(DeviceVec<K>, Option<DeviceVec<V>>)> = Vec::new();
    let mut start = 0;
    let mut r = 0;
    while r < runs.len() {
        let a = start..start + runs[r];
        if r + 1 == runs.len() {
            let k = copy_of_slice(&keys, a.clone())?;
            let v = values.map(|v| copy_of_slice(v, a)).transpose()?;
            level.push((k, v));
            break;
        }
        let b = a.end..a.end + runs[r + 1];
        let (ka, kb) = (keys.slice(a.clone())?, keys.slice(b.clone())?);
        level.push(match values {
            Some(v) => {
                let (k, v) = ka.merge_by_key(&v.slice(a)?, &kb, &v.slice(b.clone())?)?;
                (k, Some(v))
            }
            None => (ka.merge(&kb)?, None),
        });
        start = b.end;
        r += 2;
    }
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        let mut it = level.into_iter();
        while let Some((ka, va)) = it.next() {
            match it.next() {
                Some((kb, vb)) => next.push(match (va, vb) {
                    (Some(va), Some(vb)) => {
                        let (k, v) = ka.merge_by_key(&va, &kb, &vb)?;
                        (k, Some(v))
                    }
                    _ => (ka.merge(&kb)?, None),
                }),
                None => next.push((ka, va)),
            }
        }
        level = next;
    }
    Ok(level.pop().expect("at least one run"))
}

fn copy_of_slice<T: Element>(v: &DeviceVec<T>, range: std::ops::Range<usize>) -> Result<DeviceVec<T>> {
    let mut out = DeviceVec::alloc_uninit(v.device(), range.len())?;
    out.copy_from(&v.slice(range)?)?;
    Ok(out)
}

impl<T: Element> ShardedVec<T> {
    /// Exchanges elements between ranks (MPI's `alltoallv`): rank s sends
    /// `counts[s][d]` consecutive elements of its shard to rank d, in order
    /// (row s must add up to shard s's length). Rank d's new shard holds what
    /// it received, in source-rank order. One NCCL group of sends and
    /// receives on a NCCL communicator.
    ///
    /// ```
    /// use cuprim::{multi::{Communicator, ShardedVec}, Device};
    /// let comm = Communicator::in_process(&[Device::host(), Device::host()])?;
    /// let v = ShardedVec::from_slice_with_lens(&comm, &[1u32, 2, 3, 4, 5], &[3, 2])?;
    /// // Rank 0 keeps 1 and sends 2, 3; rank 1 sends 4 and keeps 5.
    /// let w = v.all_to_all(&[vec![1, 2], vec![1, 1]])?;
    /// assert_eq!(w.shard_lens(), vec![2, 3]);
    /// assert_eq!(w.to_vec()?, vec![1, 4, 2, 3, 5]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn all_to_all(&self, counts: &[Vec<usize>]) -> Result<ShardedVec<T>> {
        let ranks = self.communicator().size();
        let lens = self.shard_lens();
        if counts.len() != ranks || counts.iter().any(|row| row.len() != ranks) {
            return Err(Error::InvalidArgument(format!(
                "all_to_all: counts must be {ranks} rows of {ranks} (one per sending and receiving rank)"
            )));
        }
        let mut cuts = Vec::with_capacity(ranks);
        for (s, row) in counts.iter().enumerate() {
            let mut c = Vec::with_capacity(ranks + 1);
            c.push(0usize);
            for &n in row {
                let next = c[c.len() - 1] as u128 + n as u128;
                c.push(next.min(usize::MAX as u128) as usize);
            }
            if c[ranks] != lens[s] || row.iter().map(|&n| n as u128).sum::<u128>() != lens[s] as u128 {
                return Err(Error::InvalidArgument(format!(
                    "all_to_all: rank {s} sends {row:?}, which does not add up to its {} elements",
                    lens[s]
                )));
            }
            cuts.push(c);
        }
        let (shards, _) = exchange(self.communicator(), self.shards(), &cuts)?;
        Ok(ShardedVec::from_parts(self.communicator(), shards))
    }
}
