//! Devices: where a [`DeviceVec`](crate::DeviceVec) lives and its work runs.
//!
//! A [`Device`] is a cheap clonable handle to either a CUDA GPU (a context,
//! one stream all work is ordered on, the module cache, a small error-flag
//! buffer) or the host backend (rayon on the CPU, with the same semantics).

mod checked;
pub(crate) mod cuda;
pub(crate) mod launch;
mod pool;

pub(crate) use cuda::{CudaDevice, Module, Scratch};
pub(crate) use launch::{Counter, Entry, Grid, KernelArg, Ptr, Region, ScratchLayout};

use crate::error::{DriverContext, Error, Result};
use cudarc::driver::{CudaContext, CudaStream};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock, Mutex};

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

static CUDA_DEVICES: LazyLock<Mutex<HashMap<usize, Device>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Finds and loads the NVIDIA driver library (`libcuda.so.1`) before
/// cudarc opens it by name, which panics when it cannot: through the
/// dynamic loader, then the folders of [`dylib::driver_places`]. A miss is
/// [`Error::CudaUnavailable`] naming the places and the remedy.
///
/// [`dylib::driver_places`]: crate::jit::dylib::driver_places
fn driver_present() -> Result<()> {
    use crate::jit::dylib::{self, Wanted};
    let found = dylib::find(&Wanted::DRIVER, &dylib::driver_places())?;
    // SAFETY: is_culib_present only tries to dlopen candidate names; the
    // library just loaded answers to one of them (its soname).
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::CudaUnavailable {
            what: format!(
                "the NVIDIA driver library was loaded from {} but cudarc could not open it by name; {}",
                found.at,
                Wanted::DRIVER.repair
            ),
            searched: Vec::new(),
        })
    }
}

impl Device {
    /// The host backend: every primitive runs on the CPU with rayon.
    pub fn host() -> Device {
        static HOST: LazyLock<Device> = LazyLock::new(|| Device {
            inner: Arc::new(Backend::Host),
        });
        HOST.clone()
    }

    /// CUDA device `ordinal`. Calls with the same ordinal share one handle
    /// (one stream, one module cache). Fails with
    /// [`Error::CudaUnavailable`] when there is no driver, no such GPU, or
    /// no NVRTC, saying what is missing and where cuprim looked.
    ///
    /// After a kernel fault ([`Error::KernelFault`]) the shared handle's
    /// context is lost, and this returns the fault: while handles of it are
    /// alive, saying how many; once all are dropped, the cache lets go of
    /// the context and tries a fresh one, which CUDA drivers
    /// refuse in a process that has faulted (then the error says to restart
    /// the process).
    pub fn cuda(ordinal: usize) -> Result<Device> {
        let mut devices = CUDA_DEVICES.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(d) = devices.get(&ordinal) {
            let Some(lost) = d.cuda_ref().filter(|c| c.is_lost()) else {
                return Ok(d.clone());
            };
            let holders = Arc::strong_count(&d.inner) - 1;
            if holders > 0 {
                return Err(lost.fail(
                    &format!(
                        "opening GPU {ordinal} again: {holders} Device or DeviceVec handle(s) of the lost \
                         context are still alive"
                    ),
                    lost.fault_error(),
                ));
            }
            // The last handle: dropping it releases the lost context (the
            // driver resets a primary context when its last reference goes).
            devices.remove(&ordinal);
        }
        driver_present()?;
        cudarc::driver::result::init().map_err(|e| Error::CudaUnavailable {
            what: format!(
                "the CUDA driver did not initialise (cuInit: {e}); check the driver with nvidia-smi and that \
                 CUDA_VISIBLE_DEVICES hides no GPU you want, or use Device::host()"
            ),
            searched: Vec::new(),
        })?;
        let count = CudaContext::device_count().during("counting GPUs")?;
        if ordinal >= count.max(0) as usize {
            return Err(Error::CudaUnavailable {
                what: format!(
                    "GPU {ordinal} was not found: the driver sees {count} GPU(s); use an ordinal below {count}, \
                     or Device::host()"
                ),
                searched: Vec::new(),
            });
        }
        // Event tracking stays on: the context is handed out
        // (`cuda_context`), and safe cudarc code on it relies on the events.
        let ctx = CudaContext::new(ordinal).during(&format!("creating a CUDA context on GPU {ordinal}"))?;
        let stream = ctx.new_stream().during("creating a stream")?;
        let dev = Device::from_cuda(CudaDevice::new(ctx, stream, true)?);
        devices.insert(ordinal, dev.clone());
        Ok(dev)
    }

    /// A device on an existing cudarc context, with a new stream of its own.
    pub fn from_cuda_context(ctx: Arc<CudaContext>) -> Result<Device> {
        let stream = ctx.new_stream().during("creating a stream")?;
        Ok(Device::from_cuda(CudaDevice::new(ctx, stream, false)?))
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
        Ok(Device::from_cuda(CudaDevice::new(stream.context().clone(), stream, false)?))
    }

    fn from_cuda(c: CudaDevice) -> Device {
        Device {
            inner: Arc::new(Backend::Cuda(Box::new(c))),
        }
    }

    /// `CUPRIM_DEVICE` if set (`host`, `cuda`, `cuda:N`), else CUDA 0 when
    /// it can be used, else the host backend.
    ///
    /// Only [`Error::CudaUnavailable`] (no driver, no GPU, no NVRTC) falls
    /// back to the host. Everything else is returned: an explicit `cuda`
    /// request that cannot be met, a `CUPRIM_DEVICE` or `CUPRIM_CACHE`
    /// value that is not one of the accepted ones (checked first, so a typo
    /// is reported on every machine, with or without a GPU), and a driver
    /// that fails while setting up the device.
    ///
    /// ```
    /// let dev = cuprim::Device::default()?;
    /// println!("running on {}", dev.name());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::should_implement_trait)]
    pub fn default() -> Result<Device> {
        crate::jit::CacheMode::from_env()?;
        let expected = "expected host, cuda or cuda:N (N: a GPU ordinal), or unset for CUDA 0 when usable, else the host";
        let choice = match std::env::var("CUPRIM_DEVICE") {
            Ok(v) => v,
            Err(std::env::VarError::NotPresent) => String::new(),
            Err(std::env::VarError::NotUnicode(v)) => {
                return Err(Error::InvalidArgument(format!("CUPRIM_DEVICE={v:?} is not a device; {expected}")))
            }
        };
        match choice.as_str() {
            "" => match Device::cuda(0) {
                Err(Error::CudaUnavailable { .. }) => Ok(Device::host()),
                other => other,
            },
            "host" => Ok(Device::host()),
            "cuda" => Device::cuda(0),
            other => match other.strip_prefix("cuda:").map(str::parse::<usize>) {
                Some(Ok(n)) => Device::cuda(n),
                _ => Err(Error::InvalidArgument(format!(
                    "CUPRIM_DEVICE={other:?} is not a device; {expected}"
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
            Backend::Cuda(c) => c.name(),
        }
    }

    /// Compute capability as `major * 10 + minor` (90 for Hopper); `None` on the host.
    pub fn arch(&self) -> Option<u32> {
        self.cuda_ref().map(|c| c.arch())
    }

    /// Streaming multiprocessors; the rayon thread count on the host.
    pub fn sm_count(&self) -> u32 {
        match &*self.inner {
            Backend::Host => rayon::current_num_threads() as u32,
            Backend::Cuda(c) => c.sm_count(),
        }
    }

    /// L2 cache bytes (0 on the host).
    pub fn l2_bytes(&self) -> usize {
        self.cuda_ref().map_or(0, |c| c.l2_bytes())
    }

    /// The cudarc stream all of this device's work is ordered on.
    pub fn cuda_stream(&self) -> Option<&Arc<CudaStream>> {
        self.cuda_ref().map(|c| c.stream())
    }

    /// The cudarc context.
    pub fn cuda_context(&self) -> Option<&Arc<CudaContext>> {
        self.cuda_ref().map(|c| c.context())
    }

    /// Deterministic mode, on by default. On, a float scan (`scan`,
    /// `scan_by_key` with `Add` or `Mul` on floats) gives the same bits on
    /// every run: tiles chain their prefixes in a fixed left-to-right order
    /// (a NaN passed from tile to tile is made one NaN, so its sign and
    /// payload are the same every run too).
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
            c.set_deterministic(on);
        }
    }

    /// True when results are bit-identical run to run for every operator:
    /// always on the host backend, in deterministic mode on CUDA.
    pub fn is_deterministic(&self) -> bool {
        match &*self.inner {
            Backend::Host => true,
            Backend::Cuda(c) => c.is_deterministic(),
        }
    }

    /// Waits until all work queued on this device has finished.
    pub fn synchronize(&self) -> Result<()> {
        match &*self.inner {
            Backend::Host => Ok(()),
            Backend::Cuda(c) => c.synchronize("synchronizing the stream"),
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
            Backend::Cuda(c) => write!(f, "Device(cuda:{} {} sm_{})", c.ordinal(), c.name(), c.arch()),
        }
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Self) -> bool {
        self.same(other)
    }
}
