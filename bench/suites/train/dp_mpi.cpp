// The CPU gradient communicator over MPI non-blocking collectives (see dp.hpp). Open MPI's
// non-blocking collectives (libnbc) advance only inside MPI calls, so the step calls
// progress() between backward layers; each wait is bounded by the run's --rank-timeout and
// ends the run naming the bucket when another rank never arrives.
#include "bench/suites/train/dp.hpp"

#ifdef GPUBENCH_HAVE_MPI
#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <deque>
#include <optional>
#include <stdexcept>
#include <thread>

#include "bench/mpi/session.hpp"
#endif

namespace gpubench::suites::train {

#ifdef GPUBENCH_HAVE_MPI
namespace {

using Clock = std::chrono::steady_clock;

// The data-parallel step's own communicator, so no gradient message can match another
// benchmark's or the harness's. Made once, on every rank at the same point (case setup).
MPI_Comm dp_comm() {
  static MPI_Comm comm = [] {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    return c;
  }();
  return comm;
}

int as_count(std::int64_t n) {
  if (n > INT_MAX) throw std::invalid_argument(fmt::format("a bucket of {} elements exceeds MPI's int count", n));
  return static_cast<int>(n);
}

class MpiGradComm final : public GradComm {
 public:
  MpiGradComm(const BucketPlan& plan, float* grads, float* params, mpi::Session* session)
      : plan_(plan), grads_(grads), params_(params), session_(session), comm_(dp_comm()) {
    MPI_Comm_rank(comm_, &rank_);
    int size = 0;
    MPI_Comm_size(comm_, &size);
    if (size != plan_.ranks) {
      throw std::invalid_argument(fmt::format("bucket plan for {} ranks, run has {}", plan_.ranks, size));
    }
    const std::size_t n = plan_.buckets.size();
    requests_.assign(n, MPI_REQUEST_NULL);
    started_.assign(n, Clock::time_point{});
    seconds_.assign(n, 0.0);
    if (plan_.mode == DpMode::Zero1) shard_.assign(static_cast<std::size_t>(plan_.shard_elements()), 0.0f);
    for (std::size_t i = 0; i < n; ++i) {
      (void)as_count(plan_.buckets[i].count);
      base_.push_back(shard_base(i));
    }
  }

  const BucketPlan& plan() const override { return plan_; }
  int rank() const override { return rank_; }

  // Buckets are issued one at a time, in order: a bucket's collective starts when it is ready
  // and the one before it has completed, as PyTorch DDP's all-reduces queue on one NCCL stream
  // or one Gloo/MPI worker, and as `gpubench scaling` models the step. Issuing every ready
  // bucket at once let a dozen of Open MPI's non-blocking all-reduces share the memory
  // bandwidth and the progress engine: GPT-2 small's gradient in 14 buckets took 1.4x the
  // same buckets' blocking all-reduces one after another (gpubench_perf_dp_comm, 2 ranks).
  void start_bucket(std::size_t i) override {
    phase_ = Phase::Gradients;
    enqueue(i);
  }

  void progress() override { pump(); }

  void wait_gradients() override { wait_all("gradient all-reduce/reduce-scatter"); }

  const float* shard_gradients() const override { return shard_.data(); }

  void gather_parameters() override {
    phase_ = Phase::Parameters;
    for (std::size_t i = 0; i < plan_.buckets.size(); ++i) enqueue(i);
  }

  void wait_parameters() override {
    // The gradient phase's times are what bucket_seconds reports: keep them.
    const std::vector<double> kept = seconds_;
    wait_all("parameter all-gather");
    seconds_ = kept;
  }

  std::vector<double> bucket_seconds() const override { return seconds_; }

  void barrier() override {
    MPI_Request request;
    MPI_Ibarrier(comm_, &request);
    wait_one(request, "the barrier before a timed step");
  }

  std::optional<double> small_all_reduce_seconds() override {
    constexpr int kWarmup = 5, kTimed = 51;  // fixed counts: every rank runs the same number
    std::vector<double> seconds;
    float value = 1;
    for (int i = 0; i < kWarmup + kTimed; ++i) {
      MPI_Request request;
      const auto start = Clock::now();
      MPI_Iallreduce(MPI_IN_PLACE, &value, 1, MPI_FLOAT, MPI_SUM, comm_, &request);
      wait_one(request, "the small all-reduce that measures latency");
      if (i >= kWarmup) seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    std::nth_element(seconds.begin(), seconds.begin() + kTimed / 2, seconds.end());
    return seconds[kTimed / 2];
  }

 private:
  enum class Phase { Gradients, Parameters };

  // Polls one request to completion (spinning a millisecond, then yielding between polls); a
  // request that does not complete within the session's timeout ends the run naming `what`.
  void wait_one(MPI_Request& request, const char* what) {
    const auto deadline = deadline_from_now();
    const auto spin_until = Clock::now() + std::chrono::milliseconds(1);
    int done = 0;
    while (true) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done) return;
      if (Clock::now() > deadline) stuck(what);
      pause(spin_until);
    }
  }

  void enqueue(std::size_t i) {
    queue_.push_back(i);
    pump();
  }

  // Completes the collective in flight if it is done, then issues the next queued one.
  void pump() {
    if (in_flight_) {
      const std::size_t i = *in_flight_;
      int done = 0;
      MPI_Test(&requests_[i], &done, MPI_STATUS_IGNORE);
      if (!done) return;
      seconds_[i] = std::chrono::duration<double>(Clock::now() - started_[i]).count();
      in_flight_.reset();
    }
    if (queue_.empty()) return;
    const std::size_t i = queue_.front();
    queue_.pop_front();
    issue(i);
  }

  void issue(std::size_t i) {
    const Bucket& b = plan_.buckets.at(i);
    started_[i] = Clock::now();
    in_flight_ = i;
    if (phase_ == Phase::Parameters) {
      MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, params_ + b.offset, as_count(b.shard), MPI_FLOAT, comm_,
                     &requests_[i]);
    } else if (plan_.mode == DpMode::Zero1) {
      MPI_Ireduce_scatter_block(grads_ + b.offset, shard_.data() + base_[i], as_count(b.shard), MPI_FLOAT, MPI_SUM,
                                comm_, &requests_[i]);
    } else {
      MPI_Iallreduce(MPI_IN_PLACE, grads_ + b.offset, as_count(b.count), MPI_FLOAT, MPI_SUM, comm_, &requests_[i]);
    }
  }

  // Polls until every queued collective completes; a collective that makes no progress for
  // the session's timeout (a rank never arrives) ends the run instead of hanging it.
  void wait_all(const char* what) {
    auto deadline = deadline_from_now();
    auto spin_until = Clock::now() + std::chrono::milliseconds(1);
    while (in_flight_ || !queue_.empty()) {
      const std::optional<std::size_t> before = in_flight_;
      pump();
      if (in_flight_ != before) {  // one completed, the next issued
        deadline = deadline_from_now();
        spin_until = Clock::now() + std::chrono::milliseconds(1);
        continue;
      }
      if (Clock::now() > deadline) stuck(fmt::format("{} of bucket {}", what, *in_flight_));
      pause(spin_until);
    }
  }

  // Ranks may share cores (--oversubscribe, or a rank's BLAS threads): after the first
  // millisecond of spinning, each poll yields the core to whatever else is runnable on it.
  // Not a sleep: Open MPI moves a non-blocking collective on only inside MPI calls, so every
  // sleep between MPI_Test calls (20 us asked, more once the kernel wakes the thread) is time
  // in which a multi-round collective makes no progress.
  static void pause(Clock::time_point spin_until) {
    if (Clock::now() > spin_until) std::this_thread::yield();
  }

  double timeout_s() const { return session_ != nullptr ? session_->timeout_s() : 300; }
  Clock::time_point deadline_from_now() const {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s()));
  }
  [[noreturn]] void stuck(const std::string& what) const {
    const std::string m = fmt::format("{} made no progress for {} s (another rank has stopped or hangs)", what,
                                      timeout_s());
    if (session_ != nullptr) session_->abort_run(m);
    throw std::runtime_error(m);
  }

  BucketPlan plan_;
  float* grads_;
  float* params_;
  mpi::Session* session_;
  MPI_Comm comm_;
  int rank_ = 0;
  std::vector<MPI_Request> requests_;
  std::vector<Clock::time_point> started_;
  std::vector<double> seconds_;
  std::deque<std::size_t> queue_;            // ready buckets not yet issued, in order
  std::optional<std::size_t> in_flight_;     // the bucket whose collective is running
  Phase phase_ = Phase::Gradients;
  std::vector<float> shard_;
  std::vector<std::int64_t> base_;
};

}  // namespace

std::unique_ptr<GradComm> make_mpi_grad_comm(const BucketPlan& plan, float* grads, float* params) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return nullptr;
  // The session bounds the waits by --rank-timeout; a program that initialised MPI itself (a
  // perf/ benchmark) gets a 300 s bound.
  return std::make_unique<MpiGradComm>(plan, grads, params, mpi::active() ? mpi::session() : nullptr);
}

#else

std::unique_ptr<GradComm> make_mpi_grad_comm(const BucketPlan&, float*, float*) { return nullptr; }

#endif

}  // namespace gpubench::suites::train
