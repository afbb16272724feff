//! The onesweep launch sequence (`kernels/sort/radix_sort.cu`): one
//! histogram of every pass's digits, then one onesweep kernel per pass and
//! portion, ping-ponging between the caller's buffers and scratch; inputs of
//! at most one small tile (`kernels/sort/radix_sort_small.cu`, up to 16384
//! keys) are sorted by one block in one launch.

use super::plan::{small_shape, Onesweep, SmallSort, MEDIUM_MOST};
use super::SortArgs;
use crate::algo::transform::plan::Collect;
use crate::device::{CudaDevice, Entry, Grid, Ptr, Region, ScratchLayout};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::expr::args::ExprArgs;
use crate::expr::node::Node;
use crate::expr::Leaf;
use std::mem::size_of;

/// Digit width of the onesweep sort.
const RADIX_BITS: u32 = 8;
/// Digits per pass.
const RADIX: u64 = 1 << RADIX_BITS;
/// A portion has fewer than 2^30 keys, so look-back counts fit 30 bits.
const PORTION_LIMIT: u64 = (1 << 30) - 1;

/// `cuprim_radix_histogram(const K* keys, u64 n, u32 begin_bit, u32
/// end_bit, u64 flip, u64* hist, u32* ticket, u32* plan)`.
fn histogram_entry<K: Element>() -> Entry<(Ptr<K>, u64, u32, u32, u64, Ptr<u64>, Ptr<u32>, Ptr<u32>)> {
    // SAFETY: matches `cuprim_radix_histogram` in kernels/sort/radix_sort.cu
    // (keys as the unsigned integers of their width, same bytes): it reads
    // n keys, adds into hist[passes][256] (zeroed) and turns it into digit
    // starts in the last block to take a ticket from the zeroed `ticket`
    // (left at the grid size: it lives in scratch), and with the shortcuts
    // writes plan[passes].
    unsafe { Entry::declare("cuprim_radix_histogram") }
}

/// `cuprim_radix_onesweep(const K* keys_in, K* keys_out, const V* vals_in,
/// V* vals_out, u64 n, u32 shift, u32 mask, u64 flip, const u64*
/// digit_starts, const u64* carry_in, u64* carry_out, u32* lookback, u32*
/// tile_counter, u32 num_tiles, const u32* plan)`.
type HistXArgs<K, V> = (ExprArgs, u64, u32, u32, u64, Ptr<u64>, Ptr<u32>, Ptr<u32>, Ptr<K>, Ptr<V>);

fn histogram_x_entry<K: Element, V: Element>() -> Entry<HistXArgs<K, V>> {
    // SAFETY: matches `cuprim_radix_histogram_x` in kernels/sort/radix_sort.cu
    // (SortIn the struct the ExprArgs hold; keys and values as the unsigned
    // integers of their width, same bytes): the histogram kernel's contract
    // over the n keys the expression yields, which it also writes to
    // keys_out[0..n] (and the values to vals_out[0..n], only with
    // CUPRIM_SORT_X 2; else vals_out is unused).
    unsafe { Entry::declare("cuprim_radix_histogram_x") }
}

type PassArgs<K, V> = (
    Ptr<K>,
    Ptr<K>,
    Ptr<V>,
    Ptr<V>,
    u64,
    u32,
    u32,
    u64,
    Ptr<u64>,
    Ptr<u64>,
    Ptr<u64>,
    Ptr<u32>,
    Ptr<u32>,
    u32,
    Ptr<u32>,
);

fn pass_entry<K: Element, V: Element>() -> Entry<PassArgs<K, V>> {
    // SAFETY: matches `cuprim_radix_onesweep` in kernels/sort/radix_sort.cu:
    // one block per tile of the `n` keys (values, only with CUPRIM_PAIRS)
    // at keys_in (vals_in), each scattered to a position below n of
    // keys_out (vals_out), which must not overlap the input; it reads
    // digit_starts[256] and carry_in[256], writes carry_out[256], and uses
    // num_tiles x 256 zeroed look-back words, the zeroed tile counter and
    // the plan word.
    unsafe { Entry::declare("cuprim_radix_onesweep") }
}

/// `cuprim_radix_small_sort(K* keys, V* vals, u32 n, u32 begin_bit, u32
/// end_bit, u64 flip)`.
fn small_sort_entry<K: Element, V: Element>() -> Entry<(Ptr<K>, Ptr<V>, u32, u32, u32, u64)> {
    // SAFETY: matches `cuprim_radix_small_sort` in
    // kernels/sort/radix_sort_small.cu: one block sorts the n <= tile keys
    // (and values, only with CUPRIM_PAIRS) in place, reading all of them
    // before writing any; its dynamic shared memory is the shape's
    // `shared_bytes`.
    unsafe { Entry::declare("cuprim_radix_small_sort") }
}

/// Scratch of one onesweep sort. Zeroed (one memset per sort): digit
/// counts `[passes][256]` (u64, then exclusive starts), the histogram's
/// last-block ticket, a tile counter per (pass, portion), the pass plan (a
/// u32 per pass, written by the histogram when the shortcuts are on),
/// carries `[passes][portions + 1][256]` (u64: keys of each digit in
/// earlier portions), look-back words `[passes][tiles][256]` (u32). Then
/// the ping-pong buffers for keys and values.
struct Layout<K, V> {
    tiles: u64,
    portion_tiles: u64,
    portions: u64,
    scratch: ScratchLayout,
    hist: Region<u64>,
    ticket: Region<u32>,
    counters: Region<u32>,
    plan: Region<u32>,
    carries: Region<u64>,
    lookback: Region<u32>,
    alt_keys: Region<K>,
    alt_values: Region<V>,
}

impl<K, V> Layout<K, V> {
    fn new(n: u64, pairs: bool, passes: u64, tile: u64, portion_tiles: Option<u32>) -> Self {
        let tiles = n.div_ceil(tile);
        let most = (PORTION_LIMIT / tile).max(1);
        let portion_tiles = portion_tiles.map_or(most, |t| (t as u64).min(most));
        let portions = tiles.div_ceil(portion_tiles);
        let mut s = ScratchLayout::new();
        let hist = s.zeroed::<u64>(passes * RADIX);
        let ticket = s.zeroed::<u32>(1);
        let counters = s.zeroed::<u32>(passes * portions);
        let plan = s.zeroed::<u32>(passes);
        let carries = s.zeroed::<u64>(passes * (portions + 1) * RADIX);
        let lookback = s.zeroed::<u32>(passes * tiles * RADIX);
        let alt_keys = s.uninit_aligned::<K>(n);
        let alt_values = s.uninit_aligned::<V>(if pairs { n } else { 0 });
        Layout {
            tiles,
            portion_tiles,
            portions,
            scratch: s,
            hist,
            ticket,
            counters,
            plan,
            carries,
            lookback,
            alt_keys,
            alt_values,
        }
    }
}

/// Sorts the `n` keys at `keys` (and the values at `values`) in place.
/// Keys alone take `V = K`.
pub(crate) fn sort<K: Element, V: Element>(
    dev: &CudaDevice,
    keys: Ptr<K>,
    values: Option<Ptr<V>>,
    n: usize,
    args: &SortArgs,
) -> Result<()> {
    sort_from::<K, V, Leaf<'static, K>>(dev, None, keys, values, n, args)
}

/// [`sort`] whose keys (and values) come from an input expression: `input`
/// yields the keys (with `values`, the zip of keys and values) and `keys` /
/// `values` receive the sorted result. The histogram pass reads the
/// expression and writes what it reads into the buffer the first pass
/// reads (the output or scratch, by the parity of the pass count, so the
/// result lands in the output without a copy back). Inputs of one small
/// tile are collected into the output and sorted there.
pub(crate) fn sort_from<K: Element, V: Element, X: Node>(
    dev: &CudaDevice,
    input: Option<&X>,
    keys: Ptr<K>,
    values: Option<Ptr<V>>,
    n: usize,
    args: &SortArgs,
) -> Result<()> {
    let pairs = values.is_some();
    let vals = values.unwrap_or(Ptr::null());
    if let Some(x) = input {
        if n <= 1 || small_shape::<K, V>(pairs, n as u64).is_some() {
            let out = [Ptr::from_raw(keys.raw()), Ptr::from_raw(vals.raw()), Ptr::null()];
            Collect::new(dev.arch(), x, 1 + pairs as u8).run(dev, out)?;
            return sort(dev, keys, values, n, args);
        }
    }
    if n <= 1 {
        return Ok(());
    }
    let n64 = n as u64;
    let flip = args.flip::<K>();
    let (begin, end) = (args.begin, args.end);

    // Inputs of one small tile: one launch, nothing else.
    if let Some(shape) = small_shape::<K, V>(pairs, n64) {
        let widest = if pairs {
            size_of::<K>().max(size_of::<V>())
        } else {
            size_of::<K>()
        };
        let grid = Grid {
            shared: shape.shared_bytes(widest),
            ..Grid::new(1, shape.block)
        };
        let small = SmallSort::<K, V>::new(shape, pairs);
        let module = dev.module(&small)?;
        return dev.launch(&module, small_sort_entry::<K, V>(), grid, (keys, vals, n as u32, begin, end, flip));
    }

    let plan = Onesweep::<K, V>::new(dev.arch(), pairs, args.shortcut, n64 > 1 << 32, n64 <= MEDIUM_MOST);
    let plan = plan.of_input(input);
    let module = dev.module(&plan)?;
    let policy = &plan.policy;
    let tile = policy.tile();

    let dyn_shared = policy.dynamic_shared(size_of::<K>(), if pairs { size_of::<V>() } else { 0 });
    let passes = args.passes(RADIX_BITS);
    let layout = Layout::<K, V>::new(n64, pairs, passes as u64, tile, args.portion_tiles);
    if layout.portion_tiles > u32::MAX as u64 || layout.tiles > u32::MAX as u64 {
        return Err(Error::InvalidArgument(format!("sort of {n} keys needs more than 2^32 tiles")));
    }
    let hist_vec = (16 / size_of::<K>() as u64).max(1);
    // At least four unrolled rounds per thread: fewer blocks, fewer global
    // atomics when each block flushes its counts.
    let hist_blocks = n64
        .div_ceil(4 * hist_vec * policy.hist_unroll as u64 * policy.hist_block as u64)
        .clamp(1, (dev.sm_count().max(1) * policy.hist_blocks_per_sm) as u64) as u32;
    dev.with_scratch(&layout.scratch, |s| {
        let (hist, pass_plan) = (s.at(layout.hist), s.at(layout.plan));
        let (mut src_k, mut dst_k) = (keys, s.at(layout.alt_keys));
        let (mut src_v, mut dst_v) = (vals, if pairs { s.at(layout.alt_values) } else { Ptr::null() });
        let grid = Grid::new(hist_blocks, policy.hist_block);
        match input {
            None => dev.launch(
                &module,
                histogram_entry::<K>(),
                grid,
                (keys, n64, begin, end, flip, hist, s.at(layout.ticket), pass_plan),
            )?,
            Some(x) => {
                // An odd number of passes starts from scratch, so the last one writes the output.
                if passes % 2 == 1 {
                    std::mem::swap(&mut src_k, &mut dst_k);
                    std::mem::swap(&mut src_v, &mut dst_v);
                }
                let ticket = s.at(layout.ticket);
                crate::expr::consume::launch_checked(dev, x, |input| {
                    let args = (input, n64, begin, end, flip, hist, ticket, pass_plan, src_k, src_v);
                    dev.launch(&module, histogram_x_entry::<K, V>(), grid, args)
                })?
            }
        }
        let (carries, lookback, counters) = (s.at(layout.carries), s.at(layout.lookback), s.at(layout.counters));
        for p in 0..passes as u64 {
            let (shift, mask) = args.digit(p as u32, RADIX_BITS);
            let starts = hist.add(p * RADIX);
            for j in 0..layout.portions {
                let first_tile = j * layout.portion_tiles;
                let tiles = layout.portion_tiles.min(layout.tiles - first_tile) as u32;
                let offset = first_tile * tile;
                let count = (n64 - offset).min(layout.portion_tiles * tile);
                let in_v = if pairs { src_v.add(offset) } else { Ptr::null() };
                let carry_in = carries.add((p * (layout.portions + 1) + j) * RADIX);
                dev.launch(
                    &module,
                    pass_entry::<K, V>(),
                    Grid {
                        shared: dyn_shared,
                        ..Grid::new(tiles, policy.block)
                    },
                    (
                        src_k.add(offset),
                        dst_k,
                        in_v,
                        dst_v,
                        count,
                        shift,
                        mask,
                        flip,
                        starts,
                        carry_in,
                        carry_in.add(RADIX),
                        lookback.add((p * layout.tiles + first_tile) * RADIX),
                        counters.add(p * layout.portions + j),
                        tiles,
                        pass_plan.add(p),
                    ),
                )?;
            }
            std::mem::swap(&mut src_k, &mut dst_k);
            std::mem::swap(&mut src_v, &mut dst_v);
        }
        if passes % 2 == 1 && input.is_none() {
            dev.copy(keys, src_k, n64, "copying sorted keys back")?;
            if pairs {
                dev.copy(vals, src_v, n64, "copying sorted values back")?;
            }
        }
        Ok(())
    })
}
