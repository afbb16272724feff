//! Runs of equal consecutive keys: `reduce_by_key`, `unique`,
//! `unique_by_key`, `unique_count` and `run_length_encode`, each one pass
//! over the keys (`kernels/bykey/by_key.cu`), plus forms that write into
//! caller buffers and leave the number of runs on the device (no host
//! synchronisation, so they can be captured in a CUDA graph).
//!
//! # Runs
//! Element `i > 0` starts a new run when `keys[i] != keys[i - 1]` (the rule
//! of [`scan_by_key`](crate::algo::scan::ScanOps::scan_by_key)): every NaN
//! key is a run of its own, and `-0.0` continues a run of `0.0`. A run's
//! key in the output is its first key. A sorted input's runs are its
//! distinct values, so its `unique` is a set.
//!
//! # Floating point
//! A run's aggregate is folded in order (any [`Monoid`], commutative or
//! not), grouped as a tree within a tile and left to right across tiles, so
//! float aggregates can differ from a sequential fold by rounding; with
//! [`Device::set_deterministic`](crate::Device::set_deterministic) on (the
//! default) they are the same bits on every run. The host backend folds
//! each run sequentially.

pub(crate) mod host;
pub(crate) mod plan;

use crate::cmp::Comparator;
use crate::device::{CudaDevice, Ptr};
use crate::element::{Element, IndexElement};
use crate::error::{Error, Result};
use crate::ops::{Min, Monoid};
use crate::vec::raw::{Mem, MemMut};
use crate::vec::{DeviceData, DeviceDataMut, DeviceVec};
use plan::{ByKey, Equivalent, KeyEq, Mode, NotEqual};

/// Runs of equal consecutive keys. In [`prelude`](crate::prelude).
pub trait ByKeyOps<K: Element>: DeviceData<K> {
    /// One output per run of equal consecutive keys: the run's first key
    /// and the fold of its values with `op`, in order (commutativity is not
    /// needed). `values` must be as long as the keys.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let keys = DeviceVec::from_slice(&dev, &[1u32, 1, 2, 2, 2, 1])?;
    /// let vals = DeviceVec::from_slice(&dev, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let (k, v) = keys.reduce_by_key(&vals, Add)?;
    /// assert_eq!(k.to_vec()?, vec![1, 2, 1]);
    /// assert_eq!(v.to_vec()?, vec![3.0, 12.0, 6.0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce_by_key<V: Element, Op: Monoid<V>>(&self, values: &impl DeviceData<V>, op: Op) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        reduce_new(self, values, op, NotEqual, "reduce_by_key")
    }

    /// [`reduce_by_key`](ByKeyOps::reduce_by_key) with keys equal when
    /// neither comes before the other under `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Less;
    /// let dev = Device::default()?;
    /// // Under Less (total order) -0.0 and 0.0 differ and NaNs are equal.
    /// let keys = DeviceVec::from_slice(&dev, &[0.0f32, -0.0, f32::NAN, f32::NAN])?;
    /// let vals = DeviceVec::from_slice(&dev, &[1u32, 2, 3, 4])?;
    /// let (k, v) = keys.reduce_by_key_by(&vals, Add, Less)?;
    /// assert_eq!(k.len(), 3);
    /// assert_eq!(v.to_vec()?, vec![1, 2, 7]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce_by_key_by<V: Element, Op: Monoid<V>, C: Comparator<K>>(
        &self,
        values: &impl DeviceData<V>,
        op: Op,
        cmp: C,
    ) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        reduce_new(self, values, op, Equivalent(cmp), "reduce_by_key_by")
    }

    /// [`reduce_by_key`](ByKeyOps::reduce_by_key) into caller buffers,
    /// with no host synchronisation: the run keys and aggregates go to the
    /// front of `keys_out` and `values_out` (each at least as long as the
    /// keys) and the number of runs to `count[0]`, on the device. Checks
    /// happen before anything is written.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let keys = DeviceVec::from_slice(&dev, &[7i32, 7, 7, 3])?;
    /// let vals = DeviceVec::from_slice(&dev, &[1u64, 2, 3, 4])?;
    /// let (mut k, mut v) = (DeviceVec::<i32>::zeros(&dev, 4)?, DeviceVec::<u64>::zeros(&dev, 4)?);
    /// let mut count = DeviceVec::<u64>::zeros(&dev, 1)?;
    /// keys.reduce_by_key_into(&vals, Add, &mut k, &mut v, &mut count)?;
    /// assert_eq!(count.to_vec()?, vec![2]);
    /// assert_eq!(k.to_vec()?[..2], [7, 3]);
    /// assert_eq!(v.to_vec()?[..2], [6, 4]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce_by_key_into<V: Element, Op: Monoid<V>>(
        &self,
        values: &impl DeviceData<V>,
        op: Op,
        keys_out: &mut impl DeviceDataMut<K>,
        values_out: &mut impl DeviceDataMut<V>,
        count: &mut impl DeviceDataMut<u64>,
    ) -> Result<()> {
        const OP: &str = "reduce_by_key_into";
        check_values(OP, self, values)?;
        check_out(OP, self, keys_out.device(), keys_out.len())?;
        check_out(OP, self, values_out.device(), values_out.len())?;
        check_count(OP, self, count)?;
        match (self.mem(), values.mem(), keys_out.mem_mut(), values_out.mem_mut(), count.mem_mut()) {
            (Mem::Host(k), Mem::Host(v), MemMut::Host(ko), MemMut::Host(vo), MemMut::Host(c)) => {
                let heads = host::heads(k, |a, b| NotEqual.differ(a, b));
                let sums = host::reduce_runs(v, &heads, |a, b| op.apply(a, b));
                write_host(ko, &host::at_heads(k, &heads));
                write_host(vo, &sums);
                c[0] = heads.len() as u64;
                Ok(())
            }
            (Mem::Cuda { dev, ptr: k, len, .. }, Mem::Cuda { ptr: v, .. }, ko, vo, c) => {
                let (ko, vo, c) = (out_ptr(OP, ko)?, out_ptr(OP, vo)?, out_ptr(OP, c)?);
                ByKey::<K, V, V, Op, NotEqual>::new(dev.arch(), Mode::Reduce, &op, NotEqual, len, dev.deterministic_for::<V>())
                    .run(dev, Ptr::from_raw(k), Ptr::from_raw(v), len, ko, vo, Some(c))
                    .map(|_| ())
            }
            _ => Err(Error::DeviceMismatch { op: OP }),
        }
    }

    /// The first key of each run, in order (a sorted input's distinct values).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1u8, 1, 4, 4, 4, 2, 1, 1])?;
    /// assert_eq!(v.unique()?.to_vec()?, vec![1, 4, 2, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn unique(&self) -> Result<DeviceVec<K>> {
        match self.mem() {
            Mem::Host(k) => DeviceVec::from_slice(self.device(), &host::at_heads(k, &host::heads(k, |a, b| a != b))),
            Mem::Cuda { dev, ptr, len, .. } => {
                let mut out = DeviceVec::<K>::alloc_uninit(self.device(), len)?;
                let o = crate::algo::cuda_ptr_mut(&mut out, "unique")?;
                let runs =
                    plan_of::<K, K, K>(dev, Mode::Unique, len).run(dev, Ptr::from_raw(ptr), Ptr::null(), len, o, Ptr::null(), None)?;
                out.truncate(runs.unwrap_or(0) as usize)?;
                Ok(out)
            }
        }
    }

    /// The number of runs (of distinct values, for a sorted input).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[2.0f64, 2.0, f64::NAN, f64::NAN, -0.0, 0.0])?;
    /// assert_eq!(v.unique_count()?, 4); // 2.0, NaN, NaN, 0.0
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn unique_count(&self) -> Result<usize> {
        match self.mem() {
            Mem::Host(k) => Ok(host::heads(k, |a, b| a != b).len()),
            Mem::Cuda { dev, ptr, len, .. } => {
                let runs = plan_of::<K, K, K>(dev, Mode::Count, len).run(
                    dev,
                    Ptr::from_raw(ptr),
                    Ptr::null(),
                    len,
                    Ptr::null(),
                    Ptr::null(),
                    None,
                )?;
                Ok(runs.unwrap_or(0) as usize)
            }
        }
    }

    /// The first key and the first value of each run. `values` must be as
    /// long as the keys.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let keys = DeviceVec::from_slice(&dev, &[5u32, 5, 6, 5])?;
    /// let vals = DeviceVec::from_slice(&dev, &[10i8, 11, 12, 13])?;
    /// let (k, v) = keys.unique_by_key(&vals)?;
    /// assert_eq!((k.to_vec()?, v.to_vec()?), (vec![5, 6, 5], vec![10, 12, 13]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn unique_by_key<V: Element>(&self, values: &impl DeviceData<V>) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        const OP: &str = "unique_by_key";
        check_values(OP, self, values)?;
        match (self.mem(), values.mem()) {
            (Mem::Host(k), Mem::Host(v)) => {
                let heads = host::heads(k, |a, b| a != b);
                Ok((
                    DeviceVec::from_slice(self.device(), &host::at_heads(k, &heads))?,
                    DeviceVec::from_slice(self.device(), &host::at_heads(v, &heads))?,
                ))
            }
            (Mem::Cuda { dev, ptr: k, len, .. }, Mem::Cuda { ptr: v, .. }) => {
                let mut ko = DeviceVec::<K>::alloc_uninit(self.device(), len)?;
                let mut vo = DeviceVec::<V>::alloc_uninit(self.device(), len)?;
                let (kp, vp) = (crate::algo::cuda_ptr_mut(&mut ko, OP)?, crate::algo::cuda_ptr_mut(&mut vo, OP)?);
                let runs =
                    plan_of::<K, V, V>(dev, Mode::UniqueByKey, len).run(dev, Ptr::from_raw(k), Ptr::from_raw(v), len, kp, vp, None)?;
                let runs = runs.unwrap_or(0) as usize;
                ko.truncate(runs)?;
                vo.truncate(runs)?;
                Ok((ko, vo))
            }
            _ => Err(Error::DeviceMismatch { op: OP }),
        }
    }

    /// [`unique`](ByKeyOps::unique) into `out` (at least as long as the
    /// keys), the number of runs to `count[0]`, on the device, with no host
    /// synchronisation. Checks happen before anything is written.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[3u64, 3, 1, 1, 3])?;
    /// let mut out = DeviceVec::<u64>::zeros(&dev, 5)?;
    /// let mut count = DeviceVec::<u64>::zeros(&dev, 1)?;
    /// v.unique_into(&mut out, &mut count)?;
    /// assert_eq!(count.to_vec()?, vec![3]);
    /// assert_eq!(out.to_vec()?[..3], [3, 1, 3]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn unique_into(&self, out: &mut impl DeviceDataMut<K>, count: &mut impl DeviceDataMut<u64>) -> Result<()> {
        const OP: &str = "unique_into";
        check_out(OP, self, out.device(), out.len())?;
        check_count(OP, self, count)?;
        match (self.mem(), out.mem_mut(), count.mem_mut()) {
            (Mem::Host(k), MemMut::Host(o), MemMut::Host(c)) => {
                let heads = host::heads(k, |a, b| a != b);
                write_host(o, &host::at_heads(k, &heads));
                c[0] = heads.len() as u64;
                Ok(())
            }
            (Mem::Cuda { dev, ptr, len, .. }, o, c) => {
                let (o, c) = (out_ptr(OP, o)?, out_ptr(OP, c)?);
                plan_of::<K, K, K>(dev, Mode::Unique, len)
                    .run(dev, Ptr::from_raw(ptr), Ptr::null(), len, o, Ptr::null(), Some(c))
                    .map(|_| ())
            }
            _ => Err(Error::DeviceMismatch { op: OP }),
        }
    }

    /// Run-length encoding: each run's first key and its length (`u32`;
    /// inputs of 2^32 keys or more need
    /// [`run_length_encode_with::<u64>`](ByKeyOps::run_length_encode_with)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[9i32, 9, 9, -1, 9, 9])?;
    /// let (values, lengths) = v.run_length_encode()?;
    /// assert_eq!(values.to_vec()?, vec![9, -1, 9]);
    /// assert_eq!(lengths.to_vec()?, vec![3, 1, 2]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn run_length_encode(&self) -> Result<(DeviceVec<K>, DeviceVec<u32>)> {
        self.run_length_encode_with::<u32>()
    }

    /// [`run_length_encode`](ByKeyOps::run_length_encode) with lengths of
    /// type `C` (`u32` or `u64`).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[0.5f32, 0.5, 0.25])?;
    /// let (values, lengths) = v.run_length_encode_with::<u64>()?;
    /// assert_eq!(values.to_vec()?, vec![0.5, 0.25]);
    /// assert_eq!(lengths.to_vec()?, vec![2u64, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn run_length_encode_with<C: IndexElement>(&self) -> Result<(DeviceVec<K>, DeviceVec<C>)> {
        const OP: &str = "run_length_encode";
        let n = self.len();
        if n as u64 > C::highest().as_u64() {
            return Err(Error::InvalidArgument(format!(
                "run_length_encode of {n} keys needs u64 lengths, not {} (use run_length_encode_with::<u64>())",
                C::NAME
            )));
        }
        match self.mem() {
            Mem::Host(k) => {
                let heads = host::heads(k, |a, b| a != b);
                let lengths: Vec<C> = host::lengths(&heads, n)
                    .into_iter()
                    .map(|l| C::from_scalar(crate::Scalar::U64(l)))
                    .collect();
                Ok((
                    DeviceVec::from_slice(self.device(), &host::at_heads(k, &heads))?,
                    DeviceVec::from_slice(self.device(), &lengths)?,
                ))
            }
            Mem::Cuda { dev, ptr, len, .. } => {
                let mut ko = DeviceVec::<K>::alloc_uninit(self.device(), len)?;
                let mut lo = DeviceVec::<C>::alloc_uninit(self.device(), len)?;
                let (kp, lp) = (crate::algo::cuda_ptr_mut(&mut ko, OP)?, crate::algo::cuda_ptr_mut(&mut lo, OP)?);
                let keys = Ptr::from_raw(ptr);
                // The kernel's values are the counts it sums (1 per element): u32 below 2^32 elements.
                let runs = if len as u64 > u32::MAX as u64 {
                    plan_of::<K, u64, C>(dev, Mode::Lengths, len).run(dev, keys, Ptr::null(), len, kp, lp, None)?
                } else {
                    plan_of::<K, u32, C>(dev, Mode::Lengths, len).run(dev, keys, Ptr::null(), len, kp, lp, None)?
                };
                let runs = runs.unwrap_or(0) as usize;
                ko.truncate(runs)?;
                lo.truncate(runs)?;
                Ok((ko, lo))
            }
        }
    }
}

impl<K: Element, D: DeviceData<K> + ?Sized> ByKeyOps<K> for D {}

/// The plan of a mode that folds nothing (`Min` stands in for the unused monoid).
fn plan_of<K: Element, V: Element, O: Element>(dev: &CudaDevice, mode: Mode, len: usize) -> ByKey<'static, K, V, O, Min, NotEqual> {
    ByKey::new(dev.arch(), mode, &Min, NotEqual, len, false)
}

fn reduce_new<K: Element, V: Element, Op: Monoid<V>, E: KeyEq<K>>(
    keys: &(impl DeviceData<K> + ?Sized),
    values: &impl DeviceData<V>,
    op: Op,
    eq: E,
    name: &'static str,
) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
    check_values(name, keys, values)?;
    match (keys.mem(), values.mem()) {
        (Mem::Host(k), Mem::Host(v)) => {
            let heads = host::heads(k, |a, b| eq.differ(a, b));
            let sums = host::reduce_runs(v, &heads, |a, b| op.apply(a, b));
            Ok((
                DeviceVec::from_slice(keys.device(), &host::at_heads(k, &heads))?,
                DeviceVec::from_slice(keys.device(), &sums)?,
            ))
        }
        (Mem::Cuda { dev, ptr: k, len, .. }, Mem::Cuda { ptr: v, .. }) => {
            let mut ko = DeviceVec::<K>::alloc_uninit(keys.device(), len)?;
            let mut vo = DeviceVec::<V>::alloc_uninit(keys.device(), len)?;
            let (kp, vp) = (crate::algo::cuda_ptr_mut(&mut ko, name)?, crate::algo::cuda_ptr_mut(&mut vo, name)?);
            let runs = ByKey::<K, V, V, Op, E>::new(dev.arch(), Mode::Reduce, &op, eq, len, dev.deterministic_for::<V>()).run(
                dev,
                Ptr::from_raw(k),
                Ptr::from_raw(v),
                len,
                kp,
                vp,
                None,
            )?;
            let runs = runs.unwrap_or(0) as usize;
            ko.truncate(runs)?;
            vo.truncate(runs)?;
            Ok((ko, vo))
        }
        _ => Err(Error::DeviceMismatch { op: name }),
    }
}

/// The values live with the keys and are as many.
fn check_values<K: Element, V: Element>(op: &'static str, keys: &(impl DeviceData<K> + ?Sized), values: &impl DeviceData<V>) -> Result<()> {
    crate::algo::same_device(op, keys.device(), values.device())?;
    crate::algo::same_len(op, keys.len(), values.len())
}

/// An output of an `_into` form: on the keys' device, with room for one run per key.
fn check_out<K: Element>(op: &'static str, keys: &(impl DeviceData<K> + ?Sized), dev: &crate::Device, len: usize) -> Result<()> {
    crate::algo::same_device(op, keys.device(), dev)?;
    if len < keys.len() {
        return Err(Error::InvalidArgument(format!(
            "{op}: an output of {len} elements is shorter than the {} keys (it needs room for one run per key)",
            keys.len()
        )));
    }
    Ok(())
}

/// The count of an `_into` form: on the keys' device, at least one element.
fn check_count<K: Element>(op: &'static str, keys: &(impl DeviceData<K> + ?Sized), count: &impl DeviceData<u64>) -> Result<()> {
    crate::algo::same_device(op, keys.device(), count.device())?;
    if count.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "{op}: the count output is empty (it needs one u64)"
        )));
    }
    Ok(())
}

/// `src` to the front of `dst` (checked long enough before).
fn write_host<T: Copy>(dst: &mut [T], src: &[T]) {
    dst[..src.len()].copy_from_slice(src);
}

/// The device address of an `_into` output.
fn out_ptr<T>(op: &'static str, m: MemMut<'_, T>) -> Result<Ptr<T>> {
    match m {
        MemMut::Cuda { ptr, .. } => Ok(Ptr::from_raw(ptr)),
        MemMut::Host(_) => Err(Error::DeviceMismatch { op }),
    }
}
