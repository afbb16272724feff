//! Scratch of the decoupled look-back (`kernels/block/lookback.cuh`) that
//! scan, scan_by_key and copy_if / partition chain their tiles through.
//!
//! Values of at most 4 bytes are packed with their status into one 64-bit
//! word per tile, values of at most 8 bytes into one 16-byte word; larger
//! ones get a status word plus aggregate and prefix arrays. The status words
//! are cleared before each launch (the zeroed part of the layout), except
//! where one tile is all a scan launches.
//!
//! Where L2 holds the input between two reads, the scan and the select
//! skip the look-back: a fold (count) per tile, then each tile from those
//! before it ([`two_passes_pay`]).

use crate::device::{Ptr, Region, Scratch, ScratchLayout};

/// The least input (bytes) of the two passes. Into a buffer, us, single / two passes: f32 scan 2^21
/// 14.2-14.4 / 14.2, 2^22 22.1 / 17.3 (CUB 22.2), u64 scan 2^20 16.3-16.6 / 14.5; below 8 MiB the
/// two passes were 2-16% slower (H200, benchmarks/runs/h200-scan-two-pass). u32 unique of distinct
/// keys / copy_if keeping half, against the faster single pass: 2^21 12.1 / 12.6 against 14.1 / 12.7,
/// 2^22 16.5 / 15.3 against 21.8 / 18.0; u64 at 2^20 level (H200, benchmarks/runs/h200-select-two-pass).
pub(crate) const TWO_PASS_FROM_BYTES: usize = 8 << 20;

/// Whether `len` elements of `elem_bytes` bytes are better served by two passes than by a
/// look-back, on a device of `l2_bytes` of L2: 4- and 8-byte elements (the sizes measured) from
/// [`TWO_PASS_FROM_BYTES`] to two thirds of L2 (4-byte) or half of it (8-byte), so the second read
/// comes from L2. f32 scan into a buffer at 2^23 33.7-33.9 us against 34.7-36.5 single-pass, at 3 x
/// 2^22 49.3 against 44.8-46.9; u64 scan at 2^22 36.0-36.2 against 35.1-35.4, u64 unique 33.7 against
/// 32.4 (H200, 60 MiB of L2; benchmarks/runs/h200-scan-two-pass/dependent, h200-select-two-pass).
pub(crate) fn two_passes_pay(l2_bytes: usize, len: usize, elem_bytes: usize) -> bool {
    let most = match elem_bytes {
        4 => l2_bytes / 3 * 2,
        8 => l2_bytes / 2,
        _ => return false,
    };
    let total = len.saturating_mul(elem_bytes);
    total >= TWO_PASS_FROM_BYTES && total <= most
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// The band's edges: from 8 MiB, to two thirds (4-byte) or half (8-byte) of L2, no other sizes.
    #[test]
    fn two_pass_band_edges() {
        let l2 = 60 << 20;
        assert!(!two_passes_pay(l2, (2 << 20) - 1, 4));
        assert!(two_passes_pay(l2, 2 << 20, 4));
        assert!(two_passes_pay(l2, 10 << 20, 4));
        assert!(!two_passes_pay(l2, (10 << 20) + 1, 4));
        assert!(two_passes_pay(l2, 1 << 20, 8));
        assert!(two_passes_pay(l2, 30 << 17, 8));
        assert!(!two_passes_pay(l2, (30 << 17) + 1, 8));
        for bytes in [1, 2, 3, 16] {
            assert!(!two_passes_pay(l2, 4 << 20, bytes), "{bytes}-byte elements");
        }
        assert!(!two_passes_pay(0, 4 << 20, 4), "no L2 reported");
        assert!(!two_passes_pay(l2, usize::MAX, 8), "no overflow");
    }
}
