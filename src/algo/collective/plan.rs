//! Plans and launches of the collectives: `vote` (`kernels/collective/vote.cu`)
//! and the early-exit `quantify` / `select_one` (`kernels/collective/race.cu`).
//! `broadcast` is a fill (`kernels/transform/fill.cu`).

use crate::algo::policy::Policy;
use crate::algo::reduce::plan::find_policy;
use crate::device::{Counter, CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::Result;
use crate::jit::spec::Pred;
use crate::jit::{template, KernelSpec, OpText, SpecWriter, Specialise, Template};
use crate::pred::Predicate;
use std::marker::PhantomData;

template!(VOTE, "collective/vote.cu", ["cuprim_vote"]);
template!(RACE, "collective/race.cu", ["cuprim_quantify", "cuprim_select_one"]);

/// vote: a read stream with a 1/32 write, so the reduction's shape (4 blocks of 256 per SM, 8 x 16 B loads in flight),
/// fewer vectors per lane for 1-, 2- and 8-byte elements (ptxas spilled under the launch bounds with 8). Not yet measured on a GPU.
pub(crate) fn vote_policy<T>(arch: u32) -> Policy {
    let policy = crate::algo::reduce::plan::reduce_policy(arch);
    let unroll = match std::mem::size_of::<T>() {
        1 => 2,
        4 => policy.unroll,
        _ => 4,
    };
    Policy { unroll, ..policy }
}

/// The predicate functor every collective kernel calls.
fn write_pred<T: Element, P: Predicate<T>, W: SpecWriter>(w: &mut W, policy: Policy, pred: &P) {
    w.constant("CUPRIM_BLOCK", policy.block as i64);
    w.constant("CUPRIM_MIN_BLOCKS", policy.blocks_per_sm as i64);
    w.constant("CUPRIM_UNROLL", policy.unroll as i64);
    w.elem::<T>("T");
    w.piece(OpText::<P, T, Pred>::predicate(*pred), |pred| {
        format!(
            "struct PredFn {{ __device__ __forceinline__ static bool apply(T x, T p) {{ (void)p; return ({}); }} }};",
            Predicate::<T>::cuda_expr(&pred.op)
        )
    });
}

/// `kernels/collective/vote.cu` for `T` and `pred`.
pub(crate) struct VotePlan<'a, T, P> {
    pub pred: &'a P,
    pub policy: Policy,
    _t: PhantomData<T>,
}

impl<'a, T: Element, P: Predicate<T>> VotePlan<'a, T, P> {
    pub fn new(arch: u32, pred: &'a P) -> Self {
        VotePlan {
            pred,
            policy: vote_policy::<T>(arch),
            _t: PhantomData,
        }
    }

    /// `n.div_ceil(32)` words at `words` from `n` elements at `input`.
    pub fn run(&self, dev: &CudaDevice, input: Ptr<T>, n: u64, words: Ptr<u32>) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        // SAFETY: matches `cuprim_vote(const T* in, u64 n, T param, u32* words)`: reads n
        // elements, writes ceil(n / 32) words.
        let entry: Entry<(Ptr<T>, u64, T, Ptr<u32>)> = unsafe { Entry::declare("cuprim_vote") };
        let module = dev.module(self)?;
        let grid = Grid::new(
            self.policy.grid_for_vectors(n as usize, std::mem::size_of::<T>(), dev.sm_count()),
            self.policy.block,
        );
        dev.launch(&module, entry, grid, (input, n, self.pred.param(), words))
    }
}

impl<T: Element, P: Predicate<T>> Specialise for VotePlan<'_, T, P> {
    fn template(&self) -> &'static Template {
        &VOTE
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_pred::<T, P, W>(w, self.policy, self.pred);
    }
}

/// `kernels/collective/race.cu` for `T` and `pred`: quantify and select_one.
pub(crate) struct RacePlan<'a, T, P> {
    pub pred: &'a P,
    pub policy: Policy,
    _t: PhantomData<T>,
}

impl<'a, T: Element, P: Predicate<T>> RacePlan<'a, T, P> {
    /// find_first's shape: the early exit needs few blocks.
    pub fn new(arch: u32, pred: &'a P) -> Self {
        RacePlan {
            pred,
            policy: find_policy(arch),
            _t: PhantomData,
        }
    }

    /// Runs `entry` over `n` elements with the find counters (zero at
    /// rest, left zero: these kernels run in stream order with find_first,
    /// never beside it) and returns its 8-byte result.
    fn run(&self, dev: &CudaDevice, entry: &'static str, what: &str, input: Ptr<T>, n: u64) -> Result<u64> {
        // SAFETY: matches `cuprim_quantify` / `cuprim_select_one(const T* in, u64 n, T param,
        // (u32* | u64*) state, u32* ticket, u64* result)` in kernels/collective/race.cu: reads n
        // elements, uses the two zeroed counters (left zero) and writes 8 bytes to `result`.
        let entry: Entry<(Ptr<T>, u64, T, Ptr<u64>, Ptr<u32>, Ptr<u8>)> = unsafe { Entry::declare(entry) };
        let module = dev.module(self)?;
        let grid = Grid::new(
            self.policy.grid_for_vectors(n as usize, std::mem::size_of::<T>(), dev.sm_count()),
            self.policy.block,
        );
        let (state, ticket) = (dev.counter(Counter::FindBest).cast::<u64>(), dev.counter(Counter::FindTicket));
        let mut layout = ScratchLayout::new();
        let result = layout.uninit::<u8>(8);
        let bytes = dev.with_scratch(&layout, |s| {
            dev.result_to_host::<8>(s.at(result), what, |out| {
                dev.launch(&module, entry, grid, (input, n, self.pred.param(), state, ticket, out))
            })
        })?;
        Ok(u64::from_le_bytes(bytes))
    }

    /// min(matches, 2).
    pub fn quantify(&self, dev: &CudaDevice, input: Ptr<T>, n: u64) -> Result<u64> {
        if n == 0 {
            return Ok(0);
        }
        self.run(dev, "cuprim_quantify", "copying quantify's result", input, n)
    }

    /// Some matching index.
    pub fn select_one(&self, dev: &CudaDevice, input: Ptr<T>, n: u64) -> Result<Option<usize>> {
        if n == 0 {
            return Ok(None);
        }
        let found = self.run(dev, "cuprim_select_one", "copying select_one's result", input, n)?;
        Ok((found != u64::MAX).then_some(found as usize))
    }
}

impl<T: Element, P: Predicate<T>> Specialise for RacePlan<'_, T, P> {
    fn template(&self) -> &'static Template {
        &RACE
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_pred::<T, P, W>(w, self.policy, self.pred);
    }
}

/// vote, quantify and select_one of `T` with `pred`, for precompile
/// (broadcast is in the transform family's fill module).
pub(crate) fn collective_specs<T: Element, P: Predicate<T>>(arch: u32, pred: &P) -> Vec<KernelSpec> {
    vec![
        KernelSpec::of(&VotePlan::<T, P>::new(arch, pred)),
        KernelSpec::of(&RacePlan::<T, P>::new(arch, pred)),
    ]
}
