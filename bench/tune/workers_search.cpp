#include "bench/tune/workers_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>

namespace gpubench::tune {

Config with_workers(const Config& settings, int workers) {
  Config c = settings;
  c.emplace_back("workers", std::to_string(workers));
  return c;
}

namespace {

// What the search knows of one setting.
struct SettingState {
  bool failed = false, measured = false;
  // effort -> workers -> stall share (Ok measurements only)
  std::map<int, std::map<int, double>> stall;
  std::optional<int> fewest;  // fewest workers known to meet the target (most thorough effort)
  bool missed_bound = false;   // missed the target at the bound it was first measured at
};

}  // namespace

WorkersSearchResult search_workers(const std::vector<Candidate>& settings, const LoaderOracle& oracle, const Clock& clock,
                                   const WorkersSearchOptions& o) {
  if (o.min_workers < 1 || o.max_workers < o.min_workers) {
    throw std::invalid_argument(fmt::format("search_workers: workers {} to {}", o.min_workers, o.max_workers));
  }
  WorkersSearchResult r;
  const std::size_t n = settings.size();
  r.settings = static_cast<int>(n);
  std::vector<SettingState> state(n);
  double longest[2] = {0, 0};  // per effort
  const double start = clock();
  const double deadline = start + o.budget_s;
  bool any = false;

  auto expected = [&](int effort) {
    if (longest[effort] > 0) return longest[effort];
    return effort == 1 ? longest[0] * o.long_ratio : 0.0;
  };
  auto affordable = [&](int effort) {
    if (!any) return true;
    const double reserve = o.reserve_s ? std::max(0.0, o.reserve_s()) : 0.0;
    if (clock() + expected(effort) + reserve <= deadline) return true;
    r.budget_exhausted = true;
    return false;
  };
  // One measurement, logged; nullopt when it failed (the setting is then out for good).
  auto measure = [&](std::size_t i, int workers, int effort) -> std::optional<double> {
    const double t0 = clock();
    LoaderMeasured m = oracle(settings[i].config, workers, effort);
    const double cost = clock() - t0;
    any = true;
    ++r.measurements;
    longest[effort] = std::max(longest[effort], cost);
    LogEntry e;
    e.config = with_workers(settings[i].config, workers);
    e.round = effort;
    e.status = m.status;
    e.score = m.stall;
    e.reason = m.reason;
    e.figures = std::move(m.figures);
    e.cost_s = cost;
    if (m.status == Status::Ok && !(std::isfinite(m.stall) && m.stall >= 0 && m.stall <= 1)) {
      e.status = Status::Failed;
      e.reason = "the measurement gave no stall share between 0 and 1";
    }
    const bool ok = e.status == Status::Ok;
    r.log.push_back(std::move(e));
    state[i].measured = true;
    if (!ok) {
      state[i].failed = true;
      state[i].fewest.reset();
      return std::nullopt;
    }
    state[i].stall[effort][workers] = m.stall;
    return m.stall;
  };
  auto skip = [&](std::size_t i, int effort, std::string reason) {
    LogEntry e;
    e.config = settings[i].config;
    e.round = effort;
    e.status = Status::Skipped;
    e.reason = std::move(reason);
    r.log.push_back(std::move(e));
  };
  auto budget_reason = [&](int effort) {
    const double reserve = o.reserve_s ? std::max(0.0, o.reserve_s()) : 0.0;
    return fmt::format("budget: {:.1f} s of {:.1f} s left ({:.1f} s kept for the final measurements), a {} measurement "
                       "takes about {:.1f} s",
                       std::max(0.0, deadline - clock()), o.budget_s, reserve, effort == 0 ? "short" : "long",
                       expected(effort));
  };

  // Prior order, ties in the seed's order.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(o.seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return settings[a].prior > settings[b].prior; });

  // Stage short: the bound is the fewest workers any setting needs so far.
  std::optional<int> bound;
  for (std::size_t pos = 0; pos < order.size(); ++pos) {
    const std::size_t i = order[pos];
    if (!affordable(0)) {
      for (std::size_t k = pos; k < order.size(); ++k) skip(order[k], 0, budget_reason(0));
      break;
    }
    const int top = bound.value_or(o.max_workers);
    const std::optional<double> at_top = measure(i, top, 0);
    if (!at_top) continue;
    if (*at_top > o.max_stall) {
      state[i].missed_bound = bound.has_value();
      continue;  // cannot meet the target with `top` workers, so not with fewer either
    }
    // Binary search in [min_workers, top): `hi` meets the target, `lo - 1` does not.
    int lo = o.min_workers, hi = top;
    while (lo < hi && !state[i].failed) {
      if (!affordable(0)) break;  // `hi` stands: it was measured to meet the target
      const int mid = lo + (hi - lo) / 2;
      const std::optional<double> s = measure(i, mid, 0);
      if (!s) break;
      if (*s <= o.max_stall) hi = mid;
      else lo = mid + 1;
    }
    if (state[i].failed) continue;
    state[i].fewest = hi;
    if (!bound || hi < *bound) bound = hi;
    if (r.budget_exhausted) {
      for (std::size_t k = pos + 1; k < order.size(); ++k) skip(order[k], 0, budget_reason(0));
      break;
    }
  }

  // The ranking: fewest workers, then the lower stall at that count (most thorough effort).
  auto stall_at = [&](std::size_t i, int w, int* effort = nullptr) -> std::optional<double> {
    for (int e = 1; e >= 0; --e) {
      auto it = state[i].stall.find(e);
      if (it == state[i].stall.end()) continue;
      auto jt = it->second.find(w);
      if (jt == it->second.end()) continue;
      if (effort) *effort = e;
      return jt->second;
    }
    return std::nullopt;
  };
  auto ranked = [&] {
    std::vector<std::size_t> v;
    for (std::size_t i : order) {
      if (!state[i].failed && state[i].fewest) v.push_back(i);
    }
    std::stable_sort(v.begin(), v.end(), [&](std::size_t a, std::size_t b) {
      if (*state[a].fewest != *state[b].fewest) return *state[a].fewest < *state[b].fewest;
      return stall_at(a, *state[a].fewest).value_or(1) < stall_at(b, *state[b].fewest).value_or(1);
    });
    return v;
  };

  // Stage long: the finalists again, longer; one that now misses moves up a worker at a time.
  if (!r.budget_exhausted) {
    std::vector<std::size_t> finalists = ranked();
    if (finalists.size() > static_cast<std::size_t>(std::max(o.finalists, 0))) finalists.resize(static_cast<std::size_t>(o.finalists));
    for (std::size_t i : finalists) {
      int w = *state[i].fewest;
      bool confirmed = false;
      while (!confirmed && w <= o.max_workers) {
        if (!affordable(1)) {
          skip(i, 1, budget_reason(1));
          break;
        }
        const std::optional<double> s = measure(i, w, 1);
        if (!s) break;
        if (*s <= o.max_stall) confirmed = true;
        else ++w;
      }
      if (state[i].failed) continue;
      if (confirmed) state[i].fewest = w;
      else if (w > o.max_workers) state[i].fewest.reset();  // the long run says it never meets the target
      // else: the budget ended the climb; the short result stands (the caller sees its effort)
      if (r.budget_exhausted) break;
    }
  }

  const std::vector<std::size_t> best = ranked();
  if (!best.empty()) {
    WorkersChoice c;
    c.setting = best.front();
    c.workers = *state[c.setting].fewest;
    c.stall = stall_at(c.setting, c.workers, &c.effort).value_or(0);
    c.meets_target = true;
    r.best = c;
  } else {
    // None meets the target: the lowest stall measured by a setting that never failed.
    for (std::size_t i : order) {
      if (state[i].failed) continue;
      for (const auto& [effort, by_workers] : state[i].stall) {
        for (const auto& [w, s] : by_workers) {
          if (!r.best || s < r.best->stall || (s == r.best->stall && w < r.best->workers)) {
            r.best = WorkersChoice{i, w, s, effort, false};
          }
        }
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (state[i].failed) ++r.failed;
    else if (state[i].measured) ++r.measured;
    else ++r.skipped;
    if (state[i].missed_bound && !state[i].failed) ++r.pruned;
  }
  r.elapsed_s = clock() - start;
  return r;
}

}  // namespace gpubench::tune
