// The serving loop shared by the infer suite's phase=serve case and `gpubench serving`
// (scheduler.hpp states the policy; tests/unit/test_infer_scheduler.cpp checks it by hand).
#include "kernels/infer/scheduler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "kernels/common/random.hpp"

namespace gpubench::kernels::infer {

namespace {

// Uniform in [0, 1) with 53 random bits from draw `k` of request `i`: counter-based, so request
// i's values depend only on (seed, i) and a longer trace keeps the shorter one as its prefix.
double uniform01(std::uint64_t seed, std::uint64_t i, std::uint64_t k) {
  const std::uint64_t bits = mix64(mix64(seed) ^ (i * 4 + k)) >> 11;
  return static_cast<double>(bits) * 0x1.0p-53;
}

// A uniform integer in [round(L (1 - r)), round(L (1 + r))], at least 1.
int length_draw(int len, double ratio, double u) {
  const long long lo = std::max(1LL, std::llround(len * (1 - ratio)));
  const long long hi = std::max(lo, std::llround(len * (1 + ratio)));
  const long long span = hi - lo + 1;
  const long long k = std::min(span - 1, static_cast<long long>(u * static_cast<double>(span)));
  return static_cast<int>(lo + k);
}

// Larger traces are not a benchmark's (vLLM's runs use hundreds to a few thousand requests);
// the bound keeps every sum of lengths far inside 64 bits.
constexpr int kMaxRequests = 10'000'000;
constexpr int kMaxLen = 1 << 24;

}  // namespace

std::optional<std::string> trace_error(const TraceSpec& spec) {
  auto text = [](double v) {
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  if (!(spec.rate > 0) || !std::isfinite(spec.rate)) return "rate must be > 0 (got " + text(spec.rate) + ")";
  if (spec.requests < 1 || spec.requests > kMaxRequests) {
    return "requests must be in [1, " + std::to_string(kMaxRequests) + "] (got " + std::to_string(spec.requests) + ")";
  }
  if (spec.prompt_len < 1 || spec.prompt_len > kMaxLen) {
    return "prompt_len must be in [1, " + std::to_string(kMaxLen) + "] (got " + std::to_string(spec.prompt_len) + ")";
  }
  if (spec.output_len < 1 || spec.output_len > kMaxLen) {
    return "output_len must be in [1, " + std::to_string(kMaxLen) + "] (got " + std::to_string(spec.output_len) + ")";
  }
  if (!(spec.range_ratio >= 0 && spec.range_ratio < 1)) {
    return "range_ratio must be in [0, 1) (got " + text(spec.range_ratio) + ")";
  }
  return std::nullopt;
}

std::vector<Request> make_trace(const TraceSpec& spec) {
  if (auto e = trace_error(spec)) throw std::invalid_argument("trace: " + *e);
  std::vector<Request> out;
  out.reserve(static_cast<std::size_t>(spec.requests));
  double t = 0;
  for (int i = 0; i < spec.requests; ++i) {
    const auto u = static_cast<std::uint64_t>(i);
    // Exponential gap by inversion: -log(1 - u) / rate, u in [0, 1) so the log is finite.
    t += -std::log1p(-uniform01(spec.seed, u, 0)) / spec.rate;
    Request r;
    r.id = i;
    r.arrival_s = t;
    r.prompt_len = length_draw(spec.prompt_len, spec.range_ratio, uniform01(spec.seed, u, 1));
    r.output_len = length_draw(spec.output_len, spec.range_ratio, uniform01(spec.seed, u, 2));
    out.push_back(r);
  }
  return out;
}

SteadyClock::SteadyClock()
    : start_ns_(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
                    .count()) {}

double SteadyClock::now() {
  const std::int64_t ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return static_cast<double>(ns - start_ns_) * 1e-9;
}

void SteadyClock::wait_until(double t) {
  if (!(t > now())) return;
  const std::chrono::steady_clock::time_point at{std::chrono::nanoseconds(start_ns_ + static_cast<std::int64_t>(std::ceil(t * 1e9)))};
  std::this_thread::sleep_until(at);
}

std::optional<double> RequestRecord::tpot_s() const {
  if (token_s.size() < 2) return std::nullopt;
  return (e2el_s() - ttft_s()) / static_cast<double>(token_s.size() - 1);
}

std::vector<double> RequestRecord::itl_s() const {
  std::vector<double> out;
  for (std::size_t i = 1; i < token_s.size(); ++i) out.push_back(token_s[i] - token_s[i - 1]);
  return out;
}

ServeTrace serve(const std::vector<Request>& trace, const Limits& limits, StepRunner& runner, Clock& clock) {
  if (limits.max_batch < 1) {
    throw std::invalid_argument("serve: max_batch must be >= 1 (got " + std::to_string(limits.max_batch) + ")");
  }
  if (limits.kv_budget_tokens < 0 || limits.max_prefill_tokens < 0) {
    throw std::invalid_argument("serve: kv_budget_tokens and max_prefill_tokens must be >= 0 (0: unlimited)");
  }
  for (const Request& r : trace) {
    if (r.prompt_len < 1 || r.output_len < 1 || !std::isfinite(r.arrival_s)) {
      throw std::invalid_argument("serve: request " + std::to_string(r.id) +
                                  " needs prompt_len >= 1, output_len >= 1 and a finite arrival");
    }
    const std::int64_t need = static_cast<std::int64_t>(r.prompt_len) + r.output_len;
    if (limits.kv_budget_tokens > 0 && need > limits.kv_budget_tokens) {
      throw std::invalid_argument("serve: request " + std::to_string(r.id) + " needs " + std::to_string(need) +
                                  " KV tokens (prompt + output), more than the whole budget of " +
                                  std::to_string(limits.kv_budget_tokens));
    }
  }
  // First come, first served: arrival order, ties by position in the trace.
  std::vector<std::size_t> order(trace.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return trace[a].arrival_s < trace[b].arrival_s; });

  ServeTrace out;
  std::vector<RequestRecord> records(trace.size());
  for (std::size_t i = 0; i < trace.size(); ++i) records[i].request = trace[i];
  std::vector<std::size_t> running;  // indices into trace, in admission order
  std::size_t next = 0, finished = 0;
  std::int64_t kv_used = 0;
  auto need_of = [&](std::size_t i) { return static_cast<std::int64_t>(trace[i].prompt_len) + trace[i].output_len; };
  auto finish = [&](std::size_t i) {
    kv_used -= need_of(i);
    runner.release(trace[i]);
    ++finished;
  };

  while (finished < trace.size()) {
    double now = clock.now();
    if (running.empty() && next < order.size() && trace[order[next]].arrival_s > now) {
      const double due = trace[order[next]].arrival_s;
      clock.wait_until(due);
      // A clock in nanoseconds may read a hair before a due time in seconds: the wait is over.
      now = std::max(clock.now(), due);
    }
    std::vector<std::size_t> admitted;
    std::int64_t step_tokens = 0;
    while (next < order.size() && trace[order[next]].arrival_s <= now) {
      const std::size_t i = order[next];
      if (running.size() + admitted.size() + 1 > static_cast<std::size_t>(limits.max_batch)) break;
      if (limits.kv_budget_tokens > 0 && kv_used + need_of(i) > limits.kv_budget_tokens) break;
      if (limits.max_prefill_tokens > 0 && !admitted.empty() && step_tokens + trace[i].prompt_len > limits.max_prefill_tokens) {
        break;
      }
      admitted.push_back(i);
      step_tokens += trace[i].prompt_len;
      kv_used += need_of(i);
      ++next;
    }
    if (!admitted.empty()) {
      std::vector<const Request*> batch;
      for (std::size_t i : admitted) batch.push_back(&trace[i]);
      runner.prefill(batch);
      ++out.prefill_steps;
      const double t = clock.now();
      for (std::size_t i : admitted) {
        records[i].first_token_s = t;
        records[i].token_s.assign(1, t);
        if (trace[i].output_len == 1) {
          finish(i);
        } else {
          running.push_back(i);
        }
      }
      continue;
    }
    if (running.empty()) continue;  // the next arrival is due: the loop waits for it
    std::vector<const Request*> batch;
    std::vector<std::int64_t> context;
    for (std::size_t i : running) {
      batch.push_back(&trace[i]);
      // The cache holds the prompt and every generated token but the newest, which this step feeds.
      context.push_back(static_cast<std::int64_t>(trace[i].prompt_len) +
                        static_cast<std::int64_t>(records[i].token_s.size()) - 1);
    }
    out.largest_batch = std::max(out.largest_batch, static_cast<int>(running.size()));
    runner.decode(batch, context);
    ++out.decode_steps;
    const double t = clock.now();
    std::vector<std::size_t> still;
    for (std::size_t i : running) {
      records[i].token_s.push_back(t);
      if (records[i].token_s.size() >= static_cast<std::size_t>(trace[i].output_len)) {
        finish(i);
      } else {
        still.push_back(i);
      }
    }
    running = std::move(still);
  }
  std::stable_sort(records.begin(), records.end(),
                   [](const RequestRecord& a, const RequestRecord& b) { return a.request.id < b.request.id; });
  if (!records.empty()) {
    double first = records.front().request.arrival_s, last = records.front().finish_s();
    for (const RequestRecord& r : records) {
      first = std::min(first, r.request.arrival_s);
      last = std::max(last, r.finish_s());
    }
    out.duration_s = last - first;
  }
  out.requests = std::move(records);
  return out;
}

Percentiles percentiles(std::vector<double> values) {
  Percentiles p;
  p.count = static_cast<std::int64_t>(values.size());
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  // numpy.percentile's default ("linear"): position q (n - 1) between the two nearest ranks.
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(values.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
  };
  double sum = 0;
  for (double v : values) sum += v;
  p.mean = sum / static_cast<double>(values.size());
  p.p50 = at(0.50);
  p.p90 = at(0.90);
  p.p99 = at(0.99);
  return p;
}

ServeSummary summarize(const ServeTrace& t, const Slo& slo) {
  ServeSummary s;
  std::vector<double> ttft, tpot, itl, e2el;
  double tokens = 0, per_user = 0;
  std::int64_t users = 0;
  for (const RequestRecord& r : t.requests) {
    if (r.token_s.empty()) continue;  // never ran (not produced by serve)
    ++s.completed;
    ttft.push_back(r.ttft_s());
    e2el.push_back(r.e2el_s());
    const std::vector<double> gaps = r.itl_s();
    itl.insert(itl.end(), gaps.begin(), gaps.end());
    tokens += static_cast<double>(r.token_s.size());
    const std::optional<double> tp = r.tpot_s();
    if (tp) {
      tpot.push_back(*tp);
      if (*tp > 0) {
        per_user += 1 / *tp;
        ++users;
      }
    }
    // vLLM's goodput: every given target met; a one-token request has no TPOT (vLLM counts it
    // as 0) and no gaps, so those targets hold for it. The ITL target holds for every gap.
    bool good = true;
    if (slo.ttft_s && r.ttft_s() > *slo.ttft_s) good = false;
    if (slo.tpot_s && tp && *tp > *slo.tpot_s) good = false;
    if (slo.e2el_s && r.e2el_s() > *slo.e2el_s) good = false;
    if (slo.itl_s) {
      for (double g : gaps) good = good && g <= *slo.itl_s;
    }
    if (good) ++s.good;
  }
  s.ttft_s = percentiles(std::move(ttft));
  s.tpot_s = percentiles(std::move(tpot));
  s.itl_s = percentiles(std::move(itl));
  s.e2el_s = percentiles(std::move(e2el));
  s.duration_s = t.duration_s;
  if (t.duration_s > 0) {
    s.requests_per_s = static_cast<double>(s.completed) / t.duration_s;
    s.output_tokens_per_s = tokens / t.duration_s;
    s.goodput_rps = static_cast<double>(s.good) / t.duration_s;
  }
  if (users > 0) s.output_tokens_per_s_per_user = per_user / static_cast<double>(users);
  return s;
}

}  // namespace gpubench::kernels::infer
