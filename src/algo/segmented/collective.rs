//! Predicate collectives per segment: `segmented_count`, `segmented_any`,
//! `segmented_all`, `segmented_quantify` and `segmented_find_first`
//! ([`SegmentedOps`](super::SegmentedOps)).
//!
//! Each is the segmented sum of a fused input: the elements zipped with the
//! predicate's parameter ([`Predicate::param`], a `constant` input, so one
//! compiled module serves every value of it) and mapped to 1 or 0 in the
//! offsets' index type. `any`, `all` and `quantify` then map the counts of
//! the predicate (or of its negation) to a `u8` per segment, one small pass
//! over the segments. `find_first` is the segmented minimum of each
//! matching element's position (the others `I::MAX`), made relative to its
//! segment's start in the same small pass. So they run on the segmented
//! reduction's kernels, host and CUDA alike.

use super::plan;
use crate::algo::transform::plan::Collect;
use crate::element::{Element, IndexElement};
use crate::error::Result;
use crate::expr::{constant, counting, zip, zip3, Expr as _, ExprOps as _, LazyOps as _};
use crate::jit::KernelSpec;
use crate::ops::{Add, Arith, Min, UnaryOp};
use crate::pred::{Not, Predicate};
use crate::vec::{DeviceData, DeviceVec};
use std::marker::PhantomData;

/// `pred` on a tuple input's fields `x.a0` (the element) and `x.a1` (the
/// predicate's parameter), as CUDA text: the predicate's text reads `x` and
/// `p`, so a lambda names them.
fn tested<T: Element, P: Predicate<T>>(pred: &P) -> String {
    format!(
        "([]({t} x, {t} p) -> bool {{ return ({}); }})(x.a0, x.a1)",
        pred.cuda_expr(),
        t = T::CUDA_TYPE
    )
}

/// `(x, p)` to 1 where the predicate holds for `x` (with parameter `p`),
/// else 0, as `I`.
#[derive(Clone, Copy)]
struct CountIf<P, I>(P, PhantomData<fn() -> I>);

impl<T: Element, P: Predicate<T>, I: IndexElement + Arith> UnaryOp<(T, T)> for CountIf<P, I> {
    type Output = I;
    fn apply(&self, x: (T, T)) -> I {
        if self.0.test(x.0) {
            I::one()
        } else {
            I::zero()
        }
    }
    fn cuda_expr(&self) -> String {
        format!("{} ? 1 : 0", tested::<T, P>(&self.0))
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

/// `(x, p, i)` to `i` where the predicate holds for `x`, else `I::MAX`.
#[derive(Clone, Copy)]
struct PositionIf<P, I>(P, PhantomData<fn() -> I>);

impl<T: Element, P: Predicate<T>, I: IndexElement + Arith> UnaryOp<(T, T, I)> for PositionIf<P, I> {
    type Output = I;
    fn apply(&self, x: (T, T, I)) -> I {
        if self.0.test(x.0) {
            x.2
        } else {
            I::highest()
        }
    }
    fn cuda_expr(&self) -> String {
        format!("{} ? x.a2 : {}", tested::<T, P>(&self.0), I::highest().cuda_literal())
    }
    fn cuda_expr_is_fixed(&self) -> bool {
        self.0.cuda_expr_is_fixed()
    }
}

/// `(g, start)` to `g - start`, `I::MAX` kept.
#[derive(Clone, Copy)]
struct FromStart;

impl<I: IndexElement + Arith> UnaryOp<(I, I)> for FromStart {
    type Output = I;
    fn apply(&self, x: (I, I)) -> I {
        if x.0 == I::highest() {
            x.0
        } else {
            x.0.sub(x.1)
        }
    }
    fn cuda_expr(&self) -> String {
        format!("x.a0 == {m} ? x.a0 : x.a0 - x.a1", m = I::highest().cuda_literal())
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

/// How many elements of each segment satisfy `pred`.
pub(crate) fn segmented_count_of<T: Element, I: IndexElement + Arith, P: Predicate<T>>(
    data: &(impl DeviceData<T> + ?Sized),
    offsets: &(impl DeviceData<I> + ?Sized),
    pred: P,
) -> Result<DeviceVec<I>> {
    let params = constant(data.device(), pred.param(), data.len());
    let flags = zip(data.lazy(), params).map(CountIf::<P, I>(pred, PhantomData));
    super::segmented_reduce_of(&flags, offsets, Add)
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
    let n = data.len();
    let dev = data.device();
    let positions =
        zip3(data.lazy(), constant(dev, pred.param(), n), counting(dev, I::zero(), I::one(), n)).map(PositionIf::<P, I>(pred, PhantomData));
    let first = super::segmented_reduce_of(&positions, offsets, Min)?;
    let segments = first.len();
    if segments == 0 {
        return Ok(first);
    }
    zip(first.lazy(), offsets.lazy().slice(..segments)?).map(FromStart).collect()
}

/// The modules the collectives per segment of `T` by `pred` run: the
/// segmented sums of the predicate and of its negation and the segmented
/// minimum of matching positions (`u32` and `u64` each), and the maps over
/// the segments, for precompile.
pub(crate) fn kernel_specs<T: Element, P: Predicate<T>>(arch: u32, pred: P) -> Result<Vec<KernelSpec>> {
    let host = crate::Device::host();
    let x = DeviceVec::<T>::zeros(&host, 0)?;
    let params = constant(&host, pred.param(), 0);
    let not = Not(pred);
    let counts32 = zip(x.lazy(), params).map(CountIf::<P, u32>(pred, PhantomData));
    let counts64 = zip(x.lazy(), params).map(CountIf::<P, u64>(pred, PhantomData));
    let fails32 = zip(x.lazy(), params).map(CountIf::<Not<P>, u32>(not, PhantomData));
    let fails64 = zip(x.lazy(), params).map(CountIf::<Not<P>, u64>(not, PhantomData));
    let at32 = zip3(x.lazy(), params, counting(&host, 0u32, 1, 0)).map(PositionIf::<P, u32>(pred, PhantomData));
    let at64 = zip3(x.lazy(), params, counting(&host, 0u64, 1, 0)).map(PositionIf::<P, u64>(pred, PhantomData));
    let mut specs = vec![
        plan::reduce_spec_of::<_, u32, _>(arch, &counts32, &Add),
        plan::reduce_spec_of::<_, u64, _>(arch, &counts64, &Add),
        plan::reduce_spec_of::<_, u32, _>(arch, &fails32, &Add),
        plan::reduce_spec_of::<_, u64, _>(arch, &fails64, &Add),
        plan::reduce_spec_of::<_, u32, _>(arch, &at32, &Min),
        plan::reduce_spec_of::<_, u64, _>(arch, &at64, &Min),
    ];
    let (c32, c64) = (DeviceVec::<u32>::zeros(&host, 0)?, DeviceVec::<u64>::zeros(&host, 0)?);
    specs.push(KernelSpec::of(&Collect::new(arch, &c32.lazy().map(Flag::<false>), 1)));
    specs.push(KernelSpec::of(&Collect::new(arch, &c32.lazy().map(Flag::<true>), 1)));
    specs.push(KernelSpec::of(&Collect::new(arch, &c64.lazy().map(Flag::<false>), 1)));
    specs.push(KernelSpec::of(&Collect::new(arch, &c64.lazy().map(Flag::<true>), 1)));
    specs.push(KernelSpec::of(&Collect::new(arch, &zip(c32.lazy(), c32.lazy()).map(FromStart), 1)));
    specs.push(KernelSpec::of(&Collect::new(arch, &zip(c64.lazy(), c64.lazy()).map(FromStart), 1)));
    specs.push(KernelSpec::of(&Collect::new(arch, &c32.lazy().map(UpToTwo), 1)));
    specs.push(KernelSpec::of(&Collect::new(arch, &c64.lazy().map(UpToTwo), 1)));
    Ok(specs)
}
