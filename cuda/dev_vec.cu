// The per-device pinned staging ring, and scalar vectors on the device:
// upload, download, and density selection (compaction by a bitmap).

#include "dev_vec.cuh"
#include <cstring>
#include <mutex>

namespace {

constexpr size_t CHUNK = (size_t)16 << 20;     // bytes per pinned buffer
constexpr int NBUF = 4;                         // buffers per device
constexpr size_t PIECE = (size_t)1 << 20;       // one host thread's share of a chunk
constexpr size_t MAX_GPUS = 64;

struct stager_t {
    std::mutex mtx;                 // one upload at a time per device
    char* buf = nullptr;            // NBUF * CHUNK pinned bytes
    cudaEvent_t done[NBUF] = {};    // last DMA out of each buffer
    int next = 0;

    ~stager_t()
    {
        for (auto e : done)
            if (e) (void)cudaEventDestroy(e);
        if (buf) (void)cudaFreeHost(buf);
    }
};

std::mutex registry;
stager_t* stagers[2][MAX_GPUS];     // per lane; never freed: bounded, reused by every proof

stager_t& stager(const gpu_t& gpu, int lane)
{
    if ((size_t)gpu.id() >= MAX_GPUS)
        throw sppark_error{-cudaErrorInvalidDevice, std::string("cuzk: device id over 63")};
    std::lock_guard<std::mutex> guard(registry);
    stager_t*& slot = stagers[lane == LANE_EXPRESS][gpu.id()];
    if (slot == nullptr) {
        std::unique_ptr<stager_t> st{new stager_t};
        CUDA_OK(cudaHostAlloc(&st->buf, NBUF * CHUNK, cudaHostAllocPortable));
        cudaMemPool_t pool;
        uint64_t keep = UINT64_MAX;
        CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, gpu.cid()));
        CUDA_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
        // Memory freed on one stream is handed to another only once the free has run (the
        // pool would otherwise make the allocating stream wait for the freeing stream's
        // queue: an express allocation behind a partition's NTTs).
        int no = 0;
        CUDA_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &no));
        for (auto& e : st->done)
            CUDA_OK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        slot = st.release();
    }
    return *slot;
}

std::mutex pinned_mtx;
std::vector<std::pair<size_t, void*>> pinned_free;     // never freed: reused by every proof

} // namespace

pinned_t::pinned_t(size_t n) : p(nullptr), bytes(std::max<size_t>(n, (size_t)1 << 16))
{
    bytes = (size_t)1 << (64 - __builtin_clzll(bytes - 1));
    {
        std::lock_guard<std::mutex> guard(pinned_mtx);
        for (auto it = pinned_free.begin(); it != pinned_free.end(); ++it)
            if (it->first == bytes) {
                p = it->second;
                pinned_free.erase(it);
                return;
            }
    }
    CUDA_OK(cudaHostAlloc(&p, bytes, cudaHostAllocPortable));
}

pinned_t::~pinned_t()
{
    std::lock_guard<std::mutex> guard(pinned_mtx);
    try {
        pinned_free.emplace_back(bytes, p);
    } catch (...) {
        (void)cudaFreeHost(p);
    }
}

size_t staging_bytes()
{   return NBUF * CHUNK;   }

std::vector<uint64_t> select_meta(const uint64_t* words, size_t len, size_t* ones)
{
    const size_t need = (len + 63) / 64;
    std::vector<uint64_t> meta(2 * need);
    *ones = 0;
    for (size_t w = 0; w < need; w++) {
        uint64_t x = words[w];
        if (w == need - 1 && len % 64)
            x &= (1ull << (len % 64)) - 1;
        meta[w] = x;
        meta[need + w] = *ones;
        *ones += __builtin_popcountll(x);
    }
    return meta;
}

void device_init(const gpu_t& gpu, int lane)
{   (void)stager(gpu, lane);   }

void staged_upload(const gpu_t& gpu, int lane, cudaStream_t stream, void* dst,
                   const void* src, size_t bytes)
{
    stager_t& st = stager(gpu, lane);
    std::lock_guard<std::mutex> guard(st.mtx);
    for (size_t off = 0; off < bytes; off += CHUNK) {
        size_t n = std::min(CHUNK, bytes - off);
        int k = st.next;
        st.next = (k + 1) % NBUF;
        char* buf = st.buf + k * CHUNK;
        CUDA_OK(cudaEventSynchronize(st.done[k]));
        const char* from = (const char*)src + off;
        gpu.par_map((n + PIECE - 1) / PIECE, 1, [&](size_t i) {
            size_t at = i * PIECE;
            std::memcpy(buf + at, from + at, std::min(PIECE, n - at));
        });
        CUDA_OK(cudaMemcpyAsync((char*)dst + off, buf, n, cudaMemcpyHostToDevice, stream));
        CUDA_OK(cudaEventRecord(st.done[k], stream));
    }
}

// Makes lane |lane| of device |device_id| ready for uploads (its staging
// ring, and the device's pool settings) and says how many pinned bytes that
// ring holds (*out).
CUZK_FFI RustError::by_value cuzk_staging_bytes(int device_id, int lane, size_t* out)
{
    *out = 0;
    CUZK_TRY_ON(device_id, lane, {
        device_init(gpu, lane);
        *out = staging_bytes();
    })
}

// Gives back to the driver what device |device_id|'s pool keeps of the
// proofs' freed buffers (the pool is told to keep them: see stager()), so
// that it shows as free memory again. Buffers in use stay; those freed in
// stream order are released once the device is idle up to now (it waits).
CUZK_FFI RustError::by_value cuzk_gpu_trim(int device_id)
{
    CUZK_TRY(device_id, {
        gpu.sync();
        cudaMemPool_t pool;
        CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, gpu.cid()));
        CUDA_OK(cudaMemPoolTrimTo(pool, 0));
    })
}

// Grows device |device_id|'s pool by |bytes| beyond what it has in use, so
// that a first proof's buffers come from memory the driver has already mapped
// (the pool keeps what is freed into it: see stager()).
CUZK_FFI RustError::by_value cuzk_gpu_warm(int device_id, size_t bytes)
{
    CUZK_TRY(device_id, {
        device_init(gpu);
        cudaStream_t s = gpu;
        void* d = nullptr;
        CUDA_OK(cudaMallocAsync(&d, bytes ? bytes : 1, s));
        CUDA_OK(cudaFreeAsync(d, s));
        CUDA_OK(cudaStreamSynchronize(s));
    })
}

// Device memory a new proof buffer could take now: what the driver has free
// plus what the device's pool keeps of freed buffers (it hands that out
// again first). Makes the device's per-device state if it has none.
CUZK_FFI RustError::by_value cuzk_gpu_room(int device_id, size_t* out)
{
    *out = 0;
    CUZK_TRY(device_id, {
        device_init(gpu);
        size_t free, total;
        CUDA_OK(cudaMemGetInfo(&free, &total));
        cudaMemPool_t pool;
        CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, gpu.cid()));
        cuuint64_t reserved = 0, used = 0;
        CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
        CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
        *out = free + (reserved > used ? (size_t)(reserved - used) : 0);
    })
}

// The most bytes proof buffers held at once on device |device_id| since the
// last reset (its pool's high-water mark; the SRS and the PCE's matrices are
// not pool memory), in *out. |reset|: a new count starts now.
CUZK_FFI RustError::by_value cuzk_gpu_pool_peak(int device_id, bool reset, size_t* out)
{
    *out = 0;
    CUZK_TRY(device_id, {
        device_init(gpu);
        cudaMemPool_t pool;
        CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, gpu.cid()));
        cuuint64_t high = 0;
        CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high));
        *out = (size_t)high;
        if (reset) {
            cuuint64_t zero = 0;
            CUDA_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
        }
    })
}

// A new proof vector of lane |lane| of device |device_id| holding host[0..n).
CUZK_FFI RustError::by_value cuzk_scalars_upload(int device_id, int lane, const fr_t* host,
                                                 size_t n, scalars_t** out)
{
    *out = nullptr;
    CUZK_TRY_ON(device_id, lane, {
        *out = dev_vec_upload(gpu, lane, host, n, lifetime_t::proof);
    })
}

CUZK_FFI RustError::by_value cuzk_scalars_download(const scalars_t* v, fr_t* out, size_t n)
{
    if (v == nullptr || n != v->len)
        return RustError{-cudaErrorInvalidValue, "cuzk: bad scalars handle or length"};
    CUZK_TRY(v->device_id, {
        if (n)
            CUDA_OK(cudaMemcpy(out, v->d, n * sizeof(fr_t), cudaMemcpyDeviceToHost));
    })
}

// The values of |src| whose bit is set in |words| (bit i of word i/64, least
// significant first), in order, as a new vector on the same device and lane.
CUZK_FFI RustError::by_value cuzk_scalars_select(const scalars_t* src, const uint64_t* words,
                                                 size_t nwords, scalars_t** out)
{
    *out = nullptr;
    if (src == nullptr)
        return RustError{-cudaErrorInvalidValue, "cuzk: null scalars handle"};
    CUZK_TRY_ON(src->device_id, src->lane, {
        const size_t len = src->len;
        if (nwords < (len + 63) / 64)
            return RustError{-cudaErrorInvalidValue, "cuzk: bitmap shorter than the vector"};
        size_t ones;
        std::vector<uint64_t> meta = select_meta(words, len, &ones);
        std::unique_ptr<scalars_t> v{new scalars_t(gpu, ones, lifetime_t::proof, src->lane)};
        if (ones) {
            const stream_t& s = gpu;
            const size_t need = meta.size() / 2;
            dev_ptr_t<uint64_t> d_meta{2 * need, s};
            CUDA_OK(cudaMemcpyAsync(&d_meta[0], meta.data(), 2 * need * sizeof(uint64_t),
                                    cudaMemcpyHostToDevice, s));
            select_by_bits<<<blocks_for(len), 256, 0, s>>>((fr_bits_t*)v->d, (const fr_bits_t*)src->d,
                                                  &d_meta[0], &d_meta[need], len);
            CUDA_OK(cudaGetLastError());
            CUDA_OK(cudaStreamSynchronize(s));
        }
        *out = v.release();
    })
}

CUZK_FFI void cuzk_scalars_free(scalars_t* v)
{   delete v;   }
