// The pixel check's tolerance for a decoder other than libjpeg-turbo's accurate one (nvJPEG's,
// issue 44): calibrated as the distance between libjpeg-turbo's accurate and fast decodes of the
// same JPEGs (bench/suites/dataload/jpeg.hpp). Both are right; a wrong image is far beyond it.
#include <gtest/gtest.h>

#include <algorithm>

#include "bench/suites/dataload/datagen.hpp"
#include "bench/suites/dataload/jpeg.hpp"

namespace gpubench::suites::dataload {
namespace {

std::vector<std::string> jpegs(int count, int quality) {
  GenerateOptions o;
  JpegEncoder encoder;
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    int w = 0, h = 0;
    image_size(o, static_cast<std::uint64_t>(i), w, h);
    out.push_back(encoder.encode(synth_image(o.seed, static_cast<std::uint64_t>(i), w, h).data(), w, h, quality));
  }
  return out;
}

std::vector<std::uint8_t> decode(const std::string& j, bool fast) {
  JpegDecoder d;
  int w = 0, h = 0;
  EXPECT_TRUE(d.header(j.data(), j.size(), w, h));
  std::vector<std::uint8_t> px(static_cast<std::size_t>(w) * h * 3);
  EXPECT_TRUE(d.decode_to(j.data(), j.size(), w, h, px.data(), nullptr, fast));
  return px;
}

TEST(DecodeTolerance, PixelDifferenceByHand) {
  const std::uint8_t a[] = {0, 10, 200, 255}, b[] = {3, 10, 190, 250};
  const PixelDifference d = pixel_difference(a, b, 4);
  EXPECT_EQ(d.max_abs, 10);
  EXPECT_DOUBLE_EQ(d.mean_abs, (3 + 0 + 10 + 5) / 4.0);
}

TEST(DecodeTolerance, FastAndAccurateDecodesDifferByLittleAWrongImageByMuch) {
  for (int quality : {75, 90}) {
    const std::vector<std::string> js = jpegs(6, quality);
    const DecodeTolerance t = calibrate_decode_tolerance(js);
    EXPECT_EQ(t.images, js.size());
    // The fast path is a different decode (not bit-identical), but close.
    EXPECT_GT(t.max_abs, 0) << quality;
    EXPECT_LT(t.max_abs, 64) << quality;
    EXPECT_GT(t.mean_abs, 0);
    EXPECT_LT(t.mean_abs, 2.0) << quality;
    std::printf("quality %d: fast vs accurate decode, max |diff| %d, largest per-image mean %.3f over %zu images\n", quality,
                t.max_abs, t.mean_abs, t.images);
    // An image decoded twice the same way is identical.
    const std::vector<std::uint8_t> a = decode(js[0], false), b = decode(js[0], false);
    EXPECT_EQ(pixel_difference(a.data(), b.data(), a.size()).max_abs, 0);
    // A wrong image: the red and blue channels swapped, a mean difference well beyond the tolerance.
    std::vector<std::uint8_t> swapped = a;
    for (std::size_t i = 0; i + 2 < swapped.size(); i += 3) std::swap(swapped[i], swapped[i + 2]);
    const PixelDifference wrong = pixel_difference(a.data(), swapped.data(), a.size());
    std::printf("quality %d: red and blue swapped: max |diff| %d, mean %.3f\n", quality, wrong.max_abs, wrong.mean_abs);
    EXPECT_GT(wrong.mean_abs, 4 * t.mean_abs);
    EXPECT_GT(wrong.max_abs, t.max_abs);
  }
}

}  // namespace
}  // namespace gpubench::suites::dataload
