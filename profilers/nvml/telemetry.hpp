#pragma once
// NVML telemetry of one case: the arithmetic over a case's samples (plain C++, unit-tested
// against recorded readings and the fake libnvidia-ml.so.1) and the instrument that samples a
// GPU in a background thread while the case is measured.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/core/instrument.hpp"
#include "bench/core/nvml.hpp"

namespace gpubench::profilers {

struct TelemetrySample {
  double t_s = 0;  // seconds since the first sample
  nvml::Reading reading;
};

// after - before of a monotonic counter that wraps at 2^64 (unsigned arithmetic is modular).
std::uint64_t counter_delta(std::uint64_t before, std::uint64_t after);

// Names of the clock event ("throttle") reason bits, in bit order: gpu_idle,
// applications_clocks_setting, sw_power_cap, hw_slowdown, sync_boost, sw_thermal_slowdown,
// hw_thermal_slowdown, hw_power_brake_slowdown; unknown bits as "0x..." (NVML adds reasons).
std::vector<std::string> clock_event_reason_names(std::uint64_t mask);
// The reasons that mean the GPU ran slower than it could because of power or heat (not idling,
// not a clock setting): sw_power_cap, hw_slowdown, sw/hw thermal, hw power brake.
bool power_or_thermal_limited(std::uint64_t mask);

// Energy counters above this average draw are taken as a counter reset (a driver reload between
// two readings), not as energy: no GPU draws 10 kW.
constexpr double kImplausibleWatts = 10000;

// The case's telemetry fields from its samples (taken over the measure phase) and what was
// measured; see docs/results-format.md, gpubench.profile.telemetry.
nlohmann::ordered_json summarize_telemetry(const std::vector<TelemetrySample>& samples, const CaseOutcome& outcome,
                                           double interval_ms);

// The instrument. `devices`: the run's devices; `no_cuda_reason`: why the run has no CUDA
// device (for the off reason). Samples every `interval_ms` while a CUDA case is measured.
std::unique_ptr<Instrument> make_telemetry_instrument(const std::vector<DeviceInfo>& devices,
                                                      const std::string& no_cuda_reason, double interval_ms);

}  // namespace gpubench::profilers
