#pragma once
// What each --load runs, as a case of an existing suite (no kernel of its own):
//   gemm    the gemm suite. GPUs: cuBLASLt, TN, m=n=k=8192, in the Tensor Core precision with the
//           highest datasheet peak (data/gpus.json) that the device and build support; the CPU:
//           OpenBLAS sgemm, m=n=k=1024.
//   memory  the memory suite's triad. GPUs: three arrays over about 3/4 of device memory; the
//           CPU: three 64 MiB arrays (well beyond the last-level cache; not most of host memory,
//           which would page out the machine's other work).
//   train   the train suite's transformer step at its quick preset (GPUs: bf16-amp where
//           supported, else fp32; the CPU: fp32 through the reference).
//   mixed   the three in turn, one sample interval each.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/core/plan.hpp"

namespace gpubench::soak {

using PeakLookup = std::function<std::optional<double>(const std::string& device_name, const std::string& peak_key)>;

// "gemm" -> {"gemm"}, "mixed" -> {"gemm", "memory", "train"}; UsageError for another name.
std::vector<std::string> parse_load(const std::string& text);

// The gemm precisions the suite plans on the device, best first, each with why it was chosen:
// the Tensor Core precisions with a datasheet peak, highest peak first (ties: fp8 before int8
// before bf16 before fp16 before tf32), then bf16, fp16, tf32, fp32 where not listed already.
// The soak runs the first; a precision the library refuses at run time (cuBLASLt "not
// supported" in setup) gives way to the next, so the soak never stops for what the plan could
// not know.
struct GemmChoice {
  std::string dtype, why;
};
std::vector<GemmChoice> gemm_dtype_choices(const DeviceInfo& device, const PeakLookup& peak);
// The first of gemm_dtype_choices ("fp32" when none); `why` says how it was chosen.
std::string choose_gemm_dtype(const DeviceInfo& device, const PeakLookup& peak, std::string* why = nullptr);
// The gemm load's case in `dtype` (skip_reason set when the device cannot run it).
PlannedCase plan_gemm_load(const DeviceInfo& device, const std::string& dtype);

// The planned case `load` runs on `device` (skip_reason set when the device cannot run it).
PlannedCase plan_load(const std::string& load, const DeviceInfo& device, const PeakLookup& peak);

}  // namespace gpubench::soak
