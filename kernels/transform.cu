// Element-wise unary transform: out[i] = UnaryFn::apply(in[i]).
// Specialised on: T (input), U (output), UnaryFn.

constexpr int TR_ITEMS = 16 / (sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
typedef cuprim_vec<T, TR_ITEMS> TrIn;
typedef cuprim_vec<U, TR_ITEMS> TrOut;

extern "C" __global__ void cuprim_transform(const T* __restrict__ in, U* __restrict__ out, u64 n) {
    if (cuprim_aligned_to<TrIn>(in) && cuprim_aligned_to<TrOut>(out)) {
        const u64 nv = n / TR_ITEMS;
        const TrIn* vin = (const TrIn*)in;
        TrOut* vout = (TrOut*)out;
        cuprim_grid_stride<CUPRIM_UNROLL>(
            nv, [&](u64 i) { return vin[i]; },
            [&](u64 i, const TrIn& x) {
                TrOut y;
#pragma unroll
                for (int k = 0; k < TR_ITEMS; k++) y.v[k] = UnaryFn::apply(x.v[k]);
                vout[i] = y;
            });
        const u64 t = nv * TR_ITEMS + cuprim_thread_id();
        if (t < n) out[t] = UnaryFn::apply(in[t]);
    } else {
        for (u64 i = cuprim_thread_id(); i < n; i += cuprim_thread_count()) {
            out[i] = UnaryFn::apply(in[i]);
        }
    }
}
