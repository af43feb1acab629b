#pragma once
// The serving loop of the `infer` suite and of `gpubench serving`: a seeded request trace, a
// continuous-batching scheduler as vLLM's (prefills first, admitted between decode steps up to
// a batch limit and a KV-cache budget) and the per-request latencies with vLLM's definitions.
// One scheduler for both uses: the suite's phase=serve case drives it with a real model and a
// steady clock; the projection drives it with step times read from measured curves and a
// manual clock. Host-only and free of the harness and of CUDA, so reports/ may include it.
// docs/suite-infer.md states the policy; tests/unit/test_infer_scheduler.cpp checks it by hand.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpubench::kernels::infer {

// ---- The trace ----

struct Request {
  int id = 0;
  double arrival_s = 0;  // since the trace's start
  int prompt_len = 1;    // tokens of the prompt
  int output_len = 1;    // tokens generated (the first comes from the prefill)
};

// Arrivals by a Poisson process at `rate` requests/s (exponential gaps, the first request at
// its gap after 0); prompt and output lengths uniform integers in [L (1 - r), L (1 + r)]
// (rounded, at least 1), L = prompt_len or output_len and r = range_ratio, as vLLM's
// benchmark_serving random dataset draws them. Deterministic in `seed` (counter-based draws:
// request i's values depend only on seed and i).
struct TraceSpec {
  double rate = 1;          // requests per second, > 0
  int requests = 16;
  int prompt_len = 128;
  int output_len = 32;
  double range_ratio = 0.5;  // in [0, 1)
  std::uint64_t seed = 1;
};
std::vector<Request> make_trace(const TraceSpec& spec);
// Why the spec cannot make a trace ("rate must be > 0 (got 0)"), or nullopt.
std::optional<std::string> trace_error(const TraceSpec& spec);

// ---- The scheduler ----

// Limits of the batch. Admission reserves a request's whole KV cache (prompt + output tokens)
// up front, so no request is ever preempted: a simplification of vLLM's block manager, which
// allocates on demand and preempts when it runs out (docs/suite-infer.md).
struct Limits {
  int max_batch = 16;                  // requests decoding at once (vLLM's max_num_seqs)
  std::int64_t kv_budget_tokens = 0;   // KV-cache tokens held at once; 0: unlimited
  std::int64_t max_prefill_tokens = 0; // prompt tokens in one prefill step (vLLM's max_num_batched_tokens); 0: unlimited
};

// What runs the steps: the real model (suite) or a table of measured step times (projection).
// Each call returns when the step's tokens exist.
class StepRunner {
 public:
  virtual ~StepRunner() = default;
  // The prompts of the newly admitted requests, in one step; each produces its first token.
  virtual void prefill(const std::vector<const Request*>& admitted) = 0;
  // One decode step of every running request; context[i] = tokens in running[i]'s cache
  // before the step (prompt + tokens generated so far, the newest not yet cached).
  virtual void decode(const std::vector<const Request*>& running, const std::vector<std::int64_t>& context) = 0;
  // The request is finished: its KV cache may be freed.
  virtual void release(const Request& r) { (void)r; }
};

// Seconds since the trace's start.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual double now() = 0;
  virtual void wait_until(double t) = 0;  // idle until t (no-op when t <= now())
};

// Time that moves only when told: the projection's runner advances it by each step's time.
class ManualClock final : public Clock {
 public:
  double now() override { return t_; }
  void wait_until(double t) override {
    if (t > t_) t_ = t;
  }
  void advance(double seconds) { t_ += seconds; }

 private:
  double t_ = 0;
};

// Wall time from construction (steady clock); wait_until sleeps.
class SteadyClock final : public Clock {
 public:
  SteadyClock();
  double now() override;
  void wait_until(double t) override;

 private:
  std::int64_t start_ns_ = 0;
};

// A steady clock that skips idle waits: steps take their real time, waiting for an arrival takes
// none. An untimed warm-up pass on it forms the batches a steady-clock pass of the same trace
// will (the step times being the same) without the trace's idle gaps.
class IdleSkippingClock final : public Clock {
 public:
  double now() override { return steady_.now() + skipped_; }
  void wait_until(double t) override {
    const double n = now();
    if (t > n) skipped_ += t - n;
  }
  double skipped() const { return skipped_; }

 private:
  SteadyClock steady_;
  double skipped_ = 0;
};

// What happened to one request (seconds since the trace's start).
struct RequestRecord {
  Request request;
  double first_token_s = 0;         // end of the prefill step that admitted it
  std::vector<double> token_s;      // when each output token existed (token_s[0] = first_token_s)
  double finish_s() const { return token_s.empty() ? first_token_s : token_s.back(); }
  // vLLM's definitions (benchmarks/benchmark_serving.py): TTFT = first token - arrival;
  // E2EL = last token - arrival; TPOT = (E2EL - TTFT) / (output tokens - 1), none for one
  // token; ITL = each gap between consecutive tokens.
  double ttft_s() const { return first_token_s - request.arrival_s; }
  double e2el_s() const { return finish_s() - request.arrival_s; }
  std::optional<double> tpot_s() const;
  std::vector<double> itl_s() const;
};

struct ServeTrace {
  std::vector<RequestRecord> requests;  // in id order
  double duration_s = 0;                // first arrival to last token
  std::int64_t prefill_steps = 0, decode_steps = 0;
  int largest_batch = 0;                // most requests decoding at once
};

// The loop, until every request of the trace is finished:
//   1. nothing running and nothing arrived: wait for the next arrival;
//   2. admit arrived requests first come, first served while the batch (running + admitted)
//      stays within max_batch, the reserved KV tokens within the budget and the step's prompt
//      tokens within max_prefill_tokens (one request is always admitted into an empty step);
//      the first that does not fit stops admission (no overtaking). Any admitted: one prefill
//      step; each admitted request's first token exists at its end;
//   3. otherwise one decode step of every running request: each gets its next token at its
//      end; a request with all its output tokens finishes and releases its cache.
// A request whose prompt + output exceeds the whole KV budget can never run: std::invalid_argument.
ServeTrace serve(const std::vector<Request>& trace, const Limits& limits, StepRunner& runner, Clock& clock);

// ---- Summaries ----

struct Percentiles {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;  // linear interpolation (numpy's default)
  std::int64_t count = 0;
};
Percentiles percentiles(std::vector<double> values);

// Latency targets: a request is good when every given target is met (vLLM's goodput).
struct Slo {
  std::optional<double> ttft_s, tpot_s, itl_s, e2el_s;
};

struct ServeSummary {
  Percentiles ttft_s, tpot_s, itl_s, e2el_s;
  double requests_per_s = 0;       // completed requests / duration
  double output_tokens_per_s = 0;  // every request's output tokens / duration (per device)
  double output_tokens_per_s_per_user = 0;  // mean over requests of (output tokens - 1) / (E2EL - TTFT)
  double goodput_rps = 0;          // requests meeting the SLO / duration (= requests_per_s without one)
  std::int64_t completed = 0, good = 0;
  double duration_s = 0;
};
ServeSummary summarize(const ServeTrace& t, const Slo& slo);

}  // namespace gpubench::kernels::infer
