// Checks the instruments' overhead goals (issue "Instruments"):
//   1. NVTX ranges add less than 1 microsecond per case (run > suite > case > 4 phases, no
//      tool attached: NVTX's calls are then a branch each);
//   2. the host sampler (a thread waking every 50 ms to read /proc/self/statm, plus getrusage at
//      the measure phase's ends) adds less than 1% to a 10 ms CPU case. The NVML telemetry
//      sampler is the same thread with NVML reads instead; it only runs on CUDA cases, so here
//      its per-reading cost is measured when an NVML is loadable (the real one, or the fake:
//      LD_LIBRARY_PATH=build/ci/tests/fake_nvml/current).
// The trace's overhead needs a GPU: it is recorded per case (gpubench.profile.trace.overhead).
// Rounds alternate with and without the instrument; best rounds are compared (load only adds).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "bench/core/harness.hpp"
#include "bench/core/nvml.hpp"
#include "perf/perf_common.hpp"
#include "profilers/host/host.hpp"
#include "profilers/nvtx/nvtx.hpp"

namespace gb = gpubench;
using clock_type = std::chrono::steady_clock;

namespace {

// About 10 ms of dependent floating-point work.
[[gnu::noinline]] double ten_ms_work(double x) {
  const auto until = clock_type::now() + std::chrono::milliseconds(10);
  while (clock_type::now() < until) {
    for (int i = 0; i < 1000; ++i) x = x * 0.999999 + 1e-7;
  }
  return x;
}

class TenMsCase final : public gb::HostCase {
 public:
  void setup() override {}
  gb::Verification verify() override { return {true, 1, 0, "none: timing probe", ""}; }
  void run() override { sink_ = ten_ms_work(sink_); }
  gb::Metrics metrics() const override { return {}; }

 private:
  volatile double sink_ = 1.0;
};

class TenMsSuite final : public gb::Suite {
 public:
  std::string name() const override { return "ten_ms"; }
  std::string description() const override { return "10 ms probe"; }
  std::vector<gb::AxisSpec> axes() const override { return {{"x", gb::AxisKind::Int, "", {}, 1}}; }
  std::vector<gb::Preset> presets() const override { return {{"quick", {{"x", "1"}}, {{"x", "1"}}}}; }
  std::optional<std::string> unsupported(const gb::DeviceInfo&, const gb::Point&) const override { return std::nullopt; }
  std::unique_ptr<gb::Case> make_case(const gb::DeviceInfo&, const gb::Point&) const override {
    return std::make_unique<TenMsCase>();
  }
};

double nvtx_seconds_per_case(int cases) {
  auto nvtx = gb::profilers::make_nvtx_instrument();
  const gb::DeviceInfo cpu;
  const gb::CaseInfo info{"suite/case=1/cpu", "suite", &cpu};
  nlohmann::ordered_json profile = nlohmann::ordered_json::object();
  const auto t0 = clock_type::now();
  for (int i = 0; i < cases; ++i) {
    nvtx->begin_case(info);
    for (const char* phase : {"setup", "verify", "warm-up", "measure"}) {
      nvtx->begin_phase(phase);
      nvtx->end_phase();
    }
    nvtx->end_case({}, profile);
  }
  return std::chrono::duration<double>(clock_type::now() - t0).count() / cases;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  gb::parse_benchmark_flags({});
  bool ok = true;

  std::vector<double> nvtx;
  for (int r = 0; r < rounds; ++r) nvtx.push_back(nvtx_seconds_per_case(1000000));
  const double best_nvtx = *std::min_element(nvtx.begin(), nvtx.end());
  const bool nvtx_ok = best_nvtx < 1e-6;
  ok &= nvtx_ok;
  fmt::print("NVTX ranges per case (1 case + 4 phases, no tool): best {:.1f} ns, median {:.1f} ns (goal < 1000 ns) {}\n",
             best_nvtx * 1e9, gb::perf::median(nvtx) * 1e9, nvtx_ok ? "PASS" : "FAIL");

  TenMsSuite suite;
  auto host = gb::profilers::make_host_instrument(50);
  std::vector<double> bare, sampled;
  for (int r = 0; r < rounds; ++r) {
    bare.push_back(gb::perf::through_harness(suite, {}, 1.0));
    sampled.push_back(gb::perf::through_harness(suite, {}, 1.0, {host.get()}));
  }
  const double b = *std::min_element(bare.begin(), bare.end()), s = *std::min_element(sampled.begin(), sampled.end());
  const double pct = (s - b) / b * 100;
  const bool host_ok = pct < 1.0;
  ok &= host_ok;
  for (int r = 0; r < rounds; ++r) fmt::print("  round {}: no instrument {:.6g} s  host sampler {:.6g} s\n", r, bare[r], sampled[r]);
  fmt::print("host sampler (50 ms) on a 10 ms CPU case: best {:.6g} vs {:.6g} s/run, {:+.3f}% (goal < 1%) {}\n", b, s, pct,
             host_ok ? "PASS" : "FAIL");

  if (const auto count = gb::nvml::device_count(); count && *count > 0) {
    const auto status = gb::nvml::device_status(0);
    const auto gpu = status ? gb::nvml::find_by_pci(status->pci_bus_id) : std::nullopt;
    if (gpu) {
      constexpr int kReads = 2000;
      const auto t0 = clock_type::now();
      for (int i = 0; i < kReads; ++i) (void)gb::nvml::read(*gpu);
      const double per = std::chrono::duration<double>(clock_type::now() - t0).count() / kReads;
      fmt::print("NVML telemetry reading ({}): {:.2f} us per sample, on the sampler thread ({:.4f}% of a 50 ms interval)\n",
                 status->name, per * 1e6, per / 0.05 * 100);
    }
  } else {
    fmt::print("NVML telemetry reading: no NVML here ({})\n", gb::nvml::unavailable_reason());
  }
  return ok ? 0 : 1;
}
