//! Plans and launches of the collectives: `vote` (`kernels/collective/vote.cu`)
//! and the early-exit `quantify` / `select_one` (`kernels/collective/race.cu`),
//! each over an input expression (a buffer being the one-leaf one).
//! `broadcast` is a fill (`kernels/transform/fill.cu`).

use crate::algo::policy::Policy;
use crate::algo::reduce::plan::{find_policy, pred_input_policy, vector_elem_bytes, write_pred_input};
use crate::device::{Counter, CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::Result;
use crate::expr::args::ExprArgs;
use crate::expr::consume::launch_checked;
use crate::expr::node::{Leaf, Node};
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::pred::Predicate;

template!(VOTE, "collective/vote.cu", ["cuprim_vote"]);
template!(RACE, "collective/race.cu", ["cuprim_quantify", "cuprim_select_one"]);

/// vote: a read stream with a 1/32 write, so the reduction's shape (4 blocks of 256 per SM, 8 x 16 B loads in flight),
/// fewer vectors per lane for 1-, 2- and 8-byte elements (ptxas spilled under the launch bounds with 8). Not yet measured on a GPU.
/// An expression: then [`pred_input_policy`]'s limit.
pub(crate) fn vote_policy<E: Node>(arch: u32) -> Policy {
    let policy = crate::algo::reduce::plan::reduce_policy(arch);
    let unroll = match std::mem::size_of::<E::Item>() {
        1 => 2,
        4 => policy.unroll,
        _ => 4,
    };
    pred_input_policy::<E>(Policy { unroll, ..policy })
}

/// `kernels/collective/vote.cu` for an input and `pred`.
pub(crate) struct VotePlan<'a, E, P> {
    pub input: &'a E,
    pub pred: &'a P,
    pub policy: Policy,
}

impl<'a, E: Node, P: Predicate<E::Item>> VotePlan<'a, E, P>
where
    E::Item: Element,
{
    pub fn new(arch: u32, input: &'a E, pred: &'a P) -> Self {
        VotePlan {
            input,
            pred,
            policy: vote_policy::<E>(arch),
        }
    }

    /// `n.div_ceil(32)` words at `words` from the input's `n` elements (its
    /// indices checked when it permutes).
    pub fn run(&self, dev: &CudaDevice, words: Ptr<u32>) -> Result<()> {
        let n = self.input.length();
        if n == 0 {
            return Ok(());
        }
        // SAFETY: matches `cuprim_vote(const In in, u64 n, T param, u32* words)`: `In` is the
        // struct the plan's input writes (ExprArgs holds its fields at the offsets the kernel
        // reads); it reads n elements of it and writes ceil(n / 32) words.
        let entry: Entry<(ExprArgs, u64, E::Item, Ptr<u32>)> = unsafe { Entry::declare("cuprim_vote") };
        let module = dev.module(self)?;
        let grid = Grid::new(
            self.policy.grid_for_vectors(n, vector_elem_bytes::<E>(), dev.sm_count()),
            self.policy.block,
        );
        launch_checked(dev, self.input, |args| {
            dev.launch(&module, entry, grid, (args, n as u64, self.pred.param(), words))
        })
    }
}

impl<E: Node, P: Predicate<E::Item>> Specialise for VotePlan<'_, E, P>
where
    E::Item: Element,
{
    fn template(&self) -> &'static Template {
        &VOTE
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_pred_input(w, self.policy, self.input, self.pred);
    }
}

/// `kernels/collective/race.cu` for an input and `pred`: quantify and select_one.
pub(crate) struct RacePlan<'a, E, P> {
    pub input: &'a E,
    pub pred: &'a P,
    pub policy: Policy,
}

impl<'a, E: Node, P: Predicate<E::Item>> RacePlan<'a, E, P>
where
    E::Item: Element,
{
    /// find_first's shape: the early exit needs few blocks.
    pub fn new(arch: u32, input: &'a E, pred: &'a P) -> Self {
        RacePlan {
            input,
            pred,
            policy: pred_input_policy::<E>(find_policy(arch)),
        }
    }

    /// Runs `entry` over the input with the find counters (zero at rest,
    /// left zero: these kernels run in stream order with find_first, never
    /// beside it) and returns its 8-byte result.
    fn run(&self, dev: &CudaDevice, entry: &'static str, what: &str) -> Result<u64> {
        // SAFETY: matches `cuprim_quantify` / `cuprim_select_one(const In in, u64 n, T param,
        // (u32* | u64*) state, u32* ticket, u64* result)` in kernels/collective/race.cu: `In` is
        // the struct the plan's input writes (ExprArgs holds its fields at the offsets the kernel
        // reads); it reads up to n elements of it, uses the two zeroed counters (left zero) and
        // writes 8 bytes to `result`.
        let entry: Entry<(ExprArgs, u64, E::Item, Ptr<u64>, Ptr<u32>, Ptr<u8>)> = unsafe { Entry::declare(entry) };
        let n = self.input.length();
        let module = dev.module(self)?;
        let grid = Grid::new(
            self.policy.grid_for_vectors(n, vector_elem_bytes::<E>(), dev.sm_count()),
            self.policy.block,
        );
        let (state, ticket) = (dev.counter(Counter::FindBest).cast::<u64>(), dev.counter(Counter::FindTicket));
        let mut layout = ScratchLayout::new();
        let result = layout.uninit::<u8>(8);
        let bytes = dev.with_scratch(&layout, |s| {
            dev.result_to_host::<8>(s.at(result), what, |out| {
                launch_checked(dev, self.input, |args| {
                    dev.launch(&module, entry, grid, (args, n as u64, self.pred.param(), state, ticket, out))
                })
            })
        })?;
        Ok(u64::from_le_bytes(bytes))
    }

    /// min(matches, 2).
    pub fn quantify(&self, dev: &CudaDevice) -> Result<u64> {
        if self.input.length() == 0 {
            return Ok(0);
        }
        self.run(dev, "cuprim_quantify", "copying quantify's result")
    }

    /// Some matching index.
    pub fn select_one(&self, dev: &CudaDevice) -> Result<Option<usize>> {
        if self.input.length() == 0 {
            return Ok(None);
        }
        let found = self.run(dev, "cuprim_select_one", "copying select_one's result")?;
        Ok((found != u64::MAX).then_some(found as usize))
    }
}

impl<E: Node, P: Predicate<E::Item>> Specialise for RacePlan<'_, E, P>
where
    E::Item: Element,
{
    fn template(&self) -> &'static Template {
        &RACE
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_pred_input(w, self.policy, self.input, self.pred);
    }
}

/// vote, quantify and select_one of an input with `pred`, for precompile.
pub(crate) fn collective_specs_of<E: Node, P: Predicate<E::Item>>(arch: u32, input: &E, pred: &P) -> Vec<KernelSpec>
where
    E::Item: Element,
{
    vec![
        KernelSpec::of(&VotePlan::new(arch, input, pred)),
        KernelSpec::of(&RacePlan::new(arch, input, pred)),
    ]
}

/// vote, quantify and select_one of `T` with `pred`, for precompile
/// (broadcast is in the transform family's fill module).
pub(crate) fn collective_specs<T: Element, P: Predicate<T>>(arch: u32, pred: &P) -> Vec<KernelSpec> {
    collective_specs_of(arch, &Leaf::<T>::type_only(), pred)
}
