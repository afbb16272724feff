//! Sorts of tuples: lexicographic keys ([`ExprOps::sorted_lex`],
//! [`ExprOps::sorted_lex3`], [`ExprOps::sorted_lex_pairs`]) and tuple values
//! ([`ExprOps::sorted_pairs_unzip`], [`ExprOps::sorted_pairs_unzip3`]).
//!
//! The fields are sorted least significant first, each by one stable radix
//! sort that carries the elements' positions (`u32` below 2^32 elements,
//! else `u64`), the next field read through those positions (a gathered
//! input expression, no copy of its own): a sort that is stable on field k
//! keeps the order of fields k + 1.. among equal values of k. The last sort
//! writes the first field in order; the other fields and the values are
//! gathered once at the end. Every step is a primitive of its own, so the
//! host backend and CUDA share the code, and each field keeps its own
//! order (`total_cmp` for floats), whatever the widths of the fields.
//!
//! Tuple values follow their keys the same way: the keys sorted with their
//! positions, then the values read through the positions once, each field
//! written to its own vector.
//!
//! [`ExprOps::sorted_lex`]: crate::expr::ExprOps::sorted_lex
//! [`ExprOps::sorted_lex3`]: crate::expr::ExprOps::sorted_lex3
//! [`ExprOps::sorted_lex_pairs`]: crate::expr::ExprOps::sorted_lex_pairs
//! [`ExprOps::sorted_pairs_unzip`]: crate::expr::ExprOps::sorted_pairs_unzip
//! [`ExprOps::sorted_pairs_unzip3`]: crate::expr::ExprOps::sorted_pairs_unzip3

use super::SortOptions;
use crate::element::{Element, IndexElement};
use crate::error::{Error, Result};
use crate::expr::{counting, Expr, ExprOps as _, IntoExpr, LazyOps as _};
use crate::ops::Arith;
use crate::vec::DeviceVec;
use crate::Device;

/// Runs `$body` with `$P` naming the element positions' type: `u32` for
/// at most `u32::MAX` elements, else `u64`.
macro_rules! with_positions {
    ($n:expr, $P:ident => $body:expr) => {
        if $n <= u32::MAX as usize {
            type $P = u32;
            $body
        } else {
            type $P = u64;
            $body
        }
    };
}

/// Whole fields only: a bit range would cut every field alike.
fn whole_fields(op: &str, opts: &SortOptions) -> Result<()> {
    if opts.begin_bit != 0 || opts.end_bit.is_some() {
        return Err(Error::InvalidArgument(format!(
            "{op}: a lexicographic sort orders whole fields, so SortOptions::bits is not supported here"
        )));
    }
    Ok(())
}

/// Positions 0, 1, ... sorted stably by `last` (the least significant field).
fn positions_by<P: IndexElement + Arith, L: Element>(dev: &Device, last: &DeviceVec<L>, opts: SortOptions) -> Result<DeviceVec<P>> {
    Ok(last
        .lazy()
        .sorted_pairs_with(counting(dev, P::zero(), P::one(), last.len()), opts)?
        .1)
}

/// One more significant field: the positions re-sorted stably by
/// `field[position]`.
fn by<P: IndexElement + Arith, F: Element>(field: &DeviceVec<F>, p: &DeviceVec<P>, opts: SortOptions) -> Result<DeviceVec<P>> {
    Ok(field.permute(p).sorted_pairs_with(p, opts)?.1)
}

/// `field` in the order of positions `p`.
fn gathered<P: IndexElement + Arith, F: Element>(field: &DeviceVec<F>, p: &DeviceVec<P>) -> Result<DeviceVec<F>> {
    field.permute(p).collect()
}

/// The fields of pairs, sorted lexicographically, and the positions that
/// sort them (for the values).
fn pairs_in_order<P: IndexElement + Arith, A: Element, B: Element>(
    a: &DeviceVec<A>,
    b: &DeviceVec<B>,
    opts: SortOptions,
) -> Result<(DeviceVec<A>, DeviceVec<B>, DeviceVec<P>)> {
    let p = positions_by::<P, B>(a.device(), b, opts)?;
    let (sa, p) = a.permute(&p).sorted_pairs_with(&p, opts)?;
    Ok((sa, gathered(b, &p)?, p))
}

fn triples_in_order<P: IndexElement + Arith, A: Element, B: Element, C: Element>(
    a: &DeviceVec<A>,
    b: &DeviceVec<B>,
    c: &DeviceVec<C>,
    opts: SortOptions,
) -> Result<(DeviceVec<A>, DeviceVec<B>, DeviceVec<C>)> {
    let p = by(b, &positions_by::<P, C>(a.device(), c, opts)?, opts)?;
    let (sa, p) = a.permute(&p).sorted_pairs_with(&p, opts)?;
    Ok((sa, gathered(b, &p)?, gathered(c, &p)?))
}

/// `keys` (an expression of pairs) sorted lexicographically, each field
/// into its own vector.
pub(crate) fn sorted_lex_of<E, A: Element, B: Element>(keys: &E, opts: SortOptions) -> Result<(DeviceVec<A>, DeviceVec<B>)>
where
    E: Expr<Item = (A, B)>,
{
    whole_fields("sorted_lex", &opts)?;
    let (a, b) = keys.unzip()?;
    if a.len() < 2 {
        return Ok((a, b));
    }
    with_positions!(a.len(), P => {
        let (sa, sb, _) = pairs_in_order::<P, A, B>(&a, &b, opts)?;
        Ok((sa, sb))
    })
}

/// `keys` (an expression of triples) sorted lexicographically, each field
/// into its own vector.
#[allow(clippy::type_complexity)]
pub(crate) fn sorted_lex3_of<E, A: Element, B: Element, C: Element>(
    keys: &E,
    opts: SortOptions,
) -> Result<(DeviceVec<A>, DeviceVec<B>, DeviceVec<C>)>
where
    E: Expr<Item = (A, B, C)>,
{
    whole_fields("sorted_lex3", &opts)?;
    let (a, b, c) = keys.unzip3()?;
    if a.len() < 2 {
        return Ok((a, b, c));
    }
    with_positions!(a.len(), P => triples_in_order::<P, A, B, C>(&a, &b, &c, opts))
}

/// `keys` (an expression of pairs) sorted lexicographically with `values`
/// (a buffer or an expression as long as the keys) following them.
#[allow(clippy::type_complexity)]
pub(crate) fn sorted_lex_pairs_of<E, A: Element, B: Element, V: IntoExpr>(
    keys: &E,
    values: V,
    opts: SortOptions,
) -> Result<(DeviceVec<A>, DeviceVec<B>, DeviceVec<<V::Expr as crate::expr::node::Node>::Item>)>
where
    E: Expr<Item = (A, B)>,
    <V::Expr as crate::expr::node::Node>::Item: Element,
{
    const OP: &str = "sorted_lex_pairs";
    whole_fields(OP, &opts)?;
    let values = values.into_expr();
    same_shape(OP, keys, &values)?;
    let (a, b) = keys.unzip()?;
    if a.len() < 2 {
        return Ok((a, b, values.collect()?));
    }
    with_positions!(a.len(), P => {
        let (sa, sb, p) = pairs_in_order::<P, A, B>(&a, &b, opts)?;
        Ok((sa, sb, values.permute(&p).collect()?))
    })
}

/// Positions 0, 1, ... sorted stably by `keys` (with `opts`), and the keys
/// in that order.
fn keys_in_order<P: IndexElement + Arith, E: Expr>(keys: &E, opts: SortOptions) -> Result<(DeviceVec<E::Item>, DeviceVec<P>)>
where
    E::Item: Element,
{
    keys.sorted_pairs_with(counting(keys.device(), P::zero(), P::one(), keys.len()), opts)
}

/// Checks `values` against `keys` before any work.
fn same_shape<K: Expr, V: Expr>(op: &'static str, keys: &K, values: &V) -> Result<()> {
    crate::algo::same_device(op, keys.device(), values.device())?;
    crate::algo::same_len(op, keys.len(), values.len())
}

/// `keys` sorted with pair `values` following them, each field of the
/// values into its own vector.
#[allow(clippy::type_complexity)]
pub(crate) fn sorted_pairs_unzip_of<K: Expr, V: Expr<Item = (A, B)>, A: Element, B: Element>(
    keys: &K,
    values: &V,
    opts: SortOptions,
) -> Result<(DeviceVec<K::Item>, DeviceVec<A>, DeviceVec<B>)>
where
    K::Item: Element,
{
    same_shape("sorted_pairs_unzip", keys, values)?;
    with_positions!(keys.len(), P => {
        let (k, p) = keys_in_order::<P, K>(keys, opts)?;
        let (a, b) = values.clone().permute(&p).unzip()?;
        Ok((k, a, b))
    })
}

/// `keys` sorted with triple `values` following them, each field of the
/// values into its own vector.
#[allow(clippy::type_complexity)]
pub(crate) fn sorted_pairs_unzip3_of<K: Expr, V: Expr<Item = (A, B, C)>, A: Element, B: Element, C: Element>(
    keys: &K,
    values: &V,
    opts: SortOptions,
) -> Result<(DeviceVec<K::Item>, DeviceVec<A>, DeviceVec<B>, DeviceVec<C>)>
where
    K::Item: Element,
{
    same_shape("sorted_pairs_unzip3", keys, values)?;
    with_positions!(keys.len(), P => {
        let (k, p) = keys_in_order::<P, K>(keys, opts)?;
        let (a, b, c) = values.clone().permute(&p).unzip3()?;
        Ok((k, a, b, c))
    })
}
