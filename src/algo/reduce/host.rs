//! Host reductions and searches. Reductions split the input into fixed
//! chunks and fold the chunk results in order, so float results do not
//! depend on rayon's scheduling: the same input gives the same bits.

use rayon::prelude::*;

const CHUNK: usize = 1 << 16;

/// Folds `map(x, i)` over `src` with `red`, starting from `identity`.
pub fn map_reduce<T, A, M, R>(src: &[T], identity: A, map: M, red: R) -> A
where
    T: Copy + Sync,
    A: Copy + Send + Sync,
    M: Fn(T, usize) -> A + Sync,
    R: Fn(A, A) -> A + Sync,
{
    let partials: Vec<A> = src
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            chunk
                .iter()
                .enumerate()
                .fold(identity, |acc, (k, &x)| red(acc, map(x, c * CHUNK + k)))
        })
        .collect();
    partials.into_iter().fold(identity, &red)
}

/// The lowest index whose element satisfies `pred`.
pub fn find_first<T: Copy + Sync, P: Fn(T) -> bool + Sync>(src: &[T], pred: P) -> Option<usize> {
    src.par_iter().position_first(|&x| pred(x))
}
