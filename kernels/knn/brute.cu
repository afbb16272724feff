// Brute-force k nearest neighbours: every query against every point.
// Specialised on: F, CUPRIM_DIM (up to 128), CUPRIM_K (see knn.cuh),
// CUPRIM_BQ (queries per block = threads per block), CUPRIM_TILE (points
// per shared-memory tile), CUPRIM_REG_QUERY.
//
// Block b owns queries [x * BQ, x * BQ + BQ) and chunk y of the points,
// where x = b % qblocks and y = b / qblocks. Each thread keeps one query
// (in registers for small D, else in a shared column) and its candidate
// list; the block walks its chunk one tile at a time, every thread reading
// the same tile point (a broadcast).
// With one chunk the block writes the final rows; with several, each chunk
// writes its own (squared, sorted) candidates and cuprim_knn_merge combines
// them, so the result does not depend on the chunking.

// CUPRIM_REG_QUERY: 1 keeps the query in registers (D * sizeof(F) <= 128).
#define KNN_REG_QUERY CUPRIM_REG_QUERY
#if KNN_REG_QUERY
#define KNN_UNROLL_D CUPRIM_DIM
#else
#define KNN_UNROLL_D 8
#endif

// Minimum one block per SM: with a plain bound ptxas trades registers for
// occupancy and spills the candidate list.
extern "C" __global__ void __launch_bounds__(CUPRIM_BQ, 1)
    cuprim_knn_brute(const F* __restrict__ points, u32 n, u32 chunk_len, const F* __restrict__ queries, u64 q, u32 k, u32 chunks,
                     u32 qblocks, F* __restrict__ out_d, u32* __restrict__ out_i) {
    __shared__ __align__(16) F tile[CUPRIM_TILE * CUPRIM_DIM];
#if !KNN_REG_QUERY
    __shared__ F qs[CUPRIM_DIM * CUPRIM_BQ];
#endif
    const u32 tid = threadIdx.x;
    const u64 row = (u64)(blockIdx.x % qblocks) * CUPRIM_BQ + tid;
    const u32 chunk = blockIdx.x / qblocks;
    const u64 p0 = (u64)chunk * chunk_len;
    const u64 p1 = p0 + chunk_len < (u64)n ? p0 + chunk_len : (u64)n;
    const bool live = row < q;

    bool nan = false;
#if KNN_REG_QUERY
    F qv[CUPRIM_DIM];
#pragma unroll
    for (int j = 0; j < CUPRIM_DIM; j++) {
        qv[j] = live ? queries[row * CUPRIM_DIM + j] : F(0);
        nan |= qv[j] != qv[j];
    }
#define KNN_Q(j) qv[j]
#else
    for (int j = 0; j < CUPRIM_DIM; j++) {
        const F x = live ? queries[row * CUPRIM_DIM + j] : F(0);
        qs[j * CUPRIM_BQ + tid] = x;
        nan |= x != x;
    }
#define KNN_Q(j) qs[(j) * CUPRIM_BQ + tid]
#endif
    const bool active = live && !nan;
    const u64 slot = (row * chunks + chunk) * k;
    KnnList list;
    if (live) list.init(k, out_d + slot, out_i + slot);

    for (u64 base = p0; base < p1; base += CUPRIM_TILE) {
        const u32 cnt = (u32)(p1 - base < CUPRIM_TILE ? p1 - base : CUPRIM_TILE);
        __syncthreads();
        const F* src = points + base * CUPRIM_DIM;
        for (u32 w = tid; w < cnt * CUPRIM_DIM; w += CUPRIM_BQ) tile[w] = src[w];
        __syncthreads();
        if (active) {
#pragma unroll 2
            for (u32 p = 0; p < cnt; p++) {
                F acc = F(0);
#pragma unroll KNN_UNROLL_D
                for (int j = 0; j < CUPRIM_DIM; j++) {
                    const F diff = KNN_Q(j) - tile[p * CUPRIM_DIM + j];
                    acc = knn_fma(diff, diff, acc);
                }
                list.offer(acc, (u32)(base + p));
            }
        }
    }
    if (live) list.finish(out_d + slot, out_i + slot, chunks == 1);
#undef KNN_Q
}

// Combines the per-chunk candidates (part_* rows of chunks * k squared
// distances and indices, each chunk's sorted) into the final rows.
extern "C" __global__ void cuprim_knn_merge(const F* __restrict__ part_d, const u32* __restrict__ part_i, u64 q, u32 k, u32 chunks,
                                            F* __restrict__ out_d, u32* __restrict__ out_i) {
    for (u64 row = cuprim_thread_id(); row < q; row += cuprim_thread_count()) {
        KnnList list;
        list.init(k, out_d + row * k, out_i + row * k);
        for (u32 c = 0; c < chunks; c++) {
            const u64 at = (row * chunks + c) * k;
            for (u32 j = 0; j < k; j++) {
                const F d = part_d[at + j];
                const u32 i = part_i[at + j];
                if (!knn_less(d, i, list.worst_d(), list.worst_i())) break;  // the rest of this chunk is no better
                list.offer(d, i);
            }
        }
        list.finish(out_d + row * k, out_i + row * k, true);
    }
}
