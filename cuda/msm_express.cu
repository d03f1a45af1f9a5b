// sppark's MSM compiled a second time, in a namespace of its own where the
// device registry it asks for its gpu_t (select_gpu) is the express lane's:
// an msm_t made here allocates, queues its kernels and synchronizes on the
// express streams and collects on the express lane's threads, so a critical
// proof's MSMs wait for nothing queued by throughput proofs. What
// pippenger.cuh includes from outside msm/ is included first, outside the
// namespace.

#include "msm.cuh"
#include <cooperative_groups.h>
#include <cassert>
#include <vector>
#include <util/vec2d_t.hpp>
#include <util/slice_t.hpp>
#include <ff/shfl.cuh>

namespace express {

static const gpu_t& select_gpu(int device_id)
{   return lane_gpu(device_id, LANE_EXPRESS);   }

#include <msm/pippenger.cuh>

} // namespace express

RustError express_msm(int device_id, point_t* out, const affine_t* points, size_t n,
                      const scalar_t* host_scalars, const scalar_t* dev_scalars)
{
    return run_msm<express::msm_t<bucket_t, point_t, affine_t, scalar_t>>(
        device_id, out, points, n, host_scalars, dev_scalars);
}

RustError express_msm(int device_id, point_fp2_t* out, const affine_fp2_t* points, size_t n,
                      const scalar_t* host_scalars, const scalar_t* dev_scalars)
{
    return run_msm<express::msm_t<bucket_fp2_t, point_fp2_t, affine_fp2_t, scalar_t>>(
        device_id, out, points, n, host_scalars, dev_scalars);
}
