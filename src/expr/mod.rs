//! Fused inputs: lazy expressions read by the consuming kernel itself.
//!
//! An expression is a recipe for element `i`: a buffer ([`LazyOps::lazy`]),
//! a [`counting`] sequence, a [`constant`], a [`map`](Expr::map) of another
//! expression, a [`zip`] / [`zip3`] of several (yielding tuples), a
//! [`permute`](Expr::permute)d view, or a [`slice`](Expr::slice) of any of
//! these. Nothing is computed when it is built. The primitive that consumes
//! it compiles the whole recipe into its kernel as one device function, so
//!
//! ```
//! use cuprim::prelude::*;
//! let dev = Device::default()?;
//! let a = DeviceVec::from_slice(&dev, &[1.0f32, 2.0, 3.0])?;
//! let b = DeviceVec::from_slice(&dev, &[4.0f32, 5.0, 6.0])?;
//! let dot = zip(&a, &b).map(Mul).sum()?;     // one kernel, no temporary
//! assert_eq!(dot, 32.0);
//! # Ok::<(), cuprim::Error>(())
//! ```
//!
//! reads `a` and `b` once and writes nothing but the result. Plain buffers
//! keep their 16-byte vector loads inside an expression whenever every
//! buffer in it starts at the same offset from a vector boundary (always
//! for whole vectors and equally offset slices); otherwise the kernel reads
//! one element at a time.
//!
//! Consumers today: [`reduce`](ExprOps::reduce) and its conveniences
//! ([`reduce_to`](ExprOps::reduce_to), [`sum`](ExprOps::sum), [`min`](ExprOps::min),
//! [`max`](ExprOps::max), [`count`](ExprOps::count), [`min_element`](ExprOps::min_element),
//! [`max_element`](ExprOps::max_element) and their `_to` forms),
//! [`scan`](ExprOps::scan) / [`exclusive_scan`](ExprOps::exclusive_scan) /
//! [`scan_by_key`](ExprOps::scan_by_key) (keys and values both expressions),
//! [`histogram`](ExprOps::histogram), selection ([`copy_if`](ExprOps::copy_if),
//! [`copy_if_into`](ExprOps::copy_if_into), [`partition_copy`](ExprOps::partition_copy)),
//! searches with computed queries ([`lower_bound_in`](ExprOps::lower_bound_in),
//! [`upper_bound_in`](ExprOps::upper_bound_in), [`binary_search_in`](ExprOps::binary_search_in),
//! [`search_in_with`](ExprOps::search_in_with)), merges and set operations,
//! keys alone or by key with the values expressions too
//! ([`merge_with`](ExprOps::merge_with), [`merge_by_key_with`](ExprOps::merge_by_key_with),
//! [`set_union_with`](ExprOps::set_union_with),
//! [`set_union_by_key_with`](ExprOps::set_union_by_key_with) and the other
//! set operations' `_with` and `_by_key_with` forms), runs of equal keys with the
//! keys and the values expressions ([`reduce_by_key`](ExprOps::reduce_by_key),
//! [`reduce_by_key_into`](ExprOps::reduce_by_key_into), tuple values written
//! unzipped by [`reduce_by_key_unzip`](ExprOps::reduce_by_key_unzip) /
//! [`reduce_by_key_unzip3`](ExprOps::reduce_by_key_unzip3), [`unique`](ExprOps::unique),
//! [`unique_count`](ExprOps::unique_count), [`unique_into`](ExprOps::unique_into),
//! [`unique_by_key`](ExprOps::unique_by_key), [`unique_by_key_unzip`](ExprOps::unique_by_key_unzip),
//! [`run_length_encode`](ExprOps::run_length_encode)), segmented reductions
//! ([`segmented_reduce`](ExprOps::segmented_reduce), [`segmented_sum`](ExprOps::segmented_sum),
//! [`segmented_min_element`](ExprOps::segmented_min_element),
//! [`segmented_max_element`](ExprOps::segmented_max_element); the offsets a
//! buffer or an expression, collected first), sorts into new vectors ([`sorted`](ExprOps::sorted),
//! [`sorted_with`](ExprOps::sorted_with), [`sorted_pairs`](ExprOps::sorted_pairs),
//! [`sorted_pairs_with`](ExprOps::sorted_pairs_with): the radix sort's first
//! pass reads the expressions), segmented sorts into new vectors
//! ([`segmented_sorted`](ExprOps::segmented_sorted),
//! [`segmented_sorted_with`](ExprOps::segmented_sorted_with),
//! [`segmented_sorted_pairs`](ExprOps::segmented_sorted_pairs),
//! [`segmented_sorted_pairs_with`](ExprOps::segmented_sorted_pairs_with): each
//! segment's first read is of the expressions; the offsets as for the
//! reductions), top-k and selection
//! ([`top_k`](ExprOps::top_k), [`top_k_with`](ExprOps::top_k_with),
//! [`select_nth`](ExprOps::select_nth): every selection kernel reads the
//! expression where the buffer form reads the input), and materialisation
//! ([`collect`](ExprOps::collect), [`collect_into`](ExprOps::collect_into),
//! [`unzip`](ExprOps::unzip), [`unzip_into`](ExprOps::unzip_into), [`unzip3`](ExprOps::unzip3),
//! [`to_vec`](ExprOps::to_vec)). Every other primitive takes the collected vector.
//!
//! Some primitives need no consumer of their own, because an expression
//! and `collect` already are them, in the same one pass:
//! - a transform is `x.map(f).collect()` (or `.collect_into(&mut out)` into
//!   an existing buffer), a binary transform `zip(&a, &b).map(f).collect()`;
//! - fill and sequence are `constant(..)` and `counting(..)` collected;
//! - a gather is `x.permute(&idx).collect()`, and a gather whose indices are
//!   themselves computed is [`permute_by`](Expr::permute_by) (any
//!   expression of `u32` / `u64` indices, checked the same way), so
//!   `x.permute_by(counting(..).map(f)).sum()` gathers and reduces with no
//!   index buffer and no gathered buffer.
//!
//! kd-trees take their points and queries as expressions
//! ([`KdTree::build_from`](crate::algo::knn::KdTree::build_from),
//! [`KdTree::query_from`](crate::algo::knn::KdTree::query_from)): of points
//! `[F; D]` (a buffer of them is an expression too, its slices and gathers
//! with it: [`LazyOps`] and [`IntoExpr`] take `DeviceVec<[F; D]>`), or of
//! one to three coordinate columns zipped. The comparison sorts read an
//! expression in their tile sort ([`sorted_by`](ExprOps::sorted_by),
//! [`sorted_pairs_by`](ExprOps::sorted_pairs_by)).
//!
//! Not fused yet: the batched top-k (`top_k_rows`, `top_k_segments`) and
//! brute-force kNN: they take `collect()`'s vector (one extra write and
//! read), or `unzip()`'s.
//!
//! On the host backend an expression is evaluated element by element into
//! a vector and handed to the same host code as a buffer would be, so fused
//! and unfused calls give the same bits there too.
//!
//! # Errors
//! Parts of one expression must live on one device and (zipped parts) have
//! one length: the consuming call fails with [`Error::DeviceMismatch`] or
//! [`Error::LengthMismatch`] otherwise. A permutation index at or past its
//! source's length fails the call with [`Error::IndexOutOfBounds`] (checked
//! on the device; the call then waits for the GPU).

pub(crate) mod args;
pub(crate) mod consume;
pub(crate) mod node;

use crate::device::Device;
use crate::element::{Element, IndexElement, Storable};
use crate::error::{Error, Result};
use crate::ops::{Arith, UnaryOp};
use crate::value::Value;
use crate::vec::raw::Mem;
use crate::vec::DeviceData;
use std::ops::RangeBounds;

pub use consume::ExprOps;
pub use node::{Constant, Counting, Leaf, Map, Permute, Zip, Zip3};

/// An input expression. Implemented by the node types of this module only
/// (sealed); built with [`LazyOps`], [`counting`], [`constant`], [`zip`],
/// [`zip3`] and the methods below. The consuming methods live in
/// [`ExprOps`] and are listed in the [module docs](self).
pub trait Expr: node::Node {
    /// Number of elements.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// assert_eq!(counting(&dev, 0u32, 1, 10).len(), 10);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn len(&self) -> usize {
        self.length()
    }

    /// True when there are no elements.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// assert!(constant(&dev, 1.5f32, 0).is_empty());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn is_empty(&self) -> bool {
        self.length() == 0
    }

    /// The device the expression's data lives on.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// assert_eq!(counting(&dev, 0u8, 1, 3).device().is_cuda(), dev.is_cuda());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn device(&self) -> &Device {
        self.device_ref()
    }

    /// `f(x)` for every element `x`, computed where it is read. Maps
    /// compose: `x.map(f).map(g)` is one expression.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::{Cast, Square};
    /// let dev = Device::default()?;
    /// let squares = counting(&dev, 1u32, 1, 4).map(Square).map(Cast::<f64>::new());
    /// assert_eq!(squares.to_vec()?, vec![1.0, 4.0, 9.0, 16.0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn map<F: UnaryOp<Self::Item>>(self, f: F) -> Map<Self, F> {
        Map { inner: self, f }
    }

    /// The gathered view `self[idx[i]]`, as long as `idx`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let idx = DeviceVec::from_slice(&dev, &[3u32, 0, 3])?;
    /// let v = counting(&dev, 10i32, 10, 4).permute(&idx);
    /// assert_eq!(v.to_vec()?, vec![40, 10, 40]);
    /// let bad = DeviceVec::from_slice(&dev, &[4u32])?;
    /// assert!(counting(&dev, 10i32, 10, 4).permute(&bad).sum().is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn permute<'i, I: IndexElement>(self, idx: &'i (impl DeviceData<I> + ?Sized)) -> Permute<Self, Leaf<'i, I>> {
        Permute { src: self, idx: leaf(idx) }
    }

    /// The gathered view `self[idx[i]]` with the indices an expression
    /// (or a buffer): a gather whose indices are computed where they are
    /// read. `x.permute_by(idx).collect()` is the fused form of
    /// [`gather`](crate::algo::transform::TransformOps::gather); indices
    /// are checked as [`permute`](Expr::permute)'s.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[10i32, 11, 12, 13, 14, 15])?;
    /// // every other element, backwards: no index buffer
    /// let odd = v.permute_by(counting(&dev, 5u32, u32::MAX - 1, 3));
    /// assert_eq!(odd.collect()?.to_vec()?, vec![15, 13, 11]);
    /// assert!(matches!(
    ///     v.permute_by(counting(&dev, 0u64, 3, 3)).sum(),
    ///     Err(Error::IndexOutOfBounds { .. })
    /// ));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn permute_by<J: IntoExpr>(self, idx: J) -> Permute<Self, J::Expr>
    where
        <J::Expr as node::Node>::Item: IndexElement,
    {
        Permute {
            src: self,
            idx: idx.into_expr(),
        }
    }

    /// Elements `range` of the expression; a range past the end is an error.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = counting(&dev, 0u64, 2, 10).slice(3..6)?;
    /// assert_eq!(v.to_vec()?, vec![6, 8, 10]);
    /// assert!(counting(&dev, 0u64, 2, 10).slice(8..11).is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn slice(&self, range: impl RangeBounds<usize>) -> Result<Self> {
        let (start, end) = crate::vec::bounds(range, self.length())?;
        Ok(self.sliced(start, end - start))
    }
}

impl<N: node::Node> Expr for N {}

/// The elements of a buffer as an expression.
fn leaf<T: Storable, D: DeviceData<T> + ?Sized>(d: &D) -> Leaf<'_, T> {
    match d.mem() {
        Mem::Host(s) => Leaf {
            device: d.device(),
            host: s,
            ptr: 0,
            len: s.len(),
        },
        Mem::Cuda { ptr, len, .. } => Leaf {
            device: d.device(),
            host: &[],
            ptr,
            len,
        },
    }
}

/// Calls `f` with the elements of `e` as a buffer: a buffer expression's
/// own memory (read in place, no copy), any other expression collected
/// once into a temporary vector (an index out of range fails here, with
/// [`Error::IndexOutOfBounds`]). For inputs the kernels read by address in
/// several places, such as segment offsets.
pub(crate) fn with_buffer<E: IntoExpr, R>(
    e: E,
    f: impl FnOnce(&crate::DeviceSlice<'_, <E::Expr as node::Node>::Item>) -> Result<R>,
) -> Result<R>
where
    <E::Expr as node::Node>::Item: Element,
{
    use node::Node as _;
    let e = e.into_expr();
    if <E::Expr as node::Node>::IS_BUF {
        if let Some(s) = e.host_slice() {
            return f(&crate::DeviceSlice::from_mem(e.device_ref(), Mem::Host(s)));
        }
        if let (Some(dev), Some(ptr)) = (node::cuda_of(&e), e.buffer_addr()) {
            let mem = Mem::Cuda {
                dev,
                ptr,
                len: e.length(),
                _p: std::marker::PhantomData,
            };
            return f(&crate::DeviceSlice::from_mem(e.device_ref(), mem));
        }
    }
    let collected = e.collect()?;
    f(&collected.slice(..)?)
}

impl<T: Element> Leaf<'static, T> {
    /// A leaf with no data, for plans that only need its type.
    pub(crate) fn type_only() -> Self {
        Self::raw(0, 0)
    }

    /// `len` elements at device address `ptr`, for a plan inside a family
    /// that holds the buffer (its device is not consulted).
    pub(crate) fn raw(ptr: u64, len: usize) -> Self {
        static DETACHED: std::sync::OnceLock<Device> = std::sync::OnceLock::new();
        Leaf {
            device: DETACHED.get_or_init(Device::host),
            host: &[],
            ptr,
            len,
        }
    }
}

/// Expressions from buffers: of elements, or of points `[F; D]` (`f32` or
/// `f64` coordinates, for [`KdTree::build_from`](crate::algo::knn::KdTree::build_from)
/// and [`query_from`](crate::algo::knn::KdTree::query_from)). In
/// [`prelude`](crate::prelude).
///
/// ```
/// # use cuprim::prelude::*;
/// let dev = Device::default()?;
/// let pts = DeviceVec::from_slice(&dev, &[[0.0f32, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]])?;
/// let idx = DeviceVec::from_slice(&dev, &[1u32, 1, 0])?;
/// assert_eq!(pts.permute(&idx).to_vec()?[0], [4.0, 5.0, 6.0, 7.0]);
/// # Ok::<(), cuprim::Error>(())
/// ```
pub trait LazyOps<T: Value + Storable>: DeviceData<T> {
    /// The buffer's elements as an expression (read in place).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1u32, 2, 3])?;
    /// assert_eq!(v.lazy().len(), 3);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn lazy(&self) -> Leaf<'_, T> {
        leaf(self)
    }

    /// `f(x)` of every element, computed where it is read: see [`Expr::map`].
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1.0f32, -2.0, 3.0])?;
    /// assert_eq!(v.map(Square).sum()?, 14.0);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn map<F: UnaryOp<T>>(&self, f: F) -> Map<Leaf<'_, T>, F> {
        Map { inner: leaf(self), f }
    }

    /// The gathered view `self[idx[i]]`: see [`Expr::permute`].
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[5u8, 6, 7])?;
    /// let idx = DeviceVec::from_slice(&dev, &[2u64, 2, 1])?;
    /// assert_eq!(v.permute(&idx).to_vec()?, vec![7, 7, 6]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn permute<'i, I: IndexElement>(&'i self, idx: &'i (impl DeviceData<I> + ?Sized)) -> Permute<Leaf<'i, T>, Leaf<'i, I>> {
        Permute {
            src: leaf(self),
            idx: leaf(idx),
        }
    }

    /// The gathered view `self[idx[i]]` with the indices an expression:
    /// see [`Expr::permute_by`].
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[1.0f32, 2.0, 3.0, 4.0, 5.0])?;
    /// let at_squares = v.permute_by(counting(&dev, 0u32, 1, 3).map(Square));   // v[0], v[1], v[4]
    /// assert_eq!(at_squares.to_vec()?, vec![1.0, 2.0, 5.0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn permute_by<J: IntoExpr>(&self, idx: J) -> Permute<Leaf<'_, T>, J::Expr>
    where
        <J::Expr as node::Node>::Item: IndexElement,
    {
        Permute {
            src: leaf(self),
            idx: idx.into_expr(),
        }
    }
}

impl<T: Value + Storable, D: DeviceData<T> + ?Sized> LazyOps<T> for D {}

/// What [`zip`] and [`zip3`] take: an expression, or a reference to a
/// buffer (read in place): of elements, or (for the kd-tree) of points.
pub trait IntoExpr {
    /// The expression.
    type Expr: Expr;
    /// Converts.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::expr::IntoExpr;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1i8, 2])?;
    /// assert_eq!((&v).into_expr().len(), 2);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn into_expr(self) -> Self::Expr;
}

impl<N: node::Node> IntoExpr for N {
    type Expr = N;
    fn into_expr(self) -> N {
        self
    }
}

impl<'a, T: Storable> IntoExpr for &'a crate::DeviceVec<T>
where
    Leaf<'a, T>: node::Node,
{
    type Expr = Leaf<'a, T>;
    fn into_expr(self) -> Leaf<'a, T> {
        leaf(self)
    }
}

impl<'a, T: Storable> IntoExpr for &'a crate::DeviceSlice<'_, T>
where
    Leaf<'a, T>: node::Node,
{
    type Expr = Leaf<'a, T>;
    fn into_expr(self) -> Leaf<'a, T> {
        leaf(self)
    }
}

impl<'a, T: Storable> IntoExpr for &'a crate::DeviceSliceMut<'_, T>
where
    Leaf<'a, T>: node::Node,
{
    type Expr = Leaf<'a, T>;
    fn into_expr(self) -> Leaf<'a, T> {
        leaf(self)
    }
}

/// `start + step * i` for `i` in `0..n`, in `T`'s arithmetic: wrapping for
/// integers; for floats the index is converted to `T` first
/// ([`Element::cast`]) and `start + step * i` rounded as written.
///
/// ```
/// # use cuprim::prelude::*;
/// let dev = Device::default()?;
/// assert_eq!(counting(&dev, 1.0f32, 0.5, 4).to_vec()?, vec![1.0, 1.5, 2.0, 2.5]);
/// assert_eq!(counting(&dev, 250u8, 3, 3).to_vec()?, vec![250, 253, 0]);
/// assert_eq!(counting(&dev, 0u64, 1, 1 << 20).sum()?, (1u64 << 20) * ((1 << 20) - 1) / 2);
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn counting<T: Arith>(device: &Device, start: T, step: T, n: usize) -> Counting<'_, T> {
    Counting {
        device,
        start,
        step,
        first: 0,
        len: n,
    }
}

/// `value`, `n` times (any [`Value`], tuples and points included).
///
/// ```
/// # use cuprim::prelude::*;
/// let dev = Device::default()?;
/// assert_eq!(constant(&dev, 2u32, 5).sum()?, 10);
/// assert_eq!(constant(&dev, (1u8, 2.0f32), 2).to_vec()?, vec![(1, 2.0), (1, 2.0)]);
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn constant<V: crate::Value>(device: &Device, value: V, n: usize) -> Constant<'_, V> {
    Constant { device, value, len: n }
}

/// `(a[i], b[i])`: two inputs of one length read together, as tuples.
///
/// ```
/// # use cuprim::prelude::*;
/// let dev = Device::default()?;
/// let k = DeviceVec::from_slice(&dev, &[1u32, 2])?;
/// assert_eq!(zip(&k, counting(&dev, 0.5f64, 1.0, 2)).to_vec()?, vec![(1, 0.5), (2, 1.5)]);
/// let short = DeviceVec::from_slice(&dev, &[1u32])?;
/// assert!(matches!(zip(&k, &short).to_vec(), Err(Error::LengthMismatch { .. })));
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn zip<A: IntoExpr, B: IntoExpr>(a: A, b: B) -> Zip<A::Expr, B::Expr>
where
    <A::Expr as node::Node>::Item: Element,
    <B::Expr as node::Node>::Item: Element,
{
    Zip {
        a: a.into_expr(),
        b: b.into_expr(),
    }
}

/// `(a[i], b[i], c[i])`: three inputs of one length read together.
///
/// ```
/// # use cuprim::prelude::*;
/// let dev = Device::default()?;
/// let x = DeviceVec::from_slice(&dev, &[1.0f32, 2.0])?;
/// let t = zip3(&x, &x, counting(&dev, 7u8, 1, 2));
/// assert_eq!(t.to_vec()?, vec![(1.0, 1.0, 7), (2.0, 2.0, 8)]);
/// # Ok::<(), cuprim::Error>(())
/// ```
pub fn zip3<A: IntoExpr, B: IntoExpr, C: IntoExpr>(a: A, b: B, c: C) -> Zip3<A::Expr, B::Expr, C::Expr>
where
    <A::Expr as node::Node>::Item: Element,
    <B::Expr as node::Node>::Item: Element,
    <C::Expr as node::Node>::Item: Element,
{
    Zip3 {
        a: a.into_expr(),
        b: b.into_expr(),
        c: c.into_expr(),
    }
}

/// Host backend: the expression's elements, in order; a buffer's in place.
pub(crate) fn host_items<E: Expr>(e: &E) -> Result<std::borrow::Cow<'_, [E::Item]>> {
    match e.host_slice() {
        Some(s) => Ok(std::borrow::Cow::Borrowed(s)),
        None => Ok(std::borrow::Cow::Owned(host_values(e)?)),
    }
}

/// Host backend: the expression's elements, in order, evaluated.
pub(crate) fn host_values<E: Expr>(e: &E) -> Result<Vec<E::Item>> {
    use rayon::prelude::*;
    e.validate()?;
    e.host_validate()?;
    let mut out = Vec::new();
    out.try_reserve_exact(e.length()).map_err(|_| Error::OutOfMemory {
        bytes: e.length().saturating_mul(std::mem::size_of::<E::Item>()),
    })?;
    (0..e.length()).into_par_iter().map(|i| e.at(i)).collect_into_vec(&mut out);
    Ok(out)
}
