#pragma once
// Verification of a training step: gradients and loss compared with the double reference.
//
// Tolerances, per entry: |got - want| <= rtol * |want| + atol * max|want over the tensor|
// (the second term keeps entries near zero, whose relative error means nothing, from failing
// a correct step), and for the loss |got - want| <= kLossTolerance * (1 + |want|).
//   precision   rtol   atol   loss
//   fp32        1e-3   1e-3   1e-4   (the CPU reference and the GPU fp32 path)
//   tf32        2e-2   1e-2   2e-3   (10-bit mantissa products, fp32 accumulation)
//   bf16-amp    1e-1   5e-2   2e-2   (8-bit mantissa activations and weights)
//   fp16-amp    5e-2   2e-2   1e-2   (11-bit mantissa, loss-scaled gradients)
//   fp8         2.5e-1 2e-1   5e-2   (against the reference under the same fp8 emulation,
//                                     reference_linear_inputs: the codes differ only where the
//                                     GPU's bf16 activations move a value or an amax across a
//                                     rounding boundary, one E4M3 step being 12.5% of the value
//                                     and one E5M2 step 25%. Calibrated on the CPU: the whole
//                                     fp8 error, emulated against exact, uses 0.71 of it on the
//                                     tiny transformer and 0.67 on the mlp; a descale applied
//                                     twice or not at all fails it (test_train_suite.cpp))
// The low-precision rows follow each format's unit roundoff times the few roundings an entry
// goes through on the tiny configuration; they have not yet been calibrated on a GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "bench/core/case.hpp"
#include "kernels/train/model_config.hpp"
#include "kernels/train/ops_reference.hpp"

namespace gpubench::suites::train {

inline constexpr std::uint64_t kModelSeed = 1;
inline constexpr std::uint64_t kBatchSeed = 100;
inline constexpr double kLossTolerance = 1e-4;

struct GradTolerance {
  double rtol = 1e-3, atol = 1e-3;
};
enum class Precision;
GradTolerance grad_tolerance(Precision p);
double loss_tolerance(Precision p);

// A tiny configuration with the structure of `c` (same model, accumulation up to 2 micro-steps,
// same recompute): layers <= 2, hidden 16, 2 heads, ffn_mult <= 4, seq 8, micro-batch 2,
// vocab <= 64.
kernels::train::ModelConfig tiny_config(const kernels::train::ModelConfig& c);
// The tiny configuration a GPU step of precision `p` is verified on (fp8: rows in multiples of
// 16). A transformer with fused attention (cuDNN's SDPA, whose engines are tested from head
// dimension 32 up) keeps the benchmark's own head dimension, two heads of it (hidden
// 2 x head_dim), and kFusedVerifySeq tokens.
inline constexpr std::int64_t kFusedVerifySeq = 32;
kernels::train::ModelConfig tiny_config(const kernels::train::ModelConfig& c, Precision p);

// cuDNN refused a step's fused attention graph at run time (`why`, its reason). A point whose
// attention was left to the preset or default falls back to unfused and says so in the point
// (fall_back, with the note for the results); an explicit --axis attention=fused is a skip with
// the reason (note). As resolve() does for what is known at planning time.
struct FusedRefusal {
  bool fall_back = false;
  std::string note;
};
FusedRefusal on_fused_refused(bool attention_given, const std::string& why);
// How the reference emulates the GEMM inputs of a step of precision `p` (Fp8 for fp8, whose
// recipe is part of the answer; Exact otherwise, the other precisions being held to the exact
// step with their tolerance). Apply with kernels::train::ScopedLinearInputs.
kernels::train::LinearInputs reference_linear_inputs(Precision p);

// Bytes a model of `c` holds with elements of `element_bytes`, estimated in double (no overflow
// for absurd sizes): parameters, gradients, two AdamW moments and the activations kept.
double estimated_bytes(const kernels::train::ModelConfig& c, std::size_t element_bytes);

// Compares gradients tensor by tensor; the detail names the first bad tensor and entry.
Verification compare_gradients(const std::vector<double>& got, const std::vector<double>& want,
                               const kernels::train::ParamLayout& layout, const GradTolerance& tol);

// The largest |got - other| over each tensor's largest |other| (each tensor at its own scale),
// over every tensor of `layout`.
double normalized_distance(const std::vector<double>& got, const std::vector<double>& other,
                           const kernels::train::ParamLayout& layout);
// An fp8 step that silently ran in bf16 would pass the fp8 tolerance too: the fp8 step's
// gradients must also differ from the bf16 step's (same model, same batches) by at least
// kFp8DistinctFloor of each tensor's scale. Calibrated on the CPU (test_train_suite.cpp): the
// fp8 emulation moves the tiny models' gradients 0.15-0.19 from the bf16 emulation's, while the
// whole of bf16's rounding (the bf16 emulation against the exact step, far more than two bf16
// GPU steps differ by) moves them 0.006-0.008.
inline constexpr double kFp8DistinctFloor = 3e-2;
Verification fp8_differs_from_bf16(const std::vector<double>& fp8, const std::vector<double>& bf16,
                                   const kernels::train::ParamLayout& layout);

// One step of the tiny configuration of `c` in float against double: loss and every gradient.
Verification verify_tiny_step_cpu(const kernels::train::ModelConfig& c);

}  // namespace gpubench::suites::train
