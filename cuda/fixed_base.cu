// Fixed-base scalar multiplication for the Groth16 setup: s_i·P for many
// scalars s_i and one point P, in G1 and G2, from the window table the host
// builds (params/setup.rs's FixedBase: d·2^(w·k)·P for every window k and
// digit d >= 1, affine, blst's layout). A product is one mixed addition per
// non-zero window, then one inversion to affine; no doublings.
//
// A G1 product is one thread's; a G2 product is a pair of threads' (sppark's
// device fp2_t holds one coordinate half per thread). The inversion
// (sppark's reciprocal) shuffles across a whole warp, so every thread of
// every launched warp runs it: threads past the end multiply by zero and
// store nothing.

#include "common.cuh"
#include <ff/bls12-381-fp2.hpp>

namespace {

// An affine point as blst lays it out (Montgomery limbs, infinity = (0, 0)).
template<class field_t> struct affine_mem_t {
    typename field_t::mem_t X, Y;
};

// A running sum in XYZZ coordinates (x = X/ZZ, y = Y/ZZZ); ZZ = ZZZ = 0 is
// infinity. `inf` is uniform across a G2 pair (both threads read the same
// scalar), so the branches on it are too; fp2_t's is_zero is pair-uniform.
template<class field_t> struct xyzz_sum_t {
    field_t X, Y, ZZ, ZZZ;
    bool inf;

    // += (x2, y2), an affine point that is not infinity: madd-2008-s, or the
    // doubling mdbl-2008-s-1 when the sum equals it.
    __device__ __forceinline__ void add(const field_t& x2, const field_t& y2)
    {
        if (inf) {
            X = x2; Y = y2;
            ZZ = field_t::one(); ZZZ = ZZ;
            inf = false;
            return;
        }
        field_t P = x2 * ZZ;        // U2
        field_t R = y2 * ZZZ;       // S2
        P -= X;
        R -= Y;
        if (!P.is_zero()) {
            field_t PP = P^2;
            field_t PPP = P * PP;
            field_t Q = X * PP;
            X = R^2;
            X -= PPP;
            X -= Q;
            X -= Q;
            Q -= X;
            Q *= R;
            Y *= PPP;
            Y = Q - Y;
            ZZ *= PP;
            ZZZ *= PPP;
        } else if (R.is_zero()) {
            field_t U = y2 + y2;
            field_t V = U^2;
            field_t W = U * V;
            field_t S = x2 * V;
            field_t M = x2^2;
            M = M + M + M;
            X = M^2;
            X -= S;
            X -= S;
            S -= X;
            S *= M;
            Y = W * y2;
            Y = S - Y;
            ZZ = V;
            ZZZ = W;
        } else {
            inf = true;
        }
    }
};

// out[i] = scalars[i]·P for i < n (scalars canonical, not Montgomery), from
// table[k·(2^window − 1) + d − 1] = d·2^(window·k)·P.
template<class field_t>
__launch_bounds__(256) __global__
void fixed_base_mul(affine_mem_t<field_t>* out, const affine_mem_t<field_t>* table,
                    const fr_bits_t* scalars, size_t n, unsigned window, unsigned windows)
{
    const size_t tid = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    const size_t i = tid / field_t::degree;
    fr_bits_t s{};
    if (i < n)
        s = scalars[i];
    const size_t digits = ((size_t)1 << window) - 1;
    xyzz_sum_t<field_t> acc;
    acc.inf = true;
    acc.X = field_t::one(1);    // zero
    acc.Y = acc.X;
    acc.ZZ = acc.X;
    acc.ZZZ = acc.X;
    for (unsigned k = 0; k < windows; k++) {
        const unsigned bit = k * window, limb = bit / 64, shift = bit % 64;
        uint64_t word = s.l[limb] >> shift;
        if (shift + window > 64 && limb + 1 < 4)
            word |= s.l[limb + 1] << (64 - shift);
        const size_t d = word & digits;
        if (d != 0) {
            const affine_mem_t<field_t>& p = table[k * digits + d - 1];
            acc.add(p.X, p.Y);
        }
    }
    if (acc.inf) {              // also a sum that cancelled to infinity
        acc.ZZ = field_t::one(1);
        acc.ZZZ = acc.ZZ;
    }
    // Every thread of the warp: reciprocal shuffles across it. 1/0 is 0, so
    // infinity comes out (0, 0).
    field_t zi = acc.ZZZ.reciprocal();     // 1/Z^3
    field_t x = zi * acc.ZZ;                // 1/Z
    x = x^2;                                // 1/Z^2
    x *= acc.X;
    field_t y = zi * acc.Y;
    if (i < n) {
        out[i].X = x;
        out[i].Y = y;
    }
}

// The products of scalars[0..n) in pieces of PIECE: a piece's scalars up,
// its products computed, its points down, the table resident throughout.
constexpr size_t PIECE = (size_t)1 << 22;

template<class field_t>
RustError fixed_base(int device_id, affine_mem_t<field_t>* out, const affine_mem_t<field_t>* table,
                     unsigned window, const fr_bits_t* scalars, size_t n)
{
    typedef affine_mem_t<field_t> affine_h;
    if (window == 0 || window > 24)
        return RustError{-cudaErrorInvalidValue, fmt("cuzk: fixed-base window %u outside 1..=24", window)};
    const unsigned windows = (255 + window - 1) / window;
    const size_t table_len = (size_t)windows * (((size_t)1 << window) - 1);
    CUZK_TRY(device_id, {
        const stream_t& s = gpu;
        dev_ptr_t<affine_h> d_table{table_len, s};
        dev_ptr_t<fr_bits_t> d_scalars{std::min(n, PIECE), s};
        dev_ptr_t<affine_h> d_out{std::min(n, PIECE), s};
        s.HtoD(&d_table[0], table, table_len);
        for (size_t off = 0; off < n; off += PIECE) {
            const size_t m = std::min(PIECE, n - off);
            s.HtoD(&d_scalars[0], scalars + off, m);
            fixed_base_mul<field_t><<<blocks_for(m * field_t::degree), 256, 0, s>>>(
                d_out, d_table, d_scalars, m, window, windows);
            CUDA_OK(cudaGetLastError());
            s.DtoH(out + off, &d_out[0], m);
        }
        s.sync();
    })
}

} // namespace

// out[i] = scalars[i]·P in G1 for i < n, P's table as above (host memory,
// `windows·(2^window − 1)` points); scalars canonical little-endian words.
CUZK_FFI RustError cuzk_g1_fixed_base(int device_id, void* out, const void* table, unsigned window,
                                      const void* scalars, size_t n)
{
    return fixed_base<fp_t>(device_id, (affine_mem_t<fp_t>*)out, (const affine_mem_t<fp_t>*)table,
                            window, (const fr_bits_t*)scalars, n);
}

// cuzk_g1_fixed_base in G2.
CUZK_FFI RustError cuzk_g2_fixed_base(int device_id, void* out, const void* table, unsigned window,
                                      const void* scalars, size_t n)
{
    return fixed_base<fp2_t>(device_id, (affine_mem_t<fp2_t>*)out, (const affine_mem_t<fp2_t>*)table,
                             window, (const fr_bits_t*)scalars, n);
}
