#include "bench/evaluate/estimate.hpp"

#include <algorithm>
#include <cstdlib>

namespace gpubench::evaluate {
namespace {

// The suites' costs beyond the policy (scripts/smoke_allowances.awk holds the same figures and
// says how each was set; docs/gpu-hosts.md).
constexpr double kCollectiveCaseS = 0.15;     // communicator set-up and buffers (H200: 6.8 s vs 4.2 for 16 cases)
constexpr double kTrainSearchS = 11;          // micro_batch=0: the search's trials (H200: 12.8 s vs 2.1)
constexpr double kCudnnGraphS = 0.5;          // one cuDNN graph's build, heuristics and plans (never timed)
constexpr double kLlama3VerifyS = 3;          // a Llama 3 case's host verification, bf16/fp16
constexpr double kLlama3VerifyFp8S = 20;      // ... fp8, whose reference emulates the E4M3 codes
constexpr double kServeTailS = 2;             // a serve trace past its arrivals: last decodes, set-up, warm-up
constexpr double kVideoCpuEncodeClipS = 3.7;  // a CPU encode case of a 720p 30-frame clip (build VM: 10.8 s vs 3.4 for 2)
constexpr double kVideoGpuClipS = 1.0;        // a GPU video case: the host encodes the stream or checks the clip (assumed)

std::string axis(const Point& p, const char* name) { return p.text_or(name, ""); }

// The suites whose Case::metrics() is computed from the point alone, before setup (checked by
// the dry-run tests of every preset); the others' metrics read what setup made, and are
// planned by the policy and allowances alone.
bool metrics_before_setup(const std::string& suite) {
  return suite == "gemm" || suite == "attention" || suite == "memory";
}

bool all_zero(const Metrics& m) { return m.flops <= 0 && m.bytes <= 0; }

}  // namespace

double expected_run_seconds(const Metrics& m, const DeviceInfo& device, const RateLookup& rates, const CostModel& c) {
  if (!rates) return 0;
  const bool gpu = device.is_cuda();
  double run = 0;
  if (m.flops > 0 && !m.peak_key.empty() && m.peak_key != "memory_bandwidth") {
    // The compute figure the case is held against, or the device's fp32 where it names none.
    std::optional<double> tflops = rates(device, m.peak_key);
    if (!tflops) tflops = rates(device, "fp32");
    const double fraction = gpu ? c.gpu_compute_fraction : c.cpu_compute_fraction;
    if (tflops && *tflops > 0) run = std::max(run, m.flops / (*tflops * 1e12 * fraction));
  }
  if (m.bytes > 0) {
    double gbps = 0;
    if (gpu) {
      if (const std::optional<double> b = rates(device, "memory_bandwidth")) gbps = *b * c.gpu_memory_fraction;
    } else {
      gbps = c.cpu_memory_gbps;
    }
    if (gbps > 0) run = std::max(run, m.bytes / (gbps * 1e9));
  }
  return run;
}

double estimate_case_seconds(const MeasureOptions& m, int repetitions, const CostModel& costs, double run_s,
                             bool single_run, double setup_s) {
  const double setup = setup_s >= 0 ? setup_s : costs.case_setup_s;
  const int reps = std::max(1, repetitions);
  if (single_run || m.single_run) return reps * (run_s + setup);
  // Warm-up doubles its batch until warmup_s has passed: under 2 x warmup_s, or one run.
  const double warm = std::max(2 * m.warmup_s, run_s);
  // Samples of max(batch, one run) each, at least min_samples of them, filling min_time_s.
  const double timed = std::max(m.min_time_s, static_cast<double>(m.min_samples) * std::max(m.batch_s, run_s));
  // Verification runs the work once more (its reference's own cost is in the setup allowance).
  return reps * (warm + timed + setup + run_s);
}

std::vector<Allowance> planning_allowances(const PlannedCase& pc, const CostModel& costs) {
  std::vector<Allowance> out;
  if (pc.skip_reason) return out;
  const std::string suite = pc.suite->name();
  const Point& p = pc.point;
  const bool gpu = pc.device.is_cuda();
  if (gpu && costs.gpu_preset_case_s > 0) out.push_back({"preset case", costs.gpu_preset_case_s});
  if (suite == "collectives" && gpu) out.push_back({"collective", kCollectiveCaseS});
  if (suite == "train" && axis(p, "micro_batch") == "0") out.push_back({"largest-batch search", kTrainSearchS});
  if (suite == "train" && gpu && axis(p, "attention") == "fused") {
    out.push_back({"fused train step (4 cuDNN graphs)", 4 * kCudnnGraphS});
  }
  if (suite == "attention" && gpu && axis(p, "provider") == "cudnn") {
    const std::string d = axis(p, "direction");
    out.push_back({"cuDNN attention case", (d == "fwd" || d.empty() ? 1 : 2) * kCudnnGraphS});
  }
  if (suite == "infer" && gpu && axis(p, "model").rfind("llama3-", 0) == 0) {
    if (axis(p, "dtype") == "fp8") out.push_back({"Llama 3 fp8 verification", kLlama3VerifyFp8S});
    else out.push_back({"Llama 3 verification", kLlama3VerifyS});
  }
  if (suite == "video") {
    // The clip generated, encoded and decoded back before timing, and runs of a whole clip each:
    // on the 2-core build VM the CPU's two quick x264 encodes (720p, 30 frames) took 10.8 s
    // against 3.4 s planned, 3.7 s more a case; a decode's verification is a decode, a third of
    // that. Scaled by the clip's pixels; a GPU case's stream or check is the host's (1 s).
    const std::string res = axis(p, "res");
    const double pixels = res == "2160p" ? 3840.0 * 2160 : res == "1080p" ? 1920.0 * 1080 : 1280.0 * 720;
    const double clip = pixels * static_cast<double>(p.integer_or("frames", 30)) / (1280.0 * 720 * 30);
    const double per_clip = gpu ? kVideoGpuClipS : axis(p, "op") == "encode" ? kVideoCpuEncodeClipS : kVideoCpuEncodeClipS / 3;
    out.push_back({"video clip, check and runs", clip * per_clip});
  }
  if (suite == "infer" && axis(p, "phase") == "serve") {
    const double rate = std::atof(axis(p, "rate").c_str());
    const double requests = static_cast<double>(p.integer_or("requests", 0));
    out.push_back({"serve trace", (rate > 0 ? requests / rate : 0) + kServeTailS});
  }
  return out;
}

CaseEstimate estimate_case(const PlannedCase& pc, const EstimateSettings& s) {
  CaseEstimate e;
  if (pc.skip_reason) return e;
  bool single_run = false;
  if (s.rates && metrics_before_setup(pc.suite->name())) {
    try {
      const std::unique_ptr<Case> c = pc.suite->make_case(pc.device, pc.point);
      const Metrics m = c->metrics();
      single_run = c->sampling().single_run;
      if (!all_zero(m)) e.run_s = expected_run_seconds(m, pc.device, s.rates, s.costs);
    } catch (const std::exception&) {
      e.run_s = 0;  // metrics that need setup: the policy alone
    }
  }
  e.seconds = estimate_case_seconds(s.measure, s.repetitions, s.costs, e.run_s, single_run) +
              (s.metrics ? s.costs.metrics_replay_s : 0);
  if (s.allowances) {
    e.allowances = planning_allowances(pc, s.costs);
    for (const Allowance& a : e.allowances) e.seconds += a.seconds;
  }
  return e;
}

PlanEstimate estimate_plan(const std::vector<PlannedCase>& plan, const EstimateSettings& s, bool isolate) {
  PlanEstimate total;
  total.seconds = s.costs.process_start_s;
  for (const PlannedCase& c : plan) {
    if (c.skip_reason) {
      ++total.skipped;
      continue;
    }
    ++total.to_run;
    const CaseEstimate e = estimate_case(c, s);
    total.seconds += e.seconds + (isolate ? s.costs.process_start_s : 0);
    for (const Allowance& a : e.allowances) {
      auto it = std::find_if(total.allowances.begin(), total.allowances.end(),
                             [&](const Allowance& x) { return x.what == a.what; });
      if (it == total.allowances.end()) total.allowances.push_back(a);
      else it->seconds += a.seconds;
    }
  }
  return total;
}

}  // namespace gpubench::evaluate
