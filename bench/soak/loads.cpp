#include "bench/soak/loads.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "bench/core/errors.hpp"
#include "bench/suites/all_suites.hpp"

namespace gpubench::soak {
namespace {

// One planned case of `suite` on `device` with `axes` fixed (the preset fills the rest).
PlannedCase plan_one(const std::string& suite, const DeviceInfo& device, std::vector<std::string> axes) {
  PlanRequest r;
  r.suites = {suite};
  r.preset = "quick";
  r.axis_overrides = std::move(axes);
  std::vector<NotApplicable> na;
  const std::vector<PlannedCase> plan = make_plan(suites::all(), r, {device}, &na);
  if (plan.empty()) {
    PlannedCase none;
    none.suite = select_suites(suites::all(), {suite}).front();
    none.device = device;
    none.skip_reason = na.empty() ? "no case planned" : na.front().reason;
    return none;
  }
  return plan.front();
}

std::vector<std::string> gemm_axes(const DeviceInfo& device, const std::string& dtype) {
  if (!device.is_cuda()) return {"provider=openblas", "dtype=fp32", "m=1024", "layout=nn", "threads=0"};
  return {"provider=cublaslt", "dtype=" + dtype, "m=8192", "layout=tn"};
}

}  // namespace

std::vector<GemmChoice> gemm_dtype_choices(const DeviceInfo& device, const PeakLookup& peak) {
  if (!device.is_cuda()) return {{"fp32", "CPU: OpenBLAS sgemm"}};
  struct Candidate {
    const char* dtype;
    const char* peak_key;
  };
  constexpr Candidate kTensor[] = {{"fp8-e4m3", "fp8_tensor"}, {"int8", "int8_tensor"}, {"bf16", "bf16_tensor"},
                                   {"fp16", "fp16_tensor"},    {"tf32", "tf32_tensor"}};
  struct Ranked {
    const char* dtype;
    double peak;
  };
  std::vector<Ranked> ranked;
  for (const Candidate& c : kTensor) {
    const std::optional<double> p = peak ? peak(device.name, c.peak_key) : std::nullopt;
    if (p && *p > 0 && !plan_gemm_load(device, c.dtype).skip_reason) ranked.push_back({c.dtype, *p});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) { return a.peak > b.peak; });
  std::vector<GemmChoice> out;
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    out.push_back({ranked[i].dtype, fmt::format("{}: the {} datasheet Tensor Core peak supported here ({} T/s)",
                                                ranked[i].dtype, i == 0 ? "highest" : "next highest", ranked[i].peak)});
  }
  for (const char* d : {"bf16", "fp16", "tf32", "fp32"}) {
    if (std::any_of(out.begin(), out.end(), [&](const GemmChoice& c) { return c.dtype == d; })) continue;
    if (plan_gemm_load(device, d).skip_reason) continue;
    out.push_back({d, ranked.empty() ? fmt::format("{}: no datasheet figure for '{}'; the first supported of bf16, fp16, tf32, fp32", d, device.name)
                                     : fmt::format("{}: supported here, without a datasheet figure", d)});
  }
  return out;
}

std::string choose_gemm_dtype(const DeviceInfo& device, const PeakLookup& peak, std::string* why) {
  const std::vector<GemmChoice> choices = gemm_dtype_choices(device, peak);
  if (choices.empty()) {
    if (why) *why = "no gemm precision is supported here";
    return "fp32";
  }
  if (why) *why = choices.front().why;
  return choices.front().dtype;
}

PlannedCase plan_gemm_load(const DeviceInfo& device, const std::string& dtype) {
  return plan_one("gemm", device, gemm_axes(device, dtype));
}

PlannedCase plan_load(const std::string& load, const DeviceInfo& device, const PeakLookup& peak) {
  if (load == "gemm") return plan_gemm_load(device, choose_gemm_dtype(device, peak));
  if (load == "memory") {
    std::int64_t bytes = std::int64_t{64} << 20;
    if (device.is_cuda() && device.memory_bytes > 0) {
      // Three arrays over about 3/4 of the memory (the rest: the context, cuBLAS workspaces, other
      // processes), rounded down to whole MiB.
      bytes = std::max<std::int64_t>(std::int64_t{64} << 20, (device.memory_bytes / 4 / (1 << 20)) << 20);
    }
    return plan_one("memory", device, {"test=triad", fmt::format("size={}", bytes), "peer=0"});
  }
  if (load == "train") {
    if (!device.is_cuda()) return plan_one("train", device, {"model=transformer", "precision=fp32"});
    PlannedCase c = plan_one("train", device, {"model=transformer", "precision=bf16-amp"});
    if (c.skip_reason) c = plan_one("train", device, {"model=transformer", "precision=fp32"});
    return c;
  }
  throw UsageError(fmt::format("--load '{}': expected gemm, memory, train or mixed", load));
}

}  // namespace gpubench::soak
