// Anchor for the size sweep (benches/sweep.rs): CUB's reduce, scan,
// histogram and arg-min at every even power of two from 2^12 to 2^28,
// timed as shared/anchors/cub_bench.cu times (median of CUDA-event pairs
// around one call, after warm-up), on the same inputs as cub_bench.cu and
// benches/sweep.rs: a hash of the index for u32, (u >> 8) / 2^24 for f32.
// Extra histogram inputs: the f32 samples sorted ascending (every warp in
// one bin), and every sample in one bin.
//
// Build here (no GPU needed), run on the GPU machine:
//   T=~/.cache/cudatk/nvidia/cu13
//   $T/bin/nvcc -O3 -std=c++17 -arch=sm_90 -I $T/include/cccl -L $T/lib -o cub_sweep cub_sweep.cu
// Output: CSV `op,n,ms`. Arguments, if any, replace the sizes.
#include <cub/cub.cuh>
#include "anchor_timing.cuh"

__global__ void hash_u32(uint32_t* out, size_t n, uint32_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        out[i] = anchor_mix((uint32_t)i, seed);
    }
}

__global__ void unit_f32(const uint32_t* in, float* out, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = (in[i] >> 8) * (1.0f / 16777216.0f);
}

int main(int argc, char** argv) {
    AnchorTemp temp;
    // Sizes: the arguments (benches/sweep.rs' CUPRIM_SWEEP_SIZES), else
    // every even power of two from 2^12 to 2^28.
    std::vector<size_t> sizes;
    for (int a = 1; a < argc; a++) sizes.push_back(std::strtoull(argv[a], nullptr, 10));
    if (sizes.empty())
        for (int lg = 12; lg <= 28; lg += 2) sizes.push_back(size_t(1) << lg);
    std::printf("op,n,ms\n");
    for (const size_t n : sizes) {
        uint32_t *keys, *out_u, *index;
        float *f, *f_sorted, *f_one, *out_f;
        int* hist;
        CHECK(cudaMalloc(&keys, 4 * n));
        CHECK(cudaMalloc(&out_u, 4 * n));
        CHECK(cudaMalloc(&f, 4 * n));
        CHECK(cudaMalloc(&f_sorted, 4 * n));
        CHECK(cudaMalloc(&f_one, 4 * n));
        CHECK(cudaMalloc(&out_f, 4 * n));
        CHECK(cudaMalloc(&index, 8));
        CHECK(cudaMalloc(&hist, 4 * 256));
        hash_u32<<<1024, 256>>>(keys, n, 1);
        unit_f32<<<1024, 256>>>(keys, f, n);
        CHECK(cudaDeviceSynchronize());
        {
            size_t b = 0;
            cub::DeviceRadixSort::SortKeys(nullptr, b, f, f_sorted, (int)n);
            temp.need(b);
            cub::DeviceRadixSort::SortKeys(temp.p, b, f, f_sorted, (int)n);
            std::vector<float> half(n, 0.5f);
            CHECK(cudaMemcpy(f_one, half.data(), 4 * n, cudaMemcpyHostToDevice));
            CHECK(cudaDeviceSynchronize());
        }
        size_t b = 0;
        float ms;

        ms = median_ms([&] { CHECK(cudaMemcpyAsync(out_f, f, 4 * n, cudaMemcpyDeviceToDevice)); });
        std::printf("memcpy_f32,%zu,%.5f\n", n, ms);

        b = 0;
        cub::DeviceReduce::Sum(nullptr, b, f, out_f, (int)n);
        temp.need(b);
        ms = median_ms([&] { size_t bb = temp.bytes; cub::DeviceReduce::Sum(temp.p, bb, f, out_f, (int)n); });
        std::printf("reduce_sum_f32,%zu,%.5f\n", n, ms);

        b = 0;
        cub::DeviceReduce::ArgMin(nullptr, b, f, out_f, (int64_t*)index, (int64_t)n);
        temp.need(b);
        ms = median_ms([&] { size_t bb = temp.bytes; cub::DeviceReduce::ArgMin(temp.p, bb, f, out_f, (int64_t*)index, (int64_t)n); });
        std::printf("argmin_f32,%zu,%.5f\n", n, ms);

        b = 0;
        cub::DeviceScan::InclusiveSum(nullptr, b, f, out_f, (int)n);
        temp.need(b);
        ms = median_ms([&] { size_t bb = temp.bytes; cub::DeviceScan::InclusiveSum(temp.p, bb, f, out_f, (int)n); });
        std::printf("scan_incl_sum_f32,%zu,%.5f\n", n, ms);

        b = 0;
        cub::DeviceScan::ExclusiveSum(nullptr, b, keys, out_u, (int)n);
        temp.need(b);
        ms = median_ms([&] { size_t bb = temp.bytes; cub::DeviceScan::ExclusiveSum(temp.p, bb, keys, out_u, (int)n); });
        std::printf("scan_excl_sum_u32,%zu,%.5f\n", n, ms);

        const float* hist_inputs[3] = {f, f_sorted, f_one};
        const char* hist_names[3] = {"histogram_even256_f32", "histogram_even256_sorted_f32", "histogram_even256_onebin_f32"};
        for (int h = 0; h < 3; h++) {
            b = 0;
            cub::DeviceHistogram::HistogramEven(nullptr, b, hist_inputs[h], hist, 257, 0.0f, 1.0f, (int)n);
            temp.need(b);
            ms = median_ms([&] {
                size_t bb = temp.bytes;
                cub::DeviceHistogram::HistogramEven(temp.p, bb, hist_inputs[h], hist, 257, 0.0f, 1.0f, (int)n);
            });
            std::printf("%s,%zu,%.5f\n", hist_names[h], n, ms);
        }

        b = 0;
        cub::DeviceHistogram::HistogramEven(nullptr, b, keys, hist, 257, 0u, 4294967295u, (int)n);
        temp.need(b);
        ms = median_ms([&] { size_t bb = temp.bytes; cub::DeviceHistogram::HistogramEven(temp.p, bb, keys, hist, 257, 0u, 4294967295u, (int)n); });
        std::printf("histogram_even256_u32,%zu,%.5f\n", n, ms);

        CHECK(cudaFree(keys));
        CHECK(cudaFree(out_u));
        CHECK(cudaFree(f));
        CHECK(cudaFree(f_sorted));
        CHECK(cudaFree(f_one));
        CHECK(cudaFree(out_f));
        CHECK(cudaFree(index));
        CHECK(cudaFree(hist));
    }
    return 0;
}
