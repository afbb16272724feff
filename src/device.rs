//! Devices: where a [`DeviceVec`](crate::DeviceVec) lives and its work runs.
//!
//! A [`Device`] is a cheap clonable handle to either a CUDA GPU (a context,
//! one stream all work is ordered on, the module cache, a small error-flag
//! buffer) or the host backend (rayon on the CPU, with the same semantics).

use crate::error::{DriverContext, Error, Result};
use crate::jit::{self, CacheMode, KernelSpec};
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr};
use once_cell::sync::Lazy;
use std::collections::HashMap;
use std::ffi::c_void;
use std::fmt;
use std::sync::{Arc, Mutex};

/// A handle to a GPU or to the host backend. Clones share everything.
///
/// ```
/// use cuprim::Device;
/// let host = Device::host();
/// assert!(host.is_host());
/// // CUDA 0 when a driver, a GPU and NVRTC are found, else the host backend;
/// // `CUPRIM_DEVICE=host|cuda|cuda:N` overrides.
/// let dev = Device::default()?;
/// println!("running on {}", dev.name());
/// # Ok::<(), cuprim::Error>(())
/// ```
#[derive(Clone)]
pub struct Device {
    inner: Arc<Backend>,
}

pub(crate) enum Backend {
    Host,
    Cuda(Box<CudaDevice>),
}

/// The CUDA side of a [`Device`].
pub(crate) struct CudaDevice {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub name: String,
    pub ordinal: usize,
    pub arch: u32,
    pub sm_count: u32,
    pub l2_bytes: usize,
    cache_mode: CacheMode,
    modules: Mutex<HashMap<String, Arc<Module>>>,
    /// The same modules by a cheap key (template, Rust types, operator
    /// text), so a warm call skips formatting the generated source's key.
    fast_modules: Mutex<HashMap<FastKey, Arc<Module>>>,
    /// One u32 that kernels set when they see a bad index.
    _error_flag: CudaSlice<u32>,
    pub error_flag_ptr: u64,
    /// Held from a bounds-checked launch until its flag is read, so two
    /// threads never see each other's bad indices.
    pub error_flag_lock: Mutex<()>,
    /// Zeroed u32 counters for single-pass kernels ("last block" tickets).
    /// A kernel that uses one leaves it at zero when it finishes.
    _counters: CudaSlice<u32>,
    pub counters_ptr: u64,
    /// Temporary device memory, grown on demand, shared by all calls on
    /// this device (they are ordered on its one stream).
    scratch: Mutex<Option<CudaSlice<u8>>>,
    /// Page-locked host memory for small results (see `read_back`).
    pinned: Mutex<PinnedBytes>,
    /// Deterministic mode for float scans (see `Device::set_deterministic`).
    deterministic: std::sync::atomic::AtomicBool,
}

/// A few bytes of page-locked host memory: a copy from the device into it
/// is a plain DMA, several microseconds cheaper than into pageable memory.
pub(crate) struct PinnedBytes {
    ptr: *mut u8,
    /// The same bytes' device address (unified addressing maps page-locked
    /// memory into the device's address space), if the driver gives one:
    /// a kernel can then write a small result straight to the host.
    dev_ptr: Option<u64>,
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

/// Counter slots in `CudaDevice::counters_ptr`.
pub(crate) const COUNTER_REDUCE_TICKET: u64 = 0;
pub(crate) const COUNTER_SCAN_TILE: u64 = 1;
pub(crate) const COUNTER_SELECT_TILE: u64 = 2;
pub(crate) const COUNTER_SCAN_BY_KEY_TILE: u64 = 3;
pub(crate) const COUNTER_FIND_TICKET: u64 = 4;
/// Two slots (8-byte aligned): find_first's inverted running best.
pub(crate) const COUNTER_FIND_BEST: u64 = 6;
const COUNTER_SLOTS: usize = 64;

/// Identifies a specialisation without generating it: the template, the
/// Rust types it is specialised on, and the operator / predicate CUDA text
/// (operators may carry state, so their text is part of the key).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FastKey {
    template: &'static str,
    types: [std::any::TypeId; 3],
    text: String,
}

impl FastKey {
    /// A key for `template` specialised on up to three types (pad with
    /// `()`) and the given operator text.
    pub fn new<A: 'static, B: 'static, C: 'static>(template: &'static str, text: String) -> Self {
        use std::any::TypeId;
        FastKey {
            template,
            types: [TypeId::of::<A>(), TypeId::of::<B>(), TypeId::of::<C>()],
            text,
        }
    }
}

/// A loaded module and its entry points.
pub(crate) struct Module {
    _module: Arc<CudaModule>,
    functions: Vec<(&'static str, CudaFunction)>,
}

impl Module {
    pub fn function(&self, name: &str) -> Result<&CudaFunction> {
        self.functions
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| f)
            .ok_or_else(|| Error::Unsupported(format!("kernel {name} is not in its module")))
    }
}

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

static CUDA_DEVICES: Lazy<Mutex<HashMap<usize, Device>>> = Lazy::new(|| Mutex::new(HashMap::new()));

fn driver_present() -> Result<()> {
    // SAFETY: is_culib_present only tries to dlopen candidate names.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::CudaUnavailable {
            what: "the CUDA driver library (libcuda.so.1)".into(),
            searched: cudarc::get_lib_name_candidates("cuda")
                .into_iter()
                .map(|c| format!("{c} (loader path)"))
                .collect(),
        })
    }
}

impl Device {
    /// The host backend: every primitive runs on the CPU with rayon.
    pub fn host() -> Device {
        static HOST: Lazy<Device> = Lazy::new(|| Device {
            inner: Arc::new(Backend::Host),
        });
        HOST.clone()
    }

    /// CUDA device `ordinal`. Calls with the same ordinal share one handle
    /// (one stream, one module cache). Fails with
    /// [`Error::CudaUnavailable`] when there is no driver, no such GPU, or
    /// no NVRTC, saying what is missing and where cuprim looked.
    pub fn cuda(ordinal: usize) -> Result<Device> {
        let mut devices = CUDA_DEVICES.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(d) = devices.get(&ordinal) {
            return Ok(d.clone());
        }
        driver_present()?;
        cudarc::driver::result::init().map_err(|e| Error::CudaUnavailable {
            what: format!("a working CUDA driver (cuInit failed: {e})"),
            searched: Vec::new(),
        })?;
        let count = CudaContext::device_count().during("counting GPUs")?;
        if ordinal >= count.max(0) as usize {
            return Err(Error::CudaUnavailable {
                what: format!("GPU {ordinal} (the driver sees {count} GPU(s))"),
                searched: Vec::new(),
            });
        }
        let ctx = CudaContext::new(ordinal).during("creating a CUDA context")?;
        // SAFETY: this context is ours; cuprim orders all its work on one
        // stream, so cudarc's per-buffer events would only add overhead.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().during("creating a stream")?;
        keep_pool_memory(&ctx);
        let dev = Device::from_parts(ctx, stream)?;
        devices.insert(ordinal, dev.clone());
        Ok(dev)
    }

    /// A device on an existing cudarc context, with a new stream of its own.
    pub fn from_cuda_context(ctx: Arc<CudaContext>) -> Result<Device> {
        let stream = ctx.new_stream().during("creating a stream")?;
        Device::from_parts(ctx, stream)
    }

    /// A device whose work is ordered on an existing cudarc stream, so cuprim
    /// calls interleave with the caller's own launches without host syncs.
    ///
    /// ```no_run
    /// use cudarc::driver::CudaContext;
    /// let ctx = CudaContext::new(0).unwrap();
    /// let stream = ctx.default_stream();
    /// let dev = cuprim::Device::from_cuda_stream(stream)?;
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn from_cuda_stream(stream: Arc<CudaStream>) -> Result<Device> {
        Device::from_parts(stream.context().clone(), stream)
    }

    fn from_parts(ctx: Arc<CudaContext>, stream: Arc<CudaStream>) -> Result<Device> {
        jit::nvrtc::nvrtc()?;
        let attr = |a| ctx.attribute(a).during("reading device attributes");
        let major = attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let sm_count = attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let l2 = attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?;
        let name = ctx.name().during("reading the device name")?;
        let error_flag = stream.alloc_zeros::<u32>(1).map_err(|e| Error::alloc(4, e))?;
        let error_flag_ptr = error_flag.device_ptr(&stream).0;
        let counters = stream
            .alloc_zeros::<u32>(COUNTER_SLOTS)
            .map_err(|e| Error::alloc(4 * COUNTER_SLOTS, e))?;
        let counters_ptr = counters.device_ptr(&stream).0;
        let arch = (major * 10 + minor) as u32;
        let pinned = PinnedBytes::new(&ctx)?;
        Ok(Device {
            inner: Arc::new(Backend::Cuda(Box::new(CudaDevice {
                ordinal: ctx.ordinal(),
                ctx,
                stream,
                name,
                arch,
                sm_count: sm_count as u32,
                l2_bytes: l2 as usize,
                cache_mode: CacheMode::from_env(),
                modules: Mutex::new(HashMap::new()),
                fast_modules: Mutex::new(HashMap::new()),
                _error_flag: error_flag,
                error_flag_ptr,
                error_flag_lock: Mutex::new(()),
                _counters: counters,
                counters_ptr,
                scratch: Mutex::new(None),
                pinned: Mutex::new(pinned),
                deterministic: std::sync::atomic::AtomicBool::new(true),
            }))),
        })
    }

    /// `CUPRIM_DEVICE` if set (`host`, `cuda`, `cuda:N`), else CUDA 0 when
    /// it can be used, else the host backend. Only an explicit `cuda`
    /// request that cannot be met is an error.
    #[allow(clippy::should_implement_trait)]
    pub fn default() -> Result<Device> {
        match std::env::var("CUPRIM_DEVICE").ok().as_deref() {
            None | Some("") => Ok(Device::cuda(0).unwrap_or_else(|_| Device::host())),
            Some("host") | Some("cpu") => Ok(Device::host()),
            Some("cuda") => Device::cuda(0),
            Some(other) => match other.strip_prefix("cuda:").map(str::parse::<usize>) {
                Some(Ok(n)) => Device::cuda(n),
                _ => Err(Error::InvalidArgument(format!(
                    "CUPRIM_DEVICE={other:?}: expected host, cuda or cuda:N"
                ))),
            },
        }
    }

    /// True for the host backend.
    pub fn is_host(&self) -> bool {
        matches!(*self.inner, Backend::Host)
    }

    /// True for a CUDA device.
    pub fn is_cuda(&self) -> bool {
        !self.is_host()
    }

    /// The GPU's name, or `"host"`.
    pub fn name(&self) -> &str {
        match &*self.inner {
            Backend::Host => "host",
            Backend::Cuda(c) => &c.name,
        }
    }

    /// Compute capability as `major * 10 + minor` (90 for Hopper); `None` on the host.
    pub fn arch(&self) -> Option<u32> {
        self.cuda_ref().map(|c| c.arch)
    }

    /// Streaming multiprocessors; the rayon thread count on the host.
    pub fn sm_count(&self) -> u32 {
        match &*self.inner {
            Backend::Host => rayon::current_num_threads() as u32,
            Backend::Cuda(c) => c.sm_count,
        }
    }

    /// L2 cache bytes (0 on the host).
    pub fn l2_bytes(&self) -> usize {
        self.cuda_ref().map_or(0, |c| c.l2_bytes)
    }

    /// The cudarc stream all of this device's work is ordered on.
    pub fn cuda_stream(&self) -> Option<&Arc<CudaStream>> {
        self.cuda_ref().map(|c| &c.stream)
    }

    /// The cudarc context.
    pub fn cuda_context(&self) -> Option<&Arc<CudaContext>> {
        self.cuda_ref().map(|c| &c.ctx)
    }

    /// Deterministic mode, on by default. On, a float scan (`scan`,
    /// `scan_by_key` with `Add` or `Mul` on floats) gives the same bits on
    /// every run: tiles chain their prefixes in a fixed left-to-right order.
    /// Off, tiles chain through whichever earlier tile's prefix is ready
    /// first, so float results may differ in the last bits between runs. On
    /// an H100 the two measured the same within 1.5% at 2^20, 2^24 and 2^28
    /// elements (BENCHMARKS.md), so there is rarely a reason to turn it off.
    /// Integer, min / max and bitwise results, reductions, and the host
    /// backend are deterministic either way.
    ///
    /// ```
    /// let dev = cuprim::Device::default()?;
    /// assert!(dev.is_deterministic());
    /// dev.set_deterministic(false);
    /// dev.set_deterministic(true);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn set_deterministic(&self, on: bool) {
        if let Backend::Cuda(c) = &*self.inner {
            c.deterministic.store(on, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// True when results are bit-identical run to run for every operator:
    /// always on the host backend, in deterministic mode on CUDA.
    pub fn is_deterministic(&self) -> bool {
        match &*self.inner {
            Backend::Host => true,
            Backend::Cuda(c) => c.deterministic.load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Waits until all work queued on this device has finished.
    pub fn synchronize(&self) -> Result<()> {
        match &*self.inner {
            Backend::Host => Ok(()),
            Backend::Cuda(c) => c.stream.synchronize().during("synchronizing the stream"),
        }
    }

    pub(crate) fn backend(&self) -> &Backend {
        &self.inner
    }

    pub(crate) fn cuda_ref(&self) -> Option<&CudaDevice> {
        match &*self.inner {
            Backend::Host => None,
            Backend::Cuda(c) => Some(c),
        }
    }

    /// Same device (same handle), for buffer checks.
    pub(crate) fn same(&self, other: &Device) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.inner {
            Backend::Host => write!(f, "Device(host)"),
            Backend::Cuda(c) => write!(f, "Device(cuda:{} {} sm_{})", c.ordinal, c.name, c.arch),
        }
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Self) -> bool {
        self.same(other)
    }
}

impl CudaDevice {
    /// The loaded module for `spec`: from this device's memory cache, else
    /// built (disk cache or NVRTC) and loaded.
    pub fn module(&self, spec: &KernelSpec) -> Result<Arc<Module>> {
        let key = spec.key();
        if self.cache_mode != CacheMode::Off {
            let modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(m) = modules.get(key) {
                jit::cache::MEMORY_HITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return Ok(m.clone());
            }
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
            .during(&format!("loading {}", spec.display_name()))?;
        let mut functions = Vec::with_capacity(spec.template.entries.len());
        for &entry in spec.template.entries {
            let f = module
                .load_function(entry)
                .during(&format!("finding {entry} in {}", spec.display_name()))?;
            functions.push((entry, f));
        }
        let loaded = Arc::new(Module {
            _module: module,
            functions,
        });
        if self.cache_mode != CacheMode::Off {
            let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
            modules.insert(key.to_string(), loaded.clone());
        }
        Ok(loaded)
    }

    /// Whether a scan over `T` should take the deterministic look-back:
    /// only floats in deterministic mode (integer scans are exact anyway).
    pub fn deterministic_for<T: crate::Element>(&self) -> bool {
        T::KIND == crate::Kind::Float && self.deterministic.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// [`CudaDevice::module`] behind a cheap key: `spec` runs only when the
    /// key is new to this device.
    pub fn module_for(&self, key: FastKey, spec: impl FnOnce() -> KernelSpec) -> Result<Arc<Module>> {
        if self.cache_mode != CacheMode::Off {
            let fast = self.fast_modules.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(m) = fast.get(&key) {
                jit::cache::MEMORY_HITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return Ok(m.clone());
            }
        }
        let module = self.module(&spec())?;
        if self.cache_mode != CacheMode::Off {
            let mut fast = self.fast_modules.lock().unwrap_or_else(|e| e.into_inner());
            fast.insert(key, module.clone());
        }
        Ok(module)
    }

    /// Launches `f` on this device's stream with a 1-D grid.
    ///
    /// # Safety
    /// `args` must match the kernel's parameter list in number, order and
    /// types, and every pointer in them must be valid for what the kernel
    /// does with it.
    pub unsafe fn launch(&self, f: &CudaFunction, grid: u32, block: u32, shared: u32, args: &mut [*mut c_void]) -> Result<()> {
        self.ctx.bind_to_thread().during("binding the context")?;
        cudarc::driver::result::launch_kernel(f.cu_function(), (grid, 1, 1), (block, 1, 1), shared, self.stream.cu_stream(), args)
            .during("launching a kernel")
    }

    /// Runs `enqueue` with a scratch buffer of at least `bytes` bytes. The
    /// lock is held while `enqueue` queues its work, so no other call can
    /// replace the buffer between the pointer being taken and the launch;
    /// a replaced buffer is freed in stream order, after the work that used it.
    pub fn with_scratch<R>(&self, bytes: usize, enqueue: impl FnOnce(u64) -> Result<R>) -> Result<R> {
        let mut scratch = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let big_enough = scratch.as_ref().is_some_and(|s| s.len() >= bytes);
        if !big_enough {
            let size = bytes.max(1 << 16).next_power_of_two();
            // SAFETY: scratch contents are never read before a kernel writes them.
            let fresh = unsafe { self.stream.alloc::<u8>(size) }.map_err(|e| Error::alloc(size, e))?;
            *scratch = Some(fresh);
        }
        let ptr = match scratch.as_ref() {
            Some(s) => s.device_ptr(&self.stream).0,
            None => return Err(Error::OutOfMemory { bytes }),
        };
        enqueue(ptr)
    }

    /// Copies `N` (at most 64) bytes from device address `src` to the host
    /// after all queued work, through page-locked memory, and waits for them.
    /// Call it while whatever owns `src` still holds it (e.g. inside
    /// `with_scratch` for scratch-resident results).
    pub fn read_back<const N: usize>(&self, src: u64, what: &str) -> Result<[u8; N]> {
        const { assert!(N <= PinnedBytes::LEN) };
        let pinned = self.pinned.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = [0u8; N];
        // SAFETY: the pinned buffer has LEN >= N bytes and is ours while the
        // lock is held; `src` addresses N readable device bytes (caller); the
        // stream is synchronised before the buffer is read.
        unsafe {
            cudarc::driver::sys::cuMemcpyDtoHAsync_v2(pinned.ptr as *mut std::ffi::c_void, src, N, self.stream.cu_stream())
                .result()
                .during(what)?;
            self.stream.synchronize().during(what)?;
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
    pub fn result_to_host<const N: usize>(&self, fallback: u64, what: &str, enqueue: impl FnOnce(u64) -> Result<()>) -> Result<[u8; N]> {
        const { assert!(N <= PinnedBytes::LEN) };
        let pinned = self.pinned.lock().unwrap_or_else(|e| e.into_inner());
        let Some(dst) = pinned.dev_ptr else {
            drop(pinned);
            enqueue(fallback)?;
            return self.read_back::<N>(fallback, what);
        };
        enqueue(dst)?;
        self.stream.synchronize().during(what)?;
        let mut out = [0u8; N];
        // SAFETY: the pinned buffer has LEN >= N bytes and is ours while the
        // lock is held; the work that wrote it has finished (the stream was
        // synchronised), and a kernel's writes are visible to the host once
        // it has completed.
        unsafe { std::ptr::copy_nonoverlapping(pinned.ptr, out.as_mut_ptr(), N) };
        Ok(out)
    }

    /// Reads and clears the device error flag (one small synchronous copy).
    pub fn take_error_flag(&self) -> Result<bool> {
        let flag = [u32::from_le_bytes(
            self.read_back::<4>(self.error_flag_ptr, "reading the error flag")?,
        )];
        if flag[0] != 0 {
            // SAFETY: as above; a 4-byte memset of the flag.
            unsafe {
                cudarc::driver::result::memset_d8_async(self.error_flag_ptr, 0, 4, self.stream.cu_stream())
                    .during("clearing the error flag")?;
            }
        }
        Ok(flag[0] != 0)
    }
}

/// Builds the `*mut c_void` argument array for a kernel launch from
/// references to its arguments, in order.
macro_rules! kernel_args {
    ($($arg:expr),* $(,)?) => {
        [$(($arg) as *const _ as *mut ::std::ffi::c_void),*]
    };
}
pub(crate) use kernel_args;
