//! The host backend: every primitive on the CPU with rayon, with exactly the
//! device's semantics. It runs when no GPU is present and is the oracle the
//! test suite checks the CUDA kernels against.

pub mod histogram;
pub mod knn;
pub mod reduce;
pub mod scan;
pub mod select;
pub mod sort;
pub mod transform;

/// Below this many elements a rayon split costs more than it saves.
pub(crate) const MIN_SPLIT: usize = 1 << 14;
