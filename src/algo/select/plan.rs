//! Plan and launch of `kernels/select/select.cu` and `select_bulk.cu`: one
//! pass that writes the selected elements in order (and, for partition, the
//! rejected ones) with their positions from a look-back over per-tile counts.

use crate::algo::bykey::plan::{KeyEq, NotEqual};
use crate::algo::lookback::{two_passes_pay, Lookback, LOOKBACK};
use crate::algo::scan::plan::{scan_policy, TilePolicy};
use crate::device::{Counter, CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::Result;
use crate::expr::args::ExprArgs;
use crate::expr::consume::{launch_checked, write_input};
use crate::expr::node::{Leaf, Node};
use crate::jit::spec::Pred;
use crate::jit::{template, KernelSpec, OpText, SpecWriter, Specialise, Template};
use crate::pred::Predicate;

/// What both select kernels share.
const SELECT_COMMON: &str = crate::jit::header!("select/select.cuh");

template!(SELECT, "select/select.cu", ["cuprim_select", "cuprim_select_counts"], headers: [LOOKBACK, SELECT_COMMON]);
template!(SELECT_BULK, "select/select_bulk.cu", ["cuprim_select"], headers: [LOOKBACK, SELECT_COMMON]);

/// copy_if / partition tiles, `block` counting the compute threads (the kernel adds a look-back
/// warp). 4 bytes: 128x24 at 9 blocks/SM, 40 registers, the most without spills (half of 2^28 u32
/// kept: 771 us against 858 for the kernel before the look-back warp, H100, select run 1).
/// 1, 2 and 8 bytes: the scan's tiles (1 byte at 16 items, 32 spill at 3 blocks/SM) at about the
/// blocks per SM the kernel had before the look-back warp (NVRTC sm_80 / sm_90, no spills; not
/// timed). Other sizes as the scan.
pub(crate) fn select_policy(arch: u32, elem_bytes: usize) -> TilePolicy {
    let (block, items, min_blocks) = match elem_bytes {
        4 => (128, 24, 9),
        1 => (256, 16, 4),
        2 => (256, 32, 3),
        8 => (256, 12, 4),
        _ => return scan_policy(arch, elem_bytes),
    };
    TilePolicy { block, items, min_blocks }
}

/// copy_if of a plain buffer on sm_90 (`select_bulk.cu`): 24 KiB tiles of 96 compute threads at 8
/// blocks per SM (197 KiB of shared memory). Half of 2^28 u32 kept: 512-516 us, against 522-524
/// for 128x64 at 6, 516-534 for 64x64 at 13 and 518-534 for 256x32 at 6 (H200, one call; CUB
/// 580), 2^24 within 1 us of each other; u8 2^28 283-284 us against 301-305 for 128x128 at 12
/// and 256x64 at 7 (another call).
pub(crate) fn select_bulk_policy(elem_bytes: usize) -> TilePolicy {
    TilePolicy {
        block: 96,
        items: (24576 / (96 * elem_bytes)) as u32,
        min_blocks: 8,
    }
}

/// Inputs of fewer elements, or of fewer bytes, keep the register tiles: u8 at 2^21 / 2^22 took
/// 13.2-13.6 / 20.3-21.1 us in register tiles against 15.5-15.7 / 18.0-18.5 in bulk tiles, u32 at
/// 2^20 / 2^21 12.4-12.8 / 17.5-18.2 against 13.3-13.6 / 15.0-15.8, u64 at 2^20 / 2^21 / 2^22
/// 13.3-14.4 / 19.3-20.5 / 33.4-33.7 against 14.5-14.9 / 19.3-20.7 / 30.2-31.2 (H200, one call,
/// three rounds).
const SELECT_BULK_MIN_LEN: usize = 1 << 21;
const SELECT_BULK_MIN_BYTES: usize = 4 << 20;

/// Whether `select_bulk.cu` can read `E` on `arch`: a plain buffer of 1, 2, 4, 8 or 16-byte
/// elements, on sm_90 or later.
fn bulk_reads<E: Node>(arch: u32) -> bool {
    let bytes = std::mem::size_of::<E::Item>();
    arch >= 90 && E::IS_BUF && bytes <= 16 && bytes.is_power_of_two()
}

/// Whether copy_if of `len` elements of `E` on `arch` takes the bulk copy kernel: one it can
/// read, of at least 2^21 elements and 4 MiB.
fn takes_bulk<E: Node>(arch: u32, len: usize) -> bool {
    let bytes = len.saturating_mul(std::mem::size_of::<E::Item>());
    #[cfg(feature = "scan-tuning")]
    if let Some(over) = crate::algo::scan::plan::tuning::select_bulk_over() {
        return bulk_reads::<E>(arch) && bytes > over;
    }
    bulk_reads::<E>(arch) && len >= SELECT_BULK_MIN_LEN && bytes >= SELECT_BULK_MIN_BYTES
}

/// Blocks per SM at most when the input reads several buffers (see [`Select::new`]).
const SELECT_MULTI_STREAM_BLOCKS: u32 = 6;

/// One specialisation of the select kernel, reading an input expression
/// (a plain buffer being the simplest).
pub(crate) struct Select<'a, E, P> {
    pub policy: TilePolicy,
    pub input: &'a E,
    pub pred: &'a P,
    /// u64 counts (2^32 elements or more), else u32 (whose look-back state packs into one word per tile).
    pub wide: bool,
    /// `select_bulk.cu` (copy_if alone), else `select.cu`.
    pub bulk: bool,
    /// unique: the kernel keeps run heads (`SEL_HEADS`), not what `pred` selects.
    pub heads: bool,
    /// The two passes (`SEL_TWO_PASS`: each tile's count, then the compaction from the counts
    /// before it; register tiles, u32 counts).
    two_pass: bool,
}

/// The predicate of unique's select ([`Select::unique`]), which the kernel
/// does not evaluate: it keeps the run heads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunHeads;

impl<T: Element> Predicate<T> for RunHeads {
    fn test(&self, _: T) -> bool {
        true
    }
    fn cuda_expr(&self) -> String {
        "true".into()
    }
}

impl<'a, E: Node<Item = T>, T: Element> Select<'a, E, RunHeads> {
    /// unique of `input` (its run heads: `a != b` between neighbours) on
    /// `arch`: the bulk copy kernel where copy_if would take it.
    pub fn unique(arch: u32, input: &'a E) -> Self {
        Self::heads_of(Self::new(arch, input, &RunHeads))
    }

    /// `plan` keeping run heads. In registers a block per SM fewer, two for
    /// 4-byte elements: the keys before each lane's first take registers
    /// (NVRTC 13, sm_80 / sm_90: copy_if's shapes spilled 4 to 32 bytes,
    /// f32 still 24 at 8 blocks of 128x24).
    fn heads_of(plan: Self) -> Self {
        plan.keeping_heads()
    }
}

impl<'a, E: Node<Item = T>, T: Element, P: Predicate<T>> Select<'a, E, P> {
    /// copy_if's kernel for `input`: the bulk copy kernel where it applies.
    /// Its launches take no rejected output (partition plans with
    /// [`registers`](Self::registers)).
    pub fn new(arch: u32, input: &'a E, pred: &'a P) -> Self {
        if takes_bulk::<E>(arch, input.length()) {
            return Self::bulk(input, pred);
        }
        Self::registers(arch, input, pred)
    }

    fn bulk(input: &'a E, pred: &'a P) -> Self {
        Select {
            policy: select_bulk_policy(std::mem::size_of::<T>()),
            input,
            pred,
            wide: input.length() as u64 > u32::MAX as u64,
            bulk: true,
            heads: false,
            two_pass: false,
        }
    }

    /// This plan keeping run heads (unique). In registers a block per SM fewer, two for 4-byte
    /// elements (see [`Select::unique`]).
    fn keeping_heads(self) -> Self {
        let mut policy = self.policy;
        if !self.bulk {
            let fewer = if std::mem::size_of::<T>() == 4 { 2 } else { 1 };
            policy.min_blocks = policy.min_blocks.saturating_sub(fewer).max(1);
        }
        Select {
            heads: true,
            policy,
            ..self
        }
    }

    /// The two-pass form of this plan: register tiles (`select.cu` with `SEL_TWO_PASS`), u32 counts.
    fn in_two_passes(&self, arch: u32) -> Self {
        let plan = Select {
            two_pass: true,
            wide: false,
            ..Self::registers(arch, self.input, self.pred)
        };
        if self.heads {
            return plan.keeping_heads();
        }
        let mut plan = plan;
        if arch < 90 && std::mem::size_of::<T>() == 4 {
            // copy_if's 128x24 at 9 blocks per SM spilled 4 bytes on sm_80 (NVRTC 13), not on sm_90.
            plan.policy.min_blocks = plan.policy.min_blocks.min(8);
        }
        plan
    }

    /// Whether `len` elements take the two passes (see [`two_passes_pay`]; 4- and 8-byte elements).
    fn takes_two_passes(&self, dev: &CudaDevice, len: usize) -> bool {
        let bytes = std::mem::size_of::<T>();
        #[cfg(feature = "scan-tuning")]
        if let Some(force) = crate::algo::scan::plan::tuning::select_two_pass() {
            return force && matches!(bytes, 4 | 8);
        }
        two_passes_pay(dev.l2_bytes(), len, bytes)
    }

    /// The kernel that stages tiles in registers (`select.cu`): any input, and partition.
    pub fn registers(arch: u32, input: &'a E, pred: &'a P) -> Self {
        let mut policy = select_policy(arch, std::mem::size_of::<T>());
        if E::STREAMS > 1 {
            // Several buffers' loads in flight: f32 `zip(a, b).map(Mul)` at 9 blocks per SM spilled
            // 8-20 bytes on sm_80 / sm_90, and at 7-8 still 8 (NVRTC 13, ptxas -v).
            policy.min_blocks = policy.min_blocks.min(SELECT_MULTI_STREAM_BLOCKS);
        }
        Select {
            policy,
            input,
            pred,
            wide: input.length() as u64 > u32::MAX as u64,
            bulk: false,
            heads: false,
            two_pass: false,
        }
    }

    /// `copy_if`'s words, or unique's (the run heads kept), for errors.
    fn what(&self, copy_if: &'static str, unique: &'static str) -> &'static str {
        if self.heads {
            unique
        } else {
            copy_if
        }
    }

    /// Writes the selected elements of the input to `selected` (and the
    /// rejected ones to `rejected`, unless null); returns how many were
    /// selected (one small synchronous read of the last tile's prefix).
    pub fn run(&self, dev: &CudaDevice, selected: Ptr<T>, rejected: Ptr<T>) -> Result<usize> {
        Ok(self.launch(dev, selected, rejected, None)?.unwrap_or(0))
    }

    /// Like [`run`](Self::run), but with `count_out` the kernel writes the
    /// number selected there (a u64, on the device) and nothing is read back
    /// (unless the input permutes: its indices are checked).
    pub fn launch(&self, dev: &CudaDevice, selected: Ptr<T>, rejected: Ptr<T>, count_out: Option<Ptr<u64>>) -> Result<Option<usize>> {
        debug_assert!(!self.bulk || rejected.raw() == 0, "select_bulk.cu writes no rejected output");
        let len = self.input.length();
        if len == 0 {
            return match count_out {
                Some(c) => dev
                    .memset_bytes(c.raw(), 0, 8, self.what("writing the copy_if count", "writing the run count"))
                    .map(|()| None),
                None => Ok(Some(0)),
            };
        }
        if self.takes_two_passes(dev, len) {
            return self.in_two_passes(dev.arch()).launch_two_pass(dev, selected, rejected, count_out);
        }
        let tiles = self.policy.tiles(self.what("copy_if", "unique"), len)?;
        let module = dev.module(self)?;
        let mut layout = ScratchLayout::new();
        let lookback = Lookback::place(&mut layout, tiles as u64, if self.wide { 8 } else { 4 });
        let entry = select_entry::<T>();
        let counter = dev.counter(Counter::SelectTile);
        let total = dev.with_scratch(&layout, |s| {
            let (status, aggregates, prefixes) = lookback.args(&s);
            launch_checked(dev, self.input, |input| {
                let args = (
                    input,
                    len as u64,
                    self.pred.param(),
                    selected,
                    rejected,
                    count_out.unwrap_or(Ptr::null()),
                    status,
                    aggregates,
                    prefixes,
                    counter,
                    tiles,
                );
                dev.launch(&module, entry, Grid::new(tiles, self.policy.block + 32), args)
            })?;
            if count_out.is_some() {
                return Ok(None);
            }
            let at = lookback.prefix(&s, tiles as u64 - 1);
            let what = self.what("reading the copy_if count", "reading the run count");
            Ok(Some(u64::from_le_bytes(dev.read_back::<8>(at.raw(), what)?)))
        })?;
        // A 64-bit packed word holds a u32 count in its low half; a 16-byte
        // one holds the u64 count in its second 8 bytes.
        Ok(total.map(|total| if self.wide { total } else { total & 0xffff_ffff } as usize))
    }

    /// [`launch`](Self::launch) in two passes (`two_pass`): `cuprim_select_counts` counts each
    /// tile's kept elements, then `cuprim_select` (`SEL_TWO_PASS`) compacts each tile from the sum
    /// of the counts before it, as a dependent launch.
    fn launch_two_pass(&self, dev: &CudaDevice, selected: Ptr<T>, rejected: Ptr<T>, count_out: Option<Ptr<u64>>) -> Result<Option<usize>> {
        let len = self.input.length();
        let tiles = self.policy.tiles(self.what("copy_if", "unique"), len)?;
        let module = dev.module(self)?;
        let mut layout = ScratchLayout::new();
        let counts = layout.uninit::<u32>(tiles as u64);
        let own_count = layout.uninit::<u64>(count_out.map_or(1, |_| 0));
        // SAFETY: matches `cuprim_select_counts(const In in, u64 n, T p, u32* counts)`, `In` the struct
        // whose fields ExprArgs holds: reads n elements, writes one count per tile.
        let count_tiles: Entry<(ExprArgs, u64, T, Ptr<u32>)> = unsafe { Entry::declare("cuprim_select_counts") };
        // With SEL_TWO_PASS `status` is the tiles' counts; aggregates, prefixes and tile_counter are
        // not read, and the count goes to count_out.
        let entry = select_entry::<T>();
        dev.with_scratch(&layout, |s| {
            let counts = s.at(counts);
            let count = count_out.unwrap_or_else(|| s.at(own_count));
            launch_checked(dev, self.input, |input| {
                let param = self.pred.param();
                dev.launch(
                    &module,
                    count_tiles,
                    Grid::new(tiles, self.policy.block),
                    (input, len as u64, param, counts),
                )?;
                let args = (
                    input,
                    len as u64,
                    param,
                    selected,
                    rejected,
                    count,
                    counts,
                    Ptr::null(),
                    Ptr::null(),
                    Ptr::null(),
                    tiles,
                );
                // SAFETY: the look-back warp of every block calls cuprim_grid_wait() before it reads
                // the counts, and the compute warps store only after it (barrier 3). Before it the
                // compute warps read only the input, which the one kernel that may still run
                // (cuprim_select_counts, a plain launch) reads and does not write; either may set
                // the expression's bad-index flag.
                unsafe { dev.launch_dependent(&module, entry, Grid::new(tiles, self.policy.block + 32), args) }
            })?;
            if count_out.is_some() {
                return Ok(None);
            }
            let what = self.what("reading the copy_if count", "reading the run count");
            Ok(Some(u64::from_le_bytes(dev.read_back::<8>(count.raw(), what)?) as usize))
        })
    }
}

/// `cuprim_select`'s parameters (`select.cu`, `select_bulk.cu`).
type SelectArgs<T> = (
    ExprArgs,
    u64,
    T,
    Ptr<T>,
    Ptr<T>,
    Ptr<u64>,
    Ptr<u32>,
    Ptr<u8>,
    Ptr<u8>,
    Ptr<u32>,
    u32,
);

/// The entry of both select kernels.
fn select_entry<T: Element>() -> Entry<SelectArgs<T>> {
    // SAFETY: matches `cuprim_select(const In in, u64 n, T p, T* selected, T* rejected, u64* count_out,
    // u32* status, C* aggregates, C* prefixes, u32* tile_counter, u32 num_tiles)`, `In` the struct whose
    // fields ExprArgs holds: reads n elements, writes at most n to selected (and to rejected unless null)
    // and one count unless null, look-back arrays (or, SEL_TWO_PASS, the tiles' counts in status) of
    // num_tiles entries.
    unsafe { Entry::declare("cuprim_select") }
}

impl<E: Node<Item = T>, T: Element, P: Predicate<T>> Specialise for Select<'_, E, P> {
    fn template(&self) -> &'static Template {
        if self.bulk {
            &SELECT_BULK
        } else {
            &SELECT
        }
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        self.policy.write(w);
        write_input(self.input, w);
        w.typedef("C", if self.wide { "u64" } else { "u32" });
        w.constant("SEL_HEADS", self.heads as i64);
        // Only in the two-pass modules, so the others keep their text.
        if self.two_pass {
            w.constant("SEL_TWO_PASS", 1);
        }
        if self.heads {
            w.typedef("K", "T");
            <NotEqual as KeyEq<T>>::write(&NotEqual, w);
        }
        w.piece(OpText::<P, T, Pred>::predicate(*self.pred), |pred| {
            format!(
                "struct PredFn {{ __device__ __forceinline__ static bool apply(T x, T p) {{ (void)p; return ({}); }} }};",
                Predicate::<T>::cuda_expr(&pred.op)
            )
        });
    }
}

/// Both select modules (u32 and u64 counts) of `T` and `pred`, for precompile.
pub(crate) fn select_specs<T: Element, P: Predicate<T>>(arch: u32, pred: &P) -> Vec<KernelSpec> {
    select_specs_of(arch, &Leaf::<T>::type_only(), pred)
}

/// Both select modules of an input expression and `pred`, for precompile.
pub(crate) fn select_specs_of<E: Node<Item = T>, T: Element, P: Predicate<T>>(arch: u32, input: &E, pred: &P) -> Vec<KernelSpec> {
    let registers = Select::registers(arch, input, pred);
    let two_pass = two_pass_spec(&registers, arch);
    let mut plans = vec![registers];
    if bulk_reads::<E>(arch) {
        plans.push(Select::bulk(input, pred));
    }
    both_widths(plans).into_iter().chain(two_pass).collect()
}

/// The two-pass module of `plan`, where some length takes it (4- and 8-byte elements).
fn two_pass_spec<E: Node<Item = T>, T: Element, P: Predicate<T>>(plan: &Select<'_, E, P>, arch: u32) -> Option<KernelSpec> {
    matches!(std::mem::size_of::<T>(), 4 | 8).then(|| KernelSpec::of(&plan.in_two_passes(arch)))
}

/// unique's select modules of an input expression (run heads kept), for precompile.
pub(crate) fn unique_select_specs<E: Node<Item = T>, T: Element>(arch: u32, input: &E) -> Vec<KernelSpec> {
    let registers = Select::heads_of(Select::registers(arch, input, &RunHeads));
    let two_pass = two_pass_spec(&registers, arch);
    let mut plans = vec![registers];
    if bulk_reads::<E>(arch) {
        plans.push(Select::heads_of(Select::bulk(input, &RunHeads)));
    }
    both_widths(plans).into_iter().chain(two_pass).collect()
}

/// Each plan's module with u32 and with u64 counts.
fn both_widths<E: Node<Item = T>, T: Element, P: Predicate<T>>(plans: Vec<Select<'_, E, P>>) -> Vec<KernelSpec> {
    let mut specs = Vec::new();
    for plan in plans {
        specs.push(KernelSpec::of(&plan));
        specs.push(KernelSpec::of(&Select { wide: true, ..plan }));
    }
    specs
}
