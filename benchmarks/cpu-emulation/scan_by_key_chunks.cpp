// Build and run from this folder (ThreadSanitizer finds shared- and global-memory races):
//   ./scan_by_key_chunks.sh            (every case, -O1 with ThreadSanitizer)
//   EMU_TSAN=0 ./scan_by_key_chunks.sh (every case, -O2, no sanitizer)
//
// CPU emulation of kernels/scan/scan_by_key_chunks.cu (with the real
// scan/scan_by_key.cuh and block/lookback.cuh): the kernel and its headers
// are compiled as host C++, each block's threads are std::threads,
// __syncthreads / __syncwarp are pthread barriers, warp shuffles and
// ballots go through a per-warp exchange buffer between two barriers.
// SLOTS blocks are resident at once (each resident slot its own copy of the
// kernel's __shared__ arrays: the kernel is instantiated per slot), and a
// slot takes the next block when its block ends, as an SM does; the chunk
// index comes from the kernel's own atomic ticket, so look-backs meet
// predecessors still running. Publishing sleeps a random few microseconds,
// so look-backs meet aggregates and walk several windows.
//
// The look-back state is the separate layout (status word, release / acquire,
// values beside it; the packed 64- and 128-bit layouts are PTX and are
// compile-checked only). Everything is exact integer arithmetic against a
// sequential segmented scan; outputs outside [0, n) must stay untouched.
//
// Cases (EMU_CASE):
//   1: u32 keys, u32 values, Add, 64 x 4 tiles, chunks of 3 tiles, fast look-back
//   2: as 1, deterministic look-back with 1 window staged (the re-read path)
//   3: u8 keys, affine maps on u64 (x -> a x + b mod 2^32, non-commutative), 64 x 2, chunks of 4 tiles, deterministic
//   4: keys an expression (i / run, not a buffer), u32 values, 128 x 16 tiles, chunks of 3 tiles, fast
#include <pthread.h>
#include <array>
#include <atomic>
#include <utility>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>
typedef uint64_t u64; typedef uint32_t u32; typedef uint16_t u16; typedef uint8_t u8;
#define __device__
#define __forceinline__ inline
#define __global__
#define __restrict__
#define __shared__ static
#define CUPRIM_INPUT const

// ---- the emulated machine ----
struct Dim { unsigned x; };
static thread_local Dim threadIdx, blockIdx, gridDim;
struct WarpX {
  alignas(16) unsigned char buf[32][32];
  pthread_barrier_t bar;
};
struct BlockX {
  pthread_barrier_t bar;
  WarpX warps[32];
};
static thread_local BlockX* my_block;
static void __syncthreads() { pthread_barrier_wait(&my_block->bar); }
static void __syncwarp(unsigned = 0xffffffffu) { pthread_barrier_wait(&my_block->warps[threadIdx.x / 32].bar); }
template <class V> static V warp_exchange(const V& v, int from_lane, bool take) {
  static_assert(sizeof(V) <= 32, "exchange slot");
  WarpX& w = my_block->warps[threadIdx.x / 32];
  memcpy(w.buf[threadIdx.x & 31], &v, sizeof(V));
  pthread_barrier_wait(&w.bar);
  V r = v;
  if (take) memcpy(&r, w.buf[from_lane], sizeof(V));
  pthread_barrier_wait(&w.bar);
  return r;
}
template <class V> static V cuprim_shfl_up(const V& v, unsigned d) {
  const int lane = threadIdx.x & 31;
  return warp_exchange(v, lane - (int)d, lane >= (int)d);
}
template <class V> static V cuprim_shfl_down(const V& v, unsigned d) {
  const int lane = threadIdx.x & 31;
  return warp_exchange(v, lane + (int)d, lane + (int)d < 32);
}
static unsigned __ballot_sync(unsigned, bool p) {
  WarpX& w = my_block->warps[threadIdx.x / 32];
  w.buf[threadIdx.x & 31][0] = p;
  pthread_barrier_wait(&w.bar);
  unsigned r = 0;
  for (int l = 0; l < 32; l++) r |= (unsigned)w.buf[l][0] << l;
  pthread_barrier_wait(&w.bar);
  return r;
}
static int __ffs(unsigned x) { return x ? __builtin_ctz(x) + 1 : 0; }
static void __nanosleep(unsigned) { std::this_thread::yield(); }
static u32 atomicAdd(u32* p, u32 v) { return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }
static u32 atomicMin(u32* p, u32 v) {
  u32 old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
  }
  return old;
}
static thread_local std::mt19937 jitter{1};
static void emu_store_release(u32* p, u32 v) {
  std::this_thread::sleep_for(std::chrono::microseconds(jitter() % 40));
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
static u32 emu_load_acquire(const u32* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

// ---- prelude pieces the kernel uses ----
template <typename T, int N> struct alignas(sizeof(T) * N) cuprim_vec { T v[N]; };
template <typename T, int N> struct cuprim_arr { T v[N]; };
template <typename T> static bool cuprim_aligned_to(const void* p) { return ((unsigned long long)p) % sizeof(T) == 0; }
constexpr u32 CUPRIM_X_ANY = 0xffffffffu;
template <int N, typename T> static u32 cuprim_misalign(const T* p) { return (u32)(((u64)p / sizeof(T)) % N); }
template <typename In> constexpr int cuprim_x_items() { return In::WIDEST ? 16 / In::WIDEST : 4; }
template <typename T> static T cuprim_canonical_nan(T a) { return a; }  // integers only here
template <typename V> static void cuprim_store_words(V* p, const V& v) { *p = v; }
template <typename V> static V cuprim_load_cg(const V* p) { return *p; }
template <u32 MAX_NS> struct cuprim_backoff {
  void pause() { std::this_thread::yield(); }
};

template <typename T> struct emu_buf {
  const T* p;
  typedef T item;
  static constexpr int WIDEST = sizeof(T);
  static constexpr bool IS_BUF = true;
  T load(u64 i) const { return p[i]; }
  template <int N> cuprim_arr<T, N> load_n(u64 first) const {
    cuprim_arr<T, N> r;
    for (int k = 0; k < N; k++) r.v[k] = p[first + k];
    return r;
  }
  template <int N> u32 misalign() const { return cuprim_misalign<N>(p); }
};
// Keys i / run + offset: an expression with no buffer (loads of one element or 4).
struct emu_div {
  u64 run, offset;
  typedef u32 item;
  static constexpr int WIDEST = 0;
  static constexpr bool IS_BUF = false;
  u32 load(u64 i) const { return (u32)((i + offset) / run); }
  template <int N> cuprim_arr<u32, N> load_n(u64 first) const {
    cuprim_arr<u32, N> r;
    for (int k = 0; k < N; k++) r.v[k] = load(first + k);
    return r;
  }
  template <int N> u32 misalign() const { return CUPRIM_X_ANY; }
};

#define CUPRIM_MIN_BLOCKS 1
#if EMU_CASE == 1 || EMU_CASE == 2
#define CUPRIM_BLOCK 64
#define CUPRIM_ITEMS 4
#define SBK_CHUNK (3 * 64 * 4)
#define CUPRIM_DETERMINISTIC (EMU_CASE == 2)
#define CUPRIM_LOOKBACK_WINDOWS 1
typedef u32 K;
typedef u32 T;
typedef emu_buf<K> In0;
struct ScanOp {
  static T apply(T a, T b) { return a + b; }
  static T identity() { return 0; }
};
#elif EMU_CASE == 3
#define CUPRIM_BLOCK 64
#define CUPRIM_ITEMS 2
#define SBK_CHUNK (4 * 64 * 2)
#define CUPRIM_DETERMINISTIC 1
#define CUPRIM_LOOKBACK_WINDOWS 2
typedef u8 K;
typedef u64 T;  // (a << 32) | b: x -> a x + b (mod 2^32)
typedef emu_buf<K> In0;
struct ScanOp {
  // apply(f, g) = g after f: x -> ag (af x + bf) + bg.
  static T apply(T f, T g) {
    const u32 af = (u32)(f >> 32), bf = (u32)f, ag = (u32)(g >> 32), bg = (u32)g;
    return (u64)(u32)(ag * af) << 32 | (u32)(ag * bf + bg);
  }
  static T identity() { return 1ull << 32; }
};
#elif EMU_CASE == 4
#define CUPRIM_BLOCK 128
#define CUPRIM_ITEMS 16
#define SBK_CHUNK (3 * 128 * 16)
#define CUPRIM_DETERMINISTIC 0
#define CUPRIM_LOOKBACK_WINDOWS 1
typedef u32 K;
typedef u32 T;
typedef emu_div In0;
struct ScanOp {
  static T apply(T a, T b) { return a + b; }
  static T identity() { return 0; }
};
#else
#error "EMU_CASE 1 to 4"
#endif
typedef emu_buf<T> In1;

#include "/tmp/sbk_emu/lookback.cuh"
#include "../../kernels/scan/scan_by_key.cuh"
#include "/tmp/sbk_emu/scan_by_key_chunks.cu"

// ---- the launch: SLOTS resident blocks, each slot taking the next block ----
// Case 2 keeps 40 resident: a look-back can meet more than a window of
// aggregates (chunks without a head, not yet chained) and re-read windows.
constexpr int SLOTS = EMU_CASE == 2 ? 40 : 6;
typedef void (*Kernel)(In0, In1, T*, u64, u32*, SegPair*, SegPair*, u32*, u32);
template <int S> static void slot_kernel(In0 k, In1 v, T* o, u64 n, u32* st, SegPair* a, SegPair* p, u32* c, u32 g) {
  cuprim_scan_by_key_chunks<S>(k, v, o, n, st, a, p, c, g);
}
template <int... S> static constexpr std::array<Kernel, sizeof...(S)> kernels(std::integer_sequence<int, S...>) {
  return {slot_kernel<S>...};
}
static const std::array<Kernel, SLOTS> KERNELS = kernels(std::make_integer_sequence<int, SLOTS>());

static void launch(u32 grid, const std::function<void(Kernel)>& call) {
  std::atomic<u32> next{0};
  std::vector<std::thread> slots;
  for (int s = 0; s < SLOTS; s++)
    slots.emplace_back([&, s] {
      BlockX* b = new BlockX;
      pthread_barrier_init(&b->bar, nullptr, CUPRIM_BLOCK);
      for (int w = 0; w < CUPRIM_BLOCK / 32; w++) pthread_barrier_init(&b->warps[w].bar, nullptr, 32);
      while (true) {
        const u32 id = next.fetch_add(1);
        if (id >= grid) break;
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < CUPRIM_BLOCK; t++)
          ts.emplace_back([&, t] {
            threadIdx.x = t; blockIdx.x = id; gridDim.x = grid; my_block = b;
            jitter.seed(id * 1000 + t);
            call(KERNELS[s]);
          });
        for (auto& t : ts) t.join();
      }
      pthread_barrier_destroy(&b->bar);
      for (int w = 0; w < CUPRIM_BLOCK / 32; w++) pthread_barrier_destroy(&b->warps[w].bar);
      delete b;
    });
  for (auto& t : slots) t.join();
}

int main() {
  std::mt19937_64 rng(EMU_CASE * 7919);
  const u64 chunk = SBK_CHUNK, tile = SBK_TILE;
  u32 counter = 0;  // the device counter: every launch leaves it zero
  long checked = 0, headless = 0;
  struct Size { u64 n; };
  const u64 sizes[] = {1, tile - 1, chunk, chunk + 1, 2 * chunk - 3, 5 * chunk + tile + 7, 13 * chunk + 1, EMU_CASE == 2 ? 75 * chunk + 3 : 1};
  // Run lengths: 1, 64, 10^5 (longer than the input), everything one run,
  // exactly a chunk (heads on chunk starts), a chunk + 1 and random.
  const u64 runs[] = {1, 64, 100000, 0, chunk, chunk + 1, 7777777};
  for (u64 n : sizes)
    for (u64 run : runs) {
#if EMU_CASE == 4
      if (run == 7777777) continue;  // keys are i / run: no random runs
      const u64 offset = run > 1 ? rng() % run : 0;
      In0 keys{run == 0 ? ~0ull : run, offset};
      std::vector<K> kv(n);
      for (u64 i = 0; i < n; i++) kv[i] = keys.load(i);
#else
      std::vector<K> kv(n);
      K key = 0;
      u64 left = 0;
      for (u64 i = 0; i < n; i++) {
        if (run == 7777777) {
          if (left == 0) { key++; left = 1 + rng() % (2 * chunk); }
          left--;
        } else if (run != 0 && i % run == 0) {
          key++;
        }
        kv[i] = key;
      }
      In0 keys{kv.data()};
#endif
      std::vector<T> vals(n);
      for (u64 i = 0; i < n; i++) {
#if EMU_CASE == 3
        vals[i] = (u64)(u32)(rng() % 5 * 2 + 1) << 32 | (u32)(rng() % 1000);
#else
        vals[i] = (T)(rng() % 1000);
#endif
      }
      const int pad = 5;
      std::vector<T> out(n + 2 * pad, (T)0x5eed);
      const u32 grid = (u32)((n + chunk - 1) / chunk);
      std::vector<u32> status(grid, 0);
      std::vector<SegPair> aggregates(grid), prefixes(grid);
      launch(grid, [&](Kernel k) {
        k(keys, In1{vals.data()}, out.data() + pad, n, status.data(), aggregates.data(), prefixes.data(), &counter, grid);
      });
      if (counter != 0) { printf("counter left at %u\n", counter); return 1; }
      T r = ScanOp::identity();
      for (u64 i = 0; i < n; i++) {
        const bool head = i == 0 || kv[i] != kv[i - 1];
        r = head ? vals[i] : ScanOp::apply(r, vals[i]);
        if (out[pad + i] != r) {
          printf("MISMATCH case %d n %llu run %llu at %llu: got %llx want %llx\n", EMU_CASE, (unsigned long long)n,
                 (unsigned long long)run, (unsigned long long)i, (unsigned long long)out[pad + i], (unsigned long long)r);
          return 1;
        }
      }
      for (int j = 0; j < pad; j++)
        if (out[j] != (T)0x5eed || out[pad + n + j] != (T)0x5eed) { printf("WRITE OUTSIDE case %d n %llu\n", EMU_CASE, (unsigned long long)n); return 1; }
      for (u32 c = 1; c < grid; c++) {
        bool any = false;
        for (u64 i = c * chunk; i < std::min(n, (c + 1) * chunk); i++) any |= kv[i] != kv[i - 1];
        headless += !any;
      }
      checked++;
    }
  printf("ok: case %d, %ld scans (%ld chunks without a head), %d x %d tiles, chunks of %d, %d resident blocks\n", EMU_CASE,
         checked, headless, CUPRIM_BLOCK, CUPRIM_ITEMS, SBK_CHUNK, SLOTS);
  return 0;
}
