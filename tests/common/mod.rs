//! Shared test support: the devices every integration test runs on, seeded
//! random inputs with awkward values, and bit-exact comparison.
#![allow(dead_code)]

use cuprim::{bf16, f16, Device, Element};
use rand::RngCore;
use std::sync::Once;

/// The host backend always, plus CUDA device 0 when it can be used. With
/// `CUPRIM_REQUIRE_CUDA=1`, a missing GPU fails the test instead of
/// skipping it. New CUDA buffers start poisoned (0xff bytes), so output a
/// kernel forgot to write cannot pass for a correct result.
pub fn devices() -> Vec<Device> {
    let mut out = vec![Device::host()];
    if let Some(gpu) = cuda() {
        out.push(gpu);
    }
    out
}

/// CUDA device 0 if it can be used; otherwise `None` after the same
/// require-or-skip handling as [`devices`].
pub fn cuda() -> Option<Device> {
    static POISON: Once = Once::new();
    // The library reads CUPRIM_POISON once, at the first CUDA allocation,
    // which can only come after a CUDA device exists: set it before that.
    POISON.call_once(|| std::env::set_var("CUPRIM_POISON", "1"));
    match Device::cuda(0) {
        Ok(d) => Some(d),
        Err(e) => {
            if required(Needs::Cuda) {
                panic!("CUPRIM_REQUIRE_CUDA=1 but CUDA cannot be used: {e}");
            }
            skipped(Needs::Cuda, &e.to_string());
            None
        }
    }
}

/// The sizes every core operation is checked at.
pub const SIZES: &[usize] = &[0, 1, 31, 33, 4097, (1 << 20) + 3];

/// Sizes for the wide cross products (every cast pair, every view offset):
/// the same awkward shapes without the largest in unoptimised builds.
pub const SMALL_SIZES: &[usize] = &[0, 1, 31, 33, 4097];

/// Sizes for the cross products: [`SIZES`] in release builds (the GPU
/// runs), [`SMALL_SIZES`] plus one mid-size in debug builds, where the
/// host reference is slow.
pub fn wide_sizes() -> &'static [usize] {
    if cfg!(debug_assertions) {
        &[0, 1, 31, 33, 4097, 65_537]
    } else {
        SIZES
    }
}

/// `CUPRIM_TEST_MAX_N` (the sanitizer runs of `scripts/gpu-test` set it):
/// the largest input the size lists of the slowest suites keep; unset, no
/// cap.
pub fn size_cap() -> usize {
    match std::env::var("CUPRIM_TEST_MAX_N") {
        Ok(s) if !s.is_empty() => s.parse().unwrap_or_else(|_| panic!("CUPRIM_TEST_MAX_N={s:?}: expected a size")),
        _ => usize::MAX,
    }
}

/// `sizes` without those past [`size_cap`].
pub fn capped(sizes: &[usize]) -> Vec<usize> {
    let cap = size_cap();
    sizes.iter().copied().filter(|&n| n <= cap).collect()
}

/// The tests' random generator: SplitMix64. Statistically fine for test
/// inputs, and fast in unoptimised builds, where rand's ChaCha-based
/// `TestRng` would dominate the run time.
#[derive(Clone, Debug)]
pub struct TestRng(u64);

impl RngCore for TestRng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(8) {
            let bytes = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl TestRng {
    /// The generator whose stream starts from `seed`.
    pub fn seeded(seed: u64) -> TestRng {
        TestRng(seed)
    }
}

/// SplitMix64's finaliser: a bijective 64-bit mix.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// FNV-1a over the bytes of `s`.
pub fn fnv1a(s: &str) -> u64 {
    s.bytes()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// A seeded generator for one test. The base seed comes from the clock, or
/// from `CUPRIM_TEST_SEED` to replay a failure; it is mixed with `tag` so
/// that tests started in the same instant still differ. Failure messages
/// print the base seed.
pub fn rng(tag: &str) -> (TestRng, u64) {
    let given = std::env::var("CUPRIM_TEST_SEED").ok().filter(|s| !s.is_empty());
    let parsed = given.map(|s| {
        s.parse::<u64>()
            .unwrap_or_else(|_| panic!("CUPRIM_TEST_SEED={s:?}: expected a u64"))
    });
    let base = match parsed {
        Some(s) => s,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x5eed),
    };
    (TestRng(base ^ fnv1a(tag)), base)
}

/// Context for assertion messages: device, size, seed and how to replay.
pub fn ctx(dev: &Device, what: &str, n: usize, seed: u64) -> String {
    format!("{what} on {dev:?}, n={n}, seed={seed} (replay: CUPRIM_TEST_SEED={seed})")
}

/// Element types with the values tests like to throw at them.
pub trait Sample: Element {
    /// Values that break careless code: zeros of both signs, NaN, infinities,
    /// subnormals, extremes, and the edges of every integer range (for casts).
    fn specials() -> Vec<Self>;
    /// One random value: raw random bits, moderate values, or one of
    /// `specials` (which is [`Sample::specials`], computed once by the caller).
    fn random(r: &mut TestRng, specials: &[Self]) -> Self;
    /// A value from a small range (0..8), for predicates and repeats.
    fn small(r: &mut TestRng) -> Self;
}

/// `n` values of [`Sample::random`].
pub fn random_vec<T: Sample>(r: &mut TestRng, n: usize) -> Vec<T> {
    let specials = T::specials();
    (0..n).map(|_| T::random(r, &specials)).collect()
}

/// `n` values of [`Sample::small`].
pub fn small_vec<T: Sample>(r: &mut TestRng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::small(r)).collect()
}

/// One draw split into a 3-bit case selector and 61 random bits.
fn draw(r: &mut TestRng) -> (u64, u64) {
    let x = r.next_u64();
    (x & 7, x >> 3)
}

/// A uniform value in `[-scale, scale)` from 53 random bits.
fn moderate(bits: u64, scale: f64) -> f64 {
    ((bits >> 8) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * scale
}

macro_rules! sample_int {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            #[allow(unused_comparisons)]
            fn specials() -> Vec<Self> {
                let mut v = vec![0, 1, 2, 3, 7, 8, 127, <$t>::MAX, <$t>::MAX - 1, <$t>::MIN, <$t>::MIN.wrapping_add(1)];
                v.push((<$t>::MAX / 2).wrapping_add(1));
                if <$t>::MIN < 0 {
                    v.extend([(0 as $t).wrapping_sub(1), (0 as $t).wrapping_sub(2), (0 as $t).wrapping_sub(127).wrapping_sub(1)]);
                }
                v
            }
            fn random(r: &mut TestRng, specials: &[Self]) -> Self {
                let (case, bits) = draw(r);
                match case {
                    0..=2 => r.next_u64() as $t,
                    3..=5 => ((bits % 2000) as i64 - 1000) as $t,
                    _ => specials[bits as usize % specials.len()],
                }
            }
            fn small(r: &mut TestRng) -> Self {
                (r.next_u32() >> 29) as $t
            }
        }
    )*};
}
sample_int!(u8, i8, u32, i32, u64, i64);

/// Values at and around the edges of the integer ranges, as f64.
const CAST_EDGES: &[f64] = &[
    0.5,
    -0.5,
    0.999,
    -0.999,
    1.5,
    -1.5,
    127.0,
    127.5,
    128.0,
    -128.0,
    -128.5,
    -129.0,
    255.0,
    255.5,
    256.0,
    65504.0,
    65520.0,
    2147483647.0,
    2147483648.0,
    -2147483648.0,
    -2147483649.0,
    4294967295.0,
    4294967296.0,
    9007199254740993.0,
    9223372036854775807.0,
    -9223372036854775808.0,
    -9223372036854777856.0,
    18446744073709551615.0,
    18446744073709555712.0,
    1e30,
    -1e30,
    3.4028234663852886e38,
    1e300,
];

macro_rules! sample_float {
    ($($t:ty, $bits:ty, $mant:expr);*) => {$(
        impl Sample for $t {
            fn specials() -> Vec<Self> {
                let mut v = vec![
                    0.0, -0.0, 1.0, -1.0, <$t>::NAN, -<$t>::NAN, <$t>::INFINITY, <$t>::NEG_INFINITY,
                    <$t>::MAX, <$t>::MIN, <$t>::MIN_POSITIVE, -<$t>::MIN_POSITIVE, <$t>::EPSILON,
                    <$t>::from_bits(1), -<$t>::from_bits(1),
                    <$t>::from_bits(<$t>::MIN_POSITIVE.to_bits() - 1),
                    -<$t>::from_bits(<$t>::MIN_POSITIVE.to_bits() - 1),
                ];
                v.extend(CAST_EDGES.iter().map(|&e| e as $t));
                v
            }
            fn random(r: &mut TestRng, specials: &[Self]) -> Self {
                let (case, bits) = draw(r);
                match case {
                    0 => <$t>::from_bits(r.next_u64() as $bits),
                    // A subnormal of either sign.
                    1 => {
                        let x = <$t>::from_bits((bits as $bits) & ((1 << ($mant)) - 1));
                        if bits >> 60 == 0 { x } else { -x }
                    }
                    2..=4 => moderate(bits, 1000.0) as $t,
                    5 => moderate(bits, 2.0) as $t,
                    _ => specials[bits as usize % specials.len()],
                }
            }
            fn small(r: &mut TestRng) -> Self {
                (r.next_u32() >> 29) as $t
            }
        }
    )*};
}
sample_float!(f32, u32, 23; f64, u64, 52);

macro_rules! sample_half {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn specials() -> Vec<Self> {
                let mut v: Vec<$t> = [0x0000u16, 0x8000, 0x0001, 0x8001]
                    .iter()
                    .map(|&b| <$t>::from_bits(b))
                    .collect();
                v.extend([
                    <$t>::NAN, -<$t>::NAN, <$t>::INFINITY, <$t>::NEG_INFINITY, <$t>::MAX, <$t>::MIN,
                    <$t>::MIN_POSITIVE, -<$t>::MIN_POSITIVE, <$t>::MIN_POSITIVE_SUBNORMAL,
                    <$t>::from_bits(<$t>::MIN_POSITIVE.to_bits() - 1), <$t>::EPSILON, <$t>::ONE, <$t>::NEG_ONE,
                ]);
                v.extend(CAST_EDGES.iter().map(|&e| <$t>::from_f64(e)));
                v
            }
            fn random(r: &mut TestRng, specials: &[Self]) -> Self {
                let (case, bits) = draw(r);
                match case {
                    0 | 1 => <$t>::from_bits(bits as u16),
                    2..=4 => <$t>::from_f64(moderate(bits, 300.0)),
                    5 => <$t>::from_f64(moderate(bits, 2.0)),
                    _ => specials[bits as usize % specials.len()],
                }
            }
            fn small(r: &mut TestRng) -> Self {
                <$t>::from_f32((r.next_u32() >> 29) as f32)
            }
        }
    )*};
}
sample_half!(f16, bf16);

/// Bit equality, except that any NaN equals any NaN.
pub fn same<T: Element>(a: T, b: T) -> bool {
    (a.is_nan() && b.is_nan()) || bytemuck::bytes_of(&a) == bytemuck::bytes_of(&b)
}

/// Asserts `got` and `want` are element-wise [`same`], naming the first
/// difference and how many there are.
#[track_caller]
pub fn assert_same<T: Element>(got: &[T], want: &[T], context: &str) {
    assert_eq!(got.len(), want.len(), "length differs: {context}");
    if bytemuck::cast_slice::<T, u8>(got) == bytemuck::cast_slice::<T, u8>(want) {
        return;
    }
    let bad: Vec<usize> = (0..got.len()).filter(|&i| !same(got[i], want[i])).collect();
    if let Some(&i) = bad.first() {
        panic!(
            "{} of {} elements differ, first at {i}: got {:?}, want {:?}: {context}",
            bad.len(),
            got.len(),
            got[i],
            want[i]
        );
    }
}

/// Records that a CUDA-only test (or part of one) did nothing here.
pub fn skip(test: &str, why: &str) {
    skipped(Needs::Cuda, &format!("{test}: {why}"));
}

/// Whether `CUPRIM_REQUIRE_CUDA` / `CUPRIM_REQUIRE_NVRTC` asks for a
/// failure instead of a skip: `1` yes, `0` or unset no, anything else is a
/// mistake worth stopping for.
pub fn required(needs: Needs) -> bool {
    let var = match needs {
        Needs::Cuda => "CUPRIM_REQUIRE_CUDA",
        Needs::Nvrtc => "CUPRIM_REQUIRE_NVRTC",
    };
    match std::env::var(var).as_deref() {
        Ok("1") => true,
        Ok("0") | Ok("") | Err(std::env::VarError::NotPresent) => false,
        Ok(other) => panic!("{var}={other:?}: expected 1 (fail when missing) or 0"),
        Err(e) => panic!("{var}: {e}"),
    }
}

/// What a skipped check needed.
#[derive(Clone, Copy, Debug)]
pub enum Needs {
    /// A CUDA GPU (`CUPRIM_REQUIRE_CUDA=1` makes its absence a failure).
    Cuda,
    /// NVRTC (`CUPRIM_REQUIRE_NVRTC=1` makes its absence a failure).
    Nvrtc,
}

/// Skipped checks of this test executable by [`Needs`]: the tests that
/// skipped (libtest names each test's thread after it), and the first reason.
static SKIPS: std::sync::Mutex<[(Vec<String>, String); 2]> =
    std::sync::Mutex::new([(Vec::new(), String::new()), (Vec::new(), String::new())]);

/// Counts one skipped check. When the executable exits (after libtest's
/// summary line) one line per kind says how many tests skipped it and why;
/// it is written to stderr directly, where libtest's per-test output
/// capture cannot hide it.
pub fn skipped(needs: Needs, why: &str) {
    static REPORT_AT_EXIT: Once = Once::new();
    REPORT_AT_EXIT.call_once(|| {
        extern "C" {
            fn atexit(f: extern "C" fn()) -> std::os::raw::c_int;
        }
        // SAFETY: registers a plain function with the C library's exit
        // handlers; `report_skips` only locks a static and writes to stderr.
        unsafe { atexit(report_skips) };
    });
    let test = std::thread::current().name().unwrap_or("main").to_string();
    let mut skips = SKIPS.lock().unwrap_or_else(|e| e.into_inner());
    let (tests, reason) = &mut skips[needs as usize];
    if !tests.contains(&test) {
        tests.push(test);
    }
    if reason.is_empty() {
        *reason = why.to_string();
    }
}

extern "C" fn report_skips() {
    use std::io::Write;
    let exe = std::env::current_exe().ok();
    let name = exe
        .as_ref()
        .and_then(|p| p.file_stem())
        .and_then(|s| s.to_str())
        .map(|s| s.rsplit_once('-').map_or(s, |(name, _hash)| name))
        .unwrap_or("this test executable");
    let skips = SKIPS.lock().unwrap_or_else(|e| e.into_inner());
    for (needs, (tests, reason)) in [(Needs::Cuda, &skips[0]), (Needs::Nvrtc, &skips[1])] {
        if tests.is_empty() {
            continue;
        }
        let (what, var) = match needs {
            Needs::Cuda => ("CUDA", "CUPRIM_REQUIRE_CUDA=1"),
            Needs::Nvrtc => ("NVRTC", "CUPRIM_REQUIRE_NVRTC=1"),
        };
        let _ = writeln!(
            std::io::stderr(),
            "cuprim tests: {} test(s) SKIPPED their {what} checks in {name}: {reason} ({var} makes this a failure)",
            tests.len()
        );
    }
}

/// With `CUPRIM_COMPILE_CHECK_DUMP=DIR`, writes each compiled module of a
/// compile check to DIR as `sm{arch}-{name}-{hash}.cubin` (`.ptx` where
/// NVRTC emitted PTX), the hash being that of its specialisation, so the
/// same module gets the same file name in every run: `scripts/sass-diff`
/// compares two such folders instruction by instruction.
pub fn dump_images(reports: &[cuprim::precompile::KernelReport]) {
    use std::hash::{Hash, Hasher};
    let Some(dir) = std::env::var_os("CUPRIM_COMPILE_CHECK_DUMP") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
    for r in reports.iter().filter(|r| !r.image.is_empty()) {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        r.specialisation.hash(&mut h);
        let name: String = r.name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        let ext = if r.image.starts_with(b"\x7fELF") { "cubin" } else { "ptx" };
        let path = dir.join(format!("sm{}-{}-{:016x}.{ext}", r.arch, name.trim_matches('_'), h.finish()));
        std::fs::write(&path, &r.image).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
}

/// Runs `jobs` on rayon's threads, each thread taking the next job in list
/// order (put the heavy ones first, so the threads finish together), and
/// returns what `run` made of each, in list order. No lock is held while a
/// job runs, so the threads work side by side (NVRTC is thread-safe).
pub fn run_in_order<J: Sync, T: Send>(jobs: &[J], run: impl Fn(&J) -> T + Sync) -> Vec<T> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, T)>> = Mutex::new(Vec::with_capacity(jobs.len()));
    rayon::scope(|s| {
        for _ in 0..rayon::current_num_threads() {
            s.spawn(|_| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let r = run(job);
                results.lock().unwrap_or_else(|e| e.into_inner()).push((i, r));
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// A fresh, empty folder under the system temp dir (named after `tag`, the
/// process and the clock), removed with everything in it on drop.
pub struct TempDir(std::path::PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("cuprim-test-{tag}-{}-{nanos}", std::process::id()));
        assert!(!dir.exists(), "{} already exists", dir.display());
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        TempDir(dir)
    }
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// IEEE 754-2019 minimum, the reference for `ops::Min`: a NaN operand wins
/// (the left one if both are), -0.0 < +0.0, and a tie keeps the left operand.
pub fn ieee_min<T: Element>(a: T, b: T) -> T {
    if a.is_nan() {
        a
    } else if b.is_nan() || b < a || (b == a && b.to_f64().is_sign_negative()) {
        b
    } else {
        a
    }
}

/// IEEE 754-2019 maximum, the reference for `ops::Max` (as [`ieee_min`],
/// with +0.0 > -0.0).
pub fn ieee_max<T: Element>(a: T, b: T) -> T {
    if a.is_nan() {
        a
    } else if b.is_nan() || a < b || (b == a && a.to_f64().is_sign_negative()) {
        b
    } else {
        a
    }
}

/// A key type as these tests see it: the reference order and the
/// order-preserving bits, written here independently of the crate.
pub trait Key: Sample {
    fn total(a: &Self, b: &Self) -> std::cmp::Ordering;
    fn ordered(self) -> u64;
}

macro_rules! int_key {
    ($($t:ty, $u:ty);*) => {$(
        impl Key for $t {
            fn total(a: &Self, b: &Self) -> std::cmp::Ordering {
                a.cmp(b)
            }
            fn ordered(self) -> u64 {
                let sign = if <$t>::MIN == 0 { 0 } else { 1u64 << (<$t>::BITS - 1) };
                (self as $u as u64) ^ sign
            }
        }
    )*};
}
int_key!(u8, u8; i8, u8; u32, u32; i32, u32; u64, u64; i64, u64);

macro_rules! float_key {
    ($($t:ty, $width:expr);*) => {$(
        impl Key for $t {
            fn total(a: &Self, b: &Self) -> std::cmp::Ordering {
                a.total_cmp(b)
            }
            fn ordered(self) -> u64 {
                let u = self.to_bits() as u64;
                let sign = 1u64 << ($width - 1);
                if u & sign != 0 {
                    !u & (u64::MAX >> (64 - $width))
                } else {
                    u | sign
                }
            }
        }
    )*};
}
float_key!(f32, 32; f64, 64; f16, 16; bf16, 16);

/// The stable reference permutation: input indices in sorted order, by the
/// full key order (`range == None`) or by bits `begin..end` of the ordered
/// key.
pub fn stable_order<K: Key>(data: &[K], descending: bool, range: Option<(u32, u32)>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..data.len()).collect();
    match range {
        None if descending => order.sort_by(|&a, &b| K::total(&data[b], &data[a])),
        None => order.sort_by(|&a, &b| K::total(&data[a], &data[b])),
        Some((begin, end)) => {
            let width = end - begin;
            let mask = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
            let radix = |k: K| {
                let o = if descending { !k.ordered() } else { k.ordered() };
                (o >> begin) & mask
            };
            order.sort_by_key(|&i| radix(data[i]));
        }
    }
    order
}

/// Affine maps x -> a*x + b (mod 2^32) packed as (a << 32) | b; composing
/// "first f, then g" is associative and not commutative: the monoid the
/// suites check order-keeping with.
#[derive(Clone, Copy, Debug)]
pub struct Compose;
impl cuprim::ops::BinaryOp<u64> for Compose {
    fn apply(&self, f: u64, g: u64) -> u64 {
        let (fa, fb) = ((f >> 32) as u32, f as u32);
        let (ga, gb) = ((g >> 32) as u32, g as u32);
        ((ga.wrapping_mul(fa) as u64) << 32) | ga.wrapping_mul(fb).wrapping_add(gb) as u64
    }
    fn cuda_expr(&self) -> String {
        "(((u64)((u32)(b >> 32) * (u32)(a >> 32)) << 32) | (u64)((u32)(b >> 32) * (u32)a + (u32)b))".into()
    }
}
impl cuprim::ops::Associative for Compose {}
impl cuprim::ops::Monoid<u64> for Compose {
    fn identity(&self) -> u64 {
        1 << 32
    }
}

/// Affine maps x -> a * x + b on u16, packed (a << 16 | b) in a u32, composed
/// left to right: the same monoid on 4-byte values.
#[derive(Clone, Copy, Debug)]
pub struct Compose16;
impl cuprim::ops::BinaryOp<u32> for Compose16 {
    fn apply(&self, f: u32, g: u32) -> u32 {
        let (fa, fb) = ((f >> 16) as u16, f as u16);
        let (ga, gb) = ((g >> 16) as u16, g as u16);
        ((ga.wrapping_mul(fa) as u32) << 16) | ga.wrapping_mul(fb).wrapping_add(gb) as u32
    }
    fn cuda_expr(&self) -> String {
        "((u32)(unsigned short)((b >> 16) * (a >> 16)) << 16) | (u32)(unsigned short)((b >> 16) * (a & 0xffffu) + (b & 0xffffu))".into()
    }
}
impl cuprim::ops::Associative for Compose16 {}
impl cuprim::ops::Monoid<u32> for Compose16 {
    fn identity(&self) -> u32 {
        1 << 16
    }
}

/// (min, max) of f32 pairs: a tuple monoid (keyed reductions, tuple scans).
#[derive(Clone, Copy, Debug)]
pub struct MinMax;
impl cuprim::ops::BinaryOp<(f32, f32)> for MinMax {
    fn apply(&self, a: (f32, f32), b: (f32, f32)) -> (f32, f32) {
        (a.0.min(b.0), a.1.max(b.1))
    }
    fn cuda_expr(&self) -> String {
        "cuprim_t2<float, float>{fminf(a.a0, b.a0), fmaxf(a.a1, b.a1)}".into()
    }
}
impl cuprim::ops::Associative for MinMax {}
impl cuprim::ops::Monoid<(f32, f32)> for MinMax {
    fn identity(&self) -> (f32, f32) {
        (f32::INFINITY, f32::NEG_INFINITY)
    }
}

/// (count, sum, sum) of (u32, f64, i64): a triple monoid.
#[derive(Clone, Copy, Debug)]
pub struct Sum3;
pub type Triple = (u32, f64, i64);
impl cuprim::ops::BinaryOp<Triple> for Sum3 {
    fn apply(&self, a: Triple, b: Triple) -> Triple {
        (a.0.wrapping_add(b.0), a.1 + b.1, a.2.wrapping_add(b.2))
    }
    fn cuda_expr(&self) -> String {
        "cuprim_t3<unsigned int, double, long long>{a.a0 + b.a0, a.a1 + b.a1, a.a2 + b.a2}".into()
    }
}
impl cuprim::ops::Associative for Sum3 {}
impl cuprim::ops::Monoid<Triple> for Sum3 {
    fn identity(&self) -> Triple {
        (0, 0.0, 0)
    }
}
