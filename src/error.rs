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
        /// The missing piece, e.g. "the CUDA driver library (libcuda)".
        what: String,
        /// The places or names that were tried.
        searched: Vec<String>,
    },
    /// A CUDA driver call failed.
    Driver {
        /// What cuprim was doing when the call failed.
        during: String,
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
}

/// `Result` with cuprim's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::CudaUnavailable { what, searched } => {
                write!(f, "CUDA is not available: {what} was not found")?;
                if !searched.is_empty() {
                    write!(f, " (looked in: {})", searched.join(", "))?;
                }
                Ok(())
            }
            Error::Driver { during, source } => {
                write!(f, "CUDA driver error while {during}: {source}")
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
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Driver { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl Error {
    /// Wraps a driver error with what cuprim was doing, mapping
    /// `CUDA_ERROR_OUT_OF_MEMORY` to [`Error::OutOfMemory`] when `bytes` is known.
    pub(crate) fn driver(during: impl Into<String>, source: cudarc::driver::DriverError) -> Self {
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

/// Adds the "while doing X" context to driver results.
pub(crate) trait DriverContext<T> {
    fn during(self, what: &str) -> Result<T>;
}

impl<T> DriverContext<T> for std::result::Result<T, cudarc::driver::DriverError> {
    fn during(self, what: &str) -> Result<T> {
        self.map_err(|e| Error::driver(what, e))
    }
}
