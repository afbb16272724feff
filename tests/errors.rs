//! Errors that say what to do: a missing or broken NVRTC, a missing driver
//! library, and `CUPRIM_*` settings that are not one of the accepted values.
//!
//! What cuprim finds is settled once per process (NVRTC is probed once), so
//! each test that needs a particular environment runs its checks in a child
//! process: this executable again, filtered to that one test, with the
//! environment set up and a marker variable naming the test. Nothing here
//! needs a GPU or NVRTC; where the machine has them, the checks that need
//! their absence check the other side instead (the library is found, from
//! outside the hidden places).

mod common;

use cuprim::jit::dylib::{self, Place, Wanted};
use cuprim::jit::{nvrtc, CacheMode};
use cuprim::{Device, Error};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Set in a child process to the name of the test it runs.
const CHILD: &str = "CUPRIM_ERRORS_TEST_CHILD";

/// Variables that lead cuprim to an NVRTC or a cache: removed in children
/// that hide NVRTC, so only the places a test names are searched (plus the
/// loader's cache and the fixed system folders, which no test can hide).
const SEARCH_VARS: &[&str] = &[
    "CUPRIM_NVRTC_DIR",
    "CUDA_PATH",
    "CUDA_HOME",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "LD_LIBRARY_PATH",
];

/// True in the child process started for `test`.
fn in_child(test: &str) -> bool {
    std::env::var(CHILD).is_ok_and(|t| t == test)
}

/// Runs `test` of this executable in a child process with `set` applied
/// after `unset`, and fails with the child's output if the child fails.
/// Returns the child's standard output.
fn run_child(test: &str, unset: &[&str], set: &[(&str, &Path)]) -> String {
    let exe = std::env::current_exe().expect("the test executable's path");
    let mut cmd = Command::new(exe);
    cmd.args([test, "--exact", "--nocapture", "--test-threads=1"]);
    for var in unset {
        cmd.env_remove(var);
    }
    for (var, value) in set {
        cmd.env(var, value);
    }
    cmd.env(CHILD, test);
    let out = cmd.output().expect("starting the child test process");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "child process for {test} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    assert!(stdout.contains("1 passed"), "child process for {test} ran no test:\n{stdout}");
    stdout.into_owned()
}

/// The parts of a `CudaUnavailable`, or a failure naming what came instead.
fn unavailable(e: &Error) -> (&str, &[String]) {
    match e {
        Error::CudaUnavailable { what, searched } => (what, searched),
        other => panic!("expected Error::CudaUnavailable, got {other:?}"),
    }
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// The message for a missing NVRTC: said once, the remedy, every place.
#[test]
fn missing_nvrtc_says_where_it_looked_and_what_to_do() {
    let (a, b) = (common::TempDir::new("nvrtc-a"), common::TempDir::new("nvrtc-b"));
    let places = [
        Place::dir(a.path(), "CUPRIM_NVRTC_DIR"),
        Place::dir(b.path(), "pip wheel nvidia-cuda-nvrtc"),
    ];
    let err = nvrtc::locate(&places).unwrap_err();
    let msg = err.to_string();
    println!("{msg}");
    let (_, searched) = unavailable(&err);
    assert_eq!(count(&msg, "CUDA is not available"), 1, "said once: {msg}");
    assert_eq!(count(&msg, "was not found"), 1, "said once: {msg}");
    assert!(
        msg.starts_with("CUDA is not available: NVRTC 13 (libnvrtc.so.13) was not found; install it with "),
        "{msg}"
    );
    for remedy in [
        "`pip install nvidia-cuda-nvrtc==13.0.88`",
        "the CUDA 13 toolkit",
        "set CUPRIM_NVRTC_DIR",
    ] {
        assert!(msg.contains(remedy), "the remedy names {remedy}: {msg}");
    }
    assert_eq!(
        searched,
        [
            format!("{} (CUPRIM_NVRTC_DIR): no libnvrtc.so.13", a.path().display()),
            format!("{} (pip wheel nvidia-cuda-nvrtc): no libnvrtc.so.13", b.path().display()),
        ]
    );
    assert!(msg.contains(&format!("\nsearched, in order:\n  {}", searched[0])), "{msg}");
}

/// The same through `nvrtc_info` in a process whose environment points
/// nowhere: the cached answer is handed out again unchanged, not wrapped.
#[test]
fn missing_nvrtc_is_reported_once_per_call() {
    const TEST: &str = "missing_nvrtc_is_reported_once_per_call";
    if !in_child(TEST) {
        let (empty, home) = (common::TempDir::new("empty"), common::TempDir::new("home"));
        run_child(TEST, SEARCH_VARS, &[("CUPRIM_NVRTC_DIR", empty.path()), ("HOME", home.path())]);
        return;
    }
    let nvrtc_dir = PathBuf::from(std::env::var_os("CUPRIM_NVRTC_DIR").unwrap());
    let home = PathBuf::from(std::env::var_os("HOME").unwrap());
    let places = nvrtc::places();
    assert_eq!(
        places[0],
        Place::dir(&nvrtc_dir, "CUPRIM_NVRTC_DIR"),
        "CUPRIM_NVRTC_DIR first: {places:?}"
    );
    assert_eq!(places[1], Place::Loader, "then the loader: {places:?}");
    match cuprim::jit::nvrtc_info() {
        Ok(info) => {
            // NVRTC installed where no test can hide it (the ldconfig cache,
            // /usr/local/cuda): it must come from there.
            println!("NVRTC found at {} (not hidden by this test)", info.found_at);
            for hidden in [&nvrtc_dir, &home] {
                assert!(!info.found_at.starts_with(&*hidden.to_string_lossy()), "{}", info.found_at);
            }
        }
        Err(first) => {
            let msg = first.to_string();
            println!("{msg}");
            assert_eq!(count(&msg, "CUDA is not available"), 1, "{msg}");
            assert!(msg.contains("NVRTC 13 (libnvrtc.so.13) was not found; install it with"), "{msg}");
            let (_, searched) = unavailable(&first);
            assert_eq!(
                searched[0],
                format!("{} (CUPRIM_NVRTC_DIR): no libnvrtc.so.13", nvrtc_dir.display())
            );
            assert!(
                searched[1].starts_with("libnvrtc.so.13 through the dynamic loader (LD_LIBRARY_PATH unset, the ldconfig cache"),
                "{searched:?}"
            );
            let again = cuprim::jit::nvrtc_info().unwrap_err().to_string();
            assert_eq!(again, msg, "the second call says the same");
            // Device::cuda needs NVRTC: with no driver it reports the driver,
            // with one the NVRTC message, as it is.
            match Device::cuda(0) {
                Err(e @ Error::CudaUnavailable { .. }) => {
                    let m = e.to_string();
                    assert_eq!(count(&m, "CUDA is not available"), 1, "{m}");
                    assert!(m == msg || m.contains("NVIDIA driver library"), "{m}");
                }
                other => panic!("Device::cuda without NVRTC: {other:?}"),
            }
        }
    }
}

/// A `libnvrtc.so.13` that exists but does not load is reported as such,
/// with the loader's own message, and stops the search (CUPRIM_NVRTC_DIR is
/// the first place, so nothing else was tried).
#[test]
fn broken_nvrtc_keeps_the_loaders_message() {
    const TEST: &str = "broken_nvrtc_keeps_the_loaders_message";
    if !in_child(TEST) {
        let dir = common::TempDir::new("broken");
        std::fs::write(dir.path().join("libnvrtc.so.13"), b"").unwrap();
        run_child(TEST, &["CUPRIM_NVRTC_DIR"], &[("CUPRIM_NVRTC_DIR", dir.path())]);
        return;
    }
    let path = Path::new(&std::env::var_os("CUPRIM_NVRTC_DIR").unwrap()).join("libnvrtc.so.13");
    let err = cuprim::jit::nvrtc_info().unwrap_err();
    let msg = err.to_string();
    println!("{msg}");
    let (what, searched) = unavailable(&err);
    assert_eq!(count(&msg, "CUDA is not available"), 1, "{msg}");
    assert!(!msg.contains("not found"), "{msg}");
    assert!(
        what.starts_with(&format!(
            "NVRTC 13 at {} (CUPRIM_NVRTC_DIR) exists but could not be loaded (the dynamic loader says: {}: file too short); \
             reinstall it",
            path.display(),
            path.display()
        )),
        "{what}"
    );
    assert!(
        what.contains("set CUPRIM_NVRTC_DIR to a folder that holds a working libnvrtc.so.13"),
        "{what}"
    );
    assert_eq!(
        searched,
        [format!("{} (CUPRIM_NVRTC_DIR): exists, could not be loaded", path.display())]
    );
    assert_eq!(
        cuprim::jit::nvrtc_info().unwrap_err().to_string(),
        msg,
        "the second call says the same"
    );
}

/// The search order the README gives: CUPRIM_NVRTC_DIR, the loader,
/// CUDA_PATH and CUDA_HOME (lib64, lib), /usr/local/cuda/lib64, then pip's
/// site-packages.
#[test]
fn nvrtc_search_order() {
    const TEST: &str = "nvrtc_search_order";
    if !in_child(TEST) {
        let (a, b, c, home) = (
            common::TempDir::new("a"),
            common::TempDir::new("b"),
            common::TempDir::new("c"),
            common::TempDir::new("home"),
        );
        let site = home.path().join(".local/lib/python3.99/site-packages");
        std::fs::create_dir_all(&site).unwrap();
        run_child(
            TEST,
            SEARCH_VARS,
            &[
                ("CUPRIM_NVRTC_DIR", a.path()),
                ("CUDA_PATH", b.path()),
                ("CUDA_HOME", c.path()),
                ("HOME", home.path()),
            ],
        );
        return;
    }
    let var = |v: &str| PathBuf::from(std::env::var_os(v).unwrap());
    let (a, b, c, home) = (var("CUPRIM_NVRTC_DIR"), var("CUDA_PATH"), var("CUDA_HOME"), var("HOME"));
    let places = nvrtc::places();
    assert_eq!(
        places[..7],
        [
            Place::dir(&a, "CUPRIM_NVRTC_DIR"),
            Place::Loader,
            Place::dir(b.join("lib64"), "CUDA_PATH"),
            Place::dir(b.join("lib"), "CUDA_PATH"),
            Place::dir(c.join("lib64"), "CUDA_HOME"),
            Place::dir(c.join("lib"), "CUDA_HOME"),
            Place::dir("/usr/local/cuda/lib64", "the CUDA toolkit's default folder"),
        ]
    );
    assert_eq!(
        places[7],
        Place::dir(
            home.join(".local/lib/python3.99/site-packages/nvidia/cu13/lib"),
            "pip wheel nvidia-cuda-nvrtc"
        )
    );
}

/// The driver library's message: this OS's names, each once, the loader's
/// search path and the folders probed, and the remedy.
#[test]
fn missing_driver_says_where_it_looked_and_what_to_do() {
    let names = Wanted::DRIVER.names;
    let mut unique = names.to_vec();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "no name twice: {names:?}");
    assert!(names.iter().all(|n| n.starts_with("libcuda.so")), "Linux names only: {names:?}");

    let dir = common::TempDir::new("driver");
    let absent = Wanted {
        names: &["libcuprim-test-absent-cuda.so.1", "libcuprim-test-absent-cuda.so"],
        ..Wanted::DRIVER
    };
    let err = dylib::find(&absent, &[Place::Loader, Place::dir(dir.path(), "a test folder")]).unwrap_err();
    let msg = err.to_string();
    println!("{msg}");
    assert_driver_message(&msg, absent.names, &[dir.path()]);

    // The real search: where this machine has no driver, the same message
    // for libcuda; where it has one, it is found and loads.
    let probed = [
        Path::new("/usr/lib/wsl/lib"),
        Path::new("/run/opengl-driver/lib"),
        Path::new("/usr/local/nvidia/lib64"),
    ];
    assert_eq!(dylib::driver_places()[0], Place::Loader);
    assert_eq!(dylib::driver_places().len(), 1 + probed.len());
    match dylib::find(&Wanted::DRIVER, &dylib::driver_places()) {
        Err(e) => {
            let msg = e.to_string();
            println!("{msg}");
            assert_driver_message(&msg, names, &probed);
            match Device::cuda(0) {
                Err(e) => assert_eq!(e.to_string(), msg, "Device::cuda says the same"),
                Ok(d) => panic!("Device::cuda without a driver library: {d:?}"),
            }
        }
        Ok(found) => println!("driver library loaded: {}", found.at),
    }
}

fn assert_driver_message(msg: &str, names: &[&str], dirs: &[&Path]) {
    assert_eq!(count(msg, "CUDA is not available"), 1, "{msg}");
    assert!(
        msg.starts_with(&format!(
            "CUDA is not available: the NVIDIA driver library ({}) was not found; install the NVIDIA driver; \
             on a machine without an NVIDIA GPU use Device::host()",
            names[0]
        )),
        "{msg}"
    );
    let loader = format!(
        "\nsearched, in order:\n  {} through the dynamic loader (LD_LIBRARY_PATH",
        names.join(", ")
    );
    assert!(msg.contains(&loader), "{msg}");
    assert!(msg.contains("the ldconfig cache, the system library folders): not found"), "{msg}");
    for dir in dirs {
        let line = format!("\n  {} (", dir.display());
        assert!(msg.contains(&line), "{} listed: {msg}", dir.display());
        assert!(msg.contains(&format!("): no {}", names.join(" or "))), "{msg}");
    }
    assert!(!msg.contains(".dll"), "no Windows names: {msg}");
    assert_eq!(
        msg.lines().count(),
        3 + dirs.len(),
        "the statement, the heading, one line a place: {msg}"
    );
}

/// `CUPRIM_CACHE` outside off / memory / disk is an error wherever it is
/// read, and `Device::default` returns it instead of falling back.
#[test]
fn unknown_cache_mode_is_an_error() {
    const TEST: &str = "unknown_cache_mode_is_an_error";
    if !in_child(TEST) {
        run_child(TEST, &["CUPRIM_DEVICE"], &[("CUPRIM_CACHE", Path::new("dsik"))]);
        return;
    }
    let want = r#"invalid argument: CUPRIM_CACHE="dsik" is not a cache mode; expected off, memory or disk (unset means disk)"#;
    let err = CacheMode::from_env().unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
    assert_eq!(err.to_string(), want);
    let err = Device::default().unwrap_err();
    assert_eq!(err.to_string(), want, "Device::default reports it, on every machine");
    match Device::cuda(0) {
        // No GPU here: that is what Device::cuda reports first.
        Err(Error::CudaUnavailable { .. }) => {}
        Err(e) => assert_eq!(e.to_string(), want),
        Ok(d) => panic!("Device::cuda accepted CUPRIM_CACHE=dsik: {d:?}"),
    }
}

/// The accepted values, and unset / empty meaning `disk`.
#[test]
fn cache_modes() {
    const TEST: &str = "cache_modes";
    if let Ok(value) = std::env::var(format!("{CHILD}_VALUE")) {
        if in_child(TEST) {
            let want = match value.as_str() {
                "off" => CacheMode::Off,
                "memory" => CacheMode::Memory,
                _ => CacheMode::Disk,
            };
            assert_eq!(CacheMode::from_env().unwrap(), want, "CUPRIM_CACHE={value:?}");
            return;
        }
    }
    for value in ["off", "memory", "disk", ""] {
        let marker = format!("{CHILD}_VALUE");
        run_child(TEST, &[], &[("CUPRIM_CACHE", Path::new(value)), (&marker, Path::new(value))]);
    }
    run_child(TEST, &["CUPRIM_CACHE"], &[(&format!("{CHILD}_VALUE"), Path::new("unset"))]);
}

/// `CUPRIM_DEVICE` outside host / cuda / cuda:N is an error naming the
/// accepted values.
#[test]
fn unknown_device_is_an_error() {
    const TEST: &str = "unknown_device_is_an_error";
    if !in_child(TEST) {
        for value in ["gpu", "cpu", "cuda:", "cuda:x", "Host"] {
            run_child(TEST, &["CUPRIM_CACHE"], &[("CUPRIM_DEVICE", Path::new(value))]);
        }
        return;
    }
    let value = std::env::var("CUPRIM_DEVICE").unwrap();
    let err = Device::default().unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "invalid argument: CUPRIM_DEVICE={value:?} is not a device; expected host, cuda or cuda:N \
             (N: a GPU ordinal), or unset for CUDA 0 when usable, else the host"
        )
    );
}

/// With nothing set, `Device::default` is CUDA 0 when `Device::cuda(0)`
/// works, the host when it says CUDA is unavailable, and any other error
/// as it is.
#[test]
fn default_falls_back_only_when_cuda_is_unavailable() {
    const TEST: &str = "default_falls_back_only_when_cuda_is_unavailable";
    if !in_child(TEST) {
        run_child(TEST, &["CUPRIM_DEVICE", "CUPRIM_CACHE"], &[]);
        return;
    }
    let default = Device::default();
    match (Device::cuda(0), default) {
        (Ok(gpu), Ok(d)) => assert_eq!(d, gpu),
        (Err(Error::CudaUnavailable { .. }), Ok(d)) => assert!(d.is_host(), "{d:?}"),
        (Err(e), Err(d)) => assert_eq!(d.to_string(), e.to_string()),
        (cuda, default) => panic!("Device::cuda(0) = {cuda:?} but Device::default() = {default:?}"),
    }
}
