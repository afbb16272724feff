//! The seed's radix sort (`kernels/sort/radix_sort_classic.cu`: 4-bit
//! digits, three kernels per pass: count per block, scan the counts,
//! scatter), kept only for the comparison row of `benches/sort.rs`
//! (feature `classic-sort`). Onesweep is 2.8x faster at 2^24 pairs u32/u32.

use super::plan::{radix_sort, write_common, SortPolicy, RADIX_SORT_COMMON};
use super::SortArgs;
use crate::device::{CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use std::marker::PhantomData;
use std::mem::size_of;

template!(
    RADIX_SORT_CLASSIC,
    "sort/radix_sort_classic.cu",
    ["cuprim_radix_classic_upsweep", "cuprim_radix_classic_scan", "cuprim_radix_classic_downsweep"],
    headers: [RADIX_SORT_COMMON]
);

/// Digit width of the classic sort.
const CLASSIC_BITS: u32 = 4;
/// Threads of the counts scan (`C_SCAN_BLOCK` in the kernel).
const SCAN_BLOCK: u32 = 1024;

/// 384 threads, 18 keys per thread (9 past 4-byte keys or values), two
/// blocks per SM: what its three kernels fit without spills.
fn classic_policy(arch: u32, key_bytes: usize, value_bytes: usize) -> SortPolicy {
    let items = if key_bytes.max(value_bytes) > 4 { 9 } else { 18 };
    SortPolicy {
        block: 384,
        items,
        min_blocks: 2,
        share_counters: false,
        ..radix_sort(arch, key_bytes, false, value_bytes, Some(false), false, false)
    }
}

/// The classic module for keys `K` (values `V` when `pairs`).
pub(crate) struct Classic<K, V> {
    policy: SortPolicy,
    pairs: bool,
    _kv: PhantomData<fn() -> (K, V)>,
}

impl<K: Element, V: Element> Classic<K, V> {
    fn new(arch: u32, pairs: bool) -> Self {
        Classic {
            policy: classic_policy(arch, size_of::<K>(), if pairs { size_of::<V>() } else { 0 }),
            pairs,
            _kv: PhantomData,
        }
    }
}

impl<K: Element, V: Element> Specialise for Classic<K, V> {
    fn template(&self) -> &'static Template {
        &RADIX_SORT_CLASSIC
    }

    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_common::<K, V, W>(w, &self.policy, self.pairs);
    }
}

/// The classic modules for keys `K` alone and with values `V`.
pub(crate) fn classic_kernel_specs<K: Element, V: Element>(arch: u32) -> Vec<KernelSpec> {
    vec![
        KernelSpec::of(&Classic::<K, K>::new(arch, false)),
        KernelSpec::of(&Classic::<K, V>::new(arch, true)),
    ]
}

/// `cuprim_radix_classic_upsweep(const K* keys, u64 n, u32 shift, u32
/// mask, u64 flip, u32 tiles_per_block, u32* counts)`.
fn upsweep_entry<K: Element>() -> Entry<(Ptr<K>, u64, u32, u32, u64, u32, Ptr<u32>)> {
    // SAFETY: matches `cuprim_radix_classic_upsweep` in
    // kernels/sort/radix_sort_classic.cu: reads the n keys and writes 16
    // counts per block (16 x grid in all) to `counts`.
    unsafe { Entry::declare("cuprim_radix_classic_upsweep") }
}

/// `cuprim_radix_classic_scan(u32* counts, u32 total)`.
fn scan_entry() -> Entry<(Ptr<u32>, u32)> {
    // SAFETY: matches `cuprim_radix_classic_scan` in
    // kernels/sort/radix_sort_classic.cu: one block of 1024 threads scans
    // the `total` counts in place.
    unsafe { Entry::declare("cuprim_radix_classic_scan") }
}

/// `cuprim_radix_classic_downsweep(const K* keys_in, K* keys_out, const V*
/// vals_in, V* vals_out, u64 n, u32 shift, u32 mask, u64 flip, u32
/// tiles_per_block, const u32* offsets)`.
type DownArgs<K, V> = (Ptr<K>, Ptr<K>, Ptr<V>, Ptr<V>, u64, u32, u32, u64, u32, Ptr<u32>);

fn downsweep_entry<K: Element, V: Element>() -> Entry<DownArgs<K, V>> {
    // SAFETY: matches `cuprim_radix_classic_downsweep` in
    // kernels/sort/radix_sort_classic.cu: moves the n keys (values, only
    // with CUPRIM_PAIRS) from keys_in (vals_in) to positions below n of
    // keys_out (vals_out), which must not overlap the input, reading the
    // scanned counts.
    unsafe { Entry::declare("cuprim_radix_classic_downsweep") }
}

/// The classic sort of the `n` keys at `keys` (and values at `values`),
/// in place. Keys alone take `V = K`.
pub(crate) fn sort<K: Element, V: Element>(
    dev: &CudaDevice,
    keys: Ptr<K>,
    values: Option<Ptr<V>>,
    n: usize,
    args: &SortArgs,
) -> Result<()> {
    if n <= 1 {
        return Ok(());
    }
    let n64 = n as u64;
    if n64 >= 1 << 32 {
        return Err(Error::Unsupported("the classic radix sort takes fewer than 2^32 keys".into()));
    }
    let pairs = values.is_some();
    let plan = Classic::<K, V>::new(dev.arch(), pairs);
    let module = dev.module(&plan)?;
    let policy = &plan.policy;
    let vals = values.unwrap_or(Ptr::null());
    let flip = args.flip::<K>();
    let tiles = n64.div_ceil(policy.tile());
    let tiles_per_block = tiles.div_ceil((dev.sm_count().max(1) * 2) as u64) as u32;
    let grid = Grid::new(tiles.div_ceil(tiles_per_block as u64) as u32, policy.block);
    let counts_len = (1u32 << CLASSIC_BITS) * grid.blocks;
    let mut layout = ScratchLayout::new();
    let counts = layout.uninit::<u32>(counts_len as u64);
    let alt_keys = layout.uninit_aligned::<K>(n64);
    let alt_values = layout.uninit_aligned::<V>(if pairs { n64 } else { 0 });
    dev.with_scratch(&layout, |s| {
        let counts = s.at(counts);
        let (mut src_k, mut dst_k) = (keys, s.at(alt_keys));
        let (mut src_v, mut dst_v) = (vals, if pairs { s.at(alt_values) } else { Ptr::null() });
        let passes = args.passes(CLASSIC_BITS);
        for p in 0..passes {
            let (shift, mask) = args.digit(p, CLASSIC_BITS);
            dev.launch(
                &module,
                upsweep_entry::<K>(),
                grid,
                (src_k, n64, shift, mask, flip, tiles_per_block, counts),
            )?;
            dev.launch(&module, scan_entry(), Grid::new(1, SCAN_BLOCK), (counts, counts_len))?;
            dev.launch(
                &module,
                downsweep_entry::<K, V>(),
                grid,
                (src_k, dst_k, src_v, dst_v, n64, shift, mask, flip, tiles_per_block, counts),
            )?;
            std::mem::swap(&mut src_k, &mut dst_k);
            std::mem::swap(&mut src_v, &mut dst_v);
        }
        if passes % 2 == 1 {
            dev.copy(keys, src_k, n64, "copying sorted keys back")?;
            if pairs {
                dev.copy(vals, src_v, n64, "copying sorted values back")?;
            }
        }
        Ok(())
    })
}
