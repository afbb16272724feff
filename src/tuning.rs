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
/// Six resident blocks of 256 threads with 4 x 16 B loads each in flight
/// (96 KiB per SM) saturate HBM3; the 40 registers this allows keep the
/// (value, index) and u64-count variants free of spills (32 do not).
pub(crate) fn reduce(arch: u32) -> Policy {
    let _ = arch;
    Policy {
        block: 256,
        unroll: 4,
        blocks_per_sm: 6,
    }
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
/// 1.02 ms, 32 items 1.01 ms (more registers); 512 x 16 1.13 ms.
/// `CUPRIM_TUNE_SCAN=BLOCKxITEMS` overrides it, for tuning experiments.
pub(crate) fn scan(arch: u32, elem_bytes: usize) -> ScanPolicy {
    let _ = arch;
    if let Some((block, items)) = override_pair("CUPRIM_TUNE_SCAN") {
        return ScanPolicy { block, items };
    }
    ScanPolicy {
        block: 256,
        items: match elem_bytes {
            8.. => 12,
            4 => 24,
            _ => 32,
        },
    }
}

/// Reads `CUPRIM_TUNE_SCAN=AxB` from the environment once per process.
fn override_pair(name: &'static str) -> Option<(u32, u32)> {
    static SCAN: once_cell::sync::Lazy<Option<(u32, u32)>> = once_cell::sync::Lazy::new(|| {
        let v = std::env::var("CUPRIM_TUNE_SCAN").ok()?;
        let (a, b) = v.split_once('x')?;
        Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
    });
    debug_assert_eq!(name, "CUPRIM_TUNE_SCAN");
    *SCAN
}

/// scan_by_key tiles: each item is a (head, value) pair, so fewer per
/// thread than a plain scan (12 pairs of 8-byte values spill).
pub(crate) fn scan_by_key(arch: u32, elem_bytes: usize) -> ScanPolicy {
    let _ = arch;
    ScanPolicy {
        block: 256,
        items: if elem_bytes >= 8 { 8 } else { 16 },
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
    /// wave), a few wasted loads per tile otherwise.
    pub lookback_batch: u32,
}

impl SortPolicy {
    /// Keys per tile.
    pub fn tile(&self) -> u64 {
        self.block as u64 * self.items as u64
    }
}

/// Radix sort for keys of `key_bytes` and values of `value_bytes` (0 for
/// keys alone). A tile stages `tile * max(key, value)` bytes in shared
/// memory, kept near 27 KiB so that two 384-thread blocks fit an SM with
/// room to spare (static shared memory stops at 48 KiB per block); 80
/// registers per thread at two blocks per SM, no spills.
/// `CUPRIM_TUNE_SORT=BLOCKxITEMS` overrides the tile (BLOCK a multiple of
/// 32 from 256 to 1024; the tile in shared memory must stay under 48 KiB),
/// `CUPRIM_TUNE_SORT_MATCH=1` ranks with `__match_any_sync`, for tuning.
pub(crate) fn radix_sort(arch: u32, key_bytes: usize, value_bytes: usize) -> SortPolicy {
    let _ = arch;
    let widest = key_bytes.max(value_bytes);
    static TILE: once_cell::sync::Lazy<Option<(u32, u32)>> = once_cell::sync::Lazy::new(|| {
        let v = std::env::var("CUPRIM_TUNE_SORT").ok()?;
        let (a, b) = v.split_once('x')?;
        Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
    });
    static MATCH_ANY: once_cell::sync::Lazy<bool> =
        once_cell::sync::Lazy::new(|| std::env::var("CUPRIM_TUNE_SORT_MATCH").is_ok_and(|v| v == "1"));
    let (block, items) = match *TILE {
        Some((b, i)) if b % 32 == 0 && (256..=1024).contains(&b) && i >= 1 => (b, i),
        _ => (384, if widest > 4 { 9 } else { 18 }),
    };
    SortPolicy {
        block,
        items,
        min_blocks: (768 / block).max(1),
        hist_block: 256,
        hist_unroll: 4,
        hist_blocks_per_sm: 4,
        match_any: *MATCH_ANY,
        lookback_batch: 8,
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
