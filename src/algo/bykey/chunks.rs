//! Plan and launch of `kernels/bykey/unique_chunks.cu`: unique and
//! unique_count of long inputs by contiguous chunks, one per resident
//! block, each streamed once with its run heads kept in shared memory and
//! one look-back per chunk. H100, u32 keys in runs of 64
//! (`benchmarks/runs/final-536da01/`): `unique_into` 0.81x / 0.82x CUB's
//! `DeviceSelect::Unique` at 2^24 / 2^28, where the tile kernel
//! (`by_key.cu`) took 1.13x / 1.24x.

use crate::device::{CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::Result;
use crate::expr::args::ExprArgs;
use crate::expr::consume::{launch_checked, write_input};
use crate::expr::node::Node;
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};

template!(UNIQUE_CHUNKS, "bykey/unique_chunks.cu", ["cuprim_unique_chunks"]);

/// Threads per block, blocks per SM and the heads a block keeps in shared
/// memory: 256 threads of 32 bytes of keys each, 4 blocks per SM, 46 KiB
/// of heads (4-byte keys: 11 776), the prototype's best of six shapes
/// (`benchmarks/runs/i22-unique-chunks/`: 256 x 8 u32 at 4 blocks per SM
/// with 12 288 heads, 420.6 us at 2^28 against 446.1 for 512 x 8 at 2).
const BLOCK: u32 = 256;
const BLOCKS_PER_SM: u32 = 4;
const HEAD_BYTES: usize = 46 << 10;

/// Inputs shorter than this keep the tile kernel (`by_key.cu`): a chunk
/// per resident block would be a few tiles. Not measured between the
/// prototype's 2^20 (0.79x CUB) and below.
pub(crate) const CHUNKS_FROM: usize = 1 << 20;

/// One specialisation: keys `KE`, heads kept or only counted.
pub(crate) struct UniqueChunks<'a, KE> {
    keys: &'a KE,
    /// Heads a block keeps (0: unique_count, which writes none).
    cap: usize,
}

impl<'a, KE: Node> UniqueChunks<'a, KE>
where
    KE::Item: Element,
{
    /// `write`: unique (the heads written) or unique_count.
    pub fn new(keys: &'a KE, write: bool) -> Self {
        UniqueChunks {
            keys,
            cap: if write { HEAD_BYTES / std::mem::size_of::<KE::Item>() } else { 0 },
        }
    }

    /// Writes the run heads to `out` (when kept) and their number to
    /// `count_out`; or, with no `count_out`, reads it back (one small
    /// synchronous read) and returns it. `n >= 1`.
    pub fn run(&self, dev: &CudaDevice, out: Ptr<KE::Item>, count_out: Option<Ptr<u64>>) -> Result<Option<u64>> {
        let n = self.keys.length() as u64;
        // Chunks of whole tiles (32 bytes of keys per thread, or whole
        // vectors of the widest buffer; the kernel's UC_TILE is at most
        // this) over one wave of resident blocks.
        let tile = BLOCK as u64 * 32;
        let wave = (dev.sm_count() * BLOCKS_PER_SM) as u64;
        let chunk = n.div_ceil(wave).div_ceil(tile) * tile;
        let blocks = n.div_ceil(chunk) as u32;
        let module = dev.module(self)?;
        let mut layout = ScratchLayout::new();
        let state = layout.zeroed::<u64>(blocks as u64);
        let slot = layout.uninit::<u64>(1);
        // SAFETY: matches `cuprim_unique_chunks(const In0 keys, u64 n, u64 chunk, K* out, u64* count_out, u64*
        // state)`, In0 the struct whose fields the ExprArgs hold: block b reads keys [b chunk, (b + 1) chunk) below
        // n and the key before them, writes at most as many heads to out (none when UC_CAP is 0) and, the last
        // block, count_out[0]; state[0..blocks) zeroed.
        let entry: Entry<(ExprArgs, u64, u64, Ptr<KE::Item>, Ptr<u64>, Ptr<u64>)> = unsafe { Entry::declare("cuprim_unique_chunks") };
        dev.with_scratch(&layout, |s| {
            let count = count_out.unwrap_or(s.at(slot));
            launch_checked(dev, self.keys, |k| {
                dev.launch(&module, entry, Grid::new(blocks, BLOCK), (k, n, chunk, out, count, s.at(state)))
            })?;
            match count_out {
                Some(_) => Ok(None),
                None => Ok(Some(u64::from_le_bytes(dev.read_back::<8>(count.raw(), "reading the run count")?))),
            }
        })
    }
}

impl<KE: Node> Specialise for UniqueChunks<'_, KE>
where
    KE::Item: Element,
{
    fn template(&self) -> &'static Template {
        &UNIQUE_CHUNKS
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_input(self.keys, w);
        w.typedef("In0", "In");
        w.typedef("K", "T");
        <super::plan::NotEqual as super::plan::KeyEq<KE::Item>>::write(&super::plan::NotEqual, w);
        w.constant("CUPRIM_BLOCK", BLOCK as i64);
        w.constant("CUPRIM_MIN_BLOCKS", BLOCKS_PER_SM as i64);
        w.constant("UC_CAP", self.cap as i64);
    }
}

/// The two modules of keys `KE` (unique and unique_count), for precompile.
pub(crate) fn chunk_specs<KE: Node>(keys: &KE) -> [KernelSpec; 2]
where
    KE::Item: Element,
{
    [
        KernelSpec::of(&UniqueChunks::new(keys, true)),
        KernelSpec::of(&UniqueChunks::new(keys, false)),
    ]
}
