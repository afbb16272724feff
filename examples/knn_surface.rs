//! k nearest neighbours on a sampled surface: points on a noisy torus, a
//! kd-tree built on the device, every point's 8 nearest neighbours (itself
//! first), timing, the mean neighbour distance beside what the sampling
//! density predicts, and brute force agreeing on a sample of queries.
//!
//!     cargo run --release --example knn_surface [points]

use cuprim::prelude::*;
use std::time::Instant;

fn main() -> Result<(), cuprim::Error> {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let dev = Device::default()?;
    println!("device: {dev:?}");

    // A torus with radii 1 and 0.3, sampled by a low-discrepancy sequence
    // in (u, v) (a golden-ratio lattice), with a little uniform noise in
    // the tube radius.
    let (big, small) = (1.0f32, 0.3f32);
    let golden = 0.618_034f64;
    let points: Vec<[f32; 3]> = (0..n)
        .map(|i| {
            let u = (i as f64 + 0.5) / n as f64 * std::f64::consts::TAU;
            let v = ((i as f64 * golden) % 1.0) * std::f64::consts::TAU;
            let noise = 0.001 * (((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as f32 / 16_777_216.0 - 0.5);
            let r = big + (small + noise) * v.cos() as f32;
            [r * u.cos() as f32, r * u.sin() as f32, (small + noise) * v.sin() as f32]
        })
        .collect();

    let start = Instant::now();
    let pts = DeviceVec::from_slice(&dev, &points)?;
    dev.synchronize()?;
    let upload = start.elapsed();

    let start = Instant::now();
    let tree = KdTree::build(&pts)?;
    dev.synchronize()?;
    let build = start.elapsed();

    let k = 8;
    let start = Instant::now();
    let nn = tree.query(&pts, k)?;
    dev.synchronize()?;
    let query = start.elapsed();

    let idx = nn.indices.to_vec()?;
    let dist = nn.distances.to_vec()?;
    let selves = (0..n).filter(|&i| dist[i * k] == 0.0).count();
    let mean: f64 = (0..n).map(|i| dist[i * k + 1] as f64).sum::<f64>() / n as f64;
    // n points on a surface of area 4 pi^2 R r. The sample is a lattice, not
    // a random one: a point's nearest neighbours are at index offsets that
    // are Fibonacci numbers (233, 377, 610 for 1M points), about one lattice
    // spacing 1/sqrt(density) away (0.95 of it, measured from 1K to 1M
    // points). A random (Poisson) sample of that density would have its
    // nearest neighbours 0.5/sqrt(density) away on average; no point set on
    // a flat surface averages more than 1.075/sqrt(density) (the hexagonal
    // lattice: discs of half the neighbour distance are then packed densest).
    let area = 4.0 * std::f64::consts::PI.powi(2) * big as f64 * small as f64;
    let spacing = 1.0 / (n as f64 / area).sqrt();
    println!(
        "{n} points, k = {k}: upload {:.1} ms, build {:.2} ms, query {:.2} ms ({:.3} M queries/s)",
        upload.as_secs_f64() * 1e3,
        build.as_secs_f64() * 1e3,
        query.as_secs_f64() * 1e3,
        n as f64 / query.as_secs_f64() / 1e6
    );
    println!("points that are their own nearest neighbour at distance 0: {selves} of {n}");
    println!(
        "mean distance to the nearest other point: {mean:.3e} = {:.2} / sqrt(density): a lattice's spacing \
         (a random sample of that density: 0.50 / sqrt(density), a hexagonal lattice: 1.075 / sqrt(density))",
        mean / spacing
    );
    println!("neighbours of point 0: {:?}", &idx[..k]);
    // Brute force agrees on a sample of queries.
    let sample = pts.slice(..n.min(1000))?;
    let brute = nearest_neighbors_with(
        &pts,
        &sample,
        k,
        cuprim::algo::knn::KnnOptions::new().method(cuprim::algo::knn::KnnMethod::BruteForce),
    )?;
    let agree = brute.indices.to_vec()? == idx[..sample.len() * k];
    println!("brute force agrees on the first {} queries: {agree}", sample.len());
    if !agree || selves != n {
        std::process::exit(1);
    }
    Ok(())
}
