// Checks the memory suite's CPU goal (issue "Ceilings suite"): the triad through gpubench
// reaches within 5% of a plain OpenMP triad loop compiled with -O3 -march=native
// (triad_bare_loop.cpp), on arrays of the same size, in the same process.
// Bare and harnessed measurements alternate (ROUNDS, default 5) and the best round of each side
// is compared (load only adds time); medians are printed too. Exit status 1 when the goal is
// missed. Usage: gpubench_perf_triad [ROUNDS] [MIB_PER_ARRAY (default 256)]
#include <fcntl.h>
#include <unistd.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include "bench/core/harness.hpp"
#include "bench/suites/all_suites.hpp"
#include "perf/perf_common.hpp"

namespace bare {
void init(double* a, double* b, double* c, std::size_t n);
void triad(double* a, const double* b, const double* c, double s, std::size_t n);
}  // namespace bare

namespace gb = gpubench;
namespace fs = std::filesystem;

namespace {

// Same shape as the harness: a warm-up run, then runs until min_time has passed; mean per run.
double bare_seconds(double* a, const double* b, const double* c, std::size_t n, double min_time) {
  using clock = std::chrono::steady_clock;
  bare::triad(a, b, c, 0.4, n);
  double total = 0;
  long runs = 0;
  while (total < min_time) {
    auto s = clock::now();
    bare::triad(a, b, c, 0.4, n);
    total += std::chrono::duration<double>(clock::now() - s).count();
    ++runs;
  }
  return total / static_cast<double>(runs);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const std::int64_t mib = argc > 2 ? std::max(1, std::atoi(argv[2])) : 256;
  const std::int64_t bytes = mib << 20;
  const std::size_t n = static_cast<std::size_t>(bytes) / sizeof(double);
  gb::parse_benchmark_flags({});

  std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
  bare::init(a.get(), b.get(), c.get(), n);
  std::vector<double> bare_s, harness_s;
  for (int r = 0; r < rounds; ++r) {
    bare_s.push_back(bare_seconds(a.get(), b.get(), c.get(), n, 1.0));
    harness_s.push_back(gpubench::perf::through_harness(gpubench::perf::suite_named("memory"),
                                                       {"test=triad", fmt::format("size={}", bytes)}, 1.0));
  }
  const double moved = 3.0 * static_cast<double>(bytes);
  for (int r = 0; r < rounds; ++r) {
    fmt::print("  round {}: bare {:.2f} GB/s  gpubench {:.2f} GB/s\n", r, moved / bare_s[static_cast<std::size_t>(r)] / 1e9,
               moved / harness_s[static_cast<std::size_t>(r)] / 1e9);
  }
  const double bb = *std::min_element(bare_s.begin(), bare_s.end());
  const double hb = *std::min_element(harness_s.begin(), harness_s.end());
  const double diff = (hb - bb) / bb * 100;
  const bool ok = diff < 5.0;
  fmt::print("CPU triad, {} MiB per array: best bare {:.2f} GB/s, gpubench {:.2f} GB/s, time difference {:+.2f}% (goal < 5%) {}\n",
             mib, moved / bb / 1e9, moved / hb / 1e9, diff, ok ? "PASS" : "FAIL");
  fmt::print("medians: bare {:.2f} GB/s, gpubench {:.2f} GB/s\n", moved / gpubench::perf::median(bare_s) / 1e9, moved / gpubench::perf::median(harness_s) / 1e9);
  return ok ? 0 : 1;
}
