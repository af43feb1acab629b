#include "reports/tuning_dataload.hpp"

#include "reports/tuning_common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>

namespace gpubench::reports {
namespace {

using nlohmann::json;

using tuning_detail::knob_label;
using tuning_detail::number;
using tuning_detail::text;

std::string pct(const json& obj, const char* key) {
  const auto v = number(obj, key);
  return v ? decimal(*v, 1) : "-";
}

void what_was_tuned(Document& doc, const json& t) {
  const json& f = t.contains("fixed") && t["fixed"].is_object() ? t["fixed"] : json::object();
  std::string consumer = text(f, "consumer");
  if (const auto step = number(f, "step_s")) {
    consumer += fmt::format(" of {} per batch ({} samples/s)", format_duration(*step),
                            sig3(number(f, "consumer_samples_per_s").value_or(0)));
  }
  doc.paragraph(fmt::format(
      "Loader tuned on {} for a consumer {} (batch {}), data stall at most {}% with the dataset {} (io={}), at most {} "
      "workers. Dataset: {}.",
      text(f, "device"), consumer, text(f, "batch"), pct(f, "max_stall_pct"),
      text(f, "io") == "cold" ? "evicted from the page cache" : "in the page cache", text(f, "io"), text(f, "max_workers"),
      text(f, "dataset")));
  doc.paragraph(f.contains("rank_note") ? "Per rank: " + text(f, "rank_note") + "."
                                        : "The recommendation is per rank (per consumer): one loader feeding one GPU.");
  if (f.contains("format_note")) doc.paragraph(text(f, "format_note") + ".");
}

void evidence(Document& doc, const json& t, const std::vector<std::string>& knobs) {
  const json& rec = t.contains("recommended") ? t["recommended"] : json();
  const json& def = t.contains("default") ? t["default"] : json();
  const bool gpu = (rec.is_object() && rec.contains("cores_per_gpu")) || (def.is_object() && def.contains("cores_per_gpu"));
  Table tab;
  tab.add_column("configuration");
  for (const std::string& k : knobs) tab.add_column(k);
  tab.add_column("samples/s", true);
  tab.add_column("data stall %", true);
  tab.add_column("preparation %", true);
  tab.add_column("fetch %", true);
  tab.add_column("noise %", true);
  tab.add_column(gpu ? "cores per GPU" : "loader cores", true);
  tab.add_column("under the target");
  tab.add_column("speed-up", true);
  auto row = [&](const std::string& role, const json& c, std::optional<double> speedup) {
    std::vector<std::string> r = {role};
    for (const std::string& k : knobs) r.push_back(text(c, k.c_str()));
    const auto rate = number(c, "samples_per_s");
    r.push_back(rate ? sig3(*rate) : "not measured");
    r.push_back(pct(c, "data_stall_pct"));
    r.push_back(pct(c, "prep_stall_pct"));
    r.push_back(pct(c, "fetch_stall_pct"));
    r.push_back(pct(c, "noise_pct"));
    r.push_back(text(c, gpu ? "cores_per_gpu" : "loader_cores"));
    r.push_back(text(c, "meets_max_stall"));
    r.push_back(speedup ? decimal(*speedup, 3) + "x" : "-");
    tab.rows.push_back(std::move(r));
  };
  if (rec.is_object()) row("recommended", rec, number(t, "speedup_vs_default"));
  if (def.is_object()) row("default", def, 1.0);
  if (!rec.is_object()) {
    doc.warning("nothing could be recommended: no configuration was measured without failing (see the search log)");
  } else if (!rec.value("search_meets_max_stall", true)) {
    doc.warning(fmt::format("no configuration kept the data stall under {}% with the workers allowed: the lowest stall "
                            "found is recommended",
                            pct(t.value("fixed", json::object()), "max_stall_pct")));
  } else if (!rec.value("meets_max_stall", true)) {
    doc.warning("the final measurement of the recommendation is above the stall target that its search measurement "
                "met: the margin is within this machine's noise");
  }
  doc.table(std::move(tab));
  doc.paragraph(
      "From the final measurements (not the search's samples). Data stall: the consumer's wait for a batch over its "
      "step time. Preparation and fetch: DS-Analyzer's split (Mohan et al., VLDB 2021) from the same configuration run "
      "three ways (io=memory, cached, cold), as shares of the cold step; it also counts a consumer slowed by the "
      "loader's CPU use, which the wait share does not.");
  // As for tune train: the ratio of two means is uncertain by their relative standard errors
  // (noise / sqrt(samples)) combined; a speed-up within twice that of 1 is not shown to be real.
  const auto speedup = number(t, "speedup_vs_default");
  const auto nr = number(rec, "noise_pct"), nd = number(def, "noise_pct");
  const auto sr = number(rec, "samples"), sd = number(def, "samples");
  if (speedup && nr && nd && sr && sd && *sr >= 2 && *sd >= 2) {
    const double se = std::sqrt(std::pow(*nr / 100, 2) / *sr + std::pow(*nd / 100, 2) / *sd);
    std::string line = fmt::format("Speed-up in samples/s {} ± {} (twice the combined standard error of the two mean "
                                   "step times; noise {}% and {}% over {} and {} steps).",
                                   decimal(*speedup, 3), decimal(2 * se * *speedup, 3), decimal(*nr, 1),
                                   decimal(*nd, 1), text(rec, "samples"), text(def, "samples"));
    if (std::abs(*speedup - 1) < 2 * se * *speedup) line += " That includes 1: no difference in speed is shown.";
    doc.paragraph(line);
  } else if (speedup && nr && nd && std::abs(*speedup - 1) * 100 < *nr + *nd) {
    doc.paragraph(fmt::format("The {}x difference in samples/s is within the measurements' noise ({}% and {}%).",
                              decimal(*speedup, 3), decimal(*nr, 1), decimal(*nd, 1)));
  }
  for (const json* c : {&rec, &def}) {
    const std::string loader = text(*c, "pytorch");
    if (!loader.empty() && c == &rec) {
      doc.paragraph("The same loader in PyTorch (prefetch_factor counts batches per worker):");
      doc.code(loader);
    }
  }
}

// Stall against workers: every configuration's most thorough search measurement, the finals
// (at the searched io) emphasised.
void chart(Document& doc, const json& t, const std::vector<std::string>& knobs) {
  if (!t.contains("search") || !t["search"].is_array()) return;
  std::vector<std::string> setting_knobs;
  for (const std::string& k : knobs) {
    if (k != "workers") setting_knobs.push_back(k);
  }
  const std::string io = text(t.value("fixed", json::object()), "io");
  tuning_detail::SearchPoints points;
  for (const json& e : t["search"]) {
    if (text(e, "status") != "ok") continue;
    const auto stall = number(e, "data_stall_pct");
    const std::string w = text(e, "workers");
    if (!stall || w.empty()) continue;
    const double workers = std::atof(w.c_str());
    const std::string label = knob_label(e, setting_knobs) + " workers=" + w;
    ScatterChart::Point p{label + " (" + text(e, "stage") + ")", workers, *stall, 0};
    const bool final = text(e, "stage") == "final";
    if (final) {
      if (text(e, "io") != io) continue;
      p.emphasis = text(e, "role") == "recommended" ? 1 : 2;
    }
    points.add(label, std::move(p), final);
  }
  const auto& searched = points.searched;
  const auto& finals = points.finals;
  if (searched.empty() && finals.empty()) return;
  ScatterChart c;
  c.title = fmt::format("Search: data stall against loader workers (target at most {}%)",
                        pct(t.value("fixed", json::object()), "max_stall_pct"));
  c.x_title = "workers";
  c.y_title = "data stall %";
  c.legend = {"recommended (final)", "default (final)"};
  std::vector<double> xs, ys;
  for (const auto& p : searched) xs.push_back(p.x), ys.push_back(p.y);
  c.points = searched;
  c.frontier = stall_frontier(xs, ys);
  for (const auto& p : finals) c.points.push_back(p);
  doc.chart(std::move(c));
}

void search_log(Document& doc, const json& t, const std::vector<std::string>& knobs) {
  const auto or_dash = [](std::optional<double> v, int decimals) {
    return v ? (decimals < 0 ? sig3(*v) : decimal(*v, decimals)) : std::string("-");
  };
  tuning_detail::search_log_table(
      doc, t, knobs,
      [](const json& e) {
        return text(e, "stage") + (e.contains("role") ? fmt::format(" ({}, io={})", text(e, "role"), text(e, "io")) : "");
      },
      {{"data stall %", true, [](const json& e) { return pct(e, "data_stall_pct"); }},
       {"samples/s", true, [&](const json& e) { return or_dash(number(e, "samples_per_s"), -1); }},
       {"noise %", true, [](const json& e) { return pct(e, "noise_pct"); }},
       {"took (s)", true, [&](const json& e) { return or_dash(number(e, "cost_s"), 1); }}});
}

}  // namespace

std::vector<std::size_t> stall_frontier(const std::vector<double>& workers, const std::vector<double>& stall) {
  std::vector<std::size_t> order(std::min(workers.size(), stall.size()));
  std::iota(order.begin(), order.end(), 0);
  std::erase_if(order, [&](std::size_t i) { return !std::isfinite(workers[i]) || !std::isfinite(stall[i]); });
  // Increasing workers; at equal workers the lowest stall first, so only it can join.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return workers[a] != workers[b] ? workers[a] < workers[b] : stall[a] < stall[b];
  });
  std::vector<std::size_t> out;
  for (std::size_t i : order) {
    if (out.empty() || stall[i] < stall[out.back()]) out.push_back(i);
  }
  return out;
}

void dataload_tuning(Document& doc, const json& t, const std::vector<std::string>& knobs) {
  what_was_tuned(doc, t);
  evidence(doc, t, knobs);
  chart(doc, t, knobs);
  search_log(doc, t, knobs);
}

}  // namespace gpubench::reports
