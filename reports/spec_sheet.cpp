// The GPU spec sheet (data/gpus.json): parsing, validation and lookup by CUDA device name.
#include "reports/json_error.hpp"
#include "reports/spec_sheet.hpp"

#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/core/errors.hpp"
#include "reports/input_file.hpp"

namespace gpubench::reports {

// Defined in the builtin_specs.cpp that CMake generates from data/gpus.json.
extern const std::string_view kBuiltinGpusJson;

namespace {

using nlohmann::json;

constexpr int kSchemaVersion = 1;

// Every problem is reported the same way, naming where the sheet came from.
[[noreturn]] void fail(std::string_view origin, std::string_view problem) {
  throw UsageError(fmt::format("spec sheet {}: {}", origin, problem));
}

std::string required_string(const json& gpu, const char* field, std::string_view origin,
                            std::string_view where) {
  auto it = gpu.find(field);
  if (it == gpu.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    fail(origin, fmt::format("{}: \"{}\" must be a non-empty string", where, field));
  }
  return it->get<std::string>();
}

std::optional<double> optional_positive(const json& gpu, const char* field,
                                        std::string_view origin, std::string_view where) {
  auto it = gpu.find(field);
  if (it == gpu.end()) return std::nullopt;
  if (!it->is_number() || !(it->get<double>() > 0) || !std::isfinite(it->get<double>())) {
    fail(origin, fmt::format("{}: \"{}\" must be a positive number", where, field));
  }
  return it->get<double>();
}

// A count of engines: a whole number from 0 (none) to 64.
std::optional<int> optional_count(const json& gpu, const char* field, std::string_view origin, std::string_view where) {
  auto it = gpu.find(field);
  if (it == gpu.end()) return std::nullopt;
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0 || it->get<std::int64_t>() > 64) {
    fail(origin, fmt::format("{}: \"{}\" must be a whole number from 0 to 64", where, field));
  }
  return static_cast<int>(it->get<std::int64_t>());
}

// Peak keys are lower-case identifiers (bf16_tensor, memory_bandwidth); the set is open so a
// new data path needs no code change, but the form catches a pasted label ("BF16 Tensor").
bool is_peak_key(const std::string& key) {
  if (key.empty()) return false;
  for (char c : key) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

std::vector<std::string> parse_match(const json& gpu, std::string_view origin,
                                     std::string_view where) {
  auto it = gpu.find("match");
  if (it == gpu.end() || !it->is_array() || it->empty()) {
    fail(origin, fmt::format("{}: \"match\" must be a non-empty list of regexes", where));
  }
  std::vector<std::string> patterns;
  for (const json& p : *it) {
    if (!p.is_string() || p.get_ref<const std::string&>().empty()) {
      fail(origin, fmt::format("{}: every \"match\" entry must be a non-empty string", where));
    }
    const auto& pattern = p.get_ref<const std::string&>();
    try {
      std::regex compiled(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      fail(origin, fmt::format("{}: match regex \"{}\" does not compile ({})", where, pattern,
                               e.what()));
    }
    patterns.push_back(pattern);
  }
  return patterns;
}

std::map<std::string, double> parse_peaks(const json& gpu, std::string_view origin,
                                          std::string_view where) {
  auto it = gpu.find("peaks");
  if (it == gpu.end() || !it->is_object() || it->empty()) {
    fail(origin, fmt::format("{}: \"peaks\" must be a non-empty object", where));
  }
  std::map<std::string, double> peaks;
  for (const auto& [key, value] : it->items()) {
    if (!is_peak_key(key)) {
      fail(origin, fmt::format("{}: peak key \"{}\" is not of the form lower_case_name", where,
                               key));
    }
    if (!value.is_number() || !(value.get<double>() > 0) ||
        !std::isfinite(value.get<double>())) {
      fail(origin, fmt::format("{}: peaks.{} must be a positive number", where, key));
    }
    peaks.emplace(key, value.get<double>());
  }
  return peaks;
}

// An optional object of non-empty strings ("sources", "absent").
std::map<std::string, std::string> string_map(const json& gpu, const char* field, std::string_view origin,
                                              std::string_view where) {
  std::map<std::string, std::string> out;
  auto it = gpu.find(field);
  if (it == gpu.end()) return out;
  if (!it->is_object()) fail(origin, fmt::format("{}: \"{}\" must be an object", where, field));
  for (const auto& [key, value] : it->items()) {
    if (!value.is_string() || value.get_ref<const std::string&>().empty()) {
      fail(origin, fmt::format("{}: {}.{} must be a non-empty string", where, field, key));
    }
    out.emplace(key, value.get<std::string>());
  }
  return out;
}

// The figures an entry states: its peak keys and the optional numeric fields it gives.
std::set<std::string> figures_of(const GpuSpec& spec) {
  std::set<std::string> out;
  for (const auto& [key, value] : spec.peaks) out.insert(key);
  if (spec.tdp_w) out.insert("tdp_w");
  if (spec.memory_gb) out.insert("memory_gb");
  if (spec.sm_count) out.insert("sm_count");
  if (spec.boost_clock_mhz) out.insert("boost_clock_mhz");
  if (spec.nvenc) out.insert("nvenc");
  if (spec.nvdec) out.insert("nvdec");
  if (spec.nvjpg) out.insert("nvjpg");
  return out;
}

// "sources" names a known document for every figure and only for figures; "absent" names
// figures the entry does not give.
void check_sources(const GpuSpec& spec, const std::map<std::string, SpecDocument>& documents, std::string_view origin,
                   std::string_view where) {
  const std::set<std::string> figures = figures_of(spec);
  for (const auto& [figure, doc] : spec.sources) {
    if (!figures.contains(figure)) {
      fail(origin, fmt::format("{}: sources.{} cites a figure the entry does not give", where, figure));
    }
    if (!documents.contains(doc)) {
      fail(origin, fmt::format("{}: sources.{} names unknown document \"{}\"", where, figure, doc));
    }
  }
  if (!spec.sources.empty()) {
    for (const std::string& figure : figures) {
      if (!spec.sources.contains(figure)) fail(origin, fmt::format("{}: {} has no entry in \"sources\"", where, figure));
    }
  }
  for (const auto& [figure, reason] : spec.absent) {
    if (figures.contains(figure)) {
      fail(origin, fmt::format("{}: absent.{} names a figure the entry gives", where, figure));
    }
  }
}

std::map<std::string, SpecDocument> parse_documents(const json& doc, std::string_view origin) {
  std::map<std::string, SpecDocument> out;
  auto it = doc.find("documents");
  if (it == doc.end()) return out;
  if (!it->is_object()) fail(origin, "\"documents\" must be an object");
  for (const auto& [id, d] : it->items()) {
    const std::string where = fmt::format("documents.{}", id);
    if (!d.is_object()) fail(origin, fmt::format("{} must be an object", where));
    for (const auto& [field, value] : d.items()) {
      if (field != "title" && field != "url") fail(origin, fmt::format("{}: unknown field \"{}\"", where, field));
    }
    SpecDocument document{required_string(d, "title", origin, where), required_string(d, "url", origin, where)};
    out.emplace(id, std::move(document));
  }
  return out;
}

// "peak_clock_mhz": peak key (one the entry gives) -> positive MHz, with the derivation beside
// it in "peak_clock_derivation" (a clock is read off the figures, never a document's claim).
void parse_peak_clocks(const json& gpu, GpuSpec& spec, std::string_view origin, std::string_view where) {
  auto it = gpu.find("peak_clock_mhz");
  const bool has_derivation = gpu.contains("peak_clock_derivation");
  if (it == gpu.end()) {
    if (has_derivation) fail(origin, fmt::format("{}: \"peak_clock_derivation\" without \"peak_clock_mhz\"", where));
    return;
  }
  if (!it->is_object() || it->empty()) fail(origin, fmt::format("{}: \"peak_clock_mhz\" must be a non-empty object", where));
  for (const auto& [key, value] : it->items()) {
    if (!spec.peaks.contains(key)) {
      fail(origin, fmt::format("{}: peak_clock_mhz.{} names a peak the entry does not give", where, key));
    }
    if (!value.is_number() || !(value.get<double>() > 0) || !std::isfinite(value.get<double>())) {
      fail(origin, fmt::format("{}: peak_clock_mhz.{} must be a positive number", where, key));
    }
    spec.peak_clock_mhz.emplace(key, value.get<double>());
  }
  spec.peak_clock_derivation = required_string(gpu, "peak_clock_derivation", origin, where);
}

// Rejecting unknown fields turns a misspelt optional field into an error instead of a
// silently missing figure.
void check_known_fields(const json& gpu, std::string_view origin, std::string_view where) {
  static const std::set<std::string> kKnown = {"key",      "name",     "match",           "peaks",
                                               "tdp_w",    "memory_gb", "sm_count",        "boost_clock_mhz",
                                               "nvenc",    "nvdec",     "nvjpg",
                                               "peak_clock_mhz", "peak_clock_derivation",
                                               "source",   "sources",  "absent",          "notes"};
  for (const auto& [field, value] : gpu.items()) {
    if (!kKnown.contains(field)) {
      fail(origin, fmt::format("{}: unknown field \"{}\"", where, field));
    }
  }
}

GpuSpec parse_gpu(const json& gpu, std::size_t index, const std::map<std::string, SpecDocument>& documents,
                  std::string_view origin) {
  std::string where = fmt::format("gpus[{}]", index);
  if (!gpu.is_object()) fail(origin, fmt::format("{} must be an object", where));

  GpuSpec spec;
  spec.key = required_string(gpu, "key", origin, where);
  where = fmt::format("gpus[{}] ({})", index, spec.key);
  check_known_fields(gpu, origin, where);
  spec.name = required_string(gpu, "name", origin, where);
  spec.match = parse_match(gpu, origin, where);
  spec.peaks = parse_peaks(gpu, origin, where);
  spec.tdp_w = optional_positive(gpu, "tdp_w", origin, where);
  spec.memory_gb = optional_positive(gpu, "memory_gb", origin, where);
  spec.sm_count = optional_positive(gpu, "sm_count", origin, where);
  spec.boost_clock_mhz = optional_positive(gpu, "boost_clock_mhz", origin, where);
  spec.nvenc = optional_count(gpu, "nvenc", origin, where);
  spec.nvdec = optional_count(gpu, "nvdec", origin, where);
  spec.nvjpg = optional_count(gpu, "nvjpg", origin, where);
  parse_peak_clocks(gpu, spec, origin, where);
  spec.source = required_string(gpu, "source", origin, where);
  spec.sources = string_map(gpu, "sources", origin, where);
  spec.absent = string_map(gpu, "absent", origin, where);
  check_sources(spec, documents, origin, where);
  if (auto notes = gpu.find("notes"); notes != gpu.end() && !notes->is_string()) {
    fail(origin, fmt::format("{}: \"notes\" must be a string", where));
  }
  return spec;
}

std::vector<GpuSpec> parse_sheet(const json& doc, std::string_view origin,
                                 std::map<std::string, SpecDocument>& documents) {
  if (!doc.is_object()) fail(origin, "the top level must be an object");
  for (const auto& [field, value] : doc.items()) {
    if (field != "schema_version" && field != "note" && field != "gpus" && field != "documents") {
      fail(origin, fmt::format("unknown top-level field \"{}\"", field));
    }
  }
  auto version = doc.find("schema_version");
  if (version == doc.end() || !version->is_number_integer()) {
    fail(origin, "\"schema_version\" must be an integer");
  }
  if (version->get<long long>() != kSchemaVersion) {
    fail(origin, fmt::format("schema_version {} is not supported (this gpubench reads {})",
                             version->dump(), kSchemaVersion));
  }
  auto gpus = doc.find("gpus");
  if (gpus == doc.end() || !gpus->is_array()) fail(origin, "\"gpus\" must be a list");
  documents = parse_documents(doc, origin);

  std::vector<GpuSpec> specs;
  std::set<std::string> keys;
  for (std::size_t i = 0; i < gpus->size(); ++i) {
    GpuSpec spec = parse_gpu((*gpus)[i], i, documents, origin);
    if (!keys.insert(spec.key).second) {
      fail(origin, fmt::format("gpus[{}]: key \"{}\" appears twice", i, spec.key));
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

bool matches(const GpuSpec& spec, std::string_view device_name) {
  for (const auto& pattern : spec.match) {
    // Compiled per call: lookups are few (one per device and report), and the patterns were
    // already checked when the sheet was loaded.
    std::regex re(pattern, std::regex::ECMAScript);
    if (std::regex_search(device_name.begin(), device_name.end(), re)) return true;
  }
  return false;
}

}  // namespace

SpecSheet SpecSheet::builtin() {
  return from_json_text(kBuiltinGpusJson, "built-in data/gpus.json");
}

SpecSheet SpecSheet::from_file(const std::filesystem::path& path) {
  return from_json_text(read_input_file(path, "spec sheet"), path.string());
}

SpecSheet SpecSheet::from_json_text(std::string_view text, std::string_view origin) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    fail(origin, fmt::format("not valid JSON ({})", one_line_parse_message(e.what())));
  }
  SpecSheet sheet;
  sheet.gpus_ = parse_sheet(doc, origin, sheet.documents_);
  return sheet;
}

const GpuSpec* SpecSheet::find(std::string_view device_name) const {
  for (const auto& spec : gpus_) {
    if (matches(spec, device_name)) return &spec;
  }
  return nullptr;
}

std::optional<double> SpecSheet::peak(std::string_view device_name,
                                      std::string_view peak_key) const {
  const GpuSpec* spec = find(device_name);
  if (spec == nullptr) return std::nullopt;
  auto it = spec->peaks.find(std::string(peak_key));
  if (it == spec->peaks.end()) return std::nullopt;
  return it->second;
}

std::optional<double> SpecSheet::peak_clock(std::string_view device_name, std::string_view peak_key) const {
  const GpuSpec* spec = find(device_name);
  if (spec == nullptr) return std::nullopt;
  auto it = spec->peak_clock_mhz.find(std::string(peak_key));
  if (it == spec->peak_clock_mhz.end()) return std::nullopt;
  return it->second;
}

}  // namespace gpubench::reports
