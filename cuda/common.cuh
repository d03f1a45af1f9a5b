// Shared by every cuzk translation unit: the BLS12-381 types of sppark and
// the error discipline of our C entry points.
//
// Every `extern "C"` entry takes an explicit device id (sppark's index over
// the GPUs it registered: compute capability >= 7 with cooperative launch),
// catches every C++ exception and returns RustError by value; its message is
// strdup'd here and freed by sppark::Error's Drop on the Rust side.

#ifndef __CUZK_COMMON_CUH__
#define __CUZK_COMMON_CUH__

#include <cuda.h>
#include <ff/bls12-381.hpp>

#include <util/exception.cuh>
#include <util/rusterror.h>
#include <util/gpu_t.cuh>

#define CUZK_FFI extern "C" __attribute__((visibility("default")))

// Guards an entry point: |body| runs with |gpu| selected; nothing escapes.
#define CUZK_TRY(device_id, ...)                                            \
    try {                                                                   \
        if ((device_id) < 0 || (size_t)(device_id) >= ngpus())              \
            return RustError{-cudaErrorInvalidDevice,                        \
                             fmt("cuzk: no CUDA device %d (%zu usable)",    \
                                 (int)(device_id), ngpus())};               \
        const gpu_t& gpu = select_gpu(device_id);                           \
        (void)gpu;                                                          \
        __VA_ARGS__                                                         \
    } catch (const sppark_error& e) {                                       \
        return RustError{e.code(), e.what()};                               \
    } catch (const std::exception& e) {                                     \
        return RustError{-1, e.what()};                                     \
    } catch (...) {                                                         \
        return RustError{-1, "cuzk: unknown C++ exception"};                \
    }                                                                       \
    return RustError{cudaSuccess};

// Plain 256-bit words: passes a field element to a kernel by value without
// depending on fr_t's host (blst_256_t) vs device (mont_t) class layout.
struct fr_bits_t { uint64_t l[4]; };

#endif
