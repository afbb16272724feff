//! `cargo run --release --example top_tokens`: the most frequent tokens of a
//! skewed stream of ten million token ids, on the device.
//!
//! `bincount` counts every id of a 1M-token vocabulary in one pass, `count`
//! says how many ids occur at all, and `sort_pairs_descending` orders the
//! ids by their counts (stable: equal counts keep ascending ids). The
//! result is checked against a plain count on the host.

use cuprim::pred::Gt;
use cuprim::prelude::*;
use std::time::Instant;

fn main() -> Result<(), Error> {
    let dev = Device::default()?;
    println!("device: {dev:?}");
    let (n, vocab) = (10_000_000usize, 1usize << 20);

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
    let top_counts = counts.slice(0..10)?.to_vec()?;
    let top_ids = ids.slice(0..10)?.to_vec()?;
    let elapsed = start.elapsed();

    println!("{n} tokens, {distinct} distinct ids of {vocab}; bincount + count + sort + copy back: {elapsed:?}");
    let mut host = vec![0u32; vocab];
    for &t in &tokens {
        host[t as usize] += 1;
    }
    for (rank, (&id, &c)) in top_ids.iter().zip(&top_counts).enumerate() {
        println!("#{:<2} id {id:>7}: {c:>8} ({:.2}%)", rank + 1, 100.0 * c as f64 / n as f64);
        assert_eq!(host[id as usize], c, "count of id {id}");
    }
    assert_eq!(distinct, host.iter().filter(|&&c| c > 0).count());
    Ok(())
}
