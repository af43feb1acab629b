#pragma once
// `gpubench scaling`: the train cases' bucket timelines and the collectives suite's curves read
// from results files, projected to N GPUs with reports/scaling_model.hpp, validated against
// the data-parallel cases that were measured. Output as JSON and as a Document (docs/scaling.md).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/document.hpp"
#include "reports/report.hpp"
#include "reports/results_reader.hpp"
#include "reports/scaling_model.hpp"

namespace gpubench::reports::scaling {

struct ScalingOptions {
  std::vector<int> gpus{8, 64, 512, 4096};
  std::optional<int> gpus_per_node;  // default: ranks per node of the inter-node curve; else flat
  std::optional<double> inter_node_gbps, inter_node_latency_us;
  std::vector<Dp> modes;  // empty: the modes measured in the files, else ddp
  PriceList prices;
  std::optional<double> train_tokens, train_samples;
  std::string train_filter;  // substring of the train cases' axes
};

// One train case as the model needs it (gpubench.details of the train suite, docs/scaling.md).
struct TrainCase {
  const ResultEntry* entry = nullptr;
  std::size_t file = 0;     // index of its results file
  std::string label;        // axes without dp and device
  std::string device_kind;  // "cpu", "cuda"
  std::string dp = "none";
  int ranks = 1;
  StepInput step;                // buckets, backward_s, compute_s (details.step_s)
  double work_per_step = 0;      // tokens (or samples) one device processes per step
  std::string work_unit;         // "tokens" or "samples"
  std::optional<double> measured_step_s;   // dp cases: the step time (slowest rank)
  std::optional<double> measured_exposed_s, measured_efficiency, measured_comm_s;
};

struct Projection {
  std::string label, device, basis;
  Dp dp = Dp::ddp;
  StepProjection step;
  double work_per_s = 0;  // global tokens/s (samples/s)
  std::string work_unit;
  std::optional<double> hours, cost_usd;
};

struct Validation {
  std::string label, device, basis;
  Dp dp = Dp::ddp;
  int ranks = 0;
  double measured_s = 0, projected_s = 0, error_pct = 0;
  std::optional<double> measured_exposed_s, measured_efficiency, measured_comm_s;
  double projected_exposed_s = 0, projected_efficiency = 0, projected_comm_s = 0;
};

struct ScalingResult {
  std::vector<Projection> projections;
  std::vector<Validation> validation;
  std::vector<std::string> assumptions;  // the model, stated
  std::vector<std::string> notes;        // what this projection had to assume (ranges, derived curves)
  int gpus_per_node = 0;                 // 0: flat
  std::string network;                   // where the curves came from, one line
};

// Train cases with a bucket timeline (details.grad_buckets) in the files.
std::vector<TrainCase> train_cases(const std::vector<ResultsFile>& files);
// The collectives suite's all_reduce/reduce_scatter/all_gather curves of one device kind;
// intra-node (one node) and inter-node (several) apart.
struct MeasuredNetwork {
  std::vector<Curve> intra, inter;
  int inter_ranks_per_node = 0;  // of the inter-node curve with the most nodes
};
MeasuredNetwork measured_network(const std::vector<ResultsFile>& files, const std::string& device_kind);

// Throws UsageError with one line when the files hold no train case with a timeline, no
// collectives curve for its device, or nodes are involved without an inter-node figure.
ScalingResult project(const std::vector<ResultsFile>& files, const ScalingOptions& options);

nlohmann::ordered_json to_json(const ScalingResult& r);
Document to_document(const ScalingResult& r);

}  // namespace gpubench::reports::scaling
