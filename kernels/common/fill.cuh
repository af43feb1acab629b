#pragma once
// Device fill with the counter-based random values of random.hpp, stored as `storage`.
// Host reference: round_to_storage(storage, uniform_value(seed, i)) (float_formats.hpp).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/float_formats.hpp"

namespace gpubench::kernels {

// Enqueues the fill on `stream`; returns the launch status.
cudaError_t fill_uniform(void* dst, Storage storage, std::size_t count, std::uint64_t seed, cudaStream_t stream);

// Host version: fills a host buffer with the same values the device fill stores.
void fill_uniform_host(void* dst, Storage storage, std::size_t count, std::uint64_t seed);

}  // namespace gpubench::kernels
