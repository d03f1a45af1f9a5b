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

// CUZK_GUARD with sppark's device |device_id| selected as |gpu| (sppark's
// registry, made by the first ngpus(), selects device 0 too: the guard
// restores the caller's device after that as well).
#define CUZK_TRY(device_id, ...)                                            \
    CUZK_GUARD({                                                            \
        if ((device_id) < 0 || (size_t)(device_id) >= ngpus())              \
            return RustError{-cudaErrorInvalidDevice,                        \
                             fmt("cuzk: no CUDA device %d (%zu usable)",    \
                                 (int)(device_id), ngpus())};               \
        const gpu_t& gpu = select_gpu(device_id);                           \
        (void)gpu;                                                          \
        __VA_ARGS__                                                         \
    })

// Blocks of 256 threads for a grid-stride kernel over |n| items on |gpu|:
// one thread per item up to 16 blocks per SM, at least one block.
inline unsigned blocks_for(const gpu_t& gpu, size_t n)
{   return (unsigned)std::max<size_t>(1, std::min<size_t>((n + 255) / 256, (size_t)gpu.sm_count() * 16));   }

// Plain 256-bit words: passes a field element to a kernel by value without
// depending on fr_t's host (blst_256_t) vs device (mont_t) class layout.
struct fr_bits_t { uint64_t l[4]; };

#endif
