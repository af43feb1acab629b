#pragma once
// The GEMM epilogues as a separate elementwise kernel, to measure what fusing them into the
// GEMM is worth: D(i, j, b) = epilogue(D(i, j, b)) in place, the math of
// kernels/gemm/epilogue_reference.hpp computed in fp32 (fp64 for F64 storage) and rounded
// back to D's storage type (F64, F32, F16 or BF16).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/common/float_formats.hpp"

namespace gpubench::kernels {

struct EpilogueArgs {
  void* d = nullptr;
  Storage storage = Storage::F32;
  std::int64_t m = 0, n = 0, ld = 0, batch = 1;  // batches packed ld * n apart
  const void* bias = nullptr;                    // m entries of `storage`; used when has_bias
  bool has_bias = false, gelu = false;
};

// Enqueues the kernel on `stream`; cudaErrorInvalidValue for another storage type.
cudaError_t apply_epilogue(const EpilogueArgs& args, cudaStream_t stream);

}  // namespace gpubench::kernels
