#pragma once
// Which code the CUDA runtime loads for a kernel on the current device. A binary built for
// `80-real;90` runs its sm_80 code on an sm_89 GPU: every kernel runs, but device code that
// depends on __CUDA_ARCH__ (fp8 mma.sync exists from sm_89) takes its sm_80 branch. Cases that
// depend on such code decide from this whether they can run, and skip with a reason otherwise.
#include <cuda_runtime_api.h>

namespace gpubench::kernels {

// *arch = the architecture (major * 10 + minor) whose __CUDA_ARCH__ the loaded code of `kernel`
// was compiled for (cudaFuncAttributes::ptxVersion, the virtual architecture: 80 for sm_80 SASS
// or compute_80 PTX JIT-compiled for a newer GPU). 0, with cudaSuccess, when the binary has no
// code that this device can run (the error is cleared). Other errors are returned.
cudaError_t function_code_arch(const void* kernel, int* arch);

}  // namespace gpubench::kernels
