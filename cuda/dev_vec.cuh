// Device vectors (SRS bases, a proof's scalars) and the pinned staging that
// every upload of them goes through.
//
// Rust memory is pageable: cudaMemcpy from it runs at about 6 GB/s. Each
// device instead keeps a small ring of pinned buffers (allocated on its
// first upload, kept for the process, STAGING_BYTES in all): the host copies
// a chunk into a free buffer with the device's thread pool while the DMA of
// the previous chunk runs.

#ifndef __CUZK_DEV_VEC_CUH__
#define __CUZK_DEV_VEC_CUH__

#include "common.cuh"
#include <memory>

// Pinned bytes one device's staging ring holds.
size_t staging_bytes();

// Creates |gpu|'s staging ring if it has none yet.
void staging_init(const gpu_t& gpu);

// Copies |bytes| from host memory at |src| to device memory at |dst|, the
// DMAs queued on |stream|. Returns once the last chunk is queued: |src| may
// then be reused, and work queued on |stream| after this sees the data.
void staged_upload(const gpu_t& gpu, cudaStream_t stream, void* dst,
                   const void* src, size_t bytes);

// |len| values of T in one device's memory; the C handle behind the Rust
// ResidentG1/G2 and DeviceScalars.
template<class T> struct dev_vec_t {
    int device_id;
    size_t len;
    T* d;

    dev_vec_t(const gpu_t& gpu, size_t n) : device_id(gpu.id()), len(n), d(nullptr)
    {   CUDA_OK(cudaMalloc(&d, (n ? n : 1) * sizeof(T)));   }
    ~dev_vec_t()
    {
        int current;
        bool restore = cudaGetDevice(&current) == cudaSuccess;
        try { select_gpu(device_id); } catch (...) {}
        (void)cudaFree(d);
        if (restore)
            (void)cudaSetDevice(current);
    }
    dev_vec_t(const dev_vec_t&) = delete;
    dev_vec_t& operator=(const dev_vec_t&) = delete;
};

// A new device vector holding host[0..n), uploaded through the staging.
template<class T>
dev_vec_t<T>* dev_vec_upload(const gpu_t& gpu, const T* host, size_t n)
{
    std::unique_ptr<dev_vec_t<T>> v{new dev_vec_t<T>(gpu, n)};
    cudaStream_t s = gpu;
    staged_upload(gpu, s, v->d, host, n * sizeof(T));
    CUDA_OK(cudaStreamSynchronize(s));
    return v.release();
}

typedef dev_vec_t<fr_t> scalars_t;

#endif
