//! Plan and launch of `kernels/scan/scan_by_key_chunks.cu`: scan_by_key of
//! long inputs by fixed-length chunks, each streamed by one block tile by
//! tile with one look-back per chunk (the tile kernel, `scan_by_key.cu`,
//! looks back once per tile). The idea of `unique`'s chunks
//! (`algo/bykey/chunks.rs`), with chunks of a fixed length taken by ticket
//! rather than one per resident block, so that where a float sum is split
//! does not depend on the GPU.
//!
//! Every tuning constant of the path is here.

use super::plan::{TilePolicy, LOOKBACK_WINDOWS, SBK_COMMON};
use crate::algo::lookback::{Lookback, LOOKBACK};
use crate::device::{Counter, CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::expr::args::ExprArgs;
use crate::expr::node::Node;
use crate::jit::{template, SpecWriter, Specialise, Template};
use crate::ops::Monoid;

template!(
    SCAN_BY_KEY_CHUNKS,
    "scan/scan_by_key_chunks.cu",
    ["cuprim_scan_by_key_chunks"],
    headers: [LOOKBACK, SBK_COMMON]
);

/// Inputs of at least this many elements take the chunks: 2^23 is 256
/// chunks of 4-byte pairs (about two per SM of an H100), below which the
/// chunks would leave SMs idle. Between measured sizes (H200, `3cd7541`, u8
/// keys / u32 values: tiles 31-33 us against chunks 42-43 at 2^22, 79 against
/// 70.5 at 2^24).
pub(crate) const CHUNKS_FROM: usize = 1 << 23;

/// Elements per chunk, rounded up to whole tiles (16 tiles of either
/// shape below): 512 chunks at 2^24, about one per resident block of an
/// H100, and 8192 at 2^28. Not measured: a sweep of 2^14 to 2^18 is the
/// first GPU step (`benches/scan_tune.rs`).
pub(crate) const CHUNK_ELEMENTS: u64 = 1 << 15;

/// The tile shape of a chunk, by the larger of the key and value sizes.
/// Not measured on the chunk kernel; both are free of spills on sm_80 and
/// sm_90 (NVRTC), where the tile kernel's long-input 128 x 24 spilled up to
/// 300 bytes here (the chunk's carry and loop stay live beside the items).
pub(crate) fn chunk_policy(elem_bytes: usize) -> TilePolicy {
    match elem_bytes {
        // The tile kernel's 8-byte shape (12 pairs of 8-byte values spill there).
        8.. => TilePolicy {
            block: 256,
            items: 8,
            min_blocks: 1,
        },
        // 128 registers at 4 blocks per SM: u8 / u32 keys with u32 / f32 values use 117 to 128 (NVRTC 13, sm_80 / sm_90; the keys and values of a tile loaded together).
        _ => TilePolicy {
            block: 128,
            items: 16,
            min_blocks: 4,
        },
    }
}

/// The shape, chunk length (elements, whole tiles) and threshold in force:
/// the constants above, or with the `scan-tuning` feature what
/// `tuning::set_chunks` forced.
pub(crate) fn chunk_shape(elem_bytes: usize) -> (TilePolicy, u64, usize) {
    let shape = (chunk_policy(elem_bytes), CHUNK_ELEMENTS, CHUNKS_FROM);
    #[cfg(feature = "scan-tuning")]
    let shape = super::plan::tuning::chunks_over(shape);
    let (policy, chunk, from) = shape;
    (policy, chunk.max(1).div_ceil(policy.tile()) * policy.tile(), from)
}

/// One specialisation of `scan_by_key_chunks.cu`: keys and values are
/// input expressions (plain buffers being the simplest).
pub(crate) struct ScanByKeyChunks<'a, KE, VE, Op> {
    policy: TilePolicy,
    /// Elements per chunk, a whole number of tiles.
    chunk: u64,
    keys: &'a KE,
    values: &'a VE,
    op: &'a Op,
    deterministic: bool,
}

impl<'a, KE: Node, VE: Node, Op: Monoid<VE::Item>> ScanByKeyChunks<'a, KE, VE, Op>
where
    KE::Item: Element,
    VE::Item: Element,
{
    pub fn new(keys: &'a KE, values: &'a VE, op: &'a Op, deterministic: bool) -> Self {
        let (policy, chunk, _) = chunk_shape(std::mem::size_of::<VE::Item>().max(std::mem::size_of::<KE::Item>()));
        ScanByKeyChunks {
            policy,
            chunk,
            keys,
            values,
            op,
            deterministic,
        }
    }

    /// Whether an input of `len` elements of these types takes the chunks.
    pub fn applies(len: usize) -> bool {
        len >= chunk_shape(std::mem::size_of::<VE::Item>().max(std::mem::size_of::<KE::Item>())).2
    }

    /// Segmented inclusive scan of the values to `out`, as
    /// [`ScanByKey::run`](super::plan::ScanByKey::run).
    pub fn run(&self, dev: &CudaDevice, out: Ptr<VE::Item>) -> Result<()> {
        let len = self.values.length();
        if len == 0 {
            return Ok(());
        }
        let chunks = u32::try_from((len as u64).div_ceil(self.chunk))
            .map_err(|_| Error::InvalidArgument(format!("scan_by_key of {len} elements needs more than 2^32 chunks")))?;
        let module = dev.module(self)?;
        let mut layout = ScratchLayout::new();
        let lookback = Lookback::place(&mut layout, chunks as u64, super::plan::seg_pair_bytes::<VE::Item>());
        // SAFETY: matches `cuprim_scan_by_key_chunks(const In0 keys, const In1 values, T* out, u64 n, u32* status,
        // SegPair* aggregates, SegPair* prefixes, u32* chunk_counter, u32 num_chunks)`, In0 and In1 the structs
        // whose fields the two ExprArgs hold: one block per chunk of SBK_CHUNK elements over n elements of the
        // inputs and out, look-back arrays of num_chunks pairs (status zeroed), counter left at zero.
        let entry: Entry<(ExprArgs, ExprArgs, Ptr<VE::Item>, u64, Ptr<u32>, Ptr<u8>, Ptr<u8>, Ptr<u32>, u32)> =
            unsafe { Entry::declare("cuprim_scan_by_key_chunks") };
        let counter = dev.counter(Counter::ScanByKeyTile);
        dev.with_scratch(&layout, |s| {
            let (status, aggregates, prefixes) = lookback.args(&s);
            crate::expr::consume::launch_checked2(dev, self.keys, self.values, |k, v| {
                let args = (k, v, out, len as u64, status, aggregates, prefixes, counter, chunks);
                dev.launch(&module, entry, Grid::new(chunks, self.policy.block), args)
            })
        })
    }
}

impl<KE: Node, VE: Node, Op: Monoid<VE::Item>> Specialise for ScanByKeyChunks<'_, KE, VE, Op>
where
    KE::Item: Element,
    VE::Item: Element,
{
    fn template(&self) -> &'static Template {
        &SCAN_BY_KEY_CHUNKS
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        self.policy.write(w);
        w.constant("SBK_CHUNK", self.chunk as i64);
        w.constant("CUPRIM_DETERMINISTIC", self.deterministic as i64);
        w.constant("CUPRIM_LOOKBACK_WINDOWS", LOOKBACK_WINDOWS);
        crate::expr::consume::write_inputs(self.keys, "K", self.values, "T", w);
        w.monoid::<VE::Item, Op>("ScanOp", "T", self.op);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks are whole tiles of every shape, near CHUNK_ELEMENTS, and the
    /// threshold leaves at least two of them.
    #[test]
    fn chunks_are_whole_tiles() {
        for bytes in [1usize, 2, 4, 8, 16] {
            let (p, chunk, from) = chunk_shape(bytes);
            assert_eq!(chunk % p.tile(), 0, "{bytes} bytes");
            assert!(
                chunk >= CHUNK_ELEMENTS && chunk < CHUNK_ELEMENTS + p.tile(),
                "{bytes} bytes: {chunk}"
            );
            assert!(from as u64 >= 2 * chunk);
        }
    }
}
