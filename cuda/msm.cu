// MSM over G1 and G2 with the bases resident on one device.
//
// The bases are uploaded once (cuzk_g*_bases_new) and stay until _free: a
// parameter file's queries are reused by every proof, so they should cross
// PCIe once per process, not once per proof (supraseal-c2 streams them each
// time). Each call sizes its own msm_t to the scalars it is given, so a
// sub-range of a large base set gets the right Pippenger window. The scalars
// come from host memory or, for a proof's H and aux, from a device vector
// (dev_vec.cuh) that never leaves the GPU.

#include "msm.cuh"
#include <msm/pippenger.cuh>

// MSMs of concurrent proofs on one device are not serialized: each msm_t has
// its own buffers and events, and their kernels queue on their lane's
// streams. An MSM ends on the host (the windows' final sums, sppark's
// collect) with the GPU idle; another worker's MSM fills that gap. An MSM
// runs on the lane of its device scalars (host scalars: the throughput lane).

template<class affine_t>
static RustError bases_new(int device_id, const affine_t* points, size_t n,
                           dev_vec_t<affine_t>** out)
{
    *out = nullptr;
    CUZK_TRY(device_id, {
        *out = dev_vec_upload(gpu, LANE_THROUGHPUT, points, n, lifetime_t::process);
    })
}

// Σ scalars[i]·points[i] for i < n. The points are on the device when
// |resident|, else in host memory; the scalars are |dev_scalars| from
// |dev_start| on (on this device, n of them) when given, else |host_scalars|.
template<class bucket_t, class point_t, class affine_t>
static RustError msm(int device_id, point_t* out, const affine_t* points,
                     bool resident, size_t n, const scalar_t* host_scalars,
                     const scalars_t* dev_scalars, size_t dev_start)
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
        RustError err = lane == LANE_EXPRESS
            ? express_msm(device_id, out, points, resident, n, host_scalars, d_scalars)
            : run_msm<msm_t<bucket_t, point_t, affine_t, scalar_t>>(
                  device_id, out, points, resident, n, host_scalars, d_scalars);
        if (err.code != cudaSuccess)
            return err;
    })
}

template<class bucket_t, class point_t, class affine_t>
static RustError msm_resident(const dev_vec_t<affine_t>* bases, size_t start, size_t n,
                              const scalar_t* host_scalars, const scalars_t* dev_scalars,
                              size_t dev_start, point_t* out)
{
    if (bases == nullptr)
        return RustError{-cudaErrorInvalidValue, "cuzk: null bases handle"};
    if (start > bases->len || n > bases->len - start)
        return RustError{-cudaErrorInvalidValue, "cuzk: MSM range out of bounds"};
    return msm<bucket_t>(bases->device_id, out, bases->d + start, true, n,
                         host_scalars, dev_scalars, dev_start);
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

// The scalars: |host_scalars| in host memory, or |dev_scalars| from
// |dev_start| on, on the bases' device (then host_scalars is ignored).
CUZK_FFI RustError::by_value cuzk_g1_msm_resident(const g1_bases_t* bases, size_t start,
                                                  size_t n, const scalar_t* host_scalars,
                                                  const scalars_t* dev_scalars,
                                                  size_t dev_start, point_t* out)
{   return msm_resident<bucket_t>(bases, start, n, host_scalars, dev_scalars, dev_start, out);   }

CUZK_FFI RustError::by_value cuzk_g2_msm_resident(const g2_bases_t* bases, size_t start,
                                                  size_t n, const scalar_t* host_scalars,
                                                  const scalars_t* dev_scalars,
                                                  size_t dev_start, point_fp2_t* out)
{   return msm_resident<bucket_fp2_t>(bases, start, n, host_scalars, dev_scalars, dev_start, out);   }

// Bases streamed from host memory: the fallback when a query does not fit.
CUZK_FFI RustError::by_value cuzk_g1_msm_host(int device_id, const affine_t* points,
                                              size_t n, const scalar_t* host_scalars,
                                              const scalars_t* dev_scalars, size_t dev_start,
                                              point_t* out)
{   return msm<bucket_t>(device_id, out, points, false, n, host_scalars, dev_scalars, dev_start);   }

CUZK_FFI RustError::by_value cuzk_g2_msm_host(int device_id, const affine_fp2_t* points,
                                              size_t n, const scalar_t* host_scalars,
                                              const scalars_t* dev_scalars, size_t dev_start,
                                              point_fp2_t* out)
{   return msm<bucket_fp2_t>(device_id, out, points, false, n, host_scalars, dev_scalars, dev_start);   }
