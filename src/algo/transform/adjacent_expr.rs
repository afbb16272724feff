//! Thrust's adjacent difference of an input expression
//! ([`ExprOps::adjacent_difference`](crate::expr::ExprOps::adjacent_difference)):
//! `out[0] = x[0]`, and `out[1..]` is the collect of
//! `zip(x[1..], x[..n - 1]).map(op)`, the expression read in place (each
//! element twice, the second read of neighbours from cache) and no
//! temporary written. Buffers keep their own kernel
//! ([`TransformOps::adjacent_difference`](super::TransformOps::adjacent_difference)).

use crate::element::Element;
use crate::error::Result;
use crate::expr::{zip, Expr, ExprOps as _};
use crate::ops::{BinaryOp, UnaryOp};
use crate::vec::DeviceVec;

/// A binary operator applied to a pair: `op(x.0, x.1)`.
#[derive(Clone, Copy)]
struct OnPair<Op>(Op);

impl<T: Element, Op: BinaryOp<T>> UnaryOp<(T, T)> for OnPair<Op> {
    type Output = T;
    fn apply(&self, x: (T, T)) -> T {
        self.0.apply(x.0, x.1)
    }
    fn cuda_expr(&self) -> String {
        // The operator's text reads `a` and `b`: a lambda names them.
        format!(
            "([]({t} a, {t} b) -> {t} {{ return ({}); }})(x.a0, x.a1)",
            self.0.cuda_expr(),
            t = T::CUDA_TYPE
        )
    }
    fn cuda_expr_is_fixed(&self) -> bool {
        self.0.cuda_expr_is_fixed()
    }
}

/// The adjacent difference of `x` by `op` into a new vector.
pub(crate) fn adjacent_difference_of<E: Expr, Op: BinaryOp<E::Item>>(x: &E, op: Op) -> Result<DeviceVec<E::Item>>
where
    E::Item: Element,
{
    let n = x.len();
    let mut out = DeviceVec::<E::Item>::alloc_uninit(x.device(), n)?;
    if n == 0 {
        return Ok(out);
    }
    x.slice(..1)?.collect_into(&mut out.slice_mut(..1)?)?;
    if n > 1 {
        zip(x.slice(1..)?, x.slice(..n - 1)?)
            .map(OnPair(op))
            .collect_into(&mut out.slice_mut(1..)?)?;
    }
    Ok(out)
}

/// The collect module of `x`'s adjacent difference by `op`, for precompile.
pub(crate) fn kernel_specs<E: Expr, Op: BinaryOp<E::Item>>(arch: u32, x: &E, op: Op) -> Vec<crate::jit::KernelSpec>
where
    E::Item: Element,
{
    let pairs = zip(x.clone(), x.clone()).map(OnPair(op));
    vec![
        crate::jit::KernelSpec::of(&super::plan::Collect::new(arch, x, 1)),
        crate::jit::KernelSpec::of(&super::plan::Collect::new(arch, &pairs, 1)),
    ]
}
