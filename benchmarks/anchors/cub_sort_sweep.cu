// Anchor for the sort size sweep (benches/sort.rs, group `sort_sweep_*`):
// CUB's DeviceRadixSort SortKeys / SortPairs on u32 and u64 keys (u32
// values) at 2^12, 2^14, 2^16, 2^18, 2^20, 2^22, 2^24 and 2^27 keys, or at the
// sizes given as arguments (benches/sort.rs' CUPRIM_SWEEP_SIZES). Each
// number is the median of 20 CUDA-event-timed single calls after 3 untimed
// ones (CUB sorts from one buffer into another, so no call needs its input
// restored). Inputs match benches/sort.rs: u32 keys a hash of the index
// (seed 1), values the same hash with seed 2, u64 keys hash(seed 1) << 32
// | hash(seed 3).
//
// Build here (no GPU needed), run on the GPU machine:
//   T=~/.cache/cudatk/nvidia/cu13
//   $T/bin/nvcc -O3 -std=c++17 -arch=sm_90 -I $T/include/cccl -L $T/lib -o cub_sort_sweep cub_sort_sweep.cu
// Output: CSV `op,n,us`.
#include <cub/cub.cuh>
#include "anchor_timing.cuh"

#include <vector>

// Median (us) of 20 event-timed single calls.
template <class Call> static double median_us(Call call) { return 1000.0 * median_ms(call, 20); }

__global__ void fill_inputs(uint32_t* k32, uint64_t* k64, uint32_t* v, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint32_t a = anchor_mix((uint32_t)i, 1);
        k32[i] = a;
        k64[i] = (uint64_t)a << 32 | anchor_mix((uint32_t)i, 3);
        v[i] = anchor_mix((uint32_t)i, 2);
    }
}

int main(int argc, char** argv) {
    std::vector<size_t> sizes;
    for (int a = 1; a < argc; a++) sizes.push_back(std::strtoull(argv[a], nullptr, 10));
    if (sizes.empty())
        for (int lg : {12, 14, 16, 18, 20, 22, 24, 27}) sizes.push_back(size_t(1) << lg);
    size_t most = 0;
    for (const size_t n : sizes) most = n > most ? n : most;
    uint32_t *k32, *k32o, *v, *vo;
    uint64_t *k64, *k64o;
    CHECK(cudaMalloc(&k32, 4 * most));
    CHECK(cudaMalloc(&k32o, 4 * most));
    CHECK(cudaMalloc(&v, 4 * most));
    CHECK(cudaMalloc(&vo, 4 * most));
    CHECK(cudaMalloc(&k64, 8 * most));
    CHECK(cudaMalloc(&k64o, 8 * most));
    void* temp = nullptr;
    size_t temp_bytes = 0;
    auto need = [&](size_t b) {
        if (b <= temp_bytes) return;
        if (temp) CHECK(cudaFree(temp));
        CHECK(cudaMalloc(&temp, b));
        temp_bytes = b;
    };
    std::printf("op,n,us\n");
    for (const size_t n : sizes) {
        const int ni = (int)n;
        fill_inputs<<<1024, 256>>>(k32, k64, v, n);
        CHECK(cudaDeviceSynchronize());
        size_t b = 0;
        cub::DeviceRadixSort::SortKeys(nullptr, b, k32, k32o, ni);
        need(b);
        std::printf("sort_keys_u32,%zu,%.2f\n", n, median_us([&] {
                        size_t bb = temp_bytes;
                        cub::DeviceRadixSort::SortKeys(temp, bb, k32, k32o, ni);
                    }));
        cub::DeviceRadixSort::SortPairs(nullptr, b, k32, k32o, v, vo, ni);
        need(b);
        std::printf("sort_pairs_u32_u32,%zu,%.2f\n", n, median_us([&] {
                        size_t bb = temp_bytes;
                        cub::DeviceRadixSort::SortPairs(temp, bb, k32, k32o, v, vo, ni);
                    }));
        cub::DeviceRadixSort::SortKeys(nullptr, b, k64, k64o, ni);
        need(b);
        std::printf("sort_keys_u64,%zu,%.2f\n", n, median_us([&] {
                        size_t bb = temp_bytes;
                        cub::DeviceRadixSort::SortKeys(temp, bb, k64, k64o, ni);
                    }));
        cub::DeviceRadixSort::SortPairs(nullptr, b, k64, k64o, v, vo, ni);
        need(b);
        std::printf("sort_pairs_u64_u32,%zu,%.2f\n", n, median_us([&] {
                        size_t bb = temp_bytes;
                        cub::DeviceRadixSort::SortPairs(temp, bb, k64, k64o, v, vo, ni);
                    }));
        std::fflush(stdout);
    }
    CHECK(cudaGetLastError());
    return 0;
}
