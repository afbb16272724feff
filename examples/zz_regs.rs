use cuprim::ops::*;
use cuprim::precompile::*;
use cuprim::prelude::*;
fn show(tag: &str, r: cuprim::Result<Vec<KernelReport>>) {
    for k in r.unwrap() {
        if !k.name.contains("by_key.cu") { continue; }
        let tp = k.specialisation.contains("CUPRIM_BYKEY_TWO_PASS");
        let g = |c: &str| k.specialisation.lines().find(|l| l.contains(c)).map(|l| l.split_whitespace().last().unwrap().to_string()).unwrap_or_default();
        let mut entry = String::new();
        for l in k.log.lines() {
            if l.contains("Compiling entry") { entry = l.split('\'').nth(1).unwrap_or("").to_string(); }
            if l.contains("registers") || (l.contains("spill") && !l.contains(" 0 bytes spill stores")) {
                println!("sm{} {tag} tp={tp} {}x{}@{} det={} {entry} | {}", k.arch, g("CUPRIM_BLOCK"), g("CUPRIM_ITEMS"), g("CUPRIM_MIN_BLOCKS"), g("CUPRIM_DETERMINISTIC"), l.trim().split(", used").next().unwrap());
            }
        }
    }
}
fn main() {
    let dev = cuprim::Device::host();
    let a = DeviceVec::<i32>::zeros(&dev, 4).unwrap();
    let b = DeviceVec::<f32>::zeros(&dev, 4).unwrap();
    let i = DeviceVec::<u32>::zeros(&dev, 4).unwrap();
    for t in [80u32, 90] {
        let t = Target::Arch(t);
        show("u32f32", precompile_reduce_by_key::<u32, f32, _>(t, Add));
        show("u64f64", precompile_reduce_by_key::<u64, f64, _>(t, Add));
        show("u8i64", precompile_reduce_by_key::<u8, i64, _>(t, Add));
        show("f32f16max", precompile_reduce_by_key::<f32, f16, _>(t, Max));
        show("f16f16", precompile_reduce_by_key::<f16, f16, _>(t, Max));
        show("i8i8", precompile_reduce_by_key::<i8, i8, _>(t, Add));
        show("expr", precompile_expr_reduce_by_key(t, &a.map(Abs), &b.permute(&i), Add));
        show("exprzip", precompile_expr_reduce_by_key(t, &a.lazy(), &cuprim::expr::zip(&b, &b).map(Mul), Add));
    }
}
