#pragma once
// The per-block arithmetic of the MXFP8 and NVFP4 quantisers (block_quantize.hpp documents the
// sequence), written once for the host and the device: block_quantize.cpp (the CPU quantiser)
// and block_quantize.cu (the GPU one) call these very functions, so the two can only differ
// where the compilers' float arithmetic would (it does not: only IEEE multiply, divide, rintf
// and ldexpf, correctly rounded on both sides without fast-math, and no add to contract into an
// FMA). Includable by g++ and nvcc alike; plain C++ on the host.
//
// Also the layout cuBLASLt wants block scales in (block_scale_offset), used by the GPU quantiser
// to write them and by the host to read them back.
#include <math.h>

#include <cstdint>
#include <cstring>

#include "kernels/common/host_device.hpp"

namespace gpubench::kernels::bq {

constexpr float kE2M1Max = 6.0f;
constexpr float kE4M3Max = 448.0f;
constexpr int kE4M3MaxExponent = 8;  // 448 = 1.75 * 2^8

GPUBENCH_HD inline std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

// floor(log2(a)) for a finite a > 0 (float subnormals included).
GPUBENCH_HD inline int floor_log2(float a) {
  const std::uint32_t u = float_bits(a) & 0x7FFFFFFFu;
  const int field = static_cast<int>(u >> 23);
  if (field != 0) return field - 127;
  int e = -127;  // subnormal: mantissa * 2^-149
  for (std::uint32_t m = u; m < 0x00800000u; m <<= 1) --e;
  return e;
}

// One step of the amax of a block or tensor: NaN is passed over (std::max(m, NaN) keeps m,
// which is what the CPU quantiser always did), -0 counts as 0.
GPUBENCH_HD inline float amax_step(float m, float v) {
  const float a = fabsf(v);
  return (m < a) ? a : m;
}

// E4M3 code of f: round to nearest even, saturate to +-448 (__NV_SATFINITE), NaN -> 0x7F.
// Bit-identical to float_to_fp8_bits(f, Storage::E4M3) (tests/unit/test_block_quantize.cpp
// checks it over a sweep of every binade). With e = max(floor(log2|f|), -6) (-6: the smallest
// normal exponent), r = rint(|f| / 2^(e-3)) is in [0, 16] and the code is ((e + 7) << 3) + r - 8:
// r = 16 carries into the exponent, and at e = -6 the same sum gives the subnormal codes.
GPUBENCH_HD inline std::uint8_t e4m3_code(float f) {
  const std::uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7F;  // NaN
  const std::uint8_t sign = (u >> 31) ? 0x80 : 0x00;
  const float a = fabsf(f);
  if (a == 0.0f) return sign;
  int e = floor_log2(a);  // +inf: 128
  if (e > kE4M3MaxExponent) return sign | 0x7E;
  if (e < -6) e = -6;
  const float r = rintf(ldexpf(a, 3 - e));  // exact scaling (the result is in [1, 16) or, at e = -6, smaller)
  const int code = ((e + 7) << 3) + static_cast<int>(r) - 8;
  return sign | static_cast<std::uint8_t>(code > 0x7E ? 0x7E : code);
}

// The value of an E4M3 code (NaN for 0x7F / 0xFF), exact in float.
GPUBENCH_HD inline float e4m3_value(std::uint8_t code) {
  const int exp = (code >> 3) & 0xF, mant = code & 7;
  if (exp == 15 && mant == 7) return NAN;
  const float v = exp == 0 ? ldexpf(static_cast<float>(mant), -9) : ldexpf(static_cast<float>(mant + 8), exp - 10);
  return (code & 0x80) ? -v : v;
}

// E2M1 code of f: nearest of 0, 0.5, 1, 1.5, 2, 3, 4, 6, ties to the even code, saturating to
// +-6, NaN -> +6 (0x7). The midpoints written out: at 0.25, 1.25, 2.5 and 5 the even code is
// the lower one (<=), at 0.75, 1.75 and 3.5 the upper one (<). Bit-identical to
// float_to_e2m1_bits (tested likewise).
GPUBENCH_HD inline std::uint8_t e2m1_code(float f) {
  const std::uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7;
  const std::uint8_t sign = (u >> 31) ? 0x8 : 0x0;
  const float a = fabsf(f);
  std::uint8_t c;
  if (a <= 0.25f) c = 0;
  else if (a < 0.75f) c = 1;
  else if (a <= 1.25f) c = 2;
  else if (a < 1.75f) c = 3;
  else if (a <= 2.5f) c = 4;
  else if (a < 3.5f) c = 5;
  else if (a <= 5.0f) c = 6;
  else c = 7;
  return sign | c;
}

// ---- MXFP8 (32 values per UE8M0 scale) ----

// UE8M0 code of the block's shared scale 2^(floor(log2(amax)) - 8), clamped to 0..254; 127
// (X = 1) for an all-zero (or non-finite-amax) block.
GPUBENCH_HD inline std::uint8_t mx_scale_code(float amax) {
  if (!(amax > 0.0f) || (float_bits(amax) & 0x7F800000u) == 0x7F800000u) return 127;
  const int shared = floor_log2(amax) - kE4M3MaxExponent + 127;
  return static_cast<std::uint8_t>(shared < 0 ? 0 : (shared > 254 ? 254 : shared));
}

// E4M3 code of v / 2^(scale - 127). ldexpf is exact where the quotient is a normal float; below
// that E4M3 holds a signed zero either way (its smallest subnormal is 2^-9).
GPUBENCH_HD inline std::uint8_t mx_value_code(float v, std::uint8_t scale) {
  return e4m3_code(ldexpf(v, 127 - static_cast<int>(scale)));
}

// ---- NVFP4 (16 values per E4M3 scale, and an fp32 tensor scale) ----

// t = amax(tensor) / (6 * 448), 1 for an all-zero tensor.
GPUBENCH_HD inline float nvfp4_tensor_scale(float amax) { return amax > 0.0f ? amax / (kE2M1Max * kE4M3Max) : 1.0f; }
// s = E4M3(amax(block) / (6 t)).
GPUBENCH_HD inline std::uint8_t nvfp4_scale_code(float block_amax, float tensor_scale) {
  return e4m3_code(block_amax / (kE2M1Max * tensor_scale));
}
// q = E2M1(v / (s t)), 0 where s is 0 (or NaN).
GPUBENCH_HD inline std::uint8_t nvfp4_value_code(float v, std::uint8_t scale, float tensor_scale) {
  const float s = e4m3_value(scale);
  return s > 0.0f ? e2m1_code(v / (s * tensor_scale)) : std::uint8_t{0};
}

// ---- cuBLASLt's block-scale layout ----
//
// cuBLAS documentation, "1D Block Scaling Factors Layout" (cuBLASLt, CUBLASLT_MATMUL_MATRIX_SCALE_
// VEC16_UE4M3 / VEC32_UE8M0; https://docs.nvidia.com/cuda/cublas/#d-block-scaling-factors-layout):
// the scales of an operand form a grid of (outer rows) x (K / block) entries, padded to a multiple
// of 128 rows and 4 columns and cut into 128 x 4 tiles of 512 bytes, stored tile after tile with
// the K-direction tiles of a 128-row band consecutive. Inside a tile, row r and column c sit at
// (r % 32) * 16 + (r / 32) * 4 + c (four 32-row groups interleaved, 16 bytes per row of 32).
// nvmath-python's to_block_scale ("the tiled layout required by cuBLASLt") and PyTorch's
// to_blocked compute the same permutation.
GPUBENCH_HD inline std::int64_t padded_scale_rows(std::int64_t rows) { return (rows + 127) / 128 * 128; }
GPUBENCH_HD inline std::int64_t padded_scale_cols(std::int64_t cols) { return (cols + 3) / 4 * 4; }
// Byte offset of scale (row, col) in a grid `cols` scales wide (before padding).
GPUBENCH_HD inline std::int64_t block_scale_offset(std::int64_t row, std::int64_t col, std::int64_t cols) {
  const std::int64_t tiles_per_band = padded_scale_cols(cols) / 4;
  const std::int64_t tile = (row / 128) * tiles_per_band + col / 4;
  const std::int64_t r = row % 128, c = col % 4;
  return tile * 512 + (r % 32) * 16 + (r / 32) * 4 + c;
}
// Bytes of an operand's scale buffer (the padded grid).
GPUBENCH_HD inline std::int64_t block_scale_bytes(std::int64_t rows, std::int64_t cols) {
  return padded_scale_rows(rows) * padded_scale_cols(cols);
}

}  // namespace gpubench::kernels::bq
