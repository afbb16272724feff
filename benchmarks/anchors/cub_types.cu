// Anchor for the type sweep (benches/types.rs): CUB on the element types and
// key distributions the other anchors leave out, at 2^20, 2^24 and 2^27
// elements. Reduce (i64 sum, f64 max, i8 min), arg-min (f64, i32), inclusive
// sums (u8, u64, f64), the u8 256-bin histogram and 64 even
// u8 bins over [0, 255), radix sorts of u8, i32,
// f32, f64 and i64 keys, pairs with 8-byte values, u32 keys with 16
// distinct values and already sorted, f32 keys (u32 values) in descending
// order, u32 keys in segments of 32, Select::If of u32 keeping 1% and 99%,
// and 256 even bins of f64 samples.
//
// Inputs match benches/types.rs: a = hash(i, seed 1), b = hash(i, seed 3)
// (anchor_mix); u8 / i8 the low byte of a, i32 a, u64 / i64 a << 32 | b,
// f32 (a >> 8) / 2^24, descending f32 n - 1 - i, f64 (a << 32 | b) >> 11
// over 2^53, values
// hash(i, seed 2) (u64 values: that << 32 | b).
//
// Build here (no GPU needed), run on the GPU machine:
//   T=~/.cache/cudatk/nvidia/cu13
//   $T/bin/nvcc -O3 -std=c++17 -arch=sm_90 -I $T/include/cccl -L $T/lib -o cub_types cub_types.cu
// Output: CSV `op,n,us` (median of 20 event-timed calls after 3 warm-ups).
#include <cub/cub.cuh>
#include "anchor_timing.cuh"

struct Inputs {
    uint8_t* u8;
    int8_t* i8;
    int32_t* i32;
    uint32_t* u32;
    uint32_t* few16;
    uint32_t* sorted;
    uint64_t* u64;
    int64_t* i64;
    float* f32;
    float* f32_desc;
    double* f64;
    uint32_t* v32;
    uint64_t* v64;
};

__global__ void fill_inputs(Inputs in, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint32_t a = anchor_mix((uint32_t)i, 1), b = anchor_mix((uint32_t)i, 3), v = anchor_mix((uint32_t)i, 2);
        const uint64_t w = (uint64_t)a << 32 | b;
        in.u8[i] = (uint8_t)a;
        in.i8[i] = (int8_t)(uint8_t)a;
        in.i32[i] = (int32_t)a;
        in.u32[i] = a;
        in.few16[i] = a & 15u;
        in.sorted[i] = (uint32_t)i;
        in.u64[i] = w;
        in.i64[i] = (int64_t)w;
        in.f32[i] = (a >> 8) * (1.0f / 16777216.0f);
        in.f32_desc[i] = (float)(n - 1 - i);
        in.f64[i] = (double)(w >> 11) * (1.0 / 9007199254740992.0);
        in.v32[i] = v;
        in.v64[i] = (uint64_t)v << 32 | b;
    }
}

__global__ void seg_offsets(int64_t* o, size_t n, int64_t seg) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) o[i] = (int64_t)i * seg;
}

struct Below {
    uint32_t t;
    __device__ bool operator()(uint32_t x) const { return x < t; }
};

int main() {
    const size_t most = (size_t)1 << 27;
    Inputs in{anchor_alloc<uint8_t>(most),  anchor_alloc<int8_t>(most),   anchor_alloc<int32_t>(most), anchor_alloc<uint32_t>(most),
              anchor_alloc<uint32_t>(most), anchor_alloc<uint32_t>(most), anchor_alloc<uint64_t>(most), anchor_alloc<int64_t>(most),
              anchor_alloc<float>(most),    anchor_alloc<float>(most),    anchor_alloc<double>(most),   anchor_alloc<uint32_t>(most),
              anchor_alloc<uint64_t>(most)};
    int64_t* seg_off = anchor_alloc<int64_t>(most / 32 + 1);
    // Outputs: 8 bytes an element twice (keys and values), a few scalars.
    char* out_k = anchor_alloc<char>(8 * most);
    char* out_v = anchor_alloc<char>(8 * most);
    int64_t* index = anchor_alloc<int64_t>(1);
    char* scalar = anchor_alloc<char>(16);
    int* hist = anchor_alloc<int>(256);
    AnchorTemp temp;
    std::printf("op,n,us\n");
    for (int lg : {20, 24, 27}) {
        const size_t n = (size_t)1 << lg;
        const int ni = (int)n;
        fill_inputs<<<1024, 256>>>(in, n);
        CHECK(cudaDeviceSynchronize());

        anchor_row(temp, "reduce_sum_i64", n, [&](void* t, size_t& b) { return cub::DeviceReduce::Sum(t, b, in.i64, (int64_t*)scalar, ni); });
        anchor_row(temp, "reduce_max_f64", n, [&](void* t, size_t& b) { return cub::DeviceReduce::Max(t, b, in.f64, (double*)scalar, ni); });
        anchor_row(temp, "reduce_min_i8", n, [&](void* t, size_t& b) { return cub::DeviceReduce::Min(t, b, in.i8, (int8_t*)scalar, ni); });
        anchor_row(temp, "argmin_f64", n, [&](void* t, size_t& b) {
            return cub::DeviceReduce::ArgMin(t, b, in.f64, (double*)scalar, index, (int64_t)n);
        });
        anchor_row(temp, "argmin_i32", n, [&](void* t, size_t& b) {
            return cub::DeviceReduce::ArgMin(t, b, in.i32, (int32_t*)scalar, index, (int64_t)n);
        });
        anchor_row(temp, "scan_incl_sum_u8", n, [&](void* t, size_t& b) { return cub::DeviceScan::InclusiveSum(t, b, in.u8, (uint8_t*)out_k, ni); });
        anchor_row(temp, "scan_incl_sum_u64", n, [&](void* t, size_t& b) { return cub::DeviceScan::InclusiveSum(t, b, in.u64, (uint64_t*)out_k, ni); });
        anchor_row(temp, "scan_incl_sum_f64", n, [&](void* t, size_t& b) { return cub::DeviceScan::InclusiveSum(t, b, in.f64, (double*)out_k, ni); });
        anchor_row(temp, "bincount256_u8", n, [&](void* t, size_t& b) {
            return cub::DeviceHistogram::HistogramEven(t, b, in.u8, hist, 257, 0, 256, ni);
        });
        anchor_row(temp, "histogram_even64_u8", n, [&](void* t, size_t& b) {
            return cub::DeviceHistogram::HistogramEven(t, b, in.u8, hist, 65, 0, 255, ni);
        });
        anchor_row(temp, "sort_keys_u8", n, [&](void* t, size_t& b) { return cub::DeviceRadixSort::SortKeys(t, b, in.u8, (uint8_t*)out_k, ni); });
        anchor_row(temp, "sort_keys_i32", n, [&](void* t, size_t& b) { return cub::DeviceRadixSort::SortKeys(t, b, in.i32, (int32_t*)out_k, ni); });
        anchor_row(temp, "sort_keys_f32", n, [&](void* t, size_t& b) { return cub::DeviceRadixSort::SortKeys(t, b, in.f32, (float*)out_k, ni); });
        anchor_row(temp, "sort_keys_f64", n, [&](void* t, size_t& b) { return cub::DeviceRadixSort::SortKeys(t, b, in.f64, (double*)out_k, ni); });
        anchor_row(temp, "sort_keys_i64", n, [&](void* t, size_t& b) { return cub::DeviceRadixSort::SortKeys(t, b, in.i64, (int64_t*)out_k, ni); });
        anchor_row(temp, "sort_keys_u32_few16", n, [&](void* t, size_t& b) {
            return cub::DeviceRadixSort::SortKeys(t, b, in.few16, (uint32_t*)out_k, ni);
        });
        anchor_row(temp, "sort_keys_u32_sorted", n, [&](void* t, size_t& b) {
            return cub::DeviceRadixSort::SortKeys(t, b, in.sorted, (uint32_t*)out_k, ni);
        });
        anchor_row(temp, "sort_pairs_f32_u32_descending", n, [&](void* t, size_t& b) {
            return cub::DeviceRadixSort::SortPairs(t, b, in.f32_desc, (float*)out_k, in.v32, (uint32_t*)out_v, ni);
        });
        {
            const int64_t segs = (int64_t)n / 32;
            seg_offsets<<<1024, 256>>>(seg_off, (size_t)segs + 1, 32);
            CHECK(cudaDeviceSynchronize());
            anchor_row(temp, "segmented_sort_u32_seg32", n, [&](void* t, size_t& b) {
                return cub::DeviceSegmentedSort::SortKeys(t, b, in.u32, (uint32_t*)out_k, (int64_t)n, segs, seg_off, seg_off + 1);
            });
        }
        for (uint32_t pct : {1u, 99u}) {
            const Below below{(uint32_t)(4294967296.0 * pct / 100.0)};
            char name[64];
            std::snprintf(name, sizeof name, "select_if_u32_sel%u", pct);
            anchor_row(temp, name, n, [&](void* t, size_t& b) {
                return cub::DeviceSelect::If(t, b, in.u32, (uint32_t*)out_k, (int*)scalar, ni, below);
            });
        }
        anchor_row(temp, "histogram_even256_f64", n, [&](void* t, size_t& b) {
            return cub::DeviceHistogram::HistogramEven(t, b, in.f64, hist, 257, 0.0, 1.0, ni);
        });
        anchor_row(temp, "sort_pairs_u32_u64", n, [&](void* t, size_t& b) {
            return cub::DeviceRadixSort::SortPairs(t, b, in.u32, (uint32_t*)out_k, in.v64, (uint64_t*)out_v, ni);
        });
        anchor_row(temp, "sort_pairs_u64_u64", n, [&](void* t, size_t& b) {
            return cub::DeviceRadixSort::SortPairs(t, b, in.u64, (uint64_t*)out_k, in.v64, (uint64_t*)out_v, ni);
        });
    }
    return 0;
}
