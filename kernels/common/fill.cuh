#pragma once
// Device fill with the counter-based random values of random.hpp, stored as `storage`.
// Host reference: round_to_storage(storage, uniform_value(seed, i)) (float_formats.hpp).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/fill_host.hpp"
#include "kernels/common/float_formats.hpp"

namespace gpubench::kernels {

// Enqueues the fill on `stream`; returns the launch status.
cudaError_t fill_uniform(void* dst, Storage storage, std::size_t count, std::uint64_t seed, cudaStream_t stream);

// The host version, fill_uniform_host, is in fill_host.hpp.

}  // namespace gpubench::kernels
