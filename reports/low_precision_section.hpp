#pragma once
// The report's "Low precision" section (issue 30): where a file holds fp8 and bf16 of the same
// work on one device, what fp8 buys, as Megatron-LM and Transformer Engine users measure it:
//   GEMM-only speed-up  the gemm suite's GEMMs measured in both dtypes (every axis equal but dtype,
//                       fp8-e4m3 against bf16): sum of bf16 times over sum of fp8 times, per
//                       device, provider and model (or shape set);
//   step speed-up       train cases that differ only in precision=bf16-amp|fp8: tokens/s ratio;
//   not sped up         the bf16 step's share outside its dense GEMMs (1 - dense_gemm_fraction of
//                       its step split: attention, norms, optimizer, communication), which fp8's
//                       GEMMs leave as they are, and the step speed-up Amdahl's law allows from it
//                       and the device's GEMM-only speed-up: 1 / ((1 - f) + f / s);
//   block-scaled        the gemm suite's mxfp8 / nvfp4 cases: GEMM-only TFLOP/s, TFLOP/s with the
//                       quantisation of both inputs from bf16, and quantize_overhead_pct.
#include <vector>

#include "reports/document.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::reports {

// Nothing when no device has both dtypes of anything and no block-scaled GEMM was measured.
void low_precision_section(Document& doc, const std::vector<ResultsFile>& files);

}  // namespace gpubench::reports
