#pragma once
// Block-scaled quantisation on the host, bit for bit: the MXFP8 and NVFP4 quantisers and the
// GEMM of two quantised matrices. They are the CPU twins of the gemm suite's block-scaled dtypes
// (issue 30): the verifier of a block-scaled GEMM and the reference a GPU quantiser must match
// bit for bit. The element and scale codes (E4M3, E2M1, UE8M0) are kernels/common/float_formats.
//
// MXFP8 (MX v1.0, sec. 6.3): every 32 consecutive values along K share X = 2^(floor(log2(amax))
// - 8), 8 being E4M3's largest exponent (448 = 1.75 * 2^8); each value is stored as E4M3(v / X),
// rounded to nearest even and saturated to +-448 (so a block whose amax has a mantissa above
// 1.75 clips its largest values: MX's rule, kept). An all-zero block gets X = 1 (code 127).
//
// NVFP4 (NVIDIA's two-level scheme, "Introducing NVFP4", NVIDIA technical blog, 2025-06): every
// 16 values share an E4M3 scale, and the tensor an fp32 scale. gpubench's exact sequence (what
// a GPU quantiser must reproduce; other libraries round differently):
//   t = amax(tensor) / (6 * 448)                 (fp32; 1 for an all-zero tensor)
//   s = E4M3(amax(block) / (6 * t))              (round to nearest even, saturating)
//   q = E2M1(v / (s * t))                        (likewise; 0 where s is 0)
// and the value a code stands for is q * s * t.
#include <cstdint>
#include <vector>

namespace gpubench::kernels {

enum class BlockFormat { Mxfp8, Nvfp4 };
int block_size(BlockFormat f);  // 32, 16

// A rows x k matrix quantised along k (row-major: every row's k values are consecutive, so a
// block is 32 or 16 consecutive values of one row). k must be a multiple of the block size.
struct BlockScaled {
  BlockFormat format = BlockFormat::Mxfp8;
  std::int64_t rows = 0, k = 0;
  std::vector<std::uint8_t> values;  // MXFP8: one E4M3 code per value; NVFP4: two E2M1 codes per byte
  std::vector<std::uint8_t> scales;  // one per block, row-major: UE8M0 (MXFP8) or E4M3 (NVFP4)
  float tensor_scale = 1.0f;         // NVFP4's second level (1 for MXFP8)
  double at(std::int64_t row, std::int64_t col) const;  // the value the codes stand for
};

// Quantises `rows` x `k` row-major floats (std::invalid_argument when k is not a multiple of the
// block size or a dimension is not positive).
BlockScaled quantize(BlockFormat format, const float* values, std::int64_t rows, std::int64_t k);

// The values the codes stand for (q.at for every entry), rows x k row-major, exact in double.
std::vector<double> decode(const BlockScaled& q);

// D = A * B^T from the quantised values (a: m x k, b: n x k, both quantised along k as cuBLASLt's
// block scaling wants them, "TN"): m x n, row-major. Each product of two decoded values is exact
// in double (at most 8 significant bits each, exponents far inside double's range) and the sums
// are in double: the reference a GPU's fp32-accumulated result is held to, with its tolerance.
std::vector<double> emulated_gemm(const BlockScaled& a, const BlockScaled& b);

}  // namespace gpubench::kernels
