//! Top-k and selection: [`top_k`](TopKOps::top_k) (the k largest or
//! smallest elements with their indices, sorted), the same over every row
//! of a matrix or every segment ([`top_k_rows`](TopKOps::top_k_rows),
//! [`top_k_segments`](TopKOps::top_k_segments)),
//! [`select_nth`](TopKOps::select_nth) and
//! [`partial_sort`](TopKMutOps::partial_sort).
//!
//! # Order
//! Elements are ordered as [`sort`](crate::algo::sort) orders them: integers
//! by value, floats by [`f32::total_cmp`] (`-NaN < -inf < ... < -0.0 < +0.0
//! < ... < +inf < +NaN`). So a positive NaN is the largest value and comes
//! first in a largest-k, as in `torch.topk`; filter NaNs out first
//! ([`copy_if`](crate::algo::select::SelectOps::copy_if) with
//! [`Not(IsNan)`](crate::pred::Not)) to leave them out. Among equal
//! elements the lower index comes first, so results are deterministic.
//!
//! # Algorithm
//! A sampled window, then radix select (see `kernels/topk/topk.cu`). One
//! block picks two of 8192 evenly spaced elements that bracket the k-th
//! with high probability; one read of the input keeps the elements between
//! them as candidates, and the host reads their count (the one wait per
//! call: for the verdict, which the finishing kernel stores to host memory
//! as it starts, not for the stream). A few candidates are finished by one block;
//! more go through radix-select passes (after AIR Top-K, Zhang et al.,
//! SC'23): each histograms one 11-bit digit of the elements still in the
//! running and chooses, on the device, the bucket that holds the k-th. Ties
//! are broken by the index as further digits. When the count shows that
//! the window missed the k-th (an input ordered against the sample), the
//! passes run on the whole input: slower, never wrong. The k picked are
//! then sorted (in shared memory up to 2048, else by the radix sort).
//! Inputs of at most 2^14 elements, and each row or segment of the batched
//! forms, are handled by one block in shared memory (long ones through the
//! same window first).
//!
//! # Expressions
//! [`ExprOps::top_k`](crate::expr::ExprOps::top_k),
//! [`top_k_with`](crate::expr::ExprOps::top_k_with) and
//! [`select_nth`](crate::expr::ExprOps::select_nth) select from an input
//! expression with the result of the same call on the collected vector
//! (values, indices, ties), without collecting it: the module compiled for
//! the expression reads it wherever the buffer form reads the input (the
//! sample, the filter's one read, each radix pass over the input, the
//! one-block form), each read evaluating it again; candidates and picks
//! are kept as for a buffer. A pass that must re-read the whole input (a
//! window that missed) evaluates the expression once more rather than
//! reading a copy.

pub(crate) mod host;
pub(crate) mod plan;

use crate::algo::cuda_ptr_mut;
use crate::algo::sort::from_ordered_bits;
use crate::device::Ptr;
use crate::element::{Element, IndexElement, Scalar};
use crate::error::{Error, Result};
use crate::expr::host_items;
use crate::expr::node::{cuda_of, Node};
use crate::ops::Arith;
use crate::vec::raw::{Mem, MemMut, Sealed as _};
use crate::vec::{DeviceData, DeviceDataMut, DeviceVec};
use plan::{Picks, Segments};
use std::mem::size_of;

/// Which end of the order [`top_k_with`](TopKOps::top_k_with) takes.
///
/// ```
/// # use cuprim::prelude::*;
/// use cuprim::algo::topk::TopKOptions;
/// let v = DeviceVec::from_slice(&Device::default()?, &[4i32, -2, 9, -2, 0])?;
/// let low = v.top_k_with::<u32>(2, TopKOptions::smallest())?;
/// assert_eq!(low.values.to_vec()?, vec![-2, -2]);
/// assert_eq!(low.indices.to_vec()?, vec![1, 3]);
/// # Ok::<(), cuprim::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TopKOptions {
    smallest: bool,
}

impl TopKOptions {
    /// The largest first (the default).
    pub fn largest() -> Self {
        TopKOptions { smallest: false }
    }

    /// The smallest first.
    pub fn smallest() -> Self {
        TopKOptions { smallest: true }
    }

    /// True for [`smallest`](TopKOptions::smallest).
    pub fn is_smallest(&self) -> bool {
        self.smallest
    }
}

/// The result of a top-k: `values[i]` is element `indices[i]` of the input
/// (of its row or segment, for the batched forms), in the order of the
/// selection (largest first unless the smallest were asked for).
///
/// ```
/// # use cuprim::prelude::*;
/// let v = DeviceVec::from_slice(&Device::default()?, &[0.5f32, 2.0, -1.0])?;
/// let top = v.top_k(1)?;
/// assert_eq!((top.values.to_vec()?, top.indices.to_vec()?), (vec![2.0], vec![1]));
/// # Ok::<(), cuprim::Error>(())
/// ```
pub struct TopK<T: Element, I: Element = u32> {
    /// The chosen elements.
    pub values: DeviceVec<T>,
    /// Their indices.
    pub indices: DeviceVec<I>,
}

impl<T: Element, I: Element> std::fmt::Debug for TopK<T, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TopK").field("len", &self.values.len()).finish()
    }
}

impl<T: Element, I: Element> TopK<T, I> {
    /// Results computed on the host, as vectors on `dev`.
    fn upload(dev: &crate::Device, values: &[T], indices: &[I]) -> Result<Self> {
        Ok(TopK {
            values: DeviceVec::from_slice(dev, values)?,
            indices: DeviceVec::from_slice(dev, indices)?,
        })
    }

    /// `len` slots of each on the CUDA device `dev`, for a kernel to fill,
    /// and their addresses.
    fn slots(dev: &crate::Device, len: usize) -> Result<(Self, Picks<T, I>)> {
        let mut out = TopK {
            values: DeviceVec::<T>::alloc_uninit(dev, len)?,
            indices: DeviceVec::<I>::alloc_uninit(dev, len)?,
        };
        let picks = Picks {
            values: cuda_ptr_mut(&mut out.values, "top_k")?,
            indices: cuda_ptr_mut(&mut out.indices, "top_k")?,
        };
        Ok((out, picks))
    }
}

/// Top-k and selection. In [`prelude`](crate::prelude).
pub trait TopKOps<T: Element>: DeviceData<T> {
    /// The `k` largest elements, largest first, and their `u32` indices
    /// (ties: the lower index first). `k = 0` gives empty results; `k`
    /// larger than the input is [`Error::InvalidArgument`], as is an input
    /// of more than 2^32 elements (use [`top_k_with`](TopKOps::top_k_with)
    /// with `u64` indices).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[3u32, 9, 1, 9, 7])?;
    /// let top = v.top_k(3)?;
    /// assert_eq!(top.values.to_vec()?, vec![9, 9, 7]);
    /// assert_eq!(top.indices.to_vec()?, vec![1, 3, 4]);
    /// assert!(v.top_k(6).is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn top_k(&self, k: usize) -> Result<TopK<T, u32>> {
        self.top_k_with(k, TopKOptions::largest())
    }

    /// [`top_k`](TopKOps::top_k) with the smallest first if `opts` says so,
    /// and indices of type `I` (`u32` or `u64`).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::topk::TopKOptions;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1.5f64, f64::NAN, -0.0, 0.0])?;
    /// let low = v.top_k_with::<u64>(2, TopKOptions::smallest())?;
    /// assert_eq!(low.indices.to_vec()?, vec![2, 3]); // -0.0 before +0.0
    /// let high = v.top_k_with::<u64>(1, TopKOptions::largest())?;
    /// assert_eq!(high.indices.to_vec()?, vec![1]); // NaN is the largest
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn top_k_with<I: IndexElement + Arith>(&self, k: usize, opts: TopKOptions) -> Result<TopK<T, I>> {
        let n = self.len();
        check_top_k::<I>(k, n)?;
        let dev = self.device();
        match self.mem() {
            Mem::Host(s) => host_top_k(dev, s, k, opts),
            Mem::Cuda { dev: cuda, ptr, len, .. } => cuda_top_k(cuda, dev, Ptr::<T>::from_raw(ptr), len, k, opts),
        }
    }

    /// The top `k` of every row of this row-major matrix of `cols` columns:
    /// `rows * k` values and `u32` column indices, row by row, each row's
    /// in the [`top_k`](TopKOps::top_k) order. The length must be a
    /// multiple of `cols`, and `k <= cols`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::topk::TopKOptions;
    /// let m = DeviceVec::from_slice(&Device::default()?, &[0.1f32, 0.7, 0.2, 0.9, 0.3, 0.8])?;
    /// let top = m.top_k_rows(3, 2, TopKOptions::largest())?; // two rows of three
    /// assert_eq!(top.values.to_vec()?, vec![0.7, 0.2, 0.9, 0.8]);
    /// assert_eq!(top.indices.to_vec()?, vec![1, 2, 0, 2]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn top_k_rows(&self, cols: usize, k: usize, opts: TopKOptions) -> Result<TopK<T, u32>> {
        let n = self.len();
        if cols == 0 || n % cols != 0 {
            return Err(Error::InvalidArgument(format!(
                "top_k_rows: {n} elements are not rows of {cols} columns"
            )));
        }
        let offsets: Vec<usize> = (0..=n / cols).map(|r| r * cols).collect();
        segments_top_k(self, &offsets, Some(cols), k, opts)
    }

    /// The top `k` of every segment `offsets[s]..offsets[s + 1]` (offsets
    /// ascending, within the input; every segment at least `k` long and
    /// shorter than 2^32): `k` values and `u32` indices within the segment
    /// per segment, in the [`top_k`](TopKOps::top_k) order.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::topk::TopKOptions;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[5u8, 1, 4, 2, 8, 3])?;
    /// let low = v.top_k_segments(&[0, 2, 6], 1, TopKOptions::smallest())?;
    /// assert_eq!(low.values.to_vec()?, vec![1, 2]);
    /// assert_eq!(low.indices.to_vec()?, vec![1, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn top_k_segments(&self, offsets: &[usize], k: usize, opts: TopKOptions) -> Result<TopK<T, u32>> {
        segments_top_k(self, offsets, None, k, opts)
    }

    /// The element that would be at position `nth` if the input were sorted
    /// ascending (as C++'s `nth_element`; the [order](crate::algo::topk)
    /// of [`sort`](crate::algo::sort)). `nth` past the end is
    /// [`Error::InvalidArgument`].
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[7i64, -3, 12, 0, 5])?;
    /// assert_eq!(v.select_nth(0)?, -3);
    /// assert_eq!(v.select_nth(2)?, 5); // the median
    /// assert!(v.select_nth(5).is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn select_nth(&self, nth: usize) -> Result<T> {
        let n = self.len();
        if nth >= n {
            return Err(Error::InvalidArgument(format!(
                "select_nth: position {nth} is past the end of {n} elements"
            )));
        }
        match self.mem() {
            Mem::Host(s) => Ok(host_select_nth(s, nth)),
            Mem::Cuda { dev, ptr, len, .. } => cuda_select_nth(dev, Ptr::<T>::from_raw(ptr), len, nth),
        }
    }
}

/// `k` picks of `n` with indices `I`: k at most n, n - 1 an `I`.
fn check_top_k<I: IndexElement>(k: usize, n: usize) -> Result<()> {
    check_k("top_k", k, n)?;
    if n > 0 && (n - 1) as u64 > I::highest().as_u64() {
        return Err(Error::InvalidArgument(format!(
            "top_k of {n} elements needs u64 indices, not {}",
            I::NAME
        )));
    }
    Ok(())
}

/// The host backend's top-k of `s`, as vectors on `dev`.
fn host_top_k<T: Element, I: IndexElement>(dev: &crate::Device, s: &[T], k: usize, opts: TopKOptions) -> Result<TopK<T, I>> {
    let pos = host::top_k_positions(s, k, opts.smallest);
    let values: Vec<T> = pos.iter().map(|&i| s[i]).collect();
    let indices: Vec<I> = pos.iter().map(|&i| I::from_scalar(Scalar::U64(i as u64))).collect();
    TopK::upload(dev, &values, &indices)
}

/// The CUDA top-k of the `n` elements `input` reads (checked: k <= n, n - 1
/// an `I`): one block for short inputs, else the device-wide selection.
fn cuda_top_k<T: Element, I: IndexElement, S: plan::Source<T>>(
    cuda: &crate::device::CudaDevice,
    dev: &crate::Device,
    input: S,
    n: usize,
    k: usize,
    opts: TopKOptions,
) -> Result<TopK<T, I>> {
    let (out, picks) = TopK::slots(dev, k)?;
    if k == 0 {
        return Ok(out);
    }
    if n <= plan::ONE_BLOCK_MAX && k <= plan::SEG_KMAX && size_of::<I>() == 4 {
        let one = Segments::Rows { rows: 1, cols: n };
        let p32 = Picks {
            values: picks.values,
            indices: picks.indices.cast::<u32>(),
        };
        plan::top_k_segments(cuda, input, &one, k, opts.smallest, &p32)?;
    } else {
        plan::top_k(cuda, input, n, k, opts.smallest, &picks)?;
    }
    Ok(out)
}

/// The host backend's select_nth (nth < s.len()).
fn host_select_nth<T: Element>(s: &[T], nth: usize) -> T {
    let mut keys: Vec<u64> = s.iter().map(|&x| crate::algo::sort::ordered_bits(x)).collect();
    let (_, &mut key, _) = keys.select_nth_unstable(nth);
    from_ordered_bits(key)
}

/// The CUDA select_nth of the `n` elements `input` reads (nth < n).
fn cuda_select_nth<T: Element, S: plan::Source<T>>(dev: &crate::device::CudaDevice, input: S, n: usize, nth: usize) -> Result<T> {
    // The (nth + 1)-th smallest, or the (n - nth)-th largest: the shorter way.
    let smallest = nth < n / 2;
    let k = if smallest { nth + 1 } else { n - nth };
    let key = plan::select_key::<T, S>(dev, input, n, k, smallest)?;
    Ok(from_ordered_bits(key ^ plan::flip::<T>(smallest)))
}

/// [`TopKOps::top_k_with`] of an input expression
/// ([`ExprOps::top_k_with`](crate::expr::ExprOps::top_k_with)): on CUDA
/// every kernel that reads the input reads the expression instead (each
/// of its reads evaluates it again; nothing is collected).
pub(crate) fn top_k_of<X: Node, I: IndexElement + Arith>(x: &X, k: usize, opts: TopKOptions) -> Result<TopK<X::Item, I>>
where
    X::Item: Element,
{
    x.validate()?;
    let n = x.length();
    check_top_k::<I>(k, n)?;
    let dev = x.device_ref();
    match cuda_of(x) {
        // k = 0 reads nothing, on either backend (as for a buffer).
        None if k == 0 => host_top_k(dev, &[], 0, opts),
        None => host_top_k(dev, &host_items(x)?, k, opts),
        Some(cuda) => {
            let mut out = None;
            crate::expr::consume::launch_checked(cuda, x, |args| {
                let input = plan::Expression { input: x, args };
                out = Some(cuda_top_k(cuda, dev, input, n, k, opts)?);
                Ok(())
            })?;
            out.ok_or_else(|| Error::InvalidArgument("top_k: no result".into()))
        }
    }
}

/// [`TopKOps::select_nth`] of an input expression
/// ([`ExprOps::select_nth`](crate::expr::ExprOps::select_nth)), read in place.
pub(crate) fn select_nth_of<X: Node>(x: &X, nth: usize) -> Result<X::Item>
where
    X::Item: Element,
{
    x.validate()?;
    let n = x.length();
    if nth >= n {
        return Err(Error::InvalidArgument(format!(
            "select_nth: position {nth} is past the end of {n} elements"
        )));
    }
    match cuda_of(x) {
        None => Ok(host_select_nth(&host_items(x)?, nth)),
        Some(cuda) => {
            let mut out = None;
            crate::expr::consume::launch_checked(cuda, x, |args| {
                out = Some(cuda_select_nth(cuda, plan::Expression { input: x, args }, n, nth)?);
                Ok(())
            })?;
            out.ok_or_else(|| Error::InvalidArgument("select_nth: no result".into()))
        }
    }
}

impl<T: Element, D: DeviceData<T> + ?Sized> TopKOps<T> for D {}

/// In-place partial sort. In [`prelude`](crate::prelude).
pub trait TopKMutOps<T: Element>: DeviceDataMut<T> {
    /// Puts the `k` smallest elements first, sorted ascending (ties in
    /// their input order), and the others after them in an unspecified
    /// order (as C++'s `partial_sort`). `k` larger than the input is
    /// [`Error::InvalidArgument`] and leaves the data as it was.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let mut v = DeviceVec::from_slice(&Device::default()?, &[9u32, 4, 7, 1, 8, 2])?;
    /// v.partial_sort(3)?;
    /// let out = v.to_vec()?;
    /// assert_eq!(out[..3], [1, 2, 4]);
    /// let mut rest = out[3..].to_vec();
    /// rest.sort();
    /// assert_eq!(rest, vec![7, 8, 9]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn partial_sort(&mut self, k: usize) -> Result<()> {
        let n = self.len();
        check_k("partial_sort", k, n)?;
        if k == 0 {
            return Ok(());
        }
        let device = self.device().clone();
        match self.mem_mut() {
            MemMut::Host(d) => {
                host::partial_sort(d, k);
                Ok(())
            }
            MemMut::Cuda { dev, ptr, len, .. } => {
                let data = Ptr::<T>::from_raw(ptr);
                let mut tmp = DeviceVec::<T>::alloc_uninit(&device, len)?;
                let tmp_ptr = cuda_ptr_mut(&mut tmp, "top_k")?;
                if len as u64 > u32::MAX as u64 {
                    partial_sort_with::<T, u64>(dev, &device, data, len, k, tmp_ptr)?;
                } else {
                    partial_sort_with::<T, u32>(dev, &device, data, len, k, tmp_ptr)?;
                }
                dev.copy(data, tmp_ptr, len as u64, "partial_sort")
            }
        }
    }
}

impl<T: Element, D: DeviceDataMut<T> + ?Sized> TopKMutOps<T> for D {}

/// partial_sort into `tmp`: the k smallest sorted, then the others.
fn partial_sort_with<T: Element, I: IndexElement>(
    dev: &crate::device::CudaDevice,
    device: &crate::Device,
    data: Ptr<T>,
    n: usize,
    k: usize,
    tmp: Ptr<T>,
) -> Result<()> {
    let mut idx = DeviceVec::<I>::alloc_uninit(device, k)?;
    let picks = Picks {
        values: tmp,
        indices: cuda_ptr_mut(&mut idx, "top_k")?,
    };
    plan::top_k(dev, data, n, k, true, &picks)?;
    let last = k as u64 - 1;
    plan::write_rest::<T, I>(dev, data, n, (tmp.add(last), picks.indices.add(last)), tmp.add(k as u64))
}

/// `k` picks from `n`: at most all of them.
fn check_k(op: &str, k: usize, n: usize) -> Result<()> {
    if k > n {
        return Err(Error::InvalidArgument(format!("{op}: k = {k} is more than the {n} elements")));
    }
    Ok(())
}

/// top_k_rows (`cols` given) and top_k_segments.
fn segments_top_k<T: Element, D: DeviceData<T> + ?Sized>(
    v: &D,
    offsets: &[usize],
    cols: Option<usize>,
    k: usize,
    opts: TopKOptions,
) -> Result<TopK<T, u32>> {
    let n = v.len();
    let op = if cols.is_some() { "top_k_rows" } else { "top_k_segments" };
    for (s, w) in offsets.windows(2).enumerate() {
        if w[1] < w[0] || w[1] > n {
            return Err(Error::InvalidArgument(format!(
                "{op}: segment {s} ({}..{}) is not within the {n} elements",
                w[0], w[1]
            )));
        }
        let len = w[1] - w[0];
        if len < k || len as u64 > u32::MAX as u64 {
            return Err(Error::InvalidArgument(format!(
                "{op}: segment {s} has {len} elements; k = {k} needs at least k and u32 indices at most 2^32 - 1"
            )));
        }
    }
    if offsets.len() == 1 && offsets[0] > n {
        return Err(Error::InvalidArgument(format!(
            "{op}: offset {} is past the {n} elements",
            offsets[0]
        )));
    }
    let count = offsets.len().saturating_sub(1);
    let dev = v.device();
    match v.mem() {
        Mem::Host(s) => {
            let (values, indices) = host::top_k_segments(s, offsets, k, opts.smallest);
            TopK::upload(dev, &values, &indices)
        }
        Mem::Cuda { dev: cuda, ptr, .. } => {
            let total = count.checked_mul(k).ok_or(Error::OutOfMemory { bytes: usize::MAX })?;
            let (out, picks) = TopK::slots(dev, total)?;
            if total == 0 {
                return Ok(out);
            }
            let input = Ptr::<T>::from_raw(ptr);
            if k <= plan::SEG_KMAX {
                if let Some(cols) = cols {
                    plan::top_k_segments(cuda, input, &Segments::Rows { rows: count, cols }, k, opts.smallest, &picks)?;
                } else {
                    let offs: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
                    let dev_offs = DeviceVec::from_slice(dev, &offs)?;
                    let optr = match dev_offs.mem() {
                        Mem::Cuda { ptr, .. } => Ptr::from_raw(ptr),
                        Mem::Host(_) => return Err(Error::DeviceMismatch { op }),
                    };
                    let segs = Segments::Offsets { count, offsets: optr };
                    plan::top_k_segments(cuda, input, &segs, k, opts.smallest, &picks)?;
                    // The offsets are freed in stream order, after the launch.
                    drop(dev_offs);
                }
            } else {
                // Large k: one device-wide selection per segment.
                for (s, w) in offsets.windows(2).enumerate() {
                    let at = (s * k) as u64;
                    let seg = Picks {
                        values: picks.values.add(at),
                        indices: picks.indices.add(at),
                    };
                    plan::top_k::<T, u32, Ptr<T>>(cuda, input.add(w[0] as u64), w[1] - w[0], k, opts.smallest, &seg)?;
                }
            }
            Ok(out)
        }
    }
}
