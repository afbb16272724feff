// CUB DeviceSelect::If beside benches/bykey.rs's copy_if_into_half rows: u32 (7 + 2654435761 i),
// u8 (7 + 177 i) and u64 (7 + 0x9E3779B97F4A7C15 i), all wrapping, the upper half of the range
// kept, from 2^20 to 2^28 elements. Timed by anchor_timing.cuh: median of 20 single calls
// between CUDA events after 3 warm-ups. Output: op,n,ms. Build here with CCCL 3.0:
//   $T/bin/nvcc -O3 -std=c++17 -arch=sm_90 -I $T/include/cccl -L $T/lib -o cub_select cub_select.cu
#include <cub/cub.cuh>
#include "anchor_timing.cuh"

template <class T> __global__ void seq(T* p, size_t n, T start, T step) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = (T)(start + (T)i * step);
}
template <class T> struct Upper { T mid; __host__ __device__ bool operator()(T x) const { return x > mid; } };

template <class T> void rows(const char* name, T start, T step, T mid) {
  const size_t cap = size_t(1) << 28;
  T *in, *out; int64_t* cnt; void* tmp = nullptr; size_t tmp_bytes = 0;
  CHECK(cudaMalloc(&in, cap * sizeof(T))); CHECK(cudaMalloc(&out, cap * sizeof(T))); CHECK(cudaMalloc(&cnt, 8));
  for (int lg = 20; lg <= 28; lg += 2) {
    size_t n = size_t(1) << lg;
    seq<T><<<1024, 256>>>(in, n, start, step);
    size_t b = 0; CHECK(cub::DeviceSelect::If(nullptr, b, in, out, cnt, (int64_t)n, Upper<T>{mid}));
    if (b > tmp_bytes) { if (tmp) CHECK(cudaFree(tmp)); CHECK(cudaMalloc(&tmp, b)); tmp_bytes = b; }
    float ms = median_ms([&] { size_t bb = tmp_bytes; cub::DeviceSelect::If(tmp, bb, in, out, cnt, (int64_t)n, Upper<T>{mid}); }, 20);
    int64_t kept; CHECK(cudaMemcpy(&kept, cnt, 8, cudaMemcpyDeviceToHost));
    printf("select_if_half_%s,%zu,%.5f,kept=%lld\n", name, n, ms, (long long)kept);
  }
  CHECK(cudaFree(in)); CHECK(cudaFree(out)); CHECK(cudaFree(cnt)); if (tmp) CHECK(cudaFree(tmp));
}

int main() {
  printf("op,n,ms\n");
  rows<uint32_t>("u32", 7u, 2654435761u, 0x7fffffffu);
  rows<uint8_t>("u8", 7, 177, 127);
  rows<uint64_t>("u64", 7ull, 0x9E3779B97F4A7C15ull, ~0ull / 2);
  return 0;
}
