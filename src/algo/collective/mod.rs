//! The rest of the 2009 collectives (MasPar / AFAPI style aggregate
//! operations on a GPU; `any`, `all`, `count` and `find_first` are in
//! [`reduce`](crate::algo::reduce)): `vote` (a packed bitmask of a
//! predicate), `quantify` (none / one / many), `select_one` (some matching
//! index, whichever is found first) and `broadcast` (one element to all).
//!
//! `quantify` and `select_one` stop reading once their answer is known, as
//! `find_first` does; `broadcast` reads its value on the device, so it
//! needs no round trip to the host.

pub(crate) mod host;
pub(crate) mod plan;

use crate::algo::transform::plan::Fill;
use crate::device::Ptr;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::expr::LazyOps;
use crate::pred::Predicate;
use crate::vec::raw::MemMut;
use crate::vec::{DeviceData, DeviceDataMut, DeviceVec};

/// How many elements satisfy a predicate, as far as
/// [`quantify`](CollectiveOps::quantify) counts: none, exactly one, or two
/// or more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Quantity {
    /// No element matches.
    None,
    /// Exactly one element matches.
    One,
    /// Two or more elements match.
    Many,
}

/// Predicate collectives. In [`prelude`](crate::prelude).
pub trait CollectiveOps<T: Element>: DeviceData<T> {
    /// A packed bitmask of `pred`: `self.len().div_ceil(32)` words, bit `i % 32`
    /// of word `i / 32` set iff `pred(self[i])`, the bits of the last word
    /// past the end zero. On CUDA each word is one warp's vote (a ballot).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Gt;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[5u32, 1, 7, 0, 9])?;
    /// assert_eq!(v.vote(Gt(4))?.to_vec()?, vec![0b10101]);
    /// let w = DeviceVec::sequence(&Device::default()?, 40, 0i32, 1)?;
    /// assert_eq!(w.vote(Gt(-1))?.to_vec()?, vec![u32::MAX, 0xff]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn vote<P: Predicate<T>>(&self, pred: P) -> Result<DeviceVec<u32>> {
        crate::expr::consume::vote(&self.lazy(), pred)
    }

    /// Whether no element, exactly one, or several satisfy `pred`. Stops
    /// reading once a second match is known: with many matches near the
    /// front it costs about one wave of loads, not a pass.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::collective::Quantity;
    /// use cuprim::pred::{Eq, IsNan};
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1.0f32, f32::NAN, 3.0, 3.0])?;
    /// assert_eq!(v.quantify(Eq(7.0))?, Quantity::None);
    /// assert_eq!(v.quantify(IsNan)?, Quantity::One);
    /// assert_eq!(v.quantify(Eq(3.0))?, Quantity::Many);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn quantify<P: Predicate<T>>(&self, pred: P) -> Result<Quantity> {
        crate::expr::consume::quantify(&self.lazy(), pred)
    }

    /// The index of *some* element that satisfies `pred` (`None` if none
    /// does): on CUDA, the first match any warp reports, which depends on
    /// timing, so it may differ from run to run and need not be the lowest
    /// (use [`find_first`](crate::algo::reduce::ReduceOps::find_first) for
    /// that). Stops reading as soon as one is found, wherever it is. The
    /// host backend returns the lowest matching index.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Eq;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[4u8, 9, 4, 9])?;
    /// let i = v.select_one(Eq(9))?.unwrap();
    /// assert!(i == 1 || i == 3);
    /// assert_eq!(v.select_one(Eq(5))?, None);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn select_one<P: Predicate<T>>(&self, pred: P) -> Result<Option<usize>> {
        crate::expr::consume::select_one(&self.lazy(), pred)
    }
}

impl<T: Element, D: DeviceData<T> + ?Sized> CollectiveOps<T> for D {}

/// Write-side collectives. In [`prelude`](crate::prelude).
pub trait CollectiveMutOps<T: Element>: DeviceDataMut<T> {
    /// Sets every element to the value of element `i`. On CUDA the value is
    /// read on the device by the fill kernel itself: no copy to the host
    /// and no synchronisation. `i >= len()` is
    /// [`Error::IndexOutOfBounds`], and nothing is written.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let mut v = DeviceVec::from_slice(&Device::default()?, &[3i64, -8, 5])?;
    /// v.broadcast(1)?;
    /// assert_eq!(v.to_vec()?, vec![-8, -8, -8]);
    /// assert!(matches!(v.broadcast(3), Err(cuprim::Error::IndexOutOfBounds { .. })));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn broadcast(&mut self, i: usize) -> Result<()> {
        let len = self.len();
        if i >= len {
            return Err(Error::IndexOutOfBounds { op: "broadcast", len });
        }
        match self.mem_mut() {
            MemMut::Host(d) => {
                let value = d[i];
                crate::algo::transform::host::fill(d, value);
                Ok(())
            }
            MemMut::Cuda { dev, ptr, len, .. } => Fill::<T>::new(dev.arch()).broadcast(dev, Ptr::from_raw(ptr), len as u64, i as u64),
        }
    }
}

impl<T: Element, D: DeviceDataMut<T> + ?Sized> CollectiveMutOps<T> for D {}
