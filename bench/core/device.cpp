#include "device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <thread>

#include "bench/core/cpu_peak.hpp"
#include "bench/core/cuda_portable.hpp"
#include "errors.hpp"

#include <benchmark/benchmark.h>

namespace gpubench {

namespace {
int g_assumed_cuda_devices = 0;  // set once by the command line before planning
}  // namespace

void assume_cuda_devices(int count) { g_assumed_cuda_devices = count > 0 ? count : 0; }
int assumed_cuda_devices() { return g_assumed_cuda_devices; }

std::string DeviceInfo::id() const {
  return kind == DeviceKind::Cpu ? std::string("cpu") : fmt::format("cuda:{}", ordinal);
}

std::string format_cuda_version(int version) {
  if (version <= 0) return "none";
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

DeviceInfo describe_cpu() {
  DeviceInfo cpu;
  cpu.kind = DeviceKind::Cpu;
  cpu.logical_cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        cpu.name = line.substr(line.find_first_not_of(" \t", colon + 1));
        break;
      }
    }
  }
  if (cpu.name.empty()) cpu.name = "unknown CPU";
  // The highest cache level, times its instances (Google Benchmark reads sysfs: size per
  // instance and how many logical CPUs share one).
  const benchmark::CPUInfo& info = benchmark::CPUInfo::Get();
  int top = 0;
  for (const auto& c : info.caches) top = std::max(top, c.level);
  for (const auto& c : info.caches) {
    if (c.level != top || c.type == "Instruction" || c.size <= 0) continue;
    const int sharing = std::max(1, c.num_sharing);
    const int instances = std::max(1, (info.num_cpus + sharing - 1) / sharing);
    cpu.llc_bytes = std::max<std::int64_t>(cpu.llc_bytes, static_cast<std::int64_t>(c.size) * instances);
  }
  CpuPeak peak = derive_cpu_peak(read_cpu_report());
  cpu.peak_tflops = std::move(peak.tflops);
  cpu.peak_derivation = std::move(peak.derivation);
  return cpu;
}

DeviceSelection select_devices(std::string_view spec, const DeviceInventory& inv) {
  DeviceSelection sel;
  bool want_cpu = false, want_all_cuda = false;
  std::vector<int> ordinals;
  std::size_t start = 0;
  while (start <= spec.size()) {
    std::size_t comma = spec.find(',', start);
    std::string_view item = spec.substr(start, comma == spec.npos ? spec.npos : comma - start);
    start = comma == spec.npos ? spec.size() + 1 : comma + 1;
    if (item == "all") {
      want_cpu = want_all_cuda = true;
    } else if (item == "cpu") {
      want_cpu = true;
    } else if (item == "cuda") {
      want_all_cuda = true;
      sel.cuda_requested_explicitly = true;
    } else if (item.rfind("cuda:", 0) == 0) {
      std::string_view num = item.substr(5);
      int n = -1;
      auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
      if (num.empty() || ec != std::errc() || p != num.data() + num.size() || n < 0) {
        throw UsageError(fmt::format("--device '{}': bad CUDA ordinal (accepted: all, cuda, cuda:N, cpu)", item));
      }
      if (!inv.cuda.empty() && n >= static_cast<int>(inv.cuda.size())) {
        throw UsageError(fmt::format("--device '{}': no such device (this machine has cuda:0..cuda:{})",
                                     item, inv.cuda.size() - 1));
      }
      ordinals.push_back(n);
      sel.cuda_requested_explicitly = true;
    } else {
      throw UsageError(fmt::format("--device '{}': unknown device (accepted: all, cuda, cuda:N, cpu)", item));
    }
  }
  if (inv.cuda.empty() && (want_all_cuda || !ordinals.empty())) {
    sel.notice = fmt::format("no CUDA device: {}; GPU cases skipped", inv.cuda_unavailable_reason);
  }
  for (const DeviceInfo& d : inv.cuda) {
    if (want_all_cuda || std::find(ordinals.begin(), ordinals.end(), d.ordinal) != ordinals.end()) {
      sel.devices.push_back(d);
    }
  }
  if (want_cpu) sel.devices.push_back(inv.cpu);
  return sel;
}

}  // namespace gpubench
