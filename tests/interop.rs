//! Working with cudarc directly: devices on the caller's context or stream,
//! and buffers handed between cudarc and cuprim without copies. CUDA only,
//! except the host-backend refusals at the top.

mod common;

use common::{assert_same, random_vec, rng, Sample};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use cuprim::ops::{Negate, Square};
use cuprim::prelude::*;
use std::sync::Arc;

#[test]
fn host_vectors_have_no_cuda_side() {
    let host = Device::host();
    assert!(host.cuda_stream().is_none() && host.cuda_context().is_none() && host.arch().is_none());
    let mut v = DeviceVec::from_slice(&host, &[1u32, 2, 3]).unwrap();
    assert!(v.as_cuda_view().is_none());
    assert!(v.as_cuda_view_mut().is_none());
    assert!(matches!(v.into_cuda_slice(), Err(Error::Unsupported(_))));
}

/// CUDA device 0 through cuprim and a cudarc context of the same GPU, or
/// `None` after a skip line.
fn gpu(test: &str) -> Option<(Device, Arc<CudaContext>)> {
    let Some(dev) = common::cuda() else {
        common::skip(test, "needs CUDA");
        return None;
    };
    let ctx = CudaContext::new(0).expect("cuprim found GPU 0 but cudarc cannot open it");
    Some((dev, ctx))
}

/// cudarc data in, cuprim work on the caller's stream, cudarc data out.
fn stream_round_trip<T: Sample + cuprim::ops::Arith>(ctx: &Arc<CudaContext>) {
    let stream = ctx.new_stream().unwrap();
    let dev = Device::from_cuda_stream(stream.clone()).unwrap();
    assert!(dev.is_cuda());
    assert!(Arc::ptr_eq(dev.cuda_stream().unwrap(), &stream), "work goes on the given stream");
    assert_eq!(dev.cuda_context().unwrap().cu_ctx(), ctx.cu_ctx());
    for n in [0usize, 1, 33, 4097, (1 << 20) + 3] {
        let (mut r, seed) = rng(&format!("interop stream {} {n}", T::NAME));
        let what = format!("{} n={n} seed={seed}", T::NAME);
        let data = random_vec::<T>(&mut r, n);
        let slice: CudaSlice<T> = stream.clone_htod(&data).unwrap();
        let v = DeviceVec::from_cuda_slice(&dev, slice).unwrap();
        assert_eq!(v.len(), n);
        assert_same(&v.to_vec().unwrap(), &data, &format!("adopted slice: {what}"));

        // A borrowed view reads the same memory.
        let view = v.as_cuda_view().unwrap();
        assert_eq!(view.len(), n);
        assert_same(&stream.clone_dtoh(&view).unwrap(), &data, &format!("as_cuda_view: {what}"));

        // cuprim's result handed back to cudarc, no host sync in between.
        let sq = v.transform(Square).unwrap();
        let want: Vec<T> = data.iter().map(|&x| cuprim::ops::UnaryOp::apply(&Square, x)).collect();
        let out = sq.into_cuda_slice().unwrap();
        assert_eq!(out.len(), n);
        assert_same(&stream.clone_dtoh(&out).unwrap(), &want, &format!("into_cuda_slice: {what}"));

        // And the original, unwrapped again, is still the input.
        let back = v.into_cuda_slice().unwrap();
        assert_same(&stream.clone_dtoh(&back).unwrap(), &data, &format!("round trip: {what}"));
    }
}

#[test]
fn from_cuda_stream_round_trips() {
    let Some((_dev, ctx)) = gpu("from_cuda_stream_round_trips") else {
        return;
    };
    stream_round_trip::<f32>(&ctx);
    stream_round_trip::<u8>(&ctx);
    stream_round_trip::<f16>(&ctx);
    stream_round_trip::<i64>(&ctx);
}

/// A device on the caller's context has its own stream; a slice made on
/// another stream is ordered correctly in both directions.
#[test]
fn from_cuda_context_and_foreign_streams() {
    let Some((_dev, ctx)) = gpu("from_cuda_context_and_foreign_streams") else {
        return;
    };
    let dev = Device::from_cuda_context(ctx.clone()).unwrap();
    assert_eq!(dev.cuda_context().unwrap().cu_ctx(), ctx.cu_ctx());
    let other = ctx.new_stream().unwrap();
    assert!(
        dev.cuda_stream().unwrap().cu_stream() != other.cu_stream(),
        "the device made its own stream"
    );
    let (mut r, seed) = rng("interop foreign");
    for round in 0..20 {
        let n = 1 << 20;
        let data: Vec<i32> = random_vec(&mut r, n);
        // Queued on `other`; the device must wait for the copy.
        let slice = other.clone_htod(&data).unwrap();
        let mut v = DeviceVec::from_cuda_slice(&dev, slice).unwrap();
        v.transform_in_place(Negate).unwrap();
        // Handed back: `other` must wait for the negation.
        let out = v.into_cuda_slice().unwrap();
        let got = other.clone_dtoh(&out).unwrap();
        let want: Vec<i32> = data.iter().map(|x| x.wrapping_neg()).collect();
        assert_eq!(got, want, "round {round} seed={seed}");
        // Dropped while adopted: freed after the device's work.
        let slice = other.clone_htod(&data).unwrap();
        let v = DeviceVec::from_cuda_slice(&dev, slice).unwrap();
        let w = v.transform(Negate).unwrap();
        drop(v);
        assert_eq!(
            w.to_vec().unwrap(),
            want,
            "round {round} seed={seed}: after dropping an adopted buffer"
        );
    }
}

/// cudarc writes through `as_cuda_view_mut`; cuprim sees the write.
#[test]
fn cudarc_writes_through_a_mutable_view() {
    let Some((dev, _ctx)) = gpu("cudarc_writes_through_a_mutable_view") else {
        return;
    };
    let stream = dev.cuda_stream().unwrap().clone();
    let mut v = DeviceVec::<f64>::zeros(&dev, 4097).unwrap();
    let data: Vec<f64> = (0..4097).map(|i| i as f64 * 0.5 - 7.0).collect();
    {
        let mut view = v.as_cuda_view_mut().unwrap();
        stream.memcpy_htod(&data, &mut view).unwrap();
    }
    assert_eq!(v.to_vec().unwrap(), data);
    assert_eq!(v.slice(4000..).unwrap().to_vec().unwrap(), data[4000..].to_vec());
}

/// Segment offsets a call found valid are checked again after cudarc writes
/// them through a mutable view, or after a round trip through cudarc.
#[test]
fn cudarc_writes_to_checked_offsets() {
    let Some((dev, _ctx)) = gpu("cudarc_writes_to_checked_offsets") else {
        return;
    };
    let stream = dev.cuda_stream().unwrap().clone();
    let v = DeviceVec::from_slice(&dev, &[1u32; 100]).unwrap();
    let mut offsets = DeviceVec::from_slice(&dev, &[0u64, 40, 100]).unwrap();
    for _ in 0..2 {
        assert_eq!(v.segmented_sum(&offsets).unwrap().to_vec().unwrap(), vec![40, 60]);
    }
    {
        let mut view = offsets.as_cuda_view_mut().unwrap();
        stream.memcpy_htod(&[0u64, 140, 100], &mut view).unwrap();
    }
    let r = v.segmented_sum(&offsets);
    assert!(
        matches!(r, Err(Error::InvalidArgument(_))),
        "after a cudarc write: {:?}",
        r.map(|x| x.to_vec())
    );
    {
        let mut view = offsets.as_cuda_view_mut().unwrap();
        stream.memcpy_htod(&[0u64, 40, 100], &mut view).unwrap();
    }
    for _ in 0..2 {
        assert_eq!(v.segmented_sum(&offsets).unwrap().to_vec().unwrap(), vec![40, 60]);
    }
    let mut slice = offsets.into_cuda_slice().unwrap();
    stream.memcpy_htod(&[0u64, 100, 40], &mut slice).unwrap();
    let offsets = DeviceVec::from_cuda_slice(&dev, slice).unwrap();
    let r = v.segmented_sum(&offsets);
    assert!(
        matches!(r, Err(Error::InvalidArgument(_))),
        "after a round trip: {:?}",
        r.map(|x| x.to_vec())
    );
}

/// A buffer from a cudarc context of the same GPU can be adopted by the
/// device cuprim made itself (they share the primary context); the host
/// backend cannot adopt one.
#[test]
fn adopting_into_the_default_device_and_refusals() {
    let Some((dev, ctx)) = gpu("adopting_into_the_default_device_and_refusals") else {
        return;
    };
    let stream = ctx.default_stream();
    let slice = stream.clone_htod(&[1.5f32, -2.0, 3.25]).unwrap();
    let v = DeviceVec::from_cuda_slice(&dev, slice).unwrap();
    assert_eq!(v.transform(Square).unwrap().to_vec().unwrap(), vec![2.25, 4.0, 10.5625]);
    let slice = stream.clone_htod(&[1u8, 2]).unwrap();
    assert!(matches!(
        DeviceVec::from_cuda_slice(&Device::host(), slice),
        Err(Error::DeviceMismatch { .. })
    ));
    // An empty cudarc buffer.
    let empty = stream.null::<u32>().unwrap();
    let e = DeviceVec::from_cuda_slice(&dev, empty).unwrap();
    assert!(e.is_empty() && e.to_vec().unwrap().is_empty());
    assert_eq!(e.into_cuda_slice().unwrap().len(), 0);
}

/// Host-backend allocations that cannot fit are errors, not aborts; the
/// allocation happens before any kernel runs.
#[test]
fn huge_host_allocations_are_out_of_memory() {
    let host = Device::host();
    // 2^62 u32s: the byte count overflows usize.
    assert!(matches!(DeviceVec::<u32>::zeros(&host, 1 << 62), Err(Error::OutOfMemory { .. })));
    assert!(matches!(DeviceVec::filled(&host, 1 << 62, 7u32), Err(Error::OutOfMemory { .. })));
    // 2^62 bytes: representable, but no allocator can provide it.
    assert!(matches!(DeviceVec::<u8>::zeros(&host, 1 << 62), Err(Error::OutOfMemory { .. })));
    if let Some(dev) = common::cuda() {
        assert!(matches!(DeviceVec::<u32>::zeros(&dev, 1 << 62), Err(Error::OutOfMemory { .. })));
    }
}

/// CUDA device 0 through cuprim and a second stream on the same context
/// (cuprim's own), or `None` after a skip line.
fn gpu_and_second_stream(test: &str) -> Option<(Device, Arc<CudaStream>)> {
    let Some(dev) = common::cuda() else {
        common::skip(test, "needs CUDA");
        return None;
    };
    let ctx = dev.cuda_context().unwrap().clone();
    assert!(ctx.is_event_tracking(), "cuprim leaves cudarc's event tracking on");
    let stream2 = ctx.new_stream().unwrap();
    assert!(stream2.cu_stream() != dev.cuda_stream().unwrap().cu_stream());
    Some((dev, stream2))
}

/// Large enough that a copy on another stream that does not wait for
/// cuprim's kernels starts well before they finish.
const BIG: usize = 1 << 24;

fn sorted(v: &[u32]) -> Vec<u32> {
    let mut s = v.to_vec();
    s.sort_unstable();
    s
}

/// A sort's result handed to cudarc with `into_cuda_slice` and read at once
/// on another stream, with no synchronize in between, is the sorted data.
#[test]
fn into_cuda_slice_is_ordered_for_another_stream() {
    let Some((dev, stream2)) = gpu_and_second_stream("into_cuda_slice_is_ordered_for_another_stream") else {
        return;
    };
    let (mut r, seed) = rng("interop sorted slice on a second stream");
    for round in 0..4 {
        let data: Vec<u32> = random_vec(&mut r, BIG);
        let want = sorted(&data);
        let mut v = DeviceVec::from_slice(&dev, &data).unwrap();
        v.sort().unwrap();
        let slice = v.into_cuda_slice().unwrap();
        let got = stream2.clone_dtoh(&slice).unwrap();
        assert!(
            got == want,
            "round {round} seed={seed}: a second stream read the slice before the sort finished"
        );
        // Freed on cuprim's stream after stream2's read (cudarc's events).
        drop(slice);
    }
}

/// `as_cuda_view` and `as_cuda_view_mut` read at once on another stream see
/// the result of the cuprim work queued before; cuprim's write right after
/// waits for that read.
#[test]
fn cuda_views_are_ordered_for_another_stream() {
    let Some((dev, stream2)) = gpu_and_second_stream("cuda_views_are_ordered_for_another_stream") else {
        return;
    };
    let ctx = dev.cuda_context().unwrap().clone();
    // Page-locked, so stream2's copies out of the views are asynchronous:
    // the copy is only queued when memcpy_dtoh returns.
    // SAFETY: only read after stream2 has written all of it.
    let mut pinned = unsafe { ctx.alloc_pinned::<u32>(BIG) }.unwrap();
    let (mut r, seed) = rng("interop views on a second stream");
    for round in 0..4 {
        let data: Vec<u32> = random_vec(&mut r, BIG);
        let want = sorted(&data);
        let negated: Vec<u32> = want.iter().map(|x| x.wrapping_neg()).collect();

        // A new vector, written by a long sequence of kernels (new CUDA
        // buffers start as 0xff bytes in the tests), read through a view.
        let keys = DeviceVec::from_slice(&dev, &data).unwrap();
        let order = keys.argsort::<u32>().unwrap();
        stream2.memcpy_dtoh(&order.as_cuda_view().unwrap(), &mut pinned).unwrap();
        let seen = pinned.as_slice().unwrap().to_vec();
        assert!(
            seen == order.to_vec().unwrap(),
            "round {round} seed={seed}: as_cuda_view right after argsort"
        );

        // Sorted in place, copied out through a view on stream2, and at
        // once negated by cuprim: the copy holds the sorted data (it waited
        // for the sort, and the negation waited for it).
        let mut v = keys;
        v.sort().unwrap();
        stream2.memcpy_dtoh(&v.as_cuda_view().unwrap(), &mut pinned).unwrap();
        v.transform_in_place(Negate).unwrap();
        assert!(
            pinned.as_slice().unwrap() == &want[..],
            "round {round} seed={seed}: as_cuda_view right after sort, then a cuprim write"
        );
        assert!(
            v.to_vec().unwrap() == negated,
            "round {round} seed={seed}: cuprim's write after a cudarc read"
        );

        // The same through a mutable view.
        v.transform_in_place(Negate).unwrap();
        stream2.memcpy_dtoh(&v.as_cuda_view_mut().unwrap(), &mut pinned).unwrap();
        v.transform_in_place(Negate).unwrap();
        assert!(
            pinned.as_slice().unwrap() == &want[..],
            "round {round} seed={seed}: as_cuda_view_mut right after a transform, then a cuprim write"
        );
        assert!(
            v.to_vec().unwrap() == negated,
            "round {round} seed={seed}: cuprim's write after a cudarc read through a mutable view"
        );
    }
}

/// cudarc writes through `as_cuda_view_mut` on another stream; cuprim's next
/// read or write of the vector, at once, sees the new data.
#[test]
fn cudarc_writes_on_another_stream_are_seen_by_cuprim() {
    let Some((dev, stream2)) = gpu_and_second_stream("cudarc_writes_on_another_stream_are_seen_by_cuprim") else {
        return;
    };
    let ctx = dev.cuda_context().unwrap().clone();
    // Page-locked, so stream2's copies are fully asynchronous (from pageable
    // memory most of the copy happens before memcpy_htod returns).
    // SAFETY: every element is written below before the memory is read.
    let mut pinned = unsafe { ctx.alloc_pinned::<u32>(BIG) }.unwrap();
    let (mut r, seed) = rng("interop cudarc writes on a second stream");
    for round in 0..4 {
        let data: Vec<u32> = random_vec(&mut r, BIG);
        pinned.as_mut_slice().unwrap().copy_from_slice(&data);
        let want_sum = data.iter().fold(0u32, |a, &x| a.wrapping_add(x));
        let mut v = DeviceVec::<u32>::zeros(&dev, BIG).unwrap();

        // cuprim reads (a kernel) right after cudarc's write.
        stream2.memcpy_htod(&pinned, &mut v.as_cuda_view_mut().unwrap()).unwrap();
        assert_eq!(v.sum().unwrap(), want_sum, "round {round} seed={seed}: sum after a cudarc write");

        // cuprim reads (a copy) right after cudarc's write.
        v.fill(0).unwrap();
        stream2.memcpy_htod(&pinned, &mut v.as_cuda_view_mut().unwrap()).unwrap();
        assert!(
            v.to_vec().unwrap() == data,
            "round {round} seed={seed}: to_vec after a cudarc write"
        );

        // cuprim writes right after cudarc's write: the results must be
        // cuprim's, computed from cudarc's data.
        v.fill(0).unwrap();
        stream2.memcpy_htod(&pinned, &mut v.as_cuda_view_mut().unwrap()).unwrap();
        v.sort().unwrap();
        assert!(
            v.to_vec().unwrap() == sorted(&data),
            "round {round} seed={seed}: sort after a cudarc write"
        );
    }
}

/// Freed small buffers are handed out again (in stream order) and outputs
/// emptied by a data-dependent count are freed: results stay right while
/// buffers cycle between cuprim, cudarc and the pool, and the device's free
/// memory does not shrink by the emptied outputs' bytes.
#[test]
fn reused_and_emptied_buffers() {
    use cuprim::pred::Gt;
    let Some((dev, ctx)) = gpu("reused_and_emptied_buffers") else {
        return;
    };
    let (mut r, seed) = rng("interop reuse");
    for round in 0..200usize {
        let n = [1usize, 7, 64, 1000, 4096, 65_536, 300_000][round % 7];
        let data = random_vec::<u32>(&mut r, n).into_iter().map(|x| x & 0xffff).collect::<Vec<_>>();
        let v = DeviceVec::from_slice(&dev, &data).unwrap();
        let s = v.scan(Add).unwrap();
        let mut want = data.clone();
        let mut run = 0u32;
        for x in &mut want {
            run = run.wrapping_add(*x);
            *x = run;
        }
        match round % 3 {
            // Handed to cudarc, read there, freed by cudarc.
            0 => {
                let slice = s.into_cuda_slice().unwrap();
                let got = dev.cuda_stream().unwrap().clone_dtoh(&slice).unwrap();
                assert_eq!(got, want, "scan of n={n} via cudarc (round {round}, seed {seed})");
            }
            // Truncated to nothing, then viewed from cudarc.
            1 => {
                assert_eq!(s.to_vec().unwrap(), want, "scan of n={n} (round {round}, seed {seed})");
                let none = v.copy_if(Gt(u32::MAX)).unwrap();
                assert!(none.is_empty());
                assert_eq!(none.as_cuda_view().map(|view| view.len()), Some(0));
            }
            _ => assert_eq!(s.to_vec().unwrap(), want, "scan of n={n} (round {round}, seed {seed})"),
        }
    }

    // 64 MiB inputs whose copy_if keeps nothing: a leaked output per call
    // would take 64 x 64 MiB.
    let big = DeviceVec::<u32>::filled(&dev, 1 << 24, 7).unwrap();
    ctx.bind_to_thread().unwrap();
    let free_now = || {
        dev.synchronize().unwrap();
        cudarc::driver::result::mem_get_info().unwrap().0
    };
    let _warm = big.copy_if(Gt(7u32)).unwrap();
    let before = free_now();
    for _ in 0..64 {
        assert!(big.copy_if(Gt(7u32)).unwrap().is_empty());
        let (yes, no) = big.partition_copy(Gt(0u32)).unwrap();
        assert_eq!((yes.len(), no.len()), (1 << 24, 0));
    }
    let after = free_now();
    let lost = before.saturating_sub(after);
    assert!(lost < 1 << 30, "{lost} bytes of device memory lost over 64 emptied outputs");
}
