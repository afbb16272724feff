//! The on-disk module cache and the cache policy.
//!
//! Entries live in `CUPRIM_CACHE_DIR`, else `$XDG_CACHE_HOME/cuprim`, else
//! `~/.cache/cuprim`, one file per compiled kernel, named by a SHA-256 of
//! everything that determines the binary: the full source, the compile
//! options, the target architecture, NVRTC's version and cuprim's version.
//! A file is a small header (magic, kind, length, SHA-256 of the payload)
//! and the payload; anything that does not check out is treated as a miss,
//! recompiled and overwritten. Writes go to a unique temporary file in the
//! same folder and are renamed into place, so concurrent processes never see
//! a half-written entry.

use super::nvrtc::Binary;
use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Which caches are used (`CUPRIM_CACHE=off|memory|disk`, default `disk`).
///
/// ```
/// use cuprim::jit::CacheMode;
/// // `disk` unless CUPRIM_CACHE says otherwise; a value that is not one of
/// // off, memory or disk is an error, not the default.
/// let mode = CacheMode::from_env()?;
/// println!("kernel caches: {mode:?}");
/// # Ok::<(), cuprim::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMode {
    /// Compile on every call; keep nothing.
    Off,
    /// Keep loaded modules in memory for the life of the process.
    Memory,
    /// Memory, and compiled binaries on disk across processes.
    Disk,
}

impl CacheMode {
    /// The mode `CUPRIM_CACHE` selects: `off`, `memory` or `disk`; unset or
    /// empty means `disk`. Any other value (a typo such as `dsik`, another
    /// case, a value that is not UTF-8) is [`Error::InvalidArgument`] naming
    /// the variable, the value and the accepted values. `Device::cuda` (and
    /// the other CUDA constructors) and `Device::default` report it.
    ///
    /// ```
    /// # use cuprim::jit::CacheMode;
    /// match CacheMode::from_env() {
    ///     Ok(mode) => println!("{mode:?}"),
    ///     Err(e) => eprintln!("error: {e}"), // e.g. CUPRIM_CACHE="dsik" is not a cache mode ...
    /// }
    /// ```
    pub fn from_env() -> Result<Self> {
        let value = match std::env::var("CUPRIM_CACHE") {
            Ok(v) => v,
            Err(std::env::VarError::NotPresent) => return Ok(CacheMode::Disk),
            Err(std::env::VarError::NotUnicode(v)) => return Err(bad_mode(&format!("{v:?}"))),
        };
        match value.as_str() {
            "" | "disk" => Ok(CacheMode::Disk),
            "memory" => Ok(CacheMode::Memory),
            "off" => Ok(CacheMode::Off),
            other => Err(bad_mode(&format!("{other:?}"))),
        }
    }
}

fn bad_mode(value: &str) -> Error {
    Error::InvalidArgument(format!(
        "CUPRIM_CACHE={value} is not a cache mode; expected off, memory or disk (unset means disk)"
    ))
}

/// The cache folder this process uses, if one can be named: a non-empty
/// `CUPRIM_CACHE_DIR`, else `$XDG_CACHE_HOME/cuprim` (when that is an
/// absolute path, as the XDG spec asks), else `$HOME/.cache/cuprim`.
///
/// ```
/// if let Some(dir) = cuprim::jit::cache::default_dir() {
///     println!("compiled kernels are kept in {}", dir.display());
/// }
/// ```
pub fn default_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(d) = var("CUPRIM_CACHE_DIR") {
        return Some(d);
    }
    if let Some(d) = var("XDG_CACHE_HOME").filter(|d| d.is_absolute()) {
        return Some(d.join("cuprim"));
    }
    var("HOME").map(|h| h.join(".cache").join("cuprim"))
}

/// Counters of what the caches did in this process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Calls served by the in-memory cache.
    pub memory_hits: u64,
    /// Modules read from the disk cache.
    pub disk_hits: u64,
    /// Disk entries found corrupt and recompiled.
    pub disk_corrupt: u64,
    /// NVRTC compiles.
    pub compiles: u64,
}

pub(crate) static MEMORY_HITS: AtomicU64 = AtomicU64::new(0);
pub(crate) static DISK_HITS: AtomicU64 = AtomicU64::new(0);
pub(crate) static DISK_CORRUPT: AtomicU64 = AtomicU64::new(0);
pub(crate) static COMPILES: AtomicU64 = AtomicU64::new(0);

/// A snapshot of the counters.
pub fn stats() -> CacheStats {
    CacheStats {
        memory_hits: MEMORY_HITS.load(Ordering::Relaxed),
        disk_hits: DISK_HITS.load(Ordering::Relaxed),
        disk_corrupt: DISK_CORRUPT.load(Ordering::Relaxed),
        compiles: COMPILES.load(Ordering::Relaxed),
    }
}

const MAGIC: &[u8; 8] = b"CUPRIM1\n";
const HEADER: usize = 8 + 1 + 8 + 32;

/// A cache folder.
#[derive(Clone, Debug)]
pub struct DiskCache {
    dir: PathBuf,
}

/// What a lookup found.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// A valid entry.
    Hit(Binary),
    /// No entry.
    Miss,
    /// An entry that failed its checks (truncated, wrong magic, bad hash).
    Corrupt,
}

impl DiskCache {
    /// A cache in `dir` (created on first store).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        DiskCache { dir: dir.into() }
    }

    /// The cache at [`default_dir`], if there is one.
    pub fn default_location() -> Option<Self> {
        default_dir().map(DiskCache::new)
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key for one compile: SHA-256 over everything that shapes the binary.
    pub fn key(source: &str, options: &[String], arch: u32, nvrtc: (i32, i32)) -> String {
        let mut h = Sha256::new();
        h.update(source.as_bytes());
        for o in options {
            h.update([0u8]);
            h.update(o.as_bytes());
        }
        h.update(format!("\0arch={arch}\0nvrtc={}.{}\0cuprim={}", nvrtc.0, nvrtc.1, env!("CARGO_PKG_VERSION")).as_bytes());
        hex(&h.finalize())
    }

    /// The file an entry lives in.
    pub fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.bin"))
    }

    /// Reads and checks an entry.
    pub fn load(&self, key: &str) -> Lookup {
        let bytes = match std::fs::read(self.path(key)) {
            Ok(b) => b,
            Err(_) => return Lookup::Miss,
        };
        if bytes.len() < HEADER || &bytes[..8] != MAGIC {
            return Lookup::Corrupt;
        }
        let kind = bytes[8];
        let mut len = [0u8; 8];
        len.copy_from_slice(&bytes[9..17]);
        let len = u64::from_le_bytes(len) as usize;
        let payload = &bytes[HEADER..];
        if payload.len() != len || Sha256::digest(payload).as_slice() != &bytes[17..49] {
            return Lookup::Corrupt;
        }
        match kind {
            b'C' => Lookup::Hit(Binary::Cubin(payload.to_vec())),
            b'P' => Lookup::Hit(Binary::Ptx(payload.to_vec())),
            _ => Lookup::Corrupt,
        }
    }

    /// Writes an entry atomically (unique temp file, then rename). Failures
    /// are ignored: the cache is an optimisation, never a requirement.
    pub fn store(&self, key: &str, binary: &Binary) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let payload = binary.bytes();
        let mut out = Vec::with_capacity(HEADER + payload.len());
        out.extend_from_slice(MAGIC);
        out.push(match binary {
            Binary::Cubin(_) => b'C',
            Binary::Ptx(_) => b'P',
        });
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&Sha256::digest(payload));
        out.extend_from_slice(payload);
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let tmp = self
            .dir
            .join(format!(".{key}.{}.{}.tmp", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed)));
        std::fs::write(&tmp, &out)?;
        let renamed = std::fs::rename(&tmp, self.path(key));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        renamed
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
