// The host conversions of float_formats.hpp against CUDA's own host-callable ones (cuda_fp16.h,
// cuda_bf16.h, cuda_fp8.h): a build without CUDA has no such headers and skips this file.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/common/float_formats.hpp"
#include "kernels/common/random.hpp"

namespace gpubench::kernels {
namespace {

std::uint16_t cuda_half_bits(float f) {
  __half h = __float2half_rn(f);
  std::uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
std::uint16_t cuda_bf16_bits(float f) {
  __nv_bfloat16 h = __float2bfloat16_rn(f);
  std::uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}

// The host conversions must agree bit for bit with CUDA's, or the CPU reference would check
// the GPU against slightly different inputs.
TEST(FloatFormats, MatchCudaRoundingOnRandomAndEdgeValues) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<std::uint32_t> bits;
  std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.0f, 65520.0f, 1e-8f, 5.96e-8f, 2.98e-8f,
                               6.1e-5f, 6.097e-5f, 3.0e-5f, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 0x1p-25f, 0x1.8p-25f,
                               std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                               3.4e38f, 1.00390625f, 1.01171875f};
  for (int i = 0; i < 200000; ++i) {
    std::uint32_t u = bits(rng);
    float f;
    std::memcpy(&f, &u, 4);
    if (!std::isnan(f)) values.push_back(f);
  }
  for (int i = 0; i < 100000; ++i) values.push_back(uniform_value(7, static_cast<std::uint64_t>(i)));
  for (float f : values) {
    ASSERT_EQ(float_to_half_bits(f), cuda_half_bits(f)) << "half of " << f;
    ASSERT_EQ(float_to_bfloat16_bits(f), cuda_bf16_bits(f)) << "bf16 of " << f;
  }
}

// fp8: our conversion against cuda_fp8.h's own (host-callable) conversion, which is what the
// device fill uses: round to nearest even, saturating to the largest finite value.
std::uint8_t cuda_fp8_bits(float f, Storage s) {
  return s == Storage::E4M3 ? static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3))
                            : static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E5M2));
}

TEST(FloatFormats, Fp8MatchesCudaConversion) {
  for (Storage s : {Storage::E4M3, Storage::E5M2}) {
    // Every finite code decodes and re-encodes to itself.
    for (int b = 0; b < 256; ++b) {
      const float v = fp8_bits_to_float(static_cast<std::uint8_t>(b), s);
      if (!std::isfinite(v)) continue;
      EXPECT_EQ(float_to_fp8_bits(v, s), static_cast<std::uint8_t>(b)) << b;
    }
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> wide(-600.0f, 600.0f);
    for (int i = 0; i < 20000; ++i) {
      const float f = i % 2 ? wide(rng) : uniform_value(11, static_cast<std::uint64_t>(i));
      ASSERT_EQ(float_to_fp8_bits(f, s), cuda_fp8_bits(f, s)) << f << " " << storage_name(s);
    }
  }
}

}  // namespace
}  // namespace gpubench::kernels
