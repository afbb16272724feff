use cuprim::ops::*;
use cuprim::precompile::{precompile_expr_reduce, precompile_expr_scan, precompile_reduce, precompile_scan, Target};
use cuprim::prelude::*;
#[derive(Clone, Copy)]
struct MinMax;
impl BinaryOp<(f32, f32)> for MinMax {
    fn apply(&self, a: (f32, f32), b: (f32, f32)) -> (f32, f32) {
        (a.0.min(b.0), a.1.max(b.1))
    }
    fn cuda_expr(&self) -> String {
        "cuprim_t2<float, float>{fminf(a.a0, b.a0), fmaxf(a.a1, b.a1)}".into()
    }
}
impl Associative for MinMax {}
impl Commutative for MinMax {}
impl Monoid<(f32, f32)> for MinMax {
    fn identity(&self) -> (f32, f32) {
        (f32::INFINITY, f32::NEG_INFINITY)
    }
}
#[derive(Clone, Copy)]
struct Cast3;
impl UnaryOp<(f16, u32, i64)> for Cast3 {
    type Output = f64;
    fn apply(&self, x: (f16, u32, i64)) -> f64 {
        x.0.to_f64() + x.1 as f64 + x.2 as f64
    }
    fn cuda_expr(&self) -> String {
        "(double)(float)x.a0 + (double)x.a1 + (double)x.a2".into()
    }
}
fn show(r: cuprim::Result<Vec<cuprim::precompile::KernelReport>>) {
    match r {
        Ok(v) => {
            for k in v {
                println!(
                    "== {}\n{}",
                    k.name,
                    k.log
                        .lines()
                        .filter(|l| l.contains("Used") || l.contains("spill") || l.contains("Compiling"))
                        .collect::<Vec<_>>()
                        .join("\n")
                );
            }
        }
        Err(e) => println!("ERROR {e}"),
    }
}
fn main() -> cuprim::Result<()> {
    let t = Target::Arch(90);
    let host = Device::host();
    let a = DeviceVec::<f32>::zeros(&host, 0)?;
    let b = DeviceVec::<f32>::zeros(&host, 0)?;
    let i = DeviceVec::<u32>::zeros(&host, 0)?;
    let h = DeviceVec::<f16>::zeros(&host, 0)?;
    show(precompile_reduce::<f32, _>(t, Add));
    show(precompile_scan::<f32, _>(t, Add));
    show(precompile_expr_reduce(t, &zip(&a, &b).map(Mul), Add));
    show(precompile_expr_scan(t, &zip(&a, &b).map(Mul), Add));
    show(precompile_expr_scan(t, &counting(&host, 0u8, 3, 0).map(Square), Add));
    show(precompile_expr_reduce(t, &constant(&host, 2.5f64, 0).map(Negate), Max));
    show(precompile_expr_reduce(t, &h.map(Cast::<f64>::new()).map(Abs).permute(&i), Min));
    show(precompile_expr_reduce(
        t,
        &zip3(&h, &i, counting(&host, 1i64, 1, 0)).map(Cast3),
        Add,
    ));
    show(precompile_expr_reduce(t, &zip(&a, &b), MinMax));
    Ok(())
}
