#pragma once
// Cold-mode cache flush by reading: a kernel that reads a buffer (twice the L2) through L2.
// Unlike a memset over it, reading leaves the L2 full of clean lines, so no write-back of the
// flush buffer lands inside the next timed kernel; lines the case left dirty are evicted (and
// written back) during the flush, outside the timed region.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpubench::kernels {

// Reads `bytes` (a multiple of 16) of `buffer` with `grid` blocks; nothing is written, unless
// the XOR of everything read equals a value it cannot take for the buffer the caller fills
// (kept so the compiler cannot drop the loads).
cudaError_t launch_l2_flush_read(void* buffer, std::size_t bytes, unsigned grid, cudaStream_t stream);

}  // namespace gpubench::kernels
