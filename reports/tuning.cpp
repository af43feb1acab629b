#include "reports/tuning.hpp"

#include "reports/tuning_common.hpp"
#include "reports/tuning_dataload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace gpubench::reports {
namespace {

using nlohmann::json;

using tuning_detail::knob_label;
using tuning_detail::number;
using tuning_detail::text_of;

std::string str(const json& obj, const char* key, const std::string& fallback = "") {
  if (!obj.is_object()) return fallback;
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::vector<std::string> knobs_of(const json& t) {
  std::vector<std::string> v;
  if (t.contains("knobs") && t["knobs"].is_array()) {
    for (const json& k : t["knobs"]) {
      if (k.is_string()) v.push_back(k.get<std::string>());
    }
  }
  return v;
}

// "tokens_per_s" -> "tokens/s"
std::string rate_label(const std::string& objective) {
  const std::size_t p = objective.rfind("_per_s");
  return p == std::string::npos ? objective : objective.substr(0, p) + "/s";
}

std::string megabytes(const std::optional<double>& bytes) { return bytes ? sig3(*bytes / 1e6) : "-"; }
std::string opt(const std::optional<double>& v, int decimals = -1) {
  if (!v) return "-";
  return decimals < 0 ? sig3(*v) : decimal(*v, decimals);
}

// The ready-to-copy block: the recorded command line, else the knob values as --axis flags.
std::string config_block(const json& c, const std::vector<std::string>& knobs) {
  const std::string cmd = str(c, "command");
  if (!cmd.empty()) {
    // One --axis per line, as a shell continuation, so it reads as a configuration.
    std::string out;
    std::size_t start = 0;
    while (start < cmd.size()) {
      std::size_t next = cmd.find(" --axis ", start + 1);
      if (next == std::string::npos) next = cmd.size();
      out += cmd.substr(start, next - start);
      if (next < cmd.size()) out += " \\\n  ";
      start = next + (next < cmd.size() ? 1 : 0);
    }
    return out;
  }
  std::string out;
  for (const std::string& k : knobs) {
    if (c.contains(k)) out += fmt::format("--axis {}={}\n", k, text_of(c[k]));
  }
  return out;
}

void suspect_warnings(Document& doc, const json& c, const std::string& role) {
  if (!c.is_object() || !c.contains("suspect") || !c["suspect"].is_array()) return;
  for (const json& r : c["suspect"]) {
    doc.warning(fmt::format("the {} configuration's figure is suspect: {}", role, text_of(r)));
  }
}

void evidence_table(Document& doc, const json& t, const std::vector<std::string>& knobs) {
  const std::string objective = str(t, "objective", "items_per_s");
  const json& rec = t.contains("recommended") ? t["recommended"] : json();
  const json& def = t.contains("default") ? t["default"] : json();
  Table tab;
  tab.add_column("configuration");
  for (const std::string& k : knobs) tab.add_column(k);
  tab.add_column(rate_label(objective), true);
  tab.add_column("noise %", true);
  tab.add_column("step", true);
  tab.add_column("memory (MB)", true);
  tab.add_column("MFU %", true);
  tab.add_column("speed-up", true);
  auto row = [&](const std::string& role, const json& c, std::optional<double> speedup) {
    std::vector<std::string> r = {role};
    for (const std::string& k : knobs) r.push_back(c.is_object() && c.contains(k) ? text_of(c[k]) : "");
    const auto rate = number(c, objective.c_str());
    r.push_back(rate ? sig3(*rate) : str(c, "status", "not measured"));
    r.push_back(opt(number(c, "noise_pct"), 1));
    const auto step = number(c, "step_s");
    r.push_back(step ? format_duration(*step) : "-");
    r.push_back(megabytes(number(c, "memory_bytes")));
    r.push_back(opt(number(c, "mfu_pct"), 1));
    r.push_back(speedup ? decimal(*speedup, 3) + "x" : "-");
    tab.rows.push_back(std::move(r));
  };
  if (rec.is_object()) row("recommended", rec, number(t, "speedup_vs_default"));
  if (def.is_object()) row("default", def, 1.0);
  doc.table(std::move(tab));
  const auto speedup = number(t, "speedup_vs_default");
  const auto nr = number(rec, "noise_pct"), nd = number(def, "noise_pct");
  if (speedup && nr && nd) {
    std::string line = fmt::format(
        "From the final measurements (not the search's best sample): the recommendation runs at {}x the default; "
        "noise (stddev/mean of the samples) {}% and {}%.",
        decimal(*speedup, 3), decimal(*nr, 1), decimal(*nd, 1));
    // The uncertainty of the ratio of two means: their relative standard errors (noise /
    // sqrt(samples)) combined; a speed-up within twice that of 1 is not shown to be real.
    const auto sr = number(rec, "samples"), sd = number(def, "samples");
    if (sr && sd && *sr >= 2 && *sd >= 2) {
      const double se = std::sqrt(std::pow(*nr / 100, 2) / *sr + std::pow(*nd / 100, 2) / *sd);
      line += fmt::format(" Speed-up {} ± {} (twice the combined standard error of the two means, {} and {} samples).",
                          decimal(*speedup, 3), decimal(2 * se * *speedup, 3), text_of(rec["samples"]),
                          text_of(def["samples"]));
      if (std::abs(*speedup - 1) < 2 * se * *speedup) {
        line += " That includes 1: the default is as good as far as this run can tell.";
      }
    } else if (std::abs(*speedup - 1) * 100 < *nr + *nd) {
      line += " The difference is within the measurements' noise: the default is as good as far as this run can tell.";
    }
    doc.paragraph(line);
  } else if (!rec.is_object()) {
    doc.warning("nothing could be recommended: no configuration was measured without failing (see the search log)");
  }
  suspect_warnings(doc, rec, "recommended");
  suspect_warnings(doc, def, "default");
}

// The train frontier: every configuration's most thorough measurement, throughput against memory.
void train_frontier(Document& doc, const json& t, const std::vector<std::string>& knobs) {
  const std::string objective = str(t, "objective", "items_per_s");
  if (!t.contains("search") || !t["search"].is_array()) return;
  ScatterChart c;
  c.title = fmt::format("Search frontier: {} against memory", rate_label(objective));
  c.x_title = "memory (MB)";
  c.y_title = rate_label(objective);
  c.legend = {"recommended (final)", "default (final)"};
  tuning_detail::SearchPoints points;
  for (const json& e : t["search"]) {
    if (str(e, "status") != "ok") continue;
    const auto y = number(e, objective.c_str());
    const auto x = number(e, "memory_bytes");
    if (!x || !y) continue;
    const std::string label = knob_label(e, knobs);
    ScatterChart::Point p{label + " (" + str(e, "stage") + ")", *x / 1e6, *y, 0};
    const bool final = str(e, "stage") == "final";
    if (final) p.emphasis = str(e, "role").rfind("recommended", 0) == 0 ? 1 : 2;
    points.add(label, std::move(p), final);
  }
  const auto& searched = points.searched;
  const auto& finals = points.finals;
  if (searched.empty() && finals.empty()) return;
  std::vector<double> xs, ys;
  for (const auto& p : searched) xs.push_back(p.x), ys.push_back(p.y);
  c.points = searched;
  c.frontier = pareto_frontier(xs, ys);
  for (const auto& p : finals) c.points.push_back(p);
  doc.chart(std::move(c));
}

void search_log(Document& doc, const json& t, const std::vector<std::string>& knobs) {
  const std::string objective = str(t, "objective", "items_per_s");
  tuning_detail::search_log_table(
      doc, t, knobs,
      [](const json& e) { return str(e, "stage") + (e.contains("role") ? " (" + str(e, "role") + ")" : std::string()); },
      {{rate_label(objective), true, [&](const json& e) { return opt(number(e, objective.c_str())); }},
       {"noise %", true, [](const json& e) { return opt(number(e, "noise_pct"), 1); }},
       {"memory (MB)", true, [](const json& e) { return megabytes(number(e, "memory_bytes")); }},
       {"took (s)", true, [](const json& e) { return opt(number(e, "cost_s"), 1); }}});
}

void summary_line(Document& doc, const json& t) {
  const json& f = t.contains("fixed") ? t["fixed"] : json::object();
  const json& n = t.contains("configurations") ? t["configurations"] : json::object();
  std::string what = fmt::format("tune {}", str(t, "target", "?"));
  for (const char* k : {"model", "device", "global_batch", "ranks"}) {
    if (f.is_object() && f.contains(k)) what += fmt::format(", {} {}", k, text_of(f[k]));
  }
  std::string counts;
  for (const char* k : {"candidates", "measured", "failed", "does_not_fit", "skipped"}) {
    if (n.is_object() && n.contains(k)) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", text_of(n[k]), k);
  }
  const auto budget = number(t, "budget_s");
  doc.paragraph(fmt::format("{}: {}. Search {} s of a {} s budget; final confirmation {} s after it ({} s in all); seed {}.",
                            what, counts.empty() ? "no counts" : counts, opt(number(t, "search_s"), 1),
                            budget ? fmt::format("{:g}", *budget) : "-", opt(number(t, "final_s"), 1),
                            opt(number(t, "wall_s"), 1),
                            t.contains("seed") ? text_of(t["seed"]) : "-"));
}

void one_file(Document& doc, const ResultsFile& f, bool several) {
  const json& t = f.tuning;
  const std::vector<std::string> knobs = knobs_of(t);
  if (several) doc.heading("Tuning report: " + f.path.filename().string(), 3);
  summary_line(doc, t);
  if (t.contains("recommended") && t["recommended"].is_object()) {
    doc.paragraph(fmt::format("Recommended configuration: {}", knob_label(t["recommended"], knobs)));
    doc.code(config_block(t["recommended"], knobs));
  }
  const std::string target = str(t, "target");
  if (target == "dataload") return dataload_tuning(doc, t, knobs);  // reports/tuning_dataload.cpp
  evidence_table(doc, t, knobs);
  if (target == "train") train_frontier(doc, t, knobs);
  search_log(doc, t, knobs);
}

}  // namespace

std::vector<std::size_t> pareto_frontier(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<std::size_t> order(std::min(x.size(), y.size()));
  std::iota(order.begin(), order.end(), 0);
  std::erase_if(order, [&](std::size_t i) { return !std::isfinite(x[i]) || !std::isfinite(y[i]); });
  // Increasing x; at equal x the highest y first, so only it can join the frontier.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return x[a] != x[b] ? x[a] < x[b] : y[a] > y[b];
  });
  std::vector<std::size_t> out;
  for (std::size_t i : order) {
    if (out.empty() || y[i] > y[out.back()]) out.push_back(i);
  }
  return out;
}

void tuning_section(Document& doc, const std::vector<ResultsFile>& files) {
  std::vector<const ResultsFile*> tuned;
  for (const ResultsFile& f : files) {
    if (f.tuning.is_object()) tuned.push_back(&f);
  }
  if (tuned.empty()) return;
  doc.heading("Tuning report");
  for (const ResultsFile* f : tuned) one_file(doc, *f, tuned.size() > 1);
}

}  // namespace gpubench::reports
