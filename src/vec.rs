//! [`DeviceVec`], its borrowed views, and the traits every algorithm is
//! written against.
//!
//! Algorithms take anything that implements [`DeviceData`] (read) or
//! [`DeviceDataMut`] (write): a whole `DeviceVec`, or a [`DeviceSlice`] /
//! [`DeviceSliceMut`] view of part of one. Their methods live in extension
//! traits, one per family, all in [`prelude`](crate::prelude).

use crate::device::{Backend, CudaDevice, Device, Ptr};
use crate::element::Storable;
use crate::error::{DriverContext, Error, Result};
use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DriverError};
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::sync::OnceLock;

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
            Mem::Host(s) => host_copy(s),
            Mem::Cuda { dev, ptr, len, .. } => {
                let mut out = host_zeroed(len)?;
                // `ptr` addresses `len` live elements borrowed for this call.
                dev.download(&mut out, Ptr::from_raw(ptr), "copying device to host")?;
                Ok(out)
            }
        }
    }
}

/// Write access to elements on a device. Sealed.
pub trait DeviceDataMut<T: Storable>: DeviceData<T> + raw::SealedMut<T> {}

enum Buf<T> {
    Host(Vec<T>),
    /// `len` elements at `ptr`. cuprim's own buffers are raw stream-ordered
    /// allocations (a cudarc slice would create and destroy two events per
    /// buffer while the context tracks events); the `CudaSlice` is made
    /// when the buffer first crosses into cudarc, and then owns the memory.
    Cuda {
        ptr: u64,
        len: usize,
        lent: OnceLock<Lent<T>>,
        /// Bytes of the raw allocation at `ptr` this vector frees itself
        /// (0 for adopted slices): `len` may shrink (`truncate`), the
        /// allocation does not.
        alloc_bytes: usize,
    },
}

/// The cudarc side of a buffer that crossed the boundary.
struct Lent<T> {
    slice: CudaSlice<T>,
    /// cudarc gave `slice` read / write events: its context tracked events
    /// when the slice was made (`upgrade_device_ptr` creates them only then;
    /// `null` never does).
    events: bool,
    /// `slice` took over the vector's raw allocation (not so for the empty
    /// slice made for an empty vector, which may still hold one if it was
    /// truncated to nothing).
    owns_raw: bool,
}

/// [`DeviceVec::interop`] bits: what cudarc code may have done with the
/// buffer, on streams cuprim does not know, that cuprim's next use must be
/// ordered after; and whether the slice's write event is stale.
mod interop {
    /// cudarc may have read the buffer through a view: cuprim's next write
    /// waits for the slice's read event.
    pub const LENT_READ: u8 = 1;
    /// cudarc may have written the buffer through a mutable view: cuprim's
    /// next use (read or write) waits for the slice's write event.
    pub const LENT_WRITE: u8 = 2;
    /// cuprim may have queued a write to the buffer after the last time the
    /// slice's write event was recorded on cuprim's stream (or the stream was
    /// synchronised): a cudarc reader would not wait for it.
    pub const DIRTY: u8 = 4;
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
///
/// # Interop with cudarc
///
/// cuprim queues its kernels with the buffer's raw address, so cudarc's
/// per-buffer events (the `CudaSlice`'s read and write events, which safe
/// cudarc code waits on when it uses the buffer on another stream) do not
/// see that work by themselves. Every method that hands the buffer to
/// cudarc ([`into_cuda_slice`](Self::into_cuda_slice),
/// [`as_cuda_view`](Self::as_cuda_view),
/// [`as_cuda_view_mut`](Self::as_cuda_view_mut)) orders it first, and
/// cuprim's first use after a view was handed out waits for what cudarc
/// did with it; adopting a slice ([`from_cuda_slice`](Self::from_cuda_slice))
/// waits for its pending uses. So safe cudarc code on any stream of the
/// context sees cuprim's results, and cuprim sees cudarc's, with no host
/// synchronisation (except `as_cuda_view` right after cuprim wrote the
/// buffer, see there). Ordinary cuprim calls record and wait for nothing.
///
/// This holds while cudarc tracks events, which it does on every context
/// by default and on the contexts cuprim makes. If the slice's context has
/// event tracking disabled (`CudaContext::disable_event_tracking`, an
/// `unsafe` promise to order streams by hand), or has never had a second
/// stream (cudarc then tracks nothing either), cudarc orders no buffer
/// across streams; cuprim then orders only the slice's own stream
/// (`CudaSlice::stream`, where it is freed) with its work, and a use on any
/// other stream must be ordered by the caller, e.g.
/// `other.join(dev.cuda_stream().unwrap())`.
pub struct DeviceVec<T: Storable> {
    device: Device,
    buf: Buf<T>,
    /// The CudaSlice came from another stream (interop): order that stream
    /// after ours before the slice is freed or handed back.
    foreign_stream: bool,
    /// [`interop`] bits. Atomic because `mem` and `as_cuda_view` take
    /// `&self` and a `DeviceVec` is `Sync`; `&mut self` paths use `get_mut`.
    interop: AtomicU8,
}

impl<T: Storable> DeviceVec<T> {
    fn new(device: &Device, buf: Buf<T>, foreign_stream: bool, interop: u8) -> Self {
        DeviceVec {
            device: device.clone(),
            buf,
            foreign_stream,
            interop: AtomicU8::new(interop),
        }
    }

    /// Allocates `len` elements whose contents are unspecified; callers in
    /// this crate overwrite all of them before anyone can read them.
    pub(crate) fn alloc_uninit(device: &Device, len: usize) -> Result<Self> {
        let buf = match device.backend() {
            Backend::Host => Buf::Host(host_zeroed(len)?),
            Backend::Cuda(c) => {
                let bytes = len
                    .checked_mul(std::mem::size_of::<T>())
                    .ok_or(Error::OutOfMemory { bytes: usize::MAX })?;
                // The memory is uninitialised; see the doc above.
                let ptr = c.alloc_raw(bytes)?;
                if len > 0 && poison_enabled() {
                    // `ptr` addresses the `bytes` bytes just allocated.
                    c.memset_bytes(ptr, 0xff, bytes, "poisoning a new buffer")?;
                }
                Buf::Cuda {
                    ptr,
                    len,
                    lent: OnceLock::new(),
                    alloc_bytes: bytes,
                }
            }
        };
        // Stream-ordered allocation (and poison) queued on our stream, not
        // covered by the new slice's write event yet.
        Ok(Self::new(device, buf, false, interop::DIRTY))
    }

    /// Copies `data` to `device`.
    pub fn from_slice(device: &Device, data: &[T]) -> Result<Self> {
        match device.backend() {
            Backend::Host => Ok(Self::new(device, Buf::Host(host_copy(data)?), false, 0)),
            Backend::Cuda(c) => {
                let mut v = Self::alloc_uninit(device, data.len())?;
                if let Buf::Cuda { ptr, .. } = v.buf {
                    if !data.is_empty() {
                        // `ptr` has room for data.len() elements. `upload`
                        // waits for the stream, so every queued use of the
                        // buffer has finished: nothing for cudarc to wait on.
                        c.upload(Ptr::from_raw(ptr), data, "copying host to device")?;
                        *v.interop.get_mut() = 0;
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
        // The old slice's events go with it: settle what they guard first.
        self.before_write();
        match &mut self.buf {
            Buf::Host(v) => v.truncate(len),
            Buf::Cuda { len: n, lent, .. } => {
                *n = len;
                // A raw buffer keeps its allocation (freed by address).
                let Some(Lent { slice, events, .. }) = lent.get_mut() else {
                    return Ok(());
                };
                let stream = slice.stream().clone();
                let old = std::mem::replace(slice, stream.null::<T>().map_err(|e| Error::alloc(0, e))?);
                // `leak` makes the slice's stream wait for its events first.
                let ptr = old.leak();
                // cudarc's `upgrade_device_ptr` creates events iff this holds.
                *events = stream.context().is_event_tracking();
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
            Buf::Cuda { len, .. } => *len,
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
        if matches!(self.buf, Buf::Cuda { .. }) {
            self.before_write();
        }
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
    /// `device`'s context. `device`'s stream first waits (no host sync) for
    /// the work queued on the slice's own stream and, where cudarc tracks
    /// events, for every pending use of the slice on other streams.
    pub fn from_cuda_slice(device: &Device, mut slice: CudaSlice<T>) -> Result<Self> {
        let c = device.cuda_ref().ok_or(Error::DeviceMismatch { op: "from_cuda_slice" })?;
        let ours = c.stream();
        if slice.context().cu_ctx() != ours.context().cu_ctx() {
            return Err(Error::DeviceMismatch { op: "from_cuda_slice" });
        }
        let foreign_stream = !same_stream(slice.stream(), ours);
        if foreign_stream {
            // Also orders us after a stream-ordered allocation never written.
            ours.join(slice.stream()).during("ordering streams")?;
        }
        // Whether the slice has events is not public; cudarc made them if
        // tracking was on when it was allocated, as it normally still is.
        let events = !slice.is_empty() && slice.context().is_event_tracking();
        let ptr = {
            // With tracking, `device_ptr_mut` makes `ours` wait for the
            // slice's read and write events. Its guard (which would record
            // the write event now, before any of our work) is not needed.
            let (ptr, guard) = slice.device_ptr_mut(ours);
            std::mem::forget(guard);
            ptr
        };
        ours.context().check_err().during("waiting for the slice's pending uses")?;
        let len = slice.len();
        let buf = Buf::Cuda {
            ptr,
            len,
            lent: OnceLock::from(Lent {
                slice,
                events,
                owns_raw: true,
            }),
            alloc_bytes: 0,
        };
        Ok(Self::new(device, buf, foreign_stream, 0))
    }

    /// Unwraps into the cudarc buffer, ordered after all work queued on this
    /// device: safe cudarc code on any stream of the context waits for it
    /// (see [interop](DeviceVec#interop-with-cudarc)). Host-backend vectors
    /// have none: that is an error.
    pub fn into_cuda_slice(mut self) -> Result<CudaSlice<T>> {
        if self.device.is_host() {
            return Err(Error::Unsupported("a host-backend DeviceVec has no CudaSlice".into()));
        }
        self.forget_checks();
        self.lend()?;
        self.publish().during("handing the buffer to cudarc")?;
        self.foreign_stream = false;
        match std::mem::replace(&mut self.buf, Buf::Host(Vec::new())) {
            Buf::Cuda { mut lent, .. } => match lent.take() {
                Some(l) => Ok(l.slice),
                None => Err(Error::Unsupported("the buffer has no CudaSlice".into())),
            },
            Buf::Host(_) => Err(Error::Unsupported("a host-backend DeviceVec has no CudaSlice".into())),
        }
    }

    /// A borrowed cudarc view of the whole buffer (`None` on the host
    /// backend), for reading on any stream: safe cudarc code waits for
    /// cuprim's queued writes, and cuprim's next write waits for the reads.
    ///
    /// Recording the slice's write event needs `&mut` access in cudarc, so
    /// if cuprim wrote the buffer since it last handed it out, this waits on
    /// the host for the device's queued work (once; then it is free until
    /// cuprim writes again). [`as_cuda_view_mut`](Self::as_cuda_view_mut)
    /// and [`into_cuda_slice`](Self::into_cuda_slice) never wait on the host.
    pub fn as_cuda_view(&self) -> Option<CudaView<'_, T>> {
        let Ok(Some(Lent { slice, events, .. })) = self.lent() else {
            return None;
        };
        let ours = cuda_of(&self.device).stream();
        if self.interop.load(Ordering::Acquire) & interop::DIRTY != 0 {
            let ordered = if tracked(slice, *events) {
                // The write event cannot be recorded through `&self`, and a
                // reader waits only on it: finish the queued work instead.
                ours.synchronize()
            } else if !same_stream(slice.stream(), ours) {
                slice.stream().join(ours)
            } else {
                Ok(())
            };
            match ordered {
                Ok(()) => {
                    self.interop.fetch_and(!interop::DIRTY, Ordering::Release);
                }
                // No way to return it here; cudarc keeps it for
                // `CudaContext::check_err`, and a failed synchronise leaves
                // the context unusable, so the view's reads fail too.
                Err(e) => ours.context().record_err::<()>(Err(e)),
            }
        }
        self.interop.fetch_or(interop::LENT_READ, Ordering::AcqRel);
        Some(slice.as_view())
    }

    /// A borrowed mutable cudarc view (`None` on the host backend), for
    /// reading or writing on any stream: safe cudarc code waits for all of
    /// cuprim's queued work on the buffer, and cuprim's next use waits for
    /// cudarc's (no host sync either way).
    pub fn as_cuda_view_mut(&mut self) -> Option<CudaViewMut<'_, T>> {
        if self.device.is_host() {
            return None;
        }
        self.forget_checks();
        let mut lent = interop::LENT_READ | interop::LENT_WRITE;
        if self.lend().is_err() {
            return None;
        }
        if let Err(e) = self.publish() {
            // No way to return it here: fall back to finishing the queued
            // work, and leave the error with the context for cudarc's
            // `check_err`. If even the synchronise fails, the context is
            // unusable and the view's uses fail too.
            let ours = cuda_of(&self.device).stream();
            if ours.synchronize().is_err() {
                lent |= interop::DIRTY;
            }
            ours.context().record_err::<()>(Err(e));
        }
        *self.interop.get_mut() = lent;
        match &mut self.buf {
            Buf::Cuda { lent, .. } => lent.get_mut().map(|l| l.slice.as_view_mut()),
            Buf::Host(_) => None,
        }
    }

    /// The buffer as a cudarc slice, made on first use (then the slice owns
    /// the memory): `None` on the host backend.
    fn lent(&self) -> Result<Option<&Lent<T>>> {
        let Buf::Cuda { ptr, len, lent, .. } = &self.buf else {
            return Ok(None);
        };
        if let Some(l) = lent.get() {
            return Ok(Some(l));
        }
        let stream = cuda_of(&self.device).stream();
        let made = if *len == 0 {
            Lent {
                slice: stream.null::<T>().map_err(|e| Error::alloc(0, e))?,
                events: false,
                owns_raw: false,
            }
        } else {
            // cudarc's `upgrade_device_ptr` creates the events iff this holds.
            let events = stream.context().is_event_tracking();
            // SAFETY: `ptr` is this buffer's own stream-ordered allocation of
            // at least `len` elements on `stream`, not yet owned by any slice;
            // from now on the slice owns it and frees it on the same stream
            // (`OnceLock` makes the hand-over happen once).
            let slice = unsafe { stream.upgrade_device_ptr::<T>(*ptr, *len) };
            Lent {
                slice,
                events,
                owns_raw: true,
            }
        };
        // Two threads may race here through `&self`: only one slice may own
        // the memory, so the loser's is leaked back to a raw pointer.
        if let Err(extra) = lent.set(made) {
            if *len > 0 {
                let _ = extra.slice.leak();
            }
        }
        Ok(lent.get())
    }

    /// [`lent`](Self::lent) for `&mut self` paths.
    fn lend(&mut self) -> Result<()> {
        self.lent().map(|_| ())
    }

    /// Orders every later use of the slice by cudarc, on any stream, after
    /// all work queued on our stream so far (the hand-over to cudarc).
    fn publish(&mut self) -> std::result::Result<(), DriverError> {
        let (Buf::Cuda { lent, .. }, Some(c)) = (&mut self.buf, self.device.cuda_ref()) else {
            return Ok(());
        };
        let Some(Lent { slice, events, .. }) = lent.get_mut() else {
            return Ok(());
        };
        let ours = c.stream();
        if tracked(slice, *events) {
            if ours.context().is_managing_stream_synchronization() {
                // Makes `ours` wait for the slice's read and write events
                // (harmless), then the guard's drop records the write event
                // on `ours`, after all of its queued work: every cudarc use
                // (reads wait on the write event, writes and the free wait on
                // both) now waits for it.
                drop(slice.device_ptr_mut(ours));
            } else {
                // cudarc skips the guard's record on a stream whose context
                // does not manage synchronisation: record on the slice's own
                // stream instead, ordered after ours.
                let theirs = slice.stream().clone();
                theirs.join(ours)?;
                drop(slice.device_ptr_mut(&theirs));
            }
            // The record's (and waits') errors are kept by the context.
            ours.context().check_err()?;
        } else if !same_stream(slice.stream(), ours) {
            // cudarc orders nothing across streams here: order the slice's
            // own stream (where it is used by default and freed).
            slice.stream().join(ours)?;
        }
        *self.interop.get_mut() &= !interop::DIRTY;
        Ok(())
    }

    /// Before cuprim reads: wait for cudarc's writes through a view.
    #[cold]
    fn wait_for_cudarc_writes(&self) {
        let Buf::Cuda { lent, .. } = &self.buf else {
            return;
        };
        let Some(Lent { slice, events, .. }) = lent.get() else {
            return;
        };
        let ours = cuda_of(&self.device).stream();
        if tracked(slice, *events) {
            // Makes `ours` wait for the write event. The guard would record
            // the read event now, before our read is queued, overwriting a
            // cudarc reader's record that our next write must wait for.
            let (_, guard) = slice.device_ptr(ours);
            std::mem::forget(guard);
        } else if !same_stream(slice.stream(), ours) {
            ours.context().record_err(ours.join(slice.stream()));
        }
        self.interop.fetch_and(!interop::LENT_WRITE, Ordering::Release);
    }

    /// Before cuprim writes: wait for cudarc's reads and writes through
    /// views, and mark the write event stale.
    fn before_write(&mut self) {
        self.forget_checks();
        let state = self.interop.get_mut();
        if *state & (interop::LENT_READ | interop::LENT_WRITE) != 0 {
            self.wait_for_cudarc_uses();
        }
        *self.interop.get_mut() = interop::DIRTY;
    }

    /// Forgets what kernels checked of this buffer's contents (offsets
    /// found valid): it is about to be written, handed over or freed.
    fn forget_checks(&self) {
        if let (Some(c), Buf::Cuda { ptr, len, alloc_bytes, .. }) = (self.device.cuda_ref(), &self.buf) {
            let bytes = (*len * std::mem::size_of::<T>()).max(*alloc_bytes);
            c.checked_offsets().forget(*ptr, bytes as u64);
        }
    }

    #[cold]
    fn wait_for_cudarc_uses(&mut self) {
        let Some(c) = self.device.cuda_ref() else {
            return;
        };
        let Buf::Cuda { lent, .. } = &mut self.buf else {
            return;
        };
        let Some(Lent { slice, events, .. }) = lent.get_mut() else {
            return;
        };
        let ours = c.stream();
        if tracked(slice, *events) {
            // Makes `ours` wait for the read and write events. The guard
            // (recording the write event before our write is queued) is
            // not needed: `publish` records it at the next hand-over.
            let (_, guard) = slice.device_ptr_mut(ours);
            std::mem::forget(guard);
        } else if !same_stream(slice.stream(), ours) {
            ours.context().record_err(ours.join(slice.stream()));
        }
    }
}

impl<T: Storable> Drop for DeviceVec<T> {
    fn drop(&mut self) {
        self.forget_checks();
        // A buffer adopted from another stream is freed on that stream
        // (after waiting for its events, with tracking): order that after
        // our queued work. Our own buffers are freed on our stream, in order.
        if let (
            Buf::Cuda {
                ptr, lent, alloc_bytes, ..
            },
            Some(c),
        ) = (&self.buf, self.device.cuda_ref())
        {
            // cuprim's own raw buffer, freed in order on our stream, unless
            // a cudarc slice took it over.
            if *alloc_bytes > 0 && lent.get().is_none_or(|l| !l.owns_raw) {
                c.free_raw(*ptr, *alloc_bytes);
            }
            if lent.get().is_none() {
                return;
            }
        }
        if self.foreign_stream {
            if let (Err(e), Some(c)) = (self.publish(), self.device.cuda_ref()) {
                // Fall back to finishing our work; the error stays with the
                // context (cudarc's `check_err`), as cudarc's drops do.
                let _ = c.synchronize("ordering a buffer's free");
                c.stream().context().record_err::<()>(Err(e));
            }
        }
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
    static POISON: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| std::env::var("CUPRIM_POISON").is_ok_and(|v| v == "1"));
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

/// Whether cudarc orders the slice's uses across streams through its
/// events: the slice has them and its context manages synchronisation
/// (event tracking on, and a second stream made: cudarc's
/// `is_managing_stream_synchronization`, which gates every wait and record
/// in `device_ptr`, `device_ptr_mut`, their guards and the slice's drop).
fn tracked<T>(slice: &CudaSlice<T>, events: bool) -> bool {
    events && slice.context().is_managing_stream_synchronization()
}

fn same_stream(a: &Arc<CudaStream>, b: &Arc<CudaStream>) -> bool {
    a.cu_stream() == b.cu_stream()
}

/// `len` zeroed `T`s on the host; a size the allocator cannot provide is
/// [`Error::OutOfMemory`] rather than an abort.
fn host_zeroed<T: Storable>(len: usize) -> Result<Vec<T>> {
    let mut v = host_with_capacity(len)?;
    v.resize(len, T::zeroed());
    Ok(v)
}

/// A host copy of `data`, fallible like [`host_zeroed`].
fn host_copy<T: Storable>(data: &[T]) -> Result<Vec<T>> {
    let mut v = host_with_capacity(data.len())?;
    v.extend_from_slice(data);
    Ok(v)
}

fn host_with_capacity<T>(len: usize) -> Result<Vec<T>> {
    let bytes = len
        .checked_mul(std::mem::size_of::<T>())
        .ok_or(Error::OutOfMemory { bytes: usize::MAX })?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Error::OutOfMemory { bytes })?;
    Ok(v)
}

pub(crate) fn bounds(range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
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
            Buf::Cuda { ptr, len, .. } => {
                // The only cost on the hot path: one load.
                if self.interop.load(Ordering::Acquire) & interop::LENT_WRITE != 0 {
                    self.wait_for_cudarc_writes();
                }
                Mem::Cuda {
                    dev: cuda_of(&self.device),
                    ptr: *ptr,
                    len: *len,
                    _p: PhantomData,
                }
            }
        }
    }
}
impl<T: Storable> raw::SealedMut<T> for DeviceVec<T> {
    fn mem_mut(&mut self) -> MemMut<'_, T> {
        if matches!(self.buf, Buf::Cuda { .. }) {
            // A plain load and store (`&mut`: no atomic operation).
            self.before_write();
        }
        let device = &self.device;
        match &mut self.buf {
            Buf::Host(v) => MemMut::Host(v),
            Buf::Cuda { ptr, len, .. } => MemMut::Cuda {
                dev: cuda_of(device),
                ptr: *ptr,
                len: *len,
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

impl<'a, T: Storable> DeviceSlice<'a, T> {
    /// A view of memory some other owner holds (a buffer expression's).
    pub(crate) fn from_mem(device: &'a Device, mem: Mem<'a, T>) -> Self {
        DeviceSlice { device, mem }
    }
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
            MemMut::Cuda { dev, ptr, len, .. } => {
                // About to be written: what kernels checked of it is stale.
                dev.checked_offsets().forget(*ptr, (*len * std::mem::size_of::<T>()) as u64);
                MemMut::Cuda {
                    dev,
                    ptr: *ptr,
                    len: *len,
                    _p: PhantomData,
                }
            }
        }
    }
}
impl<T: Storable> DeviceData<T> for DeviceSliceMut<'_, T> {
    fn device(&self) -> &Device {
        self.device
    }
}
impl<T: Storable> DeviceDataMut<T> for DeviceSliceMut<'_, T> {}

use raw::Sealed as _;
