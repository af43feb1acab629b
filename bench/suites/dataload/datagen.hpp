#pragma once
// `gpubench datagen`: a reproducible synthetic dataset (dataset.hpp describes the layout).
// Same options and seed, same bytes: image content and sizes come from the counter-based
// generator of kernels/common/random.hpp, and libjpeg-turbo encodes deterministically.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/suites/dataload/dataset.hpp"

namespace gpubench::suites::dataload {

struct GenerateOptions {
  fs::path dir;
  std::int64_t count = 64;          // images
  int mean_width = 500;             // ImageNet-like: about 500 x 375 on average
  int mean_height = 375;
  bool fixed_size = false;          // every image exactly mean_width x mean_height
  int quality = 90;
  std::uint64_t seed = 1;
  std::uint64_t tokens = 1 << 20;   // tokens per token shard (0: none)
  int threads = 0;                  // 0: every CPU of the process
};

struct GenerateReport {
  std::int64_t images = 0;
  double jpeg_bytes = 0, pixels = 0;
  double mean_width = 0, mean_height = 0;
  double seconds = 0;
  double bytes_per_pixel() const { return pixels > 0 ? jpeg_bytes / pixels : 0; }
  nlohmann::ordered_json to_json() const;
};

// The size of image `index`: the mean size with ImageNet's mix of orientations and aspect
// ratios (landscape 4:3 most often) and a log-normal spread of the area (sigma 0.25).
void image_size(const GenerateOptions& o, std::uint64_t index, int& width, int& height);

// Synthetic photo-like content, interleaved RGB: a smooth colour gradient, a few shapes with
// hard edges, and band-limited value noise (octaves of 32, 8 and 2 pixels) plus a little
// per-pixel noise, so a JPEG of it compresses about as much as a photograph.
std::vector<std::uint8_t> synth_image(std::uint64_t seed, std::uint64_t index, int width, int height);

// Writes the dataset to o.dir (created; existing files of the same names are replaced).
// Throws UsageError for bad options or an unwritable folder.
GenerateReport generate_dataset(const GenerateOptions& o);

}  // namespace gpubench::suites::dataload
