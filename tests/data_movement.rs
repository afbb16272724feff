//! Construction, views and data movement (`from_slice`, `zeros`, `filled`,
//! `fill`, `copy_from`, `copy_from_host`, `to_device_vec`, `to_vec`,
//! `slice`, `slice_mut`, `gather`, `scatter`) on every device and element
//! type, against plain Rust; bad input; and a vector past 2^32 elements.

mod common;

use common::{assert_same, ctx, devices, random_vec, rng, wide_sizes, Sample, TestRng, SIZES};
use cuprim::prelude::*;
use cuprim::IndexElement;
use rand::{Rng, RngCore};
use std::ops::Bound;

/// `data` with `before` random elements in front and 7 behind.
fn padded<T: Sample>(r: &mut TestRng, data: &[T], before: usize) -> Vec<T> {
    let mut v = random_vec(r, before);
    v.extend_from_slice(data);
    v.extend(random_vec::<T>(r, 7));
    v
}

// ---------------------------------------------------------------------------
// Construction, copies, fill.

fn construct_and_copy<T: Sample>() {
    for dev in devices() {
        for &n in SIZES {
            let (mut r, seed) = rng(&format!("copy {} {n}", T::NAME));
            let c = |what: &str| ctx(&dev, &format!("{what} <{}>", T::NAME), n, seed);
            let data = random_vec::<T>(&mut r, n);
            let v = DeviceVec::from_slice(&dev, &data).unwrap();
            assert_eq!(v.len(), n, "{}", c("len"));
            assert_eq!(v.is_empty(), n == 0, "{}", c("is_empty"));
            assert_eq!(v.device(), &dev, "{}", c("device"));
            assert_same(&v.to_vec().unwrap(), &data, &c("from_slice / to_vec"));

            let z = DeviceVec::<T>::zeros(&dev, n).unwrap();
            assert_same(&z.to_vec().unwrap(), &vec![T::zero(); n], &c("zeros"));
            let value = T::random(&mut r, &T::specials());
            let f = DeviceVec::filled(&dev, n, value).unwrap();
            assert_same(&f.to_vec().unwrap(), &vec![value; n], &c(&format!("filled {value:?}")));

            // copy_from: whole vectors, then a copy of a copy.
            let mut dst = DeviceVec::<T>::zeros(&dev, n).unwrap();
            dst.copy_from(&v).unwrap();
            assert_same(&dst.to_vec().unwrap(), &data, &c("copy_from"));
            let w = dst.to_device_vec().unwrap();
            assert_same(&w.to_vec().unwrap(), &data, &c("to_device_vec"));
            // Writing the copy leaves the original alone.
            dst.fill(value).unwrap();
            assert_same(&dst.to_vec().unwrap(), &vec![value; n], &c("fill"));
            assert_same(&w.to_vec().unwrap(), &data, &c("to_device_vec is a copy"));
            assert_same(&v.to_vec().unwrap(), &data, &c("copy_from source unchanged"));

            let other = random_vec::<T>(&mut r, n);
            dst.copy_from_host(&other).unwrap();
            assert_same(&dst.to_vec().unwrap(), &other, &c("copy_from_host"));
        }
    }
}

/// Views at every offset 0..=17 (so every misalignment of every element
/// size), of lengths around the fill kernel's 16-byte vector: each write
/// lands inside its view and nowhere else.
fn views<T: Sample>() {
    for dev in devices() {
        let (mut r, seed) = rng(&format!("views {}", T::NAME));
        for offset in 0..=17usize {
            for len in [0usize, 1, 2, 7, 15, 16, 17, 31, 33, 100, 1037] {
                let c = |what: &str| ctx(&dev, &format!("{what} <{}> on view {offset}..+{len}", T::NAME), len, seed);
                let base = random_vec::<T>(&mut r, offset + len + 19);
                let mut v = DeviceVec::from_slice(&dev, &base).unwrap();
                let range = offset..offset + len;
                assert_same(
                    &v.slice(range.clone()).unwrap().to_vec().unwrap(),
                    &base[range.clone()],
                    &c("slice to_vec"),
                );
                assert_same(
                    &v.slice(range.clone()).unwrap().to_device_vec().unwrap().to_vec().unwrap(),
                    &base[range.clone()],
                    &c("slice to_device_vec"),
                );

                // fill
                let value = T::random(&mut r, &T::specials());
                let mut want = base.clone();
                want[range.clone()].fill(value);
                let mut s = v.slice_mut(range.clone()).unwrap();
                assert_eq!(s.len(), len, "{}", c("view len"));
                s.fill(value).unwrap();
                assert_same(&s.to_vec().unwrap(), &want[range.clone()], &c("fill, read back through the view"));
                assert_same(&v.to_vec().unwrap(), &want, &c("fill"));

                // copy_from_host into a view
                let fresh = random_vec::<T>(&mut r, len);
                want[range.clone()].copy_from_slice(&fresh);
                v.slice_mut(range.clone()).unwrap().copy_from_host(&fresh).unwrap();
                assert_same(&v.to_vec().unwrap(), &want, &c("copy_from_host"));

                // copy_from between views of two vectors, at different offsets
                let src_off = (offset * 7 + 3) % 19;
                let src_host = random_vec::<T>(&mut r, src_off + len + 2);
                let src = DeviceVec::from_slice(&dev, &src_host).unwrap();
                want[range.clone()].copy_from_slice(&src_host[src_off..src_off + len]);
                v.slice_mut(range.clone())
                    .unwrap()
                    .copy_from(&src.slice(src_off..src_off + len).unwrap())
                    .unwrap();
                assert_same(&v.to_vec().unwrap(), &want, &c("copy_from a view"));
                assert_same(&src.to_vec().unwrap(), &src_host, &c("copy_from source unchanged"));
                // ... and from a whole vector into a view
                let whole = DeviceVec::from_slice(&dev, &fresh).unwrap();
                want[range.clone()].copy_from_slice(&fresh);
                v.slice_mut(range.clone()).unwrap().copy_from(&whole).unwrap();
                assert_same(&v.to_vec().unwrap(), &want, &c("copy_from a vector into a view"));
                // ... and from a view into a whole vector
                let mut whole2 = DeviceVec::<T>::zeros(&dev, len).unwrap();
                whole2.copy_from(&v.slice(range.clone()).unwrap()).unwrap();
                assert_same(
                    &whole2.to_vec().unwrap(),
                    &want[range.clone()],
                    &c("copy_from a view into a vector"),
                );
            }
        }
    }
}

/// Large views: fill and copy_from at odd offsets on the big sizes.
fn large_views<T: Sample>() {
    for dev in devices() {
        for &n in SIZES {
            let (mut r, seed) = rng(&format!("large views {} {n}", T::NAME));
            let c = |what: &str| ctx(&dev, &format!("{what} <{}>", T::NAME), n, seed);
            let data = random_vec::<T>(&mut r, n);
            let off = 3;
            let host = padded(&mut r, &data, off);
            let mut v = DeviceVec::from_slice(&dev, &host).unwrap();
            let value = T::random(&mut r, &T::specials());
            v.slice_mut(off..off + n).unwrap().fill(value).unwrap();
            let mut want = host.clone();
            want[off..off + n].fill(value);
            assert_same(&v.to_vec().unwrap(), &want, &c("fill on a view at 3"));
            let src = DeviceVec::from_slice(&dev, &padded(&mut r, &data, 1)).unwrap();
            v.slice_mut(off..off + n).unwrap().copy_from(&src.slice(1..1 + n).unwrap()).unwrap();
            want[off..off + n].copy_from_slice(&data);
            assert_same(&v.to_vec().unwrap(), &want, &c("copy_from view at 1 into view at 3"));
        }
    }
}

// ---------------------------------------------------------------------------
// Gather and scatter.

fn index<I: IndexElement>(i: usize) -> I {
    I::from_scalar(cuprim::Scalar::U64(i as u64))
}

fn idx_usize<I: IndexElement>(i: I) -> usize {
    i.as_u64() as usize
}

/// The full [`SIZES`] for 32-bit indices; in debug builds the 64-bit
/// indices skip the largest (the host reference is slow unoptimised).
fn index_sizes<I: IndexElement>() -> &'static [usize] {
    if I::NAME == "u32" {
        SIZES
    } else {
        wide_sizes()
    }
}

/// The largest size of the bad-input checks: `(1 << 20) + 3` in release
/// builds, smaller in debug builds.
fn big() -> usize {
    if cfg!(debug_assertions) {
        65_537
    } else {
        (1 << 20) + 3
    }
}

fn gather_with<T: Sample, I: IndexElement>() {
    for dev in devices() {
        for &n in index_sizes::<I>() {
            let (mut r, seed) = rng(&format!("gather {} {} {n}", T::NAME, I::NAME));
            let c = |what: &str| ctx(&dev, &format!("{what} <{}, {}>", T::NAME, I::NAME), n, seed);
            // A source of a different length from the indices.
            let src_len = if n == 0 { 0 } else { n / 3 + 1 };
            let src = random_vec::<T>(&mut r, src_len);
            let idx: Vec<I> = (0..if src_len == 0 { 0 } else { n })
                .map(|_| index(r.gen_range(0..src_len)))
                .collect();
            let want: Vec<T> = idx.iter().map(|&i| src[idx_usize(i)]).collect();
            let dsrc = DeviceVec::from_slice(&dev, &src).unwrap();
            let didx = DeviceVec::from_slice(&dev, &idx).unwrap();
            let got = dsrc.gather(&didx).unwrap();
            assert_eq!(got.len(), idx.len(), "{}", c("gather length"));
            assert_same(&got.to_vec().unwrap(), &want, &c("gather"));
            // Identity permutation and reversal hit every element.
            let ident: Vec<I> = (0..src_len).map(index).collect();
            let rev: Vec<I> = (0..src_len).rev().map(index).collect();
            let got = dsrc.gather(&DeviceVec::from_slice(&dev, &ident).unwrap()).unwrap();
            assert_same(&got.to_vec().unwrap(), &src, &c("gather identity"));
            let got = dsrc.gather(&DeviceVec::from_slice(&dev, &rev).unwrap()).unwrap();
            let want_rev: Vec<T> = src.iter().rev().copied().collect();
            assert_same(&got.to_vec().unwrap(), &want_rev, &c("gather reversed"));
        }
        // Views of source and indices at odd offsets.
        for &n in wide_sizes() {
            let (mut r, seed) = rng(&format!("gather views {} {} {n}", T::NAME, I::NAME));
            let c = |what: &str| ctx(&dev, &format!("{what} <{}, {}>", T::NAME, I::NAME), n, seed);
            let src = random_vec::<T>(&mut r, n + 1);
            let idx: Vec<I> = (0..n).map(|_| index(r.gen_range(0..n + 1))).collect();
            let dsrc = DeviceVec::from_slice(&dev, &padded(&mut r, &src, 5)).unwrap();
            let mut idx_host: Vec<I> = (0..3).map(index).collect();
            idx_host.extend_from_slice(&idx);
            let didx = DeviceVec::from_slice(&dev, &idx_host).unwrap();
            let got = dsrc.slice(5..5 + n + 1).unwrap().gather(&didx.slice(3..).unwrap()).unwrap();
            let want: Vec<T> = idx.iter().map(|&i| src[idx_usize(i)]).collect();
            assert_same(&got.to_vec().unwrap(), &want, &c("gather on views at 5 and 3"));
            // An index that is in range of the vector but not of the view
            // is out of bounds.
            if n > 0 {
                let past = DeviceVec::from_slice(&dev, &[index::<I>(n + 1)]).unwrap();
                let e = dsrc.slice(5..5 + n + 1).unwrap().gather(&past);
                assert!(
                    matches!(e, Err(Error::IndexOutOfBounds { .. })),
                    "{}: got {e:?}",
                    c("gather past a view's end")
                );
            }
        }
    }
}

fn gather_out_of_bounds<T: Sample, I: IndexElement>() {
    for dev in devices() {
        let (mut r, seed) = rng(&format!("gather oob {} {}", T::NAME, I::NAME));
        for &(src_len, n) in &[(0usize, 1usize), (1, 1), (10, 33), (33, 4097), (4097, big())] {
            let c = |what: &str| ctx(&dev, &format!("{what} <{}, {}> src_len {src_len}", T::NAME, I::NAME), n, seed);
            let src = random_vec::<T>(&mut r, src_len);
            let mut idx: Vec<I> = (0..n)
                .map(|_| index(if src_len > 0 { r.gen_range(0..src_len) } else { 0 }))
                .collect();
            let bad = r.gen_range(0..n);
            idx[bad] = if r.gen() { index(src_len) } else { I::highest() };
            let dsrc = DeviceVec::from_slice(&dev, &src).unwrap();
            let didx = DeviceVec::from_slice(&dev, &idx).unwrap();
            match dsrc.gather(&didx) {
                Err(Error::IndexOutOfBounds { len, .. }) => assert_eq!(len, src_len, "{}", c("reported length")),
                other => panic!("{}: want IndexOutOfBounds, got {other:?}", c("gather")),
            }
            // The error does not stick to the device: a good call succeeds.
            if src_len > 0 {
                idx[bad] = index(src_len - 1);
                let got = dsrc.gather(&DeviceVec::from_slice(&dev, &idx).unwrap()).unwrap();
                let want: Vec<T> = idx.iter().map(|&i| src[idx_usize(i)]).collect();
                assert_same(&got.to_vec().unwrap(), &want, &c("gather after an out-of-bounds call"));
            }
        }
    }
}

/// `k` distinct indices below `len`, in random order.
fn distinct(r: &mut TestRng, len: usize, k: usize) -> Vec<usize> {
    let mut all: Vec<usize> = (0..len).collect();
    for i in 0..k.min(len) {
        let j = r.gen_range(i..len);
        all.swap(i, j);
    }
    all.truncate(k.min(len));
    all
}

fn scatter_with<T: Sample, I: IndexElement>() {
    for dev in devices() {
        for &n in index_sizes::<I>() {
            let (mut r, seed) = rng(&format!("scatter {} {} {n}", T::NAME, I::NAME));
            let c = |what: &str| ctx(&dev, &format!("{what} <{}, {}>", T::NAME, I::NAME), n, seed);
            // n values to distinct places in a longer output.
            let out_len = n + n / 2 + 1;
            let src = random_vec::<T>(&mut r, n);
            let places = distinct(&mut r, out_len, n);
            let idx: Vec<I> = places.iter().map(|&p| index(p)).collect();
            let before = random_vec::<T>(&mut r, out_len);
            let mut want = before.clone();
            for (k, &p) in places.iter().enumerate() {
                want[p] = src[k];
            }
            let dsrc = DeviceVec::from_slice(&dev, &src).unwrap();
            let didx = DeviceVec::from_slice(&dev, &idx).unwrap();
            let mut out = DeviceVec::from_slice(&dev, &before).unwrap();
            dsrc.scatter(&didx, &mut out).unwrap();
            assert_same(&out.to_vec().unwrap(), &want, &c("scatter"));
            assert_same(&dsrc.to_vec().unwrap(), &src, &c("scatter leaves its source alone"));
        }
        for &n in wide_sizes() {
            let (mut r, seed) = rng(&format!("scatter views {} {} {n}", T::NAME, I::NAME));
            let c = |what: &str| ctx(&dev, &format!("{what} <{}, {}>", T::NAME, I::NAME), n, seed);
            // Source, indices and output all views at odd offsets.
            let src = random_vec::<T>(&mut r, n);
            let places = distinct(&mut r, n, n);
            let mut idx_host: Vec<I> = vec![index(0); 1];
            idx_host.extend(places.iter().map(|&p| index::<I>(p)));
            let before = random_vec::<T>(&mut r, n + 10);
            let dsrc = DeviceVec::from_slice(&dev, &padded(&mut r, &src, 3)).unwrap();
            let didx = DeviceVec::from_slice(&dev, &idx_host).unwrap();
            let mut out = DeviceVec::from_slice(&dev, &before).unwrap();
            let mut want = before.clone();
            for (k, &p) in places.iter().enumerate() {
                want[7 + p] = src[k];
            }
            dsrc.slice(3..3 + n)
                .unwrap()
                .scatter(&didx.slice(1..).unwrap(), &mut out.slice_mut(7..7 + n).unwrap())
                .unwrap();
            assert_same(&out.to_vec().unwrap(), &want, &c("scatter between views"));
        }
    }
}

fn scatter_out_of_bounds<T: Sample, I: IndexElement>() {
    for dev in devices() {
        let (mut r, seed) = rng(&format!("scatter oob {} {}", T::NAME, I::NAME));
        for &(n, out_len) in &[(1usize, 0usize), (1, 1), (33, 40), (4097, 5000), (big(), big() + 100)] {
            let c = |what: &str| ctx(&dev, &format!("{what} <{}, {}> out_len {out_len}", T::NAME, I::NAME), n, seed);
            let src = random_vec::<T>(&mut r, n);
            let mut places: Vec<Option<usize>> = distinct(&mut r, out_len, n).into_iter().map(Some).collect();
            places.resize(n, None);
            // Some out-of-range entries at random positions (at least one).
            for _ in 0..1 + n / 50 {
                let k = r.gen_range(0..n);
                places[k] = None;
            }
            let idx: Vec<I> = places
                .iter()
                .map(|p| match p {
                    Some(p) => index(*p),
                    None if r.next_u32() % 2 == 0 => index(out_len + r.gen_range(0..3)),
                    None => I::highest(),
                })
                .collect();
            let before = random_vec::<T>(&mut r, out_len);
            let mut want = before.clone();
            for (k, p) in places.iter().enumerate() {
                if let Some(p) = p {
                    want[*p] = src[k];
                }
            }
            let dsrc = DeviceVec::from_slice(&dev, &src).unwrap();
            let didx = DeviceVec::from_slice(&dev, &idx).unwrap();
            let mut out = DeviceVec::from_slice(&dev, &before).unwrap();
            match dsrc.scatter(&didx, &mut out) {
                Err(Error::IndexOutOfBounds { len, .. }) => assert_eq!(len, out_len, "{}", c("reported length")),
                other => panic!("{}: want IndexOutOfBounds, got {other:?}", c("scatter")),
            }
            assert_same(&out.to_vec().unwrap(), &want, &c("in-range writes done, nothing else changed"));
            // A view: indices in range of the vector but past the view.
            if out_len > 2 {
                let mut out = DeviceVec::from_slice(&dev, &before).unwrap();
                let one_src = DeviceVec::from_slice(&dev, &src[..1]).unwrap();
                let past = DeviceVec::from_slice(&dev, &[index::<I>(out_len - 1)]).unwrap();
                let e = one_src.scatter(&past, &mut out.slice_mut(1..out_len - 1).unwrap());
                assert!(
                    matches!(e, Err(Error::IndexOutOfBounds { .. })),
                    "{}: got {e:?}",
                    c("scatter past a view's end")
                );
                assert_same(&out.to_vec().unwrap(), &before, &c("nothing written past a view"));
            }
        }
    }
}

/// Repeated indices: on the host the last write wins; on CUDA each slot
/// holds one of the values sent to it.
fn scatter_repeats<T: Sample, I: IndexElement>() {
    for dev in devices() {
        let (mut r, seed) = rng(&format!("scatter repeats {} {}", T::NAME, I::NAME));
        for &n in &[1usize, 33, 4097, 100_003] {
            let c = ctx(&dev, &format!("scatter with repeated indices <{}, {}>", T::NAME, I::NAME), n, seed);
            let out_len = n / 4 + 1;
            let src = random_vec::<T>(&mut r, n);
            let places: Vec<usize> = (0..n).map(|_| r.gen_range(0..out_len)).collect();
            let idx: Vec<I> = places.iter().map(|&p| index(p)).collect();
            let before = random_vec::<T>(&mut r, out_len);
            let mut out = DeviceVec::from_slice(&dev, &before).unwrap();
            DeviceVec::from_slice(&dev, &src)
                .unwrap()
                .scatter(&DeviceVec::from_slice(&dev, &idx).unwrap(), &mut out)
                .unwrap();
            let got = out.to_vec().unwrap();
            let mut candidates: Vec<Vec<T>> = vec![Vec::new(); out_len];
            for (k, &p) in places.iter().enumerate() {
                candidates[p].push(src[k]);
            }
            for (slot, cands) in candidates.iter().enumerate() {
                let ok = match cands.last() {
                    None => common::same(got[slot], before[slot]),
                    Some(&last) if dev.is_host() => common::same(got[slot], last),
                    Some(_) => cands.iter().any(|&x| common::same(got[slot], x)),
                };
                assert!(ok, "slot {slot} holds {:?}, candidates {cands:?}: {c}", got[slot]);
            }
        }
    }
}

macro_rules! tests_for {
    ($($m:ident: $t:ty);* $(;)?) => {$(
        mod $m {
            use super::*;
            #[test]
            fn construct_copy_fill() {
                construct_and_copy::<$t>();
            }
            #[test]
            fn views_at_every_offset() {
                views::<$t>();
            }
            #[test]
            fn large_views() {
                super::large_views::<$t>();
            }
            #[test]
            fn gather() {
                gather_with::<$t, u32>();
                gather_with::<$t, u64>();
            }
            #[test]
            fn gather_out_of_bounds() {
                super::gather_out_of_bounds::<$t, u32>();
                super::gather_out_of_bounds::<$t, u64>();
            }
            #[test]
            fn scatter() {
                scatter_with::<$t, u32>();
                scatter_with::<$t, u64>();
            }
            #[test]
            fn scatter_out_of_bounds() {
                super::scatter_out_of_bounds::<$t, u32>();
                super::scatter_out_of_bounds::<$t, u64>();
            }
            #[test]
            fn scatter_repeated_indices() {
                scatter_repeats::<$t, u32>();
                scatter_repeats::<$t, u64>();
            }
        }
    )*};
}

tests_for!(
    u8_: u8;
    i8_: i8;
    u32_: u32;
    i32_: i32;
    u64_: u64;
    i64_: i64;
    f16_: f16;
    bf16_: bf16;
    f32_: f32;
    f64_: f64;
);

// ---------------------------------------------------------------------------
// Bad input.

#[test]
fn slices_out_of_range() {
    for dev in devices() {
        let mut v = DeviceVec::from_slice(&dev, &[1u8, 2, 3, 4, 5]).unwrap();
        let bad: Vec<(Bound<usize>, Bound<usize>)> = vec![
            (Bound::Included(0), Bound::Excluded(6)),
            (Bound::Included(2), Bound::Excluded(9)),
            (Bound::Included(4), Bound::Excluded(3)),
            (Bound::Included(6), Bound::Unbounded),
            (Bound::Included(6), Bound::Excluded(6)),
            (Bound::Unbounded, Bound::Included(5)),
            (Bound::Unbounded, Bound::Included(usize::MAX)),
            (Bound::Excluded(5), Bound::Unbounded),
            (Bound::Excluded(usize::MAX), Bound::Unbounded),
            (Bound::Included(usize::MAX), Bound::Excluded(usize::MAX)),
        ];
        for range in bad {
            assert!(matches!(v.slice(range), Err(Error::InvalidArgument(_))), "{dev:?}: slice {range:?}");
            assert!(
                matches!(v.slice_mut(range), Err(Error::InvalidArgument(_))),
                "{dev:?}: slice_mut {range:?}"
            );
        }
        type Range = (Bound<usize>, Bound<usize>);
        let good: Vec<(Range, Vec<u8>)> = vec![
            ((Bound::Unbounded, Bound::Unbounded), vec![1, 2, 3, 4, 5]),
            ((Bound::Included(5), Bound::Unbounded), vec![]),
            ((Bound::Included(0), Bound::Excluded(0)), vec![]),
            ((Bound::Excluded(0), Bound::Included(1)), vec![2]),
            ((Bound::Included(1), Bound::Included(4)), vec![2, 3, 4, 5]),
            ((Bound::Excluded(4), Bound::Unbounded), vec![]),
        ];
        for (range, want) in good {
            assert_eq!(v.slice(range).unwrap().to_vec().unwrap(), want, "{dev:?}: slice {range:?}");
            assert_eq!(v.slice_mut(range).unwrap().to_vec().unwrap(), want, "{dev:?}: slice_mut {range:?}");
        }
        // Ordinary range syntax.
        let (three, two) = (3, 2);
        assert!(
            v.slice(..6).is_err() && v.slice(three..two).is_err() && v.slice(..=5).is_err(),
            "{dev:?}"
        );
        assert_eq!(v.slice(2..=3).unwrap().to_vec().unwrap(), vec![3, 4], "{dev:?}");
        // A failed slice_mut changed nothing.
        assert_eq!(v.to_vec().unwrap(), vec![1, 2, 3, 4, 5], "{dev:?}");
        let e = DeviceVec::<f32>::zeros(&dev, 0).unwrap();
        assert!(e.slice(..).unwrap().is_empty() && e.slice(0..1).is_err(), "{dev:?}");
    }
}

#[test]
fn length_mismatches() {
    for dev in devices() {
        let a = DeviceVec::from_slice(&dev, &[1i32, 2, 3]).unwrap();
        let mut b = DeviceVec::<i32>::zeros(&dev, 4).unwrap();
        let lm = |r: cuprim::Result<()>, expected: usize, actual: usize, what: &str| match r {
            Err(Error::LengthMismatch {
                expected: e, actual: a, ..
            }) if e == expected && a == actual => {}
            other => panic!("{dev:?} {what}: want LengthMismatch {expected} vs {actual}, got {other:?}"),
        };
        lm(b.copy_from(&a), 4, 3, "copy_from");
        lm(b.copy_from_host(&[1, 2, 3, 4, 5]), 4, 5, "copy_from_host");
        lm(b.slice_mut(1..).unwrap().copy_from_host(&[]), 3, 0, "copy_from_host into a view");
        assert_eq!(b.to_vec().unwrap(), vec![0; 4], "{dev:?}: failed copies wrote nothing");
        let idx = DeviceVec::from_slice(&dev, &[0u32, 1]).unwrap();
        lm(a.scatter(&idx, &mut b), 3, 2, "scatter with fewer indices than values");
        assert_eq!(b.to_vec().unwrap(), vec![0; 4], "{dev:?}: a rejected scatter wrote nothing");
        // The good lengths work.
        b.slice_mut(1..).unwrap().copy_from(&a).unwrap();
        assert_eq!(b.to_vec().unwrap(), vec![0, 1, 2, 3], "{dev:?}");
        a.slice(..2).unwrap().scatter(&idx, &mut b).unwrap();
        assert_eq!(b.to_vec().unwrap(), vec![1, 2, 2, 3], "{dev:?}");
    }
}

/// Empty vectors, empty views and single elements through every call.
#[test]
fn empty_and_single() {
    for dev in devices() {
        let e = DeviceVec::<u64>::from_slice(&dev, &[]).unwrap();
        assert!(e.is_empty() && e.to_vec().unwrap().is_empty(), "{dev:?}");
        assert!(e.to_device_vec().unwrap().is_empty(), "{dev:?}");
        assert!(DeviceVec::<bf16>::zeros(&dev, 0).unwrap().is_empty(), "{dev:?}");
        assert!(DeviceVec::filled(&dev, 0, f16::NAN).unwrap().is_empty(), "{dev:?}");
        let mut m = DeviceVec::<u64>::zeros(&dev, 0).unwrap();
        m.fill(3).unwrap();
        m.copy_from(&e).unwrap();
        m.copy_from_host(&[]).unwrap();
        let no_idx = DeviceVec::<u32>::from_slice(&dev, &[]).unwrap();
        assert!(e.gather(&no_idx).unwrap().is_empty(), "{dev:?}: empty gather");
        e.scatter(&no_idx, &mut m).unwrap();
        // Gather from an empty source with no indices is fine; with any
        // index it is out of bounds.
        let one_idx = DeviceVec::from_slice(&dev, &[0u64]).unwrap();
        assert!(matches!(e.gather(&one_idx), Err(Error::IndexOutOfBounds { len: 0, .. })), "{dev:?}");
        // Scatter of nothing into something leaves it alone.
        let mut out = DeviceVec::from_slice(&dev, &[9u64, 8]).unwrap();
        e.scatter(&no_idx, &mut out).unwrap();
        assert_eq!(out.to_vec().unwrap(), vec![9, 8], "{dev:?}");

        let one = DeviceVec::from_slice(&dev, &[-0.0f64]).unwrap();
        assert_eq!(one.to_vec().unwrap()[0].to_bits(), (-0.0f64).to_bits(), "{dev:?}");
        let g = one.gather(&DeviceVec::from_slice(&dev, &[0u32, 0, 0]).unwrap()).unwrap();
        assert!(g.to_vec().unwrap().iter().all(|x| x.to_bits() == (-0.0f64).to_bits()), "{dev:?}");
        let mut o = DeviceVec::filled(&dev, 1, 5.0f64).unwrap();
        one.scatter(&DeviceVec::from_slice(&dev, &[0u64]).unwrap(), &mut o).unwrap();
        assert_eq!(o.to_vec().unwrap()[0].to_bits(), (-0.0f64).to_bits(), "{dev:?}");
    }
}

/// Every call that takes two buffers refuses a host one with a CUDA one.
#[test]
fn mixing_host_and_cuda() {
    let Some(gpu) = common::cuda() else {
        common::skip("mixing_host_and_cuda", "needs CUDA to mix devices");
        return;
    };
    let host = Device::host();
    let mismatch = |r: cuprim::Result<()>, what: &str| {
        assert!(matches!(r, Err(Error::DeviceMismatch { .. })), "{what}: got {r:?}");
    };
    let hv = DeviceVec::from_slice(&host, &[1u32, 2, 3]).unwrap();
    let gv = DeviceVec::from_slice(&gpu, &[4u32, 5, 6]).unwrap();
    let hi = DeviceVec::from_slice(&host, &[0u32, 1, 2]).unwrap();
    let gi = DeviceVec::from_slice(&gpu, &[0u32, 1, 2]).unwrap();
    let mut hout = DeviceVec::<u32>::zeros(&host, 3).unwrap();
    let mut gout = DeviceVec::<u32>::zeros(&gpu, 3).unwrap();

    mismatch(hout.copy_from(&gv), "copy_from cuda into host");
    mismatch(gout.copy_from(&hv), "copy_from host into cuda");
    mismatch(
        gout.slice_mut(1..).unwrap().copy_from(&hv.slice(1..).unwrap()),
        "copy_from between views",
    );
    mismatch(hv.gather(&gi).map(|_| ()), "gather host source, cuda indices");
    mismatch(gv.gather(&hi).map(|_| ()), "gather cuda source, host indices");
    mismatch(hv.scatter(&gi, &mut hout), "scatter with cuda indices");
    mismatch(hv.scatter(&hi, &mut gout), "scatter into cuda");
    mismatch(gv.scatter(&gi, &mut hout), "scatter into host");
    mismatch(gv.transform2(&hv, Add).map(|_| ()), "transform2");
    assert_eq!(hout.to_vec().unwrap(), vec![0; 3], "nothing written on the host");
    assert_eq!(gout.to_vec().unwrap(), vec![0; 3], "nothing written on the GPU");
    // The same calls on one device work.
    gout.copy_from(&gv).unwrap();
    gv.scatter(&gi, &mut gout).unwrap();
    assert_eq!(gout.to_vec().unwrap(), vec![4, 5, 6]);
    assert_eq!(gv.gather(&gi).unwrap().to_vec().unwrap(), vec![4, 5, 6]);
}

/// Poisoned allocations: every element of every output is written (a
/// forgotten element would read back as 0xff bytes). Runs on CUDA only,
/// where new buffers start poisoned.
#[test]
fn outputs_fully_written() {
    let Some(gpu) = common::cuda() else {
        common::skip("outputs_fully_written", "poisoning applies to CUDA buffers");
        return;
    };
    for n in [1usize, 15, 16, 17, 4095, 4097, 65_537] {
        let z = DeviceVec::<u8>::zeros(&gpu, n).unwrap();
        assert!(z.to_vec().unwrap().iter().all(|&x| x == 0), "zeros, n={n}");
        let c = z.to_device_vec().unwrap();
        assert!(c.to_vec().unwrap().iter().all(|&x| x == 0), "to_device_vec, n={n}");
        let idx = DeviceVec::<u32>::zeros(&gpu, n).unwrap();
        assert!(z.gather(&idx).unwrap().to_vec().unwrap().iter().all(|&x| x == 0), "gather, n={n}");
        let s = DeviceVec::<u64>::sequence(&gpu, n, 0, 0).unwrap();
        assert!(s.to_vec().unwrap().iter().all(|&x| x == 0), "sequence, n={n}");
    }
}

// ---------------------------------------------------------------------------
// Past 2^32 elements.

/// A `u8` vector of 2^32 + 4099 elements: fill, copy_from, views and
/// gather/scatter with u64 indices near the end (64-bit offsets all the way).
#[test]
fn more_than_u32_max_elements() {
    let Some(gpu) = common::cuda() else {
        common::skip("more_than_u32_max_elements", "4 GiB buffers are a CUDA-only test");
        return;
    };
    use cuprim::pred::Ne;
    let n: usize = (1 << 32) + 4099;
    let mut a = DeviceVec::filled(&gpu, n, 7u8).unwrap();
    assert_eq!(a.len(), n);
    // The last 300 elements, straddling nothing; and 200 around 2^32.
    let tail = n - 300..n;
    let edge = (1 << 32) - 100..(1 << 32) + 100;
    assert!(
        a.slice(tail.clone()).unwrap().to_vec().unwrap().iter().all(|&x| x == 7),
        "fill reached the end"
    );
    assert!(
        a.slice(edge.clone()).unwrap().to_vec().unwrap().iter().all(|&x| x == 7),
        "fill around 2^32"
    );
    assert_eq!(a.count(Ne(7u8)).unwrap(), 0, "fill wrote every element");

    // A view that starts past 2^32 at an odd offset.
    let start = (1usize << 32) + 5;
    a.slice_mut(start..n - 3).unwrap().fill(9).unwrap();
    let got = a.slice(start - 10..n).unwrap().to_vec().unwrap();
    for (k, &x) in got.iter().enumerate() {
        let i = start - 10 + k;
        let want = if (start..n - 3).contains(&i) { 9 } else { 7 };
        assert_eq!(x, want, "element {i} after filling {start}..{}", n - 3);
    }
    assert_eq!(a.count(Ne(7u8)).unwrap(), n - 3 - start, "view fill touched only the view");

    let mut b = DeviceVec::<u8>::zeros(&gpu, n).unwrap();
    b.copy_from(&a).unwrap();
    assert_eq!(
        b.slice(tail.clone()).unwrap().to_vec().unwrap(),
        a.slice(tail.clone()).unwrap().to_vec().unwrap(),
        "copy_from tail"
    );
    assert_eq!(
        b.slice(edge.clone()).unwrap().to_vec().unwrap(),
        a.slice(edge).unwrap().to_vec().unwrap(),
        "copy_from edge"
    );
    assert_eq!(b.count(Ne(7u8)).unwrap(), n - 3 - start, "copy_from copied everything");

    // Gather and scatter with 64-bit indices past 2^32.
    let idx: Vec<u64> = vec![(n - 1) as u64, (1u64 << 32) + 5, 0, (1u64 << 32) - 1, (n - 2) as u64];
    let didx = DeviceVec::from_slice(&gpu, &idx).unwrap();
    b.slice_mut(n - 1..).unwrap().fill(42).unwrap();
    assert_eq!(b.gather(&didx).unwrap().to_vec().unwrap(), vec![42, 9, 7, 7, 7]);
    let vals = DeviceVec::from_slice(&gpu, &[1u8, 2, 3, 4, 5]).unwrap();
    vals.scatter(&didx, &mut b).unwrap();
    assert_eq!(b.gather(&didx).unwrap().to_vec().unwrap(), vec![1, 2, 3, 4, 5]);
    let past = DeviceVec::from_slice(&gpu, &[n as u64]).unwrap();
    assert!(matches!(b.gather(&past), Err(Error::IndexOutOfBounds { .. })));

    // An element-wise map over all of it.
    drop(a);
    b.transform_in_place(cuprim::ops::Negate).unwrap();
    assert_eq!(
        b.slice(n - 2..).unwrap().to_vec().unwrap(),
        vec![5u8.wrapping_neg(), 1u8.wrapping_neg()]
    );
    assert_eq!(b.count(Ne(7u8.wrapping_neg())).unwrap(), (n - 3 - start) + 4, "negated everything");
}
