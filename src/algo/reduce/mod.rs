//! Reductions and predicate collectives: `reduce`, `reduce_into`,
//! `transform_reduce`, `sum`, `product`, `min`, `max`, `min_element`,
//! `max_element`, `count`, `any`, `all`, `find_first`.
//!
//! # Floating point
//! A reduction regroups its operands: the device folds a grid-stride share
//! per thread, then a tree per block, then the block partials in order. So a
//! float sum differs from a sequential left-to-right sum by rounding (for
//! `n` values, the error bound is about `log2(n) * eps * sum(|x|)` in the
//! worst case, far less in practice). The grouping depends only on the
//! length and the device, never on timing (no float atomics): the same input
//! on the same GPU gives the same bits every run. The host backend groups
//! differently (fixed chunks of 65536) and is equally deterministic.

pub(crate) mod host;
pub(crate) mod plan;

use crate::device::Ptr;
use crate::element::Element;
use crate::error::Result;
use crate::expr::{LazyOps, Leaf};
use crate::ops::{Add, Arith, Commutative, Identity, Max, Min, Monoid, Mul, UnaryOp};
use crate::pred::{Not, Predicate};
use crate::value::Value;
use crate::vec::raw::{Mem, MemMut};
use crate::vec::{DeviceData, DeviceDataMut, DeviceVec};
use plan::{Count, MapReduce};

/// Reductions and collectives. In [`prelude`](crate::prelude).
pub trait ReduceOps<T: Element>: DeviceData<T> {
    /// Folds every element with `op`; the identity for an empty input.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[3u32, 9, 4])?;
    /// assert_eq!(v.reduce(Add)?, 16);
    /// assert_eq!(v.reduce(Max)?, 9);
    /// assert_eq!(v.slice(0..0)?.reduce(Min)?, u32::MAX);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce<Op: Monoid<T> + Commutative>(&self, op: Op) -> Result<T> {
        self.transform_reduce(Identity, op)
    }

    /// Like [`reduce`](ReduceOps::reduce), leaving the result in a
    /// one-element vector on the device: no host synchronisation.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1.5f64, 2.5])?;
    /// let total = v.reduce_into(Add)?;
    /// assert_eq!(total.to_vec()?, vec![4.0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce_into<Op: Monoid<T> + Commutative>(&self, op: Op) -> Result<DeviceVec<T>> {
        let mut out = DeviceVec::<T>::alloc_uninit(self.device(), 1)?;
        self.reduce_to(op, &mut out)?;
        Ok(out)
    }

    /// Like [`reduce_into`](ReduceOps::reduce_into), writing the result to
    /// `out[0]` of a buffer the caller already has (CUB's `d_out`): no
    /// allocation and no host synchronisation. `out` must not be empty.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[2u32, 7, 1])?;
    /// let mut out = DeviceVec::<u32>::zeros(&dev, 1)?;
    /// v.reduce_to(Max, &mut out)?;
    /// assert_eq!(out.to_vec()?, vec![7]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce_to<Op: Monoid<T> + Commutative>(&self, op: Op, out: &mut impl crate::vec::DeviceDataMut<T>) -> Result<()> {
        crate::algo::same_device("reduce_to", self.device(), out.device())?;
        if out.is_empty() {
            return Err(crate::Error::InvalidArgument("reduce_to: the output buffer is empty".into()));
        }
        match (self.mem(), out.mem_mut()) {
            (Mem::Host(s), MemMut::Host(o)) => {
                o[0] = host::map_reduce(s, op.identity(), |x, _| x, |a, b| op.apply(a, b));
            }
            (Mem::Cuda { dev, ptr, len, .. }, MemMut::Cuda { ptr: out_ptr, .. }) => {
                let k = MapReduce {
                    arch: dev.arch(),
                    input: &Leaf::<T>::raw(ptr, len),
                    map: &Identity,
                    op: &op,
                };
                plan::to_device(&k, dev, Ptr::from_raw(out_ptr))?;
            }
            _ => return Err(crate::Error::DeviceMismatch { op: "reduce_to" }),
        }
        Ok(())
    }

    /// Folds `map(x)` over every element with `op`, without a temporary
    /// array: e.g. the sum of squares.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1i64, -2, 3])?;
    /// assert_eq!(v.transform_reduce(Square, Add)?, 14);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn transform_reduce<U, Op>(&self, map: U, op: Op) -> Result<U::Output>
    where
        U: UnaryOp<T>,
        Op: Monoid<U::Output> + Commutative,
    {
        match self.mem() {
            Mem::Host(s) => Ok(host::map_reduce(s, op.identity(), |x, _| map.apply(x), |a, b| op.apply(a, b))),
            Mem::Cuda { dev, ptr, len, .. } => {
                let k = MapReduce {
                    arch: dev.arch(),
                    input: &Leaf::<T>::raw(ptr, len),
                    map: &map,
                    op: &op,
                };
                Ok(<U::Output as Value>::read_c(&plan::to_host(&k, dev)?))
            }
        }
    }

    /// Sum of the elements (wrapping for integers); 0 when empty.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::sequence(&Device::default()?, 100, 1u64, 1)?;
    /// assert_eq!(v.sum()?, 5050);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sum(&self) -> Result<T>
    where
        T: Arith,
    {
        self.reduce(Add)
    }

    /// Product of the elements (wrapping for integers); 1 when empty.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[2.0f32, 3.0, 4.0])?;
    /// assert_eq!(v.product()?, 24.0);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn product(&self) -> Result<T>
    where
        T: Arith,
    {
        self.reduce(Mul)
    }

    /// The least element ([`Min`]: a NaN if there is any, `-0.0` before
    /// `+0.0`); `MAX` / `+inf` when empty.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[2.0f32, 0.0, -0.0])?;
    /// assert_eq!(v.min()?.to_bits(), (-0.0f32).to_bits());
    /// let w = DeviceVec::from_slice(&Device::default()?, &[2.0f32, f32::NAN, -1.0])?;
    /// assert!(w.min()?.is_nan());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn min(&self) -> Result<T> {
        self.reduce(Min)
    }

    /// The greatest element ([`Max`]: a NaN if there is any, `+0.0` after
    /// `-0.0`); `MIN` / `-inf` when empty.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[2i8, -7, 5])?;
    /// assert_eq!(v.max()?, 5);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn max(&self) -> Result<T> {
        self.reduce(Max)
    }

    /// `(index, value)` of the least element, ties to the lowest index;
    /// `None` when empty. The order is [`Min`]'s, so the value is always
    /// [`min`](ReduceOps::min)'s: the first NaN if there is any, and `-0.0`
    /// before `+0.0`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[4u32, 1, 7, 1])?;
    /// assert_eq!(v.min_element()?, Some((1, 1)));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn min_element(&self) -> Result<Option<(usize, T)>> {
        arg_extreme(self, false)
    }

    /// `(index, value)` of the greatest element, ties to the lowest index;
    /// NaN handled as in [`min_element`](ReduceOps::min_element).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[4.0f64, 9.0, 9.0])?;
    /// assert_eq!(v.max_element()?, Some((1, 9.0)));
    /// let w = DeviceVec::from_slice(&Device::default()?, &[4.0f64, f64::NAN, 9.0])?;
    /// assert_eq!(w.max_element()?.map(|(i, x)| (i, x.is_nan())), Some((1, true)));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn max_element(&self) -> Result<Option<(usize, T)>> {
        arg_extreme(self, true)
    }

    /// Like [`min_element`](ReduceOps::min_element), leaving the index in
    /// `index[0]` and the value in `value[0]` on the device (CUB's
    /// `ArgMin`): no host synchronisation. An empty input writes index
    /// `u64::MAX` and the value [`Min`]'s identity (`T::MAX`, `+inf`).
    /// Fails when either output is empty.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[4.0f32, -1.0, 7.0, -1.0])?;
    /// let (mut index, mut value) = (DeviceVec::<u64>::zeros(&dev, 1)?, DeviceVec::<f32>::zeros(&dev, 1)?);
    /// v.min_element_to(&mut index, &mut value)?;
    /// assert_eq!((index.to_vec()?, value.to_vec()?), (vec![1], vec![-1.0]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn min_element_to(&self, index: &mut impl DeviceDataMut<u64>, value: &mut impl DeviceDataMut<T>) -> Result<()> {
        crate::expr::consume::arg_extreme_to(&self.lazy(), false, index, value)
    }

    /// Like [`max_element`](ReduceOps::max_element), on the device as
    /// [`min_element_to`](ReduceOps::min_element_to); an empty input writes
    /// index `u64::MAX` and [`Max`]'s identity (`T::MIN`, `-inf`).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[2u8, 9, 9])?;
    /// let (mut index, mut value) = (DeviceVec::<u64>::zeros(&dev, 1)?, DeviceVec::<u8>::zeros(&dev, 1)?);
    /// v.max_element_to(&mut index, &mut value)?;
    /// assert_eq!((index.to_vec()?, value.to_vec()?), (vec![1], vec![9]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn max_element_to(&self, index: &mut impl DeviceDataMut<u64>, value: &mut impl DeviceDataMut<T>) -> Result<()> {
        crate::expr::consume::arg_extreme_to(&self.lazy(), true, index, value)
    }

    /// How many elements satisfy `pred`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Gt;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1i32, 5, 9, 2])?;
    /// assert_eq!(v.count(Gt(2))?, 2);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn count<P: Predicate<T>>(&self, pred: P) -> Result<usize> {
        match self.mem() {
            Mem::Host(s) => Ok(host::map_reduce(s, 0usize, |x, _| pred.test(x) as usize, |a, b| a + b)),
            Mem::Cuda { dev, ptr, len, .. } => {
                let k = Count {
                    arch: dev.arch(),
                    input: &Leaf::<T>::raw(ptr, len),
                    pred: &pred,
                };
                let bytes = plan::to_host(&k, dev)?;
                Ok(bytemuck::pod_read_unaligned::<u64>(&bytes[..8]) as usize)
            }
        }
    }

    /// The lowest index whose element satisfies `pred`. Stops reading once
    /// the answer is known: a match near the front costs about one wave of
    /// loads, not a pass over the array.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::{Eq, IsNan};
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1.0f32, f32::NAN, 3.0, 3.0])?;
    /// assert_eq!(v.find_first(Eq(3.0))?, Some(2));
    /// assert_eq!(v.find_first(IsNan)?, Some(1));
    /// assert_eq!(v.find_first(Eq(7.0))?, None);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn find_first<P: Predicate<T>>(&self, pred: P) -> Result<Option<usize>> {
        crate::expr::consume::find_first(&self.lazy(), pred)
    }

    /// True if some element satisfies `pred` (false when empty). Early exit
    /// as for [`find_first`](ReduceOps::find_first).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::IsNan;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1.0f32, f32::NAN])?;
    /// assert!(v.any(IsNan)?);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn any<P: Predicate<T>>(&self, pred: P) -> Result<bool> {
        Ok(self.find_first(pred)?.is_some())
    }

    /// True if every element satisfies `pred` (true when empty).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Ge;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[3u8, 4, 5])?;
    /// assert!(v.all(Ge(3))?);
    /// assert!(!v.all(Ge(4))?);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn all<P: Predicate<T>>(&self, pred: P) -> Result<bool> {
        Ok(self.find_first(Not(pred))?.is_none())
    }
}

impl<T: Element, D: DeviceData<T> + ?Sized> ReduceOps<T> for D {}

/// min_element / max_element: the expression form's reduction over
/// (value, index) pairs, on the buffer read in place.
fn arg_extreme<T: Element, D: DeviceData<T> + ?Sized>(v: &D, greatest: bool) -> Result<Option<(usize, T)>> {
    crate::expr::consume::arg_extreme(&v.lazy(), greatest)
}
