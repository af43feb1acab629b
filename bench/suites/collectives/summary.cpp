// Latency and bandwidth summary of the collectives: per device, operation, type, reduction,
// layout and rank count, the time at the smallest size measured (latency) and the bus bandwidth
// at the largest (bandwidth), with the best bus bandwidth at any size and nccl-tests' "average
// bus bandwidth" (the mean over the sizes measured).
#include <fmt/format.h>

#include "bench/suites/collectives/collectives.hpp"

namespace gpubench::suites::collectives {

nlohmann::ordered_json summarize(const std::vector<nlohmann::ordered_json>& entries) {
  using Json = nlohmann::ordered_json;
  Json groups = Json::object();
  for (const Json& e : entries) {
    const Json& g = e.value("gpubench", Json::object());
    if (e.value("run_type", "") != "iteration" || g.value("status", "") != "ok" || !g.contains("collective")) continue;
    const Json& a = g["axes"];
    const Json& col = g["collective"];
    const Json& m = g["metrics"];
    const std::string key =
        fmt::format("{}/{}/{}/{}/inplace={}/ranks={}", g.value("device", ""), a.value("op", ""), a.value("dtype", ""),
                    a.value("redop", ""), a.value("inplace", 0), col.value("ranks", 0));
    const std::int64_t size = a.value("size", std::int64_t{0});
    const double time_us = m.value("time_us", 0.0), busbw = m.value("busbw_gbps", 0.0);
    Json& s = groups[key];
    if (!s.contains("operation")) {
      s = {{"device", g.value("device", "")},
           {"operation", a.value("op", "")},
           {"dtype", a.value("dtype", "")},
           {"redop", a.value("redop", "")},
           {"in_place", a.value("inplace", 0) != 0},
           {"backend", col.value("backend", "")},
           {"ranks", col.value("ranks", 0)},
           {"nodes", col.value("nodes", 0)},
           {"sizes", 0},
           {"busbw_sum", 0.0}};
    }
    s["sizes"] = s["sizes"].get<int>() + 1;
    s["busbw_sum"] = s["busbw_sum"].get<double>() + busbw;
    if (!s.contains("latency_size") || size < s["latency_size"].get<std::int64_t>()) {
      s["latency_size"] = size;
      s["latency_us"] = time_us;
    }
    if (!s.contains("bandwidth_size") || size > s["bandwidth_size"].get<std::int64_t>()) {
      s["bandwidth_size"] = size;
      s["busbw_gbps"] = busbw;
      s["algbw_gbps"] = m.value("algbw_gbps", 0.0);
    }
    if (!s.contains("peak_busbw_gbps") || busbw > s["peak_busbw_gbps"].get<double>()) {
      s["peak_busbw_gbps"] = busbw;
      s["peak_busbw_size"] = size;
    }
  }
  if (groups.empty()) return Json::object();
  Json list = Json::array();
  for (auto& item : groups.items()) {
    const Json& s = item.value();
    Json out = s;
    out["avg_busbw_gbps"] = s["busbw_sum"].get<double>() / s["sizes"].get<int>();
    out.erase("busbw_sum");
    list.push_back(std::move(out));
  }
  return {{"units", "times in microseconds (mean over ranks); bandwidths in GB/s (1e9 B/s)"},
          {"latency", "time of one call at the smallest size measured"},
          {"bandwidth", "bus bandwidth at the largest size measured; avg_busbw_gbps as nccl-tests' average"},
          {"groups", std::move(list)}};
}

}  // namespace gpubench::suites::collectives
