// The node card of `gpubench evaluate` results (reports/node_card.hpp).
#include "reports/node_card.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/cases.hpp"
#include "reports/fleet.hpp"
#include "reports/plausibility.hpp"
#include "reports/reference.hpp"
#include "reports/scaling.hpp"
#include "reports/stats.hpp"

namespace gpubench::reports {
namespace {

using json = nlohmann::json;
using ordered = nlohmann::ordered_json;

// Within this much of the published figure a result is normal (below it: "below published by
// X%"); more than this above it is as suspect as a figure above the datasheet (report.cpp's rule).
constexpr double kPublishedBand = 10;
// Between nodes in the projections, an assumption each projected row states: one 400 Gb/s
// InfiniBand NDR port per GPU = 50 GB/s (`gpubench scaling --help`'s example).
constexpr double kInterNodeGbps = 50;

const json& evaluate_context(const ResultsFile& f) {
  static const json empty = json::object();
  const json* ev = json_at(f.context, {"gpubench", "evaluate"});
  return ev != nullptr && ev->is_object() ? *ev : empty;
}

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<double> num(const json& j, const char* key) { return number_at(j, {key}); }

bool is_ok_status(const std::string& status) { return status.empty() || status == "ok" || status == "ran"; }

// The evaluation's items in plan order (context parts[].items[]), then items that only entries
// name (an older planner): every figure has an item and a status to fall back on.
struct Item {
  std::string part, name, status;
  std::vector<std::size_t> entries;  // iteration entries of the item, indices into file.entries
};

std::vector<Item> items_of(const ResultsFile& f) {
  std::vector<Item> items;
  auto find = [&](const std::string& part, const std::string& name) -> Item* {
    for (Item& i : items) {
      if (i.part == part && i.name == name) return &i;
    }
    return nullptr;
  };
  if (const json* parts = json_at(evaluate_context(f), {"parts"}); parts != nullptr && parts->is_array()) {
    for (const json& p : *parts) {
      if (!p.is_object() || !p.contains("items") || !p["items"].is_array()) continue;
      for (const json& i : p["items"]) {
        if (i.is_object()) items.push_back({str(p, "name"), str(i, "name"), str(i, "status"), {}});
      }
    }
  }
  for (std::size_t k = 0; k < f.entries.size(); ++k) {
    const ResultEntry& e = f.entries[k];
    if (!is_iteration(e)) continue;
    const std::string part = str(e.evaluate, "part"), name = str(e.evaluate, "item");
    if (name.empty()) continue;
    Item* item = find(part, name);
    if (item == nullptr) {
      items.push_back({part, name, "ok", {}});
      item = &items.back();
    }
    item->entries.push_back(k);
  }
  return items;
}

// fleet.cpp's name for an entry's metric, so the card can find the outliers of its items.
std::string fleet_metric(const ResultEntry& e) {
  const std::string axes = axes_label(e);
  return axes.empty() ? e.suite : e.suite + " " + axes;
}

std::string pct_text(std::optional<double> v) { return v ? decimal(*v, 1) + "%" : std::string("—"); }

std::string minutes(double s) { return fmt::format("{:g}", std::round(s / 6) / 10); }

class CardBuilder {
 public:
  CardBuilder(const ResultsFile& f, const SpecSheet& specs, const ReportOptions& opt)
      : f_(f), specs_(specs), opt_(opt), ev_(evaluate_context(f)) {
    const plausibility::PeakLookup peak = plausibility::memoized(
        [this](const std::string& name, const std::string& key) { return specs_.peak(name, key); });
    const plausibility::ClockLookup clock = plausibility::memoized(
        [this](const std::string& name, const std::string& key) { return specs_.peak_clock(name, key); });
    suspects_ = plausibility::judge_file(f, peak, clock);
    // The per-GPU figures' outliers, a soak's throughput per device among them.
    outliers_ = fleet_outliers(rank_fleet(fleet_samples({f}), opt.fleet));
  }

  NodeCard build() {
    card_.file = f_.path.generic_string();
    card_.model = str(ev_, "model");
    card_.gpus = static_cast<int>(num(ev_, "gpus").value_or(0));
    if (card_.model.empty()) {
      for (const ResultEntry& e : f_.entries) {
        if (!e.device_name.empty()) {
          card_.model = e.device_name;
          break;
        }
      }
    }
    spec_ = specs_.find(card_.model);
    for (Item& item : items_of(f_)) add_item(item);
    health();
    budget();
    cost();
    const std::string model = card_.model.empty() ? std::string("(model not recorded)") : card_.model;
    card_.title = card_.gpus > 0 ? fmt::format("Node card: {} x {} (evaluate", card_.gpus, model)
                                 : fmt::format("Node card: {} (CPU; evaluate", model);
    if (card_.budget_s) card_.title += fmt::format(", budget {}m", minutes(*card_.budget_s));
    if (card_.measured_s) card_.title += fmt::format(", {} min measured", minutes(*card_.measured_s));
    card_.title += ")";
    return std::move(card_);
  }

 private:
  const ResultsFile& f_;
  const SpecSheet& specs_;
  const ReportOptions& opt_;
  const json& ev_;
  const GpuSpec* spec_ = nullptr;
  plausibility::FileSuspects suspects_;
  std::vector<FleetOutlier> outliers_;
  NodeCard card_;

  const ResultEntry& entry(std::size_t k) const { return f_.entries[k]; }
  std::vector<std::size_t> ok_entries(const Item& item) const {
    std::vector<std::size_t> ok;
    for (std::size_t k : item.entries) {
      if (entry(k).status == "ok") ok.push_back(k);
    }
    return ok;
  }
  const std::vector<std::string>* suspect_of(std::size_t k) const { return suspects_.of(k); }

  // `role` names the figure within its item the same way in every file, for the side-by-side rows.
  CardFigure& add(const Item& item, std::string label, const std::string& role) {
    CardFigure fig;
    fig.part = item.part;
    fig.item = item.name;
    fig.label = std::move(label);
    fig.row = item.name + ": " + role;
    card_.figures.push_back(std::move(fig));
    return card_.figures.back();
  }

  // An item that did not run, or ran and left nothing: its status stands where the number would.
  void no_value(const Item& item, const std::string& label, const std::string& role) {
    std::string why = item.status;
    if (is_ok_status(why)) {
      why = "no result in the file";
      for (std::size_t k : item.entries) {
        if (entry(k).status != "ok") {
          why = entry(k).status + ": " + entry(k).reason;
          break;
        }
      }
    }
    add(item, label, role).verdict = why;
  }

  // Published figure, % of peak and the verdict of a headline figure, from the entry it came from
  // (the selector axes) and the value shown (a median over GPUs may differ from the entry's).
  void judge(CardFigure& fig, const ResultEntry& e, std::size_t k, const Perf& head, double value) {
    fig.metric = head.metric;
    fig.unit = head.unit;
    fig.value = value;
    if (spec_ != nullptr) {
      if (auto m = ReferenceTable::builtin().match(spec_->key, e, head.metric, value)) {
        fig.published = fmt::format("{} of {:g} {} ({})", pct_text(m->pct), m->row->value, m->row->unit,
                                    m->row->short_source());
        if (m->differs.empty()) {
          fig.pct_published = m->pct;
        } else {
          fig.published += "; differs: " + m->differs;
        }
      }
    }
    const std::string peak_key = string_at(e.metrics, {"peak_key"});
    if (e.suite == "train") {
      // pct_of_peak of a training step is its MFU (model FLOPs over the datasheet), linear in the rate.
      if (auto mfu = num(e.metrics, "pct_of_peak"); mfu && head.value > 0) fig.pct_peak = *mfu * value / head.value;
      fig.peak_label = "MFU";
    } else if ((head.metric == "tflops" && peak_key != "memory_bandwidth" && !peak_key.empty()) ||
               (head.metric == "gbps" && peak_key == "memory_bandwidth")) {
      std::optional<double> peak = num(e.metrics, "peak");
      if (!peak && e.device.starts_with("cuda")) peak = specs_.peak(e.device_name, peak_key);
      if (peak && *peak > 0) fig.pct_peak = 100 * value / *peak;
    }
    verdict(fig, k);
  }

  void verdict(CardFigure& fig, std::optional<std::size_t> k) {
    if (k) {
      if (const auto* s = suspect_of(*k); s != nullptr && !s->empty()) {
        fig.verdict = "suspect: " + s->front();
        return;
      }
    }
    if (fig.pct_published && *fig.pct_published > 100 + kPublishedBand) {
      fig.verdict = fmt::format("suspect: more than {:g}% above the published figure", kPublishedBand);
    } else if (fig.pct_published && *fig.pct_published < 100 - kPublishedBand) {
      fig.verdict = fmt::format("below published by {:.0f}%", 100 - *fig.pct_published);
    } else {
      fig.verdict = "normal";
    }
  }

  // The best ok entry by a figure (the median over its repetitions): its index and value.
  template <class Value>
  std::optional<std::pair<std::size_t, double>> best_by(const std::vector<std::size_t>& ks, Value value) const {
    std::map<std::string, std::vector<std::pair<std::size_t, double>>> by_case;  // case and device -> values
    for (std::size_t k : ks) {
      if (auto v = value(entry(k))) by_case[case_identity(entry(k)) + '\x1f' + entry(k).device].emplace_back(k, *v);
    }
    std::optional<std::pair<std::size_t, double>> best;
    for (const auto& [id, vs] : by_case) {
      std::vector<double> values;
      for (const auto& [k, v] : vs) values.push_back(v);
      const double m = median(values);
      if (!best || m > best->second) best = std::make_pair(vs.front().first, m);
    }
    return best;
  }

  // A per-GPU headline (GEMM, HBM, a depth item on every GPU): each GPU's best case (MPI ranks'
  // own figures where the entry has them, via fleet_samples), the median over GPUs and, for the
  // screen, the slowest GPU named, flagged when the fleet rule calls it an outlier.
  void per_gpu(const Item& item, const std::string& what, bool slowest_row) {
    const std::vector<std::size_t> ok = ok_entries(item);
    const std::string role = "best case (median over GPUs)";
    if (!is_ok_status(item.status) || ok.empty()) {
      no_value(item, what, role);
      return;
    }
    const auto best = best_by(ok, [](const ResultEntry& e) -> std::optional<double> {
      auto p = entry_perf(e);
      return p ? std::optional<double>(p->value) : std::nullopt;
    });
    if (!best) {
      no_value(item, what, role);
      return;
    }
    const ResultEntry& e = entry(best->first);
    const Perf head = *entry_perf(e);
    ResultsFile sub;
    sub.path = f_.path;
    sub.context = f_.context;
    std::set<std::string> metrics;
    for (std::size_t k : ok) {
      auto p = entry_perf(entry(k));
      if (!p || p->metric != head.metric) continue;
      sub.entries.push_back(entry(k));
      metrics.insert(fleet_metric(entry(k)));
    }
    // identity -> (the GPU's best figure, its sample)
    std::map<std::string, std::pair<double, FleetSample>> gpus;
    std::map<std::string, std::map<std::string, std::vector<double>>> per_case;  // identity -> metric -> values
    std::map<std::string, FleetSample> who;
    for (const FleetSample& s : fleet_samples({sub})) {
      per_case[s.identity()][s.metric].push_back(s.value);
      who.emplace(s.identity(), s);
    }
    std::vector<double> values;
    for (const auto& [id, cases] : per_case) {
      double b = 0;
      for (const auto& [metric, v] : cases) b = std::max(b, median(v));
      gpus.emplace(id, std::make_pair(b, who.at(id)));
      values.push_back(b);
    }
    const double value = values.empty() ? best->second : median(values);
    const std::string several = gpus.size() > 1 ? fmt::format(", median of {} GPUs", gpus.size()) : std::string();
    CardFigure& fig = add(item, what + several, role);
    fig.detail = axes_label(e);
    judge(fig, e, best->first, head, value);
    if (!slowest_row || gpus.size() < 2) return;
    auto slowest = std::min_element(gpus.begin(), gpus.end(),
                                    [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
    CardFigure& low = add(item, what + ", slowest GPU", "slowest GPU");
    low.detail = slowest->second.second.label();
    judge(low, e, best->first, head, slowest->second.first);
    for (const FleetOutlier& o : outliers_) {
      if (o.sample.identity() == slowest->first && metrics.count(o.sample.metric)) {
        low.verdict = "outlier: " + o.sample.label();
        break;
      }
    }
  }

  // A figure that is not the entries' headline (goodput, per user, efficiency, batch): the best.
  void best_field(const Item& item, const std::vector<std::size_t>& ks, const std::string& what,
                  const std::string& field, const std::string& unit, double scale = 1) {
    const auto best = best_by(ks, [&](const ResultEntry& e) { return num(e.metrics, field.c_str()); });
    if (!is_ok_status(item.status) || !best) {
      no_value(item, what, field);
      return;
    }
    CardFigure& fig = add(item, what, field);
    fig.metric = field;
    fig.unit = unit;
    fig.value = best->second * scale;
    fig.detail = axes_label(entry(best->first));
    verdict(fig, best->first);
  }

  // Collectives: the bus bandwidth of each op at its largest message (nccl-tests' headline).
  void collectives(const Item& item, bool all_reduce_only, const std::string& variant = "") {
    std::map<std::string, std::vector<std::size_t>> by_op;
    for (std::size_t k : ok_entries(item)) {
      const std::string op = axis_text(entry(k), "op");
      if ((op == "all_reduce") == all_reduce_only) by_op[op].push_back(k);
    }
    const std::string label =
        (all_reduce_only ? "all_reduce bus bandwidth, largest size" : "collectives bus bandwidth") + variant;
    if (!is_ok_status(item.status) || by_op.empty()) {
      no_value(item, label, all_reduce_only ? "all_reduce busbw" : "busbw");
      return;
    }
    for (const auto& [op, ks] : by_op) {
      auto bytes = [&](std::size_t k) {
        return num(entry(k).collective, "bytes").value_or(number_at(entry(k).axes, {"size"}).value_or(0));
      };
      double largest = 0;
      for (std::size_t k : ks) largest = std::max(largest, bytes(k));
      std::vector<std::size_t> at;
      for (std::size_t k : ks) {
        if (bytes(k) == largest) at.push_back(k);
      }
      const auto best = best_by(at, [](const ResultEntry& e) { return num(e.metrics, "busbw_gbps"); });
      if (!best) continue;
      const ResultEntry& e = entry(best->first);
      const std::string ranks = string_at(e.collective, {"ranks"});
      CardFigure& fig = add(item, fmt::format("{} bus bandwidth, largest size{}{}", op,
                                              ranks.empty() ? std::string() : " (" + ranks + " GPUs)", variant),
                            op + " busbw");
      fig.detail = axes_label(e);
      judge(fig, e, best->first, Perf{best->second, "busbw_gbps", "GB/s (bus)"}, best->second);
    }
  }

  // Serving: goodput at the evaluation's SLO, counted from the trace's requests as vLLM does (a
  // request is good when its TTFT and TPOT meet the targets; one without a TPOT meets that one).
  std::optional<double> goodput_at_slo(const ResultEntry& e) const {
    const json* slo = json_at(ev_, {"slo"});
    if (slo == nullptr || !slo->is_object()) return number_at(e.details, {"serve", "summary", "goodput_rps"});
    const json* requests = json_at(e.details, {"serve", "requests"});
    const auto duration = number_at(e.details, {"serve", "summary", "duration_s"});
    if (requests == nullptr || !requests->is_array() || !duration || *duration <= 0) return std::nullopt;
    const auto ttft = num(*slo, "ttft_ms"), tpot = num(*slo, "tpot_ms");
    double good = 0;
    for (const json& r : *requests) {
      const auto rt = num(r, "ttft_ms"), rp = num(r, "tpot_ms");
      if (ttft && (!rt || *rt > *ttft)) continue;
      if (tpot && rp && *rp > *tpot) continue;
      good += 1;
    }
    return good / *duration;
  }

  void serve(const Item& item) {
    const json* slo = json_at(ev_, {"slo"});
    std::string at = "no SLO given: every request counts";
    if (slo != nullptr && slo->is_object()) {
      std::vector<std::string> targets;
      if (auto t = num(*slo, "ttft_ms")) targets.push_back(fmt::format("TTFT ≤ {:g} ms", *t));
      if (auto t = num(*slo, "tpot_ms")) targets.push_back(fmt::format("TPOT ≤ {:g} ms", *t));
      at = fmt::format("{}", fmt::join(targets, ", "));
    }
    const std::string goodput_label = "serving goodput at the SLO (" + at + ")";
    const std::string per_gpu_label = "serving output tokens/s per GPU", per_user_label = "serving output tokens/s per user";
    const std::vector<std::size_t> ok = ok_entries(item);
    // The case (arrival rate) with the best goodput at the SLO: the load the node serves within it.
    const auto best = best_by(ok, [this](const ResultEntry& e) { return goodput_at_slo(e); });
    if (!is_ok_status(item.status) || !best) {
      no_value(item, goodput_label, "goodput at the SLO");
      no_value(item, per_gpu_label, "output tokens/s per GPU");
      no_value(item, per_user_label, "output tokens/s per user");
      return;
    }
    const ResultEntry& e = entry(best->first);
    std::vector<std::size_t> same;  // that case's entries (devices, repetitions)
    for (std::size_t k : ok) {
      if (case_identity(entry(k)) == case_identity(e)) same.push_back(k);
    }
    auto med = [&](auto value) {
      std::vector<double> v;
      for (std::size_t k : same) {
        if (auto x = value(entry(k))) v.push_back(*x);
      }
      return v.empty() ? std::nullopt : std::optional<double>(median(v));
    };
    const double tp = std::max(1.0, number_at(e.axes, {"tp"}).value_or(1));
    auto row = [&](const std::string& label, const std::string& role, const std::string& metric, const std::string& unit,
                   std::optional<double> v) {
      if (!v) return no_value(item, label, role);
      CardFigure& fig = add(item, label, role);
      fig.metric = metric;
      fig.unit = unit;
      fig.value = v;
      fig.detail = axes_label(e);
      verdict(fig, best->first);
    };
    row(goodput_label, "goodput at the SLO", "goodput_rps", "req/s", med([this](const ResultEntry& x) { return goodput_at_slo(x); }));
    // output_tokens_per_s is one replica's (tp GPUs'): per GPU divides by tp.
    const auto per_gpu = med([&](const ResultEntry& x) -> std::optional<double> {
      auto v = num(x.metrics, "output_tokens_per_s");
      return v ? std::optional<double>(*v / tp) : std::nullopt;
    });
    row(per_gpu_label, "output tokens/s per GPU", "output_tokens_per_s", "tokens/s", per_gpu);
    if (per_gpu && spec_ != nullptr) {  // the published serving rows are output_tokens_per_s of one replica
      CardFigure& fig = card_.figures.back();
      if (auto m = ReferenceTable::builtin().match(spec_->key, e, "output_tokens_per_s", *per_gpu * tp)) {
        fig.published = fmt::format("{} of {:g} {} ({})", pct_text(m->pct), m->row->value, m->row->unit, m->row->short_source());
        if (m->differs.empty()) {
          fig.pct_published = m->pct;
          verdict(fig, best->first);
        }
      }
    }
    card_.serve_tokens_per_s_per_gpu = per_gpu;
    row(per_user_label, "output tokens/s per user", "output_tokens_per_s_per_user", "tokens/s",
        med([](const ResultEntry& x) { return num(x.metrics, "output_tokens_per_s_per_user"); }));
  }

  void add_item(const Item& item) {
    const std::string& n = item.name;
    auto dtype_of = [&](const char* axis, const char* fallback) {
      for (std::size_t k : ok_entries(item)) {
        const std::string d = axis_text(entry(k), axis);
        if (!d.empty()) return d;
      }
      return std::string(fallback);
    };
    if (n == "soak" || n == "doctor") return;  // their verdicts are the health list's (doctor: its findings)
    if (n == "gemm-bf16" || n == "gemm-fp8") {
      per_gpu(item, "GEMM " + dtype_of("dtype", n == "gemm-bf16" ? "bf16" : "fp8") + ", best case", true);
    } else if (n == "hbm-triad") {
      per_gpu(item, "memory triad, best size", true);
    } else if (n == "attention-prefill" || n == "attention-decode") {
      per_gpu(item, n == "attention-prefill" ? "attention prefill" : "attention decode (paged KV)", false);
    } else if (n == "infer-prefill" || n == "infer-decode") {
      per_gpu(item, n == "infer-prefill" ? "inference prefill" : "inference decode", false);
    } else if (n == "infer-serve") {
      serve(item);
    } else if (n == "train-bf16" || n == "train-fp8") {
      per_gpu(item, "training step " + dtype_of("precision", n == "train-bf16" ? "bf16" : "fp8"), false);
      if (n == "train-bf16" && card_.figures.back().value) card_.train_tokens_per_s = card_.figures.back().value;
    } else if (n == "train-largest-batch") {
      best_field(item, ok_entries(item), "largest micro-batch that fits", "largest_micro_batch", "sequences");
    } else if (n == "all-reduce" || n == "collectives") {
      collectives(item, n == "all-reduce");
    } else if (n == "all-reduce-ring" || n == "all-reduce-nvls") {
      collectives(item, true, n == "all-reduce-ring" ? " (NCCL_ALGO=Ring)" : " (NCCL_ALGO=NVLS)");
    } else if (n == "dp-step") {
      best_field(item, ok_entries(item), "data-parallel step scaling efficiency", "scaling_efficiency", "%", 100);
      projections(item);
    } else if (n == "dataload") {
      per_gpu(item, "input pipeline (one GPU's loader)", false);
    } else if (n == "loader-cores") {
      loader_cores(item);
    } else if (n == "storage") {
      // The node's storage at its best queue depth: sequential GB/s and random IOPS (the host's
      // figures, not a GPU's).
      std::vector<std::size_t> seq, rnd;
      for (std::size_t k : ok_entries(item)) (axis_text(entry(k), "rw") == "read" ? seq : rnd).push_back(k);
      best_field(item, seq, "storage sequential reads, best depth", "gbps", "GB/s");
      best_field(item, rnd, "storage random reads, best depth", "iops", "IOPS");
    } else if (n == "storage-feeds") {
      storage_feeds(item);
    } else {
      per_gpu(item, n + ", best case", false);  // peer-copies, host-concurrency and items to come
    }
  }

  // The data-parallel step projected to 64 and 512 GPUs by `gpubench scaling`'s model
  // (docs/scaling.md) from this evaluation's own training-step timeline and all-reduce curve:
  // nodes the size of this one, joined at kInterNodeGbps per GPU (an assumption the row states;
  // the node's network is its measured curve). Validation against the measured step is
  // `gpubench scaling`'s (its table), not repeated here.
  void projections(const Item& item) {
    if (!is_ok_status(item.status) || ok_entries(item).empty()) return;
    int node = std::max(card_.gpus, 1);
    for (const scaling::TrainCase& c : scaling::train_cases({f_})) {
      if (c.dp != "none") node = std::max(node, c.ranks);
    }
    scaling::ScalingOptions so;
    so.gpus = {64, 512};
    so.gpus_per_node = node;
    so.inter_node_gbps = kInterNodeGbps;
    so.modes = {scaling::Dp::ddp};
    const std::string assumed = fmt::format("nodes of {} joined at {:g} GB/s per GPU (assumed: 400 Gb/s InfiniBand NDR "
                                            "per GPU); the node's measured all-reduce within each",
                                            node, kInterNodeGbps);
    scaling::ScalingResult r;
    try {
      r = scaling::project({f_}, so);
    } catch (const std::exception& e) {
      for (int g : so.gpus) {
        add(item, fmt::format("data-parallel step at {} GPUs (projected)", g), fmt::format("projected at {} GPUs", g))
            .verdict = fmt::format("not projected: {}", e.what());
      }
      return;
    }
    // How far the model was off at the rank count this node measured (gpubench scaling's validation).
    std::string validated = "not validated: no measured data-parallel step to hold it against";
    for (const scaling::Validation& v : r.validation) {
      validated = fmt::format("at the measured {} ranks it projects {} for the measured {} ({:+.0f}%)", v.ranks,
                              format_duration(v.projected_s), format_duration(v.measured_s), v.error_pct);
    }
    for (int g : so.gpus) {
      const auto p = std::find_if(r.projections.begin(), r.projections.end(),
                                  [&](const scaling::Projection& x) { return x.step.gpus == g; });
      if (p == r.projections.end()) continue;
      CardFigure& fig = add(item, fmt::format("data-parallel step at {} GPUs (projected)", g),
                            fmt::format("projected at {} GPUs", g));
      fig.metric = "projected_scaling_efficiency";
      fig.unit = "%";
      fig.value = p->step.efficiency * 100;
      fig.detail = fmt::format("{} {}/s in all; {}; {}; {}", sig3(p->work_per_s), p->work_unit, assumed, validated,
                               p->label);
      fig.verdict = "projected (scaling model)";
    }
  }

  // `tune dataload`'s recommendation (the file's gpubench.tuning): the fewest loader cores that
  // keep the consumer's stall under the target; "not met" with the lowest stall it found.
  void loader_cores(const Item& item) {
    const std::string label = "loader cores per GPU under the stall target";
    const json rec = f_.tuning.is_object() ? f_.tuning.value("recommended", json()) : json();
    std::optional<double> cores;
    if (rec.is_object()) cores = num(rec, "cores_per_gpu") ? num(rec, "cores_per_gpu") : num(rec, "loader_cores");
    if (!is_ok_status(item.status) || !cores) {
      no_value(item, label, "cores per GPU");
      return;
    }
    const json fixed = f_.tuning.value("fixed", json::object());
    const double target = num(fixed, "max_stall_pct").value_or(0);
    const double stall = num(rec, "data_stall_pct").value_or(0);
    CardFigure& fig = add(item, label, "cores per GPU");
    fig.metric = rec.contains("cores_per_gpu") ? "cores_per_gpu" : "loader_cores";
    fig.unit = "cores";
    fig.value = cores;
    fig.detail = fmt::format("{:.0f} samples/s at {:.1f}% stall for a consumer of {:.0f} samples/s, at most {} cores tried; {}",
                             num(rec, "samples_per_s").value_or(0), stall, num(fixed, "consumer_samples_per_s").value_or(0),
                             fixed.value("max_workers", 0), rec.value("pytorch", ""));
    fig.verdict = rec.value("meets_max_stall", false)
                      ? "normal"
                      : fmt::format("stall target not met: {:.1f}% against {:g}% with the most cores tried", stall, target);
  }

  // `tune storage`'s verdict (the file's gpubench.storage_au): how many emulated accelerators the
  // node's storage keeps at the workload's AU threshold, beside the node's own GPUs.
  void storage_feeds(const Item& item) {
    const json& au = f_.storage_au;
    const std::string label = "GPUs this storage feeds (MLPerf Storage's AU)";
    if (!is_ok_status(item.status) || !au.is_object() || !au.contains("largest_passing")) {
      no_value(item, label, "GPUs fed");
      return;
    }
    const double threshold = num(au, "au_threshold_pct").value_or(0);
    const int fed = static_cast<int>(num(au, "largest_passing").value_or(0));
    CardFigure& fig = add(item, label, "GPUs fed");
    fig.metric = "largest_passing";
    fig.unit = "GPUs";
    fig.value = fed;
    const std::string bound = au.value("bounded_by", "");
    const std::string bound_text = bound == "budget"             ? fmt::format("at least {}: the budget ended the search; ", fed)
                                   : bound == "max_accelerators" ? fmt::format("at least {}: the most tried; ", fed)
                                                                 : std::string();
    fig.detail = fmt::format("{}{} on emulated {} at AU >= {:g}% ({} GB/s each); {}", bound_text, au.value("workload", ""),
                             au.value("accelerator", ""), threshold, sig3(num(au, "demand_gbps_per_accelerator").value_or(0)),
                             au.value("cache", ""));
    fig.verdict = card_.gpus > 0 && fed < card_.gpus
                      ? fmt::format("feeds {} of the node's {} GPUs: the input path starves the rest", fed, card_.gpus)
                      : "normal";
  }

  void health() {
    const json* check = json_at(ev_, {"check"});
    if (check != nullptr && check->is_object()) {
      if (auto e = num(*check, "errors")) card_.doctor_errors = static_cast<int>(*e);
      if (auto w = num(*check, "warnings")) card_.doctor_warnings = static_cast<int>(*w);
      card_.doctor_forced = check->value("forced", false);
    }
    if (f_.soak.is_object()) {
      const json verdict = f_.soak.value("verdict", json());
      if (verdict.is_null()) {
        card_.soak = "no verdict (the soak was interrupted before it wrote one)";
      } else if (verdict.value("passed", false)) {
        card_.soak = "passed";
      } else {
        std::vector<std::string> rules;
        for (const json& x : verdict.value("failures", json::array())) {
          rules.push_back(fmt::format("{} on {}: {}", str(x, "rule"), str(x, "device"), str(x, "message")));
        }
        card_.soak = fmt::format("FAILED: {}", fmt::join(rules, "; "));
      }
    } else {
      card_.soak = "not in this evaluation";
      for (const Item& i : items_of(f_)) {
        if (i.name == "soak") card_.soak = is_ok_status(i.status) ? "ran, but the file holds no soak" : i.status;
      }
    }
    std::set<std::string> failed;
    for (std::size_t k = 0; k < f_.entries.size(); ++k) {
      const ResultEntry& e = f_.entries[k];
      if (!is_iteration(e)) continue;
      if (e.status == "failed") failed.insert(case_identity(e) + '\x1f' + e.device);
      if (const auto* s = suspect_of(k); e.status == "ok" && s != nullptr && !s->empty()) ++card_.suspect_cases;
    }
    card_.failed_cases = failed.size();
    for (const FleetOutlier& o : outliers_) card_.outliers.push_back(o.text);
  }

  void budget() {
    card_.budget_s = num(ev_, "budget_s");
    card_.planned_s = num(ev_, "planned_s");
    card_.measured_s = num(ev_, "measured_s");
    card_.budget_spent = ev_.value("budget_spent", false);
    if (const json* parts = json_at(ev_, {"parts"}); parts != nullptr && parts->is_array()) {
      for (const json& p : *parts) {
        if (p.is_object()) card_.parts.push_back({str(p, "name"), str(p, "status"), num(p, "planned_s"), num(p, "measured_s")});
      }
    }
    if (const json* dropped = json_at(ev_, {"dropped"}); dropped != nullptr && dropped->is_array()) {
      for (const json& d : *dropped) {
        if (d.is_object()) card_.dropped.push_back({str(d, "part"), str(d, "item"), str(d, "why"), num(d, "planned_s")});
      }
    }
  }

  // USD per million tokens = USD per GPU-hour / (tokens/s per GPU x 3600 s/h) x 1e6.
  static double per_million(double usd_per_hour, double tokens_per_s) { return usd_per_hour / (tokens_per_s * 3600) * 1e6; }

  void cost() {
    card_.usd_per_gpu_hour = opt_.prices.find(card_.model);
    if (!card_.usd_per_gpu_hour) return;
    auto why = [&](const char* item) {
      for (const CardFigure& fig : card_.figures) {
        if (fig.item == item && !fig.value) return fmt::format("{}: {}", item, fig.verdict);
      }
      return fmt::format("{}: not in this evaluation", item);
    };
    if (card_.serve_tokens_per_s_per_gpu && *card_.serve_tokens_per_s_per_gpu > 0) {
      card_.usd_per_m_output_tokens = per_million(*card_.usd_per_gpu_hour, *card_.serve_tokens_per_s_per_gpu);
    } else {
      card_.cost_output_why = why("infer-serve");
    }
    if (card_.train_tokens_per_s && *card_.train_tokens_per_s > 0) {
      card_.usd_per_m_train_tokens = per_million(*card_.usd_per_gpu_hour, *card_.train_tokens_per_s);
    } else {
      card_.cost_train_why = why("train-bf16");
    }
  }
};

// ---------------------------------------------------------------- rendering

std::string value_text(const CardFigure& fig) {
  if (!fig.value) return fig.verdict;  // the item's status: why there is no number
  if (fig.unit == "%") return decimal(*fig.value, 1) + "%";
  if (fig.unit == "sequences" || fig.unit == "cores") return fmt::format("{:g} {}", *fig.value, fig.unit);
  return fmt::format("{} {}", sig3(*fig.value), fig.unit);
}

std::string seconds_text(std::optional<double> s) { return s ? fmt::format("{:.0f} s", *s) : std::string("—"); }

// Health as (what, finding) pairs: a list for one card, a row each side by side.
std::vector<std::pair<std::string, std::string>> health_facts(const NodeCard& c) {
  std::vector<std::pair<std::string, std::string>> facts;
  facts.emplace_back("doctor", c.doctor_errors || c.doctor_warnings
                                   ? fmt::format("{} error(s), {} warning(s){}", c.doctor_errors.value_or(0),
                                                 c.doctor_warnings.value_or(0),
                                                 c.doctor_forced ? " (run forced past the errors)" : "")
                                   : std::string("no check in this evaluation"));
  facts.emplace_back("soak", c.soak);
  facts.emplace_back("cases", fmt::format("{} failed, {} suspect", c.failed_cases, c.suspect_cases));
  facts.emplace_back("outlier GPUs", c.outliers.empty() ? std::string("none") : fmt::format("{}", fmt::join(c.outliers, "; ")));
  return facts;
}

std::string budget_line(const NodeCard& c) {
  return fmt::format("Budget {}, planned {}, measured {}{}.", seconds_text(c.budget_s), seconds_text(c.planned_s),
                     seconds_text(c.measured_s), c.budget_spent ? "; the budget was spent before the plan ended" : "");
}

std::vector<std::string> dropped_lines(const NodeCard& c) {
  std::vector<std::string> lines;
  for (const CardDropped& d : c.dropped) {
    lines.push_back(fmt::format("dropped {} {} ({} planned): {}", d.part, d.item, seconds_text(d.planned_s), d.why));
  }
  return lines;
}

std::string usd(std::optional<double> v, const std::string& why) { return v ? sig3(*v) + " USD" : why; }

constexpr const char* kCostFormula =
    "Cost per million tokens = USD per GPU-hour / (tokens/s per GPU x 3600) x 1e6: output tokens/s per GPU of the "
    "serving case with the best goodput at the SLO, and training tokens/s per GPU of the bf16 step.";
constexpr const char* kNoPrices =
    "No prices given: add --price 'H100=2.50' (USD per GPU-hour, matched on the device name) or --prices FILE for "
    "the cost per million output tokens and training tokens.";
constexpr const char* kVerdicts =
    "Verdicts: normal (within 10% of the published figure of the same measurement in data/reference.json, or none "
    "published), below published by X%, suspect (the case's figure cannot be believed: docs/plausibility.md), "
    "outlier (the fleet rule: a GPU below its peers). An item that did not run shows why instead of a number.";

void one_card(Document& doc, const NodeCard& c) {
  doc.heading(c.title);
  doc.paragraph(kVerdicts);
  Table t;
  for (const char* col : {"part", "figure", "value", "% of published", "% of peak", "verdict", "case"}) {
    t.add_column(col, std::string(col) == "value" || std::string(col).starts_with("%"));
  }
  for (const CardFigure& fig : c.figures) {
    std::string peak = fig.pct_peak ? pct_text(fig.pct_peak) + (fig.peak_label == "MFU" ? " MFU" : "") : "—";
    t.rows.push_back({fig.part, fig.label, value_text(fig), fig.published.empty() ? "—" : fig.published, peak,
                      fig.value ? fig.verdict : "did not run", fig.detail});
  }
  doc.table(std::move(t));
  doc.heading("Health", 3);
  std::vector<std::string> health;
  for (const auto& [what, finding] : health_facts(c)) health.push_back(what + ": " + finding);
  doc.list(health);
  doc.heading("Budget", 3);
  doc.paragraph(budget_line(c));
  Table parts;
  parts.add_column("part");
  parts.add_column("planned", true);
  parts.add_column("measured", true);
  parts.add_column("status");
  for (const CardPart& p : c.parts) parts.rows.push_back({p.name, seconds_text(p.planned_s), seconds_text(p.measured_s), p.status});
  if (!parts.rows.empty()) doc.table(std::move(parts));
  if (!c.dropped.empty()) doc.list(dropped_lines(c));
  doc.heading("Cost", 3);
  if (!c.usd_per_gpu_hour) {
    doc.paragraph(kNoPrices);
    return;
  }
  doc.list({fmt::format("price: {:.2f} USD per GPU-hour", *c.usd_per_gpu_hour),
            "per million output tokens at the SLO: " + usd(c.usd_per_m_output_tokens, c.cost_output_why),
            "per million training tokens (bf16): " + usd(c.usd_per_m_train_tokens, c.cost_train_why)});
  doc.paragraph(kCostFormula);
}

// Several cards: one column per file, rows in the order the figures first appear.
void side_by_side(Document& doc, const std::vector<NodeCard>& cards) {
  doc.heading(fmt::format("Node cards: {} evaluations side by side", cards.size()));
  std::vector<std::string> titles;
  for (std::size_t i = 0; i < cards.size(); ++i) titles.push_back(fmt::format("#{} {}: {}", i + 1, cards[i].file, cards[i].title));
  doc.list(titles);
  doc.paragraph(kVerdicts);
  auto columns = [&](Table& t, const char* first) {
    t.add_column(first);
    for (std::size_t i = 0; i < cards.size(); ++i) t.add_column(fmt::format("#{} {}", i + 1, cards[i].model), true);
  };
  std::vector<std::pair<std::string, std::string>> rows;  // (part, row)
  for (const NodeCard& c : cards) {
    for (const CardFigure& fig : c.figures) {
      auto key = std::make_pair(fig.part, fig.row);
      if (std::find(rows.begin(), rows.end(), key) == rows.end()) rows.push_back(key);
    }
  }
  Table t;
  t.add_column("part");
  columns(t, "figure");
  for (const auto& key : rows) {
    // Named copies, not a structured binding: clang 14 (the fuzz build) cannot capture those.
    const std::string part = key.first, label = key.second;
    std::vector<std::string> row{part, label};
    for (const NodeCard& c : cards) {
      auto it = std::find_if(c.figures.begin(), c.figures.end(), [&](const CardFigure& f) { return f.part == part && f.row == label; });
      if (it == c.figures.end()) {
        row.push_back("not in this evaluation");
      } else if (!it->value) {
        row.push_back(it->verdict);
      } else {
        std::string cell = value_text(*it);
        if (it->pct_published) cell += "; " + pct_text(it->pct_published) + " of published";
        if (it->pct_peak) cell += "; " + pct_text(it->pct_peak) + (it->peak_label == "MFU" ? " MFU" : " of peak");
        // The slowest GPU is named (by UUID where known); an outlier's verdict names it already.
        const bool name_it = it->row.ends_with("slowest GPU") && !it->verdict.starts_with("outlier");
        row.push_back(cell + "; " + it->verdict + (name_it ? " (" + it->detail + ")" : ""));
      }
    }
    t.rows.push_back(std::move(row));
  }
  doc.table(std::move(t));
  doc.heading("Health", 3);
  Table h;
  columns(h, "check");
  std::vector<std::vector<std::pair<std::string, std::string>>> facts;
  for (const NodeCard& c : cards) facts.push_back(health_facts(c));
  for (std::size_t r = 0; r < facts.front().size(); ++r) {
    std::vector<std::string> row{facts.front()[r].first};
    for (const auto& f : facts) row.push_back(f[r].second);
    h.rows.push_back(std::move(row));
  }
  doc.table(std::move(h));
  doc.heading("Budget", 3);
  Table b;
  columns(b, "time");
  auto add_row = [&](const std::string& name, auto cell) {
    std::vector<std::string> row{name};
    for (const NodeCard& c : cards) row.push_back(cell(c));
    b.rows.push_back(std::move(row));
  };
  add_row("budget", [](const NodeCard& c) { return seconds_text(c.budget_s); });
  add_row("planned", [](const NodeCard& c) { return seconds_text(c.planned_s); });
  add_row("measured", [](const NodeCard& c) { return seconds_text(c.measured_s); });
  // The parts bench/evaluate/plan.hpp names (kParts), in run order; a file of an older evaluation
  // lacks the later ones, and their rows say so.
  for (const char* part : {"check", "screen", "depth", "node", "input", "media"}) {
    add_row(std::string(part) + " planned / measured", [&](const NodeCard& c) {
      for (const CardPart& p : c.parts) {
        if (p.name == part) return fmt::format("{} / {}{}", seconds_text(p.planned_s), seconds_text(p.measured_s),
                                               p.status == "ran" || p.status.empty() ? "" : " (" + p.status + ")");
      }
      return std::string("—");
    });
  }
  add_row("dropped", [](const NodeCard& c) {
    const auto l = dropped_lines(c);
    return l.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(l, "; "));
  });
  doc.table(std::move(b));
  doc.heading("Cost", 3);
  bool any_price = false;
  for (const NodeCard& c : cards) any_price = any_price || c.usd_per_gpu_hour.has_value();
  if (!any_price) {
    doc.paragraph(kNoPrices);
    return;
  }
  Table cost;
  columns(cost, "cost");
  std::vector<std::string> price{"USD per GPU-hour"}, out{"USD per million output tokens at the SLO"},
      train{"USD per million training tokens (bf16)"};
  for (const NodeCard& c : cards) {
    price.push_back(c.usd_per_gpu_hour ? fmt::format("{:.2f}", *c.usd_per_gpu_hour) : "no price given");
    out.push_back(c.usd_per_gpu_hour ? usd(c.usd_per_m_output_tokens, c.cost_output_why) : "—");
    train.push_back(c.usd_per_gpu_hour ? usd(c.usd_per_m_train_tokens, c.cost_train_why) : "—");
  }
  cost.rows = {price, out, train};
  doc.table(std::move(cost));
  doc.paragraph(kCostFormula);
}

ordered opt_json(std::optional<double> v) { return v ? ordered(*v) : ordered(nullptr); }

}  // namespace

bool is_evaluate_file(const ResultsFile& file) {
  const json* ev = json_at(file.context, {"gpubench", "evaluate"});
  return ev != nullptr && ev->is_object();
}

NodeCard build_node_card(const ResultsFile& file, const SpecSheet& specs, const ReportOptions& options) {
  return CardBuilder(file, specs, options).build();
}

ordered NodeCard::to_json() const {
  ordered j;
  j["file"] = file;
  j["model"] = model;
  j["gpus"] = gpus;
  j["title"] = title;
  ordered figs = ordered::array();
  for (const CardFigure& f : figures) {
    figs.push_back({{"part", f.part},
                    {"item", f.item},
                    {"figure", f.label},
                    {"row", f.row},
                    {"metric", f.metric},
                    {"value", opt_json(f.value)},
                    {"unit", f.unit},
                    {"pct_of_published", opt_json(f.pct_published)},
                    {"pct_of_peak", opt_json(f.pct_peak)},
                    {"verdict", f.verdict},
                    {"case", f.detail}});
  }
  j["figures"] = std::move(figs);
  j["health"] = {{"doctor_errors", doctor_errors ? ordered(*doctor_errors) : ordered(nullptr)},
                 {"doctor_warnings", doctor_warnings ? ordered(*doctor_warnings) : ordered(nullptr)},
                 {"doctor_forced", doctor_forced},
                 {"soak", soak},
                 {"failed_cases", failed_cases},
                 {"suspect_cases", suspect_cases},
                 {"outliers", outliers}};
  ordered ps = ordered::array();
  for (const CardPart& p : parts) {
    ps.push_back({{"name", p.name}, {"planned_s", opt_json(p.planned_s)}, {"measured_s", opt_json(p.measured_s)}, {"status", p.status}});
  }
  ordered ds = ordered::array();
  for (const CardDropped& d : dropped) {
    ds.push_back({{"part", d.part}, {"item", d.item}, {"planned_s", opt_json(d.planned_s)}, {"why", d.why}});
  }
  j["budget"] = {{"budget_s", opt_json(budget_s)}, {"planned_s", opt_json(planned_s)}, {"measured_s", opt_json(measured_s)},
                 {"budget_spent", budget_spent}, {"parts", std::move(ps)}, {"dropped", std::move(ds)}};
  j["cost"] = {{"usd_per_gpu_hour", opt_json(usd_per_gpu_hour)},
               {"serve_output_tokens_per_s_per_gpu", opt_json(serve_tokens_per_s_per_gpu)},
               {"train_tokens_per_s_per_gpu", opt_json(train_tokens_per_s)},
               {"usd_per_million_output_tokens", opt_json(usd_per_m_output_tokens)},
               {"usd_per_million_train_tokens", opt_json(usd_per_m_train_tokens)}};
  return j;
}

void node_card_section(Document& doc, const std::vector<ResultsFile>& files, const SpecSheet& specs,
                       const ReportOptions& options, nlohmann::ordered_json* summary) {
  std::vector<NodeCard> cards;
  for (const ResultsFile& f : files) {
    if (is_evaluate_file(f)) cards.push_back(build_node_card(f, specs, options));
  }
  if (cards.empty()) return;
  if (cards.size() == 1) {
    one_card(doc, cards.front());
  } else {
    side_by_side(doc, cards);
  }
  if (summary != nullptr) {
    ordered list = ordered::array();
    for (const NodeCard& c : cards) list.push_back(c.to_json());
    (*summary)["node_cards"] = std::move(list);
  }
}

}  // namespace gpubench::reports
