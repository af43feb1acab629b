#pragma once
// Hardware metrics through CUPTI's Range Profiler (CUDA 12.6+; cupti_range_profiler.h), in a
// replay pass after a case was timed, never during timing: one user range around one run of the
// case, replayed by gpubench once per pass the metrics need (the harness's Replay hook).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/core/instrument.hpp"

namespace gpubench::profilers {

// The default set (metric names from NVIDIA's Perfworks, checked per chip at run time):
// SM throughput %, DRAM throughput %, tensor pipe utilization, achieved occupancy, L2 and DRAM
// bytes, GPU time.
const std::vector<std::string>& default_metrics();

// Friendly fields for the metrics of the default set that were collected (sm_throughput_pct,
// dram_throughput_pct, tensor_pipe_pct, achieved_occupancy_pct, l2_bytes, dram_bytes,
// gpu_time_us); dram_bytes adds reads and writes (either naming: dram__bytes_read/write or
// Blackwell's dram__bytes_op_read/write).
nlohmann::ordered_json summarize_metrics(const std::map<std::string, double>& values);

// `metrics`: empty for the default set. `cuda_works`/`no_cuda_reason`: as for the trace.
std::unique_ptr<Instrument> make_metrics_instrument(const std::vector<std::string>& metrics, bool cuda_works,
                                                    const std::string& no_cuda_reason);

}  // namespace gpubench::profilers
