// The video suite's synthetic source and its PSNR (video.hpp): plain C++, no codec.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "bench/suites/video/video.hpp"
#include "kernels/common/random.hpp"

namespace gpubench::suites::video {
namespace {

std::uint8_t clamp8(int v) { return static_cast<std::uint8_t>(std::clamp(v, 0, 255)); }

// Fine texture: a hash of the position, in [-4, 3].
int grain(int x, int y) {
  return static_cast<int>(kernels::mix64(0x71de0ull ^ (static_cast<std::uint64_t>(y) << 32) ^ static_cast<std::uint64_t>(x)) & 7) - 4;
}

// Temporal noise: independent per frame, in [-2, 1], as a camera's sensor adds; no encoder can
// predict it, so at low QP it costs bits as natural video does.
int noise(int x, int y, int t) {
  return static_cast<int>(kernels::mix64(0x5e45ull ^ (static_cast<std::uint64_t>(t) << 48) ^ (static_cast<std::uint64_t>(y) << 24) ^
                                         static_cast<std::uint64_t>(x)) &
                          3) -
         2;
}

double plane_sse(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    s += d * d;
  }
  return s;
}

}  // namespace

Frame blank_frame(int w, int h) {
  Frame f;
  f.w = w;
  f.h = h;
  f.y.assign(static_cast<std::size_t>(w) * static_cast<std::size_t>(h), 0);
  f.u.assign(static_cast<std::size_t>(w / 2) * static_cast<std::size_t>(h / 2), 128);
  f.v = f.u;
  return f;
}

std::vector<Frame> synthetic_frames(int w, int h, int count) {
  std::vector<Frame> frames;
  frames.reserve(static_cast<std::size_t>(count));
  const int side = std::max(16, h / 4);  // the square
  for (int t = 0; t < count; ++t) {
    Frame f = blank_frame(w, h);
    const int left = (t * 8) % (w + side) - side;  // crosses the picture at 8 px a frame
    const int top = h / 3 + (t * 3) % std::max(1, h / 3);
    const int right = w - side - (t * 5) % std::max(1, w - side);  // the second square: 5 px left and 2 up a frame
    const int low = h - side - (t * 2) % std::max(1, h - side);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        int v = 40 + (x * 160 / w + y * 40 / h + 3 * t) % 180;  // the gradient drifts 3 levels a frame
        v += grain(x + 2 * t, y);                                // the grain moves 2 px a frame
        v += noise(x, y, t);                                     // and sensor noise, new every frame
        if (x >= left && x < left + side && y >= top && y < top + side) {
          const int cx = (x - left) / 8, cy = (y - top) / 8;
          v = 180 + ((cx + cy) % 2) * 40 - 20 + grain(x - left, y - top) + noise(x, y, t);  // a checkered square, moving whole
        }
        if (x >= right && x < right + side / 2 && y >= low && y < low + side / 2) {
          v = 60 + ((x - right) * 4 + (y - low) * 2) % 120 + noise(x, y, t);  // a striped square, up and to the left
        }
        f.y[static_cast<std::size_t>(y) * static_cast<std::size_t>(w) + static_cast<std::size_t>(x)] = clamp8(v);
      }
    }
    const int cw = w / 2, ch = h / 2;
    for (int y = 0; y < ch; ++y) {
      for (int x = 0; x < cw; ++x) {
        const std::size_t i = static_cast<std::size_t>(y) * static_cast<std::size_t>(cw) + static_cast<std::size_t>(x);
        f.u[i] = clamp8(98 + x * 60 / cw + (t % 16));
        f.v[i] = clamp8(158 - y * 60 / ch);
      }
    }
    frames.push_back(std::move(f));
  }
  return frames;
}

void PlaneErrors::add(const Frame& a, const Frame& b) {
  y += plane_sse(a.y, b.y);
  u += plane_sse(a.u, b.u);
  v += plane_sse(a.v, b.v);
  ++frames;
}

double psnr_of_mse(double mse) { return mse <= 0 ? 100.0 : 10.0 * std::log10(255.0 * 255.0 / mse); }

Psnr PlaneErrors::psnr(int w, int h) const {
  Psnr p;
  if (frames == 0) return p;
  const double luma = static_cast<double>(w) * h * static_cast<double>(frames);
  const double chroma = static_cast<double>(w / 2) * (h / 2) * static_cast<double>(frames);
  p.y = psnr_of_mse(y / luma);
  p.u = psnr_of_mse(u / chroma);
  p.v = psnr_of_mse(v / chroma);
  p.average = psnr_of_mse((y + u + v) / (luma + 2 * chroma));
  return p;
}

std::optional<std::string> first_difference(const Frame& a, const Frame& b) {
  if (a.w != b.w || a.h != b.h) return fmt::format("{}x{} against {}x{}", a.w, a.h, b.w, b.h);
  const std::pair<const char*, const std::vector<std::uint8_t>*> planes[] = {{"y", &a.y}, {"u", &a.u}, {"v", &a.v}};
  const std::vector<std::uint8_t>* other[] = {&b.y, &b.u, &b.v};
  for (int p = 0; p < 3; ++p) {
    const auto& pa = *planes[p].second;
    const auto& pb = *other[p];
    const auto m = std::mismatch(pa.begin(), pa.end(), pb.begin());
    if (m.first != pa.end()) {
      const int pw = p == 0 ? a.w : a.w / 2;
      const auto i = static_cast<int>(m.first - pa.begin());
      return fmt::format("{} plane differs at ({}, {}): {} against {}", planes[p].first, i % pw, i / pw, *m.first, *m.second);
    }
  }
  return std::nullopt;
}

bool calibrated_source(const Config& c) {
  return c.input == "synthetic" && static_cast<std::int64_t>(c.w) * c.h >= std::int64_t{1280} * 720;
}

}  // namespace gpubench::suites::video
