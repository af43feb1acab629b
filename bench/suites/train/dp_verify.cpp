#include "bench/suites/train/dp_verify.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gpubench::suites::train {

std::string params_checksum(const float* p, std::int64_t n) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(p);
  const std::size_t count = static_cast<std::size_t>(n) * sizeof(float);
  for (std::size_t i = 0; i < count; ++i) {
    h ^= bytes[i];
    h *= 0x100000001b3ull;
  }
  return fmt::format("{:016x}", h);
}

std::optional<std::string> checksum_mismatch(const std::vector<std::string>& per_rank) {
  std::vector<int> differ;
  for (std::size_t r = 1; r < per_rank.size(); ++r) {
    if (per_rank[r] != per_rank[0]) differ.push_back(static_cast<int>(r));
  }
  if (differ.empty()) return std::nullopt;
  return fmt::format("parameters after one step are not identical on every rank: rank{} {} differ{} from rank 0 "
                     "(checksum {} vs {})",
                     differ.size() > 1 ? "s" : "", fmt::join(differ, ", "), differ.size() > 1 ? "" : "s",
                     per_rank[static_cast<std::size_t>(differ[0])], per_rank[0]);
}

Verification compare_dp_params(const std::vector<float>& got, const std::vector<float>& want,
                               const std::vector<float>& init, const std::vector<float>& ref_grads,
                               const kernels::train::ParamLayout& layout, const kernels::train::AdamW& hp,
                               const GradTolerance& tol) {
  Verification v;
  v.method = "parameters after one step against one single-rank step over the global batch (AdamW's sensitivity "
             "to the gradient tolerance)";
  const auto total = static_cast<std::size_t>(layout.total);
  if (got.size() < total || want.size() < total || init.size() < total || ref_grads.size() < total) {
    v.detail = "parameter buffers shorter than the layout";
    return v;
  }
  v.passed = true;
  for (const kernels::train::ParamTensor& t : layout.tensors) {
    const auto begin = static_cast<std::size_t>(t.offset), end = begin + static_cast<std::size_t>(t.size);
    double gmax = 0;
    for (std::size_t i = begin; i < end; ++i) gmax = std::max(gmax, std::abs(static_cast<double>(ref_grads[i])));
    for (std::size_t i = begin; i < end; ++i) {
      const double g = std::abs(static_cast<double>(ref_grads[i]));
      const double tau = tol.rtol * g + tol.atol * gmax;
      const double d = g - tau + hp.eps;
      const double bound = tau < g ? std::min(2.0, tau * hp.eps / (d * d)) : 2.0;
      const double w = want[i];
      const double allowed = hp.lr * (bound + 1e-4) + 1e-6 * std::abs(w);
      const double err = std::abs(static_cast<double>(got[i]) - w) / allowed;
      ++v.checked;
      if (!(err <= v.max_error)) v.max_error = std::isfinite(err) ? err : 1e300;
      if (!(err <= 1) && v.passed) {
        v.passed = false;
        v.detail = fmt::format("{}[{}]: {} after the step, single-rank reference {} (from {}, gradient {}; allowed "
                               "difference {:.3g})",
                               t.name, i - begin, got[i], w, init[i], ref_grads[i], allowed);
      }
    }
  }
  return v;
}

}  // namespace gpubench::suites::train
