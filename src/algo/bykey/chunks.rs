//! Plan and launch of `kernels/bykey/count_chunks.cu`: unique_count of
//! long inputs, a contiguous piece of keys per block (one wave), each
//! block's count added to the total by one atomic. (unique itself is a
//! stream compaction of the run heads:
//! `crate::algo::select::plan::Select::unique`.)
//!
//! Also of `kernels/bykey/reduce_chunks.cu`: reduce_by_key and run-length
//! encoding the same way, each run's key and aggregate kept as one record
//! (run lengths: from head positions, no per-element fold),
//! chunks at most a fixed multiple of the records a block keeps, their
//! index from a ticket (several waves at large sizes). H200, u32 keys, f32
//! values in runs of 64: `reduce_by_key_into` 64.7 / 701 us at 2^24 / 2^28
//! (the tile kernel 89.0 / 1168), `run_length_encode_into` 0.79x CUB's at
//! 2^28. Both kernels stage an overflowing chunk's re-read records in
//! shared memory and write them coalesced (dense runs: 3.5x the tile kernel
//! when each lane wrote its own; not yet measured since).

use super::plan::KeyEq;
use crate::algo::lookback::{Lookback, LOOKBACK};
use crate::device::{Counter, CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::Result;
use crate::expr::args::ExprArgs;
use crate::expr::consume::{launch_checked, launch_checked2, write_input, write_inputs};
use crate::expr::node::Node;
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::ops::Monoid;
use crate::value::Value;
use std::marker::PhantomData;

template!(COUNT_CHUNKS, "bykey/count_chunks.cu", ["cuprim_count_chunks"]);

/// Threads per block and blocks per SM: 256 threads of 32 bytes of keys
/// each, 4 blocks per SM, the prototype's best of six shapes
/// (`benchmarks/runs/i22-unique-chunks/`: 256 x 8 u32 at 4 blocks per SM,
/// 420.6 us at 2^28 against 446.1 for 512 x 8 at 2).
const BLOCK: u32 = 256;
const BLOCKS_PER_SM: u32 = 4;

/// Inputs shorter than this keep the tile kernel (`by_key.cu`): a chunk
/// per resident block would be a few tiles. Not measured between the
/// prototype's 2^20 (0.79x CUB) and below.
const CHUNKS_FROM: usize = 1 << 20;

/// One specialisation: the run count of keys `KE`.
pub(crate) struct CountChunks<'a, KE> {
    keys: &'a KE,
}

impl<'a, KE: Node> CountChunks<'a, KE>
where
    KE::Item: Element,
{
    pub fn new(keys: &'a KE) -> Self {
        CountChunks { keys }
    }

    /// Whether these keys take the pieces: long enough.
    pub fn takes(&self) -> bool {
        self.keys.length() >= CHUNKS_FROM
    }

    /// The number of runs (one small synchronous read). `n >= 1`.
    pub fn run(&self, dev: &CudaDevice) -> Result<u64> {
        let n = self.keys.length() as u64;
        // A piece: a wave's share, in whole tiles (32 bytes of keys per
        // thread, or whole vectors of the widest buffer; the kernel's
        // UC_TILE divides this).
        let tile = BLOCK as u64 * 32;
        let wave = (dev.sm_count() * BLOCKS_PER_SM) as u64;
        let most = n.div_ceil(wave).div_ceil(tile) * tile;
        debug_assert!(self.takes());
        let module = dev.module(self)?;
        let mut layout = ScratchLayout::new();
        let total = layout.zeroed::<u64>(1);
        // SAFETY: matches `cuprim_count_chunks(const In0 keys, u64 n, u64 most, u64* count_out)`, In0 the struct
        // whose fields the ExprArgs hold: block b reads keys [b * most, min(n, (b + 1) * most)) and the key
        // before them, and adds its count to count_out[0], zeroed.
        let entry: Entry<(ExprArgs, u64, u64, Ptr<u64>)> = unsafe { Entry::declare("cuprim_count_chunks") };
        let blocks = n.div_ceil(most) as u32;
        dev.with_scratch(&layout, |s| {
            let count = s.at(total);
            launch_checked(dev, self.keys, |k| {
                dev.launch(&module, entry, Grid::new(blocks, BLOCK), (k, n, most, count))
            })?;
            Ok(u64::from_le_bytes(dev.read_back::<8>(count.raw(), "reading the run count")?))
        })
    }
}

impl<KE: Node> Specialise for CountChunks<'_, KE>
where
    KE::Item: Element,
{
    fn template(&self) -> &'static Template {
        &COUNT_CHUNKS
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_input(self.keys, w);
        w.typedef("In0", "In");
        w.typedef("K", "T");
        <super::plan::NotEqual as super::plan::KeyEq<KE::Item>>::write(&super::plan::NotEqual, w);
        w.constant("CUPRIM_BLOCK", BLOCK as i64);
        w.constant("CUPRIM_MIN_BLOCKS", BLOCKS_PER_SM as i64);
    }
}

/// The unique_count module of keys `KE`, for precompile.
pub(crate) fn count_chunk_spec<KE: Node>(keys: &KE) -> KernelSpec
where
    KE::Item: Element,
{
    KernelSpec::of(&CountChunks::new(keys))
}

template!(REDUCE_CHUNKS, "bykey/reduce_chunks.cu", ["cuprim_reduce_chunks"], headers: [LOOKBACK]);

/// reduce_by_key and run-length encoding by chunks
/// (`kernels/bykey/reduce_chunks.cu`): 256 threads, 4 blocks per SM, as
/// the run count's chunks (not yet measured for these modes); 3 where the
/// look-back pair is wider than 8 bytes (8-byte values, or u64 counts), whose
/// 64 registers spilled 4 to 44 bytes (NVRTC sm_80 / sm_90 report).
const REDUCE_BLOCK: u32 = 256;
const REDUCE_BLOCKS_PER_SM: u32 = 4;
const REDUCE_BLOCKS_PER_SM_WIDE_PAIR: u32 = 3;
/// Static shared memory of a block (CUDA's 48 KiB limit, less a margin for
/// the kernel's few scalars): the records get what the look-back leaves.
const REDUCE_SHARED_BYTES: usize = (48 << 10) - 64;
/// Look-back windows the deterministic fold stages (one look-back per
/// chunk: a deeper one reads its windows again, a few microseconds).
const REDUCE_LOOKBACK_WINDOWS: i64 = 4;
/// A chunk is at most this many times the records a block keeps, so runs
/// averaging this long or longer never overflow (reasoned from bytes, not
/// measured: u32 keys and f32 values keep 5 991 records, chunks of up to
/// 286 720 elements; 2^28 of them on 132 SMs are two waves of 528 chunks of
/// 256 000, 4 000 runs of 64 each).
const REDUCE_FIT_RUN: u64 = 48;

/// reduce_by_key of inputs shorter than this keeps the tile kernel
/// (`by_key.cu`). H200, 2026-11-28, runs of 64, u32 / f32: tiles 17.5 us
/// against chunks 21.5 at 2^20, chunks 64.7 against 89.0 at 2^24.
pub(crate) const REDUCE_CHUNKS_FROM: usize = 1 << 22;

/// run_length_encode of inputs shorter than this keeps the tile kernel.
/// H200, 2026-11-28, runs of 64, u32: chunks 17.9 us at 2^20 against CUB's
/// 19.1 (the run count's threshold).
pub(crate) const LENGTH_CHUNKS_FROM: usize = 1 << 20;

/// Whether reduce_by_key of `n` elements takes the chunks.
pub(crate) fn reduce_by_chunks(n: usize) -> bool {
    #[cfg(feature = "bykey-tuning")]
    if let Some(from) = tuning::get().from {
        return n >= from;
    }
    n >= REDUCE_CHUNKS_FROM
}

/// Whether run_length_encode of `n` elements takes the chunks.
pub(crate) fn lengths_by_chunks(n: usize) -> bool {
    #[cfg(feature = "bykey-tuning")]
    if let Some(from) = tuning::get().from {
        return n >= from;
    }
    n >= LENGTH_CHUNKS_FROM
}

/// One specialisation: keys `KE`, values `VE` (for run lengths an unread
/// buffer of the count type), value output `O`, reduce's monoid `Op`.
pub(crate) struct ReduceChunks<'a, KE, VE, O, Op, E> {
    keys: &'a KE,
    values: &'a VE,
    op: &'a Op,
    eq: E,
    /// Run lengths (values unread, the pairs carry head positions) rather than reduce.
    lengths: bool,
    /// u64 counts (2^32 elements or more), else u32.
    wide: bool,
    /// Chunks chain their (float) aggregates in a fixed order.
    deterministic: bool,
    /// Consecutive elements per lane.
    items: u32,
    /// Records a block keeps.
    cap: usize,
    /// Resident blocks per SM the kernel is built for.
    blocks_per_sm: u32,
    _t: PhantomData<O>,
}

impl<'a, KE: Node, VE: Node, O: Value, Op: Monoid<VE::Item>, E: KeyEq<KE::Item>> ReduceChunks<'a, KE, VE, O, Op, E>
where
    KE::Item: Element,
{
    /// reduce_by_key (`lengths` false; `deterministic` for float values)
    /// or run lengths (`VE` an unread buffer of the count type, in which the
    /// kernel carries head positions: u32 below 2^32 elements, else u64) of
    /// `len` elements.
    pub fn new(keys: &'a KE, values: &'a VE, op: &'a Op, eq: E, lengths: bool, len: usize, deterministic: bool) -> Self {
        let wide = len as u64 > u32::MAX as u64;
        let kb = std::mem::size_of::<KE::Item>();
        let vb = VE::Item::C_SIZE;
        // 32 bytes of keys (and of values) per lane, 16 bytes past 2^32 elements (their pairs twice as wide).
        let lane_bytes = if wide { 16 } else { 32 };
        let mut items = lane_bytes / if lengths { kb } else { kb.max(vb) };
        let deterministic = deterministic && !lengths;
        let pairs = 2 * (REDUCE_BLOCK as usize / 32) + if deterministic { 32 * REDUCE_LOOKBACK_WINDOWS as usize } else { 1 } + 1;
        let cap = (REDUCE_SHARED_BYTES - pairs * Self::pair_bytes(wide)) / (kb + vb);
        // A tile's runs always fit (the kernel asserts it).
        while REDUCE_BLOCK as usize * items > cap {
            items /= 2;
        }
        ReduceChunks {
            keys,
            values,
            op,
            eq,
            lengths,
            wide,
            deterministic,
            items: items as u32,
            cap,
            blocks_per_sm: if Self::pair_bytes(wide) > 8 {
                REDUCE_BLOCKS_PER_SM_WIDE_PAIR
            } else {
                REDUCE_BLOCKS_PER_SM
            },
            _t: PhantomData,
        }
    }

    /// Bytes of the kernel's `struct RcPair { V v; C count; }`.
    fn pair_bytes(wide: bool) -> usize {
        let c = if wide { 8 } else { 4 };
        let align = VE::Item::C_ALIGN.max(c);
        (VE::Item::C_SIZE.next_multiple_of(c) + c).next_multiple_of(align)
    }

    /// Elements per chunk of `n` over waves of `wave` resident blocks:
    /// whole tiles, at most `REDUCE_FIT_RUN` times the records kept, the
    /// waves' blocks given equal shares.
    fn chunk_len(&self, n: u64, wave: u64) -> u64 {
        let tile = (REDUCE_BLOCK * self.items) as u64;
        #[allow(unused_mut)]
        let mut most = self.cap as u64 * REDUCE_FIT_RUN;
        #[cfg(feature = "bykey-tuning")]
        if let Some(m) = tuning::get().max_chunk {
            most = m;
        }
        let most = (most / tile).max(1) * tile;
        let waves = n.div_ceil(wave * most).max(1);
        n.div_ceil(waves * wave).div_ceil(tile) * tile
    }

    /// Writes each run's first key to `keys_out` and its aggregate (or
    /// length) to `values_out`, and the number of runs to `count_out`;
    /// or, with no `count_out`, reads it back (one small synchronous read)
    /// and returns it. `n >= 1`.
    pub fn run(&self, dev: &CudaDevice, keys_out: Ptr<KE::Item>, values_out: Ptr<O>, count_out: Option<Ptr<u64>>) -> Result<Option<u64>> {
        let n = self.keys.length() as u64;
        let wave = (dev.sm_count() * self.blocks_per_sm) as u64;
        let chunk = self.chunk_len(n, wave);
        let chunks = n.div_ceil(chunk);
        let chunks = u32::try_from(chunks)
            .map_err(|_| crate::Error::InvalidArgument(format!("reduce_by_key of {n} elements needs {chunks} chunks")))?;
        let module = dev.module(self)?;
        let mut layout = ScratchLayout::new();
        let lookback = Lookback::place(&mut layout, chunks as u64, Self::pair_bytes(self.wide));
        let slot = layout.uninit::<u64>(1);
        // SAFETY: matches `cuprim_reduce_chunks(const In0 keys, const In1 values, u64 n, u64 chunk, K* keys_out, O*
        // values_out, u64* count_out, u32* status, RcPair* aggregates, RcPair* prefixes, u32* ticket, u32 chunks)`,
        // In0 and In1 the structs whose fields the two ExprArgs hold: reads n keys (and n values, unless run
        // lengths), writes at most n keys and n values (one per run) and one count; look-back arrays of `chunks`
        // entries (status zeroed), the ticket left at zero.
        let entry: Entry<(
            ExprArgs,
            ExprArgs,
            u64,
            u64,
            Ptr<KE::Item>,
            Ptr<O>,
            Ptr<u64>,
            Ptr<u32>,
            Ptr<u8>,
            Ptr<u8>,
            Ptr<u32>,
            u32,
        )> = unsafe { Entry::declare("cuprim_reduce_chunks") };
        let ticket = dev.counter(Counter::ByKeyTile);
        dev.with_scratch(&layout, |s| {
            let (status, aggregates, prefixes) = lookback.args(&s);
            let count = count_out.unwrap_or(s.at(slot));
            launch_checked2(dev, self.keys, self.values, |k, v| {
                let args = (
                    k, v, n, chunk, keys_out, values_out, count, status, aggregates, prefixes, ticket, chunks,
                );
                dev.launch(&module, entry, Grid::new(chunks, REDUCE_BLOCK), args)
            })?;
            super::plan::count_or_read_back(dev, count_out, count)
        })
    }
}

impl<KE: Node, VE: Node, O: Value, Op: Monoid<VE::Item>, E: KeyEq<KE::Item>> Specialise for ReduceChunks<'_, KE, VE, O, Op, E>
where
    KE::Item: Element,
{
    fn template(&self) -> &'static Template {
        &REDUCE_CHUNKS
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_inputs(self.keys, "K", self.values, "V", w);
        w.value::<O>("O");
        w.typedef("C", if self.wide { "u64" } else { "u32" });
        self.eq.write(w);
        if !self.lengths {
            w.monoid::<VE::Item, Op>("ReduceOp", "V", self.op);
        }
        w.constant("RC_LENGTHS", self.lengths as i64);
        w.constant("RC_ITEMS", self.items as i64);
        w.constant("RC_CAP", self.cap as i64);
        w.constant("CUPRIM_BLOCK", REDUCE_BLOCK as i64);
        w.constant("CUPRIM_MIN_BLOCKS", self.blocks_per_sm as i64);
        w.constant("CUPRIM_DETERMINISTIC", self.deterministic as i64);
        w.constant("CUPRIM_LOOKBACK_WINDOWS", REDUCE_LOOKBACK_WINDOWS);
    }
}

/// Experiment hook of the `bykey-tuning` feature: the chunk length and
/// threshold of reduce_by_key / run_length_encode, reduce_by_key's two
/// passes and the tile kernel's shape, forced on the calls that follow on
/// this thread (benches/bykey.rs, benches/bykey_tune.rs). Not for
/// applications.
#[cfg(feature = "bykey-tuning")]
pub mod tuning {
    use std::cell::Cell;

    /// Overrides; `None` keeps the plan's.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Overrides {
        /// Most elements per chunk (rounded down to whole tiles, at least one).
        pub max_chunk: Option<u64>,
        /// Inputs of at least this many elements take the chunks.
        pub from: Option<usize>,
        /// reduce_by_key in two passes (`Some(true)`, before the chunks'
        /// threshold is asked) or never (`Some(false)`).
        pub two_pass: Option<bool>,
        /// The tile kernel's (threads, items, blocks per SM), one pass or two.
        pub shape: Option<(u32, u32, u32)>,
    }

    thread_local! {
        static OVERRIDES: Cell<Overrides> = const { Cell::new(Overrides { max_chunk: None, from: None, two_pass: None, shape: None }) };
    }

    /// This thread's overrides.
    pub fn get() -> Overrides {
        OVERRIDES.with(Cell::get)
    }

    /// Forces overrides on this thread's later calls.
    pub fn set(o: Overrides) {
        OVERRIDES.with(|x| x.set(o));
    }
}

/// The reduce_by_key modules by chunks of keys `KE` equal under `eq` and values `VE` (both
/// count widths; fast and deterministic where the values hold a float),
/// for precompile; none for values the chunks do not take.
pub(crate) fn reduce_chunk_specs<KE: Node, VE: Node, Op: Monoid<VE::Item>, E: KeyEq<KE::Item>>(
    keys: &KE,
    values: &VE,
    op: &Op,
    eq: E,
) -> Vec<KernelSpec>
where
    KE::Item: Element,
{
    let mut specs = Vec::new();
    if VE::Item::FIELDS != 1 || VE::Item::C_SIZE > 8 {
        return specs;
    }
    let dets: &[bool] = if VE::Item::HAS_FLOAT { &[false, true] } else { &[false] };
    for &det in dets {
        for len in [0, u32::MAX as usize + 1] {
            let plan = ReduceChunks::<KE, VE, VE::Item, Op, E>::new(keys, values, op, eq, false, len, det);
            specs.push(KernelSpec::of(&plan));
        }
    }
    specs
}

/// The run-length modules by chunks of keys `KE` (u32 and u64 lengths
/// below 2^32 elements, u64 above), for precompile.
pub(crate) fn length_chunk_specs<KE: Node>(keys: &KE) -> Vec<KernelSpec>
where
    KE::Item: Element,
{
    use super::plan::NotEqual;
    use crate::expr::Leaf;
    use crate::ops::Min;
    let (c32, c64) = (Leaf::<u32>::type_only(), Leaf::<u64>::type_only());
    vec![
        KernelSpec::of(&ReduceChunks::<KE, _, u32, Min, NotEqual>::new(
            keys, &c32, &Min, NotEqual, true, 0, false,
        )),
        KernelSpec::of(&ReduceChunks::<KE, _, u64, Min, NotEqual>::new(
            keys, &c32, &Min, NotEqual, true, 0, false,
        )),
        KernelSpec::of(&ReduceChunks::<KE, _, u64, Min, NotEqual>::new(
            keys,
            &c64,
            &Min,
            NotEqual,
            true,
            u32::MAX as usize + 1,
            false,
        )),
    ]
}
