#pragma once
// The GPU pointer chase (pointer_chase.hpp): one thread walks a ring of pointers in device,
// peer or mapped host memory.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpubench::kernels {

// Launches `grid` blocks of one thread; only block `target` walks: `steps` dependent loads
// from `start`, then stores where it stopped to `end` (so the loads cannot be dropped, and the
// walk can be checked). Moving `target` over the SMs averages over where an SM sits on the
// chip, as nvbandwidth's latency tests do.
cudaError_t launch_pointer_chase(const void* start, std::uint64_t steps, unsigned grid, unsigned target,
                                 std::uint64_t* end, cudaStream_t stream);

}  // namespace gpubench::kernels
