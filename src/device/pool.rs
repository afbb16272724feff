//! Small freed buffers kept for reuse, so that a call returning a new small
//! `DeviceVec` (`scan`, `histogram`, `reduce_into`, ...) does not pay a
//! driver allocation and free each time (about a microsecond of host time
//! apiece on the H100 machine).
//!
//! Every buffer of this device is used on its one stream, so a buffer freed
//! here may be handed out again at once: whatever the next owner queues runs
//! after the work the last owner queued. Requests up to [`LARGEST`] bytes are
//! rounded up to a power of two (at least [`SMALLEST`]) so that any freed
//! buffer of a class fits any request of it; each class keeps at most
//! [`KEPT_PER_CLASS`] buffers, so the pool holds at most about 2 MiB x that.

/// The smallest class, bytes.
pub(super) const SMALLEST: usize = 256;
/// The largest class, bytes: bigger buffers go straight to the driver.
pub(super) const LARGEST: usize = 1 << 20;
/// Freed buffers kept per class (beyond them, frees go to the driver).
const KEPT_PER_CLASS: usize = 8;
const CLASSES: usize = (LARGEST / SMALLEST).trailing_zeros() as usize + 1;

/// Freed device addresses by size class.
#[derive(Default)]
pub(super) struct SmallBuffers {
    free: [Vec<u64>; CLASSES],
}

/// The class of a request of `bytes` (non-zero), if it is small enough to pool.
pub(super) fn class_of(bytes: usize) -> Option<usize> {
    (bytes <= LARGEST).then(|| (bytes.max(SMALLEST).next_power_of_two() / SMALLEST).trailing_zeros() as usize)
}

/// The bytes a buffer of `class` is allocated with.
pub(super) fn class_bytes(class: usize) -> usize {
    SMALLEST << class
}

impl SmallBuffers {
    /// A kept buffer of `class`, if any.
    pub fn take(&mut self, class: usize) -> Option<u64> {
        self.free[class].pop()
    }

    /// Keeps `ptr` (a buffer of `class`) for reuse, or hands it back when
    /// its class is full.
    pub fn keep(&mut self, class: usize, ptr: u64) -> Option<u64> {
        let list = &mut self.free[class];
        if list.len() < KEPT_PER_CLASS {
            list.push(ptr);
            None
        } else {
            Some(ptr)
        }
    }

    /// Every kept buffer, emptying the pool (to be freed to the driver).
    pub fn drain(&mut self) -> Vec<u64> {
        self.free.iter_mut().flat_map(std::mem::take).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_cover_requests() {
        assert_eq!(class_of(1), Some(0));
        assert_eq!(class_of(SMALLEST), Some(0));
        assert_eq!(class_of(SMALLEST + 1), Some(1));
        assert_eq!(class_of(LARGEST), Some(CLASSES - 1));
        assert_eq!(class_of(LARGEST + 1), None);
        for bytes in [1usize, 255, 256, 257, 4096, 4097, 65_537, LARGEST - 1, LARGEST] {
            let c = class_of(bytes).unwrap();
            assert!(class_bytes(c) >= bytes, "{bytes} fits class {c}");
            assert!(c == 0 || class_bytes(c - 1) < bytes, "{bytes} takes the smallest class that fits");
        }
    }

    #[test]
    fn keeps_at_most_a_few_per_class() {
        let mut pool = SmallBuffers::default();
        for p in 0..KEPT_PER_CLASS as u64 {
            assert_eq!(pool.keep(3, 100 + p), None);
        }
        assert_eq!(pool.keep(3, 999), Some(999), "a full class hands the buffer back");
        assert_eq!(pool.take(3), Some(100 + KEPT_PER_CLASS as u64 - 1));
        assert_eq!(pool.take(4), None);
        assert_eq!(pool.drain().len(), KEPT_PER_CLASS - 1);
        assert_eq!(pool.take(3), None);
    }
}
