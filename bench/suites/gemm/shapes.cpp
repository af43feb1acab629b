// Named GEMM shapes: DeepBench's lists and transformer GEMMs derived from a model description.
#include "bench/suites/gemm/shapes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "bench/core/errors.hpp"

namespace gpubench::suites::gemm {
namespace {

constexpr bool N = false;
constexpr bool T = true;

// Source: Baidu DeepBench, code/kernels/gemm_problems.h (tuples m, n, k, a_t, b_t; a_t/b_t
// are cuBLAS's op on A/B, column-major, as here), https://github.com/baidu-research/DeepBench
// (read at commit 0201198555d12aedc44eb54c19436dcb5de25feb). The subset keeps every family of
// the list (RNN-like square weights at batch 16-7000, the speech model's 5124x9124 and 35x8457,
// k = 500000 reductions, the language model's 24000/48000-wide outputs) in each transpose
// DeepBench uses. The first number is the entry's position in DeepBench's training_set.
const std::vector<DeepBenchShape> kTrain = {
    {2, {1760, 64, 1760, N, N}},      {4, {1760, 7000, 1760, N, N}},    {12, {2560, 64, 2560, N, N}},
    {18, {4096, 64, 4096, N, N}},     {19, {4096, 7000, 4096, N, N}},   {32, {2560, 64, 2560, T, N}},
    {39, {4096, 7000, 4096, T, N}},   {40, {1760, 7133, 1760, N, T}},   {43, {4096, 7133, 4096, N, T}},
    {48, {5124, 9124, 2560, N, N}},   {49, {35, 8457, 2560, N, N}},     {56, {5124, 9124, 2560, T, N}},
    {59, {35, 8457, 4096, T, N}},     {62, {7680, 64, 2560, N, N}},     {66, {7680, 64, 2560, T, N}},
    {71, {3072, 128, 1024, N, N}},    {76, {3072, 7435, 1024, N, T}},   {77, {7680, 5481, 2560, N, T}},
    {80, {512, 16, 500000, N, N}},    {85, {1024, 16, 500000, T, N}},   {86, {1024, 700, 512, N, N}},
    {87, {1024, 700, 512, T, N}},     {88, {7680, 24000, 2560, N, N}},  {94, {6144, 48000, 2048, N, N}},
    {101, {8448, 24000, 2816, T, N}}, {110, {8448, 16, 2816, N, N}},    {125, {1024, 24000, 2048, N, N}},
    {131, {512, 24000, 2048, T, N}},  {138, {512, 16, 512, N, T}},      {158, {512, 32, 512, N, T}},
};

// Same source, inference_server_set (every entry of that list is NN): batch 1-4 (latency) and
// 700-6000 (throughput) over the same weights.
const std::vector<DeepBenchShape> kInfer = {
    {0, {5124, 700, 2048, N, N}},   {1, {35, 700, 2048, N, N}},     {6, {5124, 1500, 2560, N, N}},
    {7, {35, 1500, 2560, N, N}},    {8, {7680, 1, 2560, N, N}},     {10, {7680, 4, 2560, N, N}},
    {11, {3072, 1, 1024, N, N}},    {13, {3072, 4, 1024, N, N}},    {14, {512, 1, 500000, N, N}},
    {19, {1024, 4, 500000, N, N}},  {20, {1024, 700, 512, N, N}},   {21, {7680, 1500, 2560, N, N}},
    {27, {6144, 3000, 2048, N, N}}, {34, {8448, 6000, 2816, N, N}}, {35, {3072, 6000, 1024, N, N}},
    {36, {6144, 1, 2048, N, N}},    {40, {4608, 2, 1536, N, N}},    {44, {8448, 4, 2816, N, N}},
    {45, {512, 1500, 2816, N, N}},  {53, {512, 1, 512, N, N}},      {60, {1024, 3000, 2048, N, N}},
    {68, {512, 6000, 1536, N, N}},  {73, {512, 4, 512, N, N}},
};

constexpr const char* kTrainPrefix = "deepbench-train.";
constexpr const char* kInferPrefix = "deepbench-infer.";

// Sequence length and micro-batch are workload choices, not model facts: the presets use the
// model's context length and the micro-batch noted.
ModelPreset model_preset(ModelSpec spec, const char* source) {
  ModelPreset p;
  p.spec = std::move(spec);
  p.source = source;
  return p;
}

// Built in a function body: GCC 12 warns (falsely) about a static initializer list of these.
std::vector<ModelPreset> make_models() {
  std::vector<ModelPreset> out;
  out.push_back(model_preset(
      {"gpt2-124m", 768, 3072, 12, 12, 1024, 8, 50257, false},
      "GPT-2 small: Radford et al., 'Language Models are Unsupervised Multitask Learners' (OpenAI, 2019), "
      "Table 2 (12 layers, d_model 768) and section 2.3 (vocabulary 50257, context 1024); 12 heads and the "
      "FFN of 4 x 768 = 3072 from the released configuration (huggingface.co/openai-community/gpt2, "
      "config.json: n_embd 768, n_head 12, n_inner null = 4 n_embd, vocab_size 50257, n_ctx 1024). "
      "Micro-batch 8 is our choice."));
  out.push_back(model_preset(
      {"llama-7b", 4096, 11008, 32, 32, 4096, 1, 32000, true},
      "Llama 2 7B: Touvron et al., 'Llama 2: Open Foundation and Fine-Tuned Chat Models' (Meta, 2023), "
      "context 4096, no GQA at 7B; dimensions from huggingface.co/meta-llama/Llama-2-7b-hf config.json "
      "(hidden_size 4096, intermediate_size 11008, num_attention_heads 32, num_key_value_heads 32, "
      "vocab_size 32000, SwiGLU MLP). Micro-batch 1 is our choice."));
  out.push_back(model_preset(
      {"llama-70b", 8192, 28672, 64, 8, 4096, 1, 32000, true},
      "Llama 2 70B: Touvron et al. (Meta, 2023), GQA with 8 KV heads, context 4096; dimensions from "
      "huggingface.co/meta-llama/Llama-2-70b-hf config.json (hidden_size 8192, intermediate_size 28672, "
      "num_attention_heads 64, num_key_value_heads 8, vocab_size 32000, SwiGLU MLP). Micro-batch 1 is "
      "our choice."));
  return out;
}

const std::vector<ModelPreset> kModels = make_models();

// Largest accepted model dimension: keeps every product below int64 overflow and every GEMM
// side a plausible size (cuBLAS takes 32-bit dimensions; larger ones are skipped by the suite).
constexpr std::int64_t kMaxDim = std::int64_t{1} << 30;

std::vector<std::string> split_dash(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = s.find('-', start);
    out.emplace_back(s.substr(start, pos == std::string_view::npos ? s.npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

[[noreturn]] void bad_model(std::string_view text, std::string_view problem) {
  throw UsageError(fmt::format("model '{}': {}", text, problem));
}

const char* kSyntax =
    "expected a preset (gpt2-124m, llama-7b, llama-70b), optionally followed by fields, or the fields "
    "h<hidden>-f<ffn>-a<heads>[-kv<kv heads>]-s<seq>-b<micro-batch>-v<vocab>[-glu]";

// Applies one field ("h4096", "kv8", "glu") to `spec`; `seen` catches repeats.
void apply_field(std::string_view text, const std::string& field, ModelSpec& spec, std::map<std::string, bool>& seen) {
  if (field == "glu") {
    if (seen["glu"]) bad_model(text, "field 'glu' given twice");
    seen["glu"] = true;
    spec.gated_mlp = true;
    return;
  }
  std::size_t split = 0;
  while (split < field.size() && field[split] >= 'a' && field[split] <= 'z') ++split;
  const std::string key = field.substr(0, split);
  const std::string digits = field.substr(split);
  static const std::map<std::string, std::int64_t ModelSpec::*> kFields = {
      {"h", &ModelSpec::hidden}, {"f", &ModelSpec::ffn}, {"a", &ModelSpec::heads}, {"kv", &ModelSpec::kv_heads},
      {"s", &ModelSpec::seq},    {"b", &ModelSpec::batch}, {"v", &ModelSpec::vocab}};
  auto it = kFields.find(key);
  if (key.empty() || it == kFields.end()) bad_model(text, fmt::format("unknown field '{}' ({})", field, kSyntax));
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size()) {
    bad_model(text, fmt::format("field '{}' needs a whole number after '{}'", field, key));
  }
  if (value < 1) bad_model(text, fmt::format("field '{}' must be at least 1", field));
  if (value > kMaxDim) bad_model(text, fmt::format("field '{}' is larger than {}", field, kMaxDim));
  if (seen[key]) bad_model(text, fmt::format("field '{}' given twice", key));
  seen[key] = true;
  spec.*(it->second) = value;
}

GemmShape linear(std::int64_t m, std::int64_t n, std::int64_t k, bool transa, bool transb) {
  return GemmShape{m, n, k, transa, transb};
}

}  // namespace

std::string GemmShape::layout() const { return std::string(transa ? "t" : "n") + (transb ? "t" : "n"); }

const std::vector<DeepBenchShape>& deepbench_train() { return kTrain; }
const std::vector<DeepBenchShape>& deepbench_infer() { return kInfer; }
const std::vector<ModelPreset>& model_presets() { return kModels; }

ModelSpec parse_model(std::string_view text) {
  if (text.empty()) bad_model(text, kSyntax);
  ModelSpec spec;
  std::string_view fields = text;
  // A preset name, alone or followed by "-field...". Preset names hold dashes themselves, so
  // match them as prefixes (the longest wins, should one ever prefix another).
  const ModelPreset* base = nullptr;
  for (const ModelPreset& p : kModels) {
    const std::string& name = p.spec.name;
    if (text.substr(0, name.size()) == name && (text.size() == name.size() || text[name.size()] == '-') &&
        (base == nullptr || name.size() > base->spec.name.size())) {
      base = &p;
    }
  }
  std::map<std::string, bool> seen;
  if (base != nullptr) {
    spec = base->spec;
    fields = text.size() == base->spec.name.size() ? std::string_view() : text.substr(base->spec.name.size() + 1);
  }
  if (base == nullptr || !fields.empty()) {
    const std::vector<std::string> parts = split_dash(fields);
    // A first word that is no field at all is most likely a misspelt preset name.
    if (base == nullptr && !parts.front().empty() && parts.front() != "glu" &&
        (parts.front().find_first_of("0123456789") == std::string::npos)) {
      bad_model(text, fmt::format("not a model preset or description ({})", kSyntax));
    }
    for (const std::string& field : parts) {
      if (field.empty()) bad_model(text, fmt::format("empty field ({})", kSyntax));
      apply_field(text, field, spec, seen);
    }
  }
  spec.name = std::string(text);
  if (base == nullptr) {
    for (const char* required : {"h", "f", "a", "s", "b", "v"}) {
      if (!seen[required]) bad_model(text, fmt::format("missing field '{}' ({})", required, kSyntax));
    }
    if (!seen["kv"]) spec.kv_heads = spec.heads;  // multi-head attention
  }
  if (spec.hidden % spec.heads != 0) {
    bad_model(text, fmt::format("the {} heads do not divide the hidden size {}", spec.heads, spec.hidden));
  }
  if (spec.kv_heads > spec.heads || spec.heads % spec.kv_heads != 0) {
    bad_model(text, fmt::format("the {} KV heads do not divide the {} heads", spec.kv_heads, spec.heads));
  }
  return spec;
}

const std::vector<std::string>& llm_roles() {
  static const std::vector<std::string> roles = [] {
    std::vector<std::string> out;
    for (const char* layer : {"qkv", "attn_out", "mlp_up", "mlp_gate", "mlp_down", "lm_head"}) {
      for (const char* pass : {"fwd", "dgrad", "wgrad"}) out.push_back(fmt::format("{}.{}", layer, pass));
    }
    return out;
  }();
  return roles;
}

std::vector<LlmGemm> derive_llm_gemms(const ModelSpec& model, std::int64_t tp) {
  if (tp < 1) throw UsageError(fmt::format("tp {}: the tensor-parallel degree must be at least 1", tp));
  auto need_divides = [&](std::int64_t count, const char* what) {
    if (count % tp != 0) {
      throw UsageError(fmt::format("model '{}': tp {} does not divide the {} {}", model.name, tp, count, what));
    }
  };
  need_divides(model.heads, "attention heads");
  need_divides(model.kv_heads, "KV heads");
  need_divides(model.ffn, "FFN columns");

  const std::int64_t t = model.tokens();
  const std::int64_t d = model.head_dim();
  // Per-GPU widths: column-parallel outputs and row-parallel inputs are split by tp.
  const std::int64_t qkv_out = (model.heads + 2 * model.kv_heads) * d / tp;  // Q, then K and V (GQA)
  const std::int64_t attn_in = model.heads * d / tp;
  const std::int64_t ffn = model.ffn / tp;
  const std::int64_t vocab = (model.vocab + tp - 1) / tp;

  std::vector<LlmGemm> out;
  // One linear layer Y = X W^T with W [out, in]: its forward, data- and weight-gradient GEMMs
  // in the column-major convention of shapes.hpp.
  auto layer = [&](const std::string& name, std::int64_t in, std::int64_t out_features) {
    out.push_back({name + ".fwd", linear(out_features, t, in, T, N)});
    out.push_back({name + ".dgrad", linear(in, t, out_features, N, N)});
    out.push_back({name + ".wgrad", linear(in, out_features, t, N, T)});
  };
  layer("qkv", model.hidden, qkv_out);
  layer("attn_out", attn_in, model.hidden);
  layer("mlp_up", model.hidden, ffn);
  if (model.gated_mlp) layer("mlp_gate", model.hidden, ffn);
  layer("mlp_down", ffn, model.hidden);
  layer("lm_head", model.hidden, vocab);
  return out;
}

std::vector<std::string> shape_choices() {
  std::vector<std::string> out{kShapeMnk};
  for (const DeepBenchShape& s : kTrain) out.push_back(fmt::format("{}{}", kTrainPrefix, s.index));
  for (const DeepBenchShape& s : kInfer) out.push_back(fmt::format("{}{}", kInferPrefix, s.index));
  for (const std::string& role : llm_roles()) out.push_back(role);
  return out;
}

bool is_llm_role(std::string_view shape) {
  const auto& roles = llm_roles();
  return std::find(roles.begin(), roles.end(), shape) != roles.end();
}

std::optional<GemmShape> named_shape(std::string_view shape, std::string_view model, std::int64_t tp) {
  for (const auto& [prefix, list] : {std::pair{kTrainPrefix, &kTrain}, std::pair{kInferPrefix, &kInfer}}) {
    const std::string_view p(prefix);
    if (shape.substr(0, p.size()) != p) continue;
    for (const DeepBenchShape& s : *list) {
      if (fmt::format("{}{}", prefix, s.index) == shape) return s.shape;
    }
  }
  if (!is_llm_role(shape)) throw std::logic_error(fmt::format("gemm: unknown shape {}", shape));
  if (model == kNoModel) {
    throw UsageError(fmt::format("shape {} is a transformer GEMM: name the model with -a model=NAME or a "
                                 "description such as llama-7b or h4096-f11008-a32-s2048-b1-v32000-glu",
                                 shape));
  }
  for (const LlmGemm& g : derive_llm_gemms(parse_model(model), tp)) {
    if (g.role == shape) return g.shape;
  }
  return std::nullopt;  // e.g. mlp_gate of a model without a gated MLP
}

AxisSpec shape_axis() {
  return {"shape", AxisKind::Enum,
          "mnk: the m, n, k and layout axes; deepbench-train.<i>, deepbench-infer.<i>: DeepBench's GEMM list "
          "entry i; <layer>.<fwd|dgrad|wgrad>: a transformer GEMM of the model axis",
          shape_choices(), 1};
}

AxisSpec model_axis() {
  AxisSpec spec{"model", AxisKind::Text,
                "transformer for the LLM shapes (none for the others): gpt2-124m, llama-7b, llama-70b, a preset "
                "with fields (llama-7b-s8192-b2) or h<hidden>-f<ffn>-a<heads>[-kv<kv heads>]-s<seq>-b<batch>-"
                "v<vocab>[-glu]",
                {}, 1};
  spec.check = [](std::string_view text) -> std::optional<std::string> {
    if (text == kNoModel) return std::nullopt;
    try {
      (void)parse_model(text);
    } catch (const UsageError& e) {
      // parse_model's message names the model; keep only what is wrong.
      const std::string msg = e.what();
      const auto colon = msg.find("': ");
      return colon == std::string::npos ? msg : msg.substr(colon + 3);
    }
    return std::nullopt;
  };
  return spec;
}

void add_mnk_defaults(Preset& preset) {
  for (auto* values : {&preset.cuda, &preset.cpu}) {
    for (const auto& axis_value : {std::pair{"shape", kShapeMnk}, std::pair{"model", kNoModel},
                                   std::pair{"tp", "1"}, std::pair{"layout", "nn"}}) {
      // Not a structured binding: clang before 16 cannot capture one in the lambda.
      const std::string axis = axis_value.first;
      const bool given = std::any_of(values->begin(), values->end(), [&](const auto& kv) { return kv.first == axis; });
      if (!given) values->emplace_back(axis, axis_value.second);
    }
  }
}

std::vector<Preset> shape_presets() {
  // Named shapes overwrite m, n, k and layout (Suite::resolve), so those axes take one value.
  const std::vector<std::pair<std::string, std::string>> fixed = {
      {"m", "1"}, {"n", "@m"}, {"k", "@m"}, {"layout", "nn"}};
  auto with_fixed = [&](std::vector<std::pair<std::string, std::string>> values) {
    values.insert(values.end(), fixed.begin(), fixed.end());
    return values;
  };
  auto ids = [](const char* prefix, const std::vector<DeepBenchShape>& list, double max_flops) {
    std::vector<std::string> out;
    for (const DeepBenchShape& s : list) {
      const double flops = 2.0 * static_cast<double>(s.shape.m) * static_cast<double>(s.shape.n) *
                           static_cast<double>(s.shape.k);
      if (flops <= max_flops) out.push_back(fmt::format("{}{}", prefix, s.index));
    }
    return fmt::format("{}", fmt::join(out, ","));
  };
  constexpr double kAll = 1e300;
  std::vector<std::string> role_list = llm_roles();
  const std::string roles = fmt::format("{}", fmt::join(role_list, ","));

  std::vector<Preset> out;
  Preset square{"square",
                {{"m", "256:16384:x2"}, {"n", "@m"}, {"k", "@m"}, {"dtype", "fp64,fp32,tf32,fp16,bf16"}},
                {{"m", "256:2048:x2"}, {"n", "@m"}, {"k", "@m"}, {"dtype", "fp32,fp64"}}};
  add_mnk_defaults(square);
  out.push_back(std::move(square));
  // DeepBench's training kernels ran in fp16 (gemm_bench's default); fp32 on the CPU.
  out.push_back({"deepbench-train",
                 with_fixed({{"shape", ids(kTrainPrefix, kTrain, kAll)}, {"model", kNoModel}, {"tp", "1"},
                             {"dtype", "fp16"}}),
                 with_fixed({{"shape", ids(kTrainPrefix, kTrain, kCpuPresetFlops)}, {"model", kNoModel},
                             {"tp", "1"}, {"dtype", "fp32"}})});
  out.push_back({"deepbench-infer",
                 with_fixed({{"shape", ids(kInferPrefix, kInfer, kAll)}, {"model", kNoModel}, {"tp", "1"},
                             {"dtype", "fp16"}}),
                 with_fixed({{"shape", ids(kInferPrefix, kInfer, kCpuPresetFlops)}, {"model", kNoModel},
                             {"tp", "1"}, {"dtype", "fp32"}})});
  out.push_back({"llm",
                 with_fixed({{"shape", roles}, {"model", "gpt2-124m,llama-7b,llama-70b"}, {"tp", "1"},
                             {"dtype", "bf16"}}),
                 with_fixed({{"shape", roles}, {"model", "gpt2-124m-s128-b1"}, {"tp", "1"}, {"dtype", "fp32"}})});
  return out;
}

}  // namespace gpubench::suites::gemm
