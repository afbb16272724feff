//! Finding NVRTC and compiling one source to CUBIN (or PTX).
//!
//! cudarc loads NVRTC by library name through the system loader and panics if
//! that fails. So before cudarc touches it, cuprim looks for the library
//! itself: the loader path first, then `CUDA_PATH`/`CUDA_HOME`, then
//! `/usr/local/cuda/lib64`, then a pip-installed `nvidia/cu13/lib` (the
//! `nvidia-cuda-nvrtc` wheel). A library found by full path is opened with
//! `RTLD_GLOBAL`, so cudarc's later open by soname finds the same copy.
//! Nothing found is an [`Error::CudaUnavailable`] listing the places tried.

use crate::error::{Error, Result};
use cudarc::nvrtc::sys as nv;
use once_cell::sync::OnceCell;
use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};

const SONAMES: &[&str] = &["libnvrtc.so.13", "libnvrtc.so"];

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

fn candidate_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(p) = std::env::var_os("CUPRIM_NVRTC_DIR") {
        dirs.push(PathBuf::from(p));
    }
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(p) = std::env::var_os(var) {
            dirs.push(Path::new(&p).join("lib64"));
            dirs.push(Path::new(&p).join("lib"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    // pip wheels: nvidia/cu13/lib inside any site-packages we can name.
    let mut prefixes: Vec<PathBuf> = Vec::new();
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(p) = std::env::var_os(var) {
            prefixes.push(PathBuf::from(p));
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        let home = PathBuf::from(home);
        prefixes.push(home.join(".local"));
        if let Ok(versions) = std::fs::read_dir(home.join(".pyenv/versions")) {
            prefixes.extend(versions.flatten().map(|e| e.path()));
        }
    }
    prefixes.extend(["/usr", "/usr/local", "/opt/conda"].iter().map(PathBuf::from));
    for prefix in prefixes {
        if let Ok(libs) = std::fs::read_dir(prefix.join("lib")) {
            for lib in libs.flatten() {
                let name = lib.file_name();
                if name.to_string_lossy().starts_with("python3") {
                    for site in ["site-packages", "dist-packages"] {
                        dirs.push(lib.path().join(site).join("nvidia/cu13/lib"));
                    }
                }
            }
        }
    }
    dirs
}

fn locate() -> std::result::Result<String, Error> {
    let mut searched: Vec<String> = Vec::new();
    // SAFETY: opening a shared library runs its initialisers; NVRTC's are
    // plain C++ static constructors with no preconditions.
    for soname in SONAMES {
        searched.push(format!("{soname} (loader path)"));
        if let Ok(lib) = unsafe { libloading::Library::new(soname) } {
            std::mem::forget(lib);
            return Ok(soname.to_string());
        }
    }
    for dir in candidate_dirs() {
        let path = dir.join("libnvrtc.so.13");
        searched.push(path.display().to_string());
        if !path.exists() {
            continue;
        }
        // SAFETY: as above. RTLD_GLOBAL makes the library visible to cudarc's
        // own dlopen by soname; the handle is leaked so it stays loaded.
        let opened =
            unsafe { libloading::os::unix::Library::open(Some(&path), libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL) };
        if let Ok(lib) = opened {
            std::mem::forget(lib);
            preload_builtins(&dir);
            return Ok(path.display().to_string());
        }
    }
    Err(Error::CudaUnavailable {
        what: "NVRTC (libnvrtc.so.13; `pip install nvidia-cuda-nvrtc==13.0.88` provides it)".into(),
        searched,
    })
}

/// NVRTC opens `libnvrtc-builtins.so.13.x` by name when it compiles; from a
/// folder outside the loader path that fails. Loading it from NVRTC's own
/// folder first makes that open find the loaded copy.
fn preload_builtins(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("libnvrtc-builtins.so.13") {
            // SAFETY: as for NVRTC itself; the handle is leaked on purpose.
            let opened = unsafe {
                libloading::os::unix::Library::open(
                    Some(entry.path()),
                    libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL,
                )
            };
            if let Ok(lib) = opened {
                std::mem::forget(lib);
            }
        }
    }
}

fn check(r: nv::nvrtcResult, during: &str) -> Result<()> {
    if r == nv::nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        // SAFETY: nvrtcGetErrorString returns a static NUL-terminated string.
        let msg = unsafe { CStr::from_ptr(nv::nvrtcGetErrorString(r)) };
        Err(Error::Unsupported(format!(
            "NVRTC failed while {during}: {}",
            msg.to_string_lossy()
        )))
    }
}

fn probe() -> Result<NvrtcInfo> {
    let found_at = locate()?;
    // SAFETY: the library is loaded (above), so cudarc's lookup succeeds;
    // the out-pointers are valid locals.
    unsafe {
        if !nv::is_culib_present() {
            return Err(Error::CudaUnavailable {
                what: "NVRTC under a name cudarc can open".into(),
                searched: vec![found_at],
            });
        }
        let (mut major, mut minor) = (0, 0);
        check(nv::nvrtcVersion(&mut major, &mut minor), "reading its version")?;
        let mut count = 0;
        check(nv::nvrtcGetNumSupportedArchs(&mut count), "listing architectures")?;
        let mut archs = vec![0i32; count.max(0) as usize];
        check(nv::nvrtcGetSupportedArchs(archs.as_mut_ptr()), "listing architectures")?;
        Ok(NvrtcInfo {
            found_at,
            version: (major, minor),
            archs: archs.into_iter().map(|a| a as u32).collect(),
        })
    }
}

/// Finds and loads NVRTC once per process.
pub fn nvrtc() -> Result<&'static NvrtcInfo> {
    static INFO: OnceCell<std::result::Result<NvrtcInfo, String>> = OnceCell::new();
    match INFO.get_or_init(|| probe().map_err(|e| e.to_string())) {
        Ok(info) => Ok(info),
        Err(msg) => Err(Error::CudaUnavailable {
            what: msg.clone(),
            searched: Vec::new(),
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
