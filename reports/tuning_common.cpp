// The tuning renderers' shared pieces (see tuning_common.hpp).
#include "reports/tuning_common.hpp"

#include <cmath>

#include "reports/escape.hpp"

namespace gpubench::reports::tuning_detail {

using nlohmann::json;

std::optional<double> number(const json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number()) return sig3(v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return v.is_null() ? "" : v.dump();
}

std::string text(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return "";
  return text_of(obj[key]);
}

std::string knob_label(const json& c, const std::vector<std::string>& knobs) {
  std::string s;
  for (const std::string& k : knobs) {
    if (c.is_object() && c.contains(k)) s += (s.empty() ? "" : " ") + k + "=" + text_of(c[k]);
  }
  return s;
}

void search_log_table(Document& doc, const json& t, const std::vector<std::string>& knobs,
                      const std::function<std::string(const json&)>& stage_of, const std::vector<LogColumn>& columns) {
  if (!t.contains("search") || !t["search"].is_array() || t["search"].empty()) return;
  Table tab;
  tab.add_column("#", true);
  for (const std::string& k : knobs) tab.add_column(k);
  tab.add_column("stage");
  tab.add_column("status");
  for (const LogColumn& c : columns) tab.add_column(c.title, c.right);
  tab.add_column("reason");
  std::size_t i = 0;
  for (const json& e : t["search"]) {
    std::vector<std::string> r = {std::to_string(++i)};
    for (const std::string& k : knobs) r.push_back(text(e, k.c_str()));
    r.push_back(stage_of(e));
    r.push_back(text(e, "status"));
    for (const LogColumn& c : columns) r.push_back(c.cell(e));
    r.push_back(text(e, "reason"));
    tab.rows.push_back(std::move(r));
  }
  doc.heading("Search log", 4);
  doc.table(std::move(tab));
}

void SearchPoints::add(const std::string& label, ScatterChart::Point p, bool final) {
  if (final) {
    finals.push_back(std::move(p));
    return;
  }
  const auto it = index.find(label);
  if (it == index.end()) {
    index[label] = searched.size();
    searched.push_back(std::move(p));
  } else {
    searched[it->second] = std::move(p);  // a longer measurement replaces the short one
  }
}

}  // namespace gpubench::reports::tuning_detail
