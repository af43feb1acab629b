// The data-parallel CPU step (dp=ddp|zero1 on --device cpu under mpirun/srun, one rank per
// process): each rank trains its own micro-batches (its slice of the global batch) on the fp32
// reference model from the same initial parameters; the gradients of the last micro-step go
// out bucket by bucket through MPI non-blocking collectives while backward goes on.
//
// Verification (before any timing): the tiny-configuration step as for one device; then one
// data-parallel step of the benchmark configuration, after which every rank's parameters must be
// bit-identical (checksums exchanged) and rank 0's averaged gradients and parameters must equal
// one single-rank reference step over the whole global batch within the fp32 tolerance.
//
// Then, outside the measured runs, rounds of three steps each, every step started together
// (a barrier): the step as measured (overlap), the same step with communication off
// (compute_only), and the step with every collective after backward (serial). The slowest
// rank's median over the rounds gives step_s, compute_only_s and comm_s = serial - compute_only;
// exposed_comm_s = step - compute_only; overlap_pct = 100 (comm_s - exposed) / comm_s
// (clamped to 0..100); scaling_efficiency = compute_only / step. docs/suite-train.md.
#include <cblas.h>
#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>

#include "bench/core/errors.hpp"
#include "bench/core/phase.hpp"
#include "bench/mpi/session.hpp"
#include "bench/suites/train/dp.hpp"
#include "bench/suites/train/dp_verify.hpp"
#include "bench/suites/train/train.hpp"
#include "bench/suites/train/verify.hpp"
#include "kernels/train/model_reference.hpp"

namespace gpubench::suites::train {
namespace {

using kernels::train::AdamW;
using kernels::train::Batch;
using kernels::train::ReferenceModel;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }


// How a step communicates: as measured (each bucket as soon as backward completes it), not at
// all (the compute-only step), or every bucket after backward (nothing hidden: comm_s).
enum class Comm { Overlap, Off, Serial };

int default_threads() {
  static const int n = openblas_get_num_threads();
  return n;
}

// max(1, the CPUs this process may run on / the ranks on this host).
int blas_threads_per_rank(int local_ranks) {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = 0;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = CPU_COUNT(&set);
  if (cpus <= 0) cpus = static_cast<int>(std::thread::hardware_concurrency());
  (void)default_threads();  // remembered before the first change
  return std::max(1, std::min(cpus, static_cast<int>(std::thread::hardware_concurrency()) / std::max(1, local_ranks)));
}

// Seconds each kind of step gets in the timing rounds (at least kMinRounds rounds, at most
// kMaxRounds).
constexpr double kRoundBudgetS = 0.4;
constexpr int kMinRounds = 3, kMaxRounds = 11;

class CpuDpCase final : public HostCase {
 public:
  CpuDpCase(const ModelConfig& c, DpMode mode, double bucket_mb) : c_(c), mode_(mode), bucket_mb_(bucket_mb) {}
  ~CpuDpCase() override {
    if (threads_ > 0) openblas_set_num_threads(default_threads());
  }

  void setup() override {
    session_ = mpi::session();
    ranks_ = session_->size();
    rank_ = session_->rank();
    // OpenBLAS threads: the cores this rank may use, shared with the other ranks on its host
    // (ranks that each start a thread per core would fight over the cores).
    threads_ = blas_threads_per_rank(session_->local_size());
    openblas_set_num_threads(threads_);
    const double need = estimated_bytes(c_, sizeof(float));
    if (need > 0.5 * static_cast<double>(1ull << 40)) {
      throw CaseSkipped(fmt::format("the model needs about {:.3g} GB of host memory", need / 1e9));
    }
    model_ = std::make_unique<ReferenceModel<float>>(c_, kModelSeed);
    plan_ = plan_buckets(model_->layout(), bucket_mb_, sizeof(float), mode_, ranks_);
    model_->pad_to(plan_.elements);
    if (mode_ == DpMode::Zero1) {
      model_->drop_moments();
      m_.assign(static_cast<std::size_t>(plan_.shard_elements()), 0.0f);
      v_.assign(m_.size(), 0.0f);
    }
    // Rank r's micro-batches are micro-steps r*accum .. r*accum+accum-1 of the global batch.
    for (std::int64_t i = 0; i < c_.accum; ++i) micro_.push_back(kernels::train::make_batch(c_, batch_seed(rank_, i)));
    comm_ = make_mpi_grad_comm(plan_, model_->grads().data(), model_->params().data());
    if (!comm_) throw CaseSkipped("gpubench was built without MPI: no data-parallel CPU step");
  }

  Verification verify() override {
    Verification v = verify_tiny_step_cpu(c_);
    if (!v.passed) return v;
    merge(v, verify_dp_step());
    if (!v.passed) return v;
    time_rounds();
    return v;
  }

  void run() override { (void)step(Comm::Overlap, false); }

  Metrics metrics() const override {
    // FLOPs and MFU per device (each rank's own step); tokens (samples) over all ranks.
    Metrics m = step_metrics(c_, Precision::FP32);
    m.extra["params"] = static_cast<double>(model_->layout().count);
    // zero1: the model without its moments, plus the shard's two moments and the reduced
    // shard gradients the communicator holds (4 bytes each).
    m.extra["peak_memory_bytes"] = static_cast<double>(model_->memory_bytes() + 12 * static_cast<std::int64_t>(m_.size()));
    add_dp_metrics(m, figures_, mode_, ranks_, plan_);
    m.extra["blas_threads_per_rank"] = threads_;
    return m;
  }

  nlohmann::ordered_json details(std::int64_t) override {
    auto d = dp_details(plan_, bucket_mb_, ready_s_, backward_s_, model_->layout().count, figures_, rounds_,
                        ranks_ * c_.accum * c_.batch, bucket_comm_s_);
    add_latency_probe(d, small_all_reduce_s_);
    return d;
  }

  void annotate(nlohmann::ordered_json& g, double) const override {
    // The ratio of two medians of a noisy machine can pass 1 (the compute-only step measured
    // slower than the step that also communicates): not a believable efficiency.
    if (auto why = dp_suspect(figures_, 1.0)) g["suspect"].push_back(*why);
  }

 private:
  static std::uint64_t batch_seed(int rank, std::int64_t i, std::int64_t accum) {
    return kBatchSeed + static_cast<std::uint64_t>(rank) * static_cast<std::uint64_t>(accum) + static_cast<std::uint64_t>(i);
  }
  std::uint64_t batch_seed(int rank, std::int64_t i) const { return batch_seed(rank, i, c_.accum); }

  static void merge(Verification& into, const Verification& v) {
    into.checked += v.checked;
    into.max_error = std::max(into.max_error, v.max_error);
    into.method += "; " + v.method;
    if (!v.passed) {
      into.passed = false;
      into.detail = v.detail;
    }
  }

  struct StepTimes {
    double step_s = 0, backward_s = 0;
    std::vector<double> ready_s;  // per bucket, from the last micro-step's backward start
  };

  // One optimizer step on this rank.
  StepTimes step(Comm comm, bool record) {
    StepTimes times;
    const auto t0 = Clock::now();
    model_->zero_grads();
    const double scale = 1.0 / static_cast<double>(c_.accum * ranks_);  // the mean over the global batch
    std::size_t started = 0, recorded = 0;
    Clock::time_point backward_start;
    for (std::size_t i = 0; i < micro_.size(); ++i) {
      {
        PhaseScope p("forward");
        (void)model_->forward(micro_[i]);
      }
      const bool last = i + 1 == micro_.size();  // only the last micro-step communicates
      if (last) {
        backward_start = Clock::now();
        if (record) times.ready_s.assign(plan_.buckets.size(), 0.0);
        model_->set_grad_ready_hook([&](std::int64_t watermark) {
          const std::size_t ready = plan_.ready_count(watermark);
          if (record) {
            for (; recorded < ready; ++recorded) times.ready_s[recorded] = since(backward_start);
          }
          if (comm == Comm::Overlap) {
            for (; started < ready; ++started) comm_->start_bucket(started);
            comm_->progress();
          }
        });
      }
      PhaseScope p("backward");
      model_->backward(micro_[i], scale);
    }
    times.backward_s = since(backward_start);
    model_->set_grad_ready_hook(nullptr);
    if (comm != Comm::Off) {
      PhaseScope p("communication");
      for (; started < plan_.buckets.size(); ++started) comm_->start_bucket(started);
      comm_->wait_gradients();
    }
    {
      PhaseScope p("optimizer");
      if (mode_ == DpMode::Ddp) {
        model_->optimizer_step(AdamW{});
      } else {
        ++t_;
        const float* shards = comm_->shard_gradients();
        float* params = model_->params().data();
        const float* grads = model_->grads().data();
        for (std::size_t b = 0; b < plan_.buckets.size(); ++b) {
          const Bucket& k = plan_.buckets[b];
          const std::int64_t base = comm_->shard_base(b), off = k.shard_offset(rank_);
          // Communication off: the rank's own gradient stands in for the reduced shard.
          const float* g = comm == Comm::Off ? grads + off : shards + base;
          kernels::train::adamw_step(params + off, g, m_.data() + base, v_.data() + base, k.shard, AdamW{}, t_);
        }
      }
    }
    if (mode_ == DpMode::Zero1 && comm != Comm::Off) {
      PhaseScope p("communication");
      comm_->gather_parameters();
      comm_->wait_parameters();
    }
    times.step_s = since(t0);
    return times;
  }

  Verification verify_dp_step() {
    const std::vector<float> init = model_->params();
    (void)step(Comm::Overlap, false);
    Verification v;
    v.method = fmt::format("{} ranks: parameters bit-identical on every rank (checksums)", ranks_);
    const std::string mine = params_checksum(model_->params().data(), plan_.elements);
    if (auto bad = checksum_mismatch(session_->all_gather(mine, "data-parallel parameter checksums"))) {
      v.detail = *bad;
      return v;
    }
    v.passed = true;
    v.checked = 1;
    if (rank_ != 0) return v;
    // One single-rank step over the whole global batch, in the same (float) arithmetic.
    ModelConfig global = c_;
    global.accum = c_.accum * ranks_;
    std::vector<Batch> all;
    for (int r = 0; r < ranks_; ++r) {
      for (std::int64_t i = 0; i < c_.accum; ++i) all.push_back(kernels::train::make_batch(c_, batch_seed(r, i)));
    }
    ReferenceModel<float> ref(global, kModelSeed);
    (void)ref.train_step(all, AdamW{});
    const auto& layout = ref.layout();
    const GradTolerance tol = grad_tolerance(Precision::FP32);
    // Averaged gradients: the whole buffer (ddp), or rank 0's reduced shards (zero1).
    std::vector<double> got(ref.grads().begin(), ref.grads().end()), want = got;
    std::int64_t grads_checked = layout.count;
    if (mode_ == DpMode::Ddp) {
      for (std::int64_t i = 0; i < layout.total; ++i) got[static_cast<std::size_t>(i)] = model_->grads()[static_cast<std::size_t>(i)];
    } else {
      grads_checked = 0;
      for (std::size_t b = 0; b < plan_.buckets.size(); ++b) {
        const Bucket& k = plan_.buckets[b];
        for (std::int64_t j = 0; j < k.shard; ++j) {
          const std::int64_t at = k.shard_offset(0) + j;
          if (at >= layout.total) continue;  // padding
          got[static_cast<std::size_t>(at)] = comm_->shard_gradients()[comm_->shard_base(b) + j];
          ++grads_checked;
        }
      }
    }
    Verification g = compare_gradients(got, want, layout, tol);
    g.checked = grads_checked;
    g.method = "rank 0's averaged gradients against the single-rank reference";
    merge(v, g);
    if (!v.passed) return v;
    const std::vector<float> ref_grads(ref.grads().begin(), ref.grads().end());
    merge(v, compare_dp_params(model_->params(), ref.params(), init, ref_grads, layout, AdamW{}, tol));
    return v;
  }

  void time_rounds() {
    // The timeline: one compute-only step recording when each bucket became ready.
    comm_->barrier();
    const StepTimes timeline = step(Comm::Off, true);
    ready_s_ = timeline.ready_s;
    backward_s_ = timeline.backward_s;
    // The round count, agreed: every rank runs the same steps (the collectives must match).
    comm_->barrier();
    const double one = step(Comm::Overlap, false).step_s;
    const double slowest = team_max(*session_, one, "data-parallel timing plan");
    rounds_ = std::clamp(static_cast<int>(std::ceil(kRoundBudgetS / std::max(slowest, 1e-6))), kMinRounds, kMaxRounds);
    rounds_ |= 1;  // odd: the median is one round's figure
    std::vector<double> mine[3];
    for (int r = 0; r < rounds_; ++r) {
      // The order rotates so no kind always follows the same one.
      for (int k = 0; k < 3; ++k) {
        const int kind = (r + k) % 3;
        comm_->barrier();
        mine[kind].push_back(step(static_cast<Comm>(kind), false).step_s);
      }
    }
    // Per round, the slowest rank; then the median over rounds (summarize_dp_rounds, dp_plan.cpp).
    std::array<std::vector<std::vector<double>>, 3> rounds;
    for (std::size_t kind = 0; kind < 3; ++kind) {
      for (const std::string& text :
           session_->all_gather(nlohmann::json(mine[kind]).dump(), "data-parallel timing rounds")) {
        rounds[kind].push_back(nlohmann::json::parse(text).get<std::vector<double>>());
      }
    }
    figures_ = summarize_dp_rounds(rounds);
    // Each bucket's collective alone, from one more serial step (the buckets are issued one at a
    // time after backward): details.grad_buckets[].comm_s.
    comm_->barrier();
    (void)step(Comm::Serial, false);
    bucket_comm_s_ = comm_->bucket_seconds();
    small_all_reduce_s_ = comm_->small_all_reduce_seconds();
  }

  int threads_ = 0;
  ModelConfig c_;
  DpMode mode_;
  double bucket_mb_;
  mpi::Session* session_ = nullptr;
  int ranks_ = 1, rank_ = 0;
  std::unique_ptr<ReferenceModel<float>> model_;
  BucketPlan plan_;
  std::unique_ptr<GradComm> comm_;
  std::vector<Batch> micro_;
  std::vector<float> m_, v_;  // zero1: AdamW moments of this rank's shards
  std::int64_t t_ = 0;
  // Timing rounds (slowest rank, median over rounds).
  int rounds_ = 0;
  DpRoundFigures figures_;
  double backward_s_ = 0;
  std::vector<double> ready_s_, bucket_comm_s_;
  std::optional<double> small_all_reduce_s_;
};

}  // namespace

std::unique_ptr<Case> make_cpu_dp_case(const ModelConfig& c, DpMode mode, double bucket_mb) {
  return std::make_unique<CpuDpCase>(c, mode, bucket_mb);
}

}  // namespace gpubench::suites::train
