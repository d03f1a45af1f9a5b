// The Groth16 quotient H = (A·B − C) / Z on a coset, as bellperson's
// execute_fft computes it: a, b, c are evaluations over the domain of size
// 2^lg (omega = ROOT_OF_UNITY^(2^(32-lg))), zero-padded; each is
// interpolated (iNTT), evaluated on the coset g·<omega> with g = 7 (coset NTT,
// powers of g distributed before the transform), combined point-wise as
// (a·b − c)·z_inv with z_inv = 1/(g^N − 1), and interpolated back (coset iNTT:
// iNTT, then powers of g^-1). The first |out_len| coefficients stay on the
// device for the H MSM; a, b, c go up through the pinned staging.

#include "dev_vec.cuh"
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

// Waits, when it goes out of scope, for the work queued on every stream of
// |gpu| (never throws). Declared after the buffers those streams use, it
// runs before they are freed: an exception thrown while streams 1 and 2 are
// still uploading or transforming must not free their memory (in stream 0's
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

// A CUDA event that can time (sppark's event_t is created without timing).
class timing_event_t {
    cudaEvent_t e = nullptr;
public:
    timing_event_t()    {   CUDA_OK(cudaEventCreate(&e));   }
    ~timing_event_t()   {   if (e) (void)cudaEventDestroy(e);   }
    timing_event_t(const timing_event_t&) = delete;
    timing_event_t& operator=(const timing_event_t&) = delete;
    operator cudaEvent_t() const    {   return e;   }
    void record(cudaStream_t s)     {   CUDA_OK(cudaEventRecord(e, s));   }
    float ms_since(const timing_event_t& from) const
    {   float ms; CUDA_OK(cudaEventElapsedTime(&ms, from.e, e)); return ms;   }
};

struct cuzk_h_times_t {     // mirrored by src/gpu/ffi.rs
    float upload_ms;        // start until the last of a, b, c is on the device
    float ntt_ms;           // from there until H is ready
};

// H's first |out_len| coefficients, as a new vector on the device (*out).
CUZK_FFI RustError::by_value cuzk_compute_h(int device_id,
                                            const fr_t* a, const fr_t* b, const fr_t* c,
                                            size_t n, uint32_t lg_domain,
                                            const fr_bits_t* z_inv, size_t out_len,
                                            scalars_t** out, cuzk_h_times_t* times)
{
    *out = nullptr;
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

        std::unique_ptr<scalars_t> h{new scalars_t(gpu, N, lifetime_t::proof)};
        dev_ptr_t<fr_t> d_bc{2 * N, gpu[0]};
        streams_joined_t joined{gpu};
        fr_t* d[3] = { h->d, &d_bc[0], &d_bc[N] };
        const fr_t* src[3] = { a, b, c };
        timing_event_t start, uploaded, done;
        start.record(gpu[0]);

        // a, b, c on their own streams: the host copies b and c into the
        // staging while the device transforms a (and b).
        for (int i = 0; i < 3; i++) {
            stream_t& s = gpu[i];
            if (i)
                s.wait(start);
            if (n)
                staged_upload(gpu, s, d[i], src[i], n * sizeof(fr_t));
            if (i == 2)
                uploaded.record(s);
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
        done.record(s);
        gpu.sync();
        times->upload_ms = uploaded.ms_since(start);
        times->ntt_ms = done.ms_since(uploaded);
        h->len = out_len;
        *out = h.release();
    })
}
