//! The CUDA side of a [`Device`](super::Device): context, the one stream all
//! of its work is ordered on, the module cache, scratch, counters, the error
//! flag and a few bytes of page-locked memory for small results.
//!
//! Algorithm files see only the methods here and in [`launch`](super::launch):
//! no field, and no cudarc `sys` / `result` call.

use super::checked::CheckedOffsets;
use super::launch::{Counter, Ptr, ScratchLayout};
use super::pool::{self, KeptBuffers};
use crate::error::{DriverContext, Error, Result};
use crate::jit::{self, CacheMode, KeyIsHash, SpecKey, Specialise};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A GPU as cuprim uses it.
pub(crate) struct CudaDevice {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    name: String,
    ordinal: usize,
    arch: u32,
    /// Whether programmatic dependent launches are available (sm_90 and a
    /// driver of CUDA 12 or later: `cuLaunchKernelEx`).
    dependent_launch: bool,
    sm_count: u32,
    /// Shared memory one block may have when its kernel opts in, bytes.
    shared_optin: u32,
    l2_bytes: usize,
    cache_mode: CacheMode,
    /// Loaded modules by the key their plan derives (see [`Specialise`]).
    modules: Mutex<HashMap<SpecKey, Arc<Module>, KeyIsHash>>,
    /// One u32 that kernels set when they see a bad index.
    _error_flag: CudaSlice<u32>,
    error_flag_addr: u64,
    /// Held from a bounds-checked launch until its flag is read, so two
    /// threads never see each other's bad indices; it guards the
    /// page-locked flag word of [`CudaDevice::checked_store`].
    error_flag_lock: Mutex<PinnedBytes>,
    /// Zeroed u32 counters for single-pass kernels ("last block" tickets).
    /// A kernel that uses one leaves it at zero when it finishes.
    _counters: CudaSlice<u32>,
    counters_addr: u64,
    /// Temporary device memory, grown on demand, shared by all calls on
    /// this device (they are ordered on its one stream), and its address.
    scratch: Mutex<Option<(CudaSlice<u8>, u64)>>,
    /// Zero-filled u32 words, grown on demand, that a kernel may count in
    /// as long as it leaves them zero (see `with_zeroed_words`), and their
    /// address.
    zeroed_words: Mutex<Option<(CudaSlice<u32>, u64)>>,
    /// Freed `DeviceVec` buffers kept for reuse (see [`super::pool`]).
    kept_buffers: Mutex<KeptBuffers>,
    /// Page-locked host memory for small results (see `read_back`).
    pinned: Mutex<PinnedBytes>,
    /// Deterministic mode for float scans (see `Device::set_deterministic`).
    deterministic: AtomicBool,
    /// Segment offsets found valid and not written since.
    checked_offsets: CheckedOffsets,
    /// Kernel-fault tracking (see [`Health`]).
    health: Health,
}

/// Whether a kernel fault has lost the context, and which kernels could
/// have faulted: those queued since the stream last synchronised cleanly.
#[derive(Default)]
struct Health {
    /// The driver error of the first fault seen; set once, never cleared
    /// (a faulted context cannot be used again).
    fault: std::sync::OnceLock<cudarc::driver::DriverError>,
    /// Distinct kernel names queued since the last clean synchronisation
    /// (the first seven, then the latest in the last slot).
    pending: Mutex<([&'static str; 8], usize)>,
}

impl Health {
    fn queued(&self, name: &'static str) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let (names, len) = &mut *p;
        if names[..*len].contains(&name) {
            return;
        }
        if *len < names.len() {
            names[*len] = name;
            *len += 1;
        } else {
            names[names.len() - 1] = name;
        }
    }

    fn synchronised(&self) {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).1 = 0;
    }

    fn pending(&self) -> Vec<&'static str> {
        let p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        p.0[..p.1].to_vec()
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        // The pool's buffers go back to the driver while the stream lives.
        self.release_kept_buffers();
    }
}

/// A loaded module and its entry points.
pub(crate) struct Module {
    _module: Arc<CudaModule>,
    functions: Vec<Kernel>,
}

/// One entry point of a loaded module.
pub(super) struct Kernel {
    pub name: &'static str,
    pub function: CudaFunction,
    /// The kernel's own (static) shared memory, bytes: it counts with the
    /// launch's dynamic shared memory against the 48 KiB default limit.
    pub static_shared: u32,
    /// Whether the kernel may take all the shared memory a block can opt
    /// in to (set once, the first time a launch needs more than 48 KiB;
    /// raising the limit changes nothing for smaller launches).
    pub opted_in: std::sync::atomic::AtomicBool,
    /// Resident blocks per SM for each (threads, dynamic shared bytes)
    /// asked so far: the driver's answer never changes for a loaded kernel.
    pub occupancy: std::sync::Mutex<Vec<(u32, u32, u32)>>,
}

impl Module {
    pub(super) fn function(&self, name: &str) -> Result<&Kernel> {
        self.functions
            .iter()
            .find(|k| k.name == name)
            .ok_or_else(|| Error::Unsupported(format!("kernel {name} is not in its module")))
    }
}

/// Bits of a [`CudaDevice::signal_to_host`] word below its tag: the payload.
pub(crate) const SIGNAL_PAYLOAD_BITS: u32 = 42;

/// A few bytes of page-locked host memory: a copy from the device into it
/// is a plain DMA, several microseconds cheaper than into pageable memory.
struct PinnedBytes {
    ptr: *mut u8,
    /// The same bytes' device address (unified addressing maps page-locked
    /// memory into the device's address space), if the driver gives one:
    /// a kernel can then write a small result straight to the host.
    dev_ptr: Option<u64>,
    /// The tag of the last [`CudaDevice::signal_to_host`] (never 0).
    signal: u64,
}

// SAFETY: the pointer is owned (allocated in `new`, freed in `drop`) and
// only used behind the device's mutex.
unsafe impl Send for PinnedBytes {}

impl PinnedBytes {
    const LEN: usize = 64;

    fn new(ctx: &CudaContext) -> Result<Self> {
        ctx.bind_to_thread().during("binding the context")?;
        let mut ptr: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: allocates LEN bytes of pinned host memory into `ptr`.
        unsafe { cudarc::driver::sys::cuMemAllocHost_v2(&mut ptr, Self::LEN) }
            .result()
            .map_err(|e| Error::alloc(Self::LEN, e))?;
        let mut dev_ptr: cudarc::driver::sys::CUdeviceptr = 0;
        // SAFETY: asks for the device address of the allocation just made;
        // failure (no mapping) only means results go through a copy.
        let mapped = unsafe { cudarc::driver::sys::cuMemHostGetDevicePointer_v2(&mut dev_ptr, ptr, 0) };
        let dev_ptr = (mapped == cudarc::driver::sys::CUresult::CUDA_SUCCESS && dev_ptr != 0).then_some(dev_ptr);
        Ok(PinnedBytes {
            ptr: ptr as *mut u8,
            dev_ptr,
            signal: 0,
        })
    }
}

impl Drop for PinnedBytes {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from cuMemAllocHost and is freed once.
        unsafe {
            let _ = cudarc::driver::sys::cuMemFreeHost(self.ptr as *mut std::ffi::c_void);
        }
    }
}

/// The address of a buffer only cuprim's own stream uses, taken once: the
/// guard is forgotten, so no event is recorded (with event tracking on, each
/// `device_ptr` would otherwise wait on and record the buffer's events).
fn address<T>(slice: &CudaSlice<T>, stream: &CudaStream) -> u64 {
    let (addr, guard) = slice.device_ptr(stream);
    std::mem::forget(guard);
    addr
}

/// The driver's CUDA version as 1000 major + 10 minor (0 if it cannot say).
fn driver_version() -> i32 {
    let mut v = 0;
    // SAFETY: writes one int through a valid pointer; needs no context.
    match unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }.result() {
        Ok(()) => v,
        Err(_) => 0,
    }
}

/// Counter slots in the device's counter block.
const COUNTER_SLOTS: usize = 64;

/// 64-bit words of the zeroed accumulators after the counters (see
/// [`CudaDevice::zeroed_accumulators`]).
pub(crate) const ACCUMULATOR_WORDS: usize = 4097;

/// Stream-ordered allocations come from the device's default memory pool,
/// which by default hands freed memory back to the driver at every
/// synchronisation; the next large allocation then maps it again. Keep it
/// (it is still reused by later allocations of this process).
fn keep_pool_memory(ctx: &CudaContext) {
    use cudarc::driver::sys;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    let mut threshold: u64 = u64::MAX;
    // SAFETY: plain attribute calls on the context's own device with valid
    // out-pointers; failure only means the default behaviour stays.
    unsafe {
        if sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()) == sys::CUresult::CUDA_SUCCESS {
            let _ = sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                &mut threshold as *mut u64 as *mut std::ffi::c_void,
            );
        }
    }
}

impl CudaDevice {
    /// Sets up cuprim's state on `stream` of `ctx`.
    pub(super) fn new(ctx: Arc<CudaContext>, stream: Arc<CudaStream>, own_context: bool) -> Result<CudaDevice> {
        use cudarc::driver::sys::CUdevice_attribute as Attr;
        jit::nvrtc::nvrtc()?;
        if own_context {
            keep_pool_memory(&ctx);
        }
        let attr = |a| ctx.attribute(a).during("reading device attributes");
        let major = attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let sm_count = attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let l2 = attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?;
        let shared_optin = attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
        let name = ctx.name().during("reading the device name")?;
        let error_flag = stream.alloc_zeros::<u32>(1).map_err(|e| Error::alloc(4, e))?;
        let words = COUNTER_SLOTS + 2 * ACCUMULATOR_WORDS;
        let counters = stream.alloc_zeros::<u32>(words).map_err(|e| Error::alloc(4 * words, e))?;
        let pinned = PinnedBytes::new(&ctx)?;
        let flag_word = PinnedBytes::new(&ctx)?;
        let (error_flag_addr, counters_addr) = (address(&error_flag, &stream), address(&counters, &stream));
        Ok(CudaDevice {
            ordinal: ctx.ordinal(),
            ctx,
            stream,
            name,
            arch: (major * 10 + minor) as u32,
            dependent_launch: major >= 9 && driver_version() >= 12000,
            sm_count: sm_count as u32,
            shared_optin: shared_optin.max(48 << 10) as u32,
            l2_bytes: l2 as usize,
            cache_mode: CacheMode::from_env()?,
            modules: Mutex::new(HashMap::with_hasher(KeyIsHash)),
            _error_flag: error_flag,
            error_flag_addr,
            error_flag_lock: Mutex::new(flag_word),
            _counters: counters,
            counters_addr,
            scratch: Mutex::new(None),
            zeroed_words: Mutex::new(None),
            kept_buffers: Mutex::new(KeptBuffers::default()),
            pinned: Mutex::new(pinned),
            deterministic: AtomicBool::new(true),
            checked_offsets: CheckedOffsets::default(),
            health: Health::default(),
        })
    }

    /// Compute capability as `major * 10 + minor`.
    pub fn arch(&self) -> u32 {
        self.arch
    }

    /// Segment offsets a kernel found valid, until their memory is written
    /// (see [`CheckedOffsets`]).
    pub fn checked_offsets(&self) -> &CheckedOffsets {
        &self.checked_offsets
    }

    /// Whether [`launch_dependent`](Self::launch_dependent) overlaps
    /// kernels here (sm_90 and a CUDA 12 driver), rather than launching
    /// plainly.
    pub fn dependent_launch(&self) -> bool {
        self.dependent_launch
    }

    /// Streaming multiprocessors.
    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }

    pub(crate) fn shared_optin(&self) -> u32 {
        self.shared_optin
    }

    pub(crate) fn l2_bytes(&self) -> usize {
        self.l2_bytes
    }

    pub(super) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn ordinal(&self) -> usize {
        self.ordinal
    }

    pub(super) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream all of this device's work is ordered on.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    pub(super) fn set_deterministic(&self, on: bool) {
        self.deterministic.store(on, Ordering::Relaxed);
    }

    pub(crate) fn is_deterministic(&self) -> bool {
        self.deterministic.load(Ordering::Relaxed)
    }

    /// Whether a scan over `T` should take the deterministic look-back:
    /// only floats in deterministic mode (integer scans are exact anyway).
    pub fn deterministic_for<T: crate::Element>(&self) -> bool {
        T::KIND == crate::Kind::Float && self.is_deterministic()
    }

    /// The loaded module of `plan`'s specialisation: from this device's
    /// memory cache by the key the plan derives (no allocation, no
    /// formatting), else generated, built (disk cache or NVRTC) and loaded.
    pub fn module(&self, plan: &impl Specialise) -> Result<Arc<Module>> {
        if let Some(m) = self.cached(&SpecKey::of(plan)) {
            return Ok(m);
        }
        self.module_of_spec(&jit::KernelSpec::of(plan))
    }

    fn cached(&self, key: &SpecKey) -> Option<Arc<Module>> {
        if self.cache_mode == CacheMode::Off {
            return None;
        }
        let modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        let m = modules.get(key)?.clone();
        jit::cache::MEMORY_HITS.fetch_add(1, Ordering::Relaxed);
        Some(m)
    }

    /// The module of an already written specialisation (`precompile`), by
    /// its plan's key.
    pub(crate) fn module_of_spec(&self, spec: &jit::KernelSpec) -> Result<Arc<Module>> {
        if let Some(m) = self.cached(&spec.cache_key) {
            return Ok(m);
        }
        let loaded = Arc::new(self.load(spec)?);
        if self.cache_mode != CacheMode::Off {
            let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
            modules.insert(spec.cache_key, loaded.clone());
        }
        Ok(loaded)
    }

    /// Builds and loads `spec` (the cold path of [`module`](Self::module)).
    fn load(&self, spec: &jit::KernelSpec) -> Result<Module> {
        if let Some(&fault) = self.health.fault.get() {
            return Err(self.fail(&format!("loading {}", spec.display_name()), fault));
        }
        let binary = jit::build(spec, self.arch, self.cache_mode)?;
        let module = self
            .ctx
            .load_module(match binary {
                jit::Binary::Cubin(b) => cudarc::nvrtc::Ptx::from_binary(b),
                jit::Binary::Ptx(b) => {
                    let text = String::from_utf8_lossy(&b).trim_end_matches('\0').to_string();
                    cudarc::nvrtc::Ptx::from_src(text)
                }
            })
            .map_err(|e| self.fail(&format!("loading {}", spec.display_name()), e))?;
        let mut functions = Vec::with_capacity(spec.template.entries.len());
        for &entry in spec.template.entries {
            let f = module
                .load_function(entry)
                .map_err(|e| self.fail(&format!("finding {entry} in {}", spec.display_name()), e))?;
            let static_shared = f
                .shared_size_bytes()
                .map_err(|e| self.fail(&format!("reading the shared memory size of {entry}"), e))?;
            functions.push(Kernel {
                name: entry,
                function: f,
                static_shared: static_shared.max(0) as u32,
                opted_in: AtomicBool::new(false),
                occupancy: std::sync::Mutex::new(Vec::new()),
            });
        }
        Ok(Module {
            _module: module,
            functions,
        })
    }

    /// [`Error::alloc`] for an allocation of `bytes`, or the fault.
    fn alloc_err(&self, bytes: usize, e: cudarc::driver::DriverError) -> Error {
        if crate::error::is_fault(e) || self.is_lost() {
            return self.fail(&format!("allocating {bytes} bytes"), e);
        }
        Error::alloc(bytes, e)
    }

    /// The address of one of the device's zeroed counters.
    pub fn counter(&self, which: Counter) -> Ptr<u32> {
        Ptr::from_raw(self.counters_addr + 4 * which as u64)
    }

    /// [`ACCUMULATOR_WORDS`] zero-filled 64-bit words that a kernel may add
    /// into, as long as it leaves them zero when it finishes (its last
    /// block copies the totals out and clears them), like the counters:
    /// work on the device's one stream never overlaps.
    pub fn zeroed_accumulators(&self) -> Ptr<u64> {
        Ptr::from_raw(self.counters_addr + 4 * COUNTER_SLOTS as u64)
    }

    /// Binds the context to the calling thread and returns the raw stream;
    /// once a kernel has faulted, the fault again (`what`: the call, for
    /// the message), without touching the lost context.
    pub(super) fn raw_stream(&self, what: &str) -> Result<cudarc::driver::sys::CUstream> {
        if let Some(&fault) = self.health.fault.get() {
            return Err(self.fail(what, fault));
        }
        self.ctx.bind_to_thread().map_err(|e| self.fail(what, e))?;
        Ok(self.stream.cu_stream())
    }

    /// The error for a failed driver call during `what`. A kernel fault
    /// marks the context lost (every later call fails fast) and names the
    /// kernels that could have caused it.
    pub(super) fn fail(&self, what: &str, e: cudarc::driver::DriverError) -> Error {
        let e = match self.health.fault.get() {
            Some(&first) => first,
            None if crate::error::is_fault(e) => *self.health.fault.get_or_init(|| e),
            None => return Error::driver(what, e),
        };
        Error::KernelFault {
            during: what.to_string(),
            kernels: self.health.pending(),
            source: e,
        }
    }

    /// The driver error of the fault that lost the context (call only when
    /// [`is_lost`](Self::is_lost)).
    pub(super) fn fault_error(&self) -> cudarc::driver::DriverError {
        match self.health.fault.get() {
            Some(&e) => e,
            None => cudarc::driver::DriverError(cudarc::driver::sys::cudaError_enum::CUDA_ERROR_LAUNCH_FAILED),
        }
    }

    /// True once a kernel fault has lost this device's context.
    pub(super) fn is_lost(&self) -> bool {
        self.health.fault.get().is_some()
    }

    /// Records that kernel `name` was queued (for fault messages).
    pub(super) fn queued(&self, name: &'static str) {
        self.health.queued(name);
    }

    /// Waits for the stream, then reads the errors cudarc recorded in drops
    /// since (a fault seen there is this call's too).
    fn sync(&self, what: &str) -> Result<()> {
        if let Some(&fault) = self.health.fault.get() {
            return Err(self.fail(what, fault));
        }
        self.stream.synchronize().map_err(|e| self.fail(what, e))?;
        self.ctx.check_err().map_err(|e| self.fail(what, e))?;
        self.health.synchronised();
        Ok(())
    }

    /// Runs `enqueue` with the device's scratch arena laid out as `layout`
    /// (its zeroed prefix cleared on the stream first). The lock is held
    /// while `enqueue` queues its work, so no other call can replace the
    /// buffer between the pointer being taken and the launch; a replaced
    /// buffer is freed in stream order, after the work that used it.
    pub fn with_scratch<R>(&self, layout: &ScratchLayout, enqueue: impl FnOnce(Scratch) -> Result<R>) -> Result<R> {
        let bytes = usize::try_from(layout.bytes()).map_err(|_| Error::OutOfMemory { bytes: usize::MAX })?;
        let mut scratch = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let big_enough = scratch.as_ref().is_some_and(|(s, _)| s.len() >= bytes);
        if !big_enough {
            let size = bytes.max(1 << 16).checked_next_power_of_two().ok_or(Error::OutOfMemory { bytes })?;
            // Free the old buffer first (in stream order) so peak use stays low.
            *scratch = None;
            // SAFETY: scratch contents are never read before a kernel or the
            // zeroing below writes them.
            let fresh = unsafe { self.stream.alloc::<u8>(size) }.map_err(|e| self.alloc_err(size, e))?;
            let addr = address(&fresh, &self.stream);
            *scratch = Some((fresh, addr));
        }
        let base = match scratch.as_ref() {
            Some((_, addr)) => *addr,
            None => return Err(Error::OutOfMemory { bytes }),
        };
        let words = layout.zeroed_bytes() / 4;
        if words > 0 {
            let stream = self.raw_stream("clearing scratch state")?;
            // SAFETY: clears the layout's zeroed prefix, which lies inside
            // the buffer (at least `bytes` long, and the prefix is part of it).
            unsafe { cudarc::driver::sys::cuMemsetD32Async(base, 0, words as usize, stream) }
                .result()
                .map_err(|e| self.fail("clearing scratch state", e))?;
        }
        enqueue(Scratch { base })
    }

    /// Runs `enqueue` with `words` zero-filled u32 words that stay allocated
    /// between calls, so a kernel counting in them needs no memset first. The
    /// work `enqueue` queues must leave them zero; it returns whether it may
    /// not have (a kernel that found bad input stops counting), and then, or
    /// when it fails, the words are cleared on the stream again. Held locked
    /// while `enqueue` queues its work: work on the device's one stream never
    /// overlaps.
    pub fn with_zeroed_words<R>(&self, words: u64, enqueue: impl FnOnce(Ptr<u32>) -> Result<(R, bool)>) -> Result<R> {
        let words = usize::try_from(words.max(1)).map_err(|_| Error::OutOfMemory { bytes: usize::MAX })?;
        let mut held = self.zeroed_words.lock().unwrap_or_else(|e| e.into_inner());
        if held.as_ref().is_none_or(|(s, _)| s.len() < words) {
            let size = words
                .max(1 << 12)
                .checked_next_power_of_two()
                .ok_or(Error::OutOfMemory { bytes: usize::MAX })?;
            *held = None;
            let fresh = self.stream.alloc_zeros::<u32>(size).map_err(|e| self.alloc_err(4 * size, e))?;
            let addr = address(&fresh, &self.stream);
            *held = Some((fresh, addr));
        }
        let (len, base) = match held.as_ref() {
            Some((s, addr)) => (s.len(), *addr),
            None => return Err(Error::OutOfMemory { bytes: 4 * words }),
        };
        let result = enqueue(Ptr::from_raw(base));
        if !matches!(result, Ok((_, false))) {
            let cleared = self.raw_stream("clearing counters").and_then(|stream| {
                // SAFETY: clears the whole buffer, `len` u32 words at `base`, held alive in `held`.
                unsafe { cudarc::driver::sys::cuMemsetD32Async(base, 0, len, stream) }
                    .result()
                    .map_err(|e| self.fail("clearing counters", e))
            });
            if let Err(e) = cleared {
                // Not known to be zero: the next call allocates fresh words.
                *held = None;
                if result.is_ok() {
                    return Err(e);
                }
            }
        }
        result.map(|(r, _)| r)
    }

    /// `bytes` bytes of stream-ordered device memory (0 for 0 bytes): a
    /// `DeviceVec`'s own buffer, freed with [`free_raw`](Self::free_raw)
    /// (with the same `bytes`) unless it is handed to cudarc first. Requests
    /// up to [`pool::LARGEST_KEPT`] bytes are served from the buffers freed
    /// before when one of their class is kept (see [`pool`]).
    pub(crate) fn alloc_raw(&self, bytes: usize) -> Result<u64> {
        if bytes == 0 {
            return Ok(0);
        }
        let class = pool::class_of(bytes);
        if let Some(c) = class {
            if let Some(ptr) = self.kept_buffers.lock().unwrap_or_else(|e| e.into_inner()).take(c) {
                return Ok(ptr);
            }
        }
        let size = class.map_or(bytes, pool::class_bytes);
        let stream = self.raw_stream("allocating device memory")?;
        // SAFETY: a plain stream-ordered allocation on our stream.
        match unsafe { cudarc::driver::result::malloc_async(stream, size) } {
            Ok(ptr) => Ok(ptr),
            Err(e) if crate::error::is_fault(e) || self.is_lost() => Err(self.alloc_err(size, e)),
            Err(_) => {
                // Out of memory, perhaps only for want of the kept buffers.
                self.release_kept_buffers();
                // SAFETY: as above.
                unsafe { cudarc::driver::result::malloc_async(stream, size) }.map_err(|e| self.alloc_err(size, e))
            }
        }
    }

    /// Frees an [`alloc_raw`](Self::alloc_raw) buffer of `bytes` in stream
    /// order (after the work queued on it), or keeps it for the next
    /// request of its class (see [`pool`]). Errors are left with the context, as
    /// cudarc's own drops do.
    pub(crate) fn free_raw(&self, ptr: u64, bytes: usize) {
        if ptr == 0 {
            return;
        }
        let unkept = match pool::class_of(bytes) {
            Some(c) if !self.is_lost() => self.kept_buffers.lock().unwrap_or_else(|e| e.into_inner()).keep(c, ptr),
            _ => vec![ptr],
        };
        for ptr in unkept {
            self.free_to_driver(ptr);
        }
    }

    fn free_to_driver(&self, ptr: u64) {
        if let Ok(stream) = self.raw_stream("freeing device memory") {
            // SAFETY: `ptr` came from `alloc_raw` and is freed once, by its
            // owner or by the pool that took it over.
            self.ctx.record_err(unsafe { cudarc::driver::result::free_async(ptr, stream) });
        }
    }

    /// Frees every kept buffer in stream order.
    fn release_kept_buffers(&self) {
        let kept = self.kept_buffers.lock().unwrap_or_else(|e| e.into_inner()).drain();
        for ptr in kept {
            self.free_to_driver(ptr);
        }
    }

    /// Copies `n` elements from `src` to `dst` on the stream.
    pub fn copy<T>(&self, dst: Ptr<T>, src: Ptr<T>, n: u64, what: &str) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let stream = self.raw_stream(what)?;
        let bytes = n as usize * std::mem::size_of::<T>();
        // SAFETY: `Ptr`s in this crate address live device memory with room
        // for the counts their callers pass (see `launch`); the copy is
        // ordered on the stream after the work that wrote `src`.
        unsafe { cudarc::driver::result::memcpy_dtod_async(dst.raw(), src.raw(), bytes, stream) }.map_err(|e| self.fail(what, e))
    }

    /// Copies `src` from the host to `dst` and waits, so `src` may be
    /// dropped as soon as this returns.
    pub fn upload<T: cudarc::driver::DeviceRepr>(&self, dst: Ptr<T>, src: &[T], what: &str) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        let stream = self.raw_stream(what)?;
        // SAFETY: `dst` has room for src.len() elements (caller); the
        // synchronous wait keeps `src` borrowed until the copy has read it.
        unsafe { cudarc::driver::result::memcpy_htod_async(dst.raw(), src, stream) }.map_err(|e| self.fail(what, e))?;
        self.sync(what)
    }

    /// Copies `dst.len()` elements from `src` to the host and waits.
    pub fn download<T: cudarc::driver::DeviceRepr>(&self, dst: &mut [T], src: Ptr<T>, what: &str) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        let stream = self.raw_stream(what)?;
        // SAFETY: `src` addresses dst.len() live elements (caller); the
        // stream is synchronised before `dst` is read.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(dst, src.raw(), stream) }.map_err(|e| self.fail(what, e))?;
        self.sync(what)
    }

    /// Sets `bytes` bytes at `dst` to `value`, on the stream.
    pub fn memset_bytes(&self, dst: u64, value: u8, bytes: usize, what: &str) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let stream = self.raw_stream(what)?;
        // SAFETY: callers pass memory they own with room for `bytes` bytes.
        unsafe { cudarc::driver::result::memset_d8_async(dst, value, bytes, stream) }.map_err(|e| self.fail(what, e))
    }

    /// Waits until all work queued on the stream has finished.
    pub fn synchronize(&self, what: &str) -> Result<()> {
        self.sync(what)
    }

    /// Copies `N` (at most 64) bytes from device address `src` to the host
    /// after all queued work, through page-locked memory, and waits for them.
    /// Call it while whatever owns `src` still holds it (e.g. inside
    /// `with_scratch` for scratch-resident results).
    pub fn read_back<const N: usize>(&self, src: u64, what: &str) -> Result<[u8; N]> {
        const { assert!(N <= PinnedBytes::LEN) };
        let pinned = self.pinned.lock().unwrap_or_else(|e| e.into_inner());
        let stream = self.raw_stream(what)?;
        let mut out = [0u8; N];
        // SAFETY: the pinned buffer has LEN >= N bytes and is ours while the
        // lock is held; `src` addresses N readable device bytes (caller); the
        // stream is synchronised before the buffer is read.
        unsafe {
            cudarc::driver::sys::cuMemcpyDtoHAsync_v2(pinned.ptr as *mut std::ffi::c_void, src, N, stream)
                .result()
                .map_err(|e| self.fail(what, e))?;
            self.sync(what)?;
            std::ptr::copy_nonoverlapping(pinned.ptr, out.as_mut_ptr(), N);
        }
        Ok(out)
    }

    /// Queues `enqueue`, which writes an `N`-byte (at most 64) result to the
    /// device address it is given, waits for it, and returns those bytes.
    /// The address is the page-locked result buffer itself when the driver
    /// maps it (the kernel's store goes straight to host memory: no copy is
    /// queued after the kernel, a few microseconds less per call), else
    /// `fallback` (device memory the caller holds, e.g. scratch), copied
    /// back as in [`read_back`](Self::read_back).
    pub fn result_to_host<const N: usize>(
        &self,
        fallback: Ptr<u8>,
        what: &str,
        enqueue: impl FnOnce(Ptr<u8>) -> Result<()>,
    ) -> Result<[u8; N]> {
        const { assert!(N <= PinnedBytes::LEN) };
        let pinned = self.pinned.lock().unwrap_or_else(|e| e.into_inner());
        let Some(dst) = pinned.dev_ptr else {
            drop(pinned);
            enqueue(fallback)?;
            return self.read_back::<N>(fallback.raw(), what);
        };
        enqueue(Ptr::from_raw(dst))?;
        self.sync(what)?;
        let mut out = [0u8; N];
        // SAFETY: the pinned buffer has LEN >= N bytes and is ours while the
        // lock is held; the work that wrote it has finished (the stream was
        // synchronised), and a kernel's writes are visible to the host once
        // it has completed.
        unsafe { std::ptr::copy_nonoverlapping(pinned.ptr, out.as_mut_ptr(), N) };
        Ok(out)
    }

    /// Queues `enqueue`, which writes one 8-byte word to the device address
    /// it is given: the tag it is given (bits SIGNAL_PAYLOAD_BITS and up,
    /// never 0) ORed with a payload below 2^SIGNAL_PAYLOAD_BITS, in one
    /// aligned store. Returns the payload as soon as the host sees the word,
    /// without waiting for the stream: the rest of the kernel that stored
    /// it, and the work queued after it, run on while the caller goes on
    /// queuing (the word must be the last thing that kernel writes to the
    /// address). Where the driver maps the page-locked buffer, the kernel
    /// stores straight to it and the host polls it (the stream is queried
    /// now and then, so a fault or a kernel that never stores surfaces as an
    /// error instead of a hang); else `fallback` (8 device bytes the caller
    /// holds) is read back after a synchronisation.
    pub fn signal_to_host(&self, fallback: Ptr<u8>, what: &str, enqueue: impl FnOnce(Ptr<u8>, u64) -> Result<()>) -> Result<u64> {
        let payload = (1u64 << SIGNAL_PAYLOAD_BITS) - 1;
        let mut pinned = self.pinned.lock().unwrap_or_else(|e| e.into_inner());
        let tag = match pinned.signal >> SIGNAL_PAYLOAD_BITS {
            n if n == u64::MAX >> SIGNAL_PAYLOAD_BITS => 1,
            n => n + 1,
        } << SIGNAL_PAYLOAD_BITS;
        pinned.signal = tag;
        let Some(dst) = pinned.dev_ptr else {
            drop(pinned);
            enqueue(fallback, tag)?;
            return Ok(u64::from_le_bytes(self.read_back::<8>(fallback.raw(), what)?) & payload);
        };
        let word = pinned.ptr as *mut u64;
        // SAFETY: the page-locked buffer (page-aligned, LEN >= 8 bytes) is
        // ours while the lock is held, and no kernel writes it now: every
        // earlier writer was waited for (result_to_host synchronises; a
        // signal's kernel stores its word last, and it was seen).
        unsafe { word.write_volatile(0) };
        enqueue(Ptr::from_raw(dst), tag)?;
        let stream = self.raw_stream(what)?;
        let mut spins = 0u32;
        loop {
            // SAFETY: as above; the kernel's aligned 8-byte store reaches
            // the host whole, and volatile reads see it when it lands.
            let w = unsafe { word.read_volatile() };
            if w & !payload == tag {
                std::sync::atomic::fence(Ordering::Acquire);
                return Ok(w & payload);
            }
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(1024) {
                // SAFETY: queries our own stream; no memory is touched.
                match unsafe { cudarc::driver::sys::cuStreamQuery(stream) }.result() {
                    Ok(()) => {
                        // Idle: the kernel has finished, and its store is visible.
                        self.sync(what)?;
                        // SAFETY: as above.
                        let w = unsafe { word.read_volatile() };
                        if w & !payload == tag {
                            return Ok(w & payload);
                        }
                        return Err(Error::Unsupported(format!("{what}: the kernel finished without its result")));
                    }
                    Err(e) if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_READY => {}
                    Err(e) => return Err(self.fail(what, e)),
                }
            }
            std::hint::spin_loop();
        }
    }

    /// Runs `enqueue` with the device's error flag (a `u32` kernels set
    /// when they see a bad index), then reads and clears it: true if a
    /// kernel set it. The flag is held for the whole call, so two threads
    /// never see each other's bad indices.
    pub fn checked<R>(&self, enqueue: impl FnOnce(Ptr<u32>) -> Result<R>) -> Result<(R, bool)> {
        self.checked_word(enqueue).map(|(r, w)| (r, w != 0))
    }

    /// [`checked`](Self::checked) returning the flag's word (kernels that
    /// store different nonzero values for different faults).
    pub fn checked_word<R>(&self, enqueue: impl FnOnce(Ptr<u32>) -> Result<R>) -> Result<(R, u32)> {
        let _flag = self.error_flag_lock.lock().unwrap_or_else(|e| e.into_inner());
        let flag = self.error_flag_addr;
        let r = enqueue(Ptr::from_raw(flag))?;
        // Read without the page-locked result buffer: `enqueue` may be
        // queuing a kernel that writes there for `result_to_host`, which
        // holds that buffer's lock (a fused reduction of a permutation).
        self.sync("reading the error flag")?;
        let mut word = 0u32;
        // SAFETY: `flag` addresses the device's 4-byte flag; `word` is 4
        // writable bytes; the copy is synchronous and the stream that
        // writes the flag has finished.
        unsafe { cudarc::driver::sys::cuMemcpyDtoH_v2((&mut word as *mut u32).cast(), flag, 4) }
            .result()
            .map_err(|e| self.fail("reading the error flag", e))?;
        if word != 0 {
            self.memset_bytes(flag, 0, 4, "clearing the error flag")?;
        }
        Ok((r, word))
    }

    /// As [`checked`](Self::checked), for kernels that set the flag with a
    /// plain store of a nonzero `u32` (no atomics). Where the driver maps
    /// page-locked memory, the flag is a page-locked word the kernel stores
    /// to directly: after the stream is synchronised the host reads it, with
    /// no copy queued after the kernel (a few microseconds less per call).
    /// Returns the flag's word (kernels store different nonzero values for
    /// different faults).
    pub fn checked_store_word<R>(&self, enqueue: impl FnOnce(Ptr<u32>) -> Result<R>) -> Result<(R, u32)> {
        let word = self.error_flag_lock.lock().unwrap_or_else(|e| e.into_inner());
        let Some(dst) = word.dev_ptr else {
            drop(word);
            return self.checked_word(enqueue);
        };
        let host = word.ptr as *mut u32;
        // SAFETY: the page-locked buffer (page-aligned, LEN >= 4 bytes) is
        // ours while the lock is held, and no kernel writes it now: every
        // earlier writer ran under this lock and was waited for below.
        unsafe { host.write_volatile(0) };
        let r = enqueue(Ptr::from_raw(dst))?;
        self.sync("reading the error flag")?;
        // SAFETY: as above; the kernels that may have stored to it have
        // finished (the stream was synchronised), so their stores are visible.
        let set = unsafe { host.read_volatile() };
        Ok((r, set))
    }
}

/// The device's scratch arena during one [`CudaDevice::with_scratch`] call.
#[derive(Clone, Copy)]
pub(crate) struct Scratch {
    base: u64,
}

impl Scratch {
    /// The region of `layout` at byte `offset`, as a pointer to `T`.
    pub fn at<T>(&self, region: super::launch::Region<T>) -> Ptr<T> {
        Ptr::from_raw(self.base + region.offset())
    }
}
