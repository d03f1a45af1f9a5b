// a = A·z, b = B·z, c = C·z on the device, from a PCE's compact CSR form
// (src/pce/matrix.rs): one u32 word per non-zero, the column in the low 30
// bits, the top two saying +1, -1, or "the next word indexes the
// dictionary"; z = [inputs | aux]. The matrices are uploaded once per device
// and PCE; a proof brings only its witness, and a, b, c never leave the
// device.
//
// The host validated every index before the upload, and the kernel checks
// them again (a bad one reads as zero and fails the call): whatever the
// words say, no thread reads outside its buffers, so a device copy can never
// bring down the context the other proofs share.

#include "dev_vec.cuh"

namespace {

constexpr uint32_t COL_BITS = 30;
constexpr uint32_t COL_MASK = (1u << COL_BITS) - 1;
constexpr uint32_t TAG_PLUS_ONE = 0, TAG_MINUS_ONE = 1, TAG_DICT = 2;

// Per-call flags on the device: the first row with a·b != c, and whether a
// word or row pointer was out of range.
struct eval_flags_t {
    unsigned long long first_unsatisfied;
    unsigned int corrupt;
};

__launch_bounds__(256) __global__
void spmv_rows(fr_t* out, const uint32_t* row_ptr, const uint32_t* words, size_t nwords,
               const fr_t* dict, size_t dict_len, const fr_t* inputs, size_t num_inputs,
               const fr_t* aux, size_t num_cols, size_t rows, eval_flags_t* flags)
{
#ifdef __CUDA_ARCH__
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t r = threadIdx.x + (size_t)blockIdx.x * blockDim.x; r < rows; r += stride) {
        size_t k = row_ptr[r], end = row_ptr[r + 1];
        bool bad = end < k || end > nwords;
        if (bad)
            end = k;
        fr_t acc;
        acc.zero();
        for (; k < end; k++) {
            uint32_t w = words[k], tag = w >> COL_BITS, col = w & COL_MASK;
            if (col >= num_cols || tag > TAG_DICT) {
                bad = true;
                continue;
            }
            const fr_t& v = col < num_inputs ? inputs[col] : aux[col - num_inputs];
            if (tag == TAG_PLUS_ONE) {
                acc += v;
            } else if (tag == TAG_MINUS_ONE) {
                acc -= v;
            } else if (++k < end && words[k] < dict_len) {
                acc += v * dict[words[k]];
            } else {
                bad = true;
            }
        }
        out[r] = acc;
        if (bad)
            flags->corrupt = 1;
    }
#endif
}

__launch_bounds__(256) __global__
void first_unsatisfied(const fr_t* a, const fr_t* b, const fr_t* c, size_t rows,
                       eval_flags_t* flags)
{
#ifdef __CUDA_ARCH__
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t r = threadIdx.x + (size_t)blockIdx.x * blockDim.x; r < rows; r += stride) {
        fr_t x = a[r];
        x *= b[r];
        x -= c[r];
        if (!x.is_zero())
            atomicMin(&flags->first_unsatisfied, (unsigned long long)r);
    }
#endif
}

} // namespace

// A, B and C of one PCE on one device (plain allocations, for the PCE's life).
struct matrices_t {
    int device_id = 0;
    size_t rows = 0, num_inputs = 0, num_cols = 0, dict_len = 0;
    size_t nwords[3] = {};
    uint32_t* row_ptr[3] = {};
    uint32_t* words[3] = {};
    fr_t* dict = nullptr;

    ~matrices_t()
    {
        current_device_restore_t restore_device;
        try {
            select_gpu(device_id);
            for (int i = 0; i < 3; i++) {
                (void)cudaFree(row_ptr[i]);
                (void)cudaFree(words[i]);
            }
            (void)cudaFree(dict);
        } catch (...) {}
    }
};

template<class T>
static T* upload_plain(const gpu_t& gpu, const T* host, size_t n)
{
    T* d;
    CUDA_OK(cudaMalloc(&d, (n ? n : 1) * sizeof(T)));
    if (n)
        staged_upload(gpu, LANE_THROUGHPUT, gpu, d, host, n * sizeof(T));
    return d;
}

// Copies A, B, C (|rows| + 1 row pointers and |nwords[i]| words each), the
// dictionary and the input count to device |device_id|.
CUZK_FFI RustError::by_value cuzk_matrices_new(int device_id, const uint32_t* const row_ptr[3],
                                               const uint32_t* const words[3],
                                               const size_t nwords[3], size_t rows,
                                               const fr_t* dict, size_t dict_len,
                                               size_t num_inputs, size_t num_cols,
                                               matrices_t** out)
{
    *out = nullptr;
    CUZK_TRY(device_id, {
        if (num_inputs > num_cols || num_cols > (size_t)COL_MASK + 1)
            return RustError{-cudaErrorInvalidValue, "cuzk: bad matrix dimensions"};
        std::unique_ptr<matrices_t> m{new matrices_t};
        m->device_id = device_id;
        m->rows = rows;
        m->num_inputs = num_inputs;
        m->num_cols = num_cols;
        m->dict_len = dict_len;
        for (int i = 0; i < 3; i++) {
            m->nwords[i] = nwords[i];
            m->row_ptr[i] = upload_plain(gpu, row_ptr[i], rows + 1);
            m->words[i] = upload_plain(gpu, words[i], nwords[i]);
        }
        m->dict = upload_plain(gpu, dict, dict_len);
        gpu.sync();
        *out = m.release();
    })
}

CUZK_FFI void cuzk_matrices_free(matrices_t* m)
{   delete m;   }

// a, b, c of the witness (|inputs|, |aux|: device vectors on the matrices'
// device and one lane, where this runs) as three new device vectors of that
// lane, 2^|lg_domain| values each, zero past the rows: ready for
// cuzk_compute_h. *first_unsatisfied is the first
// row with a·b != c, or UINT64_MAX when every row holds.
CUZK_FFI RustError::by_value cuzk_matrices_eval(const matrices_t* m, const scalars_t* inputs,
                                                const scalars_t* aux, uint32_t lg_domain,
                                                scalars_t* out[3], uint64_t* first_unsat)
{
    out[0] = out[1] = out[2] = nullptr;
    *first_unsat = UINT64_MAX;
    if (m == nullptr || inputs == nullptr || aux == nullptr)
        return RustError{-cudaErrorInvalidValue, "cuzk: null matrices or witness handle"};
    CUZK_TRY_ON(m->device_id, aux->lane, {
        if (inputs->device_id != m->device_id || aux->device_id != m->device_id)
            return RustError{-cudaErrorInvalidValue, "cuzk: witness on another device"};
        if (inputs->lane != aux->lane)
            return RustError{-cudaErrorInvalidValue, "cuzk: witness on two lanes"};
        if (inputs->len != m->num_inputs || inputs->len + aux->len != m->num_cols)
            return RustError{-cudaErrorInvalidValue, "cuzk: witness of another shape"};
        if (lg_domain > 32 || ((size_t)1 << lg_domain) < m->rows)
            return RustError{-cudaErrorInvalidValue, "cuzk: domain smaller than the rows"};
        const size_t N = (size_t)1 << lg_domain, n = m->rows;
        stream_t& s = gpu;
        std::unique_ptr<scalars_t> abc[3];
        for (auto& v : abc)
            v.reset(new scalars_t(gpu, N, lifetime_t::proof, aux->lane));
        dev_ptr_t<eval_flags_t> d_flags{1, s};
        eval_flags_t flags{UINT64_MAX, 0};
        CUDA_OK(cudaMemcpyAsync(&d_flags[0], &flags, sizeof(flags), cudaMemcpyHostToDevice, s));
        for (int i = 0; i < 3; i++) {
            if (n)
                spmv_rows<<<blocks_for(n), 256, 0, s>>>(
                    abc[i]->d, m->row_ptr[i], m->words[i], m->nwords[i], m->dict, m->dict_len,
                    inputs->d, m->num_inputs, aux->d, m->num_cols, n, &d_flags[0]);
            CUDA_OK(cudaGetLastError());
            if (n < N)
                s.bzero(abc[i]->d + n, N - n);
        }
        if (n)
            first_unsatisfied<<<blocks_for(n), 256, 0, s>>>(abc[0]->d, abc[1]->d,
                                                                 abc[2]->d, n, &d_flags[0]);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaMemcpyAsync(&flags, &d_flags[0], sizeof(flags), cudaMemcpyDeviceToHost, s));
        s.sync();
        if (flags.corrupt)
            return RustError{-cudaErrorInvalidValue,
                             "cuzk: the matrices on the device hold an index out of range"};
        *first_unsat = flags.first_unsatisfied;
        for (int i = 0; i < 3; i++)
            out[i] = abc[i].release();
    })
}
