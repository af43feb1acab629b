// The report's storage table (reports/storage_section.hpp).
#include "reports/storage_section.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "reports/cases.hpp"

namespace gpubench::reports {

void storage_section(Document& doc, const std::vector<ResultsFile>& files) {
  struct Row {
    std::tuple<std::string, int, double, double, double> key;  // device, read before randread, bs, numjobs, iodepth
    std::vector<std::string> cells;
  };
  std::vector<Row> rows;
  for (const ResultsFile& f : files) {
    for (const ResultEntry& e : f.entries) {
      if (e.suite != "storage" || e.run_type != "iteration" || e.status != "ok") continue;
      auto fig = [&](const char* key, double scale = 1) {
        const auto v = number_at(e.metrics, {key});
        return v ? sig3(*v * scale) : std::string();
      };
      const std::string device = device_label(f, e, files.size() > 1);
      const std::string filesystem = e.details.contains("file") && e.details["file"].contains("filesystem")
                                         ? scalar_text(e.details["file"]["filesystem"])
                                         : std::string();
      Row r;
      r.key = {device, axis_text(e, "rw") == "read" ? 0 : 1, number_at(e.axes, {"bs"}).value_or(0), number_at(e.axes, {"numjobs"}).value_or(0),
               number_at(e.axes, {"iodepth"}).value_or(0)};
      r.cells = {device,           axis_text(e, "rw"),    axis_text(e, "bs"),       axis_text(e, "iodepth"),
                 axis_text(e, "numjobs"), axis_text(e, "direct") == "1" ? "direct" : "buffered", axis_text(e, "ioengine"),
                 filesystem,       fig("gbps"),           fig("iops"),              fig("latency_us_p50"),
                 fig("latency_us_p99"), fig("latency_us_p999")};
      rows.push_back(std::move(r));
    }
  }
  if (rows.empty()) return;
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.key < b.key; });
  doc.heading("Storage reads");
  doc.paragraph("The storage suite's reads of one large file, on fio's axes (docs/suite-storage.md): GB/s and IOPS "
                "over the timed runs, and the latency of every timed read from its submission to its reaped "
                "completion (fio's lat), in microseconds.");
  Table t;
  for (const char* c : {"device", "rw", "bs (B)", "iodepth", "numjobs", "cache", "ioengine", "filesystem"}) t.add_column(c);
  for (const char* c : {"GB/s", "IOPS", "p50 us", "p99 us", "p99.9 us"}) t.add_column(c, true);
  for (Row& r : rows) t.rows.push_back(std::move(r.cells));
  doc.table(std::move(t));
}

}  // namespace gpubench::reports
