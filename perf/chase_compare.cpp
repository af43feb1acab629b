// Checks the memory suite's host_latency against a bare pointer chase: the same walk (one load
// waiting for the one before, 64-byte lines in a random single cycle over a buffer of the same
// size) written here without gpubench code (its own shuffle, std::mt19937_64) and timed by a
// steady-clock loop, vs `memory/test=host_latency` through plan, harness and results file.
// ns per access; rounds alternate and the best round of each side is compared (load only adds
// time), medians printed beside. Goal: gpubench within 5% of the bare loop. Exit status 1 when
// missed. Usage: gpubench_perf_chase [ROUNDS (default 5)] [MIB (default 64)]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "bench/core/harness.hpp"
#include "kernels/memory/pointer_chase.hpp"
#include "perf/perf_common.hpp"

namespace {

constexpr std::size_t kLine = 64;

// The bare walk: lines linked in a shuffled order; ns per access over runs of `accesses` until
// `min_time` has passed.
double bare_ns(std::size_t bytes, std::int64_t accesses, double min_time) {
  const std::size_t lines = bytes / kLine;
  std::vector<std::size_t> order(lines);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937_64 rng(7);
  std::shuffle(order.begin(), order.end(), rng);
  std::unique_ptr<void*[]> buffer(new void*[bytes / sizeof(void*)]);
  void** base = buffer.get();
  const std::size_t words = kLine / sizeof(void*);
  for (std::size_t k = 0; k < lines; ++k) base[order[k] * words] = &base[order[(k + 1) % lines] * words];
  void* p = &base[order[0] * words];
  using clock = std::chrono::steady_clock;
  for (std::int64_t i = 0; i < accesses; ++i) p = *static_cast<void**>(p);  // warm-up
  double total = 0;
  long runs = 0;
  while (total < min_time) {
    const auto s = clock::now();
    for (std::int64_t i = 0; i < accesses; ++i) p = *static_cast<void**>(p);
    total += std::chrono::duration<double>(clock::now() - s).count();
    ++runs;
  }
  if (p == nullptr) std::abort();  // keeps the loads
  return total / static_cast<double>(runs) / static_cast<double>(accesses) * 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const std::size_t mib = argc > 2 ? static_cast<std::size_t>(std::max(1, std::atoi(argv[2]))) : 64;
  const std::size_t bytes = mib << 20;
  gpubench::parse_benchmark_flags({});
  const std::int64_t accesses = gpubench::kernels::kHostChaseAccessesPerRun;
  std::vector<double> bare, harness;
  for (int r = 0; r < rounds; ++r) {
    bare.push_back(bare_ns(bytes, accesses, 1.0));
    harness.push_back(gpubench::perf::through_harness(gpubench::perf::suite_named("memory"),
                                                      {"test=host_latency", fmt::format("size={}", bytes)}, 1.0) *
                      1e9 / static_cast<double>(accesses));
    fmt::print("  round {}: bare {:.2f} ns  gpubench {:.2f} ns\n", r, bare.back(), harness.back());
  }
  const double bb = *std::min_element(bare.begin(), bare.end());
  const double hb = *std::min_element(harness.begin(), harness.end());
  const double diff = (hb - bb) / bb * 100;
  const bool ok = diff < 5.0;
  fmt::print("host load latency, {} MiB: best bare {:.2f} ns, gpubench {:.2f} ns, difference {:+.2f}% (goal < 5%) {}\n",
             mib, bb, hb, diff, ok ? "PASS" : "FAIL");
  fmt::print("medians: bare {:.2f} ns, gpubench {:.2f} ns\n", gpubench::perf::median(bare), gpubench::perf::median(harness));
  return ok ? 0 : 1;
}
