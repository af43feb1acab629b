#include "bench/tune/tuning.hpp"

namespace gpubench::tune {
namespace {

// Knob values are kept as text; integers are written as JSON numbers ("micro_batch": 8).
nlohmann::ordered_json knob_value(const std::string& v) {
  if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos) return v;
  return std::stoll(v);
}

}  // namespace

nlohmann::ordered_json configuration_json(const Config& c, const nlohmann::ordered_json& figures) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, value] : c) j[name] = knob_value(value);
  if (figures.is_object()) {
    for (const auto& [k, v] : figures.items()) j[k] = v;
  }
  return j;
}

nlohmann::ordered_json log_entry_json(const LogEntry& e) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, value] : e.config) j[name] = knob_value(value);
  j["stage"] = e.stage();
  j["round"] = e.round;
  j["status"] = to_string(e.status);
  if (e.status == Status::Ok) {
    for (const auto& [k, v] : e.figures.items()) j[k] = v;
  } else {
    j["reason"] = e.reason;
    // A failed or unfit measurement keeps what it knew (its case name).
    for (const auto& [k, v] : e.figures.items()) j[k] = v;
  }
  j["cost_s"] = e.cost_s;
  return j;
}

nlohmann::ordered_json to_json(const Tuning& t) {
  nlohmann::ordered_json j;
  j["target"] = t.target;
  j["objective"] = t.objective;
  j["knobs"] = t.knobs;
  j["fixed"] = t.fixed;
  if (!t.recommended.is_null()) j["recommended"] = t.recommended;
  if (!t.default_config.is_null()) j["default"] = t.default_config;
  if (t.speedup_vs_default) j["speedup_vs_default"] = *t.speedup_vs_default;
  j["budget_s"] = t.budget_s;
  j["search_s"] = t.search_s;
  j["final_s"] = t.final_s;
  j["wall_s"] = t.wall_s;
  j["seed"] = t.seed;
  j["configurations"] = t.configurations;
  j["search"] = t.search;
  for (const auto& [name, value] : t.sections.items()) j[name] = value;
  if (!t.finished) {
    j["interrupted"] = true;
    if (!t.best_so_far.is_null()) j["best_so_far"] = t.best_so_far;
  }
  return j;
}

}  // namespace gpubench::tune
