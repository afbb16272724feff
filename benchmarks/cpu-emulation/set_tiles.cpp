// Build and run from this folder (ThreadSanitizer: shared-memory races;
// AddressSanitizer: reads and writes outside the inputs, outputs and
// shared arrays):
//   for s in "-DEMU_K=1" "-DEMU_K=2" "-DEMU_K=4 -DEMU_BUF=1" "-DEMU_K=8" "-DEMU_K=4 -DEMU_CMP=1"
//     "-DEMU_K=4 -DEMU_CMP=2" "-DEMU_K=4 -DEMU_PAIRS=1" "-DEMU_K=8 -DEMU_PAIRS=1 -DEMU_BUF=1"; do
//     for san in thread address,undefined; do g++ -std=c++17 -O1 -g -fsanitize=$san $s
//       -o /tmp/set_tiles set_tiles.cpp -lpthread && /tmp/set_tiles || break 2; done; done
// CPU emulation of kernels/merge/set.cu (cuprim_set_partition and cuprim_set):
// every tile boundary's cut, then one block at a time in tile order, each of
// its threads a std::thread of a pool (__syncthreads a pthread barrier),
// __shared__ arrays static. The look-back (kernels/block/lookback.cuh) is a
// sequential stand-in with block_scan_lookback's contract (tiles run in
// order, so the prefix of the tiles before is a running total); staging by
// merge_tile.cuh's register path (CUPRIM_MERGE_LOAD 0; cp.async and the bulk
// copy are the merge's, tested on the GPU). Checks the four operations, keys
// alone or with values (each value names its element: which copies are kept
// shows), against std's sequential two-pointer walk on thousands of random
// sorted pairs: few distinct keys (long runs), runs spanning many tiles,
// all-equal inputs, one side empty, n = 1, sizes around the tile; a user
// comparator with classes of distinct keys (EMU_CMP 1: by the low 2 bits),
// floats with NaNs and signed zeros under the total order (EMU_CMP 2). Then
// unsorted inputs: in bounds, at most `capacity` written.
#include <pthread.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>
#include <algorithm>
#include <random>
typedef uint64_t u64; typedef uint32_t u32; typedef uint16_t u16; typedef uint8_t u8;
#define __device__
#define __forceinline__ inline
#define __global__
#define __restrict__
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(a, b)
#define CUPRIM_INPUT const
struct Dim { unsigned x; };
static thread_local Dim threadIdx, blockIdx;
static thread_local u64 g_tid;
static pthread_barrier_t block_bar;
static void __syncthreads() { pthread_barrier_wait(&block_bar); }
static unsigned __ballot_sync(unsigned, bool) { abort(); }
static int __ffs(unsigned) { abort(); }
static int __popc(u32 x) { return __builtin_popcount(x); }
template <class T> static T __shfl_sync(unsigned, T, int) { abort(); }
static u64 cuprim_thread_id() { return g_tid; }
static u32 __cvta_generic_to_shared(const void*) { return 0; }
using std::min; using std::max;
template <typename T, int N> struct cuprim_vec { T v[N]; };
template <typename T> static bool cuprim_aligned_to(const void*) { return false; }
template <typename T> static T cuprim_load_ro(const T* p) { return *p; }

#ifndef EMU_BLOCK
#define EMU_BLOCK 64
#endif
#ifndef EMU_ITEMS
#define EMU_ITEMS 5
#endif
#ifndef EMU_PAIRS
#define EMU_PAIRS 0
#endif
#ifndef EMU_BUF
#define EMU_BUF 0
#endif
#ifndef EMU_CMP
#define EMU_CMP 0
#endif
#ifndef EMU_TRIALS
#define EMU_TRIALS 2500
#endif
#define CUPRIM_BLOCK EMU_BLOCK
#define CUPRIM_ITEMS EMU_ITEMS
#define CUPRIM_MIN_BLOCKS 1
#define CUPRIM_PAIRS EMU_PAIRS
#define CUPRIM_MERGE_LOAD 0

#if EMU_CMP == 2
typedef float K;
static u32 bits(float x) { u32 u; memcpy(&u, &x, 4); return u; }
// total_cmp: flip the magnitude bits of negatives, the sign bit of the rest.
static u32 ordered(float x) { const u32 u = bits(x); return u & 0x80000000u ? ~u : u | 0x80000000u; }
struct Cmp { static bool less(K a, K b) { return ordered(a) < ordered(b); } };
#elif EMU_K == 1
typedef u8 K;
#elif EMU_K == 2
typedef u16 K;
#elif EMU_K == 4
typedef u32 K;
#else
typedef u64 K;
#endif
#if EMU_CMP == 1
struct Cmp { static bool less(K a, K b) { return (a & 3) < (b & 3); } };
#elif EMU_CMP == 0
struct Cmp { static bool less(K a, K b) { return a < b; } };
#endif
typedef u32 V;  // a value names its element: a's index, or b's | 1 << 30
typedef u32 C;

// The inputs: plain buffers (IS_BUF: merge_load's path) or another
// expression (loads one by one).
template <typename T> struct In {
  const T* p;
  typedef T item;
  static constexpr bool IS_BUF = EMU_BUF;
  T load(u64 i) const { return p[i]; }
};
typedef In<K> In0;
typedef In<K> In1;

// Stand-ins for kernels/block/lookback.cuh: tiles run in order.
static C g_carry;
static u32 scan_take_tile(u32*, u32, u32*) { return blockIdx.x; }
template <typename Val, typename Op, int BLOCK, bool DET>
static bool block_scan_lookback(Val value, u32 tile, u32*, Val*, Val*, Val* warp_totals, Val*, Val*, Val& before,
                                bool& has_before, Val& prefix, const Val* = nullptr) {
  static Val vals[BLOCK];
  const int t = threadIdx.x;
  vals[t] = value;
  __syncthreads();
  has_before = t > 0;
  if (t > 0) {
    before = vals[0];
    for (int k = 1; k < t; k++) before = Op::apply(before, vals[k]);
  }
  prefix = g_carry;
  __syncthreads();
  if (t == 0) {
    Val total = vals[0];
    for (int k = 1; k < BLOCK; k++) total = Op::apply(total, vals[k]);
    warp_totals[BLOCK / 32 - 1] = total;
    g_carry = tile == 0 ? total : Op::apply(g_carry, total);
  }
  __syncthreads();
  return tile > 0;
}

#include "../../kernels/block/merge_path.cuh"
#include "../../kernels/merge/merge_tile.cuh"

// One module per operation, as the kernel is specialised.
#define CUPRIM_SET_OP 0
#define cuprim_set cuprim_set_op0
#define cuprim_set_partition cuprim_set_partition_op0
namespace op0 {
#include "../../kernels/merge/set.cu"
}
#undef cuprim_set
#undef cuprim_set_partition
#undef CUPRIM_SET_OP
#define CUPRIM_SET_OP 1
#define cuprim_set cuprim_set_op1
#define cuprim_set_partition cuprim_set_partition_op1
namespace op1 {
#include "../../kernels/merge/set.cu"
}
#undef cuprim_set
#undef cuprim_set_partition
#undef CUPRIM_SET_OP
#define CUPRIM_SET_OP 2
#define cuprim_set cuprim_set_op2
#define cuprim_set_partition cuprim_set_partition_op2
namespace op2 {
#include "../../kernels/merge/set.cu"
}
#undef cuprim_set
#undef cuprim_set_partition
#undef CUPRIM_SET_OP
#define CUPRIM_SET_OP 3
#define cuprim_set cuprim_set_op3
#define cuprim_set_partition cuprim_set_partition_op3
namespace op3 {
#include "../../kernels/merge/set.cu"
}
#undef cuprim_set
#undef cuprim_set_partition

// A pool of CUPRIM_BLOCK threads running one block's body at a time.
struct Pool {
  std::vector<std::thread> ts;
  pthread_barrier_t start, done;
  std::function<void()> job;
  bool quit = false;
  Pool() {
    pthread_barrier_init(&block_bar, nullptr, CUPRIM_BLOCK);
    pthread_barrier_init(&start, nullptr, CUPRIM_BLOCK + 1);
    pthread_barrier_init(&done, nullptr, CUPRIM_BLOCK + 1);
    for (unsigned t = 0; t < CUPRIM_BLOCK; t++)
      ts.emplace_back([this, t] {
        threadIdx.x = t;
        while (true) {
          pthread_barrier_wait(&start);
          if (quit) break;
          job();
          pthread_barrier_wait(&done);
        }
      });
  }
  void run(unsigned b, std::function<void()> f) {
    job = [b, f] { blockIdx.x = b; f(); };
    pthread_barrier_wait(&start);
    pthread_barrier_wait(&done);
  }
  ~Pool() {
    quit = true;
    pthread_barrier_wait(&start);
    for (auto& t : ts) t.join();
  }
};

// std's two-pointer walk on (key, value) pairs ordered by key.
static void reference(const std::vector<K>& a, const std::vector<K>& b, int op, std::vector<K>& ok, std::vector<V>& ov) {
  const bool keep_a = op != 1, keep_b = op == 0 || op == 3, keep_both = op == 0 || op == 1;
  size_t i = 0, j = 0;
  auto push = [&](bool from_b, size_t k) {
    ok.push_back(from_b ? b[k] : a[k]);
    ov.push_back(from_b ? (V)k | (1u << 30) : (V)k);
  };
  while (i < a.size() && j < b.size()) {
    if (Cmp::less(a[i], b[j])) {
      if (keep_a) push(false, i);
      i++;
    } else if (Cmp::less(b[j], a[i])) {
      if (keep_b) push(true, j);
      j++;
    } else {
      if (keep_both) push(false, i);
      i++, j++;
    }
  }
  for (; keep_a && i < a.size(); i++) push(false, i);
  for (; keep_b && j < b.size(); j++) push(true, j);
}

static bool same_bits(K x, K y) { return memcmp(&x, &y, sizeof(K)) == 0; }

// Runs operation `op` on the emulated device; returns the count read back.
template <class Partition, class Tile>
static u64 run(Pool& pool, Partition partition, Tile tile_kernel, const std::vector<K>& a, const std::vector<K>& b,
               const std::vector<V>& va, const std::vector<V>& vb, std::vector<K>& ok, std::vector<V>& ov,
               u64 capacity) {
  const u64 na = a.size(), nb = b.size(), n = na + nb;
  constexpr u64 stride = CUPRIM_BLOCK * CUPRIM_ITEMS - 1;
  const u64 tiles = (n + stride - 1) / stride;
  // Exact-size copies: AddressSanitizer sees any read past an input.
  std::vector<K> ca(a), cb(b);
  std::vector<V> cva(va), cvb(vb);
  const K* pa = ca.empty() ? nullptr : ca.data();
  const K* pb = cb.empty() ? nullptr : cb.data();
  std::vector<u64> splits(2 * (tiles + 1));
  for (u64 t = 0; t <= tiles; t++) {
    g_tid = t;
    partition(In0{pa}, na, In1{pb}, nb, splits.data(), tiles);
  }
  ok.assign(capacity, (K)0);
  ov.assign(capacity, 77u);
  g_carry = 0;
  for (u64 t = 0; t < tiles; t++)
    pool.run((unsigned)t, [&] {
      tile_kernel(In0{pa}, na, In1{pb}, nb, EMU_PAIRS ? cva.data() : nullptr, EMU_PAIRS && !cvb.empty() ? cvb.data() : nullptr,
                  splits.data(), ok.data(), ov.data(), capacity, nullptr, nullptr, nullptr, nullptr, (u32)tiles);
    });
  return tiles ? g_carry : 0;
}

static K key_of(std::mt19937_64& rng, int range) {
#if EMU_CMP == 2
  static const float specials[] = {-NAN, -INFINITY, -1.5f, -0.0f, 0.0f, 1.0f, 2.5f, INFINITY, NAN};
  return specials[rng() % (range < 9 ? range : 9)];
#else
  return (K)(rng() % (u64)range);
#endif
}

int main() {
  std::mt19937_64 rng(11);
  Pool pool;
  const int tile = CUPRIM_BLOCK * CUPRIM_ITEMS;
  long checks = 0, tiles_run = 0, long_runs = 0;
  for (int trial = 0; trial < EMU_TRIALS; trial++) {
    size_t na, nb;
    const int shape = trial % 10;
    if (trial < 200) {
      na = rng() % 12, nb = rng() % 12;
    } else if (shape == 0) {
      na = rng() % (8 * tile), nb = 0;
    } else if (shape == 1) {
      na = 1, nb = rng() % (3 * tile);
    } else if (shape == 2) {
      na = tile - 1 + rng() % 3, nb = tile - 1 + rng() % 3;
    } else {
      na = rng() % (5 * tile), nb = rng() % (5 * tile);
    }
    if (trial % 2 == 1) std::swap(na, nb);
    int range = 1 + (int)(rng() % (shape == 3 ? 2 : (shape == 4 ? 6 : 300)));
    std::vector<K> a(na), b(nb);
    for (auto& x : a) x = key_of(rng, range);
    for (auto& x : b) x = key_of(rng, range);
    if (shape == 5) {  // all equal
      for (auto& x : a) x = key_of(rng, 1);
      for (auto& x : b) x = key_of(rng, 1);
    }
    auto by = [](K x, K y) { return Cmp::less(x, y); };
    std::stable_sort(a.begin(), a.end(), by);
    std::stable_sort(b.begin(), b.end(), by);
    long_runs += range <= 2 && na + nb > 4 * (size_t)tile;
    std::vector<V> va(na), vb(nb);
    for (size_t k = 0; k < na; k++) va[k] = (V)k;
    for (size_t k = 0; k < nb; k++) vb[k] = (V)k | (1u << 30);
    for (int op = 0; op < 4; op++) {
      std::vector<K> wk, gk;
      std::vector<V> wv, gv;
      reference(a, b, op, wk, wv);
      const u64 cap = op == 1 ? std::min(na, nb) : (op == 2 ? na : na + nb);
      u64 got;
      switch (op) {
        case 0: got = run(pool, op0::cuprim_set_partition_op0, op0::cuprim_set_op0, a, b, va, vb, gk, gv, cap); break;
        case 1: got = run(pool, op1::cuprim_set_partition_op1, op1::cuprim_set_op1, a, b, va, std::vector<V>(), gk, gv, cap); break;
        case 2: got = run(pool, op2::cuprim_set_partition_op2, op2::cuprim_set_op2, a, b, va, std::vector<V>(), gk, gv, cap); break;
        default: got = run(pool, op3::cuprim_set_partition_op3, op3::cuprim_set_op3, a, b, va, vb, gk, gv, cap); break;
      }
      tiles_run += (na + nb + tile - 2) / (tile - 1);
      bool ok = got == wk.size();
      for (size_t k = 0; ok && k < wk.size(); k++) ok = same_bits(gk[k], wk[k]) && (!EMU_PAIRS || gv[k] == wv[k]);
      if (!ok) {
        printf("MISMATCH trial %d op %d na %zu nb %zu range %d: count %llu want %zu\n", trial, op, na, nb, range,
               (unsigned long long)got, wk.size());
        for (size_t k = 0; k < wk.size() && k < gk.size(); k++)
          if (!same_bits(gk[k], wk[k]) || (EMU_PAIRS && gv[k] != wv[k])) {
            printf("  first difference at %zu: value %u want %u\n", k, gv[k], wv[k]);
            break;
          }
        return 1;
      }
      checks++;
    }
  }
  // Unsorted inputs: some output, nothing read or written out of bounds,
  // at most capacity elements counted as written.
  long unsorted = 0;
  for (int trial = 0; trial < EMU_TRIALS / 8; trial++) {
    const size_t na = rng() % (4 * tile), nb = rng() % (4 * tile);
    std::vector<K> a(na), b(nb);
    for (auto& x : a) x = key_of(rng, 1 + (int)(rng() % 50));
    for (auto& x : b) x = key_of(rng, 1 + (int)(rng() % 50));
    std::vector<V> va(na), vb(nb);
    for (int op = 0; op < 4; op++) {
      std::vector<K> gk;
      std::vector<V> gv;
      const u64 cap = op == 1 ? std::min(na, nb) : (op == 2 ? na : na + nb);
      switch (op) {
        case 0: run(pool, op0::cuprim_set_partition_op0, op0::cuprim_set_op0, a, b, va, vb, gk, gv, cap); break;
        case 1: run(pool, op1::cuprim_set_partition_op1, op1::cuprim_set_op1, a, b, va, std::vector<V>(), gk, gv, cap); break;
        case 2: run(pool, op2::cuprim_set_partition_op2, op2::cuprim_set_op2, a, b, va, std::vector<V>(), gk, gv, cap); break;
        default: run(pool, op3::cuprim_set_partition_op3, op3::cuprim_set_op3, a, b, va, vb, gk, gv, cap); break;
      }
      unsorted++;
    }
  }
  printf("ok: K %d bytes, cmp %d, pairs %d, buf %d, %d x %d tiles: %ld sorted checks (%ld tiles, %ld with runs over many "
         "tiles), %ld unsorted runs\n",
         (int)sizeof(K), EMU_CMP, EMU_PAIRS, EMU_BUF, CUPRIM_BLOCK, CUPRIM_ITEMS, checks, tiles_run, long_runs, unsorted);
  return 0;
}
