// The serving scheduler (kernels/infer/scheduler.hpp): a hand-simulated trace with fixed step
// times, the admission limits, the trace's draws, numpy's percentiles and vLLM's goodput.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "kernels/infer/scheduler.hpp"

namespace ki = gpubench::kernels::infer;

namespace {

// Steps of fixed cost on a manual clock: prefill `prefill_s` per step, decode `decode_base_s`
// plus `decode_per_seq_s` per running request. Records what each step saw.
class FakeRunner final : public ki::StepRunner {
 public:
  FakeRunner(ki::ManualClock& clock, double prefill_s, double decode_base_s, double decode_per_seq_s)
      : clock_(clock), prefill_s_(prefill_s), decode_base_s_(decode_base_s), decode_per_seq_s_(decode_per_seq_s) {}
  void prefill(const std::vector<const ki::Request*>& admitted) override {
    std::vector<int> ids;
    for (const ki::Request* r : admitted) ids.push_back(r->id);
    prefills.push_back(ids);
    steps.push_back("p");
    clock_.advance(prefill_s_);
  }
  void decode(const std::vector<const ki::Request*>& running, const std::vector<std::int64_t>& context) override {
    std::vector<int> ids;
    for (const ki::Request* r : running) ids.push_back(r->id);
    decodes.push_back(ids);
    contexts.push_back(context);
    steps.push_back("d");
    clock_.advance(decode_base_s_ + decode_per_seq_s_ * static_cast<double>(running.size()));
  }
  void release(const ki::Request& r) override { released.push_back(r.id); }

  std::vector<std::vector<int>> prefills, decodes;
  std::vector<std::vector<std::int64_t>> contexts;
  std::vector<std::string> steps;
  std::vector<int> released;

 private:
  ki::ManualClock& clock_;
  double prefill_s_, decode_base_s_, decode_per_seq_s_;
};

ki::Request req(int id, double arrival, int prompt, int output) {
  ki::Request r;
  r.id = id;
  r.arrival_s = arrival;
  r.prompt_len = prompt;
  r.output_len = output;
  return r;
}

constexpr double kEps = 1e-12;

// The hand-simulated trace: prefill 0.1 s per step, decode 0.02 s + 0.01 s per request,
// max_batch 2, no KV budget.
//   R0 arrives 0.00, prompt 10, 3 tokens;  R1 arrives 0.05, prompt 20, 2 tokens;
//   R2 arrives 0.05, prompt 5, 1 token;    R3 arrives 1.00, prompt 8, 2 tokens.
// t=0.00  R0 arrived: prefill [R0]                      -> 0.10  R0 token 1
// t=0.10  R1 arrived, batch 1+1 <= 2: prefill [R1]      -> 0.20  R1 token 1 (R2 would make 3)
// t=0.20  R2 does not fit: decode [R0,R1] ctx [10,20]   -> 0.24  R0 token 2, R1 token 2 (done)
// t=0.24  R2 fits: prefill [R2]                         -> 0.34  R2 token 1 (done: 1 token)
// t=0.34  nothing arrived: decode [R0] ctx [11]         -> 0.37  R0 token 3 (done)
// idle until 1.00; prefill [R3]                         -> 1.10  R3 token 1
// t=1.10  decode [R3] ctx [8]                           -> 1.13  R3 token 2 (done)
// vLLM's definitions:
//   R0: TTFT 0.10, E2EL 0.37, TPOT (0.37-0.10)/2 = 0.135, ITL 0.14, 0.13
//   R1: TTFT 0.15, E2EL 0.19, TPOT 0.04, ITL 0.04
//   R2: TTFT 0.29, E2EL 0.29, no TPOT, no ITL
//   R3: TTFT 0.10, E2EL 0.13, TPOT 0.03, ITL 0.03
std::vector<ki::Request> hand_trace() {
  return {req(0, 0.0, 10, 3), req(1, 0.05, 20, 2), req(2, 0.05, 5, 1), req(3, 1.0, 8, 2)};
}

struct HandRun {
  ki::ManualClock clock;
  FakeRunner runner{clock, 0.1, 0.02, 0.01};
  ki::ServeTrace trace;
  HandRun() {
    ki::Limits limits;
    limits.max_batch = 2;
    trace = ki::serve(hand_trace(), limits, runner, clock);
  }
};

ki::ServeTrace run_hand_trace() { return HandRun().trace; }

}  // namespace

TEST(InferScheduler, HandTraceSteps) {
  const HandRun run;
  const FakeRunner* runner = &run.runner;
  const ki::ServeTrace& t = run.trace;
  EXPECT_EQ(runner->steps, (std::vector<std::string>{"p", "p", "d", "p", "d", "p", "d"}));
  EXPECT_EQ(runner->prefills, (std::vector<std::vector<int>>{{0}, {1}, {2}, {3}}));
  EXPECT_EQ(runner->decodes, (std::vector<std::vector<int>>{{0, 1}, {0}, {3}}));
  EXPECT_EQ(runner->contexts, (std::vector<std::vector<std::int64_t>>{{10, 20}, {11}, {8}}));
  EXPECT_EQ(runner->released, (std::vector<int>{1, 2, 0, 3}));
  EXPECT_EQ(t.prefill_steps, 4);
  EXPECT_EQ(t.decode_steps, 3);
  EXPECT_EQ(t.largest_batch, 2);
  EXPECT_NEAR(t.duration_s, 1.13, kEps);
  ASSERT_EQ(t.requests.size(), 4u);
  const std::vector<std::vector<double>> tokens = {{0.10, 0.24, 0.37}, {0.20, 0.24}, {0.34}, {1.10, 1.13}};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(t.requests[i].request.id, static_cast<int>(i));
    ASSERT_EQ(t.requests[i].token_s.size(), tokens[i].size()) << i;
    for (std::size_t k = 0; k < tokens[i].size(); ++k) EXPECT_NEAR(t.requests[i].token_s[k], tokens[i][k], kEps);
  }
}

TEST(InferScheduler, HandTraceLatencies) {
  const ki::ServeTrace t = run_hand_trace();
  const auto& r = t.requests;
  EXPECT_NEAR(r[0].ttft_s(), 0.10, kEps);
  EXPECT_NEAR(r[0].e2el_s(), 0.37, kEps);
  EXPECT_NEAR(*r[0].tpot_s(), 0.135, kEps);
  ASSERT_EQ(r[0].itl_s().size(), 2u);
  EXPECT_NEAR(r[0].itl_s()[0], 0.14, kEps);
  EXPECT_NEAR(r[0].itl_s()[1], 0.13, kEps);
  EXPECT_NEAR(r[1].ttft_s(), 0.15, kEps);
  EXPECT_NEAR(r[1].e2el_s(), 0.19, kEps);
  EXPECT_NEAR(*r[1].tpot_s(), 0.04, kEps);
  EXPECT_NEAR(r[2].ttft_s(), 0.29, kEps);
  EXPECT_NEAR(r[2].e2el_s(), 0.29, kEps);
  EXPECT_FALSE(r[2].tpot_s().has_value());
  EXPECT_TRUE(r[2].itl_s().empty());
  EXPECT_NEAR(r[3].ttft_s(), 0.10, kEps);
  EXPECT_NEAR(r[3].e2el_s(), 0.13, kEps);
  EXPECT_NEAR(*r[3].tpot_s(), 0.03, kEps);
}

// Summary of the hand trace (numpy's linear percentiles, by hand):
//   TTFT sorted 0.10 0.10 0.15 0.29: mean 0.16; p50 at 1.5 = 0.125; p90 at 2.7 = 0.15 + 0.7*0.14
//   = 0.248; p99 at 2.97 = 0.15 + 0.97*0.14 = 0.2858
//   TPOT sorted 0.03 0.04 0.135: mean 0.068333; p50 0.04; p90 at 1.8 = 0.04 + 0.8*0.095 = 0.116;
//   p99 at 1.98 = 0.04 + 0.98*0.095 = 0.1331
//   ITL sorted 0.03 0.04 0.13 0.14: p50 at 1.5 = 0.085; E2EL sorted 0.13 0.19 0.29 0.37: p50 0.24
//   8 output tokens, 4 requests over 1.13 s; per user mean(1/0.135, 1/0.04, 1/0.03)
TEST(InferScheduler, HandTraceSummary) {
  const ki::ServeSummary s = ki::summarize(run_hand_trace(), {});
  EXPECT_EQ(s.completed, 4);
  EXPECT_NEAR(s.ttft_s.mean, 0.16, kEps);
  EXPECT_NEAR(s.ttft_s.p50, 0.125, kEps);
  EXPECT_NEAR(s.ttft_s.p90, 0.248, kEps);
  EXPECT_NEAR(s.ttft_s.p99, 0.2858, kEps);
  EXPECT_EQ(s.tpot_s.count, 3);
  EXPECT_NEAR(s.tpot_s.mean, 0.205 / 3, kEps);
  EXPECT_NEAR(s.tpot_s.p50, 0.04, kEps);
  EXPECT_NEAR(s.tpot_s.p90, 0.116, kEps);
  EXPECT_NEAR(s.tpot_s.p99, 0.1331, kEps);
  EXPECT_EQ(s.itl_s.count, 4);
  EXPECT_NEAR(s.itl_s.p50, 0.085, kEps);
  EXPECT_NEAR(s.e2el_s.p50, 0.24, kEps);
  EXPECT_NEAR(s.e2el_s.mean, 0.245, kEps);
  EXPECT_NEAR(s.duration_s, 1.13, kEps);
  EXPECT_NEAR(s.requests_per_s, 4 / 1.13, 1e-9);
  EXPECT_NEAR(s.output_tokens_per_s, 8 / 1.13, 1e-9);
  EXPECT_NEAR(s.output_tokens_per_s_per_user, (1 / 0.135 + 1 / 0.04 + 1 / 0.03) / 3, 1e-9);
  EXPECT_NEAR(s.goodput_rps, s.requests_per_s, 1e-12);  // no SLO: every request is good
  EXPECT_EQ(s.good, 4);
}

// Goodput: TTFT <= 0.2 s and TPOT <= 0.1 s leave R1 and R3 (R0's TPOT 0.135, R2's TTFT 0.29);
// R2's missing TPOT meets the TPOT target. An ITL target of 0.135 s fails R0 only (gap 0.14).
TEST(InferScheduler, GoodputUnderSlo) {
  ki::Slo slo;
  slo.ttft_s = 0.2;
  slo.tpot_s = 0.1;
  ki::ServeSummary s = ki::summarize(run_hand_trace(), slo);
  EXPECT_EQ(s.good, 2);
  EXPECT_NEAR(s.goodput_rps, 2 / 1.13, 1e-9);
  ki::Slo itl;
  itl.itl_s = 0.135;
  EXPECT_EQ(ki::summarize(run_hand_trace(), itl).good, 3);
  ki::Slo e2el;
  e2el.e2el_s = 0.2;  // R1 (0.19) and R3 (0.13)
  EXPECT_EQ(ki::summarize(run_hand_trace(), e2el).good, 2);
  ki::Slo tpot_only;
  tpot_only.tpot_s = 0.04;  // R1, R2 (none), R3
  EXPECT_EQ(ki::summarize(run_hand_trace(), tpot_only).good, 3);
}

TEST(InferScheduler, MaxBatchHoldsBackTheThird) {
  ki::ManualClock clock;
  FakeRunner runner(clock, 1, 1, 0);
  ki::Limits limits;
  limits.max_batch = 2;
  const std::vector<ki::Request> trace = {req(0, 0, 4, 2), req(1, 0, 4, 3), req(2, 0, 4, 2)};
  const ki::ServeTrace t = ki::serve(trace, limits, runner, clock);
  // [0,1] prefill; decode finishes 0; then 2 joins; decode [1,2] finishes both.
  EXPECT_EQ(runner.prefills, (std::vector<std::vector<int>>{{0, 1}, {2}}));
  EXPECT_EQ(runner.decodes, (std::vector<std::vector<int>>{{0, 1}, {1, 2}}));
  EXPECT_EQ(t.largest_batch, 2);
  EXPECT_DOUBLE_EQ(t.requests[2].ttft_s(), 3.0);  // prefill to 1, decode to 2, its prefill to 3
}

TEST(InferScheduler, KvBudgetIsFirstComeFirstServed) {
  ki::ManualClock clock;
  FakeRunner runner(clock, 1, 1, 0);
  ki::Limits limits;
  limits.max_batch = 8;
  limits.kv_budget_tokens = 40;
  // A needs 20 tokens, B 25, C 10: B does not fit beside A, and C (which would) may not overtake B.
  const std::vector<ki::Request> trace = {req(0, 0, 10, 10), req(1, 0, 15, 10), req(2, 0, 5, 5)};
  ki::serve(trace, limits, runner, clock);
  ASSERT_EQ(runner.prefills.size(), 2u);
  EXPECT_EQ(runner.prefills[0], (std::vector<int>{0}));
  EXPECT_EQ(runner.prefills[1], (std::vector<int>{1, 2}));  // 25 + 10 <= 40 once A released its 20
  // A decodes 9 steps alone before B and C are admitted.
  EXPECT_EQ(runner.steps[10], "p");
  for (int i = 1; i <= 9; ++i) EXPECT_EQ(runner.steps[static_cast<std::size_t>(i)], "d");
}

TEST(InferScheduler, MaxPrefillTokensSplitsTheStep) {
  ki::ManualClock clock;
  FakeRunner runner(clock, 1, 1, 0);
  ki::Limits limits;
  limits.max_batch = 8;
  limits.max_prefill_tokens = 25;
  // 10 + 10 fit one step, the third 10 waits for the next (prefills first: before any decode);
  // a 50-token prompt larger than the limit still runs alone in an empty step.
  const std::vector<ki::Request> trace = {req(0, 0, 10, 2), req(1, 0, 10, 2), req(2, 0, 10, 2), req(3, 0, 50, 2)};
  ki::serve(trace, limits, runner, clock);
  EXPECT_EQ(runner.prefills, (std::vector<std::vector<int>>{{0, 1}, {2}, {3}}));
  EXPECT_EQ((std::vector<std::string>(runner.steps.begin(), runner.steps.begin() + 4)),
            (std::vector<std::string>{"p", "p", "p", "d"}));
}

TEST(InferScheduler, ArrivalOrderNotTraceOrder) {
  ki::ManualClock clock;
  FakeRunner runner(clock, 1, 1, 0);
  ki::Limits limits;
  limits.max_batch = 1;
  const std::vector<ki::Request> trace = {req(0, 2.0, 4, 1), req(1, 0.5, 4, 1)};
  const ki::ServeTrace t = ki::serve(trace, limits, runner, clock);
  EXPECT_EQ(runner.prefills, (std::vector<std::vector<int>>{{1}, {0}}));
  EXPECT_DOUBLE_EQ(t.requests[1].first_token_s, 1.5);  // idle to 0.5, prefill 1 s
  EXPECT_DOUBLE_EQ(t.requests[0].first_token_s, 3.0);
  EXPECT_DOUBLE_EQ(t.duration_s, 2.5);  // first arrival 0.5 to last token 3.0
}

TEST(InferScheduler, InvalidArguments) {
  ki::ManualClock clock;
  FakeRunner runner(clock, 1, 1, 0);
  ki::Limits limits;
  limits.max_batch = 0;
  EXPECT_THROW(ki::serve(hand_trace(), limits, runner, clock), std::invalid_argument);
  limits.max_batch = 2;
  limits.kv_budget_tokens = 15;  // R0 needs 13 tokens, R1 22, more than the whole budget
  try {
    ki::serve(hand_trace(), limits, runner, clock);
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("request 1 needs 22 KV tokens"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(runner.steps.empty());  // rejected before any step ran
  limits.kv_budget_tokens = -1;
  EXPECT_THROW(ki::serve(hand_trace(), limits, runner, clock), std::invalid_argument);
  limits.kv_budget_tokens = 0;
  EXPECT_THROW(ki::serve({req(0, 0, 0, 1)}, limits, runner, clock), std::invalid_argument);
  ki::TraceSpec spec;
  spec.rate = 0;
  EXPECT_THROW(ki::make_trace(spec), std::invalid_argument);
  EXPECT_EQ(*ki::trace_error(spec), "rate must be > 0 (got 0)");
  spec.rate = -2;
  EXPECT_TRUE(ki::trace_error(spec).has_value());
  spec.rate = std::nan("");
  EXPECT_TRUE(ki::trace_error(spec).has_value());
  spec = {};
  spec.range_ratio = 1;
  EXPECT_TRUE(ki::trace_error(spec).has_value());
  spec = {};
  spec.requests = 0;
  EXPECT_TRUE(ki::trace_error(spec).has_value());
  spec = {};
  spec.prompt_len = 0;
  EXPECT_TRUE(ki::trace_error(spec).has_value());
  spec = {};
  spec.output_len = 0;
  EXPECT_TRUE(ki::trace_error(spec).has_value());
  EXPECT_FALSE(ki::trace_error(ki::TraceSpec{}).has_value());
}

TEST(InferScheduler, TraceIsDeterministicAndCounterBased) {
  ki::TraceSpec spec;
  spec.requests = 100;
  const std::vector<ki::Request> a = ki::make_trace(spec), b = ki::make_trace(spec);
  ASSERT_EQ(a.size(), 100u);
  spec.requests = 10;
  const std::vector<ki::Request> prefix = ki::make_trace(spec);
  spec.seed = 2;
  const std::vector<ki::Request> other = ki::make_trace(spec);
  int differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, static_cast<int>(i));
    EXPECT_EQ(a[i].arrival_s, b[i].arrival_s);
    EXPECT_EQ(a[i].prompt_len, b[i].prompt_len);
    EXPECT_EQ(a[i].output_len, b[i].output_len);
    if (i > 0) {
      EXPECT_GE(a[i].arrival_s, a[i - 1].arrival_s);
    }
    if (i < 10) {
      // request i depends on (seed, i) only: a shorter trace is a prefix
      EXPECT_EQ(a[i].arrival_s, prefix[i].arrival_s);
      EXPECT_EQ(a[i].prompt_len, prefix[i].prompt_len);
      differ += a[i].arrival_s != other[i].arrival_s;
    }
  }
  EXPECT_GT(a.front().arrival_s, 0);  // the first request at its gap after 0
  EXPECT_GE(differ, 9);
}

TEST(InferScheduler, TraceLengthsAndRate) {
  ki::TraceSpec spec;
  spec.requests = 20000;
  spec.rate = 4;
  spec.prompt_len = 128;
  spec.output_len = 32;
  spec.range_ratio = 0.5;
  const std::vector<ki::Request> t = ki::make_trace(spec);
  int pmin = 1 << 30, pmax = 0, omin = 1 << 30, omax = 0;
  double psum = 0;
  for (const ki::Request& r : t) {
    pmin = std::min(pmin, r.prompt_len), pmax = std::max(pmax, r.prompt_len);
    omin = std::min(omin, r.output_len), omax = std::max(omax, r.output_len);
    psum += r.prompt_len;
  }
  // [128 * 0.5, 128 * 1.5] = [64, 192] and [16, 48], both ends drawn over 20000 requests.
  EXPECT_EQ(pmin, 64);
  EXPECT_EQ(pmax, 192);
  EXPECT_EQ(omin, 16);
  EXPECT_EQ(omax, 48);
  EXPECT_NEAR(psum / 20000, 128, 1.5);  // uniform mean; sd of the mean 37/sqrt(20000) = 0.26
  // Exponential gaps of mean 1/rate = 0.25 s: sd of the mean 0.25/sqrt(20000) = 0.0018 (0.7%).
  EXPECT_NEAR(t.back().arrival_s / 20000, 0.25, 0.25 * 0.03);
  spec.range_ratio = 0;
  spec.requests = 50;
  for (const ki::Request& r : ki::make_trace(spec)) {
    EXPECT_EQ(r.prompt_len, 128);
    EXPECT_EQ(r.output_len, 32);
  }
  spec.prompt_len = 1;
  spec.range_ratio = 0.9;  // [round(0.1), round(1.9)] = [0, 2] -> at least 1
  for (const ki::Request& r : ki::make_trace(spec)) EXPECT_GE(r.prompt_len, 1);
}

// numpy.percentile([1, 2, 3, 4, 10], [50, 90, 99]) = [3, 7.6, 9.76]; mean 4.
TEST(InferScheduler, PercentilesLikeNumpy) {
  const ki::Percentiles p = ki::percentiles({10, 2, 4, 1, 3});
  EXPECT_EQ(p.count, 5);
  EXPECT_DOUBLE_EQ(p.mean, 4);
  EXPECT_DOUBLE_EQ(p.p50, 3);
  EXPECT_NEAR(p.p90, 7.6, 1e-12);
  EXPECT_NEAR(p.p99, 9.76, 1e-12);
  const ki::Percentiles one = ki::percentiles({0.5});
  EXPECT_EQ(one.p50, 0.5);
  EXPECT_EQ(one.p99, 0.5);
  const ki::Percentiles none = ki::percentiles({});
  EXPECT_EQ(none.count, 0);
  EXPECT_EQ(none.p99, 0);
}

TEST(InferScheduler, SteadyClockWaits) {
  ki::SteadyClock clock;
  const double t0 = clock.now();
  EXPECT_GE(t0, 0);
  clock.wait_until(t0 + 0.005);
  EXPECT_GE(clock.now(), t0 + 0.005);
  const double t1 = clock.now();
  clock.wait_until(t1 - 1);  // in the past: returns at once
  EXPECT_LT(clock.now() - t1, 0.5);
}
