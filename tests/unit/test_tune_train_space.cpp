// tune train's knob space (bench/tune/train_tuner.hpp) and the report's Tuning report section
// (reports/tuning.hpp), without running anything.
#include <gtest/gtest.h>

#include <set>

#include "bench/core/errors.hpp"
#include "bench/tune/train_tuner.hpp"
#include "reports/document.hpp"
#include "reports/tuning.hpp"

namespace gpubench::tune {
namespace {

DeviceInfo cpu() {
  DeviceInfo d;
  d.kind = DeviceKind::Cpu;
  d.name = "test cpu";
  return d;
}

DeviceInfo gpu(std::int64_t memory) {
  DeviceInfo d;
  d.kind = DeviceKind::Cuda;
  d.ordinal = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.memory_bytes = memory;
  return d;
}

TrainTuneRequest request(const DeviceInfo& d, const std::string& model, std::optional<std::int64_t> global = {}) {
  TrainTuneRequest r;
  r.device = d;
  r.model = model;
  r.global_batch = global;
  return r;
}

constexpr double kPlenty = 1e12;

TEST(TuneTrainSpace, CpuMlpSearchesMicroBatchAndAccumulation) {
  const TrainSpace s = make_train_space(request(cpu(), "mlp", 12), kPlenty);
  EXPECT_EQ(s.global_batch, 12);
  EXPECT_EQ(s.objective, "samples_per_s");
  EXPECT_EQ(s.preset, "quick");
  // Divisors of 12, fp32 only, no recompute for the mlp.
  std::set<std::string> seen;
  for (const Candidate& c : s.candidates) {
    EXPECT_EQ(knob(c.config, "precision"), "fp32");
    EXPECT_EQ(knob(c.config, "recompute"), "none");
    EXPECT_EQ(std::stoll(knob(c.config, "micro_batch")) * std::stoll(knob(c.config, "accum")), 12);
    seen.insert(knob(c.config, "micro_batch"));
  }
  EXPECT_EQ(seen, (std::set<std::string>{"1", "2", "3", "4", "6", "12"}));
  EXPECT_TRUE(s.unfit.empty());
  // The default: the quick preset's micro-batch 4 (CPU), fp32, no recompute; measured first.
  EXPECT_EQ(config_label(s.default_config), "precision=fp32 micro_batch=4 accum=3 recompute=none");
  const auto first = std::max_element(s.candidates.begin(), s.candidates.end(),
                                      [](const Candidate& a, const Candidate& b) { return a.prior < b.prior; });
  EXPECT_EQ(first->config, s.default_config);
  EXPECT_EQ(run_command(s, s.default_config, "cpu"),
            "gpubench run --suite train --preset quick --device cpu --axis model=mlp --axis precision=fp32 "
            "--axis micro_batch=4 --axis accum=3 --axis recompute=none");
}

TEST(TuneTrainSpace, DefaultGlobalBatchIsThePresets) {
  const TrainSpace s = make_train_space(request(cpu(), "mlp"), kPlenty);
  EXPECT_EQ(s.global_batch, 4);  // quick, CPU: micro-batch 4, accumulation 1
  EXPECT_EQ(s.candidates.size(), 3u);
}

TEST(TuneTrainSpace, GpuTransformerSearchesPrecisionAndRecompute) {
  const TrainSpace s = make_train_space(request(gpu(80e9), "transformer", 8), 80e9);
  EXPECT_EQ(s.objective, "tokens_per_s");
  std::set<std::string> precisions, recomputes;
  for (const Candidate& c : s.candidates) {
    precisions.insert(knob(c.config, "precision"));
    recomputes.insert(knob(c.config, "recompute"));
  }
  EXPECT_EQ(precisions, (std::set<std::string>{"fp32", "tf32", "fp16-amp", "bf16-amp"}));
  EXPECT_EQ(recomputes, (std::set<std::string>{"none", "mlp", "block"}));
  EXPECT_EQ(s.candidates.size(), 4u * 3u * 4u);  // micro-batches 1, 2, 4, 8
}

TEST(TuneTrainSpace, TheMemoryEstimateLeavesOutWhatCannotFit) {
  // gpt2-124m at micro-batch 64 needs far more than 8 GB; micro-batch 1 fits.
  const TrainSpace s = make_train_space(request(gpu(8e9), "gpt2-124m", 64), 8e9);
  EXPECT_FALSE(s.unfit.empty());
  EXPECT_FALSE(s.candidates.empty());
  for (const LogEntry& e : s.unfit) {
    EXPECT_EQ(e.status, Status::DoesNotFit);
    EXPECT_NE(e.reason.find("by the estimate"), std::string::npos);
  }
  for (const Candidate& c : s.candidates) EXPECT_LT(std::stoll(knob(c.config, "micro_batch")), 64);
}

TEST(TuneTrainSpace, UsageErrors) {
  EXPECT_THROW(make_train_space(request(cpu(), "resnet"), kPlenty), UsageError);
  EXPECT_THROW(make_train_space(request(cpu(), "mlp", 0), kPlenty), UsageError);
  TrainTuneRequest r = request(cpu(), "mlp", 6);
  r.ranks = 4;
  try {
    make_train_space(r, kPlenty);
    FAIL() << "6 over 4 ranks";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("not divisible by the 4 ranks"), std::string::npos) << e.what();
  }
  r = request(cpu(), "mlp", 4);
  r.shape_axes = {"accum=2"};
  EXPECT_THROW(make_train_space(r, kPlenty), UsageError);
  r.shape_axes = {"hidden=64,128"};
  EXPECT_THROW(make_train_space(r, kPlenty), UsageError);
  r.shape_axes = {"hidden"};
  EXPECT_THROW(make_train_space(r, kPlenty), UsageError);
  // Nothing fits: every micro-batch is beyond memory.
  try {
    make_train_space(request(cpu(), "mlp", 4), 1e3);
    FAIL() << "1 kB of memory";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no micro-batch fits"), std::string::npos) << e.what();
  }
}

TEST(TuneTrainSpace, ShapeAxesDescribeTheModel) {
  TrainTuneRequest r = request(cpu(), "transformer", 2);
  r.shape_axes = {"layers=1", "hidden=32", "heads=2"};
  const TrainSpace s = make_train_space(r, kPlenty);
  EXPECT_EQ(s.fixed["layers"], "1");
  EXPECT_EQ(s.fixed["hidden"], "32");
  const std::string cmd = run_command(s, s.default_config, "cpu");
  EXPECT_NE(cmd.find("--axis layers=1 --axis hidden=32 --axis heads=2"), std::string::npos) << cmd;
  // CPU transformers search recompute too.
  std::set<std::string> recomputes;
  for (const Candidate& c : s.candidates) recomputes.insert(knob(c.config, "recompute"));
  EXPECT_EQ(recomputes.size(), 3u);
}

}  // namespace
}  // namespace gpubench::tune

namespace gpubench::reports {
namespace {

TEST(TuningReport, ParetoFrontier) {
  // (memory, throughput): 1 -> 10, 2 -> 8 (dominated), 3 -> 15, 3 -> 12 (dominated), 5 -> 20.
  const std::vector<double> x = {3, 1, 2, 5, 3}, y = {15, 10, 8, 20, 12};
  EXPECT_EQ(pareto_frontier(x, y), (std::vector<std::size_t>{1, 0, 3}));
  EXPECT_TRUE(pareto_frontier({}, {}).empty());
}

ResultsFile tuned_file() {
  ResultsFile f;
  f.path = "T.json";
  f.tuning = nlohmann::json::parse(R"({
    "target": "train", "objective": "samples_per_s", "knobs": ["precision", "micro_batch", "accum", "recompute"],
    "fixed": {"model": "mlp", "device": "cpu", "global_batch": 16, "ranks": 1},
    "recommended": {"precision": "fp32", "micro_batch": 16, "accum": 1, "recompute": "none", "samples_per_s": 2000.0,
                    "step_s": 0.008, "noise_pct": 1.5, "memory_bytes": 4000000,
                    "command": "gpubench run --suite train --preset quick --device cpu --axis model=mlp --axis micro_batch=16"},
    "default": {"precision": "fp32", "micro_batch": 4, "accum": 4, "recompute": "none", "samples_per_s": 1000.0,
                "step_s": 0.016, "noise_pct": 2.0, "memory_bytes": 2000000},
    "speedup_vs_default": 2.0, "budget_s": 8, "search_s": 7.5, "final_s": 2.0, "wall_s": 9.8, "seed": 1,
    "configurations": {"candidates": 5, "measured": 4, "failed": 1, "does_not_fit": 0, "skipped": 0},
    "search": [
      {"precision": "fp32", "micro_batch": 4, "accum": 4, "recompute": "none", "stage": "short", "round": 0,
       "status": "ok", "samples_per_s": 990.0, "memory_bytes": 2000000, "cost_s": 1.0},
      {"precision": "fp32", "micro_batch": 8, "accum": 2, "recompute": "none", "stage": "short", "round": 0,
       "status": "failed", "reason": "verification failed: <script>x</script>", "cost_s": 1.0},
      {"precision": "fp32", "micro_batch": 16, "accum": 1, "recompute": "none", "stage": "short", "round": 0,
       "status": "ok", "samples_per_s": 1900.0, "memory_bytes": 4000000, "cost_s": 1.0},
      {"precision": "fp32", "micro_batch": 16, "accum": 1, "recompute": "none", "stage": "final", "round": 1,
       "role": "recommended", "status": "ok", "samples_per_s": 2000.0, "memory_bytes": 4000000, "cost_s": 1.0},
      {"precision": "fp32", "micro_batch": 4, "accum": 4, "recompute": "none", "stage": "final", "round": 1,
       "role": "default", "status": "ok", "samples_per_s": 1000.0, "memory_bytes": 2000000, "cost_s": 1.0}
    ]})");
  return f;
}

TEST(TuningReport, SectionInMarkdownAndHtml) {
  Document doc;
  doc.title = "t";
  tuning_section(doc, {tuned_file()});
  const std::string md = to_markdown(doc);
  EXPECT_NE(md.find("## Tuning report"), std::string::npos) << md;
  EXPECT_NE(md.find("```\ngpubench run --suite train --preset quick --device cpu \\\n  --axis model=mlp \\\n  --axis "
                    "micro_batch=16\n```"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| recommended | fp32 | 16 | 1 | none | 2000 | 1.5 |"), std::string::npos) << md;
  EXPECT_NE(md.find("2.000x"), std::string::npos) << md;
  EXPECT_NE(md.find("verification failed"), std::string::npos) << md;
  const std::string html = to_html(doc);
  EXPECT_NE(html.find("<svg class=\"chart scatter\""), std::string::npos);
  EXPECT_EQ(html.find("<script>"), std::string::npos);  // the reason is escaped
  // Two searched points, two final ones; the frontier joins the searched ones.
  std::size_t circles = 0;
  for (std::size_t p = html.find("<circle"); p != std::string::npos; p = html.find("<circle", p + 1)) ++circles;
  EXPECT_EQ(circles, 4u + 2u);  // + the legend's two
}

TEST(TuningReport, WithinNoiseAndNothingRecommended) {
  ResultsFile f = tuned_file();
  f.tuning["speedup_vs_default"] = 1.01;
  Document doc;
  tuning_section(doc, {f});
  EXPECT_NE(to_markdown(doc).find("within the measurements' noise"), std::string::npos);
  // With sample counts: the speed-up with twice the combined standard error of the two means.
  f.tuning["recommended"]["samples"] = 40;
  f.tuning["default"]["samples"] = 40;
  Document se;
  tuning_section(se, {f});
  EXPECT_NE(to_markdown(se).find("Speed-up 1.010 ± 0.008"), std::string::npos) << to_markdown(se);
  EXPECT_EQ(to_markdown(se).find("includes 1"), std::string::npos);
  f.tuning["speedup_vs_default"] = 1.005;
  Document se1;
  tuning_section(se1, {f});
  EXPECT_NE(to_markdown(se1).find("That includes 1"), std::string::npos) << to_markdown(se1);
  f.tuning.erase("recommended");
  f.tuning.erase("speedup_vs_default");
  Document none;
  tuning_section(none, {f});
  EXPECT_NE(to_markdown(none).find("nothing could be recommended"), std::string::npos);
  Document empty;
  tuning_section(empty, {ResultsFile{}});
  EXPECT_TRUE(empty.blocks.empty());
}

}  // namespace
}  // namespace gpubench::reports
