#pragma once
// Device side of per-tensor current scaling (fp8_scaling.hpp): the amax reduction and the
// quantiser, with an optional transpose (cuBLASLt's fp8 GEMMs take both operands K-major,
// "TN", so a GEMM that contracts over a tensor's rows needs that tensor transposed; the
// quantiser writes the transposed codes directly, as Transformer Engine's cast-transpose).
// Host reference of one code: float_to_fp8_bits(x * fp8_scale(amax, fp8_max(format)), format)
// (float_formats.hpp; tests/unit/test_float_formats_cuda.cpp checks it against cuda_fp8.h's
// conversion, which the kernel uses).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/common/float_formats.hpp"

namespace gpubench::kernels {

// *amax = max |x[i]| over n values of `in` (F32 or BF16); zeroes *amax first (both enqueued on s).
cudaError_t launch_amax(Storage in, const void* x, std::int64_t n, float* amax, cudaStream_t s);

// q = fp8(x * scale) for the rows x cols row-major x, scale = fp8_scale(*amax, fp8_max(out)),
// out E4M3 or E5M2; q is rows x cols, or cols x rows when `transpose`. *scale_inv = 1 / scale
// (the descale a cuBLASLt fp8 GEMM is given). `amax` as launch_amax left it, on the same stream.
cudaError_t launch_fp8_quantize(Storage in, const void* x, std::int64_t rows, std::int64_t cols, bool transpose,
                                Storage out, const float* amax, std::uint8_t* q, float* scale_inv, cudaStream_t s);

}  // namespace gpubench::kernels
