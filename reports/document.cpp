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
void Document::chart(ScatterChart c) { add(Block::Kind::scatter).scatter = std::move(c); }
void Document::code(std::string text) { add(Block::Kind::code).text = std::move(text); }

void Document::assumptions_and_notes(const std::vector<std::string>& assumptions, const std::vector<std::string>& notes) {
  heading("Assumptions", 3);
  list(assumptions);
  if (notes.empty()) return;
  heading("Notes", 3);
  list(notes);
}

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

std::string unit_suffix(const std::string& unit) { return unit.empty() ? std::string() : " (" + unit + ")"; }

void md_line_table(std::string& out, const LineChart& c) {
  out += "**" + md_escape(c.title) + "**\n\n";
  Table t;
  t.add_column("x");
  t.add_column((c.values_label.empty() ? std::string("value") : c.values_label) + unit_suffix(c.unit), true);
  for (const auto& s : c.series) t.add_column(s.label + unit_suffix(s.secondary ? c.secondary_unit : c.unit), true);
  auto cell = [](const std::vector<double>& v, std::size_t i) {
    return i < v.size() && std::isfinite(v[i]) ? sig3(v[i]) : std::string();
  };
  for (std::size_t i = 0; i < c.x_labels.size(); ++i) {
    std::vector<std::string> row = {c.x_labels[i], cell(c.values, i)};
    for (const auto& s : c.series) row.push_back(cell(s.values, i));
    t.rows.push_back(std::move(row));
  }
  md_table(out, t);
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
      case Block::Kind::code: {
        // A fence longer than any run of backticks in the text, so the text cannot end it.
        std::size_t run = 0, longest = 0;
        for (char ch : b.text) {
          run = ch == '`' ? run + 1 : 0;
          longest = std::max(longest, run);
        }
        const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
        out += fence + "\n" + b.text + (b.text.empty() || b.text.back() != '\n' ? "\n" : "") + fence + "\n\n";
        break;
      }
      case Block::Kind::line:
        if (!b.line.series.empty()) {  // several series: their numbers, as the chart would show them
          md_line_table(out, b.line);
          break;
        }
        [[fallthrough]];
      case Block::Kind::bars:
      case Block::Kind::scatter:
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
std::string svg_time_lines(const LineChart& c) {
  std::vector<LineChart::TimeSeries> all;
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
  if (!c.more.empty() || !c.x.empty()) return svg_time_lines(c);
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

std::string svg_scatter(const ScatterChart& c) {
  const double width = 460, height = 300, left = 64, right = 16, top = 40, bottom = 40;
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const auto& p : c.points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    xmin = std::min(xmin, p.x), xmax = std::max(xmax, p.x), ymin = std::min(ymin, p.y), ymax = std::max(ymax, p.y);
  }
  if (!std::isfinite(xmin)) xmin = 0, xmax = 1, ymin = 0, ymax = 1;
  // From zero when all values are positive: a frontier reads best against the origin.
  xmin = std::min(xmin, 0.0), ymin = std::min(ymin, 0.0);
  if (xmax - xmin <= 0) xmax = xmin + 1;
  if (ymax - ymin <= 0) ymax = ymin + 1;
  xmax += (xmax - xmin) * 0.05, ymax += (ymax - ymin) * 0.08;
  const double pw = width - left - right, ph = height - top - bottom;
  auto xof = [&](double x) { return left + pw * (x - xmin) / (xmax - xmin); };
  auto yof = [&](double y) { return top + ph * (ymax - y) / (ymax - ymin); };
  std::string out = fmt::format(
      "<svg class=\"chart scatter\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\">",
      width, height);
  out += svg_text(4, 16, shorten(c.title, 70), "start", " class=\"title\"");
  for (std::size_t k = 0; k < c.legend.size() && k < 2; ++k) {
    const double x = left + 150 * static_cast<double>(k);
    out += fmt::format("<circle cx=\"{:.1f}\" cy=\"29\" r=\"4.5\" class=\"pt{}\"/>", x, k + 1);
    out += svg_text(x + 8, 33, shorten(c.legend[k], 22));
  }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>", left, top, pw, ph);
  out += svg_text(left - 4, top + 8, sig3(ymax), "end");
  out += svg_text(left - 4, top + ph, sig3(ymin), "end");
  out += svg_text(left, top + ph + 14, sig3(xmin), "middle");
  out += svg_text(left + pw, top + ph + 14, sig3(xmax), "end");
  out += svg_text(left + pw / 2, height - 6, shorten(c.x_title, 60), "middle");
  out += fmt::format("<text x=\"14\" y=\"{0:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0:.1f})\">{1}</text>",
                     top + ph / 2, html_escape(shorten(c.y_title, 40)));
  std::string line;
  for (std::size_t i : c.frontier) {
    if (i >= c.points.size() || !std::isfinite(c.points[i].x) || !std::isfinite(c.points[i].y)) continue;
    line += fmt::format("{:.1f},{:.1f} ", xof(c.points[i].x), yof(c.points[i].y));
  }
  if (!line.empty()) out += "<polyline class=\"series\" points=\"" + line + "\"/>";
  // Emphasised points last, so they are drawn on top.
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& p : c.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y) || (p.emphasis != 0) != (pass == 1)) continue;
      const int e = std::clamp(p.emphasis, 0, 2);
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" class=\"{}\"><title>{}: {}, {}</title></circle>",
                         xof(p.x), yof(p.y), e == 0 ? "3" : "5", e == 0 ? "pt" : e == 1 ? "pt1" : "pt2",
                         html_escape(p.label), html_escape(sig3(p.x)), html_escape(sig3(p.y)));
    }
  }
  return out + "</svg>";
}

// Several series over the same x labels, a legend, and a second y axis for the `secondary` ones.
std::string svg_multi_line(const LineChart& c) {
  const double width = 560, height = 240, left = 56, right = 56, top = 24, bottom = 44;
  struct Axis {
    double lo = INFINITY, hi = -INFINITY;
  };
  Axis axes[2];
  auto widen = [](Axis& a, const std::vector<double>& v) {
    for (double x : v) {
      if (std::isfinite(x)) a.lo = std::min(a.lo, x), a.hi = std::max(a.hi, x);
    }
  };
  // Log scale: the primary values as log10 (non-positive ones are left out).
  auto primary = [&](const std::vector<double>& v) {
    if (!c.log_y) return v;
    std::vector<double> out;
    for (double x : v) out.push_back(x > 0 ? std::log10(x) : NAN);
    return out;
  };
  widen(axes[0], primary(c.values));
  for (const auto& s : c.series) widen(axes[s.secondary ? 1 : 0], s.secondary ? s.values : primary(s.values));
  if (c.log_y && std::isfinite(axes[0].lo)) {
    axes[0].lo = std::floor(axes[0].lo), axes[0].hi = std::max(std::ceil(axes[0].hi), axes[0].lo + 1);
  }
  for (int ai = 0; ai < 2; ++ai) {
    Axis& a = axes[ai];
    if (ai == 0 && c.log_y && std::isfinite(a.lo)) continue;  // decades, from the data
    if (!std::isfinite(a.lo)) a.lo = 0, a.hi = 1;
    a.lo = std::min(a.lo, 0.0);  // rates and efficiencies read from zero
    if (a.hi - a.lo < 1e-12 * std::max(1.0, std::fabs(a.hi))) a.hi = a.lo + 1;
    a.hi += (a.hi - a.lo) * 0.08;
  }
  const std::size_t n = c.x_labels.size();
  const double pw = width - left - right, ph = height - top - bottom;
  auto xof = [&](std::size_t i) {
    return n <= 1 ? left + pw / 2 : left + pw * static_cast<double>(i) / static_cast<double>(n - 1);
  };
  auto yof = [&](const Axis& a, double v) { return top + ph * (a.hi - v) / (a.hi - a.lo); };
  std::string out = fmt::format(
      "<svg class=\"chart line multi\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\">",
      width, height);
  out += svg_text(4, 14, shorten(c.title, 80), "start", " class=\"title\"");
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>", left, top, pw, ph);
  auto axis_label = [&](double v) { return c.log_y ? sig3(std::pow(10.0, v)) : sig3(v); };
  out += svg_text(left - 3, top + 8, axis_label(axes[0].hi), "end") + svg_text(left - 3, top + ph, axis_label(axes[0].lo), "end");
  if (c.log_y) {
    for (double e = axes[0].lo + 1; e < axes[0].hi; e += 1) {
      out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"grid\"/>", left, left + pw,
                         yof(axes[0], e), yof(axes[0], e));
      out += svg_text(left - 3, yof(axes[0], e) + 4, sig3(std::pow(10.0, e)), "end");
    }
  }
  out += svg_text(4, top + ph + 28, shorten(c.unit, 30));
  const bool second = std::any_of(c.series.begin(), c.series.end(), [](const auto& s) { return s.secondary; });
  if (second) {
    out += svg_text(left + pw + 3, top + 8, sig3(axes[1].hi)) + svg_text(left + pw + 3, top + ph, sig3(axes[1].lo));
    out += svg_text(width - 4, top + ph + 28, shorten(c.secondary_unit, 30), "end");
  }
  for (std::size_t i = 0; i < n; ++i) {
    out += svg_text(xof(i), top + ph + 13, shorten(c.x_labels[i], 8), "middle");
  }
  // The series: values first, then the others; each its own colour class.
  std::vector<LineChart::Series> all;
  all.push_back({c.values_label.empty() ? std::string("value") : c.values_label, primary(c.values), false, false});
  for (const auto& s : c.series) {
    all.push_back(s);
    if (!s.secondary) all.back().values = primary(s.values);
  }
  for (std::size_t k = 0; k < all.size(); ++k) {
    const auto& s = all[k];
    const Axis& a = axes[s.secondary ? 1 : 0];
    const std::string cls = fmt::format("s{}", k % 4);
    if (!s.points_only) {
      std::string points;
      for (std::size_t i = 0; i < n && i < s.values.size(); ++i) {
        if (std::isfinite(s.values[i])) points += fmt::format("{:.1f},{:.1f} ", xof(i), yof(a, s.values[i]));
      }
      out += "<polyline class=\"series " + cls + (s.secondary ? " dash" : "") + "\" points=\"" + points + "\"/>";
    }
    for (std::size_t i = 0; i < n && i < s.values.size(); ++i) {
      if (!std::isfinite(s.values[i])) continue;
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" class=\"dot {}\"><title>{}</title></circle>", xof(i),
                         yof(a, s.values[i]), s.points_only ? 4 : 2.5, cls,
                         html_escape(fmt::format("{} at {}: {}", s.label, c.x_labels[i],
                                                 sig3(c.log_y && !s.secondary ? std::pow(10.0, s.values[i]) : s.values[i]))));
    }
    const double lx = left + 8 + static_cast<double>(k) * (pw / static_cast<double>(all.size()));
    out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" class=\"dot {}\"/>", lx, height - 8.0, cls);
    out += svg_text(lx + 7, height - 4, shorten(s.label + (s.secondary ? " (right)" : ""), 34));
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
svg .series{fill:none;stroke:#4c78a8;stroke-width:1.5}svg .pt{fill:#f58518}svg .mark{stroke:#d62728;stroke-width:1.5;stroke-dasharray:3 2}
svg .s0{stroke:#4c78a8;fill:#4c78a8}svg .s1{stroke:#f58518;fill:#f58518}svg .s2{stroke:#54a24b;fill:#54a24b}
svg .s3{stroke:#b279a2;fill:#b279a2}svg polyline.s0,svg polyline.s1,svg polyline.s2,svg polyline.s3{fill:none}
svg .dash{stroke-dasharray:5 3}
svg .series{fill:none;stroke:#4c78a8;stroke-width:1.5}svg .s1 .series{stroke:#f58518}svg .s2 .series{stroke:#54a24b}svg .s3 .series{stroke:#e45756}svg .s4 .series{stroke:#72b7b2}svg .s5 .series{stroke:#b279a2}svg .multi .pt{fill:#555;opacity:.4}svg .pt{fill:#f58518}svg .mark{stroke:#d62728;stroke-width:1.5;stroke-dasharray:3 2}
svg .axis{stroke:#999}svg .frame{fill:none;stroke:#999}svg .grid{stroke:#eee}
svg .roof{stroke:#2ca02c;stroke-width:2}svg .roof.spec{stroke:#999;stroke-dasharray:5 4}
svg .pt1{fill:#2ca02c;stroke:#1b1f24}svg .pt2{fill:#9467bd;stroke:#1b1f24}
pre{background:#f6f8fa;border:1px solid #d0d7de;padding:8px 10px;overflow-x:auto;font-size:13px}
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
  return b.kind == Block::Kind::bars || b.kind == Block::Kind::line || b.kind == Block::Kind::roofline ||
         b.kind == Block::Kind::scatter;
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
      case Block::Kind::line: out += (b.line.series.empty() ? svg_line(b.line) : svg_multi_line(b.line)) + "\n"; break;
      case Block::Kind::roofline: out += svg_roofline(b.roofline) + "\n"; break;
      case Block::Kind::scatter: out += svg_scatter(b.scatter) + "\n"; break;
      case Block::Kind::code: out += "<pre><code>" + html_escape(b.text) + "</code></pre>\n"; break;
    }
  }
  if (in_charts) out += "</div>\n";
  return out + "</body></html>\n";
}

}  // namespace gpubench::reports
