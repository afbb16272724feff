//! Data movement and element-wise transforms: `fill`, `copy_from`,
//! `transform`, `transform2`, `gather`, `scatter`.

use super::{same_device, same_len};
use crate::device::{kernel_args, CudaDevice, FastKey};
use crate::element::{Element, IndexElement};
use crate::error::{DriverContext, Error, Result};
use crate::host;
use crate::jit::source::{FILL, GATHER_SCATTER, TRANSFORM, TRANSFORM2};
use crate::jit::KernelSpec;
use crate::ops::{Arith, BinaryOp, UnaryOp};
use crate::tuning;
use crate::vec::raw::{Mem, MemMut, SealedMut as _};
use crate::vec::{DeviceData, DeviceDataMut, DeviceVec};

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
    fn transform<Op: UnaryOp<T>>(&self, op: Op) -> Result<DeviceVec<Op::Output>> {
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
            MemMut::Cuda { dev, ptr, len, .. } => {
                if len > 0 {
                    // SAFETY: `ptr` addresses `len == src.len()` elements we
                    // borrow mutably; the sync keeps `src` alive for the copy.
                    unsafe {
                        cudarc::driver::result::memcpy_htod_async(ptr, src, dev.stream.cu_stream()).during("copying host to device")?;
                    }
                    dev.stream.synchronize().during("copying host to device")?;
                }
            }
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
                d.par_iter_mut().with_min_len(host::MIN_SPLIT).for_each(|x| *x = op.apply(*x));
                Ok(())
            }
            MemMut::Cuda { dev, ptr, len, .. } => launch_transform::<T, Op>(dev, ptr, ptr, len, &op),
        }
    }
}

impl<T: Element, D: DeviceDataMut<T> + ?Sized> TransformMutOps<T> for D {}

fn elementwise_spec(template: &'static crate::jit::Template, arch: u32) -> (KernelSpec, tuning::Policy) {
    let policy = tuning::elementwise(arch);
    let spec = KernelSpec::new(template).constant("CUPRIM_UNROLL", policy.unroll as i64);
    (spec, policy)
}

/// The fill / sequence kernels for `T`.
pub(crate) fn fill_spec<T: Element>(arch: u32) -> (KernelSpec, tuning::Policy) {
    let (spec, policy) = elementwise_spec(&FILL, arch);
    (spec.elem::<T>("T"), policy)
}

/// The unary transform kernel for `T -> Op::Output`.
pub(crate) fn transform_spec<T: Element, Op: UnaryOp<T>>(arch: u32, op: &Op) -> (KernelSpec, tuning::Policy) {
    let (spec, policy) = elementwise_spec(&TRANSFORM, arch);
    let spec = spec.elem::<T>("T").elem::<Op::Output>("U").unary::<T, Op>("UnaryFn", "T", "U", op);
    (spec, policy)
}

/// The binary element-wise kernel for `T` and `Op`.
pub(crate) fn transform2_spec<T: Element, Op: BinaryOp<T>>(arch: u32, op: &Op) -> (KernelSpec, tuning::Policy) {
    let (spec, policy) = elementwise_spec(&TRANSFORM2, arch);
    (spec.elem::<T>("T").binary::<T, Op>("BinaryFn", "T", op), policy)
}

/// The gather / scatter kernels for elements `T` and indices `I`.
pub(crate) fn gather_scatter_spec<T: Element, I: IndexElement>(arch: u32) -> (KernelSpec, tuning::Policy) {
    let (spec, policy) = elementwise_spec(&GATHER_SCATTER, arch);
    (spec.elem::<T>("T").elem::<I>("I"), policy)
}

fn items_per_vector(bytes: usize) -> u64 {
    (16 / bytes.clamp(1, 16)) as u64
}

pub(crate) fn fill<T: Element>(dst: MemMut<'_, T>, value: T) -> Result<()> {
    match dst {
        MemMut::Host(d) => {
            host::transform::fill(d, value);
            Ok(())
        }
        MemMut::Cuda { dev, ptr, len, .. } => {
            if len == 0 {
                return Ok(());
            }
            let policy = tuning::elementwise(dev.arch);
            let module = dev.module_for(FastKey::new::<T, (), ()>("fill", String::new()), || fill_spec::<T>(dev.arch).0)?;
            let n = len as u64;
            let grid = policy.grid(n / items_per_vector(std::mem::size_of::<T>()) + 1, dev.sm_count);
            // SAFETY: cuprim_fill(T* out, T value, u64 n); `ptr` holds `n`
            // elements borrowed mutably for this call.
            unsafe {
                dev.launch(
                    module.function("cuprim_fill")?,
                    grid,
                    policy.block,
                    0,
                    &mut kernel_args![&ptr, &value, &n],
                )
            }
        }
    }
}

pub(crate) fn sequence<T: Arith>(dst: MemMut<'_, T>, start: T, step: T) -> Result<()> {
    match dst {
        MemMut::Host(d) => {
            host::transform::sequence(d, start, step);
            Ok(())
        }
        MemMut::Cuda { dev, ptr, len, .. } => {
            if len == 0 {
                return Ok(());
            }
            let policy = tuning::elementwise(dev.arch);
            let module = dev.module_for(FastKey::new::<T, (), ()>("fill", String::new()), || fill_spec::<T>(dev.arch).0)?;
            let n = len as u64;
            let grid = policy.grid(n, dev.sm_count);
            // SAFETY: cuprim_sequence(T* out, T start, T step, u64 n); `ptr`
            // holds `n` elements borrowed mutably.
            unsafe {
                dev.launch(
                    module.function("cuprim_sequence")?,
                    grid,
                    policy.block,
                    0,
                    &mut kernel_args![&ptr, &start, &step, &n],
                )
            }
        }
    }
}

pub(crate) fn copy<T: Element>(src: Mem<'_, T>, dst: MemMut<'_, T>) -> Result<()> {
    match (src, dst) {
        (Mem::Host(s), MemMut::Host(d)) => {
            d.copy_from_slice(s);
            Ok(())
        }
        (Mem::Cuda { ptr: s, len, .. }, MemMut::Cuda { dev, ptr: d, .. }) => {
            if len == 0 {
                return Ok(());
            }
            // SAFETY: both ranges hold `len` elements; `src` is borrowed
            // shared and `dst` exclusively, so they do not overlap.
            unsafe {
                cudarc::driver::result::memcpy_dtod_async(d, s, len * std::mem::size_of::<T>(), dev.stream.cu_stream())
                    .during("copying device to device")
            }
        }
        _ => Err(Error::DeviceMismatch { op: "copy" }),
    }
}

fn launch_transform<T: Element, Op: UnaryOp<T>>(dev: &CudaDevice, src: u64, dst: u64, len: usize, op: &Op) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let policy = tuning::elementwise(dev.arch);
    let key = FastKey::new::<T, Op, Op::Output>("transform", op.cuda_expr());
    let module = dev.module_for(key, || transform_spec::<T, Op>(dev.arch, op).0)?;
    let n = len as u64;
    let width = std::mem::size_of::<T>().max(std::mem::size_of::<Op::Output>());
    let grid = policy.grid(n / items_per_vector(width) + 1, dev.sm_count);
    // SAFETY: cuprim_transform(const T* in, U* out, u64 n); both ranges
    // hold `n` elements (in place when src == dst, which the kernel allows:
    // each element is read before it is written by the same thread).
    unsafe {
        dev.launch(
            module.function("cuprim_transform")?,
            grid,
            policy.block,
            0,
            &mut kernel_args![&src, &dst, &n],
        )
    }
}

pub(crate) fn transform_into<T: Element, Op: UnaryOp<T>>(src: Mem<'_, T>, dst: MemMut<'_, Op::Output>, op: &Op) -> Result<()> {
    match (src, dst) {
        (Mem::Host(s), MemMut::Host(d)) => {
            host::transform::transform(s, d, op);
            Ok(())
        }
        (Mem::Cuda { ptr: s, len, .. }, MemMut::Cuda { dev, ptr: d, .. }) => launch_transform::<T, Op>(dev, s, d, len, op),
        _ => Err(Error::DeviceMismatch { op: "transform" }),
    }
}

pub(crate) fn transform2_into<T: Element, Op: BinaryOp<T>>(a: Mem<'_, T>, b: Mem<'_, T>, dst: MemMut<'_, T>, op: &Op) -> Result<()> {
    match (a, b, dst) {
        (Mem::Host(a), Mem::Host(b), MemMut::Host(d)) => {
            host::transform::transform2(a, b, d, op);
            Ok(())
        }
        (Mem::Cuda { ptr: a, len, .. }, Mem::Cuda { ptr: b, .. }, MemMut::Cuda { dev, ptr: d, .. }) => {
            if len == 0 {
                return Ok(());
            }
            let policy = tuning::elementwise(dev.arch);
            let key = FastKey::new::<T, Op, ()>("transform2", op.cuda_expr());
            let module = dev.module_for(key, || transform2_spec::<T, Op>(dev.arch, op).0)?;
            let n = len as u64;
            let grid = policy.grid(n / items_per_vector(std::mem::size_of::<T>()) + 1, dev.sm_count);
            // SAFETY: cuprim_transform2(const T* a, const T* b, T* out, u64 n);
            // all three ranges hold `n` elements.
            unsafe {
                dev.launch(
                    module.function("cuprim_transform2")?,
                    grid,
                    policy.block,
                    0,
                    &mut kernel_args![&a, &b, &d, &n],
                )
            }
        }
        _ => Err(Error::DeviceMismatch { op: "transform2" }),
    }
}

fn bounds_result(op: &'static str, ok: bool, len: usize) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::IndexOutOfBounds { op, len })
    }
}

pub(crate) fn gather_into<T: Element, I: IndexElement>(src: Mem<'_, T>, idx: Mem<'_, I>, dst: MemMut<'_, T>) -> Result<()> {
    match (src, idx, dst) {
        (Mem::Host(s), Mem::Host(i), MemMut::Host(d)) => bounds_result("gather", host::transform::gather(s, i, d), s.len()),
        (Mem::Cuda { ptr: s, len: src_len, .. }, Mem::Cuda { ptr: i, len, .. }, MemMut::Cuda { dev, ptr: d, .. }) => {
            if len == 0 {
                return Ok(());
            }
            let policy = tuning::elementwise(dev.arch);
            let key = FastKey::new::<T, I, ()>("gather_scatter", String::new());
            let module = dev.module_for(key, || gather_scatter_spec::<T, I>(dev.arch).0)?;
            let (n, src_len64, flag) = (len as u64, src_len as u64, dev.error_flag_ptr);
            let _flag_guard = dev.error_flag_lock.lock().unwrap_or_else(|e| e.into_inner());
            let width = std::mem::size_of::<T>().max(std::mem::size_of::<I>());
            let grid = policy.grid(n / items_per_vector(width) + 1, dev.sm_count);
            // SAFETY: cuprim_gather(const T* src, u64 src_len, const I* idx,
            // T* out, u64 n, u32* flag): src holds src_len elements (the kernel
            // reads only below that), idx and out hold n, flag is the device's.
            unsafe {
                dev.launch(
                    module.function("cuprim_gather")?,
                    grid,
                    policy.block,
                    0,
                    &mut kernel_args![&s, &src_len64, &i, &d, &n, &flag],
                )?;
            }
            bounds_result("gather", !dev.take_error_flag()?, src_len)
        }
        _ => Err(Error::DeviceMismatch { op: "gather" }),
    }
}

pub(crate) fn scatter_into<T: Element, I: IndexElement>(src: Mem<'_, T>, idx: Mem<'_, I>, dst: MemMut<'_, T>) -> Result<()> {
    match (src, idx, dst) {
        (Mem::Host(s), Mem::Host(i), MemMut::Host(d)) => {
            let len = d.len();
            bounds_result("scatter", host::transform::scatter(s, i, d), len)
        }
        (
            Mem::Cuda { ptr: s, len, .. },
            Mem::Cuda { ptr: i, .. },
            MemMut::Cuda {
                dev, ptr: d, len: out_len, ..
            },
        ) => {
            if len == 0 {
                return Ok(());
            }
            let policy = tuning::elementwise(dev.arch);
            let key = FastKey::new::<T, I, ()>("gather_scatter", String::new());
            let module = dev.module_for(key, || gather_scatter_spec::<T, I>(dev.arch).0)?;
            let (n, out_len64, flag) = (len as u64, out_len as u64, dev.error_flag_ptr);
            let _flag_guard = dev.error_flag_lock.lock().unwrap_or_else(|e| e.into_inner());
            let grid = policy.grid(n, dev.sm_count);
            // SAFETY: cuprim_scatter(const T* src, const I* idx, u64 n, T* out,
            // u64 out_len, u32* flag): src and idx hold n elements, out holds
            // out_len and the kernel writes only below that.
            unsafe {
                dev.launch(
                    module.function("cuprim_scatter")?,
                    grid,
                    policy.block,
                    0,
                    &mut kernel_args![&s, &i, &n, &d, &out_len64, &flag],
                )?;
            }
            bounds_result("scatter", !dev.take_error_flag()?, out_len)
        }
        _ => Err(Error::DeviceMismatch { op: "scatter" }),
    }
}
