#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernels/common/fill.cuh"
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

TEST(FloatFormats, RoundTrips) {
  for (std::uint32_t h = 0; h < 0x7C00u; ++h) {  // every finite positive half
    const auto bits = static_cast<std::uint16_t>(h);
    ASSERT_EQ(float_to_half_bits(half_bits_to_float(bits)), bits);
  }
  EXPECT_EQ(bfloat16_bits_to_float(float_to_bfloat16_bits(1.5f)), 1.5f);
  EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(std::nanf("")))));
}

TEST(Random, UniformValuesAreInRangeDeterministicAndVaried) {
  double sum = 0;
  for (std::uint64_t i = 0; i < 10000; ++i) {
    const float v = uniform_value(3, i);
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    ASSERT_EQ(v, uniform_value(3, i));
    sum += v;
  }
  EXPECT_NEAR(sum / 10000, 0.0, 0.05);
  EXPECT_NE(uniform_value(3, 0), uniform_value(4, 0));
}

TEST(Random, HostFillMatchesReferenceValues) {
  std::vector<std::uint16_t> h(100);
  fill_uniform_host(h.data(), Storage::BF16, h.size(), 9);
  for (std::size_t i = 0; i < h.size(); ++i) {
    EXPECT_EQ(bfloat16_bits_to_float(h[i]), round_to_storage(Storage::BF16, uniform_value(9, i)));
  }
  std::vector<double> d(10);
  fill_uniform_host(d.data(), Storage::F64, d.size(), 9);
  EXPECT_EQ(d[3], static_cast<double>(uniform_value(9, 3)));
}

}  // namespace
}  // namespace gpubench::kernels
