// Element-wise binary transform: out[i] = BinaryFn::apply(a[i], b[i]).
// Specialised on: T, BinaryFn.

// 16-byte vectors when a, b and out are equally far past a vector boundary
// (block/load.cuh: cuprim_map), else one element at a time.
extern "C" __global__ void cuprim_transform2(const T* __restrict__ a, const T* __restrict__ b,
                                             T* __restrict__ out, u64 n) {
    cuprim_map<CUPRIM_UNROLL>([](const T& x, const T& y) { return BinaryFn::apply(x, y); }, out, n, a, b);
}
