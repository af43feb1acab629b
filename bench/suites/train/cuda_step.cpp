// The CUDA device: GpuModel (kernels/train/gpu_model.hpp) at the point's precision.
// Verification, before any timing: the same step (model, recompute, accumulation up to 2) on
// the tiny configuration against the double reference, loss and every parameter gradient
// within the precision's tolerance (verify.hpp); then one step of the benchmark configuration,
// whose loss must be finite and near log(vocab) (small initial weights predict near-uniformly).
// Outside the measured runs, the phase split and the gradient bucket timeline (dp.hpp's
// timeline_details: when each bucket of a `bucket_mb` plan is complete in the last micro-step's
// backward, from events after each backward stage), which `gpubench scaling` projects from.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>

#include "bench/core/cuda.hpp"
#include "bench/core/cuda_case.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/phase.hpp"
#include "bench/suites/train/cuda_step_common.hpp"
#include "bench/suites/train/dp.hpp"
#include "bench/suites/train/dp_gpu_plan.hpp"
#include "bench/suites/train/largest_batch.hpp"
#include "bench/suites/train/train.hpp"
#include "bench/suites/train/verify.hpp"
#include "kernels/blas/cublaslt.hpp"
#include "kernels/train/gpu_model.hpp"

namespace gpubench::suites::train {
namespace {

// What the case needs beside its model once the search is over (the tiny verification model with
// its own cuBLASLt workspace, events): every trial keeps this much device memory free beside its
// model. Without it the size found was the last that fitted with nothing to spare, and the case
// ran out of memory in verification (H200, 2026-12-04: 33554432 bytes, one cuBLASLt workspace).
constexpr std::size_t kSearchHeadroomBytes = std::size_t{512} << 20;

using kernels::train::AdamW;
using kernels::train::Batch;
using kernels::train::DeviceOutOfMemory;
using kernels::train::GpuModel;

class CudaStepCase final : public CudaCase {
 public:
  CudaStepCase(const DeviceInfo& device, const ModelConfig& c, Precision p, bool search, double bucket_mb,
               bool attention_given)
      : CudaCase(device), c_(c), p_(p), search_(search), bucket_mb_(bucket_mb) {
    fused_.attention_given = attention_given;
  }

  void setup() override {
    if (search_) search_batch();
    skip_when_too_large(c_, device());
    free_before_ = free_bytes();
    skip_on_oom([&] { build_model(); });
  }

  Verification verify() override {
    Verification v = skip_on_oom([&] { return verify_tiny(); });
    if (!v.passed) return v;
    // The benchmark configuration: one step, a sane loss.
    skip_on_oom([&] { run(); });
    free_after_step_ = free_bytes();
    ++v.checked;
    v.method += std::string("; ") + kFirstLossMethod;
    if (const auto problem = first_loss_problem(model_->loss(), c_.vocab)) {
      v.passed = false;
      v.detail = *problem;
      return v;
    }
    measure_phases();
    measure_timeline();
    timeline_["step_split"] = measure_split();
    return v;
  }

  nlohmann::ordered_json details(std::int64_t) override { return timeline_; }

  // A default fused attention cuDNN refused ran unfused: the point says so.
  void annotate(nlohmann::ordered_json& g, double) const override {
    if (!fused_.note.empty()) g["axes"]["attention"] = "unfused";
  }

  void run() override {
    {
      PhaseScope p("optimizer");  // zeroing the gradients belongs to the optimizer
      model_->zero_grads();
    }
    for (std::size_t i = 0; i < static_cast<std::size_t>(c_.accum); ++i) {
      {
        PhaseScope p("forward");
        model_->forward(i);
      }
      PhaseScope p("backward");
      model_->backward(i);
    }
    PhaseScope p("optimizer");
    model_->optimizer_step(AdamW{});
  }

  Metrics metrics() const override {
    Metrics m = step_metrics(c_, p_);
    m.extra["params"] = static_cast<double>(model_->layout().count);
    m.extra["peak_memory_bytes"] = static_cast<double>(model_->memory_bytes());
    // Device-wide, so it includes cuBLASLt's own allocations (and anything else that ran meanwhile).
    if (free_before_ > free_after_step_) {
      m.extra["device_memory_used_bytes"] = static_cast<double>(free_before_ - free_after_step_);
    }
    const double total = phase_s_[0] + phase_s_[1] + phase_s_[2];
    if (total > 0) {
      m.extra["forward_fraction"] = phase_s_[0] / total;
      m.extra["backward_fraction"] = phase_s_[1] / total;
      m.extra["optimizer_fraction"] = phase_s_[2] / total;
    }
    if (p_ == Precision::FP16Amp) m.extra["loss_scale"] = model_->scaler().scale();
    if (const std::string a = model_->attention_description(); !a.empty()) m.extra["attention_kernel"] = a;
    if (!fused_.note.empty()) m.extra["attention_fallback"] = fused_.note;
    if (search_) {
      m.extra["largest_micro_batch"] = static_cast<double>(c_.batch);
      m.extra["batch_search_trials"] = static_cast<double>(search_trials_);
      m.extra["batch_search_headroom_bytes"] = static_cast<double>(kSearchHeadroomBytes);
      if (!search_first_error_.empty()) m.extra["batch_search_first_error"] = search_first_error_;
    }
    return m;
  }

 private:
  // The largest micro-batch whose model fits and runs a step; each trial's model is destroyed
  // (its memory freed) before the next. The case then runs at that micro-batch.
  void search_batch() {
    auto fits = [&](std::int64_t b) {
      ModelConfig t = c_;
      t.batch = b;
      if (kernels::train::config_error(t) || too_large_for(t, device())) return false;
      void* spare = nullptr;
      if (cudaMalloc(&spare, kSearchHeadroomBytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
      }
      const std::unique_ptr<void, cudaError_t (*)(void*)> held(spare, &cudaFree);
      try {
        const std::unique_ptr<GpuModel> m = make_gpu_model(t, p_, stream(), nullptr, &fused_);
        note_fallback();
        m->upload(rank_batches(t, 0));
        m->step(AdamW{});
        (void)m->loss();  // waits for the step
        return true;
      } catch (const DeviceOutOfMemory&) {
        return false;
      } catch (const blas::LtError& e) {
        if (e.status() == CUBLAS_STATUS_ALLOC_FAILED) return false;
        throw;
      }
    };
    const BatchSearch s = find_largest_batch(fits, 1, std::int64_t{1} << 20);
    search_trials_ = static_cast<std::int64_t>(s.trials.size());
    // A trial that threw (not out of memory) ended the search below what memory allows: the
    // figure must say so, or "largest micro-batch" would silently be a launch limit.
    search_first_error_ = s.first_error;
    if (s.largest == 0) throw CaseSkipped("not even micro-batch 1 fits in device memory");
    c_.batch = s.largest;
  }

  // The benchmark's model (a fused attention cuDNN refuses falls back by fused_'s rule).
  void build_model() {
    model_.reset();
    model_ = make_gpu_model(c_, p_, stream(), nullptr, &fused_);
    note_fallback();
    model_->upload(rank_batches(c_, 0));
  }
  // After a fallback every later model (the tiny one, the next search trial) is unfused too.
  void note_fallback() {
    if (!fused_.note.empty()) c_.attention = kernels::train::Attention::Unfused;
  }

  Verification verify_tiny() {
    const bool was_fused = c_.attention == kernels::train::Attention::Fused;
    const ModelConfig t = tiny_config(c_, p_);
    const std::unique_ptr<GpuModel> gpu = make_gpu_model(t, p_, stream(), nullptr, &fused_);
    note_fallback();
    // cuDNN took the benchmark's graph but not the tiny one's: the fused step cannot be
    // verified, so the benchmark runs unfused too (what is timed is what was verified).
    if (was_fused && c_.attention != kernels::train::Attention::Fused) build_model();
    const std::vector<Batch> micro = rank_batches(t, 0);
    kernels::train::ReferenceModel<double> ref(t, kModelSeed);
    double want_loss = 0;
    {
      kernels::train::ScopedLinearInputs emulate(reference_linear_inputs(p_));
      want_loss = ref.train_step(micro, AdamW{});
    }
    GpuModel& g = *gpu;
    g.upload(micro);
    // fp16: steps skipped for overflow leave the weights alone; compare the first applied one.
    bool applied = false;
    for (int i = 0; i < 40 && !applied; ++i) applied = g.step(AdamW{});
    Verification v;
    if (!applied) {
      v.detail = "fp16: every step of the tiny configuration overflowed";
      return v;
    }
    v = compare_gradients(g.gradients(), ref.grads(), ref.layout(), grad_tolerance(p_));
    v.method = fmt::format("tiny {} step ({} on the GPU vs the double CPU reference{}): loss and all {} gradients",
                           to_string(t.kind), to_string(p_),
                           p_ == Precision::FP8 ? " with the same fp8 scaling emulated" : "", ref.layout().count);
    const double got_loss = g.loss();
    const double err = std::abs(got_loss - want_loss) / (loss_tolerance(p_) * (1 + std::abs(want_loss)));
    ++v.checked;
    v.max_error = std::max(v.max_error, std::isfinite(err) ? err : INFINITY);
    if (v.passed && !(err <= 1)) {
      v.passed = false;
      v.detail = fmt::format("tiny-configuration loss {} (reference {})", got_loss, want_loss);
    }
    if (v.passed && p_ == Precision::FP8) {
      // The same tiny step in bf16 on the GPU: fp8 must not be it.
      FusedFallback bf16_fallback{false, {}};
      const std::unique_ptr<GpuModel> bf16 = make_gpu_model(t, Precision::BF16Amp, stream(), nullptr, &bf16_fallback);
      bf16->upload(micro);
      (void)bf16->step(AdamW{});
      const Verification distinct = fp8_differs_from_bf16(g.gradients(), bf16->gradients(), ref.layout());
      v.checked += distinct.checked;
      v.method += "; " + distinct.method;
      if (!distinct.passed) {
        v.passed = false;
        v.detail = distinct.detail;
      }
    }
    return v;
  }

  // Two steps with events between the phases (outside the measured runs).
  void measure_phases() {
    std::array<cuda::Event, 4> ev;
    phase_s_ = {0, 0, 0};
    for (int s = 0; s < 2; ++s) {
      ev[0].record(stream());
      model_->zero_grads();
      double fwd = 0, bwd = 0;
      for (std::size_t i = 0; i < static_cast<std::size_t>(c_.accum); ++i) {
        cuda::Event a, b, c;
        a.record(stream());
        model_->forward(i);
        b.record(stream());
        model_->backward(i);
        c.record(stream());
        fwd += cuda::Event::elapsed_ms(a, b) * 1e-3;
        bwd += cuda::Event::elapsed_ms(b, c) * 1e-3;
      }
      ev[1].record(stream());
      model_->optimizer_step(AdamW{});
      ev[2].record(stream());
      const double total = cuda::Event::elapsed_ms(ev[0], ev[2]) * 1e-3;
      phase_s_[0] += fwd;
      phase_s_[1] += bwd;
      phase_s_[2] += std::max(0.0, total - fwd - bwd);
      step_s_.push_back(total);
    }
  }

  // One more step with events around its attention and dense products (GpuModel::set_op_timing):
  // the split the report shows, and the share of a bf16 step that fp8 cannot speed up.
  nlohmann::ordered_json measure_split() {
    cuda::Event start, end;
    model_->set_op_timing(true);
    start.record(stream());
    run_step();
    end.record(stream());
    const kernels::train::OpSeconds ops = model_->op_seconds();
    model_->set_op_timing(false);
    return step_split(ops.attention, ops.dense, cuda::Event::elapsed_ms(start, end) * 1e-3, 1,
                      "CUDA events around each attention block and dense product, one step outside the measured runs");
  }
  void run_step() {
    model_->zero_grads();
    for (std::size_t i = 0; i < static_cast<std::size_t>(c_.accum); ++i) {
      model_->forward(i);
      model_->backward(i);
    }
    model_->optimizer_step(AdamW{});
  }

  // One more step with an event after each backward stage of the last micro-step: each bucket
  // is ready at the stage that completes it (dp_gpu_plan.hpp's buckets_by_stage).
  void measure_timeline() {
    const BucketPlan plan = plan_buckets(model_->layout(), bucket_mb_, sizeof(float), DpMode::None, 1);
    const std::vector<std::vector<std::size_t>> starts = buckets_by_stage(plan, stage_watermarks(c_));
    std::vector<std::unique_ptr<cuda::Event>> stage_done;
    for (std::size_t i = 0; i < starts.size(); ++i) stage_done.push_back(std::make_unique<cuda::Event>());
    cuda::Event start, backward_start, backward_end, end;
    start.record(stream());
    model_->zero_grads();
    for (std::size_t i = 0; i < static_cast<std::size_t>(c_.accum); ++i) {
      model_->forward(i);
      const bool last = i + 1 == static_cast<std::size_t>(c_.accum);
      if (last) {
        backward_start.record(stream());
        model_->set_backward_hook([&](std::size_t stage) { stage_done.at(stage)->record(stream()); });
      }
      model_->backward(i);
      model_->set_backward_hook({});
      if (last) backward_end.record(stream());
    }
    model_->optimizer_step(AdamW{});
    end.record(stream());
    std::vector<double> ready(plan.buckets.size(), 0.0);
    for (std::size_t s = 0; s < starts.size(); ++s) {
      for (std::size_t b : starts[s]) ready[b] = cuda::Event::elapsed_ms(backward_start, *stage_done[s]) * 1e-3;
    }
    step_s_.push_back(cuda::Event::elapsed_ms(start, end) * 1e-3);
    std::sort(step_s_.begin(), step_s_.end());
    timeline_ = timeline_details(plan, bucket_mb_, ready, cuda::Event::elapsed_ms(backward_start, backward_end) * 1e-3,
                                 step_s_[step_s_.size() / 2], model_->layout().count, std::nullopt);
  }

  ModelConfig c_;
  Precision p_;
  static std::size_t free_bytes() {
    std::size_t free = 0, total = 0;
    return cudaMemGetInfo(&free, &total) == cudaSuccess ? free : 0;
  }

  std::size_t free_before_ = 0, free_after_step_ = 0;
  bool search_ = false;
  std::int64_t search_trials_ = 0;
  std::string search_first_error_;  // the first trial that failed other than out of memory
  FusedFallback fused_;
  std::unique_ptr<GpuModel> model_;
  std::array<double, 3> phase_s_{};
  double bucket_mb_ = kDefaultBucketMb;
  std::vector<double> step_s_;  // the steps timed outside the measured runs
  nlohmann::ordered_json timeline_ = nlohmann::ordered_json::object();
};

}  // namespace

std::unique_ptr<Case> make_cuda_case(const DeviceInfo& device, const ModelConfig& c, Precision p, bool search_batch,
                                     double bucket_mb, bool attention_given) {
  return std::make_unique<CudaStepCase>(device, c, p, search_batch, bucket_mb, attention_given);
}

}  // namespace gpubench::suites::train
