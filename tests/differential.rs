//! Seeded random differential test: thousands of calls of random
//! primitive, element type, operator (built-in and user-defined,
//! commutative and not), size and values, each checked against a plain
//! sequential Rust reference written here (never the host backend), on
//! every device of `common::devices()`.
//!
//! # What a call is
//! Each family test (`reduce_family`, `scan_family`, ...) has a fixed menu of
//! (primitive, element type, operator) entries, so a GPU run compiles a
//! bounded set of kernels. Call `i` of a family draws everything from its
//! own sub-seed: the entry, the size (biased to 0, 1, tile edges and
//! primes), the values (NaN, ±0.0, ±inf, subnormals, integer extremes,
//! duplicates, sorted runs), whether it runs on a view at an offset of a
//! larger buffer, and which form of the primitive is called. About one call
//! in sixteen is run twice and must give the same bits both times.
//!
//! # Tolerances
//! Integers, min / max, bitwise and user-defined operators, sorts, top-k,
//! selections, histograms and data movement are exact (bit for bit; any NaN
//! matches any NaN where arithmetic makes one). Float sums and scans regroup
//! additions: with `S` the sum of `|x|` over the `k` terms and `u` the
//! type's epsilon, a finite result must be within
//! `(k u / (1 - k u) + k eps64) S + k * MIN_POSITIVE` of the exact sum;
//! NaN in, or `+inf` with `-inf`, must give NaN; one sign of infinity must
//! give that infinity; only when `S` could reach the type's largest value
//! may an overflow make an infinity or NaN; the sum is `-0.0` exactly when
//! every term is `-0.0` (or there is none). Float products use values whose
//! product is exact in every grouping (±1, ±2, ±0.5, ±0, ±inf, NaN) and are
//! compared bit for bit.
//!
//! # Counts and replay
//! `CUPRIM_DIFF_CALLS=N`: N calls per device over all families (default
//! 12 000 on the host, 110 000 on a GPU); `CUPRIM_DIFF_MAX_N=N` caps the
//! sizes (default about 1e5 on the host, 2^20 + 7 on a GPU). A failure names the family, call
//! index, entry, size, device and seed, and the command that replays that
//! one call: `CUPRIM_TEST_SEED=<seed> CUPRIM_DIFF_CALL=<index> cargo test
//! --test differential <family>`.

mod common;

use common::Sample;
use cuprim::algo::histogram::{Bins, Count as HistCount, Histogram};
use cuprim::algo::sort::SortOptions;
use cuprim::algo::topk::TopKOptions;
use cuprim::ops::{Abs, Arith, BinaryOp, Cast, Commutative, Monoid, Negate, Square, UnaryOp};
use cuprim::pred::{Eq, Ge, Gt, IsNan, Le, Lt, Ne, Not, Predicate};
use cuprim::prelude::*;
use cuprim::{IndexElement, Kind, Scalar};
use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;
use std::time::Instant;

// ---------------------------------------------------------------------------
// Run configuration.

/// A `usize` from the environment variable `var`, if set; any other
/// value is a mistake worth stopping for.
fn env_count(var: &str) -> Option<usize> {
    let v = std::env::var(var).ok().filter(|v| !v.is_empty())?;
    Some(v.parse().unwrap_or_else(|_| panic!("{var}={v:?}: expected a count")))
}

/// Calls per device over all families, unless `CUPRIM_DIFF_CALLS` says.
fn total_calls(dev: &Device) -> usize {
    if let Some(n) = env_count("CUPRIM_DIFF_CALLS") {
        return n;
    }
    if dev.is_cuda() {
        110_000
    } else {
        12_000
    }
}

/// The largest input of a call: about 1e5 on the host (unoptimised builds
/// stay fast), just past 2^20 on a GPU; `CUPRIM_DIFF_MAX_N` lowers it (the
/// sanitizer runs).
fn size_cap(dev: &Device) -> usize {
    if let Some(n) = env_count("CUPRIM_DIFF_MAX_N") {
        return n.max(1);
    }
    if dev.is_cuda() {
        (1 << 20) + 7
    } else {
        100_003
    }
}

/// One call in this many is repeated and must give identical bits.
const REPEAT_ONE_IN: u64 = 16;

// ---------------------------------------------------------------------------
// The generator: one stream per call.

/// A call's generator: the tests' SplitMix64 (`common::TestRng`) on a stream
/// of its own.
struct Gen(common::TestRng);

impl Gen {
    /// The stream of call `index` of `family` under `seed`.
    fn for_call(seed: u64, family: &str, index: usize) -> Gen {
        let start = common::mix64(seed ^ common::fnv1a(family)) ^ common::mix64(index as u64 ^ 0x5eed_0000_0000);
        Gen(common::TestRng::seeded(start))
    }
    fn next(&mut self) -> u64 {
        rand::RngCore::next_u64(&mut self.0)
    }
    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        ((self.next() as u128 * n as u128) >> 64) as usize
    }
    /// True with probability `pct` percent.
    fn chance(&mut self, pct: u64) -> bool {
        self.next() % 100 < pct
    }
    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick<X: Copy>(&mut self, xs: &[X]) -> X {
        xs[self.below(xs.len())]
    }
    /// Log-uniform in `lo..=hi`.
    fn log_between(&mut self, lo: usize, hi: usize) -> usize {
        if hi <= lo {
            return hi;
        }
        let (a, b) = ((lo.max(1) as f64).ln(), (hi as f64).ln());
        ((a + (b - a) * self.unit()).exp() as usize).clamp(lo, hi)
    }
}

// ---------------------------------------------------------------------------
// Sizes.

const PRIMES: &[usize] = &[
    2, 3, 5, 7, 11, 13, 17, 29, 31, 37, 61, 67, 97, 127, 131, 251, 257, 509, 521, 1021, 1031, 2039, 2053, 3067, 4093, 4099, 8191, 8209,
    12_289, 16_381, 16_411, 32_749, 32_771, 65_521, 65_537, 99_991, 131_071, 262_139, 524_287, 786_433, 1_048_573, 1_048_583,
];

/// Tile edges: powers of two, multiples of the usual tile sizes, the host's
/// 65536-element chunks, each with its neighbours.
fn tile_edges() -> &'static [usize] {
    static EDGES: OnceLock<Vec<usize>> = OnceLock::new();
    EDGES.get_or_init(|| {
        let mut base: Vec<usize> = (1..=20).map(|k| 1usize << k).collect();
        base.extend((1..=48).map(|k| 256 * k));
        base.extend([
            384 * 21,
            384 * 42,
            3 * 1024,
            6 * 1024,
            12 * 1024,
            7 * 2048,
            65_536 * 2,
            65_536 * 3,
            4096 * 24,
        ]);
        let mut out: Vec<usize> = base.iter().flat_map(|&b| [b - 1, b, b + 1]).collect();
        out.sort_unstable();
        out.dedup();
        out
    })
}

/// The upper end of the common mid-size range: smaller in unoptimised
/// builds, where the references are slow.
fn mid_cap() -> usize {
    if cfg!(debug_assertions) {
        8_192
    } else {
        20_000
    }
}

/// A size biased to 0, 1, tile edges and primes, at most `cap`.
fn draw_size(g: &mut Gen, cap: usize) -> usize {
    let from = |g: &mut Gen, xs: &[usize]| {
        let fit = xs.partition_point(|&x| x <= cap);
        if fit == 0 {
            cap
        } else {
            xs[g.below(fit)]
        }
    };
    let n = match g.below(100) {
        0..=11 => 0,
        12..=21 => 1,
        22..=41 => 2 + g.below(39),
        42..=66 => from(g, tile_edges()),
        67..=78 => from(g, PRIMES),
        79..=94 => g.log_between(41, cap.min(mid_cap())),
        95..=96 => g.log_between(cap.min(16_384), cap),
        _ => g.log_between(41, cap.min(mid_cap())),
    };
    n.min(cap)
}

// ---------------------------------------------------------------------------
// Element types, as this test sees them.

/// Output bits, for the run-to-run comparison.
trait Bits {
    fn bits(&self, out: &mut Vec<u8>);
}

macro_rules! bits_pod {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            fn bits(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(bytemuck::bytes_of(self));
            }
        }
    )*};
}
bits_pod!(u8, i8, u32, i32, u64, i64, f16, bf16, f32, f64);

impl Bits for usize {
    fn bits(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(*self as u64).to_le_bytes());
    }
}
impl Bits for bool {
    fn bits(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
}
impl<X: Bits> Bits for Vec<X> {
    fn bits(&self, out: &mut Vec<u8>) {
        self.len().bits(out);
        self.iter().for_each(|x| x.bits(out));
    }
}
impl<X: Bits> Bits for Option<X> {
    fn bits(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0),
            Some(x) => {
                out.push(1);
                x.bits(out);
            }
        }
    }
}
impl<A: Bits, B: Bits> Bits for (A, B) {
    fn bits(&self, out: &mut Vec<u8>) {
        self.0.bits(out);
        self.1.bits(out);
    }
}

fn bytes<R: Bits>(r: &R) -> Vec<u8> {
    let mut out = Vec::new();
    r.bits(&mut out);
    out
}

/// What the references need of an element type.
trait Ty: Sample + Bits {
    /// Addition with the element's own arithmetic: wrapping integers, IEEE
    /// floats, `f16` / `bf16` computed in `f32` and rounded once.
    fn plus(self, o: Self) -> Self;
    /// Multiplication, likewise.
    fn times(self, o: Self) -> Self;
    /// Machine epsilon (0 for integers).
    fn eps() -> f64;
    /// The largest finite value.
    fn max_finite() -> f64;
    /// The least positive normal value (0 for integers).
    fn min_normal() -> f64;
    /// The bits, zero-extended.
    fn to_raw(self) -> u64;
    /// The value of the low bits of `bits`.
    fn of_raw(bits: u64) -> Self;
}

macro_rules! ty_int {
    ($($t:ty, $u:ty);*) => {$(
        impl Ty for $t {
            fn to_raw(self) -> u64 { self as $u as u64 }
            fn of_raw(bits: u64) -> Self { bits as $u as $t }
            fn plus(self, o: Self) -> Self { self.wrapping_add(o) }
            fn times(self, o: Self) -> Self { self.wrapping_mul(o) }
            fn eps() -> f64 { 0.0 }
            fn max_finite() -> f64 { <$t>::MAX as f64 }
            fn min_normal() -> f64 { 0.0 }
        }
    )*};
}
ty_int!(u8, u8; i8, u8; u32, u32; i32, u32; u64, u64; i64, u64);

macro_rules! ty_float {
    ($($t:ty, $u:ty);*) => {$(
        impl Ty for $t {
            fn to_raw(self) -> u64 { self.to_bits() as u64 }
            fn of_raw(bits: u64) -> Self { <$t>::from_bits(bits as $u) }
            fn plus(self, o: Self) -> Self { self + o }
            fn times(self, o: Self) -> Self { self * o }
            fn eps() -> f64 { <$t>::EPSILON as f64 }
            fn max_finite() -> f64 { <$t>::MAX as f64 }
            fn min_normal() -> f64 { <$t>::MIN_POSITIVE as f64 }
        }
    )*};
}
ty_float!(f32, u32; f64, u64);

macro_rules! ty_half {
    ($($t:ty),*) => {$(
        impl Ty for $t {
            fn to_raw(self) -> u64 { self.to_bits() as u64 }
            fn of_raw(bits: u64) -> Self { <$t>::from_bits(bits as u16) }
            fn plus(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() + o.to_f32()) }
            fn times(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() * o.to_f32()) }
            fn eps() -> f64 { <$t>::EPSILON.to_f64() }
            fn max_finite() -> f64 { <$t>::MAX.to_f64() }
            fn min_normal() -> f64 { <$t>::MIN_POSITIVE.to_f64() }
        }
    )*};
}
ty_half!(f16, bf16);

fn is_float<T: Element>() -> bool {
    T::KIND == Kind::Float
}

fn width<T: Element>() -> u32 {
    8 * std::mem::size_of::<T>() as u32
}

fn ones(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The raw bits of `x`, zero-extended.
fn raw<T: Ty>(x: T) -> u64 {
    x.to_raw()
}

/// The value with the low bits of `bits`.
fn from_raw<T: Ty>(bits: u64) -> T {
    T::of_raw(bits)
}

fn from_f64<T: Element>(x: f64) -> T {
    T::from_scalar(Scalar::F64(x))
}

fn sign_bit<T: Ty>(x: T) -> bool {
    raw(x) >> (width::<T>() - 1) & 1 == 1
}

fn is_neg_zero<T: Ty>(x: T) -> bool {
    is_float::<T>() && x == T::zero() && sign_bit(x)
}

/// The sort order of the module docs of `cuprim::algo::sort`, as an
/// unsigned key: integers by value, floats as `total_cmp` orders them.
fn order_key<T: Ty>(x: T) -> u64 {
    let (b, top) = (raw(x), 1u64 << (width::<T>() - 1));
    match T::KIND {
        Kind::Unsigned => b,
        Kind::Signed => b ^ top,
        Kind::Float => {
            if b & top != 0 {
                !b & ones(width::<T>())
            } else {
                b | top
            }
        }
    }
}

/// Bit equality, except that any NaN matches any NaN.
fn same<T: Ty>(a: T, b: T) -> bool {
    (a.is_nan() && b.is_nan()) || raw(a) == raw(b)
}

/// IEEE 754-2019 `minimum` / `maximum`: NaN wins, `-0.0 < +0.0`.
fn ieee_min<T: Ty>(a: T, b: T) -> T {
    if a.is_nan() {
        a
    } else if b.is_nan() {
        b
    } else if a < b {
        a
    } else if b < a {
        b
    } else if sign_bit(a) && is_float::<T>() {
        a
    } else {
        b
    }
}

fn ieee_max<T: Ty>(a: T, b: T) -> T {
    if a.is_nan() {
        a
    } else if b.is_nan() {
        b
    } else if a > b {
        a
    } else if b > a {
        b
    } else if !sign_bit(a) || !is_float::<T>() {
        a
    } else {
        b
    }
}

fn fold<T: Copy>(xs: &[T], id: T, f: impl Fn(T, T) -> T) -> T {
    xs.iter().fold(id, |acc, &x| f(acc, x))
}

/// The inclusive (or exclusive) scan, sequentially.
fn scan_ref<T: Copy>(xs: &[T], id: T, exclusive: bool, f: impl Fn(T, T) -> T) -> Vec<T> {
    let mut acc = id;
    xs.iter()
        .map(|&x| {
            let before = acc;
            acc = f(acc, x);
            if exclusive {
                before
            } else {
                acc
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Values.

/// How a call's values are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Prof {
    /// Raw bits, moderate values, every special value, duplicates, sorted,
    /// reversed and constant inputs.
    Wild,
    /// 0..8 and a few specials: many ties.
    Small,
    /// Floats whose sum cannot overflow, with a few specials sprinkled in
    /// (integers: as `Wild`).
    Tame,
    /// Floats whose product is exact in any grouping (integers: `Wild`
    /// without most zeros).
    Units,
}

fn moderate<T: Ty>(g: &mut Gen, scale: f64) -> T {
    if is_float::<T>() {
        from_f64((g.unit() * 2.0 - 1.0) * scale)
    } else {
        from_raw(((g.unit() * 2.0 - 1.0) * scale) as i64 as u64)
    }
}

/// A few specials (NaN, infinities, zeros) at random places.
fn sprinkle<T: Ty>(g: &mut Gen, xs: &mut [T], pool: &[f64]) {
    if xs.is_empty() {
        return;
    }
    for _ in 0..1 + g.below(3) {
        let i = g.below(xs.len());
        xs[i] = from_f64(g.pick(pool));
    }
}

fn values<T: Ty>(g: &mut Gen, n: usize, prof: Prof) -> Vec<T> {
    let prof = match prof {
        Prof::Tame | Prof::Units if !is_float::<T>() => Prof::Wild,
        p => p,
    };
    let specials = T::specials();
    let mut out: Vec<T> = Vec::with_capacity(n);
    match prof {
        Prof::Wild => {
            for i in 0..n {
                let x = match g.below(100) {
                    0..=24 => from_raw(g.next()),
                    25..=49 => moderate(g, 1000.0),
                    50..=74 => g.pick(&specials),
                    _ if i > 0 => out[g.below(i)],
                    _ => g.pick(&specials),
                };
                out.push(x);
            }
            match g.below(100) {
                0..=7 => out.sort_by_key(|&x| order_key(x)),
                8..=11 => out.sort_by_key(|&x| std::cmp::Reverse(order_key(x))),
                12..=14 if n > 0 => {
                    let x = out[0];
                    out.iter_mut().for_each(|y| *y = x);
                }
                _ => {}
            }
        }
        Prof::Small => {
            for _ in 0..n {
                out.push(if g.chance(5) {
                    g.pick(&specials)
                } else {
                    from_f64(g.below(8) as f64)
                });
            }
        }
        Prof::Tame => {
            let scale = (T::max_finite() / 16.0 / n.max(1) as f64).min(1000.0);
            out.extend((0..n).map(|_| moderate::<T>(g, scale)));
            if g.chance(30) {
                sprinkle(g, &mut out, &[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0, -0.0]);
            }
            if g.chance(5) {
                out.iter_mut().for_each(|x| *x = from_f64(-0.0));
            }
        }
        Prof::Units => {
            out.extend((0..n).map(|_| from_f64::<T>(if g.chance(50) { 1.0 } else { -1.0 })));
            if n > 0 {
                for _ in 0..g.below(9) {
                    let i = g.below(n);
                    out[i] = from_f64(g.pick(&[2.0, -2.0, 0.5, -0.5]));
                }
            }
            if g.chance(30) {
                sprinkle(g, &mut out, &[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0]);
            }
        }
    }
    if !is_float::<T>() && prof == Prof::Wild && g.chance(50) {
        // For products: mostly without zeros, so they do not all vanish.
        out.iter_mut().filter(|x| **x == T::zero()).for_each(|x| *x = T::one());
    }
    out
}

/// The profile for a sum: mostly tame, sometimes everything.
fn sum_prof(g: &mut Gen) -> Prof {
    if g.chance(75) {
        Prof::Tame
    } else {
        Prof::Wild
    }
}

fn wild_or_small(g: &mut Gen) -> Prof {
    if g.chance(70) {
        Prof::Wild
    } else {
        Prof::Small
    }
}

// ---------------------------------------------------------------------------
// Device buffers, whole or as a view into a larger buffer.

/// Where a call's input sits: at `head` in a buffer with `tail` more
/// elements after it (both 0: the whole vector).
#[derive(Clone, Copy, Debug)]
struct Layout {
    head: usize,
    tail: usize,
    pad_seed: u64,
}

impl Layout {
    fn draw(g: &mut Gen) -> Layout {
        if g.chance(25) {
            Layout {
                head: g.below(19),
                tail: g.below(19),
                pad_seed: g.next(),
            }
        } else {
            Layout {
                head: 0,
                tail: 0,
                pad_seed: 0,
            }
        }
    }
}

/// An uploaded input and the host copy of the whole buffer.
struct Up<T: Element> {
    vec: DeviceVec<T>,
    full: Vec<T>,
    off: usize,
    n: usize,
}

fn upload<T: Ty>(dev: &Device, data: &[T], at: Layout) -> Up<T> {
    let mut pad = Gen(common::TestRng::seeded(at.pad_seed));
    let mut full = values::<T>(&mut pad, at.head, Prof::Wild);
    full.extend_from_slice(data);
    full.extend(values::<T>(&mut pad, at.tail, Prof::Wild));
    Up {
        vec: ok(DeviceVec::from_slice(dev, &full), "from_slice"),
        full,
        off: at.head,
        n: data.len(),
    }
}

impl<T: Ty> Up<T> {
    fn whole(&self) -> bool {
        self.off == 0 && self.full.len() == self.n
    }
    fn view(&self) -> DeviceSlice<'_, T> {
        ok(self.vec.slice(self.off..self.off + self.n), "slice")
    }
    fn view_mut(&mut self) -> DeviceSliceMut<'_, T> {
        let (a, b) = (self.off, self.off + self.n);
        ok(self.vec.slice_mut(a..b), "slice_mut")
    }
    /// The view's elements after the call; the padding around it must be
    /// untouched.
    fn inside(&self) -> Vec<T> {
        let all = ok(self.vec.to_vec(), "to_vec");
        let (a, b) = (self.off, self.off + self.n);
        for i in (0..a).chain(b..all.len()) {
            assert!(
                raw(all[i]) == raw(self.full[i]),
                "the call wrote outside its view: element {i} of the buffer (view {a}..{b}) was {:?}, now {:?}",
                self.full[i],
                all[i]
            );
        }
        all[a..b].to_vec()
    }
}

/// Runs `$body` with `$v` bound to the input: the vector itself when the
/// layout is whole, else the view.
macro_rules! on {
    ($up:expr, $v:ident => $body:expr) => {
        if $up.whole() {
            let $v = &$up.vec;
            $body
        } else {
            let $v = &$up.view();
            $body
        }
    };
}

macro_rules! on_mut {
    ($up:expr, $v:ident => $body:expr) => {
        if $up.whole() {
            let $v = &mut $up.vec;
            $body
        } else {
            let $v = &mut $up.view_mut();
            $body
        }
    };
}

#[track_caller]
fn ok<X>(r: cuprim::Result<X>, what: &str) -> X {
    match r {
        Ok(x) => x,
        Err(e) => panic!("{what} returned an error: {e}"),
    }
}

// ---------------------------------------------------------------------------
// Checks.

/// What one entry did: calls checked, of which repeated, of which checked
/// with a bound too wide to mean much (float sums that may overflow).
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    calls: u64,
    repeats: u64,
    loose: u64,
}

impl Tally {
    /// One call, checked by its caller (an error case).
    fn one() -> Tally {
        Tally {
            calls: 1,
            ..Tally::default()
        }
    }
    fn add(&mut self, o: Tally) {
        self.calls += o.calls;
        self.repeats += o.repeats;
        self.loose += o.loose;
    }
}

/// Runs `call`, checks its result with `check` (`Ok(true)`: checked
/// tightly), and for a sample of calls runs it again and compares bits.
fn checked<R: Bits>(g: &mut Gen, call: impl Fn() -> R, check: impl Fn(&R) -> Result<bool, String>) -> Tally {
    let got = call();
    let tight = match check(&got) {
        Ok(t) => t,
        Err(msg) => panic!("{msg}"),
    };
    let mut t = Tally {
        calls: 1,
        repeats: 0,
        loose: (!tight) as u64,
    };
    if g.next().is_multiple_of(REPEAT_ONE_IN) {
        let again = call();
        let (first, second) = (bytes(&got), bytes(&again));
        let differ: Vec<usize> = (0..first.len().max(second.len()))
            .filter(|&i| first.get(i) != second.get(i))
            .collect();
        if let Some(&at) = differ.first() {
            // Which 8-byte words of the result's bytes differ (the first few),
            // and whether the second result would pass the check on its own.
            let word = |b: &[u8], w: usize| -> String { b.iter().skip(8 * w).take(8).rev().map(|x| format!("{x:02x}")).collect() };
            let mut words: Vec<usize> = differ.iter().map(|i| i / 8).collect();
            words.dedup();
            let shown: Vec<String> = words
                .iter()
                .take(6)
                .map(|&w| format!("word {w}: {} then {}", word(&first, w), word(&second, w)))
                .collect();
            panic!(
                "not deterministic: the same call on the same input gave different bits the second time \
                 (first difference at byte {at} of {} / {} bytes of the result; {} bytes in {} 8-byte words differ, \
                 the last at byte {}; {}; the second result checked alone: {:?})",
                first.len(),
                second.len(),
                differ.len(),
                words.len(),
                differ.last().unwrap_or(&at),
                shown.join(", "),
                check(&again)
            );
        }
        t.calls += 1;
        t.repeats += 1;
    }
    t
}

fn same_all<T: Ty>(got: &[T], want: &[T], what: &str) -> Result<bool, String> {
    if got.len() != want.len() {
        return Err(format!("{what}: {} elements, want {}", got.len(), want.len()));
    }
    match (0..got.len()).find(|&i| !same(got[i], want[i])) {
        None => Ok(true),
        Some(i) => Err(format!(
            "{what}: {} of {} elements differ, first at {i}: got {:?}, want {:?}",
            (0..got.len()).filter(|&i| !same(got[i], want[i])).count(),
            got.len(),
            got[i],
            want[i]
        )),
    }
}

/// Bit-exact, NaN payloads included (data movement, sorts, selections).
fn exact_all<T: Ty>(got: &[T], want: &[T], what: &str) -> Result<bool, String> {
    if got.len() != want.len() {
        return Err(format!("{what}: {} elements, want {}", got.len(), want.len()));
    }
    match (0..got.len()).find(|&i| raw(got[i]) != raw(want[i])) {
        None => Ok(true),
        Some(i) => Err(format!(
            "{what}: {} of {} elements differ in their bits, first at {i}: got {:?} ({:#x}), want {:?} ({:#x})",
            (0..got.len()).filter(|&i| raw(got[i]) != raw(want[i])).count(),
            got.len(),
            got[i],
            raw(got[i]),
            want[i],
            raw(want[i])
        )),
    }
}

fn same_one<T: Ty>(got: T, want: T, what: &str) -> Result<bool, String> {
    if same(got, want) {
        Ok(true)
    } else {
        Err(format!("{what}: got {got:?} ({:#x}), want {want:?} ({:#x})", raw(got), raw(want)))
    }
}

/// A float sum's reference: the exact-enough sum of the finite terms and
/// what the tolerance needs.
#[derive(Clone, Copy, Debug)]
struct SumRef {
    sum: f64,
    abs: f64,
    terms: usize,
    nan: bool,
    pos_inf: bool,
    neg_inf: bool,
    all_neg_zero: bool,
}

impl SumRef {
    fn new() -> SumRef {
        SumRef {
            sum: 0.0,
            abs: 0.0,
            terms: 0,
            nan: false,
            pos_inf: false,
            neg_inf: false,
            all_neg_zero: true,
        }
    }

    fn push<T: Ty>(&mut self, x: T) {
        let v = x.to_f64();
        self.terms += 1;
        if v.is_nan() {
            self.nan = true;
        } else if v == f64::INFINITY {
            self.pos_inf = true;
        } else if v == f64::NEG_INFINITY {
            self.neg_inf = true;
        } else {
            self.sum += v;
            self.abs += v.abs();
        }
        self.all_neg_zero &= is_neg_zero(x);
    }

    /// `Ok(true)`: checked against a finite bound; `Ok(false)`: only the
    /// NaN / infinity rules applied.
    fn check<T: Ty>(&self, got: T) -> Result<bool, String> {
        let g = got.to_f64();
        let fail = |why: &str| Err(format!("float sum of {} terms: got {got:?}, {why} ({self:?})", self.terms));
        if self.nan || (self.pos_inf && self.neg_inf) {
            return if g.is_nan() { Ok(true) } else { fail("want NaN") };
        }
        let k = self.terms as f64;
        let ku = k * T::eps();
        let gamma = if ku < 0.5 { ku / (1.0 - ku) } else { f64::INFINITY };
        // (With no magnitude there is no relative error, even when the
        // relative bound is infinite.)
        let relative = if self.abs == 0.0 {
            0.0
        } else {
            (gamma + k * f64::EPSILON) * self.abs
        };
        let bound = relative + k * T::min_normal();
        // Could some partial sum round past the largest finite value?
        let reach = self.abs + bound;
        let may_overflow = reach.is_nan() || reach >= T::max_finite();
        if self.pos_inf || self.neg_inf {
            let inf = if self.pos_inf { f64::INFINITY } else { f64::NEG_INFINITY };
            return if g == inf || (may_overflow && g.is_nan()) {
                Ok(true)
            } else {
                fail(&format!("want {inf}"))
            };
        }
        if !g.is_finite() {
            return if may_overflow { Ok(false) } else { fail("want a finite sum") };
        }
        if (g - self.sum).abs() > bound {
            return fail(&format!("want {} within {bound:e}", self.sum));
        }
        if self.all_neg_zero != is_neg_zero(got) {
            return fail(if self.all_neg_zero {
                "want -0.0 (every term is -0.0)"
            } else {
                "-0.0 needs every term to be -0.0"
            });
        }
        Ok(!may_overflow)
    }
}

fn check_float_sum<T: Ty>(xs: &[T], got: T) -> Result<bool, String> {
    let mut s = SumRef::new();
    xs.iter().for_each(|&x| s.push(x));
    s.check(got)
}

/// Each element of a float scan against its prefix (inclusive or exclusive).
fn check_float_scan<T: Ty>(xs: &[T], got: &[T], exclusive: bool) -> Result<bool, String> {
    if got.len() != xs.len() {
        return Err(format!("scan: {} elements, want {}", got.len(), xs.len()));
    }
    let mut s = SumRef::new();
    let mut tight = true;
    for i in 0..xs.len() {
        if !exclusive {
            s.push(xs[i]);
        }
        tight &= s.check(got[i]).map_err(|e| format!("element {i}: {e}"))?;
        if exclusive {
            s.push(xs[i]);
        }
    }
    Ok(tight)
}

/// A float product of unit-like values: exact in f64, then rounded to `T`
/// (exactly representable).
fn unit_product<T: Ty>(xs: &[T]) -> T {
    from_f64(xs.iter().fold(1.0f64, |p, x| p * x.to_f64()))
}

// ---------------------------------------------------------------------------
// User-defined operators.

cuprim::binary_op! {
    /// Affine maps `x -> m*x + c` (mod 2^32) packed as `(m << 32) | c`;
    /// `a op b` applies `a`, then `b`. Associative, not commutative.
    pub struct Affine for u64 {
        rust: |a, b| {
            let (ma, ca, mb, cb) = ((a >> 32) as u32, a as u32, (b >> 32) as u32, b as u32);
            ((mb.wrapping_mul(ma) as u64) << 32) | mb.wrapping_mul(ca).wrapping_add(cb) as u64
        },
        cuda: "((((u64)((u32)(b >> 32) * (u32)(a >> 32))) << 32) | (u64)((u32)(b >> 32) * (u32)a + (u32)b))",
        identity: 1u64 << 32,
    }
}

/// The CUDA text of [`Mat2`].
fn mat2_cuda() -> String {
    let e = |m: char, i: u32| format!("(({m} >> {}u) & 255u)", 8 * i);
    let c = |r: u32, s: u32| {
        format!(
            "((({} * {} + {} * {}) & 255u) << {}u)",
            e('a', 2 * r),
            e('b', s),
            e('a', 2 * r + 1),
            e('b', 2 + s),
            8 * (2 * r + s)
        )
    };
    format!("({} | {} | {} | {})", c(0, 0), c(0, 1), c(1, 0), c(1, 1))
}

cuprim::binary_op! {
    /// 2x2 matrices over Z/256, entries `[m00, m01, m10, m11]` in bytes 0..4,
    /// multiplied: associative, not commutative, identity `I`.
    pub struct Mat2 for u32 {
        rust: |a, b| {
            let e = |m: u32, i: u32| (m >> (8 * i)) & 255;
            let c = |r: u32, s: u32| ((e(a, 2 * r) * e(b, s) + e(a, 2 * r + 1) * e(b, 2 + s)) & 255) << (8 * (2 * r + s));
            c(0, 0) | c(0, 1) | c(1, 0) | c(1, 1)
        },
        cuda: mat2_cuda(),
        identity: 0x0100_0001,
    }
}

cuprim::binary_op! {
    /// The right operand unless it is zero: not commutative.
    pub struct KeepRightNonZero for i32 {
        rust: |a, b| if b != 0 { b } else { a },
        cuda: "(b != 0 ? b : a)",
        identity: 0,
    }
}

cuprim::binary_op! {
    /// The left operand unless it is NaN; identity NaN. Not commutative.
    pub struct FirstNonNan for f32 {
        rust: |a, b| if a.is_nan() { b } else { a },
        cuda: "(a != a ? b : a)",
        identity: f32::NAN,
    }
}

cuprim::binary_op! {
    /// Saturating addition: commutative.
    pub struct SatAdd for u32 {
        rust: |a, b| a.saturating_add(b),
        cuda: "(a + b < a ? 0xffffffffu : a + b)",
        identity: 0,
        commutative: true,
    }
}

cuprim::binary_op! {
    /// `(max of the high halves) << 32 | (min of the low halves)`.
    pub struct MinMaxPack for u64 {
        rust: |a, b| ((a >> 32).max(b >> 32) << 32) | (a & 0xffff_ffff).min(b & 0xffff_ffff),
        cuda: "((((a >> 32) > (b >> 32) ? (a >> 32) : (b >> 32)) << 32) | \
               ((a & 0xffffffffull) < (b & 0xffffffffull) ? (a & 0xffffffffull) : (b & 0xffffffffull)))",
        identity: 0xffff_ffff,
        commutative: true,
    }
}

cuprim::binary_op! {
    /// The larger operand ignoring NaN (`+0.0 > -0.0`); identity NaN, so
    /// all-NaN input gives NaN.
    pub struct NanMax for f32, f64 {
        rust: |a, b| {
            if a.is_nan() {
                b
            } else if b.is_nan() || a > b {
                a
            } else if b > a || a.is_sign_negative() {
                b
            } else {
                a
            }
        },
        cuda: "((a != a) ? b : ((b != b || a > b) ? a : ((b > a || cuprim_sign_bit(a)) ? b : a)))",
        identity: num_traits::Float::nan(),
        commutative: true,
    }
}

/// The number of set bits.
#[derive(Clone, Copy, Debug, Default)]
struct Popcount;
impl UnaryOp<u32> for Popcount {
    type Output = u32;
    fn apply(&self, x: u32) -> u32 {
        x.count_ones()
    }
    fn cuda_expr(&self) -> String {
        "__popc(x)".into()
    }
}

/// The high 32 bits.
#[derive(Clone, Copy, Debug, Default)]
struct HiWord;
impl UnaryOp<u64> for HiWord {
    type Output = u32;
    fn apply(&self, x: u64) -> u32 {
        (x >> 32) as u32
    }
    fn cuda_expr(&self) -> String {
        "(u32)(x >> 32)".into()
    }
}

/// Odd integers.
#[derive(Clone, Copy, Debug, Default)]
struct IsOdd;
impl Predicate<u64> for IsOdd {
    fn test(&self, x: u64) -> bool {
        x & 1 == 1
    }
    fn cuda_expr(&self) -> String {
        "(x & 1ull) != 0ull".into()
    }
}

/// `|x| < p` (false for NaN).
#[derive(Clone, Copy, Debug)]
struct AbsBelow(f32);
impl Predicate<f32> for AbsBelow {
    fn test(&self, x: f32) -> bool {
        x.abs() < self.0
    }
    fn cuda_expr(&self) -> String {
        "cuprim_abs(x) < p".into()
    }
    fn param(&self) -> f32 {
        self.0
    }
    fn cuda_expr_is_fixed(&self) -> bool {
        true
    }
}

/// An affine map with an odd multiplier most of the time (so long
/// compositions do not collapse to a constant).
fn affine_values(g: &mut Gen, n: usize) -> Vec<u64> {
    (0..n).map(|_| if g.chance(90) { g.next() | (1 << 32) } else { g.next() }).collect()
}

/// Matrices with an odd determinant most of the time (invertible mod 256).
fn mat2_values(g: &mut Gen, n: usize) -> Vec<u32> {
    (0..n)
        .map(|_| {
            let x = g.next() as u32;
            if g.chance(90) {
                (x | 1 | (1 << 24)) & !(1 << 8)
            } else {
                x
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Families: menus and the loop that runs them.

type Run = Box<dyn Fn(&mut Gen, &Device, usize) -> Tally + Send + Sync>;

struct Entry {
    name: String,
    run: Run,
}

fn entry(name: impl Into<String>, run: impl Fn(&mut Gen, &Device, usize) -> Tally + Send + Sync + 'static) -> Entry {
    Entry {
        name: name.into(),
        run: Box::new(run),
    }
}

/// Runs `share` of the calls of every device through `menu`.
fn run_family(family: &'static str, share: f64, menu: Vec<Entry>) {
    let (_, seed) = common::rng(family);
    let only: Option<usize> = env_count("CUPRIM_DIFF_CALL");
    for dev in common::devices() {
        let calls = ((total_calls(&dev) as f64 * share).ceil() as usize).max(1);
        let indices = match only {
            Some(i) => i..i + 1,
            None => 0..calls,
        };
        let cap = size_cap(&dev);
        let mut tally = Tally::default();
        let mut used = vec![0u64; menu.len()];
        let mut spent = vec![0f64; menu.len()];
        let start = Instant::now();
        for i in indices {
            let mut g = Gen::for_call(seed, family, i);
            let pick = g.below(menu.len());
            let e = &menu[pick];
            let n = draw_size(&mut g, cap);
            let t0 = Instant::now();
            let result = catch_unwind(AssertUnwindSafe(|| (e.run)(&mut g, &dev, n)));
            match result {
                Ok(t) => {
                    tally.add(t);
                    used[pick] += 1;
                    spent[pick] += t0.elapsed().as_secs_f64();
                }
                Err(p) => {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    panic!(
                        "differential {family}: call {i} ({}, n = {n}) on {dev:?} failed: {msg}\n  \
                         seed {seed}; replay this call alone: CUPRIM_TEST_SEED={seed} CUPRIM_DIFF_CALL={i} \
                         cargo test --test differential {family}",
                        e.name
                    );
                }
            }
        }
        assert!(tally.calls > 0, "differential {family}: no call was checked on {dev:?}");
        eprintln!(
            "differential {family}: {} calls checked on {dev:?} ({} entries used of {}, {} repeated for determinism, \
             {} float sums with overflow possible) in {:.1} s, seed {seed}",
            tally.calls,
            used.iter().filter(|&&u| u > 0).count(),
            menu.len(),
            tally.repeats,
            tally.loose,
            start.elapsed().as_secs_f64()
        );
        let mut slow: Vec<usize> = (0..menu.len()).collect();
        slow.sort_by(|&a, &b| spent[b].total_cmp(&spent[a]));
        let slow: Vec<String> = slow[..3.min(menu.len())]
            .iter()
            .map(|&i| format!("{} {:.1} s / {} calls", menu[i].name, spent[i], used[i]))
            .collect();
        eprintln!("differential {family}: slowest entries on {dev:?}: {}", slow.join("; "));
        if dev.is_cuda() {
            let s = cuprim::jit::stats();
            eprintln!(
                "differential {family}: kernel modules so far in this process: {} compiled, {} from the disk cache",
                s.compiles, s.disk_hits
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Reductions.

/// A reduction by `op`, called as `reduce`, `reduce_into` or `reduce_to`,
/// checked by `check(input, result)`.
fn reduce_entry<T: Ty, Op: Monoid<T> + Commutative + Debug>(
    op: Op,
    prof: fn(&mut Gen) -> Prof,
    check: fn(&[T], T) -> Result<bool, String>,
) -> Entry {
    entry(format!("reduce {op:?} {}", T::NAME), move |g, dev, n| {
        let p = prof(g);
        let data = values::<T>(g, n, p);
        let at = Layout::draw(g);
        let form = g.below(3);
        let extra = g.below(4);
        checked(
            g,
            || {
                let up = upload(dev, &data, at);
                match form {
                    0 => on!(up, v => ok(v.reduce(op), "reduce")),
                    1 => on!(up, v => ok(ok(v.reduce_into(op), "reduce_into").to_vec(), "to_vec")[0]),
                    _ => {
                        // reduce_to writes out[0] and nothing else.
                        let fill = from_raw::<T>(0x5a5a_5a5a_5a5a_5a5a);
                        // (Uploaded, not filled: no fill kernel to compile for this type.)
                        let mut out = ok(DeviceVec::from_slice(dev, &vec![fill; 1 + extra]), "from_slice");
                        on!(up, v => ok(v.reduce_to(op, &mut out), "reduce_to"));
                        let o = ok(out.to_vec(), "to_vec");
                        assert!(o[1..].iter().all(|&x| raw(x) == raw(fill)), "reduce_to wrote past out[0]: {o:?}");
                        o[0]
                    }
                }
            },
            |&got| {
                let form = ["reduce", "reduce_into", "reduce_to"][form];
                check(&data, got).map_err(|e| format!("{form}({op:?}): {e}"))
            },
        )
    })
}

fn sum_check<T: Ty>(xs: &[T], got: T) -> Result<bool, String> {
    if is_float::<T>() {
        check_float_sum(xs, got)
    } else {
        same_one(got, fold(xs, T::zero(), T::plus), "wrapping sum")
    }
}

fn product_check<T: Ty>(xs: &[T], got: T) -> Result<bool, String> {
    let want = if is_float::<T>() {
        unit_product(xs)
    } else {
        fold(xs, T::one(), T::times)
    };
    same_one(got, want, "product")
}

fn min_check<T: Ty>(xs: &[T], got: T) -> Result<bool, String> {
    same_one(got, fold(xs, T::highest(), ieee_min), "minimum")
}

fn max_check<T: Ty>(xs: &[T], got: T) -> Result<bool, String> {
    same_one(got, fold(xs, T::lowest(), ieee_max), "maximum")
}

fn and_check<T: Ty>(xs: &[T], got: T) -> Result<bool, String> {
    same_one(got, from_raw(xs.iter().fold(u64::MAX, |a, &x| a & raw(x))), "and")
}
fn or_check<T: Ty>(xs: &[T], got: T) -> Result<bool, String> {
    same_one(got, from_raw(xs.iter().fold(0, |a, &x| a | raw(x))), "or")
}
fn xor_check<T: Ty>(xs: &[T], got: T) -> Result<bool, String> {
    same_one(got, from_raw(xs.iter().fold(0, |a, &x| a ^ raw(x))), "xor")
}

/// A user-defined commutative operator, folded with its own `apply`.
fn user_reduce_entry<T: Ty, Op: Monoid<T> + Commutative + Debug>(op: Op, gen: fn(&mut Gen, usize) -> Vec<T>) -> Entry {
    entry(format!("reduce {op:?} {}", T::NAME), move |g, dev, n| {
        let data = gen(g, n);
        let at = Layout::draw(g);
        checked(
            g,
            || {
                let up = upload(dev, &data, at);
                on!(up, v => ok(v.reduce(op), "reduce"))
            },
            |&got| same_one(got, fold(&data, op.identity(), |a, b| op.apply(a, b)), &format!("reduce {op:?}")),
        )
    })
}

/// `transform_reduce(map, op)`, checked by `check(input, result)`.
fn map_reduce_entry<T: Ty, U: UnaryOp<T> + Debug, Op: Monoid<U::Output> + Commutative + Debug>(
    map: U,
    op: Op,
    prof: Prof,
    check: fn(&[T], U::Output) -> Result<bool, String>,
) -> Entry
where
    U::Output: Ty,
{
    entry(format!("transform_reduce {map:?} {op:?} {}", T::NAME), move |g, dev, n| {
        let data = values::<T>(g, n, prof);
        let at = Layout::draw(g);
        checked(
            g,
            || {
                let up = upload(dev, &data, at);
                on!(up, v => ok(v.transform_reduce(map, op), "transform_reduce"))
            },
            |&got| check(&data, got).map_err(|e| format!("transform_reduce {map:?} {op:?}: {e}")),
        )
    })
}

/// The reference of `min_element` / `max_element`: the first NaN if any,
/// else the least (greatest) value with `-0.0 < +0.0`, ties to the lowest
/// index.
fn arg_extreme_ref<T: Ty>(xs: &[T], greatest: bool) -> Option<(usize, T)> {
    if let Some(i) = xs.iter().position(|x| x.is_nan()) {
        return Some((i, xs[i]));
    }
    let better = |x: T, y: T| {
        if x != y {
            if greatest {
                x > y
            } else {
                x < y
            }
        } else if greatest {
            !sign_bit(x) && sign_bit(y) && is_float::<T>()
        } else {
            sign_bit(x) && !sign_bit(y) && is_float::<T>()
        }
    };
    let mut best = 0;
    for i in 1..xs.len() {
        if better(xs[i], xs[best]) {
            best = i;
        }
    }
    xs.get(best).map(|&x| (best, x))
}

fn extreme_entry<T: Ty>() -> Entry {
    entry(format!("min_element/max_element {}", T::NAME), move |g, dev, n| {
        let p = wild_or_small(g);
        let data = values::<T>(g, n, p);
        let at = Layout::draw(g);
        let greatest = g.chance(50);
        checked(
            g,
            || {
                let up = upload(dev, &data, at);
                if greatest {
                    on!(up, v => ok(v.max_element(), "max_element"))
                } else {
                    on!(up, v => ok(v.min_element(), "min_element"))
                }
            },
            |got| {
                let want = arg_extreme_ref(&data, greatest);
                let agree = match (got, &want) {
                    (Some((i, x)), Some((j, y))) => i == j && same(*x, *y),
                    (None, None) => true,
                    _ => false,
                };
                if agree {
                    Ok(true)
                } else {
                    Err(format!(
                        "{}: got {got:?}, want {want:?}",
                        if greatest { "max_element" } else { "min_element" }
                    ))
                }
            },
        )
    })
}

fn reduce_menu() -> Vec<Entry> {
    let tame = sum_prof as fn(&mut Gen) -> Prof;
    let units = |_: &mut Gen| Prof::Units;
    let wild = wild_or_small as fn(&mut Gen) -> Prof;
    vec![
        reduce_entry::<u8, _>(Add, tame, sum_check),
        reduce_entry::<u32, _>(Add, tame, sum_check),
        reduce_entry::<i64, _>(Add, tame, sum_check),
        reduce_entry::<f16, _>(Add, tame, sum_check),
        reduce_entry::<bf16, _>(Add, tame, sum_check),
        reduce_entry::<f32, _>(Add, tame, sum_check),
        reduce_entry::<f64, _>(Add, tame, sum_check),
        reduce_entry::<i32, _>(Mul, units, product_check),
        reduce_entry::<u64, _>(Mul, units, product_check),
        reduce_entry::<f16, _>(Mul, units, product_check),
        reduce_entry::<f32, _>(Mul, units, product_check),
        reduce_entry::<i8, _>(Min, wild, min_check),
        reduce_entry::<u64, _>(Min, wild, min_check),
        reduce_entry::<f16, _>(Min, wild, min_check),
        reduce_entry::<f32, _>(Min, wild, min_check),
        reduce_entry::<f64, _>(Min, wild, min_check),
        reduce_entry::<u8, _>(Max, wild, max_check),
        reduce_entry::<i32, _>(Max, wild, max_check),
        reduce_entry::<bf16, _>(Max, wild, max_check),
        reduce_entry::<f32, _>(Max, wild, max_check),
        reduce_entry::<f64, _>(Max, wild, max_check),
        reduce_entry::<u64, _>(BitAnd, wild, and_check),
        reduce_entry::<u8, _>(BitOr, wild, or_check),
        reduce_entry::<i32, _>(BitXor, wild, xor_check),
        user_reduce_entry::<u32, _>(SatAdd, |g, n| {
            let big = g.chance(50);
            (0..n).map(|_| if big { g.next() as u32 } else { g.next() as u32 >> 12 }).collect()
        }),
        user_reduce_entry::<u64, _>(MinMaxPack, |g, n| values(g, n, Prof::Wild)),
        user_reduce_entry::<f32, _>(NanMax, |g, n| values(g, n, Prof::Wild)),
        user_reduce_entry::<f64, _>(NanMax, |g, n| values(g, n, Prof::Wild)),
        map_reduce_entry::<i64, _, _>(Square, Add, Prof::Wild, |xs, got| {
            same_one(got, fold(xs, 0i64, |a, x| a.wrapping_add(x.wrapping_mul(x))), "sum of squares")
        }),
        map_reduce_entry::<f32, _, _>(Abs, Max, Prof::Wild, |xs, got| {
            same_one(
                got,
                fold(xs, f32::NEG_INFINITY, |a, x| ieee_max(a, f32::from_bits(x.to_bits() & 0x7fff_ffff))),
                "max |x|",
            )
        }),
        map_reduce_entry::<u8, _, _>(Cast::<u64>::new(), Add, Prof::Wild, |xs, got| {
            same_one(got, xs.iter().map(|&x| x as u64).sum::<u64>(), "widened sum")
        }),
        map_reduce_entry::<u32, _, _>(Popcount, Add, Prof::Wild, |xs, got| {
            same_one(got, xs.iter().map(|x| x.count_ones()).sum::<u32>(), "total popcount")
        }),
        map_reduce_entry::<f64, _, _>(Abs, Add, Prof::Tame, |xs, got| {
            let abs: Vec<f64> = xs.iter().map(|x| x.abs()).collect();
            check_float_sum(&abs, got)
        }),
        extreme_entry::<u8>(),
        extreme_entry::<f16>(),
        extreme_entry::<bf16>(),
        extreme_entry::<f32>(),
        extreme_entry::<f64>(),
    ]
}

// ---------------------------------------------------------------------------
// Scans.

/// How a scan result is judged: element-wise against a sequential scan
/// with the reference operator, or as float sums.
#[derive(Clone, Copy)]
enum ScanRef<T> {
    Exact(fn(T, T) -> T),
    FloatSum,
}

/// A scan by `op` in one of its five forms (scan, scan_inclusive,
/// scan_exclusive, and both in place).
fn scan_entry<T: Ty, Op: Monoid<T> + Debug>(op: Op, gen: fn(&mut Gen, usize) -> Vec<T>, reference: ScanRef<T>) -> Entry {
    entry(format!("scan {op:?} {}", T::NAME), move |g, dev, n| {
        let data = gen(g, n);
        let at = Layout::draw(g);
        let form = g.below(5);
        let exclusive = matches!(form, 2 | 4);
        checked(
            g,
            || {
                let mut up = upload(dev, &data, at);
                match form {
                    0 => ok(on!(up, v => v.scan(op)), "scan").to_vec().unwrap(),
                    1 => ok(on!(up, v => v.scan_inclusive(op)), "scan_inclusive").to_vec().unwrap(),
                    2 => ok(on!(up, v => v.scan_exclusive(op)), "scan_exclusive").to_vec().unwrap(),
                    3 => {
                        ok(on_mut!(up, v => v.scan_inclusive_in_place(op)), "scan_inclusive_in_place");
                        up.inside()
                    }
                    _ => {
                        ok(on_mut!(up, v => v.scan_exclusive_in_place(op)), "scan_exclusive_in_place");
                        up.inside()
                    }
                }
            },
            |got| {
                let form = [
                    "scan",
                    "scan_inclusive",
                    "scan_exclusive",
                    "scan_inclusive_in_place",
                    "scan_exclusive_in_place",
                ][form];
                let what = format!("{form}({op:?})");
                match reference {
                    ScanRef::Exact(f) => same_all(got, &scan_ref(&data, op.identity(), exclusive, f), &what),
                    ScanRef::FloatSum => check_float_scan(&data, got, exclusive).map_err(|e| format!("{what}: {e}")),
                }
            },
        )
    })
}

/// Keys in runs: a few distinct values (specials included), run lengths
/// from 1 to a few hundred.
fn run_keys<K: Ty>(g: &mut Gen, n: usize) -> Vec<K> {
    let distinct = 1 + g.below(6);
    let pool = values::<K>(g, distinct, Prof::Wild);
    let long = [1usize, 2, 3, 7, 31, 32, 33, 255, 256, 257, 1000];
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let k = g.pick(&pool);
        let len = if g.chance(50) { 1 + g.below(4) } else { g.pick(&long) };
        out.extend(std::iter::repeat_n(k, len.min(n - out.len())));
    }
    out
}

fn scan_by_key_entry<K: Ty, T: Ty, Op: Monoid<T> + Debug>(op: Op, gen: fn(&mut Gen, usize) -> Vec<T>, reference: ScanRef<T>) -> Entry {
    entry(format!("scan_by_key {op:?} {} keys {}", T::NAME, K::NAME), move |g, dev, n| {
        let data = gen(g, n);
        let keys = run_keys::<K>(g, n);
        let (at, at_keys) = (Layout::draw(g), Layout::draw(g));
        checked(
            g,
            || {
                let up = upload(dev, &data, at);
                let kp = upload(dev, &keys, at_keys);
                let out = on!(up, v => on!(kp, k => ok(v.scan_by_key(k, op), "scan_by_key")));
                ok(out.to_vec(), "to_vec")
            },
            |got| {
                // Segments start wherever keys[i] != keys[i - 1] (so every
                // NaN key starts one, and -0.0 continues a run of 0.0).
                let mut start = 0;
                let mut tight = true;
                while start < n {
                    let mut end = start + 1;
                    while end < n && keys[end] == keys[end - 1] {
                        end += 1;
                    }
                    let (xs, gs) = (&data[start..end], &got[start..end.min(got.len())]);
                    let r = match reference {
                        ScanRef::Exact(f) => same_all(gs, &scan_ref(xs, op.identity(), false, f), "segment"),
                        ScanRef::FloatSum => check_float_scan(xs, gs, false),
                    };
                    tight &= r.map_err(|e| format!("scan_by_key {op:?}, segment {start}..{end}: {e}"))?;
                    start = end;
                }
                if got.len() != n {
                    return Err(format!("scan_by_key: {} elements, want {n}", got.len()));
                }
                Ok(tight)
            },
        )
    })
}

fn scan_menu() -> Vec<Entry> {
    fn wild<T: Ty>(g: &mut Gen, n: usize) -> Vec<T> {
        let p = wild_or_small(g);
        values(g, n, p)
    }
    fn tame<T: Ty>(g: &mut Gen, n: usize) -> Vec<T> {
        let p = sum_prof(g);
        values(g, n, p)
    }
    fn units<T: Ty>(g: &mut Gen, n: usize) -> Vec<T> {
        values(g, n, Prof::Units)
    }
    use ScanRef::{Exact, FloatSum};
    vec![
        scan_entry::<u8, _>(Add, wild, Exact(u8::wrapping_add)),
        scan_entry::<i32, _>(Add, wild, Exact(i32::wrapping_add)),
        scan_entry::<u64, _>(Add, wild, Exact(u64::wrapping_add)),
        scan_entry::<f16, _>(Add, tame, FloatSum),
        scan_entry::<f32, _>(Add, tame, FloatSum),
        scan_entry::<f64, _>(Add, tame, FloatSum),
        scan_entry::<u32, _>(Mul, units, Exact(u32::wrapping_mul)),
        scan_entry::<f32, _>(Mul, units, Exact(|a, b| a * b)),
        scan_entry::<i64, _>(Min, wild, Exact(ieee_min)),
        scan_entry::<f32, _>(Min, wild, Exact(ieee_min)),
        scan_entry::<bf16, _>(Min, wild, Exact(ieee_min)),
        scan_entry::<u8, _>(Max, wild, Exact(ieee_max)),
        scan_entry::<f64, _>(Max, wild, Exact(ieee_max)),
        scan_entry::<f16, _>(Max, wild, Exact(ieee_max)),
        scan_entry::<u64, _>(BitXor, wild, Exact(|a, b| a ^ b)),
        scan_entry::<i8, _>(BitOr, wild, Exact(|a, b| a | b)),
        scan_entry::<u32, _>(BitAnd, wild, Exact(|a, b| a & b)),
        scan_entry::<u64, _>(Affine, affine_values, Exact(|a, b| Affine.apply(a, b))),
        scan_entry::<u32, _>(Mat2, mat2_values, Exact(|a, b| Mat2.apply(a, b))),
        scan_entry::<i32, _>(KeepRightNonZero, wild, Exact(|a, b| KeepRightNonZero.apply(a, b))),
        scan_entry::<f32, _>(FirstNonNan, wild, Exact(|a, b| FirstNonNan.apply(a, b))),
        scan_entry::<u32, _>(SatAdd, wild, Exact(u32::saturating_add)),
        scan_by_key_entry::<u32, i32, _>(Add, wild, Exact(i32::wrapping_add)),
        scan_by_key_entry::<u32, f32, _>(Add, tame, FloatSum),
        scan_by_key_entry::<f32, f64, _>(Min, wild, Exact(ieee_min)),
        scan_by_key_entry::<i8, u64, _>(Affine, affine_values, Exact(|a, b| Affine.apply(a, b))),
        scan_by_key_entry::<u64, f16, _>(Max, wild, Exact(ieee_max)),
        scan_by_key_entry::<f64, i32, _>(KeepRightNonZero, wild, Exact(|a, b| KeepRightNonZero.apply(a, b))),
        scan_by_key_entry::<u8, f32, _>(FirstNonNan, wild, Exact(|a, b| FirstNonNan.apply(a, b))),
    ]
}

// ---------------------------------------------------------------------------
// Predicates and selection.

/// `count`, `find_first`, `any`, `all`, `copy_if` or `partition` with the
/// predicate `make(p)`, judged by `test(x, p)` written here.
fn pred_entry<T: Ty, P: Predicate<T> + Debug>(name: &str, make: fn(T) -> P, test: fn(T, T) -> bool) -> Entry {
    entry(format!("predicates {name} {}", T::NAME), move |g, dev, n| {
        let p = wild_or_small(g);
        let data = values::<T>(g, n, p);
        let p: T = if n > 0 && g.chance(60) {
            data[g.below(n)]
        } else if g.chance(50) {
            g.pick(&T::specials())
        } else {
            values::<T>(g, 1, Prof::Wild)[0]
        };
        let pred = make(p);
        let at = Layout::draw(g);
        let hits: Vec<bool> = data.iter().map(|&x| test(x, p)).collect();
        let what = format!("{pred:?}");
        match g.below(6) {
            0 => checked(
                g,
                || {
                    let up = upload(dev, &data, at);
                    on!(up, v => ok(v.count(pred), "count"))
                },
                |&got| {
                    let want = hits.iter().filter(|&&h| h).count();
                    (got == want).then_some(true).ok_or(format!("count {what}: got {got}, want {want}"))
                },
            ),
            1 => checked(
                g,
                || {
                    let up = upload(dev, &data, at);
                    on!(up, v => ok(v.find_first(pred), "find_first"))
                },
                |&got| {
                    let want = hits.iter().position(|&h| h);
                    (got == want)
                        .then_some(true)
                        .ok_or(format!("find_first {what}: got {got:?}, want {want:?}"))
                },
            ),
            2 => checked(
                g,
                || {
                    let up = upload(dev, &data, at);
                    on!(up, v => ok(v.any(pred), "any"))
                },
                |&got| {
                    let want = hits.iter().any(|&h| h);
                    (got == want).then_some(true).ok_or(format!("any {what}: got {got}, want {want}"))
                },
            ),
            3 => checked(
                g,
                || {
                    let up = upload(dev, &data, at);
                    on!(up, v => ok(v.all(pred), "all"))
                },
                |&got| {
                    let want = hits.iter().all(|&h| h);
                    (got == want).then_some(true).ok_or(format!("all {what}: got {got}, want {want}"))
                },
            ),
            4 => checked(
                g,
                || {
                    ok(
                        {
                            let up = upload(dev, &data, at);
                            on!(up, v => ok(v.copy_if(pred), "copy_if"))
                        }
                        .to_vec(),
                        "to_vec",
                    )
                },
                |got| {
                    let want: Vec<T> = (0..n).filter(|&i| hits[i]).map(|i| data[i]).collect();
                    exact_all(got, &want, &format!("copy_if {what}"))
                },
            ),
            _ => checked(
                g,
                || {
                    let mut up = upload(dev, &data, at);
                    let split = ok(on_mut!(up, v => v.partition(pred)), "partition");
                    (split, up.inside())
                },
                |(split, got)| {
                    let mut want: Vec<T> = (0..n).filter(|&i| hits[i]).map(|i| data[i]).collect();
                    let kept = want.len();
                    want.extend((0..n).filter(|&i| !hits[i]).map(|i| data[i]));
                    if *split != kept {
                        return Err(format!("partition {what}: split at {split}, want {kept}"));
                    }
                    exact_all(got, &want, &format!("partition {what} (stable)"))
                },
            ),
        }
    })
}

fn select_menu() -> Vec<Entry> {
    vec![
        pred_entry::<u32, _>("Eq", Eq, |x, p| x == p),
        pred_entry::<i8, _>("Lt", Lt, |x, p| x < p),
        pred_entry::<f32, _>("IsNan", |_| IsNan, |x, _| x.is_nan()),
        pred_entry::<f32, _>("Ge", Ge, |x, p| x >= p),
        pred_entry::<f64, _>("Ne", Ne, |x, p| x != p),
        pred_entry::<bf16, _>("Gt", Gt, |x, p| x > p),
        pred_entry::<u64, _>("IsOdd", |_| IsOdd, |x, _| x % 2 == 1),
        pred_entry::<f16, _>(
            "Not(Le)",
            |p| Not(Le(p)),
            |x, p| !matches!(x.partial_cmp(&p), Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)),
        ),
        pred_entry::<i64, _>("Le", Le, |x, p| x <= p),
        pred_entry::<f32, _>("AbsBelow", AbsBelow, |x, p| x.abs() < p),
    ]
}

// ---------------------------------------------------------------------------
// Transforms and data movement.

fn unary_entry<T: Ty, Op: UnaryOp<T> + Debug>(op: Op, prof: Prof, want: fn(T) -> Op::Output) -> Entry
where
    Op::Output: Ty,
{
    entry(format!("transform {op:?} {}", T::NAME), move |g, dev, n| {
        let data = values::<T>(g, n, prof);
        let at = Layout::draw(g);
        checked(
            g,
            || {
                ok(
                    {
                        let up = upload(dev, &data, at);
                        on!(up, v => ok(v.transform(op), "transform"))
                    }
                    .to_vec(),
                    "to_vec",
                )
            },
            |got| {
                let w: Vec<Op::Output> = data.iter().map(|&x| want(x)).collect();
                same_all(got, &w, &format!("transform {op:?}"))
            },
        )
    })
}

fn in_place_entry<T: Ty, Op: UnaryOp<T, Output = T> + Debug>(op: Op, want: fn(T) -> T) -> Entry {
    entry(format!("transform_in_place {op:?} {}", T::NAME), move |g, dev, n| {
        let data = values::<T>(g, n, Prof::Wild);
        let at = Layout::draw(g);
        checked(
            g,
            || {
                let mut up = upload(dev, &data, at);
                ok(on_mut!(up, v => v.transform_in_place(op)), "transform_in_place");
                up.inside()
            },
            |got| {
                let w: Vec<T> = data.iter().map(|&x| want(x)).collect();
                same_all(got, &w, &format!("transform_in_place {op:?}"))
            },
        )
    })
}

fn binary_entry<T: Ty, Op: BinaryOp<T> + Debug>(op: Op, gen: fn(&mut Gen, usize) -> Vec<T>, want: fn(T, T) -> T) -> Entry {
    entry(format!("transform2 {op:?} {}", T::NAME), move |g, dev, n| {
        let a = gen(g, n);
        let b = gen(g, n);
        let (at_a, at_b) = (Layout::draw(g), Layout::draw(g));
        checked(
            g,
            || {
                let (ua, ub) = (upload(dev, &a, at_a), upload(dev, &b, at_b));
                let out = on!(ua, x => on!(ub, y => ok(x.transform2(y, op), "transform2")));
                ok(out.to_vec(), "to_vec")
            },
            |got| {
                let w: Vec<T> = (0..n).map(|i| want(a[i], b[i])).collect();
                same_all(got, &w, &format!("transform2 {op:?}"))
            },
        )
    })
}

/// `i` as `T`: wrapping for integers, rounded for floats.
fn index_as<T: Ty>(i: usize) -> T {
    if is_float::<T>() {
        from_f64(i as f64)
    } else {
        from_raw(i as u64)
    }
}

/// zeros, filled, fill (on views), sequence, copy_from, to_device_vec,
/// from_slice / to_vec.
fn movement_entry<T: Ty + Arith>() -> Entry {
    entry(format!("fill/sequence/copy {}", T::NAME), move |g, dev, n| {
        let data = values::<T>(g, n, Prof::Wild);
        let at = Layout::draw(g);
        let x = values::<T>(g, 1, Prof::Wild)[0];
        let (start, step) = if g.chance(50) {
            (values::<T>(g, 1, Prof::Small)[0], values::<T>(g, 1, Prof::Small)[0])
        } else {
            (x, values::<T>(g, 1, Prof::Wild)[0])
        };
        match g.below(7) {
            0 => checked(
                g,
                || ok(ok(DeviceVec::<T>::zeros(dev, n), "zeros").to_vec(), "to_vec"),
                |got| exact_all(got, &vec![T::zero(); n], "zeros"),
            ),
            1 => checked(
                g,
                || ok(ok(DeviceVec::filled(dev, n, x), "filled").to_vec(), "to_vec"),
                |got| exact_all(got, &vec![x; n], "filled"),
            ),
            2 => checked(
                g,
                || {
                    let mut up = upload(dev, &data, at);
                    ok(on_mut!(up, v => v.fill(x)), "fill");
                    up.inside()
                },
                |got| exact_all(got, &vec![x; n], "fill"),
            ),
            3 => checked(
                g,
                || ok(ok(DeviceVec::sequence(dev, n, start, step), "sequence").to_vec(), "to_vec"),
                |got| {
                    let w: Vec<T> = (0..n).map(|i| start.plus(index_as::<T>(i).times(step))).collect();
                    same_all(got, &w, &format!("sequence({start:?}, {step:?})"))
                },
            ),
            4 => {
                let at_dst = Layout::draw(g);
                let old = values::<T>(g, n, Prof::Wild);
                checked(
                    g,
                    || {
                        let src = upload(dev, &data, at);
                        let mut dst = upload(dev, &old, at_dst);
                        on!(src, s => ok(on_mut!(dst, d => d.copy_from(s)), "copy_from"));
                        dst.inside()
                    },
                    |got| exact_all(got, &data, "copy_from"),
                )
            }
            5 => checked(
                g,
                || {
                    ok(
                        {
                            let up = upload(dev, &data, at);
                            on!(up, v => ok(v.to_device_vec(), "to_device_vec"))
                        }
                        .to_vec(),
                        "to_vec",
                    )
                },
                |got| exact_all(got, &data, "to_device_vec"),
            ),
            _ => checked(
                g,
                || {
                    let up = upload(dev, &data, at);
                    let mut host = ok(on!(up, v => v.to_vec()), "to_vec");
                    // And back through copy_from_host.
                    let mut back = ok(DeviceVec::<T>::zeros(dev, n), "zeros");
                    ok(back.copy_from_host(&host), "copy_from_host");
                    host.extend(ok(back.to_vec(), "to_vec"));
                    host
                },
                |got| {
                    let mut w = data.clone();
                    w.extend_from_slice(&data);
                    exact_all(got, &w, "to_vec / copy_from_host round trip")
                },
            ),
        }
    })
}

/// gather and scatter with index type `I`; one call in ten with an index
/// out of bounds, which must be an error.
fn gather_scatter_entry<T: Ty, I: IndexElement + Ty>() -> Entry {
    entry(format!("gather/scatter {} by {}", T::NAME, I::NAME), move |g, dev, n| {
        let m = n + g.below(40) + if n == 0 { 1 } else { 0 };
        let src = values::<T>(g, m, Prof::Wild);
        let bad = g.chance(10) && n > 0;
        if g.chance(50) {
            // gather: out[i] = src[idx[i]], n indices into m elements.
            let mut idx: Vec<I> = (0..n).map(|_| index_as::<I>(g.below(m))).collect();
            if bad {
                let i = g.below(n);
                idx[i] = index_as::<I>(m + g.below(3));
            }
            let (at_s, at_i) = (Layout::draw(g), Layout::draw(g));
            checked(
                g,
                || {
                    let (us, ui) = (upload(dev, &src, at_s), upload(dev, &idx, at_i));
                    let r = on!(us, s => on!(ui, i => s.gather(i)));
                    match r {
                        Ok(v) => Some(ok(v.to_vec(), "to_vec")),
                        Err(cuprim::Error::IndexOutOfBounds { .. }) => None,
                        Err(e) => panic!("gather returned an unexpected error: {e}"),
                    }
                },
                |got| match (bad, got) {
                    (false, Some(got)) => {
                        let w: Vec<T> = idx.iter().map(|&i| src[i.as_u64() as usize]).collect();
                        exact_all(got, &w, "gather")
                    }
                    (true, None) => Ok(true),
                    _ => Err(format!(
                        "gather with an index out of bounds: {}",
                        if bad { "no error" } else { "error" }
                    )),
                },
            )
        } else {
            // scatter: out[idx[i]] = src[i] for n distinct indices into m.
            let mut slots: Vec<usize> = (0..m).collect();
            for i in 0..n.min(m) {
                let j = i + g.below(m - i);
                slots.swap(i, j);
            }
            let mut idx: Vec<I> = slots[..n].iter().map(|&s| index_as::<I>(s)).collect();
            if bad {
                let i = g.below(n);
                idx[i] = index_as::<I>(m + g.below(3));
            }
            let src = &src[..n];
            let old = values::<T>(g, m, Prof::Wild);
            let (at_s, at_i, at_o) = (Layout::draw(g), Layout::draw(g), Layout::draw(g));
            checked(
                g,
                || {
                    let (us, ui, mut uo) = (upload(dev, src, at_s), upload(dev, &idx, at_i), upload(dev, &old, at_o));
                    let r = on!(us, s => on!(ui, i => on_mut!(uo, o => s.scatter(i, o))));
                    let failed = match r {
                        Ok(()) => false,
                        Err(cuprim::Error::IndexOutOfBounds { .. }) => true,
                        Err(e) => panic!("scatter returned an unexpected error: {e}"),
                    };
                    (failed, uo.inside())
                },
                |(failed, got)| {
                    if *failed != bad {
                        return Err(format!("scatter with an index out of bounds: error {failed}, want {bad}"));
                    }
                    // Every in-range write lands, nothing else changes.
                    let mut w = old.clone();
                    for (i, &j) in idx.iter().enumerate() {
                        if let Some(slot) = w.get_mut(j.as_u64() as usize) {
                            *slot = src[i];
                        }
                    }
                    exact_all(got, &w, "scatter")
                },
            )
        }
    })
}

fn transform_menu() -> Vec<Entry> {
    fn wild<T: Ty>(g: &mut Gen, n: usize) -> Vec<T> {
        values(g, n, Prof::Wild)
    }
    vec![
        unary_entry::<i32, _>(Negate, Prof::Wild, i32::wrapping_neg),
        unary_entry::<f32, _>(Abs, Prof::Wild, |x| f32::from_bits(x.to_bits() & 0x7fff_ffff)),
        unary_entry::<u64, _>(Square, Prof::Wild, |x| x.wrapping_mul(x)),
        unary_entry::<f16, _>(Square, Prof::Wild, |x| f16::from_f32(x.to_f32() * x.to_f32())),
        unary_entry::<f32, _>(Cast::<i32>::new(), Prof::Wild, |x| x as i32),
        unary_entry::<f64, _>(Cast::<f16>::new(), Prof::Wild, |x| f16::from_f32(x as f32)),
        unary_entry::<bf16, _>(Cast::<u8>::new(), Prof::Wild, |x| x.to_f32() as u8),
        unary_entry::<i64, _>(Cast::<f32>::new(), Prof::Wild, |x| x as f32),
        unary_entry::<u32, _>(Popcount, Prof::Wild, |x| x.count_ones()),
        unary_entry::<u64, _>(HiWord, Prof::Wild, |x| (x >> 32) as u32),
        in_place_entry::<f64, _>(Negate, |x| f64::from_bits(x.to_bits() ^ (1 << 63))),
        in_place_entry::<i8, _>(Abs, i8::wrapping_abs),
        binary_entry::<f32, _>(Add, wild, |a, b| a + b),
        binary_entry::<bf16, _>(Add, wild, |a, b| bf16::from_f32(a.to_f32() + b.to_f32())),
        binary_entry::<i64, _>(Mul, wild, i64::wrapping_mul),
        binary_entry::<f16, _>(Min, wild, ieee_min),
        binary_entry::<f64, _>(Max, wild, ieee_max),
        binary_entry::<u64, _>(Affine, affine_values, |a, b| Affine.apply(a, b)),
        movement_entry::<u8>(),
        movement_entry::<i32>(),
        movement_entry::<u64>(),
        movement_entry::<f16>(),
        movement_entry::<f32>(),
        movement_entry::<f64>(),
        gather_scatter_entry::<f32, u32>(),
        gather_scatter_entry::<u64, u64>(),
        gather_scatter_entry::<i8, u32>(),
    ]
}

// ---------------------------------------------------------------------------
// Histograms.

/// How a histogram entry bins: its `Bins`, and the bin of each sample as
/// the module docs of `cuprim::algo::histogram` define it (`None`: dropped).
struct BinRef<T: Element> {
    bins: Bins<T>,
    num_bins: usize,
    bin: Box<dyn Fn(T) -> Option<usize>>,
    valid: bool,
}

const BIN_COUNTS: &[usize] = &[1, 2, 3, 7, 16, 64, 100, 256, 1000, 4096, 16_384, 16_385, 65_536, 70_001, 200_003];

fn draw_bins(g: &mut Gen) -> usize {
    if g.chance(85) {
        g.pick(&BIN_COUNTS[..10])
    } else {
        g.pick(BIN_COUNTS)
    }
}

/// Even bins over floats: `(x - lo) * scale` truncated, clamped to the last
/// bin, `scale = nb / (hi - lo)` rounded once to f32 (f64 for f64).
fn even_float<T: Ty>(g: &mut Gen, data: &mut [T]) -> BinRef<T> {
    let nb = draw_bins(g);
    let wide = std::mem::size_of::<T>() == 8;
    let (lo, hi) = loop {
        let c = (g.unit() * 2.0 - 1.0) * 100.0;
        let w = g.pick(&[1e-3, 0.5, 1.0, 10.0, 300.0, 1e4]);
        let (lo, hi) = (from_f64::<T>(c - w * g.unit()), from_f64::<T>(c + w * g.unit()));
        let (l, h) = (lo.to_f64(), hi.to_f64());
        let width_ok = if wide {
            (h - l).is_finite()
        } else {
            (h as f32 - l as f32).is_finite()
        };
        let scale = nb as f64 / if wide { h - l } else { (h as f32 - l as f32) as f64 };
        if l < h && width_ok && scale.is_finite() && (scale as f32).is_finite() && scale as f32 > 0.0 {
            break (lo, hi);
        }
    };
    // Put most samples in range, a few on the edges.
    for x in data.iter_mut() {
        if g.chance(60) {
            *x = from_f64(lo.to_f64() + (hi.to_f64() - lo.to_f64()) * g.unit());
        } else if g.chance(10) {
            *x = g.pick(&[lo, hi]);
        }
    }
    let (l, h) = (lo.to_f64(), hi.to_f64());
    let bin: Box<dyn Fn(T) -> Option<usize>> = if wide {
        let scale = nb as f64 / (h - l);
        Box::new(move |x: T| {
            let x = x.to_f64();
            (x >= l && x < h).then(|| (((x - l) * scale) as usize).min(nb - 1))
        })
    } else {
        let (l, h) = (l as f32, h as f32);
        let scale = (nb as f64 / (h - l) as f64) as f32;
        Box::new(move |x: T| {
            let x = x.to_f64() as f32;
            (x >= l && x < h).then(|| (((x - l) * scale) as usize).min(nb - 1))
        })
    };
    BinRef {
        bins: Bins::even(nb, lo, hi),
        num_bins: nb,
        bin,
        valid: true,
    }
}

/// An integer as i128 (the sample types here are at most 64 bits).
fn int_of<T: Ty>(x: T) -> i128 {
    match T::KIND {
        Kind::Signed => {
            let w = width::<T>();
            ((raw(x) << (64 - w)) as i64 >> (64 - w)) as i128
        }
        _ => raw(x) as i128,
    }
}

/// Even bins over integers: `floor((x - lo) * nb / (hi - lo))`, exactly.
fn even_int<T: Ty>(g: &mut Gen, data: &mut [T]) -> BinRef<T> {
    let nb = draw_bins(g);
    let (lo, hi) = loop {
        let v = values::<T>(g, 2, Prof::Wild);
        if int_of(v[0]) < int_of(v[1]) {
            break (v[0], v[1]);
        }
        if int_of(v[1]) < int_of(v[0]) {
            break (v[1], v[0]);
        }
    };
    let (l, h) = (int_of(lo), int_of(hi));
    for x in data.iter_mut() {
        if g.chance(50) {
            let span = (h - l) as u128;
            let off = (g.next() as u128 * span) >> 64;
            *x = from_raw((l + off as i128) as u64);
        }
    }
    BinRef {
        bins: Bins::even(nb, lo, hi),
        num_bins: nb,
        bin: Box::new(move |x: T| {
            let v = int_of(x);
            (v >= l && v < h).then(|| ((v - l) as u128 * nb as u128 / (h - l) as u128) as usize)
        }),
        valid: true,
    }
}

/// Explicit edges, sorted (equal neighbours allowed); bin `i` is
/// `[e[i], e[i+1])`.
fn edges_bins<T: Ty>(g: &mut Gen, data: &mut [T]) -> BinRef<T> {
    let count = if g.chance(90) { 2 + g.below(40) } else { 2 + g.below(3000) };
    let mut edges: Vec<T> = values::<T>(g, count, Prof::Wild).into_iter().filter(|x| !x.is_nan()).collect();
    while edges.len() < 2 {
        edges.push(values::<T>(g, 1, Prof::Small)[0]);
        edges.retain(|x| !x.is_nan());
    }
    edges.sort_by(|a, b| a.partial_cmp(b).unwrap());
    // Samples drawn from the edges themselves and between them.
    for x in data.iter_mut() {
        if g.chance(40) {
            *x = g.pick(&edges);
        }
    }
    let nb = edges.len() - 1;
    let e64: Vec<f64> = edges.iter().map(|x| x.to_f64()).collect();
    let ei: Vec<i128> = edges.iter().map(|&x| int_of(x)).collect();
    BinRef {
        bins: Bins::edges(&edges),
        num_bins: nb,
        bin: Box::new(move |x: T| {
            if is_float::<T>() {
                let v = x.to_f64();
                (v >= e64[0] && v < e64[nb]).then(|| e64.partition_point(|&e| e <= v) - 1)
            } else {
                let v = int_of(x);
                (v >= ei[0] && v < ei[nb]).then(|| ei.partition_point(|&e| e <= v) - 1)
            }
        }),
        valid: true,
    }
}

/// bincount: bin `x` for `0 <= x < nb`.
fn integer_bins<T: Ty>(g: &mut Gen, data: &mut [T]) -> BinRef<T> {
    let nb = draw_bins(g);
    for x in data.iter_mut() {
        if g.chance(50) {
            *x = from_raw(g.below(nb + 2) as u64);
        }
    }
    BinRef {
        bins: Bins::even(nb, T::zero(), T::one()), // unused: bincount takes nb
        num_bins: nb,
        bin: Box::new(move |x: T| {
            let v = int_of(x);
            (v >= 0 && v < nb as i128).then_some(v as usize)
        }),
        valid: true,
    }
}

/// Bins that must be refused: no bins, lo >= hi, a NaN or unsorted edge.
fn invalid_bins<T: Ty>(g: &mut Gen, _data: &mut [T]) -> BinRef<T> {
    let v = values::<T>(g, 2, Prof::Small);
    let bins = match g.below(4) {
        0 => Bins::even(0, T::zero(), T::one()),
        1 => Bins::even(3, v[0], v[0]),
        2 if is_float::<T>() => Bins::edges(&[T::zero(), from_f64(f64::NAN), T::one()]),
        _ => Bins::edges(&[T::one(), T::zero()]),
    };
    BinRef {
        num_bins: bins.len(),
        bins,
        bin: Box::new(|_| None),
        valid: false,
    }
}

#[derive(Clone, Copy, PartialEq)]
enum HistKind {
    Bins,
    BinCount,
}

/// A histogram with `C` counts: fresh (`histogram` / `histogram_u64` /
/// `bincount`), or accumulated twice into one `Histogram` with
/// `histogram_into`; counts and dropped samples exact.
fn hist_entry<T: Ty + HistogramDispatch, C: HistCount + Ty>(
    name: &str,
    kind: HistKind,
    make: fn(&mut Gen, &mut [T]) -> BinRef<T>,
) -> Entry {
    entry(format!("histogram {name} {} counts {}", T::NAME, C::NAME), move |g, dev, n| {
        let mut data = values::<T>(g, n, Prof::Wild);
        let r = if g.chance(5) && kind == HistKind::Bins {
            invalid_bins(g, &mut data)
        } else {
            make(g, &mut data)
        };
        let at = Layout::draw(g);
        let accumulate = g.chance(30) && r.valid && kind == HistKind::Bins;
        checked(
            g,
            || {
                let up = upload(dev, &data, at);
                if !r.valid {
                    // No counts; "dropped" 1 says the bins were refused.
                    let refused = on!(up, v => v.histogram(&r.bins)).is_err();
                    return (Vec::<C>::new(), refused as u64);
                }
                if accumulate {
                    let mut h = ok(Histogram::<C>::zeros(dev, r.num_bins), "Histogram::zeros");
                    on!(up, v => ok(v.histogram_into(&r.bins, &mut h), "histogram_into"));
                    on!(up, v => ok(v.histogram_into(&r.bins, &mut h), "histogram_into"));
                    return (ok(h.to_vec(), "to_vec"), ok(h.dropped(), "dropped"));
                }
                let h: Histogram<C> = on!(up, v => T::fresh::<C, _>(v, &r.bins, kind == HistKind::BinCount, r.num_bins));
                (ok(h.to_vec(), "to_vec"), ok(h.dropped(), "dropped"))
            },
            |(counts, dropped)| {
                if !r.valid {
                    return if *dropped == 1 {
                        Ok(true)
                    } else {
                        Err(format!("invalid bins {:?} were accepted", r.bins))
                    };
                }
                let times = if accumulate { 2 } else { 1 };
                let mut want = vec![0u64; r.num_bins];
                let mut want_dropped = 0u64;
                for &x in &data {
                    match (r.bin)(x) {
                        Some(b) => want[b] += times,
                        None => want_dropped += times,
                    }
                }
                let want: Vec<C> = want.iter().map(|&c| from_raw::<C>(c)).collect();
                exact_all(counts, &want, &format!("histogram {:?} counts", r.bins))?;
                if *dropped != want_dropped {
                    return Err(format!("histogram {:?}: {dropped} dropped, want {want_dropped}", r.bins));
                }
                Ok(true)
            },
        )
    })
}

/// `histogram` / `histogram_u64` / `bincount` by count type, and
/// `bincount` only for integers.
trait HistogramDispatch: Element {
    fn fresh<C: HistCount, D: DeviceData<Self>>(v: &D, bins: &Bins<Self>, bincount: bool, nb: usize) -> Histogram<C>;
}

macro_rules! hist_dispatch {
    (int: $($t:ty),*) => {$(
        impl HistogramDispatch for $t {
            fn fresh<C: HistCount, D: DeviceData<Self>>(v: &D, bins: &Bins<Self>, bincount: bool, nb: usize) -> Histogram<C> {
                if bincount {
                    let h = ok(v.bincount(nb), "bincount");
                    return rebox(h);
                }
                fresh_any(v, bins)
            }
        }
    )*};
    (float: $($t:ty),*) => {$(
        impl HistogramDispatch for $t {
            fn fresh<C: HistCount, D: DeviceData<Self>>(v: &D, bins: &Bins<Self>, _bincount: bool, _nb: usize) -> Histogram<C> {
                fresh_any(v, bins)
            }
        }
    )*};
}
hist_dispatch!(int: u8, i8, u32, i32, u64, i64);
hist_dispatch!(float: f16, bf16, f32, f64);

/// `histogram` for u32 counts, `histogram_u64` for u64.
fn fresh_any<T: Element, C: HistCount, D: DeviceData<T>>(v: &D, bins: &Bins<T>) -> Histogram<C> {
    if C::NAME == "u32" {
        rebox(ok(v.histogram(bins), "histogram"))
    } else {
        rebox(ok(v.histogram_u64(bins), "histogram_u64"))
    }
}

/// A `Histogram<A>` as `Histogram<C>` when they are the same type.
fn rebox<A: HistCount, C: HistCount>(h: Histogram<A>) -> Histogram<C> {
    let any: Box<dyn std::any::Any> = Box::new(h);
    *any.downcast::<Histogram<C>>()
        .unwrap_or_else(|_| panic!("bincount gives u32 counts; use a u32 entry"))
}

fn histogram_menu() -> Vec<Entry> {
    use HistKind::{BinCount, Bins as B};
    vec![
        hist_entry::<f32, u32>("even", B, even_float),
        hist_entry::<f64, u64>("even", B, even_float),
        hist_entry::<f16, u32>("even", B, even_float),
        hist_entry::<i32, u32>("even", B, even_int),
        hist_entry::<u8, u64>("even", B, even_int),
        hist_entry::<u64, u32>("even", B, even_int),
        hist_entry::<f32, u32>("edges", B, edges_bins),
        hist_entry::<bf16, u64>("edges", B, edges_bins),
        hist_entry::<u64, u32>("edges", B, edges_bins),
        hist_entry::<i32, u64>("edges", B, edges_bins),
        hist_entry::<u8, u32>("bincount", BinCount, integer_bins),
        hist_entry::<i64, u32>("bincount", BinCount, integer_bins),
    ]
}

// ---------------------------------------------------------------------------
// Sorts.

/// Random sort options: ascending or descending, and in one call of three
/// a bit range `begin..end` of the key's order-preserving form.
fn draw_sort(g: &mut Gen, w: u32) -> (SortOptions, bool, u32, u32) {
    let desc = g.chance(40);
    let (b, e) = if g.chance(33) {
        let b = g.below(w as usize) as u32;
        (b, b + 1 + g.below((w - b) as usize) as u32)
    } else {
        (0, w)
    };
    let mut o = SortOptions::new();
    if (b, e) != (0, w) || g.chance(50) {
        o = o.bits(b, e);
    }
    if desc {
        o = o.descending();
    }
    (o, desc, b, e)
}

/// The stable order of `keys` by bits `b..e` of their order keys.
fn sort_perm<K: Ty>(keys: &[K], desc: bool, b: u32, e: u32) -> Vec<usize> {
    let mask = ones(e - b);
    // (sub-key, index) as one u128: distinct, so an unstable sort of them
    // is the stable order; descending inverts the sub-key.
    let mut idx: Vec<u128> = keys
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let sub = (order_key(k) >> b) & mask;
            let sub = if desc { !sub & mask } else { sub };
            (sub as u128) << 64 | i as u128
        })
        .collect();
    idx.sort_unstable();
    idx.into_iter().map(|x| x as u64 as usize).collect()
}

fn sort_keys_entry<K: Ty>() -> Entry {
    entry(format!("sort {}", K::NAME), move |g, dev, n| {
        let p = wild_or_small(g);
        let keys = values::<K>(g, n, p);
        let at = Layout::draw(g);
        let (opts, desc, b, e) = draw_sort(g, width::<K>());
        let form = g.below(3);
        checked(
            g,
            || {
                let mut up = upload(dev, &keys, at);
                match form {
                    0 if !desc && (b, e) == (0, width::<K>()) => ok(on_mut!(up, v => v.sort()), "sort"),
                    1 if desc && (b, e) == (0, width::<K>()) => ok(on_mut!(up, v => v.sort_descending()), "sort_descending"),
                    _ => ok(on_mut!(up, v => v.sort_with(opts)), "sort_with"),
                }
                up.inside()
            },
            |got| {
                let want: Vec<K> = sort_perm(&keys, desc, b, e).into_iter().map(|i| keys[i]).collect();
                exact_all(got, &want, &format!("sort {opts:?}"))
            },
        )
    })
}

fn sort_pairs_entry<K: Ty, V: Ty>() -> Entry {
    entry(format!("sort_pairs {} -> {}", K::NAME, V::NAME), move |g, dev, n| {
        let p = wild_or_small(g);
        let keys = values::<K>(g, n, p);
        let vals: Vec<V> = if g.chance(50) {
            (0..n).map(index_as::<V>).collect()
        } else {
            values::<V>(g, n, Prof::Wild)
        };
        let (at_k, at_v) = (Layout::draw(g), Layout::draw(g));
        let (opts, desc, b, e) = draw_sort(g, width::<K>());
        let form = g.below(3);
        checked(
            g,
            || {
                let (mut uk, mut uv) = (upload(dev, &keys, at_k), upload(dev, &vals, at_v));
                let full = (b, e) == (0, width::<K>());
                on_mut!(uk, k => on_mut!(uv, v => match form {
                    0 if !desc && full => ok(k.sort_pairs(v), "sort_pairs"),
                    1 if desc && full => ok(k.sort_pairs_descending(v), "sort_pairs_descending"),
                    _ => ok(k.sort_pairs_with(v, opts), "sort_pairs_with"),
                }));
                (uk.inside(), uv.inside())
            },
            |(gk, gv)| {
                let perm = sort_perm(&keys, desc, b, e);
                let wk: Vec<K> = perm.iter().map(|&i| keys[i]).collect();
                let wv: Vec<V> = perm.iter().map(|&i| vals[i]).collect();
                exact_all(gk, &wk, &format!("sort_pairs {opts:?} keys"))?;
                exact_all(gv, &wv, &format!("sort_pairs {opts:?} values (stable)"))
            },
        )
    })
}

fn argsort_entry<K: Ty, I: IndexElement + Arith + Ty>() -> Entry {
    entry(format!("argsort {} as {}", K::NAME, I::NAME), move |g, dev, n| {
        let p = wild_or_small(g);
        let keys = values::<K>(g, n, p);
        let at = Layout::draw(g);
        let (opts, desc, b, e) = draw_sort(g, width::<K>());
        let plain = g.chance(30) && !desc && (b, e) == (0, width::<K>());
        checked(
            g,
            || {
                let up = upload(dev, &keys, at);
                let v = if plain {
                    on!(up, v => ok(v.argsort::<I>(), "argsort"))
                } else {
                    on!(up, v => ok(v.argsort_with::<I>(opts), "argsort_with"))
                };
                (ok(v.to_vec(), "to_vec"), up.inside())
            },
            |(got, after)| {
                let want: Vec<I> = sort_perm(&keys, desc, b, e).into_iter().map(index_as::<I>).collect();
                exact_all(after, &keys, "argsort must leave the keys alone")?;
                exact_all(got, &want, &format!("argsort {opts:?}"))
            },
        )
    })
}

fn sort_menu() -> Vec<Entry> {
    vec![
        sort_keys_entry::<u8>(),
        sort_keys_entry::<i32>(),
        sort_keys_entry::<u64>(),
        sort_keys_entry::<i64>(),
        sort_keys_entry::<f16>(),
        sort_keys_entry::<bf16>(),
        sort_keys_entry::<f32>(),
        sort_keys_entry::<f64>(),
    ]
}

fn sort_pairs_menu() -> Vec<Entry> {
    vec![
        sort_pairs_entry::<u32, u32>(),
        sort_pairs_entry::<f32, u64>(),
        sort_pairs_entry::<i64, f16>(),
        sort_pairs_entry::<f64, i8>(),
        sort_pairs_entry::<u8, f32>(),
        sort_pairs_entry::<f16, u32>(),
        argsort_entry::<f32, u32>(),
        argsort_entry::<i32, u64>(),
    ]
}

// ---------------------------------------------------------------------------
// Top-k and selection.

/// k for a top-k of n: log-uniform, 0, n, and now and then n + 1 (an error).
fn draw_k(g: &mut Gen, n: usize) -> usize {
    match g.below(10) {
        0 => n,
        1 => n + 1,
        2 => 0,
        _ => g.log_between(1, n.max(1)).min(n),
    }
}

fn top_k_opts(smallest: bool) -> TopKOptions {
    if smallest {
        TopKOptions::smallest()
    } else {
        TopKOptions::largest()
    }
}

/// Positions of `keys` in top-k order: largest (or smallest) first in the
/// `total_cmp` order, ties to the lower position.
fn top_k_order<K: Ty>(keys: &[K], smallest: bool) -> Vec<usize> {
    sort_perm(keys, !smallest, 0, width::<K>())
}

fn top_k_entry<K: Ty, I: IndexElement + Arith + Ty>() -> Entry {
    entry(format!("top_k {} as {}", K::NAME, I::NAME), move |g, dev, n| {
        let p = wild_or_small(g);
        let keys = values::<K>(g, n, p);
        let at = Layout::draw(g);
        let k = draw_k(g, n);
        let smallest = g.chance(50);
        let opts = top_k_opts(smallest);
        if k > n {
            let up = upload(dev, &keys, at);
            assert!(
                on!(up, v => v.top_k_with::<I>(k, opts)).is_err(),
                "top_k with k = {k} > n must be an error"
            );
            exact_all(&up.inside(), &keys, "the input after an error").unwrap_or_else(|e| panic!("{e}"));
            return Tally::one();
        }
        checked(
            g,
            || {
                let up = upload(dev, &keys, at);
                let r = on!(up, v => ok(v.top_k_with::<I>(k, opts), "top_k_with"));
                (ok(r.values.to_vec(), "values"), ok(r.indices.to_vec(), "indices"))
            },
            |(vals, idx)| {
                let order = top_k_order(&keys, smallest);
                let wi: Vec<I> = order[..k].iter().map(|&i| index_as::<I>(i)).collect();
                let wv: Vec<K> = order[..k].iter().map(|&i| keys[i]).collect();
                exact_all(idx, &wi, &format!("top_k k={k} smallest={smallest} indices"))?;
                exact_all(vals, &wv, &format!("top_k k={k} smallest={smallest} values"))
            },
        )
    })
}

fn top_k_rows_entry<K: Ty>() -> Entry {
    entry(format!("top_k_rows {}", K::NAME), move |g, dev, n| {
        let p = wild_or_small(g);
        let cols = g.log_between(1, n.max(1));
        let rows = n / cols;
        let keys = values::<K>(g, rows * cols, p);
        let at = Layout::draw(g);
        let k = g.log_between(1, cols).min(cols).min(1500);
        let smallest = g.chance(50);
        checked(
            g,
            || {
                let up = upload(dev, &keys, at);
                let r = on!(up, v => ok(v.top_k_rows(cols, k, top_k_opts(smallest)), "top_k_rows"));
                (ok(r.values.to_vec(), "values"), ok(r.indices.to_vec(), "indices"))
            },
            |(vals, idx)| {
                for r in 0..rows {
                    let row = &keys[r * cols..(r + 1) * cols];
                    let order = top_k_order(row, smallest);
                    let wi: Vec<u32> = order[..k].iter().map(|&i| i as u32).collect();
                    let wv: Vec<K> = order[..k].iter().map(|&i| row[i]).collect();
                    let what = format!("top_k_rows {rows}x{cols} k={k} smallest={smallest} row {r}");
                    exact_all(&idx[r * k..(r + 1) * k], &wi, &format!("{what} indices"))?;
                    exact_all(&vals[r * k..(r + 1) * k], &wv, &format!("{what} values"))?;
                }
                Ok(true)
            },
        )
    })
}

fn select_nth_entry<K: Ty>() -> Entry {
    entry(format!("select_nth {}", K::NAME), move |g, dev, n| {
        let p = wild_or_small(g);
        let keys = values::<K>(g, n, p);
        let at = Layout::draw(g);
        let nth = if n == 0 || g.chance(5) { n } else { g.below(n) };
        if nth >= n {
            let up = upload(dev, &keys, at);
            assert!(
                on!(up, v => v.select_nth(nth)).is_err(),
                "select_nth({nth}) of {n} must be an error"
            );
            return Tally::one();
        }
        checked(
            g,
            || {
                let up = upload(dev, &keys, at);
                on!(up, v => ok(v.select_nth(nth), "select_nth"))
            },
            |got| same_one(*got, keys[top_k_order(&keys, true)[nth]], &format!("select_nth({nth})")),
        )
    })
}

fn topk_menu() -> Vec<Entry> {
    vec![
        top_k_entry::<f32, u32>(),
        top_k_entry::<f64, u64>(),
        top_k_entry::<u8, u32>(),
        top_k_entry::<i64, u32>(),
        top_k_entry::<f16, u32>(),
        top_k_entry::<bf16, u64>(),
        top_k_rows_entry::<f32>(),
        top_k_rows_entry::<u8>(),
        select_nth_entry::<f32>(),
        select_nth_entry::<i32>(),
        select_nth_entry::<f64>(),
    ]
}

// ---------------------------------------------------------------------------
// Search and merge: sorted inputs (the total order of cmp::Less), queries
// from the same profile and from the data.

/// `n` values of profile `p`, sorted ascending by `cmp::Less`.
fn sorted_values<K: Ty>(g: &mut Gen, n: usize, p: Prof) -> Vec<K> {
    let keys = values::<K>(g, n, p);
    top_k_order(&keys, true).into_iter().map(|i| keys[i]).collect()
}

fn search_entry<K: Ty, I: IndexElement + Ty>() -> Entry {
    use cuprim::algo::search::Mode;
    use cuprim::cmp::{Comparator, Less};
    entry(format!("search {} as {}", K::NAME, I::NAME), move |g, dev, n| {
        let p = wild_or_small(g);
        let sorted = sorted_values::<K>(g, n, p);
        let m = g.log_between(1, 2 * n + 2);
        let fresh = values::<K>(g, m, p);
        let queries: Vec<K> = (0..m)
            .map(|i| if n > 0 && g.chance(40) { sorted[g.below(n)] } else { fresh[i] })
            .collect();
        let mode = g.pick(&[Mode::Lower, Mode::Upper, Mode::Exact]);
        let at = Layout::draw(g);
        checked(
            g,
            || {
                let up = upload(dev, &sorted, at);
                let q = ok(DeviceVec::from_slice(dev, &queries), "from_slice");
                let r = on!(up, v => ok(v.search_with::<I, _, _>(&q, Less, mode), "search_with"));
                ok(r.to_vec(), "to_vec")
            },
            |got| {
                let want: Vec<I> = queries
                    .iter()
                    .map(|&x| {
                        let lower = sorted.partition_point(|&e| Less.less(e, x));
                        let pos = match mode {
                            Mode::Lower => lower,
                            Mode::Upper => sorted.partition_point(|&e| !Less.less(x, e)),
                            Mode::Exact if lower < n && !Less.less(x, sorted[lower]) => lower,
                            Mode::Exact => return I::highest(),
                        };
                        index_as::<I>(pos)
                    })
                    .collect();
                exact_all(got, &want, &format!("{mode:?} of {m} queries"))
            },
        )
    })
}

fn merge_entry<K: Ty>() -> Entry {
    use cuprim::cmp::{Comparator, Less};
    entry(format!("merge_by_key {} with u32 positions", K::NAME), move |g, dev, n| {
        let p = wild_or_small(g);
        let na = g.below(n + 1);
        let a = sorted_values::<K>(g, na, p);
        let b = sorted_values::<K>(g, n - na, p);
        let (va, vb): (Vec<u32>, Vec<u32>) = ((0..na as u32).collect(), (na as u32..n as u32).collect());
        let at = Layout::draw(g);
        checked(
            g,
            || {
                let up = upload(dev, &a, at);
                let (dva, dkb, dvb) = (
                    ok(DeviceVec::from_slice(dev, &va), "from_slice"),
                    ok(DeviceVec::from_slice(dev, &b), "from_slice"),
                    ok(DeviceVec::from_slice(dev, &vb), "from_slice"),
                );
                let (k, v) = on!(up, x => ok(x.merge_by_key(&dva, &dkb, &dvb), "merge_by_key"));
                (ok(k.to_vec(), "keys"), ok(v.to_vec(), "values"))
            },
            |(keys, vals)| {
                // The stable merge: a's element first unless b's is less.
                let (mut i, mut j) = (0, 0);
                let mut wk = Vec::with_capacity(n);
                let mut wv = Vec::with_capacity(n);
                while i < na || j < b.len() {
                    if j == b.len() || (i < na && !Less.less(b[j], a[i])) {
                        wk.push(a[i]);
                        wv.push(va[i]);
                        i += 1;
                    } else {
                        wk.push(b[j]);
                        wv.push(vb[j]);
                        j += 1;
                    }
                }
                exact_all(vals, &wv, "merged positions")?;
                exact_all(keys, &wk, "merged keys")
            },
        )
    })
}

fn search_menu() -> Vec<Entry> {
    vec![
        search_entry::<f32, u32>(),
        search_entry::<u8, u32>(),
        search_entry::<bf16, u64>(),
        search_entry::<f64, u64>(),
        merge_entry::<f32>(),
        merge_entry::<i8>(),
        merge_entry::<f16>(),
    ]
}

// ---------------------------------------------------------------------------
// The tests, one per family so libtest runs them side by side.

#[test]
fn reduce_family() {
    run_family("reduce_family", 0.26, reduce_menu());
}

#[test]
fn scan_family() {
    run_family("scan_family", 0.23, scan_menu());
}

#[test]
fn select_family() {
    run_family("select_family", 0.10, select_menu());
}

#[test]
fn transform_family() {
    run_family("transform_family", 0.18, transform_menu());
}

#[test]
fn histogram_family() {
    run_family("histogram_family", 0.10, histogram_menu());
}

#[test]
fn sort_family() {
    run_family("sort_family", 0.07, sort_menu());
}

#[test]
fn sort_pairs_family() {
    run_family("sort_pairs_family", 0.07, sort_pairs_menu());
}

#[test]
fn topk_family() {
    run_family("topk_family", 0.05, topk_menu());
}

#[test]
fn search_family() {
    run_family("search_family", 0.04, search_menu());
}

/// The menus hold at most ~150 (primitive, type, operator) combinations, so
/// a GPU run compiles a bounded set of kernels.
#[test]
fn menus_are_bounded() {
    let sizes = [
        reduce_menu().len(),
        scan_menu().len(),
        select_menu().len(),
        transform_menu().len(),
        histogram_menu().len(),
        sort_menu().len(),
        sort_pairs_menu().len(),
        topk_menu().len(),
        search_menu().len(),
    ];
    let total: usize = sizes.iter().sum();
    eprintln!("differential menus: {sizes:?} entries, {total} in all");
    assert!(total <= 150, "{total} menu entries: keep the GPU's kernel count bounded");
}

/// The user-defined operators' CUDA text compiles (for sm_90, no GPU
/// needed), so a GPU run does not discover a typo.
#[test]
fn user_operators_compile() {
    use cuprim::precompile::{
        precompile_binary, precompile_predicate, precompile_reduce, precompile_scan, precompile_scan_by_key, precompile_unary, Target,
    };
    if let Err(e) = cuprim::jit::nvrtc_info() {
        if common::required(common::Needs::Nvrtc) {
            panic!("CUPRIM_REQUIRE_NVRTC=1 but NVRTC cannot be used: {e}");
        }
        common::skipped(common::Needs::Nvrtc, &e.to_string());
        return;
    }
    let t = Target::Arch(90);
    type Job = (
        &'static str,
        Box<dyn Fn() -> cuprim::Result<Vec<cuprim::precompile::KernelReport>> + Send + Sync>,
    );
    let jobs: Vec<Job> = vec![
        ("scan Affine u64", Box::new(move || precompile_scan::<u64, _>(t, Affine))),
        ("scan Mat2 u32", Box::new(move || precompile_scan::<u32, _>(t, Mat2))),
        (
            "scan KeepRightNonZero i32",
            Box::new(move || precompile_scan::<i32, _>(t, KeepRightNonZero)),
        ),
        ("scan FirstNonNan f32", Box::new(move || precompile_scan::<f32, _>(t, FirstNonNan))),
        ("reduce SatAdd u32", Box::new(move || precompile_reduce::<u32, _>(t, SatAdd))),
        (
            "reduce MinMaxPack u64",
            Box::new(move || precompile_reduce::<u64, _>(t, MinMaxPack)),
        ),
        ("reduce NanMax f32", Box::new(move || precompile_reduce::<f32, _>(t, NanMax))),
        ("reduce NanMax f64", Box::new(move || precompile_reduce::<f64, _>(t, NanMax))),
        (
            "scan_by_key Affine",
            Box::new(move || precompile_scan_by_key::<i8, u64, _>(t, Affine)),
        ),
        ("transform Popcount", Box::new(move || precompile_unary::<u32, _>(t, Popcount))),
        ("transform HiWord", Box::new(move || precompile_unary::<u64, _>(t, HiWord))),
        ("transform2 Affine", Box::new(move || precompile_binary::<u64, _>(t, Affine))),
        ("predicate IsOdd", Box::new(move || precompile_predicate::<u64, _>(t, IsOdd))),
        (
            "predicate AbsBelow",
            Box::new(move || precompile_predicate::<f32, _>(t, AbsBelow(1.0))),
        ),
    ];
    let start = Instant::now();
    let results = common::run_in_order(&jobs, |(name, f)| f().map(|r| r.len()).map_err(|e| format!("{name}: {e}")));
    let mut modules = 0;
    for r in results {
        modules += r.unwrap_or_else(|e| panic!("a user operator does not compile: {e}"));
    }
    assert!(modules >= jobs.len(), "{modules} modules for {} jobs", jobs.len());
    eprintln!(
        "differential user_operators_compile: {modules} modules compiled for sm_90 in {:.1} s",
        start.elapsed().as_secs_f64()
    );
}
