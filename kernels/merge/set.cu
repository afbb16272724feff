// Set operations on sorted inputs (multiset semantics of std::set_* and
// Thrust), as flags for one side, then a compaction of the kept elements
// (with their values for the by-key forms); the Rust side scans the flags
// in place (inclusive, Add) between the two launches and merges the two
// compacted sides for union and symmetric difference.
//
// For x = mine[i], its rank in its run of equivalents is r = i - lo with lo
// the lower bound of x in mine[0..i], and c = how many of other are
// equivalent to it (upper bound - lower bound in other). KEEP_LESS keeps
// x where r < c (intersection), else where r >= c (difference, symmetric
// difference, and b's side of the union).
//
// Each thread takes SET_CHUNK consecutive elements of mine and walks them
// in order: the first one's run start is found by galloping back from it
// (a few reads for short runs), its bounds in other by binary search; each
// later element either continues the run (r + 1, same bounds) or starts a
// new one, whose bounds lie at or after the previous upper bound and are
// found by galloping forward from there. So a chunk costs one search of
// other and reads nearby elements after it, where every element searching
// all of other took three binary searches. Inputs that are not sorted give
// some flags: every read stays within its input.
//
// Specialised on: K, Cmp (bool less(K a, K b)), F (the flag and running
// count type: u32 below 2^32 elements of a side, else u64), CUPRIM_PAIRS
// (values follow the keys through the compaction) and V (the value type;
// K and unused without CUPRIM_PAIRS). The flags depend on the keys alone.

// Elements of mine per thread and step (one search of other per chunk).
constexpr int SET_CHUNK = 16;

// The lower and upper bounds of x in s[0..len) (merge_path.cuh's bisection).
__device__ __forceinline__ u64 set_lower(const K* __restrict__ s, u64 len, K x) {
    return cuprim_partition_point(s, len, [&](K e) { return Cmp::less(e, x); });
}
__device__ __forceinline__ u64 set_upper(const K* __restrict__ s, u64 len, K x) {
    return cuprim_partition_point(s, len, [&](K e) { return !Cmp::less(x, e); });
}

// The first p in [lo, hi] with p == hi or !before(s[p]), for a `before`
// that holds on a prefix of s[lo..hi): probes lo, lo + 1, lo + 3, lo + 7,
// ... then bisects the last gap, so an answer d past lo costs about
// 2 log2(d) reads.
template <typename Before>
__device__ __forceinline__ u64 set_gallop(const K* __restrict__ s, u64 lo, u64 hi, Before before) {
    if (lo >= hi || !before(s[lo])) return lo;
    u64 known = lo;  // before(s[known]) holds
    for (u64 step = 1;; step *= 2) {
        const u64 probe = hi - known > step ? known + step : hi;
        if (probe == hi || !before(s[probe])) {
            return known + 1 + cuprim_partition_point(s + known + 1, probe - known - 1, before);
        }
        known = probe;
    }
}

// The lower bound of x in s[0..hi), for s[hi] equivalent to x (or hi == 0):
// probes hi - 1, hi - 2, hi - 4, ... back to the first element less than
// x, then bisects that gap.
__device__ __forceinline__ u64 set_run_start(const K* __restrict__ s, u64 hi, K x) {
    const auto before = [&](K e) { return Cmp::less(e, x); };
    u64 known = hi;  // !before(s[p]) for p in [known, hi)
    for (u64 step = 1; known > 0; step *= 2) {
        const u64 probe = known > step ? known - step : 0;
        if (before(s[probe])) {
            return probe + 1 + cuprim_partition_point(s + probe + 1, known - probe - 1, before);
        }
        known = probe;
    }
    return 0;
}

// flags[i] = 1 where mine[i] is kept, else 0, for i < n.
extern "C" __global__ void cuprim_set_flags(const K* __restrict__ mine, u64 n, const K* __restrict__ other, u64 m,
                                            u32 keep_less, F* __restrict__ flags) {
    const u64 chunks = (n + SET_CHUNK - 1) / SET_CHUNK;
    for (u64 chunk = cuprim_thread_id(); chunk < chunks; chunk += cuprim_thread_count()) {
        const u64 first = chunk * SET_CHUNK;
        const u64 end = n - first < (u64)SET_CHUNK ? n : first + SET_CHUNK;
        K prev = mine[first];
        u64 r = first - set_run_start(mine, first, prev);
        u64 lo = set_lower(other, m, prev);
        u64 hi = lo + set_upper(other + lo, m - lo, prev);
        for (u64 i = first;;) {
            flags[i] = (keep_less ? r < hi - lo : r >= hi - lo) ? 1 : 0;
            if (++i == end) break;
            const K x = mine[i];
            if (Cmp::less(prev, x)) {
                // A new run: its bounds in other are at or past the last upper bound.
                r = 0;
                lo = set_gallop(other, hi, m, [&](K e) { return Cmp::less(e, x); });
                hi = set_gallop(other, lo, m, [&](K e) { return !Cmp::less(x, e); });
            } else {
                r++;
            }
            prev = x;
        }
    }
}

// out[sums[i] - 1] = in[i] where element i is kept, for i < n, and with
// CUPRIM_PAIRS out_values[sums[i] - 1] = values[i] by the same places;
// sums is the inclusive scan of the flags (kept where it steps up), and
// out (out_values) holds out_len elements. values and out_values are
// unused without CUPRIM_PAIRS.
extern "C" __global__ void cuprim_set_compact(const K* __restrict__ in, const V* __restrict__ values, u64 n,
                                              const F* __restrict__ sums, K* __restrict__ out,
                                              V* __restrict__ out_values, u64 out_len) {
    for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) {
        const u64 p = sums[i], before = i ? sums[i - 1] : 0;
        if (p != before && p - 1 < out_len) {
            out[p - 1] = in[i];
            if constexpr (CUPRIM_PAIRS) out_values[p - 1] = values[i];
        }
    }
}
