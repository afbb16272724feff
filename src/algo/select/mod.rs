//! Stream compaction on top of the scan machinery: `copy_if` and a stable
//! `partition`, each one pass over the input (`kernels/select/select.cu`).

pub(crate) mod host;
pub(crate) mod plan;

use crate::device::Ptr;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::expr::Leaf;
use crate::pred::Predicate;
use crate::vec::raw::{Mem, MemMut, Sealed as _, SealedMut as _};
use crate::vec::{DeviceData, DeviceDataMut, DeviceVec};
use plan::Select;

/// Compaction into a new vector. In [`prelude`](crate::prelude).
pub trait SelectOps<T: Element>: DeviceData<T> {
    /// The elements that satisfy `pred`, in their original order.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Gt;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[5u32, 1, 8, 2, 9])?;
    /// assert_eq!(v.copy_if(Gt(4))?.to_vec()?, vec![5, 8, 9]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn copy_if<P: Predicate<T>>(&self, pred: P) -> Result<DeviceVec<T>> {
        match self.mem() {
            Mem::Host(s) => DeviceVec::from_slice(self.device(), &host::copy_if(s, |x| pred.test(x))),
            Mem::Cuda { dev, ptr, len, .. } => {
                let mut out = DeviceVec::<T>::alloc_uninit(self.device(), len)?;
                let out_ptr = match out.mem_mut() {
                    MemMut::Cuda { ptr, .. } => ptr,
                    MemMut::Host(_) => return Err(Error::DeviceMismatch { op: "copy_if" }),
                };
                let kept = Select::new(dev.arch(), &Leaf::<T>::raw(ptr, len), &pred).run(dev, Ptr::from_raw(out_ptr), Ptr::null())?;
                out.truncate(kept)?;
                Ok(out)
            }
        }
    }

    /// The elements that satisfy `pred` and those that do not, in two new
    /// vectors, each in its original order (a stable partition into two
    /// outputs, in one pass: [`ExprOps::partition_copy`](crate::expr::ExprOps::partition_copy)
    /// of the buffer).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Gt;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[5u32, 1, 8, 2, 9])?;
    /// let (big, small) = v.partition_copy(Gt(4))?;
    /// assert_eq!((big.to_vec()?, small.to_vec()?), (vec![5, 8, 9], vec![1, 2]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn partition_copy<P: Predicate<T>>(&self, pred: P) -> Result<(DeviceVec<T>, DeviceVec<T>)> {
        crate::expr::ExprOps::partition_copy(&crate::expr::LazyOps::lazy(self), pred)
    }

    /// [`copy_if`](SelectOps::copy_if) into `out` (at least as long as the
    /// input), the number kept to `count[0]`, on the device, with no host
    /// synchronisation (graph-capture friendly). Checks happen before
    /// anything is written.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Gt;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[5u32, 1, 8, 2, 9])?;
    /// let mut out = DeviceVec::<u32>::zeros(&dev, 5)?;
    /// let mut count = DeviceVec::<u64>::zeros(&dev, 1)?;
    /// v.copy_if_into(Gt(4), &mut out, &mut count)?;
    /// assert_eq!(count.to_vec()?, vec![3]);
    /// assert_eq!(out.to_vec()?[..3], [5, 8, 9]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn copy_if_into<P: Predicate<T>>(&self, pred: P, out: &mut impl DeviceDataMut<T>, count: &mut impl DeviceDataMut<u64>) -> Result<()> {
        const OP: &str = "copy_if_into";
        check_into(OP, self.device(), self.len(), out, count)?;
        match (self.mem(), out.mem_mut(), count.mem_mut()) {
            (Mem::Host(s), MemMut::Host(o), MemMut::Host(c)) => {
                let kept = host::copy_if(s, |x| pred.test(x));
                o[..kept.len()].copy_from_slice(&kept);
                c[0] = kept.len() as u64;
                Ok(())
            }
            (Mem::Cuda { dev, ptr, len, .. }, MemMut::Cuda { ptr: o, .. }, MemMut::Cuda { ptr: c, .. }) => {
                Select::new(dev.arch(), &Leaf::<T>::raw(ptr, len), &pred)
                    .launch(dev, Ptr::from_raw(o), Ptr::null(), Some(Ptr::from_raw(c)))
                    .map(|_| ())
            }
            _ => Err(Error::DeviceMismatch { op: OP }),
        }
    }
}

impl<T: Element, D: DeviceData<T> + ?Sized> SelectOps<T> for D {}

/// The checks of a `copy_if_into` of `len` inputs on `input`: both outputs
/// on the input's device, room for every input, and one count word.
pub(crate) fn check_into<T: Element>(
    op: &'static str,
    input: &crate::Device,
    len: usize,
    out: &impl DeviceDataMut<T>,
    count: &impl DeviceDataMut<u64>,
) -> Result<()> {
    crate::algo::same_device(op, input, out.device())?;
    crate::algo::same_device(op, input, count.device())?;
    if out.len() < len {
        return Err(Error::InvalidArgument(format!(
            "{op}: an output of {} elements is shorter than the {len} inputs (it needs room for all of them)",
            out.len()
        )));
    }
    if count.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "{op}: the count output is empty (it needs one u64)"
        )));
    }
    Ok(())
}

/// In-place compaction. In [`prelude`](crate::prelude).
pub trait SelectMutOps<T: Element>: DeviceDataMut<T> {
    /// Reorders the elements so that those satisfying `pred` come first,
    /// each group keeping its original order (stable); returns how many
    /// satisfy it (the split point).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Lt;
    /// let mut v = DeviceVec::from_slice(&Device::default()?, &[7i32, -1, 3, -5, 0])?;
    /// let split = v.partition(Lt(0))?;
    /// assert_eq!(split, 2);
    /// assert_eq!(v.to_vec()?, vec![-1, -5, 7, 3, 0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn partition<P: Predicate<T>>(&mut self, pred: P) -> Result<usize> {
        let device = self.device().clone();
        match self.mem_mut() {
            MemMut::Host(d) => Ok(host::partition(d, |x| pred.test(x))),
            MemMut::Cuda { dev, ptr, len, .. } => {
                if len == 0 {
                    return Ok(0);
                }
                // Selected and rejected go to two halves of one temporary,
                // then back into place with two copies.
                let tmp = DeviceVec::<T>::alloc_uninit(&device, 2 * len)?;
                let tmp_ptr = match tmp.mem() {
                    Mem::Cuda { ptr, .. } => ptr,
                    Mem::Host(_) => return Err(Error::DeviceMismatch { op: "partition" }),
                };
                let (data, selected) = (Ptr::<T>::from_raw(ptr), Ptr::<T>::from_raw(tmp_ptr));
                let rejected = selected.add(len as u64);
                let kept = Select::registers(dev.arch(), &Leaf::<T>::raw(ptr, len), &pred).run(dev, selected, rejected)?;
                // The temporary holds `kept` selected, then `len - kept` rejected elements.
                dev.copy(data, selected, kept as u64, "partition")?;
                dev.copy(data.add(kept as u64), rejected, (len - kept) as u64, "partition")?;
                Ok(kept)
            }
        }
    }
}

impl<T: Element, D: DeviceDataMut<T> + ?Sized> SelectMutOps<T> for D {}
