#include "bench/suites/train/verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bench/suites/train/train.hpp"
#include "kernels/train/model_reference.hpp"
#include "kernels/train/ops_reference.hpp"

namespace gpubench::suites::train {

using kernels::train::ModelConfig;
using kernels::train::ModelKind;
using kernels::train::Recompute;

GradTolerance grad_tolerance(Precision p) {
  switch (p) {
    case Precision::FP32: return {1e-3, 1e-3};
    case Precision::TF32: return {2e-2, 1e-2};
    case Precision::BF16Amp: return {1e-1, 5e-2};
    case Precision::FP16Amp: return {5e-2, 2e-2};
    case Precision::FP8: return {2.5e-1, 2e-1};
  }
  return {};
}

double loss_tolerance(Precision p) {
  switch (p) {
    case Precision::FP32: return kLossTolerance;
    case Precision::TF32: return 2e-3;
    case Precision::BF16Amp: return 2e-2;
    case Precision::FP16Amp: return 1e-2;
    case Precision::FP8: return 5e-2;
  }
  return kLossTolerance;
}

kernels::train::LinearInputs reference_linear_inputs(Precision p) {
  return p == Precision::FP8 ? kernels::train::LinearInputs::Fp8 : kernels::train::LinearInputs::Exact;
}

double estimated_bytes(const ModelConfig& c, std::size_t element_bytes) {
  const double L = static_cast<double>(c.layers), C = static_cast<double>(c.hidden), V = static_cast<double>(c.vocab);
  const double n = static_cast<double>(c.batch) * (c.kind == ModelKind::Transformer ? static_cast<double>(c.seq) : 1);
  double params = kernels::train::matmul_params(c), acts = (L + 1) * n * C + n * V + 4 * n * C;
  if (c.kind == ModelKind::Mlp) {
    acts += L * n * C;
  } else {
    const double T = static_cast<double>(c.seq), F = static_cast<double>(c.ffn()), H = static_cast<double>(c.heads);
    params += T * C + L * (9 * C + F) + 2 * C;
    const double blocks = c.recompute == Recompute::Block ? 1 : L;
    const double mlps = c.recompute == Recompute::None ? L : 1;
    // Unfused attention keeps each head's [T x T] probabilities and a [T x T] scratch; fused
    // keeps one log-sum-exp per row.
    const bool fused = c.attention == kernels::train::Attention::Fused;
    const double kept = static_cast<double>(c.batch) * H * T * (fused ? 1 : T);
    acts += blocks * (8 * n * C + 4 * n + kept) + mlps * 2 * n * F + 3 * n * C + n * F + (fused ? 0 : T * T);
  }
  return (4 * params + acts) * static_cast<double>(element_bytes);
}

Verification compare_gradients(const std::vector<double>& got, const std::vector<double>& want,
                               const kernels::train::ParamLayout& layout, const GradTolerance& tol) {
  Verification v;
  v.passed = true;
  for (const kernels::train::ParamTensor& t : layout.tensors) {
    double scale = 0;
    for (std::int64_t i = 0; i < t.size; ++i) scale = std::max(scale, std::abs(want[static_cast<std::size_t>(t.offset + i)]));
    for (std::int64_t i = 0; i < t.size; ++i) {
      const std::size_t k = static_cast<std::size_t>(t.offset + i);
      const double limit = tol.rtol * std::abs(want[k]) + tol.atol * scale;
      const double err = std::abs(got[k] - want[k]);
      const double ratio = limit > 0 ? err / limit : (err == 0 ? 0 : INFINITY);
      ++v.checked;
      v.max_error = std::max(v.max_error, std::isnan(ratio) ? INFINITY : ratio);
      if (v.passed && !(ratio <= 1)) {
        v.passed = false;
        v.detail = fmt::format("gradient {}[{}] = {} (reference {})", t.name, i, got[k], want[k]);
      }
    }
  }
  return v;
}

double normalized_distance(const std::vector<double>& got, const std::vector<double>& other,
                           const kernels::train::ParamLayout& layout) {
  double worst = 0;
  for (const kernels::train::ParamTensor& t : layout.tensors) {
    double scale = 0, diff = 0;
    for (std::int64_t i = 0; i < t.size; ++i) {
      const std::size_t k = static_cast<std::size_t>(t.offset + i);
      scale = std::max(scale, std::abs(other[k]));
      diff = std::max(diff, std::abs(got[k] - other[k]));
    }
    if (scale > 0) worst = std::max(worst, diff / scale);
  }
  return worst;
}

Verification fp8_differs_from_bf16(const std::vector<double>& fp8, const std::vector<double>& bf16,
                                   const kernels::train::ParamLayout& layout) {
  Verification v;
  v.checked = layout.count;
  const double d = normalized_distance(fp8, bf16, layout);
  v.passed = d >= kFp8DistinctFloor;
  v.method = fmt::format("the fp8 step's gradients differ from the bf16 step's by >= {} of each tensor's scale",
                         kFp8DistinctFloor);
  if (!v.passed) {
    v.detail = fmt::format("the fp8 step's gradients are within {:.3g} of the bf16 step's (at least {} expected): "
                           "did the step run in fp8?",
                           d, kFp8DistinctFloor);
  }
  return v;
}

Verification verify_tiny_step_cpu(const ModelConfig& c) {
  const ModelConfig t = tiny_config(c);
  kernels::train::ReferenceModel<float> f(t, kModelSeed);
  // The oracle computes attention unfused: a fused step is checked against the unfused one.
  ModelConfig unfused = t;
  unfused.attention = kernels::train::Attention::Unfused;
  kernels::train::ReferenceModel<double> d(unfused, kModelSeed);
  std::vector<kernels::train::Batch> micro;
  for (std::int64_t i = 0; i < t.accum; ++i) micro.push_back(kernels::train::make_batch(t, kBatchSeed + i));
  const double loss_f = f.train_step(micro, {});
  const double loss_d = d.train_step(micro, {});
  const std::vector<double> got(f.grads().begin(), f.grads().end());
  Verification v = compare_gradients(got, d.grads(), d.layout(), GradTolerance{});
  v.method = fmt::format("tiny {} step (float{} vs double reference{}): loss and all {} gradients", to_string(t.kind),
                         t.attention == kernels::train::Attention::Fused ? ", fused attention" : "",
                         t.kind == ModelKind::Transformer ? ", unfused attention" : "", d.layout().count);
  const double err = std::abs(loss_f - loss_d) / (kLossTolerance * (1 + std::abs(loss_d)));
  ++v.checked;
  v.max_error = std::max(v.max_error, err);
  if (v.passed && !(err <= 1)) {
    v.passed = false;
    v.detail = fmt::format("tiny-configuration loss {} (reference {})", loss_f, loss_d);
  }
  return v;
}

}  // namespace gpubench::suites::train
