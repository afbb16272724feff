//! What every expression node does, on both backends: its CUDA type
//! (nested typedefs over `kernels/block/expr.cuh`), its kernel-parameter
//! bytes, its host evaluation, and slicing.

use super::args::ArgWriter;
use crate::algo::knn::Coord;
use crate::device::{CudaDevice, Device};
use crate::element::{Element, IndexElement, Scalar, Storable};
use crate::error::{Error, Result};
use crate::jit::spec::{OpText, Unary};
use crate::jit::SpecWriter;
use crate::ops::{Arith, UnaryOp};
use crate::value::Value;

/// The sealed half of [`Expr`](super::Expr): how a node is compiled,
/// passed, evaluated on the host and sliced.
pub trait Node: Sync + Sized + Clone {
    /// The element type the node yields.
    type Item: Value;
    /// Bytes of the widest buffer element below this node (0: no buffer).
    const WIDEST: usize = 0;
    /// True when a permutation below this node checks indices on the device.
    const CHECKED: bool = false;
    /// True for a plain buffer (a kernel may take its pointer alone: the
    /// first 8 bytes of its parameter).
    const IS_BUF: bool = false;
    /// Memory streams an element costs: one per buffer read in order, three
    /// for a permutation (its indices and a gather). Kernels keep fewer
    /// loads in flight per thread when there are several.
    const STREAMS: usize = 0;
    /// The device of the expression (of its first part).
    fn device_ref(&self) -> &Device;
    /// Number of elements.
    fn length(&self) -> usize;
    /// Fails unless every part has the same length and device (a leaf
    /// has one part).
    fn validate(&self) -> Result<()> {
        Ok(())
    }
    /// Writes the typedefs of this subtree and returns this node's number
    /// (its type is `cuprim_e<number>`); `next` numbers the nodes.
    fn write_type<W: SpecWriter>(&self, w: &mut W, next: &mut u32) -> u32;
    /// Writes this node's fields, in its struct's order.
    fn write_args(&self, a: &mut ArgWriter);
    /// Host backend: fails when a permutation has an index out of range.
    fn host_validate(&self) -> Result<()> {
        Ok(())
    }
    /// Host backend: element `i` (only after `host_validate`).
    fn at(&self, i: usize) -> Self::Item;
    /// Elements `start .. start + len` (in range: the caller checked).
    fn sliced(&self, start: usize, len: usize) -> Self;
    /// The source length of the first permutation below (for messages).
    fn first_bound(&self) -> Option<usize> {
        None
    }
    /// Host backend: the elements themselves when the node is a buffer
    /// (read in place, no copy).
    fn host_slice(&self) -> Option<&[Self::Item]> {
        None
    }
    /// The device address of a plain buffer's first element (0 on the
    /// host); None for any other node.
    fn buffer_addr(&self) -> Option<u64> {
        None
    }
}

/// The CUDA device of a node, if it is on one.
pub(crate) fn cuda_of<N: Node>(n: &N) -> Option<&CudaDevice> {
    n.device_ref().cuda_ref()
}

/// Elements of a `DeviceVec` or slice, read in place: elements, or points
/// `[F; D]` of `f32` / `f64` coordinates.
pub struct Leaf<'a, T> {
    pub(super) device: &'a Device,
    pub(super) host: &'a [T],
    pub(super) ptr: u64,
    pub(super) len: usize,
}

impl<T> Clone for Leaf<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Leaf<'_, T> {}

impl<T: Element> Node for Leaf<'_, T> {
    type Item = T;
    const WIDEST: usize = std::mem::size_of::<T>();
    const STREAMS: usize = 1;
    const IS_BUF: bool = true;
    fn device_ref(&self) -> &Device {
        self.device
    }
    fn length(&self) -> usize {
        self.len
    }
    fn write_type<W: SpecWriter>(&self, w: &mut W, next: &mut u32) -> u32 {
        let id = bump(next);
        w.piece(id, |id| format!("typedef cuprim_x_buf<{}> cuprim_e{id};", T::CUDA_TYPE));
        id
    }
    fn write_args(&self, a: &mut ArgWriter) {
        a.field(&self.ptr);
    }
    fn at(&self, i: usize) -> T {
        self.host[i]
    }
    fn host_slice(&self) -> Option<&[T]> {
        self.device.is_host().then_some(self.host)
    }
    fn buffer_addr(&self) -> Option<u64> {
        Some(self.ptr)
    }
    fn sliced(&self, start: usize, len: usize) -> Self {
        self.part(start, len)
    }
}

/// A buffer of points (`cuprim_x_arr`): read one point at a time, never in
/// vectors (a point is aligned only as its coordinates), so to the kernels
/// it is no plain buffer (`IS_BUF` false, no `WIDEST`), but it has an
/// address ([`Node::buffer_addr`]) and a host slice.
impl<F: Coord, const D: usize> Node for Leaf<'_, [F; D]> {
    type Item = [F; D];
    const STREAMS: usize = 1;
    fn device_ref(&self) -> &Device {
        self.device
    }
    fn length(&self) -> usize {
        self.len
    }
    fn write_type<W: SpecWriter>(&self, w: &mut W, next: &mut u32) -> u32 {
        let id = bump(next);
        w.piece(id, |id| format!("typedef cuprim_x_arr<{}, {D}> cuprim_e{id};", F::CUDA_TYPE));
        id
    }
    fn write_args(&self, a: &mut ArgWriter) {
        a.field(&self.ptr);
    }
    fn at(&self, i: usize) -> [F; D] {
        self.host[i]
    }
    fn host_slice(&self) -> Option<&[[F; D]]> {
        self.device.is_host().then_some(self.host)
    }
    fn buffer_addr(&self) -> Option<u64> {
        Some(self.ptr)
    }
    fn sliced(&self, start: usize, len: usize) -> Self {
        self.part(start, len)
    }
}

impl<T: Storable> Leaf<'_, T> {
    /// Elements `start .. start + len` (in range: the caller checked).
    fn part(&self, start: usize, len: usize) -> Self {
        Leaf {
            device: self.device,
            host: if self.host.is_empty() {
                self.host
            } else {
                &self.host[start..start + len]
            },
            ptr: if self.ptr == 0 {
                0
            } else {
                self.ptr + (start * std::mem::size_of::<T>()) as u64
            },
            len,
        }
    }
}

fn bump(next: &mut u32) -> u32 {
    let id = *next;
    *next += 1;
    id
}

/// `start + step * i` for `i` in `0..n`, in `T`'s arithmetic (wrapping
/// integers; the index converted to `T` first, as [`Element::cast`]).
#[derive(Clone, Copy)]
pub struct Counting<'a, T> {
    pub(super) device: &'a Device,
    pub(super) start: T,
    pub(super) step: T,
    pub(super) first: u64,
    pub(super) len: usize,
}

impl<T: Arith> Node for Counting<'_, T> {
    type Item = T;
    fn device_ref(&self) -> &Device {
        self.device
    }
    fn length(&self) -> usize {
        self.len
    }
    fn write_type<W: SpecWriter>(&self, w: &mut W, next: &mut u32) -> u32 {
        let id = bump(next);
        w.piece(id, |id| format!("typedef cuprim_x_count<{}> cuprim_e{id};", T::CUDA_TYPE));
        id
    }
    fn write_args(&self, a: &mut ArgWriter) {
        a.field(&self.start);
        a.field(&self.step);
        a.field(&self.first);
    }
    fn at(&self, i: usize) -> T {
        self.start.add(self.step.mul(T::from_scalar(Scalar::U64(self.first + i as u64))))
    }
    fn sliced(&self, start: usize, len: usize) -> Self {
        Counting {
            first: self.first + start as u64,
            len,
            ..*self
        }
    }
}

/// One value `n` times.
#[derive(Clone, Copy)]
pub struct Constant<'a, V> {
    pub(super) device: &'a Device,
    pub(super) value: V,
    pub(super) len: usize,
}

impl<V: Value> Node for Constant<'_, V> {
    type Item = V;
    fn device_ref(&self) -> &Device {
        self.device
    }
    fn length(&self) -> usize {
        self.len
    }
    fn write_type<W: SpecWriter>(&self, w: &mut W, next: &mut u32) -> u32 {
        let id = bump(next);
        w.piece(id, |id| format!("typedef cuprim_x_const<{}> cuprim_e{id};", V::cuda_type()));
        id
    }
    fn write_args(&self, a: &mut ArgWriter) {
        a.field(&self.value);
    }
    fn at(&self, _: usize) -> V {
        self.value
    }
    fn sliced(&self, _: usize, len: usize) -> Self {
        Constant { len, ..*self }
    }
}

/// `f(x)` for each element `x` of an expression, computed where it is read.
#[derive(Clone, Copy)]
pub struct Map<E, F> {
    pub(super) inner: E,
    pub(super) f: F,
}

impl<E: Node, F: UnaryOp<E::Item>> Node for Map<E, F> {
    type Item = F::Output;
    const WIDEST: usize = E::WIDEST;
    const CHECKED: bool = E::CHECKED;
    const STREAMS: usize = E::STREAMS;
    fn device_ref(&self) -> &Device {
        self.inner.device_ref()
    }
    fn length(&self) -> usize {
        self.inner.length()
    }
    fn validate(&self) -> Result<()> {
        self.inner.validate()
    }
    fn write_type<W: SpecWriter>(&self, w: &mut W, next: &mut u32) -> u32 {
        let child = self.inner.write_type(w, next);
        let id = bump(next);
        let op = OpText::<F, E::Item, Unary>::unary(self.f);
        w.piece((child, id, op), |(child, id, op)| {
            format!(
                "struct cuprim_f{id} {{ typedef {out} out; __device__ __forceinline__ static out apply({inp} x) {{ return ({}); }} }};\n\
                 typedef cuprim_x_map<cuprim_e{child}, cuprim_f{id}> cuprim_e{id};",
                UnaryOp::<E::Item>::cuda_expr(&op.op),
                out = <F::Output as Value>::cuda_type(),
                inp = <E::Item as Value>::cuda_type(),
            )
        });
        id
    }
    fn write_args(&self, a: &mut ArgWriter) {
        self.inner.write_args(a);
    }
    fn host_validate(&self) -> Result<()> {
        self.inner.host_validate()
    }
    fn at(&self, i: usize) -> F::Output {
        self.f.apply(self.inner.at(i))
    }
    fn first_bound(&self) -> Option<usize> {
        self.inner.first_bound()
    }
    fn sliced(&self, start: usize, len: usize) -> Self {
        Map {
            inner: self.inner.sliced(start, len),
            f: self.f,
        }
    }
}

/// Fails unless two parts of one expression agree on device and length.
fn agree(op: &'static str, a: &impl Node, b: &impl Node) -> Result<()> {
    crate::algo::same_device(op, a.device_ref(), b.device_ref())?;
    crate::algo::same_len(op, a.length(), b.length())
}

/// `(a[i], b[i])`: two expressions of one length, read together.
#[derive(Clone, Copy)]
pub struct Zip<A, B> {
    pub(super) a: A,
    pub(super) b: B,
}

impl<A: Node, B: Node> Node for Zip<A, B>
where
    A::Item: Element,
    B::Item: Element,
{
    type Item = (A::Item, B::Item);
    const WIDEST: usize = max(A::WIDEST, B::WIDEST);
    const CHECKED: bool = A::CHECKED || B::CHECKED;
    const STREAMS: usize = A::STREAMS + B::STREAMS;
    fn device_ref(&self) -> &Device {
        self.a.device_ref()
    }
    fn length(&self) -> usize {
        self.a.length()
    }
    fn validate(&self) -> Result<()> {
        self.a.validate()?;
        self.b.validate()?;
        agree("zip", &self.a, &self.b)
    }
    fn write_type<W: SpecWriter>(&self, w: &mut W, next: &mut u32) -> u32 {
        let a = self.a.write_type(w, next);
        let b = self.b.write_type(w, next);
        let id = bump(next);
        w.piece((a, b, id), |(a, b, id)| {
            format!("typedef cuprim_x_zip<cuprim_e{a}, cuprim_e{b}> cuprim_e{id};")
        });
        id
    }
    fn write_args(&self, w: &mut ArgWriter) {
        self.a.write_args(w);
        self.b.write_args(w);
    }
    fn host_validate(&self) -> Result<()> {
        self.a.host_validate()?;
        self.b.host_validate()
    }
    fn at(&self, i: usize) -> Self::Item {
        (self.a.at(i), self.b.at(i))
    }
    fn first_bound(&self) -> Option<usize> {
        self.a.first_bound().or(self.b.first_bound())
    }
    fn sliced(&self, start: usize, len: usize) -> Self {
        Zip {
            a: self.a.sliced(start, len),
            b: self.b.sliced(start, len),
        }
    }
}

/// `(a[i], b[i], c[i])`: three expressions of one length, read together.
#[derive(Clone, Copy)]
pub struct Zip3<A, B, C> {
    pub(super) a: A,
    pub(super) b: B,
    pub(super) c: C,
}

impl<A: Node, B: Node, C: Node> Node for Zip3<A, B, C>
where
    A::Item: Element,
    B::Item: Element,
    C::Item: Element,
{
    type Item = (A::Item, B::Item, C::Item);
    const WIDEST: usize = max(max(A::WIDEST, B::WIDEST), C::WIDEST);
    const CHECKED: bool = A::CHECKED || B::CHECKED || C::CHECKED;
    const STREAMS: usize = A::STREAMS + B::STREAMS + C::STREAMS;
    fn device_ref(&self) -> &Device {
        self.a.device_ref()
    }
    fn length(&self) -> usize {
        self.a.length()
    }
    fn validate(&self) -> Result<()> {
        self.a.validate()?;
        self.b.validate()?;
        self.c.validate()?;
        agree("zip3", &self.a, &self.b)?;
        agree("zip3", &self.a, &self.c)
    }
    fn write_type<W: SpecWriter>(&self, w: &mut W, next: &mut u32) -> u32 {
        let a = self.a.write_type(w, next);
        let b = self.b.write_type(w, next);
        let c = self.c.write_type(w, next);
        let id = bump(next);
        w.piece((a, b, c, id), |(a, b, c, id)| {
            format!("typedef cuprim_x_zip3<cuprim_e{a}, cuprim_e{b}, cuprim_e{c}> cuprim_e{id};")
        });
        id
    }
    fn write_args(&self, w: &mut ArgWriter) {
        self.a.write_args(w);
        self.b.write_args(w);
        self.c.write_args(w);
    }
    fn host_validate(&self) -> Result<()> {
        self.a.host_validate()?;
        self.b.host_validate()?;
        self.c.host_validate()
    }
    fn at(&self, i: usize) -> Self::Item {
        (self.a.at(i), self.b.at(i), self.c.at(i))
    }
    fn first_bound(&self) -> Option<usize> {
        self.a.first_bound().or(self.b.first_bound()).or(self.c.first_bound())
    }
    fn sliced(&self, start: usize, len: usize) -> Self {
        Zip3 {
            a: self.a.sliced(start, len),
            b: self.b.sliced(start, len),
            c: self.c.sliced(start, len),
        }
    }
}

const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

/// `src[idx[i]]`: a gathered view, as long as `idx` (a buffer of indices,
/// or any expression of [`IndexElement`]s). Indices are checked: one at or
/// past `src`'s length makes the consuming call fail with
/// [`Error::IndexOutOfBounds`].
#[derive(Clone, Copy)]
pub struct Permute<E, J> {
    pub(super) src: E,
    pub(super) idx: J,
}

impl<E: Node, J: Node> Node for Permute<E, J>
where
    J::Item: IndexElement,
{
    type Item = E::Item;
    const WIDEST: usize = J::WIDEST;
    const CHECKED: bool = true;
    const STREAMS: usize = J::STREAMS + 2;
    fn device_ref(&self) -> &Device {
        self.idx.device_ref()
    }
    fn length(&self) -> usize {
        self.idx.length()
    }
    fn validate(&self) -> Result<()> {
        self.src.validate()?;
        self.idx.validate()?;
        crate::algo::same_device("permute", self.src.device_ref(), self.idx.device_ref())
    }
    fn write_type<W: SpecWriter>(&self, w: &mut W, next: &mut u32) -> u32 {
        let src = self.src.write_type(w, next);
        let idx = self.idx.write_type(w, next);
        let id = bump(next);
        w.piece((src, idx, id), |(src, idx, id)| {
            format!("typedef cuprim_x_perm<cuprim_e{src}, cuprim_e{idx}> cuprim_e{id};")
        });
        id
    }
    fn write_args(&self, a: &mut ArgWriter) {
        self.src.write_args(a);
        self.idx.write_args(a);
        a.field(&(self.src.length() as u64));
        let flag = a.flag;
        a.field(&flag);
    }
    fn host_validate(&self) -> Result<()> {
        use rayon::prelude::*;
        self.src.host_validate()?;
        self.idx.host_validate()?;
        let bound = self.src.length() as u64;
        let bad = match self.idx.host_slice() {
            Some(s) => s.par_iter().any(|&j| j.as_u64() >= bound),
            None => (0..self.idx.length()).into_par_iter().any(|i| self.idx.at(i).as_u64() >= bound),
        };
        if bad {
            return Err(Error::IndexOutOfBounds {
                op: "permute",
                len: self.src.length(),
            });
        }
        Ok(())
    }
    fn at(&self, i: usize) -> E::Item {
        self.src.at(self.idx.at(i).as_u64() as usize)
    }
    fn first_bound(&self) -> Option<usize> {
        self.src.first_bound().or(self.idx.first_bound()).or(Some(self.src.length()))
    }
    fn sliced(&self, start: usize, len: usize) -> Self {
        Permute {
            src: self.src.clone(),
            idx: self.idx.sliced(start, len),
        }
    }
}
