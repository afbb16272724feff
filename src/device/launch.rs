//! The typed launcher: kernel entry points declared once with their
//! parameter types, launched with argument tuples the compiler checks.
//!
//! ```text
//! // SAFETY (once, at the declaration): matches kernels/reduce/reduce.cu.
//! const fn entry<T>() -> Entry<(Ptr<T>, u64, T, Ptr<u8>, Ptr<u32>, Ptr<u8>)>
//! dev.launch(&module, entry::<T>(), grid, (input, n, param, partials, ticket, out))?
//! ```
//!
//! An argument list of the wrong length, order or types does not compile.
//! What the types cannot say, that each pointer addresses live memory for the
//! counts passed beside it, holds by construction: a [`Ptr`] is only made
//! from a buffer borrowed for the call, from the scratch arena (held for the
//! call), or from the device's own counters and result buffers.

use super::cuda::{CudaDevice, Kernel, Module};
use crate::element::Storable;
use crate::error::Result;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::atomic::Ordering;

/// A device address of `T`s (`T*` in the kernel).
#[repr(transparent)]
pub(crate) struct Ptr<T> {
    addr: u64,
    _t: PhantomData<*const T>,
}

impl<T> Clone for Ptr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Ptr<T> {}

// SAFETY: a Ptr is an address; sending it to another thread touches nothing.
unsafe impl<T> Send for Ptr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Ptr<T> {}

impl<T> Ptr<T> {
    /// Wraps an address. Only the buffer, scratch and device layers make
    /// these from live memory; see the module docs.
    pub(crate) fn from_raw(addr: u64) -> Self {
        Ptr { addr, _t: PhantomData }
    }

    /// The null pointer (a kernel parameter the specialisation ignores).
    pub fn null() -> Self {
        Ptr::from_raw(0)
    }

    /// The address.
    pub fn raw(self) -> u64 {
        self.addr
    }

    /// `self + count` elements.
    pub fn add(self, count: u64) -> Self {
        Ptr::from_raw(self.addr + count * std::mem::size_of::<T>() as u64)
    }

    /// The same address as a pointer to `U` (for byte-addressed scratch).
    pub fn cast<U>(self) -> Ptr<U> {
        Ptr::from_raw(self.addr)
    }
}

/// The device's zeroed `u32` counters for single-pass kernels; a kernel that
/// uses one leaves it at zero when it finishes.
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
pub(crate) enum Counter {
    /// reduce's last-block ticket.
    ReduceTicket = 0,
    /// scan's tile counter.
    ScanTile = 1,
    /// copy_if / partition's tile counter.
    SelectTile = 2,
    /// scan_by_key's tile (or chunk) counter.
    ScanByKeyTile = 3,
    /// find_first's last-block ticket.
    FindTicket = 4,
    /// find_first's inverted running best (two slots, 8-byte aligned).
    FindBest = 6,
    /// top-k's per-pass last-block ticket.
    TopkTicket = 8,
    /// reduce_by_key / unique / run_length_encode's tile counter.
    ByKeyTile = 10,
    /// A new histogram's last-block ticket.
    HistogramTicket = 11,
    /// The set operations' tile counter.
    SetTile = 12,
    /// kNN's long walks (three slots): the rows left to the split kernel,
    /// its tickets and its blocks done.
    KnnHard = 13,
}

/// A typed region of a [`ScratchLayout`].
pub(crate) struct Region<T> {
    offset: u64,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for Region<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Region<T> {}

impl<T> Region<T> {
    pub(super) fn offset(&self) -> u64 {
        self.offset
    }
}

/// How one call uses the device's scratch arena: zeroed regions first (the
/// arena clears them with one memset on the stream), then uninitialised
/// ones; every region 16-byte aligned (256 with [`uninit_aligned`](Self::uninit_aligned)).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ScratchLayout {
    zeroed: u64,
    bytes: u64,
}

impl ScratchLayout {
    /// An empty layout.
    pub fn new() -> Self {
        Self::default()
    }

    /// `count` `T`s cleared to zero before the call's work. Must come
    /// before every uninitialised region.
    pub fn zeroed<T>(&mut self, count: u64) -> Region<T> {
        debug_assert_eq!(self.zeroed, self.bytes, "zeroed scratch regions come first");
        let r = self.place::<T>(count, 16);
        self.zeroed = self.bytes;
        r
    }

    /// `count` `T`s the kernels write before they read.
    pub fn uninit<T>(&mut self, count: u64) -> Region<T> {
        self.place::<T>(count, 16)
    }

    /// Like [`uninit`](Self::uninit), 256-byte aligned (whole cache lines
    /// for buffers that are streamed).
    pub fn uninit_aligned<T>(&mut self, count: u64) -> Region<T> {
        self.place::<T>(count, 256)
    }

    fn place<T>(&mut self, count: u64, align: u64) -> Region<T> {
        let offset = self.bytes.next_multiple_of(align);
        self.bytes = offset.saturating_add(count.saturating_mul(std::mem::size_of::<T>() as u64));
        Region { offset, _t: PhantomData }
    }

    /// Bytes in all.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Bytes cleared before the call (a multiple of 16).
    pub fn zeroed_bytes(&self) -> u64 {
        self.zeroed.next_multiple_of(16).min(self.bytes.next_multiple_of(4))
    }
}

/// A type a kernel takes by value, with the same bytes on both sides.
///
/// # Safety
/// The type's layout must equal the CUDA parameter type it is declared for.
pub(crate) unsafe trait KernelArg: Copy {}

// SAFETY: every Storable is plain data with its CUDA twin's layout (see
// `element.rs`); a Ptr is a 64-bit address, as a CUDA pointer.
unsafe impl<T: Storable> KernelArg for T {}
// SAFETY: as above.
unsafe impl<T> KernelArg for Ptr<T> {}

/// A kernel's argument list: a tuple of [`KernelArg`]s.
pub(crate) trait Args {
    /// Calls `f` with the addresses of the arguments, in order.
    fn with_pointers<R>(&mut self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R;
}

macro_rules! args_tuple {
    ($($name:ident)*) => {
        impl<$($name: KernelArg),*> Args for ($($name,)*) {
            #[allow(non_snake_case)]
            fn with_pointers<R>(&mut self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R {
                let ($($name,)*) = self;
                f(&mut [$($name as *mut $name as *mut c_void),*])
            }
        }
    };
}
args_tuple!(A);
args_tuple!(A B);
args_tuple!(A B C);
args_tuple!(A B C D);
args_tuple!(A B C D E);
args_tuple!(A B C D E F);
args_tuple!(A B C D E F G);
args_tuple!(A B C D E F G H);
args_tuple!(A B C D E F G H I);
args_tuple!(A B C D E F G H I J);
args_tuple!(A B C D E F G H I J K);
args_tuple!(A B C D E F G H I J K L);
args_tuple!(A B C D E F G H I J K L M);
args_tuple!(A B C D E F G H I J K L M N);
args_tuple!(A B C D E F G H I J K L M N O);
args_tuple!(A B C D E F G H I J K L M N O P);

/// An `extern "C"` kernel and the Rust types of its parameters.
pub(crate) struct Entry<A> {
    name: &'static str,
    _a: PhantomData<fn(A)>,
}

impl<A> Clone for Entry<A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A> Copy for Entry<A> {}

impl<A: Args> Entry<A> {
    /// Declares kernel `name` with parameters `A`.
    ///
    /// # Safety
    /// `name` must be a kernel of the family's template whose parameter
    /// list is `A`, in number, order and types, and which touches no memory
    /// beyond what its pointer arguments address for the counts passed
    /// beside them.
    pub const unsafe fn declare(name: &'static str) -> Self {
        Entry { name, _a: PhantomData }
    }
}

/// Lets `k` run with `bytes` of dynamic shared memory beside its own
/// static shared memory: past the default 48 KiB for the two together the
/// kernel opts in (once) to all a block may have, `optin` bytes; more than
/// that is an error, not a failed launch.
fn allow_shared(k: &Kernel, bytes: u32, optin: u32) -> Result<()> {
    let total = k.static_shared as u64 + bytes as u64;
    if total > optin as u64 {
        return Err(crate::error::Error::Unsupported(format!(
            "{} needs {total} bytes of shared memory per block ({} of its own, {bytes} for this call); \
             this GPU gives a block at most {optin}",
            k.name, k.static_shared
        )));
    }
    if total <= 48 << 10 || k.opted_in.load(Ordering::Acquire) {
        return Ok(());
    }
    use cudarc::driver::sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    let most = optin - k.static_shared;
    k.function
        .set_attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, most as i32)
        .map_err(|e| crate::error::Error::driver(format!("allowing {most} bytes of shared memory for {}", k.name), e))?;
    k.opted_in.store(true, Ordering::Release);
    Ok(())
}

/// A 1-D launch shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Grid {
    /// Blocks.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// Dynamic shared memory bytes.
    pub shared: u32,
}

impl Grid {
    /// `blocks` blocks of `threads` threads, no dynamic shared memory.
    pub fn new(blocks: u32, threads: u32) -> Self {
        Grid {
            blocks,
            threads,
            shared: 0,
        }
    }
}

impl CudaDevice {
    /// How many blocks of `entry` shaped as `grid` (threads, dynamic shared
    /// memory) fit on one SM at once (at least 1).
    pub fn occupancy<A: Args>(&self, module: &Module, entry: Entry<A>, grid: Grid) -> Result<u32> {
        let k = module.function(entry.name)?;
        let mut known = k.occupancy.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&(_, _, blocks)) = known.iter().find(|&&(t, s, _)| (t, s) == (grid.threads, grid.shared)) {
            return Ok(blocks);
        }
        allow_shared(k, grid.shared, self.shared_optin())?;
        let blocks = k
            .function
            .occupancy_max_active_blocks_per_multiprocessor(grid.threads, grid.shared as usize, None)
            .map_err(|e| crate::error::Error::driver(format!("asking the occupancy of {}", entry.name), e))?
            .max(1);
        if known.len() < 64 {
            known.push((grid.threads, grid.shared, blocks));
        }
        Ok(blocks)
    }

    /// Queues `entry` of `module` on the device's stream. Safe: the
    /// argument types are `entry`'s declared parameters (checked by the
    /// compiler) and every pointer comes from memory held for the call.
    pub fn launch<A: Args>(&self, module: &Module, entry: Entry<A>, grid: Grid, args: A) -> Result<()> {
        self.queue(module, entry, grid, args, false)
    }

    /// Queues `entry` as [`launch`](Self::launch) does, but as a
    /// programmatic dependent launch where the device has it (sm_90 and a
    /// CUDA 12 driver): its blocks may be scheduled while the kernel queued
    /// before it still runs (once that kernel's blocks have all started or
    /// called `cuprim_grid_launch_dependents`), which hides the launch gap
    /// between the passes of a multi-pass algorithm. Elsewhere it is a
    /// plain launch.
    ///
    /// # Safety
    /// Every block of `entry` must call `cuprim_grid_wait()`
    /// (`kernels/block/load.cuh`) before it touches any global memory that
    /// earlier work on the stream reads or writes, and on every path, even
    /// one that returns early: a kernel's completion then implies its
    /// predecessor's, so dependences chain. One exception: memory that the
    /// kernel queued just before reads and does not write may be read
    /// before the wait, where that kernel was a plain launch (everything
    /// before it has then ended): the two-pass scan's tiles.
    pub unsafe fn launch_dependent<A: Args>(&self, module: &Module, entry: Entry<A>, grid: Grid, args: A) -> Result<()> {
        self.queue(module, entry, grid, args, self.dependent_launch())
    }

    /// The one launch path: `cuLaunchKernelEx` with programmatic stream
    /// serialization when `dependent`, else `cuLaunchKernel`.
    fn queue<A: Args>(&self, module: &Module, entry: Entry<A>, grid: Grid, mut args: A, dependent: bool) -> Result<()> {
        if grid.blocks == 0 {
            return Ok(());
        }
        let k = module.function(entry.name)?;
        let stream = self.raw_stream(entry.name)?;
        allow_shared(k, grid.shared, self.shared_optin())?;
        use cudarc::driver::sys;
        args.with_pointers(|ptrs| {
            if !dependent {
                // SAFETY: `entry` was declared (unsafely, once) with this exact
                // parameter list, so the pointer array matches the kernel's
                // parameters; the pointed-to values live until the call returns.
                return unsafe {
                    cudarc::driver::result::launch_kernel(
                        k.function.cu_function(),
                        (grid.blocks, 1, 1),
                        (grid.threads, 1, 1),
                        grid.shared,
                        stream,
                        ptrs,
                    )
                };
            }
            // SAFETY: a plain-data union of C types; zero is a valid pattern, and the field set below is the one
            // the attribute's id names.
            let mut value: sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
            value.programmaticStreamSerializationAllowed = 1;
            let mut attr = sys::CUlaunchAttribute {
                id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                pad: [0; 4],
                value,
            };
            let config = sys::CUlaunchConfig {
                gridDimX: grid.blocks,
                gridDimY: 1,
                gridDimZ: 1,
                blockDimX: grid.threads,
                blockDimY: 1,
                blockDimZ: 1,
                sharedMemBytes: grid.shared,
                hStream: stream,
                attrs: &mut attr,
                numAttrs: 1,
            };
            // SAFETY: as the plain launch above; `config` and `attr` live across the call; the caller of
            // `launch_dependent` guarantees the kernel waits for its predecessor.
            unsafe { sys::cuLaunchKernelEx(&config, k.function.cu_function(), ptrs.as_mut_ptr(), std::ptr::null_mut()) }.result()
        })
        .map_err(|e| self.fail(&format!("launching {}", entry.name), e))?;
        self.queued(entry.name);
        Ok(())
    }
}
