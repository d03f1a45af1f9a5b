// a = A·z, b = B·z, c = C·z on the device, from a PCE's compact CSR form
// (src/pce/matrix.rs): one u32 word per non-zero, the column in the low 30
// bits, the top two saying +1, -1, or "the next word indexes the
// dictionary"; z = [inputs | aux]. The matrices are uploaded once per device
// and PCE; a proof brings only its witness, and a, b, c never leave the
// device.
//
// A thread evaluates a row, but a warp a long row (more than LONG_ROW words:
// SHA-256's additions pack hundreds of bits into one constraint), since one
// long row among 31 short ones held its whole warp (in sha256-chain's A a
// warp did 1/15 of the additions it could).
//
// The host validated every index before the upload, and the kernels check
// them again (a bad one reads as zero and fails the call): whatever the
// words say, no thread reads outside its buffers, so a device copy can never
// bring down the context the other proofs share.

#include "dev_vec.cuh"

namespace {

constexpr uint32_t COL_BITS = 30;
constexpr uint32_t COL_MASK = (1u << COL_BITS) - 1;
constexpr uint32_t TAG_PLUS_ONE = 0, TAG_MINUS_ONE = 1, TAG_DICT = 2;
constexpr uint32_t LONG_ROW = 32;

// Per-call flags on the device: the first row with a·b != c, and whether a
// word or row pointer was out of range.
struct eval_flags_t {
    unsigned long long first_unsatisfied;
    unsigned int corrupt;
};

// One matrix on the device, and the vector z = [inputs | aux] with the
// dictionary it is multiplied by.
struct product_t {
    const uint32_t* row_ptr;
    const uint32_t* words;
    size_t nwords, rows;
    const fr_t* dict;
    size_t dict_len;
    const fr_t* inputs;
    size_t num_inputs;
    const fr_t* aux;
    size_t num_cols;

#ifdef __CUDA_ARCH__
    // Row r's words [*begin, *end), or false (and an empty row) when its
    // pointers are out of range.
    __device__ bool row(size_t r, size_t* begin, size_t* end) const
    {
        *begin = row_ptr[r];
        *end = row_ptr[r + 1];
        const bool ok = *begin <= *end && *end <= nwords;
        if (!ok)
            *end = *begin;
        return ok;
    }

    // Adds the term of word |w| to |acc|: ±z[col], or z[col]·dict[*index]
    // for a TAG_DICT word, |index| pointing at the word after it (null when
    // the row ends first). False on anything out of range.
    __device__ bool add_term(fr_t& acc, uint32_t w, const uint32_t* index) const
    {
        const uint32_t tag = w >> COL_BITS, col = w & COL_MASK;
        if (col >= num_cols || tag > TAG_DICT)
            return false;
        const fr_t& v = col < num_inputs ? inputs[col] : aux[col - num_inputs];
        if (tag == TAG_PLUS_ONE)
            acc += v;
        else if (tag == TAG_MINUS_ONE)
            acc -= v;
        else if (index != nullptr && *index < dict_len)
            acc += v * dict[*index];
        else
            return false;
        return true;
    }
#endif
};

// A thread per row; the rows of more than LONG_ROW words are left to
// spmv_long_rows.
__launch_bounds__(256) __global__
void spmv_rows(fr_t* out, product_t m, eval_flags_t* flags)
{
#ifdef __CUDA_ARCH__
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t r = threadIdx.x + (size_t)blockIdx.x * blockDim.x; r < m.rows; r += stride) {
        size_t k, end;
        bool ok = m.row(r, &k, &end);
        if (end - k > LONG_ROW)
            continue;
        fr_t acc;
        acc.zero();
        for (; k < end; k++) {
            ok &= m.add_term(acc, m.words[k], k + 1 < end ? &m.words[k + 1] : nullptr);
            k += m.words[k] >> COL_BITS == TAG_DICT;
        }
        out[r] = acc;
        if (!ok)
            flags->corrupt = 1;
    }
#endif
}

// The rows of more than LONG_ROW words, listed in |long_rows| (the host's
// list, from the same row pointers): a warp per row, lane j takes words j,
// j + 32, ... A word after a TAG_DICT word is that word's dictionary index
// (an index is below dict_len, at most 2^30, so its tag is never TAG_DICT):
// any stream spmv_rows' sequential reading calls corrupt, this reading calls
// corrupt too, and they agree on every other.
__launch_bounds__(256) __global__
void spmv_long_rows(fr_t* out, const uint32_t* long_rows, size_t nlong, product_t m,
                    eval_flags_t* flags)
{
#ifdef __CUDA_ARCH__
    const uint32_t lane = threadIdx.x % WARP_SZ;
    const size_t nwarps = (size_t)blockDim.x * gridDim.x / WARP_SZ;
    // i is the same in every lane of a warp: the shuffles below see all 32.
    for (size_t i = (threadIdx.x + (size_t)blockIdx.x * blockDim.x) / WARP_SZ; i < nlong;
         i += nwarps) {
        const size_t r = long_rows[i];
        size_t begin = 0, end = 0;
        bool ok = r < m.rows && m.row(r, &begin, &end);
        fr_t acc;
        acc.zero();
        for (size_t k = begin + lane; k < end; k += WARP_SZ)
            if (k == begin || m.words[k - 1] >> COL_BITS != TAG_DICT)
                ok &= m.add_term(acc, m.words[k], k + 1 < end ? &m.words[k + 1] : nullptr);
        for (uint32_t mask = WARP_SZ / 2; mask > 0; mask /= 2) {
            fr_t other = acc;
            other.shfl_bfly(mask);
            acc += other;
        }
        if (lane == 0 && r < m.rows)
            out[r] = acc;
        if (!ok)
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
    size_t nwords[3] = {}, nlong[3] = {};
    uint32_t* row_ptr[3] = {};
    uint32_t* words[3] = {};
    uint32_t* long_rows[3] = {};   // rows of more than LONG_ROW words
    fr_t* dict = nullptr;

    ~matrices_t()
    {
        current_device_restore_t restore_device;
        try {
            select_gpu(device_id);
            for (int i = 0; i < 3; i++) {
                (void)cudaFree(row_ptr[i]);
                (void)cudaFree(words[i]);
                (void)cudaFree(long_rows[i]);
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
// dictionary and the input count to device |device_id|, with a list of each
// matrix's rows of more than LONG_ROW words; *nlong is the lists' length in
// all (4 device bytes each).
CUZK_FFI RustError::by_value cuzk_matrices_new(int device_id, const uint32_t* const row_ptr[3],
                                               const uint32_t* const words[3],
                                               const size_t nwords[3], size_t rows,
                                               const fr_t* dict, size_t dict_len,
                                               size_t num_inputs, size_t num_cols,
                                               matrices_t** out, size_t* nlong)
{
    *out = nullptr;
    *nlong = 0;
    CUZK_TRY(device_id, {
        if (num_inputs > num_cols || num_cols > (size_t)COL_MASK + 1 || rows > UINT32_MAX ||
            dict_len > (size_t)1 << COL_BITS)
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
            std::vector<uint32_t> long_rows;
            for (size_t r = 0; r < rows; r++)
                if (row_ptr[i][r + 1] - row_ptr[i][r] > LONG_ROW)
                    long_rows.push_back((uint32_t)r);
            m->nlong[i] = long_rows.size();
            m->long_rows[i] = upload_plain(gpu, long_rows.data(), long_rows.size());
        }
        m->dict = upload_plain(gpu, dict, dict_len);
        gpu.sync();
        *nlong = m->nlong[0] + m->nlong[1] + m->nlong[2];
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
            const product_t p{m->row_ptr[i], m->words[i], m->nwords[i], n,
                              m->dict, m->dict_len, inputs->d, m->num_inputs,
                              aux->d, m->num_cols};
            if (n)
                spmv_rows<<<blocks_for(n), 256, 0, s>>>(abc[i]->d, p, &d_flags[0]);
            if (m->nlong[i])
                spmv_long_rows<<<blocks_for(m->nlong[i] * WARP_SZ), 256, 0, s>>>(
                    abc[i]->d, m->long_rows[i], m->nlong[i], p, &d_flags[0]);
            CUDA_OK(cudaGetLastError());
            if (n < N)
                s.bzero(abc[i]->d + n, N - n);
        }
        if (n)
            first_unsatisfied<<<blocks_for(n), 256, 0, s>>>(abc[0]->d, abc[1]->d,
                                                                 abc[2]->d, n, &d_flags[0]);
        CUDA_OK(cudaGetLastError());
        pinned_t back{sizeof(flags)};
        CUDA_OK(cudaMemcpyAsync(back.as<eval_flags_t>(), &d_flags[0], sizeof(flags),
                                cudaMemcpyDeviceToHost, s));
        s.sync();
        flags = *back.as<eval_flags_t>();
        if (flags.corrupt)
            return RustError{-cudaErrorInvalidValue,
                             "cuzk: the matrices on the device hold an index out of range"};
        *first_unsat = flags.first_unsatisfied;
        for (int i = 0; i < 3; i++)
            out[i] = abc[i].release();
    })
}
