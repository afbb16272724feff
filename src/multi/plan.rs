//! `kernels/multi/shard.cu`: folding the shards' gathered partial results
//! (a reduction's value, the seed of a later shard's scan).

use crate::algo::policy::{elementwise, Policy};
use crate::device::{CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::Result;
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::ops::Monoid;
use std::marker::PhantomData;

template!(SHARD, "multi/shard.cu", ["cuprim_shard_fold", "cuprim_shard_total"]);

/// The fold and ordered-total kernels of `T` and `op`. The total is a read
/// stream: the elementwise family's shape (block, 16-byte vectors per
/// thread, resident blocks per SM).
pub(crate) struct ShardPlan<'a, T, Op> {
    op: &'a Op,
    policy: Policy,
    _t: PhantomData<T>,
}

impl<'a, T: Element, Op: Monoid<T>> ShardPlan<'a, T, Op> {
    pub fn new(arch: u32, op: &'a Op) -> Self {
        ShardPlan {
            op,
            policy: elementwise(arch),
            _t: PhantomData,
        }
    }

    /// `out[0]` = the left-to-right fold of the `count` (>= 1) values at `parts`.
    pub fn fold(&self, dev: &CudaDevice, parts: Ptr<T>, count: u32, out: Ptr<T>) -> Result<()> {
        // SAFETY: matches `cuprim_shard_fold(const T* parts, u32 count, T* out)`:
        // reads `count` values, writes one.
        let entry: Entry<(Ptr<T>, u32, Ptr<T>)> = unsafe { Entry::declare("cuprim_shard_fold") };
        let module = dev.module(self)?;
        dev.launch(&module, entry, Grid::new(1, 32), (parts, count, out))
    }

    /// `out[0]` = the in-order fold of the `n` elements at `input`: each
    /// block folds a contiguous chunk of whole tiles into a partial in
    /// scratch (`cuprim_shard_total`, one wave of blocks), then the partials
    /// are folded.
    pub fn total(&self, dev: &CudaDevice, input: Ptr<T>, n: u64, out: Ptr<T>) -> Result<()> {
        let per_thread = (16 / std::mem::size_of::<T>().min(16)).max(1) as u64 * self.policy.unroll as u64;
        let tile = self.policy.block as u64 * per_thread;
        let tiles = n.div_ceil(tile).max(1);
        let blocks = self.policy.grid(tiles * self.policy.block as u64, dev.sm_count());
        let chunk = tiles.div_ceil(blocks as u64) * tile;
        let mut layout = ScratchLayout::new();
        let partials = layout.uninit::<T>(blocks as u64);
        // SAFETY: matches `cuprim_shard_total(const T* in, u64 n, u64 chunk, T* partials)`:
        // reads n elements, writes one partial per block.
        let entry: Entry<(Ptr<T>, u64, u64, Ptr<T>)> = unsafe { Entry::declare("cuprim_shard_total") };
        let module = dev.module(self)?;
        dev.with_scratch(&layout, |s| {
            let partials = s.at(partials);
            dev.launch(&module, entry, Grid::new(blocks, self.policy.block), (input, n, chunk, partials))?;
            self.fold(dev, partials, blocks, out)
        })
    }
}

impl<T: Element, Op: Monoid<T>> Specialise for ShardPlan<'_, T, Op> {
    fn template(&self) -> &'static Template {
        &SHARD
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_BLOCK", self.policy.block as i64);
        w.constant("CUPRIM_UNROLL", self.policy.unroll as i64);
        w.elem::<T>("T");
        w.monoid::<T, Op>("ShardOp", "T", self.op);
    }
}

/// The shard kernels of `T` and `op`, for precompile.
pub(crate) fn shard_specs<T: Element, Op: Monoid<T>>(arch: u32, op: &Op) -> Vec<KernelSpec> {
    vec![KernelSpec::of(&ShardPlan::<T, Op>::new(arch, op))]
}
