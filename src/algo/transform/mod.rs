//! Data movement and element-wise transforms: `fill`, `copy_from`,
//! `transform`, `transform2`, `adjacent_difference`, `gather`, `scatter`.

pub(crate) mod adjacent_expr;
pub(crate) mod host;
pub(crate) mod plan;

use super::{same_device, same_len};
use crate::device::{Device, Ptr};
use crate::element::{Element, IndexElement};
use crate::error::{Error, Result};
use crate::ops::{Arith, BinaryOp, UnaryOp};
use crate::vec::raw::{Mem, MemMut, SealedMut as _};
use crate::vec::{DeviceData, DeviceDataMut, DeviceVec};
use plan::{Adjacent, Fill, GatherScatter, Transform, Transform2};

/// Read-side data movement and element-wise maps. In [`prelude`](crate::prelude).
pub trait TransformOps<T: Element>: DeviceData<T> {
    /// A new vector holding a copy of these elements.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1i32, 2, 3])?;
    /// let w = v.slice(1..)?.to_device_vec()?;
    /// assert_eq!(w.to_vec()?, vec![2, 3]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn to_device_vec(&self) -> Result<DeviceVec<T>> {
        let mut out = DeviceVec::alloc_uninit(self.device(), self.len())?;
        copy(self.mem(), out.mem_mut())?;
        Ok(out)
    }

    /// `out[i] = op(self[i])`, for any [`UnaryOp`], including casts.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::{Cast, Square};
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1.5f32, -2.0, 3.0])?;
    /// assert_eq!(v.transform(Square)?.to_vec()?, vec![2.25, 4.0, 9.0]);
    /// assert_eq!(v.transform(Cast::<i32>::new())?.to_vec()?, vec![1, -2, 3]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn transform<Op: UnaryOp<T>>(&self, op: Op) -> Result<DeviceVec<Op::Output>>
    where
        Op::Output: Element,
    {
        let mut out = DeviceVec::alloc_uninit(self.device(), self.len())?;
        transform_into(self.mem(), out.mem_mut(), &op)?;
        Ok(out)
    }

    /// Element-wise `out[i] = op(self[i], other[i])`; lengths must match.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[1u32, 5, 3])?;
    /// let b = DeviceVec::from_slice(&dev, &[4u32, 2, 3])?;
    /// assert_eq!(a.transform2(&b, Max)?.to_vec()?, vec![4, 5, 3]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn transform2<Op: BinaryOp<T>>(&self, other: &impl DeviceData<T>, op: Op) -> Result<DeviceVec<T>> {
        same_device("transform2", self.device(), other.device())?;
        same_len("transform2", self.len(), other.len())?;
        let mut out = DeviceVec::alloc_uninit(self.device(), self.len())?;
        transform2_into(self.mem(), other.mem(), out.mem_mut(), &op)?;
        Ok(out)
    }

    /// Thrust's adjacent difference: `out[0] = self[0]` and
    /// `out[i] = op(self[i], self[i - 1])` for `i >= 1` (note the operand
    /// order: the element, then its predecessor). Any [`BinaryOp`], not
    /// only [`Sub`](crate::ops::Sub) (which wraps for unsigned integers:
    /// `3u8 - 5 == 254`). Each output element is one `op` call, so the
    /// result is the same bits on every backend (NaN in, NaN out as `op`
    /// says). Empty in, empty out.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Sub;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1i32, 4, 9, 16])?;
    /// assert_eq!(v.adjacent_difference(Sub)?.to_vec()?, vec![1, 3, 5, 7]);
    /// assert_eq!(v.adjacent_difference(Max)?.to_vec()?, vec![1, 4, 9, 16]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn adjacent_difference<Op: BinaryOp<T>>(&self, op: Op) -> Result<DeviceVec<T>> {
        let mut out = DeviceVec::alloc_uninit(self.device(), self.len())?;
        match (self.mem(), out.mem_mut()) {
            (Mem::Host(s), MemMut::Host(d)) => host::adjacent_difference(s, d, &op),
            // `out` is new: it does not overlap `self`.
            (Mem::Cuda { ptr: s, len, .. }, MemMut::Cuda { dev, ptr: d, .. }) => {
                Adjacent::new(dev.arch(), &op).run(dev, Ptr::from_raw(s), Ptr::from_raw(d), len as u64)?
            }
            _ => return Err(Error::DeviceMismatch { op: "adjacent_difference" }),
        }
        Ok(out)
    }

    /// `out[i] = self[indices[i]]`. An index `>= self.len()` is caught on the
    /// device and reported as [`Error::IndexOutOfBounds`]; nothing outside
    /// `self` is read.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[10i64, 20, 30])?;
    /// let idx = DeviceVec::from_slice(&dev, &[2u32, 0, 2])?;
    /// assert_eq!(v.gather(&idx)?.to_vec()?, vec![30, 10, 30]);
    /// let bad = DeviceVec::from_slice(&dev, &[3u32])?;
    /// assert!(matches!(v.gather(&bad), Err(cuprim::Error::IndexOutOfBounds { .. })));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn gather<I: IndexElement>(&self, indices: &impl DeviceData<I>) -> Result<DeviceVec<T>> {
        same_device("gather", self.device(), indices.device())?;
        let mut out = DeviceVec::alloc_uninit(self.device(), indices.len())?;
        gather_into(self.mem(), indices.mem(), out.mem_mut())?;
        Ok(out)
    }

    /// `out[indices[i]] = self[i]`; `indices` must be as long as `self`.
    /// With repeated indices, which element lands is unspecified on CUDA (the
    /// host backend keeps the last). An index `>= out.len()` is skipped and
    /// reported as [`Error::IndexOutOfBounds`]: `out` then holds every
    /// in-range write and nothing else changed.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[1.0f64, 2.0])?;
    /// let idx = DeviceVec::from_slice(&dev, &[3u64, 0])?;
    /// let mut out = DeviceVec::zeros(&dev, 4)?;
    /// v.scatter(&idx, &mut out)?;
    /// assert_eq!(out.to_vec()?, vec![2.0, 0.0, 0.0, 1.0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn scatter<I: IndexElement>(&self, indices: &impl DeviceData<I>, out: &mut impl DeviceDataMut<T>) -> Result<()> {
        same_device("scatter", self.device(), indices.device())?;
        same_device("scatter", self.device(), out.device())?;
        same_len("scatter", self.len(), indices.len())?;
        scatter_into(self.mem(), indices.mem(), out.mem_mut())
    }
}

impl<T: Element, D: DeviceData<T> + ?Sized> TransformOps<T> for D {}

/// Write-side data movement. In [`prelude`](crate::prelude).
pub trait TransformMutOps<T: Element>: DeviceDataMut<T> {
    /// Sets every element to `value`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let mut v = DeviceVec::<f32>::zeros(&Device::default()?, 3)?;
    /// v.fill(-0.0)?;
    /// assert!(v.to_vec()?.iter().all(|x| x.to_bits() == (-0.0f32).to_bits()));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn fill(&mut self, value: T) -> Result<()> {
        fill(self.mem_mut(), value)
    }

    /// Copies `src` into `self`; lengths must match.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[1u8, 2, 3])?;
    /// let mut b = DeviceVec::zeros(&dev, 3)?;
    /// b.copy_from(&a)?;
    /// assert_eq!(b.to_vec()?, vec![1, 2, 3]);
    /// assert!(b.copy_from(&a.slice(..2)?).is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn copy_from(&mut self, src: &impl DeviceData<T>) -> Result<()> {
        same_device("copy_from", self.device(), src.device())?;
        same_len("copy_from", self.len(), src.len())?;
        copy(src.mem(), self.mem_mut())
    }

    /// Copies host memory into `self`; lengths must match.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let mut v = DeviceVec::<i32>::zeros(&Device::default()?, 2)?;
    /// v.copy_from_host(&[5, 6])?;
    /// assert_eq!(v.to_vec()?, vec![5, 6]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        same_len("copy_from_host", self.len(), src.len())?;
        match self.mem_mut() {
            MemMut::Host(d) => d.copy_from_slice(src),
            MemMut::Cuda { dev, ptr, .. } => dev.upload(Ptr::from_raw(ptr), src, "copying host to device")?,
        }
        Ok(())
    }

    /// `self[i] = op(self[i])` for an operator that keeps the type.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Negate;
    /// let mut v = DeviceVec::from_slice(&Device::default()?, &[1i32, -2])?;
    /// v.transform_in_place(Negate)?;
    /// assert_eq!(v.to_vec()?, vec![-1, 2]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn transform_in_place<Op: UnaryOp<T, Output = T>>(&mut self, op: Op) -> Result<()> {
        match self.mem_mut() {
            MemMut::Host(d) => {
                use rayon::prelude::*;
                d.par_iter_mut().with_min_len(super::HOST_MIN_SPLIT).for_each(|x| *x = op.apply(*x));
                Ok(())
            }
            MemMut::Cuda { dev, ptr, len, .. } => {
                Transform::new(dev.arch(), &op).run(dev, Ptr::from_raw(ptr), Ptr::from_raw(ptr), len as u64)
            }
        }
    }

    /// [`adjacent_difference`](TransformOps::adjacent_difference) in place:
    /// `self[i]` becomes `op(old[i], old[i - 1])` for `i >= 1` (every
    /// operand is an element's value before the call), `self[0]` stays.
    /// On CUDA a small first pass copies the elements that other threads
    /// would overwrite too early (one per tile of a few hundred elements)
    /// to scratch, so the result is exactly the copying form's.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Sub;
    /// let mut v = DeviceVec::from_slice(&Device::default()?, &[5u8, 3, 10])?;
    /// v.adjacent_difference_in_place(Sub)?;
    /// assert_eq!(v.to_vec()?, vec![5, 254, 7]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn adjacent_difference_in_place<Op: BinaryOp<T>>(&mut self, op: Op) -> Result<()> {
        match self.mem_mut() {
            MemMut::Host(d) => {
                host::adjacent_difference_in_place(d, &op);
                Ok(())
            }
            MemMut::Cuda { dev, ptr, len, .. } => Adjacent::new(dev.arch(), &op).run_in_place(dev, Ptr::from_raw(ptr), len as u64),
        }
    }
}

impl<T: Element, D: DeviceDataMut<T> + ?Sized> TransformMutOps<T> for D {}

/// Constructors that compute values: these need a scalar [`Element`], and
/// run the fill / sequence kernels of this family.
impl<T: Element> DeviceVec<T> {
    /// `len` zeros.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let z = DeviceVec::<u32>::zeros(&Device::host(), 4)?;
    /// assert_eq!(z.to_vec()?, vec![0; 4]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn zeros(device: &Device, len: usize) -> Result<Self> {
        Self::filled(device, len, T::zero())
    }

    /// `len` copies of `value`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::filled(&Device::host(), 3, 7i64)?;
    /// assert_eq!(v.to_vec()?, vec![7, 7, 7]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn filled(device: &Device, len: usize, value: T) -> Result<Self> {
        let mut v = Self::alloc_uninit(device, len)?;
        fill(v.mem_mut(), value)?;
        Ok(v)
    }

    /// `start, start + step, start + 2*step, ...` (`len` elements), computed
    /// as `start + T(i) * step` with the element's own arithmetic (wrapping
    /// for integers; for floats, `i` is rounded to `T` first).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::sequence(&Device::host(), 4, 10u32, 5)?;
    /// assert_eq!(v.to_vec()?, vec![10, 15, 20, 25]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn sequence(device: &Device, len: usize, start: T, step: T) -> Result<Self>
    where
        T: crate::ops::Arith,
    {
        let mut v = Self::alloc_uninit(device, len)?;
        sequence(v.mem_mut(), start, step)?;
        Ok(v)
    }
}

pub(crate) fn fill<T: Element>(dst: MemMut<'_, T>, value: T) -> Result<()> {
    match dst {
        MemMut::Host(d) => {
            host::fill(d, value);
            Ok(())
        }
        MemMut::Cuda { dev, ptr, len, .. } => Fill::<T>::new(dev.arch()).fill(dev, Ptr::from_raw(ptr), len as u64, value),
    }
}

pub(crate) fn sequence<T: Arith>(dst: MemMut<'_, T>, start: T, step: T) -> Result<()> {
    match dst {
        MemMut::Host(d) => {
            host::sequence(d, start, step);
            Ok(())
        }
        MemMut::Cuda { dev, ptr, len, .. } => Fill::<T>::new(dev.arch()).sequence(dev, Ptr::from_raw(ptr), len as u64, start, step),
    }
}

pub(crate) fn copy<T: Element>(src: Mem<'_, T>, dst: MemMut<'_, T>) -> Result<()> {
    match (src, dst) {
        (Mem::Host(s), MemMut::Host(d)) => {
            d.copy_from_slice(s);
            Ok(())
        }
        // `src` is borrowed shared and `dst` exclusively: they do not overlap.
        (Mem::Cuda { ptr: s, len, .. }, MemMut::Cuda { dev, ptr: d, .. }) => {
            dev.copy(Ptr::<T>::from_raw(d), Ptr::from_raw(s), len as u64, "copying device to device")
        }
        _ => Err(Error::DeviceMismatch { op: "copy" }),
    }
}

pub(crate) fn transform_into<T: Element, Op: UnaryOp<T>>(src: Mem<'_, T>, dst: MemMut<'_, Op::Output>, op: &Op) -> Result<()>
where
    Op::Output: Element,
{
    match (src, dst) {
        (Mem::Host(s), MemMut::Host(d)) => {
            host::transform(s, d, op);
            Ok(())
        }
        (Mem::Cuda { ptr: s, len, .. }, MemMut::Cuda { dev, ptr: d, .. }) => {
            Transform::new(dev.arch(), op).run(dev, Ptr::from_raw(s), Ptr::from_raw(d), len as u64)
        }
        _ => Err(Error::DeviceMismatch { op: "transform" }),
    }
}

pub(crate) fn transform2_into<T: Element, Op: BinaryOp<T>>(a: Mem<'_, T>, b: Mem<'_, T>, dst: MemMut<'_, T>, op: &Op) -> Result<()> {
    match (a, b, dst) {
        (Mem::Host(a), Mem::Host(b), MemMut::Host(d)) => {
            host::transform2(a, b, d, op);
            Ok(())
        }
        (Mem::Cuda { ptr: a, len, .. }, Mem::Cuda { ptr: b, .. }, MemMut::Cuda { dev, ptr: d, .. }) => {
            Transform2::new(dev.arch(), op).run(dev, Ptr::from_raw(a), Ptr::from_raw(b), Ptr::from_raw(d), len as u64)
        }
        _ => Err(Error::DeviceMismatch { op: "transform2" }),
    }
}

pub(crate) fn gather_into<T: Element, I: IndexElement>(src: Mem<'_, T>, idx: Mem<'_, I>, dst: MemMut<'_, T>) -> Result<()> {
    match (src, idx, dst) {
        (Mem::Host(s), Mem::Host(i), MemMut::Host(d)) => plan::in_bounds("gather", host::gather(s, i, d), s.len()),
        (Mem::Cuda { ptr: s, len: src_len, .. }, Mem::Cuda { ptr: i, len, .. }, MemMut::Cuda { dev, ptr: d, .. }) => {
            GatherScatter::<T, I>::new(dev.arch()).gather(
                dev,
                Ptr::from_raw(s),
                src_len as u64,
                Ptr::from_raw(i),
                Ptr::from_raw(d),
                len as u64,
            )
        }
        _ => Err(Error::DeviceMismatch { op: "gather" }),
    }
}

pub(crate) fn scatter_into<T: Element, I: IndexElement>(src: Mem<'_, T>, idx: Mem<'_, I>, dst: MemMut<'_, T>) -> Result<()> {
    match (src, idx, dst) {
        (Mem::Host(s), Mem::Host(i), MemMut::Host(d)) => {
            let len = d.len();
            plan::in_bounds("scatter", host::scatter(s, i, d), len)
        }
        (
            Mem::Cuda { ptr: s, len, .. },
            Mem::Cuda { ptr: i, .. },
            MemMut::Cuda {
                dev, ptr: d, len: out_len, ..
            },
        ) => GatherScatter::<T, I>::new(dev.arch()).scatter(
            dev,
            Ptr::from_raw(s),
            Ptr::from_raw(i),
            len as u64,
            Ptr::from_raw(d),
            out_len as u64,
        ),
        _ => Err(Error::DeviceMismatch { op: "scatter" }),
    }
}
