// The offsets of a segmented sort surveyed on the device, so the host need
// not read them back when one tile class holds every segment (every sort:
// the radix kernels of segsort.cu and the bitonic kernel of
// segsort_bitonic.cu; src/algo/segsort/plan.rs, sort_segments_surveyed_of).
// Its own module, so that a sort whose segments all go to the bitonic
// kernel compiles neither segsort.cu nor anything the survey does not read.
//
// out[0] becomes the longest segment's length, out[1] the number of bad
// offset pairs (decreasing, or past n keys); out[0] and out[1] start
// zeroed. out[2] and out[3] become offsets[0] and offsets[segments] (a sort
// of an expression also writes the elements before the first offset and
// after the last; a sort in place does not read them back). Any grid of
// 256-thread blocks; offsets holds segments + 1 entries.
//
// Specialised on: I (offset type: u32 or u64).

extern "C" __global__ void __launch_bounds__(256) cuprim_segsort_survey(const I* offsets, u64 segments, u64 n, u64* out) {
    u64 longest = 0, bad = 0;
    for (u64 s = blockIdx.x * (u64)blockDim.x + threadIdx.x; s < segments; s += (u64)gridDim.x * blockDim.x) {
        const u64 a = (u64)offsets[s], b = (u64)offsets[s + 1];
        if (b < a || b > n) {
            bad++;
        } else if (b - a > longest) {
            longest = b - a;
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const u64 l = __shfl_xor_sync(0xffffffffu, longest, off);
        longest = l > longest ? l : longest;
        bad += __shfl_xor_sync(0xffffffffu, bad, off);
    }
    if ((threadIdx.x & 31) == 0) {
        if (longest) atomicMax((unsigned long long*)out, (unsigned long long)longest);
        if (bad) atomicAdd((unsigned long long*)(out + 1), (unsigned long long)bad);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        out[2] = (u64)offsets[0];
        out[3] = (u64)offsets[segments];
    }
}
