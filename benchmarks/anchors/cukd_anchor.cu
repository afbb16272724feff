// cudaKDTree (github.com/ingowald/cudaKDTree, Apache-2.0) on the inputs of
// cuprim's kNN bench: reads the manifest `benches/knn.rs` writes under
// CUPRIM_KNN_POINTS_DIR (one line per row: `row D k points-file
// queries-file`; files are "CPKN", u32 D, u64 count, count x D f32 LE),
// builds the tree with cukd::buildTree (the thrust builder) and times the
// stack-based and the closest-corner-tracking (cct) kNN traversals with
// FixedCandidateList<k>, one thread per query in the file's order (as
// cudaKDTree's own samples launch them). Prints CSV:
//   row,D,k,n,q,build_ms,stack_ms,cct_ms,best_ms,check
// Times are medians of single calls between CUDA events after one warm-up
// call (a call over 500 ms is timed once); `check` is 1 when both
// traversals give the same sum of k-th distances (to 1e-5 relative).
//
// Build (CCCL 3.0 headers; the thrust builder does not compile against 3.5):
//   T=~/.cache/cudatk/nvidia/cu13
//   $T/bin/nvcc -O3 -std=c++17 -arch=sm_90 --extended-lambda -I $T/include/cccl \
//       -I CUDAKDTREE_CHECKOUT -L $T/lib -o cukd_anchor cukd_anchor.cu
// Run: cukd_anchor DIR/manifest.txt

#include "cukd/builder.h"
#include "cukd/knn.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CHECK(call)                                                                              \
    do {                                                                                         \
        cudaError_t e_ = (call);                                                                 \
        if (e_ != cudaSuccess) {                                                                 \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                        \
        }                                                                                        \
    } while (0)

struct Set {
    uint32_t dim = 0;
    uint64_t count = 0;
    std::vector<float> data;
};

static Set read_set(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        std::fprintf(stderr, "cannot open %s\n", path.c_str());
        std::exit(1);
    }
    char magic[4];
    Set s;
    f.read(magic, 4);
    f.read(reinterpret_cast<char*>(&s.dim), 4);
    f.read(reinterpret_cast<char*>(&s.count), 8);
    if (std::string(magic, 4) != "CPKN") {
        std::fprintf(stderr, "%s: not a CPKN file\n", path.c_str());
        std::exit(1);
    }
    s.data.resize(s.count * s.dim);
    f.read(reinterpret_cast<char*>(s.data.data()), s.data.size() * 4);
    if (!f) {
        std::fprintf(stderr, "%s: short file\n", path.c_str());
        std::exit(1);
    }
    return s;
}

template <int D> struct PointOf;
template <> struct PointOf<2> { using type = float2; };
template <> struct PointOf<3> { using type = float3; };
template <> struct PointOf<8> { using type = cukd::vec_float<8>; };

template <typename point_t, int K>
__global__ void stack_knn(const point_t* queries, int q, const point_t* nodes, int n, float* kth) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= q) return;
    cukd::FixedCandidateList<K> list(INFINITY);
    kth[t] = cukd::stackBased::knn<cukd::FixedCandidateList<K>, point_t>(list, queries[t], nodes, n);
}

template <typename point_t, int K>
__global__ void cct_knn(const point_t* queries, int q, const cukd::box_t<point_t>* bounds, const point_t* nodes, int n, float* kth) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= q) return;
    cukd::FixedCandidateList<K> list(INFINITY);
    kth[t] = cukd::cct::knn<cukd::FixedCandidateList<K>, point_t>(list, queries[t], *bounds, nodes, n);
}

// Median of `reps` single timed calls of `run` after one warm-up call
// (reps = 0: the one call, timed).
template <typename F>
static double time_ms(F run, int reps) {
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<double> ms;
    for (int i = 0; i <= reps; i++) {
        CHECK(cudaEventRecord(a));
        run();
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        CHECK(cudaGetLastError());
        float m = 0;
        CHECK(cudaEventElapsedTime(&m, a, b));
        if (i > 0 || reps == 0) ms.push_back(m);
        if (m > 500.0f) {
            ms.assign(1, m);  // a slow call: once is enough
            break;
        }
    }
    std::sort(ms.begin(), ms.end());
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    return ms[ms.size() / 2];
}

static double sum_of(const float* d, int q) {
    std::vector<float> h(q);
    CHECK(cudaMemcpy(h.data(), d, q * 4, cudaMemcpyDeviceToHost));
    double s = 0;
    for (float x : h) s += x;
    return s;
}

template <int D, int K>
static void run_row(const std::string& row, const Set& pts, const Set& qs) {
    using point_t = typename PointOf<D>::type;
    static_assert(sizeof(point_t) == D * sizeof(float), "packed points");
    const int n = (int)pts.count, q = (int)qs.count;
    point_t *pristine, *nodes, *queries;
    float* kth;
    cukd::box_t<point_t>* bounds;
    CHECK(cudaMalloc(&pristine, sizeof(point_t) * n));
    CHECK(cudaMalloc(&nodes, sizeof(point_t) * n));
    CHECK(cudaMalloc(&queries, sizeof(point_t) * q));
    CHECK(cudaMalloc(&kth, 4 * (size_t)q));
    CHECK(cudaMalloc(&bounds, sizeof(*bounds)));
    CHECK(cudaMemcpy(pristine, pts.data.data(), sizeof(point_t) * n, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(queries, qs.data.data(), sizeof(point_t) * q, cudaMemcpyHostToDevice));

    // Build: the builder reorders the points in place, so each timed build
    // starts from a fresh copy (copied outside the events).
    std::vector<double> builds;
    for (int i = 0; i < 4; i++) {
        CHECK(cudaMemcpy(nodes, pristine, sizeof(point_t) * n, cudaMemcpyDeviceToDevice));
        CHECK(cudaDeviceSynchronize());
        const double m = time_ms([&] { cukd::buildTree<point_t>(nodes, n, bounds); }, 0);
        if (i > 0) builds.push_back(m);
    }
    std::sort(builds.begin(), builds.end());
    const double build = builds[builds.size() / 2];

    const int bs = 128, nb = (q + bs - 1) / bs;
    const double stack = time_ms([&] { stack_knn<point_t, K><<<nb, bs>>>(queries, q, nodes, n, kth); }, 5);
    const double s_stack = sum_of(kth, q);
    const double cct = time_ms([&] { cct_knn<point_t, K><<<nb, bs>>>(queries, q, bounds, nodes, n, kth); }, 5);
    const double s_cct = sum_of(kth, q);
    const int check = std::fabs(s_stack - s_cct) <= 1e-5 * std::fabs(s_stack) ? 1 : 0;
    std::printf("%s,%d,%d,%d,%d,%.4f,%.4f,%.4f,%.4f,%d\n", row.c_str(), D, K, n, q, build, stack, cct, std::min(stack, cct), check);
    std::fflush(stdout);
    CHECK(cudaFree(pristine));
    CHECK(cudaFree(nodes));
    CHECK(cudaFree(queries));
    CHECK(cudaFree(kth));
    CHECK(cudaFree(bounds));
}

template <int D>
static void dispatch_k(int k, const std::string& row, const Set& p, const Set& q) {
    switch (k) {
        case 1: return run_row<D, 1>(row, p, q);
        case 8: return run_row<D, 8>(row, p, q);
        case 64: return run_row<D, 64>(row, p, q);
        default: std::fprintf(stderr, "%s: k = %d not compiled (1, 8, 64)\n", row.c_str(), k);
    }
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s manifest.txt [row-substring]\n", argv[0]);
        return 2;
    }
    const std::string filter = argc > 2 ? argv[2] : "";
    std::ifstream m(argv[1]);
    std::string line;
    std::printf("row,D,k,n,q,build_ms,stack_ms,cct_ms,best_ms,check\n");
    while (std::getline(m, line)) {
        std::istringstream in(line);
        std::string row, pf, qf;
        int d = 0, k = 0;
        if (!(in >> row >> d >> k >> pf >> qf)) continue;
        if (!filter.empty() && row.find(filter) == std::string::npos) continue;
        const Set p = read_set(pf), q = read_set(qf);
        if ((int)p.dim != d || (int)q.dim != d) {
            std::fprintf(stderr, "%s: dimension mismatch\n", row.c_str());
            continue;
        }
        switch (d) {
            case 2: dispatch_k<2>(k, row, p, q); break;
            case 3: dispatch_k<3>(k, row, p, q); break;
            case 8: dispatch_k<8>(k, row, p, q); break;
            default: std::fprintf(stderr, "%s: D = %d not compiled (2, 3, 8)\n", row.c_str(), d);
        }
    }
    return 0;
}
