#pragma once
// Elementwise GEMM epilogues, the math shared by the reference and by the separate (unfused)
// kernel in epilogue.cu:
//   bias:      y = x + bias[i]            (bias indexed by D's row)
//   gelu:      y = gelu(x)
//   bias-gelu: y = gelu(x + bias[i])
// with GELU in its tanh form (Hendrycks & Gimpel, "Gaussian Error Linear Units", 2016, eq. for
// the approximation), the form cuBLASLt's GELU epilogues and most training frameworks use:
//   gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
namespace gpubench::kernels {

inline constexpr double kGeluSqrt2OverPi = 0.7978845608028654;  // sqrt(2 / pi)
inline constexpr double kGeluCubic = 0.044715;

double gelu_tanh(double x);
// y for one element: `bias` is ignored unless has_bias.
double apply_epilogue(double x, double bias, bool has_bias, bool gelu);

}  // namespace gpubench::kernels
