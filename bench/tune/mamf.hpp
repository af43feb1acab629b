#pragma once
// `gpubench tune gemm --mamf`: the maximum achievable matmul FLOP/s (MAMF, ml-engineering's
// mamf-finder): the best rate over a sweep of GEMM shapes, with the shape that reached it. The
// search is plain C++ over an abstract oracle and clock (unit-tested on a fake cost model):
//   1. the shapes of the m, n and k ranges, pruned before anything is measured by tile and wave
//      quantisation: m and n multiples of the tile, k of the tile's depth, and the tiles filling
//      the device's units (SMs; threads on the CPU) in whole waves to at least 90%;
//   2. every kept shape measured briefly, largest FLOP count first, until 60% of the budget;
//   3. the best few ("finalists") measured again, longer, with what is left; the MAMF is the
//      best finalist (its longer measurement, not its short one).
// A measurement starts only when the longest one so far at its stage fits in what is left.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpubench::tune {

struct MamfShape {
  long long m = 0, n = 0, k = 0;
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
  std::string label() const;  // "4096x8192x2048"
  bool operator==(const MamfShape&) const = default;
};

// "START:STOP:STEP" (both ends included), a comma list, or one number; every value 1 to 2^20.
// UsageError naming `option`.
std::vector<long long> parse_mamf_range(const std::string& text, const char* option);

struct Quantisation {
  long long units = 1;                        // SMs of a GPU; threads of the CPU
  long long tile_m = 128, tile_n = 128, tile_k = 64;
  double min_wave_efficiency = 0.9;
};
// Tiles / (whole waves x units): 1.0 when the last wave is full.
double wave_efficiency(const MamfShape& s, const Quantisation& q);
// The shapes of the ranges that quantisation keeps (see above); `pruned` counts the others.
std::vector<MamfShape> mamf_candidates(const std::vector<long long>& m, const std::vector<long long>& n,
                                       const std::vector<long long>& k, const Quantisation& q, std::size_t* pruned);

struct MamfSearchOptions {
  double budget_s = 180;
  std::size_t finalists = 4;
};

// One measurement of a shape at a stage (0 short, 1 final): TFLOP/s, or nullopt with `why`.
using MamfOracle = std::function<std::optional<double>(const MamfShape&, int stage, std::string& why)>;

struct MamfResult {
  std::optional<MamfShape> best;
  double tflops = 0;           // the best finalist's final measurement
  std::size_t candidates = 0, measured = 0, failed = 0, finalists = 0;
  bool budget_exhausted = false;  // shapes were left unmeasured
  double elapsed_s = 0;
  nlohmann::ordered_json log = nlohmann::ordered_json::array();  // {shape, stage, tflops | reason, cost_s}
};

MamfResult mamf_search(const std::vector<MamfShape>& candidates, const MamfOracle& measure,
                       const std::function<double()>& clock, const MamfSearchOptions& o);

}  // namespace gpubench::tune
