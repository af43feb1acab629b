// Markdown and self-contained HTML (inline SVG charts) for a Document.
#include "reports/document.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "reports/escape.hpp"

namespace gpubench::reports {

Block& Document::add(Block::Kind kind) {
  blocks.emplace_back();
  blocks.back().kind = kind;
  return blocks.back();
}

void Document::heading(std::string text, int level) {
  Block& b = add(Block::Kind::heading);
  b.level = level;
  b.text = std::move(text);
}
void Document::paragraph(std::string text) { add(Block::Kind::paragraph).text = std::move(text); }
void Document::warning(std::string text) { add(Block::Kind::warning).text = std::move(text); }
void Document::list(std::vector<std::string> items) { add(Block::Kind::list).items = std::move(items); }
void Document::table(Table t) { add(Block::Kind::table).table = std::move(t); }
void Document::chart(BarChart c) { add(Block::Kind::bars).bars = std::move(c); }
void Document::chart(LineChart c) { add(Block::Kind::line).line = std::move(c); }
void Document::chart(Roofline c) { add(Block::Kind::roofline).roofline = std::move(c); }

// ---------------------------------------------------------------- numbers

std::string sig3(double v) {
  if (!std::isfinite(v)) return "-";
  if (v == 0) return "0";
  const double a = std::fabs(v);
  const int magnitude = static_cast<int>(std::floor(std::log10(a)));
  int decimals = std::max(0, 2 - magnitude);
  // Rounding can carry into the next decade (9.996 -> 10.0): drop the extra digit then.
  const double scale = std::pow(10.0, decimals);
  if (decimals > 0 && std::round(a * scale) / scale >= std::pow(10.0, magnitude + 1)) --decimals;
  if (decimals > 12) return fmt::format("{:.3g}", v);  // tiny values: exponent is clearer
  if (magnitude >= kLargestFixedMagnitude) return fmt::format("{:.3g}", v);  // 1.7e308, not 309 digits
  return fmt::format("{:.{}f}", v, decimals);
}

std::string decimal(double v, int decimals, const char* sign) {
  if (!std::isfinite(v)) return "-";
  const bool plus = std::string_view(sign) == "+";
  if (v != 0 && std::floor(std::log10(std::fabs(v))) >= kLargestFixedMagnitude) {
    return plus ? fmt::format("{:+.3g}", v) : fmt::format("{:.3g}", v);
  }
  return plus ? fmt::format("{:+.{}f}", v, decimals) : fmt::format("{:.{}f}", v, decimals);
}

std::string format_duration(double seconds) {
  struct Unit {
    const char* name;
    double scale;
  };
  static constexpr Unit kUnits[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
  if (!std::isfinite(seconds) || seconds <= 0) return "-";
  std::size_t i = 0;
  while (i + 1 < std::size(kUnits) && seconds >= kUnits[i + 1].scale) ++i;
  // 999.7 us would print as "1000 us"; show it as "1.00 ms".
  if (i + 1 < std::size(kUnits) && seconds / kUnits[i].scale >= 999.5) ++i;
  return fmt::format("{} {}", sig3(seconds / kUnits[i].scale), kUnits[i].name);
}

// ---------------------------------------------------------------- Markdown

namespace {

void md_table(std::string& out, const Table& t) {
  if (t.columns.empty()) return;
  auto row = [&](const std::vector<std::string>& cells) {
    out += '|';
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      out += ' ';
      out += md_escape(i < cells.size() ? cells[i] : std::string());
      out += " |";
    }
    out += '\n';
  };
  row(t.columns);
  out += '|';
  for (std::size_t i = 0; i < t.columns.size(); ++i) out += (i < t.right.size() && t.right[i]) ? " ---: |" : " --- |";
  out += '\n';
  for (const auto& r : t.rows) row(r);
  out += '\n';
}

}  // namespace

std::string to_markdown(const Document& doc) {
  std::string out = "# " + md_escape_paragraph(doc.title) + "\n\n";
  bool chart_note = false;
  for (const Block& b : doc.blocks) {
    switch (b.kind) {
      case Block::Kind::heading:
        out += std::string(static_cast<std::size_t>(std::clamp(b.level, 1, 6)), '#') + ' ' + md_escape_paragraph(b.text) + "\n\n";
        break;
      case Block::Kind::paragraph: out += md_escape_paragraph(b.text) + "\n\n"; break;
      case Block::Kind::warning: out += "> **Warning:** " + md_escape(b.text) + "\n\n"; break;
      case Block::Kind::list:
        for (const auto& item : b.items) out += "- " + md_escape_paragraph(item) + "\n";
        out += '\n';
        break;
      case Block::Kind::table: md_table(out, b.table); break;
      case Block::Kind::bars:
      case Block::Kind::line:
        if (!chart_note) out += "_(Charts are in the HTML report.)_\n\n";
        chart_note = true;
        break;
      case Block::Kind::roofline: {
        const Roofline& r = b.roofline;
        out += "**" + md_escape(r.title) + "**";
        if (r.bandwidth_gbps) {
          out += fmt::format(" (memory roof {} GB/s, {})", sig3(*r.bandwidth_gbps),
                             r.bandwidth_measured ? "measured" : "datasheet");
        }
        out += "\n\n";
        Table t;
        t.add_column("case");
        t.add_column("FLOP/byte", true);
        t.add_column("TFLOP/s", true);
        for (const auto& p : r.points) t.rows.push_back({p.label, sig3(p.intensity), sig3(p.tflops)});
        md_table(out, t);
        break;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------- SVG charts

namespace {

std::string svg_text(double x, double y, std::string_view text, const char* anchor = "start",
                     const char* extra = "") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\"{}>{}</text>", x, y, anchor, extra,
                     html_escape(text));
}

std::string shorten(const std::string& s, std::size_t n) {
  if (s.size() <= n) return s;
  return s.substr(0, n - 1) + "\u2026";
}

std::string svg_bars(const BarChart& c) {
  const double label_w = 270, bar_w = 340, row_h = 22, top = 28;
  const double width = label_w + bar_w + 90;
  const double height = top + row_h * static_cast<double>(c.values.size()) + 10;
  double max_v = c.reference.value_or(0);
  for (double v : c.values) {
    if (std::isfinite(v)) max_v = std::max(max_v, v);
  }
  if (max_v <= 0) max_v = 1;
  std::string out = fmt::format(
      "<svg class=\"chart bars\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\">",
      width, height);
  out += svg_text(4, 16, c.title + (c.unit.empty() ? "" : " (" + c.unit + ")"), "start", " class=\"title\"");
  for (std::size_t i = 0; i < c.values.size(); ++i) {
    const double y = top + row_h * static_cast<double>(i);
    const double v = std::isfinite(c.values[i]) ? std::max(0.0, c.values[i]) : 0;
    const double w = bar_w * v / max_v;
    out += "<g>";
    out += "<title>" + html_escape(c.labels[i]) + ": " + html_escape(sig3(c.values[i])) + "</title>";
    out += svg_text(label_w - 6, y + 15, shorten(c.labels[i], 40), "end");
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" class=\"bar\"/>", label_w, y + 3,
                       w, row_h - 6);
    out += svg_text(label_w + w + 4, y + 15, sig3(c.values[i]));
    out += "</g>";
  }
  if (c.reference) {
    const double x = label_w + bar_w * *c.reference / max_v;
    out += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" class=\"ref\"/>", x, top - 2,
                       height - 6);
  }
  return out + "</svg>";
}

// Several series on numeric x (LineChart::more / LineChart::x): wider, with a legend; no
// per-point circles past a few hundred points (a two-hour soak has thousands).
std::string svg_multi_line(const LineChart& c) {
  std::vector<LineChart::Series> all;
  all.push_back({c.name, c.x, c.values});
  for (const auto& s : c.more) all.push_back(s);
  const double width = 560, height = 170, left = 52, right = 120, top = 22, bottom = 20;
  double lo = INFINITY, hi = -INFINITY, x0 = INFINITY, x1 = -INFINITY;
  std::size_t points_total = 0;
  for (auto& s : all) {
    if (s.x.size() != s.values.size()) {  // no usable x: the index
      s.x.clear();
      for (std::size_t i = 0; i < s.values.size(); ++i) s.x.push_back(static_cast<double>(i));
    }
    for (std::size_t i = 0; i < s.values.size(); ++i) {
      if (!std::isfinite(s.values[i]) || !std::isfinite(s.x[i])) continue;
      lo = std::min(lo, s.values[i]), hi = std::max(hi, s.values[i]);
      x0 = std::min(x0, s.x[i]), x1 = std::max(x1, s.x[i]);
      ++points_total;
    }
  }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (!std::isfinite(x0)) x0 = 0, x1 = 1;
  if (x1 - x0 <= 0) x0 -= 0.5, x1 += 0.5;
  if (hi - lo < 1e-12 * std::max(1.0, std::fabs(hi))) lo -= 0.5 * std::fabs(lo) + 0.5, hi += 0.5 * std::fabs(hi) + 0.5;
  const double pad = (hi - lo) * 0.1;
  lo -= pad, hi += pad;
  auto xof = [&](double x) { return left + (width - left - right) * (x - x0) / (x1 - x0); };
  auto yof = [&](double v) { return top + (height - top - bottom) * (hi - v) / (hi - lo); };
  std::string out = fmt::format(
      "<svg class=\"chart line multi\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\">",
      width, height);
  out += svg_text(4, 14, shorten(c.title, 80) + (c.unit.empty() ? "" : " (" + c.unit + ")"), "start", " class=\"title\"");
  out += fmt::format("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" class=\"axis\"/>", left, top, height - bottom);
  out += svg_text(left - 3, top + 8, sig3(hi), "end");
  out += svg_text(left - 3, height - bottom, sig3(lo), "end");
  const std::string xu = c.x_unit.empty() ? "" : " " + c.x_unit;
  out += svg_text(left, height - 5, sig3(x0) + xu);
  out += svg_text(width - right, height - 5, sig3(x1) + xu, "end");
  const bool circles = points_total <= 300;
  for (std::size_t k = 0; k < all.size(); ++k) {
    const auto& s = all[k];
    std::string pts;
    for (std::size_t i = 0; i < s.values.size(); ++i) {
      if (!std::isfinite(s.values[i]) || !std::isfinite(s.x[i])) continue;
      pts += fmt::format("{:.1f},{:.1f} ", xof(s.x[i]), yof(s.values[i]));
    }
    out += fmt::format("<g class=\"s{}\"><title>{}</title>", k % 6, html_escape(s.name));
    out += "<polyline class=\"series\" points=\"" + pts + "\"/>";
    if (circles) {
      for (std::size_t i = 0; i < s.values.size(); ++i) {
        if (!std::isfinite(s.values[i]) || !std::isfinite(s.x[i])) continue;
        out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2\" class=\"pt\"><title>{} {}{}: {}</title></circle>",
                           xof(s.x[i]), yof(s.values[i]), html_escape(s.name), html_escape(sig3(s.x[i])), html_escape(xu),
                           html_escape(sig3(s.values[i])));
      }
    }
    out += "</g>";
    const double ly = top + 14 * static_cast<double>(k) + 8;
    out += fmt::format("<g class=\"s{}\"><line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"series\"/>",
                       k % 6, width - right + 8, width - right + 22, ly - 4, ly - 4);
    out += svg_text(width - right + 26, ly, shorten(s.name, 14)) + "</g>";
  }
  return out + "</svg>";
}

std::string svg_line(const LineChart& c) {
  if (!c.more.empty() || !c.x.empty()) return svg_multi_line(c);
  const double width = 340, height = 130, left = 48, right = 8, top = 22, bottom = 20;
  double lo = INFINITY, hi = -INFINITY;
  for (double v : c.values) {
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (hi - lo < 1e-12 * std::max(1.0, std::fabs(hi))) lo -= 0.5 * std::fabs(lo) + 0.5, hi += 0.5 * std::fabs(hi) + 0.5;
  const double pad = (hi - lo) * 0.1;
  lo -= pad, hi += pad;
  const std::size_t n = c.values.size();
  auto xof = [&](std::size_t i) {
    return n <= 1 ? left + (width - left - right) / 2
                  : left + (width - left - right) * static_cast<double>(i) / static_cast<double>(n - 1);
  };
  auto yof = [&](double v) { return top + (height - top - bottom) * (hi - v) / (hi - lo); };
  std::string out = fmt::format(
      "<svg class=\"chart line\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\">",
      width, height);
  out += svg_text(4, 14, shorten(c.title, 52) + (c.unit.empty() ? "" : " (" + c.unit + ")"), "start", " class=\"title\"");
  out += fmt::format("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" class=\"axis\"/>", left, top, height - bottom);
  out += svg_text(left - 3, top + 8, sig3(hi), "end");
  out += svg_text(left - 3, height - bottom, sig3(lo), "end");
  for (std::size_t m : c.marks) {
    if (m >= n) continue;
    // The shift happens between run m-1 and run m: draw the line halfway.
    const double x = m == 0 ? xof(0) : (xof(m - 1) + xof(m)) / 2;
    out += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" class=\"mark\"/>", x, top,
                       height - bottom);
  }
  std::string points;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(c.values[i])) continue;
    points += fmt::format("{:.1f},{:.1f} ", xof(i), yof(c.values[i]));
  }
  out += "<polyline class=\"series\" points=\"" + points + "\"/>";
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(c.values[i])) continue;
    out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" class=\"pt\"><title>{}: {}</title></circle>", xof(i),
                       yof(c.values[i]), html_escape(i < c.x_labels.size() ? c.x_labels[i] : ""),
                       html_escape(sig3(c.values[i])));
  }
  if (n > 0) {
    out += svg_text(left, height - 5, shorten(c.x_labels.empty() ? "" : c.x_labels.front(), 24));
    if (n > 1) out += svg_text(width - right, height - 5, shorten(c.x_labels.back(), 24), "end");
  }
  return out + "</svg>";
}

std::string svg_roofline(const Roofline& r) {
  const double width = 620, height = 380, left = 64, right = 170, top = 26, bottom = 40;
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const auto& p : r.points) {
    if (p.intensity > 0 && p.tflops > 0) {
      xmin = std::min(xmin, p.intensity), xmax = std::max(xmax, p.intensity);
      ymin = std::min(ymin, p.tflops), ymax = std::max(ymax, p.tflops);
    }
  }
  for (const auto& c : r.ceilings) {
    if (c.tflops > 0) {
      ymax = std::max(ymax, c.tflops), ymin = std::min(ymin, c.tflops);
      if (r.bandwidth_gbps && *r.bandwidth_gbps > 0) {
        const double ridge = c.tflops * 1e3 / *r.bandwidth_gbps;
        xmin = std::min(xmin, ridge), xmax = std::max(xmax, ridge);
      }
    }
  }
  if (!std::isfinite(xmin)) xmin = 0.1, xmax = 100;
  if (!std::isfinite(ymin)) ymin = 0.01, ymax = 100;
  const double lx0 = std::floor(std::log10(xmin)) - 0.0, lx1 = std::ceil(std::log10(xmax) + 1e-9);
  const double ly0 = std::floor(std::log10(ymin)), ly1 = std::ceil(std::log10(ymax) + 1e-9);
  const double lx1f = lx1 > lx0 ? lx1 : lx0 + 1, ly1f = ly1 > ly0 ? ly1 : ly0 + 1;
  const double pw = width - left - right, ph = height - top - bottom;
  auto X = [&](double v) { return left + pw * (std::log10(v) - lx0) / (lx1f - lx0); };
  auto Y = [&](double v) { return top + ph * (ly1f - std::log10(v)) / (ly1f - ly0); };

  std::string out = fmt::format(
      "<svg class=\"chart roofline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\">",
      width, height);
  out += svg_text(4, 16, r.title, "start", " class=\"title\"");
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>", left, top, pw, ph);
  for (double e = lx0; e <= lx1f + 1e-9; e += 1) {
    const double x = X(std::pow(10.0, e));
    out += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" class=\"grid\"/>", x, top, top + ph);
    out += svg_text(x, top + ph + 14, fmt::format("{:g}", std::pow(10.0, e)), "middle");
  }
  for (double e = ly0; e <= ly1f + 1e-9; e += 1) {
    const double y = Y(std::pow(10.0, e));
    out += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" class=\"grid\"/>", left, left + pw, y);
    out += svg_text(left - 4, y + 4, fmt::format("{:g}", std::pow(10.0, e)), "end");
  }
  out += svg_text(left + pw / 2, height - 6, "arithmetic intensity (FLOP/byte)", "middle");
  out += fmt::format("<text x=\"12\" y=\"{:.1f}\" transform=\"rotate(-90 12 {:.1f})\" text-anchor=\"middle\">TFLOP/s</text>",
                     top + ph / 2, top + ph / 2);
  const double x_lo = std::pow(10.0, lx0), x_hi = std::pow(10.0, lx1f);
  auto clampy = [&](double y) { return std::clamp(y, std::pow(10.0, ly0), std::pow(10.0, ly1f)); };
  // Ceiling labels from the highest down, each at least one text line below the previous.
  std::vector<Roofline::Ceiling> ceilings = r.ceilings;
  std::sort(ceilings.begin(), ceilings.end(), [](const auto& a, const auto& b) { return a.tflops > b.tflops; });
  double label_y = -INFINITY;
  for (const auto& c : ceilings) {
    if (c.tflops <= 0) continue;
    double x_start = x_lo;
    if (r.bandwidth_gbps && *r.bandwidth_gbps > 0) {
      const double ridge = c.tflops * 1e3 / *r.bandwidth_gbps;
      x_start = std::max(x_lo, ridge);
      // The slanted memory roof up to this ceiling.
      const double y0 = clampy(*r.bandwidth_gbps * x_lo / 1e3);
      const double x0 = y0 * 1e3 / *r.bandwidth_gbps;
      out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" class=\"roof{}\"/>", X(x0), Y(y0),
                         X(x_start), Y(c.tflops), r.bandwidth_measured ? "" : " spec");
    }
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" class=\"roof{}\"><title>{}</title></line>",
                       X(x_start), Y(c.tflops), X(x_hi), Y(c.tflops), c.measured ? "" : " spec",
                       html_escape(c.label + ": " + sig3(c.tflops) + " TFLOP/s"));
    label_y = std::max(Y(c.tflops) + 4, label_y + 13);
    out += svg_text(left + pw + 6, label_y, shorten(c.label, 26) + " " + sig3(c.tflops));
  }
  if (r.bandwidth_gbps) {
    out += svg_text(left + pw + 6, top + ph - 4,
                    fmt::format("memory {} GB/s{}", sig3(*r.bandwidth_gbps), r.bandwidth_measured ? "" : " (spec)"));
  }
  for (const auto& p : r.points) {
    if (p.intensity <= 0 || p.tflops <= 0) continue;
    out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" class=\"pt\"><title>{}</title></circle>", X(p.intensity),
                       Y(p.tflops),
                       html_escape(fmt::format("{}: {} FLOP/B, {} TFLOP/s", p.label, sig3(p.intensity), sig3(p.tflops))));
  }
  return out + "</svg>";
}

constexpr const char* kStyle = R"(body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1b1f24;max-width:1400px}
h1{font-size:1.6em}h2{border-bottom:1px solid #d0d7de;padding-bottom:4px;margin-top:1.6em}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}
th,td{border:1px solid #d0d7de;padding:3px 7px;vertical-align:top}th{background:#f6f8fa;text-align:left}
td.r{text-align:right;font-variant-numeric:tabular-nums}tr:nth-child(even) td{background:#fbfcfd}
.warn{background:#fff8c5;border:1px solid #d4a72c;padding:6px 10px;margin:8px 0}
.charts{display:flex;flex-wrap:wrap;gap:12px}
svg.chart{font-size:11px;background:#fff;border:1px solid #eaeef2;margin:4px 0}
svg .title{font-weight:600;font-size:12px}svg .bar{fill:#4c78a8}svg .ref{stroke:#b00;stroke-dasharray:4 3}
svg .series{fill:none;stroke:#4c78a8;stroke-width:1.5}svg .s1 .series{stroke:#f58518}svg .s2 .series{stroke:#54a24b}svg .s3 .series{stroke:#e45756}svg .s4 .series{stroke:#72b7b2}svg .s5 .series{stroke:#b279a2}svg .multi .pt{fill:#555;opacity:.4}svg .pt{fill:#f58518}svg .mark{stroke:#d62728;stroke-width:1.5;stroke-dasharray:3 2}
svg .axis{stroke:#999}svg .frame{fill:none;stroke:#999}svg .grid{stroke:#eee}
svg .roof{stroke:#2ca02c;stroke-width:2}svg .roof.spec{stroke:#999;stroke-dasharray:5 4}
)";

void html_table(std::string& out, const Table& t) {
  out += "<table><thead><tr>";
  for (const auto& c : t.columns) out += "<th>" + html_escape(c) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      const bool right = i < t.right.size() && t.right[i];
      out += right ? "<td class=\"r\">" : "<td>";
      out += html_escape(i < row.size() ? row[i] : std::string());
      out += "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
}

bool is_chart(const Block& b) {
  return b.kind == Block::Kind::bars || b.kind == Block::Kind::line || b.kind == Block::Kind::roofline;
}

}  // namespace

std::string to_html(const Document& doc) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "img-src data:\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
      html_escape(doc.title) + "</title>\n<style>" + kStyle + "</style></head><body>\n<h1>" + html_escape(doc.title) +
      "</h1>\n";
  bool in_charts = false;
  for (const Block& b : doc.blocks) {
    // Consecutive charts share one flex row.
    if (is_chart(b) && !in_charts) out += "<div class=\"charts\">\n", in_charts = true;
    if (!is_chart(b) && in_charts) out += "</div>\n", in_charts = false;
    switch (b.kind) {
      case Block::Kind::heading: {
        const int level = std::clamp(b.level, 1, 6);
        out += fmt::format("<h{0}>{1}</h{0}>\n", level, html_escape(b.text));
        break;
      }
      case Block::Kind::paragraph: out += "<p>" + html_escape(b.text) + "</p>\n"; break;
      case Block::Kind::warning: out += "<div class=\"warn\"><b>Warning:</b> " + html_escape(b.text) + "</div>\n"; break;
      case Block::Kind::list:
        out += "<ul>";
        for (const auto& item : b.items) out += "<li>" + html_escape(item) + "</li>";
        out += "</ul>\n";
        break;
      case Block::Kind::table: html_table(out, b.table); break;
      case Block::Kind::bars: out += svg_bars(b.bars) + "\n"; break;
      case Block::Kind::line: out += svg_line(b.line) + "\n"; break;
      case Block::Kind::roofline: out += svg_roofline(b.roofline) + "\n"; break;
    }
  }
  if (in_charts) out += "</div>\n";
  return out + "</body></html>\n";
}

}  // namespace gpubench::reports
