#include "kernels/train/model_reference.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/common/random.hpp"

namespace gpubench::kernels::train {
namespace {

template <class T>
std::size_t sz(T n) {
  return static_cast<std::size_t>(n);
}

}  // namespace

Batch make_batch(const ModelConfig& c, std::uint64_t seed) {
  Batch b;
  auto draw = [&](std::uint64_t i, std::int64_t n) {
    return static_cast<std::int32_t>(mix64(seed * 0x9E3779B97F4A7C15ull + i) % static_cast<std::uint64_t>(n));
  };
  if (c.kind == ModelKind::Mlp) {
    b.inputs.resize(sz(c.batch * c.hidden));
    for (std::size_t i = 0; i < b.inputs.size(); ++i) b.inputs[i] = uniform_value(seed, i);
    b.targets.resize(sz(c.batch));
    for (std::size_t i = 0; i < b.targets.size(); ++i) b.targets[i] = draw(i, c.vocab);
    return b;
  }
  // One random sequence of T + 1 tokens per row: inputs are the first T, targets the last T.
  b.tokens.resize(sz(c.batch * c.seq));
  b.targets.resize(sz(c.batch * c.seq));
  for (std::int64_t r = 0; r < c.batch; ++r) {
    for (std::int64_t t = 0; t <= c.seq; ++t) {
      const std::int32_t tok = draw(static_cast<std::uint64_t>(r * (c.seq + 1) + t), c.vocab);
      if (t < c.seq) b.tokens[sz(r * c.seq + t)] = tok;
      if (t > 0) b.targets[sz(r * c.seq + t - 1)] = tok;
    }
  }
  return b;
}

std::vector<double> initial_params(const ModelConfig& c, std::uint64_t seed) {
  const ParamLayout layout = param_layout(c);
  std::vector<double> p(sz(layout.total), 0.0);
  for (const ParamTensor& t : layout.tensors) {
    const bool vector = t.cols == 1;
    const bool gain = t.name.ends_with(".g");
    if (vector) {
      std::fill_n(p.begin() + t.offset, t.size, gain ? 1.0 : 0.0);
      continue;
    }
    // uniform_value is uniform on [-1, 1): standard deviation 1/sqrt(3).
    const double stddev = c.kind == ModelKind::Mlp ? 1 / std::sqrt(static_cast<double>(t.rows)) : 0.02;
    const double a = stddev * std::sqrt(3.0);
    for (std::int64_t i = 0; i < t.size; ++i) {
      p[sz(t.offset + i)] = a * uniform_value(seed, static_cast<std::uint64_t>(t.offset + i));
    }
  }
  return p;
}

template <class T>
ReferenceModel<T>::ReferenceModel(const ModelConfig& c, std::uint64_t seed) : c_(c), layout_(param_layout(c)) {
  if (auto e = config_error(c)) throw std::invalid_argument(*e);
  const std::vector<double> init = initial_params(c, seed);
  p_.assign(init.begin(), init.end());
  g_.assign(p_.size(), T(0));
  m_.assign(p_.size(), T(0));
  v_.assign(p_.size(), T(0));
  const std::int64_t n = c.rows(), C = c.hidden, V = c.vocab;
  xs_.resize(sz((c.layers + 1) * n * C));
  logits_.resize(sz(n * V));
  dx_.resize(sz(n * C));
  if (c.kind == ModelKind::Mlp) {
    pre_.resize(sz(c.layers * n * C));
    dtmp_.resize(sz(n * C));
    return;
  }
  const std::int64_t F = c.ffn(), T_ = c.seq, H = c.heads;
  blocks_.resize(sz(c.recompute == Recompute::Block ? 1 : c.layers));
  for (BlockActs& a : blocks_) {
    for (auto* v : {&a.ln1_out, &a.att, &a.x_mid, &a.ln2_out}) v->resize(sz(n * C));
    for (auto* v : {&a.ln1_mean, &a.ln1_rstd, &a.ln2_mean, &a.ln2_rstd}) v->resize(sz(n));
    a.qkv.resize(sz(n * 3 * C));
    if (c.attention == Attention::Fused) {
      a.lse.resize(sz(c.batch * H * T_));
    } else {
      a.p.resize(sz(c.batch * H * T_ * T_));
    }
  }
  mlps_.resize(sz(c.recompute == Recompute::None ? c.layers : 1));
  for (MlpActs& m : mlps_) {
    m.h.resize(sz(n * F));
    m.g.resize(sz(n * F));
  }
  lnf_out_.resize(sz(n * C));
  lnf_mean_.resize(sz(n));
  lnf_rstd_.resize(sz(n));
  dtmp_.resize(sz(n * C));
  dqkv_.resize(sz(n * 3 * C));
  dh_.resize(sz(n * F));
  datt_.resize(sz(n * C));
  if (c.attention == Attention::Unfused) dscores_.resize(sz(T_ * T_));
}

template <class T>
void ReferenceModel<T>::pad_to(std::int64_t elements) {
  if (elements < layout_.total) throw std::invalid_argument("pad_to: fewer elements than the layout");
  for (auto* v : {&p_, &g_, &m_, &v_}) v->resize(sz(elements), T(0));
}

template <class T>
void ReferenceModel<T>::drop_moments() {
  m_ = std::vector<T>();
  v_ = std::vector<T>();
}

template <class T>
void ReferenceModel<T>::zero_grads() {
  std::fill(g_.begin(), g_.end(), T(0));
}

template <class T>
double ReferenceModel<T>::forward(const Batch& b) {
  return c_.kind == ModelKind::Mlp ? forward_mlp(b) : forward_transformer(b);
}

template <class T>
void ReferenceModel<T>::backward(const Batch& b, double grad_scale) {
  if (c_.kind == ModelKind::Mlp) {
    backward_mlp(b, grad_scale);
  } else {
    backward_transformer(b, grad_scale);
  }
}

template <class T>
void ReferenceModel<T>::optimizer_step(const AdamW& hp) {
  if (m_.size() != p_.size()) throw std::logic_error("optimizer_step: the moments were dropped (zero1)");
  ++t_;
  adamw_step(p_.data(), g_.data(), m_.data(), v_.data(), static_cast<idx>(p_.size()), hp, t_);
}

template <class T>
double ReferenceModel<T>::train_step(const std::vector<Batch>& micro, const AdamW& hp) {
  zero_grads();
  double loss = 0;
  for (const Batch& b : micro) {
    loss += forward(b);
    backward(b, 1.0 / static_cast<double>(micro.size()));
  }
  optimizer_step(hp);
  return loss / static_cast<double>(micro.size());
}

template <class T>
std::int64_t ReferenceModel<T>::memory_bytes() const {
  std::size_t n = p_.size() + g_.size() + m_.size() + v_.size() + xs_.size() + pre_.size() + lnf_out_.size() +
                  lnf_mean_.size() + lnf_rstd_.size() + logits_.size() + dx_.size() + dtmp_.size() + dqkv_.size() +
                  dh_.size() + datt_.size() + dscores_.size();
  for (const BlockActs& a : blocks_) {
    for (const auto* v : {&a.ln1_out, &a.ln1_mean, &a.ln1_rstd, &a.qkv, &a.p, &a.att, &a.x_mid, &a.ln2_out,
                          &a.ln2_mean, &a.ln2_rstd, &a.lse}) {
      n += v->size();
    }
  }
  for (const MlpActs& m : mlps_) n += m.h.size() + m.g.size();
  return static_cast<std::int64_t>(n * sizeof(T));
}

// ---- mlp ----

template <class T>
double ReferenceModel<T>::forward_mlp(const Batch& b) {
  const std::int64_t n = c_.batch, C = c_.hidden;
  std::copy(b.inputs.begin(), b.inputs.end(), x(0));
  for (std::int64_t l = 0; l < c_.layers; ++l) {
    T* pre = pre_.data() + l * n * C;
    linear_forward(x(l), lw(l, "fc.w"), lw(l, "fc.b"), pre, n, C, C);
    gelu_forward(pre, x(l + 1), n * C);
  }
  linear_forward(x(c_.layers), w("head.w"), w("head.b"), logits_.data(), n, C, c_.vocab);
  return cross_entropy_forward(logits_.data(), b.targets.data(), n, c_.vocab);
}

template <class T>
void ReferenceModel<T>::backward_mlp(const Batch& b, double grad_scale) {
  const std::int64_t n = c_.batch, C = c_.hidden;
  cross_entropy_backward(logits_.data(), b.targets.data(), n, c_.vocab, grad_scale);
  linear_backward(x(c_.layers), w("head.w"), logits_.data(), dx_.data(), dw("head.w"), dw("head.b"), n, C, c_.vocab);
  ready("head.w");
  for (std::int64_t l = c_.layers - 1; l >= 0; --l) {
    const T* pre = pre_.data() + l * n * C;
    gelu_backward(pre, dx_.data(), dtmp_.data(), n * C);
    // The first layer's input is data: no input gradient.
    linear_backward(x(l), lw(l, "fc.w"), dtmp_.data(), l > 0 ? dx_.data() : nullptr, ldw(l, "fc.w"), ldw(l, "fc.b"), n,
                    C, C);
    if (l > 0) ready(l, "fc.w");
  }
  if (ready_) ready_(0);
}

// ---- transformer ----

template <class T>
void ReferenceModel<T>::block_forward(std::int64_t l, bool stop_before_fc2) {
  const std::int64_t n = c_.rows(), C = c_.hidden, F = c_.ffn();
  BlockActs& a = block(l);
  MlpActs& m = mlp(l);
  layernorm_forward(x(l), lw(l, "ln1.g"), lw(l, "ln1.b"), a.ln1_out.data(), a.ln1_mean.data(), a.ln1_rstd.data(), n, C);
  timed(&OpSeconds::dense, [&] {
    linear_forward(a.ln1_out.data(), lw(l, "qkv.w"), lw(l, "qkv.b"), a.qkv.data(), n, C, 3 * C);
  });
  timed(&OpSeconds::attention, [&] {
    if (c_.attention == Attention::Fused) {
      fused_attention_forward(a.qkv.data(), a.lse.data(), a.att.data(), c_.batch, c_.seq, C, c_.heads);
    } else {
      attention_forward(a.qkv.data(), a.p.data(), a.att.data(), c_.batch, c_.seq, C, c_.heads);
    }
  });
  timed(&OpSeconds::dense, [&] {
    linear_forward(a.att.data(), lw(l, "proj.w"), lw(l, "proj.b"), a.x_mid.data(), n, C, C);
  });
  residual_add(a.x_mid.data(), x(l), a.x_mid.data(), n * C);
  layernorm_forward(a.x_mid.data(), lw(l, "ln2.g"), lw(l, "ln2.b"), a.ln2_out.data(), a.ln2_mean.data(),
                    a.ln2_rstd.data(), n, C);
  timed(&OpSeconds::dense, [&] {
    linear_forward(a.ln2_out.data(), lw(l, "fc1.w"), lw(l, "fc1.b"), m.h.data(), n, C, F);
  });
  gelu_forward(m.h.data(), m.g.data(), n * F);
  if (stop_before_fc2) return;
  timed(&OpSeconds::dense, [&] {
    linear_forward(m.g.data(), lw(l, "fc2.w"), lw(l, "fc2.b"), x(l + 1), n, F, C);
  });
  residual_add(x(l + 1), a.x_mid.data(), x(l + 1), n * C);
}

// On entry dx_ = dloss/dx_{l+1}; on exit dx_ = dloss/dx_l.
template <class T>
void ReferenceModel<T>::block_backward(std::int64_t l) {
  const std::int64_t n = c_.rows(), C = c_.hidden, F = c_.ffn();
  BlockActs& a = block(l);
  MlpActs& m = mlp(l);
  if (c_.recompute == Recompute::Block) {
    block_forward(l, /*stop_before_fc2=*/true);
  } else if (c_.recompute == Recompute::Mlp) {
    timed(&OpSeconds::dense, [&] {
      linear_forward(a.ln2_out.data(), lw(l, "fc1.w"), lw(l, "fc1.b"), m.h.data(), n, C, F);
    });
    gelu_forward(m.h.data(), m.g.data(), n * F);
  }
  // x_{l+1} = x_mid + fc2(gelu(fc1(LN2(x_mid))))
  timed(&OpSeconds::dense, [&] {
    linear_backward(m.g.data(), lw(l, "fc2.w"), dx_.data(), dh_.data(), ldw(l, "fc2.w"), ldw(l, "fc2.b"), n, F, C);
  });
  tick();
  gelu_backward(m.h.data(), dh_.data(), dh_.data(), n * F);
  timed(&OpSeconds::dense, [&] {
    linear_backward(a.ln2_out.data(), lw(l, "fc1.w"), dh_.data(), dtmp_.data(), ldw(l, "fc1.w"), ldw(l, "fc1.b"), n, C, F);
  });
  tick();
  layernorm_backward(dtmp_.data(), a.x_mid.data(), a.ln2_mean.data(), a.ln2_rstd.data(), lw(l, "ln2.g"), dx_.data(),
                     ldw(l, "ln2.g"), ldw(l, "ln2.b"), n, C);
  // x_mid = x_l + proj(attn(qkv(LN1(x_l))))
  timed(&OpSeconds::dense, [&] {
    linear_backward(a.att.data(), lw(l, "proj.w"), dx_.data(), datt_.data(), ldw(l, "proj.w"), ldw(l, "proj.b"), n, C, C);
  });
  tick();
  timed(&OpSeconds::attention, [&] {
    if (c_.attention == Attention::Fused) {
      fused_attention_backward(datt_.data(), a.qkv.data(), a.att.data(), a.lse.data(), dqkv_.data(), c_.batch, c_.seq,
                               C, c_.heads);
    } else {
      attention_backward(datt_.data(), a.qkv.data(), a.p.data(), dqkv_.data(), dscores_.data(), c_.batch, c_.seq, C,
                         c_.heads);
    }
  });
  tick();
  timed(&OpSeconds::dense, [&] {
    linear_backward(a.ln1_out.data(), lw(l, "qkv.w"), dqkv_.data(), dtmp_.data(), ldw(l, "qkv.w"), ldw(l, "qkv.b"), n, C,
                    3 * C);
  });
  layernorm_backward(dtmp_.data(), x(l), a.ln1_mean.data(), a.ln1_rstd.data(), lw(l, "ln1.g"), dx_.data(),
                     ldw(l, "ln1.g"), ldw(l, "ln1.b"), n, C);
}

template <class T>
double ReferenceModel<T>::forward_transformer(const Batch& b) {
  const std::int64_t n = c_.rows(), C = c_.hidden, V = c_.vocab;
  embedding_forward(b.tokens.data(), w("wte"), w("wpe"), x(0), c_.batch, c_.seq, C);
  for (std::int64_t l = 0; l < c_.layers; ++l) block_forward(l, false);
  layernorm_forward(x(c_.layers), w("lnf.g"), w("lnf.b"), lnf_out_.data(), lnf_mean_.data(), lnf_rstd_.data(), n, C);
  timed(&OpSeconds::dense, [&] {
    gemm<T>(false, true, n, V, C, T(1), lnf_out_.data(), C, w("wte"), C, T(0), logits_.data(), V);  // x wte^T
  });
  return cross_entropy_forward(logits_.data(), b.targets.data(), n, V);
}

template <class T>
void ReferenceModel<T>::backward_transformer(const Batch& b, double grad_scale) {
  const std::int64_t n = c_.rows(), C = c_.hidden, V = c_.vocab;
  T* dlogits = logits_.data();
  cross_entropy_backward(dlogits, b.targets.data(), n, V, grad_scale);
  timed(&OpSeconds::dense, [&] {
    gemm<T>(false, false, n, C, V, T(1), dlogits, V, w("wte"), C, T(0), dtmp_.data(), C);  // dxf = dlogits wte
    gemm<T>(true, false, V, C, n, T(1), dlogits, V, lnf_out_.data(), C, T(1), dw("wte"), C);  // dwte += dlogits^T xf
    watermark_ = layout_.total;  // nothing complete yet
    tick();
  });
  std::fill(dx_.begin(), dx_.end(), T(0));
  layernorm_backward(dtmp_.data(), x(c_.layers), lnf_mean_.data(), lnf_rstd_.data(), w("lnf.g"), dx_.data(),
                     dw("lnf.g"), dw("lnf.b"), n, C);
  ready("lnf.g");
  for (std::int64_t l = c_.layers - 1; l >= 0; --l) {
    block_backward(l);
    ready(l, "ln1.g");
  }
  // wte's gradient (the tied LM head) completes here, with the embedding's.
  embedding_backward(b.tokens.data(), dx_.data(), dw("wte"), dw("wpe"), c_.batch, c_.seq, C);
  if (ready_) ready_(0);
}

template class ReferenceModel<float>;
template class ReferenceModel<double>;

}  // namespace gpubench::kernels::train
