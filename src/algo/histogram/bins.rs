//! The binning rules: a [`Bins`] checked once into a [`BinRule`] (even bins
//! over floats or integers, explicit edges with their cell table, integer
//! ranges), the bin of one sample on the host (the kernel's `hist_bin`,
//! written out again), and the device copy of explicit edges.

use super::{Bins, MAX_BINS};
use crate::device::Ptr;
use crate::element::{Element, Kind, Scalar};
use crate::error::{Error, Result};
use crate::vec::raw::{Mem, Sealed};
use crate::vec::DeviceVec;
use crate::Device;
use std::sync::{Arc, Mutex, OnceLock};

/// What a [`Bins`] was built from.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum BinsKind<T> {
    Even { num_bins: usize, lo: T, hi: T },
    Edges(Vec<T>),
    Integers(usize),
}

/// What a `Bins` keeps between calls (shared by its clones): its checked
/// rule, and its explicit edges (and their cell table) on the device,
/// uploaded at the first GPU call and kept: later calls with these bins
/// check, compute and copy nothing.
pub(super) struct BinsCache<T> {
    rule: OnceLock<BinRule<T>>,
    /// The device copy of the edge table, for one device at a time.
    uploaded: Mutex<Option<(Device, Arc<DeviceVec<u8>>)>>,
}

impl<T> Default for BinsCache<T> {
    fn default() -> Self {
        BinsCache {
            rule: OnceLock::new(),
            uploaded: Mutex::new(None),
        }
    }
}

impl<T> std::fmt::Debug for BinsCache<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BinsCache")
    }
}

/// The kernel's `CUPRIM_HIST_MODE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Mode {
    EvenFloat = 0,
    EvenInt = 1,
    Edges = 2,
    Integers = 3,
}

/// Validated bins: everything the kernel and the host need to bin a sample.
#[derive(Clone, Debug)]
pub(crate) struct BinRule<T> {
    pub(super) mode: Mode,
    pub(super) nb: u32,
    pub(super) lo: T,
    pub(super) hi: T,
    /// Mode 0: `nb / (hi - lo)` in the sample's arithmetic type (stored as
    /// f64; exactly an f32 value when that type is f32). Mode 1: the same
    /// quotient as an estimate only.
    pub(super) scale: f64,
    /// Mode 1: `hi - lo`, exact.
    pub(super) range: u64,
    pub(super) edges: Vec<T>,
    /// Mode 2, float samples with finite outer edges: `lut[c]` is the bin
    /// holding the start of cell `c` of `lut.len()` equal cells over
    /// `[edges[0], edges[last])`; the kernel searches only the bins of a
    /// sample's cell and its neighbours. Empty: search all bins.
    pub(super) lut: Vec<u32>,
    /// `lut.len() / (edges[last] - edges[0])` in the kernel's `F`.
    pub(super) lut_scale: f64,
}

/// Explicit edges and their cell table on the device, held for one call.
pub(super) struct DeviceTable<T> {
    _held: Arc<DeviceVec<u8>>,
    /// `num_edges` edges.
    pub edges: Ptr<T>,
    /// `lut_cells` cells, or null when there is no table.
    pub lut: Ptr<u32>,
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
pub(super) fn wide_float<T: Element>() -> bool {
    T::KIND == Kind::Float && std::mem::size_of::<T>() == 8
}

impl<T: Element> Bins<T> {
    /// The checked rule of these bins: computed at the first call, kept
    /// for later ones (an invalid `Bins` is checked, and refused, each time).
    pub(super) fn rule(&self) -> Result<&BinRule<T>> {
        if let Some(rule) = self.cache.rule.get() {
            return Ok(rule);
        }
        let rule = BinRule::new(self)?;
        Ok(self.cache.rule.get_or_init(|| rule))
    }

    /// The edges, then the cell table at `lut_offset`, on `device` (mode 2
    /// only; `None` otherwise): copied there at the first call and kept
    /// with the `Bins` for later ones.
    pub(super) fn table_on(&self, rule: &BinRule<T>, device: &Device) -> Result<Option<DeviceTable<T>>> {
        if rule.mode != Mode::Edges {
            return Ok(None);
        }
        let table = {
            let mut slot = self.cache.uploaded.lock().unwrap_or_else(|e| e.into_inner());
            match slot.as_ref() {
                Some((d, table)) if d.same(device) => table.clone(),
                _ => {
                    let mut bytes = bytemuck::cast_slice::<T, u8>(&rule.edges).to_vec();
                    bytes.resize(rule.lut_offset(), 0);
                    bytes.extend_from_slice(bytemuck::cast_slice(&rule.lut));
                    let table = Arc::new(DeviceVec::from_slice(device, &bytes)?);
                    *slot = Some((device.clone(), table.clone()));
                    table
                }
            }
        };
        let (edges, lut) = match table.mem() {
            Mem::Cuda { ptr, .. } => {
                let lut = if rule.lut.is_empty() {
                    Ptr::null()
                } else {
                    Ptr::from_raw(ptr + rule.lut_offset() as u64)
                };
                (Ptr::from_raw(ptr), lut)
            }
            Mem::Host(_) => (Ptr::null(), Ptr::null()),
        };
        Ok(Some(DeviceTable { _held: table, edges, lut }))
    }
}

impl<T: Element> BinRule<T> {
    pub(super) fn new(bins: &Bins<T>) -> Result<Self> {
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
    pub(super) fn double(&self) -> bool {
        double_for::<T>(self.mode)
    }
}

/// Whether mode `mode` over samples `T` computes in double (the kernel's `F`).
pub(super) fn double_for<T: Element>(mode: Mode) -> bool {
    mode == Mode::EvenInt || (matches!(mode, Mode::EvenFloat | Mode::Edges) && wide_float::<T>())
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

    #[test]
    fn the_rule_is_checked_once_and_kept() {
        let bins = Bins::edges(&[0.0f32, 1.0, 4.0]);
        let first: *const BinRule<f32> = bins.rule().unwrap();
        let clone = bins.clone();
        assert!(std::ptr::eq(first, clone.rule().unwrap()));
        assert!(Bins::edges(&[1.0f32, 0.0]).rule().is_err());
    }
}
