// Left-balanced kd-tree construction, level by level (Wald 2022, "GPU-
// friendly, parallel, and (almost) in-place construction of left-balanced
// k-d trees"), with cuprim's radix sort doing the sorting between kernels.
// Specialised on: F, CUPRIM_DIM (and CUPRIM_K = 1, unused here),
// CUPRIM_KNN_X (points from an input expression KnnIn, below).
// Last, the boxes of the upper levels' subtrees, bottom-up (cuprim_knn_boxes).
//
// Every point carries the id of the subtree it belongs to (its tag, 0 at
// the start). Coordinates are replaced by their rank along each dimension
// (ties broken by point index), so a sort key is (tag << rank_bits) | rank
// in the fewest bits. Per level L: sort (key, point id) pairs; then each
// point whose tag is a node of level L finds its place within that node's
// subtree: before the left subtree's size it moves to the left child,
// exactly there it becomes the node, past it it moves to the right child.
// Points already placed (tags of earlier levels) sort first and stay put.

// The points: `const F* points` (n x CUPRIM_DIM coordinates), or with
// CUPRIM_KNN_X an input expression `KnnIn points` (knn.cuh), read where
// the buffer is read (each of the D extracts and the scatter evaluates it).
#if CUPRIM_KNN_X
#define KNN_POINTS CUPRIM_INPUT KnnIn points
#define KNN_POINT_COORD(i, j) knn_coord(points, i, j)
#else
#define KNN_POINTS const F* __restrict__ points
#define KNN_POINT_COORD(i, j) points[(i) * CUPRIM_DIM + (j)]
#endif

// keys[i] = points[i][dim], vals[i] = i.
extern "C" __global__ void cuprim_knn_extract(KNN_POINTS, u64 n, u32 dim, F* __restrict__ keys, u32* __restrict__ vals) {
    for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) {
        keys[i] = KNN_POINT_COORD(i, dim);
        vals[i] = (u32)i;
    }
}

// rank[sorted_ids[j]] = j; bounds[0..2] = first and last sorted coordinate.
extern "C" __global__ void cuprim_knn_rank(const u32* __restrict__ sorted_ids, const F* __restrict__ sorted_keys, u64 n,
                                           u32* __restrict__ rank, F* __restrict__ bounds) {
    for (u64 j = cuprim_thread_id(); j < n; j += cuprim_thread_count()) {
        rank[sorted_ids[j]] = (u32)j;
        if (j == 0) bounds[0] = sorted_keys[0];
        if (j == n - 1) bounds[1] = sorted_keys[n - 1];
    }
}

// keys[i] = rank0[i] (tag 0), perm[i] = i.
extern "C" __global__ void cuprim_knn_init(const u32* __restrict__ rank0, u64 n, u64* __restrict__ keys, u32* __restrict__ perm) {
    for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) {
        keys[i] = rank0[i];
        perm[i] = (u32)i;
    }
}

// Nodes in the subtree of node m of a left-balanced tree of n nodes.
__device__ __forceinline__ u64 knn_subtree_size(u64 m, u64 n) {
    u64 size = 0, width = 1;
    while (m < n) {
        const u64 avail = n - m;
        size += avail < width ? avail : width;
        m = 2 * m + 1;
        width *= 2;
    }
    return size;
}

// One level: the (key, perm) pairs are sorted by key; assign new tags and
// write the next level's keys (tag, rank along the next dimension).
extern "C" __global__ void cuprim_knn_level(u64* __restrict__ keys, const u32* __restrict__ perm, u64 n, u32 level, u32 rank_bits,
                                            const u32* __restrict__ rank_next) {
    const u64 first = (1ull << level) - 1;  // the first node of this level
    for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) {
        u64 tag = keys[i] >> rank_bits;
        if (tag >= first) {
            // Where the subtree of `tag` starts in sorted order: every node
            // of earlier levels, then the subtrees of the nodes of this level
            // left of it.
            u64 start = first, m = first, width = tag - first;
            while (m < n) {
                const u64 avail = n - m;
                start += avail < width ? avail : width;
                m = 2 * m + 1;
                width *= 2;
            }
            const u64 local = i - start;
            const u64 left = knn_subtree_size(2 * tag + 1, n);
            if (local < left) {
                tag = 2 * tag + 1;
            } else if (local > left) {
                tag = 2 * tag + 2;
            }
        }
        keys[i] = (tag << rank_bits) | (u64)rank_next[perm[i]];
    }
}

// Final placement: node (key >> rank_bits) gets the point perm[i].
extern "C" __global__ void cuprim_knn_scatter(const u64* __restrict__ keys, const u32* __restrict__ perm, u64 n, u32 rank_bits,
                                              KNN_POINTS, KnnNode* __restrict__ nodes) {
    for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) {
        const u64 node = keys[i] >> rank_bits;
        const u32 p = perm[i];
        KnnNodeWords u;
#pragma unroll
        for (int j = 0; j < KNN_NODE_VECS; j++) u.w[j] = make_uint4(0, 0, 0, 0);
#if CUPRIM_KNN_X
        knn_coords(points.load(p), u.n.c);
#else
#pragma unroll
        for (int j = 0; j < CUPRIM_DIM; j++) u.n.c[j] = points[(u64)p * CUPRIM_DIM + j];
#endif
        u.n.idx = p;
        uint4* dst = reinterpret_cast<uint4*>(nodes + node);
#pragma unroll
        for (int j = 0; j < KNN_NODE_VECS; j++) dst[j] = u.w[j];
    }
}

// Widens box b by the point of node `nd` (nothing for a point with a NaN
// coordinate: it is never a neighbour).
__device__ __forceinline__ void knn_box_add(KnnBox& b, const KnnNode& nd) {
    bool nan = false;
#pragma unroll
    for (int j = 0; j < CUPRIM_DIM; j++) nan |= nd.c[j] != nd.c[j];
    if (nan) return;
#pragma unroll
    for (int j = 0; j < CUPRIM_DIM; j++) {
        b.lo[j] = nd.c[j] < b.lo[j] ? nd.c[j] : b.lo[j];
        b.hi[j] = nd.c[j] > b.hi[j] ? nd.c[j] : b.hi[j];
    }
}

// The boxes of the nodes of one level, bottom-up (the levels below are
// done): the node's point, then each child's box where the child has one
// (id below nb), else every point of the child's subtree (the levels
// without boxes: a few nodes).
extern "C" __global__ void cuprim_knn_boxes(const KnnNode* __restrict__ nodes, u64 n, u32 level, u64 nb, KnnBox* __restrict__ boxes) {
    const u64 first = (1ull << level) - 1, count = 1ull << level;
    for (u64 t = cuprim_thread_id(); t < count; t += cuprim_thread_count()) {
        const u64 m = first + t;
        KnnBox b;
#pragma unroll
        for (int j = 0; j < CUPRIM_DIM; j++) {
            b.lo[j] = knn_inf(F(0));
            b.hi[j] = -knn_inf(F(0));
        }
        knn_box_add(b, knn_load_node(nodes, (u32)m));
        for (u64 c = 2 * m + 1; c <= 2 * m + 2; c++) {
            if (c < nb) {
                const KnnBox cb = knn_load_box(boxes, (u32)c);
#pragma unroll
                for (int j = 0; j < CUPRIM_DIM; j++) {
                    b.lo[j] = cb.lo[j] < b.lo[j] ? cb.lo[j] : b.lo[j];
                    b.hi[j] = cb.hi[j] > b.hi[j] ? cb.hi[j] : b.hi[j];
                }
            } else {
                for (u64 lo = c, w = 1; lo < n; lo = 2 * lo + 1, w *= 2) {
                    const u64 hi = lo + w < n ? lo + w : n;
                    for (u64 i = lo; i < hi; i++) knn_box_add(b, knn_load_node(nodes, (u32)i));
                }
            }
        }
        KnnBoxWords u;
#pragma unroll
        for (int j = 0; j < KNN_BOX_VECS; j++) u.w[j] = make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int j = 0; j < CUPRIM_DIM; j++) {
            u.b.lo[j] = b.lo[j];
            u.b.hi[j] = b.hi[j];
        }
        uint4* dst = reinterpret_cast<uint4*>(boxes + m);
#pragma unroll
        for (int j = 0; j < KNN_BOX_VECS; j++) dst[j] = u.w[j];
    }
}
