//! The onesweep sort's plan: its template, the tile policy per
//! architecture and key / value widths, and the specialisation that one
//! policy value turns into (so the launch shape, the compile-time constants
//! and the module cache key cannot disagree).

use crate::element::{Element, Kind};
use crate::jit::{header, template, KernelSpec, SpecWriter, Specialise, Template};
use std::marker::PhantomData;
use std::mem::size_of;

template!(
    RADIX_SORT,
    "sort/radix_sort.cu",
    ["cuprim_radix_histogram", "cuprim_radix_onesweep", "cuprim_radix_block_sort"],
    headers: [RADIX_SORT_COMMON]
);

/// Key transform and stable tile ranking, shared with the classic sort.
pub(crate) const RADIX_SORT_COMMON: &str = header!("sort/radix_sort.cuh");

/// Shape of the radix sort kernels (`kernels/sort/radix_sort.cu`, and the
/// classic comparison path of `kernels/sort/radix_sort_classic.cu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SortPolicy {
    /// Threads per block of the onesweep pass and the one-block sort (at
    /// least 256: one thread per digit).
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

impl SortPolicy {
    /// Keys per tile.
    pub fn tile(&self) -> u64 {
        self.block as u64 * self.items as u64
    }
}

/// Radix sort for keys of `key_bytes` and values of `value_bytes` (0 for
/// keys alone); `shortcut` overrides the choice of the shortcuts, `wide`
/// asks for 64-bit output positions. A tile stages `tile * max(key, value)`
/// bytes in shared memory (plus 1 KiB of counters per warp unless they
/// share it), under the 48 KiB of static shared memory; every shape
/// compiles without spills on sm_80 and sm_90.
pub(crate) fn radix_sort(
    arch: u32,
    key_bytes: usize,
    float_keys: bool,
    value_bytes: usize,
    shortcut: Option<bool>,
    wide: bool,
) -> SortPolicy {
    let widest = key_bytes.max(value_bytes);
    // Shortcuts on: f64/u32 pairs with CUB's bench keys 18.9 ms against 23.6 at 2^28, uniform keys pay 0.3-0.9% (H100, BENCHMARKS.md).
    let shortcut = shortcut.unwrap_or(true);
    let (block, items, min_blocks, share) = if value_bytes == 0 {
        if widest > 4 {
            // 384x8 at 3 blocks/SM: 8-byte keys alone spill 4 bytes at x9 on sm_90.
            (384, 8, 3, false)
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
    } else if widest > 4 {
        // 384x14 shared at 2 blocks/SM: f64/u32 18.5 ms at 2^28 against 25.9 for 384x9 at 3, 0.83x CUB (H100, run 2573e23).
        (384, 14, 2, true)
    } else if float_keys {
        if !shortcut {
            // 384x19 shared: float pairs without the shortcuts spill past x19 (sm_80, sm_90).
            (384, 19, 2, true)
        } else if arch >= 90 {
            // 384x26 shared: f32/u32 8.37 ms at 2^28 against 8.59 at x24, 8.64 at x23, 0.98x CUB (H100, run 2573e23).
            (384, 26, 2, true)
        } else {
            // 384x21 shared on sm_80: the most without spills there.
            (384, 21, 2, true)
        }
    } else if arch >= 90 {
        // 384x28 shared: u32/u32 8.67 ms at 2^28 against 8.75 at x27, 8.83 at x26, 0.99x CUB (H100, run 2573e23).
        (384, 28, 2, true)
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
pub(crate) fn policy<K: Element, V: Element>(arch: u32, pairs: bool, shortcut: Option<bool>, wide: bool) -> SortPolicy {
    let value_bytes = if pairs { size_of::<V>() } else { 0 };
    radix_sort(arch, size_of::<K>(), K::KIND == Kind::Float, value_bytes, shortcut, wide)
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
pub(crate) struct Onesweep<K, V> {
    pub policy: SortPolicy,
    pub pairs: bool,
    pub wide: bool,
    _kv: PhantomData<fn() -> (K, V)>,
}

impl<K: Element, V: Element> Onesweep<K, V> {
    /// The plan on `arch`; `shortcut` overrides the policy's choice.
    pub fn new(arch: u32, pairs: bool, shortcut: Option<bool>, wide: bool) -> Self {
        Onesweep {
            policy: policy::<K, V>(arch, pairs, shortcut, wide),
            pairs,
            wide,
            _kv: PhantomData,
        }
    }
}

impl<K: Element, V: Element> Specialise for Onesweep<K, V> {
    fn template(&self) -> &'static Template {
        &RADIX_SORT
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_common::<K, V, W>(w, &self.policy, self.pairs);
        w.constant("CUPRIM_WIDE_OFFSETS", self.wide as i64);
        w.constant("CUPRIM_SORT_SHORTCUT", self.policy.shortcut as i64);
    }
}

/// The onesweep modules a sort of keys `K` (with values `V` when `pairs`)
/// may load: 32- and 64-bit output positions, with the policy's choice of
/// the shortcuts, or with `alternatives` the other choice (modules only
/// [`SortOptions::shortcuts`](super::SortOptions::shortcuts) reaches, for
/// the compile checks).
pub(crate) fn kernel_specs<K: Element, V: Element>(arch: u32, pairs: bool, alternatives: bool) -> Vec<KernelSpec> {
    let shortcut = policy::<K, V>(arch, pairs, None, false).shortcut != alternatives;
    [false, true]
        .into_iter()
        .map(|wide| {
            if pairs {
                KernelSpec::of(&Onesweep::<K, V>::new(arch, true, Some(shortcut), wide))
            } else {
                KernelSpec::of(&Onesweep::<K, K>::new(arch, false, Some(shortcut), wide))
            }
        })
        .collect()
}
