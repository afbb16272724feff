// Element-wise binary transform: out[i] = BinaryFn::apply(a[i], b[i]).
// Specialised on: T, BinaryFn.

constexpr int TR2_ITEMS = 16 / sizeof(T);
typedef cuprim_vec<T, TR2_ITEMS> Tr2Vec;
struct Tr2Pair {
    Tr2Vec a, b;
};

extern "C" __global__ void cuprim_transform2(const T* __restrict__ a, const T* __restrict__ b,
                                             T* __restrict__ out, u64 n) {
    if (cuprim_aligned_to<Tr2Vec>(a) && cuprim_aligned_to<Tr2Vec>(b) &&
        cuprim_aligned_to<Tr2Vec>(out)) {
        const u64 nv = n / TR2_ITEMS;
        const Tr2Vec* va = (const Tr2Vec*)a;
        const Tr2Vec* vb = (const Tr2Vec*)b;
        Tr2Vec* vout = (Tr2Vec*)out;
        cuprim_grid_stride<CUPRIM_UNROLL>(
            nv, [&](u64 i) { return Tr2Pair{va[i], vb[i]}; },
            [&](u64 i, const Tr2Pair& x) {
                Tr2Vec y;
#pragma unroll
                for (int k = 0; k < TR2_ITEMS; k++) y.v[k] = BinaryFn::apply(x.a.v[k], x.b.v[k]);
                vout[i] = y;
            });
        const u64 t = nv * TR2_ITEMS + cuprim_thread_id();
        if (t < n) out[t] = BinaryFn::apply(a[t], b[t]);
    } else {
        for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) {
            out[i] = BinaryFn::apply(a[i], b[i]);
        }
    }
}
