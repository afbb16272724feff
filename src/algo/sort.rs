//! Radix sort: [`sort`](SortMutOps::sort), [`sort_descending`](SortMutOps::sort_descending),
//! [`sort_pairs`](SortMutOps::sort_pairs) (keys and values of any element type),
//! [`sort_pairs_descending`](SortMutOps::sort_pairs_descending), the same with
//! [`SortOptions`] (a bit range, descending), and [`argsort`](SortOps::argsort).
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
//! see `kernels/radix_sort.cu`): one pass reads the keys once to count every
//! digit of every pass, then each pass is one kernel in which a block counts
//! the digits of its tile of keys, publishes the counts at once, ranks the
//! keys, and finds where each digit's keys go with a decoupled look-back
//! over earlier tiles' counts. So a 32-bit key costs five reads and four
//! writes of the keys (and four reads and writes of the values). Inputs of
//! at most one tile (a few thousand keys) are sorted by a single block.
//!
//! The sort works in place on the caller's buffer, ping-ponging with
//! device scratch of `n` keys and `n` values, plus 1 KiB of look-back state
//! per tile per pass (0.1 to 0.33 bytes per key per pass); the device keeps
//! that scratch and reuses it across calls. With an odd number of passes
//! the result is copied back at the end. [`argsort`](SortOps::argsort)
//! also allocates a copy of the keys and the index vector it returns. The
//! host backend runs a stable sort by the same key bits.
//!
//! Tuning experiments: `CUPRIM_TUNE_SORT=BLOCKxITEMS` (tile shape, e.g.
//! `384x18`), `CUPRIM_TUNE_SORT_MATCH=1` (rank with `__match_any_sync`),
//! `CUPRIM_TUNE_SORT_MINB=N` (resident blocks per SM),
//! `CUPRIM_TUNE_SORT_LB=N` (look-back words read per round trip),
//! `CUPRIM_TUNE_SORT_WIDE=1` (64-bit output positions at any size),
//! `CUPRIM_TUNE_SORT_SHORTCUT=0|1` (skip passes in which every key has the
//! same digit, copy single-digit tiles straight through; on by default) and
//! `CUPRIM_TUNE_SORT_SHARE=0|1` (ranking counters apart from or shared with
//! the exchange buffer; shared by default for pairs).

use crate::algo::transform::TransformOps as _;
use crate::algo::{same_device, same_len};
use crate::device::{kernel_args, CudaDevice, FastKey};
use crate::element::{Element, IndexElement};
use crate::error::{DriverContext, Error, Result};
use crate::host;
use crate::jit::source::{RADIX_SORT, RADIX_SORT_CLASSIC};
use crate::jit::KernelSpec;
use crate::ops::Arith;
use crate::tuning::{self, SortPolicy};
use crate::vec::raw::MemMut;
use crate::vec::{DeviceData, DeviceDataMut, DeviceVec};
use std::mem::size_of;

/// Digit width of the onesweep sort.
const RADIX_BITS: u32 = 8;
/// Digits per pass.
const RADIX: u64 = 1 << RADIX_BITS;
/// Digit width of the classic comparison path.
const CLASSIC_BITS: u32 = 4;
/// A portion has fewer than 2^30 keys, so look-back counts fit 30 bits.
const PORTION_LIMIT: u64 = (1 << 30) - 1;

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

/// A validated bit range and order.
#[derive(Clone, Copy, Debug)]
struct Plan {
    begin: u32,
    end: u32,
    descending: bool,
    portion_tiles: Option<u32>,
    shortcut: Option<bool>,
}

impl Plan {
    fn new<K: Element>(opts: &SortOptions) -> Result<Plan> {
        let width = 8 * size_of::<K>() as u32;
        let end = opts.end_bit.unwrap_or(width);
        if opts.begin_bit >= end || end > width {
            return Err(Error::InvalidArgument(format!(
                "sort bit range {}..{end} must be non-empty and within the {width} bits of {}",
                opts.begin_bit,
                K::NAME
            )));
        }
        Ok(Plan {
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
        Plan::new::<K>(&opts)?;
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
        let plan = Plan::new::<K>(&opts)?;
        match self.mem_mut() {
            MemMut::Host(k) => {
                host::sort::sort_keys(k, plan.begin, plan.end, plan.descending);
                Ok(())
            }
            MemMut::Cuda { dev, ptr, len, .. } => onesweep::<K, K>(dev, ptr, None, len, &plan),
        }
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
        same_device("sort_pairs", self.device(), values.device())?;
        same_len("sort_pairs", self.len(), values.len())?;
        let plan = Plan::new::<K>(&opts)?;
        match (self.mem_mut(), values.mem_mut()) {
            (MemMut::Host(k), MemMut::Host(v)) => {
                host::sort::sort_pairs(k, v, plan.begin, plan.end, plan.descending);
                Ok(())
            }
            (MemMut::Cuda { dev, ptr, len, .. }, MemMut::Cuda { ptr: vptr, .. }) => onesweep::<K, V>(dev, ptr, Some(vptr), len, &plan),
            _ => Err(Error::DeviceMismatch { op: "sort_pairs" }),
        }
    }

    /// The seed's design (4-bit digits, three kernels per pass) for the
    /// comparison bench; same results as [`sort_with`](SortMutOps::sort_with).
    #[doc(hidden)]
    fn sort_classic_with(&mut self, opts: SortOptions) -> Result<()> {
        let plan = Plan::new::<K>(&opts)?;
        match self.mem_mut() {
            MemMut::Host(k) => {
                host::sort::sort_keys(k, plan.begin, plan.end, plan.descending);
                Ok(())
            }
            MemMut::Cuda { dev, ptr, len, .. } => classic::<K, K>(dev, ptr, None, len, &plan),
        }
    }

    /// [`sort_classic_with`](SortMutOps::sort_classic_with) for pairs.
    #[doc(hidden)]
    fn sort_pairs_classic_with<V: Element>(&mut self, values: &mut impl DeviceDataMut<V>, opts: SortOptions) -> Result<()> {
        same_device("sort_pairs", self.device(), values.device())?;
        same_len("sort_pairs", self.len(), values.len())?;
        let plan = Plan::new::<K>(&opts)?;
        match (self.mem_mut(), values.mem_mut()) {
            (MemMut::Host(k), MemMut::Host(v)) => {
                host::sort::sort_pairs(k, v, plan.begin, plan.end, plan.descending);
                Ok(())
            }
            (MemMut::Cuda { dev, ptr, len, .. }, MemMut::Cuda { ptr: vptr, .. }) => classic::<K, V>(dev, ptr, Some(vptr), len, &plan),
            _ => Err(Error::DeviceMismatch { op: "sort_pairs" }),
        }
    }
}

impl<K: Element, D: DeviceDataMut<K> + ?Sized> SortMutOps<K> for D {}

/// Keys per onesweep tile on `arch` (`pairs`: with values of type `V`): at
/// most this many keys are sorted by one block. For tests.
#[doc(hidden)]
pub fn tile_len<K: Element, V: Element>(arch: u32, pairs: bool) -> usize {
    policy::<K, V>(arch, pairs, None, false).tile() as usize
}

/// The tuning policy of a sort of keys `K` (with values `V` when `pairs`);
/// `shortcut` overrides the policy's choice of the shortcuts, `wide` asks
/// for 64-bit output positions (the tile may depend on both).
pub(crate) fn policy<K: Element, V: Element>(arch: u32, pairs: bool, shortcut: Option<bool>, wide: bool) -> SortPolicy {
    let float_keys = K::KIND == crate::element::Kind::Float;
    let value_bytes = if pairs { size_of::<V>() } else { 0 };
    tuning::radix_sort(arch, size_of::<K>(), float_keys, value_bytes, shortcut, wide)
}

fn classic_policy<K: Element, V: Element>(arch: u32, pairs: bool) -> SortPolicy {
    tuning::radix_sort_classic(arch, size_of::<K>(), if pairs { size_of::<V>() } else { 0 })
}

/// Constants and typedefs common to both sort templates.
fn specialise<K: Element, V: Element>(template: &'static crate::jit::Template, policy: &SortPolicy, pairs: bool) -> KernelSpec {
    let spec = KernelSpec::new(template)
        .constant("CUPRIM_BLOCK", policy.block as i64)
        .constant("CUPRIM_ITEMS", policy.items as i64)
        .constant("CUPRIM_MIN_BLOCKS", policy.min_blocks as i64)
        .constant("CUPRIM_MATCH_ANY", policy.match_any as i64)
        .constant("CUPRIM_LB_BATCH", policy.lookback_batch as i64)
        .constant("CUPRIM_LB_SLEEP_MAX", policy.lookback_sleep_max as i64)
        .constant("CUPRIM_HIST_BLOCK", policy.hist_block as i64)
        .constant("CUPRIM_HIST_UNROLL", policy.hist_unroll as i64)
        .constant("CUPRIM_PAIRS", pairs as i64)
        .elem::<K>("K");
    // Defined only when on (the kernel defaults it to 0), so the default
    // modules keep their specialisation, and their names in
    // `scripts/sass-diff`.
    let spec = if policy.share_counters {
        spec.constant("CUPRIM_SORT_SHARE", 1)
    } else {
        spec
    };
    if pairs {
        spec.elem::<V>("V")
    } else {
        spec.raw("typedef K V;")
    }
}

/// Which onesweep module a sort needs, beside its types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Variant {
    /// 64-bit output positions (more than 2^32 keys).
    pub wide: bool,
    /// The pass plan and single-digit tiles (`CUPRIM_SORT_SHORTCUT`).
    pub shortcut: bool,
}

impl Variant {
    /// Tells the variants apart in the in-memory module cache.
    fn module_name(&self) -> &'static str {
        match (self.wide, self.shortcut) {
            (false, false) => "radix_sort",
            (true, false) => "radix_sort_wide",
            (false, true) => "radix_sort_shortcut",
            (true, true) => "radix_sort_wide_shortcut",
        }
    }
}

/// The onesweep module (histogram, onesweep pass, one-block sort) for keys
/// `K` and, with `pairs`, values `V`, in the given variant.
pub(crate) fn sort_spec<K: Element, V: Element>(arch: u32, pairs: bool, variant: Variant) -> (KernelSpec, SortPolicy) {
    let policy = policy::<K, V>(arch, pairs, Some(variant.shortcut), variant.wide);
    let spec = specialise::<K, V>(&RADIX_SORT, &policy, pairs)
        .constant("CUPRIM_WIDE_OFFSETS", variant.wide as i64)
        .constant("CUPRIM_SORT_SHORTCUT", variant.shortcut as i64);
    (spec, policy)
}

/// Whether a sort of `n` keys needs 64-bit output positions (or
/// `CUPRIM_TUNE_SORT_WIDE=1` asks for them, to measure what they cost).
fn wide_offsets(n: u64) -> bool {
    static FORCED: once_cell::sync::Lazy<bool> =
        once_cell::sync::Lazy::new(|| std::env::var("CUPRIM_TUNE_SORT_WIDE").is_ok_and(|v| v == "1"));
    n > 1 << 32 || *FORCED
}

/// The classic (4-bit, three kernels per pass) module.
pub(crate) fn classic_spec<K: Element, V: Element>(arch: u32, pairs: bool) -> (KernelSpec, SortPolicy) {
    let policy = classic_policy::<K, V>(arch, pairs);
    (specialise::<K, V>(&RADIX_SORT_CLASSIC, &policy, pairs), policy)
}

fn fast_key<K: Element, V: Element>(template: &'static str, pairs: bool) -> FastKey {
    if pairs {
        FastKey::new::<K, V, ()>(template, String::new())
    } else {
        FastKey::new::<K, (), ()>(template, String::new())
    }
}

/// Scratch of one onesweep sort. The first `zero_bytes` are cleared by one
/// memset per sort: digit counts `[passes][256]` (u64, then exclusive
/// starts), the histogram's last-block ticket, a tile counter per (pass,
/// portion), the pass plan (a u32 per pass, written by the histogram when
/// the shortcuts are on), carries `[passes][portions + 1][256]` (u64: keys
/// of each digit in earlier portions), look-back words
/// `[passes][tiles][256]` (u32). Then the ping-pong buffers for keys and
/// values.
struct OnesweepLayout {
    tiles: u64,
    portion_tiles: u64,
    portions: u64,
    hist: u64,
    ticket: u64,
    counters: u64,
    plan: u64,
    carries: u64,
    lookback: u64,
    zero_bytes: u64,
    alt_keys: u64,
    alt_values: u64,
    bytes: u64,
}

impl OnesweepLayout {
    fn new(n: u64, key_bytes: u64, value_bytes: u64, passes: u64, tile: u64, portion_tiles: Option<u32>) -> OnesweepLayout {
        let tiles = n.div_ceil(tile);
        let most = (PORTION_LIMIT / tile).max(1);
        let portion_tiles = portion_tiles.map_or(most, |t| (t as u64).min(most));
        let portions = tiles.div_ceil(portion_tiles);
        let hist = 0;
        let ticket = hist + passes * RADIX * 8;
        let counters = ticket + 16;
        let plan = counters + passes * portions * 4;
        let carries = (plan + passes * 4).next_multiple_of(16);
        let lookback = carries + passes * (portions + 1) * RADIX * 8;
        let zero_bytes = lookback + passes * tiles * RADIX * 4;
        let alt_keys = zero_bytes.next_multiple_of(256);
        let alt_values = (alt_keys + n * key_bytes).next_multiple_of(256);
        let bytes = alt_values + n * value_bytes;
        OnesweepLayout {
            tiles,
            portion_tiles,
            portions,
            hist,
            ticket,
            counters,
            plan,
            carries,
            lookback,
            zero_bytes,
            alt_keys,
            alt_values,
            bytes,
        }
    }
}

/// Copies `bytes` from `src` to `dst` on the device's stream.
fn copy_back(dev: &CudaDevice, dst: u64, src: u64, bytes: u64) -> Result<()> {
    // SAFETY: callers pass two distinct device ranges of `bytes` bytes each
    // (the caller's buffer and the sort's scratch), alive for this call;
    // the copy is ordered on the stream after the kernels that wrote `src`.
    unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, bytes as usize, dev.stream.cu_stream()) }
        .during("copying sorted data back")
}

/// The onesweep sort of `n` keys at `keys` (and values at `values`), in place.
fn onesweep<K: Element, V: Element>(dev: &CudaDevice, keys: u64, values: Option<u64>, n: usize, plan: &Plan) -> Result<()> {
    if n <= 1 {
        return Ok(());
    }
    let pairs = values.is_some();
    let wide = wide_offsets(n as u64);
    let policy = policy::<K, V>(dev.arch, pairs, plan.shortcut, wide);
    let variant = Variant {
        wide,
        shortcut: policy.shortcut,
    };
    let module = dev.module_for(fast_key::<K, V>(variant.module_name(), pairs), || {
        sort_spec::<K, V>(dev.arch, pairs, variant).0
    })?;
    let vals = values.unwrap_or(0);
    let flip = plan.flip::<K>();
    let (begin, end) = (plan.begin, plan.end);
    let n64 = n as u64;

    if n64 <= policy.tile() {
        let n32 = n as u32;
        // SAFETY: cuprim_radix_block_sort(K* keys, V* vals, u32 n, u32
        // begin_bit, u32 end_bit, u64 flip): one block sorts the n <= tile
        // keys (and values, when CUPRIM_PAIRS; `vals` is not touched
        // otherwise) in place, reading all of them before writing any.
        return unsafe {
            dev.launch(
                module.function("cuprim_radix_block_sort")?,
                1,
                policy.block,
                0,
                &mut kernel_args![&keys, &vals, &n32, &begin, &end, &flip],
            )
        };
    }

    let passes = plan.passes(RADIX_BITS);
    let (key_bytes, value_bytes) = (size_of::<K>() as u64, if pairs { size_of::<V>() as u64 } else { 0 });
    let layout = OnesweepLayout::new(n64, key_bytes, value_bytes, passes as u64, policy.tile(), plan.portion_tiles);
    if layout.portion_tiles > u32::MAX as u64 || layout.tiles > u32::MAX as u64 {
        return Err(Error::InvalidArgument(format!("sort of {n} keys needs more than 2^32 tiles")));
    }
    let bytes = usize::try_from(layout.bytes).map_err(|_| Error::OutOfMemory { bytes: usize::MAX })?;
    let hist_vec = (16 / key_bytes).max(1);
    // At least four unrolled rounds per thread: fewer blocks, fewer global
    // atomics when each block flushes its counts.
    let hist_grid = n64
        .div_ceil(4 * hist_vec * policy.hist_unroll as u64 * policy.hist_block as u64)
        .clamp(1, (dev.sm_count.max(1) * policy.hist_blocks_per_sm) as u64) as u32;
    let histogram = module.function("cuprim_radix_histogram")?;
    let pass_fn = module.function("cuprim_radix_onesweep")?;
    dev.with_scratch(bytes, |base| {
        let stream = dev.stream.cu_stream();
        let (hist, ticket, pass_plan) = (base + layout.hist, base + layout.ticket, base + layout.plan);
        // SAFETY: clears the first zero_bytes (a multiple of 4) of scratch,
        // which has room for layout.bytes; then
        // cuprim_radix_histogram(const K* keys, u64 n, u32 begin_bit, u32
        // end_bit, u64 flip, u64* hist, u32* ticket, u32* plan) reads the n
        // keys and fills hist[passes][256] (zeroed) using the zeroed ticket,
        // and with the shortcuts plan[passes] (in scratch).
        unsafe {
            cudarc::driver::sys::cuMemsetD32Async(base, 0, (layout.zero_bytes / 4) as usize, stream)
                .result()
                .during("clearing sort state")?;
            dev.launch(
                histogram,
                hist_grid,
                policy.hist_block,
                0,
                &mut kernel_args![&keys, &n64, &begin, &end, &flip, &hist, &ticket, &pass_plan],
            )?;
        }
        let (mut src_k, mut dst_k) = (keys, base + layout.alt_keys);
        let (mut src_v, mut dst_v) = (vals, if pairs { base + layout.alt_values } else { 0 });
        let tile = policy.tile();
        for p in 0..passes as u64 {
            let (shift, mask) = plan.digit(p as u32, RADIX_BITS);
            let starts = hist + p * RADIX * 8;
            for j in 0..layout.portions {
                let first_tile = j * layout.portion_tiles;
                let tiles = layout.portion_tiles.min(layout.tiles - first_tile) as u32;
                let offset = first_tile * tile;
                let count = (n64 - offset).min(layout.portion_tiles * tile);
                let (in_k, in_v) = (src_k + offset * key_bytes, if pairs { src_v + offset * value_bytes } else { 0 });
                let carry_in = base + layout.carries + (p * (layout.portions + 1) + j) * RADIX * 8;
                let carry_out = carry_in + RADIX * 8;
                let lookback = base + layout.lookback + (p * layout.tiles + first_tile) * RADIX * 4;
                let counter = base + layout.counters + (p * layout.portions + j) * 4;
                let plan_word = pass_plan + p * 4;
                // SAFETY: cuprim_radix_onesweep(const K* keys_in, K* keys_out,
                // const V* vals_in, V* vals_out, u64 n, u32 shift, u32 mask,
                // u64 flip, const u64* digit_starts, const u64* carry_in, u64*
                // carry_out, u32* lookback, u32* tile_counter, u32 num_tiles,
                // const u32* plan): `count` keys (values) from in_k (in_v) go
                // to positions below n of dst_k (dst_v), which do not overlap
                // the source; digit starts, carries, the zeroed look-back words
                // (`tiles` x 256), the zeroed counter and the plan word all lie
                // in scratch; one block per tile.
                unsafe {
                    dev.launch(
                        pass_fn,
                        tiles,
                        policy.block,
                        0,
                        &mut kernel_args![
                            &in_k, &dst_k, &in_v, &dst_v, &count, &shift, &mask, &flip, &starts, &carry_in, &carry_out, &lookback,
                            &counter, &tiles, &plan_word
                        ],
                    )?;
                }
            }
            std::mem::swap(&mut src_k, &mut dst_k);
            std::mem::swap(&mut src_v, &mut dst_v);
        }
        if passes % 2 == 1 {
            copy_back(dev, keys, src_k, n64 * key_bytes)?;
            if pairs {
                copy_back(dev, vals, src_v, n64 * value_bytes)?;
            }
        }
        Ok(())
    })
}

/// The classic sort: per 4-bit digit, count per block, scan, scatter.
fn classic<K: Element, V: Element>(dev: &CudaDevice, keys: u64, values: Option<u64>, n: usize, plan: &Plan) -> Result<()> {
    if n <= 1 {
        return Ok(());
    }
    let n64 = n as u64;
    if n64 >= 1 << 32 {
        return Err(Error::Unsupported("the classic radix sort takes fewer than 2^32 keys".into()));
    }
    let pairs = values.is_some();
    let module = dev.module_for(fast_key::<K, V>("radix_sort_classic", pairs), || {
        classic_spec::<K, V>(dev.arch, pairs).0
    })?;
    let policy = classic_policy::<K, V>(dev.arch, pairs);
    let vals = values.unwrap_or(0);
    let flip = plan.flip::<K>();
    let tiles = n64.div_ceil(policy.tile());
    let tiles_per_block = tiles.div_ceil((dev.sm_count.max(1) * 2) as u64) as u32;
    let grid = tiles.div_ceil(tiles_per_block as u64) as u32;
    let (key_bytes, value_bytes) = (size_of::<K>() as u64, if pairs { size_of::<V>() as u64 } else { 0 });
    let counts_len = (1u32 << CLASSIC_BITS) * grid;
    let alt_keys = (counts_len as u64 * 4).next_multiple_of(256);
    let alt_values = (alt_keys + n64 * key_bytes).next_multiple_of(256);
    let bytes = (alt_values + n64 * value_bytes) as usize;
    let (up, scan, down) = (
        module.function("cuprim_radix_classic_upsweep")?,
        module.function("cuprim_radix_classic_scan")?,
        module.function("cuprim_radix_classic_downsweep")?,
    );
    dev.with_scratch(bytes, |base| {
        let counts = base;
        let (mut src_k, mut dst_k) = (keys, base + alt_keys);
        let (mut src_v, mut dst_v) = (vals, if pairs { base + alt_values } else { 0 });
        let passes = plan.passes(CLASSIC_BITS);
        for p in 0..passes {
            let (shift, mask) = plan.digit(p, CLASSIC_BITS);
            // SAFETY: cuprim_radix_classic_upsweep(const K* keys, u64 n, u32
            // shift, u32 mask, u64 flip, u32 tiles_per_block, u32* counts)
            // writes 16 x grid counts; cuprim_radix_classic_scan(u32* counts,
            // u32 total) scans them in place (one block of 1024);
            // cuprim_radix_classic_downsweep(const K* keys_in, K* keys_out,
            // const V* vals_in, V* vals_out, u64 n, u32 shift, u32 mask, u64
            // flip, u32 tiles_per_block, const u32* offsets) moves n keys
            // (values) between the caller's buffer and scratch, which do not
            // overlap.
            unsafe {
                dev.launch(
                    up,
                    grid,
                    policy.block,
                    0,
                    &mut kernel_args![&src_k, &n64, &shift, &mask, &flip, &tiles_per_block, &counts],
                )?;
                dev.launch(scan, 1, 1024, 0, &mut kernel_args![&counts, &counts_len])?;
                dev.launch(
                    down,
                    grid,
                    policy.block,
                    0,
                    &mut kernel_args![
                        &src_k,
                        &dst_k,
                        &src_v,
                        &dst_v,
                        &n64,
                        &shift,
                        &mask,
                        &flip,
                        &tiles_per_block,
                        &counts
                    ],
                )?;
            }
            std::mem::swap(&mut src_k, &mut dst_k);
            std::mem::swap(&mut src_v, &mut dst_v);
        }
        if passes % 2 == 1 {
            copy_back(dev, keys, src_k, n64 * key_bytes)?;
            if pairs {
                copy_back(dev, vals, src_v, n64 * value_bytes)?;
            }
        }
        Ok(())
    })
}
