// The attention shapes' arithmetic (attention_host.hpp): masks, FLOP and byte counts. No BLAS,
// so planning code (and the fuzz build) can use it without the kernels.
#include <algorithm>
#include <cmath>

#include "kernels/attention/attention_host.hpp"

namespace gpubench::kernels::attention {

std::int64_t Shape::visible_keys(std::int64_t i) const {
  if (!causal) return seq_kv;
  return std::clamp<std::int64_t>(i + 1 + seq_kv - seq_q, 0, seq_kv);
}

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

double forward_flops(const Shape& s) {
  const double f = 2.0 * static_cast<double>(s.batch) * static_cast<double>(s.heads) * static_cast<double>(s.seq_q) *
                   static_cast<double>(s.seq_kv) * static_cast<double>(2 * s.head_dim);
  return s.causal ? f / 2 : f;
}

double backward_flops(const Shape& s) { return 2.5 * forward_flops(s); }

double decode_bytes(const Shape& s, int element_bytes) {
  const double e = element_bytes;
  const double kv = 2.0 * static_cast<double>(s.kv_elements()) * e;
  const double qo = 2.0 * static_cast<double>(s.batch * s.heads * s.seq_q * s.head_dim) * e;
  const double table = s.page_size > 0 ? static_cast<double>(s.batch * s.pages_per_sequence()) * 4 : 0;
  return kv + qo + table;
}

}  // namespace gpubench::kernels::attention
