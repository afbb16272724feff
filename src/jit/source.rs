//! Source generation: the one place CUDA text is assembled.
//!
//! A kernel's source is `kernels/prelude.cuh`, then a generated block that
//! names the specialisation (element typedefs, operator functors, tuning
//! constants), then one template from `kernels/`. The generated block doubles
//! as the in-memory cache key, so a warm call formats a few short strings and
//! does one hash lookup.

use crate::element::Element;
use crate::ops::{BinaryOp, Monoid, UnaryOp};
use std::fmt::Write;

/// The shared prelude, compiled into every kernel.
pub(crate) const PRELUDE: &str = include_str!("../../kernels/prelude.cuh");

/// One kernel template file from `kernels/` and the entry points it defines.
#[derive(Debug)]
pub struct Template {
    /// Short name, used in cache keys and messages.
    pub name: &'static str,
    /// The template's CUDA text.
    pub text: &'static str,
    /// `extern "C"` kernels the template defines.
    pub entries: &'static [&'static str],
    /// Shared headers from `kernels/` it needs after the prelude.
    pub headers: &'static [&'static str],
}

/// `kernels/lookback.cuh`: decoupled look-back for single-pass kernels.
pub const LOOKBACK: &str = include_str!("../../kernels/lookback.cuh");

macro_rules! template {
    ($id:ident, $name:literal, [$($entry:literal),* $(,)?] $(, headers: [$($h:expr),*])?) => {
        #[doc = concat!("`kernels/", $name, ".cu`")]
        pub static $id: Template = Template {
            name: $name,
            text: include_str!(concat!("../../kernels/", $name, ".cu")),
            entries: &[$($entry),*],
            headers: &[$($($h),*)?],
        };
    };
}

template!(FILL, "fill", ["cuprim_fill", "cuprim_sequence"]);
template!(TRANSFORM, "transform", ["cuprim_transform"]);
template!(TRANSFORM2, "transform2", ["cuprim_transform2"]);
template!(GATHER_SCATTER, "gather_scatter", ["cuprim_gather", "cuprim_scatter"]);
template!(REDUCE, "reduce", ["cuprim_reduce"]);
template!(FIND, "find", ["cuprim_find_first"]);
template!(HISTOGRAM, "histogram", ["cuprim_histogram"]);
template!(SCAN, "scan", ["cuprim_scan"], headers: [LOOKBACK]);
template!(SELECT, "select", ["cuprim_select"], headers: [LOOKBACK]);
template!(SCAN_BY_KEY, "scan_by_key", ["cuprim_scan_by_key"], headers: [LOOKBACK]);

/// `kernels/radix_sort.cuh`: key transform and stable tile ranking shared by the radix sorts.
pub const RADIX_SORT_COMMON: &str = include_str!("../../kernels/radix_sort.cuh");
template!(
    RADIX_SORT,
    "radix_sort",
    ["cuprim_radix_histogram", "cuprim_radix_onesweep", "cuprim_radix_block_sort"],
    headers: [RADIX_SORT_COMMON]
);
template!(
    RADIX_SORT_CLASSIC,
    "radix_sort_classic",
    ["cuprim_radix_classic_upsweep", "cuprim_radix_classic_scan", "cuprim_radix_classic_downsweep"],
    headers: [RADIX_SORT_COMMON]
);

/// `kernels/knn.cuh`: distances, candidate lists and the kd-tree node shared by the kNN kernels.
pub const KNN_COMMON: &str = include_str!("../../kernels/knn.cuh");
template!(
    KNN_BUILD,
    "knn_build",
    ["cuprim_knn_extract", "cuprim_knn_rank", "cuprim_knn_init", "cuprim_knn_level", "cuprim_knn_scatter"],
    headers: [KNN_COMMON]
);
template!(
    KNN_QUERY,
    "knn_query",
    ["cuprim_knn_query", "cuprim_knn_radius", "cuprim_knn_morton"],
    headers: [KNN_COMMON]
);
template!(KNN_BRUTE, "knn_brute", ["cuprim_knn_brute", "cuprim_knn_merge"], headers: [KNN_COMMON]);

/// Every template, for compile checks.
pub static ALL_TEMPLATES: &[&Template] = &[
    &FILL,
    &TRANSFORM,
    &TRANSFORM2,
    &GATHER_SCATTER,
    &REDUCE,
    &FIND,
    &HISTOGRAM,
    &SCAN,
    &SELECT,
    &SCAN_BY_KEY,
    &RADIX_SORT,
    &RADIX_SORT_CLASSIC,
    &KNN_BUILD,
    &KNN_QUERY,
    &KNN_BRUTE,
];

/// A template plus the generated declarations that specialise it.
#[derive(Clone, Debug)]
pub struct KernelSpec {
    pub(crate) template: &'static Template,
    defs: String,
}

impl KernelSpec {
    /// Starts a specialisation of `template`.
    pub fn new(template: &'static Template) -> Self {
        let mut defs = String::with_capacity(160);
        let _ = writeln!(defs, "// template: {}", template.name);
        KernelSpec { template, defs }
    }

    /// `typedef <T's CUDA type> alias;`
    pub fn elem<T: Element>(mut self, alias: &str) -> Self {
        let _ = writeln!(self.defs, "typedef {} {alias};", T::CUDA_TYPE);
        self
    }

    /// `#define name value` (a tuning constant).
    pub fn constant(mut self, name: &str, value: i64) -> Self {
        let _ = writeln!(self.defs, "#define {name} {value}");
        self
    }

    /// A functor `name` with `static T apply(T a, T b)`; `alias` is the
    /// typedef of `T` already declared.
    pub fn binary<T: Element, Op: BinaryOp<T>>(mut self, name: &str, alias: &str, op: &Op) -> Self {
        let _ = writeln!(
            self.defs,
            "struct {name} {{ __device__ __forceinline__ static {alias} apply({alias} a, {alias} b) {{ return ({}); }} }};",
            op.cuda_expr()
        );
        self
    }

    /// Like [`KernelSpec::binary`], plus `static T identity()`.
    pub fn monoid<T: Element, Op: Monoid<T>>(mut self, name: &str, alias: &str, op: &Op) -> Self {
        let _ = writeln!(
            self.defs,
            "struct {name} {{ __device__ __forceinline__ static {alias} apply({alias} a, {alias} b) {{ return ({}); }} \
             __device__ __forceinline__ static {alias} identity() {{ return {}; }} }};",
            op.cuda_expr(),
            op.identity().cuda_literal()
        );
        self
    }

    /// A functor `name` with `static Out apply(In x)`.
    pub fn unary<T: Element, Op: UnaryOp<T>>(mut self, name: &str, in_alias: &str, out_alias: &str, op: &Op) -> Self {
        let _ = writeln!(
            self.defs,
            "struct {name} {{ __device__ __forceinline__ static {out_alias} apply({in_alias} x) {{ return ({}); }} }};",
            op.cuda_expr()
        );
        self
    }

    /// Verbatim declarations (functors whose shape the builders above do not cover).
    pub fn raw(mut self, text: &str) -> Self {
        self.defs.push_str(text);
        if !text.ends_with('\n') {
            self.defs.push('\n');
        }
        self
    }

    /// The generated declarations; unique per specialisation.
    pub fn key(&self) -> &str {
        &self.defs
    }

    /// A readable name for messages: template plus first typedef.
    pub fn display_name(&self) -> String {
        let types: Vec<&str> = self
            .defs
            .lines()
            .filter_map(|l| l.strip_prefix("typedef "))
            .map(|l| l.trim_end_matches(';'))
            .collect();
        format!("kernels/{}.cu [{}]", self.template.name, types.join(", "))
    }

    /// The complete CUDA source.
    pub fn source(&self) -> String {
        let headers: usize = self.template.headers.iter().map(|h| h.len()).sum();
        let mut s = String::with_capacity(PRELUDE.len() + self.defs.len() + headers + self.template.text.len() + 64);
        s.push_str(PRELUDE);
        s.push_str("\n// ---- generated specialisation ----\n");
        s.push_str(&self.defs);
        for header in self.template.headers {
            s.push_str(header);
        }
        s.push_str("// ---- template ----\n");
        s.push_str(self.template.text);
        s
    }
}
