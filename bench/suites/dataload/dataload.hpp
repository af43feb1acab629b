#pragma once
// The `dataload` suite: every stage of an image-training input pipeline measured alone, and the
// whole pipeline against a consumer of a chosen step time, with data-stall accounting.
// Files: dataset (layout, shard index, token shards), datagen (synthetic dataset), jpeg
// (libjpeg-turbo), io (storage reads), queue + pipeline + stall (end to end), stages (CPU
// cases), gpu (CUDA cases and consumer), dataload_suite (axes, presets), summary.
//
// Where the data comes from: GPUBENCH_DATASET=DIR (a `gpubench datagen` folder, or any folder
// of JPEG files); without it the suite generates a small dataset (kDefaultCount images) into a
// temporary folder once per process and removes it at exit.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/core/suite.hpp"
#include "bench/suites/dataload/dataset.hpp"
#include "bench/suites/dataload/io.hpp"
#include "bench/suites/dataload/jpeg.hpp"
#include "kernels/dataload/augment.hpp"

namespace gpubench::suites::dataload {

inline constexpr const char* kDatasetEnv = "GPUBENCH_DATASET";
inline constexpr std::int64_t kDefaultCount = 64;
inline constexpr std::size_t kMemorySamples = 256;  // encoded samples kept in memory for decode stages
inline constexpr std::uint64_t kAugmentSeed = 7;

enum class Stage { Read, Decode, Augment, DecodeAugment, Collate, H2D, Pipeline };
enum class Io { Memory, Cached, Cold, Direct };

struct StageInfo {
  Stage stage;
  std::string name, help;
};
const std::vector<StageInfo>& stages();
std::optional<Stage> parse_stage(const std::string& name);
std::optional<Io> parse_io(const std::string& name);
IoMode to_io_mode(Io io);

// One point of the suite's axes, decoded.
struct Config {
  Stage stage = Stage::Decode;
  int workers = 1;
  bool random_order = false;
  Io io = Io::Memory;
  bool shard = false;
  int scale = 1;
  kernels::dataload::OutType dtype = kernels::dataload::OutType::F32;
  int batch = 32;
  int prefetch = 0;
  bool pinned = false;
  bool gpu_augment = false;
  std::int64_t step_us = 0;
  int train_grid = 0;  // consumer=train-*: pooled grid of the mlp's inputs (0: consumer=spin)
  bool gpu_decode = false;  // decode=gpu: nvJPEG (stage decode)
  int hw_load = 0;          // decode=gpu: percent of each batch to the hardware decoder
  std::size_t sample_bytes() const { return kernels::dataload::out_bytes(dtype); }
};
Config to_config(const Point& point);

// The dataset the suite reads, opened (and generated, without GPUBENCH_DATASET) once per
// process, with the in-memory subset the decode-side stages use.
struct Source {
  Dataset dataset;
  std::string origin;                 // "GPUBENCH_DATASET=DIR" or "generated in DIR"
  std::vector<std::string> encoded;   // up to kMemorySamples decodable JPEGs
  std::int64_t scanned = 0, corrupt = 0;  // of the files scanned for `encoded`
  std::vector<std::string> corrupt_examples;  // "path: reason", first few
  double mean_file_bytes = 0;         // over every file of the dataset
  double mean_shard_bytes = 0;        // over the shard's entries
  std::int64_t short_shard_entries = 0;
};
const Source& source();
// Checks GPUBENCH_DATASET when set (UsageError naming the path); cheap, for planning.
void check_dataset_env();
// The fields every case of the suite reports about its data.
nlohmann::ordered_json source_json(const Source& s);

struct HostBatch;
class BatchMemory;
class Consumer;

// Empties `b` to receive a DecodedBatch of `count` images.
void start_decoded_batch(HostBatch& b, int count);

// Case factories.
std::unique_ptr<Case> make_host_stage(const Config& c);  // read, decode, augment, decode_augment, collate
std::unique_ptr<Case> make_pipeline_case(const DeviceInfo& device, const Config& c);
std::unique_ptr<Case> make_gpu_case(const DeviceInfo& device, const Config& c);  // augment, h2d on CUDA
// decode=gpu: nvJPEG's batched decode (nvjpeg.cpp; nvjpeg_none.cpp in a build without
// nvjpeg.h or CUDA), and why this build cannot run it (planning: nullopt when it can try).
std::unique_ptr<Case> make_nvjpeg_case(const DeviceInfo& device, const Config& c);
std::optional<std::string> nvjpeg_unavailable();
// What the pipeline's GPU consumer does with each batch.
struct GpuConsumerSpec {
  double seconds = 0;   // consumer=spin: the calibrated kernel's time per batch
  int train_grid = 0;   // consumer=train-*: the mlp's pooled grid (train_consumer_model); 0: none
  bool pinned = false;  // batches in page-locked memory (for the description)
  bool augment = false; // batches hold decoded images (DecodedBatch) to augment first (aug=gpu)
  kernels::dataload::OutType type = kernels::dataload::OutType::F32;  // the batch tensors' type
  int batch = 0;
};
std::unique_ptr<Consumer> make_gpu_consumer(const DeviceInfo& device, const GpuConsumerSpec& spec);
std::unique_ptr<BatchMemory> pinned_memory();

// The pipeline's producer work for one sample, shared by the stages and the pipeline: decode
// `bytes` at 1/scale and augment into `out` (false when the JPEG is corrupt or truncated).
struct SampleWorker {
  bool decode_augment(const std::uint8_t* bytes, std::size_t size, int scale, std::uint64_t sample,
                      kernels::dataload::OutType type, void* out);
  // With augmentation on the GPU: decode into batch `b` as its next image (a DecodedBatch of
  // `count` images; start a batch with start_decoded_batch), with the crop for `sample`.
  // When the pixels do not fit, `b` moves to a larger buffer from `memory` (the images already
  // in it copied). False, the batch's images and table unchanged, when the JPEG is corrupt or
  // truncated.
  bool decode_into(const std::uint8_t* bytes, std::size_t size, int scale, std::uint64_t sample, int count,
                   HostBatch& b, BatchMemory& memory);
  JpegDecoder decoder;
  DecodedImage image;
  std::string error;  // of the last failed decode
};

// The verification of sampled augmented values (kernels::dataload::check_augmented).
inline Verification augment_verification(std::string method, const kernels::dataload::AugmentCheck& check) {
  Verification v;
  v.method = std::move(method);
  v.checked = check.checked;
  v.max_error = check.max_error;
  v.passed = check.passed();
  v.detail = check.first_mismatch;
  return v;
}

std::unique_ptr<Suite> make_suite();

// The suite summary over its entries (docs/results-format.md, `summaries.dataload`).
nlohmann::ordered_json summarize(const std::vector<nlohmann::ordered_json>& entries);

}  // namespace gpubench::suites::dataload
