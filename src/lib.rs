//! # cuprim: generic data-parallel GPU primitives
//!
//! A [`DeviceVec<T>`] whose methods are the primitives of Thrust and CUB,
//! generic over element types and operators, each specialised to CUDA C++ at
//! run time, compiled once with NVRTC for the GPU in hand, and cached in
//! memory and on disk. With no GPU, the same calls run on the host backend
//! (rayon), which is also the oracle the test suite checks the GPU against.
//!
//! ```
//! use cuprim::prelude::*;
//! use cuprim::ops::Square;
//!
//! let dev = Device::default()?;              // CUDA 0 if usable, else the host
//! let v = DeviceVec::sequence(&dev, 5, 1.0f32, 1.0)?;   // 1 2 3 4 5
//! let sq = v.transform(Square)?;             // 1 4 9 16 25
//! let sum = sq.transform2(&v, Add)?;         // 2 6 12 20 30
//! assert_eq!(sum.to_vec()?, vec![2.0, 6.0, 12.0, 20.0, 30.0]);
//! # Ok::<(), cuprim::Error>(())
//! ```
//!
//! ## Layout
//! - [`Device`]: a GPU (context, stream, module cache) or the host backend.
//! - [`DeviceVec`], [`DeviceSlice`], [`DeviceSliceMut`]: typed buffers and views.
//! - [`Element`]: the element types (`u8 i8 u32 i32 u64 i64 f16 bf16 f32 f64`).
//! - [`ops`]: operators as types ([`ops::Add`], [`ops::Min`], ... or your own).
//! - [`algo`]: the families, as extension traits re-exported by [`prelude`].
//! - [`jit`]: the kernel caches' statistics and settings, NVRTC's version.
//!
//! ## Environment
//! `CUPRIM_DEVICE=host|cuda|cuda:N`, `CUPRIM_CACHE=off|memory|disk`,
//! `CUPRIM_CACHE_DIR`, `CUPRIM_NVRTC_DIR` (the folder searched first for NVRTC).

#![warn(missing_docs)]
// Kernel entry points are declared with their full parameter tuples (`Entry<(Ptr<T>, u64, ...)>`), on purpose.
#![allow(clippy::type_complexity)]

pub mod algo;
pub mod cmp;
pub mod device;
pub mod element;
pub mod error;
pub mod expr;
pub mod jit;
pub mod multi;
pub mod ops;
pub mod precompile;
pub mod pred;
pub mod value;
pub mod vec;

pub use device::Device;
pub use element::{Element, IndexElement, IntElement, Kind, Scalar, Storable};
pub use error::{Error, Result};
pub use half::{bf16, f16};
pub use value::Value;
pub use vec::{DeviceData, DeviceDataMut, DeviceSlice, DeviceSliceMut, DeviceVec};

/// Everything an application needs in one import.
pub mod prelude {
    pub use crate::algo::bykey::ByKeyOps;
    pub use crate::algo::collective::{CollectiveMutOps, CollectiveOps, Quantity};
    pub use crate::algo::histogram::{Bins, HistogramOps};
    pub use crate::algo::knn::{nearest_neighbors, nearest_neighbors_with, KdTree};
    pub use crate::algo::merge::{MergeOps, SetOps};
    pub use crate::algo::reduce::ReduceOps;
    pub use crate::algo::scan::{ScanMutOps, ScanOps};
    pub use crate::algo::search::SearchOps;
    pub use crate::algo::segmented::SegmentedOps;
    pub use crate::algo::segsort::SegmentedSortOps;
    pub use crate::algo::select::{SelectMutOps, SelectOps};
    pub use crate::algo::sort::{SortMutOps, SortOps};
    pub use crate::algo::topk::{TopKMutOps, TopKOps};
    pub use crate::algo::transform::{TransformMutOps, TransformOps};
    pub use crate::expr::{constant, counting, zip, zip3, Expr, ExprOps, LazyOps};
    pub use crate::ops::{Add, BitAnd, BitOr, BitXor, Max, Min, Mul, Sub};
    pub use crate::{bf16, f16, Device, DeviceData, DeviceDataMut, DeviceSlice, DeviceSliceMut, DeviceVec, Element, Error};
}
