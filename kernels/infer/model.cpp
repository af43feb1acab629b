// The infer model (model.hpp): configurations, counts, ops, weights, the paged KV cache and the
// batched forward. Matmuls through kernels/train's gemm (OpenBLAS); LayerNorm and GELU are
// kernels/train's ops.
#include "kernels/infer/model.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "kernels/common/random.hpp"
#include "kernels/train/ops_reference.hpp"

namespace gpubench::kernels::infer {
namespace {

namespace tr = kernels::train;

std::size_t sz(idx n) { return static_cast<std::size_t>(n); }

// Y[rows, n] = X[rows, k] op(W) + beta Y, W row-major [k, n] (or [n, k] when `wt`). One row (a
// decode step of one sequence) goes through gemv: OpenBLAS's sgemm with M = 1 streams the
// weights at less than half the rate its sgemv reaches (15.9 vs 34.3 GB/s measured on a 2-core
// EPYC with a 512 x 8192 fp32 matrix), and that stream is the whole cost of such a step.
template <class T>
void linear(idx rows, idx n, idx k, const T* x, const T* w, bool wt, T beta, T* y) {
  if (rows == 1) {
    const auto bn = static_cast<blasint>(n), bk = static_cast<blasint>(k);
    if constexpr (std::is_same_v<T, float>) {
      if (wt) cblas_sgemv(CblasRowMajor, CblasNoTrans, bn, bk, 1.0f, w, bk, x, 1, beta, y, 1);
      else cblas_sgemv(CblasRowMajor, CblasTrans, bk, bn, 1.0f, w, bn, x, 1, beta, y, 1);
    } else {
      if (wt) cblas_dgemv(CblasRowMajor, CblasNoTrans, bn, bk, 1.0, w, bk, x, 1, beta, y, 1);
      else cblas_dgemv(CblasRowMajor, CblasTrans, bk, bn, 1.0, w, bn, x, 1, beta, y, 1);
    }
    return;
  }
  tr::gemm<T>(false, wt, rows, n, k, T(1), x, k, w, wt ? k : n, beta, y, n);
}

}  // namespace

// ---- Ops ----

template <class T>
void rmsnorm(const T* x, const T* g, T* y, idx rows, idx c, double eps) {
  for (idx r = 0; r < rows; ++r) {
    const T* xr = x + r * c;
    double ss = 0;
    for (idx i = 0; i < c; ++i) ss += static_cast<double>(xr[i]) * static_cast<double>(xr[i]);
    const T scale = static_cast<T>(1 / std::sqrt(ss / static_cast<double>(c) + eps));
    for (idx i = 0; i < c; ++i) y[r * c + i] = xr[i] * scale * g[i];
  }
}

template <class T>
void rope(T* v, idx d, idx pos, double theta) {
  const idx half = d / 2;
  for (idx i = 0; i < half; ++i) {
    const double f = std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(d));
    const double a = static_cast<double>(pos) * f;
    const T cs = static_cast<T>(std::cos(a)), sn = static_cast<T>(std::sin(a));
    const T x0 = v[i], x1 = v[i + half];
    v[i] = x0 * cs - x1 * sn;
    v[i + half] = x1 * cs + x0 * sn;
  }
}

template <class T>
void swiglu(const T* gate_up, T* out, idx rows, idx f) {
  for (idx r = 0; r < rows; ++r) {
    const T* gu = gate_up + r * 2 * f;
    for (idx i = 0; i < f; ++i) {
      const T g = gu[i];
      out[r * f + i] = g / (T(1) + std::exp(-g)) * gu[f + i];
    }
  }
}

// ---- Weights ----

WeightInit weight_init(const Tensor& t) {
  const std::string& n = t.name;
  const auto ends = [&](const char* suffix) {
    const std::string x(suffix);
    return n.size() >= x.size() && n.compare(n.size() - x.size(), x.size(), x) == 0;
  };
  if (n == "wte" || n == "wpe") return {1, 0};
  if (ends(".g")) return {0.1, 1};
  if (t.cols == 1) return {0.1, 0};                           // biases and norm shifts
  return {std::sqrt(3.0 / static_cast<double>(t.rows)), 0};   // uniform: std = scale / sqrt(3)
}

template <class T>
std::vector<T> random_weights(const ModelSpec& s, std::uint64_t seed) {
  const Layout l = layout(s);
  std::vector<T> w(sz(l.total));
  for (const Tensor& t : l.tensors) {
    const WeightInit init = weight_init(t);
    for (idx i = 0; i < t.size(); ++i) {
      w[sz(t.offset + i)] =
          static_cast<T>(init.shift + init.scale * uniform_value(seed, static_cast<std::uint64_t>(t.offset + i)));
    }
  }
  return w;
}

// ---- KV cache ----

PageTable::PageTable(idx page_size, idx pages) : page_size_(page_size), pages_(pages) {
  if (page_size < 1 || pages < 1) throw std::invalid_argument("KV cache: page_size and pages must be at least 1");
  for (idx p = 0; p < pages_; ++p) free_.push_back(static_cast<std::int32_t>(pages_ - 1 - p));  // page 0 first out
}

int PageTable::open() {
  for (std::size_t i = 0; i < open_.size(); ++i) {
    if (!open_[i]) {
      open_[i] = true;
      length_[i] = 0;
      return static_cast<int>(i);
    }
  }
  open_.push_back(true);
  table_.emplace_back();
  length_.push_back(0);
  return static_cast<int>(open_.size() - 1);
}

bool PageTable::reserve(int seq, idx tokens) {
  auto& t = table_[static_cast<std::size_t>(seq)];
  const idx need = pages_for(tokens) - static_cast<idx>(t.size());
  if (need <= 0) return true;
  if (need > static_cast<idx>(free_.size())) return false;
  for (idx i = 0; i < need; ++i) {
    t.push_back(free_.back());
    free_.pop_back();
  }
  return true;
}

void PageTable::release(int seq) {
  auto& t = table_[static_cast<std::size_t>(seq)];
  for (auto it = t.rbegin(); it != t.rend(); ++it) free_.push_back(*it);
  t.clear();
  length_[static_cast<std::size_t>(seq)] = 0;
  open_[static_cast<std::size_t>(seq)] = false;
}

template <class T>
KvCache<T>::KvCache(const ModelSpec& s, idx page_size, idx pages)
    : table_(page_size, pages), kv_dim_(s.kv_dim()), rows_(pages * page_size) {
  const std::size_t n = sz(s.layers * rows_ * kv_dim_);
  k_.assign(n, T(0));
  v_.assign(n, T(0));
}

// ---- Engine ----

template <class T>
Engine<T>::Engine(const ModelSpec& s, const std::vector<T>& weights, KvCache<T>& cache)
    : s_(s), layout_(layout(s)), weights_(weights), cache_(cache) {
  if (static_cast<idx>(weights.size()) != layout_.total) throw std::invalid_argument("infer engine: weights do not match the model");
}

// Multiply-adds of a step's attention (each query's q_dim against each key, twice) below which
// it runs on the calling thread: ~4 million, a fraction of a millisecond on one core.
constexpr double kParallelAttentionMacs = 2e6;

// Per (row, KV head): the group's query heads over the cached positions 0..pos, two passes
// (scores and their maximum, then exp, sum and the weighted values) in T.
template <class T>
void Engine<T>::attention(idx layer, int threads, const Parallel& parallel) {
  const idx rows = static_cast<idx>(row_pos_.size()), hk = s_.kv_heads_shard(), d = s_.head_dim();
  const idx group = s_.q_heads() / hk, qkv_dim = s_.qkv_dim(), q_dim = s_.q_dim();
  const T inv_sqrt_d = static_cast<T>(1 / std::sqrt(static_cast<double>(d)));
  const idx units = rows * hk;
  auto work = [&](int t, int n) {
    const idx begin = units * t / n, end = units * (t + 1) / n;
    std::vector<T> p;
    for (idx u = begin; u < end; ++u) {
      const idx r = u / hk, g = u % hk, pos = row_pos_[sz(r)];
      const int seq = row_seq_[sz(r)];
      p.resize(sz(pos + 1));
      for (idx h = g * group; h < (g + 1) * group; ++h) {
        const T* q = qkv_.data() + r * qkv_dim + h * d;
        T m = -INFINITY;
        for (idx j = 0; j <= pos; ++j) {
          const T* k = cache_.k(layer, seq, j) + g * d;
          T dot = 0;
          for (idx i = 0; i < d; ++i) dot += q[i] * k[i];
          p[sz(j)] = dot * inv_sqrt_d;
          m = std::max(m, p[sz(j)]);
        }
        T sum = 0;
        for (idx j = 0; j <= pos; ++j) sum += (p[sz(j)] = std::exp(p[sz(j)] - m));
        T* out = att_.data() + r * q_dim + h * d;
        std::fill(out, out + d, T(0));
        for (idx j = 0; j <= pos; ++j) {
          const T* v = cache_.v(layer, seq, j) + g * d;
          const T pj = p[sz(j)] / sum;
          for (idx i = 0; i < d; ++i) out[i] += pj * v[i];
        }
      }
    }
  };
  // The pool only for enough work: a small step's attention (a decode of a few short sequences)
  // takes less than waking the pool's threads, whose spinning then steals the cores from
  // OpenBLAS's threads in the next product.
  idx pairs = 0;
  for (idx r = 0; r < rows; ++r) pairs += row_pos_[sz(r)] + 1;
  const bool large = static_cast<double>(pairs) * static_cast<double>(q_dim) >= kParallelAttentionMacs;
  const int n = large ? static_cast<int>(std::clamp<idx>(threads, 1, std::max<idx>(units, 1))) : 1;
  if (parallel && n > 1) parallel(n, [&](int t) { work(t, n); });
  else work(0, 1);
}

template <class T>
const std::vector<T>& Engine<T>::forward(const std::vector<Chunk>& chunks, int threads, const Parallel& parallel) {
  const bool gpt = s_.arch == Arch::Gpt;
  const idx c = s_.hidden, f = s_.ffn_shard(), qkv = s_.qkv_dim(), qd = s_.q_dim(), kvd = s_.kv_dim(), d = s_.head_dim();
  idx rows = 0;
  for (const Chunk& ch : chunks) rows += ch.n;
  row_pos_.clear();
  row_seq_.clear();
  for (const Chunk& ch : chunks) {
    if (gpt && ch.start + ch.n > s_.max_positions) throw std::invalid_argument("infer engine: position beyond the model's");
    for (idx i = 0; i < ch.n; ++i) {
      row_pos_.push_back(ch.start + i);
      row_seq_.push_back(ch.seq);
    }
  }
  x_.resize(sz(rows * c));
  h_.resize(sz(rows * c));
  qkv_.resize(sz(rows * qkv));
  att_.resize(sz(rows * qd));
  ff_.resize(sz(rows * (gpt ? f : 2 * f)));
  ff2_.resize(sz(rows * f));
  std::vector<T> mean(sz(rows)), rstd(sz(rows));
  // Embedding.
  {
    idx r = 0;
    for (const Chunk& ch : chunks) {
      for (idx i = 0; i < ch.n; ++i, ++r) {
        const T* e = w("wte") + static_cast<idx>(ch.tokens[i]) * c;
        T* x = x_.data() + r * c;
        std::copy(e, e + c, x);
        if (gpt) {
          const T* p = w("wpe") + (ch.start + i) * c;
          for (idx j = 0; j < c; ++j) x[j] += p[j];
        }
      }
    }
  }
  auto norm = [&](const std::string& prefix, const T* in, T* out, idx n) {
    if (gpt) tr::layernorm_forward(in, w(prefix + ".g"), w(prefix + ".b"), out, mean.data(), rstd.data(), n, c);
    else rmsnorm(in, w(prefix + ".g"), out, n, c, s_.norm_eps);
  };
  auto add_bias = [&](T* y, const T* b, idx n, idx cols) {
    for (idx r = 0; r < n; ++r)
      for (idx j = 0; j < cols; ++j) y[r * cols + j] += b[j];
  };
  for (idx l = 0; l < s_.layers; ++l) {
    auto lw = [&](const char* what) { return w(layer_tensor(l, what)); };
    norm(layer_tensor(l, "norm1"), x_.data(), h_.data(), rows);
    linear<T>(rows, qkv, c, h_.data(), lw("wqkv"), false, T(0), qkv_.data());
    if (gpt) add_bias(qkv_.data(), lw("bqkv"), rows, qkv);
    for (idx r = 0; r < rows; ++r) {
      T* row = qkv_.data() + r * qkv;
      if (!gpt) {
        for (idx h = 0; h < s_.q_heads() + s_.kv_heads_shard(); ++h) rope(row + h * d, d, row_pos_[sz(r)], s_.rope_theta);
      }
      std::copy(row + qd, row + qd + kvd, cache_.k(l, row_seq_[sz(r)], row_pos_[sz(r)]));
      std::copy(row + qd + kvd, row + qd + 2 * kvd, cache_.v(l, row_seq_[sz(r)], row_pos_[sz(r)]));
    }
    attention(l, threads, parallel);
    linear<T>(rows, c, qd, att_.data(), lw("wo"), false, T(1), x_.data());
    if (gpt) add_bias(x_.data(), lw("bo"), rows, c);
    norm(layer_tensor(l, "norm2"), x_.data(), h_.data(), rows);
    if (gpt) {
      linear<T>(rows, f, c, h_.data(), lw("w1"), false, T(0), ff_.data());
      add_bias(ff_.data(), lw("b1"), rows, f);
      tr::gelu_forward(ff_.data(), ff2_.data(), rows * f);
      linear<T>(rows, c, f, ff2_.data(), lw("w2"), false, T(1), x_.data());
      add_bias(x_.data(), lw("b2"), rows, c);
    } else {
      linear<T>(rows, 2 * f, c, h_.data(), lw("wgu"), false, T(0), ff_.data());
      swiglu(ff_.data(), ff2_.data(), rows, f);
      linear<T>(rows, c, f, ff2_.data(), lw("wd"), false, T(1), x_.data());
    }
  }
  for (const Chunk& ch : chunks) cache_.set_length(ch.seq, ch.start + ch.n);
  // The head: every row, or each chunk's last.
  idx out_rows = rows;
  const T* src = x_.data();
  if (!all_logits_) {
    out_rows = static_cast<idx>(chunks.size());
    last_.resize(sz(out_rows * c));
    idx r = 0, k = 0;
    for (const Chunk& ch : chunks) {
      r += ch.n;
      std::copy(x_.data() + (r - 1) * c, x_.data() + r * c, last_.data() + k++ * c);
    }
    src = last_.data();
  }
  h_.resize(sz(std::max(rows, out_rows) * c));
  mean.resize(sz(std::max(rows, out_rows)));
  rstd.resize(mean.size());
  norm("normf", src, h_.data(), out_rows);
  const idx v = s_.vocab_shard();
  logits_.resize(sz(out_rows * v));
  linear<T>(out_rows, v, c, h_.data(), gpt ? w("wte") : w("wlm"), gpt, T(0), logits_.data());
  return logits_;
}

// ---- Reference ----

std::vector<double> reference_logits(const ModelSpec& s, const std::vector<double>& wts,
                                     const std::vector<std::int32_t>& tokens, const std::vector<idx>* fp8_steps) {
  const Layout lay = layout(s);
  auto W = [&](const std::string& name) { return wts.data() + lay.at(name).offset; };
  const bool gpt = s.arch == Arch::Gpt;
  const idx n = static_cast<idx>(tokens.size()), c = s.hidden, d = s.head_dim(), f = s.ffn_shard();
  const idx hq = s.q_heads(), hk = s.kv_heads_shard(), qd = s.q_dim(), kvd = s.kv_dim();
  if (fp8_steps != nullptr) {
    if (gpt) throw std::invalid_argument("reference_logits: the fp8 emulation is for the llama models");
    idx total = 0;
    for (idx r : *fp8_steps) {
      if (r <= 0) throw std::invalid_argument("reference_logits: an fp8 step of no rows");
      total += r;
    }
    if (total != n) throw std::invalid_argument("reference_logits: the fp8 steps do not cover the tokens");
  }
  // The emulation's quantiser: kernels/train's, under its Fp8 mode (E4M3, fp8_scale).
  std::optional<tr::ScopedLinearInputs> fp8_mode;
  if (fp8_steps != nullptr) fp8_mode.emplace(tr::LinearInputs::Fp8);
  // y[n, out] = x[n, in] W[in, out] (+ b), the product by OpenBLAS dgemm; a linear layer's
  // (`quantised`) under the fp8 emulation takes W and each step's rows of x as fp8 codes would.
  auto linear = [&](const std::vector<double>& x_in, const double* w_in, const double* b, idx rows, idx in, idx out,
                    bool quantised = false) {
    std::vector<double> x_q, w_q;
    const double* wm = w_in;
    const std::vector<double>* xp = &x_in;
    if (quantised && fp8_steps != nullptr) {
      w_q = tr::emulate_linear_input(w_in, in * out, false);
      wm = w_q.data();
      x_q.reserve(x_in.size());
      idx row = 0;
      for (idx step : *fp8_steps) {
        const std::vector<double> part = tr::emulate_linear_input(x_in.data() + row * in, step * in, false);
        x_q.insert(x_q.end(), part.begin(), part.end());
        row += step;
      }
      xp = &x_q;
    }
    const std::vector<double>& x = *xp;
    std::vector<double> y(sz(rows * out), 0.0);
    tr::gemm<double>(false, false, rows, out, in, 1.0, x.data(), in, wm, out, 0.0, y.data(), out);
    if (b != nullptr)
      for (idx r = 0; r < rows; ++r)
        for (idx o = 0; o < out; ++o) y[sz(r * out + o)] += b[o];
    return y;
  };
  auto normalize = [&](const std::vector<double>& x, const std::string& prefix) {
    std::vector<double> y(x.size());
    const double* g = W(prefix + ".g");
    for (idx r = 0; r < static_cast<idx>(x.size()) / c; ++r) {
      const double* xr = x.data() + r * c;
      double mu = 0, ms = 0;
      for (idx i = 0; i < c; ++i) mu += xr[i] / static_cast<double>(c);
      if (gpt) {
        for (idx i = 0; i < c; ++i) ms += (xr[i] - mu) * (xr[i] - mu) / static_cast<double>(c);
        const double* b = W(prefix + ".b");
        for (idx i = 0; i < c; ++i) y[sz(r * c + i)] = (xr[i] - mu) / std::sqrt(ms + tr::kLayerNormEps) * g[i] + b[i];
      } else {
        for (idx i = 0; i < c; ++i) ms += xr[i] * xr[i] / static_cast<double>(c);
        for (idx i = 0; i < c; ++i) y[sz(r * c + i)] = xr[i] / std::sqrt(ms + s.norm_eps) * g[i];
      }
    }
    return y;
  };
  std::vector<double> x(sz(n * c));
  for (idx t = 0; t < n; ++t)
    for (idx i = 0; i < c; ++i)
      x[sz(t * c + i)] = W("wte")[tokens[sz(t)] * c + i] + (gpt ? W("wpe")[t * c + i] : 0.0);
  for (idx l = 0; l < s.layers; ++l) {
    auto lw = [&](const char* what) { return W(layer_tensor(l, what)); };
    std::vector<double> qkv = linear(normalize(x, layer_tensor(l, "norm1")), lw("wqkv"), gpt ? lw("bqkv") : nullptr, n,
                                     c, s.qkv_dim(), true);
    for (idx t = 0; t < n && !gpt; ++t) {
      // Rotary embedding, written out: pair (i, i + D/2) rotated by t * theta^(-2i/D).
      for (idx h = 0; h < hq + hk; ++h) {
        double* v = qkv.data() + t * s.qkv_dim() + h * d;
        for (idx i = 0; i < d / 2; ++i) {
          const double a = static_cast<double>(t) * std::pow(s.rope_theta, -2.0 * static_cast<double>(i) / static_cast<double>(d));
          const double x0 = v[i], x1 = v[i + d / 2];
          v[i] = x0 * std::cos(a) - x1 * std::sin(a);
          v[i + d / 2] = x1 * std::cos(a) + x0 * std::sin(a);
        }
      }
    }
    // Per query head: S = Q K^T / sqrt(D) (dgemm over the strided rows of qkv), the causal row
    // softmax (keys j <= t), then O = P V (dgemm into the head's columns of att).
    std::vector<double> att(sz(n * qd), 0.0), scores(sz(n * n));
    const idx ld = s.qkv_dim();
    for (idx h = 0; h < hq; ++h) {
      const idx g = h / (hq / hk);  // the KV head this query head reads
      tr::gemm<double>(false, true, n, n, d, 1 / std::sqrt(static_cast<double>(d)), qkv.data() + h * d, ld,
                       qkv.data() + qd + g * d, ld, 0.0, scores.data(), n);
      for (idx t = 0; t < n; ++t) {
        double* row = scores.data() + t * n;
        double m = -INFINITY, sum = 0;
        for (idx j = 0; j <= t; ++j) m = std::max(m, row[j]);
        for (idx j = 0; j <= t; ++j) sum += (row[j] = std::exp(row[j] - m));
        for (idx j = 0; j <= t; ++j) row[j] /= sum;
        for (idx j = t + 1; j < n; ++j) row[j] = 0;
      }
      tr::gemm<double>(false, false, n, d, n, 1.0, scores.data(), n, qkv.data() + qd + kvd + g * d, ld, 0.0,
                       att.data() + h * d, qd);
    }
    std::vector<double> o = linear(att, lw("wo"), gpt ? lw("bo") : nullptr, n, qd, c, true);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += o[i];
    const std::vector<double> h = normalize(x, layer_tensor(l, "norm2"));
    std::vector<double> mlp;
    if (gpt) {
      std::vector<double> a = linear(h, lw("w1"), lw("b1"), n, c, f);
      for (double& v : a) v = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      mlp = linear(a, lw("w2"), lw("b2"), n, f, c);
    } else {
      const std::vector<double> gu = linear(h, lw("wgu"), nullptr, n, c, 2 * f, true);
      std::vector<double> a(sz(n * f));
      for (idx t = 0; t < n; ++t)
        for (idx i = 0; i < f; ++i) {
          const double g = gu[sz(t * 2 * f + i)];
          a[sz(t * f + i)] = g / (1 + std::exp(-g)) * gu[sz(t * 2 * f + f + i)];
        }
      mlp = linear(a, lw("wd"), nullptr, n, f, c, true);
    }
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += mlp[i];
  }
  const std::vector<double> h = normalize(x, "normf");
  const idx v = s.vocab_shard();
  if (!gpt) return linear(h, W("wlm"), nullptr, n, c, v);
  std::vector<double> logits(sz(n * v), 0.0);  // tied head: x wte^T
  tr::gemm<double>(false, true, n, v, c, 1.0, h.data(), c, W("wte"), c, 0.0, logits.data(), v);
  return logits;
}

StepShape pack_step(const std::vector<Chunk>& chunks, const PageTable& pages, const StepLayout& l, std::int32_t* out) {
  StepShape shape;
  for (const Chunk& c : chunks) {
    if (c.seq < 0 || c.seq >= l.max_sequences) throw std::invalid_argument("engine step: sequence id beyond max_sequences");
    if (c.n < 1) throw std::invalid_argument("engine step: an empty chunk");
    if (shape.rows + c.n > l.max_rows) throw std::invalid_argument("engine step: more rows than its buffers hold");
    for (idx i = 0; i < c.n; ++i) {
      out[l.tokens() + shape.rows] = c.tokens[i];
      out[l.seq() + shape.rows] = c.seq;
      out[l.pos() + shape.rows] = static_cast<std::int32_t>(c.start + i);
      ++shape.rows;
    }
    if (shape.outs >= l.max_sequences) throw std::invalid_argument("engine step: more chunks than max_sequences");
    out[l.last() + shape.outs++] = static_cast<std::int32_t>(shape.rows - 1);
  }
  if (pages.sequences() > l.max_sequences) throw std::invalid_argument("engine step: more sequences than max_sequences");
  std::fill(out + l.table(), out + l.total(), 0);
  for (int q = 0; q < pages.sequences(); ++q) {
    const std::vector<std::int32_t>& p = pages.pages(q);
    if (static_cast<idx>(p.size()) > l.max_pages) throw std::invalid_argument("engine step: a sequence beyond max_pages");
    std::copy(p.begin(), p.end(), out + l.table() + q * l.max_pages);
  }
  return shape;
}

AttentionSplit attention_split(idx units, idx max_keys, int sms) {
  AttentionSplit a;
  const idx want = kSplitWaveBlocks * std::max(sms, 1);
  if (units <= 0 || units >= want || max_keys < 2 * kMinKeysPerSplit) return a;
  const idx by_blocks = (want + units - 1) / units;
  const idx by_keys = max_keys / kMinKeysPerSplit;
  const idx splits = std::min({by_blocks, by_keys, kMaxSplits});
  if (splits < 2) return a;
  a.keys_per_split = (max_keys + splits - 1) / splits;
  a.splits = (max_keys + a.keys_per_split - 1) / a.keys_per_split;  // no split left empty for the longest row
  return a;
}

idx attention_split_slots(idx max_units, int sms) {
  // A split step has units < want blocks and splits <= ceil(want / units): fewer than
  // want + units < 2 want slots.
  const idx want = kSplitWaveBlocks * std::max(sms, 1);
  return std::min(std::max<idx>(max_units, 1) * kMaxSplits, 2 * want);
}

SoftmaxPartial attention_partial(const std::vector<double>& q, const std::vector<std::vector<double>>& keys,
                                 const std::vector<std::vector<double>>& values, idx j0, idx j1, double scale) {
  SoftmaxPartial p;
  p.acc.assign(q.size(), 0.0);
  for (idx j = j0; j < j1; ++j) {
    const std::vector<double>& k = keys[sz(j)];
    const std::vector<double>& v = values[sz(j)];
    double dot = 0;
    for (std::size_t i = 0; i < q.size(); ++i) dot += q[i] * k[i];
    const double s = dot * scale, m = std::max(p.m, s);
    const double old = std::exp(p.m - m), e = std::exp(s - m);
    p.l = p.l * old + e;
    for (std::size_t i = 0; i < q.size(); ++i) p.acc[i] = p.acc[i] * old + e * v[i];
    p.m = m;
  }
  return p;
}

std::vector<double> combine_partials(const std::vector<SoftmaxPartial>& parts) {
  double big = -std::numeric_limits<double>::infinity();
  std::size_t d = 0;
  for (const SoftmaxPartial& p : parts) {
    big = std::max(big, p.m);
    d = std::max(d, p.acc.size());
  }
  if (big == -std::numeric_limits<double>::infinity()) throw std::invalid_argument("combine_partials: every split is empty");
  std::vector<double> out(d, 0.0);
  double total = 0;
  for (const SoftmaxPartial& p : parts) {
    if (p.m == -std::numeric_limits<double>::infinity()) continue;
    const double w = std::exp(p.m - big);
    total += p.l * w;
    for (std::size_t i = 0; i < p.acc.size(); ++i) out[i] += p.acc[i] * w;
  }
  for (double& o : out) o /= total;
  return out;
}

template <class T>
std::vector<std::int32_t> argmax_rows(const std::vector<T>& logits, idx rows, idx vocab) {
  std::vector<std::int32_t> out(sz(rows));
  for (idx r = 0; r < rows; ++r) {
    const T* row = logits.data() + r * vocab;
    out[sz(r)] = static_cast<std::int32_t>(std::max_element(row, row + vocab) - row);
  }
  return out;
}

std::vector<std::int32_t> prompt_tokens(const ModelSpec& s, std::uint64_t seed, idx request, idx n) {
  std::vector<std::int32_t> t(sz(n));
  for (idx i = 0; i < n; ++i) {
    t[sz(i)] = static_cast<std::int32_t>(mix64(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(request) * 0x100000001B3ull +
                                               static_cast<std::uint64_t>(i)) %
                                         static_cast<std::uint64_t>(s.vocab));
  }
  return t;
}

template void rmsnorm<float>(const float*, const float*, float*, idx, idx, double);
template void rmsnorm<double>(const double*, const double*, double*, idx, idx, double);
template void rope<float>(float*, idx, idx, double);
template void rope<double>(double*, idx, idx, double);
template void swiglu<float>(const float*, float*, idx, idx);
template void swiglu<double>(const double*, double*, idx, idx);
template std::vector<float> random_weights<float>(const ModelSpec&, std::uint64_t);
template std::vector<double> random_weights<double>(const ModelSpec&, std::uint64_t);
template std::vector<std::int32_t> argmax_rows<float>(const std::vector<float>&, idx, idx);
template std::vector<std::int32_t> argmax_rows<double>(const std::vector<double>&, idx, idx);
template class KvCache<float>;
template class KvCache<double>;
template class Engine<float>;
template class Engine<double>;

}  // namespace gpubench::kernels::infer
