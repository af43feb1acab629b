#include "context.hpp"

#include <unistd.h>

#include <chrono>

#include <benchmark/benchmark.h>
#include <fmt/chrono.h>
#include <fmt/format.h>

#include "gpubench/version.hpp"
#include "results.hpp"

namespace gpubench {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

nlohmann::ordered_json device_to_json(const DeviceInfo& d) {
  nlohmann::ordered_json j{{"id", d.id()}, {"kind", d.is_cuda() ? "cuda" : "cpu"}, {"name", d.name}};
  if (!d.is_cuda()) {
    j["logical_cpus"] = d.logical_cpus;
    if (d.llc_bytes > 0) j["last_level_cache_bytes"] = d.llc_bytes;
    // The theoretical peak (bench/core/cpu_peak.hpp) that the plausibility rules hold CPU figures to.
    if (!d.peak_tflops.empty()) j["peak_tflops"] = d.peak_tflops;
    if (!d.peak_derivation.empty()) j["peak_derivation"] = d.peak_derivation;
    return j;
  }
  j["compute_capability"] = fmt::format("{}.{}", d.cc_major, d.cc_minor);
  j["sm_count"] = d.sm_count;
  j["memory_bytes"] = d.memory_bytes;
  j["memory_bus_width_bits"] = d.memory_bus_width_bits;
  j["memory_clock_mhz"] = d.memory_clock_mhz;
  j["l2_bytes"] = d.l2_bytes;
  j["max_sm_clock_mhz"] = d.max_sm_clock_mhz;
  j["pci_bus_id"] = d.pci_bus_id;
  if (!d.uuid.empty()) j["uuid"] = d.uuid;
  auto put = [&](const char* key, const std::optional<int>& v) {
    if (v) j[key] = *v;
  };
  put("current_sm_clock_mhz", d.current_sm_clock_mhz);
  put("current_memory_clock_mhz", d.current_memory_clock_mhz);
  put("max_sm_clock_mhz_nvml", d.max_sm_clock_mhz_nvml);
  return j;
}

nlohmann::ordered_json capture_context(const DeviceInventory& inv, const std::vector<DeviceInfo>& devices,
                               const std::vector<const Suite*>& suites, const RunDescription& run) {
  const auto& cpu = benchmark::CPUInfo::Get();
  nlohmann::ordered_json ctx;
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  ctx["date"] = fmt::format("{:%Y-%m-%dT%H:%M:%S}+00:00", now);
  ctx["host_name"] = host_name();
  ctx["executable"] = "gpubench";
  ctx["num_cpus"] = cpu.num_cpus;
  ctx["mhz_per_cpu"] = static_cast<int>(cpu.cycles_per_second / 1e6);
  ctx["cpu_scaling_enabled"] = cpu.scaling == benchmark::CPUInfo::ENABLED;
  ctx["caches"] = nlohmann::ordered_json::array();
  for (const auto& c : cpu.caches) {
    ctx["caches"].push_back({{"type", c.type}, {"level", c.level}, {"size", c.size}, {"num_sharing", c.num_sharing}});
  }
  ctx["load_avg"] = cpu.load_avg;
  ctx["library_build_type"] = std::string(kBuildType) == "Debug" ? "debug" : "release";

  nlohmann::ordered_json g;
  g["schema_version"] = kResultsSchemaVersion;
  g["version"] = kVersion;
  g["git_revision"] = git_revision();
  g["build_type"] = kBuildType;
  g["cuda_architectures"] = kCudaArchitectures;
  g["command_line"] = run.command_line;
  g["started_utc"] = ctx["date"];
  g["cpu"] = {{"model", inv.cpu.name}, {"cores", inv.cpu.logical_cpus}};
  g["cuda"] = {{"available", !inv.cuda.empty()},
               {"runtime_version", kBuiltWithCuda ? format_cuda_version(inv.runtime_version) : std::string(kNotBuiltWithCuda)},
               {"driver_version", inv.driver_version > 0 ? nlohmann::ordered_json(format_cuda_version(inv.driver_version))
                                                         : nlohmann::ordered_json(nullptr)}};
  if (!inv.nvml_driver_version.empty()) g["cuda"]["driver_version_string"] = inv.nvml_driver_version;
  if (inv.cuda.empty()) g["cuda"]["reason"] = inv.cuda_unavailable_reason;
  g["devices"] = nlohmann::ordered_json::array();
  for (const DeviceInfo& d : devices) g["devices"].push_back(device_to_json(d));
  g["libraries"] = nlohmann::ordered_json::object();
  for (const Suite* s : suites) g["libraries"].update(s->libraries());
  g["options"] = {{"preset", run.preset},
                  {"suites", run.suites},
                  {"min_time_s", run.measure.min_time_s},
                  {"max_noise_pct", run.measure.max_noise * 100},
                  {"min_samples", run.measure.min_samples},
                  {"cold", run.measure.cold}};
  ctx["gpubench"] = std::move(g);
  return ctx;
}

}  // namespace gpubench
