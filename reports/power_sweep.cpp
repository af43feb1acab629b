#include "reports/power_sweep.hpp"

#include <fmt/format.h>

#include "reports/cases.hpp"

namespace gpubench::reports {
namespace {

using json = nlohmann::json;

std::string opt_text(const json& p, const char* key, int decimals) {
  const auto it = p.find(key);
  return it != p.end() && it->is_number() ? decimal(it->get<double>(), decimals) : std::string();
}

}  // namespace

void power_sweep_section(Document& doc, const std::vector<ResultsFile>& files) {
  bool heading = false;
  for (const ResultsFile& f : files) {
    const json* sweep = f.soak.is_object() ? json_at(f.soak, {"sweep"}) : nullptr;
    if (sweep == nullptr || !sweep->is_object()) continue;
    const json* points = json_at(*sweep, {"points"});
    if (points == nullptr || !points->is_array() || points->empty()) continue;
    if (!heading) {
      doc.heading("Power and clock sweeps");
      heading = true;
    }
    const bool clocks = string_at(*sweep, {"kind"}) == "clocks";
    const std::string unit = string_at((*points)[0], {"unit"});
    doc.heading(fmt::format("{} ({})", f.host().empty() ? f.path.filename().string() : f.host(),
                            clocks ? "locked SM clocks" : "power limits"),
                3);
    Table t;
    t.add_column("setting");
    t.add_column("status");
    t.add_column("limit W", true);
    t.add_column(unit.empty() ? "throughput" : unit, true);
    t.add_column("power W", true);
    t.add_column(unit.empty() ? "per W" : unit + " per W", true);
    t.add_column("throughput vs first", true);
    t.add_column("perf/W vs first", true);
    LineChart rate, ppw;
    rate.title = "Throughput by setting";
    rate.unit = unit;
    ppw.title = "Perf per watt by setting (the efficiency curve)";
    ppw.unit = unit + " per W";
    for (const json& p : *points) {
      std::string limits;
      if (const json* l = json_at(p, {"limit_w"}); l != nullptr && l->is_array()) {
        for (const json& w : *l) {
          if (!limits.empty()) limits += ", ";
          limits += w.is_number() ? decimal(w.get<double>(), 0) : "?";
        }
      }
      const std::string setting = string_at(p, {"setting"});
      // A rate: three significant digits, as in every report table (TFLOP/s and GB/s alike).
      const auto throughput = number_at(p, {"throughput"});
      t.rows.push_back({setting, string_at(p, {"status"}), limits, throughput ? sig3(*throughput) : std::string(),
                        opt_text(p, "power_w", 0), opt_text(p, "perf_per_watt", 4),
                        opt_text(p, "relative_throughput", 3), opt_text(p, "relative_perf_per_watt", 3)});
      if (const auto v = number_at(p, {"throughput"})) {
        rate.x_labels.push_back(setting);
        rate.values.push_back(*v);
      }
      if (const auto v = number_at(p, {"perf_per_watt"})) {
        ppw.x_labels.push_back(setting);
        ppw.values.push_back(*v);
      }
    }
    doc.table(std::move(t));
    if (const std::string best = string_at(*sweep, {"best_perf_per_watt"}); !best.empty()) {
      doc.paragraph(fmt::format("Best perf per watt at {}.", best));
    }
    if (rate.values.size() >= 2) doc.chart(std::move(rate));
    if (ppw.values.size() >= 2) doc.chart(std::move(ppw));
  }
}

}  // namespace gpubench::reports
