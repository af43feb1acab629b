#pragma once
// The MXFP8 and NVFP4 quantisers on the device: bf16 in, the codes cuBLASLt's block scaling
// reads out. Bit for bit the CPU quantiser (block_quantize.hpp: both run the per-block
// arithmetic of block_quantize_math.hpp), the values in the layout a K-major operand has (a
// row-major rows x k matrix: A of a TN product, or B), the scales in cuBLASLt's tiled
// layout (bq::block_scale_offset; the padding is never written: zero it once).
#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpubench::kernels {

// `in`: rows x k bf16, row-major; k a multiple of 32. `values`: rows x k E4M3 codes; `scales`:
// bq::block_scale_bytes(rows, k / 32) bytes of UE8M0 codes.
cudaError_t quantize_mxfp8(const std::uint16_t* in, std::int64_t rows, std::int64_t k, std::uint8_t* values,
                           std::uint8_t* scales, cudaStream_t stream);

// `in` as above, k a multiple of 16. `values`: rows x k / 2 bytes (two E2M1 codes each, the first
// in the low nibble); `scales`: bq::block_scale_bytes(rows, k / 16) bytes of E4M3 codes;
// `amax_bits`: one device word of scratch (the tensor's amax, reset here); `tensor_scale`: one
// device float, written (amax / (6 * 448)).
cudaError_t quantize_nvfp4(const std::uint16_t* in, std::int64_t rows, std::int64_t k, std::uint8_t* values,
                           std::uint8_t* scales, unsigned* amax_bits, float* tensor_scale, cudaStream_t stream);

// alpha_beta[0] = alpha * a_tensor_scale * b_tensor_scale, alpha_beta[1] = 0: NVFP4's second
// level folded into the GEMM's alpha (device pointer mode), since cuBLASLt's VEC16_UE4M3 mode
// applies the block scales only.
cudaError_t nvfp4_alpha(const float* a_tensor_scale, const float* b_tensor_scale, float alpha, float* alpha_beta,
                        cudaStream_t stream);

}  // namespace gpubench::kernels
