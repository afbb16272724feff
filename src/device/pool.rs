//! Freed buffers kept for reuse, so that a call returning a new
//! `DeviceVec` (`scan`, `histogram`, `reduce_into`, ...) does not pay a
//! driver allocation each time (about a microsecond of host time for a small
//! buffer, 1.5-3 for one of megabytes, on the H100 and H200 machines: the
//! allocating f32 scan at 2^20 / 2^22 took 3.4 / 2.9 us longer than the scan
//! into a buffer, run h200-sweep-232a074).
//!
//! Every buffer of this device is used on its one stream, so a buffer freed
//! here may be handed out again at once: whatever the next owner queues runs
//! after the work the last owner queued.
//! - Small requests, up to [`LARGEST_SMALL`] bytes, are rounded up to a power
//!   of two (at least [`SMALLEST`]) so that any freed buffer of a class fits
//!   any request of it; each class keeps at most [`KEPT_PER_CLASS`] buffers
//!   (about 2 MiB x that in all).
//! - Larger requests, up to [`LARGEST_KEPT`], are rounded up to a multiple of
//!   a sixteenth of their power of two (at most 1/8 more bytes) and kept, at
//!   most [`KEPT_LARGE`] of them and [`KEPT_LARGE_BYTES`] in all, for a
//!   later request of the same rounded size.
//! - Bigger requests go straight to the driver.
//!
//! The driver's own pool keeps freed memory too (its release threshold is
//! raised, `cuda.rs`), so what is kept here mostly saves the calls; when an
//! allocation fails, every kept buffer is freed and it is tried again.

/// The smallest class, bytes.
pub(super) const SMALLEST: usize = 256;
/// The largest power-of-two class, bytes.
pub(super) const LARGEST_SMALL: usize = 1 << 20;
/// The largest request kept at all, bytes.
pub(super) const LARGEST_KEPT: usize = 1 << 30;
/// Freed small buffers kept per class (beyond them, frees go to the driver).
const KEPT_PER_CLASS: usize = 8;
/// Freed large buffers kept, and their bytes at most.
const KEPT_LARGE: usize = 4;
const KEPT_LARGE_BYTES: usize = 2 << 30;
const CLASSES: usize = (LARGEST_SMALL / SMALLEST).trailing_zeros() as usize + 1;

/// What a request is rounded to, when it may be kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Class {
    /// A power-of-two class (index 0 = [`SMALLEST`] bytes).
    Small(usize),
    /// A large buffer of exactly this many bytes.
    Large(usize),
}

/// The class of a request of `bytes` (non-zero), if it is small enough to keep.
pub(super) fn class_of(bytes: usize) -> Option<Class> {
    if bytes <= LARGEST_SMALL {
        return Some(Class::Small(
            (bytes.max(SMALLEST).next_power_of_two() / SMALLEST).trailing_zeros() as usize
        ));
    }
    (bytes <= LARGEST_KEPT).then(|| {
        let step = bytes.next_power_of_two() / 16;
        Class::Large(bytes.div_ceil(step) * step)
    })
}

/// The bytes a buffer of `class` is allocated with.
pub(super) fn class_bytes(class: Class) -> usize {
    match class {
        Class::Small(c) => SMALLEST << c,
        Class::Large(bytes) => bytes,
    }
}

/// Freed device addresses by class.
#[derive(Default)]
pub(super) struct KeptBuffers {
    small: [Vec<u64>; CLASSES],
    /// (bytes, address), oldest first.
    large: Vec<(usize, u64)>,
}

impl KeptBuffers {
    /// A kept buffer of `class`, if any.
    pub fn take(&mut self, class: Class) -> Option<u64> {
        match class {
            Class::Small(c) => self.small[c].pop(),
            Class::Large(bytes) => {
                let at = self.large.iter().rposition(|&(b, _)| b == bytes)?;
                Some(self.large.remove(at).1)
            }
        }
    }

    /// Keeps `ptr` (a buffer of `class`) for reuse, or hands back what does
    /// not fit: `ptr` itself, or for a large buffer the oldest ones that
    /// make room for it.
    pub fn keep(&mut self, class: Class, ptr: u64) -> Vec<u64> {
        match class {
            Class::Small(c) => {
                let list = &mut self.small[c];
                if list.len() < KEPT_PER_CLASS {
                    list.push(ptr);
                    Vec::new()
                } else {
                    vec![ptr]
                }
            }
            Class::Large(bytes) => {
                let mut out = Vec::new();
                while !self.large.is_empty()
                    && (self.large.len() >= KEPT_LARGE || self.large.iter().map(|&(b, _)| b).sum::<usize>() + bytes > KEPT_LARGE_BYTES)
                {
                    out.push(self.large.remove(0).1);
                }
                self.large.push((bytes, ptr));
                out
            }
        }
    }

    /// Every kept buffer, emptying the pool (to be freed to the driver).
    pub fn drain(&mut self) -> Vec<u64> {
        let mut all: Vec<u64> = self.small.iter_mut().flat_map(std::mem::take).collect();
        all.extend(self.large.drain(..).map(|(_, p)| p));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_cover_requests() {
        assert_eq!(class_of(1), Some(Class::Small(0)));
        assert_eq!(class_of(SMALLEST), Some(Class::Small(0)));
        assert_eq!(class_of(SMALLEST + 1), Some(Class::Small(1)));
        assert_eq!(class_of(LARGEST_SMALL), Some(Class::Small(CLASSES - 1)));
        assert_eq!(class_of(16 << 20), Some(Class::Large(16 << 20)));
        assert_eq!(class_of((16 << 20) + 1), Some(Class::Large(18 << 20)));
        assert_eq!(class_of(LARGEST_KEPT), Some(Class::Large(LARGEST_KEPT)));
        assert_eq!(class_of(LARGEST_KEPT + 1), None);
        for bytes in [
            1usize,
            255,
            256,
            257,
            4096,
            4097,
            65_537,
            LARGEST_SMALL - 1,
            LARGEST_SMALL,
            LARGEST_SMALL + 1,
            3 << 20,
            100_000_007,
        ] {
            let c = class_of(bytes).unwrap();
            assert!(class_bytes(c) >= bytes, "{bytes} fits class {c:?}");
            assert!(
                class_bytes(c) <= bytes + bytes / 8 || bytes <= LARGEST_SMALL,
                "{bytes}: at most 1/8 more"
            );
            if let Class::Small(s) = c {
                assert!(
                    s == 0 || class_bytes(Class::Small(s - 1)) < bytes,
                    "{bytes} takes the smallest class that fits"
                );
            }
        }
    }

    #[test]
    fn keeps_at_most_a_few_per_class() {
        let mut pool = KeptBuffers::default();
        for p in 0..KEPT_PER_CLASS as u64 {
            assert!(pool.keep(Class::Small(3), 100 + p).is_empty());
        }
        assert_eq!(pool.keep(Class::Small(3), 999), vec![999], "a full class hands the buffer back");
        assert_eq!(pool.take(Class::Small(3)), Some(100 + KEPT_PER_CLASS as u64 - 1));
        assert_eq!(pool.take(Class::Small(4)), None);
        assert_eq!(pool.drain().len(), KEPT_PER_CLASS - 1);
        assert_eq!(pool.take(Class::Small(3)), None);
    }

    #[test]
    fn large_buffers_by_exact_size_oldest_out_first() {
        let mut pool = KeptBuffers::default();
        let big = Class::Large(LARGEST_KEPT);
        let mid = Class::Large(16 << 20);
        assert!(pool.keep(mid, 1).is_empty());
        assert!(pool.keep(big, 2).is_empty());
        assert_eq!(pool.take(Class::Large(18 << 20)), None, "another size does not match");
        // Two of 1 GiB fill the bytes: the oldest go to make room.
        assert_eq!(pool.keep(big, 3), vec![1]);
        assert_eq!(pool.keep(big, 4), vec![2]);
        assert_eq!(pool.keep(mid, 5), vec![3], "the bytes again");
        assert!(pool.keep(mid, 6).is_empty());
        assert!(pool.keep(mid, 7).is_empty());
        assert_eq!(pool.keep(mid, 8), vec![4], "at most KEPT_LARGE buffers");
        assert!(pool.large.len() <= KEPT_LARGE);
        assert!(pool.large.iter().map(|&(b, _)| b).sum::<usize>() <= KEPT_LARGE_BYTES);
        assert_eq!(pool.take(mid), Some(8), "the newest of the size first");
        assert_eq!(pool.drain(), vec![5, 6, 7]);
        assert_eq!(pool.take(mid), None);
    }
}
