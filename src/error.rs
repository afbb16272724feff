//! The one error type of the crate.
//!
//! Every fallible call returns [`Result<T>`](crate::Result). Bad input never
//! panics: it comes back as one of these variants, with a message that says what
//! was wrong and, where it helps, what to do about it.

use std::fmt;

/// Everything that can go wrong in cuprim.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// CUDA cannot be used here: no driver library, no GPU, or no NVRTC.
    /// `what` names the missing piece, `searched` lists where cuprim looked.
    CudaUnavailable {
        /// The whole statement: what is missing or broken, and what to do.
        what: String,
        /// The places tried, in order.
        searched: Vec<String>,
    },
    /// A CUDA driver call failed.
    Driver {
        /// What cuprim was doing when the call failed.
        during: String,
        /// The driver's own error.
        source: cudarc::driver::DriverError,
    },
    /// A kernel faulted on the GPU: an out-of-bounds or misaligned access, a
    /// trap, an illegal instruction (most often from an operator's CUDA
    /// expression). CUDA cannot recover from this inside the process: the
    /// device's context is lost, every later call on it returns this error
    /// at once, and the driver refuses new contexts in this process (seen on
    /// an H100 with driver 580: a reset primary context and a new context
    /// both fail). Restart the process; code that may fault (untrusted
    /// operators) is best run in a child process.
    KernelFault {
        /// What cuprim was doing when the fault was seen (faults surface at
        /// the next synchronisation, so possibly a later call).
        during: String,
        /// The kernels queued since the device last synchronised without
        /// error: the faulting one is among them (empty when unknown).
        kernels: Vec<&'static str>,
        /// The driver's own error.
        source: cudarc::driver::DriverError,
    },
    /// NVRTC rejected generated CUDA source. The log is NVRTC's own output.
    Compile {
        /// Name of the generated source (kernel template + specialisation).
        source_name: String,
        /// NVRTC's compile log.
        log: String,
    },
    /// An argument is outside what the call accepts.
    InvalidArgument(String),
    /// Two buffers that must have the same length do not.
    LengthMismatch {
        /// The operation that checked the lengths.
        op: &'static str,
        /// The length that was required.
        expected: usize,
        /// The length that was given.
        actual: usize,
    },
    /// An index read on the device was out of range. Nothing was read or
    /// written outside any buffer; see the operation's docs for what the
    /// output holds.
    IndexOutOfBounds {
        /// The operation that saw the bad index.
        op: &'static str,
        /// The length the indices must stay below.
        len: usize,
    },
    /// The device has no room for an allocation of this size.
    OutOfMemory {
        /// Bytes requested.
        bytes: usize,
    },
    /// Two buffers live on different devices (or one on the host backend).
    DeviceMismatch {
        /// The operation that got them.
        op: &'static str,
    },
    /// The element type, operator or architecture is not supported here.
    Unsupported(String),
    /// NCCL (for a [`Communicator`](crate::multi::Communicator) over several
    /// GPUs) could not be found or opened. Like
    /// [`CudaUnavailable`](Error::CudaUnavailable): what is missing and what
    /// to do, then the places tried.
    NcclUnavailable {
        /// The whole statement: what is missing or broken, and what to do.
        what: String,
        /// The places tried, in order.
        searched: Vec<String>,
    },
    /// An NCCL call failed.
    Collective {
        /// What cuprim was doing.
        during: String,
        /// NCCL's code and its own description.
        message: String,
    },
}

/// `Result` with cuprim's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // `what` is the whole statement: what is missing or broken, and
            // what to do about it. The places tried follow, one a line.
            Error::CudaUnavailable { what, searched } => {
                write!(f, "CUDA is not available: {what}")?;
                if !searched.is_empty() {
                    write!(f, "\nsearched, in order:")?;
                    for place in searched {
                        write!(f, "\n  {place}")?;
                    }
                }
                Ok(())
            }
            Error::Driver { during, source } => {
                write!(f, "CUDA driver error while {during}: {source}")
            }
            Error::KernelFault { during, kernels, source } => {
                write!(f, "a GPU kernel faulted ({source}), seen while {during}")?;
                if !kernels.is_empty() {
                    write!(f, "; queued since the last good synchronisation: {}", kernels.join(", "))?;
                }
                write!(
                    f,
                    ". The device's CUDA context is lost: every later call on it fails, and CUDA allows no \
                     new context in this process after a fault, so restart the process (run code that may \
                     fault in a child process to survive it)"
                )
            }
            Error::Compile { source_name, log } => {
                write!(f, "NVRTC could not compile {source_name}:\n{log}")
            }
            Error::InvalidArgument(msg) => write!(f, "invalid argument: {msg}"),
            Error::LengthMismatch { op, expected, actual } => {
                write!(f, "{op}: length mismatch: expected {expected} elements, got {actual}")
            }
            Error::IndexOutOfBounds { op, len } => write!(
                f,
                "{op}: an index was out of bounds (every index must be < {len}); \
                 out-of-range entries were skipped"
            ),
            Error::OutOfMemory { bytes } => {
                write!(
                    f,
                    "out of memory allocating {bytes} bytes (device memory on CUDA, host memory on the host backend)"
                )
            }
            Error::DeviceMismatch { op } => {
                write!(f, "{op}: the buffers live on different devices")
            }
            Error::Unsupported(msg) => write!(f, "unsupported: {msg}"),
            Error::NcclUnavailable { what, searched } => {
                write!(f, "NCCL is not available: {what}")?;
                if !searched.is_empty() {
                    write!(f, "\nsearched, in order:")?;
                    for place in searched {
                        write!(f, "\n  {place}")?;
                    }
                }
                Ok(())
            }
            Error::Collective { during, message } => write!(f, "{message}, while {during}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Driver { source, .. } | Error::KernelFault { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl Error {
    /// Wraps a driver error with what cuprim was doing, mapping
    /// `CUDA_ERROR_OUT_OF_MEMORY` to [`Error::OutOfMemory`] when `bytes` is known.
    /// A driver error that means a kernel faulted becomes [`Error::KernelFault`].
    pub(crate) fn driver(during: impl Into<String>, source: cudarc::driver::DriverError) -> Self {
        if is_fault(source) {
            return Error::KernelFault {
                during: during.into(),
                kernels: Vec::new(),
                source,
            };
        }
        Error::Driver {
            during: during.into(),
            source,
        }
    }

    pub(crate) fn alloc(bytes: usize, source: cudarc::driver::DriverError) -> Self {
        use cudarc::driver::sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY;
        if source.0 == CUDA_ERROR_OUT_OF_MEMORY {
            Error::OutOfMemory { bytes }
        } else {
            Error::driver(format!("allocating {bytes} bytes"), source)
        }
    }
}

/// True for the driver errors a faulting kernel leaves behind (sticky: the
/// context cannot be used again).
pub(crate) fn is_fault(e: cudarc::driver::DriverError) -> bool {
    use cudarc::driver::sys::cudaError_enum as E;
    matches!(
        e.0,
        E::CUDA_ERROR_ILLEGAL_ADDRESS
            | E::CUDA_ERROR_LAUNCH_FAILED
            | E::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | E::CUDA_ERROR_MISALIGNED_ADDRESS
            | E::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | E::CUDA_ERROR_INVALID_PC
            | E::CUDA_ERROR_HARDWARE_STACK_ERROR
            | E::CUDA_ERROR_ASSERT
            | E::CUDA_ERROR_LAUNCH_TIMEOUT
    )
}

/// Adds the "while doing X" context to driver results.
pub(crate) trait DriverContext<T> {
    fn during(self, what: &str) -> Result<T>;
}

impl<T> DriverContext<T> for std::result::Result<T, cudarc::driver::DriverError> {
    fn during(self, what: &str) -> Result<T> {
        self.map_err(|e| Error::driver(what, e))
    }
}
