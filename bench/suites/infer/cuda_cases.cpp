// The infer suite on a CUDA device: GpuEngine (kernels/infer/gpu_engine.hpp) in fp16 or bf16, or
// bf16 with fp8 linear weights and inputs (dtype=fp8).
// Verification before any timing, as the train suite's GPU step does it: the same architecture
// and layer shapes with one layer and a 512-token vocabulary, through the same engine code, a
// 13-token prompt over scattered 4-token pages then three decode steps, every step's logits
// against the double reference's recompute from the same (rounded) weights; then one step of
// the benchmark configuration itself, whose logits must be finite. Decode steps can run as a
// CUDA graph (graphs=1): the step's kernels and products captured once, launched per run.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "bench/core/cuda.hpp"
#include "bench/core/cuda_case.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/infer/infer.hpp"
#include "bench/suites/infer/runner.hpp"
#include "bench/suites/train/cuda_step_common.hpp"
#include "kernels/common/float_formats.hpp"
#include "kernels/infer/gpu_engine.hpp"

namespace gpubench::suites::infer {
namespace {

namespace ki = kernels::infer;
using ki::idx;
using kernels::train::DType;

// dtype=fp8: bf16 activations, the linear layers in fp8 (gpu_engine.hpp).
DType dtype_of(const std::string& d) { return d == "fp16" ? DType::F16 : DType::BF16; }
ki::LinearWeights linear_of(const std::string& d) { return d == "fp8" ? ki::LinearWeights::Fp8 : ki::LinearWeights::Dense; }

// Tolerance of the device's logits against the double reference, in units of the reference
// logits' RMS: activations rounded to 16 bits after every op (bf16 keeps 8 significant bits,
// a relative error of 2^-9 per rounding; fp16 11) through one layer and the head. fp8: the
// reference takes the same E4M3 codes (weights per tensor, activations per step: the
// emulation), but bf16's roundings before a quantiser move some values across an E4M3 rounding
// boundary, each such code one E4M3 step (2^-3 relative) off: kFp8Tolerance
// (tests/unit/test_infer_model.cpp measures what the fp8 codes themselves do to these logits).
double tolerance(const std::string& dtype) { return dtype == "fp16" ? 2e-2 : dtype == "fp8" ? kFp8Tolerance : 8e-2; }

// The weights as the device holds them: rounded to its type, kept as floats (the reference
// reads exactly these).
std::vector<float> device_weights(const ki::ModelSpec& s, DType t) {
  std::vector<float> w = ki::random_weights<float>(s, kWeightSeed);
  for (float& x : w) {
    x = t == DType::F16 ? kernels::half_bits_to_float(kernels::float_to_half_bits(x))
                        : kernels::bfloat16_bits_to_float(kernels::float_to_bfloat16_bits(x));
  }
  return w;
}

Verification verify_small(const ki::ModelSpec& big, const std::string& dtype, cudaStream_t stream) {
  const DType t = dtype_of(dtype);
  const bool fp8 = linear_of(dtype) == ki::LinearWeights::Fp8;
  ki::ModelSpec s = big;
  s.layers = 1;
  s.vocab = 512 * s.tp;  // the shard's head: 512 columns
  const std::vector<float> w = device_weights(s, t);
  const std::vector<double> wd(w.begin(), w.end());
  // Two sequences whose pages interleave, so the checked one's pages are scattered (0, 2, 4, 6).
  ki::GpuEngine e(s, t, &w, kWeightSeed, 4, 8, 16, 2, stream, linear_of(dtype));
  Verification v;
  v.passed = true;
  v.method = fmt::format("{} with 1 layer and a 512-token head through the same engine: a 13-token prompt over "
                         "scattered 4-token pages and 3 decode steps, each step's logits vs the reference model in "
                         "double recomputing every token{} (tolerance {} x RMS); then the benchmark configuration's "
                         "first step: logits finite",
                         big.name,
                         fp8 ? ", its linear layers' weights and inputs emulated as the same E4M3 codes (weights per "
                               "tensor, inputs per engine step)"
                             : "",
                         tolerance(dtype));
  std::vector<idx> steps = {13};  // the rows of each engine step so far (the fp8 emulation's amax groups)
  const int seq = e.table().open(), other = e.table().open();
  for (idx tokens = 4; tokens <= 16; tokens += 4) {
    (void)e.table().reserve(seq, tokens);
    (void)e.table().reserve(other, tokens);
  }
  std::vector<std::int32_t> tokens = ki::prompt_tokens(s, kPromptSeed, 0, 13);
  ki::Chunk chunk{seq, 0, tokens.data(), 13};
  for (int step = 0; step < 4; ++step) {
    const std::vector<float> got = e.forward({chunk});
    const std::vector<double> all = ki::reference_logits(s, wd, tokens, fp8 ? &steps : nullptr);
    compare_logits(step == 0 ? "prefill logits" : "decode logits", got.data(), all.data() + all.size() - got.size(),
                   static_cast<std::int64_t>(got.size()), tolerance(dtype), v);
    tokens.push_back(ki::argmax_rows(got, 1, s.vocab_shard())[0]);
    chunk = {seq, static_cast<idx>(tokens.size()) - 1, &tokens.back(), 1};
    steps.push_back(1);
  }
  return v;
}

void check_finite(const std::vector<float>& logits, Verification& v) {
  for (std::size_t i = 0; i < logits.size(); ++i) {
    ++v.checked;
    if (!std::isfinite(logits[i])) {
      if (v.passed) v.detail = fmt::format("benchmark configuration: logits[{}] = {}", i, logits[i]);
      v.passed = false;
      return;
    }
  }
}

// The device's memory ceiling for the decode roofline: a device-to-device cudaMemcpy of 1 GiB
// (read + write = 2 GiB moved), best of 5, measured once per process and device, by the first
// decode case's setup before it allocates its engine.
struct DeviceCeiling {
  double gbps = 0;
  std::string method;
};
const DeviceCeiling& device_memory_ceiling(int device, cudaStream_t stream) {
  static std::map<int, DeviceCeiling> measured;
  auto it = measured.find(device);
  if (it != measured.end()) return it->second;
  DeviceCeiling c;
  constexpr std::size_t bytes = std::size_t{1} << 30;
  try {
    cuda::DeviceBuffer a(bytes), b(bytes);
    cuda::Event start, stop;
    double best = 0;
    for (int i = 0; i < 6; ++i) {
      start.record(stream);
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream));
      stop.record(stream);
      const double s = cuda::Event::elapsed_ms(start, stop) * 1e-3;
      if (i > 0 && s > 0) best = std::max(best, 2.0 * bytes / s / 1e9);  // the first warms up
    }
    c.gbps = best;
    c.method = "device-to-device cudaMemcpy of 1 GiB (2 GiB read and written), best of 5, measured in this run";
  } catch (const std::exception& e) {
    c.method = std::string("not measured: ") + e.what();
  }
  return measured.emplace(device, c).first->second;
}

class GpuStepCase final : public CudaCase {
 public:
  GpuStepCase(const DeviceInfo& device, const InferSpec& spec)
      : CudaCase(device), s_(spec), t_(dtype_of(spec.dtype)), linear_(linear_of(spec.dtype)) {}
  ~GpuStepCase() override {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }

  void setup() override {
    const bool decode = s_.phase == Phase::Decode;
    const idx tokens = decode ? s_.context_len + 1 : s_.prompt_len;
    const idx page = s_.kv_page > 0 ? s_.kv_page : tokens;
    const idx per_seq = (tokens + page - 1) / page;
    const idx rows = decode ? std::max(s_.batch, s_.context_len) : s_.batch * s_.prompt_len;
    // The roofline's ceiling before this case allocates anything: its 2 GiB of copy buffers then
    // find the memory free, and a large engine cannot leave them out ("not measured").
    if (decode) ceiling_ = &device_memory_ceiling(device().ordinal, stream());
    train::skip_on_oom([&] {
      engine_ = std::make_unique<ki::GpuEngine>(s_.model, t_, nullptr, kWeightSeed, page, per_seq * s_.batch, rows,
                                                s_.batch, stream(), linear_);
    });
    ki::PageTable& pt = engine_->table();
    for (idx b = 0; b < s_.batch; ++b) seqs_.push_back(pt.open());
    for (idx p = 1; p <= per_seq; ++p)
      for (int q : seqs_) (void)pt.reserve(q, std::min(tokens, p * page));
    if (decode) {
      // Every sequence's cache filled by a real prefill of one context (in steps of at most
      // `rows` tokens each: the buffers' size), then one new token each.
      context_ = ki::prompt_tokens(s_.model, kPromptSeed, 0, s_.context_len);
      for (int q : seqs_) (void)engine_->forward({{q, 0, context_.data(), s_.context_len}});
      for (idx b = 0; b < s_.batch; ++b) next_.push_back(static_cast<std::int32_t>((b * 7919 + 13) % s_.model.vocab));
      for (idx b = 0; b < s_.batch; ++b) chunks_.push_back({seqs_[static_cast<std::size_t>(b)], s_.context_len, &next_[static_cast<std::size_t>(b)], 1});
    } else {
      for (idx b = 0; b < s_.batch; ++b) prompts_.push_back(ki::prompt_tokens(s_.model, kPromptSeed, b, s_.prompt_len));
      for (idx b = 0; b < s_.batch; ++b) chunks_.push_back({seqs_[static_cast<std::size_t>(b)], 0, prompts_[static_cast<std::size_t>(b)].data(), s_.prompt_len});
    }
  }

  Verification verify() override {
    Verification v = train::skip_on_oom([&] { return verify_small(s_.model, s_.dtype, stream()); });
    if (!v.passed) return v;
    const std::vector<float> batched = engine_->forward(chunks_);  // a copy: the checks below step again
    check_finite(batched, v);
    if (v.passed) check_batched(batched, v);
    if (v.passed && s_.graphs) capture();
    return v;
  }

  // A serving step of the case's chunks as the serve loop runs one (runner.hpp's serving_step:
  // pinned inputs, the forward, on-device argmax, the tokens back, synchronised); every run
  // rewrites the same cache rows with the same values. graphs=1: the forward and argmax as the
  // graph captured them.
  void run() override {
    if (exec_ != nullptr) {
      (void)serving_step(*engine_, chunks_, [this] { GPUBENCH_CUDA_CHECK(cudaGraphLaunch(exec_, stream())); });
    } else {
      (void)serving_step(*engine_, chunks_);
    }
  }

  Metrics metrics() const override {
    Metrics m;
    const double kv = ki::kv_elements_per_token(s_.model), b = static_cast<double>(s_.batch);
    if (s_.phase == Phase::Prefill) {
      m.flops = b * ki::forward_flops(s_.model, 0, s_.prompt_len);
      // fp8: the linear layers' FLOPs run on fp8 Tensor Cores, attention and the head in bf16;
      // the MFU counts all of them against the fp8 peak (said in the metrics).
      m.peak_key = fp8() ? "fp8_tensor" : t_ == DType::F16 ? "fp16_tensor" : "bf16_tensor";
      if (fp8()) {
        m.extra["mfu_peak"] = "pct_of_peak (MFU) counts every FLOP against the fp8 Tensor Core peak, though "
                              "attention and the LM head run in bf16 (half that peak): a lower bound on the units' use";
      }
      m.items = b * static_cast<double>(s_.prompt_len);
      m.bytes = weight_bytes() + m.items * kv * 2;
    } else {
      m.bytes = step_bytes();
      m.peak_key = "memory_bandwidth";
      m.items = b;
      m.footprint_bytes = step_bytes();
      m.extra["bytes_per_step"] = step_bytes();
      m.extra["decode_flops"] = b * ki::forward_flops(s_.model, s_.context_len, 1);
      // The largest batch whose cache at this context fits: the device memory still free plus
      // this case's own pools, over one sequence's K and V.
      std::size_t free_b = 0, total_b = 0;
      if (engine_ && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
        const double per_seq = static_cast<double>(s_.context_len + 1) * kv * 2;
        const double pools = static_cast<double>(engine_->table().pages() * engine_->table().page_size()) * kv * 2;
        m.extra["largest_batch_fits"] = std::floor((static_cast<double>(free_b) + pools) / per_seq);
      } else {
        (void)cudaGetLastError();
      }
    }
    m.items_unit = "tokens";
    m.extra["step_timing"] = kServingStepTiming;
    m.extra["model"] = s_.model.name;
    m.extra["weight_bytes"] = weight_bytes();
    if (fp8()) {
      m.extra["weights"] = "linear layers E4M3 (per-tensor scale), activations quantised per step to E4M3 before "
                           "each linear GEMM; LM head, embedding, norms, attention and KV cache bf16";
    }
    m.extra["kv_bytes_per_token"] = kv * 2;
    m.extra["kv_page"] = s_.kv_page;
    m.extra["graphs"] = s_.graphs;
    m.extra["attention"] = "gpubench's paged kernel (one block of 4 warps per token and head, online softmax)";
    if (engine_) m.extra["device_bytes"] = engine_->device_bytes();
    return m;
  }

  void annotate(nlohmann::ordered_json& g, double seconds_per_run) const override {
    if (seconds_per_run <= 0) return;
    auto& m = g["metrics"];
    if (s_.phase == Phase::Prefill) {
      m["ttft_compute_ms"] = seconds_per_run * 1e3;
      return;
    }
    m["tpot_ms"] = seconds_per_run * 1e3;
    m["tokens_per_s_per_user"] = 1 / seconds_per_run;
    if (ceiling_ == nullptr) return;
    const DeviceCeiling& c = *ceiling_;
    m["memory_ceiling_gbps"] = c.gbps;
    m["memory_ceiling_method"] = c.method;
    if (c.gbps > 0) m["pct_of_memory_ceiling"] = step_bytes() / seconds_per_run / 1e9 / c.gbps * 100;
  }

 private:
  bool fp8() const { return linear_ == ki::LinearWeights::Fp8; }
  // Bytes with the linear layers' weights at 1 byte under fp8 (model.hpp decode_step_bytes).
  double step_bytes() const { return ki::decode_step_bytes(s_.model, s_.batch, s_.context_len, 2, fp8() ? 1 : 2); }
  double weight_bytes() const { return ki::matmul_weight_bytes(s_.model, 2, fp8() ? 1 : 2); }

  // The benchmark engine's own batched step (batched_step_check): its first and last chunks'
  // logits against the reference model (a model small enough) or against each chunk run alone
  // through the same engine (a step that rewrites the same cache rows with the same values).
  void check_batched(const std::vector<float>& batched, Verification& v) {
    const bool decode = s_.phase == Phase::Decode;
    const BatchedStepCheck c = batched_step_check(s_.model, s_.dtype, static_cast<std::int64_t>(chunks_.size()),
                                                  decode ? s_.context_len + 1 : s_.prompt_len, tolerance(s_.dtype));
    const idx vocab = s_.model.vocab_shard();
    std::vector<double> wd;
    if (c.reference) {
      const std::vector<float> w = device_weights(s_.model, t_);
      wd.assign(w.begin(), w.end());
    }
    for (const std::int64_t b : c.chunks) {
      const std::size_t i = static_cast<std::size_t>(b);
      std::vector<double> want;
      if (c.reference) {
        std::vector<std::int32_t> tokens = decode ? context_ : prompts_[i];
        if (decode) tokens.push_back(next_[i]);
        const std::vector<double> all = ki::reference_logits(s_.model, wd, tokens, nullptr);
        want.assign(all.end() - vocab, all.end());
      } else {
        const std::vector<float> alone = engine_->forward({chunks_[i]});
        want.assign(alone.begin(), alone.end());
      }
      compare_logits(fmt::format("batched step logits of chunk {}", b).c_str(), batched.data() + b * vocab, want.data(),
                     vocab, c.tolerance, v);
    }
    v.method += fmt::format("; the benchmark engine's batched step: chunk {} logits vs {} (tolerance {} x RMS)",
                            c.chunks.size() > 1 ? "0 and last" : "0",
                            c.reference ? "the reference model in double" : "the same chunk run alone through it",
                            c.tolerance);
  }

  void capture() {
    GPUBENCH_CUDA_CHECK(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal));
    try {
      engine_->enqueue();
    } catch (...) {
      cudaGraph_t broken = nullptr;
      (void)cudaStreamEndCapture(stream(), &broken);
      if (broken) cudaGraphDestroy(broken);
      throw;
    }
    GPUBENCH_CUDA_CHECK(cudaStreamEndCapture(stream(), &graph_));
    GPUBENCH_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }

  InferSpec s_;
  DType t_;
  ki::LinearWeights linear_;
  std::unique_ptr<ki::GpuEngine> engine_;
  std::vector<int> seqs_;
  std::vector<std::int32_t> context_, next_;
  std::vector<std::vector<std::int32_t>> prompts_;
  std::vector<ki::Chunk> chunks_;
  const DeviceCeiling* ceiling_ = nullptr;  // decode: measured in setup, before the engine
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

class GpuServeCase final : public ServeCaseOf<CudaCase> {
 public:
  GpuServeCase(const DeviceInfo& device, const InferSpec& spec)
      : ServeCaseOf<CudaCase>(spec, device), s_(spec), t_(dtype_of(spec.dtype)) {}

  void setup() override {
    idx longest = 1, prompt = 1;
    for (const ki::Request& r : trace_) {
      longest = std::max<idx>(longest, r.prompt_len + r.output_len);
      prompt = std::max<idx>(prompt, r.prompt_len);
    }
    const idx page = s_.kv_page > 0 ? s_.kv_page : longest;
    const idx pages = s_.limits.kv_budget_tokens > 0 ? (s_.limits.kv_budget_tokens + page - 1) / page + s_.limits.max_batch
                                                     : (longest + page - 1) / page * s_.limits.max_batch;
    train::skip_on_oom([&] {
      engine_ = std::make_unique<ki::GpuEngine>(s_.model, t_, nullptr, kWeightSeed, page, pages,
                                                prompt * s_.limits.max_batch, s_.limits.max_batch + 1, stream(),
                                                linear_of(s_.dtype));
    });
  }

  Verification verify() override {
    Verification v = train::skip_on_oom([&] { return verify_small(s_.model, s_.dtype, stream()); });
    if (!v.passed) return v;
    ki::PageTable& pt = engine_->table();
    const int seq = pt.open();
    const ki::Request& r = trace_.front();
    (void)pt.reserve(seq, r.prompt_len + 1);
    const std::vector<std::int32_t> tokens = ki::prompt_tokens(s_.model, kPromptSeed, r.id, r.prompt_len);
    check_finite(engine_->forward({{seq, 0, tokens.data(), r.prompt_len}}), v);
    pt.release(seq);
    if (v.passed) {
      EngineRunner warm = runner();
      warm_up(warm);
    }
    return v;
  }

  void run() override {
    EngineRunner r = runner();
    timed(r);
  }

 private:
  // The serve loop's step: runner.hpp's serving_step, the one the step cases time.
  EngineRunner runner() {
    return EngineRunner(
        s_.model, engine_->table(),
        [this](const std::vector<ki::Chunk>& chunks) -> const std::vector<std::int32_t>& {
          return serving_step(*engine_, chunks);
        },
        &shapes_);
  }

  InferSpec s_;
  DType t_;
  std::unique_ptr<ki::GpuEngine> engine_;
};

}  // namespace

std::optional<std::string> cuda_unsupported(const DeviceInfo& device, const InferSpec& spec) {
  if (auto why = ki::gpu_unsupported(spec.model)) return why;
  if (spec.dtype == "fp32") return std::string("the CUDA path computes in fp16 or bf16 (fp32 is the CPU model's)");
  if (device.cc_major < 8) {
    return fmt::format("compute capability {}.{}: the CUDA path needs sm_80 or newer (bf16)", device.cc_major,
                       device.cc_minor);
  }
  if (auto why = fp8_unsupported(device, spec)) return why;
  if (spec.graphs && spec.phase == Phase::Serve) return std::string("graphs=1 is for decode and prefill steps");
  return std::nullopt;
}

std::unique_ptr<Case> make_cuda_case(const DeviceInfo& device, const InferSpec& spec) {
  if (spec.phase == Phase::Serve) return std::make_unique<GpuServeCase>(device, spec);
  return std::make_unique<GpuStepCase>(device, spec);
}

}  // namespace gpubench::suites::infer
