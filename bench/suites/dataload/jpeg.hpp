#pragma once
// libjpeg-turbo through its TurboJPEG API (the 2.x calls, which 3.x still provides): one handle
// per thread, reused across images, as tjbench and real loaders do.
#include <cstdint>
#include <string>
#include <vector>

namespace gpubench::suites::dataload {

struct DecodedImage {
  std::vector<std::uint8_t> pixels;  // interleaved RGB, capacity kept across images
  int width = 0, height = 0;
};

class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;
  // Decodes to RGB at 1/scale of the full size (scale 1, 2, 4 or 8: libjpeg-turbo's DCT
  // scaling, which skips the work for the discarded frequencies). False for a corrupt or
  // truncated file (libjpeg's warnings count as errors): `error` says why.
  bool decode(const void* data, std::size_t size, int scale, DecodedImage& out, std::string* error = nullptr);
  // The same into caller memory: `width` x `height` is the size at 1/scale (scaled_size() of
  // the header's), and `out` holds width x height x 3 bytes.
  // `fast`: libjpeg-turbo's fast integer IDCT and plain (not "fancy") chroma upsampling, the two
  // shortcuts a decoder may take (TJFLAG_FASTDCT | TJFLAG_FASTUPSAMPLE); else its accurate ones.
  bool decode_to(const void* data, std::size_t size, int width, int height, std::uint8_t* out,
                 std::string* error = nullptr, bool fast = false);
  // Reads only the header: full-size width and height (false, `error` set, when unreadable).
  bool header(const void* data, std::size_t size, int& width, int& height, std::string* error = nullptr);

 private:
  void reset();
  void* handle_;
};

class JpegEncoder {
 public:
  JpegEncoder();
  ~JpegEncoder();
  JpegEncoder(const JpegEncoder&) = delete;
  JpegEncoder& operator=(const JpegEncoder&) = delete;
  // Baseline JPEG, 4:2:0 chroma subsampling (what most ImageNet photos use), given quality.
  std::string encode(const std::uint8_t* rgb, int width, int height, int quality);

 private:
  void* handle_;
};

// How far one decoder's pixels are from another's (interleaved RGB of the same size).
struct PixelDifference {
  int max_abs = 0;        // the largest |a - b| of any channel of any pixel
  double mean_abs = 0;    // the mean |a - b| over every channel
  std::size_t values = 0;
};
PixelDifference pixel_difference(const std::uint8_t* a, const std::uint8_t* b, std::size_t values);

// The tolerance a decoder other than libjpeg-turbo's accurate one (nvJPEG's CUDA or hardware
// decoder) is held to on these images: the difference libjpeg-turbo's own fast IDCT and fast
// upsampling make from its accurate decode, over every image, at full size. Both are correct
// decodes of the JPEG (the standard leaves the IDCT's rounding and the upsampling filter to the
// decoder), so a decoder within this distance decoded the same image; a wrong image (a swapped
// channel, a wrong offset, a stale buffer) is tens to hundreds of levels away. Throws
// std::runtime_error for an image libjpeg-turbo cannot decode.
struct DecodeTolerance {
  int max_abs = 0;        // the largest difference over the images
  double mean_abs = 0;    // the largest per-image mean difference
  std::size_t images = 0;
};
DecodeTolerance calibrate_decode_tolerance(const std::vector<std::string>& jpegs);

// The scaled size libjpeg-turbo decodes to at 1/scale: ceil(size / scale).
inline int scaled_size(int size, int scale) { return (size + scale - 1) / scale; }

}  // namespace gpubench::suites::dataload
