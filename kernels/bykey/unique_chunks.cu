// unique and unique_count by pieces: each block claims a contiguous piece
// of the keys at a time (one atomic cursor gives the piece its place in
// the keys and its number, so pieces are numbered in key order), streams
// it in tiles and keeps the run heads it finds in shared memory; only once
// the piece is done does it look back (one decoupled look-back per piece,
// over the pieces before it: kernels/block/chunk_lookback.cuh, one 64-bit
// word per piece) for the number of heads before it, then copies its heads
// out. The look-back's wait is paid once per piece instead of once per
// tile, so the keys stream at nearly the rate of a plain read.
//
// A piece's length follows the density of heads: the block's first from
// one tile where its even share of the keys would start, each next one
// from the piece before. It is as long as that density says would fill
// three quarters of UC_CAP, between the most keys whose heads always fit
// UC_CAP and `most` keys (sparse heads: about one piece per block, as many
// look-backs as blocks; dense ones: pieces that fit, each key read once).
// A piece whose heads still overflow UC_CAP (the density rose) keeps those
// of the tiles before the overflow and, once its offset is known, reads the
// rest of the piece again, each tile's heads staged in the (then free)
// heads array and written as one contiguous run of slots. unique_count
// (UC_CAP 0) keeps no heads: its pieces are `most` keys long.
//
// Element i is a run head when i == 0 or KeyEq::differ(keys[i - 1],
// keys[i]); each lane tests UC_ITEMS consecutive keys (one warp scan places
// its heads), loaded as whole vectors of the input's buffers where aligned.
// The piece that ends the keys writes the number of runs to count_out[0].
//
// Specialised on: In0 / K (the key expression and its item), KeyEq,
// CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS, UC_CAP (heads a block keeps, in
// UC_CAP * sizeof(K) bytes of dynamic shared memory; 0: unique_count,
// which writes none).

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
// Pieces start and end at multiples of a lane's items (so at vector
// boundaries): the last tile of a piece may be partial.

// The cursor: the next piece's number in the top UC_ID_SHIFT..63 bits, its
// first key below (the host keeps n under 2^40 and the pieces under 2^24).
constexpr int UC_ID_SHIFT = 40;
constexpr u64 UC_AT_MASK = (1ull << UC_ID_SHIFT) - 1;
// The longest piece whose heads always fit (its last tile partial: dense
// heads at 2^27 in 391 against 397 us in whole tiles, H200).
constexpr u64 UC_FIT = UC_CAP > 0 ? (u64)(UC_CAP / UC_ITEMS) * UC_ITEMS : 0;

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_unique_chunks(CUPRIM_INPUT In0 keys, u64 n, u64 most, K* __restrict__ out, u64* __restrict__ count_out,
                         u64* state, u64* cursor) {
    // UC_CAP heads in the dynamic shared memory (more than a block's 48 KiB
    // of static shared memory where the SM has room).
    extern __shared__ __align__(16) unsigned char uc_heads[];
    K* const heads = reinterpret_cast<K*>(uc_heads);
    __shared__ u32 s_counts[2][UC_WARPS];
    // The piece [s_c0, s_c1) streamed and its number, and the length of
    // the next claim (thread 0's).
    __shared__ u64 s_prefix, s_c0, s_c1, s_len;
    __shared__ u32 s_me;
    const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
    const u32 m = keys.template misalign<UC_VEC>();
    const bool vectors = m == 0 || m == CUPRIM_X_ANY;
    int buf = 0;
    u64 c1 = 0;  // the streamed piece's end

    // A lane's keys of tile [tb, tb + UC_TILE) of a piece ending at `end`,
    // as the vectors they are loaded in, and (lane 0) the key before the
    // warp's stretch. Split from `rank` so the stream below can issue the
    // next tile's loads before ranking this one.
    typedef cuprim_arr<K, UC_VEC> Vec;
    constexpr int UC_VECS = UC_ITEMS / UC_VEC;
    auto load = [&](u64 tb, u64 end, Vec (&x)[UC_VECS], K& before) {
        const u64 e = tb + (u64)threadIdx.x * UC_ITEMS;
        if (vectors && e + UC_ITEMS <= end) {
#pragma unroll
            for (int c = 0; c < UC_VECS; c++) x[c] = keys.template load_n<UC_VEC>(e + c * UC_VEC);
        } else {
#pragma unroll
            for (int k = 0; k < UC_ITEMS; k++)
                if (e + k < end) x[k / UC_VEC].v[k % UC_VEC] = keys.load(e + k);
        }
        if (lane == 0 && e > 0 && e < end) before = keys.load(e - 1);
    };

    // The heads among a tile's loaded keys: put(place, key) for each, its
    // place counted from `before` (the piece's heads before the tile).
    // Returns the tile's head count. Every thread calls it.
    auto rank = [&](u64 tb, const Vec (&xv)[UC_VECS], K before_warp, u32 before, auto put) -> u32 {
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
        u32 place = before + warps_before + (incl - count);
#pragma unroll
        for (int k = 0; k < UC_ITEMS; k++)
            if ((flags >> k) & 1) put(place++, x[k]);
        return total;
    };

    // Thread 0: the length of the next claim, as long as `found` heads in
    // `span` keys say fills three quarters of UC_CAP, in whole tiles, at
    // least UC_FIT, at most `most`. (In float: a 64-bit division's
    // registers spilled the u8 keys' kernel. Rounded to lanes' items
    // instead of tiles, runs of 4 at 2^27 took 248 against 241 us, H200.)
    auto plan = [&](u64 span, u32 found) {
        const float fill = (float)span * (0.75f * UC_CAP);
        u64 len = found == 0 || fill / (float)found >= (float)most ? most : (u64)(fill / (float)found);
        len = len / UC_TILE * UC_TILE;
        len = len < UC_FIT ? UC_FIT : len;
        s_len = len < most ? len : most;
    };
    Vec x[UC_VECS];
    K xb = K();
    // `most` is whole tiles (the host's multiple of every UC_TILE).
    if (threadIdx.x == 0) s_len = UC_CAP > 0 && UC_FIT < most ? UC_FIT : most;
    if (UC_CAP > 0 && UC_FIT < most) {
        // The first piece's length from the density of heads in one tile
        // where this block's share of the keys would start.
        const u64 at = (u64)blockIdx.x * (n / gridDim.x) / UC_TILE * UC_TILE;
        c1 = n - at < UC_TILE ? n : at + UC_TILE;
        load(at, c1, x, xb);
        const u32 sampled = rank(at, x, xb, 0, [](u32, const K&) {});
        if (threadIdx.x == 0) plan(c1 - at, sampled);
    }
    // Thread 0: a claim of s_len keys, and the piece it gives.
    auto claim = [&]() -> u64 {
        return atomicAdd((unsigned long long*)cursor, (unsigned long long)((1ull << UC_ID_SHIFT) | s_len));
    };
    auto take = [&](u64 c) {
        const u64 at = c & UC_AT_MASK, len = s_len;
        s_c0 = at;
        s_c1 = at >= n ? n : n - at < len ? n : at + len;
        s_me = (u32)(c >> UC_ID_SHIFT);
    };
    while (true) {
        // Claim the next piece; the barrier publishes it. (Claimed while the
        // last piece's heads went out instead, it measured the same.)
        if (threadIdx.x == 0) take(claim());
        __syncthreads();
        const u64 c0 = s_c0;
        if (c0 >= n) return;
        c1 = s_c1;

        // Stream the piece, keeping heads while they fit. Each tile's
        // loads are issued before the tile before is ranked (two tiles in
        // flight per block: the ranking's barrier no longer drains the
        // loads). Heads of the piece are fewer than 2^32 (a piece is at
        // most `most` keys).
        u32 found = 0, kept = 0;
        u64 overflow_from = c1;
        load(c0, c1, x, xb);
        for (u64 tb = c0; tb < c1; tb += UC_TILE) {
            Vec nx[UC_VECS];
            K nb = K();
            if (tb + UC_TILE < c1) load(tb + UC_TILE, c1, nx, nb);
            const bool keep = UC_CAP > 0 && overflow_from == c1;
            found += rank(tb, x, xb, found, [&](u32 place, const K& key) {
                if (keep && place < (u32)UC_CAP) heads[place] = key;
            });
#pragma unroll
            for (int c = 0; c < UC_VECS; c++) x[c] = nx[c];
            xb = nb;
            if (keep) {
                if (found <= (u32)UC_CAP) {
                    kept = found;
                } else {
                    overflow_from = tb;  // this tile on is read again below
                }
            }
        }

        // The heads before the piece: one look-back by warp 0.
        if (warp == 0) {
            const u64 prefix = cuprim_chunk_lookback(state, s_me, found);
            if (lane == 0) {
                s_prefix = prefix;
                if (c1 == n) *count_out = prefix + found;
            }
        }
        if constexpr (UC_CAP > 0) {
            __syncthreads();
            if (threadIdx.x == 0) plan(c1 - c0, found);
            const u64 prefix = s_prefix;
            for (u32 i = threadIdx.x; i < kept; i += CUPRIM_BLOCK) out[prefix + i] = heads[i];
            // Past an overflow (the heads grew denser than the piece's
            // length assumed): the rest of the piece again, a tile at a
            // time (a rare path), each tile's heads staged in `heads` (the
            // tile's own barrier orders the copy above, and each write-out
            // below, before its stores), then written out.
            u32 placed = kept;
            for (u64 tb = overflow_from; tb < c1; tb += UC_TILE) {
                load(tb, c1, x, xb);
                const u32 found_here = rank(tb, x, xb, 0, [&](u32 place, const K& key) { heads[place] = key; });
                __syncthreads();
                for (u32 i = threadIdx.x; i < found_here; i += CUPRIM_BLOCK) out[prefix + placed + i] = heads[i];
                placed += found_here;
            }
        }
        // Orders this piece's reads of `heads` (and of the piece) before
        // the next one's writes.
        __syncthreads();
    }
}
