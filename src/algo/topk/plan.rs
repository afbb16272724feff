//! Plans and launches of `kernels/topk/topk.cu`: the device-wide radix
//! select (one launch per digit, the bucket chosen on the device by each
//! pass's last block), the final sort of the k chosen, the one-block-per-
//! segment selection, and partial_sort's other elements.

use crate::algo::policy::resident_wave;
use crate::algo::sort::plan::RADIX_SORT_COMMON;
use crate::algo::sort::sort_pairs_device;
use crate::device::launch::KernelArg;
use crate::device::{Counter, CudaDevice, Entry, Grid, Module, Ptr, ScratchLayout};
use crate::element::{Element, IndexElement};
use crate::error::Result;
use crate::expr::args::ExprArgs;
use crate::expr::node::Node;
use crate::expr::Leaf;
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use std::marker::PhantomData;
use std::mem::size_of;
use std::sync::Arc;

template!(
    TOPK,
    "topk/topk.cu",
    [
        "cuprim_topk_sample",
        "cuprim_topk_filter",
        "cuprim_topk_pass",
        "cuprim_topk_sort_small",
        "cuprim_topk_finish",
        "cuprim_topk_segments",
        "cuprim_topk_rest"
    ],
    headers: [RADIX_SORT_COMMON]
);

// The same file specialised on an input expression (CUPRIM_TOPK_X): no
// cuprim_topk_rest (partial_sort works on a buffer).
template!(
    TOPK_X,
    "topk/topk.cu",
    [
        "cuprim_topk_sample",
        "cuprim_topk_filter",
        "cuprim_topk_pass",
        "cuprim_topk_sort_small",
        "cuprim_topk_finish",
        "cuprim_topk_segments"
    ],
    headers: [RADIX_SORT_COMMON]
);

/// Threads per block of every top-k kernel (one digit bucket per thread and pass of the choice: 2048 / 256 = 8).
const BLOCK: u32 = 256;
/// Digit width: 2048 buckets, AIR Top-K's first-pass width (not swept yet).
const RADIX_BITS: u32 = 11;
/// Candidates one segment block keeps in shared memory (16 KiB of u32 pairs; with 64-bit keys the block's static shared memory is 46 KiB).
const SEG_CAND: u32 = 2048;
/// The most picks per segment the one-block kernel takes (its winners sit in shared memory).
pub(crate) const SEG_KMAX: usize = 1024;
/// The most picks sorted by one block in shared memory; more go through the radix sort.
const SORT_SMALL_MAX: usize = 2048;
/// Inputs up to this many elements (with k <= SEG_KMAX, u32 indices) are selected by one block.
pub(crate) const ONE_BLOCK_MAX: usize = 1 << 14;
/// Samples per thread of the window's one block of SAMPLE_THREADS (8192 in all, in registers).
const SAMPLE_ITEMS: u32 = 8192 / SAMPLE_THREADS;
/// The window's block (kernels/topk/topk.cu: CUPRIM_SAMPLE_THREADS). 256
/// threads of 32 samples each took 1.5-2 us more per call at 2^20 (i18, H100).
const SAMPLE_THREADS: u32 = 1024;
/// Elements sampled for the window over `n`: one per 512 within [2048,
/// 8192] (SAMPLE_ITEMS rows of the block at most), whole rows of the block. At 2^20 the full 8192 cost the
/// one-block sample more (its scattered loads and counts) than the tighter
/// window saved the finish (H100).
fn samples_for(n: u64) -> u64 {
    let rows = (n / 512 / SAMPLE_THREADS as u64).clamp(2048 / SAMPLE_THREADS as u64, SAMPLE_ITEMS as u64);
    rows * SAMPLE_THREADS as u64
}
/// Threads of the one-block sort (kernels/topk/topk.cu: TOPK_SORT_THREADS).
const SORT_THREADS: u32 = 1024;
/// Threads of the window's finish (kernels/topk/topk.cu: TOPK_FINISH_THREADS).
const FINISH_THREADS: u32 = 512;
/// Window candidates per thread of the finish, in registers: 32 keys of 4
/// bytes, 16 of 8 (more spill at 512 threads' 128 registers).
fn finish_items<T>() -> u32 {
    if key_bytes::<T>() == 8 {
        16
    } else {
        32
    }
}

/// The top-k module of elements `T` and indices `I`; with an `input`, the
/// module whose kernels read that expression (of items `T`) where the
/// buffer module's read the input buffer.
pub(crate) struct TopkKernel<'a, T, I, X = Leaf<'static, T>> {
    input: Option<&'a X>,
    _t: PhantomData<fn() -> (T, I)>,
}

impl<T: Element, I: IndexElement> TopkKernel<'static, T, I> {
    pub fn new() -> Self {
        TopkKernel {
            input: None,
            _t: PhantomData,
        }
    }
}

impl<'a, T: Element, I: IndexElement> TopkKernel<'a, T, I> {
    /// The module of the expression `input`.
    pub fn of_input<X: Node<Item = T>>(input: &'a X) -> TopkKernel<'a, T, I, X> {
        TopkKernel {
            input: Some(input),
            _t: PhantomData,
        }
    }
}

impl<T: Element, I: IndexElement, X: Node> Specialise for TopkKernel<'_, T, I, X> {
    fn template(&self) -> &'static Template {
        if self.input.is_some() {
            &TOPK_X
        } else {
            &TOPK
        }
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        w.constant("CUPRIM_BLOCK", BLOCK as i64);
        w.constant("CUPRIM_RADIX_BITS", RADIX_BITS as i64);
        w.constant("CUPRIM_SEG_CAND", SEG_CAND as i64);
        w.constant("CUPRIM_SEG_KMAX", SEG_KMAX as i64);
        w.constant("CUPRIM_SAMPLE_ITEMS", SAMPLE_ITEMS as i64);
        w.constant("CUPRIM_SAMPLE_THREADS", SAMPLE_THREADS as i64);
        w.constant("CUPRIM_FINISH_ITEMS", finish_items::<T>() as i64);
        w.elem::<T>("T");
        w.elem::<I>("I");
        w.typedef("K", "T");
        w.typedef("V", "I");
        // Written only for an expression, so the buffer modules keep their text.
        if let Some(x) = self.input {
            w.constant("CUPRIM_TOPK_X", 1);
            let root = x.write_type(w, &mut 0);
            w.piece(root, |root| format!("typedef cuprim_e{root} TopkIn;"));
        }
    }
}

/// Both index widths of elements `T`, for precompile and the compile checks.
pub(crate) fn topk_specs<T: Element>() -> Vec<KernelSpec> {
    vec![
        KernelSpec::of(&TopkKernel::<T, u32>::new()),
        KernelSpec::of(&TopkKernel::<T, u64>::new()),
    ]
}

/// Both index widths of the modules reading the expression `input`.
pub(crate) fn topk_specs_of<X: Node>(input: &X) -> Vec<KernelSpec>
where
    X::Item: Element,
{
    vec![
        KernelSpec::of(&TopkKernel::<X::Item, u32>::of_input(input)),
        KernelSpec::of(&TopkKernel::<X::Item, u64>::of_input(input)),
    ]
}

/// What the selection kernels read: a buffer (`const T* in`), or an input
/// expression (`TopkIn in`, its kernel parameter written with the error
/// flag by the caller's bounds check). The module and the kernels' first
/// parameter come from one place, so they always agree.
pub(crate) trait Source<T: Element>: Copy {
    /// The kernels' first parameter.
    type Arg: KernelArg + Copy;
    /// Its value.
    fn arg(&self) -> Self::Arg;
    /// The module with indices `I` whose kernels take [`Self::Arg`].
    fn module<I: IndexElement>(&self, dev: &CudaDevice) -> Result<Arc<Module>>;
    /// Element `start` on: a buffer's address moved. An expression is
    /// only ever selected as one row (start 0; see `top_k_segments`).
    fn offset(&self, start: u64) -> Self;
}

impl<T: Element> Source<T> for Ptr<T> {
    type Arg = Ptr<T>;
    fn arg(&self) -> Ptr<T> {
        *self
    }
    fn module<I: IndexElement>(&self, dev: &CudaDevice) -> Result<Arc<Module>> {
        dev.module(&TopkKernel::<T, I>::new())
    }
    fn offset(&self, start: u64) -> Self {
        self.add(start)
    }
}

/// An input expression and its kernel parameter.
pub(crate) struct Expression<'a, X> {
    pub input: &'a X,
    pub args: ExprArgs,
}

impl<X> Clone for Expression<'_, X> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<X> Copy for Expression<'_, X> {}

impl<X: Node> Source<X::Item> for Expression<'_, X>
where
    X::Item: Element,
{
    type Arg = ExprArgs;
    fn arg(&self) -> ExprArgs {
        self.args
    }
    fn module<I: IndexElement>(&self, dev: &CudaDevice) -> Result<Arc<Module>> {
        dev.module(&TopkKernel::<X::Item, I>::of_input(self.input))
    }
    fn offset(&self, _start: u64) -> Self {
        *self
    }
}

/// The kernel's `TopkDigit`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Digit {
    part: u32,
    shift: u32,
    bits: u32,
}

/// The kernel's `TopkPass`, field for field.
#[repr(C)]
#[derive(Clone, Copy)]
struct Pass {
    cur: Digit,
    next: Digit,
    first: u32,
    last: u32,
    flip: u64,
    value_only: u32,
    filtered: u32,
    k: u64,
    cap: u64,
}

// SAFETY: `Digit` and `Pass` are repr(C) with the fields, types and order
// of `TopkDigit` and `TopkPass` in kernels/topk/topk.cu.
unsafe impl KernelArg for Pass {}

/// Bytes of the kernel's `TopkState`: the key, the prefix (4 x u64), need,
/// alive, winners, two candidate counts, four u32 flags, the window (2 x
/// u64), 2^RADIX_BITS u64 counts.
const STATE_BYTES: u64 = 8 + 32 + 24 + 16 + 16 + 16 + 8 * (1 << RADIX_BITS);

/// The digits selected on, from the top: the key's bits, then (unless
/// `key_only`) the index's.
fn digits<T: Element, I: Element>(key_only: bool) -> Vec<Digit> {
    let mut out = Vec::new();
    let parts: &[(u32, u32)] = &[(0, 8 * size_of::<T>() as u32), (1, 8 * size_of::<I>() as u32)];
    for &(part, width) in &parts[..if key_only { 1 } else { 2 }] {
        let mut top = width;
        while top > 0 {
            let bits = top.min(RADIX_BITS);
            out.push(Digit {
                part,
                shift: top - bits,
                bits,
            });
            top -= bits;
        }
    }
    out
}

/// The XOR that turns the smallest-first order into the largest-first one
/// on the key's ordered bits.
pub(crate) fn flip<T>(smallest: bool) -> u64 {
    if smallest {
        u64::MAX >> (64 - 8 * size_of::<T>())
    } else {
        0
    }
}

/// Bytes of a key's ordered form in the kernels (`KR`: 32 bits up to 4-byte keys).
fn key_bytes<T>() -> u32 {
    if size_of::<T>() == 8 {
        8
    } else {
        4
    }
}

/// One wave of `entry`'s blocks over `n` elements (at least four each per
/// thread), as the grid-stride kernels take them.
fn wave<A: crate::device::launch::Args>(dev: &CudaDevice, module: &crate::device::Module, entry: Entry<A>, n: u64) -> Result<u32> {
    resident_wave(dev, module, entry, BLOCK, n.div_ceil(BLOCK as u64 * 4))
}

/// Where the k chosen go: values and indices, `k` of each.
pub(crate) struct Picks<T, I> {
    pub values: Ptr<T>,
    pub indices: Ptr<I>,
}

/// The window's ranks in a sample of `samples` (cuprim_topk_sample): `lo`
/// is the r_lo-th largest sample, `hi` the r_hi-th (0: no upper bound).
/// About lambda = k * samples / n samples lie above the k-th of the order
/// (binomially: variance lambda (1 - k / n)); the ranks sit four standard
/// deviations (and two) either side, so the k-th falls outside the window
/// about once in 10^5 inputs of random order, and then the passes run on
/// the whole input instead. (topk_window_lo in the kernel is the same.)
fn window_ranks(n: u64, k: u64, samples: u64) -> (u64, u64) {
    let p = k as f64 / n as f64;
    let lambda = p * samples as f64;
    let spread = 4.0 * (lambda * (1.0 - p)).sqrt();
    let r_lo = (lambda + spread).ceil() as u64 + 2;
    let r_hi = (lambda - spread - 2.0).floor().max(0.0) as u64;
    (r_lo, r_hi)
}

/// A one-block sort's launch over `p2` pairs of `KR` keys and `I` indices
/// in dynamic shared memory (the indices from the next 16-byte boundary).
fn sort_grid<T, I>(p2: u32, threads: u32) -> Grid {
    let mut grid = Grid::new(1, threads);
    grid.shared = (p2 * key_bytes::<T>()).next_multiple_of(16) + p2 * size_of::<I>() as u32;
    grid
}

/// What a selection left: for a value, the k-th's ordered key bits (XOR
/// `flip`); for picks, whether they are already in order.
struct Selected {
    key: u64,
    sorted: bool,
}

/// Radix select over the `n` elements at `input` (n >= 1, 1 <= k <= n):
/// with `picks`, writes the k first of the order there; without, finds the
/// k-th's ordered key bits.
///
/// Inputs of 2 x samples_for(n) elements or more are first filtered through a
/// sampled window (`cuprim_topk_sample`, `cuprim_topk_filter`: one read),
/// with candidate buffers sized to the window. `cuprim_topk_finish`, queued
/// behind the filter, judges the window from the filter's counts, writes
/// the verdict straight to the host (for picks as it starts: the host
/// waits for that word, not for the stream; a value waits for the stream)
/// and, when the candidates are few, selects and sorts them in one block;
/// more candidates go through the passes. When the window
/// missed the k-th (or kept more than its buffers hold) the passes run on
/// the input, with buffers for a sixth of it.
fn radix_select<T: Element, I: IndexElement, S: Source<T>>(
    dev: &CudaDevice,
    input: S,
    n: usize,
    k: usize,
    smallest: bool,
    picks: Option<&Picks<T, I>>,
) -> Result<Selected> {
    let n64 = n as u64;
    // Candidates are stored when at most ~1/6 of the input is still in the
    // running (writing and re-reading them then costs less than a re-read
    // of the input: 2 x 8 B per candidate against 4 B per element).
    let cap = (n64 / 6 + 4096).min(n64);
    let samples = samples_for(n64);
    let (r_lo, r_hi) = window_ranks(n64, k as u64, samples);
    // The window's expected candidates; it is worth a read when they are
    // few. Its buffers hold four times as many (the count's spread is about
    // a third of it at r_lo = 3), and a few more.
    let expected = (r_lo.min(samples + 1) - r_hi) * (n64 / samples);
    let mut window = (n64 >= 2 * samples && expected <= cap / 2).then(|| Window {
        samples,
        r_lo,
        r_hi,
        cap: (4 * expected + (1 << 16)).min(cap),
    });
    // At most twice: through the window, then (if it missed) over the input,
    // which always selects.
    loop {
        if let Some(sel) = select_once::<T, I, S>(dev, input, n, k, smallest, picks, window.take())? {
            return Ok(sel);
        }
    }
}

/// A sampled window: the ranks of its ends in the sample, and the
/// candidates its buffers hold.
struct Window {
    samples: u64,
    r_lo: u64,
    r_hi: u64,
    cap: u64,
}

/// One attempt of [`radix_select`]: through `window`, or (None) the passes
/// over the input. Returns None when the window missed.
fn select_once<T: Element, I: IndexElement, S: Source<T>>(
    dev: &CudaDevice,
    input: S,
    n: usize,
    k: usize,
    smallest: bool,
    picks: Option<&Picks<T, I>>,
    window: Option<Window>,
) -> Result<Option<Selected>> {
    let module = input.module::<I>(dev)?;
    // SAFETY (each): the module is the source's, whose kernels take S::Arg as
    // `in` (`const T*` for a buffer, the struct the ExprArgs hold for an
    // expression's `TopkIn`, of n items T).
    // SAFETY: matches `cuprim_topk_pass(const T* in, u64 n, KR* ckeys, I* cidx, T* out_vals, I* out_idx,
    // TopkState* st, u32* ticket, TopkPass ps)`: reads n elements of `in` (or the candidates counted in the
    // state), writes at most ps.cap candidates to each of the two halves of ckeys / cidx, at most k picks to
    // out_vals / out_idx (none when ps.value_only), and the state.
    let entry: Entry<(S::Arg, u64, Ptr<u8>, Ptr<I>, Ptr<T>, Ptr<I>, Ptr<u8>, Ptr<u32>, Pass)> =
        unsafe { Entry::declare("cuprim_topk_pass") };
    // SAFETY: matches `cuprim_topk_filter` (the pass's parameters but the ticket): as above, candidates to
    // the first half only.
    let filter: Entry<(S::Arg, u64, Ptr<u8>, Ptr<I>, Ptr<T>, Ptr<I>, Ptr<u8>, Pass)> = unsafe { Entry::declare("cuprim_topk_filter") };
    // SAFETY: matches `cuprim_topk_sample(const T* in, u64 n, u64 samples, TopkState* st, u64 r_lo, u64 r_hi,
    // u64 flip)`: one block reads `samples` elements of `in` (n >= 2 * samples, samples a multiple of
    // SAMPLE_THREADS, at most SAMPLE_ITEMS of them) and clears and writes the state.
    let sample: Entry<(S::Arg, u64, u64, Ptr<u8>, u64, u64, u64)> = unsafe { Entry::declare("cuprim_topk_sample") };
    // SAFETY: matches `cuprim_topk_finish(const KR* ckeys, const I* cidx, u32 max_count, u32 p2, u64 k, T*
    // out_vals, I* out_idx, TopkState* st, u64 cap, u64 flip, u32 value_only, u64* verdict, u64 tag)`: reads
    // at most max_count candidates (the state's count), sorts at most p2 pairs in dynamic shared memory,
    // writes at most k picks, the state and verdict[0..3] (verdict[3] for a value), or with a tag only
    // verdict[0].
    let finish: Entry<(Ptr<u8>, Ptr<I>, u32, u32, u64, Ptr<T>, Ptr<I>, Ptr<u8>, u64, u64, u32, Ptr<u8>, u64)> =
        unsafe { Entry::declare("cuprim_topk_finish") };
    let n64 = n as u64;
    let cap = window.as_ref().map_or((n64 / 6 + 4096).min(n64), |w| w.cap);
    let mut layout = ScratchLayout::new();
    // A window's sample kernel clears the state itself (no memset queued).
    let state = if window.is_some() {
        layout.uninit::<u8>(STATE_BYTES)
    } else {
        layout.zeroed::<u8>(STATE_BYTES)
    };
    let verdict = layout.uninit::<u64>(4);
    let ckeys = layout.uninit_aligned::<u8>(2 * cap * key_bytes::<T>() as u64);
    let cidx = layout.uninit_aligned::<I>(2 * cap);
    let value_only = picks.is_none();
    let ds = digits::<T, I>(value_only);
    let ticket = dev.counter(Counter::TopkTicket);
    let flip = flip::<T>(smallest);
    let (vals, idx) = picks.map_or((Ptr::null(), Ptr::null()), |p| (p.values, p.indices));
    let pass = |j: usize| Pass {
        cur: if j > 0 { ds[j - 1] } else { Digit::default() },
        next: ds.get(j).copied().unwrap_or_default(),
        first: (j == 0) as u32,
        last: (j + 1 == ds.len()) as u32,
        flip,
        value_only: value_only as u32,
        filtered: window.is_some() as u32,
        k: k as u64,
        cap,
    };
    // Candidates the finish takes: its registers' worth (a power of two),
    // at most the largest power of two of pairs its shared memory holds.
    let pair = (key_bytes::<T>() + size_of::<I>() as u32) as u64;
    let finish_max = ((finish_items::<T>() * FINISH_THREADS) as u64).min(1 << (dev.shared_optin() as u64 / pair).ilog2());
    dev.with_scratch(&layout, |s| {
        let st = s.at(state);
        let read_key = || Ok(u64::from_le_bytes(dev.read_back::<8>(st.raw(), "reading the selected key")?));
        let args = |ps: Pass| (input.arg(), n64, s.at(ckeys), s.at(cidx), vals, idx, st, ticket, ps);
        // The elements the passes read: the input, or the window's candidates.
        let mut count = n64;
        if let Some(w) = &window {
            let fblocks = wave(dev, &module, filter, n64)?;
            // The finish is queued behind the filter and judges the window
            // itself (nothing more to do unless it holds the k-th among at
            // most finish_max candidates), so the host waits once, for both.
            let p2 = finish_max as u32;
            let mut fgrid = sort_grid::<T, I>(p2, FINISH_THREADS);
            if value_only {
                fgrid.shared = 0; // a value needs no sort
            }
            let queue = |out: Ptr<u8>, tag: u64| {
                dev.launch(
                    &module,
                    sample,
                    Grid::new(1, SAMPLE_THREADS),
                    (input.arg(), n64, w.samples, st, w.r_lo, w.r_hi, flip),
                )?;
                let (a0, a1, a2, a3, a4, a5, a6, _, a8) = args(pass(0));
                dev.launch(&module, filter, Grid::new(fblocks, BLOCK), (a0, a1, a2, a3, a4, a5, a6, a8))?;
                let fargs = (
                    s.at(ckeys),
                    s.at(cidx),
                    finish_max as u32,
                    p2,
                    k as u64,
                    vals,
                    idx,
                    st,
                    cap,
                    flip,
                    value_only as u32,
                    out,
                    tag,
                );
                dev.launch(&module, finish, fgrid, fargs)
            };
            let what = "reading the top-k window's count";
            // (the window held the k-th, candidates, no winners above it, the k-th's key)
            let (fast, kept, sorted, key) = if value_only {
                // A value is known once the finish ends: wait for it.
                let v = dev.result_to_host::<32>(s.at(verdict).cast(), what, |out| queue(out, 0))?;
                let word = |i: usize| u64::from_le_bytes(v[8 * i..8 * i + 8].try_into().expect("8 bytes"));
                (word(2) != 0, word(1), word(0) == 0, word(3))
            } else {
                // Picks: the finish signals its verdict as it starts, and
                // the host goes on while it selects.
                let p = dev.signal_to_host(s.at(verdict).cast(), what, queue)?;
                ((p >> 40) & 1 != 0, p & ((1 << 40) - 1), (p >> 41) & 1 != 0, 0)
            };
            if !fast {
                return Ok(None);
            }
            if kept <= finish_max {
                return Ok(Some(Selected { key, sorted }));
            }
            count = kept;
        }
        // Pass j histograms digit j (j < D) and, for j > 0, sorts by digit
        // j - 1; pass D only takes the last bucket (not needed for a value).
        let blocks = wave(dev, &module, entry, count)?;
        let passes = if value_only { ds.len() } else { ds.len() + 1 };
        for j in 0..passes {
            dev.launch(&module, entry, Grid::new(blocks, BLOCK), args(pass(j)))?;
        }
        let key = if value_only { read_key()? } else { 0 };
        Ok(Some(Selected { key, sorted: false }))
    })
}

/// The k first of the order among the `n` elements at `input` (1 <= k <=
/// n), sorted, into `picks`.
pub(crate) fn top_k<T: Element, I: IndexElement, S: Source<T>>(
    dev: &CudaDevice,
    input: S,
    n: usize,
    k: usize,
    smallest: bool,
    picks: &Picks<T, I>,
) -> Result<()> {
    if radix_select::<T, I, S>(dev, input, n, k, smallest, Some(picks))?.sorted {
        return Ok(());
    }
    if k <= SORT_SMALL_MAX {
        let module = input.module::<I>(dev)?;
        // SAFETY: matches `cuprim_topk_sort_small(T* vals, I* idx, u32 k, u32 p2, u64 flip)`: sorts k
        // pairs in place through p2 pairs of dynamic shared memory.
        let entry: Entry<(Ptr<T>, Ptr<I>, u32, u32, u64)> = unsafe { Entry::declare("cuprim_topk_sort_small") };
        let p2 = k.next_power_of_two().max(2) as u32;
        dev.launch(
            &module,
            entry,
            sort_grid::<T, I>(p2, SORT_THREADS),
            (picks.values, picks.indices, k as u32, p2, flip::<T>(smallest)),
        )
    } else {
        // Index order first, then a stable sort by value: ties keep it.
        sort_pairs_device::<I, T>(dev, picks.indices, picks.values, k, false)?;
        sort_pairs_device::<T, I>(dev, picks.values, picks.indices, k, !smallest)
    }
}

/// The ordered key bits (XOR the flip) of the k-th of the order (1 <= k <= n).
pub(crate) fn select_key<T: Element, S: Source<T>>(dev: &CudaDevice, input: S, n: usize, k: usize, smallest: bool) -> Result<u64> {
    let sel = if n as u64 > u32::MAX as u64 {
        radix_select::<T, u64, S>(dev, input, n, k, smallest, None)?
    } else {
        radix_select::<T, u32, S>(dev, input, n, k, smallest, None)?
    };
    Ok(sel.key)
}

/// How the one-block kernel finds its segments.
pub(crate) enum Segments {
    /// `rows` rows of `cols` elements.
    Rows { rows: usize, cols: usize },
    /// `count` segments between the `count + 1` offsets at `offsets`.
    Offsets { count: usize, offsets: Ptr<u64> },
}

/// The k first of each segment (k <= SEG_KMAX and k <= every segment's
/// length < 2^32), sorted, k per segment.
pub(crate) fn top_k_segments<T: Element, S: Source<T>>(
    dev: &CudaDevice,
    input: S,
    segments: &Segments,
    k: usize,
    smallest: bool,
    picks: &Picks<T, u32>,
) -> Result<()> {
    let module = input.module::<u32>(dev)?;
    // SAFETY: the source's module and parameter (see select_once); matches `cuprim_topk_segments(const T* in, const u64* offsets, u64 cols, u32 k, T* out_vals,
    // u32* out_idx, u64 flip)`: block s reads segment s (offsets[s]..offsets[s + 1], or row s of cols)
    // and writes k values and indices at s * k.
    let entry: Entry<(S::Arg, Ptr<u64>, u64, u32, Ptr<T>, Ptr<u32>, u64)> = unsafe { Entry::declare("cuprim_topk_segments") };
    let (count, offsets, cols) = match *segments {
        Segments::Rows { rows, cols } => (rows, Ptr::null(), cols as u64),
        Segments::Offsets { count, offsets } => (count, offsets, 0),
    };
    let flip = flip::<T>(smallest);
    // One launch per 2^31 - 1 segments (the grid's limit).
    let most = (1usize << 31) - 1;
    let mut first = 0;
    while first < count {
        let c = (count - first).min(most);
        let (inp, offs) = match segments {
            Segments::Rows { cols, .. } => (input.offset((first * cols) as u64), offsets),
            Segments::Offsets { .. } => (input, offsets.add(first as u64)),
        };
        let out = (picks.values.add((first * k) as u64), picks.indices.add((first * k) as u64));
        dev.launch(
            &module,
            entry,
            Grid::new(c as u32, BLOCK),
            (inp.arg(), offs, cols, k as u32, out.0, out.1, flip),
        )?;
        first += c;
    }
    Ok(())
}

/// partial_sort's other elements: every element of `input` after the
/// threshold (the k-th of the smallest-first order, at `tval` / `tidx`),
/// written from `out` on (any order).
pub(crate) fn write_rest<T: Element, I: IndexElement>(
    dev: &CudaDevice,
    input: Ptr<T>,
    n: usize,
    threshold: (Ptr<T>, Ptr<I>),
    out: Ptr<T>,
) -> Result<()> {
    let module = dev.module(&TopkKernel::<T, I>::new())?;
    // SAFETY: matches `cuprim_topk_rest(const T* in, u64 n, const T* tval, const I* tidx, T* out,
    // u64* counter, u64 flip)`: reads n elements and one threshold pair, writes the elements after the
    // threshold (n - k of them) to out.
    let entry: Entry<(Ptr<T>, u64, Ptr<T>, Ptr<I>, Ptr<T>, Ptr<u8>, u64)> = unsafe { Entry::declare("cuprim_topk_rest") };
    let mut layout = ScratchLayout::new();
    let counter = layout.zeroed::<u64>(1);
    let blocks = wave(dev, &module, entry, n as u64)?;
    dev.with_scratch(&layout, |s| {
        let args = (
            input,
            n as u64,
            threshold.0,
            threshold.1,
            out,
            s.at(counter).cast::<u8>(),
            flip::<T>(true),
        );
        dev.launch(&module, entry, Grid::new(blocks, BLOCK), args)
    })
}
