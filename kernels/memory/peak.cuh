#pragma once
// Device arithmetic peak kernels: FMA chains and mma.sync loops (math, inputs and FLOP
// accounting in peak_reference.hpp), and an empty kernel for launch overheads.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/memory/peak_reference.hpp"

namespace gpubench::kernels {

// `clock` (may be null): block 0 thread 0 writes {SM cycles, globaltimer ns} spent in the
// kernel, from which the SM clock during the run is cycles / ns GHz.
cudaError_t launch_fma_chain(FmaType t, double* out, std::int64_t iterations, unsigned grid, unsigned block,
                             unsigned long long* clock, cudaStream_t stream);

// `warp_sums`: one double per warp (grid * block / 32), the sum of its accumulators.
// MmaType::FP8 runs natively only from sm_89 or sm_12x code on such a GPU (choose_fp8_peak in
// peak_reference.hpp decides with mma_code_arch); any other code writes NaN.
cudaError_t launch_mma(MmaType t, double* warp_sums, std::int64_t iterations, unsigned grid, unsigned block,
                       unsigned long long* clock, cudaStream_t stream);

// Blocks of `block` threads of the kernel that one SM holds at once (0 on error): the peak
// cases launch SMs x this, one full wave, so no partial second wave dilutes the rate.
int fma_blocks_per_sm(FmaType t, unsigned block);
int mma_blocks_per_sm(MmaType t, unsigned block);
// function_code_arch (kernels/common/device_code.hpp) of the mma kernel of type t.
cudaError_t mma_code_arch(MmaType t, int* arch);

// An empty kernel (one block of one thread); with a non-null `flag` it stores 1 there.
cudaError_t launch_empty(int* flag, cudaStream_t stream);
// The same kernel's entry point, for CUDA Graph kernel nodes (argument: int* flag).
const void* empty_kernel_function();

}  // namespace gpubench::kernels
