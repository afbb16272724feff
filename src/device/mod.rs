//! Devices: where a [`DeviceVec`](crate::DeviceVec) lives and its work runs.
//!
//! A [`Device`] is a cheap clonable handle to either a CUDA GPU (a context,
//! one stream all work is ordered on, the module cache, a small error-flag
//! buffer) or the host backend (rayon on the CPU, with the same semantics).

pub(crate) mod cuda;
pub(crate) mod launch;

pub(crate) use cuda::{CudaDevice, Module, Scratch};
pub(crate) use launch::{Counter, Entry, Grid, Ptr, Region, ScratchLayout};

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
        static HOST: LazyLock<Device> = LazyLock::new(|| Device {
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
        // Event tracking stays on: the context is handed out
        // (`cuda_context`), and safe cudarc code on it relies on the events.
        let ctx = CudaContext::new(ordinal).during("creating a CUDA context")?;
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
