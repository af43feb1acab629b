#include "bench/suites/selftest/selftest.hpp"

#include <signal.h>

#include <chrono>
#include <list>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

namespace gpubench::suites::selftest {
namespace {

class FaultCase final : public HostCase {
 public:
  explicit FaultCase(std::string mode) : mode_(std::move(mode)), data_(4096, 1.0) {}

  void setup() override {
    if (mode_ == "throw") throw std::runtime_error("selftest: setup threw on purpose");
    if (mode_ == "alloc") {
      // Keeps allocating (and touching) 64 MiB blocks until allocation fails; the harness must
      // turn std::bad_alloc into a skipped case and free it all. Tests bound it with ulimit -v.
      std::list<std::vector<char>> hog;
      while (true) hog.emplace_back(std::size_t{64} << 20, '\1');
    }
    if (mode_ == "hang") {
      while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (mode_ == "crash") ::raise(SIGSEGV);
  }

  Verification verify() override {
    run();
    Verification v;
    v.checked = 1;
    v.method = "exact sum of ones";
    v.passed = mode_ != "wrong" && sum_ == static_cast<double>(data_.size());
    if (!v.passed) v.detail = "selftest: wrong answer on purpose";
    v.max_error = v.passed ? 0.0 : 1e9;
    return v;
  }

  void run() override { sum_ = std::accumulate(data_.begin(), data_.end(), 0.0); }
  Metrics metrics() const override { return {static_cast<double>(data_.size()), 8.0 * data_.size(), ""}; }

 private:
  std::string mode_;
  std::vector<double> data_;
  volatile double sum_ = 0;
};

class SelftestSuite final : public Suite {
 public:
  std::string name() const override { return "selftest"; }
  std::string description() const override { return "fault injection for gpubench's own tests"; }
  std::vector<AxisSpec> axes() const override {
    return {{"mode", AxisKind::Enum, "behaviour", {"ok", "wrong", "throw", "alloc", "hang", "crash"}, 1}};
  }
  std::vector<Preset> presets() const override {
    const std::vector<std::pair<std::string, std::string>> ok{{"mode", "ok"}};
    return {{"quick", ok, ok}, {"standard", ok, ok}, {"full", ok, ok}};
  }
  std::optional<std::string> unsupported(const DeviceInfo& device, const Point&) const override {
    if (device.is_cuda()) return "selftest runs on the CPU only";
    return std::nullopt;
  }
  std::unique_ptr<Case> make_case(const DeviceInfo&, const Point& point) const override {
    return std::make_unique<FaultCase>(point.text("mode"));
  }
};

}  // namespace

std::unique_ptr<Suite> make_suite() { return std::make_unique<SelftestSuite>(); }

}  // namespace gpubench::suites::selftest
