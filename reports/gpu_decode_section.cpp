// The report's GPU JPEG decode table (reports/gpu_decode_section.hpp).
#include "reports/gpu_decode_section.hpp"

#include <fmt/format.h>

#include <optional>

#include "reports/cases.hpp"

namespace gpubench::reports {

void gpu_decode_section(Document& doc, const std::vector<ResultsFile>& files) {
  // One CPU core's libjpeg-turbo decode: the fastest ok stage=decode case at one worker and full
  // size on a cpu device (the decode=gpu cases read the same dataset when GPUBENCH_DATASET is).
  std::optional<double> per_core;
  for (const ResultsFile& f : files) {
    for (const ResultEntry& e : f.entries) {
      if (e.suite != "dataload" || e.status != "ok" || e.run_type != "iteration" || axis_text(e, "stage") != "decode") continue;
      if (e.axes.contains("decode") && axis_text(e, "decode") != "cpu") continue;
      if (axis_text(e, "workers") != "1" || axis_text(e, "scale") != "1" || e.device.rfind("cpu", 0) != 0) continue;
      if (auto r = number_at(e.metrics, {"items_per_s"}); r && (!per_core || *r > *per_core)) per_core = r;
    }
  }
  Table t;
  for (const char* c : {"device", "hw_load %", "batch"}) t.add_column(c);
  for (const char* c : {"images/s", "batch p99 ms", "host CPU cores", "CPU cores it stands in for", "cores saved"}) t.add_column(c, true);
  for (const ResultsFile& f : files) {
    for (const ResultEntry& e : f.entries) {
      if (e.suite != "dataload" || e.status != "ok" || e.run_type != "iteration" || axis_text(e, "decode") != "gpu") continue;
      const double rate = number_at(e.metrics, {"items_per_s"}).value_or(0);
      const double cores = number_at(e.metrics, {"cpu_cores"}).value_or(0);
      const auto p99 = number_at(e.metrics, {"batch_latency_ms_p99"});
      std::string replaced = "no one-core CPU decode in these files", saved = "";
      if (per_core && *per_core > 0) {
        replaced = sig3(rate / *per_core);
        saved = sig3(rate / *per_core - cores);
      }
      t.rows.push_back({device_label(f, e, files.size() > 1), axis_text(e, "hw_load"), axis_text(e, "batch"), sig3(rate),
                        p99 ? sig3(*p99) : std::string(), sig3(cores), replaced, saved});
    }
  }
  if (t.rows.empty()) return;
  doc.heading("GPU JPEG decode");
  doc.paragraph(fmt::format(
      "nvJPEG's batched decode (the dataload suite's decode=gpu, docs/suite-dataload.md): hw_load percent of each batch on "
      "the GPU's hardware JPEG decoder, the rest on nvJPEG's CUDA decoder, every image checked against libjpeg-turbo before "
      "timing. Host CPU cores: the decoding thread's CPU time over the wall time. The cores it stands in for: its images/s "
      "over one core's libjpeg-turbo decode in these files{}; saved: those less the host cores it kept busy.",
      per_core ? fmt::format(" ({} images/s)", sig3(*per_core)) : std::string(" (none found: run the cpu device's decode at workers=1 too)")));
  doc.table(std::move(t));
}

}  // namespace gpubench::reports
