// Joining results across files by case identity (see cases.hpp).
#include "reports/cases.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "reports/stats.hpp"

namespace gpubench::reports {

using nlohmann::json;

const json* json_at(const json& root, std::initializer_list<const char*> path) {
  const json* node = &root;
  for (const char* key : path) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

std::optional<double> number_at(const json& root, std::initializer_list<const char*> path) {
  const json* n = json_at(root, path);
  if (n == nullptr || !n->is_number()) return std::nullopt;
  const double v = n->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::string string_at(const json& root, std::initializer_list<const char*> path) {
  const json* n = json_at(root, path);
  if (n == nullptr || n->is_null()) return {};
  return scalar_text(*n);
}

std::string axis_text(const ResultEntry& e, const std::string& axis) {
  return e.axes.contains(axis) ? scalar_text(e.axes[axis]) : std::string();
}

std::string device_label(const ResultsFile& f, const ResultEntry& e, bool several_files) {
  std::string label = fmt::format("{} ({})", e.device_name.empty() ? e.device : e.device_name, e.device);
  if (several_files) label += " [" + f.path.filename().string() + "]";
  return label;
}

std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return fmt::format("{}", v.get<long long>());
  if (v.is_number_unsigned()) return fmt::format("{}", v.get<unsigned long long>());
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_null()) return "-";
  return v.dump();
}

namespace {

struct KnownMetric {
  const char* name;
  const char* unit;
};
// The documented headline metrics, in order of preference.
constexpr KnownMetric kMetrics[] = {{"tokens_per_s", "tokens/s"}, {"samples_per_s", "samples/s"},
                                    {"busbw_gbps", "GB/s (bus)"}, {"tflops", "TFLOP/s"},
                                    {"gbps", "GB/s"},
                                    // The infer suite's serve case: output tokens per second over the trace as
                                    // vLLM defines it (the row data/reference.json holds serving figures against).
                                    {"output_tokens_per_s", "tokens/s"},
                                    // The video suite's frames per second (data/reference.json: the SDK's NVENC and NVDEC tables).
                                    {"fps", "frames/s"}, {"items_per_s", "items/s"}};

std::string unit_of(const std::string& metric, const std::string& peak_key) {
  if (metric == "tflops" && peak_key.starts_with("int")) return "TOP/s";
  for (const auto& m : kMetrics) {
    if (metric == m.name) return m.unit;
  }
  return metric;
}

}  // namespace

std::optional<Perf> entry_perf(const ResultEntry& e) {
  const std::string peak_key = string_at(e.metrics, {"peak_key"});
  auto make = [&](const std::string& metric) -> std::optional<Perf> {
    auto v = number_at(e.metrics, {metric.c_str()});
    if (!v || *v <= 0) return std::nullopt;
    return Perf{*v, metric, unit_of(metric, peak_key)};
  };
  if (auto primary = string_at(e.metrics, {"primary"}); !primary.empty()) {
    if (auto p = make(primary)) return p;
  }
  if (peak_key == "memory_bandwidth") {
    if (auto p = make("gbps")) return p;
  }
  for (const auto& m : kMetrics) {
    if (auto p = make(m.name)) return p;
  }
  if (e.real_time_s && *e.real_time_s > 0) return Perf{1.0 / *e.real_time_s, "runs_per_s", "runs/s"};
  return std::nullopt;
}

std::string case_identity(const ResultEntry& e) {
  json axes = json::object();
  for (const auto& [k, v] : e.axes.items()) {
    if (k != "device") axes[k] = v;  // nlohmann::json keeps keys sorted: order-independent
  }
  return e.suite + '\x1f' + axes.dump();
}

std::string axes_label(const ResultEntry& e, const std::string& except) {
  std::string out;
  auto add = [&](const std::string& k) {
    auto it = e.axes.find(k);
    if (it == e.axes.end() || k == "device" || k == except) return;
    if (!out.empty()) out += ' ';
    out += k + '=' + scalar_text(*it);
  };
  for (const auto& k : e.axis_names) add(k);
  if (e.axis_names.empty()) {
    for (const auto& [k, v] : e.axes.items()) add(k);
  }
  return out.empty() ? e.name : out;
}

std::optional<double> entry_power_w(const ResultEntry& e) {
  for (const json* t : {json_at(e.profile, {"telemetry"}), static_cast<const json*>(&e.telemetry)}) {
    if (t == nullptr || !t->is_object()) continue;
    for (auto v : {number_at(*t, {"power_w", "mean"}), number_at(*t, {"power_w_mean"}), number_at(*t, {"mean_power_w"})}) {
      if (v && *v > 0) return v;
    }
  }
  return std::nullopt;
}

std::optional<double> entry_items_per_joule(const ResultEntry& e) {
  std::string unit = "items";
  if (const json* u = json_at(e.metrics, {"items_unit"}); u && u->is_string() && !u->get<std::string>().empty()) {
    unit = u->get<std::string>();
  }
  const std::string key = unit + "_per_joule";
  for (const json* t : {json_at(e.profile, {"telemetry"}), static_cast<const json*>(&e.telemetry)}) {
    if (t == nullptr || !t->is_object()) continue;
    if (auto v = number_at(*t, {key.c_str()}); v && *v > 0) return v;
  }
  return std::nullopt;
}

bool entry_throttled(const ResultEntry& e) {
  for (const json* t : {json_at(e.profile, {"telemetry"}), static_cast<const json*>(&e.telemetry)}) {
    if (t == nullptr || !t->is_object()) continue;
    if (const json* f = json_at(*t, {"throttled"}); f && f->is_boolean() && f->get<bool>()) return true;
    if (const json* r = json_at(*t, {"throttle_reasons"}); r && ((r->is_array() && !r->empty()) ||
                                                                 (r->is_string() && !r->get<std::string>().empty()))) {
      return true;
    }
  }
  return false;
}

bool entry_noisy(const ResultEntry& e) {
  const json* n = json_at(e.measurement, {"noisy"});
  return n != nullptr && n->is_boolean() && n->get<bool>();
}

bool is_iteration(const ResultEntry& e) { return e.run_type.empty() || e.run_type == "iteration"; }

Joined join_results(const std::vector<ResultsFile>& files) {
  Joined j;
  std::map<std::pair<std::size_t, std::string>, std::size_t> column_of;  // (file, device) -> column
  std::unordered_map<std::string, std::size_t> case_of;
  case_of.reserve(1024);
  for (std::size_t f = 0; f < files.size(); ++f) {
    for (const ResultEntry& e : files[f].entries) {
      if (!is_iteration(e)) continue;
      auto [cit, new_column] = column_of.try_emplace({f, e.device}, j.columns.size());
      if (new_column) {
        RunColumn c{f, e.device, e.device_name, files[f].host(), {}};
        j.columns.push_back(std::move(c));
      }
      if (std::find(j.suites.begin(), j.suites.end(), e.suite) == j.suites.end()) j.suites.push_back(e.suite);
      if (e.status != "ok") continue;
      const std::string id = case_identity(e);
      auto [it, new_case] = case_of.try_emplace(id, j.cases.size());
      if (new_case) j.cases.push_back({id, e.suite, &e, {}});
      JoinedCase& jc = j.cases[it->second];
      if (jc.by_column.size() <= cit->second) jc.by_column.resize(cit->second + 1);
      jc.by_column[cit->second].push_back(&e);
    }
  }
  for (auto& jc : j.cases) jc.by_column.resize(j.columns.size());
  // Labels: the device name (or id) and host; the file number where that is not unique.
  std::map<std::string, int> seen;
  for (auto& c : j.columns) {
    const std::string dev = c.device_name.empty() ? c.device : c.device_name;
    c.label = c.host.empty() ? dev : fmt::format("{} @ {}", dev, c.host);
    ++seen[c.label];
  }
  for (auto& c : j.columns) {
    if (seen[c.label] > 1) c.label += fmt::format(" (#{})", c.file + 1);
  }
  return j;
}

std::optional<Perf> median_perf(const std::vector<const ResultEntry*>& entries) {
  std::vector<double> values;
  std::optional<Perf> first;
  for (const ResultEntry* e : entries) {
    auto p = entry_perf(*e);
    if (!p) continue;
    if (!first) first = p;
    if (p->metric == first->metric) values.push_back(p->value);
  }
  if (!first) return std::nullopt;
  first->value = median(std::move(values));
  return first;
}

}  // namespace gpubench::reports
