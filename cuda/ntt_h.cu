// The Groth16 quotient H = (A·B − C) / Z on a coset, equal to what
// bellperson's execute_fft computes: a, b, c are evaluations over the domain
// of size 2^lg (omega = ROOT_OF_UNITY^(2^(32-lg))), zero-padded; a and b are
// interpolated (iNTT) and evaluated on the coset g·<omega> with g = 7 (coset
// NTT), and Z is the constant g^N − 1 there (z_inv = its inverse). bellperson
// takes c through the same two transforms and interpolates
// (a·b − c)·z_inv back from the coset (coset iNTT). The coset iNTT is linear
// and undoes c's coset NTT, so here
//   H = (cosetiNTT(a·b) − iNTT(c))·z_inv,
// bit for bit the same, with six NTTs instead of seven. The first |out_len|
// coefficients stay on the device for the H MSM.

#include "dev_vec.cuh"
#include <ntt/ntt.cuh>

__launch_bounds__(256) __global__
void h_product(fr_t* a, const fr_t* b, size_t n)
{
#ifdef __CUDA_ARCH__
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n; i += stride)
        a[i] *= b[i];
#endif
}

__launch_bounds__(256) __global__
void h_quotient(fr_t* h, const fr_t* c, fr_bits_t z_inv, size_t n)
{
#ifdef __CUDA_ARCH__
    fr_t z;
    memcpy(&z, &z_inv, sizeof(z));
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n; i += stride) {
        fr_t x = h[i];
        x -= c[i];
        h[i] = x * z;
    }
#endif
}

// sppark's bit reversal, which its NTT class keeps to itself and its
// subclasses.
struct ntt_h_t : NTT {
    using NTT::bit_rev;
};

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

// Waits, when it goes out of scope, for the work queued on every stream of
// |gpu| (never throws). Declared after the buffers those streams use, it
// runs before they are freed: an exception thrown while streams 1 and 2 are
// still transforming must not free their memory (in stream 0's
// order) under them.
class streams_joined_t {
    const gpu_t& gpu;
public:
    explicit streams_joined_t(const gpu_t& g) : gpu(g) {}
    ~streams_joined_t()
    {
        (void)cudaStreamSynchronize((cudaStream_t)gpu);
        for (size_t i = 0; i < gpu_t::FLIP_FLOP; i++)
            (void)cudaStreamSynchronize(gpu[i]);
    }
    streams_joined_t(const streams_joined_t&) = delete;
    streams_joined_t& operator=(const streams_joined_t&) = delete;
};

// H's first |out_len| coefficients, as a vector on the device (*out). |a|,
// |b| and |c| (2^|lg_domain| values each on device |device_id| and one lane,
// where this runs: e.g. from cuzk_matrices_eval) are consumed on every path:
// b and c are freed and H takes a's buffer.
CUZK_FFI RustError::by_value cuzk_compute_h(int device_id, scalars_t* a, scalars_t* b,
                                            scalars_t* c, uint32_t lg_domain,
                                            const fr_bits_t* z_inv, size_t out_len,
                                            scalars_t** out)
{
    *out = nullptr;
    std::unique_ptr<scalars_t> v[3] = { std::unique_ptr<scalars_t>{a},
                                        std::unique_ptr<scalars_t>{b},
                                        std::unique_ptr<scalars_t>{c} };
    const int lane = a ? a->lane : LANE_THROUGHPUT;
    CUZK_TRY_ON(device_id, lane, {
        if (lg_domain == 0 || lg_domain > MAX_LG_DOMAIN_SIZE)
            return RustError{-cudaErrorInvalidValue,
                             fmt("cuzk: lg_domain %u outside 1..=%d", lg_domain,
                                 MAX_LG_DOMAIN_SIZE)};
        const size_t N = (size_t)1 << lg_domain;
        for (auto& x : v)
            if (!x || x->device_id != device_id || x->lane != lane || x->len != N)
                return RustError{-cudaErrorInvalidValue,
                                 "cuzk: a, b, c must be domain-long vectors on the device and one lane"};
        if (out_len > N)
            return RustError{-cudaErrorInvalidValue, "cuzk: out longer than the domain"};

        using IO = NTT::InputOutputOrder;
        using Dir = NTT::Direction;
        using Ty = NTT::Type;

        streams_joined_t joined{gpu};
        // a, b, c were written in the order of the lane's first stream. a and
        // b go to the coset (natural order), c's coefficients stay in
        // bit-reversed order, and so does cosetiNTT(a·b) until the end.
        event_t ready{(cudaStream_t)gpu};
        for (int i = 0; i < 3; i++) {
            stream_t& s = gpu[i];
            s.wait(ready);
            NTT::Base_dev_ptr(s, v[i]->d, lg_domain, IO::NR, Dir::inverse, Ty::standard);
            if (i < 2)
                NTT::Base_dev_ptr(s, v[i]->d, lg_domain, IO::RN, Dir::forward, Ty::coset);
        }
        event_t b_done, c_done;
        b_done.record(gpu[1]);
        c_done.record(gpu[2]);
        stream_t& s = gpu[0];
        s.wait(b_done);
        h_product<<<blocks_for(N), 256, 0, s>>>(v[0]->d, v[1]->d, N);
        CUDA_OK(cudaGetLastError());
        NTT::Base_dev_ptr(s, v[0]->d, lg_domain, IO::NR, Dir::inverse, Ty::coset);
        s.wait(c_done);
        h_quotient<<<blocks_for(N), 256, 0, s>>>(v[0]->d, v[2]->d, *z_inv, N);
        CUDA_OK(cudaGetLastError());
        ntt_h_t::bit_rev(v[0]->d, v[0]->d, lg_domain, s);
        gpu.sync();
        v[0]->len = out_len;
        *out = v[0].release();
    })
}
