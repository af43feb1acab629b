// The CPU device: the reference model in fp32 (OpenBLAS matmuls) is the benchmark.
// Verification, before any timing: the same step on a tiny configuration of the same model,
// accumulation and recompute, in float against double (every parameter gradient and the loss;
// the double reference is checked against finite differences in tests/unit), and on the
// benchmark's own configuration the float loss against a double evaluation.
#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "bench/core/errors.hpp"
#include "bench/core/phase.hpp"
#include "bench/suites/train/dp.hpp"
#include "bench/suites/train/train.hpp"
#include "bench/suites/train/verify.hpp"
#include "kernels/train/model_reference.hpp"

namespace gpubench::suites::train {
namespace {

using kernels::train::AdamW;
using kernels::train::Batch;
using kernels::train::ReferenceModel;

using Clock = std::chrono::steady_clock;

// Above this many bytes the double model of the benchmark configuration is not built (the loss
// check on the full configuration is then left out; the tiny-configuration check still runs).
constexpr double kFullCheckBytes = 4.0 * (1ull << 30);

class CpuStepCase final : public HostCase {
 public:
  CpuStepCase(const ModelConfig& c, double bucket_mb) : c_(c), bucket_mb_(bucket_mb) {}

  void setup() override {
    const double need = estimated_bytes(c_, sizeof(float));
    if (need > 0.5 * static_cast<double>(1ull << 40)) {
      throw CaseSkipped(fmt::format("the model needs about {:.3g} GB of host memory", need / 1e9));
    }
    try {
      model_ = std::make_unique<ReferenceModel<float>>(c_, kModelSeed);
      for (std::int64_t i = 0; i < c_.accum; ++i) micro_.push_back(kernels::train::make_batch(c_, kBatchSeed + i));
    } catch (const std::bad_alloc&) {
      throw CaseSkipped(fmt::format("out of host memory for the model (about {:.3g} GB)", need / 1e9));
    } catch (const std::length_error&) {
      throw CaseSkipped(fmt::format("out of host memory for the model (about {:.3g} GB)", need / 1e9));
    }
  }

  Verification verify() override {
    Verification v = verify_tiny_step_cpu(c_);
    if (!v.passed) return v;
    // The benchmark's own configuration: its first loss in float against double.
    if (estimated_bytes(c_, sizeof(double)) <= kFullCheckBytes) {
      ModelConfig unfused = c_;  // the oracle: attention materialised, as verify_tiny_step_cpu
      unfused.attention = kernels::train::Attention::Unfused;
      ReferenceModel<double> exact(unfused, kModelSeed);
      const double want = exact.forward(micro_.front());
      const double got = model_->forward(micro_.front());
      const double err = std::abs(got - want) / (kLossTolerance * (1 + std::abs(want)));
      v.checked += 1;
      v.max_error = std::max(v.max_error, err);
      v.method += "; loss of the benchmark configuration, float vs double";
      if (!(err <= 1)) {
        v.passed = false;
        v.detail = fmt::format("loss of the benchmark configuration {} (double: {})", got, want);
        return v;
      }
    } else {
      v.method += "; benchmark configuration too large for a double loss check";
    }
    // The phase split, from steps timed phase by phase (outside the measured runs).
    // The same steps also split the time ml-engineering's way: attention, dense products, the rest.
    phase_s_ = {0, 0, 0};
    ops_ = {};
    model_->set_op_seconds(&ops_);
    std::vector<double> steps;
    for (int i = 0; i < kPhaseSteps; ++i) steps.push_back(step(true));
    model_->set_op_seconds(nullptr);
    // The gradient bucket timeline (docs/results-format.md): when each bucket's gradients are
    // complete in the last micro-step's backward, from one more step.
    const BucketPlan plan = plan_buckets(model_->layout(), bucket_mb_, sizeof(float), DpMode::None, 1);
    std::vector<double> ready(plan.buckets.size(), 0.0);
    std::size_t recorded = 0;
    Clock::time_point backward_start;
    double backward_s = 0;
    auto on_last = [&](bool begin) {
      if (begin) {
        backward_start = Clock::now();
        model_->set_grad_ready_hook([&](std::int64_t watermark) {
          for (const std::size_t n = plan.ready_count(watermark); recorded < n; ++recorded) {
            ready[recorded] = std::chrono::duration<double>(Clock::now() - backward_start).count();
          }
        });
      } else {
        backward_s = std::chrono::duration<double>(Clock::now() - backward_start).count();
        model_->set_grad_ready_hook(nullptr);
      }
    };
    steps.push_back(step(false, on_last));
    std::sort(steps.begin(), steps.end());
    timeline_ = timeline_details(plan, bucket_mb_, ready, backward_s, steps[steps.size() / 2], model_->layout().count,
                                 std::nullopt);
    if (c_.kind == kernels::train::ModelKind::Transformer) {
      const double total = phase_s_[0] + phase_s_[1] + phase_s_[2];
      timeline_["step_split"] = step_split(ops_.attention, ops_.dense, total, kPhaseSteps,
                                           "host clock around each attention and dense-product call");
    }
    return v;
  }

  void run() override { (void)step(false); }

  nlohmann::ordered_json details(std::int64_t) override { return timeline_; }

  Metrics metrics() const override {
    Metrics m = step_metrics(c_, Precision::FP32);
    m.extra["params"] = static_cast<double>(model_->layout().count);
    m.extra["peak_memory_bytes"] = static_cast<double>(model_->memory_bytes());
    const double total = phase_s_[0] + phase_s_[1] + phase_s_[2];
    if (total > 0) {
      m.extra["forward_fraction"] = phase_s_[0] / total;
      m.extra["backward_fraction"] = phase_s_[1] / total;
      m.extra["optimizer_fraction"] = phase_s_[2] / total;
    }
    return m;
  }

 private:
  static constexpr int kPhaseSteps = 2;

  // One optimizer step; with `timed`, adds each phase's host time to phase_s_. `last_backward`
  // is called just before (true) and after (false) the last micro-step's backward. Returns the
  // step's seconds.
  double step(bool timed, const std::function<void(bool)>& last_backward = {}) {
    const auto start = Clock::now();
    auto lap = [&, t = Clock::now()](int phase) mutable {
      if (!timed) return;
      const auto now = Clock::now();
      phase_s_[static_cast<std::size_t>(phase)] += std::chrono::duration<double>(now - t).count();
      t = now;
    };
    model_->zero_grads();
    lap(2);  // zeroing the gradients is the optimizer's work
    for (const Batch& b : micro_) {
      {
        PhaseScope p("forward");
        (void)model_->forward(b);
      }
      lap(0);
      const bool last = &b == &micro_.back();
      if (last && last_backward) last_backward(true);
      {
        PhaseScope p("backward");
        model_->backward(b, 1.0 / static_cast<double>(micro_.size()));
      }
      if (last && last_backward) last_backward(false);
      lap(1);
    }
    PhaseScope p("optimizer");
    model_->optimizer_step(AdamW{});
    lap(2);
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  ModelConfig c_;
  double bucket_mb_;
  nlohmann::ordered_json timeline_ = nlohmann::ordered_json::object();
  std::unique_ptr<ReferenceModel<float>> model_;
  std::vector<Batch> micro_;
  std::array<double, 3> phase_s_{};  // forward, backward, optimizer
  kernels::train::OpSeconds ops_;    // attention and dense products over the same steps
};

}  // namespace

std::unique_ptr<Case> make_cpu_case(const ModelConfig& c, double bucket_mb) {
  return std::make_unique<CpuStepCase>(c, bucket_mb);
}

nlohmann::ordered_json library_versions() {
  return {{"openblas", openblas_get_config()}, {"cublaslt", cublaslt_version()}};
}

}  // namespace gpubench::suites::train
