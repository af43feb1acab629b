// The device-kernel entry points of the suites (fill, memory, the cold L2 flush), for the fuzz build only: the fuzzers drive
// planning and parsing, which never launch a kernel, and this clang build compiles no CUDA.
#include <stdexcept>

#include "kernels/common/fill.cuh"
#include "kernels/common/l2_flush.cuh"
#include "kernels/memory/peak.cuh"
#include "kernels/memory/peak_wgmma.cuh"
#include "kernels/memory/pointer_chase.cuh"
#include "kernels/memory/stream.cuh"

namespace gpubench::kernels {
namespace {
[[noreturn]] void no_kernels() { throw std::logic_error("fuzz build: no CUDA kernels"); }
}  // namespace

cudaError_t fill_uniform(void*, Storage, std::size_t, std::uint64_t, cudaStream_t) { no_kernels(); }
cudaError_t launch_fma_chain(FmaType, double*, std::int64_t, unsigned, unsigned, unsigned long long*, cudaStream_t) {
  no_kernels();
}
cudaError_t launch_mma(MmaType, double*, std::int64_t, unsigned, unsigned, unsigned long long*, cudaStream_t) {
  no_kernels();
}
cudaError_t mma_code_arch(MmaType, int*) { no_kernels(); }
bool wgmma_peak_built() { return false; }
cudaError_t wgmma_peak_code_arch(MmaType, int*) { no_kernels(); }
int wgmma_peak_blocks_per_sm(MmaType) { no_kernels(); }
cudaError_t launch_wgmma_peak(MmaType, double*, std::int64_t, unsigned, unsigned long long*, cudaStream_t) {
  no_kernels();
}
cudaError_t launch_l2_flush_read(void*, std::size_t, unsigned, cudaStream_t) { no_kernels(); }
int fma_blocks_per_sm(FmaType, unsigned) { no_kernels(); }
int mma_blocks_per_sm(MmaType, unsigned) { no_kernels(); }
cudaError_t launch_empty(int*, cudaStream_t) { no_kernels(); }
const void* empty_kernel_function() { no_kernels(); }
cudaError_t launch_stream(StreamOp, double*, double*, double*, std::size_t, double*, unsigned, cudaStream_t) { no_kernels(); }
int stream_blocks_per_sm(StreamOp) { no_kernels(); }
int copy16_blocks_per_sm() { no_kernels(); }
cudaError_t launch_copy16(void*, const void*, std::size_t, unsigned, cudaStream_t) { no_kernels(); }
cudaError_t launch_pointer_chase(const void*, std::uint64_t, unsigned, unsigned, std::uint64_t*, cudaStream_t) {
  no_kernels();
}

}  // namespace gpubench::kernels
