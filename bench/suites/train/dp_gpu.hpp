#pragma once
// The GPU data-parallel step (--device cuda under mpirun/srun, one rank per GPU): gradients in
// the model's flat fp32 buffer, each bucket's NCCL collective on a communication stream as soon
// as backward has produced the bucket (dp_gpu_plan.hpp has the plan and its ordering).
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "bench/suites/train/dp.hpp"

namespace gpubench::suites::train {

// GradComm over NCCL. barrier() waits for this rank's streams, then for every rank (the MPI
// session). The other calls only enqueue: start_bucket(i) records an event on the compute
// stream, makes the communication stream wait for it and enqueues the bucket's collective in
// place on the flat buffers; wait_gradients() and wait_parameters() make the compute stream wait
// for the communication stream (the host does not block); gather_parameters() all-gathers the
// parameter shards once the compute stream has updated them; progress() does nothing (NCCL
// progresses on its own). zero1's reduced shards lie in place in the gradient buffer, at each
// bucket's shard_offset(rank) (shard_gradients() is null).
class GpuGradComm : public GradComm {
 public:
  // fp16: every rank's overflow flag (a device int), combined (max) in place on the compute stream.
  virtual void combine_flag(int* device_flag) = 0;
  // The bucket timeline: mark_backward_start() and mark_ready(b) record events on the compute
  // stream (start_bucket records the ready event too); ready_seconds() gives, for the last step
  // that marked them, each bucket's ready point from the backward start (waits for the events).
  virtual void mark_backward_start() = 0;
  virtual void mark_ready(std::size_t bucket) = 0;
  virtual std::vector<double> ready_seconds() = 0;
  // Waits until `compute` and the communication stream are idle, polling: an NCCL error or the
  // rank timeout aborts the communicators and ends the case (an MPI run) naming the rank.
  virtual void wait_idle(cudaStream_t compute) = 0;
};

// Creates (collectively, every rank at once) the communicator make_nccl_grad_comm will use on the
// current device, before any rank-local step that may fail (an allocation): a rank that stopped
// before joining would leave the others waiting in the creation.
void join_nccl_comm(double timeout_s);

// On the current device; `grads` and `params` hold plan.elements floats; the collectives wait
// for `compute`. Communicators: one per rank of the MPI session when there is one with several
// ranks, else a one-rank communicator (both from collectives/nccl_comm.hpp). Null without NCCL.
std::unique_ptr<GpuGradComm> make_nccl_grad_comm(const BucketPlan& plan, float* grads, float* params,
                                                 cudaStream_t compute, double timeout_s);

}  // namespace gpubench::suites::train
