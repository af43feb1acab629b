#pragma once
// Published, measured figures (data/reference.json, compiled in) matched to results: "is this
// normal?" (issue 27). A datasheet figure no real GPU reaches cannot say whether 81% of peak is
// healthy; a published measurement of the same thing on the same GPU can. Each row names its
// GPU (a key of data/gpus.json), what it measures as a selector on suite and axes, the metric
// and value, its source, software stack and configuration (data/README.md).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/results_reader.hpp"

namespace gpubench::reports {

struct ReferenceRow {
  std::string id, gpu, measures, suite, metric, unit, configuration, stack, date, checked, notes;
  std::string source_title, source_url, source_commit;
  nlohmann::json axes = nlohmann::json::object();  // every one must equal the entry's...
  std::optional<int> ranks;                         // ...and its rank count, where given
  // The smallest `size` axis the published figure applies to: device-memory bandwidth is
  // measured out of every cache, and a smaller size is named as differing, not compared.
  std::optional<std::int64_t> min_size;
  // "best_over_shapes": a maximum over a sweep of shapes (MAMF): it applies to every shape of
  // its dtype, as the ceiling that shape's figure is held against.
  std::string kind;
  double value = 0;
  std::string short_source() const;  // "ml-engineering MAMF, torch 2.7.0+cu126, CUDA 12.6"
};

struct ReferenceMatch {
  const ReferenceRow* row = nullptr;
  double pct = 0;       // the entry's value as % of the row's
  std::string differs;  // "" when the configuration matches; else what differs ("size 1 GiB, the row's 8 GiB")
};

class ReferenceTable {
 public:
  static const ReferenceTable& builtin();
  static ReferenceTable from_json_text(std::string_view text, std::string_view origin);  // UsageError when malformed
  const std::vector<ReferenceRow>& rows() const { return rows_; }

  // The row for an entry measured on GPU `gpu_key` whose headline is `metric` = `value`: the
  // same suite and metric, every selector axis equal (a message size may differ: the nearest
  // size is taken and the difference named), the same rank count. Of several, the one with the
  // most axes (the most specific); best-over-shapes rows come after exact ones.
  std::optional<ReferenceMatch> match(const std::string& gpu_key, const ResultEntry& e, const std::string& metric,
                                      double value) const;

 private:
  std::vector<ReferenceRow> rows_;
};

}  // namespace gpubench::reports
