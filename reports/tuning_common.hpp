#pragma once
// What the two tuning renderers (tuning.cpp for `tune train`, tuning_dataload.cpp for `tune
// dataload`) share: reading the log's figures, a knob label, the search-log table and the points
// of the search chart. Each renderer keeps only its own columns and axes.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/document.hpp"

namespace gpubench::reports::tuning_detail {

// A finite number at obj[key], or nothing.
std::optional<double> number(const nlohmann::json& obj, const char* key);
// A knob value or a figure as text: strings as they are, integers whole, other numbers to 3
// significant digits, booleans yes/no, null as "".
std::string text_of(const nlohmann::json& v);
std::string text(const nlohmann::json& obj, const char* key);  // text_of(obj[key]), "" when absent
// "precision=bf16 micro_batch=8" for the knobs the entry has.
std::string knob_label(const nlohmann::json& c, const std::vector<std::string>& knobs);

// One target-specific column of the search log: its title, alignment and cell.
struct LogColumn {
  std::string title;
  bool right = true;
  std::function<std::string(const nlohmann::json& entry)> cell;
};
// "Search log": #, the knobs, stage (`stage_of`), status, then `columns`, then the reason.
void search_log_table(Document& doc, const nlohmann::json& tuning, const std::vector<std::string>& knobs,
                      const std::function<std::string(const nlohmann::json& entry)>& stage_of,
                      const std::vector<LogColumn>& columns);

// The search chart's points: each configuration's most thorough measurement (a later one of the
// same label replaces the earlier) and, apart, the final measurements (emphasised).
struct SearchPoints {
  std::vector<ScatterChart::Point> searched, finals;
  std::map<std::string, std::size_t> index;  // label -> searched point
  void add(const std::string& label, ScatterChart::Point p, bool final);
};

}  // namespace gpubench::reports::tuning_detail
