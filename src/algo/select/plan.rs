//! Plan and launch of `kernels/select/select.cu` and `select_pipe.cu`: one
//! pass that writes the selected elements in order (and, for partition, the
//! rejected ones) with their positions from a look-back over per-tile
//! counts; long buffers of 4- and 8-byte elements take the pipelined
//! kernel, whose blocks take tile after tile with the next one's loads in
//! flight.

use crate::algo::lookback::{Lookback, LOOKBACK};
use crate::algo::scan::plan::{scan_policy, TilePolicy};
use crate::device::{Counter, CudaDevice, Entry, Grid, Ptr, ScratchLayout};
use crate::element::Element;
use crate::error::Result;
use crate::expr::args::ExprArgs;
use crate::expr::consume::{launch_checked, write_input};
use crate::expr::node::{Leaf, Node};
use crate::jit::spec::Pred;
use crate::jit::{template, KernelSpec, OpText, SpecWriter, Specialise, Template};
use crate::pred::Predicate;

/// `kernels/select/select_tile.cuh`: the tile both select kernels share.
const SELECT_TILE: &str = crate::jit::header!("select/select_tile.cuh");

template!(SELECT, "select/select.cu", ["cuprim_select"], headers: [LOOKBACK, SELECT_TILE]);
template!(SELECT_PIPE, "select/select_pipe.cu", ["cuprim_select_pipe"], headers: [LOOKBACK, SELECT_TILE]);

/// copy_if / partition tiles, `block` counting the compute threads (the kernel adds a look-back
/// warp). 4 bytes: 128x24 at 9 blocks/SM, 40 registers, the most without spills (half of 2^28 u32
/// kept: 771 us against 858 for the kernel before the look-back warp, H100, select run 1).
/// 1, 2 and 8 bytes: the scan's tiles (1 byte at 16 items, 32 spill at 3 blocks/SM) at about the
/// blocks per SM the kernel had before the look-back warp (NVRTC sm_80 / sm_90, no spills; not
/// timed). Other sizes as the scan.
pub(crate) fn select_policy(arch: u32, elem_bytes: usize) -> TilePolicy {
    let (block, items, min_blocks) = match elem_bytes {
        4 => (128, 24, 9),
        1 => (256, 16, 4),
        2 => (256, 32, 3),
        8 => (256, 12, 4),
        _ => return scan_policy(arch, elem_bytes),
    };
    TilePolicy { block, items, min_blocks }
}

/// Tiles of the pipelined kernel (`select_pipe.cu`, two stages of a tile in shared memory per
/// block): 128 compute threads and 24 4-byte / 12 8-byte items (select.cu's 4-byte tile), at 8
/// blocks per SM on sm_90 (9 spilled 40-68 bytes at 40 registers, NVRTC 13) and 6 on sm_80 (2 x
/// 12 KiB of stages each: 6 fit its 164 KiB). Not measured.
pub(crate) fn select_pipe_policy(arch: u32, elem_bytes: usize) -> TilePolicy {
    let min_blocks = if arch >= 90 { 8 } else { 6 };
    let items = if elem_bytes == 8 { 12 } else { 24 };
    TilePolicy {
        block: 128,
        items,
        min_blocks,
    }
}

/// Inputs of this many tiles or more take the pipelined kernel (about 1.5M 4-byte elements: 2^20
/// keeps select.cu, 0.75x CUB there, and every block of a wave of 132 x 9 has two tiles or more
/// from about 2^23). Not measured.
pub(crate) const SELECT_PIPE_FROM_TILES: u32 = 512;

/// Blocks per SM at most when the input reads several buffers (see [`Select::new`]).
const SELECT_MULTI_STREAM_BLOCKS: u32 = 6;

/// One specialisation of the select kernel, reading an input expression
/// (a plain buffer being the simplest).
pub(crate) struct Select<'a, E, P> {
    pub policy: TilePolicy,
    pub input: &'a E,
    pub pred: &'a P,
    /// u64 counts (2^32 elements or more), else u32 (whose look-back state packs into one word per tile).
    pub wide: bool,
    /// `select_pipe.cu` (a plain buffer of 4- or 8-byte elements on sm_80+), else `select.cu`.
    pub pipe: bool,
}

/// Whether the pipelined kernel can read `E` on `arch`: a plain buffer of 4- or 8-byte elements
/// (one cp.async per element for tails and misaligned views), cp.async (sm_80).
fn pipe_applies<E: Node>(arch: u32) -> bool {
    E::IS_BUF && matches!(std::mem::size_of::<E::Item>(), 4 | 8) && arch >= 80
}

/// Whether a call of `tiles` select.cu tiles takes the pipelined kernel: from
/// [`SELECT_PIPE_FROM_TILES`], or with the `select-tuning` feature as `CUPRIM_SELECT_PIPE` = 0 or 1
/// says.
fn pipe_chosen(tiles: u64) -> bool {
    #[cfg(feature = "select-tuning")]
    if let Some(forced) = tuning::forced_pipe() {
        return forced;
    }
    tiles >= SELECT_PIPE_FROM_TILES as u64
}

impl<'a, E: Node<Item = T>, T: Element, P: Predicate<T>> Select<'a, E, P> {
    pub fn new(arch: u32, input: &'a E, pred: &'a P) -> Self {
        let bytes = std::mem::size_of::<T>();
        let len = input.length() as u64;
        let policy = select_policy(arch, bytes);
        let pipe = pipe_applies::<E>(arch) && pipe_chosen(len.div_ceil(policy.tile()));
        Self::with(arch, input, pred, pipe)
    }

    /// The plan with the kernel chosen: `pipe` only where [`pipe_applies`].
    fn with(arch: u32, input: &'a E, pred: &'a P, pipe: bool) -> Self {
        let bytes = std::mem::size_of::<T>();
        let mut policy = if pipe {
            select_pipe_policy(arch, bytes)
        } else {
            select_policy(arch, bytes)
        };
        #[cfg(feature = "select-tuning")]
        if pipe {
            tuning::pipe_tile(&mut policy);
        }
        if E::STREAMS > 1 {
            // Several buffers' loads in flight: f32 `zip(a, b).map(Mul)` at 9 blocks per SM spilled
            // 8-20 bytes on sm_80 / sm_90, and at 7-8 still 8 (NVRTC 13, ptxas -v).
            policy.min_blocks = policy.min_blocks.min(SELECT_MULTI_STREAM_BLOCKS);
        }
        Select {
            policy,
            input,
            pred,
            wide: input.length() as u64 > u32::MAX as u64,
            pipe,
        }
    }

    /// Writes the selected elements of the input to `selected` (and the
    /// rejected ones to `rejected`, unless null); returns how many were
    /// selected (one small synchronous read of the last tile's prefix).
    pub fn run(&self, dev: &CudaDevice, selected: Ptr<T>, rejected: Ptr<T>) -> Result<usize> {
        Ok(self.launch(dev, selected, rejected, None)?.unwrap_or(0))
    }

    /// Like [`run`](Self::run), but with `count_out` the kernel writes the
    /// number selected there (a u64, on the device) and nothing is read back
    /// (unless the input permutes: its indices are checked).
    pub fn launch(&self, dev: &CudaDevice, selected: Ptr<T>, rejected: Ptr<T>, count_out: Option<Ptr<u64>>) -> Result<Option<usize>> {
        let len = self.input.length();
        if len == 0 {
            return match count_out {
                Some(c) => dev.memset_bytes(c.raw(), 0, 8, "writing the copy_if count").map(|()| None),
                None => Ok(Some(0)),
            };
        }
        let tiles = self.policy.tiles("copy_if", len)?;
        let module = dev.module(self)?;
        let mut layout = ScratchLayout::new();
        let lookback = Lookback::place(&mut layout, tiles as u64, if self.wide { 8 } else { 4 });
        // SAFETY: matches `cuprim_select(const In in, u64 n, T p, T* selected, T* rejected, u64* count_out,
        // u32* status, C* aggregates, C* prefixes, u32* tile_counter, u32 num_tiles)`, `In` the struct
        // whose fields ExprArgs holds: reads n elements, writes at most n to selected (and to rejected
        // unless null) and one count unless null, look-back arrays of num_tiles entries.
        let entry: Entry<(
            ExprArgs,
            u64,
            T,
            Ptr<T>,
            Ptr<T>,
            Ptr<u64>,
            Ptr<u32>,
            Ptr<u8>,
            Ptr<u8>,
            Ptr<u32>,
            u32,
        )> = unsafe { Entry::declare(if self.pipe { "cuprim_select_pipe" } else { "cuprim_select" }) };
        let threads = self.policy.block + 32;
        let grid = if self.pipe {
            // One wave of resident blocks, each taking tiles until none is left; each takes one
            // ticket past the last tile, so the counter reaches tiles + blocks (kept in a u32).
            let wave = dev.sm_count().saturating_mul(dev.occupancy(&module, entry, Grid::new(0, threads))?);
            let blocks = tiles.min(wave).min(u32::MAX - tiles);
            Grid::new(blocks, threads)
        } else {
            Grid::new(tiles, threads)
        };
        let counter = dev.counter(Counter::SelectTile);
        let total = dev.with_scratch(&layout, |s| {
            let (status, aggregates, prefixes) = lookback.args(&s);
            launch_checked(dev, self.input, |input| {
                let args = (
                    input,
                    len as u64,
                    self.pred.param(),
                    selected,
                    rejected,
                    count_out.unwrap_or(Ptr::null()),
                    status,
                    aggregates,
                    prefixes,
                    counter,
                    tiles,
                );
                dev.launch(&module, entry, grid, args)
            })?;
            if count_out.is_some() {
                return Ok(None);
            }
            let at = lookback.prefix(&s, tiles as u64 - 1);
            Ok(Some(u64::from_le_bytes(dev.read_back::<8>(at.raw(), "reading the copy_if count")?)))
        })?;
        // A 64-bit packed word holds a u32 count in its low half; a 16-byte
        // one holds the u64 count in its second 8 bytes.
        Ok(total.map(|total| if self.wide { total } else { total & 0xffff_ffff } as usize))
    }
}

impl<E: Node<Item = T>, T: Element, P: Predicate<T>> Specialise for Select<'_, E, P> {
    fn template(&self) -> &'static Template {
        if self.pipe {
            &SELECT_PIPE
        } else {
            &SELECT
        }
    }
    fn write<W: SpecWriter>(&self, w: &mut W) {
        self.policy.write(w);
        write_input(self.input, w);
        w.typedef("C", if self.wide { "u64" } else { "u32" });
        w.piece(OpText::<P, T, Pred>::predicate(*self.pred), |pred| {
            format!(
                "struct PredFn {{ __device__ __forceinline__ static bool apply(T x, T p) {{ (void)p; return ({}); }} }};",
                Predicate::<T>::cuda_expr(&pred.op)
            )
        });
    }
}

/// Both select modules (u32 and u64 counts) of `T` and `pred`, for precompile.
pub(crate) fn select_specs<T: Element, P: Predicate<T>>(arch: u32, pred: &P) -> Vec<KernelSpec> {
    select_specs_of(arch, &Leaf::<T>::type_only(), pred)
}

/// The select modules of an input expression and `pred` (u32 and u64 counts; of the pipelined
/// kernel too where it applies), for precompile.
pub(crate) fn select_specs_of<E: Node<Item = T>, T: Element, P: Predicate<T>>(arch: u32, input: &E, pred: &P) -> Vec<KernelSpec> {
    let mut specs = Vec::new();
    for pipe in [false, true] {
        if pipe && !pipe_applies::<E>(arch) {
            continue;
        }
        for wide in [false, true] {
            specs.push(KernelSpec::of(&Select {
                wide,
                ..Select::with(arch, input, pred, pipe)
            }));
        }
    }
    specs
}

/// Experiment overrides of the `select-tuning` feature (the copy_if rows of benches/bykey.rs and benches/scan.rs, for
/// A/B runs in one call): `CUPRIM_SELECT_PIPE` = 0 or 1 forces `select.cu` or the pipelined
/// kernel wherever the latter applies (1 at every size, so the tests run it on small inputs
/// too); `CUPRIM_SELECT_PIPE_TILE` = `block,items,min_blocks` gives the pipelined kernel that
/// shape (items a multiple of 16 bytes of elements). Not for applications.
#[cfg(feature = "select-tuning")]
mod tuning {
    use crate::algo::scan::plan::TilePolicy;

    /// `CUPRIM_SELECT_PIPE`: Some(true) for 1, Some(false) for 0, None unset.
    pub(crate) fn forced_pipe() -> Option<bool> {
        std::env::var("CUPRIM_SELECT_PIPE").ok().map(|v| v.trim() == "1")
    }

    /// `CUPRIM_SELECT_PIPE_TILE` over the pipelined kernel's shape.
    pub(crate) fn pipe_tile(policy: &mut TilePolicy) {
        if let Ok(v) = std::env::var("CUPRIM_SELECT_PIPE_TILE") {
            let f: Vec<u32> = v
                .split(',')
                .map(|x| x.trim().parse().expect("CUPRIM_SELECT_PIPE_TILE: block,items,min_blocks"))
                .collect();
            *policy = TilePolicy {
                block: f[0],
                items: f[1],
                min_blocks: f[2],
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pred::Gt;

    /// The pipelined kernel is compiled (and chosen) for plain buffers of 4- and 8-byte
    /// elements on sm_80 and later only; the other inputs keep select.cu's two modules.
    #[test]
    fn pipelined_modules_where_cp_async_copies_whole_elements() {
        assert!(pipe_applies::<Leaf<'static, u32>>(90) && pipe_applies::<Leaf<'static, f64>>(80));
        assert!(!pipe_applies::<Leaf<'static, u8>>(90) && !pipe_applies::<Leaf<'static, u32>>(75));
        let specs = select_specs::<u32, _>(90, &Gt(1u32));
        let pipes: Vec<_> = specs.iter().filter(|s| s.template.name == "select/select_pipe.cu").collect();
        assert_eq!((specs.len(), pipes.len()), (4, 2));
        assert!(pipes.iter().all(|s| s.key().contains("CUPRIM_MIN_BLOCKS 8")), "{}", pipes[0].key());
        assert_eq!(select_specs::<u8, _>(90, &Gt(1u8)).len(), 2);
        assert_eq!(select_specs::<u32, _>(75, &Gt(1u32)).len(), 2);
    }
}
