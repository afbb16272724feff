//! The exchange under a [`Communicator`](super::Communicator): the three
//! collectives the sharded algorithms need, over raw memory of each rank's
//! device. Two implementations: NCCL ([`super::nccl`]) and the in-process
//! [`Local`] exchange, which copies through the devices' own streams (or the
//! host) and so runs anywhere: several shards on one GPU, or on the host
//! backend in CI.
//!
//! Addresses are `u64`: a device address on a CUDA device, a host address on
//! the host backend. Every call is queued on the ranks' streams in order
//! with their other work (NCCL), or completes before it returns (`Local`
//! between different devices or on the host).

use crate::device::{Backend, Device, Ptr};
use crate::error::{Error, Result};

/// The element type of an all-reduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Word {
    U32,
    U64,
}

impl Word {
    pub fn bytes(self) -> usize {
        match self {
            Word::U32 => 4,
            Word::U64 => 8,
        }
    }
}

/// One block of an all-to-all: `bytes` bytes from the sender's buffer at
/// byte offset `from` to the receiver's buffer at byte offset `to`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Move {
    pub from: usize,
    pub to: usize,
    pub bytes: usize,
}

/// The collectives of a communicator. Implementations order each call on
/// the ranks' streams after the work queued before it.
pub(crate) trait Transport: Send + Sync {
    /// "NCCL" or "in-process", for messages and `Debug`.
    fn kind(&self) -> &'static str;

    /// Rank r's device.
    fn devices(&self) -> &[Device];

    /// Every rank's `bytes` bytes at `send[r]`, in rank order, into every
    /// `recv[r]` (`ranks * bytes` bytes).
    ///
    /// # Safety
    /// `send[r]` and `recv[r]` address live memory of that size on rank r's
    /// device, each `recv[r]` disjoint from every `send`.
    unsafe fn all_gather(&self, send: &[u64], recv: &[u64], bytes: usize) -> Result<()>;

    /// Element-wise wrapping sum over the ranks of `count` words at `bufs[r]`,
    /// left in every `bufs[r]`.
    ///
    /// # Safety
    /// `bufs[r]` addresses `count` live words on rank r's device.
    unsafe fn all_reduce_sum(&self, bufs: &[u64], count: usize, word: Word) -> Result<()>;

    /// `moves[s][d]` from rank s's `send[s]` to rank d's `recv[d]`.
    ///
    /// # Safety
    /// Every move stays inside live memory: `send[s] + from .. + bytes` on
    /// rank s's device, `recv[d] + to .. + bytes` on rank d's; the
    /// destinations of different moves do not overlap, nor any source.
    unsafe fn all_to_all(&self, send: &[u64], recv: &[u64], moves: &[Vec<Move>]) -> Result<()>;
}

/// The in-process exchange: copies between the ranks' buffers. Ranks may
/// share a device; on one device the copies are queued on its stream,
/// between devices they go through the host (and wait).
pub(crate) struct Local {
    devices: Vec<Device>,
}

impl Local {
    /// All devices must be CUDA devices, or all the host backend.
    pub fn new(devices: &[Device]) -> Result<Local> {
        let hosts = devices.iter().filter(|d| d.is_host()).count();
        if hosts != 0 && hosts != devices.len() {
            return Err(Error::InvalidArgument(
                "an in-process communicator's devices must all be CUDA devices or all the host backend".into(),
            ));
        }
        Ok(Local { devices: devices.to_vec() })
    }

    /// Copies `bytes` bytes from `src` on rank `s` to `dst` on rank `d`.
    ///
    /// # Safety
    /// The ranges are live on those ranks' devices and do not overlap.
    unsafe fn copy(&self, s: usize, src: u64, d: usize, dst: u64, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let what = "copying between shards";
        match (self.devices[s].backend(), self.devices[d].backend()) {
            // SAFETY: both ranges are live host memory, disjoint (caller).
            (Backend::Host, Backend::Host) => unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, bytes) },
            (Backend::Cuda(_), Backend::Cuda(b)) if self.devices[s].same(&self.devices[d]) => {
                b.copy(Ptr::<u8>::from_raw(dst), Ptr::from_raw(src), bytes as u64, what)?
            }
            (Backend::Cuda(a), Backend::Cuda(b)) => {
                let mut staged = vec![0u8; bytes];
                a.download(&mut staged, Ptr::from_raw(src), what)?;
                b.upload(Ptr::from_raw(dst), &staged, what)?;
            }
            _ => unreachable!("Local::new admits no mixed devices"),
        }
        Ok(())
    }

    /// Reads `bytes` bytes of rank `r` into a host vector.
    ///
    /// # Safety
    /// The range is live on rank r's device.
    unsafe fn read(&self, r: usize, src: u64, bytes: usize) -> Result<Vec<u8>> {
        let mut out = vec![0u8; bytes];
        match self.devices[r].backend() {
            // SAFETY: the range is live host memory (caller).
            Backend::Host => unsafe { std::ptr::copy_nonoverlapping(src as *const u8, out.as_mut_ptr(), bytes) },
            Backend::Cuda(c) => c.download(&mut out, Ptr::from_raw(src), "reading a shard's words")?,
        }
        Ok(out)
    }

    /// Writes `data` to rank `r` at `dst`.
    ///
    /// # Safety
    /// The range is live on rank r's device.
    unsafe fn write(&self, r: usize, dst: u64, data: &[u8]) -> Result<()> {
        match self.devices[r].backend() {
            // SAFETY: the range is live host memory (caller).
            Backend::Host => unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst as *mut u8, data.len()) },
            Backend::Cuda(c) => c.upload(Ptr::from_raw(dst), data, "writing a shard's words")?,
        }
        Ok(())
    }
}

impl Transport for Local {
    fn kind(&self) -> &'static str {
        "in-process"
    }

    fn devices(&self) -> &[Device] {
        &self.devices
    }

    unsafe fn all_gather(&self, send: &[u64], recv: &[u64], bytes: usize) -> Result<()> {
        for (d, &to) in recv.iter().enumerate() {
            for (s, &from) in send.iter().enumerate() {
                // SAFETY: the caller's contract for all_gather covers each block.
                unsafe { self.copy(s, from, d, to + (s * bytes) as u64, bytes)? };
            }
        }
        Ok(())
    }

    unsafe fn all_reduce_sum(&self, bufs: &[u64], count: usize, word: Word) -> Result<()> {
        let bytes = count * word.bytes();
        let mut total = vec![0u64; count];
        for (r, &at) in bufs.iter().enumerate() {
            // SAFETY: bufs[r] holds `count` words on rank r (caller).
            let raw = unsafe { self.read(r, at, bytes)? };
            for (t, w) in total.iter_mut().zip(raw.chunks_exact(word.bytes())) {
                *t = t.wrapping_add(match word {
                    Word::U32 => u32::from_le_bytes(w.try_into().unwrap()) as u64,
                    Word::U64 => u64::from_le_bytes(w.try_into().unwrap()),
                });
            }
        }
        let raw: Vec<u8> = match word {
            Word::U32 => total.iter().flat_map(|&t| (t as u32).to_le_bytes()).collect(),
            Word::U64 => total.iter().flat_map(|&t| t.to_le_bytes()).collect(),
        };
        for (r, &at) in bufs.iter().enumerate() {
            // SAFETY: as above.
            unsafe { self.write(r, at, &raw)? };
        }
        Ok(())
    }

    unsafe fn all_to_all(&self, send: &[u64], recv: &[u64], moves: &[Vec<Move>]) -> Result<()> {
        for (s, row) in moves.iter().enumerate() {
            for (d, m) in row.iter().enumerate() {
                // SAFETY: the caller's contract for all_to_all covers each move.
                unsafe { self.copy(s, send[s] + m.from as u64, d, recv[d] + m.to as u64, m.bytes)? };
            }
        }
        Ok(())
    }
}
