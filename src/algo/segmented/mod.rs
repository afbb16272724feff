//! Segmented reductions: `segmented_reduce`, `segmented_sum`,
//! `segmented_min_element`, `segmented_max_element`, and the predicate
//! collectives per segment `segmented_count`, `segmented_any`,
//! `segmented_all`, `segmented_quantify` (segmented sums of the predicate's
//! 0 / 1, fused) and `segmented_find_first` (the segmented minimum of the
//! matching positions).
//!
//! # Segments
//! Segments are given by `offsets`, a vector of `u32` or `u64` of length
//! `segments + 1`: segment `s` is `self[offsets[s]..offsets[s + 1]]`. The
//! offsets must be non-decreasing and the last at most `self.len()`;
//! elements before `offsets[0]` or from the last offset on belong to no
//! segment. Empty segments are allowed anywhere. One offset gives zero
//! segments (an empty result); none is an error. Bad offsets (decreasing,
//! or past the end) are never followed: the host backend checks them first,
//! the CUDA kernel checks each pair as it goes and the call returns
//! [`crate::Error::InvalidArgument`] (the input is
//! untouched, the result is dropped).
//!
//! The offsets are anything [`IntoExpr`] with `u32`
//! or `u64` items: a `&DeviceVec`, a `&DeviceSlice`, or an expression such
//! as `counting(&dev, 0u64, 1024, s + 1)` (`s` segments of 1024). A buffer
//! is read in place; any other expression is first collected once into a
//! temporary vector of its `segments + 1` offsets (small next to the data),
//! because the kernels read the offsets by address in several places (each
//! warp's search for its tile's boundaries, the closing of segments that
//! cross tiles, the writing of empty ones). Collecting checks a permutation:
//! an index out of range fails with [`crate::Error::IndexOutOfBounds`]; bad
//! offsets from an expression fail as the same offsets in a buffer do.
//!
//! # Speed
//! On CUDA it is one kernel over the elements, whatever the segment sizes:
//! each warp stages a fixed tile of elements in shared memory (asynchronous
//! 16-byte copies for a buffer), finds the
//! segment boundaries in it by searching the offsets, and reduces its part
//! of each segment with no block barrier; a segment that crosses warp tiles
//! is closed by the last of its tiles to finish, which folds the tiles'
//! parts in order (a counter per segment end, no waiting). Inputs whose
//! segments average 2^27 elements or more (one or a few huge segments) take
//! a block-tile kernel whose decoupled look-back chains the parts instead.
//! Empty segments are written by an even share of the grid. A thread whose
//! elements hold no boundary inside them (the usual case when segments are
//! longer than a thread's 32 or 64 items) folds them in one plain loop.
//!
//! The first call over some offsets waits for the kernel to read the
//! bad-offsets flag (a page-locked word the kernel stores to, where the
//! driver maps one: no copy after the kernel). Offsets it finds valid are
//! remembered by address until their memory is written (any cuprim write to
//! the vector or a mutable slice of it, a mutable cudarc view, the vector
//! handed to cudarc or dropped): later calls over them (any of this
//! module's), on an input at least as long that does not permute, queue the
//! kernel and return without waiting.
//! The kernel checks them anyway and never follows a bad one.
//!
//! # Floating point
//! A segment's elements are combined in their order (non-commutative
//! monoids work), grouped by the device's tiles, so a float sum differs from
//! a sequential left-to-right sum by rounding; the grouping depends only on
//! the offsets and the length, never on timing: the same input gives the
//! same bits every run. The host backend folds each segment left to right
//! (segments over 65536 elements in fixed chunks, folded in order) and is
//! equally deterministic.

pub(crate) mod collective;
pub(crate) mod flags;
pub(crate) mod host;
pub(crate) mod plan;

use crate::device::Ptr;
use crate::element::{Element, IndexElement};
use crate::error::{Error, Result};
use crate::expr::node::{cuda_of, Node};
use crate::expr::{host_items, with_buffer, Expr, IntoExpr, LazyOps};
use crate::ops::{ranks_before, Add, Arith, Monoid};
use crate::pred::Predicate;
use crate::vec::raw::{Mem, MemMut, SealedMut as _};
use crate::vec::{DeviceData, DeviceVec};
use plan::{SegArg, SegReduce, SegmentedKernel};
use std::marker::PhantomData;

/// Each segment's least (or greatest) element: its value and its index
/// within the segment (`0` is the segment's first element), as returned by
/// [`SegmentedOps::segmented_min_element`] /
/// [`SegmentedOps::segmented_max_element`]. The indices have the offsets'
/// type. An empty segment has index `I::MAX` and the value of the
/// reduction's identity ([`Min`](crate::ops::Min)'s `MAX` / `+inf`, or
/// [`Max`](crate::ops::Max)'s `MIN` / `-inf`), so `values` always equals
/// `segmented_reduce(offsets, Min)` (or `Max`).
#[derive(Debug)]
pub struct SegmentedExtremes<T: Element, I: IndexElement> {
    /// One value per segment.
    pub values: DeviceVec<T>,
    /// One index per segment, within the segment; `I::MAX` when empty.
    pub indices: DeviceVec<I>,
}

/// Reductions per segment. In [`prelude`](crate::prelude).
pub trait SegmentedOps<T: Element>: DeviceData<T> {
    /// Folds each segment with `op`, in order (`op` need not be
    /// commutative); the identity for an empty segment. One result per
    /// segment (`offsets.len() - 1`).
    ///
    /// `offsets`: a buffer, or an expression (collected first; see the
    /// [module docs](crate::algo::segmented)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[1u32, 2, 3, 4, 5, 6])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u32, 2, 2, 6])?;
    /// assert_eq!(v.segmented_reduce(&offsets, Add)?.to_vec()?, vec![3, 0, 18]);
    /// assert_eq!(v.segmented_reduce(&offsets, Max)?.to_vec()?, vec![2, 0, 6]);
    /// let bad = DeviceVec::from_slice(&dev, &[0u32, 4, 2])?;
    /// assert!(v.segmented_reduce(&bad, Add).is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_reduce<I: IndexElement, Op: Monoid<T>>(
        &self,
        offsets: impl IntoExpr<Expr: Expr<Item = I>>,
        op: Op,
    ) -> Result<DeviceVec<T>> {
        with_buffer(offsets, |o| segmented_reduce_of(&self.lazy(), o, op))
    }

    /// The sum of each segment (wrapping for integers); 0 (`-0.0`) when
    /// empty.
    ///
    /// `offsets`: a buffer, or an expression (collected first; see the
    /// [module docs](crate::algo::segmented)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[1.5f32, 2.5, 4.0])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u64, 2, 3])?;
    /// assert_eq!(v.segmented_sum(&offsets)?.to_vec()?, vec![4.0, 4.0]);
    /// // Segments of a fixed length: the offsets 0, 3, 6 as an expression.
    /// let x = DeviceVec::from_slice(&dev, &[1u32, 2, 3, 4, 5, 6, 7])?;
    /// let sums = x.segmented_sum(counting(&dev, 0u32, 3, 3))?;
    /// assert_eq!(sums.to_vec()?, vec![6, 15]); // 7 lies after the last offset
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_sum<I: IndexElement>(&self, offsets: impl IntoExpr<Expr: Expr<Item = I>>) -> Result<DeviceVec<T>>
    where
        T: Arith,
    {
        self.segmented_reduce(offsets, Add)
    }

    /// Each segment's least element and its index within the segment, ties
    /// to the lowest index, in [`Min`](crate::ops::Min)'s order as
    /// [`min_element`](crate::algo::reduce::ReduceOps::min_element): the
    /// first NaN if there is any, `-0.0` before `+0.0`. An empty segment
    /// gives index `I::MAX` and value `MAX` / `+inf` (see
    /// [`SegmentedExtremes`]).
    ///
    /// `offsets`: a buffer, or an expression (collected first; see the
    /// [module docs](crate::algo::segmented)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[4.0f32, 1.0, 1.0, 7.0, f32::NAN])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u32, 3, 3, 5])?;
    /// let m = v.segmented_min_element(&offsets)?;
    /// assert_eq!(m.indices.to_vec()?, vec![1, u32::MAX, 1]);
    /// let values = m.values.to_vec()?;
    /// assert_eq!(values[..2], [1.0, f32::INFINITY]);
    /// assert!(values[2].is_nan());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_min_element<I: IndexElement>(&self, offsets: impl IntoExpr<Expr: Expr<Item = I>>) -> Result<SegmentedExtremes<T, I>> {
        with_buffer(offsets, |o| segmented_arg(&self.lazy(), o, false))
    }

    /// Each segment's greatest element and its index within the segment,
    /// ties to the lowest index, in [`Max`](crate::ops::Max)'s order (the
    /// first NaN if there is any, `+0.0` after `-0.0`). An empty segment
    /// gives index `I::MAX` and value `MIN` / `-inf`.
    ///
    /// `offsets`: a buffer, or an expression (collected first; see the
    /// [module docs](crate::algo::segmented)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[3i32, 9, 9, -1])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u64, 3, 4, 4])?;
    /// let m = v.segmented_max_element(&offsets)?;
    /// assert_eq!(m.values.to_vec()?, vec![9, -1, i32::MIN]);
    /// assert_eq!(m.indices.to_vec()?, vec![1, 0, u64::MAX]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_max_element<I: IndexElement>(&self, offsets: impl IntoExpr<Expr: Expr<Item = I>>) -> Result<SegmentedExtremes<T, I>> {
        with_buffer(offsets, |o| segmented_arg(&self.lazy(), o, true))
    }

    /// How many elements of each segment satisfy `pred`, in the offsets'
    /// index type; 0 for an empty segment. One segmented sum of the
    /// predicate's 0 / 1, fused: no flag vector is written.
    ///
    /// `offsets`: a buffer, or an expression (collected first; see the
    /// [module docs](crate::algo::segmented)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::{Gt, IsNan};
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[5.0f32, 1.0, 7.0, f32::NAN, 9.0])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u32, 3, 3, 5])?;
    /// assert_eq!(v.segmented_count(&offsets, Gt(4.0))?.to_vec()?, vec![2, 0, 1]);
    /// assert_eq!(v.segmented_count(&offsets, IsNan)?.to_vec()?, vec![0, 0, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_count<I: IndexElement + Arith, P: Predicate<T>>(
        &self,
        offsets: impl IntoExpr<Expr: Expr<Item = I>>,
        pred: P,
    ) -> Result<DeviceVec<I>> {
        with_buffer(offsets, |o| collective::segmented_count_of(self, o, pred))
    }

    /// 1 for each segment holding an element that satisfies `pred`, else 0
    /// (an empty segment: 0).
    ///
    /// `offsets`: a buffer, or an expression (collected first; see the
    /// [module docs](crate::algo::segmented)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Eq;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[2u8, 3, 3, 2])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u64, 2, 2, 4])?;
    /// assert_eq!(v.segmented_any(&offsets, Eq(2))?.to_vec()?, vec![1, 0, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_any<I: IndexElement + Arith, P: Predicate<T>>(
        &self,
        offsets: impl IntoExpr<Expr: Expr<Item = I>>,
        pred: P,
    ) -> Result<DeviceVec<u8>> {
        with_buffer(offsets, |o| collective::segmented_flags_of::<T, I, P, true>(self, o, pred))
    }

    /// 1 for each segment whose elements all satisfy `pred`, else 0 (an
    /// empty segment: 1).
    ///
    /// `offsets`: a buffer, or an expression (collected first; see the
    /// [module docs](crate::algo::segmented)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Lt;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[-1i32, -5, 4, -2])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u32, 2, 2, 4])?;
    /// assert_eq!(v.segmented_all(&offsets, Lt(0))?.to_vec()?, vec![1, 1, 0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_all<I: IndexElement + Arith, P: Predicate<T>>(
        &self,
        offsets: impl IntoExpr<Expr: Expr<Item = I>>,
        pred: P,
    ) -> Result<DeviceVec<u8>> {
        with_buffer(offsets, |o| collective::segmented_flags_of::<T, I, P, false>(self, o, pred))
    }

    /// Per segment, how many elements satisfy `pred`, as
    /// [`CollectiveOps::quantify`](crate::algo::collective::CollectiveOps::quantify)
    /// counts: 0 (none), 1 (exactly one) or 2 (two or more), one `u8` each.
    ///
    /// `offsets`: a buffer, or an expression (collected first; see the
    /// [module docs](crate::algo::segmented)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Eq;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[7u32, 1, 7, 7, 2, 7])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u32, 2, 2, 6])?;
    /// assert_eq!(v.segmented_quantify(&offsets, Eq(7))?.to_vec()?, vec![1, 0, 2]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_quantify<I: IndexElement + Arith, P: Predicate<T>>(
        &self,
        offsets: impl IntoExpr<Expr: Expr<Item = I>>,
        pred: P,
    ) -> Result<DeviceVec<u8>> {
        with_buffer(offsets, |o| collective::segmented_quantify_of(self, o, pred))
    }

    /// The index within its segment of each segment's first element that
    /// satisfies `pred`, `I::MAX` where none does (an empty segment too), as
    /// [`find_first`](crate::algo::reduce::ReduceOps::find_first) per segment:
    /// the lowest matching index, the same every run.
    ///
    /// `offsets`: a buffer, or an expression (collected first; see the
    /// [module docs](crate::algo::segmented)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::IsNan;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[1.0f32, f32::NAN, f32::NAN, 2.0, 3.0])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u64, 3, 5, 5])?;
    /// assert_eq!(v.segmented_find_first(&offsets, IsNan)?.to_vec()?, vec![1, u64::MAX, u64::MAX]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_find_first<I: IndexElement + Arith, P: Predicate<T>>(
        &self,
        offsets: impl IntoExpr<Expr: Expr<Item = I>>,
        pred: P,
    ) -> Result<DeviceVec<I>> {
        with_buffer(offsets, |o| collective::segmented_find_first_of(self, o, pred))
    }
}

impl<T: Element, D: DeviceData<T> + ?Sized> SegmentedOps<T> for D {}

/// The number of segments `offsets` describes, after the checks every call
/// makes first (a valid input, one device, at least one offset).
fn segment_count<E: Node, I: IndexElement>(op: &'static str, v: &E, offsets: &(impl DeviceData<I> + ?Sized)) -> Result<usize> {
    v.validate()?;
    crate::algo::same_device(op, v.device_ref(), offsets.device())?;
    if offsets.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "{op}: the offsets are empty; n segments take n + 1 offsets (one offset: no segments)"
        )));
    }
    Ok(offsets.len() - 1)
}

/// One result per segment of `input` into a new vector, after the checks
/// every call makes: on the host `host(items, bounds)` (each segment's
/// `[start, end)`), on CUDA the kernel `kernel(arch)` writes it.
fn per_segment<E: Node, I: IndexElement, K: SegmentedKernel<I = I>>(
    op: &'static str,
    input: &E,
    offsets: &(impl DeviceData<I> + ?Sized),
    host: impl FnOnce(&[E::Item], &[(usize, usize)]) -> Vec<K::Out>,
    kernel: impl FnOnce(u32) -> K,
) -> Result<DeviceVec<K::Out>> {
    let segments = segment_count(op, input, offsets)?;
    let mut out = DeviceVec::<K::Out>::alloc_uninit(input.device_ref(), segments)?;
    if segments == 0 {
        return Ok(out);
    }
    match (cuda_of(input), offsets.mem(), out.mem_mut()) {
        (None, Mem::Host(o), MemMut::Host(d)) => {
            let s = host_items(input)?;
            let bounds = host::bounds(op, o, s.len())?;
            d.copy_from_slice(&host(&s, &bounds));
        }
        (Some(dev), Mem::Cuda { ptr: optr, .. }, MemMut::Cuda { ptr: dptr, .. }) => {
            let k = kernel(dev.arch());
            let ok = plan::run(&k, dev, (Ptr::from_raw(optr), segments), Ptr::from_raw(dptr), Ptr::from_raw(0))?;
            device_check(op, ok)?;
        }
        _ => return Err(Error::DeviceMismatch { op }),
    }
    Ok(out)
}

/// segmented_reduce of an input expression (a buffer the simplest), read
/// in place by the one kernel.
pub(crate) fn segmented_reduce_of<E: Node, I: IndexElement, Op: Monoid<E::Item>>(
    input: &E,
    offsets: &(impl DeviceData<I> + ?Sized),
    op: Op,
) -> Result<DeviceVec<E::Item>>
where
    E::Item: Element,
{
    per_segment(
        "segmented_reduce",
        input,
        offsets,
        |s, bounds| host::segmented(s, bounds, op.identity(), |x, _| x, |a, b| op.apply(a, b)),
        |arch| SegReduce::<E, I, Op> {
            arch,
            input,
            op: &op,
            _t: PhantomData,
        },
    )
}

/// The CUDA kernel's verdict on the offsets.
fn device_check(op: &'static str, ok: bool) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "{op}: the offsets must be non-decreasing and at most the input's length (the device found one that is not)"
        )))
    }
}

/// segmented_min_element / segmented_max_element.
pub(crate) fn segmented_arg<E: Node, I: IndexElement>(
    v: &E,
    offsets: &(impl DeviceData<I> + ?Sized),
    greatest: bool,
) -> Result<SegmentedExtremes<E::Item, I>>
where
    E::Item: Element,
{
    let op = if greatest {
        "segmented_max_element"
    } else {
        "segmented_min_element"
    };
    let segments = segment_count(op, v, offsets)?;
    let mut values = DeviceVec::<E::Item>::alloc_uninit(v.device_ref(), segments)?;
    let mut indices = DeviceVec::<I>::alloc_uninit(v.device_ref(), segments)?;
    if segments == 0 {
        return Ok(SegmentedExtremes { values, indices });
    }
    match (cuda_of(v), offsets.mem(), values.mem_mut()) {
        (None, Mem::Host(o), MemMut::Host(dv)) => {
            let s = host_items(v)?;
            let bounds = host::bounds(op, o, s.len())?;
            let worst = crate::algo::reduce::plan::arg_identity::<E::Item>(greatest);
            let better = |a: (E::Item, u64), b: (E::Item, u64)| -> (E::Item, u64) {
                let b_wins = ranks_before(b.0, a.0, greatest) || (!ranks_before(a.0, b.0, greatest) && b.1 < a.1);
                if b_wins {
                    b
                } else {
                    a
                }
            };
            let r = host::segmented(&s, &bounds, (worst, u64::MAX), |x, i| (x, i as u64), better);
            let MemMut::Host(di) = indices.mem_mut() else {
                return Err(Error::DeviceMismatch { op });
            };
            for ((dv, di), (x, i)) in dv.iter_mut().zip(di.iter_mut()).zip(r) {
                *dv = x;
                *di = i.cast::<I>();
            }
        }
        (Some(dev), Mem::Cuda { ptr: optr, .. }, MemMut::Cuda { ptr: vptr, .. }) => {
            let iptr = crate::algo::cuda_ptr_mut(&mut indices, op)?;
            let k = SegArg::<E, I> {
                arch: dev.arch(),
                input: v,
                greatest,
                _t: PhantomData,
            };
            let ok = plan::run(&k, dev, (Ptr::from_raw(optr), segments), Ptr::from_raw(vptr), iptr)?;
            device_check(op, ok)?;
        }
        _ => return Err(Error::DeviceMismatch { op }),
    }
    Ok(SegmentedExtremes { values, indices })
}
