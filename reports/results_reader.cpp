// Reading gpubench results files (docs/results-format.md).
#include "reports/json_error.hpp"
#include "reports/results_reader.hpp"

#include <exception>
#include <fstream>
#include <future>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "bench/core/errors.hpp"
#include "reports/input_file.hpp"

namespace gpubench::reports {

namespace {

// The document is parsed keeping object keys in file order, so that axes keep the order the
// suite declared them in (nlohmann::json would sort m, n, k, dtype into dtype, k, m, n).
using ordered = nlohmann::ordered_json;
using nlohmann::json;

constexpr int kSchemaVersion = 1;

[[noreturn]] void fail(const std::filesystem::path& path, std::string_view problem) {
  throw UsageError(fmt::format("{}: {}", path.string(), problem));
}

// Reads the whole file (a regular file of bounded size: input_file.hpp); parsing happens in
// read_results_text.
std::string load_text(const std::filesystem::path& path) { return read_input_file(path, ""); }

ordered parse_json(std::string_view text, const std::filesystem::path& path) {
  try {
    return parse_json_without_duplicate_keys<ordered>(text);
  } catch (const ordered::exception& e) {  // parse_error, and out_of_range for a number too large (1e999)
    fail(path, fmt::format("not valid JSON ({})", one_line_parse_message(e.what())));
  } catch (const std::runtime_error& e) {
    fail(path, fmt::format("corrupt: {}", e.what()));
  }
}

void check_gpubench_context(const std::filesystem::path& path, const ordered& doc) {
  if (!doc.is_object()) fail(path, "not a gpubench results file (no context.gpubench)");
  auto context = doc.find("context");
  if (context == doc.end() || !context->is_object()) {
    fail(path, "not a gpubench results file (no context.gpubench)");
  }
  auto gb = context->find("gpubench");
  if (gb == context->end() || !gb->is_object()) {
    fail(path, "not a gpubench results file (no context.gpubench)");
  }
  auto version = gb->find("schema_version");
  if (version == gb->end()) {
    fail(path, fmt::format("context.gpubench has no schema_version (this gpubench reads {})",
                           kSchemaVersion));
  }
  if (!version->is_number_integer() || version->get<long long>() != kSchemaVersion) {
    fail(path, fmt::format("schema_version {} is not supported (this gpubench reads {})",
                           version->dump(), kSchemaVersion));
  }
}

// Accessors for one entry; `where` names the entry in error messages.
struct EntryReader {
  const std::filesystem::path& path;
  const ordered& obj;
  std::string where;

  [[noreturn]] void bad(std::string_view field, std::string_view expected) const {
    fail(path, fmt::format("{}: \"{}\" should be {}", where, field, expected));
  }

  std::string string(const ordered& from, const char* field) const {
    auto it = from.find(field);
    if (it == from.end() || it->is_null()) return {};
    if (!it->is_string()) bad(field, "a string");
    return it->get<std::string>();
  }

  json object(const ordered& from, const char* field) const {
    auto it = from.find(field);
    if (it == from.end() || it->is_null()) return json::object();
    if (!it->is_object()) bad(field, "an object");
    return json(*it);
  }

  // A list of strings (gpubench.suspect); absent or null: empty.
  std::vector<std::string> strings(const ordered& from, const char* field) const {
    std::vector<std::string> out;
    auto it = from.find(field);
    if (it == from.end() || it->is_null()) return out;
    if (!it->is_array()) bad(field, "a list of strings");
    for (const auto& s : *it) {
      if (!s.is_string()) bad(field, "a list of strings");
      out.push_back(s.get<std::string>());
    }
    return out;
  }

  bool flag(const char* field) const {
    auto it = obj.find(field);
    if (it == obj.end() || it->is_null()) return false;
    if (!it->is_boolean()) bad(field, "true or false");
    return it->get<bool>();
  }
};

// Google Benchmark writes real_time in the entry's time_unit.
double seconds_per_unit(const EntryReader& r, const std::string& unit) {
  static const std::map<std::string, double, std::less<>> kUnits = {
      {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
  auto it = kUnits.find(unit);
  if (it == kUnits.end()) r.bad("time_unit", "one of ns, us, ms, s");
  return it->second;
}

void read_timing(const EntryReader& r, ResultEntry& e) {
  if (auto it = r.obj.find("real_time"); it != r.obj.end() && !it->is_null()) {
    if (!it->is_number()) r.bad("real_time", "a number");
    std::string unit = r.string(r.obj, "time_unit");
    if (unit.empty()) unit = "ns";  // Google Benchmark's default unit
    e.real_time_s = it->get<double>() * seconds_per_unit(r, unit);
  }
  if (auto it = r.obj.find("iterations"); it != r.obj.end() && !it->is_null()) {
    if (!it->is_number_integer()) r.bad("iterations", "an integer");
    e.iterations = it->get<std::int64_t>();
  }
}

ResultEntry read_entry(const std::filesystem::path& path, const ordered& obj, std::size_t index) {
  if (!obj.is_object()) fail(path, fmt::format("benchmarks[{}] is not an object", index));
  std::string name;
  if (auto it = obj.find("name"); it != obj.end() && it->is_string()) name = it->get<std::string>();
  EntryReader r{path, obj, fmt::format("benchmarks[{}] \"{}\"", index, name)};

  // One entry without the gpubench object means the file (or part of it) came from another
  // Google Benchmark program; mixing such rows into a gpubench report would mislead.
  auto gb = obj.find("gpubench");
  if (gb == obj.end() || !gb->is_object()) {
    fail(path, fmt::format("not a gpubench results file ({} has no gpubench object)", r.where));
  }

  ResultEntry e;
  e.name = name;
  e.run_type = r.string(obj, "run_type");
  if (e.run_type.empty()) e.run_type = "iteration";
  e.aggregate_name = r.string(obj, "aggregate_name");
  e.suite = r.string(*gb, "suite");
  e.device = r.string(*gb, "device");
  e.device_name = r.string(*gb, "device_name");
  e.status = r.string(*gb, "status");
  e.reason = r.string(*gb, "reason");

  const bool error = r.flag("error_occurred");
  if (e.status.empty()) e.status = error ? "failed" : "ok";
  if (e.reason.empty() && error) e.reason = r.string(obj, "error_message");

  e.axes = r.object(*gb, "axes");
  if (auto axes = gb->find("axes"); axes != gb->end() && axes->is_object()) {
    for (const auto& [axis, value] : axes->items()) e.axis_names.push_back(axis);
  }
  e.metrics = r.object(*gb, "metrics");
  e.details = r.object(*gb, "details");
  e.measurement = r.object(*gb, "measurement");
  e.verification = r.object(*gb, "verification");
  e.profile = r.object(*gb, "profile");
  e.telemetry = r.object(*gb, "telemetry");
  e.collective = r.object(*gb, "collective");
  e.evaluate = r.object(*gb, "evaluate");
  e.suspect = r.strings(*gb, "suspect");
  if (auto it = gb->find("ranks"); it != gb->end()) {
    if (!it->is_array()) r.bad("gpubench.ranks", "an array");
    e.ranks = json(*it);
  }
  if (auto it = obj.find("repetition_index"); it != obj.end() && it->is_number_integer()) {
    e.repetition_index = it->get<std::int64_t>();
  }
  read_timing(r, e);
  return e;
}

// The range check of every figure a reader believes of an ok entry, once, here (issue 26): a
// time per run above 0 and at most 1e6 s (11 days: no benchmark case runs that long), and rates
// (TFLOP/s, GB/s, anything per second) above 0 and at most 1e18 (a zettaFLOP/s per device is
// beyond any hardware by nine orders of magnitude). Returns what is wrong, or "".
std::string figure_out_of_range(const ResultEntry& e) {
  constexpr double kMaxSeconds = 1e6, kMaxRate = 1e18;
  if (e.real_time_s && !(*e.real_time_s > 0 && *e.real_time_s <= kMaxSeconds)) {
    return fmt::format("real_time {:g} s (expected above 0 and at most {:g} s)", *e.real_time_s, kMaxSeconds);
  }
  for (const auto& [key, v] : e.metrics.items()) {
    if (!v.is_number()) continue;
    const bool rate = key == "tflops" || key == "tops" || key == "gbps" || key == "gb_per_s" ||
                      (key.size() > 6 && key.compare(key.size() - 6, 6, "_per_s") == 0);
    const double x = v.get<double>();
    if (rate && !(x > 0 && x <= kMaxRate)) {
      return fmt::format("metrics.{} {:g} (a rate: expected above 0 and at most {:g})", key, x, kMaxRate);
    }
  }
  return "";
}

}  // namespace

std::string ResultsFile::host() const {
  auto it = context.find("host_name");
  if (it == context.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

ResultEntry read_result_entry(const ordered& entry) {
  static const std::filesystem::path kThisRun("(this run)");
  return read_entry(kThisRun, entry, 0);
}

ResultsFile read_results(const std::filesystem::path& path) { return read_results_text(load_text(path), path); }

std::vector<ResultsFile> read_results_files(const std::vector<std::filesystem::path>& paths) {
  // Parsing dominates `report` and `compare` on large inputs, and files are independent.
  constexpr std::size_t kMaxThreads = 16;
  std::vector<ResultsFile> out;
  out.reserve(paths.size());
  for (std::size_t start = 0; start < paths.size(); start += kMaxThreads) {
    std::vector<std::future<ResultsFile>> pending;
    for (std::size_t i = start; i < paths.size() && i < start + kMaxThreads; ++i) {
      pending.push_back(std::async(std::launch::async, [&p = paths[i]] { return read_results(p); }));
    }
    for (auto& f : pending) f.wait();  // every thread finishes before an error propagates
    for (auto& f : pending) out.push_back(f.get());
  }
  return out;
}

ResultsFile read_results_text(std::string_view text, const std::filesystem::path& path) {
  ordered doc = parse_json(text, path);
  check_gpubench_context(path, doc);

  ResultsFile file;
  file.path = path;
  file.context = json(doc["context"]);
  if (auto gb = doc.find("gpubench"); gb != doc.end() && gb->is_object()) {
    if (auto s = gb->find("summaries"); s != gb->end() && s->is_object()) file.summaries = json(*s);
    if (auto t = gb->find("tuning"); t != gb->end() && t->is_object()) file.tuning = json(*t);
    if (auto t = gb->find("mamf"); t != gb->end() && t->is_object()) file.mamf = json(*t);
    if (auto t = gb->find("storage_au"); t != gb->end() && t->is_object()) file.storage_au = json(*t);
    if (auto s = gb->find("soak"); s != gb->end() && s->is_object()) file.soak = json(*s);
  }

  // An interrupted run may have finished no case yet; that is an empty list, not an error.
  auto benchmarks = doc.find("benchmarks");
  if (benchmarks == doc.end() || benchmarks->is_null()) return file;
  if (!benchmarks->is_array()) fail(path, "\"benchmarks\" should be a list");
  for (std::size_t i = 0; i < benchmarks->size(); ++i) {
    file.entries.push_back(read_entry(path, (*benchmarks)[i], i));
    ResultEntry& e = file.entries.back();
    if (e.status != "ok") continue;
    if (const std::string problem = figure_out_of_range(e); !problem.empty()) {
      // Marked, with the reason, not dropped and not believed: every reader (report, compare,
      // scaling, history) then sees a failed entry that says why.
      file.warnings.push_back(fmt::format("{}: benchmarks[{}] \"{}\": {}; read as failed", path.string(), i, e.name, problem));
      e.status = "failed";
      e.reason = "out-of-range figure in the file: " + problem;
    }
  }
  // The same case and repetition twice (files concatenated by hand, a tool that appended): the
  // readers merge them as repetitions, which is worth a warning, never silence.
  std::map<std::string, int> seen;
  for (const ResultEntry& e : file.entries) {
    const std::string key = fmt::format("{}|{}|{}|{}", e.name, e.run_type, e.aggregate_name,
                                        e.repetition_index ? std::to_string(*e.repetition_index) : "-");
    if (++seen[key] == 2) {
      file.warnings.push_back(fmt::format("{}: case {} ({}{}) appears more than once; its entries are merged",
                                          path.string(), e.name, e.run_type,
                                          e.repetition_index ? fmt::format(", repetition {}", *e.repetition_index) : ""));
    }
  }
  return file;
}

}  // namespace gpubench::reports
