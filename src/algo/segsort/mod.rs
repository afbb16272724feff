//! Segmented sort: [`segmented_sort`](SegmentedSortOps::segmented_sort)
//! and [`segmented_sort_pairs`](SegmentedSortOps::segmented_sort_pairs)
//! (ascending, descending, or as [`SortOptions`] say) sort many independent
//! pieces of one buffer in one call, in place.
//!
//! # Segments
//! Segment `s` is `offsets[s]..offsets[s + 1]`: `offsets` (`u32` or `u64`,
//! on the keys' device) holds `segments + 1` entries, non-decreasing, the
//! last at most the number of keys. Empty segments are allowed; elements
//! before `offsets[0]` or after the last offset are left as they are.
//! Anything else fails with [`Error::InvalidArgument`] before any element
//! moves (the offsets are read back to the host and checked there).
//!
//! The offsets are anything [`IntoExpr`] with `u32`
//! or `u64` items: a `&DeviceVec`, a `&DeviceSlice`, or an expression such
//! as `counting(&dev, 0u64, 1024, s + 1)` (`s` segments of 1024). A buffer
//! is read in place; any other expression is first collected once into a
//! temporary vector of its `segments + 1` offsets (small next to the keys),
//! because the sort reads the offsets by address in several places (the
//! survey of the segment sizes, each size class's kernel, the read-back
//! check). Collecting checks a permutation: an index out of range fails
//! with [`Error::IndexOutOfBounds`] before any element moves.
//!
//! # Order
//! Each segment is sorted exactly as [`sort_with`](crate::algo::sort::SortMutOps::sort_with)
//! sorts a whole buffer: stably (equal keys, and with
//! [`SortOptions::bits`] keys equal on those bits, keep their input order,
//! descending sorts included), floats in [`f32::total_cmp`] order (`-NaN <
//! -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN`), every element type as a
//! key and as a value.
//!
//! # Algorithm
//! LSD radix sort with 8-bit digits (`kernels/segsort/segsort.cu`), with
//! size classes as CUB's `DeviceSegmentedSort`: segments of at most 128,
//! 1024 and 4096 keys (3072 for pairs with 8-byte keys or values) are each sorted by one block (of 32, 128 and 256
//! threads) entirely in registers and shared memory, one read and one write
//! of every key (and value), with passes only over the span of bits in which
//! the segment's keys differ (uniform floats in [0, 1): 27 bits, four 7-bit
//! passes); longer segments by one block each through
//! global memory (a histogram read, then a read and a write per pass, with
//! device scratch as long as those segments); and a segment longer than
//! 2^17 keys and than an SM's share of that work goes through the
//! device-wide onesweep sort, one call each. Keys alone of at most 4 bytes,
//! sorted by all their bits, take instead a bitonic sorting network in
//! registers for every segment of up to 1024 keys
//! (`kernels/segsort/segsort_bitonic.cu`: one warp per segment, 1 to 32
//! keys a lane as the segment needs): the network is not stable, but equal
//! keys then have equal bits, so no one can tell. The host backend sorts the
//! segments in parallel, each stably by the same key bits.
//!
//! # Expressions
//! [`ExprOps::segmented_sorted`](crate::expr::ExprOps::segmented_sorted)
//! (and `_with`, `_pairs`, `_pairs_with`) sort the keys (and values) of
//! input expressions into new vectors, with the same result as collecting
//! them and sorting in place but no collected copy: the tile kernel loads
//! each short segment from the expression, the global-memory kernel's
//! first pass over a long one reads it (and writes scratch, as the buffer
//! form's first pass does), the device-wide sort's histogram pass reads
//! the longest, and later passes work on the output and scratch as
//! before. Segments of one element and the elements outside every segment
//! are written as they are (one collect of each outside range).

mod host;
pub(crate) mod plan;

pub(crate) use plan::kernel_specs;

use crate::algo::same_device;
use crate::algo::same_len;
use crate::algo::sort::SortOptions;
use crate::algo::transform::plan::Collect;
use crate::algo::HOST_MIN_SPLIT;
use crate::device::{CudaDevice, Ptr};
use crate::element::{Element, IndexElement};
use crate::error::{Error, Result};
use crate::expr::node::{cuda_of, Node};
use crate::expr::{host_items, with_buffer, Expr, IntoExpr};
use crate::vec::raw::{Mem, MemMut, SealedMut as _};
use crate::vec::{DeviceData, DeviceDataMut, DeviceVec};
use rayon::prelude::*;
use std::mem::size_of;

/// A checked bit range and order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SegArgs {
    begin: u32,
    end: u32,
    descending: bool,
    opts: SortOptions,
}

impl SegArgs {
    fn new<K: Element>(opts: SortOptions) -> Result<Self> {
        let (begin, end, descending) = opts.resolve::<K>()?;
        Ok(SegArgs {
            begin,
            end,
            descending,
            opts,
        })
    }

    /// XOR mask that turns ascending order into descending.
    fn flip<K: Element>(&self) -> u64 {
        if !self.descending {
            0
        } else if size_of::<K>() == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * size_of::<K>())) - 1
        }
    }
}

/// The offsets as `u64`, checked against `n` keys.
fn read_offsets<I: IndexElement>(op: &'static str, offsets: &(impl DeviceData<I> + ?Sized), n: usize) -> Result<Vec<u64>> {
    let offs: Vec<u64> = offsets
        .to_vec()?
        .into_par_iter()
        .with_min_len(HOST_MIN_SPLIT)
        .map(|o| o.as_u64())
        .collect();
    if offs.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "{op}: offsets must hold segments + 1 entries (at least one), got none"
        )));
    }
    if let Some(i) = offs.par_windows(2).with_min_len(HOST_MIN_SPLIT).position_first(|w| w[1] < w[0]) {
        return Err(Error::InvalidArgument(format!(
            "{op}: offsets must be non-decreasing, but offsets[{}] = {} is less than offsets[{i}] = {}",
            i + 1,
            offs[i + 1],
            offs[i]
        )));
    }
    let last = offs[offs.len() - 1];
    if last > n as u64 {
        return Err(Error::InvalidArgument(format!(
            "{op}: the last offset ({last}) is past the end of the {n} keys"
        )));
    }
    Ok(offs)
}

/// In-place sorts of each segment of a buffer. In [`prelude`](crate::prelude).
///
/// `I` (the offsets' type) is `u32` or `u64`; see the
/// [module docs](crate::algo::segsort) for what the offsets must be.
pub trait SegmentedSortOps<K: Element>: DeviceDataMut<K> {
    /// Sorts each segment ascending (stable; floats in `total_cmp` order).
    ///
    /// `offsets`: a buffer, or an expression (collected first; see the
    /// [module docs](crate::algo::segsort)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let mut v = DeviceVec::from_slice(&dev, &[3.0f32, 1.0, 2.0, 9.0, -0.0, 0.0, -5.0, f32::NAN])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u32, 3, 3, 4, 8])?;
    /// v.segmented_sort(&offsets)?;
    /// let got: Vec<u32> = v.to_vec()?.iter().map(|x| x.to_bits()).collect();
    /// let want: Vec<u32> = [1.0f32, 2.0, 3.0, 9.0, -5.0, -0.0, 0.0, f32::NAN].iter().map(|x| x.to_bits()).collect();
    /// assert_eq!(got, want);
    /// // Offsets must be non-decreasing and end within the keys.
    /// let bad = DeviceVec::from_slice(&dev, &[0u32, 5, 2, 8])?;
    /// assert!(matches!(v.segmented_sort(&bad), Err(cuprim::Error::InvalidArgument(_))));
    /// // Segments of a fixed length: the offsets 0, 4, 8 as an expression.
    /// let mut w = DeviceVec::from_slice(&dev, &[4u8, 3, 2, 1, 8, 7, 6, 5, 9])?;
    /// w.segmented_sort(counting(&dev, 0u64, 4, 3))?;
    /// assert_eq!(w.to_vec()?, vec![1, 2, 3, 4, 5, 6, 7, 8, 9]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_sort<I: IndexElement>(&mut self, offsets: impl IntoExpr<Expr: Expr<Item = I>>) -> Result<()> {
        self.segmented_sort_with(offsets, SortOptions::new())
    }

    /// Sorts each segment descending (stable).
    ///
    /// `offsets`: a buffer, or an expression (collected first; see the
    /// [module docs](crate::algo::segsort)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let mut v = DeviceVec::from_slice(&dev, &[1i32, 7, 4, -2, 8, 0])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u64, 3, 6])?;
    /// v.segmented_sort_descending(&offsets)?;
    /// assert_eq!(v.to_vec()?, vec![7, 4, 1, 8, 0, -2]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_sort_descending<I: IndexElement>(&mut self, offsets: impl IntoExpr<Expr: Expr<Item = I>>) -> Result<()> {
        self.segmented_sort_with(offsets, SortOptions::new().descending())
    }

    /// Sorts each segment as `opts` says (order, bit range).
    ///
    /// `offsets`: a buffer, or an expression (collected first; see the
    /// [module docs](crate::algo::segsort)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::sort::SortOptions;
    /// let dev = Device::default()?;
    /// let mut v = DeviceVec::from_slice(&dev, &[0x21u32, 0x12, 0x11, 0x32, 0x01])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u32, 3, 5])?;
    /// // By the low 4 bits only: ties keep their order.
    /// v.segmented_sort_with(&offsets, SortOptions::new().bits(0, 4))?;
    /// assert_eq!(v.to_vec()?, vec![0x21, 0x11, 0x12, 0x01, 0x32]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_sort_with<I: IndexElement>(&mut self, offsets: impl IntoExpr<Expr: Expr<Item = I>>, opts: SortOptions) -> Result<()> {
        with_buffer(offsets, |o| sort_in_place(self, o, opts))
    }

    /// Sorts each segment of the keys ascending and applies the same
    /// permutation to `values` (any element type, one per key). Stable.
    ///
    /// `offsets`: a buffer, or an expression (collected first; see the
    /// [module docs](crate::algo::segsort)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let mut keys = DeviceVec::from_slice(&dev, &[2u8, 1, 2, 1, 5, 0])?;
    /// let mut vals = DeviceVec::from_slice(&dev, &[0u32, 1, 2, 3, 4, 5])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u32, 4, 6])?;
    /// keys.segmented_sort_pairs(&offsets, &mut vals)?;
    /// assert_eq!(keys.to_vec()?, vec![1, 1, 2, 2, 0, 5]);
    /// assert_eq!(vals.to_vec()?, vec![1, 3, 0, 2, 5, 4]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_sort_pairs<I: IndexElement, V: Element>(
        &mut self,
        offsets: impl IntoExpr<Expr: Expr<Item = I>>,
        values: &mut impl DeviceDataMut<V>,
    ) -> Result<()> {
        self.segmented_sort_pairs_with(offsets, values, SortOptions::new())
    }

    /// [`segmented_sort_pairs`](SegmentedSortOps::segmented_sort_pairs),
    /// largest key first (stable).
    ///
    /// `offsets`: a buffer, or an expression (collected first; see the
    /// [module docs](crate::algo::segsort)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let mut keys = DeviceVec::from_slice(&dev, &[1.5f64, 4.0, 1.5, 0.5])?;
    /// let mut vals = DeviceVec::from_slice(&dev, &[b'a', b'b', b'c', b'd'])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u64, 4])?;
    /// keys.segmented_sort_pairs_descending(&offsets, &mut vals)?;
    /// assert_eq!(keys.to_vec()?, vec![4.0, 1.5, 1.5, 0.5]);
    /// assert_eq!(vals.to_vec()?, b"bacd".to_vec());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_sort_pairs_descending<I: IndexElement, V: Element>(
        &mut self,
        offsets: impl IntoExpr<Expr: Expr<Item = I>>,
        values: &mut impl DeviceDataMut<V>,
    ) -> Result<()> {
        self.segmented_sort_pairs_with(offsets, values, SortOptions::new().descending())
    }

    /// [`segmented_sort_pairs`](SegmentedSortOps::segmented_sort_pairs) as
    /// `opts` says. Fails with [`Error::LengthMismatch`] unless `values` has
    /// one value per key, and with [`Error::DeviceMismatch`] unless keys,
    /// values and offsets live on one device; nothing is changed then.
    ///
    /// `offsets`: a buffer, or an expression (collected first; see the
    /// [module docs](crate::algo::segsort)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::sort::SortOptions;
    /// let dev = Device::default()?;
    /// let mut keys = DeviceVec::from_slice(&dev, &[3u32, 1, 2])?;
    /// let mut vals = DeviceVec::from_slice(&dev, &[30u64, 10, 20])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u32, 3])?;
    /// keys.segmented_sort_pairs_with(&offsets, &mut vals, SortOptions::new().descending())?;
    /// assert_eq!(vals.to_vec()?, vec![30, 20, 10]);
    /// let mut short = DeviceVec::from_slice(&dev, &[0u64])?;
    /// assert!(matches!(
    ///     keys.segmented_sort_pairs(&offsets, &mut short),
    ///     Err(cuprim::Error::LengthMismatch { .. })
    /// ));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_sort_pairs_with<I: IndexElement, V: Element>(
        &mut self,
        offsets: impl IntoExpr<Expr: Expr<Item = I>>,
        values: &mut impl DeviceDataMut<V>,
        opts: SortOptions,
    ) -> Result<()> {
        with_buffer(offsets, |o| sort_pairs_in_place(self, o, values, opts))
    }
}

impl<K: Element, D: DeviceDataMut<K> + ?Sized> SegmentedSortOps<K> for D {}

/// [`SegmentedSortOps::segmented_sort_with`] with the offsets a buffer.
fn sort_in_place<K: Element, I: IndexElement>(
    keys: &mut (impl DeviceDataMut<K> + ?Sized),
    offsets: &(impl DeviceData<I> + ?Sized),
    opts: SortOptions,
) -> Result<()> {
    const OP: &str = "segmented_sort";
    same_device(OP, keys.device(), offsets.device())?;
    let args = SegArgs::new::<K>(opts)?;
    let n = keys.len() as u64;
    // The regular case needs nothing read back but a survey of the offsets.
    if let (MemMut::Cuda { dev, ptr, .. }, Mem::Cuda { ptr: optr, len, .. }) = (keys.mem_mut(), offsets.mem()) {
        let segments = (len as u64).saturating_sub(1);
        if plan::sort_segments_surveyed::<K, K, I>(dev, Ptr::from_raw(ptr), None, Ptr::from_raw(optr), segments, n, &args)? {
            return Ok(());
        }
    }
    let offs = read_offsets(OP, offsets, keys.len())?;
    match (keys.mem_mut(), offsets.mem()) {
        (MemMut::Host(k), Mem::Host(_)) => {
            host::sort_segments(k, &offs, args.begin, args.end, args.descending);
            Ok(())
        }
        (MemMut::Cuda { dev, ptr, .. }, Mem::Cuda { ptr: optr, .. }) => {
            plan::sort_segments::<K, K, I>(dev, Ptr::from_raw(ptr), None, Ptr::from_raw(optr), &offs, &args)
        }
        _ => Err(Error::DeviceMismatch { op: OP }),
    }
}

/// [`SegmentedSortOps::segmented_sort_pairs_with`] with the offsets a buffer.
fn sort_pairs_in_place<K: Element, V: Element, I: IndexElement>(
    keys: &mut (impl DeviceDataMut<K> + ?Sized),
    offsets: &(impl DeviceData<I> + ?Sized),
    values: &mut (impl DeviceDataMut<V> + ?Sized),
    opts: SortOptions,
) -> Result<()> {
    const OP: &str = "segmented_sort_pairs";
    same_device(OP, keys.device(), values.device())?;
    same_device(OP, keys.device(), offsets.device())?;
    same_len(OP, keys.len(), values.len())?;
    let args = SegArgs::new::<K>(opts)?;
    let n = keys.len() as u64;
    if let (MemMut::Cuda { dev, ptr, .. }, MemMut::Cuda { ptr: vptr, .. }, Mem::Cuda { ptr: optr, len, .. }) =
        (keys.mem_mut(), values.mem_mut(), offsets.mem())
    {
        let segments = (len as u64).saturating_sub(1);
        let (kp, vals, offs) = (Ptr::from_raw(ptr), Some(Ptr::from_raw(vptr)), Ptr::from_raw(optr));
        if plan::sort_segments_surveyed::<K, V, I>(dev, kp, vals, offs, segments, n, &args)? {
            return Ok(());
        }
    }
    let offs = read_offsets(OP, offsets, keys.len())?;
    match (keys.mem_mut(), values.mem_mut(), offsets.mem()) {
        (MemMut::Host(k), MemMut::Host(v), Mem::Host(_)) => {
            host::sort_segments_pairs(k, v, &offs, args.begin, args.end, args.descending);
            Ok(())
        }
        (MemMut::Cuda { dev, ptr, .. }, MemMut::Cuda { ptr: vptr, .. }, Mem::Cuda { ptr: optr, .. }) => plan::sort_segments::<K, V, I>(
            dev,
            Ptr::from_raw(ptr),
            Some(Ptr::from_raw(vptr)),
            Ptr::from_raw(optr),
            &offs,
            &args,
        ),
        _ => Err(Error::DeviceMismatch { op: OP }),
    }
}

/// The keys an input expression yields, each segment sorted, into a new
/// vector ([`ExprOps::segmented_sorted_with`](crate::expr::ExprOps::segmented_sorted_with)):
/// on CUDA, for keys the bitonic kernel takes, the expression is written
/// out and sorted in place; otherwise each segment's first read (the tile
/// kernel's load, the global-memory kernel's first pass, the device-wide
/// sort's histogram) is of the expression, and the elements outside every
/// segment are written as they are.
pub(crate) fn segmented_sorted_of<KE: Node, I: IndexElement>(
    keys: &KE,
    offsets: &(impl DeviceData<I> + ?Sized),
    opts: SortOptions,
) -> Result<DeviceVec<KE::Item>>
where
    KE::Item: Element,
{
    const OP: &str = "segmented_sorted";
    keys.validate()?;
    same_device(OP, keys.device_ref(), offsets.device())?;
    let args = SegArgs::new::<KE::Item>(opts)?;
    let n = keys.length();
    let mut out = DeviceVec::<KE::Item>::alloc_uninit(keys.device_ref(), n)?;
    match (cuda_of(keys), out.mem_mut()) {
        (None, MemMut::Host(o)) => {
            let offs = read_offsets(OP, offsets, n)?;
            o.copy_from_slice(&host_items(keys)?);
            host::sort_segments(o, &offs, args.begin, args.end, args.descending);
        }
        (Some(dev), MemMut::Cuda { ptr, .. }) if plan::bitonic::<KE::Item>(false, false, &args) => {
            // Keys the bitonic kernel sorts in place: the expression written
            // out once, then sorted there, costs less than the radix tiles
            // reading it (H200, f32 in segments of 1024 at 2^24: 150.8 us
            // against 235.2, run h200-bitonic-85b8acd).
            Collect::new(dev.arch(), keys, 1).run(dev, [Ptr::from_raw(ptr), Ptr::null(), Ptr::null()])?;
            sort_from(
                OP,
                dev,
                &plan::Target::<KE::Item, KE::Item, _>::in_place(Ptr::from_raw(ptr), None),
                offsets,
                n,
                &args,
            )?
        }
        (Some(dev), MemMut::Cuda { ptr, .. }) => {
            let target = plan::Target::<KE::Item, KE::Item, KE> {
                keys: Ptr::from_raw(ptr),
                values: None,
                input: Some(keys),
            };
            sort_from(OP, dev, &target, offsets, n, &args)?
        }
        _ => return Err(Error::DeviceMismatch { op: OP }),
    }
    Ok(out)
}

/// Keys and values from input expressions, each segment sorted by key,
/// into two new vectors ([`ExprOps::segmented_sorted_pairs_with`](crate::expr::ExprOps::segmented_sorted_pairs_with)):
/// the first reads are of both expressions.
#[allow(clippy::type_complexity)]
pub(crate) fn segmented_sorted_pairs_of<KE: Node, VE: Node, I: IndexElement>(
    keys: &KE,
    values: &VE,
    offsets: &(impl DeviceData<I> + ?Sized),
    opts: SortOptions,
) -> Result<(DeviceVec<KE::Item>, DeviceVec<VE::Item>)>
where
    KE::Item: Element,
    VE::Item: Element,
{
    const OP: &str = "segmented_sorted_pairs";
    keys.validate()?;
    values.validate()?;
    same_device(OP, keys.device_ref(), values.device_ref())?;
    same_device(OP, keys.device_ref(), offsets.device())?;
    same_len(OP, keys.length(), values.length())?;
    let args = SegArgs::new::<KE::Item>(opts)?;
    let (n, d) = (keys.length(), keys.device_ref());
    let mut ko = DeviceVec::<KE::Item>::alloc_uninit(d, n)?;
    let mut vo = DeviceVec::<VE::Item>::alloc_uninit(d, n)?;
    match (cuda_of(keys), ko.mem_mut(), vo.mem_mut()) {
        (None, MemMut::Host(k), MemMut::Host(v)) => {
            let offs = read_offsets(OP, offsets, n)?;
            k.copy_from_slice(&host_items(keys)?);
            v.copy_from_slice(&host_items(values)?);
            host::sort_segments_pairs(k, v, &offs, args.begin, args.end, args.descending);
        }
        (Some(dev), MemMut::Cuda { ptr: kp, .. }, MemMut::Cuda { ptr: vp, .. }) => {
            let both = crate::expr::zip(keys.clone(), values.clone());
            let target = plan::Target {
                keys: Ptr::<KE::Item>::from_raw(kp),
                values: Some(Ptr::<VE::Item>::from_raw(vp)),
                input: Some(&both),
            };
            sort_from(OP, dev, &target, offsets, n, &args)?
        }
        _ => return Err(Error::DeviceMismatch { op: OP }),
    }
    Ok((ko, vo))
}

/// The CUDA sort of an expression into `target`: through the survey of
/// the offsets when one tile class holds every segment, else with the
/// offsets read back and checked (an error before anything is read).
fn sort_from<K: Element, V: Element, I: IndexElement, X: Node>(
    op: &'static str,
    dev: &CudaDevice,
    target: &plan::Target<'_, K, V, X>,
    offsets: &(impl DeviceData<I> + ?Sized),
    n: usize,
    args: &SegArgs,
) -> Result<()> {
    let Mem::Cuda { ptr, len, .. } = offsets.mem() else {
        return Err(Error::DeviceMismatch { op });
    };
    let optr = Ptr::<I>::from_raw(ptr);
    let segments = (len as u64).saturating_sub(1);
    if plan::sort_segments_surveyed_of(dev, target, optr, segments, n as u64, args)? {
        return Ok(());
    }
    let offs = read_offsets(op, offsets, n)?;
    plan::sort_segments_of(dev, target, optr, &offs, args)
}
