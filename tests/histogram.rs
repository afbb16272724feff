//! Histogram family against plain Rust references, on every device.
//!
//! References: integers against the exact real-number rule (i128
//! arithmetic); floats against the documented formula written out here
//! (`(x - lo) * scale`, truncated, clamped), and that formula is also
//! checked to be within one bin of the real-number bin. Counts are exact
//! integers: every device must match the reference exactly, and two runs
//! on one device must match each other.

mod common;

use common::{ctx, TestRng};
use cuprim::algo::histogram::{Bins, Histogram, MAX_BINS};
use cuprim::prelude::*;
use cuprim::Error;
use rand::{Rng, RngCore};

/// Sizes: empty, one, around a warp, past a vector, past a block's share,
/// and (release builds, as on the GPU machine) past a million; none a
/// multiple of any tile or vector.
fn sizes() -> &'static [usize] {
    common::wide_sizes()
}

/// Bin counts: one bin, odd, the common 256, many copies per block, the
/// largest one-pass shared-memory case, the first two-window case, the
/// last four-window case, the first global-atomics case, and a large one.
const BIN_COUNTS: &[usize] = &[1, 7, 256, 4096, 16384, 16385, 65536, 65537, 100_000];

/// The distributions every test draws from.
#[derive(Clone, Copy, Debug)]
enum Dist {
    Uniform,
    OneBin,
    Normal,
}
const DISTS: &[Dist] = &[Dist::Uniform, Dist::OneBin, Dist::Normal];

/// A standard normal draw (Box-Muller).
fn normal(r: &mut TestRng) -> f64 {
    let u1 = (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let u2 = (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * (u1 + 1e-300).ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Runs `hist` on every device and checks the counts and dropped number
/// against `want` (`nb + 1` slots, the last one dropped), twice on each
/// device (the second run must match the first).
#[track_caller]
fn check<T: Element>(data: &[T], want: &[u64], what: &str, seed: u64, hist: impl Fn(&DeviceVec<T>) -> Histogram<u32>) {
    let nb = want.len() - 1;
    for dev in common::devices() {
        let c = ctx(&dev, what, data.len(), seed);
        let v = DeviceVec::from_slice(&dev, data).unwrap();
        let first = hist(&v);
        let counts: Vec<u64> = first.to_vec().unwrap().iter().map(|&x| x as u64).collect();
        assert_eq!(counts.len(), nb, "bins: {c}");
        if counts[..] != want[..nb] {
            let i = (0..nb).find(|&i| counts[i] != want[i]).unwrap();
            panic!(
                "bin {i}: got {}, want {} ({} bins differ): {c}",
                counts[i],
                want[i],
                (0..nb).filter(|&i| counts[i] != want[i]).count()
            );
        }
        assert_eq!(first.dropped().unwrap(), want[nb], "dropped: {c}");
        let again = hist(&v);
        assert_eq!(again.to_vec().unwrap(), first.to_vec().unwrap(), "second run differs: {c}");
    }
}

/// The reference tally of `bin` over `data` into `nb + 1` slots.
fn tally<T: Copy>(data: &[T], nb: usize, bin: impl Fn(T) -> usize) -> Vec<u64> {
    let mut out = vec![0u64; nb + 1];
    for &x in data {
        out[bin(x).min(nb)] += 1;
    }
    out
}

macro_rules! int_even_bins {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            let (mut r, seed) = common::rng(stringify!($name));
            for (k, &nb) in BIN_COUNTS.iter().enumerate() {
                for &n in sizes() {
                    for &dist in DISTS {
                        // A range with room outside it on both sides when the type allows.
                        let (lo, hi): ($t, $t) = match (k % 3, <$t>::MIN == 0) {
                            (0, _) => (<$t>::MIN, <$t>::MAX),                      // the full range (hi itself is outside)
                            (1, true) => (3, (3 + nb * 3 + 1).min(<$t>::MAX as usize) as $t),
                            (1, false) => (-(nb.min(60) as i64) as $t, (nb.min(60) as i64 * 2 + 1) as $t),
                            _ => ((<$t>::MAX / 4), (<$t>::MAX / 2)),
                        };
                        let span = (hi as i128 - lo as i128) as f64;
                        let data: Vec<$t> = (0..n)
                            .map(|_| match dist {
                                Dist::Uniform if k % 3 == 0 => r.gen::<$t>(),
                                Dist::Uniform => {
                                    let x = lo as f64 + span * (r.gen::<f64>() * 1.2 - 0.1);
                                    x.clamp(<$t>::MIN as f64, <$t>::MAX as f64) as $t
                                }
                                Dist::OneBin => lo,
                                Dist::Normal => {
                                    let x = lo as f64 + span * (0.5 + 0.2 * normal(&mut r));
                                    x.clamp(<$t>::MIN as f64, <$t>::MAX as f64) as $t
                                }
                            })
                            .collect();
                        let want = tally(&data, nb, |x| {
                            let (x, l, h) = (x as i128, lo as i128, hi as i128);
                            if x < l || x >= h { nb } else { ((x - l) * nb as i128 / (h - l)) as usize }
                        });
                        let what = format!("even {nb} bins [{lo}, {hi}) {dist:?}");
                        check(&data, &want, &what, seed, |v| v.histogram(Bins::even(nb, lo, hi)).unwrap());
                    }
                }
            }
        }
    )*};
}
int_even_bins!(even_u8: u8, even_i8: i8, even_u32: u32, even_i32: i32, even_u64: u64, even_i64: i64);

/// The documented float rule, in the sample's arithmetic (`f32` for `f32`,
/// `f16`, `bf16`; `f64` for `f64`), written out independently.
fn float_rule_f32(x: f32, lo: f32, hi: f32, nb: usize) -> usize {
    if !(x >= lo && x < hi) {
        return nb;
    }
    let scale = (nb as f64 / (hi - lo) as f64) as f32;
    (((x - lo) * scale) as usize).min(nb - 1)
}
fn float_rule_f64(x: f64, lo: f64, hi: f64, nb: usize) -> usize {
    if !(x >= lo && x < hi) {
        return nb;
    }
    (((x - lo) * (nb as f64 / (hi - lo))) as usize).min(nb - 1)
}

macro_rules! float_even_bins {
    ($($name:ident: $t:ty, $rule:ident, $wide:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            let (mut r, seed) = common::rng(stringify!($name));
            let to = |x: f64| -> $t { <$t as Element>::from_scalar(cuprim::Scalar::F64(x)) };
            for &nb in BIN_COUNTS {
                for &n in sizes() {
                    for &dist in DISTS {
                        let (lo, hi) = if nb % 2 == 0 { (to(0.0), to(1.0)) } else { (to(-3.5), to(12.25)) };
                        let (l, h) = (lo.to_f64(), hi.to_f64());
                        let specials = [f64::NAN, -0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY, l, h, -1e30, 1e30];
                        let data: Vec<$t> = (0..n)
                            .map(|i| match dist {
                                _ if i % 97 == 5 => to(specials[(i / 97) % specials.len()]),
                                Dist::Uniform => to(l - 0.1 + (h - l + 0.2) * r.gen::<f64>()),
                                Dist::OneBin => to(l + (h - l) * 0.3),
                                Dist::Normal => to(l + (h - l) * (0.5 + 0.15 * normal(&mut r))),
                            })
                            .collect();
                        let want = tally(&data, nb, |x| $rule(x.to_f64() as $wide, l as $wide, h as $wide, nb));
                        // The rule is within one bin of the real-number bin.
                        for &x in &data {
                            let b = $rule(x.to_f64() as $wide, l as $wide, h as $wide, nb);
                            let xf = x.to_f64();
                            if b < nb {
                                let real = ((xf - l) / (h - l) * nb as f64).floor();
                                assert!((b as f64 - real).abs() <= 1.0, "sample {xf}: bin {b}, real {real}");
                            }
                        }
                        let what = format!("even {nb} bins [{l}, {h}) {dist:?}");
                        check(&data, &want, &what, seed, |v| v.histogram(Bins::even(nb, lo, hi)).unwrap());
                    }
                }
            }
        }
    )*};
}
float_even_bins!(
    even_f32: f32, float_rule_f32, f32,
    even_f64: f64, float_rule_f64, f64,
    even_f16: f16, float_rule_f32, f32,
    even_bf16: bf16, float_rule_f32, f32,
);

/// 256 bins over [0, 1) in f32: the scale is a power of two, so the rule
/// is the exact real-number rule; checked against `floor(x * 256)`.
#[test]
fn even_f32_power_of_two_bins_are_exact() {
    let (mut r, seed) = common::rng("even_f32_pow2");
    let n = (1 << 20) + 3;
    let data: Vec<f32> = (0..n).map(|_| r.gen::<f32>() * 1.25 - 0.125).collect();
    let want = tally(&data, 256, |x| {
        if (0.0..1.0).contains(&x) {
            (x as f64 * 256.0).floor() as usize
        } else {
            256
        }
    });
    check(&data, &want, "256 bins [0, 1)", seed, |v| {
        v.histogram(Bins::even(256, 0.0f32, 1.0)).unwrap()
    });
}

macro_rules! edge_bins {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            let (mut r, seed) = common::rng(stringify!($name));
            let to = |x: f64| -> $t { <$t as Element>::from_scalar(cuprim::Scalar::F64(x)) };
            // Few edges (staged in shared memory), repeated edges (empty
            // bins), and more edges than are staged (searched in global memory).
            for &ne in &[2usize, 3, 17, 257, 3000] {
                let mut edges: Vec<$t> = (0..ne).map(|_| to((r.gen::<f64>() * 100.0 - 20.0).round())).collect();
                edges.sort_by(|a, b| a.partial_cmp(b).unwrap());
                if edges[0] == edges[ne - 1] {
                    edges[ne - 1] = to(edges[0].to_f64() + 1.0);
                }
                for &n in sizes() {
                    let data: Vec<$t> = (0..n)
                        .map(|i| if i % 13 == 0 { edges[(i / 13) % ne] } else { to(r.gen::<f64>() * 120.0 - 25.0) })
                        .collect();
                    let want = tally(&data, ne - 1, |x| {
                        let x = x.to_f64();
                        // The last i with edges[i] <= x, if x is below the last edge.
                        if !(x >= edges[0].to_f64() && x < edges[ne - 1].to_f64()) {
                            return ne - 1;
                        }
                        edges.partition_point(|e| e.to_f64() <= x) - 1
                    });
                    check(&data, &want, &format!("{ne} edges"), seed, |v| v.histogram(Bins::edges(&edges)).unwrap());
                }
            }
        }
    )*};
}
edge_bins!(edges_f32: f32, edges_f64: f64, edges_i32: i32, edges_u64: u64, edges_f16: f16, edges_u8: u8);

/// Edges the GPU narrows with its cell table: evenly spaced, log-spaced
/// (many bins per cell at one end, many cells per bin at the other), and
/// uneven clusters; samples on every edge and one ulp either side of it.
#[test]
fn edges_with_cell_table() {
    let (mut r, seed) = common::rng("edges_cell_table");
    let even: Vec<f64> = (0..=300).map(|i| -1.5 + i as f64 * 0.01).collect();
    let log: Vec<f64> = (0..=140).map(|i| 10f64.powf(i as f64 / 20.0 - 2.0)).collect();
    let mut clustered: Vec<f64> = (0..200)
        .map(|i| 5.0 + i as f64 * 1e-4)
        .chain((0..50).map(|i| 100.0 + i as f64 * 37.0))
        .collect();
    clustered.sort_by(f64::total_cmp);
    for (name, edges) in [("even", even), ("log", log), ("clustered", clustered)] {
        let (lo, hi) = (edges[0], edges[edges.len() - 1]);
        let mut data: Vec<f64> = (0..(1 << 16) + 5).map(|_| lo - 1.0 + (hi - lo + 2.0) * r.gen::<f64>()).collect();
        for &e in &edges {
            data.extend([e, e.next_up(), e.next_down()]);
        }
        macro_rules! one {
            ($t:ty) => {{
                let to = |x: f64| <$t as Element>::from_scalar(cuprim::Scalar::F64(x));
                let e: Vec<$t> = edges.iter().map(|&x| to(x)).collect();
                let d: Vec<$t> = data.iter().map(|&x| to(x)).collect();
                let ne = e.len();
                let want = tally(&d, ne - 1, |x| {
                    let x = x.to_f64();
                    if !(x >= e[0].to_f64() && x < e[ne - 1].to_f64()) {
                        return ne - 1;
                    }
                    e.partition_point(|v| v.to_f64() <= x) - 1
                });
                let what = format!("{name} edges, {}", stringify!($t));
                // One Bins for every device and run: its device copy is made once.
                let bins = Bins::edges(&e);
                check(&d, &want, &what, seed, |v| v.histogram(&bins).unwrap());
            }};
        }
        one!(f32);
        one!(f64);
        one!(f16);
        one!(bf16);
    }
}

/// More bins than shared memory holds, with inputs long enough (128
/// samples per bin) that the GPU counts them in windows, one pass each.
#[test]
fn windowed_bins() {
    let (mut r, seed) = common::rng("windowed");
    for nb in [20_000usize, 65_536] {
        let n = 128 * nb + 5;
        let data: Vec<f32> = (0..n).map(|_| r.gen::<f32>() * 1.1 - 0.05).collect();
        let want = tally(&data, nb, |x| float_rule_f32(x, 0.0, 1.0, nb));
        check(&data, &want, &format!("{nb} bins in windows"), seed, |v| {
            v.histogram(Bins::even(nb, 0.0f32, 1.0)).unwrap()
        });
    }
}

/// Launches whose shared memory crosses the default 48 KiB limit only
/// with the kernel's own static shared memory counted: 8-byte edges staged
/// beside four copies of the counters (2046 u64 edges bins once failed to
/// launch on the H100), and one copy of about 12288 even bins.
#[test]
fn shared_memory_near_the_default_limit() {
    let (mut r, seed) = common::rng("shared_limit");
    for nb in (2030..=2047).step_by(3).chain([2046]) {
        let edges: Vec<u64> = (0..=nb as u64).map(|i| i * 1000 + (i * i) % 7).collect();
        for n in [521usize, 70_001] {
            let data: Vec<u64> = (0..n).map(|_| r.gen_range(0..nb as u64 * 1000 + 3000)).collect();
            let want = tally(&data, nb, |x| {
                if x < edges[0] || x >= edges[nb] {
                    return nb;
                }
                edges.partition_point(|&e| e <= x) - 1
            });
            let bins = Bins::edges(&edges);
            check(&data, &want, &format!("{nb} u64 edge bins"), seed, |v| v.histogram(&bins).unwrap());
        }
    }
    for nb in [12_270usize, 12_280, 12_287, 12_288, 12_300] {
        let data: Vec<f32> = (0..40_003).map(|_| r.gen::<f32>() * 1.1 - 0.05).collect();
        let want = tally(&data, nb, |x| float_rule_f32(x, 0.0, 1.0, nb));
        check(&data, &want, &format!("{nb} even bins"), seed, |v| {
            v.histogram(Bins::even(nb, 0.0f32, 1.0)).unwrap()
        });
    }
}

/// Float edges and awkward samples: NaN and infinities dropped, -0.0 = +0.0.
#[test]
fn edges_with_specials() {
    let data = [-0.0f32, 0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1.0, 2.0, 0.5];
    let edges = [f32::NEG_INFINITY, 0.0, 1.0, 2.0];
    // bins: [-inf, 0) [0, 1) [1, 2); dropped: NaN, +inf, 2.0
    let want = [1, 3, 1, 3];
    check(&data, &want, "edges with specials", 0, |v| {
        v.histogram(Bins::edges(&edges)).unwrap()
    });
}

macro_rules! bincounts {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            let (mut r, seed) = common::rng(stringify!($name));
            for &nb in &[1usize, 5, 100, 16384, 16385, 70_000] {
                for &n in sizes() {
                    let data: Vec<$t> = (0..n).map(|_| (r.gen_range(-10i64..(nb as i64 + 10))) as $t).collect();
                    let want = tally(&data, nb, |x| {
                        let x = x as i128;
                        if x >= 0 && x < nb as i128 { x as usize } else { nb }
                    });
                    check(&data, &want, &format!("bincount {nb}"), seed, |v| v.bincount(nb).unwrap());
                }
            }
        }
    )*};
}
bincounts!(bincount_u8: u8, bincount_i8: i8, bincount_u32: u32, bincount_i32: i32, bincount_u64: u64, bincount_i64: i64);

/// u64 counts, accumulation over calls, and slices at odd offsets (the
/// unaligned path).
#[test]
fn u64_counts_accumulate_and_offsets() {
    let (mut r, seed) = common::rng("accumulate");
    let n = (1 << 20) + 3;
    let data: Vec<f32> = (0..n).map(|_| r.gen::<f32>() * 1.2 - 0.1).collect();
    let bins = Bins::even(100, 0.0f32, 1.0);
    let whole = tally(&data, 100, |x| float_rule_f32(x, 0.0, 1.0, 100));
    for dev in common::devices() {
        let c = ctx(&dev, "accumulate", n, seed);
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        let mut h = Histogram::<u64>::zeros(&dev, 100).unwrap();
        // Three pieces, the middle ones at odd offsets: the whole histogram.
        for (a, b) in [(0, 1), (1, 12345), (12345, n)] {
            v.slice(a..b).unwrap().histogram_into(&bins, &mut h).unwrap();
        }
        assert_eq!(h.to_vec().unwrap(), whole[..100].to_vec(), "{c}");
        assert_eq!(h.dropped().unwrap(), whole[100], "{c}");
        // Once more: every count doubles.
        v.histogram_into(&bins, &mut h).unwrap();
        let doubled: Vec<u64> = whole[..100].iter().map(|x| 2 * x).collect();
        assert_eq!(h.to_vec().unwrap(), doubled, "{c}");
        assert_eq!(h.dropped().unwrap(), 2 * whole[100], "{c}");
        let h64 = v.histogram_u64(&bins).unwrap();
        assert_eq!(h64.to_vec().unwrap(), whole[..100].to_vec(), "{c}");
        assert_eq!(h64.num_bins(), 100, "{c}");
    }
}

/// One-byte samples, counted per value and binned at the end: into an
/// existing histogram (u32 and u64 counts) from pieces at odd offsets, with
/// wide bins (several values each), dropped values on both sides, and runs.
#[test]
fn byte_samples_accumulate() {
    let (mut r, seed) = common::rng("byte samples");
    let n = (1 << 21) + 5;
    let data: Vec<i8> = (0..n).map(|i| if i % 5000 < 700 { 17 } else { r.gen::<i8>() }).collect();
    let (lo, hi, nb) = (-100i8, 90i8, 19usize); // 10 values a bin
    let bins = Bins::even(nb, lo, hi);
    let edges: Vec<i8> = vec![-128, -1, 0, 1, 17, 18, 127];
    let by_edges = Bins::edges(&edges);
    let even = tally(&data, nb, |x| {
        if x < lo || x >= hi {
            nb
        } else {
            ((x as i32 - lo as i32) as usize * nb) / (hi as i32 - lo as i32) as usize
        }
    });
    let cut = tally(&data, edges.len() - 1, |x| {
        match edges.windows(2).position(|w| w[0] <= x && x < w[1]) {
            Some(b) => b,
            None => edges.len() - 1,
        }
    });
    for dev in common::devices() {
        let c = ctx(&dev, "byte samples", n, seed);
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        let mut h = Histogram::<u32>::zeros(&dev, nb).unwrap();
        let mut h64 = Histogram::<u64>::zeros(&dev, edges.len() - 1).unwrap();
        for (a, b) in [(0, 3), (3, 77_777), (77_777, n)] {
            v.slice(a..b).unwrap().histogram_into(&bins, &mut h).unwrap();
            v.slice(a..b).unwrap().histogram_into(&by_edges, &mut h64).unwrap();
        }
        v.histogram_into(&bins, &mut h).unwrap();
        let doubled: Vec<u32> = even[..nb].iter().map(|&x| 2 * x as u32).collect();
        assert_eq!(h.to_vec().unwrap(), doubled, "even bins, twice: {c}");
        assert_eq!(h.dropped().unwrap(), 2 * even[nb], "even bins, twice: {c}");
        assert_eq!(h64.to_vec().unwrap(), cut[..edges.len() - 1].to_vec(), "edges: {c}");
        assert_eq!(h64.dropped().unwrap(), cut[edges.len() - 1], "edges: {c}");
    }
}

#[test]
fn bad_bins_are_errors() {
    for dev in common::devices() {
        let f = DeviceVec::from_slice(&dev, &[0.5f32, 1.5]).unwrap();
        let i = DeviceVec::from_slice(&dev, &[1i32, 2]).unwrap();
        let invalid = |e: Error| matches!(e, Error::InvalidArgument(_));
        assert!(invalid(f.histogram(Bins::even(0, 0.0, 1.0)).unwrap_err()), "0 bins");
        assert!(
            invalid(f.histogram(Bins::even(MAX_BINS + 1, 0.0, 1.0)).unwrap_err()),
            "too many bins"
        );
        assert!(invalid(f.histogram(Bins::even(4, 1.0, 1.0)).unwrap_err()), "lo == hi");
        assert!(invalid(f.histogram(Bins::even(4, 2.0, 1.0)).unwrap_err()), "lo > hi");
        assert!(invalid(f.histogram(Bins::even(4, f32::NAN, 1.0)).unwrap_err()), "NaN lo");
        assert!(invalid(f.histogram(Bins::even(4, 0.0, f32::INFINITY)).unwrap_err()), "infinite hi");
        assert!(
            invalid(f.histogram(Bins::even(4, -f32::MAX, f32::MAX)).unwrap_err()),
            "width overflows"
        );
        assert!(invalid(i.histogram(Bins::even(4, 5, 5)).unwrap_err()), "int lo == hi");
        assert!(invalid(f.histogram(Bins::edges(&[0.0, 2.0, 1.0])).unwrap_err()), "unsorted edges");
        assert!(invalid(f.histogram(Bins::edges(&[0.0, f32::NAN])).unwrap_err()), "NaN edge");
        assert!(invalid(f.histogram(Bins::edges(&[0.0])).unwrap_err()), "one edge");
        assert!(invalid(f.histogram(Bins::edges(&[])).unwrap_err()), "no edges");
        assert!(invalid(i.bincount(0).unwrap_err()), "bincount 0");
        let mut wrong = Histogram::<u32>::zeros(&dev, 3).unwrap();
        assert!(matches!(
            f.histogram_into(Bins::even(4, 0.0, 1.0), &mut wrong).unwrap_err(),
            Error::LengthMismatch { .. }
        ));
        assert_eq!(wrong.to_vec().unwrap(), vec![0, 0, 0], "a failed call leaves the counts alone");
        let msg = f.histogram(Bins::edges(&[0.0, 2.0, 1.0])).unwrap_err().to_string();
        assert!(msg.contains("edges[1]") && msg.contains("sorted"), "{msg}");
    }
    if let Some(gpu) = common::cuda() {
        let v = DeviceVec::from_slice(&gpu, &[1u32]).unwrap();
        let mut h = Histogram::<u32>::zeros(&Device::host(), 2).unwrap();
        assert!(matches!(
            v.histogram_into(Bins::even(2, 0, 2), &mut h).unwrap_err(),
            Error::DeviceMismatch { .. }
        ));
    } else {
        common::skip("bad_bins_are_errors (device mismatch part)", "no CUDA device");
    }
}

/// Empty input: zero counts, nothing dropped; a one-bin range takes all.
#[test]
fn empty_and_single_bin() {
    for dev in common::devices() {
        let e = DeviceVec::<u32>::zeros(&dev, 0).unwrap();
        let h = e.histogram(Bins::even(3, 0, 9)).unwrap();
        assert_eq!(h.to_vec().unwrap(), vec![0, 0, 0]);
        assert_eq!(h.dropped().unwrap(), 0);
        let v = DeviceVec::from_slice(&dev, &[0u32, 4, 8, 9]).unwrap();
        let h = v.histogram(Bins::even(1, 0, 9)).unwrap();
        assert_eq!(h.to_vec().unwrap(), vec![3]);
        assert_eq!(h.dropped().unwrap(), 1);
        // Full u64 range, exact at the very top.
        let top = DeviceVec::from_slice(&dev, &[u64::MAX - 1, u64::MAX, 0, 1 << 63]).unwrap();
        let h = top.histogram(Bins::even(2, 0, u64::MAX)).unwrap();
        assert_eq!(h.to_vec().unwrap(), vec![1, 2]);
        assert_eq!(h.dropped().unwrap(), 1);
    }
}

/// New histograms are counted through accumulators the device keeps zeroed
/// (up to 4096 bins, one launch) or zeroed first (more bins): interleaved
/// with accumulating calls, with both count types and grids of one block
/// and of many, every result is exact and nothing carries over.
#[test]
fn new_histograms_start_from_zero() {
    let (mut r, seed) = common::rng("fresh");
    for dev in common::devices() {
        for &nb in &[1usize, 255, 4095, 4096, 4097] {
            for &n in &[1usize, 3000, 200_003] {
                let data: Vec<f32> = (0..n).map(|_| r.gen::<f32>() * 1.2 - 0.1).collect();
                let want = tally(&data, nb, |x| float_rule_f32(x, 0.0, 1.0, nb));
                let c = ctx(&dev, &format!("fresh {nb} bins"), n, seed);
                let v = DeviceVec::from_slice(&dev, &data).unwrap();
                let bins = Bins::even(nb, 0.0f32, 1.0);
                for round in 0..2 {
                    let h32 = v.histogram(&bins).unwrap();
                    let got: Vec<u64> = h32.to_vec().unwrap().iter().map(|&x| x as u64).collect();
                    assert_eq!(got[..], want[..nb], "u32 counts, round {round}: {c}");
                    assert_eq!(h32.dropped().unwrap(), want[nb], "dropped, round {round}: {c}");
                    let mut h64 = v.histogram_u64(&bins).unwrap();
                    assert_eq!(h64.to_vec().unwrap()[..], want[..nb], "u64 counts, round {round}: {c}");
                    v.histogram_into(&bins, &mut h64).unwrap();
                    let twice: Vec<u64> = want[..nb].iter().map(|&x| 2 * x).collect();
                    assert_eq!(h64.to_vec().unwrap(), twice, "accumulated, round {round}: {c}");
                    assert_eq!(h64.dropped().unwrap(), 2 * want[nb], "dropped accumulated, round {round}: {c}");
                }
            }
        }
    }
}
