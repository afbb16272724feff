// Build and run from this folder: for t in uint32_t float int8_t; do g++ -std=c++17 -O1 -g
//   -fsanitize=address,undefined -DKTYPE=$t -o /tmp/h_$t set_flags.cpp && /tmp/h_$t; done
// CPU emulation of kernels/merge/set.cu (the flag and compaction kernels):
// every thread of a grid run in turn (neither kernel shares memory or waits
// on another thread), flags as u32.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <random>
typedef uint64_t u64; typedef uint32_t u32;
#define __device__
#define __forceinline__ inline
#define __global__
#define __restrict__
static u64 g_tid, g_count;
struct { unsigned x; } threadIdx;
static unsigned __ballot_sync(unsigned, bool) { abort(); }
static int __ffs(unsigned) { abort(); }
template <class T> static T __shfl_sync(unsigned, T, int) { abort(); }
static u64 cuprim_thread_id() { return g_tid; }
static u64 cuprim_thread_count() { return g_count; }
typedef KTYPE K;
typedef uint32_t F;
struct Cmp { static bool less(K a, K b) { return a < b; } };
#include "../../kernels/block/merge_path.cuh"
#include "../../kernels/merge/set.cu"

// Reference: the previous kernel's definition.
static std::vector<u64> reference(const std::vector<K>& mine, const std::vector<K>& other, bool keep_less) {
  std::vector<u64> f(mine.size());
  for (size_t i = 0; i < mine.size(); i++) {
    K x = mine[i];
    u64 lo = std::lower_bound(mine.begin(), mine.begin() + i, x) - mine.begin();
    u64 r = i - lo;
    u64 c = std::upper_bound(other.begin(), other.end(), x) - std::lower_bound(other.begin(), other.end(), x);
    f[i] = (keep_less ? r < c : r >= c) ? 1 : 0;
  }
  return f;
}
int main() {
  std::mt19937_64 rng(7);
  long checks = 0;
  for (int trial = 0; trial < 3000; trial++) {
    size_t n = rng() % (trial < 100 ? 40 : 3000), m = rng() % (trial < 100 ? 40 : 3000);
    if (trial % 7 == 0) m = 0;
    if (trial % 11 == 0) n = 1;
    int range = 1 + rng() % (trial % 3 == 0 ? 4 : 500);
    std::vector<K> a(n), b(m);
    for (auto& x : a) x = (K)(rng() % range);
    for (auto& x : b) x = (K)(rng() % range);
    bool sorted = trial % 5 != 4;
    if (sorted) { std::sort(a.begin(), a.end()); std::sort(b.begin(), b.end()); }
    if (trial % 13 == 0) { std::fill(a.begin(), a.end(), (K)3); std::fill(b.begin(), b.end(), (K)3); }
    for (int keep_less = 0; keep_less < 2; keep_less++) {
      std::vector<F> flags(n, 77);
      g_count = 1 + rng() % 9;
      for (g_tid = 0; g_tid < g_count; g_tid++) cuprim_set_flags(a.data(), n, b.data(), m, keep_less, flags.data());
      std::vector<u64> got(flags.begin(), flags.end());
      if (sorted || trial % 13 == 0) {
        auto want = reference(a, b, keep_less);
        if (got != want) { printf("MISMATCH trial %d n %zu m %zu keep_less %d\n", trial, n, m, keep_less); return 1; }
        checks++;
      } else {
        for (auto f : got) if (f > 1) { printf("UNWRITTEN trial %d\n", trial); return 1; }
      }
      // The compaction from the inclusive sums of the flags.
      std::vector<F> sums(flags);
      for (size_t i = 1; i < n; i++) sums[i] += sums[i - 1];
      const u64 total = n ? sums[n - 1] : 0;
      std::vector<K> out(total), want_out;
      for (size_t i = 0; i < n; i++) if (flags[i]) want_out.push_back(a[i]);
      g_count = 1 + rng() % 9;
      for (g_tid = 0; g_tid < g_count; g_tid++) cuprim_set_compact(a.data(), n, sums.data(), out.data(), total);
      if (out != want_out) { printf("COMPACT MISMATCH trial %d\n", trial); return 1; }
    }
  }
  printf("ok: %ld sorted comparisons\n", checks);
  return 0;
}
