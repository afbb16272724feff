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
use crate::expr::consume::launch_checked2;
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
/// The same with an expression as the sorted side: its element loads of a
/// query's last group need more registers (4 spilled 4-8 bytes for u64
/// counting sequences on sm_90, NVRTC 13).
const ITEMS_SORTED_EXPR: u32 = 2;

/// Queries per thread for a sorted side of type `S`.
fn items<S: Node>() -> u32 {
    if S::IS_BUF {
        ITEMS
    } else {
        ITEMS_SORTED_EXPR
    }
}
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

/// One specialisation of the search kernels, reading the queries and the
/// sorted side from input expressions (plain buffers being the simplest).
pub(crate) struct SearchKernel<'a, T, I, C, Q, S> {
    cmp: &'a C,
    mode: Mode,
    queries: &'a Q,
    sorted: &'a S,
    _t: PhantomData<fn() -> (T, I)>,
}

impl<'a, T: Element, I: IndexElement, C: Comparator<T>, Q: Node<Item = T>, S: Node<Item = T>> SearchKernel<'a, T, I, C, Q, S> {
    pub fn new(cmp: &'a C, mode: Mode, queries: &'a Q, sorted: &'a S) -> Self {
        SearchKernel {
            cmp,
            mode,
            queries,
            sorted,
            _t: PhantomData,
        }
    }
}

impl<T: Element, I: IndexElement, C: Comparator<T>, Q: Node<Item = T>, S: Node<Item = T>> Specialise for SearchKernel<'_, T, I, C, Q, S> {
    fn template(&self) -> &'static Template {
        &SEARCH
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        let mut next = 0;
        let q = self.queries.write_type(w, &mut next);
        w.piece(q, |q| format!("typedef cuprim_e{q} In;\ntypedef In::item T;"));
        if !S::IS_BUF {
            // A buffer is read through its pointer (its module's text as
            // before expressions could be sorted sides).
            let s = self.sorted.write_type(w, &mut next);
            w.piece(s, |s| format!("typedef cuprim_e{s} InS;"));
        }
        w.constant("SEARCH_SORTED_BUF", S::IS_BUF as i64);
        w.elem::<I>("I");
        w.comparator::<T, C>("Cmp", "T", self.cmp);
        w.constant("CUPRIM_BLOCK", BLOCK as i64);
        w.constant("SEARCH_ITEMS", items::<S>() as i64);
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
    search_specs_of(cmp, &Leaf::<T>::type_only(), &Leaf::<T>::type_only())
}

/// The search modules of queries and a sorted side from input expressions
/// (buffers for either), for precompile.
pub(crate) fn search_specs_of<T: Element, C: Comparator<T>, Q: Node<Item = T>, S: Node<Item = T>>(
    cmp: &C,
    queries: &Q,
    sorted: &S,
) -> Vec<KernelSpec> {
    let mut specs = Vec::new();
    for mode in [Mode::Lower, Mode::Upper, Mode::Exact] {
        specs.push(KernelSpec::of(&SearchKernel::<T, u32, C, _, _>::new(cmp, mode, queries, sorted)));
        specs.push(KernelSpec::of(&SearchKernel::<T, u64, C, _, _>::new(cmp, mode, queries, sorted)));
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

/// The kernel's `m` queries (its expression, m >= 1) into its sorted side
/// (n >= 1 elements; a buffer starts `off` elements past a 32-byte sector
/// boundary, an expression at 0), answered as `kernel` says, to `out`.
/// Inputs that permute are bounds-checked (the call then waits for the GPU).
pub(crate) fn search<T: Element, I: IndexElement, C: Comparator<T>, Q: Node<Item = T>, S: Node<Item = T>>(
    dev: &CudaDevice,
    kernel: &SearchKernel<'_, T, I, C, Q, S>,
    off: u64,
    out: Ptr<I>,
) -> Result<()> {
    let (queries, m) = (kernel.queries, kernel.queries.length() as u64);
    let (sorted, n) = (kernel.sorted, kernel.sorted.length() as u64);
    let module = dev.module(kernel)?;
    let f = fan_out::<T>();
    let top = top_entries::<T>();
    // SAFETY: matches `cuprim_search_plain(const InS data, u64 n, const In queries, u64 m, I* out)`,
    // `In` / `InS` the structs whose fields the ExprArgs hold (a plain buffer's parameter is its pointer,
    // the first 8 bytes): reads n elements and m queries, writes m answers.
    let plain: Entry<(ExprArgs, u64, ExprArgs, u64, Ptr<I>)> = unsafe { Entry::declare("cuprim_search_plain") };
    let bisect = || -> Result<()> {
        let blocks = grid(dev, &module, plain, m)?;
        launch_checked2(dev, sorted, queries, |s, q| {
            dev.launch(&module, plain, Grid::new(blocks, BLOCK), (s, n, q, m, out))
        })
    };
    if n > top && !worth_an_index::<T>(n, m) {
        return bisect();
    }
    let (ix, index_len) = SearchIndex::plan(n, off, f, top);
    if ix.levels > 0 && ix.len[ix.levels as usize] > top {
        // More levels than the kernel holds (no memory is that large): bisect.
        return bisect();
    }
    // SAFETY: matches `cuprim_search_index(const InS data, u64 n, T* index, SearchIndex ix)` (a buffer's
    // parameter is its pointer, the ExprArgs' first 8 bytes): reads n elements, writes the index_len
    // entries of ix's levels.
    let build: Entry<(ExprArgs, u64, Ptr<T>, SearchIndex)> = unsafe { Entry::declare("cuprim_search_index") };
    // SAFETY: matches `cuprim_search(const InS data, u64 n, const T* index, SearchIndex ix, const In
    // queries, u64 m, I* out)`, `In` / `InS` the structs whose fields the ExprArgs hold (for a plain
    // buffer the parameter is `const T*`, its first 8 bytes: the same pointer): reads n elements, the
    // index and m queries, writes m answers.
    let entry: Entry<(ExprArgs, u64, Ptr<T>, SearchIndex, ExprArgs, u64, Ptr<I>)> = unsafe { Entry::declare("cuprim_search") };
    let mut layout = ScratchLayout::new();
    let index = layout.uninit_aligned::<T>(index_len.max(1));
    let blocks = grid(dev, &module, entry, m.div_ceil(items::<S>() as u64))?;
    dev.with_scratch(&layout, |sc| {
        let index = sc.at(index);
        launch_checked2(dev, sorted, queries, |s, q| {
            if ix.levels > 0 {
                let bblocks = grid(dev, &module, build, ix.len[1].div_ceil(f) * f)?;
                dev.launch(&module, build, Grid::new(bblocks, BLOCK), (s, n, index, ix))?;
            }
            dev.launch(&module, entry, Grid::new(blocks, BLOCK), (s, n, index, ix, q, m, out))
        })
    })
}

/// Blocks for `items` work items of one thread each, at most one resident
/// wave (the kernels loop over the rest).
fn grid<A: crate::device::launch::Args>(dev: &CudaDevice, module: &crate::device::Module, entry: Entry<A>, items: u64) -> Result<u32> {
    resident_wave(dev, module, entry, BLOCK, items.div_ceil(BLOCK as u64))
}

/// The least i >= 1 with `cmp.less(x[i], x[i - 1])` among the elements of
/// `sorted` (an input expression; a buffer being the simplest), or their
/// number. An expression that permutes is bounds-checked.
pub(crate) fn sorted_until<T: Element, C: Comparator<T>, S: Node<Item = T>>(dev: &CudaDevice, cmp: &C, sorted: &S) -> Result<u64> {
    let n = sorted.length() as u64;
    if n < 2 {
        return Ok(n);
    }
    let module = dev.module(&SearchKernel::<T, u32, C, _, S>::new(
        cmp,
        Mode::Lower,
        &Leaf::<T>::type_only(),
        sorted,
    ))?;
    // SAFETY: matches `cuprim_sorted_until(const InS data, u64 n, u64* best_inv)` (a buffer's parameter
    // is its pointer, the ExprArgs' first 8 bytes): reads n elements, updates one u64 (zeroed before the
    // launch).
    let entry: Entry<(ExprArgs, u64, Ptr<u64>)> = unsafe { Entry::declare("cuprim_sorted_until") };
    let mut layout = ScratchLayout::new();
    let best = layout.zeroed::<u64>(1);
    let blocks = grid(dev, &module, entry, n - 1)?;
    dev.with_scratch(&layout, |sc| {
        crate::expr::consume::launch_checked(dev, sorted, |s| {
            dev.launch(&module, entry, Grid::new(blocks, BLOCK), (s, n, sc.at(best)))
        })?;
        let inv = u64::from_le_bytes(dev.read_back::<8>(sc.at(best).raw(), "reading is_sorted_until")?);
        Ok(if inv == 0 { n } else { !inv })
    })
}
