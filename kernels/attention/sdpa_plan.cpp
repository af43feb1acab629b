// The cuDNN SDPA graph as data (sdpa_plan.hpp).
#include "kernels/attention/sdpa_plan.hpp"

#include <cmath>
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

Mask plan_mask(const SdpaPlan& p) {
  if (p.causal_top_left) return Mask::CausalTopLeft;
  return p.causal_bottom_right ? Mask::CausalBottomRight : Mask::None;
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

float fp8_e4m3_scale(double amax) {
  if (!(amax > 0) || !std::isfinite(amax)) throw std::invalid_argument("fp8 scale: amax must be positive and finite");
  // 2^floor(log2(448 / amax)), corrected for log2's rounding at exact powers of two.
  double s = std::exp2(std::floor(std::log2(kE4M3Max / amax)));
  while (amax * s > kE4M3Max) s /= 2;
  while (amax * s * 2 <= kE4M3Max) s *= 2;
  return static_cast<float>(s);
}

Fp8Scales fp8_scales(double amax_q, double amax_k, double amax_v) {
  Fp8Scales f;
  f.q = fp8_e4m3_scale(amax_q);
  f.k = fp8_e4m3_scale(amax_k);
  f.v = fp8_e4m3_scale(amax_v);
  f.s = 256;
  f.o = f.v;
  return f;
}

SdpaPlan sdpa_fp8_forward_plan(const Shape& s, const Fp8Scales& scales) {
  if (s.page_size > 0) throw std::invalid_argument("sdpa fp8 forward: a paged cache is not built for fp8");
  SdpaPlan p = sdpa_forward_plan(s);
  p.fp8 = true;
  if (s.causal && s.seq_q == s.seq_kv) {
    p.causal_bottom_right = false;
    p.causal_top_left = true;
  }
  const std::pair<std::int64_t, float> values[] = {
      {kUidDescaleQ, 1 / scales.q}, {kUidDescaleK, 1 / scales.k}, {kUidDescaleV, 1 / scales.v},
      {kUidDescaleS, 1 / scales.s}, {kUidScaleS, scales.s},        {kUidScaleO, scales.o},
  };
  const char* names[] = {"Descale_Q", "Descale_K", "Descale_V", "Descale_S", "Scale_S", "Scale_O"};
  for (std::size_t i = 0; i < 6; ++i) {
    p.inputs.push_back(dense(names[i], values[i].first, 1, 1, 1, 1, SdpaTensorKind::Float));
    p.scale_values.push_back(values[i]);
  }
  p.outputs.push_back(dense("Amax_S", kUidAmaxS, 1, 1, 1, 1, SdpaTensorKind::Float));
  p.outputs.push_back(dense("Amax_O", kUidAmaxO, 1, 1, 1, 1, SdpaTensorKind::Float));
  return p;
}

std::optional<std::string> fp8_forward_unsupported(int cc_major, int cc_minor, const Shape& s, bool decode,
                                                   bool backward, std::optional<std::size_t> cudnn_version) {
  const auto text = [](auto... parts) {
    std::string out;
    ((out += parts), ...);
    return out;
  };
  const std::string cc = std::to_string(cc_major) + "." + std::to_string(cc_minor);
  if (backward) return std::string("fp8-e4m3 is built for the forward only (cuDNN's fp8 backward is not built in gpubench)");
  if (decode || s.page_size > 0) {
    return std::string("fp8-e4m3 is built for the prefill forward only (no fp8 decode over a KV cache in gpubench)");
  }
  if (cc_major < 9) {
    return text("compute capability ", cc, ": cuDNN's fp8 attention forward needs Hopper (sm_90) or newer");
  }
  const std::int64_t d = s.head_dim;
  if (d % 16 != 0) return text("head_dim=", std::to_string(d), ": cuDNN's fp8 attention takes multiples of 16");
  if (cc_major == 9 && d > 256) {
    return text("head_dim=", std::to_string(d), ": cuDNN's fp8 attention on Hopper takes up to 256");
  }
  const bool bottom_right = s.causal && s.seq_q != s.seq_kv;
  if (bottom_right && cc_major < 10) {
    return text("causal with seq_q != seq_kv (a bottom-right mask): cuDNN's fp8 forward has it on Blackwell (sm_100) "
                "only, not on compute capability ",
                cc);
  }
  if (cudnn_version) {
    const std::size_t v = *cudnn_version;
    const std::string loaded = std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
    if (v < 90100) return text("cuDNN's fp8 attention forward needs cuDNN 9.1.0 or newer (loaded: ", loaded, ")");
    if (v == 91000) return std::string("cuDNN 9.10.0's fp8 attention forward is turned off by the cuDNN frontend (use 9.10.1 or newer)");
    if (bottom_right && v < 90700) {
      return text("a bottom-right causal mask in fp8 needs cuDNN 9.7.0 or newer (loaded: ", loaded, ")");
    }
    if (cc_major >= 10 && d > 128 && !(d == 256 && v >= 92600)) {
      return text("head_dim=", std::to_string(d), ": cuDNN's fp8 attention on Blackwell takes up to 128 (256 from cuDNN 9.26; loaded: ",
                  loaded, ")");
    }
  } else if (cc_major >= 10 && d > 128 && d != 256) {
    return text("head_dim=", std::to_string(d), ": cuDNN's fp8 attention on Blackwell takes up to 128 (or 256 with cuDNN 9.26+)");
  }
  return std::nullopt;
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
