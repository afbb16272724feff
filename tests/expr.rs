//! Fused inputs (expressions) against unfused calls and plain Rust, on
//! every device: fused and unfused results bit for bit where the grouping
//! is the same, integers exact, floats within a stated tolerance otherwise.

mod common;

use cuprim::ops::{Abs, Associative, BinaryOp, Cast, Commutative, Monoid, Negate, Square, UnaryOp};
use cuprim::pred::Gt;
use cuprim::prelude::*;
use rand::Rng;

fn rng(tag: &str) -> (common::TestRng, u64) {
    common::rng(&format!("expr-{tag}"))
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Welford's (count, mean, m2) of f64, merged as Chan et al.; the test's
/// one-pass variance.
#[derive(Clone, Copy, Debug)]
struct Welford;
type Moments = (f64, f64, f64);
impl BinaryOp<Moments> for Welford {
    fn apply(&self, a: Moments, b: Moments) -> Moments {
        let n = a.0 + b.0;
        if n == 0.0 {
            return a;
        }
        let d = b.1 - a.1;
        (n, a.1 + d * (b.0 / n), a.2 + b.2 + d * d * (a.0 * b.0 / n))
    }
    fn cuda_expr(&self) -> String {
        "([&] { const double n = a.a0 + b.a0; if (n == 0.0) return a; const double d = b.a1 - a.a1; \
         return cuprim_t3<double, double, double>{n, a.a1 + d * (b.a0 / n), a.a2 + b.a2 + d * d * (a.a0 * b.a0 / n)}; }())"
            .into()
    }
}
impl Associative for Welford {}
impl Commutative for Welford {}
impl Monoid<Moments> for Welford {
    fn identity(&self) -> Moments {
        (0.0, 0.0, 0.0)
    }
}

/// x -> (1, x, 0): one observation.
#[derive(Clone, Copy, Debug)]
struct Observe;
impl UnaryOp<f32> for Observe {
    type Output = Moments;
    fn apply(&self, x: f32) -> Moments {
        (1.0, x as f64, 0.0)
    }
    fn cuda_expr(&self) -> String {
        "cuprim_t3<double, double, double>{1.0, (double)x, 0.0}".into()
    }
}

#[test]
fn dot_product_fused_equals_unfused_bit_for_bit() {
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng("dot");
            let a: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
            let b: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
            let (da, db) = (DeviceVec::from_slice(&dev, &a).unwrap(), DeviceVec::from_slice(&dev, &b).unwrap());
            let ctx = common::ctx(&dev, "dot", n, seed);
            let fused = zip(&da, &db).map(Mul).sum().unwrap();
            let unfused = da.transform2(&db, Mul).unwrap().sum().unwrap();
            assert_eq!(fused.to_bits(), unfused.to_bits(), "{ctx}: fused {fused} unfused {unfused}");
            assert_eq!(
                zip(&da, &db).map(Mul).sum().unwrap().to_bits(),
                fused.to_bits(),
                "{ctx}: run to run"
            );
            let exact: f64 = a.iter().zip(&b).map(|(x, y)| (x * y) as f64).sum();
            assert!((fused as f64 - exact).abs() <= 1e-5 * n as f64 + 1e-6, "{ctx}: {fused} vs {exact}");
            if n > 2 {
                // Equally offset slices keep the vector path (same grouping as
                // the unfused call on the same slices); unequal ones read one
                // element at a time (a different grouping: within tolerance).
                // (The unfused form reduces the same slice of the products,
                // equally offset: a fresh vector would be grouped otherwise.)
                let (sa, sb) = (da.slice(1..).unwrap(), db.slice(1..).unwrap());
                let f = zip(&sa, &sb).map(Mul).sum().unwrap();
                let products = da.transform2(&db, Mul).unwrap();
                assert_eq!(f.to_bits(), products.slice(1..).unwrap().sum().unwrap().to_bits(), "{ctx}: slices");
                let (sa, sb) = (da.slice(1..n - 1).unwrap(), db.slice(2..).unwrap());
                let f = zip(&sa, &sb).map(Mul).sum().unwrap() as f64;
                let exact: f64 = a[1..n - 1].iter().zip(&b[2..]).map(|(x, y)| (x * y) as f64).sum();
                assert!((f - exact).abs() <= 1e-5 * n as f64 + 1e-6, "{ctx}: mixed offsets {f} vs {exact}");
            }
        }
    }
}

#[test]
fn counting_and_constant_match_plain_rust() {
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let ctx = common::ctx(&dev, "counting", n, 0);
            let want: Vec<u8> = (0..n).map(|i| 250u8.wrapping_add(3u8.wrapping_mul(i as u8))).collect();
            assert_eq!(counting(&dev, 250u8, 3, n).to_vec().unwrap(), want, "{ctx} u8");
            assert_eq!(
                counting(&dev, 250u8, 3, n).collect().unwrap().to_vec().unwrap(),
                want,
                "{ctx} u8 collect"
            );
            let sum: i64 = (0..n as i64).map(|i| -7 + 5 * i).sum();
            assert_eq!(counting(&dev, -7i64, 5, n).sum().unwrap(), sum, "{ctx} i64 sum");
            let f: Vec<f32> = (0..n).map(|i| 0.25f32 + 0.1f32 * (i as f32)).collect();
            assert_eq!(bits(&counting(&dev, 0.25f32, 0.1, n).to_vec().unwrap()), bits(&f), "{ctx} f32");
            let h = counting(&dev, f16::from_f32(1.0), f16::from_f32(0.5), n.min(5000))
                .to_vec()
                .unwrap();
            let hw = counting(&Device::host(), f16::from_f32(1.0), f16::from_f32(0.5), n.min(5000))
                .to_vec()
                .unwrap();
            assert_eq!(h, hw, "{ctx} f16 (as the host backend)");
            assert_eq!(constant(&dev, 3u32, n).sum().unwrap(), 3 * n as u32, "{ctx} constant");
            assert_eq!(
                constant(&dev, (2u8, -1.5f64), n).to_vec().unwrap(),
                vec![(2u8, -1.5f64); n],
                "{ctx} tuple constant"
            );
            // Slices shift the sequence.
            if n > 10 {
                let s = counting(&dev, 0u32, 2, n).slice(5..9).unwrap();
                assert_eq!(s.to_vec().unwrap(), vec![10, 12, 14, 16], "{ctx} slice");
            }
        }
    }
}

#[test]
fn maps_compose_and_match_transform() {
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng("map");
            let mut x: Vec<f32> = common::random_vec(&mut r, n);
            if n > 3 {
                x[1] = f32::NAN;
                x[2] = -0.0;
            }
            let v = DeviceVec::from_slice(&dev, &x).unwrap();
            let ctx = common::ctx(&dev, "map", n, seed);
            let fused = v.map(Abs).map(Cast::<f64>::new()).collect().unwrap().to_vec().unwrap();
            let unfused = v.transform(Abs).unwrap().transform(Cast::<f64>::new()).unwrap().to_vec().unwrap();
            let fb: Vec<u64> = fused.iter().map(|x| x.to_bits()).collect();
            let ub: Vec<u64> = unfused.iter().map(|x| x.to_bits()).collect();
            assert_eq!(fb, ub, "{ctx}: map.map vs transform.transform");
            // Reductions over maps: the same grouping as over the buffer.
            let s1 = v.map(Square).reduce(Max).unwrap();
            let s2 = v.transform(Square).unwrap().reduce(Max).unwrap();
            assert_eq!(s1.to_bits(), s2.to_bits(), "{ctx}: max of squares");
            assert_eq!(
                v.map(Negate).min_element().unwrap().map(|(i, _)| i),
                v.transform(Negate).unwrap().min_element().unwrap().map(|(i, _)| i),
                "{ctx}: argmin"
            );
            let (mut index, mut value) = (
                DeviceVec::from_slice(&dev, &[7u64]).unwrap(),
                DeviceVec::from_slice(&dev, &[7.0f32]).unwrap(),
            );
            v.map(Negate).max_element_to(&mut index, &mut value).unwrap();
            let want = v.transform(Negate).unwrap().max_element().unwrap();
            let got = (index.to_vec().unwrap()[0], value.to_vec().unwrap()[0]);
            match want {
                Some((i, x)) => assert!(got.0 == i as u64 && common::same(got.1, x), "{ctx}: argmax to the device"),
                None => assert!(got.0 == u64::MAX && got.1 == f32::NEG_INFINITY, "{ctx}: empty argmax to the device"),
            }
            assert_eq!(
                v.map(Abs).count(Gt(0.5f32)).unwrap(),
                x.iter().filter(|y| y.abs() > 0.5).count(),
                "{ctx}: count"
            );
        }
    }
}

#[test]
fn scans_of_maps_equal_scans_of_transforms() {
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng("scan");
            let x: Vec<f32> = (0..n).map(|_| r.gen_range(-2.0..2.0)).collect();
            let v = DeviceVec::from_slice(&dev, &x).unwrap();
            let ctx = common::ctx(&dev, "scan", n, seed);
            let fused = v.map(Square).scan(Add).unwrap().to_vec().unwrap();
            let unfused = v.transform(Square).unwrap().scan(Add).unwrap().to_vec().unwrap();
            assert_eq!(bits(&fused), bits(&unfused), "{ctx}: inclusive");
            let fused = v.map(Square).exclusive_scan(Add).unwrap().to_vec().unwrap();
            let unfused = v.transform(Square).unwrap().scan_exclusive(Add).unwrap().to_vec().unwrap();
            assert_eq!(bits(&fused), bits(&unfused), "{ctx}: exclusive");
            let k: Vec<u32> = counting(&dev, 1u32, 1, n).scan(Add).unwrap().to_vec().unwrap();
            let kw: Vec<u32> = (1..=n as u32)
                .scan(0u32, |s, i| {
                    *s = s.wrapping_add(i);
                    Some(*s)
                })
                .collect();
            assert_eq!(k, kw, "{ctx}: counting scan");
            if n > 40 {
                let s = v.slice(3..).unwrap();
                let f = s.map(Square).scan(Add).unwrap().to_vec().unwrap();
                let u = s.transform(Square).unwrap().scan(Add).unwrap().to_vec().unwrap();
                // Loads differ (one at a time here), the arithmetic does not.
                assert_eq!(bits(&f), bits(&u), "{ctx}: misaligned slice");
                let total: f64 = x[3..].iter().map(|y| (y * y) as f64).sum();
                assert!((f[f.len() - 1] as f64 - total).abs() <= 1e-3 * total, "{ctx}: total");
            }
        }
    }
}

#[test]
fn permutations_gather_and_check_their_indices() {
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng("perm");
            let x: Vec<i32> = common::random_vec(&mut r, n);
            let m = n + 7;
            let idx: Vec<u32> = (0..m).map(|_| if n == 0 { 0 } else { r.gen_range(0..n as u32) }).collect();
            let (v, di) = (DeviceVec::from_slice(&dev, &x).unwrap(), DeviceVec::from_slice(&dev, &idx).unwrap());
            let ctx = common::ctx(&dev, "permute", n, seed);
            if n == 0 {
                let e = v.permute(&di).sum();
                assert!(matches!(e, Err(Error::IndexOutOfBounds { .. })), "{ctx}: {e:?}");
                continue;
            }
            let want: Vec<i32> = idx.iter().map(|&j| x[j as usize]).collect();
            assert_eq!(v.permute(&di).to_vec().unwrap(), want, "{ctx}");
            assert_eq!(
                v.permute(&di).sum().unwrap(),
                want.iter().fold(0i32, |a, &b| a.wrapping_add(b)),
                "{ctx}: sum"
            );
            assert_eq!(
                v.permute(&di).scan(Add).unwrap().to_vec().unwrap()[m - 1],
                want.iter().fold(0i32, |a, &b| a.wrapping_add(b)),
                "{ctx}: scan"
            );
            // One index out of range: an error, and the inputs are intact.
            let mut bad = idx.clone();
            bad[m / 2] = n as u32;
            let db = DeviceVec::from_slice(&dev, &bad).unwrap();
            for r in [
                v.permute(&db).sum().map(|_| ()),
                v.permute(&db).collect().map(|_| ()),
                v.permute(&db).scan(Add).map(|_| ()),
            ] {
                match r {
                    Err(Error::IndexOutOfBounds { len, .. }) => assert_eq!(len, n, "{ctx}"),
                    other => panic!("{ctx}: expected IndexOutOfBounds, got {other:?}"),
                }
            }
            assert_eq!(v.to_vec().unwrap(), x, "{ctx}: source intact");
            assert_eq!(db.to_vec().unwrap(), bad, "{ctx}: indices intact");
            // The next call on the device is unaffected by the flag.
            assert_eq!(v.permute(&di).to_vec().unwrap(), want, "{ctx}: after an error");
        }
    }
}

#[test]
fn welford_variance_in_one_pass() {
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng("welford");
            let x: Vec<f32> = (0..n).map(|_| r.gen_range(-3.0..5.0)).collect();
            let v = DeviceVec::from_slice(&dev, &x).unwrap();
            let ctx = common::ctx(&dev, "welford", n, seed);
            let (count, mean, m2) = v.map(Observe).reduce(Welford).unwrap();
            assert_eq!(count, n as f64, "{ctx}");
            let again = v.map(Observe).reduce(Welford).unwrap();
            assert_eq!(
                (again.1.to_bits(), again.2.to_bits()),
                (mean.to_bits(), m2.to_bits()),
                "{ctx}: run to run"
            );
            assert_eq!(
                v.transform_reduce(Observe, Welford).unwrap(),
                (count, mean, m2),
                "{ctx}: transform_reduce"
            );
            if n > 0 {
                let mu = x.iter().map(|&y| y as f64).sum::<f64>() / n as f64;
                let var = x.iter().map(|&y| (y as f64 - mu).powi(2)).sum::<f64>();
                assert!((mean - mu).abs() <= 1e-9 * (1.0 + mu.abs()), "{ctx}: mean {mean} vs {mu}");
                assert!((m2 - var).abs() <= 1e-9 * (1.0 + var), "{ctx}: m2 {m2} vs {var}");
            } else {
                assert_eq!((mean, m2), (0.0, 0.0), "{ctx}: empty");
            }
        }
    }
}

#[test]
fn zips_unzip_and_check_their_parts() {
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng("zip");
            let a: Vec<u8> = common::random_vec(&mut r, n);
            let b: Vec<f64> = common::random_vec(&mut r, n);
            let (da, db) = (DeviceVec::from_slice(&dev, &a).unwrap(), DeviceVec::from_slice(&dev, &b).unwrap());
            let ctx = common::ctx(&dev, "zip", n, seed);
            let (ua, ub) = zip(&da, &db).unzip().unwrap();
            assert_eq!(ua.to_vec().unwrap(), a, "{ctx}");
            let ubv = ub.to_vec().unwrap();
            assert!(ubv.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "{ctx}: f64 field");
            let t = zip3(&db, counting(&dev, 0u32, 1, n), &da).to_vec().unwrap();
            assert!(
                t.iter()
                    .enumerate()
                    .all(|(i, &(x, k, y))| x.to_bits() == b[i].to_bits() && k == i as u32 && y == a[i]),
                "{ctx}: zip3"
            );
            let (p, q, s) = zip3(&da, &da, counting(&dev, 5i64, -1, n)).unzip3().unwrap();
            assert_eq!((p.to_vec().unwrap(), q.to_vec().unwrap()), (a.clone(), a.clone()), "{ctx}: unzip3");
            assert_eq!(
                s.to_vec().unwrap(),
                (0..n as i64).map(|i| 5 - i).collect::<Vec<_>>(),
                "{ctx}: unzip3 counting"
            );
            let short = DeviceVec::from_slice(&dev, &a[..n.saturating_sub(1)]).unwrap();
            if n > 0 {
                assert!(
                    matches!(zip(&short, &db).to_vec(), Err(Error::LengthMismatch { .. })),
                    "{ctx}: lengths"
                );
                assert!(
                    matches!(zip(&da, &db).slice(0..n + 1), Err(Error::InvalidArgument(_))),
                    "{ctx}: slice range"
                );
            }
        }
    }
    if let Some(gpu) = common::cuda() {
        let (h, g) = (
            DeviceVec::from_slice(&Device::host(), &[1u32]).unwrap(),
            DeviceVec::from_slice(&gpu, &[1u32]).unwrap(),
        );
        assert!(matches!(zip(&h, &g).sum_first(), Err(Error::DeviceMismatch { .. })));
    }
}

/// `sum` of the first field of a zip: a tuple reduction with a built-in shape.
trait SumFirst {
    fn sum_first(&self) -> Result<u32, Error>;
}
impl<E: Expr<Item = (u32, u32)>> SumFirst for E {
    fn sum_first(&self) -> Result<u32, Error> {
        #[derive(Clone, Copy)]
        struct First;
        impl UnaryOp<(u32, u32)> for First {
            type Output = u32;
            fn apply(&self, x: (u32, u32)) -> u32 {
                x.0
            }
            fn cuda_expr(&self) -> String {
                "x.a0".into()
            }
        }
        self.clone().map(First).sum()
    }
}

#[test]
fn histograms_of_expressions_equal_histograms_of_collected_vectors() {
    use cuprim::algo::histogram::Bins;
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng("hist");
            let a: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
            let b: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
            let (da, db) = (DeviceVec::from_slice(&dev, &a).unwrap(), DeviceVec::from_slice(&dev, &b).unwrap());
            let ctx = common::ctx(&dev, "histogram", n, seed);
            let products = da.transform2(&db, Mul).unwrap();
            for bins in [
                Bins::even(64, -0.5f32, 0.5),
                Bins::even(100_000, -1.0f32, 1.0),
                Bins::edges(&[-0.5f32, -0.1, 0.0, 0.02, 0.3]),
            ] {
                let fused = zip(&da, &db).map(Mul).histogram(&bins).unwrap();
                let plain = products.histogram(&bins).unwrap();
                assert_eq!(fused.to_vec().unwrap(), plain.to_vec().unwrap(), "{ctx}: counts");
                assert_eq!(fused.dropped().unwrap(), plain.dropped().unwrap(), "{ctx}: dropped");
                let wide = zip(&da, &db).map(Mul).histogram_u64(&bins).unwrap().to_vec().unwrap();
                assert_eq!(
                    wide,
                    plain.to_vec().unwrap().iter().map(|&c| c as u64).collect::<Vec<_>>(),
                    "{ctx}: u64"
                );
            }
            let sq = counting(&dev, 0i64, 1, n)
                .map(Square)
                .histogram(Bins::even(7, 0i64, 1 << 20))
                .unwrap()
                .to_vec()
                .unwrap();
            let mut want = vec![0u32; 7];
            for i in 0..n as i64 {
                let x = i * i;
                if x < 1 << 20 {
                    want[(x * 7 / (1 << 20)) as usize] += 1;
                }
            }
            assert_eq!(sq, want, "{ctx}: counting squares");
            if n > 0 {
                let idx = DeviceVec::from_slice(&dev, &[0u32, n as u32]).unwrap();
                let e = da.permute(&idx).histogram(Bins::even(4, -1.0f32, 1.0));
                assert!(matches!(e, Err(Error::IndexOutOfBounds { .. })), "{ctx}: {e:?}");
            }
        }
    }
}

#[test]
fn copy_if_of_expressions_equals_copy_if_of_collected_vectors() {
    use cuprim::pred::{Gt, IsNan};
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng("copy_if");
            let mut a: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
            let b: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
            if n > 5 {
                a[3] = f32::NAN;
            }
            let (da, db) = (DeviceVec::from_slice(&dev, &a).unwrap(), DeviceVec::from_slice(&dev, &b).unwrap());
            let ctx = common::ctx(&dev, "copy_if", n, seed);
            let fused = zip(&da, &db).map(Mul).copy_if(Gt(0.1f32)).unwrap().to_vec().unwrap();
            let plain = da.transform2(&db, Mul).unwrap().copy_if(Gt(0.1f32)).unwrap().to_vec().unwrap();
            assert_eq!(bits(&fused), bits(&plain), "{ctx}");
            let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x * y).filter(|&p| p > 0.1).collect();
            assert_eq!(bits(&fused), bits(&want), "{ctx}: reference");
            assert_eq!(
                zip(&da, &db).map(Mul).copy_if(IsNan).unwrap().len(),
                usize::from(n > 5),
                "{ctx}: NaN"
            );
            let k = counting(&dev, 0u64, 3, n).copy_if(Gt(100u64)).unwrap().to_vec().unwrap();
            assert_eq!(
                k,
                (0..n as u64).map(|i| 3 * i).filter(|&x| x > 100).collect::<Vec<_>>(),
                "{ctx}: counting"
            );
            if n > 2 {
                let s = da.slice(1..).unwrap();
                let f = s.map(Abs).copy_if(Gt(0.5f32)).unwrap().to_vec().unwrap();
                let p = s.transform(Abs).unwrap().copy_if(Gt(0.5f32)).unwrap().to_vec().unwrap();
                assert_eq!(bits(&f), bits(&p), "{ctx}: misaligned slice");
                let idx = DeviceVec::from_slice(&dev, &[0u32, n as u32 + 4]).unwrap();
                assert!(
                    matches!(da.permute(&idx).copy_if(Gt(0.0f32)), Err(Error::IndexOutOfBounds { .. })),
                    "{ctx}: permute"
                );
            }
        }
    }
}
