#include "profilers/nvml/telemetry.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "profilers/common/sampler.hpp"

namespace gpubench::profilers {

std::uint64_t counter_delta(std::uint64_t before, std::uint64_t after) { return after - before; }

std::vector<std::string> clock_event_reason_names(std::uint64_t mask) {
  // Bit order of nvmlClocksEventReason* in nvml.h (bench/core/nvml.hpp checks the values).
  static const char* const names[] = {"gpu_idle",         "applications_clocks_setting", "sw_power_cap",
                                      "hw_slowdown",      "sync_boost",                  "sw_thermal_slowdown",
                                      "hw_thermal_slowdown", "hw_power_brake_slowdown"};
  std::vector<std::string> out;
  for (unsigned bit = 0; bit < 64; ++bit) {
    const std::uint64_t b = std::uint64_t{1} << bit;
    if (!(mask & b)) continue;
    out.push_back(bit < std::size(names) ? names[bit] : fmt::format("{:#x}", b));
  }
  return out;
}

bool power_or_thermal_limited(std::uint64_t mask) {
  return (mask & (nvml::kClocksEventSwPowerCap | nvml::kClocksEventHwSlowdown | nvml::kClocksEventSwThermalSlowdown |
                  nvml::kClocksEventHwThermalSlowdown | nvml::kClocksEventHwPowerBrakeSlowdown)) != 0;
}

namespace {

// min / mean / max of one optional field over the samples that have it.
struct Range {
  int n = 0;
  double min = 0, max = 0, sum = 0;
  void add(double v) {
    min = n == 0 ? v : std::min(min, v);
    max = n == 0 ? v : std::max(max, v);
    sum += v;
    ++n;
  }
  double mean() const { return n > 0 ? sum / n : 0; }
};

template <typename F>
Range range_of(const std::vector<TelemetrySample>& samples, F field) {
  Range r;
  for (const TelemetrySample& s : samples) {
    if (const auto v = field(s.reading)) r.add(static_cast<double>(*v));
  }
  return r;
}

// Trapezoidal integral of the power samples, in joules; empty with fewer than two.
std::optional<double> integrate_power(const std::vector<TelemetrySample>& samples) {
  double joules = 0;
  const TelemetrySample* prev = nullptr;
  int pairs = 0;
  for (const TelemetrySample& s : samples) {
    if (!s.reading.power_mw) continue;
    if (prev) {
      joules += (s.t_s - prev->t_s) * (*prev->reading.power_mw + *s.reading.power_mw) / 2 / 1000;
      ++pairs;
    }
    prev = &s;
  }
  if (pairs == 0) return std::nullopt;
  return joules;
}

}  // namespace

nlohmann::ordered_json summarize_telemetry(const std::vector<TelemetrySample>& samples, const CaseOutcome& outcome,
                                           double interval_ms) {
  nlohmann::ordered_json j;
  j["samples"] = samples.size();
  j["interval_ms"] = interval_ms;
  if (samples.empty()) return j;
  const double duration = samples.back().t_s - samples.front().t_s;
  j["duration_s"] = duration;

  const Range power = range_of(samples, [](const nvml::Reading& r) { return r.power_mw; });
  if (power.n > 0) j["power_w"] = {{"mean", power.mean() / 1000}, {"max", power.max / 1000}};

  // Energy: the difference of the total-energy counter between the first and last reading that
  // have it; where the counter is missing or was reset, the integral of the power samples.
  std::optional<double> energy;
  std::string source;
  const TelemetrySample *first = nullptr, *last = nullptr;
  for (const TelemetrySample& s : samples) {
    if (!s.reading.energy_mj) continue;
    if (!first) first = &s;
    last = &s;
  }
  if (first && last != first) {
    const double joules = static_cast<double>(counter_delta(*first->reading.energy_mj, *last->reading.energy_mj)) / 1000;
    const double span = last->t_s - first->t_s;
    if (span > 0 && joules / span <= kImplausibleWatts) {
      energy = joules;
      source = "counter";
    }
  }
  if (!energy) {
    energy = integrate_power(samples);
    if (energy) source = "power_integral";
  }
  if (energy) {
    j["energy_j"] = *energy;
    j["energy_source"] = source;
    if (outcome.runs > 0 && *energy > 0) {
      const double runs = static_cast<double>(outcome.runs);
      j["joules_per_run"] = *energy / runs;
      // Work per joule = rate per watt: GFLOP/J = GFLOP/s per W (decimal units).
      if (outcome.metrics.flops > 0) j["gflops_per_watt"] = outcome.metrics.flops * runs / 1e9 / *energy;
      else if (outcome.metrics.bytes > 0) j["gbps_per_watt"] = outcome.metrics.bytes * runs / 1e9 / *energy;
      // Work items per joule under the items' own unit (tokens_per_joule, output_tokens_per_joule,
      // samples_per_joule): the items of every timed run over the energy of the timed runs.
      if (outcome.metrics.items > 0) {
        const std::string unit = outcome.metrics.items_unit.empty() ? "items" : outcome.metrics.items_unit;
        j[unit + "_per_joule"] = outcome.metrics.items * runs / *energy;
      }
    }
  }

  const Range sm = range_of(samples, [](const nvml::Reading& r) { return r.sm_clock_mhz; });
  if (sm.n > 0) j["sm_clock_mhz"] = {{"min", sm.min}, {"mean", sm.mean()}};
  const Range mem = range_of(samples, [](const nvml::Reading& r) { return r.memory_clock_mhz; });
  if (mem.n > 0) j["memory_clock_mhz"] = {{"min", mem.min}, {"mean", mem.mean()}};
  const Range temp = range_of(samples, [](const nvml::Reading& r) { return r.temperature_c; });
  if (temp.n > 0) j["temperature_c_max"] = temp.max;
  const Range gpu_util = range_of(samples, [](const nvml::Reading& r) { return r.gpu_utilization_pct; });
  const Range mem_util = range_of(samples, [](const nvml::Reading& r) { return r.memory_utilization_pct; });
  if (gpu_util.n > 0) j["utilization_pct"] = {{"gpu_mean", gpu_util.mean()}, {"memory_mean", mem_util.mean()}};

  std::uint64_t any = 0;
  int with_reasons = 0, limited = 0;
  for (const TelemetrySample& s : samples) {
    if (!s.reading.clocks_event_reasons) continue;
    any |= *s.reading.clocks_event_reasons;
    ++with_reasons;
    if (power_or_thermal_limited(*s.reading.clocks_event_reasons)) ++limited;
  }
  if (with_reasons > 0) {
    j["clock_event_reasons"] = clock_event_reason_names(any);
    // The flag the reports show: this case was measured while power- or thermally-limited.
    j["throttled"] = limited > 0;
    j["throttled_samples_pct"] = 100.0 * limited / with_reasons;
  }
  return j;
}

namespace {

class TelemetryInstrument final : public Instrument {
 public:
  TelemetryInstrument(const std::vector<DeviceInfo>& devices, const std::string& no_cuda_reason, double interval_ms)
      : interval_ms_(interval_ms) {
    const bool any_cuda = std::any_of(devices.begin(), devices.end(), [](const DeviceInfo& d) { return d.is_cuda(); });
    if (!any_cuda) {
      status_ = "off: no CUDA device in this run" + (no_cuda_reason.empty() ? "" : " (" + no_cuda_reason + ")");
    } else if (!nvml::available()) {  // NVML is touched only where a CUDA device works
      status_ = "off: NVML unavailable: " + nvml::unavailable_reason();
    }
  }
  std::string name() const override { return "telemetry"; }
  std::string status() const override { return status_; }

  void begin_case(const CaseInfo& info) override {
    tracker_.reset();
    samples_.clear();
    off_.clear();
    gpu_.reset();
    if (status_ != "on" || !info.device || !info.device->is_cuda()) return;
    gpu_ = nvml::find_by_pci(info.device->pci_bus_id);
    if (!gpu_) off_ = "off: NVML has no GPU with PCI bus id " + info.device->pci_bus_id;
    bus_id_ = info.device->pci_bus_id;
    others_.reset();
  }
  void begin_phase(const char* phase) override {
    if (!tracker_.begin(phase) || !gpu_) return;
    const nvml::Handle gpu = *gpu_;
    const auto t0 = std::chrono::steady_clock::now();
    sampler_.start(std::chrono::microseconds(static_cast<std::int64_t>(interval_ms_ * 1000)), [this, gpu, t0] {
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      samples_.push_back({t, nvml::read(gpu)});
    });
  }
  void end_phase() override {
    if (!tracker_.end()) return;
    sampler_.stop();
    // Other processes with a compute context on the GPU while it was timed (issue 27): a figure
    // they may have slowed; `compare` then says `ambiguous: load` rather than `regressed`.
    if (gpu_) {
      if (const auto procs = nvml::compute_processes(bus_id_)) {
        std::vector<std::string> names;
        for (const nvml::GpuProcess& p : *procs) {
          if (p.pid != static_cast<unsigned>(::getpid())) names.push_back(p.name.empty() ? std::to_string(p.pid) : p.name);
        }
        others_ = names;
      }
    }
  }
  void end_case(const CaseOutcome& outcome, nlohmann::ordered_json& profile) override {
    sampler_.stop();
    if (!off_.empty()) {
      profile["status"] = off_;
      return;
    }
    if (samples_.empty()) return;
    profile = summarize_telemetry(samples_, outcome, interval_ms_);
    if (others_) {
      profile["other_gpu_processes"] = others_->size();
      if (!others_->empty()) profile["other_gpu_process_names"] = *others_;
    }
  }

 private:
  double interval_ms_;
  std::string status_ = "on";
  std::string off_;
  std::optional<nvml::Handle> gpu_;
  std::string bus_id_;
  std::optional<std::vector<std::string>> others_;  // other processes on the GPU (NVML), where it answered
  MeasureTracker tracker_;
  PeriodicSampler sampler_;
  std::vector<TelemetrySample> samples_;
};

}  // namespace

std::unique_ptr<Instrument> make_telemetry_instrument(const std::vector<DeviceInfo>& devices,
                                                      const std::string& no_cuda_reason, double interval_ms) {
  return std::make_unique<TelemetryInstrument>(devices, no_cuda_reason, interval_ms);
}

}  // namespace gpubench::profilers
