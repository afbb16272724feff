// unique and unique_count by chunks: each block owns one contiguous chunk
// of the keys (the grid is one wave of resident blocks), streams it once in
// tiles, and keeps the run heads it finds in shared memory; only once the
// chunk is done does it look back (one decoupled look-back per block, over
// the blocks before it: kernels/block/chunk_lookback.cuh, one 64-bit
// word per block) for the number of heads before its chunk, then copies its
// heads out. The look-back's wait is paid once per chunk instead of once
// per tile, so the keys stream at nearly the rate of a plain read. A chunk
// whose heads overflow UC_CAP keeps those of the tiles before the overflow
// and, once its offset is known, reads the rest of its chunk again, each
// tile's heads staged in the (then free) heads array and written as one
// contiguous run of slots (dense heads cost a second read of the keys,
// never extra memory).
//
// Element i is a run head when i == 0 or KeyEq::differ(keys[i - 1],
// keys[i]); each lane tests UC_ITEMS consecutive keys (one warp scan places
// its heads), loaded as whole vectors of the input's buffers where aligned.
// The last block writes the number of runs to count_out[0].
//
// Specialised on: In0 / K (the key expression and its item), KeyEq,
// CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS, UC_CAP (heads a block keeps; 0:
// unique_count, which writes none).

constexpr int UC_WARPS = CUPRIM_BLOCK / 32;
// A lane's consecutive keys: 32 bytes of them (16 of keys under 4 bytes,
// whose two tiles in flight would not fit the registers unpacked), and
// whole vectors of the input's widest buffer.
constexpr int UC_VEC = cuprim_x_items<In0>();
constexpr int UC_LANE_BYTES = sizeof(K) >= 4 ? 32 : 16;
constexpr int UC_ITEMS = UC_LANE_BYTES / (int)sizeof(K) > UC_VEC ? UC_LANE_BYTES / (int)sizeof(K) : UC_VEC;
static_assert(UC_ITEMS % UC_VEC == 0 && UC_ITEMS <= 32, "whole vectors; one 32-bit mask of flags per lane");
constexpr int UC_TILE = CUPRIM_BLOCK * UC_ITEMS;
static_assert(UC_CAP == 0 || UC_CAP >= UC_TILE, "a tile's heads fit the array that stages them");

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_unique_chunks(CUPRIM_INPUT In0 keys, u64 n, u64 chunk, K* __restrict__ out, u64* __restrict__ count_out,
                         u64* state) {
    __shared__ K heads[UC_CAP > 0 ? UC_CAP : 1];
    __shared__ u32 s_counts[2][UC_WARPS];
    __shared__ u64 s_prefix;
    const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
    const u64 c0 = (u64)blockIdx.x * chunk;
    const u64 c1 = n - c0 < chunk ? n : c0 + chunk;
    const u32 m = keys.template misalign<UC_VEC>();
    const bool vectors = m == 0 || m == CUPRIM_X_ANY;
    int buf = 0;

    // A lane's keys of tile [tb, tb + UC_TILE) of the chunk, as the vectors
    // they are loaded in (kept packed: 8 registers for 32 u8 keys), and
    // (lane 0) the key before the warp's stretch. Split from `rank` so the
    // stream below can issue the next tile's loads before ranking this one.
    typedef cuprim_arr<K, UC_VEC> Vec;
    constexpr int UC_VECS = UC_ITEMS / UC_VEC;
    auto load = [&](u64 tb, Vec (&x)[UC_VECS], K& before) {
        const u64 e = tb + (u64)threadIdx.x * UC_ITEMS;
        if (vectors && e + UC_ITEMS <= c1) {
#pragma unroll
            for (int c = 0; c < UC_VECS; c++) x[c] = keys.template load_n<UC_VEC>(e + c * UC_VEC);
        } else {
#pragma unroll
            for (int k = 0; k < UC_ITEMS; k++)
                if (e + k < c1) x[k / UC_VEC].v[k % UC_VEC] = keys.load(e + k);
        }
        if (lane == 0 && e > 0 && e < c1) before = keys.load(e - 1);
    };

    // The heads among a tile's loaded keys: put(place, key) for each, its
    // place counted from `before` (the chunk's heads before the tile).
    // Returns the tile's head count. Every thread calls it.
    auto rank = [&](u64 tb, const Vec (&xv)[UC_VECS], K before_warp, u64 before, auto put) -> u64 {
        const u64 e = tb + (u64)threadIdx.x * UC_ITEMS;
        K x[UC_ITEMS];
#pragma unroll
        for (int k = 0; k < UC_ITEMS; k++) x[k] = xv[k / UC_VEC].v[k % UC_VEC];
        // The key before the lane's first: the lane before's last, or for
        // a warp's first lane the key before the warp's stretch.
        K prev = cuprim_shfl_up(x[UC_ITEMS - 1], 1);
        if (lane == 0) prev = before_warp;
        u32 flags = 0;
#pragma unroll
        for (int k = 0; k < UC_ITEMS; k++) {
            const u64 i = e + k;
            if (i < c1 && (i == 0 || KeyEq::differ(k == 0 ? prev : x[k - 1], x[k]))) flags |= 1u << k;
        }
        const u32 count = (u32)__popc(flags);
        const u32 incl = cuprim_warp_inclusive_sum(count);
        if (lane == 31) s_counts[buf][warp] = incl;
        __syncthreads();
        u32 warps_before = 0, total = 0;
#pragma unroll
        for (int w = 0; w < UC_WARPS; w++) {
            const u32 c = s_counts[buf][w];
            warps_before += w < warp ? c : 0;
            total += c;
        }
        buf ^= 1;  // the next tile's counts go to the other buffer: no second barrier
        u64 place = before + warps_before + (incl - count);
#pragma unroll
        for (int k = 0; k < UC_ITEMS; k++)
            if ((flags >> k) & 1) put(place++, x[k]);
        return total;
    };

    // Stream the chunk, keeping heads while they fit.
    // Each tile's loads are issued before the tile before is ranked (two
    // tiles in flight per block: the ranking's barrier no longer drains
    // the loads).
    u64 found = 0, kept = 0, overflow_from = c1;
    Vec x[UC_VECS];
    K xb = K();
    if (c0 < c1) load(c0, x, xb);
    for (u64 tb = c0; tb < c1; tb += UC_TILE) {
        Vec nx[UC_VECS];
        K nb = K();
        if (tb + UC_TILE < c1) load(tb + UC_TILE, nx, nb);
        const bool keep = UC_CAP > 0 && overflow_from == c1;
        found += rank(tb, x, xb, found, [&](u64 place, const K& key) {
            if (keep && place < (u64)UC_CAP) heads[place] = key;
        });
#pragma unroll
        for (int c = 0; c < UC_VECS; c++) x[c] = nx[c];
        xb = nb;
        if (keep) {
            if (found <= (u64)UC_CAP) {
                kept = found;
            } else {
                overflow_from = tb;  // this tile on is read again below
            }
        }
    }

    // The heads before the chunk: one look-back by warp 0.
    if (warp == 0) {
        const u32 me = blockIdx.x;
        const u64 prefix = cuprim_chunk_lookback(state, me, found);
        if (lane == 0) {
            s_prefix = prefix;
            if (me == gridDim.x - 1) *count_out = prefix + found;
        }
    }
    if constexpr (UC_CAP > 0) {
        __syncthreads();
        const u64 prefix = s_prefix;
        for (u64 i = threadIdx.x; i < kept; i += CUPRIM_BLOCK) out[prefix + i] = heads[i];
        // Past an overflow: the rest of the chunk again, each tile's heads
        // staged in `heads` (the tile's own barrier orders the copy above,
        // and each write-out below, before its stores), then written out.
        u64 placed = kept;
        // As the stream above: each tile's loads out before the tile before is ranked.
        // (H200, keys all distinct, 2^24 / 2^27: 65.7 / 489 us against 68.4 / 514
        // a tile at a time; the heads written from registers, uncoalesced, 158 / 1391.)
        if (overflow_from < c1) load(overflow_from, x, xb);
        for (u64 tb = overflow_from; tb < c1; tb += UC_TILE) {
            Vec nx[UC_VECS];
            K nb = K();
            if (tb + UC_TILE < c1) load(tb + UC_TILE, nx, nb);
            const int found_here = (int)rank(tb, x, xb, 0, [&](u64 place, const K& key) { heads[place] = key; });
            __syncthreads();
            for (int i = threadIdx.x; i < found_here; i += CUPRIM_BLOCK) out[prefix + placed + i] = heads[i];
            placed += found_here;
#pragma unroll
            for (int c = 0; c < UC_VECS; c++) x[c] = nx[c];
            xb = nb;
        }
    }
}
