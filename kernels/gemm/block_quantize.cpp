#include "kernels/gemm/block_quantize.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/common/float_formats.hpp"
#include "kernels/gemm/block_quantize_math.hpp"

namespace gpubench::kernels {
namespace {

// The per-block arithmetic is block_quantize_math.hpp's, shared with the GPU quantiser.
double e4m3(std::uint8_t code) { return bq::e4m3_value(code); }

float amax_of(const float* v, std::int64_t n) {
  float m = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) m = bq::amax_step(m, v[i]);
  return m;
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
      const std::uint8_t sc = bq::mx_scale_code(amax_of(v, bs));
      q.scales[static_cast<std::size_t>(b)] = sc;
      for (int i = 0; i < bs; ++i) q.values[static_cast<std::size_t>(b * bs + i)] = bq::mx_value_code(v[i], sc);
    }
    return q;
  }
  // NVFP4.
  const float amax = amax_of(values, n);
  q.tensor_scale = bq::nvfp4_tensor_scale(amax);
  q.values.assign(static_cast<std::size_t>((n + 1) / 2), 0);
  for (std::int64_t b = 0; b < blocks; ++b) {
    const float* v = values + b * bs;
    const std::uint8_t sc = bq::nvfp4_scale_code(amax_of(v, bs), q.tensor_scale);
    q.scales[static_cast<std::size_t>(b)] = sc;
    for (int i = 0; i < bs; ++i) {
      const std::uint8_t code = bq::nvfp4_value_code(v[i], sc, q.tensor_scale);
      const std::int64_t at = b * bs + i;
      std::uint8_t& pair = q.values[static_cast<std::size_t>(at / 2)];
      pair = (at % 2) == 0 ? static_cast<std::uint8_t>((pair & 0xF0) | code) : static_cast<std::uint8_t>((pair & 0x0F) | (code << 4));
    }
  }
  return q;
}

std::vector<double> decode(const BlockScaled& q) {
  std::vector<double> out(static_cast<std::size_t>(q.rows * q.k));
  for (std::int64_t r = 0; r < q.rows; ++r)
    for (std::int64_t t = 0; t < q.k; ++t) out[static_cast<std::size_t>(r * q.k + t)] = q.at(r, t);
  return out;
}

std::vector<double> emulated_gemm(const BlockScaled& a, const BlockScaled& b) {
  if (a.k != b.k) throw std::invalid_argument("emulated_gemm: A and B differ in k");
  // Each matrix decoded once, then multiplied.
  const std::vector<double> ad = decode(a), bd = decode(b);
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
