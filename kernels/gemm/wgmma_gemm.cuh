#pragma once
// Rung 5 of the custom GEMM ladder (custom_gemm.hpp): Hopper wgmma + TMA. fp16 or bf16 in,
// fp32 accumulate, fp16/bf16 out; column-major NN; m multiple of 128, n of 256, k of 64.
// Runs only on compute capability 9.0 from sm_90a code (wgmma and the TMA tensor copies are
// architecture-specific); wgmma_gemm_built() says whether this binary has it.
#include <cuda.h>  // CUtensorMap and its enums: types only, libcuda is never linked
#include <cuda_runtime_api.h>

#include <string>

#include "kernels/gemm/custom_gemm.hpp"

namespace gpubench::kernels {

// The TMA descriptors of A and B for one problem (wgmma_tma.cpp encodes them).
struct WgmmaTensorMaps {
  CUtensorMap a;  // A (m x k, m contiguous), 64 x 64 boxes, 128-byte swizzle
  CUtensorMap b;  // B (k x n, k contiguous), 64 x 256 boxes, 128-byte swizzle
};

// Whether the build compiled the kernel for sm_90a (CMake: GPUBENCH_WGMMA_SM90A).
bool wgmma_gemm_built();
// Runs a one-thread probe on the current device: true when the loaded code is the sm_90a
// kernel (false, with cudaSuccess, when the device runs a build without it).
cudaError_t wgmma_gemm_probe(bool* usable, cudaStream_t stream);
// Encodes the tensor maps through the driver's cuTensorMapEncodeTiled, fetched with
// cudaGetDriverEntryPoint (no libcuda link). Returns an empty string or why it failed.
std::string encode_wgmma_tensor_maps(const CustomGemmArgs& args, WgmmaTensorMaps* maps);
// Once per device before the first launch: 193 KiB of dynamic shared memory.
cudaError_t prepare_wgmma_gemm(Storage storage);
cudaError_t launch_wgmma_gemm(const CustomGemmArgs& args, const WgmmaTensorMaps& maps, cudaStream_t stream);

}  // namespace gpubench::kernels
