#include "kernels/train/model_config.hpp"

#include <stdexcept>

#include "kernels/attention/attention_counts.hpp"

namespace gpubench::kernels::train {

std::optional<std::string> config_error(const ModelConfig& c) {
  auto positive = [](const char* name, std::int64_t v) -> std::optional<std::string> {
    if (v <= 0) return std::string(name) + " must be at least 1 (got " + std::to_string(v) + ")";
    return std::nullopt;
  };
  for (auto [name, v] : {std::pair{"layers", c.layers}, {"hidden", c.hidden}, {"micro_batch", c.batch},
                         {"vocab", c.vocab}, {"accum", c.accum}}) {
    if (auto e = positive(name, v)) return e;
  }
  if (c.kind == ModelKind::Transformer) {
    for (auto [name, v] : {std::pair{"heads", c.heads}, {"ffn_mult", c.ffn_mult}, {"seq", c.seq}}) {
      if (auto e = positive(name, v)) return e;
    }
    if (c.hidden % c.heads != 0) {
      return "heads (" + std::to_string(c.heads) + ") must divide hidden (" + std::to_string(c.hidden) + ")";
    }
  } else if (c.vocab < 2) {
    return "vocab (classes of the mlp) must be at least 2";
  }
  return std::nullopt;
}

std::string to_string(ModelKind k) { return k == ModelKind::Mlp ? "mlp" : "transformer"; }

std::string to_string(Recompute r) {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Mlp: return "mlp";
    case Recompute::Block: return "block";
  }
  return "";
}

std::optional<ModelKind> parse_model(const std::string& s) {
  if (s == "mlp") return ModelKind::Mlp;
  if (s == "transformer") return ModelKind::Transformer;
  return std::nullopt;
}

std::optional<Recompute> parse_recompute(const std::string& s) {
  if (s == "none") return Recompute::None;
  if (s == "mlp") return Recompute::Mlp;
  if (s == "block") return Recompute::Block;
  return std::nullopt;
}

std::string to_string(Attention a) { return a == Attention::Fused ? "fused" : "unfused"; }

std::optional<Attention> parse_attention(const std::string& s) {
  if (s == "unfused") return Attention::Unfused;
  if (s == "fused") return Attention::Fused;
  return std::nullopt;
}

const ParamTensor& ParamLayout::at(const std::string& name) const {
  for (const ParamTensor& t : tensors) {
    if (t.name == name) return t;
  }
  throw std::out_of_range("no parameter tensor " + name);
}

namespace names {
std::string layer(std::int64_t l, const char* what) {
  std::string s = "h";  // appended piecewise: GCC 12 warns (-Wrestrict) on "h" + std::string
  s += std::to_string(l);
  s += '.';
  s += what;
  return s;
}
}  // namespace names

ParamLayout param_layout(const ModelConfig& c) {
  ParamLayout p;
  auto add = [&](std::string name, std::int64_t rows, std::int64_t cols) {
    p.total = (p.total + kParamAlign - 1) / kParamAlign * kParamAlign;
    p.tensors.push_back({std::move(name), p.total, rows * cols, rows, cols});
    p.total += rows * cols;
    p.count += rows * cols;
  };
  const std::int64_t C = c.hidden, V = c.vocab;
  if (c.kind == ModelKind::Mlp) {
    for (std::int64_t l = 0; l < c.layers; ++l) {
      add(names::layer(l, "fc.w"), C, C);
      add(names::layer(l, "fc.b"), C, 1);
    }
    add("head.w", C, V);
    add("head.b", V, 1);
    return p;
  }
  const std::int64_t F = c.ffn();
  add("wte", V, C);
  add("wpe", c.seq, C);
  for (std::int64_t l = 0; l < c.layers; ++l) {
    add(names::layer(l, "ln1.g"), C, 1);
    add(names::layer(l, "ln1.b"), C, 1);
    add(names::layer(l, "qkv.w"), C, 3 * C);
    add(names::layer(l, "qkv.b"), 3 * C, 1);
    add(names::layer(l, "proj.w"), C, C);
    add(names::layer(l, "proj.b"), C, 1);
    add(names::layer(l, "ln2.g"), C, 1);
    add(names::layer(l, "ln2.b"), C, 1);
    add(names::layer(l, "fc1.w"), C, F);
    add(names::layer(l, "fc1.b"), F, 1);
    add(names::layer(l, "fc2.w"), F, C);
    add(names::layer(l, "fc2.b"), C, 1);
  }
  add("lnf.g", C, 1);
  add("lnf.b", C, 1);
  return p;
}

double matmul_params(const ModelConfig& c) {
  const double C = static_cast<double>(c.hidden), V = static_cast<double>(c.vocab), L = static_cast<double>(c.layers);
  if (c.kind == ModelKind::Mlp) return L * C * C + C * V;
  const double F = static_cast<double>(c.ffn());
  return L * (3 * C * C + C * C + 2 * C * F) + V * C;
}

StepFlops step_flops(const ModelConfig& c) {
  const double R = static_cast<double>(c.accum) * static_cast<double>(c.rows());
  const double C = static_cast<double>(c.hidden), L = static_cast<double>(c.layers);
  StepFlops f;
  f.model = 6 * matmul_params(c) * R;
  if (c.kind == ModelKind::Mlp) {
    f.model -= 2 * R * C * C;
    f.hardware = f.model;  // the mlp model has no recompute
    return f;
  }
  const double F = static_cast<double>(c.ffn());
  // Attention per layer over the step's accum * batch sequences of T tokens, each head d = C / H
  // wide (attention_counts.hpp). The model's work is the causal pairs (T (T + 1) / 2 per head),
  // forward and a backward of twice the forward. What runs: unfused, the batched GEMMs compute
  // every one of the T x T scores (forward S and P V, backward dV, dP, dQ, dK over the kept P);
  // fused, the tiled kernels (the CPU's, cuDNN's) skip the masked tiles and the backward
  // recomputes S (2.5 x its forward).
  namespace ka = kernels::attention;
  const std::int64_t seqs = c.accum * c.batch, d = c.hidden / c.heads;
  const auto forward = [&](ka::Mask m) { return ka::attention_forward_flops(seqs * c.heads, c.seq, c.seq, d, d, m); };
  const double causal = forward(ka::Mask::CausalBottomRight), full = forward(ka::Mask::None);
  const double dense = f.model;
  f.model = dense + L * 3 * causal;
  const bool fused = c.attention == Attention::Fused;
  const double run_forward = fused ? causal : full;
  const double run_backward = fused ? ka::attention_backward_flops(seqs * c.heads, c.seq, c.seq, d, d, ka::Mask::CausalBottomRight)
                                    : ka::attention_backward_flops_kept_p(seqs * c.heads, c.seq, c.seq, d, d, ka::Mask::None);
  f.hardware = dense + L * (run_forward + run_backward);
  switch (c.recompute) {
    case Recompute::None: break;
    case Recompute::Mlp: f.hardware += L * 2 * R * C * F; break;  // fc1 again
    case Recompute::Block:  // everything up to fc2 (whose output backward does not need), attention's forward too
      f.hardware += L * (2 * R * (3 * C * C + C * C + C * F) + run_forward);
      break;
  }
  return f;
}

std::vector<std::size_t> backward_stages(const ModelConfig& c) {
  const ParamLayout layout = param_layout(c);
  auto index = [&](const std::string& name) {
    const ParamTensor& t = layout.at(name);
    return static_cast<std::size_t>(&t - layout.tensors.data());
  };
  std::vector<std::size_t> stages;
  if (c.kind == ModelKind::Mlp) {
    stages.push_back(index("head.w"));
    for (std::int64_t l = c.layers - 1; l >= 0; --l) stages.push_back(index(names::layer(l, "fc.w")));
    return stages;
  }
  stages.push_back(index("lnf.g"));
  for (std::int64_t l = c.layers - 1; l >= 0; --l) stages.push_back(index(names::layer(l, "ln1.g")));
  stages.push_back(0);  // the embedding backward: wte and wpe
  return stages;
}

std::vector<std::pair<std::int64_t, std::int64_t>> linear_shapes(const ModelConfig& c) {
  const std::int64_t C = c.hidden;
  if (c.kind == ModelKind::Mlp) return {{C, C}, {C, c.vocab}};
  return {{C, 3 * C}, {C, C}, {C, c.ffn()}, {c.ffn(), C}};
}

std::optional<std::string> fp8_dims_error(const ModelConfig& c) {
  auto bad = [](std::int64_t v) { return v % 16 != 0; };
  const std::int64_t n = c.rows();
  if (bad(n)) {
    return "precision=fp8: the rows of a micro-batch (" + std::to_string(n) +
           (c.kind == ModelKind::Transformer ? ", micro_batch x seq" : ", micro_batch") +
           ") must be a multiple of 16 (cuBLASLt's fp8 GEMMs take 16-byte leading dimensions)";
  }
  for (const auto& [in, out] : linear_shapes(c)) {
    if (bad(in) || bad(out)) {
      return "precision=fp8: a linear layer of " + std::to_string(in) + " x " + std::to_string(out) +
             " is not a multiple of 16 in both dimensions (cuBLASLt's fp8 GEMMs take 16-byte leading dimensions)";
    }
  }
  return std::nullopt;
}

}  // namespace gpubench::kernels::train
