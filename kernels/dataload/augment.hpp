#pragma once
// Training-time image augmentation as torchvision's ImageNet recipe does it: random-resized
// crop, horizontal flip, resize to a square output, normalize per channel, planar (NCHW).
// Shared by the CPU implementation, the plain reference and the CUDA kernel.
//
// Math, per output pixel (oy, ox) of an S x S output and channel c, from an H x W x 3 uint8
// image (interleaved RGB) and a crop (x, y, w, h, flip):
//   ox' = flip ? S - 1 - ox : ox
//   sx  = clamp((ox' + 0.5) * w / S - 0.5, 0, w - 1) + x      (pixel centres aligned,
//   sy  = clamp((oy  + 0.5) * h / S - 0.5, 0, h - 1) + y       align_corners = false)
//   v   = bilinear interpolation of channel c at (sy, sx) between the 4 nearest pixels
//   out[c][oy][ox] = (v / 255 - mean[c]) / std[c]
// with ImageNet's mean (0.485, 0.456, 0.406) and std (0.229, 0.224, 0.225) (torchvision's
// ImageNet normalization). No antialiasing filter (as OpenCV's INTER_LINEAR).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpubench::kernels::dataload {

inline constexpr int kAugmentSize = 224;  // output side, ResNet/ViT training resolution
inline constexpr float kMean[3] = {0.485f, 0.456f, 0.406f};
inline constexpr float kStd[3] = {0.229f, 0.224f, 0.225f};

enum class OutType { F32, F16 };

struct Crop {
  int x = 0, y = 0, w = 1, h = 1;
  int flip = 0;
};

// torchvision's RandomResizedCrop parameters (scale in [0.08, 1], aspect ratio log-uniform in
// [3/4, 4/3], 10 attempts, then a centre crop clamped to that ratio) and a flip with
// probability 1/2, drawn from the counter-based generator for (seed, sample): the same crop on
// every device and in every run. Computed on the host (also for the GPU kernel).
Crop random_crop(std::uint64_t seed, std::uint64_t sample, int width, int height);

// One decoded image: interleaved RGB rows of `width * 3` bytes.
struct ImageView {
  const std::uint8_t* pixels = nullptr;
  int width = 0, height = 0;
};

// The fast CPU implementation: writes 3 x S x S values (float or IEEE half bits) to `out`.
void augment_host(const ImageView& image, const Crop& crop, OutType type, void* out, int size = kAugmentSize);

// The plain reference: the formula above in double precision, one output value.
double augment_reference(const ImageView& image, const Crop& crop, int channel, int oy, int ox,
                         int size = kAugmentSize);

// Tolerance of a stored value against the reference: float rounding of the interpolation, and
// half precision's relative step (2^-11) on values up to about 2.7; the GPU interpolates in
// float where the reference uses double (a coordinate off by 1e-5 moves a value by ~1e-4).
inline double augment_tolerance(OutType type) { return type == OutType::F32 ? 1e-3 : 5e-3; }

inline std::size_t out_bytes(OutType type, int size = kAugmentSize) {
  return std::size_t{3} * static_cast<std::size_t>(size) * static_cast<std::size_t>(size) * (type == OutType::F32 ? 4 : 2);
}

// Compares `points` values of one augmented sample (3 x size x size values of `type` at `out`),
// at positions drawn from `sample`, with augment_reference; adds to `check`. The first value
// off by more than augment_tolerance(type) is described in `first_mismatch`.
struct AugmentCheck {
  std::int64_t checked = 0;
  double max_error = 0;  // in units of the tolerance: <= 1 passes
  std::string first_mismatch;
  bool passed() const { return first_mismatch.empty(); }
};
void check_augmented(const ImageView& image, const Crop& crop, OutType type, const void* out, int points,
                     std::uint64_t sample, AugmentCheck& check, int size = kAugmentSize);

// Features for the pipeline's train consumer: each sample's 3 x size x size tensor mean-pooled
// over (size / grid)^2 blocks, out[n][c][gy][gx] = mean of channel c's block (gy, gx): 3 x grid
// x grid floats per sample (grid divides size). Values in float, whatever `type` holds.
void pool_features_host(const void* tensors, OutType type, int count, int grid, float* out, int size = kAugmentSize);
inline int pooled_features(int grid) { return 3 * grid * grid; }

// ---- a batch of decoded images (augmentation on the GPU) -------------------------------------
// When the GPU augments (the pipeline's aug=gpu), the workers only decode. One buffer holds the
// batch: a table of `count` entries (byte offset of each image in the pixel area, decoded
// width and height, crop) and then the images' interleaved RGB pixels back to back, so one
// host-to-device copy moves all of it and the kernel finds the table where the copy put it.
// The images' sizes are known only once decoded, so the pixel area's length varies by batch.
struct DecodedBatchLayout {
  std::size_t offsets = 0, widths = 0, heights = 0, crops = 0, pixels = 0;  // byte offsets in the buffer
};
inline DecodedBatchLayout decoded_batch_layout(int count) {
  const std::size_t n = static_cast<std::size_t>(count);
  DecodedBatchLayout l;
  l.offsets = 0;
  l.widths = l.offsets + n * sizeof(std::uint64_t);
  l.heights = l.widths + n * sizeof(int);
  l.crops = l.heights + n * sizeof(int);
  l.pixels = (l.crops + n * sizeof(Crop) + 255) / 256 * 256;
  return l;
}

// The table and pixel area of a decoded batch at `base` (host or device memory: only pointer
// arithmetic here).
struct DecodedBatch {
  std::uint64_t* offsets = nullptr;  // of image i's first byte, from `pixels`
  int* widths = nullptr;
  int* heights = nullptr;
  Crop* crops = nullptr;
  std::uint8_t* pixels = nullptr;
};
inline DecodedBatch decoded_batch(void* base, int count) {
  auto* b = static_cast<std::uint8_t*>(base);
  const DecodedBatchLayout l = decoded_batch_layout(count);
  return {reinterpret_cast<std::uint64_t*>(b + l.offsets), reinterpret_cast<int*>(b + l.widths),
          reinterpret_cast<int*>(b + l.heights), reinterpret_cast<Crop*>(b + l.crops), b + l.pixels};
}

// What a consumer reads of a batch to prove it got the right one: the sum (mod 2^64) of every
// kChecksumStride-th 32-bit word. Exact integer arithmetic, so host and device agree.
inline constexpr std::int64_t kChecksumStride = 1024;
inline unsigned long long batch_checksum(const void* data, std::int64_t words) {
  const auto* w = static_cast<const std::uint32_t*>(data);
  unsigned long long sum = 0;
  for (std::int64_t i = 0; i < words; i += kChecksumStride) sum += w[i];
  return sum;
}

}  // namespace gpubench::kernels::dataload
