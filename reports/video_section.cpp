// The report's video section (reports/video_section.hpp).
#include "reports/video_section.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "reports/cases.hpp"

namespace gpubench::reports {
namespace {

struct Case {
  const ResultsFile* file = nullptr;
  const ResultEntry* e = nullptr;
  double fps = 0, psnr = 0, cores = 0;
  bool cpu = false;
};

// The CPU case a GPU case is set beside: the same op, codec and size; of those at least as good
// (PSNR within 0.1 dB or above), the most frames per core; else the best PSNR there is.
const Case* cpu_match(const Case& g, const std::vector<Case>& all) {
  const Case* best = nullptr;
  bool best_good = false;
  for (const Case& c : all) {
    if (!c.cpu || c.cores <= 0 || axis_text(*c.e, "op") != axis_text(*g.e, "op") ||
        axis_text(*c.e, "codec") != axis_text(*g.e, "codec") || axis_text(*c.e, "res") != axis_text(*g.e, "res")) {
      continue;
    }
    const bool good = c.psnr >= g.psnr - 0.1;
    if (best == nullptr || (good && !best_good) ||
        (good == best_good && (good ? c.fps / c.cores > best->fps / best->cores : c.psnr > best->psnr))) {
      best = &c;
      best_good = good;
    }
  }
  return best;
}

}  // namespace

void video_section(Document& doc, const std::vector<ResultsFile>& files) {
  std::vector<Case> all;
  for (const ResultsFile& f : files) {
    for (const ResultEntry& e : f.entries) {
      if (e.suite != "video" || e.status != "ok" || e.run_type != "iteration") continue;
      Case c{&f, &e, number_at(e.metrics, {"fps"}).value_or(0), number_at(e.metrics, {"psnr_db"}).value_or(0),
             number_at(e.metrics, {"cpu_cores"}).value_or(0), e.device.rfind("cpu", 0) == 0};
      if (c.fps > 0) all.push_back(c);
    }
  }
  if (all.empty()) return;
  doc.heading("Video encode and decode");
  doc.paragraph(
      "The video suite (docs/suite-video.md): every encode decoded back and held to a PSNR floor for its codec and QP before "
      "it was timed, every NVDEC decode equal to libavcodec's CPU decode. fps over all sessions; host CPU cores: the "
      "process's CPU time over the runs' wall time. A GPU case stands in for its fps over the frames per core of the CPU "
      "case of the same op, codec and size at the same PSNR or better (the most frames per core among them), here in these "
      "files.");
  std::map<std::string, Table> tables;  // one per codec, in name order
  std::vector<std::string> replaced;
  ScatterChart chart;
  chart.title = "fps against PSNR (encode)";
  chart.x_title = "PSNR, dB";
  chart.y_title = "fps";
  chart.legend = {"GPU (NVENC)"};
  for (const Case& c : all) {
    const ResultEntry& e = *c.e;
    Table& t = tables[axis_text(e, "codec")];
    if (t.columns.empty()) {
      for (const char* h : {"device", "op", "size", "preset", "qp", "sessions"}) t.add_column(h);
      for (const char* h : {"fps", "PSNR dB", "floor dB", "bits/pixel", "host CPU cores", "fps per CPU core", "CPU cores it stands in for"}) {
        t.add_column(h, true);
      }
    }
    const auto floor = number_at(e.metrics, {"psnr_floor_db"});
    const auto bpp = number_at(e.metrics, {"bits_per_pixel"});
    std::string per_core, stands_in;
    if (c.cpu && c.cores > 0) per_core = sig3(c.fps / c.cores);
    if (!c.cpu) {
      if (const Case* m = cpu_match(c, all)) {
        const double cores = c.fps / (m->fps / m->cores);
        stands_in = sig3(cores);
        replaced.push_back(fmt::format("{} {} {} preset {} at {:.2f} dB: {} fps, the work of {} cores of {} running {} {} ({:.2f} dB, {} fps per "
                                       "core)",
                                       device_label(*c.file, e, files.size() > 1), axis_text(e, "op"), axis_text(e, "codec"),
                                       axis_text(e, "preset"), c.psnr, sig3(c.fps), sig3(cores), m->e->device_name,
                                       string_at(m->e->metrics, {"codec"}), axis_text(*m->e, "preset"), m->psnr,
                                       sig3(m->fps / m->cores)));
      } else {
        stands_in = "no CPU case of this op, codec and size";
      }
    }
    t.rows.push_back({device_label(*c.file, e, files.size() > 1), axis_text(e, "op"), axis_text(e, "res"), axis_text(e, "preset"),
                      axis_text(e, "qp"), axis_text(e, "sessions"), sig3(c.fps), fmt::format("{:.2f}", c.psnr),
                      floor ? fmt::format("{:.1f}", *floor) : std::string(), bpp ? sig3(*bpp) : std::string(), sig3(c.cores),
                      per_core, stands_in});
    if (axis_text(e, "op") == "encode") {
      chart.points.push_back({fmt::format("{} {} {}", axis_text(e, "codec"), axis_text(e, "preset"), c.cpu ? "cpu" : e.device), c.psnr,
                              c.fps, c.cpu ? 0 : 1});
    }
  }
  for (auto& [codec, t] : tables) {
    doc.heading(codec, 3);
    doc.table(std::move(t));
  }
  if (!replaced.empty()) doc.list(std::move(replaced));
  if (chart.points.size() >= 2) doc.chart(std::move(chart));
}

}  // namespace gpubench::reports
