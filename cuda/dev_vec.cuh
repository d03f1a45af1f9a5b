// Device vectors (SRS bases, a proof's scalars) and the pinned staging that
// every upload of them goes through.
//
// Rust memory is pageable: cudaMemcpy from it runs at about 6 GB/s. Each
// lane of a device instead keeps a small ring of pinned buffers (allocated on
// its first upload, kept for the process, staging_bytes() in all: 64 MiB):
// the host copies a chunk into a free buffer with the lane's thread pool
// while the DMA of the previous chunk runs. The express lane has a ring of
// its own so that a critical upload never waits for a partition's.
//
// A proof's device buffers come from the device's stream-ordered pool, told
// on first use to keep what it has allocated (and to give one lane's freed
// memory to the other only once its free has run): cudaMalloc/cudaFree per
// buffer cost a device-wide synchronization each and serialize on the
// driver's locks with the other devices' workers, which is what kept two GPUs
// from doubling one. The SRS bases, long-lived, are plain allocations.

#ifndef __CUZK_DEV_VEC_CUH__
#define __CUZK_DEV_VEC_CUH__

#include "common.cuh"
#include <memory>
#include <vector>

// Pinned bytes one device's staging ring holds.
size_t staging_bytes();

// Makes lane |lane|'s per-device state if it has none yet (|gpu| is that
// lane's): its staging ring, and the device's memory pool set to keep the
// memory freed into it.
void device_init(const gpu_t& gpu, int lane = LANE_THROUGHPUT);

// Copies |bytes| from host memory at |src| to device memory at |dst| through
// lane |lane|'s ring (|gpu| is that lane's), the DMAs queued on |stream|.
// Returns once the last chunk is queued: |src| may then be reused, and work
// queued on |stream| after this sees the data.
void staged_upload(const gpu_t& gpu, int lane, cudaStream_t stream, void* dst,
                   const void* src, size_t bytes);

// Pinned host memory for what a stage copies back from the device (an MSM's
// window sums, counts, a flag). A copy into pageable memory holds back other
// streams' work until everything queued before it on its own stream is done:
// beside cuzk's driver copying two results per batch into std::vectors, a
// critical proof's 2^19 NTTs took 0.57 s instead of 0.001 s (0.013 s with
// those copies and the host's sums after them left out; H100). Blocks come
// from a process-wide free list, allocated on first need (sizes rounded up to
// a power of two, at least 64 KiB) and kept: at most one per concurrent user
// and size. The largest is a 2^27 bit-split MSM's bitmap, 16 MiB.
class pinned_t {
    void* p;
    size_t bytes;
public:
    explicit pinned_t(size_t n);
    ~pinned_t();
    pinned_t(const pinned_t&) = delete;
    pinned_t& operator=(const pinned_t&) = delete;
    template<class T> T* as() const { return static_cast<T*>(p); }
};

// How a device vector is allocated: SRS bases for the process, a proof's
// scalars from the pool (freed in stream order once their users are done).
enum class lifetime_t { process, proof };

// |len| values of T in one device's memory; the C handle behind the Rust
// ResidentG1/G2 and DeviceScalars. A proof vector belongs to a lane (|gpu|
// is that lane's): the work on it, and what is made from it, runs there.
// Every user of a proof vector synchronizes before it returns, so freeing on
// its lane's first stream is safe.
template<class T> struct dev_vec_t {
    int device_id;
    int lane;
    size_t len;
    T* d;
    lifetime_t life;

    dev_vec_t(const gpu_t& gpu, size_t n, lifetime_t l, int on_lane = LANE_THROUGHPUT)
        : device_id(gpu.id()), lane(on_lane), len(n), d(nullptr), life(l)
    {
        size_t bytes = (n ? n : 1) * sizeof(T);
        if (life == lifetime_t::proof) {
            device_init(gpu, lane);
            CUDA_OK(cudaMallocAsync(&d, bytes, (cudaStream_t)gpu));
        } else {
            CUDA_OK(cudaMalloc(&d, bytes));
        }
    }
    ~dev_vec_t()
    {
        current_device_restore_t restore_device;
        try {
            const gpu_t& gpu = lane_gpu(device_id, lane);
            if (life == lifetime_t::proof)
                (void)cudaFreeAsync(d, (cudaStream_t)gpu);
            else
                (void)cudaFree(d);
        } catch (...) {}
    }
    dev_vec_t(const dev_vec_t&) = delete;
    dev_vec_t& operator=(const dev_vec_t&) = delete;
};

// A new device vector of lane |lane| (|gpu| is that lane's) holding
// host[0..n), uploaded through the lane's staging.
template<class T>
dev_vec_t<T>* dev_vec_upload(const gpu_t& gpu, int lane, const T* host, size_t n,
                             lifetime_t life)
{
    std::unique_ptr<dev_vec_t<T>> v{new dev_vec_t<T>(gpu, n, life, lane)};
    cudaStream_t s = gpu;
    staged_upload(gpu, lane, s, v->d, host, n * sizeof(T));
    CUDA_OK(cudaStreamSynchronize(s));
    return v.release();
}

typedef dev_vec_t<fr_t> scalars_t;

// Selection by a bitmap (bit i of word i/64, least significant first): the
// words masked to |len| bits, then the number of set bits before each word
// (select_by_bits' |words| and |offsets|, 2 * ceil(len/64) values); *ones:
// the set bits in all.
std::vector<uint64_t> select_meta(const uint64_t* words, size_t len, size_t* ones);

// out[k] = in[i] for the k-th set bit i of |words| (i < len), with |offsets|
// from select_meta: one thread per item.
template<class T>
__launch_bounds__(256) __global__
void select_by_bits(T* out, const T* in, const uint64_t* words, const uint64_t* offsets,
                    size_t len)
{
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < len; i += stride) {
        uint64_t w = words[i / 64];
        uint32_t b = i % 64;
        if ((w >> b) & 1)
            out[offsets[i / 64] + __popcll(w & ((1ull << b) - 1))] = in[i];
    }
}

#endif
