// The report's attention section and finding (reports/attention_section.hpp).
#include "reports/attention_section.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "reports/cases.hpp"

namespace gpubench::reports {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Point {
  std::string device;  // device_label
  double x = 0;        // seq_q (prefill) or seq_kv (decode)
  double rate = 0;     // TFLOP/s or GB/s
  std::optional<double> pct_peak, pct_ceiling;
  std::vector<std::string> row;  // the table's leading cells (axes)
};

// Groups of points drawn on one chart (key: the axes held fixed), in the order first seen.
struct Groups {
  std::vector<std::string> order;
  std::map<std::string, std::vector<Point>> points;
  void add(const std::string& key, Point p) {
    if (!points.count(key)) order.push_back(key);
    points[key].push_back(std::move(p));
  }
};

LineChart chart(const std::string& title, const std::string& unit, const std::vector<Point>& points) {
  std::set<double> xs;
  std::vector<std::string> devices;
  for (const Point& p : points) {
    xs.insert(p.x);
    if (std::find(devices.begin(), devices.end(), p.device) == devices.end()) devices.push_back(p.device);
  }
  LineChart c;
  c.title = title;
  c.unit = unit;
  for (double x : xs) c.x_labels.push_back(fmt::format("{:g}", x));
  auto series = [&](const std::string& device) {
    std::vector<double> v(xs.size(), kNaN);
    for (const Point& p : points) {
      if (p.device != device) continue;
      v[static_cast<std::size_t>(std::distance(xs.begin(), xs.find(p.x)))] = p.rate;
    }
    return v;
  };
  c.values = series(devices.front());
  c.values_label = devices.front();
  for (std::size_t i = 1; i < devices.size(); ++i) c.series.push_back({devices[i], series(devices[i]), false, false});
  return c;
}

std::string pct(std::optional<double> v) { return v ? decimal(*v, 1) + "%" : std::string(); }

}  // namespace

void attention_section(Document& doc, const std::vector<ResultsFile>& files) {
  Groups prefill, decode;
  for (const ResultsFile& f : files) {
    for (const ResultEntry& e : f.entries) {
      if (e.suite != "attention" || e.run_type != "iteration" || e.status != "ok") continue;
      const bool is_decode = axis_text(e, "phase") == "decode";
      Point p;
      p.device = device_label(f, e, files.size() > 1);
      p.pct_peak = number_at(e.metrics, {"pct_of_peak"});
      const std::string heads = fmt::format("{}/{}", axis_text(e, "heads"), axis_text(e, "kv_heads"));
      if (is_decode) {
        const auto gbps = number_at(e.metrics, {"gb_per_s"});
        if (!gbps) continue;
        p.rate = *gbps;
        p.x = number_at(e.axes, {"seq_kv"}).value_or(0);
        // The same file's memory suite: its DRAM ceiling on this device.
        if (auto ceiling = number_at(f.summaries, {"memory", "devices", e.device.c_str(), "memory_bandwidth", "gbps"});
            ceiling && *ceiling > 0) {
          p.pct_ceiling = 100 * p.rate / *ceiling;
        }
        p.row = {p.device, axis_text(e, "provider"), axis_text(e, "dtype"), axis_text(e, "batch"), heads, axis_text(e, "head_dim"),
                 axis_text(e, "page_size"), fmt::format("{:g}", p.x)};
        decode.add(fmt::format("{} {}, batch {}, heads {}, d {}, page {}", axis_text(e, "provider"), axis_text(e, "dtype"),
                               axis_text(e, "batch"), heads, axis_text(e, "head_dim"), axis_text(e, "page_size")),
                   std::move(p));
      } else {
        const auto tflops = number_at(e.metrics, {"tflops"});
        if (!tflops) continue;
        p.rate = *tflops;
        p.x = number_at(e.axes, {"seq_q"}).value_or(0);
        const std::string causal = axis_text(e, "causal") == "1" ? "causal" : "non-causal";
        p.row = {p.device, axis_text(e, "provider"), axis_text(e, "dtype"), axis_text(e, "direction"), axis_text(e, "head_dim"), causal,
                 heads, axis_text(e, "batch"), fmt::format("{:g}", p.x)};
        prefill.add(fmt::format("{} {} {}, d {}, {}, heads {}", axis_text(e, "provider"), axis_text(e, "dtype"),
                                axis_text(e, "direction"), axis_text(e, "head_dim"), causal, heads),
                    std::move(p));
      }
    }
  }
  if (prefill.order.empty() && decode.order.empty()) return;
  doc.heading("Attention");
  doc.paragraph("Prefill in TFLOP/s as FlashAttention's benchmark counts them (4·d·b·h forward per (query, key) pair "
                "the mask admits: s_q·s_kv, or the causal pairs exactly; backward 2.5x), against the sequence length; decode in GB/s of KV cache (and Q, O, page table) "
                "read per step, against the cached context, beside the datasheet bandwidth and the same file's "
                "measured memory ceiling (docs/suite-attention.md).");
  // One sub-section: a table (a row per point, in x order within each group) and a chart per
  // group with two or more points; `ceiling` adds the % of the measured memory ceiling.
  auto part = [&](const char* title, Groups& groups, std::vector<const char*> axes, const char* unit, bool ceiling,
                  const std::string& chart_title) {
    if (groups.order.empty()) return;
    doc.heading(title, 3);
    Table t;
    for (const char* c : axes) t.add_column(c);
    t.add_column(unit, true);
    t.add_column(ceiling ? "% datasheet" : "% peak", true);
    if (ceiling) t.add_column("% measured ceiling", true);
    for (const std::string& key : groups.order) {
      std::vector<Point>& points = groups.points[key];
      std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
      for (const Point& p : points) {
        auto row = p.row;
        row.push_back(sig3(p.rate));
        row.push_back(pct(p.pct_peak));
        if (ceiling) row.push_back(pct(p.pct_ceiling));
        t.rows.push_back(std::move(row));
      }
    }
    doc.table(std::move(t));
    for (const std::string& key : groups.order) {
      if (groups.points[key].size() >= 2) doc.chart(chart(chart_title + key, unit, groups.points[key]));
    }
  };
  part("Prefill", prefill, {"device", "provider", "dtype", "direction", "d", "mask", "heads/kv", "batch", "seq"},
       "TFLOP/s", false, "TFLOP/s vs sequence length: ");
  part("Decode", decode, {"device", "provider", "dtype", "batch", "heads/kv", "d", "page", "context"}, "GB/s", true,
       "GB/s vs cached context: ");
}

void attention_finding(Document& doc, const std::vector<ResultsFile>& files, bool& heading) {
  // key: file, device and every axis but attention -> attention value -> entry
  std::map<std::string, std::map<std::string, const ResultEntry*>> pairs;
  std::map<std::string, std::string> labels;
  for (const ResultsFile& f : files) {
    for (const ResultEntry& e : f.entries) {
      if (e.suite != "train" || e.run_type != "iteration" || e.status != "ok" || !e.axes.contains("attention")) continue;
      const std::string attention = axis_text(e, "attention");
      if (attention != "fused" && attention != "unfused") continue;
      const std::string rest = axes_label(e, "attention");
      const std::string key = f.path.string() + "|" + e.device + "|" + rest;
      pairs[key][attention] = &e;
      labels[key] = fmt::format("{} on {}", rest, device_label(f, e, files.size() > 1));
    }
  }
  std::vector<std::string> items;
  for (const auto& [key, by] : pairs) {
    if (by.size() != 2) continue;
    const ResultEntry& fused = *by.at("fused");
    const ResultEntry& unfused = *by.at("unfused");
    const auto f = number_at(fused.metrics, {"tokens_per_s"}), u = number_at(unfused.metrics, {"tokens_per_s"});
    if (!f || !u || *u <= 0) continue;
    std::string share;
    const auto fs = number_at(fused.details, {"step_split", "attention_fraction"});
    const auto us = number_at(unfused.details, {"step_split", "attention_fraction"});
    if (fs && us) share = fmt::format("; attention takes {:.0f}% of the step fused, {:.0f}% unfused", 100 * *fs, 100 * *us);
    const double ratio = *f / *u;
    items.push_back(fmt::format("{}: fused attention {} unfused, {:.2f}x ({} against {} tokens/s){}.", labels[key],
                                ratio >= 1 ? "beats" : "is slower than", ratio, sig3(*f), sig3(*u), share));
  }
  if (items.empty()) return;
  if (!heading) doc.heading("Findings"), heading = true;
  doc.heading("Fused attention in the training step", 3);
  doc.paragraph("Train cases that differ only in attention=fused|unfused (fused: the tiled online-softmax kernel, no "
                "[T x T] probabilities kept).");
  doc.list(std::move(items));
}

}  // namespace gpubench::reports
