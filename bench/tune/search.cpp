#include "bench/tune/search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>

namespace gpubench::tune {

std::string config_label(const Config& c) {
  std::string s;
  for (const auto& [name, value] : c) s += (s.empty() ? "" : " ") + name + "=" + value;
  return s;
}

const std::string& knob(const Config& c, const std::string& name) {
  for (const auto& [n, v] : c) {
    if (n == name) return v;
  }
  throw std::out_of_range("no knob " + name + " in " + config_label(c));
}

const char* to_string(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Failed: return "failed";
    case Status::DoesNotFit: return "does-not-fit";
    case Status::Skipped: return "skipped";
  }
  return "";
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The order of round 0: prior descending; equal priors in the seed's shuffled order.
std::vector<std::size_t> prior_order(const std::vector<Candidate>& candidates, std::uint64_t seed) {
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return candidates[a].prior > candidates[b].prior; });
  return order;
}

}  // namespace

SearchResult successive_halving(const std::vector<Candidate>& candidates, const Oracle& oracle, const Clock& clock,
                                const SearchOptions& options) {
  if (options.eta < 2) throw std::invalid_argument("successive_halving: eta must be at least 2");
  if (options.max_rounds < 1) throw std::invalid_argument("successive_halving: max_rounds must be at least 1");
  SearchResult r;
  const std::size_t n = candidates.size();
  r.latest_score.assign(n, kNaN);
  r.latest_round.assign(n, -1);
  std::vector<Status> state(n, Status::Skipped);  // final state per candidate
  std::vector<bool> measured_once(n, false);
  std::vector<double> longest_cost;  // per effort: the longest measurement so far (0: none yet)
  const double start = clock();
  const double deadline = start + options.budget_s;
  bool any_measured = false;

  // Expected cost of a measurement at `effort` (0 when nothing is known yet).
  auto expected_cost = [&](int effort) {
    for (int e = effort; e >= 0; --e) {
      const std::size_t i = static_cast<std::size_t>(e);
      if (i < longest_cost.size() && longest_cost[i] > 0) return longest_cost[i] * std::pow(options.eta, effort - e);
    }
    return 0.0;
  };
  auto skip = [&](std::size_t i, int round, Status status, std::string reason) {
    LogEntry e;
    e.config = candidates[i].config;
    e.round = round;
    e.status = status;
    e.reason = std::move(reason);
    r.log.push_back(std::move(e));
  };

  std::vector<std::size_t> pool = prior_order(candidates, options.seed);
  std::vector<std::size_t> contenders = pool;  // the candidates of the last round started
  for (int round = 0; round < options.max_rounds && !pool.empty(); ++round) {
    if (round > 0 && pool.size() < 2) break;  // one candidate left: nothing to compare
    ++r.rounds;
    contenders = pool;
    std::vector<std::size_t> measured;
    for (std::size_t pos = 0; pos < pool.size(); ++pos) {
      const std::size_t i = pool[pos];
      if (state[i] == Status::DoesNotFit) continue;  // pruned earlier in this round (logged then)
      const double now = clock();
      const double expect = expected_cost(round);
      if (any_measured && now + expect > deadline) {
        r.budget_exhausted = true;
        // Round 0's unmeasured candidates are logged as skipped; later rounds' keep their
        // earlier (shorter) measurement and need no entry.
        if (round == 0) {
          for (std::size_t k = pos; k < pool.size(); ++k) {
            if (state[pool[k]] == Status::DoesNotFit) continue;
            skip(pool[k], round,
                 Status::Skipped,
                 fmt::format("budget: {:.1f} s of {:.1f} s left, a short measurement takes about {:.1f} s",
                             std::max(0.0, deadline - now), options.budget_s, expect));
          }
        }
        break;
      }
      const double t0 = clock();
      Measured m = oracle(candidates[i].config, round);
      const double cost = clock() - t0;
      any_measured = true;
      if (longest_cost.size() <= static_cast<std::size_t>(round)) longest_cost.resize(static_cast<std::size_t>(round) + 1, 0);
      longest_cost[static_cast<std::size_t>(round)] = std::max(longest_cost[static_cast<std::size_t>(round)], cost);
      LogEntry e;
      e.config = candidates[i].config;
      e.round = round;
      e.status = m.status;
      e.score = m.score;
      e.reason = m.reason;
      e.figures = std::move(m.figures);
      e.cost_s = cost;
      r.log.push_back(e);
      if (m.status == Status::Ok && std::isfinite(m.score)) {
        state[i] = Status::Ok;
        measured_once[i] = true;
        r.latest_score[i] = m.score;
        r.latest_round[i] = round;
        measured.push_back(i);
        continue;
      }
      if (m.status == Status::Ok) {  // a non-finite score is no result
        r.log.back().status = Status::Failed;
        r.log.back().reason = "the measurement gave no finite figure";
      }
      // A candidate that fails or does not fit at a longer effort loses its earlier result:
      // it is never recommended.
      state[i] = m.status == Status::DoesNotFit ? Status::DoesNotFit : Status::Failed;
      r.latest_score[i] = kNaN;
      r.latest_round[i] = -1;
      if (state[i] == Status::DoesNotFit && options.at_least_as_large) {
        for (std::size_t k = pos + 1; k < pool.size(); ++k) {
          const std::size_t j = pool[k];
          if (state[j] == Status::DoesNotFit || !options.at_least_as_large(candidates[i].config, candidates[j].config)) {
            continue;
          }
          state[j] = Status::DoesNotFit;
          r.latest_score[j] = kNaN;
          r.latest_round[j] = -1;
          skip(j, round, Status::DoesNotFit,
               fmt::format("not measured: {} did not fit and this needs at least as much memory",
                           config_label(candidates[i].config)));
        }
      }
    }
    // The survivors: this round's measured candidates, best first; keep ceil(n / eta).
    std::stable_sort(measured.begin(), measured.end(),
                     [&](std::size_t a, std::size_t b) { return r.latest_score[a] > r.latest_score[b]; });
    // Candidates of this round left out for the budget still compete with their earlier score.
    if (r.budget_exhausted) break;
    // At least two finalists: the last round compares two candidates at the longest effort.
    const std::size_t keep = (measured.size() + static_cast<std::size_t>(options.eta) - 1) / static_cast<std::size_t>(options.eta);
    measured.resize(std::min(measured.size(), std::max<std::size_t>(keep, 2)));
    pool = measured;
  }

  // The recommendation: among the last round's contenders that never failed, the best most
  // thorough score (a contender the budget left unmeasured in that round competes with its
  // earlier score; candidates eliminated earlier do not come back on a lucky short sample).
  for (std::size_t i : contenders) {
    if (state[i] != Status::Ok || !std::isfinite(r.latest_score[i])) continue;
    if (!r.best || r.latest_score[i] > r.latest_score[*r.best]) r.best = i;
  }
  for (std::size_t i = 0; i < n; ++i) {
    switch (state[i]) {
      case Status::Ok: ++r.measured; break;
      case Status::Failed: ++r.failed; break;
      case Status::DoesNotFit: ++r.unfit; break;
      case Status::Skipped: ++r.skipped; break;
    }
  }
  r.elapsed_s = clock() - start;
  return r;
}

}  // namespace gpubench::tune
