// Gather and scatter through an index array, bounds-checked on the device.
// Specialised on: T (element), I (index type: u32 or u64).
//
// An index >= the indexed array's length is never followed: gather writes
// T() in its place, scatter skips it, and both set *error_flag so the host
// reports Error::IndexOutOfBounds after the call.

constexpr int GS_ITEMS = 16 / (sizeof(T) > sizeof(I) ? sizeof(T) : sizeof(I));
typedef cuprim_vec<T, GS_ITEMS> GsVal;
typedef cuprim_vec<I, GS_ITEMS> GsIdx;

__device__ __forceinline__ T cuprim_gather_one(const T* __restrict__ src, u64 src_len, I id,
                                               u32* error_flag) {
    if ((u64)id < src_len) return src[id];
    atomicOr(error_flag, 1u);
    return T();
}

// out[i] = src[indices[i]] for i < n.
extern "C" __global__ void cuprim_gather(const T* __restrict__ src, u64 src_len,
                                         const I* __restrict__ indices, T* __restrict__ out,
                                         u64 n, u32* error_flag) {
    if (cuprim_aligned_to<GsIdx>(indices) && cuprim_aligned_to<GsVal>(out)) {
        const u64 nv = n / GS_ITEMS;
        const GsIdx* vidx = (const GsIdx*)indices;
        GsVal* vout = (GsVal*)out;
        cuprim_grid_stride<CUPRIM_UNROLL>(
            nv, [&](u64 i) { return vidx[i]; },
            [&](u64 i, const GsIdx& ids) {
                GsVal y;
#pragma unroll
                for (int k = 0; k < GS_ITEMS; k++)
                    y.v[k] = cuprim_gather_one(src, src_len, ids.v[k], error_flag);
                vout[i] = y;
            });
        const u64 t = nv * GS_ITEMS + cuprim_thread_id();
        if (t < n) out[t] = cuprim_gather_one(src, src_len, indices[t], error_flag);
    } else {
        for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) {
            out[i] = cuprim_gather_one(src, src_len, indices[i], error_flag);
        }
    }
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
