//! The JIT: generated CUDA source, one NVRTC compile path, two caches.
//!
//! ```text
//! KernelSpec (template + generated defs)
//!   -> in-memory cache of the Device: (spec key) -> loaded module   [hit: done]
//!   -> disk cache: SHA-256(source, options, arch, NVRTC, cuprim)    [hit: load]
//!   -> NVRTC: CUBIN for sm_XY (PTX for a GPU newer than NVRTC)     [store, load]
//! ```
//!
//! `source` writes the text, [`nvrtc`] compiles it, [`cache`] keeps it;
//! [`dylib`] finds and loads NVRTC and the driver library at run time.
//! `build` is the one path from a spec to a binary; `Device` adds the
//! in-memory layer and module loading on top.

#[doc(hidden)] // public for the disk-cache tests (tests/cache.rs); not an application API
pub mod cache;
#[doc(hidden)] // public for the error-message tests (tests/errors.rs); not an application API
pub mod dylib;
#[doc(hidden)] // public for the disk-cache tests; applications use `nvrtc_info`
pub mod nvrtc;
pub(crate) mod source;
pub(crate) mod spec;

pub use cache::{stats, CacheMode, CacheStats};
#[doc(hidden)]
pub use cache::{DiskCache, Lookup};
pub use nvrtc::NvrtcInfo;
#[doc(hidden)]
pub use nvrtc::{Binary, Compiled};
pub(crate) use source::{header, template, KernelSpec, Template};
pub(crate) use spec::{KeyIsHash, OpText, SpecKey, SpecWriter, Specialise};

/// The NVRTC library cuprim uses: its version and where it was found, or
/// [`Error::CudaUnavailable`](crate::Error::CudaUnavailable) saying where it looked.
///
/// ```
/// match cuprim::jit::nvrtc_info() {
///     Ok(info) => println!("NVRTC {}.{}", info.version.0, info.version.1),
///     Err(e) => println!("no NVRTC: {e}"),
/// }
/// ```
pub fn nvrtc_info() -> Result<&'static NvrtcInfo> {
    nvrtc::nvrtc()
}

use crate::error::Result;
use std::sync::atomic::Ordering;

/// Produces the binary for `spec` on architecture `arch` (e.g. 90), from
/// the disk cache when `mode` is [`CacheMode::Disk`] and it holds a valid
/// entry, else by compiling (and storing, in `Disk` mode).
pub(crate) fn build(spec: &KernelSpec, arch: u32, mode: CacheMode) -> Result<Binary> {
    let source = spec.source();
    let disk = match mode {
        CacheMode::Disk => DiskCache::default_location(),
        _ => None,
    };
    build_source(&source, &spec.display_name(), arch, disk.as_ref())
}

#[doc(hidden)] // public for the disk-cache tests
/// [`build`] for a ready source and an explicit (optional) disk cache.
pub fn build_source(source: &str, name: &str, arch: u32, disk: Option<&DiskCache>) -> Result<Binary> {
    let info = nvrtc::nvrtc()?;
    let key = disk.map(|_| {
        let target = nvrtc::target_for(arch).unwrap_or_default();
        DiskCache::key(source, &nvrtc::options(&target, false), arch, info.version)
    });
    if let (Some(cache), Some(key)) = (disk, key.as_deref()) {
        match cache.load(key) {
            Lookup::Hit(b) => {
                cache::DISK_HITS.fetch_add(1, Ordering::Relaxed);
                return Ok(b);
            }
            Lookup::Corrupt => {
                cache::DISK_CORRUPT.fetch_add(1, Ordering::Relaxed);
            }
            Lookup::Miss => {}
        }
    }
    cache::COMPILES.fetch_add(1, Ordering::Relaxed);
    let compiled = nvrtc::compile(source, name, arch, false)?;
    if let (Some(cache), Some(key)) = (disk, key.as_deref()) {
        let _ = cache.store(key, &compiled.binary);
    }
    Ok(compiled.binary)
}

/// Compiles `spec` for `arch` with `--ptxas-options=-v`, bypassing every
/// cache, and returns NVRTC's log: registers, shared memory, stack and
/// spills per kernel. This is what the compile-check tests and tuning use.
///
/// NVRTC 13.0 on the GPU machine now and then returns machine code with a
/// log that lacks ptxas' report (1 to 3 modules of ~100 while other
/// processes compile beside it, either copy of libnvrtc): such a compile is
/// repeated, up to three in all.
pub(crate) fn compile_report(spec: &KernelSpec, arch: u32) -> Result<Compiled> {
    let (source, name) = (spec.source(), spec.display_name());
    let mut tries = 1;
    loop {
        let out = nvrtc::compile(&source, &name, arch, true)?;
        let reported = matches!(out.binary, nvrtc::Binary::Ptx(_)) || out.log.contains("bytes stack frame");
        if reported || tries == 3 {
            return Ok(out);
        }
        tries += 1;
    }
}
