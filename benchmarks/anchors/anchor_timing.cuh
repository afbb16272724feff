// What the cuprim anchors share: error checks, the median of event-timed
// single calls, the index hash the benches' inputs are made from
// (benches/common's `mix`), device allocation, CUB's temporary storage and
// one timed CSV row of a CUB call. Included by cub_sweep.cu,
// cub_sort_sweep.cu, thrust_set.cu, cub_select.cu, cub_types.cu and
// cub_dists.cu.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                           \
    do {                                                                                   \
        cudaError_t err_ = (x);                                                            \
        if (err_ != cudaSuccess) {                                                         \
            std::printf("CUDA error %s at line %d\n", cudaGetErrorString(err_), __LINE__); \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

// Median (ms) of `reps` calls of `call`, each between its own pair of
// events, after 3 untimed calls.
template <class Call> static float median_ms(Call call, int reps = 30) {
    for (int i = 0; i < 3; i++) call();
    CHECK(cudaDeviceSynchronize());
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    std::vector<float> ms(reps);
    for (int i = 0; i < reps; i++) {
        CHECK(cudaEventRecord(start));
        call();
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        CHECK(cudaEventElapsedTime(&ms[i], start, stop));
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    std::sort(ms.begin(), ms.end());
    return ms[reps / 2];
}

// The benches' index hash: element i of seed `seed`.
__host__ __device__ inline uint32_t anchor_mix(uint32_t i, uint32_t seed) {
    uint32_t x = i * 2654435761u ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352d;
    x ^= x >> 15;
    x *= 0x846ca68b;
    x ^= x >> 16;
    return x;
}

// n elements of T on the device (never freed: the anchors exit).
template <class T> static T* anchor_alloc(size_t n) {
    T* p;
    CHECK(cudaMalloc(&p, n * sizeof(T)));
    return p;
}

// CUB's temporary storage, grown to at least `need(bytes)`.
struct AnchorTemp {
    void* p = nullptr;
    size_t bytes = 0;
    void need(size_t b) {
        if (b <= bytes) return;
        if (p) CHECK(cudaFree(p));
        CHECK(cudaMalloc(&p, b));
        bytes = b;
    }
};

// Sizes `temp` by `call(nullptr, bytes)`, then prints `op,n,us`: the median
// of 20 calls `call(temp, bytes)` (a CUB device call returning cudaError_t).
template <class Call> static void anchor_row(AnchorTemp& temp, const char* op, size_t n, Call call) {
    size_t b = 0;
    CHECK(call(nullptr, b));
    temp.need(b);
    const float ms = median_ms(
        [&] {
            size_t bb = temp.bytes;
            CHECK(call(temp.p, bb));
        },
        20);
    std::printf("%s,%zu,%.2f\n", op, n, 1000.0 * ms);
}
