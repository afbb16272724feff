// k-nearest-neighbour helpers shared by build.cu, query.cu and brute.cu.
//
// Specialised on: F (float or double, the coordinate type), CUPRIM_DIM (the
// number of coordinates), CUPRIM_K (the candidate list: a compile-time
// capacity 1..64 held in registers, or 0 for a max-heap in global memory,
// any k up to 1024; query.cu may hold the capacity in a heap in shared
// memory instead, KnnColumnHeap).
//
// Semantics, identical on the host backend (src/algo/knn/host.rs, src/algo/knn/geometry.rs):
// - squared distance = fma chain over the dimensions in order 0..D-1,
//   acc = fma(q[j] - p[j], q[j] - p[j], acc), starting from +0;
// - candidates are ordered by (squared distance, point index); a candidate
//   whose squared distance is NaN is never taken (comparisons with NaN are
//   false), so a point with a NaN coordinate is never a neighbour;
// - an empty slot is (+inf, 0xffffffff): any real point, even at an
//   infinite distance, orders before it.

#define KNN_MISSING 0xffffffffu

// A coordinate's bits, and back.
__device__ __forceinline__ u32 knn_bits(float x) { return __float_as_uint(x); }
__device__ __forceinline__ u64 knn_bits(double x) { return (u64)__double_as_longlong(x); }
__device__ __forceinline__ float knn_of_bits(u32 b) { return __uint_as_float(b); }
__device__ __forceinline__ double knn_of_bits(u64 b) { return __longlong_as_double((long long)b); }

// Points of an input expression (src/expr/; CUPRIM_KNN_X, build.cu and
// query.cu): KnnIn yields cuprim_arr<F, CUPRIM_DIM> (points of any
// dimension), or F, cuprim_t2<F, F> or cuprim_t3<F, F, F> (CUPRIM_DIM 1 to
// 3), the coordinates in order.
#ifndef CUPRIM_KNN_X
#define CUPRIM_KNN_X 0
#endif
#if CUPRIM_KNN_X
__device__ __forceinline__ void knn_coords(const F& x, F (&c)[1]) { c[0] = x; }
__device__ __forceinline__ void knn_coords(const cuprim_t2<F, F>& x, F (&c)[2]) {
    c[0] = x.a0;
    c[1] = x.a1;
}
__device__ __forceinline__ void knn_coords(const cuprim_t3<F, F, F>& x, F (&c)[3]) {
    c[0] = x.a0;
    c[1] = x.a1;
    c[2] = x.a2;
}
__device__ __forceinline__ void knn_coords(const cuprim_arr<F, CUPRIM_DIM>& x, F (&c)[CUPRIM_DIM]) {
#pragma unroll
    for (int j = 0; j < CUPRIM_DIM; j++) c[j] = x.v[j];
}
// Coordinate `dim` of a point (selects, not an indexed local array).
__device__ __forceinline__ F knn_pick(F x, u32) { return x; }
__device__ __forceinline__ F knn_pick(cuprim_t2<F, F> x, u32 dim) { return dim == 0 ? x.a0 : x.a1; }
__device__ __forceinline__ F knn_pick(cuprim_t3<F, F, F> x, u32 dim) { return dim == 0 ? x.a0 : dim == 1 ? x.a1 : x.a2; }
// Of a point of any dimension: the coordinates' bits masked and or-ed (a
// chain of selects became an indexed local array, a stack frame).
__device__ __forceinline__ F knn_pick(const cuprim_arr<F, CUPRIM_DIM>& x, u32 dim) {
    typedef decltype(knn_bits(F(0))) B;
    B r = 0;
#pragma unroll
    for (int j = 0; j < CUPRIM_DIM; j++) r |= knn_bits(x.v[j]) & ((B)0 - (B)(dim == (u32)j));
    return knn_of_bits(r);
}
// Coordinate `dim` of point i of an expression node: of a buffer of points
// that coordinate alone, of a gather the gathered point's (its index
// checked as cuprim_x_perm::at checks it, block/expr.cuh), of any other
// node picked from the whole point.
template <typename E> struct knn_x {
    static __device__ __forceinline__ F coord(const E& in, u64 i, u32 dim) { return knn_pick(in.load(i), dim); }
};
template <> struct knn_x<cuprim_x_arr<F, CUPRIM_DIM>> {
    static __device__ __forceinline__ F coord(const cuprim_x_arr<F, CUPRIM_DIM>& in, u64 i, u32 dim) {
        return cuprim_load_ro(in.p + i * CUPRIM_DIM + dim);
    }
};
template <typename E, typename J> struct knn_x<cuprim_x_perm<E, J>> {
    static __device__ __forceinline__ F coord(const cuprim_x_perm<E, J>& in, u64 i, u32 dim) {
        u64 j = (u64)in.idx.load(i);
        if (j >= in.bound) {
            *(volatile u32*)in.error = 1u;
            if (in.bound == 0) return F(0);
            j = 0;
        }
        return knn_x<E>::coord(in.e, j, dim);
    }
};
__device__ __forceinline__ F knn_coord(const KnnIn& in, u64 i, u32 dim) { return knn_x<KnnIn>::coord(in, i, dim); }
#endif

__device__ __forceinline__ float knn_fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double knn_fma(double a, double b, double c) { return fma(a, b, c); }
__device__ __forceinline__ float knn_sqrt(float a) { return sqrtf(a); }
__device__ __forceinline__ double knn_sqrt(double a) { return sqrt(a); }
__device__ __forceinline__ float knn_inf(float) { return __int_as_float(0x7f800000); }
__device__ __forceinline__ double knn_inf(double) { return __longlong_as_double(0x7ff0000000000000ll); }

// (da, ia) < (db, ib), lexicographically. False whenever da is NaN.
__device__ __forceinline__ bool knn_less(F da, u32 ia, F db, u32 ib) {
    return da < db || (da == db && ia < ib);
}

// A kd-tree node: the point's coordinates and its original index, padded
// to a multiple of 16 bytes so that a node is one or two 16-byte loads.
struct __align__(16) KnnNode {
    F c[CUPRIM_DIM];
    u32 idx;
};
constexpr int KNN_NODE_VECS = sizeof(KnnNode) / 16;

union KnnNodeWords {
    KnnNode n;
    uint4 w[KNN_NODE_VECS];
    __device__ __forceinline__ KnnNodeWords() {}
};

__device__ __forceinline__ KnnNode knn_load_node(const KnnNode* __restrict__ nodes, u32 i) {
    KnnNodeWords u;
    const uint4* src = reinterpret_cast<const uint4*>(nodes + i);
#pragma unroll
    for (int j = 0; j < KNN_NODE_VECS; j++) u.w[j] = __ldg(src + j);
    return u.n;
}

// The tight bounding box of a subtree's points (those without a NaN
// coordinate; an empty box is lo = +inf, hi = -inf), padded to a multiple
// of 16 bytes. The upper levels of the tree keep one per node.
struct __align__(16) KnnBox {
    F lo[CUPRIM_DIM];
    F hi[CUPRIM_DIM];
};
constexpr int KNN_BOX_VECS = sizeof(KnnBox) / 16;

union KnnBoxWords {
    KnnBox b;
    uint4 w[KNN_BOX_VECS];
    __device__ __forceinline__ KnnBoxWords() {}
};

__device__ __forceinline__ KnnBox knn_load_box(const KnnBox* __restrict__ boxes, u32 i) {
    KnnBoxWords u;
    const uint4* src = reinterpret_cast<const uint4*>(boxes + i);
#pragma unroll
    for (int j = 0; j < KNN_BOX_VECS; j++) u.w[j] = __ldg(src + j);
    return u.b;
}

// The squared distance from the query to a point, as defined above: the
// fma chain of the coordinate differences in dimension order, from +0.
__device__ __forceinline__ F knn_dist2(const F (&q)[CUPRIM_DIM], const F (&p)[CUPRIM_DIM]) {
    F acc = F(0);
#pragma unroll
    for (int j = 0; j < CUPRIM_DIM; j++) {
        const F e = q[j] - p[j];
        acc = knn_fma(e, e, acc);
    }
    return acc;
}

// max(x, 0), and 0 for NaN.
__device__ __forceinline__ float knn_max0(float x) { return fmaxf(x, 0.0f); }
__device__ __forceinline__ double knn_max0(double x) { return fmax(x, 0.0); }

// Squared distance from the query to a box: the fma chain of the squared
// distances, in dimension order, of the per-axis gaps (0 inside the slab).
// A lower bound of the squared distance to every point in the box (each gap
// is at most |q[j] - p[j]| since rounding is monotone, and the chain is
// monotone in its terms), so a subtree is pruned only when this is strictly
// greater than the k-th candidate. Never NaN for a query without NaN.
__device__ __forceinline__ F knn_box_dist(const F (&q)[CUPRIM_DIM], const KnnBox& b) {
    F acc = F(0);
#pragma unroll
    for (int j = 0; j < CUPRIM_DIM; j++) {
        // Branch-free: at most one term is positive; a NaN difference (an
        // infinite query coordinate on an infinite bound) counts as 0.
        const F e = knn_max0(b.lo[j] - q[j]) + knn_max0(q[j] - b.hi[j]);
        acc = knn_fma(e, e, acc);
    }
    return acc;
}

// The candidate list of one query: the k best (squared distance, index)
// pairs seen so far, ascending. `wd`/`wi` is the k-th (the one to beat).
//
// Registers: CUPRIM_K slots, of which the last k are the list; the first
// CUPRIM_K - k hold (-inf, 0), below any candidate (squared distances are
// never negative), so they are never displaced and the k-th best is always
// the last slot: every index is a compile-time constant, nothing goes to
// local memory.
#if CUPRIM_K > 0
struct KnnList {
    F d[CUPRIM_K];
    u32 id[CUPRIM_K];
    u32 k;

    __device__ __forceinline__ void init(u32 k_, F*, u32*) {
        k = k_;
#pragma unroll
        for (int j = 0; j < CUPRIM_K; j++) {
            const bool real = (u32)j + k_ >= CUPRIM_K;
            d[j] = real ? knn_inf(F(0)) : -knn_inf(F(0));
            id[j] = real ? KNN_MISSING : 0u;
        }
    }

    __device__ __forceinline__ F worst_d() const { return d[CUPRIM_K - 1]; }
    __device__ __forceinline__ u32 worst_i() const { return id[CUPRIM_K - 1]; }

    __device__ __forceinline__ void offer(F d2, u32 i) {
        if (!knn_less(d2, i, d[CUPRIM_K - 1], id[CUPRIM_K - 1])) return;
        // Insertion from the top: slot j takes slot j-1 when the candidate
        // sorts before slot j-1, else the candidate when it sorts before
        // slot j.
#pragma unroll
        for (int j = CUPRIM_K - 1; j > 0; j--) {
            if (knn_less(d2, i, d[j - 1], id[j - 1])) {
                d[j] = d[j - 1];
                id[j] = id[j - 1];
            } else if (knn_less(d2, i, d[j], id[j])) {
                d[j] = d2;
                id[j] = i;
            }
        }
        if (knn_less(d2, i, d[0], id[0])) {
            d[0] = d2;
            id[0] = i;
        }
    }

    // Writes the k slots, ascending, to dd[j * stride] and ii[j * stride].
    // (finish, below, is the same loop over a row with square roots: written
    // on this one, the walks' kernels compiled to 5-20% more instructions.)
    __device__ __forceinline__ void spill(F* __restrict__ dd, u32* __restrict__ ii, u32 stride) const {
        const int skip = CUPRIM_K - (int)k;
#pragma unroll
        for (int j = 0; j < CUPRIM_K; j++) {
            if (j >= skip) {
                dd[(j - skip) * stride] = d[j];
                ii[(j - skip) * stride] = id[j];
            }
        }
    }

    // Writes the k slots: distances (square roots when `root`) and indices.
    __device__ __forceinline__ void finish(F* __restrict__ out_d, u32* __restrict__ out_i, bool root) {
        const int skip = CUPRIM_K - (int)k;
#pragma unroll
        for (int j = 0; j < CUPRIM_K; j++) {
            if (j >= skip) {
                out_d[j - skip] = root ? knn_sqrt(d[j]) : d[j];
                out_i[j - skip] = id[j];
            }
        }
    }
};
#endif

// A candidate: squared distance and point index, ordered by knn_less.
struct KnnCand {
    F d;
    u32 i;
};

// The slots of a heap: slot j of a row of global memory (COLUMN false) or
// of this thread's column of shared memory (at j * blockDim.x: lanes never
// conflict, whatever slot each touches), as (distance, index) in two
// arrays.
template <bool COLUMN>
struct KnnPairSlots {
    F* hd;
    u32* hi;
    __device__ __forceinline__ u32 at(u32 j) const { return COLUMN ? j * blockDim.x : j; }
    __device__ __forceinline__ KnnCand load(u32 j) const { return KnnCand{hd[at(j)], hi[at(j)]}; }
    __device__ __forceinline__ void store(u32 j, KnnCand c) {
        hd[at(j)] = c.d;
        hi[at(j)] = c.i;
    }
    __device__ __forceinline__ static bool before(KnnCand a, KnnCand b) { return knn_less(a.d, a.i, b.d, b.i); }
};

// f32 distances only: a column of one u64 per slot, the distance's bits
// above the index. Squared distances are in [+0, +inf] (NaN is never
// stored), where the unsigned order of the bits is the order of the
// floats, so one 64-bit comparison is knn_less and one load a slot.
struct KnnPackedSlots {
    u64* h;
    __device__ __forceinline__ u32 at(u32 j) const { return j * blockDim.x; }
    __device__ __forceinline__ KnnCand load(u32 j) const {
        const u64 v = h[at(j)];
        return KnnCand{__uint_as_float((u32)(v >> 32)), (u32)v};
    }
    __device__ __forceinline__ void store(u32 j, KnnCand c) { h[at(j)] = ((u64)__float_as_uint(c.d) << 32) | c.i; }
    __device__ __forceinline__ static bool before(KnnCand a, KnnCand b) {
        return (((u64)__float_as_uint(a.d) << 32) | a.i) < (((u64)__float_as_uint(b.d) << 32) | b.i);
    }
};

// A max-heap of k candidates in `Slots` (four-ary): the root is the k-th
// best, the one to beat.
template <typename Slots>
struct KnnHeap {
    Slots h;
    F wd;
    u32 wi;
    u32 k;

    __device__ __forceinline__ void init_slots(u32 k_) {
        k = k_;
        for (u32 j = 0; j < k; j++) h.store(j, KnnCand{knn_inf(F(0)), KNN_MISSING});
        wd = knn_inf(F(0));
        wi = KNN_MISSING;
    }

    __device__ __forceinline__ F worst_d() const { return wd; }
    __device__ __forceinline__ u32 worst_i() const { return wi; }

    // Moves x down from slot `j` of a heap of `size` slots. Four children a
    // slot (4j + 1 to 4j + 4), loaded together: half the levels of a binary
    // heap, so half the dependent rounds of loads.
    __device__ __forceinline__ void sift(u32 j, u32 size, KnnCand x) {
        while (true) {
            const u32 c0 = 4 * j + 1;
            if (c0 >= size) break;
            u32 c = c0;
            KnnCand cc = h.load(c0);
#pragma unroll
            for (u32 e = 1; e < 4; e++) {
                if (c0 + e < size) {
                    const KnnCand r = h.load(c0 + e);
                    if (Slots::before(cc, r)) {
                        c = c0 + e;
                        cc = r;
                    }
                }
            }
            if (!Slots::before(x, cc)) break;
            h.store(j, cc);
            j = c;
        }
        h.store(j, x);
    }

    __device__ __forceinline__ void offer(F d2, u32 i) {
        if (!knn_less(d2, i, wd, wi)) return;
        sift(0, k, KnnCand{d2, i});
        const KnnCand top = h.load(0);
        wd = top.d;
        wi = top.i;
    }

    // Heap sort in place: ascending.
    __device__ __forceinline__ void sort() {
        for (u32 end = k; end > 1; end--) {
            const KnnCand last = h.load(end - 1);
            h.store(end - 1, h.load(0));
            sift(0, end - 1, last);
        }
    }
};

#if CUPRIM_K == 0
// k up to 1024: the heap kept in the caller's output row (distances hold
// squared distances until finish).
struct KnnList : KnnHeap<KnnPairSlots<false>> {
    __device__ __forceinline__ void init(u32 k_, F* row_d, u32* row_i) {
        h.hd = row_d;
        h.hi = row_i;
        init_slots(k_);
    }

    // Sorts in place, then square roots when `root`. The output row is the
    // heap itself, so out_d / out_i are not used.
    __device__ __forceinline__ void finish(F*, u32*, bool root) {
        sort();
        if (root) {
            for (u32 j = 0; j < k; j++) h.hd[j] = knn_sqrt(h.hd[j]);
        }
    }
};
#endif

// The heap in this thread's column of shared memory, k up to the capacity
// the caller reserved: cheaper per offer than the register list for large
// k (log4 k steps of a sift against k steps of an insertion, most of them
// with a few lanes of the warp active). f32: one u64 a slot.
template <bool PACKED> struct KnnColumnSlotsOf {
    typedef KnnPackedSlots type;
};
template <> struct KnnColumnSlotsOf<false> {
    typedef KnnPairSlots<true> type;
};
// Packed: uniform 3-D k = 64 18.57 ms against 20.25 in two arrays (H200, run of 48febcf+heap).
typedef KnnColumnSlotsOf<sizeof(F) == 4>::type KnnColumnSlots;
struct KnnColumnHeap : KnnHeap<KnnColumnSlots> {
    // `column`: capacity * blockDim.x * (sizeof(F) + 4) bytes, 16-byte
    // aligned (this thread's slots start at its lane).
    __device__ __forceinline__ void init(u32 k_, unsigned char* column, u32 capacity) {
        bind(h, column, capacity);
        init_slots(k_);
    }
    __device__ __forceinline__ static void bind(KnnPackedSlots& s, unsigned char* column, u32) {
        s.h = reinterpret_cast<u64*>(column) + threadIdx.x;
    }
    __device__ __forceinline__ static void bind(KnnPairSlots<true>& s, unsigned char* column, u32 capacity) {
        s.hd = reinterpret_cast<F*>(column) + threadIdx.x;
        s.hi = reinterpret_cast<u32*>(column + (size_t)capacity * blockDim.x * sizeof(F)) + threadIdx.x;
    }

    // Sorts, then writes the k slots to the output row (square roots when
    // `root`).
    __device__ __forceinline__ void finish(F* __restrict__ out_d, u32* __restrict__ out_i, bool root) {
        sort();
        for (u32 j = 0; j < k; j++) {
            const KnnCand c = h.load(j);
            out_d[j] = root ? knn_sqrt(c.d) : c.d;
            out_i[j] = c.i;
        }
    }
};

// Writes an all-missing row.
__device__ __forceinline__ void knn_missing_row(F* __restrict__ out_d, u32* __restrict__ out_i, u32 k) {
    for (u32 j = 0; j < k; j++) {
        out_d[j] = knn_inf(F(0));
        out_i[j] = KNN_MISSING;
    }
}
