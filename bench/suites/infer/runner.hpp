#pragma once
// The serving scheduler's steps on a model (the CPU engine or the GPU one): a request gets a
// cache sequence at its prefill (room for its whole prompt and output) and frees it when
// finished; decode feeds back each request's last token (greedy sampling). Internal to the suite.
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/core/case.hpp"
#include "bench/suites/infer/infer.hpp"
#include "kernels/infer/model.hpp"
#include "kernels/infer/scheduler.hpp"

namespace gpubench::suites::infer {

// One serving step of the model over the chunks, as the serve loop runs it: each chunk's next
// token (greedy: the argmax of its last token's logits), on the host. The GPU step cases time
// this same call (GpuEngine::step_tokens), so their curves include what the loop pays per step.
using StepFn = std::function<const std::vector<std::int32_t>&(const std::vector<kernels::infer::Chunk>&)>;

// One serving step over an engine with GpuEngine's step interface (prepare: the inputs packed in
// pinned memory and copied in one transfer; enqueue: the forward and the on-device argmax;
// fetch_tokens: the next tokens back into pinned memory, synchronised): what the GPU serve
// loop runs per step and what the GPU prefill and decode cases time, so the curves a serving
// projection reads include each step's host work. `launch`, when set, replaces enqueue() (a CUDA
// graph of it).
inline constexpr const char* kServingStepTiming =
    "each run is a serving step as the serve loop runs it: inputs packed on the host and copied from pinned "
    "memory, the forward, greedy argmax on the device, the next tokens copied back to pinned memory, the "
    "stream synchronised";
template <class Engine>
const std::vector<std::int32_t>& serving_step(Engine& e, const std::vector<kernels::infer::Chunk>& chunks,
                                              const std::function<void()>& launch = {}) {
  e.prepare(chunks);
  if (launch) launch();
  else e.enqueue();
  return e.fetch_tokens();
}

// The shapes of the steps run so far, by (rows, chunks): the keys a GPU engine builds a cuBLASLt
// descriptor and queries the heuristic for on first use. `cold` counts steps whose shape had not
// run before (since the last reset_counts()).
class StepShapes {
 public:
  void note(std::int64_t rows, std::int64_t chunks) {
    ++steps_;
    if (seen_.insert({rows, chunks}).second) ++cold_;
  }
  void reset_counts() { steps_ = cold_ = 0; }
  std::int64_t steps() const { return steps_; }
  std::int64_t cold() const { return cold_; }
  std::size_t shapes() const { return seen_.size(); }

 private:
  std::set<std::pair<std::int64_t, std::int64_t>> seen_;
  std::int64_t steps_ = 0, cold_ = 0;
};

class EngineRunner final : public kernels::infer::StepRunner {
 public:
  EngineRunner(const kernels::infer::ModelSpec& spec, kernels::infer::PageTable& pages, StepFn step,
               StepShapes* shapes = nullptr)
      : spec_(spec), pages_(pages), step_(std::move(step)), shapes_(shapes) {}

  void prefill(const std::vector<const kernels::infer::Request*>& admitted) override {
    std::vector<kernels::infer::Chunk> chunks;
    for (const kernels::infer::Request* r : admitted) {
      Live& live = live_[r->id];
      live.seq = pages_.open();
      if (!pages_.reserve(live.seq, r->prompt_len + r->output_len)) {
        throw std::logic_error("serve: the KV pool is smaller than the scheduler's budget");
      }
      live.prompt = kernels::infer::prompt_tokens(spec_, kPromptSeed, r->id, r->prompt_len);
      chunks.push_back({live.seq, 0, live.prompt.data(), r->prompt_len});
    }
    sample(admitted, chunks);
  }

  void decode(const std::vector<const kernels::infer::Request*>& running, const std::vector<std::int64_t>& context) override {
    std::vector<kernels::infer::Chunk> chunks;
    for (std::size_t i = 0; i < running.size(); ++i) {
      Live& live = live_[running[i]->id];
      chunks.push_back({live.seq, context[i], &live.last, 1});
    }
    sample(running, chunks);
  }

  void release(const kernels::infer::Request& r) override {
    auto it = live_.find(r.id);
    if (it == live_.end()) return;
    pages_.release(it->second.seq);
    live_.erase(it);
  }

 private:
  struct Live {
    int seq = -1;
    std::vector<std::int32_t> prompt;
    std::int32_t last = 0;
  };
  void sample(const std::vector<const kernels::infer::Request*>& rs, const std::vector<kernels::infer::Chunk>& chunks) {
    if (shapes_ != nullptr) {
      std::int64_t rows = 0;
      for (const kernels::infer::Chunk& c : chunks) rows += c.n;
      shapes_->note(rows, static_cast<std::int64_t>(chunks.size()));
    }
    const std::vector<std::int32_t>& next = step_(chunks);
    if (next.size() != rs.size()) throw std::logic_error("serve: a step returned a token count unlike its chunks'");
    for (std::size_t i = 0; i < rs.size(); ++i) live_[rs[i]->id].last = next[i];
  }
  kernels::infer::ModelSpec spec_;
  kernels::infer::PageTable& pages_;
  StepFn step_;
  StepShapes* shapes_;
  std::map<int, Live> live_;
};

// The serve cases' warm-up: one untimed pass of the whole trace through the same scheduler and
// runner before the timed one, on a clock that skips the trace's idle gaps (IdleSkippingClock:
// steps take their real time, so it forms the batches the timed pass will, without waiting for
// arrivals). It builds the engine's per-shape state (cuBLASLt descriptors and heuristic choices
// for every row count, lazily loaded kernels) outside the percentiles; the timed pass then
// counts the steps whose shape the warm-up had not run (timing-dependent batching can form a
// new one), which details.serve.warmup reports.
struct ServeWarmup {
  std::int64_t steps = 0;         // steps of the untimed pass
  std::int64_t shapes = 0;        // distinct (rows, chunks) shapes it ran
  double seconds = 0;             // its wall time
  std::int64_t timed_steps = 0;   // steps of the timed pass
  std::int64_t cold_steps = 0;    // of those, steps whose shape had not run before
  nlohmann::ordered_json to_json() const;
};
inline constexpr const char* kServeWarmupMethod =
    "one untimed pass of the whole trace first (same scheduler and engine, the trace's idle gaps skipped), so "
    "per-shape setup (cuBLASLt descriptors and heuristics for each row count, lazy kernel loading) stays out of "
    "the percentiles";
// Runs the warm-up pass: `make_runner(shapes)` builds the runner both passes use (with `shapes`
// noting every step). Returns the pass's counts; call timed_pass_counts after the timed pass.
ServeWarmup warm_up_serve(const std::vector<kernels::infer::Request>& trace, const kernels::infer::Limits& limits,
                          kernels::infer::StepRunner& runner, StepShapes& shapes);
// After the timed pass: its steps and cold steps (shapes.reset_counts() was called by warm_up_serve).
void timed_pass_counts(ServeWarmup& w, const StepShapes& shapes);

// A serve case's figures from its trace (serve_case.cpp): the latency percentiles and rates as
// metrics, and details.serve (the trace, the limits, the summary, every request, the warm-up).
void annotate_serve(nlohmann::ordered_json& gpubench, const kernels::infer::ServeTrace& trace);
nlohmann::ordered_json serve_details(const InferSpec& spec, const kernels::infer::ServeTrace& trace,
                                     const ServeWarmup* warmup = nullptr);

// What the CPU and GPU serve cases share over their base (a model case): the trace, the single
// timed run (the whole trace), and the figures of the last run. Derived cases set last_ in run().
template <class Base>
class ServeCaseOf : public Base {
 public:
  template <class... BaseArgs>
  explicit ServeCaseOf(const InferSpec& spec, BaseArgs&&... base_args)
      : Base(std::forward<BaseArgs>(base_args)...), trace_(kernels::infer::make_trace(spec.trace)), spec_(spec) {}

  Metrics metrics() const override {
    Metrics m;
    double out = 0;
    for (const kernels::infer::Request& r : trace_) out += r.output_len;
    m.items = out;
    m.items_unit = "output_tokens";
    m.extra["model"] = spec_.model.name;
    return m;
  }
  void annotate(nlohmann::ordered_json& g, double seconds_per_run) const override {
    (void)seconds_per_run;
    annotate_serve(g, last_);
  }
  nlohmann::ordered_json details(std::int64_t measured_runs) override {
    (void)measured_runs;
    return serve_details(spec_, last_, warmed_ ? &warmup_ : nullptr);
  }
  SamplingPolicy sampling() const override {
    SamplingPolicy p;
    p.single_run = true;  // the run is the whole trace
    return p;
  }

 protected:
  // Derived verify(): after the checks, the warm-up pass; derived run(): the timed pass through
  // the same runner (its steps counted against the warm-up's shapes).
  void warm_up(kernels::infer::StepRunner& runner) {
    warmup_ = warm_up_serve(trace_, spec_.limits, runner, shapes_);
    warmed_ = true;
  }
  void timed(kernels::infer::StepRunner& runner) {
    shapes_.reset_counts();
    kernels::infer::SteadyClock clock;
    last_ = kernels::infer::serve(trace_, spec_.limits, runner, clock);
    if (warmed_) timed_pass_counts(warmup_, shapes_);
  }

  std::vector<kernels::infer::Request> trace_;
  kernels::infer::ServeTrace last_;
  StepShapes shapes_;
  ServeWarmup warmup_;
  bool warmed_ = false;

 private:
  InferSpec spec_;
};

}  // namespace gpubench::suites::infer
