//! The NCCL transport: one communicator per GPU of this process
//! (`ncclCommInitAll`), collectives queued on each device's own stream.
//!
//! NCCL is opened at run time like NVRTC: `CUPRIM_NCCL_DIR`, the loader's
//! path, the CUDA folders, then the `nvidia-nccl-cu13` wheel
//! (`nvidia/nccl/lib`) in the usual site-packages ([`dylib::toolkit_places`]).
//! The types are cudarc's (`cudarc::nccl::sys`); the entry points are looked
//! up here, in the copy found, because cudarc's own loader does not ask for
//! `libnccl.so.2`, the only name the wheel installs (and panics when it finds
//! nothing).

use super::transport::{Move, Transport, Word};
use crate::device::{Backend, Device};
use crate::error::{Error, Result};
use crate::jit::dylib::{self, Wanted};
use cudarc::nccl::sys::{ncclComm_t, ncclDataType_t, ncclRedOp_t};
use libloading::os::unix::{Library, RTLD_NOW};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

type Stream = *mut c_void;

/// The NCCL entry points cuprim calls.
struct Api {
    get_version: unsafe extern "C" fn(*mut c_int) -> c_int,
    error_string: unsafe extern "C" fn(c_int) -> *const c_char,
    init_all: unsafe extern "C" fn(*mut ncclComm_t, c_int, *const c_int) -> c_int,
    destroy: unsafe extern "C" fn(ncclComm_t) -> c_int,
    group_start: unsafe extern "C" fn() -> c_int,
    group_end: unsafe extern "C" fn() -> c_int,
    all_gather: unsafe extern "C" fn(*const c_void, *mut c_void, usize, ncclDataType_t, ncclComm_t, Stream) -> c_int,
    all_reduce: unsafe extern "C" fn(*const c_void, *mut c_void, usize, ncclDataType_t, ncclRedOp_t, ncclComm_t, Stream) -> c_int,
    send: unsafe extern "C" fn(*const c_void, usize, ncclDataType_t, c_int, ncclComm_t, Stream) -> c_int,
    recv: unsafe extern "C" fn(*mut c_void, usize, ncclDataType_t, c_int, ncclComm_t, Stream) -> c_int,
    /// Where it was loaded from, and `ncclGetVersion`'s code (e.g. 22703).
    at: String,
    version: i32,
}

// SAFETY: the table holds plain function pointers into a library that stays
// loaded for the life of the process.
unsafe impl Send for Api {}
// SAFETY: as above; the functions themselves are thread-safe per NCCL's docs
// for distinct communicators, and cuprim serialises use of one communicator.
unsafe impl Sync for Api {}

/// Where NCCL is looked for, in order.
///
/// ```
/// assert!(cuprim::multi::nccl_places().contains(&cuprim::jit::dylib::Place::Loader));
/// ```
pub fn nccl_places() -> Vec<dylib::Place> {
    dylib::toolkit_places(
        "CUPRIM_NCCL_DIR",
        &["nvidia/nccl/lib", "nvidia/cu13/lib"],
        "pip wheel nvidia-nccl-cu13",
    )
}

/// Finds and opens NCCL once per process; the same error every later time.
fn api() -> Result<&'static Api> {
    static API: OnceLock<std::result::Result<Api, (String, Vec<String>)>> = OnceLock::new();
    let loaded = API.get_or_init(|| {
        load().map_err(|e| match e {
            Error::NcclUnavailable { what, searched } => (what, searched),
            other => (other.to_string(), Vec::new()),
        })
    });
    match loaded {
        Ok(api) => Ok(api),
        Err((what, searched)) => Err(Error::NcclUnavailable {
            what: what.clone(),
            searched: searched.clone(),
        }),
    }
}

fn load() -> Result<Api> {
    let found = dylib::find(&Wanted::NCCL, &nccl_places()).map_err(|e| match e {
        Error::CudaUnavailable { what, searched } => Error::NcclUnavailable { what, searched },
        other => other,
    })?;
    // SAFETY: `find` has already opened this file (its initialisers ran);
    // opening it again returns the same loaded copy, kept for the process.
    let lib = unsafe { Library::open(Some(&found.file), RTLD_NOW) }.map_err(|e| Error::NcclUnavailable {
        what: format!("NCCL at {} could not be reopened: {e}", found.at),
        searched: Vec::new(),
    })?;
    let lib: &'static Library = Box::leak(Box::new(lib));
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: the symbol is NCCL's C entry point of that name, whose
            // signature (NCCL 2.x's nccl.h) the field's type spells.
            *unsafe { lib.get(concat!($name, "\0").as_bytes()) }.map_err(|e| Error::NcclUnavailable {
                what: format!("NCCL at {} has no {}: {e}; install a newer NCCL 2", found.at, $name),
                searched: Vec::new(),
            })?
        };
    }
    let mut api = Api {
        get_version: sym!("ncclGetVersion"),
        error_string: sym!("ncclGetErrorString"),
        init_all: sym!("ncclCommInitAll"),
        destroy: sym!("ncclCommDestroy"),
        group_start: sym!("ncclGroupStart"),
        group_end: sym!("ncclGroupEnd"),
        all_gather: sym!("ncclAllGather"),
        all_reduce: sym!("ncclAllReduce"),
        send: sym!("ncclSend"),
        recv: sym!("ncclRecv"),
        at: found.at.clone(),
        version: 0,
    };
    let mut version = 0;
    // SAFETY: writes one int.
    api.check(unsafe { (api.get_version)(&mut version) }, "asking NCCL's version")?;
    api.version = version;
    Ok(api)
}

impl Api {
    fn check(&self, code: c_int, during: &str) -> Result<()> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: ncclGetErrorString returns a static NUL-terminated string
        // for any code.
        let text = unsafe { CStr::from_ptr((self.error_string)(code)) }.to_string_lossy();
        Err(Error::Collective {
            during: during.to_string(),
            message: format!("NCCL error {code}: {text}"),
        })
    }

    /// Runs `calls` between ncclGroupStart and ncclGroupEnd; the group is
    /// closed even when a call fails.
    fn group(&self, during: &str, calls: impl FnOnce() -> Result<()>) -> Result<()> {
        // SAFETY: no arguments.
        self.check(unsafe { (self.group_start)() }, during)?;
        let inner = calls();
        // SAFETY: closes the group opened above.
        let end = self.check(unsafe { (self.group_end)() }, during);
        inner.and(end)
    }
}

/// NCCL's version and where it was loaded from, or why it cannot be used.
///
/// ```
/// match cuprim::multi::nccl_version() {
///     Ok((version, at)) => println!("NCCL {version} from {at}"),
///     Err(e) => println!("{e}"),
/// }
/// ```
pub fn nccl_version() -> Result<(i32, String)> {
    let api = api()?;
    Ok((api.version, api.at.clone()))
}

/// One NCCL communicator per device, in rank order.
pub(crate) struct Nccl {
    api: &'static Api,
    comms: Vec<ncclComm_t>,
    devices: Vec<Device>,
}

// SAFETY: a communicator handle may be used from any thread; cuprim issues
// each call from one thread at a time (the sharded algorithms take `&self`
// of their vector and run on the caller's thread).
unsafe impl Send for Nccl {}
// SAFETY: as above.
unsafe impl Sync for Nccl {}

impl Nccl {
    /// `ncclCommInitAll` over the devices' GPUs; each must be a different GPU.
    pub fn new(devices: &[Device]) -> Result<Nccl> {
        let mut ordinals = Vec::with_capacity(devices.len());
        for d in devices {
            match d.backend() {
                Backend::Cuda(c) => ordinals.push(c.ordinal() as c_int),
                Backend::Host => {
                    return Err(Error::InvalidArgument(
                        "an NCCL communicator needs CUDA devices; use Communicator::in_process for the host backend".into(),
                    ))
                }
            }
        }
        let mut sorted = ordinals.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::InvalidArgument(format!(
                "an NCCL communicator needs each GPU once, got ordinals {ordinals:?}; several shards on one GPU \
                 go through Communicator::in_process"
            )));
        }
        let api = api()?;
        // Multicast (NVLS) objects stay off: the lent machines do not support
        // them, and the sharded algorithms do not need them.
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            std::env::set_var("NCCL_NVLS_ENABLE", "0");
        }
        let mut comms = vec![std::ptr::null_mut(); devices.len()];
        // SAFETY: `comms` has room for one handle per ordinal.
        let code = unsafe { (api.init_all)(comms.as_mut_ptr(), ordinals.len() as c_int, ordinals.as_ptr()) };
        api.check(code, &format!("creating NCCL communicators over GPUs {ordinals:?}"))?;
        Ok(Nccl {
            api,
            comms,
            devices: devices.to_vec(),
        })
    }

    fn stream(&self, r: usize) -> Stream {
        self.devices[r]
            .cuda_stream()
            .map_or(std::ptr::null_mut(), |s| s.cu_stream() as Stream)
    }
}

impl Drop for Nccl {
    fn drop(&mut self) {
        for &comm in &self.comms {
            // SAFETY: each handle came from ncclCommInitAll and is destroyed
            // once; ncclCommDestroy waits for the communicator's queued work.
            let _ = unsafe { (self.api.destroy)(comm) };
        }
    }
}

impl Transport for Nccl {
    fn kind(&self) -> &'static str {
        "NCCL"
    }

    fn devices(&self) -> &[Device] {
        &self.devices
    }

    unsafe fn all_gather(&self, send: &[u64], recv: &[u64], bytes: usize) -> Result<()> {
        let during = "gathering the shards' values (ncclAllGather)";
        self.api.group(during, || {
            for (r, (&from, &to)) in send.iter().zip(recv).enumerate() {
                // SAFETY: the caller's contract: live buffers of these sizes.
                let code = unsafe {
                    (self.api.all_gather)(
                        from as *const c_void,
                        to as *mut c_void,
                        bytes,
                        ncclDataType_t::ncclUint8,
                        self.comms[r],
                        self.stream(r),
                    )
                };
                self.api.check(code, during)?;
            }
            Ok(())
        })
    }

    unsafe fn all_reduce_sum(&self, bufs: &[u64], count: usize, word: Word) -> Result<()> {
        let during = "adding the shards' counts (ncclAllReduce)";
        let dtype = match word {
            Word::U32 => ncclDataType_t::ncclUint32,
            Word::U64 => ncclDataType_t::ncclUint64,
        };
        self.api.group(during, || {
            for (r, &buf) in bufs.iter().enumerate() {
                // SAFETY: the caller's contract: `count` live words, in place.
                let code = unsafe {
                    (self.api.all_reduce)(
                        buf as *const c_void,
                        buf as *mut c_void,
                        count,
                        dtype,
                        ncclRedOp_t::ncclSum,
                        self.comms[r],
                        self.stream(r),
                    )
                };
                self.api.check(code, during)?;
            }
            Ok(())
        })
    }

    unsafe fn all_to_all(&self, send: &[u64], recv: &[u64], moves: &[Vec<Move>]) -> Result<()> {
        let during = "exchanging the shards' elements (ncclSend / ncclRecv)";
        self.api.group(during, || {
            for (s, row) in moves.iter().enumerate() {
                for (d, m) in row.iter().enumerate().filter(|(_, m)| m.bytes > 0) {
                    // SAFETY: the caller's contract: the move is inside live memory.
                    let code = unsafe {
                        (self.api.send)(
                            (send[s] + m.from as u64) as *const c_void,
                            m.bytes,
                            ncclDataType_t::ncclUint8,
                            d as c_int,
                            self.comms[s],
                            self.stream(s),
                        )
                    };
                    self.api.check(code, during)?;
                    // SAFETY: as above, on the receiving side.
                    let code = unsafe {
                        (self.api.recv)(
                            (recv[d] + m.to as u64) as *mut c_void,
                            m.bytes,
                            ncclDataType_t::ncclUint8,
                            s as c_int,
                            self.comms[d],
                            self.stream(d),
                        )
                    };
                    self.api.check(code, during)?;
                }
            }
            Ok(())
        })
    }
}
