// The stable merge sort's tile: one block sorts a tile staged in shared
// memory and writes it out (merge_sort_tile). cuprim_merge_sort_tile
// (kernels/merge/merge.cu) stages the tiles of a buffer, and
// cuprim_merge_sort_tile_x (merge/sort_expr.cu) those of an input
// expression. Specialised as merge.cu is: K, V, Cmp, CUPRIM_PAIRS,
// CUPRIM_BLOCK, CUPRIM_ITEMS (after merge/merge_tile.cuh).
//
// Every thread sorts its ITEMS consecutive elements in registers
// (odd-even transposition, which is stable when it swaps only strictly
// smaller successors), then the block merges runs of ITEMS, 2 ITEMS, ... in
// shared memory, each thread merging ITEMS outputs from its own merge-path
// cut. Keys carry their position in the tile (u16), so values move once, at
// the end.

// Positions in a tile fit a u16.
static_assert(MERGE_TILE <= 65536, "tile positions are u16");
typedef unsigned short cuprim_tile_pos;

// A thread's ITEMS keys (with their positions for pairs) sorted in
// registers by odd-even transposition, stable since it swaps only strictly
// smaller successors; only the first `valid` take part unless FULL.
template <bool FULL>
__device__ __forceinline__ void tile_sort_own(K (&keys)[CUPRIM_ITEMS], int (&pos)[CUPRIM_ITEMS], int valid) {
#pragma unroll
    for (int round = 0; round < CUPRIM_ITEMS; round++) {
#pragma unroll
        for (int k = round & 1; k + 1 < CUPRIM_ITEMS; k += 2) {
            if ((FULL || k + 1 < valid) && Cmp::less(keys[k + 1], keys[k])) {
                const K t = keys[k];
                keys[k] = keys[k + 1];
                keys[k + 1] = t;
                if constexpr (CUPRIM_PAIRS) {
                    const int p = pos[k];
                    pos[k] = pos[k + 1];
                    pos[k + 1] = p;
                }
            }
        }
    }
}

// A compile-time bool as a value (for generic lambdas).
template <bool B> struct merge_bool {
    static constexpr bool value = B;
};

// Sorts tile blockIdx.x of n elements, out_k[d0..d1) (and out_v) with
// d0 = blockIdx.x * MERGE_TILE, d1 = min(d0 + MERGE_TILE, n), through smem
// (MERGE_SLOTS slots of MERGE_SLOT bytes, 16-byte aligned) and spos
// (MERGE_TILE positions with CUPRIM_PAIRS, one slot without).
// stage_keys(sk, d0, count) stages the tile's count keys in sk (smem as K)
// and returns where they start; with CUPRIM_PAIRS, stage_values(sv, d0,
// count) does the same for its values once the keys are out. Each is
// followed by a __syncthreads.
template <typename StageKeys, typename StageValues>
__device__ __forceinline__ void merge_sort_tile(unsigned char* smem, cuprim_tile_pos* spos, u64 n, K* out_k, V* out_v,
                                                StageKeys stage_keys, StageValues stage_values) {
    K* sk = (K*)smem;
    const u64 d0 = (u64)blockIdx.x * MERGE_TILE;
    const int count = n - d0 < (u64)MERGE_TILE ? (int)(n - d0) : MERGE_TILE;
    const int tid = (int)threadIdx.x;
    const int first = tid * CUPRIM_ITEMS;

    // Loaded from `at`; sorted in sk (16-byte aligned, for merge_store).
    const K* at = stage_keys(sk, d0, count);
    __syncthreads();

    // The tile sorted in sk; FULL (a whole tile: all but the last) drops
    // every bound on the thread's elements.
    auto sort = [&](auto full) {
        constexpr bool FULL = decltype(full)::value;
        const int valid = FULL ? CUPRIM_ITEMS : min(max(count - first, 0), CUPRIM_ITEMS);
        // The thread's own elements, sorted in registers.
        K keys[CUPRIM_ITEMS];
        int pos[CUPRIM_ITEMS];
#pragma unroll
        for (int k = 0; k < CUPRIM_ITEMS; k++) {
            keys[k] = at[FULL ? first + k : min(first + k, count - 1)];
            pos[k] = first + k;
        }
        tile_sort_own<FULL>(keys, pos, valid);
        __syncthreads();
        // The thread's elements (and their tile positions) back to its slots.
        auto put = [&]() {
#pragma unroll
            for (int k = 0; k < CUPRIM_ITEMS; k++) {
                if (FULL || k < valid) {
                    sk[first + k] = keys[k];
                    if constexpr (CUPRIM_PAIRS) spos[first + k] = (cuprim_tile_pos)pos[k];
                }
            }
        };
        // Merge rounds: runs of ITEMS << j sorted elements become runs of
        // twice that; the thread's pair of runs starts at the thread
        // (tid >> (j + 1)) << (j + 1). While a pair lies within one warp's
        // 32 ITEMS slots, each warp reads and writes only its own slots, so
        // the warp alone syncs.
        auto round = [&](int j) {
            const int run = CUPRIM_ITEMS << j;
            const int ps = (tid >> (j + 1) << (j + 1)) * CUPRIM_ITEMS;
            if (FULL || first < count) {
                // Whole runs, except past the end of a tile (or of a block of
                // a size other than a power of two).
                constexpr bool WHOLE = FULL && (CUPRIM_BLOCK & (CUPRIM_BLOCK - 1)) == 0;
                const int la = WHOLE ? run : min(run, count - ps);
                const int lb = WHOLE ? run : min(run, count - ps - la);
                const int diag = first - ps;
                const int cut = cuprim_merge_path<Cmp>(sk + ps, la, sk + ps + la, lb, diag);
                int src[CUPRIM_ITEMS];
                cuprim_merge_serial<Cmp>(sk, ps + cut, ps + la, ps + la + diag - cut, ps + la + lb, keys, src);
                if constexpr (CUPRIM_PAIRS) {
#pragma unroll
                    for (int k = 0; k < CUPRIM_ITEMS; k++) pos[k] = spos[min(src[k], MERGE_TILE - 1)];
                }
            }
        };
        put();
        __syncwarp();
        int j = 0;
        for (; (2 << j) <= 32 && (CUPRIM_ITEMS << j) < count; j++) {
            round(j);
            __syncwarp();
            if (FULL || first < count) put();
            __syncwarp();
        }
        __syncthreads();
        for (; (CUPRIM_ITEMS << j) < count; j++) {
            round(j);
            __syncthreads();
            if (FULL || first < count) put();
            __syncthreads();
        }
    };
    if (count == MERGE_TILE) {
        sort(merge_bool<true>());
    } else {
        sort(merge_bool<false>());
    }

    merge_store(out_k + d0, sk, count);
    if constexpr (CUPRIM_PAIRS) {
        V* sv = (V*)smem;
        __syncthreads();  // the keys are out of shared memory
        const V* vat = stage_values(sv, d0, count);
        __syncthreads();
        for (int i = tid; i < count; i += CUPRIM_BLOCK) out_v[d0 + i] = vat[spos[i]];
    }
}
