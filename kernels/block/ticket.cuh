// Block building blocks, part 3: the last-block ticket. Part of the prelude.
//
// A single-pass kernel whose blocks each leave a result (a partial, a
// histogram's counts, a best index) lets the LAST block to finish combine
// them: every block fences and takes a ticket from a counter; the one that
// takes ticket gridDim.x - 1 sees every other block's writes.
//
// Every thread of the block calls it once, after its writes that the last
// block must see (stores or atomics, by any thread). Returns true in every
// thread of the last block, after a fence; read the other blocks' results
// with loads that bypass L1 (cuprim_load_cg, __ldcg, volatile). The last
// block resets the counter to 0 at once (no other block of the launch takes
// a ticket after it), so a counter that starts at 0 is ready for the next
// launch on the stream without a memset.
__device__ __forceinline__ bool cuprim_last_block(u32* ticket) {
    __syncthreads();  // the block's writes happen before thread 0's fence
    bool last = false;
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
        if (last) *ticket = 0;
    }
    // Thread 0's answer to the whole block, with no shared memory (a
    // shared flag moved the sort histogram's counters off offset 0 and
    // cost an add per counter update).
    last = __syncthreads_or(last);
    if (last) __threadfence();
    return last;
}
