#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "kernels/common/float_formats.hpp"
#include "kernels/common/random.hpp"
#include "kernels/dataload/augment.hpp"

namespace gpubench::kernels::dataload {
namespace {

// Uniform in [0, 1) from the counter-based generator.
double unit(std::uint64_t seed, std::uint64_t index) { return (uniform_value(seed, index) + 1.0) * 0.5; }

struct Tap {
  int i0, i1;
  float f;  // weight of i1
};

// Source coordinate taps along one axis (see the formula in augment.hpp).
Tap tap(int o, int extent, int origin, int size) {
  double s = (o + 0.5) * extent / size - 0.5;
  s = std::clamp(s, 0.0, static_cast<double>(extent - 1));
  const int i0 = static_cast<int>(s);
  const int i1 = std::min(i0 + 1, extent - 1);
  return {origin + i0, origin + i1, static_cast<float>(s - i0)};
}

}  // namespace

Crop random_crop(std::uint64_t seed, std::uint64_t sample, int width, int height) {
  const std::uint64_t stream = mix64(seed ^ (sample * 0x9E3779B97F4A7C15ull));
  const double area = static_cast<double>(width) * height;
  const double log_lo = std::log(3.0 / 4.0), log_hi = std::log(4.0 / 3.0);
  Crop c;
  c.flip = unit(stream, 1000) < 0.5 ? 1 : 0;
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * (0.08 + 0.92 * unit(stream, 4 * attempt));
    const double ratio = std::exp(log_lo + (log_hi - log_lo) * unit(stream, 4 * attempt + 1));
    const int w = static_cast<int>(std::lround(std::sqrt(target * ratio)));
    const int h = static_cast<int>(std::lround(std::sqrt(target / ratio)));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      c.w = w;
      c.h = h;
      c.x = static_cast<int>(unit(stream, 4 * attempt + 2) * (width - w + 1));
      c.y = static_cast<int>(unit(stream, 4 * attempt + 3) * (height - h + 1));
      return c;
    }
  }
  // Centre crop with the ratio clamped to [3/4, 4/3].
  const double in_ratio = static_cast<double>(width) / height;
  c.w = width;
  c.h = height;
  if (in_ratio < 3.0 / 4.0) c.h = std::max(1, static_cast<int>(std::lround(width / (3.0 / 4.0))));
  if (in_ratio > 4.0 / 3.0) c.w = std::max(1, static_cast<int>(std::lround(height * (4.0 / 3.0))));
  c.w = std::min(c.w, width);
  c.h = std::min(c.h, height);
  c.x = (width - c.w) / 2;
  c.y = (height - c.h) / 2;
  return c;
}

void augment_host(const ImageView& image, const Crop& crop, OutType type, void* out, int size) {
  // Separable: each source row the output needs is resampled horizontally once into planar
  // float rows (flip folded into the column taps), then every output row blends two of them
  // and normalizes, in loops over contiguous floats the compiler vectorizes.
  constexpr int kMax = 1024;  // size <= kMax
  Tap cols[kMax];
  for (int ox = 0; ox < size; ++ox) cols[ox] = tap(crop.flip ? size - 1 - ox : ox, crop.w, crop.x, size);
  float scale[3], bias[3];
  for (int c = 0; c < 3; ++c) {
    scale[c] = 1.0f / (255.0f * kStd[c]);
    bias[c] = -kMean[c] / kStd[c];
  }
  const std::size_t plane = static_cast<std::size_t>(size) * static_cast<std::size_t>(size);
  const std::size_t stride = static_cast<std::size_t>(image.width) * 3;
  // Two cached horizontally resampled rows (source row index, 3 planar channels each).
  alignas(64) static thread_local float rows[2][3][kMax];
  int row_of[2] = {-1, -1};
  auto resample = [&](int src_row, int slot) {
    const std::uint8_t* a = image.pixels + static_cast<std::size_t>(src_row) * stride;
    float* r0 = rows[slot][0];
    float* r1 = rows[slot][1];
    float* r2 = rows[slot][2];
    for (int ox = 0; ox < size; ++ox) {
      const Tap& t = cols[ox];
      const std::uint8_t* p = a + static_cast<std::size_t>(t.i0) * 3;
      const std::uint8_t* q = a + static_cast<std::size_t>(t.i1) * 3;
      r0[ox] = p[0] + t.f * (q[0] - p[0]);
      r1[ox] = p[1] + t.f * (q[1] - p[1]);
      r2[ox] = p[2] + t.f * (q[2] - p[2]);
    }
    row_of[slot] = src_row;
  };
  // The slot holding source row r, resampling it into the slot not holding `keep` if needed.
  auto slot_for = [&](int r, int keep) {
    if (row_of[0] == r) return 0;
    if (row_of[1] == r) return 1;
    const int s = row_of[0] == keep ? 1 : 0;
    resample(r, s);
    return s;
  };
  alignas(64) float line[kMax];
  for (int oy = 0; oy < size; ++oy) {
    const Tap r = tap(oy, crop.h, crop.y, size);
    const int s0 = slot_for(r.i0, r.i1);
    const int s1 = slot_for(r.i1, r.i0);
    const float fy = r.f;
    const std::size_t offset = static_cast<std::size_t>(oy) * static_cast<std::size_t>(size);
    for (int c = 0; c < 3; ++c) {
      const float* top = rows[s0][c];
      const float* bottom = rows[s1][c];
      const float k = scale[c], b = bias[c];
      if (type == OutType::F32) {
        float* o = static_cast<float*>(out) + c * plane + offset;
        for (int ox = 0; ox < size; ++ox) o[ox] = (top[ox] + fy * (bottom[ox] - top[ox])) * k + b;
      } else {
        for (int ox = 0; ox < size; ++ox) line[ox] = (top[ox] + fy * (bottom[ox] - top[ox])) * k + b;
        floats_to_half_bits(line, static_cast<std::uint16_t*>(out) + c * plane + offset, static_cast<std::size_t>(size));
      }
    }
  }
}

double augment_reference(const ImageView& image, const Crop& crop, int channel, int oy, int ox, int size) {
  const int fx_out = crop.flip ? size - 1 - ox : ox;
  auto coord = [size](int o, int extent) {
    const double s = (o + 0.5) * extent / size - 0.5;
    return std::min(std::max(s, 0.0), extent - 1.0);
  };
  const double sx = coord(fx_out, crop.w), sy = coord(oy, crop.h);
  const int x0 = static_cast<int>(std::floor(sx)), y0 = static_cast<int>(std::floor(sy));
  const int x1 = std::min(x0 + 1, crop.w - 1), y1 = std::min(y0 + 1, crop.h - 1);
  const double wx = sx - x0, wy = sy - y0;
  auto px = [&](int y, int x) {
    return static_cast<double>(
        image.pixels[(static_cast<std::size_t>(crop.y + y) * image.width + static_cast<std::size_t>(crop.x + x)) * 3 +
                     static_cast<std::size_t>(channel)]);
  };
  const double v = (1 - wy) * ((1 - wx) * px(y0, x0) + wx * px(y0, x1)) + wy * ((1 - wx) * px(y1, x0) + wx * px(y1, x1));
  return (v / 255.0 - kMean[channel]) / kStd[channel];
}

void pool_features_host(const void* tensors, OutType type, int count, int grid, float* out, int size) {
  const int block = size / grid;
  const std::size_t plane = static_cast<std::size_t>(size) * static_cast<std::size_t>(size);
  for (std::size_t nc = 0; nc < static_cast<std::size_t>(count) * 3; ++nc) {
    for (int gy = 0; gy < grid; ++gy) {
      for (int gx = 0; gx < grid; ++gx) {
        double sum = 0;
        for (int y = gy * block; y < (gy + 1) * block; ++y) {
          const std::size_t row = nc * plane + static_cast<std::size_t>(y) * static_cast<std::size_t>(size);
          for (int x = gx * block; x < (gx + 1) * block; ++x) {
            const std::size_t i = row + static_cast<std::size_t>(x);
            sum += type == OutType::F32 ? static_cast<const float*>(tensors)[i]
                                        : half_bits_to_float(static_cast<const std::uint16_t*>(tensors)[i]);
          }
        }
        out[(nc * static_cast<std::size_t>(grid) + static_cast<std::size_t>(gy)) * static_cast<std::size_t>(grid) +
            static_cast<std::size_t>(gx)] = static_cast<float>(sum / (block * block));
      }
    }
  }
}

void check_augmented(const ImageView& image, const Crop& crop, OutType type, const void* out, int points,
                     std::uint64_t sample, AugmentCheck& check, int size) {
  const auto* o = static_cast<const std::uint8_t*>(out);
  for (int k = 0; k < points; ++k) {
    const std::uint64_t h = mix64(sample * static_cast<std::uint64_t>(points) + static_cast<std::uint64_t>(k));
    const int ch = static_cast<int>(h % 3), oy = static_cast<int>((h >> 8) % static_cast<std::uint64_t>(size)),
              ox = static_cast<int>((h >> 20) % static_cast<std::uint64_t>(size));
    const double want = augment_reference(image, crop, ch, oy, ox, size);
    const std::size_t idx = (static_cast<std::size_t>(ch) * static_cast<std::size_t>(size) + static_cast<std::size_t>(oy)) *
                                static_cast<std::size_t>(size) +
                            static_cast<std::size_t>(ox);
    double got;
    if (type == OutType::F32) {
      float f;
      std::memcpy(&f, o + idx * 4, 4);
      got = f;
    } else {
      std::uint16_t bits;
      std::memcpy(&bits, o + idx * 2, 2);
      got = half_bits_to_float(bits);
    }
    const double err = std::fabs(got - want) / augment_tolerance(type);
    check.max_error = std::max(check.max_error, err);
    ++check.checked;
    if (!(err <= 1.0) && check.first_mismatch.empty()) {
      char text[160];
      std::snprintf(text, sizeof text, "sample %llu channel %d (%d, %d): %.6g, expected %.6g",
                    static_cast<unsigned long long>(sample), ch, oy, ox, got, want);
      check.first_mismatch = text;
    }
  }
}

}  // namespace gpubench::kernels::dataload
