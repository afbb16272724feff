// The look-back of kernels that stream a chunk per block and need the
// count of everything before their chunk once (bykey/count_chunks.cu): one
// 64-bit word per chunk, its status in the top two bits (an aggregate, or
// an inclusive prefix) and the count below. A
// chunk's word is published only once the chunk's own count is known, and
// chunks are taken in order (a ticket, or one wave of resident blocks), so
// waiting on an earlier chunk always ends.
//
// Needs: block/backoff.cuh (the prelude's).

constexpr u64 CHUNK_AGGREGATE = 1ull << 62, CHUNK_PREFIX = 2ull << 62, CHUNK_COUNT = CHUNK_AGGREGATE - 1;

// Called by one whole warp of chunk `me`'s block with the chunk's count:
// publishes it, looks back over the chunks before (32 at a time, stopping
// at the nearest inclusive prefix), publishes the chunk's inclusive prefix
// and returns, in every lane, the count before the chunk. state[0 ..
// chunks) is zero before the launch.
__device__ __forceinline__ u64 cuprim_chunk_lookback(u64* state, u32 me, u64 count) {
    const int lane = (int)(threadIdx.x & 31);
    if (me == 0) {
        if (lane == 0) asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state), "l"(CHUNK_PREFIX | count) : "memory");
        return 0;
    }
    if (lane == 0)
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state + me), "l"(CHUNK_AGGREGATE | count) : "memory");
    cuprim_backoff<256> backoff;  // as the look-back's polls
    u64 prefix = 0;
    long long look = (long long)me - 1;
    while (true) {
        const long long t = look - lane;
        u64 word = CHUNK_PREFIX;  // before chunk 0: nothing
        if (t >= 0) {
            while (true) {
                asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(state + t) : "memory");
                if ((word >> 62) != 0) break;
                backoff.pause();
            }
        }
        const unsigned prefixes = __ballot_sync(0xffffffffu, (word >> 62) == 2);
        const int nearest = prefixes ? __ffs(prefixes) - 1 : 32;
        u64 v = (lane <= nearest && t >= 0) ? (word & CHUNK_COUNT) : 0;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        prefix += v;
        if (prefixes) break;
        look -= 32;
    }
    if (lane == 0)
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state + me), "l"(CHUNK_PREFIX | (prefix + count)) : "memory");
    return prefix;
}
