#include <fmt/format.h>

#include "bench/suites/gemm/gemm.hpp"

namespace gpubench::suites::gemm {
namespace {

class GemmSuite final : public Suite {
 public:
  std::string name() const override { return "gemm"; }
  std::string description() const override {
    return "Dense matrix product D = alpha*A*B + beta*C: cuBLAS (cublasGemmEx) on GPUs, OpenBLAS on the CPU";
  }

  std::vector<AxisSpec> axes() const override {
    return {
        {"m", AxisKind::Int, "rows of A and D", {}, 1},
        {"n", AxisKind::Int, "columns of B and D (default @m: same as m)", {}, 1},
        {"k", AxisKind::Int, "columns of A, rows of B (default @m: same as m)", {}, 1},
        {"dtype", AxisKind::Enum, "element type; 16-bit types and tf32 accumulate in fp32",
         {"fp64", "fp32", "tf32", "fp16", "bf16"}, 1},
        {"provider", AxisKind::Enum, "who computes: cublas (GPU), openblas (CPU), custom:<kernel> (gpubench's own GPU kernels)",
         providers(), 1},
    };
  }

  static std::vector<std::string> providers() {
    std::vector<std::string> p = {"cublas", "openblas"};
    for (std::string& c : custom_providers()) p.push_back(std::move(c));
    return p;
  }

  // GPU providers on CUDA devices, OpenBLAS on the CPU; other pairs do not exist.
  bool applies(const DeviceInfo& device, const Point& point) const override {
    return device.is_cuda() == (point.text("provider") != "openblas");
  }

  std::vector<Preset> presets() const override {
    return {
        {"quick",
         {{"m", "1024,4096,8192"}, {"n", "@m"}, {"k", "@m"}, {"dtype", "fp32,tf32,fp16,bf16"}, {"provider", "cublas"}},
         {{"m", "256,1024"}, {"n", "@m"}, {"k", "@m"}, {"dtype", "fp32,fp64"}, {"provider", "openblas"}}},
        {"standard",
         {{"m", "256:16384:x2"}, {"n", "@m"}, {"k", "@m"}, {"dtype", "fp64,fp32,tf32,fp16,bf16"}, {"provider", "cublas"}},
         {{"m", "256:2048:x2"}, {"n", "@m"}, {"k", "@m"}, {"dtype", "fp32,fp64"}, {"provider", "openblas"}}},
        {"full",
         {{"m", "128:32768:x2"}, {"n", "@m"}, {"k", "@m"}, {"dtype", "fp64,fp32,tf32,fp16,bf16"}, {"provider", "cublas"}},
         {{"m", "128:4096:x2"}, {"n", "@m"}, {"k", "@m"}, {"dtype", "fp32,fp64"}, {"provider", "openblas"}}},
    };
  }

  std::optional<std::string> unsupported(const DeviceInfo& device, const Point& point) const override {
    const std::string& dtype = point.text("dtype");
    if (!device.is_cuda()) {
      if (dtype != "fp32" && dtype != "fp64") return fmt::format("OpenBLAS has no {} GEMM", dtype);
      return std::nullopt;
    }
    if (device.cc_major < 8) {
      return fmt::format("compute capability {}.{}: gpubench targets sm_80 and newer", device.cc_major, device.cc_minor);
    }
    constexpr std::int64_t kIntMax = 0x7fffffff;
    if (point.integer("m") > kIntMax || point.integer("n") > kIntMax || point.integer("k") > kIntMax) {
      return "cublasGemmEx takes 32-bit dimensions";
    }
    const std::string& provider = point.text("provider");
    if (provider.rfind("custom:", 0) == 0) return custom_unsupported(device, problem_from(point), provider.substr(7));
    return std::nullopt;
  }

  std::unique_ptr<Case> make_case(const DeviceInfo& device, const Point& point) const override {
    const GemmProblem problem = problem_from(point);
    const std::string& provider = point.text("provider");
    if (provider.rfind("custom:", 0) == 0) return make_custom_case(device, problem, provider.substr(7));
    if (device.is_cuda()) return make_cublas_case(device, problem);
    return make_openblas_case(problem);
  }

  nlohmann::ordered_json summarize(const std::vector<nlohmann::ordered_json>& entries) const override {
    return summarize_custom_vs_cublas(entries);
  }

  nlohmann::ordered_json libraries() const override {
    return {{"cublas", cublas_version()}, {"openblas", openblas_version()}};
  }
};

}  // namespace

GemmPrecision parse_precision(const std::string& dtype) {
  if (dtype == "fp64") return GemmPrecision::FP64;
  if (dtype == "fp32") return GemmPrecision::FP32;
  if (dtype == "tf32") return GemmPrecision::TF32;
  if (dtype == "fp16") return GemmPrecision::FP16;
  if (dtype == "bf16") return GemmPrecision::BF16;
  throw std::logic_error("gemm: unknown dtype " + dtype);
}

std::string peak_key(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::FP64: return "fp64_tensor";  // cuBLAS DGEMM uses DMMA where the GPU has it
    case GemmPrecision::FP32: return "fp32";
    case GemmPrecision::TF32: return "tf32_tensor";
    case GemmPrecision::FP16: return "fp16_tensor";
    case GemmPrecision::BF16: return "bf16_tensor";
  }
  return "";
}

GemmProblem problem_from(const Point& point) {
  GemmProblem p;
  p.m = point.integer("m");
  p.n = point.integer("n");
  p.k = point.integer("k");
  p.precision = parse_precision(point.text("dtype"));
  return p;
}

double gemm_flops(const GemmProblem& p) {
  const double mn = static_cast<double>(p.m) * static_cast<double>(p.n);
  return 2.0 * mn * static_cast<double>(p.k) + (p.beta != 0 ? 2.0 * mn : 0.0);
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

std::unique_ptr<Suite> make_suite() { return std::make_unique<GemmSuite>(); }

}  // namespace gpubench::suites::gemm
