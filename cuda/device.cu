// Device discovery: what the engine needs to place work on GPUs.

#include "common.cuh"

struct cuzk_gpu_info_t {        // mirrored by src/gpu/ffi.rs
    int cuda_id, sm_count, major, minor;
    size_t total_bytes, free_bytes;
    char name[256];
};

// Counts the devices sppark will use; a machine with no driver gives 0.
CUZK_FFI RustError::by_value cuzk_gpu_count(size_t* out)
{
    try {
        *out = ngpus();
    } catch (const sppark_error& e) {
        *out = 0;
        return RustError{e.code(), e.what()};
    } catch (...) {
        *out = 0;
        return RustError{-1, "cuzk: unknown C++ exception"};
    }
    return RustError{cudaSuccess};
}

CUZK_FFI RustError::by_value cuzk_gpu_info(int device_id, cuzk_gpu_info_t* out)
{
    CUZK_TRY(device_id, {
        const auto& p = gpu.props();
        out->cuda_id = gpu.cid();
        out->sm_count = p.multiProcessorCount;
        out->major = p.major;
        out->minor = p.minor;
        CUDA_OK(cudaMemGetInfo(&out->free_bytes, &out->total_bytes));
        std::strncpy(out->name, p.name, sizeof(out->name) - 1);
        out->name[sizeof(out->name) - 1] = '\0';
    })
}
