// CUB DeviceSelect::If beside benches/bykey.rs's copy_if_into_half rows: u32 (7 + 2654435761 i),
// u8 (7 + 177 i) and u64 (7 + 0x9E3779B97F4A7C15 i), all wrapping, the upper half of the range
// kept, from 2^20 to 2^28 elements. Timed like cub_keyed.cu: median of 20 single calls between
// CUDA events after 3 warm-ups. Output: op,n,ms. Build here with CCCL 3.0:
//   $T/bin/nvcc -O3 -std=c++17 -arch=sm_90 -I $T/include/cccl -L $T/lib -o cub_select cub_select.cu
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1); } } while (0)

template <class F> float med(F f, int reps = 20) {
  for (int i = 0; i < 3; i++) f();
  CK(cudaDeviceSynchronize());
  std::vector<float> ts;
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < reps; i++) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms); }
  CK(cudaGetLastError());
  std::sort(ts.begin(), ts.end()); return ts[ts.size() / 2];
}
template <class T> __global__ void seq(T* p, size_t n, T start, T step) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = (T)(start + (T)i * step);
}
template <class T> struct Upper { T mid; __host__ __device__ bool operator()(T x) const { return x > mid; } };

template <class T> void rows(const char* name, T start, T step, T mid) {
  const size_t cap = size_t(1) << 28;
  T *in, *out; int64_t* cnt; void* tmp = nullptr; size_t tmp_bytes = 0;
  CK(cudaMalloc(&in, cap * sizeof(T))); CK(cudaMalloc(&out, cap * sizeof(T))); CK(cudaMalloc(&cnt, 8));
  for (int lg = 20; lg <= 28; lg += 2) {
    size_t n = size_t(1) << lg;
    seq<T><<<1024, 256>>>(in, n, start, step);
    size_t b = 0; CK(cub::DeviceSelect::If(nullptr, b, in, out, cnt, (int64_t)n, Upper<T>{mid}));
    if (b > tmp_bytes) { if (tmp) CK(cudaFree(tmp)); CK(cudaMalloc(&tmp, b)); tmp_bytes = b; }
    float ms = med([&] { size_t bb = tmp_bytes; cub::DeviceSelect::If(tmp, bb, in, out, cnt, (int64_t)n, Upper<T>{mid}); });
    int64_t kept; CK(cudaMemcpy(&kept, cnt, 8, cudaMemcpyDeviceToHost));
    printf("select_if_half_%s,%zu,%.5f,kept=%lld\n", name, n, ms, (long long)kept);
  }
  CK(cudaFree(in)); CK(cudaFree(out)); CK(cudaFree(cnt)); if (tmp) CK(cudaFree(tmp));
}

int main() {
  printf("op,n,ms\n");
  rows<uint32_t>("u32", 7u, 2654435761u, 0x7fffffffu);
  rows<uint8_t>("u8", 7, 177, 127);
  rows<uint64_t>("u64", 7ull, 0x9E3779B97F4A7C15ull, ~0ull / 2);
  return 0;
}
