// Block-scaled formats (kernels/common/float_formats.hpp, kernels/gemm/block_quantize.hpp; issue 30 item 3): every E2M1 and UE8M0
// code point both ways, round-to-nearest-even and saturation, the MXFP8 and NVFP4 quantisers on
// blocks worked by hand, and the emulated GEMM against the GEMM of the decoded values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <random>
#include <vector>

#include "kernels/common/float_formats.hpp"
#include "kernels/gemm/block_quantize.hpp"
#include "kernels/gemm/block_quantize_math.hpp"

namespace gpubench::kernels {
namespace {

TEST(BlockScaling, EveryE2M1CodeBothWays) {
  const float magnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (std::uint8_t c = 0; c < 16; ++c) {
    const float v = e2m1_bits_to_float(c);
    EXPECT_EQ(std::fabs(v), magnitudes[c & 7]) << int(c);
    EXPECT_EQ(std::signbit(v), (c & 8) != 0) << int(c);
    EXPECT_EQ(float_to_e2m1_bits(v), c) << int(c);  // -0 keeps its sign bit: code 8
  }
}

TEST(BlockScaling, E2M1RoundsToNearestEvenAndSaturates) {
  // Ties go to the code with an even mantissa bit: 0.25 -> 0, 0.75 -> 1, 1.25 -> 1, 1.75 -> 2,
  // 2.5 -> 2, 3.5 -> 4, 5 -> 4.
  const std::pair<float, float> ties[] = {{0.25f, 0.0f}, {0.75f, 1.0f}, {1.25f, 1.0f}, {1.75f, 2.0f},
                                          {2.5f, 2.0f},  {3.5f, 4.0f},  {5.0f, 4.0f}};
  for (const auto& [in, out] : ties) {
    EXPECT_EQ(e2m1_bits_to_float(float_to_e2m1_bits(in)), out) << in;
    EXPECT_EQ(e2m1_bits_to_float(float_to_e2m1_bits(-in)), -out) << -in;
  }
  EXPECT_EQ(e2m1_bits_to_float(float_to_e2m1_bits(0.3f)), 0.5f);
  EXPECT_EQ(e2m1_bits_to_float(float_to_e2m1_bits(2.9f)), 3.0f);
  EXPECT_EQ(float_to_e2m1_bits(7.0f), 0x7);
  EXPECT_EQ(float_to_e2m1_bits(-1e30f), 0xF);
  EXPECT_EQ(float_to_e2m1_bits(INFINITY), 0x7);
  EXPECT_EQ(float_to_e2m1_bits(NAN), 0x7);  // no NaN in E2M1
}

TEST(BlockScaling, EveryUe8m0Code) {
  for (int c = 0; c < 255; ++c) EXPECT_EQ(ue8m0_to_double(static_cast<std::uint8_t>(c)), std::ldexp(1.0, c - 127)) << c;
  EXPECT_TRUE(std::isnan(ue8m0_to_double(0xFF)));
}

// MX v1.0: X = 2^(floor(log2(amax)) - 8), values E4M3(v / X).
TEST(BlockScaling, Mxfp8SharesAPowerOfTwoPer32Values) {
  std::vector<float> v(64, 0.0f);
  v[0] = 1.0f;   // block 0: amax 1 -> X = 2^-8, 1.0 stored as 256
  v[1] = -0.3f;  // -76.8 in units of X
  v[32] = 500.0f;  // block 1: amax 500 -> floor(log2) = 8 -> X = 1: 500 saturates to 448 (MX's clipping)
  v[33] = 3.0f;
  const BlockScaled q = quantize(BlockFormat::Mxfp8, v.data(), 2, 32);
  ASSERT_EQ(q.scales.size(), 2u);
  EXPECT_EQ(q.scales[0], 127 - 8);
  EXPECT_EQ(q.scales[1], 127);
  EXPECT_EQ(fp8_bits_to_float(q.values[0], Storage::E4M3), 256.0f);
  EXPECT_DOUBLE_EQ(q.at(0, 0), 1.0);
  // -0.3 * 256 = -76.8: E4M3 has 3 mantissa bits, steps of 8 between 64 and 128: -80.
  EXPECT_DOUBLE_EQ(q.at(0, 1), -80.0 / 256);
  EXPECT_DOUBLE_EQ(q.at(1, 0), 448.0);
  EXPECT_DOUBLE_EQ(q.at(1, 1), 3.0);
  // An all-zero block: X = 1, values 0.
  const std::vector<float> zeros(32, 0.0f);
  const BlockScaled z = quantize(BlockFormat::Mxfp8, zeros.data(), 1, 32);
  EXPECT_EQ(z.scales[0], 127);
  EXPECT_DOUBLE_EQ(z.at(0, 31), 0.0);
  EXPECT_THROW((void)quantize(BlockFormat::Mxfp8, zeros.data(), 1, 16), std::invalid_argument);
}

// NVFP4: t = amax / 2688, s = E4M3(amax_block / (6 t)), q = E2M1(v / (s t)).
TEST(BlockScaling, Nvfp4ScalesPer16ValuesAndPerTensor) {
  std::vector<float> v(32, 0.0f);
  v[0] = 6.0f;   // the tensor's amax: t = 6 / 2688
  v[1] = 3.0f;
  v[2] = -1.4f;  // -1.4 / 1 -> E2M1 1.5
  v[16] = 0.75f;  // block 1: amax 0.75 -> s = E4M3(0.75 / (6 t)) = E4M3(56) = 56
  v[17] = 0.1f;   // 0.1 / (56 t) = 0.8 -> E2M1 1.0
  const BlockScaled q = quantize(BlockFormat::Nvfp4, v.data(), 1, 32);
  const double t = 6.0 / 2688.0;
  EXPECT_FLOAT_EQ(q.tensor_scale, static_cast<float>(t));
  ASSERT_EQ(q.scales.size(), 2u);
  EXPECT_EQ(fp8_bits_to_float(q.scales[0], Storage::E4M3), 448.0f);
  EXPECT_EQ(fp8_bits_to_float(q.scales[1], Storage::E4M3), 56.0f);
  EXPECT_EQ(q.values.size(), 16u);  // two codes per byte
  EXPECT_EQ(q.values[0] & 0xF, 0x7);  // 6.0: the first value in the low nibble
  EXPECT_EQ(q.values[0] >> 4, 0x5);   // 3.0
  EXPECT_NEAR(q.at(0, 0), 6.0, 1e-6);
  EXPECT_NEAR(q.at(0, 2), -1.5 * 448 * q.tensor_scale, 1e-9);
  EXPECT_NEAR(q.at(0, 16), 0.75, 1e-6);
  EXPECT_NEAR(q.at(0, 17), 1.0 * 56 * q.tensor_scale, 1e-9);
  EXPECT_THROW((void)quantize(BlockFormat::Nvfp4, v.data(), 1, 24), std::invalid_argument);
}

// The emulated GEMM is the GEMM of the decoded values, and within the formats' quantisation
// error of the unquantised GEMM.
TEST(BlockScaling, EmulatedGemmIsTheGemmOfTheDecodedValues) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::int64_t m = 5, n = 4, k = 64;
  std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(n * k));
  for (float& x : a) x = normal(rng);
  for (float& x : b) x = normal(rng);
  for (BlockFormat f : {BlockFormat::Mxfp8, BlockFormat::Nvfp4}) {
    const BlockScaled qa = quantize(f, a.data(), m, k), qb = quantize(f, b.data(), n, k);
    const std::vector<double> d = emulated_gemm(qa, qb);
    ASSERT_EQ(d.size(), static_cast<std::size_t>(m * n));
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double want = 0, exact = 0, scale = 0;
        for (std::int64_t t = 0; t < k; ++t) {
          want += qa.at(i, t) * qb.at(j, t);
          exact += static_cast<double>(a[static_cast<std::size_t>(i * k + t)]) * b[static_cast<std::size_t>(j * k + t)];
          scale += std::fabs(static_cast<double>(a[static_cast<std::size_t>(i * k + t)]) * b[static_cast<std::size_t>(j * k + t)]);
        }
        EXPECT_EQ(d[static_cast<std::size_t>(i * n + j)], want);
        // A loose sanity bound (the equality above is the check): the quantisation error of
        // the GEMM stays within a fraction of sum |a||b| (E4M3: 3 mantissa bits; E2M1: 1).
        const double bound = (f == BlockFormat::Mxfp8 ? 0.13 : 0.8) * scale;
        EXPECT_LE(std::fabs(d[static_cast<std::size_t>(i * n + j)] - exact), bound) << int(f) << " " << i << " " << j;
      }
    }
  }
}


// ---- The host/device arithmetic the GPU quantiser shares (block_quantize_math.hpp) ----

float float_of_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Floats over every binade (a stride through all 2^32 bit patterns: NaNs, infinities,
// subnormals and both signs included) plus each E4M3/E2M1 value and midpoint and their float
// neighbours, where rounding decides.
std::vector<float> sweep_floats() {
  std::vector<float> v;
  for (std::uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4099) v.push_back(float_of_bits(static_cast<std::uint32_t>(u)));
  std::vector<float> anchors;
  for (int c = 0; c < 0x7F; ++c) {
    const float x = fp8_bits_to_float(static_cast<std::uint8_t>(c), Storage::E4M3);
    const float y = fp8_bits_to_float(static_cast<std::uint8_t>(c + 1), Storage::E4M3);
    anchors.push_back(x);
    if (!std::isnan(y)) anchors.push_back((x + y) / 2);  // exact: one more bit than E4M3 has
  }
  anchors.push_back(464.0f);  // between 448 and the (absent) 480: saturates
  for (float m : {0.25f, 0.5f, 0.75f, 1.0f, 1.25f, 1.5f, 1.75f, 2.0f, 2.5f, 3.0f, 3.5f, 4.0f, 5.0f, 6.0f}) anchors.push_back(m);
  for (float a : anchors) {
    for (float x : {a, std::nextafter(a, 0.0f), std::nextafter(a, INFINITY)}) {
      v.push_back(x);
      v.push_back(-x);
    }
  }
  for (float x : {INFINITY, -INFINITY, NAN, -NAN, 0.0f, -0.0f, 1e-45f, 3e38f}) v.push_back(x);
  return v;
}

TEST(BlockScalingShared, E4m3CodeMatchesTheFormatConverterEverywhere) {
  for (float f : sweep_floats()) {
    ASSERT_EQ(bq::e4m3_code(f), float_to_fp8_bits(f, Storage::E4M3)) << f;
  }
  for (int c = 0; c < 256; ++c) {
    const float a = bq::e4m3_value(static_cast<std::uint8_t>(c)), b = fp8_bits_to_float(static_cast<std::uint8_t>(c), Storage::E4M3);
    if (std::isnan(b)) {
      EXPECT_TRUE(std::isnan(a)) << c;
    } else {
      EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0) << c;  // -0 too
    }
  }
}

TEST(BlockScalingShared, E2m1CodeMatchesTheFormatConverterEverywhere) {
  for (float f : sweep_floats()) ASSERT_EQ(bq::e2m1_code(f), float_to_e2m1_bits(f)) << f;
}

// The MX rule as MX v1.0 states it (frexp, double division), against the shared functions.
TEST(BlockScalingShared, MxScaleAndValueCodesFollowTheSpecifiedFormula) {
  for (float f : sweep_floats()) {
    const float amax = std::fabs(f);
    std::uint8_t expect = 127;
    if (amax > 0 && std::isfinite(amax)) {
      int e = 0;
      (void)std::frexp(amax, &e);
      expect = static_cast<std::uint8_t>(std::clamp((e - 1) - 8 + 127, 0, 254));
    }
    ASSERT_EQ(bq::mx_scale_code(amax), expect) << amax;
  }
  const std::vector<float> values = sweep_floats();
  for (int sc = 0; sc < 255; sc += 3) {
    for (std::size_t i = 0; i < values.size(); i += 7) {
      const float v = values[i];
      const std::uint8_t expect =
          float_to_fp8_bits(static_cast<float>(static_cast<double>(v) / ue8m0_to_double(static_cast<std::uint8_t>(sc))), Storage::E4M3);
      ASSERT_EQ(bq::mx_value_code(v, static_cast<std::uint8_t>(sc)), expect) << v << " scale " << sc;
    }
  }
}

TEST(BlockScalingShared, AmaxPassesOverNaN) {
  EXPECT_EQ(bq::amax_step(bq::amax_step(0.0f, NAN), -3.0f), 3.0f);
  EXPECT_EQ(bq::amax_step(2.0f, NAN), 2.0f);
  EXPECT_EQ(bq::amax_step(0.0f, -0.0f), 0.0f);
}

// cuBLAS docs, "1D Block Scaling Factors Layout": 128 x 4 tiles of 512 bytes, inside a tile
// (r % 32) * 16 + (r / 32) * 4 + c.
TEST(BlockScaleLayout, HandWorkedOffsets) {
  // A grid 6 scales wide pads to 8: two tiles per 128-row band.
  EXPECT_EQ(bq::block_scale_offset(0, 0, 6), 0);
  EXPECT_EQ(bq::block_scale_offset(0, 3, 6), 3);
  EXPECT_EQ(bq::block_scale_offset(1, 0, 6), 16);        // next row of a 32-row group: 16 bytes on
  EXPECT_EQ(bq::block_scale_offset(32, 0, 6), 4);        // second 32-row group: interleaved 4 bytes on
  EXPECT_EQ(bq::block_scale_offset(33, 2, 6), 16 + 4 + 2);
  EXPECT_EQ(bq::block_scale_offset(127, 3, 6), 31 * 16 + 3 * 4 + 3);  // the tile's last byte: 511
  EXPECT_EQ(bq::block_scale_offset(0, 4, 6), 512);       // second tile of the band
  EXPECT_EQ(bq::block_scale_offset(128, 0, 6), 1024);    // second band after both tiles of the first
  EXPECT_EQ(bq::block_scale_offset(130, 5, 6), 1024 + 512 + 2 * 16 + 1);
  EXPECT_EQ(bq::block_scale_bytes(130, 6), 256 * 8);
}

TEST(BlockScaleLayout, IsABijectionOntoThePaddedGrid) {
  for (const auto& [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {128, 4}, {130, 6}, {300, 17}}) {
    const std::int64_t pr = bq::padded_scale_rows(rows), pc = bq::padded_scale_cols(cols);
    std::vector<int> hits(static_cast<std::size_t>(bq::block_scale_bytes(rows, cols)), 0);
    for (std::int64_t r = 0; r < pr; ++r) {
      for (std::int64_t c = 0; c < pc; ++c) {
        const std::int64_t o = bq::block_scale_offset(r, c, cols);
        ASSERT_GE(o, 0);
        ASSERT_LT(o, static_cast<std::int64_t>(hits.size()));
        ++hits[static_cast<std::size_t>(o)];
      }
    }
    for (int h : hits) ASSERT_EQ(h, 1) << rows << "x" << cols;
  }
}

}  // namespace
}  // namespace gpubench::kernels
