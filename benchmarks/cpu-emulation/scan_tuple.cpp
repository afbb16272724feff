// Build and run from this folder (ThreadSanitizer finds shared-memory races):
//   for c in 1 2 3 4 5 6; do g++ -std=c++17 -O1 -g -fsanitize=thread -DEMU_CASE=$c
//     -o /tmp/scan_tuple scan_tuple.cpp -lpthread && /tmp/scan_tuple || break; done
// CPU emulation of kernels/scan/scan.cu for tuple values written unzipped
// (CUPRIM_SCAN_UNZIP 2 or 3): one block at a time, in tile order, each of its
// threads a std::thread, __syncthreads / __syncwarp as pthread barriers, the
// __shared__ arrays static. The block scan and look-back
// (kernels/block/lookback.cuh, shared with scan_by_key and by_key) is replaced
// by a sequential stand-in with the same contract, so what is checked is
// scan.cu's own part: the 16-byte-vector and one-value-at-a-time paths, whole
// and partial tiles, misaligned inputs and outputs, exclusive scans and the
// per-field stores. Each case is one tuple size with the tile shape
// src/algo/scan/plan.rs's tuple_scan_policy gives it, and exact (integer)
// arithmetic, checked against a sequential scan.
#include <pthread.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#include <random>
typedef uint64_t u64; typedef uint32_t u32; typedef uint16_t u16; typedef uint8_t u8;
#define __device__
#define __forceinline__ inline
#define __global__
#define __restrict__
#define __shared__ static
#define __launch_bounds__(a, b)
#define CUPRIM_INPUT const
struct Dim { unsigned x; };
static thread_local Dim threadIdx, blockIdx;
static pthread_barrier_t block_bar, warp_bar[32];
static void __syncthreads() { pthread_barrier_wait(&block_bar); }
static void __syncwarp() { pthread_barrier_wait(&warp_bar[threadIdx.x / 32]); }
template <typename T, int N> struct alignas(sizeof(T) * N) cuprim_vec { T v[N]; };
template <typename T, int N> struct cuprim_arr { T v[N]; };
template <typename A, typename B> struct cuprim_t2 { A a0; B a1; };
template <typename A, typename B, typename C> struct cuprim_t3 { A a0; B a1; C a2; };
template <typename T> static bool cuprim_aligned_to(const void* p) { return ((unsigned long long)p) % sizeof(T) == 0; }
constexpr u32 CUPRIM_X_ANY = 0xffffffffu, CUPRIM_X_MIXED = 0xfffffffeu;
static u32 cuprim_x_meet(u32 a, u32 b) { return a == CUPRIM_X_ANY ? b : b == CUPRIM_X_ANY ? a : a == b ? a : CUPRIM_X_MIXED; }
template <int N, typename T> static u32 cuprim_misalign(const T* p) { return (u32)(((u64)p / sizeof(T)) % N); }
template <int N, typename T> static cuprim_arr<T, N> emu_load_n(const T* p) {
  cuprim_arr<T, N> r;
  for (int k = 0; k < N; k++) r.v[k] = p[k];
  return r;
}
constexpr int LOOKBACK_WINDOWS = 1;
#define CUPRIM_DETERMINISTIC 0

#if EMU_CASE == 1  // 8 bytes (u32, u32): 16-byte vectors of 2
#define CUPRIM_BLOCK 256
#define CUPRIM_ITEMS 12
#define CUPRIM_SCAN_UNZIP 2
typedef cuprim_t2<u32, u32> T;
#elif EMU_CASE == 2  // 3 bytes (u8, u8, u8): one value at a time
#define CUPRIM_BLOCK 256
#define CUPRIM_ITEMS 12
#define CUPRIM_SCAN_UNZIP 3
typedef cuprim_t3<u8, u8, u8> T;
#elif EMU_CASE == 3  // 6 bytes (u16, u8, u16)
#define CUPRIM_BLOCK 256
#define CUPRIM_ITEMS 12
#define CUPRIM_SCAN_UNZIP 3
typedef cuprim_t3<u16, u8, u16> T;
#elif EMU_CASE == 4  // 12 bytes (u32, u8, u32)
#define CUPRIM_BLOCK 256
#define CUPRIM_ITEMS 8
#define CUPRIM_SCAN_UNZIP 3
typedef cuprim_t3<u32, u8, u32> T;
#elif EMU_CASE == 5  // 16 bytes (u64, double): vectors of 1
#define CUPRIM_BLOCK 256
#define CUPRIM_ITEMS 8
#define CUPRIM_SCAN_UNZIP 2
typedef cuprim_t2<u64, double> T;
#elif EMU_CASE == 6  // 24 bytes (u32, double, long long)
#define CUPRIM_BLOCK 128
#define CUPRIM_ITEMS 8
#define CUPRIM_SCAN_UNZIP 3
typedef cuprim_t3<u32, double, long long> T;
#else
#error "EMU_CASE 1 to 6"
#endif
#define CUPRIM_MIN_BLOCKS 1

// Field-wise sums, wrapping as the field types do (doubles hold integers).
static T add(const T& a, const T& b) {
  T r;
  r.a0 = (decltype(r.a0))(a.a0 + b.a0);
  r.a1 = (decltype(r.a1))(a.a1 + b.a1);
#if CUPRIM_SCAN_UNZIP == 3
  r.a2 = (decltype(r.a2))(a.a2 + b.a2);
#endif
  return r;
}
struct ScanOp {
  static T apply(T a, T b) { return add(a, b); }
  static T identity() { T r; memset(&r, 0, sizeof r); return r; }
};
static bool same(const T& a, const T& b) {
  bool s = a.a0 == b.a0 && a.a1 == b.a1;
#if CUPRIM_SCAN_UNZIP == 3
  s = s && a.a2 == b.a2;
#endif
  return s;
}

// The input: a zip of field arrays (block/expr.cuh's cuprim_x_zip / zip3 of buffers).
typedef decltype(T::a0) F0;
typedef decltype(T::a1) F1;
#if CUPRIM_SCAN_UNZIP == 3
typedef decltype(T::a2) F2;
#else
typedef u8 F2;
#endif
struct In {
  const F0* p0; const F1* p1; const F2* p2;
  typedef T item;
  static constexpr bool IS_BUF = false;
  T load(u64 i) const {
    T r;
    r.a0 = p0[i]; r.a1 = p1[i];
#if CUPRIM_SCAN_UNZIP == 3
    r.a2 = p2[i];
#endif
    return r;
  }
  template <int N> cuprim_arr<T, N> load_n(u64 first) const {
    const auto x = emu_load_n<N>(p0 + first);
    const auto y = emu_load_n<N>(p1 + first);
    cuprim_arr<T, N> r;
    for (int k = 0; k < N; k++) { r.v[k].a0 = x.v[k]; r.v[k].a1 = y.v[k]; }
#if CUPRIM_SCAN_UNZIP == 3
    const auto z = emu_load_n<N>(p2 + first);
    for (int k = 0; k < N; k++) r.v[k].a2 = z.v[k];
#endif
    return r;
  }
  template <int N> u32 misalign() const {
    u32 m = cuprim_x_meet(cuprim_misalign<N>(p0), cuprim_misalign<N>(p1));
#if CUPRIM_SCAN_UNZIP == 3
    m = cuprim_x_meet(m, cuprim_misalign<N>(p2));
#endif
    return m;
  }
};

// Stand-ins for kernels/block/lookback.cuh: tiles run in order, so the
// prefix of the tiles before is a running total.
static T g_carry;
static u32 scan_take_tile(u32*, u32, u32*) { return blockIdx.x; }
template <typename V, typename Op, int BLOCK, bool DET>
static bool block_scan_lookback(V value, u32 tile, u32*, V*, V*, V*, V*, V*, V& before, bool& has_before, V& prefix,
                                const V* = nullptr) {
  static V vals[BLOCK];
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
    V total = vals[0];
    for (int k = 1; k < BLOCK; k++) total = Op::apply(total, vals[k]);
    g_carry = tile == 0 ? total : Op::apply(g_carry, total);
  }
  __syncthreads();
  return tile > 0;
}

#include "../../kernels/scan/scan.cu"

template <class F> static void block(unsigned b, F body) {
  pthread_barrier_init(&block_bar, nullptr, CUPRIM_BLOCK);
  for (int w = 0; w < CUPRIM_BLOCK / 32; w++) pthread_barrier_init(&warp_bar[w], nullptr, 32);
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < CUPRIM_BLOCK; t++) ts.emplace_back([&, t] { threadIdx.x = t; blockIdx.x = b; body(); });
  for (auto& t : ts) t.join();
  pthread_barrier_destroy(&block_bar);
  for (int w = 0; w < CUPRIM_BLOCK / 32; w++) pthread_barrier_destroy(&warp_bar[w]);
}

int main() {
  std::mt19937_64 rng(7);
  const int tile = SCAN_TILE;
  long checked = 0, whole = 0;
  // in_off / out_off: elements past a 16-byte boundary of the input fields / output arrays.
  for (int n : {1, 2, 33, 1000, tile - 1, tile, tile + 1, 3 * tile + 1})
    for (int exclusive = 0; exclusive < 2; exclusive++)
      for (int in_off = 0; in_off < 2; in_off++)
        for (int out_off = 0; out_off < 2; out_off++) {
          const int pad = 4;
          std::vector<F0> a(n + pad); std::vector<F1> b(n + pad); std::vector<F2> c(n + pad);
          for (int i = 0; i < n + pad; i++) { a[i] = (F0)(rng() % 1000); b[i] = (F1)(rng() % 100); c[i] = (F2)(rng() % 50); }
          std::vector<F0> o0(n + pad, (F0)77); std::vector<F1> o1(n + pad, (F1)77); std::vector<F2> o2(n + pad, (F2)77);
          In in{a.data() + in_off, b.data() + in_off, c.data() + in_off};
          const u32 tiles = (u32)((n + tile - 1) / tile);
          for (u32 t = 0; t < tiles; t++)
            block(t, [&] {
              cuprim_scan(in, o0.data() + out_off, o1.data() + out_off, o2.data() + out_off, (u64)n, exclusive, nullptr,
                          nullptr, nullptr, nullptr, tiles, nullptr);
            });
          T run = ScanOp::identity();
          for (int i = 0; i < n; i++) {
            const T x = in.load(i);
            const T next = ScanOp::apply(run, x);
            const T want = exclusive ? run : next;
            T got;
            got.a0 = o0[out_off + i]; got.a1 = o1[out_off + i];
#if CUPRIM_SCAN_UNZIP == 3
            got.a2 = o2[out_off + i];
#endif
            if (!same(got, want)) {
              printf("MISMATCH case %d n %d exclusive %d in_off %d out_off %d at %d\n", EMU_CASE, n, exclusive, in_off, out_off, i);
              return 1;
            }
            run = next;
          }
          for (int j = 0; j < n + pad; j++) {
            if (j >= out_off && j < out_off + n) continue;
            bool kept = o0[j] == (F0)77 && o1[j] == (F1)77;
#if CUPRIM_SCAN_UNZIP == 3
            kept = kept && o2[j] == (F2)77;
#endif
            if (!kept) { printf("WRITE OUTSIDE case %d n %d at %d\n", EMU_CASE, n, j); return 1; }
          }
          checked++;
          whole += n >= tile && in_off == 0 && out_off == 0;
        }
  printf("ok: case %d, %d-byte tuples, %ld scans (%ld with whole tiles at vector boundaries; %d x %d, %d values per vector)\n",
         EMU_CASE, (int)sizeof(T), checked, whole, CUPRIM_BLOCK, CUPRIM_ITEMS, SCAN_VEC);
  return 0;
}
