#!/bin/sh
# Builds and runs the CPU emulation of kernels/scan/scan_by_key_chunks.cu
# (see scan_by_key_chunks.cpp): the kernel and block/lookback.cuh are
# rewritten for the host first (the kernel templated per resident slot, the
# look-back's PTX loads and stores as C++ atomics, the separate layout).
# EMU_TSAN=0: -O2 without ThreadSanitizer.
set -e
cd "$(dirname "$0")"
mkdir -p /tmp/sbk_emu
sed -e '/^template <typename V> struct TileState<V, LOOKBACK_PACKED64> {/,/^};/d' \
    -e '/^template <typename V> struct TileState<V, LOOKBACK_PACKED128> {/,/^};/d' \
    -e 's/return sizeof(V) <= 4 ? LOOKBACK_PACKED64 : .*;/return LOOKBACK_SEPARATE;/' \
    -e 's/asm volatile("st.release.gpu.global.u32 \[%0\], %1;" ::"l"(status + tile), "r"(flag) : "memory");/emu_store_release(status + tile, flag);/' \
    -e 's/asm volatile("ld.acquire.gpu.global.u32 %0, \[%1\];" : "=r"(st) : "l"(status + tile) : "memory");/st = emu_load_acquire(status + tile);/' \
    ../../kernels/block/lookback.cuh > /tmp/sbk_emu/lookback.cuh
if grep -q 'asm' /tmp/sbk_emu/lookback.cuh; then echo "lookback.cuh: PTX left after the rewrite"; exit 1; fi
sed -e 's/extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)/template <int SLOT> void/' \
    ../../kernels/scan/scan_by_key_chunks.cu > /tmp/sbk_emu/scan_by_key_chunks.cu
if [ "${EMU_TSAN:-1}" = 1 ]; then FLAGS="-O1 -g -fsanitize=thread"; else FLAGS="-O2"; fi
for c in 1 2 3 4; do
    g++ -std=c++17 $FLAGS -DEMU_CASE=$c -o /tmp/sbk_emu/emu$c scan_by_key_chunks.cpp -lpthread
    /tmp/sbk_emu/emu$c
done
