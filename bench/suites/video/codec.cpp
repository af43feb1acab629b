// The video suite's codecs through libavcodec (video.hpp): x264, x265 and SVT-AV1 and the
// software decoders on the CPU; NVENC (h264_nvenc, hevc_nvenc) and NVDEC (*_cuvid) on CUDA
// devices, whose libraries libavcodec loads at run time (libnvidia-encode.so.1, libnvcuvid.so.1,
// libcuda.so.1), so this file builds and plans without a driver.
#include <fmt/format.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

#include "bench/core/errors.hpp"
#include "bench/suites/video/video.hpp"

// Set by bench/CMakeLists.txt where configure found libavcodec, libavformat and libavutil.
#ifndef GPUBENCH_HAVE_LIBAV
#define GPUBENCH_HAVE_LIBAV 0
#endif

#if GPUBENCH_HAVE_LIBAV
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
}
#endif

namespace gpubench::suites::video {

std::string to_string(Codec c) { return c == Codec::H264 ? "h264" : c == Codec::Hevc ? "hevc" : "av1"; }

std::int64_t Stream::bytes() const {
  std::int64_t n = 0;
  for (const auto& p : packets) n += static_cast<std::int64_t>(p.size());
  return n;
}

std::string encoder_name(const Config& c) {
  if (c.gpu) return c.codec == Codec::H264 ? "h264_nvenc" : c.codec == Codec::Hevc ? "hevc_nvenc" : "av1_nvenc";
  return c.codec == Codec::H264 ? "libx264" : c.codec == Codec::Hevc ? "libx265" : "libsvtav1";
}

std::string decoder_name(const Config& c) {
  if (c.gpu) return to_string(c.codec) + "_cuvid";
  return c.codec == Codec::H264 ? "h264" : c.codec == Codec::Hevc ? "hevc" : "libdav1d";
}


Stream encode_whole(const Config& c, const std::vector<Frame>& frames) {
  Encoder enc(c);
  enc.upload(frames);
  Stream s;
  enc.encode(&s);
  enc.finish(&s);
  return s;
}

std::vector<Frame> decode_whole(const Config& c, const Stream& s) {
  Decoder dec(c, s);
  std::vector<Frame> frames;
  dec.decode(&frames);
  dec.finish(&frames);
  return frames;
}

#if GPUBENCH_HAVE_LIBAV
namespace {

// libavcodec, libavformat and libavutil are loaded at run time, by the sonames of the headers
// built against (Debian 12: libavcodec.so.59, libavformat.so.59, libavutil.so.57), so a host
// without them (a GPU host with no Debian packages) runs every other suite and this one skips
// saying which library is missing.
#define GPUBENCH_LIBAV_FUNCTIONS(X) \
  X(avcodec, avcodec_find_encoder_by_name) \
  X(avcodec, avcodec_find_decoder_by_name) \
  X(avcodec, avcodec_alloc_context3) \
  X(avcodec, avcodec_free_context) \
  X(avcodec, avcodec_open2) \
  X(avcodec, avcodec_send_frame) \
  X(avcodec, avcodec_receive_packet) \
  X(avcodec, avcodec_send_packet) \
  X(avcodec, avcodec_receive_frame) \
  X(avcodec, avcodec_parameters_to_context) \
  X(avcodec, av_packet_alloc) \
  X(avcodec, av_packet_free) \
  X(avcodec, av_packet_unref) \
  X(avcodec, av_new_packet) \
  X(avcodec, avcodec_version) \
  X(avformat, avformat_open_input) \
  X(avformat, avformat_find_stream_info) \
  X(avformat, av_find_best_stream) \
  X(avformat, av_read_frame) \
  X(avformat, avformat_close_input) \
  X(avformat, avformat_version) \
  X(avutil, av_log_set_callback) \
  X(avutil, av_strerror) \
  X(avutil, av_opt_set) \
  X(avutil, av_hwdevice_ctx_create) \
  X(avutil, av_hwframe_ctx_alloc) \
  X(avutil, av_hwframe_ctx_init) \
  X(avutil, av_hwframe_get_buffer) \
  X(avutil, av_hwframe_transfer_data) \
  X(avutil, av_buffer_ref) \
  X(avutil, av_buffer_unref) \
  X(avutil, av_frame_alloc) \
  X(avutil, av_frame_free) \
  X(avutil, av_frame_unref) \
  X(avutil, av_frame_get_buffer) \
  X(avutil, av_get_pix_fmt_name) \
  X(avutil, av_mallocz) \
  X(avutil, avutil_version)

struct Av {
#define GPUBENCH_LIBAV_POINTER(lib, name) decltype(&::name) name = nullptr;
  GPUBENCH_LIBAV_FUNCTIONS(GPUBENCH_LIBAV_POINTER)
#undef GPUBENCH_LIBAV_POINTER
  std::string error;  // why it could not be loaded; empty when loaded
};

std::string soname(const char* lib) {
  const int major = std::string(lib) == "avcodec" ? LIBAVCODEC_VERSION_MAJOR : std::string(lib) == "avformat" ? LIBAVFORMAT_VERSION_MAJOR
                                                                                                              : LIBAVUTIL_VERSION_MAJOR;
  return fmt::format("lib{}.so.{}", lib, major);
}

const Av& loaded() {
  static std::once_flag once;
  static Av a;
  std::call_once(once, [] {
    std::map<std::string, void*> handles;
    for (const char* lib : {"avutil", "avcodec", "avformat"}) {
      void* h = dlopen(soname(lib).c_str(), RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) {
        const char* e = dlerror();
        a.error = fmt::format("{} not found ({}): install Debian's libavcodec{} and libavformat{} (or Ubuntu's equivalents)", soname(lib),
                              e != nullptr ? e : "dlopen failed", LIBAVCODEC_VERSION_MAJOR, LIBAVFORMAT_VERSION_MAJOR);
        return;
      }
      handles[lib] = h;
    }
#define GPUBENCH_LIBAV_LOAD(lib, name)                                                                     \
  a.name = reinterpret_cast<decltype(a.name)>(dlsym(handles[#lib], #name));                                \
  if (a.name == nullptr && a.error.empty()) a.error = fmt::format("{} has no {}", soname(#lib), #name);
    GPUBENCH_LIBAV_FUNCTIONS(GPUBENCH_LIBAV_LOAD)
#undef GPUBENCH_LIBAV_LOAD
  });
  return a;
}

// The loaded functions; CaseSkipped naming the missing library when they are not there.
const Av& av() {
  const Av& a = loaded();
  if (!a.error.empty()) throw CaseSkipped(a.error);
  return a;
}

// libavcodec reports the detail of a failure (NVENC's "OpenEncodeSessionEx failed: out of
// memory") through av_log only: the last error line of this thread is kept for the exception.
thread_local std::string last_log;

void log_callback(void* avcl, int level, const char* fmt_text, va_list args) {
  (void)avcl;
  if (level > AV_LOG_ERROR) return;  // libx264's banner and the like stay quiet
  char line[512];
  std::vsnprintf(line, sizeof line, fmt_text, args);
  last_log = line;
  while (!last_log.empty() && (last_log.back() == '\n' || last_log.back() == ' ')) last_log.pop_back();
}

void install_log() {
  static std::once_flag once;
  std::call_once(once, [] { av().av_log_set_callback(log_callback); });
}

[[noreturn]] void fail(const std::string& what, int rc) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av().av_strerror(rc, buf, sizeof buf);
  std::string msg = fmt::format("{}: {}", what, buf);
  if (!last_log.empty()) msg += fmt::format(" ({})", last_log);
  last_log.clear();
  throw std::runtime_error(msg);
}

// An option a codec may not have (a preset name libavcodec's wrapper lacks fails loudly).
void set_option(AVCodecContext* ctx, const char* key, const std::string& value, bool required) {
  const int rc = av().av_opt_set(ctx->priv_data, key, value.c_str(), 0);
  if (rc < 0 && required) fail(fmt::format("{} option {}={}", ctx->codec->name, key, value), rc);
}

// The CUDA device of a GPU session (libavutil's hwcontext_cuda loads libcuda itself).
AVBufferRef* cuda_device(int ordinal) {
  AVBufferRef* dev = nullptr;
  const int rc = av().av_hwdevice_ctx_create(&dev, AV_HWDEVICE_TYPE_CUDA, std::to_string(ordinal).c_str(), nullptr, 0);
  if (rc < 0) fail(fmt::format("CUDA device {} for libavcodec", ordinal), rc);
  return dev;
}

void copy_in(const Frame& f, AVFrame* out) {
  const std::vector<std::uint8_t>* planes[] = {&f.y, &f.u, &f.v};
  for (int p = 0; p < 3; ++p) {
    const int pw = p == 0 ? f.w : f.w / 2, ph = p == 0 ? f.h : f.h / 2;
    for (int row = 0; row < ph; ++row) {
      std::memcpy(out->data[p] + static_cast<std::ptrdiff_t>(row) * out->linesize[p],
                  planes[p]->data() + static_cast<std::size_t>(row) * static_cast<std::size_t>(pw), static_cast<std::size_t>(pw));
    }
  }
}

// A decoded frame (yuv420p, yuvj420p or NVDEC's nv12) as planar 4:2:0.
Frame copy_out(const AVFrame* in) {
  Frame f = blank_frame(in->width, in->height);
  const int cw = in->width / 2, ch = in->height / 2;
  for (int row = 0; row < in->height; ++row) {
    std::memcpy(f.y.data() + static_cast<std::size_t>(row) * static_cast<std::size_t>(in->width),
                in->data[0] + static_cast<std::ptrdiff_t>(row) * in->linesize[0], static_cast<std::size_t>(in->width));
  }
  if (in->format == AV_PIX_FMT_NV12) {
    for (int row = 0; row < ch; ++row) {
      const std::uint8_t* uv = in->data[1] + static_cast<std::ptrdiff_t>(row) * in->linesize[1];
      for (int x = 0; x < cw; ++x) {
        f.u[static_cast<std::size_t>(row * cw + x)] = uv[2 * x];
        f.v[static_cast<std::size_t>(row * cw + x)] = uv[2 * x + 1];
      }
    }
    return f;
  }
  if (in->format != AV_PIX_FMT_YUV420P && in->format != AV_PIX_FMT_YUVJ420P) {
    const char* name = av().av_get_pix_fmt_name(static_cast<AVPixelFormat>(in->format));
    throw std::runtime_error(fmt::format("decoded pixel format {}: the suite compares 8-bit 4:2:0 (yuv420p)", name ? name : "?"));
  }
  for (int p = 1; p < 3; ++p) {
    std::vector<std::uint8_t>& plane = p == 1 ? f.u : f.v;
    for (int row = 0; row < ch; ++row) {
      std::memcpy(plane.data() + static_cast<std::size_t>(row) * static_cast<std::size_t>(cw),
                  in->data[p] + static_cast<std::ptrdiff_t>(row) * in->linesize[p], static_cast<std::size_t>(cw));
    }
  }
  return f;
}

}  // namespace

bool have_libav() { return loaded().error.empty(); }
std::string libav_missing_reason() { return loaded().error; }

std::string libav_versions() {
  if (!have_libav()) return "not loaded: " + libav_missing_reason();
  const auto v = [](unsigned x) { return fmt::format("{}.{}.{}", x >> 16, (x >> 8) & 0xff, x & 0xff); };
  return fmt::format("libavcodec {}, libavformat {}, libavutil {}", v(av().avcodec_version()), v(av().avformat_version()), v(av().avutil_version()));
}

// ---- encoder ------------------------------------------------------------------------------------

struct Encoder::Impl {
  AVCodecContext* ctx = nullptr;
  AVBufferRef* device = nullptr;
  AVBufferRef* frames_ctx = nullptr;
  AVPacket* packet = nullptr;
  std::vector<AVFrame*> frames;
  std::int64_t pts = 0;
  Config c;

  ~Impl() {
    for (AVFrame* f : frames) av().av_frame_free(&f);
    av().av_packet_free(&packet);
    av().avcodec_free_context(&ctx);
    av().av_buffer_unref(&frames_ctx);
    av().av_buffer_unref(&device);
  }

  // Receives every packet ready; its bytes.
  std::int64_t drain(Stream* keep) {
    std::int64_t bytes = 0;
    for (;;) {
      const int rc = av().avcodec_receive_packet(ctx, packet);
      if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return bytes;
      if (rc < 0) fail(fmt::format("{}: receiving a packet", ctx->codec->name), rc);
      bytes += packet->size;
      if (keep != nullptr) keep->packets.emplace_back(packet->data, packet->data + packet->size);
      av().av_packet_unref(packet);
    }
  }
};

Encoder::Encoder(const Config& c) : impl_(std::make_unique<Impl>()) {
  install_log();
  Impl& m = *impl_;
  m.c = c;
  const std::string name = encoder_name(c);
  const AVCodec* codec = av().avcodec_find_encoder_by_name(name.c_str());
  if (codec == nullptr) throw CaseSkipped(fmt::format("this libavcodec ({}) has no {} encoder", libav_versions(), name));
  m.ctx = av().avcodec_alloc_context3(codec);
  m.packet = av().av_packet_alloc();
  if (m.ctx == nullptr || m.packet == nullptr) throw std::bad_alloc();
  m.ctx->width = c.w;
  m.ctx->height = c.h;
  m.ctx->time_base = AVRational{1, 30};
  m.ctx->framerate = AVRational{30, 1};
  m.ctx->thread_count = c.threads;
  if (c.gpu) {
    m.device = cuda_device(c.ordinal);
    m.frames_ctx = av().av_hwframe_ctx_alloc(m.device);
    if (m.frames_ctx == nullptr) throw std::bad_alloc();
    auto* fc = reinterpret_cast<AVHWFramesContext*>(m.frames_ctx->data);
    fc->format = AV_PIX_FMT_CUDA;
    fc->sw_format = AV_PIX_FMT_YUV420P;
    fc->width = c.w;
    fc->height = c.h;
    if (const int rc = av().av_hwframe_ctx_init(m.frames_ctx); rc < 0) fail("CUDA frames for NVENC", rc);
    m.ctx->pix_fmt = AV_PIX_FMT_CUDA;
    m.ctx->hw_frames_ctx = av().av_buffer_ref(m.frames_ctx);
    set_option(m.ctx, "preset", c.preset, true);
    set_option(m.ctx, "rc", "constqp", true);
    set_option(m.ctx, "qp", std::to_string(c.qp), true);
  } else {
    // SVT-AV1 logs its configuration to stderr at its own level (not av_log's): errors only,
    // unless the user set SVT_LOG.
    if (c.codec == Codec::Av1) ::setenv("SVT_LOG", "1", 0);
    m.ctx->pix_fmt = AV_PIX_FMT_YUV420P;
    set_option(m.ctx, "preset", c.preset, true);
    set_option(m.ctx, "qp", std::to_string(c.qp), true);
    if (c.codec == Codec::Hevc) set_option(m.ctx, "x265-params", "log-level=error", true);  // x265 prints its own banner
    if (c.codec == Codec::Av1) set_option(m.ctx, "rc", "0", false);  // SVT-AV1's constant QP, where the wrapper has the option
  }
  if (const int rc = av().avcodec_open2(m.ctx, codec, nullptr); rc < 0) fail(fmt::format("opening {}", name), rc);
}

Encoder::~Encoder() = default;

void Encoder::upload(const std::vector<Frame>& frames) {
  Impl& m = *impl_;
  for (const Frame& f : frames) {
    AVFrame* host = av().av_frame_alloc();
    if (host == nullptr) throw std::bad_alloc();
    host->format = AV_PIX_FMT_YUV420P;
    host->width = f.w;
    host->height = f.h;
    if (const int rc = av().av_frame_get_buffer(host, 0); rc < 0) fail("a frame buffer", rc);
    copy_in(f, host);
    if (!m.c.gpu) {
      m.frames.push_back(host);
      continue;
    }
    AVFrame* dev = av().av_frame_alloc();
    if (dev == nullptr) throw std::bad_alloc();
    if (const int rc = av().av_hwframe_get_buffer(m.frames_ctx, dev, 0); rc < 0) fail("a CUDA frame", rc);
    const int rc = av().av_hwframe_transfer_data(dev, host, 0);
    av().av_frame_free(&host);
    if (rc < 0) fail("uploading a frame to the GPU", rc);
    m.frames.push_back(dev);
  }
}

std::int64_t Encoder::encode(Stream* keep) {
  Impl& m = *impl_;
  std::int64_t bytes = 0;
  for (AVFrame* f : m.frames) {
    f->pts = m.pts++;
    for (;;) {
      const int rc = av().avcodec_send_frame(m.ctx, f);
      if (rc == AVERROR(EAGAIN)) {
        bytes += m.drain(keep);  // its output is full: take it, then send again
        continue;
      }
      if (rc < 0) fail(fmt::format("{}: sending a frame", m.ctx->codec->name), rc);
      break;
    }
    bytes += m.drain(keep);
  }
  return bytes;
}

std::int64_t Encoder::finish(Stream* keep) {
  Impl& m = *impl_;
  if (const int rc = av().avcodec_send_frame(m.ctx, nullptr); rc < 0 && rc != AVERROR_EOF) fail("draining the encoder", rc);
  const std::int64_t bytes = m.drain(keep);
  if (keep != nullptr && m.ctx->extradata_size > 0) keep->extradata.assign(m.ctx->extradata, m.ctx->extradata + m.ctx->extradata_size);
  return bytes;
}

// ---- decoder ------------------------------------------------------------------------------------

struct Decoder::Impl {
  AVCodecContext* ctx = nullptr;
  AVBufferRef* device = nullptr;
  AVFrame* frame = nullptr;
  AVFrame* host = nullptr;  // an NVDEC frame copied down
  std::vector<AVPacket*> packets;

  ~Impl() {
    for (AVPacket* p : packets) av().av_packet_free(&p);
    av().av_frame_free(&host);
    av().av_frame_free(&frame);
    av().avcodec_free_context(&ctx);
    av().av_buffer_unref(&device);
  }

  std::int64_t drain(std::vector<Frame>* keep) {
    std::int64_t n = 0;
    for (;;) {
      const int rc = av().avcodec_receive_frame(ctx, frame);
      if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return n;
      if (rc < 0) fail(fmt::format("{}: receiving a frame", ctx->codec->name), rc);
      ++n;
      if (keep != nullptr) {
        if (frame->format == AV_PIX_FMT_CUDA) {
          av().av_frame_unref(host);
          if (const int t = av().av_hwframe_transfer_data(host, frame, 0); t < 0) fail("copying a decoded frame from the GPU", t);
          host->width = frame->width;
          host->height = frame->height;
          keep->push_back(copy_out(host));
        } else {
          keep->push_back(copy_out(frame));
        }
      }
      av().av_frame_unref(frame);
    }
  }
};

Decoder::Decoder(const Config& c, const Stream& s) : impl_(std::make_unique<Impl>()) {
  install_log();
  Impl& m = *impl_;
  const std::string name = decoder_name(c);
  const AVCodec* codec = av().avcodec_find_decoder_by_name(name.c_str());
  if (codec == nullptr) throw CaseSkipped(fmt::format("this libavcodec ({}) has no {} decoder", libav_versions(), name));
  m.ctx = av().avcodec_alloc_context3(codec);
  m.frame = av().av_frame_alloc();
  m.host = av().av_frame_alloc();
  if (m.ctx == nullptr || m.frame == nullptr || m.host == nullptr) throw std::bad_alloc();
  m.ctx->thread_count = c.threads;
  if (!s.extradata.empty()) {
    m.ctx->extradata = static_cast<std::uint8_t*>(av().av_mallocz(s.extradata.size() + AV_INPUT_BUFFER_PADDING_SIZE));
    if (m.ctx->extradata == nullptr) throw std::bad_alloc();
    std::memcpy(m.ctx->extradata, s.extradata.data(), s.extradata.size());
    m.ctx->extradata_size = static_cast<int>(s.extradata.size());
  }
  if (c.gpu) {
    // Frames stay in device memory (AV_PIX_FMT_CUDA): only a kept frame is copied down.
    m.device = cuda_device(c.ordinal);
    m.ctx->hw_device_ctx = av().av_buffer_ref(m.device);  // with it, the cuvid decoder's default format is AV_PIX_FMT_CUDA
  }
  if (const int rc = av().avcodec_open2(m.ctx, codec, nullptr); rc < 0) fail(fmt::format("opening {}", name), rc);
  for (const auto& bytes : s.packets) {
    AVPacket* p = av().av_packet_alloc();
    if (p == nullptr || av().av_new_packet(p, static_cast<int>(bytes.size())) < 0) throw std::bad_alloc();
    std::memcpy(p->data, bytes.data(), bytes.size());
    m.packets.push_back(p);
  }
}

Decoder::~Decoder() = default;

std::int64_t Decoder::decode(std::vector<Frame>* keep) {
  Impl& m = *impl_;
  std::int64_t n = 0;
  for (AVPacket* p : m.packets) {
    for (;;) {
      const int rc = av().avcodec_send_packet(m.ctx, p);
      if (rc == AVERROR(EAGAIN)) {
        n += m.drain(keep);
        continue;
      }
      if (rc < 0) fail(fmt::format("{}: sending a packet", m.ctx->codec->name), rc);
      break;
    }
    n += m.drain(keep);
  }
  return n;
}

std::int64_t Decoder::finish(std::vector<Frame>* keep) {
  Impl& m = *impl_;
  if (const int rc = av().avcodec_send_packet(m.ctx, nullptr); rc < 0 && rc != AVERROR_EOF) fail("draining the decoder", rc);
  return m.drain(keep);
}

// ---- a user's file --------------------------------------------------------------------------------

std::vector<Frame> read_video_file(const std::string& path, int max_frames) {
  install_log();
  const auto refuse = [&](const std::string& why) { return UsageError(fmt::format("input={}: {}", path, why)); };
  AVFormatContext* fmt_ctx = nullptr;
  if (const int rc = av().avformat_open_input(&fmt_ctx, path.c_str(), nullptr, nullptr); rc < 0) {
    char buf[AV_ERROR_MAX_STRING_SIZE] = {};
    av().av_strerror(rc, buf, sizeof buf);
    last_log.clear();
    throw refuse(fmt::format("not a file libavformat can read ({})", buf));
  }
  struct Close {
    AVFormatContext** f;
    AVCodecContext* c = nullptr;
    AVPacket* p = nullptr;
    AVFrame* fr = nullptr;
    ~Close() {
      av().av_frame_free(&fr);
      av().av_packet_free(&p);
      av().avcodec_free_context(&c);
      av().avformat_close_input(f);
    }
  } guard{&fmt_ctx};
  if (av().avformat_find_stream_info(fmt_ctx, nullptr) < 0) throw refuse("libavformat found no stream information in it");
  const AVCodec* codec = nullptr;
  const int index = av().av_find_best_stream(fmt_ctx, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  if (index < 0 || codec == nullptr) throw refuse("no video stream libavcodec can decode");
  guard.c = av().avcodec_alloc_context3(codec);
  guard.p = av().av_packet_alloc();
  guard.fr = av().av_frame_alloc();
  if (guard.c == nullptr || guard.p == nullptr || guard.fr == nullptr) throw std::bad_alloc();
  av().avcodec_parameters_to_context(guard.c, fmt_ctx->streams[index]->codecpar);
  if (av().avcodec_open2(guard.c, codec, nullptr) < 0) throw refuse(fmt::format("its {} stream cannot be decoded", codec->name));
  std::vector<Frame> frames;
  const auto take = [&]() {
    while (static_cast<int>(frames.size()) < max_frames && av().avcodec_receive_frame(guard.c, guard.fr) == 0) {
      if (guard.fr->format != AV_PIX_FMT_YUV420P && guard.fr->format != AV_PIX_FMT_YUVJ420P) {
        const char* n = av().av_get_pix_fmt_name(static_cast<AVPixelFormat>(guard.fr->format));
        throw refuse(fmt::format("pixel format {}: the suite encodes 8-bit 4:2:0 (yuv420p)", n ? n : "?"));
      }
      if (guard.fr->width % 2 != 0 || guard.fr->height % 2 != 0 || guard.fr->width < 16 || guard.fr->height < 16) {
        throw refuse(fmt::format("{}x{}: the suite needs even sizes of at least 16", guard.fr->width, guard.fr->height));
      }
      frames.push_back(copy_out(guard.fr));
      av().av_frame_unref(guard.fr);
    }
  };
  while (static_cast<int>(frames.size()) < max_frames && av().av_read_frame(fmt_ctx, guard.p) >= 0) {
    if (guard.p->stream_index == index) av().avcodec_send_packet(guard.c, guard.p);
    av().av_packet_unref(guard.p);
    take();
  }
  av().avcodec_send_packet(guard.c, nullptr);
  take();
  last_log.clear();
  if (frames.empty()) throw refuse("its video stream decoded to no frame");
  return frames;
}

#else  // without libavcodec: the suite is not applicable (video_suite.cpp); nothing here runs

bool have_libav() { return false; }
std::string libav_missing_reason() {
  return "this gpubench was built without libavcodec's headers (install libavcodec-dev and libavformat-dev and rebuild)";
}
std::string libav_versions() { return "not built in"; }
struct Encoder::Impl {};
Encoder::Encoder(const Config&) { throw CaseSkipped(libav_missing_reason()); }
Encoder::~Encoder() = default;
void Encoder::upload(const std::vector<Frame>&) {}
std::int64_t Encoder::encode(Stream*) { return 0; }
std::int64_t Encoder::finish(Stream*) { return 0; }
struct Decoder::Impl {};
Decoder::Decoder(const Config&, const Stream&) { throw CaseSkipped(libav_missing_reason()); }
Decoder::~Decoder() = default;
std::int64_t Decoder::decode(std::vector<Frame>*) { return 0; }
std::int64_t Decoder::finish(std::vector<Frame>*) { return 0; }
std::vector<Frame> read_video_file(const std::string& path, int) {
  throw UsageError(fmt::format("input={}: {}", path, libav_missing_reason()));
}

#endif

}  // namespace gpubench::suites::video
