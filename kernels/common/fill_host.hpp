#pragma once
// The host side of fill.cuh: the same counter-based random values the device fill stores
// (round_to_storage(storage, uniform_value(seed, i)), float_formats.hpp), written to host memory.
// Plain C++, so CPU cases and a build without CUDA use it.
#include <cstddef>
#include <cstdint>

#include "kernels/common/float_formats.hpp"

namespace gpubench::kernels {

void fill_uniform_host(void* dst, Storage storage, std::size_t count, std::uint64_t seed);

}  // namespace gpubench::kernels
