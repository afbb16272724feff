//! Fused inputs: a dot product, a one-pass mean and variance, a sum of a
//! computed sequence with no buffer at all, a histogram of a computed
//! quantity, and rows sorted by two computed columns. Each fused call reads
//! its inputs in place.
//!
//! `cargo run --release --example fused [n]` (default 2^20; the host backend
//! is used when there is no GPU). Each result is checked against plain Rust;
//! a mismatch is an error.

use cuprim::ops::{Associative, BinaryOp, Cast, Commutative, Monoid, Square, UnaryOp};
use cuprim::prelude::*;

/// Welford's running (count, mean, m2), merged as Chan et al.
#[derive(Clone, Copy)]
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

/// One observation: x -> (1, x, 0).
#[derive(Clone, Copy)]
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

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let n = match std::env::args().nth(1) {
        None => 1 << 20,
        Some(a) => match a.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => return Err(format!("n must be a positive whole number, got {a:?}").into()),
        },
    };
    let dev = Device::default()?;
    println!("device: {dev:?}, n = {n}");
    let a = DeviceVec::sequence(&dev, n, 0.0f32, 1.0 / n as f32)?;
    let b = DeviceVec::sequence(&dev, n, 1.0f32, -1.0 / n as f32)?;
    let (ha, hb) = (a.to_vec()?, b.to_vec()?);

    // Dot product: one kernel, no product vector.
    let dot = zip(&a, &b).map(Mul).sum()?;
    let want: f64 = ha.iter().zip(&hb).map(|(x, y)| (x * y) as f64).sum();
    println!("dot(a, b)            = {dot} (f64 reference {want:.3})");
    if (dot as f64 - want).abs() > 1e-4 * want.abs().max(1.0) {
        return Err(format!("dot product {dot} is not {want}").into());
    }

    // Mean and variance in one pass over a.
    let (count, mean, m2) = a.map(Observe).reduce(Welford)?;
    let mu = ha.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
    let var = ha.iter().map(|&x| (x as f64 - mu).powi(2)).sum::<f64>() / n as f64;
    println!("mean, variance of a  = {mean:.6}, {:.6}", m2 / count);
    if count != n as f64 || (mean - mu).abs() > 1e-9 || (m2 / count - var).abs() > 1e-9 {
        return Err(format!("Welford gave ({count}, {mean}, {}), not ({n}, {mu}, {var})", m2 / count).into());
    }

    // The sum of the first n squares, without any buffer.
    let squares = counting(&dev, 0u64, 1, n).map(Square).sum()?;
    let m = n as u64;
    println!("sum of i^2, i < n    = {squares}");
    if squares != (m - 1) * m * (2 * m - 1) / 6 {
        return Err(format!("sum of squares {squares} is wrong").into());
    }

    // A histogram of a computed quantity (a * b), in one pass.
    let hist = zip(&a, &b).map(Mul).histogram(cuprim::algo::histogram::Bins::even(4, 0.0, 0.25))?;
    let counts = hist.to_vec()?;
    let mut want = [0u32; 4];
    for (x, y) in ha.iter().zip(&hb) {
        let p = x * y;
        if (0.0..0.25).contains(&p) {
            want[((p - 0.0) * (4.0 / 0.25)).min(3.0) as usize] += 1;
        }
    }
    println!("histogram of a*b over [0, 0.25) in 4 bins: {counts:?}");
    if counts.iter().sum::<u32>() != want.iter().sum::<u32>() {
        return Err(format!("histogram {counts:?} does not count {want:?}'s samples").into());
    }

    // Rows sorted by (16 * a as u8, a * b): lexicographic tuple keys, the row
    // numbers following (one stable radix sort per column).
    let bucket = zip(&a, constant(&dev, 16.0f32, n)).map(Mul).map(Cast::<u8>::new());
    let (buckets, products, rows) = zip(bucket, zip(&a, &b).map(Mul)).sorted_lex_pairs(counting(&dev, 0u32, 1, n))?;
    let mut want: Vec<u32> = (0..n as u32).collect();
    let key = |i: u32| ((ha[i as usize] * 16.0) as u8, ha[i as usize] * hb[i as usize]);
    want.sort_by(|&i, &j| key(i).0.cmp(&key(j).0).then(key(i).1.total_cmp(&key(j).1)));
    let (buckets, products, rows) = (buckets.to_vec()?, products.to_vec()?, rows.to_vec()?);
    println!(
        "rows by (bucket, a*b): first {:?}, last {:?}",
        &rows[..rows.len().min(3)],
        &rows[rows.len().saturating_sub(3)..]
    );
    if rows != want || (0..n).any(|i| (buckets[i], products[i].to_bits()) != (key(want[i]).0, key(want[i]).1.to_bits())) {
        return Err("the rows sorted by (bucket, a*b) are not in Rust's stable order".into());
    }
    Ok(())
}
