// Adjacent difference: out[0] = in[0] and out[i] = BinaryFn::apply(in[i], in[i - 1])
// for 0 < i < n (Thrust's rule and operand order: the element, then its
// predecessor). Specialised on: T, BinaryFn, CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS,
// CUPRIM_UNROLL.
//
// The input is split as the consume loop splits it (block/load.cuh:
// cuprim_split: a misaligned slice's head one element per thread, 16-byte
// vectors, the tail one element per thread). The vectors go in warp tiles of
// 32 * CUPRIM_UNROLL consecutive vectors: lane l loads vectors
// tile + 32 u + l (u < CUPRIM_UNROLL), so each load of the warp moves 512
// contiguous bytes, CUPRIM_UNROLL of them in flight, and every predecessor
// but one is already in a register of the warp: in the same vector, in the
// lane below (a shuffle), or in lane 31's previous vector (a shuffle). Only
// the tile's first element needs one element from outside the tile.
//
// Out of place that element is read from `in` (4 bytes per 2 KiB tile of
// f32). In place another warp may already have overwritten it, so
// cuprim_adjacent_gather, a small pass launched first, copies each tile's
// predecessor to `preds` and computes the head's and tail's results into
// `edges`; cuprim_adjacent_difference_in_place then reads only its own
// tile's elements (each read before the same warp writes it), `preds` and
// `edges`. No element is read after any thread has written it.

constexpr int AD_ITEMS = 16 / sizeof(T);
constexpr int AD_UNROLL = CUPRIM_UNROLL;
constexpr u64 AD_TILE = 32 * AD_UNROLL;  // vectors per warp tile
typedef cuprim_vec<T, AD_ITEMS> AdVec;

// Result element i computed from `in` directly (head, tail, gather pass).
__device__ __forceinline__ T ad_one(const T* in, u64 i) {
    const T x = in[i];
    return i == 0 ? x : BinaryFn::apply(x, in[i - 1]);
}

__device__ __forceinline__ u64 ad_tiles(const cuprim_split<AD_ITEMS>& s) {
    return (s.vectors + AD_TILE - 1) / AD_TILE;
}

// The vectors of split s, warp tile by warp tile. IN_PLACE: `in` is `out`
// (plain loads), and tile t's predecessor is preds[t]; otherwise it is read
// from `in` (read-only loads: `in` is not written during the kernel).
template <bool IN_PLACE>
__device__ __forceinline__ void ad_body(const cuprim_split<AD_ITEMS>& s, const T* in, T* out, const T* preds) {
    const AdVec* vin = s.body(in);
    AdVec* vout = s.body(out);
    asm("" : "+l"(vin));  // kept in registers: else in + head is recomputed for every load
    asm("" : "+l"(vout));
    const int lane = threadIdx.x & 31;
    const u64 warps = cuprim_thread_count() >> 5;
    const u64 tiles = ad_tiles(s);
    for (u64 t = cuprim_thread_id() >> 5; t < tiles; t += warps) {
        const u64 base = t * AD_TILE + lane;
        AdVec x[AD_UNROLL];
#pragma unroll
        for (int u = 0; u < AD_UNROLL; u++) {
            const u64 v = base + u * 32;
            if (v < s.vectors) {
                if constexpr (IN_PLACE) {
                    x[u] = vin[v];
                } else {
                    x[u] = cuprim_load_ro(vin + v);
                }
            } else {
                x[u] = AdVec();
            }
        }
        // Lane 0: the predecessor of the tile's first element (none for element 0).
        T before = T();
        const u64 start = s.index(t * AD_TILE, 0);
        if (lane == 0 && start > 0) {
            if constexpr (IN_PLACE) {
                before = cuprim_load_ro(preds + t);
            } else {
                before = cuprim_load_ro(in + start - 1);
            }
        }
#pragma unroll
        for (int u = 0; u < AD_UNROLL; u++) {
            // Every lane shuffles (the warp is converged: t is warp-uniform).
            T prev = cuprim_shfl_up(x[u].v[AD_ITEMS - 1], 1);
            if (u > 0) {
                const T wrap = cuprim_shfl(x[u - 1].v[AD_ITEMS - 1], 31);
                if (lane == 0) prev = wrap;
            } else if (lane == 0) {
                prev = before;
            }
            const u64 v = base + u * 32;
            if (v < s.vectors) {
                AdVec y;
                y.v[0] = (v == 0 && s.head == 0) ? x[u].v[0] : BinaryFn::apply(x[u].v[0], prev);
#pragma unroll
                for (int k = 1; k < AD_ITEMS; k++) y.v[k] = BinaryFn::apply(x[u].v[k], x[u].v[k - 1]);
                vout[v] = y;
            }
        }
    }
}

// out = adjacent difference of in (n elements; they do not overlap). in and
// out equally far past a 16-byte boundary: vectors as above; otherwise one
// element per thread, grid-stride.
// The grid is usually one warp per warp tile (the tile loop runs once); any
// grid works.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_adjacent_difference(const T* __restrict__ in, T* __restrict__ out, u64 n) {
    const u32 misalign = cuprim_misalign<AD_ITEMS>(out);
    if (cuprim_misalign<AD_ITEMS>(in) != misalign) {
        for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) out[i] = ad_one(in, i);
        return;
    }
    const cuprim_split<AD_ITEMS> s(n, misalign);
    const u64 tid = cuprim_thread_id();
    if (tid < s.head) out[tid] = ad_one(in, tid);
    ad_body<false>(s, in, out, nullptr);
    const u64 t = s.tail + tid;
    if (t < n) out[t] = ad_one(in, t);
}

// The in-place form's first pass (reads only): preds[t] = the element
// before warp tile t's first element (T() for a tile starting at element
// 0); edges[j] = result element j of the head (j < head), edges[AD_ITEMS + j]
// = result element tail + j (tail + j < n).
extern "C" __global__ void cuprim_adjacent_gather(const T* __restrict__ in, u64 n, T* __restrict__ preds,
                                                  T* __restrict__ edges) {
    const cuprim_split<AD_ITEMS> s(n, cuprim_misalign<AD_ITEMS>(in));
    const u64 tiles = ad_tiles(s);
    const u64 tid = cuprim_thread_id();
    for (u64 t = tid; t < tiles; t += cuprim_thread_count()) {
        const u64 start = s.index(t * AD_TILE, 0);
        preds[t] = start > 0 ? in[start - 1] : T();
    }
    if (tid < s.head) edges[tid] = ad_one(in, tid);
    if (s.tail + tid < n) edges[AD_ITEMS + tid] = ad_one(in, s.tail + tid);
}

// The in-place form's second pass: the body's vectors in place (tile
// predecessors from preds), the head and tail from edges.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_adjacent_difference_in_place(T* data, u64 n, const T* __restrict__ preds, const T* __restrict__ edges) {
    const cuprim_split<AD_ITEMS> s(n, cuprim_misalign<AD_ITEMS>(data));
    const u64 tid = cuprim_thread_id();
    if (tid < s.head) data[tid] = cuprim_load_ro(edges + tid);
    ad_body<true>(s, data, data, preds);
    if (s.tail + tid < n) data[s.tail + tid] = cuprim_load_ro(edges + AD_ITEMS + tid);
}
