#pragma once
// The `gemm` suite: D = alpha * A * B + beta * C, column-major, through cuBLAS on CUDA devices
// and OpenBLAS on the CPU. Axes m, n, k (n and k default to "@m": square problems) and dtype.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/core/suite.hpp"
#include "kernels/gemm/gemm_reference.hpp"

namespace gpubench::suites::gemm {

using kernels::GemmPrecision;
using kernels::GemmProblem;

GemmPrecision parse_precision(const std::string& dtype);
// The datasheet figure a precision is compared with (data/gpus.json peak keys).
std::string peak_key(GemmPrecision p);
GemmProblem problem_from(const Point& point);
double gemm_flops(const GemmProblem& p);  // 2 m n k (+ the beta term's 2 m n when beta != 0)

std::unique_ptr<Suite> make_suite();

// Providers, one file each.
std::unique_ptr<Case> make_cublas_case(const DeviceInfo& device, const GemmProblem& problem);
std::unique_ptr<Case> make_openblas_case(const GemmProblem& problem);
std::string cublas_version();

// gpubench's own kernels, provider `custom:<variant>` (kernels/gemm/custom_gemm.hpp).
std::unique_ptr<Case> make_custom_case(const DeviceInfo& device, const GemmProblem& problem, const std::string& variant);
// Why `variant` cannot compute `problem` on `device` (skip reason), or nullopt.
std::optional<std::string> custom_unsupported(const DeviceInfo& device, const GemmProblem& problem, const std::string& variant);
// "custom:naive", ... in ladder order.
std::vector<std::string> custom_providers();
// summaries.gemm.custom_vs_cublas: each custom case as a % of cuBLAS on the same case.
nlohmann::ordered_json summarize_custom_vs_cublas(const std::vector<nlohmann::ordered_json>& entries);
std::string openblas_version();

// Turns a reference check into the harness's verification record.
Verification to_verification(const kernels::GemmCheckResult& r, const std::string& method);

}  // namespace gpubench::suites::gemm
