//! Reductions and predicate collectives: `reduce`, `reduce_into`,
//! `transform_reduce`, `sum`, `product`, `min`, `max`, `min_element`,
//! `max_element`, `count`, `any`, `all`, `find_first`.
//!
//! # Floating point
//! A reduction regroups its operands: the device folds a grid-stride share
//! per thread, then a tree per block, then the block partials in order. So a
//! float sum differs from a sequential left-to-right sum by rounding (for
//! `n` values, the error bound is about `log2(n) * eps * sum(|x|)` in the
//! worst case, far less in practice). The grouping depends only on the
//! length and the device, never on timing (no float atomics): the same input
//! on the same GPU gives the same bits every run. The host backend groups
//! differently (fixed chunks of 65536) and is equally deterministic.

use crate::algo::scan::monoid_text;
use crate::device::{kernel_args, CudaDevice, FastKey, Module, COUNTER_FIND_BEST, COUNTER_FIND_TICKET, COUNTER_REDUCE_TICKET};
use crate::element::{Element, Scalar};
use crate::error::Result;
use crate::host;
use crate::jit::source::{FIND, REDUCE};
use crate::jit::KernelSpec;
use crate::ops::{Add, Arith, Commutative, Identity, Max, Min, Monoid, Mul, UnaryOp};
use crate::pred::{Not, Predicate};
use crate::tuning;
use crate::vec::raw::Mem;
use crate::vec::{DeviceData, DeviceVec};

/// Reductions and collectives. In [`prelude`](crate::prelude).
pub trait ReduceOps<T: Element>: DeviceData<T> {
    /// Folds every element with `op`; the identity for an empty input.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[3u32, 9, 4])?;
    /// assert_eq!(v.reduce(Add)?, 16);
    /// assert_eq!(v.reduce(Max)?, 9);
    /// assert_eq!(v.slice(0..0)?.reduce(Min)?, u32::MAX);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce<Op: Monoid<T> + Commutative>(&self, op: Op) -> Result<T> {
        self.transform_reduce(Identity, op)
    }

    /// Like [`reduce`](ReduceOps::reduce), leaving the result in a
    /// one-element vector on the device: no host synchronisation.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1.5f64, 2.5])?;
    /// let total = v.reduce_into(Add)?;
    /// assert_eq!(total.to_vec()?, vec![4.0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce_into<Op: Monoid<T> + Commutative>(&self, op: Op) -> Result<DeviceVec<T>> {
        let mut out = DeviceVec::<T>::alloc_uninit(self.device(), 1)?;
        self.reduce_to(op, &mut out)?;
        Ok(out)
    }

    /// Like [`reduce_into`](ReduceOps::reduce_into), writing the result to
    /// `out[0]` of a buffer the caller already has (CUB's `d_out`): no
    /// allocation and no host synchronisation. `out` must not be empty.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[2u32, 7, 1])?;
    /// let mut out = DeviceVec::<u32>::zeros(&dev, 1)?;
    /// v.reduce_to(Max, &mut out)?;
    /// assert_eq!(out.to_vec()?, vec![7]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce_to<Op: Monoid<T> + Commutative>(&self, op: Op, out: &mut impl crate::vec::DeviceDataMut<T>) -> Result<()> {
        crate::algo::same_device("reduce_to", self.device(), out.device())?;
        if out.is_empty() {
            return Err(crate::Error::InvalidArgument("reduce_to: the output buffer is empty".into()));
        }
        match (self.mem(), out.mem_mut()) {
            (Mem::Host(s), crate::vec::raw::MemMut::Host(o)) => {
                o[0] = host::reduce::map_reduce(s, op.identity(), |x, _| x, |a, b| op.apply(a, b));
            }
            (Mem::Cuda { dev, ptr, len, .. }, crate::vec::raw::MemMut::Cuda { ptr: out_ptr, .. }) => {
                let key = FastKey::new::<T, Op, ()>("reduce", monoid_text(&op));
                let module = dev.module_for(key, || plain_reduce_spec::<T, Op>(dev.arch, &op))?;
                reduce_to_device::<T>(dev, &module, ptr, len, std::mem::size_of::<T>(), out_ptr)?;
            }
            _ => return Err(crate::Error::DeviceMismatch { op: "reduce_to" }),
        }
        Ok(())
    }

    /// Folds `map(x)` over every element with `op`, without a temporary
    /// array: e.g. the sum of squares.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1i64, -2, 3])?;
    /// assert_eq!(v.transform_reduce(Square, Add)?, 14);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn transform_reduce<U, Op>(&self, map: U, op: Op) -> Result<U::Output>
    where
        U: UnaryOp<T>,
        Op: Monoid<U::Output> + Commutative,
    {
        match self.mem() {
            Mem::Host(s) => Ok(host::reduce::map_reduce(
                s,
                op.identity(),
                |x, _| map.apply(x),
                |a, b| op.apply(a, b),
            )),
            Mem::Cuda { dev, ptr, len, .. } => {
                let mut text = map.cuda_expr();
                text.push('|');
                text.push_str(&monoid_text(&op));
                let key = FastKey::new::<T, U, Op>("transform_reduce", text);
                let module = dev.module_for(key, || {
                    let map_src = format!("return ({});", map.cuda_expr());
                    reduce_spec::<T>(dev.arch, <U::Output as Element>::CUDA_TYPE, &map_src, &monoid_functor(&op))
                })?;
                let bytes = reduce_to_host(dev, &module, ptr, len, T::zero(), std::mem::size_of::<U::Output>())?;
                Ok(bytemuck::pod_read_unaligned(&bytes[..std::mem::size_of::<U::Output>()]))
            }
        }
    }

    /// Sum of the elements (wrapping for integers); 0 when empty.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::sequence(&Device::default()?, 100, 1u64, 1)?;
    /// assert_eq!(v.sum()?, 5050);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sum(&self) -> Result<T>
    where
        T: Arith,
    {
        self.reduce(Add)
    }

    /// Product of the elements (wrapping for integers); 1 when empty.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[2.0f32, 3.0, 4.0])?;
    /// assert_eq!(v.product()?, 24.0);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn product(&self) -> Result<T>
    where
        T: Arith,
    {
        self.reduce(Mul)
    }

    /// The least element, NaN ignored ([`Min`]); `MAX` / `+inf` when empty
    /// or all NaN.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[2.0f32, f32::NAN, -1.0])?;
    /// assert_eq!(v.min()?, -1.0);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn min(&self) -> Result<T> {
        self.reduce(Min)
    }

    /// The greatest element, NaN ignored ([`Max`]); `MIN` / `-inf` when
    /// empty or all NaN.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[2i8, -7, 5])?;
    /// assert_eq!(v.max()?, 5);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn max(&self) -> Result<T> {
        self.reduce(Max)
    }

    /// `(index, value)` of the least element, ties to the lowest index;
    /// `None` when empty. NaN is skipped; if every element is NaN, the
    /// first one is returned. `-0.0` and `+0.0` are equal (lowest index wins).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[4u32, 1, 7, 1])?;
    /// assert_eq!(v.min_element()?, Some((1, 1)));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn min_element(&self) -> Result<Option<(usize, T)>> {
        arg_extreme(self, false)
    }

    /// `(index, value)` of the greatest element, ties to the lowest index;
    /// NaN handled as in [`min_element`](ReduceOps::min_element).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[4.0f64, f64::NAN, 9.0, 9.0])?;
    /// assert_eq!(v.max_element()?, Some((2, 9.0)));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn max_element(&self) -> Result<Option<(usize, T)>> {
        arg_extreme(self, true)
    }

    /// How many elements satisfy `pred`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Gt;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1i32, 5, 9, 2])?;
    /// assert_eq!(v.count(Gt(2))?, 2);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn count<P: Predicate<T>>(&self, pred: P) -> Result<usize> {
        match self.mem() {
            Mem::Host(s) => Ok(host::reduce::map_reduce(s, 0usize, |x, _| pred.test(x) as usize, |a, b| a + b)),
            Mem::Cuda { dev, ptr, len, .. } => {
                let key = FastKey::new::<T, P, ()>("count", pred.cuda_expr());
                let module = dev.module_for(key, || count_spec::<T, P>(dev.arch, &pred))?;
                let bytes = reduce_to_host(dev, &module, ptr, len, pred.param(), 8)?;
                Ok(bytemuck::pod_read_unaligned::<u64>(&bytes[..8]) as usize)
            }
        }
    }

    /// The lowest index whose element satisfies `pred`. Stops reading once
    /// the answer is known: a match near the front costs about one wave of
    /// loads, not a pass over the array.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::{Eq, IsNan};
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1.0f32, f32::NAN, 3.0, 3.0])?;
    /// assert_eq!(v.find_first(Eq(3.0))?, Some(2));
    /// assert_eq!(v.find_first(IsNan)?, Some(1));
    /// assert_eq!(v.find_first(Eq(7.0))?, None);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn find_first<P: Predicate<T>>(&self, pred: P) -> Result<Option<usize>> {
        match self.mem() {
            Mem::Host(s) => Ok(host::reduce::find_first(s, |x| pred.test(x))),
            Mem::Cuda { dev, ptr, len, .. } => find_first_cuda(dev, ptr, len, &pred),
        }
    }

    /// True if some element satisfies `pred` (false when empty). Early exit
    /// as for [`find_first`](ReduceOps::find_first).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::IsNan;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1.0f32, f32::NAN])?;
    /// assert!(v.any(IsNan)?);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn any<P: Predicate<T>>(&self, pred: P) -> Result<bool> {
        Ok(self.find_first(pred)?.is_some())
    }

    /// True if every element satisfies `pred` (true when empty).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Ge;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[3u8, 4, 5])?;
    /// assert!(v.all(Ge(3))?);
    /// assert!(!v.all(Ge(4))?);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn all<P: Predicate<T>>(&self, pred: P) -> Result<bool> {
        Ok(self.find_first(Not(pred))?.is_none())
    }
}

impl<T: Element, D: DeviceData<T> + ?Sized> ReduceOps<T> for D {}

/// Identity of min/max_element: a NaN (floats) or the worst value
/// (integers), at index `u64::MAX`.
fn arg_identity<T: Element>(greatest: bool) -> T {
    if T::KIND == crate::Kind::Float {
        T::from_scalar(Scalar::F64(f64::NAN))
    } else if greatest {
        T::lowest()
    } else {
        T::highest()
    }
}

/// The reduce kernel behind `reduce(op)`.
pub(crate) fn plain_reduce_spec<T: Element, Op: Monoid<T>>(arch: u32, op: &Op) -> KernelSpec {
    let map = format!("return ({});", UnaryOp::<T>::cuda_expr(&Identity));
    reduce_spec::<T>(arch, T::CUDA_TYPE, &map, &monoid_functor(op))
}

/// The reduce kernel behind `count(pred)`.
pub(crate) fn count_spec<T: Element, P: Predicate<T>>(arch: u32, pred: &P) -> KernelSpec {
    let map = format!("return ({}) ? 1ull : 0ull;", pred.cuda_expr());
    reduce_spec::<T>(arch, "u64", &map, &monoid_functor::<u64, _>(&Add))
}

/// The reduce kernel behind `min_element` / `max_element`: (value, index)
/// pairs; NaN loses to any number, ties go to the lower index.
pub(crate) fn arg_extreme_spec<T: Element>(arch: u32, greatest: bool) -> KernelSpec {
    let cmp = if greatest { ">" } else { "<" };
    let functor = format!(
        "struct ReduceOp {{ __device__ __forceinline__ static A apply(A a, A b) {{ \
         const bool an = cuprim_is_nan(a.v), bn = cuprim_is_nan(b.v); \
         const bool b_wins = an ? (!bn || b.i < a.i) : (!bn && ((b.v {cmp} a.v) || (b.v == a.v && b.i < a.i))); \
         return b_wins ? b : a; }} \
         __device__ __forceinline__ static A identity() {{ return A{{{}, ~0ull}}; }} }};",
        arg_identity::<T>(greatest).cuda_literal()
    );
    reduce_spec::<T>(arch, "cuprim_kv<T>", "return A{x, i};", &functor)
}

/// `struct ReduceOp` for a monoid on an element type.
fn monoid_functor<A: Element, Op: Monoid<A>>(op: &Op) -> String {
    format!(
        "struct ReduceOp {{ __device__ __forceinline__ static A apply(A a, A b) {{ return ({}); }} \
         __device__ __forceinline__ static A identity() {{ return {}; }} }};",
        op.cuda_expr(),
        op.identity().cuda_literal()
    )
}

/// The reduce kernel for input `T`, accumulator type `acc` (CUDA spelling),
/// a `MapFn` body over `x`, `i`, `p`, and a `ReduceOp` functor.
pub(crate) fn reduce_spec<T: Element>(arch: u32, acc: &str, map_body: &str, reduce_functor: &str) -> KernelSpec {
    let policy = tuning::reduce(arch);
    KernelSpec::new(&REDUCE)
        .constant("CUPRIM_BLOCK", policy.block as i64)
        .constant("CUPRIM_MIN_BLOCKS", policy.blocks_per_sm as i64)
        .constant("CUPRIM_UNROLL", policy.unroll as i64)
        .constant("CUPRIM_STREAM_LOADS", tuning::stream_loads(arch) as i64)
        .elem::<T>("T")
        .raw(&format!("typedef {acc} A;"))
        .raw(&format!(
            "struct MapFn {{ __device__ __forceinline__ static A apply(T x, u64 i, T p) {{ (void)i; (void)p; {map_body} }} }};"
        ))
        .raw(reduce_functor)
}

/// The find-first kernel for `T` and a predicate.
pub(crate) fn find_spec<T: Element, P: Predicate<T>>(arch: u32, pred: &P) -> KernelSpec {
    let policy = tuning::find(arch);
    KernelSpec::new(&FIND)
        .constant("CUPRIM_BLOCK", policy.block as i64)
        .constant("CUPRIM_MIN_BLOCKS", policy.blocks_per_sm as i64)
        .constant("CUPRIM_UNROLL", policy.unroll as i64)
        .elem::<T>("T")
        .raw(&format!(
            "struct PredFn {{ __device__ __forceinline__ static bool apply(T x, T p) {{ (void)p; return ({}); }} }};",
            pred.cuda_expr()
        ))
}

fn reduce_grid(dev: &CudaDevice, len: usize, elem_bytes: usize) -> (u32, u32) {
    grid_for(tuning::reduce(dev.arch), dev, len, elem_bytes)
}

fn grid_for(policy: tuning::Policy, dev: &CudaDevice, len: usize, elem_bytes: usize) -> (u32, u32) {
    let per_thread = (16 / elem_bytes.max(1)) as u64 * policy.unroll as u64;
    (policy.grid((len as u64).div_ceil(per_thread), dev.sm_count), policy.block)
}

/// Bytes of scratch the reduce kernel's per-block partials need.
fn partial_bytes(grid: u32, acc_bytes: usize) -> usize {
    // Partials are 16-byte aligned slots whatever the accumulator.
    grid as usize * acc_bytes.next_multiple_of(16)
}

/// Queues the reduce kernel with `partials` as scratch; the result lands
/// at `out_ptr`.
#[allow(clippy::too_many_arguments)]
fn launch_reduce<T: Element>(
    dev: &CudaDevice,
    module: &Module,
    grid: u32,
    block: u32,
    ptr: u64,
    len: usize,
    param: T,
    partials: u64,
    out_ptr: u64,
) -> Result<()> {
    let n = len as u64;
    let ticket = dev.counters_ptr + 4 * COUNTER_REDUCE_TICKET;
    // SAFETY: cuprim_reduce(const T* in, u64 n, T p, A* partials, u32*
    // ticket, A* out): `in` holds n elements; partials has room for one A
    // per block (partial_bytes); the ticket is the device's zeroed counter,
    // which the kernel leaves at zero; out has room for one A.
    unsafe {
        dev.launch(
            module.function("cuprim_reduce")?,
            grid,
            block,
            0,
            &mut kernel_args![&ptr, &n, &param, &partials, &ticket, &out_ptr],
        )
    }
}

/// Reduces into a device buffer the caller owns (no host sync).
fn reduce_to_device<T: Element>(dev: &CudaDevice, module: &Module, ptr: u64, len: usize, acc_bytes: usize, out_ptr: u64) -> Result<()> {
    let (grid, block) = reduce_grid(dev, len, std::mem::size_of::<T>());
    dev.with_scratch(partial_bytes(grid, acc_bytes), |partials| {
        launch_reduce(dev, module, grid, block, ptr, len, T::zero(), partials, out_ptr)
    })
}

/// Reduces and returns the accumulator's bytes: written by the kernel
/// straight to page-locked host memory, or into scratch and copied back
/// (under the scratch lock, so no other call can overwrite it first).
fn reduce_to_host<T: Element>(dev: &CudaDevice, module: &Module, ptr: u64, len: usize, param: T, acc_bytes: usize) -> Result<[u8; 16]> {
    let (grid, block) = reduce_grid(dev, len, std::mem::size_of::<T>());
    let parts = partial_bytes(grid, acc_bytes);
    dev.with_scratch(parts + 16, |base| {
        // 16 bytes: the accumulator (at most 16) and any padding after it.
        dev.result_to_host::<16>(base + parts as u64, "copying a reduction result", |out_ptr| {
            launch_reduce(dev, module, grid, block, ptr, len, param, base, out_ptr)
        })
    })
}

fn find_first_cuda<T: Element, P: Predicate<T>>(dev: &CudaDevice, ptr: u64, len: usize, pred: &P) -> Result<Option<usize>> {
    if len == 0 {
        return Ok(None);
    }
    let key = FastKey::new::<T, P, ()>("find", pred.cuda_expr());
    let module = dev.module_for(key, || find_spec::<T, P>(dev.arch, pred))?;
    let (grid, block) = grid_for(tuning::find(dev.arch), dev, len, std::mem::size_of::<T>());
    let (n, param) = (len as u64, pred.param());
    let (best_inv, ticket) = (dev.counters_ptr + 4 * COUNTER_FIND_BEST, dev.counters_ptr + 4 * COUNTER_FIND_TICKET);
    let best = dev.with_scratch(8, |scratch| {
        let bytes = dev.result_to_host::<8>(scratch, "copying find_first's result", |result| {
            // SAFETY: cuprim_find_first(const T* in, u64 n, T p, u64*
            // best_inv, u32* ticket, u64* result) on `n` elements; best_inv
            // and the ticket are the device's zeroed counters (the kernel
            // leaves them zero); `result` is 8 writable bytes (page-locked
            // host memory or scratch), read under their locks.
            unsafe {
                dev.launch(
                    module.function("cuprim_find_first")?,
                    grid,
                    block,
                    0,
                    &mut kernel_args![&ptr, &n, &param, &best_inv, &ticket, &result],
                )
            }
        })?;
        Ok(u64::from_le_bytes(bytes))
    })?;
    Ok((best != u64::MAX).then_some(best as usize))
}

/// min_element / max_element: a reduction over (value, index) pairs.
fn arg_extreme<T: Element, D: DeviceData<T> + ?Sized>(v: &D, greatest: bool) -> Result<Option<(usize, T)>> {
    if v.is_empty() {
        return Ok(None);
    }
    let worst = arg_identity::<T>(greatest);
    let better = |a: (T, u64), b: (T, u64)| -> (T, u64) {
        let (an, bn) = (a.0.is_nan(), b.0.is_nan());
        let b_wins = if an {
            !bn || b.1 < a.1
        } else {
            let strictly = if greatest { b.0 > a.0 } else { b.0 < a.0 };
            !bn && (strictly || (b.0 == a.0 && b.1 < a.1))
        };
        if b_wins {
            b
        } else {
            a
        }
    };
    let (value, index) = match v.mem() {
        Mem::Host(s) => host::reduce::map_reduce(s, (worst, u64::MAX), |x, i| (x, i as u64), better),
        Mem::Cuda { dev, ptr, len, .. } => {
            let key = FastKey::new::<T, (), ()>(if greatest { "argmax" } else { "argmin" }, String::new());
            let module = dev.module_for(key, || arg_extreme_spec::<T>(dev.arch, greatest))?;
            let bytes = reduce_to_host(dev, &module, ptr, len, T::zero(), 16)?;
            let value: T = bytemuck::pod_read_unaligned(&bytes[..std::mem::size_of::<T>()]);
            let index: u64 = bytemuck::pod_read_unaligned(&bytes[8..16]);
            (value, index)
        }
    };
    Ok(Some((index as usize, value)))
}
