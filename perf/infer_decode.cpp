// Checks the infer suite's CPU goal (issue 29): a decode step of the small model (llama-small,
// fp32) at batch 1 moves its bytes (every matmul weight once, the cached K and V, the new rows)
// at 60% or more of the same machine's STREAM triad, both measured in this run: the step
// through gpubench (plan, harness, results file), the triad by the suite's own ceiling
// (infer.hpp host_memory_ceiling: 3 x 64 MiB arrays, best of 8 passes). Best of ROUNDS rounds.
// Exit status 1 when the goal is missed.
//   build/<preset>/perf/gpubench_perf_infer [ROUNDS (default 5)] [CONTEXT (default 256)]
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "bench/core/harness.hpp"
#include "bench/suites/infer/infer.hpp"
#include "kernels/infer/model.hpp"
#include "perf/perf_common.hpp"

namespace ki = gpubench::kernels::infer;

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const long context = argc > 2 ? std::max(1L, std::atol(argv[2])) : 256;
  gpubench::parse_benchmark_flags({});
  const ki::ModelSpec m = *ki::named_model("llama-small");
  // What the case counts as a step's bytes at batch 1 (fp32).
  const double bytes = ki::decode_step_elements(m, 1, context) * 4;
  std::vector<double> steps;
  for (int r = 0; r < rounds; ++r) {
    steps.push_back(gpubench::perf::through_harness(
        gpubench::perf::suite_named("infer"),
        {"model=llama-small", "phase=decode", "batch=1", fmt::format("context_len={}", context)}, 1.0));
    fmt::print("  round {}: {:.3f} ms per step, {:.2f} GB/s\n", r, steps.back() * 1e3, bytes / steps.back() / 1e9);
  }
  const double best = *std::min_element(steps.begin(), steps.end());
  const auto& ceiling = gpubench::suites::infer::host_memory_ceiling();
  const double pct = bytes / best / 1e9 / ceiling.gbps * 100;
  const bool ok = pct >= 60;
  fmt::print("llama-small decode, batch 1, context {}: {:.3f} ms per step, {:.2f} GB/s = {:.1f}% of the triad's {:.2f} GB/s "
             "(goal >= 60%) {}\n",
             context, best * 1e3, bytes / best / 1e9, pct, ceiling.gbps, ok ? "PASS" : "FAIL");
  fmt::print("median step {:.3f} ms; ceiling: {}\n", gpubench::perf::median(steps) * 1e3, ceiling.method);
  return ok ? 0 : 1;
}
