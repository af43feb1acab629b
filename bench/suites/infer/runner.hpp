#pragma once
// The serving scheduler's steps on a model (the CPU engine or the GPU one): a request gets a
// cache sequence at its prefill (room for its whole prompt and output) and frees it when
// finished; decode feeds back each request's last token (greedy sampling). Internal to the suite.
#include <functional>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/core/case.hpp"
#include "bench/suites/infer/infer.hpp"
#include "kernels/infer/model.hpp"
#include "kernels/infer/scheduler.hpp"

namespace gpubench::suites::infer {

// One step of the model over the chunks; the logits of each chunk's last token, on the host.
using StepFn = std::function<const std::vector<float>&(const std::vector<kernels::infer::Chunk>&)>;

class EngineRunner final : public kernels::infer::StepRunner {
 public:
  EngineRunner(const kernels::infer::ModelSpec& spec, kernels::infer::PageTable& pages, StepFn step)
      : spec_(spec), pages_(pages), step_(std::move(step)) {}

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
    const std::vector<float>& logits = step_(chunks);
    const std::vector<std::int32_t> next =
        kernels::infer::argmax_rows(logits, static_cast<kernels::infer::idx>(rs.size()), spec_.vocab_shard());
    for (std::size_t i = 0; i < rs.size(); ++i) live_[rs[i]->id].last = next[i];
  }
  kernels::infer::ModelSpec spec_;
  kernels::infer::PageTable& pages_;
  StepFn step_;
  std::map<int, Live> live_;
};

// A serve case's figures from its trace (serve_case.cpp): the latency percentiles and rates as
// metrics, and details.serve (the trace, the limits, the summary, every request).
void annotate_serve(nlohmann::ordered_json& gpubench, const kernels::infer::ServeTrace& trace);
nlohmann::ordered_json serve_details(const InferSpec& spec, const kernels::infer::ServeTrace& trace);

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
    return serve_details(spec_, last_);
  }
  SamplingPolicy sampling() const override {
    SamplingPolicy p;
    p.single_run = true;  // the run is the whole trace
    return p;
  }

 protected:
  std::vector<kernels::infer::Request> trace_;
  kernels::infer::ServeTrace last_;

 private:
  InferSpec spec_;
};

}  // namespace gpubench::suites::infer
