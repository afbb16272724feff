// Combining the shards' partial results in the sharded primitives
// (src/multi): a reduction's per-shard values, and the carry a scan's shard
// takes from the shards before it.
// Specialised on: T, ShardOp (T apply(T a, T b), T identity()), CUPRIM_BLOCK.
//
// `parts` holds one value per shard, gathered in rank order. Both kernels
// fold them left to right, so every rank computes the same bits from the
// same gathered values.

__device__ __forceinline__ T shard_fold_first(const T* __restrict__ parts, u32 count) {
    T acc = parts[0];
    for (u32 i = 1; i < count; i++) acc = ShardOp::apply(acc, parts[i]);
    return acc;
}

// out[0] = parts[0] op parts[1] op ... op parts[count - 1] (count >= 1).
extern "C" __global__ void cuprim_shard_fold(const T* __restrict__ parts, u32 count, T* __restrict__ out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = shard_fold_first(parts, count);
}

// data[i] = (parts[0] op ... op parts[upto - 1]) op data[i] for i < n
// (upto >= 1): a scan shard's elements after the shards before it.
extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK)
    cuprim_shard_carry(const T* __restrict__ parts, u32 upto, T* __restrict__ data, u64 n) {
    __shared__ T carry_slot[1];
    if (threadIdx.x == 0) carry_slot[0] = shard_fold_first(parts, upto);
    __syncthreads();
    const T carry = carry_slot[0];
    const u64 stride = (u64)gridDim.x * CUPRIM_BLOCK;
    for (u64 i = (u64)blockIdx.x * CUPRIM_BLOCK + threadIdx.x; i < n; i += stride) {
        data[i] = ShardOp::apply(carry, data[i]);
    }
}

// out[0] = a scanned shard's total: scanned[n - 1] after an inclusive scan,
// scanned[n - 1] op input[n - 1] after an exclusive one, the identity for
// an empty shard.
extern "C" __global__ void cuprim_shard_total(const T* __restrict__ scanned, const T* __restrict__ input, u64 n,
                                              u32 exclusive, T* __restrict__ out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    if (n == 0) {
        out[0] = ShardOp::identity();
    } else {
        out[0] = exclusive ? ShardOp::apply(scanned[n - 1], input[n - 1]) : scanned[n - 1];
    }
}
