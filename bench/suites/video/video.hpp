#pragma once
// The `video` suite: encode and decode of 8-bit 4:2:0 video (docs/suite-video.md). On the cpu
// device through libavcodec's software codecs (x264, x265, SVT-AV1; its own H.264 and HEVC
// decoders and dav1d), on CUDA devices through NVENC and NVDEC (libavcodec's h264_nvenc,
// hevc_nvenc and *_cuvid, which load libnvidia-encode, libnvcuvid and libcuda at run time).
// Every encode is decoded back and its PSNR held against a floor for its codec and QP before
// it is timed.
//
// Files: frames (the synthetic source and PSNR: plain C++), codec (libavcodec: encoders,
// decoders, a user's file), floors (the PSNR floors), video_case (the cases), video_suite (axes,
// presets, planning rules).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/core/suite.hpp"

namespace gpubench::suites::video {

std::unique_ptr<Suite> make_suite();

// ---- frames (frames.cpp) ----------------------------------------------------------------------

// One 8-bit 4:2:0 frame, planar, tightly packed: y is w x h, u and v (w/2) x (h/2).
struct Frame {
  int w = 0, h = 0;
  std::vector<std::uint8_t> y, u, v;
};
Frame blank_frame(int w, int h);

// `count` frames of synthetic content with motion, the same for the same arguments on every
// machine: a diagonal gradient whose levels drift, fine grain moving right, a checkered square
// crossing the picture and a striped one moving up and left, sensor noise new every frame, and
// chroma gradients, so an encoder has edges, texture, motion and unpredictable detail to spend
// bits on. w and h even.
std::vector<Frame> synthetic_frames(int w, int h, int count);

// The mean squared error of two frames' planes and its PSNR, as FFmpeg's psnr filter defines
// them: MSE per plane over every sample; over a sequence, the planes' MSEs averaged over frames;
// the "average" PSNR from the samples' MSE (y counting 4 samples to each of u's and v's).
struct Psnr {
  double y = 0, u = 0, v = 0, average = 0;  // dB; 100 when the planes are identical
};
struct PlaneErrors {
  double y = 0, u = 0, v = 0;  // sums of squared differences
  std::int64_t frames = 0;
  void add(const Frame& a, const Frame& b);  // a and b of the same size
  Psnr psnr(int w, int h) const;
};
double psnr_of_mse(double mse);  // 10 log10(255^2 / mse); 100 for mse 0
// Whether two frames are identical, and if not the first differing plane and sample.
std::optional<std::string> first_difference(const Frame& a, const Frame& b);

// ---- settings ---------------------------------------------------------------------------------

enum class Op { Encode, Decode };
enum class Codec { H264, Hevc, Av1 };
std::string to_string(Codec c);

struct Config {
  Op op = Op::Encode;
  Codec codec = Codec::H264;
  int w = 1280, h = 720;
  std::string res = "720p";
  std::string preset = "veryfast";  // x264/x265 names, SVT-AV1's 0-13, NVENC's p1-p7
  int qp = 23;                      // constant QP (x264 and x265 0-51, SVT-AV1 0-63)
  int frames = 30;                  // frames per run per session
  int sessions = 1;                 // encoders or decoders in parallel, each its own thread
  int threads = 0;                  // a CPU codec's threads per session (0: the codec's choice)
  std::string input = "synthetic";  // or a file libavformat reads (its first video stream)
  bool gpu = false;                 // NVENC / NVDEC on CUDA device `ordinal`
  int ordinal = 0;
};
Config to_config(const Point& point);

// ---- PSNR floors (floors.cpp) -----------------------------------------------------------------

// The PSNR an encode at this codec and QP must reach, dB: calibrated on the CPU codecs over the
// synthetic content at 720p and 1080p (docs/suite-video.md has the table it comes from); for
// other sources (a user's file, frames under 1280x720) 8 dB lower, at least 20. Never 0.
double psnr_floor_db(Codec codec, int qp, bool calibrated_source = true);
// Whether a config's source is what the floors were calibrated on.
bool calibrated_source(const Config& c);

// ---- libavcodec (codec.cpp) -------------------------------------------------------------------

bool have_libav();
std::string libav_missing_reason();
std::string libav_versions();  // "libavcodec 59.37.100, libavformat ..."

// libavcodec's name of the encoder or decoder a config uses ("libx264", "h264_cuvid").
std::string encoder_name(const Config& c);
std::string decoder_name(const Config& c);

// An encoded stream: its packets in decode order.
struct Stream {
  std::vector<std::vector<std::uint8_t>> packets;
  std::vector<std::uint8_t> extradata;  // the codec's global header, when it has one
  std::int64_t bytes() const;
};

// A session's encoder, opened once; encode() feeds frames and keeps what comes out, and
// finish() drains it. Throws std::runtime_error with libavcodec's message when it cannot open
// (a GPU without NVENC, a refused session) or fails.
class Encoder {
 public:
  explicit Encoder(const Config& c);
  ~Encoder();
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;
  // The frames every encode() sends, copied once into libavcodec's frames (on a GPU into device
  // memory, so the timed encode reads them there, as the SDK's AppEncPerf does).
  void upload(const std::vector<Frame>& frames);
  std::int64_t encode(Stream* keep);  // every uploaded frame once; returns the bytes out so far
  std::int64_t finish(Stream* keep);  // drains: the frames still in the encoder
 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A session's decoder of one stream: decode() sends every packet of it once (a stream starts
// with a key frame, so it can follow itself) and counts the frames out, keeping them as 4:2:0
// frames when asked (an NVDEC frame is copied down from the GPU for that only); finish() drains.
class Decoder {
 public:
  Decoder(const Config& c, const Stream& s);
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  std::int64_t decode(std::vector<Frame>* keep);
  std::int64_t finish(std::vector<Frame>* keep);
 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A whole clip through a fresh encoder, drained; a whole stream through a fresh decoder, drained.
Stream encode_whole(const Config& c, const std::vector<Frame>& frames);
std::vector<Frame> decode_whole(const Config& c, const Stream& s);

// Up to `max_frames` frames of a file's first video stream, decoded on the CPU (8-bit 4:2:0
// only, even sizes). Throws UsageError naming the path when it is not a file libavformat can
// read or holds no such video.
std::vector<Frame> read_video_file(const std::string& path, int max_frames);

// The cases (video_case.cpp).
std::unique_ptr<Case> make_case(const Config& c);

}  // namespace gpubench::suites::video
