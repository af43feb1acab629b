#include "cpu_peak.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include <fmt/format.h>

namespace gpubench {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::optional<double> number(const std::string& s) {
  const std::string t = trim(s);
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || !(v > 0)) return std::nullopt;
  return v;
}

// "Intel(R) Xeon(R) Platinum 8480+ @ 2.00GHz" -> 2000.
std::optional<double> model_name_mhz(const std::string& name) {
  const auto at = name.rfind('@');
  if (at == std::string::npos) return std::nullopt;
  std::string rest = trim(name.substr(at + 1));
  char* end = nullptr;
  const double v = std::strtod(rest.c_str(), &end);
  if (end == rest.c_str() || !(v > 0)) return std::nullopt;
  const std::string unit = trim(std::string(end));
  if (unit.rfind("GHz", 0) == 0) return v * 1000;
  if (unit.rfind("MHz", 0) == 0) return v;
  return std::nullopt;
}

std::string read_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return trim(line);
}

}  // namespace

CpuPeak derive_cpu_peak(const CpuReport& report) {
  CpuPeak out;
  // One block per logical CPU.
  int processors = 0;
  std::set<std::pair<std::string, std::string>> cores;  // (physical id, core id)
  bool core_ids_complete = true;
  std::string flags, model;
  std::optional<double> cpu_mhz;
  {
    std::istringstream in(report.cpuinfo);
    std::string physical, core;
    bool in_block = false;
    auto end_block = [&] {
      if (!in_block) return;
      if (physical.empty() || core.empty()) {
        core_ids_complete = false;
      } else {
        cores.emplace(physical, core);
      }
      physical.clear();
      core.clear();
      in_block = false;
    };
    for (std::string line; std::getline(in, line);) {
      if (trim(line).empty()) {
        end_block();
        continue;
      }
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
      if (key == "processor") {
        end_block();
        in_block = true;
        ++processors;
      } else if (key == "physical id") {
        physical = value;
      } else if (key == "core id") {
        core = value;
      } else if (key == "flags" && flags.empty()) {
        flags = " " + value + " ";
      } else if (key == "model name" && model.empty()) {
        model = value;
      } else if (key == "cpu MHz") {
        if (auto v = number(value)) cpu_mhz = std::max(cpu_mhz.value_or(0), *v);
      }
    }
    end_block();
  }
  if (processors == 0) {
    out.derivation = "not derived: /proc/cpuinfo lists no processor";
    return out;
  }
  auto has = [&](const char* f) { return flags.find(std::string(" ") + f + " ") != std::string::npos; };
  int bits = 0;
  std::string isa;
  if (has("avx512f")) {
    bits = 512, isa = "avx512f";
  } else if (has("avx")) {
    bits = 256, isa = has("fma") ? "avx2/fma" : "avx";
  } else if (has("sse2")) {
    bits = 128, isa = "sse2";
  } else {
    out.derivation = "not derived: no x86 vector flags (avx512f, avx, sse2) in /proc/cpuinfo (a non-x86 CPU: its FMA "
                     "units and vector width are not assumed)";
    return out;
  }
  const bool use_cores = core_ids_complete && !cores.empty();
  const int n = use_cores ? static_cast<int>(cores.size()) : processors;
  const std::string cores_text =
      use_cores ? fmt::format("{} cores ({} distinct physical id/core id of {} processors)", n, n, processors)
                : fmt::format("{} cores (the processors: no core ids)", n);

  // The clock bound.
  const std::string driver = report.scaling_driver;
  const bool driver_reports_boost =
      report.max_freq_khz && (driver == "intel_pstate" || driver == "intel_cpufreq" || driver.rfind("amd-pstate", 0) == 0 ||
                              driver.rfind("amd_pstate", 0) == 0);
  double mhz = 0;
  std::string clock_text;
  if (driver_reports_boost) {
    mhz = *report.max_freq_khz / 1000;
    clock_text = fmt::format("cpufreq cpuinfo_max_freq {:.0f} MHz ({}, the boost maximum)", mhz, driver);
  } else {
    std::string source;
    auto consider = [&](std::optional<double> v, const std::string& what) {
      if (v && *v > mhz) {
        mhz = *v;
        source = fmt::format("{} {:.0f} MHz", what, *v);
      }
    };
    if (report.max_freq_khz) {
      consider(*report.max_freq_khz / 1000,
               fmt::format("cpufreq cpuinfo_max_freq ({})", driver.empty() ? "driver unknown" : driver));
    }
    consider(cpu_mhz, "/proc/cpuinfo cpu MHz");
    consider(model_name_mhz(model), "the model name's");
    if (mhz <= 0) {
      out.derivation = "not derived: no clock reported (no cpufreq, no cpu MHz, no GHz in the model name)";
      return out;
    }
    const double bound = std::max(mhz, std::min(mhz * kBoostAllowance, kFastestX86Mhz));
    clock_text = fmt::format("{}, which may be the base clock: x {:.1f} boost allowance, capped at {:.0f} MHz (the "
                             "fastest x86 boost), = {:.0f} MHz",
                             source, kBoostAllowance, kFastestX86Mhz, bound);
    mhz = bound;
  }
  const int lanes32 = bits / 32, lanes64 = bits / 64;
  const double per_lane = static_cast<double>(n) * kFmaUnitsPerCore * 2 * mhz * 1e6 / 1e12;
  out.tflops["fp32"] = per_lane * lanes32;
  out.tflops["fp64"] = per_lane * lanes64;
  out.derivation = fmt::format(
      "{} x {} FMA units per core (assumed: no x86 core issues more than two vector FMAs per cycle) x {} fp32 lanes "
      "({}-bit {}; fp64 {}) x 2 FLOP x {:.0f} MHz = {:.4g} TFLOP/s fp32, {:.4g} fp64; clock: {}",
      cores_text, kFmaUnitsPerCore, lanes32, bits, isa, lanes64, mhz, out.tflops["fp32"], out.tflops["fp64"], clock_text);
  return out;
}

CpuReport read_cpu_report() {
  CpuReport r;
  {
    std::ifstream in("/proc/cpuinfo");
    std::ostringstream s;
    s << in.rdbuf();
    r.cpuinfo = s.str();
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path cpus = "/sys/devices/system/cpu";
  for (fs::directory_iterator it(cpus, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("cpu", 0) != 0 || name.size() < 4 || name.find_first_not_of("0123456789", 3) != std::string::npos) continue;
    const fs::path freq = it->path() / "cpufreq";
    if (auto khz = number(read_line(freq / "cpuinfo_max_freq"))) r.max_freq_khz = std::max(r.max_freq_khz.value_or(0), *khz);
    if (r.scaling_driver.empty()) r.scaling_driver = read_line(freq / "scaling_driver");
  }
  return r;
}

}  // namespace gpubench
