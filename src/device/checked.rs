//! Device memory whose contents a kernel has checked and nobody has written
//! since: segment offsets found valid by a segmented reduction. A call over
//! the same offsets again needs no wait for the verdict.
//!
//! Every write path of a `DeviceVec` or `DeviceSliceMut` (`mem_mut`, mutable
//! slices and cudarc views, hand-over to cudarc, drop) forgets the ranges it
//! overlaps, so an entry always describes the memory's current contents.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Entries kept: a call's offsets are usually among the last few checked.
const KEEP: usize = 16;

/// One checked range: `bytes` bytes at `addr`, valid offsets for any input of
/// at least `len` elements (non-decreasing, the last at most `len`).
#[derive(Clone, Copy)]
struct Entry {
    addr: u64,
    bytes: u64,
    len: u64,
}

/// The checked ranges of one device.
#[derive(Default)]
pub(crate) struct CheckedOffsets {
    entries: Mutex<Vec<Entry>>,
    /// Whether `entries` may be non-empty: writes skip the lock when not.
    any: AtomicBool,
}

impl CheckedOffsets {
    /// Whether the offsets at `addr` (`bytes` bytes) are known valid for an
    /// input of `len` elements.
    pub fn known_valid(&self, addr: u64, bytes: u64, len: u64) -> bool {
        if !self.any.load(Ordering::Acquire) {
            return false;
        }
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.iter().any(|e| e.addr == addr && e.bytes == bytes && e.len <= len)
    }

    /// Records that a kernel found the offsets at `addr` valid for `len`
    /// elements (and so for any longer input).
    pub fn remember(&self, addr: u64, bytes: u64, len: u64) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|e| !(e.addr == addr && e.bytes == bytes));
        if entries.len() == KEEP {
            entries.remove(0);
        }
        entries.push(Entry { addr, bytes, len });
        self.any.store(true, Ordering::Release);
    }

    /// Forgets every range that overlaps `bytes` bytes at `addr`: they are
    /// about to be written or freed.
    pub fn forget(&self, addr: u64, bytes: u64) {
        if !self.any.load(Ordering::Acquire) {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|e| e.addr >= addr.saturating_add(bytes) || addr >= e.addr.saturating_add(e.bytes));
        if entries.is_empty() {
            self.any.store(false, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CheckedOffsets;

    #[test]
    fn remembers_until_an_overlapping_write() {
        let c = CheckedOffsets::default();
        assert!(!c.known_valid(1000, 80, 50));
        c.remember(1000, 80, 50);
        assert!(c.known_valid(1000, 80, 50));
        assert!(c.known_valid(1000, 80, 60), "valid for a longer input");
        assert!(!c.known_valid(1000, 80, 49), "not for a shorter one");
        assert!(!c.known_valid(1000, 72, 50), "another range");
        c.forget(1080, 8);
        assert!(c.known_valid(1000, 80, 50), "a write just past the range");
        c.forget(1079, 1);
        assert!(!c.known_valid(1000, 80, 50), "a write to its last byte");
        c.remember(1000, 80, 50);
        c.forget(0, 1001);
        assert!(!c.known_valid(1000, 80, 50), "a write to its first byte");
    }

    #[test]
    fn keeps_the_newest_entries() {
        let c = CheckedOffsets::default();
        for i in 0..super::KEEP as u64 + 1 {
            c.remember(i * 100, 8, 1);
        }
        assert!(!c.known_valid(0, 8, 1), "the oldest is dropped");
        assert!(c.known_valid(100, 8, 1));
        assert!(c.known_valid(super::KEEP as u64 * 100, 8, 1));
    }
}
