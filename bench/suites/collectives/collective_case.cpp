// The common harness of every collective: counts from the size, exact inputs, the check of
// every output element, and the figures nccl-tests reports. Transports (mpi_transport.cpp,
// nccl_transport.cpp) only move the data.
#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>

#include "bench/core/errors.hpp"
#include "bench/mpi/session.hpp"
#include "bench/suites/collectives/collectives.hpp"

namespace gpubench::suites::collectives {

Counts whole_buffer_counts(const CountArgs& a) {
  Counts c;
  c.send = c.recv = c.param = c.bus_elements = a.elements;
  return c;
}

std::pair<std::int64_t, std::int64_t> same_place(const Counts& /*c*/, std::int64_t /*rank*/) { return {0, 0}; }

const std::vector<const Operation*>& operations() {
  static const std::vector<const Operation*> all = {&all_reduce_op(), &all_gather_op(), &reduce_scatter_op(),
                                                    &broadcast_op(),  &reduce_op(),     &alltoall_op(),
                                                    &sendrecv_op(),   &alltoallv_op(),  &moe_dispatch_op()};
  return all;
}

const Operation* find_operation(const std::string& name) {
  for (const Operation* op : operations()) {
    if (op->name == name) return op;
  }
  return nullptr;
}

double collective_timeout_s() {
  if (mpi::active()) return mpi::session()->timeout_s();  // gpubench run --rank-timeout
  const char* text = std::getenv("GPUBENCH_COLLECTIVE_TIMEOUT");
  if (text != nullptr) {
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (end != text && *end == '\0' && v > 0) return v;
  }
  return 300;
}

Counts counts_for(const Operation& op, std::int64_t size_bytes, Dtype t, int ranks, std::int64_t hidden,
                  bool routing) {
  return op.counts(CountArgs{size_bytes / info(t).bytes, ranks, hidden, routing});
}

std::optional<std::string> size_unsupported(const Operation& op, std::int64_t size_bytes, Dtype t, int ranks,
                                            std::int64_t hidden) {
  const int bytes = info(t).bytes;
  if (size_bytes % bytes != 0) {
    return fmt::format("size {} is not a whole number of {} elements ({} bytes)", size_bytes, info(t).name, bytes);
  }
  const Counts c = counts_for(op, size_bytes, t, ranks, hidden, /*routing=*/false);
  if (&op == &moe_dispatch_op() && c.param > kMaxMoeTokens) {
    return fmt::format("moe_dispatch of {} bytes: more than {} tokens of {} elements per rank (raise hidden)",
                       size_bytes, kMaxMoeTokens, hidden);
  }
  if (c.param <= 0) {
    return fmt::format("{} of {} bytes on {} ranks gives each rank no {} element", op.name, size_bytes, ranks,
                       info(t).name);
  }
  return std::nullopt;
}

void fill_input(const CaseConfig& c, int rank, void* buffer, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) store_element(c.input.dtype, buffer, i, input_value(c.input, rank, i));
}

Check check_output(const CaseConfig& c, int rank, const void* recv) {
  Check out;
  for (std::int64_t j = 0; j < c.counts.recv; ++j) {
    const std::optional<double> expected = c.op->expected(c.input, c.counts, rank, c.root, j);
    if (!expected) continue;
    ++out.checked;
    const double got = load_element(c.input.dtype, recv, j);
    if (matches(c.input, got, *expected)) continue;
    ++out.wrong;
    const double err = std::fabs(got - *expected) / std::max(1.0, std::fabs(*expected));
    out.max_error = std::isnan(err) ? INFINITY : std::max(out.max_error, err);
    if (out.first.empty()) out.first = fmt::format("rank {} element {}: got {}, expected {}", rank, j, got, *expected);
  }
  return out;
}

namespace {

class CollectiveCase final : public Case {
 public:
  CollectiveCase(CaseConfig config, std::unique_ptr<Transport> transport)
      : config_(std::move(config)), transport_(std::move(transport)) {}

  void setup() override { transport_->prepare(config_); }

  // One collective on fresh inputs, then every local rank's whole output against the exact
  // answer. The count of wrong elements is the figure; any wrong element fails the case.
  Verification verify() override {
    transport_->prepare(config_);
    transport_->run();
    transport_->synchronize();
    Verification v;
    v.method = fmt::format("exact: integer inputs, every output element compared ({})",
                           config_.input.redop == RedOp::Avg && config_.op->reduces
                               ? "avg of floats over a non-power-of-two rank count within 2 ulp"
                               : "bitwise value");
    v.wrong = 0;
    const std::vector<int> ranks = transport_->local_ranks();
    for (std::size_t k = 0; k < ranks.size(); ++k) {
      const std::vector<unsigned char> recv = transport_->receive_buffer(static_cast<int>(k));
      const Check chk = check_output(config_, ranks[k], recv.data());
      v.checked += chk.checked;
      *v.wrong += chk.wrong;
      v.max_error = std::max(v.max_error, chk.max_error);
      if (v.detail.empty()) v.detail = chk.first;
    }
    v.passed = *v.wrong == 0;
    if (!v.passed) v.detail = fmt::format("{} wrong elements; first: {}", *v.wrong, v.detail);
    // In-place runs overwrote the inputs: restore them so the timed runs see the same data.
    if (config_.in_place) transport_->prepare(config_);
    return v;
  }

  void run() override { transport_->run(); }

  // algbw counts the bytes nccl-tests calls the size; flops: none.
  Metrics metrics() const override {
    return {0, static_cast<double>(config_.counts.bus_elements) * info(config_.input.dtype).bytes, ""};
  }

  std::unique_ptr<Timer> make_timer() override { return transport_->make_timer(); }
  void flush_cache() override { transport_->flush_cache(); }
  void synchronize() override { transport_->synchronize(); }
  // timing=per_iter: every call timed alone, the ranks aligned by a barrier before each (as
  // OSU's osu_* latency tests and nccl-tests -I), the median call as the headline.
  SamplingPolicy sampling() const override {
    SamplingPolicy p = transport_->sampling();
    if (config_.per_iteration) {
      p.per_iteration = true;
      p.headline = SamplingPolicy::Headline::Median;
      p.barrier = true;
      p.window_s = 0;
    }
    return p;
  }

  void annotate(nlohmann::ordered_json& g, double seconds_per_run) const override {
    const int n = transport_->ranks();
    const double bytes = static_cast<double>(config_.counts.bus_elements) * info(config_.input.dtype).bytes;
    const double factor = config_.op->bus_factor(n);
    nlohmann::ordered_json& m = g["metrics"];
    // nccl-tests: algbw = size / time, busbw = algbw x factor (decimal GB/s). The time is the
    // headline: the mean of back-to-back calls (NCCL, as nccl-tests), or the median over
    // barrier-separated windows (MPI, see MpiTransport::sampling).
    m["time_us"] = seconds_per_run * 1e6;
    m["algbw_gbps"] = seconds_per_run > 0 ? bytes / seconds_per_run / 1e9 : 0.0;
    m["busbw_gbps"] = m["algbw_gbps"].get<double>() * factor;
    m["bus_factor"] = factor;
    m["bus_factor_formula"] = config_.op->bus_factor_formula;
    const nlohmann::ordered_json empty = nlohmann::ordered_json::object();
    const nlohmann::ordered_json& meas = g.contains("measurement") ? g["measurement"] : empty;
    // The slowest rank's time in the headline's statistic.
    const char* max_key = meas.contains("max_median_over_ranks_s") ? "max_median_over_ranks_s" : "max_over_ranks_s";
    if (meas.contains(max_key)) {
      const double max_s = meas[max_key].get<double>();
      m["time_max_us"] = max_s * 1e6;
      m["busbw_at_max_time_gbps"] = max_s > 0 ? bytes / max_s / 1e9 * factor : 0.0;
    }
    // With a median headline, the mean of every timed call too (over ranks), which counts
    // every preempted call.
    if (meas.contains("headline")) {
      if (meas.contains("mean_over_ranks_s")) {
        m["time_mean_us"] = meas["mean_over_ranks_s"].get<double>() * 1e6;
      } else if (meas.contains("mean_s")) {
        m["time_mean_us"] = meas["mean_s"].get<double>() * 1e6;
      }
    }
    // Per-iteration timing: the percentiles of single calls (the slowest rank's), and the
    // bus bandwidth at the median call.
    if (meas.contains("per_iteration")) {
      const nlohmann::ordered_json& it = meas["per_iteration"];
      for (const char* p : {"p50", "p90", "p99"}) {
        m[fmt::format("time_{}_us", p)] = it[fmt::format("{}_s", p)].get<double>() * 1e6;
      }
      m["time_slowest_call_us"] = it["max_s"].get<double>() * 1e6;
      const double p50 = it["p50_s"].get<double>();
      m["busbw_at_p50_gbps"] = p50 > 0 ? bytes / p50 / 1e9 * factor : 0.0;
    }
    if (g.contains("verification") && g["verification"].contains("wrong"))
      m["wrong_elements"] = g["verification"]["wrong"];
    g["collective"] = {{"operation", config_.op->name},
                       {"backend", transport_->name()},
                       {"launch", transport_->launch_mode()},
                       {"ranks", n},
                       {"nodes", transport_->nodes()},
                       {"local_gpus", transport_->local_gpus()},
                       {"count", config_.counts.param},
                       {"send_elements", config_.counts.send},
                       {"recv_elements", config_.counts.recv},
                       {"bytes", bytes},
                       {"in_place", config_.in_place},
                       {"root", config_.root},
                       {"graph", config_.graph},
                       {"timing", config_.per_iteration ? "per_iter" : "batch"}};
    if (const Exchange* e = config_.counts.exchange.get()) {
      nlohmann::ordered_json x{{"distribution", e->tokens > 0 ? "top-1 router, each token to a rank drawn uniformly"
                                                              : "each rank's size split by weights 1 + 2u (u uniform)"},
                               {"seed", kExchangeSeed}};
      std::vector<std::int64_t> sent, received;
      for (int r = 0; r < e->ranks; ++r) {
        sent.push_back(e->sent(r));
        received.push_back(e->received(r));
      }
      x["sent_elements"] = sent;
      x["received_elements"] = received;
      if (e->ranks <= 16) x["count_matrix"] = e->count;  // [src * ranks + dst]
      if (e->tokens > 0) {
        x["tokens_per_rank"] = e->tokens;
        x["hidden"] = e->hidden;
      }
      g["collective"]["exchange"] = std::move(x);
    }
  }

 private:
  CaseConfig config_;
  std::unique_ptr<Transport> transport_;
};

}  // namespace

std::unique_ptr<Case> make_case(CaseConfig config, std::unique_ptr<Transport> transport) {
  return std::make_unique<CollectiveCase>(std::move(config), std::move(transport));
}

}  // namespace gpubench::suites::collectives
