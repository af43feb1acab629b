#pragma once
// NVTX ranges in the "gpubench" domain, nested run > suite > case > phase (setup, verify,
// warm-up, measure, replay, and a suite's own phases such as forward/backward), so an Nsight
// Systems timeline of a run reads case by case. NVTX costs a branch per call when no tool is
// attached (perf/instrument_overhead measures it), so this instrument is on by default.
#include <memory>

#include "bench/core/instrument.hpp"

namespace gpubench::profilers {

// The "run" range opens when the instrument is made and closes when it is destroyed.
std::unique_ptr<Instrument> make_nvtx_instrument();

}  // namespace gpubench::profilers
