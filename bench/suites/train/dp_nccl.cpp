// GradComm over NCCL (dp_gpu.hpp). Compiled only with NCCL.
// The communicators are the collectives suite's (collectives/nccl_comm.hpp): non-blocking under
// MPI, so every NCCL call is followed by a wait until NCCL no longer answers ncclInProgress
// (progress.hpp) before the next call or any use of the stream; an error or the deadline aborts
// the communicators and ends the case (and an MPI run) naming the bucket.
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "bench/core/cuda.hpp"
#include "bench/mpi/session.hpp"
#include "bench/suites/collectives/nccl_comm.hpp"
#include "bench/suites/train/dp_gpu.hpp"
#include "bench/suites/train/dp_gpu_plan.hpp"

namespace gpubench::suites::train {
namespace {

namespace nc = collectives;

// This rank's communicator on the current device (cached by nccl_comm.hpp after the first call).
ncclComm_t run_comm(int device, double timeout_s, mpi::Session** session) {
  mpi::Session* s = mpi::active() ? mpi::session() : nullptr;
  if (s != nullptr && s->size() > 1) {
    *session = s;
    return nc::mpi_comm(*s, device, timeout_s);
  }
  *session = nullptr;
  return nc::process_comms(device, 1, timeout_s).front();
}

class NcclGradComm final : public GpuGradComm {
 public:
  NcclGradComm(const BucketPlan& plan, float* grads, float* params, cudaStream_t compute, double timeout_s)
      : plan_(plan), grads_(grads), params_(params), compute_(compute), timeout_s_(timeout_s) {
    GPUBENCH_CUDA_CHECK(cudaGetDevice(&device_));
    comm_ = run_comm(device_, timeout_s, &session_);
    if (session_ != nullptr) rank_ = session_->rank();
    int ranks = 0;
    GPUBENCH_NCCL_CHECK(ncclCommCount(comm_, &ranks));
    if (ranks != plan.ranks) {
      throw std::logic_error(fmt::format("dp: the bucket plan is for {} ranks, the communicator has {}", plan.ranks,
                                         ranks));
    }
    GPUBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&comm_stream_, cudaStreamNonBlocking));
    for (std::size_t i = 0; i < plan.buckets.size(); ++i) {
      ready_.push_back(std::make_unique<cuda::Event>());
    }
  }

  ~NcclGradComm() override {
    if (comm_stream_ != nullptr) (void)cudaStreamDestroy(comm_stream_);
  }

  const BucketPlan& plan() const override { return plan_; }
  int rank() const override { return rank_; }

  void start_bucket(std::size_t i) override {
    ready_.at(i)->record(compute_);
    GPUBENCH_CUDA_CHECK(cudaStreamWaitEvent(comm_stream_, ready_[i]->get(), 0));
    const CollectiveCall c = gradient_call(plan_, i, rank_);
    enqueue(c, fmt::format("bucket {} {}", i, to_string(c.kind)));
  }

  void progress() override {}

  void wait_gradients() override { compute_waits_comm(); }

  void gather_parameters() override {
    if (plan_.mode != DpMode::Zero1) return;
    params_ready_.record(compute_);
    GPUBENCH_CUDA_CHECK(cudaStreamWaitEvent(comm_stream_, params_ready_.get(), 0));
    for (std::size_t i = 0; i < plan_.buckets.size(); ++i) {
      const CollectiveCall c = parameter_call(plan_, i, rank_);
      enqueue(c, fmt::format("bucket {} parameter all_gather", i));
    }
  }

  void wait_parameters() override {
    if (plan_.mode == DpMode::Zero1) compute_waits_comm();
  }

  void combine_flag(int* device_flag) override {
    GPUBENCH_NCCL_CHECK(ncclAllReduce(device_flag, device_flag, 1, ncclInt32, ncclMax, comm_, compute_));
    settle("the fp16 overflow flag all_reduce");
  }

  void wait_idle(cudaStream_t compute) override {
    const auto deadline = nc::deadline_after(timeout_s_);
    for (cudaStream_t s : {comm_stream_, compute}) {
      while (true) {
        const cudaError_t e = cudaStreamQuery(s);
        if (e == cudaSuccess) break;
        if (e != cudaErrorNotReady) GPUBENCH_CUDA_CHECK(e);
        ncclResult_t async = ncclSuccess;
        (void)ncclCommGetAsyncError(comm_, &async);
        if (async != ncclSuccess && async != ncclInProgress) {
          nc::abort_all_comms();
          throw std::runtime_error(fmt::format("dp step on rank {} (GPU {}): {}", rank_, device_,
                                               ncclGetErrorString(async)));
        }
        if (std::chrono::steady_clock::now() > deadline) {
          nc::abort_all_comms();
          const std::string what = fmt::format("dp step on rank {} (GPU {}) did not complete within {} s", rank_,
                                               device_, timeout_s_);
          if (session_ != nullptr) session_->abort_run(what);
          throw std::runtime_error(what);
        }
        std::this_thread::yield();
      }
    }
  }

  void mark_backward_start() override {
    backward_start_.record(compute_);
    marked_ = true;
  }
  void mark_ready(std::size_t i) override { ready_.at(i)->record(compute_); }

  std::vector<double> ready_seconds() override {
    std::vector<double> out;
    if (!marked_) return out;
    for (const auto& e : ready_) out.push_back(cuda::Event::elapsed_ms(backward_start_, *e) * 1e-3);
    return out;
  }

  // One float all-reduced on the communication stream, each call timed alone by events around
  // it once both streams are idle; warm-up and timed counts fixed so every rank issues the same
  // collectives. The median is the latency `gpubench scaling` cannot read off one bucket size.
  // Each rank contributes its rank and the reduction is max, so the answer stays ranks - 1 call
  // after call; it is checked before the time is used.
  std::optional<double> small_all_reduce_seconds() override {
    constexpr int kWarmup = 5, kTimed = 51;
    wait_idle(compute_);
    cuda::DeviceBuffer one(sizeof(float));
    const float mine = static_cast<float>(rank_);
    GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(one.get(), &mine, sizeof(float), cudaMemcpyHostToDevice, comm_stream_));
    cuda::Event start, stop;
    std::vector<double> seconds;
    for (int i = 0; i < kWarmup + kTimed; ++i) {
      start.record(comm_stream_);
      GPUBENCH_NCCL_CHECK(ncclAllReduce(one.get(), one.get(), 1, ncclFloat32, ncclMax, comm_, comm_stream_));
      settle("the one-float all_reduce that measures latency");
      stop.record(comm_stream_);
      wait_idle(compute_);
      if (i >= kWarmup) seconds.push_back(cuda::Event::elapsed_ms(start, stop) * 1e-3);
    }
    float got = -1;
    GPUBENCH_CUDA_CHECK(cudaMemcpy(&got, one.get(), sizeof(float), cudaMemcpyDeviceToHost));
    if (got != static_cast<float>(plan_.ranks - 1)) {
      throw std::runtime_error(fmt::format("dp latency probe on rank {} (GPU {}): the max all-reduce gave {}, expected {}",
                                           rank_, device_, got, plan_.ranks - 1));
    }
    std::nth_element(seconds.begin(), seconds.begin() + kTimed / 2, seconds.end());
    return seconds[kTimed / 2];
  }

  void barrier() override {
    wait_idle(compute_);
    if (session_ != nullptr) (void)session_->all_gather(1.0, "data-parallel step barrier");
  }

 private:
  void compute_waits_comm() {
    comm_done_.record(comm_stream_);
    GPUBENCH_CUDA_CHECK(cudaStreamWaitEvent(compute_, comm_done_.get(), 0));
  }

  void enqueue(const CollectiveCall& c, const std::string& what) {
    float* base = c.on_parameters ? params_ : grads_;
    const auto n = static_cast<std::size_t>(c.count);
    switch (c.kind) {
      case CollectiveKind::AllReduce:
        GPUBENCH_NCCL_CHECK(ncclAllReduce(base + c.send_offset, base + c.recv_offset, n, ncclFloat32, ncclAvg, comm_,
                                          comm_stream_));
        break;
      case CollectiveKind::ReduceScatter:
        GPUBENCH_NCCL_CHECK(ncclReduceScatter(base + c.send_offset, base + c.recv_offset, n, ncclFloat32, ncclAvg,
                                              comm_, comm_stream_));
        break;
      case CollectiveKind::AllGather:
        GPUBENCH_NCCL_CHECK(ncclAllGather(base + c.send_offset, base + c.recv_offset, n, ncclFloat32, comm_,
                                          comm_stream_));
        break;
    }
    settle(what);
  }

  // Waits until NCCL has enqueued the call (non-blocking communicators may answer ncclInProgress).
  void settle(const std::string& what) {
    const nc::Settled s = nc::settle({comm_}, nc::deadline_after(timeout_s_));
    if (s.outcome == nc::Settled::Outcome::Ready) return;
    const std::string message =
        s.outcome == nc::Settled::Outcome::Failed
            ? fmt::format("dp {} on rank {} (GPU {}): {} ({})", what, rank_, device_,
                          ncclGetErrorString(static_cast<ncclResult_t>(s.code)), ncclGetLastError(comm_))
            : fmt::format("dp {} on rank {} (GPU {}): NCCL did not enqueue it within {} s", what, rank_, device_,
                          timeout_s_);
    nc::abort_all_comms();
    if (session_ != nullptr && s.outcome == nc::Settled::Outcome::TimedOut) session_->abort_run(message);
    throw std::runtime_error(message);
  }

  BucketPlan plan_;
  float* grads_;
  float* params_;
  cudaStream_t compute_;
  double timeout_s_;
  int device_ = 0, rank_ = 0;
  mpi::Session* session_ = nullptr;
  ncclComm_t comm_ = nullptr;
  cudaStream_t comm_stream_ = nullptr;
  std::vector<std::unique_ptr<cuda::Event>> ready_;
  cuda::Event params_ready_, comm_done_, backward_start_;
  bool marked_ = false;
};

}  // namespace

void join_nccl_comm(double timeout_s) {
  int device = 0;
  GPUBENCH_CUDA_CHECK(cudaGetDevice(&device));
  mpi::Session* session = nullptr;
  (void)run_comm(device, timeout_s, &session);
}

std::unique_ptr<GpuGradComm> make_nccl_grad_comm(const BucketPlan& plan, float* grads, float* params,
                                                 cudaStream_t compute, double timeout_s) {
  return std::make_unique<NcclGradComm>(plan, grads, params, compute, timeout_s);
}

}  // namespace gpubench::suites::train
