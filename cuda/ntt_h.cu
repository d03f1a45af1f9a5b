// The Groth16 quotient H = (A·B − C) / Z on a coset, as bellperson's
// execute_fft computes it: a, b, c are evaluations over the domain of size
// 2^lg (omega = ROOT_OF_UNITY^(2^(32-lg))), zero-padded; each is
// interpolated (iNTT), evaluated on the coset g·<omega> with g = 7 (coset NTT,
// powers of g distributed before the transform), combined point-wise as
// (a·b − c)·z_inv with z_inv = 1/(g^N − 1), and interpolated back (coset iNTT:
// iNTT, then powers of g^-1). The first |out_len| coefficients come back.

#include "common.cuh"
#include <ntt/ntt.cuh>

__launch_bounds__(256) __global__
void h_combine(fr_t* a, const fr_t* b, const fr_t* c, fr_bits_t z_inv, size_t n)
{
#ifdef __CUDA_ARCH__
    fr_t z;
    memcpy(&z, &z_inv, sizeof(z));
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n; i += stride) {
        fr_t x = a[i];
        x *= b[i];
        x -= c[i];
        x *= z;
        a[i] = x;
    }
#endif
}

// sppark's NTT constants for the test that pins them to blstrs; no GPU needed.
CUZK_FFI RustError::by_value cuzk_ntt_constants(uint32_t lg_domain, fr_t* omega,
                                                fr_t* coset_gen)
{
    if (lg_domain > 32)
        return RustError{-cudaErrorInvalidValue, "cuzk: lg_domain > 32"};
    *omega = forward_roots_of_unity[lg_domain];
    *coset_gen = group_gen;
    return RustError{cudaSuccess};
}

CUZK_FFI RustError::by_value cuzk_compute_h(int device_id,
                                            const fr_t* a, const fr_t* b, const fr_t* c,
                                            size_t n, uint32_t lg_domain,
                                            const fr_bits_t* z_inv,
                                            fr_t* out, size_t out_len)
{
    CUZK_TRY(device_id, {
        if (lg_domain == 0 || lg_domain > MAX_LG_DOMAIN_SIZE)
            return RustError{-cudaErrorInvalidValue,
                             fmt("cuzk: lg_domain %u outside 1..=%d", lg_domain,
                                 MAX_LG_DOMAIN_SIZE)};
        const size_t N = (size_t)1 << lg_domain;
        if (n > N || out_len > N)
            return RustError{-cudaErrorInvalidValue, "cuzk: a/b/c or out longer than the domain"};

        using IO = NTT::InputOutputOrder;
        using Dir = NTT::Direction;
        using Ty = NTT::Type;

        dev_ptr_t<fr_t> d_abc{3 * N};
        fr_t* d[3] = { &d_abc[0], &d_abc[N], &d_abc[2 * N] };
        const fr_t* h[3] = { a, b, c };

        // a, b, c on their own streams: one's copy overlaps another's NTTs.
        for (int i = 0; i < 3; i++) {
            stream_t& s = gpu[i];
            if (n)
                s.HtoD(d[i], h[i], n);
            if (n < N)
                s.bzero(d[i] + n, N - n);
            NTT::Base_dev_ptr(s, d[i], lg_domain, IO::NR, Dir::inverse, Ty::standard);
            NTT::Base_dev_ptr(s, d[i], lg_domain, IO::RN, Dir::forward, Ty::coset);
        }
        event_t b_done, c_done;
        b_done.record(gpu[1]);
        c_done.record(gpu[2]);
        stream_t& s = gpu[0];
        s.wait(b_done);
        s.wait(c_done);

        unsigned blocks = (unsigned)std::min<size_t>((N + 255) / 256,
                                                     (size_t)gpu.sm_count() * 16);
        h_combine<<<blocks, 256, 0, s>>>(d[0], d[1], d[2], *z_inv, N);
        CUDA_OK(cudaGetLastError());

        NTT::Base_dev_ptr(s, d[0], lg_domain, IO::NN, Dir::inverse, Ty::coset);
        if (out_len)
            s.DtoH(out, d[0], out_len);
        gpu.sync();
    })
}
