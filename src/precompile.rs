//! Compiling kernels ahead of time: warm a device's caches before the first
//! real call, or compile for an architecture with no GPU at all (what CI does
//! to check every kernel of every specialisation).

use crate::algo::reduce::plan as rd;
use crate::algo::scan::plan as sc;
use crate::algo::select::plan as sel;
use crate::algo::transform::plan as tr;
use crate::cmp::Comparator;
use crate::device::Device;
use crate::element::Element;
use crate::error::Result;
use crate::jit::{self, KernelSpec};
use crate::ops::{Arith, BinaryOp, Commutative, Monoid, UnaryOp};
use crate::pred::Predicate;

/// Where to compile for.
#[derive(Clone, Copy, Debug)]
pub enum Target<'a> {
    /// A device: the kernels are compiled (or read from the disk cache) and
    /// loaded into its in-memory cache. The host backend needs nothing.
    Device(&'a Device),
    /// An architecture such as 80 or 90: compile only, no GPU needed, no
    /// cache touched; each report carries the ptxas resource usage.
    Arch(u32),
}

/// One compiled kernel module.
#[derive(Clone, Debug)]
pub struct KernelReport {
    /// Template and element types, e.g. `kernels/fill.cu [float T]`. Not
    /// unique: modules that differ only in constants share it.
    pub name: String,
    /// The generated declarations that specialise the template (types,
    /// constants, operators): unique per module of one template.
    pub specialisation: String,
    /// NVRTC's log: with [`Target::Arch`], registers, stack and spills per kernel.
    pub log: String,
    /// The architecture compiled for (e.g. 90).
    pub arch: u32,
    /// With [`Target::Arch`], the compiled module: CUBIN for `sm_{arch}`,
    /// or PTX where this NVRTC cannot emit machine code for it (a
    /// disassembler such as `nvdisasm` reads the CUBIN). Empty for
    /// [`Target::Device`], whose modules go straight into its cache.
    pub image: Vec<u8>,
}

fn run(target: Target<'_>, specs: Vec<KernelSpec>) -> Result<Vec<KernelReport>> {
    let mut reports = Vec::with_capacity(specs.len());
    for spec in specs {
        let (log, image) = match target {
            Target::Device(dev) => match dev.cuda_ref() {
                None => continue,
                Some(c) => {
                    c.module_of_spec(&spec)?;
                    (String::new(), Vec::new())
                }
            },
            Target::Arch(arch) => {
                let compiled = jit::compile_report(&spec, arch)?;
                (compiled.log, compiled.binary.bytes().to_vec())
            }
        };
        reports.push(KernelReport {
            name: spec.display_name(),
            specialisation: spec.key().to_string(),
            log,
            arch: arch_of(target),
            image,
        });
    }
    Ok(reports)
}

fn arch_of(target: Target<'_>) -> u32 {
    match target {
        Target::Device(d) => d.arch().unwrap_or(0),
        Target::Arch(a) => a,
    }
}

/// Every kernel that depends on the element type alone (fill, sequence,
/// broadcast, gather and scatter with `u32` and `u64` indices, min/max_element).
///
/// ```
/// use cuprim::precompile::{precompile, Target};
/// // Warm the caches of the default device (nothing to do on the host backend).
/// let dev = cuprim::Device::default()?;
/// precompile::<f32>(Target::Device(&dev))?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile<T: Arith>(target: Target<'_>) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    run(
        target,
        tr::kernel_specs::<T>(arch)
            .into_iter()
            .chain(rd::extreme_specs::<T>(arch))
            .collect(),
    )
}

/// The reduction kernel for `T` and `Op` (`reduce`, `reduce_into`, and
/// the `sum`/`product`/`min`/`max` conveniences).
///
/// ```
/// use cuprim::precompile::{precompile_reduce, Target};
/// use cuprim::ops::Add;
/// let dev = cuprim::Device::default()?;
/// precompile_reduce::<f32, _>(Target::Device(&dev), Add)?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_reduce<T: Element, Op: Monoid<T> + Commutative>(target: Target<'_>, op: Op) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    let plan = rd::MapReduce {
        arch,
        input: &crate::expr::Leaf::<T>::type_only(),
        map: &crate::ops::Identity,
        op: &op,
    };
    run(target, vec![KernelSpec::of(&plan)])
}

/// The scan kernels for `T` and `Op` (inclusive, exclusive, in place; fast
/// and deterministic look-back).
///
/// ```
/// use cuprim::precompile::{precompile_scan, Target};
/// use cuprim::ops::Add;
/// for report in precompile_scan::<u32, _>(Target::Arch(90), Add).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// ```
pub fn precompile_scan<T: Element, Op: Monoid<T>>(target: Target<'_>, op: Op) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    run(target, sc::scan_specs::<T, Op>(arch, &op))
}

/// The fused kernels of an input expression's consumers: the reduction
/// by `op` (what `reduce`, `sum`, `min`, `max` run) and the
/// materialisation (`collect` / `to_vec`, and `unzip` / `unzip3` of a tuple
/// expression). Only the expression's types and operators matter, so one
/// built on the host backend serves any target.
///
/// ```
/// use cuprim::precompile::{precompile_expr_reduce, Target};
/// use cuprim::prelude::*;
/// let host = Device::host();
/// let (a, b) = (DeviceVec::<f32>::zeros(&host, 1)?, DeviceVec::<f32>::zeros(&host, 1)?);
/// let dot = zip(&a, &b).map(Mul);
/// for report in precompile_expr_reduce(Target::Arch(90), &dot, Add).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_expr_reduce<E: crate::expr::Expr, Op: Monoid<E::Item> + Commutative>(
    target: Target<'_>,
    expr: &E,
    op: Op,
) -> Result<Vec<KernelReport>> {
    use crate::value::Value;
    let arch = arch_of(target);
    let plan = rd::MapReduce {
        arch,
        input: expr,
        map: &crate::ops::Identity,
        op: &op,
    };
    let collect = crate::algo::transform::plan::Collect::new(arch, expr, <E::Item as Value>::FIELDS);
    run(target, vec![KernelSpec::of(&plan), KernelSpec::of(&collect)])
}

/// The fused scans (inclusive and exclusive, fast and deterministic
/// look-back) of an input expression by `op`: for a tuple expression the
/// scan that writes each field to its own array, as
/// [`ExprOps::scan_unzip`](crate::expr::ExprOps::scan_unzip) and
/// [`scan_unzip3`](crate::expr::ExprOps::scan_unzip3) build it.
///
/// ```
/// use cuprim::precompile::{precompile_expr_scan, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::Square;
/// let host = Device::host();
/// let x = counting(&host, 0u32, 1, 0).map(Square);
/// for report in precompile_expr_scan(Target::Arch(90), &x, Add).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// ```
pub fn precompile_expr_scan<E: crate::expr::Expr, Op: Monoid<E::Item>>(target: Target<'_>, expr: &E, op: Op) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    run(target, sc::scan_specs_of(arch, expr, &op))
}

/// The fused select kernels of an input expression and `pred` (what
/// `copy_if`, `copy_if_into` and `partition_copy` of it run; u32 and u64
/// counts).
///
/// ```
/// use cuprim::precompile::{precompile_expr_select, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::Square;
/// use cuprim::pred::Gt;
/// let host = Device::host();
/// let x = counting(&host, 0i32, 1, 0).map(Square);
/// for report in precompile_expr_select(Target::Arch(90), &x, Gt(9)).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// ```
pub fn precompile_expr_select<E: crate::expr::Expr, P: Predicate<E::Item>>(
    target: Target<'_>,
    expr: &E,
    pred: P,
) -> Result<Vec<KernelReport>>
where
    E::Item: Element,
{
    let arch = arch_of(target);
    run(target, sel::select_specs_of(arch, expr, &pred))
}

/// The predicate collectives of an input expression and `pred`: what
/// [`ExprOps::find_first`](crate::expr::ExprOps::find_first) / `any` /
/// `all`, [`vote`](crate::expr::ExprOps::vote),
/// [`quantify`](crate::expr::ExprOps::quantify) and
/// [`select_one`](crate::expr::ExprOps::select_one) of it run (`count` is
/// the reduction: [`precompile_expr_reduce`]'s family).
///
/// ```
/// use cuprim::precompile::{precompile_expr_collectives, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::Square;
/// use cuprim::pred::Gt;
/// let host = Device::host();
/// let x = counting(&host, 0i32, 1, 0).map(Square);
/// for report in precompile_expr_collectives(Target::Arch(90), &x, Gt(9)).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// ```
pub fn precompile_expr_collectives<E: crate::expr::Expr, P: Predicate<E::Item>>(
    target: Target<'_>,
    expr: &E,
    pred: P,
) -> Result<Vec<KernelReport>>
where
    E::Item: Element,
{
    let arch = arch_of(target);
    let mut specs = vec![KernelSpec::of(&rd::FindPlan::new(arch, expr, &pred))];
    specs.extend(crate::algo::collective::plan::collective_specs_of(arch, expr, &pred));
    run(target, specs)
}

/// The merge kernels of two input expressions sorted by `cmp` (what
/// `merge_with` and `merge_with_by` of them run).
///
/// ```
/// use cuprim::cmp::Less;
/// use cuprim::precompile::{precompile_expr_merge, Target};
/// use cuprim::prelude::*;
/// let host = Device::host();
/// let (a, b) = (counting(&host, 0u32, 3, 0), counting(&host, 0u32, 4, 0));
/// for report in precompile_expr_merge(Target::Arch(90), &a, &b, Less).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// ```
pub fn precompile_expr_merge<A: crate::expr::Expr, B: crate::expr::Expr<Item = A::Item>, C: Comparator<A::Item>>(
    target: Target<'_>,
    a: &A,
    b: &B,
    cmp: C,
) -> Result<Vec<KernelReport>>
where
    A::Item: Element,
{
    run(target, vec![crate::algo::merge::expr::expr_spec(arch_of(target), a, b, &cmp)])
}

/// The set-operation kernels of two input expressions sorted by `cmp`
/// (what `set_union_with`, `set_intersection_with`,
/// `set_difference_with`, `set_symmetric_difference_with` and their `_by`
/// forms of them run): every operation, with `u32` output counts and with
/// the `u64` ones of inputs of 2^31 elements or more.
///
/// ```
/// use cuprim::cmp::Less;
/// use cuprim::precompile::{precompile_expr_set, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::Square;
/// let host = Device::host();
/// let (a, b) = (counting(&host, 0u32, 1, 0).map(Square), counting(&host, 0u32, 4, 0));
/// for report in precompile_expr_set(Target::Arch(90), &a, &b, Less).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// ```
pub fn precompile_expr_set<A: crate::expr::Expr, B: crate::expr::Expr<Item = A::Item>, C: Comparator<A::Item>>(
    target: Target<'_>,
    a: &A,
    b: &B,
    cmp: C,
) -> Result<Vec<KernelReport>>
where
    A::Item: Element,
{
    run(target, crate::algo::merge::expr::set_expr_specs(arch_of(target), a, b, &cmp))
}

/// The merge kernels of keys `a` with values `va` and keys `b` with values
/// `vb`, all input expressions, keys sorted by `cmp` (what
/// `merge_by_key_with` and `merge_by_key_with_by` of them run: four plain
/// buffers take the buffers' key-value module, any other inputs the
/// expression merge with values).
///
/// ```
/// use cuprim::cmp::Less;
/// use cuprim::ops::Square;
/// use cuprim::precompile::{precompile_expr_merge_by_key, Target};
/// use cuprim::prelude::*;
/// let host = Device::host();
/// let (a, b) = (counting(&host, 0u32, 3, 0), counting(&host, 0u32, 4, 0));
/// let vb = DeviceVec::<f64>::zeros(&host, 0)?;
/// let va = constant(&host, 1.5f64, 0);
/// for report in precompile_expr_merge_by_key(Target::Arch(90), &a, &va, &b.map(Square), &vb.lazy(), Less).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_expr_merge_by_key<A, VA, B, VB, C>(
    target: Target<'_>,
    a: &A,
    va: &VA,
    b: &B,
    vb: &VB,
    cmp: C,
) -> Result<Vec<KernelReport>>
where
    A: crate::expr::Expr,
    A::Item: Element,
    VA: crate::expr::Expr,
    VA::Item: Element,
    B: crate::expr::Expr<Item = A::Item>,
    VB: crate::expr::Expr<Item = VA::Item>,
    C: Comparator<A::Item>,
{
    run(
        target,
        vec![crate::algo::merge::expr::expr_pairs_spec(arch_of(target), (a, va), (b, vb), &cmp)],
    )
}

/// The set-operation kernels by key of keys `a` with values `va` and keys
/// `b` with values `vb`, all input expressions, keys sorted by `cmp` (what
/// `set_union_by_key_with`, `set_intersection_by_key_with`,
/// `set_difference_by_key_with`, `set_symmetric_difference_by_key_with`
/// and their `_by` forms of them run; the intersection and the difference
/// take no `vb`): every operation, with `u32` output counts and with the
/// `u64` ones of inputs of 2^31 elements or more. Values in plain buffers
/// take the buffer forms' values module, other values the module that
/// reads them through their expressions.
///
/// ```
/// use cuprim::cmp::Less;
/// use cuprim::ops::Square;
/// use cuprim::precompile::{precompile_expr_set_by_key, Target};
/// use cuprim::prelude::*;
/// let host = Device::host();
/// let (a, b) = (counting(&host, 0u32, 1, 0).map(Square), counting(&host, 0u32, 4, 0));
/// let (va, vb) = (counting(&host, 0u64, 1, 0), constant(&host, 7u64, 0));
/// for report in precompile_expr_set_by_key(Target::Arch(90), &a, &va, &b, &vb, Less).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// ```
pub fn precompile_expr_set_by_key<A, VA, B, VB, C>(target: Target<'_>, a: &A, va: &VA, b: &B, vb: &VB, cmp: C) -> Result<Vec<KernelReport>>
where
    A: crate::expr::Expr,
    A::Item: Element,
    VA: crate::expr::Expr,
    VA::Item: Element,
    B: crate::expr::Expr<Item = A::Item>,
    VB: crate::expr::Expr<Item = VA::Item>,
    C: Comparator<A::Item>,
{
    run(
        target,
        crate::algo::merge::expr::set_by_key_expr_specs(arch_of(target), (a, va), (b, vb), &cmp),
    )
}

/// The search kernels with queries from an input expression (every mode,
/// `u32` and `u64` indices: what `lower_bound_in`, `upper_bound_in`,
/// `binary_search_in` and `search_in_with` of it run) in data sorted by
/// `cmp`.
///
/// ```
/// use cuprim::cmp::Less;
/// use cuprim::precompile::{precompile_expr_search, Target};
/// use cuprim::prelude::*;
/// let host = Device::host();
/// let q = counting(&host, 0u64, 7, 0);
/// for report in precompile_expr_search(Target::Arch(90), &q, Less).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// ```
pub fn precompile_expr_search<E: crate::expr::Expr, C: Comparator<E::Item>>(
    target: Target<'_>,
    expr: &E,
    cmp: C,
) -> Result<Vec<KernelReport>>
where
    E::Item: Element,
{
    run(
        target,
        crate::algo::search::plan::search_specs_of(&cmp, expr, &crate::expr::node::Leaf::<E::Item>::type_only()),
    )
}

/// The search kernels with an input expression as the sorted side and
/// buffer queries (every mode, `u32` and `u64` indices: what
/// `lower_bound_of`, `upper_bound_of`, `binary_search_of`,
/// `search_of_with` and `is_sorted_until` of it run), ordered by `cmp`.
///
/// ```
/// use cuprim::cmp::Less;
/// use cuprim::precompile::{precompile_expr_sorted_search, Target};
/// use cuprim::prelude::*;
/// let host = Device::host();
/// let sorted = counting(&host, 0u32, 3, 0);
/// for report in precompile_expr_sorted_search(Target::Arch(90), &sorted, Less).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// ```
pub fn precompile_expr_sorted_search<E: crate::expr::Expr, C: Comparator<E::Item>>(
    target: Target<'_>,
    sorted: &E,
    cmp: C,
) -> Result<Vec<KernelReport>>
where
    E::Item: Element,
{
    run(
        target,
        crate::algo::search::plan::search_specs_of(&cmp, &crate::expr::node::Leaf::<E::Item>::type_only(), sorted),
    )
}

/// The scan-by-key kernel for keys `K`, values `T` and `Op`.
///
/// ```
/// use cuprim::precompile::{precompile_scan_by_key, Target};
/// use cuprim::ops::Add;
/// let dev = cuprim::Device::default()?;
/// precompile_scan_by_key::<u32, f32, _>(Target::Device(&dev), Add)?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_scan_by_key<K: Element, T: Element, Op: Monoid<T>>(target: Target<'_>, op: Op) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    run(target, sc::scan_by_key_specs::<K, T, Op>(arch, &op))
}

/// The fused scan-by-key kernels of key and value expressions (a buffer
/// being the simplest) by `op`: what `values.scan_by_key(keys, op)` runs.
///
/// ```
/// use cuprim::precompile::{precompile_expr_scan_by_key, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::Square;
/// let host = Device::host();
/// let keys = DeviceVec::<u32>::zeros(&host, 0)?;
/// let values = counting(&host, 0u64, 1, 0).map(Square);
/// for report in precompile_expr_scan_by_key(Target::Arch(90), &keys.lazy(), &values, Add).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_expr_scan_by_key<KE: crate::expr::Expr, VE: crate::expr::Expr, Op: Monoid<VE::Item>>(
    target: Target<'_>,
    keys: &KE,
    values: &VE,
    op: Op,
) -> Result<Vec<KernelReport>>
where
    KE::Item: Element,
    VE::Item: Element,
{
    let arch = arch_of(target);
    run(target, sc::scan_by_key_specs_of(arch, keys, values, &op))
}

/// The fused reduce_by_key kernels of a key and a value expression (tuple
/// values compile the kernel that writes their fields unzipped), as
/// [`ExprOps::reduce_by_key`](crate::expr::ExprOps::reduce_by_key) and
/// [`reduce_by_key_unzip`](crate::expr::ExprOps::reduce_by_key_unzip)
/// build them.
///
/// ```
/// use cuprim::precompile::{precompile_expr_reduce_by_key, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::Square;
/// let host = Device::host();
/// let keys = DeviceVec::<u32>::zeros(&host, 0)?;
/// let values = counting(&host, 0.0f32, 1.0, 0).map(Square);
/// for report in precompile_expr_reduce_by_key(Target::Arch(90), &keys.lazy(), &values, Add).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_expr_reduce_by_key<KE: crate::expr::Expr, VE: crate::expr::Expr, Op: Monoid<VE::Item>>(
    target: Target<'_>,
    keys: &KE,
    values: &VE,
    op: Op,
) -> Result<Vec<KernelReport>>
where
    KE::Item: Element,
{
    let arch = arch_of(target);
    run(
        target,
        crate::algo::bykey::plan::reduce_by_key_specs_of::<KE, VE, VE::Item, Op>(arch, keys, values, &op),
    )
}

/// The fused unique, unique_count, run-length (u32 and u64 lengths) and
/// unique_by_key kernels of a key expression and a value expression (tuple
/// values written unzipped).
///
/// ```
/// use cuprim::precompile::{precompile_expr_unique, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::Abs;
/// let host = Device::host();
/// let keys = DeviceVec::<i32>::zeros(&host, 0)?;
/// let values = counting(&host, 0u64, 1, 0);
/// for report in precompile_expr_unique(Target::Arch(90), &keys.map(Abs), &values).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_expr_unique<KE: crate::expr::Expr, VE: crate::expr::Expr>(
    target: Target<'_>,
    keys: &KE,
    values: &VE,
) -> Result<Vec<KernelReport>>
where
    KE::Item: Element,
{
    let arch = arch_of(target);
    run(target, crate::algo::bykey::plan::unique_specs_of(arch, keys, values))
}

/// The fused segmented kernels of an input expression: `segmented_reduce`
/// by `op` and the per-segment min/max_element, with `u32` and `u64` offsets.
///
/// ```
/// use cuprim::precompile::{precompile_expr_segmented, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::Square;
/// let host = Device::host();
/// let x = DeviceVec::<f32>::zeros(&host, 0)?;
/// for report in precompile_expr_segmented(Target::Arch(90), &x.map(Square), Add).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_expr_segmented<E: crate::expr::Expr, Op: Monoid<E::Item>>(
    target: Target<'_>,
    input: &E,
    op: Op,
) -> Result<Vec<KernelReport>>
where
    E::Item: Element,
{
    let arch = arch_of(target);
    run(target, crate::algo::segmented::plan::kernel_specs_of(arch, input, &op))
}

/// The collect modules of [`ExprOps::adjacent_difference`](crate::expr::ExprOps::adjacent_difference)
/// of an input expression by `op`.
///
/// ```
/// use cuprim::precompile::{precompile_expr_adjacent_difference, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::{Square, Sub};
/// let host = Device::host();
/// let x = DeviceVec::<f32>::zeros(&host, 0)?;
/// for report in precompile_expr_adjacent_difference(Target::Arch(90), &x.map(Square), Sub).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_expr_adjacent_difference<E: crate::expr::Expr, Op: crate::ops::BinaryOp<E::Item>>(
    target: Target<'_>,
    input: &E,
    op: Op,
) -> Result<Vec<KernelReport>>
where
    E::Item: Element,
{
    let arch = arch_of(target);
    run(target, crate::algo::transform::adjacent_expr::kernel_specs(arch, input, op))
}

/// The kernels of [`SegmentedOps::segmented_count`](crate::algo::segmented::SegmentedOps::segmented_count),
/// `segmented_any` and `segmented_all` of `T` by `pred` (`u32` and `u64`
/// offsets).
///
/// ```
/// use cuprim::precompile::{precompile_segmented_collectives, Target};
/// use cuprim::pred::Gt;
/// for report in precompile_segmented_collectives::<f32, _>(Target::Arch(90), Gt(0.5)).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// ```
pub fn precompile_segmented_collectives<T: Element, P: crate::pred::Predicate<T>>(
    target: Target<'_>,
    pred: P,
) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    run(target, crate::algo::segmented::collective::kernel_specs(arch, pred)?)
}

/// The radix sort kernels of [`ExprOps::sorted`](crate::expr::ExprOps::sorted)
/// over a key expression (its first pass reads the expression).
///
/// ```
/// use cuprim::precompile::{precompile_expr_sort, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::Negate;
/// let host = Device::host();
/// let x = DeviceVec::<f32>::zeros(&host, 0)?;
/// for report in precompile_expr_sort(Target::Arch(90), &x.map(Negate)).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_expr_sort<KE: crate::expr::Expr>(target: Target<'_>, keys: &KE) -> Result<Vec<KernelReport>>
where
    KE::Item: Element,
{
    let arch = arch_of(target);
    run(
        target,
        crate::algo::sort::plan::input_kernel_specs::<KE::Item, KE::Item, KE>(arch, false, keys),
    )
}

/// The radix sort kernels of [`ExprOps::sorted_pairs`](crate::expr::ExprOps::sorted_pairs)
/// over key and value expressions.
///
/// ```
/// use cuprim::precompile::{precompile_expr_sort_pairs, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::Abs;
/// let host = Device::host();
/// let k = DeviceVec::<i32>::zeros(&host, 0)?;
/// let values = counting(&host, 0u32, 1, 0);
/// for report in precompile_expr_sort_pairs(Target::Arch(90), &k.map(Abs), &values).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_expr_sort_pairs<KE: crate::expr::Expr, VE: crate::expr::Expr>(
    target: Target<'_>,
    keys: &KE,
    values: &VE,
) -> Result<Vec<KernelReport>>
where
    KE::Item: Element,
    VE::Item: Element,
{
    let arch = arch_of(target);
    let both = crate::expr::zip(keys.clone(), values.clone());
    run(
        target,
        crate::algo::sort::plan::input_kernel_specs::<KE::Item, VE::Item, _>(arch, true, &both),
    )
}

/// The sort kernels of [`ExprOps::sorted_by`](crate::expr::ExprOps::sorted_by)
/// over a key expression by `cmp`: for each tile shape, the expression's
/// tile sort and the merge module whose passes follow it (a plain buffer's
/// tiles: that module's own tile sort); for the built-in
/// [`Less`](crate::cmp::Less) and [`Greater`](crate::cmp::Greater), the
/// radix sort's kernels ([`precompile_expr_sort`]).
///
/// ```
/// use cuprim::precompile::{precompile_expr_sort_by, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::Negate;
/// cuprim::comparator! {
///     /// Closer to 0.5 first.
///     pub struct NearHalf for f32 {
///         rust: |a, b| (a - 0.5).abs() < (b - 0.5).abs(),
///         cuda: "fabsf(a - 0.5f) < fabsf(b - 0.5f)",
///     }
/// }
/// let host = Device::host();
/// let x = DeviceVec::<f32>::zeros(&host, 0)?;
/// for report in precompile_expr_sort_by(Target::Arch(90), &x.map(Negate), NearHalf).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_expr_sort_by<KE: crate::expr::Expr, C: Comparator<KE::Item>>(
    target: Target<'_>,
    keys: &KE,
    cmp: C,
) -> Result<Vec<KernelReport>>
where
    KE::Item: Element,
{
    run(
        target,
        crate::algo::merge::sort_expr::expr_sort_specs::<KE::Item, KE::Item, C, KE>(arch_of(target), &cmp, false, keys, KE::IS_BUF),
    )
}

/// The sort kernels of [`ExprOps::sorted_pairs_by`](crate::expr::ExprOps::sorted_pairs_by)
/// over key and value expressions by `cmp`, as [`precompile_expr_sort_by`]
/// (the built-in orders: [`precompile_expr_sort_pairs`]'s).
///
/// ```
/// use cuprim::cmp::Greater;
/// use cuprim::precompile::{precompile_expr_sort_pairs_by, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::Abs;
/// let host = Device::host();
/// let k = DeviceVec::<i32>::zeros(&host, 0)?;
/// let values = counting(&host, 0u32, 1, 0);
/// for report in precompile_expr_sort_pairs_by(Target::Arch(90), &k.map(Abs), &values, Greater).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_expr_sort_pairs_by<KE: crate::expr::Expr, VE: crate::expr::Expr, C: Comparator<KE::Item>>(
    target: Target<'_>,
    keys: &KE,
    values: &VE,
    cmp: C,
) -> Result<Vec<KernelReport>>
where
    KE::Item: Element,
    VE::Item: Element,
{
    let both = crate::expr::zip(keys.clone(), values.clone());
    let buffers = KE::IS_BUF && VE::IS_BUF;
    run(
        target,
        crate::algo::merge::sort_expr::expr_sort_specs::<KE::Item, VE::Item, C, _>(arch_of(target), &cmp, true, &both, buffers),
    )
}

/// The segmented sort kernels of [`ExprOps::segmented_sorted`](crate::expr::ExprOps::segmented_sorted)
/// over a key expression (every size class, `u32` and `u64` offsets, whose
/// first reads are of the expression), the survey of the offsets and the
/// collect of the elements outside the segments. (Its longest segments use
/// [`precompile_expr_sort`]'s modules of the same expression.)
///
/// ```
/// use cuprim::precompile::{precompile_expr_segsort, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::Negate;
/// let host = Device::host();
/// let x = DeviceVec::<f32>::zeros(&host, 0)?;
/// for report in precompile_expr_segsort(Target::Arch(90), &x.map(Negate)).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_expr_segsort<KE: crate::expr::Expr>(target: Target<'_>, keys: &KE) -> Result<Vec<KernelReport>>
where
    KE::Item: Element,
{
    use crate::algo::segsort::plan::{input_kernel_specs, survey_specs};
    let mut specs = input_kernel_specs::<KE::Item, KE::Item, u32, KE>(false, Some(keys));
    specs.extend(input_kernel_specs::<KE::Item, KE::Item, u64, KE>(false, Some(keys)));
    specs.extend(survey_specs());
    specs.push(KernelSpec::of(&tr::Collect::new(arch_of(target), keys, 1)));
    run(target, specs)
}

/// The segmented sort kernels of [`ExprOps::segmented_sorted_pairs`](crate::expr::ExprOps::segmented_sorted_pairs)
/// over key and value expressions, as [`precompile_expr_segsort`] (the
/// longest segments: [`precompile_expr_sort_pairs`]).
///
/// ```
/// use cuprim::precompile::{precompile_expr_segsort_pairs, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::Abs;
/// let host = Device::host();
/// let k = DeviceVec::<i32>::zeros(&host, 0)?;
/// let values = counting(&host, 0u32, 1, 0);
/// for report in precompile_expr_segsort_pairs(Target::Arch(90), &k.map(Abs), &values).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_expr_segsort_pairs<KE: crate::expr::Expr, VE: crate::expr::Expr>(
    target: Target<'_>,
    keys: &KE,
    values: &VE,
) -> Result<Vec<KernelReport>>
where
    KE::Item: Element,
    VE::Item: Element,
{
    use crate::algo::segsort::plan::{input_kernel_specs, survey_specs};
    let both = crate::expr::zip(keys.clone(), values.clone());
    let mut specs = input_kernel_specs::<KE::Item, VE::Item, u32, _>(true, Some(&both));
    specs.extend(input_kernel_specs::<KE::Item, VE::Item, u64, _>(true, Some(&both)));
    specs.extend(survey_specs());
    specs.push(KernelSpec::of(&tr::Collect::new(arch_of(target), &both, 2)));
    run(target, specs)
}

/// The top-k kernels of [`ExprOps::top_k`](crate::expr::ExprOps::top_k),
/// `top_k_with` and `select_nth` over an input expression (`u32` and `u64`
/// indices), which read the expression wherever the buffer form's read
/// the input. (Selections of more than 2048 picks sort them with
/// [`precompile_sort_pairs`]'s modules.)
///
/// ```
/// use cuprim::precompile::{precompile_expr_topk, Target};
/// use cuprim::prelude::*;
/// use cuprim::ops::Abs;
/// let host = Device::host();
/// let x = DeviceVec::<f32>::zeros(&host, 0)?;
/// for report in precompile_expr_topk(Target::Arch(90), &x.map(Abs)).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_expr_topk<E: crate::expr::Expr>(target: Target<'_>, input: &E) -> Result<Vec<KernelReport>>
where
    E::Item: Element,
{
    run(target, crate::algo::topk::plan::topk_specs_of(input))
}

/// The segmented kernels of `T`: `segmented_reduce` by `op` and the
/// per-segment min/max_element, each with `u32` and `u64` offsets.
///
/// ```
/// use cuprim::precompile::{precompile_segmented, Target};
/// use cuprim::ops::Add;
/// let dev = cuprim::Device::default()?;
/// precompile_segmented::<f32, _>(Target::Device(&dev), Add)?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_segmented<T: Element, Op: Monoid<T>>(target: Target<'_>, op: Op) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    run(target, crate::algo::segmented::plan::kernel_specs::<T, Op>(arch, &op))
}

/// The kernel that joins the shards of a [`ShardedVec`](crate::multi::ShardedVec)
/// reduced or scanned with `op` (the shards themselves use the reduce,
/// segmented reduce and scan kernels).
///
/// ```
/// use cuprim::precompile::{precompile_sharded, Target};
/// use cuprim::ops::Add;
/// let dev = cuprim::Device::default()?;
/// precompile_sharded::<f32, _>(Target::Device(&dev), Add)?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_sharded<T: Element, Op: Monoid<T>>(target: Target<'_>, op: Op) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    run(target, crate::multi::plan::shard_specs::<T, Op>(arch, &op))
}

/// The `count`, `find_first` / `any` / `all` and `copy_if` / `partition` kernels for `T` and `pred`.
///
/// ```
/// use cuprim::precompile::{precompile_predicate, Target};
/// use cuprim::pred::IsNan;
/// let dev = cuprim::Device::default()?;
/// precompile_predicate::<f64, _>(Target::Device(&dev), IsNan)?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_predicate<T: Element, P: Predicate<T>>(target: Target<'_>, pred: P) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    let mut specs = rd::predicate_specs::<T, P>(arch, &pred);
    specs.extend(sel::select_specs::<T, P>(arch, &pred));
    run(target, specs)
}

/// Every kernel specialised on element type `T` and binary operator `Op`.
///
/// ```
/// use cuprim::precompile::{precompile_binary, Target};
/// use cuprim::ops::Max;
/// let dev = cuprim::Device::default()?;
/// precompile_binary::<u32, _>(Target::Device(&dev), Max)?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_binary<T: Element, Op: BinaryOp<T>>(target: Target<'_>, op: Op) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    run(target, vec![tr::binary_spec::<T, Op>(arch, &op)])
}

/// The adjacent-difference kernels for `T` and `Op` (the copying form, and
/// the in-place form's two passes).
///
/// ```
/// use cuprim::precompile::{precompile_adjacent_difference, Target};
/// use cuprim::ops::Sub;
/// let dev = cuprim::Device::default()?;
/// precompile_adjacent_difference::<f32, _>(Target::Device(&dev), Sub)?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_adjacent_difference<T: Element, Op: BinaryOp<T>>(target: Target<'_>, op: Op) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    run(target, vec![tr::adjacent_spec::<T, Op>(arch, &op)])
}

/// The `vote`, `quantify` and `select_one` kernels for `T` and `pred`
/// (`broadcast` is in [`precompile`]'s fill module).
///
/// ```
/// use cuprim::precompile::{precompile_collectives, Target};
/// use cuprim::pred::Gt;
/// let dev = cuprim::Device::default()?;
/// precompile_collectives::<u32, _>(Target::Device(&dev), Gt(7))?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_collectives<T: Element, P: Predicate<T>>(target: Target<'_>, pred: P) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    run(target, crate::algo::collective::plan::collective_specs::<T, P>(arch, &pred))
}

/// The unary transform kernel for `T` and `Op`.
///
/// ```
/// use cuprim::precompile::{precompile_unary, Target};
/// use cuprim::ops::Cast;
/// let dev = cuprim::Device::default()?;
/// precompile_unary::<f32, _>(Target::Device(&dev), Cast::<cuprim::f16>::new())?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_unary<T: Element, Op: UnaryOp<T>>(target: Target<'_>, op: Op) -> Result<Vec<KernelReport>>
where
    Op::Output: Element,
{
    let arch = arch_of(target);
    run(target, vec![tr::unary_spec::<T, Op>(arch, &op)])
}

/// The radix sort kernels for keys `K` alone (`sort`, `sort_descending`,
/// `sort_with`): histogram and onesweep pass (32-bit output positions with
/// large and with medium tiles, 64-bit positions past 2^32 keys) and the
/// one-launch small sort in each of its shapes.
///
/// ```
/// use cuprim::precompile::{precompile_sort, Target};
/// let dev = cuprim::Device::default()?;
/// precompile_sort::<f32>(Target::Device(&dev))?;
/// for report in precompile_sort::<u64>(Target::Arch(90)).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_sort<K: Element>(target: Target<'_>) -> Result<Vec<KernelReport>> {
    run(target, crate::algo::sort::kernel_specs::<K, K>(arch_of(target), false, false))
}

/// The onesweep modules of keys `K` alone and with values `V` that the
/// default policy does not use (the shortcuts switched the other way):
/// lets the compile checks cover them.
#[doc(hidden)]
pub fn precompile_sort_alternatives<K: Element, V: Element>(target: Target<'_>) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    let mut specs = crate::algo::sort::kernel_specs::<K, K>(arch, false, true);
    specs.extend(crate::algo::sort::kernel_specs::<K, V>(arch, true, true));
    run(target, specs)
}

/// The radix sort kernels for keys `K` with values `V` (`sort_pairs*`;
/// `argsort::<I>` uses `V = I`).
///
/// ```
/// use cuprim::precompile::{precompile_sort_pairs, Target};
/// let dev = cuprim::Device::default()?;
/// precompile_sort_pairs::<f32, u32>(Target::Device(&dev))?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_sort_pairs<K: Element, V: Element>(target: Target<'_>) -> Result<Vec<KernelReport>> {
    run(target, crate::algo::sort::kernel_specs::<K, V>(arch_of(target), true, false))
}

/// The classic (4-bit, three kernels per pass) sort kernels, keys alone
/// and with values `V`: the comparison path of the sort bench (cargo
/// feature `classic-sort`).
#[cfg(feature = "classic-sort")]
#[doc(hidden)]
pub fn precompile_sort_classic<K: Element, V: Element>(target: Target<'_>) -> Result<Vec<KernelReport>> {
    run(target, crate::algo::sort::classic_kernel_specs::<K, V>(arch_of(target)))
}

/// The histogram kernels for samples `T` and counts `C` (`u32` or `u64`):
/// every bin rule the type allows, with shared-memory and global counters.
///
/// ```
/// use cuprim::precompile::{precompile_histogram, Target};
/// let dev = cuprim::Device::default()?;
/// precompile_histogram::<f32, u32>(Target::Device(&dev))?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_histogram<T: Element, C: crate::algo::histogram::Count>(target: Target<'_>) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    run(target, crate::algo::histogram::histogram_specs::<T, C>(arch))
}

/// The top-k kernels for elements `T` (radix select, the final sort, the
/// per-segment kernel and partial_sort's), with `u32` and `u64` indices.
///
/// ```
/// use cuprim::precompile::{precompile_topk, Target};
/// let dev = cuprim::Device::default()?;
/// precompile_topk::<f32>(Target::Device(&dev))?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_topk<T: Element>(target: Target<'_>) -> Result<Vec<KernelReport>> {
    run(target, crate::algo::topk::plan::topk_specs::<T>())
}

/// The search kernels (index build, searches in every mode with `u32`
/// and `u64` indices, is_sorted_until) for elements `T` in the order of
/// `cmp`.
///
/// ```
/// use cuprim::cmp::Less;
/// use cuprim::precompile::{precompile_search, Target};
/// let dev = cuprim::Device::default()?;
/// precompile_search::<u32, _>(Target::Device(&dev), Less)?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_search<T: Element, C: crate::cmp::Comparator<T>>(target: Target<'_>, cmp: C) -> Result<Vec<KernelReport>> {
    run(target, crate::algo::search::plan::search_specs::<T, C>(&cmp))
}

/// The merge kernels for keys `K` ordered by [`Less`](crate::cmp::Less)
/// (`merge`, `merge_by_key`): the keys-alone module and the module with
/// values `V`, each with its partition and merge kernels and the stable
/// merge sort's kernels (the same modules), and the set operations'
/// modules of `K` (`set_union`, ...: each operation, keys alone and with
/// values `V`, inputs below 2^31 elements). Other comparators compile their own
/// modules on first use (or through [`precompile_merge_by`]). (On CUDA,
/// `sort_by(Less)` and `sort_by(Greater)` take the radix sort: its
/// modules come with [`precompile_sort`].)
///
/// ```
/// use cuprim::precompile::{precompile_merge, Target};
/// let dev = cuprim::Device::default()?;
/// precompile_merge::<u32, f32>(Target::Device(&dev))?;
/// for report in precompile_merge::<f64, u64>(Target::Arch(90)).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_merge<K: Element, V: Element>(target: Target<'_>) -> Result<Vec<KernelReport>> {
    precompile_merge_by::<K, V, _>(target, crate::cmp::Less)
}

/// [`precompile_merge`] for keys ordered by `cmp` (`merge_by`,
/// `merge_by_key_by`, `sort_by`, `sort_pairs_by`).
///
/// ```
/// use cuprim::precompile::{precompile_merge_by, Target};
/// use cuprim::cmp::Greater;
/// let dev = cuprim::Device::default()?;
/// precompile_merge_by::<i32, u8, _>(Target::Device(&dev), Greater)?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_merge_by<K: Element, V: Element, C: Comparator<K>>(target: Target<'_>, cmp: C) -> Result<Vec<KernelReport>> {
    run(target, crate::algo::merge::plan::merge_specs::<K, V, C>(arch_of(target), &cmp))
}

/// The segmented sort kernels (every size class, and the survey of the
/// offsets) for keys `K` alone and with values `V`, with `u32` and `u64`
/// offsets. (Its longest segments use the radix sort's modules:
/// [`precompile_sort`], [`precompile_sort_pairs`].)
///
/// ```
/// use cuprim::precompile::{precompile_segsort, Target};
/// let dev = cuprim::Device::default()?;
/// precompile_segsort::<f32, u32>(Target::Device(&dev))?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_segsort<K: Element, V: Element>(target: Target<'_>) -> Result<Vec<KernelReport>> {
    use crate::algo::segsort::kernel_specs;
    let mut specs = kernel_specs::<K, K, u32>(false);
    specs.extend(kernel_specs::<K, K, u64>(false));
    specs.extend(kernel_specs::<K, V, u32>(true));
    specs.extend(kernel_specs::<K, V, u64>(true));
    specs.extend(crate::algo::segsort::plan::survey_specs());
    run(target, specs)
}

/// The kNN kernels for points `P` and `k` neighbours: the kd-tree build
/// and query kernels (for `D <= 16`) and the brute-force kernels, with the
/// candidate list compiled for `k` (sizes 1, 4, 8, 16, 32, 64, and a heap
/// past 64: one `k` of each size covers them all).
///
/// ```
/// use cuprim::precompile::{precompile_knn, Target};
/// let dev = cuprim::Device::default()?;
/// precompile_knn::<[f32; 3]>(Target::Device(&dev), 8)?;
/// assert!(precompile_knn::<[f32; 3]>(Target::Device(&dev), 0).is_err());
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_knn<P: crate::algo::knn::Point>(target: Target<'_>, k: usize) -> Result<Vec<KernelReport>> {
    use crate::algo::knn::{cuda_specs, MAX_DIM, MAX_K};
    if k == 0 || k > MAX_K || P::DIM == 0 || P::DIM > MAX_DIM {
        return Err(crate::Error::InvalidArgument(format!(
            "precompile_knn: k must be 1 to {MAX_K} and D 1 to {MAX_DIM} (got k = {k}, D = {})",
            P::DIM
        )));
    }
    run(target, cuda_specs::<P>(arch_of(target), k))
}

/// The kd-tree kernels of [`KdTree::build_from`](crate::algo::knn::KdTree::build_from)
/// and [`KdTree::query_from`](crate::algo::knn::KdTree::query_from) (with
/// `k` neighbours) over an input expression of points (a point `[F; D]`,
/// or a coordinate, a pair or a triple each; a buffer of points takes
/// [`precompile_knn`]'s modules). (The build's sorts and the Morton order's use
/// [`precompile_sort_pairs`]'s modules.)
///
/// ```
/// use cuprim::precompile::{precompile_expr_knn, Target};
/// use cuprim::prelude::*;
/// let host = Device::host();
/// let (xs, ys) = (DeviceVec::<f32>::zeros(&host, 0)?, DeviceVec::<f32>::zeros(&host, 0)?);
/// for report in precompile_expr_knn(Target::Arch(90), &zip(&xs, &ys), 8).unwrap_or_default() {
///     println!("{}: {}", report.name, report.log);
/// }
/// assert!(precompile_expr_knn(Target::Arch(90), &zip(&xs, &ys), 0).is_err());
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_expr_knn<E: crate::expr::Expr>(target: Target<'_>, points: &E, k: usize) -> Result<Vec<KernelReport>>
where
    E::Item: crate::algo::knn::PointValue,
{
    use crate::algo::knn::MAX_K;
    if k == 0 || k > MAX_K {
        return Err(crate::Error::InvalidArgument(format!(
            "precompile_expr_knn: k must be 1 to {MAX_K}, got {k}"
        )));
    }
    run(target, crate::algo::knn::cuda_specs_of(arch_of(target), points, k))
}

/// The reduce_by_key kernels for keys `K`, values `V` and `op` (u32 and
/// u64 counts; fast and deterministic for float values).
///
/// ```
/// use cuprim::precompile::{precompile_reduce_by_key, Target};
/// use cuprim::ops::Add;
/// let dev = cuprim::Device::default()?;
/// precompile_reduce_by_key::<u32, f32, _>(Target::Device(&dev), Add)?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_reduce_by_key<K: Element, V: Element, Op: Monoid<V>>(target: Target<'_>, op: Op) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    run(target, crate::algo::bykey::plan::reduce_by_key_specs::<K, V, Op>(arch, &op))
}

/// The reduce_by_key_by kernels for keys `K` equal under `cmp`, values `V` and `op`.
///
/// ```
/// use cuprim::precompile::{precompile_reduce_by_key_by, Target};
/// use cuprim::{cmp::Less, ops::Add};
/// let dev = cuprim::Device::default()?;
/// precompile_reduce_by_key_by::<f32, u32, _, _>(Target::Device(&dev), Add, Less)?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_reduce_by_key_by<K: Element, V: Element, Op: Monoid<V>, C: Comparator<K>>(
    target: Target<'_>,
    op: Op,
    cmp: C,
) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    run(
        target,
        crate::algo::bykey::plan::reduce_by_key_by_specs::<K, V, Op, C>(arch, &op, cmp),
    )
}

/// The unique, unique_count, unique_by_key (values `V`) and
/// run_length_encode kernels for keys `K`.
///
/// ```
/// use cuprim::precompile::{precompile_unique, Target};
/// let dev = cuprim::Device::default()?;
/// precompile_unique::<u32, f32>(Target::Device(&dev))?;
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn precompile_unique<K: Element, V: Element>(target: Target<'_>) -> Result<Vec<KernelReport>> {
    let arch = arch_of(target);
    run(target, crate::algo::bykey::plan::unique_specs::<K, V>(arch))
}
