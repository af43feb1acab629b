#include "profilers/host/host.hpp"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "profilers/common/sampler.hpp"

namespace gpubench::profilers {

namespace {

std::optional<MachineCpuTicks> machine_ticks() {
  std::ifstream in("/proc/stat");
  std::string head;
  std::getline(in, head);
  return parse_proc_stat_cpu(head);
}

// The measuring thread's cycles and task clock (perf_event_open): its effective clock. Absent
// where the machine has no hardware cycle counter (most virtual machines: ENOENT).
class CycleCounter {
 public:
  CycleCounter() {
    perf_event_attr a{};
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.disabled = 1;
    cycles_ = static_cast<int>(::syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
    if (cycles_ < 0) {
      why_ = fmt::format("unavailable: no hardware cycle counter here (perf_event_open: {})", std::strerror(errno));
      return;
    }
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    clock_ = static_cast<int>(::syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
    if (clock_ < 0) why_ = fmt::format("unavailable: perf_event_open task clock: {}", std::strerror(errno));
  }
  ~CycleCounter() {
    if (cycles_ >= 0) ::close(cycles_);
    if (clock_ >= 0) ::close(clock_);
  }
  CycleCounter(const CycleCounter&) = delete;
  CycleCounter& operator=(const CycleCounter&) = delete;
  bool ok() const { return cycles_ >= 0 && clock_ >= 0; }
  const std::string& why() const { return why_; }
  void start() {
    if (!ok()) return;
    for (int fd : {cycles_, clock_}) {
      ::ioctl(fd, PERF_EVENT_IOC_RESET, 0);
      ::ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    }
  }
  std::optional<double> stop_mhz() {
    if (!ok()) return std::nullopt;
    std::uint64_t cycles = 0, ns = 0;
    for (int fd : {cycles_, clock_}) ::ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    if (::read(cycles_, &cycles, sizeof cycles) != sizeof cycles || ::read(clock_, &ns, sizeof ns) != sizeof ns || ns == 0) {
      return std::nullopt;
    }
    return static_cast<double>(cycles) / static_cast<double>(ns) * 1e3;  // cycles per ns = GHz
  }

 private:
  int cycles_ = -1, clock_ = -1;
  std::string why_;
};

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
    clock_mhz_.reset();
    ticks0_.reset();
    ticks1_.reset();
  }
  void begin_phase(const char* phase) override {
    if (!tracker_.begin(phase)) return;
    ::getrusage(RUSAGE_SELF, &usage0_);
    ticks0_ = machine_ticks();
    cycles_.start();
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
    ticks1_ = machine_ticks();
    clock_mhz_ = cycles_.stop_mhz();
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
    if (ticks0_ && ticks1_) {
      const OutsideLoad l = outside_load(*ticks0_, *ticks1_, static_cast<double>(::sysconf(_SC_CLK_TCK)), user + sys,
                                         wall_s_, static_cast<int>(std::thread::hardware_concurrency()));
      profile["other_cpu_pct"] = l.other_cpu_pct;
      profile["steal_pct"] = l.steal_pct;
    }
    if (clock_mhz_) {
      profile["cpu_clock_mhz"] = *clock_mhz_;
    } else {
      profile["cpu_clock"] = cycles_.ok() ? std::string("unavailable: the counters read nothing") : cycles_.why();
    }
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
  std::optional<MachineCpuTicks> ticks0_, ticks1_;
  CycleCounter cycles_;
  std::optional<double> clock_mhz_;
  std::chrono::steady_clock::time_point wall0_;
  double wall_s_ = 0;
  bool measured_ = false;
};

}  // namespace

std::unique_ptr<Instrument> make_host_instrument(double interval_ms) { return std::make_unique<HostInstrument>(interval_ms); }

}  // namespace gpubench::profilers
