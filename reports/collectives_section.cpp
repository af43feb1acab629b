// The report's per-call latency table of the collectives (reports/collectives_section.hpp).
#include "reports/collectives_section.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "reports/cases.hpp"

namespace gpubench::reports {

void collectives_latency_section(Document& doc, const std::vector<ResultsFile>& files) {
  struct Row {
    std::string group;  // every column but the size and the figures
    double size = 0;
    std::vector<std::string> cells;
  };
  std::vector<Row> rows;
  for (const ResultsFile& f : files) {
    for (const ResultEntry& e : f.entries) {
      if (e.suite != "collectives" || e.run_type != "iteration" || e.status != "ok") continue;
      const auto p50 = number_at(e.metrics, {"time_p50_us"});
      if (!p50) continue;  // timed in batches
      auto us = [&](const char* key) {
        const auto v = number_at(e.metrics, {key});
        return v ? sig3(*v) : std::string();
      };
      Row r;
      r.size = number_at(e.axes, {"size"}).value_or(0);
      const std::string ranks = e.collective.contains("ranks") ? scalar_text(e.collective["ranks"]) : std::string();
      r.cells = {device_label(f, e, files.size() > 1), axis_text(e, "op"), axis_text(e, "dtype"), ranks,
                 axis_text(e, "graph") == "1" ? "graph" : "calls", axis_text(e, "size"), sig3(*p50), us("time_p90_us"),
                 us("time_p99_us"), us("time_slowest_call_us"), us("busbw_at_p50_gbps")};
      r.group = fmt::format("{}|{}|{}|{}|{}", r.cells[0], r.cells[1], r.cells[2], r.cells[3], r.cells[4]);
      rows.push_back(std::move(r));
    }
  }
  if (rows.empty()) return;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.group != b.group ? a.group < b.group : a.size < b.size; });
  doc.heading("Collectives: time per call");
  doc.paragraph("Cases run with timing=per_iter: every call timed alone, the ranks aligned by a barrier before each (as "
                "nccl-tests -I and OSU's latency tests). Percentiles of the single calls in microseconds, each the "
                "slowest rank's; the bus bandwidth at the median call (docs/suite-collectives.md).");
  Table t;
  for (const char* c : {"device", "op", "dtype", "ranks", "launch", "size (B)"}) t.add_column(c);
  for (const char* c : {"p50 us", "p90 us", "p99 us", "slowest us", "busbw at p50 (GB/s)"}) t.add_column(c, true);
  for (Row& r : rows) t.rows.push_back(std::move(r.cells));
  doc.table(std::move(t));
}

}  // namespace gpubench::reports
