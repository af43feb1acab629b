// The infer model's configurations and counts (model.hpp): plain arithmetic, no BLAS, so the
// planner (and the fuzz build, which has no OpenBLAS) can use them.
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/attention/attention_counts.hpp"
#include "kernels/infer/model.hpp"

namespace gpubench::kernels::infer {

// ---- Configurations ----

std::vector<std::string> model_names() { return {"gpt-small", "gpt2-124m", "llama-small", "llama3-8b", "llama3-70b"}; }

std::optional<ModelSpec> named_model(const std::string& name) {
  ModelSpec s;
  s.name = name;
  if (name == "gpt-small") {
    // CPU-sized GPT-2 style: ~17M weights, 68 MB in fp32 (twice a 32 MiB L3).
    s.arch = Arch::Gpt;
    s.layers = 4, s.hidden = 512, s.heads = 8, s.kv_heads = 8, s.ffn = 2048, s.vocab = 8192, s.max_positions = 4096;
  } else if (name == "gpt2-124m") {
    // GPT-2 small (Radford et al. 2019; Hugging Face gpt2 config.json: n_layer 12, n_embd 768,
    // n_head 12, n_positions 1024, vocab 50257).
    s.arch = Arch::Gpt;
    s.layers = 12, s.hidden = 768, s.heads = 12, s.kv_heads = 12, s.ffn = 3072, s.vocab = 50257, s.max_positions = 1024;
  } else if (name == "llama-small") {
    // CPU-sized Llama: grouped-query attention 8:2, ~16M weights, 65 MB in fp32.
    s.arch = Arch::Llama;
    s.layers = 4, s.hidden = 512, s.heads = 8, s.kv_heads = 2, s.ffn = 1536, s.vocab = 8192;
  } else if (name == "llama3-8b") {
    // Meta Llama 3 8B (config.json: hidden_size 4096, num_hidden_layers 32, num_attention_heads
    // 32, num_key_value_heads 8, intermediate_size 14336, vocab_size 128256, rope_theta 500000).
    s.arch = Arch::Llama;
    s.layers = 32, s.hidden = 4096, s.heads = 32, s.kv_heads = 8, s.ffn = 14336, s.vocab = 128256;
    s.rope_theta = 500000;
  } else if (name == "llama3-70b") {
    // Meta Llama 3 70B (config.json: hidden_size 8192, num_hidden_layers 80, num_attention_heads
    // 64, num_key_value_heads 8, intermediate_size 28672, vocab_size 128256, rope_theta 500000).
    s.arch = Arch::Llama;
    s.layers = 80, s.hidden = 8192, s.heads = 64, s.kv_heads = 8, s.ffn = 28672, s.vocab = 128256;
    s.rope_theta = 500000;
  } else {
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> spec_error(const ModelSpec& s) {
  auto str = [](idx v) { return std::to_string(v); };
  for (auto [what, v] : {std::pair{"layers", s.layers}, {"hidden", s.hidden}, {"heads", s.heads},
                         {"kv_heads", s.kv_heads}, {"ffn", s.ffn}, {"vocab", s.vocab}, {"tp", s.tp}}) {
    if (v < 1) return std::string(what) + " must be at least 1 (got " + str(v) + ")";
  }
  if (s.hidden % s.heads != 0) return "heads=" + str(s.heads) + " does not divide hidden=" + str(s.hidden);
  if (s.heads % s.kv_heads != 0) return "kv_heads=" + str(s.kv_heads) + " does not divide heads=" + str(s.heads);
  if (s.arch == Arch::Llama && s.head_dim() % 2 != 0) return "rotary embeddings need an even head dimension";
  for (auto [what, v] : {std::pair{"heads", s.heads}, {"kv_heads", s.kv_heads}, {"ffn", s.ffn}, {"vocab", s.vocab}}) {
    if (v % s.tp != 0) return "tp=" + str(s.tp) + " does not divide " + what + "=" + str(v) + " of " + s.name;
  }
  if (s.arch == Arch::Gpt && s.tp != 1) return s.name + " has no tensor-parallel shard here (tp is for the llama models)";
  return std::nullopt;
}

// ---- Counts ----

double layer_weight_elements(const ModelSpec& s) {
  const double c = static_cast<double>(s.hidden), qkv = static_cast<double>(s.qkv_dim()),
               q = static_cast<double>(s.q_dim()), f = static_cast<double>(s.ffn_shard());
  if (s.arch == Arch::Gpt) return 4 * c + c * qkv + qkv + q * c + c + c * f + f + f * c + c;
  return 2 * c + c * qkv + q * c + 3 * c * f;
}

double matmul_weight_elements(const ModelSpec& s) {
  const double c = static_cast<double>(s.hidden);
  return static_cast<double>(s.layers) * layer_weight_elements(s) + (s.arch == Arch::Gpt ? 2 * c : c) +
         c * static_cast<double>(s.vocab_shard());
}

double embedding_elements(const ModelSpec& s) {
  return static_cast<double>(s.vocab + (s.arch == Arch::Gpt ? s.max_positions : 0)) * static_cast<double>(s.hidden);
}

double kv_elements_per_token(const ModelSpec& s) { return 2.0 * static_cast<double>(s.layers * s.kv_dim()); }

double decode_step_elements(const ModelSpec& s, idx batch, idx context) {
  const double kv = kv_elements_per_token(s), b = static_cast<double>(batch);
  return matmul_weight_elements(s) + b * static_cast<double>(context) * kv + b * kv + b * static_cast<double>(s.hidden);
}

double linear_weight_elements(const ModelSpec& s) {
  const double c = static_cast<double>(s.hidden), f = static_cast<double>(s.ffn_shard());
  const double mlp = (s.arch == Arch::Gpt ? 2 : 3) * c * f;
  return static_cast<double>(s.layers) * (c * static_cast<double>(s.qkv_dim()) + static_cast<double>(s.q_dim()) * c + mlp);
}

bool is_linear_weight(const std::string& name) {
  const auto dot = name.rfind('.');
  const std::string what = dot == std::string::npos ? name : name.substr(dot + 1);
  return what == "wqkv" || what == "wo" || what == "wgu" || what == "wd" || what == "w1" || what == "w2";
}

std::optional<std::string> fp8_dims_error(const ModelSpec& s) {
  const std::pair<const char*, idx> dims[] = {{"hidden", s.hidden},
                                              {"the shard's q|k|v width", s.qkv_dim()},
                                              {"the shard's attention width", s.q_dim()},
                                              {"the shard's FFN width", s.ffn_shard()}};
  for (const auto& [what, v] : dims) {
    if (v % 16 != 0) {
      return "dtype=fp8: " + std::string(what) + " (" + std::to_string(v) +
             ") is not a multiple of 16 (cuBLASLt's fp8 GEMMs take 16-byte leading dimensions)";
    }
  }
  return std::nullopt;
}

double matmul_weight_bytes(const ModelSpec& s, double element_bytes, double linear_bytes) {
  return matmul_weight_elements(s) * element_bytes - linear_weight_elements(s) * (element_bytes - linear_bytes);
}

double decode_step_bytes(const ModelSpec& s, idx batch, idx context, double element_bytes, double linear_bytes) {
  return decode_step_elements(s, batch, context) * element_bytes -
         linear_weight_elements(s) * (element_bytes - linear_bytes);
}

double forward_flops(const ModelSpec& s, idx cached, idx new_tokens) {
  const double c = static_cast<double>(s.hidden), f = static_cast<double>(s.ffn_shard()), n = static_cast<double>(new_tokens);
  const double mlp = (s.arch == Arch::Gpt ? 2 : 3) * c * f;
  const double dense = c * static_cast<double>(s.qkv_dim()) + static_cast<double>(s.q_dim()) * c + mlp;
  // new_tokens queries over cached + new_tokens keys, the causal mask aligned bottom-right.
  const double pairs = static_cast<double>(
      kernels::attention::admitted_pairs(new_tokens, cached + new_tokens, kernels::attention::Mask::CausalBottomRight));
  const double layers = static_cast<double>(s.layers);
  return 2 * n * layers * dense + 4 * layers * static_cast<double>(s.q_dim()) * pairs +
         2 * c * static_cast<double>(s.vocab_shard());
}

// The weights in the order every engine holds them (one buffer, offsets in elements).
const Tensor& Layout::at(const std::string& name) const {
  for (const Tensor& t : tensors)
    if (t.name == name) return t;
  throw std::out_of_range("infer model: no tensor " + name);
}

std::string layer_tensor(idx layer, const char* what) {
  std::string name = "l";
  name += std::to_string(layer);
  name += '.';
  name += what;
  return name;
}

Layout layout(const ModelSpec& s) {
  Layout l;
  auto add = [&](std::string name, idx rows, idx cols) {
    l.tensors.push_back({std::move(name), l.total, rows, cols});
    l.total += rows * cols;
  };
  const idx c = s.hidden, f = s.ffn_shard();
  const bool gpt = s.arch == Arch::Gpt;
  add("wte", s.vocab, c);
  if (gpt) add("wpe", s.max_positions, c);
  for (idx i = 0; i < s.layers; ++i) {
    add(layer_tensor(i, "norm1.g"), c, 1);
    if (gpt) add(layer_tensor(i, "norm1.b"), c, 1);
    add(layer_tensor(i, "wqkv"), c, s.qkv_dim());
    if (gpt) add(layer_tensor(i, "bqkv"), s.qkv_dim(), 1);
    add(layer_tensor(i, "wo"), s.q_dim(), c);
    if (gpt) add(layer_tensor(i, "bo"), c, 1);
    add(layer_tensor(i, "norm2.g"), c, 1);
    if (gpt) add(layer_tensor(i, "norm2.b"), c, 1);
    if (gpt) {
      add(layer_tensor(i, "w1"), c, f);
      add(layer_tensor(i, "b1"), f, 1);
      add(layer_tensor(i, "w2"), f, c);
      add(layer_tensor(i, "b2"), c, 1);
    } else {
      add(layer_tensor(i, "wgu"), c, 2 * f);  // gate | up
      add(layer_tensor(i, "wd"), f, c);
    }
  }
  add("normf.g", c, 1);
  if (gpt) add("normf.b", c, 1);
  if (!gpt) add("wlm", c, s.vocab_shard());  // gpt: tied to wte's first vocab_shard rows
  return l;
}

}  // namespace gpubench::kernels::infer
