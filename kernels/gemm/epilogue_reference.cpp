#include "kernels/gemm/epilogue_reference.hpp"

#include <cmath>

namespace gpubench::kernels {

double gelu_tanh(double x) { return 0.5 * x * (1.0 + std::tanh(kGeluSqrt2OverPi * (x + kGeluCubic * x * x * x))); }

double apply_epilogue(double x, double bias, bool has_bias, bool gelu) {
  const double v = has_bias ? x + bias : x;
  return gelu ? gelu_tanh(v) : v;
}

}  // namespace gpubench::kernels
