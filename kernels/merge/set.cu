// Set operations on sorted inputs (multiset semantics of std::set_* and
// Thrust), as flags for one side, then a compaction of the kept elements;
// the Rust side scans the flags in place (inclusive, Add) between the two launches
// and merges the two compacted sides for union and symmetric difference.
//
// For x = mine[i], its rank in its run of equivalents is r = i - lo with lo
// the lower bound of x in mine[0..i], and c = how many of other are
// equivalent to it (upper bound - lower bound in other). KEEP_LESS keeps
// x where r < c (intersection), else where r >= c (difference, symmetric
// difference, and b's side of the union). Inputs that are not sorted give
// some flags: every search stays within its range.
//
// Specialised on: K, Cmp (bool less(K a, K b)).

// The lower and upper bounds of x in s[0..len) (merge_path.cuh's bisection).
__device__ __forceinline__ u64 set_lower(const K* __restrict__ s, u64 len, K x) {
    return cuprim_partition_point(s, len, [&](K e) { return Cmp::less(e, x); });
}
__device__ __forceinline__ u64 set_upper(const K* __restrict__ s, u64 len, K x) {
    return cuprim_partition_point(s, len, [&](K e) { return !Cmp::less(x, e); });
}

// flags[i] = 1 where mine[i] is kept, else 0, for i < n.
extern "C" __global__ void cuprim_set_flags(const K* __restrict__ mine, u64 n, const K* __restrict__ other, u64 m,
                                            u32 keep_less, u64* __restrict__ flags) {
    for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) {
        const K x = mine[i];
        const u64 r = i - set_lower(mine, i, x);
        const u64 lb = set_lower(other, m, x);
        const u64 c = set_upper(other + lb, m - lb, x);
        flags[i] = (keep_less ? r < c : r >= c) ? 1 : 0;
    }
}

// out[sums[i] - 1] = in[i] where element i is kept, for i < n; sums is the
// inclusive scan of the flags (kept where it steps up), and out holds
// out_len elements.
extern "C" __global__ void cuprim_set_compact(const K* __restrict__ in, u64 n, const u64* __restrict__ sums,
                                              K* __restrict__ out, u64 out_len) {
    for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) {
        const u64 p = sums[i], before = i ? sums[i - 1] : 0;
        if (p != before && p - 1 < out_len) out[p - 1] = in[i];
    }
}
