// Where the suite's data comes from (GPUBENCH_DATASET or a generated temporary dataset), the
// in-memory subset, and the one-time scan that finds corrupt files.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>

#include "bench/core/errors.hpp"
#include "bench/core/interrupt.hpp"
#include "bench/core/paths.hpp"
#include "bench/suites/dataload/datagen.hpp"
#include "bench/suites/dataload/dataload.hpp"
#include "bench/suites/dataload/pipeline.hpp"

namespace gpubench::suites::dataload {
namespace {

// Removes a generated dataset when the process ends.
struct TempDir {
  fs::path path;
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
    if (!path.empty()) remove_interrupt_cleanup_folder(path.string());
  }
};

Source load() {
  Source s;
  const char* env = std::getenv(kDatasetEnv);
  static TempDir temp;
  if (env != nullptr && *env != '\0') {
    s.dataset = open_dataset(env);
    s.origin = fmt::format("{}={}", kDatasetEnv, env);
    if (!s.dataset.warning.empty()) fmt::print(stderr, "gpubench: warning: {}\n", s.dataset.warning);
  } else {
    // The datasets of runs that were killed (SIGKILL, a lost node) go first; this one goes at
    // the end, or with the interruption handler's cleanup on a signal.
    remove_stale_leftovers(temp_folder(), "gpubench-dataload-");
    temp.path = temp_folder() / fmt::format("gpubench-dataload-{}", ::getpid());
    add_interrupt_cleanup_folder(temp.path.string());
    GenerateOptions o;
    o.dir = temp.path;
    o.count = kDefaultCount;
    o.tokens = 0;
    (void)generate_dataset(o);
    s.dataset = open_dataset(temp.path);
    s.origin = fmt::format("generated in {} ({} images, seed {}; set {} to use another)", temp.path.string(),
                           kDefaultCount, o.seed, kDatasetEnv);
  }
  const std::vector<fs::path>& files = s.dataset.files;
  double total = 0;
  for (const fs::path& f : files) {
    std::error_code ec;
    total += static_cast<double>(fs::file_size(f, ec));
  }
  s.mean_file_bytes = total / static_cast<double>(files.size());
  if (s.dataset.has_shard) {
    double bytes = 0;
    for (const ShardEntry& e : s.dataset.index.entries) bytes += e.length;
    s.mean_shard_bytes = s.dataset.index.entries.empty() ? 0 : bytes / static_cast<double>(s.dataset.index.entries.size());
    std::error_code ec;
    s.short_shard_entries = short_entries(s.dataset.index, fs::file_size(s.dataset.shard_data, ec));
  }
  // The in-memory subset: evenly spaced files, each decoded once; corrupt ones are counted and
  // left out.
  const std::size_t step = std::max<std::size_t>(1, files.size() / kMemorySamples);
  JpegDecoder decoder;
  DecodedImage image;
  for (std::size_t i = 0; i < files.size() && s.encoded.size() < kMemorySamples; i += step) {
    std::string bytes = read_file(files[i]);
    std::string why;
    ++s.scanned;
    if (decoder.decode(bytes.data(), bytes.size(), 8, image, &why)) {
      s.encoded.push_back(std::move(bytes));
    } else {
      ++s.corrupt;
      if (s.corrupt_examples.size() < 5) s.corrupt_examples.push_back(fmt::format("{}: {}", files[i].string(), why));
    }
  }
  if (s.encoded.empty()) {
    throw std::runtime_error(fmt::format("dataset {}: none of the {} JPEG files scanned decodes", s.dataset.dir.string(),
                                         s.scanned));
  }
  return s;
}

}  // namespace

namespace {

// A folder whose JPEG files cannot be decoded would fail every case: the first few files (at
// 1/8 scale: cheap) must include one that decodes, or the run is refused naming the first.
void refuse_unreadable_images(const Dataset& d) {
  constexpr std::size_t kSampled = 8;
  constexpr std::uintmax_t kMaxBytes = std::uintmax_t{64} << 20;
  JpegDecoder decoder;
  DecodedImage image;
  std::string first_error;
  for (std::size_t i = 0; i < std::min(kSampled, d.files.size()); ++i) {
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(d.files[i], ec);
    std::string error;
    if (ec) {
      error = ec.message();
    } else if (size > kMaxBytes) {
      error = fmt::format("{} bytes: more than a JPEG sample should be", size);
    } else {
      std::ifstream in(d.files[i], std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (!in.good() && !in.eof()) error = "cannot be read";
      else if (decoder.decode(bytes.data(), bytes.size(), 8, image, &error)) return;
    }
    if (first_error.empty()) first_error = fmt::format("{}: {}", d.files[i].string(), error.empty() ? "corrupt" : error);
  }
  throw UsageError(fmt::format("{}: none of the first {} JPEG files decodes (first: {})", kDatasetEnv,
                               std::min(kSampled, d.files.size()), first_error));
}

}  // namespace

void check_dataset_env() {
  const char* env = std::getenv(kDatasetEnv);
  if (env == nullptr || *env == '\0') return;
  static std::once_flag once;
  std::call_once(once, [env] {
    Dataset d;
    try {
      d = open_dataset(env);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: {}", kDatasetEnv, e.what()));
    }
    refuse_unreadable_images(d);
  });
}

const Source& source() {
  static std::mutex mutex;
  static std::unique_ptr<Source> loaded;
  std::lock_guard lock(mutex);
  if (!loaded) loaded = std::make_unique<Source>(load());
  return *loaded;
}

nlohmann::ordered_json source_json(const Source& s) {
  nlohmann::ordered_json j{{"origin", s.origin},
                           {"files", s.dataset.files.size()},
                           {"mean_file_bytes", s.mean_file_bytes},
                           {"shard", s.dataset.has_shard},
                           {"in_memory_samples", s.encoded.size()},
                           {"scanned", s.scanned},
                           {"corrupt_skipped", s.corrupt}};
  if (!s.corrupt_examples.empty()) j["corrupt_examples"] = s.corrupt_examples;
  if (s.dataset.has_shard) j["short_shard_entries"] = s.short_shard_entries;
  return j;
}

bool SampleWorker::decode_augment(const std::uint8_t* bytes, std::size_t size, int scale, std::uint64_t sample,
                                  kernels::dataload::OutType type, void* out) {
  if (!decoder.decode(bytes, size, scale, image, &error)) return false;
  const kernels::dataload::Crop crop = kernels::dataload::random_crop(kAugmentSeed, sample, image.width, image.height);
  kernels::dataload::augment_host({image.pixels.data(), image.width, image.height}, crop, type, out);
  return true;
}

void start_decoded_batch(HostBatch& b, int count) {
  b.samples = 0;
  b.corrupt = 0;
  b.checksum = 0;
  b.bytes = kernels::dataload::decoded_batch_layout(count).pixels;
}

bool SampleWorker::decode_into(const std::uint8_t* bytes, std::size_t size, int scale, std::uint64_t sample, int count,
                               HostBatch& b, BatchMemory& memory) {
  namespace kd = kernels::dataload;
  if (b.samples >= count) throw std::logic_error("decode_into: the batch is full");
  int width = 0, height = 0;
  if (!decoder.header(bytes, size, width, height, &error)) return false;
  width = scaled_size(width, scale);
  height = scaled_size(height, scale);
  const std::size_t need = b.bytes + static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3;
  if (need > b.capacity) {
    // Grow by half again at least, so a batch of larger images than planned moves a few times,
    // not once per image; the table and the images so far come along.
    const std::size_t capacity = std::max(need, b.capacity + b.capacity / 2);
    void* grown = memory.allocate(capacity);
    std::memcpy(grown, b.data, b.bytes);
    memory.release(b.data);
    b.data = grown;
    b.capacity = capacity;
  }
  const kd::DecodedBatch t = kd::decoded_batch(b.data, count);
  const std::size_t offset = b.bytes - kd::decoded_batch_layout(count).pixels;
  if (!decoder.decode_to(bytes, size, width, height, t.pixels + offset, &error)) return false;
  const int i = b.samples;
  t.offsets[i] = offset;
  t.widths[i] = width;
  t.heights[i] = height;
  t.crops[i] = kd::random_crop(kAugmentSeed, sample, width, height);
  b.bytes = need;
  ++b.samples;
  return true;
}

}  // namespace gpubench::suites::dataload
