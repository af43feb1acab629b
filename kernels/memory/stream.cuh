#pragma once
// Device bandwidth kernels: the operations of stream_reference.hpp over 16-byte vectors
// (double2), grid-stride, and a 16-byte copy kernel for copies through the SMs (also to and
// from mapped pinned host memory). Byte accounting is in stream_reference.hpp.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/memory/stream_reference.hpp"

namespace gpubench::kernels {

inline constexpr unsigned kStreamBlock = 256;

// n: doubles per array, even. `partials` (dot only) receives one double per block: the run's
// dot product is their sum. `grid` blocks of kStreamBlock threads.
cudaError_t launch_stream(StreamOp op, double* a, double* b, double* c, std::size_t n, double* partials, unsigned grid,
                          cudaStream_t stream);

// Blocks of kStreamBlock threads of `op`'s kernel (of the copy kernel for copy16) that one SM
// holds at once: grid = SMs x this is one full wave (0 on error).
int stream_blocks_per_sm(StreamOp op);
int copy16_blocks_per_sm();

// dst[i] = src[i] for `bytes` bytes (a multiple of 16), read and written by the SMs.
cudaError_t launch_copy16(void* dst, const void* src, std::size_t bytes, unsigned grid, cudaStream_t stream);

}  // namespace gpubench::kernels
