// The GPU data-parallel step's plan (see dp_gpu_plan.hpp).
#include "bench/suites/train/dp_gpu_plan.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace gpubench::suites::train {

std::vector<std::int64_t> stage_watermarks(const kernels::train::ModelConfig& c) {
  const kernels::train::ParamLayout layout = kernels::train::param_layout(c);
  std::vector<std::int64_t> w;
  for (std::size_t stage : kernels::train::backward_stages(c)) w.push_back(layout.tensors.at(stage).offset);
  return w;
}

std::vector<std::vector<std::size_t>> buckets_by_stage(const BucketPlan& plan,
                                                       const std::vector<std::int64_t>& watermarks) {
  if (watermarks.empty() || watermarks.back() != 0) {
    throw std::logic_error("buckets_by_stage: backward's last stage must complete every gradient (watermark 0)");
  }
  std::vector<std::vector<std::size_t>> out(watermarks.size());
  std::size_t started = 0;
  for (std::size_t s = 0; s < watermarks.size(); ++s) {
    const std::size_t ready = plan.ready_count(watermarks[s]);
    for (; started < ready; ++started) out[s].push_back(started);
  }
  return out;
}

std::string to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce: return "all_reduce";
    case CollectiveKind::ReduceScatter: return "reduce_scatter";
    case CollectiveKind::AllGather: return "all_gather";
  }
  return "";
}

CollectiveCall gradient_call(const BucketPlan& plan, std::size_t i, int rank) {
  const Bucket& b = plan.buckets.at(i);
  CollectiveCall c;
  if (plan.mode == DpMode::Zero1) {
    c.kind = CollectiveKind::ReduceScatter;
    c.send_offset = b.offset;
    c.recv_offset = b.shard_offset(rank);
    c.count = b.shard;
  } else {
    c.kind = CollectiveKind::AllReduce;
    c.send_offset = c.recv_offset = b.offset;
    c.count = b.count;
  }
  return c;
}

CollectiveCall parameter_call(const BucketPlan& plan, std::size_t i, int rank) {
  if (plan.mode != DpMode::Zero1) throw std::logic_error("parameter_call: only zero1 gathers parameters");
  const Bucket& b = plan.buckets.at(i);
  CollectiveCall c;
  c.kind = CollectiveKind::AllGather;
  c.send_offset = b.shard_offset(rank);
  c.recv_offset = b.offset;
  c.count = b.shard;
  c.on_parameters = true;
  return c;
}

std::vector<Span> optimizer_spans(const BucketPlan& plan, int rank) {
  std::vector<Span> spans;
  for (const Bucket& b : plan.buckets) {
    if (plan.mode == DpMode::Zero1) spans.push_back({b.shard_offset(rank), b.shard});
    else spans.push_back({b.offset, b.count});
  }
  return spans;
}

}  // namespace gpubench::suites::train
