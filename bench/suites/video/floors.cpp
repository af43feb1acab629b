// The PSNR floors an encode is held to (video.hpp): per codec, a floor at each calibrated QP,
// linear between them. Calibrated on the CPU codecs over the synthetic content (docs/suite-video.md
// "PSNR floors"; unit tests VideoFloors and VideoCodec): each floor is the lowest PSNR any preset
// gave at that QP, at 720p and 1080p, less a margin of 1.5 dB for other presets, sizes and
// encoders (NVENC at the same QP); a broken encode (a wrong plane, a stale frame, a dropped
// frame) is tens of dB below.
#include <algorithm>
#include <array>
#include <utility>

#include "bench/suites/video/video.hpp"

namespace gpubench::suites::video {
namespace {

using Table = std::array<std::pair<int, double>, 7>;  // (qp, floor dB), qp ascending

// The lowest PSNR of every preset calibrated at each QP (docs/suite-video.md, 2026-12-07), less
// 1.5 dB, rounded down to 0.5 dB. At QP 0 x264 is lossless (100 dB) and x265 near it, where
// NVENC's constant QP 0 is not: the QP 0 floor is QP 10's.
constexpr Table kH264 = {{{0, 49.0}, {10, 49.0}, {18, 42.5}, {23, 39.0}, {35, 36.5}, {45, 29.5}, {51, 26.5}}};
constexpr Table kHevc = {{{0, 48.5}, {10, 48.5}, {18, 42.5}, {23, 40.0}, {35, 39.0}, {45, 36.0}, {51, 32.5}}};
// SVT-AV1's qp is its base layer's: its hierarchical layers add their own offsets, so the PSNR
// moves little with it on this content (QP 0 is not a constant QP there: refused).
constexpr Table kAv1 = {{{0, 40.0}, {10, 40.0}, {23, 39.0}, {35, 39.0}, {45, 38.5}, {55, 37.5}, {63, 35.5}}};

constexpr double kUncalibratedMarginDb = 8.0;

double interpolate(const Table& t, int qp) {
  if (qp <= t.front().first) return t.front().second;
  for (std::size_t i = 1; i < t.size(); ++i) {
    if (qp <= t[i].first) {
      const auto [q0, f0] = t[i - 1];
      const auto [q1, f1] = t[i];
      return f0 + (f1 - f0) * (qp - q0) / static_cast<double>(q1 - q0);
    }
  }
  return t.back().second;
}

}  // namespace

double psnr_floor_db(Codec codec, int qp, bool calibrated_source) {
  const double f = interpolate(codec == Codec::H264 ? kH264 : codec == Codec::Hevc ? kHevc : kAv1, qp);
  // Other content (a user's file) or a frame smaller than those calibrated: PSNR at a QP depends
  // on the content (the synthetic clip at 160x96 came out 3-5 dB under the 720p floors at QP 51),
  // so the floor drops by 8 dB, never under 20 dB: still well above a broken encode (another
  // clip's frames against these: 14 dB; swapped or stale planes lower).
  return calibrated_source ? f : std::max(20.0, f - kUncalibratedMarginDb);
}

}  // namespace gpubench::suites::video
