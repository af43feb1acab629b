// The CUDA data-parallel step (dp=ddp|zero1, one rank per GPU; compiled only with NCCL).
// Each rank trains GpuModel on its own micro-batches; the gradients live in the model's flat fp32
// buffer, grouped by the bucket plan (dp.hpp); backward's hook starts each bucket's collective
// on the communication stream once its last gradient is enqueued (dp_gpu_plan.hpp), and the
// optimizer waits for the communication stream. zero1 runs AdamW on the rank's shards, then
// all-gathers the parameters. (The AdamW moments stay allocated for the whole model: the update
// is sharded, the memory is not.)
//
// Verification, before any timing:
// - the tiny configuration (verify.hpp) with buckets small enough for several per step: after
//   one step, the reduced gradients (ddp: all; zero1: the rank's shards) against the double
//   reference's over the global batch (every rank's micro-batches), the mean loss over ranks
//   against the reference's, the parameters against the reference's after its AdamW step
//   (dp_verify.hpp), and every rank's parameters bit-identical (checksums exchanged);
// - the benchmark configuration: one step, first loss near log(vocab), parameters bit-identical
//   on every rank.
// Then, outside the measured runs and as the CPU step does (dp_cpu.cpp): a compute-only step
// recording when each bucket became ready (events), and rounds of three steps, each started
// together (a barrier) and timed with events: as measured (overlap), communication off
// (compute_only), every collective after backward (serial). The slowest rank's median over the
// rounds gives step_s, compute_only_s and comm_s = serial - compute_only; exposed_comm_s =
// step - compute_only; overlap_pct = 100 (comm_s - exposed) / comm_s (clamped to 0..100);
// scaling_efficiency = compute_only / step.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "bench/core/cuda.hpp"
#include "bench/core/cuda_case.hpp"
#include "bench/core/errors.hpp"
#include "bench/mpi/session.hpp"
#include "bench/suites/collectives/collectives.hpp"
#include "bench/suites/train/cuda_step_common.hpp"
#include "bench/suites/train/dp.hpp"
#include "bench/suites/train/dp_gpu.hpp"
#include "bench/suites/train/dp_gpu_plan.hpp"
#include "bench/suites/train/dp_verify.hpp"
#include "bench/suites/train/train.hpp"
#include "bench/suites/train/verify.hpp"
#include "kernels/blas/cublaslt.hpp"
#include "kernels/train/gpu_model.hpp"
#include "kernels/train/model_reference.hpp"

namespace gpubench::suites::train {
namespace {

using kernels::train::AdamW;
using kernels::train::Batch;
using kernels::train::FlatRange;
using kernels::train::GpuModel;
using kernels::train::ModelConfig;
using kernels::train::ParamLayout;

// As the CPU step: seconds each kind of step gets in the timing rounds, within these counts.
constexpr double kRoundBudgetS = 0.4;
constexpr int kMinRounds = 3, kMaxRounds = 11;


// The model's layout with its flat buffers padded to the plan's elements (zero1's multiple of
// the ranks).
ParamLayout padded_layout(const ModelConfig& c, const BucketPlan& plan) {
  ParamLayout l = kernels::train::param_layout(c);
  l.total = std::max(l.total, plan.elements);
  return l;
}

// One model, its communicator and plan: the step of one rank.
struct DpStepper {
  DpStepper(const ModelConfig& c, Precision p, DpMode mode, double bucket_mb, int ranks, int rank, cudaStream_t s,
            double timeout_s)
      : c(c), mode(mode), rank(rank), stream(s),
        plan(plan_buckets(kernels::train::param_layout(c), bucket_mb, sizeof(float), mode, ranks)),
        layout(padded_layout(c, plan)),
        starts(buckets_by_stage(plan, stage_watermarks(c))) {
    model = make_gpu_model(c, p, s, &layout);
    model->upload(rank_batches(c, rank));
    comm = make_nccl_grad_comm(plan, model->gradient_buffer(), model->parameter_buffer(), s, timeout_s);
    for (const Span& sp : optimizer_spans(plan, rank)) ranges.push_back({sp.offset, sp.count});
    fp16 = p == Precision::FP16Amp;
  }

  // One optimizer step; `communicate` false: the same work with every collective left out (the
  // compute-only step). Returns whether the update was applied (fp16 skips on overflow, every
  // rank alike when communicating).
  bool step(DpComm how, bool record = false) {
    return dp_step(*model, *comm, mode, c.accum, starts, ranges, AdamW{}, how, fp16, record);
  }

  // One step started with every rank (a barrier), timed with events on the compute stream (which
  // waits for the communication stream before the optimizer and after the gather).
  double timed_step(DpComm how, bool record = false) {
    comm->barrier();
    cuda::Event a, b;
    a.record(stream);
    (void)step(how, record);
    b.record(stream);
    comm->wait_idle(stream);
    return cuda::Event::elapsed_ms(a, b) * 1e-3;
  }

  ModelConfig c;
  DpMode mode;
  int rank;
  cudaStream_t stream;
  BucketPlan plan;
  ParamLayout layout;
  std::vector<std::vector<std::size_t>> starts;
  std::vector<FlatRange> ranges;
  bool fp16 = false;
  std::unique_ptr<GpuModel> model;
  std::unique_ptr<GpuGradComm> comm;
};

class CudaDpStepCase final : public CudaCase {
 public:
  CudaDpStepCase(const DeviceInfo& device, const ModelConfig& c, Precision p, DpMode mode, double bucket_mb)
      : CudaCase(device), c_(c), p_(p), mode_(mode), bucket_mb_(bucket_mb) {}

  void setup() override {
    mpi::Session* s = mpi::active() ? mpi::session() : nullptr;
    if (s != nullptr && s->size() > 1) team_ = s;
    ranks_ = team_ != nullptr ? team_->size() : 1;
    rank_ = team_ != nullptr ? team_->rank() : 0;
    timeout_s_ = collectives::collective_timeout_s();
    join_nccl_comm(timeout_s_);
    skip_when_too_large(c_, device());
    skip_on_oom([&] { dp_ = std::make_unique<DpStepper>(c_, p_, mode_, bucket_mb_, ranks_, rank_, stream(), timeout_s_); });
  }

  // Every rank runs the same collectives (NCCL steps, checksum and loss exchanges) whatever its
  // own checks found, and the ranks agree on the outcome before timing: a rank that stopped at
  // its first failure would leave the others waiting in a collective.
  Verification verify() override {
    Verification v = skip_on_oom([&] { return verify_tiny(); });
    // The benchmark configuration: one step, a sane loss, identical parameters on every rank.
    skip_on_oom([&] { (void)dp_->step(DpComm::Overlap); });
    synchronize();
    ++v.checked;
    v.method += std::string("; ") + kFirstLossMethod + ", parameters identical on every rank";
    if (const auto problem = first_loss_problem(dp_->model->loss(), c_.vocab)) fail(v, *problem);
    parameters_agree(*dp_, v, "benchmark configuration");
    const bool all_passed =
        team_ == nullptr ? v.passed : team_sum(*team_, v.passed ? 0.0 : 1.0, "data-parallel verification") == 0;
    if (all_passed) time_rounds();
    return v;
  }

  void run() override { (void)dp_->step(DpComm::Overlap); }
  void synchronize() override { dp_->comm->wait_idle(stream()); }

  std::unique_ptr<Timer> make_timer() override { return std::make_unique<PollingTimer>(*this); }

  Metrics metrics() const override {
    // FLOPs and MFU per GPU (each rank's own step); tokens (samples) over all ranks. The same
    // figures as the CPU step (dp_cpu.cpp).
    Metrics m = step_metrics(c_, p_);
    m.extra["params"] = static_cast<double>(dp_->model->layout().count);
    m.extra["peak_memory_bytes"] = static_cast<double>(dp_->model->memory_bytes());
    add_dp_metrics(m, figures_, mode_, ranks_, dp_->plan);
    if (p_ == Precision::FP16Amp) m.extra["loss_scale"] = dp_->model->scaler().scale();
    return m;
  }

  nlohmann::ordered_json details(std::int64_t) override {
    auto d = dp_details(dp_->plan, bucket_mb_, ready_s_, backward_s_, dp_->model->layout().count, figures_, rounds_,
                        ranks_ * c_.accum * c_.batch);
    add_latency_probe(d, small_all_reduce_s_);
    return d;
  }

  void annotate(nlohmann::ordered_json& g, double) const override {
    // As the CPU step, with 5% of room (docs/data-parallel-gpu.md): a compute-only step measured
    // slower than the step that also communicates is noise, not an efficiency above 1.
    if (auto why = dp_suspect(figures_, 1.05)) g["suspect"].push_back(*why);
  }

 private:
  // CUDA events around the batch, whose end is waited for by polling (a rank that stops
  // answering ends the run with a message instead of hanging it in cudaEventSynchronize).
  class PollingTimer final : public Timer {
   public:
    explicit PollingTimer(CudaDpStepCase& c) : c_(c) {}
    void start() override { start_.record(c_.stream()); }
    double stop() override {
      stop_.record(c_.stream());
      c_.synchronize();
      return cuda::Event::elapsed_ms(start_, stop_) * 1e-3;
    }
    const char* kind() const override { return "cuda_event"; }

   private:
    CudaDpStepCase& c_;
    cuda::Event start_, stop_;
  };

  // Marks `v` failed, keeping the first failure's detail.
  static void fail(Verification& v, const std::string& detail) {
    if (!v.passed) return;
    v.passed = false;
    v.detail = detail;
  }

  // The checksum of this rank's parameters against every other rank's (collective).
  void parameters_agree(DpStepper& dp, Verification& v, const char* what) {
    const std::vector<double> p = dp.model->parameters();
    const std::vector<float> f(p.begin(), p.end());
    const std::string mine = params_checksum(f.data(), static_cast<std::int64_t>(f.size()));
    ++v.checked;
    if (team_ == nullptr) return;
    const auto bad = checksum_mismatch(team_->all_gather(mine, fmt::format("dp parameter checksums ({})", what)));
    if (bad) fail(v, fmt::format("{} after one step: {}", what, *bad));
  }

  Verification verify_tiny() {
    const ModelConfig t = tiny_config(c_, p_);
    // Buckets of about a quarter of the tiny model, so the step starts several.
    const double tiny_mb =
        static_cast<double>(kernels::train::param_layout(t).total) * sizeof(float) / 4 / kBucketMbBytes;
    DpStepper dp(t, p_, mode_, tiny_mb, ranks_, rank_, stream(), timeout_s_);
    // fp16: steps skipped for overflow leave the weights alone; compare the first applied one.
    bool applied = false;
    const std::vector<double> init64 = dp.model->parameters();
    for (int i = 0; i < 40 && !applied; ++i) applied = dp.step(DpComm::Overlap);
    dp.comm->wait_idle(stream());
    Verification v;
    if (!applied) {  // every rank alike: the reduced gradients (or the combined flags) agree
      v.detail = "fp16: every step of the tiny configuration overflowed";
      return v;
    }
    std::vector<Batch> global;
    for (int r = 0; r < ranks_; ++r) {
      for (Batch& b : rank_batches(t, r)) global.push_back(std::move(b));
    }
    kernels::train::ReferenceModel<double> ref(t, kModelSeed);
    double want_loss = 0;
    {
      // fp8: each micro-batch is scaled on its own, on the GPU ranks as in the reference.
      kernels::train::ScopedLinearInputs emulate(reference_linear_inputs(p_));
      want_loss = ref.train_step(global, AdamW{});
    }
    const ParamLayout& lay = ref.layout();
    // The reduced gradients: all of them (ddp), this rank's shards (zero1; the rest of the
    // buffer holds this rank's own partial sums).
    std::vector<double> got = dp.model->gradients();
    std::int64_t compared = lay.count;
    if (mode_ == DpMode::Zero1) {
      std::vector<bool> mine(got.size(), false);
      for (const FlatRange& r : dp.ranges) {
        for (std::int64_t i = r.offset; i < r.offset + r.count; ++i) mine[static_cast<std::size_t>(i)] = true;
      }
      compared = 0;
      for (const auto& tensor : lay.tensors) {
        for (std::int64_t i = tensor.offset; i < tensor.offset + tensor.size; ++i) {
          const auto k = static_cast<std::size_t>(i);
          if (mine[k]) ++compared;
          else got[k] = ref.grads()[k];  // not this rank's: compared on its owner
        }
      }
    }
    v = compare_gradients(got, ref.grads(), lay, grad_tolerance(p_));
    v.checked = compared;
    v.method = fmt::format(
        "tiny {} {} step on {} ranks ({} buckets, {} on the GPU) vs the double CPU reference over the global batch: "
        "{} reduced gradients, mean loss, parameters after AdamW, parameters identical on every rank",
        to_string(t.kind), to_string(mode_), ranks_, dp.plan.buckets.size(), to_string(p_),
        mode_ == DpMode::Zero1 ? "this rank's shard of the" : "all");
    if (!v.passed) v.detail = "after the " + to_string(mode_) + " reduction: " + v.detail;
    // The loss: the mean over ranks of each rank's mean (equal batches) is the global mean.
    double loss = dp.model->loss();
    if (team_ != nullptr) loss = team_sum(*team_, loss, "dp tiny-configuration loss") / ranks_;
    const double err = std::abs(loss - want_loss) / (loss_tolerance(p_) * (1 + std::abs(want_loss)));
    ++v.checked;
    v.max_error = std::max(v.max_error, std::isfinite(err) ? err : INFINITY);
    if (!(err <= 1)) fail(v, fmt::format("tiny-configuration mean loss over ranks {} (reference {})", loss, want_loss));
    auto floats = [](const std::vector<double>& d) { return std::vector<float>(d.begin(), d.end()); };
    const Verification pv = compare_dp_params(floats(dp.model->parameters()), floats(ref.params()), floats(init64),
                                              floats(ref.grads()), lay, AdamW{}, grad_tolerance(p_));
    v.checked += pv.checked;
    v.max_error = std::max(v.max_error, pv.max_error);
    if (!pv.passed) fail(v, "tiny configuration: " + pv.detail);
    parameters_agree(dp, v, "tiny configuration");
    return v;
  }

  void time_rounds() {
    // The timeline: one compute-only step with events where each bucket became ready.
    backward_s_ = 0;
    {
      cuda::Event a, b;
      dp_->comm->barrier();
      a.record(stream());
      (void)dp_->step(DpComm::Off, true);
      b.record(stream());
      synchronize();
      ready_s_ = dp_->comm->ready_seconds();
      for (double r : ready_s_) backward_s_ = std::max(backward_s_, r);
    }
    // The round count, agreed: every rank runs the same steps (the collectives must match).
    const double one = dp_->timed_step(DpComm::Overlap);
    const double slowest = team_ != nullptr ? team_max(*team_, one, "data-parallel timing plan") : one;
    rounds_ = std::clamp(static_cast<int>(std::ceil(kRoundBudgetS / std::max(slowest, 1e-6))), kMinRounds, kMaxRounds);
    rounds_ |= 1;  // odd: the median is one round's figure
    std::vector<double> mine[3];
    for (int r = 0; r < rounds_; ++r) {
      for (int k = 0; k < 3; ++k) {  // the order rotates so no kind always follows the same one
        const int kind = (r + k) % 3;
        mine[kind].push_back(dp_->timed_step(static_cast<DpComm>(kind)));
      }
    }
    // Per round, the slowest rank; then the median over rounds (summarize_dp_rounds, dp_plan.cpp).
    std::array<std::vector<std::vector<double>>, 3> rounds;
    for (std::size_t kind = 0; kind < 3; ++kind) {
      if (team_ == nullptr) {
        rounds[kind].push_back(mine[kind]);
        continue;
      }
      for (const std::string& text : team_->all_gather(nlohmann::json(mine[kind]).dump(), "data-parallel timing rounds")) {
        rounds[kind].push_back(nlohmann::json::parse(text).get<std::vector<double>>());
      }
    }
    figures_ = summarize_dp_rounds(rounds);
    // The scaling projection's latency (details.latency_probe), outside the timed rounds.
    small_all_reduce_s_ = dp_->comm->small_all_reduce_seconds();
  }

  ModelConfig c_;
  Precision p_;
  DpMode mode_;
  double bucket_mb_;
  mpi::Session* team_ = nullptr;
  int ranks_ = 1, rank_ = 0;
  double timeout_s_ = 300;
  std::unique_ptr<DpStepper> dp_;
  std::vector<double> ready_s_;
  DpRoundFigures figures_;
  double backward_s_ = 0;
  int rounds_ = 0;
  std::optional<double> small_all_reduce_s_;
};

}  // namespace

std::unique_ptr<Case> make_cuda_dp_case(const DeviceInfo& device, const ModelConfig& c, Precision p, DpMode mode,
                                        double bucket_mb) {
  return std::make_unique<CudaDpStepCase>(device, c, p, mode, bucket_mb);
}

}  // namespace gpubench::suites::train
