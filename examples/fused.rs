//! Fused inputs: a dot product, a one-pass mean and variance, a sum of a
//! computed sequence with no buffer at all, and a histogram of a computed
//! quantity. Each fused call is one kernel that reads its inputs in place.
//!
//! Run with `cargo run --release --example fused` (the host backend is used
//! when there is no GPU).

use cuprim::ops::{Associative, BinaryOp, Commutative, Monoid, Square, UnaryOp};
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

fn main() -> cuprim::Result<()> {
    let dev = Device::default()?;
    let n = 1 << 20;
    let a = DeviceVec::sequence(&dev, n, 0.0f32, 1.0 / n as f32)?;
    let b = DeviceVec::sequence(&dev, n, 1.0f32, -1.0 / n as f32)?;

    // Dot product: one kernel, no product vector.
    let dot = zip(&a, &b).map(Mul).sum()?;
    println!("dot(a, b)          = {dot}");

    // Mean and variance in one pass over a.
    let (count, mean, m2) = a.map(Observe).reduce(Welford)?;
    println!("mean, variance of a = {mean:.6}, {:.6}", m2 / count);

    // The sum of the first million squares, without any buffer.
    let squares = counting(&dev, 0u64, 1, n).map(Square).sum()?;
    println!("sum of i^2, i < 2^20 = {squares}");

    // A histogram of a computed quantity (a * b), collected once.
    let products = zip(&a, &b).map(Mul).collect()?;
    let hist = products.histogram(cuprim::algo::histogram::Bins::even(4, 0.0, 0.25))?;
    println!("histogram of a*b over [0, 0.25) in 4 bins: {:?}", hist.to_vec()?);
    Ok(())
}
