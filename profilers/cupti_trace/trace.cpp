#include "profilers/cupti_trace/trace.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <optional>
#include <string_view>
#include <vector>

#include "bench/core/errors.hpp"
#include "profilers/common/sampler.hpp"
#include "profilers/cupti_trace/analysis.hpp"

namespace gpubench::profilers {
namespace {

class TraceInstrument;

// Times a batch as the time the case's GPUs spent running its kernels (CUPTI's GPU timestamps):
// the union of the kernels' intervals on the case's devices, leaving out launch gaps and host
// time, and counting once an instant when several kernels ran (concurrent streams, or one
// collective's kernel on each of N GPUs). The wrapped timer still waits for the work.
class CuptiTimer final : public Timer {
 public:
  CuptiTimer(std::unique_ptr<Timer> base, TraceInstrument& owner) : base_(std::move(base)), owner_(owner) {}
  void start() override;
  double stop() override;
  const char* kind() const override { return "cupti_kernel"; }

 private:
  std::unique_ptr<Timer> base_;
  TraceInstrument& owner_;
  std::uint64_t t0_ = 0;
};

class TraceInstrument final : public Instrument {
 public:
  TraceInstrument(std::shared_ptr<ActivitySource> source, const TraceOptions& o) : source_(std::move(source)), options_(o) {
    if (const auto why = source_->unavailable()) status_ = *why;
    if (status_ == "on" && !o.trace_path.empty()) {
      file_.emplace(o.trace_path);
      builder_.emplace(static_cast<int>(::getpid()), source_->now_ns());
    }
  }
  std::string name() const override { return "trace"; }
  std::string status() const override { return status_; }

  void begin_case(const CaseInfo& info) override {
    active_ = status_ == "on" && info.device && info.device->is_cuda();
    if (!active_) return;
    case_name_ = info.name;
    tracker_.reset();
    own_.clear();
    names_.clear();
    open_.clear();
    window_ = {};
    verify_ = {};
    device_ = static_cast<std::uint32_t>(info.device->ordinal);
    devices_.reset();
    take_ns_ = 0;
    (void)take();  // whatever ran between cases belongs to none
    batch_ = {};
    take_ns_ = 0;
    open_.push_back({info.name, source_->now_ns()});
  }
  void begin_phase(const char* phase) override {
    if (!active_) return;
    const std::uint64_t now = source_->now_ns();
    if (tracker_.begin(phase)) window_.start = now;
    if (open_.size() == 1 && std::string_view(phase) == "verify") verify_.start = now;
    open_.push_back({phase, now});
  }
  void end_phase() override {
    if (!active_ || open_.size() <= 1) return;
    const std::uint64_t now = source_->now_ns();
    if (open_.size() == 2 && open_.back().name == "verify") verify_.end = now;
    close_range(now);
    if (tracker_.end()) window_.end = now;
  }
  std::unique_ptr<Timer> timer(std::unique_ptr<Timer> base) override {
    if (!active_ || !options_.cupti_timer) return base;
    return std::make_unique<CuptiTimer>(std::move(base), *this);
  }
  void end_case(const CaseOutcome&, nlohmann::ordered_json& profile) override {
    if (!active_) return;
    active_ = false;
    const std::uint64_t now = source_->now_ns();
    while (!open_.empty()) close_range(now);
    batch_.append(take());
    if (window_.end > window_.start) {
      profile = to_json(analyze(batch_, window_, case_devices({})));
      profile["overhead"]["flush_us"] = static_cast<double>(take_ns_) / 1e3;
    }
    if (file_) {
      std::size_t dropped = 0;
      file_->append(builder_->events(batch_, own_, case_name_, options_.max_events_per_case, &dropped));
      if (dropped > 0) profile["trace_events_dropped"] = dropped;
      profile["trace_file"] = file_->path();
    }
    batch_ = {};
  }

  // For the cupti timer.
  std::uint64_t now() { return source_->now_ns(); }
  // Takes the records so far, keeps them for the case, and measures its GPU work (kernels, memcpys,
  // memsets) in [t0, t1).
  double gpu_seconds(std::uint64_t t0, std::uint64_t t1) {
    ActivityBatch b = take();
    const std::uint64_t ns = gpu_time_ns(b, {t0, t1}, case_devices(b.kernels));
    batch_.append(std::move(b));
    if (ns == 0) {
      throw CaseSkipped("the cupti timer saw no kernel, memcpy or memset in a timed batch (this case runs none)");
    }
    return static_cast<double>(ns) * 1e-9;
  }

 private:
  struct Open {
    std::string name;
    std::uint64_t start;
  };
  void close_range(std::uint64_t now) {
    // RangeRecord keeps string_views: the names live in names_ (a deque keeps them in place).
    names_.push_back(open_.back().name);
    own_.push_back({names_.back(), "gpubench", open_.back().start, now, static_cast<std::uint32_t>(::syscall(SYS_gettid))});
    open_.pop_back();
  }
  // The case's devices: its own, and every device its verification run (one run of the work,
  // before any timing) launched kernels on: a single-process collective spans several GPUs.
  // Records of any other device are not the case's. Known once verification has ended and its records were taken (by the first timed batch):
  // the case's records so far are batch_ and `taken`, not yet appended to it.
  const DeviceSet& case_devices(const std::vector<KernelRecord>& taken) {
    if (!devices_) {
      devices_ = DeviceSet{device_};
      if (verify_.end > verify_.start) {
        devices_->merge(kernel_devices(batch_.kernels, verify_));
        devices_->merge(kernel_devices(taken, verify_));
      }
    }
    return *devices_;
  }
  // The host time spent flushing and copying records is the tracing overhead gpubench adds.
  ActivityBatch take() {
    const auto t = std::chrono::steady_clock::now();
    ActivityBatch b = source_->take();
    take_ns_ += static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t).count());
    return b;
  }

  std::shared_ptr<ActivitySource> source_;
  TraceOptions options_;
  std::string status_ = "on";
  bool active_ = false;
  std::string case_name_;
  MeasureTracker tracker_;
  Window window_;
  Window verify_;  // the case's verify phase
  std::uint32_t device_ = 0;
  std::optional<DeviceSet> devices_;
  ActivityBatch batch_;
  std::vector<Open> open_;
  std::vector<RangeRecord> own_;
  std::deque<std::string> names_;
  std::uint64_t take_ns_ = 0;
  std::optional<TraceFile> file_;
  std::optional<TraceBuilder> builder_;
};

void CuptiTimer::start() {
  base_->start();
  t0_ = owner_.now();
}

double CuptiTimer::stop() {
  (void)base_->stop();  // waits for the batch
  return owner_.gpu_seconds(t0_, owner_.now());
}

}  // namespace

std::unique_ptr<Instrument> make_trace_instrument(std::shared_ptr<ActivitySource> source, const TraceOptions& options) {
  return std::make_unique<TraceInstrument>(std::move(source), options);
}

}  // namespace gpubench::profilers
