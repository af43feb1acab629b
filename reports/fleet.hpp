#pragma once
// Fleet screening: the same benchmarks run on many GPUs or nodes (one results file gathered on
// rank 0 under mpirun/srun, or one file per node), ranked by each headline metric, with the
// devices that fall behind their peers flagged by a robust rule:
//   a device is an outlier for a metric when it is more than `mads` median absolute
//   deviations AND more than `pct` percent below the median of the devices of its model.
// The MAD is the plain median of |x - median| (not scaled by 1.4826), floored at 0.1% of the
// median so that a fleet of near-identical devices does not turn noise into huge MAD counts.
// Below three devices the MAD means nothing: a device is then flagged when it is more than
// `pct` percent below the best of its model, and the line says so.
// Only devices of one model are compared; a mixed fleet is grouped by model.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/document.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::reports {

// One device's figure for one metric.
struct FleetSample {
  std::string host;
  std::optional<int> rank;     // the MPI rank that measured it, in a gathered file
  std::string device;          // "cuda:3", "cpu"
  std::string uuid, pci_bus_id, serial;  // where known
  std::string model;           // device name ("NVIDIA H100 80GB HBM3", the CPU model)
  std::string metric;          // "gemm m=8192 n=8192 k=8192 dtype=bf16", "soak gemm"
  std::string unit;            // "TFLOP/s"
  double value = 0;            // higher is better
  std::string file;            // the results file it came from
  // Who this is, for deduplication: host, device, uuid and rank.
  std::string identity() const;
  // "node-17 GPU 3 (UUID GPU-...)", "node-2 cpu (rank 1)".
  std::string label() const;
};

struct FleetOptions {
  double mads = 3;  // --outlier-mads
  double pct = 3;   // --outlier-pct
};

struct FleetRow {
  FleetSample sample;
  double pct_vs_median = 0;  // signed: -8 is 8% below
  std::optional<double> mads_below;  // (median - value) / MAD; none below three devices
  bool outlier = false;
};

struct FleetGroup {
  std::string model, metric, unit;
  double median = 0, mad = 0, best = 0;
  std::vector<FleetRow> rows;  // best first
};

struct FleetOutlier {
  FleetSample sample;
  double pct_below = 0;
  std::optional<double> mads;  // none below three devices
  std::size_t devices = 0;     // the size of its group
  // "node-17 GPU 3 (UUID GPU-...): gemm bf16 8% below the fleet median (12 MADs)"
  std::string text;
};

// Every headline figure of every ok entry: one per rank where the entry carries per-rank
// figures (gpubench.ranks), else one for the entry's device; soak results add each device's
// steady throughput (gpubench.soak). Repetitions of one device's case are reduced to their
// median.
std::vector<FleetSample> fleet_samples(const std::vector<ResultsFile>& files);

// Groups by (model, metric); only groups with at least two distinct devices (a fleet) are
// kept. A device seen twice (the same machine in two files: a before/after comparison) counts
// once, with the median of its figures.
std::vector<FleetGroup> rank_fleet(const std::vector<FleetSample>& samples, const FleetOptions& options);
std::vector<FleetOutlier> fleet_outliers(const std::vector<FleetGroup>& groups);

// The report section: outliers first (a warning per outlier), then one ranking table per
// metric and a node ranking; nothing when the files hold no fleet. `summary` (may be null)
// gets {"fleet": {"groups": N, "devices": N, "outliers": [{host, device, uuid, metric,
// pct_below, mads, text}]}}.
void fleet_section(Document& doc, const std::vector<ResultsFile>& files, const FleetOptions& options,
                   nlohmann::ordered_json* summary);

}  // namespace gpubench::reports
