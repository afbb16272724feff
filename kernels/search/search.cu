// Vectorised binary search (lower_bound / upper_bound / binary_search of
// many queries in one sorted array) and is_sorted_until.
// Specialised on: In (the queries: an input expression, block/expr.cuh; a
// buffer is cuprim_x_buf<T>), T (its element), InS (the sorted side, an
// expression of T, when SEARCH_SORTED_BUF is 0; a buffer is read through its
// pointer), I (u32 or u64 output index), Cmp (bool
// less(T a, T b): the order the array is sorted by), SEARCH_MODE (0 lower
// bound, 1 upper bound, 2 exact: the lower bound if it holds an equivalent
// element, else all ones), CUPRIM_BLOCK, SEARCH_ITEMS (queries per thread,
// searched together so their loads overlap), SEARCH_QUERIES_BUF (the queries
// are a plain buffer), SEARCH_TOP (entries of the
// index's top level a block keeps in shared memory).
//
// The search runs down a static index of the sorted array instead of
// bisecting it: the array is cut into groups of F = 32 / sizeof(T) elements
// (one 32-byte sector each, counted from the sector boundary below the
// array's start), level 1 of the index holds the last element of every
// group, level 2 the last of every F entries of level 1, and so on up to a
// level of at most SEARCH_TOP entries, which every block copies to shared
// memory. A query bisects the top level in shared memory, then reads one
// sector per level below it (the F entries under the node it is in) and
// counts the entries before it: that is the child to descend to. A
// bisection reads one useful element per sector on every level; the index
// reads F, so a query of 2^28 elements costs six sector reads instead of
// about sixteen that miss L1.
//
// A sorted side that is an expression (SEARCH_SORTED_BUF 0) is read one
// element at a time where the buffer form reads sectors: the index's build
// and each query's last group (its upper levels are the index's buffer).

constexpr u32 F = 32 / sizeof(T);                // elements per node (one sector)
constexpr u32 SEARCH_MAX_LEVELS = 24;            // F = 4 and 2^64 elements need 28; more than any input here
typedef cuprim_vec<T, F / 2> SearchVec;         // a 16-byte half of a node

// The index's levels, 1..levels, in one buffer: level l's entries start at
// at[l] (a multiple of F, so every node is one aligned sector) and number
// len[l], padded with copies of the last entry to a multiple of F.
struct SearchIndex {
    u64 at[SEARCH_MAX_LEVELS + 1];
    u64 len[SEARCH_MAX_LEVELS + 1];
    u32 levels;  // 0: the array itself fits the top (it is copied to shared memory)
    u32 off;     // elements from the sector boundary below the array to its start
};

// The queries' kernel parameter: a buffer's pointer itself when
// SEARCH_QUERIES_BUF (the host passes the expression's bytes, whose first 8
// are that pointer; restrict, as the other inputs: read through the node,
// ptxas spilled 8 bytes of sm_90's f64 lower and upper bounds), else the
// expression, in place in parameter memory.
#if SEARCH_QUERIES_BUF
#define SEARCH_QUERIES const T* __restrict__ queries
#else
#define SEARCH_QUERIES CUPRIM_INPUT In queries
#endif
// The sorted side's kernel parameter, as the queries': a buffer's pointer,
// or the expression InS in parameter memory; element i of either.
#if SEARCH_SORTED_BUF
#define SEARCH_SORTED const T* __restrict__ data
#else
#define SEARCH_SORTED CUPRIM_INPUT InS data
#endif
__device__ __forceinline__ T search_at(const T* __restrict__ d, u64 i) { return cuprim_load_ro(d + i); }
template <typename X> __device__ __forceinline__ T search_at(const X& d, u64 i) { return d.load(i); }

__device__ __forceinline__ T search_query(const T* __restrict__ q, u64 i) { return cuprim_load_ro(q + i); }
template <typename X> __device__ __forceinline__ T search_query(const X& q, u64 i) { return q.load(i); }
// Query i, or query 0 for threads past the last one (m >= 1).
__device__ __forceinline__ T search_query_or_first(const T* __restrict__ q, u64 i, u64 m) {
    return i < m ? cuprim_load_ro(q + i) : q[0];
}
template <typename X> __device__ __forceinline__ T search_query_or_first(const X& q, u64 i, u64 m) {
    return q.load(i < m ? i : 0);
}

// True while the answer lies after `e`: for a lower bound (and an exact
// search) e < x, for an upper bound !(x < e).
__device__ __forceinline__ bool search_before(T e, T x) {
    if constexpr (SEARCH_MODE == 1) return !Cmp::less(x, e);
    else return Cmp::less(e, x);
}

// The index: thread g computes level 1's entry g (the last element of
// group g: the array's element (g + 1) F - off - 1, at most n - 1) and
// writes it wherever it is the last entry under a node of a higher level
// (the last real entry also fills the padding).
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK)
    cuprim_search_index(SEARCH_SORTED, u64 n, T* __restrict__ index, SearchIndex ix) {
    const u64 stride = cuprim_thread_count();
    const u64 len1 = ix.len[1], padded1 = (len1 + F - 1) / F * F;
    for (u64 g = cuprim_thread_id(); g < padded1; g += stride) {
        const u64 end = (g + 1) * F - ix.off;
        const T v = search_at(data, (end < n ? end : n) - 1);
        index[ix.at[1] + g] = v;
        if (g >= len1) continue;
        u64 span = F;
        for (u32 l = 2; l <= ix.levels; l++, span *= F) {
            const u64 padded = (ix.len[l] + F - 1) / F * F;
            if (g == len1 - 1) {
                for (u64 h = g / span; h < padded; h++) index[ix.at[l] + h] = v;
            } else if ((g + 1) % span == 0) {
                index[ix.at[l] + (g + 1) / span - 1] = v;
            } else {
                break;  // not the last under a node of this level, nor of any higher one
            }
        }
    }
}

// The answers of SEARCH_ITEMS queries x[] whose node at level `level` is
// node[] (every query here has an answer below the top).
__device__ __forceinline__ void search_descend(const T* __restrict__ index, const SearchIndex& ix, const T (&x)[SEARCH_ITEMS],
                                               u64 (&node)[SEARCH_ITEMS]) {
    for (u32 l = ix.levels; l >= 2; l--) {
        // The children of node[j] at level l are level l - 1's entries node[j] * F ..
        const T* const lvl = index + ix.at[l - 1];
        SearchVec h[SEARCH_ITEMS][2];
#pragma unroll
        for (u32 j = 0; j < SEARCH_ITEMS; j++) {
            const SearchVec* p = (const SearchVec*)(lvl + node[j] * F);
            h[j][0] = cuprim_load_ro(p);
            h[j][1] = cuprim_load_ro(p + 1);
        }
#pragma unroll
        for (u32 j = 0; j < SEARCH_ITEMS; j++) {
            u32 c = 0;
#pragma unroll
            for (u32 t = 0; t < F / 2; t++) c += search_before(h[j][0].v[t], x[j]) + search_before(h[j][1].v[t], x[j]);
            node[j] = node[j] * F + c;
        }
    }
}

// The first position of the shared top (p2 entries, a power of two: the
// real ones padded with copies of the last) whose entry is not before x;
// p2 if none. A fixed number of halvings, no branch on the data.
__device__ __forceinline__ u32 search_top(const T* top, u32 p2, T x) {
    u32 pos = 0;
    for (u32 step = p2 >> 1; step > 0; step >>= 1)
        if (search_before(top[pos + step - 1], x)) pos += step;
    return pos + search_before(top[pos], x);
}

// The output for a query x whose answer is position `pos` of n, `at` the
// element there (when pos < n).
__device__ __forceinline__ I search_output(u64 pos, u64 n, T at, T x) {
    if constexpr (SEARCH_MODE == 2) return pos < n && !Cmp::less(x, at) ? (I)pos : ~(I)0;
    else return (I)pos;
}

// m queries into the n sorted elements at data, with the index built by
// cuprim_search_index (or, when ix.levels == 0, none: the array fits the
// top). Grid-stride over rows of CUPRIM_BLOCK x SEARCH_ITEMS queries.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK)
    cuprim_search(SEARCH_SORTED, u64 n, const T* __restrict__ index, SearchIndex ix, SEARCH_QUERIES, u64 m,
                  I* __restrict__ out) {
    __shared__ T top[SEARCH_TOP];
    const u32 top_len = (u32)(ix.levels ? ix.len[ix.levels] : n);
    u32 p2 = 1;
    while (p2 < top_len) p2 <<= 1;
#if SEARCH_SORTED_BUF
    const T* const src = ix.levels ? index + ix.at[ix.levels] : data;
    const T last = cuprim_load_ro(src + top_len - 1);
    for (u32 i = threadIdx.x; i < p2; i += CUPRIM_BLOCK) top[i] = i < top_len ? cuprim_load_ro(src + i) : last;
#else
    // The top: the index's highest level, or the expression itself.
    auto top_at = [&](u32 i) -> T { return ix.levels ? cuprim_load_ro(index + ix.at[ix.levels] + i) : data.load(i); };
    const T last = top_at(top_len - 1);
    for (u32 i = threadIdx.x; i < p2; i += CUPRIM_BLOCK) top[i] = i < top_len ? top_at(i) : last;
#endif
    __syncthreads();
#if SEARCH_SORTED_BUF
    const T* const base = data - ix.off;  // the sector boundary: group g is base[g F ..]
#endif
    const u64 row = (u64)CUPRIM_BLOCK * SEARCH_ITEMS;
    for (u64 r = (u64)blockIdx.x * row; r < m; r += (u64)gridDim.x * row) {
        T x[SEARCH_ITEMS];
        u64 node[SEARCH_ITEMS];
        bool after[SEARCH_ITEMS];  // every element is before x: the answer is n
#pragma unroll
        for (u32 j = 0; j < SEARCH_ITEMS; j++) {
            const u64 q = r + j * CUPRIM_BLOCK + threadIdx.x;
            x[j] = search_query_or_first(queries, q, m);
        }
#pragma unroll
        for (u32 j = 0; j < SEARCH_ITEMS; j++) {
            const u32 p = search_top(top, p2, x[j]);
            after[j] = p >= top_len;
            node[j] = after[j] ? 0 : p;  // searched like the first node; the answer is n
        }
        if (ix.levels == 0) {
#pragma unroll
            for (u32 j = 0; j < SEARCH_ITEMS; j++) {
                const u64 q = r + j * CUPRIM_BLOCK + threadIdx.x;
                const u64 pos = after[j] ? n : node[j];
                if (q < m) out[q] = search_output(pos, n, top[after[j] ? 0 : pos], x[j]);
            }
            continue;
        }
        search_descend(index, ix, x, node);
        // node[j] is now the group (of the array) holding the answer: its
        // first element not before x[j]. A whole group is one sector read
        // and a count; the first and last groups may be cut by the array's
        // ends.
#pragma unroll
        for (u32 j = 0; j < SEARCH_ITEMS; j++) {
            const u64 q = r + j * CUPRIM_BLOCK + threadIdx.x;
            const u64 g0 = node[j] * F;  // base index of the group's first slot
            u64 pos;
            T at = x[j];
            if (SEARCH_SORTED_BUF && g0 >= ix.off && g0 + F - ix.off <= n) {
#if SEARCH_SORTED_BUF
                const SearchVec* p = (const SearchVec*)(base + g0);
#else
                const SearchVec* p = nullptr;  // not reached: expressions take the element loads below
#endif
                const SearchVec v0 = cuprim_load_ro(p), v1 = cuprim_load_ro(p + 1);
                u32 c = 0;
#pragma unroll
                for (u32 t = 0; t < F / 2; t++) c += search_before(v0.v[t], x[j]) + search_before(v1.v[t], x[j]);
                pos = g0 - ix.off + c;
                if constexpr (SEARCH_MODE == 2) {
#pragma unroll
                    for (u32 t = 0; t < F / 2; t++) {
                        if (c == t) at = v0.v[t];
                        if (c == t + F / 2) at = v1.v[t];
                    }
                }
            } else {
                pos = g0 < ix.off ? 0 : g0 - ix.off;
                bool found = false;
#pragma unroll
                for (u32 t = 0; t < F; t++) {
                    const u64 i = g0 + t;
                    if (found || i < ix.off || i - ix.off >= n) continue;
#if SEARCH_SORTED_BUF
                    const T e = cuprim_load_ro(base + i);
#else
                    const T e = data.load(i);  // off is 0
#endif
                    if (search_before(e, x[j])) {
                        pos = i - ix.off + 1;
                    } else {
                        at = e;
                        found = true;
                    }
                }
            }
            if (after[j]) pos = n;
            if (q < m) out[q] = search_output(pos, n, at, x[j]);
        }
    }
}

// The same answers without an index (few queries: building one would cost
// more than it saves): each query bisects the array in global memory.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK)
    cuprim_search_plain(SEARCH_SORTED, u64 n, SEARCH_QUERIES, u64 m, I* __restrict__ out) {
    for (u64 q = cuprim_thread_id(); q < m; q += cuprim_thread_count()) {
        const T x = search_query(queries, q);
        const u64 lo =
            cuprim_partition_point([&](u64 i) { return search_at(data, i); }, n, [&](T e) { return search_before(e, x); });
        out[q] = search_output(lo, n, lo < n ? search_at(data, lo) : x, x);
    }
}

// is_sorted_until: the least i >= 1 with less(data[i], data[i - 1]), or n. The
// running best is kept inverted (~i) in *best_inv (zero: none yet), so
// atomicMax finds the least; threads stop once every pair they have left
// is past the best found.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK)
    cuprim_sorted_until(SEARCH_SORTED, u64 n, u64* best_inv) {
    volatile u64* vbest = best_inv;
    const u64 stride = cuprim_thread_count();
    u64 i = cuprim_thread_id() + 1;
    for (u32 round = 0; i < n; round++, i += stride) {
        if ((round & 7) == 0 && i >= ~*vbest) break;
        if (Cmp::less(search_at(data, i), search_at(data, i - 1))) {
            atomicMax(best_inv, ~i);
            break;
        }
    }
}
