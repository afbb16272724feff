//! `kernels/multi/shard.cu`: folding the shards' gathered partial results
//! (a reduction's value, the seed of a later shard's scan).

use crate::device::{CudaDevice, Entry, Grid, Ptr};
use crate::element::Element;
use crate::error::Result;
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::ops::Monoid;
use std::marker::PhantomData;

template!(SHARD, "multi/shard.cu", ["cuprim_shard_fold", "cuprim_shard_total"]);

/// Threads per block of the ordered shard total (a read stream: the
/// elementwise family's block).
const TOTAL_BLOCK: u32 = 256;
/// `SHARD_TILE` of `kernels/multi/shard.cu` for `T`: 4 16-byte vectors per thread.
fn total_tile<T>() -> u64 {
    TOTAL_BLOCK as u64 * 4 * (16 / std::mem::size_of::<T>().min(16)).max(1) as u64
}

/// The fold and ordered-total kernels of `T` and `op`.
pub(crate) struct ShardPlan<'a, T, Op> {
    op: &'a Op,
    _t: PhantomData<T>,
}

impl<'a, T: Element, Op: Monoid<T>> ShardPlan<'a, T, Op> {
    pub fn new(op: &'a Op) -> Self {
        ShardPlan { op, _t: PhantomData }
    }

    /// `out[0]` = the left-to-right fold of the `count` (>= 1) values at `parts`.
    pub fn fold(&self, dev: &CudaDevice, parts: Ptr<T>, count: u32, out: Ptr<T>) -> Result<()> {
        // SAFETY: matches `cuprim_shard_fold(const T* parts, u32 count, T* out)`:
        // reads `count` values, writes one.
        let entry: Entry<(Ptr<T>, u32, Ptr<T>)> = unsafe { Entry::declare("cuprim_shard_fold") };
        let module = dev.module(self)?;
        dev.launch(&module, entry, Grid::new(1, 32), (parts, count, out))
    }

    /// Blocks of the ordered total of `n` elements on `dev`, and the
    /// elements each folds (whole tiles): about 8 blocks per SM.
    pub fn total_grid(dev: &CudaDevice, n: u64) -> (u32, u64) {
        let tile = total_tile::<T>();
        let tiles = n.div_ceil(tile).max(1);
        let blocks = tiles.min(dev.sm_count() as u64 * 8);
        (blocks as u32, tiles.div_ceil(blocks) * tile)
    }

    /// `partials[b]` = the in-order fold of elements `b * chunk ..` of the
    /// `n` at `input` (see [`total_grid`](Self::total_grid)).
    pub fn total(&self, dev: &CudaDevice, input: Ptr<T>, n: u64, blocks: u32, chunk: u64, partials: Ptr<T>) -> Result<()> {
        // SAFETY: matches `cuprim_shard_total(const T* in, u64 n, u64 chunk, T* partials)`:
        // reads n elements, writes one partial per block.
        let entry: Entry<(Ptr<T>, u64, u64, Ptr<T>)> = unsafe { Entry::declare("cuprim_shard_total") };
        let module = dev.module(self)?;
        dev.launch(&module, entry, Grid::new(blocks, TOTAL_BLOCK), (input, n, chunk, partials))
    }
}

impl<T: Element, Op: Monoid<T>> Specialise for ShardPlan<'_, T, Op> {
    fn template(&self) -> &'static Template {
        &SHARD
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_BLOCK", TOTAL_BLOCK as i64);
        w.elem::<T>("T");
        w.monoid::<T, Op>("ShardOp", "T", self.op);
    }
}

/// The shard kernels of `T` and `op`, for precompile.
pub(crate) fn shard_specs<T: Element, Op: Monoid<T>>(op: &Op) -> Vec<KernelSpec> {
    vec![KernelSpec::of(&ShardPlan::<T, Op>::new(op))]
}
