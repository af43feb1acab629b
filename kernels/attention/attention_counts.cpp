// The attention shapes' arithmetic (attention_counts.hpp, attention_host.hpp): masks, FLOP and
// byte counts. No BLAS, so planning code (and the fuzz build) can use it without the kernels.
#include "kernels/attention/attention_counts.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/attention/attention_host.hpp"

namespace gpubench::kernels::attention {

std::int64_t visible_keys(std::int64_t i, std::int64_t seq_q, std::int64_t seq_kv, Mask mask) {
  if (seq_kv <= 0) return 0;
  switch (mask) {
    case Mask::None: return seq_kv;
    case Mask::CausalBottomRight: return std::clamp<std::int64_t>(i + 1 + seq_kv - seq_q, 0, seq_kv);
    case Mask::CausalTopLeft: return std::clamp<std::int64_t>(i + 1, 0, seq_kv);
  }
  return 0;
}

std::int64_t admitted_pairs(std::int64_t seq_q, std::int64_t seq_kv, Mask mask) {
  if (seq_q <= 0 || seq_kv <= 0) return 0;
  const std::int64_t m = std::min(seq_q, seq_kv), triangle = m * (m + 1) / 2;
  switch (mask) {
    case Mask::None: return seq_q * seq_kv;
    case Mask::CausalBottomRight: return triangle + m * (seq_kv - m);  // rows before the last m see nothing
    case Mask::CausalTopLeft: return triangle + (seq_q - m) * seq_kv;  // rows past the first m see every key
  }
  return 0;
}

double attention_forward_flops(std::int64_t batch_heads, std::int64_t seq_q, std::int64_t seq_kv, std::int64_t head_dim,
                               std::int64_t head_dim_v, Mask mask) {
  return 2.0 * static_cast<double>(head_dim + head_dim_v) * static_cast<double>(admitted_pairs(seq_q, seq_kv, mask)) *
         static_cast<double>(batch_heads);
}

double attention_backward_flops(std::int64_t batch_heads, std::int64_t seq_q, std::int64_t seq_kv, std::int64_t head_dim,
                                std::int64_t head_dim_v, Mask mask) {
  return 2.5 * attention_forward_flops(batch_heads, seq_q, seq_kv, head_dim, head_dim_v, mask);
}

double attention_backward_flops_kept_p(std::int64_t batch_heads, std::int64_t seq_q, std::int64_t seq_kv,
                                       std::int64_t head_dim, std::int64_t head_dim_v, Mask mask) {
  return 2.0 * attention_forward_flops(batch_heads, seq_q, seq_kv, head_dim, head_dim_v, mask);
}

double attention_decode_flops(std::int64_t batch_heads, std::int64_t seq_kv, std::int64_t head_dim, std::int64_t head_dim_v) {
  return attention_forward_flops(batch_heads, 1, seq_kv, head_dim, head_dim_v, Mask::None);
}

std::int64_t Shape::visible_keys(std::int64_t i) const { return attention::visible_keys(i, seq_q, seq_kv, mask()); }

double Shape::scale() const { return 1.0 / std::sqrt(static_cast<double>(head_dim)); }

Shape Unit::shape() const {
  Shape s;
  s.heads = group;
  s.seq_q = seq_q;
  s.seq_kv = seq_kv;
  s.head_dim = head_dim;
  s.causal = causal;
  return s;
}

double forward_flops(const Shape& s, Mask mask) {
  return attention_forward_flops(s.batch * s.heads, s.seq_q, s.seq_kv, s.head_dim, s.head_dim, mask);
}
double forward_flops(const Shape& s) { return forward_flops(s, s.mask()); }

double backward_flops(const Shape& s, Mask mask) {
  return attention_backward_flops(s.batch * s.heads, s.seq_q, s.seq_kv, s.head_dim, s.head_dim, mask);
}
double backward_flops(const Shape& s) { return backward_flops(s, s.mask()); }

double decode_bytes(const Shape& s, int element_bytes) {
  const double e = element_bytes;
  const double kv = 2.0 * static_cast<double>(s.kv_elements()) * e;
  const double qo = 2.0 * static_cast<double>(s.batch * s.heads * s.seq_q * s.head_dim) * e;
  const double table = s.page_size > 0 ? static_cast<double>(s.batch * s.pages_per_sequence()) * 4 : 0;
  return kv + qo + table;
}

}  // namespace gpubench::kernels::attention
