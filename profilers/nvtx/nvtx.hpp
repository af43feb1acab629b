#pragma once
// NVTX ranges in the "gpubench" domain for every case and phase, so an Nsight Systems
// timeline of a run reads case by case (setup, verify, warm-up, measure). NVTX costs a branch
// per call when no tool is attached, so this instrument is on by default.
#include <memory>

#include "bench/core/instrument.hpp"

namespace gpubench::profilers {

std::unique_ptr<Instrument> make_nvtx_instrument();

}  // namespace gpubench::profilers
