//! Set operations on sorted inputs: [`set_union`](SetOps::set_union),
//! [`set_intersection`](SetOps::set_intersection),
//! [`set_difference`](SetOps::set_difference) and
//! [`set_symmetric_difference`](SetOps::set_symmetric_difference), and
//! their `_by` forms for any [`Comparator`]; and the key-value forms of
//! Thrust's `set_*_by_key`:
//! [`set_union_by_key`](SetOps::set_union_by_key),
//! [`set_intersection_by_key`](SetOps::set_intersection_by_key),
//! [`set_difference_by_key`](SetOps::set_difference_by_key),
//! [`set_symmetric_difference_by_key`](SetOps::set_symmetric_difference_by_key)
//! and their `_by_key_by` forms.
//!
//! # Semantics
//! Those of C++'s `std::set_*` and Thrust on sorted ranges with duplicates
//! (multisets). For a key (a class of equivalent elements under the
//! comparator) with `ca` copies in `self` and `cb` in the other input:
//! the intersection keeps the first `min(ca, cb)` of `self`'s run; the
//! difference keeps the last `max(0, ca - cb)` of `self`'s run; the union
//! has all of `self`'s run, then the last `max(0, cb - ca)` of the other's;
//! the symmetric difference keeps the last `ca - cb` of `self`'s run where
//! `ca > cb`, else the last `cb - ca` of the other's. The output is sorted,
//! `self`'s elements first among equivalent ones. Inputs that are not
//! sorted give an unspecified result, never an error or a fault.
//!
//! The by-key forms choose the same keys by the same rules, each kept key
//! bringing its own value (a value of any [`Element`] type): the
//! intersection and the difference keep only `self`'s elements, so they
//! take `self`'s values and the other input's keys alone (as Thrust's);
//! the union and the symmetric difference take each value from the side
//! its key comes from. Each side's values must be as many as its keys,
//! else [`Error::LengthMismatch`].
//!
//! # Algorithm
//! The host backend walks both inputs once, sequentially (std's two
//! pointers), emitting stretches of either side. On CUDA, one pass over
//! tiles (`kernels/merge/set.cu`), as Thrust's: a first kernel cuts both
//! inputs at every tile boundary at a state of that walk (the balanced
//! path: the merge-path cut of the boundary's diagonal, then the copies of
//! the key that straddles it split so that the r-th copy in one input
//! still meets the r-th in the other); a second one takes the tiles in
//! order, stages each tile's two ranges in shared memory, lets every
//! thread find its own such cut there and walk at most `items + 1` steps
//! to the next thread's, places the tile's output by a block scan and the
//! decoupled look-back over tiles, and writes keys (and, by key, each kept
//! key's value, staged the same way) coalesced. Both inputs are read once
//! and the output written once; the output is allocated at the most the
//! operation can keep (both inputs for the union and the symmetric
//! difference, the shorter for the intersection, `self` for the
//! difference) and shortened to the count, read back once. The
//! expression forms ([`ExprOps::set_union_with`](crate::expr::ExprOps::set_union_with)
//! and the others) run the same kernels on any two input expressions; the
//! by-key ones ([`ExprOps::set_union_by_key_with`](crate::expr::ExprOps::set_union_by_key_with)
//! and the others) on key and value expressions, values in buffers read as
//! the buffer forms read them, any other values through their expressions.

use super::plan::{MERGE_PATH, MERGE_TILE, PARTITION_BLOCK};
use crate::algo::lookback::{Lookback, LOOKBACK};
use crate::algo::scan::plan::TilePolicy;
use crate::algo::{cuda_ptr_mut, same_device, same_len};
use crate::cmp::{Comparator, Less};
use crate::device::{Counter, CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::expr::args::ExprArgs;
use crate::expr::consume::{launch_checked2, launch_checked4, write_inputs, write_keyed_inputs};
use crate::expr::node::{Leaf, Node};
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::vec::raw::Mem;
use crate::vec::{DeviceData, DeviceVec};
use crate::Device;
use std::marker::PhantomData;
use std::mem::size_of;
use std::ops::Range;

template!(SET, "merge/set.cu", ["cuprim_set_partition", "cuprim_set"], headers: [MERGE_PATH, MERGE_TILE, LOOKBACK]);

/// Set operations on sorted inputs (multisets). In [`prelude`](crate::prelude).
pub trait SetOps<K: Element>: DeviceData<K> {
    /// The sorted union of `self` and `other`, both sorted ascending
    /// ([`Less`]): for each key, all of `self`'s copies, then as many of
    /// `other`'s last copies as it has more.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[1u32, 2, 2, 5])?;
    /// let b = DeviceVec::from_slice(&dev, &[2u32, 2, 2, 3])?;
    /// assert_eq!(a.set_union(&b)?.to_vec()?, vec![1, 2, 2, 2, 3, 5]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_union(&self, other: &impl DeviceData<K>) -> Result<DeviceVec<K>> {
        self.set_union_by(other, Less)
    }

    /// [`set_union`](SetOps::set_union) of inputs sorted by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[9i64, 4])?;
    /// let b = DeviceVec::from_slice(&dev, &[5i64, 4, 4])?;
    /// assert_eq!(a.set_union_by(&b, Greater)?.to_vec()?, vec![9, 5, 4, 4]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_union_by<C: Comparator<K>>(&self, other: &impl DeviceData<K>, cmp: C) -> Result<DeviceVec<K>> {
        set_op(self, other, &cmp, SetOp::Union)
    }

    /// The sorted intersection of `self` and `other`, both sorted
    /// ascending: for each key, the first `min(ca, cb)` of `self`'s copies.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[1u32, 2, 2, 2, 5])?;
    /// let b = DeviceVec::from_slice(&dev, &[2u32, 2, 3, 5])?;
    /// assert_eq!(a.set_intersection(&b)?.to_vec()?, vec![2, 2, 5]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_intersection(&self, other: &impl DeviceData<K>) -> Result<DeviceVec<K>> {
        self.set_intersection_by(other, Less)
    }

    /// [`set_intersection`](SetOps::set_intersection) of inputs sorted by
    /// `cmp`; the elements kept are `self`'s.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// cuprim::comparator! {
    ///     /// By the last decimal digit only.
    ///     pub struct LastDigit for u32 {
    ///         rust: |a, b| a % 10 < b % 10,
    ///         cuda: "a % 10 < b % 10",
    ///     }
    /// }
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[10u32, 21, 31, 7])?;
    /// let b = DeviceVec::from_slice(&dev, &[1u32, 5, 27])?;
    /// assert_eq!(a.set_intersection_by(&b, LastDigit)?.to_vec()?, vec![21, 7]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_intersection_by<C: Comparator<K>>(&self, other: &impl DeviceData<K>, cmp: C) -> Result<DeviceVec<K>> {
        set_op(self, other, &cmp, SetOp::Intersection)
    }

    /// The sorted difference `self - other`, both sorted ascending: for
    /// each key, the last `max(0, ca - cb)` of `self`'s copies.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[-0.0f32, 0.0, 1.0, 1.0, f32::NAN])?;
    /// let b = DeviceVec::from_slice(&dev, &[0.0f32, 1.0])?;
    /// // total_cmp order: -0.0 and 0.0 are different keys, NaN is a key.
    /// let d = a.set_difference(&b)?.to_vec()?;
    /// assert_eq!(d[..2], [-0.0, 1.0]);
    /// assert!(d[0].is_sign_negative() && d[2].is_nan() && d.len() == 3);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_difference(&self, other: &impl DeviceData<K>) -> Result<DeviceVec<K>> {
        self.set_difference_by(other, Less)
    }

    /// [`set_difference`](SetOps::set_difference) of inputs sorted by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[3u8, 3, 2, 1])?;
    /// let b = DeviceVec::from_slice(&dev, &[3u8, 1])?;
    /// assert_eq!(a.set_difference_by(&b, Greater)?.to_vec()?, vec![3, 2]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_difference_by<C: Comparator<K>>(&self, other: &impl DeviceData<K>, cmp: C) -> Result<DeviceVec<K>> {
        set_op(self, other, &cmp, SetOp::Difference)
    }

    /// The sorted symmetric difference of `self` and `other`, both sorted
    /// ascending: for each key, the last `|ca - cb|` copies of the side
    /// that has more.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[1u32, 2, 2, 2, 5])?;
    /// let b = DeviceVec::from_slice(&dev, &[2u32, 3, 5, 5])?;
    /// assert_eq!(a.set_symmetric_difference(&b)?.to_vec()?, vec![1, 2, 2, 3, 5]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_symmetric_difference(&self, other: &impl DeviceData<K>) -> Result<DeviceVec<K>> {
        self.set_symmetric_difference_by(other, Less)
    }

    /// [`set_symmetric_difference`](SetOps::set_symmetric_difference) of
    /// inputs sorted by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[2.5f64, 1.0])?;
    /// let b = DeviceVec::from_slice(&dev, &[2.0f64, 1.0, 1.0])?;
    /// assert_eq!(a.set_symmetric_difference_by(&b, Greater)?.to_vec()?, vec![2.5, 2.0, 1.0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_symmetric_difference_by<C: Comparator<K>>(&self, other: &impl DeviceData<K>, cmp: C) -> Result<DeviceVec<K>> {
        set_op(self, other, &cmp, SetOp::SymmetricDifference)
    }

    /// [`set_union`](SetOps::set_union) of keys with values: keys `self`
    /// with `values` and `other_keys` with `other_values`, both sorted
    /// ascending; each kept key brings its value (Thrust's
    /// `set_union_by_key`): for each key, all of `self`'s pairs, then the
    /// other's last pairs where it has more copies. Returns the keys and
    /// values. Each side's values must be as many as its keys, else
    /// [`Error::LengthMismatch`].
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let ka = DeviceVec::from_slice(&dev, &[1u32, 2, 2, 5])?;
    /// let va = DeviceVec::from_slice(&dev, &[10u32, 20, 21, 50])?;
    /// let kb = DeviceVec::from_slice(&dev, &[2u32, 2, 2, 3])?;
    /// let vb = DeviceVec::from_slice(&dev, &[100u32, 101, 102, 103])?;
    /// let (k, v) = ka.set_union_by_key(&va, &kb, &vb)?;
    /// assert_eq!(k.to_vec()?, vec![1, 2, 2, 2, 3, 5]);
    /// assert_eq!(v.to_vec()?, vec![10, 20, 21, 102, 103, 50]);
    /// assert!(matches!(ka.set_union_by_key(&va, &kb, &va.slice(1..)?), Err(cuprim::Error::LengthMismatch { .. })));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_union_by_key<V: Element>(
        &self,
        values: &impl DeviceData<V>,
        other_keys: &impl DeviceData<K>,
        other_values: &impl DeviceData<V>,
    ) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        self.set_union_by_key_by(values, other_keys, other_values, Less)
    }

    /// [`set_union_by_key`](SetOps::set_union_by_key) of keys sorted by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let ka = DeviceVec::from_slice(&dev, &[9i64, 4])?;
    /// let va = DeviceVec::from_slice(&dev, &[0u32, 1])?;
    /// let kb = DeviceVec::from_slice(&dev, &[5i64, 4, 4])?;
    /// let vb = DeviceVec::from_slice(&dev, &[2u32, 3, 4])?;
    /// let (k, v) = ka.set_union_by_key_by(&va, &kb, &vb, Greater)?;
    /// assert_eq!(k.to_vec()?, vec![9, 5, 4, 4]);
    /// assert_eq!(v.to_vec()?, vec![0, 2, 1, 4]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_union_by_key_by<V: Element, C: Comparator<K>>(
        &self,
        values: &impl DeviceData<V>,
        other_keys: &impl DeviceData<K>,
        other_values: &impl DeviceData<V>,
        cmp: C,
    ) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        set_op_by_key(self, values, other_keys, Some(other_values), &cmp, SetOp::Union)
    }

    /// [`set_intersection`](SetOps::set_intersection) of keys with values:
    /// the kept keys are `self`'s, so only `self`'s `values` are given and
    /// kept with them (Thrust's `set_intersection_by_key`); `other_keys`
    /// are keys alone. `values` must be as many as `self`'s keys, else
    /// [`Error::LengthMismatch`].
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let ka = DeviceVec::from_slice(&dev, &[1u32, 2, 2, 2, 5])?;
    /// let va = DeviceVec::from_slice(&dev, &[b'a', b'b', b'c', b'd', b'e'])?;
    /// let kb = DeviceVec::from_slice(&dev, &[2u32, 2, 3, 5])?;
    /// let (k, v) = ka.set_intersection_by_key(&va, &kb)?;
    /// assert_eq!(k.to_vec()?, vec![2, 2, 5]);
    /// assert_eq!(v.to_vec()?, b"bce".to_vec());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_intersection_by_key<V: Element>(
        &self,
        values: &impl DeviceData<V>,
        other_keys: &impl DeviceData<K>,
    ) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        self.set_intersection_by_key_by(values, other_keys, Less)
    }

    /// [`set_intersection_by_key`](SetOps::set_intersection_by_key) of
    /// keys sorted by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// cuprim::comparator! {
    ///     /// By the last decimal digit only.
    ///     pub struct LastDigit for u32 {
    ///         rust: |a, b| a % 10 < b % 10,
    ///         cuda: "a % 10 < b % 10",
    ///     }
    /// }
    /// let dev = Device::default()?;
    /// let ka = DeviceVec::from_slice(&dev, &[10u32, 21, 31, 7])?;
    /// let va = DeviceVec::from_slice(&dev, &[0.5f64, 1.5, 2.5, 3.5])?;
    /// let kb = DeviceVec::from_slice(&dev, &[1u32, 5, 27])?;
    /// let (k, v) = ka.set_intersection_by_key_by(&va, &kb, LastDigit)?;
    /// assert_eq!(k.to_vec()?, vec![21, 7]);
    /// assert_eq!(v.to_vec()?, vec![1.5, 3.5]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_intersection_by_key_by<V: Element, C: Comparator<K>>(
        &self,
        values: &impl DeviceData<V>,
        other_keys: &impl DeviceData<K>,
        cmp: C,
    ) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        set_op_by_key(self, values, other_keys, None::<&DeviceVec<V>>, &cmp, SetOp::Intersection)
    }

    /// [`set_difference`](SetOps::set_difference) of keys with values: the
    /// kept keys are `self`'s, so only `self`'s `values` are given and kept
    /// with them (Thrust's `set_difference_by_key`); `other_keys` are keys
    /// alone. `values` must be as many as `self`'s keys, else
    /// [`Error::LengthMismatch`].
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let ka = DeviceVec::from_slice(&dev, &[1u32, 2, 2, 2, 5])?;
    /// let va = DeviceVec::from_slice(&dev, &[10i64, 20, 21, 22, 50])?;
    /// let kb = DeviceVec::from_slice(&dev, &[2u32, 2, 3, 5])?;
    /// let (k, v) = ka.set_difference_by_key(&va, &kb)?;
    /// assert_eq!(k.to_vec()?, vec![1, 2]);
    /// assert_eq!(v.to_vec()?, vec![10, 22]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_difference_by_key<V: Element>(
        &self,
        values: &impl DeviceData<V>,
        other_keys: &impl DeviceData<K>,
    ) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        self.set_difference_by_key_by(values, other_keys, Less)
    }

    /// [`set_difference_by_key`](SetOps::set_difference_by_key) of keys
    /// sorted by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let ka = DeviceVec::from_slice(&dev, &[3u8, 3, 2, 1])?;
    /// let va = DeviceVec::from_slice(&dev, &[30u32, 31, 20, 10])?;
    /// let kb = DeviceVec::from_slice(&dev, &[3u8, 1])?;
    /// let (k, v) = ka.set_difference_by_key_by(&va, &kb, Greater)?;
    /// assert_eq!(k.to_vec()?, vec![3, 2]);
    /// assert_eq!(v.to_vec()?, vec![31, 20]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_difference_by_key_by<V: Element, C: Comparator<K>>(
        &self,
        values: &impl DeviceData<V>,
        other_keys: &impl DeviceData<K>,
        cmp: C,
    ) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        set_op_by_key(self, values, other_keys, None::<&DeviceVec<V>>, &cmp, SetOp::Difference)
    }

    /// [`set_symmetric_difference`](SetOps::set_symmetric_difference) of
    /// keys with values: keys `self` with `values` and `other_keys` with
    /// `other_values`, both sorted ascending; each kept key brings its
    /// value from its side (Thrust's `set_symmetric_difference_by_key`).
    /// Each side's values must be as many as its keys, else
    /// [`Error::LengthMismatch`].
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let ka = DeviceVec::from_slice(&dev, &[1u32, 2, 2, 2, 5])?;
    /// let va = DeviceVec::from_slice(&dev, &[10u32, 20, 21, 22, 50])?;
    /// let kb = DeviceVec::from_slice(&dev, &[2u32, 3, 5, 5])?;
    /// let vb = DeviceVec::from_slice(&dev, &[200u32, 300, 500, 501])?;
    /// let (k, v) = ka.set_symmetric_difference_by_key(&va, &kb, &vb)?;
    /// assert_eq!(k.to_vec()?, vec![1, 2, 2, 3, 5]);
    /// assert_eq!(v.to_vec()?, vec![10, 21, 22, 300, 501]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_symmetric_difference_by_key<V: Element>(
        &self,
        values: &impl DeviceData<V>,
        other_keys: &impl DeviceData<K>,
        other_values: &impl DeviceData<V>,
    ) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        self.set_symmetric_difference_by_key_by(values, other_keys, other_values, Less)
    }

    /// [`set_symmetric_difference_by_key`](SetOps::set_symmetric_difference_by_key)
    /// of keys sorted by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let ka = DeviceVec::from_slice(&dev, &[2.5f64, 1.0])?;
    /// let va = DeviceVec::from_slice(&dev, &[0u8, 1])?;
    /// let kb = DeviceVec::from_slice(&dev, &[2.0f64, 1.0, 1.0])?;
    /// let vb = DeviceVec::from_slice(&dev, &[2u8, 3, 4])?;
    /// let (k, v) = ka.set_symmetric_difference_by_key_by(&va, &kb, &vb, Greater)?;
    /// assert_eq!(k.to_vec()?, vec![2.5, 2.0, 1.0]);
    /// assert_eq!(v.to_vec()?, vec![0, 2, 4]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_symmetric_difference_by_key_by<V: Element, C: Comparator<K>>(
        &self,
        values: &impl DeviceData<V>,
        other_keys: &impl DeviceData<K>,
        other_values: &impl DeviceData<V>,
        cmp: C,
    ) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        set_op_by_key(self, values, other_keys, Some(other_values), &cmp, SetOp::SymmetricDifference)
    }
}

impl<K: Element, D: DeviceData<K> + ?Sized> SetOps<K> for D {}

/// Which set operation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum SetOp {
    Union = 0,
    Intersection = 1,
    Difference = 2,
    SymmetricDifference = 3,
}

impl SetOp {
    /// Every operation (`CUPRIM_SET_OP` 0 to 3).
    pub(crate) const ALL: [SetOp; 4] = [SetOp::Union, SetOp::Intersection, SetOp::Difference, SetOp::SymmetricDifference];

    /// The most elements the operation keeps of `na` and `nb` (sorted or
    /// not): the union and the symmetric difference both inputs, the
    /// intersection the shorter, the difference `self`'s; `None` past
    /// `usize`.
    pub(crate) fn capacity(self, na: usize, nb: usize) -> Option<usize> {
        match self {
            SetOp::Union | SetOp::SymmetricDifference => na.checked_add(nb),
            SetOp::Intersection => Some(na.min(nb)),
            SetOp::Difference => Some(na),
        }
    }

    /// Whether the operation keeps elements of the other input (the union
    /// and the symmetric difference): its by-key forms then take the other
    /// input's values too.
    pub(crate) fn keeps_b(self) -> bool {
        matches!(self, SetOp::Union | SetOp::SymmetricDifference)
    }

    /// The name of the by-key expression form (`set_union_by_key_with`, ...).
    pub(crate) fn name_by_key_with(self) -> &'static str {
        match self {
            SetOp::Union => "set_union_by_key_with",
            SetOp::Intersection => "set_intersection_by_key_with",
            SetOp::Difference => "set_difference_by_key_with",
            SetOp::SymmetricDifference => "set_symmetric_difference_by_key_with",
        }
    }

    /// The name of the expression form (`set_union_with`, ...).
    pub(crate) fn name_with(self) -> &'static str {
        match self {
            SetOp::Union => "set_union_with",
            SetOp::Intersection => "set_intersection_with",
            SetOp::Difference => "set_difference_with",
            SetOp::SymmetricDifference => "set_symmetric_difference_with",
        }
    }

    pub(crate) fn name(self, by_key: bool) -> &'static str {
        match (self, by_key) {
            (SetOp::Union, false) => "set_union",
            (SetOp::Intersection, false) => "set_intersection",
            (SetOp::Difference, false) => "set_difference",
            (SetOp::SymmetricDifference, false) => "set_symmetric_difference",
            (SetOp::Union, true) => "set_union_by_key",
            (SetOp::Intersection, true) => "set_intersection_by_key",
            (SetOp::Difference, true) => "set_difference_by_key",
            (SetOp::SymmetricDifference, true) => "set_symmetric_difference_by_key",
        }
    }
}

/// The sequential set operation on sorted `a` and `b` (std's two-pointer
/// walk): calls `emit(from_b, range)` for each stretch of the output in
/// order, a range of `b` (`from_b`) or of `a`. Adjacent elements of one
/// side come as one range.
fn host_set_walk<T: Copy>(a: &[T], b: &[T], op: SetOp, less: impl Fn(T, T) -> bool, mut emit: impl FnMut(bool, Range<usize>)) {
    let keep_a = op != SetOp::Intersection;
    let keep_b = matches!(op, SetOp::Union | SetOp::SymmetricDifference);
    let keep_both = matches!(op, SetOp::Union | SetOp::Intersection);
    // The stretch not yet emitted: its side and range.
    let mut run: Option<(bool, Range<usize>)> = None;
    let mut push = |from_b: bool, i: usize| match &mut run {
        Some((side, r)) if *side == from_b && r.end == i => r.end += 1,
        _ => {
            if let Some((side, r)) = run.replace((from_b, i..i + 1)) {
                emit(side, r);
            }
        }
    };
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if less(a[i], b[j]) {
            if keep_a {
                push(false, i);
            }
            i += 1;
        } else if less(b[j], a[i]) {
            if keep_b {
                push(true, j);
            }
            j += 1;
        } else {
            if keep_both {
                push(false, i);
            }
            i += 1;
            j += 1;
        }
    }
    if let Some((side, r)) = run {
        emit(side, r);
    }
    if keep_a && i < a.len() {
        emit(false, i..a.len());
    }
    if keep_b && j < b.len() {
        emit(true, j..b.len());
    }
}

/// The sequential set operation on sorted keys `a` and `b`.
pub(crate) fn host_set<T: Copy>(a: &[T], b: &[T], op: SetOp, less: impl Fn(T, T) -> bool) -> Vec<T> {
    let mut out = Vec::new();
    host_set_walk(a, b, op, less, |from_b, r| out.extend_from_slice(&if from_b { b } else { a }[r]));
    out
}

/// The sequential set operation on sorted keys `a.0` and `b.0` with their
/// values: each kept key's value from its side. `b.1` is read only by the
/// union and the symmetric difference (empty for the others).
pub(crate) fn host_set_by_key<K: Copy, V: Copy>(
    a: (&[K], &[V]),
    b: (&[K], &[V]),
    op: SetOp,
    less: impl Fn(K, K) -> bool,
) -> (Vec<K>, Vec<V>) {
    let (mut keys, mut values) = (Vec::new(), Vec::new());
    host_set_walk(a.0, b.0, op, less, |from_b, r| {
        let (k, v) = if from_b { b } else { a };
        keys.extend_from_slice(&k[r.clone()]);
        values.extend_from_slice(&v[r]);
    });
    (keys, values)
}

/// Keys and, for the by-key forms, values: a result's.
type Pairs<K, V> = (DeviceVec<K>, Option<DeviceVec<V>>);

/// The keys-alone set operations.
fn set_op<K: Element, C: Comparator<K>>(
    a: &(impl DeviceData<K> + ?Sized),
    b: &(impl DeviceData<K> + ?Sized),
    cmp: &C,
    op: SetOp,
) -> Result<DeviceVec<K>> {
    let name = op.name(false);
    same_device(name, a.device(), b.device())?;
    let none = None::<&DeviceVec<K>>;
    Ok(run_set(a, none, b, none, cmp, op, name)?.0)
}

/// The by-key set operations: `other_values` for the union and the
/// symmetric difference, `None` for the others (Thrust's signatures).
fn set_op_by_key<K: Element, V: Element, C: Comparator<K>>(
    keys: &(impl DeviceData<K> + ?Sized),
    values: &(impl DeviceData<V> + ?Sized),
    other_keys: &(impl DeviceData<K> + ?Sized),
    other_values: Option<&(impl DeviceData<V> + ?Sized)>,
    cmp: &C,
    op: SetOp,
) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
    let name = op.name(true);
    let device = keys.device();
    same_device(name, device, values.device())?;
    same_device(name, device, other_keys.device())?;
    same_len(name, keys.len(), values.len())?;
    if let Some(ov) = other_values {
        same_device(name, device, ov.device())?;
        same_len(name, other_keys.len(), ov.len())?;
    }
    match run_set(keys, Some(values), other_keys, other_values, cmp, op, name)? {
        (k, Some(v)) => Ok((k, v)),
        // Not reached: self's values are given, so every path returns values.
        (_, None) => Err(Error::InvalidArgument(format!("{name}: no values came back"))),
    }
}

/// The set operation `op` on keys `a` and `b` (on one device, checked by
/// the caller) and, where given, their values (`va` always for the by-key
/// forms; `vb` for the union and the symmetric difference by key).
fn run_set<K: Element, V: Element, C: Comparator<K>>(
    a: &(impl DeviceData<K> + ?Sized),
    va: Option<&(impl DeviceData<V> + ?Sized)>,
    b: &(impl DeviceData<K> + ?Sized),
    vb: Option<&(impl DeviceData<V> + ?Sized)>,
    cmp: &C,
    op: SetOp,
    name: &'static str,
) -> Result<Pairs<K, V>> {
    let device = a.device();
    match (a.mem(), b.mem()) {
        (Mem::Host(x), Mem::Host(y)) => {
            let less = |p, q| cmp.less(p, q);
            let Some(va) = va else {
                return Ok((DeviceVec::from_slice(device, &host_set(x, y, op, less))?, None));
            };
            let (xv, yv) = (host_values(Some(va), name)?, host_values(vb, name)?);
            let (k, v) = host_set_by_key((x, xv), (y, yv), op, less);
            Ok((DeviceVec::from_slice(device, &k)?, Some(DeviceVec::from_slice(device, &v)?)))
        }
        (Mem::Cuda { dev, ptr: pa, len: na, .. }, Mem::Cuda { ptr: pb, len: nb, .. }) => {
            let values = match va {
                Some(va) => Some((cuda_values(Some(va), name)?, cuda_values(vb, name)?)),
                None => None,
            };
            let values = values.map(|(x, y)| SetValues::buffers(x.unwrap_or(Ptr::null()), y.unwrap_or(Ptr::null())));
            cuda_set(dev, device, &Leaf::<K>::raw(pa, na), &Leaf::<K>::raw(pb, nb), values, cmp, op, name)
        }
        _ => Err(Error::DeviceMismatch { op: name }),
    }
}

/// The host slice of values `v` (empty where not given).
fn host_values<'a, V: Element>(v: Option<&'a (impl DeviceData<V> + ?Sized)>, name: &'static str) -> Result<&'a [V]> {
    match v.map(|v| v.mem()) {
        None => Ok(&[]),
        Some(Mem::Host(s)) => Ok(s),
        Some(Mem::Cuda { .. }) => Err(Error::DeviceMismatch { op: name }),
    }
}

/// The device address of values `v`, where given.
fn cuda_values<V: Element>(v: Option<&(impl DeviceData<V> + ?Sized)>, name: &'static str) -> Result<Option<Ptr<V>>> {
    match v.map(|v| v.mem()) {
        None => Ok(None),
        Some(Mem::Cuda { ptr, .. }) => Ok(Some(Ptr::from_raw(ptr))),
        Some(Mem::Host(_)) => Err(Error::DeviceMismatch { op: name }),
    }
}

/// Where the values of a by-key set operation come from: `a`'s and `b`'s,
/// `b`'s read only by the union and the symmetric difference.
pub(crate) enum SetValues<'a, V, VA, VB> {
    /// Device buffers (`b`'s null where not read): the buffer forms' module.
    Buffers(Ptr<V>, Ptr<V>),
    /// Input expressions of items `V`, read by the kernel where the
    /// buffers' module reads the buffers (`CUPRIM_VALUES_X`); `b`'s a
    /// [`Leaf::type_only`] where not read.
    Exprs(&'a VA, &'a VB),
}

/// The expression type that stands for values given as buffers.
pub(crate) type NoExpr<V> = Leaf<'static, V>;

impl<V> SetValues<'static, V, NoExpr<V>, NoExpr<V>> {
    /// Values in device buffers.
    pub(crate) fn buffers(a: Ptr<V>, b: Ptr<V>) -> Self {
        SetValues::Buffers(a, b)
    }
}

/// The set operation `op` of the sorted inputs `a` and `b` (expressions on
/// `dev`; plain buffers are leaves) into new vectors on `device`: keys,
/// and, with `values`, the kept keys' values. The vectors are allocated at
/// the most the operation can keep ([`SetOp::capacity`]) and shortened to
/// the count, read back once.
#[allow(clippy::too_many_arguments)]
pub(crate) fn cuda_set<
    K: Element,
    V: Element,
    A: Node<Item = K>,
    B: Node<Item = K>,
    VA: Node<Item = V>,
    VB: Node<Item = V>,
    C: Comparator<K>,
>(
    dev: &CudaDevice,
    device: &Device,
    a: &A,
    b: &B,
    values: Option<SetValues<'_, V, VA, VB>>,
    cmp: &C,
    op: SetOp,
    name: &'static str,
) -> Result<Pairs<K, V>> {
    let capacity = op
        .capacity(a.length(), b.length())
        .ok_or_else(|| Error::InvalidArgument(format!("{name}: the output does not fit in memory")))?;
    let mut keys = DeviceVec::<K>::alloc_uninit(device, capacity)?;
    let mut out_values = match values {
        Some(_) => Some(DeviceVec::<V>::alloc_uninit(device, capacity)?),
        None => None,
    };
    if capacity == 0 {
        // Nothing is read, but a permutation's indices are checked, as on the host.
        use crate::expr::consume::check_indices;
        check_indices(a)?;
        check_indices(b)?;
        if let Some(SetValues::Exprs(xa, xb)) = &values {
            check_indices(*xa)?;
            check_indices(*xb)?;
        }
        return Ok((keys, out_values));
    }
    let kptr = cuda_ptr_mut(&mut keys, name)?;
    let vptr = match out_values.as_mut() {
        Some(v) => cuda_ptr_mut(v, name)?,
        None => Ptr::null(),
    };
    let plan = SetPlan::<A, B, V, C, VA, VB>::new(dev.arch(), a, b, cmp, op, values.is_some());
    let (plan, va, vb) = match values {
        None => (plan, Ptr::null(), Ptr::null()),
        Some(SetValues::Buffers(va, vb)) => (plan, va, vb),
        Some(SetValues::Exprs(xa, xb)) => (plan.with_value_exprs(xa, xb), Ptr::null(), Ptr::null()),
    };
    let count = plan.run(dev, (va, vb), (kptr, vptr), capacity as u64)?;
    // At most capacity (the kernel writes no further), so it fits usize.
    let count = count as usize;
    keys.truncate(count)?;
    if let Some(v) = out_values.as_mut() {
        v.truncate(count)?;
    }
    Ok((keys, out_values))
}

/// Set tiles by the wider of key and value (a shared-memory slot holds
/// either; `value_bytes` 0 for keys alone). A thread keeps up to
/// `items + 1` walked keys (and their positions, with values) in
/// registers, so the tiles are the merge's register-loaded shapes at 64
/// registers: 256 x 11 for slots of up to 4 bytes, 256 x 7 for 8 (NVRTC
/// sm_80 / sm_90, no spills; not yet timed).
pub(crate) fn set_policy(slot_bytes: usize) -> TilePolicy {
    match slot_bytes {
        0..=4 => TilePolicy {
            block: 256,
            items: 11,
            min_blocks: 4,
        },
        _ => TilePolicy {
            block: 256,
            items: 7,
            min_blocks: 4,
        },
    }
}

/// Inputs of this many elements or more count their outputs in `u64`
/// (`C` in `kernels/merge/set.cu`; the look-back then packs 16 bytes per
/// tile), fewer in `u32`: a tile emits at most `block * (items + 1)`,
/// which for unsorted inputs below 2^31 stays below 2^32 in all.
pub const SET_WIDE_FROM: u64 = 1 << 31;

/// One specialisation of `kernels/merge/set.cu`: input expressions `A` and
/// `B` of keys `K`, comparator `C`, the operation, and values `V` moved
/// with the keys where `pairs` (else `V` is written as `K` and unused):
/// from buffers, or from the input expressions `VA` and `VB` where
/// `value_exprs` holds them.
pub(crate) struct SetPlan<'a, A, B, V, C, VA, VB> {
    policy: TilePolicy,
    a: &'a A,
    b: &'a B,
    cmp: &'a C,
    op: SetOp,
    pairs: bool,
    /// `u64` output counts (inputs of [`SET_WIDE_FROM`] or more).
    wide: bool,
    /// The values as expressions (`CUPRIM_VALUES_X`), else buffers.
    value_exprs: Option<(&'a VA, &'a VB)>,
    _v: PhantomData<fn() -> V>,
}

impl<'a, K: Element, A: Node<Item = K>, B: Node<Item = K>, V: Element, C: Comparator<K>, VA: Node<Item = V>, VB: Node<Item = V>>
    SetPlan<'a, A, B, V, C, VA, VB>
{
    /// The plan for inputs `a` and `b` (their lengths pick the count type).
    pub fn new(_arch: u32, a: &'a A, b: &'a B, cmp: &'a C, op: SetOp, pairs: bool) -> Self {
        let slot = if pairs {
            size_of::<K>().max(size_of::<V>())
        } else {
            size_of::<K>()
        };
        SetPlan {
            policy: set_policy(slot),
            a,
            b,
            cmp,
            op,
            pairs,
            wide: a.length() as u64 + b.length() as u64 >= SET_WIDE_FROM,
            value_exprs: None,
            _v: PhantomData,
        }
    }

    /// The same plan with the values read from expressions `va` and `vb`
    /// (`vb` read only by the union and the symmetric difference).
    pub fn with_value_exprs(self, va: &'a VA, vb: &'a VB) -> Self {
        SetPlan {
            pairs: true,
            value_exprs: Some((va, vb)),
            ..self
        }
    }

    /// The same plan with `u64` counts (precompile).
    fn widened(self) -> Self {
        SetPlan { wide: true, ..self }
    }

    /// Runs the operation into `out` (keys, and values where `pairs`;
    /// `capacity` elements each, at least 1) from values `va`, `vb` (where
    /// `pairs` and the values are buffers; `vb` null unless the union or
    /// the symmetric difference): the partition launch, the tile launch,
    /// one read back of the count (at most `capacity`).
    fn run(&self, dev: &CudaDevice, (va, vb): (Ptr<V>, Ptr<V>), (out_k, out_v): (Ptr<K>, Ptr<V>), capacity: u64) -> Result<u64> {
        let (na, nb) = (self.a.length() as u64, self.b.length() as u64);
        let n = na + nb;
        let name = self.op.name(self.pairs);
        // Tile cuts lie SET_STRIDE = tile - 1 diagonals apart (kernels/merge/set.cu).
        let tiles = n.div_ceil(self.policy.tile() - 1);
        let blocks = u32::try_from(tiles)
            .ok()
            .filter(|&t| t <= i32::MAX as u32)
            .ok_or_else(|| Error::InvalidArgument(format!("{name} of {n} elements needs more than 2^31 tiles")))?;
        let module = dev.module(self)?;
        let mut layout = ScratchLayout::new();
        let splits = layout.uninit::<u64>(2 * (tiles + 1));
        let lookback = Lookback::place(&mut layout, tiles, if self.wide { 8 } else { 4 });
        // SAFETY: matches `cuprim_set_partition(const In0 a, u64 na, const In1 b, u64 nb, u64* splits, u64
        // tiles)`, In0 and In1 the structs whose fields the ExprArgs hold: reads elements below na of a and nb of
        // b, writes splits[0..2 * (tiles + 1)).
        let partition: Entry<(ExprArgs, u64, ExprArgs, u64, Ptr<u64>, u64)> = unsafe { Entry::declare("cuprim_set_partition") };
        // SAFETY: matches `cuprim_set(const In0 a, u64 na, const In1 b, u64 nb, const V* va, const V* vb, const
        // u64* splits, K* out_k, V* out_v, u64 capacity, u32* status, C* aggregates, C* prefixes, u32*
        // tile_counter, u32 num_tiles)`: reads elements below na of a and nb of b (and of va, vb with
        // CUPRIM_PAIRS; vb only for the union and the symmetric difference), splits[0..2 * (num_tiles + 1)),
        // writes below capacity of out_k (and out_v with CUPRIM_PAIRS), look-back state of num_tiles tiles.
        #[allow(clippy::type_complexity)]
        let tile: Entry<(
            ExprArgs,
            u64,
            ExprArgs,
            u64,
            Ptr<V>,
            Ptr<V>,
            Ptr<u64>,
            Ptr<K>,
            Ptr<V>,
            u64,
            Ptr<u32>,
            Ptr<u8>,
            Ptr<u8>,
            Ptr<u32>,
            u32,
        )> = unsafe { Entry::declare("cuprim_set") };
        // SAFETY: the same kernel compiled with CUPRIM_VALUES_X: `cuprim_set(const In0 a, u64 na, const In1 b, u64
        // nb, const Vx0 va, const Vx1 vb, ...)`, the rest as above; va and vb the structs whose fields the
        // ExprArgs hold, read below na (and, for the union and the symmetric difference, nb).
        #[allow(clippy::type_complexity)]
        let tile_x: Entry<(
            ExprArgs,
            u64,
            ExprArgs,
            u64,
            ExprArgs,
            ExprArgs,
            Ptr<u64>,
            Ptr<K>,
            Ptr<V>,
            u64,
            Ptr<u32>,
            Ptr<u8>,
            Ptr<u8>,
            Ptr<u32>,
            u32,
        )> = unsafe { Entry::declare("cuprim_set") };
        let counter = dev.counter(Counter::SetTile);
        dev.with_scratch(&layout, |s| {
            let splits = s.at(splits);
            let (status, aggregates, prefixes) = lookback.args(&s);
            let cuts = Grid::new((tiles + 1).div_ceil(PARTITION_BLOCK as u64) as u32, PARTITION_BLOCK);
            let grid = Grid::new(blocks, self.policy.block);
            match self.value_exprs {
                None => launch_checked2(dev, self.a, self.b, |x, y| {
                    dev.launch(&module, partition, cuts, (x, na, y, nb, splits, tiles))?;
                    let args = (
                        x, na, y, nb, va, vb, splits, out_k, out_v, capacity, status, aggregates, prefixes, counter, blocks,
                    );
                    dev.launch(&module, tile, grid, args)
                })?,
                Some((xa, xb)) => launch_checked4(dev, (self.a, self.b, xa, xb), |[x, y, p, q]| {
                    dev.launch(&module, partition, cuts, (x, na, y, nb, splits, tiles))?;
                    let args = (
                        x, na, y, nb, p, q, splits, out_k, out_v, capacity, status, aggregates, prefixes, counter, blocks,
                    );
                    dev.launch(&module, tile_x, grid, args)
                })?,
            }
            // The last tile's inclusive prefix: the low half of a 64-bit
            // packed word (u32), or the second 8 bytes of a 16-byte one.
            let at = lookback.prefix(&s, tiles - 1);
            let word = u64::from_le_bytes(dev.read_back::<8>(at.raw(), "reading the set operation's count")?);
            Ok(if self.wide { word } else { word & 0xffff_ffff }.min(capacity))
        })
    }
}

impl<K: Element, A: Node<Item = K>, B: Node<Item = K>, V: Element, C: Comparator<K>, VA: Node<Item = V>, VB: Node<Item = V>> Specialise
    for SetPlan<'_, A, B, V, C, VA, VB>
{
    fn template(&self) -> &'static Template {
        &SET
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        match self.value_exprs {
            None => write_inputs(self.a, "K", self.b, "K", w),
            Some((va, vb)) => {
                write_keyed_inputs(self.a, self.b, va, vb, w);
                w.text("#define CUPRIM_VALUES_X 1");
            }
        }
        self.policy.write(w);
        w.keys_values::<K, V>(self.pairs);
        w.comparator::<K, C>("Cmp", "K", self.cmp);
        w.constant("CUPRIM_SET_OP", self.op as i64);
        w.typedef("C", if self.wide { "u64" } else { "u32" });
    }
}

/// The set modules of buffers of `K` and `cmp`: every operation, keys
/// alone and with values `V` (the by-key forms), `u32` counts (inputs
/// below [`SET_WIDE_FROM`] elements; larger ones compile their module on
/// first use), for precompile.
pub(crate) fn set_specs<K: Element, V: Element, C: Comparator<K>>(arch: u32, cmp: &C) -> Vec<KernelSpec> {
    let leaf = Leaf::<K>::type_only();
    let mut specs = Vec::new();
    for op in SetOp::ALL {
        specs.push(KernelSpec::of(&SetPlan::<_, _, K, C, NoExpr<K>, NoExpr<K>>::new(
            arch, &leaf, &leaf, cmp, op, false,
        )));
        specs.push(KernelSpec::of(&SetPlan::<_, _, V, C, NoExpr<V>, NoExpr<V>>::new(
            arch, &leaf, &leaf, cmp, op, true,
        )));
    }
    specs
}

/// The modules of `set_*_with_by(a, b, cmp)` (every operation, `u32` and
/// `u64` counts), for precompile.
pub(crate) fn expr_set_specs<K: Element, A: Node<Item = K>, B: Node<Item = K>, C: Comparator<K>>(
    arch: u32,
    a: &A,
    b: &B,
    cmp: &C,
) -> Vec<KernelSpec> {
    let mut specs = Vec::new();
    for op in SetOp::ALL {
        let plan = SetPlan::<A, B, K, C, NoExpr<K>, NoExpr<K>>::new(arch, a, b, cmp, op, false);
        specs.push(KernelSpec::of(&plan));
        specs.push(KernelSpec::of(&plan.widened()));
    }
    specs
}

/// The modules of `set_*_by_key_with_by(values, b, other_values, cmp)` of
/// keys `a` (every operation, `u32` and `u64` counts), for precompile:
/// with values read from buffers where the call's values are buffers (the
/// buffer forms' values; the intersection and the difference read only
/// `va`), else with value expressions.
pub(crate) fn expr_set_by_key_specs<K: Element, V: Element, A, B, VA, VB, C>(
    arch: u32,
    (a, va): (&A, &VA),
    (b, vb): (&B, &VB),
    cmp: &C,
) -> Vec<KernelSpec>
where
    A: Node<Item = K>,
    B: Node<Item = K>,
    VA: Node<Item = V>,
    VB: Node<Item = V>,
    C: Comparator<K>,
{
    let none = Leaf::<V>::type_only();
    let mut specs = Vec::new();
    for op in SetOp::ALL {
        let reads_b = op.keeps_b();
        if VA::IS_BUF && (VB::IS_BUF || !reads_b) {
            let plan = SetPlan::<A, B, V, C, NoExpr<V>, NoExpr<V>>::new(arch, a, b, cmp, op, true);
            specs.push(KernelSpec::of(&plan));
            specs.push(KernelSpec::of(&plan.widened()));
        } else if reads_b {
            let plan = SetPlan::new(arch, a, b, cmp, op, true).with_value_exprs(va, vb);
            specs.push(KernelSpec::of(&plan));
            specs.push(KernelSpec::of(&plan.widened()));
        } else {
            let plan = SetPlan::new(arch, a, b, cmp, op, true).with_value_exprs(va, &none);
            specs.push(KernelSpec::of(&plan));
            specs.push(KernelSpec::of(&plan.widened()));
        }
    }
    specs
}
