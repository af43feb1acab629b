#pragma once
// The two models the `train` suite trains, their parameter layout and their FLOP count.
// Host-only, no harness dependency: the CPU reference, the GPU path and the tests share it.
//
// mlp:          x[B, C] -> L x (Linear C->C, GELU) -> Linear C->V -> softmax cross-entropy
//               over V classes. One sample = one row of x.
// transformer:  GPT-2 style decoder. tokens[B, T] -> wte[token] + wpe[position]
//               -> L x { x += proj(attn(LN1(x))); x += fc2(GELU(fc1(LN2(x)))) }
//               -> LN_f -> logits = x wte^T (LM head tied to the token embedding, as GPT-2)
//               -> softmax cross-entropy against the next-token targets. One token = one
//               position of one sequence.
// Weights are row-major [in, out] and a linear layer is Y = X W + b.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpubench::kernels::train {

enum class ModelKind { Mlp, Transformer };
// Activation recompute: what backward recomputes instead of keeping from forward.
//   None  keeps every activation; Mlp recomputes fc1 and GELU of each block (from the stored
//   LN2 output); Block keeps only each block's input and reruns the whole block forward.
enum class Recompute { None, Mlp, Block };
// How a transformer block computes attention: unfused materialises each head's [T x T]
// probabilities (kept for the backward); fused runs the tiled kernel of kernels/attention and
// keeps each row's log-sum-exp instead (the backward recomputes the probabilities tile by tile).
enum class Attention { Unfused, Fused };

struct ModelConfig {
  ModelKind kind = ModelKind::Transformer;
  std::int64_t layers = 2;
  std::int64_t hidden = 64;   // C
  std::int64_t heads = 4;     // H (transformer)
  std::int64_t ffn_mult = 4;  // F = ffn_mult * C (transformer)
  std::int64_t seq = 32;      // T (transformer)
  std::int64_t batch = 2;     // micro-batch B
  std::int64_t vocab = 256;   // V: vocabulary (transformer) or classes (mlp)
  std::int64_t accum = 1;     // micro-steps per optimizer step
  Recompute recompute = Recompute::None;
  Attention attention = Attention::Unfused;  // transformer

  std::int64_t ffn() const { return ffn_mult * hidden; }
  std::int64_t head_dim() const { return hidden / heads; }
  // Rows through the matmuls per micro-step: B*T tokens, or B samples for the mlp.
  std::int64_t rows() const { return kind == ModelKind::Transformer ? batch * seq : batch; }
};

// Why the configuration cannot be built ("heads (3) must divide hidden (64)"), or nullopt.
std::optional<std::string> config_error(const ModelConfig& c);

std::string to_string(ModelKind k);
std::string to_string(Recompute r);
std::optional<ModelKind> parse_model(const std::string& s);
std::optional<Recompute> parse_recompute(const std::string& s);
std::string to_string(Attention a);
std::optional<Attention> parse_attention(const std::string& s);

// One named parameter tensor inside the flat parameter buffer.
struct ParamTensor {
  std::string name;  // "h0.attn.w_qkv"
  std::int64_t offset = 0, size = 0;
  std::int64_t rows = 0, cols = 0;  // cols = 1 for vectors
};

// Tensors start at multiples of kParamAlign elements (256 bytes and more at 2 bytes per element:
// cuBLASLt picks its algorithms for 256-byte aligned pointers by default), so the flat buffer
// (`total` elements) has zero padding between them; `count` is the parameters proper.
inline constexpr std::int64_t kParamAlign = 128;
struct ParamLayout {
  std::vector<ParamTensor> tensors;
  std::int64_t total = 0;
  std::int64_t count = 0;
  const ParamTensor& at(const std::string& name) const;  // throws std::out_of_range
};
ParamLayout param_layout(const ModelConfig& c);

// The stages in which backward finishes gradients, in order (the reference and the GPU model
// follow it). Each entry is the stage's frontier: the index in param_layout(c).tensors from
// which on every tensor's gradient is final once the stage is done. transformer: the final
// LayerNorm, blocks L-1 .. 0, then the embeddings (wte, tied to the LM head whose gradient
// backward starts with, is final only then); mlp: the head, then layers L-1 .. 0. The last
// frontier is 0. Backward thus finishes tensors in reverse layout order, which is what lets a
// data-parallel step bucket gradients as contiguous ranges of the flat buffer.
std::vector<std::size_t> backward_stages(const ModelConfig& c);

// Per-layer tensor names, shared by the layout and the models.
namespace names {
std::string layer(std::int64_t l, const char* what);  // "h3.fc1.w"
}

// FLOPs of one optimizer step (accum micro-steps), counted over the matmuls the implementation
// runs; elementwise work (LayerNorm, GELU, softmax, AdamW) is not counted, as in the usual
// model-FLOPs convention.
//
//   model    = 6 * P_mm * R  (+ 3 * L * A_causal for the transformer)  - 2 * R * C * C (mlp)
//   hardware = 6 * P_mm * R  (+ L * (attention forward + backward as run))
//              + the forward matmuls that recompute reruns
//
// with R the rows (tokens or samples) per step = accum * rows(), P_mm the matmul weights
// (transformer: L * (3C^2 + C^2 + 2 C F) + V C for the tied LM head; mlp: L C^2 + C V).
// 6 = 2 (multiply-add) x 3 (forward, input gradient, weight gradient): Kaplan et al., "Scaling
// Laws for Neural Language Models" (2020), section 2.1. The attention term: A_mask is the
// forward's score and value products of one layer, 4 * d per admitted (query, key) pair per head
// over accum * B sequences (kernels/attention/attention_counts.hpp; the causal mask admits
// T (T + 1) / 2 pairs of T x T), and the backward is twice the forward in the model count (PaLM,
// Chowdhery et al. 2022, appendix B, counts 12 L H Q T per token over the full T x T; here over
// the pairs the causal mask admits). What runs: unfused, the batched GEMMs compute all T x T
// (forward A_full, backward 2 A_full over the kept P); fused, the tiled kernels skip masked
// tiles and the backward recomputes the scores (A_causal + 2.5 A_causal). Block recompute
// reruns the attention forward as it runs. The mlp's first layer needs no input gradient (its
// input is data), hence the -2 R C^2.
struct StepFlops {
  double model = 0;
  double hardware = 0;
};
double matmul_params(const ModelConfig& c);
StepFlops step_flops(const ModelConfig& c);

// The linear layers of `c` as (in, out) pairs, in forward order within a layer (transformer:
// qkv, proj, fc1, fc2; mlp: fc, head). The LM head tied to wte is not one.
std::vector<std::pair<std::int64_t, std::int64_t>> linear_shapes(const ModelConfig& c);
// Why `c` cannot take the fp8 step's GEMMs (cuBLASLt's fp8 layout rules: leading dimensions of
// 16 bytes, i.e. 16 codes, required here of every dimension of a linear layer's three GEMMs,
// the rows of a micro-batch included), or nullopt.
std::optional<std::string> fp8_dims_error(const ModelConfig& c);

}  // namespace gpubench::kernels::train
