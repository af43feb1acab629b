// CPU attention kernels; the math and layouts are in attention_host.hpp.
#include "kernels/attention/attention_host.hpp"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "kernels/common/random.hpp"

namespace gpubench::kernels::attention {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Row-major C = alpha op(A) op(B) + beta C through OpenBLAS.
void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
          std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda), b,
              static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}
void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
          std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda), b,
              static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

// The float row operations run over every score, as often as the products' multiply-adds per
// head_dim: they must vectorise. A reduction in one accumulator does not (reordering float
// additions or maxima is not allowed without -ffast-math), so they keep kLanes independent
// ones, which the compiler maps onto vector registers; clones for AVX-512 and AVX2 are chosen at
// load time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GPUBENCH_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GPUBENCH_VECTOR_CLONES
#endif
constexpr int kLanes = 16;

GPUBENCH_VECTOR_CLONES float row_max(const float* x, std::int64_t n) {
  float lane[kLanes];
  for (int l = 0; l < kLanes; ++l) lane[l] = -std::numeric_limits<float>::infinity();
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] = lane[l] > x[j + l] ? lane[l] : x[j + l];
  float m = -std::numeric_limits<float>::infinity();
  for (int l = 0; l < kLanes; ++l) m = std::max(m, lane[l]);
  for (; j < n; ++j) m = std::max(m, x[j]);
  return m;
}

GPUBENCH_VECTOR_CLONES float row_sum(const float* x, std::int64_t n) {
  float lane[kLanes] = {};
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] += x[j + l];
  float s = 0;
  for (int l = 0; l < kLanes; ++l) s += lane[l];
  for (; j < n; ++j) s += x[j];
  return s;
}

double row_max(const double* x, std::int64_t n) {
  double m = x[0];
  for (std::int64_t j = 1; j < n; ++j) m = std::max(m, x[j]);
  return m;
}
double row_sum(const double* x, std::int64_t n) {
  double s = 0;
  for (std::int64_t j = 0; j < n; ++j) s += x[j];
  return s;
}

// x[j] = exp(x[j] - shift): the fast float exponential for float, std::exp for the double reference.
GPUBENCH_VECTOR_CLONES void subtract(float* x, std::int64_t n, float shift) {
  for (std::int64_t j = 0; j < n; ++j) x[j] -= shift;
}
void exp_shifted(float* x, std::int64_t n, float shift) {
  subtract(x, n, shift);
  exp_nonpositive(x, n);
}
void exp_shifted(double* x, std::int64_t n, double shift) {
  for (std::int64_t j = 0; j < n; ++j) x[j] = std::exp(x[j] - shift);
}

// D_i = sum_d dO_id O_id for `rows` rows.
template <class T>
void row_dots(const T* dout, const T* o, std::int64_t rows, std::int64_t d, T* out) {
  for (std::int64_t i = 0; i < rows; ++i) {
    T s = 0;
    for (std::int64_t c = 0; c < d; ++c) s += dout[i * d + c] * o[i * d + c];
    out[i] = s;
  }
}

// P = exp(S - lse) over the visible part of row r of a tile starting at key j0, 0 elsewhere.
template <class T>
void probabilities_from_lse(const Unit& u, const Shape& sh, T* p, std::int64_t ld, std::int64_t i0, std::int64_t rows,
                            std::int64_t j0, std::int64_t cols, const T* lse) {
  for (std::int64_t r = 0; r < rows; ++r) {
    T* row = p + r * ld;
    const std::int64_t vis = std::clamp<std::int64_t>(sh.visible_keys(i0 + r) - j0, 0, cols);
    const T l = lse[i0 + r];
    if (vis == 0 || !std::isfinite(static_cast<double>(l))) {
      std::fill(row, row + cols, T(0));
      continue;
    }
    exp_shifted(row, vis, l);
    std::fill(row + vis, row + cols, T(0));
  }
  (void)u;
}

// Runs f(unit) for unit < count over `threads` threads, each taking the next unit when done
// (units differ in cost under a causal mask).
void for_units(std::int64_t count, int threads, const Parallel& parallel, const std::function<void(std::int64_t)>& f) {
  threads = static_cast<int>(std::clamp<std::int64_t>(count, 1, std::max(1, threads)));
  if (threads == 1) {
    for (std::int64_t i = 0; i < count; ++i) f(i);
    return;
  }
  std::atomic<std::int64_t> next{0};
  parallel(threads, [&](int) {
    for (std::int64_t i = next++; i < count; i = next++) f(i);
  });
}

}  // namespace

// ---- Naive (materialised) ----

template <class T>
void naive_forward(const Unit& u, const T* q, const T* k, const T* v, T* o, T* lse) {
  const Shape sh = u.shape();
  const std::int64_t sq = u.seq_q, skv = u.seq_kv, d = u.head_dim;
  std::vector<T> s(static_cast<std::size_t>(sq * skv));
  for (std::int64_t g = 0; g < u.group; ++g) {
    const T* qh = q + g * sq * d;
    T* oh = o + g * sq * d;
    gemm(false, true, sq, skv, d, static_cast<T>(sh.scale()), qh, d, k, d, T(0), s.data(), skv);
    for (std::int64_t i = 0; i < sq; ++i) {
      T* row = s.data() + i * skv;
      const std::int64_t vis = sh.visible_keys(i);
      if (vis == 0) {
        std::fill(row, row + skv, T(0));
        lse[g * sq + i] = static_cast<T>(kNegInf);
        continue;
      }
      const T m = row_max(row, vis);
      exp_shifted(row, vis, m);
      std::fill(row + vis, row + skv, T(0));
      const T sum = row_sum(row, vis);
      for (std::int64_t j = 0; j < vis; ++j) row[j] /= sum;
      lse[g * sq + i] = m + std::log(sum);
    }
    gemm(false, false, sq, d, skv, T(1), s.data(), skv, v, d, T(0), oh, d);
  }
}

template <class T>
void naive_backward(const Unit& u, const T* q, const T* k, const T* v, const T* o, const T* lse, const T* dout, T* dq,
                    T* dk, T* dv) {
  const Shape sh = u.shape();
  const std::int64_t sq = u.seq_q, skv = u.seq_kv, d = u.head_dim;
  const T scale = static_cast<T>(sh.scale());
  std::fill(dk, dk + skv * d, T(0));
  std::fill(dv, dv + skv * d, T(0));
  std::vector<T> p(static_cast<std::size_t>(sq * skv)), dp(p.size()), rowdot(static_cast<std::size_t>(sq));
  for (std::int64_t g = 0; g < u.group; ++g) {
    const T *qh = q + g * sq * d, *oh = o + g * sq * d, *doh = dout + g * sq * d, *lh = lse + g * sq;
    T* dqh = dq + g * sq * d;
    gemm(false, true, sq, skv, d, scale, qh, d, k, d, T(0), p.data(), skv);
    probabilities_from_lse(u, sh, p.data(), skv, 0, sq, 0, skv, lh);
    gemm(true, false, skv, d, sq, T(1), p.data(), skv, doh, d, T(1), dv, d);           // dV += P^T dO
    gemm(false, true, sq, skv, d, T(1), doh, d, v, d, T(0), dp.data(), skv);           // dP = dO V^T
    row_dots(doh, oh, sq, d, rowdot.data());
    for (std::int64_t i = 0; i < sq; ++i) {
      for (std::int64_t j = 0; j < skv; ++j) {
        const std::size_t at = static_cast<std::size_t>(i * skv + j);
        dp[at] = p[at] * (dp[at] - rowdot[static_cast<std::size_t>(i)]);  // dS
      }
    }
    gemm(false, false, sq, d, skv, scale, dp.data(), skv, k, d, T(0), dqh, d);         // dQ = scale dS K
    gemm(true, false, skv, d, sq, scale, dp.data(), skv, qh, d, T(1), dk, d);          // dK += scale dS^T Q
  }
}

template void naive_forward<float>(const Unit&, const float*, const float*, const float*, float*, float*);
template void naive_forward<double>(const Unit&, const double*, const double*, const double*, double*, double*);
template void naive_backward<float>(const Unit&, const float*, const float*, const float*, const float*, const float*,
                                    const float*, float*, float*, float*);
template void naive_backward<double>(const Unit&, const double*, const double*, const double*, const double*,
                                     const double*, const double*, double*, double*, double*);

// ---- Tiled (FlashAttention) ----

void flash_forward_rows(const Unit& u, const float* q_head, const float* k, const float* v, float* o_head,
                        float* lse_head, std::int64_t row_begin, std::int64_t row_end) {
  const Shape sh = u.shape();
  const std::int64_t d = u.head_dim;
  const float scale = static_cast<float>(sh.scale());
  std::vector<float> s(static_cast<std::size_t>(kTileQ * kTileKv)), acc(static_cast<std::size_t>(kTileQ * d));
  float m[kTileQ], l[kTileQ];
  for (std::int64_t i0 = row_begin; i0 < row_end; i0 += kTileQ) {
    const std::int64_t rows = std::min(kTileQ, row_end - i0);
    const std::int64_t last_visible = sh.visible_keys(i0 + rows - 1);  // the most any row of the tile sees
    std::fill(acc.begin(), acc.end(), 0.0f);
    std::fill(m, m + rows, -std::numeric_limits<float>::infinity());
    std::fill(l, l + rows, 0.0f);
    for (std::int64_t j0 = 0; j0 < last_visible; j0 += kTileKv) {
      const std::int64_t cols = std::min(kTileKv, last_visible - j0);
      gemm(false, true, rows, cols, d, scale, q_head + i0 * d, d, k + j0 * d, d, 0.0f, s.data(), kTileKv);
      for (std::int64_t r = 0; r < rows; ++r) {
        float* row = s.data() + r * kTileKv;
        const std::int64_t vis = std::clamp<std::int64_t>(sh.visible_keys(i0 + r) - j0, 0, cols);
        if (vis == 0) {
          std::fill(row, row + cols, 0.0f);
          continue;
        }
        // Online softmax: rescale what this row accumulated to the new running maximum.
        const float m_new = std::max(m[r], row_max(row, vis));
        exp_shifted(row, vis, m_new);
        std::fill(row + vis, row + cols, 0.0f);
        const float factor = std::isinf(m[r]) ? 0.0f : std::exp(m[r] - m_new);
        l[r] = l[r] * factor + row_sum(row, vis);
        if (factor != 1.0f) {
          float* a = acc.data() + r * d;
          for (std::int64_t c = 0; c < d; ++c) a[c] *= factor;
        }
        m[r] = m_new;
      }
      gemm(false, false, rows, d, cols, 1.0f, s.data(), kTileKv, v + j0 * d, d, 1.0f, acc.data(), d);
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      float* out = o_head + (i0 + r) * d;
      if (l[r] > 0) {
        const float inv = 1.0f / l[r];
        for (std::int64_t c = 0; c < d; ++c) out[c] = acc[static_cast<std::size_t>(r * d + c)] * inv;
        lse_head[i0 + r] = m[r] + std::log(l[r]);
      } else {
        std::fill(out, out + d, 0.0f);
        lse_head[i0 + r] = -std::numeric_limits<float>::infinity();
      }
    }
  }
}

void flash_backward(const Unit& u, const float* q, const float* k, const float* v, const float* o, const float* lse,
                    const float* dout, float* dq, float* dk, float* dv) {
  const Shape sh = u.shape();
  const std::int64_t sq = u.seq_q, skv = u.seq_kv, d = u.head_dim;
  const float scale = static_cast<float>(sh.scale());
  std::fill(dq, dq + u.group * sq * d, 0.0f);
  std::fill(dk, dk + skv * d, 0.0f);
  std::fill(dv, dv + skv * d, 0.0f);
  std::vector<float> rowdot(static_cast<std::size_t>(u.group * sq));
  for (std::int64_t g = 0; g < u.group; ++g) row_dots(dout + g * sq * d, o + g * sq * d, sq, d, rowdot.data() + g * sq);
  std::vector<float> p(static_cast<std::size_t>(kTileQ * kTileKv)), dp(p.size());
  for (std::int64_t j0 = 0; j0 < skv; j0 += kTileKv) {
    const std::int64_t cols = std::min(kTileKv, skv - j0);
    for (std::int64_t g = 0; g < u.group; ++g) {
      const float *qh = q + g * sq * d, *doh = dout + g * sq * d, *lh = lse + g * sq, *dh = rowdot.data() + g * sq;
      float* dqh = dq + g * sq * d;
      for (std::int64_t i0 = 0; i0 < sq; i0 += kTileQ) {
        const std::int64_t rows = std::min(kTileQ, sq - i0);
        if (sh.visible_keys(i0 + rows - 1) <= j0) continue;  // no row of this tile sees these keys
        gemm(false, true, rows, cols, d, scale, qh + i0 * d, d, k + j0 * d, d, 0.0f, p.data(), kTileKv);
        probabilities_from_lse(u, sh, p.data(), kTileKv, i0, rows, j0, cols, lh);
        gemm(true, false, cols, d, rows, 1.0f, p.data(), kTileKv, doh + i0 * d, d, 1.0f, dv + j0 * d, d);
        gemm(false, true, rows, cols, d, 1.0f, doh + i0 * d, d, v + j0 * d, d, 0.0f, dp.data(), kTileKv);
        for (std::int64_t r = 0; r < rows; ++r) {
          const float di = dh[i0 + r];
          float *pr = p.data() + r * kTileKv, *dpr = dp.data() + r * kTileKv;
          for (std::int64_t c = 0; c < cols; ++c) dpr[c] = pr[c] * (dpr[c] - di);
        }
        gemm(false, false, rows, d, cols, scale, dp.data(), kTileKv, k + j0 * d, d, 1.0f, dqh + i0 * d, d);
        gemm(true, false, cols, d, rows, scale, dp.data(), kTileKv, qh + i0 * d, d, 1.0f, dk + j0 * d, d);
      }
    }
  }
}

// ---- Decode ----

void decode_flash(const Unit& u, const float* q, const KvRows<float>& k, const KvRows<float>& v, float* o,
                  float* lse) {
  const std::int64_t d = u.head_dim, n = u.shape().visible_keys(0), G = u.group;
  const float scale = static_cast<float>(u.shape().scale());
  std::vector<float> s(static_cast<std::size_t>(G * kDecodeBlock)), acc(static_cast<std::size_t>(G * d), 0.0f);
  std::vector<float> m(static_cast<std::size_t>(G), -std::numeric_limits<float>::infinity()),
      l(static_cast<std::size_t>(G), 0.0f);
  for (std::int64_t t0 = 0; t0 < n; t0 += kDecodeBlock) {
    const std::int64_t b = std::min(kDecodeBlock, n - t0);
    // Scores: each key row read once for all the group's query heads.
    for (std::int64_t t = 0; t < b; ++t) {
      const float* kr = k.row(t0 + t);
      for (std::int64_t g = 0; g < G; ++g) {
        const float* qg = q + g * d;
        float dot = 0;
        for (std::int64_t c = 0; c < d; ++c) dot += qg[c] * kr[c];
        s[static_cast<std::size_t>(g * kDecodeBlock + t)] = dot * scale;
      }
    }
    for (std::int64_t g = 0; g < G; ++g) {
      float* sg = s.data() + g * kDecodeBlock;
      const auto gi = static_cast<std::size_t>(g);
      const float m_new = std::max(m[gi], row_max(sg, b));
      exp_shifted(sg, b, m_new);
      const float factor = std::isinf(m[gi]) ? 0.0f : std::exp(m[gi] - m_new);
      l[gi] = l[gi] * factor + row_sum(sg, b);
      float* a = acc.data() + g * d;
      if (factor != 1.0f)
        for (std::int64_t c = 0; c < d; ++c) a[c] *= factor;
      m[gi] = m_new;
    }
    for (std::int64_t t = 0; t < b; ++t) {
      const float* vr = v.row(t0 + t);
      for (std::int64_t g = 0; g < G; ++g) {
        const float p = s[static_cast<std::size_t>(g * kDecodeBlock + t)];
        float* a = acc.data() + g * d;
        for (std::int64_t c = 0; c < d; ++c) a[c] += p * vr[c];
      }
    }
  }
  for (std::int64_t g = 0; g < G; ++g) {
    const auto gi = static_cast<std::size_t>(g);
    const float inv = l[gi] > 0 ? 1.0f / l[gi] : 0.0f;
    for (std::int64_t c = 0; c < d; ++c) o[g * d + c] = acc[gi * static_cast<std::size_t>(d) + static_cast<std::size_t>(c)] * inv;
    lse[g] = l[gi] > 0 ? m[gi] + std::log(l[gi]) : -std::numeric_limits<float>::infinity();
  }
}

template <class T>
void decode_naive(const Unit& u, const T* q, const KvRows<T>& k, const KvRows<T>& v, T* o, T* lse) {
  const std::int64_t d = u.head_dim, n = u.shape().visible_keys(0);
  const T scale = static_cast<T>(u.shape().scale());
  std::vector<T> s(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
  for (std::int64_t g = 0; g < u.group; ++g) {
    const T* qg = q + g * d;
    T* og = o + g * d;
    std::fill(og, og + d, T(0));
    if (n == 0) {
      lse[g] = static_cast<T>(kNegInf);
      continue;
    }
    for (std::int64_t t = 0; t < n; ++t) {
      const T* kr = k.row(t);
      T dot = 0;
      for (std::int64_t c = 0; c < d; ++c) dot += qg[c] * kr[c];
      s[static_cast<std::size_t>(t)] = dot * scale;
    }
    const T m = row_max(s.data(), n);
    exp_shifted(s.data(), n, m);
    const T sum = row_sum(s.data(), n);
    for (std::int64_t t = 0; t < n; ++t) {
      const T p = s[static_cast<std::size_t>(t)] / sum;
      const T* vr = v.row(t);
      for (std::int64_t c = 0; c < d; ++c) og[c] += p * vr[c];
    }
    lse[g] = m + std::log(sum);
  }
}

template void decode_naive<float>(const Unit&, const float*, const KvRows<float>&, const KvRows<float>&, float*,
                                  float*);
template void decode_naive<double>(const Unit&, const double*, const KvRows<double>&, const KvRows<double>&, double*,
                                   double*);

// ---- Whole tensors ----

namespace {

Unit unit_of(const Shape& s) { return Unit{s.group(), s.seq_q, s.seq_kv, s.head_dim, s.causal}; }

}  // namespace

void forward(Algorithm a, const Shape& s, const Tensors& t, int threads, const Parallel& parallel) {
  const Unit u = unit_of(s);
  const std::int64_t sq = s.seq_q, skv = s.seq_kv, d = s.head_dim, G = s.group();
  if (a == Algorithm::Naive) {
    for_units(s.batch * s.kv_heads, threads, parallel, [&](std::int64_t unit) {
      const std::int64_t b = unit / s.kv_heads, hk = unit % s.kv_heads, h0 = b * s.heads + hk * G;
      const std::int64_t kv = (b * s.kv_heads + hk) * skv * d;
      naive_forward(u, t.q + h0 * sq * d, t.k + kv, t.v + kv, t.o + h0 * sq * d, t.lse + h0 * sq);
    });
    return;
  }
  const std::int64_t tiles = (sq + kTileQ - 1) / kTileQ;
  for_units(s.batch * s.heads * tiles, threads, parallel, [&](std::int64_t unit) {
    const std::int64_t bh = unit / tiles, tile = unit % tiles, b = bh / s.heads, h = bh % s.heads;
    const std::int64_t kv = (b * s.kv_heads + h / G) * skv * d;
    flash_forward_rows(u, t.q + bh * sq * d, t.k + kv, t.v + kv, t.o + bh * sq * d, t.lse + bh * sq, tile * kTileQ,
                       std::min(sq, (tile + 1) * kTileQ));
  });
}

void backward(Algorithm a, const Shape& s, const Tensors& t, int threads, const Parallel& parallel) {
  const Unit u = unit_of(s);
  const std::int64_t sq = s.seq_q, skv = s.seq_kv, d = s.head_dim, G = s.group();
  for_units(s.batch * s.kv_heads, threads, parallel, [&](std::int64_t unit) {
    const std::int64_t b = unit / s.kv_heads, hk = unit % s.kv_heads, h0 = b * s.heads + hk * G;
    const std::int64_t qo = h0 * sq * d, kv = (b * s.kv_heads + hk) * skv * d;
    if (a == Algorithm::Naive) {
      naive_backward(u, t.q + qo, t.k + kv, t.v + kv, t.o + qo, t.lse + h0 * sq, t.dout + qo, t.dq + qo, t.dk + kv,
                     t.dv + kv);
    } else {
      flash_backward(u, t.q + qo, t.k + kv, t.v + kv, t.o + qo, t.lse + h0 * sq, t.dout + qo, t.dq + qo, t.dk + kv,
                     t.dv + kv);
    }
  });
}

void decode(Algorithm a, const Shape& s, const Tensors& t, int threads, const Parallel& parallel) {
  if (s.seq_q != 1) throw std::logic_error("attention decode: seq_q must be 1");
  const Unit u = unit_of(s);
  const std::int64_t skv = s.seq_kv, d = s.head_dim, G = s.group();
  for_units(s.batch * s.kv_heads, threads, parallel, [&](std::int64_t unit) {
    const std::int64_t b = unit / s.kv_heads, hk = unit % s.kv_heads, h0 = b * s.heads + hk * G;
    KvRows<float> k{t.k, d, s.kv_heads, hk, s.page_size, nullptr}, v = k;
    v.base = t.v;
    if (s.page_size > 0) {
      k.table = v.table = t.page_table + b * s.pages_per_sequence();
    } else {
      k.base = t.k + (b * s.kv_heads + hk) * skv * d;
      v.base = t.v + (b * s.kv_heads + hk) * skv * d;
    }
    if (a == Algorithm::Naive) {
      decode_naive(u, t.q + h0 * d, k, v, t.o + h0 * d, t.lse + h0);
    } else {
      decode_flash(u, t.q + h0 * d, k, v, t.o + h0 * d, t.lse + h0);
    }
  });
}

std::vector<std::int32_t> scattered_page_table(const Shape& s, std::uint64_t seed) {
  const std::int64_t pages = s.batch * s.pages_per_sequence();
  std::vector<std::int32_t> table(static_cast<std::size_t>(pages));
  std::iota(table.begin(), table.end(), 0);
  for (std::int64_t i = pages - 1; i > 0; --i) {  // Fisher-Yates with a counter-based draw
    const auto j = static_cast<std::int64_t>(mix64(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(i)) %
                                             static_cast<std::uint64_t>(i + 1));
    std::swap(table[static_cast<std::size_t>(i)], table[static_cast<std::size_t>(j)]);
  }
  return table;
}

// exp(x) = 2^n * exp(r), n = round(x / ln2), r = x - n ln2 (ln2 split in two for accuracy),
// exp(r) by its Taylor polynomial to degree 6 on |r| <= ln2/2 (truncation below 1.3e-7).
// Rounding adds and subtracts 1.5 * 2^23, which the compiler keeps (no -ffast-math), so the
// loop vectorises without a floor instruction. Clones for AVX-512 and AVX2 are chosen at load.
GPUBENCH_VECTOR_CLONES void exp_nonpositive(float* x, std::int64_t n) {
  constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23
  for (std::int64_t j = 0; j < n; ++j) {
    const float xc = std::max(x[j], -87.0f);
    const float nf = (xc * kLog2e + kRound) - kRound;
    const float r = (xc - nf * kLn2Hi) - nf * kLn2Lo;
    float p = 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const std::int32_t bits = (static_cast<std::int32_t>(nf) + 127) << 23;
    float two_n;
    std::memcpy(&two_n, &bits, sizeof two_n);
    x[j] = p * two_n;
  }
}

}  // namespace gpubench::kernels::attention
