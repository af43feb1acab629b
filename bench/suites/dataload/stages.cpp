// The CPU stages, each measured alone over `batch` samples per run on `workers` threads:
// read (storage), decode (libjpeg-turbo), augment (crop, flip, resize, normalize into the batch
// tensor), decode_augment (both, per sample, as a loader worker does), collate (per-sample
// tensors stacked into one batch).
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <cstring>

#include "bench/core/case.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/dataload/dataload.hpp"
#include "kernels/common/random.hpp"
#include "kernels/memory/host_pool.hpp"

namespace gpubench::suites::dataload {
namespace {

namespace kd = kernels::dataload;

// A fixed random permutation of [0, n) (Fisher-Yates over the counter-based generator).
std::vector<std::size_t> permutation(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = i;
  for (std::size_t i = n; i > 1; --i) std::swap(p[i - 1], p[kernels::mix64(seed + i) % i]);
  return p;
}

class StageCase : public HostCase {
 public:
  explicit StageCase(const Config& c) : c_(c) {}

  void setup() override {
    src_ = &source();
    pool_ = std::make_unique<kernels::HostPool>(c_.workers);
    prepare();
  }

  Metrics metrics() const override {
    Metrics m;
    m.bytes = bytes_per_run();
    m.items = static_cast<double>(c_.batch);
    m.items_unit = "samples";
    return m;
  }

  nlohmann::ordered_json details(std::int64_t) override {
    nlohmann::ordered_json j{{"dataset", source_json(*src_)}};
    extra_details(j);
    return j;
  }

 protected:
  // Runs body(slot, worker) for slots 0..batch-1 over the workers, each taking the next slot
  // when it is free (images differ in size, and a preempted thread must not hold up a fixed
  // share of the batch).
  template <typename Body>
  void over_batch(Body body) {
    const std::size_t n = static_cast<std::size_t>(c_.batch);
    std::atomic<std::size_t> next{0};
    pool_->run([&](int t) {
      for (std::size_t s = next++; s < n; s = next++) body(s, t);
    });
  }
  virtual void prepare() = 0;
  virtual double bytes_per_run() const { return 0; }
  virtual void extra_details(nlohmann::ordered_json&) {}

  Config c_;
  const Source* src_ = nullptr;
  std::unique_ptr<kernels::HostPool> pool_;
  std::uint64_t cursor_ = 0;  // samples handed out so far
};

// ---- read ---------------------------------------------------------------------------------

class ReadCase final : public StageCase {
 public:
  using StageCase::StageCase;

  void prepare() override {
    const Dataset& d = src_->dataset;
    if (c_.shard && !d.has_shard) {
      throw CaseSkipped(fmt::format("dataset {} has no shard (images.shard + images.idx; `gpubench datagen` writes one)",
                                    d.dir.string()));
    }
    n_ = c_.shard ? d.index.entries.size() : d.files.size();
    order_ = c_.random_order ? permutation(n_, 99) : std::vector<std::size_t>();
    buffers_.resize(static_cast<std::size_t>(c_.workers));
    const IoMode mode = to_io_mode(c_.io);
    if (c_.shard) {
      for (int t = 0; t < c_.workers; ++t) shards_.push_back(std::make_unique<RangeFile>(d.shard_data, mode));
    }
    const std::vector<fs::path> paths = c_.shard ? std::vector<fs::path>{d.shard_data} : d.files;
    if (c_.io == Io::Cached) {
      for (const fs::path& p : paths) (void)read_file(p);  // into the page cache
    } else if (c_.io == Io::Cold) {
      for (const fs::path& p : paths) {
        if (auto why = evict(p); why && cold_note_.empty()) cold_note_ = *why;
      }
      // Did it work? The first file's resident share right after eviction.
      if (auto r = resident_fraction(paths.front())) {
        resident_after_evict_ = *r;
        if (*r > 0.5 && cold_note_.empty()) {
          cold_note_ = fmt::format("posix_fadvise(DONTNEED) left {:.0f}% of {} in the page cache: reads are not cold",
                                   *r * 100, paths.front().string());
        }
      }
    } else if (c_.io == Io::Direct) {
      ReadBuffer probe;
      if (c_.shard) (void)shards_.front()->read(kShardHeaderBytes, 1, probe);
      else (void)read_whole_file(paths.front(), IoMode::Direct, probe);  // throws CaseSkipped where refused
    }
  }

  Verification verify() override {
    // One batch, compared byte for byte with a plain buffered read (or the index's checksum).
    Verification v;
    v.method = c_.shard ? "every entry of one batch against the index checksum" : "one batch against a plain read";
    v.passed = true;
    const std::uint64_t base = cursor_;
    std::vector<std::string> got(static_cast<std::size_t>(c_.batch));
    read_batch([&](std::size_t slot, const ReadResult& r) {
      if (r.ok) got[slot].assign(reinterpret_cast<const char*>(r.data), r.size);
    });
    for (std::size_t s = 0; s < got.size(); ++s) {
      const std::size_t i = sample(base + s);
      bool same;
      if (c_.shard) {
        const ShardEntry& e = src_->dataset.index.entries[i];
        if (got[s].size() != e.length) continue;  // a short entry: counted, not a wrong answer
        same = checksum32(got[s].data(), got[s].size()) == e.checksum;
      } else {
        same = got[s] == read_file(src_->dataset.files[i]);
      }
      ++v.checked;
      if (!same && v.passed) {
        v.passed = false;
        v.detail = fmt::format("sample {} read back different bytes", i);
      }
    }
    return v;
  }

  void run() override {
    read_batch([](std::size_t, const ReadResult&) {});
  }

  double bytes_per_run() const override {
    // The dataset's mean sample size times the batch: exact over whole epochs.
    return c_.batch * (c_.shard ? src_->mean_shard_bytes : src_->mean_file_bytes);
  }

  void extra_details(nlohmann::ordered_json& j) override {
    j["short_reads"] = short_.load();
    if (c_.io == Io::Cold) {
      j["cold_cache"] = {{"method", "posix_fadvise(POSIX_FADV_DONTNEED) after every read"},
                         {"effective", cold_note_.empty()}};
      if (resident_after_evict_) j["cold_cache"]["resident_after_evict"] = *resident_after_evict_;
      if (!cold_note_.empty()) j["cold_cache"]["note"] = cold_note_;
    }
  }

 private:
  std::size_t sample(std::uint64_t k) const {
    const std::size_t i = static_cast<std::size_t>(k % n_);
    return order_.empty() ? i : order_[i];
  }

  template <typename Sink>
  void read_batch(Sink sink) {
    const std::uint64_t base = cursor_;
    cursor_ += static_cast<std::uint64_t>(c_.batch);
    const IoMode mode = to_io_mode(c_.io);
    over_batch([&](std::size_t slot, int t) {
      const std::size_t i = sample(base + slot);
      ReadBuffer& buf = buffers_[static_cast<std::size_t>(t)];
      ReadResult r;
      if (c_.shard) {
        const ShardEntry& e = src_->dataset.index.entries[i];
        r = shards_[static_cast<std::size_t>(t)]->read(e.offset, e.length, buf);
      } else {
        r = read_whole_file(src_->dataset.files[i], mode, buf);
      }
      if (!r.ok) ++short_;
      sink(slot, r);
    });
  }

  std::size_t n_ = 0;
  std::vector<std::size_t> order_;
  std::vector<ReadBuffer> buffers_;
  std::vector<std::unique_ptr<RangeFile>> shards_;
  std::atomic<std::int64_t> short_{0};
  std::string cold_note_;
  std::optional<double> resident_after_evict_;
};

// ---- decode, augment, decode_augment --------------------------------------------------------

class DecodeCase final : public StageCase {
 public:
  using StageCase::StageCase;

  void prepare() override {
    workers_.resize(static_cast<std::size_t>(c_.workers));
    for (auto& w : workers_) w = std::make_unique<SampleWorker>();
    sizes_.assign(static_cast<std::size_t>(c_.batch), {0, 0});
    if (c_.stage != Stage::Decode) out_.resize(static_cast<std::size_t>(c_.batch) * c_.sample_bytes());
    if (c_.stage == Stage::Augment) {
      // Decoded once here: the augment stage alone starts from pixels.
      for (std::size_t i = 0; i < std::min<std::size_t>(src_->encoded.size(), 64); ++i) {
        DecodedImage img;
        SampleWorker& w = *workers_.front();
        if (!w.decoder.decode(src_->encoded[i].data(), src_->encoded[i].size(), c_.scale, img, &w.error)) continue;
        decoded_.push_back(std::move(img));
      }
    }
  }

  Verification verify() override {
    Verification v;
    v.passed = true;
    const std::uint64_t base = cursor_;
    run();
    if (c_.stage == Stage::Decode) {
      // Every decoded size against the JPEG header's at this scale; the pixels themselves are
      // libjpeg-turbo's (the reference decoder).
      v.method = "decoded size of every image of a batch against its JPEG header at 1/scale";
      for (std::size_t slot = 0; slot < sizes_.size(); ++slot) {
        const std::string& bytes = encoded(base + slot);
        int w = 0, h = 0;
        workers_.front()->decoder.header(bytes.data(), bytes.size(), w, h);
        ++v.checked;
        if (sizes_[slot].first != scaled_size(w, c_.scale) || sizes_[slot].second != scaled_size(h, c_.scale)) {
          v.passed = false;
          v.detail = fmt::format("sample {} decoded {}x{}, header says {}x{} at 1/{}", slot, sizes_[slot].first,
                                 sizes_[slot].second, w, h, c_.scale);
          break;
        }
      }
      return v;
    }
    // Augmented samples: sampled outputs of the first and last slot against the reference.
    JpegDecoder decoder;
    kd::AugmentCheck check;
    for (std::size_t slot : {std::size_t{0}, static_cast<std::size_t>(c_.batch - 1)}) {
      DecodedImage img;
      const kd::ImageView view = input(base + slot, decoder, img);
      const kd::Crop crop = kd::random_crop(kAugmentSeed, base + slot, view.width, view.height);
      kd::check_augmented(view, crop, c_.dtype, out_.data() + slot * c_.sample_bytes(), 512, slot, check);
    }
    return augment_verification("sampled output values of two samples against the double-precision reference", check);
  }

  void run() override {
    const std::uint64_t base = cursor_;
    cursor_ += static_cast<std::uint64_t>(c_.batch);
    over_batch([&](std::size_t slot, int t) {
      SampleWorker& w = *workers_[static_cast<std::size_t>(t)];
      const std::uint64_t k = base + slot;
      void* out = out_.empty() ? nullptr : out_.data() + slot * c_.sample_bytes();
      if (c_.stage == Stage::Augment) {
        const DecodedImage& img = decoded_[k % decoded_.size()];
        const kd::Crop crop = kd::random_crop(kAugmentSeed, k, img.width, img.height);
        kd::augment_host({img.pixels.data(), img.width, img.height}, crop, c_.dtype, out);
        return;
      }
      const std::string& bytes = encoded(k);
      const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
      const bool ok = c_.stage == Stage::Decode ? w.decoder.decode(p, bytes.size(), c_.scale, w.image, &w.error)
                                                : w.decode_augment(p, bytes.size(), c_.scale, k, c_.dtype, out);
      sizes_[slot] = {w.image.width, w.image.height};
      if (!ok) ++failed_;  // the scan left only decodable samples in memory: should not happen
    });
  }

  void extra_details(nlohmann::ordered_json& j) override { j["decode_failures"] = failed_.load(); }

 private:
  const std::string& encoded(std::uint64_t k) const { return src_->encoded[k % src_->encoded.size()]; }

  // The pixels sample k was augmented from.
  kd::ImageView input(std::uint64_t k, JpegDecoder& decoder, DecodedImage& img) const {
    if (c_.stage == Stage::Augment) {
      const DecodedImage& d = decoded_[k % decoded_.size()];
      return {d.pixels.data(), d.width, d.height};
    }
    const std::string& bytes = encoded(k);
    decoder.decode(bytes.data(), bytes.size(), c_.scale, img);
    return {img.pixels.data(), img.width, img.height};
  }

  std::vector<std::unique_ptr<SampleWorker>> workers_;
  std::vector<DecodedImage> decoded_;
  std::vector<std::uint8_t> out_;
  std::vector<std::pair<int, int>> sizes_;  // decoded width, height per slot of the last batch
  std::atomic<std::int64_t> failed_{0};
};

// ---- collate --------------------------------------------------------------------------------

class CollateCase final : public StageCase {
 public:
  using StageCase::StageCase;

  void prepare() override {
    const std::size_t bytes = c_.sample_bytes();
    samples_.resize(static_cast<std::size_t>(c_.batch));
    for (std::size_t s = 0; s < samples_.size(); ++s) {
      samples_[s].resize(bytes);
      for (std::size_t i = 0; i < bytes; ++i) samples_[s][i] = static_cast<std::uint8_t>(kernels::mix64(s * bytes + i));
    }
    batch_.resize(bytes * samples_.size());
  }

  Verification verify() override {
    run();
    Verification v;
    v.method = "every sample's bytes in its place in the batch";
    v.passed = true;
    for (std::size_t s = 0; s < samples_.size(); ++s) {
      ++v.checked;
      if (std::memcmp(batch_.data() + s * samples_[s].size(), samples_[s].data(), samples_[s].size()) != 0) {
        v.passed = false;
        v.detail = fmt::format("sample {} differs in the batch", s);
        break;
      }
    }
    return v;
  }

  void run() override {
    over_batch([&](std::size_t slot, int) {
      std::memcpy(batch_.data() + slot * samples_[slot].size(), samples_[slot].data(), samples_[slot].size());
    });
  }

  double bytes_per_run() const override { return 2.0 * c_.batch * static_cast<double>(c_.sample_bytes()); }

 private:
  std::vector<std::vector<std::uint8_t>> samples_;
  std::vector<std::uint8_t> batch_;
};

}  // namespace

std::unique_ptr<Case> make_host_stage(const Config& c) {
  switch (c.stage) {
    case Stage::Read: return std::make_unique<ReadCase>(c);
    case Stage::Decode:
    case Stage::Augment:
    case Stage::DecodeAugment: return std::make_unique<DecodeCase>(c);
    case Stage::Collate: return std::make_unique<CollateCase>(c);
    default: throw std::logic_error("dataload: not a host stage");
  }
}

}  // namespace gpubench::suites::dataload
