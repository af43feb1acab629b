// The workers search of `gpubench tune dataload` (bench/tune/workers_search.hpp) over a fake
// stall model and a fake clock: it finds the fewest workers meeting the stall target, prunes,
// respects the budget, never recommends a setting that failed, and is reproducible by seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "bench/tune/workers_search.hpp"

namespace gpubench::tune {
namespace {

// Each setting's workers produce `rate` of what the consumer takes, per worker: the stall is
// the share the consumer waits, 1 - min(1, workers * rate). A long measurement (effort 1) may
// see a different rate (`long_rate`, e.g. a short run that looked better than it is).
struct FakeSetting {
  double rate = 0.3;
  double long_rate = -1;     // <0: same as rate
  int fails_at_workers = 0;  // >0: the measurement at this worker count fails (verification)
};

struct FakeModel {
  std::vector<FakeSetting> settings;
  double short_cost = 1, long_cost = 3;
  double now = 0;
  std::map<std::pair<std::string, int>, int> calls;  // (label, effort) -> measurements

  void set(std::initializer_list<FakeSetting> list) {
    for (const FakeSetting& s : list) settings.push_back(s);  // (assigning the list trips a GCC 12 -Wnonnull false positive)
  }

  double stall(const FakeSetting& s, int workers, int effort) const {
    const double rate = effort == 1 && s.long_rate >= 0 ? s.long_rate : s.rate;
    return 1 - std::min(1.0, workers * rate);
  }
  std::vector<Candidate> candidates() const {
    std::vector<Candidate> v;
    for (std::size_t i = 0; i < settings.size(); ++i) v.push_back({{{"setting", std::to_string(i)}}, 0});
    return v;
  }
  LoaderOracle oracle() {
    return [this](const Config& c, int workers, int effort) {
      const FakeSetting& s = settings[std::stoul(knob(c, "setting"))];
      now += effort == 0 ? short_cost : long_cost;
      ++calls[{config_label(with_workers(c, workers)), effort}];
      LoaderMeasured m;
      if (s.fails_at_workers == workers) {
        m.status = Status::Failed;
        m.reason = "verification failed";
        return m;
      }
      m.stall = stall(s, workers, effort);
      return m;
    };
  }
  Clock clock() {
    return [this] { return now; };
  }
  // The fewest workers meeting `max_stall` by the long measurement, over the settings that
  // never fail, by brute force (0: none).
  int brute_force(int max_workers, double max_stall) const {
    int best = 0;
    for (const FakeSetting& s : settings) {
      if (s.fails_at_workers > 0) continue;
      for (int w = 1; w <= max_workers; ++w) {
        if (stall(s, w, 1) <= max_stall && stall(s, w, 0) <= max_stall) {
          if (best == 0 || w < best) best = w;
          break;
        }
      }
    }
    return best;
  }
};

WorkersSearchOptions options(int max_workers, double budget = 1000) {
  WorkersSearchOptions o;
  o.budget_s = budget;
  o.max_stall = 0.05;
  o.max_workers = max_workers;
  return o;
}

TEST(WorkersSearch, FindsTheFewestWorkersMeetingTheStall) {
  FakeModel f;
  f.set({{0.3}, {0.5}, {0.2}});  // need 4, 2 and 5 workers for <= 5% stall
  const WorkersSearchResult r = search_workers(f.candidates(), f.oracle(), f.clock(), options(8));
  ASSERT_TRUE(r.best);
  EXPECT_EQ(r.best->setting, 1u);
  EXPECT_EQ(r.best->workers, 2);
  EXPECT_TRUE(r.best->meets_target);
  EXPECT_EQ(r.best->effort, 1);  // confirmed by a long measurement
  EXPECT_LE(r.best->stall, 0.05);
  EXPECT_EQ(r.failed, 0);
  // The log holds every measurement, with its workers.
  EXPECT_EQ(static_cast<int>(r.log.size()), r.measurements);
  for (const LogEntry& e : r.log) EXPECT_NO_THROW((void)knob(e.config, "workers"));
}

TEST(WorkersSearch, MatchesBruteForceOnRandomModelsWithFewerMeasurements) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> rate(0.05, 1.2);
  int search_total = 0, grid_total = 0;
  for (int trial = 0; trial < 200; ++trial) {
    FakeModel f;
    const int n = 1 + static_cast<int>(rng() % 12);
    const int max_workers = 1 + static_cast<int>(rng() % 32);
    for (int i = 0; i < n; ++i) f.settings.push_back({rate(rng)});
    const WorkersSearchResult r = search_workers(f.candidates(), f.oracle(), f.clock(), options(max_workers));
    const int want = f.brute_force(max_workers, 0.05);
    ASSERT_TRUE(r.best) << "trial " << trial;
    if (want == 0) {
      EXPECT_FALSE(r.best->meets_target) << "trial " << trial;
      // The lowest stall measured: at the most workers, by the fastest setting.
      double lowest = 1;
      for (const FakeSetting& s : f.settings) lowest = std::min(lowest, f.stall(s, max_workers, 0));
      EXPECT_DOUBLE_EQ(r.best->stall, lowest) << "trial " << trial;
    } else {
      EXPECT_TRUE(r.best->meets_target) << "trial " << trial;
      EXPECT_EQ(r.best->workers, want) << "trial " << trial;
    }
    search_total += r.measurements;
    grid_total += n * max_workers;
  }
  EXPECT_LT(search_total * 4, grid_total);  // pruning: far fewer than every (setting, workers)
}

TEST(WorkersSearch, LaterSettingsThatCannotWinCostOneMeasurement) {
  FakeModel f;
  f.set({{0.5}, {0.1}, {0.1}, {0.1}});
  std::vector<Candidate> c = f.candidates();
  c[0].prior = 1;  // measured first: needs 2 workers
  const WorkersSearchResult r = search_workers(c, f.oracle(), f.clock(), options(16));
  ASSERT_TRUE(r.best);
  EXPECT_EQ(r.best->setting, 0u);
  EXPECT_EQ(r.pruned, 3);
  for (int i = 1; i <= 3; ++i) {
    int short_measurements = 0;
    for (const auto& [key, count] : f.calls) {
      if (key.second == 0 && key.first.rfind("setting=" + std::to_string(i) + " ", 0) == 0) short_measurements += count;
    }
    EXPECT_EQ(short_measurements, 1) << "setting " << i;
  }
}

TEST(WorkersSearch, NeverRecommendsASettingThatFailed) {
  FakeModel f;
  // The best setting fails verification at one worker count inside its binary search.
  f.set({{0.9, -1, 1}, {0.3}});
  const WorkersSearchResult r = search_workers(f.candidates(), f.oracle(), f.clock(), options(8));
  ASSERT_TRUE(r.best);
  EXPECT_EQ(r.best->setting, 1u);
  EXPECT_EQ(r.best->workers, 4);
  EXPECT_EQ(r.failed, 1);
  const bool logged = std::any_of(r.log.begin(), r.log.end(), [](const LogEntry& e) {
    return e.status == Status::Failed && e.reason == "verification failed";
  });
  EXPECT_TRUE(logged);

  FakeModel all_fail;
  all_fail.set({{0.9, -1, 8}, {0.3, -1, 8}});
  const WorkersSearchResult none = search_workers(all_fail.candidates(), all_fail.oracle(), all_fail.clock(), options(8));
  EXPECT_FALSE(none.best);
  EXPECT_EQ(none.failed, 2);
}

TEST(WorkersSearch, ALongMeasurementThatMissesMovesUpAWorker) {
  FakeModel f;
  f.set({{0.5, 0.4}});  // short: 2 workers suffice; long: 2 give 20% stall, 3 give 0
  const WorkersSearchResult r = search_workers(f.candidates(), f.oracle(), f.clock(), options(8));
  ASSERT_TRUE(r.best);
  EXPECT_EQ(r.best->workers, 3);
  EXPECT_EQ(r.best->effort, 1);
}

TEST(WorkersSearch, RespectsTheBudgetAndLogsWhatItLeftOut) {
  FakeModel f;
  for (int i = 0; i < 20; ++i) f.settings.push_back({0.05 + 0.01 * i});
  const double budget = 7;
  const WorkersSearchResult r = search_workers(f.candidates(), f.oracle(), f.clock(), options(64, budget));
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_LE(r.elapsed_s, budget);  // each measurement started only when its expected cost fitted
  EXPECT_GT(r.skipped, 0);
  const bool skip_logged = std::any_of(r.log.begin(), r.log.end(), [](const LogEntry& e) {
    return e.status == Status::Skipped && e.reason.rfind("budget:", 0) == 0;
  });
  EXPECT_TRUE(skip_logged);
  ASSERT_TRUE(r.best);  // what was measured still gives a recommendation
  EXPECT_TRUE(r.best->meets_target);
  EXPECT_EQ(r.settings, r.measured + r.failed + r.skipped);

  // A reserve for the caller's final measurements comes off the budget.
  FakeModel g;
  for (int i = 0; i < 20; ++i) g.settings.push_back({0.05 + 0.01 * i});
  WorkersSearchOptions o = options(64, 12);
  o.reserve_s = [] { return 5.0; };
  const WorkersSearchResult kept = search_workers(g.candidates(), g.oracle(), g.clock(), o);
  EXPECT_LE(kept.elapsed_s, 12 - 5);
  EXPECT_GT(kept.measurements, 0);
}

TEST(WorkersSearch, ReportsTheLowestStallWhenNothingMeetsTheTarget) {
  FakeModel f;
  f.set({{0.1}, {0.2}});
  const WorkersSearchResult r = search_workers(f.candidates(), f.oracle(), f.clock(), options(3));
  ASSERT_TRUE(r.best);
  EXPECT_FALSE(r.best->meets_target);
  EXPECT_EQ(r.best->setting, 1u);
  EXPECT_EQ(r.best->workers, 3);
  EXPECT_NEAR(r.best->stall, 0.4, 1e-12);
}

TEST(WorkersSearch, TheSameSeedGivesTheSameLog) {
  auto run = [](std::uint64_t seed) {
    FakeModel f;
    for (int i = 0; i < 8; ++i) f.settings.push_back({0.1 + 0.05 * (i % 3)});  // equal priors: the seed orders them
    WorkersSearchOptions o = options(16);
    o.seed = seed;
    std::vector<std::string> labels;
    for (const LogEntry& e : search_workers(f.candidates(), f.oracle(), f.clock(), o).log) labels.push_back(config_label(e.config));
    return labels;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
}

TEST(WorkersSearch, RefusesAnEmptyWorkerRange) {
  FakeModel f;
  f.set({{0.5}});
  WorkersSearchOptions o = options(0);
  EXPECT_THROW(search_workers(f.candidates(), f.oracle(), f.clock(), o), std::invalid_argument);
}

}  // namespace
}  // namespace gpubench::tune
