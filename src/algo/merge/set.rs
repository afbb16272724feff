//! Set operations on sorted inputs: [`set_union`](SetOps::set_union),
//! [`set_intersection`](SetOps::set_intersection),
//! [`set_difference`](SetOps::set_difference) and
//! [`set_symmetric_difference`](SetOps::set_symmetric_difference), and
//! their `_by` forms for any [`Comparator`].
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
//! (the stable [`merge_by`](super::MergeOps::merge_by)).

use super::merge_keys_into;
use crate::algo::scan::ScanMutOps;
use crate::algo::{cuda_ptr_mut, same_device};
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
    fn name(self) -> &'static str {
        match self {
            SetOp::Union => "set_union",
            SetOp::Intersection => "set_intersection",
            SetOp::Difference => "set_difference",
            SetOp::SymmetricDifference => "set_symmetric_difference",
        }
    }
}

/// The sequential set operation on sorted `a` and `b` (std's two-pointer walk).
pub(crate) fn host_set<T: Copy>(a: &[T], b: &[T], op: SetOp, less: impl Fn(T, T) -> bool) -> Vec<T> {
    let keep_a = op != SetOp::Intersection;
    let keep_b = matches!(op, SetOp::Union | SetOp::SymmetricDifference);
    let keep_both = matches!(op, SetOp::Union | SetOp::Intersection);
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        if less(a[i], b[j]) {
            if keep_a {
                out.push(a[i]);
            }
            i += 1;
        } else if less(b[j], a[i]) {
            if keep_b {
                out.push(b[j]);
            }
            j += 1;
        } else {
            if keep_both {
                out.push(a[i]);
            }
            i += 1;
            j += 1;
        }
    }
    if keep_a {
        out.extend_from_slice(&a[i..]);
    }
    if keep_b {
        out.extend_from_slice(&b[j..]);
    }
    out
}

fn set_op<K: Element, C: Comparator<K>>(
    a: &(impl DeviceData<K> + ?Sized),
    b: &(impl DeviceData<K> + ?Sized),
    cmp: &C,
    op: SetOp,
) -> Result<DeviceVec<K>> {
    let name = op.name();
    let device = a.device();
    same_device(name, device, b.device())?;
    match (a.mem(), b.mem()) {
        (Mem::Host(x), Mem::Host(y)) => DeviceVec::from_slice(device, &host_set(x, y, op, |p, q| cmp.less(p, q))),
        (Mem::Cuda { dev, ptr: pa, len: na, .. }, Mem::Cuda { ptr: pb, len: nb, .. }) => {
            let (pa, pb) = (Ptr::<K>::from_raw(pa), Ptr::<K>::from_raw(pb));
            let keep = |mine, n, other, m, keep_less| compact(dev, device, name, cmp, (mine, n), (other, m), keep_less);
            match op {
                SetOp::Intersection => keep(pa, na, pb, nb, true),
                SetOp::Difference => keep(pa, na, pb, nb, false),
                SetOp::Union => {
                    let kb = keep(pb, nb, pa, na, false)?;
                    merge_new(device, a.mem(), &kb, cmp, name)
                }
                SetOp::SymmetricDifference => {
                    let ka = keep(pa, na, pb, nb, false)?;
                    let kb = keep(pb, nb, pa, na, false)?;
                    merge_new(device, ka.mem(), &kb, cmp, name)
                }
            }
        }
        _ => Err(Error::DeviceMismatch { op: name }),
    }
}

/// The stable merge of `a` and `b` into a new vector.
fn merge_new<K: Element, C: Comparator<K>>(
    device: &Device,
    a: Mem<'_, K>,
    b: &DeviceVec<K>,
    cmp: &C,
    name: &'static str,
) -> Result<DeviceVec<K>> {
    let n = a
        .len()
        .checked_add(b.len())
        .ok_or_else(|| Error::InvalidArgument(format!("{name}: the output does not fit in memory")))?;
    let mut out = DeviceVec::alloc_uninit(device, n)?;
    merge_keys_into(a, b.mem(), out.mem_mut(), cmp)?;
    Ok(out)
}

/// One specialisation of `kernels/merge/set.cu`: keys `K`, comparator `C`,
/// flags and their running counts `F` (`u32` below 2^32 elements of a side,
/// else `u64`).
pub(crate) struct SetPlan<'a, K, C, F> {
    pub cmp: &'a C,
    _t: PhantomData<fn() -> (K, F)>,
}

/// Threads per block of both set kernels (grid-stride loops; not tuned).
const SET_BLOCK: u32 = 256;

/// Elements of one side per thread of the flag kernel (`SET_CHUNK` in
/// `kernels/merge/set.cu`: one search of the other side per chunk).
const SET_CHUNK: usize = 16;

/// The elements of `mine` (`n` at a device pointer) kept against `other`
/// (`m`): where their rank in their run is below (`keep_less`) or at least
/// the count of their equivalents in `other`. Flags of `u32` below 2^32
/// elements, else `u64`.
fn compact<K: Element, C: Comparator<K>>(
    dev: &CudaDevice,
    device: &Device,
    name: &'static str,
    cmp: &C,
    mine: (Ptr<K>, usize),
    other: (Ptr<K>, usize),
    keep_less: bool,
) -> Result<DeviceVec<K>> {
    if mine.1 <= u32::MAX as usize {
        SetPlan::<K, C, u32>::new(cmp).compact(dev, device, name, mine, other, keep_less)
    } else {
        SetPlan::<K, C, u64>::new(cmp).compact(dev, device, name, mine, other, keep_less)
    }
}

impl<'a, K: Element, C: Comparator<K>, F: Element + crate::ops::Arith + crate::element::IndexElement> SetPlan<'a, K, C, F> {
    pub fn new(cmp: &'a C) -> Self {
        SetPlan { cmp, _t: PhantomData }
    }

    /// [`compact`] with flags of type `F`.
    fn compact(
        &self,
        dev: &CudaDevice,
        device: &Device,
        name: &'static str,
        (mine, n): (Ptr<K>, usize),
        (other, m): (Ptr<K>, usize),
        keep_less: bool,
    ) -> Result<DeviceVec<K>> {
        if n == 0 {
            return DeviceVec::alloc_uninit(device, 0);
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
        dev.launch(&module, flag, flag_grid, (mine, n as u64, other, m as u64, keep_less as u32, fptr))?;
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
        if total == 0 {
            return Ok(out);
        }
        let optr = cuda_ptr_mut(&mut out, name)?;
        // SAFETY: matches `cuprim_set_compact(const K* in, u64 n, const F* sums, K* out, u64 out_len)`:
        // reads in and sums [0..n), writes out below out_len.
        let compact: Entry<(Ptr<K>, u64, Ptr<F>, Ptr<K>, u64)> = unsafe { Entry::declare("cuprim_set_compact") };
        dev.launch(&module, compact, grid, (mine, n as u64, fptr, optr, total as u64))?;
        Ok(out)
    }
}

impl<K: Element, C: Comparator<K>, F: Element> Specialise for SetPlan<'_, K, C, F> {
    fn template(&self) -> &'static Template {
        &SET
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.elem::<K>("K");
        w.comparator::<K, C>("Cmp", "K", self.cmp);
        w.elem::<F>("F");
    }
}

/// The set kernels' modules of `K` and `cmp` (`u32` and `u64` flags), for precompile.
pub(crate) fn set_specs<K: Element, C: Comparator<K>>(cmp: &C) -> [KernelSpec; 2] {
    [
        KernelSpec::of(&SetPlan::<K, C, u32>::new(cmp)),
        KernelSpec::of(&SetPlan::<K, C, u64>::new(cmp)),
    ]
}
