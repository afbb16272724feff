//! The launch shape shared by the grid-stride families (transform, reduce,
//! find, histogram, kNN). Each family picks its numbers per architecture in
//! its own plan; the kernels get them as compile-time constants, so a tuning
//! change is a new specialisation with its own cache entries.

/// Launch shape of a grid-stride kernel on one architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Policy {
    /// Threads per block.
    pub block: u32,
    /// Independent 16-byte loads in flight per thread (`CUPRIM_UNROLL`).
    pub unroll: u32,
    /// Resident blocks per SM the grid is sized for (grid-stride loops
    /// cover the rest), so one wave fills the chip.
    pub blocks_per_sm: u32,
}

impl Policy {
    /// Blocks for `items` work items: enough to cover them, at most one wave.
    pub fn grid(&self, items: u64, sm_count: u32) -> u32 {
        let needed = items.div_ceil(self.block as u64).max(1);
        let wave = (sm_count.max(1) * self.blocks_per_sm) as u64;
        needed.min(wave) as u32
    }

    /// Blocks for `len` elements of `elem_bytes` bytes read as 16-byte
    /// vectors, `unroll` per thread per round.
    pub fn grid_for_vectors(&self, len: usize, elem_bytes: usize, sm_count: u32) -> u32 {
        let per_thread = (16 / elem_bytes.max(1)) as u64 * self.unroll as u64;
        self.grid((len as u64).div_ceil(per_thread), sm_count)
    }
}

/// Element-wise and data-movement kernels: fill, transform, gather, scatter.
pub(crate) fn elementwise(arch: u32) -> Policy {
    match arch {
        // Hopper: 2048 threads per SM, 8 x 256 fill it; four 16-byte loads in flight cover HBM3 latency (run 759512f).
        90.. => Policy {
            block: 256,
            unroll: 4,
            blocks_per_sm: 8,
        },
        // Ampere and older: same shape, fewer loads needed in flight (not re-measured; no A100 here).
        _ => Policy {
            block: 256,
            unroll: 2,
            blocks_per_sm: 8,
        },
    }
}

/// Blocks of `block` threads for `needed` blocks of work, at most one wave
/// of `entry` resident at once on the device (its occupancy there): the
/// grid-stride kernels loop over the rest.
pub(crate) fn resident_wave<A: crate::device::launch::Args>(
    dev: &crate::device::CudaDevice,
    module: &crate::device::Module,
    entry: crate::device::Entry<A>,
    block: u32,
    needed: u64,
) -> crate::error::Result<u32> {
    let resident = dev.occupancy(module, entry, crate::device::Grid::new(0, block))?;
    Ok((dev.sm_count() as u64 * resident as u64).min(needed).max(1) as u32)
}
