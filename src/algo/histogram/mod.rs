//! Histograms: `histogram(Bins::even(..))`, `histogram(Bins::edges(..))`,
//! `bincount`, with `u32` or `u64` counts, fresh or accumulated.
//!
//! # Bins
//! - [`Bins::even`]`(num_bins, lo, hi)`: half-open bins of equal width
//!   `w = (hi - lo) / num_bins`; bin `i` is `[lo + i*w, lo + (i+1)*w)`.
//!   - Integers: exact. A sample `x` with `lo <= x < hi` goes to
//!     `floor((x - lo) * num_bins / (hi - lo))`, computed without rounding
//!     (128-bit products for 64-bit types).
//!   - Floats: `(x - lo) * scale` truncated toward zero and clamped to the
//!     last bin, where `scale = num_bins / (hi - lo)` is rounded once to
//!     `f32` (`f64` for `f64` samples; `f16` and `bf16` samples compute in
//!     `f32`). Near a boundary this can differ from the real-number rule by
//!     one bin, exactly as NumPy's and CUB's even bins do; the host backend
//!     and the GPU compute the same expression and agree bit for bit.
//! - [`Bins::edges`]`(&edges)`: bin `i` is `[edges[i], edges[i+1])` (the last
//!   bin is half-open too). Edges must be sorted ascending (equal
//!   neighbours make an empty bin) and not NaN.
//! - [`bincount`](HistogramOps::bincount)`(num_bins)` on integers: bin `x`
//!   for `0 <= x < num_bins`.
//!
//! # Dropped samples
//! Samples outside every bin, and NaN, are not counted in any bin; their
//! number is kept in [`Histogram::dropped`]. `-0.0` equals `+0.0`.
//!
//! # Counts
//! [`Histogram<u32>`] (the default) or [`Histogram<u64>`]. A `u32` histogram
//! refuses an input of more than `u32::MAX` samples (use
//! [`histogram_u64`](HistogramOps::histogram_u64)); accumulated over many
//! calls, `u32` counts wrap. Counting uses integer atomics only, so the
//! result never depends on timing.
//!
//! # On the GPU
//! One pass: every thread reads 16-byte vectors, maps samples to bins and
//! adds runs of equal bins at once (so one-bin input costs fewer atomics,
//! not more); up to 16384 bins are counted in block-private shared memory
//! (one copy per warp when they fit), up to 65536 in windows of at most
//! 16384 bins, one pass over the input each, and more with global atomics.

mod bins;
mod host;
mod plan;

pub(crate) use plan::histogram_specs;

use crate::device::Ptr;
use crate::element::{Element, IntElement};
use crate::error::{Error, Result};
use crate::expr::node::Node;
use crate::expr::LazyOps;
use crate::vec::raw::{MemMut, SealedMut};
use crate::vec::{DeviceData, DeviceVec};
use crate::Device;
use bins::{BinRule, BinsCache, BinsKind};
use std::sync::Arc;

/// The most bins a histogram may have.
pub const MAX_BINS: usize = 1 << 24;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// A count type: `u32` or `u64`. Sealed.
pub trait Count: Element + sealed::Sealed {
    /// `self + n`, wrapping at the type's width.
    fn add_wrapping(self, n: u64) -> Self;
}
impl Count for u32 {
    fn add_wrapping(self, n: u64) -> Self {
        self.wrapping_add(n as u32)
    }
}
impl Count for u64 {
    fn add_wrapping(self, n: u64) -> Self {
        self.wrapping_add(n)
    }
}

/// How samples map to bins. See the [module docs](self).
///
/// ```
/// use cuprim::algo::histogram::Bins;
/// assert_eq!(Bins::even(10, 0.0f32, 1.0).len(), 10);
/// assert_eq!(Bins::edges(&[0u32, 10, 100, 1000]).len(), 3);
/// ```
#[derive(Clone, Debug)]
pub struct Bins<T: Element> {
    kind: BinsKind<T>,
    /// The checked rule and the device copy of explicit edges, kept from
    /// the first call for later ones (shared by clones).
    cache: Arc<BinsCache<T>>,
}

impl<T: Element> PartialEq for Bins<T> {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
    }
}

impl<T: Element> Bins<T> {
    /// `num_bins` half-open bins of equal width over `[lo, hi)`. Checked
    /// when used: `1 <= num_bins <= MAX_BINS`, `lo < hi`, both finite.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::histogram::Bins;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[0u32, 1, 2, 3, 4, 5, 9, 10])?;
    /// let h = v.histogram(Bins::even(5, 0, 10))?;     // [0,2) [2,4) [4,6) [6,8) [8,10)
    /// assert_eq!(h.to_vec()?, vec![2, 2, 2, 0, 1]);
    /// assert_eq!(h.dropped()?, 1);                     // 10 is outside [0, 10)
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn even(num_bins: usize, lo: T, hi: T) -> Self {
        Bins {
            kind: BinsKind::Even { num_bins, lo, hi },
            cache: Arc::default(),
        }
    }

    /// Bins between consecutive `edges`: bin `i` is `[edges[i], edges[i+1])`.
    /// Checked when used: at least 2 edges, sorted ascending, no NaN.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::histogram::Bins;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[0.5f32, 1.0, 7.0, 99.0, f32::NAN])?;
    /// let h = v.histogram(Bins::edges(&[0.0, 1.0, 10.0, 100.0]))?;
    /// assert_eq!(h.to_vec()?, vec![1, 2, 1]);
    /// assert_eq!(h.dropped()?, 1);                     // the NaN
    /// assert!(v.histogram(Bins::edges(&[1.0, 0.0])).is_err()); // unsorted
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn edges(edges: &[T]) -> Self {
        Bins {
            kind: BinsKind::Edges(edges.to_vec()),
            cache: Arc::default(),
        }
    }

    /// The number of bins (0 for fewer than two edges).
    pub fn len(&self) -> usize {
        match &self.kind {
            BinsKind::Even { num_bins, .. } => *num_bins,
            BinsKind::Edges(e) => e.len().saturating_sub(1),
            BinsKind::Integers(n) => *n,
        }
    }

    /// True when there are no bins (an error when used).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T: Element> AsRef<Bins<T>> for Bins<T> {
    fn as_ref(&self) -> &Bins<T> {
        self
    }
}

/// Counts per bin on a device, and the number of samples dropped.
///
/// ```
/// # use cuprim::prelude::*;
/// use cuprim::algo::histogram::{Bins, Histogram};
/// let dev = Device::default()?;
/// let bins = Bins::even(4, 0i32, 8);
/// let mut h = Histogram::<u64>::zeros(&dev, bins.len())?;
/// for batch in [[1i32, 2, 3], [5, 7, 9]] {
///     DeviceVec::from_slice(&dev, &batch)?.histogram_into(&bins, &mut h)?;
/// }
/// assert_eq!(h.to_vec()?, vec![1, 2, 1, 1]);
/// assert_eq!(h.dropped()?, 1);
/// # Ok::<(), cuprim::Error>(())
/// ```
#[derive(Debug)]
pub struct Histogram<C: Count = u32> {
    counts: DeviceVec<C>,
    dropped: DeviceVec<u64>,
}

impl<C: Count> Histogram<C> {
    /// `num_bins` zero counts and no dropped samples, to accumulate into
    /// with [`histogram_into`](HistogramOps::histogram_into).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::histogram::Histogram;
    /// let h = Histogram::<u32>::zeros(&Device::default()?, 3)?;
    /// assert_eq!(h.to_vec()?, vec![0, 0, 0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn zeros(device: &Device, num_bins: usize) -> Result<Self> {
        Ok(Histogram {
            counts: DeviceVec::zeros(device, num_bins)?,
            dropped: DeviceVec::zeros(device, 1)?,
        })
    }

    /// The counts, one per bin, on the device.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1u8, 1, 3])?;
    /// let h = v.bincount(4)?;
    /// assert_eq!(h.counts().len(), 4);
    /// assert_eq!(h.counts().reduce(Add)?, 3);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn counts(&self) -> &DeviceVec<C> {
        &self.counts
    }

    /// The counts, giving up the dropped count.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[2u32, 0, 2])?;
    /// let counts: DeviceVec<u32> = v.bincount(3)?.into_counts();
    /// assert_eq!(counts.to_vec()?, vec![1, 0, 2]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn into_counts(self) -> DeviceVec<C> {
        self.counts
    }

    /// The number of bins.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::histogram::Bins;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[0.5f64])?;
    /// assert_eq!(v.histogram(Bins::even(7, 0.0, 1.0))?.num_bins(), 7);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn num_bins(&self) -> usize {
        self.counts.len()
    }

    /// The counts, copied to the host.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[0i64, 1, 1, -1, 5])?;
    /// assert_eq!(v.bincount(2)?.to_vec()?, vec![1, 2]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn to_vec(&self) -> Result<Vec<C>> {
        self.counts.to_vec()
    }

    /// How many samples fell outside every bin or were NaN (waits for the
    /// device).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[0i64, 1, 1, -1, 5])?;
    /// assert_eq!(v.bincount(2)?.dropped()?, 2);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    pub fn dropped(&self) -> Result<u64> {
        Ok(self.dropped.to_vec()?[0])
    }

    /// The counts and the dropped count, for the sharded histogram's
    /// all-reduce.
    pub(crate) fn parts_mut(&mut self) -> (&mut DeviceVec<C>, &mut DeviceVec<u64>) {
        (&mut self.counts, &mut self.dropped)
    }
}

/// Histograms. In [`prelude`](crate::prelude).
pub trait HistogramOps<T: Element>: DeviceData<T> {
    /// Counts the samples in each bin, as `u32`. See the [module docs](self)
    /// for the bin rules. Fails for more than `u32::MAX` samples (use
    /// [`histogram_u64`](HistogramOps::histogram_u64)) and for invalid bins.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::histogram::Bins;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[0.1f32, 0.2, 0.7, -0.0, 1.0])?;
    /// let h = v.histogram(Bins::even(2, 0.0, 1.0))?;
    /// assert_eq!(h.to_vec()?, vec![3, 1]);              // -0.0 counts as 0.0
    /// assert_eq!(h.dropped()?, 1);                      // 1.0 is outside [0, 1)
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn histogram(&self, bins: impl AsRef<Bins<T>>) -> Result<Histogram<u32>> {
        if self.len() as u64 > u32::MAX as u64 {
            return Err(Error::InvalidArgument(format!(
                "histogram: {} samples could overflow u32 counts; use histogram_u64",
                self.len()
            )));
        }
        fresh(self, bins.as_ref())
    }

    /// Like [`histogram`](HistogramOps::histogram), with `u64` counts.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::histogram::Bins;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[-3i8, 3, 100])?;
    /// let h = v.histogram_u64(Bins::even(2, -4, 4))?;
    /// assert_eq!(h.to_vec()?, vec![1u64, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn histogram_u64(&self, bins: impl AsRef<Bins<T>>) -> Result<Histogram<u64>> {
        fresh(self, bins.as_ref())
    }

    /// Adds this input's counts (and dropped samples) to `hist`, which
    /// must have as many bins as `bins`. Nothing waits for the device.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::histogram::Bins;
    /// let dev = Device::default()?;
    /// let bins = Bins::even(2, 0.0f64, 2.0);
    /// let mut h = DeviceVec::from_slice(&dev, &[0.5f64])?.histogram(&bins)?;
    /// DeviceVec::from_slice(&dev, &[1.5f64, 1.75])?.histogram_into(&bins, &mut h)?;
    /// assert_eq!(h.to_vec()?, vec![1, 2]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn histogram_into<C: Count>(&self, bins: impl AsRef<Bins<T>>, hist: &mut Histogram<C>) -> Result<()> {
        let bins = bins.as_ref();
        accumulate(&self.lazy(), bins, bins.rule()?, hist, false)
    }

    /// Counts each value `0 <= x < num_bins` (integers only); other values
    /// are dropped.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[3i32, 0, 3, -2, 7])?;
    /// let h = v.bincount(4)?;
    /// assert_eq!(h.to_vec()?, vec![1, 0, 0, 2]);
    /// assert_eq!(h.dropped()?, 2);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn bincount(&self, num_bins: usize) -> Result<Histogram<u32>>
    where
        T: IntElement,
    {
        self.histogram(Bins {
            kind: BinsKind::Integers(num_bins),
            cache: Arc::default(),
        })
    }
}

impl<T: Element, D: DeviceData<T> + ?Sized> HistogramOps<T> for D {}

fn fresh<T: Element, C: Count, D: DeviceData<T> + ?Sized>(src: &D, bins: &Bins<T>) -> Result<Histogram<C>> {
    fresh_of(&src.lazy(), bins)
}

/// A new histogram of an input expression's samples.
pub(crate) fn fresh_of<E: Node<Item = T>, T: Element, C: Count>(src: &E, bins: &Bins<T>) -> Result<Histogram<C>> {
    let rule = bins.rule()?;
    src.validate()?;
    let dev = src.device_ref();
    if src.length() == 0 || !dev.is_cuda() {
        let mut hist = Histogram::zeros(dev, rule.nb as usize)?;
        accumulate(src, bins, rule, &mut hist, false)?;
        return Ok(hist);
    }
    // The kernel writes every count (and zeroes first when it cannot).
    let mut hist = Histogram {
        counts: DeviceVec::alloc_uninit(dev, rule.nb as usize)?,
        dropped: DeviceVec::alloc_uninit(dev, 1)?,
    };
    accumulate(src, bins, rule, &mut hist, true)?;
    Ok(hist)
}

/// Adds `src`'s counts by `rule` (the checked rule of `bins`) to `hist`;
/// `fresh`: `hist` is a new, uninitialised histogram on a GPU and `src` is
/// not empty, so the counts are written instead.
fn accumulate<E: Node<Item = T>, T: Element, C: Count>(
    src: &E,
    bins: &Bins<T>,
    rule: &BinRule<T>,
    hist: &mut Histogram<C>,
    fresh: bool,
) -> Result<()> {
    src.validate()?;
    crate::algo::same_device("histogram_into", src.device_ref(), hist.counts.device())?;
    crate::algo::same_len("histogram_into (bins vs counts)", rule.nb as usize, hist.counts.len())?;
    if src.length() == 0 {
        return Ok(());
    }
    let Histogram { counts, dropped } = hist;
    match (src.device_ref().cuda_ref(), counts.mem_mut(), dropped.mem_mut()) {
        (None, MemMut::Host(c), MemMut::Host(d)) => {
            let s = crate::expr::host_items(src)?;
            let tally = host::count(&s, rule.nb as usize, |x| rule.bin(x));
            for (slot, n) in c.iter_mut().zip(&tally) {
                *slot = slot.add_wrapping(*n);
            }
            d[0] = d[0].wrapping_add(tally[rule.nb as usize]);
            Ok(())
        }
        (Some(dev), MemMut::Cuda { ptr: counts_ptr, .. }, MemMut::Cuda { ptr: dropped_ptr, .. }) => {
            // Explicit edges: on the device since the first call with these
            // bins, held here until the launches are queued.
            let table = bins.table_on(rule, src.device_ref())?;
            let io = plan::Io::<E, C> {
                input: src,
                table: table.as_ref(),
                counts: Ptr::from_raw(counts_ptr),
                dropped: Ptr::from_raw(dropped_ptr),
                fresh,
            };
            plan::count(dev, rule, &io)
        }
        _ => Err(Error::DeviceMismatch { op: "histogram_into" }),
    }
}
