// Folding the shards' partial results in the sharded primitives
// (src/multi): a reduction's per-shard values, and the seed a scan's shard
// starts from (the fold of the shard totals before it).
// Specialised on: T, ShardOp (T apply(T a, T b), T identity()).
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
