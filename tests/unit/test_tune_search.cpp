// The tune search engine against a fake cost model and a fake clock: it finds the optimum,
// respects the budget, never recommends a failed or unfit configuration, and the same seed
// gives the same log.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>

#include "bench/tune/search.hpp"
#include "bench/tune/tuning.hpp"

namespace gpubench::tune {
namespace {

// A training-like space: micro-batch in 1..64 (accumulation = 64 / micro-batch) x recompute.
// Throughput grows with the micro-batch up to 16, then falls (a fake cache cliff); recompute
// costs 20%. Micro-batches above `fit_limit` do not fit; `broken` fails verification.
struct FakeModel {
  double clock = 0;
  std::int64_t fit_limit = 1 << 20;
  std::string broken;  // a config label that fails verification
  double noise = 0;    // relative noise of a short measurement (shrinks with effort)
  std::mt19937_64 rng{7};
  int calls = 0;
  double short_cost_s = 1.0;

  static double truth(const Config& c) {
    const double b = std::stod(knob(c, "micro_batch"));
    const double base = b <= 16 ? 100 * std::log2(2 * b) : 100 * std::log2(32) - 20 * std::log2(b / 16);
    return knob(c, "recompute") == "none" ? base : 0.8 * base;
  }

  Measured operator()(const Config& c, int effort) {
    ++calls;
    clock += short_cost_s * std::pow(3, effort);  // each effort level costs eta times more
    Measured m;
    if (std::stoll(knob(c, "micro_batch")) > fit_limit) {
      m.status = Status::DoesNotFit;
      m.reason = "out of memory";
      return m;
    }
    if (config_label(c) == broken) {
      m.status = Status::Failed;
      m.reason = "verification failed: gradient w0[3]";
      return m;
    }
    std::normal_distribution<double> n(0, noise / std::pow(3, effort));
    m.score = truth(c) * (1 + n(rng));
    m.figures = {{"samples_per_s", m.score}};
    return m;
  }
};

std::vector<Candidate> space() {
  std::vector<Candidate> v;
  for (const char* r : {"none", "block"}) {
    for (std::int64_t b = 1; b <= 64; b *= 2) {
      Candidate c;
      c.config = {{"micro_batch", std::to_string(b)}, {"accum", std::to_string(64 / b)}, {"recompute", r}};
      c.prior = std::log2(static_cast<double>(b)) - (std::string(r) == "none" ? 0 : 1);
      v.push_back(c);
    }
  }
  return v;
}

bool larger_or_equal(const Config& unfit, const Config& other) {
  return knob(unfit, "recompute") == knob(other, "recompute") &&
         std::stoll(knob(other, "micro_batch")) >= std::stoll(knob(unfit, "micro_batch"));
}

SearchResult run(FakeModel& f, const std::vector<Candidate>& cands, SearchOptions o) {
  return successive_halving(cands, [&](const Config& c, int e) { return f(c, e); }, [&] { return f.clock; }, o);
}

TEST(TuneSearch, FindsTheOptimum) {
  FakeModel f;
  const auto cands = space();
  SearchOptions o;
  o.budget_s = 1000;
  const SearchResult r = run(f, cands, o);
  ASSERT_TRUE(r.best);
  EXPECT_EQ(config_label(cands[*r.best].config), "micro_batch=16 accum=4 recompute=none");
  EXPECT_EQ(r.measured, static_cast<int>(cands.size()));
  EXPECT_FALSE(r.budget_exhausted);
  // Successive halving: 14 short, ceil(14/3) = 5 long, then 2: fewer than a grid at full effort.
  EXPECT_EQ(r.rounds, 3);
  EXPECT_EQ(f.calls, 14 + 5 + 2);
  EXPECT_EQ(r.log.front().stage(), "short");
  EXPECT_EQ(r.log.back().stage(), "long");
}

TEST(TuneSearch, FindsTheOptimumThroughNoise) {
  FakeModel f;
  f.noise = 0.05;  // 5% on short measurements; adjacent candidates differ by more than that
  const auto cands = space();
  SearchOptions o;
  o.budget_s = 1000;
  const SearchResult r = run(f, cands, o);
  ASSERT_TRUE(r.best);
  EXPECT_EQ(config_label(cands[*r.best].config), "micro_batch=16 accum=4 recompute=none");
}

TEST(TuneSearch, RespectsTheBudget) {
  for (double budget : {0.5, 3.0, 7.5, 20.0, 40.0}) {
    FakeModel f;
    SearchOptions o;
    o.budget_s = budget;
    const SearchResult r = run(f, space(), o);
    // Every measurement's cost is known in advance here, so the search stays within the
    // budget, except the first measurement, which always runs.
    EXPECT_LE(r.elapsed_s, std::max(budget, f.short_cost_s)) << budget;
    EXPECT_TRUE(r.best) << budget;  // something measured is always recommended
    if (budget < 14) {
      EXPECT_TRUE(r.budget_exhausted) << budget;
      EXPECT_GT(r.skipped, 0) << budget;
      bool logged = false;
      for (const LogEntry& e : r.log) logged = logged || (e.status == Status::Skipped && e.reason.rfind("budget", 0) == 0);
      EXPECT_TRUE(logged) << budget;
    }
  }
}

TEST(TuneSearch, ShortBudgetMeasuresThePriorsFavouritesFirst) {
  FakeModel f;
  SearchOptions o;
  o.budget_s = 3;
  const SearchResult r = run(f, space(), o);
  ASSERT_GE(r.log.size(), 3u);
  EXPECT_EQ(knob(r.log[0].config, "micro_batch"), "64");  // highest prior
  EXPECT_EQ(r.log[0].status, Status::Ok);
  EXPECT_EQ(f.calls, 3);
}

TEST(TuneSearch, NeverRecommendsAFailedOrUnfitConfiguration) {
  FakeModel f;
  f.fit_limit = 8;  // 16 and above do not fit
  f.broken = "micro_batch=8 accum=8 recompute=none";
  // Small micro-batches first here, so that a micro-batch that does not fit comes before the
  // larger ones it rules out.
  auto cands = space();
  for (Candidate& c : cands) c.prior = -c.prior - 2 * (knob(c.config, "recompute") == "none" ? 0 : 1);
  SearchOptions o;
  o.budget_s = 1000;
  o.at_least_as_large = larger_or_equal;
  const SearchResult r = run(f, cands, o);
  ASSERT_TRUE(r.best);
  const Config& best = cands[*r.best].config;
  EXPECT_LE(std::stoll(knob(best, "micro_batch")), 8);
  EXPECT_NE(config_label(best), f.broken);
  // The best that fits and works: micro-batch 8 with recompute (0.8 x 400 = 320) beats 4 without (300).
  EXPECT_EQ(config_label(best), "micro_batch=8 accum=8 recompute=block");
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.unfit, 6);  // 16, 32, 64 for each recompute
  // Pruning: 16 does not fit, so 32 and 64 (same recompute) are not measured.
  int measured_unfit = 0, pruned = 0;
  for (const LogEntry& e : r.log) {
    if (e.status != Status::DoesNotFit) continue;
    (e.cost_s > 0 ? measured_unfit : pruned)++;
    EXPECT_FALSE(e.reason.empty());
  }
  EXPECT_EQ(measured_unfit, 2);
  EXPECT_EQ(pruned, 4);
}

TEST(TuneSearch, NothingWorksNothingRecommended) {
  FakeModel f;
  f.fit_limit = 0;
  SearchOptions o;
  o.budget_s = 1000;
  o.at_least_as_large = larger_or_equal;
  const SearchResult r = run(f, space(), o);
  EXPECT_FALSE(r.best);
  EXPECT_EQ(r.unfit, 14);
  EXPECT_EQ(r.measured, 0);
}

TEST(TuneSearch, LargeFirstFindsWhatFitsOneFailureAtATime) {
  // The default prior order (large micro-batches first): each that does not fit is one cheap
  // failure; the first that fits and everything below it are measured.
  FakeModel f;
  f.fit_limit = 8;
  SearchOptions o;
  o.budget_s = 1000;
  o.at_least_as_large = larger_or_equal;
  const auto cands = space();
  const SearchResult r = run(f, cands, o);
  ASSERT_TRUE(r.best);
  EXPECT_EQ(config_label(cands[*r.best].config), "micro_batch=8 accum=8 recompute=none");
  EXPECT_EQ(r.unfit, 6);
  EXPECT_EQ(r.measured, 8);
}

TEST(TuneSearch, AFailureAtALongerEffortDisqualifies) {
  // The best candidate passes its short measurement and fails the long one: never recommended.
  FakeModel f;
  const auto cands = space();
  auto oracle = [&](const Config& c, int e) {
    Measured m = f(c, e);
    if (e > 0 && config_label(c) == "micro_batch=16 accum=4 recompute=none") {
      m.status = Status::Failed;
      m.reason = "verification failed";
    }
    return m;
  };
  SearchOptions o;
  o.budget_s = 1000;
  const SearchResult r = successive_halving(cands, oracle, [&] { return f.clock; }, o);
  ASSERT_TRUE(r.best);
  EXPECT_NE(config_label(cands[*r.best].config), "micro_batch=16 accum=4 recompute=none");
}

TEST(TuneSearch, SameSeedSameLog) {
  auto log_of = [](std::uint64_t seed) {
    FakeModel f;
    f.noise = 0.05;
    std::vector<Candidate> cands = space();
    for (Candidate& c : cands) c.prior = 0;  // all tied: the seed decides the order
    SearchOptions o;
    o.budget_s = 9;
    o.seed = seed;
    const SearchResult r = run(f, cands, o);
    std::string s;
    for (const LogEntry& e : r.log) s += log_entry_json(e).dump() + "\n";
    return s;
  };
  EXPECT_EQ(log_of(3), log_of(3));
  EXPECT_NE(log_of(3), log_of(4));
}

TEST(TuneSearch, RejectsBadOptions) {
  FakeModel f;
  SearchOptions o;
  o.eta = 1;
  EXPECT_THROW(run(f, space(), o), std::invalid_argument);
}

TEST(TuningSchema, FlatObjectsWithNumbersForIntegers) {
  LogEntry e;
  e.config = {{"precision", "fp32"}, {"micro_batch", "8"}};
  e.status = Status::Ok;
  e.figures = {{"samples_per_s", 12.5}};
  e.cost_s = 2;
  const nlohmann::ordered_json j = log_entry_json(e);
  EXPECT_EQ(j["precision"], "fp32");
  EXPECT_EQ(j["micro_batch"], 8);
  EXPECT_EQ(j["stage"], "short");
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["samples_per_s"], 12.5);
  EXPECT_FALSE(j.contains("reason"));
  e.status = Status::DoesNotFit;
  e.reason = "out of memory";
  EXPECT_EQ(log_entry_json(e)["status"], "does-not-fit");
  EXPECT_EQ(log_entry_json(e)["reason"], "out of memory");

  Tuning t;
  t.target = "train";
  t.objective = "samples_per_s";
  t.knobs = {"precision", "micro_batch"};
  t.recommended = configuration_json(e.config, {{"samples_per_s", 20.0}});
  t.default_config = configuration_json(e.config, {{"samples_per_s", 10.0}});
  t.speedup_vs_default = 2.0;
  t.search.push_back(j);
  const nlohmann::ordered_json doc = to_json(t);
  EXPECT_EQ(doc["recommended"]["micro_batch"], 8);
  EXPECT_EQ(doc["recommended"]["samples_per_s"], 20.0);
  EXPECT_EQ(doc["default"]["samples_per_s"], 10.0);
  EXPECT_EQ(doc["speedup_vs_default"], 2.0);
  EXPECT_EQ(doc["search"].size(), 1u);
  Tuning none;
  none.target = "train";
  EXPECT_FALSE(to_json(none).contains("recommended"));
  EXPECT_FALSE(to_json(none).contains("speedup_vs_default"));
}

}  // namespace
}  // namespace gpubench::tune
