#pragma once
// Named GEMM shapes for the gemm suite's `shape` axis: DeepBench's problem lists and the GEMMs
// of a transformer layer derived from a model description.
//
// Convention (the suite's, as cuBLAS's): column-major, D(m x n) = op(A)(m x k) * op(B)(k x n);
// layout "tn" means op(A) = A^T, op(B) = B (first letter A, second B). A with op T is stored
// k x m, B with op T is stored n x k.
//
// Transformer GEMMs. Frameworks keep row-major tensors; a row-major [R, C] tensor is the
// column-major [C, R] matrix, its transpose. For a linear layer with weight W [out, in]
// (row-major, as torch.nn.Linear stores it) over T = sequence x micro-batch tokens:
//   forward   Y [T, out] = X [T, in] W^T      cuBLAS computes Y^T = W X^T:   m=out, n=T, k=in,  tn
//   dgrad    dX [T, in]  = dY [T, out] W      dX^T = W^T dY^T:               m=in,  n=T, k=out, nn
//   wgrad    dW [out, in] = dY^T X            dW^T = X^T dY:                 m=in,  n=out, k=T, nt
// which are the calls PyTorch's linear and its autograd make. Tensor parallelism over tp GPUs
// (Megatron-LM) splits QKV, MLP up and gate by output columns (out / tp) and attention output
// and MLP down by input rows (in / tp); the LM head splits the vocabulary. Grouped-query
// attention makes K and V heads_kv * head_dim wide, head_dim = hidden / heads.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/core/suite.hpp"

namespace gpubench::suites::gemm {

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  bool transa = false, transb = false;
  std::string layout() const;  // "nn", "nt", "tn" or "tt"
};

// ---- DeepBench ----------------------------------------------------------------------------
// A representative subset of Baidu DeepBench's GEMM problems (code/kernels/gemm_problems.h,
// https://github.com/baidu-research/DeepBench, Apache-2.0): `training_set` (fp16 training
// kernels of speech, language and vision models) and `inference_server_set`. Each entry keeps
// its 0-based position in DeepBench's list, so `deepbench-train.40` is training_set[40].
struct DeepBenchShape {
  int index = 0;  // position in DeepBench's list
  GemmShape shape;
};
const std::vector<DeepBenchShape>& deepbench_train();
const std::vector<DeepBenchShape>& deepbench_infer();

// ---- Transformer models ---------------------------------------------------------------------
struct ModelSpec {
  std::string name;  // the description as given (preset name or inline)
  std::int64_t hidden = 0, ffn = 0, heads = 0, kv_heads = 0, seq = 0, batch = 0, vocab = 0;
  bool gated_mlp = false;  // SwiGLU-style MLP: separate up and gate projections
  std::int64_t head_dim() const { return hidden / heads; }
  std::int64_t tokens() const { return seq * batch; }
};

struct ModelPreset {
  ModelSpec spec;
  std::string source;  // where the dimensions come from
};
// gpt2-124m, llama-7b, llama-70b.
const std::vector<ModelPreset>& model_presets();

// A model description: a preset name, a preset name followed by overriding fields
// (llama-7b-s8192-b2), or fields alone (h4096-f11008-a32-kv8-s2048-b1-v32000-glu). Fields:
// h hidden, f FFN size, a attention heads, kv KV heads (default: a), s sequence length,
// b micro-batch, v vocabulary, glu gated MLP. Throws UsageError (one line) when the text is
// malformed or the model is inconsistent (heads not dividing hidden, kv not dividing heads,
// zeros).
ModelSpec parse_model(std::string_view text);

// The GEMM roles, in layer order: qkv, attn_out, mlp_up, mlp_gate, mlp_down, lm_head, each
// with .fwd, .dgrad and .wgrad (mlp_gate only for gated MLPs).
const std::vector<std::string>& llm_roles();

struct LlmGemm {
  std::string role;  // "qkv.fwd"
  GemmShape shape;
};
// Every GEMM of one layer plus the LM head on one of `tp` tensor-parallel GPUs. Throws
// UsageError when tp does not divide the heads, KV heads or FFN size. The vocabulary shard is
// ceil(vocab / tp) (frameworks pad the vocabulary to a multiple of tp).
std::vector<LlmGemm> derive_llm_gemms(const ModelSpec& model, std::int64_t tp);

// ---- The `shape` axis ------------------------------------------------------------------------
inline constexpr const char* kShapeMnk = "mnk";      // use the m, n, k and layout axes
inline constexpr const char* kNoModel = "none";      // model axis value for non-LLM shapes

// mnk, deepbench-train.<i>, deepbench-infer.<i>, then the LLM roles.
std::vector<std::string> shape_choices();
bool is_llm_role(std::string_view shape);
// The shape named by a `shape` value (not mnk). For an LLM role, `model` and `tp` choose the
// model; nullopt when the model has no such GEMM (mlp_gate of a plain MLP). Throws UsageError
// for an LLM role without a model, or a bad model or tp.
std::optional<GemmShape> named_shape(std::string_view shape, std::string_view model, std::int64_t tp);

// ---- Suite glue -------------------------------------------------------------------------------
AxisSpec shape_axis();  // Enum over shape_choices()
AxisSpec model_axis();  // Text: none, or a model description checked with parse_model
// Adds shape=mnk, model=none, tp=1, layout=nn (where the preset gives no value) for the
// presets that sweep m, n, k.
void add_mnk_defaults(Preset& preset);
// square, deepbench-train, deepbench-infer, llm. On the CPU, the DeepBench presets keep the
// entries of at most kCpuPresetFlops and llm uses GPT-2 small at sequence 128, so a preset
// finishes in minutes on two cores.
std::vector<Preset> shape_presets();
inline constexpr double kCpuPresetFlops = 2e10;

}  // namespace gpubench::suites::gemm
