// The GPU step's row-major matmuls as cuBLASLt (column-major) problems: every shape the models
// use, checked on the host by evaluating the column-major problem cuBLASLt would be given
// against the row-major product. No GPU needed: this is the host half of the GPU path.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/blas/cublaslt.hpp"
#include "kernels/common/random.hpp"
#include "kernels/train/gpu_model.hpp"

namespace gpubench::kernels::train {
namespace {

using Vec = std::vector<double>;

// What cuBLASLt computes for `p` (column-major, strided batch) with A' = a, B' = b, C' = D' = c.
void column_major(const blas::LtProblem& p, const Vec& a, const Vec& b, Vec& c) {
  const blas::LtShapes s = blas::lt_shapes(p);  // also: the wrapper accepts the problem
  for (std::int64_t q = 0; q < p.batch; ++q) {
    for (std::int64_t j = 0; j < p.n; ++j)
      for (std::int64_t i = 0; i < p.m; ++i) {
        double acc = 0;
        for (std::int64_t l = 0; l < p.k; ++l) {
          const double av = a[static_cast<std::size_t>(q * s.a.batch_stride + (p.trans_a ? l + i * s.a.ld : i + l * s.a.ld))];
          const double bv = b[static_cast<std::size_t>(q * s.b.batch_stride + (p.trans_b ? j + l * s.b.ld : l + j * s.b.ld))];
          acc += av * bv;
        }
        double& d = c[static_cast<std::size_t>(q * s.c.batch_stride + i + j * s.c.ld)];
        d = p.alpha * acc + p.beta * d;
      }
  }
}

// The row-major product by definition.
void row_major(const RowMajorGemm& g, const Vec& a, const Vec& b, Vec& c) {
  const std::int64_t sa = g.sa ? g.sa : 0, sb = g.sb ? g.sb : 0, sc = g.sc ? g.sc : 0;
  for (std::int64_t q = 0; q < g.batch; ++q)
    for (std::int64_t i = 0; i < g.m; ++i)
      for (std::int64_t j = 0; j < g.n; ++j) {
        double acc = 0;
        for (std::int64_t l = 0; l < g.k; ++l) {
          const double av = a[static_cast<std::size_t>(q * sa + (g.ta ? l * g.lda + i : i * g.lda + l))];
          const double bv = b[static_cast<std::size_t>(q * sb + (g.tb ? j * g.ldb + l : l * g.ldb + j))];
          acc += av * bv;
        }
        double& d = c[static_cast<std::size_t>(q * sc + i * g.ldc + j)];
        d = g.alpha * acc + g.beta * d;
      }
}

Vec random_vec(std::size_t n, std::uint64_t seed) {
  Vec v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = uniform_value(seed, i);
  return v;
}

void expect_same(const RowMajorGemm& g, bool c_f32, GpuPrecision prec = GpuPrecision::FP32) {
  const std::size_t big = 4096;
  const Vec a = random_vec(big, 1), b = random_vec(big, 2), c0 = random_vec(big, 3);
  Vec want = c0, got = c0;
  row_major(g, a, b, want);
  const blas::LtProblem p = to_lt_problem(g, prec, c_f32);
  column_major(p, b, a, got);  // operands swapped
  for (std::size_t i = 0; i < big; ++i) ASSERT_NEAR(got[i], want[i], 1e-12) << "entry " << i;
}

TEST(TrainGpuMapping, EveryMatmulShapeOfTheModels) {
  const std::int64_t n = 6, C = 4, F = 8, V = 5, T = 3, D = 2, BH = 4;
  // linear forward Y = X W, dX = dY W^T, dW += X^T dY (beta 1)
  expect_same({false, false, n, F, C, 1, C, 0, F, 0, 0, F, 0, 1}, false);
  expect_same({false, true, n, C, F, 1, F, 0, F, 0, 0, C, 0, 1}, false);
  expect_same({true, false, C, F, n, 1, C, 0, F, 0, 1, F, 0, 1}, true);
  // LM head: logits = x wte^T, dxf = dlogits wte, dwte += dlogits^T x
  expect_same({false, true, n, V, C, 1, C, 0, C, 0, 0, V, 0, 1}, false);
  expect_same({false, false, n, C, V, 1, V, 0, C, 0, 0, C, 0, 1}, false);
  expect_same({true, false, V, C, n, 1, V, 0, C, 0, 1, C, 0, 1}, true);
  // attention over B*H packed heads: S = q k^T / sqrt(D), O = P v, dv = P^T dO, dS k, dS^T q
  const double s = 0.7071067811865476;
  expect_same({false, true, T, T, D, s, D, T * D, D, T * D, 0, T, T * T, BH}, false);
  expect_same({false, false, T, D, T, 1, T, T * T, D, T * D, 0, D, T * D, BH}, false);
  expect_same({true, false, T, D, T, 1, T, T * T, D, T * D, 0, D, T * D, BH}, false);
  expect_same({false, false, T, D, T, s, T, T * T, D, T * D, 0, D, T * D, BH}, false);
  expect_same({true, false, T, D, T, s, T, T * T, D, T * D, 0, D, T * D, BH}, false);
}

TEST(TrainGpuMapping, PrecisionAndOutputType) {
  const RowMajorGemm g{true, false, 4, 8, 6, 1, 4, 0, 8, 0, 1, 8, 0, 1};
  EXPECT_EQ(to_lt_problem(g, GpuPrecision::TF32, true).precision, blas::LtPrecision::TF32);
  EXPECT_FALSE(to_lt_problem(g, GpuPrecision::TF32, true).cd_type.has_value());  // fp32 already
  const blas::LtProblem bf = to_lt_problem(g, GpuPrecision::BF16, true);
  EXPECT_EQ(bf.precision, blas::LtPrecision::BF16);
  ASSERT_TRUE(bf.cd_type.has_value());
  EXPECT_EQ(*bf.cd_type, CUDA_R_32F);  // weight gradients accumulate in fp32
  EXPECT_FALSE(to_lt_problem(g, GpuPrecision::FP16, false).cd_type.has_value());
  expect_same(g, true, GpuPrecision::BF16);
}

// precision=fp8: each linear layer's three GEMMs over K-major codes (cuBLASLt's fp8 TN rule),
// in the operand types of the recipe, computing the products the layer needs: Y = X W from
// X and W^T, dX = dY W^T from dY and W, dW += X^T dY from X^T and dY^T.
TEST(TrainGpuMapping, Fp8LinearGemmsAreTnProductsOfTheRecipeTypes) {
  const std::int64_t n = 6, in = 4, out = 5;
  const Vec x = random_vec(64, 1), w = random_vec(64, 2), dy = random_vec(64, 3), c0 = random_vec(64, 4);
  auto transpose = [](const Vec& m, std::int64_t rows, std::int64_t cols) {
    Vec t(m.size());
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) t[static_cast<std::size_t>(c * rows + r)] = m[static_cast<std::size_t>(r * cols + c)];
    return t;
  };
  struct Case {
    blas::LtProblem p;
    Vec a, b;        // the row-major operands the model quantises (A, then B with B^T used)
    RowMajorGemm g;  // the layer's product as written with the unquantised tensors
    Vec ga, gb;
    cudaDataType_t a_type, b_type, cd;  // of the row-major A and B
    double beta;
  };
  const std::vector<Case> cases = {
      {fp8_forward_problem(n, in, out), x, transpose(w, in, out), {false, false, n, out, in, 1, in, 0, out, 0, 0, out, 0, 1},
       x, w, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, 0},
      {fp8_dgrad_problem(n, in, out), dy, w, {false, true, n, in, out, 1, out, 0, out, 0, 0, in, 0, 1},
       dy, w, CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUDA_R_16BF, 0},
      {fp8_wgrad_problem(n, in, out), transpose(x, n, in), transpose(dy, n, out),
       {true, false, in, out, n, 1, in, 0, out, 0, 1, out, 0, 1}, x, dy, CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, CUDA_R_32F, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.g.m * 100 + c.g.n);
    EXPECT_TRUE(c.p.trans_a);
    EXPECT_FALSE(c.p.trans_b);
    const blas::LtTypes t = blas::problem_types(c.p);
    EXPECT_EQ(t.a, c.b_type);  // cuBLASLt's A is the row-major B
    EXPECT_EQ(t.b, c.a_type);
    EXPECT_EQ(t.c, c.cd);
    EXPECT_EQ(t.d, c.cd);
    EXPECT_EQ(t.compute, CUBLAS_COMPUTE_32F);
    EXPECT_EQ(c.p.beta, c.beta);
    Vec want = c0, got = c0;
    row_major(c.g, c.ga, c.gb, want);
    column_major(c.p, c.b, c.a, got);
    for (std::size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-12) << "entry " << i;
  }
  // The other GEMMs of an fp8 step (attention, the LM head) run in bf16.
  const RowMajorGemm g{false, true, n, out, in, 1, in, 0, in, 0, 0, out, 0, 1};
  EXPECT_EQ(to_lt_problem(g, GpuPrecision::FP8, false).precision, blas::LtPrecision::BF16);
  EXPECT_EQ(*to_lt_problem(g, GpuPrecision::FP8, true).cd_type, CUDA_R_32F);
}

// attention=fused needs the caller's fused kernel and 16-bit activations: refused before the
// model touches the device (so this runs without a GPU).
TEST(TrainGpuMapping, FusedAttentionIsRefusedWithoutAKernelOrIn32Bits) {
  ModelConfig c;
  c.attention = Attention::Fused;
  try {
    GpuModel m(c, GpuPrecision::BF16, 1, nullptr);
    FAIL() << "built a fused model without a fused kernel";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("needs a fused attention kernel"), std::string::npos) << e.what();
  }
  struct Dummy final : FusedAttention {
    void forward(const void*, const void*, const void*, void*, float*) override {}
    void backward(const void*, const void*, const void*, const void*, const void*, const float*, void*, void*,
                  void*) override {}
    std::int64_t memory_bytes() const override { return 0; }
    std::string description() const override { return "dummy"; }
  };
  try {
    GpuModel m(c, GpuPrecision::FP32, 1, nullptr, nullptr, std::make_unique<Dummy>());
    FAIL() << "built a fused fp32 model";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fp16 or bf16"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpubench::kernels::train
