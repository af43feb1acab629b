#include "kernels/gemm/block_quantize.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/common/float_formats.hpp"

namespace gpubench::kernels {
namespace {

constexpr float kE2M1Max = 6.0f;
constexpr float kE4M3Max = 448.0f;
constexpr int kE4M3MaxExponent = 8;  // 448 = 1.75 * 2^8

double e4m3(std::uint8_t code) { return fp8_bits_to_float(code, Storage::E4M3); }

float amax_of(const float* v, std::int64_t n) {
  float m = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) m = std::max(m, std::fabs(v[i]));
  return m;
}

// MX's shared scale of a block: UE8M0 code of 2^(floor(log2(amax)) - 8), clamped to the
// code range 0..254; 127 (X = 1) for an all-zero block.
std::uint8_t mx_scale_code(float amax) {
  if (!(amax > 0.0f) || !std::isfinite(amax)) return 127;
  int e = 0;
  (void)std::frexp(amax, &e);  // amax = m * 2^e, m in [0.5, 1): floor(log2(amax)) = e - 1
  const int shared = (e - 1) - kE4M3MaxExponent;
  return static_cast<std::uint8_t>(std::clamp(shared + 127, 0, 254));
}

}  // namespace

int block_size(BlockFormat f) { return f == BlockFormat::Mxfp8 ? 32 : 16; }

double BlockScaled::at(std::int64_t row, std::int64_t col) const {
  const std::int64_t i = row * k + col;
  const std::size_t block = static_cast<std::size_t>(i / block_size(format));
  if (format == BlockFormat::Mxfp8) return e4m3(values[static_cast<std::size_t>(i)]) * ue8m0_to_double(scales[block]);
  const std::uint8_t pair = values[static_cast<std::size_t>(i / 2)];
  const std::uint8_t code = (i % 2) == 0 ? (pair & 0xF) : (pair >> 4);
  return static_cast<double>(e2m1_bits_to_float(code)) * e4m3(scales[block]) * static_cast<double>(tensor_scale);
}

BlockScaled quantize(BlockFormat format, const float* values, std::int64_t rows, std::int64_t k) {
  const int bs = block_size(format);
  if (rows < 1 || k < 1) throw std::invalid_argument("block quantisation: rows and k must be positive");
  if (k % bs != 0) {
    throw std::invalid_argument("block quantisation: k = " + std::to_string(k) + " is not a multiple of the " +
                                std::to_string(bs) + "-value block");
  }
  BlockScaled q;
  q.format = format;
  q.rows = rows;
  q.k = k;
  const std::int64_t n = rows * k, blocks = n / bs;
  q.scales.resize(static_cast<std::size_t>(blocks));
  if (format == BlockFormat::Mxfp8) {
    q.values.resize(static_cast<std::size_t>(n));
    for (std::int64_t b = 0; b < blocks; ++b) {
      const float* v = values + b * bs;
      const std::uint8_t sc = mx_scale_code(amax_of(v, bs));
      q.scales[static_cast<std::size_t>(b)] = sc;
      const double x = ue8m0_to_double(sc);
      for (int i = 0; i < bs; ++i) {
        // v / X is exact (a power of two) unless it underflows float, where E4M3 holds 0 anyway.
        q.values[static_cast<std::size_t>(b * bs + i)] =
            float_to_fp8_bits(static_cast<float>(static_cast<double>(v[i]) / x), Storage::E4M3);
      }
    }
    return q;
  }
  // NVFP4.
  const float amax = amax_of(values, n);
  q.tensor_scale = amax > 0.0f ? amax / (kE2M1Max * kE4M3Max) : 1.0f;
  q.values.assign(static_cast<std::size_t>((n + 1) / 2), 0);
  for (std::int64_t b = 0; b < blocks; ++b) {
    const float* v = values + b * bs;
    const std::uint8_t sc = float_to_fp8_bits(amax_of(v, bs) / (kE2M1Max * q.tensor_scale), Storage::E4M3);
    q.scales[static_cast<std::size_t>(b)] = sc;
    const float s = static_cast<float>(e4m3(sc));
    for (int i = 0; i < bs; ++i) {
      const std::uint8_t code = s > 0.0f ? float_to_e2m1_bits(v[i] / (s * q.tensor_scale)) : std::uint8_t{0};
      const std::int64_t at = b * bs + i;
      std::uint8_t& pair = q.values[static_cast<std::size_t>(at / 2)];
      pair = (at % 2) == 0 ? static_cast<std::uint8_t>((pair & 0xF0) | code) : static_cast<std::uint8_t>((pair & 0x0F) | (code << 4));
    }
  }
  return q;
}

std::vector<double> emulated_gemm(const BlockScaled& a, const BlockScaled& b) {
  if (a.k != b.k) throw std::invalid_argument("emulated_gemm: A and B differ in k");
  // Each matrix decoded once (row-major, k per row), then multiplied.
  auto decoded = [](const BlockScaled& q) {
    std::vector<double> out(static_cast<std::size_t>(q.rows * q.k));
    for (std::int64_t r = 0; r < q.rows; ++r)
      for (std::int64_t t = 0; t < q.k; ++t) out[static_cast<std::size_t>(r * q.k + t)] = q.at(r, t);
    return out;
  };
  const std::vector<double> ad = decoded(a), bd = decoded(b);
  const std::size_t k = static_cast<std::size_t>(a.k);
  std::vector<double> d(static_cast<std::size_t>(a.rows * b.rows), 0.0);
  for (std::size_t i = 0; i < static_cast<std::size_t>(a.rows); ++i) {
    for (std::size_t j = 0; j < static_cast<std::size_t>(b.rows); ++j) {
      double sum = 0;
      for (std::size_t t = 0; t < k; ++t) sum += ad[i * k + t] * bd[j * k + t];
      d[i * static_cast<std::size_t>(b.rows) + j] = sum;
    }
  }
  return d;
}

}  // namespace gpubench::kernels
