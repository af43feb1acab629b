#pragma once
// A CPU-only suite for harness and planner tests. Axis `mode` picks the behaviour of a case:
// ok (sums a small array), wrong (verification fails), skip (setup throws CaseSkipped),
// throw (setup throws a runtime error), phased (run() opens a suite phase "inner"), unchecked
// (verification passes having compared nothing), nothreads (setup cannot create a thread:
// std::system_error EAGAIN).
#include <numeric>
#include <cerrno>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "bench/core/errors.hpp"
#include "bench/core/phase.hpp"
#include "bench/core/suite.hpp"

namespace gpubench::testing {

class FakeCase final : public HostCase {
 public:
  FakeCase(std::string mode, std::int64_t size) : mode_(std::move(mode)), data_(static_cast<std::size_t>(size), 1.0) {}
  void setup() override {
    if (mode_ == "skip") throw CaseSkipped("fake: not here");
    if (mode_ == "throw") throw std::runtime_error("fake: broken");
    if (mode_ == "nothreads") throw std::system_error(EAGAIN, std::generic_category(), "fake: thread creation");
  }
  Verification verify() override {
    run();
    Verification v;
    v.checked = mode_ == "unchecked" ? 0 : 1;
    v.passed = mode_ != "wrong" && sum_ == static_cast<double>(data_.size());
    v.max_error = v.passed ? 0.0 : 2.0;
    v.method = "exact";
    v.detail = v.passed ? "" : "sum is wrong";
    return v;
  }
  void run() override {
    PhaseScope inner(mode_ == "phased" ? "inner" : nullptr);
    sum_ = std::accumulate(data_.begin(), data_.end(), 0.0);
    benchmark_sink_ = sum_;
  }
  Metrics metrics() const override { return {static_cast<double>(data_.size()), 8.0 * data_.size(), ""}; }

 private:
  std::string mode_;
  std::vector<double> data_;
  double sum_ = 0;
  volatile double benchmark_sink_ = 0;
};

class FakeSuite final : public Suite {
 public:
  std::string name() const override { return "fake"; }
  std::string description() const override { return "test suite"; }
  std::vector<AxisSpec> axes() const override {
    return {{"size", AxisKind::Int, "elements", {}, 1},
            {"twin", AxisKind::Int, "copies size by default", {}, 1},
            {"mode", AxisKind::Enum, "behaviour", {"ok", "wrong", "skip", "throw", "gpuonly", "phased", "unchecked", "nothreads"}, 1}};
  }
  std::vector<Preset> presets() const override {
    return {{"quick", {{"size", "1024"}, {"twin", "@size"}, {"mode", "ok"}}, {{"size", "64,128"}, {"twin", "@size"}, {"mode", "ok"}}},
            {"standard", {{"size", "4096"}, {"twin", "@size"}, {"mode", "ok"}}, {{"size", "4096"}, {"twin", "@size"}, {"mode", "ok"}}}};
  }
  std::optional<std::string> unsupported(const DeviceInfo& device, const Point& point) const override {
    if (point.text("mode") == "gpuonly" && !device.is_cuda()) return "needs a GPU";
    return std::nullopt;
  }
  std::unique_ptr<Case> make_case(const DeviceInfo&, const Point& point) const override {
    return std::make_unique<FakeCase>(point.text("mode"), point.integer("size"));
  }
  nlohmann::ordered_json libraries() const override { return {{"fakelib", "1.2.3"}}; }
  nlohmann::ordered_json summarize(const std::vector<nlohmann::ordered_json>& entries) const override {
    int ok = 0;
    for (const auto& e : entries) ok += e["gpubench"]["status"] == "ok";
    return {{"entries", entries.size()}, {"ok", ok}};
  }
};

inline DeviceInfo fake_cpu() {
  DeviceInfo d;
  d.kind = DeviceKind::Cpu;
  d.name = "Test CPU";
  d.logical_cpus = 2;
  return d;
}

inline DeviceInfo fake_gpu(int ordinal) {
  DeviceInfo d;
  d.kind = DeviceKind::Cuda;
  d.ordinal = ordinal;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  return d;
}

}  // namespace gpubench::testing
