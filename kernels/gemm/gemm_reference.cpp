#include "kernels/gemm/gemm_reference.hpp"

#include <cmath>
#include <random>
#include <sstream>

#include "kernels/common/random.hpp"
#include "kernels/gemm/gemm_tolerance.hpp"

namespace gpubench::kernels {

Storage gemm_storage(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::FP64: return Storage::F64;
    case GemmPrecision::FP32:
    case GemmPrecision::TF32: return Storage::F32;
    case GemmPrecision::FP16: return Storage::F16;
    case GemmPrecision::BF16: return Storage::BF16;
  }
  return Storage::F32;
}

GemmUnitRoundoff gemm_unit_roundoff(GemmPrecision p) {
  // Unit roundoff u = 2^-(mantissa bits + 1) for round-to-nearest; TF32 conversion may
  // truncate, so its input term uses 2^-10. Tensor Core fp32 accumulation is not guaranteed
  // to round like IEEE adds, so 16-bit inputs get 2^-23 rather than 2^-24.
  switch (p) {
    case GemmPrecision::FP64: return {0.0, 0x1p-53, 0x1p-53};
    case GemmPrecision::FP32: return {0.0, 0x1p-24, 0x1p-24};
    case GemmPrecision::TF32: return {0x1p-10, 0x1p-23, 0x1p-24};
    case GemmPrecision::FP16: return {0.0, 0x1p-23, 0x1p-11};
    case GemmPrecision::BF16: return {0.0, 0x1p-23, 0x1p-8};
  }
  return {0, 0, 0};
}

double gemm_a(const GemmProblem& p, std::int64_t i, std::int64_t l) {
  return round_to_storage(gemm_storage(p.precision), uniform_value(p.seed_a, static_cast<std::uint64_t>(i + l * p.m)));
}
double gemm_b(const GemmProblem& p, std::int64_t l, std::int64_t j) {
  return round_to_storage(gemm_storage(p.precision), uniform_value(p.seed_b, static_cast<std::uint64_t>(l + j * p.k)));
}
double gemm_c(const GemmProblem& p, std::int64_t i, std::int64_t j) {
  return round_to_storage(gemm_storage(p.precision), uniform_value(p.seed_c, static_cast<std::uint64_t>(i + j * p.m)));
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
  const GemmUnitRoundoff u = gemm_unit_roundoff(p.precision);
  GemmCheckResult r;
  std::vector<double> a_row(static_cast<std::size_t>(p.k));
  std::int64_t cached_row = -1;
  for (const auto& [i, j] : entries) {
    if (i != cached_row) {
      for (std::int64_t l = 0; l < p.k; ++l) a_row[static_cast<std::size_t>(l)] = gemm_a(p, i, l);
      cached_row = i;
    }
    double sum = 0, sumsq = 0;
    for (std::int64_t l = 0; l < p.k; ++l) {
      const double prod = a_row[static_cast<std::size_t>(l)] * gemm_b(p, l, j);
      sum += prod;
      sumsq += prod * prod;
    }
    const double c_term = p.beta != 0 ? p.beta * gemm_c(p, i, j) : 0.0;
    const double ref = p.alpha * sum + c_term;
    const double s = std::abs(p.alpha) * std::sqrt(sumsq);
    const double tol = gemm_tolerance(u.u_in, u.u_acc, u.u_out, static_cast<double>(p.k), ref, s, c_term);
    const double got = d_value(i, j);
    const double err = std::isfinite(got) ? std::abs(got - ref) / tol : INFINITY;
    ++r.checked;
    if (!(err <= r.max_error)) {
      r.max_error = err;
      if (err > 1.0) {
        std::ostringstream os;
        os.precision(9);
        os << "D(" << i << "," << j << ") = " << got << ", expected " << ref << " (tolerance " << tol << ")";
        r.detail = os.str();
      }
    }
  }
  r.passed = r.max_error <= 1.0;
  return r;
}

}  // namespace gpubench::kernels
