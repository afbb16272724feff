use cuprim::prelude::*;
fn main() -> cuprim::Result<()> {
    let dev = Device::default()?;
    let n = 1usize << 28;
    let f = DeviceVec::sequence(&dev, n, 0.0f32, 1.0 / 4096.0)?;
    for _ in 0..3 {
        let s = f.scan(Add)?;
        let r = f.reduce_into(Add)?;
        dev.synchronize()?;
        drop((s, r));
    }
    println!("ok");
    Ok(())
}
