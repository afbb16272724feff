//! `cargo run --release --example top_tokens [tokens] [vocabulary]`: the
//! most frequent tokens of a skewed stream of token ids (default ten million
//! ids from a vocabulary of 2^20), on the device.
//!
//! `bincount` counts every id of the vocabulary in one pass, `count` says
//! how many ids occur at all, and `sort_pairs_descending` orders the ids by
//! their counts (stable: equal counts keep ascending ids). The result is
//! checked against a plain count on the host; a mismatch is an error.

use cuprim::pred::Gt;
use cuprim::prelude::*;
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Command-line argument `i` as a positive count, or `default` when absent.
fn count_arg(i: usize, name: &str, default: usize) -> Result<usize, String> {
    match std::env::args().nth(i) {
        None => Ok(default),
        Some(a) => match a.parse() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("{name} must be a positive whole number, got {a:?}")),
        },
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let n = count_arg(1, "tokens", 10_000_000)?;
    let vocab = count_arg(2, "vocabulary", 1 << 20)?;
    if vocab > u32::MAX as usize + 1 {
        return Err(format!("vocabulary must be at most 2^32 (ids are u32), got {vocab}").into());
    }
    let dev = Device::default()?;
    println!("device: {dev:?}");

    // Skewed ids: floor(vocab * u^4) puts most tokens on small ids.
    let mut state = 0x5eed_u64;
    let tokens: Vec<u32> = (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            ((vocab as f64) * u.powi(4)) as u32
        })
        .collect();
    let stream = DeviceVec::from_slice(&dev, &tokens)?;

    let start = Instant::now();
    let mut counts = stream.bincount(vocab)?.into_counts();
    let distinct = counts.count(Gt(0))?;
    let mut ids = DeviceVec::sequence(&dev, vocab, 0u32, 1)?;
    counts.sort_pairs_descending(&mut ids)?;
    let top = vocab.min(10);
    let top_counts = counts.slice(0..top)?.to_vec()?;
    let top_ids = ids.slice(0..top)?.to_vec()?;
    let elapsed = start.elapsed();

    println!("{n} tokens, {distinct} distinct ids of {vocab}; bincount + count + sort + copy back: {elapsed:?}");
    let mut host = vec![0u32; vocab];
    for &t in &tokens {
        host[t as usize] += 1;
    }
    for (rank, (&id, &c)) in top_ids.iter().zip(&top_counts).enumerate() {
        println!("#{:<2} id {id:>7}: {c:>8} ({:.2}%)", rank + 1, 100.0 * c as f64 / n as f64);
        if host[id as usize] != c {
            return Err(format!("id {id}: the device counted {c}, the host {}", host[id as usize]).into());
        }
    }
    let want = host.iter().filter(|&&c| c > 0).count();
    if distinct != want {
        return Err(format!("the device found {distinct} distinct ids, the host {want}").into());
    }
    // The ranking itself: counts descending, equal counts by ascending id.
    let mut order: Vec<u32> = (0..vocab as u32).collect();
    order.sort_by_key(|&id| (std::cmp::Reverse(host[id as usize]), id));
    if order[..top] != top_ids[..] {
        return Err(format!("top {top} ids: the device ranked {top_ids:?}, the host {:?}", &order[..top]).into());
    }
    println!("counts, distinct ids and ranking checked against the host: ok");
    Ok(())
}
