// The MAMF search (see mamf.hpp).
#include "bench/tune/mamf.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "bench/core/errors.hpp"
#include "bench/core/numbers.hpp"

namespace gpubench::tune {

std::string MamfShape::label() const { return fmt::format("{}x{}x{}", m, n, k); }

std::vector<long long> parse_mamf_range(const std::string& text, const char* option) {
  constexpr long long kMax = 1LL << 20;
  std::vector<long long> out;
  const std::vector<std::string> parts = parse_list(text, option);
  if (parts.size() == 1 && parts[0].find(':') != std::string::npos) {
    const std::string& r = parts[0];
    const std::size_t a = r.find(':'), b = r.find(':', a + 1);
    if (b == std::string::npos || r.find(':', b + 1) != std::string::npos) {
      throw UsageError(fmt::format("{} '{}': expected START:STOP:STEP, a comma list or a number", option, text));
    }
    const long long start = parse_integer(r.substr(0, a), option, 1, kMax);
    const long long stop = parse_integer(r.substr(a + 1, b - a - 1), option, start, kMax);
    const long long step = parse_integer(r.substr(b + 1), option, 1, kMax);
    for (long long v = start; v <= stop; v += step) out.push_back(v);
    return out;
  }
  for (const std::string& p : parts) out.push_back(parse_integer(p, option, 1, kMax));
  return out;
}

double wave_efficiency(const MamfShape& s, const Quantisation& q) {
  const long long tiles = ((s.m + q.tile_m - 1) / q.tile_m) * ((s.n + q.tile_n - 1) / q.tile_n);
  const long long waves = (tiles + q.units - 1) / q.units;
  return static_cast<double>(tiles) / static_cast<double>(waves * q.units);
}

std::vector<MamfShape> mamf_candidates(const std::vector<long long>& m, const std::vector<long long>& n,
                                       const std::vector<long long>& k, const Quantisation& q, std::size_t* pruned) {
  std::vector<MamfShape> out;
  std::size_t cut = 0;
  for (long long a : m) {
    for (long long b : n) {
      for (long long c : k) {
        const MamfShape s{a, b, c};
        const bool tiled = a % q.tile_m == 0 && b % q.tile_n == 0 && c % q.tile_k == 0;
        if (!tiled || wave_efficiency(s, q) < q.min_wave_efficiency) {
          ++cut;
          continue;
        }
        out.push_back(s);
      }
    }
  }
  if (pruned != nullptr) *pruned = cut;
  return out;
}

MamfResult mamf_search(const std::vector<MamfShape>& candidates, const MamfOracle& measure,
                       const std::function<double()>& clock, const MamfSearchOptions& o) {
  MamfResult r;
  r.candidates = candidates.size();
  const double start = clock();
  auto left = [&] { return o.budget_s - (clock() - start); };
  std::vector<MamfShape> order = candidates;
  // Largest work first: on most devices the rate grows with the shape, so a short budget keeps
  // the shapes most likely to win.
  std::stable_sort(order.begin(), order.end(), [](const MamfShape& a, const MamfShape& b) { return a.flops() > b.flops(); });
  std::vector<std::pair<double, MamfShape>> scored;
  double longest_short = 0;
  auto one = [&](const MamfShape& s, int stage, double& longest) -> std::optional<double> {
    const double t0 = clock();
    std::string why;
    const std::optional<double> v = measure(s, stage, why);
    const double cost = clock() - t0;
    longest = std::max(longest, cost);
    nlohmann::ordered_json e{{"shape", {{"m", s.m}, {"n", s.n}, {"k", s.k}}}, {"stage", stage == 0 ? "short" : "final"}};
    if (v) {
      e["tflops"] = *v;
    } else {
      e["reason"] = why;
      ++r.failed;
    }
    e["cost_s"] = cost;
    r.log.push_back(std::move(e));
    return v;
  };
  for (std::size_t i = 0; i < order.size(); ++i) {
    // 60% of the budget for the sweep; the first measurement starts regardless.
    if (i > 0 && left() - longest_short < 0.4 * o.budget_s) {
      r.budget_exhausted = true;
      break;
    }
    ++r.measured;
    if (const auto v = one(order[i], 0, longest_short)) scored.emplace_back(*v, order[i]);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (scored.size() > o.finalists) scored.resize(o.finalists);
  double longest_final = 0;
  for (std::size_t i = 0; i < scored.size(); ++i) {
    // A final measurement is about three short ones (see the driver's min-time per stage).
    const double expected = std::max(longest_final, 3 * longest_short);
    if (i > 0 && left() < expected) break;
    ++r.finalists;
    if (const auto v = one(scored[i].second, 1, longest_final); v && *v > r.tflops) {
      r.tflops = *v;
      r.best = scored[i].second;
    }
  }
  r.elapsed_s = clock() - start;
  return r;
}

}  // namespace gpubench::tune
