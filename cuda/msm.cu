// MSM over G1 and G2 with the bases resident on one device.
//
// The bases are uploaded once (cuzk_g*_bases_new) and stay until _free: a
// parameter file's queries are reused by every proof, so they should cross
// PCIe once per process, not once per proof (supraseal-c2 streams them each
// time). A query that does not fit is copied up for each MSM
// (cuzk_g*_msm_host) and then runs as a resident one. Each call sizes its own
// msm_t to the scalars it is given, so a sub-range of a large base set gets
// the right Pippenger window. The scalars come from host memory or, for a
// proof's H and aux, from a device vector (dev_vec.cuh) that never leaves the
// GPU.

#include "msm.cuh"
#include <msm/pippenger.cuh>
#include "msm_wide.cuh"
#include <cstring>
#include <mutex>

// MSMs of concurrent proofs on one device are not serialized: each msm_t has
// its own buffers and events, and their kernels queue on their lane's
// streams. An MSM ends on the host (the windows' final sums, sppark's
// collect) with the GPU idle; another worker's MSM fills that gap. An MSM
// runs on the lane of its device scalars (host scalars: the throughput lane).

// Scalars that are 0 or 1 (a witness's bits: most of the aux of a PoRep or
// sha256 partition) need none of Pippenger's windows. When at most one in
// OTHER_SHARE of a long vector of device scalars is anything else, the bases
// of the ones are summed by sppark's bitmap batch addition (one pass over the
// bitmap on every SM) and only the rest go through the MSM, their scalars and
// bases gathered first; the zeros cost nothing. Otherwise (H, or a witness of
// field elements) the counts say so and the plain MSM runs. G1 only: in
// device code a G2 affine_t is one thread's half of a point (sppark's fp2_t
// has degree 2), so gathering G2 bases needs their mem_t; B in G2 takes
// Pippenger (wide_msm: the zeros and ones cost it little).
constexpr size_t BITS_MIN = (size_t)1 << 20;    // shorter vectors: the plain MSM is as quick
constexpr size_t OTHER_SHARE = 8;

// Bit i%32 of ones[i/32] / others[i/32]: scalar i is one / neither zero nor
// one; counts[0] and [1] get how many. One thread per scalar (padded to the
// grid: a whole block's words are written).
__launch_bounds__(256) __global__
void classify_bits(uint32_t* ones, uint32_t* others, unsigned long long* counts,
                   const fr_bits_t* s, fr_bits_t one, size_t n)
{
    const size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    bool is_one = false, is_other = false;
    if (i < n) {
        const fr_bits_t v = s[i];
        const bool zero = (v.l[0] | v.l[1] | v.l[2] | v.l[3]) == 0;
        is_one = v.l[0] == one.l[0] && v.l[1] == one.l[1] && v.l[2] == one.l[2] &&
                 v.l[3] == one.l[3];
        is_other = !zero && !is_one;
    }
    const uint32_t o = __ballot_sync(0xffffffff, is_one);
    const uint32_t x = __ballot_sync(0xffffffff, is_other);
    if (threadIdx.x % 32 == 0) {
        ones[i / 32] = o;
        others[i / 32] = x;
        if (o) atomicAdd(&counts[0], (unsigned long long)__popc(o));
        if (x) atomicAdd(&counts[1], (unsigned long long)__popc(x));
    }
}

// sppark's bitmap batch addition hands out work from a counter per kernel
// instantiation and device: one launch at a time per device.
static std::mutex batch_add_locks[64];

// Σ s[i]·bases[i] (both n long on lane |gpu| of device |device_id|) by the
// split above into *out, *done set; *done unset, with nothing computed, when
// the scalars are not mostly bits.
template<class bucket_t, class point_t, class affine_t>
static RustError msm_bits(const gpu_t& gpu, int device_id, point_t* out, const affine_t* bases,
                          size_t n, const scalar_t* d_s, bool* done)
{
    typedef typename bucket_t::mem_t bucket_h;
    typedef typename affine_t::mem_t affine_h;
    const stream_t& s = gpu;
    const unsigned blocks = blocks_for(n);
    // 8 words per block of 256 scalars, rounded up to the 32 words the batch
    // addition reads at a time; the words past the blocks' stay zero.
    const size_t nwords = ((size_t)blocks * 8 + 31) & ~(size_t)31;
    dev_ptr_t<uint32_t> d_words{2 * nwords, s};
    dev_ptr_t<unsigned long long> d_counts{2, s};
    CUDA_OK(cudaMemsetAsync(&d_words[0], 0, 2 * nwords * sizeof(uint32_t), s));
    CUDA_OK(cudaMemsetAsync(&d_counts[0], 0, 2 * sizeof(unsigned long long), s));
    fr_bits_t one;
    const fr_t mont_one = fr_t::one();
    memcpy(&one, &mont_one, sizeof(one));
    classify_bits<<<blocks, 256, 0, s>>>(&d_words[0], &d_words[nwords], &d_counts[0],
                                          (const fr_bits_t*)d_s, one, n);
    CUDA_OK(cudaGetLastError());
    pinned_t counts_mem{2 * sizeof(unsigned long long)};
    unsigned long long* counts = counts_mem.as<unsigned long long>();
    s.DtoH(counts, &d_counts[0], 2);
    s.sync();
    if (counts[1] * OTHER_SHARE > n)
        return RustError{cudaSuccess};

    out->inf();
    if (counts[0]) {
        const size_t nret = (size_t)gpu.sm_count() * BATCH_ADD_BLOCK_SIZE / WARP_SZ;
        dev_ptr_t<bucket_h> d_ret{nret, s};
        pinned_t ret_mem{nret * sizeof(bucket_t)};
        bucket_t* ret = ret_mem.as<bucket_t>();
        void (*add)(bucket_h*, const affine_h*, uint32_t, const uint32_t*, bool, uint32_t) =
            batch_addition<bucket_t, affine_h>;
        {
            std::lock_guard<std::mutex> one_at_a_time(batch_add_locks[device_id % 64]);
            s.launch_coop(add, dim3(gpu.sm_count()), dim3(BATCH_ADD_BLOCK_SIZE), (size_t)0,
                          &d_ret[0], (const affine_h*)bases, (uint32_t)n,
                          (const uint32_t*)&d_words[0], false, 0u);
            s.DtoH(ret, &d_ret[0], nret);
            s.sync();
        }
        *out = sum_up(ret, nret);
    }
    if (counts[1]) {
        pinned_t words_mem{nwords * sizeof(uint32_t)};
        s.DtoH(words_mem.as<uint32_t>(), &d_words[nwords], nwords);
        s.sync();
        size_t k;
        std::vector<uint64_t> meta = select_meta(words_mem.as<const uint64_t>(), n, &k);
        const size_t need = meta.size() / 2;
        dev_ptr_t<uint64_t> d_meta{2 * need, s};
        dev_ptr_t<fr_bits_t> d_other_s{k, s};
        dev_ptr_t<affine_t> d_other_b{k, s};
        s.HtoD(&d_meta[0], meta.data(), 2 * need);
        select_by_bits<<<blocks, 256, 0, s>>>(&d_other_s[0], (const fr_bits_t*)d_s,
                                              &d_meta[0], &d_meta[need], n);
        select_by_bits<<<blocks, 256, 0, s>>>(&d_other_b[0], bases, &d_meta[0], &d_meta[need], n);
        CUDA_OK(cudaGetLastError());
        s.sync();
        point_t rest;
        RustError err = run_msm<msm_t<bucket_t, point_t, affine_t, scalar_t>>(
            device_id, &rest, (const affine_t*)&d_other_b[0], k, nullptr,
            (const scalar_t*)&d_other_s[0]);
        if (err.code != cudaSuccess)
            return err;
        out->add(rest);
    }
    *done = true;
    return RustError{cudaSuccess};
}

template<class affine_t>
static RustError bases_new(int device_id, const affine_t* points, size_t n,
                           dev_vec_t<affine_t>** out)
{
    *out = nullptr;
    CUZK_TRY(device_id, {
        *out = dev_vec_upload(gpu, LANE_THROUGHPUT, points, n, lifetime_t::process);
    })
}

// Σ scalars[i]·points[i] for i < n, the points on the device; the scalars
// are |dev_scalars| from |dev_start| on (on this device, n of them) when
// given, else |host_scalars|. A throughput MSM is a piece of one of
// |window_n| points (run_msm: its window); an express one is never cut. An
// MSM over device scalars (on the throughput lane in G1, those not mostly
// bits) runs wide_msm on its lane with a |wbits|-bit window when |wbits| is
// not 0. |wbits| is 0, or 10 to 26 (an argument error otherwise); every
// other MSM ignores it. On the throughput lane wide_msm yields to the
// critical stages |critical| counts (pace_t; null: to none), for at most
// |max_yield_us| in all.
template<class bucket_t, class point_t, class affine_t>
static RustError msm(int device_id, point_t* out, const affine_t* points,
                     size_t n, size_t window_n, const scalar_t* host_scalars,
                     const scalars_t* dev_scalars, size_t dev_start, uint32_t wbits,
                     const uint32_t* critical, uint64_t max_yield_us)
{
    const int lane = dev_scalars != nullptr ? dev_scalars->lane : LANE_THROUGHPUT;
    CUZK_TRY_ON(device_id, lane, {
        out->inf();
        if (dev_scalars != nullptr &&
            (dev_scalars->device_id != device_id || dev_start > dev_scalars->len ||
             n > dev_scalars->len - dev_start))
            return RustError{-cudaErrorInvalidValue,
                             "cuzk: device scalars of another device, or too few"};
        if (n == 0)
            return RustError{cudaSuccess};
        if (n >= ((size_t)1 << 31))
            return RustError{-cudaErrorInvalidValue, "cuzk: MSM over 2^31 points"};
        const scalar_t* d_scalars = dev_scalars != nullptr ? dev_scalars->d + dev_start : nullptr;
        if (wbits != 0 && (wbits < WIDE_MIN_BITS || wbits > 26))
            return RustError{-cudaErrorInvalidValue, "cuzk: a wide window is of 10 to 26 bits"};
        if (d_scalars != nullptr) {
            if constexpr (bucket_t::degree == 1) {
                if (lane == LANE_THROUGHPUT && n >= BITS_MIN) {
                    bool done = false;
                    RustError err = msm_bits<bucket_t>(gpu, device_id, out, points, n, d_scalars, &done);
                    if (err.code != cudaSuccess || done)
                        return err;
                }
            }
            if (wbits != 0) {
                wide_msm<bucket_t>(gpu, out, points, d_scalars, n, wbits,
                                   lane == LANE_THROUGHPUT ? critical : nullptr, max_yield_us);
                return RustError{cudaSuccess};
            }
        }
        RustError err = lane == LANE_EXPRESS
            ? express_msm(device_id, out, points, n, host_scalars, d_scalars)
            : run_msm<msm_t<bucket_t, point_t, affine_t, scalar_t>>(
                  device_id, out, points, n, host_scalars, d_scalars, window_n);
        if (err.code != cudaSuccess)
            return err;
    })
}

template<class bucket_t, class point_t, class affine_t>
static RustError msm_resident(const dev_vec_t<affine_t>* bases, size_t start, size_t n,
                              size_t window_n, uint32_t wbits, const scalar_t* host_scalars,
                              const scalars_t* dev_scalars, size_t dev_start,
                              const uint32_t* critical, uint64_t max_yield_us, point_t* out)
{
    if (bases == nullptr)
        return RustError{-cudaErrorInvalidValue, "cuzk: null bases handle"};
    if (start > bases->len || n > bases->len - start)
        return RustError{-cudaErrorInvalidValue, "cuzk: MSM range out of bounds"};
    if (window_n > bases->len)
        return RustError{-cudaErrorInvalidValue, "cuzk: MSM window for more points than the bases"};
    return msm<bucket_t>(bases->device_id, out, bases->d + start, n, window_n,
                         host_scalars, dev_scalars, dev_start, wbits, critical, max_yield_us);
}

// Bases in host memory: copied through the scalars' lane's pinned staging
// into device memory of the proof's lifetime, the MSM run over them as over
// resident ones (msm), then freed. The caller bounds n: the copy is device
// memory of the proof's working set.
template<class bucket_t, class point_t, class affine_t>
static RustError msm_host(int device_id, const affine_t* points, size_t n, size_t window_n,
                          uint32_t wbits, const scalar_t* host_scalars,
                          const scalars_t* dev_scalars, size_t dev_start,
                          const uint32_t* critical, uint64_t max_yield_us, point_t* out)
{
    const int lane = dev_scalars != nullptr ? dev_scalars->lane : LANE_THROUGHPUT;
    std::unique_ptr<dev_vec_t<affine_t>> bases;
    CUZK_TRY_ON(device_id, lane, {
        out->inf();
        if (n == 0)
            return RustError{cudaSuccess};
        bases.reset(dev_vec_upload(gpu, lane, points, n, lifetime_t::proof));
        RustError err = msm<bucket_t>(device_id, out, bases->d, n, window_n, host_scalars,
                                      dev_scalars, dev_start, wbits, critical, max_yield_us);
        if (err.code != cudaSuccess)
            return err;
    })
}

typedef dev_vec_t<affine_t> g1_bases_t;
typedef dev_vec_t<affine_fp2_t> g2_bases_t;

CUZK_FFI RustError::by_value cuzk_g1_bases_new(int device_id, const affine_t* points,
                                               size_t n, g1_bases_t** out)
{   return bases_new(device_id, points, n, out);   }

CUZK_FFI RustError::by_value cuzk_g2_bases_new(int device_id, const affine_fp2_t* points,
                                               size_t n, g2_bases_t** out)
{   return bases_new(device_id, points, n, out);   }

CUZK_FFI void cuzk_g1_bases_free(g1_bases_t* bases)
{   delete bases;   }

CUZK_FFI void cuzk_g2_bases_free(g2_bases_t* bases)
{   delete bases;   }

// Bases[start..start + n]: a piece of an MSM of |window_n| points (at most
// the bases' length; n or less for a whole one), with cuzk's driver and a
// |wbits|-bit window when |wbits| is not 0 (msm). The scalars:
// |host_scalars| in host memory, or |dev_scalars| from |dev_start| on, on
// the bases' device (then host_scalars is ignored). |critical|: the count of
// critical stages on the device that cuzk's driver yields to on the
// throughput lane (gpu/turns.rs; read, never written; null for none), for
// at most |max_yield_us| microseconds in all (the engine's SharingPolicy).
CUZK_FFI RustError::by_value cuzk_g1_msm_resident(const g1_bases_t* bases, size_t start,
                                                  size_t n, size_t window_n, uint32_t wbits,
                                                  const scalar_t* host_scalars,
                                                  const scalars_t* dev_scalars,
                                                  size_t dev_start, const uint32_t* critical,
                                                  uint64_t max_yield_us,
                                                  point_t* out)
{   return msm_resident<bucket_t>(bases, start, n, window_n, wbits, host_scalars, dev_scalars, dev_start, critical, max_yield_us, out);   }

CUZK_FFI RustError::by_value cuzk_g2_msm_resident(const g2_bases_t* bases, size_t start,
                                                  size_t n, size_t window_n, uint32_t wbits,
                                                  const scalar_t* host_scalars,
                                                  const scalars_t* dev_scalars,
                                                  size_t dev_start, const uint32_t* critical,
                                                  uint64_t max_yield_us,
                                                  point_fp2_t* out)
{   return msm_resident<bucket_fp2_t>(bases, start, n, window_n, wbits, host_scalars, dev_scalars, dev_start, critical, max_yield_us, out);   }

// Points[0..n] in host memory, streamed for one MSM (msm_host): the fallback
// when a query does not fit. The window, |wbits|, |critical| and |max_yield_us| as
// cuzk_g*_msm_resident's.
CUZK_FFI RustError::by_value cuzk_g1_msm_host(int device_id, const affine_t* points, size_t n,
                                              size_t window_n, uint32_t wbits,
                                              const scalar_t* host_scalars,
                                              const scalars_t* dev_scalars, size_t dev_start,
                                              const uint32_t* critical, uint64_t max_yield_us, point_t* out)
{   return msm_host<bucket_t>(device_id, points, n, window_n, wbits, host_scalars, dev_scalars, dev_start, critical, max_yield_us, out);   }

CUZK_FFI RustError::by_value cuzk_g2_msm_host(int device_id, const affine_fp2_t* points, size_t n,
                                              size_t window_n, uint32_t wbits,
                                              const scalar_t* host_scalars,
                                              const scalars_t* dev_scalars, size_t dev_start,
                                              const uint32_t* critical, uint64_t max_yield_us, point_fp2_t* out)
{   return msm_host<bucket_fp2_t>(device_id, points, n, window_n, wbits, host_scalars, dev_scalars, dev_start, critical, max_yield_us, out);   }
