//! `kernels/multi/shard.cu`: folding the shards' gathered partial results
//! (a reduction's value, the seed of a later shard's scan).

use crate::device::{CudaDevice, Entry, Grid, Ptr};
use crate::element::Element;
use crate::error::Result;
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::ops::Monoid;
use std::marker::PhantomData;

template!(SHARD, "multi/shard.cu", ["cuprim_shard_fold"]);

/// The fold kernel of `T` and `op`.
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
}

impl<T: Element, Op: Monoid<T>> Specialise for ShardPlan<'_, T, Op> {
    fn template(&self) -> &'static Template {
        &SHARD
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.elem::<T>("T");
        w.monoid::<T, Op>("ShardOp", "T", self.op);
    }
}

/// The shard kernels of `T` and `op`, for precompile.
pub(crate) fn shard_specs<T: Element, Op: Monoid<T>>(op: &Op) -> Vec<KernelSpec> {
    vec![KernelSpec::of(&ShardPlan::<T, Op>::new(op))]
}
