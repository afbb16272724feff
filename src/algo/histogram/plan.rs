//! Plans and launches of the histogram family (`kernels/histogram/histogram.cu`):
//! the per-architecture policy, where one call keeps its counters (block
//! copies in shared memory, windows of bins, or global atomics), the
//! kernel's specialisation, its entry, the launches, and the kernel list
//! for precompile. The counts go straight to the caller's histogram: no
//! scratch.

use super::bins::{double_for, BinRule, DeviceTable, Mode};
use super::Count;
use crate::algo::policy::Policy;
use crate::device::cuda::ACCUMULATOR_WORDS;
use crate::device::launch::KernelArg;
use crate::device::{Counter, CudaDevice, Entry, Grid, Ptr};
use crate::element::{Element, Kind};
use crate::error::Result;
use crate::expr::args::ExprArgs;
use crate::expr::consume::{launch_checked, write_input};
use crate::expr::node::{Leaf, Node};
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use std::marker::PhantomData;

template!(HISTOGRAM, "histogram/histogram.cu", ["cuprim_histogram"]);

/// Histogram launch shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HistogramPolicy {
    /// Threads per block, loads in flight, resident blocks per SM wanted
    /// (fewer when the block-private counters need more shared memory).
    pub launch: Policy,
    /// Shared memory the block-private counters may take (bytes); as many
    /// copies of the counters as fit, up to one per warp.
    pub replica_bytes: u32,
    /// The most bins counted in shared memory in one pass (one copy, with
    /// opt-in shared memory past 48 KiB).
    pub max_shared_bins: u32,
    /// More bins are counted in windows of at most `max_shared_bins`, one
    /// pass over the input each, up to this many passes; past that, global
    /// atomics.
    pub max_window_passes: u32,
    /// ... and only for inputs of at least this many samples per bin
    /// (shorter ones: global atomics, cheaper than the extra passes).
    pub window_min_samples_per_bin: u32,
    /// Explicit bin edges up to this many are staged in shared memory.
    pub edges_shared: u32,
}

/// The histogram policy on architecture `arch`.
pub(crate) fn histogram_policy(arch: u32) -> HistogramPolicy {
    HistogramPolicy {
        // 256 x 2 loads x 8/SM: 256 even bins f32 2^28 at 1.00x CUB, u32 full range 0.48x (H100, run 759512f).
        // Hopper takes 4 loads in flight: sorted f32 2^28 307 -> 257 us, uniform 378 -> 358 (H200, run
        // h200-hist-unroll; 8 loads 1-2% faster there but 20-40% slower below 2^20).
        launch: Policy {
            block: 256,
            unroll: if arch >= 90 { 4 } else { 2 },
            blocks_per_sm: 8,
        },
        // 32 KiB of counter copies: one per warp up to 1022 bins (256 bins: 8 copies, 8 KiB); run 759512f.
        replica_bytes: 32 << 10,
        // 16384 bins x 4 B = 64 KiB, one copy (opt-in past 48 KiB): the largest one-pass shared case.
        max_shared_bins: 16 << 10,
        // Windows up to 65536 bins: 65536 even bins f32 2^28 in 4 passes, 2.10 ms (H100, run 759512f; commit d1a87ad).
        max_window_passes: 4,
        // Below 128 samples per bin the extra passes cost more than global atomics (commit c113028).
        window_min_samples_per_bin: 128,
        // 2048 edges of 8 B = 16 KiB of shared memory beside the counters (not swept).
        edges_shared: 2048,
    }
}

/// `__launch_bounds__` minimum blocks per SM (`CUPRIM_MIN_BLOCKS`): keeps
/// registers for the bin search; the grid is sized by the measured occupancy.
const MIN_BLOCKS: i64 = 2;

/// The kernel's float arithmetic type `F`: `f32` or `f64`.
pub(super) trait HistFloat: Element {
    /// `x` rounded to this type.
    fn of(x: f64) -> Self;
}
impl HistFloat for f32 {
    fn of(x: f64) -> Self {
        x as f32
    }
}
impl HistFloat for f64 {
    fn of(x: f64) -> Self {
        x
    }
}

/// The kernel's `HistParams`, field for field.
#[repr(C)]
#[derive(Clone, Copy)]
struct HistParams<T, F> {
    lo: T,
    hi: T,
    scale: F,
    range: u64,
    edges: Ptr<T>,
    lut: Ptr<u32>,
    lut_scale: F,
    num_edges: u32,
    lut_cells: u32,
    nb: u32,
    bin_base: u32,
    window: u32,
    count_dropped: u32,
}

// SAFETY: `HistParams` is repr(C) with the fields, types and order of
// `struct HistParams` in kernels/histogram/histogram.cu (`T` and `F` are
// the specialisation's typedefs, a Ptr is a 64-bit address as `const T*`).
unsafe impl<T: Element, F: HistFloat> KernelArg for HistParams<T, F> {}

/// The parameters of `cuprim_histogram(const In in, u64 n, HistParams p,
/// u32 replicas, C* counts, u64* dropped, C* fresh, u64* fresh_dropped,
/// u32* ticket)`.
type HistArgs<T, C, F> = (ExprArgs, u64, HistParams<T, F>, u32, Ptr<C>, Ptr<u64>, Ptr<C>, Ptr<u64>, Ptr<u32>);

/// The histogram kernel.
fn histogram_entry<T: Element, C: Count, F: HistFloat>() -> Entry<HistArgs<T, C, F>> {
    // SAFETY: matches `cuprim_histogram` in kernels/histogram/histogram.cu
    // (`In` the struct whose fields ExprArgs holds): it reads n samples of
    // `in` and, in mode 2, num_edges edges and
    // lut_cells cells at `p.edges` / `p.lut`; it adds to counts[bin_base ..
    // bin_base + window] (all nb when not shared) and to dropped[0], or
    // with `fresh` not null adds into fresh[0..nb] and fresh_dropped[0]
    // (zeroed), then writes counts[0..nb] and dropped[0] and zeroes them
    // again, with the zeroed `ticket`; its dynamic shared memory is the
    // grid's (replicas x (window + 2) counters, then the staged edges and
    // cells).
    unsafe { Entry::declare("cuprim_histogram") }
}

/// Where one call keeps its counters (not part of the specialisation,
/// beyond `HistPlan::shared`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counters {
    /// Copies of the block's shared counters (a power of two).
    replicas: u32,
    /// Bins counted per pass over the input (all of them, unless windowed).
    window: u32,
    /// Passes over the input: `ceil(nb / window)`.
    passes: u32,
    /// Dynamic shared memory per block, bytes.
    smem: u32,
}

/// One histogram call on one device: the policy, the specialisation
/// (samples `T`, counts `C`, arithmetic `F`, mode, shared or global
/// counters) and the counter layout, all from one value.
pub(crate) struct HistPlan<'a, E: Node, C, F> {
    input: &'a E,
    policy: HistogramPolicy,
    mode: Mode,
    /// Counters in block-private shared memory (`CUPRIM_HIST_SHARED`), else global atomics.
    shared: bool,
    counters: Counters,
    _t: Types<C, F>,
}

/// The plan's counts and arithmetic types.
type Types<C, F> = PhantomData<fn() -> (C, F)>;

/// One call's device memory: the samples (an input expression), the
/// explicit edges (mode 2) and the histogram.
pub(super) struct Io<'a, E: Node, C> {
    /// The samples.
    pub input: &'a E,
    /// Explicit edges and their cell table, held for the call.
    pub table: Option<&'a DeviceTable<E::Item>>,
    /// `nb` counts.
    pub counts: Ptr<C>,
    /// One dropped count.
    pub dropped: Ptr<u64>,
    /// The histogram is new and not initialised: the call writes every
    /// count instead of adding to it.
    pub fresh: bool,
}

impl<'a, E: Node<Item = T>, T: Element, C: Count, F: HistFloat> HistPlan<'a, E, C, F> {
    /// The plan for `rule` over `input`'s samples on `arch`.
    fn new(arch: u32, rule: &BinRule<T>, input: &'a E) -> Self {
        let len = input.length();
        let policy = histogram_policy(arch);
        // One-byte samples are counted per value (256 shared counters) in one pass, whatever the bins.
        let bytes = std::mem::size_of::<T>() == 1;
        let passes = if bytes { 1 } else { rule.nb.div_ceil(policy.max_shared_bins) };
        // Windows pay a pass over the input each and a flush of every bin per
        // block: only worth it for inputs long beside the bin count.
        let shared =
            passes == 1 || (passes <= policy.max_window_passes && len as u64 >= policy.window_min_samples_per_bin as u64 * rule.nb as u64);
        let (window, passes) = if shared { (rule.nb.div_ceil(passes), passes) } else { (rule.nb, 1) };
        // Per replica: one counter per byte value, or the window's counters and two spare slots (dropped
        // samples, other bins).
        let slots = if bytes { 256 } else { window + 2 };
        let replicas = if shared {
            let fit = (policy.replica_bytes / (slots * 4)).clamp(1, policy.launch.block / 32);
            1 << (31 - fit.leading_zeros()) // the largest power of two <= fit
        } else {
            1
        };
        let counters = if shared { (replicas * slots * 4).next_multiple_of(16) } else { 0 };
        let staged = if rule.mode == Mode::Edges && rule.edges.len() as u32 <= policy.edges_shared {
            (rule.edges.len() * std::mem::size_of::<T>()).next_multiple_of(16) as u32 + 4 * rule.lut.len() as u32
        } else {
            0
        };
        HistPlan {
            input,
            policy,
            mode: rule.mode,
            shared,
            counters: Counters {
                replicas,
                window,
                passes,
                smem: counters + staged,
            },
            _t: PhantomData,
        }
    }

    /// A specialisation only (for precompile): no counter layout.
    fn kernel(arch: u32, input: &'a E, mode: Mode, shared: bool) -> Self {
        HistPlan {
            input,
            policy: histogram_policy(arch),
            mode,
            shared,
            counters: Counters::default(),
            _t: PhantomData,
        }
    }

    /// Counts the samples of `io` by `rule` into its histogram, on the
    /// device's stream.
    fn run(&self, dev: &CudaDevice, rule: &BinRule<T>, io: &Io<'_, E, C>) -> Result<()> {
        let Io {
            input,
            table,
            counts,
            dropped,
            fresh,
        } = *io;
        let len = input.length();
        let module = dev.module(self)?;
        let entry = histogram_entry::<T, C, F>();
        let launch = self.policy.launch;
        let mut grid = Grid::new(0, launch.block);
        grid.shared = self.counters.smem;
        // One wave of as many blocks as fit beside their shared counters.
        let resident = dev.occupancy(&module, entry, grid)?;
        let wave = Policy {
            blocks_per_sm: launch.blocks_per_sm.min(resident),
            ..launch
        };
        let widest = if E::WIDEST == 0 { std::mem::size_of::<T>() } else { E::WIDEST };
        grid.blocks = wave.grid_for_vectors(len, widest, dev.sm_count());

        let mut params = HistParams::<T, F> {
            lo: rule.lo,
            hi: rule.hi,
            scale: F::of(rule.scale),
            range: rule.range,
            edges: table.map_or(Ptr::null(), |t| t.edges),
            lut: table.map_or(Ptr::null(), |t| t.lut),
            lut_scale: F::of(rule.lut_scale),
            num_edges: rule.edges.len() as u32,
            lut_cells: rule.lut.len() as u32,
            nb: rule.nb,
            bin_base: 0,
            window: self.counters.window,
            count_dropped: 1,
        };
        // A new histogram counted in one launch goes through the device's
        // zeroed accumulators (no memset); otherwise it is zeroed first.
        let one_launch = self.counters.passes == 1 && len as u64 <= max_launch_elems(grid.blocks);
        let (acc, acc_dropped) = if fresh && one_launch && (rule.nb as usize) < ACCUMULATOR_WORDS {
            let acc = dev.zeroed_accumulators();
            (
                Ptr::<C>::from_raw(acc.raw()),
                Ptr::<u64>::from_raw(acc.raw() + 8 * (ACCUMULATOR_WORDS as u64 - 1)),
            )
        } else {
            if fresh {
                let bytes = rule.nb as usize * std::mem::size_of::<C>();
                dev.memset_bytes(counts.raw(), 0, bytes, "zeroing a new histogram")?;
                dev.memset_bytes(dropped.raw(), 0, 8, "zeroing a new histogram")?;
            }
            (Ptr::null(), Ptr::null())
        };
        let ticket = dev.counter(Counter::HistogramTicket);
        for pass in 0..self.counters.passes {
            params.bin_base = pass * self.counters.window;
            params.window = self.counters.window.min(rule.nb - params.bin_base);
            // The last window ends at nb: its shared counters hold the dropped samples (the kernel).
            params.count_dropped = (pass + 1 == self.counters.passes) as u32;
            let mut start = 0u64;
            while start < len as u64 {
                let n = (len as u64 - start).min(max_launch_elems(grid.blocks));
                let part = input.sliced(start as usize, n as usize);
                launch_checked(dev, &part, |part| {
                    dev.launch(
                        &module,
                        entry,
                        grid,
                        (part, n, params, self.counters.replicas, counts, dropped, acc, acc_dropped, ticket),
                    )
                })?;
                start += n;
            }
        }
        Ok(())
    }
}

impl<E: Node<Item = T>, T: Element, C: Count, F: HistFloat> Specialise for HistPlan<'_, E, C, F> {
    fn template(&self) -> &'static Template {
        &HISTOGRAM
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_BLOCK", self.policy.launch.block as i64);
        w.constant("CUPRIM_MIN_BLOCKS", MIN_BLOCKS);
        w.constant("CUPRIM_UNROLL", self.policy.launch.unroll as i64);
        w.constant("CUPRIM_HIST_MODE", self.mode as i64);
        w.constant("CUPRIM_HIST_SHARED", self.shared as i64);
        w.constant("CUPRIM_EDGES_SHARED", self.policy.edges_shared as i64);
        write_input(self.input, w);
        w.elem::<C>("C");
        w.elem::<F>("F");
    }
}

/// Elements per launch at most: keeps every block's shared counters and
/// every thread's run below 2^31 whatever the grid.
fn max_launch_elems(grid: u32) -> u64 {
    grid as u64 * (1 << 31)
}

/// Counts the samples of `io` by `rule` into its histogram: one plan per
/// call, in the arithmetic type the rule needs.
pub(super) fn count<E: Node<Item = T>, T: Element, C: Count>(dev: &CudaDevice, rule: &BinRule<T>, io: &Io<'_, E, C>) -> Result<()> {
    if rule.double() {
        HistPlan::<E, C, f64>::new(dev.arch(), rule, io.input).run(dev, rule, io)
    } else {
        HistPlan::<E, C, f32>::new(dev.arch(), rule, io.input).run(dev, rule, io)
    }
}

/// Every specialisation samples `T` with counts `C` can need, for
/// precompile and the compile checks.
pub(crate) fn histogram_specs<T: Element, C: Count>(arch: u32) -> Vec<KernelSpec> {
    let modes: &[Mode] = match T::KIND {
        Kind::Float => &[Mode::EvenFloat, Mode::Edges],
        _ => &[Mode::EvenInt, Mode::Edges, Mode::Integers],
    };
    let input = Leaf::<T>::type_only();
    let mut specs = Vec::new();
    // One-byte samples always take shared counters.
    let sharing: &[bool] = if std::mem::size_of::<T>() == 1 { &[true] } else { &[true, false] };
    for &mode in modes {
        for &shared in sharing {
            specs.push(if double_for::<T>(mode) {
                KernelSpec::of(&HistPlan::<_, C, f64>::kernel(arch, &input, mode, shared))
            } else {
                KernelSpec::of(&HistPlan::<_, C, f32>::kernel(arch, &input, mode, shared))
            });
        }
    }
    specs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generated declarations are those of the kernels measured before
    /// the launch seam, the input now spelled as an expression (a buffer),
    /// with Hopper's 4 loads in flight.
    #[test]
    fn specialisation_text_is_unchanged() {
        let specs = histogram_specs::<f32, u32>(90);
        assert_eq!(specs.len(), 4);
        assert_eq!(
            specs[0].key(),
            "// template: histogram/histogram.cu\n#define CUPRIM_BLOCK 256\n#define CUPRIM_MIN_BLOCKS 2\n\
             #define CUPRIM_UNROLL 4\n#define CUPRIM_HIST_MODE 0\n#define CUPRIM_HIST_SHARED 1\n\
             #define CUPRIM_EDGES_SHARED 2048\ntypedef cuprim_x_buf<float> cuprim_e0;\ntypedef cuprim_e0 In;\n\
             typedef In::item T;\ntypedef unsigned int C;\ntypedef float F;\n"
        );
        let u64s = histogram_specs::<u64, u64>(90);
        assert_eq!(u64s.len(), 6);
        assert!(u64s[0].key().contains("#define CUPRIM_HIST_MODE 1\n"));
        assert!(u64s[0].key().ends_with("typedef double F;\n"));
        assert!(u64s[2].key().contains("#define CUPRIM_HIST_MODE 2\n#define CUPRIM_HIST_SHARED 1\n"));
        assert!(u64s[5].key().contains("#define CUPRIM_HIST_MODE 3\n#define CUPRIM_HIST_SHARED 0\n"));
        assert!(u64s[5].key().ends_with("typedef float F;\n"));
    }

    /// The policy, the grid's shared memory and the key come from one plan.
    #[test]
    fn counters_follow_the_bins() {
        let rule = BinRule::new(&super::super::Bins::even(256, 0.0f32, 1.0)).unwrap();
        let (mid, small, big) = (
            Leaf::<f32>::raw(0, 1 << 20),
            Leaf::<f32>::raw(0, 1000),
            Leaf::<f32>::raw(0, 1 << 24),
        );
        let p = HistPlan::<_, u32, f32>::new(90, &rule, &mid);
        assert!(p.shared);
        assert_eq!((p.counters.replicas, p.counters.window, p.counters.passes), (8, 256, 1));
        assert_eq!(p.counters.smem, 8 * 258 * 4);
        let wide = BinRule::new(&super::super::Bins::even(65536, 0.0f32, 1.0)).unwrap();
        let short = HistPlan::<_, u32, f32>::new(90, &wide, &small);
        assert!(!short.shared);
        let long = HistPlan::<_, u32, f32>::new(90, &wide, &big);
        assert!(long.shared);
        assert_eq!((long.counters.window, long.counters.passes), (16384, 4));
        assert_ne!(crate::jit::SpecKey::of(&short), crate::jit::SpecKey::of(&long));
    }
}
