// kd-tree queries: k nearest neighbours, radius search and all-k-nearest,
// one thread per query, over the left-balanced tree built by build.cu (node
// i has children 2i+1 and 2i+2; the split dimension of a node at level L is
// L % CUPRIM_DIM; nodes below nb have the tight box of their subtree).
// Also the Morton codes that order queries spatially.
// Specialised on: F, CUPRIM_DIM, CUPRIM_K (see knn.cuh), CUPRIM_KNN_BOX_ORDER_AFTER,
// CUPRIM_KNN_X (queries from an input expression KnnIn, below),
// CUPRIM_KNN_COLUMN (the candidates in a heap of CUPRIM_K slots in shared
// memory, below, rather than KnnList).
//
// Traversal: depth first, every subtree with a lower bound of the squared
// distance to its points: the distance to its box where it has one, else
// (the last level) the larger of its parent's bound and, for the far child,
// the squared distance to the splitting plane. The child on the query's
// side is visited first (or, past some visits, the nearer by its box: see
// knn_walk), the other is pushed with its bound on a stack in
// shared memory (one column per thread, `depth` entries: the levels on the
// stack strictly increase, so it never holds more). A subtree is skipped,
// when pushed, popped or entered, only when its bound is strictly greater
// than the current k-th candidate (or the radius), so ties (equal distance,
// lower index) are never lost, and the result is the one defined in
// knn.cuh whatever the order of the visits.

// The traversal of one query `qc` (no NaN coordinate) over a tree of n > 0
// nodes: offers every visited node (EXCLUDE: but the one of index `self`)
// to `list` (RADIUS: only those within `bound`, counted in `count`).
// Returns the number of nodes visited when COUNT (else 0).
//
// Plane order: children are ordered by the splitting plane and pushed with
// the plane bound; a node with a box checks it (loaded with the node) on
// entry and is skipped with its whole subtree when it is beyond the k-th
// candidate. Box order, once the walk has visited more than `box_after`
// nodes: at a node whose children have boxes, both children's boxes are
// loaded (with the node) and the nearer is visited first, the other pushed
// with its box distance. Box order costs more loads a visit but prunes
// better far from the points (long walks); either way every bound is a
// lower bound of the distances it stands for.
//
// The walk covers the subtree of node `start` (0: the whole tree), and with
// SKIP all of it but the subtree of node `skip`, which it never enters.
// It gives up, returning KNN_ABANDONED, when it would visit more than
// `budget` nodes.
#define KNN_NO_BUDGET 0xffffffffu
#define KNN_ABANDONED 0xffffffffu
#define KNN_PLANE_ORDER 0xffffffffu  // a `box_after` no walk passes
template <bool RADIUS, bool EXCLUDE, bool COUNT, bool SKIP = false, typename List>
__device__ __forceinline__ u32 knn_walk(const KnnNode* __restrict__ nodes, const KnnBox* __restrict__ boxes, u32 n, u32 nb,
                                        const F (&qc)[CUPRIM_DIM], u32 self, F bound, List& list, u32& count, F* st_d, u32* st_n,
                                        u32 stride, u32 start = 0, u32 skip = 0, u32 budget = KNN_NO_BUDGET,
                                        u32 box_after = CUPRIM_KNN_BOX_ORDER_AFTER) {
    u32 visits = 0, sp = 0, node = start, dim = (31 - __clz(start + 1)) % CUPRIM_DIM;
    F lb = F(0);
    while (true) {
        while (true) {
            // (A walk visits each node at most once: never past KNN_NO_BUDGET.)
            if (++visits > budget) return KNN_ABANDONED;
            const u32 c = 2 * node + 1;
            // Every load of this visit is issued before any is waited for.
            const KnnNode nd = knn_load_node(nodes, node);
            // (box_after 0 is tested apart: the count alone may wrap, so the
            // compiler could not drop it.)
            const bool by_boxes = box_after == 0 || visits > box_after;
            const bool child_boxed = by_boxes && c < nb;  // then both children exist and have boxes
            const bool entry_boxed = !by_boxes && node < nb;
            KnnBox box_l, box_r, box_m;
            if (child_boxed) {
                box_l = knn_load_box(boxes, c);
                box_r = knn_load_box(boxes, c + 1);
            }
            if (entry_boxed) box_m = knn_load_box(boxes, node);
            if (entry_boxed) {
                const F b = knn_box_dist(qc, box_m);
                if (b > (RADIUS ? bound : list.worst_d())) break;
                lb = b;
            }
            F diffs[CUPRIM_DIM];
            F acc = F(0);
#pragma unroll
            for (int j = 0; j < CUPRIM_DIM; j++) {
                diffs[j] = qc[j] - nd.c[j];
                acc = knn_fma(diffs[j], diffs[j], acc);
            }
            if (!EXCLUDE || nd.idx != self) {
                if (RADIUS) {
                    if (acc <= bound) {
                        count++;
                        list.offer(acc, nd.idx);
                    }
                } else {
                    list.offer(acc, nd.idx);
                }
            }
            if (c >= n) break;
            const F limit = RADIUS ? bound : list.worst_d();
            F bl, br;
            bool right_first;
            if (child_boxed) {
                bl = knn_box_dist(qc, box_l);
                br = knn_box_dist(qc, box_r);
                right_first = br < bl;
            } else {
                F diff = diffs[0];
#pragma unroll
                for (int j = 1; j < CUPRIM_DIM; j++) {
                    if (dim == (u32)j) diff = diffs[j];
                }
                const F d2 = diff * diff;
                // A NaN plane (NaN split coordinate) bounds nothing: the parent's bound.
                const F plane = d2 > lb ? d2 : lb;
                right_first = diff > F(0);
                bl = right_first ? plane : lb;
                br = right_first ? lb : plane;
            }
            const u32 near = right_first ? c + 1 : c;
            const u32 far = right_first ? c : c + 1;
            const F b_near = right_first ? br : bl;
            const F b_far = right_first ? bl : br;
            if (far < n && !(b_far > limit) && !(SKIP && far == skip)) {
                st_d[sp * stride] = b_far;
                st_n[sp * stride] = far;
                sp++;
            }
            if (near >= n || b_near > limit || (SKIP && near == skip)) break;
            node = near;
            lb = b_near;
            dim = (dim + 1 == CUPRIM_DIM) ? 0 : dim + 1;
        }
        bool found = false;
        while (sp > 0) {
            sp--;
            const F b = st_d[sp * stride];
            const F limit = RADIUS ? bound : list.worst_d();
            if (!(b > limit)) {
                node = st_n[sp * stride];
                lb = b;
                found = true;
                break;
            }
        }
        if (!found) return COUNT ? visits : 0;
        dim = (31 - __clz(node + 1)) % CUPRIM_DIM;
    }
}

#ifndef CUPRIM_KNN_COLUMN
#define CUPRIM_KNN_COLUMN 0
#endif

// This thread's traversal stack: `depth` entries of (bound, node) in
// columns of the dynamic shared memory, depth * blockDim * (sizeof(F) + 4)
// bytes; with CUPRIM_KNN_COLUMN the columns of its candidate heap follow
// (`end`), CUPRIM_K * blockDim * (sizeof(F) + 4) bytes more.
struct KnnStack {
    F* d;
    u32* n;
    u32 stride;
    u32 depth;
    __device__ __forceinline__ explicit KnnStack(u32 depth_) : depth(depth_) {
        extern __shared__ __align__(16) unsigned char knn_smem[];
        stride = blockDim.x;
        d = reinterpret_cast<F*>(knn_smem) + threadIdx.x;
        n = reinterpret_cast<u32*>(knn_smem + (size_t)depth * stride * sizeof(F)) + threadIdx.x;
    }
    // Where the columns after the stack's start (CUPRIM_KNN_COLUMN: the heap's).
    __device__ __forceinline__ unsigned char* end() const {
        extern __shared__ __align__(16) unsigned char knn_smem[];
        return knn_smem + (size_t)depth * blockDim.x * (sizeof(F) + 4);
    }
};

// The candidate list of the tree kernels, started on the output row (or on
// the shared-memory columns after the stack).
#if CUPRIM_KNN_COLUMN
typedef KnnColumnHeap KnnQueryList;
__device__ __forceinline__ void knn_list_init(KnnQueryList& list, u32 k, F*, u32*, const KnnStack& st) {
    list.init(k, st.end(), CUPRIM_K);
}
#else
typedef KnnList KnnQueryList;
__device__ __forceinline__ void knn_list_init(KnnQueryList& list, u32 k, F* row_d, u32* row_i, const KnnStack&) {
    list.init(k, row_d, row_i);
}
#endif

// The queries: `const F* queries` (q x CUPRIM_DIM coordinates), or with
// CUPRIM_KNN_X an input expression `KnnIn queries` (knn.cuh), each query
// read once by its thread (and once more by cuprim_knn_morton). Those
// modules hold cuprim_knn_query and cuprim_knn_morton only.
#if CUPRIM_KNN_X
#define KNN_QUERIES CUPRIM_INPUT KnnIn queries
#define KNN_QUERIES_REF const KnnIn& queries
#else
#define KNN_QUERIES const F* __restrict__ queries
#define KNN_QUERIES_REF const F* __restrict__ queries
#endif

// Loads query `row` into qc; true when it has a NaN coordinate.
__device__ __forceinline__ bool knn_load_query(KNN_QUERIES_REF, u64 row, F (&qc)[CUPRIM_DIM]) {
    bool nan = false;
#if CUPRIM_KNN_X
    knn_coords(queries.load(row), qc);
#pragma unroll
    for (int j = 0; j < CUPRIM_DIM; j++) nan |= qc[j] != qc[j];
#else
#pragma unroll
    for (int j = 0; j < CUPRIM_DIM; j++) {
        qc[j] = queries[row * CUPRIM_DIM + j];
        nan |= qc[j] != qc[j];
    }
#endif
    return nan;
}

// The k nearest tree points of each query (rows of `out_*` in the caller's
// query order; `order`, when not null, is the order to process them in).
// COUNT: visits[t] = nodes visited by the t-th query processed (the cost
// estimate of KnnMethod::Auto). CAPPED: a query whose walk would visit
// more than `budget` nodes is left to cuprim_knn_split: its row goes to the
// list `hard_rows` (hard[0] of them), its output row is not written.
template <bool COUNT, bool CAPPED>
__device__ __forceinline__ void knn_query(const KnnNode* __restrict__ nodes, const KnnBox* __restrict__ boxes, u32 n, u32 nb, u32 depth,
                                          KNN_QUERIES_REF, const u32* __restrict__ order, u64 q, u32 k,
                                          F* __restrict__ out_d, u32* __restrict__ out_i, u32* __restrict__ visits, u32 budget,
                                          u32* __restrict__ hard, u32* __restrict__ hard_rows) {
    KnnStack st(depth);
    const u64 t = cuprim_thread_id();
    if (t >= q) return;
    const u64 row = order ? (u64)order[t] : t;
    F* rd = out_d + row * k;
    u32* ri = out_i + row * k;
    F qc[CUPRIM_DIM];
    if (knn_load_query(queries, row, qc) || n == 0) {
        knn_missing_row(rd, ri, k);
        if (COUNT) visits[t] = 0;
        return;
    }
    KnnQueryList list;
    knn_list_init(list, k, rd, ri, st);
    u32 count = 0;
    const u32 v =
        knn_walk<false, false, COUNT>(nodes, boxes, n, nb, qc, KNN_MISSING, F(0), list, count, st.d, st.n, st.stride, 0, 0,
                                      CAPPED ? budget : KNN_NO_BUDGET);
    if (CAPPED && v == KNN_ABANDONED) {
        // A slot past q would need counts left over by a call that failed
        // between its two launches: that row is then left unwritten, not
        // memory past the list.
        const u32 slot = atomicAdd(hard, 1u);
        if (slot < q) hard_rows[slot] = (u32)row;
        return;
    }
    if (COUNT) visits[t] = v;
    list.finish(rd, ri, true);
}

extern "C" __global__ void cuprim_knn_query(const KnnNode* __restrict__ nodes, const KnnBox* __restrict__ boxes, u32 n, u32 nb,
                                            u32 depth, KNN_QUERIES, const u32* __restrict__ order, u64 q, u32 k,
                                            F* __restrict__ out_d, u32* __restrict__ out_i) {
    knn_query<false, false>(nodes, boxes, n, nb, depth, queries, order, q, k, out_d, out_i, nullptr, KNN_NO_BUDGET, nullptr, nullptr);
}

// cuprim_knn_query leaving the walks longer than `budget` (see knn_query)
// to cuprim_knn_split. The host launches it only where the split follows:
// rows that fit in u32, a register list (src/algo/knn/plan.rs, `splits`).
extern "C" __global__ void cuprim_knn_query_capped(const KnnNode* __restrict__ nodes, const KnnBox* __restrict__ boxes, u32 n, u32 nb,
                                                   u32 depth, KNN_QUERIES, const u32* __restrict__ order, u64 q, u32 k,
                                                   F* __restrict__ out_d, u32* __restrict__ out_i, u32 budget,
                                                   u32* __restrict__ hard, u32* __restrict__ hard_rows) {
    knn_query<false, true>(nodes, boxes, n, nb, depth, queries, order, q, k, out_d, out_i, nullptr, budget, hard, hard_rows);
}

// The bound the threads of a block share while they split one query's
// walk: the least k-th distance any of them holds (as bits: the bits of a
// non-negative F order as its value), by which each prunes besides its
// own. Each thread's list holds k real candidates or +inf ones, so a point
// among the query's k nearest is never beyond that bound: no thread prunes
// it, and the thread that meets it keeps it.
typedef decltype(knn_bits(F(0))) KnnBits;
template <typename List>
struct KnnSharedBound {
    List& list;
    KnnBits* bound;
    __device__ __forceinline__ F worst_d() const {
        const F own = list.worst_d(), all = knn_of_bits(*(volatile KnnBits*)bound);
        return all < own ? all : own;
    }
    __device__ __forceinline__ void offer(F d2, u32 i) {
        const F before = list.worst_d();
        list.offer(d2, i);
        const F after = list.worst_d();
        if (after < before) atomicMin(bound, knn_bits(after));
    }
};

#if CUPRIM_K > 0
// Ranks a thread's list for the merge: ascending, the j-th best readable
// by knn_ranked (the heap sorted in place; the register list spilled to
// the thread's stack columns, which hold at least CUPRIM_K entries here).
#if CUPRIM_KNN_COLUMN
__device__ __forceinline__ void knn_rank(KnnQueryList& list, const KnnStack&) { list.sort(); }
__device__ __forceinline__ KnnCand knn_ranked(const KnnQueryList& list, const KnnStack&, u32 j) { return list.h.load(j); }
#else
__device__ __forceinline__ void knn_rank(KnnQueryList& list, const KnnStack& st) { list.spill(st.d, st.n, st.stride); }
__device__ __forceinline__ KnnCand knn_ranked(const KnnQueryList&, const KnnStack& st, u32 j) {
    return KnnCand{st.d[j * st.stride], st.n[j * st.stride]};
}
#endif

// Candidate o of thread ow against candidate c of thread w: c becomes the
// lesser, ties (only ever between missing slots) to the lower thread.
__device__ __forceinline__ void knn_take_least(KnnCand& c, u32& w, KnnCand o, u32 ow) {
    if (knn_less(o.d, o.i, c.d, c.i) || (!knn_less(c.d, c.i, o.d, o.i) && ow < w)) {
        c = o;
        w = ow;
    }
}
#endif

// The queries cuprim_knn_query_capped left (hard[0] rows at hard_rows, at
// most q), a block each, taken by ticket (hard[1]) until none is left. The
// three counters are the device's (zero between calls): the last block to
// finish (cuprim_last_block on hard[2]) clears them for the next call. The block's
// threads share the walk: each takes the next of the subtrees rooted at
// level `level` (with the node above it of the same position, if any)
// until none is left, walked with its list (kept across its subtrees) and
// the block's shared bound; then the block merges its lists into the
// query's row, k rounds of taking the least head. The result is the one a
// single walk gives: every list holds each of the k nearest it met.
// Dynamic shared memory: the stack of `depth` >= max(tree depth, CUPRIM_K)
// entries, as cuprim_knn_query's.
extern "C" __global__ void cuprim_knn_split(const KnnNode* __restrict__ nodes, const KnnBox* __restrict__ boxes, u32 n, u32 nb,
                                            u32 depth, KNN_QUERIES, u32* __restrict__ hard, const u32* __restrict__ hard_rows,
                                            u32 q, u32 level, u32 k, F* __restrict__ out_d, u32* __restrict__ out_i) {
#if CUPRIM_K > 0
    KnnStack st(depth);
    __shared__ KnnBits bound;
    __shared__ u32 ticket, winner, next;
    __shared__ KnnCand warp_best[32];
    __shared__ u32 warp_who[32];
    const u32 count = min(*(volatile u32*)hard, q);
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const u32 subtrees = 1u << level, first = subtrees - 1;
    while (true) {
        if (threadIdx.x == 0) {
            ticket = atomicAdd(hard + 1, 1u);
            bound = knn_bits(knn_inf(F(0)));
            next = 0;
        }
        __syncthreads();
        const u32 h = ticket;
        if (h >= count) {
            // (h is the block's: every thread is here.) The last block out
            // clears the rows' count and the tickets; cuprim_last_block
            // clears its own counter, hard[2].
            if (cuprim_last_block(hard + 2) && threadIdx.x == 0) {
                hard[0] = 0;
                hard[1] = 0;
            }
            return;
        }
        const u64 row = hard_rows[h];
        F qc[CUPRIM_DIM];
        knn_load_query(queries, row, qc);  // no NaN: cuprim_knn_query took it
        KnnQueryList list;
        knn_list_init(list, k, nullptr, nullptr, st);
        KnnSharedBound<KnnQueryList> shared{list, &bound};
        u32 unused = 0;
        for (u32 s = atomicAdd(&next, 1u); s < subtrees; s = atomicAdd(&next, 1u)) {
            if (s < first) {
                // A node above the level: offered alone.
                const KnnNode nd = knn_load_node(nodes, s);
                shared.offer(knn_dist2(qc, nd.c), nd.idx);
            }
            const u32 r = first + s;
            if (r >= n) continue;
            if (r < nb && knn_box_dist(qc, knn_load_box(boxes, r)) > shared.worst_d()) continue;
            // Box order throughout: these walks are the long ones.
            knn_walk<false, false, false>(nodes, boxes, n, nb, qc, KNN_MISSING, F(0), shared, unused, st.d, st.n, st.stride, r, 0,
                                          KNN_NO_BUDGET, 0);
        }
        knn_rank(list, st);
        u32 pos = 0;
        F* rd = out_d + row * k;
        u32* ri = out_i + row * k;
        for (u32 j = 0; j < k; j++) {
            KnnCand c = pos < k ? knn_ranked(list, st, pos) : KnnCand{knn_inf(F(0)), KNN_MISSING};
            const KnnCand mine = c;
            u32 w = threadIdx.x;
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) {
                const KnnCand other{__shfl_xor_sync(0xffffffffu, c.d, o), __shfl_xor_sync(0xffffffffu, c.i, o)};
                knn_take_least(c, w, other, __shfl_xor_sync(0xffffffffu, w, o));
            }
            if (lane == 0) {
                warp_best[warp] = c;
                warp_who[warp] = w;
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                for (u32 x = 1; x < warps; x++) knn_take_least(c, w, warp_best[x], warp_who[x]);
                winner = w;
            }
            __syncthreads();
            if (threadIdx.x == winner) {
                rd[j] = knn_sqrt(mine.d);
                ri[j] = mine.i;
                pos++;
            }
        }
        __syncthreads();
    }
#endif
}

#if !CUPRIM_KNN_X
// cuprim_knn_query, also writing the visits of each query processed.
extern "C" __global__ void cuprim_knn_visits(const KnnNode* __restrict__ nodes, const KnnBox* __restrict__ boxes, u32 n, u32 nb,
                                             u32 depth, const F* __restrict__ queries, const u32* __restrict__ order, u64 q, u32 k,
                                             F* __restrict__ out_d, u32* __restrict__ out_i, u32* __restrict__ visits) {
    knn_query<true, false>(nodes, boxes, n, nb, depth, queries, order, q, k, out_d, out_i, visits, KNN_NO_BUDGET, nullptr, nullptr);
}

// Radius search: the (at most k) nearest tree points whose squared distance
// is at most `bound`, and in counts[row] how many there are in all.
extern "C" __global__ void cuprim_knn_radius(const KnnNode* __restrict__ nodes, const KnnBox* __restrict__ boxes, u32 n, u32 nb,
                                             u32 depth, const F* __restrict__ queries, const u32* __restrict__ order, u64 q, u32 k,
                                             F bound, F* __restrict__ out_d, u32* __restrict__ out_i, u32* __restrict__ counts) {
    KnnStack st(depth);
    const u64 t = cuprim_thread_id();
    if (t >= q) return;
    const u64 row = order ? (u64)order[t] : t;
    F* rd = out_d + row * k;
    u32* ri = out_i + row * k;
    F qc[CUPRIM_DIM];
    if (knn_load_query(queries, row, qc) || n == 0) {
        knn_missing_row(rd, ri, k);
        counts[row] = 0;
        return;
    }
    KnnQueryList list;
    knn_list_init(list, k, rd, ri, st);
    u32 count = 0;
    // Plane order, as before box order was measured for the k-nearest walks.
    knn_walk<true, false, false>(nodes, boxes, n, nb, qc, KNN_MISSING, bound, list, count, st.d, st.n, st.stride, 0, 0, KNN_NO_BUDGET,
                                 KNN_PLANE_ORDER);
    counts[row] = count;
    list.finish(rd, ri, true);
}

// Nodes in the subtree of node m at level l of a left-balanced tree of n
// nodes and h levels, in O(1): the full levels l..h-2 of the subtree, plus
// its share of the (possibly partial) last level.
__device__ __forceinline__ u32 knn_size_at(u32 m, u32 l, u32 n, u32 h) {
    if (m >= n || l >= h) return 0;
    const u64 width = 1ull << (h - 1 - l);
    const u64 first = ((u64)m + 1) * width - 1;  // its first node on the last level
    const u64 last = (u64)n > first ? ((u64)n - first < width ? (u64)n - first : width) : 0;
    return (u32)(width - 1 + last);
}

// The node at in-order position t (< n) of the tree: the kd-tree's own
// space-filling order, in which consecutive positions are neighbouring
// points (a node and the extreme points of its two subtrees).
__device__ __forceinline__ u32 knn_inorder_node(u32 t, u32 n, u32 h) {
    u32 m = 0, lo = 0, l = 0;
    while (true) {
        const u32 r = lo + knn_size_at(2 * m + 1, l + 1, n, h);  // m's position
        if (t == r) return m;
        if (t < r) {
            m = 2 * m + 1;
        } else {
            m = 2 * m + 2;
            lo = r + 1;
        }
        l++;
    }
}

// All-k-nearest: thread t takes the node at in-order position t (tree
// order: neighbouring threads hold neighbouring points, with no sort) and
// writes the row of the node's point, its original index: the k nearest
// other points, the point itself excluded by index. A point with a NaN
// coordinate gets an all-missing row. In box order the walk starts at the
// root (the nearer box first leads it to the point's own subtree); in
// plane order it first covers the subtree of the node's ancestor some
// log2(k) + 2 levels up (the node's own when it is that high), where the
// nearest points mostly are, then the rest of the tree: the nodes above
// that subtree meet a list already close to final, not an empty one they
// would fill and be evicted from.
extern "C" __global__ void cuprim_knn_all(const KnnNode* __restrict__ nodes, const KnnBox* __restrict__ boxes, u32 n, u32 nb, u32 depth,
                                          u32 k, F* __restrict__ out_d, u32* __restrict__ out_i) {
    KnnStack st(depth);
    const u64 t = cuprim_thread_id();
    if (t >= n) return;
    const u32 m = knn_inorder_node((u32)t, n, depth);
    const KnnNode me = knn_load_node(nodes, m);
    F* rd = out_d + (u64)me.idx * k;
    u32* ri = out_i + (u64)me.idx * k;
    F qc[CUPRIM_DIM];
    bool nan = false;
#pragma unroll
    for (int j = 0; j < CUPRIM_DIM; j++) {
        qc[j] = me.c[j];
        nan |= qc[j] != qc[j];
    }
    if (nan) {
        knn_missing_row(rd, ri, k);
        return;
    }
    KnnQueryList list;
    knn_list_init(list, k, rd, ri, st);
    u32 count = 0;
#if CUPRIM_KNN_BOX_ORDER_AFTER == 0
    // Box order: one walk from the root, which meets the point's own
    // subtree first. The budget of n visits is never passed, but with it
    // this loop ran 1.5x faster (uniform 3-D k = 8, 1M points: 1.009 ms
    // against 1.55; plane order, below, 1.333; H200).
    knn_walk<false, true, false>(nodes, boxes, n, nb, qc, me.idx, F(0), list, count, st.d, st.n, st.stride, 0, 0, n);
#else
    // Plane order: first the subtree of a, m's ancestor at level
    // min(level(m), depth - 1 - (log2(k) + 2)) (the last level holds the
    // leaves), then the rest of the tree.
    const u32 lm = 31 - __clz(m + 1);
    const u32 up = 33 - __clz(k);
    const u32 la = depth > up + 1 ? min(lm, depth - 1 - up) : 0;
    const u32 a = ((m + 1) >> (lm - la)) - 1;
    knn_walk<false, true, false>(nodes, boxes, n, nb, qc, me.idx, F(0), list, count, st.d, st.n, st.stride, a, 0, KNN_NO_BUDGET,
                                 KNN_PLANE_ORDER);
    if (a != 0)
        knn_walk<false, true, false, true>(nodes, boxes, n, nb, qc, me.idx, F(0), list, count, st.d, st.n, st.stride, 0, a,
                                           KNN_NO_BUDGET, KNN_PLANE_ORDER);
#endif
    list.finish(rd, ri, true);
}
#endif  // !CUPRIM_KNN_X

// Morton code of each query in the box `bounds` (lo, hi per dimension) on
// its first min(D, 3) coordinates; `order` gets 0..q-1. Values outside the
// box (NaN included) are clamped: the codes only order the work.
extern "C" __global__ void cuprim_knn_morton(KNN_QUERIES, u64 q, const F* __restrict__ bounds, u32* __restrict__ codes,
                                             u32* __restrict__ order) {
    constexpr int MD = CUPRIM_DIM < 3 ? CUPRIM_DIM : 3;
    constexpr int BITS = 30 / MD;
    constexpr u32 CELLS = 1u << BITS;
    for (u64 t = cuprim_thread_id(); t < q; t += cuprim_thread_count()) {
        u32 cell[MD];
#if CUPRIM_KNN_X
        F qc[CUPRIM_DIM];
        knn_coords(queries.load(t), qc);
#define KNN_MORTON_AT(j) qc[j]
#else
#define KNN_MORTON_AT(j) queries[t * CUPRIM_DIM + j]
#endif
#pragma unroll
        for (int j = 0; j < MD; j++) {
            const float lo = (float)bounds[2 * j], hi = (float)bounds[2 * j + 1];
            const float x = ((float)KNN_MORTON_AT(j) - lo) / (hi - lo) * (float)CELLS;
            cell[j] = x > 0.0f ? (x < (float)CELLS ? (u32)x : CELLS - 1) : 0;
        }
        u32 code = 0;
        for (int b = BITS - 1; b >= 0; b--) {
#pragma unroll
            for (int j = 0; j < MD; j++) code = (code << 1) | ((cell[j] >> b) & 1);
        }
        codes[t] = code;
        order[t] = (u32)t;
    }
}
