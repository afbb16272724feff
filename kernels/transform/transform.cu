// Element-wise unary transform: out[i] = UnaryFn::apply(in[i]).
// Specialised on: T (input), U (output), UnaryFn.

// 16-byte vectors of the wider type when in and out are equally far past a
// vector boundary (block/load.cuh: cuprim_map), else one element at a time.
// `out` may be `in` itself (transform_in_place), so neither is __restrict__.
extern "C" __global__ void cuprim_transform(const T* in, U* out, u64 n) {
    cuprim_map<CUPRIM_UNROLL>([](const T& x) { return UnaryFn::apply(x); }, out, n, in);
}
