//! Tuning rows of the radix sort (feature `sort-tuning`): shapes forced
//! through `cuprim::algo::sort::tuning` on the small sort and the onesweep
//! pass, A/B in one process (the last set: the small sort's shapes for
//! 8-byte keys and u64/u32 pairs at 1024 to 4096 keys). Modules are compiled in
//! parallel first; each row is the median of 25 event-timed calls after 3
//! warm-ups, each from the unsorted input (restored untimed); inputs of at
//! most 2^20 keys are checked against a stable sort. Output:
//! `tune,kind,n,label,us`.

mod common;

use cuprim::algo::sort::tuning::{self, Tuning};
use cuprim::algo::sort::SmallShape;
use cuprim::precompile::{precompile_sort, precompile_sort_pairs, Target};
use cuprim::prelude::*;
use rayon::prelude::*;

// The 4-byte kinds are not in the last set; kept for the next one.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    KeysU32,
    PairsU32,
    KeysU64,
    PairsU64,
}

#[derive(Clone, Copy, Debug)]
struct Cfg {
    kind: Kind,
    n: usize,
    t: Tuning,
}

fn label(t: &Tuning) -> String {
    let mut s = String::new();
    match t.small {
        None => s.push_str("small=default"),
        Some(None) => s.push_str("small=off"),
        Some(Some(x)) => s.push_str(&format!("small={}x{}", x.block, x.items)),
    }
    if let Some((b, i, m, sh)) = t.onesweep {
        s.push_str(&format!(" onesweep={b}x{i}@{m}{}", if sh { "s" } else { "" }));
    }
    s
}

fn configs() -> Vec<Cfg> {
    let mut v = Vec::new();
    let sm = |b, i| Some(Some(SmallShape { block: b, items: i }));
    // The small sort of 8-byte keys between 1024 and 4096 keys, each shape that holds them, and the policy's.
    for n in [1024usize, 1536, 2048, 3000, 4096] {
        for kind in [Kind::KeysU64, Kind::PairsU64] {
            for (b, i) in [(256, 4), (256, 6), (256, 8), (384, 8), (512, 6), (512, 8)] {
                if n <= (b * i) as usize {
                    v.push(Cfg {
                        kind,
                        n,
                        t: Tuning {
                            small: sm(b, i),
                            onesweep: None,
                        },
                    });
                }
            }
            v.push(Cfg {
                kind,
                n,
                t: Tuning {
                    small: None,
                    onesweep: None,
                },
            });
        }
    }
    v
}

fn compile(dev: &Device, kind: Kind, t: Tuning) -> cuprim::Result<()> {
    tuning::set(t);
    let target = Target::Device(dev);
    match kind {
        Kind::KeysU32 => precompile_sort::<u32>(target).map(drop),
        Kind::PairsU32 => precompile_sort_pairs::<u32, u32>(target).map(drop),
        Kind::KeysU64 => precompile_sort::<u64>(target).map(drop),
        Kind::PairsU64 => precompile_sort_pairs::<u64, u32>(target).map(drop),
    }
}

fn median_us<K: Element>(dev: &Device, keys: &[K], values: Option<&[u32]>, check: Option<Check<K>>) -> f64 {
    let keys_in = DeviceVec::from_slice(dev, keys).unwrap();
    let vals_in = DeviceVec::from_slice(dev, values.unwrap_or(&[])).unwrap();
    let mut state = (keys_in.to_device_vec().unwrap(), vals_in.to_device_vec().unwrap());
    let pairs = values.is_some();
    let one = |state: &mut (DeviceVec<K>, DeviceVec<u32>)| {
        common::time_with_setup(
            dev,
            1,
            state,
            |s| {
                s.0.copy_from(&keys_in)?;
                if pairs {
                    s.1.copy_from(&vals_in)?;
                }
                Ok(())
            },
            |s| if pairs { s.0.sort_pairs(&mut s.1) } else { s.0.sort() },
        )
        .as_secs_f64()
            * 1e6
    };
    for _ in 0..3 {
        one(&mut state);
    }
    let mut t: Vec<f64> = (0..25).map(|_| one(&mut state)).collect();
    t.sort_by(f64::total_cmp);
    if let Some(check) = check {
        let (gk, gv) = (state.0.to_vec().unwrap(), state.1.to_vec().unwrap());
        if !check(&gk, &gv) {
            println!("WRONG,{}", keys.len());
        }
    }
    t[t.len() / 2]
}

/// Compares the sorted (keys, values) with the reference.
type Check<K> = Box<dyn Fn(&[K], &[u32]) -> bool>;

/// A checker of (keys, values) against a stable sort of the input, for
/// inputs of at most 2^20 keys.
fn checker<K: Copy + Ord + Send + Sync + PartialEq + 'static>(keys: &[K], values: Option<&[u32]>) -> Option<Check<K>> {
    if keys.len() > 1 << 20 {
        return None;
    }
    let mut pairs: Vec<(K, u32)> = keys.iter().enumerate().map(|(i, &k)| (k, values.map_or(0, |v| v[i]))).collect();
    pairs.par_sort_by_key(|p| p.0);
    let has_values = values.is_some();
    Some(Box::new(move |k: &[K], v: &[u32]| {
        pairs.iter().enumerate().all(|(i, p)| k[i] == p.0 && (!has_values || v[i] == p.1))
    }))
}

fn main() {
    let dev = common::device();
    if !dev.is_cuda() {
        return;
    }
    let cfgs = configs();
    let mut uniq: Vec<(Kind, String, Tuning)> = Vec::new();
    for c in &cfgs {
        let key = label(&c.t);
        if !uniq.iter().any(|(k, l, _)| *k == c.kind && *l == key) {
            uniq.push((c.kind, key, c.t));
        }
    }
    let start = std::time::Instant::now();
    uniq.par_iter().for_each(|(kind, l, t)| {
        if let Err(e) = compile(&dev, *kind, *t) {
            println!("compile-error,{kind:?},{l},{e}");
        }
    });
    eprintln!("compiled {} configurations in {:.1} s", uniq.len(), start.elapsed().as_secs_f64());
    let mut data_n = 0usize;
    let (mut a, mut vals, mut wide) = (Vec::new(), Vec::new(), Vec::new());
    for c in &cfgs {
        if c.n != data_n {
            data_n = c.n;
            a = common::hash_u32(c.n, 1);
            vals = common::hash_u32(c.n, 2);
            let low = common::hash_u32(c.n, 3);
            wide = a
                .par_iter()
                .zip(low.par_iter())
                .map(|(&h, &l)| (h as u64) << 32 | l as u64)
                .collect::<Vec<u64>>();
        }
        tuning::set(c.t);
        let us = match c.kind {
            Kind::KeysU32 => median_us(&dev, &a, None, checker(&a, None)),
            Kind::PairsU32 => median_us(&dev, &a, Some(&vals), checker(&a, Some(&vals))),
            Kind::KeysU64 => median_us(&dev, &wide, None, checker(&wide, None)),
            Kind::PairsU64 => median_us(&dev, &wide, Some(&vals), checker(&wide, Some(&vals))),
        };
        println!("tune,{:?},{},{},{:.2}", c.kind, c.n, label(&c.t), us);
    }
}
