// Block building blocks, part 4: the look-back back-off. Part of the
// prelude (block/lookback.cuh and the radix sort's per-digit look-back use it).

// Backs off between polls of a word another block has not written yet
// (a look-back predecessor), so spinning warps leave issue slots and
// memory bandwidth to the blocks doing work: no pause at the first poll,
// then 32 ns doubling up to MAX_NS; MAX_NS 0 never pauses.
template <u32 MAX_NS> struct cuprim_backoff {
    u32 ns = 0;
    __device__ __forceinline__ void pause() {
        if constexpr (MAX_NS == 0) return;
        if (ns) __nanosleep(ns);
        ns = ns ? (ns < MAX_NS ? ns * 2 : MAX_NS) : 32;
    }
};
