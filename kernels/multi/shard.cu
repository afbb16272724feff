// Folding the shards' partial results in the sharded primitives
// (src/multi): a reduction's per-shard values, and the seed a scan's shard
// starts from (the fold of the shard totals before it).
// Specialised on: T, ShardOp (T apply(T a, T b), T identity()), CUPRIM_BLOCK,
// CUPRIM_UNROLL (16-byte vectors per thread per tile).
//
// `parts` holds one value per shard, gathered in rank order; the fold goes
// left to right, so every rank computes the same bits from the same values.

// out[0] = parts[0] op parts[1] op ... op parts[count - 1] (count >= 1).
extern "C" __global__ void cuprim_shard_fold(const T* __restrict__ parts, u32 count, T* __restrict__ out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    T acc = parts[0];
    for (u32 i = 1; i < count; i++) acc = ShardOp::apply(acc, parts[i]);
    out[0] = acc;
}

// An ordered reduction of one shard, for monoids that need not commute:
// block b folds the contiguous chunk [b * chunk, (b + 1) * chunk) of the n
// elements in order into partials[b] (the identity past the end); a
// cuprim_shard_fold of the partials then gives the shard's total. Each tile
// of SHARD_TILE elements gives thread t the SHARD_ITEMS consecutive elements
// from t * SHARD_ITEMS (16-byte loads; a warp's loads cover its part of the
// tile whole, the lines shared through L1), folded in order, then the
// block's thread-order tree (cuprim_block_reduce_ordered); thread 0 chains
// the tiles.
constexpr int SHARD_VEC = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
constexpr int SHARD_UNROLL = CUPRIM_UNROLL;
constexpr int SHARD_ITEMS = SHARD_VEC * SHARD_UNROLL;
constexpr u64 SHARD_TILE = (u64)CUPRIM_BLOCK * SHARD_ITEMS;
typedef cuprim_vec<T, SHARD_VEC> ShardVec;

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK)
    cuprim_shard_total(const T* __restrict__ in, u64 n, u64 chunk, T* __restrict__ partials) {
    const u64 begin = (u64)blockIdx.x * chunk;
    const u64 end = begin + chunk < n ? begin + chunk : n;
    const bool vectors = cuprim_aligned_to<ShardVec>(in);
    T acc = ShardOp::identity();
    for (u64 tile = begin; tile < end; tile += SHARD_TILE) {
        const u64 first = tile + (u64)threadIdx.x * SHARD_ITEMS;
        T v = ShardOp::identity();
        if (vectors && first + SHARD_ITEMS <= end) {
            const ShardVec* vin = (const ShardVec*)(in + first);
            ShardVec x[SHARD_UNROLL];
#pragma unroll
            for (int u = 0; u < SHARD_UNROLL; u++) x[u] = cuprim_load_ro(vin + u);
#pragma unroll
            for (int u = 0; u < SHARD_UNROLL; u++) {
#pragma unroll
                for (int k = 0; k < SHARD_VEC; k++) v = ShardOp::apply(v, x[u].v[k]);
            }
        } else {
            for (int i = 0; i < SHARD_ITEMS; i++) {
                if (first + i < end) v = ShardOp::apply(v, in[first + i]);
            }
        }
        v = cuprim_block_reduce_ordered<T, ShardOp, CUPRIM_BLOCK>(v);
        if (threadIdx.x == 0) acc = ShardOp::apply(acc, v);
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}
