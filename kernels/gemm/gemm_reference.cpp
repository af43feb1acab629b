#include "kernels/gemm/gemm_reference.hpp"

#include <cmath>
#include <random>
#include <sstream>

#include "kernels/common/random.hpp"
#include "kernels/gemm/epilogue_reference.hpp"
#include "kernels/gemm/gemm_tolerance.hpp"

namespace gpubench::kernels {

GemmStorages gemm_storages(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::FP64: return {Storage::F64, Storage::F64, Storage::F64};
    case GemmPrecision::FP32:
    case GemmPrecision::TF32: return {Storage::F32, Storage::F32, Storage::F32};
    case GemmPrecision::FP16:
    case GemmPrecision::FP16_ACC16: return {Storage::F16, Storage::F16, Storage::F16};
    case GemmPrecision::BF16: return {Storage::BF16, Storage::BF16, Storage::BF16};
    case GemmPrecision::FP8_E4M3: return {Storage::E4M3, Storage::E4M3, Storage::BF16};
    case GemmPrecision::FP8_E5M2: return {Storage::E5M2, Storage::E4M3, Storage::BF16};
    case GemmPrecision::INT8: return {Storage::I8, Storage::I8, Storage::I32};
    case GemmPrecision::MXFP8:
    case GemmPrecision::NVFP4: return {Storage::BF16, Storage::BF16, Storage::BF16};  // before quantisation
  }
  return {Storage::F32, Storage::F32, Storage::F32};
}

Storage gemm_storage(GemmPrecision p) { return gemm_storages(p).a; }

bool gemm_is_integer(GemmPrecision p) { return p == GemmPrecision::INT8; }

bool gemm_is_block_scaled(GemmPrecision p) { return p == GemmPrecision::MXFP8 || p == GemmPrecision::NVFP4; }

GemmUnitRoundoff gemm_unit_roundoff(GemmPrecision p) {
  // Unit roundoff u = 2^-(mantissa bits + 1) for round-to-nearest; TF32 conversion may
  // truncate, so its input term uses 2^-10. Tensor Core fp32 accumulation is not guaranteed
  // to round like IEEE adds, so 16-bit inputs get 2^-23 rather than 2^-24. fp16 accumulation:
  // 2^-11. fp8 Tensor Cores accumulate with fewer bits than fp32 between the library's
  // promotions to fp32 (about 14 on Hopper: DeepSeek-V3 technical report, 2024, sec. 3.3.2),
  // so fp8 gets 2^-13. Integer products and sums are exact.
  switch (p) {
    case GemmPrecision::FP64: return {0.0, 0x1p-53, 0x1p-53};
    case GemmPrecision::FP32: return {0.0, 0x1p-24, 0x1p-24};
    case GemmPrecision::TF32: return {0x1p-10, 0x1p-23, 0x1p-24};
    case GemmPrecision::FP16: return {0.0, 0x1p-23, 0x1p-11};
    case GemmPrecision::BF16: return {0.0, 0x1p-23, 0x1p-8};
    case GemmPrecision::FP16_ACC16: return {0.0, 0x1p-11, 0x1p-11};
    case GemmPrecision::FP8_E4M3:
    case GemmPrecision::FP8_E5M2: return {0.0, 0x1p-13, 0x1p-8};
    case GemmPrecision::INT8: return {0.0, 0.0, 0.0};
    // The quantised values are the inputs (emulated_gemm decodes them exactly); accumulation as
    // fp8's, output bf16.
    case GemmPrecision::MXFP8:
    case GemmPrecision::NVFP4: return {0.0, 0x1p-13, 0x1p-8};
  }
  return {0, 0, 0};
}

std::int64_t gemm_lda(const GemmProblem& p) { return p.lda != 0 ? p.lda : (p.trans_a ? p.k : p.m); }
std::int64_t gemm_ldb(const GemmProblem& p) { return p.ldb != 0 ? p.ldb : (p.trans_b ? p.n : p.k); }
std::int64_t gemm_ldc(const GemmProblem& p) { return p.ldc != 0 ? p.ldc : p.m; }

namespace {
std::size_t elements(std::int64_t batch, std::int64_t ld, std::int64_t cols) {
  return static_cast<std::size_t>(batch) * static_cast<std::size_t>(ld) * static_cast<std::size_t>(cols);
}
std::uint64_t stored_index(std::int64_t r, std::int64_t c, std::int64_t ld, std::int64_t cols, std::int64_t b) {
  return static_cast<std::uint64_t>(b * ld * cols + r + c * ld);
}
}  // namespace

std::size_t gemm_a_elements(const GemmProblem& p) { return elements(p.batch, gemm_lda(p), p.trans_a ? p.m : p.k); }
std::size_t gemm_b_elements(const GemmProblem& p) { return elements(p.batch, gemm_ldb(p), p.trans_b ? p.k : p.n); }
std::size_t gemm_c_elements(const GemmProblem& p) { return elements(p.batch, gemm_ldc(p), p.n); }

std::size_t gemm_d_index(const GemmProblem& p, std::int64_t i, std::int64_t j, std::int64_t b) {
  return static_cast<std::size_t>(stored_index(i, j, gemm_ldc(p), p.n, b));
}

double gemm_a(const GemmProblem& p, std::int64_t i, std::int64_t l, std::int64_t b) {
  const std::uint64_t idx = p.trans_a ? stored_index(l, i, gemm_lda(p), p.m, b) : stored_index(i, l, gemm_lda(p), p.k, b);
  return round_to_storage(gemm_storages(p.precision).a, uniform_value(p.seed_a, idx));
}
double gemm_b(const GemmProblem& p, std::int64_t l, std::int64_t j, std::int64_t b) {
  const std::uint64_t idx = p.trans_b ? stored_index(j, l, gemm_ldb(p), p.k, b) : stored_index(l, j, gemm_ldb(p), p.n, b);
  return round_to_storage(gemm_storages(p.precision).b, uniform_value(p.seed_b, idx));
}
double gemm_c(const GemmProblem& p, std::int64_t i, std::int64_t j, std::int64_t b) {
  return round_to_storage(gemm_storages(p.precision).c, uniform_value(p.seed_c, gemm_d_index(p, i, j, b)));
}
double gemm_bias(const GemmProblem& p, std::int64_t i) {
  return round_to_storage(gemm_storages(p.precision).c, uniform_value(p.seed_bias, static_cast<std::uint64_t>(i)));
}

std::vector<std::pair<std::int64_t, std::int64_t>> gemm_sample_entries(std::int64_t m, std::int64_t n,
                                                                       std::size_t max_samples) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  if (m <= 0 || n <= 0) return out;
  if (static_cast<double>(m) * static_cast<double>(n) <= static_cast<double>(max_samples)) {
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) out.emplace_back(i, j);
    return out;
  }
  out = {{0, 0}, {m - 1, 0}, {0, n - 1}, {m - 1, n - 1}};
  std::mt19937_64 rng(0x6770756265ull);  // fixed: the same entries on every run
  std::uniform_int_distribution<std::int64_t> row(0, m - 1), col(0, n - 1);
  while (out.size() < max_samples) out.emplace_back(row(rng), col(rng));
  return out;
}

GemmCheckResult check_gemm(const GemmProblem& p, const std::vector<std::pair<std::int64_t, std::int64_t>>& entries,
                           const std::function<double(std::int64_t, std::int64_t)>& d_value) {
  GemmProblem first = p;
  first.batch = 1;  // only batch 0 is read; the layout of batch 0 does not depend on the count
  return check_gemm_batched(first, entries, [&](std::int64_t i, std::int64_t j, std::int64_t) { return d_value(i, j); });
}

GemmCheckResult check_gemm_batched(const GemmProblem& p,
                                   const std::vector<std::pair<std::int64_t, std::int64_t>>& entries,
                                   const std::function<double(std::int64_t, std::int64_t, std::int64_t)>& d_value) {
  const GemmUnitRoundoff u = gemm_unit_roundoff(p.precision);
  const bool has_bias = p.epilogue == GemmEpilogue::Bias || p.epilogue == GemmEpilogue::BiasGelu;
  const bool gelu = p.epilogue == GemmEpilogue::Gelu || p.epilogue == GemmEpilogue::BiasGelu;
  const double alpha = p.alpha * p.scale_a * p.scale_b;  // scales are powers of two: exact
  GemmCheckResult r;
  std::vector<double> a_row(static_cast<std::size_t>(p.k));
  std::int64_t cached_row = -1, cached_batch = -1;
  std::int64_t e = 0;
  for (const auto& [i, j] : entries) {
    const std::int64_t b = p.batch > 1 ? e % p.batch : 0;
    ++e;
    if (i != cached_row || b != cached_batch) {
      for (std::int64_t l = 0; l < p.k; ++l) a_row[static_cast<std::size_t>(l)] = gemm_a(p, i, l, b);
      cached_row = i;
      cached_batch = b;
    }
    double sum = 0, sumsq = 0;
    for (std::int64_t l = 0; l < p.k; ++l) {
      const double prod = a_row[static_cast<std::size_t>(l)] * gemm_b(p, l, j, b);
      sum += prod;
      sumsq += prod * prod;
    }
    const double c_term = p.beta != 0 ? p.beta * gemm_c(p, i, j, b) : 0.0;
    const double x = alpha * sum + c_term;  // before the epilogue
    const double s = std::abs(alpha) * std::sqrt(sumsq);
    double tol = gemm_tolerance(u.u_in, u.u_acc, u.u_out, static_cast<double>(p.k), x, s, c_term);
    double ref = x;
    if (p.epilogue != GemmEpilogue::None) {
      const double bias = has_bias ? gemm_bias(p, i) : 0.0;
      ref = apply_epilogue(x, bias, has_bias, gelu);
      const double xb = std::abs(x + bias);
      tol = (gelu ? 1.13 : 1.0) * tol + 8.0 * (u.u_out * (xb + std::abs(ref)) + (gelu ? 0x1p-10 * xb : 0.0));
    }
    const double got = d_value(i, j, b);
    const double err = std::isfinite(got) ? std::abs(got - ref) / tol : INFINITY;
    ++r.checked;
    if (!(err <= r.max_error)) {
      r.max_error = err;
      if (err > 1.0) {
        std::ostringstream os;
        os.precision(9);
        os << "D(" << i << "," << j << ")";
        if (p.batch > 1) os << " of batch " << b;
        os << " = " << got << ", expected " << ref << " (tolerance " << tol << ")";
        r.detail = os.str();
      }
    }
  }
  r.passed = r.max_error <= 1.0;
  return r;
}

}  // namespace gpubench::kernels
