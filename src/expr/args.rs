//! The bytes of an expression passed to a kernel by value.
//!
//! Every data member of a node in `kernels/block/expr.cuh` is 8-byte
//! aligned, so a node's bytes are its fields in order, each at the next
//! multiple of 8: the writer needs no knowledge of the node types' layout.

use crate::device::KernelArg;
use crate::error::{Error, Result};
use crate::value::Value;

/// The most bytes an expression may take as a kernel parameter (CUDA allows
/// 4 KiB for all of a kernel's parameters).
pub(crate) const MAX_BYTES: usize = 512;

/// An expression's kernel parameter: its fields, then zeros. The kernel
/// reads only its own struct's size from the front.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
pub struct ExprArgs {
    bytes: [u8; MAX_BYTES],
}

// SAFETY: the kernel's parameter is a struct of at most MAX_BYTES bytes
// whose fields are at the offsets ArgWriter wrote them to (each 8-byte
// aligned, see the module docs); the driver copies that many bytes from here.
unsafe impl KernelArg for ExprArgs {}

/// Writes an expression's fields in order.
pub struct ArgWriter {
    args: ExprArgs,
    len: usize,
    /// The device error flag's address, for bounds-checked nodes.
    pub flag: u64,
}

impl ArgWriter {
    /// An empty writer; `flag` is the error flag's address (0 when the
    /// expression checks nothing).
    pub fn new(flag: u64) -> Self {
        ArgWriter {
            args: ExprArgs { bytes: [0; MAX_BYTES] },
            len: 0,
            flag,
        }
    }

    /// One field: a value (element or tuple) or an address (`u64`).
    pub fn field<V: Value>(&mut self, v: &V) {
        let at = self.len.next_multiple_of(8);
        self.len = at + V::C_SIZE;
        if self.len <= MAX_BYTES {
            v.write_c(&mut self.args.bytes[at..]);
        }
    }

    /// The finished parameter, or an error when the expression is too big.
    pub fn finish(self) -> Result<ExprArgs> {
        if self.len > MAX_BYTES {
            return Err(Error::Unsupported(format!(
                "an input expression of {} bytes of kernel parameters (at most {MAX_BYTES}): \
                 materialise part of it with collect()",
                self.len
            )));
        }
        Ok(self.args)
    }
}
