#pragma once
// The evaluate results file: one ordinary results file (Google Benchmark JSON plus gpubench
// fields, read by report, compare and the fleet ranking unchanged) made of every item's own
// results file, each entry tagged with its part and item (gpubench.evaluate), and the
// evaluation itself in context.gpubench.evaluate: the budget, each part's and item's planned
// and measured seconds and status, what was dropped and why, doctor's findings
// (docs/results-format.md).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/evaluate/plan.hpp"

namespace gpubench::evaluate {

using json = nlohmann::ordered_json;

// What happened to one item when it ran.
struct ItemOutcome {
  std::string status = "ok";  // ok, "failed: why", "stopped: budget spent", "skipped: why"
  double measured_s = 0;
  std::size_t entries = 0;    // entries it added to the file
  std::vector<std::string> files;  // its results files, relative to the evaluate file's folder
};

class EvaluationDocument {
 public:
  explicit EvaluationDocument(const EvaluationPlan& plan);
  // Adds an item's results file (as read from disk): its entries, tagged; its context's devices
  // (a worker's file names its own GPU) into the document's; the first file's context becomes
  // the document's; a soak's top-level gpubench.soak is kept.
  void add_results(const Item& item, const json& results_file);
  void set_outcome(const Item& item, const ItemOutcome& outcome);
  void set_check(const json& findings, bool forced);
  // {"ttft_ms": T, "tpot_ms": P}: the SLO the card's serving goodput counts against.
  void set_slo(const json& slo) { slo_ = slo; }
  void set_depth_device(const std::string& device) { depth_device_ = device; }
  void set_measured(double seconds, bool budget_spent) { measured_s_ = seconds, budget_spent_ = budget_spent; }
  std::size_t entries() const { return doc_["benchmarks"].size(); }
  std::size_t failed_entries() const;
  const json& benchmarks() const { return doc_["benchmarks"]; }
  // The whole file, with context.gpubench.evaluate as it stands now.
  json to_json() const;

 private:
  const EvaluationPlan& plan_;
  json doc_;
  bool have_context_ = false;
  std::vector<std::pair<std::string, ItemOutcome>> outcomes_;  // by "part/item"
  json check_;
  json slo_;
  std::string depth_device_;
  double measured_s_ = 0;
  bool budget_spent_ = false;
};

// The device whose gemm-bf16 screen figure (TFLOP/s) is the median of the node's (the lower of
// the two middle ones for an even count), for the depth part; nullopt when no screen entry has
// one. Entries are results-file entries.
std::optional<std::string> median_device(const json& benchmarks, const std::string& item = "gemm-bf16");

// When every entry of an item's results file failed (and it has one), the first one's reason:
// what an NCCL_ALGO variant's file says where NCCL refuses the algorithm. "" otherwise.
std::string refused_everywhere(const json& results_file);

}  // namespace gpubench::evaluate
