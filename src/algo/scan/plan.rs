//! Plans and launches of the scan family: the single-pass scan
//! (`kernels/scan/scan.cu`) and scan_by_key (`kernels/scan/scan_by_key.cu`),
//! both chained through the decoupled look-back, and the two-pass scan of
//! inputs that stay in L2 (`kernels/scan/scan_two_pass.cu`).

use crate::algo::lookback::{two_passes_pay, Lookback, LOOKBACK};
use crate::device::{Counter, CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::expr::args::ExprArgs;
use crate::expr::node::{Leaf, Node};
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::ops::Monoid;
use crate::value::Value;

template!(SCAN, "scan/scan.cu", ["cuprim_scan"], headers: [LOOKBACK, SCAN_TILE]);
template!(SCAN_TWO_PASS, "scan/scan_two_pass.cu", ["cuprim_scan_partials", "cuprim_scan_apply"], headers: [LOOKBACK, SCAN_TILE]);

/// The tile (shape, loads, per-thread scan, stores) both scan kernels share.
pub(crate) const SCAN_TILE: &str = crate::jit::header!("scan/scan_tile.cuh");
template!(SCAN_BY_KEY, "scan/scan_by_key.cu", ["cuprim_scan_by_key"], headers: [LOOKBACK, SBK_COMMON]);

/// The staging, pairs and store both scan_by_key kernels share.
pub(crate) const SBK_COMMON: &str = crate::jit::header!("scan/scan_by_key.cuh");

/// Bytes of the kernels' `SegPair { T v; u32 head; }` (at most 16).
pub(crate) fn seg_pair_bytes<T>() -> usize {
    (std::mem::size_of::<T>() + 4).next_multiple_of(std::mem::align_of::<T>().max(4))
}

/// Tile shape of a single-pass (look-back) kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TilePolicy {
    /// Threads per block.
    pub block: u32,
    /// Consecutive elements per thread (a tile is `block * items`).
    pub items: u32,
    /// Resident blocks per SM the kernel is compiled for (`__launch_bounds__`).
    pub min_blocks: u32,
}

impl TilePolicy {
    /// Elements per tile.
    pub fn tile(&self) -> u64 {
        self.block as u64 * self.items as u64
    }

    /// Tiles for `len` elements, one block each: at most 2^32.
    pub fn tiles(&self, op: &str, len: usize) -> Result<u32> {
        u32::try_from((len as u64).div_ceil(self.tile()))
            .map_err(|_| Error::InvalidArgument(format!("{op} of {len} elements needs more than 2^32 tiles")))
    }

    /// The shape's constants.
    pub fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_BLOCK", self.block as i64);
        w.constant("CUPRIM_ITEMS", self.items as i64);
        w.constant("CUPRIM_MIN_BLOCKS", self.min_blocks as i64);
    }
}

/// Scan tiles by element size.
pub(crate) fn scan_policy(_arch: u32, elem_bytes: usize) -> TilePolicy {
    match elem_bytes {
        // f64 inclusive 2^28: 1.603 ms, CUB 1.700 (H100, run 28eb346).
        8.. => TilePolicy {
            block: 256,
            items: 12,
            min_blocks: 1,
        },
        // 2^22 f32 / u32 23.6-23.9 / 20.5-22.1 us against 24.2-26.0 / 21.2-23.1 for 256x24@8, CUB 24.3-25.0 / 23.6-26.6;
        // 28 items at 6 blocks spill (H100, benchmarks/runs/i23-scan28-2f0bc61).
        4 => TilePolicy {
            block: 256,
            items: 28,
            min_blocks: 7,
        },
        // 1 and 2 bytes: a whole number of 16-byte vectors per thread (not separately tuned).
        _ => TilePolicy {
            block: 256,
            items: 32,
            min_blocks: 1,
        },
    }
}

/// Scan tiles of tuple values (the unzipped scans), by size. Not measured: shapes whose
/// static shared memory (the tile, the deterministic look-back's 512 staged values, the warp
/// totals) stays within 48 KiB, as by_key's tiles for values over 8 bytes.
pub(crate) fn tuple_scan_policy(arch: u32, bytes: usize) -> TilePolicy {
    let shape = |block, items, min_blocks| TilePolicy { block, items, min_blocks };
    match bytes {
        // 24 bytes, the largest tuple: 1024-element tiles, 24 + 12 KiB (NVRTC sm_80 / sm_90: no spills at 2 blocks per SM).
        17.. => shape(128, 8, 2),
        // 12 and 16 bytes: 2048-element tiles, 24 + 6 or 32 + 8 KiB.
        9..=16 => shape(256, 8, 1),
        // 3 and 6 bytes (one value at a time): f64's shape; 256 x 32 took 116 to 184 registers at 3 bytes
        // and would be 48 KiB at 6.
        3 | 5..=7 => shape(256, 12, 1),
        // 2, 4 and 8 bytes: the elements' shape, at most 4 blocks per SM (room for the fields' registers).
        _ => {
            let p = scan_policy(arch, bytes);
            shape(p.block, p.items, p.min_blocks.min(4))
        }
    }
}

/// scan_by_key tiles: (head, value) pairs, fewer per thread than a plain scan (12 pairs of 8-byte values spill).
pub(crate) fn scan_by_key_policy(_arch: u32, elem_bytes: usize, len: usize) -> TilePolicy {
    // Up to 2^22 elements: 256 x 16, 14.8 / 17.3 us at 2^20 (u8 / u32; runs of 64, f32) against
    // 21.4 / 25.4 for 128 x 24 (CUB 20.5 / 16.9; H100, runs dcb59fe and 9ea88b8).
    if elem_bytes >= 8 || len <= 1 << 22 {
        return TilePolicy {
            block: 256,
            items: if elem_bytes >= 8 { 8 } else { 16 },
            min_blocks: 1,
        };
    }
    // Best of ten shapes at 2^24 and 2^28, u32 keys in runs of 64 with f32 values: 1.414 ms at 2^28
    // against 1.623 for 256x16 (CUB 1.199); u8 keys with u32 values 1.114 ms (CUB 1.010) (H100, lab sweep at ab79345+).
    TilePolicy {
        block: 128,
        items: 24,
        min_blocks: 4,
    }
}

/// Windows of 32 predecessors the deterministic look-back stages in shared memory at a time:
/// 16 measured 0.893 ms against 1.290 for 8 (f32 inclusive 2^28, H100, run e62df8c).
pub(crate) const LOOKBACK_WINDOWS: i64 = 16;

/// One specialisation of `kernels/scan/scan.cu`, reading an input
/// expression (a plain buffer being the simplest) of elements, or of
/// tuples whose scan is written unzipped (one array per field).
pub(crate) struct Scan<'a, E, Op> {
    pub policy: TilePolicy,
    /// The tiles of the two-pass form (`kernels/scan/scan_two_pass.cu`).
    two_pass: TilePolicy,
    pub input: &'a E,
    pub op: &'a Op,
    /// Tiles chain their prefixes in a fixed order (float results bit-identical run to run).
    pub deterministic: bool,
    /// `CUPRIM_SCAN_UNZIP`: 0 for one output array (elements), else the tuple's fields.
    unzip: u8,
}

impl<'a, E: Node, Op: Monoid<E::Item>> Scan<'a, E, Op> {
    /// The specialisation for `input`: an element scan, or for a tuple
    /// item the unzipped scan.
    pub fn new(arch: u32, input: &'a E, op: &'a Op, deterministic: bool) -> Self {
        let bytes = <E::Item as Value>::C_SIZE;
        let unzip = if <E::Item as Value>::FIELDS > 1 {
            <E::Item as Value>::FIELDS
        } else {
            0
        };
        let base = if unzip > 0 {
            tuple_scan_policy(arch, bytes)
        } else {
            scan_policy(arch, bytes)
        };
        // The exact look-back holds 8-byte elements in 32 registers: 8 blocks of 256 x 12 per SM, u64
        // 2^24 / 2^27 95.3 / 636 us against 102.4 / 686 at the 6 the register count allowed (CUB 90.9 /
        // 625; H200, benchmarks/runs/h200-types-86b23d5). The deterministic look-back spills there.
        let exact = if unzip == 0 && bytes >= 8 {
            TilePolicy { min_blocks: 8, ..base }
        } else {
            base
        };
        let mut policy = if deterministic { base } else { exact };
        // The two passes look back at nothing: the exact look-back's tiles, deterministic or not, fewer
        // blocks per SM (the partials' loads in flight beside the tile's spilled 40-56 bytes at 32 registers;
        // 256 x 28 at 6 still 8 on sm_90, NVRTC 13). 4 bytes: 256 x 28 at 5, f32 into a buffer at 2^22
        // 17.3 us against 20.1 for 256 x 24 at 6 (H200, benchmarks/runs/h200-scan-two-pass).
        let mut two_pass = TilePolicy {
            min_blocks: if bytes == 4 { 5 } else { exact.min_blocks.min(6) },
            ..exact
        };
        if E::STREAMS > 1 {
            // Several buffers' loads in flight need more than the 32 registers of 8 blocks per SM (4 bytes spilled);
            // beside the partials' loads, f32 `zip(a, b).map(Mul)` spilled 28 bytes at 4 on sm_90 (NVRTC 13).
            policy.min_blocks = policy.min_blocks.min(4);
            two_pass.min_blocks = two_pass.min_blocks.min(3);
        }
        #[cfg(feature = "scan-tuning")]
        if let Some((block, items, min_blocks)) = tuning::get() {
            policy = TilePolicy { block, items, min_blocks };
            two_pass = policy;
        }
        Scan {
            policy,
            two_pass,
            input,
            op,
            deterministic,
            unzip,
        }
    }

    /// Whether the two passes serve some lengths of this scan: elements (not tuples) of 4 or 8 bytes,
    /// the sizes measured.
    fn has_two_passes(&self) -> bool {
        self.unzip == 0 && matches!(<E::Item as Value>::C_SIZE, 4 | 8)
    }

    /// Whether `len` elements take the two passes (`kernels/scan/scan_two_pass.cu`): see
    /// [`two_passes_pay`].
    fn takes_two_passes(&self, dev: &CudaDevice, len: usize) -> bool {
        if !self.has_two_passes() {
            return false;
        }
        #[cfg(feature = "scan-tuning")]
        if let Some(force) = tuning::two_pass() {
            return force;
        }
        two_passes_pay(dev.l2_bytes(), len, <E::Item as Value>::C_SIZE)
    }

    /// The tiles of the input and the look-back scratch for them.
    fn layout(&self, len: usize) -> Result<(u32, ScratchLayout, Lookback)> {
        let tiles = self.policy.tiles("scan", len)?;
        let mut layout = ScratchLayout::new();
        let lookback = Lookback::place_lone_tile_unzeroed(&mut layout, tiles as u64, <E::Item as Value>::C_SIZE);
        Ok((tiles, layout, lookback))
    }

    /// Scans the input into `dst` (which may be the input's own buffer: a
    /// tile reads all of its input before it writes, and no tile reads
    /// another tile's elements).
    /// With a non-null `seed` (one element on the device) the scan starts
    /// from it: `dst[i] = seed op x[0] op ... op x[i]` (inclusive).
    pub fn run(&self, dev: &CudaDevice, dst: Ptr<E::Item>, exclusive: bool, seed: Ptr<E::Item>) -> Result<()>
    where
        E::Item: Element,
    {
        let len = self.input.length();
        if len == 0 {
            return Ok(());
        }
        if self.takes_two_passes(dev, len) {
            return self.run_two_pass(dev, dst, exclusive, seed);
        }
        let (tiles, layout, lookback) = self.layout(len)?;
        let module = dev.module(self)?;
        // SAFETY: matches `cuprim_scan(const In in, T* out, u64 n, int exclusive, u32* status,
        // T* aggregates, T* prefixes, u32* tile_counter, u32 num_tiles, const T* seed)`, `In` being
        // the struct whose fields ExprArgs holds: one block per tile over n elements of in and out,
        // look-back arrays of num_tiles entries, the counter left at zero, seed null or one element.
        let entry: Entry<(
            ExprArgs,
            Ptr<E::Item>,
            u64,
            i32,
            Ptr<u32>,
            Ptr<u8>,
            Ptr<u8>,
            Ptr<u32>,
            u32,
            Ptr<E::Item>,
        )> = unsafe { Entry::declare("cuprim_scan") };
        let counter = dev.counter(Counter::ScanTile);
        dev.with_scratch(&layout, |s| {
            let (status, aggregates, prefixes) = lookback.args(&s);
            crate::expr::consume::launch_checked(dev, self.input, |input| {
                let args = (
                    input,
                    dst,
                    len as u64,
                    exclusive as i32,
                    status,
                    aggregates,
                    prefixes,
                    counter,
                    tiles,
                    seed,
                );
                dev.launch(&module, entry, Grid::new(tiles, self.policy.block), args)
            })
        })
    }

    /// [`run`](Self::run) in two passes: the fold of each tile, then each
    /// tile scanned from the fold of the partials before it.
    fn run_two_pass(&self, dev: &CudaDevice, dst: Ptr<E::Item>, exclusive: bool, seed: Ptr<E::Item>) -> Result<()> {
        let len = self.input.length();
        let tiles = self.two_pass.tiles("scan", len)?;
        let plan = TwoPass(self);
        let module = dev.module(&plan)?;
        let mut layout = ScratchLayout::new();
        let partials = layout.uninit::<u8>(tiles as u64 * <E::Item as Value>::C_SIZE as u64);
        // SAFETY: matches `cuprim_scan_partials(const In in, u64 n, T* partials)`, `In` the struct whose
        // fields ExprArgs holds: one block per tile over n elements, partials of num_tiles elements.
        let reduce: Entry<(ExprArgs, u64, Ptr<u8>)> = unsafe { Entry::declare("cuprim_scan_partials") };
        // SAFETY: matches `cuprim_scan_apply(const In in, T* out, u64 n, int exclusive, const T* partials,
        // const T* seed)`: the same tiles over n elements of in and out, the partials the first launch
        // wrote, seed null or one element.
        let apply: Entry<(ExprArgs, Ptr<E::Item>, u64, i32, Ptr<u8>, Ptr<E::Item>)> = unsafe { Entry::declare("cuprim_scan_apply") };
        let grid = Grid::new(tiles, self.two_pass.block);
        dev.with_scratch(&layout, |s| {
            let partials = s.at(partials);
            crate::expr::consume::launch_checked(dev, self.input, |input| {
                dev.launch(&module, reduce, grid, (input, len as u64, partials))?;
                let args = (input, dst, len as u64, exclusive as i32, partials, seed);
                // SAFETY: every block of cuprim_scan_apply calls cuprim_grid_wait() before it reads the
                // partials or the seed and before any store. Before it the block reads only the input,
                // which the one kernel that may still run (cuprim_scan_partials, a plain launch: all
                // work queued before it has ended) reads and does not write; it may set the
                // expression's bad-index flag, as cuprim_scan_partials may.
                unsafe { dev.launch_dependent(&module, apply, grid, args) }
            })
        })
    }

    /// Scans a tuple input, each field to its own array: `outs` holds one
    /// device address per field (the third null for a pair), each array as
    /// long as the input.
    pub fn run_unzip(&self, dev: &CudaDevice, outs: [u64; 3], exclusive: bool) -> Result<()> {
        let len = self.input.length();
        if len == 0 {
            return Ok(());
        }
        if self.unzip == 0 {
            return Err(Error::Unsupported("an unzipped scan of elements (not tuples)".into()));
        }
        let (tiles, layout, lookback) = self.layout(len)?;
        let module = dev.module(self)?;
        // SAFETY: matches the unzipping `cuprim_scan(const In in, void* out0, void* out1, void* out2,
        // u64 n, int exclusive, u32* status, T* aggregates, T* prefixes, u32* tile_counter,
        // u32 num_tiles, const T* seed)` (CUPRIM_SCAN_UNZIP set, as for every tuple item), `In` the
        // struct whose fields ExprArgs holds: one block per tile over n elements, each field of T to
        // its out array of n (out2 unused for a pair), look-back arrays of num_tiles entries, the
        // counter left at zero, seed null.
        let entry: Entry<(
            ExprArgs,
            Ptr<u8>,
            Ptr<u8>,
            Ptr<u8>,
            u64,
            i32,
            Ptr<u32>,
            Ptr<u8>,
            Ptr<u8>,
            Ptr<u32>,
            u32,
            Ptr<u8>,
        )> = unsafe { Entry::declare("cuprim_scan") };
        let counter = dev.counter(Counter::ScanTile);
        let [o0, o1, o2] = outs.map(Ptr::<u8>::from_raw);
        dev.with_scratch(&layout, |s| {
            let (status, aggregates, prefixes) = lookback.args(&s);
            crate::expr::consume::launch_checked(dev, self.input, |input| {
                let args = (
                    input,
                    o0,
                    o1,
                    o2,
                    len as u64,
                    exclusive as i32,
                    status,
                    aggregates,
                    prefixes,
                    counter,
                    tiles,
                    Ptr::null(),
                );
                dev.launch(&module, entry, Grid::new(tiles, self.policy.block), args)
            })
        })
    }
}

impl<E: Node, Op: Monoid<E::Item>> Specialise for Scan<'_, E, Op> {
    fn template(&self) -> &'static Template {
        &SCAN
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        self.policy.write(w);
        w.constant("CUPRIM_DETERMINISTIC", self.deterministic as i64);
        w.constant("CUPRIM_LOOKBACK_WINDOWS", LOOKBACK_WINDOWS);
        // Defined only for tuples, so the element scans keep their text.
        if self.unzip > 0 {
            w.constant("CUPRIM_SCAN_UNZIP", self.unzip as i64);
        }
        crate::expr::consume::write_input(self.input, w);
        w.monoid::<E::Item, Op>("ScanOp", "T", self.op);
    }
}

/// The two-pass form of a [`Scan`] (`kernels/scan/scan_two_pass.cu`): one
/// module whether the scan is deterministic or not (both give the same bits).
pub(crate) struct TwoPass<'s, 'a, E, Op>(&'s Scan<'a, E, Op>);

impl<E: Node, Op: Monoid<E::Item>> Specialise for TwoPass<'_, '_, E, Op> {
    fn template(&self) -> &'static Template {
        &SCAN_TWO_PASS
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        self.0.two_pass.write(w);
        crate::expr::consume::write_input(self.0.input, w);
        w.monoid::<E::Item, Op>("ScanOp", "T", self.0.op);
    }
}

/// One specialisation of `kernels/scan/scan_by_key.cu`: keys and values
/// are input expressions (plain buffers being the simplest).
pub(crate) struct ScanByKey<'a, KE, VE, Op> {
    pub policy: TilePolicy,
    pub keys: &'a KE,
    pub values: &'a VE,
    pub op: &'a Op,
    pub deterministic: bool,
}

impl<'a, KE: Node, VE: Node, Op: Monoid<VE::Item>> ScanByKey<'a, KE, VE, Op>
where
    KE::Item: Element,
    VE::Item: Element,
{
    /// The specialisation for `len` elements (the tile shape depends on the size).
    pub fn new(arch: u32, keys: &'a KE, values: &'a VE, op: &'a Op, deterministic: bool, len: usize) -> Self {
        ScanByKey {
            policy: scan_by_key_policy(arch, std::mem::size_of::<VE::Item>().max(std::mem::size_of::<KE::Item>()), len),
            keys,
            values,
            op,
            deterministic,
        }
    }

    /// Segmented inclusive scan of the values to `out`, restarting where the
    /// key changes. Inputs that permute are bounds-checked (the call then
    /// waits for the GPU).
    pub fn run(&self, dev: &CudaDevice, out: Ptr<VE::Item>) -> Result<()> {
        let len = self.values.length();
        if len == 0 {
            return Ok(());
        }
        let tiles = self.policy.tiles("scan_by_key", len)?;
        let module = dev.module(self)?;
        let mut layout = ScratchLayout::new();
        let lookback = Lookback::place(&mut layout, tiles as u64, seg_pair_bytes::<VE::Item>());
        // SAFETY: matches `cuprim_scan_by_key(const In0 keys, const In1 values, T* out, u64 n,
        // u32* status, SegPair* aggregates, SegPair* prefixes, u32* tile_counter, u32 num_tiles)`, In0 and
        // In1 the structs whose fields the two ExprArgs hold: one block per tile over n elements, look-back
        // arrays of num_tiles pairs, counter left at zero.
        let entry: Entry<(ExprArgs, ExprArgs, Ptr<VE::Item>, u64, Ptr<u32>, Ptr<u8>, Ptr<u8>, Ptr<u32>, u32)> =
            unsafe { Entry::declare("cuprim_scan_by_key") };
        let counter = dev.counter(Counter::ScanByKeyTile);
        dev.with_scratch(&layout, |s| {
            let (status, aggregates, prefixes) = lookback.args(&s);
            crate::expr::consume::launch_checked2(dev, self.keys, self.values, |k, v| {
                let args = (k, v, out, len as u64, status, aggregates, prefixes, counter, tiles);
                dev.launch(&module, entry, Grid::new(tiles, self.policy.block), args)
            })
        })
    }
}

impl<KE: Node, VE: Node, Op: Monoid<VE::Item>> Specialise for ScanByKey<'_, KE, VE, Op>
where
    KE::Item: Element,
    VE::Item: Element,
{
    fn template(&self) -> &'static Template {
        &SCAN_BY_KEY
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        self.policy.write(w);
        w.constant("CUPRIM_DETERMINISTIC", self.deterministic as i64);
        w.constant("CUPRIM_LOOKBACK_WINDOWS", LOOKBACK_WINDOWS);
        crate::expr::consume::write_inputs(self.keys, "K", self.values, "T", w);
        w.monoid::<VE::Item, Op>("ScanOp", "T", self.op);
    }
}

/// The scan modules of `T` and `op` (fast, deterministic, two-pass), for precompile.
pub(crate) fn scan_specs<T: Element, Op: Monoid<T>>(arch: u32, op: &Op) -> Vec<KernelSpec> {
    scan_specs_of(arch, &Leaf::<T>::type_only(), op)
}

/// The scan modules of an input expression and `op`, for precompile: the
/// single-pass scan, fast and deterministic, and the two passes where some length takes them.
pub(crate) fn scan_specs_of<E: Node, Op: Monoid<E::Item>>(arch: u32, input: &E, op: &Op) -> Vec<KernelSpec> {
    let fast = Scan::new(arch, input, op, false);
    let mut specs = vec![KernelSpec::of(&fast), KernelSpec::of(&Scan::new(arch, input, op, true))];
    if fast.has_two_passes() {
        specs.push(KernelSpec::of(&TwoPass(&fast)));
    }
    specs
}

/// Both scan_by_key modules of keys `K`, values `T` and `op`, for precompile.
pub(crate) fn scan_by_key_specs<K: Element, T: Element, Op: Monoid<T>>(arch: u32, op: &Op) -> Vec<KernelSpec> {
    scan_by_key_specs_of(arch, &Leaf::<K>::type_only(), &Leaf::<T>::type_only(), op)
}

/// The scan_by_key modules of key and value expressions and `op`, for precompile.
pub(crate) fn scan_by_key_specs_of<KE: Node, VE: Node, Op: Monoid<VE::Item>>(arch: u32, keys: &KE, values: &VE, op: &Op) -> Vec<KernelSpec>
where
    KE::Item: Element,
    VE::Item: Element,
{
    vec![
        // Both tile shapes (small and large inputs), fast and deterministic.
        KernelSpec::of(&ScanByKey::new(arch, keys, values, op, false, 0)),
        KernelSpec::of(&ScanByKey::new(arch, keys, values, op, true, 0)),
        KernelSpec::of(&ScanByKey::new(arch, keys, values, op, false, usize::MAX)),
        KernelSpec::of(&ScanByKey::new(arch, keys, values, op, true, usize::MAX)),
        // The chunks of long inputs.
        KernelSpec::of(&super::chunks::ScanByKeyChunks::new(keys, values, op, false)),
        KernelSpec::of(&super::chunks::ScanByKeyChunks::new(keys, values, op, true)),
    ]
}

/// Experiment hooks of the `scan-tuning` feature: a tile shape forced on
/// the scans that follow on this thread (benches/scan_tune.rs), the
/// shape, chunk length and threshold of scan_by_key's chunks, and the size
/// from which copy_if takes its bulk-copy tiles. Not for applications.
#[cfg(feature = "scan-tuning")]
pub mod tuning {
    use super::TilePolicy;
    use std::cell::Cell;

    thread_local! {
        static SHAPE: Cell<Option<(u32, u32, u32)>> = const { Cell::new(None) };
        static CHUNKS: Cell<Option<Chunks>> = const { Cell::new(None) };
        static SELECT_BULK_OVER: Cell<Option<usize>> = const { Cell::new(None) };
        static TWO_PASS: Cell<Option<bool>> = const { Cell::new(None) };
        static SELECT_TWO_PASS: Cell<Option<bool>> = const { Cell::new(None) };
    }

    /// Makes this thread's later copy_if, partition and unique calls of 4- or 8-byte elements take
    /// the two passes (`Some(true)`) or the single pass (`Some(false)`) at every length; `None` keeps
    /// the size band of `algo/select/plan.rs`.
    pub fn set_select_two_pass(force: Option<bool>) {
        SELECT_TWO_PASS.with(|c| c.set(force));
    }

    /// This thread's forced choice of the select's two passes.
    pub(crate) fn select_two_pass() -> Option<bool> {
        SELECT_TWO_PASS.with(Cell::get)
    }

    /// Makes this thread's later element scans take the two passes (`Some(true)`) or the
    /// single pass (`Some(false)`) at every length; `None` keeps the size band of `algo/scan/plan.rs`.
    pub fn set_two_pass(force: Option<bool>) {
        TWO_PASS.with(|c| c.set(force));
    }

    /// This thread's forced choice of the two passes.
    pub(crate) fn two_pass() -> Option<bool> {
        TWO_PASS.with(Cell::get)
    }

    /// Makes this thread's later copy_if calls take the bulk-copy tiles (sm_90, plain buffers)
    /// for inputs of more than `bytes`, whatever their length; `None` keeps the thresholds of
    /// `algo/select/plan.rs`.
    pub fn set_select_bulk_over(bytes: Option<usize>) {
        SELECT_BULK_OVER.with(|c| c.set(bytes));
    }

    /// This thread's forced copy_if bulk threshold.
    pub(crate) fn select_bulk_over() -> Option<usize> {
        SELECT_BULK_OVER.with(Cell::get)
    }

    /// This thread's forced (block, items, min_blocks); `None` keeps the policy's.
    pub fn get() -> Option<(u32, u32, u32)> {
        SHAPE.with(Cell::get)
    }

    /// Forces a shape on this thread's later scans.
    pub fn set(shape: Option<(u32, u32, u32)>) {
        SHAPE.with(|c| c.set(shape));
    }

    /// What scan_by_key's chunks take from the overrides; each `None`
    /// keeps the constant of `algo/scan/chunks.rs`.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Chunks {
        /// (block, items, min_blocks) of the chunk kernel.
        pub shape: Option<(u32, u32, u32)>,
        /// Elements per chunk (rounded up to whole tiles).
        pub chunk: Option<u64>,
        /// The least input length that takes the chunks (`usize::MAX`: never).
        pub from: Option<usize>,
    }

    /// Forces scan_by_key's chunk constants on this thread's later calls.
    pub fn set_chunks(chunks: Option<Chunks>) {
        CHUNKS.with(|c| c.set(chunks));
    }

    /// The chunk constants `(policy, chunk, from)` under this thread's overrides.
    pub(crate) fn chunks_over(base: (TilePolicy, u64, usize)) -> (TilePolicy, u64, usize) {
        let Some(t) = CHUNKS.with(Cell::get) else { return base };
        let policy = t
            .shape
            .map_or(base.0, |(block, items, min_blocks)| TilePolicy { block, items, min_blocks });
        (policy, t.chunk.unwrap_or(base.1), t.from.unwrap_or(base.2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{Add, Associative, BinaryOp};

    #[derive(Clone, Copy)]
    struct PairSum;
    impl BinaryOp<(u32, f32)> for PairSum {
        fn apply(&self, a: (u32, f32), b: (u32, f32)) -> (u32, f32) {
            (a.0 + b.0, a.1 + b.1)
        }
        fn cuda_expr(&self) -> String {
            "cuprim_t2<unsigned int, float>{a.a0 + b.a0, a.a1 + b.a1}".into()
        }
    }
    impl Associative for PairSum {}
    impl Monoid<(u32, f32)> for PairSum {
        fn identity(&self) -> (u32, f32) {
            (0, 0.0)
        }
    }

    /// The element scans' generated declarations are those from before
    /// tuple scans (no CUPRIM_SCAN_UNZIP), so their modules and cache
    /// entries are the same; a tuple scan adds the define and its own
    /// tile shape.
    #[test]
    fn specialisations_unchanged() {
        let specs = scan_specs::<f32, Add>(90, &Add);
        let keys: Vec<&str> = specs.iter().map(|s| s.key()).collect();
        let head = "// template: scan/scan.cu\n#define CUPRIM_BLOCK 256\n#define CUPRIM_ITEMS 28\n#define CUPRIM_MIN_BLOCKS 7\n";
        let tail =
            "#define CUPRIM_LOOKBACK_WINDOWS 16\ntypedef cuprim_x_buf<float> cuprim_e0;\ntypedef cuprim_e0 In;\ntypedef In::item T;\n";
        for (key, det) in keys.iter().zip([0, 1]) {
            let want = format!("{head}#define CUPRIM_DETERMINISTIC {det}\n{tail}");
            assert!(key.starts_with(&want), "{key}");
            assert!(!key.contains("CUPRIM_SCAN_UNZIP"), "{key}");
        }
        // 8 bytes: 8 blocks per SM with the exact look-back, as many as the registers allow with the deterministic one.
        let f64s = scan_specs::<f64, Add>(80, &Add);
        assert!(f64s[0]
            .key()
            .contains("#define CUPRIM_ITEMS 12\n#define CUPRIM_MIN_BLOCKS 8\n#define CUPRIM_DETERMINISTIC 0\n"));
        assert!(f64s[1]
            .key()
            .contains("#define CUPRIM_ITEMS 12\n#define CUPRIM_MIN_BLOCKS 1\n#define CUPRIM_DETERMINISTIC 1\n"));

        let (a, b) = (Leaf::<u32>::type_only(), Leaf::<f32>::type_only());
        let zip = crate::expr::zip(a, b);
        let key = KernelSpec::of(&Scan::new(90, &zip, &PairSum, false)).key().to_string();
        assert!(key.contains("#define CUPRIM_SCAN_UNZIP 2\n"), "{key}");
        // 8 bytes: f64's shape, at most 4 blocks per SM.
        assert!(
            key.contains("#define CUPRIM_BLOCK 256\n#define CUPRIM_ITEMS 12\n#define CUPRIM_MIN_BLOCKS 1\n"),
            "{key}"
        );
    }

    /// Tuple tiles keep the static shared memory (tile, deterministic
    /// staging of 512 values, warp totals) within 48 KiB for every size a
    /// tuple of elements can have, and give whole 16-byte vectors per thread
    /// where the size divides 16.
    #[test]
    fn tuple_tiles_fit_static_shared_memory() {
        for bytes in [2usize, 3, 4, 6, 8, 12, 16, 24] {
            let p = tuple_scan_policy(90, bytes);
            let smem = (p.tile() as usize + 512 + p.block as usize / 32 + 1) * bytes + 4;
            assert!(smem <= 48 * 1024, "{bytes} bytes: {p:?} needs {smem}");
            if 16 % bytes == 0 {
                assert_eq!(p.items as usize % (16 / bytes), 0, "{bytes} bytes: {p:?}");
            }
        }
    }
}
