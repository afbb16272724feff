//! Plans and launches of the data-movement family: fill / sequence /
//! broadcast (`kernels/transform/fill.cu`), unary and binary transforms,
//! adjacent difference, gather and scatter. All are grid-stride kernels over 16-byte vectors with the
//! [`elementwise`] policy.

use crate::algo::policy::{elementwise, Policy};
use crate::device::{CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::{Element, IndexElement};
use crate::error::{Error, Result};
use crate::expr::args::ExprArgs;
use crate::expr::node::Node;
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::ops::{Arith, BinaryOp, UnaryOp};
use std::marker::PhantomData;

template!(FILL, "transform/fill.cu", ["cuprim_fill", "cuprim_sequence", "cuprim_broadcast"]);
template!(
    ADJACENT,
    "transform/adjacent.cu",
    [
        "cuprim_adjacent_difference",
        "cuprim_adjacent_gather",
        "cuprim_adjacent_difference_in_place"
    ]
);
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

    /// `out[j] = out[src]` for `n` elements, the value read on the device
    /// (the caller checked `src < n`).
    pub fn broadcast(&self, dev: &CudaDevice, out: Ptr<T>, n: u64, src: u64) -> Result<()> {
        debug_assert!(src < n);
        // SAFETY: matches `cuprim_broadcast(T* out, u64 n, u64 src)`, which reads out[src]
        // (src < n) and writes the other n - 1 elements.
        let entry: Entry<(Ptr<T>, u64, u64)> = unsafe { Entry::declare("cuprim_broadcast") };
        let grid = vector_grid(self.policy, dev, n, std::mem::size_of::<T>());
        let module = dev.module(self)?;
        dev.launch(&module, entry, grid, (out, n, src))
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

impl<'a, T: Element, Op: UnaryOp<T>> Transform<'a, T, Op>
where
    Op::Output: Element,
{
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

impl<T: Element, Op: UnaryOp<T>> Specialise for Transform<'_, T, Op>
where
    Op::Output: Element,
{
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

/// `kernels/transform/adjacent.cu`: `out[0] = in[0]`, `out[i] = op(in[i], in[i - 1])`.
pub(crate) struct Adjacent<'a, T, Op> {
    pub policy: Policy,
    pub op: &'a Op,
    _t: PhantomData<T>,
}

impl<'a, T: Element, Op: BinaryOp<T>> Adjacent<'a, T, Op> {
    /// The element-wise block (256 threads); a warp tile is 32 x `unroll`
    /// vectors: the copy's four per lane for elements of 8 bytes or more
    /// (two spilled f64 and i64 on sm_90), two for 2- and 4-byte ones, one
    /// for 1-byte ones (16 results each: ptxas spilled u8 with two under
    /// these bounds), and launch bounds of 8 blocks per SM for 4-byte elements
    /// (full occupancy as the copy), 6 for the others (8 made ptxas spill
    /// for u8, f16 and f64). The grid is one warp tile per warp (see
    /// `grid`). H100, f32 Sub, one process against `copy_from`: two vectors
    /// per lane, one tile per warp 725.9 us at 2^28 (1.003x the copy),
    /// 54.6 us at 2^24 (1.038x); the copy's four per lane in a resident
    /// wave (the previous shape) 779.1 us (1.077x) and 57.0 us; four per
    /// lane, one tile per warp 732.0 / 55.0 us; one per lane 722.6 / 54.9
    /// us but 11.0 us at 2^20 (9.4 us the previous shape, 9.95 this one).
    pub fn new(arch: u32, op: &'a Op) -> Self {
        let policy = elementwise(arch);
        let unroll = match std::mem::size_of::<T>() {
            1 => 1,
            2..=4 => policy.unroll.min(2),
            _ => policy.unroll,
        };
        Adjacent {
            policy: Policy {
                unroll,
                // 4-byte elements fit the copy's 8 blocks (32 registers) without spilling.
                blocks_per_sm: if std::mem::size_of::<T>() == 4 {
                    policy.blocks_per_sm.min(8)
                } else {
                    6
                },
                ..policy
            },
            op,
            _t: PhantomData,
        }
    }

    /// Elements per warp tile (the kernel's `AD_TILE * AD_ITEMS`).
    fn tile_elems(&self) -> u64 {
        32 * self.policy.unroll as u64 * (16 / std::mem::size_of::<T>()) as u64
    }

    /// One warp per warp tile, all launched at once (the kernels' tile
    /// loops then run once per warp): a resident wave striding over the
    /// whole array wrote f32 at 1.077x a copy's time at 2^28, this grid at
    /// 1.003x (H100; see `new`).
    fn grid(&self, n: u64) -> Result<Grid> {
        let tiles = n.div_ceil(self.tile_elems()) + 1;
        let block = self.policy.block;
        let blocks = u32::try_from((32 * tiles).div_ceil(block as u64))
            .map_err(|_| Error::InvalidArgument(format!("adjacent difference of {n} elements needs more than 2^32 blocks")))?;
        Ok(Grid::new(blocks, block))
    }

    /// `n` elements from `src` to `dst` (which must not overlap it).
    pub fn run(&self, dev: &CudaDevice, src: Ptr<T>, dst: Ptr<T>, n: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        // SAFETY: matches `cuprim_adjacent_difference(const T* in, T* out, u64 n)`, which reads
        // n elements of `in` and writes n of `out`.
        let entry: Entry<(Ptr<T>, Ptr<T>, u64)> = unsafe { Entry::declare("cuprim_adjacent_difference") };
        let module = dev.module(self)?;
        let grid = self.grid(n)?;
        dev.launch(&module, entry, grid, (src, dst, n))
    }

    /// `n` elements of `data` in place: the gather pass copies each warp
    /// tile's predecessor (and the head's and tail's results) to scratch,
    /// then the second pass reads nothing another tile writes.
    pub fn run_in_place(&self, dev: &CudaDevice, data: Ptr<T>, n: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let items = (16 / std::mem::size_of::<T>()) as u64;
        // At least the kernel's tile count whatever the head: ceil((n - head) / tile) <= this.
        let tiles = n.div_ceil(self.tile_elems()) + 1;
        let mut layout = ScratchLayout::new();
        let preds = layout.uninit::<T>(tiles);
        let edges = layout.uninit::<T>(2 * items);
        // SAFETY: matches `cuprim_adjacent_gather(const T* in, u64 n, T* preds, T* edges)`:
        // reads n elements, writes one T per warp tile (at most `tiles`) and at most 2 * items edges.
        let gather: Entry<(Ptr<T>, u64, Ptr<T>, Ptr<T>)> = unsafe { Entry::declare("cuprim_adjacent_gather") };
        // SAFETY: matches `cuprim_adjacent_difference_in_place(T* data, u64 n, const T* preds,
        // const T* edges)`: reads and writes n elements of data, reads what the gather wrote.
        let apply: Entry<(Ptr<T>, u64, Ptr<T>, Ptr<T>)> = unsafe { Entry::declare("cuprim_adjacent_difference_in_place") };
        let module = dev.module(self)?;
        let gather_grid = Grid::new(self.policy.grid(tiles, dev.sm_count()), self.policy.block);
        let grid = self.grid(n)?;
        dev.with_scratch(&layout, |s| {
            dev.launch(&module, gather, gather_grid, (data, n, s.at(preds), s.at(edges)))?;
            dev.launch(&module, apply, grid, (data, n, s.at(preds), s.at(edges)))
        })
    }
}

impl<T: Element, Op: BinaryOp<T>> Specialise for Adjacent<'_, T, Op> {
    fn template(&self) -> &'static Template {
        &ADJACENT
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_BLOCK", self.policy.block as i64);
        w.constant("CUPRIM_MIN_BLOCKS", self.policy.blocks_per_sm as i64);
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
pub(crate) fn unary_spec<T: Element, Op: UnaryOp<T>>(arch: u32, op: &Op) -> KernelSpec
where
    Op::Output: Element,
{
    KernelSpec::of(&Transform::<T, Op>::new(arch, op))
}

/// The adjacent difference of `T` by `op` (copying and in place), for precompile.
pub(crate) fn adjacent_spec<T: Element, Op: BinaryOp<T>>(arch: u32, op: &Op) -> KernelSpec {
    KernelSpec::of(&Adjacent::<T, Op>::new(arch, op))
}

/// The binary transform of `T` by `op`, for precompile.
pub(crate) fn binary_spec<T: Element, Op: BinaryOp<T>>(arch: u32, op: &Op) -> KernelSpec {
    KernelSpec::of(&Transform2::<T, Op>::new(arch, op))
}

template!(
    COLLECT,
    "transform/collect.cu",
    ["cuprim_collect", "cuprim_unzip2", "cuprim_unzip3"]
);

/// `kernels/transform/collect.cu`: an input expression materialised into one
/// array (`fields == 1`) or one per tuple field (2 or 3: unzip).
pub(crate) struct Collect<'a, E> {
    pub policy: Policy,
    pub input: &'a E,
    pub fields: u8,
}

impl<'a, E: Node> Collect<'a, E> {
    pub fn new(arch: u32, input: &'a E, fields: u8) -> Self {
        Collect {
            policy: elementwise(arch),
            input,
            fields,
        }
    }

    /// Writes element `i` of the input to `out[0][i]` (the value's C
    /// layout), or field `f` of it to `out[f][i]`.
    pub fn run(&self, dev: &CudaDevice, out: [Ptr<u8>; 3]) -> Result<()> {
        let n = self.input.length() as u64;
        if n == 0 {
            return Ok(());
        }
        let widest = match E::WIDEST {
            0 => <E::Item as crate::Value>::C_SIZE.min(16),
            w => w,
        };
        let grid = vector_grid(self.policy, dev, n, widest);
        let module = dev.module(self)?;
        crate::expr::consume::launch_checked(dev, self.input, |input| match self.fields {
            // SAFETY (each): matches `cuprim_collect(const In in, u64 n, T* out)` / `cuprim_unzip2(.., F0* a,
            // F1* b)` / `cuprim_unzip3(.., F2* c)`: In is the struct ExprArgs holds; each writes n elements of
            // the input's element type (or of its fields) to its arrays, which the caller sized for n.
            1 => {
                let entry: Entry<(ExprArgs, u64, Ptr<u8>)> = unsafe { Entry::declare("cuprim_collect") };
                dev.launch(&module, entry, grid, (input, n, out[0]))
            }
            2 => {
                let entry: Entry<(ExprArgs, u64, Ptr<u8>, Ptr<u8>)> = unsafe { Entry::declare("cuprim_unzip2") };
                dev.launch(&module, entry, grid, (input, n, out[0], out[1]))
            }
            _ => {
                let entry: Entry<(ExprArgs, u64, Ptr<u8>, Ptr<u8>, Ptr<u8>)> = unsafe { Entry::declare("cuprim_unzip3") };
                dev.launch(&module, entry, grid, (input, n, out[0], out[1], out[2]))
            }
        })
    }
}

impl<E: Node> Specialise for Collect<'_, E> {
    fn template(&self) -> &'static Template {
        &COLLECT
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_UNROLL", self.policy.unroll as i64);
        crate::expr::consume::write_input(self.input, w);
    }
}
