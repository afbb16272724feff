// Build and run from this folder (ThreadSanitizer finds shared-memory races):
//   for s in "256 17" "512 15" "256 11"; do set -- $s; g++ -std=c++17 -O1 -g -fsanitize=thread
//     -DEMU_BLOCK=$1 -DEMU_ITEMS=$2 -o /tmp/mst merge_sort_tile.cpp -lpthread && /tmp/mst || break; done
// CPU emulation of kernels/merge/merge.cu's tile sort (cuprim_merge_sort_tile)
// and tile merge (cuprim_merge): one block at a time, each of its threads a
// std::thread, __syncthreads / __syncwarp as pthread barriers of the block /
// of the warp, __shared__ arrays static (one per kernel, as one block's).
// Staging through registers (CUPRIM_MERGE_LOAD 0; the cp.async and bulk
// copies are tested on the GPU). Checks every tile against std::stable_sort
// / std::merge by "closer to 0.5 first".
#include <pthread.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <thread>
#include <vector>
#include <algorithm>
#include <random>
typedef uint64_t u64; typedef uint32_t u32;
#define __device__
#define __forceinline__ inline
#define __global__
#define __restrict__
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(a, b)
struct Dim { unsigned x; };
static thread_local Dim threadIdx, blockIdx;
static pthread_barrier_t block_bar, warp_bar[32];
static void __syncthreads() { pthread_barrier_wait(&block_bar); }
static void __syncwarp() { pthread_barrier_wait(&warp_bar[threadIdx.x / 32]); }
static unsigned __ballot_sync(unsigned, bool) { abort(); }
static int __ffs(unsigned) { abort(); }
template <class T> static T __shfl_sync(unsigned, T, int) { abort(); }
static u64 cuprim_thread_id() { abort(); }
static u32 __cvta_generic_to_shared(const void*) { return 0; }
using std::min; using std::max;
template <typename T, int N> struct cuprim_vec { T v[N]; };
template <typename T> static bool cuprim_aligned_to(const void*) { return false; }
template <typename T> static T cuprim_load_ro(const T* p) { return *p; }
#define CUPRIM_BLOCK EMU_BLOCK
#define CUPRIM_ITEMS EMU_ITEMS
#define CUPRIM_MIN_BLOCKS 1
#define CUPRIM_PAIRS 0
typedef float K; typedef float V;
struct Cmp { static bool less(K a, K b) { return fabsf(a - 0.5f) < fabsf(b - 0.5f); } };
#include "../../kernels/block/merge_path.cuh"
#include "../../kernels/merge/merge.cu"

// Runs body(t) for every thread t of block b, each on its own std::thread.
template <class F> static void block(unsigned b, F body) {
  pthread_barrier_init(&block_bar, nullptr, CUPRIM_BLOCK);
  for (int w = 0; w < CUPRIM_BLOCK / 32; w++) pthread_barrier_init(&warp_bar[w], nullptr, 32);
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < CUPRIM_BLOCK; t++) ts.emplace_back([&, t] { threadIdx.x = t; blockIdx.x = b; body(); });
  for (auto& t : ts) t.join();
  pthread_barrier_destroy(&block_bar);
  for (int w = 0; w < CUPRIM_BLOCK / 32; w++) pthread_barrier_destroy(&warp_bar[w]);
}
static bool near(K a, K b) { return Cmp::less(a, b); }
int main() {
  static_assert(CUPRIM_BLOCK % 32 == 0, "whole warps");
  std::mt19937_64 rng(11);
  const int tile = MERGE_TILE;
  long sorted = 0, merged = 0;
  for (int n : {1, 2, 31, tile - 1, tile, tile + 1, 2 * tile + 5, 3 * tile}) {
    std::vector<K> in(n), out(n, -7.0f);
    for (auto& x : in) x = (float)(rng() % 65) / 64.0f;
    for (unsigned b = 0; b * (u64)tile < (u64)n; b++)
      block(b, [&] { cuprim_merge_sort_tile(in.data(), in.data(), out.data(), out.data(), n); });
    for (int d0 = 0; d0 < n; d0 += tile) {
      std::vector<K> want(in.begin() + d0, in.begin() + std::min(n, d0 + tile));
      std::stable_sort(want.begin(), want.end(), near);
      if (!std::equal(want.begin(), want.end(), out.begin() + d0)) { printf("SORT MISMATCH n %d tile at %d\n", n, d0); return 1; }
      sorted++;
    }
  }
  for (int trial = 0; trial < 40; trial++) {
    const u64 na = rng() % (3 * tile), nb = rng() % (3 * tile) + (na == 0);
    std::vector<K> a(na), b(nb), out(na + nb, -7.0f), want;
    for (auto& x : a) x = (float)(rng() % 9) / 8.0f;
    for (auto& x : b) x = (float)(rng() % 9) / 8.0f;
    std::stable_sort(a.begin(), a.end(), near); std::stable_sort(b.begin(), b.end(), near);
    std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(want), near);
    const u64 tiles = (na + nb + tile - 1) / tile;
    std::vector<u64> splits(tiles + 1);
    for (u64 t = 0; t <= tiles; t++) splits[t] = cuprim_merge_path<Cmp>(a.data(), na, b.data(), nb, std::min(t * tile, na + nb));
    for (unsigned blk = 0; blk < tiles; blk++)
      block(blk, [&] { cuprim_merge(a.data(), na, b.data(), nb, nullptr, nullptr, splits.data(), out.data(), nullptr); });
    if (out != want) { printf("MERGE MISMATCH na %llu nb %llu\n", (unsigned long long)na, (unsigned long long)nb); return 1; }
    merged++;
  }
  printf("ok: %ld sorted tiles, %ld merges (%d x %d)\n", sorted, merged, CUPRIM_BLOCK, CUPRIM_ITEMS);
  return 0;
}
