// The train model's fused attention (ops_reference.hpp): each head's q, k, v gathered out of the
// qkv rows [B*T, 3C] into [T x d] blocks, the kernels of kernels/attention run on them (causal,
// one query head per KV head), the results scattered back. The copies are O(B*T*C); the
// attention itself O(B*H*T*T*d).
#include <vector>

#include "kernels/attention/attention_host.hpp"
#include "kernels/train/ops_reference.hpp"

namespace gpubench::kernels::train {
namespace {

namespace ka = kernels::attention;

// Copies head h's columns of `rows` ([t x stride], head block at column offset) into [t x d].
template <class T>
void gather(const T* rows, idx stride, idx t, idx d, T* out) {
  for (idx i = 0; i < t; ++i)
    for (idx j = 0; j < d; ++j) out[i * d + j] = rows[i * stride + j];
}
template <class T>
void scatter(const T* block, idx stride, idx t, idx d, T* rows) {
  for (idx i = 0; i < t; ++i)
    for (idx j = 0; j < d; ++j) rows[i * stride + j] = block[i * d + j];
}

void forward_head(const ka::Unit& u, const float* q, const float* k, const float* v, float* o, float* lse) {
  ka::flash_forward_rows(u, q, k, v, o, lse, 0, u.seq_q);
}
void forward_head(const ka::Unit& u, const double* q, const double* k, const double* v, double* o, double* lse) {
  ka::naive_forward(u, q, k, v, o, lse);
}
void backward_head(const ka::Unit& u, const float* q, const float* k, const float* v, const float* o, const float* lse,
                   const float* dout, float* dq, float* dk, float* dv) {
  ka::flash_backward(u, q, k, v, o, lse, dout, dq, dk, dv);
}
void backward_head(const ka::Unit& u, const double* q, const double* k, const double* v, const double* o,
                   const double* lse, const double* dout, double* dq, double* dk, double* dv) {
  ka::naive_backward(u, q, k, v, o, lse, dout, dq, dk, dv);
}

}  // namespace

template <class T>
void fused_attention_forward(const T* qkv, T* lse, T* out, idx batch, idx t, idx c, idx heads) {
  const idx d = c / heads;
  const ka::Unit u{1, t, t, d, true};
  std::vector<T> q(static_cast<std::size_t>(t * d)), k(q.size()), v(q.size()), o(q.size());
  for (idx b = 0; b < batch; ++b) {
    for (idx h = 0; h < heads; ++h) {
      const T* base = qkv + b * t * 3 * c + h * d;
      gather(base, 3 * c, t, d, q.data());
      gather(base + c, 3 * c, t, d, k.data());
      gather(base + 2 * c, 3 * c, t, d, v.data());
      forward_head(u, q.data(), k.data(), v.data(), o.data(), lse + (b * heads + h) * t);
      scatter(o.data(), c, t, d, out + b * t * c + h * d);
    }
  }
}

template <class T>
void fused_attention_backward(const T* dout, const T* qkv, const T* out, const T* lse, T* dqkv, idx batch, idx t,
                              idx c, idx heads) {
  const idx d = c / heads;
  const ka::Unit u{1, t, t, d, true};
  const auto n = static_cast<std::size_t>(t * d);
  std::vector<T> q(n), k(n), v(n), o(n), dO(n), dq(n), dk(n), dv(n);
  for (idx b = 0; b < batch; ++b) {
    for (idx h = 0; h < heads; ++h) {
      const idx at = b * t * 3 * c + h * d, row = b * t * c + h * d;
      gather(qkv + at, 3 * c, t, d, q.data());
      gather(qkv + at + c, 3 * c, t, d, k.data());
      gather(qkv + at + 2 * c, 3 * c, t, d, v.data());
      gather(out + row, c, t, d, o.data());
      gather(dout + row, c, t, d, dO.data());
      backward_head(u, q.data(), k.data(), v.data(), o.data(), lse + (b * heads + h) * t, dO.data(), dq.data(),
                    dk.data(), dv.data());
      scatter(dq.data(), 3 * c, t, d, dqkv + at);
      scatter(dk.data(), 3 * c, t, d, dqkv + at + c);
      scatter(dv.data(), 3 * c, t, d, dqkv + at + 2 * c);
    }
  }
}

template void fused_attention_forward<float>(const float*, float*, float*, idx, idx, idx, idx);
template void fused_attention_forward<double>(const double*, double*, double*, idx, idx, idx, idx);
template void fused_attention_backward<float>(const float*, const float*, const float*, const float*, float*, idx, idx,
                                              idx, idx);
template void fused_attention_backward<double>(const double*, const double*, const double*, const double*, double*, idx,
                                               idx, idx, idx);

}  // namespace gpubench::kernels::train
