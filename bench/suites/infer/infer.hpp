#pragma once
// The `infer` suite: a decoder-only transformer (kernels/infer/model.hpp) served over a paged
// KV cache. phase=prefill times one step over `batch` prompts of prompt_len tokens (the compute
// part of TTFT); phase=decode one step of `batch` sequences holding context_len tokens each
// (TPOT at that batch); phase=serve a whole trace through the continuous-batching scheduler
// (kernels/infer/scheduler.hpp) with per-request TTFT, TPOT, ITL and E2EL. Every case checks
// its logits against the double-precision reference model first. docs/suite-infer.md.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/core/case.hpp"
#include "bench/core/suite.hpp"
#include "kernels/infer/model.hpp"
#include "kernels/infer/scheduler.hpp"

namespace gpubench::suites::infer {

enum class Phase { Prefill, Decode, Serve };

struct InferSpec {
  kernels::infer::ModelSpec model;
  Phase phase = Phase::Prefill;
  std::string dtype = "fp32";
  std::int64_t batch = 1, prompt_len = 128, context_len = 1024;
  std::int64_t kv_page = 16;  // tokens per KV-cache page; 0: one contiguous region per sequence
  int threads = 0;            // 0: every CPU this process may use
  bool graphs = false;        // CUDA: decode and prefill steps launched as a captured CUDA graph
  // phase=serve: the trace and the scheduler's limits (max_batch; KV budget: the pool's tokens).
  kernels::infer::TraceSpec trace;
  kernels::infer::Limits limits;
};

InferSpec spec_from(const Point& point);
std::string phase_name(Phase p);

// The host's DRAM ceiling for the decode roofline: a STREAM triad over every usable CPU on
// arrays far larger than the last-level cache, the best of several passes, measured once per
// process (the first decode case pays ~0.5 s). GB/s, decimal.
struct MemoryCeiling {
  double gbps = 0;
  std::string method;
};
const MemoryCeiling& host_memory_ceiling();

// Limits of the CPU path (longer runs are skipped with the reason): sequences of up to 4096
// tokens (its attention and the reference recompute are quadratic in the length) and prefill
// steps of up to 65536 tokens; and of a serving trace anywhere: its arrivals span at most a day.
inline constexpr std::int64_t kMaxCpuSequence = 4096, kMaxCpuStepTokens = 65536;
inline constexpr double kMaxTraceSeconds = 86400;
// A trace's tokens (requests x 1.5 x (prompt_len + output_len)): at most 1e8 anywhere (hours on a
// GPU), 2e5 on the CPU (its prefill runs ~3,000 tokens/s and its decode a few hundred).
inline constexpr double kMaxTraceTokens = 1e8, kMaxCpuTraceTokens = 2e5;

// The weights' and the prompts' seeds of every infer case (CPU and CUDA, verification and timing).
inline constexpr std::uint64_t kWeightSeed = 11, kPromptSeed = 7;

// Relative tolerance of fp32 logits against the double reference, in units of the reference
// logits' RMS (each logit is a sum over hidden terms of unit-scale products after L layers).
inline constexpr double kFp32Tolerance = 2e-3;

// dtype=fp8 (CUDA): tolerance of the device's logits against the reference under the fp8
// emulation, in the same units (cuda_cases.cpp says why; tests/unit/test_infer_model.cpp
// measures the fp8 codes' own effect on the verification model's logits).
inline constexpr double kFp8Tolerance = 1.5e-1;

// Why dtype=fp8 cannot run on this device (nullopt: it can, or the dtype is not fp8): fp8 needs
// cuBLASLt's fp8 GEMMs (compute capability 8.9 or newer) and linear dimensions in multiples of
// 16 (kernels::infer::fp8_dims_error). Host-only, so the planner's rule is unit-tested anywhere.
std::optional<std::string> fp8_unsupported(const DeviceInfo& device, const InferSpec& spec);

// Compares `got` (n logits) with `want`: |got - want| <= tol * rms(want); fills `v`.
void compare_logits(const char* what, const float* got, const double* want, std::int64_t n, double tol, Verification& v);

// How a GPU step case checks the benchmark engine's own batched step (its first step's logits,
// after the one-layer engine's check): the first and the last chunk's next-token logits against
// the reference model in double where that is affordable (16-bit weights, at most
// kBatchedReferenceWeights weights and kBatchedReferenceFlops of reference work for the checked
// chunks), otherwise against the same chunk run alone through the same engine (a wrong row,
// sequence, page or split in the batched step shows; both are within the dtype's tolerance of
// the exact answer, so they are held to twice it). Host-only, unit-tested.
inline constexpr double kBatchedReferenceWeights = 3e7, kBatchedReferenceFlops = 2e10;
struct BatchedStepCheck {
  bool reference = false;
  std::vector<std::int64_t> chunks;  // the chunks checked
  double tolerance = 0;              // x RMS of the logits (compare_logits)
};
BatchedStepCheck batched_step_check(const kernels::infer::ModelSpec& model, const std::string& dtype,
                                    std::int64_t chunks, std::int64_t tokens_per_chunk, double dtype_tolerance);

std::unique_ptr<Case> make_cpu_case(const InferSpec& spec);
// The CUDA path (cuda_cases.cpp; cuda_none.cpp in a build without CUDA): why this point cannot
// run on the device (nullopt: it can), and its case.
std::optional<std::string> cuda_unsupported(const DeviceInfo& device, const InferSpec& spec);
std::unique_ptr<Case> make_cuda_case(const DeviceInfo& device, const InferSpec& spec);
std::unique_ptr<Case> make_serve_case(const InferSpec& spec);
std::unique_ptr<Suite> make_suite();

}  // namespace gpubench::suites::infer
