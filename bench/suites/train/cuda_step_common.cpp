// The GPU steps' shared pieces (cuda_step_common.hpp).
#include "bench/suites/train/cuda_step_common.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "bench/suites/train/verify.hpp"

namespace gpubench::suites::train {

using kernels::train::GpuModel;
using kernels::train::GpuPrecision;

std::string cublaslt_version() { return blas::lt_version(); }

GpuPrecision gpu_precision(Precision p) {
  switch (p) {
    case Precision::FP32: return GpuPrecision::FP32;
    case Precision::TF32: return GpuPrecision::TF32;
    case Precision::FP16Amp: return GpuPrecision::FP16;
    case Precision::BF16Amp: return GpuPrecision::BF16;
    case Precision::FP8: return GpuPrecision::FP8;
  }
  return GpuPrecision::FP32;
}

std::unique_ptr<GpuModel> make_gpu_model(const ModelConfig& c, Precision p, cudaStream_t stream,
                                         const kernels::train::ParamLayout* layout, FusedFallback* fallback) {
  std::unique_ptr<kernels::train::FusedAttention> fused;
  ModelConfig built = c;
  if (c.kind == kernels::train::ModelKind::Transformer && c.attention == kernels::train::Attention::Fused) {
    try {
      fused = make_fused_attention(c, p != Precision::FP16Amp, stream);  // bf16 activations but for fp16-amp
    } catch (const CaseSkipped& e) {
      const FusedRefusal r = on_fused_refused(fallback == nullptr || fallback->attention_given, e.what());
      if (!r.fall_back) throw CaseSkipped(r.note);
      fallback->note = r.note;
      built.attention = kernels::train::Attention::Unfused;
    }
  }
  return std::make_unique<GpuModel>(built, gpu_precision(p), kModelSeed, stream, layout, std::move(fused));
}

std::vector<kernels::train::Batch> rank_batches(const ModelConfig& c, int rank) {
  std::vector<kernels::train::Batch> v;
  for (std::int64_t i = 0; i < c.accum; ++i) {
    v.push_back(kernels::train::make_batch(c, kBatchSeed + static_cast<std::uint64_t>(rank * c.accum + i)));
  }
  return v;
}

bool too_large_for(const ModelConfig& c, const DeviceInfo& device) {
  return estimated_bytes(c, 2) > static_cast<double>(device.memory_bytes);
}

void skip_when_too_large(const ModelConfig& c, const DeviceInfo& device) {
  if (!too_large_for(c, device)) return;
  throw CaseSkipped(fmt::format("the step needs about {:.3g} GB, more than the device's {:.3g} GB",
                                estimated_bytes(c, 2) / 1e9, static_cast<double>(device.memory_bytes) / 1e9));
}

std::optional<std::string> first_loss_problem(double loss, std::int64_t vocab) {
  const double expect = std::log(static_cast<double>(vocab));
  if (std::isfinite(loss) && std::abs(loss - expect) <= 0.25 * expect) return std::nullopt;
  return fmt::format("first loss of the benchmark configuration {} (log(vocab) = {})", loss, expect);
}

}  // namespace gpubench::suites::train
