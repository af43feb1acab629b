#pragma once
// The GEMM tolerance model of gemm_reference.hpp as one host/device function, so the CPU check
// (check_gemm) and the device reference check (reference_gemm.cuh) accept exactly the same
// answers. See gemm_reference.hpp for the derivation of the three terms.
#include <cmath>

#include "kernels/common/random.hpp"  // GPUBENCH_HD

namespace gpubench::kernels {

// `ref`: the exact alpha*sum + beta*C; `s`: |alpha| * sqrt(sum of squared products);
// `c_term`: beta*C; `u_in`, `u_acc`, `u_out`: GemmUnitRoundoff of the precision.
GPUBENCH_HD inline double gemm_tolerance(double u_in, double u_acc, double u_out, double k, double ref, double s,
                                         double c_term) {
  return 8.0 * (u_out * fabs(ref) + (2.0 * u_in + u_acc * sqrt(k)) * s + u_out * fabs(c_term)) + 1e-300;
}

}  // namespace gpubench::kernels
