#include "profilers/profile.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "bench/core/errors.hpp"
#include "profilers/cupti_metrics/metrics.hpp"
#include "profilers/cupti_trace/cupti_source.hpp"
#include "profilers/cupti_trace/trace.hpp"
#include "profilers/host/host.hpp"
#include "profilers/nvml/telemetry.hpp"
#include "profilers/nvtx/nvtx.hpp"

namespace gpubench::profilers {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

// Perfworks metric names: letters, digits, '_' and '.' ("sm__throughput.avg.pct_of_peak_...").
bool metric_name_ok(const std::string& m) {
  return !m.empty() && std::all_of(m.begin(), m.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  });
}

}  // namespace

ProfileSelection parse_profile(const std::string& text) {
  ProfileSelection s;
  bool none = false, any = false;
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) throw UsageError(fmt::format("--profile '{}': empty item", text));
    const std::string name = item.substr(0, item.find('='));
    const bool has_value = name.size() != item.size();
    if (has_value && name != "metrics") {
      throw UsageError(fmt::format("--profile '{}': only metrics takes a value (metrics=NAME:NAME...)", item));
    }
    if (name == "none") none = true;
    else if (name == "nvtx") s.nvtx = any = true;
    else if (name == "telemetry") s.telemetry = any = true;
    else if (name == "host") s.host = any = true;
    else if (name == "trace") s.trace = any = true;
    else if (name == "metrics") {
      s.metrics = any = true;
      if (has_value) {
        for (const std::string& m : split(item.substr(name.size() + 1), ':')) {
          if (!metric_name_ok(m)) throw UsageError(fmt::format("--profile '{}': bad metric name '{}'", item, m));
          s.metric_names.push_back(m);
        }
      }
    } else {
      throw UsageError(fmt::format("--profile '{}': unknown instrument (accepted: nvtx, telemetry, host, trace, "
                                   "metrics[=NAME:NAME...], or none)",
                                   item));
    }
  }
  if (none && any) throw UsageError(fmt::format("--profile '{}': none cannot be combined with instruments", text));
  return s;
}

std::vector<std::unique_ptr<Instrument>> make_instruments(const InstrumentOptions& o) {
  const ProfileSelection& s = o.selection;
  const bool cuda = std::any_of(o.devices.begin(), o.devices.end(), [](const DeviceInfo& d) { return d.is_cuda(); });
  std::unique_ptr<Instrument> trace, metrics;
  // CUPTI first: its activity kinds must be on before the first CUDA context, and its NVTX
  // injection before the first NVTX call (the NVTX instrument's domain).
  if (s.trace || o.cupti_timer) {
    TraceOptions t;
    t.trace_path = o.trace_path;
    t.cupti_timer = o.cupti_timer;
    trace = make_trace_instrument(start_cupti_activity(cuda, o.no_cuda_reason), t);
  }
  if (s.metrics) metrics = make_metrics_instrument(s.metric_names, cuda, o.no_cuda_reason);
  std::vector<std::unique_ptr<Instrument>> out;
  if (s.nvtx) out.push_back(make_nvtx_instrument());
  if (trace) out.push_back(std::move(trace));
  if (s.telemetry) out.push_back(make_telemetry_instrument(o.devices, o.no_cuda_reason, o.sample_interval_ms));
  if (s.host) out.push_back(make_host_instrument(o.sample_interval_ms));
  if (metrics) out.push_back(std::move(metrics));
  return out;
}

}  // namespace gpubench::profilers
