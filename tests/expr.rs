//! Fused inputs (expressions) against unfused calls and plain Rust, on
//! every device: fused and unfused results bit for bit where the grouping
//! is the same, integers exact, floats within a stated tolerance otherwise.

mod common;

use common::{MinMax, Sum3};

use cuprim::ops::{Abs, Associative, BinaryOp, Cast, Commutative, Max, Monoid, Negate, Square, UnaryOp};
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

/// One index out of range makes every fused consumer fail the same way,
/// with its inputs intact.
fn expect_oob<T>(r: cuprim::Result<T>, len: usize, ctx: &str, what: &str) {
    match r {
        Err(Error::IndexOutOfBounds { len: l, .. }) => assert_eq!(l, len, "{ctx}: {what}"),
        Err(e) => panic!("{ctx}: {what}: expected IndexOutOfBounds, got {e:?}"),
        Ok(_) => panic!("{ctx}: {what}: expected IndexOutOfBounds, got Ok"),
    }
}

#[test]
fn partition_copy_and_copy_if_into_of_expressions_equal_the_buffer_forms() {
    use cuprim::pred::Lt;
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng("partition");
            let a: Vec<i32> = (0..n).map(|_| r.gen_range(-1000..1000)).collect();
            let da = DeviceVec::from_slice(&dev, &a).unwrap();
            let ctx = common::ctx(&dev, "partition_copy", n, seed);
            // Fused: the map is computed where the select kernel reads it.
            let (yes, no) = da.map(Negate).partition_copy(Lt(17)).unwrap();
            let mut plain = da.transform(Negate).unwrap();
            let split = plain.partition(Lt(17)).unwrap();
            let plain = plain.to_vec().unwrap();
            assert_eq!(yes.to_vec().unwrap(), plain[..split], "{ctx}: selected");
            assert_eq!(no.to_vec().unwrap(), plain[split..], "{ctx}: rejected");
            let want: (Vec<i32>, Vec<i32>) = a.iter().map(|x| x.wrapping_neg()).partition(|&x| x < 17);
            assert_eq!((yes.to_vec().unwrap(), no.to_vec().unwrap()), want, "{ctx}: reference");
            // The buffer form is the one-node expression.
            let (by, bn) = da.partition_copy(Lt(17)).unwrap();
            let want: (Vec<i32>, Vec<i32>) = a.iter().partition(|&&x| x < 17);
            assert_eq!((by.to_vec().unwrap(), bn.to_vec().unwrap()), want, "{ctx}: buffer");
            // Counting: no buffer at all; a misaligned slice.
            let (y, z) = counting(&dev, 0u64, 3, n).partition_copy(Lt(100u64)).unwrap();
            assert_eq!(y.len() + z.len(), n, "{ctx}: counting");
            assert_eq!(
                y.to_vec().unwrap(),
                (0..n as u64).map(|i| 3 * i).filter(|&x| x < 100).collect::<Vec<_>>(),
                "{ctx}"
            );
            if n > 2 {
                let s = da.slice(1..).unwrap();
                let (fy, fz) = s.map(Abs).partition_copy(Lt(300)).unwrap();
                let (py, pz) = s.transform(Abs).unwrap().partition_copy(Lt(300)).unwrap();
                assert_eq!(
                    (fy.to_vec().unwrap(), fz.to_vec().unwrap()),
                    (py.to_vec().unwrap(), pz.to_vec().unwrap()),
                    "{ctx}: slice"
                );
            }
            // copy_if_into: the count on the device.
            let mut out = DeviceVec::<i32>::zeros(&dev, n + 3).unwrap();
            let mut count = DeviceVec::<u64>::zeros(&dev, 1).unwrap();
            da.map(Negate).copy_if_into(Lt(17), &mut out, &mut count).unwrap();
            assert_eq!(count.to_vec().unwrap(), vec![split as u64], "{ctx}: copy_if_into count");
            assert_eq!(out.to_vec().unwrap()[..split], plain[..split], "{ctx}: copy_if_into");
            let mut short = DeviceVec::<i32>::zeros(&dev, n.saturating_sub(1)).unwrap();
            if n > 0 {
                assert!(matches!(
                    da.map(Negate).copy_if_into(Lt(17), &mut short, &mut count),
                    Err(Error::InvalidArgument(_))
                ));
            }
            // A bad index: an error, inputs intact.
            let idx: Vec<u32> = (0..n as u32 + 2).map(|i| if n == 0 { 0 } else { i % n as u32 }).collect();
            let mut bad = idx.clone();
            let at = bad.len() / 2;
            bad[at] = n as u32;
            let db = DeviceVec::from_slice(&dev, &bad).unwrap();
            expect_oob(da.permute(&db).partition_copy(Lt(0)), n, &ctx, "partition_copy");
            expect_oob(
                da.permute(&db)
                    .copy_if_into(Lt(0), &mut DeviceVec::<i32>::zeros(&dev, n + 2).unwrap(), &mut count),
                n,
                &ctx,
                "copy_if_into",
            );
            assert_eq!(da.to_vec().unwrap(), a, "{ctx}: source intact");
            assert_eq!(db.to_vec().unwrap(), bad, "{ctx}: indices intact");
        }
    }
}

#[test]
fn collect_into_unzip_into_and_index_expressions_gather() {
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng("collect_into");
            let x: Vec<f32> = (0..n).map(|_| r.gen_range(-4.0..4.0)).collect();
            let dx = DeviceVec::from_slice(&dev, &x).unwrap();
            let ctx = common::ctx(&dev, "collect_into", n, seed);
            // A transform into an existing buffer, and into a misaligned slice of one.
            let mut out = DeviceVec::<f32>::filled(&dev, n, 7.0).unwrap();
            dx.map(Square).collect_into(&mut out).unwrap();
            assert_eq!(
                bits(&out.to_vec().unwrap()),
                bits(&dx.transform(Square).unwrap().to_vec().unwrap()),
                "{ctx}"
            );
            let mut wide = DeviceVec::<f32>::filled(&dev, n + 1, 7.0).unwrap();
            dx.map(Square).collect_into(&mut wide.slice_mut(1..).unwrap()).unwrap();
            let w = wide.to_vec().unwrap();
            assert_eq!(w[0], 7.0, "{ctx}: before the slice");
            assert_eq!(bits(&w[1..]), bits(&out.to_vec().unwrap()), "{ctx}: slice");
            assert!(matches!(dx.map(Square).collect_into(&mut wide), Err(Error::LengthMismatch { .. })));
            // unzip_into: two outputs in one pass.
            let (mut a, mut b) = (DeviceVec::<u32>::zeros(&dev, n).unwrap(), DeviceVec::<f32>::zeros(&dev, n).unwrap());
            zip(counting(&dev, 3u32, 2, n), &dx).unzip_into(&mut a, &mut b).unwrap();
            assert_eq!(
                a.to_vec().unwrap(),
                (0..n as u32).map(|i| 3 + 2 * i).collect::<Vec<_>>(),
                "{ctx}: unzip a"
            );
            assert_eq!(bits(&b.to_vec().unwrap()), bits(&x), "{ctx}: unzip b");
            // Index expressions: reversed, strided and mapped indices against
            // a gather of the collected indices.
            if n == 0 {
                expect_oob(dx.permute_by(counting(&dev, 0u32, 1, 3)).sum(), 0, &ctx, "empty source");
                assert!(dx.permute_by(counting(&dev, 0u32, 1, 0)).to_vec().unwrap().is_empty());
                continue;
            }
            let rev = counting(&dev, n as u64 - 1, u64::MAX, n);
            let want: Vec<f32> = x.iter().rev().copied().collect();
            assert_eq!(bits(&dx.permute_by(rev).to_vec().unwrap()), bits(&want), "{ctx}: reversed");
            let idx = counting(&dev, 0u32, 7, n + 5).map(Rem(n as u32));
            let collected = idx.collect().unwrap();
            let fused = dx.permute_by(idx).collect().unwrap().to_vec().unwrap();
            assert_eq!(
                bits(&fused),
                bits(&dx.gather(&collected).unwrap().to_vec().unwrap()),
                "{ctx}: mapped indices"
            );
            let mut into = DeviceVec::<f32>::zeros(&dev, n + 5).unwrap();
            dx.permute_by(idx).collect_into(&mut into).unwrap();
            assert_eq!(bits(&into.to_vec().unwrap()), bits(&fused), "{ctx}: gather into");
            assert_eq!(
                dx.permute_by(idx).sum().unwrap().to_bits(),
                dx.gather(&collected).unwrap().sum().unwrap().to_bits(),
                "{ctx}: fused gather-reduce"
            );
            // Indices that are themselves gathered: v[w[i]] with w = idx permuted.
            let perm = DeviceVec::from_slice(&dev, &(0..n as u64).rev().collect::<Vec<_>>()).unwrap();
            let nested = dx.permute_by(collected.permute(&perm)).to_vec().unwrap();
            let cidx = collected.to_vec().unwrap();
            let want: Vec<f32> = (0..n).map(|i| x[cidx[n - 1 - i] as usize]).collect();
            assert_eq!(bits(&nested), bits(&want), "{ctx}: nested");
            // Out of range: n itself, through a map; inputs intact.
            let bad = counting(&dev, 0u32, 1, n + 1);
            expect_oob(dx.permute_by(bad).sum(), n, &ctx, "sum");
            expect_oob(dx.permute_by(bad).collect(), n, &ctx, "collect");
            expect_oob(
                dx.permute_by(bad).collect_into(&mut DeviceVec::<f32>::zeros(&dev, n + 1).unwrap()),
                n,
                &ctx,
                "collect_into",
            );
            expect_oob(dx.permute_by(bad).scan(Add), n, &ctx, "scan");
            assert_eq!(bits(&dx.to_vec().unwrap()), bits(&x), "{ctx}: source intact");
            // The next call is unaffected.
            assert_eq!(
                bits(&dx.permute_by(rev).to_vec().unwrap()),
                bits(&want_rev(&x)),
                "{ctx}: after an error"
            );
        }
    }
}

fn want_rev(x: &[f32]) -> Vec<f32> {
    x.iter().rev().copied().collect()
}

/// `x % m` on u32.
#[derive(Clone, Copy, Debug)]
struct Rem(u32);
impl UnaryOp<u32> for Rem {
    type Output = u32;
    fn apply(&self, x: u32) -> u32 {
        x % self.0
    }
    fn cuda_expr(&self) -> String {
        format!("x % {}u", self.0)
    }
}

#[test]
fn searches_with_expression_queries_equal_searches_of_collected_queries() {
    use cuprim::algo::search::Mode;
    use cuprim::cmp::Greater;
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng("search");
            let mut s: Vec<i32> = (0..n).map(|_| r.gen_range(-5000..5000)).collect();
            s.sort();
            let ds = DeviceVec::from_slice(&dev, &s).unwrap();
            let ctx = common::ctx(&dev, "search", n, seed);
            // Few queries (a plain bisection) and many (the index).
            for m in [0usize, 5, n + 9] {
                let q: Vec<i32> = (0..m).map(|_| r.gen_range(-6000..6000)).collect();
                let dq = DeviceVec::from_slice(&dev, &q).unwrap();
                let plain_q = dq.transform(Negate).unwrap();
                let fused = dq.map(Negate);
                let ctx = format!("{ctx}, m={m}");
                assert_eq!(
                    fused.lower_bound_in(&ds).unwrap().to_vec().unwrap(),
                    ds.lower_bound(&plain_q).unwrap().to_vec().unwrap(),
                    "{ctx}: lower"
                );
                assert_eq!(
                    fused.upper_bound_in(&ds).unwrap().to_vec().unwrap(),
                    ds.upper_bound(&plain_q).unwrap().to_vec().unwrap(),
                    "{ctx}: upper"
                );
                let found = fused.binary_search_in(&ds).unwrap().to_vec().unwrap();
                assert_eq!(found, ds.binary_search(&plain_q).unwrap().to_vec().unwrap(), "{ctx}: exact");
                let want: Vec<u32> = q
                    .iter()
                    .map(|&x| match s.binary_search(&x.wrapping_neg()) {
                        Ok(_) => s.partition_point(|&e| e < x.wrapping_neg()) as u32,
                        Err(_) => u32::MAX,
                    })
                    .collect();
                assert_eq!(found, want, "{ctx}: reference");
                // Counting queries, u64 answers, a reversed order.
                let c = counting(&dev, -6000i32, 13, m);
                let cq = c.collect().unwrap();
                assert_eq!(
                    c.search_in_with::<u64, _>(&ds, cuprim::cmp::Less, Mode::Upper)
                        .unwrap()
                        .to_vec()
                        .unwrap(),
                    ds.search_with::<u64, _, _>(&cq, cuprim::cmp::Less, Mode::Upper)
                        .unwrap()
                        .to_vec()
                        .unwrap(),
                    "{ctx}: counting"
                );
                let rs: Vec<i32> = s.iter().rev().copied().collect();
                let drs = DeviceVec::from_slice(&dev, &rs).unwrap();
                assert_eq!(
                    fused
                        .search_in_with::<u32, _>(&drs, Greater, Mode::Lower)
                        .unwrap()
                        .to_vec()
                        .unwrap(),
                    drs.lower_bound_by(&plain_q, Greater).unwrap().to_vec().unwrap(),
                    "{ctx}: greater"
                );
                // Permuted queries: good, then one bad index.
                if m > 0 {
                    let idx: Vec<u32> = (0..m as u32).rev().collect();
                    let di = DeviceVec::from_slice(&dev, &idx).unwrap();
                    assert_eq!(
                        dq.permute(&di).lower_bound_in(&ds).unwrap().to_vec().unwrap(),
                        ds.lower_bound(&dq.gather(&di).unwrap()).unwrap().to_vec().unwrap(),
                        "{ctx}: permuted"
                    );
                    let mut bad = idx.clone();
                    bad[m / 2] = m as u32;
                    let db = DeviceVec::from_slice(&dev, &bad).unwrap();
                    expect_oob(dq.permute(&db).lower_bound_in(&ds), m, &ctx, "lower_bound_in");
                    expect_oob(dq.permute(&db).binary_search_in(&ds), m, &ctx, "binary_search_in");
                    assert_eq!(dq.to_vec().unwrap(), q, "{ctx}: queries intact");
                    assert_eq!(db.to_vec().unwrap(), bad, "{ctx}: indices intact");
                    assert_eq!(ds.to_vec().unwrap(), s, "{ctx}: data intact");
                }
            }
        }
    }
}

/// `x / d` on u32: runs of `d` equal keys from a counting sequence.
#[derive(Clone, Copy, Debug)]
struct DivBy(u32);
impl UnaryOp<u32> for DivBy {
    type Output = u32;
    fn apply(&self, x: u32) -> u32 {
        x / self.0
    }
    fn cuda_expr(&self) -> String {
        format!("x / {}u", self.0)
    }
}

#[test]
fn scan_by_key_of_expressions_equals_scan_by_key_of_collected_vectors() {
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng("scan_by_key");
            let x: Vec<f32> = (0..n).map(|_| r.gen_range(-2.0..2.0)).collect();
            let k: Vec<u8> = (0..n).map(|_| r.gen_range(0..3u8)).collect();
            let (dx, dk) = (DeviceVec::from_slice(&dev, &x).unwrap(), DeviceVec::from_slice(&dev, &k).unwrap());
            let ctx = common::ctx(&dev, "scan_by_key", n, seed);
            // Fused values (a map), buffer keys: the same bits as the
            // collected values (the same grouping).
            let fused = dx.map(Square).scan_by_key(&dk, Add).unwrap().to_vec().unwrap();
            let plain = dx.transform(Square).unwrap().scan_by_key(&dk, Add).unwrap().to_vec().unwrap();
            assert_eq!(bits(&fused), bits(&plain), "{ctx}: values");
            // Computed keys (runs of 5) and computed values: integers, exact.
            let keys = counting(&dev, 0u32, 1, n).map(DivBy(5));
            let vals = counting(&dev, 1i64, 3, n);
            let got = vals.scan_by_key(keys, Add).unwrap().to_vec().unwrap();
            let mut want = Vec::with_capacity(n);
            let mut acc = 0i64;
            for i in 0..n {
                let v = 1 + 3 * i as i64;
                acc = if i % 5 == 0 { v } else { acc + v };
                want.push(acc);
            }
            assert_eq!(got, want, "{ctx}: counting keys and values");
            assert_eq!(
                got,
                vals.collect()
                    .unwrap()
                    .scan_by_key(&keys.collect().unwrap(), Add)
                    .unwrap()
                    .to_vec()
                    .unwrap(),
                "{ctx}: collected"
            );
            // A misaligned slice of the keys and a zip-map of values.
            if n > 3 {
                let ks = dk.slice(1..).unwrap();
                let xs = dx.slice(..n - 1).unwrap();
                let f = zip(&xs, &xs).map(Mul).scan_by_key(&ks, Max).unwrap().to_vec().unwrap();
                let p = xs.transform2(&xs, Mul).unwrap().scan_by_key(&ks, Max).unwrap().to_vec().unwrap();
                assert_eq!(bits(&f), bits(&p), "{ctx}: slices");
            }
            // Lengths must agree; a bad index in either input is an error.
            assert!(matches!(
                dx.map(Square).scan_by_key(counting(&dev, 0u32, 1, n + 1), Add),
                Err(Error::LengthMismatch { .. })
            ));
            let bad: Vec<u32> = (0..n as u32).map(|i| if i == n as u32 / 2 { n as u32 } else { i }).collect();
            let db = DeviceVec::from_slice(&dev, &bad).unwrap();
            if n > 0 {
                expect_oob(dx.permute(&db).scan_by_key(&dk, Add), n, &ctx, "values");
                expect_oob(dx.map(Square).scan_by_key(dk.permute(&db), Add), n, &ctx, "keys");
            }
            assert_eq!(bits(&dx.to_vec().unwrap()), bits(&x), "{ctx}: values intact");
            assert_eq!(dk.to_vec().unwrap(), k, "{ctx}: keys intact");
        }
    }
}

/// scan_by_key past 2^23 elements (the chunk kernel) of expressions:
/// computed keys in runs of 10^5 (crossing chunks) and computed values,
/// a fused map of buffer values against its collected form (same bits),
/// and a bad index in either input.
#[test]
fn scan_by_key_of_expressions_by_chunks() {
    for dev in common::devices() {
        for n in common::capped(&[(1 << 23) + 5]) {
            let (mut r, seed) = rng("scan_by_key chunks");
            let ctx = common::ctx(&dev, "scan_by_key chunks", n, seed);
            let keys = counting(&dev, 0u32, 1, n).map(DivBy(100_000));
            let vals = counting(&dev, 1i64, 3, n);
            let got = vals.scan_by_key(keys, Add).unwrap().to_vec().unwrap();
            let mut acc = 0i64;
            let want: Vec<i64> = (0..n)
                .map(|i| {
                    let v = 1 + 3 * i as i64;
                    acc = if i % 100_000 == 0 { v } else { acc + v };
                    acc
                })
                .collect();
            assert_eq!(got, want, "{ctx}: counting keys and values");
            let x: Vec<f32> = (0..n).map(|_| r.gen_range(-2.0..2.0)).collect();
            let k: Vec<u8> = (0..n).map(|i| (i / 70_000) as u8).collect();
            let (dx, dk) = (DeviceVec::from_slice(&dev, &x).unwrap(), DeviceVec::from_slice(&dev, &k).unwrap());
            let fused = dx.map(Square).scan_by_key(&dk, Add).unwrap().to_vec().unwrap();
            let plain = dx.transform(Square).unwrap().scan_by_key(&dk, Add).unwrap().to_vec().unwrap();
            assert_eq!(bits(&fused), bits(&plain), "{ctx}: fused values");
            let bad: Vec<u32> = (0..n as u32).map(|i| if i == n as u32 / 2 { n as u32 } else { i }).collect();
            let db = DeviceVec::from_slice(&dev, &bad).unwrap();
            expect_oob(dx.permute(&db).scan_by_key(&dk, Add), n, &ctx, "values");
            expect_oob(dx.map(Square).scan_by_key(dk.permute(&db), Add), n, &ctx, "keys");
            assert_eq!(dk.to_vec().unwrap(), k, "{ctx}: keys intact");
        }
    }
}

/// The bits of `v` with every NaN written as one canonical NaN.
fn bits_any_nan(v: &[f32]) -> Vec<u32> {
    v.iter()
        .map(|x| if x.is_nan() { f32::NAN.to_bits() } else { x.to_bits() })
        .collect()
}

fn bits64(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Plain Rust runs of equal consecutive keys: (first key, start, end).
fn runs_of<K: PartialEq + Copy>(k: &[K]) -> Vec<(K, usize, usize)> {
    let mut out: Vec<(K, usize, usize)> = Vec::new();
    for (i, &x) in k.iter().enumerate() {
        match out.last_mut() {
            Some(r) if k[i - 1] == x => r.2 = i + 1,
            _ => out.push((x, i, i + 1)),
        }
    }
    out
}

#[test]
fn by_key_families_of_expressions_equal_the_buffer_forms() {
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng("by_key");
            let x: Vec<f32> = (0..n).map(|_| r.gen_range(-2.0..2.0)).collect();
            // Runs of 1 to 6 keys, signs flipping inside runs (Abs joins them).
            let mut k: Vec<i32> = Vec::with_capacity(n);
            while k.len() < n {
                let (v, len) = (r.gen_range(0..4i32), r.gen_range(1..7usize));
                for _ in 0..len.min(n - k.len()) {
                    k.push(if r.gen_range(0..2u8) == 0 { v } else { -v });
                }
            }
            let (dx, dk) = (DeviceVec::from_slice(&dev, &x).unwrap(), DeviceVec::from_slice(&dev, &k).unwrap());
            let ctx = common::ctx(&dev, "by_key", n, seed);
            let ka = dk.transform(Abs).unwrap();
            let sq = dx.transform(Square).unwrap();

            // reduce_by_key: computed keys and values, the same bits as collected.
            let (fk, fv) = dk.map(Abs).reduce_by_key(dx.map(Square), Add).unwrap();
            let (pk, pv) = ka.reduce_by_key(&sq, Add).unwrap();
            assert_eq!(fk.to_vec().unwrap(), pk.to_vec().unwrap(), "{ctx}: reduce keys");
            assert_eq!(bits(&fv.to_vec().unwrap()), bits(&pv.to_vec().unwrap()), "{ctx}: reduce values");
            let abs: Vec<i32> = k.iter().map(|v| v.abs()).collect();
            let runs = runs_of(&abs);
            assert_eq!(fk.len(), runs.len(), "{ctx}: runs");
            // Buffer keys, expression values; and the _into form.
            let (bk, bv) = dk.lazy().reduce_by_key(dx.map(Square), Add).unwrap();
            let (qk, qv) = dk.reduce_by_key(&sq, Add).unwrap();
            assert_eq!(bk.to_vec().unwrap(), qk.to_vec().unwrap(), "{ctx}: buffer keys");
            assert_eq!(
                bits(&bv.to_vec().unwrap()),
                bits(&qv.to_vec().unwrap()),
                "{ctx}: buffer keys, values"
            );
            let (mut ko, mut vo) = (DeviceVec::<i32>::zeros(&dev, n).unwrap(), DeviceVec::<f32>::zeros(&dev, n).unwrap());
            let mut count = DeviceVec::<u64>::zeros(&dev, 1).unwrap();
            dk.map(Abs)
                .reduce_by_key_into(dx.map(Square), Add, &mut ko, &mut vo, &mut count)
                .unwrap();
            let c = count.to_vec().unwrap()[0] as usize;
            assert_eq!(c, runs.len(), "{ctx}: into count");
            assert_eq!(ko.to_vec().unwrap()[..c], pk.to_vec().unwrap()[..], "{ctx}: into keys");
            assert_eq!(bits(&vo.to_vec().unwrap()[..c]), bits(&pv.to_vec().unwrap()), "{ctx}: into values");
            assert!(
                dk.map(Abs)
                    .reduce_by_key_into(
                        dx.map(Square),
                        Add,
                        &mut DeviceVec::<i32>::zeros(&dev, n.saturating_sub(1)).unwrap(),
                        &mut vo,
                        &mut count
                    )
                    .is_err()
                    || n == 0
            );

            // Counting keys (runs of 7) and counting values: exact integers.
            let keys = counting(&dev, 0u32, 1, n).map(DivBy(7));
            let (ck, cv) = keys.reduce_by_key(counting(&dev, 1i64, 2, n), Add).unwrap();
            let groups = n.div_ceil(7);
            let want: Vec<i64> = (0..groups)
                .map(|g| (g * 7..((g + 1) * 7).min(n)).map(|i| 1 + 2 * i as i64).sum())
                .collect();
            assert_eq!(ck.to_vec().unwrap(), (0..groups as u32).collect::<Vec<_>>(), "{ctx}: counting keys");
            assert_eq!(cv.to_vec().unwrap(), want, "{ctx}: counting values");

            // Tuple values, written unzipped: (min, max) per run, exact.
            let (uk, lo, hi) = dk.map(Abs).reduce_by_key_unzip(zip(&dx, &dx), MinMax).unwrap();
            assert_eq!(uk.to_vec().unwrap(), pk.to_vec().unwrap(), "{ctx}: unzip keys");
            let want_lo: Vec<f32> = runs
                .iter()
                .map(|&(_, s, e)| x[s..e].iter().copied().fold(f32::INFINITY, f32::min))
                .collect();
            let want_hi: Vec<f32> = runs
                .iter()
                .map(|&(_, s, e)| x[s..e].iter().copied().fold(f32::NEG_INFINITY, f32::max))
                .collect();
            assert_eq!(bits(&lo.to_vec().unwrap()), bits(&want_lo), "{ctx}: unzip min");
            assert_eq!(bits(&hi.to_vec().unwrap()), bits(&want_hi), "{ctx}: unzip max");
            // Triples: integer fields exact, the f64 field within rounding of a
            // sequential sum (a 24-byte value takes smaller tiles than an f64,
            // so runs that cross tiles are grouped differently).
            let xd = dx.map(Cast::<f64>::new());
            let t = zip3(constant(&dev, 1u32, n), xd, counting(&dev, 0i64, 1, n));
            let (tk, tn, ts, ti) = dk.map(Abs).reduce_by_key_unzip3(t, Sum3).unwrap();
            assert_eq!(tk.to_vec().unwrap(), pk.to_vec().unwrap(), "{ctx}: unzip3 keys");
            let lengths: Vec<u32> = runs.iter().map(|&(_, s, e)| (e - s) as u32).collect();
            assert_eq!(tn.to_vec().unwrap(), lengths, "{ctx}: unzip3 counts");
            let idx_sums: Vec<i64> = runs.iter().map(|&(_, s, e)| (s as i64..e as i64).sum()).collect();
            assert_eq!(ti.to_vec().unwrap(), idx_sums, "{ctx}: unzip3 index sums");
            for (r, (&(_, s, e), got)) in runs.iter().zip(ts.to_vec().unwrap()).enumerate() {
                let want: f64 = x[s..e].iter().map(|&v| v as f64).sum();
                let scale: f64 = x[s..e].iter().map(|&v| (v as f64).abs()).sum();
                assert!((got - want).abs() <= 1e-14 * scale, "{ctx}: unzip3 sum of run {r}: {got} vs {want}");
            }

            // unique, unique_count, unique_into, unique_by_key(_unzip), run lengths.
            let want_keys: Vec<i32> = runs.iter().map(|r| r.0).collect();
            assert_eq!(dk.map(Abs).unique().unwrap().to_vec().unwrap(), want_keys, "{ctx}: unique");
            assert_eq!(dk.map(Abs).unique_count().unwrap(), runs.len(), "{ctx}: unique_count");
            let mut uo = DeviceVec::<i32>::zeros(&dev, n).unwrap();
            dk.map(Abs).unique_into(&mut uo, &mut count).unwrap();
            assert_eq!(count.to_vec().unwrap(), vec![runs.len() as u64], "{ctx}: unique_into count");
            assert_eq!(uo.to_vec().unwrap()[..runs.len()], want_keys[..], "{ctx}: unique_into");
            let heads: Vec<u64> = runs.iter().map(|r| r.1 as u64).collect();
            let (hk, hv) = dk.map(Abs).unique_by_key(counting(&dev, 0u64, 1, n)).unwrap();
            assert_eq!(
                (hk.to_vec().unwrap(), hv.to_vec().unwrap()),
                (want_keys.clone(), heads.clone()),
                "{ctx}: unique_by_key"
            );
            let (zk, za, zb) = dk.map(Abs).unique_by_key_unzip(zip(counting(&dev, 0u64, 1, n), &dx)).unwrap();
            let firsts: Vec<f32> = runs.iter().map(|r| x[r.1]).collect();
            assert_eq!(zk.to_vec().unwrap(), want_keys, "{ctx}: unique_by_key_unzip keys");
            assert_eq!(za.to_vec().unwrap(), heads, "{ctx}: unique_by_key_unzip a");
            assert_eq!(bits(&zb.to_vec().unwrap()), bits(&firsts), "{ctx}: unique_by_key_unzip b");
            let (rk, rl) = dk.map(Abs).run_length_encode().unwrap();
            assert_eq!(
                (rk.to_vec().unwrap(), rl.to_vec().unwrap()),
                (want_keys.clone(), lengths.clone()),
                "{ctx}: rle"
            );
            let (rk, rl) = dk.map(Abs).run_length_encode_with::<u64>().unwrap();
            let l64: Vec<u64> = lengths.iter().map(|&l| l as u64).collect();
            assert_eq!(
                (rk.to_vec().unwrap(), rl.to_vec().unwrap()),
                (want_keys.clone(), l64),
                "{ctx}: rle u64"
            );
            // A misaligned slice of keys with an equally long slice of values.
            if n > 3 {
                let (ks, xs) = (dk.slice(1..).unwrap(), dx.slice(..n - 1).unwrap());
                let (a, b) = ks.map(Abs).reduce_by_key(xs.map(Square), Max).unwrap();
                let (c, d) = ks
                    .transform(Abs)
                    .unwrap()
                    .reduce_by_key(&xs.transform(Square).unwrap(), Max)
                    .unwrap();
                assert_eq!(a.to_vec().unwrap(), c.to_vec().unwrap(), "{ctx}: slice keys");
                assert_eq!(bits(&b.to_vec().unwrap()), bits(&d.to_vec().unwrap()), "{ctx}: slice values");
            }

            // Errors: lengths, and a bad permutation index in keys or values.
            assert!(matches!(
                dk.map(Abs).reduce_by_key(counting(&dev, 0u32, 1, n + 1), Add),
                Err(Error::LengthMismatch { .. })
            ));
            if n > 0 {
                let bad: Vec<u32> = (0..n as u32).map(|i| if i == n as u32 / 2 { n as u32 } else { i }).collect();
                let db = DeviceVec::from_slice(&dev, &bad).unwrap();
                expect_oob(dk.permute(&db).reduce_by_key(&dx, Add), n, &ctx, "reduce keys");
                expect_oob(dk.lazy().reduce_by_key(dx.permute(&db), Add), n, &ctx, "reduce values");
                expect_oob(dk.permute(&db).unique(), n, &ctx, "unique");
                expect_oob(dk.permute(&db).unique_count(), n, &ctx, "unique_count");
                expect_oob(dk.lazy().unique_by_key(dx.permute(&db)), n, &ctx, "unique_by_key");
                expect_oob(dk.permute(&db).run_length_encode(), n, &ctx, "rle");
                expect_oob(dk.lazy().reduce_by_key_unzip(zip(&dx, dx.permute(&db)), MinMax), n, &ctx, "unzip");
            }
            assert_eq!(bits(&dx.to_vec().unwrap()), bits(&x), "{ctx}: values intact");
            assert_eq!(dk.to_vec().unwrap(), k, "{ctx}: keys intact");
        }
    }
}

#[test]
fn segmented_reductions_of_expressions_equal_the_buffer_forms() {
    for dev in common::devices() {
        for n in common::capped(common::SIZES) {
            let (mut r, seed) = rng("segmented");
            let x: Vec<f32> = (0..n).map(|_| r.gen_range(-2.0..2.0)).collect();
            // Segments of 0 to 3000 elements (empty ones included).
            let mut offsets = vec![0u32];
            while (*offsets.last().unwrap() as usize) < n {
                let len = [0usize, 1, 5, 40, 3000][r.gen_range(0..5usize)];
                offsets.push((*offsets.last().unwrap() as usize + len).min(n) as u32);
            }
            let (dx, doff) = (
                DeviceVec::from_slice(&dev, &x).unwrap(),
                DeviceVec::from_slice(&dev, &offsets).unwrap(),
            );
            let ctx = common::ctx(&dev, "segmented", n, seed);
            let sq = dx.transform(Square).unwrap();
            let f = dx.map(Square).segmented_reduce(&doff, Add).unwrap().to_vec().unwrap();
            let p = sq.segmented_reduce(&doff, Add).unwrap().to_vec().unwrap();
            assert_eq!(bits(&f), bits(&p), "{ctx}: map");
            let f = zip(&dx, &dx).map(Mul).segmented_sum(&doff).unwrap().to_vec().unwrap();
            assert_eq!(bits(&f), bits(&p), "{ctx}: zip map");
            for greatest in [false, true] {
                let (fe, pe) = if greatest {
                    (
                        dx.map(Square).segmented_max_element(&doff).unwrap(),
                        sq.segmented_max_element(&doff).unwrap(),
                    )
                } else {
                    (
                        dx.map(Square).segmented_min_element(&doff).unwrap(),
                        sq.segmented_min_element(&doff).unwrap(),
                    )
                };
                assert_eq!(
                    bits(&fe.values.to_vec().unwrap()),
                    bits(&pe.values.to_vec().unwrap()),
                    "{ctx}: extreme values"
                );
                assert_eq!(fe.indices.to_vec().unwrap(), pe.indices.to_vec().unwrap(), "{ctx}: extreme indices");
            }
            // Counting values: exact.
            let c = counting(&dev, 0u64, 1, n).segmented_sum(&doff).unwrap().to_vec().unwrap();
            let want: Vec<u64> = offsets.windows(2).map(|w| (w[0] as u64..w[1] as u64).sum()).collect();
            assert_eq!(c, want, "{ctx}: counting");
            // Misaligned slices: the expression path's element loads.
            if n > 3 {
                let xs = dx.slice(1..).unwrap();
                let off2: Vec<u32> = offsets.iter().map(|&o| o.min(n as u32 - 1)).collect();
                let doff2 = DeviceVec::from_slice(&dev, &off2).unwrap();
                let f = zip(&xs, &xs).map(Mul).segmented_reduce(&doff2, Add).unwrap().to_vec().unwrap();
                let p = xs
                    .transform2(&xs, Mul)
                    .unwrap()
                    .segmented_reduce(&doff2, Add)
                    .unwrap()
                    .to_vec()
                    .unwrap();
                assert_eq!(bits(&f), bits(&p), "{ctx}: slices");
            }
            // Errors: a bad index is IndexOutOfBounds, bad offsets InvalidArgument.
            if n > 0 {
                let bad: Vec<u32> = (0..n as u32).map(|i| if i == n as u32 / 2 { n as u32 } else { i }).collect();
                let db = DeviceVec::from_slice(&dev, &bad).unwrap();
                expect_oob(dx.permute(&db).segmented_reduce(&doff, Add), n, &ctx, "segmented_reduce");
                expect_oob(dx.permute(&db).segmented_min_element(&doff), n, &ctx, "segmented_min_element");
                let ok: Vec<u32> = (0..n as u32).rev().collect();
                let dok = DeviceVec::from_slice(&dev, &ok).unwrap();
                let worse = DeviceVec::from_slice(&dev, &[0u32, n as u32 + 1]).unwrap();
                assert!(
                    matches!(dx.permute(&dok).segmented_reduce(&worse, Add), Err(Error::InvalidArgument(_))),
                    "{ctx}: bad offsets"
                );
            }
            assert_eq!(bits(&dx.to_vec().unwrap()), bits(&x), "{ctx}: values intact");
        }
    }
}

#[test]
fn sorts_of_expressions_equal_sorts_of_collected_vectors() {
    use cuprim::algo::sort::SortOptions;
    let mut sizes = common::capped(common::SIZES);
    sizes.extend(common::capped(&[20_000, 70_001, 300_003]));
    for dev in common::devices() {
        for &n in &sizes {
            let (mut r, seed) = rng("sort");
            let x: Vec<f32> = (0..n).map(|_| r.gen_range(-2.0..2.0)).collect();
            let k: Vec<i32> = (0..n).map(|_| r.gen_range(-1000..1000)).collect();
            let (dx, dk) = (DeviceVec::from_slice(&dev, &x).unwrap(), DeviceVec::from_slice(&dev, &k).unwrap());
            let ctx = common::ctx(&dev, "sort", n, seed);
            // f32 keys (4 passes), a map: the same bits as transform then sort.
            let fused = dx.map(Negate).sorted().unwrap().to_vec().unwrap();
            let mut plain = dx.transform(Negate).unwrap();
            plain.sort().unwrap();
            assert_eq!(bits(&fused), bits(&plain.to_vec().unwrap()), "{ctx}: f32");
            // Descending i32 keys of a map with counting values (an argsort of |k|, stable).
            let (fk, fv) = dk
                .map(Abs)
                .sorted_pairs_with(counting(&dev, 0u32, 1, n), SortOptions::new().descending())
                .unwrap();
            let mut pk = dk.transform(Abs).unwrap();
            let mut pv = DeviceVec::from_slice(&dev, &(0..n as u32).collect::<Vec<_>>()).unwrap();
            pk.sort_pairs_descending(&mut pv).unwrap();
            assert_eq!(fk.to_vec().unwrap(), pk.to_vec().unwrap(), "{ctx}: pairs keys");
            assert_eq!(fv.to_vec().unwrap(), pv.to_vec().unwrap(), "{ctx}: pairs values");
            // u8 keys (one pass: odd), f64 keys (eight), and 3 passes with
            // the shortcuts skipping two (keys below 256 on bits 0..24).
            let small = dk.map(Cast::<u8>::new()).sorted().unwrap().to_vec().unwrap();
            let mut want: Vec<u8> = k.iter().map(|&v| v as u8).collect();
            want.sort();
            assert_eq!(small, want, "{ctx}: u8");
            let wide = dx.map(Cast::<f64>::new()).sorted().unwrap().to_vec().unwrap();
            let mut want: Vec<f64> = x.iter().map(|&v| v as f64).collect();
            want.sort_by(f64::total_cmp);
            assert_eq!(bits64(&wide), bits64(&want), "{ctx}: f64");
            let low = dk.map(Cast::<u8>::new()).map(Cast::<u32>::new());
            let (a, b) = low.sorted_pairs_with(&dx, SortOptions::new().bits(0, 24)).unwrap();
            let mut pk = low.collect().unwrap();
            let mut pv = dx.to_device_vec().unwrap();
            pk.sort_pairs_with(&mut pv, SortOptions::new().bits(0, 24)).unwrap();
            assert_eq!(a.to_vec().unwrap(), pk.to_vec().unwrap(), "{ctx}: 24 bits keys");
            assert_eq!(bits(&b.to_vec().unwrap()), bits(&pv.to_vec().unwrap()), "{ctx}: 24 bits values");
            // Errors: a bad index, mismatched lengths; inputs intact.
            assert!(matches!(
                dk.lazy().sorted_pairs(counting(&dev, 0u32, 1, n + 1)),
                Err(Error::LengthMismatch { .. })
            ));
            if n > 0 {
                let bad: Vec<u32> = (0..n as u32).map(|i| if i == n as u32 / 2 { n as u32 } else { i }).collect();
                let db = DeviceVec::from_slice(&dev, &bad).unwrap();
                expect_oob(dx.permute(&db).sorted(), n, &ctx, "sorted");
                expect_oob(dk.lazy().sorted_pairs(dx.permute(&db)), n, &ctx, "sorted_pairs");
            }
            assert_eq!(bits(&dx.to_vec().unwrap()), bits(&x), "{ctx}: values intact");
            assert_eq!(dk.to_vec().unwrap(), k, "{ctx}: keys intact");
        }
    }
}

/// Stable order of `0..n` by a comparator of indices (ascending) or its
/// reverse: tuples, which `common::stable_order` (one key type) does not take.
fn stable_order_by(n: usize, descending: bool, cmp: impl Fn(usize, usize) -> std::cmp::Ordering) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&i, &j| if descending { cmp(j, i) } else { cmp(i, j) });
    idx
}

#[test]
fn lexicographic_sorts_of_tuple_keys() {
    use cuprim::algo::sort::SortOptions;
    let mut sizes = common::capped(common::SIZES);
    sizes.extend(common::capped(&[70_001, 300_003]));
    // f32 second fields with the values total_cmp orders apart: signed
    // zeros, NaNs of both signs and payloads, infinities, duplicates.
    let specials = [
        0.0f32,
        -0.0,
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7fc0_0001),
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.5,
    ];
    for dev in common::devices() {
        for &n in &sizes {
            let (mut r, seed) = rng("lex");
            let a: Vec<u8> = (0..n).map(|_| r.gen_range(0..5u8)).collect();
            let b: Vec<f32> = (0..n)
                .map(|_| {
                    if r.gen_range(0..4) == 0 {
                        specials[r.gen_range(0..specials.len())]
                    } else {
                        r.gen_range(-3i32..3) as f32 / 2.0
                    }
                })
                .collect();
            let k: Vec<i32> = (0..n).map(|_| r.gen_range(-3..3)).collect();
            let w: Vec<u64> = (0..n).map(|_| r.gen_range(0..3u64) << 40).collect();
            let z: Vec<f64> = (0..n).map(|_| r.gen_range(-2i32..2) as f64 * 0.25).collect();
            let up_a = DeviceVec::from_slice(&dev, &a).unwrap();
            let up_b = DeviceVec::from_slice(&dev, &b).unwrap();
            let (dk, dw, dz) = (
                DeviceVec::from_slice(&dev, &k).unwrap(),
                DeviceVec::from_slice(&dev, &w).unwrap(),
                DeviceVec::from_slice(&dev, &z).unwrap(),
            );
            let ctx = common::ctx(&dev, "lexicographic sort", n, seed);
            let pair_cmp = |i: usize, j: usize| a[i].cmp(&a[j]).then(b[i].total_cmp(&b[j]));
            for descending in [false, true] {
                let opts = if descending {
                    SortOptions::new().descending()
                } else {
                    SortOptions::new()
                };
                let order = stable_order_by(n, descending, pair_cmp);
                let want_a: Vec<u8> = order.iter().map(|&i| a[i]).collect();
                let want_b: Vec<f32> = order.iter().map(|&i| b[i]).collect();
                let (sa, sb) = zip(&up_a, &up_b).sorted_lex_with(opts).unwrap();
                assert_eq!(sa.to_vec().unwrap(), want_a, "{ctx}: pairs, first field (descending {descending})");
                assert_eq!(
                    bits(&sb.to_vec().unwrap()),
                    bits(&want_b),
                    "{ctx}: pairs, second field (descending {descending})"
                );
                // Values follow their keys: the positions, so stability is checked too.
                let (sa, sb, pos) = zip(&up_a, &up_b).sorted_lex_pairs_with(counting(&dev, 0u32, 1, n), opts).unwrap();
                assert_eq!(sa.to_vec().unwrap(), want_a, "{ctx}: lex pairs keys (descending {descending})");
                assert_eq!(
                    bits(&sb.to_vec().unwrap()),
                    bits(&want_b),
                    "{ctx}: lex pairs keys (descending {descending})"
                );
                let want_pos: Vec<u32> = order.iter().map(|&i| i as u32).collect();
                assert_eq!(pos.to_vec().unwrap(), want_pos, "{ctx}: lex pairs values (descending {descending})");

                // Triples, the first field an expression (|k|), an 8-byte middle field, f64 last.
                let order3 = stable_order_by(n, descending, |i, j| {
                    k[i].abs().cmp(&k[j].abs()).then(w[i].cmp(&w[j])).then(z[i].total_cmp(&z[j]))
                });
                let (t0, t1, t2) = zip3(dk.map(Abs), &dw, &dz).sorted_lex3_with(opts).unwrap();
                assert_eq!(
                    t0.to_vec().unwrap(),
                    order3.iter().map(|&i| k[i].abs()).collect::<Vec<_>>(),
                    "{ctx}: triples 0"
                );
                assert_eq!(
                    t1.to_vec().unwrap(),
                    order3.iter().map(|&i| w[i]).collect::<Vec<_>>(),
                    "{ctx}: triples 1"
                );
                let want_z: Vec<f64> = order3.iter().map(|&i| z[i]).collect();
                assert_eq!(bits64(&t2.to_vec().unwrap()), bits64(&want_z), "{ctx}: triples 2");
            }
            // The plain forms are the ascending ones.
            let (sa, _) = zip(&up_a, &up_b).sorted_lex().unwrap();
            let (ta, _, _) = zip3(&dk, &dw, &dz).sorted_lex3().unwrap();
            let (pa, _, _) = zip(&up_a, &up_b).sorted_lex_pairs(&up_a).unwrap();
            let mut want = a.clone();
            want.sort();
            assert_eq!(sa.to_vec().unwrap(), want, "{ctx}: sorted_lex");
            assert_eq!(pa.to_vec().unwrap(), want, "{ctx}: sorted_lex_pairs");
            let mut want = k.clone();
            want.sort();
            assert_eq!(ta.to_vec().unwrap(), want, "{ctx}: sorted_lex3");
            // Errors: a bit range, mismatched values; inputs intact.
            let bits_err = zip(&up_a, &up_b).sorted_lex_with(SortOptions::new().bits(0, 4));
            assert!(matches!(bits_err, Err(Error::InvalidArgument(_))), "{ctx}: a bit range is refused");
            let short = zip(&up_a, &up_b).sorted_lex_pairs(counting(&dev, 0u32, 1, n + 1));
            assert!(
                matches!(short, Err(Error::LengthMismatch { .. })),
                "{ctx}: values of another length"
            );
            assert_eq!(up_a.to_vec().unwrap(), a, "{ctx}: first field intact");
            assert_eq!(bits(&up_b.to_vec().unwrap()), bits(&b), "{ctx}: second field intact");
        }
    }
}

#[test]
fn tuple_values_follow_sorted_keys() {
    use cuprim::algo::sort::SortOptions;
    let mut sizes = common::capped(common::SIZES);
    sizes.extend(common::capped(&[70_001]));
    for dev in common::devices() {
        for &n in &sizes {
            let (mut r, seed) = rng("tuple-values");
            let k: Vec<f32> = (0..n).map(|_| r.gen_range(-4i32..4) as f32 * 0.5).collect();
            let x: Vec<u64> = (0..n).map(|_| r.gen()).collect();
            let y: Vec<i8> = (0..n).map(|_| r.gen()).collect();
            let (dk, dx, dy) = (
                DeviceVec::from_slice(&dev, &k).unwrap(),
                DeviceVec::from_slice(&dev, &x).unwrap(),
                DeviceVec::from_slice(&dev, &y).unwrap(),
            );
            let ctx = common::ctx(&dev, "tuple values", n, seed);
            for descending in [false, true] {
                let opts = if descending {
                    SortOptions::new().descending()
                } else {
                    SortOptions::new()
                };
                let order = stable_order_by(n, descending, |i, j| k[i].total_cmp(&k[j]));
                let want_k: Vec<f32> = order.iter().map(|&i| k[i]).collect();
                let (sk, sx, sy) = dk.lazy().sorted_pairs_unzip_with(zip(&dx, &dy), opts).unwrap();
                assert_eq!(bits(&sk.to_vec().unwrap()), bits(&want_k), "{ctx}: keys (descending {descending})");
                assert_eq!(
                    sx.to_vec().unwrap(),
                    order.iter().map(|&i| x[i]).collect::<Vec<_>>(),
                    "{ctx}: first field"
                );
                assert_eq!(
                    sy.to_vec().unwrap(),
                    order.iter().map(|&i| y[i]).collect::<Vec<_>>(),
                    "{ctx}: second field"
                );
            }
            // Triples, the keys an expression (|k|), a counting field: the argsort.
            let order = stable_order_by(n, false, |i, j| k[i].abs().total_cmp(&k[j].abs()));
            let (sk, a, b, c) = dk.map(Abs).sorted_pairs_unzip3(zip3(&dy, &dx, counting(&dev, 0u32, 1, n))).unwrap();
            let want_k: Vec<f32> = order.iter().map(|&i| k[i].abs()).collect();
            assert_eq!(bits(&sk.to_vec().unwrap()), bits(&want_k), "{ctx}: triple keys");
            assert_eq!(
                a.to_vec().unwrap(),
                order.iter().map(|&i| y[i]).collect::<Vec<_>>(),
                "{ctx}: triple 0"
            );
            assert_eq!(
                b.to_vec().unwrap(),
                order.iter().map(|&i| x[i]).collect::<Vec<_>>(),
                "{ctx}: triple 1"
            );
            assert_eq!(
                c.to_vec().unwrap(),
                order.iter().map(|&i| i as u32).collect::<Vec<_>>(),
                "{ctx}: triple 2"
            );
            // Errors: values of another length; a bad permuted index; inputs intact.
            let short = dk
                .lazy()
                .sorted_pairs_unzip(zip(counting(&dev, 0u32, 1, n + 1), counting(&dev, 0u8, 1, n + 1)));
            assert!(
                matches!(short, Err(Error::LengthMismatch { .. })),
                "{ctx}: values of another length"
            );
            if n > 0 {
                let bad: Vec<u32> = (0..n as u32).map(|i| if i == n as u32 / 2 { n as u32 } else { i }).collect();
                let db = DeviceVec::from_slice(&dev, &bad).unwrap();
                expect_oob(
                    dk.lazy().sorted_pairs_unzip(zip(dx.permute(&db), &dy)),
                    n,
                    &ctx,
                    "sorted_pairs_unzip",
                );
            }
            assert_eq!(bits(&dk.to_vec().unwrap()), bits(&k), "{ctx}: keys intact");
            assert_eq!(dx.to_vec().unwrap(), x, "{ctx}: values intact");
        }
    }
}

/// A user operator (not one of the built-in pair operators).
#[derive(Clone, Copy, Debug)]
struct AbsDiff;
impl BinaryOp<i32> for AbsDiff {
    fn apply(&self, a: i32, b: i32) -> i32 {
        a.wrapping_sub(b).wrapping_abs()
    }
    fn cuda_expr(&self) -> String {
        // Wrapping, as in Rust: in unsigned arithmetic (signed overflow is undefined in C++).
        "([&] { const int d = (int)((unsigned)a - (unsigned)b); return d < 0 ? (int)(0u - (unsigned)d) : d; }())".into()
    }
}

#[test]
fn adjacent_difference_of_expressions_equals_the_buffer_form() {
    use cuprim::ops::{Max, Sub};
    let mut sizes = common::capped(common::SIZES);
    sizes.extend(common::capped(&[2, 70_001]));
    for dev in common::devices() {
        for &n in &sizes {
            let (mut r, seed) = rng("adjacent");
            let x: Vec<f32> = (0..n)
                .map(|_| match r.gen_range(0..10) {
                    0 => f32::NAN,
                    1 => -0.0,
                    _ => r.gen_range(-3.0..3.0),
                })
                .collect();
            let k: Vec<i32> = (0..n).map(|_| r.gen()).collect();
            let (dx, dk) = (DeviceVec::from_slice(&dev, &x).unwrap(), DeviceVec::from_slice(&dev, &k).unwrap());
            let ctx = common::ctx(&dev, "adjacent_difference", n, seed);
            // A map: the same bits as transform, then the buffer form.
            let fused = dx.map(Negate).adjacent_difference(Sub).unwrap().to_vec().unwrap();
            let plain = dx.transform(Negate).unwrap().adjacent_difference(Sub).unwrap().to_vec().unwrap();
            // Any NaN for a NaN: both operands NaN leaves which payload wins to the optimiser on the host.
            assert_eq!(bits_any_nan(&fused), bits_any_nan(&plain), "{ctx}: f32 map, Sub");
            // Plain Rust, a user operator (wrapping), and Max on a gathered view.
            let want: Vec<i32> = (0..n).map(|i| if i == 0 { k[0] } else { AbsDiff.apply(k[i], k[i - 1]) }).collect();
            assert_eq!(
                dk.lazy().adjacent_difference(AbsDiff).unwrap().to_vec().unwrap(),
                want,
                "{ctx}: i32 user op"
            );
            let rev: Vec<u32> = (0..n as u32).rev().collect();
            let drev = DeviceVec::from_slice(&dev, &rev).unwrap();
            let want: Vec<i32> = (0..n).map(|i| if i == 0 { k[n - 1] } else { k[n - 1 - i].max(k[n - i]) }).collect();
            assert_eq!(
                dk.permute(&drev).adjacent_difference(Max).unwrap().to_vec().unwrap(),
                want,
                "{ctx}: permuted, Max"
            );
            // A bad permuted index is an error; the input stays.
            if n > 1 {
                let mut bad = rev.clone();
                bad[n / 2] = n as u32;
                let dbad = DeviceVec::from_slice(&dev, &bad).unwrap();
                expect_oob(dk.permute(&dbad).adjacent_difference(Max), n, &ctx, "adjacent_difference");
            }
            assert_eq!(dk.to_vec().unwrap(), k, "{ctx}: input intact");
        }
    }
}
