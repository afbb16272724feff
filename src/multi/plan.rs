//! `kernels/multi/shard.cu`: folding the shards' gathered partial results
//! (a reduction's value, a scan's carry into its later shards).

use crate::algo::policy::{elementwise, Policy};
use crate::device::{CudaDevice, Entry, Grid, Ptr};
use crate::element::Element;
use crate::error::Result;
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::ops::Monoid;
use std::marker::PhantomData;

template!(
    SHARD,
    "multi/shard.cu",
    ["cuprim_shard_fold", "cuprim_shard_carry", "cuprim_shard_total"]
);

/// The fold and carry kernels of `T` and `op`.
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

    /// `out[0]` = the total of a shard of `n` elements at `input` scanned
    /// into `scanned` (see `cuprim_shard_total`).
    pub fn total(&self, dev: &CudaDevice, scanned: Ptr<T>, input: Ptr<T>, n: u64, exclusive: bool, out: Ptr<T>) -> Result<()> {
        // SAFETY: matches `cuprim_shard_total(const T* scanned, const T* input, u64 n,
        // u32 exclusive, T* out)`: reads element n - 1 of both when n > 0, writes one.
        let entry: Entry<(Ptr<T>, Ptr<T>, u64, u32, Ptr<T>)> = unsafe { Entry::declare("cuprim_shard_total") };
        let module = dev.module(self)?;
        dev.launch(&module, entry, Grid::new(1, 32), (scanned, input, n, exclusive as u32, out))
    }

    /// `data[i]` = (fold of the first `upto` (>= 1) values at `parts`) op `data[i]`, `i < n`.
    pub fn carry(&self, dev: &CudaDevice, parts: Ptr<T>, upto: u32, data: Ptr<T>, n: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        // SAFETY: matches `cuprim_shard_carry(const T* parts, u32 upto, T* data, u64 n)`:
        // reads `upto` values, updates n elements in place.
        let entry: Entry<(Ptr<T>, u32, Ptr<T>, u64)> = unsafe { Entry::declare("cuprim_shard_carry") };
        let module = dev.module(self)?;
        let grid = Grid::new(self.policy.grid(n, dev.sm_count()), self.policy.block);
        dev.launch(&module, entry, grid, (parts, upto, data, n))
    }
}

impl<T: Element, Op: Monoid<T>> Specialise for ShardPlan<'_, T, Op> {
    fn template(&self) -> &'static Template {
        &SHARD
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_BLOCK", self.policy.block as i64);
        w.elem::<T>("T");
        w.monoid::<T, Op>("ShardOp", "T", self.op);
    }
}

/// The shard kernels of `T` and `op`, for precompile.
pub(crate) fn shard_specs<T: Element, Op: Monoid<T>>(arch: u32, op: &Op) -> Vec<KernelSpec> {
    vec![KernelSpec::of(&ShardPlan::<T, Op>::new(arch, op))]
}
