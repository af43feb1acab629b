#pragma once
// CUDA side of the data-loading suite: the augmentation of augment.hpp over a batch of decoded
// images, and the calibrated consumer kernel that stands in for a training step.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/dataload/augment.hpp"

namespace gpubench::kernels::dataload {

// A batch of decoded images packed back to back in device memory, and their crops.
struct DeviceBatch {
  const std::uint8_t* pixels = nullptr;     // all images, interleaved RGB
  const std::uint64_t* offsets = nullptr;   // byte offset of image i in `pixels`
  const int* widths = nullptr;
  const int* heights = nullptr;
  const Crop* crops = nullptr;
  int count = 0;
};

// The DeviceBatch of a DecodedBatch (augment.hpp) copied whole to device memory at `base`.
inline DeviceBatch device_batch(const void* base, int count) {
  const DecodedBatch t = decoded_batch(const_cast<void*>(base), count);  // pointer arithmetic only
  return {t.pixels, t.offsets, t.widths, t.heights, t.crops, count};
}

// Writes count x 3 x size x size values (float or half) to `out`, NCHW; the formula is the one
// in augment.hpp, evaluated in float with one thread per output pixel (3 channels).
cudaError_t launch_augment(const DeviceBatch& batch, OutType type, void* out, int size, cudaStream_t stream);

// pool_features_host (augment.hpp) on the device: one thread per output feature.
cudaError_t launch_pool_features(const void* tensors, OutType type, int count, int grid, float* out, int size,
                                 cudaStream_t stream);

// The consumer: sums every kChecksumStride-th 32-bit word of the batch's `words` words
// (batch_checksum in augment.hpp; written to *checksum, so the kernel depends on the data and
// the suite checks it got the right batch), then spins until `cycles` SM clock cycles have
// passed since it started (clock64()). One block of 256 threads; cycles = seconds x SM clock
// measured by the suite with CUDA events.
cudaError_t launch_consumer(const void* data, std::int64_t words, std::int64_t cycles,
                            unsigned long long* checksum, cudaStream_t stream);

}  // namespace gpubench::kernels::dataload
