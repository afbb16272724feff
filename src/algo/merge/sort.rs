//! Plan and launches of the stable merge sort (`sort_by`, `sort_pairs_by`)
//! in `kernels/merge/merge.cu`: one block sorts each tile
//! (`cuprim_merge_sort_tile`), then passes merge pairs of sorted runs of
//! one tile, two tiles, ... (`cuprim_merge_sort_pass_fused`, one output
//! tile per block, which finds the tile's cuts in its pair itself; or, by
//! [`sort_cuts`], a partition launch, the cuts of every output
//! tile, then `cuprim_merge_sort_pass`), ping-ponging between the caller's
//! buffers and device scratch.
//!
//! The tile sort writes to whichever buffer makes the last pass end in the
//! caller's: in place when the pass count is even, into scratch when it is
//! odd. So the result never needs a copy back. The sort of an input
//! expression (`sort_expr.rs`) swaps in its own tile kernel, which reads
//! the expression; the passes are the same.

use super::plan::{sort_cuts, Merge, SortCuts, PARTITION_BLOCK};
use crate::cmp::Comparator;
use crate::device::{CudaDevice, Entry, Grid, Module, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::{Error, Result};

/// Merge passes after the tile sort for `n` elements in tiles of `tile`:
/// the runs double from one tile until one run holds everything.
pub(crate) fn passes(n: u64, tile: u64) -> u32 {
    let mut run = tile;
    let mut p = 0;
    while run < n {
        run = run.saturating_mul(2);
        p += 1;
    }
    p
}

impl<K: Element, V: Element, C: Comparator<K>> Merge<'_, K, V, C> {
    /// Sorts `n` keys at `keys` (and, when [`pairs`](Self::pairs), the
    /// values at `values`) in place, stably by the comparator: queues every
    /// launch, waits for nothing. `n >= 2`.
    pub fn sort(&self, dev: &CudaDevice, keys: Ptr<K>, values: Ptr<V>, n: u64) -> Result<()> {
        self.sort_into(dev, (keys, values), (keys, values), n)
    }

    /// Sorts the `n` keys at `input.0` (and values at `input.1` when
    /// [`pairs`](Self::pairs)) into `out`, which is `input` itself or
    /// does not overlap it: queues every launch, waits for nothing.
    /// `n >= 1`.
    pub fn sort_into(&self, dev: &CudaDevice, input: (Ptr<K>, Ptr<V>), out: (Ptr<K>, Ptr<V>), n: u64) -> Result<()> {
        // SAFETY: matches `cuprim_merge_sort_tile(const K* in_k, const V* in_v, K* out_k, V* out_v, u64 n)`:
        // block t reads its tile of the n keys (values only with CUPRIM_PAIRS) and writes the same tile of the
        // outputs, after reading all of it (so in and out may be the same buffers).
        let tile_sort: Entry<(Ptr<K>, Ptr<V>, Ptr<K>, Ptr<V>, u64)> = unsafe { Entry::declare("cuprim_merge_sort_tile") };
        let input_v = if self.pairs { input.1 } else { Ptr::null() };
        self.sort_tiles_then_merge(dev, out, n, |module, grid, dst| {
            dev.launch(module, tile_sort, grid, (input.0, input_v, dst.0, dst.1, n))
        })
    }

    /// The merge sort of `n` elements into `out` (keys, and values when
    /// [`pairs`](Self::pairs)) whose tiles `tile_sort(module, grid, dst)`
    /// sorts: it queues one block per tile (`grid`) that writes its tile
    /// of the input, sorted, to `dst` (the caller's `out`, or scratch that
    /// does not overlap it); `module` is this plan's (the merge passes').
    /// Then the passes merge the sorted runs until the whole lands in
    /// `out`. Queues every launch, waits for nothing. `n >= 1`.
    pub fn sort_tiles_then_merge(
        &self,
        dev: &CudaDevice,
        out: (Ptr<K>, Ptr<V>),
        n: u64,
        tile_sort: impl FnOnce(&Module, Grid, (Ptr<K>, Ptr<V>)) -> Result<()>,
    ) -> Result<()> {
        let tile = self.policy.tile();
        let tiles = n.div_ceil(tile);
        // One block per tile: a grid is at most 2^31 - 1 blocks wide.
        let blocks = u32::try_from(tiles)
            .ok()
            .filter(|&t| t <= i32::MAX as u32)
            .ok_or_else(|| Error::InvalidArgument(format!("sort of {n} elements needs more than 2^31 tiles of {tile}")))?;
        let passes = passes(n, tile);
        let module = dev.module(self)?;

        // SAFETY: matches `cuprim_merge_sort_partition(const K* keys, u64 n, u64 run, u64* splits, u64 tiles)`:
        // reads at most n keys, writes splits[0..tiles).
        let thread_partition: Entry<(Ptr<K>, u64, u64, Ptr<u64>, u64)> = unsafe { Entry::declare("cuprim_merge_sort_partition") };
        // SAFETY: matches `cuprim_merge_sort_partition_warp(const K* keys, u64 n, u64 run, u64* splits, u64 tiles)`:
        // as the partition above, one warp per cut.
        let warp_partition: Entry<(Ptr<K>, u64, u64, Ptr<u64>, u64)> = unsafe { Entry::declare("cuprim_merge_sort_partition_warp") };
        // SAFETY: matches `cuprim_merge_sort_pass(const K* in_k, const V* in_v, u64 n, u64 run, const u64* splits,
        // K* out_k, V* out_v)`: block t reads splits[t..=t + 1] (splits[t + 1] only when t + 1 < tiles), keys (and
        // values with CUPRIM_PAIRS) among the n of the input, and writes its tile of the n outputs, which do not
        // overlap the inputs.
        let pass: Entry<(Ptr<K>, Ptr<V>, u64, u64, Ptr<u64>, Ptr<K>, Ptr<V>)> = unsafe { Entry::declare("cuprim_merge_sort_pass") };
        // SAFETY: matches `cuprim_merge_sort_pass_fused(const K* in_k, const V* in_v, u64 n, u64 run, K* out_k,
        // V* out_v)`: block t reads keys (and values with CUPRIM_PAIRS) among the n of the input and writes its
        // tile of the n outputs, which do not overlap the inputs.
        let pass_fused: Entry<(Ptr<K>, Ptr<V>, u64, u64, Ptr<K>, Ptr<V>)> = unsafe { Entry::declare("cuprim_merge_sort_pass_fused") };
        let how = sort_cuts(tiles);

        let mut layout = ScratchLayout::new();
        let (scratch_k, scratch_v, splits) = if passes > 0 {
            let k = layout.uninit_aligned::<K>(n);
            let v = self.pairs.then(|| layout.uninit_aligned::<V>(n));
            let splits = (how != SortCuts::Fused).then(|| layout.uninit::<u64>(tiles));
            (Some(k), v, splits)
        } else {
            (None, None, None)
        };
        let grid = Grid::new(blocks, self.policy.block);
        dev.with_scratch(&layout, |s| {
            let null_v = Ptr::<V>::null();
            let caller = (out.0, if self.pairs { out.1 } else { null_v });
            let Some(scratch_k) = scratch_k.map(|r| s.at(r)) else {
                // One tile: sorted straight into the output.
                return tile_sort(&module, grid, caller);
            };
            let splits = splits.map(|r| s.at(r));
            let other = (scratch_k, scratch_v.map(|r| s.at(r)).unwrap_or(null_v));
            // The tile sort writes where an even number of passes later
            // the result lands in the caller's buffers.
            let (mut src, mut dst) = if passes.is_multiple_of(2) {
                (caller, other)
            } else {
                (other, caller)
            };
            tile_sort(&module, grid, src)?;
            let (partition, cuts) = if how == SortCuts::Warp {
                (
                    warp_partition,
                    Grid::new((tiles * 32).div_ceil(PARTITION_BLOCK as u64) as u32, PARTITION_BLOCK),
                )
            } else {
                (
                    thread_partition,
                    Grid::new(tiles.div_ceil(PARTITION_BLOCK as u64) as u32, PARTITION_BLOCK),
                )
            };
            let mut run = tile;
            while run < n {
                // SAFETY (each dependent launch): the partition and both pass kernels call cuprim_grid_wait() first,
                // in every block, before any global access (kernels/merge/merge.cu).
                match splits {
                    Some(splits) => unsafe {
                        dev.launch_dependent(&module, partition, cuts, (src.0, n, run, splits, tiles))?;
                        dev.launch_dependent(&module, pass, grid, (src.0, src.1, n, run, splits, dst.0, dst.1))?;
                    },
                    None => unsafe { dev.launch_dependent(&module, pass_fused, grid, (src.0, src.1, n, run, dst.0, dst.1))? },
                }
                std::mem::swap(&mut src, &mut dst);
                run = run.saturating_mul(2);
            }
            debug_assert!(src.0.raw() == out.0.raw(), "the last pass writes the caller's buffer");
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::passes;

    #[test]
    fn pass_counts() {
        assert_eq!(passes(7680, 7680), 0);
        assert_eq!(passes(7681, 7680), 1);
        assert_eq!(passes(2 * 7680, 7680), 1);
        assert_eq!(passes(1 << 24, 7680), 12);
        assert_eq!(passes(u64::MAX, 1 << 40), 24);
    }
}
