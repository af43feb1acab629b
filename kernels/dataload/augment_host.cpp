#include <algorithm>
#include <cmath>

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
  // Column taps once per image (flip folded in); then each output row blends two source rows.
  std::vector<Tap> cols(static_cast<std::size_t>(size));
  for (int ox = 0; ox < size; ++ox) cols[static_cast<std::size_t>(ox)] = tap(crop.flip ? size - 1 - ox : ox, crop.w, crop.x, size);
  float scale[3], bias[3];
  for (int c = 0; c < 3; ++c) {
    scale[c] = 1.0f / (255.0f * kStd[c]);
    bias[c] = -kMean[c] / kStd[c];
  }
  const std::size_t plane = static_cast<std::size_t>(size) * static_cast<std::size_t>(size);
  const std::size_t stride = static_cast<std::size_t>(image.width) * 3;
  float row[3][1024];  // one output row per channel (size <= 1024)
  for (int oy = 0; oy < size; ++oy) {
    const Tap r = tap(oy, crop.h, crop.y, size);
    const std::uint8_t* a = image.pixels + static_cast<std::size_t>(r.i0) * stride;
    const std::uint8_t* b = image.pixels + static_cast<std::size_t>(r.i1) * stride;
    const float fy = r.f, gy = 1.0f - r.f;
    for (int ox = 0; ox < size; ++ox) {
      const Tap& t = cols[static_cast<std::size_t>(ox)];
      const float fx = t.f, gx = 1.0f - t.f;
      const std::size_t p0 = static_cast<std::size_t>(t.i0) * 3, p1 = static_cast<std::size_t>(t.i1) * 3;
      for (int c = 0; c < 3; ++c) {
        const float top = gx * a[p0 + c] + fx * a[p1 + c];
        const float bottom = gx * b[p0 + c] + fx * b[p1 + c];
        row[c][ox] = (gy * top + fy * bottom) * scale[c] + bias[c];
      }
    }
    const std::size_t offset = static_cast<std::size_t>(oy) * static_cast<std::size_t>(size);
    for (int c = 0; c < 3; ++c) {
      if (type == OutType::F32) {
        std::copy_n(row[c], size, static_cast<float*>(out) + c * plane + offset);
      } else {
        std::uint16_t* o = static_cast<std::uint16_t*>(out) + c * plane + offset;
        for (int ox = 0; ox < size; ++ox) o[ox] = float_to_half_bits(row[c][ox]);
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

}  // namespace gpubench::kernels::dataload
