#pragma once
// The GPU spec sheet: datasheet peaks per GPU model, read from data/gpus.json (embedded in the
// binary at build time; a file given with --spec-sheet replaces it). Every figure carries its
// source in the JSON. Dense figures only, never the with-sparsity ones.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench::reports {

struct GpuSpec {
  std::string key;                   // "h100-sxm"
  std::string name;                  // "NVIDIA H100 SXM5 80GB"
  std::vector<std::string> match;    // ECMAScript regexes tried on the CUDA device name
  std::map<std::string, double> peaks;  // peak key -> TFLOP/s (or GB/s for "memory_bandwidth")
  std::optional<double> tdp_w;
  std::string source;                // document(s) the figures come from
};

class SpecSheet {
 public:
  // The copy of data/gpus.json compiled into the binary.
  static SpecSheet builtin();
  // Throws gpubench::UsageError with one line naming the file and the problem.
  static SpecSheet from_file(const std::filesystem::path& path);
  static SpecSheet from_json_text(std::string_view text, std::string_view origin);

  // The entry whose `match` regexes match `device_name` (first in file order), or nullptr.
  const GpuSpec* find(std::string_view device_name) const;
  // Shortcut: the figure for `peak_key` on that device, if both are known.
  std::optional<double> peak(std::string_view device_name, std::string_view peak_key) const;
  const std::vector<GpuSpec>& gpus() const { return gpus_; }

 private:
  std::vector<GpuSpec> gpus_;
};

}  // namespace gpubench::reports
