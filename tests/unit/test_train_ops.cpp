// Finite-difference checks of every op of the train reference, in double at small sizes:
// each backward is compared with central differences of its forward through the scalar
// L = sum(R * output), R random, so dL/doutput = R.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "kernels/common/random.hpp"
#include "kernels/train/ops_reference.hpp"

namespace gpubench::kernels::train {
namespace {

using Vec = std::vector<double>;

Vec random_vec(std::size_t n, std::uint64_t seed, double scale = 1.0) {
  Vec v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * uniform_value(seed, i);
  return v;
}

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Checks analytic[i] == dL/dx[i] by central differences of loss() over every entry of x.
void expect_gradient(Vec& x, const Vec& analytic, const std::function<double()>& loss, const char* what,
                     double tol = 1e-6) {
  ASSERT_EQ(x.size(), analytic.size()) << what;
  const double h = 1e-5;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + h;
    const double up = loss();
    x[i] = saved - h;
    const double down = loss();
    x[i] = saved;
    const double fd = (up - down) / (2 * h);
    ASSERT_NEAR(analytic[i], fd, tol * (1 + std::abs(fd))) << what << " entry " << i;
  }
}

TEST(TrainOps, LinearGradients) {
  const idx n = 3, in = 4, out = 5;
  Vec x = random_vec(n * in, 1), w = random_vec(in * out, 2), b = random_vec(out, 3), r = random_vec(n * out, 4);
  auto loss = [&] {
    Vec y(n * out);
    linear_forward(x.data(), w.data(), b.data(), y.data(), n, in, out);
    return dot(y, r);
  };
  Vec dx(n * in), dw(in * out, 0.0), db(out, 0.0);
  linear_backward(x.data(), w.data(), r.data(), dx.data(), dw.data(), db.data(), n, in, out);
  expect_gradient(x, dx, loss, "dx");
  expect_gradient(w, dw, loss, "dw");
  expect_gradient(b, db, loss, "db");
  // Parameter gradients accumulate: a second backward doubles them.
  linear_backward(x.data(), w.data(), r.data(), static_cast<double*>(nullptr), dw.data(), db.data(), n, in, out);
  Vec dw1(in * out, 0.0), db1(out, 0.0);
  linear_backward(x.data(), w.data(), r.data(), static_cast<double*>(nullptr), dw1.data(), db1.data(), n, in, out);
  for (std::size_t i = 0; i < dw.size(); ++i) EXPECT_NEAR(dw[i], 2 * dw1[i], 1e-12);
}

TEST(TrainOps, GeluGradientAndValues) {
  Vec x = random_vec(16, 5, 3.0), r = random_vec(16, 6);
  auto loss = [&] {
    Vec y(16);
    gelu_forward(x.data(), y.data(), 16);
    return dot(y, r);
  };
  Vec dx(16);
  gelu_backward(x.data(), r.data(), dx.data(), 16);
  expect_gradient(x, dx, loss, "gelu");
  // Known values of the tanh form: gelu(0) = 0, gelu(1) = 0.841192, gelu(-1) = -0.158808.
  Vec pts{0, 1, -1}, y(3);
  gelu_forward(pts.data(), y.data(), 3);
  EXPECT_EQ(y[0], 0);
  EXPECT_NEAR(y[1], 0.841192, 1e-6);
  EXPECT_NEAR(y[2], -0.158808, 1e-6);
}

TEST(TrainOps, LayerNormGradients) {
  const idx n = 3, c = 6;
  Vec x = random_vec(n * c, 7, 2.0), g = random_vec(c, 8), b = random_vec(c, 9), r = random_vec(n * c, 10);
  auto loss = [&] {
    Vec y(n * c), mean(n), rstd(n);
    layernorm_forward(x.data(), g.data(), b.data(), y.data(), mean.data(), rstd.data(), n, c);
    return dot(y, r);
  };
  Vec y(n * c), mean(n), rstd(n);
  layernorm_forward(x.data(), g.data(), b.data(), y.data(), mean.data(), rstd.data(), n, c);
  Vec dx(n * c, 0.0), dg(c, 0.0), db(c, 0.0);
  layernorm_backward(r.data(), x.data(), mean.data(), rstd.data(), g.data(), dx.data(), dg.data(), db.data(), n, c);
  expect_gradient(x, dx, loss, "dx");
  expect_gradient(g, dg, loss, "dgamma");
  expect_gradient(b, db, loss, "dbeta");
}

TEST(TrainOps, CausalSoftmaxGradientAndMask) {
  const idx t = 5;
  Vec s = random_vec(t * t, 11, 2.0), r = random_vec(t * t, 12);
  auto loss = [&] {
    Vec p = s;
    causal_softmax_forward(p.data(), t);
    return dot(p, r);
  };
  Vec p = s;
  causal_softmax_forward(p.data(), t);
  for (idx i = 0; i < t; ++i) {
    double sum = 0;
    for (idx j = 0; j < t; ++j) {
      sum += p[i * t + j];
      if (j > i) {
        EXPECT_EQ(p[i * t + j], 0.0);
      }
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
  }
  Vec d = r;
  causal_softmax_backward(p.data(), d.data(), t);
  expect_gradient(s, d, loss, "softmax");
}

TEST(TrainOps, AttentionGradients) {
  const idx batch = 2, t = 4, c = 6, heads = 2;
  Vec qkv = random_vec(batch * t * 3 * c, 13), r = random_vec(batch * t * c, 14);
  auto loss = [&] {
    Vec p(batch * heads * t * t), out(batch * t * c);
    attention_forward(qkv.data(), p.data(), out.data(), batch, t, c, heads);
    return dot(out, r);
  };
  Vec p(batch * heads * t * t), out(batch * t * c), dqkv(qkv.size()), scratch(t * t);
  attention_forward(qkv.data(), p.data(), out.data(), batch, t, c, heads);
  attention_backward(r.data(), qkv.data(), p.data(), dqkv.data(), scratch.data(), batch, t, c, heads);
  expect_gradient(qkv, dqkv, loss, "dqkv");
}

TEST(TrainOps, AttentionIsCausal) {
  // The output at position 0 depends only on position 0's value vector.
  const idx t = 3, c = 2, heads = 1;
  Vec qkv = random_vec(t * 3 * c, 15), p(t * t), out(t * c);
  attention_forward(qkv.data(), p.data(), out.data(), 1, t, c, heads);
  EXPECT_NEAR(out[0], qkv[2 * c], 1e-12);
  EXPECT_NEAR(out[1], qkv[2 * c + 1], 1e-12);
}

TEST(TrainOps, CrossEntropyGradientAndValue) {
  const idx n = 3, v = 5;
  Vec logits = random_vec(n * v, 16, 3.0);
  const std::vector<std::int32_t> y{0, 4, 2};
  auto loss = [&] {
    Vec l = logits;
    return cross_entropy_forward(l.data(), y.data(), n, v);
  };
  Vec probs = logits;
  cross_entropy_forward(probs.data(), y.data(), n, v);
  cross_entropy_backward(probs.data(), y.data(), n, v, 1.0);
  expect_gradient(logits, probs, loss, "dlogits");
  // Uniform logits: loss = log V.
  Vec flat(n * v, 0.25);
  EXPECT_NEAR(cross_entropy_forward(flat.data(), y.data(), n, v), std::log(5.0), 1e-12);
}

TEST(TrainOps, EmbeddingGradients) {
  const idx batch = 2, t = 3, c = 4, vocab = 5;
  const std::vector<std::int32_t> tokens{1, 4, 1, 0, 2, 4};
  Vec wte = random_vec(vocab * c, 17), wpe = random_vec(t * c, 18), r = random_vec(batch * t * c, 19);
  auto loss = [&] {
    Vec x(batch * t * c);
    embedding_forward(tokens.data(), wte.data(), wpe.data(), x.data(), batch, t, c);
    return dot(x, r);
  };
  Vec dwte(wte.size(), 0.0), dwpe(wpe.size(), 0.0);
  embedding_backward(tokens.data(), r.data(), dwte.data(), dwpe.data(), batch, t, c);
  expect_gradient(wte, dwte, loss, "dwte");
  expect_gradient(wpe, dwpe, loss, "dwpe");
}

TEST(TrainOps, ResidualAdd) {
  Vec a{1, 2}, b{3, -5}, y(2);
  residual_add(a.data(), b.data(), y.data(), 2);
  EXPECT_EQ(y, (Vec{4, -3}));
}

TEST(TrainOps, AdamWMatchesHandComputedSteps) {
  // One parameter, two steps, against the formula written out by hand.
  AdamW hp;
  hp.lr = 0.1;
  hp.beta1 = 0.9;
  hp.beta2 = 0.99;
  hp.eps = 1e-8;
  hp.weight_decay = 0.5;
  double p = 1.0, m = 0, v = 0;
  const double g1 = 0.2, g2 = -0.4;
  adamw_step(&p, &g1, &m, &v, 1, hp, 1);
  double ep = 1.0 * (1 - 0.1 * 0.5);
  double em = 0.1 * 0.2, ev = 0.01 * 0.04;
  ep -= 0.1 * (em / 0.1) / (std::sqrt(ev / 0.01) + 1e-8);
  EXPECT_NEAR(p, ep, 1e-12);
  adamw_step(&p, &g2, &m, &v, 1, hp, 2);
  ep *= 1 - 0.1 * 0.5;
  em = 0.9 * em + 0.1 * g2;
  ev = 0.99 * ev + 0.01 * g2 * g2;
  ep -= 0.1 * (em / (1 - 0.81)) / (std::sqrt(ev / (1 - 0.9801)) + 1e-8);
  EXPECT_NEAR(p, ep, 1e-12);
  EXPECT_NEAR(m, em, 1e-15);
  EXPECT_NEAR(v, ev, 1e-15);
  // grad_scale: a gradient stored x1024 with scale 1/1024 gives the same update.
  double p1 = 1, m1 = 0, v1 = 0, p2 = 1, m2 = 0, v2 = 0;
  const double g = 0.3, gs = 0.3 * 1024;
  adamw_step(&p1, &g, &m1, &v1, 1, hp, 1);
  adamw_step(&p2, &gs, &m2, &v2, 1, hp, 1, 1.0 / 1024);
  EXPECT_DOUBLE_EQ(p1, p2);
}

TEST(TrainOps, GemmCountsFlops) {
  reset_matmul_flops_counted();
  Vec a(6, 1.0), b(12, 1.0), c(8, 0.0);
  gemm<double>(false, false, 2, 4, 3, 1.0, a.data(), 3, b.data(), 4, 0.0, c.data(), 4);
  EXPECT_EQ(matmul_flops_counted(), 2.0 * 2 * 4 * 3);
  EXPECT_EQ(c[0], 3.0);
}

}  // namespace
}  // namespace gpubench::kernels::train
