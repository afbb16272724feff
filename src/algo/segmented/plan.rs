//! Plans and launches of the segmented family: the one-pass segmented
//! reduction of `kernels/segmented/reduce.cu`, behind segmented_reduce and
//! segmented_min_element / segmented_max_element.

use crate::algo::lookback::{Lookback, LOOKBACK};
use crate::algo::reduce::plan::arg_identity;
use crate::algo::scan::plan::TilePolicy;
use crate::device::{Counter, CudaDevice, Entry, Grid, Ptr, Scratch, ScratchLayout};
use crate::element::{Element, IndexElement};
use crate::error::{Error, Result};
use crate::expr::args::{ArgWriter, ExprArgs};
use crate::expr::node::Node;
use crate::expr::Leaf;
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::ops::Monoid;
use std::marker::PhantomData;

template!(
    SEGMENTED_REDUCE,
    "segmented/reduce.cu",
    ["cuprim_segmented_reduce", "cuprim_segmented_reduce_warp"],
    headers: [LOOKBACK]
);

/// Items per lane of the warp-tile kernel: the look-back kernel's, doubled
/// for 4-byte elements (warp tiles of 2048: half the searches and
/// cross-tile arrivals per element; H100, f32 at 2^28, one call: the
/// mixture 564 us against 642 with 32 items, segments of 1024 396 against
/// 395; with the coalesced loads of i22-segsum3, one call: 484 / 360 us
/// against 512 / 360 with 32 items at 768 threads per SM). Other sizes not
/// measured on a GPU.
fn warp_items(policy: TilePolicy, elem_bytes: usize) -> u32 {
    if elem_bytes == 4 {
        2 * policy.items
    } else {
        policy.items
    }
}

/// Resident threads per SM the warp-tile kernel is compiled for. 4-byte
/// elements: six 128-thread blocks (their tiles staged in 32 KiB of shared
/// memory each; at most 80 registers, 55 used by the f32 sum on sm_90, none
/// spilled; H200, one call, against four blocks of 127 registers holding
/// the tile: f32 segments of 65536 at 2^27 141 us against 152, the arg-min
/// in segments of 1024 at 2^28 516 against 614, the mixture at 2^28 346
/// against 407). 2-byte elements: three 256-thread blocks' worth (f16 sums
/// spilled 8 bytes on sm_80 at 64 registers when the tile lived in
/// registers). Others: the look-back kernel's. Other shapes not measured on
/// a GPU.
fn warp_threads_per_sm(policy: TilePolicy, elem_bytes: usize) -> u32 {
    match elem_bytes {
        4 => 768,
        2 => 768,
        _ => policy.min_blocks * policy.block,
    }
}

/// Threads per block of the warp-tile kernel (its warps are independent).
/// H100, f32 at 2^28, one call (segments of 1024 / the mixture): 128
/// threads 396 / 564 us, 256 threads 401 / 579 (with 32 items: 64, 128, 256
/// threads 390 / 653, 395 / 642, 392 / 644).
const WARP_BLOCK: u32 = 128;

/// Inputs whose segments average at least this many elements take the
/// look-back kernel: the warp-tile kernel closes a segment crossing m warp
/// tiles with one warp folding m parts, about 2 ns a part (f32), after the
/// segment's last tile, which for a few huge segments is a serial tail the
/// look-back avoids. But the look-back kernel streams at about half the
/// warp kernel's speed, so the tail costs as much only for a segment of
/// about 2^27 elements: f32 sums at 2^27 in segments of 2^16 / 2^20 / one
/// segment 152 / 145 / 293 us with the warp kernel against 270 / 288 / 304
/// (at 2^24: 37 / 37 / 51 against 52 / 54 / 58; H200, one call,
/// benchmarks/runs/h200-dists-881fab9).
const WARP_KERNEL_MAX_AVERAGE: u64 = 1 << 27;

/// Tiles over the elements: 256 threads reading 16-byte vectors. 4-byte
/// elements: eight vectors per thread (32 items, 72-74 registers), three
/// blocks per SM (H100, f32 at 2^28, one process: segments of 1024 457 us
/// against 517 with four vectors and four blocks, the mixture 892 against
/// 975; 24 items, four blocks: 520 / 780). Others: four vectors (two for
/// 2-byte elements, one for 1-byte ones: 32 i8 items spilled on sm_90),
/// four blocks per SM, not measured on a GPU.
pub(crate) fn segmented_policy(_arch: u32, elem_bytes: usize) -> TilePolicy {
    let per_vector = (16 / elem_bytes.max(1)).max(1) as u32;
    if elem_bytes == 4 {
        return TilePolicy {
            block: 256,
            items: 8 * per_vector,
            min_blocks: 3,
        };
    }
    TilePolicy {
        block: 256,
        items: per_vector * elem_bytes.clamp(1, 4) as u32,
        min_blocks: 4,
    }
}

/// The tile shapes of a specialisation, both kernels', from one key (the
/// bytes per element): what the specialisation's constants say and what
/// the launches size their grids by.
#[derive(Clone, Copy)]
pub(crate) struct Shape {
    /// The block-tile kernel's tiles.
    policy: TilePolicy,
    /// Items per lane of the warp-tile kernel.
    warp_items: u32,
    /// Resident blocks per SM the warp-tile kernel is compiled for.
    warp_min_blocks: u32,
}

impl Shape {
    /// The shape for elements of `elem_bytes` bytes.
    pub(crate) fn of(arch: u32, elem_bytes: usize) -> Shape {
        let policy = segmented_policy(arch, elem_bytes);
        Shape {
            policy,
            warp_items: warp_items(policy, elem_bytes),
            warp_min_blocks: (warp_threads_per_sm(policy, elem_bytes) / WARP_BLOCK).max(1),
        }
    }

    /// Elements per warp tile.
    fn warp_tile(&self) -> u64 {
        32 * self.warp_items as u64
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        self.policy.write(w);
        w.constant("CUPRIM_WARP_ITEMS", self.warp_items as i64);
        w.constant("CUPRIM_WARP_MIN_BLOCKS", self.warp_min_blocks as i64);
    }
}

/// What a specialisation writes per segment (`CUPRIM_ARG`,
/// `CUPRIM_FROM_START` in the kernel).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Emit {
    /// The fold.
    Fold,
    /// An arg-extreme: its value, and its index within the segment.
    Arg,
    /// The fold, a position in the input, made relative to the segment's
    /// start (the identity, no position, kept).
    FromStart,
}

/// Windows of 32 predecessors the deterministic look-back stages at a time:
/// a tile holding a boundary publishes its prefix at once, so look-backs are
/// short except inside one long segment. Not yet measured on a GPU.
const LOOKBACK_WINDOWS: i64 = 4;

/// Segments per block of the empty-segment share: a grid has at least
/// `segments / SEGMENTS_PER_TILE` blocks, so a million empty segments next
/// to a small input are still spread over many SMs. Not yet measured on a GPU.
const SEGMENTS_PER_TILE: u64 = 2048;

/// A specialisation of `kernels/segmented/reduce.cu`.
pub(crate) trait SegmentedKernel: Specialise {
    /// The element.
    type T: Element;
    /// The offset index.
    type I: IndexElement;
    /// The result's element (`O` in the kernel).
    type Out: Element;
    /// Bytes and alignment of the accumulator.
    fn acc_layout(&self) -> (usize, usize);
    /// The tile shapes.
    fn shape(&self) -> Shape;
    /// The input expression (element `T`).
    type In: Node<Item = Self::T>;
    /// The input.
    fn input(&self) -> &Self::In;
}

/// The constants and typedefs every specialisation starts with.
pub(crate) fn write_common<E: Node, I: IndexElement, W: SpecWriter>(w: &mut W, input: &E, shape: Shape, emit: Emit) {
    shape.write(w);
    // Always deterministic: the brief of this family is the same bits every run.
    w.constant("CUPRIM_DETERMINISTIC", 1);
    w.constant("CUPRIM_LOOKBACK_WINDOWS", LOOKBACK_WINDOWS);
    w.constant("CUPRIM_ARG", (emit == Emit::Arg) as i64);
    w.constant("CUPRIM_FROM_START", (emit == Emit::FromStart) as i64);
    w.constant("CUPRIM_WARP_BLOCK", WARP_BLOCK as i64);
    crate::expr::consume::write_input(input, w);
    w.elem::<I>("I");
}

/// `op` folded over each segment.
pub(crate) struct SegReduce<'a, E, I, Op> {
    pub arch: u32,
    pub input: &'a E,
    pub op: &'a Op,
    pub _t: PhantomData<I>,
}

impl<E: Node, I: IndexElement, Op: Monoid<E::Item>> Specialise for SegReduce<'_, E, I, Op>
where
    E::Item: Element,
{
    fn template(&self) -> &'static Template {
        &SEGMENTED_REDUCE
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_common::<E, I, W>(w, self.input, self.shape(), Emit::Fold);
        w.typedef("A", "T");
        w.typedef("O", "T");
        w.text("struct MapFn { __device__ __forceinline__ static A apply(T x, u64 i) { (void)i; return x; } };");
        w.monoid::<E::Item, Op>("ReduceOp", "A", self.op);
    }
}

impl<E: Node, I: IndexElement, Op: Monoid<E::Item>> SegmentedKernel for SegReduce<'_, E, I, Op>
where
    E::Item: Element,
{
    type T = E::Item;
    type I = I;
    type Out = E::Item;
    type In = E;
    fn acc_layout(&self) -> (usize, usize) {
        (std::mem::size_of::<E::Item>(), std::mem::align_of::<E::Item>())
    }
    fn shape(&self) -> Shape {
        Shape::of(self.arch, std::mem::size_of::<E::Item>())
    }
    fn input(&self) -> &E {
        self.input
    }
}

/// (value, index) of each segment's least or greatest element, in the order
/// of `min_element` / `max_element` (reduce/plan.rs: `Extreme`).
pub(crate) struct SegArg<'a, E, I> {
    pub arch: u32,
    pub input: &'a E,
    pub greatest: bool,
    pub _t: PhantomData<I>,
}

impl<E: Node, I: IndexElement> Specialise for SegArg<'_, E, I>
where
    E::Item: Element,
{
    fn template(&self) -> &'static Template {
        &SEGMENTED_REDUCE
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_common::<E, I, W>(w, self.input, self.shape(), Emit::Arg);
        w.typedef("A", "cuprim_kv<T>");
        w.typedef("O", "T");
        w.text("struct MapFn { __device__ __forceinline__ static A apply(T x, u64 i) { return A{x, i}; } };");
        w.piece(self.greatest, |&greatest| {
            format!(
                "struct ReduceOp {{ __device__ __forceinline__ static A apply(A a, A b) {{ \
                 return cuprim_arg_wins<{greatest}>(a.v, a.i, b.v, b.i) ? b : a; }} \
                 __device__ __forceinline__ static A identity() {{ return A{{{}, ~0ull}}; }} }};",
                arg_identity::<E::Item>(greatest).cuda_literal(),
            )
        });
    }
}

impl<E: Node, I: IndexElement> SegmentedKernel for SegArg<'_, E, I>
where
    E::Item: Element,
{
    type T = E::Item;
    type I = I;
    type Out = E::Item;
    type In = E;
    fn input(&self) -> &E {
        self.input
    }
    fn acc_layout(&self) -> (usize, usize) {
        // cuprim_kv<T> { T v; u64 i; }
        (16, 8)
    }
    fn shape(&self) -> Shape {
        Shape::of(self.arch, std::mem::size_of::<E::Item>())
    }
}

/// The kernel: `cuprim_segmented_reduce(const In in, u64 n, const I*
/// offsets, u64 segments, O* out, I* out_idx, u32* error_flag, u32* status,
/// SegPair* aggregates, SegPair* prefixes, u32* tile_counter, u32 num_tiles,
/// u64 per, double scale)`.
fn entry<O: Element, I: IndexElement>() -> Entry<(
    ExprArgs,
    u64,
    Ptr<I>,
    u64,
    Ptr<O>,
    Ptr<I>,
    Ptr<u32>,
    Ptr<u32>,
    Ptr<u8>,
    Ptr<u8>,
    Ptr<u32>,
    u32,
    u64,
    f64,
)> {
    // SAFETY: matches `cuprim_segmented_reduce` in kernels/segmented/reduce.cu,
    // In the struct whose fields the ExprArgs hold:
    // it reads n elements of `in` and segments + 1 offsets, writes below
    // `segments` in out (and out_idx, arg-extremes only; else unused), sets
    // *error_flag on bad offsets, uses look-back arrays of num_tiles pairs and
    // leaves the tile counter at zero. Every access stays in bounds whatever
    // `per` and `scale` are; `per * num_tiles >= segments` makes every
    // empty segment written and every pair checked.
    unsafe { Entry::declare("cuprim_segmented_reduce") }
}

/// The warp-tile kernel: `cuprim_segmented_reduce_warp(const In in, u64 n,
/// const I* offsets, u64 segments, O* out, I* out_idx, u32* error_flag,
/// SegPair* parts_tail, SegPair* parts_head, u32* counters, u64
/// num_wtiles, u64 per, double scale)`.
#[allow(clippy::type_complexity)]
fn warp_entry<O: Element, I: IndexElement>() -> Entry<(
    ExprArgs,
    u64,
    Ptr<I>,
    u64,
    Ptr<O>,
    Ptr<I>,
    Ptr<u32>,
    Ptr<u8>,
    Ptr<u8>,
    Ptr<u32>,
    u64,
    u64,
    f64,
)> {
    // SAFETY: matches `cuprim_segmented_reduce_warp` in
    // kernels/segmented/reduce.cu, In the struct whose fields the ExprArgs
    // hold: it reads n elements of `in` and segments
    // + 1 offsets, writes below `segments` in out (and out_idx, arg-extremes
    // only), sets *error_flag on bad offsets, and reads and writes parts and
    // counters below num_wtiles (checked against the offsets it reads, bad
    // ones included); the counters start at zero (`with_zeroed_words`) and the kernel
    // clears each count it completes.
    // `per * blocks >= segments` makes every empty segment written and every
    // pair checked.
    unsafe { Entry::declare("cuprim_segmented_reduce_warp") }
}

/// Reduces each of the `segments` segments of the plan's input, given by
/// `segments + 1` offsets (`offsets = (address, segments)`), into `out`
/// (and `out_idx` for the arg-extremes). Returns false if the kernel saw
/// bad offsets; an input that permutes with a bad index is an
/// [`Error::IndexOutOfBounds`].
pub(crate) fn run<K: SegmentedKernel>(
    k: &K,
    dev: &CudaDevice,
    (offsets, segments): (Ptr<K::I>, usize),
    out: Ptr<K::Out>,
    out_idx: Ptr<K::I>,
) -> Result<bool> {
    let policy = k.shape().policy;
    let len = k.input().length();
    let (n, segments) = (len as u64, segments as u64);
    if n < WARP_KERNEL_MAX_AVERAGE.saturating_mul(segments) {
        return run_warp(k, dev, n, (offsets, segments), out, out_idx);
    }
    let tiles = n.div_ceil(policy.tile()).max(segments.div_ceil(SEGMENTS_PER_TILE)).max(1);
    let tiles = u32::try_from(tiles)
        .map_err(|_| Error::InvalidArgument(format!("segmented reduction of {len} elements needs more than 2^32 tiles")))?;
    // Each tile's share of the segments, and where a key falls among the
    // offsets if they grow evenly (the tile searches start there).
    let per = segments.div_ceil(tiles as u64);
    let scale = if n == 0 { 0.0 } else { segments as f64 / n as f64 };
    let module = dev.module(k)?;
    let (acc_bytes, acc_align) = k.acc_layout();
    // SegPair { A v; u32 head; }
    let pair_bytes = (acc_bytes + 4).next_multiple_of(acc_align.max(4));
    let mut layout = ScratchLayout::new();
    let lookback = Lookback::place(&mut layout, tiles as u64, pair_bytes);
    let counter = dev.counter(Counter::ScanTile);
    let word = flagged(k, dev, (offsets, segments), layout, |input, flag, s| {
        let (status, aggregates, prefixes) = lookback.args(&s);
        let args = (
            input, n, offsets, segments, out, out_idx, flag, status, aggregates, prefixes, counter, tiles, per, scale,
        );
        dev.launch(&module, entry::<K::Out, K::I>(), Grid::new(tiles, policy.block), args)
    })?;
    permute_error(k, word)
}

/// Runs `launch` in scratch laid out as `layout`, with the input's kernel
/// argument and the flag word its kernel stores to (1 a permuted input's bad
/// index, 2 bad offsets), waits and returns the word. Offsets a kernel found
/// valid before, and not written since, need no wait when the input does not
/// permute: the kernel then gets a scratch word nobody reads (and stores
/// nothing: the offsets are valid) and the word is 0. Offsets found valid
/// are remembered for the next call.
fn flagged<K: SegmentedKernel>(
    k: &K,
    dev: &CudaDevice,
    (offsets, segments): (Ptr<K::I>, u64),
    mut layout: ScratchLayout,
    launch: impl FnOnce(ExprArgs, Ptr<u32>, Scratch) -> Result<()>,
) -> Result<u32> {
    let spare = layout.uninit::<u32>(1);
    let queue = |flag: Option<Ptr<u32>>| {
        let mut a = ArgWriter::new(flag.map_or(0, Ptr::raw));
        k.input().write_args(&mut a);
        let input = a.finish()?;
        dev.with_scratch(&layout, |s| launch(input, flag.unwrap_or(s.at(spare)), s))
    };
    let n = k.input().length() as u64;
    let bytes = (segments + 1) * std::mem::size_of::<K::I>() as u64;
    let known = dev.checked_offsets();
    if !<K::In as Node>::CHECKED && known.known_valid(offsets.raw(), bytes, n) {
        queue(None)?;
        return Ok(0);
    }
    let ((), word) = dev.checked_store_word(|flag| queue(Some(flag)))?;
    // (Both faults store to one word: only a clean word vouches for the offsets.)
    if word == 0 {
        known.remember(offsets.raw(), bytes, n);
    }
    Ok(word)
}

/// [`run`] on the warp-tile kernel.
fn run_warp<K: SegmentedKernel>(
    k: &K,
    dev: &CudaDevice,
    n: u64,
    (offsets, segments): (Ptr<K::I>, u64),
    out: Ptr<K::Out>,
    out_idx: Ptr<K::I>,
) -> Result<bool> {
    let warps = (WARP_BLOCK / 32) as u64;
    let wtiles = n.div_ceil(k.shape().warp_tile()).max(1);
    let blocks = wtiles.div_ceil(warps).max(segments.div_ceil(SEGMENTS_PER_TILE)).max(1);
    let blocks = u32::try_from(blocks)
        .map_err(|_| Error::InvalidArgument(format!("segmented reduction of {n} elements needs more than 2^32 blocks")))?;
    let per = segments.div_ceil(blocks as u64);
    let scale = if n == 0 { 0.0 } else { segments as f64 / n as f64 };
    let module = dev.module(k)?;
    let (acc_bytes, acc_align) = k.acc_layout();
    // SegPair { A v; u32 head; }
    let pair_bytes = (acc_bytes + 4).next_multiple_of(acc_align.max(4)) as u64;
    let mut layout = ScratchLayout::new();
    let tails = layout.uninit_aligned::<u8>(wtiles * pair_bytes);
    let heads = layout.uninit_aligned::<u8>(wtiles * pair_bytes);
    // The counters are the device's kept zeroed words (no memset per call): the arrival that
    // completes a count clears it, so valid offsets leave them zero; after bad offsets (or a
    // bad permuted index: a nonzero flag word) they are cleared again.
    let word = dev.with_zeroed_words(wtiles, |counters| {
        let word = flagged(k, dev, (offsets, segments), layout, |input, flag, s| {
            let args = (
                input,
                n,
                offsets,
                segments,
                out,
                out_idx,
                flag,
                s.at(tails),
                s.at(heads),
                counters,
                wtiles,
                per,
                scale,
            );
            dev.launch(&module, warp_entry::<K::Out, K::I>(), Grid::new(blocks, WARP_BLOCK), args)
        })?;
        Ok((word, word != 0))
    })?;
    permute_error(k, word)
}

/// The call's result from its flag word: a bad permuted index is an error,
/// bad offsets a `false`.
fn permute_error<K: SegmentedKernel>(k: &K, word: u32) -> Result<bool> {
    if word & 1 != 0 {
        return Err(Error::IndexOutOfBounds {
            op: "permute",
            len: k.input().first_bound().unwrap_or(0),
        });
    }
    Ok(word == 0)
}

/// segmented_reduce of `T` by `op` with both offset types, and the
/// arg-extremes of `T`, for precompile.
pub(crate) fn kernel_specs<T: Element, Op: Monoid<T>>(arch: u32, op: &Op) -> Vec<KernelSpec> {
    kernel_specs_of(arch, &Leaf::<T>::type_only(), op)
}

/// The same kernels over an input expression, for precompile.
pub(crate) fn kernel_specs_of<E: Node, Op: Monoid<E::Item>>(arch: u32, input: &E, op: &Op) -> Vec<KernelSpec>
where
    E::Item: Element,
{
    let mut specs = vec![
        KernelSpec::of(&SegReduce::<_, u32, Op> {
            arch,
            input,
            op,
            _t: PhantomData,
        }),
        KernelSpec::of(&SegReduce::<_, u64, Op> {
            arch,
            input,
            op,
            _t: PhantomData,
        }),
    ];
    for greatest in [false, true] {
        specs.push(KernelSpec::of(&SegArg::<_, u32> {
            arch,
            input,
            greatest,
            _t: PhantomData,
        }));
        specs.push(KernelSpec::of(&SegArg::<_, u64> {
            arch,
            input,
            greatest,
            _t: PhantomData,
        }));
    }
    specs
}
