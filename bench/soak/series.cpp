#include "bench/soak/series.hpp"

#include "bench/core/nvml.hpp"

namespace gpubench::soak {
namespace {

template <typename T>
void put(nlohmann::ordered_json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
template <typename T>
void get(const nlohmann::ordered_json& j, const char* key, std::optional<T>& v) {
  if (j.contains(key) && !j[key].is_null()) v = j[key].get<T>();
}

}  // namespace

nlohmann::ordered_json to_json(const Sample& s) {
  nlohmann::ordered_json j;
  j["t_s"] = s.t_s;
  j["interval_s"] = s.interval_s;
  if (!s.phase.empty()) j["phase"] = s.phase;
  j["device"] = s.device;
  j["load"] = s.load;
  j["rate"] = s.rate ? nlohmann::ordered_json(*s.rate) : nlohmann::ordered_json(nullptr);
  j["unit"] = s.unit;
  j["runs"] = s.runs;
  j["busy_s"] = s.busy_s;
  if (s.verifications > 0) j["verifications"] = s.verifications;
  if (s.mismatches > 0) j["mismatches"] = s.mismatches;
  if (!s.mismatch_detail.empty()) j["mismatch_detail"] = s.mismatch_detail;
  if (!s.error.empty()) j["error"] = s.error;
  put(j, "sm_clock_mhz", s.sm_clock_mhz);
  put(j, "memory_clock_mhz", s.memory_clock_mhz);
  put(j, "temperature_c", s.temperature_c);
  put(j, "memory_temperature_c", s.memory_temperature_c);
  put(j, "fan_pct", s.fan_pct);
  put(j, "power_w", s.power_w);
  put(j, "power_limit_w", s.power_limit_w);
  put(j, "gpu_utilization_pct", s.gpu_utilization_pct);
  put(j, "clocks_event_reasons", s.clocks_event_reasons);
  if (s.clocks_event_reasons && (*s.clocks_event_reasons & kBadThrottleMask)) {
    j["bad_throttle"] = bad_throttle_names(*s.clocks_event_reasons);
  }
  put(j, "ecc_corrected", s.ecc_corrected);
  put(j, "ecc_uncorrected", s.ecc_uncorrected);
  put(j, "retired_pages", s.retired_pages);
  put(j, "remapped_rows_corrected", s.remapped_rows_corrected);
  put(j, "remapped_rows_uncorrected", s.remapped_rows_uncorrected);
  put(j, "row_remap_failure", s.row_remap_failure);
  put(j, "pcie_replays", s.pcie_replays);
  if (!s.xids.empty()) j["xids"] = s.xids;
  put(j, "cpu_pct", s.cpu_pct);
  put(j, "rss_bytes", s.rss_bytes);
  put(j, "load_avg_1m", s.load_avg_1m);
  put(j, "other_cpu_pct", s.other_cpu_pct);
  put(j, "steal_pct", s.steal_pct);
  return j;
}

Sample sample_from_json(const nlohmann::ordered_json& j) {
  Sample s;
  s.t_s = j.value("t_s", 0.0);
  s.interval_s = j.value("interval_s", 0.0);
  s.phase = j.value("phase", std::string());
  s.device = j.value("device", std::string());
  s.load = j.value("load", std::string());
  get(j, "rate", s.rate);
  s.unit = j.value("unit", std::string());
  s.runs = j.value("runs", std::int64_t{0});
  s.busy_s = j.value("busy_s", 0.0);
  s.verifications = j.value("verifications", 0);
  s.mismatches = j.value("mismatches", 0);
  s.mismatch_detail = j.value("mismatch_detail", std::string());
  s.error = j.value("error", std::string());
  get(j, "sm_clock_mhz", s.sm_clock_mhz);
  get(j, "memory_clock_mhz", s.memory_clock_mhz);
  get(j, "temperature_c", s.temperature_c);
  get(j, "memory_temperature_c", s.memory_temperature_c);
  get(j, "fan_pct", s.fan_pct);
  get(j, "power_w", s.power_w);
  get(j, "power_limit_w", s.power_limit_w);
  get(j, "gpu_utilization_pct", s.gpu_utilization_pct);
  get(j, "clocks_event_reasons", s.clocks_event_reasons);
  get(j, "ecc_corrected", s.ecc_corrected);
  get(j, "ecc_uncorrected", s.ecc_uncorrected);
  get(j, "retired_pages", s.retired_pages);
  get(j, "remapped_rows_corrected", s.remapped_rows_corrected);
  get(j, "remapped_rows_uncorrected", s.remapped_rows_uncorrected);
  get(j, "row_remap_failure", s.row_remap_failure);
  get(j, "pcie_replays", s.pcie_replays);
  if (j.contains("xids")) s.xids = j["xids"].get<std::vector<std::uint64_t>>();
  get(j, "cpu_pct", s.cpu_pct);
  get(j, "rss_bytes", s.rss_bytes);
  get(j, "load_avg_1m", s.load_avg_1m);
  get(j, "other_cpu_pct", s.other_cpu_pct);
  get(j, "steal_pct", s.steal_pct);
  return s;
}

std::string bad_throttle_names(std::uint64_t reasons) {
  std::string out;
  auto add = [&](std::uint64_t bit, const char* name) {
    if (!(reasons & bit)) return;
    if (!out.empty()) out += ',';
    out += name;
  };
  add(nvml::kClocksEventHwSlowdown, "hw_slowdown");
  add(nvml::kClocksEventSwThermalSlowdown, "sw_thermal_slowdown");
  add(nvml::kClocksEventHwThermalSlowdown, "hw_thermal_slowdown");
  add(nvml::kClocksEventHwPowerBrakeSlowdown, "hw_power_brake_slowdown");
  return out;
}

}  // namespace gpubench::soak
