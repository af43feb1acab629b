// The data-parallel pure pieces: the dp mode, the bucket plan (PyTorch DDP's grouping rule,
// zero1's divisibility and padding) and the bytes per step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "bench/suites/train/dp.hpp"
#include "bench/suites/train/dp_verify.hpp"
#include "bench/suites/train/train.hpp"
#include "kernels/train/model_reference.hpp"

namespace gpubench::suites::train {
namespace {

using kernels::train::ModelConfig;
using kernels::train::ModelKind;
using kernels::train::param_layout;

TEST(TrainDp, ModeNamesRoundTrip) {
  for (DpMode m : {DpMode::None, DpMode::Ddp, DpMode::Zero1}) EXPECT_EQ(parse_dp(to_string(m)), m);
  EXPECT_FALSE(parse_dp("fsdp").has_value());
}

TEST(TrainDp, BucketMbAxisAcceptsPositiveNumbersOnly) {
  EXPECT_FALSE(bucket_mb_error("25").has_value());
  EXPECT_FALSE(bucket_mb_error("0.25").has_value());
  for (const char* bad : {"0", "-1", "abc", "1e9", ""}) EXPECT_TRUE(bucket_mb_error(bad).has_value()) << bad;
}

ModelConfig gpt(std::int64_t layers = 3) {
  ModelConfig c;
  c.kind = ModelKind::Transformer;
  c.layers = layers;
  c.hidden = 64;
  c.heads = 4;
  c.seq = 16;
  c.vocab = 250;
  return c;
}

// The buckets tile [0, elements) without gap or overlap, highest offsets first.
void expect_tiles(const BucketPlan& plan) {
  ASSERT_FALSE(plan.buckets.empty());
  std::int64_t high = plan.elements;
  for (const Bucket& b : plan.buckets) {
    EXPECT_GT(b.count, 0);
    EXPECT_EQ(b.offset + b.count, high);
    high = b.offset;
  }
  EXPECT_EQ(high, 0);
}

TEST(TrainDp, OneHugeCapGivesOneBucketOfEverything) {
  const auto layout = param_layout(gpt());
  const BucketPlan plan = plan_buckets(layout, 1000, 4, DpMode::Ddp, 2);
  ASSERT_EQ(plan.buckets.size(), 1u);
  EXPECT_EQ(plan.buckets[0].offset, 0);
  EXPECT_EQ(plan.buckets[0].count, layout.total);
  EXPECT_EQ(plan.elements, layout.total);
  EXPECT_EQ(plan.padding, 0);
  EXPECT_EQ(plan.buckets[0].first_tensor, 0);
  EXPECT_EQ(plan.buckets[0].last_tensor, static_cast<int>(layout.tensors.size()) - 1);
  EXPECT_DOUBLE_EQ(comm_bytes_per_step(plan), 4.0 * static_cast<double>(layout.total));
}

TEST(TrainDp, BucketsCloseAtTheCapAndLargeTensorsStandAlone) {
  const auto layout = param_layout(gpt());
  const auto& t = layout.tensors;
  const int n = static_cast<int>(t.size());
  // A tensor's extent: from its offset to the next tensor's.
  auto extent_bytes = [&](int i) {
    const std::int64_t end = i + 1 < n ? t[static_cast<std::size_t>(i + 1)].offset : layout.total;
    return 4.0 * static_cast<double>(end - t[static_cast<std::size_t>(i)].offset);
  };
  const double cap_mb = 40e3 / kBucketMbBytes;  // 40 kB: wte (250 x 64 x 4 = 64 kB) is above it
  const BucketPlan plan = plan_buckets(layout, cap_mb, 4, DpMode::Ddp, 2);
  expect_tiles(plan);
  for (std::size_t i = 0; i < plan.buckets.size(); ++i) {
    const Bucket& b = plan.buckets[i];
    ASSERT_LE(b.first_tensor, b.last_tensor);
    EXPECT_EQ(b.offset, t[static_cast<std::size_t>(b.first_tensor)].offset);  // ddp moves no boundary
    const double bytes = 4.0 * static_cast<double>(b.count);
    if (b.first_tensor < b.last_tensor) {
      // Several tensors: none reaches the cap alone, and the bucket was below the cap before
      // its lowest tensor (the last to join) came in.
      for (int k = b.first_tensor; k <= b.last_tensor; ++k) EXPECT_LT(extent_bytes(k), plan.cap_bytes);
      EXPECT_LT(bytes - extent_bytes(b.first_tensor), plan.cap_bytes) << i;
    }
    // A bucket closes at the cap, or early when the tensor after it is large, or at the end.
    if (b.offset > 0 && bytes < plan.cap_bytes) {
      EXPECT_GE(extent_bytes(b.first_tensor - 1), plan.cap_bytes) << i;
    }
  }
  // wte (offset 0, 64 kB >= the cap) is a bucket of its own, ready last.
  EXPECT_EQ(plan.buckets.back().offset, 0);
  EXPECT_EQ(plan.buckets.back().first_tensor, 0);
  EXPECT_EQ(plan.buckets.back().last_tensor, 0);
}

TEST(TrainDp, ReadyCountFollowsTheBackwardWatermark) {
  const auto layout = param_layout(gpt());
  const BucketPlan plan = plan_buckets(layout, 40e3 / kBucketMbBytes, 4, DpMode::Ddp, 2);
  ASSERT_GE(plan.buckets.size(), 3u);
  EXPECT_EQ(plan.ready_count(plan.elements), 0u);
  EXPECT_EQ(plan.ready_count(plan.buckets[0].offset), 1u);
  EXPECT_EQ(plan.ready_count(plan.buckets[0].offset + 1), 0u);
  EXPECT_EQ(plan.ready_count(plan.buckets[1].offset), 2u);
  EXPECT_EQ(plan.ready_count(0), plan.buckets.size());
}

TEST(TrainDp, Zero1BucketsDivideByTheRanksAndPadTheEnd) {
  for (int ranks : {1, 2, 3, 4, 5, 7}) {
    const auto layout = param_layout(gpt());
    const BucketPlan plan = plan_buckets(layout, 30e3 / kBucketMbBytes, 4, DpMode::Zero1, ranks);
    expect_tiles(plan);
    EXPECT_EQ(plan.elements % ranks, 0) << ranks;
    EXPECT_EQ(plan.padding, plan.elements - layout.total);
    EXPECT_LT(plan.padding, ranks);
    std::int64_t shards = 0;
    for (const Bucket& b : plan.buckets) {
      EXPECT_EQ(b.count % ranks, 0) << ranks;
      EXPECT_EQ(b.shard * ranks, b.count);
      EXPECT_EQ(b.shard_offset(ranks - 1) + b.shard, b.offset + b.count);
      shards += b.shard;
    }
    EXPECT_EQ(plan.shard_elements(), shards);
    EXPECT_EQ(shards * ranks, plan.elements);
    EXPECT_DOUBLE_EQ(comm_bytes_per_step(plan), 2 * 4.0 * static_cast<double>(plan.elements));
  }
}

TEST(TrainDp, Zero1BoundaryMovesNeverMakeABucketReadyEarly) {
  // Moving a boundary up makes a bucket smaller at its low end: it is ready no later than its
  // lowest tensor, whatever the ranks.
  const auto layout = param_layout(gpt());
  const BucketPlan ddp = plan_buckets(layout, 30e3 / kBucketMbBytes, 4, DpMode::Ddp, 3);
  const BucketPlan z = plan_buckets(layout, 30e3 / kBucketMbBytes, 4, DpMode::Zero1, 3);
  ASSERT_EQ(ddp.buckets.size(), z.buckets.size());
  for (std::size_t i = 0; i < z.buckets.size(); ++i) {
    EXPECT_GE(z.buckets[i].offset, ddp.buckets[i].offset);
    EXPECT_LT(z.buckets[i].offset - ddp.buckets[i].offset, 3);
  }
}

TEST(TrainDp, MlpBucketsAndBadArguments) {
  ModelConfig c;
  c.kind = ModelKind::Mlp;
  c.layers = 4;
  c.hidden = 32;
  c.vocab = 10;
  const auto layout = param_layout(c);
  const BucketPlan plan = plan_buckets(layout, 1e-9, 4, DpMode::Ddp, 2);  // every tensor its own bucket
  expect_tiles(plan);
  EXPECT_EQ(plan.buckets.size(), layout.tensors.size());
  EXPECT_EQ(plan.buckets.front().first_tensor, static_cast<int>(layout.tensors.size()) - 1);  // head.b first
  EXPECT_THROW(plan_buckets(layout, 0, 4, DpMode::Ddp, 2), std::invalid_argument);
  EXPECT_THROW(plan_buckets(layout, 25, 4, DpMode::Ddp, 0), std::invalid_argument);
  EXPECT_EQ(comm_bytes_per_step(plan_buckets(layout, 25, 4, DpMode::None, 1)), 0);
}

TEST(TrainDp, PlansFromCountsTileTheBufferForPlainBenchmarks) {
  const BucketPlan ddp = plan_from_counts({1000, 3, 25}, 4, DpMode::Ddp, 4);
  expect_tiles(ddp);
  EXPECT_EQ(ddp.elements, 1028);
  EXPECT_EQ(ddp.buckets[0].count, 1000);
  EXPECT_EQ(ddp.buckets[0].offset, 28);
  const BucketPlan z = plan_from_counts({1000, 3, 25}, 4, DpMode::Zero1, 4);
  expect_tiles(z);
  EXPECT_EQ(z.elements, 1000 + 4 + 28);
  for (const Bucket& b : z.buckets) EXPECT_EQ(b.shard * 4, b.count);
  EXPECT_THROW(plan_from_counts({0}, 4, DpMode::Ddp, 2), std::invalid_argument);
}

TEST(TrainDpVerify, ChecksumsNameTheRanksThatDiffer) {
  std::vector<float> p = {1.0f, 2.0f, -3.5f};
  const std::string a = params_checksum(p.data(), 3);
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(a, params_checksum(p.data(), 3));
  // The test-only seam: one rank's parameters perturbed by one ulp.
  p[1] = std::nextafter(p[1], 3.0f);
  const std::string b = params_checksum(p.data(), 3);
  EXPECT_NE(a, b);
  EXPECT_FALSE(checksum_mismatch({a, a, a}).has_value());
  const auto m = checksum_mismatch({a, a, b, b});
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->find("ranks 2, 3 differ"), std::string::npos) << *m;
}

// One AdamW step of the reference's parameters from init with gradients g.
std::vector<float> adamw_once(const std::vector<float>& init, const std::vector<float>& g,
                              const kernels::train::AdamW& hp) {
  std::vector<float> p = init, m(init.size(), 0.0f), v(init.size(), 0.0f);
  kernels::train::adamw_step(p.data(), g.data(), m.data(), v.data(), static_cast<kernels::train::idx>(p.size()), hp, 1);
  return p;
}

TEST(TrainDpVerify, ParametersWithinAdamWsSensitivityPassAndAWrongUpdateFails) {
  ModelConfig c;
  c.kind = ModelKind::Mlp;
  c.layers = 2;
  c.hidden = 16;
  c.vocab = 8;
  const auto layout = param_layout(c);
  const std::vector<double> init_d = kernels::train::initial_params(c, 1);
  const std::vector<float> init(init_d.begin(), init_d.end());
  std::vector<float> g(init.size(), 0.0f);
  for (const auto& t : layout.tensors) {
    for (std::int64_t i = 0; i < t.size; ++i) {
      // Gradients over six decades, some of them far below AdamW's eps.
      g[static_cast<std::size_t>(t.offset + i)] = static_cast<float>(((i % 7) - 3) * std::pow(10.0, -3.0 - (i % 7)));
    }
  }
  const kernels::train::AdamW hp;
  const std::vector<float> want = adamw_once(init, g, hp);
  // The same step from gradients that differ in the last bits (another summation order).
  std::vector<float> g2 = g;
  for (float& x : g2) x *= 1.0f + 3e-7f;
  const GradTolerance tol;
  Verification ok = compare_dp_params(adamw_once(init, g2, hp), want, init, g, layout, hp, tol);
  EXPECT_TRUE(ok.passed) << ok.detail;
  EXPECT_EQ(ok.checked, layout.count);
  EXPECT_LT(ok.max_error, 0.1);
  // A rank that applied a wrong update to one parameter with a real gradient fails.
  std::vector<float> bad = adamw_once(init, g, hp);
  const std::size_t at = static_cast<std::size_t>(layout.at("h1.fc.w").offset + 1);  // gradient -2e-4
  bad[at] += static_cast<float>(0.5 * hp.lr);
  Verification v = compare_dp_params(bad, want, init, g, layout, hp, tol);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("h1.fc.w[1]"), std::string::npos) << v.detail;
  // Parameters from another shard (the wrong place) fail by far.
  std::vector<float> shifted = want;
  std::rotate(shifted.begin(), shifted.begin() + 1, shifted.end());
  EXPECT_FALSE(compare_dp_params(shifted, want, init, g, layout, hp, tol).passed);
}

}  // namespace
}  // namespace gpubench::suites::train

namespace gpubench::suites::train {
namespace {

// Two ranks, three rounds: each round counts its slowest rank, each figure is the median over rounds.
TEST(DpRoundFigures, SlowestRankPerRoundThenTheMedian) {
  const std::array<std::vector<std::vector<double>>, 3> rounds = {{
      {{1.0, 1.2, 1.1}, {1.3, 1.0, 1.0}},  // overlapped: slowest 1.3, 1.2, 1.1
      {{0.9, 0.8, 1.0}, {0.8, 0.8, 0.8}},  // compute only: slowest 0.9, 0.8, 1.0
      {{1.5, 1.4, 1.6}, {1.4, 1.4, 1.4}},  // serial: slowest 1.5, 1.4, 1.6
  }};
  const DpRoundFigures f = summarize_dp_rounds(rounds);
  EXPECT_DOUBLE_EQ(f.step_s, 1.2);
  EXPECT_DOUBLE_EQ(f.compute_s, 0.9);
  EXPECT_DOUBLE_EQ(f.comm_s, 1.5 - 0.9);
  EXPECT_EQ(f.rank_median_s[1], (std::vector<double>{0.9, 0.8}));
  EXPECT_NEAR(f.spread_pct, 100 * (0.9 - 0.8) / 0.9, 1e-9);
  // exposed 0.3 of 0.6 s of communication: half of it hidden.
  EXPECT_NEAR(f.overlap_pct(), 50, 1e-9);
  DpRoundFigures none;
  EXPECT_EQ(none.overlap_pct(), 0);
}

// The metrics both data-parallel steps report from their rounds, and the suspect rule.
TEST(DpRoundFigures, MetricsAndSuspect) {
  DpRoundFigures f;
  f.step_s = 2.0, f.compute_s = 1.5, f.comm_s = 1.0, f.spread_pct = 4;
  BucketPlan plan;
  plan.mode = DpMode::Ddp;
  plan.ranks = 2;
  plan.element_bytes = 4;
  plan.buckets.resize(3);
  Metrics m;
  m.items = 8;  // one rank's samples per step
  m.items_unit = "samples";
  add_dp_metrics(m, f, DpMode::Ddp, 2, plan);
  EXPECT_EQ(m.items, 16);
  EXPECT_EQ(m.extra["ranks"], 2);
  EXPECT_DOUBLE_EQ(m.extra["exposed_comm_s"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(m.extra["overlap_pct"].get<double>(), 50);
  EXPECT_DOUBLE_EQ(m.extra["scaling_efficiency"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(m.extra["global_samples_per_s"].get<double>(), 8);
  EXPECT_DOUBLE_EQ(m.extra["samples_per_s_per_rank"].get<double>(), 4);
  EXPECT_EQ(m.extra["buckets_per_step"], 3);
  EXPECT_FALSE(dp_suspect(f, 1.0).has_value());
  f.compute_s = 2.08;  // efficiency 1.04: suspect at 1.0, within the GPU's 1.05
  ASSERT_TRUE(dp_suspect(f, 1.0).has_value());
  EXPECT_NE(dp_suspect(f, 1.0)->find("exposed_comm_s < 0"), std::string::npos);
  EXPECT_FALSE(dp_suspect(f, 1.05).has_value());
  // Each bucket's collective alone joins the timeline when there is one time per bucket.
  plan.buckets[0].count = 10, plan.buckets[1].count = 20, plan.buckets[2].count = 30;
  const nlohmann::ordered_json d = dp_details(plan, 25, {0.1, 0.2, 0.3}, 0.3, 60, f, 5, 16, {1e-3, 2e-3, 3e-3});
  ASSERT_EQ(d["grad_buckets"].size(), 3u);
  EXPECT_EQ(d["grad_buckets"][2]["comm_s"], 3e-3);
  EXPECT_EQ(d["timing_rounds"], 5);
  EXPECT_FALSE(dp_details(plan, 25, {0.1, 0.2, 0.3}, 0.3, 60, f, 5, 16)["grad_buckets"][0].contains("comm_s"));
}

}  // namespace
}  // namespace gpubench::suites::train
