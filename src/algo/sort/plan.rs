//! The onesweep sort's plan: its template, the tile policy per
//! architecture and key / value widths, and the specialisation that one
//! policy value turns into (so the launch shape, the compile-time constants
//! and the module cache key cannot disagree).

use crate::element::{Element, Kind};
use crate::expr::node::Node;
use crate::expr::Leaf;
use crate::jit::{header, template, KernelSpec, SpecWriter, Specialise, Template};
use std::marker::PhantomData;
use std::mem::size_of;

template!(
    RADIX_SORT,
    "sort/radix_sort.cu",
    ["cuprim_radix_histogram", "cuprim_radix_onesweep", "cuprim_radix_histogram_x"],
    headers: [RADIX_SORT_COMMON]
);

template!(
    RADIX_SORT_SMALL,
    "sort/radix_sort_small.cu",
    ["cuprim_radix_small_sort"],
    headers: [RADIX_SORT_COMMON]
);

/// Key transform and stable tile ranking, shared with the classic sort.
pub(crate) const RADIX_SORT_COMMON: &str = header!("sort/radix_sort.cuh");

/// Shape of the radix sort kernels (`kernels/sort/radix_sort.cu`, and the
/// classic comparison path of `kernels/sort/radix_sort_classic.cu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SortPolicy {
    /// Threads per block of the onesweep pass (at least 256: one thread
    /// per digit).
    pub block: u32,
    /// Keys per thread: a tile is `block * items` keys.
    pub items: u32,
    /// Resident blocks per SM the onesweep kernel is compiled for
    /// (`__launch_bounds__`), which caps its registers.
    pub min_blocks: u32,
    /// Threads per block of the histogram pass.
    pub hist_block: u32,
    /// 16-byte loads in flight per thread in the histogram pass.
    pub hist_unroll: u32,
    /// Histogram blocks per SM (its grid is one wave of them).
    pub hist_blocks_per_sm: u32,
    /// Look-back words each digit's thread reads per round trip to L2.
    pub lookback_batch: u32,
    /// Longest back-off (ns) between polls of a look-back word not yet
    /// published (doubling from 32 ns); 0 spins without sleeping.
    pub lookback_sleep_max: u32,
    /// Skip passes in which every key has the same digit and copy tiles
    /// whose keys share one digit without ranking them (as CUB does).
    pub shortcut: bool,
    /// The onesweep pass's ranking counters share shared memory with its
    /// exchange buffer (as CUB does): one more barrier per tile, room for
    /// larger tiles under the 48 KiB of static shared memory.
    pub share_counters: bool,
}

/// Inputs of at most this many keys take the onesweep sort's medium tiles.
pub(crate) const MEDIUM_MOST: u64 = 1 << 18;

/// Static shared memory the onesweep kernel may give its exchange buffer
/// (the rest of the 48 KiB holds its other arrays); a larger buffer is
/// dynamic shared memory.
const STATIC_BUFFER_MOST: u64 = 44 * 1024;

impl SortPolicy {
    /// Keys per tile.
    pub fn tile(&self) -> u64 {
        self.block as u64 * self.items as u64
    }

    /// Bytes of dynamic shared memory of the onesweep kernel: its shared
    /// exchange buffer (which holds the ranking counters first) when that
    /// is larger than static shared memory allows, else 0.
    pub fn dynamic_shared(&self, key_bytes: usize, value_bytes: usize) -> u32 {
        let buffer = (self.tile() * key_bytes.max(value_bytes) as u64).max(self.block as u64 / 32 * 256 * 4);
        if self.share_counters && buffer > STATIC_BUFFER_MOST {
            buffer as u32
        } else {
            0
        }
    }
}

/// Radix sort for keys of `key_bytes` and values of `value_bytes` (0 for
/// keys alone); `shortcut` overrides the choice of the shortcuts, `wide`
/// asks for 64-bit output positions. A tile stages `tile * max(key, value)`
/// bytes in shared memory (plus 1 KiB of counters per warp unless they
/// share it), static up to 44 KiB, dynamic past that
/// ([`SortPolicy::dynamic_shared`]); every shape compiles without spills
/// on sm_80 and sm_90. `medium`: an input of at
/// most [`MEDIUM_MOST`] keys, which takes small tiles (more blocks).
pub(crate) fn radix_sort(
    arch: u32,
    key_bytes: usize,
    float_keys: bool,
    value_bytes: usize,
    shortcut: Option<bool>,
    wide: bool,
    medium: bool,
) -> SortPolicy {
    let widest = key_bytes.max(value_bytes);
    // Shortcuts on: f64/u32 pairs with CUB's bench keys 18.9 ms against 23.6 at 2^28, uniform keys pay 0.3-0.9% (H100, BENCHMARKS.md).
    let shortcut = shortcut.unwrap_or(true);
    let (block, items, min_blocks, share) = if medium && !wide {
        if value_bytes == 0 {
            // 384x8 at 3 blocks/SM up to 2^18 keys: u32 keys 48.3 / 54.1 us at 2^16 / 2^18 against 58.3 / 63.7 for 384x21 (H100, i23-sort-24ef478 call1).
            (384, 8, 3, false)
        } else {
            // 384x8 shared at 2 blocks/SM up to 2^18 keys: u32/u32 53.7 / 60.8 us at 2^16 / 2^18 against 77.3 / 79.7 for 384x28 (H100, i23-sort-24ef478 call1).
            (384, 8, 2, true)
        }
    } else if value_bytes == 0 {
        if widest > 4 && float_keys && !shortcut {
            // 384x8 at 3 blocks/SM: 8-byte keys alone spill 4 bytes at x9 on sm_90 (kept for float keys without the shortcuts).
            (384, 8, 3, false)
        } else if widest > 4 {
            // 384x18 shared at 2 blocks/SM (dynamic shared memory): u64 keys 1.108 / 8.330 ms at 2^24 / 2^27 against 1.144 / 8.573 for 384x16, 1.167 / 8.764 for 512x11 (H100, i23-sort-24ef478 call3; 384x8 at 3 took 10.22 ms at 2^27 in call1).
            (384, 18, 2, true)
        } else if float_keys && !shortcut {
            // 384x14: float keys without the shortcuts spill at x18 on sm_80 and sm_90.
            (384, 14, 3, false)
        } else if arch >= 90 {
            // 384x21 at 3 blocks/SM: u32 keys 5.29 ms at 2^28 against 5.41 at x20, 0.84x CUB (H100, run 2573e23).
            (384, 21, 3, false)
        } else {
            // 384x20 at 3 blocks/SM on sm_80: the sm_90 shape before x21 (run 46ce763), not measured on sm_80.
            (384, 20, 3, false)
        }
    } else if key_bytes == 8 && value_bytes <= 4 && shortcut {
        // 384x18 shared at 2 blocks/SM (dynamic shared memory): u64/u32 1.631 / 12.876 ms at 2^24 / 2^27 against 1.689 / 13.330 for 384x14, 1.679 / 13.297 for 512x11 (H100, i23-sort-24ef478 call3).
        (384, 18, 2, true)
    } else if key_bytes == 4 && value_bytes == 8 && shortcut {
        // 384x18 shared at 2 blocks/SM (dynamic shared memory): u32/u64 683 / 4876 us at 2^24 / 2^27 against 729 / 5302 for 384x14, 693 / 5024 for 512x12, 713 / 5149 for 384x16 (CUB 712 / 5058; H200, h200-sweeps-a5a4265).
        (384, 18, 2, true)
    } else if widest > 4 {
        // 384x14 shared at 2 blocks/SM: f64/u32 18.5 ms at 2^28 against 25.9 for 384x9 at 3, 0.83x CUB (H100, run 2573e23).
        (384, 14, 2, true)
    } else if float_keys {
        if !shortcut {
            // 384x19 shared: float pairs without the shortcuts spill past x19 (sm_80, sm_90).
            (384, 19, 2, true)
        } else if arch >= 90 {
            // 384x28 shared: f32/u32 0.586 / 4.292 ms at 2^24 / 2^27 against 0.593 / 4.344 at x26 (H100, i23-sort-24ef478 call1).
            (384, 28, 2, true)
        } else {
            // 384x21 shared on sm_80: the most without spills there.
            (384, 21, 2, true)
        }
    } else if arch >= 90 {
        // 512x24 shared: u32/u32 592 / 4483 / 8520 us at 2^24 / 2^27 / 2^28 against 612 / 4597 / 8738 for 384x28 (CUB 629 / 4387 at 2^24 / 2^27); x26 and past spill (H100, i23-lead-tune call3).
        (512, 24, 2, true)
    } else {
        // 384x23 shared on sm_80: x24 spills there.
        (384, 23, 2, true)
    };
    // 64-bit output positions: pairs of at most 4 bytes take at most x21 (x22 spills 8-16 bytes on sm_80 and sm_90).
    let items = if wide && value_bytes > 0 && widest <= 4 {
        items.min(21)
    } else {
        items
    };
    SortPolicy {
        block,
        items,
        min_blocks,
        hist_block: 256,
        // 256 threads, 4 x 16 B loads in flight, 4 blocks/SM: the first onesweep's shape (commit 9259929), not tuned since.
        hist_unroll: 4,
        hist_blocks_per_sm: 4,
        // 2 words per round trip: keys u32 6.87 ms at 2^28 against 7.08 for 1, 6.96 for 4 (H100, commit f598864).
        lookback_batch: 2,
        // 256 ns cap (commit 6f49703): other caps measured no faster (runs 7ac6107, e62df8c, 28eb346).
        lookback_sleep_max: 256,
        shortcut,
        share_counters: share,
    }
}

/// The onesweep policy of keys `K` (with values `V` when `pairs`).
pub(crate) fn policy<K: Element, V: Element>(arch: u32, pairs: bool, shortcut: Option<bool>, wide: bool, medium: bool) -> SortPolicy {
    let value_bytes = if pairs { size_of::<V>() } else { 0 };
    let policy = radix_sort(arch, size_of::<K>(), K::KIND == Kind::Float, value_bytes, shortcut, wide, medium);
    #[cfg(feature = "sort-tuning")]
    if let Some((block, items, min_blocks, share)) = tuning::get().onesweep {
        return SortPolicy {
            block,
            items,
            min_blocks,
            share_counters: share,
            ..policy
        };
    }
    policy
}

/// Constants and typedefs both sort templates start with.
pub(super) fn write_common<K: Element, V: Element, W: SpecWriter>(w: &mut W, policy: &SortPolicy, pairs: bool) {
    w.constant("CUPRIM_BLOCK", policy.block as i64);
    w.constant("CUPRIM_ITEMS", policy.items as i64);
    w.constant("CUPRIM_MIN_BLOCKS", policy.min_blocks as i64);
    // Ballot ranking: `__match_any_sync` measured slower (runs 7ac6107, e62df8c, 28eb346).
    w.constant("CUPRIM_MATCH_ANY", 0);
    w.constant("CUPRIM_LB_BATCH", policy.lookback_batch as i64);
    w.constant("CUPRIM_LB_SLEEP_MAX", policy.lookback_sleep_max as i64);
    w.constant("CUPRIM_HIST_BLOCK", policy.hist_block as i64);
    w.constant("CUPRIM_HIST_UNROLL", policy.hist_unroll as i64);
    w.constant("CUPRIM_PAIRS", pairs as i64);
    w.elem::<K>("K");
    // Defined only when on (the kernel defaults it to 0), so the other
    // modules keep their specialisation text.
    if policy.share_counters {
        w.constant("CUPRIM_SORT_SHARE", 1);
    }
    if pairs {
        w.elem::<V>("V");
    } else {
        w.typedef("V", "K");
    }
}

/// One onesweep sort's module: keys `K`, values `V` when `pairs` (else
/// `V` is ignored and the kernel's `V` is `K`), the tile policy, 64-bit
/// output positions or not, the shortcuts (in the policy) or not.
pub(crate) struct Onesweep<'a, K, V, X = Leaf<'static, K>> {
    pub policy: SortPolicy,
    pub pairs: bool,
    pub wide: bool,
    /// A sort of an input expression: its keys (or the zip of its keys and
    /// values, with `pairs`), read by `cuprim_radix_histogram_x`.
    pub input: Option<&'a X>,
    _kv: PhantomData<fn() -> (K, V)>,
}

impl<K: Element, V: Element> Onesweep<'static, K, V> {
    /// The plan on `arch`; `shortcut` overrides the policy's choice;
    /// `medium`: at most [`MEDIUM_MOST`] keys.
    pub fn new(arch: u32, pairs: bool, shortcut: Option<bool>, wide: bool, medium: bool) -> Self {
        Onesweep {
            policy: policy::<K, V>(arch, pairs, shortcut, wide, medium),
            pairs,
            wide,
            input: None,
            _kv: PhantomData,
        }
    }
}

impl<'a, K: Element, V: Element> Onesweep<'a, K, V> {
    /// The plan of a sort whose histogram pass reads the expression `input`
    /// (keys, or with `pairs` the zip of keys and values), if any.
    pub fn of_input<X: Node>(self, input: Option<&'a X>) -> Onesweep<'a, K, V, X> {
        Onesweep {
            policy: self.policy,
            pairs: self.pairs,
            wide: self.wide,
            input,
            _kv: PhantomData,
        }
    }
}

impl<K: Element, V: Element, X: Node> Specialise for Onesweep<'_, K, V, X> {
    fn template(&self) -> &'static Template {
        &RADIX_SORT
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_common::<K, V, W>(w, &self.policy, self.pairs);
        // Defined only when on, so the other modules keep their text.
        let value_bytes = if self.pairs { size_of::<V>() } else { 0 };
        if self.policy.dynamic_shared(size_of::<K>(), value_bytes) > 0 {
            w.constant("CUPRIM_SORT_DYN", 1);
        }
        w.constant("CUPRIM_WIDE_OFFSETS", self.wide as i64);
        w.constant("CUPRIM_SORT_SHORTCUT", self.policy.shortcut as i64);
        if let Some(x) = self.input {
            w.constant("CUPRIM_SORT_X", 1 + self.pairs as i64);
            let root = x.write_type(w, &mut 0);
            w.piece(root, |root| format!("typedef cuprim_e{root} SortIn;"));
        }
    }
}

/// The onesweep modules of a sort of an input expression (keys, or with
/// `pairs` the zip of keys and values): 32-bit positions of large and
/// medium inputs, 64-bit ones, the policy's shortcuts; for precompile.
pub(crate) fn input_kernel_specs<K: Element, V: Element, X: Node>(arch: u32, pairs: bool, input: &X) -> Vec<KernelSpec> {
    [(false, false), (false, true), (true, false)]
        .into_iter()
        .map(|(wide, medium)| KernelSpec::of(&Onesweep::<K, V>::new(arch, pairs, None, wide, medium).of_input(Some(input))))
        .collect()
}

/// The modules a sort of keys `K` (with values `V` when `pairs`) may load:
/// onesweep with 32-bit output positions (large and medium tiles) and
/// 64-bit ones, with the policy's choice of the shortcuts, plus every
/// small-sort shape; or with `alternatives` the onesweep modules with the
/// other choice (modules only
/// [`SortOptions::shortcuts`](super::SortOptions::shortcuts) reaches, for
/// the compile checks).
pub(crate) fn kernel_specs<K: Element, V: Element>(arch: u32, pairs: bool, alternatives: bool) -> Vec<KernelSpec> {
    let shortcut = policy::<K, V>(arch, pairs, None, false, false).shortcut != alternatives;
    // 32-bit positions of large and medium inputs, 64-bit ones.
    let mut specs: Vec<KernelSpec> = [(false, false), (false, true), (true, false)]
        .into_iter()
        .map(|(wide, medium)| {
            if pairs {
                KernelSpec::of(&Onesweep::<K, V>::new(arch, true, Some(shortcut), wide, medium))
            } else {
                KernelSpec::of(&Onesweep::<K, K>::new(arch, false, Some(shortcut), wide, medium))
            }
        })
        .collect();
    // The small sorts have no shortcuts: they come with the policy's modules.
    if !alternatives {
        let widest = if pairs {
            size_of::<K>().max(size_of::<V>())
        } else {
            size_of::<K>()
        };
        #[allow(unused_mut)]
        let mut shapes = small_shapes(widest, pairs).to_vec();
        #[cfg(feature = "sort-tuning")]
        if let Some(t) = tuning::get().small {
            shapes = t.into_iter().collect();
        }
        for shape in shapes {
            specs.push(if pairs {
                KernelSpec::of(&SmallSort::<K, V>::new(shape, true))
            } else {
                KernelSpec::of(&SmallSort::<K, K>::new(shape, false))
            });
        }
    }
    specs
}

/// Shape of the one-launch small sort (`kernels/sort/radix_sort_small.cu`):
/// `block` threads of `items` keys each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmallShape {
    /// Threads (at least 256: one per digit).
    pub block: u32,
    /// Keys per thread.
    pub items: u32,
}

impl SmallShape {
    /// Keys the block sorts at most.
    pub fn tile(&self) -> u64 {
        self.block as u64 * self.items as u64
    }

    /// Dynamic shared memory: the per-warp digit counters and the exchange
    /// buffer of `tile` elements of `widest` bytes.
    pub fn shared_bytes(&self, widest: usize) -> u32 {
        (self.block / 32) * 256 * 4 + self.tile() as u32 * widest as u32
    }
}

/// The small-sort shapes for elements of at most `widest` bytes (the wider
/// of key and value; `pairs`: with values), smallest tile first; a sort of
/// `n` keys takes the first whose tile holds them, else the onesweep sort.
/// The largest uses 96 KiB of shared memory (32 KiB of counters, 64 KiB of
/// keys); every shape compiles without spills on sm_80 and sm_90.
pub(crate) fn small_shapes(widest: usize, pairs: bool) -> &'static [SmallShape] {
    const fn s(block: u32, items: u32) -> SmallShape {
        SmallShape { block, items }
    }
    // Up to 1024 keys 256x4 (u32 keys 10.3 us against 11.7 for 512x4, 15.9 for 1024x4), up to 4096 512x8
    // (15.5 us against 16.6 for 256x16, 16.9 for 1024x4), up to 8192 512x16 (21.4 us against 23.1 for
    // 1024x8), up to 16384 keys alone 1024x16 (35.0 us against 47.9 for the best onesweep) (H100,
    // i23-sort-24ef478 call1; at 4096 in call3: 15.3 us against 16.6 / 16.7); u32/u32 pairs spill 48
    // bytes at 1024x16, so pairs take the onesweep sort past 8192. Up to 2048 256x8 and up to 3072 512x6:
    // u32 keys 13.25 / 14.18 us at 2048 / 3000 against 15.23 / 15.39 for 512x8, u32/u32 pairs 14.02 / 14.88
    // against 16.19 / 16.29 (CUB 15.36 / 15.94 and 17.38 / 18.18; H200, benchmarks/runs/h200-small-sort).
    const KEYS: [SmallShape; 6] = [s(256, 4), s(256, 8), s(512, 6), s(512, 8), s(512, 16), s(1024, 16)];
    const PAIRS: [SmallShape; 5] = [s(256, 4), s(256, 8), s(512, 6), s(512, 8), s(512, 16)];
    // 8-byte keys or values: 16 items spill; 1024x8 up to 8192 (u64 keys 39.8 us against 70.9 for onesweep, call1).
    // Up to 1536 256x6, up to 2048 256x8, up to 3072 512x6: u64 keys 18.21 / 19.52 / 22.18 us at 1536 / 2048 /
    // 3000 against 23.78 / 23.74 / 24.93 for 512x8, u64/u32 pairs 18.18 / 20.61 / 23.97 against 25.57 / 26.02 /
    // 26.91 (CUB 19.30 / 19.84 / 76.96 and 20.61 / 22.18 / 85.86; H200, benchmarks/runs/h200-small-sort/wide).
    const WIDE: [SmallShape; 6] = [s(256, 4), s(256, 6), s(256, 8), s(512, 6), s(512, 8), s(1024, 8)];
    if widest > 4 {
        &WIDE
    } else if pairs {
        &PAIRS
    } else {
        &KEYS
    }
}

/// The small-sort shape for `n` keys of `K` (values `V` when `pairs`), if
/// one holds them.
pub(crate) fn small_shape<K: Element, V: Element>(pairs: bool, n: u64) -> Option<SmallShape> {
    let widest = if pairs {
        size_of::<K>().max(size_of::<V>())
    } else {
        size_of::<K>()
    };
    #[cfg(feature = "sort-tuning")]
    if let Some(t) = tuning::get().small {
        return t.filter(|s| n <= s.tile());
    }
    small_shapes(widest, pairs).iter().copied().find(|s| n <= s.tile())
}

/// One small sort's module: keys `K`, values `V` when `pairs` (else `V` is
/// `K`), the shape.
pub(crate) struct SmallSort<K, V> {
    pub shape: SmallShape,
    pub pairs: bool,
    _kv: PhantomData<fn() -> (K, V)>,
}

impl<K: Element, V: Element> SmallSort<K, V> {
    pub fn new(shape: SmallShape, pairs: bool) -> Self {
        SmallSort {
            shape,
            pairs,
            _kv: PhantomData,
        }
    }
}

impl<K: Element, V: Element> Specialise for SmallSort<K, V> {
    fn template(&self) -> &'static Template {
        &RADIX_SORT_SMALL
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_BLOCK", self.shape.block as i64);
        w.constant("CUPRIM_ITEMS", self.shape.items as i64);
        // Ballot ranking, as the onesweep pass.
        w.constant("CUPRIM_MATCH_ANY", 0);
        w.keys_values::<K, V>(self.pairs);
    }
}

/// Experiment hook of the `sort-tuning` feature: shapes forced on the
/// sorts that follow on this thread (benches/sort_tune.rs). Not for
/// applications.
#[cfg(feature = "sort-tuning")]
pub mod tuning {
    use super::SmallShape;
    use std::cell::Cell;

    /// Forced shapes; `None` keeps the policy's.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Tuning {
        /// `Some(None)`: never the small sort; `Some(Some(shape))`: that shape
        /// for every input it holds.
        pub small: Option<Option<SmallShape>>,
        /// Onesweep (block, items, min_blocks, shared counters).
        pub onesweep: Option<(u32, u32, u32, bool)>,
    }

    thread_local! {
        static TUNING: Cell<Tuning> = const { Cell::new(Tuning { small: None, onesweep: None }) };
    }

    /// This thread's forced shapes.
    pub fn get() -> Tuning {
        TUNING.with(Cell::get)
    }

    /// Forces shapes on this thread's later sorts.
    pub fn set(t: Tuning) {
        TUNING.with(|c| c.set(t));
    }
}
