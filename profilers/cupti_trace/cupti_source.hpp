#pragma once
// The ActivitySource over CUPTI's Activity API: concurrent kernels, memcpy, memset, NVTX
// markers, runtime API calls (for correlation) and CUPTI's overhead records.
#include <memory>
#include <string>

#include "profilers/cupti_trace/activity.hpp"

namespace gpubench::profilers {

// Starts recording (once per process: CUPTI's callbacks are global). Call it before the first
// CUDA context is made, and only with `cuda_works` true: without a working device nothing
// CUPTI is touched and the source says why (`no_cuda_reason`). Sets NVTX_INJECTION64_PATH to
// libcupti (unless already set, e.g. by Nsight Systems) so NVTX ranges are recorded.
std::shared_ptr<ActivitySource> start_cupti_activity(bool cuda_works, const std::string& no_cuda_reason);

}  // namespace gpubench::profilers
