// CUB anchors for rows the shared anchors (../shared/anchors) lack: scan_by_key and
// DeviceSelect::If on the inputs of cuprim's benches/scan.rs, and segmented sort and sum
// over the mixtures of segment sizes of benches/segsort.rs and benches/segmented.rs.
// Timed like cub_next.cu: median of single calls between CUDA events after 3 warm-ups.
// Output: op,n,ms. Build here with CCCL 3.0 (see ../shared/anchors/README.md):
//   $T/bin/nvcc -O3 -std=c++17 -arch=sm_90 -I $T/include/cccl -L $T/lib -o cub_keyed cub_keyed.cu
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cmath>
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
__host__ __device__ inline uint32_t mix(uint64_t i, uint32_t seed) {
  uint64_t x = i * 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 32 | seed);
  x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 27; x *= 0x94D049BB133111EBull; x ^= x >> 31;
  return (uint32_t)(x >> 32);
}
#define GRID for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
// benches/scan.rs: u = 7 + i * 2654435761 (wrapping), keys = (u as u8) / 64.
__global__ void seq_u32(uint32_t* p, size_t n) { GRID p[i] = 7u + (uint32_t)i * 2654435761u; }
__global__ void quarter_keys(uint8_t* k, const uint32_t* u, size_t n) { GRID k[i] = (uint8_t)((uint8_t)u[i] / 64); }
__global__ void runs(uint32_t* p, size_t n, uint32_t run) { GRID p[i] = (uint32_t)(i / run); }
__global__ void gen_f32(float* p, size_t n, uint32_t s) { GRID p[i] = (mix(i, s) >> 8) * (1.0f / 16777216.0f); }
// benches/segsort.rs: lengths floor(10^(6u)), u = mix(s, 7) / 2^32, the last cut at n.
std::vector<int64_t> sort_mixture(size_t n) {
  std::vector<int64_t> o{0};
  for (uint64_t s = 0, at = 0; at < n; s++) {
    double u = mix(s, 7) / 4294967296.0;
    uint64_t len = std::max<uint64_t>(1, (uint64_t)std::floor(std::pow(10.0, 6.0 * u)));
    at = std::min<uint64_t>(at + len, n);
    o.push_back((int64_t)at);
  }
  return o;
}
// benches/segmented.rs: sizes exp(u ln 10^6), one in eight followed by up to 999 empty segments.
std::vector<int64_t> sum_mixture(size_t n) {
  std::vector<int64_t> o{0};
  for (uint64_t i = 0; (size_t)o.back() < n; i++) {
    double u = mix(i, 7) / 4294967296.0;
    uint64_t size = (uint64_t)std::exp(u * std::log(1e6));
    o.push_back(std::min<int64_t>(o.back() + (int64_t)size, (int64_t)n));
    if (mix(i, 8) % 8 == 0) { int64_t last = o.back(); for (uint32_t e = 0; e < mix(i, 9) % 1000; e++) o.push_back(last); }
  }
  return o;
}
struct Upper { __host__ __device__ bool operator()(uint32_t x) const { return x > 0x7fffffffu; } };

int main() {
  void* tmp = nullptr; size_t tmp_bytes = 0;
  auto need = [&](size_t b) { if (b > tmp_bytes) { if (tmp) cudaFree(tmp); CK(cudaMalloc(&tmp, b)); tmp_bytes = b; } };
  printf("op,n,ms\n");
  const size_t cap = size_t(1) << 28;
  uint32_t *u, *uo, *keys, *cnt; uint8_t* k8; float *f, *fo;
  CK(cudaMalloc(&u, cap * 4)); CK(cudaMalloc(&uo, cap * 4)); CK(cudaMalloc(&keys, cap * 4)); CK(cudaMalloc(&k8, cap));
  CK(cudaMalloc(&f, cap * 4)); CK(cudaMalloc(&fo, cap * 4)); CK(cudaMalloc(&cnt, 64));
  size_t b = 0; float ms;
  for (size_t n : {size_t(1) << 20, size_t(1) << 24, size_t(1) << 28}) {
    seq_u32<<<1024, 256>>>(u, n); quarter_keys<<<1024, 256>>>(k8, u, n); runs<<<1024, 256>>>(keys, n, 64); gen_f32<<<1024, 256>>>(f, n, 1);
    CK(cudaDeviceSynchronize());
    b = 0; CK(cub::DeviceScan::InclusiveSumByKey(nullptr, b, k8, u, uo, (int64_t)n)); need(b);
    ms = med([&] { size_t bb = tmp_bytes; cub::DeviceScan::InclusiveSumByKey(tmp, bb, k8, u, uo, (int64_t)n); });
    printf("scan_by_key_u8_u32,%zu,%.5f\n", n, ms);
    b = 0; CK(cub::DeviceScan::InclusiveSumByKey(nullptr, b, keys, f, fo, (int64_t)n)); need(b);
    ms = med([&] { size_t bb = tmp_bytes; cub::DeviceScan::InclusiveSumByKey(tmp, bb, keys, f, fo, (int64_t)n); });
    printf("scan_by_key_u32_f32_run64,%zu,%.5f\n", n, ms);
    b = 0; CK(cub::DeviceSelect::If(nullptr, b, u, uo, cnt, (int64_t)n, Upper{})); need(b);
    ms = med([&] { size_t bb = tmp_bytes; cub::DeviceSelect::If(tmp, bb, u, uo, cnt, (int64_t)n, Upper{}); });
    printf("select_if_half_u32,%zu,%.5f\n", n, ms);
    for (int which = 0; which < 2; which++) {
      std::vector<int64_t> h = which == 0 ? sort_mixture(n) : sum_mixture(n);
      int64_t* off; CK(cudaMalloc(&off, h.size() * 8)); CK(cudaMemcpy(off, h.data(), h.size() * 8, cudaMemcpyHostToDevice));
      int64_t segs = (int64_t)h.size() - 1;
      if (which == 0) {
        b = 0; CK(cub::DeviceSegmentedSort::SortKeys(nullptr, b, f, fo, (int64_t)n, segs, off, off + 1)); need(b);
        ms = med([&] { size_t bb = tmp_bytes; cub::DeviceSegmentedSort::SortKeys(tmp, bb, f, fo, (int64_t)n, segs, off, off + 1); }, 10);
        printf("segmented_sort_f32_mixture,%zu,%.5f\n", n, ms);
      } else {
        b = 0; CK(cub::DeviceSegmentedReduce::Sum(nullptr, b, f, fo, segs, off, off + 1)); need(b);
        ms = med([&] { size_t bb = tmp_bytes; cub::DeviceSegmentedReduce::Sum(tmp, bb, f, fo, segs, off, off + 1); });
        printf("segmented_sum_f32_mixture,%zu,%.5f\n", n, ms);
      }
      CK(cudaFree(off));
    }
    ms = med([&] { cudaMemcpyAsync(uo, u, n * 4, cudaMemcpyDeviceToDevice); });
    printf("memcpy_u32,%zu,%.5f\n", n, ms);
  }
  return 0;
}
