// The tile of kernels/scan/scan.cu and scan_two_pass.cu: its shape, the
// coalesced 16-byte loads into each warp's part of shared memory, the
// transpose that gives each thread CUPRIM_ITEMS consecutive elements, the
// per-thread fold and scan, and the stores.
//
// Specialised on: In (the input expression, block/expr.cuh; a plain buffer
// is cuprim_x_buf<T>), T (its element or tuple), ScanOp (apply, identity),
// CUPRIM_BLOCK, CUPRIM_ITEMS, CUPRIM_SCAN_UNZIP (defined only when unzipping).

#ifndef CUPRIM_SCAN_UNZIP
#define CUPRIM_SCAN_UNZIP 0
#endif

constexpr int SCAN_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
constexpr int SCAN_WARPS = CUPRIM_BLOCK / 32;
// 16-byte vectors where T's size divides 16 (every element type; tuples of 2,
// 4, 8 or 16 bytes), else one value at a time. (No constexpr bool for the
// test: it would be emitted as a global byte, and the element types' modules
// would differ from those before tuples.)
constexpr int SCAN_VEC = 16 % sizeof(T) == 0 ? 16 / sizeof(T) : 1;
constexpr int SCAN_THREAD_VECS = CUPRIM_ITEMS / SCAN_VEC;  // 16-byte vectors (or values) per thread
static_assert(CUPRIM_ITEMS % SCAN_VEC == 0, "a thread's items must be whole 16-byte vectors");
// SCAN_VEC values moved as one: a 16-byte vector, or one value of a size
// that does not divide 16 (no vector type: its alignment would not be a
// power of two).
template <bool VECTORS> struct scan_vec_of {
    typedef cuprim_vec<T, SCAN_VEC> type;
};
template <> struct scan_vec_of<false> {
    typedef cuprim_arr<T, 1> type;
};
typedef scan_vec_of<16 % sizeof(T) == 0>::type ScanVec;

// Each warp owns 32 * CUPRIM_ITEMS consecutive elements of the tile and
// transposes them through its own part of shared memory (16-byte accesses,
// __syncwarp only), so the only block-wide barriers are the tile index and
// the two of the fused block scan / look-back.
constexpr int SCAN_WARP_VECS = 32 * SCAN_THREAD_VECS;  // vectors per warp

// Whether the tile at `first` can be read in 16-byte vectors.
template <typename X> __device__ __forceinline__ bool scan_vectors_at(const X& in, u64 first) {
    if constexpr (X::IS_BUF) {
        return cuprim_aligned_to<ScanVec>(in.p + first);
    } else {
        const u32 m = in.template misalign<SCAN_VEC>();
        return m == 0 || m == CUPRIM_X_ANY;
    }
}

// Element i, one at a time (a partial tile): a buffer with a plain load.
template <typename X> __device__ __forceinline__ T scan_load_one(const X& in, u64 i) {
    if constexpr (X::IS_BUF) {
        return in.p[i];
    } else {
        return in.load(i);
    }
}

// A full tile's part of this warp into its shared memory, coalesced: a
// buffer with plain 16-byte vector loads (the fewest registers: sm_80 at
// 8 blocks per SM spilled with the expression form), an input expression
// with load_n. between() runs after the loads are issued, before their
// stores.
template <typename X, typename Between>
__device__ __forceinline__ void scan_load_full(const X& in, u64 first, ScanVec* wsmem, int lane, Between between) {
    if constexpr (X::IS_BUF) {
        const ScanVec* vin = (const ScanVec*)(in.p + first);
        ScanVec x[SCAN_THREAD_VECS];
#pragma unroll
        for (int j = 0; j < SCAN_THREAD_VECS; j++) x[j] = vin[j * 32 + lane];
        between();
#pragma unroll
        for (int j = 0; j < SCAN_THREAD_VECS; j++) wsmem[j * 32 + lane] = x[j];
    } else {
        cuprim_arr<T, SCAN_VEC> x[SCAN_THREAD_VECS];
#pragma unroll
        for (int j = 0; j < SCAN_THREAD_VECS; j++) x[j] = in.template load_n<SCAN_VEC>(first + (u64)(j * 32 + lane) * SCAN_VEC);
        between();
#pragma unroll
        for (int j = 0; j < SCAN_THREAD_VECS; j++) {
            ScanVec y;
#pragma unroll
            for (int k = 0; k < SCAN_VEC; k++) y.v[k] = x[j].v[k];
            wsmem[j * 32 + lane] = y;
        }
    }
}

// One field (`get`) of the SCAN_VEC values of y, as ScanVec v of the field's
// array from p on: one vector of SCAN_VEC fields (a single field where
// SCAN_VEC is 1).
template <typename F, typename Get> __device__ __forceinline__ void scan_store_field(F* p, int v, const ScanVec& y, Get get) {
    cuprim_vec<F, SCAN_VEC> z;
#pragma unroll
    for (int k = 0; k < SCAN_VEC; k++) z.v[k] = get(y.v[k]);
    ((cuprim_vec<F, SCAN_VEC>*)p)[v] = z;
}

// Where the scan of a tuple goes, unzipped (CUPRIM_SCAN_UNZIP): each field
// to its own array, as by_key.cu's bk_store.
template <typename V> struct scan_out_fields;
template <typename A, typename B> struct scan_out_fields<cuprim_t2<A, B>> {
    A* a;
    B* b;
    __device__ __forceinline__ scan_out_fields(void* o0, void* o1, void*) : a((A*)o0), b((B*)o1) {}
    __device__ __forceinline__ bool vectors_at(u64 first) const {
        return cuprim_aligned_to<cuprim_vec<A, SCAN_VEC>>(a + first) && cuprim_aligned_to<cuprim_vec<B, SCAN_VEC>>(b + first);
    }
    __device__ __forceinline__ void store(u64 i, const cuprim_t2<A, B>& x) const {
        a[i] = x.a0;
        b[i] = x.a1;
    }
    __device__ __forceinline__ void store_vec(u64 first, int v, const ScanVec& y) const {
        scan_store_field(a + first, v, y, [](const cuprim_t2<A, B>& x) { return x.a0; });
        scan_store_field(b + first, v, y, [](const cuprim_t2<A, B>& x) { return x.a1; });
    }
};
template <typename A, typename B, typename C> struct scan_out_fields<cuprim_t3<A, B, C>> {
    A* a;
    B* b;
    C* c;
    __device__ __forceinline__ scan_out_fields(void* o0, void* o1, void* o2) : a((A*)o0), b((B*)o1), c((C*)o2) {}
    __device__ __forceinline__ bool vectors_at(u64 first) const {
        return cuprim_aligned_to<cuprim_vec<A, SCAN_VEC>>(a + first) && cuprim_aligned_to<cuprim_vec<B, SCAN_VEC>>(b + first) &&
               cuprim_aligned_to<cuprim_vec<C, SCAN_VEC>>(c + first);
    }
    __device__ __forceinline__ void store(u64 i, const cuprim_t3<A, B, C>& x) const {
        a[i] = x.a0;
        b[i] = x.a1;
        c[i] = x.a2;
    }
    __device__ __forceinline__ void store_vec(u64 first, int v, const ScanVec& y) const {
        scan_store_field(a + first, v, y, [](const cuprim_t3<A, B, C>& x) { return x.a0; });
        scan_store_field(b + first, v, y, [](const cuprim_t3<A, B, C>& x) { return x.a1; });
        scan_store_field(c + first, v, y, [](const cuprim_t3<A, B, C>& x) { return x.a2; });
    }
};

// The kernel's outputs: one array of T, or (CUPRIM_SCAN_UNZIP) one per
// field of T. The one-array path is spelled as it was before tuples, so its
// machine code is the same instruction for instruction.
#if CUPRIM_SCAN_UNZIP == 0
#define CUPRIM_SCAN_OUT T* out
#else
static_assert(CUPRIM_SCAN_UNZIP == 2 || CUPRIM_SCAN_UNZIP == 3, "unzips a pair or a triple");
#define CUPRIM_SCAN_OUT void *out0, void *out1, void *out2
#endif

// Where a tile lies and this thread's place in it.
struct ScanTileAt {
    u64 base;   // the tile's first element
    int valid;  // its elements (SCAN_TILE but for the last tile)
    int lane, warp;
    int wbase;  // this warp's first element in the tile
    __device__ __forceinline__ ScanTileAt(u32 tile, u64 n)
        : base((u64)tile * SCAN_TILE), lane(threadIdx.x & 31), warp(threadIdx.x >> 5), wbase(warp * SCAN_WARP_VECS * SCAN_VEC) {
        const u64 remaining = n - base;
        valid = remaining < (u64)SCAN_TILE ? (int)remaining : SCAN_TILE;
    }
    // This warp's part of the tile's shared memory.
    __device__ __forceinline__ ScanVec* wsmem(ScanVec* smem) const { return smem + warp * SCAN_WARP_VECS; }
};

// The tile into its warps' parts of shared memory, coalesced within each
// warp (`full`: whole and vector-aligned; otherwise the elements past
// `valid` are the identity). `between()` runs while a full tile's loads are
// in flight, before they are stored (work whose own loads should overlap
// them); before the loads of any other tile.
template <typename X, typename Between>
__device__ __forceinline__ void scan_load_tile(const X& in, const ScanTileAt& at, bool full, ScanVec* smem, Between between) {
    ScanVec* wsmem = at.wsmem(smem);
    if (full) {
        scan_load_full(in, at.base + at.wbase, wsmem, at.lane, between);
    } else {
        between();
        T* flat = (T*)wsmem;
        for (int i = at.lane; i < SCAN_WARP_VECS * SCAN_VEC; i += 32)
            flat[i] = at.wbase + i < at.valid ? scan_load_one(in, at.base + at.wbase + i) : ScanOp::identity();
    }
    __syncwarp();
}

// The fold of this thread's CUPRIM_ITEMS consecutive elements. They stay
// in shared memory (read again by scan_thread_elements), so few registers
// are live across the block scan and more blocks fit an SM.
__device__ __forceinline__ T scan_thread_total(const ScanVec* wsmem) {
    const int lane = threadIdx.x & 31;
    T thread_total;
#pragma unroll
    for (int q = 0; q < SCAN_THREAD_VECS; q++) {
        const ScanVec x = wsmem[lane * SCAN_THREAD_VECS + q];
#pragma unroll
        for (int k = 0; k < SCAN_VEC; k++) thread_total = (q | k) ? ScanOp::apply(thread_total, x.v[k]) : x.v[0];
    }
    return thread_total;
}

// Scans this thread's elements in shared memory, in place: inclusive or
// exclusive, from the tile's prefix (where has_tile_prefix), then the fold
// of the threads before it in the tile (where has_before).
__device__ __forceinline__ void scan_thread_elements(ScanVec* wsmem, bool has_tile_prefix, const T& tile_prefix,
                                                     bool has_before, const T& before, int exclusive) {
    const int lane = threadIdx.x & 31;
    bool have = has_tile_prefix;
    T run = has_tile_prefix ? tile_prefix : ScanOp::identity();
    if (has_before) {
        run = have ? ScanOp::apply(run, before) : before;
        have = true;
    }
#pragma unroll
    for (int q = 0; q < SCAN_THREAD_VECS; q++) {
        ScanVec y = wsmem[lane * SCAN_THREAD_VECS + q];
#pragma unroll
        for (int k = 0; k < SCAN_VEC; k++) {
            const T incl = have ? ScanOp::apply(run, y.v[k]) : y.v[k];
            y.v[k] = exclusive ? (have ? run : ScanOp::identity()) : incl;
            run = incl;
            have = true;
        }
        wsmem[lane * SCAN_THREAD_VECS + q] = y;
    }
    __syncwarp();
}

// The scanned tile from shared memory to out, coalesced within each warp.
__device__ __forceinline__ void scan_store_tile(T* out, const ScanTileAt& at, bool full, const ScanVec* smem) {
    const ScanVec* wsmem = smem + at.warp * SCAN_WARP_VECS;
    if (full) {
        ScanVec* vout = (ScanVec*)(out + at.base + at.wbase);
#pragma unroll
        for (int j = 0; j < SCAN_THREAD_VECS; j++) vout[j * 32 + at.lane] = wsmem[j * 32 + at.lane];
    } else {
        const T* flat = (const T*)wsmem;
        for (int i = at.lane; i < SCAN_WARP_VECS * SCAN_VEC && at.wbase + i < at.valid; i += 32) out[at.base + at.wbase + i] = flat[i];
    }
}
#if CUPRIM_SCAN_UNZIP
// The same, each field to its own array.
__device__ __forceinline__ void scan_store_tile(const scan_out_fields<T>& out, const ScanTileAt& at, bool full, const ScanVec* smem) {
    const ScanVec* wsmem = smem + at.warp * SCAN_WARP_VECS;
    if (full) {
#pragma unroll
        for (int j = 0; j < SCAN_THREAD_VECS; j++) out.store_vec(at.base + at.wbase, j * 32 + at.lane, wsmem[j * 32 + at.lane]);
    } else {
        const T* flat = (const T*)wsmem;
        for (int i = at.lane; i < SCAN_WARP_VECS * SCAN_VEC && at.wbase + i < at.valid; i += 32) out.store(at.base + at.wbase + i, flat[i]);
    }
}
#endif
