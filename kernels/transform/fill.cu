// Fill and sequence: write-only kernels over one array.
// Specialised on: T (element type).

// out[i] = value for i < n. Any alignment: the elements before the first
// 16-byte boundary are written one by one, the rest as 16-byte vectors
// (block/load.cuh: cuprim_map with no input; stores only, so no unrolling).
extern "C" __global__ void cuprim_fill(T* __restrict__ out, T value, u64 n) {
    cuprim_map<1>([&]() { return value; }, out, n);
}

// out[i] = start + T(i) * step, with the element type's own (wrapping or
// IEEE) arithmetic: the same operations, in the same order, as the host.
extern "C" __global__ void cuprim_sequence(T* __restrict__ out, T start, T step, u64 n) {
    for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) {
        out[i] = cuprim_add(start, cuprim_mul(cuprim_cast<T>(i), step));
    }
}
