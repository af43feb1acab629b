// data/reference.json and the matching of results to it (see reference.hpp).
#include "reports/reference.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "bench/core/errors.hpp"
#include "reports/cases.hpp"
#include "reports/json_error.hpp"

namespace gpubench::reports {

extern const std::string_view kBuiltinReferenceJson;

namespace {

using json = nlohmann::json;

std::string text(const json& j, const char* key, std::string_view origin, std::string_view id, bool required = true) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string() || (required && it->get<std::string>().empty())) {
    if (!required && it == j.end()) return "";
    throw UsageError(fmt::format("{}: row {}: \"{}\" should be a non-empty string", origin, id, key));
  }
  return it->get<std::string>();
}

std::string size_text(double bytes) {
  if (bytes >= 1 << 30) return fmt::format("{:g} GiB", bytes / (1 << 30));
  if (bytes >= 1 << 20) return fmt::format("{:g} MiB", bytes / (1 << 20));
  return fmt::format("{:g} B", bytes);
}

}  // namespace

std::string ReferenceRow::short_source() const {
  const std::string who = source_title.substr(0, source_title.find(','));
  return fmt::format("{}{}, {}", who, kind == "best_over_shapes" ? " MAMF" : "", stack);
}

const ReferenceTable& ReferenceTable::builtin() {
  static const ReferenceTable t = from_json_text(kBuiltinReferenceJson, "built-in data/reference.json");
  return t;
}

ReferenceTable ReferenceTable::from_json_text(std::string_view text_in, std::string_view origin) {
  json doc;
  try {
    doc = parse_json_without_duplicate_keys<json>(text_in);
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("{}: not valid JSON ({})", origin, one_line_parse_message(e.what())));
  }
  if (!doc.is_object() || doc.value("schema_version", 0) != 1 || !doc.contains("rows") || !doc["rows"].is_array()) {
    throw UsageError(fmt::format("{}: not a reference table (schema_version 1 and a list \"rows\")", origin));
  }
  ReferenceTable t;
  for (const json& r : doc["rows"]) {
    ReferenceRow row;
    row.id = r.is_object() && r.contains("id") && r["id"].is_string() ? r["id"].get<std::string>() : "?";
    if (!r.is_object()) throw UsageError(fmt::format("{}: a row is not an object", origin));
    row.gpu = text(r, "gpu", origin, row.id);
    row.measures = text(r, "measures", origin, row.id);
    row.metric = text(r, "metric", origin, row.id);
    row.unit = text(r, "unit", origin, row.id);
    row.configuration = text(r, "configuration", origin, row.id);
    row.stack = text(r, "stack", origin, row.id);
    row.date = text(r, "date", origin, row.id);
    row.checked = text(r, "checked", origin, row.id);
    row.notes = text(r, "notes", origin, row.id, false);
    const json& sel = r.value("selector", json());
    if (!sel.is_object() || !sel.contains("suite") || !sel["suite"].is_string() || !sel.contains("axes") ||
        !sel["axes"].is_object()) {
      throw UsageError(fmt::format("{}: row {}: \"selector\" should be {{\"suite\": ..., \"axes\": {{...}}}}", origin, row.id));
    }
    row.suite = sel["suite"].get<std::string>();
    row.axes = sel["axes"];
    row.kind = sel.value("kind", "");
    if (!row.kind.empty() && row.kind != "best_over_shapes") {
      throw UsageError(fmt::format("{}: row {}: selector kind '{}' (accepted: best_over_shapes)", origin, row.id, row.kind));
    }
    if (sel.contains("ranks")) {
      if (!sel["ranks"].is_number_integer() || sel["ranks"].get<int>() < 1) {
        throw UsageError(fmt::format("{}: row {}: selector ranks should be a whole number of at least 1", origin, row.id));
      }
      row.ranks = sel["ranks"].get<int>();
    }
    if (sel.contains("min_size")) {
      if (!sel["min_size"].is_number_integer() || sel["min_size"].get<std::int64_t>() < 1) {
        throw UsageError(fmt::format("{}: row {}: selector min_size should be a whole number of bytes above 0", origin, row.id));
      }
      row.min_size = sel["min_size"].get<std::int64_t>();
    }
    if (!r.contains("value") || !r["value"].is_number() || !(r["value"].get<double>() > 0)) {
      throw UsageError(fmt::format("{}: row {}: \"value\" should be a number above 0", origin, row.id));
    }
    row.value = r["value"].get<double>();
    const json& src = r.value("source", json());
    if (!src.is_object()) throw UsageError(fmt::format("{}: row {}: \"source\" should be an object", origin, row.id));
    row.source_title = text(src, "title", origin, row.id);
    row.source_url = text(src, "url", origin, row.id);
    row.source_commit = text(src, "commit", origin, row.id, false);
    t.rows_.push_back(std::move(row));
  }
  return t;
}

std::optional<ReferenceMatch> ReferenceTable::match(const std::string& gpu_key, const ResultEntry& e,
                                                    const std::string& metric, double value) const {
  if (!(value > 0)) return std::nullopt;
  std::optional<ReferenceMatch> best;
  // Rank: exact before best-over-shapes before a differing size; then the most axes.
  auto rank = [](const ReferenceMatch& m) {
    const int tier = !m.differs.empty() ? 2 : m.row->kind == "best_over_shapes" ? 1 : 0;
    return std::pair<int, int>(tier, -static_cast<int>(m.row->axes.size()));
  };
  double best_size_gap = std::numeric_limits<double>::infinity();
  for (const ReferenceRow& row : rows_) {
    if (row.gpu != gpu_key || row.suite != e.suite || row.metric != metric) continue;
    if (row.ranks) {
      const auto ranks = number_at(e.collective, {"ranks"});
      if (!ranks || static_cast<int>(*ranks) != *row.ranks) continue;
    }
    bool ok = true;
    std::string differs;
    double size_gap = 0;
    for (const auto& [axis, want] : row.axes.items()) {
      auto it = e.axes.find(axis);
      if (it == e.axes.end()) {
        ok = false;
        break;
      }
      if (*it == want) continue;
      if (axis == "size" && it->is_number() && want.is_number() && it->get<double>() > 0) {
        // A message or buffer size that differs: the nearest row is still named, with the difference.
        size_gap = std::fabs(std::log2(it->get<double>() / want.get<double>()));
        differs = fmt::format("size {}, the published figure's {}", size_text(it->get<double>()), size_text(want.get<double>()));
        continue;
      }
      ok = false;
      break;
    }
    if (!ok) continue;
    if (row.min_size) {
      auto it = e.axes.find("size");
      const double size = it != e.axes.end() && it->is_number() ? it->get<double>() : 0.0;
      if (size < static_cast<double>(*row.min_size)) {
        size_gap = size > 0 ? std::log2(static_cast<double>(*row.min_size) / size) : 64.0;
        differs = fmt::format("size {}, under the {} the published figure applies from (a smaller size measures caches or latency, not the sustained rate)",
                              size_text(size), size_text(static_cast<double>(*row.min_size)));
      }
    }
    ReferenceMatch m{&row, 100 * value / row.value, differs};
    if (!best || rank(m) < rank(*best) || (rank(m) == rank(*best) && size_gap < best_size_gap)) {
      best = m;
      best_size_gap = size_gap;
    }
  }
  return best;
}

}  // namespace gpubench::reports
