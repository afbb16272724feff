//! Plan and launch of `kernels/select/select_chunks.cu`: copy_if and
//! partition of long inputs of 4-byte elements in two passes over chunks
//! of 8192 elements (count, one look-back per chunk, then the chunk read
//! again from L2 and written), instead of `select.cu`'s one pass whose
//! look-back holds each tile in registers.

use crate::algo::lookback::{CHUNK_LOOKBACK, LOOKBACK};
use crate::device::{Counter, CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::Result;
use crate::expr::args::ExprArgs;
use crate::expr::consume::{launch_checked, write_input};
use crate::expr::node::Node;
use crate::jit::spec::Pred;
use crate::jit::{template, OpText, SpecWriter, Specialise, Template};
use crate::pred::Predicate;

template!(
    SELECT_CHUNKS,
    "select/select_chunks.cu",
    ["cuprim_select_chunks"],
    headers: [LOOKBACK, CHUNK_LOOKBACK]
);

/// Threads per block and blocks per SM: 32 items a lane in registers, 32
/// KiB of runs a block. Not tuned.
const BLOCK: u32 = 256;
const BLOCKS_PER_SM: u32 = 4;
/// Blocks per SM for inputs reading several buffers: f32 `zip(a, b).map(Mul)`
/// spilled 8-12 bytes at 4 (NVRTC 13, sm_80 / sm_90).
const BLOCKS_PER_SM_MULTI_STREAM: u32 = 3;
/// Elements a chunk (the kernel's SC_CHUNK).
const CHUNK: u64 = BLOCK as u64 * 32;

/// Inputs of 4-byte elements at least this long take the chunks. Not
/// measured between 2^20 and 2^24 (a guess).
pub(crate) const SELECT_CHUNKS_FROM: usize = 1 << 22;

/// Whether copy_if / partition of `n` elements of `T` take the chunks.
pub(crate) fn by_chunks<T>(n: usize) -> bool {
    std::mem::size_of::<T>() == 4 && n >= SELECT_CHUNKS_FROM
}

/// One specialisation of the chunk kernel.
pub(crate) struct SelectChunks<'a, E, P> {
    pub input: &'a E,
    pub pred: &'a P,
}

impl<E: Node<Item = T>, T: Element, P: Predicate<T>> SelectChunks<'_, E, P> {
    /// As [`Select::launch`](super::plan::Select::launch). `n >= 1`.
    pub fn launch(&self, dev: &CudaDevice, selected: Ptr<T>, rejected: Ptr<T>, count_out: Option<Ptr<u64>>) -> Result<Option<usize>> {
        let n = self.input.length() as u64;
        let chunks = u32::try_from(n.div_ceil(CHUNK))
            .map_err(|_| crate::Error::InvalidArgument(format!("copy_if of {n} elements needs more than 2^32 chunks")))?;
        let module = dev.module(self)?;
        let mut layout = ScratchLayout::new();
        let state = layout.zeroed::<u64>(chunks as u64);
        let slot = layout.uninit::<u64>(1);
        // SAFETY: matches `cuprim_select_chunks(const In in, u64 n, T p, T* selected, T* rejected, u64* count_out,
        // u64* state, u32* ticket, u32 chunks)`, `In` the struct whose fields ExprArgs holds: reads n elements,
        // writes at most n to selected (and to rejected unless null) and one count, state[0..chunks) zeroed, the
        // ticket zero and left zero.
        let entry: Entry<(ExprArgs, u64, T, Ptr<T>, Ptr<T>, Ptr<u64>, Ptr<u64>, Ptr<u32>, u32)> =
            unsafe { Entry::declare("cuprim_select_chunks") };
        let ticket = dev.counter(Counter::SelectTile);
        dev.with_scratch(&layout, |s| {
            let count = count_out.unwrap_or(s.at(slot));
            launch_checked(dev, self.input, |input| {
                let args = (input, n, self.pred.param(), selected, rejected, count, s.at(state), ticket, chunks);
                dev.launch(&module, entry, Grid::new(chunks, BLOCK), args)
            })?;
            match count_out {
                Some(_) => Ok(None),
                None => Ok(Some(
                    u64::from_le_bytes(dev.read_back::<8>(count.raw(), "reading the copy_if count")?) as usize,
                )),
            }
        })
    }
}

impl<E: Node<Item = T>, T: Element, P: Predicate<T>> Specialise for SelectChunks<'_, E, P> {
    fn template(&self) -> &'static Template {
        &SELECT_CHUNKS
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_BLOCK", BLOCK as i64);
        let blocks = if E::STREAMS > 1 {
            BLOCKS_PER_SM_MULTI_STREAM
        } else {
            BLOCKS_PER_SM
        };
        w.constant("CUPRIM_MIN_BLOCKS", blocks as i64);
        write_input(self.input, w);
        w.piece(OpText::<P, T, Pred>::predicate(*self.pred), |pred| {
            format!(
                "struct PredFn {{ __device__ __forceinline__ static bool apply(T x, T p) {{ (void)p; return ({}); }} }};",
                Predicate::<T>::cuda_expr(&pred.op)
            )
        });
    }
}
