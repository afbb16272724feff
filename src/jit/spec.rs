//! Specialisations: one description, read two ways.
//!
//! A family's plan implements [`Specialise`]: it names its template and
//! writes its specialisation (typedefs, tuning constants, operator functors)
//! through a [`SpecWriter`]. [`KernelSpec`](super::KernelSpec) is the writer
//! that renders the text NVRTC compiles; [`SpecKey`] is the writer that only
//! hashes, for the in-memory module cache. Both run the same `write`, so the
//! key cannot drift from the source.
//!
//! Each piece is a *render function* plus the *value* it renders. The render
//! function must capture nothing (checked at compile time: it is zero-sized),
//! so everything the text depends on is in the value, which the key hashes,
//! together with the render function's type (unique per call site and per
//! generic instantiation: the element types and operator types are in it).
//! An operator's CUDA text is hashed only when it depends on the operator's
//! value ([`BinaryOp::cuda_expr_is_fixed`]); for the built-in operators and
//! predicates a warm call allocates and formats nothing.

use super::source::Template;
use crate::cmp::Comparator;
use crate::element::Element;
use crate::ops::{BinaryOp, Monoid, UnaryOp};
use crate::pred::Predicate;
use crate::value::Value;
use std::any::TypeId;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

/// A plan that can be compiled: a template and the specialisation of it.
pub(crate) trait Specialise {
    /// The kernel file this plan specialises.
    fn template(&self) -> &'static Template;
    /// Writes the specialisation (called once for the key on every call,
    /// and once more for the text when the module is not cached).
    fn write<W: SpecWriter>(&self, w: &mut W);
}

/// Where a specialisation is written: text (NVRTC) or a hash (cache key).
pub trait SpecWriter {
    /// One generated piece: `render(&value)`. `render` captures nothing.
    fn piece<V: Hash, F: Fn(&V) -> String + Copy + 'static>(&mut self, value: V, render: F);

    /// `typedef <T's CUDA type> alias;`
    fn elem<T: Element>(&mut self, alias: &'static str) {
        self.piece(Static(alias), |alias| format!("typedef {} {};", T::CUDA_TYPE, alias.0));
    }

    /// `typedef <T's CUDA type> alias;` for any value (tuples included).
    fn value<T: Value>(&mut self, alias: &'static str) {
        self.piece(Static(alias), |alias| format!("typedef {} {};", T::cuda_type(), alias.0));
    }

    /// `typedef <text> alias;` for a fixed CUDA type spelling.
    fn typedef(&mut self, alias: &'static str, text: &'static str) {
        self.piece((Static(alias), Static(text)), |(alias, text)| {
            format!("typedef {} {};", text.0, alias.0)
        });
    }

    /// `CUPRIM_PAIRS` and the key and value types `K` and `V` of a sort or
    /// a merge; `V` is `K` for keys alone (`pairs` false).
    fn keys_values<K: Element, V: Element>(&mut self, pairs: bool) {
        self.constant("CUPRIM_PAIRS", pairs as i64);
        self.elem::<K>("K");
        if pairs {
            self.elem::<V>("V");
        } else {
            self.typedef("V", "K");
        }
    }

    /// `#define name value` (a tuning constant).
    fn constant(&mut self, name: &'static str, value: i64) {
        self.piece((Static(name), value), |(name, value)| format!("#define {} {value}", name.0));
    }

    /// Fixed CUDA text.
    fn text(&mut self, text: &'static str) {
        self.piece(Static(text), |text| text.0.to_string());
    }

    /// A functor `name` with `static T apply(T a, T b)`; `alias` is the
    /// typedef of `T` already declared.
    fn binary<T: Value, Op: BinaryOp<T>>(&mut self, name: &'static str, alias: &'static str, op: &Op) {
        let value = (Static(name), Static(alias), OpText::<Op, T, Binary>::binary(*op));
        self.piece(value, |(name, alias, op)| {
            let (name, alias) = (name.0, alias.0);
            format!(
                "struct {name} {{ __device__ __forceinline__ static {alias} apply({alias} a, {alias} b) {{ return ({}); }} }};",
                BinaryOp::<T>::cuda_expr(&op.op)
            )
        });
    }

    /// Like [`binary`](Self::binary), plus `static T identity()`.
    fn monoid<T: Value, Op: Monoid<T>>(&mut self, name: &'static str, alias: &'static str, op: &Op) {
        let value = (Static(name), Static(alias), OpText::<Op, T, Binary>::monoid(*op));
        self.piece(value, |(name, alias, op)| {
            let (name, alias) = (name.0, alias.0);
            format!(
                "struct {name} {{ __device__ __forceinline__ static {alias} apply({alias} a, {alias} b) {{ return ({}); }} \
                 __device__ __forceinline__ static {alias} identity() {{ return {}; }} }};",
                BinaryOp::<T>::cuda_expr(&op.op),
                Value::cuda_literal(&op.op.identity())
            )
        });
    }

    /// A functor `name` with `static bool less(T a, T b)`; `alias` is the
    /// typedef of `T` already declared.
    fn comparator<T: Element, C: Comparator<T>>(&mut self, name: &'static str, alias: &'static str, cmp: &C) {
        let value = (Static(name), Static(alias), OpText::<C, T, Cmp>::comparator(*cmp));
        self.piece(value, |(name, alias, cmp)| {
            let (name, alias) = (name.0, alias.0);
            format!(
                "struct {name} {{ __device__ __forceinline__ static bool less({alias} a, {alias} b) {{ return ({}); }} }};",
                Comparator::<T>::cuda_expr(&cmp.op)
            )
        });
    }

    /// A functor `name` with `static Out apply(In x)`.
    fn unary<T: Value, Op: UnaryOp<T>>(&mut self, name: &'static str, in_alias: &'static str, out_alias: &'static str, op: &Op) {
        let value = (
            Static(name),
            Static(in_alias),
            Static(out_alias),
            OpText::<Op, T, Unary>::unary(*op),
        );
        self.piece(value, |(name, i, o, op)| {
            let (name, i, o) = (name.0, i.0, o.0);
            format!(
                "struct {name} {{ __device__ __forceinline__ static {o} apply({i} x) {{ return ({}); }} }};",
                UnaryOp::<T>::cuda_expr(&op.op)
            )
        });
    }
}

/// A `&'static str` hashed by its address and length: the same literal has
/// the same address for the life of the process, and hashing the address
/// costs one word where the text may be a hundred bytes. Two equal texts at
/// different addresses only make two keys for one module (a second load).
#[derive(Clone, Copy)]
pub(crate) struct Static(pub &'static str);

impl Hash for Static {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.0.as_ptr() as usize);
        state.write_usize(self.0.len());
    }
}

/// An operator inside a specialisation: hashed by its CUDA text only when
/// that text depends on the operator's value (its type is already in the
/// render function's type).
pub(crate) struct OpText<Op, T, Kind> {
    /// The operator.
    pub op: Op,
    text: Option<String>,
    _k: PhantomData<fn() -> (T, Kind)>,
}

/// Marker kinds of [`OpText`].
pub(crate) enum Binary {}
/// See [`Binary`].
pub(crate) enum Unary {}
/// See [`Binary`].
pub(crate) enum Pred {}
/// See [`Binary`].
pub(crate) enum Cmp {}

impl<T: Value, Op: BinaryOp<T>> OpText<Op, T, Binary> {
    /// A binary operator.
    pub fn binary(op: Op) -> Self {
        let text = (!op.cuda_expr_is_fixed()).then(|| op.cuda_expr());
        OpText { op, text, _k: PhantomData }
    }
}

impl<T: Value, Op: Monoid<T>> OpText<Op, T, Binary> {
    /// A monoid: the identity's literal is hashed beside a varying text.
    pub fn monoid(op: Op) -> Self {
        let text = (!op.cuda_expr_is_fixed()).then(|| {
            let mut t = op.cuda_expr();
            t.push('|');
            t.push_str(&Value::cuda_literal(&op.identity()));
            t
        });
        OpText { op, text, _k: PhantomData }
    }
}

impl<T: Value, Op: UnaryOp<T>> OpText<Op, T, Unary> {
    /// A unary operator.
    pub fn unary(op: Op) -> Self {
        let text = (!op.cuda_expr_is_fixed()).then(|| op.cuda_expr());
        OpText { op, text, _k: PhantomData }
    }
}

impl<T: Element, P: Predicate<T>> OpText<P, T, Pred> {
    /// A predicate (its value, if any, goes to the kernel as a parameter).
    pub fn predicate(pred: P) -> Self {
        let text = (!pred.cuda_expr_is_fixed()).then(|| pred.cuda_expr());
        OpText {
            op: pred,
            text,
            _k: PhantomData,
        }
    }
}

impl<T: Element, C: Comparator<T>> OpText<C, T, Cmp> {
    /// A comparator.
    pub fn comparator(cmp: C) -> Self {
        let text = (!cmp.cuda_expr_is_fixed()).then(|| cmp.cuda_expr());
        OpText {
            op: cmp,
            text,
            _k: PhantomData,
        }
    }
}

impl<Op, T, K> Hash for OpText<Op, T, K> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

/// The in-memory cache key of a specialisation: its template and a 128-bit
/// hash of every piece it writes. Computing it allocates nothing (unless an
/// operator's text varies with its value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SpecKey {
    template: &'static str,
    hash: [u64; 2],
}

/// The key is a hash already: the module map uses its first word as is
/// ([`KeyIsHash`]) instead of hashing it again. Equality still compares
/// the template and both words.
impl Hash for SpecKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash[0]);
    }
}

/// A map hasher for [`SpecKey`]s: passes the key's own hash through.
#[derive(Clone, Copy, Default)]
pub(crate) struct KeyIsHash;

impl std::hash::BuildHasher for KeyIsHash {
    type Hasher = PassThrough;
    fn build_hasher(&self) -> PassThrough {
        PassThrough(0)
    }
}

/// See [`KeyIsHash`].
#[derive(Default)]
pub(crate) struct PassThrough(u64);

impl Hasher for PassThrough {
    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used by `SpecKey`; fold anything else in.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 ^= x;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl SpecKey {
    /// The key of `plan`.
    pub fn of(plan: &impl Specialise) -> SpecKey {
        let mut w = KeyWriter::default();
        plan.write(&mut w);
        SpecKey {
            template: plan.template().name,
            hash: w.finish(),
        }
    }
}

/// Two independent multiply-rotate lanes (FxHash-style), finished with
/// murmur's mixer: a few nanoseconds per piece where SipHash took ~30
/// (500 ns per key measured for a reduce plan). Inputs are the program's
/// own types and constants, not adversarial, and 128 bits leave no room
/// for accidental collisions among the few hundred specialisations of a
/// process.
#[derive(Default)]
struct KeyWriter {
    a: u64,
    b: u64,
}

impl KeyWriter {
    fn finish(&self) -> [u64; 2] {
        fn fmix(mut k: u64) -> u64 {
            k ^= k >> 33;
            k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
            k ^= k >> 33;
            k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
            k ^ (k >> 33)
        }
        [fmix(self.a), fmix(self.b ^ 0x9e37_79b9_7f4a_7c15)]
    }
}

impl Hasher for KeyWriter {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(u64::from_le_bytes(c.try_into().unwrap_or_default()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64);
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    fn write_u64(&mut self, x: u64) {
        self.a = (self.a.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
        self.b = (self.b.rotate_left(23) ^ x)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add(0x632b_e59b_d9b4_e019);
    }
    fn finish(&self) -> u64 {
        KeyWriter::finish(self)[0]
    }
}

impl SpecWriter for KeyWriter {
    fn piece<V: Hash, F: Fn(&V) -> String + Copy + 'static>(&mut self, value: V, _render: F) {
        const { assert!(std::mem::size_of::<F>() == 0, "a render function captures nothing") };
        TypeId::of::<F>().hash(self);
        value.hash(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::reduce::plan::{Count, Extreme, MapReduce};
    use crate::algo::scan::plan::Scan;
    use crate::expr::Leaf;
    use crate::jit::KernelSpec;
    use crate::ops::{Add, Identity, Max, Square};
    use crate::pred::{Gt, IsNan};
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    /// Counts this thread's allocations.
    struct Counting;
    thread_local!(static ALLOCS: Cell<u64> = const { Cell::new(0) });
    // SAFETY: forwards to the system allocator; only counts.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let _ = ALLOCS.try_with(|a| a.set(a.get() + 1));
            // SAFETY: same contract as the caller's.
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: same contract as the caller's.
            unsafe { System.dealloc(ptr, layout) }
        }
    }
    #[global_allocator]
    static COUNTING: Counting = Counting;

    fn allocations(f: impl FnOnce()) -> u64 {
        let before = ALLOCS.with(|a| a.get());
        f();
        ALLOCS.with(|a| a.get()) - before
    }

    #[test]
    fn keys_of_built_in_operators_allocate_nothing() {
        let (f, i, d) = (Leaf::<f32>::type_only(), Leaf::<i32>::type_only(), Leaf::<f64>::type_only());
        let scan = Scan::new(90, &f, &Add, true);
        let reduce = MapReduce {
            arch: 90,
            input: &i,
            map: &Square,
            op: &Max,
        };
        let count = Count {
            arch: 90,
            input: &d,
            pred: &Gt(3.5f64),
        };
        let n = allocations(|| {
            std::hint::black_box(SpecKey::of(&scan));
            std::hint::black_box(SpecKey::of(&reduce));
            std::hint::black_box(SpecKey::of(&count));
        });
        assert_eq!(n, 0, "computing cache keys allocated {n} times");
    }

    #[test]
    fn keys_tell_specialisations_apart() {
        let (f, u) = (Leaf::<f32>::type_only(), Leaf::<u32>::type_only());
        let a = SpecKey::of(&Scan::new(90, &f, &Add, true));
        assert_eq!(a, SpecKey::of(&Scan::new(90, &f, &Add, true)));
        assert_ne!(a, SpecKey::of(&Scan::new(90, &f, &Add, false)), "a constant");
        assert_ne!(a, SpecKey::of(&Scan::new(90, &u, &Add, true)), "the element type");
        assert_ne!(a, SpecKey::of(&Scan::new(90, &f, &Max, true)), "the operator");
        let mapped = crate::expr::Expr::map(f, Square);
        assert_ne!(a, SpecKey::of(&Scan::new(90, &mapped, &Add, true)), "the input expression");
        let min = |greatest| Extreme {
            arch: 90,
            input: &f,
            greatest,
            index_out: 0,
        };
        assert_ne!(SpecKey::of(&min(false)), SpecKey::of(&min(true)), "a generated piece's value");
        let count = |pred| Count { arch: 90, input: &f, pred };
        // A predicate's value is a kernel parameter: one module for all.
        assert_eq!(SpecKey::of(&count(&Gt(1.0))), SpecKey::of(&count(&Gt(2.0))));
        let isnan = Count {
            arch: 90,
            input: &f,
            pred: &IsNan,
        };
        assert_ne!(SpecKey::of(&count(&Gt(1.0))), SpecKey::of(&isnan));
        // The key is the source's: same plan, same text.
        assert_eq!(KernelSpec::of(&min(true)).key(), KernelSpec::of(&min(true)).key());
        let _ = Identity;
    }

    /// An operator whose text depends on its value is keyed by its text.
    #[derive(Clone, Copy)]
    struct Scale(i32);
    impl BinaryOp<i32> for Scale {
        fn apply(&self, a: i32, b: i32) -> i32 {
            a.wrapping_add(b.wrapping_mul(self.0))
        }
        fn cuda_expr(&self) -> String {
            format!("a + b * {}", self.0)
        }
    }
    impl crate::ops::Associative for Scale {}
    impl Monoid<i32> for Scale {
        fn identity(&self) -> i32 {
            0
        }
    }

    #[test]
    fn operators_with_data_are_keyed_by_their_text() {
        let i = Leaf::<i32>::type_only();
        let key = |k| SpecKey::of(&Scan::new(90, &i, &Scale(k), false));
        assert_eq!(key(2), key(2));
        assert_ne!(key(2), key(3));
    }
}
