#include "bench/evaluate/document.hpp"

#include <algorithm>

namespace gpubench::evaluate {
namespace {

std::string key(const Item& i) { return i.part + "/" + i.name; }

// Adds the devices of `from` (context.gpubench.devices) that `to` lacks, by id.
void merge_devices(json& to, const json& from) {
  if (!from.is_array()) return;
  if (!to.is_array()) to = json::array();
  for (const json& d : from) {
    const bool known = std::any_of(to.begin(), to.end(), [&](const json& x) { return x.value("id", "") == d.value("id", "?"); });
    if (!known) to.push_back(d);
  }
}

}  // namespace

EvaluationDocument::EvaluationDocument(const EvaluationPlan& plan) : plan_(plan) {
  doc_["context"] = json::object();
  doc_["benchmarks"] = json::array();
}

void EvaluationDocument::add_results(const Item& item, const json& file) {
  if (!file.is_object()) return;
  if (file.contains("context") && file["context"].is_object()) {
    if (!have_context_) {
      doc_["context"] = file["context"];
      have_context_ = true;
    } else if (file["context"].contains("gpubench")) {
      merge_devices(doc_["context"]["gpubench"]["devices"], file["context"]["gpubench"].value("devices", json::array()));
    }
  }
  if (file.contains("benchmarks") && file["benchmarks"].is_array()) {
    for (json e : file["benchmarks"]) {
      if (e.contains("gpubench") && e["gpubench"].is_object()) e["gpubench"]["evaluate"] = {{"part", item.part}, {"item", item.name}};
      doc_["benchmarks"].push_back(std::move(e));
    }
  }
  // A soak's series and verdict (the screen has one soak; its file's top-level object).
  if (file.contains("gpubench") && file["gpubench"].is_object()) {
    for (const auto& [k, v] : file["gpubench"].items()) {
      if (k == "summaries") {
        // One summary per suite: the first item's (the screen's) where two items ran a suite.
        for (const auto& [suite, summary] : v.items()) {
          if (!doc_["gpubench"]["summaries"].contains(suite)) doc_["gpubench"]["summaries"][suite] = summary;
        }
      } else {
        doc_["gpubench"][k] = v;
      }
    }
  }
}

void EvaluationDocument::set_outcome(const Item& item, const ItemOutcome& outcome) {
  for (auto& [k, o] : outcomes_) {
    if (k == key(item)) {
      o = outcome;
      return;
    }
  }
  outcomes_.emplace_back(key(item), outcome);
}

void EvaluationDocument::set_check(const json& findings, bool forced) {
  check_ = {{"findings", findings.value("findings", json::array())},
            {"errors", findings.contains("summary") ? findings["summary"].value("error", 0) : 0},
            {"warnings", findings.contains("summary") ? findings["summary"].value("warning", 0) : 0},
            {"forced", forced}};
}

std::size_t EvaluationDocument::failed_entries() const {
  std::size_t n = 0;
  for (const json& e : doc_["benchmarks"]) {
    if (e.contains("gpubench") && e["gpubench"].value("status", "") == "failed") ++n;
  }
  return n;
}

json EvaluationDocument::to_json() const {
  json doc = doc_;
  json ev;
  ev["budget_s"] = plan_.budget_s;
  ev["planned_s"] = plan_.planned_s;
  ev["measured_s"] = measured_s_;
  ev["budget_spent"] = budget_spent_;
  ev["gpus"] = plan_.gpus();
  json devices = json::array();
  for (const DeviceInfo& d : plan_.devices) devices.push_back(d.id());
  ev["devices"] = devices;
  ev["model"] = plan_.devices.empty() ? "" : plan_.devices.front().name;
  if (!depth_device_.empty()) ev["depth_device"] = depth_device_;
  json parts = json::array();
  json dropped = json::array();
  for (const char* part : evaluate::kParts) {
    json p{{"name", part}, {"planned_s", 0.0}};
    json items = json::array();
    double planned = 0, measured = 0;
    bool ran = false;
    std::string why_not;
    for (const Item& i : plan_.items) {
      if (i.part != part) continue;
      json it{{"name", i.name}, {"priority", i.priority}, {"planned_s", i.planned_s}, {"cases", i.cases}};
      std::string status = i.status;
      const auto o = std::find_if(outcomes_.begin(), outcomes_.end(), [&](const auto& x) { return x.first == key(i); });
      if (i.status == "planned") {
        planned += i.planned_s;
        if (o != outcomes_.end()) {
          status = o->second.status;
          it["measured_s"] = o->second.measured_s;
          it["entries"] = o->second.entries;
          it["files"] = o->second.files;
          measured += o->second.measured_s;
          ran = true;
        } else {
          status = "not run";
        }
      } else {
        it["planned_s"] = i.planned_s;
        if (why_not.empty()) why_not = i.status;
        if (i.status.rfind("dropped", 0) == 0) {
          dropped.push_back({{"part", i.part}, {"item", i.name}, {"planned_s", i.planned_s},
                             {"why", i.status.substr(std::string("dropped: ").size())}});
        }
      }
      it["status"] = status;
      items.push_back(std::move(it));
    }
    p["planned_s"] = planned;
    if (ran) {
      p["measured_s"] = measured;
      p["status"] = "ran";
    } else {
      p["status"] = why_not.empty() ? "not run" : why_not;
    }
    p["items"] = std::move(items);
    parts.push_back(std::move(p));
  }
  ev["parts"] = std::move(parts);
  ev["dropped"] = std::move(dropped);
  if (!check_.is_null()) ev["check"] = check_;
  if (!slo_.is_null()) ev["slo"] = slo_;
  doc["context"]["gpubench"]["evaluate"] = std::move(ev);
  return doc;
}

std::optional<std::string> median_device(const json& benchmarks, const std::string& item) {
  std::vector<std::pair<double, std::string>> best;  // per device: its best figure of the item
  for (const json& e : benchmarks) {
    const json& g = e.value("gpubench", json::object());
    if (!g.contains("evaluate") || g["evaluate"].value("item", "") != item || g.value("status", "") != "ok") continue;
    const json& m = g.value("metrics", json::object());
    if (!m.contains("tflops") || !m["tflops"].is_number()) continue;
    const std::string device = g.value("device", "");
    const double v = m["tflops"].get<double>();
    auto it = std::find_if(best.begin(), best.end(), [&](const auto& b) { return b.second == device; });
    if (it == best.end()) best.emplace_back(v, device);
    else it->first = std::max(it->first, v);
  }
  if (best.empty()) return std::nullopt;
  std::sort(best.begin(), best.end());
  return best[(best.size() - 1) / 2].second;
}

std::string refused_everywhere(const json& file) {
  if (!file.is_object() || !file.contains("benchmarks") || !file["benchmarks"].is_array() || file["benchmarks"].empty()) {
    return {};
  }
  std::string first;
  for (const json& e : file["benchmarks"]) {
    const json g = e.value("gpubench", json::object());
    if (g.value("status", "") != "failed") return {};
    if (first.empty()) first = g.value("reason", std::string("failed"));
  }
  return first;
}

}  // namespace gpubench::evaluate
