#include "measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace gpubench {
namespace {

// ceil() that ignores floating-point dust: 0.002 / 1e-6 is 2000.0000000000002, which is 2000.
std::int64_t ceil_count(double x) { return static_cast<std::int64_t>(std::ceil(x * (1 - 1e-12))); }

constexpr std::int64_t kMaxRunsPerSample = std::int64_t{1} << 24;
constexpr std::int64_t kMaxSamples = 100000;

double time_batch(Case& c, Timer& timer, std::int64_t runs, bool cold) {
  if (cold) c.flush_cache();
  timer.start();
  for (std::int64_t i = 0; i < runs; ++i) c.run();
  return timer.stop();
}

}  // namespace

MeasurePlan plan_samples(double estimated_run_s, const MeasureOptions& o, double cold_sample_wall_s) {
  MeasurePlan p;
  p.estimated_run_s = estimated_run_s;
  if (o.single_run) return p;  // one sample of one run
  const double run_s = std::max(estimated_run_s, 1e-9);
  if (!o.cold && !o.one_run_per_sample) {
    p.runs_per_sample = std::clamp<std::int64_t>(ceil_count(o.batch_s / run_s), 1,
                                                 kMaxRunsPerSample);
  } else {
    p.estimated_sample_wall_s = std::max(cold_sample_wall_s, 0.0);
  }
  // Cold: what a sample really costs, the flush and the wait included.
  const double sample_s = o.cold ? std::max(run_s, p.estimated_sample_wall_s) : run_s * static_cast<double>(p.runs_per_sample);
  const auto needed = ceil_count(o.min_time_s / sample_s);
  p.samples = std::clamp<std::int64_t>(std::max(needed, o.min_samples), 1, kMaxSamples);
  return p;
}

namespace {

double median_after_first(std::vector<double> v) {
  if (v.size() > 1) v.erase(v.begin());
  return summarize(v).median;
}

WarmUpEstimate estimate_cold(Case& c, Timer& timer, const MeasureOptions& o, Team* team) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> timed, wall;
  double spent = 0;
  while (spent < o.warmup_s || timed.size() < 2) {
    const auto t0 = Clock::now();
    double t = time_batch(c, timer, 1, true);  // the timer waits for the run's end
    double w = std::chrono::duration<double>(Clock::now() - t0).count();
    if (team != nullptr) {
      t = team_max(*team, t, "warm-up");
      w = team_max(*team, w, "warm-up");
    }
    timed.push_back(t);
    wall.push_back(w);
    spent += w;
    if (timed.size() >= static_cast<std::size_t>(kMaxSamples)) break;
  }
  return {median_after_first(timed), median_after_first(wall)};
}

}  // namespace

WarmUpEstimate estimate_runs(Case& c, Timer& timer, const MeasureOptions& o, Team* team) {
  if (o.single_run) return {};
  if (o.cold) return estimate_cold(c, timer, o, team);
  return {warm_up(c, timer, o, team), 0};
}

double warm_up(Case& c, Timer& timer, const MeasureOptions& o, Team* team) {
  if (o.single_run) return 0;
  if (o.cold) return estimate_cold(c, timer, o, team).run_s;
  double spent = 0, last = 0, fastest = INFINITY;
  std::int64_t runs = 1;
  while (true) {
    last = time_batch(c, timer, runs, false);
    if (team != nullptr) last = team_max(*team, last, "warm-up");
    spent += last;
    fastest = std::min(fastest, last / static_cast<double>(runs));
    if (spent >= o.warmup_s || runs >= kMaxRunsPerSample) break;
    runs *= 2;
  }
  return o.estimate_from_fastest_batch ? fastest : last / static_cast<double>(runs);
}

MeasurePlan calibrate(Case& c, Timer& timer, const MeasureOptions& o, Team* team) {
  const WarmUpEstimate e = estimate_runs(c, timer, o, team);
  return plan_samples(e.run_s, o, e.sample_wall_s);
}

Measurement collect(Case& c, Timer& timer, const MeasurePlan& plan, const MeasureOptions& o, Team* team,
                    const std::string& step) {
  Measurement m;
  m.seconds_per_run.reserve(static_cast<std::size_t>(plan.samples));
  // Cold samples are sized by their wall-clock cost (flush and wait included, see
  // plan_samples), so the floor below counts that cost too; warm ones by their timed seconds.
  double cold_wall_s = 0;
  const bool barrier = o.barrier_before_sample && team != nullptr;
  auto sample = [&] {
    if (barrier) team->barrier(step);
    const auto t0 = std::chrono::steady_clock::now();
    const double t = time_batch(c, timer, plan.runs_per_sample, o.cold);
    if (o.cold) cold_wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    m.total_s += t;
    m.seconds_per_run.push_back(t / static_cast<double>(plan.runs_per_sample));
  };
  for (std::int64_t s = 0; s < plan.samples; ++s) sample();
  m.planned_samples = plan.samples;
  // --min-time is an "at least": the plan divided it by the warm-up's estimate, which runs
  // slow more often than fast (first-touch page faults, cold caches and clocks, a busy machine
  // during the few warm-up batches), and then too few samples were planned. Top up with more
  // samples of the same size, as many as the samples so far say are missing. With a team the
  // slowest rank's total decides, so every rank adds the same samples.
  auto timed = [&] {
    const double spent = o.cold ? std::max(cold_wall_s, m.total_s) : m.total_s;
    return team != nullptr ? team_max(*team, spent, step) : spent;
  };
  // (1 - 1e-12): floating-point dust in a sum of sample times is not a missing sample.
  for (double total = timed(); !o.single_run && total < o.min_time_s * (1 - 1e-12) && m.samples() < kMaxSamples; total = timed()) {
    const double per_sample = std::max(total / static_cast<double>(m.samples()), 1e-9);
    const std::int64_t more =
        std::clamp<std::int64_t>(ceil_count((o.min_time_s - total) / per_sample), 1, kMaxSamples - m.samples());
    for (std::int64_t s = 0; s < more; ++s) sample();
  }
  m.runs = m.samples() * plan.runs_per_sample;
  m.stats = summarize(m.seconds_per_run);
  // Per-iteration samples are single runs: their spread is the figure (the percentiles the
  // results carry), not a disturbance of it.
  m.noisy = !o.one_run_per_sample && !o.single_run && m.stats.rel_noise > o.max_noise;
  return m;
}

double headline_s(const Measurement& m, SamplingPolicy::Headline headline) {
  if (headline == SamplingPolicy::Headline::Median) return m.stats.median;
  return m.runs > 0 ? m.total_s / static_cast<double>(m.runs) : 0.0;
}

MeasureOptions with_policy(MeasureOptions o, const SamplingPolicy& policy) {
  if (policy.window_s > 0) o.batch_s = std::min(o.batch_s, policy.window_s);
  o.barrier_before_sample = o.barrier_before_sample || policy.barrier;
  o.estimate_from_fastest_batch = o.estimate_from_fastest_batch || policy.headline == SamplingPolicy::Headline::Median;
  o.one_run_per_sample = o.one_run_per_sample || policy.per_iteration;
  o.single_run = o.single_run || policy.single_run;
  return o;
}

}  // namespace gpubench
