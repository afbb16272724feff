//! Shared test support: the devices every integration test runs on.
#![allow(dead_code)]

use cuprim::Device;
use std::sync::Once;

/// The host backend always, plus CUDA device 0 when it can be used. With
/// `CUPRIM_REQUIRE_CUDA=1`, a missing GPU fails the test instead of
/// skipping it. New CUDA buffers start poisoned (0xff bytes).
pub fn devices() -> Vec<Device> {
    static POISON: Once = Once::new();
    POISON.call_once(|| std::env::set_var("CUPRIM_POISON", "1"));
    let mut out = vec![Device::host()];
    match Device::cuda(0) {
        Ok(d) => out.push(d),
        Err(e) => {
            if std::env::var("CUPRIM_REQUIRE_CUDA").is_ok_and(|v| v == "1") {
                panic!("CUPRIM_REQUIRE_CUDA=1 but CUDA is unavailable: {e}");
            }
            static SKIP: Once = Once::new();
            SKIP.call_once(|| eprintln!("cuda: skipped ({e})"));
        }
    }
    out
}
