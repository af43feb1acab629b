// Checks two performance goals of the harness (issue "Foundation"):
//   1. gpubench adds less than 5% to a CPU case of about 1 microsecond, compared with the same
//      work timed in a bare loop;
//   2. OpenBLAS sgemm at 2048^3 through gpubench is within 3% of OpenBLAS called in a bare loop
//      in the same process.
// "Through gpubench" means the real path: plan -> Google Benchmark registration -> harness
// measurement -> results file; the time compared is the mean time per run it reports.
// Bare and harnessed measurements alternate several times, so a burst of load on a shared
// machine hits both sides, and the best round of each side is compared: load only ever adds
// time, so the minimum is the estimate least disturbed by it (the medians are printed too).
#include <cblas.h>
#include <fcntl.h>
#include <unistd.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include "bench/core/harness.hpp"
#include "bench/suites/all_suites.hpp"
#include "perf/perf_common.hpp"
#include "kernels/common/fill_host.hpp"

namespace gb = gpubench;
namespace fs = std::filesystem;

using gpubench::perf::median;
using gpubench::perf::through_harness;

namespace {

// About 1 us of dependent floating-point work on a current x86 core.
[[gnu::noinline]] double microsecond_work(double x) {
  for (int i = 0; i < 250; ++i) x = x * 0.999999 + 1e-7;
  return x;
}

class MicroCase final : public gb::HostCase {
 public:
  void setup() override {}
  gb::Verification verify() override {
    gb::Verification v;
    v.passed = true;
    v.checked = 1;
    v.method = "none: timing probe";
    return v;
  }
  void run() override { sink_ = microsecond_work(sink_); }
  gb::Metrics metrics() const override { return {}; }

 private:
  volatile double sink_ = 1.0;
};

class MicroSuite final : public gb::Suite {
 public:
  std::string name() const override { return "micro"; }
  std::string description() const override { return "1 us probe"; }
  std::vector<gb::AxisSpec> axes() const override { return {{"x", gb::AxisKind::Int, "", {}, 1}}; }
  std::vector<gb::Preset> presets() const override { return {{"quick", {{"x", "1"}}, {{"x", "1"}}}}; }
  std::optional<std::string> unsupported(const gb::DeviceInfo&, const gb::Point&) const override { return std::nullopt; }
  std::unique_ptr<gb::Case> make_case(const gb::DeviceInfo&, const gb::Point&) const override {
    return std::make_unique<MicroCase>();
  }
};

template <typename F>
double bare_loop(F&& f, double min_time) {
  // Same shape as the harness: batches of ~2 ms, enough batches to fill min_time; mean per run.
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  f();
  double one = std::chrono::duration<double>(clock::now() - t0).count();
  const long per_batch = std::max<long>(1, static_cast<long>(0.002 / std::max(one, 1e-9)));
  double total = 0;
  long runs = 0;
  while (total < min_time) {
    auto s = clock::now();
    for (long i = 0; i < per_batch; ++i) f();
    total += std::chrono::duration<double>(clock::now() - s).count();
    runs += per_batch;
  }
  return total / static_cast<double>(runs);
}

bool report(const char* what, const std::vector<double>& bare, const std::vector<double>& harness, double limit_pct) {
  for (std::size_t i = 0; i < bare.size(); ++i) fmt::print("  round {}: bare {:.4g}  gpubench {:.4g}\n", i, bare[i], harness[i]);
  const double b = *std::min_element(bare.begin(), bare.end()), h = *std::min_element(harness.begin(), harness.end());
  const double overhead = (h - b) / b * 100;
  const bool ok = overhead < limit_pct;
  fmt::print("{:<24} best: bare {:.4g} s/run, gpubench {:.4g} s/run, difference {:+.2f}% (goal < {}%) {}\n", what, b, h,
             overhead, limit_pct, ok ? "PASS" : "FAIL");
  fmt::print("{:<24} medians: bare {:.4g}, gpubench {:.4g} ({:+.2f}%)\n", "", median(bare), median(harness),
             (median(harness) - median(bare)) / median(bare) * 100);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  gb::parse_benchmark_flags({});
  bool ok = true;

  MicroSuite micro;
  std::vector<double> bare, harness;
  volatile double sink = 1.0;
  for (int r = 0; r < rounds; ++r) {
    bare.push_back(bare_loop([&] { sink = microsecond_work(sink); }, 0.5));
    harness.push_back(through_harness(micro, {}, 0.5));
  }
  ok &= report("1 us CPU case", bare, harness, 5.0);

  const gb::Suite* gemm = &gpubench::perf::suite_named("gemm");
  const int n = 2048;
  std::vector<float> a(static_cast<std::size_t>(n) * n), b(a.size()), c(a.size());
  gb::kernels::fill_uniform_host(a.data(), gb::kernels::Storage::F32, a.size(), 1);
  gb::kernels::fill_uniform_host(b.data(), gb::kernels::Storage::F32, b.size(), 2);
  bare.clear();
  harness.clear();
  for (int r = 0; r < rounds; ++r) {
    bare.push_back(bare_loop(
        [&] { cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n); },
        2.0));
    harness.push_back(through_harness(*gemm, {"m=2048", "dtype=fp32"}, 2.0));
  }
  ok &= report("OpenBLAS sgemm 2048^3", bare, harness, 3.0);
  return ok ? 0 : 1;
}
