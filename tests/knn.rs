//! kNN (nearest_neighbors, KdTree: query, nearest, radius_search,
//! all_nearest) against a plain Rust brute-force oracle, on every device:
//! uniform, clustered and duplicate-heavy points, tight clusters, shells
//! and mixed densities with queries near and far from them, awkward sizes,
//! k from 1 to 1024, D from 1 to 128, f32 and f64, NaN coordinates, bad
//! arguments, and Auto's sampled cost estimate.
//!
//! The oracle computes the squared distance as the crate documents (an fma
//! chain over the dimensions in order), orders by (squared distance,
//! index) and takes the square root, so every result is compared exactly:
//! indices and distance bits.

mod common;

use common::{devices, rng, TestRng};
use cuprim::algo::knn::{KnnMethod, KnnOptions, Point, QueryOrder};
use cuprim::prelude::*;
use rand::RngCore;

/// A coordinate type as these tests see it.
trait TestCoord: cuprim::algo::knn::Coord {
    fn of(x: f64) -> Self;
    fn fused(self, a: Self, b: Self) -> Self;
    fn square_root(self) -> Self;
    fn inf() -> Self;
    fn bits(self) -> u64;
}

impl TestCoord for f32 {
    fn of(x: f64) -> Self {
        x as f32
    }
    fn fused(self, a: Self, b: Self) -> Self {
        self.mul_add(a, b)
    }
    fn square_root(self) -> Self {
        self.sqrt()
    }
    fn inf() -> Self {
        f32::INFINITY
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}

impl TestCoord for f64 {
    fn of(x: f64) -> Self {
        x
    }
    fn fused(self, a: Self, b: Self) -> Self {
        self.mul_add(a, b)
    }
    fn square_root(self) -> Self {
        self.sqrt()
    }
    fn inf() -> Self {
        f64::INFINITY
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

fn unit(r: &mut TestRng) -> f64 {
    (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn gauss(r: &mut TestRng) -> f64 {
    let (u, v) = (unit(r).max(1e-300), unit(r));
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

#[derive(Clone, Copy, Debug)]
enum Dist {
    Uniform,
    /// Gaussian blobs around 12 centres.
    Clustered,
    /// Every coordinate one of 0, 1, 2: many duplicate points, many ties.
    Duplicates,
}

fn make<F: TestCoord, const D: usize>(r: &mut TestRng, n: usize, dist: Dist) -> Vec<[F; D]> {
    let centres: Vec<[f64; D]> = (0..12).map(|_| std::array::from_fn(|_| unit(r))).collect();
    (0..n)
        .map(|_| match dist {
            Dist::Uniform => std::array::from_fn(|_| F::of(unit(r))),
            Dist::Clustered => {
                let c = centres[(r.next_u32() % 12) as usize];
                std::array::from_fn(|j| F::of(c[j] + 0.02 * gauss(r)))
            }
            Dist::Duplicates => std::array::from_fn(|_| F::of((r.next_u32() % 3) as f64)),
        })
        .collect()
}

/// The oracle: rows of k (index, distance), ascending by (squared distance,
/// index), NaN distances excluded, missing slots (u32::MAX, +inf).
fn oracle<F: TestCoord, const D: usize>(
    points: &[[F; D]],
    queries: &[[F; D]],
    k: usize,
    radius: Option<F>,
) -> (Vec<u32>, Vec<F>, Vec<u32>) {
    let lists = oracle_lists(points, queries, radius);
    let (i, d) = rows(&lists, k);
    (i, d, lists.iter().map(|l| l.len() as u32).collect())
}

/// Per query, every eligible (squared distance, index), sorted.
fn oracle_lists<F: TestCoord, const D: usize>(points: &[[F; D]], queries: &[[F; D]], radius: Option<F>) -> Vec<Vec<(F, u32)>> {
    use rayon::prelude::*;
    queries
        .par_iter()
        .map(|q| {
            let mut all: Vec<(F, u32)> = Vec::new();
            if !q.iter().any(|x| x.is_nan()) {
                for (i, p) in points.iter().enumerate() {
                    let mut acc = F::of(0.0);
                    for j in 0..D {
                        let d = q[j] - p[j];
                        acc = d.fused(d, acc);
                    }
                    if acc.is_nan() {
                        continue;
                    }
                    if let Some(r) = radius {
                        if acc.square_root() > r {
                            continue;
                        }
                    }
                    all.push((acc, i as u32));
                }
            }
            all.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
            all
        })
        .collect()
}

/// The first k of each sorted list as result rows.
fn rows<F: TestCoord>(lists: &[Vec<(F, u32)>], k: usize) -> (Vec<u32>, Vec<F>) {
    let mut idx = Vec::with_capacity(lists.len() * k);
    let mut dist = Vec::with_capacity(lists.len() * k);
    for all in lists {
        for j in 0..k {
            match all.get(j) {
                Some(&(d2, i)) => {
                    idx.push(i);
                    dist.push(d2.square_root());
                }
                None => {
                    idx.push(u32::MAX);
                    dist.push(F::inf());
                }
            }
        }
    }
    (idx, dist)
}

#[track_caller]
fn assert_rows<F: TestCoord>(got_i: &[u32], got_d: &[F], want_i: &[u32], want_d: &[F], k: usize, what: &str) {
    assert_eq!(got_i.len(), want_i.len(), "length: {what}");
    assert_eq!(got_d.len(), want_d.len(), "length: {what}");
    for j in 0..want_i.len() {
        let same_d = got_d[j].bits() == want_d[j].bits();
        if got_i[j] != want_i[j] || !same_d {
            panic!(
                "row {} slot {}: got ({}, {:?}), want ({}, {:?}): {what}",
                j / k,
                j % k,
                got_i[j],
                got_d[j],
                want_i[j],
                want_d[j]
            );
        }
    }
}

/// Every way to get the k nearest neighbours, against the oracle.
fn check_all<F: TestCoord, const D: usize>(dev: &Device, points: &[[F; D]], queries: &[[F; D]], k: usize, what: &str)
where
    [F; D]: Point<Coord = F>,
{
    check_with(dev, points, queries, &oracle_lists(points, queries, None), k, what)
}

/// [`check_all`] with the oracle's lists computed once for several k.
fn check_with<F: TestCoord, const D: usize>(
    dev: &Device,
    points: &[[F; D]],
    queries: &[[F; D]],
    lists: &[Vec<(F, u32)>],
    k: usize,
    what: &str,
) where
    [F; D]: Point<Coord = F>,
{
    let (want_i, want_d) = rows(lists, k);
    let p = DeviceVec::from_slice(dev, points).unwrap();
    let q = DeviceVec::from_slice(dev, queries).unwrap();
    let mut methods = vec![KnnMethod::Auto, KnnMethod::BruteForce];
    if D <= 16 {
        methods.push(KnnMethod::KdTree);
    }
    for m in methods {
        let nn = nearest_neighbors_with(&p, &q, k, KnnOptions::new().method(m)).unwrap();
        assert_eq!((nn.k, nn.queries), (k, queries.len()));
        let what = format!("{what}, {m:?}, n={}, q={}, k={k}, D={D} on {dev:?}", points.len(), queries.len());
        assert_rows(
            &nn.indices.to_vec().unwrap(),
            &nn.distances.to_vec().unwrap(),
            &want_i,
            &want_d,
            k,
            &what,
        );
    }
    if D <= 16 {
        let tree = KdTree::build(&p).unwrap();
        for order in [QueryOrder::Spatial, QueryOrder::AsGiven] {
            let nn = tree.query_with(&q, k, order).unwrap();
            let what = format!(
                "{what}, tree {order:?}, n={}, q={}, k={k}, D={D} on {dev:?}",
                points.len(),
                queries.len()
            );
            assert_rows(
                &nn.indices.to_vec().unwrap(),
                &nn.distances.to_vec().unwrap(),
                &want_i,
                &want_d,
                k,
                &what,
            );
        }
    }
}

#[test]
fn matches_oracle_3d_f32() {
    for dev in devices() {
        let (mut r, seed) = rng("knn_3d_f32");
        for dist in [Dist::Uniform, Dist::Clustered, Dist::Duplicates] {
            for &(n, q) in &[(1usize, 7usize), (5, 9), (700, 300), (4097, 257), (20_011, 400)] {
                let points = make::<f32, 3>(&mut r, n, dist);
                let mut queries = make::<f32, 3>(&mut r, q, dist);
                // Some queries exactly on points.
                for (j, qq) in queries.iter_mut().enumerate().take(q / 4) {
                    *qq = points[(j * 7919) % n];
                }
                let lists = oracle_lists(&points, &queries, None);
                for &k in &[1usize, 3, 8, 17, 100] {
                    check_with(&dev, &points, &queries, &lists, k, &format!("{dist:?}, seed={seed}"));
                }
            }
        }
    }
}

#[test]
fn matches_oracle_other_dims_and_f64() {
    for dev in devices() {
        let (mut r, seed) = rng("knn_dims");
        for dist in [Dist::Uniform, Dist::Clustered, Dist::Duplicates] {
            let what = format!("{dist:?}, seed={seed}");
            let (p, q) = (make::<f32, 2>(&mut r, 3001, dist), make::<f32, 2>(&mut r, 200, dist));
            for k in [1, 8, 17] {
                check_all(&dev, &p, &q, k, &what);
            }
            let (p, q) = (make::<f32, 4>(&mut r, 2500, dist), make::<f32, 4>(&mut r, 150, dist));
            check_all(&dev, &p, &q, 8, &what);
            let (p, q) = (make::<f32, 1>(&mut r, 999, dist), make::<f32, 1>(&mut r, 70, dist));
            check_all(&dev, &p, &q, 3, &what);
            let (p, q) = (make::<f32, 16>(&mut r, 1500, dist), make::<f32, 16>(&mut r, 100, dist));
            for k in [1, 8, 33] {
                check_all(&dev, &p, &q, k, &what);
            }
            let (p, q) = (make::<f64, 3>(&mut r, 5000, dist), make::<f64, 3>(&mut r, 300, dist));
            for k in [1, 8, 17, 40, 100] {
                check_all(&dev, &p, &q, k, &what);
            }
            let (p, q) = (make::<f64, 16>(&mut r, 800, dist), make::<f64, 16>(&mut r, 60, dist));
            check_all(&dev, &p, &q, 8, &what);
        }
    }
}

#[test]
fn high_dimensions_brute_force() {
    for dev in devices() {
        let (mut r, seed) = rng("knn_high_d");
        let what = format!("seed={seed}");
        let (p, q) = (
            make::<f32, 17>(&mut r, 600, Dist::Clustered),
            make::<f32, 17>(&mut r, 40, Dist::Clustered),
        );
        check_all(&dev, &p, &q, 5, &what);
        let (p, q) = (
            make::<f32, 128>(&mut r, 700, Dist::Uniform),
            make::<f32, 128>(&mut r, 50, Dist::Uniform),
        );
        check_all(&dev, &p, &q, 8, &what);
        let (p, q) = (
            make::<f64, 128>(&mut r, 300, Dist::Duplicates),
            make::<f64, 128>(&mut r, 33, Dist::Duplicates),
        );
        check_all(&dev, &p, &q, 70, &what);
        // Many points per query: the chunked brute force and its merge.
        let (p, q) = (
            make::<f32, 16>(&mut r, 60_000, Dist::Uniform),
            make::<f32, 16>(&mut r, 20, Dist::Uniform),
        );
        check_all(&dev, &p, &q, 8, &what);
        check_all(&dev, &p, &q, 200, &what);
    }
}

#[test]
fn large_k_up_to_1024() {
    for dev in devices() {
        let (mut r, seed) = rng("knn_large_k");
        let what = format!("seed={seed}");
        let (p, q) = (
            make::<f32, 3>(&mut r, 3000, Dist::Clustered),
            make::<f32, 3>(&mut r, 40, Dist::Clustered),
        );
        for k in [64, 65, 500, 1024] {
            check_all(&dev, &p, &q, k, &what);
        }
        let (p, q) = (
            make::<f64, 2>(&mut r, 1100, Dist::Duplicates),
            make::<f64, 2>(&mut r, 30, Dist::Duplicates),
        );
        check_all(&dev, &p, &q, 1024, &what);
    }
}

#[test]
fn awkward_sizes() {
    for dev in devices() {
        let (mut r, seed) = rng("knn_awkward");
        let what = format!("seed={seed}");
        let none: Vec<[f32; 3]> = Vec::new();
        let q = make::<f32, 3>(&mut r, 10, Dist::Uniform);
        // No points: all missing.
        check_all(&dev, &none, &q, 4, &what);
        // No queries: an empty result.
        let p = make::<f32, 3>(&mut r, 100, Dist::Uniform);
        check_all(&dev, &p, &none, 4, &what);
        let nn = nearest_neighbors(
            &DeviceVec::from_slice(&dev, &p).unwrap(),
            &DeviceVec::from_slice(&dev, &none).unwrap(),
            4,
        )
        .unwrap();
        assert!(nn.indices.is_empty() && nn.distances.is_empty());
        // One point; fewer points than k; sizes around powers of two.
        for n in [1usize, 2, 3, 7, 8, 9, 15, 16, 17, 31, 63, 64, 65, 127, 255, 256, 257] {
            let p = make::<f32, 3>(&mut r, n, Dist::Uniform);
            check_all(&dev, &p, &q, 10, &what);
            check_all(&dev, &p, &q, 1, &what);
        }
    }
}

#[test]
fn nan_and_infinite_coordinates() {
    for dev in devices() {
        let (mut r, seed) = rng("knn_nan");
        let what = format!("seed={seed}");
        let mut p = make::<f32, 3>(&mut r, 5000, Dist::Uniform);
        for j in (0..p.len()).step_by(13) {
            p[j][j % 3] = if j % 2 == 0 { f32::NAN } else { -f32::NAN };
        }
        p[1] = [f32::INFINITY, 0.0, 0.0];
        p[2] = [f32::NEG_INFINITY, 1.0, 0.5];
        p[3] = [-0.0, 0.0, -0.0];
        let mut q = make::<f32, 3>(&mut r, 200, Dist::Uniform);
        q[0] = [f32::NAN, 0.5, 0.5];
        q[1] = [0.5, 0.5, f32::NAN];
        q[2] = [f32::INFINITY, 0.0, 0.0];
        q[3] = [0.0, 0.0, 0.0];
        for k in [1, 8, 100] {
            check_all(&dev, &p, &q, k, &what);
        }
        // A NaN query has an all-missing row; NaN points are never neighbours.
        let pd = DeviceVec::from_slice(&dev, &p).unwrap();
        let nn = KdTree::build(&pd)
            .unwrap()
            .query(&DeviceVec::from_slice(&dev, &q).unwrap(), 4)
            .unwrap();
        let idx = nn.indices.to_vec().unwrap();
        assert_eq!(&idx[..8], &[u32::MAX; 8]);
        assert!(idx.iter().all(|&i| i == u32::MAX || !p[i as usize].iter().any(|x| x.is_nan())));
        // Every point NaN: nothing found.
        let all_nan = vec![[f64::NAN, 0.0]; 50];
        let q64 = make::<f64, 2>(&mut r, 5, Dist::Uniform);
        check_all(&dev, &all_nan, &q64, 3, &what);
    }
}

#[test]
fn radius_search_matches_oracle() {
    for dev in devices() {
        let (mut r, seed) = rng("knn_radius");
        for dist in [Dist::Uniform, Dist::Clustered, Dist::Duplicates] {
            let mut p = make::<f32, 3>(&mut r, 6000, dist);
            p[7][1] = f32::NAN;
            let mut q = make::<f32, 3>(&mut r, 300, dist);
            q[5][0] = f32::NAN;
            let tree = KdTree::build(&DeviceVec::from_slice(&dev, &p).unwrap()).unwrap();
            let qd = DeviceVec::from_slice(&dev, &q).unwrap();
            for &(radius, max_count) in &[(0.0f32, 4usize), (0.05, 8), (0.1, 1), (0.2, 100), (1.0, 3), (f32::INFINITY, 5)] {
                let (wi, wd, wc) = oracle(&p, &q, max_count, Some(radius));
                let got = tree.radius_search(&qd, radius, max_count).unwrap();
                let what = format!("{dist:?} r={radius} max={max_count} seed={seed} on {dev:?}");
                assert_eq!(got.counts.to_vec().unwrap(), wc, "{what}");
                assert_rows(
                    &got.indices.to_vec().unwrap(),
                    &got.distances.to_vec().unwrap(),
                    &wi,
                    &wd,
                    max_count,
                    &what,
                );
            }
        }
        // Duplicate points at distance exactly 1: counted.
        let p = vec![[1.0f64, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0], [1.0, 1.0]];
        let tree = KdTree::build(&DeviceVec::from_slice(&dev, &p).unwrap()).unwrap();
        let got = tree
            .radius_search(&DeviceVec::from_slice(&dev, &[[0.0f64, 0.0]]).unwrap(), 1.0, 2)
            .unwrap();
        assert_eq!(got.counts.to_vec().unwrap(), vec![4]);
        assert_eq!(got.indices.to_vec().unwrap(), vec![0, 1]);
    }
}

#[test]
fn nearest_is_k1() {
    for dev in devices() {
        let (mut r, seed) = rng("knn_nearest");
        let p = make::<f32, 3>(&mut r, 10_000, Dist::Clustered);
        let q = make::<f32, 3>(&mut r, 500, Dist::Uniform);
        let (wi, wd, _) = oracle(&p, &q, 1, None);
        let tree = KdTree::build(&DeviceVec::from_slice(&dev, &p).unwrap()).unwrap();
        let nn = tree.nearest(&DeviceVec::from_slice(&dev, &q).unwrap()).unwrap();
        assert_rows(
            &nn.indices.to_vec().unwrap(),
            &nn.distances.to_vec().unwrap(),
            &wi,
            &wd,
            1,
            &format!("seed={seed}"),
        );
    }
}

#[test]
fn bad_arguments_are_errors() {
    for dev in devices() {
        let p = DeviceVec::from_slice(&dev, &[[0.0f32, 1.0, 2.0]; 10]).unwrap();
        assert!(nearest_neighbors(&p, &p, 0).is_err());
        assert!(nearest_neighbors(&p, &p, 1025).is_err());
        let tree = KdTree::build(&p).unwrap();
        assert!(tree.query(&p, 0).is_err());
        assert!(tree.query(&p, 1025).is_err());
        assert!(tree.radius_search(&p, -0.5, 4).is_err());
        assert!(tree.radius_search(&p, f32::NAN, 4).is_err());
        assert!(tree.radius_search(&p, 1.0, 0).is_err());
        assert!(tree.radius_search(&p, 1.0, 2000).is_err());
        // D past the tree's limit, and past brute force's.
        let wide = DeviceVec::from_slice(&dev, &[[0.0f32; 17]; 4]).unwrap();
        assert!(matches!(KdTree::build(&wide), Err(Error::Unsupported(_))));
        assert!(nearest_neighbors_with(&wide, &wide, 2, KnnOptions::new().method(KnnMethod::KdTree)).is_err());
        assert!(nearest_neighbors(&wide, &wide, 2).is_ok());
        let too_wide = DeviceVec::from_slice(&dev, &[[0.0f32; 129]; 2]).unwrap();
        assert!(matches!(nearest_neighbors(&too_wide, &too_wide, 1), Err(Error::Unsupported(_))));
        let empty_points = DeviceVec::from_slice(&dev, &[[0.0f32; 0]; 2]).unwrap();
        assert!(nearest_neighbors(&empty_points, &empty_points, 1).is_err());
        assert!(KdTree::build(&empty_points).is_err());
    }
    // Points and queries on different devices.
    if let Some(gpu) = common::cuda() {
        let a = DeviceVec::from_slice(&Device::host(), &[[0.0f32, 1.0]]).unwrap();
        let b = DeviceVec::from_slice(&gpu, &[[0.0f32, 1.0]]).unwrap();
        assert!(matches!(nearest_neighbors(&a, &b, 1), Err(Error::DeviceMismatch { .. })));
        let tree = KdTree::build(&a).unwrap();
        assert!(matches!(tree.query(&b, 1), Err(Error::DeviceMismatch { .. })));
    }
}

/// Views work as points and queries; results come back in query order.
#[test]
fn slices_as_inputs() {
    for dev in devices() {
        let (mut r, seed) = rng("knn_slices");
        let p = make::<f32, 2>(&mut r, 3000, Dist::Uniform);
        let q = make::<f32, 2>(&mut r, 100, Dist::Uniform);
        let (wi, wd, _) = oracle(&p[500..2500], &q[10..90], 6, None);
        let pd = DeviceVec::from_slice(&dev, &p).unwrap();
        let qd = DeviceVec::from_slice(&dev, &q).unwrap();
        let nn = nearest_neighbors_with(
            &pd.slice(500..2500).unwrap(),
            &qd.slice(10..90).unwrap(),
            6,
            KnnOptions::new().method(KnnMethod::KdTree),
        )
        .unwrap();
        assert_rows(
            &nn.indices.to_vec().unwrap(),
            &nn.distances.to_vec().unwrap(),
            &wi,
            &wd,
            6,
            &format!("seed={seed}"),
        );
    }
}

/// The GPU builds exactly the host's tree, node for node, and repeated GPU
/// runs give identical bits.
#[test]
fn gpu_tree_equals_host_tree_and_runs_repeat() {
    let Some(gpu) = common::cuda() else {
        common::skip("gpu_tree_equals_host_tree_and_runs_repeat", "no CUDA device");
        return;
    };
    let (mut r, _seed) = rng("knn_tree_equal");
    for &n in &[1usize, 2, 3, 100, 4097, 100_003] {
        let mut p = make::<f32, 3>(&mut r, n, Dist::Duplicates);
        if n > 10 {
            p[5][2] = f32::NAN;
        }
        let host = KdTree::build(&DeviceVec::from_slice(&Device::host(), &p).unwrap()).unwrap();
        let dev = KdTree::build(&DeviceVec::from_slice(&gpu, &p).unwrap()).unwrap();
        let (a, b) = (host.nodes().unwrap(), dev.nodes().unwrap());
        assert_eq!(a.len(), b.len());
        for (j, (x, y)) in a.iter().zip(&b).enumerate() {
            assert!(
                x.1 == y.1 && bytemuck::bytes_of(&x.0) == bytemuck::bytes_of(&y.0),
                "node {j} of {n}: {x:?} vs {y:?}"
            );
        }
    }
    let p = make::<f32, 3>(&mut r, 200_000, Dist::Clustered);
    let q = make::<f32, 3>(&mut r, 50_000, Dist::Uniform);
    let pd = DeviceVec::from_slice(&gpu, &p).unwrap();
    let qd = DeviceVec::from_slice(&gpu, &q).unwrap();
    let tree = KdTree::build(&pd).unwrap();
    let a = tree.query(&qd, 8).unwrap();
    let b = KdTree::build(&pd).unwrap().query(&qd, 8).unwrap();
    assert_eq!(a.indices.to_vec().unwrap(), b.indices.to_vec().unwrap());
    let (da, db) = (a.distances.to_vec().unwrap(), b.distances.to_vec().unwrap());
    assert!(da.iter().zip(&db).all(|(x, y)| x.to_bits() == y.to_bits()));
    let (wi, wd, _) = oracle(&p, &q[..2000], 8, None);
    let got_i = a.indices.to_vec().unwrap();
    assert_rows(&got_i[..2000 * 8], &da[..2000 * 8], &wi, &wd, 8, "200K points, first 2000 queries");
}

/// Tight clusters far apart, a thin sphere shell, and half uniform / half
/// dense clusters: the inputs on which pruning by splitting planes alone
/// visits whole clusters.
#[derive(Clone, Copy, Debug)]
enum Hard {
    /// 20 Gaussian clusters of sigma 1e-3.
    Tight,
    /// A sphere shell of radius 0.4 around the cube's centre, noise 1e-3.
    Shell,
    /// Half uniform, half in 5 clusters of sigma 1e-3.
    Mixed,
}

fn make_hard<F: TestCoord, const D: usize>(r: &mut TestRng, n: usize, dist: Hard) -> Vec<[F; D]> {
    let centres: Vec<[f64; D]> = (0..20).map(|_| std::array::from_fn(|_| unit(r))).collect();
    (0..n)
        .map(|i| match dist {
            Hard::Tight => {
                let c = centres[(r.next_u32() % 20) as usize];
                std::array::from_fn(|j| F::of(c[j] + 1e-3 * gauss(r)))
            }
            Hard::Shell => {
                let g: [f64; D] = std::array::from_fn(|_| gauss(r));
                let norm = g.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
                let radius = 0.4 + 1e-3 * gauss(r);
                std::array::from_fn(|j| F::of(0.5 + radius * g[j] / norm))
            }
            Hard::Mixed if i % 2 == 0 => std::array::from_fn(|_| F::of(unit(r))),
            Hard::Mixed => {
                let c = centres[(r.next_u32() % 5) as usize];
                std::array::from_fn(|j| F::of(c[j] + 1e-3 * gauss(r)))
            }
        })
        .collect()
}

/// Queries near the points (jittered copies) and away from them (uniform
/// over a box larger than the data's).
fn near_and_away<F: TestCoord, const D: usize>(r: &mut TestRng, points: &[[F; D]], q: usize) -> Vec<[F; D]> {
    (0..q)
        .map(|i| {
            if i % 2 == 0 {
                let p = points[(r.next_u32() as usize) % points.len()];
                std::array::from_fn(|j| F::of(p[j].to_f64() + 2e-3 * gauss(r)))
            } else {
                std::array::from_fn(|_| F::of(unit(r) * 1.6 - 0.3))
            }
        })
        .collect()
}

/// The subtree boxes prune exactly: tight clusters, shells and mixed
/// densities with queries near and away, D = 2, 3, 8, k = 1, 8, 64.
#[test]
fn hard_distributions_match_oracle() {
    for dev in devices() {
        let (mut r, seed) = rng("knn_hard");
        for dist in [Hard::Tight, Hard::Shell, Hard::Mixed] {
            let what = format!("{dist:?}, seed={seed}");
            let p = make_hard::<f32, 3>(&mut r, 20_011, dist);
            let q = near_and_away(&mut r, &p, 400);
            let lists = oracle_lists(&p, &q, None);
            for k in [1, 8, 64] {
                check_with(&dev, &p, &q, &lists, k, &what);
            }
            let p = make_hard::<f32, 2>(&mut r, 9_001, dist);
            let q = near_and_away(&mut r, &p, 300);
            let lists = oracle_lists(&p, &q, None);
            for k in [1, 8, 64] {
                check_with(&dev, &p, &q, &lists, k, &what);
            }
            let p = make_hard::<f32, 8>(&mut r, 6_007, dist);
            let q = near_and_away(&mut r, &p, 200);
            let lists = oracle_lists(&p, &q, None);
            for k in [1, 8, 64] {
                check_with(&dev, &p, &q, &lists, k, &what);
            }
            let p = make_hard::<f64, 3>(&mut r, 5_003, dist);
            let q = near_and_away(&mut r, &p, 200);
            check_all(&dev, &p, &q, 8, &what);
        }
    }
}

/// `KnnMethod::Auto` past the small-input rule: it builds the tree, times a
/// sample of the queries and then takes the tree (3-D) or brute force (8-D
/// uniform); either way the rows are the oracle's (checked on a subset).
#[test]
fn auto_with_cost_estimate() {
    for dev in devices() {
        let (mut r, seed) = rng("knn_auto");
        let what = format!("seed={seed} on {dev:?}");
        let p = make_hard::<f32, 3>(&mut r, 20_000, Hard::Tight);
        let q = near_and_away(&mut r, &p, 20_000);
        let (wi, wd, _) = oracle(&p, &q[..600], 8, None);
        let (pd, qd) = (DeviceVec::from_slice(&dev, &p).unwrap(), DeviceVec::from_slice(&dev, &q).unwrap());
        let nn = nearest_neighbors(&pd, &qd, 8).unwrap();
        let (gi, gd) = (nn.indices.to_vec().unwrap(), nn.distances.to_vec().unwrap());
        assert_rows(&gi[..600 * 8], &gd[..600 * 8], &wi, &wd, 8, &format!("3-D tight, {what}"));
        // The sampled rows (every q/1024-th) are rewritten by the full run.
        let tree = KdTree::build(&pd).unwrap();
        let all = tree.query(&qd, 8).unwrap();
        assert_eq!(all.indices.to_vec().unwrap(), gi, "{what}");
        assert!(tree.mean_visits(&qd, 8).unwrap() >= 1.0);

        let p = make::<f32, 8>(&mut r, 20_000, Dist::Uniform);
        let q = make::<f32, 8>(&mut r, 10_000, Dist::Uniform);
        let (wi, wd, _) = oracle(&p, &q[..300], 5, None);
        let (pd, qd) = (DeviceVec::from_slice(&dev, &p).unwrap(), DeviceVec::from_slice(&dev, &q).unwrap());
        let nn = nearest_neighbors(&pd, &qd, 5).unwrap();
        let (gi, gd) = (nn.indices.to_vec().unwrap(), nn.distances.to_vec().unwrap());
        assert_rows(&gi[..300 * 5], &gd[..300 * 5], &wi, &wd, 5, &format!("8-D uniform, {what}"));
    }
}

/// All-kNN oracle: for every point, the `kmax` first of every other
/// eligible point (not itself by index, no NaN distance), sorted by
/// (squared distance, index).
fn oracle_all_lists<F: TestCoord, const D: usize>(points: &[[F; D]], kmax: usize) -> Vec<Vec<(F, u32)>> {
    use rayon::prelude::*;
    let order = |a: &(F, u32), b: &(F, u32)| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1));
    points
        .par_iter()
        .enumerate()
        .map(|(me, q)| {
            let mut all: Vec<(F, u32)> = Vec::new();
            if !q.iter().any(|x| x.is_nan()) {
                for (i, p) in points.iter().enumerate() {
                    if i == me {
                        continue;
                    }
                    let mut acc = F::of(0.0);
                    for j in 0..D {
                        let d = q[j] - p[j];
                        acc = d.fused(d, acc);
                    }
                    if !acc.is_nan() {
                        all.push((acc, i as u32));
                    }
                }
            }
            if all.len() > kmax {
                all.select_nth_unstable_by(kmax, order);
                all.truncate(kmax);
            }
            all.sort_by(order);
            all
        })
        .collect()
}

/// all_nearest(k) for each k against the oracle.
fn check_all_nearest_ks<F: TestCoord, const D: usize>(dev: &Device, points: &[[F; D]], ks: &[usize], what: &str)
where
    [F; D]: Point<Coord = F>,
{
    let lists = oracle_all_lists(points, ks.iter().copied().max().unwrap_or(0));
    let tree = KdTree::build(&DeviceVec::from_slice(dev, points).unwrap()).unwrap();
    for &k in ks {
        let (wi, wd) = rows(&lists, k);
        let nn = tree.all_nearest(k).unwrap();
        assert_eq!((nn.k, nn.queries), (k, points.len()));
        let what = format!("all_nearest {what}, n={}, k={k}, D={D} on {dev:?}", points.len());
        assert_rows(&nn.indices.to_vec().unwrap(), &nn.distances.to_vec().unwrap(), &wi, &wd, k, &what);
    }
}

fn check_all_nearest<F: TestCoord, const D: usize>(dev: &Device, points: &[[F; D]], k: usize, what: &str)
where
    [F; D]: Point<Coord = F>,
{
    check_all_nearest_ks(dev, points, &[k], what)
}

#[test]
fn all_nearest_matches_oracle() {
    for dev in devices() {
        let (mut r, seed) = rng("knn_all");
        for dist in [Dist::Uniform, Dist::Clustered, Dist::Duplicates] {
            let what = format!("{dist:?}, seed={seed}");
            for n in [2usize, 3, 7, 64, 65, 1000, 4097, 20_011] {
                let p = make::<f32, 3>(&mut r, n, dist);
                check_all_nearest_ks(&dev, &p, &[1, 3, 8, 17, 100], &what);
            }
            check_all_nearest(&dev, &make::<f32, 2>(&mut r, 3001, dist), 8, &what);
            check_all_nearest(&dev, &make::<f32, 8>(&mut r, 2500, dist), 8, &what);
            check_all_nearest(&dev, &make::<f64, 3>(&mut r, 2999, dist), 33, &what);
            check_all_nearest(&dev, &make::<f32, 16>(&mut r, 800, dist), 5, &what);
        }
        for dist in [Hard::Tight, Hard::Shell, Hard::Mixed] {
            let p = make_hard::<f32, 3>(&mut r, 20_011, dist);
            check_all_nearest_ks(&dev, &p, &[1, 8, 64], &format!("{dist:?}, seed={seed}"));
        }
        let p = make::<f32, 3>(&mut r, 3000, Dist::Clustered);
        check_all_nearest(&dev, &p, 1024, &format!("k = 1024, seed={seed}"));
    }
}

/// All-kNN at the edges: no points, one point, k = 0 and past the limit,
/// k > n - 1, duplicates of one point, NaN coordinates.
#[test]
fn all_nearest_edge_cases() {
    for dev in devices() {
        let (mut r, seed) = rng("knn_all_edges");
        let what = format!("seed={seed} on {dev:?}");
        // n = 0: an empty result.
        let tree = KdTree::build(&DeviceVec::<[f32; 3]>::from_slice(&dev, &[]).unwrap()).unwrap();
        let nn = tree.all_nearest(4).unwrap();
        assert_eq!((nn.queries, nn.k), (0, 4));
        assert!(nn.indices.is_empty() && nn.distances.is_empty());
        // n = 1: no other point, an all-missing row.
        let tree = KdTree::build(&DeviceVec::from_slice(&dev, &[[0.5f32, 0.5]]).unwrap()).unwrap();
        let nn = tree.all_nearest(3).unwrap();
        assert_eq!(nn.indices.to_vec().unwrap(), vec![u32::MAX; 3], "{what}");
        assert_eq!(nn.distances.to_vec().unwrap(), vec![f32::INFINITY; 3], "{what}");
        // k = 0 and k past 1024: errors, as for query.
        assert!(matches!(tree.all_nearest(0), Err(Error::InvalidArgument(_))));
        assert!(matches!(tree.all_nearest(1025), Err(Error::InvalidArgument(_))));
        // k > n - 1: the other n - 1 points, then missing slots.
        for n in [2usize, 5, 9, 33] {
            let p = make::<f32, 3>(&mut r, n, Dist::Uniform);
            check_all_nearest_ks(&dev, &p, &[n - 1, n, n + 7], &what);
            let tree = KdTree::build(&DeviceVec::from_slice(&dev, &p).unwrap()).unwrap();
            let idx = tree.all_nearest(n + 2).unwrap().indices.to_vec().unwrap();
            for (row, chunk) in idx.chunks(n + 2).enumerate() {
                assert!(chunk[..n - 1].iter().all(|&i| i != row as u32 && i != u32::MAX), "{what}");
                assert_eq!(&chunk[n - 1..], &[u32::MAX; 3], "{what}");
            }
        }
        // Every point the same: each row is the lowest other indices, at 0.
        let same = vec![[0.25f64, -1.0, 3.0]; 300];
        check_all_nearest(&dev, &same, 8, &what);
        let tree = KdTree::build(&DeviceVec::from_slice(&dev, &same).unwrap()).unwrap();
        let nn = tree.all_nearest(2).unwrap();
        let idx = nn.indices.to_vec().unwrap();
        assert_eq!(&idx[..6], &[1, 2, 0, 2, 0, 1], "{what}");
        assert!(nn.distances.to_vec().unwrap().iter().all(|&d| d == 0.0), "{what}");
        // NaN coordinates: missing rows for those points, never neighbours;
        // infinities are neighbours at +inf.
        let mut p = make::<f32, 3>(&mut r, 5000, Dist::Clustered);
        for j in (0..p.len()).step_by(11) {
            p[j][j % 3] = f32::NAN;
        }
        p[1] = [f32::INFINITY, 0.0, 0.0];
        p[2] = [f32::NEG_INFINITY, 1.0, 0.5];
        p[3] = [-0.0, 0.0, -0.0];
        check_all_nearest_ks(&dev, &p, &[1, 8, 70], &what);
        let tree = KdTree::build(&DeviceVec::from_slice(&dev, &p).unwrap()).unwrap();
        let idx = tree.all_nearest(4).unwrap().indices.to_vec().unwrap();
        assert_eq!(&idx[..4], &[u32::MAX; 4], "{what}");
        assert!(idx.iter().all(|&i| i == u32::MAX || !p[i as usize].iter().any(|x| x.is_nan())));
        // Only NaN points: all rows missing.
        let all_nan = vec![[f32::NAN, 0.0]; 40];
        check_all_nearest(&dev, &all_nan, 3, &what);
    }
}

/// all_nearest is query with the points as queries, less the point itself.
#[test]
fn all_nearest_equals_query_without_self() {
    for dev in devices() {
        let (mut r, seed) = rng("knn_all_query");
        let p = make::<f32, 3>(&mut r, 30_000, Dist::Clustered);
        let pd = DeviceVec::from_slice(&dev, &p).unwrap();
        let tree = KdTree::build(&pd).unwrap();
        let k = 8;
        let all = tree.all_nearest(k).unwrap();
        let q = tree.query(&pd, k + 1).unwrap();
        let (ai, ad) = (all.indices.to_vec().unwrap(), all.distances.to_vec().unwrap());
        let (qi, qd) = (q.indices.to_vec().unwrap(), q.distances.to_vec().unwrap());
        for i in 0..p.len() {
            // Drop the point itself from its query row (there, unless a
            // lower-index duplicate crowds it out of the k + 1).
            let row: Vec<(u32, f32)> = (0..=k)
                .map(|j| (qi[i * (k + 1) + j], qd[i * (k + 1) + j]))
                .filter(|&(x, _)| x != i as u32)
                .collect();
            for j in 0..k {
                assert_eq!(
                    (ai[i * k + j], ad[i * k + j].to_bits()),
                    (row[j].0, row[j].1.to_bits()),
                    "point {i} slot {j}, seed={seed} on {dev:?}"
                );
            }
        }
    }
}

/// Column `j` of the points.
fn column<F: TestCoord, const D: usize>(p: &[[F; D]], j: usize) -> Vec<F> {
    p.iter().map(|x| x[j]).collect()
}

/// The same nodes and the same rows (bit for bit) from a tree built from an
/// expression of points and from the collected points, and from queries
/// read from an expression; `build` / `query` give the expression of the
/// points' / queries' columns on a device.
fn check_from_expressions<F: TestCoord, const D: usize>(
    dev: &Device,
    points: &[[F; D]],
    queries: &[[F; D]],
    k: usize,
    build: impl Fn(&[DeviceVec<F>]) -> cuprim::Result<KdTree<[F; D]>>,
    query: impl Fn(&KdTree<[F; D]>, &[DeviceVec<F>], usize) -> cuprim::Result<cuprim::algo::knn::Neighbors<F>>,
    what: &str,
) where
    [F; D]: Point<Coord = F>,
{
    let ctx = format!("{dev:?} D={D} n={} q={} k={k} {what}", points.len(), queries.len());
    let cols = |v: &[[F; D]]| {
        (0..D)
            .map(|j| DeviceVec::from_slice(dev, &column(v, j)).unwrap())
            .collect::<Vec<_>>()
    };
    let (pc, qc) = (cols(points), cols(queries));
    let plain = KdTree::build(&DeviceVec::from_slice(dev, points).unwrap()).unwrap();
    let fused = build(&pc).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    let (a, b) = (plain.nodes().unwrap(), fused.nodes().unwrap());
    assert_eq!(a.len(), b.len(), "{ctx}");
    assert!(
        a.iter()
            .zip(&b)
            .all(|(x, y)| x.1 == y.1 && bytemuck::bytes_of(&x.0) == bytemuck::bytes_of(&y.0)),
        "nodes: {ctx}"
    );
    let qd = DeviceVec::from_slice(dev, queries).unwrap();
    let want = plain.query(&qd, k).unwrap();
    let (wi, wd) = (want.indices.to_vec().unwrap(), want.distances.to_vec().unwrap());
    let bits = |v: &[F]| v.iter().map(|x| x.bits()).collect::<Vec<_>>();
    for (name, got) in [
        ("tree from the expression", fused.query(&qd, k).unwrap()),
        (
            "queries from the expression",
            query(&plain, &qc, k).unwrap_or_else(|e| panic!("{ctx}: {e}")),
        ),
    ] {
        assert_eq!((got.queries, got.k), (queries.len(), k), "{name}: {ctx}");
        assert_eq!(got.indices.to_vec().unwrap(), wi, "{name} indices: {ctx}");
        assert_eq!(bits(&got.distances.to_vec().unwrap()), bits(&wd), "{name} distances: {ctx}");
    }
    let m = queries.len().min(300);
    let (oi, od, _) = oracle(points, &queries[..m], k, None);
    assert_rows(&wi[..m * k], &wd[..m * k], &oi, &od, k, &ctx);
}

/// KdTree::build_from and query_from over coordinate columns (a buffer, a
/// zip, a zip3, a map), D = 1, 2, 3, f32 and f64: the trees and the rows
/// of the collected points, bit for bit; 20000 queries take the Morton
/// order; NaN coordinates, duplicates; gathers out of range are errors.
#[test]
fn trees_and_queries_from_expressions() {
    use cuprim::ops::Negate;
    let (mut r, seed) = rng("knn expressions");
    for dev in devices() {
        for &(n, q) in &[(0usize, 5usize), (1, 3), (2, 40), (100, 100), (4097, 300), (30_000, 20_000)] {
            let what = format!("seed={seed}");
            let mut p3 = make::<f32, 3>(&mut r, n, if n % 2 == 0 { Dist::Clustered } else { Dist::Duplicates });
            if n > 10 {
                p3[7][1] = f32::NAN;
            }
            let q3 = make::<f32, 3>(&mut r, q, Dist::Uniform);
            check_from_expressions(
                &dev,
                &p3,
                &q3,
                5,
                |c| KdTree::build_from(zip3(&c[0], &c[1], &c[2])),
                |t, c, k| t.query_from(zip3(&c[0], &c[1], &c[2]), k),
                &what,
            );
            let p2 = make::<f64, 2>(&mut r, n, Dist::Clustered);
            let q2 = make::<f64, 2>(&mut r, q, Dist::Clustered);
            check_from_expressions(
                &dev,
                &p2,
                &q2,
                3,
                |c| KdTree::build_from(zip(&c[0], &c[1])),
                |t, c, k| t.query_from(zip(&c[0], &c[1]), k),
                &what,
            );
            // One coordinate: a buffer as it is, and negated twice.
            let p1 = make::<f32, 1>(&mut r, n, Dist::Duplicates);
            let q1 = make::<f32, 1>(&mut r, q, Dist::Uniform);
            check_from_expressions(
                &dev,
                &p1,
                &q1,
                4,
                |c| KdTree::build_from(&c[0]),
                |t, c, k| t.query_from(c[0].map(Negate).map(Negate), k),
                &what,
            );
        }
        // Gathers out of range; k = 0; nothing read for no queries.
        let xs = DeviceVec::from_slice(&dev, &[0.0f32, 1.0, 2.0, 3.0]).unwrap();
        let bad = DeviceVec::from_slice(&dev, &[0u32, 4, 1, 2]).unwrap();
        let oob = |e: cuprim::Error| matches!(e, cuprim::Error::IndexOutOfBounds { len: 4, .. });
        assert!(oob(KdTree::build_from(zip(xs.permute(&bad), &xs)).unwrap_err()), "{dev:?}");
        let tree = KdTree::build_from(zip(&xs, &xs)).unwrap();
        assert!(oob(tree.query_from(zip(&xs, xs.permute(&bad)), 2).unwrap_err()), "{dev:?}");
        assert!(tree.query_from(zip(&xs, &xs), 0).is_err());
        let none = DeviceVec::<u32>::from_slice(&dev, &[]).unwrap();
        assert_eq!(tree.query_from(zip(xs.permute(&none), xs.permute(&none)), 2).unwrap().queries, 0);
    }
}

/// Nodes (index and coordinate bits) of two trees, equal.
#[track_caller]
fn assert_same_nodes<P: Point>(a: &KdTree<P>, b: &KdTree<P>, ctx: &str) {
    let (a, b) = (a.nodes().unwrap(), b.nodes().unwrap());
    assert_eq!(a.len(), b.len(), "nodes: {ctx}");
    assert!(
        a.iter()
            .zip(&b)
            .all(|(x, y)| x.1 == y.1 && bytemuck::bytes_of(&x.0) == bytemuck::bytes_of(&y.0)),
        "nodes: {ctx}"
    );
}

/// Rows of two results, equal: indices, and distances bit for bit.
#[track_caller]
fn assert_same_rows<F: TestCoord>(got: &cuprim::algo::knn::Neighbors<F>, want: &cuprim::algo::knn::Neighbors<F>, ctx: &str) {
    let bits = |v: &DeviceVec<F>| v.to_vec().unwrap().iter().map(|x| x.bits()).collect::<Vec<_>>();
    assert_eq!((got.queries, got.k), (want.queries, want.k), "{ctx}");
    assert_eq!(got.indices.to_vec().unwrap(), want.indices.to_vec().unwrap(), "indices: {ctx}");
    assert_eq!(bits(&got.distances), bits(&want.distances), "distances: {ctx}");
}

/// A tree from an expression of points: what it was, the collected
/// points, the tree.
type Source<F, const D: usize> = (&'static str, Vec<[F; D]>, KdTree<[F; D]>);

/// KdTree::build_from and query_from over points `[F; D]`: a buffer, a
/// slice (of the buffer and of its expression), a gather with repeated
/// indices and a constant, each against build / query of the collected
/// points (the same nodes, the same rows bit for bit) for every k in `ks`;
/// the collected rows against the oracle on the first queries. Only the
/// gathers unless `all`.
fn check_points_from<F: TestCoord, const D: usize>(
    dev: &Device,
    r: &mut TestRng,
    (n, q): (usize, usize),
    ks: &[usize],
    all: bool,
    what: &str,
) where
    [F; D]: Point<Coord = F>,
{
    let ctx = format!("{dev:?} D={D} n={n} q={q} {what}");
    // Two more points and queries than used, so that the slices are inner ones.
    let pts = make::<F, D>(r, n + 2, if n % 2 == 0 { Dist::Clustered } else { Dist::Duplicates });
    let qs = make::<F, D>(r, q + 2, Dist::Uniform);
    let (pd, qd) = (DeviceVec::from_slice(dev, &pts).unwrap(), DeviceVec::from_slice(dev, &qs).unwrap());
    let pick = |r: &mut TestRng, m: usize, len: usize| -> Vec<u32> { (0..m).map(|_| (r.next_u64() % len as u64) as u32).collect() };
    let (pi, qi) = (pick(r, n, n + 2), pick(r, q, q + 2));
    let (pid, qid) = (DeviceVec::from_slice(dev, &pi).unwrap(), DeviceVec::from_slice(dev, &qi).unwrap());
    let gathered = |v: &[[F; D]], idx: &[u32]| idx.iter().map(|&i| v[i as usize]).collect::<Vec<_>>();

    // (what, the collected points, the tree from the expression)
    let mut trees: Vec<Source<F, D>> = vec![("gather", gathered(&pts, &pi), KdTree::build_from(pd.permute(&pid)).unwrap())];
    let mut queries: Vec<(&str, Vec<[F; D]>)> = vec![("gather", gathered(&qs, &qi))];
    if all {
        trees.extend([
            ("buffer", pts.clone(), KdTree::build_from(&pd).unwrap()),
            (
                "slice",
                pts[1..n + 1].to_vec(),
                KdTree::build_from(&pd.slice(1..n + 1).unwrap()).unwrap(),
            ),
            (
                "expression slice",
                pts[1..n + 1].to_vec(),
                KdTree::build_from(pd.lazy().slice(1..n + 1).unwrap()).unwrap(),
            ),
            ("constant", vec![pts[0]; n], KdTree::build_from(constant(dev, pts[0], n)).unwrap()),
        ]);
        queries.extend([
            ("buffer", qs.clone()),
            ("slice", qs[1..q + 1].to_vec()),
            ("constant", vec![qs[1]; q]),
        ]);
    }
    for (name, collected, fused) in &trees {
        let ctx = format!("{ctx}, points from a {name}");
        let plain = KdTree::build(&DeviceVec::from_slice(dev, collected).unwrap()).unwrap();
        assert_eq!(fused.len(), collected.len(), "{ctx}");
        assert_same_nodes(&plain, fused, &ctx);
        for &k in ks {
            for (qname, qcollected) in &queries {
                let ctx = format!("{ctx}, queries from a {qname}, k={k}");
                let want = plain.query(&DeviceVec::from_slice(dev, qcollected).unwrap(), k).unwrap();
                let got = match *qname {
                    "buffer" => plain.query_from(&qd, k),
                    "slice" => plain.query_from(&qd.slice(1..q + 1).unwrap(), k),
                    "gather" => plain.query_from(qd.permute(&qid), k),
                    _ => plain.query_from(constant(dev, qs[1], q), k),
                }
                .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                assert_same_rows(&got, &want, &ctx);
                // The tree from the expression, queried by the collected queries.
                let from = fused.query(&DeviceVec::from_slice(dev, qcollected).unwrap(), k).unwrap();
                assert_same_rows(&from, &want, &ctx);
                let m = qcollected.len().min(40);
                let (oi, od, _) = oracle(collected, &qcollected[..m], k, None);
                let (wi, wd) = (want.indices.to_vec().unwrap(), want.distances.to_vec().unwrap());
                assert_rows(&wi[..m * k], &wd[..m * k], &oi, &od, k, &ctx);
            }
        }
    }
}

/// Points of more than three coordinates as expressions: D = 4, 5 (f64)
/// and 8, k = 1 and more, awkward sizes (no points, no queries, one point,
/// odd counts); 17000 queries of a gather take the Morton order.
#[test]
fn trees_and_queries_from_point_expressions() {
    let (mut r, seed) = rng("knn point expressions");
    let what = format!("seed={seed}");
    for dev in devices() {
        for &size in &[(0usize, 3usize), (1, 5), (2, 0), (7, 1), (101, 33), (1000, 257)] {
            check_points_from::<f32, 4>(&dev, &mut r, size, &[1, 4], true, &what);
            check_points_from::<f64, 5>(&dev, &mut r, size, &[1, 3], true, &what);
            check_points_from::<f32, 8>(&dev, &mut r, size, &[1, 10], true, &what);
        }
        check_points_from::<f64, 16>(&dev, &mut r, (301, 20), &[2], true, &what);
        check_points_from::<f32, 8>(&dev, &mut r, (4099, 17_000), &[5], false, &what);
    }
}

/// Gathers of points out of range: IndexOutOfBounds from build_from and
/// query_from (no panic), the caller's points, indices and tree untouched
/// and usable; to_vec of a point expression; k = 0.
#[test]
fn point_expressions_out_of_range() {
    for dev in devices() {
        let pts: Vec<[f32; 6]> = (0..5).map(|i| std::array::from_fn(|j| (i * 6 + j) as f32)).collect();
        let pd = DeviceVec::from_slice(&dev, &pts).unwrap();
        let tree = KdTree::build(&pd).unwrap();
        let before = tree.query(&pd, 2).unwrap();
        let oob = |e: cuprim::Error| matches!(e, cuprim::Error::IndexOutOfBounds { len: 5, .. });
        for bad in [vec![0u32, 5, 1], vec![u32::MAX], vec![4, 3, 2, 1, 0, 9]] {
            let bd = DeviceVec::from_slice(&dev, &bad).unwrap();
            let e = KdTree::build_from(pd.permute(&bd)).unwrap_err();
            assert!(oob(e), "{dev:?} {bad:?}");
            let e = tree.query_from(pd.permute(&bd), 3).unwrap_err();
            assert!(oob(e), "{dev:?} {bad:?}");
            assert!(oob(pd.permute(&bd).to_vec().unwrap_err()), "{dev:?} {bad:?}");
            assert_eq!(bd.to_vec().unwrap(), bad, "{dev:?}");
        }
        // A gather of nothing but a bad index into no points.
        let none = DeviceVec::<[f32; 6]>::from_slice(&dev, &[]).unwrap();
        let zero = DeviceVec::from_slice(&dev, &[0u64]).unwrap();
        assert!(matches!(
            KdTree::build_from(none.permute(&zero)),
            Err(cuprim::Error::IndexOutOfBounds { len: 0, .. })
        ));
        assert_eq!(pd.to_vec().unwrap(), pts, "{dev:?}");
        assert_same_rows(&tree.query(&pd, 2).unwrap(), &before, &format!("{dev:?} after the errors"));
        // In range: to_vec is the gather; k = 0 is an error.
        let idx = DeviceVec::from_slice(&dev, &[4u32, 0, 4]).unwrap();
        assert_eq!(pd.permute(&idx).to_vec().unwrap(), vec![pts[4], pts[0], pts[4]]);
        assert!(matches!(
            tree.query_from(pd.permute(&idx), 0),
            Err(cuprim::Error::InvalidArgument(_))
        ));
        let fused = KdTree::build_from(pd.permute(&idx)).unwrap();
        assert_eq!(fused.len(), 3);
        assert_eq!(
            fused.query(&pd.slice(4..).unwrap(), 3).unwrap().indices.to_vec().unwrap(),
            vec![0, 2, 1]
        );
    }
}

/// The low and high corners of the bounding box of 5-D f64 points: a
/// monoid over points (10 f64: host only, past the device's 32 bytes).
#[derive(Clone, Copy)]
struct BoxOf;
impl cuprim::ops::BinaryOp<[f64; 10]> for BoxOf {
    fn apply(&self, a: [f64; 10], b: [f64; 10]) -> [f64; 10] {
        std::array::from_fn(|j| if j < 5 { a[j].min(b[j]) } else { a[j].max(b[j]) })
    }
    fn cuda_expr(&self) -> String {
        let c: Vec<String> = (0..10)
            .map(|j| format!("{}(a.v[{j}], b.v[{j}])", if j < 5 { "fmin" } else { "fmax" }))
            .collect();
        format!("cuprim_arr<double, 10>{{{{{}}}}}", c.join(", "))
    }
}
impl cuprim::ops::Associative for BoxOf {}
impl cuprim::ops::Commutative for BoxOf {}
impl cuprim::ops::Monoid<[f64; 10]> for BoxOf {
    fn identity(&self) -> [f64; 10] {
        std::array::from_fn(|j| if j < 5 { f64::INFINITY } else { f64::NEG_INFINITY })
    }
}

/// (p, p) of a 5-D point: its own box.
#[derive(Clone, Copy)]
struct Twice;
impl cuprim::ops::UnaryOp<[f64; 5]> for Twice {
    type Output = [f64; 10];
    fn apply(&self, p: [f64; 5]) -> [f64; 10] {
        std::array::from_fn(|j| p[j % 5])
    }
    fn cuda_expr(&self) -> String {
        let c: Vec<String> = (0..10).map(|j| format!("x.v[{}]", j % 5)).collect();
        format!("cuprim_arr<double, 10>{{{{{}}}}}", c.join(", "))
    }
}

/// Expressions of points collected (collect, collect_into a slice, to_vec)
/// as the gather they are, brute force over the collected gather as the
/// tree over the gather, and (host) a reduction of points by a monoid.
#[test]
fn point_expressions_collected_and_reduced() {
    let (mut r, seed) = rng("knn points collected");
    for dev in devices() {
        for n in [0usize, 1, 6, 1001] {
            let ctx = format!("{dev:?} n={n} seed={seed}");
            let pts = make::<f64, 5>(&mut r, n + 1, Dist::Clustered);
            let idx: Vec<u64> = (0..n).map(|_| r.next_u64() % (n as u64 + 1)).collect();
            let want: Vec<[f64; 5]> = idx.iter().map(|&i| pts[i as usize]).collect();
            let pd = DeviceVec::from_slice(&dev, &pts).unwrap();
            let id = DeviceVec::from_slice(&dev, &idx).unwrap();
            let gather = pd.permute(&id);
            assert_eq!(gather.collect().unwrap().to_vec().unwrap(), want, "{ctx}");
            assert_eq!(gather.to_vec().unwrap(), want, "{ctx}");
            let mut out = DeviceVec::from_slice(&dev, &vec![[-1.0f64; 5]; n + 2]).unwrap();
            gather.collect_into(&mut out.slice_mut(1..n + 1).unwrap()).unwrap();
            let got = out.to_vec().unwrap();
            assert_eq!((got[0], got[n + 1]), ([-1.0; 5], [-1.0; 5]), "{ctx}: outside the slice");
            assert_eq!(&got[1..n + 1], &want[..], "{ctx}");
            // Brute force over the collected gather, the tree over the gather itself.
            let qs = make::<f64, 5>(&mut r, 50, Dist::Uniform);
            let qd = DeviceVec::from_slice(&dev, &qs).unwrap();
            let brute = nearest_neighbors_with(&gather.collect().unwrap(), &qd, 3, KnnOptions::new().method(KnnMethod::BruteForce));
            let tree = KdTree::build_from(gather).unwrap().query(&qd, 3).unwrap();
            assert_same_rows(&tree, &brute.unwrap(), &ctx);
            if dev.is_host() {
                use cuprim::ops::{BinaryOp, Monoid, UnaryOp};
                let bb = gather.map(Twice).reduce(BoxOf).unwrap();
                let fold = want.iter().fold(BoxOf.identity(), |a, p| BoxOf.apply(a, Twice.apply(*p)));
                assert_eq!(bb.map(f64::to_bits), fold.map(f64::to_bits), "{ctx}");
            }
        }
    }
}

/// Queries near the centre of a thin sphere shell: every point is nearly
/// equidistant, so a walk visits most of the tree, past the budget after
/// which the CUDA backend shares a query's walk among a block's threads
/// (`kernels/knn/query.cu`, `cuprim_knn_split`). Mixed with queries near
/// the shell (walked alone), a NaN query, duplicate and NaN points; every
/// list size (registers, the heap in shared memory, the heap in the
/// output row), f32 and f64, D = 2 and 3, queries from a buffer and from
/// an expression (and a tree built from one: `check_from_expressions`).
#[test]
fn long_walks_split_across_a_block() {
    fn centred<F: TestCoord, const D: usize>(r: &mut TestRng, points: &[[F; D]], q: usize) -> Vec<[F; D]> {
        let mut out: Vec<[F; D]> = (0..q)
            .map(|i| match i % 4 {
                // Near the surface: an ordinary walk.
                0 => {
                    let p = points[(r.next_u32() as usize) % points.len()];
                    std::array::from_fn(|j| F::of(p[j].to_f64() + 1e-3 * gauss(r)))
                }
                _ => std::array::from_fn(|_| F::of(0.5 + 0.01 * (unit(r) - 0.5))),
            })
            .collect();
        out[1] = [F::of(0.5); D];
        out[2][0] = F::of(f64::NAN);
        out
    }
    for dev in devices() {
        let (mut r, seed) = rng("knn_split");
        let what = format!("shell, seed={seed}");
        let mut p = make_hard::<f32, 3>(&mut r, 40_009, Hard::Shell);
        for j in 0..40 {
            p[40_000 - j] = p[j % 7];
        }
        p[123][1] = f32::NAN;
        let q = centred(&mut r, &p, 600);
        let tree = KdTree::build(&DeviceVec::from_slice(&dev, &p).unwrap()).unwrap();
        let centre = DeviceVec::from_slice(&dev, &q[3..4]).unwrap();
        let visits = tree.mean_visits(&centre, 8).unwrap();
        assert!(
            visits > 8192.0,
            "a centre query visits {visits} nodes, not far past the split budget: {what}"
        );
        let lists = oracle_lists(&p, &q, None);
        for k in [1, 4, 8, 16, 32, 64, 100] {
            check_with(&dev, &p, &q, &lists, k, &what);
        }
        check_from_expressions(
            &dev,
            &p,
            &q,
            8,
            |c| KdTree::build_from(zip3(&c[0], &c[1], &c[2])),
            |t, c, k| t.query_from(zip3(&c[0], &c[1], &c[2]), k),
            &what,
        );

        let p = make_hard::<f64, 3>(&mut r, 30_011, Hard::Shell);
        let q = centred(&mut r, &p, 300);
        check_all(&dev, &p, &q, 8, &format!("{what}, f64"));
        let p = make_hard::<f32, 2>(&mut r, 30_011, Hard::Shell);
        let q = centred(&mut r, &p, 300);
        check_all(&dev, &p, &q, 8, &format!("{what}, a circle"));
    }
}

/// Trees past the split's budget (where the capped walk and the split
/// run), whose last level is empty, full or partial, every tree dimension
/// from 1 to 16, f32 and f64, k = 1 to 16, clusters and duplicates, with
/// NaN, far and on-point queries among ordinary ones, in Morton order and
/// as given.
#[test]
fn capped_walks_on_every_tree_shape() {
    /// n points and q queries of `dist` (among them a NaN, a far and two
    /// on-point queries), checked for each k.
    fn case<F: TestCoord, const D: usize>(dev: &Device, r: &mut TestRng, n: usize, q: usize, dist: Dist, ks: &[usize], seed: u64)
    where
        [F; D]: Point<Coord = F>,
    {
        let p = make::<F, D>(r, n, dist);
        let mut queries = make::<F, D>(r, q, dist);
        queries[3] = p[17];
        queries[5] = p[n - 1];
        queries[8][0] = F::of(f64::NAN);
        queries[13] = [F::of(1e6); D];
        let lists = oracle_lists(&p, &queries, None);
        let what = format!("{dist:?} {D}-D {}, seed={seed}", std::any::type_name::<F>());
        for &k in ks {
            check_with(dev, &p, &queries, &lists, k, &what);
        }
    }
    for dev in devices() {
        let (mut r, seed) = rng("knn_tree_shapes");
        for n in [4097usize, 8191, 8192, 16_385] {
            for dist in [Dist::Uniform, Dist::Duplicates] {
                case::<f32, 1>(&dev, &mut r, n, 77, dist, &[1, 5, 16], seed);
            }
        }
        case::<f32, 2>(&dev, &mut r, 12_289, 130, Dist::Clustered, &[1, 8, 16], seed);
        case::<f32, 4>(&dev, &mut r, 9_000, 100, Dist::Uniform, &[8], seed);
        case::<f32, 16>(&dev, &mut r, 5_000, 70, Dist::Clustered, &[16], seed);
        case::<f64, 16>(&dev, &mut r, 4_500, 40, Dist::Uniform, &[8], seed);
        case::<f64, 3>(&dev, &mut r, 33_000, 90, Dist::Duplicates, &[16], seed);
    }
}
