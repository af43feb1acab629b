#include "bench/suites/dataload/jpeg.hpp"

#include <turbojpeg.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <stdexcept>

namespace gpubench::suites::dataload {

JpegDecoder::JpegDecoder() : handle_(tjInitDecompress()) {
  if (handle_ == nullptr) throw std::runtime_error(std::string("tjInitDecompress: ") + tjGetErrorStr());
}
JpegDecoder::~JpegDecoder() { tjDestroy(handle_); }

bool JpegDecoder::header(const void* data, std::size_t size, int& width, int& height, std::string* error) {
  int subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(handle_, static_cast<const unsigned char*>(data), static_cast<unsigned long>(size), &width,
                          &height, &subsamp, &colorspace) == 0) {
    return true;
  }
  if (error) *error = tjGetErrorStr2(handle_);
  reset();
  return false;
}

// After a failed call libjpeg-turbo 2.1's handle can be left inconsistent (a later
// tjDecompress2 on it aborted in free() here after a truncated file): start a fresh one.
void JpegDecoder::reset() {
  tjDestroy(handle_);
  handle_ = tjInitDecompress();
  if (handle_ == nullptr) throw std::runtime_error(std::string("tjInitDecompress: ") + tjGetErrorStr());
}

bool JpegDecoder::decode(const void* data, std::size_t size, int scale, DecodedImage& out, std::string* error) {
  int width = 0, height = 0;
  if (!header(data, size, width, height, error)) return false;
  out.width = scaled_size(width, scale);
  out.height = scaled_size(height, scale);
  const std::size_t bytes = static_cast<std::size_t>(out.width) * static_cast<std::size_t>(out.height) * 3;
  if (out.pixels.size() < bytes) out.pixels.resize(bytes);
  return decode_to(data, size, out.width, out.height, out.pixels.data(), error);
}

bool JpegDecoder::decode_to(const void* data, std::size_t size, int width, int height, std::uint8_t* out,
                            std::string* error, bool fast) {
  // TJFLAG_STOPONWARNING: a truncated file ("premature end of data") is an error, not a grey tail.
  const int flags = TJFLAG_STOPONWARNING | (fast ? TJFLAG_FASTDCT | TJFLAG_FASTUPSAMPLE : 0);
  if (tjDecompress2(handle_, static_cast<const unsigned char*>(data), static_cast<unsigned long>(size), out, width, 0,
                    height, TJPF_RGB, flags) != 0) {
    if (error) *error = tjGetErrorStr2(handle_);
    reset();
    return false;
  }
  return true;
}

PixelDifference pixel_difference(const std::uint8_t* a, const std::uint8_t* b, std::size_t values) {
  PixelDifference d;
  d.values = values;
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < values; ++i) {
    const int diff = std::abs(static_cast<int>(a[i]) - static_cast<int>(b[i]));
    sum += static_cast<std::uint64_t>(diff);
    d.max_abs = std::max(d.max_abs, diff);
  }
  d.mean_abs = values > 0 ? static_cast<double>(sum) / static_cast<double>(values) : 0;
  return d;
}

DecodeTolerance calibrate_decode_tolerance(const std::vector<std::string>& jpegs) {
  DecodeTolerance t;
  JpegDecoder decoder;
  std::vector<std::uint8_t> accurate, fast;
  for (const std::string& j : jpegs) {
    int width = 0, height = 0;
    std::string error;
    if (!decoder.header(j.data(), j.size(), width, height, &error)) throw std::runtime_error("calibration: " + error);
    const std::size_t values = static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3;
    accurate.resize(values);
    fast.resize(values);
    if (!decoder.decode_to(j.data(), j.size(), width, height, accurate.data(), &error) ||
        !decoder.decode_to(j.data(), j.size(), width, height, fast.data(), &error, true)) {
      throw std::runtime_error("calibration: " + error);
    }
    const PixelDifference d = pixel_difference(accurate.data(), fast.data(), values);
    t.max_abs = std::max(t.max_abs, d.max_abs);
    t.mean_abs = std::max(t.mean_abs, d.mean_abs);
    ++t.images;
  }
  return t;
}

JpegEncoder::JpegEncoder() : handle_(tjInitCompress()) {
  if (handle_ == nullptr) throw std::runtime_error(std::string("tjInitCompress: ") + tjGetErrorStr());
}
JpegEncoder::~JpegEncoder() { tjDestroy(handle_); }

std::string JpegEncoder::encode(const std::uint8_t* rgb, int width, int height, int quality) {
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  if (tjCompress2(handle_, rgb, width, 0, height, TJPF_RGB, &buffer, &size, TJSAMP_420, quality, 0) != 0) {
    tjFree(buffer);
    throw std::runtime_error(std::string("tjCompress2: ") + tjGetErrorStr2(handle_));
  }
  std::string out(reinterpret_cast<const char*>(buffer), size);
  tjFree(buffer);
  return out;
}

}  // namespace gpubench::suites::dataload
