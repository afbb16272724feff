use cuprim::precompile::{precompile_segsort, Target};
fn main() {
    let arch: u32 = std::env::args().nth(1).map(|a| a.parse().unwrap()).unwrap_or(90);
    macro_rules! go { ($k:ty, $v:ty) => {
        match precompile_segsort::<$k, $v>(Target::Arch(arch)) {
            Ok(reps) => for r in reps {
                let c: Vec<&str> = r.specialisation.lines().filter(|l| l.contains("CUPRIM_BLOCK") || l.contains("CUPRIM_ITEMS") || l.contains("CUPRIM_PAIRS") || l.contains("typedef")).collect();
                println!("== {} {:?}", r.name, c);
                for l in r.log.lines().filter(|l| l.contains("Used") || l.contains("spill") || l.contains("Compiling")) { println!("  {l}"); }
            },
            Err(e) => println!("ERR {e}"),
        }
    }}
    go!(f32, u32);
    if std::env::args().nth(2).is_some() { go!(u64, f64); go!(u8, u8); go!(cuprim::f16, u64); }
}
