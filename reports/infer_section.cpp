// The report's inference section (reports/infer_section.hpp).
#include "reports/infer_section.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "reports/cases.hpp"

namespace gpubench::reports {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The configuration a curve holds fixed: model and every axis that is neither a step's size nor
// the serving trace's (the same split as `gpubench serving`).
std::string config_of(const ResultEntry& e) {
  std::string out = axis_text(e, "model");
  for (const char* axis : {"dtype", "kv_page", "graphs", "tp", "layers"}) {
    const std::string v = axis_text(e, axis);
    if (!v.empty()) out += fmt::format(" {}={}", axis, v);
  }
  return out;
}

struct Point {
  std::string device, group;
  double x = 0, y = 0;
  std::vector<std::string> row;
  std::string config;
  double held = 0;  // the number the group holds fixed (batch or context), for numeric order
};

// One chart per group with two or more x values: y against x, a series per device.
void charts(Document& doc, const std::vector<Point>& points, const std::string& title, const std::string& unit) {
  std::vector<std::string> groups;
  for (const Point& p : points) {
    if (std::find(groups.begin(), groups.end(), p.group) == groups.end()) groups.push_back(p.group);
  }
  for (const std::string& g : groups) {
    std::set<double> xs;
    std::vector<std::string> devices;
    for (const Point& p : points) {
      if (p.group != g) continue;
      xs.insert(p.x);
      if (std::find(devices.begin(), devices.end(), p.device) == devices.end()) devices.push_back(p.device);
    }
    if (xs.size() < 2) continue;
    LineChart c;
    c.title = title + g;
    c.unit = unit;
    for (double x : xs) c.x_labels.push_back(fmt::format("{:g}", x));
    auto series = [&](const std::string& device) {
      std::vector<double> v(xs.size(), kNaN);
      for (const Point& p : points) {
        if (p.group == g && p.device == device) v[static_cast<std::size_t>(std::distance(xs.begin(), xs.find(p.x)))] = p.y;
      }
      return v;
    };
    c.values = series(devices.front());
    c.values_label = devices.front();
    for (std::size_t i = 1; i < devices.size(); ++i) c.series.push_back({devices[i], series(devices[i]), false, false});
    doc.chart(std::move(c));
  }
}

std::string ms(std::optional<double> v) { return v ? sig3(*v) : std::string(); }

// Telemetry's figure is there only on GPUs with NVML: a column no row fills is left out.
void drop_column_if_empty(Table& t, std::size_t column) {
  for (const auto& row : t.rows) {
    if (column < row.size() && !row[column].empty()) return;
  }
  t.columns.erase(t.columns.begin() + static_cast<std::ptrdiff_t>(column));
  t.right.erase(t.right.begin() + static_cast<std::ptrdiff_t>(column));
  for (auto& row : t.rows) {
    if (column < row.size()) row.erase(row.begin() + static_cast<std::ptrdiff_t>(column));
  }
}

}  // namespace

void infer_section(Document& doc, const std::vector<ResultsFile>& files) {
  std::vector<Point> prefill, decode_batch, decode_context;
  Table serve;
  for (const char* c : {"device", "configuration", "rate (req/s)", "requests", "prompt_len", "output_len", "max_batch"})
    serve.add_column(c, false);
  for (const char* c : {"TTFT p50 (ms)", "TTFT p99 (ms)", "TPOT p50 (ms)", "TPOT p99 (ms)", "ITL p99 (ms)",
                        "E2EL p50 (ms)", "req/s", "tok/s", "tok/s per user", "output tok/J"}) {
    serve.add_column(c, true);
  }
  for (const ResultsFile& f : files) {
    for (const ResultEntry& e : f.entries) {
      if (e.suite != "infer" || e.run_type == "aggregate" || e.status != "ok") continue;
      const std::string phase = axis_text(e, "phase");
      const std::string device = device_label(f, e, files.size() > 1);
      const std::string config = config_of(e);
      const auto batch = number_at(e.axes, {"batch"});
      if (phase == "prefill" && e.real_time_s && *e.real_time_s > 0 && batch) {
        const double prompt = number_at(e.axes, {"prompt_len"}).value_or(0);
        const double tps = number_at(e.metrics, {"tokens_per_s"}).value_or(*batch * prompt / *e.real_time_s);
        Point p{device, fmt::format("{}, batch {:g}", config, *batch), prompt, tps,
                {device, config, fmt::format("{:g}", *batch), fmt::format("{:g}", prompt), format_duration(*e.real_time_s),
                 sig3(tps), ms(number_at(e.metrics, {"tflops"})), ms(entry_items_per_joule(e))},
                config, *batch};
        prefill.push_back(std::move(p));
      } else if (phase == "decode" && e.real_time_s && *e.real_time_s > 0 && batch) {
        const double context = number_at(e.axes, {"context_len"}).value_or(0);
        const double tps = number_at(e.metrics, {"tokens_per_s"}).value_or(*batch / *e.real_time_s);
        const auto ceiling = number_at(e.metrics, {"pct_of_memory_ceiling"});
        std::vector<std::string> row = {device, config, fmt::format("{:g}", *batch), fmt::format("{:g}", context),
                                        format_duration(*e.real_time_s), sig3(tps), sig3(1 / *e.real_time_s),
                                        ceiling ? decimal(*ceiling, 1) + "%" : std::string(),
                                        ms(entry_items_per_joule(e))};
        decode_batch.push_back({device, fmt::format("{}, context {:g}", config, context), *batch, tps, row, config, context});
        decode_context.push_back(
            {device, fmt::format("{}, batch {:g}", config, *batch), context, *e.real_time_s * 1e3, {}, config, *batch});
      } else if (phase == "serve") {
        const nlohmann::json* s = json_at(e.details, {"serve", "summary"});
        if (!s) continue;
        const nlohmann::json* trace = json_at(e.details, {"serve", "trace"});
        const nlohmann::json* limits = json_at(e.details, {"serve", "limits"});
        auto num = [](const nlohmann::json* j, std::initializer_list<const char*> path) {
          return j ? number_at(*j, path) : std::nullopt;
        };
        auto g = [](std::optional<double> v) { return v ? fmt::format("{:g}", *v) : std::string(); };
        serve.rows.push_back({device, config, g(num(trace, {"rate"})), g(num(trace, {"requests"})),
                              g(num(trace, {"prompt_len"})), g(num(trace, {"output_len"})), g(num(limits, {"max_batch"})),
                              ms(num(s, {"ttft_ms", "p50"})), ms(num(s, {"ttft_ms", "p99"})), ms(num(s, {"tpot_ms", "p50"})),
                              ms(num(s, {"tpot_ms", "p99"})), ms(num(s, {"itl_ms", "p99"})), ms(num(s, {"e2el_ms", "p50"})),
                              ms(num(s, {"requests_per_s"})), ms(num(s, {"output_tokens_per_s"})),
                              ms(num(s, {"output_tokens_per_s_per_user"})), ms(entry_items_per_joule(e))});
      }
    }
  }
  if (prefill.empty() && decode_batch.empty() && serve.rows.empty()) return;
  doc.heading("Inference");
  doc.paragraph("The infer suite: one prefill step over batch prompts (tokens/s against the prompt length), one decode "
                "step of batch sequences over context_len cached tokens (step time = TPOT at that batch; tokens/s per "
                "device and per user, % of the measured memory ceiling), and the measured serving loops (vLLM's TTFT, "
                "TPOT, ITL, E2EL). `gpubench serving` projects serving latencies at other rates from these curves "
                "(docs/serving.md). With NVML telemetry, tokens per joule: prompt tokens for prefill, generated tokens "
                "for decode, output tokens over the whole trace for serving.");
  auto by = [](std::vector<Point>& v) {
    std::stable_sort(v.begin(), v.end(), [](const Point& a, const Point& b) {
      return std::tie(a.config, a.held, a.x, a.device) < std::tie(b.config, b.held, b.x, b.device);
    });
  };
  if (!prefill.empty()) {
    doc.heading("Prefill", 3);
    by(prefill);
    Table t;
    for (const char* c : {"device", "configuration"}) t.add_column(c);
    for (const char* c : {"batch", "prompt_len", "step", "tokens/s", "TFLOP/s", "prompt tok/J"}) t.add_column(c, true);
    for (const Point& p : prefill) t.rows.push_back(p.row);
    drop_column_if_empty(t, t.columns.size() - 1);
    doc.table(std::move(t));
    charts(doc, prefill, "Prefill tokens/s vs prompt length: ", "tokens/s");
  }
  if (!decode_batch.empty()) {
    doc.heading("Decode", 3);
    by(decode_batch);
    Table t;
    for (const char* c : {"device", "configuration"}) t.add_column(c);
    for (const char* c :
         {"batch", "context_len", "step (TPOT)", "tokens/s", "tokens/s per user", "% memory ceiling", "tok/J"}) {
      t.add_column(c, true);
    }
    for (const Point& p : decode_batch) t.rows.push_back(p.row);
    drop_column_if_empty(t, t.columns.size() - 1);
    doc.table(std::move(t));
    charts(doc, decode_batch, "Decode tokens/s vs batch: ", "tokens/s");
    by(decode_context);
    charts(doc, decode_context, "Decode step time vs cached context: ", "ms");
  }
  if (!serve.rows.empty()) {
    doc.heading("Serving (measured)", 3);
    drop_column_if_empty(serve, serve.columns.size() - 1);
    doc.table(std::move(serve));
  }
}

}  // namespace gpubench::reports
