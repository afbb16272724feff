//! The kd-tree build on the device (`kernels/knn/build.cu`): every
//! coordinate replaced by its rank along its dimension (one radix sort per
//! dimension), then per level one radix sort of packed (subtree, rank) keys
//! and one kernel that moves each point to its child subtree or makes it
//! the node, then one scatter into node records; last, the boxes of the
//! upper levels' subtrees, one kernel per level from the bottom up.

use super::geometry::{box_bytes, boxed_nodes, depth, node_bytes, rank_bits, tag_bits, Coord, Point};
use super::plan::{ptr, ptr_mut, write_common, write_input};
use crate::algo::policy::elementwise;
use crate::algo::sort::{SortMutOps, SortOptions};
use crate::device::launch::KernelArg;
use crate::device::{CudaDevice, Device, Entry, Grid, Ptr};
use crate::error::Result;
use crate::expr::args::ExprArgs;
use crate::expr::node::Node;
use crate::expr::Leaf;
use crate::jit::{header, template, SpecWriter, Specialise, Template};
use crate::vec::DeviceVec;
use std::marker::PhantomData;

template!(
    KNN_BUILD,
    "knn/build.cu",
    [
        "cuprim_knn_extract",
        "cuprim_knn_rank",
        "cuprim_knn_init",
        "cuprim_knn_level",
        "cuprim_knn_scatter",
        "cuprim_knn_boxes"
    ],
    headers: [header!("knn/knn.cuh")]
);

/// The build kernels for points `P` (no tuning constant: grid-stride
/// kernels on the element-wise launch shape); with an `input`, the
/// module whose extract and scatter read that expression of points.
pub(crate) struct BuildPlan<'a, P, X = Leaf<'static, f32>> {
    input: Option<&'a X>,
    _p: PhantomData<P>,
}

impl<P: Point> BuildPlan<'static, P> {
    pub fn new(_arch: u32) -> Self {
        BuildPlan {
            input: None,
            _p: PhantomData,
        }
    }
}

impl<'a, P: Point> BuildPlan<'a, P> {
    /// The module reading the points from the expression `input` (whose
    /// items are `P`'s `PointValue`).
    pub fn of_input<X: Node>(_arch: u32, input: &'a X) -> BuildPlan<'a, P, X> {
        BuildPlan {
            input: Some(input),
            _p: PhantomData,
        }
    }
}

impl<P: Point, X: Node> Specialise for BuildPlan<'_, P, X> {
    fn template(&self) -> &'static Template {
        &KNN_BUILD
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_common::<P, W>(w, 1);
        if let Some(x) = self.input {
            write_input(x, w);
        }
    }
}

/// `keys[i] = points[i][dim]`, `vals[i] = i`; `A` the points' parameter.
fn extract<F: Coord, A: KernelArg>() -> Entry<(A, u64, u32, Ptr<F>, Ptr<u32>)> {
    // SAFETY: cuprim_knn_extract(points, u64 n, u32 dim, F* keys, u32* vals)
    // in kernels/knn/build.cu reads n points of CUPRIM_DIM coordinates (dim
    // < CUPRIM_DIM) and writes n keys and n values; `points` is `const F*`
    // (A = Ptr<F>) in the buffer module, the expression KnnIn (A =
    // ExprArgs, n elements) in the module of one (see `Points`).
    unsafe { Entry::declare("cuprim_knn_extract") }
}

/// `rank[sorted_ids[j]] = j` and the dimension's two bounds.
fn rank<F: Coord>() -> Entry<(Ptr<u32>, Ptr<F>, u64, Ptr<u32>, Ptr<F>)> {
    // SAFETY: cuprim_knn_rank(const u32* sorted_ids, const F* sorted_keys,
    // u64 n, u32* rank, F* bounds): reads n ids (a permutation of 0..n) and
    // n keys, writes each of the n ranks once and bounds[0..2].
    unsafe { Entry::declare("cuprim_knn_rank") }
}

/// The first level's keys (tag 0, rank along dimension 0) and `perm = 0..n`.
fn init() -> Entry<(Ptr<u32>, u64, Ptr<u64>, Ptr<u32>)> {
    // SAFETY: cuprim_knn_init(const u32* rank0, u64 n, u64* keys, u32* perm)
    // reads n ranks and writes n keys and n ids.
    unsafe { Entry::declare("cuprim_knn_init") }
}

/// One level: new tags, and the next level's keys.
fn level() -> Entry<(Ptr<u64>, Ptr<u32>, u64, u32, u32, Ptr<u32>)> {
    // SAFETY: cuprim_knn_level(u64* keys, const u32* perm, u64 n, u32 level,
    // u32 rank_bits, const u32* rank_next) updates n keys in place; perm
    // holds n ids below n, each indexing the n ranks of rank_next.
    unsafe { Entry::declare("cuprim_knn_level") }
}

/// Node records from the final tags; `A` the points' parameter.
fn scatter<A: KernelArg>() -> Entry<(Ptr<u64>, Ptr<u32>, u64, u32, A, Ptr<u32>)> {
    // SAFETY: cuprim_knn_scatter(const u64* keys, const u32* perm, u64 n,
    // u32 rank_bits, points, KnnNode* nodes): the final tags are a
    // permutation of 0..n, so each of the n records (node_bytes::<P>() bytes,
    // here as u32 words) is written once; perm holds n point ids below n;
    // `points` as for extract.
    unsafe { Entry::declare("cuprim_knn_scatter") }
}

/// Where the build reads the points: a buffer, or an input expression with
/// its kernel parameter (the caller's bounds check wrote its flag). The
/// module and the parameter come from one place, so they agree.
// (Built once per call and matched in place: the kernel parameter's 512
// bytes need no box.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Points<'a, P: Point, X> {
    Buffer(Ptr<P>),
    Expr(&'a X, ExprArgs),
}

/// The boxes of one level's nodes, from their children's boxes or points.
fn boxes() -> Entry<(Ptr<u32>, u64, u32, u64, Ptr<u32>)> {
    // SAFETY: cuprim_knn_boxes(const KnnNode* nodes, u64 n, u32 level, u64
    // nb, KnnBox* boxes): the nodes of `level` are below nb <= n (the
    // caller's levels), so it reads node records below n and boxes below nb
    // (box_bytes::<P>() bytes each, here as u32 words) and writes the boxes
    // of that level's nodes.
    unsafe { Entry::declare("cuprim_knn_boxes") }
}

/// The device buffers of a built tree.
pub(crate) struct Built<F: Coord> {
    /// Node records (`node_bytes` each) as u32 words.
    pub words: DeviceVec<u32>,
    /// The points' bounding box: lo, hi per dimension.
    pub bounds: DeviceVec<F>,
    /// Boxes of the nodes below `nb` (`box_bytes` each) as u32 words.
    pub boxes: DeviceVec<u32>,
    /// Nodes with a box.
    pub nb: usize,
}

/// Builds the tree over `n` points at `points`, with boxes for the nodes
/// above the last `box_free` full levels.
pub(crate) fn run<P: Point>(dev: &CudaDevice, device: &Device, points: Ptr<P>, n: usize, box_free: u32) -> Result<Built<P::Coord>> {
    run_of::<P, Leaf<'static, f32>>(dev, device, Points::Buffer(points), n, box_free)
}

/// [`run`] over `points`: a buffer, or an expression of `n` points, read
/// where the buffer is read (each extract and the scatter).
/// An expression's items must be `P`'s `PointValue` (the callers' bound).
pub(crate) fn run_of<P: Point, X: Node>(
    dev: &CudaDevice,
    device: &Device,
    points: Points<'_, P, X>,
    n: usize,
    box_free: u32,
) -> Result<Built<P::Coord>> {
    let dims = P::DIM;
    let mut words = DeviceVec::<u32>::alloc_uninit(device, n * node_bytes::<P>() / 4)?;
    let mut bounds = DeviceVec::<P::Coord>::alloc_uninit(device, 2 * dims)?;
    let nb = boxed_nodes(n, box_free);
    let mut boxes_out = DeviceVec::<u32>::alloc_uninit(device, nb * box_bytes::<P>() / 4)?;
    if n == 0 {
        return Ok(Built {
            words,
            bounds,
            boxes: boxes_out,
            nb,
        });
    }
    let module = match &points {
        Points::Buffer(_) => dev.module(&BuildPlan::<P>::new(dev.arch()))?,
        Points::Expr(x, _) => dev.module(&BuildPlan::<P>::of_input(dev.arch(), *x))?,
    };
    let policy = elementwise(dev.arch());
    let grid = Grid::new(policy.grid(n as u64, dev.sm_count()), policy.block);
    let n64 = n as u64;

    // Ranks along every dimension.
    let mut ranks = DeviceVec::<u32>::alloc_uninit(device, dims * n)?;
    let (rank_base, bounds_base) = (ptr_mut(&mut ranks)?, ptr_mut(&mut bounds)?);
    {
        let mut keys = DeviceVec::<P::Coord>::alloc_uninit(device, n)?;
        let mut ids = DeviceVec::<u32>::alloc_uninit(device, n)?;
        for d in 0..dims {
            let (k, v) = (ptr_mut(&mut keys)?, ptr_mut(&mut ids)?);
            match points {
                Points::Buffer(p) => dev.launch(&module, extract::<P::Coord, _>(), grid, (p.cast::<P::Coord>(), n64, d as u32, k, v))?,
                Points::Expr(_, a) => dev.launch(&module, extract::<P::Coord, _>(), grid, (a, n64, d as u32, k, v))?,
            }
            keys.sort_pairs(&mut ids)?;
            let (rank_d, bounds_d) = (rank_base.add((d * n) as u64), bounds_base.add(2 * d as u64));
            dev.launch(&module, rank::<P::Coord>(), grid, (ptr(&ids)?, ptr(&keys)?, n64, rank_d, bounds_d))?;
        }
    }

    let rb = rank_bits(n);
    let mut keys = DeviceVec::<u64>::alloc_uninit(device, n)?;
    let mut perm = DeviceVec::<u32>::alloc_uninit(device, n)?;
    dev.launch(&module, init(), grid, (rank_base, n64, ptr_mut(&mut keys)?, ptr_mut(&mut perm)?))?;
    for lvl in 0..depth(n).saturating_sub(1) {
        keys.sort_pairs_with(&mut perm, SortOptions::new().bits(0, rb + tag_bits(lvl, n)))?;
        let next = rank_base.add((((lvl as usize + 1) % dims) * n) as u64);
        dev.launch(&module, level(), grid, (ptr_mut(&mut keys)?, ptr(&perm)?, n64, lvl, rb, next))?;
    }
    let (kp, pp, wp) = (ptr(&keys)?, ptr(&perm)?, ptr_mut(&mut words)?);
    match points {
        Points::Buffer(p) => dev.launch(&module, scatter(), grid, (kp, pp, n64, rb, p.cast::<P::Coord>(), wp))?,
        Points::Expr(_, a) => dev.launch(&module, scatter(), grid, (kp, pp, n64, rb, a, wp))?,
    }
    drop((keys, perm, ranks));

    // Boxes, bottom-up: level L holds nodes 2^L - 1 .. 2^(L+1) - 1, all below nb.
    let levels = usize::BITS - nb.leading_zeros();
    let (nodes, box_ptr, nb64) = (ptr(&words)?, ptr_mut(&mut boxes_out)?, nb as u64);
    for lvl in (0..levels).rev() {
        let width = 1u64 << lvl;
        let g = Grid::new(policy.grid(width, dev.sm_count()), policy.block);
        dev.launch(&module, boxes(), g, (nodes, n64, lvl, nb64, box_ptr))?;
    }
    Ok(Built {
        words,
        bounds,
        boxes: boxes_out,
        nb,
    })
}
