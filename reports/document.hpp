#pragma once
// A report as a list of blocks (headings, text, tables, charts), built once and rendered as
// Markdown or as one self-contained HTML page. Builders put plain text in the blocks; the
// renderers escape it, so no builder can forget to.
#include <optional>
#include <string>
#include <vector>

namespace gpubench::reports {

struct Table {
  std::vector<std::string> columns;
  std::vector<bool> right;  // per column: numbers read better right-aligned
  std::vector<std::vector<std::string>> rows;
  void add_column(std::string title, bool right_aligned = false) {
    columns.push_back(std::move(title));
    right.push_back(right_aligned);
  }
};

// Horizontal bars: one per label (a scorecard, a suite's geomean per device).
struct BarChart {
  std::string title, unit;
  std::vector<std::string> labels;
  std::vector<double> values;
  std::optional<double> reference;  // a vertical line (1.0 for ratios)
};

// y over run order, one series per chart; `marks` are indices drawn as vertical lines
// (change points). Optionally several series on the same axes (`more`, with a legend naming
// each, `name` the first) and numeric x positions (`x`, e.g. seconds of a soak, one per value;
// series may then differ in length and each has its own `x`), the axis ends labelled with them
// and `x_unit`.
struct LineChart {
  std::string title, unit;
  std::vector<std::string> x_labels;
  std::vector<double> values;
  std::vector<std::size_t> marks;
  // Optional further series over the same x_labels (NaN where one has no point), with a legend;
  // `secondary` ones are read on a second y axis at the right, in `secondary_unit`. With any,
  // the chart is drawn wider with a legend, and Markdown shows its numbers as a table.
  struct Series {
    std::string label;
    std::vector<double> values;
    bool secondary = false;
    bool points_only = false;  // markers without a line (measured points beside a model's curve)
  };
  std::vector<Series> series;
  std::string values_label;    // the legend's name for `values`
  std::string secondary_unit;
  bool log_y = false;          // the primary axis in log scale (rates over 1 to 4096 GPUs); positive values only
  // Or a time series chart (soak): `values` over numeric `x` (in `x_unit`), named `name`, plus
  // `more` such series (each with its own x), one per device, with a legend.
  struct TimeSeries {
    std::string name;
    std::vector<double> x, values;
  };
  std::string name;
  std::vector<TimeSeries> more;
  std::vector<double> x;
  std::string x_unit;
};

// Roofline on log-log axes: points (arithmetic intensity, rate) under the ceilings.
struct Roofline {
  struct Point {
    std::string label;
    double intensity;  // FLOP per byte
    double tflops;
  };
  struct Ceiling {
    std::string label;  // "fp32 (measured)", "bf16_tensor (datasheet)"
    double tflops;
    bool measured;
  };
  std::string title;
  std::optional<double> bandwidth_gbps;  // the slanted roof
  bool bandwidth_measured = false;
  std::vector<Ceiling> ceilings;
  std::vector<Point> points;
};

// Points (x, y) on linear axes: a search frontier (throughput against memory, stall against
// workers). `emphasis` 1 and 2 draw a point larger in a second and a third colour, named by
// `legend` (e.g. "recommended", "default"); `frontier` lists point indices joined by a line.
struct ScatterChart {
  struct Point {
    std::string label;
    double x = 0, y = 0;
    int emphasis = 0;  // 0, 1 or 2
  };
  std::string title, x_title, y_title;
  std::vector<Point> points;
  std::vector<std::size_t> frontier;
  std::vector<std::string> legend;  // names of emphasis 1 and 2
};

struct Block {
  enum class Kind { heading, paragraph, warning, list, table, bars, line, roofline, scatter, code };
  Kind kind = Kind::paragraph;
  int level = 2;              // headings
  std::string text;           // heading, paragraph, warning
  std::vector<std::string> items;  // list
  Table table;
  BarChart bars;
  LineChart line;
  Roofline roofline;
  ScatterChart scatter;
};

struct Document {
  std::string title;
  std::vector<Block> blocks;

  void heading(std::string text, int level = 2);
  void paragraph(std::string text);
  void warning(std::string text);
  void list(std::vector<std::string> items);
  void table(Table t);
  void chart(BarChart c);
  void chart(LineChart c);
  void chart(Roofline c);
  void chart(ScatterChart c);
  // Preformatted text to copy as it is (a command line, a configuration block).
  void code(std::string text);
  // A projection's closing lists (scaling, serving): "Assumptions", then "Notes" when any.
  void assumptions_and_notes(const std::vector<std::string>& assumptions, const std::vector<std::string>& notes);

 private:
  Block& add(Block::Kind kind);  // a new block of this kind at the end
};

// GitHub/GitLab Markdown. Charts are left out (a line says the HTML report has them), except
// that a roofline's points are listed in a table. Code blocks are fenced.
std::string to_markdown(const Document& doc);

// One HTML page with inline CSS and inline SVG charts: no script, no network; a
// Content-Security-Policy forbids scripts and remote loads, so even a mistake in escaping
// could not run code.
std::string to_html(const Document& doc);

// Numbers as reports show them: 3 significant digits, in exponent form only for tiny values and
// for values of 1e15 and more (a corrupt or absurd 1.7e308 is one short word, not 309 digits).
inline constexpr int kLargestFixedMagnitude = 15;
std::string sig3(double v);
// `decimals` fixed decimals below 1e15 (exponent form from there, "-" when not finite); `sign`
// "+" always shows the sign.
std::string decimal(double v, int decimals, const char* sign = "");
// A change in percent with its sign and one decimal: "+3.2%" (decimal's rules).
inline std::string percent_change(double pct) { return decimal(pct, 1, "+") + "%"; }
// Seconds in ns/us/ms/s.
std::string format_duration(double seconds);

}  // namespace gpubench::reports
