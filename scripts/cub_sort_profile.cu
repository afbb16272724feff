// One CUB SortKeys (u32), one SortPairs (u32 keys, u32 values) and one
// SortPairs (f32 keys, u32 values) on the
// inputs of shared/anchors/cub_bench.cu, for profiling CUB's onesweep
// kernels beside cuprim's (scripts/sort-profile.sh).
// Build: nvcc -O3 -std=c++17 -arch=sm_90 cub_sort_profile.cu -o cub_sort_profile
#include <cub/cub.cuh>
#include <cstdio>
#include <cstdint>
#include <cstdlib>

#define CHECK(x)                                                                       \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__);    \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

__global__ void hash_fill(uint32_t* p, size_t n, uint32_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t x = (uint32_t)i * 2654435761u ^ seed;
        x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16;
        p[i] = x;
    }
}
__global__ void to_unit_f32(const uint32_t* a, float* f, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        f[i] = (a[i] >> 8) * (1.0f / 16777216.0f);
}

int main(int argc, char** argv) {
    const size_t n = argc > 1 ? strtoull(argv[1], nullptr, 10) : (size_t(1) << 28);
    uint32_t *ku, *ku2, *vu, *vu2;
    float *kf, *kf2;
    CHECK(cudaMalloc(&ku, n * 4)); CHECK(cudaMalloc(&ku2, n * 4));
    CHECK(cudaMalloc(&vu, n * 4)); CHECK(cudaMalloc(&vu2, n * 4));
    CHECK(cudaMalloc(&kf, n * 4)); CHECK(cudaMalloc(&kf2, n * 4));
    hash_fill<<<1024, 256>>>(ku, n, 1);
    hash_fill<<<1024, 256>>>(vu, n, 2);
    to_unit_f32<<<1024, 256>>>(ku, kf, n);
    size_t a = 0, b = 0;
    cub::DeviceRadixSort::SortKeys(nullptr, a, ku, ku2, (int)n);
    cub::DeviceRadixSort::SortPairs(nullptr, b, kf, kf2, vu, vu2, (int)n);
    size_t c = 0;
    cub::DeviceRadixSort::SortPairs(nullptr, c, ku, ku2, vu, vu2, (int)n);
    b = b > c ? b : c;
    void* tmp;
    CHECK(cudaMalloc(&tmp, a > b ? a : b));
    CHECK(cub::DeviceRadixSort::SortKeys(tmp, a, ku, ku2, (int)n));
    CHECK(cub::DeviceRadixSort::SortPairs(tmp, b, ku, ku2, vu, vu2, (int)n));
    CHECK(cub::DeviceRadixSort::SortPairs(tmp, b, kf, kf2, vu, vu2, (int)n));
    CHECK(cudaDeviceSynchronize());
    printf("sorted %zu keys and %zu pairs\n", n, n);
    return 0;
}
