//! `cargo run --release --example quickstart`: a few primitives on the
//! default device (the GPU if one can be used, else the host backend), on
//! eight numbers.

use cuprim::ops::Square;
use cuprim::prelude::*;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Error> {
    let dev = Device::default()?;
    match dev.arch() {
        Some(arch) => println!("running on CUDA: {} (sm_{arch}, {} SMs)", dev.name(), dev.sm_count()),
        None => match (std::env::var("CUPRIM_DEVICE"), Device::cuda(0)) {
            (Ok(choice), _) if !choice.is_empty() => println!("running on the host backend: CUPRIM_DEVICE={choice}"),
            (_, Err(why)) => println!("running on the host backend: {why}"),
            (_, Ok(_)) => println!("running on the host backend"),
        },
    }

    let x = DeviceVec::sequence(&dev, 8, 0.0f32, 0.5)?; // 0, 0.5, 1, ..., 3.5
    let y = x.transform(Square)?.transform2(&x, Add)?; // x^2 + x
    let total = y.sum()?;
    let running = y.scan(Add)?;
    println!("x         = {:?}", x.to_vec()?);
    println!("x^2 + x   = {:?}", y.to_vec()?);
    println!("sum       = {total}");
    println!("prefix    = {:?}", running.to_vec()?);
    Ok(())
}
