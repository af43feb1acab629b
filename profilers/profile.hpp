#pragma once
// `gpubench run --profile`: which instruments observe the cases, and making them.
//
//   --profile none | LIST     LIST: comma-separated nvtx, telemetry, host, trace, metrics[=M:M...]
//
// Default "nvtx,telemetry,host": NVTX ranges (free without a tool attached), NVML telemetry
// (off by itself where there is no NVML or no GPU) and the host sampler. `metrics=` takes a
// ':'-separated list of metric names (commas separate instruments).
#include <memory>
#include <string>
#include <vector>

#include "bench/core/device.hpp"
#include "bench/core/instrument.hpp"

namespace gpubench::profilers {

constexpr const char* kDefaultProfile = "nvtx,telemetry,host";

struct ProfileSelection {
  bool nvtx = false, telemetry = false, host = false, trace = false, metrics = false;
  std::vector<std::string> metric_names;  // empty: the default set
};

// UsageError (one line naming the bad item) for an unknown instrument, an empty item, a
// malformed metric name, or `none` mixed with instruments.
ProfileSelection parse_profile(const std::string& text);

struct InstrumentOptions {
  ProfileSelection selection;
  std::string trace_path;         // non-empty: write a Chrome/Perfetto trace there
  bool cupti_timer = false;       // --timer cupti
  double sample_interval_ms = 50;  // telemetry and host sampler
  std::vector<DeviceInfo> devices;  // the run's devices
  std::string no_cuda_reason;       // why the run has no CUDA device, when it has none
};

// The selected instruments, in the order they observe a case (NVTX outermost). CUPTI is
// started before anything touches CUDA or NVTX. Each one that cannot work here is still made,
// and says why in status() ("off: ...").
std::vector<std::unique_ptr<Instrument>> make_instruments(const InstrumentOptions& options);

}  // namespace gpubench::profilers
