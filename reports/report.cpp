// `gpubench report` (see report.hpp). The sections, in order: the node card (evaluate files),
// notes, warnings, scorecard, one section per suite, attention, time and cost to train,
// rooflines, findings, environment, problems.
#include "reports/report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/core/errors.hpp"
#include "bench/core/numbers.hpp"
#include "reports/input_file.hpp"
#include "reports/cases.hpp"
#include "reports/soak.hpp"
#include "reports/power_sweep.hpp"
#include "reports/escape.hpp"
#include "reports/json_error.hpp"
#include "reports/plausibility.hpp"
#include "reports/reference.hpp"
#include "reports/attention_section.hpp"
#include "reports/infer_section.hpp"
#include "reports/collectives_section.hpp"
#include "reports/gpu_decode_section.hpp"
#include "reports/video_section.hpp"
#include "reports/storage_section.hpp"
#include "reports/low_precision_section.hpp"
#include "reports/node_card.hpp"
#include "reports/scaling_section.hpp"
#include "reports/stats.hpp"
#include "reports/tuning.hpp"

namespace gpubench::reports {

using nlohmann::json;
using ordered = nlohmann::ordered_json;

// ---------------------------------------------------------------- prices

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

double parse_price_value(const std::string& text, const std::string& where) {
  const double v = read_real(text).value_or(0);  // the command line's one number syntax (numbers.hpp)
  if (!(v > 0)) {
    throw UsageError(fmt::format("{}: price '{}' should be a positive number of USD per hour", where, text));
  }
  return v;
}

}  // namespace

std::optional<double> PriceList::find(const std::string& device_name) const {
  const std::string name = lower(device_name);
  std::optional<double> best;
  std::size_t best_len = 0;
  for (const auto& [key, usd] : prices) {
    if (!key.empty() && name.find(lower(key)) != std::string::npos && key.size() > best_len) {
      best = usd, best_len = key.size();
    }
  }
  return best;
}

void PriceList::add_assignment(const std::string& text) {
  const auto eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError(fmt::format("--price '{}': expected NAME=USD_PER_HOUR (e.g. H100=2.49)", text));
  }
  prices.emplace_back(text.substr(0, eq), parse_price_value(text.substr(eq + 1), "--price"));
}

PriceList PriceList::from_options(const std::string& file, const std::vector<std::string>& assignments) {
  PriceList p = file.empty() ? PriceList{} : from_file(file);
  for (const std::string& a : assignments) p.add_assignment(a);
  return p;
}

PriceList PriceList::from_file(const std::filesystem::path& path) {
  const std::string text = read_input_file(path, "price file");
  ordered doc;
  try {
    doc = ordered::parse(text);
  } catch (const ordered::exception& e) {
    throw UsageError(fmt::format("{}: not valid JSON ({})", path.string(), one_line_parse_message(e.what())));
  }
  auto it = doc.is_object() ? doc.find("prices_usd_per_hour") : doc.end();
  if (!doc.is_object() || it == doc.end() || !it->is_object()) {
    throw UsageError(fmt::format("{}: not a price file (expected an object \"prices_usd_per_hour\": {{NAME: USD}})",
                                 path.string()));
  }
  PriceList list;
  for (const auto& [name, v] : it->items()) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0) {
      throw UsageError(fmt::format("{}: price of \"{}\" should be a positive number", path.string(), name));
    }
    list.prices.emplace_back(name, v.get<double>());
  }
  return list;
}

// ---------------------------------------------------------------- the model

namespace {

struct Cell {
  std::optional<Perf> perf;
  std::optional<double> ratio, pct_peak, pct_ceiling, power_w, per_w, per_dollar;
  std::optional<ReferenceMatch> published;  // the published figure of the same measurement (reference.hpp)
  bool noisy = false, throttled = false;
  std::vector<std::string> suspect;  // reasons of any of the cell's entries (plausibility.hpp)
};

std::string joined(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, "; ")); }

std::string pct(std::optional<double> v) { return v ? decimal(*v, 1) + "%" : std::string(); }
std::string times(std::optional<double> v) { return v ? fmt::format("{}x", sig3(*v)) : std::string(); }
std::string opt_sig3(std::optional<double> v) { return v ? sig3(*v) : std::string(); }

struct Model {
  const std::vector<ResultsFile>& files;
  const SpecSheet& specs;
  const ReportOptions& opt;
  Joined j;
  std::size_t baseline = 0;
  std::vector<std::optional<double>> price;  // per column
  std::vector<const GpuSpec*> spec;          // per column (the sheet's regexes are slow: once each)
  std::vector<std::vector<Cell>> cells;      // [case][column]
  std::vector<std::string> warnings;
  std::vector<plausibility::FileSuspects> suspects;  // per file

  Model(const std::vector<ResultsFile>& f, const SpecSheet& s, const ReportOptions& o)
      : files(f), specs(s), opt(o), j(join_results(f)) {
    // Judged again with this report's spec sheet: files from older runs, or another sheet.
    const plausibility::PeakLookup lookup = plausibility::memoized(
        [this](const std::string& name, const std::string& key) { return specs.peak(name, key); });
    const plausibility::ClockLookup clock = plausibility::memoized(
        [this](const std::string& name, const std::string& key) { return specs.peak_clock(name, key); });
    for (const ResultsFile& file : files) suspects.push_back(plausibility::judge_file(file, lookup, clock));
    choose_baseline();
    for (const auto& c : j.columns) {
      price.push_back(opt.prices.find(c.device_name));
      spec.push_back(specs.find(c.device_name));
    }
    compute();
  }

  void choose_baseline() {
    if (j.columns.empty()) return;
    if (opt.baseline.empty()) {
      // The first GPU: a CPU column is rarely what GPUs should be measured against.
      for (std::size_t i = 0; i < j.columns.size(); ++i) {
        if (j.columns[i].device.starts_with("cuda")) {
          baseline = i;
          break;
        }
      }
      return;
    }
    std::string b = opt.baseline;
    if (!b.empty() && b[0] == '#') b.erase(0, 1);
    std::vector<std::size_t> hits;
    if (!b.empty() && std::all_of(b.begin(), b.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      const std::size_t n = std::stoul(b.substr(0, 9));
      if (n >= 1 && n <= j.columns.size()) hits.push_back(n - 1);
    } else {
      for (std::size_t i = 0; i < j.columns.size(); ++i) {
        if (j.columns[i].label == opt.baseline) hits = {i};
      }
      if (hits.empty()) {
        for (std::size_t i = 0; i < j.columns.size(); ++i) {
          if (lower(j.columns[i].label).find(lower(opt.baseline)) != std::string::npos) hits.push_back(i);
        }
      }
    }
    if (hits.size() != 1) {
      std::vector<std::string> labels;
      for (std::size_t i = 0; i < j.columns.size(); ++i) labels.push_back(fmt::format("{}: {}", i + 1, j.columns[i].label));
      throw UsageError(fmt::format("--baseline '{}' {} (runs: {})", opt.baseline,
                                   hits.empty() ? "matches no run" : "matches several runs", fmt::join(labels, "; ")));
    }
    baseline = hits[0];
  }

  std::optional<double> sheet_peak(std::size_t column, const std::string& key) const {
    if (spec[column] == nullptr) return std::nullopt;
    auto it = spec[column]->peaks.find(key);
    if (it == spec[column]->peaks.end()) return std::nullopt;
    return it->second;
  }

  const json* device_summary(std::size_t column) const {
    const RunColumn& c = j.columns[column];
    return json_at(files[c.file].summaries, {"memory", "devices", c.device.c_str()});
  }

  const std::vector<std::string>* entry_suspect(std::size_t file, const ResultEntry& e) const {
    const auto& entries = files[file].entries;
    if (entries.empty() || &e < entries.data() || &e >= entries.data() + entries.size()) return nullptr;
    return suspects[file].of(static_cast<std::size_t>(&e - entries.data()));
  }

  const std::vector<std::string>* ceiling_suspect(std::size_t column, const std::string& key) const {
    return suspects[j.columns[column].file].ceiling(j.columns[column].device, key);
  }

  std::optional<double> ceiling(std::size_t column, const std::string& peak_key) const {
    const json* s = device_summary(column);
    if (s == nullptr || peak_key.empty()) return std::nullopt;
    if (peak_key == "memory_bandwidth") return number_at(*s, {"memory_bandwidth", "gbps"});
    return number_at(*s, {"peak", peak_key.c_str(), "tflops"});
  }

  void compute() {
    cells.assign(j.cases.size(), std::vector<Cell>(j.columns.size()));
    for (std::size_t i = 0; i < j.cases.size(); ++i) {
      for (std::size_t c = 0; c < j.columns.size(); ++c) {
        const auto& entries = j.cases[i].by_column[c];
        if (entries.empty()) continue;
        Cell& cell = cells[i][c];
        cell.perf = median_perf(entries);
        const ResultEntry& e = *entries.front();
        const std::string peak_key = string_at(e.metrics, {"peak_key"});
        const bool rate_matches_peak =
            cell.perf && ((peak_key == "memory_bandwidth" && cell.perf->metric == "gbps") ||
                          (peak_key != "memory_bandwidth" && cell.perf->metric == "tflops"));
        if (rate_matches_peak) {
          std::optional<double> peak = number_at(e.metrics, {"peak"});
          if (!peak) peak = sheet_peak(c, peak_key);
          if (peak && *peak > 0) cell.pct_peak = 100 * cell.perf->value / *peak;
          if (auto ceil = ceiling(c, peak_key); ceil && *ceil > 0) cell.pct_ceiling = 100 * cell.perf->value / *ceil;
        }
        std::vector<double> powers;
        for (const ResultEntry* r : entries) {
          if (auto p = entry_power_w(*r)) powers.push_back(*p);
          cell.noisy = cell.noisy || entry_noisy(*r);
          cell.throttled = cell.throttled || entry_throttled(*r);
          if (const auto* s = entry_suspect(j.columns[c].file, *r)) {
            for (const auto& reason : *s) {
              if (std::find(cell.suspect.begin(), cell.suspect.end(), reason) == cell.suspect.end()) {
                cell.suspect.push_back(reason);
              }
            }
          }
        }
        if (cell.perf && spec[c] != nullptr) {
          cell.published = ReferenceTable::builtin().match(spec[c]->key, e, cell.perf->metric, cell.perf->value);
          // More than 10% above what was published for the same measurement: as suspect as a
          // figure above the datasheet (a timer or a FLOP count that is wrong), named with the row.
          if (cell.published && cell.published->differs.empty() && cell.published->pct > 110) {
            cell.suspect.push_back(fmt::format("{:.0f}% of the published {:g} {} ({}): more than 10% above it",
                                               cell.published->pct, cell.published->row->value,
                                               cell.published->row->unit, cell.published->row->short_source()));
          }
        }
        if (!powers.empty()) cell.power_w = median(powers);
        if (cell.perf && cell.power_w) cell.per_w = cell.perf->value / *cell.power_w;
        if (cell.perf && price[c]) cell.per_dollar = cell.perf->value / *price[c];
      }
      const Cell& base = cells[i][baseline];
      for (std::size_t c = 0; c < j.columns.size(); ++c) {
        Cell& cell = cells[i][c];
        if (cell.perf && base.perf && cell.perf->metric == base.perf->metric && base.perf->value > 0) {
          cell.ratio = cell.perf->value / base.perf->value;
        }
      }
    }
  }

  std::vector<std::size_t> suite_cases(const std::string& suite) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < j.cases.size(); ++i) {
      if (j.cases[i].suite == suite) out.push_back(i);
    }
    return out;
  }

  // Geomean over a suite's cases (all suites for "") of f(case, column) / f(case, baseline).
  template <class F>
  std::pair<std::optional<double>, std::size_t> geomean_ratio(const std::vector<std::size_t>& cases, std::size_t c,
                                                              F f) const {
    std::vector<double> r;
    for (std::size_t i : cases) {
      auto a = f(cells[i][c]), b = f(cells[i][baseline]);
      if (a && b && *b > 0 && cells[i][c].perf && cells[i][baseline].perf &&
          cells[i][c].perf->metric == cells[i][baseline].perf->metric) {
        r.push_back(*a / *b);
      }
    }
    return {geomean(r), r.size()};
  }
};

std::vector<std::string> axis_union(const Model& m, const std::vector<std::size_t>& cases) {
  std::vector<std::string> axes;
  for (std::size_t i : cases) {
    const ResultEntry& e = *m.j.cases[i].first;
    auto add = [&](const std::string& k) {
      if (k != "device" && std::find(axes.begin(), axes.end(), k) == axes.end()) axes.push_back(k);
    };
    for (const auto& k : e.axis_names) add(k);
    for (const auto& [k, v] : e.axes.items()) add(k);
  }
  return axes;
}

// The axes of `cases` split into those whose value differs between them (a suite table's
// columns, a chart's labels) and those with one value throughout ("name=value", said once
// above the table): a gemm table otherwise repeats a dozen constant columns.
struct AxisSplit {
  std::vector<std::string> varying, fixed;
};
AxisSplit split_axes(const Model& m, const std::vector<std::size_t>& cases) {
  AxisSplit split;
  for (const std::string& a : axis_union(m, cases)) {
    std::set<std::string> values;
    for (std::size_t i : cases) values.insert(axis_text(*m.j.cases[i].first, a));
    if (values.size() > 1) {
      split.varying.push_back(a);
    } else if (!values.begin()->empty()) {
      split.fixed.push_back(a + "=" + *values.begin());
    }
  }
  return split;
}

// A case's label from the axes that vary (its name when none does).
std::string varying_label(const ResultEntry& e, const std::vector<std::string>& varying) {
  std::string out;
  for (const std::string& a : varying) {
    if (!e.axes.contains(a)) continue;  // a case of the suite's other kind (the storage suite's reads and AU runs)
    out += (out.empty() ? "" : " ") + a + "=" + axis_text(e, a);
  }
  return out.empty() ? e.name : out;
}

// ---------------------------------------------------------------- sections

bool cpu_column(const Model& m, std::size_t c) { return m.j.columns[c].device.rfind("cpu", 0) == 0; }

void notes(Document& doc, const Model& m) {
  doc.paragraph(
      "Each case is joined across results files by its suite and axis values (not its name), so the same case "
      "measured on several devices sits on one row. Values are the median over repetitions of the case's headline "
      "metric (higher is better; runs/s where a case reports only a time). Rates use decimal units: "
      "1 TFLOP/s = 1e12 FLOP/s, 1 GB/s = 1e9 B/s. % of peak compares with the dense datasheet figure (a vendor "
      "claim); % of ceiling with the ceiling the memory suite measured on the same device." +
      std::string(m.j.columns.size() > 1 ? " Ratios are against the baseline run; geomeans are geometric means of "
                                           "per-case ratios."
                                         : ""));
  if (m.j.columns.size() > 1) doc.paragraph("Baseline: " + m.j.columns[m.baseline].label + ".");
}

void scorecard(Document& doc, const Model& m) {
  doc.heading("Scorecard");
  Table t;
  t.add_column("run");
  for (const auto& s : m.j.suites) t.add_column(s + " (geomean x, cases)", true);
  t.add_column("overall x", true);
  t.add_column("geomean % of peak", true);
  t.add_column("perf/W x", true);
  t.add_column("USD/h", true);
  t.add_column("perf/USD x", true);
  BarChart bars{"Overall geomean vs baseline", "x", {}, {}, 1.0};
  std::vector<std::size_t> all(m.j.cases.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  for (std::size_t c = 0; c < m.j.columns.size(); ++c) {
    std::vector<std::string> row{m.j.columns[c].label};
    std::vector<double> suite_means;
    for (const auto& s : m.j.suites) {
      auto [g, n] = m.geomean_ratio(m.suite_cases(s), c, [](const Cell& x) {
        return x.perf ? std::optional<double>(x.perf->value) : std::nullopt;
      });
      row.push_back(g ? fmt::format("{}x ({})", sig3(*g), n) : std::string());
      if (g) suite_means.push_back(*g);
    }
    auto overall = geomean(suite_means);
    row.push_back(times(overall));
    std::vector<double> pcts;
    for (std::size_t i = 0; i < m.j.cases.size(); ++i) {
      if (m.cells[i][c].pct_peak) pcts.push_back(*m.cells[i][c].pct_peak);
    }
    row.push_back(pcts.empty() ? (cpu_column(m, c) ? std::string("no CPU peak recorded") : std::string()) : pct(geomean(pcts)));
    row.push_back(times(m.geomean_ratio(all, c, [](const Cell& x) { return x.per_w; }).first));
    row.push_back(m.price[c] ? decimal(*m.price[c], 2) : std::string());
    row.push_back(times(m.geomean_ratio(all, c, [](const Cell& x) { return x.per_dollar; }).first));
    t.rows.push_back(std::move(row));
    if (overall) bars.labels.push_back(m.j.columns[c].label), bars.values.push_back(*overall);
  }
  doc.table(std::move(t));
  if (m.j.columns.size() > 1 && !bars.values.empty()) doc.chart(std::move(bars));
  if (m.opt.prices.prices.empty()) {
    doc.paragraph("No prices given: perf per dollar-hour needs --prices FILE or --price NAME=USD_PER_HOUR.");
  }
}

// ---------------------------------------------------------------- one run: what it measured

// A suite's cases on one device: how many ran and how they came out. Repetitions of one case
// count once (by case identity).
struct SuiteCounts {
  std::size_t ok = 0, noisy = 0, suspect = 0, throttled = 0, failed = 0, skipped = 0;
  std::string first_failure, first_skip, first_suspect;
};

SuiteCounts suite_counts(const Model& m, std::size_t c, const std::string& suite) {
  SuiteCounts n;
  for (std::size_t i : m.suite_cases(suite)) {
    if (m.j.cases[i].by_column[c].empty()) continue;
    const Cell& x = m.cells[i][c];
    ++n.ok;
    n.noisy += x.noisy ? 1 : 0;
    n.throttled += x.throttled ? 1 : 0;
    if (!x.suspect.empty()) {
      ++n.suspect;
      if (n.first_suspect.empty()) n.first_suspect = x.suspect.front();
    }
  }
  const RunColumn& col = m.j.columns[c];
  std::set<std::string> failed, skipped;
  for (const ResultEntry& e : m.files[col.file].entries) {
    if (!is_iteration(e) || e.device != col.device || e.suite != suite) continue;
    if (e.status == "failed" && failed.insert(case_identity(e)).second && n.first_failure.empty()) n.first_failure = e.reason;
    if (e.status == "skipped" && skipped.insert(case_identity(e)).second && n.first_skip.empty()) n.first_skip = e.reason;
  }
  n.failed = failed.size();
  n.skipped = skipped.size();
  return n;
}

// The verdict of a suite's cases: the worst that holds, with the first reason.
std::string suite_verdict(const SuiteCounts& n) {
  std::vector<std::string> parts;
  if (n.failed > 0) parts.push_back(fmt::format("{} failed ({})", n.failed, n.first_failure));
  if (n.suspect > 0) parts.push_back(fmt::format("{} suspect ({})", n.suspect, n.first_suspect));
  if (n.noisy > 0) parts.push_back(fmt::format("{} noisy: rerun before acting on {}", n.noisy, n.noisy == 1 ? "it" : "them"));
  if (n.throttled > 0) parts.push_back(fmt::format("{} throttled", n.throttled));
  if (n.ok == 0 && n.failed == 0) {
    parts.push_back(n.skipped > 0 ? fmt::format("nothing ran: {}", n.first_skip) : std::string("nothing ran"));
  }
  if (parts.empty()) return "ok: every case verified and within --max-noise";
  return fmt::format("{}", fmt::join(parts, "; "));
}

// What "% of datasheet peak" says where there is no figure: a CPU has no datasheet in
// data/gpus.json (a CPU peak recorded at run time lands in the cases' metrics.peak), a GPU may
// be missing from the sheet, and some figures (tokens/s, runs/s) have no peak at all.
std::string no_peak_text(const Model& m, std::size_t c, const std::string& peak_key) {
  if (peak_key.empty()) return "no peak for this figure";
  if (cpu_column(m, c)) return "no CPU peak recorded";
  if (m.spec[c] == nullptr) return "not in the spec sheet";
  return fmt::format("no datasheet {} figure", peak_key);
}

// With one results file, the report leads with what the run says about each of its devices
// (a ratio of the run to itself says nothing): per suite the counts and the verdict, the best
// figure of each headline metric against the measured ceiling, the datasheet peak and the
// published figure, and the measured ceilings against the datasheet.
void run_lead(Document& doc, const Model& m) {
  doc.heading("What the run measured");
  const std::size_t ncol = m.j.columns.size();
  const bool several = ncol > 1;
  Table status;
  if (several) status.add_column("device");
  status.add_column("suite");
  for (const char* c : {"ok", "noisy", "suspect", "failed", "skipped"}) status.add_column(c, true);
  status.add_column("verdict");
  std::size_t all_ok = 0, all_noisy = 0, all_suspect = 0, all_failed = 0, all_skipped = 0;
  for (std::size_t c = 0; c < ncol; ++c) {
    for (const std::string& suite : m.j.suites) {
      const SuiteCounts n = suite_counts(m, c, suite);
      if (n.ok + n.failed + n.skipped == 0) continue;
      std::vector<std::string> row;
      if (several) row.push_back(m.j.columns[c].label);
      row.push_back(suite.empty() ? "(no suite)" : suite);
      for (std::size_t v : {n.ok, n.noisy, n.suspect, n.failed, n.skipped}) row.push_back(std::to_string(v));
      row.push_back(suite_verdict(n));
      status.rows.push_back(std::move(row));
      all_ok += n.ok, all_noisy += n.noisy, all_suspect += n.suspect, all_failed += n.failed, all_skipped += n.skipped;
    }
  }
  std::string overall = fmt::format("{}: {} case{} ok ({} noisy, {} suspect), {} failed, {} skipped.",
                                    several ? fmt::format("{} devices", ncol) : m.j.columns[0].label, all_ok,
                                    all_ok == 1 ? "" : "s", all_noisy, all_suspect, all_failed, all_skipped);
  if (all_failed > 0) {
    overall += " Failed cases measured nothing: see Skipped and failed.";
  } else if (all_suspect > 0) {
    overall += " Suspect figures are above a datasheet peak or a measured ceiling: see Findings.";
  } else if (all_ok > 0 && all_noisy == 0) {
    overall += " Every case that ran was verified and measured within --max-noise.";
  }
  doc.paragraph(overall);
  doc.table(std::move(status));

  // The headline figures: per suite and metric (the most measured first, at most three), the
  // best case, against what the device can do.
  Table figures;
  if (several) figures.add_column("device");
  for (const char* c : {"suite", "figure", "best", "case"}) figures.add_column(c, std::string(c) == "best");
  figures.add_column("% of measured ceiling", true);
  figures.add_column("% of peak", true);
  bool any_published = false;
  for (const auto& row : m.cells) {
    for (const Cell& x : row) any_published = any_published || x.published.has_value();
  }
  if (any_published) figures.add_column("% of published", true);
  for (std::size_t c = 0; c < ncol; ++c) {
    for (const std::string& suite : m.j.suites) {
      std::vector<std::pair<std::string, std::vector<std::size_t>>> by_metric;  // metric -> cases
      for (std::size_t i : m.suite_cases(suite)) {
        const Cell& x = m.cells[i][c];
        if (!x.perf) continue;
        auto it = std::find_if(by_metric.begin(), by_metric.end(), [&](const auto& b) { return b.first == x.perf->metric; });
        if (it == by_metric.end()) {
          by_metric.emplace_back(x.perf->metric, std::vector<std::size_t>{});
          it = std::prev(by_metric.end());
        }
        it->second.push_back(i);
      }
      std::stable_sort(by_metric.begin(), by_metric.end(),
                       [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
      if (by_metric.size() > 3) by_metric.resize(3);
      const std::vector<std::size_t> suite_all = m.suite_cases(suite);
      const AxisSplit split = split_axes(m, suite_all);
      for (const auto& [metric, cases] : by_metric) {
        std::size_t best = cases.front();
        for (std::size_t i : cases) {
          if (m.cells[i][c].perf->value > m.cells[best][c].perf->value) best = i;
        }
        const Cell& x = m.cells[best][c];
        const ResultEntry& e = *m.j.cases[best].by_column[c].front();
        const std::string peak_key = string_at(e.metrics, {"peak_key"});
        std::vector<std::string> row;
        if (several) row.push_back(m.j.columns[c].label);
        row.push_back(suite.empty() ? "(no suite)" : suite);
        row.push_back(fmt::format("{} ({} case{})", x.perf->unit, cases.size(), cases.size() == 1 ? "" : "s"));
        std::string value = fmt::format("{} {}", sig3(x.perf->value), x.perf->unit);
        if (x.noisy) value += " (noisy)";
        if (x.throttled) value += " (throttled)";
        if (!x.suspect.empty()) value += " (suspect)";
        row.push_back(value);
        row.push_back(split.varying.empty() ? axes_label(e) : varying_label(e, split.varying));
        const bool rated = !peak_key.empty() && (x.perf->metric == "tflops" || x.perf->metric == "gbps");
        row.push_back(x.pct_ceiling ? pct(x.pct_ceiling)
                      : rated       ? std::string("no ceiling measured")
                                    : std::string("no ceiling for this figure"));
        row.push_back(x.pct_peak ? pct(x.pct_peak) : no_peak_text(m, c, rated ? peak_key : std::string()));
        if (any_published) {
          // The best case's published figure, else the suite's case of this metric that has one.
          const Cell* with = x.published ? &x : nullptr;
          std::size_t at = best;
          for (std::size_t i : cases) {
            if (with == nullptr && m.cells[i][c].published) with = &m.cells[i][c], at = i;
          }
          std::string text = cpu_column(m, c) ? "no published CPU figure" : "no published figure";
          if (with != nullptr) {
            text = fmt::format("{} of {:g} {} ({})", pct(with->published->pct), with->published->row->value,
                               with->published->row->unit, with->published->row->short_source());
            if (at != best) text += " at " + varying_label(*m.j.cases[at].first, split.varying);
            if (!with->published->differs.empty()) text += "; differs: " + with->published->differs;
          }
          row.push_back(text);
        }
        figures.rows.push_back(std::move(row));
      }
    }
  }
  if (!figures.rows.empty()) {
    doc.paragraph("Headline figures: the best case of each metric a suite measured (the median over its repetitions; "
                  "higher is better), against the ceiling the memory suite measured on the same device, the peak (a "
                  "GPU's datasheet figure in data/gpus.json; a CPU's, where the run recorded one) and, where "
                  "data/reference.json has one, the published figure of the same measurement.");
    doc.table(std::move(figures));
  }

  // The measured ceilings (the memory suite's summary) against the datasheet.
  Table ceilings;
  if (several) ceilings.add_column("device");
  for (const char* c : {"ceiling", "measured", "by", "datasheet", "% of datasheet"}) {
    ceilings.add_column(c, std::string(c) == "measured" || std::string(c) == "datasheet" || std::string(c) == "% of datasheet");
  }
  for (std::size_t c = 0; c < ncol; ++c) {
    const json* s = m.device_summary(c);
    if (s == nullptr) continue;
    auto add = [&](const std::string& key, const json* ceiling, double value, const std::string& unit) {
      std::vector<std::string> row;
      if (several) row.push_back(m.j.columns[c].label);
      row.push_back(key == "memory_bandwidth" ? std::string("memory bandwidth") : key);
      std::string measured = fmt::format("{} {}", sig3(value), unit);
      if (m.ceiling_suspect(c, key) != nullptr) measured += " (suspect)";
      row.push_back(measured);
      const std::string test = ceiling ? string_at(*ceiling, {"test"}) : std::string();
      row.push_back(test.empty() ? std::string() : "test=" + test);
      const auto sheet = m.sheet_peak(c, key);
      row.push_back(sheet ? fmt::format("{} {}", sig3(*sheet), unit) : no_peak_text(m, c, key));
      row.push_back(sheet && *sheet > 0 ? pct(100 * value / *sheet) : std::string("-"));
      ceilings.rows.push_back(std::move(row));
    };
    if (auto bw = number_at(*s, {"memory_bandwidth", "gbps"})) add("memory_bandwidth", json_at(*s, {"memory_bandwidth"}), *bw, "GB/s");
    if (const json* peaks = json_at(*s, {"peak"}); peaks != nullptr && peaks->is_object()) {
      for (const auto& [key, v] : peaks->items()) {
        if (auto t = number_at(v, {"tflops"})) add(key, &v, *t, key.rfind("int", 0) == 0 ? "TOP/s" : "TFLOP/s");
      }
    }
  }
  if (!ceilings.rows.empty()) {
    doc.paragraph("Measured ceilings (the memory suite's best copy and peak loops), against the datasheet:");
    doc.table(std::move(ceilings));
  } else {
    doc.paragraph("No measured ceilings in this file: the memory suite's summary gives them, from its bandwidth tests "
                  "at sizes beyond the caches and its peak loops (the quick preset runs both).");
  }
}

void suite_section(Document& doc, const Model& m, const std::string& suite) {
  const std::vector<std::size_t> cases = m.suite_cases(suite);
  doc.heading(suite.empty() ? "(no suite)" : suite);
  if (cases.empty()) {
    doc.paragraph("No completed cases (see Skipped and failed).");
    return;
  }
  const AxisSplit split = split_axes(m, cases);
  const std::vector<std::string>& axes = split.varying;
  if (!split.fixed.empty()) doc.paragraph("Every case: " + fmt::format("{}", fmt::join(split.fixed, ", ")) + ".");
  const std::size_t ncol = m.j.columns.size();
  // Optional columns appear only where some case of this suite has the value.
  std::vector<bool> any_peak(ncol), any_published(ncol), any_ceiling(ncol), any_w(ncol), any_dollar(ncol), present(ncol);
  for (std::size_t i : cases) {
    for (std::size_t c = 0; c < ncol; ++c) {
      const Cell& x = m.cells[i][c];
      present[c] = present[c] || x.perf.has_value();
      any_peak[c] = any_peak[c] || x.pct_peak.has_value();
      any_published[c] = any_published[c] || x.published.has_value();
      any_ceiling[c] = any_ceiling[c] || x.pct_ceiling.has_value();
      any_w[c] = any_w[c] || x.per_w.has_value();
      any_dollar[c] = any_dollar[c] || x.per_dollar.has_value();
    }
  }
  const std::size_t shown = static_cast<std::size_t>(std::count(present.begin(), present.end(), true));
  Table t;
  for (const auto& a : axes) t.add_column(a);
  for (std::size_t c = 0; c < ncol; ++c) {
    if (!present[c]) continue;
    const std::string& l = m.j.columns[c].label;
    t.add_column(l, true);
    if (ncol > 1 && c != m.baseline) t.add_column("x base", true);
    if (any_peak[c]) t.add_column("% peak", true);
    if (any_published[c]) t.add_column("% of published", true);
    if (any_ceiling[c]) t.add_column("% ceiling", true);
    if (any_w[c]) t.add_column("per W", true);
    if (any_dollar[c]) t.add_column("per USD/h", true);
  }
  // One device: the measurement itself (time per run, noise, samples) fits beside the rate.
  if (shown == 1) {
    for (const char* title : {"time per run", "noise %", "samples"}) t.add_column(title, true);
  }
  for (std::size_t i : cases) {
    const ResultEntry& e = *m.j.cases[i].first;
    std::vector<std::string> row;
    for (const auto& a : axes) row.push_back(axis_text(e, a));
    for (std::size_t c = 0; c < ncol; ++c) {
      if (!present[c]) continue;
      const Cell& x = m.cells[i][c];
      std::string v = x.perf ? fmt::format("{} {}", sig3(x.perf->value), x.perf->unit) : std::string();
      if (x.noisy) v += " (noisy)";
      if (x.throttled) v += " (throttled)";
      if (!x.suspect.empty()) v += " (suspect)";
      row.push_back(v);
      if (ncol > 1 && c != m.baseline) row.push_back(times(x.ratio));
      if (any_peak[c]) row.push_back(pct(x.pct_peak));
      if (any_published[c]) {
        row.push_back(x.published ? pct(x.published->pct) + (x.published->differs.empty() ? "" : " (" + x.published->differs + ")")
                                  : std::string());
      }
      if (any_ceiling[c]) row.push_back(pct(x.pct_ceiling));
      if (any_w[c]) row.push_back(opt_sig3(x.per_w));
      if (any_dollar[c]) row.push_back(opt_sig3(x.per_dollar));
    }
    if (shown == 1) {
      for (std::size_t c = 0; c < ncol; ++c) {
        const auto& entries = m.j.cases[i].by_column[c];
        if (!present[c]) continue;
        if (entries.empty()) {
          row.insert(row.end(), {"", "", ""});
          continue;
        }
        const ResultEntry& e = *entries.front();
        auto noise = number_at(e.measurement, {"noise_pct"});
        row.push_back(e.real_time_s ? format_duration(*e.real_time_s) : std::string());
        row.push_back(noise ? decimal(*noise, 1) : std::string());
        row.push_back(string_at(e.measurement, {"samples"}));
      }
    }
    t.rows.push_back(std::move(row));
  }
  doc.table(std::move(t));
  if (shown > 1) {
    BarChart bars{suite + ": geomean vs baseline", "x", {}, {}, 1.0};
    for (std::size_t c = 0; c < ncol; ++c) {
      auto [g, n] = m.geomean_ratio(cases, c, [](const Cell& x) {
        return x.perf ? std::optional<double>(x.perf->value) : std::nullopt;
      });
      if (g) bars.labels.push_back(fmt::format("{} ({} cases)", m.j.columns[c].label, n)), bars.values.push_back(*g);
    }
    if (!bars.values.empty()) doc.chart(std::move(bars));
  } else {
    // One device: the cases' headline values, where they share a unit (at most 40 bars).
    BarChart bars;
    for (std::size_t i : cases) {
      for (std::size_t c = 0; c < ncol; ++c) {
        const Cell& x = m.cells[i][c];
        if (!x.perf) continue;
        if (bars.unit.empty()) bars.unit = x.perf->unit;
        if (x.perf->unit != bars.unit || bars.values.size() >= 40) continue;
        bars.labels.push_back(varying_label(*m.j.cases[i].first, axes));
        bars.values.push_back(x.perf->value);
      }
    }
    bars.title = suite + ": " + (m.j.columns.empty() ? std::string() : m.j.columns[0].label);
    if (bars.values.size() >= 2) doc.chart(std::move(bars));
  }
}

void train_section(Document& doc, const Model& m) {
  const bool tokens = m.opt.train_tokens.has_value();
  const bool samples = m.opt.train_samples.has_value();
  const std::string metric = tokens ? "tokens_per_s" : "samples_per_s";
  std::vector<std::size_t> cases;
  for (std::size_t i = 0; i < m.j.cases.size(); ++i) {
    bool has = false;
    for (const auto& x : m.cells[i]) has = has || (x.perf && x.perf->metric == metric);
    if (!has) continue;
    if (!m.opt.train_filter.empty() && axes_label(*m.j.cases[i].first).find(m.opt.train_filter) == std::string::npos &&
        m.j.cases[i].suite.find(m.opt.train_filter) == std::string::npos) {
      continue;
    }
    cases.push_back(i);
  }
  if (!tokens && !samples) {
    if (!cases.empty()) {
      doc.heading("Time and cost to train");
      doc.paragraph("Give the workload with --train-tokens N or --train-samples N (and --train-case TEXT to pick the "
                    "train cases) to estimate hours and cost per device.");
    }
    return;
  }
  doc.heading("Time and cost to train");
  const double work = tokens ? *m.opt.train_tokens : *m.opt.train_samples;
  doc.paragraph(fmt::format(
      "Workload: {} {}. Estimate = workload / measured throughput of one device, as if the case's throughput held "
      "for the whole run (no data-parallel scaling, checkpointing or evaluation); cost = hours x price per hour.",
      fmt::format("{:g}", work), tokens ? "tokens" : "samples"));
  if (cases.empty()) {
    doc.paragraph(fmt::format("No case in these results reports {}{}: nothing to estimate.", metric,
                              m.opt.train_filter.empty() ? "" : " matching --train-case '" + m.opt.train_filter + "'"));
    return;
  }
  Table t;
  t.add_column("case");
  t.add_column("device");
  t.add_column(tokens ? "tokens/s" : "samples/s", true);
  t.add_column("hours", true);
  t.add_column("days", true);
  t.add_column("cost (USD)", true);
  BarChart bars{"Hours to train (best case per device)", "h", {}, {}, std::nullopt};
  std::vector<std::optional<double>> best(m.j.columns.size());
  bool overflowed = false;
  for (std::size_t i : cases) {
    for (std::size_t c = 0; c < m.j.columns.size(); ++c) {
      const Cell& x = m.cells[i][c];
      if (!x.perf || x.perf->metric != metric) continue;
      const double hours = work / x.perf->value / 3600;
      // A figure past what a double holds is said, not shown as "-" (issue 26).
      auto shown = [&](double v, const std::string& text) { return std::isfinite(v) ? text : std::string("overflow"); };
      const bool priced = m.price[c].has_value();
      const double cost = priced ? hours * m.price[c].value() : 0.0;
      if (!std::isfinite(hours) || !std::isfinite(cost)) overflowed = true;
      t.rows.push_back({m.j.cases[i].suite + " " + axes_label(*m.j.cases[i].first), m.j.columns[c].label,
                        sig3(x.perf->value), shown(hours, sig3(hours)), shown(hours, sig3(hours / 24)),
                        priced ? shown(cost, decimal(cost, 0)) : std::string()});
      if (!best[c] || hours < *best[c]) best[c] = hours;
    }
  }
  doc.table(std::move(t));
  if (overflowed) {
    doc.paragraph("overflow: the workload, throughput and price give hours or a cost beyond the largest number a "
                  "double holds (about 1.8e308); give a smaller --train-tokens/--train-samples or price.");
  }
  for (std::size_t c = 0; c < best.size(); ++c) {
    if (best[c] && std::isfinite(*best[c])) bars.labels.push_back(m.j.columns[c].label), bars.values.push_back(*best[c]);
  }
  if (!bars.values.empty()) doc.chart(std::move(bars));
}

void roofline_section(Document& doc, const Model& m) {
  bool heading = false;
  for (std::size_t c = 0; c < m.j.columns.size(); ++c) {
    Roofline r;
    r.title = "Roofline: " + m.j.columns[c].label;
    std::set<std::string> keys;
    for (std::size_t i = 0; i < m.j.cases.size(); ++i) {
      const auto& entries = m.j.cases[i].by_column[c];
      const Cell& x = m.cells[i][c];
      if (entries.empty() || !x.perf || x.perf->metric != "tflops") continue;
      auto flops = number_at(entries.front()->metrics, {"flops"});
      auto bytes = number_at(entries.front()->metrics, {"bytes"});
      if (!flops || !bytes || *flops <= 0 || *bytes <= 0) continue;
      if (r.points.size() < 2000) {
        r.points.push_back({m.j.cases[i].suite + " " + axes_label(*m.j.cases[i].first), *flops / *bytes, x.perf->value});
      }
      if (auto k = string_at(entries.front()->metrics, {"peak_key"}); !k.empty()) keys.insert(k);
    }
    if (r.points.empty()) continue;
    if (const json* s = m.device_summary(c)) {
      if (auto bw = number_at(*s, {"memory_bandwidth", "gbps"})) r.bandwidth_gbps = bw, r.bandwidth_measured = true;
      if (const json* peaks = json_at(*s, {"peak"}); peaks && peaks->is_object()) {
        for (const auto& [k, v] : peaks->items()) {
          if (k.starts_with("int") || k.ends_with("_core")) continue;  // not FLOP ceilings of the device
          if (auto tf = number_at(v, {"tflops"})) {
            r.ceilings.push_back({k + (m.ceiling_suspect(c, k) ? " (measured, suspect)" : " (measured)"), *tf, true});
          }
        }
      }
    }
    std::set<std::string> measured;
    for (const auto& ce : r.ceilings) measured.insert(ce.label.substr(0, ce.label.find(' ')));
    for (const auto& k : keys) {
      if (measured.count(k)) continue;
      if (auto p = m.sheet_peak(c, k)) r.ceilings.push_back({k + " (datasheet)", *p, false});
    }
    if (!r.bandwidth_gbps) r.bandwidth_gbps = m.sheet_peak(c, "memory_bandwidth");
    if (!heading) {
      doc.heading("Rooflines");
      doc.paragraph("Each case with FLOP and byte counts placed by arithmetic intensity (FLOP per byte moved, as the "
                    "suite counts bytes) against the ceilings: solid lines are the memory suite's measurements on that "
                    "device, dashed lines datasheet figures.");
      heading = true;
    }
    doc.chart(std::move(r));
  }
}

// ---------------------------------------------------------------- findings

// Axes that are tuning knobs; the documented names (docs/results-format.md). (The train suite's
// `attention` has its own finding: attention_section.hpp.)
constexpr const char* kKnobs[] = {"dtype",     "precision", "provider",   "algo",   "algorithm", "micro_batch",
                                  "grad_accum", "accumulation", "workers", "pinned", "fused",     "fusion",
                                  "recompute", "layout"};
// The value a knob's gain is measured against, when the axis has it; otherwise its first value.
// fp32 is the reference precision (the others trade accuracy for speed).
constexpr const char* kDefaults[] = {"default", "heuristic", "false", "off", "none", "fp32", "0", "1"};

struct KnobRow {
  std::vector<std::string> cells;
};

void knob_findings(Document& doc, const Model& m, bool& heading) {
  Table t;
  t.add_column("suite");
  t.add_column("knob");
  t.add_column("device");
  t.add_column("best value (times best)");
  t.add_column("reference value");
  t.add_column("median gain of best", true);
  for (const auto& suite : m.j.suites) {
    const auto cases = m.suite_cases(suite);
    const auto axes = axis_union(m, cases);
    for (const char* knob : kKnobs) {
      if (std::find(axes.begin(), axes.end(), knob) == axes.end()) continue;
      std::vector<std::string> values;  // in order of first appearance
      for (std::size_t i : cases) {
        auto v = axis_text(*m.j.cases[i].first, knob);
        if (!v.empty() && std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
      }
      if (values.size() < 2) continue;
      std::string reference = values.front();
      for (const char* d : kDefaults) {
        if (std::find(values.begin(), values.end(), d) != values.end()) {
          reference = d;
          break;
        }
      }
      for (std::size_t c = 0; c < m.j.columns.size(); ++c) {
        // Group the cases by every other axis; compare the knob's values within a group.
        std::map<std::string, std::vector<std::pair<std::string, double>>> groups;
        for (std::size_t i : cases) {
          const Cell& x = m.cells[i][c];
          if (!x.perf) continue;
          const ResultEntry& e = *m.j.cases[i].first;
          json rest = e.axes;
          rest.erase(knob);
          rest.erase("device");
          groups[rest.dump() + x.perf->metric].emplace_back(axis_text(e, knob), x.perf->value);
        }
        std::map<std::string, int> wins;
        std::vector<double> gains;
        int compared = 0;
        for (const auto& [g, vals] : groups) {
          if (vals.size() < 2) continue;
          ++compared;
          auto best = std::max_element(vals.begin(), vals.end(), [](auto& a, auto& b) { return a.second < b.second; });
          ++wins[best->first];
          for (const auto& [v, perf] : vals) {
            if (v == reference && perf > 0) gains.push_back(best->second / perf - 1);
          }
        }
        if (compared == 0) continue;
        auto top = std::max_element(wins.begin(), wins.end(), [](auto& a, auto& b) { return a.second < b.second; });
        t.rows.push_back({suite, knob, m.j.columns[c].label,
                          fmt::format("{} ({} of {})", top->first, top->second, compared), reference,
                          gains.empty() ? std::string() : percent_change(100 * median(gains))});
      }
    }
  }
  if (t.rows.empty()) return;
  if (!heading) doc.heading("Findings"), heading = true;
  doc.heading("Best setting per knob", 3);
  doc.paragraph("For each tuning axis (precision, provider, cuBLASLt algorithm, micro-batch, accumulation, loader workers, "
                "pinned memory, fusion, recompute, layout), cases that differ only in that axis are compared on the same "
                "device: the value that is fastest most often, and the median gain of the best value over the reference "
                "value (\"default\" or \"heuristic\" where the axis has it, else its first value). Precisions are compared "
                "on throughput only; their accuracy differs.");
  doc.table(std::move(t));
}

void tuned_finding(Document& doc, const Model& m, bool& heading) {
  // provider=cublaslt-tuned against provider=cublaslt with every other axis equal.
  Table t;
  t.add_column("device");
  t.add_column("cases", true);
  t.add_column("geomean gain of cublaslt-tuned over cublaslt", true);
  t.add_column("best gain", true);
  for (std::size_t c = 0; c < m.j.columns.size(); ++c) {
    std::map<std::string, std::pair<std::optional<double>, std::optional<double>>> pairs;
    for (std::size_t i = 0; i < m.j.cases.size(); ++i) {
      const Cell& x = m.cells[i][c];
      const ResultEntry& e = *m.j.cases[i].first;
      const std::string provider = axis_text(e, "provider");
      if (!x.perf || (provider != "cublaslt" && provider != "cublaslt-tuned")) continue;
      json rest = e.axes;
      rest.erase("provider");
      rest.erase("device");
      auto& p = pairs[e.suite + rest.dump()];
      (provider == "cublaslt" ? p.first : p.second) = x.perf->value;
    }
    std::vector<double> ratios;
    for (const auto& [k, p] : pairs) {
      if (p.first && p.second && *p.first > 0) ratios.push_back(*p.second / *p.first);
    }
    if (ratios.empty()) continue;
    t.rows.push_back({m.j.columns[c].label, fmt::format("{}", ratios.size()),
                      percent_change(100 * (*geomean(ratios) - 1)),
                      percent_change(100 * (*std::max_element(ratios.begin(), ratios.end()) - 1))});
  }
  if (t.rows.empty()) return;
  if (!heading) doc.heading("Findings"), heading = true;
  doc.heading("Best cuBLASLt algorithm vs the default heuristic", 3);
  doc.table(std::move(t));
}

void stall_finding(Document& doc, const Model& m, bool& heading) {
  // metrics.data_stall_pct (or details.data_stall_share x 100) over the workers axis: the fewest workers (CPU cores per GPU) that
  // keep the GPU fed (stall <= 5%).
  constexpr double kFed = 5.0;
  Table t;
  t.add_column("device");
  t.add_column("case");
  t.add_column("workers for <= 5% stall", true);
  t.add_column("stall there", true);
  t.add_column("stall at fewest workers", true);
  t.add_column("host logical CPUs", true);
  for (std::size_t c = 0; c < m.j.columns.size(); ++c) {
    std::map<std::string, std::vector<std::pair<double, double>>> groups;  // rest -> (workers, stall)
    std::map<std::string, std::string> label;
    for (std::size_t i = 0; i < m.j.cases.size(); ++i) {
      const auto& entries = m.j.cases[i].by_column[c];
      if (entries.empty()) continue;
      const ResultEntry& e = *entries.front();
      // The dataload suite's pipelines write the share under details; others may write the %.
      auto stall = number_at(e.metrics, {"data_stall_pct"});
      if (!stall) {
        if (auto share = number_at(e.details, {"data_stall_share"})) stall = *share * 100;
      }
      auto workers = e.axes.find("workers");
      if (!stall || workers == e.axes.end() || !workers->is_number()) continue;
      json rest = e.axes;
      rest.erase("workers");
      rest.erase("device");
      const std::string key = e.suite + rest.dump();
      groups[key].emplace_back(workers->get<double>(), *stall);
      std::string l;
      for (const auto& [k, v] : rest.items()) l += (l.empty() ? "" : " ") + k + "=" + scalar_text(v);
      label[key] = e.suite + (l.empty() ? "" : " " + l);
    }
    const std::string cpus = string_at(m.files[m.j.columns[c].file].context, {"gpubench", "cpu", "cores"});
    for (auto& [key, v] : groups) {
      std::sort(v.begin(), v.end());
      auto fed = std::find_if(v.begin(), v.end(), [&](auto& p) { return p.second <= kFed; });
      t.rows.push_back({m.j.columns[c].label, label[key],
                        fed == v.end() ? fmt::format("more than {:g}", v.back().first) : fmt::format("{:g}", fed->first),
                        fed == v.end() ? pct(v.back().second) : pct(fed->second), pct(v.front().second), cpus});
    }
  }
  if (t.rows.empty()) return;
  if (!heading) doc.heading("Findings"), heading = true;
  doc.heading("Data stall and CPU cores per GPU", 3);
  doc.paragraph("data_stall_pct: the share of step time the GPU waited for input. The fewest loader workers that keep it "
                "at or below 5% is the CPU budget one GPU needs for this pipeline.");
  doc.table(std::move(t));
}

// Figures that cannot be believed (reports/plausibility.hpp): every suspect case and ceiling
// with its reasons, and a warning above the report.
void suspect_finding(Document& doc, Model& m, bool& heading) {
  Table t;
  for (const char* c : {"device", "suite", "case", "figure", "why"}) t.add_column(c);
  std::size_t figures = 0, ceilings = 0;
  for (std::size_t i = 0; i < m.j.cases.size(); ++i) {
    for (std::size_t c = 0; c < m.j.columns.size(); ++c) {
      const Cell& x = m.cells[i][c];
      if (x.suspect.empty()) continue;
      ++figures;
      t.rows.push_back({m.j.columns[c].label, m.j.cases[i].suite, axes_label(*m.j.cases[i].first),
                        x.perf ? fmt::format("{} {}", sig3(x.perf->value), x.perf->unit) : std::string(), joined(x.suspect)});
    }
  }
  for (std::size_t c = 0; c < m.j.columns.size(); ++c) {
    const RunColumn& col = m.j.columns[c];
    const auto& by_device = m.suspects[col.file].ceilings;
    auto d = by_device.find(col.device);
    if (d == by_device.end()) continue;
    for (const auto& [key, reasons] : d->second) {
      ++ceilings;
      const json* s = m.device_summary(c);
      auto v = s ? (key == "memory_bandwidth" ? number_at(*s, {"memory_bandwidth", "gbps"})
                                               : number_at(*s, {"peak", key.c_str(), "tflops"}))
                 : std::nullopt;
      const std::string unit = key == "memory_bandwidth" ? "GB/s" : key.starts_with("int") ? "TOP/s" : "TFLOP/s";
      t.rows.push_back({col.label, "memory", "ceiling " + key, v ? fmt::format("{} {}", sig3(*v), unit) : std::string(),
                        joined(reasons)});
    }
  }
  if (t.rows.empty()) return;
  m.warnings.push_back(fmt::format("{} figure(s) and {} measured ceiling(s) are suspect (above a datasheet peak or a "
                                   "measured ceiling): see \"Suspect figures\" before trusting them.",
                                   figures, ceilings));
  if (!heading) doc.heading("Findings"), heading = true;
  doc.heading("Suspect figures", 3);
  doc.paragraph(fmt::format("A figure more than {:g}% above its datasheet peak, or more than {:g}% above the ceiling the "
                            "memory suite measured on the same device, cannot be believed as it stands; a ceiling that "
                            "a workload beats is suspect too (one of the two is wrong). See docs/plausibility.md.",
                            plausibility::kDatasheetMargin * 100, plausibility::kCeilingMargin * 100));
  doc.table(std::move(t));
}

void flagged_finding(Document& doc, const Model& m, bool& heading) {
  Table t;
  t.add_column("device");
  t.add_column("suite");
  t.add_column("case");
  t.add_column("noise %", true);
  t.add_column("flag");
  for (std::size_t i = 0; i < m.j.cases.size(); ++i) {
    for (std::size_t c = 0; c < m.j.columns.size(); ++c) {
      const Cell& x = m.cells[i][c];
      if (!x.noisy && !x.throttled) continue;
      const auto& entries = m.j.cases[i].by_column[c];
      auto noise = number_at(entries.front()->measurement, {"noise_pct"});
      std::string flag = x.noisy && x.throttled ? "noisy, throttled" : x.noisy ? "noisy" : "throttled";
      t.rows.push_back({m.j.columns[c].label, m.j.cases[i].suite, axes_label(*m.j.cases[i].first),
                        noise ? decimal(*noise, 1) : std::string(), flag});
    }
  }
  if (t.rows.empty()) return;
  if (!heading) doc.heading("Findings"), heading = true;
  doc.heading("Throttled or noisy cases", 3);
  doc.paragraph("These values are less trustworthy: noise above --max-noise, or clocks throttled while the case ran "
                "(telemetry). Rerun them before acting on them.");
  doc.table(std::move(t));
}

// Published figures (data/reference.json): a case more than 10% below the published
// measurement of the same thing on the same GPU is worth a look (issue 27); one more than 10%
// above it is suspect (Cell::suspect says so).
void published_finding(Document& doc, const Model& m, bool& heading) {
  std::vector<std::string> items;
  for (std::size_t i = 0; i < m.j.cases.size(); ++i) {
    for (std::size_t c = 0; c < m.j.columns.size(); ++c) {
      const Cell& x = m.cells[i][c];
      if (!x.published || !x.published->differs.empty() || !(x.published->pct < 90)) continue;
      const ReferenceRow& r = *x.published->row;
      // A maximum over shapes (MAMF) is the ceiling of every shape, but small shapes stay well
      // below it by nature (tile and wave quantisation): a finding only from 4096^3 up, where
      // cuBLASLt is within a few % of its large-shape rate on these GPUs (Azure's tables).
      if (r.kind == "best_over_shapes") {
        const ResultEntry& e = *m.j.cases[i].first;
        const double mnk = number_at(e.axes, {"m"}).value_or(0) * number_at(e.axes, {"n"}).value_or(0) *
                           number_at(e.axes, {"k"}).value_or(0);
        if (mnk < 4096.0 * 4096.0 * 4096.0) continue;
      }
      items.push_back(fmt::format("{} {} on {}: {} {}, {:.0f}% of the published {:g} {} ({}; {}).", m.j.cases[i].suite,
                                  axes_label(*m.j.cases[i].first), m.j.columns[c].label, sig3(x.perf->value),
                                  x.perf->unit, x.published->pct, r.value, r.unit, r.short_source(), r.source_url));
    }
  }
  if (items.empty()) return;
  if (!heading) doc.heading("Findings"), heading = true;
  doc.heading("Below the published figures", 3);
  doc.paragraph("More than 10% below what was published for the same measurement on the same GPU (data/reference.json: "
                "measured figures with their source, software stack and configuration, not datasheet claims). A "
                "different software stack or configuration can explain part of it; a healthy GPU should come close.");
  doc.list(std::move(items));
}

// Files of `gpubench tune gemm --mamf`: the maximum achievable matmul per device and dtype, beside
// the datasheet peak and the published MAMF (issue 27).
void mamf_section(Document& doc, const std::vector<ResultsFile>& files) {
  Table t;
  for (const char* c : {"device", "dtype", "MAMF", "shape", "clock", "datasheet peak", "% of datasheet", "published MAMF",
                        "% of published", "file"}) {
    t.add_column(c, std::string(c).find('%') != std::string::npos || std::string(c) == "MAMF");
  }
  for (const ResultsFile& f : files) {
    const json& m = f.mamf;
    if (!m.is_object() || !m.contains("tflops")) continue;
    const std::string name = string_at(m, {"device_name"}), dtype = string_at(m, {"dtype"});
    // The datasheet figure the harness held the best case against, as the file records it.
    const std::optional<double> sheet_peak = number_at(m, {"datasheet_tflops"});
    const std::string peak =
        sheet_peak ? fmt::format("{} TFLOP/s ({})", sig3(*sheet_peak), string_at(m, {"peak_key"})) : std::string();
    std::string clock = "-";
    if (auto c = number_at(m, {"sm_clock_mhz"})) clock = fmt::format("{:.0f} MHz SM", *c);
    else if (auto c2 = number_at(m, {"cpu_clock_mhz"})) clock = fmt::format("{:.0f} MHz", *c2);
    const json* shape = json_at(m, {"shape"});
    t.rows.push_back({name, dtype, sig3(number_at(m, {"tflops"}).value_or(0)) + " TFLOP/s",
                      shape ? fmt::format("{}x{}x{}", scalar_text((*shape)["m"]), scalar_text((*shape)["n"]), scalar_text((*shape)["k"]))
                            : std::string(),
                      clock, peak, pct(number_at(m, {"pct_of_datasheet"})),
                      m.contains("published") ? fmt::format("{} TFLOP/s", sig3(number_at(m, {"published", "value"}).value_or(0)))
                                              : std::string(),
                      pct(number_at(m, {"pct_of_published"})), f.path.filename().string()});
  }
  if (t.rows.empty()) return;
  doc.heading("Achievable matmul (MAMF)");
  doc.paragraph("The best GEMM rate over a sweep of shapes (`gpubench tune gemm --mamf`, as ml-engineering's "
                "mamf-finder), beside the datasheet peak (a claim) and the published MAMF of the same GPU "
                "(data/reference.json). A healthy GPU reaches about its published MAMF; the datasheet peak, nobody.");
  doc.table(std::move(t));
}

// ---------------------------------------------------------------- environment

std::string devices_text(const json& ctx) {
  const json* devices = json_at(ctx, {"gpubench", "devices"});
  if (devices == nullptr || !devices->is_array()) return {};
  std::vector<std::string> parts;
  for (const json& d : *devices) {
    std::string s = string_at(d, {"id"}) + ": " + string_at(d, {"name"});
    auto cur = string_at(d, {"current_sm_clock_mhz"}), max = string_at(d, {"max_sm_clock_mhz"});
    if (!max.empty()) s += fmt::format(" (SM clock {}{} MHz)", cur.empty() ? "" : cur + "/", max);
    parts.push_back(std::move(s));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string libraries_text(const json& ctx) {
  const json* libs = json_at(ctx, {"gpubench", "libraries"});
  if (libs == nullptr || !libs->is_object()) return {};
  std::vector<std::string> parts;
  for (const auto& [k, v] : libs->items()) parts.push_back(k + " " + scalar_text(v));
  return fmt::format("{}", fmt::join(parts, ", "));
}

void environment(Document& doc, Model& m) {
  Table t;
  for (const char* c : {"run", "file", "host", "started (UTC)", "gpubench", "driver", "CUDA runtime", "libraries",
                        "devices (SM clock now/max)", "options", "throttled cases"}) {
    t.add_column(c);
  }
  std::map<std::string, std::set<std::string>> differ;  // field -> values seen
  for (std::size_t f = 0; f < m.files.size(); ++f) {
    const json& ctx = m.files[f].context;
    std::size_t throttled = 0;
    for (const auto& e : m.files[f].entries) throttled += entry_throttled(e) ? 1 : 0;
    const std::string options =
        fmt::format("preset {}, min time {} s, cold {}", string_at(ctx, {"gpubench", "options", "preset"}),
                    string_at(ctx, {"gpubench", "options", "min_time_s"}), string_at(ctx, {"gpubench", "options", "cold"}));
    const std::string version = string_at(ctx, {"gpubench", "version"}) + " " + string_at(ctx, {"gpubench", "build_type"});
    t.rows.push_back({fmt::format("#{}", f + 1), m.files[f].path.generic_string(), m.files[f].host(),
                      string_at(ctx, {"gpubench", "started_utc"}), version,
                      string_at(ctx, {"gpubench", "cuda", "driver_version"}),
                      string_at(ctx, {"gpubench", "cuda", "runtime_version"}), libraries_text(ctx), devices_text(ctx),
                      options, fmt::format("{}", throttled)});
    differ["driver"].insert(string_at(ctx, {"gpubench", "cuda", "driver_version"}));
    differ["CUDA runtime"].insert(string_at(ctx, {"gpubench", "cuda", "runtime_version"}));
    differ["libraries"].insert(libraries_text(ctx));
    differ["gpubench version"].insert(version);
    differ["measurement options (cold, min time)"].insert(
        string_at(ctx, {"gpubench", "options", "cold"}) + "/" + string_at(ctx, {"gpubench", "options", "min_time_s"}));
    const std::string build = string_at(ctx, {"gpubench", "build_type"});
    if (!build.empty() && build != "Release" && build != "RelWithDebInfo") {
      m.warnings.push_back(fmt::format("run #{} ({}) was measured with a {} build of gpubench.", f + 1, m.files[f].host(), build));
    }
    if (const json* busy = json_at(ctx, {"gpubench", "busy_devices"}); busy && busy->is_array() && !busy->empty()) {
      m.warnings.push_back(fmt::format("run #{} ({}): other processes were computing on a measured GPU.", f + 1,
                                       m.files[f].host()));
    }
    if (const json* devices = json_at(ctx, {"gpubench", "devices"}); devices && devices->is_array()) {
      for (const json& d : *devices) {
        auto cur = number_at(d, {"current_sm_clock_mhz"}), max = number_at(d, {"max_sm_clock_mhz"});
        if (cur && max && *cur < 0.9 * *max) {
          m.warnings.push_back(fmt::format("run #{} {}: SM clock {} MHz at the start, below 90% of its maximum {} MHz.", f + 1,
                                           string_at(d, {"id"}), *cur, *max));
        }
      }
    }
    if (throttled > 0) {
      m.warnings.push_back(fmt::format("run #{} ({}): {} case(s) ran throttled.", f + 1, m.files[f].host(), throttled));
    }
  }
  if (m.files.size() > 1) {
    for (const auto& [field, values] : differ) {
      if (values.size() > 1) {
        m.warnings.push_back(fmt::format("the runs differ in {} ({}): differences between them may come from that, not "
                                         "from the hardware.",
                                         field, fmt::join(values, " vs ")));
      }
    }
  }
  doc.heading("Environment");
  doc.table(std::move(t));
}

void problems(Document& doc, const Model& m) {
  Table t;
  for (const char* c : {"run", "suite", "name", "device", "status", "reason"}) t.add_column(c);
  for (std::size_t f = 0; f < m.files.size(); ++f) {
    for (const auto& e : m.files[f].entries) {
      if (!is_iteration(e) || e.status == "ok") continue;
      t.rows.push_back({fmt::format("#{}", f + 1), e.suite, e.name, e.device, e.status, e.reason});
    }
  }
  if (t.rows.empty()) return;
  doc.heading("Skipped and failed");
  doc.table(std::move(t));
}

// ---------------------------------------------------------------- CSV and JSON

std::string build_csv(const Model& m) {
  // One row per case and device: every axis and every scalar metric as a column.
  std::vector<std::string> axes, metrics;
  auto add = [](std::vector<std::string>& v, const std::string& k) {
    if (std::find(v.begin(), v.end(), k) == v.end()) v.push_back(k);
  };
  for (const auto& jc : m.j.cases) {
    for (const auto& k : jc.first->axis_names) add(axes, k);
    for (const auto& [k, v] : jc.first->axes.items()) add(axes, k);
    for (const auto& [k, v] : jc.first->metrics.items()) {
      if (v.is_primitive()) add(metrics, k);
    }
  }
  std::string out;
  std::vector<std::string> header{"run", "file", "host", "device", "device_name", "suite"};
  for (const auto& a : axes) header.push_back("axis." + a);
  for (const char* h : {"value", "metric", "unit", "ratio_to_baseline", "pct_of_peak", "pct_of_ceiling", "power_w",
                        "per_watt", "per_usd_hour", "repetitions", "noisy", "throttled", "suspect", "pct_of_published",
                        "published_value", "published_source"}) {
    header.push_back(h);
  }
  for (const auto& k : metrics) header.push_back("metric." + k);
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) out += ',';
      out += csv_field(cells[i]);
    }
    out += "\r\n";
  };
  line(header);
  auto num = [](std::optional<double> v) { return v ? fmt::format("{}", *v) : std::string(); };
  for (std::size_t i = 0; i < m.j.cases.size(); ++i) {
    for (std::size_t c = 0; c < m.j.columns.size(); ++c) {
      const auto& entries = m.j.cases[i].by_column[c];
      if (entries.empty()) continue;
      const ResultEntry& e = *entries.front();
      const Cell& x = m.cells[i][c];
      const RunColumn& col = m.j.columns[c];
      std::vector<std::string> row{fmt::format("{}", c + 1), m.files[col.file].path.generic_string(), col.host,
                                   col.device, col.device_name, e.suite};
      for (const auto& a : axes) row.push_back(axis_text(e, a));
      row.push_back(x.perf ? num(x.perf->value) : "");
      row.push_back(x.perf ? x.perf->metric : "");
      row.push_back(x.perf ? x.perf->unit : "");
      for (auto v : {x.ratio, x.pct_peak, x.pct_ceiling, x.power_w, x.per_w, x.per_dollar}) row.push_back(num(v));
      row.push_back(fmt::format("{}", entries.size()));
      row.push_back(x.noisy ? "true" : "false");
      row.push_back(x.throttled ? "true" : "false");
      row.push_back(joined(x.suspect));
      row.push_back(x.published ? num(x.published->pct) : "");
      row.push_back(x.published ? num(x.published->row->value) : "");
      row.push_back(x.published ? x.published->row->id : "");
      for (const auto& k : metrics) {
        auto it = e.metrics.find(k);
        row.push_back(it == e.metrics.end() ? std::string() : scalar_text(*it));
      }
      line(row);
    }
  }
  return out;
}

ordered build_summary(const Model& m) {
  auto opt_num = [](std::optional<double> v) { return v ? ordered(*v) : ordered(nullptr); };
  ordered s;
  s["format"] = "gpubench-report-summary";
  s["format_version"] = 1;
  s["baseline"] = m.j.columns.empty() ? ordered(nullptr) : ordered(m.baseline + 1);
  ordered runs = ordered::array();
  std::vector<std::size_t> all(m.j.cases.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  for (std::size_t c = 0; c < m.j.columns.size(); ++c) {
    const RunColumn& col = m.j.columns[c];
    ordered r;
    r["run"] = c + 1;
    r["label"] = col.label;
    r["file"] = m.files[col.file].path.generic_string();
    r["host"] = col.host;
    r["device"] = col.device;
    r["device_name"] = col.device_name;
    r["usd_per_hour"] = opt_num(m.price[c]);
    ordered suites = ordered::object();
    std::vector<double> means;
    for (const auto& su : m.j.suites) {
      auto [g, n] = m.geomean_ratio(m.suite_cases(su), c, [](const Cell& x) {
        return x.perf ? std::optional<double>(x.perf->value) : std::nullopt;
      });
      const SuiteCounts counts = suite_counts(m, c, su);
      suites[su] = {{"geomean_ratio", opt_num(g)}, {"cases", n},
                    {"counts", {{"ok", counts.ok}, {"noisy", counts.noisy}, {"suspect", counts.suspect},
                                {"failed", counts.failed}, {"skipped", counts.skipped}}},
                    {"verdict", suite_verdict(counts)}};
      if (g) means.push_back(*g);
    }
    r["suites"] = std::move(suites);
    r["overall_ratio"] = opt_num(geomean(means));
    r["perf_per_watt_ratio"] = opt_num(m.geomean_ratio(all, c, [](const Cell& x) { return x.per_w; }).first);
    r["perf_per_usd_ratio"] = opt_num(m.geomean_ratio(all, c, [](const Cell& x) { return x.per_dollar; }).first);
    ordered suspect_ceilings = ordered::object();
    if (auto d = m.suspects[col.file].ceilings.find(col.device); d != m.suspects[col.file].ceilings.end()) {
      for (const auto& [key, reasons] : d->second) suspect_ceilings[key] = reasons;
    }
    r["suspect_ceilings"] = std::move(suspect_ceilings);
    runs.push_back(std::move(r));
  }
  s["runs"] = std::move(runs);
  s["warnings"] = m.warnings;
  ordered cases = ordered::array();
  for (std::size_t i = 0; i < m.j.cases.size(); ++i) {
    ordered c;
    c["suite"] = m.j.cases[i].suite;
    c["axes"] = m.j.cases[i].first->axes;
    ordered values = ordered::array();
    for (std::size_t k = 0; k < m.j.columns.size(); ++k) {
      const Cell& x = m.cells[i][k];
      if (!x.perf) {
        values.push_back(nullptr);
        continue;
      }
      values.push_back({{"value", x.perf->value}, {"metric", x.perf->metric}, {"unit", x.perf->unit},
                        {"ratio", opt_num(x.ratio)}, {"pct_of_peak", opt_num(x.pct_peak)},
                        {"pct_of_ceiling", opt_num(x.pct_ceiling)}, {"per_watt", opt_num(x.per_w)},
                        {"per_usd_hour", opt_num(x.per_dollar)}, {"suspect", x.suspect}});
      if (x.published) {
        ordered& v = values.back();
        v["pct_of_published"] = x.published->pct;
        v["published"] = {{"id", x.published->row->id},     {"value", x.published->row->value},
                          {"unit", x.published->row->unit}, {"source", x.published->row->source_url},
                          {"stack", x.published->row->stack}, {"configuration", x.published->row->configuration}};
        if (!x.published->differs.empty()) v["published"]["differs"] = x.published->differs;
      }
    }
    c["runs"] = std::move(values);
    cases.push_back(std::move(c));
  }
  s["cases"] = std::move(cases);
  return s;
}

}  // namespace

Report build_report(const std::vector<ResultsFile>& files, const SpecSheet& specs, const ReportOptions& options) {
  Model m(files, specs, options);
  Report r;
  r.doc.title = "gpubench report";
  Document body;
  if (files.empty() || m.j.columns.empty()) {
    r.doc.paragraph("No results in the given files.");
    r.csv = build_csv(m);
    r.summary = build_summary(m);
    return r;
  }
  tuning_section(body, files);  // reports/tuning.cpp: files written by `gpubench tune train|dataload`
  mamf_section(body, files);
  // One results file: what the run says about its devices first. The ratio scorecard needs two
  // columns (runs, or devices of one run); one column's ratios would all be 1.00x, itself.
  if (files.size() == 1 || m.j.columns.size() == 1) run_lead(body, m);
  if (m.j.columns.size() > 1) scorecard(body, m);
  for (const auto& s : m.j.suites) suite_section(body, m, s);
  attention_section(body, files);
  infer_section(body, files);
  collectives_latency_section(body, files);
  storage_section(body, files);
  gpu_decode_section(body, files);
  video_section(body, files);
  low_precision_section(body, files);
  train_section(body, m);
  scaling_section(body, files);
  roofline_section(body, m);
  nlohmann::ordered_json fleet_summary = nlohmann::ordered_json::object();
  fleet_section(body, files, options.fleet, &fleet_summary);
  soak_section(body, files);
  power_sweep_section(body, files);
  bool findings = false;
  knob_findings(body, m, findings);
  tuned_finding(body, m, findings);
  stall_finding(body, m, findings);
  scaling_finding(body, files, findings);
  attention_finding(body, files, findings);
  suspect_finding(body, m, findings);
  flagged_finding(body, m, findings);
  published_finding(body, m, findings);
  environment(body, m);
  problems(body, m);

  // The node card of `gpubench evaluate` files leads (reports/node_card.hpp); then notes and
  // warnings (the environment section found the warnings), then the sections.
  nlohmann::ordered_json card_summary = nlohmann::ordered_json::object();
  node_card_section(r.doc, files, specs, options, &card_summary);
  notes(r.doc, m);
  for (const auto& w : m.warnings) r.doc.warning(w);
  for (auto& b : body.blocks) r.doc.blocks.push_back(std::move(b));
  r.csv = build_csv(m);
  r.summary = build_summary(m);
  for (auto& [key, value] : fleet_summary.items()) r.summary[key] = value;
  for (auto& [key, value] : card_summary.items()) r.summary[key] = value;
  return r;
}

std::string render_report_markdown(const std::vector<ResultsFile>& files, const SpecSheet& specs) {
  return to_markdown(build_report(files, specs, {}).doc);
}

}  // namespace gpubench::reports
