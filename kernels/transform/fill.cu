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

// out[j] = out[src] for every j < n (src < n): a fill whose value is read on
// the device. Element src itself is never written, so every thread reads
// the same value whenever it runs (no race); the others are written as in
// cuprim_fill, 16-byte vectors between a misaligned head and the tail, the
// vector holding src element by element.
extern "C" __global__ void cuprim_broadcast(T* out, u64 n, u64 src) {
    constexpr int ITEMS = 16 / sizeof(T);
    typedef cuprim_vec<T, ITEMS> V;
    const T value = out[src];
    const cuprim_split<ITEMS> s(n, cuprim_misalign<ITEMS>(out));
    const u64 src_vector = (src >= s.head && src < s.tail) ? (src - s.head) / ITEMS : ~0ull;
    V fill;
#pragma unroll
    for (int k = 0; k < ITEMS; k++) fill.v[k] = value;
    auto one = [&](u64 i) {
        if (i != src) out[i] = value;
    };
    const u64 tid = cuprim_thread_id();
    if (tid < s.head) one(tid);
    V* vout = s.body(out);
    for (u64 v = tid; v < s.vectors; v += cuprim_thread_count()) {
        if (v != src_vector) {
            vout[v] = fill;
        } else {
#pragma unroll
            for (int k = 0; k < ITEMS; k++) one(s.index(v, k));
        }
    }
    if (s.tail + tid < n) one(s.tail + tid);
}
