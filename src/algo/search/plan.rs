//! Plans and launches of `kernels/search/search.cu`: the static index over
//! the sorted array and the searches down it (or a plain bisection for
//! few queries), and is_sorted_until.

use crate::algo::policy::resident_wave;
use crate::cmp::Comparator;
use crate::device::launch::KernelArg;
use crate::device::{CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::{Element, IndexElement};
use crate::error::Result;
use crate::expr::args::ExprArgs;
use crate::expr::consume::{launch_checked, write_input};
use crate::expr::node::{Leaf, Node};
use crate::jit::{template, KernelSpec, SpecWriter, Specialise, Template};
use std::marker::PhantomData;
use std::mem::size_of;

template!(
    SEARCH,
    "search/search.cu",
    ["cuprim_search_index", "cuprim_search", "cuprim_search_plain", "cuprim_sorted_until"],
    headers: [crate::algo::merge::plan::MERGE_PATH]
);

/// Threads per block of every search kernel (not swept yet).
const BLOCK: u32 = 256;
/// Queries per thread searched together, their loads overlapping (not swept yet).
const ITEMS: u32 = 4;
/// Bytes of the index's top level each block keeps in shared memory: 32 KiB
/// (8192 u32 entries: one level fewer than 16 KiB from 2^26 u32 up; not swept yet).
const TOP_BYTES: usize = 32 << 10;
/// Index levels the kernel's `SearchIndex` holds (kernels/search/search.cu: SEARCH_MAX_LEVELS).
const MAX_LEVELS: usize = 24;

/// What a search answers per query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// The first position whose element is not before the query.
    Lower,
    /// The first position whose element is after the query.
    Upper,
    /// The lower bound if it holds an equivalent element, else all ones.
    Exact,
}

/// One specialisation of the search kernels, reading the queries from an
/// input expression (a plain buffer being the simplest).
pub(crate) struct SearchKernel<'a, T, I, C, Q> {
    cmp: &'a C,
    mode: Mode,
    queries: &'a Q,
    _t: PhantomData<fn() -> (T, I)>,
}

impl<'a, T: Element, I: IndexElement, C: Comparator<T>, Q: Node<Item = T>> SearchKernel<'a, T, I, C, Q> {
    pub fn new(cmp: &'a C, mode: Mode, queries: &'a Q) -> Self {
        SearchKernel {
            cmp,
            mode,
            queries,
            _t: PhantomData,
        }
    }
}

impl<T: Element, I: IndexElement, C: Comparator<T>, Q: Node<Item = T>> Specialise for SearchKernel<'_, T, I, C, Q> {
    fn template(&self) -> &'static Template {
        &SEARCH
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        write_input(self.queries, w);
        w.elem::<I>("I");
        w.comparator::<T, C>("Cmp", "T", self.cmp);
        w.constant("CUPRIM_BLOCK", BLOCK as i64);
        w.constant("SEARCH_ITEMS", ITEMS as i64);
        w.constant("SEARCH_TOP", top_entries::<T>() as i64);
        w.constant("SEARCH_QUERIES_BUF", Q::IS_BUF as i64);
        let mode = match self.mode {
            Mode::Lower => 0,
            Mode::Upper => 1,
            Mode::Exact => 2,
        };
        w.constant("SEARCH_MODE", mode);
    }
}

/// The search modules of `T` and `cmp` (u32 and u64 indices, every mode), for precompile.
pub(crate) fn search_specs<T: Element, C: Comparator<T>>(cmp: &C) -> Vec<KernelSpec> {
    search_specs_of(cmp, &Leaf::<T>::type_only())
}

/// The search modules of queries from an input expression, for precompile.
pub(crate) fn search_specs_of<T: Element, C: Comparator<T>, Q: Node<Item = T>>(cmp: &C, queries: &Q) -> Vec<KernelSpec> {
    let mut specs = Vec::new();
    for mode in [Mode::Lower, Mode::Upper, Mode::Exact] {
        specs.push(KernelSpec::of(&SearchKernel::<T, u32, C, _>::new(cmp, mode, queries)));
        specs.push(KernelSpec::of(&SearchKernel::<T, u64, C, _>::new(cmp, mode, queries)));
    }
    specs
}

/// Entries of the top level in shared memory.
fn top_entries<T>() -> u64 {
    (TOP_BYTES / size_of::<T>()) as u64
}

/// Elements per index node: one 32-byte sector.
fn fan_out<T>() -> u64 {
    (32 / size_of::<T>()) as u64
}

/// The kernel's `SearchIndex`: level l (1..=levels) at element offset
/// at[l] of the index buffer, len[l] entries (padded to a multiple of F).
#[repr(C)]
#[derive(Clone, Copy)]
struct SearchIndex {
    at: [u64; MAX_LEVELS + 1],
    len: [u64; MAX_LEVELS + 1],
    levels: u32,
    off: u32,
}

// SAFETY: repr(C) with the fields, types and order of `SearchIndex` in
// kernels/search/search.cu (two arrays of SEARCH_MAX_LEVELS + 1 u64, two u32).
unsafe impl KernelArg for SearchIndex {}

impl SearchIndex {
    /// The levels over `n` elements starting `off` elements past a sector
    /// boundary, up to one of at most `top` entries (none when the array
    /// itself fits); and the index buffer's length in elements.
    fn plan(n: u64, off: u64, f: u64, top: u64) -> (Self, u64) {
        let mut ix = SearchIndex {
            at: [0; MAX_LEVELS + 1],
            len: [0; MAX_LEVELS + 1],
            levels: 0,
            off: off as u32,
        };
        let mut total = 0;
        if n > top {
            let mut len = (n + off).div_ceil(f);
            let mut l = 1;
            loop {
                ix.at[l] = total;
                ix.len[l] = len;
                total += len.div_ceil(f) * f;
                ix.levels = l as u32;
                if len <= top || l == MAX_LEVELS {
                    break;
                }
                len = len.div_ceil(f);
                l += 1;
            }
        }
        (ix, total)
    }
}

/// Whether an index pays for `m` queries into `n` elements of `T`: its
/// build reads about every sector of the array once, where a bisection
/// reads about log2(n) - 10 sectors per query below what stays in L1.
fn worth_an_index<T>(n: u64, m: u64) -> bool {
    let below_l1 = (64 - n.leading_zeros() as u64).saturating_sub(10).max(1);
    m.saturating_mul(below_l1 * 32) >= n.saturating_mul(size_of::<T>() as u64)
}

/// The kernel's `m` queries (its expression, m >= 1) into the `n` sorted
/// elements at `data` (n >= 1), answered as `kernel` says, to `out`. Queries
/// that permute are bounds-checked (the call then waits for the GPU).
pub(crate) fn search<T: Element, I: IndexElement, C: Comparator<T>, Q: Node<Item = T>>(
    dev: &CudaDevice,
    kernel: &SearchKernel<'_, T, I, C, Q>,
    data: Ptr<T>,
    n: u64,
    out: Ptr<I>,
) -> Result<()> {
    let (queries, m) = (kernel.queries, kernel.queries.length() as u64);
    let module = dev.module(kernel)?;
    let f = fan_out::<T>();
    let top = top_entries::<T>();
    if n > top && !worth_an_index::<T>(n, m) {
        return search_plain(dev, &module, data, n, queries, out);
    }
    let off = (data.raw() % 32) / size_of::<T>() as u64;
    let (ix, index_len) = SearchIndex::plan(n, off, f, top);
    if ix.levels > 0 && ix.len[ix.levels as usize] > top {
        // More levels than the kernel holds (no memory is that large): bisect.
        return search_plain(dev, &module, data, n, queries, out);
    }
    // SAFETY: matches `cuprim_search_index(const T* data, u64 n, T* index, SearchIndex ix)`: reads n
    // elements, writes the index_len entries of ix's levels.
    let build: Entry<(Ptr<T>, u64, Ptr<T>, SearchIndex)> = unsafe { Entry::declare("cuprim_search_index") };
    // SAFETY: matches `cuprim_search(const T* data, u64 n, const T* index, SearchIndex ix, const In
    // queries, u64 m, I* out)`, `In` the struct whose fields ExprArgs holds (for a plain buffer the
    // parameter is `const T* queries`, its first 8 bytes: the same pointer): reads n elements, the index
    // and m queries, writes m answers.
    let entry: Entry<(Ptr<T>, u64, Ptr<T>, SearchIndex, ExprArgs, u64, Ptr<I>)> = unsafe { Entry::declare("cuprim_search") };
    let mut layout = ScratchLayout::new();
    let index = layout.uninit_aligned::<T>(index_len.max(1));
    let blocks = grid(dev, &module, entry, m.div_ceil(ITEMS as u64))?;
    dev.with_scratch(&layout, |s| {
        let index = s.at(index);
        if ix.levels > 0 {
            let bblocks = grid(dev, &module, build, ix.len[1].div_ceil(f) * f)?;
            dev.launch(&module, build, Grid::new(bblocks, BLOCK), (data, n, index, ix))?;
        }
        launch_checked(dev, queries, |q| {
            dev.launch(&module, entry, Grid::new(blocks, BLOCK), (data, n, index, ix, q, m, out))
        })
    })
}

/// The searches without an index: each query bisects the array.
fn search_plain<T: Element, I: IndexElement, Q: Node<Item = T>>(
    dev: &CudaDevice,
    module: &crate::device::Module,
    data: Ptr<T>,
    n: u64,
    queries: &Q,
    out: Ptr<I>,
) -> Result<()> {
    // SAFETY: matches `cuprim_search_plain(const T* data, u64 n, const In queries, u64 m, I* out)`, `In`
    // the struct whose fields ExprArgs holds (a plain buffer's parameter is its pointer, the first 8
    // bytes): reads n elements and m queries, writes m answers.
    let plain: Entry<(Ptr<T>, u64, ExprArgs, u64, Ptr<I>)> = unsafe { Entry::declare("cuprim_search_plain") };
    let m = queries.length() as u64;
    let blocks = grid(dev, module, plain, m)?;
    launch_checked(dev, queries, |q| {
        dev.launch(module, plain, Grid::new(blocks, BLOCK), (data, n, q, m, out))
    })
}

/// Blocks for `items` work items of one thread each, at most one resident
/// wave (the kernels loop over the rest).
fn grid<A: crate::device::launch::Args>(dev: &CudaDevice, module: &crate::device::Module, entry: Entry<A>, items: u64) -> Result<u32> {
    resident_wave(dev, module, entry, BLOCK, items.div_ceil(BLOCK as u64))
}

/// The least i >= 1 with `cmp.less(x[i], x[i - 1])` among the `n` elements at
/// `data`, or n.
pub(crate) fn sorted_until<T: Element, C: Comparator<T>>(dev: &CudaDevice, cmp: &C, data: Ptr<T>, n: u64) -> Result<u64> {
    if n < 2 {
        return Ok(n);
    }
    let module = dev.module(&SearchKernel::<T, u32, C, _>::new(cmp, Mode::Lower, &Leaf::<T>::type_only()))?;
    // SAFETY: matches `cuprim_sorted_until(const T* in, u64 n, u64* best_inv)`: reads n elements, updates
    // one u64 (zeroed before the launch).
    let entry: Entry<(Ptr<T>, u64, Ptr<u64>)> = unsafe { Entry::declare("cuprim_sorted_until") };
    let mut layout = ScratchLayout::new();
    let best = layout.zeroed::<u64>(1);
    let blocks = grid(dev, &module, entry, n - 1)?;
    dev.with_scratch(&layout, |s| {
        dev.launch(&module, entry, Grid::new(blocks, BLOCK), (data, n, s.at(best)))?;
        let inv = u64::from_le_bytes(dev.read_back::<8>(s.at(best).raw(), "reading is_sorted_until")?);
        Ok(if inv == 0 { n } else { !inv })
    })
}
