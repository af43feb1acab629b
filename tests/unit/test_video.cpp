// The video suite (bench/suites/video): the synthetic source, PSNR by hand, the floors' shape,
// the planning rules on the cpu device and on assumed GPUs (NVENC present or not), and, where
// libavcodec loads, an encode decoded back, a broken stream failing its floor and a user's file.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "bench/core/errors.hpp"
#include "bench/core/plan.hpp"
#include "bench/suites/all_suites.hpp"
#include "bench/suites/video/video.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::suites::video {
namespace {

namespace fs = std::filesystem;

TEST(VideoFrames, SyntheticFramesAreTheSameEverywhereAndMove) {
  const std::vector<Frame> a = synthetic_frames(64, 48, 3), b = synthetic_frames(64, 48, 3);
  ASSERT_EQ(a.size(), 3u);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_FALSE(first_difference(a[i], b[i])) << i;
  EXPECT_EQ(a[0].y.size(), 64u * 48u);
  EXPECT_EQ(a[0].u.size(), 32u * 24u);
  EXPECT_TRUE(first_difference(a[0], a[1]));  // motion: no two frames alike
}

TEST(VideoFrames, PsnrByHand) {
  const Frame a = synthetic_frames(32, 16, 1).front();
  Frame b = a;
  PlaneErrors same;
  same.add(a, b);
  EXPECT_EQ(same.psnr(32, 16).average, 100.0);
  // Every luma sample one level off: MSE 1, PSNR 10 log10(255^2) = 48.13 dB; the average over
  // 4 luma to 1 + 1 chroma samples has MSE 4/6: 49.89 dB.
  for (std::uint8_t& v : b.y) v = v == 255 ? 254 : v + 1;
  PlaneErrors e;
  e.add(a, b);
  const Psnr p = e.psnr(32, 16);
  EXPECT_NEAR(p.y, 48.1308, 1e-3);
  EXPECT_EQ(p.u, 100.0);
  EXPECT_NEAR(p.average, 10 * std::log10(65025.0 / (4.0 / 6.0)), 1e-9);
  EXPECT_NEAR(p.average, 49.8917, 1e-3);
  const auto d = first_difference(a, b);
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("y plane differs at (0, 0)"), std::string::npos) << *d;
}

TEST(VideoFloors, NeverZeroAndNeverRisingWithTheQp) {
  for (Codec c : {Codec::H264, Codec::Hevc, Codec::Av1}) {
    double last = 1e9;
    for (int qp = 0; qp <= (c == Codec::Av1 ? 63 : 51); ++qp) {
      const double f = psnr_floor_db(c, qp);
      EXPECT_GT(f, 15.0) << to_string(c) << " qp " << qp;
      EXPECT_LE(f, last) << to_string(c) << " qp " << qp;
      last = f;
    }
  }
}

// ---- planning ---------------------------------------------------------------------------------

std::vector<PlannedCase> plan(const DeviceInfo& d, std::vector<std::string> axes, const std::string& preset = "quick") {
  PlanRequest r;
  r.suites = {"video"};
  r.preset = preset;
  r.axis_overrides = std::move(axes);
  return make_plan(suites::all(), r, {d});
}

// A GPU of the spec sheet as `--assume` makes it (its engines from data/gpus.json).
DeviceInfo assumed(const std::string& key, int cc_major, int cc_minor) {
  DeviceInfo d;
  d.kind = DeviceKind::Cuda;
  d.ordinal = 0;
  d.cc_major = cc_major;
  d.cc_minor = cc_minor;
  for (const reports::GpuSpec& g : reports::SpecSheet::builtin().gpus()) {
    if (g.key != key) continue;
    d.name = g.name;
    d.nvenc_engines = g.nvenc;
    d.nvdec_engines = g.nvdec;
  }
  EXPECT_FALSE(d.name.empty()) << key;
  return d;
}
DeviceInfo assumed(const std::string& key) {
  if (key == "l40s") return assumed(key, 8, 9);
  if (key == "b200") return assumed(key, 10, 0);
  return key.rfind("a100", 0) == 0 ? assumed(key, 8, 0) : assumed(key, 9, 0);
}

int count(const std::vector<PlannedCase>& p, const std::string& op, bool skipped) {
  int n = 0;
  for (const PlannedCase& c : p) {
    if (c.point.text("op") == op && c.skip_reason.has_value() == skipped) ++n;
  }
  return n;
}

TEST(VideoPlan, QuickOnTheCpuIsTwoH264EncodesAndADecode) {
  if (!have_libav()) GTEST_SKIP() << libav_missing_reason();
  DeviceInfo cpu;
  const auto p = plan(cpu, {});
  EXPECT_EQ(count(p, "encode", false), 2);  // x264 veryfast and medium
  EXPECT_EQ(count(p, "decode", false), 1);  // the preset is the stream's: one decode
  for (const PlannedCase& c : p) EXPECT_EQ(c.point.text("codec"), "h264");
}

TEST(VideoPlan, AGpuWithoutNvencSkipsItsEncodesSayingSo) {
  if (!have_libav()) GTEST_SKIP() << libav_missing_reason();
  for (const char* model : {"h100-sxm", "a100-sxm-80gb", "h200-sxm", "b200"}) {
    const DeviceInfo d = assumed(model);
    ASSERT_EQ(d.nvenc_engines, 0) << model;
    const auto p = plan(d, {});
    EXPECT_EQ(count(p, "encode", false), 0) << model;
    EXPECT_EQ(count(p, "encode", true), 4) << model;
    EXPECT_EQ(count(p, "decode", false), 2) << model;
    for (const PlannedCase& c : p) {
      if (c.point.text("op") == "encode") {
        EXPECT_NE(c.skip_reason->find("no NVENC on " + d.name), std::string::npos) << *c.skip_reason;
      }
    }
  }
  const auto l40s = plan(assumed("l40s"), {});
  EXPECT_EQ(count(l40s, "encode", false), 4);  // h264 and hevc at p1 and p3
  EXPECT_EQ(count(l40s, "decode", false), 2);
}

TEST(VideoPlan, WhatAnEngineCannotDoIsAReason) {
  if (!have_libav()) GTEST_SKIP() << libav_missing_reason();
  // AV1: no av1_nvenc in this libavcodec; no AV1 in Hopper's NVDEC; Ada has both engines.
  const auto l40s = plan(assumed("l40s"), {"codec=av1"});
  for (const PlannedCase& c : l40s) {
    if (c.point.text("op") == "encode") {
      ASSERT_TRUE(c.skip_reason);
      EXPECT_NE(c.skip_reason->find("Video Codec SDK 12"), std::string::npos) << *c.skip_reason;
    } else {
      EXPECT_FALSE(c.skip_reason) << *c.skip_reason;
    }
  }
  for (const PlannedCase& c : plan(assumed("h100-sxm"), {"codec=av1", "op=decode"})) {
    ASSERT_TRUE(c.skip_reason);
    EXPECT_NE(c.skip_reason->find("decodes no AV1"), std::string::npos) << *c.skip_reason;
  }
  // A preset of the other engine, or a QP the codec does not take, given by name.
  DeviceInfo cpu;
  for (const PlannedCase& c : plan(cpu, {"op=encode", "preset=p4"})) {
    ASSERT_TRUE(c.skip_reason);
    EXPECT_NE(c.skip_reason->find("ultrafast .. placebo"), std::string::npos);
  }
  for (const PlannedCase& c : plan(assumed("l40s"), {"op=encode", "preset=medium"})) {
    ASSERT_TRUE(c.skip_reason);
    EXPECT_NE(c.skip_reason->find("NVENC takes p1 .. p7"), std::string::npos);
  }
  for (const PlannedCase& c : plan(cpu, {"op=encode", "qp=60"})) {
    ASSERT_TRUE(c.skip_reason);
    EXPECT_NE(c.skip_reason->find("0-51"), std::string::npos);
  }
  EXPECT_TRUE(plan(cpu, {"op=encode", "codec=av1", "qp=60", "preset=10"}).front().skip_reason == std::nullopt);
}

TEST(VideoPlan, BadInputsAreUsageErrorsNamingThePath) {
  DeviceInfo cpu;
  const fs::path dir = fs::temp_directory_path();
  for (const std::string& path : {std::string("/nonexistent/clip.mp4"), dir.string()}) {
    try {
      (void)plan(cpu, {"input=" + path});
      ADD_FAILURE() << path << " accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)plan(cpu, {"preset=fastest"}), UsageError);
  EXPECT_THROW((void)plan(cpu, {"frames=2000", "res=2160p"}), UsageError);  // 23 GiB of source frames
}

// ---- libavcodec ---------------------------------------------------------------------------------

Config small(Op op, Codec codec, const std::string& preset, int qp) {
  Config c;
  c.op = op;
  c.codec = codec;
  c.w = 160;
  c.h = 96;
  c.preset = preset;
  c.qp = qp;
  c.frames = 8;
  c.threads = 1;
  return c;
}

Psnr encode_and_decode(const Config& c, const std::vector<Frame>& src, Stream& s) {
  s = encode_whole(c, src);
  const std::vector<Frame> out = decode_whole(c, s);
  EXPECT_EQ(out.size(), src.size());
  PlaneErrors e;
  for (std::size_t i = 0; i < out.size() && i < src.size(); ++i) e.add(src[i], out[i]);
  return e.psnr(c.w, c.h);
}

TEST(VideoCodec, EveryCpuCodecMeetsItsFloorAndAWrongClipDoesNot) {
  if (!have_libav()) GTEST_SKIP() << libav_missing_reason();
  // At 720p, the size the floors were calibrated at (6 frames: the first of each clip are the
  // hardest, an intra frame and the look-ahead's first), and at 160x96 against the lower floor of
  // an uncalibrated source.
  for (const auto& [w, h] : {std::pair{1280, 720}, std::pair{160, 96}}) {
    const std::vector<Frame> src = synthetic_frames(w, h, 6);
    for (const auto& [codec, preset] : {std::pair{Codec::H264, "veryfast"}, std::pair{Codec::Hevc, "ultrafast"}, std::pair{Codec::Av1, "12"}}) {
      for (int qp : {23, 51}) {
        Config c = small(Op::Encode, codec, preset, qp);
        c.w = w;
        c.h = h;
        c.threads = 0;
        Stream s;
        const Psnr p = encode_and_decode(c, src, s);
        EXPECT_EQ(calibrated_source(c), w == 1280);
        EXPECT_GE(p.average, psnr_floor_db(codec, qp, calibrated_source(c))) << to_string(codec) << " qp " << qp << " " << w << "x" << h;
        EXPECT_GT(s.bytes(), 0);
      }
    }
  }
  // The same stream held against other frames (a stale or misplaced picture) is far below.
  const Config c = small(Op::Encode, Codec::H264, "veryfast", 23);
  const std::vector<Frame> src = synthetic_frames(160, 96, 8);
  Stream s;
  (void)encode_and_decode(c, src, s);
  const std::vector<Frame> out = decode_whole(c, s);
  const std::vector<Frame> other = synthetic_frames(160, 96, 16);
  PlaneErrors e;
  for (std::size_t i = 0; i < out.size(); ++i) e.add(other[i + 8], out[i]);
  EXPECT_LT(e.psnr(160, 96).average, psnr_floor_db(Codec::H264, 51, false));
}

TEST(VideoCodec, AUsersFileIsReadAndANonVideoFileIsRefusedNamingIt) {
  if (!have_libav()) GTEST_SKIP() << libav_missing_reason();
  const fs::path dir = fs::temp_directory_path() / "gpubench-video-test";
  fs::create_directories(dir);
  const std::vector<Frame> src = synthetic_frames(160, 96, 8);
  Stream s;
  (void)encode_and_decode(small(Op::Encode, Codec::H264, "veryfast", 18), src, s);
  const fs::path clip = dir / "clip.h264";  // an Annex B elementary stream: libavformat's h264 demuxer reads it
  {
    std::ofstream f(clip, std::ios::binary);
    for (const auto& p : s.packets) f.write(reinterpret_cast<const char*>(p.data()), static_cast<std::streamsize>(p.size()));
  }
  const std::vector<Frame> read = read_video_file(clip.string(), 100);
  ASSERT_EQ(read.size(), src.size());
  PlaneErrors e;
  for (std::size_t i = 0; i < read.size(); ++i) e.add(src[i], read[i]);
  EXPECT_GE(e.psnr(160, 96).average, psnr_floor_db(Codec::H264, 18, false));
  EXPECT_EQ(read_video_file(clip.string(), 3).size(), 3u);

  const fs::path text = dir / "notes.txt";
  std::ofstream(text) << "not a video\n";
  try {
    (void)read_video_file(text.string(), 10);
    ADD_FAILURE() << "a text file was read as video";
  } catch (const UsageError& err) {
    EXPECT_NE(std::string(err.what()).find(text.string()), std::string::npos) << err.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpubench::suites::video
