//! Finding NVRTC and compiling one source to CUBIN (or PTX).
//!
//! cudarc loads NVRTC by library name through the system loader and panics if
//! that fails. So before cudarc touches it, cuprim looks for
//! `libnvrtc.so.13` itself ([`places`], in this order): `CUPRIM_NVRTC_DIR`,
//! the dynamic loader's search path, `CUDA_PATH` and `CUDA_HOME` (`lib64`,
//! `lib`), `/usr/local/cuda/lib64`, then a pip-installed `nvidia/cu13/lib`
//! (the `nvidia-cuda-nvrtc` wheel) in the site-packages of `VIRTUAL_ENV`,
//! `CONDA_PREFIX`, `~/.local`, pyenv's versions, `/usr`, `/usr/local` and
//! `/opt/conda`. The first copy found is loaded (see [`dylib`]); nothing
//! found, or a copy that does not load, is an [`Error::CudaUnavailable`]
//! that lists the places tried and says what to do.

use super::dylib::{self, Place, Wanted};
use crate::error::{Error, Result};
use cudarc::nvrtc::sys as nv;
use std::ffi::{CStr, CString};
use std::path::Path;
use std::sync::OnceLock;

/// Where NVRTC was found and which version it is.
#[derive(Clone, Debug)]
pub struct NvrtcInfo {
    /// How it was found: a soname through the loader, or a full path.
    pub found_at: String,
    /// `(major, minor)` from `nvrtcVersion`.
    pub version: (i32, i32),
    /// Architectures it can compile to CUBIN for (e.g. 80, 90).
    pub archs: Vec<u32>,
}

/// Where cuprim looks for `libnvrtc.so.13`, in order, from the current
/// environment. Unset and empty variables add nothing; a folder reached
/// twice is listed once.
///
/// ```
/// use cuprim::jit::{dylib::Place, nvrtc};
/// // The loader's search comes right after CUPRIM_NVRTC_DIR (when set).
/// assert!(nvrtc::places().iter().take(2).any(|p| *p == Place::Loader));
/// ```
pub fn places() -> Vec<Place> {
    dylib::toolkit_places("CUPRIM_NVRTC_DIR", &["nvidia/cu13/lib"], "pip wheel nvidia-cuda-nvrtc")
}

/// Finds and loads `libnvrtc.so.13` from `places` (see [`dylib::find`]),
/// with its builtins library when it came from a folder.
///
/// ```
/// use cuprim::jit::{dylib::Place, nvrtc};
/// let err = nvrtc::locate(&[Place::dir("/nonexistent", "an example")]).unwrap_err();
/// assert!(err.to_string().contains("NVRTC 13 (libnvrtc.so.13) was not found"));
/// ```
pub fn locate(places: &[Place]) -> Result<String> {
    let found = dylib::find(&Wanted::NVRTC, places)?;
    if let Some(dir) = &found.dir {
        preload_builtins(dir);
    }
    Ok(found.at)
}

/// NVRTC opens `libnvrtc-builtins.so.13.x` by name when it compiles; from a
/// folder outside the loader path that fails. Loading it from NVRTC's own
/// folder first makes that open find the loaded copy.
fn preload_builtins(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with("libnvrtc-builtins.so.13") {
            // A builtins library that does not load shows up as NVRTC's own
            // error at the first compile, which names it.
            let _ = dylib::open(&entry.path());
        }
    }
}

/// `Ok` for success, else "failed while {during}: {NVRTC's error name}".
fn status(r: nv::nvrtcResult, during: &str) -> std::result::Result<(), String> {
    if r == nv::nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        // SAFETY: nvrtcGetErrorString returns a static NUL-terminated string.
        let msg = unsafe { CStr::from_ptr(nv::nvrtcGetErrorString(r)) };
        Err(format!("failed while {during}: {}", msg.to_string_lossy()))
    }
}

fn check(r: nv::nvrtcResult, during: &str) -> Result<()> {
    status(r, during).map_err(|e| Error::Unsupported(format!("NVRTC {e}")))
}

fn probe() -> Result<NvrtcInfo> {
    let found_at = locate(&places())?;
    let unusable = |why: String| Error::CudaUnavailable {
        what: format!("NVRTC at {found_at} was loaded but {why}; {}", Wanted::NVRTC.repair),
        searched: Vec::new(),
    };
    // SAFETY: the library is loaded (above), so cudarc's lookup succeeds;
    // the out-pointers are valid locals.
    unsafe {
        if !nv::is_culib_present() {
            return Err(unusable("cudarc could not open it by name".into()));
        }
        let (mut major, mut minor) = (0, 0);
        let mut count = 0;
        status(nv::nvrtcVersion(&mut major, &mut minor), "reading its version")
            .and_then(|_| status(nv::nvrtcGetNumSupportedArchs(&mut count), "listing architectures"))
            .map_err(unusable)?;
        let mut archs = vec![0i32; count.max(0) as usize];
        status(nv::nvrtcGetSupportedArchs(archs.as_mut_ptr()), "listing architectures").map_err(unusable)?;
        Ok(NvrtcInfo {
            found_at,
            version: (major, minor),
            archs: archs.into_iter().map(|a| a as u32).collect(),
        })
    }
}

/// Finds and loads NVRTC once per process; every later call returns the
/// same answer (an error too, with the same message).
pub fn nvrtc() -> Result<&'static NvrtcInfo> {
    // Only CudaUnavailable comes out of probe; its parts are kept so the
    // error can be handed out again as it was, not wrapped in another.
    static INFO: OnceLock<std::result::Result<NvrtcInfo, (String, Vec<String>)>> = OnceLock::new();
    let info = INFO.get_or_init(|| {
        probe().map_err(|e| match e {
            Error::CudaUnavailable { what, searched } => (what, searched),
            other => (other.to_string(), Vec::new()),
        })
    });
    match info {
        Ok(info) => Ok(info),
        Err((what, searched)) => Err(Error::CudaUnavailable {
            what: what.clone(),
            searched: searched.clone(),
        }),
    }
}

/// What NVRTC produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Binary {
    /// Machine code for exactly the requested `sm_XY`.
    Cubin(Vec<u8>),
    /// PTX for an older virtual architecture, when NVRTC cannot emit machine
    /// code for the device (a GPU newer than this NVRTC). The driver JITs it.
    Ptx(Vec<u8>),
}

impl Binary {
    /// The bytes to hand to the driver (PTX is NUL-terminated).
    pub fn bytes(&self) -> &[u8] {
        match self {
            Binary::Cubin(b) | Binary::Ptx(b) => b,
        }
    }
}

/// One compile's output and NVRTC's log (with `verbose`, the ptxas report of
/// registers, stack and spills).
#[derive(Clone, Debug)]
pub struct Compiled {
    /// CUBIN or PTX.
    pub binary: Binary,
    /// NVRTC's log, possibly empty.
    pub log: String,
}

/// The options every kernel is compiled with. `--fmad=false` keeps `a*b+c`
/// two roundings, as on the host, so float results match the host backend.
pub fn options(target: &str, verbose: bool) -> Vec<String> {
    let mut o = vec![
        format!("--gpu-architecture={target}"),
        "-std=c++17".to_string(),
        "--fmad=false".to_string(),
        "-default-device".to_string(),
    ];
    if verbose {
        o.push("--ptxas-options=-v".to_string());
    }
    o
}

/// The target string NVRTC is asked for: `sm_XY` when it can emit CUBIN for
/// `arch`, else `compute_XY` of the newest architecture it knows below it.
pub fn target_for(arch: u32) -> Result<String> {
    let info = nvrtc()?;
    if info.archs.contains(&arch) {
        return Ok(format!("sm_{arch}"));
    }
    match info.archs.iter().filter(|&&a| a <= arch).max() {
        Some(a) => Ok(format!("compute_{a}")),
        None => Err(Error::Unsupported(format!(
            "NVRTC {}.{} cannot compile for sm_{arch} (it knows {:?})",
            info.version.0, info.version.1, info.archs
        ))),
    }
}

/// Compiles `source` (named `name` in messages) for `arch` (e.g. 90).
pub fn compile(source: &str, name: &str, arch: u32, verbose: bool) -> Result<Compiled> {
    nvrtc()?;
    let target = target_for(arch)?;
    let want_cubin = target.starts_with("sm_");
    let src = CString::new(source).map_err(|_| Error::InvalidArgument("generated source contains a NUL byte".into()))?;
    let cname = CString::new(name.replace('\0', "")).unwrap_or_default();
    let opts: Vec<CString> = options(&target, verbose)
        .into_iter()
        .map(|o| CString::new(o).unwrap_or_default())
        .collect();
    let opt_ptrs: Vec<*const std::ffi::c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: every pointer handed to NVRTC points at a live NUL-terminated
    // string or a buffer sized by NVRTC's own size query; the program is
    // destroyed on every path out of this block.
    unsafe {
        let mut prog: nv::nvrtcProgram = std::ptr::null_mut();
        check(
            nv::nvrtcCreateProgram(&mut prog, src.as_ptr(), cname.as_ptr(), 0, std::ptr::null(), std::ptr::null()),
            "creating a program",
        )?;
        let status = nv::nvrtcCompileProgram(prog, opt_ptrs.len() as i32, opt_ptrs.as_ptr());
        let mut log_size = 0usize;
        let mut log = String::new();
        if nv::nvrtcGetProgramLogSize(prog, &mut log_size) == nv::nvrtcResult::NVRTC_SUCCESS && log_size > 1 {
            let mut buf = vec![0u8; log_size];
            if nv::nvrtcGetProgramLog(prog, buf.as_mut_ptr() as *mut _) == nv::nvrtcResult::NVRTC_SUCCESS {
                log = String::from_utf8_lossy(&buf[..log_size - 1]).into_owned();
            }
        }
        let result = if status != nv::nvrtcResult::NVRTC_SUCCESS {
            Err(Error::Compile {
                source_name: name.to_string(),
                log,
            })
        } else if want_cubin {
            let mut size = 0usize;
            let r = check(nv::nvrtcGetCUBINSize(prog, &mut size), "sizing CUBIN");
            r.and_then(|_| {
                let mut buf = vec![0u8; size];
                check(nv::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut _), "reading CUBIN")?;
                Ok(Compiled {
                    binary: Binary::Cubin(buf),
                    log,
                })
            })
        } else {
            let mut size = 0usize;
            let r = check(nv::nvrtcGetPTXSize(prog, &mut size), "sizing PTX");
            r.and_then(|_| {
                let mut buf = vec![0u8; size];
                check(nv::nvrtcGetPTX(prog, buf.as_mut_ptr() as *mut _), "reading PTX")?;
                Ok(Compiled {
                    binary: Binary::Ptx(buf),
                    log,
                })
            })
        };
        nv::nvrtcDestroyProgram(&mut prog);
        result
    }
}
