#pragma once
// The fp8 Tensor Core peak on Hopper (compute capability 9.0): a wgmma loop from sm_90a code
// (math, inputs and FLOP accounting in peak_reference.hpp).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/memory/peak_reference.hpp"

namespace gpubench::kernels {

inline constexpr unsigned kWgmmaPeakThreads = 128;  // one warpgroup per block

// Whether this build compiled the kernel for sm_90a (CMake: GPUBENCH_WGMMA_SM90A).
bool wgmma_fp8_peak_built();
// function_code_arch of the kernel on the current device (0: no sm_90a code for it).
cudaError_t wgmma_fp8_peak_code_arch(int* arch);
int wgmma_fp8_peak_blocks_per_sm();  // 0 on error
// `group_sums`: one double per block (warpgroup), the sum of its accumulators. `clock` as in peak.cuh.
cudaError_t launch_wgmma_fp8_peak(double* group_sums, std::int64_t iterations, unsigned grid,
                                  unsigned long long* clock, cudaStream_t stream);

}  // namespace gpubench::kernels
