#pragma once
// Token routing for the gemm suite's grouped GEMMs (op=grouped): how many of a layer's M tokens
// each of its G experts receives, drawn from a seeded distribution. Plain C++, deterministic on
// every platform: a splitmix64 generator and gpubench's own inverse CDF (the standard library's
// distributions give different numbers with different standard libraries), and the
// probabilities computed with correctly rounded IEEE operations only (no std::pow).
//
//   uniform  every token picks one of the G experts with probability 1/G
//   zipf     expert e (1-based) is picked with probability proportional to 1/e^s, s = 1.0
//            (kZipfExponent): expert 1 gets about 1/H_G of the tokens (H_G the G-th harmonic
//            number: 37% for G = 8), expert G the fewest
//
// Each token is routed to exactly one expert (top-1), so the counts always sum to M exactly;
// an expert may get no token.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpubench::suites::gemm {

enum class Routing { Uniform, Zipf };

std::optional<Routing> parse_routing(const std::string& name);  // uniform zipf
std::string routing_name(Routing r);
const std::vector<std::string>& routing_names();

inline constexpr double kZipfExponent = 1.0;
// The seed every grouped case routes with: the same counts for the same (M, G, routing) in
// every run, on every machine.
inline constexpr std::uint64_t kRoutingSeed = 0x9e3779b97f4a7c15ull;

// splitmix64 (Steele, Lea, Flood 2014; the generator Java's SplittableRandom uses).
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // Uniform in [0, 1): the top 53 bits of next() times 2^-53.
  double uniform();

 private:
  std::uint64_t state_;
};

// The probability of each expert (G entries, summing to 1 up to rounding). Throws
// std::invalid_argument when experts < 1.
std::vector<double> routing_probabilities(Routing r, std::int64_t experts);

// Tokens per expert for `tokens` tokens routed one by one (inverse CDF of one uniform draw per
// token): G counts, each >= 0, summing exactly to `tokens`. Throws std::invalid_argument when
// tokens < 0 or experts < 1.
std::vector<std::int64_t> route_tokens(Routing r, std::int64_t tokens, std::int64_t experts,
                                       std::uint64_t seed = kRoutingSeed);

}  // namespace gpubench::suites::gemm
