// Fill and sequence: write-only kernels over one array.
// Specialised on: T (element type).

constexpr int FILL_ITEMS = 16 / sizeof(T);
typedef cuprim_vec<T, FILL_ITEMS> FillVec;

// out[i] = value for i < n. Any alignment: the elements before the first
// 16-byte boundary are written one by one, the rest as 16-byte vectors.
extern "C" __global__ void cuprim_fill(T* __restrict__ out, T value, u64 n) {
    const u64 tid = cuprim_thread_id();
    const u64 misalign = ((u64)out % sizeof(FillVec)) / sizeof(T);
    u64 head = misalign ? FILL_ITEMS - misalign : 0;
    if (head > n) head = n;
    if (tid < head) out[tid] = value;
    T* body = out + head;
    const u64 m = n - head;
    const u64 nv = m / FILL_ITEMS;
    FillVec v;
#pragma unroll
    for (int k = 0; k < FILL_ITEMS; k++) v.v[k] = value;
    FillVec* vbody = (FillVec*)body;
    for (u64 i = tid; i < nv; i += cuprim_thread_count()) vbody[i] = v;
    const u64 t = nv * FILL_ITEMS + tid;
    if (t < m) body[t] = value;
}

// out[i] = start + T(i) * step, with the element type's own (wrapping or
// IEEE) arithmetic: the same operations, in the same order, as the host.
extern "C" __global__ void cuprim_sequence(T* __restrict__ out, T start, T step, u64 n) {
    for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) {
        out[i] = cuprim_add(start, cuprim_mul(cuprim_cast<T>(i), step));
    }
}
