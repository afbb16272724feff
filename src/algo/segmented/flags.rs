//! Folds of per-element flags into each segment's result in the offsets'
//! type: how many are set (`segmented_count` and the collectives built on
//! it) and the first set one's index (`segmented_find_first`).
//!
//! The flags are 4-byte (`u32`, 0 or 1) whatever the offsets, and the
//! kernel widens them into an accumulator of the offsets' type as it folds,
//! so a segment's total is exact up to the full length, and the tiles are
//! the plain segmented sum's of the data, 4-byte or wider (a flag of f32
//! costs what an f32 does). With flags of the offsets' type, u64 flags of
//! f32 took the untuned 8-byte tiles: segments of 1024 at 2^28, u64 offsets,
//! the count 1060 us against 270 for the sum, now 306 (H200, one call;
//! 2^24: 86 / 36, now 40 us).

use super::plan::{self, Emit, SegmentedKernel, Shape};
use super::{host, per_segment};
use crate::element::{Element, IndexElement};
use crate::error::Result;
use crate::expr::node::Node;
use crate::jit::{KernelSpec, SpecWriter, Specialise, Template};
use crate::ops::{Add, Arith, Min};
use crate::vec::{DeviceData, DeviceVec};
use std::marker::PhantomData;

/// What a segment's flags fold into.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fold {
    /// How many are set.
    Count,
    /// The index within the segment of the first set one; `I::MAX` where
    /// none is.
    First,
}

impl Fold {
    fn op(self) -> &'static str {
        match self {
            Fold::Count => "segmented_count",
            Fold::First => "segmented_find_first",
        }
    }
}

/// A specialisation of `kernels/segmented/reduce.cu` folding `u32` flags
/// into `I`: each flag mapped to 1 / 0 (count) or to its position / `I::MAX`
/// (first), summed or minimised, the positions written relative to their
/// segment's start.
pub(crate) struct SegFlags<'a, E, I> {
    pub arch: u32,
    pub input: &'a E,
    pub fold: Fold,
    pub _t: PhantomData<I>,
}

impl<E: Node<Item = u32>, I: IndexElement + Arith> Specialise for SegFlags<'_, E, I> {
    fn template(&self) -> &'static Template {
        &plan::SEGMENTED_REDUCE
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        let emit = match self.fold {
            Fold::Count => Emit::Fold,
            Fold::First => Emit::FromStart,
        };
        plan::write_common::<E, I, W>(w, self.input, self.shape(), emit);
        w.typedef("A", "I");
        w.typedef("O", "I");
        match self.fold {
            Fold::Count => {
                w.text("struct MapFn { __device__ __forceinline__ static A apply(T x, u64 i) { (void)i; return x != 0 ? 1 : 0; } };");
                w.monoid::<I, Add>("ReduceOp", "A", &Add);
            }
            Fold::First => {
                w.text("struct MapFn { __device__ __forceinline__ static A apply(T x, u64 i) { return x != 0 ? (A)i : (A)~0ull; } };");
                w.monoid::<I, Min>("ReduceOp", "A", &Min);
            }
        }
    }
}

impl<E: Node<Item = u32>, I: IndexElement + Arith> SegmentedKernel for SegFlags<'_, E, I> {
    type T = u32;
    type I = I;
    type Out = I;
    type In = E;
    fn input(&self) -> &E {
        self.input
    }
    fn acc_layout(&self) -> (usize, usize) {
        (std::mem::size_of::<I>(), std::mem::align_of::<I>())
    }
    /// Keyed on the bytes read per element (the data's, under the flags),
    /// at least the flag's own 4: a u8 count spilled 4 bytes on sm_90 in
    /// the 1-byte shape's 64 registers.
    fn shape(&self) -> Shape {
        Shape::of(self.arch, E::WIDEST.max(std::mem::size_of::<u32>()))
    }
}

/// `fold` over each segment of `flags`, in the offsets' type.
pub(crate) fn fold_of<E: Node<Item = u32>, I: IndexElement + Arith>(
    flags: &E,
    offsets: &(impl DeviceData<I> + ?Sized),
    fold: Fold,
) -> Result<DeviceVec<I>> {
    per_segment(
        fold.op(),
        flags,
        offsets,
        |s, bounds| match fold {
            Fold::Count => host::segmented(
                s,
                bounds,
                I::zero(),
                |f, _| if f != 0 { I::one() } else { I::zero() },
                <I as Arith>::add,
            ),
            Fold::First => host::segmented(
                s,
                bounds,
                I::highest(),
                |f, i| if f != 0 { (i as u64).cast::<I>() } else { I::highest() },
                |a, b| if b.as_u64() < a.as_u64() { b } else { a },
            ),
        },
        |arch| SegFlags::<E, I> {
            arch,
            input: flags,
            fold,
            _t: PhantomData,
        },
    )
}

/// The module of `fold` over `flags` with offsets `I`, for precompile.
pub(crate) fn spec_of<E: Node<Item = u32>, I: IndexElement + Arith>(arch: u32, flags: &E, fold: Fold) -> KernelSpec {
    KernelSpec::of(&SegFlags::<E, I> {
        arch,
        input: flags,
        fold,
        _t: PhantomData,
    })
}
