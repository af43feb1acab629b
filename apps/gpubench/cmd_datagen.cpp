// gpubench datagen: write the data-loading suite's synthetic dataset (JPEG files, a packed
// shard with its index, token shards). Logic in bench/suites/dataload/datagen.cpp.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/paths.hpp"
#include "bench/suites/dataload/datagen.hpp"
#include "bench/suites/video/video.hpp"

namespace gpubench::app {
namespace {

constexpr const char* kDatagenUsage = R"(Usage: gpubench datagen --out DIR [options]

Writes a reproducible synthetic dataset for the dataload suite (same options and seed, same
bytes): DIR/images/*.jpg (one JPEG per sample), DIR/images.shard + DIR/images.idx (the same
samples packed, with an index), DIR/tokens-u16.bin and DIR/tokens-u32.bin (token ids), and
DIR/manifest.json. Run the suite on it with GPUBENCH_DATASET=DIR gpubench run --suite dataload.
Prints one JSON object: count, bytes, mean size, bytes per pixel, seconds.

With --video WxH, writes instead the video suite's synthetic clip (input=synthetic): --frames
frames of raw 8-bit 4:2:0 (I420) video in DIR/synthetic_WxH_N.yuv, the frames the suite encodes,
for another encoder (ffmpeg -f rawvideo -pix_fmt yuv420p -s WxH -i FILE).

Options)";

// The video suite's synthetic clip as one raw I420 file: each frame's Y, then U, then V plane.
int write_video(const std::string& out, const std::string& size, int frames) {
  std::smatch m;
  if (!std::regex_match(size, m, std::regex("([0-9]{2,4})x([0-9]{2,4})"))) {
    throw UsageError(fmt::format("--video '{}': expected WIDTHxHEIGHT, e.g. 1280x720", size));
  }
  const int w = std::stoi(m[1]), h = std::stoi(m[2]);
  if (w < 16 || h < 16 || w > 7680 || h > 4320 || w % 2 != 0 || h % 2 != 0) {
    throw UsageError(fmt::format("--video '{}': even sides from 16 to 7680x4320", size));
  }
  in_range(static_cast<long long>(frames), "--frames", 2, 2000);
  std::filesystem::create_directories(out);
  const std::filesystem::path file = std::filesystem::path(out) / fmt::format("synthetic_{}x{}_{}.yuv", w, h, frames);
  std::ofstream f(file, std::ios::binary);
  for (const suites::video::Frame& fr : suites::video::synthetic_frames(w, h, frames)) {
    for (const auto* plane : {&fr.y, &fr.u, &fr.v}) f.write(reinterpret_cast<const char*>(plane->data()), static_cast<std::streamsize>(plane->size()));
  }
  if (!f.good()) throw std::runtime_error(fmt::format("writing {} failed", file.string()));
  nlohmann::ordered_json j{{"out", out}, {"file", file.string()}, {"width", w}, {"height", h}, {"frames", frames},
                           {"pix_fmt", "yuv420p"}, {"bytes", static_cast<std::int64_t>(w) * h * 3 / 2 * frames}};
  fmt::print("{}\n", j.dump());
  return 0;
}

}  // namespace

int cmd_datagen(const std::vector<std::string>& args) {
  suites::dataload::GenerateOptions o;
  std::string out, size = "500x375", video;
  int frames = 30;
  std::uint64_t seed = o.seed;
  po::options_description desc(kDatagenUsage);
  desc.add_options()
      ("out,o", po::value(&out), "output folder (created)")
      ("count,n", po::value(&o.count)->default_value(o.count), "images")
      ("size", po::value(&size)->default_value(size),
       "mean image size WxH; sizes spread around it like ImageNet's (orientation, aspect, area)")
      ("fixed-size", po::bool_switch(&o.fixed_size), "every image exactly --size")
      ("quality", po::value(&o.quality)->default_value(o.quality), "JPEG quality (1-100)")
      ("seed", po::value(&seed)->default_value(seed), "random seed")
      ("tokens", po::value(&o.tokens)->default_value(o.tokens), "tokens per token shard (0: no token shards)")
      ("threads", po::value(&o.threads)->default_value(0), "encoder threads (0: every CPU; at most 1024)")
      ("video", po::value(&video), "WxH: write the video suite's synthetic clip (raw I420) instead of images")
      ("frames", po::value(&frames)->default_value(frames), "--video: frames (2-2000)")
      ("help,h", "show this help");
  po::variables_map vm = parse_or_throw(args, desc);
  if (vm.count("help")) return print_help(help_text(desc));
  if (!vm.count("out")) throw UsageError("--out DIR is required");
  validate_output_folder(out, "--out");  // the rules of every output path (paths.hpp)
  if (vm.count("video")) return write_video(out, video, frames);
  // The form first, then the range: a well-formed size that is merely too large says so.
  std::smatch m;
  if (!std::regex_match(size, m, std::regex("([0-9]+)x([0-9]+)"))) {
    throw UsageError(fmt::format("--size '{}': expected WIDTHxHEIGHT, e.g. 500x375", size));
  }
  if (m[1].length() > 5 || m[2].length() > 5) {
    throw UsageError(fmt::format("--size '{}': each side must be 16 to 8192", size));
  }
  o.mean_width = std::stoi(m[1]);
  o.mean_height = std::stoi(m[2]);  // generate_dataset checks the range (16 to 8192)
  in_range(static_cast<long long>(o.threads), "--threads", 0, 1024);
  in_range(static_cast<long long>(o.tokens), "--tokens", 0, 1LL << 34);
  o.seed = seed;
  o.dir = out;
  const suites::dataload::GenerateReport r = suites::dataload::generate_dataset(o);
  nlohmann::ordered_json j{{"out", out}};
  j.update(r.to_json());
  fmt::print("{}\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return 0;
}

}  // namespace gpubench::app
