//! Predicate collectives per segment: `segmented_count`, `segmented_any`,
//! `segmented_all`, `segmented_quantify` and `segmented_find_first`
//! ([`SegmentedOps`](super::SegmentedOps)).
//!
//! Each folds a fused input: the elements zipped with the predicate's
//! parameter ([`Predicate::param`], a `constant` input, so one compiled
//! module serves every value of it) and mapped to a `u32` flag, 1 where the
//! predicate holds. `count` sums the flags of each segment in the offsets'
//! type and `find_first` takes the first set one's index
//! ([`flags`](super::flags)); `any`, `all` and `quantify` then map the
//! counts of the predicate (or of its negation) to a `u8` per segment, one
//! small pass over the segments. So they run on the segmented reduction's
//! kernels, host and CUDA alike.

use super::flags::{self, Fold};
use crate::algo::transform::plan::Collect;
use crate::element::{Element, IndexElement};
use crate::error::Result;
use crate::expr::{constant, zip, Expr as _, ExprOps as _, LazyOps as _};
use crate::jit::KernelSpec;
use crate::ops::{Arith, UnaryOp};
use crate::pred::{Not, Predicate};
use crate::vec::{DeviceData, DeviceVec};

/// `(x, p)` to 1 where the predicate holds for `x` (with parameter `p`),
/// else 0. Four bytes whatever the offsets: the flags are widened as they
/// are folded ([`flags`](super::flags)).
#[derive(Clone, Copy)]
struct Holds<P>(P);

impl<T: Element, P: Predicate<T>> UnaryOp<(T, T)> for Holds<P> {
    type Output = u32;
    fn apply(&self, x: (T, T)) -> u32 {
        self.0.test(x.0) as u32
    }
    fn cuda_expr(&self) -> String {
        // The predicate's text reads `x` and `p`, so a lambda names the
        // tuple's fields so.
        format!(
            "([]({t} x, {t} p) -> bool {{ return ({}); }})(x.a0, x.a1) ? 1u : 0u",
            self.0.cuda_expr(),
            t = T::CUDA_TYPE
        )
    }
    fn cuda_expr_is_fixed(&self) -> bool {
        self.0.cuda_expr_is_fixed()
    }
}

/// A count to 1 where it is zero (`ZERO`) or not zero, else 0.
#[derive(Clone, Copy)]
struct Flag<const ZERO: bool>;

impl<I: IndexElement, const ZERO: bool> UnaryOp<I> for Flag<ZERO> {
    type Output = u8;
    fn apply(&self, c: I) -> u8 {
        ((c.as_u64() == 0) == ZERO) as u8
    }
    fn cuda_expr(&self) -> String {
        if ZERO { "x == 0 ? 1 : 0" } else { "x != 0 ? 1 : 0" }.into()
    }
}

/// A count to 0, 1 or 2 (two or more).
#[derive(Clone, Copy)]
struct UpToTwo;

impl<I: IndexElement> UnaryOp<I> for UpToTwo {
    type Output = u8;
    fn apply(&self, c: I) -> u8 {
        c.as_u64().min(2) as u8
    }
    fn cuda_expr(&self) -> String {
        "x < 2 ? x : 2".into()
    }
}

/// `fold` over each segment of `pred`'s flags.
fn fold_pred<T: Element, I: IndexElement + Arith, P: Predicate<T>>(
    data: &(impl DeviceData<T> + ?Sized),
    offsets: &(impl DeviceData<I> + ?Sized),
    pred: P,
    fold: Fold,
) -> Result<DeviceVec<I>> {
    let params = constant(data.device(), pred.param(), data.len());
    flags::fold_of(&zip(data.lazy(), params).map(Holds(pred)), offsets, fold)
}

/// How many elements of each segment satisfy `pred`.
pub(crate) fn segmented_count_of<T: Element, I: IndexElement + Arith, P: Predicate<T>>(
    data: &(impl DeviceData<T> + ?Sized),
    offsets: &(impl DeviceData<I> + ?Sized),
    pred: P,
) -> Result<DeviceVec<I>> {
    fold_pred(data, offsets, pred, Fold::Count)
}

/// 1 for each segment with an element satisfying `pred` (`ANY`), or with
/// none failing it, else 0.
pub(crate) fn segmented_flags_of<T: Element, I: IndexElement + Arith, P: Predicate<T>, const ANY: bool>(
    data: &(impl DeviceData<T> + ?Sized),
    offsets: &(impl DeviceData<I> + ?Sized),
    pred: P,
) -> Result<DeviceVec<u8>> {
    if ANY {
        segmented_count_of(data, offsets, pred)?.lazy().map(Flag::<false>).collect()
    } else {
        segmented_count_of(data, offsets, Not(pred))?.lazy().map(Flag::<true>).collect()
    }
}

/// 0, 1 or 2 per segment: no element, one, or two or more satisfy `pred`.
pub(crate) fn segmented_quantify_of<T: Element, I: IndexElement + Arith, P: Predicate<T>>(
    data: &(impl DeviceData<T> + ?Sized),
    offsets: &(impl DeviceData<I> + ?Sized),
    pred: P,
) -> Result<DeviceVec<u8>> {
    segmented_count_of(data, offsets, pred)?.lazy().map(UpToTwo).collect()
}

/// The index, within its segment, of each segment's first element
/// satisfying `pred`; `I::MAX` where none does.
pub(crate) fn segmented_find_first_of<T: Element, I: IndexElement + Arith, P: Predicate<T>>(
    data: &(impl DeviceData<T> + ?Sized),
    offsets: &(impl DeviceData<I> + ?Sized),
    pred: P,
) -> Result<DeviceVec<I>> {
    fold_pred(data, offsets, pred, Fold::First)
}

/// The modules the collectives per segment of `T` by `pred` run: the
/// counts of the predicate and of its negation and the first matches
/// (`u32` and `u64` offsets each), and the maps over the counts, for
/// precompile.
pub(crate) fn kernel_specs<T: Element, P: Predicate<T>>(arch: u32, pred: P) -> Result<Vec<KernelSpec>> {
    let host = crate::Device::host();
    let x = DeviceVec::<T>::zeros(&host, 0)?;
    let params = constant(&host, pred.param(), 0);
    let holds = zip(x.lazy(), params).map(Holds(pred));
    let fails = zip(x.lazy(), params).map(Holds(Not(pred)));
    let mut specs = vec![
        flags::spec_of::<_, u32>(arch, &holds, Fold::Count),
        flags::spec_of::<_, u64>(arch, &holds, Fold::Count),
        flags::spec_of::<_, u32>(arch, &fails, Fold::Count),
        flags::spec_of::<_, u64>(arch, &fails, Fold::Count),
        flags::spec_of::<_, u32>(arch, &holds, Fold::First),
        flags::spec_of::<_, u64>(arch, &holds, Fold::First),
    ];
    let (c32, c64) = (DeviceVec::<u32>::zeros(&host, 0)?, DeviceVec::<u64>::zeros(&host, 0)?);
    specs.push(KernelSpec::of(&Collect::new(arch, &c32.lazy().map(Flag::<false>), 1)));
    specs.push(KernelSpec::of(&Collect::new(arch, &c32.lazy().map(Flag::<true>), 1)));
    specs.push(KernelSpec::of(&Collect::new(arch, &c64.lazy().map(Flag::<false>), 1)));
    specs.push(KernelSpec::of(&Collect::new(arch, &c64.lazy().map(Flag::<true>), 1)));
    specs.push(KernelSpec::of(&Collect::new(arch, &c32.lazy().map(UpToTwo), 1)));
    specs.push(KernelSpec::of(&Collect::new(arch, &c64.lazy().map(UpToTwo), 1)));
    Ok(specs)
}
