#pragma once
// Shared by the perf/ programs: a case measured through the real gpubench path, and medians.
#include <string>
#include <vector>

#include "bench/core/instrument.hpp"
#include "bench/core/suite.hpp"

namespace gpubench::perf {

// Mean seconds per run of the single case `overrides` select in `suite` on `device` (default:
// the CPU), measured through plan, Google Benchmark registration, harness measurement and
// results file (the display output is discarded), observed by `instruments`.
double through_harness(const Suite& suite, const std::vector<std::string>& overrides, double min_time,
                       const std::vector<Instrument*>& instruments = {});
double through_harness(const Suite& suite, const std::vector<std::string>& overrides, double min_time,
                       const DeviceInfo& device, const std::vector<Instrument*>& instruments = {});

// The suite registered under `name` (the program aborts if there is none).
const Suite& suite_named(const std::string& name);

// Upper median for even counts; the programs default to an odd number of rounds.
double median(std::vector<double> v);

}  // namespace gpubench::perf
