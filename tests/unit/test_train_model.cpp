// The train reference models: whole-model gradients against finite differences (double, tiny
// configurations, every parameter), recompute and accumulation equivalences, the FLOP formula
// against the matmuls actually run, and the loss falling over 20 steps.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/common/random.hpp"
#include "kernels/train/model_reference.hpp"

namespace gpubench::kernels::train {
namespace {

ModelConfig tiny_transformer() {
  ModelConfig c;
  c.kind = ModelKind::Transformer;
  c.layers = 2;
  c.hidden = 8;
  c.heads = 2;
  c.ffn_mult = 2;
  c.seq = 4;
  c.batch = 2;
  c.vocab = 11;
  return c;
}

ModelConfig tiny_mlp() {
  ModelConfig c;
  c.kind = ModelKind::Mlp;
  c.layers = 3;
  c.hidden = 6;
  c.batch = 4;
  c.vocab = 5;
  return c;
}

// Random (not 1/0) gains and biases, so their gradients and those flowing through them are
// exercised in full.
void perturb(ReferenceModel<double>& m) {
  for (std::size_t i = 0; i < m.params().size(); ++i) m.params()[i] += 0.05 * uniform_value(99, i);
}

void expect_model_gradients(const ModelConfig& c) {
  ReferenceModel<double> m(c, 1);
  perturb(m);
  const Batch b = make_batch(c, 5);
  m.zero_grads();
  m.forward(b);
  m.backward(b, 1.0);
  const std::vector<double> g = m.grads();
  const double h = 1e-5;
  for (const ParamTensor& t : m.layout().tensors) {
    for (std::int64_t i = 0; i < t.size; ++i) {
      double& p = m.params()[static_cast<std::size_t>(t.offset + i)];
      const double saved = p;
      p = saved + h;
      const double up = m.forward(b);
      p = saved - h;
      const double down = m.forward(b);
      p = saved;
      const double fd = (up - down) / (2 * h);
      ASSERT_NEAR(g[static_cast<std::size_t>(t.offset + i)], fd, 1e-7 + 1e-5 * std::abs(fd)) << t.name << "[" << i << "]";
    }
  }
}

TEST(TrainModel, TransformerGradientsMatchFiniteDifferences) { expect_model_gradients(tiny_transformer()); }

TEST(TrainModel, MlpGradientsMatchFiniteDifferences) { expect_model_gradients(tiny_mlp()); }

std::vector<double> grads_of(const ModelConfig& c, const std::vector<Batch>& micro) {
  ReferenceModel<double> m(c, 1);
  perturb(m);
  m.zero_grads();
  for (const Batch& b : micro) {
    m.forward(b);
    m.backward(b, 1.0 / static_cast<double>(micro.size()));
  }
  return m.grads();
}

TEST(TrainModel, RecomputeGivesTheSameGradients) {
  ModelConfig c = tiny_transformer();
  const Batch b = make_batch(c, 5);
  const std::vector<double> none = grads_of(c, {b});
  for (Recompute r : {Recompute::Mlp, Recompute::Block}) {
    c.recompute = r;
    const std::vector<double> g = grads_of(c, {b});
    ASSERT_EQ(g.size(), none.size());
    for (std::size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], none[i], 1e-12) << to_string(r) << " entry " << i;
  }
}

TEST(TrainModel, RecomputeKeepsLessMemory) {
  ModelConfig c = tiny_transformer();
  c.layers = 4;
  const std::int64_t none = ReferenceModel<float>(c, 1).memory_bytes();
  c.recompute = Recompute::Mlp;
  const std::int64_t mlp = ReferenceModel<float>(c, 1).memory_bytes();
  c.recompute = Recompute::Block;
  const std::int64_t block = ReferenceModel<float>(c, 1).memory_bytes();
  EXPECT_LT(mlp, none);
  EXPECT_LT(block, mlp);
}

TEST(TrainModel, AccumulatedGradientIsTheMeanOverMicroBatches) {
  const ModelConfig c = tiny_transformer();
  const Batch b1 = make_batch(c, 5), b2 = make_batch(c, 6);
  const std::vector<double> both = grads_of(c, {b1, b2});
  const std::vector<double> g1 = grads_of(c, {b1}), g2 = grads_of(c, {b2});
  for (std::size_t i = 0; i < both.size(); ++i) ASSERT_NEAR(both[i], 0.5 * (g1[i] + g2[i]), 1e-12);
}

TEST(TrainModel, FloatModelFollowsTheDoubleModel) {
  const ModelConfig c = tiny_transformer();
  ReferenceModel<float> f(c, 1);
  ReferenceModel<double> d(c, 1);
  const Batch b = make_batch(c, 5);
  f.zero_grads();
  d.zero_grads();
  EXPECT_NEAR(f.forward(b), d.forward(b), 1e-5);
  f.backward(b, 1.0);
  d.backward(b, 1.0);
  for (std::size_t i = 0; i < d.grads().size(); ++i) ASSERT_NEAR(f.grads()[i], d.grads()[i], 1e-5);
}

template <class T>
void expect_loss_falls(const ModelConfig& c) {
  ReferenceModel<T> m(c, 3);
  const std::vector<Batch> micro{make_batch(c, 11)};
  AdamW hp;
  hp.lr = 1e-2;
  const double first = m.train_step(micro, hp);
  double prev = first, last = first;
  int falls = 0;
  for (int s = 1; s < 20; ++s) {
    last = m.train_step(micro, hp);
    if (last < prev) ++falls;
    prev = last;
  }
  EXPECT_LT(last, 0.5 * first) << "loss " << first << " -> " << last;
  EXPECT_GE(falls, 15);
  EXPECT_EQ(m.optimizer_steps(), 20);
}

TEST(TrainModel, TransformerLossFallsOverTwentySteps) {
  ModelConfig c = tiny_transformer();
  c.hidden = 32;
  c.heads = 4;
  c.seq = 16;
  c.vocab = 64;
  expect_loss_falls<float>(c);
}

TEST(TrainModel, MlpLossFallsOverTwentySteps) {
  ModelConfig c = tiny_mlp();
  c.hidden = 32;
  c.batch = 16;
  c.vocab = 10;
  expect_loss_falls<float>(c);
}

TEST(TrainModel, InitialLossIsNearLogVocab) {
  // Small weights: near-uniform predictions.
  ModelConfig c = tiny_transformer();
  c.vocab = 100;
  ReferenceModel<double> m(c, 1);
  EXPECT_NEAR(m.forward(make_batch(c, 2)), std::log(100.0), 0.05);
}

// The FLOP formula of step_flops() equals the matmul FLOPs the reference runs, exactly.
TEST(TrainModel, FlopFormulaCountsTheMatmulsRun) {
  for (Recompute r : {Recompute::None, Recompute::Mlp, Recompute::Block}) {
    ModelConfig c = tiny_transformer();
    c.recompute = r;
    c.accum = 2;
    ReferenceModel<float> m(c, 1);
    const std::vector<Batch> micro{make_batch(c, 1), make_batch(c, 2)};
    reset_matmul_flops_counted();
    m.train_step(micro, AdamW{});
    EXPECT_EQ(matmul_flops_counted(), step_flops(c).hardware) << to_string(r);
  }
  ModelConfig c = tiny_mlp();
  ReferenceModel<float> m(c, 1);
  reset_matmul_flops_counted();
  m.train_step({make_batch(c, 1)}, AdamW{});
  EXPECT_EQ(matmul_flops_counted(), step_flops(c).model);
}

TEST(TrainModel, FlopFormulaByHand) {
  // By hand on a small shape: L=1, C=4, 2 heads of d=2, F=16, V=10, T=2, B=1, accum=1 (R=2 tokens).
  ModelConfig c;
  c.layers = 1;
  c.hidden = 4;
  c.heads = 2;
  c.ffn_mult = 4;
  c.seq = 2;
  c.batch = 1;
  c.vocab = 10;
  // P_mm = 3*16 + 16 + 2*4*16 + 10*4 = 48 + 16 + 128 + 40 = 232; the dense part 6*232*2 = 2784.
  EXPECT_EQ(matmul_params(c), 232);
  // Attention forward, 4 d FLOPs per pair and head: causal pairs 3 of T x T = 4, so
  // A_causal = 4*2*3*2 = 48 and A_full = 4*2*4*2 = 64. model = 2784 + 3*48 = 2928.
  EXPECT_EQ(step_flops(c).model, 2928);
  // Unfused runs all T x T: forward 64, backward over the kept P 2*64 = 128: 2784 + 192.
  ASSERT_EQ(c.attention, Attention::Unfused);
  EXPECT_EQ(step_flops(c).hardware, 2976);
  c.recompute = Recompute::Mlp;  // + 2*R*C*F = 256
  EXPECT_EQ(step_flops(c).hardware, 2976 + 256);
  c.recompute = Recompute::Block;  // + 2*R*(3C^2 + C^2 + C F) + A_full = 2*2*(48+16+64) + 64 = 576
  EXPECT_EQ(step_flops(c).hardware, 2976 + 576);
  // Fused runs the causal pairs: forward 48, backward 2.5*48 = 120 (the scores recomputed).
  c.attention = Attention::Fused;
  c.recompute = Recompute::None;
  EXPECT_EQ(step_flops(c).model, 2928);
  EXPECT_EQ(step_flops(c).hardware, 2784 + 48 + 120);
  c.recompute = Recompute::Block;  // + 512 + A_causal
  EXPECT_EQ(step_flops(c).hardware, 2784 + 48 + 120 + 512 + 48);
}

// The model FLOPs' attention term is the causal pairs exactly (kernels/attention's count), for
// both implementations, at sequence lengths where half of T x T would be off.
TEST(TrainModel, AttentionFlopsCountTheCausalPairs) {
  for (std::int64_t t : {1, 2, 3, 17, 64, 1000}) {
    ModelConfig c = tiny_transformer();
    c.seq = t;
    c.accum = 3;
    const double d = static_cast<double>(c.hidden / c.heads), seqs = static_cast<double>(c.accum * c.batch);
    const double pairs = static_cast<double>(t) * static_cast<double>(t + 1) / 2;
    const double attention_forward = 4 * d * pairs * static_cast<double>(c.heads) * seqs;
    const double dense = 6 * matmul_params(c) * static_cast<double>(c.accum * c.rows());
    for (Attention a : {Attention::Unfused, Attention::Fused}) {
      c.attention = a;
      EXPECT_DOUBLE_EQ(step_flops(c).model, dense + static_cast<double>(c.layers) * 3 * attention_forward) << t;
    }
  }
}
TEST(TrainModel, ConfigErrors) {
  ModelConfig c = tiny_transformer();
  c.heads = 3;
  ASSERT_TRUE(config_error(c));
  EXPECT_EQ(*config_error(c), "heads (3) must divide hidden (8)");
  c = tiny_transformer();
  c.seq = 0;
  ASSERT_TRUE(config_error(c));
  EXPECT_NE(config_error(c)->find("seq"), std::string::npos);
  EXPECT_FALSE(config_error(tiny_transformer()));
  EXPECT_FALSE(config_error(tiny_mlp()));
}

}  // namespace
}  // namespace gpubench::kernels::train
