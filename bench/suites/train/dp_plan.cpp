// The data-parallel pure pieces: the dp mode and the gradient bucket plan (see dp.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "bench/suites/train/dp.hpp"

namespace gpubench::suites::train {

std::optional<DpMode> parse_dp(const std::string& s) {
  if (s == "none") return DpMode::None;
  if (s == "ddp") return DpMode::Ddp;
  if (s == "zero1") return DpMode::Zero1;
  return std::nullopt;
}

std::string to_string(DpMode m) {
  switch (m) {
    case DpMode::None: return "none";
    case DpMode::Ddp: return "ddp";
    case DpMode::Zero1: return "zero1";
  }
  return "";
}

std::size_t BucketPlan::ready_count(std::int64_t watermark) const {
  std::size_t n = 0;
  while (n < buckets.size() && buckets[n].offset >= watermark) ++n;
  return n;
}

std::int64_t BucketPlan::shard_elements() const {
  std::int64_t n = 0;
  for (const Bucket& b : buckets) n += b.shard;
  return n;
}

std::int64_t GradComm::shard_base(std::size_t i) const {
  std::int64_t n = 0;
  for (std::size_t k = 0; k < i && k < plan().buckets.size(); ++k) n += plan().buckets[k].shard;
  return n;
}

BucketPlan plan_buckets(const kernels::train::ParamLayout& layout, double bucket_mb, std::size_t element_bytes,
                        DpMode mode, int ranks) {
  if (!(bucket_mb > 0)) throw std::invalid_argument(fmt::format("bucket_mb must be positive (got {})", bucket_mb));
  if (ranks < 1) throw std::invalid_argument(fmt::format("ranks must be at least 1 (got {})", ranks));
  BucketPlan plan;
  plan.ranks = ranks;
  plan.mode = mode;
  plan.element_bytes = element_bytes;
  plan.cap_bytes = bucket_mb * kBucketMbBytes;
  const auto& t = layout.tensors;
  const int n = static_cast<int>(t.size());
  const std::int64_t align = mode == DpMode::Zero1 ? ranks : 1;
  plan.elements = (layout.total + align - 1) / align * align;
  plan.padding = plan.elements - layout.total;
  if (n == 0) return plan;

  // Lower boundaries of the buckets, in backward order (descending); the last one is 0.
  std::vector<std::int64_t> lows;
  double open_bytes = 0;
  for (int i = n - 1; i >= 0; --i) {
    const std::int64_t end = i + 1 < n ? t[static_cast<std::size_t>(i + 1)].offset : layout.total;
    const double bytes = static_cast<double>(end - t[static_cast<std::size_t>(i)].offset) *
                         static_cast<double>(element_bytes);
    if (bytes >= plan.cap_bytes && open_bytes > 0) {  // a large tensor: close the open bucket first
      lows.push_back(end);
      open_bytes = 0;
    }
    open_bytes += bytes;
    if (open_bytes >= plan.cap_bytes && i > 0) {
      lows.push_back(t[static_cast<std::size_t>(i)].offset);
      open_bytes = 0;
    }
  }
  lows.push_back(0);

  std::int64_t high = plan.elements;
  for (std::int64_t low : lows) {
    low = (low + align - 1) / align * align;  // zero1: moved up to a multiple of the ranks
    if (low >= high) continue;                // emptied by the move: merged into the next bucket
    Bucket b;
    b.offset = low;
    b.count = high - low;
    b.shard = mode == DpMode::Zero1 ? b.count / ranks : b.count;
    b.first_tensor = n;
    b.last_tensor = -1;
    for (int i = 0; i < n; ++i) {
      const std::int64_t off = t[static_cast<std::size_t>(i)].offset;
      if (off >= low && off < high) {
        b.first_tensor = std::min(b.first_tensor, i);
        b.last_tensor = std::max(b.last_tensor, i);
      }
    }
    plan.buckets.push_back(b);
    high = low;
  }
  return plan;
}

BucketPlan plan_from_counts(const std::vector<std::int64_t>& counts, std::size_t element_bytes, DpMode mode,
                            int ranks) {
  if (ranks < 1) throw std::invalid_argument(fmt::format("ranks must be at least 1 (got {})", ranks));
  BucketPlan plan;
  plan.ranks = ranks;
  plan.mode = mode;
  plan.element_bytes = element_bytes;
  const std::int64_t align = mode == DpMode::Zero1 ? ranks : 1;
  std::vector<std::int64_t> rounded;
  for (std::int64_t c : counts) {
    if (c < 1) throw std::invalid_argument(fmt::format("a bucket needs at least one element (got {})", c));
    rounded.push_back((c + align - 1) / align * align);
    plan.elements += rounded.back();
  }
  std::int64_t high = plan.elements;
  for (std::int64_t c : rounded) {
    Bucket b;
    b.offset = high - c;
    b.count = c;
    b.shard = c / align;
    b.first_tensor = 0;
    b.last_tensor = -1;
    plan.buckets.push_back(b);
    high = b.offset;
  }
  return plan;
}

double comm_bytes_per_step(const BucketPlan& plan) {
  const double bytes = static_cast<double>(plan.bytes());
  switch (plan.mode) {
    case DpMode::None: return 0;
    case DpMode::Ddp: return bytes;
    case DpMode::Zero1: return 2 * bytes;
  }
  return 0;
}

nlohmann::ordered_json timeline_details(const BucketPlan& plan, double bucket_mb, const std::vector<double>& ready_s,
                                        double backward_s, double step_s, std::int64_t param_count,
                                        std::optional<double> comm_s) {
  nlohmann::ordered_json buckets = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < plan.buckets.size(); ++i) {
    buckets.push_back({{"bytes", plan.buckets[i].count * static_cast<std::int64_t>(plan.element_bytes)},
                       {"ready_s", i < ready_s.size() ? ready_s[i] : backward_s}});
  }
  nlohmann::ordered_json d = {{"dp", to_string(plan.mode)},
                              {"ranks", plan.ranks},
                              {"bucket_mb", bucket_mb},
                              {"grad_bytes", plan.bytes()},
                              {"param_count", param_count},
                              {"backward_s", backward_s},
                              {"step_s", step_s},
                              {"grad_buckets", std::move(buckets)}};
  if (comm_s) d["comm_s"] = *comm_s;
  return d;
}

double dp_median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

DpRoundFigures summarize_dp_rounds(const std::array<std::vector<std::vector<double>>, 3>& rounds) {
  DpRoundFigures f;
  double med[3] = {0, 0, 0};
  for (std::size_t kind = 0; kind < 3; ++kind) {
    std::vector<double> slowest_per_round;
    for (const std::vector<double>& t : rounds[kind]) {
      if (slowest_per_round.size() < t.size()) slowest_per_round.resize(t.size(), 0.0);
      for (std::size_t i = 0; i < t.size(); ++i) slowest_per_round[i] = std::max(slowest_per_round[i], t[i]);
      f.rank_median_s[kind].push_back(dp_median(t));
    }
    med[kind] = dp_median(slowest_per_round);
  }
  f.step_s = med[0];
  f.compute_s = med[1];
  f.comm_s = std::max(0.0, med[2] - med[1]);
  const std::vector<double>& compute = f.rank_median_s[1];
  if (!compute.empty()) {
    const auto [lo, hi] = std::minmax_element(compute.begin(), compute.end());
    f.spread_pct = *hi > 0 ? 100 * (*hi - *lo) / *hi : 0;
  }
  return f;
}

double DpRoundFigures::overlap_pct() const {
  if (!(comm_s > 0)) return 0;
  return 100 * std::clamp((comm_s - (step_s - compute_s)) / comm_s, 0.0, 1.0);
}

void add_dp_metrics(Metrics& m, const DpRoundFigures& f, DpMode mode, int ranks, const BucketPlan& plan) {
  const double rank_items = m.items;
  m.items = rank_items * ranks;
  const auto per_step = [&f](double x) { return f.step_s > 0 ? x / f.step_s : 0.0; };
  m.extra["dp"] = to_string(mode);
  m.extra["ranks"] = ranks;
  m.extra["step_s"] = f.step_s;
  m.extra["compute_only_s"] = f.compute_s;
  m.extra["exposed_comm_s"] = f.step_s - f.compute_s;
  m.extra["comm_s"] = f.comm_s;
  m.extra["overlap_pct"] = f.overlap_pct();
  m.extra["scaling_efficiency"] = per_step(f.compute_s);
  m.extra["global_" + m.items_unit + "_per_s"] = per_step(m.items);
  m.extra[m.items_unit + "_per_s_per_rank"] = per_step(rank_items);
  m.extra["comm_bytes_per_step"] = comm_bytes_per_step(plan);
  m.extra["buckets_per_step"] = static_cast<double>(plan.buckets.size());
  m.extra["compute_spread_pct"] = f.spread_pct;
}

nlohmann::ordered_json dp_details(const BucketPlan& plan, double bucket_mb, const std::vector<double>& ready_s,
                                  double backward_s, std::int64_t param_count, const DpRoundFigures& f, int rounds,
                                  std::int64_t global_batch, const std::vector<double>& bucket_comm_s) {
  nlohmann::ordered_json d = timeline_details(plan, bucket_mb, ready_s, backward_s, f.compute_s, param_count, f.comm_s);
  if (bucket_comm_s.size() == plan.buckets.size()) {
    for (std::size_t i = 0; i < bucket_comm_s.size(); ++i) d["grad_buckets"][i]["comm_s"] = bucket_comm_s[i];
  }
  d["per_rank"] = {{"step_s", f.rank_median_s[0]}, {"compute_only_s", f.rank_median_s[1]},
                   {"serial_s", f.rank_median_s[2]}};
  d["timing_rounds"] = rounds;
  d["global_batch"] = global_batch;
  return d;
}

void add_latency_probe(nlohmann::ordered_json& details, std::optional<double> seconds) {
  if (seconds && *seconds > 0) {
    details["latency_probe"] = {{"op", "all_reduce"}, {"bytes", static_cast<int>(sizeof(float))}, {"seconds", *seconds}};
  }
}

std::optional<std::string> dp_suspect(const DpRoundFigures& f, double tolerance) {
  if (!(f.step_s > 0) || !(f.compute_s > tolerance * f.step_s)) return std::nullopt;
  return fmt::format(
      "scaling_efficiency {:.3f} > 1: the compute-only step ({:.4g} s) measured slower than the step with "
      "communication ({:.4g} s), so exposed_comm_s < 0; the timing rounds were noisy and scaling_efficiency, "
      "exposed_comm_s and overlap_pct are not believable",
      f.compute_s / f.step_s, f.compute_s, f.step_s);
}

}  // namespace gpubench::suites::train
