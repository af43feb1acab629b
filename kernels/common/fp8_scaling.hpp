#pragma once
// Per-tensor current scaling for fp8 GEMM inputs (Transformer Engine's "current scaling"
// recipe, issue 30): before a GEMM, the tensor's amax (largest |x|) is reduced, the scale
// s = fp8_max / amax maps it onto the format's largest finite value, each x is stored as
// fp8(x * s) (round to nearest even, saturating), and the GEMM is given 1 / s to undo it.
// E4M3 (max 448) for activations and weights, E5M2 (max 57344) for gradients.
//
// The scale is computed here once, for the host emulation (kernels/train/ops_reference.cpp)
// and the device kernels (fp8_scaling.cu) alike, so both see the same float. An amax of 0
// (an all-zero tensor) or one that is not finite gets the scale 1: the codes are then the
// saturated values themselves, and a step that produced inf or NaN is already lost.
#include "kernels/common/float_formats.hpp"
#include "kernels/common/random.hpp"  // GPUBENCH_HD

namespace gpubench::kernels {

// The largest finite value of an fp8 format (OCP 8-bit floats; CUDA's __nv_fp8_e4m3/e5m2).
GPUBENCH_HD inline double fp8_max(Storage format) { return format == Storage::E5M2 ? 57344.0 : 448.0; }

// fp8_max / amax rounded once to float (the fp32 scale an fp8 GEMM's recipe keeps).
GPUBENCH_HD inline float fp8_scale(double amax, double max_value) {
  const bool usable = amax > 0.0 && amax <= 1.7976931348623157e308;  // false for 0, inf and NaN
  return usable ? static_cast<float>(max_value / amax) : 1.0f;
}

}  // namespace gpubench::kernels
