#pragma once
// Helpers shared by the unit tests.
#include <gtest/gtest.h>

#include <string>

#include "bench/core/errors.hpp"
#include "bench/core/harness.hpp"

namespace gpubench::testing {

// The message of the UsageError `f` throws; a test failure if it throws none.
template <class F>
std::string usage_error(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected gpubench::UsageError";
  return {};
}

// Harness options for tests: short timings, no progress output, default Google Benchmark flags.
inline HarnessOptions fast_harness_options(std::int64_t min_samples = 5) {
  HarnessOptions h;
  h.measure.min_time_s = 0.01;
  h.measure.warmup_s = 0.001;
  h.measure.batch_s = 0.0005;
  h.measure.min_samples = min_samples;
  h.quiet = true;
  h.benchmark = parse_benchmark_flags({});
  return h;
}

}  // namespace gpubench::testing
