// Runs of equal consecutive keys in one pass: reduce_by_key, unique,
// unique_by_key, unique_count and run-length encoding.
//
// Element i is a run head when i == 0 or KeyEq::differ(keys[i - 1], keys[i]),
// and a run tail when it is the last element or keys[i + 1] starts a run.
// The number of heads up to and including i, minus one, is the output slot
// of i's run. Tiles chain through the decoupled look-back
// (kernels/block/lookback.cuh):
//   - unique / unique_by_key / unique_count scan the head count alone (as
//     kernels/select/select.cu scans its selection count); each head writes
//     its key (and its value) to its run's slot;
//   - reduce_by_key and run-length encoding scan (head count, segmented
//     value) pairs with
//       (ca, a) . (cb, b) = (ca + cb, cb > 0 ? b : a op b),
//     associative and not commutative, so the order is kept; at a run's tail
//     the segmented value is the run's aggregate (its length when every
//     value is 1), and the head writes the run's first key.
//
// Blocks are persistent and warp-specialised (cuprim_by_key below): compute
// warps take tiles from the counter and keep CUPRIM_BYKEY_STAGES - 2 of them
// loading into shared memory (cp.async, no registers held) while they work
// on one: each compute thread reads its CUPRIM_ITEMS consecutive keys (and
// values) from the stage, counts heads, the counts are scanned in the warp
// and across warps (one barrier of the compute warps), the tile's aggregate
// is published at once and its outputs are staged, compacted, in the stage
// they were read from. One look-back warp per block takes each computed
// stage one round later, looks back and writes the staged outputs as
// coalesced runs, while the compute warps work on the next tile; the two
// roles meet once per tile at a __syncthreads, which hands the computed
// stage to the look-back warp and the written one back to the loads (both
// sides wait on it, so every shared-memory hand-off is ordered by it; a
// bar.arrive / bar.sync hand-off, which racecheck reported as 44 hazards,
// was replaced by it). Rows of CUPRIM_ITEMS elements are padded by 16
// bytes, so each thread's 16-byte reads of its own row are free of bank
// conflicts. A tile's key before it and key after it come with its load.
//
// Specialised on: K (key), V (value; C for run-length encoding), O (value
// output), C (count: u32 below 2^32 elements, else u64), KeyEq (static bool
// differ(K a, K b)), ReduceOp (reduce_by_key's monoid on V),
// CUPRIM_BYKEY_KEYS (write the run keys), CUPRIM_BYKEY_VALUES (0: none,
// 1: the first value of each run, 2: reduce, 3: run lengths),
// CUPRIM_BYKEY_STAGES (tiles in shared memory per block), CUPRIM_DETERMINISTIC,
// CUPRIM_LOOKBACK_WINDOWS, CUPRIM_BLOCK, CUPRIM_ITEMS. Dynamic shared memory:
// CUPRIM_BYKEY_STAGES * BK_STAGE_BYTES (src/algo/bykey/plan.rs computes the same).

#define BK_SEGMENTED (CUPRIM_BYKEY_VALUES >= 2)

constexpr int BK_TILE = CUPRIM_BLOCK * CUPRIM_ITEMS;
constexpr int BK_WARPS = CUPRIM_BLOCK / 32;
constexpr int BK_STAGES = CUPRIM_BYKEY_STAGES;
static_assert(CUPRIM_ITEMS <= 32, "head and tail flags live in one 32-bit mask per thread");
static_assert(BK_STAGES >= 3, "a stage computed, one written out by the look-back warp, at least one loading");

// One thread's CUPRIM_ITEMS elements of X are a row in shared memory; rows of
// a whole number of 16-byte vectors (of an X that divides 16) are padded by
// 16 bytes and read as vectors, others are packed and read one by one.
template <typename X> struct BkRows {
    static constexpr int ROW = CUPRIM_ITEMS * (int)sizeof(X);
    static constexpr bool VEC = ROW % 16 == 0 && 16 % sizeof(X) == 0;
    static constexpr int PITCH = VEC ? ROW + 16 : ROW;
    static constexpr int BYTES = (CUPRIM_BLOCK * PITCH + 15) / 16 * 16;
    __device__ __forceinline__ static int offset(int i) {
        if constexpr (VEC) {
            return (i / CUPRIM_ITEMS) * PITCH + (i % CUPRIM_ITEMS) * (int)sizeof(X);
        } else {
            return i * (int)sizeof(X);
        }
    }
    __device__ __forceinline__ static X& at(unsigned char* region, int i) { return *(X*)(region + offset(i)); }
    // Row `row` into out.
    __device__ __forceinline__ static void read_row(const unsigned char* region, int row, X (&out)[CUPRIM_ITEMS]) {
        if constexpr (VEC) {
            constexpr int N = 16 / sizeof(X);
            typedef cuprim_vec<X, N> Vec;
#pragma unroll
            for (int j = 0; j < ROW / 16; j++) {
                const Vec v = *(const Vec*)(region + row * PITCH + j * 16);
#pragma unroll
                for (int q = 0; q < N; q++) out[j * N + q] = v.v[q];
            }
        } else {
#pragma unroll
            for (int k = 0; k < CUPRIM_ITEMS; k++) out[k] = *(const X*)(region + offset(row * CUPRIM_ITEMS + k));
        }
    }
};

// A stage: the keys' rows, two 16-byte slots (the key before the tile, the
// key after it), then the values' rows: V for reduce and run lengths (the
// loaded values, then the staged run aggregates), O for unique_by_key (the
// staged first values), none otherwise.
constexpr int BK_EDGE_OFFSET = BkRows<K>::BYTES;
constexpr int BK_VALUES_OFFSET = BK_EDGE_OFFSET + 32;
constexpr int BK_VALUE_BYTES = CUPRIM_BYKEY_VALUES == 0   ? 0
                               : CUPRIM_BYKEY_VALUES == 1 ? BkRows<O>::BYTES
                                                          : BkRows<V>::BYTES;
constexpr int BK_STAGE_BYTES = BK_VALUES_OFFSET + BK_VALUE_BYTES;

template <int BYTES> __device__ __forceinline__ void bk_copy_async(void* dst, const void* src) {
#if __CUDA_ARCH__ >= 800
    const u32 d = (u32)__cvta_generic_to_shared(dst);
    if constexpr (BYTES == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(d), "l"(src), "n"(BYTES) : "memory");
    }
#else
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async sizes");
    if constexpr (BYTES == 16) {
        *(uint4*)dst = *(const uint4*)src;
    } else if constexpr (BYTES == 8) {
        *(unsigned long long*)dst = *(const unsigned long long*)src;
    } else {
        *(u32*)dst = *(const u32*)src;
    }
#endif
}
__device__ __forceinline__ void bk_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int PENDING> __device__ __forceinline__ void bk_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
#endif
}

// One element into shared memory: asynchronously where the size allows.
template <typename X> __device__ __forceinline__ void bk_copy_one(X* dst, const X* src) {
    if constexpr (sizeof(X) == 4 || sizeof(X) == 8 || sizeof(X) == 16) {
        bk_copy_async<(int)sizeof(X)>(dst, src);
    } else {
        *dst = *src;
    }
}

// Starts loading `valid` elements at src into the rows at region.
template <typename X> __device__ __forceinline__ void bk_issue_rows(const X* src, unsigned char* region, int valid) {
    typedef BkRows<X> R;
    if constexpr (R::VEC) {
        if (valid == BK_TILE && cuprim_aligned_to<uint4>(src)) {
            constexpr int PER_ROW = R::ROW / 16;
#pragma unroll
            for (int j = 0; j < PER_ROW; j++) {
                const int c = j * CUPRIM_BLOCK + threadIdx.x;  // 16-byte chunk of the tile
                bk_copy_async<16>(region + (c / PER_ROW) * R::PITCH + (c % PER_ROW) * 16, (const unsigned char*)src + c * 16);
            }
            return;
        }
    }
    for (int i = threadIdx.x; i < valid; i += CUPRIM_BLOCK) bk_copy_one<X>(&R::at(region, i), src + i);
}

// Starts loading tile `tile` (if any) into `stage`; always commits a group.
__device__ __forceinline__ void bk_issue(u32 tile, u32 num_tiles, const K* keys, const V* values, u64 n,
                                         unsigned char* stage) {
    if (tile < num_tiles) {
        const u64 base = (u64)tile * BK_TILE;
        const u64 remaining = n - base;
        const int valid = remaining < (u64)BK_TILE ? (int)remaining : BK_TILE;
        bk_issue_rows<K>(keys + base, stage, valid);
#if CUPRIM_BYKEY_VALUES == 2
        bk_issue_rows<V>(values + base, stage + BK_VALUES_OFFSET, valid);
#endif
        if (threadIdx.x == 0 && base > 0) bk_copy_one<K>((K*)(stage + BK_EDGE_OFFSET), keys + base - 1);
#if BK_SEGMENTED
        if (threadIdx.x == 32 % CUPRIM_BLOCK && base + valid < n)
            bk_copy_one<K>((K*)(stage + BK_EDGE_OFFSET + 16), keys + base + valid);
#endif
    }
    bk_commit();
}

// Thread 0: the next tile, or num_tiles once there are none. Every block
// takes until it is refused, once, so the counter ends at num_tiles plus
// the blocks; the block refused last resets it for the next launch.
__device__ __forceinline__ u32 bk_take(u32* tile_counter, u32 num_tiles, bool& taking) {
    if (!taking) return num_tiles;
    const u32 t = atomicAdd(tile_counter, 1u);
    if (t >= num_tiles) {
        taking = false;
        if (t == num_tiles + gridDim.x - 1) *tile_counter = 0;
        return num_tiles;
    }
    return t;
}

struct BkCountOp {
    __device__ __forceinline__ static C apply(C a, C b) { return a + b; }
    __device__ __forceinline__ static C identity() { return 0; }
};

#if BK_SEGMENTED
#if CUPRIM_BYKEY_VALUES == 3
// Run lengths: every element's value is 1, summed per run.
typedef BkCountOp ValueOp;
#else
typedef ReduceOp ValueOp;
#endif

// (heads in the range, fold of the values after its last head).
struct BkPair {
    V v;
    C count;
};

// The deterministic look-back's canonical form of a pair (kernels/block/lookback.cuh).
__device__ __forceinline__ BkPair lookback_settle(const BkPair& p) {
    BkPair r = p;
    r.v = cuprim_canonical_nan(p.v);
    return r;
}

struct BkPairOp {
    __device__ __forceinline__ static BkPair apply(const BkPair& a, const BkPair& b) {
        BkPair r;
        r.count = a.count + b.count;
        r.v = b.count > 0 ? b.v : ValueOp::apply(a.v, b.v);
        return r;
    }
    __device__ __forceinline__ static BkPair identity() {
        BkPair r;
        r.v = ValueOp::identity();
        r.count = 0;
        return r;
    }
};
typedef BkPair Scanned;
typedef BkPairOp ScannedOp;
__device__ __forceinline__ C bk_count(const BkPair& p) { return p.count; }
#else
typedef C Scanned;
typedef BkCountOp ScannedOp;
__device__ __forceinline__ C bk_count(C c) { return c; }
#endif

// The compute warps among themselves (named barrier 1; barrier 0 is
// __syncthreads, which the whole block meets once per tile).
__device__ __forceinline__ void bk_compute_sync() { asm volatile("bar.sync 1, %0;" ::"n"(CUPRIM_BLOCK) : "memory"); }
constexpr int BK_THREADS = CUPRIM_BLOCK + 32;

// What the compute warps leave for the look-back warp per stage.
struct BkMeta {
    Scanned total;  // the tile's scan total (published as its aggregate)
    u32 tile;       // num_tiles: no tile (the block is done)
    u32 head_first, tail_last;
};

// keys: n keys. values: n values (reduce, unique_by_key) or null.
// keys_out / values_out: at least as many slots as runs (null when not written).
// count_out: receives the number of runs (u64), written by the last tile.
//
// Launched with CUPRIM_BLOCK + 32 threads: CUPRIM_BLOCK compute threads
// (CUPRIM_ITEMS elements each per tile) and one look-back warp. Load L of
// a block goes to stage L % BK_STAGES. In round r the compute warps work on
// load r (count its heads, publish its aggregate, stage its outputs) while
// the look-back warp finishes load r - 1 (looks back, writes its outputs);
// then the whole block meets at one __syncthreads, after which load r's
// stage belongs to the look-back warp and load r - 1's stage is free for
// load r + BK_STAGES - 1. Every shared-memory hand-off between the two
// roles crosses that barrier, which both sides wait on. A taken tile's
// aggregate waits only on its block's earlier tiles, whose look-backs wait
// only on earlier tiles still, so every wait ends.
extern "C" __global__ void __launch_bounds__(BK_THREADS, CUPRIM_MIN_BLOCKS)
    cuprim_by_key(const K* __restrict__ keys, const V* __restrict__ values, u64 n, K* __restrict__ keys_out,
                  O* __restrict__ values_out, u64* __restrict__ count_out, u32* status, Scanned* aggregates,
                  Scanned* prefixes, u32* tile_counter, u32 num_tiles) {
    extern __shared__ __align__(16) unsigned char bk_stages[];
    __shared__ Scanned warp_totals[BK_WARPS];
    __shared__ Scanned staged[CUPRIM_DETERMINISTIC ? 32 * LOOKBACK_WINDOWS : 1];
    __shared__ BkMeta meta[BK_STAGES];
    __shared__ u32 load_tile[BK_STAGES];  // the tile of the stage's next load (num_tiles: none)

#if BK_SEGMENTED
    constexpr bool DETERMINISTIC = CUPRIM_DETERMINISTIC;
#else
    constexpr bool DETERMINISTIC = false;  // counts are exact
#endif
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    bool taking = true;  // thread 0's: the counter has tiles left

    // Loads 0 .. BK_STAGES - 2 are taken before the first round.
    if (tid == 0) {
        for (int L = 0; L + 1 < BK_STAGES; L++) load_tile[L] = bk_take(tile_counter, num_tiles, taking);
    }
    __syncthreads();

    TileState<Scanned> state(status, aggregates, prefixes);  // the look-back warp's
    const int first = tid * CUPRIM_ITEMS;                     // a compute thread's first element in a tile
    if (tid < CUPRIM_BLOCK) {
        for (int L = 0; L + 2 < BK_STAGES; L++) bk_issue(load_tile[L], num_tiles, keys, values, n, bk_stages + L * BK_STAGE_BYTES);
    }
    // Round r: the compute warps work on load r, the look-back warp finishes
    // load r - 1; the block ends in the first round whose load has no tile
    // (load_tile is the same for every thread here, so all leave together).
    // Both roles meet at the one __syncthreads below (the same instruction:
    // a barrier reached from two places would not be an aligned barrier).
    for (int r = 0;; r++) {
        const int s = r % BK_STAGES;
        const bool last = load_tile[s] >= num_tiles;
        if (tid < CUPRIM_BLOCK) {
            if (!last) {
                {
                    // Load r + BK_STAGES - 2 into the stage the last barrier freed (that of load r - 2).
                    const int ls = (r + BK_STAGES - 2) % BK_STAGES;
                    bk_issue(load_tile[ls], num_tiles, keys, values, n, bk_stages + ls * BK_STAGE_BYTES);
                }
                // Load r's group is done once at most the BK_STAGES - 2 issued after it are pending.
                bk_wait<BK_STAGES - 2>();
                bk_compute_sync();  // load r's stage is visible
                const u32 tile = load_tile[s];
                unsigned char* const stage = bk_stages + s * BK_STAGE_BYTES;
                const u64 base = (u64)tile * BK_TILE;
                const u64 remaining = n - base;
                const int valid = remaining < (u64)BK_TILE ? (int)remaining : BK_TILE;

                // This thread's keys, which of them start a run (bit k: element first + k).
                K kk[CUPRIM_ITEMS];
                BkRows<K>::read_row(stage, tid, kk);
                u32 heads = 0;
                const K prev = tid == 0 ? *(const K*)(stage + BK_EDGE_OFFSET) : BkRows<K>::at(stage, first - 1);
#pragma unroll
                for (int k = 0; k < CUPRIM_ITEMS; k++) {
                    const int i = first + k;
                    if (i < valid && (base + i == 0 || KeyEq::differ(k == 0 ? prev : kk[k - 1], kk[k]))) heads |= 1u << k;
                }
                if (tid == 0) meta[s].head_first = heads & 1u;

#if BK_SEGMENTED
                // Which of them end a run: the next element starts one, or the input ends.
                u32 tails = heads >> 1;
                const int after = first + CUPRIM_ITEMS;
                if (after < valid) {
                    if (KeyEq::differ(kk[CUPRIM_ITEMS - 1], BkRows<K>::at(stage, after))) tails |= 1u << (CUPRIM_ITEMS - 1);
                } else if (after == valid && base + valid < n) {
                    if (KeyEq::differ(kk[CUPRIM_ITEMS - 1], *(const K*)(stage + BK_EDGE_OFFSET + 16)))
                        tails |= 1u << (CUPRIM_ITEMS - 1);
                }
                if (first < valid && valid <= after) {
                    if (base + valid == n) tails |= 1u << (valid - 1 - first);
                    meta[s].tail_last = (tails >> (valid - 1 - first)) & 1u;
                }

                V vv[CUPRIM_ITEMS];
#if CUPRIM_BYKEY_VALUES == 2
                BkRows<V>::read_row(stage + BK_VALUES_OFFSET, tid, vv);
#else
#pragma unroll
                for (int k = 0; k < CUPRIM_ITEMS; k++) vv[k] = (V)1;
#endif
                Scanned mine = ScannedOp::identity();
                if (first < valid) {
                    mine.count = (C)__popc(heads);
                    mine.v = vv[0];
#pragma unroll
                    for (int k = 1; k < CUPRIM_ITEMS; k++) {
                        if (first + k < valid) mine.v = (heads >> k) & 1u ? vv[k] : ValueOp::apply(mine.v, vv[k]);
                    }
                }
#else
                V vv[CUPRIM_BYKEY_VALUES == 1 ? CUPRIM_ITEMS : 1];
#if CUPRIM_BYKEY_VALUES == 1
                // The first value of each run, read where a run starts.
#pragma unroll
                for (int k = 0; k < CUPRIM_ITEMS; k++) {
                    if ((heads >> k) & 1u) vv[k] = values[base + first + k];
                }
#endif
                const Scanned mine = (C)__popc(heads);
#endif

                // The tile's scan: in the warp, then (after one barrier) each thread
                // folds the warp totals before its own.
                const Scanned x = warp_inclusive_scan<Scanned, ScannedOp>(mine);
                if (lane == 31) warp_totals[warp] = x;
                const Scanned before_in_warp = cuprim_shfl_up(x, 1);
                bk_compute_sync();  // warp totals; every compute thread has read the stage
                Scanned before = ScannedOp::identity(), total = warp_totals[0];
                bool has_before = false;
#pragma unroll
                for (int w = 0; w < BK_WARPS; w++) {
                    const Scanned t = warp_totals[w];
                    if (w > 0) total = ScannedOp::apply(total, t);
                    if (w < warp) {
                        before = has_before ? ScannedOp::apply(before, t) : t;
                        has_before = true;
                    }
                }
                if (lane > 0) {
                    before = has_before ? ScannedOp::apply(before, before_in_warp) : before_in_warp;
                    has_before = true;
                }
                if (tid == 0) {
                    // The aggregate at once (tile 0's total is its prefix).
                    TileState<Scanned> state(status, aggregates, prefixes);
                    if (tile == 0) {
                        state.publish(0u, DETERMINISTIC ? lookback_settle(total) : total, SCAN_PREFIX);
                    } else {
                        state.publish(tile, total, SCAN_AGGREGATE);
                    }
                    meta[s].total = total;
                }

                // Stage the tile's outputs, compacted, in the stage (tile-local slots).
                C count = has_before ? bk_count(before) : (C)0;  // heads before this thread in the tile
#if BK_SEGMENTED
                // Runs are folded from this tile's values only; the look-back warp
                // puts the tile's prefix in front of the run continuing into it.
                const u32 head_first = meta[s].head_first;
                bool started = has_before;
                V run = has_before ? before.v : vv[0];
#endif
#pragma unroll
                for (int k = 0; k < CUPRIM_ITEMS; k++) {
                    if (first + k < valid) {
                        const bool head = (heads >> k) & 1u;
                        count += head ? 1 : 0;
#if CUPRIM_BYKEY_KEYS
                        if (head) BkRows<K>::at(stage, (int)count - 1) = kk[k];
#endif
#if CUPRIM_BYKEY_VALUES == 1
                        if (head) BkRows<O>::at(stage + BK_VALUES_OFFSET, (int)count - 1) = (O)vv[k];
#endif
#if BK_SEGMENTED
                        run = head || !started ? vv[k] : ValueOp::apply(run, vv[k]);
                        started = true;
                        // A tail's slot, counted from the first run this tile ends.
                        if ((tails >> k) & 1u) BkRows<V>::at(stage + BK_VALUES_OFFSET, (int)count - (int)head_first) = run;
#endif
                    }
                }
                if (tid == 0) {
                    meta[s].tile = tile;
                    // The tile of load r + BK_STAGES - 1, whose stage (load r - 1's) the barrier below frees.
                    load_tile[(r + BK_STAGES - 1) % BK_STAGES] = bk_take(tile_counter, num_tiles, taking);
                }
            }
        } else if (r > 0) {
            // The look-back warp: load r - 1.
            const int ps = (r - 1) % BK_STAGES;  // its stage
            const u32 tile = meta[ps].tile;
            const Scanned total = meta[ps].total;
            Scanned prefix = total;
            if (tile > 0) {
                prefix = lookback_exclusive_prefix<Scanned, ScannedOp, DETERMINISTIC>(state, tile, total, staged);
                prefix = cuprim_shfl(prefix, 0);
            }
            unsigned char* const stage = bk_stages + ps * BK_STAGE_BYTES;
            const C prefix_count = tile > 0 ? bk_count(prefix) : (C)0;
            const int n_heads = (int)bk_count(total);
#if CUPRIM_BYKEY_KEYS
            for (int j = lane; j < n_heads; j += 32) keys_out[prefix_count + j] = BkRows<K>::at(stage, j);
#endif
#if CUPRIM_BYKEY_VALUES == 1
            for (int j = lane; j < n_heads; j += 32) values_out[prefix_count + j] = BkRows<O>::at(stage + BK_VALUES_OFFSET, j);
#endif
#if BK_SEGMENTED
            // Runs this tile ends: those it starts, plus the one continuing
            // into it, less the one continuing past it.
            const u32 hf = meta[ps].head_first;
            const int n_tails = n_heads + (1 - (int)hf) - (1 - (int)meta[ps].tail_last);
            const C tail_base = prefix_count + hf;  // slot of the first run this tile ends, plus one
            for (int j = lane; j < n_tails; j += 32) {
                V out = BkRows<V>::at(stage + BK_VALUES_OFFSET, j);
                // The run continuing into the tile: the values before it first.
                if (j == 0 && hf == 0) out = ValueOp::apply(prefix.v, out);
                values_out[tail_base - 1 + j] = (O)out;
            }
#endif
            if (tile == num_tiles - 1 && lane == 0) *count_out = (u64)(prefix_count + bk_count(total));
        }
        if (last) return;  // nothing is handed over any more
        __syncthreads();
    }
}
