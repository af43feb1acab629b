// `gpubench history` (see history.hpp).
#include "reports/history.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "bench/core/errors.hpp"
#include "reports/cases.hpp"

namespace gpubench::reports {

namespace fs = std::filesystem;
using ordered = nlohmann::ordered_json;

std::vector<fs::path> expand_history_inputs(const std::vector<std::string>& inputs) {
  std::vector<fs::path> out;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      std::vector<fs::path> found;
      for (const auto& e : fs::directory_iterator(in, ec)) {
        if (e.is_regular_file() && e.path().extension() == ".json") found.push_back(e.path());
      }
      if (ec) throw UsageError(fmt::format("{}: cannot list ({})", in, ec.message()));
      if (found.empty()) throw UsageError(fmt::format("{}: no .json results files in this folder", in));
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else {
      out.emplace_back(in);
    }
  }
  if (out.empty()) throw UsageError("no results files or directory given");
  return out;
}

History build_history(std::vector<ResultsFile> files, const HistoryOptions& opt) {
  auto date_of = [](const ResultsFile& f) {
    std::string d = string_at(f.context, {"gpubench", "started_utc"});
    return d.empty() ? string_at(f.context, {"date"}) : d;
  };
  std::stable_sort(files.begin(), files.end(), [&](const ResultsFile& a, const ResultsFile& b) {
    const auto da = date_of(a), db = date_of(b);
    return da != db ? da < db : a.path < b.path;
  });
  History h;
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t r = 0; r < files.size(); ++r) {
    h.runs.push_back({date_of(files[r]), files[r].path.generic_string(), files[r].host()});
    // Repetitions of a case in one run: their median is the run's value.
    std::unordered_map<std::string, std::vector<const ResultEntry*>> in_run;
    std::vector<std::string> order;
    for (const auto& e : files[r].entries) {
      if (!is_iteration(e) || e.status != "ok") continue;
      const std::string key = case_identity(e) + '\x1f' + e.device_name;
      auto [it, added] = in_run.try_emplace(key);
      if (added) order.push_back(key);
      it->second.push_back(&e);
    }
    for (const auto& key : order) {
      auto perf = median_perf(in_run[key]);
      if (!perf) continue;
      auto [it, added] = index.try_emplace(key + '\x1f' + perf->metric, h.series.size());
      if (added) {
        const ResultEntry& e = *in_run[key].front();
        h.series.push_back({e.suite, e.device_name, axes_label(e), perf->unit, {}, {}, {}});
      }
      h.series[it->second].run.push_back(r);
      h.series[it->second].values.push_back(perf->value);
    }
  }
  for (auto& s : h.series) {
    if (s.values.size() < 4) continue;  // two runs on each side at least
    const auto [lo, hi] = std::minmax_element(s.values.begin(), s.values.end());
    if (*hi <= 0 || (*hi - *lo) / *hi < opt.min_shift) continue;  // no shift this large is possible
    s.changes = cusum_change_points(s.values, opt.alpha, opt.min_shift, opt.permutations);
  }
  return h;
}

Document history_document(const History& h, const HistoryOptions& opt) {
  Document d;
  d.title = "gpubench history";
  d.paragraph(fmt::format(
      "{} runs from {} to {}. Each case's headline value (median over repetitions, higher is better) per run, "
      "ordered by run date. Change points: CUSUM with a {}-shuffle permutation test (W. A. Taylor, Change-Point "
      "Analysis, 2000) applied by binary segmentation; a shift is reported when p < {} and the levels differ by at "
      "least {}%. The run named is the first at the new level.",
      h.runs.size(), h.runs.empty() ? "-" : h.runs.front().date, h.runs.empty() ? "-" : h.runs.back().date,
      opt.permutations, opt.alpha, 100 * opt.min_shift));
  Table runs;
  for (const char* c : {"run", "date", "host", "file"}) runs.add_column(c);
  for (std::size_t i = 0; i < h.runs.size(); ++i) {
    runs.rows.push_back({fmt::format("{}", i + 1), h.runs[i].date, h.runs[i].host, h.runs[i].file});
  }
  Table shifts;
  for (const char* c : {"suite", "device", "case", "shifted at run", "date"}) shifts.add_column(c);
  for (const char* c : {"before", "after", "change", "p"}) shifts.add_column(c, true);
  for (const auto& s : h.series) {
    for (const auto& cp : s.changes) {
      const std::size_t run = s.run[cp.index];
      shifts.rows.push_back({s.suite, s.device_name, s.label, fmt::format("{} ({})", run + 1, h.runs[run].file),
                             h.runs[run].date, sig3(cp.before) + " " + s.unit, sig3(cp.after) + " " + s.unit,
                             decimal(100 * (cp.after / cp.before - 1), 1, "+") + "%", decimal(cp.p, 3)});
    }
  }
  d.heading("Shifts");
  if (shifts.rows.empty()) {
    d.paragraph("No case shifted significantly over these runs.");
  } else {
    d.table(std::move(shifts));
  }
  // Charts: the cases that shifted first, then the others, at most 60.
  std::vector<const Series*> order;
  for (const auto& s : h.series) {
    if (!s.changes.empty()) order.push_back(&s);
  }
  for (const auto& s : h.series) {
    if (s.changes.empty() && s.values.size() >= 2) order.push_back(&s);
  }
  if (!order.empty()) {
    d.heading("Series");
    for (std::size_t i = 0; i < order.size() && i < 60; ++i) {
      const Series& s = *order[i];
      LineChart c;
      c.title = s.suite + " " + s.label + " " + s.device_name;
      c.unit = s.unit;
      c.values = s.values;
      for (std::size_t r : s.run) c.x_labels.push_back(fmt::format("run {} {}", r + 1, h.runs[r].date));
      for (const auto& cp : s.changes) c.marks.push_back(cp.index);
      d.chart(std::move(c));
    }
    if (order.size() > 60) d.paragraph(fmt::format("{} more series are in the JSON output.", order.size() - 60));
  }
  Table all;
  for (const char* c : {"suite", "device", "case"}) all.add_column(c);
  for (const char* c : {"runs", "first", "last", "last vs first", "shifts"}) all.add_column(c, true);
  for (const auto& s : h.series) {
    all.rows.push_back({s.suite, s.device_name, s.label, fmt::format("{}", s.values.size()),
                        sig3(s.values.front()) + " " + s.unit, sig3(s.values.back()) + " " + s.unit,
                        percent_change(100 * (s.values.back() / s.values.front() - 1)),
                        fmt::format("{}", s.changes.size())});
  }
  d.heading("All cases");
  d.table(std::move(all));
  d.heading("Runs");
  d.table(std::move(runs));
  return d;
}

ordered history_json(const History& h) {
  ordered j;
  j["format"] = "gpubench-history";
  j["format_version"] = 1;
  ordered runs = ordered::array();
  for (const auto& r : h.runs) runs.push_back({{"date", r.date}, {"file", r.file}, {"host", r.host}});
  j["runs"] = std::move(runs);
  ordered series = ordered::array();
  for (const auto& s : h.series) {
    ordered o{{"suite", s.suite}, {"device_name", s.device_name}, {"case", s.label}, {"unit", s.unit}};
    ordered points = ordered::array();
    for (std::size_t i = 0; i < s.values.size(); ++i) points.push_back({{"run", s.run[i] + 1}, {"value", s.values[i]}});
    o["points"] = std::move(points);
    ordered changes = ordered::array();
    for (const auto& cp : s.changes) {
      changes.push_back({{"run", s.run[cp.index] + 1}, {"file", h.runs[s.run[cp.index]].file}, {"before", cp.before},
                         {"after", cp.after}, {"p", cp.p}});
    }
    o["changes"] = std::move(changes);
    series.push_back(std::move(o));
  }
  j["series"] = std::move(series);
  return j;
}

}  // namespace gpubench::reports
