// kd-tree queries: k nearest neighbours and radius search, one thread per
// query, over the left-balanced tree built by build.cu (node i has
// children 2i+1 and 2i+2; the split dimension of a node at level L is
// L % CUPRIM_DIM). Also the Morton codes that order queries spatially.
// Specialised on: F, CUPRIM_DIM, CUPRIM_K (see knn.cuh).
//
// Traversal: descend towards the query (the near child first), pushing the
// far child with its squared distance to the splitting plane on a stack in
// shared memory (one column per thread, `depth` entries: the levels on the
// stack strictly increase, so it never holds more); pop when a leaf is
// passed, skipping entries farther than the current k-th candidate. A node
// is pruned only when its plane is strictly farther than the k-th
// candidate, so ties (equal distance, lower index) are never lost.

template <bool RADIUS>
__device__ __forceinline__ void knn_tree_query(const KnnNode* __restrict__ nodes, u32 n, u32 depth, const F* __restrict__ queries,
                                               const u32* __restrict__ order, u64 q, u32 k, F bound, F* __restrict__ out_d,
                                               u32* __restrict__ out_i, u32* __restrict__ counts) {
    extern __shared__ __align__(16) unsigned char knn_smem[];
    const u32 stride = blockDim.x;
    F* st_d = reinterpret_cast<F*>(knn_smem) + threadIdx.x;
    u32* st_n = reinterpret_cast<u32*>(knn_smem + (size_t)depth * stride * sizeof(F)) + threadIdx.x;

    const u64 t = cuprim_thread_id();
    if (t >= q) return;
    const u64 row = order ? (u64)order[t] : t;
    F* rd = out_d + row * k;
    u32* ri = out_i + row * k;

    F qc[CUPRIM_DIM];
    bool nan = false;
#pragma unroll
    for (int j = 0; j < CUPRIM_DIM; j++) {
        qc[j] = queries[row * CUPRIM_DIM + j];
        nan |= qc[j] != qc[j];
    }
    if (nan || n == 0) {
        knn_missing_row(rd, ri, k);
        if (RADIUS) counts[row] = 0;
        return;
    }

    KnnList list;
    list.init(k, rd, ri);
    u32 count = 0;
    u32 sp = 0;
    u32 node = 0;
    u32 dim = 0;
    while (true) {
        while (node < n) {
            const KnnNode nd = knn_load_node(nodes, node);
            F diffs[CUPRIM_DIM];
            F acc = F(0);
#pragma unroll
            for (int j = 0; j < CUPRIM_DIM; j++) {
                diffs[j] = qc[j] - nd.c[j];
                acc = knn_fma(diffs[j], diffs[j], acc);
            }
            if (RADIUS) {
                if (acc <= bound) {
                    count++;
                    list.offer(acc, nd.idx);
                }
            } else {
                list.offer(acc, nd.idx);
            }
            F diff = diffs[0];
#pragma unroll
            for (int j = 1; j < CUPRIM_DIM; j++) {
                if (dim == (u32)j) diff = diffs[j];
            }
            const F diff2 = diff * diff;
            const u32 near = 2 * node + (diff > F(0) ? 2 : 1);
            const u32 far = (near & 1) ? near + 1 : near - 1;
            const F limit = RADIUS ? bound : list.worst_d();
            // NaN planes (a NaN split coordinate) are never pruned.
            if (far < n && !(diff2 > limit)) {
                st_d[sp * stride] = diff2;
                st_n[sp * stride] = far;
                sp++;
            }
            node = near;
            dim = (dim + 1 == CUPRIM_DIM) ? 0 : dim + 1;
        }
        bool found = false;
        while (sp > 0) {
            sp--;
            const F d2m = st_d[sp * stride];
            const F limit = RADIUS ? bound : list.worst_d();
            if (!(d2m > limit)) {
                node = st_n[sp * stride];
                found = true;
                break;
            }
        }
        if (!found) break;
        dim = (31 - __clz(node + 1)) % CUPRIM_DIM;
    }
    if (RADIUS) counts[row] = count;
    list.finish(rd, ri, true);
}

// The k nearest tree points of each query (rows of `out_*` in the caller's
// query order; `order`, when not null, is the order to process them in).
// Dynamic shared memory: depth * blockDim * (sizeof(F) + 4) bytes.
extern "C" __global__ void cuprim_knn_query(const KnnNode* __restrict__ nodes, u32 n, u32 depth, const F* __restrict__ queries,
                                            const u32* __restrict__ order, u64 q, u32 k, F* __restrict__ out_d,
                                            u32* __restrict__ out_i) {
    knn_tree_query<false>(nodes, n, depth, queries, order, q, k, F(0), out_d, out_i, nullptr);
}

// Radius search: the (at most k) nearest tree points whose squared distance
// is at most `bound`, and in counts[row] how many there are in all.
extern "C" __global__ void cuprim_knn_radius(const KnnNode* __restrict__ nodes, u32 n, u32 depth, const F* __restrict__ queries,
                                             const u32* __restrict__ order, u64 q, u32 k, F bound, F* __restrict__ out_d,
                                             u32* __restrict__ out_i, u32* __restrict__ counts) {
    knn_tree_query<true>(nodes, n, depth, queries, order, q, k, bound, out_d, out_i, counts);
}

// Morton code of each query in the box `bounds` (lo, hi per dimension) on
// its first min(D, 3) coordinates; `order` gets 0..q-1. Values outside the
// box (NaN included) are clamped: the codes only order the work.
extern "C" __global__ void cuprim_knn_morton(const F* __restrict__ queries, u64 q, const F* __restrict__ bounds, u32* __restrict__ codes,
                                             u32* __restrict__ order) {
    constexpr int MD = CUPRIM_DIM < 3 ? CUPRIM_DIM : 3;
    constexpr int BITS = 30 / MD;
    constexpr u32 CELLS = 1u << BITS;
    for (u64 t = cuprim_thread_id(); t < q; t += cuprim_thread_count()) {
        u32 cell[MD];
#pragma unroll
        for (int j = 0; j < MD; j++) {
            const float lo = (float)bounds[2 * j], hi = (float)bounds[2 * j + 1];
            const float x = ((float)queries[t * CUPRIM_DIM + j] - lo) / (hi - lo) * (float)CELLS;
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
