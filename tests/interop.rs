//! Working with cudarc directly: devices on the caller's context or stream,
//! and buffers handed between cudarc and cuprim without copies. CUDA only,
//! except the host-backend refusals at the top.

mod common;

use common::{assert_same, random_vec, rng, Sample};
use cudarc::driver::{CudaContext, CudaSlice};
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
