#include "profilers/host/host.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "profilers/common/sampler.hpp"

namespace gpubench::profilers {

std::optional<std::uint64_t> parse_statm_resident(const std::string& statm, std::uint64_t page_bytes) {
  std::istringstream in(statm);
  std::uint64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return std::nullopt;
  return resident * page_bytes;
}

double cpu_percent(double user_s, double system_s, double wall_s) {
  return wall_s > 0 ? (user_s + system_s) / wall_s * 100 : 0;
}

namespace {

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; }

std::optional<std::uint64_t> resident_bytes() {
  std::ifstream in("/proc/self/statm");
  std::string text;
  std::getline(in, text);
  return parse_statm_resident(text, static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
}

class HostInstrument final : public Instrument {
 public:
  explicit HostInstrument(double interval_ms) : interval_ms_(interval_ms) {}
  std::string name() const override { return "host"; }

  void begin_case(const CaseInfo&) override {
    tracker_.reset();
    rss_.clear();
    measured_ = false;
  }
  void begin_phase(const char* phase) override {
    if (!tracker_.begin(phase)) return;
    ::getrusage(RUSAGE_SELF, &usage0_);
    wall0_ = std::chrono::steady_clock::now();
    sampler_.start(std::chrono::microseconds(static_cast<std::int64_t>(interval_ms_ * 1000)), [this] {
      if (const auto r = resident_bytes()) rss_.push_back(*r);
    });
  }
  void end_phase() override {
    if (!tracker_.end()) return;
    sampler_.stop();
    ::getrusage(RUSAGE_SELF, &usage1_);
    wall_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
    measured_ = true;
  }
  void end_case(const CaseOutcome&, nlohmann::ordered_json& profile) override {
    sampler_.stop();
    if (!measured_) return;
    const double user = seconds(usage1_.ru_utime) - seconds(usage0_.ru_utime);
    const double sys = seconds(usage1_.ru_stime) - seconds(usage0_.ru_stime);
    profile["wall_s"] = wall_s_;
    profile["cpu_user_s"] = user;
    profile["cpu_system_s"] = sys;
    profile["cpu_pct"] = cpu_percent(user, sys, wall_s_);
    profile["logical_cpus"] = std::thread::hardware_concurrency();
    if (!rss_.empty()) {
      double sum = 0;
      for (std::uint64_t r : rss_) sum += static_cast<double>(r);
      profile["rss_max_bytes"] = *std::max_element(rss_.begin(), rss_.end());
      profile["rss_mean_bytes"] = sum / static_cast<double>(rss_.size());
      profile["samples"] = rss_.size();
    }
  }

 private:
  double interval_ms_;
  MeasureTracker tracker_;
  PeriodicSampler sampler_;
  std::vector<std::uint64_t> rss_;
  rusage usage0_{}, usage1_{};
  std::chrono::steady_clock::time_point wall0_;
  double wall_s_ = 0;
  bool measured_ = false;
};

}  // namespace

std::unique_ptr<Instrument> make_host_instrument(double interval_ms) { return std::make_unique<HostInstrument>(interval_ms); }

}  // namespace gpubench::profilers
