#include "measure.hpp"

#include <algorithm>
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

MeasurePlan plan_samples(double estimated_run_s, const MeasureOptions& o) {
  MeasurePlan p;
  p.estimated_run_s = estimated_run_s;
  const double run_s = std::max(estimated_run_s, 1e-9);
  if (!o.cold) {
    p.runs_per_sample = std::clamp<std::int64_t>(ceil_count(o.batch_s / run_s), 1,
                                                 kMaxRunsPerSample);
  }
  const double sample_s = run_s * static_cast<double>(p.runs_per_sample);
  const auto needed = ceil_count(o.min_time_s / sample_s);
  p.samples = std::clamp<std::int64_t>(std::max(needed, o.min_samples), 1, kMaxSamples);
  return p;
}

double warm_up(Case& c, Timer& timer, const MeasureOptions& o, Team* team) {
  double spent = 0, last = 0;
  std::int64_t runs = 1;
  while (true) {
    last = time_batch(c, timer, runs, o.cold);
    if (team != nullptr) last = team_max(*team, last, "warm-up");
    spent += last;
    if (spent >= o.warmup_s || runs >= kMaxRunsPerSample) break;
    runs *= 2;
  }
  return last / static_cast<double>(runs);
}

MeasurePlan calibrate(Case& c, Timer& timer, const MeasureOptions& o, Team* team) {
  return plan_samples(warm_up(c, timer, o, team), o);
}

Measurement collect(Case& c, Timer& timer, const MeasurePlan& plan, const MeasureOptions& o) {
  Measurement m;
  m.seconds_per_run.reserve(static_cast<std::size_t>(plan.samples));
  for (std::int64_t s = 0; s < plan.samples; ++s) {
    const double t = time_batch(c, timer, plan.runs_per_sample, o.cold);
    m.total_s += t;
    m.seconds_per_run.push_back(t / static_cast<double>(plan.runs_per_sample));
  }
  m.runs = plan.total_runs();
  m.stats = summarize(m.seconds_per_run);
  m.noisy = m.stats.rel_noise > o.max_noise;
  return m;
}

}  // namespace gpubench
