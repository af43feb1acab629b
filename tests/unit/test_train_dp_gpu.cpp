// The GPU data-parallel step's pure pieces (dp_gpu_plan.hpp): backward's stages and watermarks,
// which bucket starts after which stage, the NCCL calls on the flat buffers (in-place forms) and
// the step's order of operations (through a fake model and a fake communicator).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/suites/train/dp.hpp"
#include "bench/suites/train/dp_gpu_plan.hpp"
#include "bench/suites/train/train.hpp"
#include "fake_suite.hpp"

namespace gpubench::suites::train {
namespace {

using kernels::train::ModelConfig;
using kernels::train::ModelKind;
using kernels::train::param_layout;

ModelConfig transformer(std::int64_t layers) {
  ModelConfig c;
  c.kind = ModelKind::Transformer;
  c.layers = layers;
  c.hidden = 64;
  c.heads = 4;
  c.seq = 16;
  c.vocab = 300;
  return c;
}

ModelConfig mlp(std::int64_t layers) {
  ModelConfig c;
  c.kind = ModelKind::Mlp;
  c.layers = layers;
  c.hidden = 48;
  c.vocab = 10;
  return c;
}

// Between consecutive frontiers lie exactly the tensors backward finishes in that stage.
TEST(TrainDpGpu, BackwardStagesFinishTensorsInReverseLayoutOrder) {
  const ModelConfig t = transformer(3);
  const auto layout = param_layout(t);
  const std::vector<std::size_t> s = kernels::train::backward_stages(t);
  ASSERT_EQ(s.size(), 5u);  // lnf, blocks 2, 1, 0, embeddings
  EXPECT_EQ(layout.tensors[s[0]].name, "lnf.g");
  EXPECT_EQ(s.back(), 0u);
  const std::vector<std::string> prefix = {"lnf.", "h2.", "h1.", "h0.", "w"};
  std::size_t end = layout.tensors.size();
  for (std::size_t k = 0; k < s.size(); ++k) {
    ASSERT_LT(s[k], end);
    for (std::size_t i = s[k]; i < end; ++i) {
      EXPECT_EQ(layout.tensors[i].name.rfind(prefix[k], 0), 0u) << "stage " << k << " holds " << layout.tensors[i].name;
    }
    end = s[k];
  }

  const ModelConfig m = mlp(2);
  const auto ml = param_layout(m);
  const std::vector<std::size_t> ms = kernels::train::backward_stages(m);
  ASSERT_EQ(ms.size(), 3u);  // head, layer 1, layer 0
  EXPECT_EQ(ml.tensors[ms[0]].name, "head.w");
  EXPECT_EQ(ml.tensors[ms[1]].name, "h1.fc.w");
  EXPECT_EQ(ms[2], 0u);
}

TEST(TrainDpGpu, WatermarksDecreaseToZero) {
  for (const ModelConfig& c : {transformer(4), mlp(3)}) {
    const std::vector<std::int64_t> w = stage_watermarks(c);
    ASSERT_FALSE(w.empty());
    EXPECT_EQ(w.back(), 0);
    for (std::size_t i = 1; i < w.size(); ++i) EXPECT_LT(w[i], w[i - 1]);
  }
}

// Every bucket starts exactly once, in plan order, at the first stage after which it is whole.
void expect_earliest_starts(const BucketPlan& plan, const std::vector<std::int64_t>& w) {
  const auto starts = buckets_by_stage(plan, w);
  ASSERT_EQ(starts.size(), w.size());
  std::size_t next = 0;
  for (std::size_t s = 0; s < starts.size(); ++s) {
    for (std::size_t b : starts[s]) {
      EXPECT_EQ(b, next++);
      const Bucket& bucket = plan.buckets[b];
      EXPECT_LE(w[s], bucket.offset) << "bucket " << b << " started before its gradients were complete";
      if (s > 0) {
        EXPECT_GT(w[s - 1], bucket.offset) << "bucket " << b << " could have started a stage earlier";
      }
    }
  }
  EXPECT_EQ(next, plan.buckets.size());
}

TEST(TrainDpGpu, BucketsStartAtTheEarliestStage) {
  const ModelConfig c = transformer(6);
  const auto layout = param_layout(c);
  const double small_mb = static_cast<double>(layout.total) * 4 / 10 / kBucketMbBytes;
  for (DpMode mode : {DpMode::Ddp, DpMode::Zero1}) {
    for (int ranks : {1, 2, 3, 8}) {
      const BucketPlan plan = plan_buckets(layout, small_mb, 4, mode, ranks);
      ASSERT_GT(plan.buckets.size(), 3u);
      expect_earliest_starts(plan, stage_watermarks(c));
    }
  }
  // One bucket for the whole model: it starts when backward ends.
  const BucketPlan one = plan_buckets(layout, 1e6, 4, DpMode::Ddp, 2);
  ASSERT_EQ(one.buckets.size(), 1u);
  const auto starts = buckets_by_stage(one, stage_watermarks(c));
  EXPECT_EQ(starts.back(), std::vector<std::size_t>{0});
  for (std::size_t s = 0; s + 1 < starts.size(); ++s) EXPECT_TRUE(starts[s].empty());
  // The mlp too.
  const ModelConfig m = mlp(5);
  expect_earliest_starts(plan_buckets(param_layout(m), 48.0 * 48 * 4 / kBucketMbBytes, 4, DpMode::Zero1, 4),
                         stage_watermarks(m));
}

TEST(TrainDpGpu, BucketsByStageRefusesABackwardThatDoesNotFinish) {
  const BucketPlan plan = plan_buckets(param_layout(transformer(2)), 25, 4, DpMode::Ddp, 2);
  EXPECT_THROW(buckets_by_stage(plan, {100, 50}), std::logic_error);
  EXPECT_THROW(buckets_by_stage(plan, {}), std::logic_error);
}

// NCCL's in-place forms: reduce-scatter recvbuff == sendbuff + rank * recvcount; all-gather
// sendbuff == recvbuff + rank * sendcount. And the shards of all ranks tile each bucket.
TEST(TrainDpGpu, Zero1CallsAreNcclInPlaceAndShardsTileTheBuffer) {
  const ModelConfig c = transformer(4);
  const auto layout = param_layout(c);
  for (int ranks : {1, 2, 3, 4, 7}) {
    const BucketPlan plan =
        plan_buckets(layout, static_cast<double>(layout.total) * 4 / 5 / kBucketMbBytes, 4, DpMode::Zero1, ranks);
    std::vector<int> owners(static_cast<std::size_t>(plan.elements), 0);
    for (int r = 0; r < ranks; ++r) {
      for (std::size_t i = 0; i < plan.buckets.size(); ++i) {
        const Bucket& b = plan.buckets[i];
        const CollectiveCall rs = gradient_call(plan, i, r);
        EXPECT_EQ(rs.kind, CollectiveKind::ReduceScatter);
        EXPECT_FALSE(rs.on_parameters);
        EXPECT_EQ(rs.send_offset, b.offset);
        EXPECT_EQ(rs.recv_offset, rs.send_offset + r * rs.count);
        EXPECT_EQ(rs.count * ranks, b.count);
        const CollectiveCall ag = parameter_call(plan, i, r);
        EXPECT_EQ(ag.kind, CollectiveKind::AllGather);
        EXPECT_TRUE(ag.on_parameters);
        EXPECT_EQ(ag.recv_offset, b.offset);
        EXPECT_EQ(ag.send_offset, ag.recv_offset + r * ag.count);
        EXPECT_EQ(ag.count * ranks, b.count);
      }
      for (const Span& s : optimizer_spans(plan, r)) {
        for (std::int64_t k = s.offset; k < s.offset + s.count; ++k) ++owners[static_cast<std::size_t>(k)];
      }
    }
    EXPECT_TRUE(std::all_of(owners.begin(), owners.end(), [](int n) { return n == 1; }))
        << ranks << " ranks: an element updated by no rank or by several";
  }
}

TEST(TrainDpGpu, DdpAllReducesEachBucketInPlaceAndUpdatesEverything) {
  const auto layout = param_layout(transformer(3));
  const BucketPlan plan = plan_buckets(layout, static_cast<double>(layout.total) * 4 / 4 / kBucketMbBytes, 4,
                                       DpMode::Ddp, 4);
  std::int64_t covered = 0;
  for (std::size_t i = 0; i < plan.buckets.size(); ++i) {
    const CollectiveCall c = gradient_call(plan, i, 2);
    EXPECT_EQ(c.kind, CollectiveKind::AllReduce);
    EXPECT_EQ(c.send_offset, plan.buckets[i].offset);
    EXPECT_EQ(c.recv_offset, c.send_offset);
    EXPECT_EQ(c.count, plan.buckets[i].count);
    covered += c.count;
  }
  EXPECT_EQ(covered, plan.elements);
  EXPECT_THROW(parameter_call(plan, 0, 0), std::logic_error);
  std::int64_t spans = 0;
  for (const Span& s : optimizer_spans(plan, 3)) spans += s.count;
  EXPECT_EQ(spans, plan.elements);
}

// ---- the step's order of operations, through fakes ----
struct Log {
  std::vector<std::string> ops;
};

struct FakeModel {
  explicit FakeModel(Log& l) : log(l) {}
  Log& log;
  std::size_t stages = 3;
  bool overflow = false;
  std::function<void(std::size_t)> hook;
  void zero_grads() { log.ops.push_back("zero"); }
  void forward(std::size_t i) { log.ops.push_back("fwd" + std::to_string(i)); }
  void backward(std::size_t i) {
    for (std::size_t s = 0; s < stages; ++s) {
      log.ops.push_back("bwd" + std::to_string(i) + "." + std::to_string(s));
      if (hook) hook(s);
    }
  }
  void set_backward_hook(std::function<void(std::size_t)> h) { hook = std::move(h); }
  bool optimizer_step(int) {
    log.ops.push_back("adamw all");
    return true;
  }
  bool optimizer_step(int, const std::vector<Span>& ranges, const std::function<void(int*)>& combine) {
    int flag = overflow ? 1 : 0;
    if (combine) combine(&flag);
    log.ops.push_back("adamw " + std::to_string(ranges.size()) + " spans");
    return flag == 0;
  }
  void refresh_weight_copy() { log.ops.push_back("refresh"); }
};

struct FakeComm {
  explicit FakeComm(Log& l, int peer = 0) : log(l), peer_flag(peer) {}
  Log& log;
  int peer_flag;  // another rank's overflow flag
  void start_bucket(std::size_t b) { log.ops.push_back("start b" + std::to_string(b)); }
  void mark_backward_start() { log.ops.push_back("mark bwd"); }
  void mark_ready(std::size_t b) { log.ops.push_back("ready b" + std::to_string(b)); }
  void wait_gradients() { log.ops.push_back("wait grads"); }
  void gather_parameters() { log.ops.push_back("gather"); }
  void wait_parameters() { log.ops.push_back("wait params"); }
  void combine_flag(int* flag) {
    log.ops.push_back("combine");
    *flag = std::max(*flag, peer_flag);
  }
};

TEST(TrainDpGpu, StepOrderDdpWithAccumulationCommunicatesOnTheLastMicroStepOnly) {
  Log log;
  FakeModel m(log);
  FakeComm c(log);
  const std::vector<std::vector<std::size_t>> starts = {{0}, {}, {1, 2}};
  EXPECT_TRUE(dp_step(m, c, DpMode::Ddp, 2, starts, std::vector<Span>{}, 0, DpComm::Overlap, false));
  const std::vector<std::string> want = {"zero",  "fwd0",       "bwd0.0", "bwd0.1",     "bwd0.2",    "fwd1",
                                         "bwd1.0", "start b0",  "bwd1.1", "bwd1.2",     "start b1",  "start b2",
                                         "wait grads", "adamw all"};
  EXPECT_EQ(log.ops, want);
}

TEST(TrainDpGpu, StepOrderZero1ShardsThenGathersAndComputeOnlyLeavesCommunicationOut) {
  Log log;
  FakeModel m(log);
  FakeComm c(log);
  const std::vector<std::vector<std::size_t>> starts = {{}, {0}, {1}};
  const std::vector<Span> shards = {{10, 5}, {0, 5}};
  EXPECT_TRUE(dp_step(m, c, DpMode::Zero1, 1, starts, shards, 0, DpComm::Overlap, false));
  std::vector<std::string> want = {"zero",       "fwd0",         "bwd0.0", "bwd0.1", "start b0", "bwd0.2",
                                   "start b1",   "wait grads",   "adamw 2 spans", "gather", "wait params",
                                   "refresh"};
  EXPECT_EQ(log.ops, want);

  log.ops.clear();  // compute-only: the same work, no collective
  EXPECT_TRUE(dp_step(m, c, DpMode::Zero1, 1, starts, shards, 0, DpComm::Off, true));
  want = {"zero", "fwd0", "bwd0.0", "bwd0.1", "bwd0.2", "adamw 2 spans", "refresh"};
  EXPECT_EQ(log.ops, want);
}

// Serial: every collective after backward (the communication's own time); recording marks the
// ready points for the timeline without starting anything in a compute-only step.
TEST(TrainDpGpu, StepOrderSerialStartsAfterBackwardAndRecordingOnlyMarks) {
  Log log;
  FakeModel m(log);
  FakeComm c(log);
  const std::vector<std::vector<std::size_t>> starts = {{0}, {1}, {2}};
  EXPECT_TRUE(dp_step(m, c, DpMode::Ddp, 1, starts, std::vector<Span>{}, 0, DpComm::Serial, false));
  std::vector<std::string> want = {"zero",     "fwd0",     "bwd0.0",   "bwd0.1",     "bwd0.2",
                                   "start b0", "start b1", "start b2", "wait grads", "adamw all"};
  EXPECT_EQ(log.ops, want);

  log.ops.clear();
  EXPECT_TRUE(dp_step(m, c, DpMode::Ddp, 1, starts, std::vector<Span>{}, 0, DpComm::Off, false, /*record=*/true));
  want = {"zero", "fwd0", "mark bwd", "bwd0.0", "ready b0", "bwd0.1", "ready b1", "bwd0.2", "ready b2", "adamw all"};
  EXPECT_EQ(log.ops, want);
}

// fp16 zero1: each rank checks only its shards for overflow, so the flags are combined over
// ranks and every rank skips (or applies) the step alike, gathering nothing when skipped.
TEST(TrainDpGpu, Zero1Fp16AnotherRanksOverflowSkipsTheStepEverywhere) {
  Log log;
  FakeModel m(log);
  FakeComm c(log, /*peer=*/1);
  const std::vector<std::vector<std::size_t>> starts = {{}, {}, {0}};
  EXPECT_FALSE(dp_step(m, c, DpMode::Zero1, 1, starts, std::vector<Span>{{0, 4}}, 0, DpComm::Overlap, true));
  const std::vector<std::string> want = {"zero",       "fwd0",    "bwd0.0",        "bwd0.1", "bwd0.2",
                                         "start b0",   "wait grads", "combine", "adamw 1 spans"};
  EXPECT_EQ(log.ops, want);
}

// The suite's judgement of GPU data-parallel points before any case exists.
Point gpu_point(const std::string& dp, const std::string& micro_batch, const std::string& precision = "bf16-amp") {
  const std::vector<std::pair<std::string, std::string>> values = {
      {"model", "transformer"}, {"layers", "2"},   {"hidden", "64"},         {"heads", "4"},
      {"ffn_mult", "4"},        {"seq", "32"},     {"micro_batch", micro_batch}, {"vocab", "512"},
      {"precision", precision}, {"accum", "1"},   {"recompute", "none"},    {"dp", dp},
      {"bucket_mb", "25"}};
  Point p;
  for (const AxisSpec& a : train_axes()) {
    for (const auto& [name, v] : values) {
      if (name != a.name) continue;
      if (a.kind == AxisKind::Int) p.set(name, std::stoll(v));
      else p.set(name, v);
    }
  }
  return p;
}

TEST(TrainDpGpu, SuiteRefusesTheLargestBatchSearchAndRunsOneRankWithoutALauncher) {
  const auto suite = make_suite();
  const DeviceInfo gpu = testing::fake_gpu(0);
  // No launcher in a unit test: a GPU runs the step on one rank (a one-rank NCCL communicator),
  // the CPU says how to start ranks. A build without NCCL (as every build without CUDA is) says
  // that first, for every dp mode.
  if (const auto ddp = suite->unsupported(gpu, gpu_point("ddp", "2"))) {
    EXPECT_EQ(*ddp, "dp=ddp on CUDA devices needs a build with NCCL (GPUBENCH_WITH_NCCL)");
  } else {
    const auto search = suite->unsupported(gpu, gpu_point("zero1", "0"));
    ASSERT_TRUE(search.has_value());
    EXPECT_NE(search->find("micro_batch=0"), std::string::npos) << *search;
  }
  EXPECT_FALSE(suite->unsupported(gpu, gpu_point("none", "2")).has_value());
  const auto alone = suite->unsupported(testing::fake_cpu(), gpu_point("zero1", "2", "fp32"));
  ASSERT_TRUE(alone.has_value());
  EXPECT_NE(alone->find("mpirun"), std::string::npos) << *alone;
}

}  // namespace
}  // namespace gpubench::suites::train
