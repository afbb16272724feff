//! Plans and launches of the data-movement family: fill / sequence
//! (`kernels/transform/fill.cu`), unary and binary transforms, gather and
//! scatter. All are grid-stride kernels over 16-byte vectors with the
//! [`elementwise`] policy.

use crate::algo::policy::{elementwise, Policy};
use crate::device::{CudaDevice, Entry, Grid, Ptr};
use crate::element::{Element, IndexElement};
use crate::error::{Error, Result};
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::ops::{Arith, BinaryOp, UnaryOp};
use std::marker::PhantomData;

template!(FILL, "transform/fill.cu", ["cuprim_fill", "cuprim_sequence"]);
template!(TRANSFORM, "transform/transform.cu", ["cuprim_transform"]);
template!(TRANSFORM2, "transform/transform2.cu", ["cuprim_transform2"]);
template!(GATHER_SCATTER, "transform/gather_scatter.cu", ["cuprim_gather", "cuprim_scatter"]);

/// Grid for `n` elements moved as vectors of `16 / width` (one thread per
/// vector plus the tail, at most one wave).
fn vector_grid(policy: Policy, dev: &CudaDevice, n: u64, width: usize) -> Grid {
    let per_vector = (16 / width.clamp(1, 16)) as u64;
    Grid::new(policy.grid(n / per_vector + 1, dev.sm_count()), policy.block)
}

/// `kernels/transform/fill.cu` for `T`.
pub(crate) struct Fill<T> {
    pub policy: Policy,
    _t: PhantomData<T>,
}

impl<T: Element> Fill<T> {
    pub fn new(arch: u32) -> Self {
        Fill {
            policy: elementwise(arch),
            _t: PhantomData,
        }
    }

    /// `out[i] = value` for `n` elements.
    pub fn fill(&self, dev: &CudaDevice, out: Ptr<T>, n: u64, value: T) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        // SAFETY: matches `cuprim_fill(T* out, T value, u64 n)`, which writes n elements.
        let entry: Entry<(Ptr<T>, T, u64)> = unsafe { Entry::declare("cuprim_fill") };
        let grid = vector_grid(self.policy, dev, n, std::mem::size_of::<T>());
        let module = dev.module(self)?;
        dev.launch(&module, entry, grid, (out, value, n))
    }

    /// `out[i] = start + T(i) * step` for `n` elements.
    pub fn sequence(&self, dev: &CudaDevice, out: Ptr<T>, n: u64, start: T, step: T) -> Result<()>
    where
        T: Arith,
    {
        if n == 0 {
            return Ok(());
        }
        // SAFETY: matches `cuprim_sequence(T* out, T start, T step, u64 n)`, which writes n elements.
        let entry: Entry<(Ptr<T>, T, T, u64)> = unsafe { Entry::declare("cuprim_sequence") };
        let grid = Grid::new(self.policy.grid(n, dev.sm_count()), self.policy.block);
        let module = dev.module(self)?;
        dev.launch(&module, entry, grid, (out, start, step, n))
    }
}

impl<T: Element> Specialise for Fill<T> {
    fn template(&self) -> &'static Template {
        &FILL
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_UNROLL", self.policy.unroll as i64);
        w.elem::<T>("T");
    }
}

/// `kernels/transform/transform.cu`: `out[i] = op(in[i])`.
pub(crate) struct Transform<'a, T, Op> {
    pub policy: Policy,
    pub op: &'a Op,
    _t: PhantomData<T>,
}

impl<'a, T: Element, Op: UnaryOp<T>> Transform<'a, T, Op> {
    pub fn new(arch: u32, op: &'a Op) -> Self {
        Transform {
            policy: elementwise(arch),
            op,
            _t: PhantomData,
        }
    }

    /// `n` elements from `src` to `dst` (which may be `src` itself: each
    /// element is read before the same thread writes it).
    pub fn run(&self, dev: &CudaDevice, src: Ptr<T>, dst: Ptr<Op::Output>, n: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        // SAFETY: matches `cuprim_transform(const T* in, U* out, u64 n)`, which reads and writes n elements.
        let entry: Entry<(Ptr<T>, Ptr<Op::Output>, u64)> = unsafe { Entry::declare("cuprim_transform") };
        let width = std::mem::size_of::<T>().max(std::mem::size_of::<Op::Output>());
        let module = dev.module(self)?;
        dev.launch(&module, entry, vector_grid(self.policy, dev, n, width), (src, dst, n))
    }
}

impl<T: Element, Op: UnaryOp<T>> Specialise for Transform<'_, T, Op> {
    fn template(&self) -> &'static Template {
        &TRANSFORM
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_UNROLL", self.policy.unroll as i64);
        w.elem::<T>("T");
        w.elem::<Op::Output>("U");
        w.unary::<T, Op>("UnaryFn", "T", "U", self.op);
    }
}

/// `kernels/transform/transform2.cu`: `out[i] = op(a[i], b[i])`.
pub(crate) struct Transform2<'a, T, Op> {
    pub policy: Policy,
    pub op: &'a Op,
    _t: PhantomData<T>,
}

impl<'a, T: Element, Op: BinaryOp<T>> Transform2<'a, T, Op> {
    pub fn new(arch: u32, op: &'a Op) -> Self {
        Transform2 {
            policy: elementwise(arch),
            op,
            _t: PhantomData,
        }
    }

    pub fn run(&self, dev: &CudaDevice, a: Ptr<T>, b: Ptr<T>, out: Ptr<T>, n: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        // SAFETY: matches `cuprim_transform2(const T* a, const T* b, T* out, u64 n)` over n elements.
        let entry: Entry<(Ptr<T>, Ptr<T>, Ptr<T>, u64)> = unsafe { Entry::declare("cuprim_transform2") };
        let grid = vector_grid(self.policy, dev, n, std::mem::size_of::<T>());
        let module = dev.module(self)?;
        dev.launch(&module, entry, grid, (a, b, out, n))
    }
}

impl<T: Element, Op: BinaryOp<T>> Specialise for Transform2<'_, T, Op> {
    fn template(&self) -> &'static Template {
        &TRANSFORM2
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_UNROLL", self.policy.unroll as i64);
        w.elem::<T>("T");
        w.binary::<T, Op>("BinaryFn", "T", self.op);
    }
}

/// `kernels/transform/gather_scatter.cu` for elements `T`, indices `I`.
pub(crate) struct GatherScatter<T, I> {
    pub policy: Policy,
    _t: PhantomData<(T, I)>,
}

impl<T: Element, I: IndexElement> GatherScatter<T, I> {
    pub fn new(arch: u32) -> Self {
        GatherScatter {
            policy: elementwise(arch),
            _t: PhantomData,
        }
    }

    /// `out[i] = src[idx[i]]` for `n` indices; an index `>= src_len` is
    /// skipped on the device and reported as [`Error::IndexOutOfBounds`].
    pub fn gather(&self, dev: &CudaDevice, src: Ptr<T>, src_len: u64, idx: Ptr<I>, out: Ptr<T>, n: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        // SAFETY: matches `cuprim_gather(const T* src, u64 src_len, const I* idx, T* out, u64 n, u32* flag)`:
        // reads src only below src_len, idx and out n elements, sets *flag on a bad index.
        let entry: Entry<(Ptr<T>, u64, Ptr<I>, Ptr<T>, u64, Ptr<u32>)> = unsafe { Entry::declare("cuprim_gather") };
        let module = dev.module(self)?;
        let width = std::mem::size_of::<T>().max(std::mem::size_of::<I>());
        let grid = vector_grid(self.policy, dev, n, width);
        let ((), bad) = dev.checked(|flag| dev.launch(&module, entry, grid, (src, src_len, idx, out, n, flag)))?;
        in_bounds("gather", !bad, src_len as usize)
    }

    /// `out[idx[i]] = src[i]` for `n` elements; an index `>= out_len` is
    /// skipped and reported.
    pub fn scatter(&self, dev: &CudaDevice, src: Ptr<T>, idx: Ptr<I>, n: u64, out: Ptr<T>, out_len: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        // SAFETY: matches `cuprim_scatter(const T* src, const I* idx, u64 n, T* out, u64 out_len, u32* flag)`:
        // reads n elements of src and idx, writes out only below out_len, sets *flag on a bad index.
        let entry: Entry<(Ptr<T>, Ptr<I>, u64, Ptr<T>, u64, Ptr<u32>)> = unsafe { Entry::declare("cuprim_scatter") };
        let module = dev.module(self)?;
        let grid = Grid::new(self.policy.grid(n, dev.sm_count()), self.policy.block);
        let ((), bad) = dev.checked(|flag| dev.launch(&module, entry, grid, (src, idx, n, out, out_len, flag)))?;
        in_bounds("scatter", !bad, out_len as usize)
    }
}

impl<T: Element, I: IndexElement> Specialise for GatherScatter<T, I> {
    fn template(&self) -> &'static Template {
        &GATHER_SCATTER
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_UNROLL", self.policy.unroll as i64);
        w.elem::<T>("T");
        w.elem::<I>("I");
    }
}

/// `Ok` when every index was in bounds, else [`Error::IndexOutOfBounds`].
pub(crate) fn in_bounds(op: &'static str, ok: bool, len: usize) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::IndexOutOfBounds { op, len })
    }
}

/// The family's kernels for `T` (fill / sequence, gather / scatter with both
/// index types), for precompile.
pub(crate) fn kernel_specs<T: Element>(arch: u32) -> Vec<KernelSpec> {
    vec![
        KernelSpec::of(&Fill::<T>::new(arch)),
        KernelSpec::of(&GatherScatter::<T, u32>::new(arch)),
        KernelSpec::of(&GatherScatter::<T, u64>::new(arch)),
    ]
}

/// The unary transform of `T` by `op`, for precompile.
pub(crate) fn unary_spec<T: Element, Op: UnaryOp<T>>(arch: u32, op: &Op) -> KernelSpec {
    KernelSpec::of(&Transform::<T, Op>::new(arch, op))
}

/// The binary transform of `T` by `op`, for precompile.
pub(crate) fn binary_spec<T: Element, Op: BinaryOp<T>>(arch: u32, op: &Op) -> KernelSpec {
    KernelSpec::of(&Transform2::<T, Op>::new(arch, op))
}
