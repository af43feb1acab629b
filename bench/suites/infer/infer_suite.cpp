// The infer suite's axes, presets, plan rules and names (infer.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "bench/core/errors.hpp"
#include "bench/core/sizes.hpp"
#include "bench/suites/infer/infer.hpp"

namespace gpubench::suites::infer {
namespace {

namespace ki = kernels::infer;

std::optional<std::string> rate_error(std::string_view word) {
  const std::string w(word);
  char* end = nullptr;
  const double v = std::strtod(w.c_str(), &end);
  if (w.empty() || end != w.c_str() + w.size() || !(v > 0) || !(v <= 1e6)) {
    return "rate takes requests per second above 0 and up to 1e6 (1, 0.5, 8)";
  }
  return std::nullopt;
}

// The axes every preset leaves at one value unless it says otherwise.
const std::vector<std::pair<std::string, std::string>> kDefaults = {
    {"phase", "prefill"},  {"batch", "1"},      {"prompt_len", "128"}, {"context_len", "1024"}, {"output_len", "32"},
    {"rate", "1"},         {"requests", "16"},  {"max_batch", "16"},   {"kv_budget", "0"},      {"kv_page", "16"},
    {"graphs", "0"},       {"tp", "1"},         {"layers", "0"},       {"threads", "0"},
};

Preset preset(std::string name, std::vector<std::pair<std::string, std::string>> cuda,
              std::vector<std::pair<std::string, std::string>> cpu) {
  auto complete = [](std::vector<std::pair<std::string, std::string>> given, const char* dtype) {
    auto add = [&](const std::string& axis, const std::string& value) {
      if (std::none_of(given.begin(), given.end(), [&](const auto& g) { return g.first == axis; }))
        given.emplace_back(axis, value);
    };
    add("dtype", dtype);
    for (const auto& [axis, value] : kDefaults) add(axis, value);
    return given;
  };
  return {std::move(name), complete(std::move(cuda), "bf16"), complete(std::move(cpu), "fp32")};
}

// The model a point runs: the named configuration with the layers and tp of the point.
ki::ModelSpec model_of(const Point& point) {
  ki::ModelSpec m = *ki::named_model(point.text("model"));
  if (const std::int64_t layers = point.integer("layers"); layers > 0 && layers <= m.layers) m.layers = layers;
  m.tp = point.integer("tp");
  return m;
}

class InferSuite final : public Suite {
 public:
  std::string name() const override { return "infer"; }
  std::string description() const override {
    return "Transformer inference over a paged KV cache: prefill, decode and a continuous-batching serving loop "
           "(TTFT, TPOT, ITL, E2EL); GPT and Llama models, fp32 on the CPU";
  }

  std::vector<AxisSpec> axes() const override {
    return {
        {"model", AxisKind::Enum, "gpt-small, gpt2-124m, llama-small (CPU-sized), llama3-8b, llama3-70b (random weights)", ki::model_names(), 1},
        {"phase", AxisKind::Enum, "prefill (one step over batch prompts), decode (one step of batch sequences over context_len cached tokens) or serve (a trace through the scheduler)", {"prefill", "decode", "serve"}, 1},
        {"dtype", AxisKind::Enum, "element type: fp32 on the CPU; fp16, bf16, fp8 (weights) on CUDA", {"fp32", "fp16", "bf16", "fp8"}, 1},
        {"batch", AxisKind::Int, "prefill: prompts per step; decode: sequences per step", {}, 1, {}, 4096},
        {"prompt_len", AxisKind::Int, "prefill: tokens per prompt; serve: the trace's mean prompt length", {}, 1, {}, 1 << 20},
        {"context_len", AxisKind::Int, "decode: tokens already cached per sequence", {}, 1, {}, 1 << 20},
        {"output_len", AxisKind::Int, "serve: the trace's mean output length (tokens generated per request)", {}, 1, {}, 1 << 20},
        {"rate", AxisKind::Text, "serve: requests per second (Poisson arrivals)", {}, 1, [](std::string_view w) { return rate_error(w); }},
        {"requests", AxisKind::Int, "serve: requests in the trace", {}, 1, {}, 1 << 20},
        {"max_batch", AxisKind::Int, "serve: requests decoding at once (vLLM's max_num_seqs)", {}, 1, {}, 4096},
        {"kv_budget", AxisKind::Int, "serve: KV-cache tokens the scheduler may reserve at once (0: enough for max_batch)", {}, 0, {}, std::int64_t{1} << 32},
        {"kv_page", AxisKind::Int, "tokens per KV-cache page (0: one contiguous region per sequence)", {}, 0, {}, 1 << 16},
        {"graphs", AxisKind::Int, "1: decode steps captured in CUDA graphs (CUDA only)", {}, 0, {}, 1},
        {"tp", AxisKind::Int, "run one tensor-parallel shard of tp (llama models: heads, FFN and vocabulary / tp)", {}, 1, {}, 64},
        {"layers", AxisKind::Int, "layers to run (0: the model's; fewer: a slice that fits)", {}, 0, {}, 1024},
        {"threads", AxisKind::Int, "CPU: threads (0: every CPU this process may use)", {}, 0, {}, 1024},
    };
  }

  std::vector<Preset> presets() const override {
    return {
        // One model, its prefill and decode curves, and a short serving trace at two rates.
        preset("quick",
               {{"model", "llama3-8b"}, {"layers", "4"}, {"phase", "prefill,decode,serve"}, {"batch", "1,8,32"},
                {"prompt_len", "512"}, {"context_len", "512,2048"}, {"output_len", "64"}, {"rate", "2,8"},
                {"requests", "32"}, {"max_batch", "32"}},
               // (The prefill grid brackets the trace's prompts, 64 to 192 tokens, and its batches; the
               // decode grid its batch limit: `gpubench serving` interpolates in both.)
               {{"model", "llama-small"}, {"phase", "prefill,decode,serve"}, {"batch", "1,2,4,8"},
                {"prompt_len", "64,128,256"}, {"context_len", "64,256"}, {"output_len", "16"}, {"rate", "1,4"},
                {"requests", "12"}, {"max_batch", "8"}}),
        preset("standard",
               {{"model", "llama3-8b"}, {"phase", "prefill,decode,serve"}, {"batch", "1,4,16,64,256"},
                {"prompt_len", "512,2048"}, {"context_len", "512,2048,8192"}, {"output_len", "128"},
                {"rate", "1,4,16"}, {"requests", "128"}, {"max_batch", "64"}, {"graphs", "0,1"}},
               {{"model", "llama-small,gpt-small"}, {"phase", "prefill,decode,serve"}, {"batch", "1,4,16,64"},
                {"prompt_len", "128,512"}, {"context_len", "128,512,2048"}, {"output_len", "32"}, {"rate", "1,2,4,8"},
                {"requests", "32"}, {"max_batch", "16"}}),
        // (gpt2-124m holds 1024 positions: every length of the CPU's full preset stays below.)
        preset("full",
               {{"model", "llama3-8b,llama3-70b"}, {"tp", "8"}, {"phase", "prefill,decode,serve"},
                {"batch", "1,4,16,64,256"}, {"prompt_len", "512,2048,8192"}, {"context_len", "512,2048,8192,32768"},
                {"output_len", "128"}, {"rate", "1,4,16,64"}, {"requests", "256"}, {"max_batch", "64,256"},
                {"kv_page", "0,16"}, {"graphs", "0,1"}},
               {{"model", "llama-small,gpt-small,gpt2-124m"}, {"phase", "prefill,decode,serve"},
                {"batch", "1,4,16,64"}, {"prompt_len", "128,512"}, {"context_len", "128,512,960"},
                {"output_len", "32"}, {"rate", "1,2,4,8"}, {"requests", "64"}, {"max_batch", "16"}, {"kv_page", "0,16"}}),
    };
  }

  // Axes a phase does not read are set to the value that says so (0, or "-" for the rate), and
  // points that become equal are planned once.
  Point resolve(const DeviceInfo& device, Point point) const override {
    (void)device;
    const std::string phase = point.text("phase");
    const auto zero = [&](const char* axis) { point.set(axis, std::int64_t{0}); };
    if (phase != "serve") {
      for (const char* axis : {"output_len", "requests", "max_batch", "kv_budget"}) zero(axis);
      point.set("rate", std::string("-"));
    }
    if (phase == "prefill") zero("context_len");
    if (phase == "decode") zero("prompt_len");
    if (phase == "serve") {
      zero("batch");
      zero("context_len");
    }
    return point;
  }

  // Sizes that cannot exist are usage errors naming the axis.
  void check_sizes(const DeviceInfo& device, const Point& point) const override {
    (void)device;
    const std::string what = "infer " + point.label();
    const ki::ModelSpec m = model_of(point);
    if (auto e = ki::spec_error(m)) throw UsageError(what + ": " + *e);
    if (const std::int64_t layers = point.integer("layers"); layers > m.layers) {
      throw UsageError(fmt::format("{}: layers={} is more than {}'s {}", what, layers, m.name, m.layers));
    }
    const std::string phase = point.text("phase");
    if (phase == "serve") {
      // A trace is real time: its arrivals alone last requests / rate seconds.
      const double span = static_cast<double>(point.integer("requests")) / std::strtod(point.text("rate").c_str(), nullptr);
      // And its tokens: every request's prompt and output, up to 1.5 times the means.
      const double tokens = static_cast<double>(point.integer("requests")) * 1.5 *
                            static_cast<double>(point.integer("prompt_len") + point.integer("output_len"));
      if (tokens > kMaxTraceTokens) {
        throw UsageError(fmt::format("{}: {} requests of about {} prompt and {} output tokens are about {:.3g} tokens, "
                                     "more than {:.0e} for one trace: lower requests or the lengths",
                                     what, point.integer("requests"), point.integer("prompt_len"),
                                     point.integer("output_len"), tokens, kMaxTraceTokens));
      }
      if (span > kMaxTraceSeconds) {
        throw UsageError(fmt::format("{}: {} requests at rate={} arrive over about {:.3g} s, more than a day ({} s): "
                                     "raise the rate or lower requests",
                                     what, point.integer("requests"), point.text("rate"), span, kMaxTraceSeconds));
      }
    }
    std::int64_t longest = phase == "prefill" ? point.integer("prompt_len")
                           : phase == "decode" ? point.integer("context_len") + 1
                                               : 0;
    if (phase == "serve") {
      // The trace's longest request: lengths reach L (1 + range_ratio) = 1.5 L.
      longest = point.integer("prompt_len") * 3 / 2 + 1 + point.integer("output_len") * 3 / 2 + 1;
      const std::int64_t budget = point.integer("kv_budget");
      if (budget > 0 && budget < longest) {
        throw UsageError(fmt::format("{}: kv_budget={} cannot hold the trace's longest request (up to {} tokens)", what,
                                     budget, longest));
      }
    }
    if (m.arch == ki::Arch::Gpt && longest > m.max_positions) {
      throw UsageError(fmt::format("{}: sequences of up to {} tokens exceed {}'s {} positions", what, longest, m.name,
                                   m.max_positions));
    }
    const std::int64_t seqs = phase == "serve" ? point.integer("max_batch") : point.integer("batch");
    checked_size(what + ", KV cache", {{phase == "serve" ? "max_batch" : "batch", seqs}, {"tokens per sequence", longest},
                                       {"KV elements per token", static_cast<std::int64_t>(ki::kv_elements_per_token(m))},
                                       {"bytes per element", 4}});
    checked_size(what + ", weights", {{"elements", static_cast<std::int64_t>(ki::matmul_weight_elements(m) + ki::embedding_elements(m))},
                                      {"bytes per element", 4}});
  }

  std::optional<std::string> unsupported(const DeviceInfo& device, const Point& point) const override {
    if (device.is_cuda()) return cuda_unsupported(device, spec_from(point));
    const std::string dtype = point.text("dtype");
    if (dtype != "fp32") return fmt::format("the CPU model computes in fp32 (dtype={} is for CUDA devices)", dtype);
    if (point.integer("graphs") != 0) return "graphs=1 captures decode steps in CUDA graphs: a CUDA device's";
    const std::string phase = point.text("phase");
    const std::int64_t longest = phase == "prefill"  ? point.integer("prompt_len")
                                 : phase == "decode" ? point.integer("context_len") + 1
                                                     : point.integer("prompt_len") * 3 / 2 + 1 + point.integer("output_len") * 3 / 2 + 1;
    if (longest > kMaxCpuSequence) {
      return fmt::format("the CPU path runs sequences of up to {} tokens (its attention and the double-precision "
                         "recompute it is verified against grow with the square of the length); this one reaches {}",
                         kMaxCpuSequence, longest);
    }
    if (phase == "serve") {
      const double tokens = static_cast<double>(point.integer("requests")) * 1.5 *
                            static_cast<double>(point.integer("prompt_len") + point.integer("output_len"));
      if (tokens > kMaxCpuTraceTokens) {
        return fmt::format("the CPU path serves traces of up to {:.0e} tokens (hours at its rates); this one is about "
                           "{:.3g}", kMaxCpuTraceTokens, tokens);
      }
    }
    if (phase == "prefill" && point.integer("batch") * point.integer("prompt_len") > kMaxCpuStepTokens) {
      return fmt::format("the CPU path runs prefill steps of up to {} tokens (batch x prompt_len = {})", kMaxCpuStepTokens,
                         point.integer("batch") * point.integer("prompt_len"));
    }
    return std::nullopt;
  }

  std::optional<std::string> plan_note(const DeviceInfo& device, const Point& point) const override {
    const InferSpec s = spec_from(point);
    // CUDA: 16-bit elements, the linear layers' weights at 1 byte under fp8.
    const double element = device.is_cuda() ? 2 : 4;
    const double weights = ki::matmul_weight_bytes(s.model, element, s.dtype == "fp8" && device.is_cuda() ? 1 : element);
    switch (s.phase) {
      case Phase::Prefill:
        return fmt::format("{:.3g} GFLOP per step, {:.3g} MB of weights", static_cast<double>(s.batch) *
                           ki::forward_flops(s.model, 0, s.prompt_len) / 1e9, weights / 1e6);
      case Phase::Decode:
        return fmt::format("{:.3g} MB read per step", (weights + static_cast<double>(s.batch * s.context_len) *
                                                                      ki::kv_elements_per_token(s.model) *
                                                                      element) / 1e6);
      case Phase::Serve:
        return fmt::format("a trace of {} requests at {} /s (about {:.3g} s of arrivals)", s.trace.requests, s.trace.rate,
                           s.trace.requests / s.trace.rate);
    }
    return std::nullopt;
  }

  std::unique_ptr<Case> make_case(const DeviceInfo& device, const Point& point) const override {
    const InferSpec spec = spec_from(point);
    if (device.is_cuda()) return make_cuda_case(device, spec);
    if (spec.phase == Phase::Serve) return make_serve_case(spec);
    return make_cpu_case(spec);
  }
};

}  // namespace

std::optional<std::string> fp8_unsupported(const DeviceInfo& device, const InferSpec& spec) {
  if (spec.dtype != "fp8" || !device.is_cuda()) return std::nullopt;
  if (device.cc_major * 10 + device.cc_minor < 89) {
    return fmt::format("dtype=fp8 needs fp8 Tensor Cores (cuBLASLt's fp8 GEMMs: compute capability 8.9 or newer); "
                       "this GPU is sm_{}{}",
                       device.cc_major, device.cc_minor);
  }
  return ki::fp8_dims_error(spec.model);
}

std::string phase_name(Phase p) {
  switch (p) {
    case Phase::Prefill: return "prefill";
    case Phase::Decode: return "decode";
    case Phase::Serve: return "serve";
  }
  return "prefill";
}

InferSpec spec_from(const Point& point) {
  InferSpec s;
  s.model = model_of(point);
  const std::string phase = point.text("phase");
  s.phase = phase == "decode" ? Phase::Decode : phase == "serve" ? Phase::Serve : Phase::Prefill;
  s.dtype = point.text("dtype");
  s.batch = point.integer("batch");
  s.prompt_len = point.integer("prompt_len");
  s.context_len = point.integer("context_len");
  s.kv_page = point.integer("kv_page");
  s.threads = static_cast<int>(point.integer("threads"));
  s.graphs = point.integer("graphs") != 0;
  if (s.phase == Phase::Serve) {
    s.trace.rate = std::strtod(point.text("rate").c_str(), nullptr);
    s.trace.requests = static_cast<int>(point.integer("requests"));
    s.trace.prompt_len = static_cast<int>(point.integer("prompt_len"));
    s.trace.output_len = static_cast<int>(point.integer("output_len"));
    s.limits.max_batch = static_cast<int>(point.integer("max_batch"));
    s.limits.kv_budget_tokens = point.integer("kv_budget");
  }
  return s;
}

BatchedStepCheck batched_step_check(const ki::ModelSpec& model, const std::string& dtype, std::int64_t chunks,
                                    std::int64_t tokens_per_chunk, double dtype_tolerance) {
  BatchedStepCheck c;
  if (chunks < 1) return c;
  c.chunks.push_back(0);
  if (chunks > 1) c.chunks.push_back(chunks - 1);
  const double weights = static_cast<double>(ki::layout(model).total);
  const double work = static_cast<double>(c.chunks.size()) * ki::forward_flops(model, 0, tokens_per_chunk);
  // fp8: the engine's activation scales come from the whole batched step, which a reference of
  // one sequence cannot emulate.
  c.reference = dtype != "fp8" && weights <= kBatchedReferenceWeights && work <= kBatchedReferenceFlops;
  c.tolerance = c.reference ? dtype_tolerance : 2 * dtype_tolerance;
  return c;
}

std::unique_ptr<Suite> make_suite() { return std::make_unique<InferSuite>(); }

}  // namespace gpubench::suites::infer
