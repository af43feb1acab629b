#include "bench/suites/gemm/tuning_cache.hpp"

#include "bench/suites/gemm/gemm_tune.hpp"
#include "bench/core/path_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace gpubench::suites::gemm {
namespace {

constexpr const char* kFormat = "gpubench-gemm-tuning";
constexpr int kVersion = 1;

using Json = nlohmann::ordered_json;

std::string text_field(const Json& e, const char* name) {
  const auto it = e.find(name);
  if (it == e.end() || !it->is_string()) throw std::invalid_argument(fmt::format("'{}' missing or not a string", name));
  return it->get<std::string>();
}
std::int64_t int_field(const Json& e, const char* name) {
  const auto it = e.find(name);
  if (it == e.end() || !it->is_number_integer() || it->get<std::int64_t>() < 1) {
    throw std::invalid_argument(fmt::format("'{}' missing or not a positive integer", name));
  }
  return it->get<std::int64_t>();
}
double time_field(const Json& e, const char* name) {
  const auto it = e.find(name);
  if (it == e.end() || !it->is_number() || !(it->get<double>() > 0)) {
    throw std::invalid_argument(fmt::format("'{}' missing or not a positive number", name));
  }
  return it->get<double>();
}
blas::AlgoConfig algo_field(const Json& e, const char* name) {
  const auto it = e.find(name);
  if (it == e.end()) throw std::invalid_argument(fmt::format("'{}' missing", name));
  try {
    return it->get<blas::AlgoConfig>();
  } catch (const std::exception& ex) {
    throw std::invalid_argument(fmt::format("'{}': {}", name, ex.what()));
  }
}

Json to_json(const TuningEntry& t) {
  const TuningKey& k = t.key;
  return {{"gpu", k.gpu},
          {"cc", k.cc},
          {"cublaslt", k.cublaslt},
          {"dtype", k.dtype},
          {"layout", k.layout},
          {"m", k.m},
          {"n", k.n},
          {"k", k.k},
          {"batch", k.batch},
          {"epilogue", k.epilogue},
          {"algo", Json(t.algo)},
          {"time_s", t.time_s},
          {"default_algo", Json(t.default_algo)},
          {"default_time_s", t.default_time_s},
          {"candidates", t.candidates}};
}

TuningEntry entry_from(const Json& e) {
  if (!e.is_object()) throw std::invalid_argument("not an object");
  TuningEntry t;
  t.key.gpu = text_field(e, "gpu");
  t.key.cc = text_field(e, "cc");
  t.key.cublaslt = text_field(e, "cublaslt");
  t.key.dtype = text_field(e, "dtype");
  t.key.layout = text_field(e, "layout");
  t.key.m = int_field(e, "m");
  t.key.n = int_field(e, "n");
  t.key.k = int_field(e, "k");
  t.key.batch = int_field(e, "batch");
  t.key.epilogue = text_field(e, "epilogue");
  t.algo = algo_field(e, "algo");
  t.time_s = time_field(e, "time_s");
  t.default_algo = algo_field(e, "default_algo");
  t.default_time_s = time_field(e, "default_time_s");
  t.candidates = static_cast<int>(int_field(e, "candidates"));
  return t;
}

}  // namespace

std::string TuningKey::shape_label() const {
  return fmt::format("{} {} {}x{}x{} batch {} epilogue {}", dtype, layout, m, n, k, batch, epilogue);
}

double TuningEntry::gain_pct() const { return time_s > 0 ? (default_time_s / time_s - 1.0) * 100.0 : 0.0; }

TuningCache TuningCache::parse(const std::string& text, const std::string& path) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw TuningCacheError(fmt::format("tuning cache {}: not valid JSON (byte {})", path, e.byte));
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat) {
    throw TuningCacheError(fmt::format("tuning cache {}: not a gpubench GEMM tuning cache (\"format\" is not \"{}\")", path, kFormat));
  }
  if (!j.contains("version") || j["version"] != kVersion) {
    throw TuningCacheError(fmt::format("tuning cache {}: unsupported version {} (this gpubench reads version {})", path,
                                       j.contains("version") ? j["version"].dump() : "(none)", kVersion));
  }
  if (!j.contains("entries") || !j["entries"].is_array()) {
    throw TuningCacheError(fmt::format("tuning cache {}: \"entries\" missing or not an array", path));
  }
  TuningCache cache;
  std::size_t index = 0;
  for (const Json& e : j["entries"]) {
    try {
      cache.put(entry_from(e));
    } catch (const std::exception& ex) {
      throw TuningCacheError(fmt::format("tuning cache {}: entry {}: {}", path, index, ex.what()));
    }
    ++index;
  }
  return cache;
}

TuningCache TuningCache::load(const std::string& path) {
  // A folder opens as a stream whose reads fail, a FIFO would wait for a writer: say what is there.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw TuningCacheError(fmt::format("tuning cache {}: cannot be read: it {}", path, describe_path(path)));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TuningCacheError(fmt::format("tuning cache {}: cannot be read: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw TuningCacheError(fmt::format("tuning cache {}: read error", path));
  return parse(text.str(), path);
}

std::string TuningCache::dump() const {
  Json entries = Json::array();
  for (const TuningEntry& e : entries_) entries.push_back(to_json(e));
  Json j{{"format", kFormat}, {"version", kVersion}, {"entries", std::move(entries)}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void TuningCache::save(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << dump();
    out.close();
    if (!out) throw TuningCacheError(fmt::format("tuning cache {}: cannot write {}", path, tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw TuningCacheError(fmt::format("tuning cache {}: cannot replace the file", path));
  }
}

const TuningEntry* TuningCache::find(const TuningKey& key) const {
  for (const TuningEntry& e : entries_)
    if (e.key == key) return &e;
  return nullptr;
}

void TuningCache::put(TuningEntry entry) {
  for (TuningEntry& e : entries_) {
    if (e.key == entry.key) {
      e = std::move(entry);
      return;
    }
  }
  entries_.push_back(std::move(entry));
}

std::size_t TuningCache::count_foreign(const std::vector<std::pair<std::string, std::string>>& devices,
                                       const std::string& cublaslt) const {
  std::size_t n = 0;
  for (const TuningEntry& e : entries_) {
    bool ours = false;
    for (const auto& [gpu, cc] : devices) ours = ours || (e.key.gpu == gpu && e.key.cc == cc && e.key.cublaslt == cublaslt);
    if (!ours) ++n;
  }
  return n;
}

std::string format_tuning_report(const std::vector<TuningEntry>& entries) {
  std::size_t width = 5;
  for (const TuningEntry& e : entries) width = std::max(width, e.key.shape_label().size());
  std::string out = fmt::format("{:<{}}  {:>12}  {:>12}  {:>7}  {}\n", "shape", width, "default", "best", "gain", "best algorithm");
  auto ms = [](double s) { return fmt::format("{:.4f} ms", s * 1e3); };
  for (const TuningEntry& e : entries) {
    const std::string algo = e.algo == e.default_algo ? "(the default) " + blas::to_string(e.algo) : blas::to_string(e.algo);
    out += fmt::format("{:<{}}  {:>12}  {:>12}  {:>+6.1f}%  {}\n", e.key.shape_label(), width, ms(e.default_time_s),
                       ms(e.time_s), e.gain_pct(), algo);
  }
  return out;
}

}  // namespace gpubench::suites::gemm
