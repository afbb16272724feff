//! Predicate collectives per segment: `segmented_count`, `segmented_any` and
//! `segmented_all` ([`SegmentedOps`](super::SegmentedOps)).
//!
//! Each is the segmented sum of a fused input: the elements zipped with the
//! predicate's parameter ([`Predicate::param`], a `constant` input, so one
//! compiled module serves every value of it) and mapped to 1 or 0 in the
//! offsets' index type. `any` and `all` then map the counts of the
//! predicate and of its negation to 1 or 0 (`u8`), one small pass over the
//! segments. So they run on the segmented reduction's kernels, host and
//! CUDA alike.

use super::plan;
use crate::algo::transform::plan::Collect;
use crate::element::{Element, IndexElement};
use crate::error::Result;
use crate::expr::{constant, zip, Expr as _, ExprOps as _, LazyOps as _};
use crate::jit::KernelSpec;
use crate::ops::{Add, Arith, UnaryOp};
use crate::pred::{Not, Predicate};
use crate::vec::{DeviceData, DeviceVec};
use std::marker::PhantomData;

/// `(x, p)` to 1 where the predicate holds for `x` (with parameter `p`),
/// else 0, as `I`.
struct CountIf<P, I>(P, PhantomData<fn() -> I>);

impl<P: Copy, I> Clone for CountIf<P, I> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P: Copy, I> Copy for CountIf<P, I> {}

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
        // The predicate's text reads `x` and `p`: a lambda names them.
        format!(
            "([]({t} x, {t} p) -> bool {{ return ({}); }})(x.a0, x.a1) ? 1 : 0",
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

/// The modules `segmented_count`, `segmented_any` and `segmented_all` of
/// `T` by `pred` run: the segmented sums of the predicate and of its
/// negation (`u32` and `u64` counts each), and the two flag maps, for
/// precompile.
pub(crate) fn kernel_specs<T: Element, P: Predicate<T>>(arch: u32, pred: P) -> Result<Vec<KernelSpec>> {
    let host = crate::Device::host();
    let x = DeviceVec::<T>::zeros(&host, 0)?;
    let params = constant(&host, pred.param(), 0);
    let mut specs = Vec::new();
    specs.extend(plan::kernel_specs_of(
        arch,
        &zip(x.lazy(), params).map(CountIf::<P, u32>(pred, PhantomData)),
        &Add,
    ));
    specs.extend(plan::kernel_specs_of(
        arch,
        &zip(x.lazy(), params).map(CountIf::<P, u64>(pred, PhantomData)),
        &Add,
    ));
    let not = Not(pred);
    specs.extend(plan::kernel_specs_of(
        arch,
        &zip(x.lazy(), params).map(CountIf::<Not<P>, u32>(not, PhantomData)),
        &Add,
    ));
    specs.extend(plan::kernel_specs_of(
        arch,
        &zip(x.lazy(), params).map(CountIf::<Not<P>, u64>(not, PhantomData)),
        &Add,
    ));
    let (c32, c64) = (DeviceVec::<u32>::zeros(&host, 0)?, DeviceVec::<u64>::zeros(&host, 0)?);
    specs.push(KernelSpec::of(&Collect::new(arch, &c32.lazy().map(Flag::<false>), 1)));
    specs.push(KernelSpec::of(&Collect::new(arch, &c32.lazy().map(Flag::<true>), 1)));
    specs.push(KernelSpec::of(&Collect::new(arch, &c64.lazy().map(Flag::<false>), 1)));
    specs.push(KernelSpec::of(&Collect::new(arch, &c64.lazy().map(Flag::<true>), 1)));
    Ok(specs)
}
