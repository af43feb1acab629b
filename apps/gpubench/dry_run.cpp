#include "apps/gpubench/dry_run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <memory>

#include "bench/core/cpu_peak.hpp"
#include "bench/core/errors.hpp"

namespace gpubench::app {
namespace {

// Compute capability per architecture of the spec sheet's keys (an entry matches its key
// exactly or as "<prefix>-..."). Source: NVIDIA, "CUDA GPU Compute Capability",
// https://developer.nvidia.com/cuda-gpus (V100 7.0, T4 7.5, A100 8.0, A40 8.6, L4/L40S/RTX 4090
// 8.9, H100/H200 9.0, B200 10.0).
struct ArchEntry {
  const char* key;
  int major, minor;
};
constexpr ArchEntry kComputeCapabilities[] = {
    {"v100", 7, 0}, {"t4", 7, 5},   {"a100", 8, 0},     {"a40", 8, 6},  {"l40s", 8, 9},
    {"l4", 8, 9},   {"rtx-4090", 8, 9}, {"h100", 9, 0}, {"h200", 9, 0}, {"b200", 10, 0},
};

bool key_is(std::string_view key, std::string_view prefix) {
  return key == prefix || (key.size() > prefix.size() && key.substr(0, prefix.size()) == prefix && key[prefix.size()] == '-');
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

DeviceInfo assumed_device(std::string_view model, const reports::SpecSheet& specs) {
  const std::string wanted = lower(model);
  std::vector<std::string> keys;
  for (const reports::GpuSpec& g : specs.gpus()) keys.push_back(g.key);
  const reports::GpuSpec* found = nullptr;
  std::vector<std::string> candidates;
  for (const reports::GpuSpec& g : specs.gpus()) {
    if (g.key == wanted) {
      found = &g;
      candidates = {g.key};
      break;
    }
    if (!wanted.empty() && g.key.rfind(wanted, 0) == 0) {
      found = &g;
      candidates.push_back(g.key);
    }
  }
  // A CUDA device name ("NVIDIA H200", as nvidia-smi prints it) picks the entry that matches it.
  if (candidates.empty()) {
    if (const reports::GpuSpec* by_name = specs.find(model)) {
      found = by_name;
      candidates = {by_name->key};
    }
  }
  if (candidates.size() != 1) {
    throw UsageError(fmt::format("--assume '{}': {} (models: {})", model,
                                 candidates.empty() ? "no GPU model of the spec sheet has this key"
                                                    : fmt::format("matches {}; name one", fmt::join(candidates, ", ")),
                                 fmt::join(keys, ", ")));
  }
  const ArchEntry* arch = nullptr;
  for (const ArchEntry& a : kComputeCapabilities) {
    if (key_is(found->key, a.key)) arch = &a;
  }
  if (arch == nullptr) {
    throw UsageError(fmt::format("--assume '{}': the compute capability of {} is not known to gpubench", model, found->key));
  }
  DeviceInfo d;
  d.kind = DeviceKind::Cuda;
  d.ordinal = 0;
  d.name = found->name;
  d.cc_major = arch->major;
  d.cc_minor = arch->minor;
  d.sm_count = found->sm_count ? static_cast<int>(*found->sm_count) : 0;
  d.memory_bytes = found->memory_gb ? static_cast<std::int64_t>(*found->memory_gb * 1e9) : 0;
  d.nvenc_engines = found->nvenc;
  d.nvdec_engines = found->nvdec;
  return d;
}

AssumedNode assumed_inventory(std::string_view model, const reports::SpecSheet& specs) {
  AssumedNode node;
  // MODEL:N: a node of N such GPUs (model keys and CUDA device names hold no ':').
  if (const std::size_t colon = model.rfind(':'); colon != std::string_view::npos) {
    const std::string_view count = model.substr(colon + 1);
    int n = 0;
    const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
    if (count.empty() || ec != std::errc() || end != count.data() + count.size() || n < 1 || n > 64) {
      throw UsageError(fmt::format("--assume '{}': the GPU count after ':' should be a whole number from 1 to 64", model));
    }
    node.gpus = n;
    model = model.substr(0, colon);
  }
  node.inventory.cpu = describe_cpu();
  const DeviceInfo d = assumed_device(model, specs);
  for (int i = 0; i < std::max(1, node.gpus); ++i) {
    node.inventory.cuda.push_back(d);
    node.inventory.cuda.back().ordinal = i;
  }
  return node;
}

evaluate::RateLookup rate_lookup(const reports::SpecSheet& specs) {
  // The CPU's peak is derived once per process (it reads /proc/cpuinfo and cpufreq).
  auto cpu = std::make_shared<std::optional<CpuPeak>>();
  return [&specs, cpu](const DeviceInfo& d, const std::string& key) -> std::optional<double> {
    if (d.is_cuda()) return specs.peak(d.name, key);
    if (!*cpu) *cpu = derive_cpu_peak(read_cpu_report());
    const auto it = (*cpu)->tflops.find(key);
    if (it != (*cpu)->tflops.end()) return it->second;
    return std::nullopt;
  };
}

PlanEstimate estimate_run_plan(const std::vector<PlannedCase>& plan, const MeasureOptions& measure, int repetitions,
                               bool isolate, bool metrics, const evaluate::RateLookup& rates) {
  evaluate::EstimateSettings s;
  s.measure = measure;
  s.repetitions = repetitions;
  s.metrics = metrics;
  s.rates = rates;
  return evaluate::estimate_plan(plan, s, isolate);
}

std::string dry_run_line(const PlanEstimate& e) {
  return fmt::format("dry-run: {} to run, {} skipped, about {:.1f} s", e.to_run, e.skipped, e.seconds);
}

void print_plan(const std::vector<PlannedCase>& plan) {
  for (const PlannedCase& c : plan) {
    std::vector<std::string> axes;
    for (const auto& [name, v] : c.point.values()) axes.push_back(name + "=" + to_string(v));
    std::string note;
    if (c.skip_reason) {
      note = " skipped: " + *c.skip_reason;
    } else if (auto n = c.suite->plan_note(c.device, c.point)) {
      note = "  (" + *n + ")";
    }
    fmt::print("{}  [{} {}]{}\n", c.name(), c.suite->name(), fmt::join(axes, " "), note);
  }
}

}  // namespace gpubench::app
