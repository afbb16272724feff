//! Plan and launch of `kernels/bykey/by_key.cu`: one pass over the keys
//! (and values) that finds the runs of equal consecutive keys and writes
//! one output per run, chaining tiles through the decoupled look-back over
//! head counts (unique) or (head count, segmented value) pairs (reduce,
//! run lengths).

use crate::algo::lookback::{Lookback, LOOKBACK};
use crate::algo::scan::plan::{TilePolicy, LOOKBACK_WINDOWS};
use crate::cmp::Comparator;
use crate::device::{Counter, CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::Result;
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use crate::ops::{Min, Monoid};
use std::marker::PhantomData;

template!(BY_KEY, "bykey/by_key.cu", ["cuprim_by_key"], headers: [LOOKBACK]);

/// What one launch computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The number of runs only.
    Count,
    /// The first key of each run.
    Unique,
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
            Mode::Count | Mode::Unique => 0,
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

/// Tile shapes, from a sweep of six shapes per mode at 2^24 and 2^28 (H100, u32 keys in runs
/// of 64, f32 values; lab run at 9ea88b8+). 8-byte keys or values and 1- or 2-byte counted keys:
/// not separately measured (the largest without spills in the NVRTC sm_90 report).
pub(crate) fn by_key_policy(_arch: u32, mode: Mode, key_bytes: usize, value_bytes: usize) -> TilePolicy {
    let widest = key_bytes.max(value_bytes);
    let shape = |block, items, min_blocks| TilePolicy { block, items, min_blocks };
    match (mode, widest) {
        (Mode::Reduce | Mode::Lengths, 8..) => shape(256, 8, 1),
        // reduce_by_key 2^28: 1.229 ms against 1.325 for 256x16 and 1.293 for 128x24.
        (Mode::Reduce, _) => shape(128, 32, 4),
        // run lengths 2^28: 0.828 ms against 0.900 for 256x16 and 0.848 for 128x32.
        (Mode::Lengths, _) => shape(128, 24, 4),
        (_, 8..) => shape(128, 12, 4),
        // unique 2^28: 0.695 ms against 0.830 for 128x24 (copy_if's) and 0.699 for 256x24.
        (Mode::Count | Mode::Unique, 4) => shape(256, 32, 3),
        // unique_by_key: copy_if's shape (its values' shared memory does not fit beside 256x32 keys).
        (_, 4) => shape(128, 24, 4),
        _ => shape(128, 32, 4),
    }
}

/// One specialisation of the by-key kernel: keys `K`, values `V` (the
/// count type for run lengths, `K` when there are none), value outputs `O`.
pub(crate) struct ByKey<'a, K, V, O, Op, E> {
    pub policy: TilePolicy,
    pub mode: Mode,
    /// reduce_by_key's monoid (any monoid otherwise: unused).
    pub op: &'a Op,
    pub eq: E,
    /// u64 counts (2^32 elements or more), else u32.
    pub wide: bool,
    /// Tiles chain their (float) aggregates in a fixed order.
    pub deterministic: bool,
    _t: PhantomData<(K, V, O)>,
}

impl<'a, K: Element, V: Element, O: Element, Op: Monoid<V>, E: KeyEq<K>> ByKey<'a, K, V, O, Op, E> {
    pub fn new(arch: u32, mode: Mode, op: &'a Op, eq: E, len: usize, deterministic: bool) -> Self {
        // Values held per thread or staged in shared memory.
        let value_bytes = match mode {
            Mode::Reduce | Mode::Lengths => std::mem::size_of::<V>().max(std::mem::size_of::<O>()),
            Mode::UniqueByKey => std::mem::size_of::<O>(),
            Mode::Count | Mode::Unique => 0,
        };
        ByKey {
            policy: by_key_policy(arch, mode, std::mem::size_of::<K>(), value_bytes),
            mode,
            op,
            eq,
            wide: len as u64 > u32::MAX as u64,
            deterministic: deterministic && mode == Mode::Reduce,
            _t: PhantomData,
        }
    }

    /// Bytes of one look-back value: the count `C`, or `struct { V v; C count; }`.
    fn scanned_bytes(&self) -> usize {
        let c = if self.wide { 8 } else { 4 };
        if !self.mode.segmented() {
            return c;
        }
        let v = std::mem::size_of::<V>();
        let align = std::mem::align_of::<V>().max(c);
        (v.next_multiple_of(c) + c).next_multiple_of(align)
    }

    /// Runs over `len` keys (and values): writes what the mode asks to
    /// `keys_out` / `values_out` and the number of runs to `count_out`, or,
    /// with no `count_out`, reads it back (one small synchronous read) and
    /// returns it.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        dev: &CudaDevice,
        keys: Ptr<K>,
        values: Ptr<V>,
        len: usize,
        keys_out: Ptr<K>,
        values_out: Ptr<O>,
        count_out: Option<Ptr<u64>>,
    ) -> Result<Option<u64>> {
        if len == 0 {
            return match count_out {
                Some(c) => dev.memset_bytes(c.raw(), 0, 8, "writing the by-key count").map(|()| None),
                None => Ok(Some(0)),
            };
        }
        let tiles = self.policy.tiles("reduce_by_key", len)?;
        let module = dev.module(self)?;
        let mut layout = ScratchLayout::new();
        let lookback = Lookback::place(&mut layout, tiles as u64, self.scanned_bytes());
        let slot = layout.uninit::<u64>(1);
        // SAFETY: matches `cuprim_by_key(const K* keys, const V* values, u64 n, K* keys_out, O* values_out,
        // u64* count_out, u32* status, Scanned* aggregates, Scanned* prefixes, u32* tile_counter,
        // u32 num_tiles)`: reads n keys (and n values in the modes that use them), writes at most n keys
        // and values (one per run) and one count, look-back arrays of num_tiles entries, the counter left
        // at zero.
        let entry: Entry<(
            Ptr<K>,
            Ptr<V>,
            u64,
            Ptr<K>,
            Ptr<O>,
            Ptr<u64>,
            Ptr<u32>,
            Ptr<u8>,
            Ptr<u8>,
            Ptr<u32>,
            u32,
        )> = unsafe { Entry::declare("cuprim_by_key") };
        let counter = dev.counter(Counter::ByKeyTile);
        dev.with_scratch(&layout, |s| {
            let (status, aggregates, prefixes) = lookback.args(&s);
            let count = count_out.unwrap_or(s.at(slot));
            let args = (
                keys, values, len as u64, keys_out, values_out, count, status, aggregates, prefixes, counter, tiles,
            );
            dev.launch(&module, entry, Grid::new(tiles, self.policy.block), args)?;
            match count_out {
                Some(_) => Ok(None),
                None => Ok(Some(u64::from_le_bytes(
                    dev.read_back::<8>(count.raw(), "reading the by-key count")?,
                ))),
            }
        })
    }
}

impl<K: Element, V: Element, O: Element, Op: Monoid<V>, E: KeyEq<K>> Specialise for ByKey<'_, K, V, O, Op, E> {
    fn template(&self) -> &'static Template {
        &BY_KEY
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        self.policy.write(w);
        w.constant("CUPRIM_BYKEY_KEYS", (self.mode != Mode::Count) as i64);
        w.constant("CUPRIM_BYKEY_VALUES", self.mode.values());
        w.constant("CUPRIM_DETERMINISTIC", self.deterministic as i64);
        w.constant("CUPRIM_LOOKBACK_WINDOWS", LOOKBACK_WINDOWS);
        w.elem::<K>("K");
        w.elem::<V>("V");
        w.elem::<O>("O");
        w.typedef("C", if self.wide { "u64" } else { "u32" });
        self.eq.write(w);
        if self.mode == Mode::Reduce {
            w.monoid::<V, Op>("ReduceOp", "V", self.op);
        }
    }
}

/// Both widths (u32 and u64 counts) of one plan.
fn both<K: Element, V: Element, O: Element, Op: Monoid<V>, E: KeyEq<K>>(plan: ByKey<'_, K, V, O, Op, E>) -> Vec<KernelSpec> {
    let narrow = ByKey { wide: false, ..plan };
    let wide = ByKey { wide: true, ..plan };
    vec![KernelSpec::of(&narrow), KernelSpec::of(&wide)]
}

/// The reduce_by_key modules of keys `K`, values `V` and `op` (fast and
/// deterministic where `V` is a float, both count widths), for precompile.
pub(crate) fn reduce_by_key_specs<K: Element, V: Element, Op: Monoid<V>>(arch: u32, op: &Op) -> Vec<KernelSpec> {
    let mut specs = both(ByKey::<K, V, V, Op, NotEqual>::new(arch, Mode::Reduce, op, NotEqual, 0, false));
    if V::KIND == crate::Kind::Float {
        specs.extend(both(ByKey::<K, V, V, Op, NotEqual>::new(arch, Mode::Reduce, op, NotEqual, 0, true)));
    }
    specs
}

/// The unique, unique_count, unique_by_key (values `V`) and run-length
/// (u32 and u64 lengths) modules of keys `K`, for precompile.
pub(crate) fn unique_specs<K: Element, V: Element>(arch: u32) -> Vec<KernelSpec> {
    let mut specs = Vec::new();
    specs.extend(both(ByKey::<K, K, K, Min, NotEqual>::new(
        arch,
        Mode::Count,
        &Min,
        NotEqual,
        0,
        false,
    )));
    specs.extend(both(ByKey::<K, K, K, Min, NotEqual>::new(
        arch,
        Mode::Unique,
        &Min,
        NotEqual,
        0,
        false,
    )));
    specs.extend(both(ByKey::<K, V, V, Min, NotEqual>::new(
        arch,
        Mode::UniqueByKey,
        &Min,
        NotEqual,
        0,
        false,
    )));
    specs.push(KernelSpec::of(&ByKey::<K, u32, u32, Min, NotEqual>::new(
        arch,
        Mode::Lengths,
        &Min,
        NotEqual,
        0,
        false,
    )));
    specs.push(KernelSpec::of(&ByKey::<K, u32, u64, Min, NotEqual>::new(
        arch,
        Mode::Lengths,
        &Min,
        NotEqual,
        0,
        false,
    )));
    specs.push(KernelSpec::of(&ByKey {
        wide: true,
        ..ByKey::<K, u64, u64, Min, NotEqual>::new(arch, Mode::Lengths, &Min, NotEqual, 0, false)
    }));
    specs
}

/// The reduce_by_key module with keys equal under `cmp`, for precompile.
pub(crate) fn reduce_by_key_by_specs<K: Element, V: Element, Op: Monoid<V>, C: Comparator<K>>(
    arch: u32,
    op: &Op,
    cmp: C,
) -> Vec<KernelSpec> {
    both(ByKey::<K, V, V, Op, Equivalent<C>>::new(
        arch,
        Mode::Reduce,
        op,
        Equivalent(cmp),
        0,
        V::KIND == crate::Kind::Float,
    ))
}
