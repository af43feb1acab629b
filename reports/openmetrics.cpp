// OpenMetrics text output (see openmetrics.hpp). Format: https://prometheus.io/docs/specs/om/open_metrics_spec/
// and the Prometheus text exposition format (docs/instrumenting/exposition_formats).
#include "reports/openmetrics.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "reports/cases.hpp"
#include "reports/reference.hpp"
#include "reports/soak.hpp"
#include "reports/stats.hpp"

namespace gpubench::reports {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

// Metric and label names: [a-zA-Z_][a-zA-Z0-9_]* (label names also; ':' is for recording rules).
std::string sanitize_name(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

// The shortest text that reads back as the same double.
std::string number(double v) { return fmt::format("{}", v); }

// One sample before it is written: its family, labels and value, and where it came from.
// `source` names the series' origin (a file's case on a device, a file's timestamp, a soak
// gauge): two samples of one source in one family are the same series and written once.
// `case_name` and `case_id` tell a case apart where two sources' labels would be equal.
struct Sample {
  Labels labels;
  double value = 0;
  std::string source, case_name, case_id;
};

struct Family {
  std::string help;
  std::vector<Sample> samples;
};

// The label set as Prometheus compares series: unordered, and a label with an empty value is
// the same as no label.
std::string series_key(const Labels& labels) {
  std::vector<std::pair<std::string, std::string>> sorted;
  for (const auto& kv : labels) {
    if (!kv.second.empty()) sorted.push_back(kv);
  }
  std::sort(sorted.begin(), sorted.end());
  std::string key;
  for (const auto& [k, v] : sorted) key += k + '\x1f' + v + '\x1e';
  return key;
}

class Writer {
 public:
  void add(const std::string& name, const std::string& help, const Labels& labels, double value,
           const std::string& source, const std::string& case_name = {}, const std::string& case_id = {}) {
    if (!std::isfinite(value)) return;  // NaN and infinities say nothing a dashboard can use
    auto [it, fresh] = families_.try_emplace(name);
    if (fresh) {
      order_.push_back(name);
      it->second.help = help;
    }
    it->second.samples.push_back({labels, value, source, case_name, case_id});
  }

  std::string str() const {
    std::string out;
    for (const std::string& name : order_) {
      const Family& f = families_.at(name);
      out += fmt::format("# TYPE {} gauge\n# HELP {} {}\n", name, name, f.help);
      for (const Sample& s : resolved(f.samples)) {
        std::string text;
        for (const auto& [k, v] : s.labels) {
          text += fmt::format("{}{}=\"{}\"", text.empty() ? "" : ",", k, openmetrics_escape(v));
        }
        out += fmt::format("{}{{{}}} {}\n", name, text, number(s.value));
      }
    }
    return out + "# EOF\n";
  }

 private:
  // A family's samples with one series each: a source's repeated sample is dropped, and where
  // two sources' label sets are equal (names or values that sanitise or print alike, labels in
  // another order, an empty value beside a missing label) every one of them gets a `case` label
  // that tells it apart: the case's name, or where names are equal too its suite and axes as JSON.
  static std::vector<Sample> resolved(const std::vector<Sample>& samples) {
    std::vector<Sample> out;
    std::map<std::string, std::vector<std::size_t>> by_key;  // label set -> samples of distinct sources
    for (const Sample& s : samples) {
      std::vector<std::size_t>& group = by_key[series_key(s.labels)];
      const bool repeated = std::any_of(group.begin(), group.end(), [&](std::size_t i) { return out[i].source == s.source; });
      if (repeated) continue;
      group.push_back(out.size());
      out.push_back(s);
    }
    for (const auto& entry : by_key) {
      const std::vector<std::size_t>& group = entry.second;  // (a structured binding cannot be captured before clang 16)
      if (group.size() < 2) continue;
      auto all_differ = [&](std::string Sample::*field) {
        std::set<std::string> seen;
        for (std::size_t i : group) {
          if ((out[i].*field).empty() || !seen.insert(out[i].*field).second) return false;
        }
        return true;
      };
      std::string Sample::*field = all_differ(&Sample::case_name) ? &Sample::case_name
                                   : all_differ(&Sample::case_id) ? &Sample::case_id
                                                                  : &Sample::source;  // distinct by construction
      for (std::size_t i : group) out[i].labels.emplace_back("case", out[i].*field);
    }
    return out;
  }

  std::vector<std::string> order_;
  std::map<std::string, Family> families_;
};

// context.date "2026-12-03T07:18:43+00:00" (UTC, as gpubench writes it) in seconds since the epoch.
std::optional<double> utc_seconds(const std::string& date) {
  std::tm tm{};
  std::istringstream in(date.substr(0, 19));
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return std::nullopt;
  return static_cast<double>(::timegm(&tm));
}

std::string uuid_of(const ResultsFile& f, const std::string& device) {
  const nlohmann::json* devices = json_at(f.context, {"gpubench", "devices"});
  if (devices == nullptr || !devices->is_array()) return {};
  for (const auto& d : *devices) {
    if (d.is_object() && d.value("id", "") == device && d.contains("uuid") && d["uuid"].is_string()) {
      return d["uuid"].get<std::string>();
    }
  }
  return {};
}

}  // namespace

std::string openmetrics_escape(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string to_openmetrics(const std::vector<ResultsFile>& files, const SpecSheet* specs) {
  // Two files of the same host and device would give identical series: tell them apart.
  std::map<std::pair<std::string, std::string>, std::set<std::size_t>> files_of;
  std::map<std::string, std::set<std::size_t>> files_of_host;
  for (std::size_t i = 0; i < files.size(); ++i) {
    files_of_host[files[i].host()].insert(i);
    for (const ResultEntry& e : files[i].entries) files_of[{files[i].host(), e.device}].insert(i);
  }
  bool need_file_label = false;
  for (const auto& [key, set] : files_of) need_file_label = need_file_label || set.size() > 1;
  for (const auto& [key, set] : files_of_host) need_file_label = need_file_label || set.size() > 1;
  // The `results` label: the file name; the path as given where two files share a name, and
  // the file's place on the command line (#N) where they share that too.
  std::vector<std::string> file_labels;
  std::map<std::string, int> name_count, path_count;
  for (const ResultsFile& f : files) {
    ++name_count[f.path.filename().string()];
    ++path_count[f.path.lexically_normal().string()];
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::string label = files[i].path.filename().string();
    if (name_count[label] > 1) label = files[i].path.lexically_normal().string();
    if (path_count[files[i].path.lexically_normal().string()] > 1) label += fmt::format(" (#{})", i + 1);
    file_labels.push_back(label);
  }

  Writer w;
  static const std::set<std::string> kReserved = {"suite", "device_model", "device", "uuid", "host", "results", "case"};
  // The families every case or file may write: a headline metric whose name would be one of
  // them gets a `gpubench_metric_` family instead, so one case never writes two samples into one.
  auto headline_family = [](const std::string& metric) {
    static const std::set<std::string> kFixed = {"seconds_per_run", "noise_ratio", "pct_of_peak", "pct_of_published",
                                                 "results_timestamp_seconds"};
    const std::string name = sanitize_name(metric);
    return kFixed.count(name) != 0 || name.rfind("soak_", 0) == 0 || name.rfind("metric_", 0) == 0
               ? "gpubench_metric_" + name
               : "gpubench_" + name;
  };
  for (std::size_t fi = 0; fi < files.size(); ++fi) {
    const ResultsFile& f = files[fi];
    const std::string& file_label = file_labels[fi];
    const std::string file_source = fmt::format("file {}", fi);
    if (auto t = utc_seconds(string_at(f.context, {"date"}))) {
      Labels l{{"host", f.host()}};
      if (need_file_label) l.emplace_back("results", file_label);
      w.add("gpubench_results_timestamp_seconds", "When the run started (seconds since the Unix epoch, UTC).", l, *t,
            file_source);
    }
    for (const SoakGauge& g : soak_gauges(f)) {  // a soak's verdict and last sample (reports/soak.hpp)
      Labels l = g.labels;
      l.emplace_back("host", f.host());
      if (need_file_label) l.emplace_back("results", file_label);
      std::string source = file_source + " soak";
      for (const auto& [k, v] : g.labels) source += '\x1f' + k + '\x1f' + v;
      w.add(g.name, g.help, l, g.value, source);
    }
    // Repetitions of a case on a device: one sample, their median.
    std::vector<std::string> order;
    std::map<std::string, std::vector<const ResultEntry*>> by_case;
    for (const ResultEntry& e : f.entries) {
      if (!is_iteration(e) || e.status != "ok") continue;
      const std::string key = e.device + '\x1f' + case_identity(e);
      if (by_case[key].empty()) order.push_back(key);
      by_case[key].push_back(&e);
    }
    for (const std::string& key : order) {
      const std::vector<const ResultEntry*>& runs = by_case[key];
      const ResultEntry& e = *runs.front();
      const std::string source = file_source + '\x1f' + key;
      const std::string id = e.suite + ' ' + nlohmann::json(e.axes).dump();
      auto add = [&](const std::string& name, const std::string& help, const Labels& labels, double value) {
        w.add(name, help, labels, value, source, e.name, id);
      };
      Labels l{{"suite", e.suite}, {"device_model", e.device_name}, {"device", e.device}};
      if (const std::string uuid = uuid_of(f, e.device); !uuid.empty()) l.emplace_back("uuid", uuid);
      l.emplace_back("host", f.host());
      if (need_file_label) l.emplace_back("results", file_label);
      std::set<std::string> used(kReserved.begin(), kReserved.end());
      auto add_axis = [&](const std::string& axis) {
        auto it = e.axes.find(axis);
        if (it == e.axes.end() || axis == "device") return;
        // Axis names that sanitise alike (a.b, a-b, a_b) or hit a reserved label get their own
        // label each (axis_a_b, axis_a_b_2, ...), in axis order: two cases never merge into one
        // series by losing the label that tells them apart.
        const std::string base = sanitize_name(axis);
        std::string name = base;
        if (used.count(name) != 0 || name.rfind("__", 0) == 0) name = "axis_" + base;  // "__" is reserved
        for (int n = 2; used.count(name) != 0; ++n) name = fmt::format("axis_{}_{}", base, n);
        used.insert(name);
        l.emplace_back(name, scalar_text(*it));
      };
      for (const std::string& axis : e.axis_names) add_axis(axis);
      if (e.axis_names.empty()) {
        for (const auto& [axis, v] : e.axes.items()) add_axis(axis);
      }

      if (const auto perf = median_perf(runs); perf && perf->metric != "runs_per_s") {
        add(headline_family(perf->metric),
              fmt::format("gpubench headline metric, in {} (decimal units).", perf->unit), l, perf->value);
      }
      std::vector<double> times, noise, pct;
      for (const ResultEntry* r : runs) {
        if (auto m = number_at(r->measurement, {"mean_s"})) times.push_back(*m);
        else if (r->real_time_s) times.push_back(*r->real_time_s);
        if (auto n = number_at(r->measurement, {"noise_pct"})) noise.push_back(*n / 100);
        if (auto p = number_at(r->metrics, {"pct_of_peak"})) pct.push_back(*p);
      }
      if (!times.empty()) add("gpubench_seconds_per_run", "Mean time of one run of the case, in seconds.", l, median(times));
      if (!noise.empty()) {
        add("gpubench_noise_ratio", "Relative noise of the case's samples (stddev / mean).", l, median(noise));
      }
      if (!pct.empty()) {
        add("gpubench_pct_of_peak", "Headline rate as a percentage of the datasheet peak.", l, median(pct));
      }
      if (const GpuSpec* gpu = specs != nullptr && !e.device_name.empty() ? specs->find(e.device_name) : nullptr) {
        if (const auto perf = median_perf(runs)) {
          if (auto m = ReferenceTable::builtin().match(gpu->key, e, perf->metric, perf->value); m && m->differs.empty()) {
            add("gpubench_pct_of_published",
                  "Headline rate as a percentage of the published measured figure of the same measurement on the same "
                  "GPU (data/reference.json).",
                  l, m->pct);
          }
        }
      }
    }
  }
  return w.str();
}

}  // namespace gpubench::reports
