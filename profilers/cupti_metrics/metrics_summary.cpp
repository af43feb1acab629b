#include "profilers/cupti_metrics/metrics.hpp"

namespace gpubench::profilers {

const std::vector<std::string>& default_metrics() {
  // Names as listed in shared/reference/profiling-apis.md (CUPTI/Nsight Compute metric names).
  static const std::vector<std::string> m = {
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "dram__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
      "sm__warps_active.avg.pct_of_peak_sustained_active",
      "lts__t_bytes.sum",
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "dram__bytes_op_read.sum",  // Blackwell's names for the DRAM bytes; the unknown pair is dropped
      "dram__bytes_op_write.sum",
      "gpu__time_duration.sum",
  };
  return m;
}

nlohmann::ordered_json summarize_metrics(const std::map<std::string, double>& v) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  auto put = [&](const char* key, const char* metric, double scale = 1) {
    if (const auto it = v.find(metric); it != v.end()) j[key] = it->second * scale;
  };
  put("sm_throughput_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed");
  put("dram_throughput_pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed");
  put("tensor_pipe_pct", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active");
  put("achieved_occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active");
  put("l2_bytes", "lts__t_bytes.sum");
  for (const auto& [read, write] : {std::pair{"dram__bytes_read.sum", "dram__bytes_write.sum"},
                                    std::pair{"dram__bytes_op_read.sum", "dram__bytes_op_write.sum"}}) {
    const auto r = v.find(read), w = v.find(write);
    if (r != v.end() && w != v.end()) {
      j["dram_bytes"] = r->second + w->second;
      break;
    }
  }
  put("gpu_time_us", "gpu__time_duration.sum", 1e-3);  // the metric is in ns
  return j;
}

}  // namespace gpubench::profilers
