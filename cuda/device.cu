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

// What enumeration found, once per process: the CUDA ordinals of the GPUs
// sppark registers, in its order (index = device id: compute capability >= 7
// with cooperative launch, as sppark/util/all_gpus.cpp selects them),
// cudaGetDeviceCount's result, and the first of those GPUs that no context
// can be made on (prohibited compute mode), or -1. sppark's registry opens
// every one of them at once: one it cannot open fails it (and each retry
// leaks the threads of the GPUs opened before), so the Rust side uses no GPU
// then, and says why.
struct enumeration_t {
    std::vector<int> ordinals;
    cudaError_t count_err = cudaSuccess;
    int prohibited = -1;
};

static const enumeration_t& enumeration()
{
    static const enumeration_t found = [] {
        enumeration_t e;
        int n = 0;
        e.count_err = cudaGetDeviceCount(&n);
        if (e.count_err != cudaSuccess)
            return e;
        for (int id = 0; id < n; id++) {
            cudaDeviceProp prop;
            int mode = cudaComputeModeDefault;
            if (cudaGetDeviceProperties(&prop, id) == cudaSuccess &&
                prop.major >= 7 && prop.cooperativeLaunch) {
                e.ordinals.push_back(id);
                if (cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, id) == cudaSuccess &&
                    mode == cudaComputeModeProhibited && e.prohibited < 0)
                    e.prohibited = id;
            }
        }
        return e;
    }();
    return found;
}

static const std::vector<int>& usable_ordinals()
{   return enumeration().ordinals;   }

// Counts the devices sppark registers (*out), with cudaGetDeviceCount's
// error code (*count_err, 0 on success) and the ordinal of the first of them
// in prohibited compute mode (*prohibited, -1 for none).
CUZK_FFI RustError::by_value cuzk_gpu_count(size_t* out, int* count_err, int* prohibited)
{
    *out = 0;
    *count_err = 0;
    *prohibited = -1;
    CUZK_GUARD({
        const enumeration_t& e = enumeration();
        *out = e.ordinals.size();
        *count_err = (int)e.count_err;
        *prohibited = e.prohibited;
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
