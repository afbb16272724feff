//! Scans: `scan` (inclusive), `scan_inclusive`, `scan_exclusive`, and
//! their in-place forms, for any [`Monoid`] — commutativity is not needed,
//! the order of the elements is kept.
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

use crate::device::{kernel_args, CudaDevice, FastKey, COUNTER_SCAN_BY_KEY_TILE, COUNTER_SCAN_TILE};
use crate::element::Element;
use crate::error::{DriverContext, Error, Result};
use crate::host;
use crate::jit::source::{SCAN, SCAN_BY_KEY};
use crate::jit::KernelSpec;
use crate::ops::Monoid;
use crate::tuning;
use crate::vec::raw::{Mem, MemMut, SealedMut as _};
use crate::vec::{DeviceData, DeviceDataMut, DeviceVec};

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
        crate::algo::same_device("scan_by_key", self.device(), keys.device())?;
        crate::algo::same_len("scan_by_key", self.len(), keys.len())?;
        let mut out = DeviceVec::alloc_uninit(self.device(), self.len())?;
        match (keys.mem(), self.mem(), out.mem_mut()) {
            (Mem::Host(k), Mem::Host(v), MemMut::Host(o)) => host::scan::scan_by_key(k, v, o, |a, b| op.apply(a, b)),
            (Mem::Cuda { ptr: k, .. }, Mem::Cuda { dev, ptr: v, len, .. }, MemMut::Cuda { ptr: o, .. }) => {
                launch_scan_by_key::<K, T, Op>(dev, k, v, o, len, &op)?
            }
            _ => return Err(Error::DeviceMismatch { op: "scan_by_key" }),
        }
        Ok(out)
    }
}

impl<T: Element, D: DeviceData<T> + ?Sized> ScanOps<T> for D {}

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

/// An operator's CUDA text and identity: what makes its kernels differ.
pub(crate) fn monoid_text<T: Element, Op: Monoid<T>>(op: &Op) -> String {
    let mut text = op.cuda_expr();
    text.push('|');
    text.push_str(&op.identity().cuda_literal());
    text
}

/// The scan kernel for `T` and `Op`.
pub(crate) fn scan_spec<T: Element, Op: Monoid<T>>(arch: u32, op: &Op, deterministic: bool) -> (KernelSpec, tuning::ScanPolicy) {
    let policy = tuning::scan(arch, std::mem::size_of::<T>());
    let spec = KernelSpec::new(&SCAN)
        .constant("CUPRIM_BLOCK", policy.block as i64)
        .constant("CUPRIM_ITEMS", policy.items as i64)
        .constant("CUPRIM_MIN_BLOCKS", policy.min_blocks as i64)
        .constant("CUPRIM_DETERMINISTIC", deterministic as i64)
        .constant(
            "CUPRIM_LOOKBACK_WINDOWS",
            tuning::scan_lookback_windows(arch, std::mem::size_of::<T>()) as i64,
        )
        .elem::<T>("T")
        .monoid::<T, Op>("ScanOp", "T", op);
    (spec, policy)
}

fn scan_into<T: Element, Op: Monoid<T>>(src: Mem<'_, T>, dst: MemMut<'_, T>, op: &Op, exclusive: bool) -> Result<()> {
    match (src, dst) {
        (Mem::Host(s), MemMut::Host(d)) => {
            host::scan::scan(s, d, op.identity(), exclusive, |a, b| op.apply(a, b));
            Ok(())
        }
        (Mem::Cuda { dev, ptr, len, .. }, MemMut::Cuda { ptr: out, .. }) => launch_scan::<T, Op>(dev, ptr, out, len, op, exclusive),
        _ => Err(Error::DeviceMismatch { op: "scan" }),
    }
}

fn scan_in_place<T: Element, Op: Monoid<T>>(data: MemMut<'_, T>, op: &Op, exclusive: bool) -> Result<()> {
    match data {
        MemMut::Host(d) => {
            host::scan::scan_in_place(d, op.identity(), exclusive, |a, b| op.apply(a, b));
            Ok(())
        }
        // In place is safe: a tile reads all of its input before it writes,
        // and no tile reads another tile's elements.
        MemMut::Cuda { dev, ptr, len, .. } => launch_scan::<T, Op>(dev, ptr, ptr, len, op, exclusive),
    }
}

/// Scratch layout of the look-back state of `tiles` tiles (see
/// `kernels/lookback.cuh`): values of at most 4 bytes are packed with their
/// status into one 64-bit word per tile, values of at most 8 bytes into one
/// 16-byte word; larger ones get a status word plus aggregate and prefix
/// arrays. Every region is 16-byte aligned.
pub(crate) struct LookbackLayout {
    pub status: u64,
    pub aggregates: u64,
    pub prefixes: u64,
    pub bytes: usize,
    /// 32-bit words to clear before a launch.
    pub status_words: usize,
    /// 32-bit words per tile in the status region (2 or 4 when packed).
    words_per_tile: usize,
}

impl LookbackLayout {
    pub fn new(tiles: u64, value_bytes: usize) -> LookbackLayout {
        let tiles = tiles as usize;
        let words_per_tile = match value_bytes {
            0..=4 => 2,
            5..=8 => 4,
            _ => 1,
        };
        let status_words = words_per_tile * tiles;
        let status_bytes = (4 * status_words).next_multiple_of(16);
        let values = if words_per_tile > 1 {
            0
        } else {
            (tiles * value_bytes).next_multiple_of(16)
        };
        LookbackLayout {
            status: 0,
            aggregates: status_bytes as u64,
            prefixes: (status_bytes + values) as u64,
            bytes: status_bytes + 2 * values,
            status_words,
            words_per_tile,
        }
    }

    /// Where tile `tile`'s inclusive prefix ends up, relative to the base:
    /// the value half of its packed word (low half of a 64-bit word, second
    /// half of a 16-byte one), or its slot in the prefix array.
    pub fn prefix_offset(&self, tile: u64, value_bytes: usize) -> u64 {
        match self.words_per_tile {
            2 => self.status + 8 * tile,
            4 => self.status + 16 * tile + 8,
            _ => self.prefixes + value_bytes as u64 * tile,
        }
    }
}

fn launch_scan<T: Element, Op: Monoid<T>>(dev: &CudaDevice, src: u64, dst: u64, len: usize, op: &Op, exclusive: bool) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let policy = tuning::scan(dev.arch, std::mem::size_of::<T>());
    let det = dev.deterministic_for::<T>();
    let key = FastKey::new::<T, Op, ()>(if det { "scan_det" } else { "scan" }, monoid_text(op));
    let module = dev.module_for(key, || scan_spec::<T, Op>(dev.arch, op, det).0)?;
    let tiles = (len as u64).div_ceil(policy.tile());
    let num_tiles =
        u32::try_from(tiles).map_err(|_| Error::InvalidArgument(format!("scan of {len} elements needs more than 2^32 tiles")))?;
    let layout = LookbackLayout::new(tiles, std::mem::size_of::<T>());
    let (n, excl, counter) = (len as u64, exclusive as i32, dev.counters_ptr + 4 * COUNTER_SCAN_TILE);
    dev.with_scratch(layout.bytes, |base| {
        let (status, aggs, prefixes) = (base + layout.status, base + layout.aggregates, base + layout.prefixes);
        // SAFETY: the memset clears `tiles` status words inside scratch; then
        // cuprim_scan(const T* in, T* out, u64 n, int exclusive, u32* status,
        // T* aggregates, T* prefixes, u32* tile_counter, u32 num_tiles): in and
        // out hold n elements (they may alias), the three look-back arrays hold
        // `tiles` entries each, the tile counter is the device's zeroed counter
        // (the last tile resets it), and one block runs per tile.
        unsafe {
            cudarc::driver::sys::cuMemsetD32Async(status, 0, layout.status_words, dev.stream.cu_stream())
                .result()
                .during("clearing scan state")?;
            dev.launch(
                module.function("cuprim_scan")?,
                num_tiles,
                policy.block,
                0,
                &mut kernel_args![&src, &dst, &n, &excl, &status, &aggs, &prefixes, &counter, &num_tiles],
            )
        }
    })
}

/// The scan-by-key kernel for keys `K`, values `T` and `Op`.
pub(crate) fn scan_by_key_spec<K: Element, T: Element, Op: Monoid<T>>(
    arch: u32,
    op: &Op,
    deterministic: bool,
) -> (KernelSpec, tuning::ScanPolicy) {
    let policy = tuning::scan_by_key(arch, std::mem::size_of::<T>().max(std::mem::size_of::<K>()));
    let spec = KernelSpec::new(&SCAN_BY_KEY)
        .constant("CUPRIM_BLOCK", policy.block as i64)
        .constant("CUPRIM_ITEMS", policy.items as i64)
        .constant("CUPRIM_MIN_BLOCKS", policy.min_blocks as i64)
        .constant("CUPRIM_DETERMINISTIC", deterministic as i64)
        .constant(
            "CUPRIM_LOOKBACK_WINDOWS",
            tuning::scan_lookback_windows(arch, std::mem::size_of::<T>().max(std::mem::size_of::<K>())) as i64,
        )
        .elem::<K>("K")
        .elem::<T>("T")
        .monoid::<T, Op>("ScanOp", "T", op);
    (spec, policy)
}

fn launch_scan_by_key<K: Element, T: Element, Op: Monoid<T>>(
    dev: &CudaDevice,
    keys: u64,
    values: u64,
    out: u64,
    len: usize,
    op: &Op,
) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let policy = tuning::scan_by_key(dev.arch, std::mem::size_of::<T>().max(std::mem::size_of::<K>()));
    let det = dev.deterministic_for::<T>();
    let key = FastKey::new::<K, T, Op>(if det { "scan_by_key_det" } else { "scan_by_key" }, monoid_text(op));
    let module = dev.module_for(key, || scan_by_key_spec::<K, T, Op>(dev.arch, op, det).0)?;
    let tiles = (len as u64).div_ceil(policy.tile());
    let num_tiles =
        u32::try_from(tiles).map_err(|_| Error::InvalidArgument(format!("scan_by_key of {len} elements needs more than 2^32 tiles")))?;
    // SegPair { T v; u32 head; }: at most 16 bytes.
    let pair_bytes = (std::mem::size_of::<T>() + 4).next_multiple_of(std::mem::align_of::<T>().max(4));
    let layout = LookbackLayout::new(tiles, pair_bytes);
    let (n, counter) = (len as u64, dev.counters_ptr + 4 * COUNTER_SCAN_BY_KEY_TILE);
    dev.with_scratch(layout.bytes, |base| {
        let (status, aggs, prefixes) = (base + layout.status, base + layout.aggregates, base + layout.prefixes);
        // SAFETY: the memset clears `tiles` status words in scratch; then
        // cuprim_scan_by_key(const K* keys, const T* values, T* out, u64 n,
        // u32* status, SegPair* aggregates, SegPair* prefixes, u32* counter,
        // u32 tiles): keys, values and out hold n elements, the look-back
        // arrays hold `tiles` pairs of `pair_bytes`, one block per tile.
        unsafe {
            cudarc::driver::sys::cuMemsetD32Async(status, 0, layout.status_words, dev.stream.cu_stream())
                .result()
                .during("clearing scan_by_key state")?;
            dev.launch(
                module.function("cuprim_scan_by_key")?,
                num_tiles,
                policy.block,
                0,
                &mut kernel_args![&keys, &values, &out, &n, &status, &aggs, &prefixes, &counter, &num_tiles],
            )
        }
    })
}
