// Prototype: a lean single-pass unique (u32 keys) beside CUB's DeviceSelect::Unique.
#include <cub/cub.cuh>
#include <cstdio>
#include <vector>
#include <algorithm>
typedef unsigned long long u64; typedef unsigned int u32;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

template <int BLOCK, int VECS, int MINB>
__global__ void __launch_bounds__(BLOCK, MINB) lean_unique(const u32* __restrict__ in, u64 n, u32* __restrict__ out, u64* count_out,
                                                   u64* state, u32* ticket, u32 tiles) {
    constexpr int WARPS = BLOCK / 32;
    constexpr int ITEMS = VECS * 4;
    constexpr int WTILE = 32 * ITEMS;   // elements per warp
    constexpr int TILE = BLOCK * ITEMS;
    __shared__ u32 s_tile;
    __shared__ u32 s_warp[WARPS];
    __shared__ u32 s_prefix;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) s_tile = atomicAdd(ticket, 1);
    __syncthreads();
    const u32 tile = s_tile;
    const u64 base = (u64)tile * TILE + (u64)warp * WTILE;
    uint4 x[VECS];
    const bool full = base + WTILE <= n;
    if (full) {
#pragma unroll
        for (int j = 0; j < VECS; j++) x[j] = __ldcs((const uint4*)(in + base) + j * 32 + lane);
    } else {
#pragma unroll
        for (int j = 0; j < VECS; j++) {
            const u64 e = base + (u64)(j * 32 + lane) * 4;
            x[j].x = e < n ? in[e] : 0; x[j].y = e + 1 < n ? in[e + 1] : 0;
            x[j].z = e + 2 < n ? in[e + 2] : 0; x[j].w = e + 3 < n ? in[e + 3] : 0;
        }
    }
    const u32 before = (base > 0 && base <= n) ? in[base - 1] : 0;
    // head flags: 4 bits per vector
    u32 flags[VECS];
    u32 cnt = 0;
#pragma unroll
    for (int j = 0; j < VECS; j++) {
        u32 prev = __shfl_up_sync(0xffffffffu, x[j].w, 1);
        const u32 last_prev_vec = __shfl_sync(0xffffffffu, j > 0 ? x[j > 0 ? j - 1 : 0].w : 0, 31);
        if (lane == 0) prev = j == 0 ? before : last_prev_vec;
        const u64 e = base + (u64)(j * 32 + lane) * 4;
        u32 f = 0;
        if (e < n) f |= (e == 0 || x[j].x != prev) ? 1u : 0u;
        if (e + 1 < n) f |= (x[j].y != x[j].x) ? 2u : 0u;
        if (e + 2 < n) f |= (x[j].z != x[j].y) ? 4u : 0u;
        if (e + 3 < n) f |= (x[j].w != x[j].z) ? 8u : 0u;
        flags[j] = f;
        cnt += __popc(f);
    }
    const u32 wcount = __reduce_add_sync(0xffffffffu, cnt);
    if (lane == 0) s_warp[warp] = wcount;
    __syncthreads();
    if (warp == 0) {
        u32 v = lane < WARPS ? s_warp[lane] : 0;
        // exclusive scan of warp counts
        u32 incl = v;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) { u32 t = __shfl_up_sync(0xffffffffu, incl, d); if (lane >= d) incl += t; }
        const u32 total = __shfl_sync(0xffffffffu, incl, 31);
        if (lane < WARPS) s_warp[lane] = incl - v;
        // publish aggregate, look back
        u32 prefix = 0;
        if (tile == 0) {
            if (lane == 0) asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state), "l"((2ull << 32) | total) : "memory");
        } else {
            if (lane == 0) asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state + tile), "l"((1ull << 32) | total) : "memory");
            int look = (int)tile - 1;
            while (true) {
                const int t = look - lane;
                u64 w = 2ull << 32;  // past tile 0: a zero prefix
                if (t >= 0) {
                    do { asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(state + t) : "memory"); } while ((w >> 32) == 0);
                }
                const u32 st = (u32)(w >> 32);
                const unsigned pmask = __ballot_sync(0xffffffffu, st == 2);
                const int first_p = pmask ? __ffs(pmask) - 1 : 32;
                u32 val = lane <= first_p ? (u32)w : 0;
                if (t < 0) val = 0;
                val = __reduce_add_sync(0xffffffffu, val);
                prefix += val;
                if (pmask) break;
                look -= 32;
            }
            if (lane == 0) asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state + tile), "l"((2ull << 32) | (prefix + total)) : "memory");
        }
        if (lane == 0) s_prefix = prefix;
        if (tile == tiles - 1 && lane == 0) *count_out = prefix + total;
    }
    __syncthreads();
    u32 pos = s_prefix + s_warp[warp];
    // write heads in element order: vector j, lane, item
#pragma unroll
    for (int j = 0; j < VECS; j++) {
        const u32 c = __popc(flags[j]);
        u32 incl = c;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) { u32 t = __shfl_up_sync(0xffffffffu, incl, d); if (lane >= d) incl += t; }
        u32 p = pos + incl - c;
        if (flags[j]) {
            if (flags[j] & 1) out[p++] = x[j].x;
            if (flags[j] & 2) out[p++] = x[j].y;
            if (flags[j] & 4) out[p++] = x[j].z;
            if (flags[j] & 8) out[p++] = x[j].w;
        }
        pos += __shfl_sync(0xffffffffu, incl, 31);
    }
}

template <class F> float med(F f);

// Chunked unique: each block owns a contiguous chunk, streams it once, keeps
// its heads in shared memory (overflow to a global scratch at chunk-relative
// places), then one look-back per block and a copy of its heads.
template <int BLOCK, int VECS, int CAP>
__global__ void __launch_bounds__(BLOCK, 1024 / BLOCK) chunk_unique(const u32* __restrict__ in, u64 n, u64 chunk, u32* __restrict__ out,
                                                   u32* __restrict__ spill, u64* count_out, u64* state) {
    constexpr int WARPS = BLOCK / 32;
    constexpr int ITEMS = VECS * 4;
    constexpr int WTILE = 32 * ITEMS;
    constexpr int TILE = BLOCK * ITEMS;
    extern __shared__ u32 buf[];  // CAP heads
    __shared__ u32 s_wc[2][WARPS];
    __shared__ u64 s_prefix;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u64 c0 = (u64)blockIdx.x * chunk;
    const u64 c1 = c0 + chunk < n ? c0 + chunk : n;
    u64 running = 0;
    int b = 0;
    uint4 nx[VECS];
    auto load = [&](u64 tb, uint4 (&x)[VECS]) {
        const u64 base = tb + (u64)warp * WTILE;
        if (base + WTILE <= c1) {
#pragma unroll
            for (int j = 0; j < VECS; j++) x[j] = __ldcs((const uint4*)(in + base) + j * 32 + lane);
        } else {
#pragma unroll
            for (int j = 0; j < VECS; j++) {
                const u64 e = base + (u64)(j * 32 + lane) * 4;
                x[j].x = e < c1 ? in[e] : 0; x[j].y = e + 1 < c1 ? in[e + 1] : 0;
                x[j].z = e + 2 < c1 ? in[e + 2] : 0; x[j].w = e + 3 < c1 ? in[e + 3] : 0;
            }
        }
    };
    if (c0 < c1) load(c0, nx);
    for (u64 tb = c0; tb < c1; tb += TILE) {
        uint4 x[VECS];
#pragma unroll
        for (int j = 0; j < VECS; j++) x[j] = nx[j];
        if (tb + TILE < c1) load(tb + TILE, nx);
        const u64 base = tb + (u64)warp * WTILE;
        const u32 before = (base > 0 && base <= n) ? in[base - 1] : 0;
        u32 flags[VECS];
        u32 cnt = 0;
#pragma unroll
        for (int j = 0; j < VECS; j++) {
            u32 prev = __shfl_up_sync(0xffffffffu, x[j].w, 1);
            const u32 lp = __shfl_sync(0xffffffffu, x[j > 0 ? j - 1 : 0].w, 31);
            if (lane == 0) prev = j == 0 ? before : lp;
            const u64 e = base + (u64)(j * 32 + lane) * 4;
            u32 f = 0;
            if (e < c1) f |= (e == 0 || x[j].x != prev) ? 1u : 0u;
            if (e + 1 < c1) f |= (x[j].y != x[j].x) ? 2u : 0u;
            if (e + 2 < c1) f |= (x[j].z != x[j].y) ? 4u : 0u;
            if (e + 3 < c1) f |= (x[j].w != x[j].z) ? 8u : 0u;
            flags[j] = f;
            cnt += __popc(f);
        }
        // Heads before this lane's in vector j (element order: vector, lane, item).
        u32 before_j[VECS];
        u32 wtotal = 0;
#pragma unroll
        for (int j = 0; j < VECS; j++) {
            const u32 c = __popc(flags[j]);
            u32 incl = c;
#pragma unroll
            for (int d = 1; d < 32; d <<= 1) { u32 t = __shfl_up_sync(0xffffffffu, incl, d); if (lane >= d) incl += t; }
            before_j[j] = wtotal + incl - c;
            wtotal += __shfl_sync(0xffffffffu, incl, 31);
        }
        if (lane == 0) s_wc[b][warp] = wtotal;
        __syncthreads();
        u32 woff = 0, total = 0;
#pragma unroll
        for (int w = 0; w < WARPS; w++) { const u32 v = s_wc[b][w]; woff += w < warp ? v : 0; total += v; }
        if (cnt) {
#pragma unroll
            for (int j = 0; j < VECS; j++) {
                const u32 f = flags[j];
                u64 pos = running + woff + before_j[j];
                if (f) {
                    const u32 v[4] = {x[j].x, x[j].y, x[j].z, x[j].w};
#pragma unroll
                    for (int k = 0; k < 4; k++) if (f & (1u << k)) { if (pos < CAP) buf[pos] = v[k]; else spill[c0 + pos] = v[k]; pos++; }
                }
            }
        }
        running += total;
        b ^= 1;
    }
    // One look-back per block (warp 0), then the block's heads out.
    if (warp == 0) {
        const u32 tile = blockIdx.x;
        const u64 total = running;
        u64 prefix = 0;
        // 64-bit words: status in the top 2 bits, count below (counts < 2^62).
        const u64 AGG = 1ull << 62, PRE = 2ull << 62, MASK = (1ull << 62) - 1;
        if (tile == 0) {
            if (lane == 0) asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state), "l"(PRE | total) : "memory");
        } else {
            if (lane == 0) asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state + tile), "l"(AGG | total) : "memory");
            int look = (int)tile - 1;
            while (true) {
                const int t = look - lane;
                u64 w = PRE;
                if (t >= 0) { do { asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(state + t) : "memory"); if (!(w >> 62)) __nanosleep(64); } while ((w >> 62) == 0); }
                const unsigned pmask = __ballot_sync(0xffffffffu, (w >> 62) == 2);
                const int first_p = pmask ? __ffs(pmask) - 1 : 32;
                u64 val = (lane <= first_p && t >= 0) ? (w & MASK) : 0;
#pragma unroll
                for (int d = 16; d > 0; d >>= 1) val += __shfl_xor_sync(0xffffffffu, val, d);
                prefix += val;
                if (pmask) break;
                look -= 32;
            }
            if (lane == 0) asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state + tile), "l"(PRE | (prefix + total)) : "memory");
        }
        if (lane == 0) { s_prefix = prefix; if (tile == gridDim.x - 1) *count_out = prefix + total; }
    }
    __syncthreads();
    const u64 prefix = s_prefix;
    const u64 inbuf = running < CAP ? running : CAP;
    for (u64 i = threadIdx.x; i < inbuf; i += BLOCK) out[prefix + i] = buf[i];
    for (u64 i = CAP + threadIdx.x; i < running; i += BLOCK) out[prefix + i] = spill[c0 + i];
}

// Chunked unique: each block owns a contiguous chunk, streams it once, keeps
// its heads in shared memory (overflow to a global scratch at chunk-relative
// places), then one look-back per block and a copy of its heads.
template <int BLOCK, int VECS, int CAP>
__global__ void __launch_bounds__(BLOCK, 1024 / BLOCK) chunk_unique_lc(const u32* __restrict__ in, u64 n, u64 chunk, u32* __restrict__ out,
                                                   u32* __restrict__ spill, u64* count_out, u64* state) {
    constexpr int WARPS = BLOCK / 32;
    constexpr int ITEMS = VECS * 4;
    constexpr int WTILE = 32 * ITEMS;
    constexpr int TILE = BLOCK * ITEMS;
    extern __shared__ u32 buf[];  // CAP heads
    __shared__ u32 s_wc[2][WARPS];
    __shared__ u64 s_prefix;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u64 c0 = (u64)blockIdx.x * chunk;
    const u64 c1 = c0 + chunk < n ? c0 + chunk : n;
    u64 running = 0;
    int b = 0;
    uint4 nx[VECS];
    auto load = [&](u64 tb, uint4 (&x)[VECS]) {
        const u64 base = tb + (u64)warp * WTILE;
        if (base + WTILE <= c1) {
#pragma unroll
            for (int j = 0; j < VECS; j++) x[j] = __ldg((const uint4*)(in + base) + lane * VECS + j);
        } else {
#pragma unroll
            for (int j = 0; j < VECS; j++) {
                const u64 e = base + (u64)(lane * VECS + j) * 4;
                x[j].x = e < c1 ? in[e] : 0; x[j].y = e + 1 < c1 ? in[e + 1] : 0;
                x[j].z = e + 2 < c1 ? in[e + 2] : 0; x[j].w = e + 3 < c1 ? in[e + 3] : 0;
            }
        }
    };
    if (c0 < c1) load(c0, nx);
    for (u64 tb = c0; tb < c1; tb += TILE) {
        uint4 x[VECS];
#pragma unroll
        for (int j = 0; j < VECS; j++) x[j] = nx[j];
        if (tb + TILE < c1) load(tb + TILE, nx);
        const u64 base = tb + (u64)warp * WTILE;
        const u32 before = (base > 0 && base <= n) ? in[base - 1] : 0;
        u32 flags[VECS];
        u32 cnt = 0;
        u32 prev = __shfl_up_sync(0xffffffffu, x[VECS - 1].w, 1);
        if (lane == 0) prev = before;
#pragma unroll
        for (int j = 0; j < VECS; j++) {
            const u64 e = base + (u64)(lane * VECS + j) * 4;
            u32 f = 0;
            if (e < c1) f |= (e == 0 || x[j].x != prev) ? 1u : 0u;
            if (e + 1 < c1) f |= (x[j].y != x[j].x) ? 2u : 0u;
            if (e + 2 < c1) f |= (x[j].z != x[j].y) ? 4u : 0u;
            if (e + 3 < c1) f |= (x[j].w != x[j].z) ? 8u : 0u;
            prev = x[j].w;
            flags[j] = f;
            cnt += __popc(f);
        }
        u32 incl = cnt;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) { u32 t = __shfl_up_sync(0xffffffffu, incl, d); if (lane >= d) incl += t; }
        if (lane == 31) s_wc[b][warp] = incl;
        __syncthreads();
        u32 woff = 0, total = 0;
#pragma unroll
        for (int w = 0; w < WARPS; w++) { const u32 v = s_wc[b][w]; woff += w < warp ? v : 0; total += v; }
        if (cnt) {
            u64 pos = running + woff + incl - cnt;
#pragma unroll
            for (int j = 0; j < VECS; j++) {
                const u32 f = flags[j];
                if (f) {
                    const u32 v[4] = {x[j].x, x[j].y, x[j].z, x[j].w};
#pragma unroll
                    for (int k = 0; k < 4; k++) if (f & (1u << k)) { if (pos < CAP) buf[pos] = v[k]; else spill[c0 + pos] = v[k]; pos++; }
                }
            }
        }
        running += total;
        b ^= 1;
    }
    // One look-back per block (warp 0), then the block's heads out.
    if (warp == 0) {
        const u32 tile = blockIdx.x;
        const u64 total = running;
        u64 prefix = 0;
        // 64-bit words: status in the top 2 bits, count below (counts < 2^62).
        const u64 AGG = 1ull << 62, PRE = 2ull << 62, MASK = (1ull << 62) - 1;
        if (tile == 0) {
            if (lane == 0) asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state), "l"(PRE | total) : "memory");
        } else {
            if (lane == 0) asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state + tile), "l"(AGG | total) : "memory");
            int look = (int)tile - 1;
            while (true) {
                const int t = look - lane;
                u64 w = PRE;
                if (t >= 0) { do { asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(state + t) : "memory"); if (!(w >> 62)) __nanosleep(64); } while ((w >> 62) == 0); }
                const unsigned pmask = __ballot_sync(0xffffffffu, (w >> 62) == 2);
                const int first_p = pmask ? __ffs(pmask) - 1 : 32;
                u64 val = (lane <= first_p && t >= 0) ? (w & MASK) : 0;
#pragma unroll
                for (int d = 16; d > 0; d >>= 1) val += __shfl_xor_sync(0xffffffffu, val, d);
                prefix += val;
                if (pmask) break;
                look -= 32;
            }
            if (lane == 0) asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state + tile), "l"(PRE | (prefix + total)) : "memory");
        }
        if (lane == 0) { s_prefix = prefix; if (tile == gridDim.x - 1) *count_out = prefix + total; }
    }
    __syncthreads();
    const u64 prefix = s_prefix;
    const u64 inbuf = running < CAP ? running : CAP;
    for (u64 i = threadIdx.x; i < inbuf; i += BLOCK) out[prefix + i] = buf[i];
    for (u64 i = CAP + threadIdx.x; i < running; i += BLOCK) out[prefix + i] = spill[c0 + i];
}

template <int BLOCK, int VECS, int CAP, bool LC = false>
void run_chunk(int bps, const u32* d_in, u64 n, u32* d_out, u32* d_spill, u64* d_cnt, const std::vector<u32>& want, u64 want_cnt) {
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    constexpr int TILE = BLOCK * VECS * 4;
    const u64 grid = (u64)sms * bps;
    const u64 chunk = ((n + grid - 1) / grid + TILE - 1) / TILE * TILE;
    const u32 blocks = (u32)((n + chunk - 1) / chunk);
    u64* state; CK(cudaMalloc(&state, 8ull * blocks));
    auto kern = LC ? chunk_unique_lc<BLOCK, VECS, CAP> : chunk_unique<BLOCK, VECS, CAP>;
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, CAP * 4));
    auto go = [&] {
        cudaMemsetAsync(state, 0, 8ull * blocks);
        kern<<<blocks, BLOCK, CAP * 4>>>(d_in, n, chunk, d_out, d_spill, d_cnt, state);
    };
    CK(cudaMemset(d_out, 0xff, 4 * want.size()));
    go(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    u64 cnt; CK(cudaMemcpy(&cnt, d_cnt, 8, cudaMemcpyDeviceToHost));
    std::vector<u32> got(want.size());
    CK(cudaMemcpy(got.data(), d_out, 4 * want.size(), cudaMemcpyDeviceToHost));
    const bool ok = cnt == want_cnt && got == want;
    if (!ok) {
        u64 bad = 0; while (bad < want.size() && got[bad] == want[bad]) bad++;
        printf("  count %llu want %llu; first bad %llu: got %u want %u (chunk %llu blocks %u)\n", cnt, want_cnt, bad, bad < got.size() ? got[bad] : 0, bad < want.size() ? want[bad] : 0, chunk, blocks);
    }
    const float ms = med(go);
    printf("chunk_unique%s_%dx%d_cap%d_bps%d,%llu,%.5f,%s\n", LC ? "_lc" : "", BLOCK, VECS * 4, CAP, bps, n, ms, ok ? "ok" : "WRONG");
    cudaFree(state);
}

template <class F> float med(F f) {
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    for (int i = 0; i < 3; i++) f();
    std::vector<float> t;
    for (int i = 0; i < 15; i++) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms); }
    std::sort(t.begin(), t.end()); return t[t.size() / 2];
}

template <int BLOCK, int VECS, int MINB>
void run(const u32* d_in, u64 n, u32* d_out, u64* d_cnt, const std::vector<u32>& want, u64 want_cnt) {
    constexpr int TILE = BLOCK * VECS * 4;
    const u32 tiles = (u32)((n + TILE - 1) / TILE);
    u64* state; u32* ticket;
    CK(cudaMalloc(&state, 8ull * tiles)); CK(cudaMalloc(&ticket, 4));
    auto go = [&] {
        cudaMemsetAsync(state, 0, 8ull * tiles); cudaMemsetAsync(ticket, 0, 4);
        lean_unique<BLOCK, VECS, MINB><<<tiles, BLOCK>>>(d_in, n, d_out, d_cnt, state, ticket, tiles);
    };
    CK(cudaMemset(d_out, 0xff, 4 * want.size()));
    go(); CK(cudaDeviceSynchronize());
    u64 cnt; CK(cudaMemcpy(&cnt, d_cnt, 8, cudaMemcpyDeviceToHost));
    std::vector<u32> got(want.size());
    CK(cudaMemcpy(got.data(), d_out, 4 * want.size(), cudaMemcpyDeviceToHost));
    const bool ok = cnt == want_cnt && got == want;
    const float ms = med(go);
    printf("lean_unique_%dx%d_min%d,%llu,%.5f,%s\n", BLOCK, VECS * 4, MINB, n, ms, ok ? "ok" : "WRONG");
    cudaFree(state); cudaFree(ticket);
}

int main() {
    for (u64 n : {1ull << 20, 1ull << 24, 1ull << 28, (1ull << 24) + 12345}) {
        std::vector<u32> h(n);
        for (u64 i = 0; i < n; i++) h[i] = (u32)(i / 64);
        if (n % 2) for (u64 i = 0; i < n; i++) h[i] = (u32)((i * 2654435761ull) >> 40) / 3 == 0 ? 7 : (u32)(i / 3);  // shorter runs
        u32 *d_in, *d_out; u64* d_cnt;
        CK(cudaMalloc(&d_in, 4 * n)); CK(cudaMalloc(&d_out, 4 * n)); CK(cudaMalloc(&d_cnt, 8));
        CK(cudaMemcpy(d_in, h.data(), 4 * n, cudaMemcpyHostToDevice));
        std::vector<u32> want; for (u64 i = 0; i < n; i++) if (i == 0 || h[i] != h[i - 1]) want.push_back(h[i]);
        size_t tb = 0; cub::DeviceSelect::Unique(nullptr, tb, d_in, d_out, d_cnt, (int64_t)n);
        void* tmp; CK(cudaMalloc(&tmp, tb));
        const float cub_ms = med([&] { size_t b = tb; cub::DeviceSelect::Unique(tmp, b, d_in, d_out, d_cnt, (int64_t)n); });
        printf("cub_unique,%llu,%.5f\n", n, cub_ms);
        const float copy_ms = med([&] { cudaMemcpyAsync(d_out, d_in, 4 * n, cudaMemcpyDeviceToDevice); });
        printf("copy,%llu,%.5f\n", n, copy_ms);
        size_t rb = 0; cub::DeviceReduce::Sum(nullptr, rb, d_in, d_cnt, (int64_t)n); void* rt; CK(cudaMalloc(&rt, rb));
        printf("cub_reduce_sum_u32,%llu,%.5f\n", n, med([&] { size_t b = rb; cub::DeviceReduce::Sum(rt, b, d_in, d_cnt, (int64_t)n); }));
        run<256, 8, 4>(d_in, n, d_out, d_cnt, want, want.size());
        u32* d_spill; CK(cudaMalloc(&d_spill, 4 * n));
        run_chunk<512, 2, 24576>(2, d_in, n, d_out, d_spill, d_cnt, want, want.size());
        run_chunk<512, 2, 24576, true>(2, d_in, n, d_out, d_spill, d_cnt, want, want.size());
        run_chunk<512, 4, 24576, true>(2, d_in, n, d_out, d_spill, d_cnt, want, want.size());
        run_chunk<256, 2, 12288, true>(4, d_in, n, d_out, d_spill, d_cnt, want, want.size());
        run_chunk<256, 4, 12288, true>(4, d_in, n, d_out, d_spill, d_cnt, want, want.size());
        run_chunk<1024, 2, 49152, true>(1, d_in, n, d_out, d_spill, d_cnt, want, want.size());
        run_chunk<512, 2, 4096, true>(2, d_in, n, d_out, d_spill, d_cnt, want, want.size());
        cudaFree(d_spill);
        cudaFree(d_in); cudaFree(d_out); cudaFree(d_cnt); cudaFree(tmp); cudaFree(rt);
    }
}
