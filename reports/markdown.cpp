// Markdown report over one or more results files.
#include "reports/markdown.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join

namespace gpubench::reports {

namespace {

using nlohmann::json;

// ---------------------------------------------------------------- tables

struct Column {
  std::string title;
  bool right = false;  // numbers read better right-aligned
};

// A cell must stay on one line and must not end the cell early.
std::string escape_cell(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out.empty() ? "-" : out;
}

void append_row(std::string& out, const std::vector<std::string>& cells) {
  out += '|';
  for (const auto& cell : cells) {
    out += ' ';
    out += escape_cell(cell);
    out += " |";
  }
  out += '\n';
}

std::string render_table(const std::vector<Column>& columns,
                         const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  std::vector<std::string> titles;
  for (const auto& c : columns) titles.push_back(c.title);
  append_row(out, titles);
  out += '|';
  for (const auto& c : columns) out += c.right ? " ---: |" : " --- |";
  out += '\n';
  for (const auto& row : rows) append_row(out, row);
  out += '\n';
  return out;
}

// ---------------------------------------------------------------- numbers

// 3 significant digits, never in exponent form (a report is read, not parsed); values of 1000
// and more keep all their integer digits.
std::string sig3(double v) {
  if (!std::isfinite(v)) return "-";
  if (v == 0) return "0";
  const double a = std::fabs(v);
  const int magnitude = static_cast<int>(std::floor(std::log10(a)));
  int decimals = std::max(0, 2 - magnitude);
  // Rounding can carry into the next decade (9.996 -> 10.0): drop the extra digit then.
  const double scale = std::pow(10.0, decimals);
  if (decimals > 0 && std::round(a * scale) / scale >= std::pow(10.0, magnitude + 1)) --decimals;
  return fmt::format("{:.{}f}", v, decimals);
}

// Seconds in the unit that gives a value in [1, 1000), as Google Benchmark's units.
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

std::optional<double> number(const json& obj, const char* field) {
  auto it = obj.find(field);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string string_or(const json& obj, const char* field, std::string fallback = {}) {
  auto it = obj.find(field);
  if (it == obj.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

// Follows a path of object keys; nullptr where any step is missing.
const json* at(const json& root, std::initializer_list<const char*> path) {
  const json* node = &root;
  for (const char* key : path) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

// Axis values and context fields are shown as written: strings bare, numbers without
// exponent where they are integers.
std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return fmt::format("{}", v.get<long long>());
  if (v.is_number_unsigned()) return fmt::format("{}", v.get<unsigned long long>());
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_null()) return "-";
  return v.dump();
}

std::string text_at(const json& root, std::initializer_list<const char*> path) {
  const json* node = at(root, path);
  return node == nullptr ? std::string() : scalar_text(*node);
}

// ---------------------------------------------------------------- one entry

// Datasheet lookups by device name; cached because every row of a device asks the same.
class PeakLookup {
 public:
  explicit PeakLookup(const SpecSheet& specs) : specs_(specs) {}

  std::optional<double> peak(const std::string& device_name, const std::string& key) {
    auto [it, inserted] = cache_.try_emplace(device_name, nullptr);
    if (inserted) it->second = specs_.find(device_name);
    if (it->second == nullptr) return std::nullopt;
    auto p = it->second->peaks.find(key);
    if (p == it->second->peaks.end()) return std::nullopt;
    return p->second;
  }

 private:
  const SpecSheet& specs_;
  std::map<std::string, const GpuSpec*> cache_;
};

struct Rate {
  double value;
  std::string unit;
};

// The rate the entry's peak refers to: bandwidth for memory-bound cases, otherwise the
// arithmetic rate, falling back to whichever the entry has.
std::optional<Rate> entry_rate(const ResultEntry& e) {
  const std::string peak_key = string_or(e.metrics, "peak_key");
  auto tflops = number(e.metrics, "tflops");
  auto gbps = number(e.metrics, "gbps");
  if (peak_key == "memory_bandwidth" && gbps) return Rate{*gbps, "GB/s"};
  if (tflops) return Rate{*tflops, peak_key.starts_with("int") ? "TOP/s" : "TFLOP/s"};
  if (gbps) return Rate{*gbps, "GB/s"};
  // Cases that count items (dataload: samples/s).
  if (auto items = number(e.metrics, "items_per_s")) return Rate{*items, string_or(e.metrics, "items_unit") + "/s"};
  return std::nullopt;
}

std::string pct_of_peak(const ResultEntry& e, PeakLookup& peaks) {
  if (auto pct = number(e.metrics, "pct_of_peak")) return fmt::format("{:.1f}%", *pct);
  // Older files, or devices the recording binary's sheet did not know: use this sheet.
  const std::string peak_key = string_or(e.metrics, "peak_key");
  auto rate = entry_rate(e);
  if (peak_key.empty() || !rate) return "-";
  auto peak = peaks.peak(e.device_name, peak_key);
  if (!peak) return "-";
  return fmt::format("{:.1f}%", 100.0 * rate->value / *peak);
}

std::string noise_text(const ResultEntry& e) {
  auto noise = number(e.measurement, "noise_pct");
  if (!noise) return "-";
  const json* noisy = at(e.measurement, {"noisy"});
  const bool is_noisy = noisy != nullptr && noisy->is_boolean() && noisy->get<bool>();
  return is_noisy ? fmt::format("{:.1f} (noisy)", *noise) : fmt::format("{:.1f}", *noise);
}

std::string device_text(const ResultEntry& e) {
  if (e.device_name.empty() || e.device_name == e.device) return e.device;
  if (e.device.empty()) return e.device_name;
  return fmt::format("{} ({})", e.device, e.device_name);
}

// ---------------------------------------------------------------- sections

struct Row {
  std::size_t file;  // index into the files, shown as "#1" when there are several
  const ResultEntry* entry;
};

std::string run_label(std::size_t file) { return fmt::format("#{}", file + 1); }

std::string cpu_text(const json& ctx) {
  std::string model = text_at(ctx, {"gpubench", "cpu", "model"});
  std::string cores = text_at(ctx, {"gpubench", "cpu", "cores"});
  if (cores.empty()) cores = text_at(ctx, {"num_cpus"});
  if (model.empty()) return cores.empty() ? "-" : cores + " logical CPUs";
  return cores.empty() ? model : fmt::format("{} ({} logical CPUs)", model, cores);
}

std::string gpubench_text(const json& ctx) {
  std::string version = text_at(ctx, {"gpubench", "version"});
  std::string revision = text_at(ctx, {"gpubench", "git_revision"});
  std::string build = text_at(ctx, {"gpubench", "build_type"});
  std::vector<std::string> details;
  if (!revision.empty()) details.push_back(revision);
  if (!build.empty()) details.push_back(build);
  if (details.empty()) return version;
  return fmt::format("{} ({})", version.empty() ? "?" : version, fmt::join(details, ", "));
}

std::string cuda_text(const json& ctx) {
  const json* cuda = at(ctx, {"gpubench", "cuda"});
  if (cuda == nullptr || !cuda->is_object()) return "-";
  const json* available = at(*cuda, {"available"});
  std::string runtime = text_at(*cuda, {"runtime_version"});
  std::string driver = text_at(*cuda, {"driver_version"});
  std::string versions = fmt::format("runtime {}, driver {}", runtime.empty() ? "-" : runtime,
                                     driver.empty() || driver == "-" ? "none" : driver);
  if (available != nullptr && available->is_boolean() && !available->get<bool>()) {
    std::string reason = text_at(*cuda, {"reason"});
    return reason.empty() ? versions + "; not available"
                          : fmt::format("{}; not available: {}", versions, reason);
  }
  return versions;
}

std::string devices_text(const json& ctx) {
  const json* devices = at(ctx, {"gpubench", "devices"});
  if (devices == nullptr || !devices->is_array() || devices->empty()) return "-";
  std::vector<std::string> parts;
  for (const json& d : *devices) {
    std::string text = fmt::format("{}: {}", text_at(d, {"id"}), text_at(d, {"name"}));
    std::vector<std::string> details;
    if (auto cc = text_at(d, {"compute_capability"}); !cc.empty()) details.push_back("cc " + cc);
    if (auto sms = text_at(d, {"sm_count"}); !sms.empty()) details.push_back(sms + " SMs");
    if (!details.empty()) text += fmt::format(" ({})", fmt::join(details, ", "));
    parts.push_back(std::move(text));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string libraries_text(const json& ctx) {
  const json* libs = at(ctx, {"gpubench", "libraries"});
  if (libs == nullptr || !libs->is_object() || libs->empty()) return "-";
  std::vector<std::string> parts;
  for (const auto& [name, version] : libs->items()) {
    parts.push_back(fmt::format("{} {}", name, scalar_text(version)));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string render_runs(const std::vector<ResultsFile>& files) {
  std::vector<Column> columns = {{"run"},       {"file"},     {"host"},
                                 {"started (UTC)"}, {"CPU"},  {"gpubench"},
                                 {"CUDA"},      {"devices"},  {"libraries"}};
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const json& ctx = files[i].context;
    rows.push_back({run_label(i), files[i].path.generic_string(), files[i].host(),
                    text_at(ctx, {"gpubench", "started_utc"}), cpu_text(ctx),
                    gpubench_text(ctx), cuda_text(ctx), devices_text(ctx), libraries_text(ctx)});
  }
  return "## Runs\n\n" + render_table(columns, rows);
}

bool is_iteration(const ResultEntry& e) { return e.run_type.empty() || e.run_type == "iteration"; }

// Suites in the order they first appear, with their entries in file order.
std::vector<std::pair<std::string, std::vector<Row>>> group_by_suite(
    const std::vector<ResultsFile>& files) {
  std::vector<std::pair<std::string, std::vector<Row>>> suites;
  for (std::size_t f = 0; f < files.size(); ++f) {
    for (const auto& e : files[f].entries) {
      const std::string suite = e.suite.empty() ? "(no suite)" : e.suite;
      auto it = std::find_if(suites.begin(), suites.end(),
                             [&](const auto& s) { return s.first == suite; });
      if (it == suites.end()) {
        suites.emplace_back(suite, std::vector<Row>{});
        it = std::prev(suites.end());
      }
      it->second.push_back({f, &e});
    }
  }
  return suites;
}

// The union of the shown entries' axes, in order of first appearance.
std::vector<std::string> axis_union(const std::vector<Row>& rows) {
  std::vector<std::string> axes;
  auto add = [&](const std::string& name) {
    if (std::find(axes.begin(), axes.end(), name) == axes.end()) axes.push_back(name);
  };
  for (const auto& row : rows) {
    const ResultEntry& e = *row.entry;
    for (const auto& name : e.axis_names) add(name);
    // Entries built in code may fill `axes` without `axis_names`.
    for (const auto& [name, value] : e.axes.items()) add(name);
  }
  return axes;
}

// Right-align an axis column only when every value in it is a number (dtype stays left).
bool numeric_axis(const std::vector<Row>& rows, const std::string& axis) {
  for (const auto& row : rows) {
    auto it = row.entry->axes.find(axis);
    if (it != row.entry->axes.end() && !it->is_number()) return false;
  }
  return true;
}

std::string render_suite(const std::string& suite, const std::vector<Row>& all_rows,
                         bool several_files, PeakLookup& peaks) {
  std::vector<Row> rows;
  std::size_t aggregates = 0;
  for (const auto& row : all_rows) {
    if (!is_iteration(*row.entry)) {
      ++aggregates;
    } else if (row.entry->status == "ok") {
      rows.push_back(row);
    }
  }

  std::string out = fmt::format("## {}\n\n", suite);
  if (rows.empty()) {
    out += "No completed cases (see Skipped and failed).\n\n";
  } else {
    const std::vector<std::string> axes = axis_union(rows);
    std::vector<Column> columns;
    if (several_files) columns.push_back({"run"});
    columns.push_back({"device"});
    for (const auto& a : axes) columns.push_back({a, numeric_axis(rows, a)});
    for (const char* title : {"time per run", "rate", "% of peak", "noise %", "samples"}) {
      columns.push_back({title, true});
    }

    std::vector<std::vector<std::string>> cells;
    for (const auto& row : rows) {
      const ResultEntry& e = *row.entry;
      std::vector<std::string> r;
      if (several_files) r.push_back(run_label(row.file));
      r.push_back(device_text(e));
      for (const auto& a : axes) {
        auto it = e.axes.find(a);
        r.push_back(it == e.axes.end() ? "-" : scalar_text(*it));
      }
      r.push_back(e.real_time_s ? format_duration(*e.real_time_s) : "-");
      auto rate = entry_rate(e);
      r.push_back(rate ? fmt::format("{} {}", sig3(rate->value), rate->unit) : "-");
      r.push_back(pct_of_peak(e, peaks));
      r.push_back(noise_text(e));
      r.push_back(text_at(e.measurement, {"samples"}));
      cells.push_back(std::move(r));
    }
    out += render_table(columns, cells);
  }
  if (aggregates > 0) {
    out += fmt::format(
        "{} aggregate row(s) over repetitions (mean, median, ...) are in the results file(s) "
        "and not shown.\n\n",
        aggregates);
  }
  return out;
}

std::string render_problems(const std::vector<ResultsFile>& files, bool several_files) {
  std::vector<Column> columns;
  if (several_files) columns.push_back({"run"});
  for (const char* title : {"name", "device", "status", "reason"}) columns.push_back({title});

  std::vector<std::vector<std::string>> rows;
  for (std::size_t f = 0; f < files.size(); ++f) {
    for (const auto& e : files[f].entries) {
      if (!is_iteration(e) || e.status == "ok") continue;
      std::vector<std::string> r;
      if (several_files) r.push_back(run_label(f));
      r.insert(r.end(), {e.name, device_text(e), e.status, e.reason});
      rows.push_back(std::move(r));
    }
  }
  if (rows.empty()) return {};
  return "## Skipped and failed\n\n" + render_table(columns, rows);
}

}  // namespace

std::string render_markdown(const std::vector<ResultsFile>& files, const SpecSheet& specs) {
  std::string out = "# gpubench report\n\n";
  out +=
      "Time per run is the mean over the timed runs. Rates use decimal units: "
      "1 TFLOP/s = 1e12 FLOP/s; 1 GB/s = 1e9 B/s. % of peak compares the rate with the dense "
      "datasheet figure for the device (a vendor claim, not a measurement); '-' where the "
      "device or the figure is not known. Noise is the standard deviation of the samples over "
      "their mean.\n\n";
  if (files.empty()) return out + "No results files.\n";

  out += render_runs(files);
  const bool several_files = files.size() > 1;
  PeakLookup peaks(specs);
  for (const auto& [suite, rows] : group_by_suite(files)) {
    out += render_suite(suite, rows, several_files, peaks);
  }
  out += render_problems(files, several_files);
  return out;
}

}  // namespace gpubench::reports
