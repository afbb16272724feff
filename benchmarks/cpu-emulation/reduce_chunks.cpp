// Build and run from this folder (ThreadSanitizer finds shared-memory races
// and unordered look-back accesses):
//   python3 host_asm.py ../../kernels/block/lookback.cuh > /tmp/lookback_host.cuh
//   python3 host_asm.py ../../kernels/bykey/unique_chunks.cu > /tmp/unique_chunks_host.cu
//   for c in 1 2 3 4 5 6 7 9 10 11 12; do g++ -std=c++17 -O1 -g -fsanitize=thread -DEMU_QUICK -I/tmp -DEMU_CASE=$c
//     -o /tmp/reduce_chunks reduce_chunks.cpp -lpthread && /tmp/reduce_chunks || break; done
// (cases 9 to 11: unique_chunks.cu, its heads and overflow staging; 12 run
// lengths with 64-bit positions)
// and without -fsanitize=thread -DEMU_QUICK for every shape (minutes a case;
// EMU_CASE=8, the H100 shape, the slowest).
//
// CPU emulation of kernels/bykey/reduce_chunks.cu (reduce_by_key and run
// lengths by chunks) with the real look-back (kernels/block/lookback.cuh,
// its inline PTX rewritten by host_asm.py into the atomic loads and stores
// below). Several blocks run at once, each on a slot of its own (the kernel
// is instantiated once per slot, so each slot has its own __shared__
// arrays), each of their threads a std::thread; __syncthreads / __syncwarp
// are pthread barriers, shuffles and ballots go through a per-warp exchange
// between two warp barriers. Blocks take their chunks from the kernel's
// ticket, so a look-back meets aggregates, prefixes and predecessors still
// streaming, as on the GPU.
//
// Checked against a sequential reference on random inputs: runs of 1, 2,
// 64, 10^5, one run of everything, chunks that overflow their records
// (dense runs: heads only counted past the overflow, the rest read again
// and written through the staged records; chunks dense then one long run,
// so the value after the last head is folded from an earlier tile), runs
// spanning several chunks, every
// output slot and nothing past the runs written. Reduce uses the monoid of
// affine maps x -> a x + b (mod 2^32) under composition, associative and
// not commutative, so any change of order shows exactly; float sums are
// checked bit for bit from one run to the next (deterministic look-back)
// and exactly where every partial sum is an integer.
#include <pthread.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>
typedef uint64_t u64;
typedef uint32_t u32;
typedef uint16_t u16;
typedef uint8_t u8;
#define __device__
#define __forceinline__ inline
#define __restrict__
#define __launch_bounds__(a, b)
#define CUPRIM_INPUT const

// ---- the GPU's threads ----
struct Dim {
    unsigned x;
};
static thread_local Dim threadIdx, blockIdx;
struct Slot {
    pthread_barrier_t block, warp[32];
    u64 xchg[32][32];
};
static thread_local Slot* slot_;
static void __syncthreads() { pthread_barrier_wait(&slot_->block); }
static void __syncwarp() { pthread_barrier_wait(&slot_->warp[threadIdx.x / 32]); }
// Every lane posts a word, reads another's.
static u64 xchg(u64 mine, int from) {
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    slot_->xchg[w][lane] = mine;
    __syncwarp();
    const u64 got = slot_->xchg[w][from];
    __syncwarp();
    return got;
}
static unsigned __shfl_up_sync(unsigned, unsigned v, unsigned d) {
    const int lane = threadIdx.x % 32;
    return (unsigned)xchg(v, lane >= (int)d ? lane - (int)d : lane);
}
static unsigned __shfl_down_sync(unsigned, unsigned v, unsigned d) {
    const int lane = threadIdx.x % 32;
    return (unsigned)xchg(v, lane + (int)d < 32 ? lane + (int)d : lane);
}
static unsigned __ballot_sync(unsigned, int pred) {
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    slot_->xchg[w][lane] = pred != 0;
    __syncwarp();
    unsigned b = 0;
    for (int l = 0; l < 32; l++) b |= (unsigned)slot_->xchg[w][l] << l;
    __syncwarp();
    return b;
}
static int __popc(unsigned x) { return __builtin_popcount(x); }
static int __clz(unsigned x) { return x ? __builtin_clz(x) : 32; }
static int __ffs(unsigned x) { return __builtin_ffs((int)x); }
static void __nanosleep(unsigned) { std::this_thread::yield(); }
static unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }

// ---- the look-back's memory operations (host_asm.py's calls) ----
static void emu_st_relaxed_gpu_global_u64(u64* p, u64 v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static void emu_ld_relaxed_gpu_global_u64(u64& v, u64* p) { v = __atomic_load_n(p, __ATOMIC_RELAXED); }
// A 16-byte word kept whole (the hardware's vector access): a striped lock.
static std::mutex wide_locks[64];
static std::mutex& wide_lock(const void* p) { return wide_locks[((uintptr_t)p >> 4) % 64]; }
static void emu_st_relaxed_gpu_global_v2_u64(u64* p, u64 a, u64 b) {
    std::lock_guard<std::mutex> g(wide_lock(p));
    p[0] = a;
    p[1] = b;
}
static void emu_ld_relaxed_gpu_global_v2_u64(u64& a, u64& b, u64* p) {
    std::lock_guard<std::mutex> g(wide_lock(p));
    a = p[0];
    b = p[1];
}
static void emu_st_release_gpu_global_u32(u32* p, u32 v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static void emu_ld_acquire_gpu_global_u32(u32& v, u32* p) { v = __atomic_load_n(p, __ATOMIC_ACQUIRE); }

// ---- prelude pieces the kernel and the look-back use ----
template <typename V> union cuprim_words {
    static constexpr int W = (sizeof(V) + 3) / 4;
    V v;
    unsigned int w[W];
    cuprim_words() {}
};
template <typename V> static void cuprim_store_words(V* p, const V& value) {
    cuprim_words<V> r;
    for (int k = 0; k < cuprim_words<V>::W; k++) r.w[k] = 0;
    r.v = value;
    for (int k = 0; k < cuprim_words<V>::W; k++) ((unsigned int*)p)[k] = r.w[k];
}
template <typename V> static V cuprim_load_cg(const V* p) {
    cuprim_words<V> r;
    for (int k = 0; k < cuprim_words<V>::W; k++) r.w[k] = ((const unsigned int*)p)[k];
    return r.v;
}
template <typename V, typename Shfl> static V cuprim_shfl_words(const V& v, Shfl shfl) {
    cuprim_words<V> p;
    p.w[cuprim_words<V>::W - 1] = 0;
    p.v = v;
    for (int k = 0; k < cuprim_words<V>::W; k++) p.w[k] = shfl(p.w[k]);
    return p.v;
}
template <typename V> static V cuprim_shfl_down(const V& v, unsigned delta) {
    return cuprim_shfl_words(v, [delta](unsigned w) { return __shfl_down_sync(0xffffffffu, w, delta); });
}
template <typename V> static V cuprim_shfl_up(const V& v, unsigned delta) {
    return cuprim_shfl_words(v, [delta](unsigned w) { return __shfl_up_sync(0xffffffffu, w, delta); });
}
template <typename T> static T cuprim_canonical_nan(T a) {
    if constexpr (std::is_floating_point<T>::value) {
        return a != a ? (T)NAN : a;
    } else {
        return a;
    }
}
template <typename T, int N> struct cuprim_arr {
    T v[N];
};
constexpr u32 CUPRIM_X_ANY = 0xffffffffu;
// A buffer input (block/expr.cuh's cuprim_x_buf).
template <typename T> struct Buf {
    const T* p;
    typedef T item;
    static constexpr int WIDEST = sizeof(T);
    static constexpr bool IS_BUF = true;
    T load(u64 i) const { return p[i]; }
    template <int N> cuprim_arr<T, N> load_n(u64 first) const {
        if (((uintptr_t)(p + first)) % (N * sizeof(T)) != 0) {
            printf("MISALIGNED VECTOR LOAD\n");
            exit(1);
        }
        cuprim_arr<T, N> r;
        for (int k = 0; k < N; k++) r.v[k] = p[first + k];
        return r;
    }
    template <int N> u32 misalign() const { return (u32)(((uintptr_t)p / sizeof(T)) % N); }
};
template <typename In> constexpr int cuprim_x_items() { return In::WIDEST ? 16 / In::WIDEST : 4; }

template <typename T> static T __shfl_xor_sync(unsigned, T v, int o) {
    return (T)xchg((u64)v, (int)(threadIdx.x % 32) ^ o);
}
static Dim gridDim;
#include "../../kernels/block/backoff.cuh"

template <typename V> static V cuprim_warp_inclusive_sum(V x) {
    const int lane = threadIdx.x & 31;
    for (int o = 1; o < 32; o <<= 1) {
        const V y = (V)xchg((u64)x, lane >= o ? lane - o : lane);
        if (lane >= o) x += y;
    }
    return x;
}
template <typename V> static V cuprim_shfl(const V& v, int src) {
    static_assert(sizeof(V) <= 8, "one exchanged word");
    u64 w = 0;
    memcpy(&w, &v, sizeof(V));
    w = xchg(w, src);
    V r;
    memcpy(&r, &w, sizeof(V));
    return r;
}

#if EMU_CASE >= 9 && EMU_CASE <= 11
// ---- unique by chunks (kernels/bykey/unique_chunks.cu): its own look-back
// on one word per block, block b's chunk b (all resident: blocks start in
// order), overflowing heads staged a tile at a time ----
#define CUPRIM_MIN_BLOCKS 1
#if EMU_CASE == 9  // u32 keys
#define CUPRIM_BLOCK 64
#define UC_CAP 600
typedef u32 K;
#elif EMU_CASE == 10  // u8 keys by a one-warp block
#define CUPRIM_BLOCK 32
#define UC_CAP 1100
typedef u8 K;
#elif EMU_CASE == 11  // unique_count: no heads kept
#define CUPRIM_BLOCK 64
#define UC_CAP 0
typedef u32 K;
#else
#error "EMU_CASE 1 to 11"
#endif
typedef Buf<K> In0;
struct KeyEq {
    static bool differ(K a, K b) { return a != b; }
};
#define __shared__ static
#define extern static_assert(sizeof(
#define __global__ ) > 0); template <int SLOT>
#include "unique_chunks_host.cu"
#undef extern
#undef __global__

constexpr int SLOTS = 3;
typedef void (*Kernel)(In0, u64, u64, K*, u64*, u64*);
static const Kernel kernels[SLOTS] = {cuprim_unique_chunks<0>, cuprim_unique_chunks<1>, cuprim_unique_chunks<2>};

static void launch(const K* keys, u64 n, u64 chunk, K* out, u64* count) {
    const u64 blocks = (n + chunk - 1) / chunk;
    std::vector<u64> state(blocks, 0);
    gridDim.x = (unsigned)blocks;
    std::atomic<u64> next{0};
    std::vector<std::thread> runners;
    for (int s = 0; s < SLOTS; s++) {
        runners.emplace_back([&, s] {
            Slot slot;
            pthread_barrier_init(&slot.block, nullptr, CUPRIM_BLOCK);
            for (int w = 0; w < CUPRIM_BLOCK / 32; w++) pthread_barrier_init(&slot.warp[w], nullptr, 32);
            u64 b;
            while ((b = next.fetch_add(1)) < blocks) {
                std::vector<std::thread> ts;
                for (unsigned t = 0; t < CUPRIM_BLOCK; t++)
                    ts.emplace_back([&, t] {
                        threadIdx.x = t;
                        blockIdx.x = (unsigned)b;
                        slot_ = &slot;
                        kernels[s](In0{keys}, n, chunk, out, count, state.data());
                    });
                for (auto& t : ts) t.join();
            }
            pthread_barrier_destroy(&slot.block);
            for (int w = 0; w < CUPRIM_BLOCK / 32; w++) pthread_barrier_destroy(&slot.warp[w]);
        });
    }
    for (auto& r : runners) r.join();
}

int main() {
    std::mt19937_64 rng(23);
    long checked = 0, overflowed = 0;
    struct Shape {
        u64 n, run, tiles;  // run: mean length, 0 one run of everything
    };
    std::vector<Shape> shapes = {
        {1, 1, 1},          {2, 1, 1},           {UC_TILE - 1, 2, 1}, {UC_TILE, 1, 1},     {UC_TILE + 1, 64, 1},
        {5 * UC_TILE + 3, 1, 2}, {5 * UC_TILE + 3, 2, 3}, {7 * UC_TILE, 1, 4}, {9 * UC_TILE + 17, 64, 1},
        {9 * UC_TILE + 17, 0, 2}, {9 * UC_TILE + 17, 1, 3},
    };
    for (const Shape& sh : shapes) {
        const u64 n = sh.n, chunk = sh.tiles * UC_TILE;
        std::vector<K> keys(n + 16);
        K k = 0;
        std::geometric_distribution<int> len(sh.run ? 1.0 / (double)sh.run : 1.0);
        u64 left = 0;
        for (u64 i = 0; i < n; i++) {
            if (sh.run != 0 && left == 0) {
                k = (K)(k + 1 + rng() % 3);
                left = 1 + (u64)len(rng);
            }
            if (left) left--;
            keys[i] = k;
        }
        std::vector<K> want;
        bool over = false;
        for (u64 c0 = 0; c0 < n; c0 += chunk) {
            u64 h = 0;
            for (u64 i = c0; i < n && i < c0 + chunk; i++)
                if (i == 0 || keys[i] != keys[i - 1]) want.push_back(keys[i]), h++;
            over = over || h > UC_CAP;
        }
        overflowed += over && UC_CAP > 0;
        const K poison = (K)0x5a;
        std::vector<K> got(n + 8, poison);
        u64 count = ~0ull;
        launch(keys.data(), n, chunk, got.data(), &count);
        if (count != want.size()) {
            printf("COUNT case %d n %llu: %llu, want %zu\n", EMU_CASE, (unsigned long long)n, (unsigned long long)count, want.size());
            return 1;
        }
        for (u64 j = 0; j < n + 8; j++) {
            const K w = UC_CAP > 0 && j < want.size() ? want[j] : poison;
            if (got[j] != w) {
                printf("MISMATCH case %d n %llu run %llu chunk %llu at %llu of %zu\n", EMU_CASE, (unsigned long long)n,
                       (unsigned long long)sh.run, (unsigned long long)chunk, (unsigned long long)j, want.size());
                return 1;
            }
        }
        checked++;
    }
    printf("ok: case %d (unique), %ld inputs (%ld with chunks overflowing %d heads), %d x %d\n", EMU_CASE, checked, overflowed,
           UC_CAP, CUPRIM_BLOCK, UC_ITEMS);
    return 0;
}
#else
// ---- the cases ----
// An affine map x -> a x + b (mod 2^32); apply(f, g) = g after f.
struct Aff {
    u32 a, b;
    bool operator==(const Aff& o) const { return a == o.a && b == o.b; }
};
struct AffOp {
    static Aff apply(Aff f, Aff g) { return Aff{g.a * f.a, g.a * f.b + g.b}; }
};
struct AddOp {
    template <typename T> static T apply(T a, T b) { return a + b; }
};
#define RC_LENGTHS 0
#define CUPRIM_DETERMINISTIC 1
#define CUPRIM_LOOKBACK_WINDOWS 2
#define CAP_SHIFT 0
#if EMU_CASE == 1  // affine maps (12-byte pairs: separate look-back arrays), deterministic
#define CUPRIM_BLOCK 64
#define RC_ITEMS 4
#define RC_CAP 300
typedef u32 K;
typedef Aff V;
typedef Aff O;
typedef u32 C;
typedef AffOp ReduceOp;
#elif EMU_CASE == 2  // the same, fast look-back (a tree per window)
#define CUPRIM_BLOCK 64
#define RC_ITEMS 4
#define RC_CAP 300
#undef CUPRIM_DETERMINISTIC
#define CUPRIM_DETERMINISTIC 0
typedef u32 K;
typedef Aff V;
typedef Aff O;
typedef u32 C;
typedef AffOp ReduceOp;
#elif EMU_CASE == 3  // float sums (8-byte pairs: packed 16-byte words), deterministic
#define CUPRIM_BLOCK 64
#define RC_ITEMS 8
#define RC_CAP 700
typedef u32 K;
typedef float V;
typedef float O;
typedef u32 C;
typedef AddOp ReduceOp;
#elif EMU_CASE == 4  // run lengths, u32 counts written as u64
#define CUPRIM_BLOCK 64
#define RC_ITEMS 8
#define RC_CAP 600
#undef RC_LENGTHS
#define RC_LENGTHS 1
typedef u32 K;
typedef u32 V;
typedef u64 O;
typedef u32 C;
#elif EMU_CASE == 5  // run lengths of u8 keys by a one-warp block
#define CUPRIM_BLOCK 32
#define RC_ITEMS 16
#define RC_CAP 600
#undef RC_LENGTHS
#define RC_LENGTHS 1
typedef u8 K;
typedef u32 V;
typedef u32 O;
typedef u32 C;
#elif EMU_CASE == 6  // u64 keys, u64 counts, double sums (16-byte pairs, separate arrays)
#define CUPRIM_BLOCK 64
#define RC_ITEMS 2
#define RC_CAP 200
typedef u64 K;
typedef double V;
typedef double O;
typedef u64 C;
typedef AddOp ReduceOp;
#elif EMU_CASE == 7  // affine maps, u64 counts, fast look-back
#define CUPRIM_BLOCK 64
#define RC_ITEMS 4
#define RC_CAP 256
#undef CUPRIM_DETERMINISTIC
#define CUPRIM_DETERMINISTIC 0
typedef u32 K;
typedef Aff V;
typedef Aff O;
typedef u64 C;
typedef AffOp ReduceOp;
#elif EMU_CASE == 8  // the H100 shape of u32 keys and f32 sums (src/algo/bykey/chunks.rs)
#define CUPRIM_BLOCK 256
#define RC_ITEMS 8
#define RC_CAP 5991
#undef CUPRIM_LOOKBACK_WINDOWS
#define CUPRIM_LOOKBACK_WINDOWS 4
typedef u32 K;
typedef float V;
typedef float O;
typedef u32 C;
typedef AddOp ReduceOp;
#elif EMU_CASE == 12  // run lengths of u64 keys, u64 counts and positions (16-byte pairs)
#define CUPRIM_BLOCK 64
#define RC_ITEMS 4
#define RC_CAP 300
#undef RC_LENGTHS
#define RC_LENGTHS 1
typedef u64 K;
typedef u64 V;
typedef u64 O;
typedef u64 C;
#else
#error "EMU_CASE 1 to 12"
#endif
#define CUPRIM_MIN_BLOCKS 1
#include "lookback_host.cuh"
typedef Buf<K> In0;
typedef Buf<V> In1;
struct KeyEq {
    static bool differ(K a, K b) { return a != b; }
};

// One instantiation per slot: each has its own __shared__ (static) arrays.
#define __shared__ static
#define extern static_assert(sizeof(
#define __global__ ) > 0); template <int SLOT>
#include "../../kernels/bykey/reduce_chunks.cu"
#undef extern
#undef __global__

constexpr int SLOTS = 3;
typedef void (*Kernel)(In0, In1, u64, u64, K*, O*, u64*, u32*, RcPair*, RcPair*, u32*, u32);
static const Kernel kernels[SLOTS] = {cuprim_reduce_chunks<0>, cuprim_reduce_chunks<1>, cuprim_reduce_chunks<2>};

// The look-back state of `chunks` chunks, laid out as src/algo/lookback.rs does.
struct State {
    std::vector<u64> status;  // u64 for alignment
    std::vector<RcPair> aggregates, prefixes;
    explicit State(u64 chunks) {
        const int layout = lookback_layout<RcPair>();
        const u64 words = layout == LOOKBACK_PACKED64 ? 1 : layout == LOOKBACK_PACKED128 ? 2 : 1;
        status.assign(words * chunks + 2, 0);
        aggregates.resize(chunks);
        prefixes.resize(chunks);
    }
};

// Runs the kernel over n elements in chunks of `chunk`, SLOTS blocks at a time.
static void launch(const K* keys, const V* values, u64 n, u64 chunk, K* keys_out, O* values_out, u64* count) {
    const u64 chunks = (n + chunk - 1) / chunk;
    State st(chunks);
    static u32 ticket = 0;
    std::atomic<u64> next{0};
    std::vector<std::thread> runners;
    for (int s = 0; s < SLOTS; s++) {
        runners.emplace_back([&, s] {
            Slot slot;
            pthread_barrier_init(&slot.block, nullptr, CUPRIM_BLOCK);
            for (int w = 0; w < CUPRIM_BLOCK / 32; w++) pthread_barrier_init(&slot.warp[w], nullptr, 32);
            while (next.fetch_add(1) < chunks) {
                std::vector<std::thread> ts;
                for (unsigned t = 0; t < CUPRIM_BLOCK; t++)
                    ts.emplace_back([&, t] {
                        threadIdx.x = t;
                        slot_ = &slot;
                        kernels[s](In0{keys}, In1{values}, n, chunk, keys_out, values_out, count,
                                   (u32*)st.status.data(), st.aggregates.data(), st.prefixes.data(), &ticket,
                                   (u32)chunks);
                    });
                for (auto& t : ts) t.join();
            }
            pthread_barrier_destroy(&slot.block);
            for (int w = 0; w < CUPRIM_BLOCK / 32; w++) pthread_barrier_destroy(&slot.warp[w]);
        });
    }
    for (auto& r : runners) r.join();
    if (ticket != 0) {
        printf("TICKET NOT RESET\n");
        exit(1);
    }
}

static bool same(const Aff& a, const Aff& b) { return a == b; }
template <typename T> static bool same(const T& a, const T& b) { return memcmp(&a, &b, sizeof(T)) == 0; }

int main() {
    std::mt19937_64 rng(22);
    constexpr u64 TILE = (u64)CUPRIM_BLOCK * RC_ITEMS;
    long checked = 0, overflowed = 0, spanning = 0;
    // (n, mean run length: 0 one run of everything, MIXED every key distinct
    // in the first 60% of each chunk and one run from there into the next
    // chunk's: chunks that overflow, then count heads only, their last head
    // tiles before their end; chunk in tiles)
    constexpr u64 MIXED = ~0ull;
    struct Shape {
        u64 n, run, tiles;
    };
    std::vector<Shape> shapes = {
        {1, 1, 1},           {2, 1, 1},           {TILE - 1, 2, 1},    {TILE, 1, 1},         {TILE + 1, 64, 1},
        {5 * TILE + 3, 1, 2}, {5 * TILE + 3, 2, 2}, {7 * TILE, 64, 2},   {9 * TILE + 17, 64, 1}, {9 * TILE + 17, 0, 1},
        {100000, 100000, 1}, {100003, 3000, 2},   {60000, 2, 3},       {60000, 5, 4},        {20 * TILE, 64, 3},
        {20 * TILE + 1, 0, 2}, {12345, 7, 1},     {40000, 1000, 1},    {30000, 1, 4},
        {30000, MIXED, 3},   {30000, MIXED, 5},
    };
#ifdef EMU_QUICK
    // Under ThreadSanitizer: the shapes of at most 12 tiles.
    std::vector<Shape> quick;
    for (const Shape& sh : shapes)
        if (sh.n <= 12 * TILE) quick.push_back(sh);
    quick.push_back({12 * TILE + 5, 0, 1});
    quick.push_back({12 * TILE + 5, 1, 3});
    quick.push_back({12 * TILE + 5, MIXED, 3});
    quick.push_back({12 * TILE + 5, MIXED, 4});
    shapes = quick;
#endif
    for (const Shape& sh : shapes) {
        const u64 n = sh.n, chunk = sh.tiles * TILE;
        for (int pass = 0; pass < 2; pass++) {
            // Keys: runs of geometric length with mean sh.run (1: every key differs from the last).
            std::vector<K> keys(n + 16);
            std::vector<V> values(n + 16);
            K k = 0;
            std::geometric_distribution<int> len(sh.run ? 1.0 / (double)sh.run : 1.0);
            u64 left = 0;
            for (u64 i = 0; i < n; i++) {
                if (sh.run == MIXED) {
                    if (i % chunk < chunk * 6 / 10) k = (K)(k + 1 + rng() % 3);
                } else if (sh.run != 0 && left == 0) {
                    k = (K)(k + 1 + rng() % 3);
                    left = 1 + (u64)len(rng);
                }
                if (left) left--;
                keys[i] = k;
#if RC_LENGTHS
                values[i] = 1;
#elif EMU_CASE == 1 || EMU_CASE == 2 || EMU_CASE == 7
                values[i] = Aff{(u32)(rng() | 1), (u32)rng()};
#else
                // integers below 2^6 (exact sums, every partial below 2^24) in the first pass, any floats in the second
                values[i] = pass == 0 ? (V)((int)(rng() % 128) - 64) : (V)std::ldexp((double)(rng() % 100000) - 50000, -(int)(rng() % 20));
#endif
            }
            // The reference: runs folded left to right.
            std::vector<K> want_k;
            std::vector<O> want_v;
            std::vector<u64> heads;
            for (u64 i = 0; i < n; i++) {
                if (i == 0 || keys[i] != keys[i - 1]) {
                    heads.push_back(i);
                    want_k.push_back(keys[i]);
#if RC_LENGTHS
                    want_v.push_back(1);
#else
                    want_v.push_back((O)values[i]);
#endif
                } else {
#if RC_LENGTHS
                    want_v.back() += 1;
#else
                    want_v.back() = (O)ReduceOp::apply((V)want_v.back(), values[i]);
#endif
                }
            }
            const u64 runs = want_k.size();
            long longest = 0;
            for (u64 r = 0; r < runs; r++) {
                const u64 end = r + 1 < runs ? heads[r + 1] : n;
                longest = std::max<long>(longest, (long)(end - heads[r]));
            }
            spanning += (u64)longest > 2 * chunk;
            // Chunks keep at most RC_CAP runs: more in a chunk means the rest is read again.
            bool over = false;
            for (u64 c0 = 0; c0 < n; c0 += chunk) {
                u64 h = 0;
                for (u64 r = 0; r < runs; r++) h += heads[r] >= c0 && heads[r] < c0 + chunk;
                over = over || h > RC_CAP;
            }
            overflowed += over;
            const K kpoison = (K)0x5a;
            O vpoison;
            memset(&vpoison, 0x77, sizeof vpoison);
            std::vector<K> got_k(n + 8, kpoison);
            std::vector<O> got_v(n + 8, vpoison);
            u64 count = ~0ull;
            launch(keys.data(), values.data(), n, chunk, got_k.data(), got_v.data(), &count);
            bool ok = count == runs;
            for (u64 r = 0; ok && r < runs; r++) {
                const bool exact = RC_LENGTHS || EMU_CASE == 1 || EMU_CASE == 2 || EMU_CASE == 7 || pass == 0;
                bool good = got_k[r] == want_k[r];
                if (exact) {
                    good = good && same(got_v[r], want_v[r]);
                } else {
#if !RC_LENGTHS && EMU_CASE != 1 && EMU_CASE != 2 && EMU_CASE != 7
                    good = good && std::fabs((double)got_v[r] - (double)want_v[r]) <= 1e-3 * (1 + std::fabs((double)want_v[r]));
#endif
                }
                if (!good) {
                    printf("MISMATCH case %d n %llu run %llu chunk %llu pass %d at run %llu of %llu (head %llu)\n", EMU_CASE,
                           (unsigned long long)n, (unsigned long long)sh.run, (unsigned long long)chunk, pass,
                           (unsigned long long)r, (unsigned long long)runs, (unsigned long long)heads[r]);
                    return 1;
                }
            }
            if (!ok) {
                printf("COUNT case %d n %llu: %llu, want %llu\n", EMU_CASE, (unsigned long long)n, (unsigned long long)count,
                       (unsigned long long)runs);
                return 1;
            }
            for (u64 j = runs; j < n + 8; j++) {
                if (got_k[j] != kpoison || !same(got_v[j], vpoison)) {
                    printf("WRITE PAST THE RUNS case %d n %llu at %llu\n", EMU_CASE, (unsigned long long)n, (unsigned long long)j);
                    return 1;
                }
            }
#if !RC_LENGTHS
            // The same input again: the same bits (the blocks' timing differs).
            std::vector<K> again_k(n + 8, kpoison);
            std::vector<O> again_v(n + 8, vpoison);
            u64 again = 0;
            launch(keys.data(), values.data(), n, chunk, again_k.data(), again_v.data(), &again);
            if (CUPRIM_DETERMINISTIC || EMU_CASE == 2 || EMU_CASE == 7) {
                if (again != count || memcmp(again_v.data(), got_v.data(), sizeof(O) * runs) != 0) {
                    printf("NOT DETERMINISTIC case %d n %llu pass %d\n", EMU_CASE, (unsigned long long)n, pass);
                    return 1;
                }
            }
#endif
            checked++;
        }
    }
    printf("ok: case %d, %ld inputs (%ld with chunks overflowing %d records, %ld with a run over two chunks long), %d x %d, %d-byte pairs\n",
           EMU_CASE, checked, overflowed, RC_CAP, spanning, CUPRIM_BLOCK, RC_ITEMS, (int)sizeof(RcPair));
    return 0;
}
#endif
