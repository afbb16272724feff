//! The primitives that consume expressions ([`ExprOps`]), and the two
//! pieces every consuming plan shares: writing the input's type and
//! launching with its bytes (bounds-checked when it permutes).

use super::args::{ArgWriter, ExprArgs};
use super::node::{cuda_of, Node};
use super::{host_items, host_values, Expr};
use crate::algo::collective::plan::{RacePlan, VotePlan};
use crate::algo::histogram::{Bins, Histogram};
use crate::algo::reduce::plan::{self as rd, Count, Extreme, FindPlan, MapReduce};
use crate::algo::scan::plan::Scan;
use crate::algo::search::Mode;
use crate::algo::select::plan::Select;
use crate::algo::transform::plan::Collect;
use crate::cmp::Less;
use crate::device::{CudaDevice, Ptr};
use crate::element::{Element, Storable};
use crate::error::{Error, Result};
use crate::jit::SpecWriter;
use crate::ops::{ranks_before, Add, Arith, Commutative, Identity, Max, Min, Monoid};
use crate::pred::{Not, Predicate};
use crate::value::Value;
use crate::vec::raw::MemMut;
use crate::vec::raw::SealedMut;
use crate::vec::DeviceVec;

/// `typedef <the input's type> In; typedef In::item T;`, after the
/// typedefs of its nodes.
pub(crate) fn write_input<E: Node, W: SpecWriter>(input: &E, w: &mut W) {
    let root = input.write_type(w, &mut 0);
    w.piece(root, |root| format!("typedef cuprim_e{root} In;\ntypedef In::item T;"));
}

/// Two inputs of one kernel: `typedef <first> In0; typedef In0::item
/// <item0>;` and the same for the second (`In1`), their nodes numbered
/// apart.
pub(crate) fn write_inputs<A: Node, B: Node, W: SpecWriter>(a: &A, item0: &'static str, b: &B, item1: &'static str, w: &mut W) {
    use crate::jit::spec::Static;
    let mut next = 0;
    let ra = a.write_type(w, &mut next);
    let rb = b.write_type(w, &mut next);
    w.piece((ra, rb, Static(item0), Static(item1)), |(ra, rb, i0, i1)| {
        format!(
            "typedef cuprim_e{ra} In0;\ntypedef In0::item {};\ntypedef cuprim_e{rb} In1;\ntypedef In1::item {};",
            i0.0, i1.0
        )
    });
}

/// Keys and values of two sides of one kernel (the merge and the set
/// operations by key): [`write_inputs`]' `In0` and `In1` of items
/// `K`, then `typedef <a's values> Vx0; typedef <b's values> Vx1;` (items
/// `V`, typedef'd by the caller), all nodes numbered apart.
pub(crate) fn write_keyed_inputs<A: Node, B: Node, VA: Node, VB: Node, W: SpecWriter>(a: &A, b: &B, va: &VA, vb: &VB, w: &mut W) {
    let mut next = 0;
    let ra = a.write_type(w, &mut next);
    let rb = b.write_type(w, &mut next);
    let rva = va.write_type(w, &mut next);
    let rvb = vb.write_type(w, &mut next);
    w.piece((ra, rb, rva, rvb), |(ra, rb, rva, rvb)| {
        format!(
            "typedef cuprim_e{ra} In0;\ntypedef In0::item K;\ntypedef cuprim_e{rb} In1;\ntypedef In1::item K;\n\
             typedef cuprim_e{rva} Vx0;\ntypedef cuprim_e{rvb} Vx1;"
        )
    });
}

/// [`launch_checked`] for a kernel of four inputs (keys and values of two
/// sides): all get the error flag when any permutes.
pub(crate) fn launch_checked4<A: Node, B: Node, C: Node, D: Node>(
    dev: &CudaDevice,
    (a, b, c, d): (&A, &B, &C, &D),
    launch: impl FnOnce([ExprArgs; 4]) -> Result<()>,
) -> Result<()> {
    let args = |flag: u64| -> Result<[ExprArgs; 4]> {
        let mut w = [(); 4].map(|()| ArgWriter::new(flag));
        a.write_args(&mut w[0]);
        b.write_args(&mut w[1]);
        c.write_args(&mut w[2]);
        d.write_args(&mut w[3]);
        let [w0, w1, w2, w3] = w;
        Ok([w0.finish()?, w1.finish()?, w2.finish()?, w3.finish()?])
    };
    if !(A::CHECKED || B::CHECKED || C::CHECKED || D::CHECKED) {
        return launch(args(0)?);
    }
    let ((), bad) = dev.checked(|flag| launch(args(flag.raw())?))?;
    if bad {
        let bound = a.first_bound().or(b.first_bound()).or(c.first_bound()).or(d.first_bound());
        return Err(Error::IndexOutOfBounds {
            op: "permute",
            len: bound.unwrap_or(0),
        });
    }
    Ok(())
}

/// [`launch_checked`] for a kernel of two inputs: both get the error flag
/// when either permutes.
pub(crate) fn launch_checked2<A: Node, B: Node>(
    dev: &CudaDevice,
    a: &A,
    b: &B,
    launch: impl FnOnce(ExprArgs, ExprArgs) -> Result<()>,
) -> Result<()> {
    let args = |flag: u64| -> Result<(ExprArgs, ExprArgs)> {
        let (mut wa, mut wb) = (ArgWriter::new(flag), ArgWriter::new(flag));
        a.write_args(&mut wa);
        b.write_args(&mut wb);
        Ok((wa.finish()?, wb.finish()?))
    };
    if !A::CHECKED && !B::CHECKED {
        let (x, y) = args(0)?;
        return launch(x, y);
    }
    let ((), bad) = dev.checked(|flag| {
        let (x, y) = args(flag.raw())?;
        launch(x, y)
    })?;
    if bad {
        return Err(Error::IndexOutOfBounds {
            op: "permute",
            len: a.first_bound().or(b.first_bound()).unwrap_or(0),
        });
    }
    Ok(())
}

/// Runs `launch` with the input's kernel parameter. An input that permutes
/// gets the device's error flag and the call waits for the flag: a bad
/// index is an [`Error::IndexOutOfBounds`].
pub(crate) fn launch_checked<E: Node>(dev: &CudaDevice, input: &E, launch: impl FnOnce(ExprArgs) -> Result<()>) -> Result<()> {
    let args = |flag: u64| {
        let mut a = ArgWriter::new(flag);
        input.write_args(&mut a);
        a.finish()
    };
    if !E::CHECKED {
        return launch(args(0)?);
    }
    let ((), bad) = dev.checked(|flag| launch(args(flag.raw())?))?;
    if bad {
        return Err(Error::IndexOutOfBounds {
            op: "permute",
            len: input.first_bound().unwrap_or(0),
        });
    }
    Ok(())
}

/// Validation and the CUDA device of an expression about to be consumed.
fn prepare<E: Node>(e: &E) -> Result<Option<&CudaDevice>> {
    e.validate()?;
    Ok(cuda_of(e))
}

/// Reads the accumulator bytes of a reduction as a value.
fn acc<A: Value>(bytes: &[u8]) -> A {
    A::read_c(bytes)
}

/// The primitives that consume an expression in one kernel. In
/// [`prelude`](crate::prelude); see the [module docs](super).
pub trait ExprOps: Expr {
    /// Folds every element with `op`; the identity when empty. The fold is
    /// grouped as [`ReduceOps::reduce`](crate::algo::reduce::ReduceOps::reduce)
    /// groups a buffer of the same elements, so a fused reduction gives the
    /// same bits as collecting first and reducing.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let x = DeviceVec::from_slice(&dev, &[3.0f32, 1.0, 2.0])?;
    /// let (lo, hi) = zip(&x, &x).reduce(MinMax)?;
    /// assert_eq!((lo, hi), (1.0, 3.0));
    /// # use cuprim::ops::{Associative, BinaryOp, Commutative, Monoid};
    /// # #[derive(Clone, Copy)] struct MinMax;
    /// # impl BinaryOp<(f32, f32)> for MinMax {
    /// #     fn apply(&self, a: (f32, f32), b: (f32, f32)) -> (f32, f32) { (a.0.min(b.0), a.1.max(b.1)) }
    /// #     fn cuda_expr(&self) -> String { "cuprim_t2<float, float>{fminf(a.a0, b.a0), fmaxf(a.a1, b.a1)}".into() }
    /// # }
    /// # impl Associative for MinMax {}
    /// # impl Commutative for MinMax {}
    /// # impl Monoid<(f32, f32)> for MinMax { fn identity(&self) -> (f32, f32) { (f32::INFINITY, f32::NEG_INFINITY) } }
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce<Op: Monoid<Self::Item> + Commutative>(&self, op: Op) -> Result<Self::Item> {
        match prepare(self)? {
            None => {
                let v = host_values(self)?;
                Ok(crate::algo::reduce::host::map_reduce(
                    &v,
                    op.identity(),
                    |x, _| x,
                    |a, b| op.apply(a, b),
                ))
            }
            Some(dev) => {
                let k = MapReduce {
                    arch: dev.arch(),
                    input: self,
                    map: &Identity,
                    op: &op,
                };
                Ok(acc(&rd::to_host(&k, dev)?))
            }
        }
    }

    /// Like [`reduce`](ExprOps::reduce), writing the result to `out[0]` on
    /// the device: no host synchronisation (unless the expression permutes,
    /// whose indices are checked). `out` must not be empty.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let mut out = DeviceVec::<u64>::zeros(&dev, 1)?;
    /// counting(&dev, 1u64, 1, 10).reduce_to(Add, &mut out)?;
    /// assert_eq!(out.to_vec()?, vec![55]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce_to<Op: Monoid<Self::Item> + Commutative>(&self, op: Op, out: &mut impl crate::DeviceDataMut<Self::Item>) -> Result<()>
    where
        Self::Item: Element,
    {
        let dev = prepare(self)?;
        crate::algo::same_device("reduce_to", self.device(), out.device())?;
        if out.is_empty() {
            return Err(Error::InvalidArgument("reduce_to: the output buffer is empty".into()));
        }
        match (dev, out.mem_mut()) {
            (None, MemMut::Host(o)) => o[0] = self.reduce(op)?,
            (Some(dev), MemMut::Cuda { ptr, .. }) => {
                let k = MapReduce {
                    arch: dev.arch(),
                    input: self,
                    map: &Identity,
                    op: &op,
                };
                rd::to_device(&k, dev, Ptr::from_raw(ptr))?
            }
            _ => return Err(Error::DeviceMismatch { op: "reduce_to" }),
        }
        Ok(())
    }

    /// Sum of the elements (wrapping for integers); 0 when empty.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[1.0f64, 2.0, 3.0])?;
    /// let b = DeviceVec::from_slice(&dev, &[4.0f64, 5.0, 6.0])?;
    /// assert_eq!(zip(&a, &b).map(Mul).sum()?, 32.0);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sum(&self) -> Result<Self::Item>
    where
        Self::Item: Arith,
    {
        self.reduce(Add)
    }

    /// The least element, in [`Min`]'s order; `MAX` / `+inf` when empty.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Negate;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[2i32, -7, 5])?;
    /// assert_eq!(v.map(Negate).min()?, -5);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn min(&self) -> Result<Self::Item>
    where
        Self::Item: Element,
    {
        self.reduce(Min)
    }

    /// The greatest element, in [`Max`]'s order; `MIN` / `-inf` when empty.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// assert_eq!(counting(&dev, 10u8, 7, 5).max()?, 38);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn max(&self) -> Result<Self::Item>
    where
        Self::Item: Element,
    {
        self.reduce(Max)
    }

    /// How many elements satisfy `pred`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Gt;
    /// use cuprim::ops::Square;
    /// let dev = Device::default()?;
    /// assert_eq!(counting(&dev, 0i64, 1, 100).map(Square).count(Gt(2500))?, 49);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn count<P: Predicate<Self::Item>>(&self, pred: P) -> Result<usize>
    where
        Self::Item: Element,
    {
        match prepare(self)? {
            None => {
                let v = host_values(self)?;
                Ok(crate::algo::reduce::host::map_reduce(
                    &v,
                    0usize,
                    |x, _| pred.test(x) as usize,
                    |a, b| a + b,
                ))
            }
            Some(dev) => {
                let k = Count {
                    arch: dev.arch(),
                    input: self,
                    pred: &pred,
                };
                Ok(u64::read_c(&rd::to_host(&k, dev)?) as usize)
            }
        }
    }

    /// The lowest index whose element satisfies `pred`, as
    /// [`ReduceOps::find_first`](crate::algo::reduce::ReduceOps::find_first)
    /// (the same kernel, reading the expression in place): stops reading
    /// once the answer is known, unless the expression permutes, which is
    /// read in full so that every index is checked (as on the host).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// use cuprim::pred::Gt;
    /// let dev = Device::default()?;
    /// assert_eq!(counting(&dev, 0i32, 1, 100).map(Square).find_first(Gt(50))?, Some(8));
    /// assert_eq!(counting(&dev, 0i32, 1, 5).map(Square).find_first(Gt(50))?, None);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn find_first<P: Predicate<Self::Item>>(&self, pred: P) -> Result<Option<usize>>
    where
        Self::Item: Element,
    {
        find_first(self, pred)
    }

    /// True if some element satisfies `pred` (false when empty): a
    /// [`find_first`](ExprOps::find_first), with its early exit.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Lt;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[1.0f32, 0.0, 2.0])?;
    /// let b = DeviceVec::from_slice(&dev, &[4.0f32, 0.0, 1.0])?;
    /// assert!(zip(&a, &b).map(Sub).any(Lt(0.0))?);
    /// assert!(!zip(&a, &b).map(Max).any(Lt(0.0))?);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn any<P: Predicate<Self::Item>>(&self, pred: P) -> Result<bool>
    where
        Self::Item: Element,
    {
        Ok(find_first(self, pred)?.is_some())
    }

    /// True if every element satisfies `pred` (true when empty): a
    /// [`find_first`](ExprOps::find_first) of its negation.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Lt;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[30u32, 10, 20])?;
    /// let idx = DeviceVec::from_slice(&dev, &[2u32, 1])?;
    /// assert!(v.permute(&idx).all(Lt(30))?);
    /// assert!(!v.lazy().all(Lt(30))?);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn all<P: Predicate<Self::Item>>(&self, pred: P) -> Result<bool>
    where
        Self::Item: Element,
    {
        Ok(find_first(self, Not(pred))?.is_none())
    }

    /// A packed bitmask of `pred` over the expression, as
    /// [`CollectiveOps::vote`](crate::algo::collective::CollectiveOps::vote):
    /// `self.length().div_ceil(32)` words, bit `i % 32` of word `i / 32` set
    /// iff `pred(self[i])`, the bits past the end zero.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// use cuprim::pred::Gt;
    /// let dev = Device::default()?;
    /// let words = counting(&dev, 0u32, 1, 35).map(Square).vote(Gt(16))?;
    /// assert_eq!(words.to_vec()?, vec![!0b11111, 0b111]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn vote<P: Predicate<Self::Item>>(&self, pred: P) -> Result<DeviceVec<u32>>
    where
        Self::Item: Element,
    {
        vote(self, pred)
    }

    /// Whether no element, exactly one, or several satisfy `pred`, as
    /// [`CollectiveOps::quantify`](crate::algo::collective::CollectiveOps::quantify):
    /// stops reading once a second match is known, unless the expression
    /// permutes (read in full, so every index is checked).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::collective::Quantity;
    /// use cuprim::pred::Eq;
    /// let dev = Device::default()?;
    /// let x = counting(&dev, -3i32, 1, 7);
    /// assert_eq!(x.map(cuprim::ops::Abs).quantify(Eq(3))?, Quantity::Many);
    /// assert_eq!(x.quantify(Eq(3))?, Quantity::One);
    /// assert_eq!(x.quantify(Eq(4))?, Quantity::None);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn quantify<P: Predicate<Self::Item>>(&self, pred: P) -> Result<crate::algo::collective::Quantity>
    where
        Self::Item: Element,
    {
        quantify(self, pred)
    }

    /// The index of *some* element that satisfies `pred` (`None` if none
    /// does), as
    /// [`CollectiveOps::select_one`](crate::algo::collective::CollectiveOps::select_one):
    /// on CUDA the first match any warp reports, which depends on timing
    /// and need not be the lowest (use [`find_first`](ExprOps::find_first)
    /// for that); the host backend returns the lowest. Stops reading as soon
    /// as one is found, unless the expression permutes (read in full, so
    /// every index is checked).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Eq;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[4u8, 9, 4, 9])?;
    /// let i = v.map(cuprim::ops::Negate).select_one(Eq(9u8.wrapping_neg()))?.unwrap();
    /// assert!(i == 1 || i == 3);
    /// assert_eq!(v.lazy().select_one(Eq(5))?, None);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn select_one<P: Predicate<Self::Item>>(&self, pred: P) -> Result<Option<usize>>
    where
        Self::Item: Element,
    {
        select_one(self, pred)
    }

    /// `(index, value)` of the least element, ties to the lowest index, as
    /// [`ReduceOps::min_element`](crate::algo::reduce::ReduceOps::min_element);
    /// `None` when empty.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Abs;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[-4i32, 1, -1, 3])?;
    /// assert_eq!(v.map(Abs).min_element()?, Some((1, 1)));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn min_element(&self) -> Result<Option<(usize, Self::Item)>>
    where
        Self::Item: Element,
    {
        arg_extreme(self, false)
    }

    /// `(index, value)` of the greatest element, ties to the lowest index.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Abs;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[-4i32, 1, 4, 3])?;
    /// assert_eq!(v.map(Abs).max_element()?, Some((0, 4)));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn max_element(&self) -> Result<Option<(usize, Self::Item)>>
    where
        Self::Item: Element,
    {
        arg_extreme(self, true)
    }

    /// [`min_element`](ExprOps::min_element) into `index[0]` and `value[0]`
    /// on the device, as
    /// [`ReduceOps::min_element_to`](crate::algo::reduce::ReduceOps::min_element_to).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Abs;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[-4i32, 2, -1, 3])?;
    /// let (mut index, mut value) = (DeviceVec::<u64>::zeros(&dev, 1)?, DeviceVec::<i32>::zeros(&dev, 1)?);
    /// v.map(Abs).min_element_to(&mut index, &mut value)?;
    /// assert_eq!((index.to_vec()?, value.to_vec()?), (vec![2], vec![1]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn min_element_to(
        &self,
        index: &mut impl crate::vec::DeviceDataMut<u64>,
        value: &mut impl crate::vec::DeviceDataMut<Self::Item>,
    ) -> Result<()>
    where
        Self::Item: Element,
    {
        arg_extreme_to(self, false, index, value)
    }

    /// [`max_element`](ExprOps::max_element) into `index[0]` and `value[0]`
    /// on the device.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Abs;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[-4i32, 2, 4])?;
    /// let (mut index, mut value) = (DeviceVec::<u64>::zeros(&dev, 1)?, DeviceVec::<i32>::zeros(&dev, 1)?);
    /// v.map(Abs).max_element_to(&mut index, &mut value)?;
    /// assert_eq!((index.to_vec()?, value.to_vec()?), (vec![0], vec![4]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn max_element_to(
        &self,
        index: &mut impl crate::vec::DeviceDataMut<u64>,
        value: &mut impl crate::vec::DeviceDataMut<Self::Item>,
    ) -> Result<()>
    where
        Self::Item: Element,
    {
        arg_extreme_to(self, true, index, value)
    }

    /// The elements that satisfy `pred`, in order, in a new vector: stream
    /// compaction of a computed sequence in one pass (as
    /// [`SelectOps::copy_if`](crate::algo::select::SelectOps::copy_if)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// use cuprim::pred::Gt;
    /// let dev = Device::default()?;
    /// let big = counting(&dev, 0u32, 1, 10).map(Square).copy_if(Gt(40))?;
    /// assert_eq!(big.to_vec()?, vec![49, 64, 81]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn copy_if<P: Predicate<Self::Item>>(&self, pred: P) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
    {
        let dev = prepare(self)?;
        let Some(dev) = dev else {
            let v = host_items(self)?;
            return DeviceVec::from_slice(self.device(), &crate::algo::select::host::copy_if(&v, |x| pred.test(x)));
        };
        let mut out = DeviceVec::<Self::Item>::alloc_uninit(self.device(), self.length())?;
        let MemMut::Cuda { ptr, .. } = out.mem_mut() else {
            return Err(Error::DeviceMismatch { op: "copy_if" });
        };
        let kept = Select::new(dev.arch(), self, &pred).run(dev, Ptr::from_raw(ptr), Ptr::null())?;
        out.truncate(kept)?;
        Ok(out)
    }

    /// [`copy_if`](ExprOps::copy_if) into `out` (at least as long as the
    /// expression), the number kept to `count[0]`, on the device, with no
    /// host synchronisation unless the expression permutes (as
    /// [`SelectOps::copy_if_into`](crate::algo::select::SelectOps::copy_if_into)).
    /// After an [`Error::IndexOutOfBounds`] `out` and `count` hold
    /// unspecified values.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::pred::Lt;
    /// let dev = Device::default()?;
    /// let (mut out, mut count) = (DeviceVec::<i64>::zeros(&dev, 6)?, DeviceVec::<u64>::zeros(&dev, 1)?);
    /// counting(&dev, 5i64, -2, 6).copy_if_into(Lt(0), &mut out, &mut count)?;   // 5 3 1 -1 -3 -5
    /// assert_eq!(count.to_vec()?, vec![3]);
    /// assert_eq!(out.to_vec()?[..3], [-1, -3, -5]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn copy_if_into<P: Predicate<Self::Item>>(
        &self,
        pred: P,
        out: &mut impl crate::DeviceDataMut<Self::Item>,
        count: &mut impl crate::DeviceDataMut<u64>,
    ) -> Result<()>
    where
        Self::Item: Element,
    {
        const OP: &str = "copy_if_into";
        let dev = prepare(self)?;
        crate::algo::select::check_into(OP, self.device(), self.length(), out, count)?;
        match (dev, out.mem_mut(), count.mem_mut()) {
            (None, MemMut::Host(o), MemMut::Host(c)) => {
                let kept = crate::algo::select::host::copy_if(&host_items(self)?, |x| pred.test(x));
                o[..kept.len()].copy_from_slice(&kept);
                c[0] = kept.len() as u64;
                Ok(())
            }
            (Some(dev), MemMut::Cuda { ptr: o, .. }, MemMut::Cuda { ptr: c, .. }) => Select::new(dev.arch(), self, &pred)
                .launch(dev, Ptr::from_raw(o), Ptr::null(), Some(Ptr::from_raw(c)))
                .map(|_| ()),
            _ => Err(Error::DeviceMismatch { op: OP }),
        }
    }

    /// A stable partition of the elements into two new vectors: those that
    /// satisfy `pred` and those that do not, each in order, in one pass
    /// with the expression read in place (the select kernel of
    /// [`copy_if`](ExprOps::copy_if) writing its second output). The
    /// in-place [`SelectMutOps::partition`](crate::algo::select::SelectMutOps::partition)
    /// of a buffer gives the two halves concatenated.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// use cuprim::pred::Gt;
    /// let dev = Device::default()?;
    /// let (big, small) = counting(&dev, -3i32, 1, 7).map(Square).partition_copy(Gt(3))?;
    /// assert_eq!(big.to_vec()?, vec![9, 4, 4, 9]);
    /// assert_eq!(small.to_vec()?, vec![1, 0, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn partition_copy<P: Predicate<Self::Item>>(&self, pred: P) -> Result<(DeviceVec<Self::Item>, DeviceVec<Self::Item>)>
    where
        Self::Item: Element,
    {
        let dev = prepare(self)?;
        let Some(dev) = dev else {
            let v = host_items(self)?;
            let (yes, no): (Vec<Self::Item>, Vec<Self::Item>) = {
                use rayon::prelude::*;
                v.par_iter().copied().partition(|&x| pred.test(x))
            };
            return Ok((
                DeviceVec::from_slice(self.device(), &yes)?,
                DeviceVec::from_slice(self.device(), &no)?,
            ));
        };
        let n = self.length();
        let mut yes = DeviceVec::<Self::Item>::alloc_uninit(self.device(), n)?;
        let mut no = DeviceVec::<Self::Item>::alloc_uninit(self.device(), n)?;
        let (selected, rejected) = (
            crate::algo::cuda_ptr_mut(&mut yes, "partition_copy")?,
            crate::algo::cuda_ptr_mut(&mut no, "partition_copy")?,
        );
        let kept = Select::registers(dev.arch(), self, &pred).run(dev, selected, rejected)?;
        yes.truncate(kept)?;
        no.truncate(n - kept)?;
        Ok((yes, no))
    }

    /// For each element (a query), the first position in `sorted` whose
    /// element is not less than it, as `u32`: the queries are computed
    /// where the search kernel reads them, as
    /// [`SearchOps::lower_bound`](crate::algo::search::SearchOps::lower_bound).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let edges = DeviceVec::from_slice(&dev, &[0.0f32, 1.0, 2.0, 4.0])?;
    /// let x = DeviceVec::from_slice(&dev, &[0.5f32, 1.0, 1.5])?;
    /// assert_eq!(x.map(Scale(2.0)).lower_bound_in(&edges)?.to_vec()?, vec![1, 2, 3]);
    /// # use cuprim::ops::UnaryOp;
    /// # #[derive(Clone, Copy)] struct Scale(f32);
    /// # impl UnaryOp<f32> for Scale {
    /// #     type Output = f32;
    /// #     fn apply(&self, x: f32) -> f32 { x * self.0 }
    /// #     fn cuda_expr(&self) -> String { format!("x * {:?}f", self.0) }
    /// # }
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn lower_bound_in(&self, sorted: &(impl crate::DeviceData<Self::Item> + ?Sized)) -> Result<DeviceVec<u32>>
    where
        Self::Item: Element,
    {
        crate::algo::search::search_of(sorted, self, Less, Mode::Lower)
    }

    /// For each element, the first position in `sorted` whose element is
    /// greater than it, as `u32`
    /// ([`SearchOps::upper_bound`](crate::algo::search::SearchOps::upper_bound)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let sorted = DeviceVec::from_slice(&dev, &[10u32, 20, 20, 30])?;
    /// assert_eq!(counting(&dev, 10u32, 10, 4).upper_bound_in(&sorted)?.to_vec()?, vec![1, 3, 4, 4]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn upper_bound_in(&self, sorted: &(impl crate::DeviceData<Self::Item> + ?Sized)) -> Result<DeviceVec<u32>>
    where
        Self::Item: Element,
    {
        crate::algo::search::search_of(sorted, self, Less, Mode::Upper)
    }

    /// For each element, the position of the first equal element of
    /// `sorted`, or [`NOT_FOUND`](crate::algo::search::NOT_FOUND)
    /// ([`SearchOps::binary_search`](crate::algo::search::SearchOps::binary_search)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::search::NOT_FOUND;
    /// let dev = Device::default()?;
    /// let sorted = DeviceVec::from_slice(&dev, &[1u64, 4, 9, 16])?;
    /// let idx = DeviceVec::from_slice(&dev, &[2u32, 0, 3])?;
    /// let q = DeviceVec::from_slice(&dev, &[5u64, 7, 1, 16])?;
    /// assert_eq!(q.permute(&idx).binary_search_in(&sorted)?.to_vec()?, vec![0, NOT_FOUND, 3]);   // 1, 5, 16
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn binary_search_in(&self, sorted: &(impl crate::DeviceData<Self::Item> + ?Sized)) -> Result<DeviceVec<u32>>
    where
        Self::Item: Element,
    {
        crate::algo::search::search_of(sorted, self, Less, Mode::Exact)
    }

    /// The general search: every element's answer under `mode` in `sorted`
    /// (ordered by `cmp`), as indices of type `I`
    /// ([`SearchOps::search_with`](crate::algo::search::SearchOps::search_with)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::search::Mode;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let sorted = DeviceVec::from_slice(&dev, &[9i32, 5, 5, 1])?;
    /// let at = constant(&dev, 5i32, 2).search_in_with::<u64, _>(&sorted, Greater, Mode::Upper)?;
    /// assert_eq!(at.to_vec()?, vec![3, 3]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn search_in_with<I: crate::IndexElement, C: crate::cmp::Comparator<Self::Item>>(
        &self,
        sorted: &(impl crate::DeviceData<Self::Item> + ?Sized),
        cmp: C,
        mode: Mode,
    ) -> Result<DeviceVec<I>>
    where
        Self::Item: Element,
    {
        crate::algo::search::search_of(sorted, self, cmp, mode)
    }

    /// The elements as the sorted side of a search: for each of `queries`
    /// (a buffer or an expression, in any order), the first position whose
    /// element is not less than it, as `u32`
    /// ([`SearchOps::lower_bound`](crate::algo::search::SearchOps::lower_bound)).
    /// The elements must be sorted ascending; they are read where the
    /// search needs them (a small index of every eighth or so is built per
    /// call, as for a buffer), never collected. A permutation among them
    /// has all its indices checked first (one more read of them).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let queries = DeviceVec::from_slice(&dev, &[0u32, 35, 36, 1000])?;
    /// // The squares 0, 1, 4, ..., 81, never stored.
    /// let squares = counting(&dev, 0u32, 1, 10).map(cuprim::ops::Square);
    /// assert_eq!(squares.lower_bound_of(&queries)?.to_vec()?, vec![0, 6, 6, 10]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn lower_bound_of<Q: super::IntoExpr>(&self, queries: Q) -> Result<DeviceVec<u32>>
    where
        Self::Item: Element,
        Q::Expr: Expr<Item = Self::Item>,
    {
        crate::algo::search::search_in(self, &queries.into_expr(), Less, Mode::Lower)
    }

    /// [`lower_bound_of`](ExprOps::lower_bound_of)'s upper bound: the
    /// first position whose element is greater than the query.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let tens = counting(&dev, 0u32, 10, 5);   // 0, 10, 20, 30, 40
    /// assert_eq!(tens.upper_bound_of(constant(&dev, 20u32, 2))?.to_vec()?, vec![3, 3]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn upper_bound_of<Q: super::IntoExpr>(&self, queries: Q) -> Result<DeviceVec<u32>>
    where
        Self::Item: Element,
        Q::Expr: Expr<Item = Self::Item>,
    {
        crate::algo::search::search_in(self, &queries.into_expr(), Less, Mode::Upper)
    }

    /// [`lower_bound_of`](ExprOps::lower_bound_of)'s exact search: the
    /// position of the first equal element, or
    /// [`NOT_FOUND`](crate::algo::search::NOT_FOUND).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::search::NOT_FOUND;
    /// let dev = Device::default()?;
    /// let odd = counting(&dev, 1u64, 2, 50);   // 1, 3, ..., 99
    /// let q = DeviceVec::from_slice(&dev, &[7u64, 8, 99])?;
    /// assert_eq!(odd.binary_search_of(&q)?.to_vec()?, vec![3, NOT_FOUND, 49]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn binary_search_of<Q: super::IntoExpr>(&self, queries: Q) -> Result<DeviceVec<u32>>
    where
        Self::Item: Element,
        Q::Expr: Expr<Item = Self::Item>,
    {
        crate::algo::search::search_in(self, &queries.into_expr(), Less, Mode::Exact)
    }

    /// The general search with the elements as the sorted side (ordered by
    /// `cmp`): every query's answer under `mode`, as indices of type `I`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::search::Mode;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let down = counting(&dev, 90i32, -10, 10);   // 90, 80, ..., 0
    /// let q = DeviceVec::from_slice(&dev, &[85i32, 80, -1])?;
    /// assert_eq!(down.search_of_with::<u64, _, _>(&q, Greater, Mode::Lower)?.to_vec()?, vec![1, 1, 10]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn search_of_with<I: crate::IndexElement, Q: super::IntoExpr, C: crate::cmp::Comparator<Self::Item>>(
        &self,
        queries: Q,
        cmp: C,
        mode: Mode,
    ) -> Result<DeviceVec<I>>
    where
        Self::Item: Element,
        Q::Expr: Expr<Item = Self::Item>,
    {
        crate::algo::search::search_in(self, &queries.into_expr(), cmp, mode)
    }

    /// True when the elements are in ascending order ([`Less`]), as
    /// [`SearchOps::is_sorted`](crate::algo::search::SearchOps::is_sorted).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[3i32, -1, 4, -2])?;
    /// assert!(!v.lazy().is_sorted()?);
    /// assert!(v.map(cuprim::ops::Square).permute(&DeviceVec::from_slice(&dev, &[1u32, 3, 0, 2])?).is_sorted()?);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn is_sorted(&self) -> Result<bool>
    where
        Self::Item: Element,
    {
        Ok(self.is_sorted_until_by(Less)? == self.length())
    }

    /// True when the elements are in order by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// assert!(counting(&dev, 5i8, -1, 9).is_sorted_by(Greater)?);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn is_sorted_by<C: crate::cmp::Comparator<Self::Item>>(&self, cmp: C) -> Result<bool>
    where
        Self::Item: Element,
    {
        Ok(self.is_sorted_until_by(cmp)? == self.length())
    }

    /// The length of the longest prefix in ascending order ([`Less`]), as
    /// [`SearchOps::is_sorted_until`](crate::algo::search::SearchOps::is_sorted_until).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// // 0, 1, 4, 9, 16, 25, 36, 49, 64, 81, 100, 121, 144, 169, 196, 225, 0 (u8 wraps at 256)
    /// assert_eq!(counting(&dev, 0u8, 1, 20).map(cuprim::ops::Square).is_sorted_until()?, 16);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn is_sorted_until(&self) -> Result<usize>
    where
        Self::Item: Element,
    {
        self.is_sorted_until_by(Less)
    }

    /// [`is_sorted_until`](ExprOps::is_sorted_until) by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// assert_eq!(counting(&dev, 3i32, -2, 5).map(cuprim::ops::Abs).is_sorted_until_by(Greater)?, 3);   // 3, 1, 1, 3, 5
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn is_sorted_until_by<C: crate::cmp::Comparator<Self::Item>>(&self, cmp: C) -> Result<usize>
    where
        Self::Item: Element,
    {
        crate::algo::search::sorted_until_of(self, cmp)
    }

    /// The stable merge of the elements (sorted ascending) with `other` (a
    /// buffer or an expression, sorted ascending) into a new vector, as
    /// [`MergeOps::merge`](crate::algo::merge::MergeOps::merge): among
    /// equivalent elements `self`'s come first. Both inputs are read in
    /// place by the merge kernel (no collected copy). Inputs that are not
    /// sorted give an unspecified order of their elements.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// // Multiples of 3 and of 4 below 13, no buffer of either.
    /// let m = counting(&dev, 0u32, 3, 5).merge_with(counting(&dev, 0u32, 4, 4))?;
    /// assert_eq!(m.to_vec()?, vec![0, 0, 3, 4, 6, 8, 9, 12, 12]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn merge_with<B: super::IntoExpr>(&self, other: B) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
    {
        crate::algo::merge::expr::merge_of(self, &other.into_expr(), Less)
    }

    /// [`merge_with`](ExprOps::merge_with) of inputs sorted by `cmp`, as
    /// [`MergeOps::merge_by`](crate::algo::merge::MergeOps::merge_by).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// use cuprim::ops::Negate;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[1i32, 4, 6])?;   // -1, -4, -6: descending
    /// let b = DeviceVec::from_slice(&dev, &[-2i32, -5])?;
    /// let m = a.map(Negate).merge_with_by(&b, Greater)?;
    /// assert_eq!(m.to_vec()?, vec![-1, -2, -4, -5, -6]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn merge_with_by<B: super::IntoExpr, C: crate::cmp::Comparator<Self::Item>>(&self, other: B, cmp: C) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
    {
        crate::algo::merge::expr::merge_of(self, &other.into_expr(), cmp)
    }

    /// The sorted union of the elements (sorted ascending) with `other` (a
    /// buffer or an expression, sorted ascending) into a new vector, as
    /// [`SetOps::set_union`](crate::algo::merge::SetOps::set_union)
    /// (multisets: for each key all of `self`'s copies, then as many of
    /// `other`'s last copies as it has more). Both inputs are read in place
    /// by the set kernel (no collected copy). Inputs that are not sorted
    /// give an unspecified result drawn from the inputs.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// // Multiples of 2 and of 3 below 12, no buffer of either.
    /// let u = counting(&dev, 0u32, 2, 6).set_union_with(counting(&dev, 0u32, 3, 4))?;
    /// assert_eq!(u.to_vec()?, vec![0, 2, 3, 4, 6, 8, 9, 10]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_union_with<B: super::IntoExpr>(&self, other: B) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
    {
        crate::algo::merge::expr::set_of(self, &other.into_expr(), Less, crate::algo::merge::SetOp::Union)
    }

    /// [`set_union_with`](ExprOps::set_union_with) of inputs sorted by
    /// `cmp`, as [`SetOps::set_union_by`](crate::algo::merge::SetOps::set_union_by).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// use cuprim::ops::Negate;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[1i32, 4, 4])?;   // -1, -4, -4: descending
    /// let b = DeviceVec::from_slice(&dev, &[-2i32, -4])?;
    /// assert_eq!(a.map(Negate).set_union_with_by(&b, Greater)?.to_vec()?, vec![-1, -2, -4, -4]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_union_with_by<B: super::IntoExpr, C: crate::cmp::Comparator<Self::Item>>(
        &self,
        other: B,
        cmp: C,
    ) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
    {
        crate::algo::merge::expr::set_of(self, &other.into_expr(), cmp, crate::algo::merge::SetOp::Union)
    }

    /// The sorted intersection of the elements (sorted ascending) with
    /// `other` (a buffer or an expression, sorted ascending), as
    /// [`SetOps::set_intersection`](crate::algo::merge::SetOps::set_intersection):
    /// for each key the first `min(ca, cb)` of `self`'s copies. Both inputs
    /// are read in place.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// let dev = Device::default()?;
    /// let evens = DeviceVec::from_slice(&dev, &[0u32, 2, 4, 16, 36])?;
    /// // The squares below 50 that are in `evens`.
    /// let i = counting(&dev, 0u32, 1, 8).map(Square).set_intersection_with(&evens)?;
    /// assert_eq!(i.to_vec()?, vec![0, 4, 16, 36]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_intersection_with<B: super::IntoExpr>(&self, other: B) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
    {
        crate::algo::merge::expr::set_of(self, &other.into_expr(), Less, crate::algo::merge::SetOp::Intersection)
    }

    /// [`set_intersection_with`](ExprOps::set_intersection_with) of inputs
    /// sorted by `cmp`; the elements kept are `self`'s.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let b = DeviceVec::from_slice(&dev, &[9u64, 6, 6, 5])?;
    /// let i = counting(&dev, 9u64, u64::MAX, 5).set_intersection_with_by(&b, Greater)?;   // 9, 8, 7, 6, 5
    /// assert_eq!(i.to_vec()?, vec![9, 6, 5]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_intersection_with_by<B: super::IntoExpr, C: crate::cmp::Comparator<Self::Item>>(
        &self,
        other: B,
        cmp: C,
    ) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
    {
        crate::algo::merge::expr::set_of(self, &other.into_expr(), cmp, crate::algo::merge::SetOp::Intersection)
    }

    /// The sorted difference `self - other` of the elements (sorted
    /// ascending) and `other` (a buffer or an expression, sorted
    /// ascending), as [`SetOps::set_difference`](crate::algo::merge::SetOps::set_difference):
    /// for each key the last `max(0, ca - cb)` of `self`'s copies. Both
    /// inputs are read in place.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let taken = DeviceVec::from_slice(&dev, &[1u32, 2, 5])?;
    /// // The free slots among 0..8.
    /// assert_eq!(counting(&dev, 0u32, 1, 8).set_difference_with(&taken)?.to_vec()?, vec![0, 3, 4, 6, 7]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_difference_with<B: super::IntoExpr>(&self, other: B) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
    {
        crate::algo::merge::expr::set_of(self, &other.into_expr(), Less, crate::algo::merge::SetOp::Difference)
    }

    /// [`set_difference_with`](ExprOps::set_difference_with) of inputs
    /// sorted by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let b = DeviceVec::from_slice(&dev, &[4i32, 2])?;
    /// assert_eq!(counting(&dev, 5i32, -1, 5).set_difference_with_by(&b, Greater)?.to_vec()?, vec![5, 3, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_difference_with_by<B: super::IntoExpr, C: crate::cmp::Comparator<Self::Item>>(
        &self,
        other: B,
        cmp: C,
    ) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
    {
        crate::algo::merge::expr::set_of(self, &other.into_expr(), cmp, crate::algo::merge::SetOp::Difference)
    }

    /// The sorted symmetric difference of the elements (sorted ascending)
    /// and `other` (a buffer or an expression, sorted ascending), as
    /// [`SetOps::set_symmetric_difference`](crate::algo::merge::SetOps::set_symmetric_difference):
    /// for each key the last `|ca - cb|` copies of the side that has more.
    /// Both inputs are read in place.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let s = counting(&dev, 0u32, 2, 6).set_symmetric_difference_with(counting(&dev, 0u32, 3, 4))?;
    /// assert_eq!(s.to_vec()?, vec![2, 3, 4, 8, 9, 10]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_symmetric_difference_with<B: super::IntoExpr>(&self, other: B) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
    {
        crate::algo::merge::expr::set_of(self, &other.into_expr(), Less, crate::algo::merge::SetOp::SymmetricDifference)
    }

    /// [`set_symmetric_difference_with`](ExprOps::set_symmetric_difference_with)
    /// of inputs sorted by `cmp`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// use cuprim::ops::Negate;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[-3.0f64, -1.0])?;   // 3.0, 1.0: descending
    /// let b = DeviceVec::from_slice(&dev, &[2.0f64, 1.0, 1.0])?;
    /// assert_eq!(a.map(Negate).set_symmetric_difference_with_by(&b, Greater)?.to_vec()?, vec![3.0, 2.0, 1.0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn set_symmetric_difference_with_by<B: super::IntoExpr, C: crate::cmp::Comparator<Self::Item>>(
        &self,
        other: B,
        cmp: C,
    ) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
    {
        crate::algo::merge::expr::set_of(self, &other.into_expr(), cmp, crate::algo::merge::SetOp::SymmetricDifference)
    }

    /// The stable merge by key of the elements (keys sorted ascending) with
    /// `values`, and `other_keys` (sorted ascending) with `other_values`,
    /// into new vectors, as
    /// [`MergeOps::merge_by_key`](crate::algo::merge::MergeOps::merge_by_key):
    /// each value follows its key, and among equivalent keys `self`'s pairs
    /// come first. Each of the other three inputs is a buffer or an
    /// expression, and all four are read in place by the merge kernel (no
    /// collected copy; four plain buffers take `merge_by_key`'s kernels).
    /// Each side's values must be as many as its keys, else
    /// [`Error::LengthMismatch`].
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let kb = DeviceVec::from_slice(&dev, &[2u32, 3])?;
    /// let vb = DeviceVec::from_slice(&dev, &[100u32, 101])?;
    /// // Keys 0, 3, 6 with values 0, 1, 2: no buffer of either.
    /// let (k, v) = counting(&dev, 0u32, 3, 3).merge_by_key_with(counting(&dev, 0u32, 1, 3), &kb, &vb)?;
    /// assert_eq!(k.to_vec()?, vec![0, 2, 3, 3, 6]);
    /// assert_eq!(v.to_vec()?, vec![0, 100, 1, 101, 2]);
    /// let short = counting(&dev, 0u32, 1, 2);
    /// assert!(matches!(
    ///     counting(&dev, 0u32, 3, 3).merge_by_key_with(short, &kb, &vb),
    ///     Err(Error::LengthMismatch { .. })
    /// ));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn merge_by_key_with<V: super::IntoExpr, B: super::IntoExpr, W: super::IntoExpr>(
        &self,
        values: V,
        other_keys: B,
        other_values: W,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
        W::Expr: Expr<Item = <V::Expr as Node>::Item>,
    {
        self.merge_by_key_with_by(values, other_keys, other_values, Less)
    }

    /// [`merge_by_key_with`](ExprOps::merge_by_key_with) of keys sorted by
    /// `cmp`, as [`MergeOps::merge_by_key_by`](crate::algo::merge::MergeOps::merge_by_key_by).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// use cuprim::ops::Negate;
    /// let dev = Device::default()?;
    /// let ka = DeviceVec::from_slice(&dev, &[1i32, 4, 4])?;   // -1, -4, -4: descending
    /// let kb = DeviceVec::from_slice(&dev, &[-2i32, -4])?;
    /// let vb = DeviceVec::from_slice(&dev, &[20u8, 40])?;
    /// let (k, v) = ka.map(Negate).merge_by_key_with_by(counting(&dev, 0u8, 1, 3), &kb, &vb, Greater)?;
    /// assert_eq!(k.to_vec()?, vec![-1, -2, -4, -4, -4]);
    /// assert_eq!(v.to_vec()?, vec![0, 20, 1, 2, 40]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn merge_by_key_with_by<V: super::IntoExpr, B: super::IntoExpr, W: super::IntoExpr, C: crate::cmp::Comparator<Self::Item>>(
        &self,
        values: V,
        other_keys: B,
        other_values: W,
        cmp: C,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
        W::Expr: Expr<Item = <V::Expr as Node>::Item>,
    {
        let (va, vb) = (values.into_expr(), other_values.into_expr());
        crate::algo::merge::expr::merge_by_key_of((self, &va), (&other_keys.into_expr(), &vb), cmp)
    }

    /// [`set_union_with`](ExprOps::set_union_with) of keys with values, as
    /// [`SetOps::set_union_by_key`](crate::algo::merge::SetOps::set_union_by_key):
    /// the elements (keys sorted ascending) with `values`, and `other_keys`
    /// (sorted ascending) with `other_values`; for each key all of `self`'s
    /// pairs, then the other's last pairs where it has more copies. Returns
    /// the keys and values. Each of the other three inputs is a buffer or
    /// an expression, all read in place by the set kernel. Each side's
    /// values must be as many as its keys, else [`Error::LengthMismatch`].
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// // Multiples of 2 and of 3 below 12, each with its place in its sequence.
    /// let (k, v) = counting(&dev, 0u32, 2, 6).set_union_by_key_with(
    ///     counting(&dev, 0u32, 1, 6),
    ///     counting(&dev, 0u32, 3, 4),
    ///     counting(&dev, 0u32, 1, 4),
    /// )?;
    /// assert_eq!(k.to_vec()?, vec![0, 2, 3, 4, 6, 8, 9, 10]);
    /// assert_eq!(v.to_vec()?, vec![0, 1, 1, 2, 3, 4, 3, 5]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn set_union_by_key_with<V: super::IntoExpr, B: super::IntoExpr, W: super::IntoExpr>(
        &self,
        values: V,
        other_keys: B,
        other_values: W,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
        W::Expr: Expr<Item = <V::Expr as Node>::Item>,
    {
        self.set_union_by_key_with_by(values, other_keys, other_values, Less)
    }

    /// [`set_union_by_key_with`](ExprOps::set_union_by_key_with) of keys
    /// sorted by `cmp`, as [`SetOps::set_union_by_key_by`](crate::algo::merge::SetOps::set_union_by_key_by).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let kb = DeviceVec::from_slice(&dev, &[5i64, 4, 4])?;
    /// let vb = DeviceVec::from_slice(&dev, &[2u32, 3, 4])?;
    /// // Keys 9, 4 (descending) with values 0, 1.
    /// let (k, v) = counting(&dev, 9i64, -5, 2).set_union_by_key_with_by(counting(&dev, 0u32, 1, 2), &kb, &vb, Greater)?;
    /// assert_eq!(k.to_vec()?, vec![9, 5, 4, 4]);
    /// assert_eq!(v.to_vec()?, vec![0, 2, 1, 4]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn set_union_by_key_with_by<V: super::IntoExpr, B: super::IntoExpr, W: super::IntoExpr, C: crate::cmp::Comparator<Self::Item>>(
        &self,
        values: V,
        other_keys: B,
        other_values: W,
        cmp: C,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
        W::Expr: Expr<Item = <V::Expr as Node>::Item>,
    {
        let (va, vb) = (values.into_expr(), other_values.into_expr());
        let b = other_keys.into_expr();
        crate::algo::merge::expr::set_by_key_of((self, &va), (&b, Some(&vb)), cmp, crate::algo::merge::SetOp::Union)
    }

    /// [`set_intersection_with`](ExprOps::set_intersection_with) of keys
    /// with values, as
    /// [`SetOps::set_intersection_by_key`](crate::algo::merge::SetOps::set_intersection_by_key):
    /// the kept keys are `self`'s, so only `self`'s `values` are given and
    /// kept with them; `other_keys` are keys alone. Both (a buffer or an
    /// expression each) and the elements are read in place. `values` must
    /// be as many as the elements, else [`Error::LengthMismatch`].
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// let dev = Device::default()?;
    /// let wanted = DeviceVec::from_slice(&dev, &[1u32, 9, 10, 49])?;
    /// // The squares below 64 that are wanted, with their roots.
    /// let roots = counting(&dev, 0u32, 1, 8);
    /// let (k, v) = roots.map(Square).set_intersection_by_key_with(roots, &wanted)?;
    /// assert_eq!(k.to_vec()?, vec![1, 9, 49]);
    /// assert_eq!(v.to_vec()?, vec![1, 3, 7]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn set_intersection_by_key_with<V: super::IntoExpr, B: super::IntoExpr>(
        &self,
        values: V,
        other_keys: B,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
    {
        self.set_intersection_by_key_with_by(values, other_keys, Less)
    }

    /// [`set_intersection_by_key_with`](ExprOps::set_intersection_by_key_with)
    /// of keys sorted by `cmp`, as
    /// [`SetOps::set_intersection_by_key_by`](crate::algo::merge::SetOps::set_intersection_by_key_by).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let b = DeviceVec::from_slice(&dev, &[9u64, 6, 6, 5])?;
    /// let keys = counting(&dev, 9u64, u64::MAX, 5);   // 9, 8, 7, 6, 5
    /// let (k, v) = keys.set_intersection_by_key_with_by(counting(&dev, 0.5f32, 1.0, 5), &b, Greater)?;
    /// assert_eq!(k.to_vec()?, vec![9, 6, 5]);
    /// assert_eq!(v.to_vec()?, vec![0.5, 3.5, 4.5]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn set_intersection_by_key_with_by<V: super::IntoExpr, B: super::IntoExpr, C: crate::cmp::Comparator<Self::Item>>(
        &self,
        values: V,
        other_keys: B,
        cmp: C,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
    {
        let va = values.into_expr();
        let none = None::<&V::Expr>;
        let b = other_keys.into_expr();
        crate::algo::merge::expr::set_by_key_of((self, &va), (&b, none), cmp, crate::algo::merge::SetOp::Intersection)
    }

    /// [`set_difference_with`](ExprOps::set_difference_with) of keys with
    /// values, as
    /// [`SetOps::set_difference_by_key`](crate::algo::merge::SetOps::set_difference_by_key):
    /// the kept keys are `self`'s, so only `self`'s `values` are given and
    /// kept with them; `other_keys` are keys alone. Both (a buffer or an
    /// expression each) and the elements are read in place. `values` must
    /// be as many as the elements, else [`Error::LengthMismatch`].
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// let dev = Device::default()?;
    /// let taken = DeviceVec::from_slice(&dev, &[1u32, 2, 5])?;
    /// // The free slots among 0..8, each with its cost (its square).
    /// let slots = counting(&dev, 0u32, 1, 8);
    /// let (k, v) = slots.set_difference_by_key_with(slots.map(Square), &taken)?;
    /// assert_eq!(k.to_vec()?, vec![0, 3, 4, 6, 7]);
    /// assert_eq!(v.to_vec()?, vec![0, 9, 16, 36, 49]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn set_difference_by_key_with<V: super::IntoExpr, B: super::IntoExpr>(
        &self,
        values: V,
        other_keys: B,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
    {
        self.set_difference_by_key_with_by(values, other_keys, Less)
    }

    /// [`set_difference_by_key_with`](ExprOps::set_difference_by_key_with)
    /// of keys sorted by `cmp`, as
    /// [`SetOps::set_difference_by_key_by`](crate::algo::merge::SetOps::set_difference_by_key_by).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// let dev = Device::default()?;
    /// let b = DeviceVec::from_slice(&dev, &[4i32, 2])?;
    /// let keys = counting(&dev, 5i32, -1, 5);   // 5, 4, 3, 2, 1
    /// let (k, v) = keys.set_difference_by_key_with_by(constant(&dev, 7i8, 5), &b, Greater)?;
    /// assert_eq!(k.to_vec()?, vec![5, 3, 1]);
    /// assert_eq!(v.to_vec()?, vec![7, 7, 7]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn set_difference_by_key_with_by<V: super::IntoExpr, B: super::IntoExpr, C: crate::cmp::Comparator<Self::Item>>(
        &self,
        values: V,
        other_keys: B,
        cmp: C,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
    {
        let va = values.into_expr();
        let none = None::<&V::Expr>;
        let b = other_keys.into_expr();
        crate::algo::merge::expr::set_by_key_of((self, &va), (&b, none), cmp, crate::algo::merge::SetOp::Difference)
    }

    /// [`set_symmetric_difference_with`](ExprOps::set_symmetric_difference_with)
    /// of keys with values, as
    /// [`SetOps::set_symmetric_difference_by_key`](crate::algo::merge::SetOps::set_symmetric_difference_by_key):
    /// the elements (keys sorted ascending) with `values`, and `other_keys`
    /// (sorted ascending) with `other_values`; each kept key brings its
    /// value from its side. Each of the other three inputs is a buffer or
    /// an expression, all read in place. Each side's values must be as
    /// many as its keys, else [`Error::LengthMismatch`].
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let (k, v) = counting(&dev, 0u32, 2, 6).set_symmetric_difference_by_key_with(
    ///     counting(&dev, 100u32, 1, 6),
    ///     counting(&dev, 0u32, 3, 4),
    ///     constant(&dev, 7u32, 4),
    /// )?;
    /// assert_eq!(k.to_vec()?, vec![2, 3, 4, 8, 9, 10]);
    /// assert_eq!(v.to_vec()?, vec![101, 7, 102, 104, 7, 105]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn set_symmetric_difference_by_key_with<V: super::IntoExpr, B: super::IntoExpr, W: super::IntoExpr>(
        &self,
        values: V,
        other_keys: B,
        other_values: W,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
        W::Expr: Expr<Item = <V::Expr as Node>::Item>,
    {
        self.set_symmetric_difference_by_key_with_by(values, other_keys, other_values, Less)
    }

    /// [`set_symmetric_difference_by_key_with`](ExprOps::set_symmetric_difference_by_key_with)
    /// of keys sorted by `cmp`, as
    /// [`SetOps::set_symmetric_difference_by_key_by`](crate::algo::merge::SetOps::set_symmetric_difference_by_key_by).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::cmp::Greater;
    /// use cuprim::ops::Negate;
    /// let dev = Device::default()?;
    /// let ka = DeviceVec::from_slice(&dev, &[-2.5f64, -1.0])?;   // 2.5, 1.0: descending
    /// let kb = DeviceVec::from_slice(&dev, &[2.0f64, 1.0, 1.0])?;
    /// let (k, v) = ka.map(Negate).set_symmetric_difference_by_key_with_by(
    ///     counting(&dev, 0u8, 1, 2),
    ///     &kb,
    ///     counting(&dev, 2u8, 1, 3),
    ///     Greater,
    /// )?;
    /// assert_eq!(k.to_vec()?, vec![2.5, 2.0, 1.0]);
    /// assert_eq!(v.to_vec()?, vec![0, 2, 4]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn set_symmetric_difference_by_key_with_by<
        V: super::IntoExpr,
        B: super::IntoExpr,
        W: super::IntoExpr,
        C: crate::cmp::Comparator<Self::Item>,
    >(
        &self,
        values: V,
        other_keys: B,
        other_values: W,
        cmp: C,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
        B::Expr: Expr<Item = Self::Item>,
        W::Expr: Expr<Item = <V::Expr as Node>::Item>,
    {
        let (va, vb) = (values.into_expr(), other_values.into_expr());
        let b = other_keys.into_expr();
        let op = crate::algo::merge::SetOp::SymmetricDifference;
        crate::algo::merge::expr::set_by_key_of((self, &va), (&b, Some(&vb)), cmp, op)
    }

    /// A histogram of the elements by `bins` (`u32` counts), in one pass
    /// with the expression read in place: the histogram of a computed
    /// quantity with no buffer of it. Bin rules as
    /// [`HistogramOps::histogram`](crate::algo::histogram::HistogramOps::histogram).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::histogram::Bins;
    /// let dev = Device::default()?;
    /// let a = DeviceVec::from_slice(&dev, &[0.5f32, 1.5, 2.5, 3.5])?;
    /// let b = DeviceVec::from_slice(&dev, &[1.0f32, 1.0, 0.5, 2.0])?;
    /// let h = zip(&a, &b).map(Mul).histogram(Bins::even(2, 0.0, 2.0))?; // 0.5 1.5 1.25 7.0
    /// assert_eq!(h.to_vec()?, vec![1, 2]);
    /// assert_eq!(h.dropped()?, 1);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn histogram(&self, bins: impl AsRef<Bins<Self::Item>>) -> Result<Histogram<u32>>
    where
        Self::Item: Element,
    {
        if self.length() as u64 > u32::MAX as u64 {
            return Err(Error::InvalidArgument(format!(
                "histogram: {} samples could overflow u32 counts; use histogram_u64",
                self.length()
            )));
        }
        crate::algo::histogram::fresh_of(self, bins.as_ref())
    }

    /// Like [`histogram`](ExprOps::histogram), with `u64` counts.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::histogram::Bins;
    /// use cuprim::ops::Square;
    /// let dev = Device::default()?;
    /// let h = counting(&dev, 0i32, 1, 10).map(Square).histogram_u64(Bins::even(2, 0, 50))?;
    /// assert_eq!(h.to_vec()?, vec![5u64, 3]);   // 0 1 4 9 16 | 25 36 49 | 64 81 dropped
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn histogram_u64(&self, bins: impl AsRef<Bins<Self::Item>>) -> Result<Histogram<u64>>
    where
        Self::Item: Element,
    {
        crate::algo::histogram::fresh_of(self, bins.as_ref())
    }

    /// Inclusive scan by `op` into a new vector, in one kernel with the
    /// expression read in place ([`ScanOps::scan`](crate::algo::scan::ScanOps::scan)'s
    /// grouping, so the same bits as collecting first).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// assert_eq!(constant(&dev, 2u32, 4).scan(Add)?.to_vec()?, vec![2, 4, 6, 8]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn scan<Op: Monoid<Self::Item>>(&self, op: Op) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
    {
        scan(self, op, false)
    }

    /// Exclusive scan by `op` into a new vector (the identity first).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1u64, 2, 3])?;
    /// assert_eq!(v.map(Square).exclusive_scan(Add)?.to_vec()?, vec![0, 1, 5]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn exclusive_scan<Op: Monoid<Self::Item>>(&self, op: Op) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
    {
        scan(self, op, true)
    }

    /// Inclusive scan of a pair expression by a monoid on the pair, each
    /// field of the scan written to its own new vector by the kernel (no
    /// tuple array, no copy pass): `(a[i], b[i]) = x[0] op ... op x[i]`.
    /// Tiles are grouped as in [`scan`](ExprOps::scan), so a float field
    /// differs from a sequential fold by rounding only (see the
    /// [scan module](crate::algo::scan)); the host backend folds sequentially.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let x = DeviceVec::from_slice(&dev, &[3.0f32, 1.0, 4.0, 1.0, 5.0])?;
    /// // Running (min, max) of x in one pass.
    /// let (lo, hi) = zip(&x, &x).scan_unzip(MinMax)?;
    /// assert_eq!(lo.to_vec()?, vec![3.0, 1.0, 1.0, 1.0, 1.0]);
    /// assert_eq!(hi.to_vec()?, vec![3.0, 3.0, 4.0, 4.0, 5.0]);
    /// # use cuprim::ops::{Associative, BinaryOp, Monoid};
    /// # #[derive(Clone, Copy)] struct MinMax;
    /// # impl BinaryOp<(f32, f32)> for MinMax {
    /// #     fn apply(&self, a: (f32, f32), b: (f32, f32)) -> (f32, f32) { (a.0.min(b.0), a.1.max(b.1)) }
    /// #     fn cuda_expr(&self) -> String { "cuprim_t2<float, float>{fminf(a.a0, b.a0), fmaxf(a.a1, b.a1)}".into() }
    /// # }
    /// # impl Associative for MinMax {}
    /// # impl Monoid<(f32, f32)> for MinMax { fn identity(&self) -> (f32, f32) { (f32::INFINITY, f32::NEG_INFINITY) } }
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn scan_unzip<A: Element, B: Element, Op: Monoid<(A, B)>>(&self, op: Op) -> Result<(DeviceVec<A>, DeviceVec<B>)>
    where
        Self: Expr<Item = (A, B)>,
    {
        scan_unzip_of(self, op, false, "scan_unzip")
    }

    /// Exclusive [`scan_unzip`](ExprOps::scan_unzip): the identity's
    /// fields first, then `x[0] op ... op x[i - 1]`.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let x = DeviceVec::from_slice(&dev, &[0.5f32, 2.0, 1.5])?;
    /// // Running (count, sum) before each element: where each one's output starts, say.
    /// let (n, s) = zip(constant(&dev, 1u32, 3), &x).exclusive_scan_unzip(CountSum)?;
    /// assert_eq!((n.to_vec()?, s.to_vec()?), (vec![0, 1, 2], vec![0.0, 0.5, 2.5]));
    /// # use cuprim::ops::{Associative, BinaryOp, Monoid};
    /// # #[derive(Clone, Copy)] struct CountSum;
    /// # impl BinaryOp<(u32, f32)> for CountSum {
    /// #     fn apply(&self, a: (u32, f32), b: (u32, f32)) -> (u32, f32) { (a.0 + b.0, a.1 + b.1) }
    /// #     fn cuda_expr(&self) -> String { "cuprim_t2<unsigned int, float>{a.a0 + b.a0, a.a1 + b.a1}".into() }
    /// # }
    /// # impl Associative for CountSum {}
    /// # impl Monoid<(u32, f32)> for CountSum { fn identity(&self) -> (u32, f32) { (0, 0.0) } }
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn exclusive_scan_unzip<A: Element, B: Element, Op: Monoid<(A, B)>>(&self, op: Op) -> Result<(DeviceVec<A>, DeviceVec<B>)>
    where
        Self: Expr<Item = (A, B)>,
    {
        scan_unzip_of(self, op, true, "exclusive_scan_unzip")
    }

    /// [`scan_unzip`](ExprOps::scan_unzip) of a triple expression, three
    /// output vectors.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let t = zip3(constant(&dev, 1u32, 3), counting(&dev, 0.5f64, 1.0, 3), counting(&dev, 10i64, 10, 3));
    /// let (n, s, u) = t.scan_unzip3(Sum3)?;
    /// assert_eq!((n.to_vec()?, s.to_vec()?, u.to_vec()?), (vec![1, 2, 3], vec![0.5, 2.0, 4.5], vec![10, 30, 60]));
    /// # use cuprim::ops::{Associative, BinaryOp, Monoid};
    /// # #[derive(Clone, Copy)] struct Sum3;
    /// # impl BinaryOp<(u32, f64, i64)> for Sum3 {
    /// #     fn apply(&self, a: (u32, f64, i64), b: (u32, f64, i64)) -> (u32, f64, i64) { (a.0 + b.0, a.1 + b.1, a.2 + b.2) }
    /// #     fn cuda_expr(&self) -> String { "cuprim_t3<unsigned int, double, long long>{a.a0 + b.a0, a.a1 + b.a1, a.a2 + b.a2}".into() }
    /// # }
    /// # impl Associative for Sum3 {}
    /// # impl Monoid<(u32, f64, i64)> for Sum3 { fn identity(&self) -> (u32, f64, i64) { (0, 0.0, 0) } }
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn scan_unzip3<A: Element, B: Element, C: Element, Op: Monoid<(A, B, C)>>(
        &self,
        op: Op,
    ) -> Result<(DeviceVec<A>, DeviceVec<B>, DeviceVec<C>)>
    where
        Self: Expr<Item = (A, B, C)>,
    {
        scan_unzip_of(self, op, false, "scan_unzip3")
    }

    /// Exclusive [`scan_unzip3`](ExprOps::scan_unzip3) (the identity first).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let t = zip3(constant(&dev, 1u32, 3), counting(&dev, 0.5f64, 1.0, 3), counting(&dev, 10i64, 10, 3));
    /// let (n, s, u) = t.exclusive_scan_unzip3(Sum3)?;
    /// assert_eq!((n.to_vec()?, s.to_vec()?, u.to_vec()?), (vec![0, 1, 2], vec![0.0, 0.5, 2.0], vec![0, 10, 30]));
    /// # use cuprim::ops::{Associative, BinaryOp, Monoid};
    /// # #[derive(Clone, Copy)] struct Sum3;
    /// # impl BinaryOp<(u32, f64, i64)> for Sum3 {
    /// #     fn apply(&self, a: (u32, f64, i64), b: (u32, f64, i64)) -> (u32, f64, i64) { (a.0 + b.0, a.1 + b.1, a.2 + b.2) }
    /// #     fn cuda_expr(&self) -> String { "cuprim_t3<unsigned int, double, long long>{a.a0 + b.a0, a.a1 + b.a1, a.a2 + b.a2}".into() }
    /// # }
    /// # impl Associative for Sum3 {}
    /// # impl Monoid<(u32, f64, i64)> for Sum3 { fn identity(&self) -> (u32, f64, i64) { (0, 0.0, 0) } }
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn exclusive_scan_unzip3<A: Element, B: Element, C: Element, Op: Monoid<(A, B, C)>>(
        &self,
        op: Op,
    ) -> Result<(DeviceVec<A>, DeviceVec<B>, DeviceVec<C>)>
    where
        Self: Expr<Item = (A, B, C)>,
    {
        scan_unzip_of(self, op, true, "exclusive_scan_unzip3")
    }

    /// Segmented inclusive scan by `op` of the elements, restarting wherever
    /// `keys` changes (as
    /// [`ScanOps::scan_by_key`](crate::algo::scan::ScanOps::scan_by_key)),
    /// with the values and the keys (a buffer or an expression, as long as
    /// the values) read in place by one kernel.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// let dev = Device::default()?;
    /// // Runs of 3: keys i / 3 computed where they are read, values i^2.
    /// let keys = counting(&dev, 0u32, 1, 7).map(DivBy(3));
    /// let s = counting(&dev, 0u64, 1, 7).map(Square).scan_by_key(keys, Add)?;
    /// assert_eq!(s.to_vec()?, vec![0, 1, 5, 9, 25, 50, 36]);
    /// # use cuprim::ops::UnaryOp;
    /// # #[derive(Clone, Copy)] struct DivBy(u32);
    /// # impl UnaryOp<u32> for DivBy {
    /// #     type Output = u32;
    /// #     fn apply(&self, x: u32) -> u32 { x / self.0 }
    /// #     fn cuda_expr(&self) -> String { format!("x / {}u", self.0) }
    /// # }
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn scan_by_key<K: super::IntoExpr, Op: Monoid<Self::Item>>(&self, keys: K, op: Op) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
        <K::Expr as Node>::Item: Element,
    {
        crate::algo::scan::scan_by_key_of(&keys.into_expr(), self, op)
    }

    /// One output per run of equal consecutive keys (the elements of
    /// `self`): the run's first key and the fold of its values with `op`,
    /// as [`ByKeyOps::reduce_by_key`](crate::algo::bykey::ByKeyOps::reduce_by_key),
    /// with the keys and the values (a buffer or an expression, as long as
    /// the keys) read in place by one kernel.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// let dev = Device::default()?;
    /// let keys = DeviceVec::from_slice(&dev, &[1u32, 1, 2, 2, 2, 1])?;
    /// let x = DeviceVec::from_slice(&dev, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let (k, ss) = keys.lazy().reduce_by_key(x.map(Square), Add)?;   // sums of squares per run
    /// assert_eq!((k.to_vec()?, ss.to_vec()?), (vec![1, 2, 1], vec![5.0, 50.0, 36.0]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce_by_key<V: super::IntoExpr, Op: Monoid<<V::Expr as Node>::Item>>(
        &self,
        values: V,
        op: Op,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
    {
        use crate::algo::bykey::plan::NotEqual;
        crate::algo::bykey::reduce_of(self, &values.into_expr(), op, NotEqual, "reduce_by_key")
    }

    /// [`reduce_by_key`](ExprOps::reduce_by_key) of tuple values `(A, B)`
    /// with a monoid on the tuple, each field of the aggregates written to
    /// its own vector by the kernel (no tuple array, no copy pass).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let x = DeviceVec::from_slice(&dev, &[3.0f32, 1.0, 2.0, 7.0, 5.0])?;
    /// // (min, max) of each run of 3 (keys i / 3, computed where they are read)
    /// let keys = counting(&dev, 0u32, 1, 5).map(DivBy(3));
    /// let (k, lo, hi) = keys.reduce_by_key_unzip(zip(&x, &x), MinMax)?;
    /// assert_eq!((k.to_vec()?, lo.to_vec()?, hi.to_vec()?), (vec![0, 1], vec![1.0, 5.0], vec![3.0, 7.0]));
    /// # use cuprim::ops::{Associative, BinaryOp, Monoid, UnaryOp};
    /// # #[derive(Clone, Copy)] struct DivBy(u32);
    /// # impl UnaryOp<u32> for DivBy {
    /// #     type Output = u32;
    /// #     fn apply(&self, x: u32) -> u32 { x / self.0 }
    /// #     fn cuda_expr(&self) -> String { format!("x / {}u", self.0) }
    /// # }
    /// # #[derive(Clone, Copy)] struct MinMax;
    /// # impl BinaryOp<(f32, f32)> for MinMax {
    /// #     fn apply(&self, a: (f32, f32), b: (f32, f32)) -> (f32, f32) { (a.0.min(b.0), a.1.max(b.1)) }
    /// #     fn cuda_expr(&self) -> String { "cuprim_t2<float, float>{fminf(a.a0, b.a0), fmaxf(a.a1, b.a1)}".into() }
    /// # }
    /// # impl Associative for MinMax {}
    /// # impl Monoid<(f32, f32)> for MinMax { fn identity(&self) -> (f32, f32) { (f32::INFINITY, f32::NEG_INFINITY) } }
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn reduce_by_key_unzip<A: Element, B: Element, V: super::IntoExpr, Op: Monoid<(A, B)>>(
        &self,
        values: V,
        op: Op,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<A>, DeviceVec<B>)>
    where
        Self::Item: Element,
        V::Expr: Expr<Item = (A, B)>,
    {
        use crate::algo::bykey::plan::NotEqual;
        let (k, (a, b)) = crate::algo::bykey::reduce_of(self, &values.into_expr(), op, NotEqual, "reduce_by_key_unzip")?;
        Ok((k, a, b))
    }

    /// [`reduce_by_key_unzip`](ExprOps::reduce_by_key_unzip) of triples
    /// `(A, B, C)`, three output vectors.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let keys = DeviceVec::from_slice(&dev, &[4u8, 4, 9])?;
    /// let t = zip3(constant(&dev, 1u32, 3), counting(&dev, 1.0f64, 1.0, 3), counting(&dev, 10i64, 10, 3));
    /// let (k, n, s, t) = keys.lazy().reduce_by_key_unzip3(t, Sum3)?;
    /// assert_eq!((k.to_vec()?, n.to_vec()?), (vec![4, 9], vec![2, 1]));
    /// assert_eq!((s.to_vec()?, t.to_vec()?), (vec![3.0, 3.0], vec![30, 30]));
    /// # use cuprim::ops::{Associative, BinaryOp, Monoid};
    /// # #[derive(Clone, Copy)] struct Sum3;
    /// # impl BinaryOp<(u32, f64, i64)> for Sum3 {
    /// #     fn apply(&self, a: (u32, f64, i64), b: (u32, f64, i64)) -> (u32, f64, i64) { (a.0 + b.0, a.1 + b.1, a.2 + b.2) }
    /// #     fn cuda_expr(&self) -> String { "cuprim_t3<unsigned int, double, long long>{a.a0 + b.a0, a.a1 + b.a1, a.a2 + b.a2}".into() }
    /// # }
    /// # impl Associative for Sum3 {}
    /// # impl Monoid<(u32, f64, i64)> for Sum3 { fn identity(&self) -> (u32, f64, i64) { (0, 0.0, 0) } }
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn reduce_by_key_unzip3<A: Element, B: Element, C: Element, V: super::IntoExpr, Op: Monoid<(A, B, C)>>(
        &self,
        values: V,
        op: Op,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<A>, DeviceVec<B>, DeviceVec<C>)>
    where
        Self::Item: Element,
        V::Expr: Expr<Item = (A, B, C)>,
    {
        use crate::algo::bykey::plan::NotEqual;
        let (k, (a, b, c)) = crate::algo::bykey::reduce_of(self, &values.into_expr(), op, NotEqual, "reduce_by_key_unzip3")?;
        Ok((k, a, b, c))
    }

    /// [`reduce_by_key`](ExprOps::reduce_by_key) into caller buffers with
    /// no host synchronisation (unless an input permutes), as
    /// [`ByKeyOps::reduce_by_key_into`](crate::algo::bykey::ByKeyOps::reduce_by_key_into).
    /// After an [`Error::IndexOutOfBounds`] the outputs hold unspecified values.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let (mut k, mut v) = (DeviceVec::<u32>::zeros(&dev, 6)?, DeviceVec::<u64>::zeros(&dev, 6)?);
    /// let mut count = DeviceVec::<u64>::zeros(&dev, 1)?;
    /// // keys 0 0 1 1 2 2, values 1..=6: no input buffer at all
    /// counting(&dev, 0u32, 1, 6).map(Half).reduce_by_key_into(counting(&dev, 1u64, 1, 6), Add, &mut k, &mut v, &mut count)?;
    /// assert_eq!(count.to_vec()?, vec![3]);
    /// assert_eq!(v.to_vec()?[..3], [3, 7, 11]);
    /// # use cuprim::ops::UnaryOp;
    /// # #[derive(Clone, Copy)] struct Half;
    /// # impl UnaryOp<u32> for Half { type Output = u32; fn apply(&self, x: u32) -> u32 { x / 2 } fn cuda_expr(&self) -> String { "x / 2u".into() } }
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn reduce_by_key_into<V: super::IntoExpr, Op: Monoid<<V::Expr as Node>::Item>>(
        &self,
        values: V,
        op: Op,
        keys_out: &mut impl crate::DeviceDataMut<Self::Item>,
        values_out: &mut impl crate::DeviceDataMut<<V::Expr as Node>::Item>,
        count: &mut impl crate::DeviceDataMut<u64>,
    ) -> Result<()>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
    {
        crate::algo::bykey::reduce_into_of(self, &values.into_expr(), op, keys_out, values_out, count)
    }

    /// The first element of each run of equal consecutive elements, as
    /// [`ByKeyOps::unique`](crate::algo::bykey::ByKeyOps::unique), read in place.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Abs;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[1i32, -1, 4, -4, 2, 1])?;
    /// assert_eq!(v.map(Abs).unique()?.to_vec()?, vec![1, 4, 2, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn unique(&self) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
    {
        crate::algo::bykey::unique_of(self)
    }

    /// The number of runs of equal consecutive elements.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// assert_eq!(counting(&dev, 0u32, 1, 10).map(Third).unique_count()?, 4);   // 0 1 2 3
    /// # use cuprim::ops::UnaryOp;
    /// # #[derive(Clone, Copy)] struct Third;
    /// # impl UnaryOp<u32> for Third { type Output = u32; fn apply(&self, x: u32) -> u32 { x / 3 } fn cuda_expr(&self) -> String { "x / 3u".into() } }
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn unique_count(&self) -> Result<usize>
    where
        Self::Item: Element,
    {
        crate::algo::bykey::unique_count_of(self)
    }

    /// [`unique`](ExprOps::unique) into `out` (at least as long as the
    /// expression), the number of runs to `count[0]`, on the device.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let (mut out, mut count) = (DeviceVec::<u64>::zeros(&dev, 5)?, DeviceVec::<u64>::zeros(&dev, 1)?);
    /// constant(&dev, 7u64, 5).unique_into(&mut out, &mut count)?;
    /// assert_eq!((out.to_vec()?[0], count.to_vec()?), (7, vec![1]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn unique_into(&self, out: &mut impl crate::DeviceDataMut<Self::Item>, count: &mut impl crate::DeviceDataMut<u64>) -> Result<()>
    where
        Self::Item: Element,
    {
        crate::algo::bykey::unique_into_of(self, out, count)
    }

    /// The first key (element of `self`) and the first value of each run,
    /// the values a buffer or an expression as long as the keys.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let keys = DeviceVec::from_slice(&dev, &[5u32, 5, 6, 5])?;
    /// let (k, i) = keys.lazy().unique_by_key(counting(&dev, 0u64, 1, 4))?;   // where each run starts
    /// assert_eq!((k.to_vec()?, i.to_vec()?), (vec![5, 6, 5], vec![0, 2, 3]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn unique_by_key<V: super::IntoExpr>(&self, values: V) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
    {
        crate::algo::bykey::unique_by_key_of(self, &values.into_expr())
    }

    /// [`unique_by_key`](ExprOps::unique_by_key) of tuple values, each field
    /// of the runs' first values to its own vector (no copy pass).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let keys = DeviceVec::from_slice(&dev, &[2u8, 2, 3])?;
    /// let (k, a, b) = keys.lazy().unique_by_key_unzip(zip(counting(&dev, 0u32, 1, 3), constant(&dev, 0.5f32, 3)))?;
    /// assert_eq!((k.to_vec()?, a.to_vec()?, b.to_vec()?), (vec![2, 3], vec![0, 2], vec![0.5, 0.5]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn unique_by_key_unzip<A: Element, B: Element, V: super::IntoExpr>(
        &self,
        values: V,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<A>, DeviceVec<B>)>
    where
        Self::Item: Element,
        V::Expr: Expr<Item = (A, B)>,
    {
        let (k, (a, b)) = crate::algo::bykey::unique_by_key_of(self, &values.into_expr())?;
        Ok((k, a, b))
    }

    /// Run-length encoding of the elements: each run's first element and
    /// its length (`u32`; see [`run_length_encode_with`](ExprOps::run_length_encode_with)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Abs;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[9i32, -9, 9, -1, 9, 9])?;
    /// let (values, lengths) = v.map(Abs).run_length_encode()?;
    /// assert_eq!((values.to_vec()?, lengths.to_vec()?), (vec![9, 1, 9], vec![3, 1, 2]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn run_length_encode(&self) -> Result<(DeviceVec<Self::Item>, DeviceVec<u32>)>
    where
        Self::Item: Element,
    {
        crate::algo::bykey::run_length_encode_of(self)
    }

    /// [`run_length_encode`](ExprOps::run_length_encode) with lengths of
    /// type `C` (`u32` or `u64`).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let (values, lengths) = constant(&dev, 0.25f32, 3).run_length_encode_with::<u64>()?;
    /// assert_eq!((values.to_vec()?, lengths.to_vec()?), (vec![0.25], vec![3u64]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn run_length_encode_with<C: crate::element::IndexElement>(&self) -> Result<(DeviceVec<Self::Item>, DeviceVec<C>)>
    where
        Self::Item: Element,
    {
        crate::algo::bykey::run_length_encode_of(self)
    }

    /// [`run_length_encode`](ExprOps::run_length_encode) into caller
    /// buffers (each at least as long as the expression), the number of
    /// runs to `count[0]`, on the device.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let (mut values, mut lengths) = (DeviceVec::<u64>::zeros(&dev, 6)?, DeviceVec::<u64>::zeros(&dev, 6)?);
    /// let mut count = DeviceVec::<u64>::zeros(&dev, 1)?;
    /// constant(&dev, 3u64, 6).run_length_encode_into(&mut values, &mut lengths, &mut count)?;
    /// assert_eq!(count.to_vec()?, vec![1]);
    /// assert_eq!((values.to_vec()?[0], lengths.to_vec()?[0]), (3, 6));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn run_length_encode_into<C: crate::element::IndexElement>(
        &self,
        values_out: &mut impl crate::DeviceDataMut<Self::Item>,
        lengths_out: &mut impl crate::DeviceDataMut<C>,
        count: &mut impl crate::DeviceDataMut<u64>,
    ) -> Result<()>
    where
        Self::Item: Element,
    {
        crate::algo::bykey::run_length_encode_into_of(self, values_out, lengths_out, count)
    }

    /// Folds each segment of the elements with `op`, in order, as
    /// [`SegmentedOps::segmented_reduce`](crate::algo::segmented::SegmentedOps::segmented_reduce)
    /// (the same grouping, so the same bits as collecting first), with the
    /// elements read in place.
    ///
    /// `offsets`: a buffer, or an expression (collected first; see
    /// [`segmented`](crate::algo::segmented)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[1.0f32, 2.0, 3.0, 4.0])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u32, 1, 1, 4])?;
    /// assert_eq!(v.map(Square).segmented_reduce(&offsets, Add)?.to_vec()?, vec![1.0, 0.0, 29.0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_reduce<I: crate::element::IndexElement, Op: Monoid<Self::Item>>(
        &self,
        offsets: impl super::IntoExpr<Expr: Expr<Item = I>>,
        op: Op,
    ) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
    {
        super::with_buffer(offsets, |o| crate::algo::segmented::segmented_reduce_of(self, o, op))
    }

    /// The sum of each segment; 0 when empty.
    ///
    /// `offsets`: a buffer, or an expression (collected first; see
    /// [`segmented`](crate::algo::segmented)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u64, 3, 5])?;
    /// assert_eq!(counting(&dev, 1u32, 1, 5).segmented_sum(&offsets)?.to_vec()?, vec![6, 9]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_sum<I: crate::element::IndexElement>(
        &self,
        offsets: impl super::IntoExpr<Expr: Expr<Item = I>>,
    ) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Arith,
    {
        super::with_buffer(offsets, |o| crate::algo::segmented::segmented_reduce_of(self, o, Add))
    }

    /// Each segment's least element and its index within the segment, as
    /// [`SegmentedOps::segmented_min_element`](crate::algo::segmented::SegmentedOps::segmented_min_element).
    ///
    /// `offsets`: a buffer, or an expression (collected first; see
    /// [`segmented`](crate::algo::segmented)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Abs;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[-4i32, 2, -1, 3])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u32, 3, 4])?;
    /// let m = v.map(Abs).segmented_min_element(&offsets)?;
    /// assert_eq!((m.values.to_vec()?, m.indices.to_vec()?), (vec![1, 3], vec![2, 0]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_min_element<I: crate::element::IndexElement>(
        &self,
        offsets: impl super::IntoExpr<Expr: Expr<Item = I>>,
    ) -> Result<crate::algo::segmented::SegmentedExtremes<Self::Item, I>>
    where
        Self::Item: Element,
    {
        super::with_buffer(offsets, |o| crate::algo::segmented::segmented_arg(self, o, false))
    }

    /// Each segment's greatest element and its index within the segment.
    ///
    /// `offsets`: a buffer, or an expression (collected first; see
    /// [`segmented`](crate::algo::segmented)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Abs;
    /// let dev = Device::default()?;
    /// let v = DeviceVec::from_slice(&dev, &[-4i32, 2, -1, 3])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u32, 3, 4])?;
    /// let m = v.map(Abs).segmented_max_element(&offsets)?;
    /// assert_eq!((m.values.to_vec()?, m.indices.to_vec()?), (vec![4, 3], vec![0, 0]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_max_element<I: crate::element::IndexElement>(
        &self,
        offsets: impl super::IntoExpr<Expr: Expr<Item = I>>,
    ) -> Result<crate::algo::segmented::SegmentedExtremes<Self::Item, I>>
    where
        Self::Item: Element,
    {
        super::with_buffer(offsets, |o| crate::algo::segmented::segmented_arg(self, o, true))
    }

    /// The elements sorted into a new vector, in
    /// [`SortMutOps::sort`](crate::algo::sort::SortMutOps::sort)'s order (stable radix
    /// sort; floats in `total_cmp` order). On CUDA the sort's first pass
    /// (the histogram of every digit) reads the expression and writes the
    /// keys it reads where the next pass reads them: no collected copy is
    /// read again.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Negate;
    /// let v = DeviceVec::from_slice(&Device::default()?, &[3i32, -1, 2])?;
    /// assert_eq!(v.map(Negate).sorted()?.to_vec()?, vec![-3, -2, 1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sorted(&self) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
    {
        crate::algo::sort::sorted_of(self, crate::algo::sort::SortOptions::new())
    }

    /// [`sorted`](ExprOps::sorted) with [`SortOptions`](crate::algo::sort::SortOptions)
    /// (descending, a bit range).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::sort::SortOptions;
    /// let dev = Device::default()?;
    /// let v = counting(&dev, 0u32, 7, 5).sorted_with(SortOptions::new().descending())?;
    /// assert_eq!(v.to_vec()?, vec![28, 21, 14, 7, 0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sorted_with(&self, opts: crate::algo::sort::SortOptions) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
    {
        crate::algo::sort::sorted_of(self, opts)
    }

    /// The elements as keys and `values` (a buffer or an expression, as
    /// long as the keys) sorted by key into two new vectors, as
    /// [`SortMutOps::sort_pairs`](crate::algo::sort::SortMutOps::sort_pairs) (stable);
    /// the first pass reads both expressions.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Abs;
    /// let dev = Device::default()?;
    /// let x = DeviceVec::from_slice(&dev, &[-3i32, 1, -2])?;
    /// // argsort of |x|: the indices come from a counting expression
    /// let (k, i) = x.map(Abs).sorted_pairs(counting(&dev, 0u32, 1, 3))?;
    /// assert_eq!((k.to_vec()?, i.to_vec()?), (vec![1, 2, 3], vec![1, 2, 0]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sorted_pairs<V: super::IntoExpr>(&self, values: V) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
    {
        crate::algo::sort::sorted_pairs_of(self, &values.into_expr(), crate::algo::sort::SortOptions::new())
    }

    /// [`sorted_pairs`](ExprOps::sorted_pairs) with [`SortOptions`](crate::algo::sort::SortOptions).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::sort::SortOptions;
    /// let dev = Device::default()?;
    /// let keys = DeviceVec::from_slice(&dev, &[1.5f32, -0.5, 2.5])?;
    /// let (k, v) = keys.lazy().sorted_pairs_with(constant(&dev, 7u8, 3), SortOptions::new().descending())?;
    /// assert_eq!((k.to_vec()?, v.to_vec()?), (vec![2.5, 1.5, -0.5], vec![7, 7, 7]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn sorted_pairs_with<V: super::IntoExpr>(
        &self,
        values: V,
        opts: crate::algo::sort::SortOptions,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
    {
        crate::algo::sort::sorted_pairs_of(self, &values.into_expr(), opts)
    }

    /// The elements sorted into a new vector, stably, by any
    /// [`Comparator`](crate::cmp::Comparator): what collecting them and
    /// then [`SortMutOps::sort_by`](crate::algo::sort::SortMutOps::sort_by)
    /// give, bit for bit (equivalent elements keep their order). As there,
    /// the built-in [`Less`] and [`Greater`](crate::cmp::Greater) take the
    /// radix sort ([`sorted_with`](ExprOps::sorted_with)) and any other
    /// comparator the merge sort, whose first kernel on CUDA (one block
    /// sorts each tile) reads the expression and writes the sorted tiles
    /// where the merge passes read them: no collected copy. A permutation
    /// with an index out of range fails with
    /// [`Error::IndexOutOfBounds`](crate::Error::IndexOutOfBounds).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// cuprim::comparator! {
    ///     /// By the last decimal digit only.
    ///     pub struct LastDigit for u32 {
    ///         rust: |a, b| a % 10 < b % 10,
    ///         cuda: "a % 10 < b % 10",
    ///     }
    /// }
    /// let dev = Device::default()?;
    /// // 0, 6, 12, ..., 54 by their last digit; equal digits keep their order.
    /// let v = counting(&dev, 0u32, 6, 10).sorted_by(LastDigit)?;
    /// assert_eq!(v.to_vec()?, vec![0, 30, 12, 42, 24, 54, 6, 36, 18, 48]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sorted_by<C: crate::cmp::Comparator<Self::Item>>(&self, cmp: C) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
    {
        crate::algo::merge::sort_expr::sorted_by_of(self, cmp)
    }

    /// The elements as keys and `values` (a buffer or an expression of any
    /// element type, as long as the keys) sorted stably by key by `cmp`
    /// into two new vectors: what collecting both and then
    /// [`SortMutOps::sort_pairs_by`](crate::algo::sort::SortMutOps::sort_pairs_by)
    /// give, bit for bit. On CUDA the merge sort's tile kernel reads both
    /// expressions (see [`sorted_by`](ExprOps::sorted_by)). Fails with
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) unless the
    /// lengths agree.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Abs;
    /// cuprim::comparator! {
    ///     /// By the last decimal digit only.
    ///     pub struct LastDigit for i32 {
    ///         rust: |a, b| a % 10 < b % 10,
    ///         cuda: "a % 10 < b % 10",
    ///     }
    /// }
    /// let dev = Device::default()?;
    /// let x = DeviceVec::from_slice(&dev, &[-25i32, 13, 5, -33, 40])?;
    /// // A stable argsort of |x| by last digit: the indices come from a counting expression.
    /// let (k, i) = x.map(Abs).sorted_pairs_by(LastDigit, counting(&dev, 0u32, 1, 5))?;
    /// assert_eq!((k.to_vec()?, i.to_vec()?), (vec![40, 13, 33, 25, 5], vec![4, 1, 3, 0, 2]));
    /// let short = x.map(Abs).sorted_pairs_by(LastDigit, counting(&dev, 0u32, 1, 4));
    /// assert!(matches!(short, Err(cuprim::Error::LengthMismatch { .. })));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn sorted_pairs_by<V: super::IntoExpr, C: crate::cmp::Comparator<Self::Item>>(
        &self,
        cmp: C,
        values: V,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
    {
        crate::algo::merge::sort_expr::sorted_pairs_by_of(self, &values.into_expr(), cmp)
    }

    /// The elements with each segment `offsets[s]..offsets[s + 1]` sorted,
    /// in a new vector: what collecting the expression and then
    /// [`SegmentedSortOps::segmented_sort`](crate::algo::segsort::SegmentedSortOps::segmented_sort)
    /// give (stable, floats in `total_cmp` order; elements outside every
    /// segment as they are). On CUDA keys of at most 4 bytes are written to
    /// the output once and sorted there (the warp-per-segment kernel of
    /// segments up to 1024 keys sorts in place); other keys have no
    /// collected copy: each segment's first read (the one-block kernel's
    /// load of a short segment, the first pass over a long one) is of the
    /// expression, and later passes work on the output and scratch. `offsets` (`u32` or `u64`) are checked as the
    /// in-place sort checks them ([`Error::InvalidArgument`] before anything
    /// is read).
    ///
    /// `offsets`: a buffer, or an expression (collected first; see
    /// [`segsort`](crate::algo::segsort)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Negate;
    /// let dev = Device::default()?;
    /// let x = DeviceVec::from_slice(&dev, &[3i32, 1, 2, 9, -5, 4])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u32, 3, 3, 6])?;
    /// let s = x.map(Negate).segmented_sorted(&offsets)?;
    /// assert_eq!(s.to_vec()?, vec![-3, -2, -1, -9, -4, 5]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_sorted<I: crate::element::IndexElement>(
        &self,
        offsets: impl super::IntoExpr<Expr: Expr<Item = I>>,
    ) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
    {
        super::with_buffer(offsets, |o| {
            crate::algo::segsort::segmented_sorted_of(self, o, crate::algo::sort::SortOptions::new())
        })
    }

    /// [`segmented_sorted`](ExprOps::segmented_sorted) as
    /// [`SortOptions`](crate::algo::sort::SortOptions) say (descending, a bit range).
    ///
    /// `offsets`: a buffer, or an expression (collected first; see
    /// [`segsort`](crate::algo::segsort)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::sort::SortOptions;
    /// let dev = Device::default()?;
    /// let offsets = DeviceVec::from_slice(&dev, &[1u64, 4, 6])?;
    /// // 0, 3, 6, 9, 12, 15, 18: element 0 and 18 lie outside the segments
    /// let s = counting(&dev, 0u32, 3, 7).segmented_sorted_with(&offsets, SortOptions::new().descending())?;
    /// assert_eq!(s.to_vec()?, vec![0, 9, 6, 3, 15, 12, 18]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn segmented_sorted_with<I: crate::element::IndexElement>(
        &self,
        offsets: impl super::IntoExpr<Expr: Expr<Item = I>>,
        opts: crate::algo::sort::SortOptions,
    ) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
    {
        super::with_buffer(offsets, |o| crate::algo::segsort::segmented_sorted_of(self, o, opts))
    }

    /// The elements as keys and `values` (a buffer or an expression, as
    /// long as the keys) with each segment sorted by key (stable), into two
    /// new vectors: collecting both and then
    /// [`segmented_sort_pairs`](crate::algo::segsort::SegmentedSortOps::segmented_sort_pairs),
    /// with the first reads of both expressions done by the sort.
    ///
    /// `offsets`: a buffer, or an expression (collected first; see
    /// [`segsort`](crate::algo::segsort)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Abs;
    /// let dev = Device::default()?;
    /// let x = DeviceVec::from_slice(&dev, &[-3i32, 1, -2, 5, -4])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u32, 3, 5])?;
    /// // per-segment argsort of |x|: the positions come from a counting expression
    /// let (k, i) = x.map(Abs).segmented_sorted_pairs(&offsets, counting(&dev, 0u32, 1, 5))?;
    /// assert_eq!((k.to_vec()?, i.to_vec()?), (vec![1, 2, 3, 4, 5], vec![1, 2, 0, 4, 3]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn segmented_sorted_pairs<I: crate::element::IndexElement, V: super::IntoExpr>(
        &self,
        offsets: impl super::IntoExpr<Expr: Expr<Item = I>>,
        values: V,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
    {
        super::with_buffer(offsets, |o| {
            crate::algo::segsort::segmented_sorted_pairs_of(self, &values.into_expr(), o, crate::algo::sort::SortOptions::new())
        })
    }

    /// [`segmented_sorted_pairs`](ExprOps::segmented_sorted_pairs) as
    /// [`SortOptions`](crate::algo::sort::SortOptions) say.
    ///
    /// `offsets`: a buffer, or an expression (collected first; see
    /// [`segsort`](crate::algo::segsort)).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::sort::SortOptions;
    /// let dev = Device::default()?;
    /// let k = DeviceVec::from_slice(&dev, &[1.5f32, 2.5, -1.0, 7.0])?;
    /// let v = DeviceVec::from_slice(&dev, &[b'a', b'b', b'c', b'd'])?;
    /// let offsets = DeviceVec::from_slice(&dev, &[0u32, 2, 4])?;
    /// let (sk, sv) = k.lazy().segmented_sorted_pairs_with(&offsets, &v, SortOptions::new().descending())?;
    /// assert_eq!((sk.to_vec()?, sv.to_vec()?), (vec![2.5, 1.5, 7.0, -1.0], b"badc".to_vec()));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn segmented_sorted_pairs_with<I: crate::element::IndexElement, V: super::IntoExpr>(
        &self,
        offsets: impl super::IntoExpr<Expr: Expr<Item = I>>,
        values: V,
        opts: crate::algo::sort::SortOptions,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self::Item: Element,
        <V::Expr as Node>::Item: Element,
    {
        super::with_buffer(offsets, |o| {
            crate::algo::segsort::segmented_sorted_pairs_of(self, &values.into_expr(), o, opts)
        })
    }

    /// The `k` largest elements, largest first, and their `u32` indices
    /// (ties: the lower index first), as
    /// [`TopKOps::top_k`](crate::algo::topk::TopKOps::top_k) of the
    /// collected vector gives them, with nothing collected: on CUDA every
    /// kernel of the selection reads the expression where the buffer form
    /// reads the buffer (the sample, the filter, each radix pass over the
    /// input, the one-block form of short inputs), evaluating it again
    /// each time. `k = 0` gives empty results without reading anything.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Abs;
    /// let x = DeviceVec::from_slice(&Device::default()?, &[3i32, -9, 1, 9, -7])?;
    /// let top = x.map(Abs).top_k(3)?;
    /// assert_eq!(top.values.to_vec()?, vec![9, 9, 7]);
    /// assert_eq!(top.indices.to_vec()?, vec![1, 3, 4]);
    /// assert!(x.map(Abs).top_k(6).is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn top_k(&self, k: usize) -> Result<crate::algo::topk::TopK<Self::Item, u32>>
    where
        Self::Item: Element,
    {
        crate::algo::topk::top_k_of(self, k, crate::algo::topk::TopKOptions::largest())
    }

    /// [`top_k`](ExprOps::top_k) with the smallest first if `opts` says so,
    /// and indices of type `I` (`u32` or `u64`), as
    /// [`TopKOps::top_k_with`](crate::algo::topk::TopKOps::top_k_with).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::topk::TopKOptions;
    /// use cuprim::ops::Square;
    /// let dev = Device::default()?;
    /// // (i - 5)^2 for i in 0..10: the two smallest are at 5, then 4 and 6
    /// let x = counting(&dev, -5i64, 1, 10).map(Square);
    /// let low = x.top_k_with::<u64>(3, TopKOptions::smallest())?;
    /// assert_eq!((low.values.to_vec()?, low.indices.to_vec()?), (vec![0, 1, 1], vec![5, 4, 6]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn top_k_with<I: crate::element::IndexElement + Arith>(
        &self,
        k: usize,
        opts: crate::algo::topk::TopKOptions,
    ) -> Result<crate::algo::topk::TopK<Self::Item, I>>
    where
        Self::Item: Element,
    {
        crate::algo::topk::top_k_of(self, k, opts)
    }

    /// The element that would be at position `nth` if the elements were
    /// sorted ascending, as
    /// [`TopKOps::select_nth`](crate::algo::topk::TopKOps::select_nth)
    /// (the selection reads the expression; `nth` past the end is
    /// [`Error::InvalidArgument`]).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Negate;
    /// let x = DeviceVec::from_slice(&Device::default()?, &[7.5f32, -3.0, 12.0, 0.0, 5.0])?;
    /// assert_eq!(x.map(Negate).select_nth(2)?, -5.0); // the median of the negations
    /// assert!(x.map(Negate).select_nth(5).is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn select_nth(&self, nth: usize) -> Result<Self::Item>
    where
        Self::Item: Element,
    {
        crate::algo::topk::select_nth_of(self, nth)
    }

    /// Pairs as keys, sorted lexicographically (by the first field, ties by
    /// the second; stable), each field into a new vector of its own. Each
    /// field keeps [`sorted`](ExprOps::sorted)'s order (`total_cmp` for
    /// floats) whatever the fields' widths: two stable radix sorts of one
    /// field each carry the elements' positions (the second field first), and
    /// the second field is gathered once at the end.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let day = DeviceVec::from_slice(&dev, &[2u8, 1, 2, 1])?;
    /// let temp = DeviceVec::from_slice(&dev, &[-1.5f32, 3.0, -4.0, 0.5])?;
    /// let (d, t) = zip(&day, &temp).sorted_lex()?;
    /// assert_eq!((d.to_vec()?, t.to_vec()?), (vec![1, 1, 2, 2], vec![0.5, 3.0, -4.0, -1.5]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sorted_lex<A: Element, B: Element>(&self) -> Result<(DeviceVec<A>, DeviceVec<B>)>
    where
        Self: Expr<Item = (A, B)>,
    {
        crate::algo::sort::sorted_lex_of(self, crate::algo::sort::SortOptions::new())
    }

    /// [`sorted_lex`](ExprOps::sorted_lex) with
    /// [`SortOptions`](crate::algo::sort::SortOptions): `descending` orders
    /// every field from its largest (ties still keep their input order); a
    /// bit range is `InvalidArgument` (it would cut every field alike).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::sort::SortOptions;
    /// let dev = Device::default()?;
    /// let (a, b) = zip(counting(&dev, 0u32, 1, 4).map(cuprim::ops::Square), constant(&dev, 1i64, 4))
    ///     .sorted_lex_with(SortOptions::new().descending())?;
    /// assert_eq!((a.to_vec()?, b.to_vec()?), (vec![9, 4, 1, 0], vec![1, 1, 1, 1]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn sorted_lex_with<A: Element, B: Element>(&self, opts: crate::algo::sort::SortOptions) -> Result<(DeviceVec<A>, DeviceVec<B>)>
    where
        Self: Expr<Item = (A, B)>,
    {
        crate::algo::sort::sorted_lex_of(self, opts)
    }

    /// Triples as keys, sorted lexicographically (first field, then second,
    /// then third; stable), each field into a new vector of its own: three
    /// radix sorts of one field each, as [`sorted_lex`](ExprOps::sorted_lex).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let x = DeviceVec::from_slice(&dev, &[1u32, 0, 1, 0])?;
    /// let y = DeviceVec::from_slice(&dev, &[5i8, 5, 2, 5])?;
    /// let z = DeviceVec::from_slice(&dev, &[0.5f64, 2.0, 9.0, -1.0])?;
    /// let (a, b, c) = zip3(&x, &y, &z).sorted_lex3()?;
    /// assert_eq!(a.to_vec()?, vec![0, 0, 1, 1]);
    /// assert_eq!(b.to_vec()?, vec![5, 5, 2, 5]);
    /// assert_eq!(c.to_vec()?, vec![-1.0, 2.0, 9.0, 0.5]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn sorted_lex3<A: Element, B: Element, C: Element>(&self) -> Result<(DeviceVec<A>, DeviceVec<B>, DeviceVec<C>)>
    where
        Self: Expr<Item = (A, B, C)>,
    {
        crate::algo::sort::sorted_lex3_of(self, crate::algo::sort::SortOptions::new())
    }

    /// [`sorted_lex3`](ExprOps::sorted_lex3) with
    /// [`SortOptions`](crate::algo::sort::SortOptions) (descending; no bit
    /// range).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::sort::SortOptions;
    /// let dev = Device::default()?;
    /// let x = DeviceVec::from_slice(&dev, &[1u8, 0, 1])?;
    /// let (a, b, c) = zip3(&x, &x, counting(&dev, 0u32, 1, 3)).sorted_lex3_with(SortOptions::new().descending())?;
    /// assert_eq!((a.to_vec()?, b.to_vec()?, c.to_vec()?), (vec![1, 1, 0], vec![1, 1, 0], vec![2, 0, 1]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn sorted_lex3_with<A: Element, B: Element, C: Element>(
        &self,
        opts: crate::algo::sort::SortOptions,
    ) -> Result<(DeviceVec<A>, DeviceVec<B>, DeviceVec<C>)>
    where
        Self: Expr<Item = (A, B, C)>,
    {
        crate::algo::sort::sorted_lex3_of(self, opts)
    }

    /// Pairs as keys sorted lexicographically, as
    /// [`sorted_lex`](ExprOps::sorted_lex), with `values` (a buffer or an
    /// expression, as long as the keys) following their keys: the key
    /// fields and the values in three new vectors. The values are read once,
    /// gathered in the keys' final order.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let city = DeviceVec::from_slice(&dev, &[3u8, 1, 3, 1])?;
    /// let year = DeviceVec::from_slice(&dev, &[2024i32, 2025, 2023, 2025])?;
    /// let (c, y, row) = zip(&city, &year).sorted_lex_pairs(counting(&dev, 0u32, 1, 4))?;
    /// assert_eq!(c.to_vec()?, vec![1, 1, 3, 3]);
    /// assert_eq!(y.to_vec()?, vec![2025, 2025, 2023, 2024]);
    /// assert_eq!(row.to_vec()?, vec![1, 3, 2, 0]); // ties keep their input order
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn sorted_lex_pairs<A: Element, B: Element, V: super::IntoExpr>(
        &self,
        values: V,
    ) -> Result<(DeviceVec<A>, DeviceVec<B>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self: Expr<Item = (A, B)>,
        <V::Expr as Node>::Item: Element,
    {
        crate::algo::sort::sorted_lex_pairs_of(self, values, crate::algo::sort::SortOptions::new())
    }

    /// [`sorted_lex_pairs`](ExprOps::sorted_lex_pairs) with
    /// [`SortOptions`](crate::algo::sort::SortOptions) (descending; no bit
    /// range).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::sort::SortOptions;
    /// let dev = Device::default()?;
    /// let k = DeviceVec::from_slice(&dev, &[1u32, 2, 1])?;
    /// let (a, b, v) = zip(&k, &k).sorted_lex_pairs_with(&k, SortOptions::new().descending())?;
    /// assert_eq!((a.to_vec()?, b.to_vec()?, v.to_vec()?), (vec![2, 1, 1], vec![2, 1, 1], vec![2, 1, 1]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn sorted_lex_pairs_with<A: Element, B: Element, V: super::IntoExpr>(
        &self,
        values: V,
        opts: crate::algo::sort::SortOptions,
    ) -> Result<(DeviceVec<A>, DeviceVec<B>, DeviceVec<<V::Expr as Node>::Item>)>
    where
        Self: Expr<Item = (A, B)>,
        <V::Expr as Node>::Item: Element,
    {
        crate::algo::sort::sorted_lex_pairs_of(self, values, opts)
    }

    /// The elements as keys and tuple `values` (an expression of pairs as
    /// long as the keys) sorted by key, as
    /// [`sorted_pairs`](ExprOps::sorted_pairs) (stable), each field of the
    /// values into a new vector of its own: the keys are sorted with their
    /// positions, then the values read once through them.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let score = DeviceVec::from_slice(&dev, &[0.5f32, -1.0, 0.25])?;
    /// let id = DeviceVec::from_slice(&dev, &[7u32, 8, 9])?;
    /// let weight = DeviceVec::from_slice(&dev, &[1.0f64, 2.0, 3.0])?;
    /// let (s, i, w) = score.lazy().sorted_pairs_unzip(zip(&id, &weight))?;
    /// assert_eq!((s.to_vec()?, i.to_vec()?, w.to_vec()?), (vec![-1.0, 0.25, 0.5], vec![8, 9, 7], vec![2.0, 3.0, 1.0]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn sorted_pairs_unzip<V: super::IntoExpr, A: Element, B: Element>(
        &self,
        values: V,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<A>, DeviceVec<B>)>
    where
        Self::Item: Element,
        V::Expr: Expr<Item = (A, B)>,
    {
        crate::algo::sort::sorted_pairs_unzip_of(self, &values.into_expr(), crate::algo::sort::SortOptions::new())
    }

    /// [`sorted_pairs_unzip`](ExprOps::sorted_pairs_unzip) with
    /// [`SortOptions`](crate::algo::sort::SortOptions).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::algo::sort::SortOptions;
    /// let dev = Device::default()?;
    /// let k = DeviceVec::from_slice(&dev, &[1u8, 3, 2])?;
    /// let (s, a, b) = k.lazy().sorted_pairs_unzip_with(zip(&k, counting(&dev, 0i64, 1, 3)), SortOptions::new().descending())?;
    /// assert_eq!((s.to_vec()?, a.to_vec()?, b.to_vec()?), (vec![3, 2, 1], vec![3, 2, 1], vec![1, 2, 0]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn sorted_pairs_unzip_with<V: super::IntoExpr, A: Element, B: Element>(
        &self,
        values: V,
        opts: crate::algo::sort::SortOptions,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<A>, DeviceVec<B>)>
    where
        Self::Item: Element,
        V::Expr: Expr<Item = (A, B)>,
    {
        crate::algo::sort::sorted_pairs_unzip_of(self, &values.into_expr(), opts)
    }

    /// The elements as keys and triple `values` sorted by key, as
    /// [`sorted_pairs_unzip`](ExprOps::sorted_pairs_unzip), each field of
    /// the values into a new vector of its own.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let k = DeviceVec::from_slice(&dev, &[2i32, 1])?;
    /// let (s, a, b, c) = k.lazy().sorted_pairs_unzip3(zip3(&k, &k, counting(&dev, 0u8, 1, 2)))?;
    /// assert_eq!((s.to_vec()?, a.to_vec()?, b.to_vec()?, c.to_vec()?), (vec![1, 2], vec![1, 2], vec![1, 2], vec![1, 0]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn sorted_pairs_unzip3<V: super::IntoExpr, A: Element, B: Element, C: Element>(
        &self,
        values: V,
    ) -> Result<(DeviceVec<Self::Item>, DeviceVec<A>, DeviceVec<B>, DeviceVec<C>)>
    where
        Self::Item: Element,
        V::Expr: Expr<Item = (A, B, C)>,
    {
        crate::algo::sort::sorted_pairs_unzip3_of(self, &values.into_expr(), crate::algo::sort::SortOptions::new())
    }

    /// Thrust's adjacent difference of the elements, as
    /// [`TransformOps::adjacent_difference`](crate::algo::transform::TransformOps::adjacent_difference)
    /// (`out[0] = x[0]`, `out[i] = op(x[i], x[i - 1])`, any
    /// [`BinaryOp`](crate::ops::BinaryOp)), into a new vector: the
    /// expression is read in place (no collected copy), the neighbours' second
    /// read mostly from cache.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::{Square, Sub};
    /// let dev = Device::default()?;
    /// // Differences of squares: the odd numbers.
    /// let d = counting(&dev, 0i64, 1, 5).map(Square).adjacent_difference(Sub)?;
    /// assert_eq!(d.to_vec()?, vec![0, 1, 3, 5, 7]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn adjacent_difference<Op: crate::ops::BinaryOp<Self::Item>>(&self, op: Op) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Element,
    {
        crate::algo::transform::adjacent_expr::adjacent_difference_of(self, op)
    }

    /// The elements in a new vector (one pass, no other temporary): what
    /// every primitive without a fused form takes. Elements, or points
    /// `[F; D]` (a gather of points for brute-force kNN, say).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// let dev = Device::default()?;
    /// let mut squares: DeviceVec<i32> = counting(&dev, -2i32, 1, 5).map(Square).collect()?;
    /// squares.sort()?;                      // any primitive takes the collected vector
    /// assert_eq!(squares.to_vec()?, vec![0, 1, 1, 4, 4]);
    /// let pts = DeviceVec::from_slice(&dev, &[[0.0f32; 4], [1.0; 4], [2.0; 4]])?;
    /// let idx = DeviceVec::from_slice(&dev, &[2u32, 0])?;
    /// let picked: DeviceVec<[f32; 4]> = pts.permute(&idx).collect()?;
    /// let nn = nearest_neighbors(&pts, &picked, 1)?;
    /// assert_eq!(nn.indices.to_vec()?, vec![2, 0]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn collect(&self) -> Result<DeviceVec<Self::Item>>
    where
        Self::Item: Storable,
    {
        let dev = prepare(self)?;
        let mut out = DeviceVec::<Self::Item>::alloc_uninit(self.device(), self.length())?;
        match (dev, out.mem_mut()) {
            (None, MemMut::Host(o)) => o.copy_from_slice(&host_values(self)?),
            (Some(dev), MemMut::Cuda { ptr, .. }) => {
                Collect::new(dev.arch(), self, 1).run(dev, [Ptr::from_raw(ptr), Ptr::null(), Ptr::null()])?
            }
            _ => return Err(Error::DeviceMismatch { op: "collect" }),
        }
        Ok(out)
    }

    /// Writes the elements to `out`, which must be as long as the
    /// expression: a transform into an existing buffer
    /// (`x.map(f).collect_into(&mut out)`), a fill, a sequence or a gather
    /// ([`permute_by`](super::Expr::permute_by)) in one pass. After an
    /// [`Error::IndexOutOfBounds`] `out` holds unspecified values.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// use cuprim::ops::Square;
    /// let dev = Device::default()?;
    /// let x = DeviceVec::from_slice(&dev, &[1.5f32, -2.0, 3.0])?;
    /// let mut out = DeviceVec::<f32>::zeros(&dev, 3)?;
    /// x.map(Square).collect_into(&mut out)?;
    /// assert_eq!(out.to_vec()?, vec![2.25, 4.0, 9.0]);
    /// assert!(x.map(Square).collect_into(&mut DeviceVec::<f32>::zeros(&dev, 2)?).is_err());
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn collect_into(&self, out: &mut impl crate::DeviceDataMut<Self::Item>) -> Result<()>
    where
        Self::Item: Storable,
    {
        let dev = prepare(self)?;
        crate::algo::same_device("collect_into", self.device(), out.device())?;
        crate::algo::same_len("collect_into", self.length(), out.len())?;
        match (dev, out.mem_mut()) {
            (None, MemMut::Host(o)) => o.copy_from_slice(&host_items(self)?),
            (Some(dev), MemMut::Cuda { ptr, .. }) => {
                Collect::new(dev.arch(), self, 1).run(dev, [Ptr::from_raw(ptr), Ptr::null(), Ptr::null()])?
            }
            _ => return Err(Error::DeviceMismatch { op: "collect_into" }),
        }
        Ok(())
    }

    /// The two fields of a tuple expression written to `a` and `b` (each as
    /// long as the expression) in one pass.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let (mut a, mut b) = (DeviceVec::<u32>::zeros(&dev, 3)?, DeviceVec::<f64>::zeros(&dev, 3)?);
    /// zip(counting(&dev, 1u32, 1, 3), constant(&dev, 0.25f64, 3)).unzip_into(&mut a, &mut b)?;
    /// assert_eq!((a.to_vec()?, b.to_vec()?), (vec![1, 2, 3], vec![0.25; 3]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn unzip_into<A: Element, B: Element>(&self, a: &mut impl crate::DeviceDataMut<A>, b: &mut impl crate::DeviceDataMut<B>) -> Result<()>
    where
        Self: Expr<Item = (A, B)>,
    {
        const OP: &str = "unzip_into";
        let dev = prepare(self)?;
        crate::algo::same_device(OP, self.device(), a.device())?;
        crate::algo::same_device(OP, self.device(), b.device())?;
        crate::algo::same_len(OP, self.length(), a.len())?;
        crate::algo::same_len(OP, self.length(), b.len())?;
        match (dev, a.mem_mut(), b.mem_mut()) {
            (None, MemMut::Host(oa), MemMut::Host(ob)) => {
                for (i, (x, y)) in host_items(self)?.iter().copied().enumerate() {
                    (oa[i], ob[i]) = (x, y);
                }
            }
            (Some(dev), MemMut::Cuda { ptr: pa, .. }, MemMut::Cuda { ptr: pb, .. }) => {
                Collect::new(dev.arch(), self, 2).run(dev, [Ptr::from_raw(pa), Ptr::from_raw(pb), Ptr::null()])?
            }
            _ => return Err(Error::DeviceMismatch { op: OP }),
        }
        Ok(())
    }

    /// The two fields of a tuple expression in two new vectors, written in
    /// one pass (no tuple array in between).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let (a, b) = zip(counting(&dev, 0u32, 1, 3), constant(&dev, 0.5f32, 3)).unzip()?;
    /// assert_eq!((a.to_vec()?, b.to_vec()?), (vec![0, 1, 2], vec![0.5; 3]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn unzip<A: Element, B: Element>(&self) -> Result<(DeviceVec<A>, DeviceVec<B>)>
    where
        Self: Expr<Item = (A, B)>,
    {
        let dev = prepare(self)?;
        let (n, d) = (self.length(), self.device());
        let (mut a, mut b) = (DeviceVec::<A>::alloc_uninit(d, n)?, DeviceVec::<B>::alloc_uninit(d, n)?);
        match (dev, a.mem_mut(), b.mem_mut()) {
            (None, MemMut::Host(oa), MemMut::Host(ob)) => {
                for (i, (x, y)) in host_values(self)?.into_iter().enumerate() {
                    (oa[i], ob[i]) = (x, y);
                }
            }
            (Some(dev), MemMut::Cuda { ptr: pa, .. }, MemMut::Cuda { ptr: pb, .. }) => {
                Collect::new(dev.arch(), self, 2).run(dev, [Ptr::from_raw(pa), Ptr::from_raw(pb), Ptr::null()])?
            }
            _ => return Err(Error::DeviceMismatch { op: "unzip" }),
        }
        Ok((a, b))
    }

    /// The three fields of a triple expression in three new vectors, in one pass.
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// let t = zip3(counting(&dev, 1u8, 1, 2), constant(&dev, 7i64, 2), counting(&dev, 0.0f64, 0.5, 2));
    /// let (a, b, c) = t.unzip3()?;
    /// assert_eq!((a.to_vec()?, b.to_vec()?, c.to_vec()?), (vec![1, 2], vec![7, 7], vec![0.0, 0.5]));
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn unzip3<A: Element, B: Element, C: Element>(&self) -> Result<(DeviceVec<A>, DeviceVec<B>, DeviceVec<C>)>
    where
        Self: Expr<Item = (A, B, C)>,
    {
        let dev = prepare(self)?;
        let (n, d) = (self.length(), self.device());
        let mut a = DeviceVec::<A>::alloc_uninit(d, n)?;
        let mut b = DeviceVec::<B>::alloc_uninit(d, n)?;
        let mut c = DeviceVec::<C>::alloc_uninit(d, n)?;
        match (dev, a.mem_mut(), b.mem_mut(), c.mem_mut()) {
            (None, MemMut::Host(oa), MemMut::Host(ob), MemMut::Host(oc)) => {
                for (i, (x, y, z)) in host_values(self)?.into_iter().enumerate() {
                    (oa[i], ob[i], oc[i]) = (x, y, z);
                }
            }
            (Some(dev), MemMut::Cuda { ptr: pa, .. }, MemMut::Cuda { ptr: pb, .. }, MemMut::Cuda { ptr: pc, .. }) => {
                let out = [Ptr::from_raw(pa), Ptr::from_raw(pb), Ptr::from_raw(pc)];
                Collect::new(dev.arch(), self, 3).run(dev, out)?
            }
            _ => return Err(Error::DeviceMismatch { op: "unzip3" }),
        }
        Ok((a, b, c))
    }

    /// The elements on the host, in order (tuples included).
    ///
    /// ```
    /// # use cuprim::prelude::*;
    /// let dev = Device::default()?;
    /// assert_eq!(counting(&dev, 5i8, -2, 4).to_vec()?, vec![5, 3, 1, -1]);
    /// # Ok::<(), cuprim::Error>(())
    /// ```
    fn to_vec(&self) -> Result<Vec<Self::Item>> {
        let Some(dev) = prepare(self)? else {
            return host_values(self);
        };
        let size = <Self::Item as Value>::C_SIZE;
        let total = self.length().checked_mul(size).ok_or(Error::OutOfMemory { bytes: usize::MAX })?;
        let mut bytes = DeviceVec::<u8>::alloc_uninit(self.device(), total)?;
        if let MemMut::Cuda { ptr, .. } = bytes.mem_mut() {
            Collect::new(dev.arch(), self, 1).run(dev, [Ptr::from_raw(ptr), Ptr::null(), Ptr::null()])?;
        }
        let bytes = crate::DeviceData::to_vec(&bytes)?;
        Ok(bytes.chunks_exact(size.max(1)).map(<Self::Item as Value>::read_c).collect())
    }
}

impl<E: Expr> ExprOps for E {}

fn scan<E: Expr, Op: Monoid<E::Item>>(e: &E, op: Op, exclusive: bool) -> Result<DeviceVec<E::Item>>
where
    E::Item: Element,
{
    let dev = prepare(e)?;
    let mut out = DeviceVec::<E::Item>::alloc_uninit(e.device(), e.length())?;
    match (dev, out.mem_mut()) {
        (None, MemMut::Host(o)) => {
            let v = host_values(e)?;
            crate::algo::scan::host::scan(&v, o, op.identity(), exclusive, |a, b| op.apply(a, b));
        }
        (Some(dev), MemMut::Cuda { ptr, .. }) => {
            Scan::new(dev.arch(), e, &op, dev.deterministic_for::<E::Item>()).run(dev, Ptr::from_raw(ptr), exclusive, Ptr::null())?
        }
        _ => return Err(Error::DeviceMismatch { op: "scan" }),
    }
    Ok(out)
}

/// The scan of a tuple expression into new vectors, one per field (`S`):
/// the host backend scans the tuples and unzips them, the device writes
/// each field from the kernel.
fn scan_unzip_of<E: Expr, Op: Monoid<E::Item>, S: crate::algo::bykey::Sink<E::Item>>(
    e: &E,
    op: Op,
    exclusive: bool,
    name: &'static str,
) -> Result<S> {
    match prepare(e)? {
        None => {
            let mut v = host_values(e)?;
            crate::algo::scan::host::scan_in_place(&mut v, op.identity(), exclusive, |a, b| op.apply(a, b));
            S::from_host(e.device(), &v)
        }
        Some(dev) => {
            let mut out = S::alloc(e.device(), e.length())?;
            let deterministic = <E::Item as Value>::HAS_FLOAT && dev.is_deterministic();
            Scan::new(dev.arch(), e, &op, deterministic).run_unzip(dev, out.ptrs(name)?, exclusive)?;
            Ok(out)
        }
    }
}

/// find_first of an expression (a buffer being the one-leaf one): the
/// host's parallel search, or `kernels/reduce/find.cu`.
pub(crate) fn find_first<E: Node, P: Predicate<E::Item>>(e: &E, pred: P) -> Result<Option<usize>>
where
    E::Item: Element,
{
    match prepare(e)? {
        None => Ok(crate::algo::reduce::host::find_first(&host_items(e)?, |x| pred.test(x))),
        Some(dev) => FindPlan::new(dev.arch(), e, &pred).run(dev),
    }
}

/// vote of an expression: the host's words, or `kernels/collective/vote.cu`.
pub(crate) fn vote<E: Node, P: Predicate<E::Item>>(e: &E, pred: P) -> Result<DeviceVec<u32>>
where
    E::Item: Element,
{
    let dev = prepare(e)?;
    let mut out = DeviceVec::<u32>::alloc_uninit(e.device_ref(), e.length().div_ceil(32))?;
    match (dev, out.mem_mut()) {
        (None, MemMut::Host(o)) => crate::algo::collective::host::vote(&host_items(e)?, o, |x| pred.test(x)),
        (Some(dev), MemMut::Cuda { ptr, .. }) => VotePlan::new(dev.arch(), e, &pred).run(dev, Ptr::from_raw(ptr))?,
        _ => return Err(Error::DeviceMismatch { op: "vote" }),
    }
    Ok(out)
}

/// quantify of an expression: the host's two searches, or
/// `kernels/collective/race.cu`.
pub(crate) fn quantify<E: Node, P: Predicate<E::Item>>(e: &E, pred: P) -> Result<crate::algo::collective::Quantity>
where
    E::Item: Element,
{
    use crate::algo::collective::Quantity;
    let matches = match prepare(e)? {
        None => crate::algo::collective::host::quantify(&host_items(e)?, |x| pred.test(x)) as u64,
        Some(dev) => RacePlan::new(dev.arch(), e, &pred).quantify(dev)?,
    };
    Ok(match matches {
        0 => Quantity::None,
        1 => Quantity::One,
        _ => Quantity::Many,
    })
}

/// select_one of an expression: the host's lowest match, or
/// `kernels/collective/race.cu`'s first reported one.
pub(crate) fn select_one<E: Node, P: Predicate<E::Item>>(e: &E, pred: P) -> Result<Option<usize>>
where
    E::Item: Element,
{
    match prepare(e)? {
        None => Ok(crate::algo::reduce::host::find_first(&host_items(e)?, |x| pred.test(x))),
        Some(dev) => RacePlan::new(dev.arch(), e, &pred).select_one(dev),
    }
}

/// Checks every index of a permuting input (`IndexOutOfBounds` as on the
/// host; one read of them) for a call that reads only some of its elements,
/// or none because its output is empty. Other inputs: nothing to do.
pub(crate) fn check_indices<E: Node>(e: &E) -> Result<()>
where
    E::Item: Element,
{
    if E::CHECKED && e.length() > 0 {
        arg_extreme(e, false)?;
    }
    Ok(())
}

/// min_element / max_element of an expression: a reduction over (value,
/// index) pairs, the buffer form's rule.
pub(crate) fn arg_extreme<E: Node>(e: &E, greatest: bool) -> Result<Option<(usize, E::Item)>>
where
    E::Item: Element,
{
    let dev = prepare(e)?;
    if e.length() == 0 {
        return Ok(None);
    }
    let (value, index) = match dev {
        None => host_arg_extreme(e, greatest)?,
        Some(dev) => {
            let k = Extreme {
                arch: dev.arch(),
                input: e,
                greatest,
                index_out: 0,
            };
            let bytes = rd::to_host(&k, dev)?;
            (<E::Item as Value>::read_c(&bytes), u64::read_c(&bytes[8..]))
        }
    };
    Ok(Some((index as usize, value)))
}

/// The host backend's (value, index) of the least (greatest) item, ties to
/// the lower index; `(identity, u64::MAX)` when empty.
fn host_arg_extreme<E: Node>(e: &E, greatest: bool) -> Result<(E::Item, u64)>
where
    E::Item: Element,
{
    let v = host_values(e)?;
    let worst = rd::arg_identity::<E::Item>(greatest);
    let better = |a: (E::Item, u64), b: (E::Item, u64)| {
        let b_wins = ranks_before(b.0, a.0, greatest) || (!ranks_before(a.0, b.0, greatest) && b.1 < a.1);
        if b_wins {
            b
        } else {
            a
        }
    };
    Ok(crate::algo::reduce::host::map_reduce(
        &v,
        (worst, u64::MAX),
        |x, i| (x, i as u64),
        better,
    ))
}

/// min_element_to / max_element_to: the index to `index[0]` and the value
/// to `value[0]`, queued on the device (no host synchronisation); for an
/// empty input `u64::MAX` and the order's identity.
pub(crate) fn arg_extreme_to<E: Node>(
    e: &E,
    greatest: bool,
    index: &mut (impl crate::vec::DeviceDataMut<u64> + ?Sized),
    value: &mut (impl crate::vec::DeviceDataMut<E::Item> + ?Sized),
) -> Result<()>
where
    E::Item: Element,
{
    let op = if greatest { "max_element_to" } else { "min_element_to" };
    let dev = prepare(e)?;
    crate::algo::same_device(op, e.device_ref(), index.device())?;
    crate::algo::same_device(op, e.device_ref(), value.device())?;
    if index.len() == 0 || value.len() == 0 {
        return Err(Error::InvalidArgument(format!(
            "{op}: the index and value outputs need one element each"
        )));
    }
    match (dev, index.mem_mut(), value.mem_mut()) {
        (None, MemMut::Host(i), MemMut::Host(v)) => {
            (v[0], i[0]) = host_arg_extreme(e, greatest)?;
            Ok(())
        }
        (Some(dev), MemMut::Cuda { ptr: index_ptr, .. }, MemMut::Cuda { ptr: value_ptr, .. }) => {
            let k = Extreme {
                arch: dev.arch(),
                input: e,
                greatest,
                index_out: index_ptr,
            };
            rd::to_device(&k, dev, Ptr::from_raw(value_ptr))
        }
        _ => Err(Error::DeviceMismatch { op }),
    }
}
