//! Host segmented reductions: the same semantics as the kernel, one rayon
//! task per group of segments, each segment folded left to right (a long
//! segment in fixed chunks folded in order, as reduce/host.rs does), so
//! float results do not depend on rayon's scheduling.

use crate::algo::reduce::host::map_reduce;
use crate::element::IndexElement;
use crate::error::{Error, Result};
use rayon::prelude::*;

/// Segments longer than this are folded in parallel chunks.
const LONG: usize = 1 << 16;

/// Checks `offsets` (non-decreasing, the last at most `n`); the segment
/// bounds as `usize` pairs.
pub fn bounds<I: IndexElement>(op: &'static str, offsets: &[I], n: usize) -> Result<Vec<(usize, usize)>> {
    let bad = offsets.windows(2).position(|w| w[1].as_u64() < w[0].as_u64());
    if let Some(s) = bad {
        return Err(Error::InvalidArgument(format!(
            "{op}: the offsets must be non-decreasing, but offsets[{}] = {} < offsets[{s}] = {}",
            s + 1,
            offsets[s + 1].as_u64(),
            offsets[s].as_u64()
        )));
    }
    if let Some(last) = offsets.last() {
        if last.as_u64() > n as u64 {
            return Err(Error::InvalidArgument(format!(
                "{op}: the last offset ({}) is past the input's end ({n} elements)",
                last.as_u64()
            )));
        }
    }
    Ok(offsets
        .windows(2)
        .map(|w| (w[0].as_u64() as usize, w[1].as_u64() as usize))
        .collect())
}

/// `map(x, i)` folded with `red` over each segment (`i` the index within
/// the segment); `identity` for an empty one.
pub fn segmented<T, A, M, R>(src: &[T], bounds: &[(usize, usize)], identity: A, map: M, red: R) -> Vec<A>
where
    T: Copy + Sync,
    A: Copy + Send + Sync,
    M: Fn(T, usize) -> A + Sync,
    R: Fn(A, A) -> A + Sync,
{
    bounds
        .par_iter()
        .with_min_len(64)
        .map(|&(lo, hi)| {
            let seg = &src[lo..hi];
            if seg.len() > LONG {
                map_reduce(seg, identity, &map, &red)
            } else {
                seg.iter().enumerate().fold(identity, |acc, (i, &x)| red(acc, map(x, i)))
            }
        })
        .collect()
}
