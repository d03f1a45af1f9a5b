// Shared by every cuzk translation unit: the BLS12-381 types of sppark and
// the error discipline of our C entry points.
//
// Every `extern "C"` entry takes an explicit device id (sppark's index over
// the GPUs it registered: compute capability >= 7 with cooperative launch),
// catches every C++ exception and returns RustError by value; its message is
// strdup'd here and freed by sppark::Error's Drop on the Rust side. An entry
// that selects a device gives the calling thread back the current device it
// had (current_device_restore_t): the host's own CUDA code on that thread
// must find the device it chose.

#ifndef __CUZK_COMMON_CUH__
#define __CUZK_COMMON_CUH__

#include <cuda.h>
#include <ff/bls12-381.hpp>

#include <util/exception.cuh>
#include <util/rusterror.h>
#include <util/gpu_t.cuh>

#define CUZK_FFI extern "C" __attribute__((visibility("default")))

// Puts the calling thread's current CUDA device back, when it goes out of
// scope, to what it was when it was made (nothing if that could not be
// read). Never throws.
class current_device_restore_t {
    int prev;
    bool known;
public:
    current_device_restore_t() : prev(0)
    {   known = cudaGetDevice(&prev) == cudaSuccess;   }
    ~current_device_restore_t()
    {
        int now;
        if (known && (cudaGetDevice(&now) != cudaSuccess || now != prev))
            (void)cudaSetDevice(prev);
    }
    current_device_restore_t(const current_device_restore_t&) = delete;
    current_device_restore_t& operator=(const current_device_restore_t&) = delete;
};

// Guards an entry point's body: nothing escapes (an exception comes back
// as a RustError), and the thread's current device is restored on every way
// out.
#define CUZK_GUARD(...)                                                     \
    try {                                                                   \
        current_device_restore_t restore_device;                            \
        __VA_ARGS__                                                         \
    } catch (const sppark_error& e) {                                       \
        return RustError{e.code(), e.what()};                               \
    } catch (const std::exception& e) {                                     \
        return RustError{-1, e.what()};                                     \
    } catch (...) {                                                         \
        return RustError{-1, "cuzk: unknown C++ exception"};                \
    }                                                                       \
    return RustError{cudaSuccess};

// A device's two lanes of work (lanes.cu). The throughput lane is sppark's
// own gpu_t: its streams are shared by every throughput proof on the device,
// and sppark's MSM allocates and frees on them with a synchronization each,
// so whatever is queued there is waited for. The express lane is a second
// gpu_t of the same device, made on first use: streams of its own at the
// device's highest priority (their kernels' blocks are scheduled before the
// throughput lane's), its own host threads and its own staging ring. Only
// critical proofs use it.
enum lane_t : int { LANE_THROUGHPUT = 0, LANE_EXPRESS = 1 };

// The gpu_t of lane |lane| of sppark's device |device_id| (checked by the
// caller), with that device selected for the calling thread.
const gpu_t& lane_gpu(int device_id, int lane);

// CUZK_GUARD with lane |lane| of sppark's device |device_id| selected as
// |gpu| (sppark's registry, made by the first ngpus(), selects device 0 too:
// the guard restores the caller's device after that as well).
#define CUZK_TRY_ON(device_id, lane, ...)                                   \
    CUZK_GUARD({                                                            \
        if ((device_id) < 0 || (size_t)(device_id) >= ngpus())              \
            return RustError{-cudaErrorInvalidDevice,                        \
                             fmt("cuzk: no CUDA device %d (%zu usable)",    \
                                 (int)(device_id), ngpus())};               \
        if ((lane) != LANE_THROUGHPUT && (lane) != LANE_EXPRESS)            \
            return RustError{-cudaErrorInvalidValue,                        \
                             fmt("cuzk: no lane %d", (int)(lane))};         \
        const gpu_t& gpu = lane_gpu(device_id, lane);                       \
        (void)gpu;                                                          \
        __VA_ARGS__                                                         \
    })

// CUZK_TRY_ON the device's throughput lane.
#define CUZK_TRY(device_id, ...) CUZK_TRY_ON(device_id, LANE_THROUGHPUT, __VA_ARGS__)

// Blocks of 256 threads for a grid-stride kernel over |n| items: one thread
// per item, at least one block. Short blocks keep SMs turning over, so that
// the express lane's blocks (dispatched first) find room within microseconds
// instead of waiting for blocks that loop over a whole partition.
inline unsigned blocks_for(size_t n)
{   return (unsigned)std::max<size_t>(1, std::min<size_t>((n + 255) / 256, INT32_MAX));   }

// Plain 256-bit words: passes a field element to a kernel by value without
// depending on fr_t's host (blst_256_t) vs device (mont_t) class layout.
struct fr_bits_t { uint64_t l[4]; };

#endif
