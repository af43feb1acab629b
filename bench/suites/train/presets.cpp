// The train suite's axes and presets. Named model presets give exact dimensions:
//   gpt2-124m   GPT-2 small: 12 layers, hidden 768, 12 heads, context 1024, vocabulary 50257
//               (Radford et al. 2019, table 2; 124M parameters with the tied LM head)
//   gpt2-350m   GPT-2 medium: 24 layers, hidden 1024, 16 heads, context 1024, vocabulary 50257
//   gpt-1.3b    GPT-3 XL: 24 layers, hidden 2048, 16 heads (head size 128), context 2048
//               (Brown et al. 2020, table 2.1), GPT-2's vocabulary
//   llama7b-block  one block of Llama 2 7B's shape: hidden 4096, 32 heads, context 4096,
//               vocabulary 32000 (Touvron et al. 2023). The MLP here is GELU with 4x width
//               (2 x 4096 x 16384 = 134.2M weights), close to Llama's SwiGLU (3 x 4096 x 11008 =
//               135.3M) in weights and FLOPs; LayerNorm stands for RMSNorm.
// On the CPU the named presets keep the dimensions with micro-batch 1 and fp32 only.
#include <cstdlib>

#include "bench/suites/train/train.hpp"

namespace gpubench::suites::train {

std::vector<AxisSpec> train_axes() {
  return {
      {"model", AxisKind::Enum, "mlp (Linear+GELU layers, cross-entropy head) or transformer (GPT-style decoder)",
       {"mlp", "transformer"}, 1},
      {"layers", AxisKind::Int, "layers (mlp) or decoder blocks (transformer)", {}, 1},
      {"hidden", AxisKind::Int, "hidden size C (also the mlp's input width)", {}, 1},
      {"heads", AxisKind::Int, "attention heads; must divide hidden (transformer)", {}, 1},
      {"ffn_mult", AxisKind::Int, "MLP width as a multiple of hidden (transformer)", {}, 1},
      {"seq", AxisKind::Int, "sequence length T (transformer)", {}, 1},
      {"micro_batch", AxisKind::Int,
       "sequences (transformer) or samples (mlp) per micro-step; 0: the largest that fits in device memory "
       "(doubling, then bisection), found before timing",
       {}, 0},
      {"vocab", AxisKind::Int, "vocabulary (transformer) or classes (mlp)", {}, 2},
      {"precision", AxisKind::Enum,
       "fp32 (TF32 off), tf32, fp16-amp (dynamic loss scaling), bf16-amp; fp8 (Transformer Engine's recipe) is planned "
       "and skipped with the reason until its GPU step is built",
       {"fp32", "tf32", "fp16-amp", "bf16-amp", "fp8"}, 1},
      {"accum", AxisKind::Int, "gradient accumulation: micro-steps per optimizer step", {}, 1},
      {"recompute", AxisKind::Enum, "activation recompute in backward: none, mlp (fc1+GELU), block (whole block)",
       {"none", "mlp", "block"}, 1},
      {"dp", AxisKind::Enum,
       "data parallel across the ranks of mpirun/srun: none (one device), ddp (all-reduce of gradient buckets), "
       "zero1 (reduce-scatter, sharded AdamW, all-gather)",
       {"none", "ddp", "zero1"}, 1},
      {"attention", AxisKind::Enum,
       "transformer attention: fused (tiled online softmax, no [T x T] probabilities kept; the CPU's FlashAttention "
       "kernel, cuDNN SDPA on CUDA once built) or unfused (scores materialised per head); none: the mlp (set by the "
       "suite)",
       {"fused", "unfused", "none"}, 1},
      {"bucket_mb", AxisKind::Text, "gradient bucket cap in MiB (PyTorch DDP's bucket_cap_mb; default 25)", {}, 1,
       [](std::string_view w) { return bucket_mb_error(w); }},
  };
}

std::optional<std::string> bucket_mb_error(std::string_view word) {
  const std::string w(word);
  char* end = nullptr;
  const double v = std::strtod(w.c_str(), &end);
  if (w.empty() || end != w.c_str() + w.size() || !(v > 0) || !(v <= 1e6)) {
    return "bucket_mb takes a number of MiB above 0 and up to 1e6 (25, 0.5)";
  }
  return std::nullopt;
}

double bucket_mb(const Point& point) { return std::strtod(point.text("bucket_mb").c_str(), nullptr); }

namespace {

using Values = std::vector<std::pair<std::string, std::string>>;

Values named(const char* layers, const char* hidden, const char* heads, const char* seq, const char* vocab,
             const char* micro_batch, const char* precision) {
  return {{"model", "transformer"}, {"layers", layers},       {"hidden", hidden},       {"heads", heads},
          {"ffn_mult", "4"},        {"seq", seq},             {"micro_batch", micro_batch}, {"vocab", vocab},
          {"precision", precision}, {"accum", "1"},           {"recompute", "none"}};
}

constexpr const char* kAllPrecisions = "fp32,tf32,fp16-amp,bf16-amp";

}  // namespace

std::vector<Preset> train_presets() {
  std::vector<Preset> presets = {
      {"quick",
       {{"model", "mlp,transformer"}, {"layers", "4"}, {"hidden", "1024"}, {"heads", "16"}, {"ffn_mult", "4"},
        {"seq", "512"}, {"micro_batch", "8"}, {"vocab", "32768"}, {"precision", kAllPrecisions}, {"accum", "1"},
        {"recompute", "none"}},
       {{"model", "mlp,transformer"}, {"layers", "2"}, {"hidden", "128"}, {"heads", "4"}, {"ffn_mult", "4"},
        {"seq", "64"}, {"micro_batch", "4"}, {"vocab", "2048"}, {"precision", "fp32"}, {"accum", "1"},
        {"recompute", "none"}}},
      {"standard",
       {{"model", "mlp,transformer"}, {"layers", "12"}, {"hidden", "768,2048"}, {"heads", "16"}, {"ffn_mult", "4"},
        {"seq", "1024"}, {"micro_batch", "8"}, {"vocab", "50257"}, {"precision", kAllPrecisions},
        {"accum", "1,4"}, {"recompute", "none,mlp,block"}},
       {{"model", "mlp,transformer"}, {"layers", "4"}, {"hidden", "256,512"}, {"heads", "8"}, {"ffn_mult", "4"},
        {"seq", "256"}, {"micro_batch", "4"}, {"vocab", "8192"}, {"precision", "fp32"}, {"accum", "1,4"},
        {"recompute", "none,mlp,block"}}},
      {"full",
       {{"model", "mlp,transformer"}, {"layers", "12,24"}, {"hidden", "768:4096:x2"}, {"heads", "16"},
        {"ffn_mult", "4"}, {"seq", "1024,2048"}, {"micro_batch", "4,8,16"}, {"vocab", "50257"},
        {"precision", kAllPrecisions}, {"accum", "1,4"}, {"recompute", "none,mlp,block"}},
       {{"model", "mlp,transformer"}, {"layers", "4,8"}, {"hidden", "256:1024:x2"}, {"heads", "8"},
        {"ffn_mult", "4"}, {"seq", "256,512"}, {"micro_batch", "2,8"}, {"vocab", "8192"}, {"precision", "fp32"},
        {"accum", "1,4"}, {"recompute", "none,mlp,block"}}},
      {"gpt2-124m", named("12", "768", "12", "1024", "50257", "16", kAllPrecisions),
       named("12", "768", "12", "1024", "50257", "1", "fp32")},
      {"gpt2-350m", named("24", "1024", "16", "1024", "50257", "8", kAllPrecisions),
       named("24", "1024", "16", "1024", "50257", "1", "fp32")},
      {"gpt-1.3b", named("24", "2048", "16", "2048", "50257", "4", kAllPrecisions),
       named("24", "2048", "16", "2048", "50257", "1", "fp32")},
      {"llama7b-block", named("1", "4096", "32", "4096", "32000", "2", kAllPrecisions),
       named("1", "4096", "32", "4096", "32000", "1", "fp32")},
  };
  // Every preset is one device unless --axis dp=ddp|zero1 asks for data parallel. Attention is
  // fused: the CPU's tiled kernel, and on CUDA cuDNN's SDPA where it can run; where it cannot
  // (fp32 and tf32 steps, a build without the cuDNN frontend, a host without libcudnn) the suite's
  // resolve() runs the step unfused instead (train_suite.cpp), so nothing here loads cuDNN.
  for (Preset& p : presets) {
    for (auto* values : {&p.cuda, &p.cpu}) {
      values->emplace_back("dp", "none");
      values->emplace_back("bucket_mb", "25");
      values->emplace_back("attention", "fused");
    }
  }
  return presets;
}

}  // namespace gpubench::suites::train
