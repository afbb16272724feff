//! Scratch of the decoupled look-back (`kernels/block/lookback.cuh`) that
//! scan, scan_by_key and copy_if / partition chain their tiles through.
//!
//! Values of at most 4 bytes are packed with their status into one 64-bit
//! word per tile, values of at most 8 bytes into one 16-byte word; larger
//! ones get a status word plus aggregate and prefix arrays. The status words
//! are cleared before each launch (the zeroed part of the layout), except
//! where one tile is all a scan launches.

use crate::device::{Ptr, Region, Scratch, ScratchLayout};

/// The kernel's shared header.
pub(crate) const LOOKBACK: &str = crate::jit::header!("block/lookback.cuh");

/// Where one launch's look-back state lives in scratch.
pub(crate) struct Lookback {
    status: Region<u32>,
    aggregates: Region<u8>,
    prefixes: Region<u8>,
    /// 32-bit words per tile in the status region (2 or 4 when packed, 1 apart).
    words_per_tile: u64,
    value_bytes: u64,
}

/// The look-back arrays as kernel arguments: `u32* status, V* aggregates, V* prefixes`.
pub(crate) type LookbackArgs = (Ptr<u32>, Ptr<u8>, Ptr<u8>);

impl Lookback {
    /// Places the state of `tiles` tiles of `value_bytes`-byte values in
    /// `layout` (the status words zeroed, the value arrays not).
    pub fn place(layout: &mut ScratchLayout, tiles: u64, value_bytes: usize) -> Lookback {
        Self::place_with(layout, tiles, value_bytes, true)
    }

    /// [`place`](Self::place) for a kernel whose tile 0 only publishes and
    /// never reads another tile's state (the scan): a launch of one tile
    /// leaves its status words uncleared, so no memset goes before it.
    pub fn place_lone_tile_unzeroed(layout: &mut ScratchLayout, tiles: u64, value_bytes: usize) -> Lookback {
        Self::place_with(layout, tiles, value_bytes, tiles > 1)
    }

    fn place_with(layout: &mut ScratchLayout, tiles: u64, value_bytes: usize, zeroed: bool) -> Lookback {
        let words_per_tile = match value_bytes {
            0..=4 => 2,
            5..=8 => 4,
            _ => 1,
        };
        let status = if zeroed {
            layout.zeroed::<u32>(words_per_tile * tiles)
        } else {
            layout.uninit::<u32>(words_per_tile * tiles)
        };
        let separate = if words_per_tile > 1 { 0 } else { tiles * value_bytes as u64 };
        let aggregates = layout.uninit::<u8>(separate);
        let prefixes = layout.uninit::<u8>(separate);
        Lookback {
            status,
            aggregates,
            prefixes,
            words_per_tile,
            value_bytes: value_bytes as u64,
        }
    }

    /// The three arrays in `s`.
    pub fn args(&self, s: &Scratch) -> LookbackArgs {
        (s.at(self.status), s.at(self.aggregates), s.at(self.prefixes))
    }

    /// Where tile `tile`'s inclusive prefix ends up: the value half of its
    /// packed word (low half of a 64-bit word, second half of a 16-byte
    /// one), or its slot in the prefix array.
    pub fn prefix(&self, s: &Scratch, tile: u64) -> Ptr<u8> {
        match self.words_per_tile {
            2 => s.at(self.status).cast::<u8>().add(8 * tile),
            4 => s.at(self.status).cast::<u8>().add(16 * tile + 8),
            _ => s.at(self.prefixes).add(self.value_bytes * tile),
        }
    }
}
