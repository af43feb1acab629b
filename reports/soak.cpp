#include "reports/soak.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <string>

namespace gpubench::reports {
namespace {

double num(const nlohmann::json& j, const char* key, double fallback = NAN) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}
std::string str(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// One chart of `field` over time with a series per key(sample); none when no sample has it.
template <typename Key>
void chart(Document& doc, const nlohmann::json& series, const std::string& title, const std::string& unit,
           const char* field, Key key) {
  std::map<std::string, LineChart::Series> by;
  std::vector<std::string> order;
  for (const auto& s : series) {
    const double v = num(s, field);
    if (!std::isfinite(v)) continue;
    const std::string k = key(s);
    if (!by.count(k)) {
      order.push_back(k);
      by[k].name = k;
    }
    by[k].x.push_back(num(s, "t_s", 0));
    by[k].values.push_back(v);
  }
  if (order.empty()) return;
  LineChart c;
  c.title = title;
  c.unit = unit;
  c.x_unit = "s";
  c.name = order.front();
  c.x = by[order.front()].x;
  c.values = by[order.front()].values;
  for (std::size_t i = 1; i < order.size(); ++i) c.more.push_back(by[order[i]]);
  doc.chart(std::move(c));
}

void one_soak(Document& doc, const ResultsFile& f, bool several) {
  const nlohmann::json& s = f.soak;
  if (several) doc.heading(fmt::format("{} ({})", f.path.filename().string(), f.host()), 3);
  std::string line = fmt::format("Load {} for {} (a sample every {}), the first {} recorded but not judged; XID watch: {}.",
                                 str(s, "load"), format_duration(num(s, "duration_s", 0)),
                                 format_duration(num(s, "sample_interval_s", 0)),
                                 format_duration(num(s.value("thresholds", nlohmann::json::object()), "warmup_s", 0)),
                                 str(s, "xid_watch"));
  doc.paragraph(line);
  if (s.contains("interrupted")) {
    doc.warning(fmt::format("Interrupted by signal {} after {}: the verdict covers the samples recorded until then.",
                            s["interrupted"].value("signal", 0), format_duration(num(s["interrupted"], "at_s", 0))));
  }
  const nlohmann::json verdict = s.value("verdict", nlohmann::json());
  if (verdict.is_null()) {
    doc.warning("No verdict: the soak was still running (or was killed) when this file was written.");
  } else if (verdict.value("passed", false)) {
    doc.paragraph("Verdict: passed (every rule held).");
  } else {
    doc.warning(fmt::format("Verdict: FAILED ({} rule(s)).", verdict.value("failures", nlohmann::json::array()).size()));
  }
  if (!verdict.is_null()) {
    Table t;
    t.add_column("device");
    t.add_column("rule");
    t.add_column("measured", true);
    t.add_column("threshold", true);
    t.add_column("what");
    for (const auto& x : verdict.value("failures", nlohmann::json::array())) {
      t.rows.push_back({str(x, "device"), str(x, "rule"), sig3(num(x, "measured")), sig3(num(x, "threshold")),
                        str(x, "message")});
    }
    if (t.rows.empty()) t.rows.push_back({"all", "all", "-", "-", "passed"});
    doc.table(std::move(t));
  }
  Table tr;
  tr.add_column("device");
  tr.add_column("load");
  tr.add_column("samples", true);
  tr.add_column("first window", true);
  tr.add_column("last window", true);
  tr.add_column("drop", true);
  tr.add_column("mean", true);
  for (const auto& x : s.value("trends", nlohmann::json::array())) {
    const std::string unit = " " + str(x, "unit");
    const bool w = x.contains("window");
    tr.rows.push_back({str(x, "device") + (str(x, "phase").empty() ? "" : " (" + str(x, "phase") + ")"), str(x, "load"),
                       std::to_string(x.value("samples", 0)), w ? sig3(num(x, "first")) + unit : "-",
                       w ? sig3(num(x, "last")) + unit : "-", w ? decimal(num(x, "drop_pct"), 2) + " %" : "-",
                       sig3(num(x, "mean")) + unit});
  }
  if (!tr.rows.empty()) doc.table(std::move(tr));

  const nlohmann::json series = s.value("series", nlohmann::json::array());
  std::map<std::string, std::string> units;  // load -> unit
  std::vector<std::string> loads;
  for (const auto& x : series) {
    const std::string l = str(x, "load");
    if (!units.count(l)) loads.push_back(l);
    units[l] = str(x, "unit");
  }
  auto device = [](const nlohmann::json& x) { return str(x, "device") + (str(x, "phase").empty() ? "" : " " + str(x, "phase")); };
  for (const std::string& l : loads) {
    nlohmann::json only = nlohmann::json::array();
    for (const auto& x : series) {
      if (str(x, "load") == l) only.push_back(x);
    }
    chart(doc, only, "Throughput, " + l, units[l], "rate", device);
  }
  chart(doc, series, "SM clock", "MHz", "sm_clock_mhz", device);
  chart(doc, series, "Memory clock", "MHz", "memory_clock_mhz", device);
  chart(doc, series, "Power", "W", "power_w", device);
  nlohmann::json temps = nlohmann::json::array();  // GPU and memory temperature as two series per device
  for (const auto& x : series) {
    if (std::isfinite(num(x, "temperature_c"))) temps.push_back({{"t_s", x["t_s"]}, {"v", x["temperature_c"]}, {"k", device(x) + " gpu"}});
    if (std::isfinite(num(x, "memory_temperature_c"))) {
      temps.push_back({{"t_s", x["t_s"]}, {"v", x["memory_temperature_c"]}, {"k", device(x) + " mem"}});
    }
  }
  chart(doc, temps, "Temperature", "C", "v", [](const nlohmann::json& x) { return str(x, "k"); });
  chart(doc, series, "CPU use of gpubench", "% of one core", "cpu_pct", device);
}

}  // namespace

std::vector<SoakGauge> soak_gauges(const ResultsFile& file) {
  std::vector<SoakGauge> out;
  const nlohmann::json& s = file.soak;
  if (!s.is_object()) return out;
  if (s.contains("verdict") && s["verdict"].is_object()) {
    const auto& v = s["verdict"];
    out.push_back({"gpubench_soak_passed", "1 when the soak passed every rule, 0 when a rule failed.", {}, v.value("passed", false) ? 1.0 : 0.0});
    out.push_back({"gpubench_soak_failed_rules", "Rules the soak failed.", {},
                   static_cast<double>(v.value("failures", nlohmann::json::array()).size())});
  }
  // The last sample of each device and load.
  std::map<std::pair<std::string, std::string>, const nlohmann::json*> last;
  std::vector<std::pair<std::string, std::string>> order;
  const nlohmann::json series = s.value("series", nlohmann::json::array());
  if (!series.is_array()) return out;
  for (const auto& x : series) {
    const auto key = std::make_pair(str(x, "device"), str(x, "load"));
    if (!last.count(key)) order.push_back(key);
    last[key] = &x;
  }
  struct Field {
    const char* key;
    const char* name;
    const char* help;
  };
  static const Field kFields[] = {
      {"temperature_c", "gpubench_soak_temperature_celsius", "GPU temperature at the soak's last sample."},
      {"memory_temperature_c", "gpubench_soak_memory_temperature_celsius", "Memory temperature at the soak's last sample."},
      {"power_w", "gpubench_soak_power_watts", "Power draw at the soak's last sample."},
      {"sm_clock_mhz", "gpubench_soak_sm_clock_mhz", "SM clock at the soak's last sample."},
      {"fan_pct", "gpubench_soak_fan_percent", "Fan speed at the soak's last sample."},
      {"ecc_uncorrected", "gpubench_soak_ecc_uncorrected", "Volatile uncorrected ECC errors at the soak's last sample."},
      {"pcie_replays", "gpubench_soak_pcie_replays", "PCIe replay counter at the soak's last sample."},
      {"cpu_pct", "gpubench_soak_cpu_percent", "gpubench's CPU use (percent of one core) at the soak's last sample."}};
  for (const auto& key : order) {
    const nlohmann::json& x = *last[key];
    const double rate = num(x, "rate");
    if (std::isfinite(rate)) {
      out.push_back({"gpubench_soak_rate", "Throughput at the soak's last sample, in the unit label (decimal units).",
                     {{"device", key.first}, {"load", key.second}, {"unit", str(x, "unit")}}, rate});
    }
    for (const Field& f : kFields) {
      const double v = num(x, f.key);
      if (std::isfinite(v)) out.push_back({f.name, f.help, {{"device", key.first}, {"load", key.second}}, v});
    }
  }
  return out;
}

void soak_section(Document& doc, const std::vector<ResultsFile>& files) {
  std::size_t n = 0;
  for (const ResultsFile& f : files) n += f.soak.is_object() ? 1 : 0;
  if (n == 0) return;
  doc.heading("Soak");
  for (const ResultsFile& f : files) {
    if (f.soak.is_object()) one_soak(doc, f, n > 1);
  }
}

}  // namespace gpubench::reports
