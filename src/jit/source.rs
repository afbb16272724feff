//! Source generation: the one place CUDA text is assembled.
//!
//! A kernel's source is the prelude (`kernels/prelude.cuh` and the shared
//! building blocks of `kernels/block/`), then a generated block that
//! names the specialisation (element typedefs, operator functors, tuning
//! constants), then the template's shared headers and the template itself.
//! The generated block is written by the plan (see [`spec`](super::spec));
//! the in-memory cache is keyed by a hash of the same writing, so a warm
//! call formats nothing.

use super::spec::{SpecWriter, Specialise};
use std::fmt::Write;

/// The shared prelude, compiled into every kernel: element semantics, then
/// the block building blocks in dependency order (loads and the consume
/// loop, collectives, the last-block ticket, the look-back back-off).
pub(crate) const PRELUDE: &str = concat!(
    include_str!("../../kernels/prelude.cuh"),
    include_str!("../../kernels/block/load.cuh"),
    include_str!("../../kernels/block/expr.cuh"),
    include_str!("../../kernels/block/collective.cuh"),
    include_str!("../../kernels/block/ticket.cuh"),
    include_str!("../../kernels/block/backoff.cuh"),
);

/// One kernel template file from `kernels/` and the entry points it defines.
#[derive(Debug)]
pub(crate) struct Template {
    /// Path under `kernels/`, used in cache keys and messages.
    pub name: &'static str,
    /// The template's CUDA text.
    pub text: &'static str,
    /// `extern "C"` kernels the template defines.
    pub entries: &'static [&'static str],
    /// Shared headers from `kernels/` it needs after the prelude.
    pub headers: &'static [&'static str],
}

/// Declares a kernel template: `template!(NAME, "family/file.cu", [entries], headers: [..])`.
/// The path is relative to `kernels/`; headers are `&'static str`s of shared
/// building blocks (see [`header!`]) placed after the prelude.
macro_rules! template {
    ($id:ident, $path:literal, [$($entry:literal),* $(,)?] $(, headers: [$($h:expr),*])?) => {
        #[doc = concat!("`kernels/", $path, "`")]
        pub(crate) static $id: $crate::jit::Template = $crate::jit::Template {
            name: $path,
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/", $path)),
            entries: &[$($entry),*],
            headers: &[$($($h),*)?],
        };
    };
}
pub(crate) use template;

/// A shared header from `kernels/`, as text: `header!("block/lookback.cuh")`.
macro_rules! header {
    ($path:literal) => {
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/", $path))
    };
}
pub(crate) use header;

/// A template plus the generated declarations that specialise it.
#[derive(Clone, Debug)]
pub(crate) struct KernelSpec {
    pub(crate) template: &'static Template,
    defs: String,
    /// The in-memory cache key of the same plan.
    pub(crate) cache_key: super::SpecKey,
}

impl KernelSpec {
    /// The source text of `plan`'s specialisation.
    pub(crate) fn of(plan: &impl Specialise) -> Self {
        let template = plan.template();
        let mut spec = KernelSpec {
            template,
            defs: String::with_capacity(256),
            cache_key: super::SpecKey::of(plan),
        };
        let _ = writeln!(spec.defs, "// template: {}", template.name);
        plan.write(&mut spec);
        spec
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
        format!("kernels/{} [{}]", self.template.name, types.join(", "))
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

impl SpecWriter for KernelSpec {
    fn piece<V: std::hash::Hash, F: Fn(&V) -> String + Copy + 'static>(&mut self, value: V, render: F) {
        self.defs.push_str(&render(&value));
        if !self.defs.ends_with('\n') {
            self.defs.push('\n');
        }
    }
}
