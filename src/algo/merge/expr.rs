//! Merges of input expressions (`ExprOps::merge_with`): both sides read in
//! place by `kernels/merge/merge_expr.cu` (the merge's tile through each
//! expression's `load`), keys alone. Set operations of input expressions
//! (`ExprOps::set_union_with`, ...): `kernels/merge/set.cu`, whose buffer
//! forms read leaves of the same kind.

use super::host;
use super::plan::{fused_merge, merge_policy, MERGE_PATH, MERGE_TILE, PARTITION_BLOCK};
use super::set::{cuda_set, expr_set_specs, host_set, SetOp};
use crate::algo::same_device;
use crate::algo::scan::plan::TilePolicy;
use crate::cmp::Comparator;
use crate::device::{CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::expr::args::ExprArgs;
use crate::expr::consume::{launch_checked2, write_inputs};
use crate::expr::node::{cuda_of, Node};
use crate::expr::{host_values, Expr};
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::vec::DeviceVec;
use std::mem::size_of;

template!(
    MERGE_X,
    "merge/merge_expr.cu",
    ["cuprim_merge_x_partition", "cuprim_merge_x"],
    headers: [MERGE_PATH, MERGE_TILE]
);

/// One specialisation of the expression merge: inputs `A` and `B` of items
/// `K`, comparator `C`.
pub(crate) struct MergeX<'a, A, B, C> {
    policy: TilePolicy,
    a: &'a A,
    b: &'a B,
    cmp: &'a C,
}

impl<'a, K: Element, A: Node<Item = K>, B: Node<Item = K>, C: Comparator<K>> MergeX<'a, A, B, C> {
    /// The merge of `len` elements: the merge's tiles for keys staged
    /// through registers (as pairs are; the expressions' loads are plain
    /// loads).
    pub fn new(arch: u32, a: &'a A, b: &'a B, cmp: &'a C, len: u64) -> Self {
        MergeX {
            policy: merge_policy(arch, size_of::<K>(), true, len),
            a,
            b,
            cmp,
        }
    }

    /// Merges into `out` (`a.length() + b.length()` keys, both sides
    /// non-empty): queues the launches; waits only when an input permutes
    /// (the bounds check).
    fn run(&self, dev: &CudaDevice, out: Ptr<K>) -> Result<()> {
        let (na, nb) = (self.a.length() as u64, self.b.length() as u64);
        let n = na + nb;
        let tiles = n.div_ceil(self.policy.tile());
        let blocks = u32::try_from(tiles)
            .ok()
            .filter(|&t| t <= i32::MAX as u32)
            .ok_or_else(|| Error::InvalidArgument(format!("merge of {n} elements needs more than 2^31 tiles")))?;
        let module = dev.module(self)?;
        // SAFETY: matches `cuprim_merge_x_partition(const In0 a, u64 na, const In1 b, u64 nb, u64* splits, u64
        // tiles)`, In0 and In1 the structs whose fields the ExprArgs hold: reads elements below na of a and nb of
        // b, writes splits[0..=tiles].
        let partition: Entry<(ExprArgs, u64, ExprArgs, u64, Ptr<u64>, u64)> = unsafe { Entry::declare("cuprim_merge_x_partition") };
        // SAFETY: matches `cuprim_merge_x(const In0 a, u64 na, const In1 b, u64 nb, const u64* splits, K* out)`:
        // block t reads splits[t..=t + 1] (none when splits is null), elements below na of a and nb of b, and
        // writes its tile of out: na + nb elements in all.
        let merge: Entry<(ExprArgs, u64, ExprArgs, u64, Ptr<u64>, Ptr<K>)> = unsafe { Entry::declare("cuprim_merge_x") };
        let grid = Grid::new(blocks, self.policy.block);
        if fused_merge(tiles) {
            return launch_checked2(dev, self.a, self.b, |x, y| {
                dev.launch(&module, merge, grid, (x, na, y, nb, Ptr::null(), out))
            });
        }
        let mut layout = ScratchLayout::new();
        let splits = layout.uninit::<u64>(tiles + 1);
        dev.with_scratch(&layout, |s| {
            let splits = s.at(splits);
            let cuts = Grid::new((tiles + 1).div_ceil(PARTITION_BLOCK as u64) as u32, PARTITION_BLOCK);
            launch_checked2(dev, self.a, self.b, |x, y| {
                dev.launch(&module, partition, cuts, (x, na, y, nb, splits, tiles))?;
                dev.launch(&module, merge, grid, (x, na, y, nb, splits, out))
            })
        })
    }
}

impl<K: Element, A: Node<Item = K>, B: Node<Item = K>, C: Comparator<K>> Specialise for MergeX<'_, A, B, C> {
    fn template(&self) -> &'static Template {
        &MERGE_X
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_inputs(self.a, "K", self.b, "K", w);
        self.policy.write(w);
        w.keys_values::<K, K>(false);
        w.comparator::<K, C>("Cmp", "K", self.cmp);
    }
}

/// The stable merge of two sorted expressions into a new vector (`a`'s
/// first among equivalents).
pub(crate) fn merge_of<K: Element, A: Expr<Item = K>, B: Expr<Item = K>, C: Comparator<K>>(a: &A, b: &B, cmp: C) -> Result<DeviceVec<K>> {
    const OP: &str = "merge_with";
    a.validate()?;
    b.validate()?;
    same_device(OP, a.device_ref(), b.device_ref())?;
    let n = a
        .length()
        .checked_add(b.length())
        .ok_or_else(|| Error::InvalidArgument(format!("{OP}: the output does not fit in memory")))?;
    let device = a.device_ref();
    match (cuda_of(a), cuda_of(b)) {
        (None, None) => {
            let (x, y) = (host_values(a)?, host_values(b)?);
            let mut out = vec![x.first().or(y.first()).copied().unwrap_or_else(K::zero); n];
            host::merge(&x, &y, &mut out, |p, q| cmp.less(p, q));
            DeviceVec::from_slice(device, &out)
        }
        (Some(dev), Some(_)) => {
            let mut out = DeviceVec::<K>::alloc_uninit(device, n)?;
            if n == 0 {
                return Ok(out);
            }
            let ptr = crate::algo::cuda_ptr_mut(&mut out, OP)?;
            MergeX::new(dev.arch(), a, b, &cmp, n as u64).run(dev, ptr)?;
            Ok(out)
        }
        _ => Err(Error::DeviceMismatch { op: OP }),
    }
}

/// The expression-merge module of two buffers of `K` by `cmp` (every tile
/// shape is the same module), for precompile.
pub(crate) fn merge_x_spec<K: Element, C: Comparator<K>>(arch: u32, cmp: &C) -> KernelSpec {
    let leaf = crate::expr::Leaf::<K>::type_only();
    KernelSpec::of(&MergeX::new(arch, &leaf, &leaf, cmp, 0))
}

/// The module of `merge_with_by(a, b, cmp)`, for precompile.
pub(crate) fn expr_spec<K: Element, A: Node<Item = K>, B: Node<Item = K>, C: Comparator<K>>(
    arch: u32,
    a: &A,
    b: &B,
    cmp: &C,
) -> KernelSpec {
    KernelSpec::of(&MergeX::new(arch, a, b, cmp, 0))
}

/// The set operation `op` of two sorted expressions into a new vector
/// (`ExprOps::set_union_with` and the others), both read in place.
pub(crate) fn set_of<K: Element, A: Expr<Item = K>, B: Expr<Item = K>, C: Comparator<K>>(
    a: &A,
    b: &B,
    cmp: C,
    op: SetOp,
) -> Result<DeviceVec<K>> {
    let name = op.name_with();
    a.validate()?;
    b.validate()?;
    same_device(name, a.device_ref(), b.device_ref())?;
    let device = a.device_ref();
    match (cuda_of(a), cuda_of(b)) {
        (None, None) => {
            let (x, y) = (crate::expr::host_items(a)?, crate::expr::host_items(b)?);
            DeviceVec::from_slice(device, &host_set(&x, &y, op, |p, q| cmp.less(p, q)))
        }
        (Some(dev), Some(_)) => Ok(cuda_set::<K, K, _, _, _>(dev, device, a, b, None, &cmp, op, name)?.0),
        _ => Err(Error::DeviceMismatch { op: name }),
    }
}

/// The modules of `set_*_with_by(a, b, cmp)`, for precompile.
pub(crate) fn set_expr_specs<K: Element, A: Node<Item = K>, B: Node<Item = K>, C: Comparator<K>>(
    arch: u32,
    a: &A,
    b: &B,
    cmp: &C,
) -> Vec<KernelSpec> {
    expr_set_specs(arch, a, b, cmp)
}
