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

use crate::device::{kernel_args, CudaDevice, FastKey};
use crate::element::{Element, IntElement, Kind, Scalar};
use crate::error::{Error, Result};
use crate::host;
use crate::jit::source::HISTOGRAM;
use crate::jit::KernelSpec;
use crate::tuning;
use crate::vec::raw::{Mem, MemMut, Sealed, SealedMut};
use crate::vec::{DeviceData, DeviceVec};
use crate::Device;
use std::sync::{Arc, Mutex};

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
    /// Explicit edges (and their cell table) on the device, uploaded at the
    /// first GPU call and kept: later calls with these bins copy nothing.
    uploaded: Arc<Uploaded>,
}

impl<T: Element> PartialEq for Bins<T> {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
    }
}

/// A device copy of a `Bins`' edge table, for one device at a time.
#[derive(Default)]
struct Uploaded(Mutex<Option<(Device, Arc<DeviceVec<u8>>)>>);

impl std::fmt::Debug for Uploaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Uploaded")
    }
}

#[derive(Clone, Debug, PartialEq)]
enum BinsKind<T> {
    Even { num_bins: usize, lo: T, hi: T },
    Edges(Vec<T>),
    Integers(usize),
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
            uploaded: Arc::default(),
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
            uploaded: Arc::default(),
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
        let rule = BinRule::new(bins.as_ref())?;
        accumulate(self, &rule, hist)
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
            uploaded: Arc::default(),
        })
    }
}

impl<T: Element, D: DeviceData<T> + ?Sized> HistogramOps<T> for D {}

fn fresh<T: Element, C: Count, D: DeviceData<T> + ?Sized>(src: &D, bins: &Bins<T>) -> Result<Histogram<C>> {
    let rule = BinRule::new(bins)?;
    let mut hist = Histogram::zeros(src.device(), rule.nb as usize)?;
    accumulate(src, &rule, &mut hist)?;
    Ok(hist)
}

/// The kernel's `CUPRIM_HIST_MODE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    EvenFloat = 0,
    EvenInt = 1,
    Edges = 2,
    Integers = 3,
}

/// Validated bins: everything the kernel and the host need to bin a sample.
#[derive(Clone, Debug)]
pub(crate) struct BinRule<T> {
    mode: Mode,
    nb: u32,
    lo: T,
    hi: T,
    /// Mode 0: `nb / (hi - lo)` in the sample's arithmetic type (stored as
    /// f64; exactly an f32 value when that type is f32). Mode 1: the same
    /// quotient as an estimate only.
    scale: f64,
    /// Mode 1: `hi - lo`, exact.
    range: u64,
    edges: Vec<T>,
    /// Mode 2, float samples with finite outer edges: `lut[c]` is the bin
    /// holding the start of cell `c` of `lut.len()` equal cells over
    /// `[edges[0], edges[last])`; the kernel searches only the bins of a
    /// sample's cell and its neighbours. Empty: search all bins.
    lut: Vec<u32>,
    /// `lut.len() / (edges[last] - edges[0])` in the kernel's `F`.
    lut_scale: f64,
    /// The `Bins`' device copy of `edges` and `lut`.
    uploaded: Arc<Uploaded>,
}

/// An integer sample as i128 (`None` for floats).
fn int_of(s: Scalar) -> Option<i128> {
    Some(match s {
        Scalar::U8(x) => x as i128,
        Scalar::I8(x) => x as i128,
        Scalar::U32(x) => x as i128,
        Scalar::I32(x) => x as i128,
        Scalar::U64(x) => x as i128,
        Scalar::I64(x) => x as i128,
        _ => return None,
    })
}

/// True when float samples of `T` compute in f64 (only `f64` itself).
fn wide_float<T: Element>() -> bool {
    T::KIND == Kind::Float && std::mem::size_of::<T>() == 8
}

impl<T: Element> BinRule<T> {
    fn new(bins: &Bins<T>) -> Result<Self> {
        let nb = bins.len();
        if nb == 0 || nb > MAX_BINS {
            let what = match &bins.kind {
                BinsKind::Edges(e) => format!("{} edges make {nb} bins", e.len()),
                _ => format!("{nb} bins"),
            };
            return Err(Error::InvalidArgument(format!(
                "histogram: {what}; between 1 and {MAX_BINS} bins are supported"
            )));
        }
        let mut rule = BinRule {
            mode: Mode::Integers,
            nb: nb as u32,
            lo: T::zero(),
            hi: T::zero(),
            scale: 0.0,
            range: 0,
            edges: Vec::new(),
            lut: Vec::new(),
            lut_scale: 0.0,
            uploaded: bins.uploaded.clone(),
        };
        match &bins.kind {
            BinsKind::Integers(_) => {}
            BinsKind::Even { lo, hi, .. } => {
                rule.lo = *lo;
                rule.hi = *hi;
                if T::KIND == Kind::Float {
                    let (l, h) = (lo.to_f64(), hi.to_f64());
                    if !(l.is_finite() && h.is_finite() && l < h) {
                        return Err(Error::InvalidArgument(format!(
                            "histogram: even bins need finite lo < hi, got lo = {lo:?}, hi = {hi:?}"
                        )));
                    }
                    rule.mode = Mode::EvenFloat;
                    rule.scale = if wide_float::<T>() {
                        nb as f64 / (h - l)
                    } else {
                        let width = h as f32 - l as f32;
                        (nb as f64 / width as f64) as f32 as f64
                    };
                    let width_ok = if wide_float::<T>() {
                        (h - l).is_finite()
                    } else {
                        (h as f32 - l as f32).is_finite()
                    };
                    if !width_ok || !rule.scale.is_finite() || rule.scale <= 0.0 {
                        return Err(Error::InvalidArgument(format!(
                            "histogram: the range [{lo:?}, {hi:?}) is too wide or too narrow for {nb} even bins"
                        )));
                    }
                } else {
                    let (l, h) = (int_of(lo.to_scalar()).unwrap_or(0), int_of(hi.to_scalar()).unwrap_or(0));
                    if l >= h {
                        return Err(Error::InvalidArgument(format!(
                            "histogram: even bins need lo < hi, got lo = {lo:?}, hi = {hi:?}"
                        )));
                    }
                    rule.mode = Mode::EvenInt;
                    rule.range = (h - l) as u64;
                    rule.scale = nb as f64 / rule.range as f64;
                }
            }
            BinsKind::Edges(edges) => {
                if let Some(i) = edges.iter().position(|e| e.is_nan()) {
                    return Err(Error::InvalidArgument(format!("histogram: edge {i} is NaN")));
                }
                if let Some(i) = edges.windows(2).position(|w| w[1] < w[0]) {
                    return Err(Error::InvalidArgument(format!(
                        "histogram: edges must be sorted ascending, but edges[{i}] = {:?} > edges[{}] = {:?}",
                        edges[i],
                        i + 1,
                        edges[i + 1]
                    )));
                }
                rule.mode = Mode::Edges;
                rule.edges = edges.clone();
                rule.cell_table();
            }
        }
        Ok(rule)
    }

    /// Builds the cell table of float edges (see `lut`): four cells per
    /// bin, 64 to 4096 of them. None when an outer edge is infinite or the
    /// span does not fit the kernel's float type.
    fn cell_table(&mut self) {
        let (first, last) = (self.edges[0].to_f64(), self.edges[self.edges.len() - 1].to_f64());
        if T::KIND != Kind::Float || !(first.is_finite() && last.is_finite() && first < last) {
            return;
        }
        let cells = (4 * self.nb as usize).clamp(64, 4096);
        let scale = if wide_float::<T>() {
            cells as f64 / (last - first)
        } else {
            let span = last as f32 - first as f32;
            (cells as f32 / span) as f64
        };
        let span_ok = if wide_float::<T>() {
            (last - first).is_finite()
        } else {
            (last as f32 - first as f32).is_finite()
        };
        if !span_ok || !scale.is_finite() || scale <= 0.0 {
            return;
        }
        let width = (last - first) / cells as f64;
        let edges: Vec<f64> = self.edges.iter().map(|e| e.to_f64()).collect();
        self.lut = (0..cells)
            .map(|c| {
                let start = first + c as f64 * width;
                (edges.partition_point(|&e| e <= start).max(1) - 1).min(self.nb as usize - 1) as u32
            })
            .collect();
        self.lut_scale = scale;
    }

    /// Byte offset of the cell table in the device copy (after the edges).
    fn lut_offset(&self) -> usize {
        (self.edges.len() * std::mem::size_of::<T>()).next_multiple_of(16)
    }

    /// The edges, then the cell table at `lut_offset`, on `device`: copied
    /// there at the first call and kept with the `Bins` for later ones.
    fn table_on(&self, device: &Device) -> Result<Arc<DeviceVec<u8>>> {
        let mut slot = self.uploaded.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((d, table)) = slot.as_ref() {
            if d.same(device) {
                return Ok(table.clone());
            }
        }
        let mut bytes = bytemuck::cast_slice::<T, u8>(&self.edges).to_vec();
        bytes.resize(self.lut_offset(), 0);
        bytes.extend_from_slice(bytemuck::cast_slice(&self.lut));
        let table = Arc::new(DeviceVec::from_slice(device, &bytes)?);
        *slot = Some((device.clone(), table.clone()));
        Ok(table)
    }

    /// The bin of `x`, or `nb` when it is dropped: the kernel's `hist_bin`.
    pub(crate) fn bin(&self, x: T) -> u32 {
        let nb = self.nb;
        match self.mode {
            Mode::EvenFloat => {
                let b = if wide_float::<T>() {
                    let (x, lo, hi) = (x.to_f64(), self.lo.to_f64(), self.hi.to_f64());
                    if !(x >= lo && x < hi) {
                        return nb;
                    }
                    ((x - lo) * self.scale) as u32
                } else {
                    // f32, f16 and bf16 convert to f32 exactly.
                    let (x, lo, hi) = (x.to_f64() as f32, self.lo.to_f64() as f32, self.hi.to_f64() as f32);
                    if !(x >= lo && x < hi) {
                        return nb;
                    }
                    ((x - lo) * self.scale as f32) as u32
                };
                b.min(nb - 1)
            }
            Mode::EvenInt => {
                let (x, lo, hi) = (self.int(x), self.int(self.lo), self.int(self.hi));
                if !(x >= lo && x < hi) {
                    return nb;
                }
                ((x - lo) as u128 * nb as u128 / self.range as u128) as u32
            }
            Mode::Edges => {
                let (first, last) = (self.edges[0], self.edges[self.edges.len() - 1]);
                if T::KIND == Kind::Float {
                    let v = x.to_f64();
                    if !(v >= first.to_f64() && v < last.to_f64()) {
                        return nb;
                    }
                    (self.edges.partition_point(|e| e.to_f64() <= v) - 1) as u32
                } else {
                    let v = self.int(x);
                    if !(v >= self.int(first) && v < self.int(last)) {
                        return nb;
                    }
                    (self.edges.partition_point(|&e| self.int(e) <= v) - 1) as u32
                }
            }
            Mode::Integers => {
                let v = self.int(x);
                if (0..nb as i128).contains(&v) {
                    v as u32
                } else {
                    nb
                }
            }
        }
    }

    fn int(&self, x: T) -> i128 {
        int_of(x.to_scalar()).unwrap_or(0)
    }

    /// Float arithmetic type of the kernel (`F`): double for f64 samples
    /// and for exact integer bins' estimate.
    fn double(&self) -> bool {
        self.mode == Mode::EvenInt || (matches!(self.mode, Mode::EvenFloat | Mode::Edges) && wide_float::<T>())
    }
}

fn accumulate<T: Element, C: Count, D: DeviceData<T> + ?Sized>(src: &D, rule: &BinRule<T>, hist: &mut Histogram<C>) -> Result<()> {
    crate::algo::same_device("histogram_into", src.device(), hist.counts.device())?;
    crate::algo::same_len("histogram_into (bins vs counts)", rule.nb as usize, hist.counts.len())?;
    if src.is_empty() {
        return Ok(());
    }
    let Histogram { counts, dropped } = hist;
    match (src.mem(), counts.mem_mut(), dropped.mem_mut()) {
        (Mem::Host(s), MemMut::Host(c), MemMut::Host(d)) => {
            let tally = host::histogram::count(s, rule.nb as usize, |x| rule.bin(x));
            for (slot, n) in c.iter_mut().zip(&tally) {
                *slot = slot.add_wrapping(*n);
            }
            d[0] = d[0].wrapping_add(tally[rule.nb as usize]);
            Ok(())
        }
        (Mem::Cuda { dev, ptr, len, .. }, MemMut::Cuda { ptr: counts_ptr, .. }, MemMut::Cuda { ptr: dropped_ptr, .. }) => {
            let device = src.device();
            if rule.double() {
                launch::<T, C, f64>(device, dev, rule, rule.scale, rule.lut_scale, ptr, len, counts_ptr, dropped_ptr)
            } else {
                launch::<T, C, f32>(
                    device,
                    dev,
                    rule,
                    rule.scale as f32,
                    rule.lut_scale as f32,
                    ptr,
                    len,
                    counts_ptr,
                    dropped_ptr,
                )
            }
        }
        _ => Err(Error::DeviceMismatch { op: "histogram_into" }),
    }
}

/// The kernel's `HistParams`, field for field.
#[repr(C)]
#[derive(Clone, Copy)]
struct HistParams<T, F> {
    lo: T,
    hi: T,
    scale: F,
    range: u64,
    edges: u64,
    lut: u64,
    lut_scale: F,
    num_edges: u32,
    lut_cells: u32,
    nb: u32,
    bin_base: u32,
    window: u32,
    count_dropped: u32,
}

/// Where a launch keeps its counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    shared: bool,
    replicas: u32,
    /// Bins counted per pass over the input (all of them, unless windowed).
    window: u32,
    /// Passes over the input: `ceil(nb / window)`.
    passes: u32,
    /// Dynamic shared memory per block, bytes.
    smem: u32,
}

fn layout<T: Element>(policy: &tuning::HistogramPolicy, rule: &BinRule<T>, len: usize) -> Layout {
    let passes = rule.nb.div_ceil(policy.max_shared_bins);
    // Windows pay a pass over the input each and a flush of every bin per
    // block: only worth it for inputs long beside the bin count.
    let shared =
        passes == 1 || (passes <= policy.max_window_passes && len as u64 >= policy.window_min_samples_per_bin as u64 * rule.nb as u64);
    let (window, passes) = if shared { (rule.nb.div_ceil(passes), passes) } else { (rule.nb, 1) };
    let slots = window + 1;
    let replicas = if shared {
        let fit = (policy.replica_bytes / (slots * 4)).clamp(1, policy.launch.block / 32);
        1 << (31 - fit.leading_zeros()) // the largest power of two <= fit
    } else {
        1
    };
    let counters = if shared { (replicas * slots * 4).next_multiple_of(16) } else { 0 };
    let staged = if rule.mode == Mode::Edges && rule.edges.len() as u32 <= policy.edges_shared {
        (rule.edges.len() * std::mem::size_of::<T>()).next_multiple_of(16) as u32 + 4 * rule.lut.len() as u32
    } else {
        0
    };
    Layout {
        shared,
        replicas,
        window,
        passes,
        smem: counters + staged,
    }
}

/// The histogram kernel for samples `T`, counts `C`, arithmetic type
/// `double` or float, a mode and a counter layout.
fn histogram_spec<T: Element, C: Count>(arch: u32, mode: u32, double: bool, shared: bool) -> KernelSpec {
    let policy = tuning::histogram(arch);
    KernelSpec::new(&HISTOGRAM)
        .constant("CUPRIM_BLOCK", policy.launch.block as i64)
        .constant("CUPRIM_MIN_BLOCKS", 2)
        .constant("CUPRIM_UNROLL", policy.launch.unroll as i64)
        .constant("CUPRIM_HIST_MODE", mode as i64)
        .constant("CUPRIM_HIST_SHARED", shared as i64)
        .constant("CUPRIM_EDGES_SHARED", policy.edges_shared as i64)
        .elem::<T>("T")
        .elem::<C>("C")
        .raw(if double { "typedef double F;" } else { "typedef float F;" })
}

/// Every specialisation a sample type can need, for compile checks.
pub(crate) fn histogram_specs<T: Element, C: Count>(arch: u32) -> Vec<KernelSpec> {
    let modes: &[(Mode, bool)] = match T::KIND {
        Kind::Float => &[(Mode::EvenFloat, wide_float::<T>()), (Mode::Edges, wide_float::<T>())],
        _ => &[(Mode::EvenInt, true), (Mode::Edges, false), (Mode::Integers, false)],
    };
    let mut specs = Vec::new();
    for &(mode, double) in modes {
        for shared in [true, false] {
            specs.push(histogram_spec::<T, C>(arch, mode as u32, double, shared));
        }
    }
    specs
}

/// Elements per launch at most: keeps every block's shared counters and
/// every thread's run below 2^31 whatever the grid.
fn max_launch_elems(grid: u32) -> u64 {
    grid as u64 * (1 << 31)
}

#[allow(clippy::too_many_arguments)]
fn launch<T: Element, C: Count, F: Copy + 'static>(
    device: &Device,
    dev: &CudaDevice,
    rule: &BinRule<T>,
    scale: F,
    lut_scale: F,
    ptr: u64,
    len: usize,
    counts_ptr: u64,
    dropped_ptr: u64,
) -> Result<()> {
    let policy = tuning::histogram(dev.arch);
    let lay = layout(&policy, rule, len);
    let mode = rule.mode as u32;
    let key = FastKey::new::<T, C, F>("histogram", format!("{mode}|{}", lay.shared));
    let module = dev.module_for(key, || histogram_spec::<T, C>(dev.arch, mode, rule.double(), lay.shared))?;
    let f = module.function("cuprim_histogram")?;
    if lay.smem > 48 << 10 {
        use cudarc::driver::sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        f.set_attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, lay.smem as i32)
            .map_err(|e| Error::Driver {
                during: format!("allowing {} bytes of shared memory for a histogram", lay.smem),
                source: e,
            })?;
    }
    let block = policy.launch.block;
    let resident = f
        .occupancy_max_active_blocks_per_multiprocessor(block, lay.smem as usize, None)
        .map_err(|e| Error::Driver {
            during: "asking the histogram kernel's occupancy".into(),
            source: e,
        })?
        .max(1) as u32;
    let per_thread = (16 / std::mem::size_of::<T>()) as u64 * policy.launch.unroll as u64;
    let wave = tuning::Policy {
        blocks_per_sm: policy.launch.blocks_per_sm.min(resident),
        ..policy.launch
    };
    let grid = wave.grid((len as u64).div_ceil(per_thread), dev.sm_count);

    // Explicit edges and their cell table: on the device since the first
    // call with these bins (held here until the launches are queued).
    let table = if rule.mode == Mode::Edges {
        Some(rule.table_on(device)?)
    } else {
        None
    };
    let (edges_ptr, lut_ptr) = match table.as_ref().map(|t| t.mem()) {
        Some(Mem::Cuda { ptr, .. }) => (ptr, if rule.lut.is_empty() { 0 } else { ptr + rule.lut_offset() as u64 }),
        _ => (0, 0),
    };
    let mut params = HistParams::<T, F> {
        lo: rule.lo,
        hi: rule.hi,
        scale,
        range: rule.range,
        edges: edges_ptr,
        lut: lut_ptr,
        lut_scale,
        num_edges: rule.edges.len() as u32,
        lut_cells: rule.lut.len() as u32,
        nb: rule.nb,
        bin_base: 0,
        window: lay.window,
        count_dropped: 1,
    };
    let replicas = lay.replicas;
    for pass in 0..lay.passes {
        params.bin_base = pass * lay.window;
        params.window = lay.window.min(rule.nb - params.bin_base);
        params.count_dropped = (pass == 0) as u32;
        let mut start = 0u64;
        while start < len as u64 {
            let n = (len as u64 - start).min(max_launch_elems(grid));
            let in_ptr = ptr + start * std::mem::size_of::<T>() as u64;
            // SAFETY: cuprim_histogram(const T* in, u64 n, HistParams p, u32
            // replicas, C* counts, u64* dropped): `in` holds n elements of the
            // source; `params` matches the kernel's struct field for field
            // (repr(C)), its edges and cell-table pointers (mode 2) address
            // num_edges values and lut_cells u32s alive until after the launch
            // (stream-ordered free), its window lies within the nb bins; counts
            // has nb slots and dropped one; the dynamic shared memory is what
            // the layout asked for (replicas x (window + 1) counters and the
            // staged edges), allowed above when past 48 KiB.
            unsafe {
                dev.launch(
                    f,
                    grid,
                    block,
                    lay.smem,
                    &mut kernel_args![&in_ptr, &n, &params, &replicas, &counts_ptr, &dropped_ptr],
                )?;
            }
            start += n;
        }
    }
    drop(table);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's mode-2 search with the cell table, in the kernel's
    /// arithmetic (f32 here), for checking the table on the host.
    fn bin_with_table(rule: &BinRule<f32>, x: f32) -> u32 {
        let e = &rule.edges;
        let last = e.len() - 1;
        if !(x >= e[0] && x < e[last]) {
            return rule.nb;
        }
        let (mut lo, mut hi) = (0usize, last);
        let cells = rule.lut.len();
        let c = (((x - e[0]) * rule.lut_scale as f32) as usize).min(cells - 1);
        lo = lo.max(rule.lut[c.saturating_sub(1)] as usize);
        if c + 2 < cells {
            hi = rule.lut[c + 2] as usize + 1;
        }
        assert!(
            e[lo] <= x && x < e[hi],
            "x = {x}: cell {c} gives [{lo}, {hi}) = [{}, {})",
            e[lo],
            e[hi]
        );
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if e[mid] <= x {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo as u32
    }

    #[test]
    fn cell_table_narrows_to_the_right_bins() {
        let sets: Vec<Vec<f32>> = vec![
            (0..=256).map(|i| i as f32 / 256.0).collect(),
            (0..=140).map(|i| 10f32.powf(i as f32 / 20.0 - 2.0)).collect(),
            vec![-3.0, -3.0, -2.9999, 0.0, 0.0, 1e-30, 7.0, 7.0, 1e6],
            vec![1e6, 1e6 + 0.0625, 1e6 + 0.125, 1e6 + 1.0],
        ];
        for edges in sets {
            let rule = BinRule::new(&Bins::edges(&edges)).unwrap();
            assert!(!rule.lut.is_empty());
            let (lo, hi) = (edges[0], edges[edges.len() - 1]);
            let mut probes: Vec<f32> = (0..20_000).map(|i| lo + (hi - lo) * (i as f32 / 19_999.0)).collect();
            for &e in &edges {
                probes.extend([e, e.next_up(), e.next_down()]);
            }
            for x in probes {
                assert_eq!(bin_with_table(&rule, x), rule.bin(x), "x = {x}, edges {edges:?}");
            }
        }
    }

    #[test]
    fn no_cell_table_for_infinite_or_integer_edges() {
        assert!(BinRule::new(&Bins::edges(&[f32::NEG_INFINITY, 0.0, 1.0])).unwrap().lut.is_empty());
        assert!(BinRule::new(&Bins::edges(&[-f32::MAX, f32::MAX])).unwrap().lut.is_empty());
        assert!(BinRule::new(&Bins::edges(&[0u32, 5, 9])).unwrap().lut.is_empty());
    }
}
