// The cuDNN SDPA graph as data (sdpa_plan.hpp).
#include "kernels/attention/sdpa_plan.hpp"

#include <stdexcept>

namespace gpubench::kernels::attention {
namespace {

// Dense row-major strides of a 4-d tensor.
SdpaTensor dense(std::string name, std::int64_t uid, std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d,
                 SdpaTensorKind kind = SdpaTensorKind::Io) {
  return {std::move(name), uid, {a, b, c, d}, {b * c * d, c * d, d, 1}, kind};
}

}  // namespace

std::int64_t SdpaTensor::elements() const {
  std::int64_t n = 1;
  for (std::int64_t v : dim) n *= v;
  return n;
}

const SdpaTensor& SdpaPlan::tensor(std::int64_t uid) const {
  for (const auto* list : {&inputs, &outputs}) {
    for (const SdpaTensor& t : *list) {
      if (t.uid == uid) return t;
    }
  }
  throw std::out_of_range("sdpa plan: no tensor with uid " + std::to_string(uid));
}

SdpaPlan sdpa_forward_plan(const Shape& s) {
  SdpaPlan p;
  p.attn_scale = static_cast<float>(s.scale());
  p.causal_bottom_right = s.causal;
  p.inputs.push_back(dense("Q", kUidQ, s.batch, s.heads, s.seq_q, s.head_dim));
  if (s.page_size > 0) {
    const std::int64_t pages = s.batch * s.pages_per_sequence();
    p.paged = true;
    p.max_seq_len_kv = s.seq_kv;
    p.inputs.push_back(dense("container_K", kUidK, pages, s.kv_heads, s.page_size, s.head_dim));
    p.inputs.push_back(dense("container_V", kUidV, pages, s.kv_heads, s.page_size, s.head_dim));
    p.inputs.push_back(dense("page_table_K", kUidPageTableK, s.batch, 1, s.pages_per_sequence(), 1, SdpaTensorKind::Int32));
    p.inputs.push_back(dense("page_table_V", kUidPageTableV, s.batch, 1, s.pages_per_sequence(), 1, SdpaTensorKind::Int32));
    p.inputs.push_back(dense("seq_len_Q", kUidSeqQ, s.batch, 1, 1, 1, SdpaTensorKind::Int32));
    p.inputs.push_back(dense("seq_len_KV", kUidSeqKv, s.batch, 1, 1, 1, SdpaTensorKind::Int32));
  } else {
    p.inputs.push_back(dense("K", kUidK, s.batch, s.kv_heads, s.seq_kv, s.head_dim));
    p.inputs.push_back(dense("V", kUidV, s.batch, s.kv_heads, s.seq_kv, s.head_dim));
  }
  p.outputs.push_back(dense("O", kUidO, s.batch, s.heads, s.seq_q, s.head_dim));
  p.outputs.push_back(dense("Stats", kUidStats, s.batch, s.heads, s.seq_q, 1, SdpaTensorKind::Float));
  return p;
}

SdpaPlan sdpa_backward_plan(const Shape& s) {
  if (s.page_size > 0) throw std::invalid_argument("sdpa backward: a paged cache has no backward");
  SdpaPlan p;
  p.backward = true;
  p.attn_scale = static_cast<float>(s.scale());
  p.causal_bottom_right = s.causal;
  p.inputs = {dense("Q", kUidQ, s.batch, s.heads, s.seq_q, s.head_dim),
              dense("K", kUidK, s.batch, s.kv_heads, s.seq_kv, s.head_dim),
              dense("V", kUidV, s.batch, s.kv_heads, s.seq_kv, s.head_dim),
              dense("O", kUidO, s.batch, s.heads, s.seq_q, s.head_dim),
              dense("dO", kUidDO, s.batch, s.heads, s.seq_q, s.head_dim),
              dense("Stats", kUidStats, s.batch, s.heads, s.seq_q, 1, SdpaTensorKind::Float)};
  p.outputs = {dense("dQ", kUidDQ, s.batch, s.heads, s.seq_q, s.head_dim),
               dense("dK", kUidDK, s.batch, s.kv_heads, s.seq_kv, s.head_dim),
               dense("dV", kUidDV, s.batch, s.kv_heads, s.seq_kv, s.head_dim)};
  return p;
}

}  // namespace gpubench::kernels::attention
