// phase=serve on the CPU: the continuous-batching scheduler (kernels/infer/scheduler.hpp) over
// a seeded trace, each step run by the real model on a steady clock, so TTFT, TPOT, ITL and
// E2EL are measured as a serving engine's users see them. The timed run is the whole trace.
#include <fmt/format.h>

#include <cmath>

#include "bench/core/errors.hpp"
#include "bench/suites/infer/infer.hpp"
#include "bench/suites/infer/model_case.hpp"
#include "bench/suites/infer/runner.hpp"

namespace gpubench::suites::infer {
namespace {

namespace ki = kernels::infer;
using ki::idx;

class ServeCase final : public ServeCaseOf<ModelCase> {
 public:
  explicit ServeCase(const InferSpec& spec) : ServeCaseOf<ModelCase>(spec, spec) {}

  // A pool for the scheduler's budget (each request's pages round its tokens up: one page more
  // per request at most), or for max_batch of the trace's longest requests without a budget.
  void setup() override {
    idx longest = 1;
    for (const ki::Request& r : trace_) longest = std::max<idx>(longest, r.prompt_len + r.output_len);
    const idx page = s_.kv_page > 0 ? s_.kv_page : longest;
    const idx per_request = (longest + page - 1) / page;
    const idx budget_pages = s_.limits.kv_budget_tokens > 0 ? (s_.limits.kv_budget_tokens + page - 1) / page + s_.limits.max_batch
                                                            : per_request * s_.limits.max_batch;
    // build() sizes pages per sequence from `tokens`: no sequences opened up front, the budget as spare pages.
    idx step_rows = 0;  // the largest prefill: max_batch of the longest prompts (or the prefill token limit)
    for (const ki::Request& r : trace_) step_rows = std::max<idx>(step_rows, r.prompt_len);
    step_rows *= s_.limits.max_batch;
    if (s_.limits.max_prefill_tokens > 0) step_rows = std::min<idx>(step_rows, std::max<idx>(s_.limits.max_prefill_tokens, longest));
    build(longest, 0, step_rows, budget_pages);
  }

  // One request's prefill and two decode steps through the runner's path, against the
  // reference's recompute of the same tokens; its cache is freed again.
  Verification verify() override {
    ki::Request r = trace_.front();
    r.output_len = 3;
    Verification v;
    v.passed = true;
    v.method = fmt::format("the first request's prefill and two decode steps vs the reference model in double "
                           "recomputing every token (tolerance {} x RMS)", kFp32Tolerance);
    std::vector<std::int32_t> tokens = ki::prompt_tokens(s_.model, kPromptSeed, r.id, r.prompt_len);
    const int seq = cache_->open();
    if (!cache_->reserve(seq, r.prompt_len + r.output_len)) throw CaseSkipped("serve: the KV pool cannot hold one request");
    ki::Chunk chunk{seq, 0, tokens.data(), r.prompt_len};
    for (int step = 0; step < 3; ++step) {
      const std::vector<float> got = engine_->forward({chunk}, threads_, parallel());
      compare_logits(step == 0 ? "prefill logits" : "decode logits", got.data(), reference_last(tokens).data(),
                     s_.model.vocab_shard(), kFp32Tolerance, v);
      tokens.push_back(ki::argmax_rows(got, 1, s_.model.vocab_shard())[0]);
      chunk = {seq, static_cast<idx>(tokens.size()) - 1, &tokens.back(), 1};
    }
    cache_->release(seq);
    if (v.passed) {
      EngineRunner r = runner();
      warm_up(r);
    }
    return v;
  }

  void run() override {
    EngineRunner r = runner();
    timed(r);
  }

  Metrics metrics() const override {
    Metrics m = ServeCaseOf<ModelCase>::metrics();
    add_common(m);
    return m;
  }

 private:
  // The serve loop's step: the forward, then greedy sampling of each chunk's logits on the host.
  EngineRunner runner() {
    const ki::Parallel par = parallel();
    return EngineRunner(
        s_.model, cache_->table(),
        [this, par](const std::vector<ki::Chunk>& chunks) -> const std::vector<std::int32_t>& {
          next_ = ki::argmax_rows(engine_->forward(chunks, threads_, par), static_cast<idx>(chunks.size()),
                                  s_.model.vocab_shard());
          return next_;
        },
        &shapes_);
  }
  std::vector<std::int32_t> next_;
};

nlohmann::ordered_json percentiles_ms(const ki::Percentiles& p) {
  return {{"mean", p.mean * 1e3}, {"p50", p.p50 * 1e3}, {"p90", p.p90 * 1e3}, {"p99", p.p99 * 1e3}, {"count", p.count}};
}

}  // namespace

nlohmann::ordered_json ServeWarmup::to_json() const {
  return {{"method", kServeWarmupMethod}, {"steps", steps},           {"shapes", shapes},
          {"seconds", seconds},           {"timed_steps", timed_steps}, {"timed_steps_of_a_new_shape", cold_steps}};
}

ServeWarmup warm_up_serve(const std::vector<ki::Request>& trace, const ki::Limits& limits, ki::StepRunner& runner,
                          StepShapes& shapes) {
  ServeWarmup w;
  shapes.reset_counts();
  ki::IdleSkippingClock clock;
  const ki::ServeTrace pass = ki::serve(trace, limits, runner, clock);
  w.steps = pass.prefill_steps + pass.decode_steps;
  w.shapes = static_cast<std::int64_t>(shapes.shapes());
  w.seconds = clock.now() - clock.skipped();
  shapes.reset_counts();
  return w;
}

void timed_pass_counts(ServeWarmup& w, const StepShapes& shapes) {
  w.timed_steps = shapes.steps();
  w.cold_steps = shapes.cold();
}

void annotate_serve(nlohmann::ordered_json& g, const kernels::infer::ServeTrace& t) {
  if (t.requests.empty()) return;
  const ki::ServeSummary s = ki::summarize(t, {});
  auto& m = g["metrics"];
  m["ttft_p50_ms"] = s.ttft_s.p50 * 1e3;
  m["ttft_p99_ms"] = s.ttft_s.p99 * 1e3;
  m["tpot_p50_ms"] = s.tpot_s.p50 * 1e3;
  m["tpot_p99_ms"] = s.tpot_s.p99 * 1e3;
  m["itl_p99_ms"] = s.itl_s.p99 * 1e3;
  m["e2el_p50_ms"] = s.e2el_s.p50 * 1e3;
  m["requests_per_s"] = s.requests_per_s;
  m["output_tokens_per_s"] = s.output_tokens_per_s;
  m["output_tokens_per_s_per_user"] = s.output_tokens_per_s_per_user;
}

nlohmann::ordered_json serve_details(const InferSpec& spec, const kernels::infer::ServeTrace& last,
                                     const ServeWarmup* warmup) {
  if (last.requests.empty()) return nlohmann::ordered_json::object();
  const ki::ServeSummary s = ki::summarize(last, {});
  const ki::TraceSpec& t = spec.trace;
  nlohmann::ordered_json serve;
  serve["trace"] = {{"rate", t.rate},           {"requests", t.requests}, {"prompt_len", t.prompt_len},
                    {"output_len", t.output_len}, {"range_ratio", t.range_ratio}, {"seed", t.seed}};
  serve["limits"] = {{"max_batch", spec.limits.max_batch},
                     {"kv_budget_tokens", spec.limits.kv_budget_tokens},
                     {"max_prefill_tokens", spec.limits.max_prefill_tokens}};
  serve["summary"] = {{"ttft_ms", percentiles_ms(s.ttft_s)},
                      {"tpot_ms", percentiles_ms(s.tpot_s)},
                      {"itl_ms", percentiles_ms(s.itl_s)},
                      {"e2el_ms", percentiles_ms(s.e2el_s)},
                      {"requests_per_s", s.requests_per_s},
                      {"output_tokens_per_s", s.output_tokens_per_s},
                      {"output_tokens_per_s_per_user", s.output_tokens_per_s_per_user},
                      {"goodput_rps", s.goodput_rps},
                      {"duration_s", s.duration_s},
                      {"completed", s.completed}};
  serve["steps"] = {{"prefill", last.prefill_steps}, {"decode", last.decode_steps}, {"largest_batch", last.largest_batch}};
  nlohmann::ordered_json requests = nlohmann::ordered_json::array();
  for (const ki::RequestRecord& r : last.requests) {
    const std::optional<double> tpot = r.tpot_s();
    requests.push_back({{"id", r.request.id},
                        {"arrival_s", r.request.arrival_s},
                        {"prompt_len", r.request.prompt_len},
                        {"output_len", r.request.output_len},
                        {"ttft_ms", r.ttft_s() * 1e3},
                        {"tpot_ms", tpot ? nlohmann::ordered_json(*tpot * 1e3) : nlohmann::ordered_json()},
                        {"e2el_ms", r.e2el_s() * 1e3}});
  }
  serve["requests"] = std::move(requests);
  if (warmup != nullptr) serve["warmup"] = warmup->to_json();
  return {{"serve", std::move(serve)}};
}

std::unique_ptr<Case> make_serve_case(const InferSpec& spec) { return std::make_unique<ServeCase>(spec); }

}  // namespace gpubench::suites::infer
