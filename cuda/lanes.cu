// The express lane of each device (common.cuh says what a lane is).
//
// An express gpu_t is sppark's own class, made here for the device sppark
// registered under the same id: the NTTs and MSMs take it (or its streams)
// as they take the shared one. cudaStreamCreateWithFlags made its streams at
// the default priority; they are raised to the device's highest (a stream
// attribute since CUDA 12), which applies to all work queued after.

#include "common.cuh"
#include <memory>
#include <mutex>

namespace {

constexpr size_t MAX_GPUS = 64;

std::mutex registry;
const gpu_t* express[MAX_GPUS];     // never freed: one per device, for the process

void raise_priority(cudaStream_t s, int priority)
{
    cudaStreamAttrValue v = {};
    v.priority = priority;
    CUDA_OK(cudaStreamSetAttribute(s, cudaStreamAttributePriority, &v));
}

const gpu_t& express_gpu(int device_id)
{
    if ((size_t)device_id >= MAX_GPUS)
        throw sppark_error{-cudaErrorInvalidDevice, std::string("cuzk: device id over 63")};
    std::lock_guard<std::mutex> guard(registry);
    const gpu_t*& slot = express[device_id];
    if (slot == nullptr) {
        const gpu_t& shared = select_gpu(device_id);
        std::unique_ptr<gpu_t> g{new gpu_t(device_id, shared.cid(), shared.props())};
        int least, greatest;
        CUDA_OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        raise_priority((cudaStream_t)*g, greatest);
        for (size_t i = 0; i < gpu_t::FLIP_FLOP; i++)
            raise_priority((*g)[i], greatest);
        slot = g.release();
    }
    slot->select();
    return *slot;
}

} // namespace

const gpu_t& lane_gpu(int device_id, int lane)
{
    return lane == LANE_EXPRESS ? express_gpu(device_id) : select_gpu(device_id);
}
