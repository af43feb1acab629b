// What a serving step is and what the serve cases time (bench/suites/infer/runner.hpp): the
// step's packed inputs (model.hpp's pack_step, one host-to-device copy), the step the serve loop
// runs and the GPU step cases time (serving_step: prepare, forward with on-device argmax, the
// tokens back), the loop feeding each step's tokens back, and the serve cases' untimed warm-up
// pass (every step shape of the trace run once outside the percentiles, idle gaps skipped).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bench/suites/infer/runner.hpp"
#include "kernels/infer/model.hpp"
#include "kernels/infer/scheduler.hpp"

namespace gpubench::suites::infer {
namespace {

namespace ki = kernels::infer;
using ki::idx;

TEST(InferServingStep, PackStepLaysOutOneTransfer) {
  ki::PageTable pages(4, 8);
  const int a = pages.open(), b = pages.open();
  ASSERT_TRUE(pages.reserve(a, 6));  // pages 0, 1... as the pool hands them out
  ASSERT_TRUE(pages.reserve(b, 3));
  const std::vector<std::int32_t> prompt = {5, 6, 7}, next = {9};
  const std::vector<ki::Chunk> chunks = {{b, 0, prompt.data(), 3}, {a, 5, next.data(), 1}};
  ki::StepLayout l;
  l.max_rows = 5;
  l.max_sequences = 3;
  l.max_pages = 2;
  EXPECT_EQ(l.total(), 3 * 5 + 3 + 3 * 2);
  std::vector<std::int32_t> out(static_cast<std::size_t>(l.total()), -1);
  const ki::StepShape shape = ki::pack_step(chunks, pages, l, out.data());
  EXPECT_EQ(shape.rows, 4);
  EXPECT_EQ(shape.outs, 2);
  const std::vector<std::int32_t> tokens(out.begin(), out.begin() + 4), seq(out.begin() + 5, out.begin() + 9),
      pos(out.begin() + 10, out.begin() + 14), last(out.begin() + 15, out.begin() + 17);
  EXPECT_EQ(tokens, (std::vector<std::int32_t>{5, 6, 7, 9}));
  EXPECT_EQ(seq, (std::vector<std::int32_t>{b, b, b, a}));
  EXPECT_EQ(pos, (std::vector<std::int32_t>{0, 1, 2, 5}));
  EXPECT_EQ(last, (std::vector<std::int32_t>{2, 3}));
  for (int q : {a, b}) {
    const auto& p = pages.pages(q);
    for (std::size_t i = 0; i < p.size(); ++i) EXPECT_EQ(out[static_cast<std::size_t>(l.table() + q * 2) + i], p[i]);
  }
  EXPECT_EQ(out[static_cast<std::size_t>(l.table() + b * 2 + 1)], 0);  // b holds one page: the rest is 0
  EXPECT_EQ(out[static_cast<std::size_t>(l.table() + 2 * 2)], 0);      // a sequence id never handed out
  // Beyond the layout: one clear error, nothing written past the buffer.
  l.max_rows = 3;
  EXPECT_THROW(ki::pack_step(chunks, pages, l, out.data()), std::invalid_argument);
  l.max_rows = 5;
  l.max_sequences = 1;
  EXPECT_THROW(ki::pack_step(chunks, pages, l, out.data()), std::invalid_argument);
}

// The GPU engine's step interface, recorded.
struct FakeEngine {
  std::vector<std::string> calls;
  std::vector<std::int32_t> next;
  void prepare(const std::vector<ki::Chunk>& chunks) {
    calls.push_back("prepare");
    next.clear();
    for (const ki::Chunk& c : chunks) next.push_back(c.tokens[c.n - 1] + 1);
  }
  void enqueue() { calls.push_back("enqueue"); }
  const std::vector<std::int32_t>& fetch_tokens() {
    calls.push_back("fetch_tokens");
    return next;
  }
};

// What the step cases time is the serve loop's whole step: the inputs' upload, the forward with
// its argmax (or the graph of it), the tokens back; nothing of it is left out.
TEST(InferServingStep, TheTimedStepIsTheServeLoopsStep) {
  FakeEngine e;
  const std::vector<std::int32_t> t = {3, 4};
  const std::vector<std::int32_t>& got = serving_step(e, {{0, 0, t.data(), 2}});
  EXPECT_EQ(e.calls, (std::vector<std::string>{"prepare", "enqueue", "fetch_tokens"}));
  EXPECT_EQ(got, std::vector<std::int32_t>{5});
  e.calls.clear();
  bool launched = false;
  (void)serving_step(e, {{0, 2, t.data(), 1}}, [&] { launched = true; });
  EXPECT_TRUE(launched);
  EXPECT_EQ(e.calls, (std::vector<std::string>{"prepare", "fetch_tokens"}));
  std::string s = kServingStepTiming;
  for (const char* part : {"pinned", "argmax on the device", "synchronised"}) EXPECT_NE(s.find(part), std::string::npos) << part;
}

ki::ModelSpec tiny_spec() {
  ki::ModelSpec s;
  s.vocab = 100;
  return s;
}

// The loop feeds each step's tokens back (the runner does no sampling of its own) and notes each
// step's shape (rows, chunks).
TEST(InferServingStep, RunnerFeedsTheStepsTokensBackAndNotesShapes) {
  ki::PageTable pages(4, 64);
  std::vector<std::vector<std::int32_t>> fed;
  std::vector<std::int32_t> next;
  StepShapes shapes;
  EngineRunner runner(
      tiny_spec(), pages,
      [&](const std::vector<ki::Chunk>& chunks) -> const std::vector<std::int32_t>& {
        next.clear();
        for (const ki::Chunk& c : chunks) {
          fed.push_back(std::vector<std::int32_t>(c.tokens, c.tokens + c.n));
          next.push_back(static_cast<std::int32_t>(40 + fed.size()));
        }
        return next;
      },
      &shapes);
  ki::Request r;
  r.id = 0;
  r.prompt_len = 3;
  r.output_len = 3;
  runner.prefill({&r});
  runner.decode({&r}, {3});
  runner.decode({&r}, {4});
  ASSERT_EQ(fed.size(), 3u);
  EXPECT_EQ(fed[0].size(), 3u);
  EXPECT_EQ(fed[1], std::vector<std::int32_t>{41});
  EXPECT_EQ(fed[2], std::vector<std::int32_t>{42});
  EXPECT_EQ(shapes.steps(), 3);
  EXPECT_EQ(shapes.cold(), 2);  // (3, 1) and (1, 1)
  EXPECT_EQ(shapes.shapes(), 2u);
}

TEST(InferServingStep, IdleSkippingClockDoesNotWait) {
  ki::IdleSkippingClock c;
  const auto t0 = std::chrono::steady_clock::now();
  c.wait_until(1000);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.5);
  EXPECT_GE(c.now(), 1000);
  EXPECT_GE(c.skipped(), 999);
  c.wait_until(10);  // the past: nothing
  EXPECT_LT(c.skipped(), 1001);
}

// The warm-up runs the whole trace (every step, every shape) before the timed pass, without the
// trace's idle gaps; the timed pass of the same trace then meets no new shape.
TEST(InferServingStep, WarmUpRunsEveryShapeOfTheTraceFirst) {
  ki::TraceSpec t;
  t.rate = 4;  // gaps of ~0.25 s: a 1 ms step finishes each request before the next arrives
  t.requests = 5;
  t.prompt_len = 8;
  t.output_len = 3;
  t.range_ratio = 0.5;
  const std::vector<ki::Request> trace = ki::make_trace(t);
  ki::Limits limits;
  limits.max_batch = 4;
  ki::PageTable pages(4, 64);
  std::vector<std::int32_t> next;
  std::int64_t calls = 0;
  StepShapes shapes;
  auto make = [&] {
    return EngineRunner(
        tiny_spec(), pages,
        [&](const std::vector<ki::Chunk>& chunks) -> const std::vector<std::int32_t>& {
          ++calls;
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          next.assign(chunks.size(), 1);
          return next;
        },
        &shapes);
  };
  EngineRunner warm = make();
  const auto t0 = std::chrono::steady_clock::now();
  ServeWarmup w = warm_up_serve(trace, limits, warm, shapes);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::int64_t expected_steps = 0;
  for (const ki::Request& r : trace) expected_steps += r.output_len;  // one prefill, output_len - 1 decodes
  EXPECT_EQ(w.steps, expected_steps);
  EXPECT_EQ(calls, expected_steps);
  EXPECT_LT(wall, trace.back().arrival_s);  // the idle gaps were skipped
  EXPECT_GE(w.shapes, 2);
  EXPECT_GT(w.seconds, 0);
  EXPECT_EQ(pages.free_pages(), 64);  // every request released its cache
  // The timed pass (here on a skipping clock too, for the test's time): no step of a new shape.
  EngineRunner timed = make();
  ki::IdleSkippingClock clock;
  const ki::ServeTrace pass = ki::serve(trace, limits, timed, clock);
  timed_pass_counts(w, shapes);
  EXPECT_EQ(w.timed_steps, pass.prefill_steps + pass.decode_steps);
  EXPECT_EQ(w.cold_steps, 0);
  const nlohmann::ordered_json j = w.to_json();
  EXPECT_EQ(j["timed_steps_of_a_new_shape"], 0);
  EXPECT_NE(j["method"].get<std::string>().find("untimed pass of the whole trace"), std::string::npos);
}

}  // namespace
}  // namespace gpubench::suites::infer
