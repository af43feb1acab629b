#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "bench/suites/gemm/gemm.hpp"
#include "bench/core/sizes.hpp"
#include "bench/suites/gemm/shapes.hpp"
#include "kernels/gemm/custom_gemm.hpp"

namespace gpubench::suites::gemm {
namespace {

constexpr const char* kCustomPrefix = "custom:";

bool is_custom(const std::string& provider) { return provider.rfind(kCustomPrefix, 0) == 0; }
bool is_gpu_provider(const std::string& provider) { return provider != "openblas"; }

std::vector<std::string> provider_choices() {
  std::vector<std::string> v = builtin_providers();
  for (const std::string& variant : custom_variants()) v.push_back(kCustomPrefix + variant);
  return v;
}

// Values for the axes a preset does not name, one axis per line: CUDA, then CPU.
const std::vector<std::pair<std::string, std::string>> kPresetDefaults = {
    {"shape", kShapeMnk},
    {"model", kNoModel},
    {"tp", "1"},
    {"provider", "cublas"},
    {"dtype", "fp32"},
    {"layout", "nn"},
    {"m", "1024"},
    {"n", "@m"},
    {"k", "@m"},
    {"batch", "1"},
    {"pad", "0"},
    {"alpha", "1"},
    {"beta", "0"},
    {"epilogue", "none"},
    {"fusion", "fused"},
    {"threads", "0"},
    {"op", "gemm"},
    {"experts", "8"},
    {"routing", "uniform"},
};
const std::vector<std::pair<std::string, std::string>> kCpuPresetDefaults = {
    {"provider", "openblas"},
    {"dtype", "fp32"},
};

std::vector<std::pair<std::string, std::string>> with_defaults(std::vector<std::pair<std::string, std::string>> given,
                                                               const std::vector<std::pair<std::string, std::string>>& first) {
  auto add_missing = [&](const std::vector<std::pair<std::string, std::string>>& defaults) {
    for (const auto& d : defaults) {
      const bool named = std::any_of(given.begin(), given.end(), [&](const auto& g) { return g.first == d.first; });
      if (!named) given.push_back(d);
    }
  };
  add_missing(first);
  add_missing(kPresetDefaults);
  return given;
}

Preset preset(std::string name, std::vector<std::pair<std::string, std::string>> cuda,
              std::vector<std::pair<std::string, std::string>> cpu) {
  return {std::move(name), with_defaults(std::move(cuda), {}), with_defaults(std::move(cpu), kCpuPresetDefaults)};
}

class GemmSuite final : public Suite {
 public:
  std::string name() const override { return "gemm"; }
  std::string description() const override {
    return "Dense matrix product D = epilogue(alpha*op(A)*op(B) + beta*C): cuBLAS, cuBLASLt (heuristic and tuned), "
           "gpubench's own kernels on GPUs; OpenBLAS on the CPU";
  }

  // One axis per line; provider and dtype first (the most read part of a case name).
  std::vector<AxisSpec> axes() const override {
    return {
        shape_axis(),
        model_axis(),
        {"tp", AxisKind::Int, "tensor-parallel degree for the transformer shapes (1 for the others)", {}, 1, {}, 1024},
        {"provider", AxisKind::Enum, "GEMM implementation (cublas, cublaslt, cublaslt-tuned, custom:<kernel> on GPUs; openblas on the CPU)", provider_choices(), 1},
        {"dtype", AxisKind::Enum, "precision: fp16/bf16/tf32 accumulate in fp32, fp16-acc16 in fp16, fp8 (A e4m3|e5m2, B e4m3) writes bf16, int8 accumulates and writes int32, mxfp8/nvfp4 block-scaled from bf16 inputs (sm_100+)", dtype_names(), 1},
        {"layout", AxisKind::Enum, "op(A) op(B): n = as stored (column-major), t = transposed", {"nn", "nt", "tn", "tt"}, 1},
        {"m", AxisKind::Int, "rows of op(A) and D", {}, 1},
        {"n", AxisKind::Int, "columns of op(B) and D (default @m: same as m)", {}, 1},
        {"k", AxisKind::Int, "columns of op(A), rows of op(B) (default @m: same as m)", {}, 1},
        {"batch", AxisKind::Int, "strided-batched GEMM: independent products per call", {}, 1},
        {"pad", AxisKind::Int, "elements added to every leading dimension (0: packed)", {}, 0},
        {"alpha", AxisKind::Enum, "alpha (int8: integers only)", {"1", "-1", "0.5", "2"}, 1},
        {"beta", AxisKind::Enum, "beta: 0 overwrites D, 1 accumulates (gradient accumulation)", {"0", "1", "0.5", "-1"}, 1},
        {"epilogue", AxisKind::Enum, "applied to the product: + bias[row], GELU (tanh form), or both", {"none", "bias", "gelu", "bias-gelu"}, 1},
        {"fusion", AxisKind::Enum, "fused: the epilogue runs inside the GEMM (cuBLASLt); separate: GEMM, then an elementwise kernel", {"fused", "separate"}, 1},
        {"threads", AxisKind::Int, "OpenBLAS threads (0: its default); GPU providers run at 0 only", {}, 0, {}, 1024},
        {"op", AxisKind::Enum, "gemm: one product; grouped: a mixture-of-experts layer's expert GEMMs: m tokens routed over "
         "`experts` experts, expert e computes [M_e x k] x [k x n] with its own weights (openblas, cublaslt); "
         "reports pct_of_dense against one M x n x k GEMM", {"gemm", "grouped"}, 1},
        {"experts", AxisKind::Int, "op=grouped: experts G the m tokens are routed over (ignored by op=gemm)", {}, 1, {}, 4096},
        {"routing", AxisKind::Enum, "op=grouped: tokens per expert from a seeded draw: uniform (1/G each) or zipf (expert e "
         "with probability proportional to 1/e, exponent 1.0); ignored by op=gemm", routing_names(), 1},
    };
  }

  // Presets: (axis, values) lists, CUDA then CPU, one axis per line; axes a preset leaves out
  // take kPresetDefaults.
  std::vector<Preset> presets() const override {
    std::vector<Preset> out = {
        preset("quick",
               {{"provider", "cublas,cublaslt"},
                {"dtype", "fp32,tf32,fp16,bf16"},
                {"m", "1024,4096,8192"}},
               {{"dtype", "fp32,fp64"},
                {"m", "256,1024"}}),
        preset("standard",
               {{"provider", "cublas,cublaslt,cublaslt-tuned"},
                {"dtype", "fp64,fp32,tf32,fp16,bf16,fp16-acc16,fp8-e4m3,fp8-e5m2,int8"},
                {"layout", "tn"},
                {"m", "256:16384:x2"}},
               {{"dtype", "fp32,fp64"},
                {"m", "256:2048:x2"},
                {"threads", "0,1"}}),
        preset("full",
               {{"provider", "cublas,cublaslt,cublaslt-tuned"},
                {"dtype", "fp64,fp32,tf32,fp16,bf16,fp16-acc16,fp8-e4m3,fp8-e5m2,int8"},
                {"layout", "nn,nt,tn,tt"},
                {"m", "128:32768:x2"}},
               {{"dtype", "fp32,fp64"},
                {"layout", "nn,tn"},
                {"m", "128:4096:x2"},
                {"threads", "0,1"}}),
        // What fusing an epilogue into the GEMM is worth: each epilogue fused and separate.
        preset("epilogues",
               {{"provider", "cublaslt"},
                {"dtype", "fp16,bf16"},
                {"layout", "tn"},
                {"m", "1024,4096,8192"},
                {"epilogue", "none,bias,gelu,bias-gelu"},
                {"fusion", "fused,separate"}},
               {{"m", "256"}}),
        // Every layout, batches and padded leading dimensions at one size.
        preset("layouts",
               {{"provider", "cublas,cublaslt"},
                {"dtype", "fp32,bf16"},
                {"layout", "nn,nt,tn,tt"},
                {"m", "4096"},
                {"batch", "1,8"},
                {"pad", "0,8"}},
               {{"layout", "nn,nt,tn,tt"},
                {"m", "256"},
                {"batch", "1,4"},
                {"pad", "0,8"}}),
        // The heuristic's first algorithm against the tuned one.
        preset("tune",
               {{"provider", "cublaslt,cublaslt-tuned"},
                {"dtype", "bf16,fp16,fp8-e4m3"},
                {"layout", "tn"},
                {"m", "512:16384:x2"}},
               {{"m", "256"}}),
        // Mixture-of-experts expert GEMMs (op=grouped, 8 experts) against one dense GEMM of the
        // same FLOPs; square like the other mnk presets (a real layer's n and k: --axis).
        preset("grouped",
               {{"provider", "cublaslt"},
                {"dtype", "bf16"},
                {"m", "4096,8192"},
                {"op", "grouped"},
                {"routing", "uniform,zipf"}},
               {{"m", "256,1024"},
                {"op", "grouped"},
                {"routing", "uniform,zipf"}}),
    };
    // Named shape sets (square, DeepBench, LLM roles; shapes.cpp).
    for (Preset& p : shape_presets()) out.push_back(preset(std::move(p.name), std::move(p.cuda), std::move(p.cpu)));
    return out;
  }

  // Named shapes (shape != mnk) set m, n, k and layout from their entry; see shapes.hpp.
  // op=gemm drops the grouped-only axes (experts, routing) and op itself, so plain GEMM cases
  // keep the names and axes they had before op existed, and points that differ only there are
  // planned once.
  Point resolve(const DeviceInfo& device, Point point) const override {
    // A block-scaled dtype runs in the TN layout only (cuBLASLt's block scaling quantises A and
    // B along K, both K-major): on a GPU, where the user left the layout to its default, the
    // point takes TN; an explicit --axis layout is kept and skipped with the reason. (The CPU's
    // points are skipped whatever their layout and keep theirs.)
    if (device.is_cuda() && kernels::gemm_is_block_scaled(parse_precision(point.text_or("dtype", "fp32"))) &&
        !point.given("layout") && point.text_or("shape", kShapeMnk) == kShapeMnk) {
      point.set("layout", "tn");
    }
    if (point.text_or("op", "gemm") != "grouped") {
      Point plain;
      plain.set_given(point.given_axes());
      for (const auto& [name, value] : point.values()) {
        if (name != "op" && name != "experts" && name != "routing") plain.set(name, value);
      }
      point = std::move(plain);
    }
    const std::string shape = point.text_or("shape", kShapeMnk);
    if (shape == kShapeMnk) return point;
    if (std::optional<GemmShape> s = named_shape(shape, point.text("model"), point.integer("tp"))) {
      point.set("m", s->m);
      point.set("n", s->n);
      point.set("k", s->k);
      point.set("layout", s->layout());
    }
    return point;
  }

  // Combinations that mean nothing are dropped from the plan silently: a provider on the other
  // kind of device, a thread count for a GPU provider, fusion=separate without an epilogue,
  // a model or tp for a shape that is not a transformer role, mlp_gate for a model without a
  // gated MLP.
  bool applies(const DeviceInfo& device, const Point& point) const override {
    const std::string provider = point.text_or("provider", device.is_cuda() ? "cublas" : "openblas");
    if (is_gpu_provider(provider) != device.is_cuda()) return false;
    if (is_gpu_provider(provider) && point.integer_or("threads", 0) != 0) return false;
    // A block-scaled dtype on a GPU takes, of the default or preset providers, those that run
    // it (cublaslt); a provider the user named is kept and skipped with the reason.
    if (device.is_cuda() && !point.given("provider") && kernels::gemm_is_block_scaled(parse_precision(point.text_or("dtype", "fp32"))) &&
        provider != "cublaslt") {
      return false;
    }
    if (point.text_or("epilogue", "none") == "none" && point.text_or("fusion", "fused") == "separate") return false;
    const std::string shape = point.text_or("shape", kShapeMnk);
    if (!is_llm_role(shape)) return point.text_or("model", kNoModel) == kNoModel && point.integer_or("tp", 1) == 1;
    return named_shape(shape, point.text("model"), point.integer("tp")).has_value();
  }

  // Every buffer (with its padded leading dimension and batch) within kMaxCaseBytes, the
  // products overflow-checked, before spec_from or any provider computes them.
  void check_sizes(const DeviceInfo& device, const Point& point) const override {
    (void)device;
    const std::int64_t m = point.integer("m"), n = point.integer("n"), k = point.integer("k");
    const std::int64_t batch = point.integer_or("batch", 1), pad = point.integer_or("pad", 0);
    const std::string layout = point.text_or("layout", "nn");
    const bool ta = layout[0] == 't', tb = layout[1] == 't';
    const kernels::GemmStorages st = kernels::gemm_storages(parse_precision(point.text("dtype")));
    const auto bytes = [](kernels::Storage s) { return static_cast<std::int64_t>(kernels::storage_bytes(s)); };
    const std::string what = "gemm " + point.label();
    // op(A) is m x k, stored k x m when transposed; a leading dimension is the stored rows + pad.
    const std::int64_t lda = checked_sum(what, {ta ? "k" : "m", ta ? k : m}, {"pad", pad});
    checked_size(what + ", A", {{ta ? "k+pad" : "m+pad", lda}, {ta ? "m" : "k", ta ? m : k}, {"batch", batch},
                                {"bytes per element", bytes(st.a)}});
    const std::int64_t ldb = checked_sum(what, {tb ? "n" : "k", tb ? n : k}, {"pad", pad});
    // op=grouped: one weight matrix per expert.
    const std::int64_t experts = point.text_or("op", "gemm") == "grouped" ? point.integer_or("experts", 1) : 1;
    checked_size(what + ", B", {{tb ? "n+pad" : "k+pad", ldb}, {tb ? "k" : "n", tb ? k : n}, {"batch", batch},
                                {"experts", experts}, {"bytes per element", bytes(st.b)}});
    const std::int64_t ldc = checked_sum(what, {"m", m}, {"pad", pad});
    checked_size(what + ", C and D", {{"m+pad", ldc}, {"n", n}, {"batch", batch}, {"bytes per element", bytes(st.c)},
                                      {"buffers", 2}});
  }

  std::optional<std::string> unsupported(const DeviceInfo& device, const Point& point) const override {
    return gemm_unsupported(device, spec_from(point));
  }

  std::unique_ptr<Case> make_case(const DeviceInfo& device, const Point& point) const override {
    const GemmCaseSpec spec = spec_from(point);
    if (spec.op == GemmOp::Grouped) {
      if (spec.provider == "openblas") return make_openblas_grouped_case(spec);
      if (spec.provider == "cublaslt") return make_cublaslt_grouped_case(device, spec);
      throw std::logic_error("gemm: no grouped case for provider " + spec.provider);
    }
    if (spec.provider == "openblas") return make_openblas_case(spec);
    if (spec.provider == "cublas") return make_cublas_case(device, spec);
    if (spec.provider == "cublaslt" && kernels::gemm_is_block_scaled(spec.problem.precision)) return make_blockscaled_case(device, spec);
    if (spec.provider == "cublaslt" || spec.provider == "cublaslt-tuned") return make_cublaslt_case(device, spec);
    if (is_custom(spec.provider)) {
      auto c = make_custom_case(device, spec.problem, spec.provider.substr(std::string(kCustomPrefix).size()));
      if (c) return c;
    }
    throw std::logic_error("gemm: no case for provider " + spec.provider);
  }

  nlohmann::ordered_json libraries() const override {
    return {{"cublas", cublas_version()}, {"cublaslt", cublaslt_version()}, {"openblas", openblas_version()}};
  }

  nlohmann::ordered_json summarize(const std::vector<nlohmann::ordered_json>& entries) const override {
    return summarize_gemm(entries);
  }
};

struct PrecisionRow {
  GemmPrecision p;
  const char* name;
};
constexpr PrecisionRow kPrecisions[] = {
    {GemmPrecision::FP64, "fp64"},         {GemmPrecision::FP32, "fp32"},         {GemmPrecision::TF32, "tf32"},
    {GemmPrecision::FP16, "fp16"},         {GemmPrecision::BF16, "bf16"},         {GemmPrecision::FP16_ACC16, "fp16-acc16"},
    {GemmPrecision::FP8_E4M3, "fp8-e4m3"}, {GemmPrecision::FP8_E5M2, "fp8-e5m2"}, {GemmPrecision::INT8, "int8"},
    {GemmPrecision::MXFP8, "mxfp8"},       {GemmPrecision::NVFP4, "nvfp4"},
};

bool is_fp8(GemmPrecision p) { return p == GemmPrecision::FP8_E4M3 || p == GemmPrecision::FP8_E5M2; }

}  // namespace

// ---- Names ----

GemmPrecision parse_precision(const std::string& dtype) {
  for (const auto& r : kPrecisions)
    if (dtype == r.name) return r.p;
  throw std::logic_error("gemm: unknown dtype " + dtype);
}

std::string precision_name(GemmPrecision p) {
  for (const auto& r : kPrecisions)
    if (r.p == p) return r.name;
  return "unknown";
}

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& r : kPrecisions) v.emplace_back(r.name);
    return v;
  }();
  return names;
}

const std::vector<std::string>& builtin_providers() {
  static const std::vector<std::string> v = {"cublas", "cublaslt", "cublaslt-tuned", "openblas"};
  return v;
}

std::vector<std::string> custom_variants() {
  std::vector<std::string> out;
  for (const kernels::CustomGemmSpec& s : kernels::custom_gemm_specs()) out.emplace_back(s.name);
  return out;
}

std::optional<std::string> custom_unsupported(const DeviceInfo& device, const GemmProblem& problem, const std::string& variant) {
  const kernels::CustomGemmSpec* spec = kernels::find_custom_gemm(variant);
  if (spec == nullptr) {
    return fmt::format("no custom GEMM kernel named '{}' (known: {})", variant, fmt::join(custom_variants(), ", "));
  }
  if (!device.is_cuda()) return fmt::format("custom:{} runs on CUDA devices only", variant);
  // The ladder's kernels compute one packed, column-major NN product (the cuBLAS comparison is
  // on the same case).
  if (problem.trans_a || problem.trans_b) return "gpubench's own kernels compute the NN layout only (layout=nn)";
  if (problem.batch != 1) return "gpubench's own kernels compute one product per call (batch=1)";
  if (kernels::gemm_lda(problem) != problem.m || kernels::gemm_ldb(problem) != problem.k || kernels::gemm_ldc(problem) != problem.m) {
    return "gpubench's own kernels take packed operands (pad=0)";
  }
  return kernels::custom_gemm_unsupported(*spec, problem, device.cc_major, device.cc_minor, wgmma_gemm_built());
}

GemmEpilogue parse_epilogue(const std::string& name) {
  if (name == "none") return GemmEpilogue::None;
  if (name == "bias") return GemmEpilogue::Bias;
  if (name == "gelu") return GemmEpilogue::Gelu;
  if (name == "bias-gelu") return GemmEpilogue::BiasGelu;
  throw std::logic_error("gemm: unknown epilogue " + name);
}

std::string epilogue_name(GemmEpilogue e) {
  switch (e) {
    case GemmEpilogue::None: return "none";
    case GemmEpilogue::Bias: return "bias";
    case GemmEpilogue::Gelu: return "gelu";
    case GemmEpilogue::BiasGelu: return "bias-gelu";
  }
  return "none";
}

std::string layout_name(const GemmProblem& p) { return std::string(p.trans_a ? "t" : "n") + (p.trans_b ? "t" : "n"); }

GemmProblem problem_from(const Point& point) { return spec_from(point).problem; }

GemmCaseSpec spec_from(const Point& point) {
  GemmCaseSpec s;
  s.provider = point.text_or("provider", "cublas");
  GemmProblem& p = s.problem;
  p.m = point.integer("m");
  p.n = point.integer("n");
  p.k = point.integer("k");
  p.precision = parse_precision(point.text("dtype"));
  const std::string layout = point.text_or("layout", "nn");
  p.trans_a = layout[0] == 't';
  p.trans_b = layout[1] == 't';
  p.batch = point.integer_or("batch", 1);
  if (const std::int64_t pad = point.integer_or("pad", 0); pad > 0) {
    p.lda = (p.trans_a ? p.k : p.m) + pad;
    p.ldb = (p.trans_b ? p.n : p.k) + pad;
    p.ldc = p.m + pad;
  }
  p.alpha = std::stod(point.text_or("alpha", "1"));
  p.beta = std::stod(point.text_or("beta", "0"));
  p.epilogue = parse_epilogue(point.text_or("epilogue", "none"));
  if (is_fp8(p.precision)) {
    // Per-tensor scales, powers of two so the reference stays exact; their product (2) is not
    // 1, so a provider that ignored them, or applied one twice, fails verification.
    p.scale_a = 0.5;
    p.scale_b = 4.0;
  }
  s.fusion = point.text_or("fusion", "fused") == "separate" ? Fusion::Separate : Fusion::Fused;
  s.threads = static_cast<int>(point.integer_or("threads", 0));
  s.op = point.text_or("op", "gemm") == "grouped" ? GemmOp::Grouped : GemmOp::Gemm;
  s.grouped.experts = point.integer_or("experts", 8);
  s.grouped.routing = parse_routing(point.text_or("routing", "uniform")).value_or(Routing::Uniform);
  return s;
}

// ---- Support matrix ----

namespace {

// MXFP8 and NVFP4 (issue 30): what the device lacks first (the CPU, a GPU before Blackwell, a
// build whose CUDA toolkit has no block scaling), then what the provider and problem need:
// cuBLASLt's heuristic algorithm (provider=cublaslt), TN, K in whole blocks, and the one plain
// product the case measures (gemm_blockscaled_cublaslt.cpp).
std::optional<std::string> block_scaled_unsupported(const DeviceInfo& device, const GemmCaseSpec& spec) {
  const GemmProblem& p = spec.problem;
  const std::string dtype = precision_name(p.precision);
  if (!device.is_cuda()) {
    return fmt::format("{} is a block-scaled Tensor Core format: the CPU has no block-scaled matrix unit (cuBLASLt runs "
                       "it on sm_100 and sm_120 GPUs, CUDA 12.8+)",
                       dtype);
  }
  const int cc = device.cc_major * 10 + device.cc_minor;
  if (cc < 100) {
    return fmt::format("{} needs block-scaled Tensor Cores (sm_100 or sm_120, CUDA 12.8+); this GPU is sm_{}", dtype, cc);
  }
  if (!block_scaled_gemm_built()) {
    return fmt::format("{} needs cuBLASLt's block scaling (CUDA 12.8+), which this build's toolkit lacks ({})", dtype,
                       block_scaled_toolkit());
  }
  if (spec.provider != "cublaslt") {
    return fmt::format("{} runs through cuBLASLt's block scaling with its heuristic algorithm only (provider=cublaslt)", dtype);
  }
  if (!p.trans_a || p.trans_b) return fmt::format("cuBLASLt runs {} only in the TN layout (layout=tn: A transposed, B not)", dtype);
  const int block = p.precision == GemmPrecision::MXFP8 ? 32 : 16;
  if (p.k % block != 0) return fmt::format("{} quantises K in blocks of {}: k={} is not a multiple", dtype, block, p.k);
  if (p.batch != 1) return fmt::format("{} GEMMs are measured one product per call (batch=1)", dtype);
  if (p.lda != 0 || p.ldb != 0 || p.ldc != 0) return fmt::format("{} GEMMs take packed operands (pad=0)", dtype);
  if (p.epilogue != GemmEpilogue::None) return fmt::format("{} GEMMs are measured without an epilogue (epilogue=none)", dtype);
  if (p.beta != 0) return fmt::format("{} GEMMs are measured with beta=0 (D = alpha A B)", dtype);
  constexpr std::int64_t kIntMax = std::numeric_limits<std::int32_t>::max();
  if (std::max({p.m, p.n, p.k}) > kIntMax) return "cuBLAS takes 32-bit dimensions and leading dimensions";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> gemm_unsupported(const DeviceInfo& device, const GemmCaseSpec& spec) {
  const std::string& provider = spec.provider;
  const GemmProblem& p = spec.problem;
  const std::string dtype = precision_name(p.precision);
  const bool has_epilogue = p.epilogue != GemmEpilogue::None;

  if (spec.op == GemmOp::Grouped) {
    if (std::optional<std::string> why = grouped_unsupported(device, spec)) return why;
  }
  if (kernels::gemm_is_block_scaled(p.precision)) return block_scaled_unsupported(device, spec);
  if (provider == "openblas") {
    if (device.is_cuda()) return "openblas runs on the CPU";
    if (p.precision != GemmPrecision::FP32 && p.precision != GemmPrecision::FP64) {
      return fmt::format("OpenBLAS has no {} GEMM", dtype);
    }
    if (has_epilogue) return "epilogues are measured on GPUs only";
    return std::nullopt;
  }
  const bool builtin = std::find(builtin_providers().begin(), builtin_providers().end(), provider) != builtin_providers().end();
  if (!builtin && !is_custom(provider)) return fmt::format("unknown provider {}", provider);
  if (!device.is_cuda()) return fmt::format("{} needs a CUDA device", provider);
  if (device.cc_major < 8) {
    return fmt::format("compute capability {}.{}: gpubench targets sm_80 and newer", device.cc_major, device.cc_minor);
  }
  constexpr std::int64_t kIntMax = std::numeric_limits<std::int32_t>::max();
  const std::int64_t biggest = std::max({p.m, p.n, p.k, kernels::gemm_lda(p), kernels::gemm_ldb(p), kernels::gemm_ldc(p), p.batch});
  if (biggest > kIntMax) return "cuBLAS takes 32-bit dimensions and leading dimensions";
  if (kernels::gemm_is_integer(p.precision) && (p.alpha != std::floor(p.alpha) || p.beta != std::floor(p.beta))) {
    return "int8 GEMMs take integer alpha and beta (int32 scale type)";
  }
  if (has_epilogue && kernels::gemm_is_integer(p.precision)) return "epilogues need a floating-point output (int8 writes int32)";
  if (is_fp8(p.precision) && device.cc_major * 10 + device.cc_minor < 89) {
    return fmt::format("{} needs compute capability 8.9 or newer (this GPU is {}.{})", dtype, device.cc_major, device.cc_minor);
  }

  if (provider == "cublas") {
    if (is_fp8(p.precision)) return "cublasGemmEx has no fp8 GEMM (provider=cublaslt has)";
    if (has_epilogue && spec.fusion == Fusion::Fused) {
      return "cuBLAS has no fused epilogues (provider=cublaslt fuses; fusion=separate measures cuBLAS + an elementwise kernel)";
    }
    return std::nullopt;
  }
  if (provider == "cublaslt" || provider == "cublaslt-tuned") {
    // cuBLASLt docs (cublasLtMatmul): fp8 and int8 (IMMA, regular column order) need A
    // transposed and B not.
    if ((is_fp8(p.precision) || kernels::gemm_is_integer(p.precision)) && (!p.trans_a || p.trans_b)) {
      return fmt::format("cuBLASLt runs {} only in the TN layout (layout=tn: A transposed, B not)", dtype);
    }
    return std::nullopt;
  }
  // custom:<variant>
  if (has_epilogue) return "gpubench's own kernels compute plain GEMMs (epilogue=none)";
  return custom_unsupported(device, p, provider.substr(std::string(kCustomPrefix).size()));
}

std::optional<std::string> grouped_unsupported(const DeviceInfo& device, const GemmCaseSpec& spec) {
  const GemmProblem& p = spec.problem;
  if (spec.provider != "openblas" && spec.provider != "cublaslt") {
    return fmt::format("op=grouped runs through cuBLASLt on GPUs (provider=cublaslt) and OpenBLAS on the CPU; {} has no "
                       "grouped path in gpubench",
                       spec.provider);
  }
  if (p.batch != 1) return "op=grouped routes the tokens over experts: batch=1 only (the experts are its batch)";
  if (p.lda != 0 || p.ldb != 0 || p.ldc != 0) return "op=grouped takes packed operands (pad=0)";
  if (p.epilogue != GemmEpilogue::None) return "op=grouped computes plain GEMMs (epilogue=none)";
  if (device.is_cuda() && spec.provider == "cublaslt") {
    switch (p.precision) {
      case GemmPrecision::FP64:
      case GemmPrecision::FP32:
      case GemmPrecision::TF32:
      case GemmPrecision::FP16:
      case GemmPrecision::BF16:
      case GemmPrecision::FP16_ACC16: break;
      default:
        return fmt::format("op=grouped on GPUs runs fp64, fp32, tf32, fp16, bf16 and fp16-acc16; {} is not built for it yet",
                           precision_name(p.precision));
    }
  }
  return std::nullopt;
}

// ---- Metrics ----

std::string peak_key(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::FP64: return "fp64_tensor";  // cuBLAS DGEMM uses DMMA where the GPU has it
    case GemmPrecision::FP32: return "fp32";
    case GemmPrecision::TF32: return "tf32_tensor";
    case GemmPrecision::FP16:
    case GemmPrecision::FP16_ACC16: return "fp16_tensor";  // datasheets give one dense fp16 figure
    case GemmPrecision::BF16: return "bf16_tensor";
    case GemmPrecision::FP8_E4M3:
    case GemmPrecision::FP8_E5M2:
    case GemmPrecision::MXFP8: return "fp8_tensor";  // block-scaled fp8 runs at the fp8 rate
    case GemmPrecision::NVFP4: return "fp4_tensor";
    case GemmPrecision::INT8: return "int8_tensor";
  }
  return "";
}

double gemm_flops(const GemmProblem& p) {
  const double mn = static_cast<double>(p.m) * static_cast<double>(p.n);
  return static_cast<double>(p.batch) * (2.0 * mn * static_cast<double>(p.k) + (p.beta != 0 ? 2.0 * mn : 0.0));
}

Metrics gemm_metrics(const GemmProblem& p, bool separate_c) {
  const kernels::GemmStorages st = kernels::gemm_storages(p.precision);
  const double sa = static_cast<double>(kernels::storage_bytes(st.a)), sb = static_cast<double>(kernels::storage_bytes(st.b));
  const double sc = static_cast<double>(kernels::storage_bytes(st.c));
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n), k = static_cast<double>(p.k);
  const bool has_bias = p.epilogue == GemmEpilogue::Bias || p.epilogue == GemmEpilogue::BiasGelu;
  Metrics out;
  out.flops = gemm_flops(p);
  // Minimal traffic: every operand once (C only when beta reads it), D written once.
  out.bytes = static_cast<double>(p.batch) * (m * k * sa + k * n * sb + (p.beta != 0 ? m * n * sc : 0.0) + m * n * sc) +
              (has_bias ? m * sc : 0.0);
  out.footprint_bytes = static_cast<double>(kernels::gemm_a_elements(p)) * sa +
                        static_cast<double>(kernels::gemm_b_elements(p)) * sb +
                        static_cast<double>(kernels::gemm_c_elements(p)) * sc * (separate_c ? 2.0 : 1.0) +
                        (has_bias ? m * sc : 0.0);
  out.peak_key = peak_key(p.precision);
  out.integer_ops = kernels::gemm_is_integer(p.precision);
  return out;
}

Verification to_verification(const kernels::GemmCheckResult& r, const std::string& method) {
  Verification v;
  v.passed = r.passed;
  v.checked = r.checked;
  v.max_error = r.max_error;
  v.method = method;
  v.detail = r.detail;
  return v;
}

// ---- Run settings ----

namespace {
GemmRunSettings& mutable_settings() {
  static GemmRunSettings s;
  return s;
}
}  // namespace

void configure(GemmRunSettings settings) { mutable_settings() = std::move(settings); }
const GemmRunSettings& settings() { return mutable_settings(); }

std::unique_ptr<Suite> make_suite() { return std::make_unique<GemmSuite>(); }

}  // namespace gpubench::suites::gemm
