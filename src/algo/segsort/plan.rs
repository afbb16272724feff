//! Plans and launches of `kernels/segsort/segsort.cu`: the size classes
//! (tile shapes), the split of the segments into them, the one-block-per-
//! segment kernels, and the device-wide sort of the longest segments; of
//! `kernels/segsort/segsort_bitonic.cu`, which takes the segments of up
//! to 1024 keys of a sort of keys alone (at most 4 bytes, every bit); and
//! of `kernels/segsort/segsort_survey.cu`, the survey of the offsets that
//! every sort runs first (its own module: a sort whose segments all go to
//! the bitonic kernel compiles no radix module).

use super::SegArgs;
use crate::algo::sort::plan::RADIX_SORT_COMMON;
use crate::algo::sort::{sort_device_from, sort_device_with};
use crate::algo::transform::plan::Collect;
use crate::algo::HOST_MIN_SPLIT;
use crate::device::{CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::{Element, IndexElement};
use crate::error::{Error, Result};
use crate::expr::args::ExprArgs;
use crate::expr::node::Node;
use crate::expr::Leaf;
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use rayon::prelude::*;
use std::marker::PhantomData;
use std::mem::size_of;

template!(
    SEGSORT,
    "segsort/segsort.cu",
    ["cuprim_segsort_tile", "cuprim_segsort_large"],
    headers: [RADIX_SORT_COMMON]
);

// The same file specialised on an input expression (CUPRIM_SEGSORT_X):
// its kernels are the `_x` forms, the buffer ones are not compiled.
template!(
    SEGSORT_X,
    "segsort/segsort.cu",
    ["cuprim_segsort_tile_x", "cuprim_segsort_large_x"],
    headers: [RADIX_SORT_COMMON]
);

// Keys alone of at most 4 bytes, segments of at most 1024 keys: a warp per
// segment, a bitonic network in registers.
template!(
    SEGSORT_BITONIC,
    "segsort/segsort_bitonic.cu",
    ["cuprim_segsort_bitonic"],
    headers: [RADIX_SORT_COMMON]
);

// The survey of the offsets (the longest segment, bad pairs): offsets `I`
// alone, no radix headers.
template!(SEGSORT_SURVEY, "segsort/segsort_survey.cu", ["cuprim_segsort_survey"]);

/// One tile shape of the segmented sort: `block` threads (32, 64, 128 or
/// 256) of `items` keys each; ptxas is asked for `min_blocks` resident
/// blocks per SM; the tile kernel's digits are at most `bits` (8 or 9)
/// wide, and its warps find equal digits with `__match_any_sync` when
/// `match_any` (else one ballot per digit bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Shape {
    pub block: u32,
    pub items: u32,
    pub min_blocks: u32,
    pub bits: u32,
    pub match_any: bool,
}

impl Shape {
    /// Keys per tile: the longest segment one block sorts in shared memory.
    pub fn tile(&self) -> u64 {
        self.block as u64 * self.items as u64
    }
}

/// Size classes, shortest first: a segment goes to the first whose tile
/// holds it; longer segments than the last tile go to the global-memory
/// kernel (in the last class's module) or the device-wide sort. At most
/// 41 KiB of static shared memory each (8-byte keys and values in the
/// last: 32 KiB of tile, 8 KiB of warp counters; 4-byte ones with 9-bit
/// digits: 16 KiB of tile, 16 KiB of counters).
pub(crate) fn shapes(key_bytes: usize, value_bytes: usize) -> [Shape; 3] {
    let light = key_bytes.max(value_bytes) <= 4 && value_bytes == 0;
    [
        // A warp per segment of at most 128 keys, 32 blocks/SM (the SM's block limit) for keys of 4 bytes alone, else 24 (u8 pairs spill at 32 on sm_80): not yet measured on a GPU.
        Shape {
            block: 32,
            items: 4,
            min_blocks: if light { 32 } else { 24 },
            // 8-bit digits: 9 would give each of the 32 threads 16 digits to scan (not measured).
            bits: 8,
            // Ballots, as the 1024-key class (not measured here).
            match_any: false,
        },
        // 128 x 8 = 1024 keys (the anchor's segments in one tile), 12 blocks/SM for keys of 4 bytes alone (9-bit digits: 4.03 ms at 12, 4.01 ms at 10 blocks/SM, 2^28, run i22-segsort-variants), else 8; 256 x 4 took 4.15 ms against 128 x 8's 4.01 (same run).
        Shape {
            block: 128,
            items: 8,
            min_blocks: if light { 12 } else { 8 },
            // 8-bit digits at most: three 9-bit passes for uniform f32 in [0, 1) (27 varying bits) took 4.01 ms at 2^28 against 3.64 for four 8-bit ones (run i22-segsort-variants: the 512 counters per warp cost more than the pass saved).
            bits: 8,
            // Ballots: __match_any_sync took 6.34 ms (9-bit) and 6.88 ms (8-bit) at 2^28 against 3.52 ms (run i22-segsort-e7f0e74).
            match_any: false,
        },
        // 256 x 16 = 4096 keys, 2 blocks/SM; also the tile of the global-memory kernel: not yet measured on a GPU.
        // Pairs with 8-byte keys or values 256 x 12 (f16/u64 and i64/u32 pairs spill 28-56 bytes at x16 on sm_80 and sm_90).
        Shape {
            block: 256,
            items: if value_bytes > 0 && key_bytes.max(value_bytes) == 8 {
                12
            } else {
                16
            },
            min_blocks: 2,
            // 8-bit digits, ballots: as the 1024-key class (not measured here; f32 / u32 pairs spill 300 bytes at 9).
            bits: 8,
            match_any: false,
        },
    ]
}

/// Segments longer than this (and longer than their share of the
/// global-memory kernel's work per SM) go through the device-wide sort,
/// one call each: one block sorting 2^17 keys through global memory takes
/// about as long as the onesweep sort's launches (estimate, not yet
/// measured on a GPU).
const HUGE_MIN: u64 = 1 << 17;

/// Blocks per launch at most (the grid's x limit is 2^31 - 1).
const GRID_MAX: u64 = 1 << 30;

/// The segmented sort's module: keys `K`, values `V` when `pairs` (else the
/// kernel's `V` is `K`), offsets `I`, one tile shape; with an `input`, the
/// sort of that expression (its keys, or with `pairs` the zip of its keys
/// and values), whose first read of each segment is the expression's.
pub(crate) struct SegSort<'a, K, V, I, X = Leaf<'static, K>> {
    pub shape: Shape,
    pub pairs: bool,
    pub input: Option<&'a X>,
    _t: PhantomData<fn() -> (K, V, I)>,
}

impl<K: Element, V: Element, I: IndexElement> SegSort<'static, K, V, I> {
    pub fn new(shape: Shape, pairs: bool) -> Self {
        SegSort {
            shape,
            pairs,
            input: None,
            _t: PhantomData,
        }
    }
}

impl<'a, K: Element, V: Element, I: IndexElement> SegSort<'a, K, V, I> {
    /// The plan of a sort whose first reads are of the expression `input`
    /// (keys, or with `pairs` the zip of keys and values), if any.
    pub fn of_input<X: Node>(self, input: Option<&'a X>) -> SegSort<'a, K, V, I, X> {
        SegSort {
            shape: self.shape,
            pairs: self.pairs,
            input,
            _t: PhantomData,
        }
    }
}

impl<K: Element, V: Element, I: IndexElement, X: Node> Specialise for SegSort<'_, K, V, I, X> {
    fn template(&self) -> &'static Template {
        if self.input.is_some() {
            &SEGSORT_X
        } else {
            &SEGSORT
        }
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_BLOCK", self.shape.block as i64);
        w.constant("CUPRIM_ITEMS", self.shape.items as i64);
        w.constant("CUPRIM_MIN_BLOCKS", self.shape.min_blocks as i64);
        w.constant("CUPRIM_TILE_BITS", self.shape.bits as i64);
        w.constant("CUPRIM_MATCH_ANY", self.shape.match_any as i64);
        w.keys_values::<K, V>(self.pairs);
        w.elem::<I>("I");
        // Written only for an expression, so the buffer modules keep their text.
        if let Some(x) = self.input {
            w.constant("CUPRIM_SEGSORT_X", 1);
            let root = x.write_type(w, &mut 0);
            w.piece(root, |root| format!("typedef cuprim_e{root} SegIn;"));
        }
    }
}

/// Every module of keys `K` (with values `V` when `pairs`) and offsets `I`:
/// one per size class, and for keys alone of at most 4 bytes the bitonic
/// kernel's (with the `segsort-tuning` feature, its shuffle form too). The
/// survey every sort runs first is one module per offset type, whatever the
/// keys: [`survey_specs`].
pub(crate) fn kernel_specs<K: Element, V: Element, I: IndexElement>(pairs: bool) -> Vec<KernelSpec> {
    let mut specs = input_kernel_specs::<K, V, I, Leaf<'static, K>>(pairs, None);
    if !pairs && size_of::<K>() <= 4 {
        let plan = SegBitonic::<K, I>::new();
        specs.push(KernelSpec::of(&plan));
        #[cfg(feature = "segsort-tuning")]
        specs.push(KernelSpec::of(&SegBitonic::<K, I> {
            transpose: !plan.transpose,
            ..plan
        }));
    }
    specs
}

/// The longest segment the bitonic kernel sorts: 32 lanes of 32 keys.
pub(crate) const BITONIC_MAX: u64 = 1024;

/// The bitonic kernel's module (`kernels/segsort/segsort_bitonic.cu`): keys
/// `K` alone (at most 4 bytes), offsets `I`, `warps` segments per block,
/// `min_blocks` resident blocks per SM asked of ptxas; with `transpose`,
/// segments of more than 512 keys cross lanes by transposes through shared
/// memory rather than shuffles.
pub(crate) struct SegBitonic<K, I> {
    pub warps: u32,
    pub min_blocks: u32,
    pub transpose: bool,
    _t: PhantomData<fn() -> (K, I)>,
}

impl<K: Element, I: IndexElement> SegBitonic<K, I> {
    pub fn new() -> Self {
        SegBitonic {
            // 4 warps (segments) per block, 8 blocks/SM: at most 64 registers, 32 warps/SM, 132 KiB of shared memory (4.1 KiB a warp); the only shape measured (f32 in segments of 1024: 0.164x torch at 2^28, H200, run h200-bitonic-85b8acd), not swept.
            warps: 4,
            min_blocks: 8,
            // Transposes: a segment of 1024 f32 keys takes 69 integer-pipe instructions a key (55 of them min / max) against 87 (70) with shuffles (sm_90 SASS); f32 in segments of 1024 at 2^24 / 2^28 in 111.0 / 1362 us against 127.9 / 1606 with shuffles (H200, run h200-bitonic-85b8acd).
            transpose: true,
            _t: PhantomData,
        }
    }
}

impl<K: Element, I: IndexElement> Specialise for SegBitonic<K, I> {
    fn template(&self) -> &'static Template {
        &SEGSORT_BITONIC
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_WARPS", self.warps as i64);
        w.constant("CUPRIM_MIN_BLOCKS", self.min_blocks as i64);
        w.constant("CUPRIM_BITONIC_TRANSPOSE", self.transpose as i64);
        w.keys_values::<K, K>(false);
        w.elem::<I>("I");
    }
}

/// Whether the segments of at most [`BITONIC_MAX`] keys of a sort of keys
/// `K` go through the bitonic kernel: keys alone (not `pairs`) of at most 4
/// bytes, sorted by all their bits (equal keys are then equal bits, so the
/// network's instability cannot be seen), in place (an expression's sort,
/// `input`, keeps the radix tile kernels; `segmented_sorted_of` writes such
/// an expression out first and sorts that in place instead). With the `segsort-tuning`
/// feature, `CUPRIM_SEGSORT_BITONIC=0` turns it off (read at each call;
/// see [`bitonic_plan`] for `shfl`).
pub(crate) fn bitonic<K: Element>(pairs: bool, input: bool, args: &SegArgs) -> bool {
    #[cfg(feature = "segsort-tuning")]
    if std::env::var("CUPRIM_SEGSORT_BITONIC").is_ok_and(|v| v == "0") {
        return false;
    }
    let width = 8 * size_of::<K>() as u32;
    !pairs && !input && size_of::<K>() <= 4 && args.begin == 0 && args.end == width
}

/// The bitonic kernel's plan: [`SegBitonic::new`], or with the
/// `segsort-tuning` feature and `CUPRIM_SEGSORT_BITONIC=shfl`, every stage
/// across lanes through shuffles (no transposes).
fn bitonic_plan<K: Element, I: IndexElement>() -> SegBitonic<K, I> {
    #[allow(unused_mut)]
    let mut plan = SegBitonic::new();
    #[cfg(feature = "segsort-tuning")]
    if std::env::var("CUPRIM_SEGSORT_BITONIC").is_ok_and(|v| v == "shfl") {
        plan.transpose = false;
    }
    plan
}

/// The longest segment of each tile class: the shapes' tiles, or with the
/// bitonic kernel, every segment of up to [`BITONIC_MAX`] keys in the
/// second class (the first then holds none).
fn class_limits(shapes: &[Shape; 3], bitonic: bool) -> [u64; 3] {
    if bitonic {
        [0, BITONIC_MAX, shapes[2].tile().max(BITONIC_MAX)]
    } else {
        shapes.map(|sh| sh.tile())
    }
}

/// `cuprim_segsort_bitonic(K* keys, const I* offsets, const u32* ids, u32
/// first, u32 count, u64 flip)`.
type BitonicArgs<K, I> = (Ptr<K>, Ptr<I>, Ptr<u32>, u32, u32, u64);

fn bitonic_entry<K: Element, I: IndexElement>() -> Entry<BitonicArgs<K, I>> {
    // SAFETY: matches `cuprim_segsort_bitonic` in
    // kernels/segsort/segsort_bitonic.cu (keys as unsigned integers of their
    // width): warp w of block b, for w' = b * warps + w < count, reads
    // ids[first + w'] (or uses first + w' when ids is null) as a segment s,
    // reads offsets[s] and offsets[s + 1], and sorts keys [offsets[s],
    // offsets[s + 1]) in place; the host checked that those are within the
    // keys and at most BITONIC_MAX long.
    unsafe { Entry::declare("cuprim_segsort_bitonic") }
}

/// The bitonic kernel over `count` segments: ids[0..count] (or 0..count
/// when `ids` is null), each at most [`BITONIC_MAX`] keys.
fn launch_bitonic<K: Element, I: IndexElement>(
    dev: &CudaDevice,
    keys: Ptr<K>,
    offsets: Ptr<I>,
    ids: Ptr<u32>,
    count: u64,
    args: &SegArgs,
) -> Result<()> {
    let plan = bitonic_plan::<K, I>();
    let module = dev.module(&plan)?;
    for first in (0..count).step_by(GRID_MAX as usize) {
        let segs = (count - first).min(GRID_MAX);
        let grid = Grid::new(segs.div_ceil(plan.warps as u64) as u32, plan.warps * 32);
        dev.launch(
            &module,
            bitonic_entry::<K, I>(),
            grid,
            (keys, offsets, ids, first as u32, segs as u32, args.flip::<K>()),
        )?;
    }
    Ok(())
}

/// [`kernel_specs`] of the sort of an expression `input` (keys, or with
/// `pairs` the zip of keys and values), or of a buffer (None).
pub(crate) fn input_kernel_specs<K: Element, V: Element, I: IndexElement, X: Node>(pairs: bool, input: Option<&X>) -> Vec<KernelSpec> {
    let value_bytes = if pairs { size_of::<V>() } else { 0 };
    shapes(size_of::<K>(), value_bytes)
        .into_iter()
        .map(|shape| {
            if pairs {
                KernelSpec::of(&SegSort::<K, V, I>::new(shape, true).of_input(input))
            } else {
                KernelSpec::of(&SegSort::<K, K, I>::new(shape, false).of_input(input))
            }
        })
        .collect()
}

/// `cuprim_segsort_tile(K* keys, V* vals, const I* offsets, const u32* ids,
/// u32 first, u32 begin_bit, u32 end_bit, u64 flip)`.
type TileArgs<K, V, I> = (Ptr<K>, Ptr<V>, Ptr<I>, Ptr<u32>, u32, u32, u32, u64);

fn tile_entry<K: Element, V: Element, I: IndexElement>() -> Entry<TileArgs<K, V, I>> {
    // SAFETY: matches `cuprim_segsort_tile` in kernels/segsort/segsort.cu
    // (keys and values as unsigned integers of their width): block b reads
    // ids[first + b] (or uses first + b when ids is null) as a segment s,
    // reads offsets[s] and offsets[s + 1], and sorts keys (values, only with
    // CUPRIM_PAIRS) [offsets[s], offsets[s + 1]) in place; the host checked
    // that those are within the buffers and at most one tile long.
    unsafe { Entry::declare("cuprim_segsort_tile") }
}

/// `cuprim_segsort_tile_x(SegIn in, K* keys, V* vals, const I* offsets,
/// const u32* ids, u32 first, u32 begin_bit, u32 end_bit, u64 flip)`.
type TileXArgs<K, V, I> = (ExprArgs, Ptr<K>, Ptr<V>, Ptr<I>, Ptr<u32>, u32, u32, u32, u64);

fn tile_x_entry<K: Element, V: Element, I: IndexElement>() -> Entry<TileXArgs<K, V, I>> {
    // SAFETY: matches `cuprim_segsort_tile_x` in kernels/segsort/segsort.cu
    // (SegIn the struct the ExprArgs hold, as long as the keys): the tile
    // kernel's contract, reading segment s's elements of the expression and
    // writing them sorted to keys (values) [offsets[s], offsets[s + 1]).
    unsafe { Entry::declare("cuprim_segsort_tile_x") }
}

/// `cuprim_segsort_large(K* keys, V* vals, K* alt_keys, V* alt_vals, const
/// I* offsets, const u32* ids, const u64* alt_at, u32 first, u32
/// begin_bit, u32 end_bit, u64 flip)`.
type LargeArgs<K, V, I> = (Ptr<K>, Ptr<V>, Ptr<K>, Ptr<V>, Ptr<I>, Ptr<u32>, Ptr<u64>, u32, u32, u32, u64);

fn large_entry<K: Element, V: Element, I: IndexElement>() -> Entry<LargeArgs<K, V, I>> {
    // SAFETY: matches `cuprim_segsort_large` in kernels/segsort/segsort.cu:
    // block b sorts segment s = ids[first + b] (fewer than 2^32 keys,
    // checked by the host) of keys (values with CUPRIM_PAIRS) in place,
    // using alt_keys (alt_vals) from alt_at[first + b] for as many
    // elements, which the host lays out without overlap.
    unsafe { Entry::declare("cuprim_segsort_large") }
}

/// `cuprim_segsort_large_x(SegIn in, ...)`: the large kernel's parameters
/// after the expression.
type LargeXArgs<K, V, I> = (
    ExprArgs,
    Ptr<K>,
    Ptr<V>,
    Ptr<K>,
    Ptr<V>,
    Ptr<I>,
    Ptr<u32>,
    Ptr<u64>,
    u32,
    u32,
    u32,
    u64,
);

fn large_x_entry<K: Element, V: Element, I: IndexElement>() -> Entry<LargeXArgs<K, V, I>> {
    // SAFETY: matches `cuprim_segsort_large_x` in kernels/segsort/segsort.cu
    // (SegIn the struct the ExprArgs hold, as long as the keys): the large
    // kernel's contract, its first pass reading segment s's elements of the
    // expression instead of the keys (values) there.
    unsafe { Entry::declare("cuprim_segsort_large_x") }
}

/// Where each segment goes.
#[derive(Default)]
struct Classes {
    /// Segment ids per tile class.
    tiles: [Vec<u32>; 3],
    /// Global-memory kernel: (id, length), longest first.
    large: Vec<(u32, u64)>,
    /// Device-wide sort: (first element, length).
    huge: Vec<(u64, u64)>,
}

/// Splits the segments of `offs` (checked: non-decreasing, within the
/// keys) by length (`limits`: each tile class's longest); segments of 0 keys need nothing, nor (unless
/// `singles`: a sort of an expression writes them) those of 1.
fn classify(offs: &[u64], limits: &[u64; 3], sm_count: u32, singles: bool) -> Classes {
    // The class of each segment (0..3: a tile class, 3: longer, 4: nothing
    // to do), in parallel: a call may have millions of segments.
    let least = if singles { 1 } else { 2 };
    let class: Vec<u8> = offs
        .par_windows(2)
        .with_min_len(HOST_MIN_SPLIT)
        .map(|w| {
            let len = w[1] - w[0];
            if len < least {
                4
            } else {
                limits.iter().position(|&l| len <= l).unwrap_or(3) as u8
            }
        })
        .collect();
    let mut c = Classes::default();
    let mut large = Vec::new();
    for (s, &k) in class.iter().enumerate() {
        match k {
            0..=2 => c.tiles[k as usize].push(s as u32),
            3 => large.push((s as u32, offs[s + 1] - offs[s])),
            _ => {}
        }
    }
    // A segment that alone is more than an SM's share of the global-memory
    // kernel's work would make the others wait on it: the device-wide sort
    // takes those (and every segment of 2^32 keys or more).
    let total: u64 = large.iter().map(|&(_, len)| len).sum();
    let limit = HUGE_MIN.max(total / sm_count.max(1) as u64);
    for (s, len) in large {
        if len >= limit || len > u32::MAX as u64 {
            c.huge.push((offs[s as usize], len));
        } else {
            c.large.push((s, len));
        }
    }
    c.large.sort_by_key(|&(_, len)| std::cmp::Reverse(len));
    c
}

/// Where a sort's keys come from and go: the keys (and values) in place,
/// or an input expression (its keys, or with values the zip of its keys
/// and values) sorted into them.
pub(crate) struct Target<'a, K, V, X> {
    pub keys: Ptr<K>,
    pub values: Option<Ptr<V>>,
    pub input: Option<&'a X>,
}

impl<K: Element, V: Element> Target<'static, K, V, Leaf<'static, K>> {
    /// The keys (and values) sorted in place.
    pub fn in_place(keys: Ptr<K>, values: Option<Ptr<V>>) -> Self {
        Target { keys, values, input: None }
    }
}

impl<K: Element, V: Element, X: Node> Target<'_, K, V, X> {
    /// A sort of an expression: its elements before `first` and from `last`
    /// on (outside every segment) written out as they are.
    fn outside(&self, dev: &CudaDevice, first: u64, last: u64, n: u64) -> Result<()> {
        let Some(x) = self.input else {
            return Ok(());
        };
        let pairs = self.values.is_some();
        for (start, len) in [(0, first), (last, n - last)] {
            if len > 0 {
                let part = x.sliced(start as usize, len as usize);
                let vals = self.values.map_or(Ptr::null(), |v| v.add(start).cast::<u8>());
                let out = [self.keys.add(start).cast::<u8>(), vals, Ptr::null()];
                Collect::new(dev.arch(), &part, 1 + pairs as u8).run(dev, out)?;
            }
        }
        Ok(())
    }

    /// Runs `launch` with the expression's kernel parameter (bounds-checked
    /// when it permutes), or with None for a sort in place.
    fn launch(&self, dev: &CudaDevice, launch: impl FnOnce(Option<ExprArgs>) -> Result<()>) -> Result<()> {
        match self.input {
            None => launch(None),
            Some(x) => crate::expr::consume::launch_checked(dev, x, |a| launch(Some(a))),
        }
    }
}

/// One tile-kernel launch of `blocks` blocks from segment list position
/// `first`: the buffer form, or the expression's with `x`.
#[allow(clippy::too_many_arguments)]
fn launch_tile<K: Element, V: Element, I: IndexElement>(
    dev: &CudaDevice,
    module: &crate::device::Module,
    shape: Shape,
    x: Option<ExprArgs>,
    (keys, vals, offsets): (Ptr<K>, Ptr<V>, Ptr<I>),
    ids: Ptr<u32>,
    (first, blocks): (u32, u32),
    args: &SegArgs,
) -> Result<()> {
    let grid = Grid::new(blocks, shape.block);
    let (begin, end, flip) = (args.begin, args.end, args.flip::<K>());
    match x {
        None => dev.launch(
            module,
            tile_entry::<K, V, I>(),
            grid,
            (keys, vals, offsets, ids, first, begin, end, flip),
        ),
        Some(x) => dev.launch(
            module,
            tile_x_entry::<K, V, I>(),
            grid,
            (x, keys, vals, offsets, ids, first, begin, end, flip),
        ),
    }
}

/// Sorts every segment of `offs` (the offsets at `offsets`, read back and
/// checked) of the keys at `keys` (and the values at `values`) in place.
pub(crate) fn sort_segments<K: Element, V: Element, I: IndexElement>(
    dev: &CudaDevice,
    keys: Ptr<K>,
    values: Option<Ptr<V>>,
    offsets: Ptr<I>,
    offs: &[u64],
    args: &SegArgs,
) -> Result<()> {
    sort_segments_of(dev, &Target::in_place(keys, values), offsets, offs, args)
}

/// [`sort_segments`] into `target`: in place, or from its expression (of
/// `n` elements, `offs` checked against them).
pub(crate) fn sort_segments_of<K: Element, V: Element, I: IndexElement, X: Node>(
    dev: &CudaDevice,
    target: &Target<'_, K, V, X>,
    offsets: Ptr<I>,
    offs: &[u64],
    args: &SegArgs,
) -> Result<()> {
    let segments = offs.len().saturating_sub(1);
    if segments > u32::MAX as usize {
        return Err(Error::Unsupported(format!(
            "segmented_sort of {segments} segments: at most 2^32 - 1 are supported"
        )));
    }
    let (keys, values, input) = (target.keys, target.values, target.input);
    let pairs = values.is_some();
    let value_bytes = if pairs { size_of::<V>() } else { 0 };
    let shapes = shapes(size_of::<K>(), value_bytes);
    let bitonic = bitonic::<K>(pairs, input.is_some(), args);
    let classes = classify(offs, &class_limits(&shapes, bitonic), dev.sm_count(), input.is_some());
    let vals = values.unwrap_or(Ptr::null());
    let flip = args.flip::<K>();
    let (begin, end) = (args.begin, args.end);

    // Scratch: the tile classes' id lists (none for a class holding every
    // segment), the large segments' ids and scratch starts, and their
    // ping-pong buffers.
    let listed: Vec<bool> = classes.tiles.iter().map(|l| !l.is_empty() && l.len() < segments).collect();
    let id_count: u64 = classes
        .tiles
        .iter()
        .zip(&listed)
        .filter(|(_, &on)| on)
        .map(|(l, _)| l.len() as u64)
        .sum::<u64>()
        + classes.large.len() as u64;
    let alt_len: u64 = classes.large.iter().map(|&(_, len)| len).sum();
    let mut layout = ScratchLayout::new();
    let ids_region = layout.uninit::<u32>(id_count);
    let at_region = layout.uninit::<u64>(classes.large.len() as u64);
    let alt_keys = layout.uninit_aligned::<K>(alt_len);
    let alt_vals = layout.uninit_aligned::<V>(if pairs { alt_len } else { 0 });

    let mut ids: Vec<u32> = Vec::with_capacity(id_count as usize);
    for (list, &on) in classes.tiles.iter().zip(&listed) {
        if on {
            ids.extend_from_slice(list);
        }
    }
    let large_first = ids.len() as u64;
    ids.extend(classes.large.iter().map(|&(s, _)| s));
    let mut at = Vec::with_capacity(classes.large.len());
    let mut next = 0u64;
    for &(_, len) in &classes.large {
        at.push(next);
        next += len;
    }

    if id_count > 0 || !classes.tiles.iter().all(|l| l.is_empty()) {
        dev.with_scratch(&layout, |s| {
            let ids_ptr = s.at(ids_region);
            dev.upload(ids_ptr, &ids, "uploading the segmented sort's segment lists")?;
            dev.upload(s.at(at_region), &at, "uploading the segmented sort's scratch starts")?;
            target.launch(dev, |x| {
                let mut list_start = 0u64;
                for (k, list) in classes.tiles.iter().enumerate() {
                    if list.is_empty() {
                        continue;
                    }
                    let list_ptr = if listed[k] { ids_ptr.add(list_start) } else { Ptr::null() };
                    if listed[k] {
                        list_start += list.len() as u64;
                    }
                    if bitonic && k == 1 {
                        launch_bitonic::<K, I>(dev, keys, offsets, list_ptr, list.len() as u64, args)?;
                        continue;
                    }
                    let module = module::<K, V, I, X>(dev, shapes[k], pairs, input)?;
                    for first in (0..list.len() as u64).step_by(GRID_MAX as usize) {
                        let blocks = (list.len() as u64 - first).min(GRID_MAX) as u32;
                        let bufs = (keys, vals, offsets);
                        launch_tile(dev, &module, shapes[k], x, bufs, list_ptr, (first as u32, blocks), args)?;
                    }
                }
                if !classes.large.is_empty() {
                    let shape = shapes[2];
                    let module = module::<K, V, I, X>(dev, shape, pairs, input)?;
                    let count = classes.large.len() as u64;
                    let alt_v = if pairs { s.at(alt_vals) } else { Ptr::null() };
                    for first in (0..count).step_by(GRID_MAX as usize) {
                        let blocks = (count - first).min(GRID_MAX) as u32;
                        let grid = Grid::new(blocks, shape.block);
                        let (alt_k, ids_at, at_ptr) = (s.at(alt_keys), ids_ptr.add(large_first), s.at(at_region));
                        match x {
                            None => dev.launch(
                                &module,
                                large_entry::<K, V, I>(),
                                grid,
                                (keys, vals, alt_k, alt_v, offsets, ids_at, at_ptr, first as u32, begin, end, flip),
                            )?,
                            Some(x) => dev.launch(
                                &module,
                                large_x_entry::<K, V, I>(),
                                grid,
                                (x, keys, vals, alt_k, alt_v, offsets, ids_at, at_ptr, first as u32, begin, end, flip),
                            )?,
                        }
                    }
                }
                Ok(())
            })
        })?;
    }

    for &(start, len) in &classes.huge {
        let v = values.map(|v| v.add(start));
        match input {
            None => sort_device_with::<K, V>(dev, keys.add(start), v, len as usize, &args.opts)?,
            Some(x) => {
                let part = x.sliced(start as usize, len as usize);
                sort_device_from::<K, V, X>(dev, &part, keys.add(start), v, len as usize, &args.opts)?
            }
        }
    }
    if let (Some(&first), Some(&last), Some(x)) = (offs.first(), offs.last(), input) {
        target.outside(dev, first, last, x.length() as u64)?;
    }
    Ok(())
}

/// The survey's module (`kernels/segsort/segsort_survey.cu`): offsets `I`,
/// nothing else (the same module for every key and value type, tile shape
/// and input).
pub(crate) struct SegSurvey<I> {
    _t: PhantomData<fn() -> I>,
}

impl<I: IndexElement> SegSurvey<I> {
    pub fn new() -> Self {
        SegSurvey { _t: PhantomData }
    }
}

impl<I: IndexElement> Specialise for SegSurvey<I> {
    fn template(&self) -> &'static Template {
        &SEGSORT_SURVEY
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.elem::<I>("I");
    }
}

/// The survey's modules: `u32` and `u64` offsets.
pub(crate) fn survey_specs() -> Vec<KernelSpec> {
    vec![KernelSpec::of(&SegSurvey::<u32>::new()), KernelSpec::of(&SegSurvey::<u64>::new())]
}

/// `cuprim_segsort_survey(const I* offsets, u64 segments, u64 n, u64* out)`.
type SurveyArgs<I> = (Ptr<I>, u64, u64, Ptr<u64>);

fn survey_entry<I: IndexElement>() -> Entry<SurveyArgs<I>> {
    // SAFETY: matches `cuprim_segsort_survey` in
    // kernels/segsort/segsort_survey.cu: reads offsets[0..=segments], adds
    // into out[0..2] (zeroed) and writes out[2..4], 256 threads per block.
    unsafe { Entry::declare("cuprim_segsort_survey") }
}

/// The regular case, with nothing read back but a survey of the offsets on
/// the device: when every segment fits one tile class (the shortest that
/// holds the longest segment) and every offset is in order and within the
/// `n` keys, sorts them all with that class's kernel and returns true.
/// False: nothing was changed, and the caller reads the offsets back (for
/// a mixture of classes, or to name a bad offset in its error).
pub(crate) fn sort_segments_surveyed<K: Element, V: Element, I: IndexElement>(
    dev: &CudaDevice,
    keys: Ptr<K>,
    values: Option<Ptr<V>>,
    offsets: Ptr<I>,
    segments: u64,
    n: u64,
    args: &SegArgs,
) -> Result<bool> {
    sort_segments_surveyed_of(dev, &Target::in_place(keys, values), offsets, segments, n, args)
}

/// [`sort_segments_surveyed`] into `target`: in place, or from its
/// expression (whose elements outside the segments are then written too).
pub(crate) fn sort_segments_surveyed_of<K: Element, V: Element, I: IndexElement, X: Node>(
    dev: &CudaDevice,
    target: &Target<'_, K, V, X>,
    offsets: Ptr<I>,
    segments: u64,
    n: u64,
    args: &SegArgs,
) -> Result<bool> {
    if segments == 0 || segments > u32::MAX as u64 {
        return Ok(false);
    }
    let (keys, values, input) = (target.keys, target.values, target.input);
    let pairs = values.is_some();
    let shapes = shapes(size_of::<K>(), if pairs { size_of::<V>() } else { 0 });
    let surveyor = dev.module(&SegSurvey::<I>::new())?;
    let mut layout = ScratchLayout::new();
    let out = layout.zeroed::<u64>(4);
    let (longest, bad, first, last) = dev.with_scratch(&layout, |s| {
        let grid = segments.div_ceil(256).min(dev.sm_count() as u64 * 8) as u32;
        dev.launch(
            &surveyor,
            survey_entry::<I>(),
            Grid::new(grid, 256),
            (offsets, segments, n, s.at(out)),
        )?;
        let word = |b: &[u8], i: usize| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let what = "reading the segmented sort's offset survey";
        if input.is_some() {
            let b = dev.read_back::<32>(s.at(out).raw(), what)?;
            Ok((word(&b, 0), word(&b, 1), word(&b, 2), word(&b, 3)))
        } else {
            let b = dev.read_back::<16>(s.at(out).raw(), what)?;
            Ok((word(&b, 0), word(&b, 1), 0, 0))
        }
    })?;
    let bitonic = bitonic::<K>(pairs, input.is_some(), args);
    let Some(k) = class_limits(&shapes, bitonic).iter().position(|&l| longest <= l) else {
        return Ok(false);
    };
    if bad > 0 {
        return Ok(false);
    }
    if bitonic && k <= 1 {
        // (Only in place: no expression, nothing outside the segments to
        // write. Class 0 holds only empty segments here: the bitonic kernel
        // skips them, and no radix module is compiled.)
        return launch_bitonic::<K, I>(dev, keys, offsets, Ptr::null(), segments, args).map(|()| true);
    }
    let module = module::<K, V, I, X>(dev, shapes[k], pairs, input)?;
    let vals = values.unwrap_or(Ptr::null());
    target.launch(dev, |x| {
        for first in (0..segments).step_by(GRID_MAX as usize) {
            let blocks = (segments - first).min(GRID_MAX) as u32;
            launch_tile(
                dev,
                &module,
                shapes[k],
                x,
                (keys, vals, offsets),
                Ptr::null(),
                (first as u32, blocks),
                args,
            )?;
        }
        Ok(())
    })?;
    target.outside(dev, first, last, n)?;
    Ok(true)
}

/// The module of one class: the buffer sort's, or the sort of `input`'s.
fn module<K: Element, V: Element, I: IndexElement, X: Node>(
    dev: &CudaDevice,
    shape: Shape,
    pairs: bool,
    input: Option<&X>,
) -> Result<std::sync::Arc<crate::device::Module>> {
    if pairs {
        dev.module(&SegSort::<K, V, I>::new(shape, true).of_input(input))
    } else {
        dev.module(&SegSort::<K, K, I>::new(shape, false).of_input(input))
    }
}
