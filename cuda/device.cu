// Device discovery: what the engine needs to place work on GPUs.
//
// Discovery reads device attributes only, which creates no CUDA context, and
// never touches sppark's device registry: that registry (made on its first
// use, by the first proof on a GPU) creates streams, and so a primary
// context, on every GPU it registers. Only the free memory of a device
// (cudaMemGetInfo) needs a context, on that device alone, and it is read on
// a thread of its own so that the caller's current device stays as it was.

#include "common.cuh"
#include <thread>
#include <vector>

struct cuzk_gpu_info_t {        // mirrored by src/gpu/ffi.rs
    int cuda_id, sm_count, major, minor;
    size_t total_bytes, free_bytes;
    char name[256];
};

// The CUDA ordinals of the GPUs sppark registers, in its order (index =
// device id): compute capability >= 7 with cooperative launch, as
// sppark/util/all_gpus.cpp selects them. Empty without a driver or a GPU.
static const std::vector<int>& usable_ordinals()
{
    static const std::vector<int> ordinals = [] {
        std::vector<int> ids;
        int n;
        if (cudaGetDeviceCount(&n) != cudaSuccess)
            return ids;
        for (int id = 0; id < n; id++) {
            cudaDeviceProp prop;
            if (cudaGetDeviceProperties(&prop, id) == cudaSuccess &&
                prop.major >= 7 && prop.cooperativeLaunch)
                ids.push_back(id);
        }
        return ids;
    }();
    return ordinals;
}

// Counts the devices sppark will use; a machine with no driver gives 0.
CUZK_FFI RustError::by_value cuzk_gpu_count(size_t* out)
{
    *out = 0;
    CUZK_GUARD({
        *out = usable_ordinals().size();
    })
}

// Free and total memory of CUDA device |cuda_id| now, read on a short-lived
// thread: cudaMemGetInfo needs the device current, and selecting it on the
// caller's thread would leave that thread's current device changed (and
// restoring it could make a context on the device restored to).
static cudaError_t memory_of(int cuda_id, size_t* free_bytes, size_t* total_bytes)
{
    cudaError_t err = cudaSuccess;
    std::thread([&] {
        err = cudaSetDevice(cuda_id);
        if (err == cudaSuccess)
            err = cudaMemGetInfo(free_bytes, total_bytes);
    }).join();
    return err;
}

// Describes device |device_id|, with its free memory now: the one call here
// that makes a context, on that device only.
CUZK_FFI RustError::by_value cuzk_gpu_info(int device_id, cuzk_gpu_info_t* out)
{
    CUZK_GUARD({
        const auto& ordinals = usable_ordinals();
        if (device_id < 0 || (size_t)device_id >= ordinals.size())
            return RustError{-cudaErrorInvalidDevice,
                             fmt("cuzk: no CUDA device %d (%zu usable)",
                                 device_id, ordinals.size())};
        const int cuda_id = ordinals[device_id];
        cudaDeviceProp p;
        CUDA_OK(cudaGetDeviceProperties(&p, cuda_id));
        out->cuda_id = cuda_id;
        out->sm_count = p.multiProcessorCount;
        out->major = p.major;
        out->minor = p.minor;
        CUDA_OK(memory_of(cuda_id, &out->free_bytes, &out->total_bytes));
        std::strncpy(out->name, p.name, sizeof(out->name) - 1);
        out->name[sizeof(out->name) - 1] = '\0';
    })
}
