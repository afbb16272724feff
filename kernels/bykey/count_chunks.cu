// unique_count of long inputs: block b streams piece b of the keys (`most`
// keys, a wave's share, so one block per piece and one wave), counts the
// run heads in it and adds its count to count_out[0] (zero before the
// launch) with one atomic. Only the total is wanted, so no piece waits for
// another.
//
// Element i is a run head when i == 0 or KeyEq::differ(keys[i - 1],
// keys[i]); each lane tests UC_ITEMS consecutive keys, loaded as whole
// vectors of the input's buffers where aligned.
//
// Specialised on: In0 / K (the key expression and its item), KeyEq,
// CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS.

constexpr int UC_WARPS = CUPRIM_BLOCK / 32;
// A lane's consecutive keys: 32 bytes of them (16 of keys under 4 bytes,
// whose two tiles in flight would not fit the registers unpacked), and
// whole vectors of the input's widest buffer.
constexpr int UC_VEC = cuprim_x_items<In0>();
constexpr int UC_LANE_BYTES = sizeof(K) >= 4 ? 32 : 16;
constexpr int UC_ITEMS = UC_LANE_BYTES / (int)sizeof(K) > UC_VEC ? UC_LANE_BYTES / (int)sizeof(K) : UC_VEC;
static_assert(UC_ITEMS % UC_VEC == 0 && UC_ITEMS <= 32, "whole vectors; one 32-bit mask of flags per lane");
constexpr int UC_TILE = CUPRIM_BLOCK * UC_ITEMS;

extern "C" __global__ void __launch_bounds__(CUPRIM_BLOCK, CUPRIM_MIN_BLOCKS)
    cuprim_count_chunks(CUPRIM_INPUT In0 keys, u64 n, u64 most, u64* __restrict__ count_out) {
    __shared__ u32 s_counts[2][UC_WARPS];
    const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5);
    const u32 m = keys.template misalign<UC_VEC>();
    const bool vectors = m == 0 || m == CUPRIM_X_ANY;
    int buf = 0;

    // A lane's keys of tile [tb, tb + UC_TILE) of a piece ending at `end`,
    // as the vectors they are loaded in, and (lane 0) the key before the
    // warp's stretch. Split from `count` so the stream below can issue the
    // next tile's loads before counting this one.
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

    // The heads among a tile's loaded keys of a piece ending at `end`.
    // Every thread calls it and gets the tile's count.
    auto count = [&](u64 tb, u64 end, const Vec (&xv)[UC_VECS], K before_warp) -> u32 {
        const u64 e = tb + (u64)threadIdx.x * UC_ITEMS;
        K x[UC_ITEMS];
#pragma unroll
        for (int k = 0; k < UC_ITEMS; k++) x[k] = xv[k / UC_VEC].v[k % UC_VEC];
        // The key before the lane's first: the lane before's last, or for
        // a warp's first lane the key before the warp's stretch.
        K prev = cuprim_shfl_up(x[UC_ITEMS - 1], 1);
        if (lane == 0) prev = before_warp;
        u32 heads = 0;
#pragma unroll
        for (int k = 0; k < UC_ITEMS; k++) {
            const u64 i = e + k;
            if (i < end && (i == 0 || KeyEq::differ(k == 0 ? prev : x[k - 1], x[k]))) heads++;
        }
        const u32 sum = cuprim_warp_inclusive_sum(heads);
        if (lane == 31) s_counts[buf][warp] = sum;
        __syncthreads();
        u32 total = 0;
#pragma unroll
        for (int w = 0; w < UC_WARPS; w++) total += s_counts[buf][w];
        buf ^= 1;  // the next tile's counts go to the other buffer: no second barrier
        return total;
    };

    // The piece: [c0, c1), starting at a whole tile (the host's `most` is
    // whole tiles; its last tile may be partial).
    const u64 c0 = (u64)blockIdx.x * most;
    const u64 c1 = n - c0 < most ? n : c0 + most;

    // Each tile's loads are issued before the tile before is counted (two
    // tiles in flight per block: the count's barrier does not drain the
    // loads).
    Vec x[UC_VECS];
    K xb = K();
    u64 found = 0;
    load(c0, c1, x, xb);
    for (u64 tb = c0; tb < c1; tb += UC_TILE) {
        Vec nx[UC_VECS];
        K nb = K();
        if (tb + UC_TILE < c1) load(tb + UC_TILE, c1, nx, nb);
        found += count(tb, c1, x, xb);
#pragma unroll
        for (int c = 0; c < UC_VECS; c++) x[c] = nx[c];
        xb = nb;
    }
    if (threadIdx.x == 0) atomicAdd((unsigned long long*)count_out, found);
}
