#include "kernels/train/ops_reference.hpp"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numbers>

#include "kernels/common/float_formats.hpp"
#include "kernels/common/fp8_scaling.hpp"

namespace gpubench::kernels::train {
namespace {

std::atomic<double> g_matmul_flops{0};

CBLAS_TRANSPOSE tr(bool t) { return t ? CblasTrans : CblasNoTrans; }

void blas(bool ta, bool tb, idx m, idx n, idx k, float alpha, const float* a, idx lda, const float* b, idx ldb,
          float beta, float* c, idx ldc) {
  cblas_sgemm(CblasRowMajor, tr(ta), tr(tb), static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k),
              alpha, a, static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}
void blas(bool ta, bool tb, idx m, idx n, idx k, double alpha, const double* a, idx lda, const double* b, idx ldb,
          double beta, double* c, idx ldc) {
  cblas_dgemm(CblasRowMajor, tr(ta), tr(tb), static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k),
              alpha, a, static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

constexpr double kGeluA = 0.044715;
const double kSqrt2OverPi = std::sqrt(2.0 / std::numbers::pi);

thread_local LinearInputs t_linear_inputs = LinearInputs::Exact;

}  // namespace

LinearInputs linear_inputs() { return t_linear_inputs; }
ScopedLinearInputs::ScopedLinearInputs(LinearInputs mode) : saved_(t_linear_inputs) { t_linear_inputs = mode; }
ScopedLinearInputs::~ScopedLinearInputs() { t_linear_inputs = saved_; }

template <class T>
std::vector<T> emulate_linear_input(const T* v, idx n, bool gradient) {
  std::vector<T> out(v, v + n);
  if (t_linear_inputs == LinearInputs::Bf16) {
    for (T& x : out) x = static_cast<T>(round_to_storage(Storage::BF16, static_cast<float>(x)));
  } else if (t_linear_inputs == LinearInputs::Fp8) {
    const Storage format = gradient ? Storage::E5M2 : Storage::E4M3;
    double amax = 0;
    for (const T& x : out) amax = std::max(amax, std::fabs(static_cast<double>(x)));
    // The fp32 scale factor an fp8 GEMM is given, computed as the GPU step's kernels compute it.
    const float scale = fp8_scale(amax, fp8_max(format));
    for (T& x : out) {
      const float q = fp8_bits_to_float(float_to_fp8_bits(static_cast<float>(x) * scale, format), format);
      x = static_cast<T>(static_cast<double>(q) / static_cast<double>(scale));
    }
  }
  return out;
}

double matmul_flops_counted() { return g_matmul_flops.load(); }
void reset_matmul_flops_counted() { g_matmul_flops.store(0); }

template <class T>
void gemm(bool ta, bool tb, idx m, idx n, idx k, T alpha, const T* a, idx lda, const T* b, idx ldb, T beta, T* c,
          idx ldc) {
  g_matmul_flops.fetch_add(2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k));
  blas(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <class T>
void linear_forward(const T* x, const T* w, const T* b, T* y, idx n, idx in, idx out) {
  if (b) {
    for (idx i = 0; i < n; ++i) std::copy(b, b + out, y + i * out);
  }
  std::vector<T> xe, we;
  if (t_linear_inputs != LinearInputs::Exact) {  // the emulated inputs (see the header)
    xe = emulate_linear_input(x, n * in, false);
    we = emulate_linear_input(w, in * out, false);
    x = xe.data();
    w = we.data();
  }
  gemm<T>(false, false, n, out, in, T(1), x, in, w, out, b ? T(1) : T(0), y, out);
}

template <class T>
void linear_backward(const T* x, const T* w, const T* dy, T* dx, T* dw, T* db, idx n, idx in, idx out) {
  std::vector<T> xe, we, dye;
  if (t_linear_inputs != LinearInputs::Exact) {  // the emulated inputs (see the header)
    xe = emulate_linear_input(x, n * in, false);
    we = emulate_linear_input(w, in * out, false);
    dye = emulate_linear_input(dy, n * out, true);
    x = xe.data();
    w = we.data();
  }
  const T* g = dye.empty() ? dy : dye.data();
  if (dx) gemm<T>(false, true, n, in, out, T(1), g, out, w, out, T(0), dx, in);  // dX = dY W^T
  gemm<T>(true, false, in, out, n, T(1), x, in, g, out, T(1), dw, out);           // dW += X^T dY
  if (db) {
    for (idx i = 0; i < n; ++i)
      for (idx j = 0; j < out; ++j) db[j] += dy[i * out + j];
  }
}

template <class T>
void gelu_forward(const T* x, T* y, idx n) {
  for (idx i = 0; i < n; ++i) {
    const double v = x[i];
    y[i] = static_cast<T>(0.5 * v * (1 + std::tanh(kSqrt2OverPi * (v + kGeluA * v * v * v))));
  }
}

template <class T>
void gelu_backward(const T* x, const T* dy, T* dx, idx n) {
  for (idx i = 0; i < n; ++i) {
    const double v = x[i];
    const double th = std::tanh(kSqrt2OverPi * (v + kGeluA * v * v * v));
    const double du = kSqrt2OverPi * (1 + 3 * kGeluA * v * v);
    dx[i] = static_cast<T>(dy[i] * (0.5 * (1 + th) + 0.5 * v * (1 - th * th) * du));
  }
}

template <class T>
void layernorm_forward(const T* x, const T* g, const T* b, T* y, T* mean, T* rstd, idx n, idx c) {
  for (idx i = 0; i < n; ++i) {
    const T* xi = x + i * c;
    double s = 0;
    for (idx j = 0; j < c; ++j) s += xi[j];
    const double mu = s / static_cast<double>(c);
    double ss = 0;
    for (idx j = 0; j < c; ++j) ss += (xi[j] - mu) * (xi[j] - mu);
    const double rs = 1 / std::sqrt(ss / static_cast<double>(c) + kLayerNormEps);
    for (idx j = 0; j < c; ++j) y[i * c + j] = static_cast<T>((xi[j] - mu) * rs * g[j] + b[j]);
    mean[i] = static_cast<T>(mu);
    rstd[i] = static_cast<T>(rs);
  }
}

template <class T>
void layernorm_backward(const T* dy, const T* x, const T* mean, const T* rstd, const T* g, T* dx, T* dg, T* db, idx n,
                        idx c) {
  for (idx i = 0; i < n; ++i) {
    const T* xi = x + i * c;
    const T* dyi = dy + i * c;
    const double mu = mean[i], rs = rstd[i];
    double mean_dxhat = 0, mean_dxhat_xhat = 0;
    for (idx j = 0; j < c; ++j) {
      const double xhat = (xi[j] - mu) * rs;
      const double dxhat = static_cast<double>(dyi[j]) * g[j];
      mean_dxhat += dxhat;
      mean_dxhat_xhat += dxhat * xhat;
      dg[j] += static_cast<T>(dyi[j] * xhat);
      db[j] += dyi[j];
    }
    mean_dxhat /= static_cast<double>(c);
    mean_dxhat_xhat /= static_cast<double>(c);
    for (idx j = 0; j < c; ++j) {
      const double xhat = (xi[j] - mu) * rs;
      const double dxhat = static_cast<double>(dyi[j]) * g[j];
      dx[i * c + j] += static_cast<T>(rs * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat));
    }
  }
}

template <class T>
void causal_softmax_forward(T* s, idx t) {
  for (idx i = 0; i < t; ++i) {
    T* row = s + i * t;
    double mx = row[0];
    for (idx j = 1; j <= i; ++j) mx = std::max<double>(mx, row[j]);
    double sum = 0;
    for (idx j = 0; j <= i; ++j) sum += std::exp(row[j] - mx);
    for (idx j = 0; j <= i; ++j) row[j] = static_cast<T>(std::exp(row[j] - mx) / sum);
    for (idx j = i + 1; j < t; ++j) row[j] = T(0);
  }
}

template <class T>
void causal_softmax_backward(const T* p, T* d, idx t) {
  for (idx i = 0; i < t; ++i) {
    const T* pi = p + i * t;
    T* di = d + i * t;
    double dot = 0;
    for (idx j = 0; j <= i; ++j) dot += static_cast<double>(pi[j]) * di[j];
    for (idx j = 0; j <= i; ++j) di[j] = static_cast<T>(pi[j] * (di[j] - dot));
    for (idx j = i + 1; j < t; ++j) di[j] = T(0);
  }
}

template <class T>
void attention_forward(const T* qkv, T* p, T* out, idx batch, idx t, idx c, idx heads) {
  const idx d = c / heads;
  const T scale = static_cast<T>(1 / std::sqrt(static_cast<double>(d)));
  for (idx b = 0; b < batch; ++b) {
    for (idx h = 0; h < heads; ++h) {
      const T* q = qkv + b * t * 3 * c + h * d;
      const T* k = q + c;
      const T* v = q + 2 * c;
      T* pb = p + (b * heads + h) * t * t;
      gemm<T>(false, true, t, t, d, scale, q, 3 * c, k, 3 * c, T(0), pb, t);  // S = q k^T / sqrt(D)
      causal_softmax_forward(pb, t);
      gemm<T>(false, false, t, d, t, T(1), pb, t, v, 3 * c, T(0), out + b * t * c + h * d, c);  // P v
    }
  }
}

template <class T>
void attention_backward(const T* dout, const T* qkv, const T* p, T* dqkv, T* scratch, idx batch, idx t, idx c,
                        idx heads) {
  const idx d = c / heads;
  const T scale = static_cast<T>(1 / std::sqrt(static_cast<double>(d)));
  for (idx b = 0; b < batch; ++b) {
    for (idx h = 0; h < heads; ++h) {
      const idx base = b * t * 3 * c + h * d;
      const T* q = qkv + base;
      const T* k = q + c;
      const T* v = q + 2 * c;
      T* dq = dqkv + base;
      T* dk = dq + c;
      T* dv = dq + 2 * c;
      const T* pb = p + (b * heads + h) * t * t;
      const T* dob = dout + b * t * c + h * d;
      gemm<T>(true, false, t, d, t, T(1), pb, t, dob, c, T(0), dv, 3 * c);        // dv = P^T dout
      gemm<T>(false, true, t, t, d, T(1), dob, c, v, 3 * c, T(0), scratch, t);    // dP = dout v^T
      causal_softmax_backward(pb, scratch, t);                                    // dS
      gemm<T>(false, false, t, d, t, scale, scratch, t, k, 3 * c, T(0), dq, 3 * c);  // dq = dS k / sqrt(D)
      gemm<T>(true, false, t, d, t, scale, scratch, t, q, 3 * c, T(0), dk, 3 * c);   // dk = dS^T q / sqrt(D)
    }
  }
}

template <class T>
double cross_entropy_forward(T* logits, const std::int32_t* targets, idx n, idx v) {
  double loss = 0;
  for (idx i = 0; i < n; ++i) {
    T* row = logits + i * v;
    double mx = row[0];
    for (idx j = 1; j < v; ++j) mx = std::max<double>(mx, row[j]);
    double sum = 0;
    for (idx j = 0; j < v; ++j) sum += std::exp(row[j] - mx);
    loss -= (row[targets[i]] - mx) - std::log(sum);
    for (idx j = 0; j < v; ++j) row[j] = static_cast<T>(std::exp(row[j] - mx) / sum);
  }
  return loss / static_cast<double>(n);
}

template <class T>
void cross_entropy_backward(T* probs, const std::int32_t* targets, idx n, idx v, double scale) {
  const double f = scale / static_cast<double>(n);
  for (idx i = 0; i < n; ++i) {
    T* row = probs + i * v;
    for (idx j = 0; j < v; ++j) row[j] = static_cast<T>(f * (row[j] - (j == targets[i] ? 1.0 : 0.0)));
  }
}

template <class T>
void embedding_forward(const std::int32_t* tokens, const T* wte, const T* wpe, T* x, idx batch, idx t, idx c) {
  for (idx b = 0; b < batch; ++b)
    for (idx i = 0; i < t; ++i) {
      const T* e = wte + static_cast<idx>(tokens[b * t + i]) * c;
      const T* pe = wpe + i * c;
      T* xi = x + (b * t + i) * c;
      for (idx j = 0; j < c; ++j) xi[j] = e[j] + pe[j];
    }
}

template <class T>
void embedding_backward(const std::int32_t* tokens, const T* dx, T* dwte, T* dwpe, idx batch, idx t, idx c) {
  for (idx b = 0; b < batch; ++b)
    for (idx i = 0; i < t; ++i) {
      const T* di = dx + (b * t + i) * c;
      T* e = dwte + static_cast<idx>(tokens[b * t + i]) * c;
      T* pe = dwpe + i * c;
      for (idx j = 0; j < c; ++j) {
        e[j] += di[j];
        pe[j] += di[j];
      }
    }
}

template <class T>
void residual_add(const T* a, const T* b, T* y, idx n) {
  for (idx i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

template <class T>
void adamw_step(T* p, const T* g, T* m, T* v, idx n, const AdamW& hp, std::int64_t t, double grad_scale) {
  const double c1 = 1 - std::pow(hp.beta1, static_cast<double>(t));
  const double c2 = 1 - std::pow(hp.beta2, static_cast<double>(t));
  for (idx i = 0; i < n; ++i) {
    const double gi = static_cast<double>(g[i]) * grad_scale;
    double pi = p[i];
    pi -= hp.lr * hp.weight_decay * pi;
    const double mi = hp.beta1 * m[i] + (1 - hp.beta1) * gi;
    const double vi = hp.beta2 * v[i] + (1 - hp.beta2) * gi * gi;
    pi -= hp.lr * (mi / c1) / (std::sqrt(vi / c2) + hp.eps);
    m[i] = static_cast<T>(mi);
    v[i] = static_cast<T>(vi);
    p[i] = static_cast<T>(pi);
  }
}

#define GPUBENCH_TRAIN_OPS(T)                                                                                          \
  template void gemm<T>(bool, bool, idx, idx, idx, T, const T*, idx, const T*, idx, T, T*, idx);                       \
  template void linear_forward<T>(const T*, const T*, const T*, T*, idx, idx, idx);                                   \
  template std::vector<T> emulate_linear_input<T>(const T*, idx, bool);                                                \
  template void linear_backward<T>(const T*, const T*, const T*, T*, T*, T*, idx, idx, idx);                          \
  template void gelu_forward<T>(const T*, T*, idx);                                                                    \
  template void gelu_backward<T>(const T*, const T*, T*, idx);                                                         \
  template void layernorm_forward<T>(const T*, const T*, const T*, T*, T*, T*, idx, idx);                             \
  template void layernorm_backward<T>(const T*, const T*, const T*, const T*, const T*, T*, T*, T*, idx, idx);        \
  template void causal_softmax_forward<T>(T*, idx);                                                                    \
  template void causal_softmax_backward<T>(const T*, T*, idx);                                                         \
  template void attention_forward<T>(const T*, T*, T*, idx, idx, idx, idx);                                           \
  template void attention_backward<T>(const T*, const T*, const T*, T*, T*, idx, idx, idx, idx);                      \
  template double cross_entropy_forward<T>(T*, const std::int32_t*, idx, idx);                                         \
  template void cross_entropy_backward<T>(T*, const std::int32_t*, idx, idx, double);                                  \
  template void embedding_forward<T>(const std::int32_t*, const T*, const T*, T*, idx, idx, idx);                     \
  template void embedding_backward<T>(const std::int32_t*, const T*, T*, T*, idx, idx, idx);                          \
  template void residual_add<T>(const T*, const T*, T*, idx);                                                          \
  template void adamw_step<T>(T*, const T*, T*, T*, idx, const AdamW&, std::int64_t, double);

GPUBENCH_TRAIN_OPS(float)
GPUBENCH_TRAIN_OPS(double)

}  // namespace gpubench::kernels::train
