// Anchor for the distribution sweep (benches/dists.rs): CUB (CCCL 3.5
// headers) on the keyed, segmented, search and merge inputs the other
// anchors leave out, at 2^20, 2^24 and 2^27 elements: reduce-by-key over
// runs of 1, 4 and 1024 equal u32 keys (f32 values) and of 4 u64 keys (f64
// values), unique over runs of 1, 4 and 1024, segmented sums of f32 in segments
// of 4, 64, 65536 and 2^20 and in one segment, lower_bound of n random u64
// queries in n sorted u64, and the merge of two sorted u64 halves.
//
// Inputs match benches/dists.rs: keys i / run; values hash(i, seed 1) >> 8
// over 2^24 (f32), hash(i, 1) << 32 | hash(i, 3) >> 11 over 2^53 (f64);
// sorted u64 2 * i, queries hash(i, 5) << 32 | hash(i, 6) modulo 2n;
// merge halves 2 * i and 2 * i + 1 (u64). Hash: anchor_timing.cuh's.
//
// Build here (no GPU needed), run on the GPU machine:
//   T=~/.cache/cudatk/nvidia/cu13
//   $T/bin/nvcc -O3 -std=c++17 -arch=sm_90 -I ~/.cache/cccl35/nvidia/cu13/include/cccl -L $T/lib \
//       -o cub_dists cub_dists.cu
// Output: CSV `op,n,us` (median of 20 event-timed calls after 3 warm-ups).
#include <cub/cub.cuh>
#include <cub/device/device_find.cuh>
#include <cub/device/device_merge.cuh>
#include "anchor_timing.cuh"

#define GRID for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
__global__ void values(float* f, double* d, size_t n) {
    GRID {
        const uint32_t a = anchor_mix((uint32_t)i, 1), b = anchor_mix((uint32_t)i, 3);
        f[i] = (a >> 8) * (1.0f / 16777216.0f);
        d[i] = (double)(((uint64_t)a << 32 | b) >> 11) * (1.0 / 9007199254740992.0);
    }
}
__global__ void runs32(uint32_t* k, size_t n, uint32_t run) { GRID k[i] = (uint32_t)(i / run); }
__global__ void runs64(uint64_t* k, size_t n, uint32_t run) { GRID k[i] = (uint64_t)(i / run); }
__global__ void offsets(int64_t* o, size_t n, int64_t seg) { GRID o[i] = (int64_t)i * seg; }
__global__ void evens(uint64_t* p, size_t n, uint64_t off) { GRID p[i] = 2 * (uint64_t)i + off; }
__global__ void queries(uint64_t* q, size_t n, uint64_t below) {
    GRID q[i] = ((uint64_t)anchor_mix((uint32_t)i, 5) << 32 | anchor_mix((uint32_t)i, 6)) % below;
}

int main(int argc, char** argv) {
    // Sizes: the arguments (benches/dists.rs' CUPRIM_SWEEP_SIZES), else 2^20, 2^24 and 2^27.
    std::vector<size_t> sizes;
    for (int a = 1; a < argc; a++) sizes.push_back(std::strtoull(argv[a], nullptr, 10));
    if (sizes.empty())
        for (int lg : {20, 24, 27}) sizes.push_back(size_t(1) << lg);
    size_t most = 0;
    for (const size_t n : sizes) most = n > most ? n : most;
    float* f = anchor_alloc<float>(most);
    double* d = anchor_alloc<double>(most);
    uint32_t* k32 = anchor_alloc<uint32_t>(most);
    uint64_t* k64 = anchor_alloc<uint64_t>(most);
    uint64_t* sorted = anchor_alloc<uint64_t>(most);
    uint64_t* q = anchor_alloc<uint64_t>(most);
    char* out_k = anchor_alloc<char>(8 * most);
    char* out_v = anchor_alloc<char>(8 * most);
    int64_t* off = anchor_alloc<int64_t>(most / 4 + 1);
    int64_t* count = anchor_alloc<int64_t>(1);
    AnchorTemp temp;
    std::printf("op,n,us\n");
    for (const size_t n : sizes) {
        const int64_t nn = (int64_t)n;
        values<<<1024, 256>>>(f, d, n);
        CHECK(cudaDeviceSynchronize());
        for (uint32_t run : {1u, 4u, 1024u}) {
            runs32<<<1024, 256>>>(k32, n, run);
            CHECK(cudaDeviceSynchronize());
            char name[64];
            std::snprintf(name, sizeof name, "reduce_by_key_u32_f32_run%u", run);
            anchor_row(temp, name, n, [&](void* t, size_t& b) {
                return cub::DeviceReduce::ReduceByKey(t, b, k32, (uint32_t*)out_k, f, (float*)out_v, count, cuda::std::plus<>{}, nn);
            });
            std::snprintf(name, sizeof name, "unique_u32_run%u", run);
            anchor_row(temp, name, n, [&](void* t, size_t& b) { return cub::DeviceSelect::Unique(t, b, k32, (uint32_t*)out_k, count, nn); });
        }
        runs64<<<1024, 256>>>(k64, n, 4);
        CHECK(cudaDeviceSynchronize());
        anchor_row(temp, "reduce_by_key_u64_f64_run4", n, [&](void* t, size_t& b) {
            return cub::DeviceReduce::ReduceByKey(t, b, k64, (uint64_t*)out_k, d, (double*)out_v, count, cuda::std::plus<>{}, nn);
        });
        for (int64_t seg : {(int64_t)4, (int64_t)64, (int64_t)65536, (int64_t)1 << 20, nn}) {
            const int64_t segs = nn / seg;
            offsets<<<1024, 256>>>(off, (size_t)segs + 1, seg);
            CHECK(cudaDeviceSynchronize());
            char name[64];
            if (seg == nn)
                std::snprintf(name, sizeof name, "segmented_sum_f32_one");
            else
                std::snprintf(name, sizeof name, "segmented_sum_f32_seg%lld", (long long)seg);
            anchor_row(temp, name, n, [&](void* t, size_t& b) { return cub::DeviceSegmentedReduce::Sum(t, b, f, (float*)out_v, segs, off, off + 1); });
        }
        evens<<<1024, 256>>>(sorted, n, 0);
        queries<<<1024, 256>>>(q, n, 2 * (uint64_t)n);
        CHECK(cudaDeviceSynchronize());
        anchor_row(temp, "lower_bound_u64", n, [&](void* t, size_t& b) {
            return cub::DeviceFind::LowerBound(t, b, sorted, nn, q, nn, (uint32_t*)out_k, cuda::std::less<>{});
        });
        evens<<<1024, 256>>>(sorted, n / 2, 0);
        evens<<<1024, 256>>>(q, n / 2, 1);
        CHECK(cudaDeviceSynchronize());
        anchor_row(temp, "merge_keys_u64", n, [&](void* t, size_t& b) {
            return cub::DeviceMerge::MergeKeys(t, b, sorted, nn / 2, q, nn / 2, (uint64_t*)out_k);
        });
    }
    return 0;
}
