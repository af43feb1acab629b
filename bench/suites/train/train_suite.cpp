#include <fmt/format.h>

#include <algorithm>

#include "bench/core/errors.hpp"
#include "bench/mpi/session.hpp"
#include "bench/suites/attention/attention.hpp"
#include "bench/suites/collectives/collectives.hpp"
#include "bench/suites/train/dp.hpp"
#include "bench/suites/train/train.hpp"
#include "bench/suites/train/verify.hpp"

namespace gpubench::suites::train {
namespace {

using kernels::train::ModelKind;
using kernels::train::Recompute;

// Data parallel needs the ranks of a launcher (mpirun/srun), which the run has joined (a CUDA
// device may run it on one rank without); on CUDA devices also NCCL, and a fixed micro-batch
// (the largest-batch search is one device's).
std::optional<std::string> dp_unsupported(const DeviceInfo& device, const Point& point) {
  const DpMode mode = *parse_dp(point.text("dp"));
  if (mode == DpMode::None) return std::nullopt;
  if (device.is_cuda() && !collectives::have_nccl_backend()) {
    return fmt::format("dp={} on CUDA devices needs a build with NCCL (GPUBENCH_WITH_NCCL)", to_string(mode));
  }
  if (device.is_cuda() && searches_batch(point)) {
    return fmt::format("micro_batch=0 searches one device's memory: give dp={} a micro-batch", to_string(mode));
  }
  // On a GPU, one rank needs no launcher (a one-rank NCCL communicator: gpubench run detects a
  // launch only from 2 ranks): the step's collectives, streams and verification run the same.
  if (!mpi::active() && !device.is_cuda()) {
    return fmt::format("dp={} needs several ranks: start gpubench under mpirun or srun (one rank per device)",
                       to_string(mode));
  }
  return std::nullopt;
}

class TrainSuite final : public Suite {
 public:
  std::string name() const override { return "train"; }
  std::string description() const override {
    return "One training step (forward, backward, AdamW) of an mlp or a GPT-style transformer: tokens/s, MFU, "
           "memory; CPU through the reference (OpenBLAS)";
  }
  std::vector<AxisSpec> axes() const override { return train_axes(); }
  std::vector<Preset> presets() const override { return train_presets(); }

  // The mlp has no attention: its points say attention=none (equal points are planned once). On
  // CUDA devices fused attention is cuDNN's SDPA, which takes 16-bit activations and needs the
  // cuDNN frontend in the build and libcudnn on the host: a step whose attention was left to the
  // preset or default runs unfused where it cannot run fused, and its point says so (as
  // PyTorch's SDPA falls back to its math kernel for fp32); an explicit --axis attention=fused is
  // kept, and skipped with the reason. libcudnn is looked for only here, for CUDA devices.
  Point resolve(const DeviceInfo& device, Point point) const override {
    if (point.text("model") == "mlp") point.set("attention", std::string("none"));
    if (device.is_cuda() && point.text("attention") == "fused" && !point.given("attention") &&
        (!fused_takes(point.text("precision")) || !attention::cudnn_built() || attention::cudnn_unavailable())) {
      point.set("attention", std::string("unfused"));
    }
    return point;
  }

  // The mlp has no blocks to recompute, and a transformer has attention: those points mean
  // nothing and are dropped.
  bool applies(const DeviceInfo&, const Point& point) const override {
    if (point.text("model") == "mlp") return point.text("recompute") == "none";
    return point.text("attention") != "none";
  }

  std::optional<std::string> unsupported(const DeviceInfo& device, const Point& point) const override {
    (void)config_from(point);  // a configuration that cannot be built is a usage error
    const Precision p = parse_precision(point.text("precision"));
    if (auto why = dp_unsupported(device, point)) return why;
    if (p == Precision::FP8) {
      if (auto why = fp8_unsupported(device, point)) return why;
    }
    if (!device.is_cuda()) {
      if (p != Precision::FP32) return fmt::format("the CPU reference trains in fp32 only (not {})", to_string(p));
      if (searches_batch(point)) return "micro_batch=0 searches device memory: CUDA devices only";
      return std::nullopt;
    }
    if (const ModelConfig c = config_from(point); c.attention == kernels::train::Attention::Fused) {
      if (!fused_takes(point.text("precision"))) {
        return fmt::format("attention=fused on CUDA devices is cuDNN's fused SDPA, which takes 16-bit activations "
                           "(fp16-amp, bf16-amp, fp8): precision={} runs attention=unfused",
                           point.text("precision"));
      }
      if (auto why = fused_unsupported(c)) return why;
    }
    if (device.cc_major < 8) {
      return fmt::format("compute capability {}.{}: gpubench targets sm_80 and newer", device.cc_major, device.cc_minor);
    }
    return std::nullopt;
  }

  std::unique_ptr<Case> make_case(const DeviceInfo& device, const Point& point) const override {
    const DpMode mode = *parse_dp(point.text("dp"));
    if (device.is_cuda()) {
      const Precision p = parse_precision(point.text("precision"));
      if (mode != DpMode::None) return make_cuda_dp_case(device, config_from(point), p, mode, bucket_mb(point));
      return make_cuda_case(device, config_from(point), p, searches_batch(point), bucket_mb(point), point.given("attention"));
    }
    if (mode != DpMode::None) return make_cpu_dp_case(config_from(point), mode, bucket_mb(point));
    return make_cpu_case(config_from(point), bucket_mb(point));
  }

  nlohmann::ordered_json libraries() const override { return library_versions(); }

 private:
  static bool fused_takes(const std::string& precision) { return precision != "fp32" && precision != "tf32"; }

  // attention=fused on CUDA: cuDNN's SDPA, for the benchmark's head dimension (the tiny
  // verification model keeps it: verify.hpp's tiny_config).
  static std::optional<std::string> fused_unsupported(const ModelConfig& c) {
    if (!attention::cudnn_built()) {
      return "attention=fused on CUDA devices runs cuDNN's fused SDPA, and " + *attention::cudnn_unavailable() +
             " (attention=unfused runs)";
    }
    if (const std::int64_t d = c.head_dim(); d % 8 != 0 || d > 256) {
      return fmt::format("attention=fused: cuDNN's fused SDPA takes head dimensions in multiples of 8 up to 256; "
                         "this model has {} (hidden / heads)",
                         d);
    }
    if (auto why = attention::cudnn_unavailable()) return *why + " (attention=unfused runs without it)";
    return std::nullopt;
  }

  // precision=fp8: the CPU times no emulation; a GPU needs fp8 Tensor Cores, and the model's
  // linear layers (and the tiny configuration they are verified on) dimensions cuBLASLt's fp8
  // GEMMs take.
  static std::optional<std::string> fp8_unsupported(const DeviceInfo& device, const Point& point) {
    if (!device.is_cuda()) {
      return std::string("precision=fp8 on the CPU would time an emulation (the linear layers' GEMM inputs rounded "
                         "to E4M3/E5M2 with per-tensor current scaling), not fp8 hardware: its loss parity with "
                         "bf16 is a unit test (tests/unit/test_train_fp8.cpp), not a measurement");
    }
    if (device.cc_major * 10 + device.cc_minor < 89) {
      return fmt::format("precision=fp8 needs fp8 Tensor Cores (cuBLASLt's fp8 GEMMs: compute capability 8.9 or newer); "
                         "this GPU is sm_{}{}",
                         device.cc_major, device.cc_minor);
    }
    const ModelConfig c = config_from(point);
    if (searches_batch(point) && (c.kind == kernels::train::ModelKind::Mlp || c.seq % 16 != 0)) {
      return "precision=fp8 with micro_batch=0: the search tries every micro-batch, and fp8 needs the rows in "
             "multiples of 16 (a transformer whose seq is a multiple of 16 searches)";
    }
    if (auto why = kernels::train::fp8_dims_error(c)) return *why;
    if (auto why = kernels::train::fp8_dims_error(tiny_config(c, Precision::FP8))) {
      return "the tiny configuration fp8 is verified on: " + *why;
    }
    return std::nullopt;
  }
};

}  // namespace

Precision parse_precision(const std::string& s) {
  if (s == "fp32") return Precision::FP32;
  if (s == "tf32") return Precision::TF32;
  if (s == "fp16-amp") return Precision::FP16Amp;
  if (s == "bf16-amp") return Precision::BF16Amp;
  if (s == "fp8") return Precision::FP8;
  throw std::logic_error("train: unknown precision " + s);
}

std::string to_string(Precision p) {
  switch (p) {
    case Precision::FP32: return "fp32";
    case Precision::TF32: return "tf32";
    case Precision::FP16Amp: return "fp16-amp";
    case Precision::BF16Amp: return "bf16-amp";
    case Precision::FP8: return "fp8";
  }
  return "";
}

std::string peak_key(Precision p) {
  switch (p) {
    case Precision::FP32: return "fp32";
    case Precision::TF32: return "tf32_tensor";
    case Precision::FP16Amp: return "fp16_tensor";
    case Precision::BF16Amp: return "bf16_tensor";
    case Precision::FP8: return "fp8_tensor";
  }
  return "";
}

ModelConfig config_from(const Point& point) {
  ModelConfig c;
  c.kind = *kernels::train::parse_model(point.text("model"));
  c.layers = point.integer("layers");
  c.hidden = point.integer("hidden");
  c.heads = point.integer("heads");
  c.ffn_mult = point.integer("ffn_mult");
  c.seq = point.integer("seq");
  c.batch = std::max<std::int64_t>(point.integer("micro_batch"), 1);
  c.vocab = point.integer("vocab");
  c.accum = point.integer("accum");
  c.recompute = *kernels::train::parse_recompute(point.text("recompute"));
  // Points built by hand (tests, tune) may leave the axis out: unfused, as before it existed.
  for (const auto& [name, value] : point.values()) {
    if (name == "attention" && std::holds_alternative<std::string>(value)) {
      c.attention = kernels::train::parse_attention(std::get<std::string>(value)).value_or(kernels::train::Attention::Unfused);
    }
  }
  if (auto e = kernels::train::config_error(c)) throw UsageError(fmt::format("train {}: {}", point.label(), *e));
  // Token ids and the cblas dimensions are 32-bit (each factor is checked first so the
  // products cannot overflow).
  constexpr std::int64_t kIntMax = 0x7fffffff;
  bool too_large = false;
  for (std::int64_t v : {c.layers, c.hidden, c.heads, c.ffn_mult, c.seq, c.batch, c.vocab, c.accum}) {
    too_large = too_large || v > kIntMax;
  }
  if (too_large || c.rows() > kIntMax || c.ffn() > kIntMax || c.seq * c.seq > kIntMax) {
    throw UsageError(fmt::format("train {}: dimensions beyond 2^31-1 are not supported", point.label()));
  }
  return c;
}

bool searches_batch(const Point& point) { return point.integer("micro_batch") == 0; }

nlohmann::ordered_json step_split(double attention_s, double dense_s, double total_s, int steps,
                                  const std::string& source) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (!(total_s > 0) || steps <= 0) return j;
  attention_s = std::clamp(attention_s, 0.0, total_s);
  dense_s = std::clamp(dense_s, 0.0, total_s - attention_s);
  const double other_s = total_s - attention_s - dense_s;
  j["attention_s"] = attention_s / steps;
  j["dense_gemm_s"] = dense_s / steps;
  j["other_s"] = other_s / steps;
  j["attention_fraction"] = attention_s / total_s;
  j["dense_gemm_fraction"] = dense_s / total_s;
  j["other_fraction"] = other_s / total_s;
  j["steps"] = steps;
  j["source"] = source;
  return j;
}

Metrics step_metrics(const ModelConfig& c, Precision p) {
  const kernels::train::StepFlops f = kernels::train::step_flops(c);
  Metrics m;
  m.flops = f.model;
  m.hardware_flops = f.hardware;
  m.peak_key = peak_key(p);
  m.items = static_cast<double>(c.accum * c.rows());
  m.items_unit = c.kind == ModelKind::Transformer ? "tokens" : "samples";
  if (p == Precision::FP8) m.extra["mfu_peak"] = kFp8MfuPeakNote;
  return m;
}

std::unique_ptr<Suite> make_suite() { return std::make_unique<TrainSuite>(); }

}  // namespace gpubench::suites::train
