//! Plan and launch of `kernels/bykey/by_key.cu`: one pass over the keys
//! (and values) that finds the runs of equal consecutive keys and writes
//! one output per run, chaining tiles through the decoupled look-back over
//! head counts (unique) or (head count, segmented value) pairs (reduce,
//! run lengths); or, for inputs L2 holds, two passes: each tile's count or
//! pair, then each tile from the fold of those before it.

use crate::algo::lookback::{Lookback, LOOKBACK};
use crate::algo::scan::plan::{TilePolicy, LOOKBACK_WINDOWS};
use crate::cmp::Comparator;
use crate::device::{Counter, CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::Result;
use crate::expr::args::ExprArgs;
use crate::expr::consume::{launch_checked2, write_inputs};
use crate::expr::node::Node;
use crate::expr::Leaf;
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::ops::{Min, Monoid};
use crate::value::Value;
use std::marker::PhantomData;

template!(BY_KEY, "bykey/by_key.cu", ["cuprim_by_key"], headers: [LOOKBACK]);
template!(BY_KEY_TWO_PASS, "bykey/by_key.cu", ["cuprim_by_key_partials", "cuprim_by_key"], headers: [LOOKBACK]);

/// What one launch computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The number of runs only.
    Count,
    /// The first key and the first value of each run.
    UniqueByKey,
    /// The first key and the fold of the values of each run.
    Reduce,
    /// The first key and the length of each run.
    Lengths,
}

impl Mode {
    /// `CUPRIM_BYKEY_VALUES`: 0 none, 1 first value, 2 reduce, 3 lengths.
    fn values(self) -> i64 {
        match self {
            Mode::Count => 0,
            Mode::UniqueByKey => 1,
            Mode::Reduce => 2,
            Mode::Lengths => 3,
        }
    }

    /// Scans (head count, value) pairs rather than head counts alone.
    fn segmented(self) -> bool {
        matches!(self, Mode::Reduce | Mode::Lengths)
    }
}

/// When two neighbouring keys belong to different runs.
pub(crate) trait KeyEq<K: Element>: Copy + Send + Sync + 'static {
    /// True when `b` (after `a`) starts a new run.
    fn differ(&self, a: K, b: K) -> bool;
    /// `struct KeyEq { static bool differ(K a, K b); }` for the kernel.
    fn write<W: SpecWriter>(&self, w: &mut W);
}

/// `a != b`: every NaN is its own run, `-0.0` continues a run of `0.0`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NotEqual;

impl<K: Element> KeyEq<K> for NotEqual {
    fn differ(&self, a: K, b: K) -> bool {
        a != b
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.text("struct KeyEq { __device__ __forceinline__ static bool differ(K a, K b) { return a != b; } };");
    }
}

/// Equal when neither comes before the other under a [`Comparator`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Equivalent<C>(pub C);

impl<K: Element, C: Comparator<K>> KeyEq<K> for Equivalent<C> {
    fn differ(&self, a: K, b: K) -> bool {
        self.0.less(a, b) || self.0.less(b, a)
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.comparator::<K, C>("KeyLess", "K", &self.0);
        w.text(
            "struct KeyEq { __device__ __forceinline__ static bool differ(K a, K b) { return KeyLess::less(a, b) || KeyLess::less(b, a); } };",
        );
    }
}

/// The monoid of a mode that folds nothing (never written to the kernel):
/// any value type, tuples included.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unused;

impl<V: Value> crate::ops::BinaryOp<V> for Unused {
    fn apply(&self, a: V, _: V) -> V {
        a
    }
    fn cuda_expr(&self) -> String {
        "a".into()
    }
}
impl crate::ops::Associative for Unused {}
impl<V: Value> Monoid<V> for Unused {
    fn identity(&self) -> V {
        V::read_c(&[0u8; 64][..V::C_SIZE])
    }
}

/// Tile shapes of `len` elements, from a sweep of six shapes per mode at 2^24 and 2^28 (H100,
/// u32 keys in runs of 64, f32 values; lab run at 9ea88b8+), and for reduce_by_key below 2^21
/// from `benchmarks/runs/h200-bykey-two-pass/`. 8-byte keys or values and 1- or 2-byte counted
/// keys: not separately measured (the largest without spills in the NVRTC sm_90 report).
pub(crate) fn by_key_policy(_arch: u32, mode: Mode, key_bytes: usize, value_bytes: usize, len: usize) -> TilePolicy {
    let widest = key_bytes.max(value_bytes);
    let shape = |block, items, min_blocks| TilePolicy { block, items, min_blocks };
    match (mode, widest) {
        // Tuple values over 8 bytes: 1024 items, so keys and values staged for a tile fit in
        // 48 KiB of static shared memory (NVRTC sm_80 / sm_90 report; not separately measured).
        (_, 9..) => shape(128, 8, 2),
        (Mode::Reduce | Mode::Lengths, 8..) => shape(256, 8, 1),
        // H200, u32 keys in runs of 1 / 4 / 64 / 1024, f32 values: 2^19 12.5 / 13.0 / 12.1 / 12.2 us
        // against 16.3 / 13.8 / 14.2 / 13.9 for 128x32, 2^20 14.6 / 13.9 / 13.6 / 13.8 against
        // 16.2 / 15.1 / 15.2 / 14.9.
        (Mode::Reduce, _) if len < 1 << 21 => shape(256, 16, 3),
        // reduce_by_key 2^28: 1.229 ms against 1.325 for 256x16 and 1.293 for 128x24.
        (Mode::Reduce, _) => shape(128, 32, 4),
        // run lengths 2^28: 0.828 ms against 0.900 for 256x16 and 0.848 for 128x32.
        (Mode::Lengths, _) => shape(128, 24, 4),
        (_, 8..) => shape(128, 12, 4),
        // unique 2^28 (when it took this kernel): 0.695 ms against 0.830 for 128x24 (copy_if's) and 0.699 for 256x24.
        (Mode::Count, 4) => shape(256, 32, 3),
        // unique_by_key: copy_if's shape (its values' shared memory does not fit beside 256x32 keys).
        (_, 4) => shape(128, 24, 4),
        _ => shape(128, 32, 4),
    }
}

/// Tile shapes of the two passes, by the widest of key and value: H200,
/// `benchmarks/runs/h200-bykey-two-pass/`, u32 keys in runs of 1 / 4 / 64 /
/// 1024 with f32 values at 2^22: 37.6 / 29.5 / 28.1 / 28.7 us against
/// 41.7 / 33.4 / 31.7 / 31.9 for 128x16 at 6 blocks per SM and 41.4 / 30.7
/// / 27.7 / 28.4 for 128x32 at 4; u64 keys in runs of 4 with f64 values at
/// 2^20: 16.1 against 17.7 for 256x8 at 1 and 17.4 for 128x12 at 3.
fn two_pass_policy(widest: usize) -> TilePolicy {
    if widest <= 4 {
        TilePolicy {
            block: 256,
            items: 16,
            min_blocks: 3,
        }
    } else {
        TilePolicy {
            block: 128,
            items: 16,
            min_blocks: 2,
        }
    }
}

/// `policy`, or the tile shape the `bykey-tuning` overrides force.
fn tuned(policy: TilePolicy) -> TilePolicy {
    #[cfg(feature = "bykey-tuning")]
    if let Some((block, items, min_blocks)) = super::tuning::get().shape {
        return TilePolicy { block, items, min_blocks };
    }
    policy
}

/// Whether reduce_by_key of `len` keys of `key_bytes` and values of
/// `value_bytes` takes the two passes on a GPU of `l2_bytes` of L2: keys
/// and values of at most 8 bytes whose input L2 holds between the passes,
/// from 8 MiB (just past it for pairs of at most 8 bytes) up to two thirds
/// of L2. H200 (60 MiB of L2), `benchmarks/runs/h200-bykey-two-pass/`: u32 keys with f32 values at
/// 2^21 / 2^22 17.4-20.0 / 28.1-37.6 us against 22.0-24.2 / 27.1-47.8 for
/// the best single pass (tiles, chunks) and CUB's 18.8-22.3 / 28.2-41.0;
/// u64 keys with f64 values at 2^19 / 2^20 / 2^21 14.1 / 16.1 / 27.5
/// against 17.3 / 23.4 / 33.8 and CUB's 19.8 / 25.8 / 34.7. Past the band
/// (2^23 u32 / f32, 2^22 u64 / f64) the chunks were faster.
pub(crate) fn two_passes_pay(l2_bytes: usize, len: usize, key_bytes: usize, value_bytes: usize) -> bool {
    if key_bytes > 8 || value_bytes > 8 {
        return false;
    }
    let total = len.saturating_mul(key_bytes + value_bytes);
    // At exactly 8 MiB, pairs of at most 8 bytes (2^20 u32 / f32) keep the one pass: 14.6 / 13.9
    // / 13.6 / 13.8 us in runs of 1 / 4 / 64 / 1024 against 15.4 / 14.6 / 13.9 / 13.8 in two;
    // 16-byte pairs (2^19 u64 / f64) take the two: 13.8-14.1 against 17.3.
    let from = crate::algo::lookback::TWO_PASS_FROM_BYTES + usize::from(key_bytes + value_bytes <= 8);
    total >= from && total <= l2_bytes / 3 * 2
}

/// One specialisation of the by-key kernel: key expression `KE`, value
/// expression `VE` (for run lengths an unread buffer of the count type,
/// for the modes without values one of any element), value outputs `O`
/// (a tuple's fields each to its own array).
pub(crate) struct ByKey<'a, KE, VE, O, Op, E> {
    pub policy: TilePolicy,
    pub mode: Mode,
    pub keys: &'a KE,
    pub values: &'a VE,
    /// reduce_by_key's monoid (any monoid otherwise: unused).
    pub op: &'a Op,
    pub eq: E,
    /// u64 counts (2^32 elements or more), else u32.
    pub wide: bool,
    /// Tiles chain their (float) aggregates in a fixed order.
    pub deterministic: bool,
    /// Two launches (`CUPRIM_BYKEY_TWO_PASS`): each tile's Scanned value, then
    /// each tile from the fold of those before it.
    two_pass: bool,
    _t: PhantomData<O>,
}

impl<KE, VE, O, Op, E: Copy> Clone for ByKey<'_, KE, VE, O, Op, E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<KE, VE, O, Op, E: Copy> Copy for ByKey<'_, KE, VE, O, Op, E> {}

impl<'a, KE: Node, VE: Node, O: Value, Op: Monoid<VE::Item>, E: KeyEq<KE::Item>> ByKey<'a, KE, VE, O, Op, E>
where
    KE::Item: Element,
{
    #[allow(clippy::too_many_arguments)]
    pub fn new(arch: u32, mode: Mode, keys: &'a KE, values: &'a VE, op: &'a Op, eq: E, len: usize, deterministic: bool) -> Self {
        // Values held per thread or staged in shared memory.
        let value_bytes = match mode {
            Mode::Reduce | Mode::Lengths => VE::Item::C_SIZE.max(O::C_SIZE),
            Mode::UniqueByKey => O::C_SIZE,
            Mode::Count => 0,
        };
        ByKey {
            policy: tuned(by_key_policy(arch, mode, std::mem::size_of::<KE::Item>(), value_bytes, len)),
            mode,
            keys,
            values,
            op,
            eq,
            wide: len as u64 > u32::MAX as u64,
            deterministic: deterministic && mode == Mode::Reduce,
            two_pass: false,
            _t: PhantomData,
        }
    }

    /// The two-pass form of this plan (u32 counts; one fixed order of
    /// folding, so no separate deterministic module).
    pub fn in_two_passes(self) -> Self {
        let widest = std::mem::size_of::<KE::Item>().max(VE::Item::C_SIZE).max(O::C_SIZE);
        ByKey {
            policy: tuned(two_pass_policy(widest)),
            two_pass: true,
            wide: false,
            deterministic: false,
            ..self
        }
    }

    /// 0: one value output array; 2 or 3: one per field of a tuple.
    fn unzip() -> i64 {
        if O::FIELDS > 1 {
            O::FIELDS as i64
        } else {
            0
        }
    }

    /// Bytes of one look-back value: the count `C`, or `struct { V v; C count; }`.
    fn scanned_bytes(&self) -> usize {
        let c = if self.wide { 8 } else { 4 };
        if !self.mode.segmented() {
            return c;
        }
        let v = VE::Item::C_SIZE;
        let align = VE::Item::C_ALIGN.max(c);
        (v.next_multiple_of(c) + c).next_multiple_of(align)
    }

    /// Runs over the keys (and values, as many): writes what the mode asks
    /// to `keys_out` and `values_out` (one array, or one per tuple field)
    /// and the number of runs to `count_out`, or, with no `count_out`,
    /// reads it back (one small synchronous read) and returns it. Inputs
    /// that permute are bounds-checked (the call then waits for the GPU).
    pub fn run(&self, dev: &CudaDevice, keys_out: Ptr<KE::Item>, values_out: [u64; 3], count_out: Option<Ptr<u64>>) -> Result<Option<u64>> {
        let len = self.keys.length();
        if len == 0 {
            return match count_out {
                Some(c) => dev.memset_bytes(c.raw(), 0, 8, "writing the by-key count").map(|()| None),
                None => Ok(Some(0)),
            };
        }
        let tiles = self.policy.tiles("reduce_by_key", len)?;
        let module = dev.module(self)?;
        let mut layout = ScratchLayout::new();
        // One pass: the look-back's arrays (status words zeroed first in the layout). Two passes:
        // each tile's Scanned value, in `aggregates`.
        let chain = if self.two_pass {
            Err(layout.uninit::<u8>(tiles as u64 * self.scanned_bytes() as u64))
        } else {
            Ok(Lookback::place(&mut layout, tiles as u64, self.scanned_bytes()))
        };
        let slot = layout.uninit::<u64>(1);
        let entry = by_key_entry::<KE::Item>();
        let grid = Grid::new(tiles, self.policy.block);
        let [o0, o1, o2] = values_out.map(Ptr::<u8>::from_raw);
        dev.with_scratch(&layout, |s| {
            let count = count_out.unwrap_or(s.at(slot));
            launch_checked2(dev, self.keys, self.values, |k, v| {
                let partials = match &chain {
                    Ok(lookback) => {
                        let (status, aggregates, prefixes) = lookback.args(&s);
                        let counter = dev.counter(Counter::ByKeyTile);
                        let args = (
                            k, v, len as u64, keys_out, o0, o1, o2, count, status, aggregates, prefixes, counter, tiles,
                        );
                        return dev.launch(&module, entry, grid, args);
                    }
                    Err(partials) => s.at(*partials),
                };
                // SAFETY: matches `cuprim_by_key_partials(const In0 keys, const In1 values, u64 n, Scanned*
                // partials)`, In0 and In1 the structs whose fields the two ExprArgs hold: one block per tile,
                // reads n keys (and n values for reduce), writes one Scanned value per tile.
                let first: Entry<(ExprArgs, ExprArgs, u64, Ptr<u8>)> = unsafe { Entry::declare("cuprim_by_key_partials") };
                dev.launch(&module, first, grid, (k, v, len as u64, partials))?;
                // With CUPRIM_BYKEY_TWO_PASS `aggregates` is the partials; status, prefixes and the counter
                // are not read.
                let args = (
                    k,
                    v,
                    len as u64,
                    keys_out,
                    o0,
                    o1,
                    o2,
                    count,
                    Ptr::null(),
                    partials,
                    Ptr::null(),
                    Ptr::null(),
                    tiles,
                );
                // SAFETY: every block of cuprim_by_key calls cuprim_grid_wait() (fold_partials_share)
                // before it reads a partial and before any store to global memory. Before it the block
                // reads only the keys and values, which the one kernel that may still run
                // (cuprim_by_key_partials, a plain launch: all work queued before it has ended) reads and
                // does not write; it may set the expressions' bad-index flags, as the first pass may.
                unsafe { dev.launch_dependent(&module, entry, grid, args) }
            })?;
            count_or_read_back(dev, count_out, count)
        })
    }
}

/// `None` when the count went to the caller's `count_out`, else the count
/// read back from `count` (one small synchronous read).
pub(crate) fn count_or_read_back(dev: &CudaDevice, count_out: Option<Ptr<u64>>, count: Ptr<u64>) -> Result<Option<u64>> {
    match count_out {
        Some(_) => Ok(None),
        None => Ok(Some(u64::from_le_bytes(dev.read_back::<8>(count.raw(), "reading the run count")?))),
    }
}

/// `cuprim_by_key`'s parameter list.
type ByKeyArgs<K> = (
    ExprArgs,
    ExprArgs,
    u64,
    Ptr<K>,
    Ptr<u8>,
    Ptr<u8>,
    Ptr<u8>,
    Ptr<u64>,
    Ptr<u32>,
    Ptr<u8>,
    Ptr<u8>,
    Ptr<u32>,
    u32,
);

fn by_key_entry<K: Element>() -> Entry<ByKeyArgs<K>> {
    // SAFETY: matches `cuprim_by_key(const In0 keys, const In1 values, u64 n, K* keys_out, void* vout0,
    // void* vout1, void* vout2, u64* count_out, u32* status, Scanned* aggregates, Scanned* prefixes,
    // u32* tile_counter, u32 num_tiles)`, In0 and In1 the structs whose fields the two ExprArgs hold:
    // reads n keys (and n values in the modes that use them), writes at most n keys and n values (one
    // per run; each tuple field to its own array when unzipped) and one count; look-back arrays of
    // num_tiles entries, the counter left at zero (or, CUPRIM_BYKEY_TWO_PASS, the tiles' partials in
    // aggregates, the others unread).
    unsafe { Entry::declare("cuprim_by_key") }
}

impl<KE: Node, VE: Node, O: Value, Op: Monoid<VE::Item>, E: KeyEq<KE::Item>> Specialise for ByKey<'_, KE, VE, O, Op, E>
where
    KE::Item: Element,
{
    fn template(&self) -> &'static Template {
        if self.two_pass {
            &BY_KEY_TWO_PASS
        } else {
            &BY_KEY
        }
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        self.policy.write(w);
        w.constant("CUPRIM_BYKEY_KEYS", (self.mode != Mode::Count) as i64);
        w.constant("CUPRIM_BYKEY_VALUES", self.mode.values());
        w.constant("CUPRIM_BYKEY_UNZIP", Self::unzip());
        // Defined only when on, so the other modules keep their text.
        if self.mode == Mode::UniqueByKey && VE::CHECKED {
            w.constant("CUPRIM_BYKEY_CHECK_ALL", 1);
        }
        if self.two_pass {
            w.constant("CUPRIM_BYKEY_TWO_PASS", 1);
        }
        w.constant("CUPRIM_DETERMINISTIC", self.deterministic as i64);
        w.constant("CUPRIM_LOOKBACK_WINDOWS", LOOKBACK_WINDOWS);
        write_inputs(self.keys, "K", self.values, "V", w);
        w.value::<O>("O");
        w.typedef("C", if self.wide { "u64" } else { "u32" });
        self.eq.write(w);
        if self.mode == Mode::Reduce {
            w.monoid::<VE::Item, Op>("ReduceOp", "V", self.op);
        }
    }
}

/// reduce_by_key's one-pass modules at every length: short inputs' tiles,
/// long ones', and past 2^32 elements (u64 counts).
fn reduce_lengths<'a, KE: Node + 'a, VE: Node + 'a, O: Value, Op: Monoid<VE::Item> + 'a, E: KeyEq<KE::Item>>(
    plan: impl Fn(usize) -> ByKey<'a, KE, VE, O, Op, E>,
) -> Vec<KernelSpec>
where
    KE::Item: Element,
{
    let mut specs = vec![KernelSpec::of(&plan(0)), KernelSpec::of(&plan(u32::MAX as usize + 1))];
    let long = plan(1 << 21);
    if long.policy != plan(0).policy {
        specs.push(KernelSpec::of(&long));
    }
    specs
}

/// Both widths (u32 and u64 counts) of one plan.
fn both<KE: Node, VE: Node, O: Value, Op: Monoid<VE::Item>, E: KeyEq<KE::Item>>(plan: ByKey<'_, KE, VE, O, Op, E>) -> Vec<KernelSpec>
where
    KE::Item: Element,
{
    let narrow = ByKey { wide: false, ..plan };
    let wide = ByKey { wide: true, ..plan };
    vec![KernelSpec::of(&narrow), KernelSpec::of(&wide)]
}

/// The reduce_by_key modules of keys `K`, values `V` and `op` (fast and
/// deterministic where `V` is a float, both count widths), for precompile.
pub(crate) fn reduce_by_key_specs<K: Element, V: Element, Op: Monoid<V>>(arch: u32, op: &Op) -> Vec<KernelSpec> {
    reduce_by_key_specs_of::<_, _, V, _>(arch, &Leaf::<K>::type_only(), &Leaf::<V>::type_only(), op)
}

/// The reduce_by_key modules of key and value expressions (values out as
/// `O`: the value type, or a tuple written unzipped), for precompile.
pub(crate) fn reduce_by_key_specs_of<KE: Node, VE: Node, O: Value, Op: Monoid<VE::Item>>(
    arch: u32,
    keys: &KE,
    values: &VE,
    op: &Op,
) -> Vec<KernelSpec>
where
    KE::Item: Element,
{
    let plan = |det, len| ByKey::<KE, VE, O, Op, NotEqual>::new(arch, Mode::Reduce, keys, values, op, NotEqual, len, det);
    let mut specs = reduce_lengths(|len| plan(false, len));
    if std::mem::size_of::<KE::Item>() <= 8 && VE::Item::C_SIZE <= 8 {
        specs.push(KernelSpec::of(&plan(false, 0).in_two_passes()));
    }
    if VE::Item::HAS_FLOAT {
        specs.extend(reduce_lengths(|len| plan(true, len)));
    }
    if O::FIELDS == 1 {
        specs.extend(super::chunks::reduce_chunk_specs(keys, values, op, NotEqual));
    }
    specs
}

/// The unique, unique_count, unique_by_key (values `V`) and run-length
/// (u32 and u64 lengths) modules of keys `K`, for precompile.
pub(crate) fn unique_specs<K: Element, V: Element>(arch: u32) -> Vec<KernelSpec> {
    unique_specs_of(arch, &Leaf::<K>::type_only(), &Leaf::<V>::type_only())
}

/// The same modules of a key expression and a value expression (tuple
/// values written unzipped), for precompile.
pub(crate) fn unique_specs_of<KE: Node, VE: Node>(arch: u32, keys: &KE, values: &VE) -> Vec<KernelSpec>
where
    KE::Item: Element,
{
    let none = Leaf::<KE::Item>::type_only();
    let (c32, c64) = (Leaf::<u32>::type_only(), Leaf::<u64>::type_only());
    let mut specs = Vec::new();
    specs.extend(both(ByKey::<_, _, KE::Item, _, _>::new(
        arch,
        Mode::Count,
        keys,
        &none,
        &Min,
        NotEqual,
        0,
        false,
    )));
    specs.push(super::chunks::count_chunk_spec(keys));
    specs.extend(crate::algo::select::plan::unique_select_specs(arch, keys));
    specs.extend(super::chunks::length_chunk_specs(keys));
    specs.extend(both(ByKey::<_, _, VE::Item, _, _>::new(
        arch,
        Mode::UniqueByKey,
        keys,
        values,
        &Unused,
        NotEqual,
        0,
        false,
    )));
    specs.push(KernelSpec::of(&ByKey::<_, _, u32, _, _>::new(
        arch,
        Mode::Lengths,
        keys,
        &c32,
        &Min,
        NotEqual,
        0,
        false,
    )));
    specs.push(KernelSpec::of(&ByKey::<_, _, u64, _, _>::new(
        arch,
        Mode::Lengths,
        keys,
        &c32,
        &Min,
        NotEqual,
        0,
        false,
    )));
    specs.push(KernelSpec::of(&ByKey {
        wide: true,
        ..ByKey::<_, _, u64, _, _>::new(arch, Mode::Lengths, keys, &c64, &Min, NotEqual, 0, false)
    }));
    specs
}

/// The reduce_by_key module with keys equal under `cmp`, for precompile.
pub(crate) fn reduce_by_key_by_specs<K: Element, V: Element, Op: Monoid<V>, C: Comparator<K>>(
    arch: u32,
    op: &Op,
    cmp: C,
) -> Vec<KernelSpec> {
    let (keys, values) = (Leaf::<K>::type_only(), Leaf::<V>::type_only());
    let plan = |len| {
        ByKey::<_, _, V, _, _>::new(
            arch,
            Mode::Reduce,
            &keys,
            &values,
            op,
            Equivalent(cmp),
            len,
            V::KIND == crate::Kind::Float,
        )
    };
    let mut specs = reduce_lengths(plan);
    if std::mem::size_of::<K>() <= 8 && V::C_SIZE <= 8 {
        specs.push(KernelSpec::of(&plan(0).in_two_passes()));
    }
    specs.extend(super::chunks::reduce_chunk_specs(&keys, &values, op, Equivalent(cmp)));
    specs
}

#[cfg(test)]
mod tests {
    use super::two_passes_pay;

    /// reduce_by_key's band: keys and values from 8 MiB to two thirds of L2, each of at most 8 bytes.
    #[test]
    fn two_pass_band_edges() {
        let l2 = 60 << 20;
        assert!(!two_passes_pay(l2, 1 << 20, 4, 4), "8-byte pairs from just past 8 MiB");
        assert!(two_passes_pay(l2, (1 << 20) + 1, 4, 4));
        assert!(two_passes_pay(l2, 5 << 20, 4, 4));
        assert!(!two_passes_pay(l2, (5 << 20) + 1, 4, 4));
        assert!(two_passes_pay(l2, 1 << 19, 8, 8));
        assert!(!two_passes_pay(l2, (5 << 19) + 1, 8, 8));
        assert!(two_passes_pay(l2, 4 << 20, 1, 8), "1-byte keys, 8-byte values");
        assert!(!two_passes_pay(l2, 1 << 20, 4, 12), "values over 8 bytes");
        assert!(!two_passes_pay(l2, 1 << 20, 16, 4), "keys over 8 bytes");
        assert!(!two_passes_pay(0, 2 << 20, 4, 4), "no L2 reported");
        assert!(!two_passes_pay(l2, usize::MAX, 8, 8), "no overflow");
    }
}
