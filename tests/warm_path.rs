//! A warm call (its kernel already in the device's memory cache) allocates
//! nothing on the host and formats no string: the cache key is derived from
//! the plan by hashing, and launches take typed argument tuples. Checked
//! with a counting allocator on this thread, on CUDA (the host backend has
//! no kernels to look up).

mod common;

use cuprim::pred::Gt;
use cuprim::prelude::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;
thread_local!(static ALLOCS: Cell<u64> = const { Cell::new(0) });
// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|a| a.set(a.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}
#[global_allocator]
static COUNTING: Counting = Counting;

fn allocations<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = ALLOCS.with(|a| a.get());
    let r = f();
    (r, ALLOCS.with(|a| a.get()) - before)
}

#[test]
fn warm_calls_allocate_nothing_on_the_host() {
    let Some(dev) = common::cuda() else {
        common::skip("warm_calls_allocate_nothing_on_the_host", "needs CUDA");
        return;
    };
    let data: Vec<f32> = (0..100_003).map(|i| (i % 97) as f32 - 40.0).collect();
    let mut v = DeviceVec::from_slice(&dev, &data).unwrap();
    let mut out = DeviceVec::<f32>::zeros(&dev, 1).unwrap();
    let mut keys = DeviceVec::from_slice(&dev, &(0..100_003u32).rev().collect::<Vec<_>>()).unwrap();
    // Cold: compile or load every kernel once.
    v.reduce_to(Add, &mut out).unwrap();
    v.scan_inclusive_in_place(Max).unwrap();
    v.transform_in_place(cuprim::ops::Negate).unwrap();
    let _ = v.count(Gt(0.0f32)).unwrap();
    let _ = v.min_element().unwrap();
    keys.sort().unwrap();
    dev.synchronize().unwrap();

    let (_, n) = allocations(|| v.reduce_to(Add, &mut out).unwrap());
    assert_eq!(n, 0, "reduce_to allocated {n} times");
    let (_, n) = allocations(|| v.scan_inclusive_in_place(Max).unwrap());
    assert_eq!(n, 0, "scan_inclusive_in_place allocated {n} times");
    let (_, n) = allocations(|| v.transform_in_place(cuprim::ops::Negate).unwrap());
    assert_eq!(n, 0, "transform_in_place allocated {n} times");
    let (_, n) = allocations(|| v.count(Gt(0.0f32)).unwrap());
    assert_eq!(n, 0, "count allocated {n} times");
    let (_, n) = allocations(|| v.min_element().unwrap());
    assert_eq!(n, 0, "min_element allocated {n} times");
    let (_, n) = allocations(|| keys.sort().unwrap());
    assert_eq!(n, 0, "sort allocated {n} times");
    dev.synchronize().unwrap();
    let sorted = keys.to_vec().unwrap();
    assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
}
