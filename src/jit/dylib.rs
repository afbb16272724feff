//! Finding and loading the CUDA libraries cuprim opens at run time: NVRTC
//! (`libnvrtc.so.13`), the driver (`libcuda.so.1`) and NCCL
//! (`libnccl.so.2`, only for [`multi`](crate::multi)).
//!
//! cudarc opens both by file name and panics when it cannot, so cuprim looks
//! for them first, place by place, and turns a miss into an
//! [`Error::CudaUnavailable`] that lists every place tried and says what to
//! do. A library found by full path is opened with `RTLD_GLOBAL` and kept
//! loaded; the dynamic loader then hands cudarc's later open by file name
//! the same copy (it matches the name against the loaded library's soname).
//!
//! The first file that exists decides: if it loads, it is used; if it does
//! not (truncated, built for another architecture, a dependency missing),
//! that is the error, carrying the loader's own message. A broken copy is
//! never skipped in favour of a later one, so what runs is what the search
//! order says.

use crate::error::{Error, Result};
use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
use std::path::{Path, PathBuf};

/// One place to look for a library.
///
/// ```
/// use cuprim::jit::dylib::Place;
/// let places = [Place::Loader, Place::dir("/opt/nvrtc/lib", "my installer")];
/// assert_eq!(places[1], Place::Dir { dir: "/opt/nvrtc/lib".into(), from: "my installer".into() });
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// The dynamic loader's own search by file name: `LD_LIBRARY_PATH`, the
    /// ldconfig cache and the system library folders.
    Loader,
    /// A folder, and where it came from (shown in messages), e.g.
    /// `"CUPRIM_NVRTC_DIR"`.
    Dir {
        /// The folder.
        dir: PathBuf,
        /// Why it is searched.
        from: String,
    },
}

impl Place {
    /// A folder searched because of `from`.
    ///
    /// ```
    /// use cuprim::jit::dylib::Place;
    /// let p = Place::dir("/usr/local/cuda/lib64", "the CUDA toolkit's default folder");
    /// assert!(matches!(p, Place::Dir { .. }));
    /// ```
    pub fn dir(dir: impl Into<PathBuf>, from: impl Into<String>) -> Place {
        Place::Dir {
            dir: dir.into(),
            from: from.into(),
        }
    }
}

/// A library to look for, and what the messages about it say.
///
/// ```
/// use cuprim::jit::dylib::{find, Place, Wanted};
/// let wanted = Wanted {
///     names: &["libcuprim-doc-example-absent.so.1"],
///     ..Wanted::DRIVER
/// };
/// let err = find(&wanted, &[Place::Loader]).unwrap_err();
/// assert!(err.to_string().contains("install the NVIDIA driver"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Wanted {
    /// What it is, e.g. `"NVRTC 13"`.
    pub what: &'static str,
    /// File names to ask for, the usual one first; each folder is checked
    /// for each of them.
    pub names: &'static [&'static str],
    /// What to do when no copy exists anywhere.
    pub install: &'static str,
    /// What to do when a copy exists but does not load.
    pub repair: &'static str,
}

impl Wanted {
    /// NVRTC 13, from the CUDA 13 toolkit or the `nvidia-cuda-nvrtc` wheel.
    ///
    /// ```
    /// assert_eq!(cuprim::jit::dylib::Wanted::NVRTC.names, ["libnvrtc.so.13"]);
    /// ```
    pub const NVRTC: Wanted = Wanted {
        what: "NVRTC 13",
        names: &["libnvrtc.so.13"],
        install: "install it with `pip install nvidia-cuda-nvrtc==13.0.88` or with the CUDA 13 toolkit, \
                  or set CUPRIM_NVRTC_DIR to the folder that holds libnvrtc.so.13",
        repair: "reinstall it (`pip install --force-reinstall nvidia-cuda-nvrtc==13.0.88`, or the CUDA 13 toolkit), \
                 or set CUPRIM_NVRTC_DIR to a folder that holds a working libnvrtc.so.13",
    };

    /// NCCL 2, from the `nvidia-nccl-cu13` wheel, a CUDA install or the
    /// system's packages (`libnccl2`). `libnccl.so` (no version) is the
    /// development link to the same file; it is asked for second.
    ///
    /// ```
    /// assert_eq!(cuprim::jit::dylib::Wanted::NCCL.names, ["libnccl.so.2", "libnccl.so"]);
    /// ```
    pub const NCCL: Wanted = Wanted {
        what: "NCCL 2",
        names: &["libnccl.so.2", "libnccl.so"],
        install: "install it with `pip install nvidia-nccl-cu13` or your system's libnccl2 package, \
                  or set CUPRIM_NCCL_DIR to the folder that holds libnccl.so.2",
        repair: "reinstall it (`pip install --force-reinstall nvidia-nccl-cu13`, or libnccl2), \
                 or set CUPRIM_NCCL_DIR to a folder that holds a working libnccl.so.2",
    };

    /// The NVIDIA driver's library. `libcuda.so` (no version) is the
    /// development link to the same file; it is asked for second.
    ///
    /// ```
    /// assert_eq!(cuprim::jit::dylib::Wanted::DRIVER.names, ["libcuda.so.1", "libcuda.so"]);
    /// ```
    pub const DRIVER: Wanted = Wanted {
        what: "the NVIDIA driver library",
        names: &["libcuda.so.1", "libcuda.so"],
        install: "install the NVIDIA driver; on a machine without an NVIDIA GPU use Device::host() \
                  (Device::default() falls back to it by itself)",
        repair: "reinstall the NVIDIA driver; on a machine without an NVIDIA GPU use Device::host() \
                 (Device::default() falls back to it by itself)",
    };
}

/// Where cuprim looks for a CUDA library that a toolkit or a pip wheel
/// installs, in order: the folder in `env_var`, the dynamic loader's search
/// path, `CUDA_PATH` and `CUDA_HOME` (`lib64`, `lib`),
/// `/usr/local/cuda/lib64`, then each of `wheel_dirs` (e.g.
/// `nvidia/cu13/lib`) in the site-packages of `VIRTUAL_ENV`,
/// `CONDA_PREFIX`, `~/.local`, pyenv's versions, `/usr`, `/usr/local` and
/// `/opt/conda`. Unset and empty variables add nothing; a folder reached
/// twice is listed once.
///
/// ```
/// use cuprim::jit::dylib::{toolkit_places, Place};
/// let places = toolkit_places("CUPRIM_EXAMPLE_DIR", &["nvidia/nccl/lib"], "pip wheel nvidia-nccl-cu13");
/// assert!(places.contains(&Place::Loader));
/// ```
pub fn toolkit_places(env_var: &str, wheel_dirs: &[&str], wheel: &str) -> Vec<Place> {
    let mut places = Vec::new();
    if let Some(dir) = env_dir(env_var) {
        places.push(Place::dir(dir, env_var));
    }
    places.push(Place::Loader);
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(root) = env_dir(var) {
            for sub in ["lib64", "lib"] {
                places.push(Place::dir(root.join(sub), var));
            }
        }
    }
    places.push(Place::dir("/usr/local/cuda/lib64", "the CUDA toolkit's default folder"));
    // pip wheels: `wheel_dirs` inside any site-packages we can name.
    let mut prefixes: Vec<PathBuf> = ["VIRTUAL_ENV", "CONDA_PREFIX"].into_iter().filter_map(env_dir).collect();
    if let Some(home) = env_dir("HOME") {
        prefixes.push(home.join(".local"));
        if let Ok(versions) = std::fs::read_dir(home.join(".pyenv/versions")) {
            let mut versions: Vec<PathBuf> = versions.flatten().map(|e| e.path()).collect();
            versions.sort();
            prefixes.extend(versions);
        }
    }
    prefixes.extend(["/usr", "/usr/local", "/opt/conda"].iter().map(PathBuf::from));
    for prefix in prefixes {
        let Ok(libs) = std::fs::read_dir(prefix.join("lib")) else {
            continue;
        };
        let mut pythons: Vec<PathBuf> = libs
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path())
            .collect();
        pythons.sort();
        for python in pythons {
            for site in ["site-packages", "dist-packages"] {
                let site = python.join(site);
                if site.is_dir() {
                    for sub in wheel_dirs {
                        places.push(Place::dir(site.join(sub), wheel));
                    }
                }
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    places.retain(|p| match p {
        Place::Dir { dir, .. } => seen.insert(dir.clone()),
        Place::Loader => true,
    });
    places
}

/// A folder named by an environment variable; unset or empty is `None`.
fn env_dir(var: &str) -> Option<PathBuf> {
    std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// Where cuprim looks for the driver library, in order: the dynamic
/// loader's search path (where a driver install puts it), then three
/// folders that drivers use but loaders often do not search: WSL 2's
/// `/usr/lib/wsl/lib`, NixOS's `/run/opengl-driver/lib` and the NVIDIA
/// container images' `/usr/local/nvidia/lib64`.
///
/// ```
/// use cuprim::jit::dylib::{driver_places, Place};
/// assert_eq!(driver_places()[0], Place::Loader);
/// ```
pub fn driver_places() -> Vec<Place> {
    vec![
        Place::Loader,
        Place::dir("/usr/lib/wsl/lib", "WSL 2's driver folder"),
        Place::dir("/run/opengl-driver/lib", "NixOS's driver folder"),
        Place::dir("/usr/local/nvidia/lib64", "NVIDIA container images' driver folder"),
    ]
}

/// Where a library was loaded from.
///
/// ```no_run
/// use cuprim::jit::dylib::{driver_places, find, Wanted};
/// let found = find(&Wanted::DRIVER, &driver_places())?;
/// println!("libcuda from {} (folder: {:?})", found.at, found.dir);
/// # Ok::<(), cuprim::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// A message-ready description: the full path, or the file name the
    /// loader resolved.
    pub at: String,
    /// The folder it was loaded from, when it was found by full path.
    pub dir: Option<PathBuf>,
    /// What was opened: the full path, or the bare file name the loader
    /// resolved. Opening it again yields the loaded copy.
    pub file: PathBuf,
}

/// Looks for `wanted` in `places`, in order, and loads the first copy found
/// (kept loaded for the life of the process). Fails with
/// [`Error::CudaUnavailable`] when no place has it, listing every place and
/// the remedy, or when the first copy found does not load, with the
/// loader's message.
///
/// ```
/// use cuprim::jit::dylib::{find, Place, Wanted};
/// let err = find(&Wanted::NVRTC, &[Place::dir("/nonexistent", "an example")]).unwrap_err();
/// assert!(err.to_string().contains("pip install nvidia-cuda-nvrtc==13.0.88"));
/// ```
pub fn find(wanted: &Wanted, places: &[Place]) -> Result<Found> {
    let mut searched = Vec::new();
    for place in places {
        match place {
            Place::Loader => {
                for name in wanted.names {
                    match open(Path::new(name)) {
                        Ok(()) => {
                            return Ok(Found {
                                at: format!("{name} (through the dynamic loader)"),
                                dir: None,
                                file: PathBuf::from(name),
                            })
                        }
                        // A name the loader could not resolve: its message
                        // starts with that name. Anything else names the
                        // file it found (or a dependency) and why it failed.
                        Err(msg) if msg.starts_with(&format!("{name}: ")) => {}
                        Err(msg) => {
                            let at = format!("{name} (found through the dynamic loader)");
                            return Err(broken(wanted, &at, &msg, searched));
                        }
                    }
                }
                searched.push(format!(
                    "{} through the dynamic loader ({}): not found",
                    wanted.names.join(", "),
                    loader_path()
                ));
            }
            Place::Dir { dir, from } => {
                for name in wanted.names {
                    let path = dir.join(name);
                    // A dangling link counts as present: it is a broken install.
                    if path.symlink_metadata().is_err() {
                        continue;
                    }
                    return match open(&path) {
                        Ok(()) => Ok(Found {
                            at: path.display().to_string(),
                            dir: Some(dir.clone()),
                            file: path.clone(),
                        }),
                        Err(msg) => Err(broken(wanted, &format!("{} ({from})", path.display()), &msg, searched)),
                    };
                }
                searched.push(format!("{} ({from}): no {}", dir.display(), wanted.names.join(" or ")));
            }
        }
    }
    Err(Error::CudaUnavailable {
        what: format!("{} ({}) was not found; {}", wanted.what, wanted.names[0], wanted.install),
        searched,
    })
}

fn broken(wanted: &Wanted, at: &str, loader_says: &str, mut searched: Vec<String>) -> Error {
    searched.push(format!("{at}: exists, could not be loaded"));
    Error::CudaUnavailable {
        what: format!(
            "{} at {at} exists but could not be loaded (the dynamic loader says: {loader_says}); {}",
            wanted.what, wanted.repair
        ),
        searched,
    }
}

/// What the loader's search covers, for messages.
fn loader_path() -> String {
    let env = match std::env::var_os("LD_LIBRARY_PATH") {
        Some(v) if !v.is_empty() => format!("LD_LIBRARY_PATH={}", v.to_string_lossy()),
        _ => "LD_LIBRARY_PATH unset".to_string(),
    };
    format!("{env}, the ldconfig cache, the system library folders")
}

/// Opens `file` (a bare file name goes through the loader's search) with
/// `RTLD_NOW | RTLD_GLOBAL` and keeps it loaded; on failure, the loader's
/// own message.
pub(crate) fn open(file: &Path) -> std::result::Result<(), String> {
    // SAFETY: opening a shared library runs its initialisers. The libraries
    // opened here (NVRTC, its builtins, the CUDA driver) have initialisers
    // with no preconditions on the caller. The handle is leaked on purpose:
    // cudarc later opens the same library by name and must find it loaded.
    match unsafe { Library::open(Some(file), RTLD_NOW | RTLD_GLOBAL) } {
        Ok(lib) => {
            std::mem::forget(lib);
            Ok(())
        }
        // libloading's own text is only "dlopen failed"; dlerror's message
        // is its source.
        Err(e) => Err(match std::error::Error::source(&e) {
            Some(inner) => inner.to_string(),
            None => e.to_string(),
        }),
    }
}
