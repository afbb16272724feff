// Gather and scatter through an index array, bounds-checked on the device.
// Specialised on: T (element), I (index type: u32 or u64).
//
// An index >= the indexed array's length is never followed: gather writes
// T() in its place, scatter skips it, and both set *error_flag so the host
// reports Error::IndexOutOfBounds after the call.

__device__ __forceinline__ T cuprim_gather_one(const T* __restrict__ src, u64 src_len, I id,
                                               u32* error_flag) {
    if ((u64)id < src_len) return src[id];
    atomicOr(error_flag, 1u);
    return T();
}

// out[i] = src[indices[i]] for i < n: the indices and out in 16-byte vectors
// of the wider type when equally far past a vector boundary (block/load.cuh:
// cuprim_map), else one at a time.
extern "C" __global__ void cuprim_gather(const T* __restrict__ src, u64 src_len,
                                         const I* __restrict__ indices, T* __restrict__ out,
                                         u64 n, u32* error_flag) {
    cuprim_map<CUPRIM_UNROLL>([&](const I& id) { return cuprim_gather_one(src, src_len, id, error_flag); }, out,
                              n, indices);
}

// out[indices[i]] = src[i] for i < n. With repeated indices, which value
// lands is unspecified.
extern "C" __global__ void cuprim_scatter(const T* __restrict__ src, const I* __restrict__ indices,
                                          u64 n, T* __restrict__ out, u64 out_len,
                                          u32* error_flag) {
    for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) {
        const I id = indices[i];
        if ((u64)id < out_len) {
            out[id] = src[i];
        } else {
            atomicOr(error_flag, 1u);
        }
    }
}
