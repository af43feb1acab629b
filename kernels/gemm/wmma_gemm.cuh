#pragma once
// Rung 4 of the custom GEMM ladder (custom_gemm.hpp): Tensor Cores through nvcuda::wmma.
// fp16 or bf16 in (args.storage F16/BF16), fp32 accumulate, fp16/bf16 out; column-major NN;
// m a multiple of 128, n of 256 and k of 32. Needs sm_80 or newer (bf16 WMMA, cp.async).
#include <cuda_runtime_api.h>

#include "kernels/gemm/custom_gemm.hpp"

namespace gpubench::kernels {

// Once per device before the first launch: allows the kernel its 85.5 KiB of dynamic shared
// memory (above the 48 KiB default; every sm_80+ GPU has at least 99 KiB per block).
cudaError_t prepare_wmma_gemm(Storage storage);
cudaError_t launch_wmma_gemm(const CustomGemmArgs& args, cudaStream_t stream);

}  // namespace gpubench::kernels
