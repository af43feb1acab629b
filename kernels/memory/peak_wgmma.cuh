#pragma once
// The Tensor Core peaks on Hopper (compute capability 9.0) for fp16, bf16, tf32, int8 and fp8: a
// wgmma loop per type from sm_90a code (math, inputs and FLOP accounting in peak_reference.hpp).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/memory/peak_reference.hpp"

namespace gpubench::kernels {

inline constexpr unsigned kWgmmaPeakThreads = 128;  // one warpgroup per block

// Whether this build compiled the kernels for sm_90a (CMake: GPUBENCH_WGMMA_SM90A).
bool wgmma_peak_built();
// function_code_arch of type t's kernel on the current device (0: no sm_90a code for it).
cudaError_t wgmma_peak_code_arch(MmaType t, int* arch);
int wgmma_peak_blocks_per_sm(MmaType t);  // 0 on error
// `group_sums`: one double per block (warpgroup), the sum of its accumulators. `clock` as in peak.cuh.
cudaError_t launch_wgmma_peak(MmaType t, double* group_sums, std::int64_t iterations, unsigned grid,
                              unsigned long long* clock, cudaStream_t stream);

}  // namespace gpubench::kernels
