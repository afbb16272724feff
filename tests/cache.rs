//! The disk cache of compiled kernels: miss, hit, corrupt entries that are
//! recompiled and overwritten, and two processes writing the same entry at
//! once. Needs NVRTC (no GPU); without it the compiling tests print a skip
//! line, unless `CUPRIM_REQUIRE_NVRTC=1`.

mod common;

use cuprim::jit::{self, nvrtc, Binary, CacheStats, DiskCache, Lookup};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const ARCH: u32 = 80;

/// The counters in `jit::stats()` are per process: tests that check how
/// they move take this lock so that their neighbours cannot move them too.
static STATS: Mutex<()> = Mutex::new(());

/// Set in a child process: act as a racer writing into this folder.
const RACE_DIR: &str = "CUPRIM_TEST_CACHE_RACE_DIR";
/// Set in a child process: start racing at this Unix time (milliseconds).
const RACE_START: &str = "CUPRIM_TEST_CACHE_RACE_START";

/// A small kernel whose text differs per use, so keys differ too.
fn source(tag: &str) -> String {
    format!("// cuprim cache test: {tag}\nextern \"C\" __global__ void k(float* x) {{ x[threadIdx.x] *= 2.0f; }}\n")
}

/// NVRTC, or `None` after printing why the caller is skipped.
fn nvrtc_or_skip(test: &str) -> Option<&'static nvrtc::NvrtcInfo> {
    match nvrtc::nvrtc() {
        Ok(info) => Some(info),
        Err(e) => {
            if common::required(common::Needs::Nvrtc) {
                panic!("CUPRIM_REQUIRE_NVRTC=1 but NVRTC cannot be used: {e}");
            }
            common::skipped(common::Needs::Nvrtc, &format!("{test}: {e}"));
            None
        }
    }
}

/// The key `jit::build_source` uses for `source` on `ARCH`.
fn key_for(source: &str, info: &nvrtc::NvrtcInfo) -> String {
    let target = nvrtc::target_for(ARCH).unwrap();
    DiskCache::key(source, &nvrtc::options(&target, false), ARCH, info.version)
}

/// The file names in `dir`, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

fn delta(before: CacheStats, after: CacheStats) -> (u64, u64, u64) {
    (
        after.compiles - before.compiles,
        after.disk_hits - before.disk_hits,
        after.disk_corrupt - before.disk_corrupt,
    )
}

#[test]
fn miss_then_compile_then_hit() {
    let Some(info) = nvrtc_or_skip("miss_then_compile_then_hit") else {
        return;
    };
    let _lock = STATS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::TempDir::new("hit");
    let cache = DiskCache::new(dir.path());
    assert_eq!(cache.dir(), dir.path());
    let src = source("hit");
    let key = key_for(&src, info);
    assert_eq!(key.len(), 64, "a SHA-256 in hex: {key}");
    assert_eq!(cache.path(&key), dir.path().join(format!("{key}.bin")));
    assert_eq!(cache.load(&key), Lookup::Miss, "empty (and not yet created) folder");

    let before = jit::stats();
    let built = jit::build_source(&src, "hit", ARCH, Some(&cache)).unwrap();
    assert_eq!(delta(before, jit::stats()), (1, 0, 0), "first build compiles");
    assert!(
        matches!(&built, Binary::Cubin(b) if b.starts_with(b"\x7fELF")),
        "sm_{ARCH} gives a CUBIN"
    );
    assert!(cache.path(&key).is_file(), "the build stored its entry");
    assert_eq!(files_in(dir.path()), vec![format!("{key}.bin")], "one entry, no temporary files");
    assert_eq!(cache.load(&key), Lookup::Hit(built.clone()));

    let before = jit::stats();
    let again = jit::build_source(&src, "hit", ARCH, Some(&cache)).unwrap();
    assert_eq!(delta(before, jit::stats()), (0, 1, 0), "second build reads the disk");
    assert_eq!(again, built);

    // A different source, option set, architecture or NVRTC version is a
    // different key.
    let target = nvrtc::target_for(ARCH).unwrap();
    let opts = nvrtc::options(&target, false);
    let other_keys = [
        DiskCache::key(&source("other"), &opts, ARCH, info.version),
        DiskCache::key(&src, &nvrtc::options(&target, true), ARCH, info.version),
        DiskCache::key(&src, &opts, 90, info.version),
        DiskCache::key(&src, &opts, ARCH, (info.version.0, info.version.1 + 1)),
    ];
    for k in &other_keys {
        assert_ne!(k, &key);
        assert_eq!(cache.load(k), Lookup::Miss);
    }
    // Without a disk cache nothing is read or written.
    let before = jit::stats();
    let fresh = jit::build_source(&src, "hit", ARCH, None).unwrap();
    assert_eq!(delta(before, jit::stats()), (1, 0, 0), "no cache: compile");
    assert_eq!(fresh.bytes().len(), built.bytes().len());
}

/// Ways to damage an entry; each must read as `Corrupt`.
fn damage(bytes: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let mut out = vec![
        ("truncated to half", bytes[..bytes.len() / 2].to_vec()),
        ("truncated by one byte", bytes[..bytes.len() - 1].to_vec()),
        ("truncated inside the header", bytes[..20].to_vec()),
        ("empty", Vec::new()),
    ];
    let mut longer = bytes.to_vec();
    longer.push(0);
    out.push(("one byte appended", longer));
    for (what, at) in [("magic", 0usize), ("kind", 8), ("length", 9), ("digest", 20), ("payload start", 49)] {
        let mut b = bytes.to_vec();
        b[at] ^= 0x5a;
        out.push((what, b));
    }
    let mut b = bytes.to_vec();
    let mid = 49 + (b.len() - 49) / 2;
    b[mid] ^= 0x01;
    out.push(("one payload bit", b));
    let mut b = bytes.to_vec();
    let last = b.len() - 1;
    b[last] ^= 0x80;
    out.push(("last payload byte", b));
    out
}

#[test]
fn corrupt_entries_are_recompiled_and_overwritten() {
    let Some(info) = nvrtc_or_skip("corrupt_entries_are_recompiled_and_overwritten") else {
        return;
    };
    let _lock = STATS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::TempDir::new("corrupt");
    let cache = DiskCache::new(dir.path());
    let src = source("corrupt");
    let key = key_for(&src, info);
    let built = jit::build_source(&src, "corrupt", ARCH, Some(&cache)).unwrap();
    let good = std::fs::read(cache.path(&key)).unwrap();
    assert!(good.len() > 49, "entry of {} bytes", good.len());

    for (what, bad) in damage(&good) {
        std::fs::write(cache.path(&key), &bad).unwrap();
        assert_eq!(cache.load(&key), Lookup::Corrupt, "damage: {what}");
        let before = jit::stats();
        let rebuilt = jit::build_source(&src, "corrupt", ARCH, Some(&cache)).unwrap();
        assert_eq!(delta(before, jit::stats()), (1, 0, 1), "damage: {what}: counted corrupt, compiled");
        assert_eq!(rebuilt.bytes().len(), built.bytes().len(), "damage: {what}");
        assert_eq!(cache.load(&key), Lookup::Hit(rebuilt.clone()), "damage: {what}: overwritten");
        assert_eq!(
            files_in(dir.path()),
            vec![format!("{key}.bin")],
            "damage: {what}: no temporary files"
        );
        let before = jit::stats();
        jit::build_source(&src, "corrupt", ARCH, Some(&cache)).unwrap();
        assert_eq!(delta(before, jit::stats()), (0, 1, 0), "damage: {what}: then a hit");
    }

    // An entry that is a folder cannot be read; it is a miss and the
    // build still succeeds (storing is best effort).
    std::fs::remove_file(cache.path(&key)).unwrap();
    std::fs::create_dir(cache.path(&key)).unwrap();
    assert_eq!(cache.load(&key), Lookup::Miss);
    assert_eq!(
        jit::build_source(&src, "corrupt", ARCH, Some(&cache)).unwrap().bytes().len(),
        built.bytes().len()
    );
}

/// store / load round trips need no NVRTC.
#[test]
fn store_and_load_round_trip() {
    let dir = common::TempDir::new("roundtrip");
    // A folder that does not exist yet, two levels down.
    let cache = DiskCache::new(dir.path().join("a").join("b"));
    let key_p = DiskCache::key("ptx", &[], 90, (13, 0));
    let key_c = DiskCache::key("cubin", &[], 90, (13, 0));
    assert_ne!(key_p, key_c);
    assert_eq!(key_p, DiskCache::key("ptx", &[], 90, (13, 0)), "keys are deterministic");
    assert_ne!(
        DiskCache::key("ab", &["c".into()], 90, (13, 0)),
        DiskCache::key("a", &["bc".into()], 90, (13, 0)),
        "source and options are delimited"
    );
    let ptx = Binary::Ptx(b".version 8.0\n.target sm_90\n\0".to_vec());
    let cubin = Binary::Cubin((0..=255u8).cycle().take(10_000).collect());
    cache.store(&key_p, &ptx).unwrap();
    cache.store(&key_c, &cubin).unwrap();
    assert_eq!(cache.load(&key_p), Lookup::Hit(ptx.clone()));
    assert_eq!(cache.load(&key_c), Lookup::Hit(cubin.clone()));
    // Overwriting replaces.
    cache.store(&key_p, &Binary::Ptx(b"x\0".to_vec())).unwrap();
    assert_eq!(cache.load(&key_p), Lookup::Hit(Binary::Ptx(b"x\0".to_vec())));
    // An empty payload is a valid entry.
    cache.store(&key_c, &Binary::Cubin(Vec::new())).unwrap();
    assert_eq!(cache.load(&key_c), Lookup::Hit(Binary::Cubin(Vec::new())));
    let mut names = vec![format!("{key_p}.bin"), format!("{key_c}.bin")];
    names.sort();
    assert_eq!(files_in(cache.dir()), names, "no temporary files");
}

/// Two processes compile and store the same entry at the same moment, many
/// times over, each checking it never reads a damaged entry. Afterwards the
/// entry is valid and no temporary file is left.
#[test]
fn two_processes_racing_on_one_entry() {
    let Some(info) = nvrtc_or_skip("two_processes_racing_on_one_entry") else {
        return;
    };
    let dir = common::TempDir::new("race");
    let exe = std::env::current_exe().unwrap();
    // Start both racers in a second, after they have loaded NVRTC.
    let start = SystemTime::now().duration_since(UNIX_EPOCH).unwrap() + Duration::from_millis(1500);
    let children: Vec<_> = (0..2)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["--exact", "race_child", "--include-ignored", "--nocapture", "--test-threads=1"])
                .env(RACE_DIR, dir.path())
                .env(RACE_START, start.as_millis().to_string())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "racer {i} failed ({}):\n{text}", out.status);
        assert!(text.contains("race_child: raced"), "racer {i} did not race:\n{text}");
    }
    let cache = DiskCache::new(dir.path());
    let key = key_for(&source("race"), info);
    match cache.load(&key) {
        Lookup::Hit(Binary::Cubin(b)) => assert!(b.starts_with(b"\x7fELF")),
        other => panic!("after the race: {other:?}"),
    }
    assert_eq!(
        files_in(dir.path()),
        vec![format!("{key}.bin")],
        "exactly the entry, no temporary files"
    );
}

/// The racer, run only as a child process of the racing test (hence
/// ignored in a plain run).
#[test]
#[ignore = "a child process of two_processes_racing_on_one_entry"]
fn race_child() {
    let dir = std::env::var_os(RACE_DIR).expect("race_child runs as a child of two_processes_racing_on_one_entry");
    let info = nvrtc::nvrtc().expect("the racer needs NVRTC");
    let start: u64 = std::env::var(RACE_START).unwrap().parse().unwrap();
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
    std::thread::sleep(Duration::from_millis(start.saturating_sub(now)));

    let cache = DiskCache::new(&dir);
    let src = source("race");
    let key = key_for(&src, info);
    let built = jit::build_source(&src, "race", ARCH, Some(&cache)).unwrap();
    for round in 0..300 {
        cache.store(&key, &built).unwrap();
        match cache.load(&key) {
            Lookup::Hit(b) => assert_eq!(b.bytes().len(), built.bytes().len(), "round {round}"),
            other => panic!("round {round}: read {other:?} while racing"),
        }
    }
    let again = jit::build_source(&src, "race", ARCH, Some(&cache)).unwrap();
    assert_eq!(again.bytes().len(), built.bytes().len());
    println!("race_child: raced (pid {})", std::process::id());
}
