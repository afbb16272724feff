//! Searches in sorted data: [`lower_bound`](SearchOps::lower_bound),
//! [`upper_bound`](SearchOps::upper_bound) and
//! [`binary_search`](SearchOps::binary_search) of many queries at once
//! (NumPy's `searchsorted`, Thrust's vectorised searches), and
//! [`is_sorted`](SearchOps::is_sorted) /
//! [`is_sorted_until`](SearchOps::is_sorted_until).
//!
//! The array must be sorted by the comparator given ([`Less`] when none
//! is); queries may come in any order. An array that is not sorted gives
//! unspecified positions, never an error or a fault.
//!
//! On a GPU, many queries run down a static index of the sorted array
//! (`kernels/search/search.cu`): the last element of every 32-byte sector,
//! of every 32 bytes of those, and so on, the top level in shared memory,
//! so each level below costs one sector read instead of several; the index
//! is built per call, one read of the array. A few queries bisect the array
//! directly instead.

pub(crate) mod host;
pub(crate) mod plan;

pub use plan::Mode;

use crate::algo::{cuda_ptr_mut, same_device};
use crate::cmp::{Comparator, Less};
use crate::element::{Element, IndexElement, Scalar};
use crate::error::{Error, Result};
use crate::expr::node::Node;
use crate::vec::{DeviceData, DeviceVec};
use std::mem::size_of;

/// Searches in sorted data. In [`prelude`](crate::prelude).
pub trait SearchOps<T: Element>: DeviceData<T> {
    /// For each query, the first position whose element is not less than
    /// it (where it would be inserted, before its equals), as `u32`. The
    /// data must be sorted ascending ([`Less`]); an array of more than
    /// 2^32 - 1 elements is [`Error::InvalidArgument`] (use
    /// [`search_with`](SearchOps::search_with) with `u64`).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let sorted = DeviceVec::from_slice(&dev, &[10u32, 20, 20, 30])?;
    /// let queries = DeviceVec::from_slice(&dev, &[20u32, 5, 35, 25])?;
    /// assert_eq!(sorted.lower_bound(&queries)?.to_vec()?, vec![1, 0, 4, 3]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn lower_bound<Q: DeviceData<T> + ?Sized>(&self, queries: &Q) -> Result<DeviceVec<u32>> {
        self.search_with(queries, Less, Mode::Lower)
    }

    /// [`lower_bound`](SearchOps::lower_bound) in data sorted by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let sorted = DeviceVec::from_slice(&dev, &[3.0f32, 2.0, 2.0, 1.0])?;
    /// let queries = DeviceVec::from_slice(&dev, &[2.0f32, 0.5])?;
    /// assert_eq!(sorted.lower_bound_by(&queries, Greater)?.to_vec()?, vec![1, 4]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn lower_bound_by<Q: DeviceData<T> + ?Sized, C: Comparator<T>>(&self, queries: &Q, cmp: C) -> Result<DeviceVec<u32>> {
        self.search_with(queries, cmp, Mode::Lower)
    }

    /// For each query, the first position whose element is greater than
    /// it (where it would be inserted, after its equals), as `u32`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let sorted = DeviceVec::from_slice(&dev, &[10u32, 20, 20, 30])?;
    /// let queries = DeviceVec::from_slice(&dev, &[20u32, 5, 35])?;
    /// assert_eq!(sorted.upper_bound(&queries)?.to_vec()?, vec![3, 0, 4]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn upper_bound<Q: DeviceData<T> + ?Sized>(&self, queries: &Q) -> Result<DeviceVec<u32>> {
        self.search_with(queries, Less, Mode::Upper)
    }

    /// [`upper_bound`](SearchOps::upper_bound) in data sorted by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let sorted = DeviceVec::from_slice(&dev, &[3i32, 2, 2, 1])?;
    /// let queries = DeviceVec::from_slice(&dev, &[2i32])?;
    /// assert_eq!(sorted.upper_bound_by(&queries, Greater)?.to_vec()?, vec![3]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn upper_bound_by<Q: DeviceData<T> + ?Sized, C: Comparator<T>>(&self, queries: &Q, cmp: C) -> Result<DeviceVec<u32>> {
        self.search_with(queries, cmp, Mode::Upper)
    }

    /// For each query, the position of the first element equal to it, or
    /// [`NOT_FOUND`] (`u32::MAX`) when there is none.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::search::NOT_FOUND;
    /// let dev = Device::default()?;
    /// let sorted = DeviceVec::from_slice(&dev, &[-0.0f64, 0.0, 1.5, f64::NAN])?;
    /// let queries = DeviceVec::from_slice(&dev, &[0.0f64, 1.5, 2.0, f64::NAN])?;
    /// // total_cmp order: -0.0 and 0.0 are different, NaN is found.
    /// assert_eq!(sorted.binary_search(&queries)?.to_vec()?, vec![1, 2, NOT_FOUND, 3]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn binary_search<Q: DeviceData<T> + ?Sized>(&self, queries: &Q) -> Result<DeviceVec<u32>> {
        self.search_with(queries, Less, Mode::Exact)
    }

    /// [`binary_search`](SearchOps::binary_search) in data sorted by `cmp`
    /// (equal: neither is less).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// cuprim::comparator! {
    ///     /// By the low byte only.
    ///     pub struct LowByte for u32 {
    ///         rust: |a, b| (a & 0xff) < (b & 0xff),
    ///         cuda: "(a & 0xffu) < (b & 0xffu)",
    ///     }
    /// }
    /// let dev = Device::default()?;
    /// let sorted = DeviceVec::from_slice(&dev, &[0x301u32, 0x102, 0x203])?;
    /// let queries = DeviceVec::from_slice(&dev, &[0x2u32])?;
    /// assert_eq!(sorted.binary_search_by(&queries, LowByte)?.to_vec()?, vec![1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn binary_search_by<Q: DeviceData<T> + ?Sized, C: Comparator<T>>(&self, queries: &Q, cmp: C) -> Result<DeviceVec<u32>> {
        self.search_with(queries, cmp, Mode::Exact)
    }

    /// The general form: every query's answer under `mode` in data sorted by
    /// `cmp`, as indices of type `I` (`u32`, or `u64` for arrays of 2^32
    /// elements or more). [`Mode::Exact`]'s "not found" is `I`'s all ones.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::search::Mode;
    /// use cuprim::cmp::Less;
    /// let dev = Device::default()?;
    /// let sorted = DeviceVec::from_slice(&dev, &[1u8, 2, 2, 3])?;
    /// let queries = DeviceVec::from_slice(&dev, &[2u8, 9])?;
    /// let at = sorted.search_with::<u64, _, _>(&queries, Less, Mode::Upper)?;
    /// assert_eq!(at.to_vec()?, vec![3, 4]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn search_with<I: IndexElement, Q: DeviceData<T> + ?Sized, C: Comparator<T>>(
        &self,
        queries: &Q,
        cmp: C,
        mode: Mode,
    ) -> Result<DeviceVec<I>> {
        search_of(self, &crate::expr::LazyOps::lazy(queries), cmp, mode)
    }

    /// True when the elements are in ascending order ([`Less`]: no element
    /// is less than the one before it). Empty and one-element data are
    /// sorted.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// assert!(DeviceVec::from_slice(&dev, &[1u32, 1, 2])?.is_sorted()?);
    /// assert!(!DeviceVec::from_slice(&dev, &[0.0f32, -0.0])?.is_sorted()?);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn is_sorted(&self) -> Result<bool> {
        Ok(self.is_sorted_until_by(Less)? == self.len())
    }

    /// True when the elements are in order by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[3i8, 2, 2, -1])?;
    /// assert!(v.is_sorted_by(Greater)?);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn is_sorted_by<C: Comparator<T>>(&self, cmp: C) -> Result<bool> {
        Ok(self.is_sorted_until_by(cmp)? == self.len())
    }

    /// The length of the longest sorted prefix ([`Less`]): the first
    /// position whose element is less than the one before it, or the
    /// length.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1u64, 4, 9, 3, 5])?;
    /// assert_eq!(v.is_sorted_until()?, 3);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn is_sorted_until(&self) -> Result<usize> {
        self.is_sorted_until_by(Less)
    }

    /// [`is_sorted_until`](SearchOps::is_sorted_until) by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[9u32, 4, 5])?;
    /// assert_eq!(v.is_sorted_until_by(Greater)?, 2);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn is_sorted_until_by<C: Comparator<T>>(&self, cmp: C) -> Result<usize> {
        sorted_until_of(&crate::expr::LazyOps::lazy(self), cmp)
    }
}

impl<T: Element, D: DeviceData<T> + ?Sized> SearchOps<T> for D {}

/// Every query of the expression `queries` (a buffer being the simplest)
/// answered under `mode` in the buffer `sorted`, read in place by the
/// search kernel.
pub(crate) fn search_of<T: Element, I: IndexElement, C: Comparator<T>, Q: Node<Item = T>>(
    sorted: &(impl DeviceData<T> + ?Sized),
    queries: &Q,
    cmp: C,
    mode: Mode,
) -> Result<DeviceVec<I>> {
    search_in(&crate::expr::LazyOps::lazy(sorted), queries, cmp, mode)
}

/// [`search_of`] with the sorted side an input expression too.
pub(crate) fn search_in<T: Element, I: IndexElement, C: Comparator<T>, S: Node<Item = T>, Q: Node<Item = T>>(
    sorted: &S,
    queries: &Q,
    cmp: C,
    mode: Mode,
) -> Result<DeviceVec<I>> {
    let op = match mode {
        Mode::Lower => "lower_bound",
        Mode::Upper => "upper_bound",
        Mode::Exact => "binary_search",
    };
    queries.validate()?;
    sorted.validate()?;
    same_device(op, sorted.device_ref(), queries.device_ref())?;
    let n = sorted.length();
    // Positions run to n inclusive, and Exact's all ones must be no position.
    if n as u64 >= I::highest().as_u64() {
        return Err(Error::InvalidArgument(format!(
            "{op} in {n} elements needs u64 indices, not {}",
            I::NAME
        )));
    }
    let Some(dev) = crate::expr::node::cuda_of(sorted) else {
        let (s, q) = (crate::expr::host_items(sorted)?, crate::expr::host_items(queries)?);
        let at: Vec<I> = host::search(&s, &q, &cmp, mode)
            .into_iter()
            .map(|p| {
                if p == u64::MAX {
                    I::highest()
                } else {
                    I::from_scalar(Scalar::U64(p))
                }
            })
            .collect();
        return DeviceVec::from_slice(sorted.device_ref(), &at);
    };
    // A search reads a few of the sorted side's elements; a permutation
    // there has every index checked first (one read of them), as on the
    // host, so an index out of range is an error whatever is searched.
    crate::expr::consume::check_indices(sorted)?;
    let m = queries.length();
    let mut out = DeviceVec::<I>::alloc_uninit(sorted.device_ref(), m)?;
    if m == 0 {
        return Ok(out);
    }
    let out_ptr = cuda_ptr_mut(&mut out, op)?;
    if n == 0 {
        // Every lower and upper bound is 0; nothing is found (the
        // queries are still read when they permute: their indices
        // are checked).
        crate::expr::consume::check_indices(queries)?;
        let fill = if mode == Mode::Exact { 0xff } else { 0 };
        dev.memset_bytes(out_ptr.raw(), fill, m * size_of::<I>(), op)?;
        return Ok(out);
    }
    // A buffer's elements from the 32-byte sector boundary below its start
    // (the index's groups are whole sectors); an expression's groups start
    // at its element 0.
    let off = sorted.buffer_addr().map_or(0, |a| (a % 32) / size_of::<T>() as u64);
    let kernel = plan::SearchKernel::<T, I, C, Q, S>::new(&cmp, mode, queries, sorted);
    plan::search(dev, &kernel, off, out_ptr)?;
    Ok(out)
}

/// The length of the longest prefix of an input expression sorted by
/// `cmp`.
pub(crate) fn sorted_until_of<T: Element, C: Comparator<T>, S: Node<Item = T>>(sorted: &S, cmp: C) -> Result<usize> {
    sorted.validate()?;
    match crate::expr::node::cuda_of(sorted) {
        None => Ok(host::sorted_until(&crate::expr::host_items(sorted)?, &cmp)),
        Some(dev) => {
            // The search stops at the first descent; every index of a
            // permutation is checked first, as on the host.
            crate::expr::consume::check_indices(sorted)?;
            Ok(plan::sorted_until(dev, &cmp, sorted)? as usize)
        }
    }
}

/// [`binary_search`](SearchOps::binary_search)'s answer for a query that
/// is not in the data.
pub const NOT_FOUND: u32 = u32::MAX;
