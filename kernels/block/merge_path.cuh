// Merge path: where a diagonal of the merge of two sorted sequences cuts
// them, and the serial merge of a few elements from such a cut.
//
// The stable merge of a[0..na) and b[0..nb) (both sorted by Cmp, elements of
// a first among equivalent ones) is a path through the na x nb grid; its
// first `diag` elements take some i from a and diag - i from b. i is found
// by a binary search along the diagonal: a[m] is among the first `diag`
// outputs exactly when it comes before b[diag - 1 - m], that is when
// !Cmp::less(b[diag - 1 - m], a[m]) (a wins ties). That test is true for
// small m and false past the cut, whatever the inputs hold, so the search
// is memory-safe (every index it reads lies in range) even for unsorted
// inputs or a comparator that is no order: the cut then is merely some i in
// [max(0, diag - nb), min(diag, na)].
//
// Shared by the merge and merge sort (kernels/merge/merge.cu: the tiles'
// cuts in global memory, each thread's cut in shared memory), the set
// operations (merge/set.cu) and the plain search (search/search.cu), which
// use the bisection below; templates only, so it may come before or after
// a specialisation. Cmp: a functor with `static bool less(K a, K b)`. The
// sequences are pointers or any accessor with operator[] (an input
// expression's cuprim_x_at).

// The first position p of [0, len) whose element at(p) is not `before`
// (len if none), for a `before` that holds on a prefix: the lower bound of
// x is before(e) = less(e, x), the upper bound before(e) = !less(x, e).
// at(i): element i (a load from a pointer, an input expression's, ...).
template <typename At, typename Before>
__device__ __forceinline__ u64 cuprim_partition_point(At at, u64 len, Before before) {
    u64 lo = 0;
    while (len > 0) {
        const u64 half = len >> 1;
        if (before(at(lo + half))) {
            lo += half + 1;
            len -= half + 1;
        } else {
            len = half;
        }
    }
    return lo;
}

// The merge-path search of `diag` within [lo, hi], a range inside
// [max(0, diag - nb), min(diag, na)] known to hold the cut (or any such
// range: the result then is merely in it).
template <typename Cmp, typename A, typename B, typename Index>
__device__ __forceinline__ Index cuprim_merge_path_in(A a, B b, Index diag, Index lo, Index hi) {
    while (lo < hi) {
        const Index mid = lo + ((hi - lo) >> 1);
        if (Cmp::less(b[diag - 1 - mid], a[mid])) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

// How many of the first `diag` merged elements come from a (0 <= diag <= na + nb).
template <typename Cmp, typename A, typename B, typename Index>
__device__ __forceinline__ Index cuprim_merge_path(A a, Index na, B b, Index nb, Index diag) {
    return cuprim_merge_path_in<Cmp>(a, b, diag, diag > nb ? diag - nb : (Index)0, diag < na ? diag : na);
}

// The same cut found by one warp (all 32 lanes call it with the same
// arguments and get the same result): each step probes 32 evenly spaced
// candidates at once and keeps the stretch between the last probe before
// the cut and the first one at or past it, so a range of r candidates takes
// about log32(r) steps of one parallel load each instead of log2(r)
// dependent loads. Probes past hi count as past the cut and read nothing;
// every probe m lies in [lo, hi), so, as for the bisection, the result is
// some index of the diagonal's range whatever the inputs hold.
template <typename Cmp, typename A, typename B>
__device__ __forceinline__ u64 cuprim_merge_path_warp(A a, u64 na, B b, u64 nb, u64 diag) {
    const u64 lane = threadIdx.x & 31;
    u64 lo = diag > nb ? diag - nb : 0;
    u64 hi = diag < na ? diag : na;
    while (lo < hi) {
        const u64 step = (hi - lo + 31) >> 5;
        const u64 m = lo + (lane + 1) * step - 1;
        const bool past = m >= hi || Cmp::less(b[diag - 1 - m], a[m]);
        const unsigned ball = __ballot_sync(0xffffffffu, past);
        if (ball == 0) {
            // Every probe lies before the cut; the last one is lo + 32 step - 1 < hi.
            lo += 32 * step;
        } else {
            const u64 j = (u64)(__ffs(ball) - 1);
            const u64 mj = lo + (j + 1) * step - 1;
            hi = mj < hi ? mj : hi;
            lo += j * step;
        }
    }
    return lo;
}

// ITEMS merged elements from one array `s` that holds both sequences: a at
// positions [ia, a_end), b at [ib, b_end), with a_end <= ib and b_end >= 1.
// keys[k] is the k-th element of their stable merge, src[k] its position in
// s. Past the last element of both (a partial tile's idle items) keys[k] is
// some element of s and src[k] is a_end. Reads s[0..b_end) only: never one
// past b, which may be another warp's slots in the merge sort's
// warp-synchronous rounds.
//
// BRANCH_FREE (the default): a step takes no branch. The comparator runs on
// the two heads whatever the bounds say (both are loaded, clamped, so
// reading them is safe), and the one head that moves is reloaded by a single
// shared-memory load at the position the step selects (about 16 SASS
// instructions a step on sm_90 for f32 by a user comparator, against 24).
// It holds a few more registers: the key-value tiles (64 registers at 4
// blocks per SM) keep the guarded step, which does not spill there.
template <typename Cmp, int ITEMS, typename K, bool BRANCH_FREE = true>
__device__ __forceinline__ void cuprim_merge_serial(const K* s, int ia, int a_end, int ib, int b_end, K (&keys)[ITEMS],
                                                    int (&src)[ITEMS]) {
    const int last = b_end - 1;
    K x = s[min(ia, last)];
    K y = s[min(ib, last)];
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        // b is taken only while it has elements (so ib stays <= b_end); a
        // stops at a_end once both are done.
        if constexpr (BRANCH_FREE) {
            // Bitwise, not short-circuit: the comparison runs every step.
            const bool b_first = Cmp::less(y, x);
            const bool take_a = (ib >= b_end) | ((ia < a_end) & !b_first);
            keys[k] = take_a ? x : y;
            src[k] = take_a ? ia : ib;
            const int ia1 = min(ia + 1, a_end);
            const int ib1 = ib + 1;
            ia = take_a ? ia1 : ia;
            ib = take_a ? ib : ib1;
            const K next = s[min(take_a ? ia : ib, last)];
            x = take_a ? next : x;
            y = take_a ? y : next;
        } else {
            const bool take_a = ib >= b_end || (ia < a_end && !Cmp::less(y, x));
            keys[k] = take_a ? x : y;
            src[k] = take_a ? ia : ib;
            if (take_a) {
                ia += ia < a_end;
                x = s[min(ia, last)];
            } else {
                ib++;
                y = s[min(ib, last)];
            }
        }
    }
}
