// The train suite's host logic: loss-scaler state machine, largest-batch search against a fake
// allocator, presets, configuration errors, metrics and the verification's comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <new>
#include <stdexcept>

#include "bench/core/errors.hpp"
#include "bench/core/harness.hpp"
#include "bench/suites/train/largest_batch.hpp"
#include "bench/suites/train/train.hpp"
#include "bench/suites/train/verify.hpp"
#include "kernels/train/loss_scaler.hpp"
#include "kernels/train/model_reference.hpp"

namespace gpubench::suites::train {
namespace {

using kernels::train::LossScaler;

TEST(TrainLossScaler, StartsAt2To16GrowsAfter2000CleanSteps) {
  LossScaler s;
  EXPECT_EQ(s.scale(), 65536.0);
  for (int i = 0; i < 1999; ++i) ASSERT_TRUE(s.update(false));
  EXPECT_EQ(s.scale(), 65536.0);
  EXPECT_TRUE(s.update(false));  // the 2000th clean step
  EXPECT_EQ(s.scale(), 131072.0);
  EXPECT_EQ(s.good_steps(), 0);
}

TEST(TrainLossScaler, OverflowHalvesSkipsAndRestartsTheCount) {
  LossScaler s;
  for (int i = 0; i < 1500; ++i) s.update(false);
  EXPECT_FALSE(s.update(true));  // step skipped
  EXPECT_EQ(s.scale(), 32768.0);
  EXPECT_EQ(s.skipped_steps(), 1);
  EXPECT_EQ(s.good_steps(), 0);
  for (int i = 0; i < 1999; ++i) s.update(false);
  EXPECT_EQ(s.scale(), 32768.0);  // the count restarted at the overflow
  s.update(false);
  EXPECT_EQ(s.scale(), 65536.0);
  EXPECT_FALSE(s.update(true));
  EXPECT_FALSE(s.update(true));
  EXPECT_EQ(s.scale(), 16384.0);
  EXPECT_EQ(s.skipped_steps(), 3);
}

TEST(TrainLossScaler, OverflowCheckSeesEveryEntry) {
  std::vector<float> g(1000, 1.0f);
  EXPECT_FALSE(kernels::train::has_overflow(g.data(), 1000));
  g[999] = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(kernels::train::has_overflow(g.data(), 1000));
  g[999] = 1;
  g[0] = std::nanf("");
  EXPECT_TRUE(kernels::train::has_overflow(g.data(), 1000));
}

// A device with `capacity` bytes: allocations past it throw, like cudaMalloc's OOM.
struct FakeAllocator {
  std::int64_t capacity = 0, in_use = 0, peak = 0;
  struct Block {
    FakeAllocator* a;
    std::int64_t bytes;
    ~Block() { a->in_use -= bytes; }
  };
  std::unique_ptr<Block> allocate(std::int64_t bytes) {
    if (in_use + bytes > capacity) throw std::bad_alloc();
    in_use += bytes;
    peak = std::max(peak, in_use);
    return std::unique_ptr<Block>(new Block{this, bytes});  // no temporary Block (its destructor would release)
  }
};

TEST(TrainLargestBatch, DoublesThenBisectsAndReleasesEveryTrial) {
  FakeAllocator dev;
  dev.capacity = 1000 + 37 * 100 + 50;  // weights 1000 B, 100 B per sample: 37 samples fit
  std::int64_t leaks = 0;
  auto fits = [&](std::int64_t b) {
    try {
      auto weights = dev.allocate(1000);
      auto acts = dev.allocate(100 * b);
      return true;
    } catch (const std::bad_alloc&) {
      return false;
    }
  };
  auto checked = [&](std::int64_t b) {
    const bool ok = fits(b);
    leaks += dev.in_use;  // everything released after each trial
    return ok;
  };
  const BatchSearch s = find_largest_batch(checked, 1, 1 << 20);
  EXPECT_EQ(s.largest, 37);
  EXPECT_FALSE(s.hit_limit);
  EXPECT_EQ(leaks, 0);
  // 1,2,4,...,64 (7 trials, 64 fails), then bisection over (32, 64): 5 trials.
  EXPECT_EQ(s.trials.size(), 12u);
  EXPECT_EQ(s.trials[6], (std::pair<std::int64_t, bool>{64, false}));
}

TEST(TrainLargestBatch, LimitAndNothingFits) {
  auto always = [](std::int64_t) { return true; };
  BatchSearch s = find_largest_batch(always, 3, 20);
  EXPECT_EQ(s.largest, 20);
  EXPECT_TRUE(s.hit_limit);
  auto never = [](std::int64_t) { return false; };
  s = find_largest_batch(never, 1, 20);
  EXPECT_EQ(s.largest, 0);
  EXPECT_EQ(s.trials.size(), 1u);
  EXPECT_THROW(find_largest_batch(never, 0, 4), std::invalid_argument);
}

// A trial that throws (a launch whose grid exceeds a limit past some size, a library refusing
// the shape) means "does not fit" at that size; the message is kept.
TEST(TrainLargestBatch, AnyFailureAtASizeMeansDoesNotFit) {
  auto launch_limit = [](std::int64_t b) {
    if (b > 100) throw std::runtime_error("invalid configuration argument (grid.y 65536)");
    return true;
  };
  BatchSearch s = find_largest_batch(launch_limit, 1, 1 << 20);
  EXPECT_EQ(s.largest, 100);
  EXPECT_FALSE(s.hit_limit);
  EXPECT_EQ(s.first_error, "micro-batch 128: invalid configuration argument (grid.y 65536)");
  // Out of memory past 60, a launch failure past 40 ... whichever comes first bounds it.
  auto mixed = [](std::int64_t b) {
    if (b > 60) return false;
    if (b > 40) throw std::runtime_error("cublasLt: not supported");
    return true;
  };
  s = find_largest_batch(mixed, 1, 1 << 20);
  EXPECT_EQ(s.largest, 40);
  // When the very first size throws, nothing ran: that is the case's error, passed on.
  auto broken = [](std::int64_t) -> bool { throw std::runtime_error("kernel image missing"); };
  EXPECT_THROW(find_largest_batch(broken, 1, 20), std::runtime_error);
}

Point point(const std::vector<std::pair<std::string, std::string>>& values) {
  Point p;
  for (const AxisSpec& a : train_axes()) {
    for (const auto& [name, v] : values) {
      if (name != a.name) continue;
      if (a.kind == AxisKind::Int) {
        p.set(name, std::stoll(v));
      } else {
        p.set(name, v);
      }
    }
  }
  return p;
}

TEST(TrainPresets, NamedModelsHaveTheirExactDimensions) {
  const std::vector<Preset> presets = train_presets();
  auto find = [&](const std::string& name) -> const Preset& {
    for (const Preset& p : presets) {
      if (p.name == name) return p;
    }
    throw std::out_of_range(name);
  };
  for (const char* name : {"quick", "standard", "full", "gpt2-124m", "gpt2-350m", "gpt-1.3b", "llama7b-block"}) {
    const Preset& p = find(name);
    for (const AxisSpec& a : train_axes()) {  // every axis has values on both devices
      bool cpu = false, cuda = false;
      for (const auto& [n, v] : p.cpu) cpu = cpu || n == a.name;
      for (const auto& [n, v] : p.cuda) cuda = cuda || n == a.name;
      EXPECT_TRUE(cpu && cuda) << name << " " << a.name;
    }
  }
  // GPT-2 small: 124,439,808 parameters with the tied LM head (Radford et al. 2019).
  const ModelConfig gpt2 = config_from(point(find("gpt2-124m").cpu));
  EXPECT_EQ(kernels::train::param_layout(gpt2).count, 124439808);
  EXPECT_EQ(gpt2.layers, 12);
  EXPECT_EQ(gpt2.hidden, 768);
  EXPECT_EQ(gpt2.heads, 12);
  EXPECT_EQ(gpt2.seq, 1024);
  EXPECT_EQ(gpt2.vocab, 50257);
  // GPT-2 medium: 354,823,168 parameters.
  EXPECT_EQ(kernels::train::param_layout(config_from(point(find("gpt2-350m").cpu))).count, 354823168);
  const ModelConfig xl = config_from(point(find("gpt-1.3b").cpu));
  EXPECT_EQ(xl.layers, 24);
  EXPECT_EQ(xl.hidden, 2048);
  EXPECT_EQ(xl.head_dim(), 128);
  EXPECT_EQ(xl.seq, 2048);
  const double xl_params = static_cast<double>(kernels::train::param_layout(xl).count);
  EXPECT_GT(xl_params, 1.3e9);
  EXPECT_LT(xl_params, 1.4e9);
  const ModelConfig llama = config_from(point(find("llama7b-block").cpu));
  EXPECT_EQ(llama.layers, 1);
  EXPECT_EQ(llama.hidden, 4096);
  EXPECT_EQ(llama.heads, 32);
  EXPECT_EQ(llama.ffn(), 16384);
  EXPECT_EQ(llama.vocab, 32000);
}

TEST(TrainConfig, BadConfigurationsAreUsageErrors) {
  std::vector<std::pair<std::string, std::string>> v{{"model", "transformer"}, {"layers", "2"}, {"hidden", "64"},
                                                     {"heads", "3"},          {"ffn_mult", "4"}, {"seq", "8"},
                                                     {"micro_batch", "2"},    {"vocab", "10"},   {"precision", "fp32"},
                                                     {"accum", "1"},          {"recompute", "none"}};
  try {
    config_from(point(v));
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("heads (3) must divide hidden (64)"), std::string::npos) << e.what();
  }
  v[3].second = "4";
  EXPECT_NO_THROW(config_from(point(v)));
  v[5].second = "3000000000";  // seq beyond 32-bit
  EXPECT_THROW(config_from(point(v)), UsageError);
}

TEST(TrainMetrics, StepMetricsAndDerivedRates) {
  ModelConfig c;
  c.layers = 1;
  c.hidden = 4;
  c.heads = 2;
  c.ffn_mult = 4;
  c.seq = 2;
  c.batch = 1;
  c.vocab = 10;
  c.accum = 3;
  c.recompute = kernels::train::Recompute::Mlp;
  const Metrics m = step_metrics(c, Precision::BF16Amp);
  EXPECT_EQ(m.items, 6);
  EXPECT_EQ(m.items_unit, "tokens");
  EXPECT_EQ(m.peak_key, "bf16_tensor");
  EXPECT_EQ(m.flops, 3 * 2928);                   // the causal attention pairs (FlopFormulaByHand)
  EXPECT_EQ(m.hardware_flops, 3 * (2976 + 256));  // unfused: all T x T, and fc1 again
  EXPECT_FALSE(m.extra.contains("mfu_peak"));
  // fp8: the MFU's peak is fp8's for every FLOP, and the metrics say attention and the head are bf16.
  const Metrics f = step_metrics(c, Precision::FP8);
  EXPECT_EQ(f.peak_key, "fp8_tensor");
  ASSERT_TRUE(f.extra.contains("mfu_peak"));
  EXPECT_NE(f.extra["mfu_peak"].get<std::string>().find("attention's products and the LM head run in bf16"),
            std::string::npos);
  Metrics d;
  d.flops = 2e12;
  d.hardware_flops = 3e12;
  d.items = 1000;
  d.items_unit = "tokens";
  d.peak_key = "bf16_tensor";
  d.extra = {{"peak_memory_bytes", 5e9}};
  const auto j = derive_metrics(d, 0.1, 100.0);
  EXPECT_DOUBLE_EQ(j["tokens_per_s"].get<double>(), 10000);
  EXPECT_DOUBLE_EQ(j["pct_of_peak"].get<double>(), 20);  // MFU
  EXPECT_DOUBLE_EQ(j["hfu_pct"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(j["peak_memory_bytes"].get<double>(), 5e9);
}

TEST(TrainVerify, TinyStepPassesAndAWrongGradientFails) {
  ModelConfig c;
  c.layers = 3;
  c.hidden = 64;
  c.heads = 4;
  c.seq = 32;
  c.vocab = 500;
  c.accum = 2;
  c.recompute = kernels::train::Recompute::Block;
  const Verification v = verify_tiny_step_cpu(c);
  EXPECT_TRUE(v.passed) << v.detail;
  EXPECT_LE(v.max_error, 1.0);
  EXPECT_GT(v.checked, 1000);
  // The comparison catches one wrong entry and names it.
  const ModelConfig t = tiny_config(c);
  kernels::train::ReferenceModel<double> d(t, kModelSeed);
  d.train_step({kernels::train::make_batch(t, 1)}, {});
  std::vector<double> got = d.grads();
  const auto& w = d.layout().at("h1.fc1.w");
  got[static_cast<std::size_t>(w.offset + 5)] *= 1.1;
  const Verification bad = compare_gradients(got, d.grads(), d.layout(), GradTolerance{});
  EXPECT_FALSE(bad.passed);
  EXPECT_NE(bad.detail.find("h1.fc1.w[5]"), std::string::npos) << bad.detail;
}

// The fp8 GPU step is held to the reference under the same fp8 emulation with grad_tolerance(FP8).
// Calibration on the CPU: even the whole fp8 error (the emulated step against the exact one,
// of which the GPU's differences from the emulation, bf16 activations flipping a code here and
// there, are a small part) stays within it on both tiny models; and the bugs the tolerance is
// there to catch (a descale applied twice, a descale missing) fail it.
TEST(TrainSuite, Fp8ToleranceHoldsTheFp8ErrorAndCatchesAWrongScale) {
  for (const auto kind : {kernels::train::ModelKind::Transformer, kernels::train::ModelKind::Mlp}) {
    ModelConfig c;
    c.kind = kind;
    c.layers = 2;
    c.vocab = 512;
    c.accum = 2;
    const ModelConfig t = tiny_config(c, Precision::FP8);
    ASSERT_FALSE(kernels::train::fp8_dims_error(t).has_value()) << *kernels::train::fp8_dims_error(t);
    std::vector<kernels::train::Batch> micro = {kernels::train::make_batch(t, 1), kernels::train::make_batch(t, 2)};
    kernels::train::ReferenceModel<double> exact(t, kModelSeed), fp8(t, kModelSeed);
    const double loss_exact = exact.train_step(micro, {});
    double loss_fp8 = 0;
    {
      kernels::train::ScopedLinearInputs emulate(reference_linear_inputs(Precision::FP8));
      loss_fp8 = fp8.train_step(micro, {});
    }
    const Verification v = compare_gradients(exact.grads(), fp8.grads(), fp8.layout(), grad_tolerance(Precision::FP8));
    EXPECT_TRUE(v.passed) << kernels::train::to_string(kind) << ": " << v.detail;
    std::printf("%s: the whole fp8 error uses %.2f of the fp8 tolerance; loss %.6f vs %.6f\n", kernels::train::to_string(kind).c_str(),
                v.max_error, loss_fp8, loss_exact);
    EXPECT_LE(std::abs(loss_fp8 - loss_exact), loss_tolerance(Precision::FP8) * (1 + std::abs(loss_exact)));
    for (const double wrong : {2.0, 1.0 / 448}) {
      std::vector<double> got = fp8.grads();
      for (double& g : got) g *= wrong;
      EXPECT_FALSE(compare_gradients(got, fp8.grads(), fp8.layout(), grad_tolerance(Precision::FP8)).passed) << wrong;
    }
  }
}

// Fused attention on CUDA is cuDNN's SDPA, whose engines are tested from head dimension 32 up:
// its verification keeps the benchmark's own head dimension and 32 tokens (the tiny model's
// 16 / 2 = 8 and seq 8 may have no engine at all), fp8's dimensions still hold; the unfused and
// CPU tiny models are unchanged.
TEST(TrainSuite, FusedAttentionIsVerifiedAtTheBenchmarksHeadDimension) {
  for (const std::int64_t d : {16, 64, 128}) {
    ModelConfig c;
    c.layers = 4;
    c.heads = 8;
    c.hidden = 8 * d;
    c.seq = 1024;
    c.attention = kernels::train::Attention::Fused;
    for (const Precision p : {Precision::BF16Amp, Precision::FP16Amp, Precision::FP8}) {
      const ModelConfig t = tiny_config(c, p);
      EXPECT_EQ(t.head_dim(), d);
      EXPECT_EQ(t.heads, 2);
      EXPECT_EQ(t.seq, kFusedVerifySeq);
      EXPECT_GE(t.seq, 32);
      EXPECT_EQ(t.attention, kernels::train::Attention::Fused);
      EXPECT_FALSE(kernels::train::config_error(t).has_value());
      if (p == Precision::FP8) {
        EXPECT_FALSE(kernels::train::fp8_dims_error(t).has_value()) << d;
      }
    }
    c.attention = kernels::train::Attention::Unfused;
    EXPECT_EQ(tiny_config(c, Precision::BF16Amp).hidden, 16);
    EXPECT_EQ(tiny_config(c, Precision::BF16Amp).seq, 8);
  }
}

// A fused graph cuDNN refuses at run time: a point that left attention to the preset or default
// runs unfused and its note says why; an explicit attention=fused is a skip with cuDNN's reason.
TEST(TrainSuite, ARefusedDefaultFusedGraphFallsBackAndAnExplicitOneIsSkipped) {
  const std::string why = "attention=fused: cuDNN has no engine for this graph";
  const FusedRefusal by_default = on_fused_refused(false, why);
  EXPECT_TRUE(by_default.fall_back);
  EXPECT_NE(by_default.note.find(why), std::string::npos) << by_default.note;
  EXPECT_NE(by_default.note.find("attention=unfused"), std::string::npos) << by_default.note;
  const FusedRefusal explicit_fused = on_fused_refused(true, why);
  EXPECT_FALSE(explicit_fused.fall_back);
  EXPECT_EQ(explicit_fused.note, why);
}

// The fp8 tolerance at the fused verification shape (head dimension 64, 32 tokens): the whole
// fp8 error still fits, as on the small tiny model.
TEST(TrainSuite, Fp8ToleranceHoldsAtTheFusedVerificationShape) {
  ModelConfig c;
  c.layers = 2;
  c.heads = 8;
  c.hidden = 512;
  c.vocab = 512;
  c.accum = 2;
  c.attention = kernels::train::Attention::Fused;
  const ModelConfig t = tiny_config(c, Precision::FP8);
  ASSERT_EQ(t.head_dim(), 64);
  std::vector<kernels::train::Batch> micro = {kernels::train::make_batch(t, 1), kernels::train::make_batch(t, 2)};
  kernels::train::ReferenceModel<double> exact(t, kModelSeed), fp8(t, kModelSeed);
  const double loss_exact = exact.train_step(micro, {});
  double loss_fp8 = 0;
  {
    kernels::train::ScopedLinearInputs emulate(reference_linear_inputs(Precision::FP8));
    loss_fp8 = fp8.train_step(micro, {});
  }
  const Verification v = compare_gradients(exact.grads(), fp8.grads(), fp8.layout(), grad_tolerance(Precision::FP8));
  EXPECT_TRUE(v.passed) << v.detail;
  std::printf("fused shape: the whole fp8 error uses %.2f of the fp8 tolerance\n", v.max_error);
  EXPECT_LE(std::abs(loss_fp8 - loss_exact), loss_tolerance(Precision::FP8) * (1 + std::abs(loss_exact)));
}

// An fp8 step that silently ran in bf16 passes the fp8 tolerance; it fails the distinctness
// check. Calibrated here: the fp8 emulation moves the gradients of both tiny models (and of the
// fused verification shape) from bf16's by well over kFp8DistinctFloor, while bf16's own
// rounding (the bf16 emulation against the exact step) stays well under it.
TEST(TrainSuite, Fp8StepMustDifferFromTheBf16Step) {
  ModelConfig fused;
  fused.heads = 8;
  fused.hidden = 512;
  fused.attention = kernels::train::Attention::Fused;
  ModelConfig mlp;
  mlp.kind = kernels::train::ModelKind::Mlp;
  for (ModelConfig c : {ModelConfig{}, mlp, fused}) {
    c.layers = 2;
    c.vocab = 512;
    c.accum = 2;
    const ModelConfig t = tiny_config(c, Precision::FP8);
    const std::vector<kernels::train::Batch> micro = {kernels::train::make_batch(t, 1), kernels::train::make_batch(t, 2)};
    auto grads = [&](kernels::train::LinearInputs mode) {
      kernels::train::ReferenceModel<double> m(t, kModelSeed);
      kernels::train::ScopedLinearInputs emulate(mode);
      (void)m.train_step(micro, {});
      return std::make_pair(m.grads(), m.layout());
    };
    const auto [g8, layout] = grads(kernels::train::LinearInputs::Fp8);
    const auto [g16, layout16] = grads(kernels::train::LinearInputs::Bf16);
    const auto [exact, layout_exact] = grads(kernels::train::LinearInputs::Exact);
    const double fp8_vs_bf16 = normalized_distance(g8, g16, layout);
    const double bf16_vs_exact = normalized_distance(g16, exact, layout);
    std::printf("%s (d %lld): fp8 vs bf16 %.3g, bf16 vs exact %.3g (floor %g)\n", kernels::train::to_string(t.kind).c_str(),
                static_cast<long long>(t.head_dim()), fp8_vs_bf16, bf16_vs_exact, kFp8DistinctFloor);
    EXPECT_GE(fp8_vs_bf16, 3 * kFp8DistinctFloor);
    EXPECT_LE(bf16_vs_exact, kFp8DistinctFloor / 3);
    EXPECT_TRUE(fp8_differs_from_bf16(g8, g16, layout).passed);
    const Verification same = fp8_differs_from_bf16(g16, g16, layout);  // "fp8" that ran in bf16
    EXPECT_FALSE(same.passed);
    EXPECT_NE(same.detail.find("did the step run in fp8"), std::string::npos) << same.detail;
  }
}

}  // namespace
}  // namespace gpubench::suites::train
