// The report's storage table (reports/storage_section.hpp).
#include "reports/storage_section.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "reports/cases.hpp"

namespace gpubench::reports {

namespace {

// `gpubench tune storage`'s curve and verdict: how many emulated accelerators the storage fed at
// the workload's AU threshold (gpubench.storage_au).
void au_section(Document& doc, const std::vector<ResultsFile>& files) {
  bool headed = false;
  for (const ResultsFile& f : files) {
    const nlohmann::json& au = f.storage_au;
    if (!au.is_object() || !au.contains("curve") || !au["curve"].is_array()) continue;
    if (!headed) {
      doc.heading("Storage: how many GPUs it feeds");
      doc.paragraph("MLPerf Storage's emulation (`gpubench tune storage`, docs/suite-storage.md): N emulated accelerators each "
                    "take a batch from their own loader threads and then sleep the workload's step; AU = compute time / run "
                    "time over the steps after the loader queue's fill (the steady AU; MLPerf leaves out only the first "
                    "step, over runs thousands of steps long), averaged over the N. The verdict is the largest N at the threshold.");
      headed = true;
    }
    const auto num = [&](const char* key) { return number_at(au, {key}).value_or(0); };
    const std::string workload = scalar_text(au.value("workload", nlohmann::json()));
    const std::string who = workload == "custom" ? std::string("a custom workload")
                                                 : workload + " on " + scalar_text(au.value("accelerator", nlohmann::json()));
    doc.paragraph(fmt::format("{}{}: {}, {:.0f} samples of {:.0f} B per {} s step ({} GB/s per accelerator), AU >= {}%, {}; step time {}.",
                              files.size() > 1 ? f.host() + ", " : "", f.path.filename().string(), who, num("batch"), num("sample_bytes"),
                              sig3(num("step_s")), sig3(num("demand_gbps_per_accelerator")), sig3(num("au_threshold_pct")),
                              au.value("direct", 1) == 1 ? "O_DIRECT reads" : "page-cache reads, dropped before each run",
                              scalar_text(au.value("step_from", nlohmann::json()))));
    std::vector<nlohmann::json> curve(au["curve"].begin(), au["curve"].end());
    std::stable_sort(curve.begin(), curve.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
      return number_at(a, {"accelerators"}).value_or(0) < number_at(b, {"accelerators"}).value_or(0);
    });
    Table t;
    t.add_column("accelerators", true);
    for (const char* c : {"AU %", "lowest AU %", "samples/s", "GB/s", "wait p99 ms"}) t.add_column(c, true);
    t.add_column("at the threshold");
    for (const nlohmann::json& c : curve) {
      const auto fig = [&](const char* key) {
        const auto v = number_at(c, {key});
        return v ? sig3(*v) : std::string();
      };
      t.rows.push_back({fmt::format("{:.0f}", number_at(c, {"accelerators"}).value_or(0)), fig("au_pct"), fig("au_min_pct"), fig("samples_per_s"), fig("gbps"), fig("wait_ms_p99"),
                        c.value("passed", false) ? "yes" : "no"});
    }
    doc.table(std::move(t));
    if (au.contains("verdict") && au["verdict"].is_string()) {
      doc.paragraph(au["verdict"].get<std::string>());
    } else {
      doc.paragraph(fmt::format("The search did not finish (interrupted): the largest N at the threshold so far is {}.",
                                sig3(num("largest_passing"))));
    }
  }
}

}  // namespace

void storage_section(Document& doc, const std::vector<ResultsFile>& files) {
  struct Row {
    std::tuple<std::string, int, double, double, double> key;  // device, read before randread, bs, numjobs, iodepth
    std::vector<std::string> cells;
  };
  std::vector<Row> rows;
  for (const ResultsFile& f : files) {
    for (const ResultEntry& e : f.entries) {
      if (e.suite != "storage" || e.run_type != "iteration" || e.status != "ok" || !e.axes.contains("rw")) continue;
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
  au_section(doc, files);
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
