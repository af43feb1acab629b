// The video suite's axes, presets and planning rules (docs/suite-video.md).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <limits>

#include "bench/core/errors.hpp"
#include "bench/suites/video/video.hpp"

namespace gpubench::suites::video {
namespace {

namespace fs = std::filesystem;

// x264's and x265's preset names, fastest first.
constexpr std::array<const char*, 10> kX26xPresets = {"ultrafast", "superfast", "veryfast", "faster", "fast",
                                                      "medium",    "slow",      "slower",   "veryslow", "placebo"};

bool is_x26x_preset(std::string_view p) { return std::find(kX26xPresets.begin(), kX26xPresets.end(), p) != kX26xPresets.end(); }
bool is_nvenc_preset(std::string_view p) { return p.size() == 2 && p[0] == 'p' && p[1] >= '1' && p[1] <= '7'; }
bool is_svt_preset(std::string_view p) {  // SVT-AV1's 0 (slowest) to 13
  if (p.empty() || p.size() > 2 || !std::all_of(p.begin(), p.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) return false;
  return std::stoi(std::string(p)) <= 13;
}

std::optional<std::string> preset_error(std::string_view p) {
  if (is_x26x_preset(p) || is_nvenc_preset(p) || is_svt_preset(p)) return std::nullopt;
  return std::string("not a preset of x264/x265 (ultrafast .. placebo), SVT-AV1 (0 .. 13) or NVENC (p1 .. p7)");
}

std::optional<std::string> input_error(std::string_view word) {
  if (word == "synthetic") return std::nullopt;
  const fs::path p{std::string(word)};
  std::error_code ec;
  const fs::file_status st = fs::status(p, ec);
  if (ec || !fs::exists(st)) return std::string("no such file");
  if (fs::is_directory(st)) return std::string("a directory, not a video file");
  if (!fs::is_regular_file(st)) return std::string("not a regular file");
  if (!std::ifstream(p, std::ios::binary).good()) return std::string("cannot be read");
  return std::nullopt;
}

// The preset a config's codec takes on this device, for a point whose preset was not given.
bool preset_fits(const Config& c) {
  if (c.gpu) return is_nvenc_preset(c.preset);
  return c.codec == Codec::Av1 ? is_svt_preset(c.preset) : is_x26x_preset(c.preset);
}

// NVDEC decodes AV1 from Ampere's GA10x and Ada on, not on GA100 (A100) or Hopper (Video Codec
// SDK 13.0, NVDEC application note, "NVDEC Hardware Capabilities": AV1 Main Profile decoding is
// N in the Turing/GA100/Hopper column).
bool nvdec_decodes_av1(const DeviceInfo& d) {
  const int cc = d.cc_major * 10 + d.cc_minor;
  return cc >= 86 && cc != 90;
}

class VideoSuite final : public Suite {
 public:
  std::string name() const override { return "video"; }
  std::string description() const override {
    return "Video encode and decode of 8-bit 4:2:0 frames: x264, x265 and SVT-AV1 and libavcodec's decoders on the CPU, NVENC and "
           "NVDEC on GPUs; every encode decoded back and held to a PSNR floor before it is timed; fps, bits per pixel, PSNR";
  }

  std::vector<AxisSpec> axes() const override {
    return {
        {"op", AxisKind::Enum, "encode (frames to a stream) or decode (a stream the CPU encoder made to frames)", {"encode", "decode"}, 1},
        {"codec", AxisKind::Enum, "h264, hevc or av1", {"h264", "hevc", "av1"}, 1},
        {"res", AxisKind::Enum, "frame size: 720p (1280x720), 1080p, 2160p, or input (the file's own, with input=PATH)", {"720p", "1080p", "2160p", "input"}, 1},
        {"preset", AxisKind::Text, "the encoder's preset: x264/x265 ultrafast .. placebo, SVT-AV1 0 .. 13, NVENC p1 .. p7", {}, 1,
         [](std::string_view w) { return preset_error(w); }},
        {"qp", AxisKind::Int, "constant quantizer (x264, x265, NVENC: 0-51; SVT-AV1: 0-63); lower is better quality", {}, 0, {}, 63},
        {"frames", AxisKind::Int, "frames per run per session (the synthetic clip's length, or the first frames of input)", {}, 2, {}, 2000},
        {"sessions", AxisKind::Int, "encoders or decoders in parallel, one thread each", {}, 1, {}, 64},
        {"threads", AxisKind::Int, "a CPU codec's threads per session (0: the codec chooses)", {}, 0, {}, 256},
        {"input", AxisKind::Text, "synthetic (generated, the same everywhere) or a video file (its first video stream, 8-bit 4:2:0)", {}, 1,
         [](std::string_view w) { return input_error(w); }, std::numeric_limits<std::int64_t>::max(), true},
    };
  }

  std::vector<Preset> presets() const override {
    using Values = std::vector<std::pair<std::string, std::string>>;
    auto p = [](std::string op, std::string codec, std::string res, std::string preset, std::string qp, std::string frames,
                std::string sessions) {
      return Values{{"op", op},         {"codec", codec},       {"res", res},      {"preset", preset}, {"qp", qp},
                    {"frames", frames}, {"sessions", sessions}, {"threads", "0"}, {"input", "synthetic"}};
    };
    // quick on the CPU: H.264 at 720p, x264 veryfast and medium, and its decode: about 20 s on
    // 2 cores. On a GPU: NVENC H.264 and HEVC at 1080p, presets p1 and p3 (rows of the SDK's
    // per-engine table, data/reference.json), and NVDEC.
    const Values cpu_quick = p("encode,decode", "h264", "720p", "veryfast,medium", "23", "30", "1");
    const Values cpu_standard = p("encode,decode", "h264,hevc,av1", "720p,1080p", "veryfast,medium,8,10", "23,35", "30", "1");
    const Values cpu_full = p("encode,decode", "h264,hevc,av1", "720p,1080p,2160p", "ultrafast,veryfast,medium,slow,4,8,10,12", "18,23,28,35,45", "60", "1,2");
    // GPU clips are 60 frames: NVENC keeps at most 64 input frames registered (FFmpeg 5.1's
    // nvenc.c, MAX_REGISTERED_FRAMES), so a longer clip would re-register frames in the timed runs.
    const Values gpu_quick = p("encode,decode", "h264,hevc", "1080p", "p1,p3", "23", "60", "1");
    const Values gpu_standard = p("encode,decode", "h264,hevc,av1", "1080p,2160p", "p1,p3,p5,p7", "23,35", "60", "1,2,4");
    const Values gpu_full = p("encode,decode", "h264,hevc,av1", "1080p,2160p", "p1,p3,p5,p7", "18,23,35", "60", "1,2,4,8");
    return {{"quick", gpu_quick, cpu_quick}, {"standard", gpu_standard, cpu_standard}, {"full", gpu_full, cpu_full}};
  }

  Point resolve(const DeviceInfo& device, Point point) const override {
    if (point.text("input") != "synthetic") point.set("res", std::string("input"));
    if (point.text("op") == "decode") {
      // A decode times the decoder on the CPU encoder's stream: the preset is that stream's, and
      // NVDEC has no threads to set.
      point.set("preset", std::string(point.text("codec") == "av1" ? "10" : "veryfast"));
      if (device.is_cuda()) point.set("threads", std::int64_t{0});
    }
    return point;
  }

  bool applies(const DeviceInfo& device, const Point& point) const override {
    Config c = to_config(point);
    c.gpu = device.is_cuda();
    // A preset of another codec or engine is dropped, unless named (then unsupported() says why).
    if (c.op == Op::Encode && !point.given("preset") && !preset_fits(c)) return false;
    if (c.gpu && c.threads != 0 && !point.given("threads")) return false;
    if (c.res == "input" && c.input == "synthetic" && !point.given("res")) return false;
    return true;
  }

  std::optional<std::string> not_applicable(const DeviceInfo& device) const override {
    (void)device;
    if (!have_libav()) return libav_missing_reason();
    return std::nullopt;
  }

  std::optional<std::string> unsupported(const DeviceInfo& device, const Point& point) const override {
    Config c = to_config(point);
    c.gpu = device.is_cuda();
    if (c.codec != Codec::Av1 && c.qp > 51) return fmt::format("qp={}: {} takes 0-51", c.qp, c.gpu ? "NVENC" : encoder_name(c));
    if (c.codec == Codec::Av1 && c.qp == 0 && !c.gpu) {
      // FFmpeg 5.1's libsvtav1 wrapper sets a constant QP only for qp > 0; at 0 SVT-AV1 keeps its
      // own default rate control (measured: the PSNR of its default CRF, not of a QP 0).
      return std::string("qp=0: libsvtav1 (FFmpeg 5.1) takes 0 as unset and keeps its default rate control; give 1-63");
    }
    if (c.res == "input" && c.input == "synthetic") return std::string("res=input needs input=PATH");
    if (c.op == Op::Encode && !preset_fits(c)) {
      if (c.gpu) return fmt::format("preset={}: NVENC takes p1 .. p7", c.preset);
      return fmt::format("preset={}: {} takes {}", c.preset, encoder_name(c), c.codec == Codec::Av1 ? "0 .. 13" : "ultrafast .. placebo");
    }
    if (!c.gpu) return std::nullopt;
    if (c.op == Op::Encode) {
      if (device.nvenc_engines && *device.nvenc_engines == 0) {
        return fmt::format("no NVENC on {}: it has {} NVDEC and no video encoder (data/gpus.json)", device.name,
                           device.nvdec_engines ? std::to_string(*device.nvdec_engines) : std::string("some"));
      }
      if (c.codec == Codec::Av1) {
        return std::string(
            "AV1 encode on NVENC needs the Video Codec SDK 12 interface; this build's libavcodec (Debian 12: nv-codec-headers 11.1) "
            "has no av1_nvenc");
      }
    } else {
      if (device.nvdec_engines && *device.nvdec_engines == 0) return fmt::format("no NVDEC on {} (data/gpus.json)", device.name);
      if (c.codec == Codec::Av1 && !nvdec_decodes_av1(device)) {
        return fmt::format("NVDEC on {} (compute capability {}.{}) decodes no AV1: from GA10x and Ada on (Video Codec SDK 13.0, NVDEC "
                           "application note)",
                           device.name, device.cc_major, device.cc_minor);
      }
    }
    return std::nullopt;
  }

  void check_sizes(const DeviceInfo& device, const Point& point) const override {
    (void)device;
    const Config c = to_config(point);
    // The source frames are held whole (and once more per session's codec): at most 4 GiB.
    const double bytes = static_cast<double>(c.w) * c.h * 1.5 * c.frames;
    if (bytes > static_cast<double>(std::int64_t{4} << 30)) {
      throw UsageError(fmt::format("video: frames={} at {} is {:.1f} GiB of source frames, more than 4 GiB", c.frames, c.res,
                                   bytes / static_cast<double>(std::int64_t{1} << 30)));
    }
  }

  std::optional<std::string> plan_note(const DeviceInfo& device, const Point& point) const override {
    Config c = to_config(point);
    c.gpu = device.is_cuda();
    if (c.op == Op::Encode) return fmt::format("{}{}", encoder_name(c), c.gpu ? " (frames in device memory)" : "");
    return fmt::format("{} of a {} stream", decoder_name(c), encoder_name(Config{Op::Encode, c.codec}));
  }

  std::unique_ptr<Case> make_case(const DeviceInfo& device, const Point& point) const override {
    Config c = to_config(point);
    c.gpu = device.is_cuda();
    c.ordinal = device.is_cuda() ? device.ordinal : 0;
    return video::make_case(c);
  }

  nlohmann::ordered_json libraries() const override { return {{"libavcodec", libav_versions()}}; }
};

}  // namespace

Config to_config(const Point& point) {
  Config c;
  c.op = point.text("op") == "decode" ? Op::Decode : Op::Encode;
  const std::string& codec = point.text("codec");
  c.codec = codec == "hevc" ? Codec::Hevc : codec == "av1" ? Codec::Av1 : Codec::H264;
  c.res = point.text("res");
  if (c.res == "1080p") {
    c.w = 1920;
    c.h = 1080;
  } else if (c.res == "2160p") {
    c.w = 3840;
    c.h = 2160;
  }  // 720p, and input until its file is read: 1280x720
  c.preset = point.text("preset");
  c.qp = static_cast<int>(point.integer("qp"));
  c.frames = static_cast<int>(point.integer("frames"));
  c.sessions = static_cast<int>(point.integer("sessions"));
  c.threads = static_cast<int>(point.integer("threads"));
  c.input = point.text("input");
  return c;
}

std::unique_ptr<Suite> make_suite() { return std::make_unique<VideoSuite>(); }

}  // namespace gpubench::suites::video
