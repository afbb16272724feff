// Thrust anchors for the set operations (CUB has none; Thrust's CUDA backend
// is the library a Thrust user calls): set_union, set_intersection,
// set_difference and set_symmetric_difference of two sorted u32 sequences,
// the inputs of benches/merge.rs's `set_*` groups: a = 0, 2, 4, ... (n / 2
// keys) and b = 0, 3, 6, ... (n / 2 keys), so a sixth of the keys are in
// both. Each call returns its output's end to the host (one synchronisation,
// as cuprim's calls read their count back); temporary storage comes from a
// caching allocator, so no call pays for cudaMalloc.
// Output: op,n,ms (median of 20 single calls between CUDA events after 3
// warm-ups). Build here with CCCL 3.0 (see ../shared/anchors/README.md):
//   $T/bin/nvcc -O3 -std=c++17 -arch=sm_90 -I $T/include/cccl -L $T/lib -o thrust_set thrust_set.cu
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/set_operations.h>
#include <cstdint>
#include <cstdio>
#include <map>
#include "anchor_timing.cuh"

// Hands back the blocks it gave out, by size, instead of freeing them.
struct CachingAllocator {
    typedef char value_type;
    std::multimap<std::ptrdiff_t, char*> free_blocks;
    std::map<char*, std::ptrdiff_t> in_use;
    char* allocate(std::ptrdiff_t bytes) {
        char* p = nullptr;
        auto it = free_blocks.find(bytes);
        if (it != free_blocks.end()) {
            p = it->second;
            free_blocks.erase(it);
        } else {
            CHECK(cudaMalloc(&p, bytes));
        }
        in_use[p] = bytes;
        return p;
    }
    void deallocate(char* p, size_t) {
        auto it = in_use.find(p);
        free_blocks.insert({it->second, p});
        in_use.erase(it);
    }
};

__global__ void multiples(uint32_t* out, size_t n, uint32_t step) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = (uint32_t)i * step;
}

int main() {
    CachingAllocator alloc;
    auto policy = thrust::cuda::par(alloc);
    for (size_t n : {size_t(1) << 20, size_t(1) << 24, size_t(1) << 28}) {
        const size_t half = n / 2;
        uint32_t *a, *b, *out;
        CHECK(cudaMalloc(&a, half * 4));
        CHECK(cudaMalloc(&b, half * 4));
        CHECK(cudaMalloc(&out, n * 4));
        multiples<<<1024, 256>>>(a, half, 2);
        multiples<<<1024, 256>>>(b, half, 3);
        CHECK(cudaDeviceSynchronize());
        thrust::device_ptr<uint32_t> pa(a), pb(b), po(out);
        size_t len = 0;
        float ms = median_ms([&] { len = thrust::set_union(policy, pa, pa + half, pb, pb + half, po) - po; }, 20);
        std::printf("set_union_u32,%zu,%.5f,%zu\n", n, ms, len);
        ms = median_ms([&] { len = thrust::set_intersection(policy, pa, pa + half, pb, pb + half, po) - po; }, 20);
        std::printf("set_intersection_u32,%zu,%.5f,%zu\n", n, ms, len);
        ms = median_ms([&] { len = thrust::set_difference(policy, pa, pa + half, pb, pb + half, po) - po; }, 20);
        std::printf("set_difference_u32,%zu,%.5f,%zu\n", n, ms, len);
        ms = median_ms([&] { len = thrust::set_symmetric_difference(policy, pa, pa + half, pb, pb + half, po) - po; }, 20);
        std::printf("set_symmetric_difference_u32,%zu,%.5f,%zu\n", n, ms, len);
        std::fflush(stdout);
        CHECK(cudaFree(a));
        CHECK(cudaFree(b));
        CHECK(cudaFree(out));
    }
    return 0;
}
