#pragma once
// Verification of a data-parallel step (pure; the CPU case and the tests call it):
// - every rank's parameters are bit-identical: ranks exchange a checksum of their flat buffer;
// - rank 0's averaged gradients and parameters after one step equal, within tolerance, those
//   of one single-rank reference step over the whole global batch.
#include <optional>
#include <string>
#include <vector>

#include "bench/core/case.hpp"
#include "bench/suites/train/verify.hpp"
#include "kernels/train/ops_reference.hpp"

namespace gpubench::suites::train {

// 64-bit FNV-1a over the bytes of n floats, as 16 hex digits.
std::string params_checksum(const float* p, std::int64_t n);

// nullopt when every rank's checksum equals rank 0's; otherwise names the ranks that differ.
std::optional<std::string> checksum_mismatch(const std::vector<std::string>& per_rank);

// Parameters after the first AdamW step from `init` (same for both) against the reference's
// `want`, given the reference's gradients `ref_grads` (all over layout.total entries; longer
// vectors are compared up to it). At t = 1 AdamW moves a parameter by
//   -lr * (wd * p + u(g)),   u(g) = g / (|g| + eps)
// so a gradient known to within tau = rtol |g| + atol max|g of the tensor| (the gradient
// tolerance) moves it within lr * |u(g + d) - u(g)|, |d| <= tau: at most
//   tau * eps / (|g| - tau + eps)^2  when tau < |g|,  and 2 (the sign may flip) otherwise.
// Tolerance per entry: lr * (that bound + 1e-4) + 1e-6 |want| (the 1e-4 and 1e-6 cover fp32
// rounding of the update and of the parameter). Entries whose gradient is known are thus held
// to a fraction of lr; entries whose gradient is lost in rounding only to 2 lr.
// max_error is the largest |got - want| / tolerance; the detail names the first bad entry.
Verification compare_dp_params(const std::vector<float>& got, const std::vector<float>& want,
                               const std::vector<float>& init, const std::vector<float>& ref_grads,
                               const kernels::train::ParamLayout& layout, const kernels::train::AdamW& hp,
                               const GradTolerance& tol);

}  // namespace gpubench::suites::train
