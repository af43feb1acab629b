#pragma once
// The node card (issue 42): what `gpubench report` leads with for a results file written by
// `gpubench evaluate` (one with context.gpubench.evaluate). One row per headline figure, grouped
// by the evaluation's parts (screen, depth, node, input), each against its published figure
// (data/reference.json) and datasheet peak with a verdict; then health (doctor, soak, failed and
// suspect cases, outlier GPUs), budget (planned vs measured per part, what was dropped) and,
// with prices, cost per million tokens. Several evaluate files: the cards side by side, one
// column per file (the purchase comparison). Files of other commands get no card.
//
// Every figure is read from an ordinary entry of the file (the entry's gpubench.evaluate names
// its part and item); an item that did not run shows its status, never a number.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/document.hpp"
#include "reports/report.hpp"
#include "reports/results_reader.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::reports {

struct CardFigure {
  std::string part, item;
  std::string label;   // "GEMM bf16, best case, median of 8 GPUs": this file's words
  std::string row;     // "gemm-bf16: median over GPUs": the same in every file (side-by-side rows)
  std::string metric;  // the entry field it is ("tflops", "busbw_gbps", "goodput_rps", ...)
  std::optional<double> value;  // none when the item did not run: `verdict` says why
  std::string unit;
  std::optional<double> pct_published;
  std::string published;  // "94.4% of 794.5 TFLOP/s (ml-engineering MAMF, ...)", "" when no row matches
  std::optional<double> pct_peak;
  std::string peak_label;  // "% of peak", or "MFU" for training
  // "normal", "below published by X%", "suspect: why", "outlier: <device>", or the item's status
  // ("dropped: ...", "skipped: ...", "stopped: budget spent", "failed: ...") when it has no value.
  std::string verdict;
  std::string detail;  // the case it came from ("m=8192 n=8192 k=8192", "size=256 MiB")
};

struct CardPart {
  std::string name, status;
  std::optional<double> planned_s, measured_s;
};

struct CardDropped {
  std::string part, item, why;
  std::optional<double> planned_s;
};

struct NodeCard {
  std::string file, model;
  int gpus = 0;
  std::string title;  // "Node card: 8 x NVIDIA H100 80GB HBM3 (evaluate, budget 30m, 27.5 min measured)"
  std::vector<CardFigure> figures;
  // health
  std::optional<int> doctor_errors, doctor_warnings;
  bool doctor_forced = false;
  std::string soak;  // "passed", "FAILED: rule on device (message)", or why it did not run
  std::size_t failed_cases = 0, suspect_cases = 0;
  std::vector<std::string> outliers;  // fleet outlier lines (reports/fleet.hpp), the device named by UUID
  // budget
  std::optional<double> budget_s, planned_s, measured_s;
  bool budget_spent = false;
  std::vector<CardPart> parts;
  std::vector<CardDropped> dropped;
  // cost (only with a price for the model)
  std::optional<double> usd_per_gpu_hour, usd_per_m_output_tokens, usd_per_m_train_tokens;
  std::string cost_output_why, cost_train_why;  // why a cost is absent when the price is known
  std::optional<double> serve_tokens_per_s_per_gpu, train_tokens_per_s;  // the figures the costs use

  nlohmann::ordered_json to_json() const;
};

// True when the file was written by `gpubench evaluate` (context.gpubench.evaluate is an object).
bool is_evaluate_file(const ResultsFile& file);

// The card of one evaluate file. Prices come from options.prices (matched on the model name);
// outliers use options.fleet's rule.
NodeCard build_node_card(const ResultsFile& file, const SpecSheet& specs, const ReportOptions& options);

// The card section (one card, or the cards side by side) for the evaluate files among `files`;
// nothing when there is none. `summary` (may be null) gets "node_cards": [card.to_json(), ...].
void node_card_section(Document& doc, const std::vector<ResultsFile>& files, const SpecSheet& specs,
                       const ReportOptions& options, nlohmann::ordered_json* summary);

}  // namespace gpubench::reports
