#pragma once
// The CUPTI trace instrument: per case, a kernel breakdown, GPU busy time against wall time,
// gaps, copies and CUPTI's own overhead over the measure phase (gpubench.profile.trace), an
// optional Chrome/Perfetto trace file for the run, and the `cupti` timer.
#include <cstddef>
#include <memory>
#include <string>

#include "bench/core/instrument.hpp"
#include "profilers/cupti_trace/activity.hpp"

namespace gpubench::profilers {

struct TraceOptions {
  std::string trace_path;  // empty: no trace file
  bool cupti_timer = false;  // time cases by the sum of their kernels' durations
  std::size_t max_events_per_case = 50000;  // keeps trace files of long runs loadable
};

// Throws std::runtime_error when the trace file cannot be created.
std::unique_ptr<Instrument> make_trace_instrument(std::shared_ptr<ActivitySource> source, const TraceOptions& options);

}  // namespace gpubench::profilers
