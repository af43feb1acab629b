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
  bool decode_to(const void* data, std::size_t size, int width, int height, std::uint8_t* out,
                 std::string* error = nullptr);
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

// The scaled size libjpeg-turbo decodes to at 1/scale: ceil(size / scale).
inline int scaled_size(int size, int scale) { return (size + scale - 1) / scale; }

}  // namespace gpubench::suites::dataload
