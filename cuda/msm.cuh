// What both lanes' MSMs share: the point types, device addresses for
// sppark's msm_t, and the call. msm.cu compiles sppark's MSM for the
// throughput lane, msm_express.cu a second time for the express lane.

#ifndef __CUZK_MSM_CUH__
#define __CUZK_MSM_CUH__

#include "dev_vec.cuh"
#include <ff/bls12-381-fp2.hpp>
#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>

typedef jacobian_t<fp_t> point_t;       // == blst_p1 (X, Y, Z Montgomery)
typedef xyzz_t<fp_t> bucket_t;
typedef bucket_t::affine_t affine_t;    // == blst_p1_affine, inf = (0,0)
typedef jacobian_t<fp2_t> point_fp2_t;  // == blst_p2
typedef xyzz_t<fp2_t> bucket_fp2_t;
typedef bucket_fp2_t::affine_t affine_fp2_t;
typedef fr_t scalar_t;                  // == blst_fr (Montgomery)

#define SPPARK_DONT_INSTANTIATE_TEMPLATES

// A device address handed to msm_t::invoke. sppark's own dev_ptr_t yields
// `affine_t::mem_t*` and the template invoke then recurses instead of
// reaching the preloaded-points path; this wrapper yields `const T*`.
template<class T> struct on_device_t {
    const T* ptr;
    const T& operator[](size_t i) const { return ptr[i]; }
};
template<class T> struct is_device_ptr<on_device_t<T>> {
    static const bool value{true};
};

// Σ scalars[i]·points[i] for i < n (0 < n < 2^31) with msm_type, an msm_t
// of one lane, on device |device_id|. The points are on the device; the
// scalars are |dev_scalars| (n of them on the device) when given, else
// |host_scalars|. sppark chooses the Pippenger window for max(n, window_n)
// points: a piece of a longer MSM takes the whole's window (and so its
// batches), not a narrower one with more windows to add. Throws on CUDA
// errors.
template<class msm_type, class point_t, class affine_t>
RustError run_msm(int device_id, point_t* out, const affine_t* points, size_t n,
                  const scalar_t* host_scalars, const scalar_t* dev_scalars,
                  size_t window_n = 0)
{
    msm_type m{nullptr, std::max(n, window_n), sizeof(affine_t), device_id};
    const on_device_t<affine_t> d_points{points};
    return dev_scalars != nullptr
        ? m.invoke(*out, d_points, n, on_device_t<scalar_t>{dev_scalars}, true)
        : m.invoke(*out, d_points, n, host_scalars, true);
}

// run_msm on the express lane of device |device_id| (msm_express.cu).
RustError express_msm(int device_id, point_t* out, const affine_t* points, size_t n,
                      const scalar_t* host_scalars, const scalar_t* dev_scalars);
RustError express_msm(int device_id, point_fp2_t* out, const affine_fp2_t* points, size_t n,
                      const scalar_t* host_scalars, const scalar_t* dev_scalars);

#endif
