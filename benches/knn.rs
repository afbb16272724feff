//! kNN beside the anchors: kd-tree build of 1M and 10M uniform 3-D
//! f32 points (cudaKDTree: 9.44 ms, 75.8 ms on H100), k = 8 queries of 1M
//! uniform queries against them (2.49 ms, 5.11 ms), 100K queries against 1M
//! points (torch cdist + topk: 1830 ms), and brute force of 10K 16-D
//! queries against 1M points (torch row measured by peers.py).
//!
//! Names follow `<op>/<elem>/<n>` with n the number of points:
//! `knn_build/3d_f32/1000000`, `knn_build/3d_f32/10000000`,
//! `knn_query_k8_q1000000/3d_f32/1000000`,
//! `knn_query_k8_q1000000/3d_f32/10000000`,
//! `knn_query_k8_q100000/3d_f32/1000000`,
//! `knn_query_asgiven_k8_q1000000/3d_f32/1000000` (no Morton ordering of
//! the queries, for comparison) and `knn_brute_k8_q10000/16d_f32/1000000`.
//! Query times include everything a call does (the Morton sort of the
//! queries, the output allocation), not the build. On the host backend the
//! sizes are 100K points and 10K queries. `CUPRIM_BENCH_MAX_LOG2` below 24
//! drops the 10M rows.
//!
//! The distribution matrix (1M points, 1M queries on a GPU): points
//! `uniform` in the unit cube, `clustered` (100 Gaussian clusters of sigma
//! 1e-3), `surface` (3-D: a torus of radii 0.35 and 0.12, noise 1e-3 in
//! the tube radius; 2-D and 8-D: a sphere shell of radius 0.4, radial
//! noise 1e-3), `shell` (the sphere shell in 3-D, k = 8 only: queries
//! near its centre are equidistant from all of it) and `mixed` (half
//! uniform, half in 10 clusters of sigma 1e-3); queries
//! `near` (drawn like the points, another seed) or `away` (uniform over the
//! points' bounding box; 100K of them in 8-D). Rows
//! `knn_<points>_<queries>_k<k>_q<q>/<D>d_f32/<n>` for D = 2, 3, 8 and
//! k = 1, 8, 64 (every combination in 3-D; uniform and clustered, plus
//! surface and mixed at k = 8, in 2-D and 8-D), the build
//! of each point set `knn_build_<points>/<D>d_f32/<n>`, and all-k-nearest
//! `knn_all_<points>_k8/3d_f32/<n>` beside the same points as queries
//! `knn_selfquery_<points>_k8/3d_f32/<n>`. Each row also prints the mean
//! nodes a query visits (`KNN_VISITS <row> <mean>`, stderr), the measure
//! `KnnMethod::Auto` decides by, and `knn_brute_k8_q10000/3d_f32/1000000`
//! calibrates it.
//!
//! `CUPRIM_KNN_POINTS_DIR=DIR` also writes every matrix point and query set
//! there (`<name>.bin`: the bytes "CPKN", u32 D, u64 count, then count x D
//! little-endian f32) and `DIR/manifest.txt`, one line per matrix row: `row
//! D k points-file queries-file`, which `benchmarks/anchors/cukd_anchor.cu`
//! reads to time cudaKDTree on the same inputs. `CUPRIM_KNN_MATRIX=3d`
//! keeps only the 3-D matrix, `=0` drops the matrix; `CUPRIM_KNN_KS=8,16,32`
//! replaces the 3-D matrix's k values. With the
//! `knn-tuning` feature, `knn_tune_<child|entry><L>_<points>_<queries>_k8`
//! rows (3-D) sweep the traversal's use of the boxes and the number of
//! box-free levels (`knn_tune_plane_*`: no boxes).

mod common;

use criterion::SamplingMode;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cuprim::algo::knn::{KnnMethod, KnnOptions, QueryOrder};
use cuprim::prelude::*;
use rayon::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `n` points uniform in the unit cube, from a hash of the index.
fn uniform<const D: usize>(n: usize, seed: u64) -> Vec<[f32; D]> {
    (0..n)
        .into_par_iter()
        .map(|i| {
            std::array::from_fn(|j| {
                let mut x = (i as u64 * D as u64 + j as u64).wrapping_add(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                x ^= x >> 31;
                (x >> 40) as f32 * (1.0 / 16_777_216.0)
            })
        })
        .collect()
}

/// A uniform value in [0, 1) from (stream, index, seed).
fn unit(stream: u64, i: u64, seed: u64) -> f64 {
    let mut x = i
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(stream.wrapping_mul(0xd1b5_4a32_d192_ed03))
        .wrapping_add(seed.wrapping_mul(0x8cb9_2ba7_2f3d_8dd7));
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// A standard Gaussian value from (stream, index, seed) (Box-Muller).
fn gauss(stream: u64, i: u64, seed: u64) -> f64 {
    let u = unit(2 * stream, i, seed).max(1e-300);
    let v = unit(2 * stream + 1, i, seed);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The point distributions of the matrix.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    Uniform,
    Clustered,
    Surface,
    Shell,
    Mixed,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Uniform => "uniform",
            Shape::Clustered => "clustered",
            Shape::Surface => "surface",
            Shape::Shell => "shell",
            Shape::Mixed => "mixed",
        }
    }
}

/// `n` points of `shape`; `seed` draws the sample, the cluster centres are
/// fixed (so seed 1 points and seed 2 "near" queries share them).
fn sample<const D: usize>(shape: Shape, n: usize, seed: u64) -> Vec<[f32; D]> {
    let centre = |c: u64, j: usize| unit(j as u64, c, 77);
    let d = D as u64;
    (0..n)
        .into_par_iter()
        .map(|i| {
            let i = i as u64;
            match shape {
                Shape::Uniform => std::array::from_fn(|j| unit(j as u64, i, seed) as f32),
                Shape::Clustered => std::array::from_fn(|j| (centre(i % 100, j) + 1e-3 * gauss(j as u64, i, seed)) as f32),
                Shape::Surface if D == 3 => {
                    // A torus around the z axis through the centre: radii 0.35 and 0.12.
                    let (u, v) = (std::f64::consts::TAU * unit(0, i, seed), std::f64::consts::TAU * unit(1, i, seed));
                    let r = 0.12 + 1e-3 * gauss(1, i, seed);
                    let ring = 0.35 + r * v.cos();
                    let p = [0.5 + ring * u.cos(), 0.5 + ring * u.sin(), 0.5 + r * v.sin()];
                    std::array::from_fn(|j| p[j] as f32)
                }
                Shape::Surface | Shape::Shell => {
                    let g: [f64; D] = std::array::from_fn(|j| gauss(j as u64, i, seed));
                    let norm = g.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
                    let r = 0.4 + 1e-3 * gauss(d, i, seed);
                    std::array::from_fn(|j| (0.5 + r * g[j] / norm) as f32)
                }
                Shape::Mixed if i.is_multiple_of(2) => std::array::from_fn(|j| unit(j as u64, i, seed) as f32),
                Shape::Mixed => std::array::from_fn(|j| (centre(1000 + (i / 2) % 10, j) + 1e-3 * gauss(j as u64, i, seed)) as f32),
            }
        })
        .collect()
}

/// `q` queries uniform over the bounding box of `points`.
fn away<const D: usize>(points: &[[f32; D]], q: usize, seed: u64) -> Vec<[f32; D]> {
    let mut lo = [f32::INFINITY; D];
    let mut hi = [f32::NEG_INFINITY; D];
    for p in points {
        for j in 0..D {
            lo[j] = lo[j].min(p[j]);
            hi[j] = hi[j].max(p[j]);
        }
    }
    (0..q)
        .into_par_iter()
        .map(|i| std::array::from_fn(|j| lo[j] + (hi[j] - lo[j]) * unit(j as u64, i as u64, seed) as f32))
        .collect()
}

/// Writes `set` to `dir/name.bin` ("CPKN", u32 D, u64 count, f32 LE data).
fn write_set<const D: usize>(dir: &Path, name: &str, set: &[[f32; D]]) -> PathBuf {
    let path = dir.join(format!("{name}.bin"));
    let mut bytes = Vec::with_capacity(16 + set.len() * D * 4);
    bytes.extend_from_slice(b"CPKN");
    bytes.extend_from_slice(&(D as u32).to_le_bytes());
    bytes.extend_from_slice(&(set.len() as u64).to_le_bytes());
    for p in set {
        for x in p {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    std::fs::write(&path, bytes).expect("writing a point file");
    path
}

fn points_dir() -> Option<PathBuf> {
    std::env::var_os("CUPRIM_KNN_POINTS_DIR").map(PathBuf::from)
}

fn matrix_config<'a>(c: &'a mut Criterion, name: &str) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(600));
    group
}

/// The matrix rows for points of D coordinates: each shape's build, its
/// query sets and k values; all-k-nearest for 3-D.
fn matrix<const D: usize>(c: &mut Criterion, dev: &Device, n: usize, q: usize, shapes: &[Shape], ks_of: impl Fn(Shape) -> Vec<usize>) {
    let dir = points_dir();
    let elem = format!("{D}d_f32");
    let mut manifest = Vec::new();
    for &shape in shapes {
        let pts = sample::<D>(shape, n, 1);
        let mut sets = vec![];
        if shape == Shape::Uniform {
            sets.push(("uniform", sample::<D>(shape, q, 2)));
        } else {
            sets.push(("near", sample::<D>(shape, q, 2)));
            sets.push(("away", away(&pts, q, 3)));
        }
        let pname = format!("{}_{D}d", shape.name());
        let pfile = dir.as_ref().map(|d| write_set(d, &pname, &pts));
        let points = DeviceVec::from_slice(dev, &pts).expect("points");
        let mut group = matrix_config(c, &format!("knn_build_{}", shape.name()));
        group.bench_function(BenchmarkId::new(&elem, n), |b| {
            b.iter_custom(|iters| common::time_calls(dev, iters, || KdTree::build(&points)))
        });
        group.finish();
        let tree = KdTree::build(&points).expect("build");
        for (qname, qs) in &sets {
            let qfile = dir.as_ref().map(|d| write_set(d, &format!("{pname}_{qname}"), qs));
            let queries = DeviceVec::from_slice(dev, qs).expect("queries");
            for k in ks_of(shape) {
                let op = format!("knn_{}_{qname}_k{k}_q{q}", shape.name());
                let v = tree.mean_visits(&queries, k).expect("visits");
                eprintln!("KNN_VISITS {op}/{elem}/{n} {v:.1}");
                let mut group = matrix_config(c, &op);
                group.bench_function(BenchmarkId::new(&elem, n), |b| {
                    b.iter_custom(|iters| common::time_calls(dev, iters, || tree.query(&queries, k)))
                });
                group.finish();
                if let (Some(pf), Some(qf)) = (&pfile, &qfile) {
                    manifest.push(format!("{op}/{elem}/{n} {D} {k} {} {}", pf.display(), qf.display()));
                }
            }
            #[cfg(feature = "knn-tuning")]
            if D == 3 && (shape == Shape::Uniform || *qname == "away") {
                // (free levels, child boxes); 40 free levels: no boxes, planes only.
                for (free, child) in [(1u32, true), (2, true), (3, true), (1, false), (2, false), (3, false), (40, false)] {
                    let t = KdTree::build_tuned(&points, free, child).expect("build");
                    let variant = match (free, child) {
                        (40, _) => "plane".to_string(),
                        (_, true) => format!("child{free}"),
                        (_, false) => format!("entry{free}"),
                    };
                    let op = format!("knn_tune_{variant}_{}_{qname}_k8", shape.name());
                    let v = t.mean_visits(&queries, 8).expect("visits");
                    eprintln!("KNN_VISITS {op}/{elem}/{n} {v:.1}");
                    let mut group = matrix_config(c, &op);
                    group.bench_function(BenchmarkId::new(&elem, n), |b| {
                        b.iter_custom(|iters| common::time_calls(dev, iters, || t.query(&queries, 8)))
                    });
                    group.finish();
                }
            }
        }
        if D == 3 && matches!(shape, Shape::Uniform | Shape::Clustered | Shape::Surface) {
            let op = format!("knn_all_{}_k8", shape.name());
            let mut group = matrix_config(c, &op);
            group.bench_function(BenchmarkId::new(&elem, n), |b| {
                b.iter_custom(|iters| common::time_calls(dev, iters, || tree.all_nearest(8)))
            });
            group.finish();
            let mut group = matrix_config(c, &format!("knn_selfquery_{}_k8", shape.name()));
            group.bench_function(BenchmarkId::new(&elem, n), |b| {
                b.iter_custom(|iters| common::time_calls(dev, iters, || tree.query(&points, 8)))
            });
            group.finish();
        }
    }
    if let Some(d) = &dir {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(d.join("manifest.txt"))
            .expect("manifest");
        for line in manifest {
            writeln!(f, "{line}").expect("manifest");
        }
    }
}

fn knn_matrix(c: &mut Criterion) {
    let dev = common::device();
    let which = std::env::var("CUPRIM_KNN_MATRIX").unwrap_or_default();
    if which == "0" {
        return;
    }
    let (n, q) = if dev.is_cuda() { (1_000_000, 1_000_000) } else { (100_000, 10_000) };
    let all = [Shape::Uniform, Shape::Clustered, Shape::Surface, Shape::Mixed];
    // CUPRIM_KNN_KS=8,16,32 replaces the 3-D matrix's k values.
    let ks3: Vec<usize> = std::env::var("CUPRIM_KNN_KS")
        .map(|v| v.split(',').map(|x| x.trim().parse().expect("CUPRIM_KNN_KS: k values")).collect())
        .unwrap_or_else(|_| vec![1, 8, 64]);
    matrix::<3>(c, &dev, n, q, &all, |_| ks3.clone());
    matrix::<3>(c, &dev, n, q, &[Shape::Shell], |_| vec![8]);
    if which == "3d" {
        return;
    }
    let ks = |s: Shape| {
        if matches!(s, Shape::Uniform | Shape::Clustered) {
            vec![1, 8, 64]
        } else {
            vec![8]
        }
    };
    matrix::<2>(c, &dev, n, q, &all, ks);
    // 8-D: a tenth of the queries (a uniform 8-D query visits thousands of nodes).
    matrix::<8>(c, &dev, n, q / 10, &all, ks);
}

fn max_log2() -> u32 {
    std::env::var("CUPRIM_BENCH_MAX_LOG2")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(u32::MAX)
}

fn knn_rows(c: &mut Criterion) {
    let dev = common::device();
    let gpu = dev.is_cuda();
    let (m1, q1, q100k) = if gpu {
        (1_000_000, 1_000_000, 100_000)
    } else {
        (100_000, 10_000, 10_000)
    };
    let mut point_counts = vec![m1];
    if gpu && max_log2() >= 24 {
        point_counts.push(10_000_000);
    }
    let queries = DeviceVec::from_slice(&dev, &uniform::<3>(q1, 2)).expect("queries");
    for &n in &point_counts {
        let points = DeviceVec::from_slice(&dev, &uniform::<3>(n, 1)).expect("points");
        let mut group = c.benchmark_group("knn_build");
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("3d_f32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || KdTree::build(&points)))
        });
        group.finish();

        let tree = KdTree::build(&points).expect("build");
        let mut group = c.benchmark_group(format!("knn_query_k8_q{q1}"));
        group.throughput(Throughput::Elements(q1 as u64));
        group.bench_function(BenchmarkId::new("3d_f32", n), |b| {
            b.iter_custom(|iters| common::time_calls(&dev, iters, || tree.query(&queries, 8)))
        });
        group.finish();

        if n == m1 {
            let few = queries.slice(..q100k).expect("slice");
            let mut group = c.benchmark_group(format!("knn_query_k8_q{q100k}"));
            group.throughput(Throughput::Elements(q100k as u64));
            group.bench_function(BenchmarkId::new("3d_f32", n), |b| {
                b.iter_custom(|iters| common::time_calls(&dev, iters, || tree.query(&few, 8)))
            });
            group.finish();

            let mut group = c.benchmark_group(format!("knn_query_asgiven_k8_q{q1}"));
            group.throughput(Throughput::Elements(q1 as u64));
            group.bench_function(BenchmarkId::new("3d_f32", n), |b| {
                b.iter_custom(|iters| common::time_calls(&dev, iters, || tree.query_with(&queries, 8, QueryOrder::AsGiven)))
            });
            group.finish();
        }
    }
    drop(queries);

    // 8-D points and queries as buffers and as expressions (a gather of the
    // points in their own order, a slice of the queries): build and query.
    let (m8, q8) = if gpu { (1_000_000, 100_000) } else { (100_000, 2_000) };
    let points8 = DeviceVec::from_slice(&dev, &uniform::<8>(m8, 5)).expect("points");
    let queries8 = DeviceVec::from_slice(&dev, &uniform::<8>(q8 + 1, 6)).expect("queries");
    let order = DeviceVec::sequence(&dev, m8, 0u32, 1).expect("indices");
    let tree8 = KdTree::build(&points8).expect("build");
    let mut group = c.benchmark_group(format!("knn_8d_k8_q{q8}"));
    group.throughput(Throughput::Elements(q8 as u64));
    group.bench_function(BenchmarkId::new("build_buffer", m8), |b| {
        b.iter_custom(|iters| common::time_calls(&dev, iters, || KdTree::build(&points8)))
    });
    group.bench_function(BenchmarkId::new("build_from_gather", m8), |b| {
        b.iter_custom(|iters| common::time_calls(&dev, iters, || KdTree::build_from(points8.permute(&order))))
    });
    let few = queries8.slice(..q8).expect("slice");
    group.bench_function(BenchmarkId::new("query_buffer", m8), |b| {
        b.iter_custom(|iters| common::time_calls(&dev, iters, || tree8.query(&few, 8)))
    });
    group.bench_function(BenchmarkId::new("query_from_slice", m8), |b| {
        b.iter_custom(|iters| common::time_calls(&dev, iters, || tree8.query_from(&queries8.slice(1..).expect("slice"), 8)))
    });
    group.finish();
    drop((points8, queries8, tree8));

    let (bm, bq) = if gpu { (1_000_000, 10_000) } else { (100_000, 200) };
    let opts = KnnOptions::new().method(KnnMethod::BruteForce);
    let points = DeviceVec::from_slice(&dev, &uniform::<3>(bm, 3)).expect("points");
    let queries = DeviceVec::from_slice(&dev, &uniform::<3>(bq, 4)).expect("queries");
    let mut group = c.benchmark_group(format!("knn_brute_k8_q{bq}"));
    group.throughput(Throughput::Elements(bq as u64));
    group.bench_function(BenchmarkId::new("3d_f32", bm), |b| {
        b.iter_custom(|iters| common::time_calls(&dev, iters, || nearest_neighbors_with(&points, &queries, 8, opts)))
    });
    group.finish();

    let points = DeviceVec::from_slice(&dev, &uniform::<16>(bm, 3)).expect("points");
    let queries = DeviceVec::from_slice(&dev, &uniform::<16>(bq, 4)).expect("queries");
    let mut group = c.benchmark_group(format!("knn_brute_k8_q{bq}"));
    group.throughput(Throughput::Elements(bq as u64));
    group.bench_function(BenchmarkId::new("16d_f32", bm), |b| {
        b.iter_custom(|iters| common::time_calls(&dev, iters, || nearest_neighbors_with(&points, &queries, 8, opts)))
    });
    group.finish();
}

fn config() -> Criterion {
    common::config()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = knn_rows, knn_matrix
}
criterion_main!(benches);
