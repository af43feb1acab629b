// `gpubench scaling`: inputs from results files, projections, validation (reports/scaling.hpp).
#include "reports/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "bench/core/errors.hpp"
#include "reports/cases.hpp"

namespace gpubench::reports::scaling {

using nlohmann::json;

namespace {

std::string kind_of(const std::string& device) { return device.starts_with("cuda") ? "cuda" : device; }

std::optional<int> int_at(const json& root, std::initializer_list<const char*> path) {
  auto v = number_at(root, path);
  if (!v || *v < 0 || *v > 1e9) return std::nullopt;
  return static_cast<int>(std::lround(*v));
}

// The timeline's figures, range-checked where they are read (issue 26): a bucket of 0 bytes
// costs nothing to all-reduce (100% efficiency at any scale), a time of 1e308 s or below 0 is
// no measurement. UsageError naming the file, the entry and the figure.
constexpr double kMaxBucketBytes = 1e15, kMaxSeconds = 1e6;

double checked(std::optional<double> v, double lo, bool lo_inclusive, double hi, const std::string& what,
               const std::string& where) {
  if (!v) throw UsageError(fmt::format("{}: {} is missing or not a number", where, what));
  if (!((lo_inclusive ? *v >= lo : *v > lo) && *v <= hi)) {
    throw UsageError(fmt::format("{}: {} {:g} is out of range (expected {} {:g} and at most {:g})", where, what, *v,
                                 lo_inclusive ? "at least" : "above", lo, hi));
  }
  return *v;
}

std::optional<StepInput> timeline(const ResultEntry& e, const std::string& where) {
  const json* list = json_at(e.details, {"grad_buckets"});
  if (list == nullptr || !list->is_array() || list->empty()) return std::nullopt;
  StepInput in;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& b = (*list)[i];
    const double bytes = checked(number_at(b, {"bytes"}), 0, false, kMaxBucketBytes, fmt::format("grad_buckets[{}].bytes", i), where);
    const double ready = checked(number_at(b, {"ready_s"}), 0, true, kMaxSeconds, fmt::format("grad_buckets[{}].ready_s", i), where);
    in.buckets.push_back({bytes, ready});
  }
  const double backward = checked(number_at(e.details, {"backward_s"}), 0, true, kMaxSeconds, "backward_s", where);
  std::optional<double> step = number_at(e.details, {"step_s"});
  if (!step) step = e.real_time_s;
  step = checked(step, 0, false, kMaxSeconds, "step_s", where);
  const std::optional<double> backward_opt = backward;
  in.backward_s = *backward_opt;
  in.compute_s = *step;
  // A single-device case run under a launcher: its timed runs ran on every rank at once, the
  // timeline's step on one rank alone. Ranks on one host share its memory bandwidth and caches,
  // so the data-parallel step computes at the pace of the former (2 CPU ranks: 35 ms timed
  // against 22 ms alone, with the optimizer's memory-bound update 70% of the step). The mean
  // over ranks of their timed step is the compute, and the timeline is stretched to it. Not the
  // slowest rank's: those runs are not in step, and ranks sharing cores take turns unevenly
  // (4 ranks on 2 cores: 30, 56, 57 and 31 ms), where the data-parallel step's barriers even
  // the turns out (its compute-only step: 46 ms, against a mean of 44 ms).
  const std::string dp = string_at(e.details, {"dp"});
  const auto ranks = number_at(e.measurement, {"ranks"});
  const auto timed = number_at(e.measurement, {"mean_over_ranks_s"});
  if ((dp.empty() || dp == "none") && ranks && *ranks > 1 && timed && *timed > 0) {
    const double k = *timed / in.compute_s;
    for (Bucket& b : in.buckets) b.ready_s *= k;
    in.backward_s *= k;
    in.compute_s = *timed;
  }
  return in;
}

}  // namespace

std::vector<TrainCase> train_cases(const std::vector<ResultsFile>& files) {
  std::vector<TrainCase> out;
  for (std::size_t fi = 0; fi < files.size(); ++fi) {
    for (const ResultEntry& e : files[fi].entries) {
      if (e.suite != "train" || e.status != "ok" || !is_iteration(e)) continue;
      auto in = timeline(e, fmt::format("{}: {}", files[fi].path.string(), e.name));
      if (!in) continue;
      TrainCase c;
      c.entry = &e;
      c.file = fi;
      c.label = axes_label(e, "dp");  // without the axis data parallelism varies (bucket_mb stays: it shapes the timeline)
      c.device_kind = kind_of(e.device);
      c.step = *in;
      c.dp = string_at(e.details, {"dp"});
      if (c.dp.empty()) c.dp = e.axes.contains("dp") ? scalar_text(e.axes["dp"]) : "none";
      c.ranks = int_at(e.details, {"ranks"}).value_or(int_at(e.metrics, {"ranks"}).value_or(1));
      // The optimizer's share of the step, from the case's phase split; a zero1 case's own
      // compute-only step already updates only its shard, so nothing more is credited from it.
      if (auto fraction = number_at(e.metrics, {"optimizer_fraction"}); fraction && c.dp != "zero1") {
        if (*fraction >= 0 && *fraction < 1) c.step.optimizer_s = *fraction * c.step.compute_s;
      }
      // Work one device does per step: the case's rate (global under data parallelism) times
      // its step time, shared among the ranks.
      const double step_time = e.real_time_s.value_or(in->compute_s);
      for (const char* metric : {"tokens_per_s", "samples_per_s"}) {
        if (auto rate = number_at(e.metrics, {metric}); rate && *rate > 0) {
          c.work_per_step = *rate * step_time / std::max(1, c.ranks);
          c.work_unit = std::string(metric).substr(0, std::string(metric).find('_'));
          break;
        }
      }
      if (c.dp != "none" && c.ranks > 1) {
        c.measured_step_s = number_at(e.metrics, {"step_s"});
        if (!c.measured_step_s) c.measured_step_s = number_at(e.measurement, {"max_over_ranks_s"});
        if (!c.measured_step_s) c.measured_step_s = e.real_time_s;
        c.measured_exposed_s = number_at(e.metrics, {"exposed_comm_s"});
        c.measured_efficiency = number_at(e.metrics, {"scaling_efficiency"});
        c.measured_comm_s = number_at(e.metrics, {"comm_s"});
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

namespace {

struct CurveKey {
  std::string op, backend, dtype, redop, device_name;
  int ranks = 0, nodes = 1;
  auto tie() const { return std::tie(op, backend, dtype, redop, device_name, ranks, nodes); }
  bool operator<(const CurveKey& o) const { return tie() < o.tie(); }
};

std::optional<Op> op_of(const std::string& name) {
  if (name == "all_reduce") return Op::all_reduce;
  if (name == "reduce_scatter") return Op::reduce_scatter;
  if (name == "all_gather") return Op::all_gather;
  return std::nullopt;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

MeasuredNetwork measured_network(const std::vector<ResultsFile>& files, const std::string& device_kind) {
  std::map<CurveKey, std::map<double, std::vector<double>>> groups;  // key -> bytes -> seconds
  for (const ResultsFile& f : files) {
    for (const ResultEntry& e : f.entries) {
      if (e.suite != "collectives" || e.status != "ok" || !is_iteration(e) || kind_of(e.device) != device_kind) continue;
      if (auto passed = json_at(e.verification, {"passed"}); passed && passed->is_boolean() && !passed->get<bool>()) continue;
      CurveKey k;
      k.op = string_at(e.collective, {"operation"});
      if (k.op.empty()) k.op = string_at(e.axes, {"op"});
      if (!op_of(k.op)) continue;
      k.backend = string_at(e.collective, {"backend"});
      k.dtype = string_at(e.axes, {"dtype"});
      k.redop = string_at(e.axes, {"redop"});
      k.device_name = e.device_name;
      k.ranks = int_at(e.collective, {"ranks"}).value_or(int_at(e.measurement, {"ranks"}).value_or(0));
      k.nodes = std::max(1, int_at(e.collective, {"nodes"}).value_or(1));
      auto bytes = number_at(e.collective, {"bytes"});
      if (!bytes) bytes = number_at(e.metrics, {"bytes"});
      if (!bytes) bytes = number_at(e.axes, {"size"});
      // The median time per call: one preempted call among back-to-back ones weighs on a mean
      // (the headline) but not on the typical call a step's bucket meets, and the data-parallel
      // step time it is validated against is a median too. A collective ends on every rank at
      // about the same moment, so rank 0's samples stand for all. Else the slowest rank's mean.
      std::optional<double> seconds = number_at(e.measurement, {"median_s"});
      if (!seconds) {
        if (auto us = number_at(e.metrics, {"time_max_us"})) seconds = *us * 1e-6;
        else if (auto mean_us = number_at(e.metrics, {"time_us"})) seconds = *mean_us * 1e-6;
        else seconds = e.real_time_s;
      }
      if (k.ranks < 2 || !bytes || !seconds) continue;
      const std::string where = fmt::format("{}: {}", f.path.string(), e.name);
      checked(bytes, 0, false, kMaxBucketBytes, "the message size in bytes", where);
      checked(seconds, 0, false, kMaxSeconds, "the time per call in seconds", where);
      groups[k][*bytes].push_back(*seconds);
    }
  }
  // No collectives suite for this device: the data-parallel cases' own buckets, each bucket's
  // collective timed alone in a serial step (details.grad_buckets[].comm_s: ddp all-reduces,
  // zero1 reduce-scatters), as curves at their rank count.
  std::map<CurveKey, std::vector<double>> probes;  // key -> details.latency_probe seconds (all_reduce)
  if (groups.empty()) {
    for (const ResultsFile& f : files) {
      for (const ResultEntry& e : f.entries) {
        if (e.suite != "train" || e.status != "ok" || !is_iteration(e) || kind_of(e.device) != device_kind) continue;
        const std::string dp = string_at(e.details, {"dp"});
        const json* buckets = json_at(e.details, {"grad_buckets"});
        if ((dp != "ddp" && dp != "zero1") || buckets == nullptr || !buckets->is_array()) continue;
        CurveKey k;
        k.op = dp == "ddp" ? "all_reduce" : "reduce_scatter";
        k.backend = "the data-parallel case's own buckets";
        k.device_name = e.device_name;
        k.ranks = int_at(e.details, {"ranks"}).value_or(0);
        k.nodes = std::max(1, int_at(f.context, {"gpubench", "mpi", "nodes"}).value_or(1));
        for (const json& b : *buckets) {
          const auto bytes = number_at(b, {"bytes"});
          const auto seconds = number_at(b, {"comm_s"});
          if (k.ranks < 2 || !bytes || *bytes <= 0 || !seconds || *seconds <= 0) continue;
          groups[k][*bytes].push_back(*seconds);
        }
        // The tiny all-reduce the case timed apart: the latency one bucket size cannot give.
        const auto probe_s = number_at(e.details, {"latency_probe", "seconds"});
        if (k.ranks >= 2 && probe_s && *probe_s > 0 && string_at(e.details, {"latency_probe", "op"}) == "all_reduce") {
          probes[k].push_back(*probe_s);
        }
      }
    }
  }
  // Per operation, rank count and node count, the group measured in fp32 with a sum where
  // there is one (gradients), else the one with the most sizes.
  std::map<std::tuple<std::string, int, int>, std::pair<int, const CurveKey*>> chosen;
  for (const auto& [k, sizes] : groups) {
    const int score = (k.dtype.empty() || k.dtype == "fp32" ? 2000000 : 0) + (k.redop.empty() || k.redop == "sum" ? 1000000 : 0) +
                      static_cast<int>(std::min<std::size_t>(sizes.size(), 999999));
    auto [it, added] = chosen.try_emplace({k.op, k.ranks, k.nodes}, score, &k);
    if (!added && score > it->second.first) it->second = {score, &k};
  }
  MeasuredNetwork net;
  int most_nodes = 0;
  for (const auto& [id, pick] : chosen) {
    const CurveKey& k = *pick.second;
    Curve c;
    c.op = *op_of(k.op);
    c.ranks = k.ranks;
    c.label = fmt::format("{} at {} ranks{}{}{}", k.op, k.ranks, k.nodes > 1 ? fmt::format(" on {} nodes", k.nodes) : "",
                          k.backend.empty() ? "" : " (" + k.backend, k.backend.empty() ? "" : ")");
    for (const auto& [bytes, seconds] : groups.at(k)) c.points.push_back({bytes, median(seconds)});
    if (auto p = probes.find(k); p != probes.end()) {
      c.latency_probe = Curve::Probe{Op::all_reduce, static_cast<double>(sizeof(float)), median(p->second)};
    }
    if (k.nodes > 1) {
      if (k.nodes > most_nodes) most_nodes = k.nodes, net.inter_ranks_per_node = k.ranks / k.nodes;
      net.inter.push_back(std::move(c));
    } else {
      net.intra.push_back(std::move(c));
    }
  }
  return net;
}

namespace {

const std::vector<std::string> kAssumptions = {
    "Each bucket's collective time is read off the collectives suite's measured curve at the bucket's size (bus "
    "bandwidth interpolated linearly in log size) and converted from the measured rank count m to N ranks: the "
    "bandwidth part scales with nccl-tests' bus-bandwidth factor (all_reduce 2(N-1)/N, reduce_scatter and all_gather "
    "(N-1)/N; nccl-tests doc/PERFORMANCE.md), the latency part with the ring's step count (2(N-1) for all_reduce, N-1 "
    "for the others) times one step's latency: the time at the smallest measured size over m's step count where that size is at most "
    "256 B; else a small all-reduce the data-parallel case timed apart (details.latency_probe); else the line through "
    "the two smallest measured sizes. One size alone cannot tell latency from bandwidth and is refused.",
    "Ring algorithm throughout: NCCL picks trees (latency growing with log N) for small messages at many ranks, so "
    "latency-bound projections at large N are pessimistic; MPI libraries choose their own algorithms too.",
    "No contention: every ring runs at the measured bus bandwidth whatever else shares the network (no "
    "oversubscribed fabric, no congestion, no stragglers).",
    "Bus bandwidth does not depend on the rank count: each curve was measured at a fixed rank count (listed under "
    "network) and is reused at every N.",
    "Across nodes (N > GPUs per node G): the intra-node collective on the whole bucket at G ranks plus the inter-node "
    "collective on bucket/G at N/G ranks, one ring per GPU in parallel (a NIC per GPU); the two levels do not overlap.",
    "Overlap: a bucket's collective starts when backward has completed the bucket (ready_s on the single-device "
    "timeline) or when the previous collective ends, whichever is later; exposed time = end of the last collective - "
    "backward time (at least 0); communication does not slow the computation down.",
    "Compute per GPU is the single-device step (weak scaling: the micro-batch per GPU stays, the global batch grows "
    "with N); step = compute-only step + exposed communication; scaling efficiency = compute-only step / step; "
    "tokens/s (samples/s) = N x work per GPU per step / step.",
    "A single-device case run under a launcher gives its timed step, the mean over ranks (every rank busy at once: ranks "
    "on one host share its memory bandwidth), with the bucket timeline stretched to it; zero1's smaller optimizer "
    "update also eases that sharing, which is not modelled (on one CPU host zero1 projections run high).",
    "zero1: reduce-scatter per bucket overlapped with backward as above, then the all-gather of every bucket's "
    "parameters after the optimizer, not overlapped; each rank's optimizer updates its 1/N shard: compute = "
    "compute-only step - optimizer x (1 - 1/N), the optimizer's time from the case's phase split "
    "(optimizer_fraction; not credited when the case has none or is itself zero1).",
};

std::string basis_of(const TrainCase& c) {
  return c.dp == "none" || c.ranks <= 1 ? "single-device case"
                                        : fmt::format("compute-only timeline of the {} case at {} ranks", c.dp, c.ranks);
}

struct Setup {
  Network net;
  std::string description;
};

std::string curves_text(const std::vector<Curve>& curves) {
  std::vector<std::string> parts;
  for (const Curve& c : curves) {
    parts.push_back(fmt::format("{}, {} to {}", c.label, size_text(c.points.front().bytes), size_text(c.points.back().bytes)));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

Setup network_for(const std::vector<ResultsFile>& files, const std::string& kind, const ScalingOptions& o) {
  MeasuredNetwork m = measured_network(files, kind);
  if (m.intra.empty()) {
    throw UsageError(fmt::format(
        "no all_reduce, reduce_scatter or all_gather measured on one node for device {} in the files (collectives "
        "suite): run `mpirun -np N gpubench run --suite collectives --device {}` and give its results file too",
        kind, kind == "cuda" ? "cuda" : "cpu"));
  }
  Setup s;
  s.net.intra = std::move(m.intra);
  s.net.inter = std::move(m.inter);
  if (o.inter_node_gbps) s.net.inter_figures = LinkFigures{*o.inter_node_gbps, o.inter_node_latency_us.value_or(0) * 1e-6};
  s.net.gpus_per_node = o.gpus_per_node.value_or(s.net.inter.empty() ? 0 : m.inter_ranks_per_node);
  if (s.net.inter_figures && s.net.gpus_per_node == 0) {  // an inter-node figure no node boundary would use
    throw UsageError("--inter-node-gbps: needs --gpus-per-node (no inter-node curve in the files gives the GPUs per "
                     "node), or every GPU is on one node and the figure is never used");
  }
  s.description = "intra-node: " + curves_text(s.net.intra);
  if (s.net.inter_figures) {
    s.description += fmt::format("; inter-node: {} GB/s bus bandwidth per GPU, {} us per ring step (command line)",
                                 *o.inter_node_gbps, o.inter_node_latency_us.value_or(0));
  } else if (!s.net.inter.empty()) {
    s.description += "; inter-node: " + curves_text(s.net.inter);
  }
  s.description += s.net.gpus_per_node > 0
                       ? fmt::format("; {} GPUs per node", s.net.gpus_per_node)
                       : "; flat: no --gpus-per-node and no inter-node curve, so every GPU is assumed on the measured "
                         "intra-node network";
  return s;
}

std::optional<Dp> dp_of(const std::string& s) {
  if (s == "ddp") return Dp::ddp;
  if (s == "zero1") return Dp::zero1;
  return std::nullopt;
}

StepProjection run_model(const Network& net, Dp dp, const StepInput& in, int n, Notes& notes) {
  try {
    return project_step(net, dp, in, n, &notes);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

}  // namespace

ScalingResult project(const std::vector<ResultsFile>& files, const ScalingOptions& o) {
  std::vector<TrainCase> all = train_cases(files);
  std::vector<const TrainCase*> singles, parallel;
  for (const TrainCase& c : all) {
    if (!o.train_filter.empty() && c.label.find(o.train_filter) == std::string::npos) continue;
    if (c.dp == "none" || c.ranks <= 1) singles.push_back(&c);
    else if (dp_of(c.dp) && c.measured_step_s) parallel.push_back(&c);
  }
  if (singles.empty() && parallel.empty()) {
    throw UsageError(fmt::format(
        "no train case with a gradient-bucket timeline (gpubench.details.grad_buckets){} in the files: run the train "
        "suite (gpubench run --suite train) and give its results file",
        o.train_filter.empty() ? "" : " matching --train-filter '" + o.train_filter + "'"));
  }
  ScalingResult r;
  r.assumptions = kAssumptions;
  std::vector<Dp> modes = o.modes;
  if (modes.empty()) {
    for (const TrainCase* c : parallel) {
      const Dp d = *dp_of(c->dp);
      if (std::find(modes.begin(), modes.end(), d) == modes.end()) modes.push_back(d);
    }
    if (modes.empty()) modes.push_back(Dp::ddp);
  }
  // Projections start from the single-device cases; without any, from the data-parallel
  // cases' own compute-only timelines (one per case).
  std::vector<const TrainCase*> bases = singles;
  if (bases.empty()) {
    std::map<std::string, const TrainCase*> seen;
    for (const TrainCase* c : parallel) seen.try_emplace(c->label + "|" + c->entry->device_name, c);
    for (const auto& [key, c] : seen) bases.push_back(c);
    r.notes.push_back("no single-device train case in the files: projected from the data-parallel cases' own "
                      "compute-only timelines");
  }
  std::map<std::string, Setup> setups;  // per device kind
  auto setup = [&](const std::string& kind) -> const Setup& {
    auto it = setups.find(kind);
    if (it == setups.end()) it = setups.emplace(kind, network_for(files, kind, o)).first;
    return it->second;
  };
  Notes notes;
  std::set<std::string> done;
  for (const TrainCase* b : bases) {
    if (!done.insert(b->label + "|" + b->entry->device_name).second) continue;  // repetitions: the first
    const Setup& s = setup(b->device_kind);
    r.network = s.description;
    r.gpus_per_node = s.net.gpus_per_node;
    const std::optional<double> price = o.prices.find(b->entry->device_name);
    for (Dp dp : modes) {
      for (int n : o.gpus) {
        Projection p;
        p.label = b->label;
        p.device = b->entry->device_name.empty() ? b->entry->device : b->entry->device_name;
        p.basis = basis_of(*b);
        p.dp = dp;
        p.step = run_model(s.net, dp, b->step, n, notes);
        p.work_unit = b->work_unit;
        if (b->work_per_step > 0) p.work_per_s = n * b->work_per_step / p.step.step_s;
        const std::optional<double> work = b->work_unit == "tokens" ? o.train_tokens : b->work_unit == "samples" ? o.train_samples : std::nullopt;
        if (work && p.work_per_s > 0) {
          p.hours = *work / p.work_per_s / 3600;
          if (price) p.cost_usd = *p.hours * n * *price;
        }
        r.projections.push_back(std::move(p));
      }
    }
  }
  // Validation: every measured data-parallel case against the projection at its rank count,
  // from the single-device case of the same configuration when there is one.
  for (const TrainCase* d : parallel) {
    // The single-device case of the same launch first (same file: the same cores per rank).
    const TrainCase* base = nullptr;
    for (const TrainCase* b : singles) {
      if (b->label == d->label && b->device_kind == d->device_kind && (!base || (b->file == d->file && base->file != d->file))) {
        base = b;
      }
    }
    if (!base) base = d;
    const Setup& s = setup(d->device_kind);
    Validation v;
    v.label = d->label;
    v.device = d->entry->device_name.empty() ? d->entry->device : d->entry->device_name;
    v.basis = basis_of(*base);
    v.dp = *dp_of(d->dp);
    v.ranks = d->ranks;
    const StepProjection p = run_model(s.net, v.dp, base->step, d->ranks, notes);
    v.measured_s = *d->measured_step_s;
    v.projected_s = p.step_s;
    v.error_pct = 100 * (p.step_s - v.measured_s) / v.measured_s;
    v.measured_exposed_s = d->measured_exposed_s;
    v.measured_efficiency = d->measured_efficiency;
    v.projected_exposed_s = p.exposed_s;
    v.projected_efficiency = p.efficiency;
    v.measured_comm_s = d->measured_comm_s;
    v.projected_comm_s = p.comm_s;
    r.validation.push_back(std::move(v));
  }
  r.notes.insert(r.notes.end(), notes.begin(), notes.end());
  return r;
}

namespace {

json opt_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// format_duration shows "-" for 0; a projection's 0 s of exposed communication is a result.
std::string seconds_text(double s) { return s > 0 ? format_duration(s) : "0"; }

}  // namespace

nlohmann::ordered_json to_json(const ScalingResult& r) {
  nlohmann::ordered_json out;
  out["model"] = "data-parallel step = compute-only step + communication not hidden behind backward (docs/scaling.md)";
  out["network"] = r.network;
  out["gpus_per_node"] = r.gpus_per_node > 0 ? json(r.gpus_per_node) : json(nullptr);
  out["assumptions"] = r.assumptions;
  out["notes"] = r.notes;
  auto& projections = out["projections"] = nlohmann::ordered_json::array();
  for (const Projection& p : r.projections) {
    nlohmann::ordered_json j;
    j["case"] = p.label;
    j["device"] = p.device;
    j["basis"] = p.basis;
    j["dp"] = dp_name(p.dp);
    j["gpus"] = p.step.gpus;
    j["nodes"] = p.step.nodes;
    j["step_s"] = p.step.step_s;
    j["compute_s"] = p.step.compute_s;
    j["comm_s"] = p.step.comm_s;
    j["exposed_comm_s"] = p.step.exposed_s;
    j["overlap_pct"] = p.step.overlap_pct;
    j["scaling_efficiency"] = p.step.efficiency;
    if (!p.work_unit.empty() && p.work_per_s > 0) {
      j[p.work_unit + "_per_s"] = p.work_per_s;
      j[p.work_unit + "_per_s_per_gpu"] = p.work_per_s / p.step.gpus;
    }
    if (p.hours) j["hours_to_train"] = *p.hours;
    if (p.cost_usd) j["cost_usd"] = *p.cost_usd;
    projections.push_back(std::move(j));
  }
  auto& validation = out["validation"] = nlohmann::ordered_json::array();
  for (const Validation& v : r.validation) {
    nlohmann::ordered_json j;
    j["case"] = v.label;
    j["device"] = v.device;
    j["basis"] = v.basis;
    j["dp"] = dp_name(v.dp);
    j["ranks"] = v.ranks;
    j["measured_s"] = v.measured_s;
    j["projected_s"] = v.projected_s;
    j["error_pct"] = v.error_pct;
    j["measured_exposed_comm_s"] = opt_number(v.measured_exposed_s);
    j["projected_exposed_comm_s"] = v.projected_exposed_s;
    j["measured_comm_s"] = opt_number(v.measured_comm_s);
    j["projected_comm_s"] = v.projected_comm_s;
    j["measured_scaling_efficiency"] = opt_number(v.measured_efficiency);
    j["projected_scaling_efficiency"] = v.projected_efficiency;
    validation.push_back(std::move(j));
  }
  return out;
}

Document to_document(const ScalingResult& r) {
  Document doc;
  doc.title = "gpubench scaling";
  doc.paragraph(
      "Data-parallel projection: step = compute-only step measured on one device + the part of the gradient "
      "communication that backward does not hide; each bucket's collective time comes from the measured collectives "
      "curves converted to N ranks (ring, nccl-tests bus-bandwidth factors), hierarchical across nodes, overlapped "
      "along the measured bucket timeline. Assumptions are listed below; see docs/scaling.md.");
  doc.paragraph("Network: " + r.network + ".");
  // One table per case, device and mode.
  std::size_t i = 0;
  while (i < r.projections.size()) {
    const Projection& first = r.projections[i];
    doc.heading(fmt::format("{} on {} ({}, {})", first.label, first.device, dp_name(first.dp), first.basis), 3);
    Table t;
    for (const char* c : {"GPUs", "nodes", "step", "comm", "exposed", "overlap", "efficiency"}) t.add_column(c, true);
    const bool work = !first.work_unit.empty() && first.work_per_s > 0;
    if (work) t.add_column(first.work_unit + "/s", true), t.add_column(first.work_unit + "/s per GPU", true);
    const bool hours = first.hours.has_value();
    if (hours) t.add_column("hours to train", true);
    const bool cost = first.cost_usd.has_value();
    if (cost) t.add_column("cost (USD)", true);
    for (; i < r.projections.size() && r.projections[i].label == first.label && r.projections[i].device == first.device &&
           r.projections[i].dp == first.dp;
         ++i) {
      const Projection& p = r.projections[i];
      std::vector<std::string> row = {std::to_string(p.step.gpus), std::to_string(p.step.nodes),
                                      seconds_text(p.step.step_s), seconds_text(p.step.comm_s),
                                      seconds_text(p.step.exposed_s), decimal(p.step.overlap_pct, 1) + "%",
                                      decimal(100 * p.step.efficiency, 1) + "%"};
      if (work) row.push_back(sig3(p.work_per_s)), row.push_back(sig3(p.work_per_s / p.step.gpus));
      if (hours) row.push_back(p.hours ? sig3(*p.hours) : "");
      if (cost) row.push_back(p.cost_usd ? decimal(*p.cost_usd, 0) : "");
      t.rows.push_back(std::move(row));
    }
    doc.table(std::move(t));
  }
  doc.heading("Validation", 3);
  if (r.validation.empty()) {
    doc.paragraph("No data-parallel case was measured in the files (train suite with dp=ddp or zero1 under mpirun), "
                  "so nothing validates the projection.");
  } else {
    Table t;
    t.add_column("case");
    t.add_column("dp");
    t.add_column("ranks", true);
    t.add_column("measured step", true);
    t.add_column("projected step", true);
    t.add_column("error", true);
    t.add_column("measured comm", true);
    t.add_column("projected comm", true);
    t.add_column("measured exposed", true);
    t.add_column("projected exposed", true);
    t.add_column("basis");
    for (const Validation& v : r.validation) {
      t.rows.push_back({v.label, dp_name(v.dp), std::to_string(v.ranks), seconds_text(v.measured_s),
                        seconds_text(v.projected_s), percent_change(v.error_pct),
                        v.measured_comm_s ? seconds_text(*v.measured_comm_s) : "", seconds_text(v.projected_comm_s),
                        v.measured_exposed_s ? seconds_text(*v.measured_exposed_s) : "",
                        seconds_text(v.projected_exposed_s), v.basis});
    }
    doc.table(std::move(t));
  }
  doc.assumptions_and_notes(r.assumptions, r.notes);
  return doc;
}

}  // namespace gpubench::reports::scaling
