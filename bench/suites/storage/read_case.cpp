// The storage suite's case: `jobs` readers on a pool of threads, each with `qd` reads in flight;
// one run is `ops` reads per job, all completed within the run. The latency of every read is kept
// (the warm-up's dropped) for the percentiles.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "bench/core/case.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/stats.hpp"
#include "bench/suites/dataload/io.hpp"
#include "bench/suites/storage/storage.hpp"
#include "kernels/memory/host_pool.hpp"

namespace gpubench::suites::storage {
namespace {

// At most this many latencies kept per job (64 MiB of floats over 4 jobs): older runs go first.
constexpr std::size_t kMaxLatencies = std::size_t{1} << 22;

class ReadCase final : public HostCase {
 public:
  explicit ReadCase(const Config& c) : c_(c) {
    // A run: 32 x the queue (io_uring's queue stays full between runs, so a run is many
    // latencies long and the qd reads it inherits are a small share of its count), and at least
    // 8 MiB per job, so it is long against the pool's hand-off (~10 us).
    ops_ = std::max<std::int64_t>(32 * c_.qd, (std::int64_t{8} << 20) / c_.block);
  }

  void setup() override {
    file_ = file_for(c_.size);
    if (c_.io == Io::Buffered) resident_ = dataload::resident_fraction(file_.path);
    pool_ = std::make_unique<kernels::HostPool>(c_.jobs);
    readers_.resize(static_cast<std::size_t>(c_.jobs));
    latencies_.resize(static_cast<std::size_t>(c_.jobs));
    // Each reader is made on the thread that runs it (pool thread t runs job t every time): an
    // io_uring ring has one submitting task.
    pool_->run([&](int t) { readers_[static_cast<std::size_t>(t)] = make_reader(c_, file_.path, t); });
  }

  // Every job's reads of its first 2 x qd (at least 16) completions are checked: against the
  // generated content, or for GPUBENCH_STORAGE_FILE against a plain buffered pread of the same
  // bytes (the engine must return what the file holds).
  Verification verify() override {
    const std::int64_t n = std::max<std::int64_t>(16, 2 * c_.qd);
    std::mutex mutex;
    std::string first_bad;
    std::int64_t checked = 0;
    pool_->run([&](int t) {
      std::optional<dataload::RangeFile> plain;  // the given file through the page cache, opened once
      dataload::ReadBuffer plain_buffer;
      std::int64_t mine = 0;
      std::string bad;
      const CheckRead check = [&](std::uint64_t off, const std::uint8_t* data, std::size_t size) {
        ++mine;
        if (!bad.empty()) return;
        if (file_.generated) {
          if (auto at = first_wrong_byte(off, data, size)) bad = fmt::format("byte {} of the read at {} differs from the file's content", off + static_cast<std::uint64_t>(*at), off);
          return;
        }
        if (!plain) plain.emplace(file_.path, dataload::IoMode::Cached);
        const dataload::ReadResult r = plain->read(off, size, plain_buffer);
        if (!r.ok) {
          bad = fmt::format("a plain pread of {} bytes at {} failed", size, off);
        } else if (std::memcmp(r.data, data, size) != 0) {
          bad = fmt::format("the read at {} differs from a plain pread of the same bytes", off);
        }
      };
      std::vector<float> ignored;
      readers_[static_cast<std::size_t>(t)]->complete(n, ignored, &check);
      const std::lock_guard<std::mutex> lock(mutex);
      checked += mine;
      if (first_bad.empty()) first_bad = bad;
    });
    Verification v;
    v.passed = first_bad.empty();
    v.checked = checked;
    v.max_error = v.passed ? 0 : 1;
    v.method = file_.generated ? fmt::format("{} reads of {} bytes compared with the generated file's content", checked, c_.block)
                               : fmt::format("{} reads of {} bytes compared with plain buffered preads of the same bytes", checked, c_.block);
    v.detail = first_bad;
    return v;
  }

  void run() override {
    pool_->run([&](int t) {
      std::vector<float>& lat = latencies_[static_cast<std::size_t>(t)];
      if (lat.size() + static_cast<std::size_t>(ops_) > kMaxLatencies) {
        // Drop the older half, in whole runs, so the kept ones are the latest runs.
        const std::size_t runs = lat.size() / static_cast<std::size_t>(ops_);
        lat.erase(lat.begin(), lat.begin() + static_cast<std::ptrdiff_t>(runs / 2 * static_cast<std::size_t>(ops_)));
      }
      readers_[static_cast<std::size_t>(t)]->complete(ops_, lat, nullptr);
    });
  }

  Metrics metrics() const override {
    Metrics m;
    m.items = static_cast<double>(ops_) * c_.jobs;
    m.items_unit = "ios";
    m.bytes = m.items * static_cast<double>(c_.block);
    return m;
  }

  nlohmann::ordered_json details(std::int64_t measured_runs) override {
    // The latencies of the timed runs: the last measured_runs x ops of every job's.
    std::vector<double> all;
    for (const std::vector<float>& lat : latencies_) {
      const std::size_t keep = std::min(lat.size(), static_cast<std::size_t>(std::max<std::int64_t>(measured_runs, 0) * ops_));
      for (std::size_t i = lat.size() - keep; i < lat.size(); ++i) all.push_back(lat[i]);
    }
    std::sort(all.begin(), all.end());
    nlohmann::ordered_json lat = nlohmann::ordered_json::object();
    if (!all.empty()) {
      double sum = 0;
      for (double x : all) sum += x;
      lat_ = Latency{sum / static_cast<double>(all.size()) * 1e6, percentile_of_sorted(all, 50) * 1e6, percentile_of_sorted(all, 90) * 1e6,
                     percentile_of_sorted(all, 99) * 1e6, percentile_of_sorted(all, 99.9) * 1e6, all.back() * 1e6, all.size()};
      lat = {{"reads", lat_->reads}, {"mean", lat_->mean}, {"p50", lat_->p50}, {"p90", lat_->p90},
             {"p99", lat_->p99},     {"p99.9", lat_->p999}, {"max", lat_->max}};
    }
    nlohmann::ordered_json j{
        {"file", {{"path", file_.path.string()}, {"bytes", file_.bytes}, {"read_bytes", c_.size}, {"origin", file_.origin},
                  {"filesystem", file_.filesystem}}},
        {"cache", cache_note()},
        {"engine", c_.engine == Engine::Uring ? "io_uring (liburing): qd reads in flight per job, each replacement submitted as its completion is reaped (as fio)"
                                              : "pread: one read at a time per job"},
        {"reads_per_run_per_job", ops_},
        {"latency_us", lat},
        {"latency_method", "from the read's submission to its reaped completion (fio's lat), every timed read of every job"},
    };
    if (resident_) j["resident_before"] = *resident_;
    return j;
  }

  void annotate(nlohmann::ordered_json& g, double seconds_per_run) const override {
    nlohmann::ordered_json& m = g["metrics"];
    if (seconds_per_run > 0) m["iops"] = static_cast<double>(ops_) * c_.jobs / seconds_per_run;
    if (lat_) {
      m["latency_us_p50"] = lat_->p50;
      m["latency_us_p99"] = lat_->p99;
      m["latency_us_p999"] = lat_->p999;
    }
  }

 private:
  struct Latency {
    double mean, p50, p90, p99, p999, max;
    std::size_t reads;
  };

  std::string cache_note() const {
    if (c_.io == Io::Direct) return "bypassed: O_DIRECT reads the device, never the page cache";
    if (!resident_) return "buffered: the page cache's share of the file is unknown (mincore failed)";
    return fmt::format("buffered: {:.0f}% of the file was in the page cache before the first read{}", *resident_ * 100,
                       file_.generated ? " (dropped after writing; later runs read what earlier ones cached unless the file "
                                         "is larger than memory)"
                                       : "");
  }

  Config c_;
  std::int64_t ops_ = 0;
  FileInfo file_;
  std::optional<double> resident_;
  std::unique_ptr<kernels::HostPool> pool_;
  std::vector<std::unique_ptr<Reader>> readers_;
  std::vector<std::vector<float>> latencies_;
  std::optional<Latency> lat_;
};

}  // namespace

std::unique_ptr<Case> make_read_case(const Config& c) { return std::make_unique<ReadCase>(c); }

}  // namespace gpubench::suites::storage
