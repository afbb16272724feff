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
//! The host backend walks both inputs once, sequentially. On CUDA, one
//! kernel (`kernels/merge/set.cu`) flags each element of a side: with `r`
//! its rank in its run (its position less its run's lower bound) and `c`
//! the number of equivalents in the other side (each thread walks 16
//! consecutive elements: one binary search of the other side for the
//! first, then galloping forward from the last bounds for each new run),
//! the intersection keeps it where `r < c` and the others where `r >= c`;
//! an inclusive scan of the flags in place gives the kept elements' places
//! (one count read back) and a second kernel compacts them. The union merges all of `self` with the
//! other side's kept elements, the symmetric difference both kept sides
//! (the stable [`merge_by`](super::MergeOps::merge_by)). The by-key forms
//! run the same flags and scan (the keys' flags, computed once); the
//! compaction moves each kept key's value with it, and the merges are
//! [`merge_by_key_by`](super::MergeOps::merge_by_key_by)'s. The host
//! backend's walk emits stretches of either side, copied from the keys
//! and, for the by-key forms, from the values.

use super::{merge_keys_into, merge_pairs_into};
use crate::algo::scan::ScanMutOps;
use crate::algo::{cuda_ptr_mut, same_device, same_len};
use crate::cmp::{Comparator, Less};
use crate::device::{CudaDevice, Entry, Grid, Ptr};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::ops::Add;
use crate::vec::raw::{Mem, Sealed as _, SealedMut as _};
use crate::vec::{DeviceData, DeviceVec};
use crate::Device;
use std::marker::PhantomData;
use std::ops::Range;

template!(SET, "merge/set.cu", ["cuprim_set_flags", "cuprim_set_compact"], headers: [super::plan::MERGE_PATH]);

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
    Union,
    Intersection,
    Difference,
    SymmetricDifference,
}

impl SetOp {
    fn name(self, by_key: bool) -> &'static str {
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

/// Keys and, for the by-key forms, values: an input's or a result's.
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
            let side_a = Part {
                keys: Ptr::<K>::from_raw(pa),
                values: cuda_values(va, name)?,
                len: na,
            };
            let side_b = Part {
                keys: Ptr::<K>::from_raw(pb),
                values: cuda_values(vb, name)?,
                len: nb,
            };
            let keep = |mine, other: Part<K, V>, keep_less| compact(dev, device, name, cmp, mine, (other.keys, other.len), keep_less);
            match op {
                SetOp::Intersection => keep(side_a, side_b, true),
                SetOp::Difference => keep(side_a, side_b, false),
                SetOp::Union => {
                    let kb = keep(side_b, side_a, false)?;
                    merge_new(device, (a.mem(), va.map(|v| v.mem())), &kb, cmp, name)
                }
                SetOp::SymmetricDifference => {
                    let ka = keep(side_a, side_b, false)?;
                    let kb = keep(side_b, side_a, false)?;
                    merge_new(device, (ka.0.mem(), ka.1.as_ref().map(|v| v.mem())), &kb, cmp, name)
                }
            }
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

/// The stable merge of `a` and `b` into new vectors: with values
/// ([`merge_pairs_into`]) where both sides have them.
fn merge_new<K: Element, V: Element, C: Comparator<K>>(
    device: &Device,
    a: (Mem<'_, K>, Option<Mem<'_, V>>),
    b: &Pairs<K, V>,
    cmp: &C,
    name: &'static str,
) -> Result<Pairs<K, V>> {
    let n =
        a.0.len()
            .checked_add(b.0.len())
            .ok_or_else(|| Error::InvalidArgument(format!("{name}: the output does not fit in memory")))?;
    let mut keys = DeviceVec::alloc_uninit(device, n)?;
    match (a.1, &b.1) {
        (None, None) => {
            merge_keys_into(a.0, b.0.mem(), keys.mem_mut(), cmp)?;
            Ok((keys, None))
        }
        (Some(va), Some(vb)) => {
            let mut values = DeviceVec::alloc_uninit(device, n)?;
            merge_pairs_into((a.0, va), (b.0.mem(), vb.mem()), (keys.mem_mut(), values.mem_mut()), cmp)?;
            Ok((keys, Some(values)))
        }
        // Not reached: both sides of a merge have values or neither has.
        _ => Err(Error::InvalidArgument(format!("{name}: values on one side of the merge only"))),
    }
}

/// One side of a set kernel on the device: `len` keys, and as many values
/// where given.
struct Part<K, V> {
    keys: Ptr<K>,
    values: Option<Ptr<V>>,
    len: usize,
}

impl<K, V> Clone for Part<K, V> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K, V> Copy for Part<K, V> {}

/// One specialisation of `kernels/merge/set.cu`: keys `K`, comparator `C`,
/// flags and their running counts `F` (`u32` below 2^32 elements of a side,
/// else `u64`), and values `V` moved with the keys where `pairs` (else `V`
/// is written as `K` and unused).
pub(crate) struct SetPlan<'a, K, V, C, F> {
    pub cmp: &'a C,
    pairs: bool,
    _t: PhantomData<fn() -> (K, V, F)>,
}

/// Threads per block of both set kernels (grid-stride loops; not tuned).
const SET_BLOCK: u32 = 256;

/// Elements of one side per thread of the flag kernel (`SET_CHUNK` in
/// `kernels/merge/set.cu`: one search of the other side per chunk).
const SET_CHUNK: usize = 16;

/// The elements of `mine` kept against `other` (`m` keys at a device
/// pointer), with their values where `mine` has them: where their rank in
/// their run is below (`keep_less`) or at least the count of their
/// equivalents in `other`. Flags of `u32` below 2^32 elements, else `u64`.
fn compact<K: Element, V: Element, C: Comparator<K>>(
    dev: &CudaDevice,
    device: &Device,
    name: &'static str,
    cmp: &C,
    mine: Part<K, V>,
    other: (Ptr<K>, usize),
    keep_less: bool,
) -> Result<Pairs<K, V>> {
    let pairs = mine.values.is_some();
    if mine.len <= u32::MAX as usize {
        SetPlan::<K, V, C, u32>::new(cmp, pairs).compact(dev, device, name, mine, other, keep_less)
    } else {
        SetPlan::<K, V, C, u64>::new(cmp, pairs).compact(dev, device, name, mine, other, keep_less)
    }
}

impl<'a, K: Element, V: Element, C: Comparator<K>, F: Element + crate::ops::Arith + crate::element::IndexElement> SetPlan<'a, K, V, C, F> {
    pub fn new(cmp: &'a C, pairs: bool) -> Self {
        SetPlan {
            cmp,
            pairs,
            _t: PhantomData,
        }
    }

    /// [`compact`] with flags of type `F`; `mine.values` is given exactly
    /// where `self.pairs`.
    fn compact(
        &self,
        dev: &CudaDevice,
        device: &Device,
        name: &'static str,
        mine: Part<K, V>,
        (other, m): (Ptr<K>, usize),
        keep_less: bool,
    ) -> Result<Pairs<K, V>> {
        let n = mine.len;
        let values_out = |len| -> Result<Option<DeviceVec<V>>> {
            match self.pairs {
                true => Ok(Some(DeviceVec::alloc_uninit(device, len)?)),
                false => Ok(None),
            }
        };
        if n == 0 {
            return Ok((DeviceVec::alloc_uninit(device, 0)?, values_out(0)?));
        }
        let grid = Grid::new(n.div_ceil(SET_BLOCK as usize).min(1 << 20) as u32, SET_BLOCK);
        // The flag kernel's threads take SET_CHUNK elements each.
        let chunks = n.div_ceil(SET_CHUNK);
        let flag_grid = Grid::new(chunks.div_ceil(SET_BLOCK as usize).min(1 << 20) as u32, SET_BLOCK);
        let module = dev.module(self)?;
        let mut flags = DeviceVec::<F>::alloc_uninit(device, n)?;
        let fptr = cuda_ptr_mut(&mut flags, name)?;
        // SAFETY: matches `cuprim_set_flags(const K* mine, u64 n, const K* other, u64 m, u32 keep_less, F* flags)`:
        // reads mine[0..n) and other[0..m), writes flags[0..n).
        let flag: Entry<(Ptr<K>, u64, Ptr<K>, u64, u32, Ptr<F>)> = unsafe { Entry::declare("cuprim_set_flags") };
        dev.launch(
            &module,
            flag,
            flag_grid,
            (mine.keys, n as u64, other, m as u64, keep_less as u32, fptr),
        )?;
        // Flags become their inclusive sums in place (at most n: no
        // overflow in F): the last is the count kept (one read back), and
        // element i is kept where its sum steps up.
        flags.scan_inclusive_in_place(Add)?;
        let total = flags.slice(n - 1..)?.to_vec()?[0].as_u64();
        let total = usize::try_from(total)
            .ok()
            .filter(|&t| t <= n)
            .ok_or(Error::DeviceMismatch { op: name })?;
        let mut out = DeviceVec::<K>::alloc_uninit(device, total)?;
        let mut out_values = values_out(total)?;
        if total == 0 {
            return Ok((out, out_values));
        }
        let optr = cuda_ptr_mut(&mut out, name)?;
        let ovptr = match out_values.as_mut() {
            Some(v) => cuda_ptr_mut(v, name)?,
            None => Ptr::null(),
        };
        let vptr = mine.values.unwrap_or(Ptr::null());
        // SAFETY: matches `cuprim_set_compact(const K* in, const V* values, u64 n, const F* sums, K* out,
        // V* out_values, u64 out_len)`: reads in and sums [0..n), writes out below out_len; with
        // CUPRIM_PAIRS (self.pairs: values and out_values non-null) reads values[0..n) and writes
        // out_values below out_len, else leaves both alone.
        let compact: Entry<(Ptr<K>, Ptr<V>, u64, Ptr<F>, Ptr<K>, Ptr<V>, u64)> = unsafe { Entry::declare("cuprim_set_compact") };
        dev.launch(&module, compact, grid, (mine.keys, vptr, n as u64, fptr, optr, ovptr, total as u64))?;
        Ok((out, out_values))
    }
}

impl<K: Element, V: Element, C: Comparator<K>, F: Element> Specialise for SetPlan<'_, K, V, C, F> {
    fn template(&self) -> &'static Template {
        &SET
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.keys_values::<K, V>(self.pairs);
        w.comparator::<K, C>("Cmp", "K", self.cmp);
        w.elem::<F>("F");
    }
}

/// The set kernels' modules of `K` and `cmp` (`u32` and `u64` flags), keys
/// alone and with values `V` (the by-key forms), for precompile.
pub(crate) fn set_specs<K: Element, V: Element, C: Comparator<K>>(cmp: &C) -> [KernelSpec; 4] {
    [
        KernelSpec::of(&SetPlan::<K, K, C, u32>::new(cmp, false)),
        KernelSpec::of(&SetPlan::<K, K, C, u64>::new(cmp, false)),
        KernelSpec::of(&SetPlan::<K, V, C, u32>::new(cmp, true)),
        KernelSpec::of(&SetPlan::<K, V, C, u64>::new(cmp, true)),
    ]
}
