//! Radix sort: [`sort`](SortMutOps::sort), [`sort_descending`](SortMutOps::sort_descending),
//! [`sort_pairs`](SortMutOps::sort_pairs) (keys and values of any element type),
//! [`sort_pairs_descending`](SortMutOps::sort_pairs_descending), the same with
//! [`SortOptions`] (a bit range, descending), and [`argsort`](SortOps::argsort);
//! and the stable comparison sorts [`sort_by`](SortMutOps::sort_by) and
//! [`sort_pairs_by`](SortMutOps::sort_pairs_by) (any [`Comparator`]; a merge
//! sort).
//!
//! # Order
//! Every element type can be a key. Integers sort by value. Floats (`f16`,
//! `bf16`, `f32`, `f64`) sort in the order of [`f32::total_cmp`]:
//!
//! `-NaN < -inf < ... < -1.0 < ... < -0.0 < +0.0 < ... < 1.0 < ... < +inf < +NaN`
//!
//! so `-0.0` and `+0.0` are different keys, and NaNs are ordered by sign and
//! then payload (negative NaNs first, positive NaNs last). Descending sorts
//! use exactly the reverse order.
//!
//! # Stability
//! Every sort is stable: keys that compare equal keep their input order,
//! descending sorts included (they invert the keys, they never reverse the
//! output). With a bit range, keys equal on those bits count as equal.
//!
//! # Bit ranges
//! For keys known to fit in fewer bits, [`SortOptions::bits`] sorts on bits
//! `begin..end` only, with `ceil((end - begin) / 8)` passes instead of one per
//! byte of the key. The bits are those of the key's *order-preserving* form:
//! unsigned integers as they are, signed integers with the sign bit flipped,
//! floats with all bits flipped when negative and the sign bit set otherwise
//! (for unsigned keys, just the key's own bits). A sort on bits `begin..end`
//! orders keys by `(ordered(key) >> begin) % 2^(end - begin)`.
//!
//! # Algorithm
//! LSD radix sort with 8-bit digits, onesweep style (Adinets & Merrill, 2022;
//! see `kernels/sort/radix_sort.cu`): one pass reads the keys once to count every
//! digit of every pass, then each pass is one kernel in which a block counts
//! the digits of its tile of keys, publishes the counts at once, ranks the
//! keys, and finds where each digit's keys go with a decoupled look-back
//! over earlier tiles' counts. So a 32-bit key costs five reads and four
//! writes of the keys (and four reads and writes of the values). Inputs of
//! at most 16384 keys alone of up to 4 bytes (8192 pairs, 8192 keys when
//! keys or values have 8 bytes) are sorted by a single block in one
//! launch: read once, every pass in registers and shared memory, written
//! once.
//!
//! The sort works in place on the caller's buffer, ping-ponging with
//! device scratch of `n` keys and `n` values, plus 1 KiB of look-back state
//! per tile per pass (0.1 to 0.33 bytes per key per pass); the device keeps
//! that scratch and reuses it across calls. With an odd number of passes
//! the result is copied back at the end. [`argsort`](SortOps::argsort)
//! also allocates a copy of the keys and the index vector it returns. The
//! host backend runs a stable sort by the same key bits.

#[cfg(feature = "classic-sort")]
mod classic;
mod host;
mod onesweep;
pub(crate) mod plan;
mod tuples;

pub(crate) use tuples::{sorted_lex3_of, sorted_lex_of, sorted_lex_pairs_of, sorted_pairs_unzip3_of, sorted_pairs_unzip_of};

#[cfg(feature = "classic-sort")]
pub(crate) use classic::classic_kernel_specs;
pub(crate) use host::{from_ordered_bits, ordered_bits, radix};
pub(crate) use plan::kernel_specs;
#[cfg(feature = "sort-tuning")]
#[doc(hidden)]
pub use plan::{tuning, SmallShape};

use crate::algo::transform::TransformOps as _;
use crate::algo::{same_device, same_len};
use crate::cmp::Comparator;
use crate::device::Ptr;
use crate::element::{Element, IndexElement};
use crate::error::{Error, Result};
use crate::expr::host_items;
use crate::expr::node::{cuda_of, Node};
use crate::ops::Arith;
use crate::vec::raw::{MemMut, SealedMut as _};
use crate::vec::{DeviceData, DeviceDataMut, DeviceVec};
use std::mem::size_of;

/// How to sort: the order and the key bits that matter.
///
/// ```
/// # use cuprim::prelude::*;
/// use cuprim::algo::sort::SortOptions;
/// let mut v = DeviceVec::from_slice(&Device::default()?, &[0x0102u32, 0x0201, 0x0301, 0x0100])?;
/// // Only the low byte: 0x02, 0x01, 0x01, 0x00 (ties keep their order).
/// v.sort_with(SortOptions::new().bits(0, 8))?;
/// assert_eq!(v.to_vec()?, vec![0x0100, 0x0201, 0x0301, 0x0102]);
/// v.sort_with(SortOptions::new().descending())?;
/// assert_eq!(v.to_vec()?, vec![0x0301, 0x0201, 0x0102, 0x0100]);
/// # Ok::<(), cuprim::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SortOptions {
    begin_bit: u32,
    end_bit: Option<u32>,
    descending: bool,
    portion_tiles: Option<u32>,
    shortcut: Option<bool>,
}

impl SortOptions {
    /// Ascending, on every bit of the key.
    pub fn new() -> Self {
        Self::default()
    }

    /// Largest key first (still stable: equal keys keep their input order).
    pub fn descending(mut self) -> Self {
        self.descending = true;
        self
    }

    /// Sort on bits `begin_bit..end_bit` of the key's order-preserving form
    /// only (see the [module docs](crate::algo::sort)); `begin_bit < end_bit <=` the key's
    /// width is required, else the sort fails with
    /// [`Error::InvalidArgument`].
    pub fn bits(mut self, begin_bit: u32, end_bit: u32) -> Self {
        self.begin_bit = begin_bit;
        self.end_bit = Some(end_bit);
        self
    }

    /// True if [`descending`](SortOptions::descending) was asked for.
    pub fn is_descending(&self) -> bool {
        self.descending
    }

    /// Splits large inputs into portions of this many tiles (normally
    /// fewer than 2^30 keys): lets tests reach the multi-portion path.
    #[doc(hidden)]
    pub fn portion_tiles(mut self, tiles: u32) -> Self {
        self.portion_tiles = Some(tiles.max(1));
        self
    }

    /// Overrides the policy's choice of the onesweep shortcuts (skipping
    /// passes in which every key has the same digit, copying tiles whose
    /// keys share one digit without ranking them): lets tests and benches
    /// run both kernels in one process.
    #[doc(hidden)]
    pub fn shortcuts(mut self, on: bool) -> Self {
        self.shortcut = Some(on);
        self
    }
}

/// A validated bit range and order, with the test hooks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SortArgs {
    begin: u32,
    end: u32,
    descending: bool,
    portion_tiles: Option<u32>,
    shortcut: Option<bool>,
}

impl SortArgs {
    fn new<K: Element>(opts: &SortOptions) -> Result<SortArgs> {
        let width = 8 * size_of::<K>() as u32;
        let end = opts.end_bit.unwrap_or(width);
        if opts.begin_bit >= end || end > width {
            return Err(Error::InvalidArgument(format!(
                "sort bit range {}..{end} must be non-empty and within the {width} bits of {}",
                opts.begin_bit,
                K::NAME
            )));
        }
        Ok(SortArgs {
            begin: opts.begin_bit,
            end,
            descending: opts.descending,
            portion_tiles: opts.portion_tiles,
            shortcut: opts.shortcut,
        })
    }

    /// Passes of `bits`-bit digits.
    fn passes(&self, bits: u32) -> u32 {
        (self.end - self.begin).div_ceil(bits)
    }

    /// Shift and mask of pass `p` with `bits`-bit digits.
    fn digit(&self, p: u32, bits: u32) -> (u32, u32) {
        let shift = self.begin + p * bits;
        (shift, (1u32 << bits.min(self.end - shift)) - 1)
    }

    /// XOR mask that turns ascending order into descending.
    fn flip<K: Element>(&self) -> u64 {
        if !self.descending {
            0
        } else if size_of::<K>() == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * size_of::<K>())) - 1
        }
    }
}

/// Index sorts that leave the keys alone. In [`prelude`](crate::prelude).
pub trait SortOps<K: Element>: DeviceData<K> {
    /// The permutation that sorts the keys (stably, ascending): `out[i]` is
    /// the input index of the `i`-th smallest key. `I` is `u32` or `u64`;
    /// `u32` indices take at most 2^32 keys.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[3.5f32, -1.0, 3.5, f32::NAN, -0.0])?;
    /// assert_eq!(v.argsort::<u32>()?.to_vec()?, vec![1, 4, 0, 2, 3]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn argsort<I: IndexElement + Arith>(&self) -> Result<DeviceVec<I>> {
        self.argsort_with(SortOptions::new())
    }

    /// [`argsort`](SortOps::argsort) with [`SortOptions`].
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::sort::SortOptions;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[2i32, -7, 2, 9])?;
    /// let order = v.argsort_with::<u64>(SortOptions::new().descending())?;
    /// assert_eq!(order.to_vec()?, vec![3, 0, 2, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn argsort_with<I: IndexElement + Arith>(&self, opts: SortOptions) -> Result<DeviceVec<I>> {
        let n = self.len();
        if n > 0 && (n - 1) as u64 > I::highest().as_u64() {
            return Err(Error::InvalidArgument(format!(
                "argsort of {n} keys needs u64 indices, not {}",
                I::NAME
            )));
        }
        SortArgs::new::<K>(&opts)?;
        let mut keys = self.to_device_vec()?;
        let mut order = DeviceVec::<I>::sequence(self.device(), n, I::zero(), I::one())?;
        keys.sort_pairs_with(&mut order, opts)?;
        Ok(order)
    }
}

impl<K: Element, D: DeviceData<K> + ?Sized> SortOps<K> for D {}

/// In-place sorts. In [`prelude`](crate::prelude).
pub trait SortMutOps<K: Element>: DeviceDataMut<K> {
    /// Sorts the keys ascending (stable; floats in `total_cmp` order, see
    /// the [module docs](crate::algo::sort)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let mut v = DeviceVec::from_slice(&Device::default()?, &[0.5f32, -0.0, f32::INFINITY, 0.0, -2.0])?;
    /// v.sort()?;
    /// let bits: Vec<u32> = v.to_vec()?.iter().map(|x| x.to_bits()).collect();
    /// let want: Vec<u32> = [-2.0f32, -0.0, 0.0, 0.5, f32::INFINITY].iter().map(|x| x.to_bits()).collect();
    /// assert_eq!(bits, want);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sort(&mut self) -> Result<()> {
        self.sort_with(SortOptions::new())
    }

    /// Sorts the keys descending (stable).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let mut v = DeviceVec::from_slice(&Device::default()?, &[3i64, -8, 12, 0])?;
    /// v.sort_descending()?;
    /// assert_eq!(v.to_vec()?, vec![12, 3, 0, -8]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sort_descending(&mut self) -> Result<()> {
        self.sort_with(SortOptions::new().descending())
    }

    /// Sorts the keys as `opts` says (order, bit range).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::sort::SortOptions;
    /// // Keys below 2^12: two 8-bit passes instead of four.
    /// let mut v = DeviceVec::from_slice(&Device::default()?, &[4000u32, 17, 2048, 5])?;
    /// v.sort_with(SortOptions::new().bits(0, 12))?;
    /// assert_eq!(v.to_vec()?, vec![5, 17, 2048, 4000]);
    /// assert!(v.sort_with(SortOptions::new().bits(8, 40)).is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sort_with(&mut self, opts: SortOptions) -> Result<()> {
        sort_keys_on(self, opts, onesweep::sort::<K, K>)
    }

    /// Sorts the keys ascending and applies the same permutation to
    /// `values` (any element type, as many as there are keys). Stable.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let mut keys = DeviceVec::from_slice(&dev, &[2u8, 1, 2, 0, 1])?;
    /// let mut vals = DeviceVec::from_slice(&dev, &[10.0f64, 20.0, 30.0, 40.0, 50.0])?;
    /// keys.sort_pairs(&mut vals)?;
    /// assert_eq!(keys.to_vec()?, vec![0, 1, 1, 2, 2]);
    /// assert_eq!(vals.to_vec()?, vec![40.0, 20.0, 50.0, 10.0, 30.0]);
    /// let mut short = DeviceVec::from_slice(&dev, &[1u32])?;
    /// assert!(keys.sort_pairs(&mut short).is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sort_pairs<V: Element>(&mut self, values: &mut impl DeviceDataMut<V>) -> Result<()> {
        self.sort_pairs_with(values, SortOptions::new())
    }

    /// [`sort_pairs`](SortMutOps::sort_pairs), largest key first (stable).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let mut keys = DeviceVec::from_slice(&dev, &[1i32, 5, 1, 7])?;
    /// let mut vals = DeviceVec::from_slice(&dev, &[0u32, 1, 2, 3])?;
    /// keys.sort_pairs_descending(&mut vals)?;
    /// assert_eq!(keys.to_vec()?, vec![7, 5, 1, 1]);
    /// assert_eq!(vals.to_vec()?, vec![3, 1, 0, 2]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sort_pairs_descending<V: Element>(&mut self, values: &mut impl DeviceDataMut<V>) -> Result<()> {
        self.sort_pairs_with(values, SortOptions::new().descending())
    }

    /// [`sort_pairs`](SortMutOps::sort_pairs) as `opts` says. Fails with
    /// [`Error::LengthMismatch`] unless `values` has one value per key.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::sort::SortOptions;
    /// let dev = Device::default()?;
    /// let mut keys = DeviceVec::from_slice(&dev, &[0x31u32, 0x12, 0x21])?;
    /// let mut vals = DeviceVec::from_slice(&dev, &[b'a', b'b', b'c'])?;
    /// keys.sort_pairs_with(&mut vals, SortOptions::new().bits(4, 8))?;
    /// assert_eq!(vals.to_vec()?, b"bca".to_vec());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sort_pairs_with<V: Element>(&mut self, values: &mut impl DeviceDataMut<V>, opts: SortOptions) -> Result<()> {
        sort_pairs_on(self, values, opts, onesweep::sort::<K, V>)
    }

    /// Sorts in place, stably, by any [`Comparator`]: elements that
    /// are equivalent (neither is less) keep their input order. A merge
    /// sort (see [`merge`](crate::algo::merge)), except for the built-in
    /// [`Less`](crate::cmp::Less) and [`Greater`](crate::cmp::Greater):
    /// their orders are the radix sort's (`total_cmp` for floats, so
    /// `-0.0` before `+0.0` and NaNs by sign and payload), so on CUDA they
    /// take the stable radix sort ([`sort`](SortMutOps::sort),
    /// [`sort_descending`](SortMutOps::sort_descending)), whose result is
    /// the merge sort's bit for bit. The same order written as a user
    /// comparator takes the merge sort.
    ///
    /// On CUDA, each tile of a few thousand elements is sorted by one
    /// block, then passes merge pairs of sorted runs (of one tile, two
    /// tiles, ...), ping-ponging with device scratch of `n` elements.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// cuprim::comparator! {
    ///     /// Closer to 0.5 first.
    ///     pub struct NearHalf for f32 {
    ///         rust: |a, b| (a - 0.5).abs() < (b - 0.5).abs(),
    ///         cuda: "fabsf(a - 0.5f) < fabsf(b - 0.5f)",
    ///     }
    /// }
    /// let mut v = DeviceVec::from_slice(&Device::default()?, &[0.0f32, 0.75, 0.5, 0.25, 1.0])?;
    /// v.sort_by(NearHalf)?;
    /// // 0.75 and 0.25 tie, as do 0.0 and 1.0: they keep their order.
    /// assert_eq!(v.to_vec()?, vec![0.5, 0.75, 0.25, 0.0, 1.0]);
    /// v.sort_by(cuprim::cmp::Greater)?;
    /// assert_eq!(v.to_vec()?, vec![1.0, 0.75, 0.5, 0.25, 0.0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sort_by<C: Comparator<K>>(&mut self, cmp: C) -> Result<()> {
        crate::algo::merge::sort_by(self, &cmp)
    }

    /// [`sort_by`](SortMutOps::sort_by) with `values` (any element type,
    /// one per key) following their keys. Fails with
    /// [`Error::LengthMismatch`] unless the lengths agree and with
    /// [`Error::DeviceMismatch`] unless both live on one device; neither
    /// is changed then.
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
    /// let mut keys = DeviceVec::from_slice(&dev, &[21u32, 10, 31, 7, 40])?;
    /// let mut vals = DeviceVec::from_slice(&dev, &[b'a', b'b', b'c', b'd', b'e'])?;
    /// keys.sort_pairs_by(LastDigit, &mut vals)?;
    /// assert_eq!(keys.to_vec()?, vec![10, 40, 21, 31, 7]);
    /// assert_eq!(vals.to_vec()?, b"beacd".to_vec());
    /// let mut short = DeviceVec::from_slice(&dev, &[1u8])?;
    /// assert!(matches!(keys.sort_pairs_by(LastDigit, &mut short), Err(cuprim::Error::LengthMismatch { .. })));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sort_pairs_by<V: Element, C: Comparator<K>>(&mut self, cmp: C, values: &mut impl DeviceDataMut<V>) -> Result<()> {
        crate::algo::merge::sort_pairs_by(self, values, &cmp)
    }

    /// The seed's design (4-bit digits, three kernels per pass) for the
    /// comparison bench; same results as [`sort_with`](SortMutOps::sort_with).
    /// Only with the `classic-sort` feature.
    #[cfg(feature = "classic-sort")]
    #[doc(hidden)]
    fn sort_classic_with(&mut self, opts: SortOptions) -> Result<()> {
        sort_keys_on(self, opts, classic::sort::<K, K>)
    }

    /// `sort_classic_with` for pairs.
    #[cfg(feature = "classic-sort")]
    #[doc(hidden)]
    fn sort_pairs_classic_with<V: Element>(&mut self, values: &mut impl DeviceDataMut<V>, opts: SortOptions) -> Result<()> {
        sort_pairs_on(self, values, opts, classic::sort::<K, V>)
    }
}

impl<K: Element, D: DeviceDataMut<K> + ?Sized> SortMutOps<K> for D {}

/// The most keys sorted by one block in one launch (`pairs`: with values
/// of type `V`): the largest small-sort tile; larger inputs take the
/// onesweep sort. (`arch`: kept for the tests' calls; the small shapes do
/// not depend on it.) For tests.
#[doc(hidden)]
pub fn tile_len<K: Element, V: Element>(_arch: u32, pairs: bool) -> usize {
    let widest = if pairs {
        size_of::<K>().max(size_of::<V>())
    } else {
        size_of::<K>()
    };
    plan::small_shapes(widest, pairs).iter().map(|s| s.tile()).max().unwrap_or(0) as usize
}

/// A device sort of `n` keys (and values) in place: onesweep, or the
/// classic comparison path.
type Engine<K, V> = fn(&crate::device::CudaDevice, Ptr<K>, Option<Ptr<V>>, usize, &SortArgs) -> Result<()>;

/// `sort_with` on the host backend or through `engine`.
fn sort_keys_on<K: Element, D: DeviceDataMut<K> + ?Sized>(keys: &mut D, opts: SortOptions, engine: Engine<K, K>) -> Result<()> {
    let args = SortArgs::new::<K>(&opts)?;
    match keys.mem_mut() {
        MemMut::Host(k) => {
            host::sort_keys(k, args.begin, args.end, args.descending);
            Ok(())
        }
        MemMut::Cuda { dev, ptr, len, .. } => engine(dev, Ptr::from_raw(ptr), None, len, &args),
    }
}

/// `sort_pairs_with` on the host backend or through `engine`.
fn sort_pairs_on<K: Element, V: Element, D: DeviceDataMut<K> + ?Sized>(
    keys: &mut D,
    values: &mut impl DeviceDataMut<V>,
    opts: SortOptions,
    engine: Engine<K, V>,
) -> Result<()> {
    same_device("sort_pairs", keys.device(), values.device())?;
    same_len("sort_pairs", keys.len(), values.len())?;
    let args = SortArgs::new::<K>(&opts)?;
    match (keys.mem_mut(), values.mem_mut()) {
        (MemMut::Host(k), MemMut::Host(v)) => {
            host::sort_pairs(k, v, args.begin, args.end, args.descending);
            Ok(())
        }
        (MemMut::Cuda { dev, ptr, len, .. }, MemMut::Cuda { ptr: vptr, .. }) => {
            engine(dev, Ptr::from_raw(ptr), Some(Ptr::from_raw(vptr)), len, &args)
        }
        _ => Err(Error::DeviceMismatch { op: "sort_pairs" }),
    }
}

/// Sorts `n` pairs in place on the device by every bit of the keys
/// (stable): for other families' small final sorts.
pub(crate) fn sort_pairs_device<K: Element, V: Element>(
    dev: &crate::device::CudaDevice,
    keys: Ptr<K>,
    values: Ptr<V>,
    n: usize,
    descending: bool,
) -> Result<()> {
    let opts = if descending {
        SortOptions::new().descending()
    } else {
        SortOptions::new()
    };
    onesweep::sort::<K, V>(dev, keys, Some(values), n, &SortArgs::new::<K>(&opts)?)
}

/// Sorts `n` keys (and values) in place on the device as `opts` says
/// (stable): the segmented sort's path for its longest segments, and
/// `sort_by` / `sort_pairs_by` with the built-in `Less` or `Greater`.
pub(crate) fn sort_device_with<K: Element, V: Element>(
    dev: &crate::device::CudaDevice,
    keys: Ptr<K>,
    values: Option<Ptr<V>>,
    n: usize,
    opts: &SortOptions,
) -> Result<()> {
    onesweep::sort::<K, V>(dev, keys, values, n, &SortArgs::new::<K>(opts)?)
}

/// [`sort_device_with`] of the `n` keys (and values) an input expression
/// yields (its keys, or with `values` the zip of keys and values), sorted
/// into `keys` (`values`): the segmented sort's path for its longest
/// segments of an expression.
pub(crate) fn sort_device_from<K: Element, V: Element, X: Node>(
    dev: &crate::device::CudaDevice,
    input: &X,
    keys: Ptr<K>,
    values: Option<Ptr<V>>,
    n: usize,
    opts: &SortOptions,
) -> Result<()> {
    onesweep::sort_from::<K, V, X>(dev, Some(input), keys, values, n, &SortArgs::new::<K>(opts)?)
}

impl SortOptions {
    /// The checked bit range and order for keys `K`: `(begin_bit, end_bit,
    /// descending)`; fails as the sorts do on a bad range.
    pub(crate) fn resolve<K: Element>(&self) -> Result<(u32, u32, bool)> {
        let a = SortArgs::new::<K>(self)?;
        Ok((a.begin, a.end, a.descending))
    }
}

/// The keys an input expression yields, sorted into a new vector: on CUDA
/// the histogram pass reads the expression and writes the keys for the
/// first pass (see [`onesweep::sort_from`]).
pub(crate) fn sorted_of<KE: Node>(keys: &KE, opts: SortOptions) -> Result<DeviceVec<KE::Item>>
where
    KE::Item: Element,
{
    keys.validate()?;
    let args = SortArgs::new::<KE::Item>(&opts)?;
    let n = keys.length();
    let mut out = DeviceVec::<KE::Item>::alloc_uninit(keys.device_ref(), n)?;
    match (cuda_of(keys), out.mem_mut()) {
        (None, MemMut::Host(o)) => {
            o.copy_from_slice(&host_items(keys)?);
            host::sort_keys(o, args.begin, args.end, args.descending);
        }
        (Some(dev), MemMut::Cuda { ptr, .. }) => {
            onesweep::sort_from::<KE::Item, KE::Item, KE>(dev, Some(keys), Ptr::from_raw(ptr), None, n, &args)?
        }
        _ => return Err(Error::DeviceMismatch { op: "sorted" }),
    }
    Ok(out)
}

/// Keys and values from input expressions, sorted by key into two new
/// vectors (one histogram pass reads both expressions).
pub(crate) fn sorted_pairs_of<KE: Node, VE: Node>(
    keys: &KE,
    values: &VE,
    opts: SortOptions,
) -> Result<(DeviceVec<KE::Item>, DeviceVec<VE::Item>)>
where
    KE::Item: Element,
    VE::Item: Element,
{
    const OP: &str = "sorted_pairs";
    keys.validate()?;
    values.validate()?;
    same_device(OP, keys.device_ref(), values.device_ref())?;
    same_len(OP, keys.length(), values.length())?;
    let args = SortArgs::new::<KE::Item>(&opts)?;
    let (n, d) = (keys.length(), keys.device_ref());
    let mut ko = DeviceVec::<KE::Item>::alloc_uninit(d, n)?;
    let mut vo = DeviceVec::<VE::Item>::alloc_uninit(d, n)?;
    match (cuda_of(keys), ko.mem_mut(), vo.mem_mut()) {
        (None, MemMut::Host(k), MemMut::Host(v)) => {
            k.copy_from_slice(&host_items(keys)?);
            v.copy_from_slice(&host_items(values)?);
            host::sort_pairs(k, v, args.begin, args.end, args.descending);
        }
        (Some(dev), MemMut::Cuda { ptr: kp, .. }, MemMut::Cuda { ptr: vp, .. }) => {
            let both = crate::expr::zip(keys.clone(), values.clone());
            onesweep::sort_from(
                dev,
                Some(&both),
                Ptr::<KE::Item>::from_raw(kp),
                Some(Ptr::<VE::Item>::from_raw(vp)),
                n,
                &args,
            )?
        }
        _ => return Err(Error::DeviceMismatch { op: OP }),
    }
    Ok((ko, vo))
}
