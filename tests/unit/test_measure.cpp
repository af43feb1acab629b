#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <set>
#include <thread>

#include "bench/core/measure.hpp"
#include "bench/core/progress.hpp"
#include "bench/core/stats.hpp"

namespace gpubench {
namespace {

TEST(Stats, Summary) {
  SampleStats s = summarize({4.0, 1.0, 3.0, 2.0});
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 4.0);
  EXPECT_NEAR(s.stddev, std::sqrt(5.0 / 3.0), 1e-12);  // sample (n-1) standard deviation
  EXPECT_NEAR(s.rel_noise, std::sqrt(5.0 / 3.0) / 2.5, 1e-12);
  EXPECT_DOUBLE_EQ(summarize({7.0}).stddev, 0.0);
  EXPECT_EQ(summarize({}).count, 0u);
  EXPECT_DOUBLE_EQ(summarize({1.0, 2.0, 3.0}).median, 2.0);
}

// numpy.percentile's default ("linear"): rank (n - 1) p / 100, interpolated. By hand for
// [1, 2, 3, 4]: p50 at rank 1.5 = 2.5; p90 at 2.7 = 3.7; p99 at 2.97 = 3.97; p0 = 1; p100 = 4.
TEST(Stats, PercentilesInterpolateBetweenRanks) {
  const std::vector<double> v = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile_of_sorted(v, 50), 2.5);
  EXPECT_NEAR(percentile_of_sorted(v, 90), 3.7, 1e-12);
  EXPECT_NEAR(percentile_of_sorted(v, 99), 3.97, 1e-12);
  EXPECT_DOUBLE_EQ(percentile_of_sorted(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile_of_sorted(v, 100), 4);
  EXPECT_DOUBLE_EQ(percentile_of_sorted({7}, 99), 7);
  EXPECT_DOUBLE_EQ(percentile_of_sorted({}, 99), 0);
  // 1000 samples 1..1000: p99 at rank 989.01, 990.01.
  std::vector<double> many(1000);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<double>(i + 1);
  EXPECT_NEAR(percentile_of_sorted(many, 99), 990.01, 1e-9);
  const SampleStats s = summarize({4.0, 1.0, 3.0, 2.0});  // summarize sorts first
  EXPECT_NEAR(s.p90, 3.7, 1e-12);
  EXPECT_NEAR(s.p99, 3.97, 1e-12);
}

TEST(MeasurePlan, BatchesLastBatchTimeAndFillMinTime) {
  MeasureOptions o;
  o.batch_s = 0.002;
  o.min_time_s = 0.5;
  o.min_samples = 10;
  MeasurePlan p = plan_samples(1e-6, o);  // 1 us per run
  EXPECT_EQ(p.runs_per_sample, 2000);
  EXPECT_EQ(p.samples, 250);
  p = plan_samples(0.1, o);  // slow runs: one per sample, min_samples wins over min_time
  EXPECT_EQ(p.runs_per_sample, 1);
  EXPECT_EQ(p.samples, 10);
  o.cold = true;  // cold: one run per sample, flushed before each
  p = plan_samples(1e-6, o);
  EXPECT_EQ(p.runs_per_sample, 1);
  EXPECT_EQ(p.samples, 100000);  // capped
  // Per-iteration timing: one run per sample, however short, and samples fill min_time.
  o.cold = false;
  o.one_run_per_sample = true;
  p = plan_samples(1e-5, o);
  EXPECT_EQ(p.runs_per_sample, 1);
  EXPECT_EQ(p.samples, 50000);
  SamplingPolicy per_iter;
  per_iter.per_iteration = true;
  EXPECT_TRUE(with_policy(MeasureOptions{}, per_iter).one_run_per_sample);
  EXPECT_FALSE(with_policy(MeasureOptions{}, SamplingPolicy{}).one_run_per_sample);
}

// A case on a fake clock: run i takes run_s(i) seconds of it; flush_cache calls on_flush (a real
// sleep, where a test needs the flush to cost wall time). Every fake-clock test uses this pair.
class FakeClockCase final : public Case {
 public:
  explicit FakeClockCase(std::function<double(std::int64_t)> run_s, std::function<void()> on_flush = {})
      : run_s_(std::move(run_s)), on_flush_(std::move(on_flush)) {}
  void setup() override {}
  Verification verify() override { return {true, 1, 0, "", "", std::nullopt}; }
  void run() override { now += run_s_(runs++); }
  Metrics metrics() const override { return {}; }
  std::unique_ptr<Timer> make_timer() override { return nullptr; }
  void flush_cache() override {
    if (on_flush_) on_flush_();
    ++flushes;
  }
  void synchronize() override {}
  double now = 0;
  std::int64_t runs = 0, flushes = 0;

 private:
  std::function<double(std::int64_t)> run_s_;
  std::function<void()> on_flush_;
};

class FakeTimer final : public Timer {
 public:
  explicit FakeTimer(const FakeClockCase& c) : c_(c) {}
  void start() override { t0_ = c_.now; }
  double stop() override { return c_.now - t0_; }
  const char* kind() const override { return "fake"; }

 private:
  const FakeClockCase& c_;
  double t0_ = 0;
};

// Every run takes `s`.
std::function<double(std::int64_t)> every_run(double s) {
  return [s](std::int64_t) { return s; };
}

// A test's measurement options: warm-up and timed seconds, sample length (0: the default), cold.
MeasureOptions options(double warmup_s, double min_time_s, double batch_s = 0, bool cold = false) {
  MeasureOptions o;
  o.warmup_s = warmup_s;
  o.min_time_s = min_time_s;
  if (batch_s > 0) o.batch_s = batch_s;
  o.cold = cold;
  return o;
}

// 10 ms of warm-up, 0.1 s of 1 ms samples.
MeasureOptions tenth_of_a_second() { return options(0.01, 0.1, 0.001); }

TEST(Measure, CalibrateThenCollectExactlyThePlannedRuns) {
  FakeClockCase c(every_run(1e-5));
  FakeTimer timer(c);
  const MeasureOptions o = tenth_of_a_second();
  MeasurePlan plan = calibrate(c, timer, o);
  EXPECT_NEAR(plan.estimated_run_s, 1e-5, 1e-12);
  EXPECT_EQ(plan.runs_per_sample, 100);
  EXPECT_EQ(plan.samples, 100);  // 0.1 s of 1 ms samples
  const std::int64_t warm = c.runs;
  Measurement m = collect(c, timer, plan, o);
  EXPECT_EQ(c.runs - warm, plan.total_runs());
  EXPECT_EQ(m.runs, plan.total_runs());
  EXPECT_EQ(m.seconds_per_run.size(), 100u);
  EXPECT_NEAR(m.stats.mean, 1e-5, 1e-12);
  EXPECT_NEAR(m.total_s, 0.1, 1e-9);
  EXPECT_FALSE(m.noisy);
  EXPECT_EQ(c.flushes, 0);
}

// The cause of issue 15's short dataload runs: runs that are slow while the case warms up
// (first-touch page faults, cold caches, a busy machine) make the warm-up's estimate too slow,
// and the plan too short. --min-time is a floor on the timed seconds all the same.
TEST(Measure, MinTimeIsAFloorWhenTheWarmUpEstimateWasSlow) {
  for (const bool cold : {false, true}) {
    // The warm-up's 1 + 2 runs take 30 ms, every later one 10 ms.
    FakeClockCase c([](std::int64_t i) { return i < 3 ? 0.03 : 0.01; });
    FakeTimer timer(c);
    const MeasureOptions o = options(0.05, 2, 0.002, cold);
    const MeasurePlan plan = calibrate(c, timer, o);
    // Warm: the estimate is the warm-up's last batch, here slow. Cold: the median of the
    // warm-up's single runs, which the slow first runs do not move.
    const std::int64_t planned = cold ? 200 : 67;  // 2 s / 10 ms; 2 s / 30 ms: 0.67 s of 10 ms runs
    EXPECT_NEAR(plan.estimated_run_s, cold ? 0.01 : 0.03, 1e-9);
    EXPECT_EQ(plan.samples, planned);
    const Measurement m = collect(c, timer, plan, o);
    EXPECT_GE(m.total_s, o.min_time_s * (1 - 1e-12));  // up to floating-point dust in the sum
    EXPECT_LT(m.total_s, o.min_time_s + 0.011);          // one sample more than needed at most
    EXPECT_EQ(m.planned_samples, planned);
    EXPECT_GE(m.samples(), 200);
    EXPECT_LE(m.samples(), 201);  // 200 x 10 ms, and one more if rounding left it a hair short
    EXPECT_EQ(m.runs, m.samples());
    EXPECT_NEAR(m.stats.mean, 0.01, 1e-12);
  }
}

TEST(Measure, NoTopUpWhenThePlanFillsMinTime) {
  FakeClockCase c(every_run(1e-5));
  FakeTimer timer(c);
  const MeasureOptions o = tenth_of_a_second();
  const MeasurePlan plan = calibrate(c, timer, o);
  const Measurement m = collect(c, timer, plan, o);
  EXPECT_EQ(m.samples(), plan.samples);
  EXPECT_EQ(m.planned_samples, plan.samples);
}

TEST(Measure, ColdModeFlushesBeforeEverySample) {
  // Binary fractions keep the fake clock's sums exact (no top-up sample for rounding dust).
  FakeClockCase c(every_run(1.0 / 1024));
  FakeTimer timer(c);
  const MeasureOptions o = options(1e-3, 20.0 / 1024, 0, /*cold=*/true);
  MeasurePlan plan = calibrate(c, timer, o);
  const std::int64_t flushes_before = c.flushes;
  Measurement m = collect(c, timer, plan, o);
  EXPECT_EQ(plan.runs_per_sample, 1);
  EXPECT_EQ(c.flushes - flushes_before, plan.samples);
  EXPECT_EQ(static_cast<std::int64_t>(m.seconds_per_run.size()), plan.samples);
}

// Cold samples are sized by what they cost on the wall clock (flush, run, wait), not by the
// timed run alone: a 5 us kernel whose cold sample costs 100 us gets 0.5 s / 100 us samples,
// not the 100,000 (8+ s of flushing) that its run time alone would ask for.
TEST(MeasurePlan, ColdSamplesFillMinTimeWithTheirRealCost) {
  MeasureOptions o;
  o.cold = true;
  o.min_time_s = 0.5;
  o.min_samples = 10;
  MeasurePlan p = plan_samples(5e-6, o, 100e-6);
  EXPECT_EQ(p.runs_per_sample, 1);
  EXPECT_EQ(p.samples, 5000);
  EXPECT_DOUBLE_EQ(p.estimated_sample_wall_s, 100e-6);
  EXPECT_NEAR(static_cast<double>(p.samples) * p.estimated_sample_wall_s, o.min_time_s, 1e-9);
  p = plan_samples(0.2, o, 0.25);  // slow runs: min_samples wins
  EXPECT_EQ(p.samples, 10);
  p = plan_samples(5e-6, o, 0);  // cost unknown: the run time, as before
  EXPECT_EQ(p.samples, 100000);
  o.cold = false;  // warm mode ignores the cold cost
  p = plan_samples(1e-6, o, 1.0);
  EXPECT_EQ(p.runs_per_sample, 2000);
  EXPECT_EQ(p.samples, 250);
  EXPECT_DOUBLE_EQ(p.estimated_sample_wall_s, 0.0);
}

// A case whose flush really takes time (a sleep): the cold warm-up measures it.
TEST(Measure, ColdWarmUpMeasuresTheFlushAndSizesTheRunByIt) {
  FakeClockCase c(every_run(1e-6), [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); });
  FakeTimer timer(c);
  MeasureOptions o = options(0.01, 0.05, 0, /*cold=*/true);
  o.min_samples = 2;
  const WarmUpEstimate e = estimate_runs(c, timer, o);
  EXPECT_NEAR(e.run_s, 1e-6, 1e-12);   // the timed run: 1 us on the fake clock
  EXPECT_GE(e.sample_wall_s, 2e-3);    // the 2 ms flush counted
  EXPECT_GE(c.flushes, 2);
  const MeasurePlan p = calibrate(c, timer, o);
  EXPECT_GE(p.estimated_sample_wall_s, 2e-3);
  EXPECT_LE(p.samples, 25);  // at most 0.05 s / 2 ms, not 0.05 s / 1 us = 50,000
  EXPECT_GE(p.samples, 2);
  // The --min-time floor counts a cold sample's wall cost too: the 1 us timed runs alone would
  // top the run up towards 50,000 samples (100 s of flushing).
  const Measurement m = collect(c, timer, p, o);
  EXPECT_LE(m.samples(), 40);
}

// Issue 17 item 8: the MPI collectives' headline. A case whose runs take 1 us on a fake clock,
// except every 500th, which loses 2 ms (a scheduler slice given to another process).
std::function<double(std::int64_t)> preempted_every_500th() {
  return [](std::int64_t i) { return (i + 1) % 500 == 0 ? 2e-3 : 1e-6; };
}

// A team of one that counts its barriers, checks that no run is timed across one, and lets
// the clock move while it waits (a barrier's wait is never part of a sample).
class BarrierTeam final : public Team {
 public:
  explicit BarrierTeam(FakeClockCase& c) : c_(c) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<double> all_gather(double value, const std::string&) override { return {value}; }
  std::vector<std::string> all_gather(const std::string& text, const std::string&) override { return {text}; }
  void barrier(const std::string& step) override {
    ++barriers;
    steps.insert(step);
    runs_at_barrier.push_back(c_.runs);
    c_.now += 1.0;  // a long wait: it would dominate any sample it were part of
  }
  std::int64_t barriers = 0;
  std::set<std::string> steps;
  std::vector<std::int64_t> runs_at_barrier;

 private:
  FakeClockCase& c_;
};

TEST(Measure, MedianHeadlineIsNotMovedByPreemptedWindows) {
  FakeClockCase c(preempted_every_500th());
  FakeTimer timer(c);
  MeasurePlan plan;
  plan.runs_per_sample = 100;  // 100 us windows: one in five holds a 2 ms preemption
  plan.samples = 50;
  MeasureOptions o;
  o.min_time_s = 0;
  const Measurement m = collect(c, timer, plan, o);
  ASSERT_EQ(m.samples(), 50);
  // The mean counts the preemptions: (499 x 1 us + 2 ms) / 500 per run, 5x the call.
  EXPECT_NEAR(headline_s(m, SamplingPolicy::Headline::Mean), (499 * 1e-6 + 2e-3) / 500, 1e-12);
  // The median is the call.
  EXPECT_NEAR(headline_s(m, SamplingPolicy::Headline::Median), 1e-6, 1e-12);
}

TEST(Measure, BarrierBeforeEverySampleIsOutsideTheTimedWindow) {
  FakeClockCase c(preempted_every_500th());
  FakeTimer timer(c);
  BarrierTeam team(c);
  MeasurePlan plan;
  plan.runs_per_sample = 10;
  plan.samples = 20;
  MeasureOptions o;
  o.min_time_s = 0;
  o.barrier_before_sample = true;
  const Measurement m = collect(c, timer, plan, o, &team, "timing of x");
  EXPECT_EQ(team.barriers, 20);
  EXPECT_EQ(team.steps, (std::set<std::string>{"timing of x"}));
  for (std::size_t i = 0; i < team.runs_at_barrier.size(); ++i) {
    EXPECT_EQ(team.runs_at_barrier[i], static_cast<std::int64_t>(i) * 10);  // between windows, never inside
  }
  // The 20 s the barriers waited are in no sample.
  EXPECT_NEAR(m.total_s, 200e-6, 1e-12);
  // Without the option (or without a team) no barrier is taken.
  o.barrier_before_sample = false;
  (void)collect(c, timer, plan, o, &team, "timing of x");
  EXPECT_EQ(team.barriers, 20);
}

TEST(Measure, MedianPoliciesPlanFromTheFastestWarmUpBatch) {
  // Batches of 1, 2, ..., 512 runs until 3 ms: the batches of 256 and 512 runs each hold a
  // 2 ms preemption (runs 500 and 1000).
  MeasureOptions o;
  o.warmup_s = 0.003;
  {
    FakeClockCase c(preempted_every_500th());
    FakeTimer timer(c);
    EXPECT_NEAR(warm_up(c, timer, o), (511 * 1e-6 + 2e-3) / 512, 1e-12);  // the last batch
  }
  SamplingPolicy p;
  p.headline = SamplingPolicy::Headline::Median;
  p.window_s = 200e-6;
  const MeasureOptions windowed = with_policy(o, p);
  EXPECT_TRUE(windowed.estimate_from_fastest_batch);
  FakeClockCase c(preempted_every_500th());
  FakeTimer timer(c);
  const MeasurePlan plan = calibrate(c, timer, windowed);
  EXPECT_NEAR(plan.estimated_run_s, 1e-6, 1e-12);
  EXPECT_EQ(plan.runs_per_sample, 200);  // not 41, as the preempted estimate would plan
}

TEST(Measure, SamplingPolicyCapsTheWindowAndAsksForTheBarrier) {
  MeasureOptions o;
  o.batch_s = 0.002;
  SamplingPolicy p;
  EXPECT_DOUBLE_EQ(with_policy(o, p).batch_s, 0.002);
  EXPECT_FALSE(with_policy(o, p).barrier_before_sample);
  p.window_s = 200e-6;
  p.barrier = true;
  EXPECT_DOUBLE_EQ(with_policy(o, p).batch_s, 200e-6);
  EXPECT_TRUE(with_policy(o, p).barrier_before_sample);
  o.batch_s = 50e-6;  // a shorter --batch-time stays
  EXPECT_DOUBLE_EQ(with_policy(o, p).batch_s, 50e-6);
  // 1 us calls in 200 us windows: 200 calls per window.
  o.batch_s = 0.002;
  EXPECT_EQ(plan_samples(1e-6, with_policy(o, p)).runs_per_sample, 200);
}

TEST(Progress, EtaAndFormatting) {
  EXPECT_DOUBLE_EQ(eta_seconds(2, 10, 4.0), 16.0);
  EXPECT_DOUBLE_EQ(eta_seconds(0, 10, 4.0), 0.0);
  EXPECT_EQ(format_duration(42), "42s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(3720), "1h02m");
  EXPECT_EQ(format_seconds(1.25e-3), "1.25 ms");
  EXPECT_EQ(format_seconds(8.12e-7), "812 ns");
}

}  // namespace
}  // namespace gpubench
