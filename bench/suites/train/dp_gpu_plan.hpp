#pragma once
// The GPU data-parallel step's plan, as plain logic the CPU tests check (the NCCL code in
// cuda_dp_step.cpp only executes it):
//
//   compute stream:  fwd | bwd stage 0 | ev(ready b0) | bwd stage 1 | ... | wait(comm done) | AdamW
//   comm stream:               wait(ready b0) | collective b0 | wait(ready b1) | ... | ev(done)
//
// - Which buckets start after which backward stage (GpuModel calls its hook after each stage of
//   kernels::train::backward_stages): a bucket starts after the first stage whose watermark (the
//   offset from which every gradient is final) is at or below the bucket's offset, so never
//   before its last gradient is written and never later than needed.
// - The NCCL calls of each bucket, on the flat buffers in place: ddp one all-reduce (average) of
//   the bucket; zero1 one reduce-scatter (average) whose result is this rank's shard where it
//   lies in the bucket, and after the sharded AdamW one all-gather of the parameter shards.
//   NCCL's in-place forms (user guide, "In-place Operations"): reduce-scatter recvbuff ==
//   sendbuff + rank * recvcount, all-gather sendbuff == recvbuff + rank * sendcount.
// - With accumulation, only the last micro-step's backward starts collectives.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/core/phase.hpp"
#include "bench/suites/train/dp.hpp"
#include "kernels/train/model_config.hpp"

namespace gpubench::suites::train {

// The watermark (flat-buffer offset) after each stage of backward_stages(c).
std::vector<std::int64_t> stage_watermarks(const kernels::train::ModelConfig& c);

// For each backward stage, the buckets (indices into plan.buckets, ascending) to start once the
// stage is enqueued. Every bucket appears exactly once; the last stage's watermark is 0, so every
// bucket has started when backward ends.
std::vector<std::vector<std::size_t>> buckets_by_stage(const BucketPlan& plan,
                                                       const std::vector<std::int64_t>& watermarks);

// Whether micro-step `micro` (0-based) of `accum` communicates: only the last does.
inline bool communicates(std::int64_t micro, std::int64_t accum) { return micro + 1 == accum; }

enum class CollectiveKind { AllReduce, ReduceScatter, AllGather };
std::string to_string(CollectiveKind k);

// One NCCL call on the flat buffers: offsets in elements from the buffer's start, `count` the
// call's count argument (NCCL's: the per-rank block for reduce-scatter and all-gather).
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::AllReduce;
  std::int64_t send_offset = 0, recv_offset = 0, count = 0;
  bool on_parameters = false;  // the all-gather works on the parameters, the others on the gradients
};
// The gradient collective of bucket `i` on `rank` (ddp: all-reduce; zero1: reduce-scatter).
CollectiveCall gradient_call(const BucketPlan& plan, std::size_t i, int rank);
// zero1's parameter all-gather of bucket `i` on `rank`.
CollectiveCall parameter_call(const BucketPlan& plan, std::size_t i, int rank);
// The spans of the flat buffers this rank's AdamW updates: every bucket (ddp, none) or its
// shard of each bucket (zero1).
struct Span {
  std::int64_t offset = 0, count = 0;
};
std::vector<Span> optimizer_spans(const BucketPlan& plan, int rank);

// How a step communicates (as the CPU step): as measured, each bucket as soon as backward has
// produced it (Overlap); not at all, the same work without any collective (Off: the compute-only
// step); every bucket after backward (Serial: nothing hidden, so Serial - Off is the
// communication's own time).
enum class DpComm { Overlap, Off, Serial };

// One data-parallel optimizer step of one rank, in the order the streams need:
//   zero the gradients; per micro-step forward, then backward, whose hook starts the buckets of
//   buckets_by_stage() after each stage (last micro-step only); wait_gradients (the optimizer's
//   stream waits for the communication); AdamW on `ranges` (every bucket for ddp; zero1: the
//   shards, fp16's overflow flag combined over ranks), then zero1's parameter all-gather and
//   wait, then the 16-bit weight copy's refresh.
// `record`: the last micro-step's backward start and each bucket's ready point are marked
// (comm.mark_backward_start(), comm.mark_ready(b)) for the bucket timeline, also without
// communication. Model and Comm are GpuModel and GpuGradComm (fakes in the tests). Returns
// whether AdamW was applied.
template <class Model, class Comm, class Ranges, class Hyper>
bool dp_step(Model& model, Comm& comm, DpMode mode, std::int64_t accum,
             const std::vector<std::vector<std::size_t>>& starts, const Ranges& ranges, const Hyper& hp, DpComm how,
             bool fp16, bool record = false) {
  const bool communicate = how != DpComm::Off;
  {
    PhaseScope p("optimizer");  // zeroing the gradients belongs to the optimizer
    model.zero_grads();
  }
  for (std::int64_t i = 0; i < accum; ++i) {
    {
      PhaseScope p("forward");
      model.forward(static_cast<std::size_t>(i));
    }
    PhaseScope p("backward");
    if (communicates(i, accum) && (how == DpComm::Overlap || record)) {
      if (record) comm.mark_backward_start();
      model.set_backward_hook([&](std::size_t stage) {
        for (std::size_t b : starts.at(stage)) {
          if (how == DpComm::Overlap) comm.start_bucket(b);
          else comm.mark_ready(b);
        }
      });
    }
    model.backward(static_cast<std::size_t>(i));
    model.set_backward_hook({});
  }
  PhaseScope p("optimizer");
  if (how == DpComm::Serial) {
    for (const auto& stage : starts) {
      for (std::size_t b : stage) comm.start_bucket(b);
    }
  }
  if (communicate) comm.wait_gradients();
  if (mode != DpMode::Zero1) return model.optimizer_step(hp);
  std::function<void(int*)> combine;
  if (communicate && fp16) combine = [&](int* flag) { comm.combine_flag(flag); };
  const bool applied = model.optimizer_step(hp, ranges, combine);
  if (applied && communicate) {
    comm.gather_parameters();
    comm.wait_parameters();
  }
  if (applied) model.refresh_weight_copy();
  return applied;
}

}  // namespace gpubench::suites::train
