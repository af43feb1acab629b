// The gemm suite's summary of the custom kernels: each custom case as a % of the cuBLAS case
// with the same device and axes (all but provider) in the same run. Shape documented in
// docs/results-format.md (`summaries.gemm`).
#include <map>

#include "bench/suites/gemm/gemm.hpp"

namespace gpubench::suites::gemm {

nlohmann::ordered_json summarize_custom_vs_cublas(const std::vector<nlohmann::ordered_json>& entries) {
  using Json = nlohmann::ordered_json;
  struct Row {
    std::string device, provider;
    Json axes;
    double tflops;
  };
  std::map<std::string, double> cublas;  // key: device + axes without provider
  std::vector<std::pair<std::string, Row>> custom;
  for (const Json& e : entries) {
    if (!e.contains("gpubench") || e.value("run_type", "") != "iteration") continue;
    const Json& g = e["gpubench"];
    if (g.value("status", "") != "ok" || !g.contains("axes") || !g.contains("metrics")) continue;
    const Json& m = g["metrics"];
    if (!m.contains("tflops") || !m["tflops"].is_number()) continue;
    Json axes = g["axes"];
    const std::string provider = axes.value("provider", "");
    axes.erase("provider");
    const std::string device = g.value("device", "");
    const std::string key = device + " " + axes.dump();
    const double tflops = m["tflops"].get<double>();
    if (provider == "cublas") cublas[key] = tflops;
    if (provider.rfind("custom:", 0) == 0) custom.push_back({key, Row{device, provider, axes, tflops}});
  }
  Json rows = Json::array();
  for (const auto& [key, row] : custom) {
    auto it = cublas.find(key);
    if (it == cublas.end() || it->second <= 0) continue;
    rows.push_back({{"device", row.device},
                    {"provider", row.provider},
                    {"axes", row.axes},
                    {"tflops", row.tflops},
                    {"cublas_tflops", it->second},
                    {"pct_of_cublas", 100.0 * row.tflops / it->second}});
  }
  if (rows.empty()) return Json::object();
  return {{"units", "TFLOP/s in decimal units; pct_of_cublas = 100 x custom TFLOP/s / cuBLAS TFLOP/s, same device and axes, same run"},
          {"custom_vs_cublas", std::move(rows)}};
}

}  // namespace gpubench::suites::gemm
