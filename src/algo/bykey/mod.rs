//! Runs of equal consecutive keys: `reduce_by_key`, `unique`,
//! `unique_by_key`, `unique_count` and `run_length_encode`, each one pass
//! over the keys (`kernels/bykey/by_key.cu`; `unique` by copy_if's kernels,
//! `kernels/select/`, with the run heads kept), plus forms that write into
//! caller buffers and leave the number of runs on the device (no host
//! synchronisation, so they can be captured in a CUDA graph).
//!
//! # Runs
//! Element `i > 0` starts a new run when `keys[i] != keys[i - 1]` (the rule
//! of [`scan_by_key`](crate::algo::scan::ScanOps::scan_by_key)): every NaN
//! key is a run of its own, and `-0.0` continues a run of `0.0`. A run's
//! key in the output is its first key. A sorted input's runs are its
//! distinct values, so its `unique` is a set.
//!
//! # Floating point
//! A run's aggregate is folded in order (any [`Monoid`], commutative or
//! not), grouped as a tree within a tile and left to right across tiles
//! (and, from 2^22 elements, across the chunks the input is cut
//! into), so float aggregates can differ from a sequential fold by
//! rounding; with
//! [`Device::set_deterministic`](crate::Device::set_deterministic) on (the
//! default) they are the same bits on every run. The host backend folds
//! each run sequentially.

mod chunks;
pub(crate) mod host;
pub(crate) mod plan;
#[cfg(feature = "bykey-tuning")]
#[doc(hidden)]
pub use chunks::tuning;

use crate::cmp::Comparator;
use crate::device::{CudaDevice, Device, Ptr};
use crate::element::{Element, IndexElement};
use crate::error::{Error, Result};
use crate::expr::node::{cuda_of, Node};
use crate::expr::{host_items, LazyOps, Leaf};
use crate::ops::{Min, Monoid};
use crate::value::Value;
use crate::vec::raw::MemMut;
use crate::vec::{DeviceData, DeviceDataMut, DeviceVec};
use plan::{ByKey, Equivalent, KeyEq, Mode, NotEqual, Unused};

/// Runs of equal consecutive keys. In [`prelude`](crate::prelude).
pub trait ByKeyOps<K: Element>: DeviceData<K> {
    /// One output per run of equal consecutive keys: the run's first key
    /// and the fold of its values with `op`, in order (commutativity is not
    /// needed). `values` must be as long as the keys.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let keys = DeviceVec::from_slice(&dev, &[1u32, 1, 2, 2, 2, 1])?;
    /// let vals = DeviceVec::from_slice(&dev, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let (k, v) = keys.reduce_by_key(&vals, Add)?;
    /// assert_eq!(k.to_vec()?, vec![1, 2, 1]);
    /// assert_eq!(v.to_vec()?, vec![3.0, 12.0, 6.0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce_by_key<V: Element, Op: Monoid<V>>(&self, values: &impl DeviceData<V>, op: Op) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        reduce_of(&self.lazy(), &values.lazy(), op, NotEqual, "reduce_by_key")
    }

    /// [`reduce_by_key`](ByKeyOps::reduce_by_key) with keys equal when
    /// neither comes before the other under `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Less;
    /// let dev = Device::default()?;
    /// // Under Less (total order) -0.0 and 0.0 differ and NaNs are equal.
    /// let keys = DeviceVec::from_slice(&dev, &[0.0f32, -0.0, f32::NAN, f32::NAN])?;
    /// let vals = DeviceVec::from_slice(&dev, &[1u32, 2, 3, 4])?;
    /// let (k, v) = keys.reduce_by_key_by(&vals, Add, Less)?;
    /// assert_eq!(k.len(), 3);
    /// assert_eq!(v.to_vec()?, vec![1, 2, 7]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce_by_key_by<V: Element, Op: Monoid<V>, C: Comparator<K>>(
        &self,
        values: &impl DeviceData<V>,
        op: Op,
        cmp: C,
    ) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        reduce_of(&self.lazy(), &values.lazy(), op, Equivalent(cmp), "reduce_by_key_by")
    }

    /// [`reduce_by_key`](ByKeyOps::reduce_by_key) into caller buffers,
    /// with no host synchronisation: the run keys and aggregates go to the
    /// front of `keys_out` and `values_out` (each at least as long as the
    /// keys) and the number of runs to `count[0]`, on the device. Checks
    /// happen before anything is written.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let keys = DeviceVec::from_slice(&dev, &[7i32, 7, 7, 3])?;
    /// let vals = DeviceVec::from_slice(&dev, &[1u64, 2, 3, 4])?;
    /// let (mut k, mut v) = (DeviceVec::<i32>::zeros(&dev, 4)?, DeviceVec::<u64>::zeros(&dev, 4)?);
    /// let mut count = DeviceVec::<u64>::zeros(&dev, 1)?;
    /// keys.reduce_by_key_into(&vals, Add, &mut k, &mut v, &mut count)?;
    /// assert_eq!(count.to_vec()?, vec![2]);
    /// assert_eq!(k.to_vec()?[..2], [7, 3]);
    /// assert_eq!(v.to_vec()?[..2], [6, 4]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce_by_key_into<V: Element, Op: Monoid<V>>(
        &self,
        values: &impl DeviceData<V>,
        op: Op,
        keys_out: &mut impl DeviceDataMut<K>,
        values_out: &mut impl DeviceDataMut<V>,
        count: &mut impl DeviceDataMut<u64>,
    ) -> Result<()> {
        reduce_into_of(&self.lazy(), &values.lazy(), op, keys_out, values_out, count)
    }

    /// The first key of each run, in order (a sorted input's distinct values).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1u8, 1, 4, 4, 4, 2, 1, 1])?;
    /// assert_eq!(v.unique()?.to_vec()?, vec![1, 4, 2, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn unique(&self) -> Result<DeviceVec<K>> {
        unique_of(&self.lazy())
    }

    /// The number of runs (of distinct values, for a sorted input).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[2.0f64, 2.0, f64::NAN, f64::NAN, -0.0, 0.0])?;
    /// assert_eq!(v.unique_count()?, 4); // 2.0, NaN, NaN, 0.0
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn unique_count(&self) -> Result<usize> {
        unique_count_of(&self.lazy())
    }

    /// The first key and the first value of each run. `values` must be as
    /// long as the keys.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let keys = DeviceVec::from_slice(&dev, &[5u32, 5, 6, 5])?;
    /// let vals = DeviceVec::from_slice(&dev, &[10i8, 11, 12, 13])?;
    /// let (k, v) = keys.unique_by_key(&vals)?;
    /// assert_eq!((k.to_vec()?, v.to_vec()?), (vec![5, 6, 5], vec![10, 12, 13]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn unique_by_key<V: Element>(&self, values: &impl DeviceData<V>) -> Result<(DeviceVec<K>, DeviceVec<V>)> {
        unique_by_key_of(&self.lazy(), &values.lazy())
    }

    /// [`unique`](ByKeyOps::unique) into `out` (at least as long as the
    /// keys), the number of runs to `count[0]`, on the device, with no host
    /// synchronisation. Checks happen before anything is written.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[3u64, 3, 1, 1, 3])?;
    /// let mut out = DeviceVec::<u64>::zeros(&dev, 5)?;
    /// let mut count = DeviceVec::<u64>::zeros(&dev, 1)?;
    /// v.unique_into(&mut out, &mut count)?;
    /// assert_eq!(count.to_vec()?, vec![3]);
    /// assert_eq!(out.to_vec()?[..3], [3, 1, 3]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn unique_into(&self, out: &mut impl DeviceDataMut<K>, count: &mut impl DeviceDataMut<u64>) -> Result<()> {
        unique_into_of(&self.lazy(), out, count)
    }

    /// Run-length encoding: each run's first key and its length (`u32`;
    /// inputs of 2^32 keys or more need
    /// [`run_length_encode_with::<u64>`](ByKeyOps::run_length_encode_with)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[9i32, 9, 9, -1, 9, 9])?;
    /// let (values, lengths) = v.run_length_encode()?;
    /// assert_eq!(values.to_vec()?, vec![9, -1, 9]);
    /// assert_eq!(lengths.to_vec()?, vec![3, 1, 2]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn run_length_encode(&self) -> Result<(DeviceVec<K>, DeviceVec<u32>)> {
        self.run_length_encode_with::<u32>()
    }

    /// [`run_length_encode`](ByKeyOps::run_length_encode) with lengths of
    /// type `C` (`u32` or `u64`).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[0.5f32, 0.5, 0.25])?;
    /// let (values, lengths) = v.run_length_encode_with::<u64>()?;
    /// assert_eq!(values.to_vec()?, vec![0.5, 0.25]);
    /// assert_eq!(lengths.to_vec()?, vec![2u64, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn run_length_encode_with<C: IndexElement>(&self) -> Result<(DeviceVec<K>, DeviceVec<C>)> {
        run_length_encode_of(&self.lazy())
    }

    /// [`run_length_encode`](ByKeyOps::run_length_encode) into caller
    /// buffers (each at least as long as the keys; lengths `u32` or `u64`),
    /// the number of runs to `count[0]`, on the device, with no host
    /// synchronisation. Checks happen before anything is written.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[4u32, 4, 4, 8, 4])?;
    /// let (mut values, mut lengths) = (DeviceVec::<u32>::zeros(&dev, 5)?, DeviceVec::<u32>::zeros(&dev, 5)?);
    /// let mut count = DeviceVec::<u64>::zeros(&dev, 1)?;
    /// v.run_length_encode_into(&mut values, &mut lengths, &mut count)?;
    /// assert_eq!(count.to_vec()?, vec![3]);
    /// assert_eq!((values.to_vec()?[..3].to_vec(), lengths.to_vec()?[..3].to_vec()), (vec![4, 8, 4], vec![3, 1, 1]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn run_length_encode_into<C: IndexElement>(
        &self,
        values_out: &mut impl DeviceDataMut<K>,
        lengths_out: &mut impl DeviceDataMut<C>,
        count: &mut impl DeviceDataMut<u64>,
    ) -> Result<()> {
        run_length_encode_into_of(&self.lazy(), values_out, lengths_out, count)
    }
}

impl<K: Element, D: DeviceData<K> + ?Sized> ByKeyOps<K> for D {}

/// Value outputs of a by-key call in new vectors: one vector, or one per
/// field of a tuple (written unzipped by the kernel, no copy pass).
pub(crate) trait Sink<O: Value>: Sized {
    /// `n` uninitialised slots on `dev`.
    fn alloc(dev: &Device, n: usize) -> Result<Self>;
    /// The device addresses the kernel writes (unused ones null).
    fn ptrs(&mut self, op: &'static str) -> Result<[u64; 3]>;
    /// Keeps the first `n` slots.
    fn truncate(&mut self, n: usize) -> Result<()>;
    /// The host backend's values.
    fn from_host(dev: &Device, v: &[O]) -> Result<Self>;
}

impl<T: Element> Sink<T> for DeviceVec<T> {
    fn alloc(dev: &Device, n: usize) -> Result<Self> {
        DeviceVec::alloc_uninit(dev, n)
    }
    fn ptrs(&mut self, op: &'static str) -> Result<[u64; 3]> {
        Ok([crate::algo::cuda_ptr_mut(self, op)?.raw(), 0, 0])
    }
    fn truncate(&mut self, n: usize) -> Result<()> {
        DeviceVec::truncate(self, n)
    }
    fn from_host(dev: &Device, v: &[T]) -> Result<Self> {
        DeviceVec::from_slice(dev, v)
    }
}

impl<A: Element, B: Element> Sink<(A, B)> for (DeviceVec<A>, DeviceVec<B>) {
    fn alloc(dev: &Device, n: usize) -> Result<Self> {
        Ok((DeviceVec::alloc_uninit(dev, n)?, DeviceVec::alloc_uninit(dev, n)?))
    }
    fn ptrs(&mut self, op: &'static str) -> Result<[u64; 3]> {
        let a = crate::algo::cuda_ptr_mut(&mut self.0, op)?.raw();
        Ok([a, crate::algo::cuda_ptr_mut(&mut self.1, op)?.raw(), 0])
    }
    fn truncate(&mut self, n: usize) -> Result<()> {
        self.0.truncate(n)?;
        self.1.truncate(n)
    }
    fn from_host(dev: &Device, v: &[(A, B)]) -> Result<Self> {
        let (a, b): (Vec<A>, Vec<B>) = v.iter().copied().unzip();
        Ok((DeviceVec::from_slice(dev, &a)?, DeviceVec::from_slice(dev, &b)?))
    }
}

impl<A: Element, B: Element, C: Element> Sink<(A, B, C)> for (DeviceVec<A>, DeviceVec<B>, DeviceVec<C>) {
    fn alloc(dev: &Device, n: usize) -> Result<Self> {
        Ok((
            DeviceVec::alloc_uninit(dev, n)?,
            DeviceVec::alloc_uninit(dev, n)?,
            DeviceVec::alloc_uninit(dev, n)?,
        ))
    }
    fn ptrs(&mut self, op: &'static str) -> Result<[u64; 3]> {
        let a = crate::algo::cuda_ptr_mut(&mut self.0, op)?.raw();
        let b = crate::algo::cuda_ptr_mut(&mut self.1, op)?.raw();
        Ok([a, b, crate::algo::cuda_ptr_mut(&mut self.2, op)?.raw()])
    }
    fn truncate(&mut self, n: usize) -> Result<()> {
        self.0.truncate(n)?;
        self.1.truncate(n)?;
        self.2.truncate(n)
    }
    fn from_host(dev: &Device, v: &[(A, B, C)]) -> Result<Self> {
        let a: Vec<A> = v.iter().map(|x| x.0).collect();
        let b: Vec<B> = v.iter().map(|x| x.1).collect();
        let c: Vec<C> = v.iter().map(|x| x.2).collect();
        Ok((
            DeviceVec::from_slice(dev, &a)?,
            DeviceVec::from_slice(dev, &b)?,
            DeviceVec::from_slice(dev, &c)?,
        ))
    }
}

/// Keys (and values) checked: each expression valid, the values on the
/// keys' device and as many.
fn check_values<KE: Node, VE: Node>(op: &'static str, keys: &KE, values: &VE) -> Result<()> {
    keys.validate()?;
    values.validate()?;
    crate::algo::same_device(op, keys.device_ref(), values.device_ref())?;
    crate::algo::same_len(op, keys.length(), values.length())
}

/// The host backend's keys and the index of every run's first key.
fn host_heads<KE: Node, E: KeyEq<KE::Item>>(keys: &KE, eq: E) -> Result<(std::borrow::Cow<'_, [KE::Item]>, Vec<usize>)>
where
    KE::Item: Element,
{
    let k = host_items(keys)?;
    let heads = host::heads(&k, |a, b| eq.differ(a, b));
    Ok((k, heads))
}

/// Values of a reduction on `dev`: deterministic look-back where a field is a float.
fn deterministic<V: Value>(dev: &CudaDevice) -> bool {
    V::HAS_FLOAT && dev.is_deterministic()
}

/// reduce_by_key of key and value expressions (buffers the simplest) into
/// new vectors: `S` one vector of values, or one per field of a tuple.
pub(crate) fn reduce_of<KE: Node, VE: Node, Op: Monoid<VE::Item>, E: KeyEq<KE::Item>, S: Sink<VE::Item>>(
    keys: &KE,
    values: &VE,
    op: Op,
    eq: E,
    name: &'static str,
) -> Result<(DeviceVec<KE::Item>, S)>
where
    KE::Item: Element,
{
    check_values(name, keys, values)?;
    let d = keys.device_ref();
    match cuda_of(keys) {
        None => {
            let (k, heads) = host_heads(keys, eq)?;
            let v = host_items(values)?;
            let sums = host::reduce_runs(&v, &heads, |a, b| op.apply(a, b));
            Ok((DeviceVec::from_slice(d, &host::at_heads(&k, &heads))?, S::from_host(d, &sums)?))
        }
        Some(dev) => {
            let n = keys.length();
            let mut ko = DeviceVec::<KE::Item>::alloc_uninit(d, n)?;
            let mut vo = S::alloc(d, n)?;
            let kp = crate::algo::cuda_ptr_mut(&mut ko, name)?;
            let det = deterministic::<VE::Item>(dev);
            let runs = reduce_on(dev, keys, values, &op, eq, det, kp, vo.ptrs(name)?, None)?;
            let runs = runs.unwrap_or(0) as usize;
            ko.truncate(runs)?;
            vo.truncate(runs)?;
            Ok((ko, vo))
        }
    }
}

/// How reduce_by_key runs.
enum ReducePath {
    /// `kernels/bykey/by_key.cu` in one pass.
    Tiles,
    /// `kernels/bykey/by_key.cu` in two ([`ByKey::in_two_passes`]).
    TwoPasses,
    /// `kernels/bykey/reduce_chunks.cu`.
    Chunks,
}

/// reduce_by_key's path for `n` keys `K` and values `V` on `dev`: two
/// passes where L2 holds the input between them ([`plan::two_passes_pay`]),
/// else the chunks for long inputs of values of one field (tuples, written
/// unzipped, keep the tile kernel) of at most 8 bytes, else one pass.
fn reduce_path<K: Element, V: Value>(dev: &CudaDevice, n: usize) -> ReducePath {
    let chunked = V::FIELDS == 1 && V::C_SIZE <= 8 && chunks::reduce_by_chunks(n);
    #[allow(unused_mut)]
    let mut two = plan::two_passes_pay(dev.l2_bytes(), n, std::mem::size_of::<K>(), V::C_SIZE);
    #[cfg(feature = "bykey-tuning")]
    if let Some(force) = tuning::get().two_pass {
        two = force;
    }
    match (two, chunked) {
        (true, _) => ReducePath::TwoPasses,
        (false, true) => ReducePath::Chunks,
        (false, false) => ReducePath::Tiles,
    }
}

/// reduce_by_key on CUDA by [`reduce_path`]'s kernel: the run keys to `kp`, the
/// values to `vo` (one array, or one per tuple field), the number of runs to
/// `count`, or, without one, read back and returned.
#[allow(clippy::too_many_arguments)]
fn reduce_on<KE: Node, VE: Node, Op: Monoid<VE::Item>, E: KeyEq<KE::Item>>(
    dev: &CudaDevice,
    keys: &KE,
    values: &VE,
    op: &Op,
    eq: E,
    det: bool,
    kp: Ptr<KE::Item>,
    vo: [u64; 3],
    count: Option<Ptr<u64>>,
) -> Result<Option<u64>>
where
    KE::Item: Element,
{
    let n = keys.length();
    let plan = || ByKey::<KE, VE, VE::Item, Op, E>::new(dev.arch(), Mode::Reduce, keys, values, op, eq, n, det);
    match reduce_path::<KE::Item, VE::Item>(dev, n) {
        ReducePath::Chunks => chunks::ReduceChunks::<KE, VE, VE::Item, Op, E>::new(keys, values, op, eq, false, n, det).run(
            dev,
            kp,
            Ptr::from_raw(vo[0]),
            count,
        ),
        ReducePath::TwoPasses => plan().in_two_passes().run(dev, kp, vo, count),
        ReducePath::Tiles => plan().run(dev, kp, vo, count),
    }
}

/// reduce_by_key_into of key and value expressions.
pub(crate) fn reduce_into_of<KE: Node, VE: Node, Op: Monoid<VE::Item>>(
    keys: &KE,
    values: &VE,
    op: Op,
    keys_out: &mut (impl DeviceDataMut<KE::Item> + ?Sized),
    values_out: &mut (impl DeviceDataMut<VE::Item> + ?Sized),
    count: &mut (impl DeviceDataMut<u64> + ?Sized),
) -> Result<()>
where
    KE::Item: Element,
    VE::Item: Element,
{
    const OP: &str = "reduce_by_key_into";
    check_values(OP, keys, values)?;
    check_out(OP, keys, keys_out.device(), keys_out.len())?;
    check_out(OP, keys, values_out.device(), values_out.len())?;
    check_count(OP, keys, count.device(), count.len())?;
    match (cuda_of(keys), keys_out.mem_mut(), values_out.mem_mut(), count.mem_mut()) {
        (None, MemMut::Host(ko), MemMut::Host(vo), MemMut::Host(c)) => {
            let (k, heads) = host_heads(keys, NotEqual)?;
            let v = host_items(values)?;
            let sums = host::reduce_runs(&v, &heads, |a, b| op.apply(a, b));
            write_host(ko, &host::at_heads(&k, &heads));
            write_host(vo, &sums);
            c[0] = heads.len() as u64;
            Ok(())
        }
        (Some(dev), ko, vo, c) => {
            let (ko, vo, c) = (out_ptr(OP, ko)?, out_ptr(OP, vo)?, out_ptr(OP, c)?);
            let det = deterministic::<VE::Item>(dev);
            reduce_on(dev, keys, values, &op, NotEqual, det, ko, [vo.raw(), 0, 0], Some(c)).map(|_| ())
        }
        _ => Err(Error::DeviceMismatch { op: OP }),
    }
}

/// The plan of a mode that reads no values (`Min` stands in for the unused monoid).
fn keys_plan<'a, KE: Node>(
    dev: &CudaDevice,
    mode: Mode,
    keys: &'a KE,
    none: &'a Leaf<'static, KE::Item>,
) -> ByKey<'a, KE, Leaf<'static, KE::Item>, KE::Item, Min, NotEqual>
where
    KE::Item: Element,
{
    ByKey::new(dev.arch(), mode, keys, none, &Min, NotEqual, keys.length(), false)
}

/// unique of a key expression.
pub(crate) fn unique_of<KE: Node>(keys: &KE) -> Result<DeviceVec<KE::Item>>
where
    KE::Item: Element,
{
    keys.validate()?;
    let Some(dev) = cuda_of(keys) else {
        let (k, heads) = host_heads(keys, NotEqual)?;
        return DeviceVec::from_slice(keys.device_ref(), &host::at_heads(&k, &heads));
    };
    let mut out = DeviceVec::<KE::Item>::alloc_uninit(keys.device_ref(), keys.length())?;
    let o = crate::algo::cuda_ptr_mut(&mut out, "unique")?;
    let runs = unique_heads(dev, keys, o, None)?;
    out.truncate(runs.unwrap_or(0) as usize)?;
    Ok(out)
}

/// Writes unique's heads to `out` and their number to `count_out`, or
/// with none reads it back and returns it.
fn unique_heads<KE: Node>(dev: &CudaDevice, keys: &KE, out: Ptr<KE::Item>, count_out: Option<Ptr<u64>>) -> Result<Option<u64>>
where
    KE::Item: Element,
{
    let plan = crate::algo::select::plan::Select::unique(dev.arch(), keys);
    Ok(plan.launch(dev, out, Ptr::null(), count_out)?.map(|n| n as u64))
}

/// unique_count of a key expression.
pub(crate) fn unique_count_of<KE: Node>(keys: &KE) -> Result<usize>
where
    KE::Item: Element,
{
    keys.validate()?;
    let Some(dev) = cuda_of(keys) else {
        return Ok(host_heads(keys, NotEqual)?.1.len());
    };
    let pieces = chunks::CountChunks::new(keys);
    let runs = if pieces.takes() {
        Some(pieces.run(dev)?)
    } else {
        let none = Leaf::type_only();
        keys_plan(dev, Mode::Count, keys, &none).run(dev, Ptr::null(), [0; 3], None)?
    };
    Ok(runs.unwrap_or(0) as usize)
}

/// unique_into of a key expression.
pub(crate) fn unique_into_of<KE: Node>(
    keys: &KE,
    out: &mut (impl DeviceDataMut<KE::Item> + ?Sized),
    count: &mut (impl DeviceDataMut<u64> + ?Sized),
) -> Result<()>
where
    KE::Item: Element,
{
    const OP: &str = "unique_into";
    keys.validate()?;
    check_out(OP, keys, out.device(), out.len())?;
    check_count(OP, keys, count.device(), count.len())?;
    match (cuda_of(keys), out.mem_mut(), count.mem_mut()) {
        (None, MemMut::Host(o), MemMut::Host(c)) => {
            let (k, heads) = host_heads(keys, NotEqual)?;
            write_host(o, &host::at_heads(&k, &heads));
            c[0] = heads.len() as u64;
            Ok(())
        }
        (Some(dev), o, c) => {
            let (o, c) = (out_ptr(OP, o)?, out_ptr(OP, c)?);
            unique_heads(dev, keys, o, Some(c)).map(|_| ())
        }
        _ => Err(Error::DeviceMismatch { op: OP }),
    }
}

/// unique_by_key of key and value expressions: `S` one vector of values,
/// or one per field of a tuple.
pub(crate) fn unique_by_key_of<KE: Node, VE: Node, S: Sink<VE::Item>>(keys: &KE, values: &VE) -> Result<(DeviceVec<KE::Item>, S)>
where
    KE::Item: Element,
{
    const OP: &str = "unique_by_key";
    check_values(OP, keys, values)?;
    let d = keys.device_ref();
    let Some(dev) = cuda_of(keys) else {
        let (k, heads) = host_heads(keys, NotEqual)?;
        let v = host_items(values)?;
        return Ok((
            DeviceVec::from_slice(d, &host::at_heads(&k, &heads))?,
            S::from_host(d, &host::at_heads(&v, &heads))?,
        ));
    };
    let n = keys.length();
    let mut ko = DeviceVec::<KE::Item>::alloc_uninit(d, n)?;
    let mut vo = S::alloc(d, n)?;
    let kp = crate::algo::cuda_ptr_mut(&mut ko, OP)?;
    let plan = ByKey::<KE, VE, VE::Item, Unused, NotEqual>::new(dev.arch(), Mode::UniqueByKey, keys, values, &Unused, NotEqual, n, false);
    let runs = plan.run(dev, kp, vo.ptrs(OP)?, None)?.unwrap_or(0) as usize;
    ko.truncate(runs)?;
    vo.truncate(runs)?;
    Ok((ko, vo))
}

/// run_length_encode_with of a key expression.
pub(crate) fn run_length_encode_of<KE: Node, C: IndexElement>(keys: &KE) -> Result<(DeviceVec<KE::Item>, DeviceVec<C>)>
where
    KE::Item: Element,
{
    const OP: &str = "run_length_encode";
    keys.validate()?;
    let n = keys.length();
    if n as u64 > C::highest().as_u64() {
        return Err(Error::InvalidArgument(format!(
            "{OP} of {n} keys needs u64 lengths, not {} (use run_length_encode_with::<u64>())",
            C::NAME
        )));
    }
    let d = keys.device_ref();
    let Some(dev) = cuda_of(keys) else {
        let (k, heads) = host_heads(keys, NotEqual)?;
        let lengths: Vec<C> = host::lengths(&heads, n)
            .into_iter()
            .map(|l| C::from_scalar(crate::Scalar::U64(l)))
            .collect();
        return Ok((
            DeviceVec::from_slice(d, &host::at_heads(&k, &heads))?,
            DeviceVec::from_slice(d, &lengths)?,
        ));
    };
    let mut ko = DeviceVec::<KE::Item>::alloc_uninit(d, n)?;
    let mut lo = DeviceVec::<C>::alloc_uninit(d, n)?;
    let (kp, lp) = (crate::algo::cuda_ptr_mut(&mut ko, OP)?, crate::algo::cuda_ptr_mut(&mut lo, OP)?);
    let runs = run_lengths(dev, keys, kp, lp, None)?.unwrap_or(0) as usize;
    ko.truncate(runs)?;
    lo.truncate(runs)?;
    Ok((ko, lo))
}

/// Fails unless `n` keys' run lengths fit in `C`.
fn check_lengths<C: IndexElement>(op: &'static str, n: usize) -> Result<()> {
    if n as u64 > C::highest().as_u64() {
        return Err(Error::InvalidArgument(format!(
            "{op} of {n} keys needs u64 lengths, not {} (use u64 lengths)",
            C::NAME
        )));
    }
    Ok(())
}

/// The run-length kernel over `keys` into `kp` / `lp`: the run count to
/// `count` on the device, or (without one) returned.
fn run_lengths<KE: Node, C: IndexElement>(
    dev: &CudaDevice,
    keys: &KE,
    kp: Ptr<KE::Item>,
    lp: Ptr<C>,
    count: Option<Ptr<u64>>,
) -> Result<Option<u64>>
where
    KE::Item: Element,
{
    let n = keys.length();
    // The kernels' values: the counts the tiles sum (1 per element), the head positions the chunks carry; u32
    // below 2^32 elements.
    if chunks::lengths_by_chunks(n) {
        return if n as u64 > u32::MAX as u64 {
            let ones = Leaf::<u64>::type_only();
            chunks::ReduceChunks::<KE, _, C, Min, NotEqual>::new(keys, &ones, &Min, NotEqual, true, n, false).run(dev, kp, lp, count)
        } else {
            let ones = Leaf::<u32>::type_only();
            chunks::ReduceChunks::<KE, _, C, Min, NotEqual>::new(keys, &ones, &Min, NotEqual, true, n, false).run(dev, kp, lp, count)
        };
    }
    if n as u64 > u32::MAX as u64 {
        let ones = Leaf::<u64>::type_only();
        ByKey::<KE, _, C, Min, NotEqual>::new(dev.arch(), Mode::Lengths, keys, &ones, &Min, NotEqual, n, false).run(
            dev,
            kp,
            [lp.raw(), 0, 0],
            count,
        )
    } else {
        let ones = Leaf::<u32>::type_only();
        ByKey::<KE, _, C, Min, NotEqual>::new(dev.arch(), Mode::Lengths, keys, &ones, &Min, NotEqual, n, false).run(
            dev,
            kp,
            [lp.raw(), 0, 0],
            count,
        )
    }
}

/// run_length_encode_into of a key expression.
pub(crate) fn run_length_encode_into_of<KE: Node, C: IndexElement>(
    keys: &KE,
    values_out: &mut (impl DeviceDataMut<KE::Item> + ?Sized),
    lengths_out: &mut (impl DeviceDataMut<C> + ?Sized),
    count: &mut (impl DeviceDataMut<u64> + ?Sized),
) -> Result<()>
where
    KE::Item: Element,
{
    const OP: &str = "run_length_encode_into";
    keys.validate()?;
    check_lengths::<C>(OP, keys.length())?;
    check_out(OP, keys, values_out.device(), values_out.len())?;
    check_out(OP, keys, lengths_out.device(), lengths_out.len())?;
    check_count(OP, keys, count.device(), count.len())?;
    match (cuda_of(keys), values_out.mem_mut(), lengths_out.mem_mut(), count.mem_mut()) {
        (None, MemMut::Host(ko), MemMut::Host(lo), MemMut::Host(c)) => {
            let (k, heads) = host_heads(keys, NotEqual)?;
            let lengths: Vec<C> = host::lengths(&heads, keys.length())
                .into_iter()
                .map(|l| C::from_scalar(crate::Scalar::U64(l)))
                .collect();
            write_host(ko, &host::at_heads(&k, &heads));
            write_host(lo, &lengths);
            c[0] = heads.len() as u64;
            Ok(())
        }
        (Some(dev), ko, lo, c) => {
            let (ko, lo, c) = (out_ptr(OP, ko)?, out_ptr(OP, lo)?, out_ptr(OP, c)?);
            run_lengths(dev, keys, ko, lo, Some(c)).map(|_| ())
        }
        _ => Err(Error::DeviceMismatch { op: OP }),
    }
}

/// An output of an `_into` form: on the keys' device, with room for one run per key.
fn check_out<KE: Node>(op: &'static str, keys: &KE, dev: &crate::Device, len: usize) -> Result<()> {
    crate::algo::same_device(op, keys.device_ref(), dev)?;
    if len < keys.length() {
        return Err(Error::InvalidArgument(format!(
            "{op}: an output of {len} elements is shorter than the {} keys (it needs room for one run per key)",
            keys.length()
        )));
    }
    Ok(())
}

/// The count of an `_into` form: on the keys' device, at least one element.
fn check_count<KE: Node>(op: &'static str, keys: &KE, dev: &crate::Device, len: usize) -> Result<()> {
    crate::algo::same_device(op, keys.device_ref(), dev)?;
    if len == 0 {
        return Err(Error::InvalidArgument(format!(
            "{op}: the count output is empty (it needs one u64)"
        )));
    }
    Ok(())
}

/// `src` to the front of `dst` (checked long enough before).
fn write_host<T: Copy>(dst: &mut [T], src: &[T]) {
    dst[..src.len()].copy_from_slice(src);
}

/// The device address of an `_into` output.
fn out_ptr<T>(op: &'static str, m: MemMut<'_, T>) -> Result<Ptr<T>> {
    match m {
        MemMut::Cuda { ptr, .. } => Ok(Ptr::from_raw(ptr)),
        MemMut::Host(_) => Err(Error::DeviceMismatch { op }),
    }
}
