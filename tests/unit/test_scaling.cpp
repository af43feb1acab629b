// The scaling model (reports/scaling_model.hpp) on hand-computed small cases, and the
// projection from results files (reports/scaling.hpp) on the synthetic fixtures in
// tests/fixtures/scaling (made by make_scaling_fixtures.py).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <functional>

#include <nlohmann/json.hpp>

#include "bench/core/errors.hpp"
#include "reports/scaling.hpp"
#include "reports/scaling_model.hpp"
#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gpubench::reports;
using namespace gpubench::reports::scaling;
using gpubench::testing::usage_error;

const fs::path kFixtures = fs::path(GPUBENCH_FIXTURES_DIR) / "scaling";

// all_reduce at 2 ranks: 10 us at 256 B (latency alone: kLatencyOnlyBytes), 1 ms at 1e6 B (bus
// bandwidth 0.0256 and 1 GB/s).
Curve two_point_curve(Op op = Op::all_reduce) {
  Curve c;
  c.op = op;
  c.ranks = 2;
  c.points = {{256, 10e-6}, {1e6, 1e-3}};
  c.label = "test curve";
  return c;
}

TEST(ScalingModel, BusFactorsAndRingSteps) {
  EXPECT_DOUBLE_EQ(bus_factor(Op::all_reduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(bus_factor(Op::reduce_scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(Op::all_gather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Op::all_reduce, 1), 0);
  EXPECT_EQ(ring_steps(Op::all_reduce, 4), 6);
  EXPECT_EQ(ring_steps(Op::all_gather, 4), 3);
  EXPECT_EQ(ring_steps(Op::reduce_scatter, 1), 0);
}

TEST(ScalingModel, CurveTimeAtTheMeasuredRankCountIsTheMeasurement) {
  const Curve c = two_point_curve();
  Notes notes;
  EXPECT_NEAR(curve_time(c, 1e6, 2, &notes), 1e-3, 1e-12);
  EXPECT_NEAR(curve_time(c, 256, 2, &notes), 10e-6, 1e-15);
  EXPECT_TRUE(notes.empty());
  // Halfway in log size the bus bandwidth is halfway: (0.0256 + 1) / 2 GB/s.
  const double mid = std::sqrt(256 * 1e6);
  EXPECT_NEAR(busbw_at(c, mid), 0.5128e9, 1);
  EXPECT_NEAR(curve_time(c, mid, 2), mid / 0.5128e9, 1e-12);
  EXPECT_EQ(curve_time(c, 1e6, 1), 0);  // one rank: nothing to exchange
  EXPECT_EQ(curve_time(c, 0, 8), 0);
}

TEST(ScalingModel, CurveTimeConvertsToMoreRanks) {
  // alpha = 10 us / 2 steps = 5 us; at 4 ranks: 6 steps x 5 us + (1 ms - 10 us) x 1.5 / 1.
  const Curve c = two_point_curve();
  Notes notes;
  EXPECT_NEAR(curve_time(c, 1e6, 4, &notes), 30e-6 + 990e-6 * 1.5, 1e-12);
  EXPECT_EQ(notes.size(), 1u);  // converted from 2 ranks
}

TEST(ScalingModel, CurveTimeOutsideTheMeasuredRange) {
  const Curve c = two_point_curve();
  Notes below, above;
  EXPECT_NEAR(curve_time(c, 100, 2, &below), 10e-6, 1e-15);  // latency only
  ASSERT_EQ(below.size(), 1u);
  EXPECT_NE(below.begin()->find("below the smallest measured size"), std::string::npos);
  EXPECT_NEAR(curve_time(c, 2e6, 2, &above), 2e-3, 1e-12);  // the last bus bandwidth, 1 GB/s
  ASSERT_EQ(above.size(), 1u);
  EXPECT_NE(above.begin()->find("above the largest measured size"), std::string::npos);
}

// Issue 25 item 7: where latency comes from. A curve that cannot tell latency from bandwidth
// must not pretend to: one bucket size alone made the whole bucket "latency", and the projection
// grew it with the ring's 2(N-1) steps (63x at 64 GPUs).
TEST(ScalingModel, StepLatencyFromASmallSizeAFitAProbeOrNone) {
  // Full curve starting at a small size: its time over the ring's steps, no note.
  Curve full = two_point_curve();
  full.points.insert(full.points.begin() + 1, {65536, 50e-6});
  StepLatency l = step_latency(full);
  EXPECT_NEAR(l.seconds, 5e-6, 1e-15);
  EXPECT_TRUE(l.how.empty());
  // Two sizes, both large: the line through them. 1e5 B in 0.15 ms and 1e6 B in 1.05 ms:
  // slope 1 ns/B, so 2 x alpha = 0.15 ms - 0.1 ms: alpha = 25 us.
  Curve two;
  two.op = Op::all_reduce;
  two.ranks = 2;
  two.label = "two sizes";
  two.points = {{1e5, 0.15e-3}, {1e6, 1.05e-3}};
  l = step_latency(two);
  EXPECT_NEAR(l.seconds, 25e-6, 1e-12);
  EXPECT_NE(l.how.find("the line through the two smallest sizes"), std::string::npos) << l.how;
  // A noisy line through the origin or below it: latency 0, never negative.
  two.points = {{1e5, 0.1e-3}, {1e6, 1.2e-3}};
  EXPECT_EQ(step_latency(two).seconds, 0);
  // One large size (a data-parallel case's single bucket): refused, naming what is missing ...
  Curve one;
  one.op = Op::all_reduce;
  one.ranks = 2;
  one.label = "all_reduce at 2 ranks (the data-parallel case's own buckets)";
  one.points = {{1.2e6, 146e-6}};
  try {
    (void)step_latency(one);
    ADD_FAILURE() << "one size gave a latency";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cannot tell latency from bandwidth"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("collectives suite"), std::string::npos) << e.what();
  }
  // ... unless a small all-reduce was timed apart: 1.16 us over 2 steps = 0.58 us a step.
  one.latency_probe = Curve::Probe{Op::all_reduce, 4, 1.16e-6};
  l = step_latency(one);
  EXPECT_NEAR(l.seconds, 0.58e-6, 1e-15);
  EXPECT_NE(l.how.find("timed apart"), std::string::npos) << l.how;
}

// The projection of that one bucket at 8, 64 and 512 GPUs, by hand (docs/scaling.md works the
// same numbers): alpha = 0.58 us; the bandwidth part at 2 ranks 146 - 2 x 0.58 = 144.84 us with
// bus factor 1; at N: 2(N-1) x 0.58 us + 144.84 us x 2(N-1)/N (nccl-tests' all-reduce busbw factor).
TEST(ScalingModel, OneBucketWithAProbeGrowsAsARingAllReduce) {
  Curve one;
  one.op = Op::all_reduce;
  one.ranks = 2;
  one.label = "one bucket";
  one.points = {{1.2e6, 146e-6}};
  one.latency_probe = Curve::Probe{Op::all_reduce, 4, 1.16e-6};
  const double bw = 146e-6 - 2 * 0.58e-6;
  for (const int n : {8, 64, 512}) {
    const double expected = 2 * (n - 1) * 0.58e-6 + bw * 2.0 * (n - 1) / n;
    EXPECT_NEAR(curve_time(one, 1.2e6, n), expected, 1e-12) << n;
  }
  EXPECT_NEAR(curve_time(one, 1.2e6, 8), 261.59e-6, 0.01e-6);
  EXPECT_NEAR(curve_time(one, 1.2e6, 64), 358.23e-6, 0.01e-6);
  EXPECT_NEAR(curve_time(one, 1.2e6, 512), 881.87e-6, 0.01e-6);
  // Bandwidth-bound: under 2x the 2-rank time (plus latency) at 64, not 63x as before.
  EXPECT_LT(curve_time(one, 1.2e6, 64), 4 * curve_time(one, 1.2e6, 2));
}

TEST(ScalingModel, LinkTime) {
  // 4 ranks, 10 GB/s, 2 us: 6 steps x 2 us + 1e6 x 1.5 / 1e10.
  EXPECT_NEAR(link_time(Op::all_reduce, {10, 2e-6}, 1e6, 4), 12e-6 + 150e-6, 1e-12);
  EXPECT_NEAR(link_time(Op::all_gather, {10, 0}, 1e6, 2), 50e-6, 1e-12);
}

TEST(ScalingModel, OverlapFullyHidden) {
  const Overlap o = overlap({{100, 1e-3}, {100, 2e-3}}, {0.5e-3, 0.5e-3}, 3e-3);
  EXPECT_NEAR(o.comm_end_s, 2.5e-3, 1e-12);
  EXPECT_NEAR(o.comm_s, 1e-3, 1e-12);
  EXPECT_EQ(o.exposed_s, 0);
}

TEST(ScalingModel, OverlapFullyExposed) {
  // Both buckets complete only at the end of backward: all of the communication shows.
  const Overlap o = overlap({{100, 3e-3}, {100, 3e-3}}, {1e-3, 1e-3}, 3e-3);
  EXPECT_NEAR(o.exposed_s, 2e-3, 1e-12);
}

TEST(ScalingModel, OverlapQueuesBehindThePreviousCollective) {
  // The second bucket is ready at 1.2 ms but waits for the first collective (until 2 ms).
  const Overlap o = overlap({{100, 1e-3}, {100, 1.2e-3}}, {1e-3, 1e-3}, 2.5e-3);
  EXPECT_NEAR(o.comm_end_s, 3e-3, 1e-12);
  EXPECT_NEAR(o.exposed_s, 0.5e-3, 1e-12);
}

Network flat_network() {
  Network n;
  n.intra = {two_point_curve()};
  return n;
}

TEST(ScalingModel, DdpStepOneBucketFullyExposed) {
  // One bucket of 1e6 B ready at the end of backward: the whole all-reduce (1 ms) is exposed.
  const StepInput in{{{1e6, 6e-3}}, 6e-3, 10e-3};
  const StepProjection p = project_step(flat_network(), Dp::ddp, in, 2);
  EXPECT_NEAR(p.comm_s, 1e-3, 1e-12);
  EXPECT_NEAR(p.exposed_s, 1e-3, 1e-12);
  EXPECT_NEAR(p.step_s, 11e-3, 1e-12);
  EXPECT_NEAR(p.efficiency, 10.0 / 11.0, 1e-12);
  EXPECT_NEAR(p.overlap_pct, 0, 1e-9);
  const StepProjection one = project_step(flat_network(), Dp::ddp, in, 1);
  EXPECT_EQ(one.step_s, 10e-3);
  EXPECT_EQ(one.efficiency, 1);
}

TEST(ScalingModel, DdpStepFullyHidden) {
  const StepInput in{{{1e6, 1e-3}}, 6e-3, 10e-3};
  const StepProjection p = project_step(flat_network(), Dp::ddp, in, 2);
  EXPECT_EQ(p.exposed_s, 0);
  EXPECT_EQ(p.step_s, 10e-3);
  EXPECT_NEAR(p.overlap_pct, 100, 1e-9);
  EXPECT_EQ(p.efficiency, 1);
}

TEST(ScalingModel, Zero1AllGatherIsNotOverlapped) {
  // No reduce-scatter / all-gather curve: each is half the all-reduce (0.5 ms at 1e6 B, 2 ranks).
  const StepInput in{{{1e6, 1e-3}}, 6e-3, 10e-3};
  Notes notes;
  const StepProjection p = project_step(flat_network(), Dp::zero1, in, 2, &notes);
  EXPECT_NEAR(p.comm_s, 1e-3, 1e-12);
  EXPECT_NEAR(p.exposed_s, 0.5e-3, 1e-12);  // the all-gather after the optimizer
  EXPECT_NEAR(p.overlap_pct, 50, 1e-9);
  EXPECT_EQ(notes.count("intra-node: no reduce_scatter curve; taken as half of the all_reduce time"), 1u);
}

TEST(ScalingModel, Zero1CreditsTheOptimizersShard) {
  // The same step with 4 ms of its 10 ms in the optimizer: at 2 ranks each rank updates half
  // the parameters (compute 10 - 4/2 = 8 ms), at 4 ranks a quarter (10 - 4 x 3/4 = 7 ms); ddp
  // keeps the whole update.
  StepInput in{{{1e6, 1e-3}}, 6e-3, 10e-3};
  in.optimizer_s = 4e-3;
  const StepProjection two = project_step(flat_network(), Dp::zero1, in, 2);
  EXPECT_NEAR(two.compute_s, 8e-3, 1e-12);
  EXPECT_NEAR(two.step_s, 8e-3 + 0.5e-3, 1e-12);  // + the all-gather
  EXPECT_NEAR(project_step(flat_network(), Dp::zero1, in, 4).compute_s, 7e-3, 1e-12);
  EXPECT_EQ(project_step(flat_network(), Dp::ddp, in, 4).compute_s, 10e-3);
  EXPECT_EQ(project_step(flat_network(), Dp::zero1, in, 1).compute_s, 10e-3);
}

TEST(ScalingModel, Hierarchical) {
  // 8 GPUs, 2 per node, 4 nodes: intra all-reduce at 2 ranks on 1e6 B (1 ms, measured) + inter
  // all-reduce at 4 ranks on 5e5 B from figures (10 GB/s, 2 us): 6 x 2 us + 5e5 x 1.5 / 1e10.
  Network n = flat_network();
  n.gpus_per_node = 2;
  n.inter_figures = LinkFigures{10, 2e-6};
  EXPECT_NEAR(op_time(n, Op::all_reduce, 1e6, 8), 1e-3 + 12e-6 + 75e-6, 1e-12);
  // Within one node the intra curve alone.
  EXPECT_NEAR(op_time(n, Op::all_reduce, 1e6, 2), 1e-3, 1e-12);
  const StepProjection p = project_step(n, Dp::ddp, {{{1e6, 6e-3}}, 6e-3, 10e-3}, 8);
  EXPECT_EQ(p.nodes, 4);
  EXPECT_NEAR(p.exposed_s, 1.087e-3, 1e-12);

  // A measured inter-node curve instead: the same numbers as a curve at 4 ranks.
  Network m = flat_network();
  m.gpus_per_node = 2;
  Curve inter;
  inter.op = Op::all_reduce;
  inter.ranks = 4;
  inter.points = {{1000, 12e-6}, {5e5, 12e-6 + 5e5 * 1.5 / 1e10}};  // measured at the inter part's size
  inter.label = "inter";
  m.inter = {inter};
  EXPECT_NEAR(op_time(m, Op::all_reduce, 1e6, 8), 1e-3 + 12e-6 + 75e-6, 1e-12);
}

TEST(ScalingModel, HierarchicalNeedsAnInterNodeFigure) {
  Network n = flat_network();
  n.gpus_per_node = 2;
  try {
    op_time(n, Op::all_reduce, 1e6, 8);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no inter-node curve"), std::string::npos) << e.what();
  }
  n.inter_figures = LinkFigures{10, 0};
  EXPECT_THROW(op_time(n, Op::all_reduce, 1e6, 7), std::invalid_argument);  // not whole nodes
}

TEST(ScalingModel, MissingOperationIsNamed) {
  Network n;
  n.intra = {two_point_curve(Op::reduce_scatter)};
  try {
    op_time(n, Op::all_reduce, 1e6, 2);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no intra-node all_reduce curve"), std::string::npos) << e.what();
  }
  // all-reduce from reduce-scatter + all-gather when both were measured.
  n.intra.push_back(two_point_curve(Op::all_gather));
  EXPECT_NEAR(op_time(n, Op::all_reduce, 1e6, 2), 2e-3, 1e-12);
}

// ---------------------------------------------------------------- from results files

std::vector<ResultsFile> fixture(std::initializer_list<const char*> names) {
  std::vector<ResultsFile> out;
  for (const char* n : names) out.push_back(read_results(kFixtures / n));
  return out;
}

TEST(Scaling, ReadsTimelinesAndCurves) {
  const auto files = fixture({"cpu_dp.json"});
  const std::vector<TrainCase> cases = train_cases(files);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].dp, "none");
  EXPECT_EQ(cases[0].step.buckets.size(), 2u);
  EXPECT_DOUBLE_EQ(cases[0].step.backward_s, 0.012);
  EXPECT_DOUBLE_EQ(cases[0].work_per_step, 4);
  EXPECT_EQ(cases[0].work_unit, "samples");
  EXPECT_EQ(cases[1].dp, "ddp");
  EXPECT_EQ(cases[1].ranks, 2);
  EXPECT_DOUBLE_EQ(*cases[1].measured_step_s, 0.0215);
  EXPECT_EQ(cases[0].label, cases[1].label);  // dp is not part of the label
  const MeasuredNetwork net = measured_network(files, "cpu");
  EXPECT_EQ(net.intra.size(), 3u);
  EXPECT_TRUE(net.inter.empty());
  EXPECT_TRUE(measured_network(files, "cuda").intra.empty());
}

TEST(Scaling, ReadsTheOptimizersShareExceptFromAZero1Case) {
  std::ifstream in(kFixtures / "cpu_dp.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  const auto write = [](const fs::path& p, const nlohmann::json& j) { std::ofstream(p) << j.dump(); };
  doc["benchmarks"][0]["gpubench"]["metrics"]["optimizer_fraction"] = 0.25;  // dp=none, step 0.02 s
  doc["benchmarks"][1]["gpubench"]["metrics"]["optimizer_fraction"] = 0.25;  // ddp
  const fs::path none_ddp = fs::path(::testing::TempDir()) / "scaling_optimizer.json";
  write(none_ddp, doc);
  std::vector<TrainCase> cases = train_cases({read_results(none_ddp)});
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_DOUBLE_EQ(cases[0].step.optimizer_s, 0.25 * 0.02);
  EXPECT_DOUBLE_EQ(cases[1].step.optimizer_s, 0.25 * 0.0201);
  doc["benchmarks"][1]["gpubench"]["details"]["dp"] = "zero1";
  write(none_ddp, doc);
  cases = train_cases({read_results(none_ddp)});
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[1].dp, "zero1");
  EXPECT_EQ(cases[1].step.optimizer_s, 0);  // its compute-only step already updates a shard
}

TEST(Scaling, ASingleDeviceCaseTimedOnEveryRankGivesTheComputeAndStretchesTheTimeline) {
  std::ifstream in(kFixtures / "cpu_dp.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  auto& measurement = doc["benchmarks"][0]["gpubench"]["measurement"];  // dp=none: step 0.02 s, backward 0.012 s
  measurement["ranks"] = 2;
  measurement["mean_over_ranks_s"] = 0.04;
  measurement["max_over_ranks_s"] = 0.05;  // not used: the ranks' runs were not in step
  const fs::path file = fs::path(::testing::TempDir()) / "scaling_contended.json";
  std::ofstream(file) << doc.dump();
  const std::vector<TrainCase> cases = train_cases({read_results(file)});
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_DOUBLE_EQ(cases[0].step.compute_s, 0.04);
  EXPECT_DOUBLE_EQ(cases[0].step.backward_s, 0.024);
  const std::vector<TrainCase> alone = train_cases(fixture({"cpu_dp.json"}));
  ASSERT_EQ(alone[0].step.buckets.size(), cases[0].step.buckets.size());
  for (std::size_t i = 0; i < alone[0].step.buckets.size(); ++i) {
    EXPECT_DOUBLE_EQ(cases[0].step.buckets[i].ready_s, 2 * alone[0].step.buckets[i].ready_s);
  }
  EXPECT_DOUBLE_EQ(cases[1].step.compute_s, alone[1].step.compute_s);  // a dp case keeps its compute-only step
}

TEST(Scaling, WithoutACollectivesSuiteTheDpCasesBucketTimesAreTheCurve) {
  std::ifstream in(kFixtures / "cpu_dp.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  nlohmann::json kept = nlohmann::json::array();
  for (auto& b : doc["benchmarks"]) {
    if (b["gpubench"]["suite"] == "collectives") continue;
    if (b["gpubench"]["details"].value("dp", "") == "ddp") {
      double t = 1e-3;
      for (auto& k : b["gpubench"]["details"]["grad_buckets"]) k["comm_s"] = (t *= 2);
    }
    kept.push_back(b);
  }
  doc["benchmarks"] = kept;
  const fs::path file = fs::path(::testing::TempDir()) / "scaling_dp_only.json";
  std::ofstream(file) << doc.dump();
  const MeasuredNetwork net = measured_network({read_results(file)}, "cpu");
  ASSERT_EQ(net.intra.size(), 1u);
  EXPECT_EQ(net.intra[0].op, Op::all_reduce);
  EXPECT_EQ(net.intra[0].ranks, 2);
  EXPECT_EQ(net.intra[0].points.size(), 2u);  // the fixture's two buckets
  EXPECT_NE(net.intra[0].label.find("the data-parallel case's own buckets"), std::string::npos);
  // With a collectives suite in the files, its curves are used instead.
  EXPECT_EQ(measured_network(fixture({"cpu_dp.json"}), "cpu").intra.size(), 3u);
}

TEST(Scaling, ProjectsAndValidates) {
  ScalingOptions o;
  o.gpus = {1, 2, 8};
  o.train_samples = 1e6;
  o.prices.add_assignment("Synthetic=2");
  const ScalingResult r = project(fixture({"cpu_dp.json"}), o);
  ASSERT_EQ(r.projections.size(), 3u);  // ddp (the mode measured), three GPU counts
  EXPECT_EQ(r.projections[0].step.step_s, 0.02);
  EXPECT_DOUBLE_EQ(r.projections[0].work_per_s, 4 / 0.02);
  // At 2 ranks both buckets' all-reduces (about 0.53 and 0.14 ms) end before backward (12 ms).
  EXPECT_DOUBLE_EQ(r.projections[1].step.step_s, 0.02);
  EXPECT_GT(r.projections[2].step.comm_s, r.projections[1].step.comm_s);
  ASSERT_TRUE(r.projections[2].cost_usd.has_value());
  EXPECT_NEAR(*r.projections[2].cost_usd, *r.projections[2].hours * 8 * 2, 1e-9);
  ASSERT_EQ(r.validation.size(), 1u);
  EXPECT_EQ(r.validation[0].ranks, 2);
  EXPECT_DOUBLE_EQ(r.validation[0].measured_s, 0.0215);
  EXPECT_DOUBLE_EQ(r.validation[0].projected_s, 0.02);
  EXPECT_NEAR(r.validation[0].error_pct, 100 * (0.02 - 0.0215) / 0.0215, 1e-9);
  EXPECT_EQ(r.validation[0].basis, "single-device case");

  const auto j = to_json(r);
  for (const char* key : {"gpus", "step_s", "scaling_efficiency", "samples_per_s", "hours_to_train", "cost_usd"}) {
    EXPECT_TRUE(j["projections"][2].contains(key)) << key;
  }
  for (const char* key : {"ranks", "measured_s", "projected_s", "error_pct"}) {
    EXPECT_TRUE(j["validation"][0].contains(key)) << key;
  }
  EXPECT_FALSE(j["assumptions"].empty());
}

TEST(Scaling, WithoutASingleDeviceCaseProjectsFromTheDpCase) {
  auto files = fixture({"cpu_dp.json"});
  auto& entries = files[0].entries;
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [](const ResultEntry& e) { return e.suite == "train" && e.axes.value("dp", "") == "none"; }),
                entries.end());
  ScalingOptions o;
  o.gpus = {4};
  o.train_filter = "hidden=128";
  const ScalingResult r = project(files, o);
  ASSERT_EQ(r.projections.size(), 1u);
  EXPECT_EQ(r.projections[0].basis, "compute-only timeline of the ddp case at 2 ranks");
  EXPECT_DOUBLE_EQ(r.projections[0].step.compute_s, 0.0201);
  ASSERT_EQ(r.validation.size(), 1u);
  EXPECT_DOUBLE_EQ(r.validation[0].projected_s, 0.0201);
  // Both modes can be projected from the same timeline.
  o.modes = {Dp::ddp, Dp::zero1};
  EXPECT_EQ(project(files, o).projections.size(), 2u);
}

TEST(Scaling, BadInputIsAUsageError) {
  ScalingOptions o;
  EXPECT_NE(usage_error([&] { project(fixture({"collectives_only.json"}), o); }).find("no train case"), std::string::npos);
  EXPECT_NE(usage_error([&] { project(fixture({"train_only.json"}), o); }).find("collectives suite"), std::string::npos);
  o.train_filter = "model=transformer";
  EXPECT_NE(usage_error([&] { project(fixture({"cpu_dp.json"}), o); }).find("--train-filter"), std::string::npos);
  o.train_filter.clear();
  o.gpus_per_node = 8;  // 64 GPUs span nodes: nothing says how fast the network between them is
  EXPECT_NE(usage_error([&] { project(fixture({"cpu_dp.json"}), o); }).find("no inter-node curve"), std::string::npos);
  o.inter_node_gbps = 50;
  EXPECT_EQ(project(fixture({"cpu_dp.json"}), o).projections.size(), 4u);
  // An inter-node figure with no node boundary to use it (no --gpus-per-node, no inter-node curve).
  o.gpus_per_node.reset();
  EXPECT_NE(usage_error([&] { project(fixture({"cpu_dp.json"}), o); }).find("--inter-node-gbps: needs --gpus-per-node"),
            std::string::npos);
}

// Issue 26: the timeline's and the curves' figures are range-checked where they are read, and
// refused naming the file, the entry and the figure: a 0-byte bucket would all-reduce for free
// (100% efficiency at 4096 GPUs), 1e308 s or a negative time is no measurement.
TEST(ScalingInputs, OutOfRangeFiguresAreRefusedNamingThem) {
  auto crafted = [](const std::function<void(nlohmann::ordered_json&)>& edit) {
    std::ifstream in(kFixtures / "cpu_dp.json");
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(in);
    for (auto& e : doc["benchmarks"]) edit(e);
    return std::vector<ResultsFile>{read_results_text(doc.dump(), "crafted.json")};
  };
  ScalingOptions o;
  auto first_bucket = [](const char* field, double v) {
    return [=](nlohmann::ordered_json& e) {
      if (e["gpubench"]["details"].contains("grad_buckets")) e["gpubench"]["details"]["grad_buckets"][0][field] = v;
    };
  };
  for (const auto& [edit, expected] : std::vector<std::pair<std::function<void(nlohmann::ordered_json&)>, std::string>>{
           {first_bucket("bytes", 0), "grad_buckets[0].bytes 0 is out of range"},
           {first_bucket("bytes", 1e300), "grad_buckets[0].bytes"},
           {first_bucket("ready_s", -1), "grad_buckets[0].ready_s -1 is out of range"},
           {first_bucket("ready_s", 1e308), "grad_buckets[0].ready_s"},
           {[](nlohmann::ordered_json& e) {
              if (e["gpubench"]["details"].contains("backward_s")) e["gpubench"]["details"]["backward_s"] = -0.5;
            },
            "backward_s -0.5 is out of range"}}) {
    const std::string msg = usage_error([&] { project(crafted(edit), o); });
    EXPECT_NE(msg.find(expected), std::string::npos) << msg;
    EXPECT_NE(msg.find("crafted.json"), std::string::npos) << msg;
  }
}

}  // namespace
