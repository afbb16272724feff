//! Stream compaction on top of the scan machinery: `copy_if` and a stable
//! `partition`, each one pass over the input (kernels/select.cu).

use crate::algo::scan::LookbackLayout;
use crate::device::{kernel_args, CudaDevice, FastKey, COUNTER_SELECT_TILE};
use crate::element::Element;
use crate::error::{DriverContext, Error, Result};
use crate::host;
use crate::jit::source::SELECT;
use crate::jit::KernelSpec;
use crate::pred::Predicate;
use crate::tuning;
use crate::vec::raw::{Mem, MemMut, Sealed as _, SealedMut as _};
use crate::vec::{DeviceData, DeviceDataMut, DeviceVec};

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
            Mem::Host(s) => DeviceVec::from_slice(self.device(), &host::select::copy_if(s, |x| pred.test(x))),
            Mem::Cuda { dev, ptr, len, .. } => {
                let mut out = DeviceVec::<T>::alloc_uninit(self.device(), len)?;
                let out_ptr = match out.mem_mut() {
                    MemMut::Cuda { ptr, .. } => ptr,
                    MemMut::Host(_) => return Err(Error::DeviceMismatch { op: "copy_if" }),
                };
                let kept = launch_select(dev, ptr, len, &pred, out_ptr, 0)?;
                out.truncate(kept)?;
                Ok(out)
            }
        }
    }
}

impl<T: Element, D: DeviceData<T> + ?Sized> SelectOps<T> for D {}

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
            MemMut::Host(d) => Ok(host::select::partition(d, |x| pred.test(x))),
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
                let size = std::mem::size_of::<T>();
                let rejected_ptr = tmp_ptr + (len * size) as u64;
                let kept = launch_select(dev, ptr, len, &pred, tmp_ptr, rejected_ptr)?;
                // SAFETY: `ptr` holds `len` elements borrowed mutably; the
                // temporary holds `kept` selected then `len - kept` rejected
                // elements at the two offsets used; the ranges do not overlap.
                unsafe {
                    let stream = dev.stream.cu_stream();
                    if kept > 0 {
                        cudarc::driver::result::memcpy_dtod_async(ptr, tmp_ptr, kept * size, stream).during("partition")?;
                    }
                    if kept < len {
                        cudarc::driver::result::memcpy_dtod_async(ptr + (kept * size) as u64, rejected_ptr, (len - kept) * size, stream)
                            .during("partition")?;
                    }
                }
                Ok(kept)
            }
        }
    }
}

impl<T: Element, D: DeviceDataMut<T> + ?Sized> SelectMutOps<T> for D {}

/// The select kernel for `T` and `pred`.
/// `wide` counts are u64 (inputs of 2^32 elements or more), else u32, whose
/// look-back state packs into one word per tile.
pub(crate) fn select_spec<T: Element, P: Predicate<T>>(arch: u32, pred: &P, wide: bool) -> (KernelSpec, tuning::ScanPolicy) {
    let policy = tuning::select(arch, std::mem::size_of::<T>());
    let spec = KernelSpec::new(&SELECT)
        .constant("CUPRIM_BLOCK", policy.block as i64)
        .constant("CUPRIM_ITEMS", policy.items as i64)
        .constant("CUPRIM_MIN_BLOCKS", policy.min_blocks as i64)
        .elem::<T>("T")
        .raw(if wide { "typedef u64 C;" } else { "typedef u32 C;" })
        .raw(&format!(
            "struct PredFn {{ __device__ __forceinline__ static bool apply(T x, T p) {{ (void)p; return ({}); }} }};",
            pred.cuda_expr()
        ));
    (spec, policy)
}

/// Runs cuprim_select; returns how many elements were selected (one small
/// synchronous read of the last tile's prefix).
fn launch_select<T: Element, P: Predicate<T>>(
    dev: &CudaDevice,
    src: u64,
    len: usize,
    pred: &P,
    selected: u64,
    rejected: u64,
) -> Result<usize> {
    if len == 0 {
        return Ok(0);
    }
    let policy = tuning::select(dev.arch, std::mem::size_of::<T>());
    let wide = len as u64 > u32::MAX as u64;
    let key = FastKey::new::<T, P, ()>(if wide { "select64" } else { "select" }, pred.cuda_expr());
    let module = dev.module_for(key, || select_spec::<T, P>(dev.arch, pred, wide).0)?;
    let tiles = (len as u64).div_ceil(policy.tile());
    let num_tiles =
        u32::try_from(tiles).map_err(|_| Error::InvalidArgument(format!("copy_if of {len} elements needs more than 2^32 tiles")))?;
    let count_bytes = if wide { 8 } else { 4 };
    let layout = LookbackLayout::new(tiles, count_bytes);
    let total_at = layout.prefix_offset(tiles - 1, count_bytes);
    let (n, param, counter) = (len as u64, pred.param(), dev.counters_ptr + 4 * COUNTER_SELECT_TILE);
    let total = dev.with_scratch(layout.bytes, |base| {
        let (status, aggs, prefixes) = (base + layout.status, base + layout.aggregates, base + layout.prefixes);
        // SAFETY: the memset clears `tiles` status words in scratch; then
        // cuprim_select(const T* in, u64 n, T p, T* selected, T* rejected,
        // u32* status, u64* aggregates, u64* prefixes, u32* counter, u32
        // tiles): `in` holds n elements, `selected` (and `rejected` unless 0)
        // have room for n, the look-back arrays hold `tiles` entries, one block
        // per tile.
        unsafe {
            let stream = dev.stream.cu_stream();
            cudarc::driver::sys::cuMemsetD32Async(status, 0, layout.status_words, stream)
                .result()
                .during("clearing copy_if state")?;
            dev.launch(
                module.function("cuprim_select")?,
                num_tiles,
                policy.block,
                0,
                &mut kernel_args![&src, &n, &param, &selected, &rejected, &status, &aggs, &prefixes, &counter, &num_tiles],
            )?;
        }
        Ok(u64::from_le_bytes(
            dev.read_back::<8>(base + total_at, "reading the copy_if count")?,
        ))
    })?;
    // A 64-bit packed word holds a u32 count in its low half; a 16-byte one
    // holds the u64 count in its second 8 bytes, which total_at points at.
    Ok(if wide { total } else { total & 0xffff_ffff } as usize)
}
