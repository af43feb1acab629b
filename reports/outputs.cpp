// --format / --out resolution (see outputs.hpp).
#include "reports/outputs.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/core/errors.hpp"

namespace gpubench::reports {

namespace {

const char* extension(const std::string& format) {
  if (format == "md") return ".md";
  if (format == "html") return ".html";
  if (format == "csv") return ".csv";
  if (format == "json") return ".json";
  if (format == "openmetrics") return ".prom";  // node_exporter's textfile collector reads *.prom
  return ".xml";  // junit
}

}  // namespace

bool is_format_extension(std::string_view extension) {
  return std::any_of(kFormatExtensions.begin(), kFormatExtensions.end(), [&](std::string_view known) {
    return known.size() == extension.size() &&
           std::equal(known.begin(), known.end(), extension.begin(), [](char a, char b) {
             return a == std::tolower(static_cast<unsigned char>(b));
           });
  });
}

std::string output_stem(const std::string& path) {
  const std::filesystem::path p(path);
  // extension() of the file name only: a dot in a folder's name is no extension, nor is the
  // leading dot of ".json" (a hidden file's whole name).
  const std::string ext = p.has_filename() ? p.filename().extension().string() : std::string();
  if (ext.empty() || !is_format_extension(ext)) return path;
  return path.substr(0, path.size() - ext.size());
}

std::string derived_output_path(const std::string& path, std::string_view extension) {
  return output_stem(path) + std::string(extension);
}

std::vector<OutputTarget> resolve_outputs(const std::string& formats, const std::string& out,
                                          const std::vector<std::string>& allowed) {
  std::vector<std::string> list;
  std::size_t start = 0;
  while (start <= formats.size()) {
    const std::size_t comma = std::min(formats.find(',', start), formats.size());
    std::string f = formats.substr(start, comma - start);
    if (f == "markdown") f = "md";
    if (std::find(allowed.begin(), allowed.end(), f) == allowed.end()) {
      throw UsageError(fmt::format("--format '{}': {} is not one of {}", formats, f.empty() ? "an empty item" : "'" + f + "'",
                                   fmt::join(allowed, ", ")));
    }
    if (std::find(list.begin(), list.end(), f) == list.end()) list.push_back(f);
    start = comma + 1;
  }
  if (list.size() > 1 && out.empty()) {
    throw UsageError(fmt::format("--format {}: several formats need --out PATH (each gets its own extension)", formats));
  }
  std::vector<OutputTarget> targets;
  for (const auto& f : list) {
    std::string path = out;
    if (list.size() > 1) path = derived_output_path(out, extension(f));
    targets.push_back({f, path});
  }
  return targets;
}

}  // namespace gpubench::reports
