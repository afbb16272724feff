//! [`DeviceVec`], its borrowed views, and the traits every algorithm is
//! written against.
//!
//! Algorithms take anything that implements [`DeviceData`] (read) or
//! [`DeviceDataMut`] (write): a whole `DeviceVec`, or a [`DeviceSlice`] /
//! [`DeviceSliceMut`] view of part of one. Their methods live in extension
//! traits, one per family, all in [`prelude`](crate::prelude).

use crate::device::{Backend, CudaDevice, Device};
use crate::element::{Element, Storable};
use crate::error::{DriverContext, Error, Result};
use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DevicePtr};
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

/// Raw access to a buffer's memory, for the algorithm layer.
#[allow(private_interfaces)]
pub(crate) mod raw {
    use super::*;

    /// Read access: a host slice or a device pointer range.
    pub enum Mem<'a, T> {
        /// Host backend memory.
        Host(&'a [T]),
        /// Device memory: `len` elements at `ptr` on `dev`.
        Cuda {
            /// The device the memory lives on.
            dev: &'a CudaDevice,
            /// Address of element 0.
            ptr: u64,
            /// Element count.
            len: usize,
            /// Borrow of the owner.
            _p: PhantomData<&'a [T]>,
        },
    }

    /// Write access: like [`Mem`], exclusive.
    pub enum MemMut<'a, T> {
        /// Host backend memory.
        Host(&'a mut [T]),
        /// Device memory: `len` elements at `ptr` on `dev`.
        Cuda {
            /// The device the memory lives on.
            dev: &'a CudaDevice,
            /// Address of element 0.
            ptr: u64,
            /// Element count.
            len: usize,
            /// Exclusive borrow of the owner.
            _p: PhantomData<&'a mut [T]>,
        },
    }

    impl<T> Mem<'_, T> {
        pub fn len(&self) -> usize {
            match self {
                Mem::Host(s) => s.len(),
                Mem::Cuda { len, .. } => *len,
            }
        }
    }

    impl<T> MemMut<'_, T> {
        pub fn len(&self) -> usize {
            match self {
                MemMut::Host(s) => s.len(),
                MemMut::Cuda { len, .. } => *len,
            }
        }
    }

    pub trait Sealed<T> {
        fn mem(&self) -> Mem<'_, T>;
    }
    pub trait SealedMut<T>: Sealed<T> {
        fn mem_mut(&mut self) -> MemMut<'_, T>;
    }
}
use raw::{Mem, MemMut};

/// Read access to elements on a device: implemented by [`DeviceVec`],
/// [`DeviceSlice`] and [`DeviceSliceMut`]. Sealed.
pub trait DeviceData<T: Storable>: raw::Sealed<T> {
    /// The device the elements live on.
    fn device(&self) -> &Device;

    /// Number of elements.
    fn len(&self) -> usize {
        self.mem().len()
    }

    /// True when there are no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies the elements to a host `Vec` (waits for queued work).
    fn to_vec(&self) -> Result<Vec<T>> {
        match self.mem() {
            Mem::Host(s) => Ok(s.to_vec()),
            Mem::Cuda { dev, ptr, len, .. } => {
                let mut out = vec![T::zeroed(); len];
                if len > 0 {
                    // SAFETY: `ptr` addresses `len` live elements borrowed for
                    // this call; `out` has room for them; the stream is
                    // synchronised before `out` is read.
                    unsafe {
                        cudarc::driver::result::memcpy_dtoh_async(&mut out, ptr, dev.stream.cu_stream())
                            .during("copying device to host")?;
                    }
                    dev.stream.synchronize().during("copying device to host")?;
                }
                Ok(out)
            }
        }
    }
}

/// Write access to elements on a device. Sealed.
pub trait DeviceDataMut<T: Storable>: DeviceData<T> + raw::SealedMut<T> {}

enum Buf<T> {
    Host(Vec<T>),
    Cuda { slice: CudaSlice<T>, ptr: u64 },
}

/// An owned array of `T` on a [`Device`]; work on it is ordered on the
/// device's stream.
///
/// ```
/// use cuprim::prelude::*;
/// let dev = Device::default()?;
/// let v = DeviceVec::from_slice(&dev, &[3.0f32, 1.0, 2.0])?;
/// assert_eq!(v.len(), 3);
/// assert_eq!(v.to_vec()?, vec![3.0, 1.0, 2.0]);
/// # Ok::<(), cuprim::Error>(())
/// ```
pub struct DeviceVec<T: Storable> {
    device: Device,
    buf: Buf<T>,
    /// The CudaSlice came from another stream (interop): order that stream
    /// after ours before the slice is freed or handed back.
    foreign_stream: bool,
}

impl<T: Storable> DeviceVec<T> {
    /// Allocates `len` elements whose contents are unspecified; callers in
    /// this crate overwrite all of them before anyone can read them.
    pub(crate) fn alloc_uninit(device: &Device, len: usize) -> Result<Self> {
        let buf = match device.backend() {
            Backend::Host => Buf::Host(vec![T::zeroed(); len]),
            Backend::Cuda(c) => {
                let bytes = len
                    .checked_mul(std::mem::size_of::<T>())
                    .ok_or(Error::OutOfMemory { bytes: usize::MAX })?;
                let slice = if len == 0 {
                    c.stream.null::<T>().map_err(|e| Error::alloc(0, e))?
                } else {
                    // SAFETY: the memory is uninitialised; see the doc above.
                    unsafe { c.stream.alloc::<T>(len) }.map_err(|e| Error::alloc(bytes, e))?
                };
                let ptr = slice.device_ptr(&c.stream).0;
                if len > 0 && poison_enabled() {
                    // SAFETY: `ptr` addresses `bytes` bytes we just allocated.
                    unsafe {
                        cudarc::driver::result::memset_d8_async(ptr, 0xff, bytes, c.stream.cu_stream()).during("poisoning a new buffer")?;
                    }
                }
                Buf::Cuda { slice, ptr }
            }
        };
        Ok(DeviceVec {
            device: device.clone(),
            buf,
            foreign_stream: false,
        })
    }

    /// Copies `data` to `device`.
    pub fn from_slice(device: &Device, data: &[T]) -> Result<Self> {
        match device.backend() {
            Backend::Host => Ok(DeviceVec {
                device: device.clone(),
                buf: Buf::Host(data.to_vec()),
                foreign_stream: false,
            }),
            Backend::Cuda(c) => {
                let v = Self::alloc_uninit(device, data.len())?;
                if let Buf::Cuda { ptr, .. } = v.buf {
                    if !data.is_empty() {
                        // SAFETY: `ptr` has room for data.len() elements. The
                        // synchronous wait keeps `data` borrowed until the copy
                        // has read it.
                        unsafe {
                            cudarc::driver::result::memcpy_htod_async(ptr, data, c.stream.cu_stream()).during("copying host to device")?;
                        }
                        c.stream.synchronize().during("copying host to device")?;
                    }
                }
                Ok(v)
            }
        }
    }

    /// Shortens the vector to `len` elements (no effect if already shorter).
    /// Device memory is not reallocated.
    pub(crate) fn truncate(&mut self, len: usize) -> Result<()> {
        if len >= self.len() {
            return Ok(());
        }
        match &mut self.buf {
            Buf::Host(v) => v.truncate(len),
            Buf::Cuda { slice, .. } => {
                let stream = slice.stream().clone();
                let old = std::mem::replace(slice, stream.null::<T>().map_err(|e| Error::alloc(0, e))?);
                let ptr = old.leak();
                // SAFETY: `ptr` is the allocation `old` owned, which has room
                // for more than `len` elements; ownership moves to the new
                // slice, which frees it on the same stream.
                *slice = unsafe { stream.upgrade_device_ptr::<T>(ptr, len) };
            }
        }
        Ok(())
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match &self.buf {
            Buf::Host(v) => v.len(),
            Buf::Cuda { slice, .. } => slice.len(),
        }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The device.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// A read-only view of `range`; a range past the end is an error.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::host(), &[1u8, 2, 3, 4])?;
    /// assert_eq!(v.slice(1..3)?.to_vec()?, vec![2, 3]);
    /// assert!(v.slice(2..9).is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'_, T>> {
        let (start, end) = bounds(range, self.len())?;
        let mem = match self.mem() {
            Mem::Host(s) => Mem::Host(&s[start..end]),
            Mem::Cuda { dev, ptr, .. } => Mem::Cuda {
                dev,
                ptr: ptr + (start * std::mem::size_of::<T>()) as u64,
                len: end - start,
                _p: PhantomData,
            },
        };
        Ok(DeviceSlice { device: &self.device, mem })
    }

    /// A mutable view of `range`; a range past the end is an error.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let mut v = DeviceVec::from_slice(&Device::host(), &[1u8, 2, 3, 4])?;
    /// v.slice_mut(1..3)?.fill(0)?;
    /// assert_eq!(v.to_vec()?, vec![1, 0, 0, 4]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'_, T>> {
        let (start, end) = bounds(range, self.len())?;
        let device = &self.device;
        let mem = match &mut self.buf {
            Buf::Host(v) => MemMut::Host(&mut v[start..end]),
            Buf::Cuda { ptr, .. } => MemMut::Cuda {
                dev: cuda_of(device),
                ptr: *ptr + (start * std::mem::size_of::<T>()) as u64,
                len: end - start,
                _p: PhantomData,
            },
        };
        Ok(DeviceSliceMut { device, mem })
    }

    /// Wraps a cudarc buffer without copying. The buffer must belong to
    /// `device`'s context; if it was made on another stream, `device`'s
    /// stream first waits for that stream's queued work (no host sync).
    pub fn from_cuda_slice(device: &Device, slice: CudaSlice<T>) -> Result<Self> {
        let c = device.cuda_ref().ok_or(Error::DeviceMismatch { op: "from_cuda_slice" })?;
        if slice.context().cu_ctx() != c.ctx.cu_ctx() {
            return Err(Error::DeviceMismatch { op: "from_cuda_slice" });
        }
        let foreign_stream = slice.stream().cu_stream() != c.stream.cu_stream();
        if foreign_stream {
            c.stream.join(slice.stream()).during("ordering streams")?;
        }
        let ptr = slice.device_ptr(&c.stream).0;
        Ok(DeviceVec {
            device: device.clone(),
            buf: Buf::Cuda { slice, ptr },
            foreign_stream,
        })
    }

    /// Unwraps into the cudarc buffer (ordered after all queued work on this
    /// device). Host-backend vectors have none: that is an error.
    pub fn into_cuda_slice(mut self) -> Result<CudaSlice<T>> {
        if self.device.is_host() {
            return Err(Error::Unsupported("a host-backend DeviceVec has no CudaSlice".into()));
        }
        self.order_foreign_stream()?;
        self.foreign_stream = false;
        match std::mem::replace(&mut self.buf, Buf::Host(Vec::new())) {
            Buf::Cuda { slice, .. } => Ok(slice),
            Buf::Host(_) => Err(Error::Unsupported("a host-backend DeviceVec has no CudaSlice".into())),
        }
    }

    /// A borrowed cudarc view of the whole buffer (`None` on the host backend).
    pub fn as_cuda_view(&self) -> Option<CudaView<'_, T>> {
        match &self.buf {
            Buf::Cuda { slice, .. } => Some(slice.as_view()),
            Buf::Host(_) => None,
        }
    }

    /// A borrowed mutable cudarc view (`None` on the host backend).
    pub fn as_cuda_view_mut(&mut self) -> Option<CudaViewMut<'_, T>> {
        match &mut self.buf {
            Buf::Cuda { slice, .. } => Some(slice.as_view_mut()),
            Buf::Host(_) => None,
        }
    }

    fn order_foreign_stream(&self) -> Result<()> {
        if let (true, Buf::Cuda { slice, .. }, Some(c)) = (self.foreign_stream, &self.buf, self.device.cuda_ref()) {
            slice.stream().join(&c.stream).during("ordering streams")?;
        }
        Ok(())
    }
}

/// Constructors that compute values: these need a scalar [`Element`].
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
        crate::algo::transform::fill(v.mem_mut(), value)?;
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
        crate::algo::transform::sequence(v.mem_mut(), start, step)?;
        Ok(v)
    }
}

impl<T: Storable> Drop for DeviceVec<T> {
    fn drop(&mut self) {
        // A buffer adopted from another stream is freed on that stream:
        // make it wait for our queued work first.
        let _ = self.order_foreign_stream();
    }
}

impl<T: Storable> std::fmt::Debug for DeviceVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceVec<{}>(len {}, {:?})", T::type_name(), self.len(), self.device)
    }
}

/// `CUPRIM_POISON=1`: fill every new device buffer with 0xff bytes (NaN for
/// floats, MAX for unsigned integers) before a kernel writes it, so a test
/// can tell "written" from "left over". Off by default (it costs a memset).
fn poison_enabled() -> bool {
    static POISON: once_cell::sync::Lazy<bool> = once_cell::sync::Lazy::new(|| std::env::var("CUPRIM_POISON").is_ok_and(|v| v == "1"));
    *POISON
}

fn cuda_of(device: &Device) -> &CudaDevice {
    match device.cuda_ref() {
        Some(c) => c,
        // A Buf::Cuda only exists on a CUDA device (see alloc_uninit and
        // from_cuda_slice), so this arm is unreachable by construction.
        None => unreachable!("CUDA buffer on a host device"),
    }
}

fn bounds(range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        return Err(Error::InvalidArgument(format!(
            "range {start}..{end} is out of bounds for length {len}"
        )));
    }
    Ok((start, end))
}

impl<T: Storable> raw::Sealed<T> for DeviceVec<T> {
    fn mem(&self) -> Mem<'_, T> {
        match &self.buf {
            Buf::Host(v) => Mem::Host(v),
            Buf::Cuda { slice, ptr } => Mem::Cuda {
                dev: cuda_of(&self.device),
                ptr: *ptr,
                len: slice.len(),
                _p: PhantomData,
            },
        }
    }
}
impl<T: Storable> raw::SealedMut<T> for DeviceVec<T> {
    fn mem_mut(&mut self) -> MemMut<'_, T> {
        let device = &self.device;
        match &mut self.buf {
            Buf::Host(v) => MemMut::Host(v),
            Buf::Cuda { slice, ptr } => MemMut::Cuda {
                dev: cuda_of(device),
                ptr: *ptr,
                len: slice.len(),
                _p: PhantomData,
            },
        }
    }
}
impl<T: Storable> DeviceData<T> for DeviceVec<T> {
    fn device(&self) -> &Device {
        &self.device
    }
}
impl<T: Storable> DeviceDataMut<T> for DeviceVec<T> {}

/// A borrowed read-only view of part of a [`DeviceVec`].
pub struct DeviceSlice<'a, T: Storable> {
    device: &'a Device,
    mem: Mem<'a, T>,
}

/// A borrowed mutable view of part of a [`DeviceVec`].
pub struct DeviceSliceMut<'a, T: Storable> {
    device: &'a Device,
    mem: MemMut<'a, T>,
}

impl<T: Storable> raw::Sealed<T> for DeviceSlice<'_, T> {
    fn mem(&self) -> Mem<'_, T> {
        match &self.mem {
            Mem::Host(s) => Mem::Host(s),
            Mem::Cuda { dev, ptr, len, .. } => Mem::Cuda {
                dev,
                ptr: *ptr,
                len: *len,
                _p: PhantomData,
            },
        }
    }
}
impl<T: Storable> DeviceData<T> for DeviceSlice<'_, T> {
    fn device(&self) -> &Device {
        self.device
    }
}

impl<T: Storable> raw::Sealed<T> for DeviceSliceMut<'_, T> {
    fn mem(&self) -> Mem<'_, T> {
        match &self.mem {
            MemMut::Host(s) => Mem::Host(s),
            MemMut::Cuda { dev, ptr, len, .. } => Mem::Cuda {
                dev,
                ptr: *ptr,
                len: *len,
                _p: PhantomData,
            },
        }
    }
}
impl<T: Storable> raw::SealedMut<T> for DeviceSliceMut<'_, T> {
    fn mem_mut(&mut self) -> MemMut<'_, T> {
        match &mut self.mem {
            MemMut::Host(s) => MemMut::Host(s),
            MemMut::Cuda { dev, ptr, len, .. } => MemMut::Cuda {
                dev,
                ptr: *ptr,
                len: *len,
                _p: PhantomData,
            },
        }
    }
}
impl<T: Storable> DeviceData<T> for DeviceSliceMut<'_, T> {
    fn device(&self) -> &Device {
        self.device
    }
}
impl<T: Storable> DeviceDataMut<T> for DeviceSliceMut<'_, T> {}

use raw::{Sealed as _, SealedMut as _};
