//! Every kernel, for every element type and every built-in operator,
//! compiled for sm_80 and sm_90 with NVRTC, which needs no GPU. This is how
//! the kernels' sources are checked on machines without one. Each compile's
//! ptxas report must show no spills and no stack frame.
//!
//! Without NVRTC the test prints a skip line, unless `CUPRIM_REQUIRE_NVRTC=1`.
//! `CUPRIM_COMPILE_CHECK_SHOW=TEXT` prints the ptxas report (registers,
//! shared memory, spills) of every job whose name contains TEXT;
//! `CUPRIM_COMPILE_CHECK_DUMP=DIR` writes every compiled module to DIR (see
//! `scripts/sass-diff`).

mod common;

use cuprim::cmp::{Greater, Less};
use cuprim::ops::{Abs, Add, Arith, BitAnd, BitOr, BitXor, Cast, Identity, Max, Min, Monoid, Mul, Negate, Square};
use cuprim::precompile::precompile_segmented;
#[cfg(feature = "classic-sort")]
use cuprim::precompile::precompile_sort_classic;
use cuprim::precompile::{
    precompile, precompile_binary, precompile_histogram, precompile_knn, precompile_merge, precompile_merge_by, precompile_predicate,
    precompile_reduce, precompile_reduce_by_key, precompile_reduce_by_key_by, precompile_scan, precompile_scan_by_key, precompile_search,
    precompile_segsort, precompile_topk, precompile_unary, precompile_unique, KernelReport, Target,
};
use cuprim::precompile::{precompile_adjacent_difference, precompile_collectives};
use cuprim::precompile::{precompile_sort, precompile_sort_alternatives, precompile_sort_pairs};
use cuprim::pred::{Eq, Ge, Gt, IsNan, Le, Lt, Ne, Not};
use cuprim::{bf16, f16, Result};

const ARCHS: &[u32] = &[80, 90];

/// One compile job: what it is, and the call that does it.
type Job = (String, Box<dyn Fn() -> Result<Vec<KernelReport>> + Send + Sync>);

fn job(jobs: &mut Vec<Job>, name: String, f: impl Fn() -> Result<Vec<KernelReport>> + Send + Sync + 'static) {
    jobs.push((name, Box::new(f)));
}

/// `CUPRIM_COMPILE_CHECK=full`: every family with every operator and
/// predicate on both architectures (about ten times the default's work).
fn full() -> bool {
    std::env::var("CUPRIM_COMPILE_CHECK").is_ok_and(|v| v == "full")
}

/// The data-movement and element-wise kernels of `T` on `arch`: fill,
/// sequence, gather / scatter with both index types, min/max_element, the
/// binary kernel with every arithmetic operator, and the unary kernel with
/// every unary operator and a cast to every element type.
fn elementwise_jobs<T: Arith>(arch: u32, jobs: &mut Vec<Job>) {
    let t = Target::Arch;
    let name = move |what: &str| format!("sm_{arch} {} {what}", T::NAME);

    job(jobs, name("fill, gather/scatter (u32, u64), min/max_element"), move || {
        precompile::<T>(t(arch))
    });
    macro_rules! binary {
        ($($op:expr),*) => {$(
            job(jobs, name(&format!("transform2 {:?}", $op)), move || precompile_binary::<T, _>(t(arch), $op));
        )*};
    }
    binary!(Add, Mul, Min, Max);
    macro_rules! unary {
        ($($op:expr),*) => {$(
            job(jobs, name(&format!("transform {}", stringify!($op))), move || precompile_unary::<T, _>(t(arch), $op));
        )*};
    }
    unary!(
        Negate,
        Abs,
        Square,
        Identity,
        Cast::<u8>::new(),
        Cast::<i8>::new(),
        Cast::<u32>::new(),
        Cast::<i32>::new(),
        Cast::<u64>::new(),
        Cast::<i64>::new(),
        Cast::<f16>::new(),
        Cast::<bf16>::new(),
        Cast::<f32>::new(),
        Cast::<f64>::new()
    );
}

/// The bitwise operators in the binary kernel (integer types).
fn bitwise_jobs<T: Arith>(arch: u32, jobs: &mut Vec<Job>)
where
    BitAnd: Monoid<T>,
    BitOr: Monoid<T>,
    BitXor: Monoid<T>,
{
    let t = Target::Arch;
    let name = move |what: &str| format!("sm_{arch} {} {what}", T::NAME);
    job(jobs, name("transform2 BitAnd"), move || precompile_binary::<T, _>(t(arch), BitAnd));
    job(jobs, name("transform2 BitOr"), move || precompile_binary::<T, _>(t(arch), BitOr));
    job(jobs, name("transform2 BitXor"), move || precompile_binary::<T, _>(t(arch), BitXor));
    if full() {
        for_ops_reduce_scan::<T, _>(arch, jobs, BitAnd);
        for_ops_reduce_scan::<T, _>(arch, jobs, BitOr);
        for_ops_reduce_scan::<T, _>(arch, jobs, BitXor);
    }
}

fn for_ops_reduce_scan<T: Arith, Op: Monoid<T> + cuprim::ops::Commutative + std::fmt::Debug>(arch: u32, jobs: &mut Vec<Job>, op: Op) {
    let t = Target::Arch;
    job(jobs, format!("sm_{arch} {} reduce {op:?}", T::NAME), move || {
        precompile_reduce::<T, _>(t(arch), op)
    });
    job(jobs, format!("sm_{arch} {} scan {op:?}", T::NAME), move || {
        precompile_scan::<T, _>(t(arch), op)
    });
}

/// The reduce, scan, search / select, scan-by-key, histogram, top-k and
/// merge kernels of `T`. By default with one operator and one predicate
/// (the operator and predicate are one line of generated text; the kernels
/// around them are what differs by type); with [`full`], with all of them.
/// The merge with two comparators and two value widths (4- and 8-byte
/// shared-memory slots: two tile shapes).
fn family_jobs<T: Arith>(arch: u32, jobs: &mut Vec<Job>) {
    let t = Target::Arch;
    let name = move |what: &str| format!("sm_{arch} {} {what}", T::NAME);
    for_ops_reduce_scan::<T, _>(arch, jobs, Add);
    job(jobs, name("predicate Lt"), move || {
        precompile_predicate::<T, _>(t(arch), Lt(T::one()))
    });
    job(jobs, name("scan_by_key keys, u32 Add values"), move || {
        precompile_scan_by_key::<T, u32, _>(t(arch), Add)
    });
    job(jobs, name("segmented Add, arg-extremes"), move || {
        precompile_segmented::<T, _>(t(arch), Add)
    });
    job(jobs, name("histogram, u32 counts"), move || precompile_histogram::<T, u32>(t(arch)));
    bykey_jobs::<T>(arch, jobs);
    job(jobs, name("top-k"), move || precompile_topk::<T>(t(arch)));
    job(jobs, name("search Less"), move || precompile_search::<T, _>(t(arch), Less));
    job(jobs, name("segmented sort, keys and u32 values"), move || {
        precompile_segsort::<T, u32>(t(arch))
    });
    job(jobs, name("merge Less, keys and u32 values"), move || {
        precompile_merge::<T, u32>(t(arch))
    });
    job(jobs, name("merge Greater, keys and f64 values"), move || {
        precompile_merge_by::<T, f64, _>(t(arch), Greater)
    });
    if full() {
        for_ops_reduce_scan::<T, _>(arch, jobs, Mul);
        for_ops_reduce_scan::<T, _>(arch, jobs, Min);
        for_ops_reduce_scan::<T, _>(arch, jobs, Max);
        macro_rules! predicate {
            ($($p:expr),*) => {$(
                job(jobs, name(&format!("predicate {}", stringify!($p))), move || precompile_predicate::<T, _>(t(arch), $p));
            )*};
        }
        predicate!(
            Eq(T::one()),
            Ne(T::zero()),
            Le(T::one()),
            Gt(T::zero()),
            Ge(T::zero()),
            IsNan,
            Not(IsNan)
        );
        job(jobs, name("scan_by_key values Add, u32 keys"), move || {
            precompile_scan_by_key::<u32, T, _>(t(arch), Add)
        });
        job(jobs, name("scan_by_key values Max, u64 keys"), move || {
            precompile_scan_by_key::<u64, T, _>(t(arch), Max)
        });
        job(jobs, name("histogram, u64 counts"), move || precompile_histogram::<T, u64>(t(arch)));
    }
}

/// The by-key kernels with keys `T`: unique / unique_count / unique_by_key
/// (u32 and f64 values) / run-length encoding, reduce_by_key of f32 and u64
/// values, and of `T` values under u32 keys; with a comparator.
fn bykey_jobs<T: Arith>(arch: u32, jobs: &mut Vec<Job>) {
    let t = Target::Arch;
    let name = move |what: &str| format!("sm_{arch} {} by_key {what}", T::NAME);
    job(jobs, name("unique, u32 values"), move || precompile_unique::<T, u32>(t(arch)));
    job(jobs, name("unique, f64 values"), move || precompile_unique::<T, f64>(t(arch)));
    job(jobs, name("reduce f32 Add values"), move || {
        precompile_reduce_by_key::<T, f32, _>(t(arch), Add)
    });
    job(jobs, name("reduce u64 Max values"), move || {
        precompile_reduce_by_key::<T, u64, _>(t(arch), Max)
    });
    job(jobs, name("reduce values Add, u32 keys"), move || {
        precompile_reduce_by_key::<u32, T, _>(t(arch), Add)
    });
    job(jobs, name("reduce_by Less, f64 values"), move || {
        precompile_reduce_by_key_by::<T, f64, _, _>(t(arch), Add, Less)
    });
}

/// Every element type through `$f::<T>(arch, jobs)`.
macro_rules! each_type {
    ($f:ident, $arch:expr, $jobs:expr) => {
        $f::<u8>($arch(0), $jobs);
        $f::<i8>($arch(1), $jobs);
        $f::<u32>($arch(2), $jobs);
        $f::<i32>($arch(3), $jobs);
        $f::<u64>($arch(4), $jobs);
        $f::<i64>($arch(5), $jobs);
        $f::<f16>($arch(6), $jobs);
        $f::<bf16>($arch(7), $jobs);
        $f::<f32>($arch(8), $jobs);
        $f::<f64>($arch(9), $jobs);
    };
}

/// The kNN kernels: every candidate-list size (k = 1, 4, 8, 16, 32, 64 in
/// registers, 100 on the heap) for 3-D f32 and f64, and k = 8 plus the
/// heap for other dimensions (the kd-tree up to 16, brute force to 128).
fn knn_jobs(jobs: &mut Vec<Job>) {
    macro_rules! knn {
        ($arch:expr, $p:ty, [$($k:expr),*]) => {$(
            job(jobs, format!("sm_{} knn {} k={}", $arch, stringify!($p), $k), move || precompile_knn::<$p>(Target::Arch($arch), $k));
        )*};
    }
    for &arch in ARCHS {
        knn!(arch, [f32; 3], [1, 4, 8, 16, 32, 64, 100]);
        knn!(arch, [f64; 3], [1, 8, 32, 100]);
        knn!(arch, [f32; 2], [8, 100]);
        knn!(arch, [f32; 4], [8]);
        knn!(arch, [f32; 16], [8, 64]);
        knn!(arch, [f64; 16], [8, 32]);
        knn!(arch, [f32; 128], [8, 64, 100]);
        knn!(arch, [f64; 128], [8, 32, 100]);
    }
}

/// (min, max) of f32 pairs: a tuple accumulator for the fused reduction.
#[derive(Clone, Copy)]
struct MinMax;
impl cuprim::ops::BinaryOp<(f32, f32)> for MinMax {
    fn apply(&self, a: (f32, f32), b: (f32, f32)) -> (f32, f32) {
        (a.0.min(b.0), a.1.max(b.1))
    }
    fn cuda_expr(&self) -> String {
        "cuprim_t2<float, float>{fminf(a.a0, b.a0), fmaxf(a.a1, b.a1)}".into()
    }
}
impl cuprim::ops::Associative for MinMax {}
impl cuprim::ops::Commutative for MinMax {}
impl Monoid<(f32, f32)> for MinMax {
    fn identity(&self) -> (f32, f32) {
        (f32::INFINITY, f32::NEG_INFINITY)
    }
}

/// The fused kernels of a few expressions of every node kind: a dot
/// product, counting / constant inputs, maps of maps, a permutation, zip3
/// of mixed widths (unzip3), and a tuple reduction.
fn expr_jobs(arch: u32, jobs: &mut Vec<Job>) {
    use cuprim::precompile::{
        precompile_expr_merge, precompile_expr_reduce, precompile_expr_scan, precompile_expr_scan_by_key, precompile_expr_search,
        precompile_expr_select, precompile_expr_sorted_search,
    };
    use cuprim::prelude::*;
    let t = Target::Arch(arch);
    job(
        jobs,
        format!("sm_{arch} fused: dot, counting, constant, maps, permute, zip3, tuples, select, search, merge, set, scan_by_key"),
        move || {
            let host = Device::host();
            let a = DeviceVec::<f32>::zeros(&host, 0)?;
            let b = DeviceVec::<f32>::zeros(&host, 0)?;
            let i = DeviceVec::<u32>::zeros(&host, 0)?;
            let h = DeviceVec::<f16>::zeros(&host, 0)?;
            let mut r = precompile_expr_reduce(t, &zip(&a, &b).map(Mul), Add)?;
            r.extend(precompile_expr_scan(t, &zip(&a, &b).map(Mul), Add)?);
            r.extend(precompile_expr_scan(t, &counting(&host, 0u8, 3, 0).map(Square), Add)?);
            r.extend(precompile_expr_reduce(t, &constant(&host, 2.5f64, 0).map(Negate), Max)?);
            r.extend(precompile_expr_reduce(t, &h.map(Cast::<f64>::new()).map(Abs).permute(&i), Min)?);
            r.extend(precompile_expr_reduce(
                t,
                &zip3(&h, &i, counting(&host, 1i64, 1, 0)).map(Cast3),
                Add,
            )?);
            r.extend(precompile_expr_reduce(t, &zip(&a, &b), MinMax)?);
            r.extend(precompile_expr_reduce(
                t,
                &a.permute_by(counting(&host, 0u32, 3, 0).map(Square)),
                Add,
            )?);
            r.extend(precompile_expr_select(t, &zip(&a, &b).map(Mul), Gt(0.5f32))?);
            r.extend(precompile_expr_select(t, &h.permute_by(counting(&host, 0u64, 2, 0)), Gt(f16::ONE))?);
            r.extend(precompile_expr_search(t, &a.map(Negate).permute(&i), Less)?);
            r.extend(precompile_expr_search(t, &counting(&host, 0u64, 7, 0), Less)?);
            r.extend(precompile_expr_sorted_search(t, &a.map(Negate).permute(&i), Greater)?);
            r.extend(precompile_expr_sorted_search(t, &counting(&host, 0u64, 3, 0), Less)?);
            r.extend(precompile_expr_merge(t, &a.map(Negate).permute(&i), &b.lazy(), Greater)?);
            r.extend(precompile_expr_merge(
                t,
                &counting(&host, 0u64, 3, 0),
                &counting(&host, 1u64, 2, 0),
                Less,
            )?);
            r.extend(cuprim::precompile::precompile_expr_set(
                t,
                &a.map(Negate).permute(&i),
                &b.lazy(),
                Greater,
            )?);
            r.extend(cuprim::precompile::precompile_expr_set(
                t,
                &counting(&host, 0u64, 3, 0),
                &counting(&host, 1u64, 2, 0),
                Less,
            )?);
            r.extend(precompile_expr_scan_by_key(t, &i.lazy(), &zip(&a, &b).map(Mul), Add)?);
            r.extend(precompile_expr_scan_by_key(
                t,
                &counting(&host, 0u32, 1, 0).permute(&i),
                &h.map(Negate),
                Max,
            )?);
            Ok(r)
        },
    );
    job(
        jobs,
        format!("sm_{arch} fused: merge and set operations by key (values from expressions)"),
        move || {
            use cuprim::precompile::{precompile_expr_merge_by_key, precompile_expr_set_by_key};
            let host = Device::host();
            let a = DeviceVec::<f32>::zeros(&host, 0)?;
            let b = DeviceVec::<f32>::zeros(&host, 0)?;
            let d = DeviceVec::<f64>::zeros(&host, 0)?;
            let i = DeviceVec::<u32>::zeros(&host, 0)?;
            let c = DeviceVec::<u8>::zeros(&host, 0)?;
            let h = DeviceVec::<f16>::zeros(&host, 0)?;
            // 4-byte keys and values (256 x 11 tiles), 8-byte ones (512 x 7
            // for the merge, 256 x 7 for the sets), 1- and 2-byte keys with
            // 8-byte values; values as counting sequences, maps,
            // permutations, constants and buffers beside expressions.
            let mut r = precompile_expr_merge_by_key(
                t,
                &a.map(Negate).permute(&i),
                &counting(&host, 0u32, 1, 0),
                &b.lazy(),
                &i.lazy(),
                Greater,
            )?;
            r.extend(precompile_expr_merge_by_key(
                t,
                &counting(&host, 0u64, 3, 0),
                &d.map(Negate),
                &counting(&host, 1u64, 2, 0),
                &d.permute(&i),
                Less,
            )?);
            r.extend(precompile_expr_merge_by_key(
                t,
                &c.lazy(),
                &d.map(Negate),
                &c.map(Square),
                &d.lazy(),
                Less,
            )?);
            r.extend(precompile_expr_merge_by_key(
                t,
                &h.map(Negate),
                &counting(&host, 0u64, 1, 0),
                &h.lazy(),
                &constant(&host, 5u64, 0),
                Less,
            )?);
            r.extend(precompile_expr_set_by_key(
                t,
                &a.map(Negate).permute(&i),
                &counting(&host, 0u32, 1, 0),
                &b.lazy(),
                &i.map(Square),
                Greater,
            )?);
            r.extend(precompile_expr_set_by_key(
                t,
                &counting(&host, 0u64, 3, 0),
                &d.map(Negate),
                &counting(&host, 1u64, 2, 0),
                &d.permute(&i),
                Less,
            )?);
            // a's values a buffer: the buffer forms' values module for the
            // intersection and the difference.
            r.extend(precompile_expr_set_by_key(
                t,
                &c.lazy(),
                &d.lazy(),
                &c.map(Square),
                &d.map(Negate),
                Less,
            )?);
            Ok(r)
        },
    );
    job(
        jobs,
        format!("sm_{arch} fused: find_first / any / all, vote, quantify, select_one"),
        move || {
            use cuprim::precompile::precompile_expr_collectives;
            let host = Device::host();
            let a = DeviceVec::<f32>::zeros(&host, 0)?;
            let b = DeviceVec::<f32>::zeros(&host, 0)?;
            let i = DeviceVec::<u32>::zeros(&host, 0)?;
            let h = DeviceVec::<f16>::zeros(&host, 0)?;
            let c = DeviceVec::<u8>::zeros(&host, 0)?;
            let mut r = precompile_expr_collectives(t, &zip(&a, &b).map(Mul), Gt(0.5f32))?;
            r.extend(precompile_expr_collectives(t, &counting(&host, 0u64, 3, 0).map(Square), Eq(9u64))?);
            r.extend(precompile_expr_collectives(t, &h.map(Cast::<f64>::new()).permute(&i), Gt(0.0f64))?);
            // 16 elements per vector (a 1-byte buffer), each widened to 8 bytes.
            r.extend(precompile_expr_collectives(t, &c.map(Cast::<f64>::new()), Not(IsNan))?);
            r.extend(precompile_expr_collectives(t, &c.map(Negate), Gt(3u8))?);
            r.extend(precompile_expr_collectives(t, &zip(&a, &c).map(Cast2), Gt(0.0f64))?);
            Ok(r)
        },
    );
    job(
        jobs,
        format!("sm_{arch} fused: reduce_by_key (tuples unzipped), unique, run lengths, segmented, sorts"),
        move || {
            use cuprim::precompile::{
                precompile_expr_reduce_by_key, precompile_expr_segmented, precompile_expr_sort, precompile_expr_sort_pairs,
                precompile_expr_unique,
            };
            let host = Device::host();
            let a = DeviceVec::<f32>::zeros(&host, 0)?;
            let i = DeviceVec::<u32>::zeros(&host, 0)?;
            let k = DeviceVec::<i32>::zeros(&host, 0)?;
            let d = DeviceVec::<f64>::zeros(&host, 0)?;
            let mut r = precompile_expr_reduce_by_key(t, &k.map(Abs), &a.map(Square), Add)?;
            r.extend(precompile_expr_reduce_by_key(
                t,
                &counting(&host, 0u32, 1, 0),
                &counting(&host, 1i64, 2, 0),
                Add,
            )?);
            r.extend(precompile_expr_reduce_by_key(t, &k.map(Abs), &zip(&a, &a), MinMax)?);
            r.extend(precompile_expr_reduce_by_key(t, &i.lazy(), &zip3(&a, &d, &i).map(Spread3), Sum3)?);
            r.extend(precompile_expr_reduce_by_key(t, &k.permute(&i), &d.permute(&i), Max)?);
            r.extend(precompile_expr_unique(t, &k.map(Abs), &zip(counting(&host, 0u64, 1, 0), &a))?);
            r.extend(precompile_expr_unique(t, &a.map(Negate).permute(&i), &d.lazy())?);
            r.extend(precompile_expr_unique(t, &k.lazy(), &d.permute(&i))?);
            r.extend(precompile_expr_segmented(t, &a.map(Square), Add)?);
            r.extend(precompile_expr_segmented(t, &zip(&a, &a).map(Mul), Add)?);
            r.extend(precompile_expr_segmented(t, &d.permute(&i), Min)?);
            r.extend(precompile_expr_segmented(t, &counting(&host, 0u64, 1, 0), Add)?);
            r.extend(precompile_expr_sort(t, &a.map(Negate))?);
            r.extend(precompile_expr_sort(t, &k.permute(&i).map(Cast::<u8>::new()))?);
            r.extend(precompile_expr_sort_pairs(t, &k.map(Abs), &counting(&host, 0u32, 1, 0))?);
            r.extend(precompile_expr_sort_pairs(t, &d.map(Negate), &a.lazy())?);
            r.extend(cuprim::precompile::precompile_expr_adjacent_difference(t, &a.map(Square), Sub)?);
            r.extend(cuprim::precompile::precompile_expr_adjacent_difference(t, &k.permute(&i), Max)?);
            Ok(r)
        },
    );
    job(
        jobs,
        format!("sm_{arch} fused: segmented sorts (keys, pairs; u32 and u64 offsets)"),
        move || {
            use cuprim::precompile::{precompile_expr_segsort, precompile_expr_segsort_pairs};
            let host = Device::host();
            let a = DeviceVec::<f32>::zeros(&host, 0)?;
            let i = DeviceVec::<u32>::zeros(&host, 0)?;
            let k = DeviceVec::<i32>::zeros(&host, 0)?;
            let d = DeviceVec::<f64>::zeros(&host, 0)?;
            let mut r = precompile_expr_segsort(t, &a.map(Negate))?;
            r.extend(precompile_expr_segsort(t, &k.permute(&i).map(Cast::<u8>::new()))?);
            r.extend(precompile_expr_segsort(t, &counting(&host, 0u64, 3, 0))?);
            r.extend(precompile_expr_segsort_pairs(t, &k.map(Abs), &counting(&host, 0u32, 1, 0))?);
            r.extend(precompile_expr_segsort_pairs(t, &d.map(Negate), &a.permute(&i))?);
            Ok(r)
        },
    );
    job(
        jobs,
        format!("sm_{arch} fused: comparison sorts (sorted_by, sorted_pairs_by; every tile shape)"),
        move || {
            use cuprim::precompile::{precompile_expr_sort_by, precompile_expr_sort_pairs_by};
            let host = Device::host();
            let a = DeviceVec::<f32>::zeros(&host, 0)?;
            let b = DeviceVec::<f32>::zeros(&host, 0)?;
            let i = DeviceVec::<u32>::zeros(&host, 0)?;
            let k = DeviceVec::<i32>::zeros(&host, 0)?;
            let d = DeviceVec::<f64>::zeros(&host, 0)?;
            // 4-byte keys alone: three tile shapes, each with its merge module.
            let mut r = precompile_expr_sort_by(t, &a.map(Negate), TotalDesc)?;
            r.extend(precompile_expr_sort_by(t, &zip(&a, &b).map(Mul), TotalAsc)?);
            r.extend(precompile_expr_sort_by(t, &k.permute(&i), TotalDesc)?);
            // Gathers in the 32-register tile stage in batches (two of them, and by a computed index).
            r.extend(precompile_expr_sort_by(t, &zip(a.permute(&i), b.permute(&i)).map(Mul), TotalDesc)?);
            r.extend(precompile_expr_sort_by(
                t,
                &a.permute_by(counting(&host, 0u32, 3, 0)).map(Negate),
                TotalAsc,
            )?);
            r.extend(precompile_expr_sort_by(t, &counting(&host, 0u64, 3, 0), TotalDesc)?);
            r.extend(precompile_expr_sort_by(t, &k.map(Cast::<u8>::new()), TotalAsc)?);
            r.extend(precompile_expr_sort_by(t, &d.map(Abs).permute(&i), TotalAsc)?);
            r.extend(precompile_expr_sort_pairs_by(
                t,
                &k.map(Abs),
                &counting(&host, 0u32, 1, 0),
                TotalAsc,
            )?);
            r.extend(precompile_expr_sort_pairs_by(t, &d.map(Negate), &a.permute(&i), TotalDesc)?);
            r.extend(precompile_expr_sort_pairs_by(t, &zip(&a, &b).map(Mul), &i.lazy(), TotalDesc)?);
            r.extend(precompile_expr_sort_pairs_by(t, &counting(&host, 0u8, 1, 0), &d.lazy(), TotalAsc)?);
            Ok(r)
        },
    );
    job(jobs, format!("sm_{arch} fused: top-k (u32 and u64 indices)"), move || {
        use cuprim::precompile::precompile_expr_topk;
        let host = Device::host();
        let a = DeviceVec::<f32>::zeros(&host, 0)?;
        let i = DeviceVec::<u32>::zeros(&host, 0)?;
        let k = DeviceVec::<i32>::zeros(&host, 0)?;
        let d = DeviceVec::<f64>::zeros(&host, 0)?;
        let mut r = precompile_expr_topk(t, &a.map(Negate))?;
        r.extend(precompile_expr_topk(t, &k.permute(&i).map(Cast::<u8>::new()))?);
        r.extend(precompile_expr_topk(t, &counting(&host, 0u64, 3, 0))?);
        r.extend(precompile_expr_topk(t, &zip(&a, d.map(Cast::<f32>::new())).map(Mul))?);
        r.extend(precompile_expr_topk(t, &d.map(Abs))?);
        Ok(r)
    });
    job(
        jobs,
        format!("sm_{arch} fused: kd-tree build and queries (D = 1, 2, 3)"),
        move || {
            use cuprim::precompile::precompile_expr_knn;
            let host = Device::host();
            let a = DeviceVec::<f32>::zeros(&host, 0)?;
            let i = DeviceVec::<u32>::zeros(&host, 0)?;
            let d = DeviceVec::<f64>::zeros(&host, 0)?;
            let mut r = precompile_expr_knn(t, &zip3(&a, &a, a.map(Negate)), 8)?;
            r.extend(precompile_expr_knn(t, &zip3(&a, &a, &a), 64)?);
            r.extend(precompile_expr_knn(t, &zip(&d, d.permute(&i)), 32)?);
            r.extend(precompile_expr_knn(t, &zip(&a, counting(&host, 0.0f32, 0.5, 0)), 100)?);
            r.extend(precompile_expr_knn(t, &d.map(Negate), 1)?);
            Ok(r)
        },
    );
    job(
        jobs,
        format!("sm_{arch} fused: kd-tree build and queries of points (D = 4, 5, 8, 16), reductions and to_vec of points"),
        move || {
            use cuprim::precompile::{precompile_expr_knn, precompile_expr_reduce};
            let host = Device::host();
            let i = DeviceVec::<u32>::zeros(&host, 0)?;
            let j = DeviceVec::<u64>::zeros(&host, 0)?;
            let p4 = DeviceVec::<[f32; 4]>::from_slice(&host, &[])?;
            let p5 = DeviceVec::<[f64; 5]>::from_slice(&host, &[])?;
            let p8 = DeviceVec::<[f32; 8]>::from_slice(&host, &[])?;
            let d8 = DeviceVec::<[f64; 8]>::from_slice(&host, &[])?;
            let p16 = DeviceVec::<[f32; 16]>::from_slice(&host, &[])?;
            let d16 = DeviceVec::<[f64; 16]>::from_slice(&host, &[])?;
            let mut r = precompile_expr_knn(t, &p4.permute(&i), 8)?;
            r.extend(precompile_expr_knn(t, &p5.permute(&j), 1)?);
            r.extend(precompile_expr_knn(t, &p8.permute(&i), 4)?);
            r.extend(precompile_expr_knn(t, &p8.permute(&i), 100)?);
            r.extend(precompile_expr_knn(t, &d8.permute(&i), 32)?);
            r.extend(precompile_expr_knn(t, &p16.permute(&i), 64)?);
            r.extend(precompile_expr_knn(t, &d16.permute(&i), 8)?);
            r.extend(precompile_expr_knn(t, &p16.map(Mirror), 16)?);
            r.extend(precompile_expr_knn(t, &constant(&host, [0.5f32; 8], 0), 8)?);
            // A buffer of points: the buffer's modules.
            r.extend(precompile_expr_knn(t, &p8.lazy(), 8)?);
            // Reductions and to_vec of points, up to the 32-byte accumulator
            // (a gather of 32-byte points spills: not checked).
            r.extend(precompile_expr_reduce(t, &p4.lazy(), CoordMin)?);
            r.extend(precompile_expr_reduce(t, &p4.permute(&i), CoordMin)?);
            r.extend(precompile_expr_reduce(t, &p8.lazy(), CoordMin)?);
            Ok(r)
        },
    );
}

/// The point mirrored at the origin (a map of points to points).
#[derive(Clone, Copy)]
struct Mirror;
impl cuprim::ops::UnaryOp<[f32; 16]> for Mirror {
    type Output = [f32; 16];
    fn apply(&self, x: [f32; 16]) -> [f32; 16] {
        x.map(|c| -c)
    }
    fn cuda_expr(&self) -> String {
        let c: Vec<String> = (0..16).map(|j| format!("-x.v[{j}]")).collect();
        format!("cuprim_arr<float, 16>{{{{{}}}}}", c.join(", "))
    }
}

/// The low corner of the bounding box of f32 points: a point accumulator.
#[derive(Clone, Copy)]
struct CoordMin;
impl<const D: usize> cuprim::ops::BinaryOp<[f32; D]> for CoordMin {
    fn apply(&self, a: [f32; D], b: [f32; D]) -> [f32; D] {
        std::array::from_fn(|j| a[j].min(b[j]))
    }
    fn cuda_expr(&self) -> String {
        let c: Vec<String> = (0..D).map(|j| format!("fminf(a.v[{j}], b.v[{j}])")).collect();
        format!("cuprim_arr<float, {D}>{{{{{}}}}}", c.join(", "))
    }
}
impl cuprim::ops::Associative for CoordMin {}
impl cuprim::ops::Commutative for CoordMin {}
impl<const D: usize> Monoid<[f32; D]> for CoordMin {
    fn identity(&self) -> [f32; D] {
        [f32::INFINITY; D]
    }
}

cuprim::comparator! {
    /// The built-in `Less` order as a user comparator (the merge sort, not the radix sort).
    struct TotalAsc for u8, i32, u32, u64, f32, f64 {
        rust: |a, b| a < b,
        cuda: "cuprim_total_less(a, b)",
    }
}

cuprim::comparator! {
    /// The built-in `Greater` order as a user comparator.
    struct TotalDesc for u8, i32, u32, u64, f32, f64 {
        rust: |a, b| b < a,
        cuda: "cuprim_total_less(b, a)",
    }
}

/// Sums of (u32, f64): a 4 + 8-byte pair (16 bytes with padding).
#[derive(Clone, Copy)]
struct CountSum64;
impl cuprim::ops::BinaryOp<(u32, f64)> for CountSum64 {
    fn apply(&self, a: (u32, f64), b: (u32, f64)) -> (u32, f64) {
        (a.0.wrapping_add(b.0), a.1 + b.1)
    }
    fn cuda_expr(&self) -> String {
        "cuprim_t2<unsigned int, double>{a.a0 + b.a0, a.a1 + b.a1}".into()
    }
}
impl cuprim::ops::Associative for CountSum64 {}
impl Monoid<(u32, f64)> for CountSum64 {
    fn identity(&self) -> (u32, f64) {
        (0, -0.0)
    }
}

/// Sums of (f64, f64, i64): an 8 + 8 + 8-byte triple.
#[derive(Clone, Copy)]
struct Sum888;
impl cuprim::ops::BinaryOp<(f64, f64, i64)> for Sum888 {
    fn apply(&self, a: (f64, f64, i64), b: (f64, f64, i64)) -> (f64, f64, i64) {
        (a.0 + b.0, a.1 + b.1, a.2.wrapping_add(b.2))
    }
    fn cuda_expr(&self) -> String {
        "cuprim_t3<double, double, long long>{a.a0 + b.a0, a.a1 + b.a1, a.a2 + b.a2}".into()
    }
}
impl cuprim::ops::Associative for Sum888 {}
impl Monoid<(f64, f64, i64)> for Sum888 {
    fn identity(&self) -> (f64, f64, i64) {
        (-0.0, -0.0, 0)
    }
}

/// The unzipped scans of tuple expressions (`scan_unzip`, `scan_unzip3`):
/// pairs of 4 + 4 and 4 + 8 bytes (16-byte vectors of 2 and of 1), a
/// triple of 8 + 8 + 8 and one of 4 + 8 + 8 (24 bytes, one value at a
/// time), fast and deterministic look-back each.
fn tuple_scan_jobs(arch: u32, jobs: &mut Vec<Job>) {
    use cuprim::precompile::precompile_expr_scan;
    use cuprim::prelude::*;
    let t = Target::Arch(arch);
    job(jobs, format!("sm_{arch} fused: tuple scans (unzipped)"), move || {
        let host = Device::host();
        let a = DeviceVec::<f32>::zeros(&host, 0)?;
        let d = DeviceVec::<f64>::zeros(&host, 0)?;
        let i = DeviceVec::<u32>::zeros(&host, 0)?;
        let mut r = precompile_expr_scan(t, &zip(&a, &a), MinMax)?;
        r.extend(precompile_expr_scan(t, &zip(constant(&host, 1u32, 0), &d), CountSum64)?);
        r.extend(precompile_expr_scan(
            t,
            &zip3(&d, d.map(Negate), counting(&host, 0i64, 1, 0)),
            Sum888,
        )?);
        r.extend(precompile_expr_scan(t, &zip3(&a, &d, &i).map(Spread3), Sum3)?);
        Ok(r)
    });
}

/// (f32, f64, u32) -> (u32, f64, i64): a triple of mixed widths.
#[derive(Clone, Copy)]
struct Spread3;
impl cuprim::ops::UnaryOp<(f32, f64, u32)> for Spread3 {
    type Output = (u32, f64, i64);
    fn apply(&self, x: (f32, f64, u32)) -> (u32, f64, i64) {
        (x.2, x.1 + x.0 as f64, x.2 as i64)
    }
    fn cuda_expr(&self) -> String {
        "cuprim_t3<unsigned int, double, long long>{x.a2, x.a1 + (double)x.a0, (long long)x.a2}".into()
    }
}

/// Sums of (u32, f64, i64).
#[derive(Clone, Copy)]
struct Sum3;
impl cuprim::ops::BinaryOp<(u32, f64, i64)> for Sum3 {
    fn apply(&self, a: (u32, f64, i64), b: (u32, f64, i64)) -> (u32, f64, i64) {
        (a.0.wrapping_add(b.0), a.1 + b.1, a.2.wrapping_add(b.2))
    }
    fn cuda_expr(&self) -> String {
        "cuprim_t3<unsigned int, double, long long>{a.a0 + b.a0, a.a1 + b.a1, a.a2 + b.a2}".into()
    }
}
impl cuprim::ops::Associative for Sum3 {}
impl Monoid<(u32, f64, i64)> for Sum3 {
    fn identity(&self) -> (u32, f64, i64) {
        (0, 0.0, 0)
    }
}

/// (f16, u32, i64) -> f64: their sum, for the zip3 job.
#[derive(Clone, Copy)]
struct Cast3;
impl cuprim::ops::UnaryOp<(f16, u32, i64)> for Cast3 {
    type Output = f64;
    fn apply(&self, x: (f16, u32, i64)) -> f64 {
        x.0.to_f64() + x.1 as f64 + x.2 as f64
    }
    fn cuda_expr(&self) -> String {
        "(double)(float)x.a0 + (double)x.a1 + (double)x.a2".into()
    }
}

/// (f32, u8) -> f64: their product, for the collectives job (buffers of
/// 4 and 1 bytes read together).
#[derive(Clone, Copy)]
struct Cast2;
impl cuprim::ops::UnaryOp<(f32, u8)> for Cast2 {
    type Output = f64;
    fn apply(&self, x: (f32, u8)) -> f64 {
        x.0 as f64 * x.1 as f64
    }
    fn cuda_expr(&self) -> String {
        "(double)x.a0 * (double)x.a1".into()
    }
}

fn all_jobs() -> Vec<Job> {
    let mut jobs = Vec::new();
    knn_jobs(&mut jobs);
    for &arch in ARCHS {
        expr_jobs(arch, &mut jobs);
        tuple_scan_jobs(arch, &mut jobs);
        // The predicate's text in a lambda inside the map: one 4-byte and one
        // 8-byte element type, one architecture each (14 modules apiece).
        job(
            &mut jobs,
            format!("sm_{arch} segmented count / any / all / quantify / find_first"),
            move || {
                use cuprim::precompile::precompile_segmented_collectives;
                let t = Target::Arch(arch);
                if arch == ARCHS[0] {
                    precompile_segmented_collectives::<f32, _>(t, Gt(0.5f32))
                } else {
                    precompile_segmented_collectives::<f64, _>(t, Not(IsNan))
                }
            },
        );
    }
    // The heavy families first, so the two NVRTC threads finish together.
    if full() {
        for &arch in ARCHS {
            each_type!(family_jobs, |_| arch, &mut jobs);
        }
    } else {
        // Each type on one architecture, alternating, so every kernel is
        // compiled for every type and for both architectures.
        each_type!(family_jobs, |i: usize| ARCHS[i % ARCHS.len()], &mut jobs);
    }
    for &arch in ARCHS {
        each_type!(elementwise_jobs, |_| arch, &mut jobs);
        bitwise_jobs::<u8>(arch, &mut jobs);
        bitwise_jobs::<i8>(arch, &mut jobs);
        bitwise_jobs::<u32>(arch, &mut jobs);
        bitwise_jobs::<i32>(arch, &mut jobs);
        bitwise_jobs::<u64>(arch, &mut jobs);
        bitwise_jobs::<i64>(arch, &mut jobs);
    }
    jobs
}

/// ptxas' per-kernel line: "N bytes stack frame, N bytes spill stores, N
/// bytes spill loads". Returns (stack, spill stores, spill loads).
fn resource_line(line: &str) -> Option<(u64, u64, u64)> {
    if !line.contains("bytes stack frame") {
        return None;
    }
    let number_before = |label: &str| -> Option<u64> {
        let head = &line[..line.find(label)?];
        head.split(|c: char| !c.is_ascii_digit())
            .rev()
            .find(|w| !w.is_empty())?
            .parse()
            .ok()
    };
    Some((
        number_before("bytes stack frame")?,
        number_before("bytes spill stores")?,
        number_before("bytes spill loads")?,
    ))
}

#[test]
fn resource_line_parses_ptxas_output() {
    let line = "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads";
    assert_eq!(resource_line(line), Some((16, 8, 4)));
    assert_eq!(resource_line("ptxas info    : Used 40 registers, used 1 barriers"), None);
}

#[test]
fn every_kernel_compiles_for_sm80_and_sm90() {
    let info = match cuprim::jit::nvrtc::nvrtc() {
        Ok(info) => info,
        Err(e) => {
            if common::required(common::Needs::Nvrtc) {
                panic!("CUPRIM_REQUIRE_NVRTC=1 but NVRTC cannot be used: {e}");
            }
            common::skipped(common::Needs::Nvrtc, &e.to_string());
            return;
        }
    };
    for arch in ARCHS {
        assert!(
            info.archs.contains(arch),
            "NVRTC {:?} at {} cannot emit sm_{arch} code (it knows {:?})",
            info.version,
            info.found_at,
            info.archs
        );
    }

    let start = std::time::Instant::now();
    let jobs = all_jobs();
    let results = common::run_in_order(&jobs, |(name, f)| (name.clone(), f()));

    let mut failures = Vec::new();
    let mut heavy = Vec::new();
    let mut kernels = 0;
    // A module that several jobs compile (the kd-tree build, which does not
    // depend on k) is checked once, from the first copy whose log has the
    // ptxas report: with 8 threads, the GPU machine's NVRTC 13.0 returned an
    // empty log for one of the copies compiled alongside an identical
    // program (a different copy each run; jit::compile_report now repeats
    // such a compile, up to three tries). A module is its template and
    // specialisation on one architecture: the display name alone would
    // merge modules that differ only in constants (fast and deterministic
    // scans, 32- and 64-bit sort offsets).
    type ModuleId = (u32, String, String);
    let mut by_module: std::collections::BTreeMap<ModuleId, (String, Vec<String>)> = Default::default();
    for (name, result) in results {
        let reports = match result {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        if reports.is_empty() {
            failures.push(format!("{name}: no kernel was compiled"));
        }
        common::dump_images(&reports);
        for report in reports {
            let entry = by_module
                .entry((report.arch, report.name, report.specialisation))
                .or_insert_with(|| (name.clone(), Vec::new()));
            entry.1.push(report.log);
        }
    }
    // The segmented sort's survey of the offsets is its own module (one per
    // offset type, whatever the keys: the bitonic-only sorts compile no radix
    // module for it), from the segmented sort jobs: on every architecture.
    for &arch in ARCHS {
        let surveys = by_module
            .keys()
            .filter(|(a, module, _)| *a == arch && module.contains("segsort/segsort_survey.cu"))
            .count();
        if surveys != 2 {
            failures.push(format!(
                "sm_{arch}: {surveys} modules of kernels/segsort/segsort_survey.cu, not 2 (u32 and u64 offsets)"
            ));
        }
    }
    let modules = by_module.len();
    for ((_, module, _), (name, logs)) in &by_module {
        let reported = logs.iter().find(|log| log.lines().any(|l| resource_line(l).is_some()));
        let Some(log) = reported else {
            failures.push(format!(
                "{name}: {module}: no ptxas resource report in the log of any of its {} compiles:\n{}",
                logs.len(),
                logs.join("\n")
            ));
            continue;
        };
        if std::env::var("CUPRIM_COMPILE_CHECK_SHOW").is_ok_and(|show| name.contains(&show)) {
            eprintln!("{name}: {module}:\n{log}");
        }
        let lines: Vec<(u64, u64, u64)> = log.lines().filter_map(resource_line).collect();
        kernels += lines.len();
        for (stack, stores, loads) in lines {
            if stack != 0 || stores != 0 || loads != 0 {
                heavy.push(format!(
                    "{name}: {module}: {stack} bytes stack frame, {stores} bytes spill stores, {loads} bytes spill loads"
                ));
            }
        }
    }
    eprintln!(
        "compile_check: {} jobs, {modules} modules, {kernels} kernels for sm_80 and sm_90 in {:.1} s (NVRTC {}.{})",
        jobs.len(),
        start.elapsed().as_secs_f64(),
        info.version.0,
        info.version.1
    );
    assert!(failures.is_empty(), "{} compile failures:\n{}", failures.len(), failures.join("\n"));
    assert!(
        heavy.is_empty(),
        "{} kernels spill or use a stack frame:\n{}",
        heavy.len(),
        heavy.join("\n")
    );
}

/// Targets at the edges: the host backend needs no kernels; an
/// architecture older than NVRTC knows is an error, not a panic; one newer
/// than it knows falls back to PTX for the newest it does.
#[test]
fn precompile_targets_at_the_edges() {
    let host = cuprim::Device::host();
    assert!(precompile::<f32>(Target::Device(&host)).unwrap().is_empty());
    assert!(precompile_binary::<u8, _>(Target::Device(&host), BitXor).unwrap().is_empty());
    let Ok(info) = cuprim::jit::nvrtc::nvrtc() else {
        if common::required(common::Needs::Nvrtc) {
            panic!("CUPRIM_REQUIRE_NVRTC=1 but NVRTC cannot be used");
        }
        common::skipped(common::Needs::Nvrtc, "precompile_targets_at_the_edges: no NVRTC");
        return;
    };
    let e = precompile_unary::<f32, _>(Target::Arch(10), Negate);
    assert!(e.is_err(), "sm_10 should be refused, got {e:?}");
    let newest = info.archs.iter().copied().max().unwrap_or(90);
    let future = precompile_unary::<f32, _>(Target::Arch(newest + 100), Negate).unwrap();
    assert_eq!(future.len(), 1);
    assert!(future[0].name.contains("transform"), "report name {:?}", future[0].name);
}

// ---------------------------------------------------------------------------
// adjacent_difference (Sub), the collectives (vote, quantify, select_one
// with Gt and IsNan; broadcast in the fill module) and the sharded fold and
// ordered total (Add)
// for every element type on
// sm_80 and sm_90: no spills, no stack. Their own test, so that
// `cargo test --test compile_check -- collective` checks them alone.

fn collective_jobs<T: Arith>(arch: u32, jobs: &mut Vec<Job>) {
    let t = Target::Arch;
    let name = move |what: &str| format!("sm_{arch} {} {what}", T::NAME);
    job(jobs, name("adjacent_difference Sub"), move || {
        precompile_adjacent_difference::<T, _>(t(arch), cuprim::ops::Sub)
    });
    job(jobs, name("collectives Gt"), move || {
        precompile_collectives::<T, _>(t(arch), Gt(T::one()))
    });
    job(jobs, name("collectives IsNan"), move || {
        precompile_collectives::<T, _>(t(arch), IsNan)
    });
    job(jobs, name("fill, broadcast, gather/scatter"), move || precompile::<T>(t(arch)));
    job(jobs, name("sharded fold / ordered total Add"), move || {
        cuprim::precompile::precompile_sharded::<T, _>(t(arch), cuprim::ops::Add)
    });
}

#[test]
fn collective_and_adjacent_kernels_compile() {
    if !nvrtc_present() {
        return;
    }
    let mut jobs = Vec::new();
    for &arch in ARCHS {
        each_type!(collective_jobs, |_| arch, &mut jobs);
    }
    let results = common::run_in_order(&jobs, |(name, f)| (name.clone(), f()));
    let mut problems = Vec::new();
    let mut kernels = 0;
    for (name, result) in results {
        let reports = match result {
            Ok(r) => r,
            Err(e) => {
                problems.push(format!("{name}: {e}"));
                continue;
            }
        };
        common::dump_images(&reports);
        for r in reports {
            if std::env::var("CUPRIM_COMPILE_CHECK_SHOW").is_ok_and(|show| name.contains(&show)) {
                eprintln!("{name}: {}:\n{}", r.name, r.log);
            }
            let lines: Vec<(u64, u64, u64)> = r.log.lines().filter_map(resource_line).collect();
            if lines.is_empty() {
                problems.push(format!("{name}: {}: no ptxas resource report:\n{}", r.name, r.log));
            }
            kernels += lines.len();
            for (stack, stores, loads) in lines {
                if stack != 0 || stores != 0 || loads != 0 {
                    problems.push(format!("{name}: {}: {stack} bytes stack, {stores}/{loads} bytes spilled", r.name));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
    // adjacent: 3 kernels, vote 1, race 2 (twice), fill 3, gather/scatter 2 x 2, extremes 2 x 1,
    // the sharded fold and ordered total 2.
    assert_eq!(kernels, ARCHS.len() * 10 * (3 + 2 * (1 + 2) + 3 + 4 + 2 + 2), "kernels reported");
}

// ---------------------------------------------------------------------------
// The radix sort's modules for sm_80 and sm_90, every key type: no spills,
// no stack, three kernel reports each. (Here, not in tests/sort.rs: with
// other tests of a process compiling without ptxas reports at the same time,
// NVRTC's logs came back without them; this process compiles only with.)

fn nvrtc_present() -> bool {
    match cuprim::jit::nvrtc::nvrtc() {
        Ok(_) => true,
        Err(e) => {
            if common::required(common::Needs::Nvrtc) {
                panic!("CUPRIM_REQUIRE_NVRTC=1 but NVRTC is unavailable: {e}");
            }
            common::skipped(common::Needs::Nvrtc, &format!("sort compile checks: {e}"));
            false
        }
    }
}

/// Kernels of a sort module: the one-launch small sort has one, an
/// onesweep module three (histogram, pass, and the histogram of an input
/// expression, `cuprim_radix_histogram_x`, since `11a4b68`), a classic
/// module three.
fn sort_module_kernels(name: &str) -> usize {
    if name.contains("radix_sort_small.cu") {
        1
    } else {
        3
    }
}

fn assert_lean(reports: cuprim::Result<Vec<KernelReport>>) -> usize {
    let reports = reports.unwrap_or_else(|e| panic!("{e}"));
    common::dump_images(&reports);
    let mut kernels = 0;
    for r in &reports {
        let lines: Vec<&str> = r.log.lines().filter(|l| l.contains("bytes stack frame")).collect();
        assert_eq!(
            lines.len(),
            sort_module_kernels(&r.name),
            "{} [{}]: kernel reports in its log:\n{}",
            r.name,
            r.arch,
            r.log
        );
        for line in lines {
            kernels += 1;
            assert!(
                line.contains(" 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"),
                "{}: {line}\n{}",
                r.name,
                r.log
            );
        }
    }
    kernels
}

type SortJob = Box<dyn Fn() -> usize + Send + Sync>;

macro_rules! compile_keys {
    ($arch:expr, $($t:ty),*) => {{
        let jobs: Vec<SortJob> = vec![$(Box::new(move || assert_lean(precompile_sort::<$t>(Target::Arch($arch))))),*];
        jobs
    }};
}

#[test]
fn compile_checks_every_key_type() {
    if !nvrtc_present() {
        return;
    }
    let mut jobs: Vec<SortJob> = Vec::new();
    let mut alternatives = 0;
    #[allow(unused_mut)]
    let mut classic = 0;
    for arch in [80u32, 90] {
        jobs.extend(compile_keys!(arch, u8, i8, u32, i32, u64, i64, f16, bf16, f32, f64));
        jobs.push(Box::new(move || assert_lean(precompile_sort_pairs::<u32, u32>(Target::Arch(arch)))));
        jobs.push(Box::new(move || assert_lean(precompile_sort_pairs::<f32, u32>(Target::Arch(arch)))));
        jobs.push(Box::new(move || assert_lean(precompile_sort_pairs::<f64, u32>(Target::Arch(arch)))));
        jobs.push(Box::new(move || assert_lean(precompile_sort_pairs::<u32, f64>(Target::Arch(arch)))));
        jobs.push(Box::new(move || assert_lean(precompile_sort_pairs::<i64, u64>(Target::Arch(arch)))));
        jobs.push(Box::new(move || assert_lean(precompile_sort_pairs::<u8, bf16>(Target::Arch(arch)))));
        jobs.push(Box::new(move || assert_lean(precompile_sort_pairs::<f16, i8>(Target::Arch(arch)))));
        #[cfg(feature = "classic-sort")]
        {
            classic += 1;
            jobs.push(Box::new(move || {
                assert_lean(precompile_sort_classic::<u32, u32>(Target::Arch(arch)))
            }));
        }
        // The modules with the shortcuts switched the other way.
        alternatives += 4;
        jobs.push(Box::new(move || {
            assert_lean(precompile_sort_alternatives::<u32, u32>(Target::Arch(arch)))
        }));
        jobs.push(Box::new(move || {
            assert_lean(precompile_sort_alternatives::<f32, u32>(Target::Arch(arch)))
        }));
        jobs.push(Box::new(move || {
            assert_lean(precompile_sort_alternatives::<f64, u32>(Target::Arch(arch)))
        }));
        jobs.push(Box::new(move || {
            assert_lean(precompile_sort_alternatives::<u8, bf16>(Target::Arch(arch)))
        }));
    }
    let total = jobs.len();
    let kernels = common::run_in_order(&jobs, |job| job());
    // Every module's kernel count is checked in assert_lean; here, that
    // every job compiled its modules: at least three onesweep modules (32-bit
    // positions with large and medium tiles, 64-bit positions) and three
    // small-sort shapes per job, 6 kernels per classic pair of modules, six
    // onesweep modules (keys alone and pairs) per alternatives job.
    let onesweep = total - classic - alternatives;
    assert_eq!(kernels.len(), onesweep + classic + alternatives);
    assert!(
        kernels.iter().all(|&k| k == 6 || k >= 3 * 2 + 3),
        "kernels reported per job: {kernels:?}"
    );
}

/// The by-key kernels of every key type on both architectures, without
/// spills (`cargo test --test compile_check by_key`).
#[test]
fn by_key_kernels_compile_without_spills() {
    if cuprim::jit::nvrtc::nvrtc().is_err() {
        if common::required(common::Needs::Nvrtc) {
            panic!("CUPRIM_REQUIRE_NVRTC=1 but NVRTC cannot be used");
        }
        common::skipped(common::Needs::Nvrtc, "NVRTC cannot be used");
        return;
    }
    let mut jobs = Vec::new();
    for &arch in ARCHS {
        each_type!(bykey_jobs, |_| arch, &mut jobs);
    }
    let results = common::run_in_order(&jobs, |(name, f)| (name.clone(), f()));
    let mut failures = Vec::new();
    for (name, result) in results {
        match result {
            Err(e) => failures.push(format!("{name}: {e}")),
            Ok(reports) if reports.is_empty() => failures.push(format!("{name}: no kernel was compiled")),
            Ok(reports) => {
                for r in reports {
                    let lines: Vec<_> = r.log.lines().filter_map(resource_line).collect();
                    if lines.is_empty() || lines.iter().any(|&l| l != (0, 0, 0)) {
                        failures.push(format!("{name}: {}: spills or no ptxas report:\n{}", r.name, r.log));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} by-key compile failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
