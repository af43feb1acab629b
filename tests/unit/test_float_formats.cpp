#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernels/common/fill_host.hpp"
#include "kernels/common/float_formats.hpp"
#include "kernels/common/random.hpp"

namespace gpubench::kernels {
namespace {

// The array conversion (F16C where the CPU has it) gives float_to_half_bits's bits for every
// non-NaN float: one in every 4099 bit patterns plus the edges, at every offset of the 8-wide
// loop and its tail; a NaN stays a NaN.
TEST(FloatFormats, ArrayHalfConversionMatchesTheScalarOne) {
  std::vector<float> values = {0.0f, -0.0f, 65504.0f, 65519.0f, 65520.0f, 0x1p-24f, 0x1p-25f, 0x1.8p-25f, 6.1e-5f,
                               std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN()};
  for (std::uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4099) {
    float f;
    const auto bits = static_cast<std::uint32_t>(u);
    std::memcpy(&f, &bits, 4);
    values.push_back(f);
  }
  for (std::size_t start : {std::size_t{0}, std::size_t{3}}) {
    std::vector<std::uint16_t> out(values.size() - start);
    floats_to_half_bits(values.data() + start, out.data(), out.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      const float f = values[start + i];
      if (std::isnan(f)) {
        ASSERT_TRUE(std::isnan(half_bits_to_float(out[i]))) << i;
      } else {
        ASSERT_EQ(out[i], float_to_half_bits(f)) << "half of " << f;
      }
    }
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

TEST(FloatFormats, Fp8KnownValues) {
  EXPECT_EQ(float_to_fp8_bits(1.0f, Storage::E4M3), 0x38);
  EXPECT_EQ(float_to_fp8_bits(448.0f, Storage::E4M3), 0x7E);
  EXPECT_EQ(float_to_fp8_bits(1000.0f, Storage::E4M3), 0x7E);   // saturates
  EXPECT_EQ(float_to_fp8_bits(-1000.0f, Storage::E4M3), 0xFE);
  EXPECT_EQ(float_to_fp8_bits(0x1p-9f, Storage::E4M3), 0x01);   // smallest subnormal
  EXPECT_EQ(float_to_fp8_bits(0x1p-10f, Storage::E4M3), 0x00);  // tie to even: zero
  EXPECT_EQ(float_to_fp8_bits(0x3p-10f, Storage::E4M3), 0x02);  // 1.5 steps: tie to even, up
  EXPECT_EQ(float_to_fp8_bits(1.0f, Storage::E5M2), 0x3C);
  EXPECT_EQ(float_to_fp8_bits(57344.0f, Storage::E5M2), 0x7B);
  EXPECT_EQ(float_to_fp8_bits(1.125f, Storage::E5M2), 0x3C);  // tie: down to even
  EXPECT_EQ(float_to_fp8_bits(1.375f, Storage::E5M2), 0x3E);  // tie: up to even
  EXPECT_EQ(fp8_bits_to_float(0x7E, Storage::E4M3), 448.0f);
  EXPECT_TRUE(std::isnan(fp8_bits_to_float(0x7F, Storage::E4M3)));
  EXPECT_TRUE(std::isinf(fp8_bits_to_float(0x7C, Storage::E5M2)));
}

// Infinities saturate to the largest finite code, as CUDA's __nv_cvt_float_to_fp8 with
// __NV_SATFINITE does (0x7e/0xfe for E4M3, 0x7b/0xfb for E5M2); they once became +-0.
TEST(FloatFormats, Fp8InfinitiesSaturate) {
  EXPECT_EQ(float_to_fp8_bits(INFINITY, Storage::E4M3), 0x7E);
  EXPECT_EQ(float_to_fp8_bits(-INFINITY, Storage::E4M3), 0xFE);
  EXPECT_EQ(float_to_fp8_bits(INFINITY, Storage::E5M2), 0x7B);
  EXPECT_EQ(float_to_fp8_bits(-INFINITY, Storage::E5M2), 0xFB);
  EXPECT_EQ(float_to_fp8_bits(3.0e38f, Storage::E4M3), 0x7E);  // huge but finite too
  EXPECT_EQ(fp8_bits_to_float(float_to_fp8_bits(INFINITY, Storage::E4M3),
                                       Storage::E4M3),
            448.0f);
}

TEST(FloatFormats, IntegerStorageAndFills) {
  EXPECT_EQ(uniform_to_int(-1.0f), -16);
  EXPECT_EQ(uniform_to_int(0.999f), 15);
  EXPECT_EQ(uniform_to_int(-0.01f), -1);
  EXPECT_EQ(storage_bytes(Storage::I8), 1u);
  EXPECT_EQ(storage_bytes(Storage::I32), 4u);
  EXPECT_EQ(storage_bytes(Storage::E5M2), 1u);
  std::vector<std::int8_t> i8(64);
  fill_uniform_host(i8.data(), Storage::I8, i8.size(), 5);
  std::vector<std::uint8_t> e4(64);
  fill_uniform_host(e4.data(), Storage::E4M3, e4.size(), 5);
  for (std::size_t i = 0; i < i8.size(); ++i) {
    EXPECT_EQ(load_element(Storage::I8, i8.data(), i), round_to_storage(Storage::I8, uniform_value(5, i)));
    EXPECT_EQ(load_element(Storage::E4M3, e4.data(), i), round_to_storage(Storage::E4M3, uniform_value(5, i)));
  }
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
