//! Merges of input expressions (`ExprOps::merge_with`): both sides read in
//! place by `kernels/merge/merge_expr.cu` (the merge's tile through each
//! expression's `load`), keys alone, or by key (`merge_by_key_with`) with
//! values from two more expressions. Set operations of input expressions
//! (`ExprOps::set_union_with`, ..., and by key `set_union_by_key_with`,
//! ...): `kernels/merge/set.cu`, whose buffer forms read leaves of the same
//! kind (values from buffers, or from expressions with `CUPRIM_VALUES_X`).

use super::host;
use super::plan::{fused_merge, merge_policy, Side, MERGE_PATH, MERGE_TILE, PARTITION_BLOCK};
use super::set::{cuda_set, expr_set_by_key_specs, expr_set_specs, host_set, host_set_by_key, NoExpr, SetOp, SetValues};
use crate::algo::scan::plan::TilePolicy;
use crate::algo::{same_device, same_len};
use crate::cmp::Comparator;
use crate::device::{CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::expr::args::ExprArgs;
use crate::expr::consume::{launch_checked2, launch_checked4, write_inputs, write_keyed_inputs};
use crate::expr::node::{cuda_of, Node};
use crate::expr::{host_items, host_values, Expr, Leaf};
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::vec::DeviceVec;
use std::mem::size_of;

template!(
    MERGE_X,
    "merge/merge_expr.cu",
    ["cuprim_merge_x_partition", "cuprim_merge_x"],
    headers: [MERGE_PATH, MERGE_TILE]
);

/// One specialisation of the expression merge: inputs `A` and `B` of keys
/// `K`, comparator `C`, and, by key, values from expressions `VA` and `VB`
/// of items `V` (keys alone: `K`'s leaves, unused).
pub(crate) struct MergeX<'a, A, B, C, VA, VB> {
    policy: TilePolicy,
    a: &'a A,
    b: &'a B,
    cmp: &'a C,
    /// The values' expressions (`CUPRIM_PAIRS`); keys alone without.
    values: Option<(&'a VA, &'a VB)>,
}

impl<'a, K: Element, A: Node<Item = K>, B: Node<Item = K>, C: Comparator<K>> MergeX<'a, A, B, C, Leaf<'static, K>, Leaf<'static, K>> {
    /// The merge of `len` elements: the merge's tiles for keys staged
    /// through registers (as pairs are; the expressions' loads are plain
    /// loads).
    pub fn new(arch: u32, a: &'a A, b: &'a B, cmp: &'a C, len: u64) -> Self {
        MergeX {
            policy: merge_policy(arch, size_of::<K>(), true, len),
            a,
            b,
            cmp,
            values: None,
        }
    }
}

impl<'a, K: Element, V: Element, A: Node<Item = K>, B: Node<Item = K>, C: Comparator<K>, VA: Node<Item = V>, VB: Node<Item = V>>
    MergeX<'a, A, B, C, VA, VB>
{
    /// The key-value merge of `len` elements, keys `a` with values `va`
    /// and `b` with `vb`: the buffers' key-value tiles (by the wider of key
    /// and value).
    pub fn pairs(arch: u32, (a, va): (&'a A, &'a VA), (b, vb): (&'a B, &'a VB), cmp: &'a C, len: u64) -> Self {
        MergeX {
            policy: merge_policy(arch, size_of::<K>().max(size_of::<V>()), true, len),
            a,
            b,
            cmp,
            values: Some((va, vb)),
        }
    }

    /// Merges into `out` (`a.length() + b.length()` keys, and as many
    /// values at `out_v` by key; null for keys alone): queues the launches;
    /// waits only when an input permutes (the bounds check).
    fn run(&self, dev: &CudaDevice, out: Ptr<K>, out_v: Ptr<V>) -> Result<()> {
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
        // SAFETY: matches `cuprim_merge_x(const In0 a, u64 na, const In1 b, u64 nb, const u64* splits, K* out)`
        // (CUPRIM_PAIRS 0): block t reads splits[t..=t + 1] (none when splits is null), elements below na of a
        // and nb of b, and writes its tile of out: na + nb elements in all.
        let merge: Entry<(ExprArgs, u64, ExprArgs, u64, Ptr<u64>, Ptr<K>)> = unsafe { Entry::declare("cuprim_merge_x") };
        // SAFETY: matches `cuprim_merge_x(const In0 a, u64 na, const In1 b, u64 nb, const u64* splits, K* out,
        // const Vx0 va, const Vx1 vb, V* out_v)` (CUPRIM_PAIRS 1): as above, and reads elements below na of va
        // and nb of vb, writes its tile of out_v.
        #[allow(clippy::type_complexity)]
        let merge_pairs: Entry<(ExprArgs, u64, ExprArgs, u64, Ptr<u64>, Ptr<K>, ExprArgs, ExprArgs, Ptr<V>)> =
            unsafe { Entry::declare("cuprim_merge_x") };
        let grid = Grid::new(blocks, self.policy.block);
        // The launches: the partition's where `cuts` (into splits), the
        // tiles' (splits null: each tile finds its own cuts).
        let launch = |splits: Ptr<u64>, cuts: Option<Grid>| match self.values {
            None => launch_checked2(dev, self.a, self.b, |x, y| {
                if let Some(cuts) = cuts {
                    dev.launch(&module, partition, cuts, (x, na, y, nb, splits, tiles))?;
                }
                dev.launch(&module, merge, grid, (x, na, y, nb, splits, out))
            }),
            Some((va, vb)) => launch_checked4(dev, (self.a, self.b, va, vb), |[x, y, p, q]| {
                if let Some(cuts) = cuts {
                    dev.launch(&module, partition, cuts, (x, na, y, nb, splits, tiles))?;
                }
                dev.launch(&module, merge_pairs, grid, (x, na, y, nb, splits, out, p, q, out_v))
            }),
        };
        if fused_merge(tiles) {
            return launch(Ptr::null(), None);
        }
        let mut layout = ScratchLayout::new();
        let splits = layout.uninit::<u64>(tiles + 1);
        dev.with_scratch(&layout, |s| {
            let cuts = Grid::new((tiles + 1).div_ceil(PARTITION_BLOCK as u64) as u32, PARTITION_BLOCK);
            launch(s.at(splits), Some(cuts))
        })
    }
}

impl<K: Element, V: Element, A: Node<Item = K>, B: Node<Item = K>, C: Comparator<K>, VA: Node<Item = V>, VB: Node<Item = V>> Specialise
    for MergeX<'_, A, B, C, VA, VB>
{
    fn template(&self) -> &'static Template {
        &MERGE_X
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        match self.values {
            None => write_inputs(self.a, "K", self.b, "K", w),
            Some((va, vb)) => write_keyed_inputs(self.a, self.b, va, vb, w),
        }
        self.policy.write(w);
        w.keys_values::<K, V>(self.values.is_some());
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
            MergeX::new(dev.arch(), a, b, &cmp, n as u64).run(dev, ptr, Ptr::null())?;
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
        (Some(dev), Some(_)) => {
            let none = None::<SetValues<'_, K, NoExpr<K>, NoExpr<K>>>;
            Ok(cuda_set(dev, device, a, b, none, &cmp, op, name)?.0)
        }
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

/// The stable merge by key of two sorted key expressions with their value
/// expressions into new vectors (`a`'s pairs first among equivalent keys):
/// `merge_by_key_by`'s checks and semantics. On CUDA four plain buffers
/// take the buffers' kernels (`merge_by_key`'s); any other inputs are read
/// in place by `kernels/merge/merge_expr.cu` with values.
pub(crate) fn merge_by_key_of<K, V, A, B, VA, VB, C>((a, va): (&A, &VA), (b, vb): (&B, &VB), cmp: C) -> Result<(DeviceVec<K>, DeviceVec<V>)>
where
    K: Element,
    V: Element,
    A: Expr<Item = K>,
    B: Expr<Item = K>,
    VA: Expr<Item = V>,
    VB: Expr<Item = V>,
    C: Comparator<K>,
{
    const OP: &str = "merge_by_key_with";
    a.validate()?;
    va.validate()?;
    b.validate()?;
    vb.validate()?;
    let device = a.device_ref();
    same_device(OP, device, va.device_ref())?;
    same_device(OP, device, b.device_ref())?;
    same_device(OP, device, vb.device_ref())?;
    same_len(OP, a.length(), va.length())?;
    same_len(OP, b.length(), vb.length())?;
    let n = a
        .length()
        .checked_add(b.length())
        .ok_or_else(|| Error::InvalidArgument(format!("{OP}: the output does not fit in memory")))?;
    let Some(dev) = cuda_of(a) else {
        let (x, xv, y, yv) = (host_items(a)?, host_items(va)?, host_items(b)?, host_items(vb)?);
        let mut keys = vec![K::zero(); n];
        let mut values = vec![V::zero(); n];
        host::merge_pairs((&x, &xv), (&y, &yv), (&mut keys, &mut values), |p, q| cmp.less(p, q));
        return Ok((DeviceVec::from_slice(device, &keys)?, DeviceVec::from_slice(device, &values)?));
    };
    let mut keys = DeviceVec::<K>::alloc_uninit(device, n)?;
    let mut values = DeviceVec::<V>::alloc_uninit(device, n)?;
    if n == 0 {
        return Ok((keys, values));
    }
    let out = crate::algo::cuda_ptr_mut(&mut keys, OP)?;
    let out_v = crate::algo::cuda_ptr_mut(&mut values, OP)?;
    let buffers = (a.buffer_addr(), va.buffer_addr(), b.buffer_addr(), vb.buffer_addr());
    if let (Some(ka), Some(pa), Some(kb), Some(pb)) = buffers {
        let side = |keys, values, len: usize| Side {
            keys: Ptr::<K>::from_raw(keys),
            values: Ptr::<V>::from_raw(values),
            len: len as u64,
        };
        let (sa, sb) = (side(ka, pa, a.length()), side(kb, pb, b.length()));
        let so = Side {
            keys: out,
            values: out_v,
            len: n as u64,
        };
        super::cuda_merge_pairs(dev, sa, sb, so, &cmp)?;
    } else {
        MergeX::pairs(dev.arch(), (a, va), (b, vb), &cmp, n as u64).run(dev, out, out_v)?;
    }
    Ok((keys, values))
}

/// The module of `merge_by_key_with_by(va, b, vb, cmp)` of keys `a`, for
/// precompile: the buffers' key-value module for four plain buffers (what
/// the call runs), else the expression merge with values.
pub(crate) fn expr_pairs_spec<K, V, A, B, VA, VB, C>(arch: u32, (a, va): (&A, &VA), (b, vb): (&B, &VB), cmp: &C) -> KernelSpec
where
    K: Element,
    V: Element,
    A: Node<Item = K>,
    B: Node<Item = K>,
    VA: Node<Item = V>,
    VB: Node<Item = V>,
    C: Comparator<K>,
{
    if A::IS_BUF && B::IS_BUF && VA::IS_BUF && VB::IS_BUF {
        KernelSpec::of(&super::plan::Merge::<K, V, C>::pairs(arch, cmp, 0))
    } else {
        KernelSpec::of(&MergeX::pairs(arch, (a, va), (b, vb), cmp, 0))
    }
}

/// The by-key set operation `op` of sorted key expressions `a` and `b`
/// with value expressions `va` and (the union and the symmetric
/// difference) `vb`, into new vectors: the buffer forms' checks and
/// semantics. On CUDA the keys are read in place by `kernels/merge/set.cu`;
/// values in buffers as the buffer forms read them, any other values
/// through their expressions (`CUPRIM_VALUES_X`).
pub(crate) fn set_by_key_of<K, V, A, B, VA, VB, C>(
    (a, va): (&A, &VA),
    (b, vb): (&B, Option<&VB>),
    cmp: C,
    op: SetOp,
) -> Result<(DeviceVec<K>, DeviceVec<V>)>
where
    K: Element,
    V: Element,
    A: Expr<Item = K>,
    B: Expr<Item = K>,
    VA: Expr<Item = V>,
    VB: Expr<Item = V>,
    C: Comparator<K>,
{
    let name = op.name_by_key_with();
    a.validate()?;
    va.validate()?;
    b.validate()?;
    let device = a.device_ref();
    same_device(name, device, va.device_ref())?;
    same_device(name, device, b.device_ref())?;
    same_len(name, a.length(), va.length())?;
    if let Some(vb) = vb {
        vb.validate()?;
        same_device(name, device, vb.device_ref())?;
        same_len(name, b.length(), vb.length())?;
    }
    let Some(dev) = cuda_of(a) else {
        let (x, xv, y) = (host_items(a)?, host_items(va)?, host_items(b)?);
        let yv = match vb {
            Some(vb) => host_items(vb)?,
            None => std::borrow::Cow::Borrowed(&[][..]),
        };
        let (k, v) = host_set_by_key((&x, &xv), (&y, &yv), op, |p, q| cmp.less(p, q));
        return Ok((DeviceVec::from_slice(device, &k)?, DeviceVec::from_slice(device, &v)?));
    };
    let pairs = |r: (DeviceVec<K>, Option<DeviceVec<V>>)| match r {
        (k, Some(v)) => Ok((k, v)),
        // Not reached: values were given, so the kernel wrote them.
        (_, None) => Err(Error::InvalidArgument(format!("{name}: no values came back"))),
    };
    // Values in buffers: the buffer forms' values (b's address 0 where not read).
    let addr_b = match vb {
        Some(vb) => vb.buffer_addr(),
        None => Some(0),
    };
    if let (Some(pa), Some(pb)) = (va.buffer_addr(), addr_b) {
        let values = SetValues::buffers(Ptr::<V>::from_raw(pa), Ptr::from_raw(pb));
        return pairs(cuda_set(dev, device, a, b, Some(values), &cmp, op, name)?);
    }
    match vb {
        Some(vb) => pairs(cuda_set(dev, device, a, b, Some(SetValues::Exprs(va, vb)), &cmp, op, name)?),
        None => {
            let none = Leaf::<V>::type_only();
            pairs(cuda_set(dev, device, a, b, Some(SetValues::Exprs(va, &none)), &cmp, op, name)?)
        }
    }
}

/// The modules of `set_*_by_key_with_by` of keys `a` with values `va` and
/// keys `b` with values `vb` (every operation; `vb` read by the union and
/// the symmetric difference), for precompile.
pub(crate) fn set_by_key_expr_specs<K, V, A, B, VA, VB, C>(arch: u32, a: (&A, &VA), b: (&B, &VB), cmp: &C) -> Vec<KernelSpec>
where
    K: Element,
    V: Element,
    A: Node<Item = K>,
    B: Node<Item = K>,
    VA: Node<Item = V>,
    VB: Node<Item = V>,
    C: Comparator<K>,
{
    expr_set_by_key_specs(arch, a, b, cmp)
}
