//! Comparison sorts of input expressions (`ExprOps::sorted_by`,
//! `ExprOps::sorted_pairs_by`). On CUDA the merge sort's first kernel, the
//! tile sort, reads the expression (`kernels/merge/sort_expr.cu`: the keys,
//! or the zip of keys and values) and writes the sorted tiles where the
//! first merge pass reads them; the passes run on buffers in the buffer
//! sort's module (`sort.rs`), so nothing is collected first. A plain
//! buffer's tiles are read by the buffer sort's own tile kernel. The
//! built-in `Less` and `Greater` take the radix sort of the expression, as
//! `sort_by` takes the radix sort for them.

use super::plan::{Merge, MERGE_PATH, MERGE_TILE, SMALL_TILES_BELOW, SORT_TILE, SORT_TILES_4352_BELOW};
use super::{host, radix_order};
use crate::algo::scan::plan::TilePolicy;
use crate::algo::{cuda_ptr_mut, same_device, same_len};
use crate::cmp::Comparator;
use crate::device::{CudaDevice, Entry, Ptr};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::expr::args::ExprArgs;
use crate::expr::consume::launch_checked;
use crate::expr::host_items;
use crate::expr::node::{cuda_of, Node};
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::vec::raw::{MemMut, SealedMut as _};
use crate::vec::DeviceVec;
use std::marker::PhantomData;

template!(
    SORT_X,
    "merge/sort_expr.cu",
    ["cuprim_merge_sort_tile_x"],
    headers: [MERGE_PATH, MERGE_TILE, SORT_TILE]
);

/// One specialisation of the expression tile sort: input `X` (items `K`,
/// or with `pairs` `(K, V)`), comparator `C`, the tile shape of the merge
/// plan whose passes follow.
pub(crate) struct MergeSortX<'a, X, K, V, C> {
    policy: TilePolicy,
    pairs: bool,
    input: &'a X,
    cmp: &'a C,
    _t: PhantomData<fn() -> (K, V)>,
}

impl<'a, X: Node, K: Element, V: Element, C: Comparator<K>> MergeSortX<'a, X, K, V, C> {
    /// The tile sort of `input` for the passes of `plan` (its tile shape,
    /// keys alone or pairs).
    pub fn of(plan: &Merge<'a, K, V, C>, input: &'a X) -> Self {
        MergeSortX {
            policy: plan.policy,
            pairs: plan.pairs,
            input,
            cmp: plan.cmp,
            _t: PhantomData,
        }
    }
}

impl<X: Node, K: Element, V: Element, C: Comparator<K>> Specialise for MergeSortX<'_, X, K, V, C> {
    fn template(&self) -> &'static Template {
        &SORT_X
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        let root = self.input.write_type(w, &mut 0);
        w.piece(root, |root| format!("typedef cuprim_e{root} SortIn;"));
        self.policy.write(w);
        w.constant("CUPRIM_SORT_X_BATCH", stage_batch(&self.policy, X::CHECKED) as i64);
        w.keys_values::<K, V>(self.pairs);
        w.comparator::<K, C>("Cmp", "K", self.cmp);
    }
}

/// Loads a thread keeps in flight while it stages its tile from the
/// expression (`CUPRIM_SORT_X_BATCH`): all of its items, except for inputs
/// that gather (`permute`, `permute_by`) with 32 registers a thread (4-byte
/// keys alone in 512 x 15 tiles at 4 blocks per SM): with all 15 in flight
/// they spilled 8 to 48 bytes, with 8 none (NVRTC 13, sm_80 and sm_90),
/// while a zipped map spilled 4 bytes on sm_80 in batches of 8 or 5 and
/// none with all 15. Not measured on a GPU (8 loads of each of 2048
/// threads per SM stay in flight).
fn stage_batch(policy: &TilePolicy, gathers: bool) -> u32 {
    let registers = 65536 / (policy.block * policy.min_blocks).max(1);
    if gathers && registers <= 32 {
        policy.items.min(8)
    } else {
        policy.items
    }
}

/// Sorts the `n >= 1` elements of `input` (keys, or with `plan.pairs` the
/// zip of keys and values) into `out` by `plan`: the tile sort reads a
/// plain buffer with the buffer kernel (`buffers`: its keys' and values'
/// addresses), any other input through its expression; then the passes.
/// Waits only when the input permutes (the bounds check, after the tile
/// sort: a bad index fails before the passes are queued).
fn cuda_sort<K: Element, V: Element, C: Comparator<K>, X: Node>(
    dev: &CudaDevice,
    plan: &Merge<'_, K, V, C>,
    input: &X,
    buffers: Option<(u64, u64)>,
    out: (Ptr<K>, Ptr<V>),
    n: usize,
) -> Result<()> {
    let n = n as u64;
    if let Some((k, v)) = buffers {
        return plan.sort_into(dev, (Ptr::from_raw(k), Ptr::from_raw(v)), out, n);
    }
    let tiles = MergeSortX::of(plan, input);
    let module = dev.module(&tiles)?;
    // SAFETY: matches `cuprim_merge_sort_tile_x(SortIn in, u64 n, K* out_k, V* out_v)`, SortIn the struct the
    // ExprArgs hold (n elements): block t reads the elements of its tile of `in` (below n) and writes the same tile
    // of out_k (and of out_v with CUPRIM_PAIRS), which do not overlap what `in` reads.
    let entry: Entry<(ExprArgs, u64, Ptr<K>, Ptr<V>)> = unsafe { Entry::declare("cuprim_merge_sort_tile_x") };
    plan.sort_tiles_then_merge(dev, out, n, |_, grid, dst| {
        launch_checked(dev, input, |x| dev.launch(&module, entry, grid, (x, n, dst.0, dst.1)))
    })
}

/// The elements of `keys` sorted stably by `cmp` into a new vector
/// (`ExprOps::sorted_by`): `sort_by` of the collected elements.
pub(crate) fn sorted_by_of<KE: Node, C: Comparator<KE::Item>>(keys: &KE, cmp: C) -> Result<DeviceVec<KE::Item>>
where
    KE::Item: Element,
{
    const OP: &str = "sorted_by";
    keys.validate()?;
    let n = keys.length();
    let Some(dev) = cuda_of(keys) else {
        let mut out = DeviceVec::<KE::Item>::alloc_uninit(keys.device_ref(), n)?;
        let MemMut::Host(o) = out.mem_mut() else {
            return Err(Error::DeviceMismatch { op: OP });
        };
        o.copy_from_slice(&host_items(keys)?);
        host::sort(o, |x, y| cmp.less(x, y));
        return Ok(out);
    };
    if let Some(opts) = radix_order::<KE::Item, C>() {
        return crate::algo::sort::sorted_of(keys, opts);
    }
    let mut out = DeviceVec::<KE::Item>::alloc_uninit(keys.device_ref(), n)?;
    if n == 0 {
        return Ok(out);
    }
    let ptr = cuda_ptr_mut(&mut out, OP)?;
    let plan = Merge::<KE::Item, KE::Item, C>::sorting(dev.arch(), &cmp, false, n as u64);
    let buffers = keys.buffer_addr().filter(|_| KE::IS_BUF).map(|k| (k, 0));
    cuda_sort(dev, &plan, keys, buffers, (ptr, Ptr::null()), n)?;
    Ok(out)
}

/// Keys and values from input expressions sorted stably by key by `cmp`
/// into two new vectors (`ExprOps::sorted_pairs_by`): `sort_pairs_by` of
/// the collected elements.
#[allow(clippy::type_complexity)]
pub(crate) fn sorted_pairs_by_of<KE: Node, VE: Node, C: Comparator<KE::Item>>(
    keys: &KE,
    values: &VE,
    cmp: C,
) -> Result<(DeviceVec<KE::Item>, DeviceVec<VE::Item>)>
where
    KE::Item: Element,
    VE::Item: Element,
{
    const OP: &str = "sorted_pairs_by";
    keys.validate()?;
    values.validate()?;
    same_device(OP, keys.device_ref(), values.device_ref())?;
    same_len(OP, keys.length(), values.length())?;
    let (n, d) = (keys.length(), keys.device_ref());
    let Some(dev) = cuda_of(keys) else {
        let mut ko = DeviceVec::<KE::Item>::alloc_uninit(d, n)?;
        let mut vo = DeviceVec::<VE::Item>::alloc_uninit(d, n)?;
        let (MemMut::Host(k), MemMut::Host(v)) = (ko.mem_mut(), vo.mem_mut()) else {
            return Err(Error::DeviceMismatch { op: OP });
        };
        k.copy_from_slice(&host_items(keys)?);
        v.copy_from_slice(&host_items(values)?);
        host::sort_pairs(k, v, |x, y| cmp.less(x, y));
        return Ok((ko, vo));
    };
    if let Some(opts) = radix_order::<KE::Item, C>() {
        return crate::algo::sort::sorted_pairs_of(keys, values, opts);
    }
    let mut ko = DeviceVec::<KE::Item>::alloc_uninit(d, n)?;
    let mut vo = DeviceVec::<VE::Item>::alloc_uninit(d, n)?;
    if n == 0 {
        return Ok((ko, vo));
    }
    let out = (cuda_ptr_mut(&mut ko, OP)?, cuda_ptr_mut(&mut vo, OP)?);
    let plan = Merge::<KE::Item, VE::Item, C>::sorting(dev.arch(), &cmp, true, n as u64);
    let buffers = match (keys.buffer_addr(), values.buffer_addr()) {
        (Some(k), Some(v)) if KE::IS_BUF && VE::IS_BUF => Some((k, v)),
        _ => None,
    };
    let both = crate::expr::zip(keys.clone(), values.clone());
    cuda_sort(dev, &plan, &both, buffers, out, n)?;
    Ok((ko, vo))
}

/// The modules of the sort of `input` by `cmp` (keys alone, or with
/// `pairs` the zip of keys and values `V`) on `arch`, for precompile: the
/// radix sort's for the built-in orders; else, for each tile shape the
/// sort takes, the merge module (the passes, and the tile sort of plain
/// `buffers`) and, unless the input is plain buffers, its expression tile
/// sort.
pub(crate) fn expr_sort_specs<K: Element, V: Element, C: Comparator<K>, X: Node>(
    arch: u32,
    cmp: &C,
    pairs: bool,
    input: &X,
    buffers: bool,
) -> Vec<KernelSpec> {
    if radix_order::<K, C>().is_some() {
        return crate::algo::sort::plan::input_kernel_specs::<K, V, X>(arch, pairs, input);
    }
    let mut specs = Vec::new();
    let mut policies = Vec::new();
    for len in [0, SMALL_TILES_BELOW, SORT_TILES_4352_BELOW] {
        let plan = Merge::<K, V, C>::sorting(arch, cmp, pairs, len);
        if policies.contains(&plan.policy) {
            continue;
        }
        policies.push(plan.policy);
        specs.push(KernelSpec::of(&plan));
        if !buffers {
            specs.push(KernelSpec::of(&MergeSortX::of(&plan, input)));
        }
    }
    specs
}
