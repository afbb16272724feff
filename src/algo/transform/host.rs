//! Host versions of fill, sequence, transform, gather and scatter.

use crate::algo::HOST_MIN_SPLIT as MIN_SPLIT;
use crate::element::{Element, IndexElement};
use crate::ops::{Arith, BinaryOp, UnaryOp};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

pub fn fill<T: Element>(out: &mut [T], value: T) {
    out.par_iter_mut().with_min_len(MIN_SPLIT).for_each(|x| *x = value);
}

pub fn sequence<T: Arith>(out: &mut [T], start: T, step: T) {
    out.par_iter_mut()
        .with_min_len(MIN_SPLIT)
        .enumerate()
        .for_each(|(i, x)| *x = start.add(T::from_scalar(crate::Scalar::U64(i as u64)).mul(step)));
}

pub fn transform<T: Element, Op: UnaryOp<T>>(src: &[T], out: &mut [Op::Output], op: &Op)
where
    Op::Output: Element,
{
    out.par_iter_mut()
        .with_min_len(MIN_SPLIT)
        .zip(src.par_iter())
        .for_each(|(o, &x)| *o = op.apply(x));
}

pub fn transform2<T: Element, Op: BinaryOp<T>>(a: &[T], b: &[T], out: &mut [T], op: &Op) {
    out.par_iter_mut()
        .with_min_len(MIN_SPLIT)
        .zip(a.par_iter().zip(b.par_iter()))
        .for_each(|(o, (&x, &y))| *o = op.apply(x, y));
}

/// `out[0] = src[0]`, `out[i] = op(src[i], src[i - 1])`.
pub fn adjacent_difference<T: Element, Op: BinaryOp<T>>(src: &[T], out: &mut [T], op: &Op) {
    out.par_iter_mut().with_min_len(MIN_SPLIT).enumerate().for_each(|(i, o)| {
        *o = if i == 0 { src[0] } else { op.apply(src[i], src[i - 1]) };
    });
}

/// [`adjacent_difference`] in place: each chunk's predecessor is saved
/// first, then every chunk runs back to front on its own.
pub fn adjacent_difference_in_place<T: Element, Op: BinaryOp<T>>(data: &mut [T], op: &Op) {
    let preds: Vec<Option<T>> = (0..data.len().div_ceil(MIN_SPLIT))
        .map(|c| (c > 0).then(|| data[c * MIN_SPLIT - 1]))
        .collect();
    data.par_chunks_mut(MIN_SPLIT).zip(preds).for_each(|(chunk, before)| {
        for i in (1..chunk.len()).rev() {
            chunk[i] = op.apply(chunk[i], chunk[i - 1]);
        }
        if let (Some(p), Some(first)) = (before, chunk.first_mut()) {
            *first = op.apply(*first, p);
        }
    });
}

/// Returns false when some index was out of range (its slot gets `T::default()`).
pub fn gather<T: Element, I: IndexElement>(src: &[T], indices: &[I], out: &mut [T]) -> bool {
    let bad = AtomicBool::new(false);
    out.par_iter_mut()
        .with_min_len(MIN_SPLIT)
        .zip(indices.par_iter())
        .for_each(|(o, &i)| {
            *o = match src.get(i.as_u64() as usize) {
                Some(&v) => v,
                None => {
                    bad.store(true, Ordering::Relaxed);
                    T::default()
                }
            }
        });
    !bad.load(Ordering::Relaxed)
}

/// Sequential, so with repeated indices the last write wins. Returns false
/// when some index was out of range (that element is skipped).
pub fn scatter<T: Element, I: IndexElement>(src: &[T], indices: &[I], out: &mut [T]) -> bool {
    let mut ok = true;
    for (&v, &i) in src.iter().zip(indices) {
        match out.get_mut(i.as_u64() as usize) {
            Some(slot) => *slot = v,
            None => ok = false,
        }
    }
    ok
}
