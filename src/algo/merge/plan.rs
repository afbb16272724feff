//! Plan and launches of `kernels/merge/merge.cu`: the tile cuts by merge
//! path (`cuprim_merge_partition`), then one block per output tile
//! (`cuprim_merge`), keys alone or with values.

use crate::algo::scan::plan::TilePolicy;
use crate::cmp::Comparator;
use crate::device::{CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::jit::{header, template, KernelSpec, SpecWriter, Specialise, Template};
use std::marker::PhantomData;
use std::mem::size_of;

/// The merge-path search and serial merge (`kernels/block/merge_path.cuh`),
/// for every kernel that merges.
pub(crate) const MERGE_PATH: &str = header!("block/merge_path.cuh");

template!(MERGE, "merge/merge.cu", [
    "cuprim_merge_partition",
    "cuprim_merge_partition_warp",
    "cuprim_merge",
    "cuprim_merge_fused",
    "cuprim_merge_sort_tile",
    "cuprim_merge_sort_partition",
    "cuprim_merge_sort_partition_warp",
    "cuprim_merge_sort_pass",
    "cuprim_merge_sort_pass_fused"
], headers: [MERGE_PATH, MERGE_TILE, SORT_TILE]);

/// The merge's tile (`kernels/merge/merge_tile.cuh`): shared by the merge
/// and merge sort and by the merge of input expressions.
pub(crate) const MERGE_TILE: &str = header!("merge/merge_tile.cuh");

/// The merge sort's tile (`kernels/merge/sort_tile.cuh`): shared by the
/// sort of buffers and the sort of input expressions.
pub(crate) const SORT_TILE: &str = header!("merge/sort_tile.cuh");

/// Threads per block of the partition kernel (one cut per thread; not tuned, it reads a few lines per tile).
pub(crate) const PARTITION_BLOCK: u32 = 256;

/// Merges of at least this many tiles cut them with the warp-bracketed
/// partition (`cuprim_merge_partition_warp`: a warp's first and last cut
/// searched in full, the 30 between only between those two): u32 halves at
/// 2^28 took 42 us against 58 us for the plain partition, at 2^20 and 2^24
/// (137 and 2185 tiles) 1.3-1.7 us longer (H100, kernel harness of
/// i19-merge; the bench at `1dfae75`: 789.1 us in all against 805.5 at
/// `3e1c3b6`); the bound between is not measured.
pub const WARP_PARTITION_TILES: u64 = 4096;

/// Merges of fewer tiles than this find each tile's cuts in the merge
/// kernel itself (`cuprim_merge_fused`: two warps, 32 probes a step), one
/// launch instead of two; larger ones keep the partition kernels. u32
/// halves at 2^20 / 2^24 (137 / 2185 tiles): 12.0 / 70.2 us against 17.9 /
/// 74.0 with the partition launch; at 2^28 (34 953 tiles) 1016 us against
/// 787 (every block waits for its own searches; H100, one call, `6b5ce70`).
pub const FUSED_MERGE_TILES_BELOW: u64 = 4096;

/// Merge-sort passes of fewer tiles than this find their cuts in the pass
/// kernel itself (`cuprim_merge_sort_pass_fused`); larger ones launch a
/// partition before each pass ([`WARP_CUTS_SORT_TILES_BELOW`]). f32 by a
/// user comparator, passes at 8 blocks per SM: at 2^20 (373 tiles of
/// 2816) 71.7 us fused against 85.4 us with the warp partition, at 2^22
/// (964 tiles of 4352) 178.4 against 211.7 us (H200, one call, `0354fc8`);
/// at 2^23 (1928 tiles) 370.0 against 352.7 us (H200, one call,
/// `b2aa9b2`); at 2^24 (3856 tiles) 0.740 ms fused against 0.723 ms (H200,
/// one call, `d952bf7`). The bound lies between 964 and 1928 tiles.
pub const FUSED_SORT_TILES_BELOW: u64 = 1536;

/// Merge sorts of fewer tiles than this (and at least
/// [`FUSED_SORT_TILES_BELOW`]) find each pass's cuts with a warp per cut
/// (`cuprim_merge_sort_partition_warp`, 32 probes a step); larger ones with
/// a thread per cut (`cuprim_merge_sort_partition`, a bisection), whose
/// loads are fewer: f32 by a user comparator at 2^24 (3856 tiles) 0.728 ms
/// against 0.758 ms, at 2^28 (34 953 tiles) 13.24 against 12.12 ms (H200,
/// one call, `d952bf7`); at 2^26 (8738 tiles of 7680) 3.080 against 2.919
/// ms (H200, one call, `0354fc8`).
pub const WARP_CUTS_SORT_TILES_BELOW: u64 = 8192;

/// How a merge sort's passes find their tiles' cuts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SortCuts {
    /// In the pass kernel (`cuprim_merge_sort_pass_fused`).
    Fused,
    /// A partition launch, a warp per cut.
    Warp,
    /// A partition launch, a thread per cut.
    Thread,
}

/// The cuts of a merge sort of `tiles` tiles. Experiment overrides
/// (feature `merge-tuning`): `CUPRIM_SORT_FUSED=1` (fused) or `0` (a
/// partition launch), `CUPRIM_SORT_PARTITION=warp` or `thread`.
pub(crate) fn sort_cuts(tiles: u64) -> SortCuts {
    let fused = tiles < FUSED_SORT_TILES_BELOW;
    let warp = tiles < WARP_CUTS_SORT_TILES_BELOW;
    #[cfg(feature = "merge-tuning")]
    let (fused, warp) = (
        forced("CUPRIM_SORT_FUSED").unwrap_or(fused),
        std::env::var("CUPRIM_SORT_PARTITION").map(|v| v == "warp").unwrap_or(warp),
    );
    match (fused, warp) {
        (true, _) => SortCuts::Fused,
        (false, true) => SortCuts::Warp,
        (false, false) => SortCuts::Thread,
    }
}

/// Experiment overrides (feature `merge-tuning`, for the merge bench's
/// comparisons only): `CUPRIM_MERGE_FUSED` / `CUPRIM_SORT_FUSED` = 0 or 1
/// force the partition launch or the fused search; `CUPRIM_MERGE_LOAD` =
/// 0 to 3 picks how 4-byte keys reach shared memory (`kernels/merge/merge.cu`).
#[cfg(feature = "merge-tuning")]
fn forced(var: &str) -> Option<bool> {
    std::env::var(var).ok().map(|v| v == "1")
}

/// Experiment override (feature `merge-tuning`): `CUPRIM_SORT_TILE` =
/// `block,items,min_blocks` gives the keys-alone merge sort that tile shape
/// (`CUPRIM_SORT_PAIRS_TILE` the key-value sort).
#[cfg(feature = "merge-tuning")]
pub(crate) fn tune_sort_tile(policy: &mut TilePolicy) {
    tune_tile("CUPRIM_SORT_TILE", policy)
}

#[cfg(feature = "merge-tuning")]
fn tune_tile(var: &str, policy: &mut TilePolicy) {
    if let Ok(v) = std::env::var(var) {
        let f: Vec<u32> = v
            .split(',')
            .map(|x| x.trim().parse().expect("tile override: block,items,min_blocks"))
            .collect();
        *policy = TilePolicy {
            block: f[0],
            items: f[1],
            min_blocks: f[2],
        };
    }
}

/// Whether a merge of `tiles` tiles takes `cuprim_merge_fused`.
pub(crate) fn fused_merge(tiles: u64) -> bool {
    #[cfg(feature = "merge-tuning")]
    if let Some(f) = forced("CUPRIM_MERGE_FUSED") {
        return f;
    }
    tiles < FUSED_MERGE_TILES_BELOW
}

/// Merges and sorts of fewer elements than this take the small tiles of
/// 4-byte keys alone (see `merge_policy`); between the sizes measured
/// (2^20 and 2^24), not tuned.
pub const SMALL_TILES_BELOW: u64 = 1 << 22;

/// Merge tiles by the bytes of the wider of key and value (a shared-memory
/// slot holds either), and whether values follow. 8-byte slots keep the
/// first, unmeasured shape (CUB's DeviceMerge's: 512 x 7, 2 blocks per SM;
/// odd item counts keep the blocked shared-memory writes free of bank
/// conflicts). The merge sort (`sort.rs`) runs the same tiles; its tile
/// kernel adds a u16 position per element for pairs, at most 3585 x 8 +
/// 7168 bytes of static shared memory. On sm_80 and later 4-byte keys
/// alone are loaded by `cp.async` (no registers held by loads in flight).
///
/// `arch` 0 (not known: the tests' tile probes) takes the sm_80+ shapes.
/// `len`: the elements merged or sorted (the output's length).
pub(crate) fn merge_policy(arch: u32, slot_bytes: usize, pairs: bool, len: u64) -> TilePolicy {
    let async_keys = !pairs && (arch == 0 || arch >= 80);
    match slot_bytes {
        // 8-byte keys or values: 3584 per tile, 28 KiB of shared memory.
        8.. => TilePolicy {
            block: 512,
            items: 7,
            min_blocks: 2,
        },
        // 4-byte keys alone, cp.async loads (sm_80+): 7680 per tile at 4 blocks per SM (32 registers, no spills on
        // sm_80 / 90; CUB's DeviceMerge shape; sm_75 holds 1024 threads per SM, so it keeps 256 x 11): u32 halves at
        // 2^24 / 2^28 in 73.1 / 805.5 us against 72.9 / 839.7 for 256 x 15 at 6 (whose partition of twice the tile
        // boundaries took 106 us at 2^28), the f32 merge sort at 2^20 / 2^24 in 151.6 us / 1.017 ms against 144.4 us /
        // 1.042 ms (H100, one call, 3e1c3b6 and 3e86695); register loads at 256 x 11 and 4 took 80.4 / 986 us (harness).
        // Small inputs (below SMALL_TILES_BELOW): 2816 per tile, more blocks to spread: at 6 blocks per SM u32 halves
        // at 2^20 took 15.0 us, the f32 merge sort at 2^20 133 us (kernel harness, H100, i19-merge) against 19.8 /
        // 151.6 us for 512 x 15 (bench); 5 blocks (48 registers), since at 6 (40) NVRTC 13's ptxas spilled 4 bytes in
        // the u32 sort pass on sm_90. At 2^20 (373 tiles) every tile is resident at 5 as at 6 (660 / 792 on 132 SMs).
        // Bench at 5 (1dfae75): merge 17.7 us, sort 136.5 us at 2^20.
        4 if async_keys && len < SMALL_TILES_BELOW => TilePolicy {
            block: 256,
            items: 11,
            min_blocks: 5,
        },
        4 if async_keys => TilePolicy {
            block: 512,
            items: 15,
            min_blocks: 4,
        },
        // 1 and 2 bytes, pairs up to 4, and sm_75 (register loads): 2816 per tile at 4 blocks per SM (64 registers, which
        // the batched loads need): u32 halves at 2^24 / 2^28 in 79.6 us / 0.985 ms against 109 us / 1.41 ms at 5
        // without batching (H100, variant of 920d431); 256 x 11 beat 512 x 15, 256 x 15 and 128 x 15 (1aeadf7).
        _ => TilePolicy {
            block: 256,
            items: 11,
            min_blocks: 4,
        },
    }
}

/// Whether the keys-alone merge of `key_bytes`-byte keys loads its tiles by
/// cp.async / the bulk copy engine as 4-byte keys do (`CUPRIM_MERGE_WIDE`):
/// 8-byte keys on sm_80 and later. The merge sort's passes keep register
/// loads for them (not measured).
fn wide_merge_loads(arch: u32, key_bytes: usize) -> bool {
    key_bytes == 8 && (arch == 0 || arch >= 80)
}

/// The merge tiles of 8-byte keys alone with those loads: 3328 per tile, 26 KiB, at 4 blocks per SM: u64 halves
/// at 2^20 / 2^24 / 2^27 in 14.0 / 95.9-96.7 / 560-561 us against 16.2 / 122.6 / 758 in 512 x 7 at 2 with register
/// loads (CUB 20.5 / 97.2 / 593; H200, h200-sweeps-a5a4265/merge-tiles). 256 x 15 took the same but spills 48
/// bytes in the module's merge-sort kernels on sm_90 (sm_80 at 256 x 11 at 5); 512 x 11 at 3 555 us at 2^27,
/// 99.3-99.7 at 2^24; 256 x 15 at 3 578-582 at 2^27.
const WIDE_MERGE_TILE: TilePolicy = TilePolicy {
    block: 256,
    items: 13,
    min_blocks: 4,
};

/// Keys-alone sorts of 4-byte keys (sm_80+) from [`SMALL_TILES_BELOW`] up
/// to this many elements take 256 x 17 tiles (4352) at 6 blocks per SM,
/// CUB's merge-sort shape: f32 by a user comparator at 2^24 0.808 ms
/// against 0.837 for 512 x 15 at 4 (3 runs; CUB 0.824), 512 x 17 at 3
/// 0.835, 256 x 15 at 8 0.838 (H200, one call, i19-load). The bound keeps
/// them below 4096 tiles, the passes measured; above it the sort keeps the
/// merge's tiles. 512 x 19 tiles there (one pass fewer at 2^26 and 2^28)
/// measured 2.784 / 11.109 ms against 2.929 / 12.143 ms (H200, `1e83b81`),
/// but the expression form's tile kernel spills 32 bytes at that shape.
pub const SORT_TILES_4352_BELOW: u64 = 4096 * 4352;

/// The merge sort's tiles: [`merge_policy`]'s, except 4-byte keys alone
/// between [`SMALL_TILES_BELOW`] and [`SORT_TILES_4352_BELOW`] elements.
pub(crate) fn sort_policy(arch: u32, slot_bytes: usize, pairs: bool, len: u64) -> TilePolicy {
    let async_keys = !pairs && (arch == 0 || arch >= 80);
    if async_keys && slot_bytes == 4 && (SMALL_TILES_BELOW..SORT_TILES_4352_BELOW).contains(&len) {
        TilePolicy {
            block: 256,
            items: 17,
            min_blocks: 6,
        }
    } else {
        merge_policy(arch, slot_bytes, pairs, len)
    }
}

/// Resident blocks per SM the merge sort's pass kernels are built for: for
/// 4-byte keys alone on sm_80 and sm_90 (2048 threads per SM), as many as
/// fill the SM's threads (32 registers, no spills); otherwise the tile's
/// own. f32 by a user comparator at 2^24 (256 x 17 tiles, 6 blocks per SM
/// for the tile sort): 0.740 ms with the passes at 8 or 7, 0.781 ms at 6;
/// 512 x 17 tiles 0.755 ms at 4, 0.810 ms at 3 (H200, one call, `d952bf7`).
/// Key-value passes (u32 values, 256 x 11 tiles at 4) ran faster at 8
/// (2^24: 1.656 against 1.957 ms; H200, one call, `1e83b81`) but spill 12-64
/// bytes above 4 blocks, so they keep the tile's.
pub(crate) fn pass_blocks(arch: u32, policy: TilePolicy, slot_bytes: usize) -> u32 {
    let full_sm = arch == 0 || arch == 80 || arch >= 90;
    if slot_bytes == 4 && full_sm {
        (2048 / policy.block).max(policy.min_blocks)
    } else {
        policy.min_blocks
    }
}

/// One input or the output of a merge on the device: `len` keys at
/// `keys`, and as many values at `values` (null for keys alone).
#[derive(Clone, Copy)]
pub(crate) struct Side<K, V> {
    pub keys: Ptr<K>,
    pub values: Ptr<V>,
    pub len: u64,
}

/// One specialisation of the merge kernels: keys `K`, values `V` (`K`
/// again, unused, for keys alone), comparator `C`.
pub(crate) struct Merge<'a, K, V, C> {
    pub policy: TilePolicy,
    /// Resident blocks per SM the merge sort's pass kernels are built for
    /// (`CUPRIM_PASS_MIN_BLOCKS`): the tile's own, or more ([`pass_blocks`]).
    pub pass_min_blocks: u32,
    /// Values follow the keys.
    pub pairs: bool,
    /// 8-byte keys alone reach shared memory as 4-byte ones do (`CUPRIM_MERGE_WIDE`): the merge only.
    pub wide_loads: bool,
    pub cmp: &'a C,
    _t: PhantomData<fn() -> (K, V)>,
}

impl<'a, K: Element, C: Comparator<K>> Merge<'a, K, K, C> {
    /// The keys-alone merge of `len` elements.
    pub fn keys(arch: u32, cmp: &'a C, len: u64) -> Self {
        let wide_loads = wide_merge_loads(arch, size_of::<K>());
        let policy = if wide_loads {
            WIDE_MERGE_TILE
        } else {
            merge_policy(arch, size_of::<K>(), false, len)
        };
        Merge {
            policy,
            pass_min_blocks: policy.min_blocks,
            pairs: false,
            wide_loads,
            cmp,
            _t: PhantomData,
        }
    }

    /// The keys-alone sort of `len` elements.
    pub fn sort_keys(arch: u32, cmp: &'a C, len: u64) -> Self {
        let policy = sort_policy(arch, size_of::<K>(), false, len);
        Merge {
            policy,
            pass_min_blocks: pass_blocks(arch, policy, size_of::<K>()),
            wide_loads: false,
            ..Self::keys(arch, cmp, len)
        }
    }
}

impl<'a, K: Element, V: Element, C: Comparator<K>> Merge<'a, K, V, C> {
    /// The key-value merge or sort of `len` elements.
    pub fn pairs(arch: u32, cmp: &'a C, len: u64) -> Self {
        let policy = merge_policy(arch, size_of::<K>().max(size_of::<V>()), true, len);
        Merge {
            policy,
            pass_min_blocks: policy.min_blocks,
            pairs: true,
            wide_loads: false,
            cmp,
            _t: PhantomData,
        }
    }

    /// The key-value sort of `len` elements: the merge's pair tiles (with
    /// the feature `merge-tuning`, those of `CUPRIM_SORT_PAIRS_TILE`).
    pub fn sort_pairs(arch: u32, cmp: &'a C, len: u64) -> Self {
        #[allow(unused_mut)]
        let mut plan = Self::pairs(arch, cmp, len);
        #[cfg(feature = "merge-tuning")]
        tune_tile("CUPRIM_SORT_PAIRS_TILE", &mut plan.policy);
        plan.pass_min_blocks = plan.policy.min_blocks;
        plan
    }

    /// The sort of `len` elements, keys alone or (`pairs`) with values
    /// `V`: the tiles of [`sort_keys`](Merge::sort_keys) or of
    /// [`pairs`](Self::pairs) (and with the feature `merge-tuning`, the
    /// keys-alone tile `sort_by` takes).
    pub fn sorting(arch: u32, cmp: &'a C, pairs: bool, len: u64) -> Self {
        if pairs {
            return Self::sort_pairs(arch, cmp, len);
        }
        #[allow(unused_mut)]
        let mut policy = sort_policy(arch, size_of::<K>(), false, len);
        #[cfg(feature = "merge-tuning")]
        tune_sort_tile(&mut policy);
        Merge {
            policy,
            pass_min_blocks: pass_blocks(arch, policy, size_of::<K>()),
            pairs: false,
            wide_loads: false,
            cmp,
            _t: PhantomData,
        }
    }

    /// Merges `a` and `b` (both non-empty) into `out` (`a.len + b.len`
    /// keys, and values when [`pairs`](Self::pairs)): queues the two
    /// launches, waits for nothing.
    pub fn run(&self, dev: &CudaDevice, a: Side<K, V>, b: Side<K, V>, out: Side<K, V>) -> Result<()> {
        let n = a.len + b.len;
        debug_assert_eq!(out.len, n, "the output holds both inputs");
        let tile = self.policy.tile();
        let tiles = n.div_ceil(tile);
        // One block per tile: a grid is at most 2^31 - 1 blocks wide.
        let blocks = u32::try_from(tiles)
            .ok()
            .filter(|&t| t <= i32::MAX as u32)
            .ok_or_else(|| Error::InvalidArgument(format!("merge of {n} elements needs more than 2^31 tiles of {tile}")))?;
        let module = dev.module(self)?;
        if fused_merge(tiles) {
            // SAFETY: matches `cuprim_merge_fused(const K* ka, u64 na, const K* kb, u64 nb, const V* va,
            // const V* vb, K* out_k, V* out_v)`: block t reads at most na keys (and values, with CUPRIM_PAIRS) of
            // a and nb of b, and writes its tile of out_k (and out_v): na + nb elements in all.
            let merge: Entry<(Ptr<K>, u64, Ptr<K>, u64, Ptr<V>, Ptr<V>, Ptr<K>, Ptr<V>)> = unsafe { Entry::declare("cuprim_merge_fused") };
            let args = (a.keys, a.len, b.keys, b.len, a.values, b.values, out.keys, out.values);
            return dev.launch(&module, merge, Grid::new(blocks, self.policy.block), args);
        }
        let mut layout = ScratchLayout::new();
        let splits = layout.uninit::<u64>(tiles + 1);
        let partition_name = if tiles >= WARP_PARTITION_TILES {
            "cuprim_merge_partition_warp"
        } else {
            "cuprim_merge_partition"
        };
        // SAFETY: both match `(const K* a, u64 na, const K* b, u64 nb, u64* splits, u64 tiles)`: read at most na
        // keys of a and nb of b, write splits[0..=tiles].
        let partition: Entry<(Ptr<K>, u64, Ptr<K>, u64, Ptr<u64>, u64)> = unsafe { Entry::declare(partition_name) };
        // SAFETY: matches `cuprim_merge(const K* ka, u64 na, const K* kb, u64 nb, const V* va, const V* vb,
        // const u64* splits, K* out_k, V* out_v)`: block t reads splits[t..=t + 1], at most na keys (and values,
        // with CUPRIM_PAIRS) of a and nb of b, and writes its tile of out_k (and out_v): na + nb elements in all.
        let merge: Entry<(Ptr<K>, u64, Ptr<K>, u64, Ptr<V>, Ptr<V>, Ptr<u64>, Ptr<K>, Ptr<V>)> = unsafe { Entry::declare("cuprim_merge") };
        dev.with_scratch(&layout, |s| {
            let splits = s.at(splits);
            let cuts = Grid::new((tiles + 1).div_ceil(PARTITION_BLOCK as u64) as u32, PARTITION_BLOCK);
            dev.launch(&module, partition, cuts, (a.keys, a.len, b.keys, b.len, splits, tiles))?;
            let args = (a.keys, a.len, b.keys, b.len, a.values, b.values, splits, out.keys, out.values);
            dev.launch(&module, merge, Grid::new(blocks, self.policy.block), args)
        })
    }
}

impl<K: Element, V: Element, C: Comparator<K>> Specialise for Merge<'_, K, V, C> {
    fn template(&self) -> &'static Template {
        &MERGE
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        self.policy.write(w);
        if self.wide_loads {
            w.constant("CUPRIM_MERGE_WIDE", 1);
        }
        #[cfg(feature = "merge-tuning")]
        if let Some(load) = std::env::var("CUPRIM_MERGE_LOAD").ok().and_then(|v| v.parse().ok()) {
            w.constant("CUPRIM_MERGE_LOAD", load);
        }
        #[allow(unused_mut)]
        let mut pass = self.pass_min_blocks;
        #[cfg(feature = "merge-tuning")]
        if let Some(b) = std::env::var("CUPRIM_SORT_PASS_BLOCKS").ok().and_then(|v| v.parse().ok()) {
            pass = b;
        }
        if pass != self.policy.min_blocks {
            w.constant("CUPRIM_PASS_MIN_BLOCKS", pass as i64);
        }
        w.keys_values::<K, V>(self.pairs);
        w.comparator::<K, C>("Cmp", "K", self.cmp);
    }
}

/// Elements per tile of the merge or sort of `len` keys `K` (with values `V` when `pairs`).
pub(crate) fn tile_elements<K: Element, V: Element>(arch: u32, pairs: bool, len: u64) -> usize {
    let slot = if pairs {
        size_of::<K>().max(size_of::<V>())
    } else {
        size_of::<K>()
    };
    merge_policy(arch, slot, pairs, len).tile() as usize
}

/// Elements per tile of the merge sort of `len` keys `K` (with values `V` when `pairs`).
pub(crate) fn sort_tile_elements<K: Element, V: Element>(arch: u32, pairs: bool, len: u64) -> usize {
    if pairs {
        tile_elements::<K, V>(arch, pairs, len)
    } else {
        sort_policy(arch, size_of::<K>(), false, len).tile() as usize
    }
}

/// The keys-alone (both tile shapes where they differ) and key-value merge
/// modules of `K`, `V` and `cmp`, for precompile.
pub(crate) fn merge_specs<K: Element, V: Element, C: Comparator<K>>(arch: u32, cmp: &C) -> Vec<KernelSpec> {
    let mut specs: Vec<KernelSpec> = Vec::new();
    let mut policies = Vec::new();
    for keys in [
        Merge::<K, K, C>::keys(arch, cmp, 0),
        Merge::<K, K, C>::keys(arch, cmp, SMALL_TILES_BELOW),
        {
            #[allow(unused_mut)]
            let mut sort = Merge::<K, K, C>::sort_keys(arch, cmp, SMALL_TILES_BELOW);
            #[cfg(feature = "merge-tuning")]
            tune_sort_tile(&mut sort.policy);
            sort
        },
    ] {
        if !policies.contains(&keys.policy) {
            policies.push(keys.policy);
            specs.push(KernelSpec::of(&keys));
        }
    }
    specs.push(KernelSpec::of(&Merge::<K, V, C>::pairs(arch, cmp, 0)));
    specs.extend(super::set::set_specs::<K, V, C>(arch, cmp));
    specs.push(super::expr::merge_x_spec::<K, C>(arch, cmp));
    specs
}
