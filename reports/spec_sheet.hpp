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
  std::optional<double> memory_gb;
  std::optional<double> sm_count;
  std::optional<double> boost_clock_mhz;
  // Video engines (`nvenc`, `nvdec`, `nvjpg`: counts, 0 for none), where the entry states them.
  std::optional<int> nvenc, nvdec, nvjpg;
  // Peak key -> the SM clock (MHz) that datasheet figure assumes, where the entry states it
  // (`peak_clock_mhz`, derived in `peak_clock_derivation`). A GPU may boost above it (H100 SXM:
  // tensor figures at 1830 MHz, maximum clock 1980), and then measures above the figure.
  std::map<std::string, double> peak_clock_mhz;
  std::string peak_clock_derivation;
  std::string source;                // document(s) the figures come from, and derivations
  // Figure (a peak key, tdp_w, memory_gb, sm_count, boost_clock_mhz, nvenc, nvdec, nvjpg) -> id of the document in
  // SpecSheet::documents() it comes from. When present, every figure of the entry has one.
  std::map<std::string, std::string> sources;
  // Figure -> why the entry has no such figure (no such data path, not published, conflicting).
  std::map<std::string, std::string> absent;
};

// A document figures are cited from.
struct SpecDocument {
  std::string title;  // "NVIDIA A100 Tensor Core GPU Datasheet (2021)"
  std::string url;
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
  // The clock (MHz) that figure assumes, where the sheet states it.
  std::optional<double> peak_clock(std::string_view device_name, std::string_view peak_key) const;
  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  // Document id -> document, from the sheet's top-level "documents".
  const std::map<std::string, SpecDocument>& documents() const { return documents_; }

 private:
  std::vector<GpuSpec> gpus_;
  std::map<std::string, SpecDocument> documents_;
};

}  // namespace gpubench::reports
