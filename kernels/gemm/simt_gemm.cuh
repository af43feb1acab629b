#pragma once
// The fp32 SIMT rungs of the custom GEMM ladder (custom_gemm.hpp): naive, shared-memory tiled
// and register-blocked. fp32 in, fp32 accumulate (FFMA), fp32 out; column-major NN.
// Index math and per-thread arithmetic: custom_gemm_tiles.hpp (also run by the unit tests).
#include <cuda_runtime_api.h>

#include "kernels/gemm/custom_gemm.hpp"

namespace gpubench::kernels {

// Any m, n, k. Returns the launch status.
cudaError_t launch_naive_gemm(const CustomGemmArgs& args, cudaStream_t stream);
// Any m, n, k (edge tiles load zeros).
cudaError_t launch_tiled_gemm(const CustomGemmArgs& args, cudaStream_t stream);
// m, n multiples of 128 and k of 8 (custom_gemm_unsupported says so otherwise).
cudaError_t launch_regblock_gemm(const CustomGemmArgs& args, cudaStream_t stream);

}  // namespace gpubench::kernels
