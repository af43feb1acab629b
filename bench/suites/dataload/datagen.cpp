#include "bench/suites/dataload/datagen.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include "bench/core/errors.hpp"
#include "bench/suites/dataload/jpeg.hpp"
#include "kernels/common/random.hpp"
#include "kernels/memory/host_pool.hpp"

namespace gpubench::suites::dataload {
namespace {

using kernels::mix64;

double unit(std::uint64_t seed, std::uint64_t i) { return (kernels::uniform_value(seed, i) + 1.0) * 0.5; }

// Value noise: random values on a lattice of `cell` pixels, smoothly interpolated.
class Lattice {
 public:
  Lattice(std::uint64_t seed, int width, int height, int cell)
      : cell_(cell), cols_(width / cell + 2), values_(static_cast<std::size_t>(cols_) * (height / cell + 2)) {
    for (std::size_t i = 0; i < values_.size(); ++i) values_[i] = kernels::uniform_value(seed, i);
  }
  float at(int x, int y) const {
    const int cx = x / cell_, cy = y / cell_;
    const float fx = smooth(static_cast<float>(x % cell_) / cell_), fy = smooth(static_cast<float>(y % cell_) / cell_);
    const float* r0 = &values_[static_cast<std::size_t>(cy) * cols_ + cx];
    const float* r1 = r0 + cols_;
    return (1 - fy) * ((1 - fx) * r0[0] + fx * r0[1]) + fy * ((1 - fx) * r1[0] + fx * r1[1]);
  }

 private:
  static float smooth(float t) { return t * t * (3 - 2 * t); }
  int cell_, cols_;
  std::vector<float> values_;
};

std::uint64_t dataset_id(const GenerateOptions& o) {
  return mix64(mix64(o.seed ^ 0x6770756265ull) ^ static_cast<std::uint64_t>(o.count) ^
               (static_cast<std::uint64_t>(o.mean_width) << 20) ^ (static_cast<std::uint64_t>(o.mean_height) << 40) ^
               (static_cast<std::uint64_t>(o.quality) << 56) ^ (o.fixed_size ? 1ull << 63 : 0));
}

}  // namespace

void image_size(const GenerateOptions& o, std::uint64_t index, int& width, int& height) {
  if (o.fixed_size) {
    width = o.mean_width;
    height = o.mean_height;
    return;
  }
  const std::uint64_t s = mix64(o.seed * 0x51ED27u + index);
  // Orientation and aspect: 4:3 (the 500x375 of many ImageNet photos) most often.
  const double pick = unit(s, 0);
  double ratio = pick < 0.55 ? 4.0 / 3 : pick < 0.80 ? 3.0 / 2 : pick < 0.90 ? 1.0 : 16.0 / 9;
  if (unit(s, 1) < 0.2) ratio = 1 / ratio;  // portrait
  // Log-normal spread of the area around the mean (Box-Muller), divided by E[exp(2 sigma z)]
  // = exp(2 sigma^2) so the mean area stays mean_width x mean_height.
  const double sigma = 0.25;
  const double z = std::sqrt(-2 * std::log(std::max(unit(s, 2), 1e-12))) * std::cos(2 * M_PI * unit(s, 3));
  const double area = static_cast<double>(o.mean_width) * o.mean_height * std::exp(2 * sigma * z - 2 * sigma * sigma);
  width = std::clamp(static_cast<int>(std::lround(std::sqrt(area * ratio))), 16, 8192);
  height = std::clamp(static_cast<int>(std::lround(std::sqrt(area / ratio))), 16, 8192);
}

std::vector<std::uint8_t> synth_image(std::uint64_t seed, std::uint64_t index, int width, int height) {
  const std::uint64_t s = mix64(seed ^ mix64(index + 0x1234567));
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(width) * height * 3);
  // Gradient: per channel a + b x + c y.
  float g[3][3];
  for (int c = 0; c < 3; ++c) {
    g[c][0] = 40 + 170 * static_cast<float>(unit(s, 10 + c));
    g[c][1] = 120 * static_cast<float>(unit(s, 20 + c) - 0.5) / width;
    g[c][2] = 120 * static_cast<float>(unit(s, 30 + c) - 0.5) / height;
  }
  // Shapes: ellipses and rectangles with a flat colour offset.
  struct Shape {
    float cx, cy, rx, ry, col[3];
    bool ellipse;
  };
  std::vector<Shape> shapes(6);
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const std::uint64_t b = 100 + 10 * k;
    Shape& sh = shapes[k];
    sh.cx = static_cast<float>(unit(s, b) * width);
    sh.cy = static_cast<float>(unit(s, b + 1) * height);
    sh.rx = static_cast<float>((0.05 + 0.25 * unit(s, b + 2)) * width);
    sh.ry = static_cast<float>((0.05 + 0.25 * unit(s, b + 3)) * height);
    for (int c = 0; c < 3; ++c) sh.col[c] = static_cast<float>(140 * (unit(s, b + 4 + c) - 0.5));
    sh.ellipse = unit(s, b + 7) < 0.5;
  }
  // Band-limited luminance texture (photos carry most detail in luminance) and colour noise.
  const Lattice coarse(mix64(s + 1), width, height, 32), mid(mix64(s + 2), width, height, 8),
      fine(mix64(s + 3), width, height, 2), chroma(mix64(s + 4), width, height, 16);
  const std::uint64_t pixel_seed = mix64(s + 5);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const float tex = 36 * coarse.at(x, y) + 24 * mid.at(x, y) + 30 * fine.at(x, y) +
                        8 * kernels::uniform_value(pixel_seed, static_cast<std::uint64_t>(y) * width + x);
      const float tint = 14 * chroma.at(x, y);
      float v[3];
      for (int c = 0; c < 3; ++c) v[c] = g[c][0] + g[c][1] * x + g[c][2] * y + tex + (c == 1 ? -tint : tint * (c - 1));
      for (const Shape& sh : shapes) {
        const float dx = (x - sh.cx) / sh.rx, dy = (y - sh.cy) / sh.ry;
        const bool inside = sh.ellipse ? dx * dx + dy * dy <= 1 : std::fabs(dx) <= 1 && std::fabs(dy) <= 1;
        if (inside) {
          for (int c = 0; c < 3; ++c) v[c] += sh.col[c];
        }
      }
      std::uint8_t* p = &rgb[(static_cast<std::size_t>(y) * width + x) * 3];
      for (int c = 0; c < 3; ++c) p[c] = static_cast<std::uint8_t>(std::clamp(v[c], 0.0f, 255.0f) + 0.5f);
    }
  }
  return rgb;
}

nlohmann::ordered_json GenerateReport::to_json() const {
  return {{"images", images},
          {"jpeg_bytes", jpeg_bytes},
          {"mean_jpeg_bytes", images > 0 ? jpeg_bytes / images : 0},
          {"mean_width", mean_width},
          {"mean_height", mean_height},
          {"bytes_per_pixel", bytes_per_pixel()},
          {"seconds", seconds}};
}

GenerateReport generate_dataset(const GenerateOptions& o) {
  if (o.count < 1 || o.count > 100'000'000) throw UsageError(fmt::format("--count {}: expected 1 to 100000000", o.count));
  if (o.mean_width < 16 || o.mean_height < 16 || o.mean_width > 8192 || o.mean_height > 8192) {
    throw UsageError(fmt::format("--size {}x{}: each side must be 16 to 8192", o.mean_width, o.mean_height));
  }
  if (o.quality < 1 || o.quality > 100) throw UsageError(fmt::format("--quality {}: expected 1 to 100", o.quality));
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  const bool dir_existed = fs::exists(o.dir, ec), images_existed = fs::exists(o.dir / "images", ec);
  fs::create_directories(o.dir / "images", ec);
  if (ec) throw UsageError(fmt::format("--out {}: {}", o.dir.string(), ec.message()));
  // On a failure to write (a full disk), what this call wrote goes, and the error is the
  // machine's (exit 1), not a usage error: no half dataset that the next run would use.
  auto remove_written = [&](std::size_t images) {
    std::error_code rm;
    if (!dir_existed) {
      fs::remove_all(o.dir, rm);
      return;
    }
    for (std::size_t i = 0; i < images; ++i) fs::remove(o.dir / "images" / fmt::format("{:08d}.jpg", i), rm);
    for (const char* f : {"images.shard", "images.idx", "tokens-u16.bin", "tokens-u32.bin", "manifest.json"}) {
      fs::remove(o.dir / f, rm);
    }
    if (!images_existed) fs::remove(o.dir / "images", rm);
  };

  const std::size_t n = static_cast<std::size_t>(o.count);
  std::vector<std::string> jpegs(n);
  std::vector<int> widths(n), heights(n);
  const int threads = o.threads > 0 ? o.threads : kernels::usable_cpus();
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::string failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    try {
      JpegEncoder encoder;
      for (std::size_t i = next++; i < n && !failed; i = next++) {
        image_size(o, i, widths[i], heights[i]);
        const std::vector<std::uint8_t> rgb = synth_image(o.seed, i, widths[i], heights[i]);
        jpegs[i] = encoder.encode(rgb.data(), widths[i], heights[i], o.quality);
        const fs::path path = o.dir / "images" / fmt::format("{:08d}.jpg", i);
        write_file_atomic(path, jpegs[i].data(), jpegs[i].size());
      }
    } catch (const std::exception& e) {
      std::lock_guard lock(failure_mutex);
      if (!failed.exchange(true)) failure = e.what();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (failed) {
    remove_written(n);
    throw std::runtime_error(fmt::format("datagen into {}: {}; removed what it wrote", o.dir.string(), failure));
  }
  try {
    write_shard(o.dir / "images.shard", o.dir / "images.idx", dataset_id(o), jpegs);
    if (o.tokens > 0) {
      // GPT-2's vocabulary (50257 ids) fits uint16; Llama 3's (128256) needs uint32.
      write_tokens(o.dir / "tokens-u16.bin", 2, 50257, o.tokens, o.seed);
      write_tokens(o.dir / "tokens-u32.bin", 4, 128256, o.tokens, o.seed + 1);
    }
  } catch (const std::exception& e) {
    remove_written(n);
    throw std::runtime_error(fmt::format("datagen into {}: {}; removed what it wrote", o.dir.string(), e.what()));
  }

  GenerateReport r;
  r.images = o.count;
  for (std::size_t i = 0; i < n; ++i) {
    r.jpeg_bytes += static_cast<double>(jpegs[i].size());
    r.pixels += static_cast<double>(widths[i]) * heights[i];
    r.mean_width += widths[i];
    r.mean_height += heights[i];
  }
  r.mean_width /= static_cast<double>(n);
  r.mean_height /= static_cast<double>(n);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::ordered_json manifest{
      {"generator", "gpubench datagen"},
      {"format_version", 1},
      {"options",
       {{"count", o.count},
        {"mean_width", o.mean_width},
        {"mean_height", o.mean_height},
        {"fixed_size", o.fixed_size},
        {"quality", o.quality},
        {"seed", o.seed},
        {"tokens", o.tokens}}},
      {"images", r.to_json()}};
  manifest["images"].erase("seconds");  // the manifest is part of the reproducible bytes
  const std::string text = manifest.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  try {
    write_file_atomic(o.dir / "manifest.json", text.data(), text.size());
  } catch (const std::exception& e) {
    remove_written(n);
    throw std::runtime_error(fmt::format("datagen into {}: {}; removed what it wrote", o.dir.string(), e.what()));
  }
  return r;
}

}  // namespace gpubench::suites::dataload
