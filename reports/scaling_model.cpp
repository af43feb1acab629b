// The data-parallel scaling model (reports/scaling_model.hpp, docs/scaling.md).
#include "reports/scaling_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace gpubench::reports::scaling {

const char* op_name(Op op) {
  switch (op) {
    case Op::all_reduce: return "all_reduce";
    case Op::reduce_scatter: return "reduce_scatter";
    case Op::all_gather: return "all_gather";
  }
  return "?";
}

const char* dp_name(Dp dp) { return dp == Dp::ddp ? "ddp" : "zero1"; }

double bus_factor(Op op, int n) {
  if (n <= 1) return 0;
  const double share = static_cast<double>(n - 1) / n;
  return op == Op::all_reduce ? 2 * share : share;
}

int ring_steps(Op op, int n) {
  if (n <= 1) return 0;
  return op == Op::all_reduce ? 2 * (n - 1) : n - 1;
}

namespace {

// "3.2 us", "1.5 ms".
std::string seconds_text(double s) {
  if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} us", s * 1e6);
}

double busbw_of(const Curve& c, const Curve::Point& p) { return p.bytes * bus_factor(c.op, c.ranks) / p.seconds; }

}  // namespace

std::string size_text(double bytes) {
  if (bytes >= 1 << 20) return fmt::format("{:.3g} MiB", bytes / (1 << 20));
  if (bytes >= 1 << 10) return fmt::format("{:.3g} KiB", bytes / (1 << 10));
  return fmt::format("{:.0f} B", bytes);
}

double busbw_at(const Curve& c, double bytes) {
  const auto& p = c.points;
  if (p.empty()) return 0;
  if (bytes <= p.front().bytes) return busbw_of(c, p.front());
  if (bytes >= p.back().bytes) return busbw_of(c, p.back());
  auto hi = std::upper_bound(p.begin(), p.end(), bytes, [](double b, const Curve::Point& q) { return b < q.bytes; });
  auto lo = hi - 1;
  const double w = (std::log(bytes) - std::log(lo->bytes)) / (std::log(hi->bytes) - std::log(lo->bytes));
  return busbw_of(c, *lo) + w * (busbw_of(c, *hi) - busbw_of(c, *lo));
}

StepLatency step_latency(const Curve& c) {
  if (c.points.empty() || c.ranks < 2) throw std::invalid_argument(fmt::format("{}: no usable measurement", c.label));
  const int steps_m = ring_steps(c.op, c.ranks);
  const Curve::Point& first = c.points.front();
  if (first.bytes <= kLatencyOnlyBytes) return {first.seconds / steps_m, ""};
  if (c.latency_probe && c.latency_probe->seconds > 0) {
    const Curve::Probe& p = *c.latency_probe;
    const double alpha = std::min(p.seconds / ring_steps(p.op, c.ranks), first.seconds / steps_m);
    return {alpha, fmt::format("{}: latency of one ring step {} from a {} {} timed apart ({})", c.label,
                               seconds_text(alpha), size_text(p.bytes), op_name(p.op), seconds_text(p.seconds))};
  }
  if (c.points.size() >= 2) {
    const Curve::Point& second = c.points[1];
    const double slope = (second.seconds - first.seconds) / (second.bytes - first.bytes);
    const double alpha = std::clamp((first.seconds - first.bytes * slope) / steps_m, 0.0, first.seconds / steps_m);
    return {alpha, fmt::format("{}: no size up to {} measured; latency of one ring step {} from the line through "
                               "the two smallest sizes ({} and {})",
                               c.label, size_text(kLatencyOnlyBytes), seconds_text(alpha), size_text(first.bytes),
                               size_text(second.bytes))};
  }
  throw std::invalid_argument(fmt::format(
      "{}: one measured size ({}) cannot tell latency from bandwidth, and no small message was timed: run the "
      "collectives suite on the same ranks (its sizes start at a few bytes), or a data-parallel case from a "
      "gpubench that records details.latency_probe",
      c.label, size_text(first.bytes)));
}

double curve_time(const Curve& c, double bytes, int n, Notes* notes) {
  if (n <= 1 || bytes <= 0) return 0;
  const StepLatency latency = step_latency(c);
  if (notes && !latency.how.empty()) notes->insert(latency.how);
  const int steps_m = ring_steps(c.op, c.ranks);
  const double alpha = latency.seconds;
  double bandwidth_s = 0;  // the bandwidth part at m ranks
  if (bytes < c.points.front().bytes) {
    if (notes) {
      notes->insert(fmt::format("{} below the smallest measured size ({}) of {}: latency only", size_text(bytes),
                                size_text(c.points.front().bytes), c.label));
    }
  } else {
    if (bytes > c.points.back().bytes && notes) {
      notes->insert(fmt::format("{} above the largest measured size ({}) of {}: its last bus bandwidth is assumed",
                                size_text(bytes), size_text(c.points.back().bytes), c.label));
    }
    const double t_m = bytes * bus_factor(c.op, c.ranks) / busbw_at(c, bytes);
    bandwidth_s = std::max(0.0, t_m - steps_m * alpha);
  }
  if (n != c.ranks && notes) {
    notes->insert(fmt::format("{}: used at other rank counts through the ring's bus factor and step count", c.label));
  }
  return ring_steps(c.op, n) * alpha + bandwidth_s * bus_factor(c.op, n) / bus_factor(c.op, c.ranks);
}

double link_time(Op op, const LinkFigures& f, double bytes, int n) {
  if (n <= 1 || bytes <= 0) return 0;
  return ring_steps(op, n) * f.latency_s + bytes * bus_factor(op, n) / (f.busbw_gbps * 1e9);
}

namespace {

// The curve of `op` measured at n ranks, else at the most ranks; nullptr when none.
const Curve* pick(const std::vector<Curve>& curves, Op op, int n) {
  const Curve* best = nullptr;
  for (const Curve& c : curves) {
    if (c.op != op || c.points.empty() || c.ranks < 2) continue;
    if (c.ranks == n) return &c;
    if (!best || c.ranks > best->ranks) best = &c;
  }
  return best;
}

// One level (intra or inter) of the network: a curve of the operation, or one derived from
// the others, or the figures.
double level_time(const std::vector<Curve>& curves, const std::optional<LinkFigures>& figures, const char* level,
                  Op op, double bytes, int n, Notes* notes) {
  if (figures) return link_time(op, *figures, bytes, n);
  if (const Curve* c = pick(curves, op, n)) return curve_time(*c, bytes, n, notes);
  if (op == Op::all_reduce) {
    const Curve* rs = pick(curves, Op::reduce_scatter, n);
    const Curve* ag = pick(curves, Op::all_gather, n);
    if (rs && ag) {
      if (notes) notes->insert(fmt::format("{}: no all_reduce curve; all_reduce = reduce_scatter + all_gather", level));
      return curve_time(*rs, bytes, n, notes) + curve_time(*ag, bytes, n, notes);
    }
  } else if (const Curve* ar = pick(curves, Op::all_reduce, n)) {
    // A ring all-reduce is a reduce-scatter followed by an all-gather of the same buffer.
    if (notes) notes->insert(fmt::format("{}: no {} curve; taken as half of the all_reduce time", level, op_name(op)));
    return curve_time(*ar, bytes, n, notes) / 2;
  }
  throw std::invalid_argument(fmt::format("no {} {} curve measured (collectives suite){}", level, op_name(op),
                                          std::string(level) == "inter-node" ? " and no --inter-node-gbps" : ""));
}

}  // namespace

double op_time(const Network& net, Op op, double bytes, int n, Notes* notes) {
  if (n <= 1 || bytes <= 0) return 0;
  const int g = net.gpus_per_node;
  if (g <= 0 || n <= g) return level_time(net.intra, std::nullopt, "intra-node", op, bytes, n, notes);
  if (n % g != 0) {
    throw std::invalid_argument(fmt::format("{} GPUs is not a whole number of nodes of {} GPUs", n, g));
  }
  const int nodes = n / g;
  if (!net.inter_figures && net.inter.empty()) {
    throw std::invalid_argument(fmt::format(
        "{} GPUs span {} nodes of {}: no inter-node curve (collectives measured across nodes) and no "
        "--inter-node-gbps/--inter-node-latency-us",
        n, nodes, g));
  }
  return level_time(net.intra, std::nullopt, "intra-node", op, bytes, g, notes) +
         level_time(net.inter, net.inter_figures, "inter-node", op, bytes / g, nodes, notes);
}

Overlap overlap(const std::vector<Bucket>& buckets, const std::vector<double>& seconds, double backward_s) {
  Overlap o;
  double end = 0;
  for (std::size_t i = 0; i < buckets.size() && i < seconds.size(); ++i) {
    const double start = std::max(buckets[i].ready_s, end);
    end = start + seconds[i];
    o.comm_s += seconds[i];
  }
  o.comm_end_s = end;
  o.exposed_s = std::max(0.0, end - backward_s);
  return o;
}

StepProjection project_step(const Network& net, Dp dp, const StepInput& in, int gpus, Notes* notes) {
  StepProjection p;
  p.gpus = gpus;
  p.nodes = net.gpus_per_node > 0 && gpus > net.gpus_per_node ? gpus / net.gpus_per_node : 1;
  p.compute_s = in.compute_s;
  if (dp == Dp::zero1 && gpus > 1) p.compute_s -= in.optimizer_s * (1.0 - 1.0 / gpus);
  std::vector<double> seconds;
  double gather_s = 0;
  for (const Bucket& b : in.buckets) {
    if (dp == Dp::ddp) {
      seconds.push_back(op_time(net, Op::all_reduce, b.bytes, gpus, notes));
    } else {
      seconds.push_back(op_time(net, Op::reduce_scatter, b.bytes, gpus, notes));
      gather_s += op_time(net, Op::all_gather, b.bytes, gpus, notes);
    }
  }
  const Overlap o = overlap(in.buckets, seconds, in.backward_s);
  p.comm_s = o.comm_s + gather_s;
  p.exposed_s = o.exposed_s + gather_s;
  p.step_s = p.compute_s + p.exposed_s;
  p.overlap_pct = p.comm_s > 0 ? 100 * (p.comm_s - p.exposed_s) / p.comm_s : 100;
  p.overlap_pct = std::clamp(p.overlap_pct, 0.0, 100.0);
  p.efficiency = p.step_s > 0 ? p.compute_s / p.step_s : 1;
  return p;
}

}  // namespace gpubench::reports::scaling
