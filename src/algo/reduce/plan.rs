//! Plans and launches of the reduce family: the single-pass reduction
//! (`kernels/reduce/reduce.cu`) behind reduce, transform_reduce, count and
//! min/max_element, and the early-exit search (`kernels/reduce/find.cu`).

use crate::algo::policy::Policy;
use crate::device::{Counter, CudaDevice, Entry, Grid, Module, Ptr, Region, ScratchLayout};
use crate::element::Element;
use crate::error::Result;
use crate::jit::spec::{Pred, Unary};
use crate::jit::{template, KernelSpec, OpText, SpecWriter, Specialise, Template};
use crate::ops::{Add, Monoid, UnaryOp};
use crate::pred::Predicate;
use std::marker::PhantomData;

template!(REDUCE, "reduce/reduce.cu", ["cuprim_reduce"]);
template!(FIND, "reduce/find.cu", ["cuprim_find_first"]);

/// Four blocks of 256 with 8 x 16 B loads in flight per thread: CUB's speed or better for f32/f64/u32 sums at 2^28 (H100, run 759512f).
pub(crate) fn reduce_policy(_arch: u32) -> Policy {
    Policy {
        block: 256,
        unroll: 8,
        blocks_per_sm: 4,
    }
}

/// find_first / any / all: the early exit needs few blocks; four per SM leave registers for the predicate.
pub(crate) fn find_policy(_arch: u32) -> Policy {
    Policy {
        block: 256,
        unroll: 4,
        blocks_per_sm: 4,
    }
}

/// A specialisation of `kernels/reduce/reduce.cu`: what it folds decides
/// the accumulator and the `MapFn` / `ReduceOp` functors.
pub(crate) trait ReduceKernel: Specialise {
    /// The input element.
    type In: Element;
    /// Bytes of the accumulator (at most 16).
    fn acc_bytes(&self) -> usize;
    /// The architecture the plan is for.
    fn arch(&self) -> u32;
    /// The launch shape: the grid and the kernel's constants both come
    /// from here, so they cannot disagree.
    fn policy(&self) -> Policy {
        reduce_policy(self.arch())
    }
    /// The kernel's `p` parameter (a predicate's value).
    fn param(&self) -> Self::In {
        Self::In::zero()
    }
}

/// The reduce kernel: `cuprim_reduce(const T* in, u64 n, T p, A* partials,
/// u32* ticket, A* out)`; the accumulator `A` is passed as bytes.
fn reduce_entry<T: Element>() -> Entry<(Ptr<T>, u64, T, Ptr<u8>, Ptr<u32>, Ptr<u8>)> {
    // SAFETY: matches `cuprim_reduce` in kernels/reduce/reduce.cu: it reads
    // n elements of `in`, writes one accumulator per block to `partials`
    // and one to `out`, and returns the ticket to zero.
    unsafe { Entry::declare("cuprim_reduce") }
}

/// Launch shape, and scratch: per-block partials in 16-byte slots, then
/// `extra` bytes.
fn shape<K: ReduceKernel>(k: &K, dev: &CudaDevice, len: usize, extra: u64) -> (Grid, ScratchLayout, Region<u8>, Region<u8>) {
    let policy = k.policy();
    let grid = Grid::new(
        policy.grid_for_vectors(len, std::mem::size_of::<K::In>(), dev.sm_count()),
        policy.block,
    );
    let mut layout = ScratchLayout::new();
    let partials = layout.uninit::<u8>(grid.blocks as u64 * k.acc_bytes().next_multiple_of(16) as u64);
    let tail = layout.uninit::<u8>(extra);
    (grid, layout, partials, tail)
}

/// The reduce launch: `args` is everything but the accumulator's address.
fn queue<K: ReduceKernel>(
    dev: &CudaDevice,
    module: &Module,
    grid: Grid,
    args: (Ptr<K::In>, u64, K::In, Ptr<u8>),
    out: Ptr<u8>,
) -> Result<()> {
    let (input, n, param, partials) = args;
    let ticket = dev.counter(Counter::ReduceTicket);
    dev.launch(module, reduce_entry::<K::In>(), grid, (input, n, param, partials, ticket, out))
}

/// Reduces into the accumulator at `out` on the device (no host sync).
pub(crate) fn to_device<K: ReduceKernel>(k: &K, dev: &CudaDevice, input: Ptr<K::In>, len: usize, out: Ptr<u8>) -> Result<()> {
    let module = dev.module(k)?;
    let (grid, layout, partials, _) = shape(k, dev, len, 0);
    dev.with_scratch(&layout, |s| {
        queue::<K>(dev, &module, grid, (input, len as u64, k.param(), s.at(partials)), out)
    })
}

/// Reduces and returns the accumulator's bytes: written by the kernel
/// straight to page-locked host memory, or into scratch and copied back
/// (under the scratch lock, so no other call can overwrite it first).
pub(crate) fn to_host<K: ReduceKernel>(k: &K, dev: &CudaDevice, input: Ptr<K::In>, len: usize) -> Result<[u8; 16]> {
    let module = dev.module(k)?;
    let (grid, layout, partials, result) = shape(k, dev, len, 16);
    dev.with_scratch(&layout, |s| {
        dev.result_to_host::<16>(s.at(result), "copying a reduction result", |out| {
            queue::<K>(dev, &module, grid, (input, len as u64, k.param(), s.at(partials)), out)
        })
    })
}

/// The constants and input typedef every reduce specialisation starts with.
fn write_common<T: Element, W: SpecWriter>(w: &mut W, policy: Policy) {
    w.constant("CUPRIM_BLOCK", policy.block as i64);
    w.constant("CUPRIM_MIN_BLOCKS", policy.blocks_per_sm as i64);
    w.constant("CUPRIM_UNROLL", policy.unroll as i64);
    // Plain loads: the streaming L2 hint measured equal within noise on H100 at 2^28 (run 6bd614e).
    w.constant("CUPRIM_STREAM_LOADS", 0);
    w.elem::<T>("T");
}

/// `op` folded over `map(x)`: reduce (map = Identity), transform_reduce.
pub(crate) struct MapReduce<'a, T, U, Op> {
    pub arch: u32,
    pub map: &'a U,
    pub op: &'a Op,
    pub _t: PhantomData<T>,
}

impl<T: Element, U: UnaryOp<T>, Op: Monoid<U::Output>> Specialise for MapReduce<'_, T, U, Op> {
    fn template(&self) -> &'static Template {
        &REDUCE
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_common::<T, W>(w, self.policy());
        w.elem::<U::Output>("A");
        w.piece(OpText::<U, T, Unary>::unary(*self.map), |map| {
            format!(
                "struct MapFn {{ __device__ __forceinline__ static A apply(T x, u64 i, T p) {{ (void)i; (void)p; return ({}); }} }};",
                UnaryOp::<T>::cuda_expr(&map.op)
            )
        });
        w.monoid::<U::Output, Op>("ReduceOp", "A", self.op);
    }
}

impl<T: Element, U: UnaryOp<T>, Op: Monoid<U::Output>> ReduceKernel for MapReduce<'_, T, U, Op> {
    type In = T;
    fn acc_bytes(&self) -> usize {
        std::mem::size_of::<U::Output>()
    }
    fn arch(&self) -> u32 {
        self.arch
    }
}

/// How many elements satisfy a predicate (u64 accumulator).
pub(crate) struct Count<'a, T, P> {
    pub arch: u32,
    pub pred: &'a P,
    pub _t: PhantomData<T>,
}

impl<T: Element, P: Predicate<T>> Specialise for Count<'_, T, P> {
    fn template(&self) -> &'static Template {
        &REDUCE
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_common::<T, W>(w, self.policy());
        w.typedef("A", "u64");
        w.piece(OpText::<P, T, Pred>::predicate(*self.pred), |pred| {
            format!(
                "struct MapFn {{ __device__ __forceinline__ static A apply(T x, u64 i, T p) {{ (void)i; (void)p; return ({}) ? 1ull : 0ull; }} }};",
                Predicate::<T>::cuda_expr(&pred.op)
            )
        });
        w.monoid::<u64, Add>("ReduceOp", "A", &Add);
    }
}

impl<T: Element, P: Predicate<T>> ReduceKernel for Count<'_, T, P> {
    type In = T;
    fn acc_bytes(&self) -> usize {
        8
    }
    fn arch(&self) -> u32 {
        self.arch
    }
    fn param(&self) -> T {
        self.pred.param()
    }
}

/// (value, index) of the least or greatest element in the order of
/// [`Min`](crate::ops::Min) / [`Max`](crate::ops::Max) (a NaN first, then
/// -0.0 before +0.0 for the least), ties to the lower index.
pub(crate) struct Extreme<T> {
    pub arch: u32,
    pub greatest: bool,
    pub _t: PhantomData<T>,
}

impl<T: Element> Specialise for Extreme<T> {
    fn template(&self) -> &'static Template {
        &REDUCE
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_common::<T, W>(w, self.policy());
        w.typedef("A", "cuprim_kv<T>");
        w.text("struct MapFn { __device__ __forceinline__ static A apply(T x, u64 i, T p) { (void)p; return A{x, i}; } };");
        w.piece(self.greatest, |&greatest| {
            format!(
                "struct ReduceOp {{ __device__ __forceinline__ static A apply(A a, A b) {{ \
                 return cuprim_arg_wins<{greatest}>(a.v, a.i, b.v, b.i) ? b : a; }} \
                 __device__ __forceinline__ static A identity() {{ return A{{{}, ~0ull}}; }} }};",
                arg_identity::<T>(greatest).cuda_literal(),
            )
        });
    }
}

impl<T: Element> ReduceKernel for Extreme<T> {
    type In = T;
    fn acc_bytes(&self) -> usize {
        16
    }
    fn arch(&self) -> u32 {
        self.arch
    }
}

/// Identity of min/max_element: the identity of [`Min`](crate::ops::Min)
/// (or [`Max`](crate::ops::Max)) at index `u64::MAX`, which every element
/// beats or ties with at a lower index.
pub(crate) fn arg_identity<T: Element>(greatest: bool) -> T {
    if greatest {
        T::lowest()
    } else {
        T::highest()
    }
}

/// `cuprim_find_first(const T* in, u64 n, T p, u64* best_inv, u32* ticket, u64* result)`.
fn find_entry<T: Element>() -> Entry<(Ptr<T>, u64, T, Ptr<u64>, Ptr<u32>, Ptr<u8>)> {
    // SAFETY: matches `cuprim_find_first` in kernels/reduce/find.cu: reads n
    // elements, uses the two zeroed counters (left zero) and writes 8 bytes
    // to `result`.
    unsafe { Entry::declare("cuprim_find_first") }
}

/// One specialisation of `kernels/reduce/find.cu`.
pub(crate) struct FindPlan<'a, T, P> {
    pub pred: &'a P,
    pub policy: Policy,
    _t: std::marker::PhantomData<T>,
}

impl<'a, T: Element, P: Predicate<T>> FindPlan<'a, T, P> {
    pub fn new(arch: u32, pred: &'a P) -> Self {
        FindPlan {
            pred,
            policy: find_policy(arch),
            _t: std::marker::PhantomData,
        }
    }

    /// The lowest index whose element satisfies the predicate.
    pub fn run(&self, dev: &CudaDevice, input: Ptr<T>, len: usize) -> Result<Option<usize>> {
        if len == 0 {
            return Ok(None);
        }
        let module = dev.module(self)?;
        let grid = Grid::new(
            self.policy.grid_for_vectors(len, std::mem::size_of::<T>(), dev.sm_count()),
            self.policy.block,
        );
        let (best_inv, ticket) = (dev.counter(Counter::FindBest).cast::<u64>(), dev.counter(Counter::FindTicket));
        let mut layout = ScratchLayout::new();
        let result = layout.uninit::<u8>(8);
        let bytes = dev.with_scratch(&layout, |s| {
            dev.result_to_host::<8>(s.at(result), "copying find_first's result", |out| {
                dev.launch(
                    &module,
                    find_entry::<T>(),
                    grid,
                    (input, len as u64, self.pred.param(), best_inv, ticket, out),
                )
            })
        })?;
        let best = u64::from_le_bytes(bytes);
        Ok((best != u64::MAX).then_some(best as usize))
    }
}

impl<T: Element, P: Predicate<T>> Specialise for FindPlan<'_, T, P> {
    fn template(&self) -> &'static Template {
        &FIND
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_BLOCK", self.policy.block as i64);
        w.constant("CUPRIM_MIN_BLOCKS", self.policy.blocks_per_sm as i64);
        w.constant("CUPRIM_UNROLL", self.policy.unroll as i64);
        w.elem::<T>("T");
        w.piece(OpText::<P, T, Pred>::predicate(*self.pred), |pred| {
            format!(
                "struct PredFn {{ __device__ __forceinline__ static bool apply(T x, T p) {{ (void)p; return ({}); }} }};",
                Predicate::<T>::cuda_expr(&pred.op)
            )
        });
    }
}

/// min_element and max_element of `T`, for precompile.
pub(crate) fn extreme_specs<T: Element>(arch: u32) -> Vec<KernelSpec> {
    [false, true]
        .into_iter()
        .map(|greatest| {
            KernelSpec::of(&Extreme::<T> {
                arch,
                greatest,
                _t: PhantomData,
            })
        })
        .collect()
}

/// count and find_first of `T` with `pred`, for precompile.
pub(crate) fn predicate_specs<T: Element, P: Predicate<T>>(arch: u32, pred: &P) -> Vec<KernelSpec> {
    vec![
        KernelSpec::of(&Count::<T, P> {
            arch,
            pred,
            _t: PhantomData,
        }),
        KernelSpec::of(&FindPlan::<T, P>::new(arch, pred)),
    ]
}
