//! Plans and launches of the reduce family: the single-pass reduction
//! (`kernels/reduce/reduce.cu`) behind reduce, transform_reduce, count and
//! min/max_element, and the early-exit search (`kernels/reduce/find.cu`).

use crate::algo::policy::Policy;
use crate::device::{Counter, CudaDevice, Entry, Grid, KernelArg, Module, Ptr, Region, ScratchLayout};
use crate::element::Element;
use crate::error::Result;
use crate::expr::args::ExprArgs;
use crate::expr::consume::{launch_checked, write_input};
use crate::expr::node::{Leaf, Node};
use crate::jit::spec::{Pred, Unary};
use crate::jit::{template, KernelSpec, OpText, SpecWriter, Specialise, Template};
use crate::ops::{Add, Monoid, UnaryOp};
use crate::pred::Predicate;
use crate::value::Value;

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

/// A streaming policy for an input expression: `base` for one buffer;
/// with several memory streams, fewer loads in flight per stream, so the
/// bytes in flight per thread stay about those of one buffer (and within
/// `base`'s register budget: a gather of 8 x 4 doubles spilled).
pub(crate) fn input_policy<E: Node>(base: Policy) -> Policy {
    Policy {
        unroll: (base.unroll / E::STREAMS.max(1) as u32).max(2),
        ..base
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

/// A specialisation of `kernels/reduce/reduce.cu`: what it reads (an input
/// expression, a plain buffer being the simplest) and what it folds decide
/// the accumulator and the `MapFn` / `ReduceOp` functors.
pub(crate) trait ReduceKernel: Specialise {
    /// The input expression.
    type Input: Node;
    /// The kernel's `p` parameter (a predicate's value, or an unused `u64`).
    type Param: KernelArg;
    /// The input.
    fn input(&self) -> &Self::Input;
    /// Bytes of the accumulator (at most [`MAX_ACC`]).
    fn acc_bytes(&self) -> usize;
    /// The architecture the plan is for.
    fn arch(&self) -> u32;
    /// The launch shape: the grid and the kernel's constants both come
    /// from here, so they cannot disagree.
    fn policy(&self) -> Policy {
        input_policy::<Self::Input>(reduce_policy(self.arch()))
    }
    /// The kernel's `p` argument.
    fn param(&self) -> Self::Param;
}

/// The largest accumulator a reduction returns to the host (bytes).
pub(crate) const MAX_ACC: usize = 32;

/// The reduce kernel: `cuprim_reduce(const In in, u64 n, P p, A* partials,
/// u32* ticket, A* out)`; the input is a plain pointer's worth of bytes or
/// an expression's, the accumulator `A` is passed as bytes.
fn reduce_entry<X: KernelArg, P: KernelArg>() -> Entry<(X, u64, P, Ptr<u8>, Ptr<u32>, Ptr<u8>)> {
    // SAFETY: matches `cuprim_reduce` in kernels/reduce/reduce.cu: `In` is
    // the struct the plan's input writes (ExprArgs holds its fields at the
    // offsets the kernel reads), P its parameter type; it reads n elements
    // of the input, writes one accumulator per block to `partials` and one
    // to `out`, and returns the ticket to zero.
    unsafe { Entry::declare("cuprim_reduce") }
}

/// Launch shape, and scratch: per-block partials in 16-byte slots, then
/// `extra` bytes.
fn shape<K: ReduceKernel>(k: &K, dev: &CudaDevice, len: usize, extra: u64) -> (Grid, ScratchLayout, Region<u8>, Region<u8>) {
    let policy = k.policy();
    let widest = match <K::Input as Node>::WIDEST {
        0 => <<K::Input as Node>::Item as Value>::C_SIZE,
        w => w,
    };
    // The grid is the plain buffer's for the same length and width (not
    // the input's unroll): a fused reduction groups its elements exactly as
    // the reduction of a collected vector does.
    let base = reduce_policy(k.arch());
    let grid = Grid::new(base.grid_for_vectors(len, widest, dev.sm_count()), policy.block);
    let mut layout = ScratchLayout::new();
    let partials = layout.uninit::<u8>(grid.blocks as u64 * k.acc_bytes().next_multiple_of(16) as u64);
    let tail = layout.uninit::<u8>(extra);
    (grid, layout, partials, tail)
}

/// The reduce launch, writing the accumulator to `out` (bounds-checked,
/// and then waited for, when the input permutes).
fn queue<K: ReduceKernel>(dev: &CudaDevice, module: &Module, grid: Grid, k: &K, partials: Ptr<u8>, out: Ptr<u8>) -> Result<()> {
    let n = k.input().length() as u64;
    let ticket = dev.counter(Counter::ReduceTicket);
    launch_checked(dev, k.input(), |args| {
        dev.launch(
            module,
            reduce_entry::<ExprArgs, K::Param>(),
            grid,
            (args, n, k.param(), partials, ticket, out),
        )
    })
}

/// Reduces into the accumulator at `out` on the device (no host sync
/// unless the input checks indices).
pub(crate) fn to_device<K: ReduceKernel>(k: &K, dev: &CudaDevice, out: Ptr<u8>) -> Result<()> {
    let module = dev.module(k)?;
    let (grid, layout, partials, _) = shape(k, dev, k.input().length(), 0);
    dev.with_scratch(&layout, |s| queue(dev, &module, grid, k, s.at(partials), out))
}

/// Reduces and returns the accumulator's bytes: written by the kernel
/// straight to page-locked host memory, or into scratch and copied back
/// (under the scratch lock, so no other call can overwrite it first).
pub(crate) fn to_host<K: ReduceKernel>(k: &K, dev: &CudaDevice) -> Result<[u8; MAX_ACC]> {
    if k.acc_bytes() > MAX_ACC {
        return Err(crate::Error::Unsupported(format!(
            "a reduction's accumulator of {} bytes (at most {MAX_ACC})",
            k.acc_bytes()
        )));
    }
    let module = dev.module(k)?;
    let (grid, layout, partials, result) = shape(k, dev, k.input().length(), MAX_ACC as u64);
    dev.with_scratch(&layout, |s| {
        dev.result_to_host::<MAX_ACC>(s.at(result), "copying a reduction result", |out| {
            queue(dev, &module, grid, k, s.at(partials), out)
        })
    })
}

/// The constants, the input's type (`In`, its element `T`) and the
/// parameter's (`P`) every reduce specialisation starts with.
fn write_common<K: ReduceKernel, W: SpecWriter>(k: &K, w: &mut W) {
    let policy = k.policy();
    w.constant("CUPRIM_BLOCK", policy.block as i64);
    w.constant("CUPRIM_MIN_BLOCKS", policy.blocks_per_sm as i64);
    w.constant("CUPRIM_UNROLL", policy.unroll as i64);
    // Plain loads: the streaming L2 hint measured equal within noise on H100 at 2^28 (run 6bd614e).
    w.constant("CUPRIM_STREAM_LOADS", 0);
    write_input(k.input(), w);
}

/// `op` folded over `map(x)`: reduce (map = Identity), transform_reduce.
pub(crate) struct MapReduce<'a, E, U, Op> {
    pub arch: u32,
    pub input: &'a E,
    pub map: &'a U,
    pub op: &'a Op,
}

impl<E: Node, U: UnaryOp<E::Item>, Op: Monoid<U::Output>> Specialise for MapReduce<'_, E, U, Op> {
    fn template(&self) -> &'static Template {
        &REDUCE
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_common(self, w);
        w.typedef("P", "u64");
        w.value::<U::Output>("A");
        w.piece(OpText::<U, E::Item, Unary>::unary(*self.map), |map| {
            format!(
                "struct MapFn {{ __device__ __forceinline__ static A apply(T x, u64 i, P p) {{ (void)i; (void)p; return ({}); }} }};",
                UnaryOp::<E::Item>::cuda_expr(&map.op)
            )
        });
        w.monoid::<U::Output, Op>("ReduceOp", "A", self.op);
    }
}

impl<E: Node, U: UnaryOp<E::Item>, Op: Monoid<U::Output>> ReduceKernel for MapReduce<'_, E, U, Op> {
    type Input = E;
    type Param = u64;
    fn input(&self) -> &E {
        self.input
    }
    fn acc_bytes(&self) -> usize {
        <U::Output as Value>::C_SIZE
    }
    fn arch(&self) -> u32 {
        self.arch
    }
    fn param(&self) -> u64 {
        0
    }
}

/// How many elements satisfy a predicate (u64 accumulator).
pub(crate) struct Count<'a, E, P> {
    pub arch: u32,
    pub input: &'a E,
    pub pred: &'a P,
}

impl<E: Node, P: Predicate<E::Item>> Specialise for Count<'_, E, P>
where
    E::Item: Element,
{
    fn template(&self) -> &'static Template {
        &REDUCE
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_common(self, w);
        w.typedef("P", "T");
        w.typedef("A", "u64");
        w.piece(OpText::<P, E::Item, Pred>::predicate(*self.pred), |pred| {
            format!(
                "struct MapFn {{ __device__ __forceinline__ static A apply(T x, u64 i, P p) {{ (void)i; (void)p; return ({}) ? 1ull : 0ull; }} }};",
                Predicate::<E::Item>::cuda_expr(&pred.op)
            )
        });
        w.monoid::<u64, Add>("ReduceOp", "A", &Add);
    }
}

impl<E: Node, P: Predicate<E::Item>> ReduceKernel for Count<'_, E, P>
where
    E::Item: Element,
{
    type Input = E;
    type Param = E::Item;
    fn input(&self) -> &E {
        self.input
    }
    fn acc_bytes(&self) -> usize {
        8
    }
    fn arch(&self) -> u32 {
        self.arch
    }
    fn param(&self) -> E::Item {
        self.pred.param()
    }
}

/// (value, index) of the least or greatest element in the order of
/// [`Min`](crate::ops::Min) / [`Max`](crate::ops::Max) (a NaN first, then
/// -0.0 before +0.0 for the least), ties to the lower index.
pub(crate) struct Extreme<'a, E> {
    pub arch: u32,
    pub input: &'a E,
    pub greatest: bool,
    /// Where the index goes when the value and index are written apart
    /// (the kernel's parameter; 0: both to `out` as one accumulator).
    pub index_out: u64,
}

impl<E: Node> Specialise for Extreme<'_, E>
where
    E::Item: Element,
{
    fn template(&self) -> &'static Template {
        &REDUCE
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_common(self, w);
        w.typedef("P", "u64");
        // The accumulator carries the value's rank (one integer compare per
        // fold); the value and index lead, as the host reads them.
        w.typedef(
            "A",
            if std::mem::size_of::<E::Item>() <= 4 {
                "cuprim_arg_acc<T, u32>"
            } else {
                "cuprim_arg_acc<T, u64>"
            },
        );
        // A non-zero parameter is the address of a u64 index output; the
        // value then goes alone to `out` (min/max_element_to).
        w.text(
            "#define CUPRIM_REDUCE_STORE(out, total, p) do { if (p) { *(T*)(out) = (total).v; *(u64*)(p) = (total).i; } else { *(out) = (total); } } while (0)",
        );
        w.piece(self.greatest, |&greatest| {
            format!(
                "struct MapFn {{ __device__ __forceinline__ static A apply(T x, u64 i, P p) {{ (void)p; \
                 return A{{x, i, cuprim_arg_rank<{greatest}>(x)}}; }} }};\n\
                 struct ReduceOp {{ __device__ __forceinline__ static A apply(A a, A b) {{ \
                 return (b.r < a.r || (b.r == a.r && b.i < a.i)) ? b : a; }} \
                 __device__ __forceinline__ static A identity() {{ const T x = {}; return A{{x, ~0ull, cuprim_arg_rank<{greatest}>(x)}}; }} }};",
                arg_identity::<E::Item>(greatest).cuda_literal(),
            )
        });
        // Elements of 4 and 8 bytes are ranked coarsely a group at a time
        // first (cuprim_arg_fold); narrower ones' rank is as cheap, and their
        // 8 or 16 an access spilled there.
        if std::mem::size_of::<E::Item>() >= 4 {
            w.piece(self.greatest, |&greatest| {
                format!("typedef cuprim_arg_fold<{greatest}, A, MapFn, ReduceOp> VectorFold;\n#define CUPRIM_VECTOR_FOLD 1")
            });
        }
    }
}

impl<E: Node> ReduceKernel for Extreme<'_, E>
where
    E::Item: Element,
{
    type Input = E;
    type Param = u64;
    fn input(&self) -> &E {
        self.input
    }
    fn acc_bytes(&self) -> usize {
        // { T v; u64 i; R r; }: three 8-byte slots.
        24
    }
    fn arch(&self) -> u32 {
        self.arch
    }
    fn param(&self) -> u64 {
        self.index_out
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

/// Bytes of the elements the early-exit kernels (find, and the collectives'
/// race and vote) move per 16-byte vector step: the widest buffer's, or 4
/// (an expression with no buffer is read 4 elements at a time).
pub(crate) fn vector_elem_bytes<E: Node>() -> usize {
    match E::WIDEST {
        0 => 4,
        w => w,
    }
}

/// The early-exit kernels' (and vote's) policy for an input: `base` for a
/// buffer; an expression keeps at most about 16 registers of elements per
/// thread in flight (ptxas spilled for a 1-byte buffer widened to f64 with
/// two vectors of 16, and for a u64 counting map with four of 4), and fewer
/// per memory stream, as the reduction's.
pub(crate) fn pred_input_policy<E: Node>(base: Policy) -> Policy {
    if E::IS_BUF {
        return base;
    }
    let items = 16 / vector_elem_bytes::<E>();
    let words = std::mem::size_of::<E::Item>().div_ceil(4);
    let fit = (16 / (items * words)).max(1) as u32;
    Policy {
        unroll: fit.min(input_policy::<E>(base).unroll),
        ..base
    }
}

/// `cuprim_find_first(const In in, u64 n, T p, u64* best_inv, u32* ticket, u64* result)`.
fn find_entry<T: Element>() -> Entry<(ExprArgs, u64, T, Ptr<u64>, Ptr<u32>, Ptr<u8>)> {
    // SAFETY: matches `cuprim_find_first` in kernels/reduce/find.cu: `In` is
    // the struct the plan's input writes (ExprArgs holds its fields at the
    // offsets the kernel reads); it reads up to n elements of it, uses the
    // two zeroed counters (left zero) and writes 8 bytes to `result`.
    unsafe { Entry::declare("cuprim_find_first") }
}

/// One specialisation of `kernels/reduce/find.cu`: the input (an
/// expression, a buffer being the one-leaf one) and the predicate.
pub(crate) struct FindPlan<'a, E, P> {
    pub input: &'a E,
    pub pred: &'a P,
    pub policy: Policy,
}

impl<'a, E: Node, P: Predicate<E::Item>> FindPlan<'a, E, P>
where
    E::Item: Element,
{
    pub fn new(arch: u32, input: &'a E, pred: &'a P) -> Self {
        FindPlan {
            input,
            pred,
            policy: pred_input_policy::<E>(find_policy(arch)),
        }
    }

    /// The lowest index whose element satisfies the predicate (the input's
    /// indices checked when it permutes).
    pub fn run(&self, dev: &CudaDevice) -> Result<Option<usize>> {
        let len = self.input.length();
        if len == 0 {
            return Ok(None);
        }
        let module = dev.module(self)?;
        let grid = Grid::new(
            self.policy.grid_for_vectors(len, vector_elem_bytes::<E>(), dev.sm_count()),
            self.policy.block,
        );
        let (best_inv, ticket) = (dev.counter(Counter::FindBest).cast::<u64>(), dev.counter(Counter::FindTicket));
        let mut layout = ScratchLayout::new();
        let result = layout.uninit::<u8>(8);
        let bytes = dev.with_scratch(&layout, |s| {
            dev.result_to_host::<8>(s.at(result), "copying find_first's result", |out| {
                launch_checked(dev, self.input, |args| {
                    dev.launch(
                        &module,
                        find_entry::<E::Item>(),
                        grid,
                        (args, len as u64, self.pred.param(), best_inv, ticket, out),
                    )
                })
            })
        })?;
        let best = u64::from_le_bytes(bytes);
        Ok((best != u64::MAX).then_some(best as usize))
    }
}

/// The constants, input (`In`, `T`) and predicate functor (`PredFn`) of
/// the early-exit kernels and vote; `CUPRIM_READ_ALL` turns the early exit
/// off for an input that permutes, so every index is checked, as on the
/// host.
pub(crate) fn write_pred_input<E: Node, P: Predicate<E::Item>, W: SpecWriter>(w: &mut W, policy: Policy, input: &E, pred: &P)
where
    E::Item: Element,
{
    w.constant("CUPRIM_BLOCK", policy.block as i64);
    w.constant("CUPRIM_MIN_BLOCKS", policy.blocks_per_sm as i64);
    w.constant("CUPRIM_UNROLL", policy.unroll as i64);
    w.constant("CUPRIM_READ_ALL", E::CHECKED as i64);
    write_input(input, w);
    w.piece(OpText::<P, E::Item, Pred>::predicate(*pred), |pred| {
        format!(
            "struct PredFn {{ __device__ __forceinline__ static bool apply(T x, T p) {{ (void)p; return ({}); }} }};",
            Predicate::<E::Item>::cuda_expr(&pred.op)
        )
    });
}

impl<E: Node, P: Predicate<E::Item>> Specialise for FindPlan<'_, E, P>
where
    E::Item: Element,
{
    fn template(&self) -> &'static Template {
        &FIND
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_pred_input(w, self.policy, self.input, self.pred);
    }
}

/// min_element and max_element of `T`, for precompile.
pub(crate) fn extreme_specs<T: Element>(arch: u32) -> Vec<KernelSpec> {
    let input = Leaf::<T>::type_only();
    [false, true]
        .into_iter()
        .map(|greatest| {
            KernelSpec::of(&Extreme {
                arch,
                input: &input,
                greatest,
                index_out: 0,
            })
        })
        .collect()
}

/// count and find_first of `T` with `pred`, for precompile.
pub(crate) fn predicate_specs<T: Element, P: Predicate<T>>(arch: u32, pred: &P) -> Vec<KernelSpec> {
    let input = Leaf::<T>::type_only();
    vec![
        KernelSpec::of(&Count { arch, input: &input, pred }),
        KernelSpec::of(&FindPlan::new(arch, &input, pred)),
    ]
}
