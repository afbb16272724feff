//! Tuning policy: per-architecture launch constants, kept apart from the
//! kernels (which take them as compile-time constants) and from the
//! algorithms (which only ask "how should I launch this family here?").

/// Launch shape of one kernel family on one architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Policy {
    /// Threads per block.
    pub block: u32,
    /// Independent 16-byte loads in flight per thread (`CUPRIM_UNROLL`).
    pub unroll: u32,
    /// Resident blocks per SM the grid is sized for (grid-stride loops
    /// cover the rest), so one wave fills the chip.
    pub blocks_per_sm: u32,
}

/// Element-wise and data-movement kernels: fill, transform, gather, scatter.
pub(crate) fn elementwise(arch: u32) -> Policy {
    match arch {
        // Hopper: 2048 threads per SM; 8 x 256 fills it. Four 16-byte loads
        // in flight per thread cover HBM3 latency at ~3 TB/s.
        90.. => Policy {
            block: 256,
            unroll: 4,
            blocks_per_sm: 8,
        },
        // Ampere and older: same shape, fewer loads needed in flight.
        _ => Policy {
            block: 256,
            unroll: 2,
            blocks_per_sm: 8,
        },
    }
}

impl Policy {
    /// Blocks for `items` work items: enough to cover them, at most one wave.
    pub fn grid(&self, items: u64, sm_count: u32) -> u32 {
        let needed = items.div_ceil(self.block as u64).max(1);
        let wave = (sm_count.max(1) * self.blocks_per_sm) as u64;
        needed.min(wave) as u32
    }
}

/// Single-pass reductions: reduce, transform_reduce, count, min/max_element.
/// Four resident blocks of 256 threads with 8 x 16 B loads each in flight
/// (128 KiB per SM): measured on H100 at 2^28 against 6 x 4 (the previous
/// policy), 8 x 4 and 4 x 4 of 512 threads, it is the one that reads
/// at CUB's speed or faster for f32, f64 and u32 (354.0 us f32 sum, CUB
/// 354.7 us; `bench-results/reduce-tune/`). Fewer blocks also mean fewer
/// partials for the last block to fold.
/// `CUPRIM_TUNE_REDUCE=BLOCKxUNROLLxBLOCKS_PER_SM` overrides it, for tuning.
pub(crate) fn reduce(arch: u32) -> Policy {
    let _ = arch;
    static OVERRIDE: once_cell::sync::Lazy<Option<Policy>> = once_cell::sync::Lazy::new(|| {
        let v = std::env::var("CUPRIM_TUNE_REDUCE").ok()?;
        let mut it = v.split('x').map(|p| p.trim().parse::<u32>().ok());
        let (block, unroll, blocks_per_sm) = (it.next()??, it.next()??, it.next()??);
        (block % 32 == 0 && (64..=1024).contains(&block) && (1..=16).contains(&unroll) && blocks_per_sm >= 1).then_some(Policy {
            block,
            unroll,
            blocks_per_sm,
        })
    });
    OVERRIDE.unwrap_or(Policy {
        block: 256,
        unroll: 8,
        blocks_per_sm: 4,
    })
}

/// Whether reductions load with `ld.global.nc.L1::no_allocate.L2::256B`
/// (1) or plain loads (0, the default: measured equal within noise on H100
/// at 2^28). `CUPRIM_TUNE_STREAM=0|1` overrides, for tuning.
pub(crate) fn stream_loads(arch: u32) -> bool {
    static OVERRIDE: once_cell::sync::Lazy<Option<bool>> =
        once_cell::sync::Lazy::new(|| std::env::var("CUPRIM_TUNE_STREAM").ok().map(|v| v == "1"));
    let _ = arch;
    OVERRIDE.unwrap_or(false)
}

/// find_first / any / all: the early exit needs few blocks; four per SM
/// leave registers for the predicate without spills.
pub(crate) fn find(arch: u32) -> Policy {
    let _ = arch;
    Policy {
        block: 256,
        unroll: 4,
        blocks_per_sm: 4,
    }
}

/// Tile shape of the single-pass scan for elements of `elem_bytes` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ScanPolicy {
    /// Threads per block.
    pub block: u32,
    /// Consecutive elements per thread (a tile is `block * items`).
    pub items: u32,
    /// Resident blocks per SM the kernel is compiled for
    /// (`__launch_bounds__`), which caps its registers.
    pub min_blocks: u32,
}

impl ScanPolicy {
    /// Elements per tile.
    pub fn tile(&self) -> u64 {
        self.block as u64 * self.items as u64
    }
}

/// Scan (and copy_if) tiles of 256 threads: 24 items of 4 bytes (24 KiB),
/// 12 of 8 bytes, 32 of 1 or 2 bytes (a whole number of 16-byte vectors per
/// thread). Measured on H100 at 2^28 f32: 16 items 1.10 ms, 24 items
/// 1.02 ms, 32 items 1.01 ms (more registers); 512 x 16 1.13 ms. A later
/// run (`bench-results/reduce-tune/scan-tune.txt`): 128 x 24 0.984 ms
/// against 1.001 ms for 256 x 24 (128 x 32 0.985, 256 x 20 0.987, 384 x 16
/// 1.126, 512 x 12 1.091), so 4-byte elements use 128-thread tiles. Once
/// the kernel kept its items in shared memory across the look-back (32
/// registers), 16 resident blocks per SM: 0.892 ms f32 / 0.872 ms u32
/// against 0.954 / 0.916 at the default bound and 0.910 / 0.912 at 12
/// (CUB 0.883 / 0.882 in the same run; `bench-results/scan-tune/`).
/// Once the deterministic look-back staged 2 KiB per block (14 of those
/// blocks fit an SM), 256 x 24 at 8 blocks per SM took over: f32 inclusive
/// at 2^28, deterministic, 0.845 ms against 0.897 / 0.889 for 128 x 24 x 16,
/// 0.885 for 256 x 20 x 8 and 0.923 for 128 x 20 x 16 (CUB 0.884 in the same
/// call; `bench-results/scan-windows2/tiles-e62df8c.txt`): half as many
/// tiles, so look-backs are shallower.
/// 8-byte elements: 256 x 12 (1.603 ms f64, CUB 1.700; 128 x 12 x 8 1.753).
/// `CUPRIM_TUNE_SCAN=BLOCKxITEMS[xMIN_BLOCKS]` overrides it, for tuning experiments.
pub(crate) fn scan(arch: u32, elem_bytes: usize) -> ScanPolicy {
    let _ = arch;
    if let Some((block, items, min_blocks)) = override_triple("CUPRIM_TUNE_SCAN") {
        return ScanPolicy { block, items, min_blocks };
    }
    match elem_bytes {
        8.. => ScanPolicy {
            block: 256,
            items: 12,
            min_blocks: 1,
        },
        4 => ScanPolicy {
            block: 256,
            items: 24,
            min_blocks: 8,
        },
        _ => ScanPolicy {
            block: 256,
            items: 32,
            min_blocks: 1,
        },
    }
}

/// Reads `CUPRIM_TUNE_SCAN=AxB` or `AxBxC` (C defaults to 1) from the
/// environment once per process.
fn override_triple(name: &'static str) -> Option<(u32, u32, u32)> {
    static SCAN: once_cell::sync::Lazy<Option<(u32, u32, u32)>> = once_cell::sync::Lazy::new(|| {
        let v = std::env::var("CUPRIM_TUNE_SCAN").ok()?;
        let parts: Vec<u32> = v.split('x').map(|p| p.trim().parse().ok()).collect::<Option<_>>()?;
        match parts[..] {
            [a, b] => Some((a, b, 1)),
            [a, b, c] => Some((a, b, c)),
            _ => None,
        }
    });
    debug_assert_eq!(name, "CUPRIM_TUNE_SCAN");
    *SCAN
}

/// Windows of 32 predecessors a deterministic look-back stages in shared
/// memory at a time (kernels/lookback.cuh): 32 * windows values per block.
/// A deeper look-back reads its windows again, that many per group. 16
/// windows of f32 (2 KiB) leave room for 14 of the 4-byte scan's blocks per
/// SM instead of 16, yet measured best (H100, f32 inclusive at 2^28, one
/// call, `bench-results/scan-windows2/`): 16 windows 0.893 ms, 8 (16 blocks
/// fit) 1.290 ms, 4 1.294 ms, fast mode 0.876 ms. Look-backs often run 8 to
/// 16 windows deep, and each group read again costs a round trip to L2 on
/// the path every later tile waits on. `CUPRIM_TUNE_SCAN_WINDOWS=N`
/// overrides it, for tuning experiments.
pub(crate) fn scan_lookback_windows(arch: u32, elem_bytes: usize) -> u32 {
    let _ = (arch, elem_bytes);
    static OVERRIDE: once_cell::sync::Lazy<Option<u32>> = once_cell::sync::Lazy::new(|| {
        std::env::var("CUPRIM_TUNE_SCAN_WINDOWS")
            .ok()?
            .trim()
            .parse()
            .ok()
            .filter(|&n| n >= 1)
    });
    OVERRIDE.unwrap_or(16)
}

/// copy_if / partition tiles: like the scan's, but its kernel keeps more
/// live (the flags and the selected count), so for 4-byte elements 128 x 24
/// at 9 resident blocks per SM, the most without spills (56 registers). Tuning
/// run on H100, copy_if keeping half of 2^28 u32: 0.794 ms at 12 (which
/// spills a few bytes), 0.908 ms at 16, 0.904 ms at the default bound.
pub(crate) fn select(arch: u32, elem_bytes: usize) -> ScanPolicy {
    if override_triple("CUPRIM_TUNE_SCAN").is_none() && elem_bytes == 4 {
        return ScanPolicy {
            block: 128,
            items: 24,
            min_blocks: 9,
        };
    }
    scan(arch, elem_bytes)
}

/// scan_by_key tiles: each item is a (head, value) pair, so fewer per
/// thread than a plain scan (12 pairs of 8-byte values spill).
pub(crate) fn scan_by_key(arch: u32, elem_bytes: usize) -> ScanPolicy {
    let _ = arch;
    ScanPolicy {
        block: 256,
        items: if elem_bytes >= 8 { 8 } else { 16 },
        min_blocks: 1,
    }
}

/// Shape of the radix sort kernels (kernels/radix_sort.cu, and the
/// classic comparison path of kernels/radix_sort_classic.cu).
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
    /// Find equal digits in a warp with `__match_any_sync` rather than one
    /// ballot per digit bit.
    pub match_any: bool,
    /// Look-back words each digit's thread reads per round trip to L2:
    /// fewer round trips when many tiles wait at once (small inputs, one
    /// wave), a few wasted loads per tile otherwise. Measured on H100,
    /// keys u32 at 2^28: 2 words 8.70 ms, 4 8.83 ms, 8 8.94 ms; again with
    /// early counts at three blocks per SM (384 x 18): 1 word 7.08 ms, 2
    /// 6.87 ms, 4 6.96 ms (`bench-results/sort-tune/`).
    pub lookback_batch: u32,
    /// Longest back-off (ns) between polls of a look-back word not yet
    /// published (doubling from 32 ns); 0 spins without sleeping.
    pub lookback_sleep_max: u32,
    /// Skip passes in which every key has the same digit and copy tiles
    /// whose keys share one digit without ranking them (CUB copies such
    /// tiles too). On by default: on H100 at 2^28 f64/u32 pairs with two
    /// constant low bytes (CUB's bench keys) take 18.9 ms instead of 23.6;
    /// uniform random keys pay 0.3-0.6% (u32/u32 9.03 against 9.00 ms,
    /// keys u32 6.68 against 6.63).
    pub shortcut: bool,
    /// Keep the onesweep pass's ranking counters and its exchange buffer in
    /// the same shared memory (as CUB does): one more barrier per tile, and
    /// room for tiles such as CUB's sm_90 shapes (384 x 23 for 4-byte
    /// pairs, 384 x 15 for 8-byte keys with 4-byte values), which do not
    /// fit 48 KiB beside 1 KiB of counters per warp. On for pairs, whose
    /// tiles it enlarges; keys alone keep three blocks per SM without it.
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
/// asks for 64-bit output positions. Measured on H100 at 2^20, 2^24 and
/// 2^28 (`bench-results/sort-tune/`, `sort-share-47efba2/`,
/// `sort-defaults-9be3fb7/`, `sort-ab-dirty/`), after ranking was cut to
/// one vote per digit bit on a single predicate (about a quarter fewer
/// instructions per pass); every shape here compiles without spills on
/// sm_80 and sm_90:
/// - keys of at most 4 bytes alone: 384 x 21 at three blocks per SM (56
///   registers) on sm_90, 20 on sm_80: u32 keys 5.29 ms at 2^28 against
///   5.41 ms at 20 (CUB 6.42); shared counters at two blocks were 13%
///   slower; float keys take the same shape (no spills with the shortcuts;
///   384 x 14 without them, which spill at 18);
/// - pairs of at most 4 bytes: counters shared with the exchange buffer
///   (as CUB does), two blocks per SM, 80 registers: on sm_90 384 x 28 for
///   integer keys (u32/u32 8.67 ms against 8.75 at 27, 8.83 at 26, 8.99 at
///   24; CUB 8.86 in that call), 384 x 26 for float keys (f32/u32 8.37 ms,
///   CUB 8.48; 8.59 at 24, 8.64 at 23); 384 x 23 on sm_80 (21 for
///   float keys), 19 for float keys without the shortcuts (the timings of
///   float-key pairs above were taken with 4 to 12 bytes of spills, since
///   removed);
/// - pairs with 8-byte keys or values: shared counters, 384 x 14 at two
///   blocks per SM: f64/u32 18.5 ms with the shortcuts (24.0 ms without;
///   the earlier 384 x 9 at three blocks 25.9 ms);
/// - 8-byte keys alone: 384 x 8 at three blocks per SM (9 spills 4 bytes).
///
/// With 64-bit output positions pairs of at most 4 bytes take at most 21
/// keys per thread (22 spills).
///
/// A tile stages `tile * max(key, value)` bytes in shared memory, plus
/// 1 KiB of counters per warp unless they share it; static shared memory stops at 48 KiB per
/// block, which is what bounds the tiles.
/// `CUPRIM_TUNE_SORT=BLOCKxITEMS` overrides the tile (BLOCK a multiple of
/// 32 from 256 to 1024; the tile in shared memory must stay under 48 KiB),
/// `CUPRIM_TUNE_SORT_MATCH=1` ranks with `__match_any_sync`,
/// `CUPRIM_TUNE_SORT_MINB=N` compiles the onesweep pass for N resident
/// blocks per SM, `CUPRIM_TUNE_SORT_LB=N` reads N look-back words per round trip,
/// `CUPRIM_TUNE_SORT_SLEEP=NS` caps the look-back back-off (0: no pauses),
/// `CUPRIM_TUNE_SORT_SHORTCUT=0|1` turns the shortcuts off or on,
/// `CUPRIM_TUNE_SORT_SHARE=0|1` keeps counters and exchange buffer apart or shared, for tuning.
pub(crate) fn radix_sort(
    arch: u32,
    key_bytes: usize,
    float_keys: bool,
    value_bytes: usize,
    shortcut: Option<bool>,
    wide: bool,
) -> SortPolicy {
    let widest = key_bytes.max(value_bytes);
    static TILE: once_cell::sync::Lazy<Option<(u32, u32)>> = once_cell::sync::Lazy::new(|| {
        let v = std::env::var("CUPRIM_TUNE_SORT").ok()?;
        let (a, b) = v.split_once('x')?;
        Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
    });
    static LB_BATCH: once_cell::sync::Lazy<Option<u32>> = once_cell::sync::Lazy::new(|| {
        let b = std::env::var("CUPRIM_TUNE_SORT_LB").ok()?.trim().parse::<u32>().ok()?;
        (1..=64).contains(&b).then_some(b)
    });
    static LB_SLEEP: once_cell::sync::Lazy<Option<u32>> =
        once_cell::sync::Lazy::new(|| std::env::var("CUPRIM_TUNE_SORT_SLEEP").ok()?.trim().parse::<u32>().ok());
    static MIN_BLOCKS: once_cell::sync::Lazy<Option<u32>> = once_cell::sync::Lazy::new(|| {
        let b = std::env::var("CUPRIM_TUNE_SORT_MINB").ok()?.trim().parse::<u32>().ok()?;
        (1..=8).contains(&b).then_some(b)
    });
    static SHORTCUT: once_cell::sync::Lazy<Option<bool>> =
        once_cell::sync::Lazy::new(|| match std::env::var("CUPRIM_TUNE_SORT_SHORTCUT").ok()?.trim() {
            "1" => Some(true),
            "0" => Some(false),
            _ => None,
        });
    static SHARE: once_cell::sync::Lazy<Option<bool>> =
        once_cell::sync::Lazy::new(|| match std::env::var("CUPRIM_TUNE_SORT_SHARE").ok()?.trim() {
            "1" => Some(true),
            "0" => Some(false),
            _ => None,
        });
    static MATCH_ANY: once_cell::sync::Lazy<bool> =
        once_cell::sync::Lazy::new(|| std::env::var("CUPRIM_TUNE_SORT_MATCH").is_ok_and(|v| v == "1"));
    let shortcut = shortcut.or(*SHORTCUT).unwrap_or(true);
    let (block, items, min_blocks, share) = if value_bytes == 0 {
        if widest > 4 {
            // 8-byte keys alone spill 4 bytes at 9 items for sm_90: 8.
            (384, 8, 3, false)
        } else {
            // Float keys without the shortcuts spill at 18 items on sm_80
            // and sm_90 (the order transform's registers): 14 there. 21
            // items fill the 48 KiB of static shared memory (22 does not fit).
            let most = if arch >= 90 { 21 } else { 20 };
            (384, if float_keys && !shortcut { 14 } else { most }, 3, false)
        }
    } else if widest > 4 {
        (384, 14, 2, true)
    } else if float_keys {
        // sm_90 at 2^28, f32/u32: 8.51 ms at 26, 8.59 at 24, 8.64 at 23.
        // sm_80 keeps the shapes measured before (21; 19 without the
        // shortcuts, past which ptxas spills).
        let most = if arch >= 90 { 26 } else { 21 };
        (384, if shortcut { most } else { 19 }, 2, true)
    } else {
        // sm_90 at 2^28, u32/u32: 8.67 ms at 28 and 29, 8.75 at 27, 8.83 at
        // 26, 8.99 at 24 (CUB 8.86); sm_80 spills at 24 (not at 23).
        (384, if arch >= 90 { 28 } else { 23 }, 2, true)
    };
    // 64-bit output positions take registers: pairs of at most 4 bytes at
    // most 21 keys per thread (22 spills 8 to 16 bytes on sm_80 and sm_90;
    // f64/u32 is lean at 14 and spills at 13).
    let items = if wide && value_bytes > 0 && widest <= 4 {
        items.min(21)
    } else {
        items
    };
    let (block, items) = match *TILE {
        Some((b, i)) if b % 32 == 0 && (256..=1024).contains(&b) && i >= 1 => (b, i),
        _ => (block, items),
    };
    SortPolicy {
        block,
        items,
        min_blocks: MIN_BLOCKS.unwrap_or(min_blocks),
        hist_block: 256,
        hist_unroll: 4,
        hist_blocks_per_sm: 4,
        match_any: *MATCH_ANY,
        lookback_batch: LB_BATCH.unwrap_or(2),
        lookback_sleep_max: LB_SLEEP.unwrap_or(256),
        shortcut,
        share_counters: SHARE.unwrap_or(share),
    }
}

/// The classic comparison sort (kernels/radix_sort_classic.cu): 384
/// threads, 18 keys per thread (9 past 4-byte keys or values), two blocks
/// per SM, which its three kernels fit without spills.
pub(crate) fn radix_sort_classic(arch: u32, key_bytes: usize, value_bytes: usize) -> SortPolicy {
    let items = if key_bytes.max(value_bytes) > 4 { 9 } else { 18 };
    SortPolicy {
        block: 384,
        items,
        min_blocks: 2,
        share_counters: false,
        ..radix_sort(arch, key_bytes, false, value_bytes, Some(false), false)
    }
}

/// Histogram launch shape (kernels/histogram.cu).
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

/// Histogram: 256-thread blocks, two 16-byte loads in flight (the bin
/// search and the atomics give the memory system time), counters copied
/// per warp while the copies fit in 32 KiB (256 bins: 8 copies, 8 KiB).
pub(crate) fn histogram(arch: u32) -> HistogramPolicy {
    let _ = arch;
    HistogramPolicy {
        launch: Policy {
            block: 256,
            unroll: 2,
            blocks_per_sm: 8,
        },
        replica_bytes: 32 << 10,
        max_shared_bins: 16 << 10,
        max_window_passes: 4,
        window_min_samples_per_bin: 128,
        edges_shared: 2048,
    }
}

/// kNN kd-tree queries: one thread per query, 128 per block (the traversal
/// stack lives in shared memory, `depth x 128 x (sizeof(F) + 4)` bytes per
/// block, under 48 KiB for any tree of fewer than 2^31 points).
pub(crate) fn knn_query(arch: u32) -> Policy {
    let _ = arch;
    Policy {
        block: 128,
        unroll: 1,
        blocks_per_sm: 16,
    }
}

/// Brute-force kNN shape for points of `point_bytes` bytes: queries per
/// block (their columns take at most 32 KiB of shared memory when D is too
/// large for registers) and points per shared tile (at most 12 KiB).
pub(crate) fn knn_brute(arch: u32, point_bytes: usize) -> (u32, u32) {
    let _ = arch;
    let pb = point_bytes.max(1) as u32;
    let bq = if pb <= 128 { 128 } else { ((32768 / pb) / 32 * 32).clamp(32, 128) };
    let tile = (12288 / pb).clamp(8, 256);
    (bq, tile)
}
