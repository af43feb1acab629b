// The video suite's cases (video.hpp): `sessions` encoders or decoders, each on its own thread,
// each run `frames` frames through every session. Timed on the host clock: the codecs are
// driven from the host, and a run ends when every session has its output (NVENC's packets,
// NVDEC's frames in device memory).
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <exception>
#include <thread>

#include "bench/core/case.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/video/video.hpp"

namespace gpubench::suites::video {
namespace {

using Clock = std::chrono::steady_clock;

double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Runs f(session) for every session at once (one thread each beyond the caller's), rethrowing
// the first failure once all have returned.
template <class F>
void each_session(int sessions, F&& f) {
  if (sessions == 1) {
    f(0);
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(sessions));
  std::vector<std::thread> threads;
  for (int s = 1; s < sessions; ++s) {
    threads.emplace_back([&, s] {
      try {
        f(s);
      } catch (...) {
        errors[static_cast<std::size_t>(s)] = std::current_exception();
      }
    });
  }
  try {
    f(0);
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// The source frames: synthetic at the config's size, or the user's file.
std::vector<Frame> source_frames(const Config& c) {
  if (c.input == "synthetic") return synthetic_frames(c.w, c.h, c.frames);
  return read_video_file(c.input, c.frames);
}

// The CPU encoder and settings a decode case's stream comes from (x264/x265 veryfast, SVT-AV1
// preset 10): the decoders are timed on a stream of the codec at the case's QP.
Config stream_config(const Config& c) {
  Config e = c;
  e.op = Op::Encode;
  e.gpu = false;
  e.threads = 0;
  e.preset = c.codec == Codec::Av1 ? "10" : "veryfast";
  return e;
}

struct Quality {
  Psnr psnr;
  double floor_db = 0;
  double bits_per_pixel = 0;
  std::int64_t frames = 0;
};

// Decodes `s` on the CPU and holds it against the source: the frame count and the PSNR floor.
Quality check_stream(const Config& c, const Stream& s, const std::vector<Frame>& src, std::vector<Frame>* decoded) {
  Config d = c;
  d.gpu = false;
  d.threads = 0;
  std::vector<Frame> frames = decode_whole(d, s);
  Quality q;
  q.frames = static_cast<std::int64_t>(frames.size());
  q.floor_db = psnr_floor_db(c.codec, c.qp, calibrated_source(c));
  const int w = src.front().w, h = src.front().h;
  q.bits_per_pixel = static_cast<double>(s.bytes()) * 8.0 / (static_cast<double>(w) * h * static_cast<double>(src.size()));
  PlaneErrors e;
  for (std::size_t i = 0; i < frames.size() && i < src.size(); ++i) e.add(src[i], frames[i]);
  q.psnr = e.psnr(w, h);
  if (decoded != nullptr) *decoded = std::move(frames);
  return q;
}

Verification judge(const Quality& q, std::size_t expected, const std::string& what) {
  Verification v;
  v.checked = q.frames;
  v.max_error = q.psnr.average > 0 ? q.floor_db / q.psnr.average : 1e9;  // 1.0 at the floor
  v.method = fmt::format("{} decoded back on the CPU: {} frames, PSNR {:.2f} dB (y {:.2f}, u {:.2f}, v {:.2f}) against a floor of "
                         "{:.1f} dB for this codec and QP",
                         what, q.frames, q.psnr.average, q.psnr.y, q.psnr.u, q.psnr.v, q.floor_db);
  if (static_cast<std::size_t>(q.frames) != expected) {
    v.detail = fmt::format("{} frames came back of {} sent", q.frames, expected);
  } else if (q.psnr.average < q.floor_db) {
    v.detail = fmt::format("PSNR {:.2f} dB is below the floor of {:.1f} dB for this codec and QP", q.psnr.average, q.floor_db);
  }
  v.passed = v.detail.empty();
  return v;
}

class VideoCase : public HostCase {
 public:
  explicit VideoCase(const Config& c) : c_(c) {}

  void run() override {
    const Clock::time_point t0 = Clock::now();
    const double cpu0 = process_cpu_s();
    each_session(c_.sessions, [&](int s) { run_session(s); });
    cpu_s_ += process_cpu_s() - cpu0;
    wall_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
  }

  Metrics metrics() const override {
    Metrics m;
    m.items = static_cast<double>(frames_per_session()) * c_.sessions;
    m.items_unit = "frames";
    m.extra["codec"] = c_.op == Op::Encode ? encoder_name(c_) : decoder_name(c_);
    m.extra["width"] = width_;
    m.extra["height"] = height_;
    m.extra["psnr_db"] = quality_.psnr.average;
    m.extra["psnr_y_db"] = quality_.psnr.y;
    m.extra["bits_per_pixel"] = quality_.bits_per_pixel;
    if (c_.op == Op::Encode) m.extra["psnr_floor_db"] = quality_.floor_db;
    return m;
  }

  void annotate(nlohmann::ordered_json& g, double seconds_per_run) const override {
    if (seconds_per_run <= 0) return;
    nlohmann::ordered_json& m = g["metrics"];
    const double fps = static_cast<double>(frames_per_session()) * c_.sessions / seconds_per_run;
    m["fps"] = fps;
    m["fps_per_session"] = fps / c_.sessions;
    // The host CPU the codec kept busy over every run (all of the process's threads): x264's
    // cores, or what NVENC and NVDEC still cost the host.
    if (wall_s_ > 0) m["cpu_cores"] = cpu_s_ / wall_s_;
  }

 protected:
  virtual void run_session(int s) = 0;
  std::int64_t frames_per_session() const { return static_cast<std::int64_t>(src_.size()); }

  void load_source() {
    src_ = source_frames(c_);
    width_ = src_.front().w;
    height_ = src_.front().h;
    c_.w = width_;
    c_.h = height_;
  }

  Config c_;
  std::vector<Frame> src_;
  int width_ = 0, height_ = 0;
  Quality quality_;
  double cpu_s_ = 0, wall_s_ = 0;
};

class EncodeCase final : public VideoCase {
 public:
  using VideoCase::VideoCase;

  void setup() override {
    load_source();
    open_sessions();
  }

  Verification verify() override {
    // A fresh encoder of the same settings, drained, decoded back on the CPU. On a GPU the timed
    // sessions are closed meanwhile, so the check never needs a session more than the case
    // (GeForce cards allow 8 at once).
    if (c_.gpu) encoders_.clear();
    quality_ = check_stream(c_, encode_whole(c_, src_), src_, nullptr);
    const Verification v = judge(quality_, src_.size(), fmt::format("the {} encode", encoder_name(c_)));
    if (c_.gpu) open_sessions();
    return v;
  }

 private:
  void open_sessions() {
    for (int s = 0; s < c_.sessions; ++s) {
      try {
        encoders_.push_back(std::make_unique<Encoder>(c_));
      } catch (const std::runtime_error& e) {
        if (!c_.gpu || s == 0) throw;
        // NVENC refuses a session past the card's limit (GeForce: 8 per system) with an
        // out-of-memory status: a reason, not a crash.
        throw CaseSkipped(fmt::format("NVENC refused session {} of {}: {} (GeForce cards allow 8 concurrent NVENC sessions per "
                                      "system)",
                                      s + 1, c_.sessions, e.what()));
      }
      encoders_.back()->upload(src_);
    }
  }

  void run_session(int s) override { encoders_[static_cast<std::size_t>(s)]->encode(nullptr); }

  std::vector<std::unique_ptr<Encoder>> encoders_;
};

class DecodeCase final : public VideoCase {
 public:
  using VideoCase::VideoCase;

  void setup() override {
    load_source();
    stream_ = encode_whole(stream_config(c_), src_);
    for (int s = 0; s < c_.sessions; ++s) decoders_.push_back(std::make_unique<Decoder>(c_, stream_));
  }

  Verification verify() override {
    std::vector<Frame> cpu;
    quality_ = check_stream(c_, stream_, src_, &cpu);
    if (!c_.gpu) {
      return judge(quality_, src_.size(), fmt::format("a {} {} stream", encoder_name(stream_config(c_)), stream_config(c_).preset));
    }
    // NVDEC against libavcodec's decoder of the same stream: these decoders are bit-exact.
    const std::vector<Frame> frames = decode_whole(c_, stream_);
    Verification v;
    v.checked = static_cast<std::int64_t>(frames.size());
    v.method = fmt::format("{} frames of {} compared with libavcodec's {} decode of the same stream, sample for sample", frames.size(),
                           decoder_name(c_), decoder_name(Config{c_.op, c_.codec}));
    if (frames.size() != cpu.size()) {
      v.detail = fmt::format("{} frames came back of {}", frames.size(), cpu.size());
    } else {
      for (std::size_t i = 0; i < frames.size() && v.detail.empty(); ++i) {
        if (auto d = first_difference(frames[i], cpu[i])) v.detail = fmt::format("frame {}: {}", i, *d);
      }
    }
    v.passed = v.detail.empty();
    v.max_error = v.passed ? 0 : 1;
    return v;
  }

 private:
  void run_session(int s) override { decoders_[static_cast<std::size_t>(s)]->decode(nullptr); }

  Stream stream_;
  std::vector<std::unique_ptr<Decoder>> decoders_;
};

}  // namespace

std::unique_ptr<Case> make_case(const Config& c) {
  if (c.op == Op::Encode) return std::make_unique<EncodeCase>(c);
  return std::make_unique<DecodeCase>(c);
}

}  // namespace gpubench::suites::video
