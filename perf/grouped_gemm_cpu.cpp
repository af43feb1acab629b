// Checks the gemm suite's grouped-GEMM goal on the CPU: op=grouped with uniform routing over 8
// experts at least 0.9x the throughput of one dense OpenBLAS GEMM of the same FLOPs (the same
// M x n x k, M = the tokens), both through gpubench (plan -> harness -> results file, fp32,
// OpenBLAS's default threads). Rounds alternate grouped and dense at each size, so a burst of
// load hits both; the best round of each side is compared (load only adds time), and the median
// of the per-round ratios is printed beside it. Exit status 1 when the goal is missed.
// Run: build/<preset>/perf/gpubench_perf_grouped [ROUNDS] [MIN_TIME_S]
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/core/harness.hpp"
#include "perf/perf_common.hpp"

namespace gb = gpubench;

using gpubench::perf::median;
using gpubench::perf::through_harness;

namespace {

struct Size {
  int m, n, k;
};

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const double min_time = argc > 2 ? std::max(0.05, std::atof(argv[2])) : 1.0;
  gb::parse_benchmark_flags({});
  const gb::Suite& gemm = gpubench::perf::suite_named("gemm");
  constexpr double kGoal = 0.9;
  bool ok = true;
  // Tokens x hidden by hidden x ffn: square, more tokens, and a wide, shallow projection.
  for (const Size s : {Size{1024, 1024, 1024}, Size{2048, 1024, 1024}, Size{4096, 2048, 512}}) {
    const std::vector<std::string> shape = {fmt::format("m={}", s.m), fmt::format("n={}", s.n), fmt::format("k={}", s.k),
                                            "dtype=fp32"};
    std::vector<std::string> grouped_axes = shape;
    grouped_axes.insert(grouped_axes.end(), {"op=grouped", "experts=8", "routing=uniform"});
    std::vector<double> grouped, dense, ratio;
    for (int r = 0; r < rounds; ++r) {
      grouped.push_back(through_harness(gemm, grouped_axes, min_time));
      dense.push_back(through_harness(gemm, shape, min_time));
      ratio.push_back(dense.back() / grouped.back());
      fmt::print("  {}x{}x{} round {}: grouped {:.4g} s/run, dense {:.4g} s/run, grouped/dense throughput {:.3f}\n", s.m,
                 s.n, s.k, r, grouped.back(), dense.back(), ratio.back());
    }
    const double best = *std::min_element(dense.begin(), dense.end()) / *std::min_element(grouped.begin(), grouped.end());
    const bool pass = best >= kGoal;
    ok &= pass;
    fmt::print("{}x{}x{} (8 experts, uniform): grouped/dense best {:.3f}, median of rounds {:.3f} (goal >= {}) {}\n", s.m,
               s.n, s.k, best, median(ratio), kGoal, pass ? "PASS" : "FAIL");
  }
  return ok ? 0 : 1;
}
