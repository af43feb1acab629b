#include "bench/suites/gemm/routing.hpp"

#include <stdexcept>

namespace gpubench::suites::gemm {

std::optional<Routing> parse_routing(const std::string& name) {
  if (name == "uniform") return Routing::Uniform;
  if (name == "zipf") return Routing::Zipf;
  return std::nullopt;
}

std::string routing_name(Routing r) { return r == Routing::Zipf ? "zipf" : "uniform"; }

const std::vector<std::string>& routing_names() {
  static const std::vector<std::string> names = {"uniform", "zipf"};
  return names;
}

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double SplitMix64::uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }

std::vector<double> routing_probabilities(Routing r, std::int64_t experts) {
  if (experts < 1) throw std::invalid_argument("routing: experts must be at least 1");
  const auto g = static_cast<std::size_t>(experts);
  std::vector<double> p(g);
  double total = 0;
  for (std::size_t e = 0; e < g; ++e) {
    // zipf with s = 1: 1/e. A division is correctly rounded everywhere; std::pow is not.
    p[e] = r == Routing::Zipf ? 1.0 / static_cast<double>(e + 1) : 1.0;
    total += p[e];
  }
  for (double& x : p) x /= total;
  return p;
}

std::vector<std::int64_t> route_tokens(Routing r, std::int64_t tokens, std::int64_t experts, std::uint64_t seed) {
  if (tokens < 0) throw std::invalid_argument("routing: tokens must not be negative");
  const std::vector<double> p = routing_probabilities(r, experts);
  // Cumulative distribution, summed in expert order; the last entry is 1 by definition, so a
  // draw just below 1 never falls off the end through rounding.
  std::vector<double> cdf(p.size());
  double running = 0;
  for (std::size_t e = 0; e < p.size(); ++e) {
    running += p[e];
    cdf[e] = running;
  }
  cdf.back() = 1.0;
  std::vector<std::int64_t> counts(p.size(), 0);
  SplitMix64 rng(seed);
  for (std::int64_t t = 0; t < tokens; ++t) {
    const double u = rng.uniform();
    // Binary search: the first expert whose cumulative probability exceeds u.
    std::size_t lo = 0, hi = cdf.size() - 1;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (u < cdf[mid]) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    ++counts[lo];
  }
  return counts;
}

}  // namespace gpubench::suites::gemm
